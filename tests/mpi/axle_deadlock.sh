#!/usr/bin/env bash
# The paper's LLM deadlock (§V-E, Fig. 16a (h)): OPT-2.7B attention at full
# size, round-robin scheduling with out-of-order streaming and a DMA slot
# capacity of 12.5 %. Results of many heads fill the payload ring, no head
# task gets all its slots, nothing is consumed: the run must stop at once
# with "deadlock" and the rings' state, exit non-zero and record the error —
# never hang. With in-order streaming (the paper's remedy) the same
# configuration completes with the right result.
. "$(dirname "$0")/common.sh"
# The ready configuration inputs/axle-llm-deadlock.ini is that case.
ARGS=("$SRC/inputs/axle-llm-deadlock.ini" --end 100ms)
out="$WORK/dl.h5"
run_fail 2 "$out" "${ARGS[@]}"
grep -qE "AXLE deadlock: .*payload ring: head [0-9]+, tail [0-9]+, [0-9]+ of [0-9]+ slots in use; metadata ring: head [0-9]+, tail [0-9]+" "$out.stderr" || {
	echo "no deadlock report with the ring state:"; cat "$out.stderr"; exit 1; }
$H5CHECK status "$out" "error: AXLE deadlock"
run 2 "$WORK/inorder.h5" "${ARGS[@]}" --set axle.ooo=false
$H5CHECK status "$WORK/inorder.h5" complete
$H5CHECK counter "$WORK/inorder.h5" 0 axle/result_ok 1
echo "axle deadlock detection: ok"
