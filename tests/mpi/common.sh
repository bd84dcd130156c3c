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

# pid_of_rank R: the pid of our cxlsim process whose MPI rank is R.
pid_of_rank() {
	local r=$1 p
	for p in $(pgrep -x cxlsim); do
		if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$r" &&
			tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "CXLSIM_TEST_TAG=$WORK"; then
			echo "$p"
			return 0
		fi
	done
	return 1
}
export CXLSIM_TEST_TAG="$WORK"
