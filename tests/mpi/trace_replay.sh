#!/usr/bin/env bash
# Trace-driven cores (src/workload/trace_program.c): text traces converted by
# cxlsim-trace are replayed on 2 CNs x 1 core; both threads take a lock in CXL
# memory, update a shared word and meet at a barrier. The run is the same at
# np 1 and np 3, every record is replayed, and each lock acquire is a real
# atomic swap on the shared lock word.
# A missing or truncated trace stops the run before it starts, with the file
# named, exit status 2 on every rank and no output file; a barrier that can
# never be met ends the run at the end time with an error, or as a deadlock
# (trace.stuck_limit), or, after a CN failure, is given up (trace.wait_limit).
. "$(dirname "$0")/common.sh"
TRACE="$(dirname "$CXLSIM")/cxlsim-trace"
for t in 0 1; do
	cat >"$WORK/t$t.txt" <<TXT
# thread $t: private work, then a locked update of a shared word
ld 8 0x1000 gap=3
st 8 0x1008 0x5
lock 0x10000000000
ld 8 0x10000000040
st 8 0x10000000040 $((t + 1)) gap=2
unlock 0x10000000000
barrier 0x10000000080 0
ld 8 0x10000000040 gap=10
TXT
	"$TRACE" from-text "$WORK/t$t.txt" "$WORK/core$t.trace" --core $t >/dev/null
done
args=(--model memsys --end 10ms --set system.cns=2 --set system.mns=1
      --set system.cores_per_cn=1 --set workload.kernel=trace
      --set workload.trace="$WORK/core%u.trace")
run 1 "$WORK/np1.h5" "${args[@]}"
run 3 "$WORK/np3.h5" "${args[@]}"
$H5CHECK status "$WORK/np1.h5" complete
$H5CHECK same "$WORK/np1.h5" "$WORK/np3.h5"
/usr/bin/python3 "$SRC/analysis/core_report.py" "$WORK/np1.h5" --json >"$WORK/r.json"
/usr/bin/python3 - "$WORK/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n = r["results"].get("trace_records", 0)
assert n == 16, f"{n} records replayed, expected 16"
assert r["totals"]["atomics"] >= 2, "no atomic swap for the locks"
print(f"trace replay: {n} records, {r['totals']['instructions']} instructions")
PY
# Bad traces: missing, then truncated.
for bad in missing truncated; do
	if [ $bad = truncated ]; then
		s=$(stat -c %s "$WORK/core1.trace")
		head -c $((s - 10)) "$WORK/core1.trace" >"$WORK/bad1.trace"
		cp "$WORK/core0.trace" "$WORK/bad0.trace"
		pat="$WORK/bad%u.trace"; want="bad1.trace: no valid trailer"
	else
		pat="$WORK/none%u.trace"; want="none0.trace: cannot open"
	fi
	set +e
	timeout -k 5 60 "$MPIRUN" -np 2 "$CXLSIM" --quiet -o "$WORK/$bad.h5" "${args[@]}" \
		--set workload.trace="$pat" >"$WORK/$bad.out" 2>&1
	rc=$?
	set -e
	[ $rc = 2 ] || { echo "$bad trace: exit $rc, expected 2"; cat "$WORK/$bad.out"; exit 1; }
	grep -q "workload.trace: trace: thread [01]: .*$want" "$WORK/$bad.out" || {
		echo "$bad trace: message does not name the file:"; cat "$WORK/$bad.out"; exit 1; }
	[ ! -e "$WORK/$bad.h5" ] || { echo "$bad trace: an output file was written"; exit 1; }
done
# A barrier waiting for 3 threads when only 2 exist spins for ever: the run
# must end at engine.end_time with an error naming a core and its state, not
# quietly and not by hanging.
for t in 0 1; do
	printf 'ld 8 0x1000\nbarrier 0x10000000080 3\n' >"$WORK/h$t.txt"
	"$TRACE" from-text "$WORK/h$t.txt" "$WORK/hang$t.trace" --core $t >/dev/null
