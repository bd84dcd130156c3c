#!/usr/bin/env bash
# The nine kernels two ways on 16 CNs x 4 cores + 16 MNs, WB and WT:
#   hand  the hand-written thread programs (workload.kernel = NAME), as in
#         analysis/run_wbwt.sh
#   rec   their code compiled -O3 (cxlsim-native, real threads), recorded by
#         `cxlsim-trace record` and replayed (workload.kernel = trace)
# at the same sizes, then the table beside each other (analysis/trace_table.py
# --compare): remote stores per 1000 instructions and WT / WB for both.
#
#   analysis/run_kernels_traced.sh OUT [NP]
#
# Sizes: a quarter to a sixteenth of the defaults, so that each recorded
# kernel is 50-150 M instructions (the -O3 code executes several times the
# instructions the hand-written programs charge); SIZES overrides them.
# Heavy (about an hour on 2 cores): run it under flock /tmp/cxlsim-heavy.lock.
# A file that exists is not redone.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:?OUT [NP]}
NP=${2:-1}
B=${BUILD:-$SRC/build}
CXLSIM=${CXLSIM:-$B/src/cxlsim}
SIZES=${SIZES:-"ocean_cp:128 ocean_ncp:128 barnes:2048 raytrace:128 fluidanimate:8192 streamcluster:512 canneal:4096 bodytrack:512 ycsb:4096"}
mkdir -p "$OUT/hand" "$OUT/rec" "$OUT/traced"
for ks in $SIZES; do
	k=${ks%%:*}; s=${ks##*:}
	if [ ! -s "$OUT/rec/$k/trace.ini" ]; then
		start=$(date +%s)
		"$B/src/cxlsim-trace" record -o "$OUT/rec/$k" --roi request -- \
			"$B/src/cxlsim-native" "$k" 64 --size "$s" >"$OUT/rec/$k.log"
		echo "$k: recorded in $(( $(date +%s) - start )) s: $(grep threads "$OUT/rec/$k.log")"
	fi
	for p in wb wt; do
		f="$OUT/hand/$k-$p.h5"
		if [ ! -e "$f" ]; then
			start=$(date +%s)
			"$SRC/mpi-configs/cxlsim-mpirun" -np "$NP" "$CXLSIM" --quiet "$SRC/inputs/$p-16x4.ini" \
				--set workload.kernel="$k" --set workload.size="$s" -o "$f"
			echo "$f: $(( $(date +%s) - start )) s"
		fi
		f="$OUT/traced/$k-$p.h5"
		if [ ! -e "$f" ]; then
			start=$(date +%s)
			"$SRC/mpi-configs/cxlsim-mpirun" -np "$NP" "$CXLSIM" --quiet "$SRC/inputs/$p-16x4.ini" \
				"$OUT/rec/$k/trace.ini" --set trace.check=false --end 10s -o "$f"
			echo "$f: $(( $(date +%s) - start )) s"
		fi
	done
done
/usr/bin/python3 "$SRC/analysis/trace_table.py" "$OUT/traced" --compare "$OUT/hand"
