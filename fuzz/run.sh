#!/bin/sh
# Fuzzing runs (fuzz/README.md).
#
#   fuzz/run.sh one NAME SECONDS BINARY WORKDIR
#       one harness for SECONDS (what ctest fuzz.NAME runs): its corpus grows
#       in WORKDIR/work/NAME, crashes go to WORKDIR/artifacts/NAME; exit
#       status non-zero on a crash or a failed property, with the input named
#   fuzz/run.sh long [SECONDS] [BUILD_DIR]
#       configures and builds BUILD_DIR (default build-fuzz) with clang-14 and
#       CXLSIM_FUZZ=ON, runs every harness for SECONDS (default 600) and prints,
#       per harness, executions, coverage (edges, features), corpus size and
#       findings
set -eu
src=$(cd "$(dirname "$0")" && pwd)
harnesses="config trace trace_text perf"

one() {
	name=$1 secs=$2 bin=$3 dir=$4
	work="$dir/work/$name" art="$dir/artifacts/$name"
	mkdir -p "$work" "$art"
	seeds="$src/corpus/$name $src/regressions/$name"
	[ "$name" = config ] && seeds="$seeds $src/../inputs"
	[ "$name" = perf ] && seeds="$seeds $src/../tests/fixtures/camp"
	log="$dir/$name.log"
	set +e
	"$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
		-print_final_stats=1 -artifact_prefix="$art/" "$work" $seeds >"$log" 2>&1
	rc=$?
	set -e
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1)
	corp=$(ls "$work" | wc -l)
	found=$(ls "$art" | wc -l)
	echo "fuzz $name: ${secs} s, ${execs:-?} executions, $cov, corpus $corp, findings $found"
	if [ $rc -ne 0 ]; then
		grep -E "ERROR|harness:|SUMMARY|Test unit written" "$log" | head -20
		echo "a crash or failed property: move the input above into fuzz/regressions/$name/ and fix it"
		return $rc
	fi
}

case ${1:-} in
one)
	one "$2" "$3" "$4" "$5"
	;;
long)
	secs=${2:-600}
	build=${3:-build-fuzz}
	cd "$src/.."
	cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang-14 -DCXLSIM_FUZZ=ON \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build "$build" --target fuzz -j "$(nproc)" >/dev/null
	status=0
	for h in $harnesses; do
		one "$h" "$secs" "$build/fuzz/fuzz_$h" "$build/fuzz" || status=1
	done
	exit $status
	;;
*)
	sed -n '2,14p' "$0"
	exit 2
	;;
esac
