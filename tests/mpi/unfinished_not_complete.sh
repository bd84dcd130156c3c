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
# The default cap (engine.end_time = 0: the model's) is far beyond any
# workload: a one-core pointer chase that needs ~18 ms of simulated time,
# more than the 5 ms the key's default was, completes with no --end and no
# ini file, its end_time_ps the memory system's 100 s cap; PHOLD keeps
# ROSS's 5 ms.
out="$WORK/nocap.h5"
run 1 "$out" --model memsys --set system.cns=1 --set system.mns=1 --set system.cores_per_cn=1 \
	--set workload.kernel=ptrchase
$H5CHECK status "$out" complete
run 1 "$WORK/phold.h5" --set phold.lps=4
/usr/bin/python3 - "$out" "$WORK/phold.h5" <<'EOF2'
import sys, h5py
m, p = (h5py.File(f, "r").attrs for f in sys.argv[1:3])
if not (m["final_time_ps"] > 5 * 10**9 and m["end_time_ps"] == 100 * 10**12):
    sys.exit(f"memsys default cap: final {m['final_time_ps']} ps, end_time_ps {m['end_time_ps']}")
if p["end_time_ps"] != 5 * 10**9:
    sys.exit(f"PHOLD default end: {p['end_time_ps']} ps, expected 5 ms")
print(f"no --end: the pointer chase ran to {m['final_time_ps'] / 1e9:.1f} ms under a 100 s cap;"
      " PHOLD ends at 5 ms")
EOF2
