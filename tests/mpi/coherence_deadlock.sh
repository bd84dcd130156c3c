#!/usr/bin/env bash
# A lost message makes a transaction wait forever: the run must stop with an
# error naming the node, the line and the states, exit non-zero, and record
# the error in the output (not a hang, not a "complete" file).
. "$(dirname "$0")/common.sh"
for drop in inv_ack recall_data; do
	out="$WORK/$drop.h5"
	set +e
	timeout -k 5 120 "$MPIRUN" -np 2 "$CXLSIM" --quiet -o "$out" --model memsys --end 5ms \
		--set tester.ops=5000 --set coherence.drop_message=$drop >"$out.stdout" 2>"$out.stderr"
	rc=$?
	set -e
	[ $rc -ne 0 ] && [ $rc -ne 124 ] || { echo "$drop: exit $rc"; cat "$out.stderr"; exit 1; }
	grep -qE "deadlock: (node|home) [0-9]+ line 0x[0-9a-f]+ .*(state|CN state) " "$out.stderr" || {
		echo "$drop: no deadlock report naming node, line and state:"; cat "$out.stderr"; exit 1; }
	$H5CHECK status "$out" "error: deadlock"
done
# Without the fault the same run completes (the check can tell the difference).
run 2 "$WORK/ok.h5" --model memsys --end 5ms --set tester.ops=5000
$H5CHECK status "$WORK/ok.h5" complete
echo "deadlock detection: ok"
