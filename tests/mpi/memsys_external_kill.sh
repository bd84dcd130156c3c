#!/usr/bin/env bash
# The fail-stop rule for a kill -9 from outside (engine.h, "Failures are exact
# fail-stops"): CN 1 runs alone on rank 1 of 3 and is killed at a random
# wall-clock moment; the survivors record its T_f. A second run fails CN 1
# with --fail at exactly that T_f at np 1. The dead CN's history is the same
# in both (every event below T_f, none after, and the same messages), so the
# homes record the same owned lines and every survivor ends with the same
# model counters. Only the engine's own per-node send counters may differ
# (engine/sent, engine/dropped_dead: sends to the dead CN between T_f and the
# moment the killed run's survivors learnt of it count as sent there, as
# dropped in the --fail run), and with them the checksum, which also folds the
# time each survivor was notified. TRIALS (default 2) random moments.
. "$(dirname "$0")/common.sh"
TRIALS=${1:-2}
CHECK="/usr/bin/python3 $SRC/tests/mpi/memsys_failure.py"
args=(--set tester.ops=40000 "$SRC/inputs/coherence-tester.ini" --set engine.failure_timeout=2.0)
for trial in $(seq "$TRIALS"); do
	out="$WORK/ext$trial.h5"
	ready_reset
	"$MPIRUN" -np 3 "$CXLSIM" --quiet -o "$out" "${args[@]}" --set engine.mapping=explicit \
		--set "engine.map=0 1 2 0 2 0" >"$out.stdout" 2>"$out.stderr" &
	mp=$!
	pid=""
	for _ in $(seq 100); do
		pid=$(pid_of_rank 1) && break
		sleep 0.1
	done
	[ -n "$pid" ] || { echo "rank 1 never started"; kill $mp; exit 1; }
	wait_in_run 1 || { kill $mp; exit 1; }
	sleep "0.$((RANDOM % 9))" # the loop lasts ~3 s on an idle machine
	kill -9 "$pid" || { echo "rank 1 ended before the kill: lengthen the run"; exit 1; }
	for _ in $(seq 600); do kill -0 $mp 2>/dev/null || break; sleep 0.2; done
	if kill -0 $mp 2>/dev/null; then echo "survivors hung"; kill -9 $mp; cat "$out.stderr"; exit 1; fi
	wait $mp || true
	$H5CHECK status "$out" complete-with-failures
	$H5CHECK failed "$out" 1
	tf=$(/usr/bin/python3 -c "import sys; sys.path.insert(0, '$SRC/analysis'); import cxlsim_h5; print(cxlsim_h5.load('$out').failures[0]['time_ps'])")
	[ "$tf" -gt 0 ] || { echo "trial $trial: no failure time recorded"; exit 1; }
	run 1 "$WORK/fail$trial.h5" "${args[@]}" --fail "1@${tf}ps"
	$CHECK same-owned "$out" "$WORK/fail$trial.h5"
	$CHECK survivors-model "$out" "$WORK/fail$trial.h5"
	echo "trial $trial: killed at T_f = $tf ps; --fail at T_f reproduces it"
done
echo "memsys external kill: ok"
