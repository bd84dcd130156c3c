#!/usr/bin/env bash
# CAMP's two memory tiers on one CN (src/mem/tier.c, inputs/camp.ini):
#   - idle latencies: a pointer chase (one core, 8 MiB, MLC's method) sees
#     90 ns in local DRAM and each preset's idle latency on the far device
#     (numa 140, cxl_a 214, cxl_b 272, cxl_c 214 ns), within 3 %;
#   - bandwidth and latency order the presets: 8 streaming cores run faster
#     on cxl_c (twice cxl_a's bandwidth) than on cxl_a, slower on cxl_b
#     (27 % more latency; streams are bandwidth-bound, so by a few %), fastest
#     on numa;
#   - placement: all-DRAM runs make no CXL load, all-CXL runs no local fill,
#     50:50 sends about half the demand reads to each tier;
#   - a bandwidth-bound workload's interleave curve is a bathtub: the triad
#     (8 cores, three arrays) at 80:20 beats both all-DRAM and all-CXL;
#   - a replayed trace is placed by the same policy;
#   - histogram on 8 threads with 10 % of its pages in DRAM finishes (a core
#     once waited forever for a load dropped from its issue pass);
#   - configuration mistakes are one line naming the key.
. "$(dirname "$0")/common.sh"
base=("$SRC/inputs/camp.ini" --end 1s)
cfg() { echo --set tier.placement=$1 --set tier.device=$2; }
# 1. idle latency
run 1 "$WORK/pc-dram.h5" "${base[@]}" --set system.cores_per_cn=1 --set workload.kernel=ptrchase \
	--set workload.size=8192 $(cfg dram cxl_a)
for d in numa cxl_a cxl_b cxl_c; do
	run 1 "$WORK/pc-$d.h5" "${base[@]}" --set system.cores_per_cn=1 --set workload.kernel=ptrchase \
		--set workload.size=8192 $(cfg cxl $d)
done
# 2., 3. streams on every preset, and interleaved on cxl_a
for d in numa cxl_a cxl_b cxl_c; do
	run 1 "$WORK/st-$d.h5" "${base[@]}" --set workload.kernel=stream --set workload.size=512 $(cfg cxl $d)
done
run 1 "$WORK/st-dram.h5" "${base[@]}" --set workload.kernel=stream --set workload.size=512 $(cfg dram cxl_a)
run 1 "$WORK/st-50.h5" "${base[@]}" --set workload.kernel=stream --set workload.size=512 \
	$(cfg interleave cxl_a) --set tier.dram_pct=50
for p in dram cxl interleave; do # the triad: a bandwidth-bound, store-heavy stream of three arrays
	run 1 "$WORK/tr3-$p.h5" "${base[@]}" --set workload.kernel=triad --set workload.size=16384 \
		$(cfg $p cxl_a) --set tier.dram_pct=80
done
# 4. a trace (two threads of one CN) placed in DRAM and on the device
TRACE="$(dirname "$CXLSIM")/cxlsim-trace"
for t in 0 1; do
	printf 'ld 8 0x%x gap=3\nst 8 0x10000000%03x 7\nld 8 0x10000001000\nbarrier 0x10000000800 0\n' \
		$((0x2000 + 64 * t)) $((64 * t)) >"$WORK/t$t.txt"
	"$TRACE" from-text "$WORK/t$t.txt" "$WORK/core$t.trace" --core $t >/dev/null
done
for p in dram cxl; do
	run 1 "$WORK/tr-$p.h5" "${base[@]}" --set system.cores_per_cn=2 --set workload.kernel=trace \
		--set workload.trace="$WORK/core%u.trace" --set workload.size=64 $(cfg $p cxl_a)
done
# 4b. a load put back in S_WAIT during an issue pass (an older load's line
# lost to a younger one's fill) must be issued again: with 10 % of its pages in
# DRAM this histogram left one core waiting for it forever while the others
# spun at the barrier, until the end_time cap (fixed in core.c issue_waiting)
run 1 "$WORK/hist-10.h5" "$SRC/inputs/camp.ini" --end 10ms --set workload.kernel=histogram \
	--set workload.size=524288 --set system.cores_per_cn=8 $(cfg interleave cxl_a) --set tier.dram_pct=10
/usr/bin/python3 - "$WORK" "$SRC" <<'PY'
import sys
sys.path.insert(0, sys.argv[2] + "/analysis")
import cxlsim_h5
w = sys.argv[1]

