#!/usr/bin/env bash
# SIGINT / SIGTERM (issue 13): the run stops at the next window on every rank,
# writes its results as a complete, readable file marked "interrupted" (with
# the simulated time every event was handled up to), and exits 128 + signal.
# Before, a signal simply killed the ranks: no output at all.
# Usage: interrupt.sh MODE
#   term     SIGTERM to the launch wrapper, np 4 (what a batch system does)
#   ctrlc    SIGINT to the launch wrapper, np 4 (Ctrl-C): the wrapper hands the
#            ranks SIGTERM, so they exit 143
#   int      SIGINT to cxlsim run without mpirun (Ctrl-C at np 1): exit 130
#   one      SIGTERM to rank 1 alone, np 3: every rank still stops together
#   write    a second SIGTERM while the file is being written: the previous
#            file stays as it was and no temporary file is left
#   memsys   SIGTERM to the wrapper, np 2, a kernel on the memory system: an
#            unfinished workload is not an error when interrupted (the end-of-run
#            checks do not apply), the file says interrupted
. "$(dirname "$0")/common.sh"
mode=${1:?mode}
out="$WORK/i.h5"
LONG=(--set phold.lps=64 --end 100s)
# wait_end PID BOUND: waits for PID at most BOUND seconds; its status in $rc.
wait_end() {
	local i
	for i in $(seq $((10 * $2))); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$1" 2>/dev/null; then echo "did not stop within $2 s"; kill -9 "$1"; cat "$out.stderr"; exit 1; fi
	set +e; wait "$1"; rc=$?; set -e
}
# check_interrupted WANT_RC
check_interrupted() {
	[ "$rc" = "$1" ] || { echo "exit status $rc, expected $1"; cat "$out.stderr"; exit 1; }
	[ -f "$out" ] || { echo "no output written"; cat "$out.stderr"; exit 1; }
	/usr/bin/python3 - "$out" <<'PY'
import sys, os
sys.path.insert(0, os.path.join(os.environ["SRC"], "analysis"))
import cxlsim_h5
r = cxlsim_h5.load(sys.argv[1])
st = str(r.attrs["status"])
assert st.startswith("interrupted"), st
assert "complete up to" in st, st
assert 0 < int(r.attrs["final_time_ps"]) < int(r.attrs["end_time_ps"]), r.attrs["final_time_ps"]
assert int(r.attrs["exit_status"]) in (130, 143), r.attrs["exit_status"]
assert int(r.engine["events"].sum()) > 0
assert not r.failures, r.failures
print("interrupted run written:", st)
PY
	[ ! -e "$out.incomplete" ] || { echo "temporary file left"; exit 1; }
}
case $mode in
term)
	"$MPIRUN" -np 4 "$CXLSIM" --quiet -o "$out" "${LONG[@]}" >"$out.stdout" 2>"$out.stderr" &
	mp=$!
	for _ in $(seq 100); do pid_of_rank 3 >/dev/null && break; sleep 0.1; done
	sleep 3
	kill -TERM $mp
	wait_end $mp 60
	check_interrupted 143
	;;
ctrlc)
	env --default-signal=INT "$MPIRUN" -np 4 "$CXLSIM" --quiet -o "$out" "${LONG[@]}" >"$out.stdout" 2>"$out.stderr" &
	mp=$!
	for _ in $(seq 100); do pid_of_rank 3 >/dev/null && break; sleep 0.1; done
	sleep 3
	kill -INT $mp
	wait_end $mp 60
	check_interrupted 143
	;;
int)
	# (a background job of a script ignores SIGINT; a terminal's foreground one does not)
	env --default-signal=INT "$CXLSIM" --quiet -o "$out" "${LONG[@]}" >"$out.stdout" 2>"$out.stderr" &
	p=$!
	sleep 3
	kill -INT $p
	wait_end $p 60
	check_interrupted 130
	;;
one)
	"$MPIRUN" -np 3 "$CXLSIM" --quiet -o "$out" "${LONG[@]}" >"$out.stdout" 2>"$out.stderr" &
	mp=$!
	p1=""
	for _ in $(seq 100); do p1=$(pid_of_rank 1) && break; sleep 0.1; done
	sleep 3
	kill -TERM "$p1"
	wait_end $mp 60
	check_interrupted 143
	;;
write)
	# The previous run's file, then a run whose write takes a while (a big PHOLD).
	"$CXLSIM" --quiet -o "$out" --set phold.lps=16 --end 1ms >/dev/null 2>&1
	before=$(sha256sum <"$out")
	"$CXLSIM" --quiet -o "$out" --set phold.lps=50k --end 100s >"$out.stdout" 2>"$out.stderr" &
	p=$!
	sleep 5
	kill -TERM $p
	for _ in $(seq 600); do [ -e "$out.incomplete" ] && break; sleep 0.05; done
	[ -e "$out.incomplete" ] || { echo "never saw the write start"; kill -9 $p; cat "$out.stderr"; exit 1; }
	kill -TERM $p
	wait_end $p 30
	[ "$rc" = 143 ] || { echo "exit status $rc, expected 143"; cat "$out.stderr"; exit 1; }
	[ "$(sha256sum <"$out")" = "$before" ] || { echo "the previous file changed"; exit 1; }
	[ ! -e "$out.incomplete" ] || { echo "the temporary file was left behind"; exit 1; }
	/usr/bin/python3 "$SRC/tests/mpi/h5check.py" status "$out" complete
	echo "second signal during the write: previous file intact, nothing left"
	;;
memsys)
	"$MPIRUN" -np 2 "$CXLSIM" --quiet -o "$out" "$SRC/inputs/wb-16x4.ini" \
		--set workload.kernel=ocean_cp --set workload.size=1024 --set workload.check=false >"$out.stdout" 2>"$out.stderr" &
	mp=$!
	for _ in $(seq 100); do pid_of_rank 1 >/dev/null && break; sleep 0.1; done
	sleep 4
	kill -TERM $mp
	wait_end $mp 60
	check_interrupted 143
	! grep -q "unfinished" "$out.stderr" || { echo "reported unfinished:"; cat "$out.stderr"; exit 1; }
	;;
*) echo "unknown mode $mode"; exit 1 ;;
esac
