#!/usr/bin/python3
"""Derived core figures from a memsys run with out-of-order cores (cxlsim HDF5).

  core_report.py RUN.h5            one line per core, then the machine's totals
  core_report.py RUN.h5 --json     the same as JSON (used by the tests)

Figures (from the counters of src/core/core.c, named after CAMP's Table 5):
  ipc            instructions / cycles
  mlp            demand_reads_outstanding / cycles_with_demand_read: mean L3-missing
                 demand loads in flight while at least one is (CAMP's MLP)
  lat_ns         demand_reads_outstanding / demand_reads / f: mean demand-read latency
  stall_l3       stalls_l3_miss / cycles (CAMP's s_LLC / c)
  sb_bound       bound_on_stores / cycles (CAMP's s_SB / c)
  lfb_hit_ratio  lfb_hits / (lfb_hits + l1d_misses) (CAMP's R_LFB-hit)
The run time of a workload is the span of its region of interest over all
nodes: max(workload/roi_end_ps) - min(workload/roi_begin_ps).
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cxlsim_h5  # noqa: E402


def cores(run):
    """[(node, core, {counter: value})] for every out-of-order core."""
    out = []
    for node, stats in sorted(run.nodes.items()):
        per = {}
        for name, value in stats.items():
            if name.startswith("core") and "/" in name:
                grp, key = name.split("/", 1)
                per.setdefault(int(grp[4:]), {})[key] = value
        for c in sorted(per):
            out.append((node, c, per[c]))
    return out


def derived(c, ghz):
    cyc = max(1, c["cycles"])
    return {
        "cycles": c["cycles"],
        "instructions": c["instructions"],
        "ipc": c["instructions"] / cyc,
        "mlp": c["demand_reads_outstanding"] / c["cycles_with_demand_read"]
        if c["cycles_with_demand_read"] else 0.0,
        "lat_ns": c["demand_reads_outstanding"] / c["demand_reads"] / ghz if c["demand_reads"] else 0.0,
        "stall_l3": c["stalls_l3_miss"] / cyc,
        "sb_bound": c["bound_on_stores"] / cyc,
        "lfb_hit_ratio": c["lfb_hits"] / (c["lfb_hits"] + c["l1d_misses"])
        if c["lfb_hits"] + c["l1d_misses"] else 0.0,
    }


def roi_ps(run):
    begins = [s["workload/roi_begin_ps"] for s in run.nodes.values() if "workload/roi_begin_ps" in s]
    ends = [s["workload/roi_end_ps"] for s in run.nodes.values() if "workload/roi_end_ps" in s]
    return (max(ends) - min(begins)) if ends else 0


def workload_results(run):
    """The kernels' result counters summed over all nodes."""
    tot = {}
    for stats in run.nodes.values():
        for name, value in stats.items():
            if name.startswith("workload/") and not name.endswith("_ps"):
                tot[name[9:]] = tot.get(name[9:], 0) + value
    return tot


def summary(path):
    run = cxlsim_h5.load(path)
    m = re.search(r"^core_ghz\s*=\s*([0-9.eE+-]+)", str(run.attrs.get("config", "")), re.M)
    ghz = float(m.group(1)) if m else 2.4
    per = [(n, c, derived(v, ghz)) for n, c, v in cores(run)]
    tot = {}
    for _, _, v in cores(run):
        for k, x in v.items():
            tot[k] = tot.get(k, 0) + x
    return {
        "status": str(run.attrs["status"]),
        "roi_ps": roi_ps(run),
        "results": workload_results(run),
        "total": derived(tot, ghz) if tot else {},
        "totals": tot,
        "cores": [{"node": n, "core": c, **d} for n, c, d in per],
    }


def main(argv):
    s = summary(argv[1])
    if "--json" in argv:
        print(json.dumps(s))
        return 0
    print(f"status {s['status']}, region of interest {s['roi_ps'] / 1e6:.3f} us")
    for c in s["cores"]:
        print(f"node {c['node']:3} core {c['core']}: ipc {c['ipc']:.3f} mlp {c['mlp']:.2f} "
              f"lat {c['lat_ns']:.0f} ns stall_l3 {c['stall_l3']:.2f} sb_bound {c['sb_bound']:.2f} "
              f"lfb_hit {c['lfb_hit_ratio']:.2f}")
    t = s["total"]
    if t:
        print(f"all cores: ipc {t['ipc']:.3f} mlp {t['mlp']:.2f} lat {t['lat_ns']:.0f} ns "
              f"stall_l3 {t['stall_l3']:.2f} sb_bound {t['sb_bound']:.2f} lfb_hit {t['lfb_hit_ratio']:.2f}")
    if s["results"]:
        print("results: " + ", ".join(f"{k}={v}" for k, v in sorted(s["results"].items())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
