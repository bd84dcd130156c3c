#!/usr/bin/env bash
# Out-of-order core throughput on the 16 CN x 4 core WB machine
# (inputs/wb-16x4.ini): simulated instructions per wall-clock second of the
# event loop, in total and per rank, at np = 1, 2 and 32 (one node per rank),
# for a few workloads at a reduced size. A benchmark: it prints, it asserts
# nothing. The reference run of each workload (workload.check) happens before
# the event loop and is not counted.
# Usage: tests/bench/core_bench.sh [REPEATS] [NPS]   (env CXLSIM, SRC; KERNELS="k:size ...")
set -euo pipefail
: "${CXLSIM:?path to cxlsim}" "${SRC:?source dir}"
reps=${1:-3}
nps=${2:-"1 2 32"}
kernels=${KERNELS:-"ocean_cp:128 barnes:2048 ycsb:16384"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-16s %3s %14s %12s %14s %14s %12s\n' workload np instructions events "instr/s" "per rank/s" "events/s"
for ks in $kernels; do
	k=${ks%%:*}; size=${ks##*:}
	for np in $nps; do
		rows=()
		for _ in $(seq "$reps"); do
			"$SRC/mpi-configs/cxlsim-mpirun" -np "$np" "$CXLSIM" "$SRC/inputs/wb-16x4.ini" \
				--set workload.kernel="$k" --set workload.size="$size" --quiet -o "$tmp/b.h5" >/dev/null
			rows+=("$(/usr/bin/python3 - "$tmp/b.h5" "$np" <<'PY'
import sys, os
sys.path.insert(0, os.path.join(os.environ["SRC"], "analysis"))
import cxlsim_h5
r = cxlsim_h5.load(sys.argv[1])
ins = sum(v for s in r.nodes.values() for n, v in s.items() if n.endswith("/instructions") and n.startswith("core"))
ev = int(r.engine["events"].sum())
wall = float(r.engine["loop_wall_s"].max())
print(ins, ev, ins / wall, ins / wall / int(sys.argv[2]), ev / wall)
PY
)")
		done
		med=$(printf '%s\n' "${rows[@]}" | sort -k3 -g | sed -n "$(( (reps + 1) / 2 ))p")
		read -r ins ev rate per evr <<<"$med"
		printf '%-16s %3s %14s %12s %14.3e %14.3e %12.3e\n' "$k:$size" "$np" "$ins" "$ev" "$rate" "$per" "$evr"
	done
done
