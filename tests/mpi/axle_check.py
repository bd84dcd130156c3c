#!/usr/bin/python3
"""Checks of one AXLE workload's runs (tests/mpi/axle_workload.sh), in one process.

  axle_check.py DIR [nogain]

DIR holds rp.h5, bs.h5, axle.h5 (50 ns polling), axle_irq.h5, axle-np2.h5
and rp-np2.h5 (the same runs at np = 2) and axle-p100.h5 (5 us polling).
Asserts: every run complete with result_ok = 1; each np = 2 run identical to
its np = 1 run (checksum and every counter); BS ends before RP, AXLE before AXLE-interrupt, AXLE before RP
(unless nogain), and AXLE at 5 us polling stalls the host's runtime core less
than BS (Fig. 13). Exit status 0 when all hold, 1 with a message otherwise.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import h5check  # noqa: E402  (also puts analysis/ on the path)
import cxlsim_h5  # noqa: E402


def main(argv):
    d, gain = argv[1], "nogain" not in argv[2:]
    runs = {m: cxlsim_h5.load(os.path.join(d, m + ".h5"))
            for m in ("rp", "bs", "axle", "axle_irq", "axle-np2", "rp-np2", "axle-p100")}
    for m, r in runs.items():
        if not str(r.attrs["status"]).startswith("complete"):
            h5check.fail(f"{m}: status {r.attrs['status']!r}")
        if r.nodes[0]["axle/result_ok"] != 1:
            h5check.fail(f"{m}: result differs from the host-only computation")
    for m in ("axle", "rp"):
        a, b = runs[m], runs[m + "-np2"]
        if a.attrs["checksum"] != b.attrs["checksum"] or h5check.counters(a) != h5check.counters(b):
            h5check.fail(f"{m}: np = 1 and np = 2 differ")

    def less(x, y, name):
        vx, vy = runs[x].nodes[0][name], runs[y].nodes[0][name]
        if not vx < vy:
            h5check.fail(f"{name}: {x} {vx} is not below {y} {vy}")
        print(f"{name}: {x} / {y} = {vx / vy:.3f}")

    less("bs", "rp", "axle/e2e_ps")
    less("axle", "axle_irq", "axle/e2e_ps")
    if gain:
        less("axle", "rp", "axle/e2e_ps")
    less("axle-p100", "bs", "axle/stall_ps")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
