#!/usr/bin/env bash
# The core's counters match what each microbenchmark is (src/workload/micro.c),
# on one core of one CN whose data is in CXL memory:
#   pointer chase            MLP 1 (0.95..1.05), nearly every cycle stalled on L3 misses
#   streaming loads (no prefetchers) MLP near the LFB size (>= 0.8 x 12), 7 of 8
#                            loads are LFB hits
#   strided loads            MLP near the LFB size, no LFB hits
#   memset                   more than half the cycles bound on stores
#   memset under WT          several times slower than under WB (every line's
#                            store waits for its MN's ack)
. "$(dirname "$0")/common.sh"
base=(--model memsys --end 1s --set system.cns=1 --set system.mns=2
      --set system.cores_per_cn=1 --set workload.size=1024)
declare -A J
for k in ptrchase stream strided memset; do
	extra=()
	[ $k = stream ] && extra=(--set core.l1_prefetch=false --set core.l2_prefetch=false)
	run 1 "$WORK/$k.h5" "${base[@]}" --set workload.kernel=$k "${extra[@]}"
	$H5CHECK status "$WORK/$k.h5" complete
	/usr/bin/python3 "$SRC/analysis/core_report.py" "$WORK/$k.h5" --json >"$WORK/$k.json"
done
run 1 "$WORK/memset_wt.h5" "${base[@]}" --set workload.kernel=memset --set system.protocol=wt
/usr/bin/python3 "$SRC/analysis/core_report.py" "$WORK/memset_wt.h5" --json >"$WORK/memset_wt.json"
/usr/bin/python3 - "$WORK" <<'PY'
import json, sys
w = sys.argv[1]
r = {k: json.load(open(f"{w}/{k}.json")) for k in ["ptrchase", "stream", "strided", "memset", "memset_wt"]}
t = {k: v["total"] for k, v in r.items()}
checks = [
    ("pointer chase MLP ~1", 0.95 <= t["ptrchase"]["mlp"] <= 1.05, t["ptrchase"]["mlp"]),
    ("pointer chase stalled on L3 misses", t["ptrchase"]["stall_l3"] > 0.9, t["ptrchase"]["stall_l3"]),
    ("streaming MLP near the LFB size", t["stream"]["mlp"] >= 0.8 * 12, t["stream"]["mlp"]),
    ("streaming LFB-hit ratio ~7/8", 0.8 <= t["stream"]["lfb_hit_ratio"] <= 0.9, t["stream"]["lfb_hit_ratio"]),
    ("strided MLP near the LFB size", t["strided"]["mlp"] >= 0.8 * 12, t["strided"]["mlp"]),
    ("strided: no LFB hits", t["strided"]["lfb_hit_ratio"] == 0, t["strided"]["lfb_hit_ratio"]),
    ("memset bound on stores", t["memset"]["sb_bound"] > 0.5, t["memset"]["sb_bound"]),
    ("memset: no demand reads", t["memset"]["mlp"] == 0, t["memset"]["mlp"]),
    ("WT memset slower than WB", r["memset_wt"]["roi_ps"] > 3 * r["memset"]["roi_ps"],
     r["memset_wt"]["roi_ps"] / r["memset"]["roi_ps"]),
]
bad = 0
for name, ok, val in checks:
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {val:.3f}")
    bad += not ok
sys.exit(1 if bad else 0)
PY
echo "micro counters: ok"