def tot(run, name):
    return sum(v for comp in run.nodes.values() for k, v in comp.items()
               if k.startswith("core") and k.endswith("/" + name))

def roi(run):
    c = run.nodes[0]
    return c["workload/roi_end_ps"] - c["workload/roi_begin_ps"]

bad = 0
def check(what, ok, val):
    global bad
    print(f"{'ok  ' if ok else 'FAIL'} {what}: {val}")
    bad += not ok

for name, want in [("dram", 90), ("numa", 140), ("cxl_a", 214), ("cxl_b", 272), ("cxl_c", 214)]:
    r = cxlsim_h5.load(f"{w}/pc-{name}.h5")
    lat = tot(r, "demand_reads_outstanding") / tot(r, "demand_reads") / 2.4
    check(f"pointer-chase latency {name} ~{want} ns", abs(lat - want) <= 0.03 * want, f"{lat:.1f} ns")
t = {d: roi(cxlsim_h5.load(f"{w}/st-{d}.h5")) for d in ["dram", "numa", "cxl_a", "cxl_b", "cxl_c", "50"]}
tt = {p: roi(cxlsim_h5.load(f"{w}/tr3-{p}.h5")) for p in ["dram", "cxl", "interleave"]}
check("8 streams: cxl_c (2x bandwidth) faster than cxl_a", t["cxl_c"] * 1.2 < t["cxl_a"], t["cxl_a"] / t["cxl_c"])
check("8 streams: cxl_b (27 % more latency) slower than cxl_a", t["cxl_b"] > 1.02 * t["cxl_a"], t["cxl_b"] / t["cxl_a"])
check("8 streams: numa fastest far tier", t["numa"] < min(t["cxl_a"], t["cxl_b"], t["cxl_c"]), t["numa"])
check("triad bathtub: 80:20 beats all-DRAM by 5 %+", tt["interleave"] < 0.95 * tt["dram"], tt["interleave"] / tt["dram"])
check("triad bathtub: ... and all-CXL", tt["interleave"] < tt["cxl"], tt["interleave"] / tt["cxl"])
d = cxlsim_h5.load(f"{w}/st-dram.h5"); c = cxlsim_h5.load(f"{w}/st-cxl_a.h5"); h = cxlsim_h5.load(f"{w}/st-50.h5")
check("all-DRAM: no CXL loads, no device DRAM reads", tot(d, "cxl_loads") == 0 and d.nodes[1].get("dram/reads", 0) == 0,
      (tot(d, "cxl_loads"), d.nodes[1].get("dram/reads", 0)))
check("all-CXL: no local fills", c.nodes[0]["cn/local_fills"] == 0, c.nodes[0]["cn/local_fills"])
share = tot(h, "cxl_loads") / tot(h, "demand_reads")
check("50:50: half the demand reads on the device", 0.4 <= share <= 0.6, f"{share:.3f}")
tr = {p: cxlsim_h5.load(f"{w}/tr-{p}.h5") for p in ["dram", "cxl"]}
check("trace in DRAM: device untouched", tr["dram"].nodes[1].get("dram/reads", 0) == 0, tr["dram"].nodes[1].get("dram/reads", 0))
check("trace on CXL: no local fills, device read", tr["cxl"].nodes[0]["cn/local_fills"] == 0 and tr["cxl"].nodes[1]["dram/reads"] > 0,
      (tr["cxl"].nodes[0]["cn/local_fills"], tr["cxl"].nodes[1]["dram/reads"]))
sys.exit(1 if bad else 0)
PY
# 5. mistakes
ERR_NP=1 expect_error "system.cns: tier.placement = cxl needs exactly one CN" "${base[@]}" \
	--set system.cns=2 --set workload.kernel=stream $(cfg cxl cxl_a)
ERR_NP=1 expect_error "mn.dram_channels: not used in tier mode" "${base[@]}" --set mn.dram_channels=2 \
	--set workload.kernel=stream $(cfg cxl cxl_a)
ERR_NP=1 expect_error "tier.far_latency: .*lower fabric.link_latency" "${base[@]}" \
	--set tier.far_latency=100ns --set workload.kernel=stream $(cfg cxl cxl_a)
ERR_NP=1 expect_error "raise system.cxl_size / system.local_size" "${base[@]}" --set system.local_size=1MiB \
	--set workload.kernel=stream $(cfg dram cxl_a)
echo "camp tiers: ok"
