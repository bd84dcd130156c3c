#!/usr/bin/python3
"""WB and WT replays of recordings (analysis/run_trace_wbwt.sh), one row per
recording: its threads, the instructions its cores executed, remote stores
per 1000 instructions (write-throughs of the WT run over the WB run's
instructions, as analysis/wbwt_table.py counts them), the execution times
and WT / WB.

  trace_table.py DIR [--compare HAND_DIR]

With --compare, the rows are the nine kernels: the hand-written thread
programs' WB/WT runs in HAND_DIR (analysis/run_wbwt.sh) beside the recorded
-O3 kernels in DIR, with both averages and the paper's.
"""
import glob
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wbwt_table  # noqa: E402


def pair(d, name):
    wb, wt = os.path.join(d, name + "-wb.h5"), os.path.join(d, name + "-wt.h5")
    if not (os.path.exists(wb) and os.path.exists(wt)):
        return None
    a, b = wbwt_table.load(wb), wbwt_table.load(wt)
    ins = max(1, a["tot"]["instructions"])
    return {"ins": ins, "rs": 1000 * b["wts"] / ins, "wb": a["roi"], "wt": b["roi"],
            "r": b["roi"] / a["roi"]}


def names(d):
    return sorted(os.path.basename(p)[:-6] for p in glob.glob(os.path.join(d, "*-wb.h5")))


def means(rs):
    return sum(rs) / len(rs), math.exp(sum(math.log(r) for r in rs) / len(rs))


def main(argv):
    d = argv[1]
    if len(argv) == 4 and argv[2] == "--compare":
        hand = argv[3]
        print("| kernel | hand-written: remote stores / 1000 instr | hand-written: WT / WB |"
              " -O3 traced: instructions | -O3 traced: remote stores / 1000 instr |"
              " -O3 traced: WT / WB |")
        print("|---|---|---|---|---|---|")
        hr, tr = [], []
        for n in wbwt_table.ORDER:
            h, t = pair(hand, n), pair(d, n)
            if not h or not t:
                continue
            hr.append(h["r"])
            tr.append(t["r"])
            print(f"| {n} | {h['rs']:.1f} | {h['r']:.2f} | {t['ins'] / 1e6:.1f} M |"
                  f" {t['rs']:.1f} | {t['r']:.2f} |")
        if hr:
            (ha, hg), (ta, tg) = means(hr), means(tr)
            print(f"| **average** (arithmetic) | | **{ha:.2f}** | | | **{ta:.2f}** |")
            print(f"| geometric mean | | {hg:.2f} | | | {tg:.2f} |")
            print(f"| paper, Fig. 10 (§VII-A) | | {wbwt_table.PAPER_AVG_FIG10:.2f} | | |"
                  f" {wbwt_table.PAPER_AVG_FIG10:.2f} |")
        return 0
    print("| program | instructions | remote stores / 1000 instr | WB time (us) | WT time (us) |"
          " WT / WB |")
    print("|---|---|---|---|---|---|")
    rs = []
    for n in names(d):
        p = pair(d, n)
        if not p:
            continue
        rs.append(p["r"])
        print(f"| {n} | {p['ins'] / 1e6:.1f} M | {p['rs']:.1f} | {p['wb'] / 1e6:.1f} |"
              f" {p['wt'] / 1e6:.1f} | **{p['r']:.2f}** |")
    if rs:
        a, g = means(rs)
        print(f"| **average** (arithmetic) | | | | | **{a:.2f}** |")
        print(f"| geometric mean | | | | | {g:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
