#!/usr/bin/env bash
# Issue 12, parking (src/engine/reduce_shm.c, "Parking"): a rank with no
# work in a window takes no part in its reduction; its contribution stands
# until a result needs it. PHOLD at np = 16 through the shared-memory
# reduction gives the bits of np = 1, and the -v lines must show ranks that
# parked (so the test fails if parking is silently off). The same with every
# rank that completes a reduction as it parks stalled for 30 ms before it
# publishes (test hook CXLSIM_TEST_STALL_COMPLETE): the others go on, and the
# stale result must not replace a newer one (it did, and a rank needed after
# the newer one waited for ever). Then a rank is
# killed while parked (test hook CXLSIM_TEST_DIE_PARKED=RANK:N, SIGKILL at
# its N-th park, its standing slot written): the survivors run on with its
# standing contribution until a result needs it, then wait for its stamp,
# ping, agree and finish without it. That point is a function of the
# results, not of wall time, so two such runs give the same bits; its node
# is the one failed, cause "silent".
. "$(dirname "$0")/common.sh"
ARGS=(--set phold.lps=64 --set engine.end_time=300us --set phold.remote=0.5 --seed 7)
KARGS=(--set phold.lps=8 --set engine.end_time=2ms --set phold.remote=0.5 --seed 3
       --set engine.failure_timeout=1.0)

# parks OUT: the parks summed over the ranks' -v lines.
parks() {
	grep -o 'parked [0-9]* times' "$1.stderr" | awk '{s += $2} END {print s + 0}'
}

run 1 "$WORK/np1.h5" "${ARGS[@]}"
CXLSIM_TEST_REDUCE_SHM=1 vrun 16 "$WORK/np16.h5" "${ARGS[@]}"
# (occurrences, not lines: mpirun forwards the ranks' stderr in chunks, and
# under load one rank's line can be cut by another's)
n=$(grep -o "shared-memory reduction" "$WORK/np16.h5.stderr" | wc -l)
[ "$n" -eq 16 ] || { echo "$n of 16 ranks used the shared-memory reduction"
	grep -o "[a-z-]* reduction; parked" "$WORK/np16.h5.stderr" | sort | uniq -c; exit 1; }
p=$(parks "$WORK/np16.h5")
[ "$p" -gt 100 ] || { echo "only $p parks at np 16: parking is not taken"; exit 1; }
$H5CHECK same "$WORK/np1.h5" "$WORK/np16.h5"
echo "np 16: $p parks, same results as np 1"

CXLSIM_TEST_REDUCE_SHM=1 CXLSIM_TEST_STALL_COMPLETE=30 RUN_TIMEOUT=90 \
	run 16 "$WORK/stall.h5" "${ARGS[@]}"
n=$(grep -c "test hook: stalled" "$WORK/stall.h5.stderr" || true)
[ "$n" -gt 0 ] || { echo "no parked rank completed a reduction: the stall was not tried"; exit 1; }
$H5CHECK same "$WORK/np1.h5" "$WORK/stall.h5"
echo "np 16, $n stalled completers: same results as np 1"

# Rank 5 (node 5) dies at its 30th park; twice, same bits.
for k in a b; do
	CXLSIM_TEST_REDUCE_SHM=1 CXLSIM_TEST_DIE_PARKED=5:30 vrun 8 "$WORK/k$k.h5" "${KARGS[@]}" || true
	grep -q "killed while parked" "$WORK/k$k.h5.stderr" || {
		echo "the hook did not fire"; tail "$WORK/k$k.h5.stderr"; exit 1; }
	[ -f "$WORK/k$k.h5" ] || { echo "no output"; tail -20 "$WORK/k$k.h5.stderr"; exit 1; }
	$H5CHECK status "$WORK/k$k.h5" complete-with-failures
	$H5CHECK failed "$WORK/k$k.h5" 5
done
$H5CHECK same "$WORK/ka.h5" "$WORK/kb.h5"
/usr/bin/python3 - "$WORK/ka.h5" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ["SRC"], "analysis"))
import cxlsim_h5
r = cxlsim_h5.load(sys.argv[1])
assert [int(f["rank"]) for f in r.failures] == [5], r.failures
assert r.failures[0]["cause"] == "silent", r.failures
# Found inside the loop (its node's peers got the notice), not only at the end.
assert int(r.failures[0]["time_ps"]) < 2000 * 10**6, r.failures
print("killed while parked: rank 5 failed at", int(r.failures[0]["time_ps"]), "ps")
PY
echo "parking: ok"
