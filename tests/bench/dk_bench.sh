#!/usr/bin/env bash
# The cost of DIKTAMO's replication in wall-clock time: each workload on the
# 16 CN x 4 core + 16 MN machine (inputs/wb-16x4.ini) under WB and under a
# replicating protocol (default proactive), run in turn (WB, P, WB, P, ...)
# so that a drift of the machine's speed hits both, np = 1. Per run: the
# event loop's wall time per simulated instruction (the reference run,
# workload.check, is off); per pair the ratio P / WB; the median ratio is
# the figure (the issue's bound: 1.5). A benchmark: it prints, it asserts
# nothing. Also the share of the replicating run's simulated time after the
# workload ended (the dump round that follows it).
# Usage: tests/bench/dk_bench.sh [REPEATS]  (env CXLSIM, SRC; KERNELS="k:size ...", PROTOCOL)
set -euo pipefail
: "${CXLSIM:?path to cxlsim}" "${SRC:?source dir}"
reps=${1:-3}
kernels=${KERNELS:-"ocean_cp:128 ycsb:4096"}
proto=${PROTOCOL:-proactive}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
stat() { # FILE -> instructions events loop_wall roi_end_ps final_ps
	/usr/bin/python3 - "$1" <<'PY'
import sys, os
sys.path.insert(0, os.path.join(os.environ["SRC"], "analysis"))
import cxlsim_h5
r = cxlsim_h5.load(sys.argv[1])
ins = sum(v for s in r.nodes.values() for n, v in s.items() if n.startswith("core") and n.endswith("/instructions"))
roi = max(int(s.get("workload/roi_end_ps", 0)) for s in r.nodes.values())
print(ins, int(r.engine["events"].sum()), float(r.engine["loop_wall_s"].max()), roi, r.attrs["final_time_ps"])
PY
}
printf '%-14s %-10s %12s %10s %9s %12s %9s\n' workload protocol instructions events "wall s" "ns/instr" "ratio"
for ks in $kernels; do
	k=${ks%%:*}; size=${ks##*:}
	ratios=()
	for i in $(seq "$reps"); do
		for p in wb "$proto"; do
			"$CXLSIM" "$SRC/inputs/wb-16x4.ini" --set workload.kernel="$k" --set workload.size="$size" \
				--set system.protocol="$p" --set workload.check=false --quiet -o "$tmp/$p.h5" >/dev/null
			read -r ins ev wall roi fin <<<"$(stat "$tmp/$p.h5")"
			eval "ns_$p=\$(echo \"$wall $ins\" | awk '{printf \"%.1f\", \$1 / \$2 * 1e9}')"
			eval "row_$p=\"$ins $ev $wall $roi $fin\""
		done
		nsw=$ns_wb; nsp=$(eval echo "\$ns_$proto")
		ratio=$(echo "$nsp $nsw" | awk '{printf "%.3f", $1 / $2}')
		ratios+=("$ratio")
		read -r ins ev wall roi fin <<<"$row_wb"
		printf '%-14s %-10s %12s %10s %9.2f %12s %9s\n' "$k:$size" wb "$ins" "$ev" "$wall" "$nsw" ""
		read -r ins ev wall roi fin <<<"$(eval echo "\$row_$proto")"
		printf '%-14s %-10s %12s %10s %9.2f %12s %9s  (simulated %s ps, workload until %s)\n' \
			"$k:$size" "$proto" "$ins" "$ev" "$wall" "$nsp" "$ratio" "$fin" "$roi"
	done
	med=$(printf '%s\n' "${ratios[@]}" | sort -g | sed -n "$(( (reps + 1) / 2 ))p")
	echo "$k:$size: $proto / wb wall per simulated instruction, median of $reps pairs: $med"
done
