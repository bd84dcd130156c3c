#!/usr/bin/env bash
# kill -9 of a rank from outside, at an arbitrary wall-clock moment: the
# survivors detect it, agree, finish, and record the failure. With a second
# argument, a second rank is killed while the survivors are still detecting
# or agreeing on the first.
. "$(dirname "$0")/common.sh"
# Usage: phold_external_kill.sh VICTIM [SECOND|-] [cxlsim args...]: "-" for no
# second victim (ctest drops empty arguments); further arguments go to cxlsim
# after the defaults, so they override them.
victim=${1:-2}
second=${2:--}
shift 2 || shift $#
[ "$second" = - ] && second=
out="$WORK/ext.h5"
"$MPIRUN" -np 4 "$CXLSIM" --quiet -o "$out" --set phold.lps=64 --set engine.end_time=40ms \
	--set engine.failure_timeout=1.0 "$@" >"$out.stdout" 2>"$out.stderr" &
mp=$!
pid=""
for _ in $(seq 100); do
	pid=$(pid_of_rank "$victim") && break
	sleep 0.1
done
[ -n "$pid" ] || { echo "rank $victim never started"; kill $mp; exit 1; }
wait_in_run "$victim" || { kill $mp; exit 1; }
sleep 0.5
kill -9 "$pid" || { echo "rank $victim ended before the kill: lengthen the run"; exit 1; }
if [ -n "$second" ]; then
	sleep 1.3 # inside the ping / agreement phase of the first failure (timeout 1 s)
	pid2=$(pid_of_rank "$second") && kill -9 "$pid2"
fi
# Bounded: the run itself takes a few seconds; a hang fails here.
for _ in $(seq 600); do kill -0 $mp 2>/dev/null || break; sleep 0.2; done
if kill -0 $mp 2>/dev/null; then
	echo "survivors hung"; kill -9 $mp; cat "$out.stderr"; exit 1
fi
wait $mp || true
cat "$out.stdout"
[ -f "$out" ] || { echo "no output written"; cat "$out.stderr"; exit 1; }
$H5CHECK status "$out" complete-with-failures
/usr/bin/python3 - "$out" "$victim" "$second" <<'PY'
import sys, os
sys.path.insert(0, os.path.join(os.environ["SRC"], "analysis"))
import cxlsim_h5
run = cxlsim_h5.load(sys.argv[1])
dead = {int(sys.argv[2])} | ({int(sys.argv[3])} if sys.argv[3] else set())
ranks = {int(f["rank"]) for f in run.failures}
assert ranks == dead, f"failed ranks {ranks}, expected {dead}"
for f in run.failures:
    assert f["cause"] == "silent", f
for n, r in enumerate(run.node_rank):
    assert bool(run.node_alive[n]) == (int(r) not in dead), (n, r)
assert int(run.engine["events"].sum()) > 0
print("external kill recorded:", sorted(ranks), "at t =", sorted({int(f["time_ps"]) for f in run.failures}), "ps")
PY
