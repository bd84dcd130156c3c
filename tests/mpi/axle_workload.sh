#!/usr/bin/env bash
# One AXLE workload (scaled inputs) under every offload mechanism:
#  - every run completes with result_ok = 1 on the host (the offloaded result
#    equals the host-only computation, bit for bit), with the §IV-C invariant
#    checker on (it always is);
#  - AXLE and RP at np = 1 and np = 2 (host and CCM on different ranks)
#    give the same checksum and counters;
#  - the trends of the paper that this run shows (Fig. 10, 13): bulk
#    synchronous ends before remote polling, AXLE with interrupts after AXLE
#    polling every 50 ns, AXLE before remote polling (except LLM, where the
#    paper finds no gain either: pass "nogain"), and AXLE polling every 5 us
#    stalls the host's runtime core less than bulk synchronous.
# The checks are tests/mpi/axle_check.py.
# usage: axle_workload.sh WORKLOAD [nogain] [extra cxlsim args...]
. "$(dirname "$0")/common.sh"
wl=$1
shift
gain=yes
if [ "${1:-}" = nogain ]; then gain=no; shift; fi
ARGS=(--model axle --end 100ms --set axle.workload="$wl" --set axle.poll_interval=50ns "$@")
for mech in rp bs axle axle_irq; do
	run 1 "$WORK/$mech.h5" "${ARGS[@]}" --set axle.mechanism=$mech
done
run 2 "$WORK/axle-np2.h5" "${ARGS[@]}" --set axle.mechanism=axle
run 2 "$WORK/rp-np2.h5" "${ARGS[@]}" --set axle.mechanism=rp
run 1 "$WORK/axle-p100.h5" "${ARGS[@]}" --set axle.mechanism=axle --set axle.poll_interval=5us
/usr/bin/python3 "$SRC/tests/mpi/axle_check.py" "$WORK" $([ $gain = yes ] || echo nogain)
echo "axle $wl: ok"
