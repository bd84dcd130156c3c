#!/usr/bin/env bash
# Regression (issue 13, item 3): a workload that has not finished when the
# run reaches engine.end_time is not a complete run. At 9855e0e
#   cxlsim inputs/wb-16x4.ini --set workload.kernel=ocean_cp --set workload.size=64 \
#          --set engine.end_time=400ns
# exited 0 with status "complete" although every CN had roi_end_ps = 0 and
# events were dropped at the end time; likewise at 200 ns, and at 1 us with a
# one-entry ROB/LQ/SQ or a 0.001 Gb/s link. Each of those must now exit
# non-zero on every rank with one line naming the kernel, the cap, a node and
# core and how far it got, and the file must say so in its status. The same
# workload without the cap must still complete, every CN's ROI ended, so the
# check is not simply always failing.
. "$(dirname "$0")/common.sh"
base=("$SRC/inputs/wb-16x4.ini" --set workload.kernel=ocean_cp --set workload.size=64)
caps=("--set engine.end_time=400ns"
	"--set engine.end_time=200ns"
	"--set engine.end_time=1us --set core.rob=1 --set core.lq=1 --set core.sq=1"
	"--set engine.end_time=1us --set fabric.link_gbps=0.001")
i=0
for cap in "${caps[@]}"; do
	out="$WORK/cap$i.h5"
	read -r -a extra <<<"$cap"
	np=$((i % 2 + 1)) # np 1 and 2
	run_fail $np "$out" "${base[@]}" "${extra[@]}"
	grep -q "workload ocean_cp unfinished at the engine.end_time cap ([0-9]* ps): node [0-9]* core [0-9]* did [0-9]* of [0-9]* operations" \
		"$out.stderr" || { echo "$cap: no 'unfinished' line:"; cat "$out.stderr"; exit 1; }
	$H5CHECK status "$out" "error: workload ocean_cp unfinished"
	echo "$cap (np $np): refused as unfinished"
	i=$((i + 1))
done
out="$WORK/whole.h5"
run 1 "$out" "${base[@]}"
$H5CHECK status "$out" complete
/usr/bin/python3 - "$out" "$SRC/analysis" <<'EOF'
import sys
sys.path.insert(0, sys.argv[2])
import cxlsim_h5
run = cxlsim_h5.load(sys.argv[1])
cns = [n for n, t in enumerate(run.node_type) if t == "cn"]
bad = [n for n in cns if not run.nodes[n].get("workload/roi_end_ps")]
if not cns or bad:
    sys.exit(f"complete run: CNs {bad} of {len(cns)} have roi_end_ps = 0")
EOF
echo "unfinished workloads: never reported complete; the whole run completes"
