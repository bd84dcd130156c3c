#!/usr/bin/env bash
# Issue 12: with every rank on this host the window reduction goes through
# the shared segment (reduce_shm.c), and it gives the bits of the
# point-to-point reduction (reduce.c, forced by CXLSIM_TEST_REDUCE_P2P=1):
# PHOLD at np = 6 (oversubscribed on 2 cores) against np = 1, and an
# injected kill at np = 4 — detection, agreement and the redone reduction
# over the survivors — with the same results through either path. The -v
# line of every rank names the path it used, so the test fails if the
# shared path is silently not taken. The shared path is the default only
# with 8 ranks per processor or more (reduce_shm.c, "When"); here
# CXLSIM_TEST_REDUCE_SHM=1 takes it at np 6 and 4, and a run without either
# variable at np 6 must take the point-to-point one — on a machine of 2
# processors or more, where 6 ranks are below the threshold.
. "$(dirname "$0")/common.sh"
ARGS=(--set phold.lps=48 --set engine.end_time=300us --set phold.remote=0.5 --seed 11)
KARGS=(--set phold.lps=8 --set engine.end_time=300us --set phold.remote=0.5 --seed 5
       --set engine.failure_timeout=1.0 --set engine.mapping=explicit
       --set "engine.map=0 0 1 1 2 2 0 3" --kill 7@100us)

# paths OUT KIND N: exactly N ranks report the KIND reduction.
paths() {
	local n
	n=$(grep -o "$2 reduction" "$1.stderr" | wc -l)
	[ "$n" -eq "$3" ] || { echo "$1: $n ranks used the $2 reduction, expected $3"; exit 1; }
}

run 1 "$WORK/np1.h5" "${ARGS[@]}"
CXLSIM_TEST_REDUCE_SHM=1 vrun 6 "$WORK/shm6.h5" "${ARGS[@]}"
paths "$WORK/shm6.h5" shared-memory 6
if [ "$(nproc --all)" -ge 2 ]; then
	vrun 6 "$WORK/def6.h5" "${ARGS[@]}"
	paths "$WORK/def6.h5" point-to-point 6
fi
CXLSIM_TEST_REDUCE_P2P=1 vrun 6 "$WORK/p2p6.h5" "${ARGS[@]}"
paths "$WORK/p2p6.h5" point-to-point 6
$H5CHECK events "$WORK/np1.h5" 5000
$H5CHECK same "$WORK/np1.h5" "$WORK/shm6.h5" "$WORK/p2p6.h5"

# Node 7 alone on rank 3: the survivors wait for its stamp, ping, agree and
# redo the reduction over ranks 0-2.
CXLSIM_TEST_REDUCE_SHM=1 vrun 4 "$WORK/kshm.h5" "${KARGS[@]}"
paths "$WORK/kshm.h5" shared-memory 3
CXLSIM_TEST_REDUCE_P2P=1 vrun 4 "$WORK/kp2p.h5" "${KARGS[@]}"
paths "$WORK/kp2p.h5" point-to-point 3
for f in "$WORK/kshm.h5" "$WORK/kp2p.h5"; do
	$H5CHECK status "$f" complete-with-failures
	$H5CHECK failed "$f" 7
	$H5CHECK failtime "$f" 100000000
done
$H5CHECK same "$WORK/kshm.h5" "$WORK/kp2p.h5"
echo "shared-memory reduction: ok"
