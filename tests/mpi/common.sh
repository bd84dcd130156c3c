# Shared by the MPI test scripts: run cxlsim under mpirun with the project's
# launch recipe (mpi-configs/cxlsim-mpirun) and check outputs with h5check.py.
set -euo pipefail
: "${CXLSIM:?path to the cxlsim binary}"
: "${SRC:?project source dir}"
MPIRUN="$SRC/mpi-configs/cxlsim-mpirun"
H5CHECK="/usr/bin/python3 $SRC/tests/mpi/h5check.py"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cxlsim-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# run NP OUT [cxlsim args...]: a whole run, bounded in wall time.
run() {
	local np=$1 out=$2
	shift 2
	timeout -k 5 "${RUN_TIMEOUT:-240}" "$MPIRUN" -np "$np" "$CXLSIM" --quiet -o "$out" "$@" \
		>"$out.stdout" 2>"$out.stderr" || {
		local rc=$?
		echo "cxlsim -np $np $* exited $rc"; cat "$out.stdout" "$out.stderr"; return $rc; }
}

# vrun NP OUT [cxlsim args...]: like run, with -v (the ranks' figures in OUT.stderr).
vrun() {
	local np=$1 out=$2
	shift 2
	timeout -k 5 "${RUN_TIMEOUT:-240}" "$MPIRUN" -np "$np" "$CXLSIM" -v -o "$out" "$@" \
		>"$out.stdout" 2>"$out.stderr" || {
		local rc=$?
		echo "cxlsim -np $np $* exited $rc"; tail -20 "$out.stderr"; return $rc; }
}

# run_fail NP OUT [cxlsim args...]: a run that must fail (exit non-zero, not
# killed by the time bound); its stderr is in OUT.stderr for the caller to grep.
run_fail() {
	local np=$1 out=$2 rc
	shift 2
	set +e
	timeout -k 5 "${RUN_TIMEOUT:-240}" "$MPIRUN" -np "$np" "$CXLSIM" --quiet -o "$out" "$@" \
		>"$out.stdout" 2>"$out.stderr"
	rc=$?
	set -e
	[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ] || {
		echo "cxlsim -np $np $* exited $rc, expected a failure"; cat "$out.stderr"; return 1; }
}

# expect_error PATTERN [cxlsim args...]: bad input gives exactly one error line
# matching PATTERN, a non-zero exit on every rank (np = ERR_NP, default 3), no
# hang and no output file.
expect_error() {
	local pat=$1 n
	shift
	run_fail "${ERR_NP:-3}" "$WORK/never.h5" "$@"
	grep -q -- "$pat" "$WORK/never.h5.stderr" || {
		echo "no '$pat' in:"; cat "$WORK/never.h5.stderr"; return 1; }
	n=$(grep -c "^cxlsim: " "$WORK/never.h5.stderr" || true)
	[ "$n" -eq 1 ] || { echo "expected one error line, got $n:"; cat "$WORK/never.h5.stderr"; return 1; }
	[ ! -e "$WORK/never.h5" ] || { echo "output written for bad input"; return 1; }
}

# pid_of_rank R: the pid of our cxlsim process whose MPI rank is R.
pid_of_rank() {
	local r=$1 p
	for p in $(pgrep -x cxlsim); do
		if tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | grep -qx "OMPI_COMM_WORLD_RANK=$r" &&
			tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | grep -qx "CXLSIM_TEST_TAG=$WORK"; then
			echo "$p"
			return 0
		fi
	done
	return 1
}
export CXLSIM_TEST_TAG="$WORK"

# Each rank creates $READY/rank.R once every rank has finished the first
# reduction (engine.c, mark_ready): a test that kills a rank from outside in
# the run waits for it (wait_in_run), since MPI_Init alone can take seconds on
# a loaded machine. ready_reset before each run.
READY="$WORK/ready"
export CXLSIM_TEST_READY="$READY"
ready_reset() { rm -rf "$READY"; mkdir -p "$READY"; }
ready_reset

# wait_in_run R [SECONDS]: wait until rank R is in the run (default bound 120 s).
wait_in_run() {
	local r=$1 i
	for i in $(seq $((${2:-120} * 20))); do
		[ -e "$READY/rank.$r" ] && return 0
		sleep 0.05
	done
	echo "rank $r never reached the run"
	return 1
}
