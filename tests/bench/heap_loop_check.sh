#!/usr/bin/env bash
# The yardstick of par_bench.sh, checked: tests/bench/heap_loop.c pops its
# events in key order (HEAP_LOOP_CHECK=1 makes it fail otherwise) and handles
# exactly as many events as cxlsim's PHOLD for the same run (ROSS's
# semantics: 64 and 1024 LPs), so the rate it is compared with is that of
# the same work.
. "$(dirname "$0")/../mpi/common.sh"
cc -O2 -o "$WORK/heap_loop" "$SRC/tests/bench/heap_loop.c" -lm
for lps in 64 1024; do
	read -r hev _ _ <<<"$(HEAP_LOOP_CHECK=1 "$WORK/heap_loop" "$lps" 500)"
	run 1 "$WORK/p$lps.h5" --model phold --set phold.lps="$lps" --set phold.mean=1.0 \
		--set phold.lookahead=0.1 --set phold.remote=0.25 --set engine.end_time=500us --seed 1
	ev=$(/usr/bin/python3 -c "import h5py,sys; print(int(h5py.File(sys.argv[1])['engine/events'][:].sum()))" "$WORK/p$lps.h5")
	[ "$hev" = "$ev" ] || { echo "$lps LPs: heap loop $hev events, cxlsim $ev"; exit 1; }
	echo "$lps LPs: $ev events, in order, the same as cxlsim's"
done
