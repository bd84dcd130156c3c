#!/usr/bin/env bash
# The same counters at np = 1 and np = 32 (one node per rank: 16 CNs x 4
# cores + 16 MNs, the paper's machine) on a small run of a workload, and at
# an uneven explicit mapping: every counter of every node identical, and the
# run's results checked against the reference (workload.check).
#   workload_ranks.sh KERNEL SIZE
. "$(dirname "$0")/common.sh"
K=${1:-ocean_cp}
SIZE=${2:-64}
args=("$SRC/inputs/wb-16x4.ini" --set workload.kernel="$K" --set workload.size="$SIZE")
run 1 "$WORK/np1.h5" "${args[@]}"
$H5CHECK status "$WORK/np1.h5" complete
RUN_TIMEOUT=600 run 32 "$WORK/np32.h5" "${args[@]}"
run 3 "$WORK/np3.h5" "${args[@]}" --set engine.mapping=explicit --set engine.map="2*20 0*5 1*7"
$H5CHECK same "$WORK/np1.h5" "$WORK/np32.h5" "$WORK/np3.h5"
/usr/bin/python3 "$SRC/analysis/core_report.py" "$WORK/np32.h5" | tail -2
echo "workload ranks: ok"
