#!/usr/bin/env bash
# The §IV-C invariant checker can fail: each injected ordering or
# flow-control fault in the DMA executor (axle.fault) stops the run with the
# invariant it broke; the same run without a fault completes.
. "$(dirname "$0")/common.sh"
# Table III's ready configuration (inputs/axle-table3.ini), KNN (c).
ARGS=("$SRC/inputs/axle-table3.ini" --end 100ms --set axle.workload=knn_c --set axle.mechanism=axle)
expect_violation() { # expect_violation FAULT PATTERN [args...]
	local fault=$1 pat=$2 out="$WORK/$1.h5"
	shift 2
	run_fail 2 "$out" "${ARGS[@]}" --set axle.fault="$fault" "$@"
	grep -qE "$pat" "$out.stderr" || { echo "$fault: no '$pat' in:"; cat "$out.stderr"; exit 1; }
	$H5CHECK status "$out" "error: AXLE invariant violated"
}
expect_violation tail_before_metadata \
	"AXLE invariant violated \(metadata ring\): tail [0-9]+ published index [0-9]+ before it was written"
expect_violation metadata_before_payload \
	"AXLE invariant violated \(metadata ring\): metadata names payload index [0-9]+ before that payload was written"
expect_violation ignore_credit \
	"AXLE invariant violated \(payload ring\): write of index [0-9]+ (into slot [0-9]+ overflows the ring|overwrites slot)" \
	--set axle.dma_slots=4 --set axle.streaming_factor=256B
run 2 "$WORK/ok.h5" "${ARGS[@]}" --set axle.dma_slots=4 --set axle.streaming_factor=256B
$H5CHECK status "$WORK/ok.h5" complete
$H5CHECK counter "$WORK/ok.h5" 0 axle/result_ok 1
echo "axle checker can fail: ok"
