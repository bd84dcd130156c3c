#!/usr/bin/env bash
# Random coherence tester throughput: simulated memory requests (checked
# tester operations) per wall-clock second of the event loop, in total and per
# rank, at np = 1 and np = 2. A benchmark: it prints, it asserts nothing.
# Usage: tests/bench/memsys_bench.sh [REPEATS]   (env CXLSIM, SRC)
set -euo pipefail
: "${CXLSIM:?path to cxlsim}" "${SRC:?source dir}"
reps=${1:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-34s %3s %10s %12s %14s %14s\n' config np requests events "requests/s" "per rank/s"
for np in 1 2; do
	rows=()
	for _ in $(seq "$reps"); do
		"$SRC/mpi-configs/cxlsim-mpirun" -np "$np" "$CXLSIM" "$SRC/inputs/coherence-tester.ini" \
			--set tester.ops=50000 --quiet -o "$tmp/b.h5" >/dev/null
		rows+=("$(/usr/bin/python3 - "$tmp/b.h5" "$np" <<'PY'
import sys, os
sys.path.insert(0, os.path.join(os.environ["SRC"], "analysis"))
import cxlsim_h5
r = cxlsim_h5.load(sys.argv[1])
ops = r.total("tester/ops")
wall = float(r.engine["loop_wall_s"].max())
print(ops, int(r.engine["events"].sum()), ops / wall, ops / wall / int(sys.argv[2]))
PY
)")
	done
	med=$(printf '%s\n' "${rows[@]}" | sort -k3 -g | sed -n "$(( (reps + 1) / 2 ))p")
	read -r ops ev rate per <<<"$med"
	printf '%-34s %3s %10s %12s %14.3e %14.3e\n' "tester 4 CN x 4 cores, 2 MNs" "$np" "$ops" "$ev" "$rate" "$per"
done