done
set +e
timeout -k 5 120 "$MPIRUN" -np 2 "$CXLSIM" --quiet -o "$WORK/hang.h5" "${args[@]}" --end 1ms \
	--set workload.trace="$WORK/hang%u.trace" >"$WORK/hang.out" 2>&1
rc=$?
set -e
[ $rc = 4 ] || { echo "spinning workload: exit $rc, expected 4"; cat "$WORK/hang.out"; exit 1; }
grep -q "workload trace unfinished at the engine.end_time cap (1000000000 ps): node [01] core 0 did [0-9]* operations; core 0: " \
	"$WORK/hang.out" || { echo "spinning workload not reported:"; cat "$WORK/hang.out"; exit 1; }
$H5CHECK status "$WORK/hang.h5" "error: workload trace unfinished"

# Waits that cannot tell whom they wait for (a barrier of 2 of 3 threads, an
# event word) on 3 CNs x 1 core, thread 2 never arriving nor posting.
# Without a failure: a deadlock, reported within trace.stuck_limit (not at
# the 100 s cap; a tenth of the default, 2e8 cycles, to keep the test short); after a failure (here of CN 0, not even a member): the
# waiter gives up within trace.wait_limit and the run completes, counted and
# warned about — it cannot know that the dead thread was not the missing one.
printf 'st 8 0x1000 1\n' >"$WORK/s0.txt"
printf 'st 8 0x1000 1 gap=10\nbarrier 0x10000001000 2\nst 8 0x1000 2\n' >"$WORK/s1.txt"
printf 'st 8 0x1000 1 gap=10\nwait 0x10000002000 1\nst 8 0x1000 2\n' >"$WORK/e1.txt"
printf 'st 8 0x1000 1 gap=100000\n' >"$WORK/s2.txt"
cp "$WORK/s0.txt" "$WORK/e0.txt"
cp "$WORK/s2.txt" "$WORK/e2.txt"
for p in s e; do
	for t in 0 1 2; do
		"$TRACE" from-text "$WORK/$p$t.txt" "$WORK/$p$t.trace" --core $t >/dev/null
	done
	a3=(--model memsys --set system.cns=3 --set system.mns=1 --set system.cores_per_cn=1
	    --set workload.kernel=trace --set workload.trace="$WORK/$p%u.trace")
	set +e
	timeout -k 5 120 "$MPIRUN" -np 1 "$CXLSIM" --quiet -o "$WORK/$p-stuck.h5" "${a3[@]}" \
		--set trace.stuck_limit=200000000 >"$WORK/$p-stuck.out" 2>&1
	rc=$?
	set -e
	[ $rc = 6 ] || { echo "$p: stuck wait: exit $rc, expected 6"; cat "$WORK/$p-stuck.out"; exit 1; }
	grep -q "deadlock: .*thread 1 .*has waited [0-9]* cycles .*no CN has failed" \
		"$WORK/$p-stuck.out" || { echo "$p: stuck wait not reported:"; cat "$WORK/$p-stuck.out"; exit 1; }
	for f in 0 2; do
		run 1 "$WORK/$p-fail$f.h5" "${a3[@]}" --fail $f@1us
		$H5CHECK status "$WORK/$p-fail$f.h5" complete-with-failures
		grep -q "node 1 core 0: its thread gave up a wait after the CN failure" \
			"$WORK/$p-fail$f.h5.stderr" || { echo "$p, CN $f failed: no warning"; exit 1; }
		/usr/bin/python3 - "$WORK/$p-fail$f.h5" "$SRC/analysis" <<'PY2'
import sys
sys.path.insert(0, sys.argv[2])
import cxlsim_h5
r = cxlsim_h5.load(sys.argv[1])
n = sum(s.get("workload/trace_waits_abandoned", 0) for s in r.nodes.values())
if n != 1:
    sys.exit(f"{sys.argv[1]}: {n} abandoned waits, expected 1")
PY2
	done
done
echo "trace replay: ok"
