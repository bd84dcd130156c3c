#!/usr/bin/env bash
# DIKTAMO recovery after a kill -9 from outside: ycsb under DIKTAMO-proactive
# on 4 CNs x 4 cores + 4 MNs, one rank per node; the rank of CN 1 is killed at
# a random wall-clock moment. The survivors detect it, record its T_f, recover
# and run to the end. A second run at np 1 fails CN 1 with --fail at exactly
# that T_f, with the golden-image oracle: its images must equal the committed
# one (after recovery and at the end), and its recovered image must equal the
# killed run's word for word (analysis/cxlsim-imagediff) — the fail-stop rule
# carries the oracle's verdict over to the run that had none. TRIALS (default
# 3) random moments.
. "$(dirname "$0")/common.sh"
TRIALS=${1:-3}
IMAGEDIFF="/usr/bin/python3 $SRC/analysis/cxlsim-imagediff"
args=("$SRC/inputs/wb-16x4.ini" --set system.cns=4 --set system.mns=4 --set system.protocol=proactive
      --set workload.kernel=ycsb --set workload.size=2048 --set workload.ops=2048
      --set engine.failure_timeout=2.0)
# workload.ops: the run lasts ~10 s on an idle 2-core machine (the default 64
# operations a thread end in about 1 s, before the kill).
for trial in $(seq "$TRIALS"); do
	out="$WORK/ext$trial.h5"
	ready_reset
	"$MPIRUN" -np 8 "$CXLSIM" --quiet -o "$out" "${args[@]}" >"$out.stdout" 2>"$out.stderr" &
	mp=$!
	pid=""
	for _ in $(seq 100); do
		pid=$(pid_of_rank 1) && break
		sleep 0.1
	done
	[ -n "$pid" ] || { echo "rank 1 never started"; kill $mp; exit 1; }
	wait_in_run 1 || { kill $mp; exit 1; }
	sleep "$((RANDOM % 3)).$((RANDOM % 10))" # 0-3 s into the run
	kill -9 "$pid" || { echo "rank 1 ended before the kill: lengthen the run"; exit 1; }
	# A bound far above the run's time (~20 s on an idle 2-core machine), not a hang's.
	t0=$SECONDS
	for _ in $(seq 2400); do kill -0 $mp 2>/dev/null || break; sleep 0.2; done
	if kill -0 $mp 2>/dev/null; then
		echo "survivors hung ($((SECONDS - t0)) s after the kill)"; kill -9 $mp; cat "$out.stderr"; exit 1
	fi
	echo "trial $trial: survivors ended $((SECONDS - t0)) s after the kill"
	wait $mp || true
	$H5CHECK status "$out" complete-with-failures
	$H5CHECK failed "$out" 1
	tf=$(/usr/bin/python3 -c "import sys; sys.path.insert(0, '$SRC/analysis'); import cxlsim_h5; print(cxlsim_h5.load('$out').failures[0]['time_ps'])")
	[ "$tf" -ge 0 ] || { echo "trial $trial: no failure time recorded"; exit 1; }
	rounds=$(/usr/bin/python3 -c "import sys; sys.path.insert(0, '$SRC/analysis'); import cxlsim_h5; r = cxlsim_h5.load('$out'); print(sum(s.get('recovery/rounds', 0) for s in r.nodes.values()))")
	run 1 "$WORK/fail$trial.h5" "${args[@]}" --fail "1@${tf}ps" --set diktamo.oracle=true -v
	$H5CHECK status "$WORK/fail$trial.h5" complete-with-failures
	grep -q "golden image after recovery: identical" "$WORK/fail$trial.h5.stderr" &&
		grep -q "golden image at the end: identical" "$WORK/fail$trial.h5.stderr" ||
		{ echo "trial $trial: the oracle's checks did not pass"; cat "$WORK/fail$trial.h5.stderr"; exit 1; }
	if [ "$rounds" -gt 0 ]; then
		$IMAGEDIFF --image recovered "$out" "$WORK/fail$trial.h5"
	else
		echo "trial $trial: the kill came after the workload's last store (no recovery round)"
	fi
	echo "trial $trial: killed at T_f = $tf ps; --fail at T_f with the oracle: identical images"
done
echo "recovery external kill: ok"
