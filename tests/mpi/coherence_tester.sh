#!/usr/bin/env bash
# The random coherence tester on 4 CNs x 4 cores and 2 MNs: millions of
# checked loads, stamped stores and fetch-and-adds pass; np = 1 and np = 6 (one
# rank per node) give identical counters; every fetch-and-add counter returned
# exactly 0 .. N-1; every operation completed. Usage: coherence_tester.sh OPS_PER_CORE
#
# The rank-count comparison runs a quarter of the operations: six ranks on two
# processors pay a context switch per rank and window (22 s against np = 1's
# 2 s at 125 000 operations, 436 451 windows), which tests the engine's
# determinism no better than 100 000 windows do.
. "$(dirname "$0")/common.sh"
ops=${1:-125000}
ARGS=(--model memsys --end 1s --set system.cns=4 --set system.mns=2 --set system.cores_per_cn=4
      --set tester.ops="$ops" --seed 11)
# np = 1 also runs the exact check (every load against the latest write
# performed before it); np = 6 must reproduce an np = 1 run exactly.
run 1 "$WORK/np1.h5" "${ARGS[@]}" --set tester.exact_check=true
$H5CHECK status "$WORK/np1.h5" complete
Q=(--model memsys --end 1s --set system.cns=4 --set system.mns=2 --set system.cores_per_cn=4
   --set tester.ops=$((ops / 4)) --seed 11)
run 1 "$WORK/q1.h5" "${Q[@]}"
run 6 "$WORK/q6.h5" "${Q[@]}"
$H5CHECK status "$WORK/q6.h5" complete
$H5CHECK same "$WORK/q1.h5" "$WORK/q6.h5"
/usr/bin/python3 - "$WORK/np1.h5" "$ops" <<'PY'
import sys, os
sys.path.insert(0, os.path.join(os.environ["SRC"], "analysis"))
import cxlsim_h5
r = cxlsim_h5.load(sys.argv[1])
want = 4 * 4 * int(sys.argv[2])
ops = r.total("tester/ops")
assert ops == want, f"{ops} operations checked, expected {want}: the run ended early"
for k in range(4):
    n, s, q = (r.total(f"tester/rmw{k}_{x}") for x in ("count", "sum", "sumsq"))
    assert n > 0 and s == n * (n - 1) // 2 and q == (n - 1) * n * (2 * n - 1) // 6, \
        f"counter {k}: {n} fetch-and-adds returned values that are not 0..{n - 1}"
for c in ("cn/invs_received", "cn/recalls_received", "cn/upgrades", "home/queued"):
    assert r.total(c) > 1000, f"{c} = {r.total(c)}: the test did not exercise the protocol"
print(f"{ops} operations checked; invalidations {r.total('cn/invs_received')}, "
      f"recalls {r.total('cn/recalls_received')}, upgrades {r.total('cn/upgrades')}, "
      f"queued at homes {r.total('home/queued')}")
PY
echo "coherence tester: ok"
