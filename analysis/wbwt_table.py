#!/usr/bin/python3
"""DIKTAMO Fig. 2 / Fig. 10, WB and WT bars, from the HDF5 files of
analysis/run_wbwt.sh: execution time of each workload under write-through,
normalised to write-back, with the paper's average beside ours.

  wbwt_table.py DIR            a markdown table (DIR/<kernel>-wb.h5, -wt.h5)

Execution time is the region of interest of the run: from the first core's
start to the last core's end (workload/roi_*_ps). Beside it, per workload,
the share of WB instructions that are remote stores' store-buffer
transactions and the WT store buffer's share of cycles bound on stores —
what the paper gives as the reason for WT's cost (§II-B: under TSO, write-
throughs from one core cannot overlap).
"""
import glob
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cxlsim_h5  # noqa: E402
import core_report  # noqa: E402

# Fig. 10 averages WT at 3.68x WB (§VII-A); Fig. 2 at 3.86x (§II-B).
PAPER_AVG_FIG10 = 3.68
PAPER_AVG_FIG2 = 3.86
ORDER = ["ocean_cp", "ocean_ncp", "barnes", "raytrace", "fluidanimate", "streamcluster",
         "canneal", "bodytrack", "ycsb"]


def load(path):
    run = cxlsim_h5.load(path)
    if not str(run.attrs["status"]).startswith("complete"):
        raise SystemExit(f"{path}: status {run.attrs['status']!r}")
    tot = {}
    for _, _, v in core_report.cores(run):
        for k, x in v.items():
            tot[k] = tot.get(k, 0) + x
    remote_wt = sum(s.get("cn/write_throughs", 0) for s in run.nodes.values())
    return {"roi": core_report.roi_ps(run), "tot": tot, "wts": remote_wt}


def main(argv):
    d = argv[1]
    names = [os.path.basename(p)[:-6] for p in glob.glob(os.path.join(d, "*-wb.h5"))]
    names = [n for n in ORDER if n in names] + sorted(n for n in names if n not in ORDER)
    rows, ratios = [], []
    for n in names:
        wt_path = os.path.join(d, n + "-wt.h5")
        if not os.path.exists(wt_path):
            continue
        wb, wt = load(os.path.join(d, n + "-wb.h5")), load(wt_path)
        r = wt["roi"] / wb["roi"]
        ratios.append(r)
        ins = max(1, wb["tot"]["instructions"])
        rows.append(f"| {n} | {wb['roi'] / 1e6:.1f} | {wt['roi'] / 1e6:.1f} | **{r:.2f}** | "
                    f"{1000 * wt['wts'] / ins:.1f} | "
                    f"{wb['tot']['bound_on_stores'] / max(1, wb['tot']['cycles']):.2f} | "
                    f"{wt['tot']['bound_on_stores'] / max(1, wt['tot']['cycles']):.2f} |")
    if not ratios:
        raise SystemExit(f"{d}: no pairs of <kernel>-wb.h5 / <kernel>-wt.h5")
    am = sum(ratios) / len(ratios)
    gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print("| workload | WB time (us) | WT time (us) | WT / WB | remote write-throughs per 1000 WB instructions | WB cycles bound on stores | WT cycles bound on stores |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(row)
    print(f"| **average** (arithmetic) | | | **{am:.2f}** | | | |")
    print(f"| geometric mean | | | {gm:.2f} | | | |")
    print(f"| paper, Fig. 10 (§VII-A) | | | {PAPER_AVG_FIG10:.2f} | | | |")
    print(f"| paper, Fig. 2 (§II-B) | | | {PAPER_AVG_FIG2:.2f} | | | |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
