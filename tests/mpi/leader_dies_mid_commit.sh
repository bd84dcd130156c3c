#!/usr/bin/env bash
# The leader of an agreement dies after sending its first COMMIT (test hook
# CXLSIM_TEST_LEADER_DIES_AFTER_COMMITS=1): one survivor has applied the
# decision (node 3 dead), the other has not. The next leader must hand that
# decision on so that both apply the same decisions in the same order: every
# surviving PHOLD node gets exactly two failure notices (node 3, then node 0),
# not one combined notice on some and two on others.
. "$(dirname "$0")/common.sh"
out="$WORK/lc.h5"
CXLSIM_TEST_LEADER_DIES_AFTER_COMMITS=1 timeout -k 5 120 "$MPIRUN" \
	-x CXLSIM_TEST_LEADER_DIES_AFTER_COMMITS -np 4 "$CXLSIM" --quiet -o "$out" \
	--set phold.lps=4 --set engine.end_time=300us --set engine.failure_timeout=0.5 \
	--kill 3@100us >"$out.stdout" 2>"$out.stderr" || true
grep -q "test hook: leader dies" "$out.stderr" || { echo "the hook did not fire"; cat "$out.stderr"; exit 1; }
$H5CHECK status "$out" complete-with-failures
$H5CHECK failed "$out" 0,3
/usr/bin/python3 - "$out" <<'PY'
import sys, os
sys.path.insert(0, os.path.join(os.environ["SRC"], "analysis"))
import cxlsim_h5
r = cxlsim_h5.load(sys.argv[1])
for n in (1, 2):
    c = r.nodes[n]
    assert c["phold/failure_notices"] == 2 and c["phold/failures_seen"] == 2, \
        f"node {n}: {c['phold/failure_notices']} notices for {c['phold/failures_seen']} dead nodes"
print("both survivors applied the same two decisions")
PY
