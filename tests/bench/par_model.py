#!/usr/bin/python3
"""The scaling model of README "Parallel speed": critical paths and projections.

    par_model.py RUN.h5 CORES_PER_CN [R ...]
        RUN.h5 is an np = 1 memsys run with output.sample_interval equal to
        the lookahead (90ns) and output.sample = engine/events. For each R it
        builds the balanced map of src/app/rank_map.c (CN weight 2 per core,
        MN 1) and sums, over the lookahead intervals, the largest rank's
        events: crit(R), the critical path of work at R ranks.

    par_model.py --async G_NS L_NS RUN.h5 CORES_PER_CN [R ...]
        RUN.h5 sampled every G_NS (a divisor of the lookahead L_NS, e.g. 10
        and 90). Two critical paths per R, both without any synchronisation
        cost: the window scheme's (windows of L, each as long as its busiest
        rank) and an asynchronous conservative scheme's, where a rank may
        handle an interval as soon as it has handled its previous one and
        every other rank has handled the interval one lookahead earlier
        (F_r(s) = max(F_r(s-1), max_j!=r F_j(s-L/G)) + e_r(s)): what
        per-peer clocks instead of a global window would allow.

    par_model.py --project T_EV RHO C0 E W R:CRIT [R:CRIT ...]
        T(R) = CRIT * T_EV * (1 + RHO) + W * (C0 + c_red) for c_red = 5 and
        20 us; speed-up T(1) / T(R) with T(1) = E * T_EV.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "analysis"))
import cxlsim_h5  # noqa: E402


def balanced(types, weights, nranks):
    """src/app/rank_map.c cxs_balanced_rank_map, for node types of one weight each."""
    kinds = sorted(set(types), key=lambda t: (-weights[t], types.index(t)))
    load, out = [0.0] * nranks, [0] * len(types)
    for k in kinds:
        nodes = [n for n, t in enumerate(types) if t == k]
        c = len(nodes)
        quota = [c // nranks] * nranks
        for _ in range(c % nranks):
            best = min((r for r in range(nranks) if quota[r] == c // nranks),
                       key=lambda r: (load[r], r))
            quota[best] += 1
        nxt = 0
        for n in nodes:
            while quota[nxt] == 0:
                nxt = (nxt + 1) % nranks
            out[n] = nxt
            quota[nxt] -= 1
            load[nxt] += weights[k]
            nxt = (nxt + 1) % nranks
    return out


def per_node_events(path):
    """The run's node types and its events per sampling interval and node."""
    types = list(cxlsim_h5.load(path).node_type)
    return types, np.diff(cxlsim_h5.series(path, "engine").to_numpy(), axis=0)


def per_rank_events(types, d, cores, r):
    """Events per interval and rank under the balanced map of r ranks."""
    m = balanced(types, {"cn": 2.0 * cores, "mn": 1.0}, r)
    per = np.zeros((d.shape[0], r))
    for n, q in enumerate(m):
        per[:, q] += d[:, n]
    return per


def critical_paths(path, cores, ranks):
    types, d = per_node_events(path)
    total = int(d.sum())
    print(f"{path}: {len(types)} nodes, {d.shape[0]} intervals, "
          f"{int((d.sum(axis=1) > 0).sum())} with events, {total} events")
    for r in ranks:
        crit = per_rank_events(types, d, cores, r).max(axis=1).sum()
        print(f"R={r:3d}: crit {int(crit):9d} events, {crit / (total / r):.2f}x the mean, "
              f"at most {total / crit:.2f}x faster than np = 1")


def async_paths(path, g, la, cores, ranks):
    types, d = per_node_events(path)
    total, k = d.sum(), la // g
    print(f"{path}: {len(types)} nodes, {d.shape[0]} intervals of {g} ns, {int(total)} events; "
          f"lookahead {la} ns = {k} intervals")
    for r in ranks:
        per = per_rank_events(types, d, cores, r)
        nw = (per.shape[0] + k - 1) // k
        pad = np.zeros((nw * k, r))
        pad[:per.shape[0]] = per
        crit_w = pad.reshape(nw, k, r).sum(axis=1).max(axis=1).sum()
        fin = np.zeros((per.shape[0], r))
        prev = np.zeros(r)
        for s in range(per.shape[0]):
            dep = fin[s - k] if s >= k else np.zeros(r)
            if r > 1:
                lo, hi = np.sort(dep)[-2:]
                others = np.where(dep == hi, lo, hi)  # the largest over j != r
            else:
                others = np.zeros(1)
            prev = np.maximum(prev, others) + per[s]
            fin[s] = prev
        crit_a = fin[-1].max()
        print(f"R={r:3d}: windows {int(crit_w):9d} events ({total / crit_w:.2f}x np = 1), "
              f"asynchronous {int(crit_a):9d} ({total / crit_a:.2f}x), "
              f"ideal {total / r:.0f} ({r}x)")


def project(t_ev, rho, c0, events, windows, pairs):
    t1 = events * t_ev
    print("| R | work | sync at 5 / 20 us | speed-up at 5 us | at 20 us |")
    print("| --- | --- | --- | --- | --- |")
    for r, crit in pairs:
        work = crit * t_ev * (1 + rho)
        s5, s20 = windows * (c0 + 5e-6), windows * (c0 + 20e-6)
        print(f"| {r} | {work:.3f} s | {s5:.3f} / {s20:.3f} s | {t1 / (work + s5):.2f}x | "
              f"{t1 / (work + s20):.2f}x |")


if __name__ == "__main__":
    a = sys.argv[1:]
    if a and a[0] == "--async":
        async_paths(a[3], int(a[1]), int(a[2]), int(a[4]), [int(x) for x in a[5:]])
    elif a and a[0] == "--project":
        project(float(a[1]), float(a[2]), float(a[3]), int(a[4]), int(a[5]),
                [tuple(int(x) for x in p.split(":")) for p in a[6:]])
    else:
        critical_paths(a[0], int(a[1]), [int(x) for x in a[2:]])
