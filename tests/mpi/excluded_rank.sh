#!/usr/bin/env bash
# A rank that is only descheduled (SIGSTOP) past the failure timeout is
# excluded by the survivors; when it runs again (SIGCONT) it must find out and
# stop as if it had failed (exit status 75), while the survivors finish.
# It was alive, so its failure is recorded with cause "excluded", not
# "silent" (issue 13 item 7: it used to be "silent"); it resumes while the
# survivors still run (the run takes ~10 s), so they hear it in time.
. "$(dirname "$0")/common.sh"
out="$WORK/stop.h5"
"$MPIRUN" -np 4 "$CXLSIM" --quiet -o "$out" --set phold.lps=64 --set engine.end_time=100ms \
	--set engine.failure_timeout=0.5 >"$out.stdout" 2>"$out.stderr" &
mp=$!
pid=""
for _ in $(seq 100); do pid=$(pid_of_rank 1) && break; sleep 0.1; done
[ -n "$pid" ] || { echo "rank 1 never started"; kill $mp; exit 1; }
wait_in_run 1 || { kill $mp; exit 1; }
sleep 0.5
kill -STOP "$pid"
sleep 4
kill -CONT "$pid"
for _ in $(seq 600); do kill -0 $mp 2>/dev/null || break; sleep 0.2; done
if kill -0 $mp 2>/dev/null; then echo "hung"; kill -9 $mp; cat "$out.stderr"; exit 1; fi
wait $mp || true
grep -q "excluded by the survivors" "$out.stderr" || {
	echo "the stopped rank did not report its exclusion"; cat "$out.stderr"; exit 1; }
$H5CHECK status "$out" complete-with-failures
/usr/bin/python3 - "$out" <<'PY'
import sys, os
sys.path.insert(0, os.path.join(os.environ["SRC"], "analysis"))
import cxlsim_h5
run = cxlsim_h5.load(sys.argv[1])
assert {int(f["rank"]) for f in run.failures} == {1}, run.failures
assert int(run.engine["alive"][1]) == 0
causes = {f["cause"] for f in run.failures}
assert causes == {"excluded"}, f"causes {causes}, expected excluded"
print("excluded rank 1; survivors finished")
PY
