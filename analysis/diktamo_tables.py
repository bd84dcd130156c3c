#!/usr/bin/python3
"""DIKTAMO's evaluation (papers/diktamo.md §VII) from cxlsim's HDF5 files.

  diktamo_tables.py fig10 DIR [--json]

DIR holds one run per workload and protocol, DIR/<kernel>-<protocol>.h5,
protocol one of wb, wt, baseline, parallel, proactive, proactive_noc (as
analysis/run_diktamo.sh and tests/mpi/diktamo_scaled.sh write them).

fig10: Fig. 10 and Fig. 12 — each workload's execution time under every
protocol normalised to WB, and DIKTAMO-proactive-best (the better of
proactive and proactive_noc per workload, §VII-A), with the averages and the
paper's averages beside them. Execution time is the region of interest
(workload/roi_*_ps: from the first core's start to the last core's end), as
in analysis/wbwt_table.py. With --json it prints {"rows": {kernel: {protocol:
ratio}}, "average": {protocol: ratio}} instead of the markdown table, for
tests to assert on.

Averages are arithmetic means of the per-workload ratios, as the paper's
"on average" figures are; the geometric mean is given too.
"""
import glob
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cxlsim_h5  # noqa: E402
import core_report  # noqa: E402

PROTOCOLS = ["wb", "wt", "baseline", "parallel", "proactive", "proactive_noc"]
ORDER = ["ocean_cp", "ocean_ncp", "barnes", "raytrace", "fluidanimate", "streamcluster",
         "canneal", "bodytrack", "ycsb"]
# §VII-A: WT 3.68x (Fig. 10), baseline 2.88x, parallel 3 % better than
# baseline, proactive 1.30x, proactive-best 1.22x.
PAPER = {"wt": 3.68, "baseline": 2.88, "parallel": 2.88 * 0.97, "proactive": 1.30,
         "proactive_best": 1.22}


def roi(path):
    run = cxlsim_h5.load(path)
    status = str(run.attrs["status"])
    if not status.startswith("complete"):
        raise SystemExit(f"{path}: status {status!r}")
    return core_report.roi_ps(run)


def runs(d):
    """{kernel: {protocol: roi_ps}} for every <kernel>-<protocol>.h5 in d."""
    out = {}
    for p in glob.glob(os.path.join(d, "*.h5")):
        base = os.path.basename(p)[:-3]
        for proto in sorted(PROTOCOLS, key=len, reverse=True):
            if base.endswith("-" + proto):
                out.setdefault(base[: -len(proto) - 1], {})[proto] = roi(p)
                break
    return out


def fig10(d):
    times = runs(d)
    kernels = [k for k in ORDER if k in times] + sorted(k for k in times if k not in ORDER)
    rows = {}
    for k in kernels:
        t = times[k]
        if "wb" not in t:
            continue
        r = {p: t[p] / t["wb"] for p in PROTOCOLS if p in t}
        if "proactive" in r and "proactive_noc" in r:
            r["proactive_best"] = min(r["proactive"], r["proactive_noc"])
        rows[k] = r
    if not rows:
        raise SystemExit(f"{d}: no <kernel>-wb.h5 with other protocols beside it")
    cols = [p for p in PROTOCOLS + ["proactive_best"] if all(p in r for r in rows.values())]
    avg = {p: sum(r[p] for r in rows.values()) / len(rows) for p in cols}
    geo = {p: math.exp(sum(math.log(r[p]) for r in rows.values()) / len(rows)) for p in cols}
    return times, rows, cols, avg, geo


def main(argv):
    if len(argv) < 3 or argv[1] != "fig10":
        print(__doc__.strip(), file=sys.stderr)
        return 2
    times, rows, cols, avg, geo = fig10(argv[2])
    if "--json" in argv[3:]:
        print(json.dumps({"rows": rows, "average": avg, "geomean": geo}, indent=1, sort_keys=True))
        return 0
    print("| workload | WB time (us) | " + " | ".join(cols) + " |")
    print("|---|---|" + "---|" * len(cols))
    for k, r in rows.items():
        print(f"| {k} | {times[k]['wb'] / 1e6:.1f} | " +
              " | ".join(f"{r[p]:.2f}" for p in cols) + " |")
    print("| **average** | | " + " | ".join(f"**{avg[p]:.2f}**" for p in cols) + " |")
    print("| geometric mean | | " + " | ".join(f"{geo[p]:.2f}" for p in cols) + " |")
    print("| paper (§VII-A) | | " +
          " | ".join(f"{PAPER[p]:.2f}" if p in PAPER else ("1.00" if p == "wb" else "")
                     for p in cols) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
