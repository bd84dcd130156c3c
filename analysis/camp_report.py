#!/usr/bin/python3
"""The CAMP experiment's calibration, selections and report
(analysis/run_camp_experiments.sh runs it; README "CAMP").

  camp_report.py calibrate OUT          OUT/params-<dev>.txt from the cal_* pairs
  camp_report.py select OUT DEV N       the bandwidth-bound configurations to sweep
  camp_report.py policies OUT DEV       "name pct policy": best-shot's and the
                                        latency-equalising policy's DRAM shares
  camp_report.py report OUT             OUT/report/camp_report.md and the figures

Everything CAMP computes comes from cxlsim-camp (its --csv output): the
model never sees anything but counters. This script adds what the paper
compares CAMP with (Table 1's metrics, the measured interleave curves and
the placement policies), read from the same HDF5 files with
analysis/cxlsim_h5.py. Runs are OUT/runs/<name>@<tag>.h5 with tag dram,
the device name (every page on that device), or il-<device>-<pct> (pct %
of the pages in DRAM). The configurations are inputs/camp_workloads.txt
(LIST in the environment overrides it); DEVICES as in the shell script;
DRD_FORM (auto) is calibrate's --drd-form, S_DRd's curve.

Needs h5py, numpy and matplotlib (Debian: python3-h5py, python3-numpy,
python3-matplotlib), hence /usr/bin/python3.
"""

import csv
import io
import os
import subprocess
import sys
from dataclasses import dataclass

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cxlsim_h5  # noqa: E402

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAMP = os.environ.get("CAMP", os.path.join(SRC, "build", "src", "cxlsim-camp"))
LIST = os.environ.get("LIST", os.path.join(SRC, "inputs", "camp_workloads.txt"))
DEVICES = os.environ.get("DEVICES", "numa cxl_a cxl_b cxl_c").split()
DRD_FORM = os.environ.get("DRD_FORM", "auto")
GHZ = 2.4  # inputs/camp.ini system.core_ghz: cxlsim-camp's latencies are in core cycles
GRID = list(range(0, 101, 10))

# The paper's numbers (papers/camp-summary-ko.md), shown beside ours.
PAPER_T6 = {"numa": (0.965, 88.4, 97.3), "cxl_a": (0.919, 88.7, 94.3),
            "cxl_b": (0.963, 77.8, 90.7), "cxl_c": (0.940, 92.4, 96.2)}
PAPER_COMP5 = {"drd": {"numa": "92-94", "cxl_a": "92-94", "cxl_b": "78.7", "cxl_c": "92-94"},
               "cache": "93-97", "store": "93-97"}
PAPER_T1 = [("MPKI (Memstrata)", 0.40), ("memory bandwidth (BATMAN)", 0.84),
            ("access latency (Colloid)", 0.37), ("stall cycles (X-Mem)", 0.66),
            ("normalised stalls", 0.60), ("AOL = L/MLP (SoarAlto)", 0.88), ("CAMP", 0.97)]
PAPER_F15 = {"interleave 1:1": "up to 10 % below", "first-touch (all DRAM)": "up to 21 % below",
             "latency-equalising (Colloid)": "up to 21 % below"}
NAMES = {"numa": "NUMA", "cxl_a": "CXL-A", "cxl_b": "CXL-B", "cxl_c": "CXL-C"}


@dataclass
class Config:
    name: str
    kernel: str
    size: int
    variant: int
    threads: int

    @property
    def cal(self):
        return self.name.startswith("cal_")


def configs():
    out = []
    for line in open(LIST):
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        out.append(Config(f[0], f[1], int(f[2]), int(f[3]), int(f[4])))
    return out


def run_path(out, name, tag):
    return os.path.join(out, "runs", f"{name}@{tag}.h5")


def x_path(out, name, dev, pct):
    """The run with pct % of the pages in DRAM on device dev."""
    if pct == 100:
        return run_path(out, name, "dram")
    if pct == 0:
        return run_path(out, name, dev)
    return run_path(out, name, f"il-{dev}-{pct}")


def camp(*args):
    r = subprocess.run([CAMP, *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"camp_report: cxlsim-camp {' '.join(args[:2])} ...: {r.stderr.strip()}")
    return r.stdout


def parse_csv(text):
    """cxlsim-camp --csv output as dicts of floats (strings where not numbers)."""
    text = "".join(l for l in text.splitlines(True) if not l.startswith("#"))
    rows = list(csv.DictReader(io.StringIO(text)))
    for r in rows:
        for k, v in r.items():
            try:
                r[k] = float(v)
            except (TypeError, ValueError):
                pass
    return rows


def camp_csv(*args):
    return parse_csv(camp(*args, "--csv"))


def params_path(out, dev):
    return os.path.join(out, f"params-{dev}.txt")


def read_params(out, dev):
    p = {}
    for line in open(params_path(out, dev)):
        if "=" in line and not line.startswith("#"):
            k, v = (t.strip() for t in line.split("="))
            try:
                p[k] = float(v)
            except ValueError:
                p[k] = v  # S_DRd's form: drd_x, drd_base
    return p


def exists(*paths):
    return all(os.path.exists(p) for p in paths)


def pearson(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    if len(a) < 3 or np.std(a) == 0 or np.std(b) == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


# ---- calibrate / select / policies ---------------------------------------------------


def cmd_calibrate(out):
    cal = [c for c in configs() if c.cal]
    for dev in DEVICES:
        files = []
        for c in cal:
            d, x = run_path(out, c.name, "dram"), run_path(out, c.name, dev)
            if exists(d, x):
                files += [d, x]
        camp("calibrate", "-o", params_path(out, dev), "--drd-form", DRD_FORM, *files)
        p = read_params(out, dev)
        form = (f"beta {p['beta']:.4g} kappa {p['kappa']:.4g}" if p.get("drd_x") == "queue"
                else f"p {p['p']:.4g} q {p['q']:.4g}")
        print(f"  {dev}: {len(files) // 2} pairs: S_DRd on x = {p.get('drd_x', 'l_over_mlp')}, "
              f"{p.get('drd_base', 's_llc')}: {form} k_drd "
              f"{p['k_drd']:.3f} k_cache {p['k_cache']:.3f} (S_Cache on "
              f"{p.get('cache_x', 'stalls')}) k_store {p['k_store']:.3f}, idle "
              f"{p['l_idle_dram'] / GHZ:.0f} / {p['l_idle_cxl'] / GHZ:.0f} ns")


def predictions(out, dev, names):
    """name -> predict --csv row of its DRAM run (one cxlsim-camp call)."""
    files = [run_path(out, n, "dram") for n in names]
    rows = camp_csv("predict", "-p", params_path(out, dev), *files) if files else []
    return {n: r for n, r in zip(names, rows)}


def tests_with(out, dev):
    return [c for c in configs() if not c.cal and
            exists(run_path(out, c.name, "dram"), run_path(out, c.name, dev))]


def bandwidth_bound(out, dev):
    """Configurations the 5 % rule calls bandwidth-bound, most loaded first: (name, L/L_idle)."""
    P = read_params(out, dev)
    names = [c.name for c in tests_with(out, dev)]
    pred = predictions(out, dev, names)
    bw = [(n, pred[n]["latency"] / P["l_idle_dram"]) for n in names
          if pred[n]["latency"] > 1.05 * P["l_idle_dram"]]
    return sorted(bw, key=lambda t: -t[1])


def cmd_select(out, dev, n):
    for name, _ in bandwidth_bound(out, dev)[:n]:
        print(name)


def tier_latency_ns(run, idle_ns, unloaded_ns):
    """The mean load latency of each tier (local, far) of a run, in ns: the
    tier's idle latency plus its DRAM's queueing beyond the unloaded access
    time (what a latency-equalising tiering system such as Colloid measures
    per tier); a tier without traffic reads idle."""
    g = run.groups["dram"]
    lat = {}
    for r, node in enumerate(g.node.tolist()):
        kind = "local" if run.node_type[node] == "cn" else "far"
        acc = int(g.counters["reads"][r]) + int(g.counters["writes"][r])
        mean = g.counters["latency_ps_total"][r] / acc / 1e3 if acc else None
        lat[kind] = idle_ns[kind] + (mean - unloaded_ns[kind] if mean is not None else 0.0)
    return lat


def unloaded(out, dev):
    """The DRAM access time of each tier with one chain of loads (cal_pc1_t1)."""
    u = {}
    for kind, tag in (("local", "dram"), ("far", dev)):
        run = cxlsim_h5.load(run_path(out, "cal_pc1_t1", tag))
        g = run.groups["dram"]
        for r, node in enumerate(g.node.tolist()):
            if (run.node_type[node] == "cn") == (kind == "local"):
                acc = int(g.counters["reads"][r]) + int(g.counters["writes"][r])
                u[kind] = g.counters["latency_ps_total"][r] / acc / 1e3
    return u


def colloid_pct(out, dev, name, P, u):
    """Colloid's equilibrium as a static share: starting from every page in DRAM,
    pages move to the device while DRAM's latency is above the device's; the
    share where the two measured tier latencies cross (linear between the
    swept ratios), 100 if DRAM is never the slower tier."""
    idle = {"local": P["l_idle_dram"] / GHZ, "far": P["l_idle_cxl"] / GHZ}
    diff = {}
    for pct in GRID:
        f = x_path(out, name, dev, pct)
        if exists(f):
            lat = tier_latency_ns(cxlsim_h5.load(f), idle, u)
            diff[pct] = lat["local"] - lat["far"]
    if 100 not in diff or diff[100] <= 0:
        return 100
    xs = sorted(diff, reverse=True)
    for hi, lo in zip(xs, xs[1:]):
        if diff[lo] <= 0 < diff[hi]:
            return int(round(lo + (hi - lo) * (0 - diff[lo]) / (diff[hi] - diff[lo])))
    return xs[-1]


def queue_share(out, dev, name, u):
    """Each tier's queueing (mean access time above the unloaded one) with half
    the pages in DRAM, as a share of its queueing at its endpoint (all pages
    there): Eq. 8 assumes 0.25. (nan, nan) without a 50 % run."""
    def access(path, kind):
        run = cxlsim_h5.load(path)
        g = run.groups["dram"]
        for r, node in enumerate(g.node.tolist()):
            if (run.node_type[node] == "cn") == (kind == "local"):
                acc = int(g.counters["reads"][r]) + int(g.counters["writes"][r])
                return g.counters["latency_ps_total"][r] / acc / 1e3 if acc else None
        return None
    half = x_path(out, name, dev, 50)
    if not exists(half):
        return (float("nan"), float("nan"))
    res = []
    for kind, end in (("local", x_path(out, name, dev, 100)), ("far", x_path(out, name, dev, 0))):
        full, mid = access(end, kind), access(half, kind)
        ok = full is not None and mid is not None and full - u[kind] > 1
        res.append((mid - u[kind]) / (full - u[kind]) if ok else float("nan"))
    return tuple(res)


def best_shot(out, dev, name):
    r = camp_csv("best-shot", "-p", params_path(out, dev), run_path(out, name, "dram"),
                 run_path(out, name, dev))[0]
    return r


def sweep_names(out, dev):
    path = os.path.join(out, f"interleave-{dev}.txt")
    return [l.strip() for l in open(path) if l.strip()] if os.path.exists(path) else []


def cmd_policies(out, dev):
    P = read_params(out, dev)
    u = unloaded(out, dev)
    for name in sweep_names(out, dev):
        b = int(round(100 * best_shot(out, dev, name)["x_best"]))
        c = colloid_pct(out, dev, name, P, u)
        for pct, what in ((b, "best-shot"), (c, "colloid")):
            if 0 < pct < 100:
                print(f"{name} {pct} {what}")


# ---- the report -----------------------------------------------------------------------


def fmt(v, d=3):
    return "-" if v is None or (isinstance(v, float) and np.isnan(v)) else f"{v:.{d}f}"


def pct(v):
    return f"{100 * v:.1f} %"


def run_metrics(path):
    """Table 1's metrics that cxlsim-camp does not print: MPKI and bandwidth."""
    run = cxlsim_h5.load(path)
    core = run.groups["core"].counters
    w = run.groups["workload"].counters
    t_ns = (int(w["roi_end_ps"].max()) - int(w["roi_begin_ps"].min())) / 1e3
    g = run.groups["dram"]
    local = sum(int(g.counters["bytes"][r]) for r, n in enumerate(g.node.tolist())
                if run.node_type[n] == "cn")
    return {"mpki": 1e3 * core["l3_misses"].sum() / max(1, core["instructions"].sum()),
            "gbps": local / t_ns if t_ns > 0 else 0.0,
            "stalls": float(core["stalls_l3_miss"].sum())}


def evaluate(out, dev):
    """One row per predicted configuration: prediction (DRAM run alone),
    measurement, counters."""
    tests = tests_with(out, dev)
    pred = predictions(out, dev, [c.name for c in tests])
    P = read_params(out, dev)
    rows = []
    for c in tests:
        p = pred[c.name]
        m = camp_csv("measure", run_path(out, c.name, "dram"), run_path(out, c.name, dev))[0]
        rows.append({"cfg": c, "name": c.name, "p": p, "m": m,
                     "bw": p["latency"] > 1.05 * P["l_idle_dram"],
                     "lat_ratio": p["latency"] / P["l_idle_dram"]})
    return rows


def accuracy(pred, meas):
    e = np.abs(np.asarray(pred) - np.asarray(meas))
    return pearson(pred, meas), float(np.mean(e <= 0.05)), float(np.mean(e <= 0.10))


def explain(r, P):
    """What the counters say about a misprediction (the paper's three causes and ours)."""
    p, m = r["p"], r["m"]
    err = p["s_total"] - m["s_total"]
    why = []
    if r["bw"]:
        why.append(f"bandwidth-bound in DRAM (L {r['lat_ratio']:.2f} x idle): the CXL run is "
                   f"bandwidth-limited too, which one DRAM run cannot see")
    comp = {"drd": (p["s_drd"], m["s_drd"]), "cache": (p["s_cache"], m["s_cache"]),
            "store": (p["s_store"], m["s_store"])}
    worst = max(comp, key=lambda k: abs(comp[k][0] - comp[k][1]))
    pw, mw = comp[worst]
    if worst == "drd":
        if p["mlp"] > 6 and err > 0:
            why.append(f"S_DRd over by {pw - mw:+.2f}: hyper-parallelism (MLP {p['mlp']:.1f}: "
                       f"the CXL run overlaps more than the mean MLP tells)")
        else:
            why.append(f"S_DRd {pw:.2f} predicted vs {mw:.2f} grown (L {p['latency']:.0f} = "
                       f"{r['lat_ratio']:.2f} x idle, L/MLP {p['l_over_mlp']:.0f} cycles, "
                       f"s_LLC/c {p['s_llc']:.2f})")
    elif worst == "cache" and P.get("cache_x") == "lfb_hits":
        why.append(f"S_Cache {pw:.2f} predicted vs {mw:.2f} grown (P5/c {p['lfb']:.3f}, "
                   f"R_Mem {p['r_mem']:.2f}, C/c {p['c_mem']:.2f}, s_Cache/c "
                   f"{p['s_cache_stalls']:.3f}): waits that are not fill-buffer hits (a demand "
                   f"miss finding an L2 prefetch still in flight), or hits whose waits do not "
                   f"grow")
    elif worst == "cache":
        why.append(f"S_Cache {pw:.2f} predicted vs {mw:.2f} grown (R_LFB {p['r_lfb']:.2f}, "
                   f"R_Mem {p['r_mem']:.2f}, s_Cache/c {p['s_cache_stalls']:.3f}): prefetch "
                   f"timeliness changes on CXL that DRAM's counters do not foretell")
    else:
        why.append(f"S_Store {pw:.2f} predicted vs {mw:.2f} grown (s_SB/c {p['s_sb']:.3f} in DRAM)")
    unexplained = m["s_total"] - (m["s_drd"] + m["s_cache"] + m["s_store"])
    if abs(unexplained) > 0.05:
        why.append(f"{unexplained:+.2f} of the measured slowdown is in none of the three stall "
                   f"components (threads waiting at barriers and locks: non-stalled spin cycles)")
    return "; ".join(why)


def outlier_causes(bad):
    """How many outliers each cause of explain() touches, the paper's three
    (tail latency under load, hyper-parallelism, missing counters) in our terms."""
    c = {"bandwidth-bound in DRAM (loaded latency: the device saturates too)": 0,
         "slowdown outside the three stall components (barrier and lock waits)": 0,
         "S_DRd under by > 0.1 at low load": 0, "S_DRd over by > 0.1 (hyper-parallelism)": 0,
         "S_Cache off by > 0.1 (prefetch timeliness)": 0, "S_Store off by > 0.1": 0}
    k = list(c)
    for x in bad:
        p, m = x["p"], x["m"]
        c[k[0]] += x["bw"]
        c[k[1]] += abs(m["s_total"] - (m["s_drd"] + m["s_cache"] + m["s_store"])) > 0.05
        c[k[2]] += (not x["bw"]) and p["s_drd"] < m["s_drd"] - 0.1
        c[k[3]] += p["s_drd"] > m["s_drd"] + 0.1
        c[k[4]] += abs(p["s_cache"] - m["s_cache"]) > 0.1
        c[k[5]] += abs(p["s_store"] - m["s_store"]) > 0.1
    return c


DOMINANT = ("time in no stall component (barrier spinning, thread imbalance)",
            "S_DRd, bandwidth-bound in DRAM", "S_DRd, latency-bound in DRAM", "S_Cache", "S_Store")


def dominant(x):
    """Which of the measured slowdown's parts carries most of a misprediction:
    one of the three components' errors, or the time no stall counter holds."""
    p, m = x["p"], x["m"]
    # the time in no stall component, less what the slowest-thread prediction
    # already adds above the components' sum (0 for the paper's sum)
    err = {"nonstall": (m["s_total"] - (m["s_drd"] + m["s_cache"] + m["s_store"])) -
                       (p["s_total"] - (p["s_drd"] + p["s_cache"] + p["s_store"])),
           "drd": p["s_drd"] - m["s_drd"], "cache": p["s_cache"] - m["s_cache"],
           "store": p["s_store"] - m["s_store"]}
    k = max(err, key=lambda k: abs(err[k]))
    if k == "nonstall":
        return DOMINANT[0]
    if k == "drd":
        return DOMINANT[1] if x["bw"] else DOMINANT[2]
    return DOMINANT[3] if k == "cache" else DOMINANT[4]


def nonstall_growth(out, name, dev):
    """Growth of the cycles that are not stalls (cycles - stalls_total) and of
    the instructions from the DRAM to the device run: a thread spinning at a
    barrier or on a lock runs instructions, it does not stall."""
    a = cxlsim_h5.load(run_path(out, name, "dram")).groups["core"].counters
    b = cxlsim_h5.load(run_path(out, name, dev)).groups["core"].counters
    busy = lambda c: float(c["cycles"].sum() - c["stalls_total"].sum())
    return ((busy(b) - busy(a)) / float(a["cycles"].sum()),
            float(b["instructions"].sum()) / max(1.0, float(a["instructions"].sum())) - 1)


def scatter(ax, pred, meas, title):
    pred, meas = np.asarray(pred), np.asarray(meas)
    hi = max(0.1, float(np.nanmax(np.concatenate([pred, meas]))) * 1.05)
    ax.plot([0, hi], [0, hi], "k-", lw=0.8)
    ax.fill_between([0, hi], [-0.05, hi - 0.05], [0.05, hi + 0.05], color="0.85")
    ax.scatter(meas, pred, s=10)
    ax.set_xlim(min(0, float(np.nanmin(meas)) - 0.02), hi)
    ax.set_ylim(min(0, float(np.nanmin(pred)) - 0.02), hi)
    ax.set_xlabel("measured slowdown")
    ax.set_ylabel("predicted")
    ax.set_title(title, fontsize=9)


def measured_curve(out, dev, name):
    """pct -> measured slowdown at that DRAM share, over every run that exists."""
    t0 = None
    d = camp_csv("measure", run_path(out, name, "dram"), run_path(out, name, dev))[0]
    t0 = d["time_dram_ns"]
    curve = {}
    pcts = set(GRID)
    prefix = f"{name}@il-{dev}-"
    for f in os.listdir(os.path.join(out, "runs")):
        if f.startswith(prefix) and f.endswith(".h5"):
            pcts.add(int(f[len(prefix):-3]))
    for pc in sorted(pcts):
        f = x_path(out, name, dev, pc)
        if exists(f):
            m = camp_csv("measure", run_path(out, name, "dram"), f)[0]
            curve[pc] = m["time_cxl_ns"] / t0 - 1
    return curve


def predicted_curve(out, dev, name, load=None, latency=None):
    """101 points of S(x) by CAMP's workflow (5 % rule), and the run count; load: the
    load share of Eq. 8 (footprint, the paper's, or rate), latency: the latency at that
    share (quadratic, the paper's, or mm1), else the parameter file's."""
    lo = (["--load", load] if load else []) + (["--load-latency", latency] if latency else [])
    text = camp("interleave", "-p", params_path(out, dev), *lo, "--csv", "--points", "101",
                run_path(out, name, "dram"), run_path(out, name, dev))
    runs = 2 if " 2 profiling runs" in text.splitlines()[0] else 1
    return {int(round(100 * r["x"])): r["s_total"] for r in parse_csv(text)}, runs


def cmd_report(out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rep = os.path.join(out, "report")
    os.makedirs(rep, exist_ok=True)
    md = []
    w = md.append
    devs = [d for d in DEVICES if os.path.exists(params_path(out, d))]
    allc = configs()
    tests = [c for c in allc if not c.cal]
    w("# CAMP on cxlsim: results\n")
    w(f"{len(tests)} predicted configurations of {len({c.kernel for c in tests})} programs, "
      f"{len([c for c in allc if c.cal])} calibration configurations of the four "
      f"microbenchmarks (inputs/camp_workloads.txt), on inputs/camp.ini. Made by "
      f"analysis/run_camp_experiments.sh; every prediction is cxlsim-camp's from the DRAM-only "
      f"run alone, with a model fitted on the microbenchmarks only.\n")

    # calibration
    w("## Calibration (the four microbenchmarks only)\n")
    w("| preset | S_DRd's form (x, base) | p | q | beta | kappa | k_drd | S_Cache's form | "
      "k_cache | k_store | idle DRAM / device (ns) | pairs |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for d in devs:
        P = read_params(out, d)
        queue = P.get("drd_x") == "queue"  # p, q are then the better hyperbola's, unused
        bk = f"{P['beta']:.3f} | {P['kappa']:.2f}" if queue else "– | –"
        w(f"| {NAMES[d]} | {P.get('drd_x', 'l_over_mlp')}, {P.get('drd_base', 's_llc')} | "
          f"{P['p']:.4g} | {P['q']:.4g} | {bk} | {P['k_drd']:.3f} | "
          f"{P.get('cache_x', 'stalls')} | {P['k_cache']:.3f} | "
          f"{P['k_store']:.3f} | {P['l_idle_dram'] / GHZ:.0f} / {P['l_idle_cxl'] / GHZ:.0f} | "
          f"{int(P.get('pairs', 0))} |")
    w("")

    ev = {d: evaluate(out, d) for d in devs}
    # Table 6
    w("## Accuracy (the paper's Table 6): predicted from the DRAM run alone\n")
    w("Absolute error of the predicted slowdown (time on the device / time in DRAM - 1).\n")
    w("| preset | configs | Pearson r | within 5 % | within 10 % | paper: r / 5 % / 10 % |")
    w("|---|---|---|---|---|---|")
    for d in devs:
        R = ev[d]
        r, a5, a10 = accuracy([x["p"]["s_total"] for x in R], [x["m"]["s_total"] for x in R])
        pr = PAPER_T6[d]
        w(f"| {NAMES[d]} | {len(R)} | {r:.3f} | {pct(a5)} | {pct(a10)} | "
          f"{pr[0]:.3f} / {pr[1]:.1f} % / {pr[2]:.1f} % |")
    w("")
    w("By the 5 % rule (DRAM latency within 5 % of idle: latency-bound):\n")
    w("| preset | latency-bound: n, r, 5 %, 10 % | bandwidth-bound: n, r, 5 %, 10 % |")
    w("|---|---|---|")
    for d in devs:
        cells = []
        for bw in (False, True):
            R = [x for x in ev[d] if x["bw"] == bw]
            if R:
                r, a5, a10 = accuracy([x["p"]["s_total"] for x in R],
                                      [x["m"]["s_total"] for x in R])
                cells.append(f"{len(R)}, {fmt(r)}, {pct(a5)}, {pct(a10)}")
            else:
                cells.append("0")
        w(f"| {NAMES[d]} | {cells[0]} | {cells[1]} |")
    w("")
    w("Per component (Fig. 6): measured component = growth of its stall cycles "
      "(s_LLC, s_L1D - s_L2, s_SB) over the DRAM run's cycles.\n")
    w("| preset | S_DRd r, within 5 % | S_Cache r, within 5 % | S_Store r, within 5 % | "
      "paper within 5 %: DRd / Cache / Store |")
    w("|---|---|---|---|---|")
    for d in devs:
        cells = []
        for k in ("drd", "cache", "store"):
            p = [x["p"]["s_" + k] for x in ev[d]]
            m = [x["m"]["s_" + k] for x in ev[d]]
            r, a5, _ = accuracy(p, m)
            cells.append(f"{fmt(r)}, {pct(a5)}")
        w(f"| {NAMES[d]} | {' | '.join(cells)} | {PAPER_COMP5['drd'][d]} / "
          f"{PAPER_COMP5['cache']} / {PAPER_COMP5['store']} % |")
    w("")

    # figures 6 and 7
    fig, axes = plt.subplots(len(devs), 3, figsize=(10, 3.2 * len(devs)), squeeze=False)
    for i, d in enumerate(devs):
        for j, k in enumerate(("drd", "cache", "store")):
            scatter(axes[i][j], [x["p"]["s_" + k] for x in ev[d]],
                    [x["m"]["s_" + k] for x in ev[d]], f"{NAMES[d]}: S_{k}")
    fig.tight_layout()
    fig.savefig(os.path.join(rep, "fig6_components.png"), dpi=110)
    plt.close(fig)
    fig, axes = plt.subplots(1, len(devs), figsize=(3.3 * len(devs), 3.3), squeeze=False)
    for i, d in enumerate(devs):
        R = ev[d]
        r, a5, _ = accuracy([x["p"]["s_total"] for x in R], [x["m"]["s_total"] for x in R])
        scatter(axes[0][i], [x["p"]["s_total"] for x in R], [x["m"]["s_total"] for x in R],
                f"{NAMES[d]}: r {r:.3f}, {100 * a5:.0f} % within 5 %")
    fig.tight_layout()
    fig.savefig(os.path.join(rep, "fig7_total.png"), dpi=110)
    plt.close(fig)
    w("Figures: report/fig6_components.png (per component), report/fig7_total.png (total; "
      "grey band: within 5 %).\n")

    # Table 1
    w("## Table 1 recomputed: Pearson r of each metric of the DRAM run with the measured "
      "slowdown\n")
    met = {n: run_metrics(run_path(out, n, "dram")) for n in {x["name"] for d in devs for x in ev[d]}}
    w("| metric | paper (NUMA) | " + " | ".join(NAMES[d] for d in devs) + " |")
    w("|---|---|" + "---|" * len(devs))
    for label, paper in PAPER_T1:
        cells = []
        for d in devs:
            R = ev[d]
            meas = [x["m"]["s_total"] for x in R]
            if label.startswith("MPKI"):
                v = [met[x["name"]]["mpki"] for x in R]
            elif label.startswith("memory bandwidth"):
                v = [met[x["name"]]["gbps"] for x in R]
            elif label.startswith("access latency"):
                v = [x["p"]["latency"] for x in R]
            elif label.startswith("stall cycles"):
                v = [met[x["name"]]["stalls"] for x in R]
            elif label.startswith("normalised"):
                v = [x["p"]["s_llc"] for x in R]
            elif label.startswith("AOL"):
                v = [x["p"]["l_over_mlp"] for x in R]
            else:
                v = [x["p"]["s_total"] for x in R]
            cells.append(fmt(pearson(v, meas)))
        w(f"| {label} | {paper:.2f} | " + " | ".join(cells) + " |")
    w("")
    w("Stall cycles: CYCLE_ACTIVITY.STALLS_L3_MISS summed over the threads; normalised: "
      "divided by the cycles; latency: the mean demand-read latency (P11/P12).\n")

    # what carries the error outside 5 %
    w("## Outside 5 %: which part of the slowdown carries the error\n")
    w("Each configuration predicted more than 5 % off, by the part with the largest error: one "
      "of the three components (predicted minus measured growth of its stall cycles), or the "
      "measured slowdown that is in no stall component. For the last, the growth of the "
      "non-stall cycles (cycles - stalls_total, over the DRAM run's cycles) and of the "
      "instructions say whether it is spinning (instructions grow) or imbalance (they do "
      "not: the slowest thread sets the time, the counters sum every thread).\n")
    w("| preset | outside 5 % | " + " | ".join(DOMINANT) + " |")
    w("|---|---|" + "---|" * len(DOMINANT))
    for d in devs:
        bad = [x for x in ev[d] if abs(x["p"]["s_total"] - x["m"]["s_total"]) > 0.05]
        cells = []
        for k in DOMINANT:
            g = [x for x in bad if dominant(x) == k]
            progs = sorted({x["cfg"].kernel for x in g})
            cells.append(f"{len(g)} ({', '.join(progs)})" if g else "0")
        w(f"| {NAMES[d]} | {len(bad)} of {len(ev[d])} | " + " | ".join(cells) + " |")
    w("")
    for d in devs:
        g = [x for x in ev[d] if abs(x["p"]["s_total"] - x["m"]["s_total"]) > 0.05 and
             dominant(x) == DOMINANT[0]]
        if not g:
            continue
        w(f"{NAMES[d]}, time in no stall component:\n")
        w("| config | error | measured outside the components | non-stall cycle growth | "
          "instruction growth |")
        w("|---|---|---|---|---|")
        for x in g:
            p, m = x["p"], x["m"]
            ns, di = nonstall_growth(out, x["name"], d)
            w(f"| {x['name']} | {p['s_total'] - m['s_total']:+.3f} | "
              f"{m['s_total'] - (m['s_drd'] + m['s_cache'] + m['s_store']):+.3f} | {ns:+.3f} | "
              f"{100 * di:+.0f} % |")
        w("")

    # outliers
    w("## Outliers (absolute error above 10 %), explained from their counters\n")
    for d in devs:
        P = read_params(out, d)
        bad = sorted([x for x in ev[d] if abs(x["p"]["s_total"] - x["m"]["s_total"]) > 0.10],
                     key=lambda x: -abs(x["p"]["s_total"] - x["m"]["s_total"]))
        w(f"### {NAMES[d]}: {len(bad)} of {len(ev[d])}\n")
        if not bad:
            continue
        causes = outlier_causes(bad)
        w("Causes, from the counters (an outlier may have several): " +
          "; ".join(f"{k}: {v}" for k, v in causes.items()) + ".\n")
        w("| config | measured | predicted | DRd p/m | Cache p/m | Store p/m | why |")
        w("|---|---|---|---|---|---|---|")
        for x in bad:
            p, m = x["p"], x["m"]
            w(f"| {x['name']} | {m['s_total']:.3f} | {p['s_total']:.3f} | "
              f"{p['s_drd']:.2f}/{m['s_drd']:.2f} | {p['s_cache']:.2f}/{m['s_cache']:.2f} | "
              f"{p['s_store']:.2f}/{m['s_store']:.2f} | {explain(x, P)} |")
        w("")

    # interleaving
    for d in devs:
        names = [n for n in sweep_names(out, d)]
        if not names:
            continue
        w(f"## Interleaving on {NAMES[d]} (Fig. 14, 15)\n")
        w(f"{len(names)} bandwidth-bound configurations (the 5 % rule on their DRAM runs), "
          f"measured at DRAM shares 0, 10, ..., 100 % and at the policies' shares; predicted "
          f"curves by CAMP's workflow (cxlsim-camp interleave: the DRAM and the CXL runs, "
          f"Eq. 8-10).\n")
        w("Eq. 8 puts a tier's queueing at share x' at x'^2 of its queueing alone (0.25 at "
          "half the pages); the last two columns are what each tier's memory measured at 50 % "
          "(its mean access time above the unloaded one, as a share of that at its endpoint).\n")
        Pd = read_params(out, d)
        w("Three forms of Eq. 8 (cxlsim-camp --load, --load-latency): the paper's, a tier's "
          "footprint share (x' = x, 1 - x) with latency L_idle + (L_full - L_idle) x'^2; the "
          "rate share (each tier's requests per unit time over its endpoint run's, "
          "src/camp/camp_model.c) with the same x'^2; the rate share with a single-server "
          "queue's latency L_idle / (1 - rho x'), rho = 1 - L_idle / L_full. Best-shot uses "
          f"the parameter file's (load_share = {Pd.get('load_share', 'footprint')}, "
          f"load_latency = {Pd.get('load_latency', 'quadratic')}).\n")
        w("| config | points | within 5 %: paper (footprint, x'^2) | max error | "
          "rate, x'^2 | max error | rate, M/M/1 | max error | best-shot x* | "
          "measured optimum x | perf(x*) / perf(opt) | DRAM queueing at 50 % | "
          "device queueing at 50 % |")
        w("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        P = read_params(out, d)
        u = unloaded(out, d)
        allpts, good, good_q, good_r, ok_bs, f15, qs = 0, 0, 0, 0, 0, [], []
        curves = {}
        for n in names:
            mc = measured_curve(out, d, n)
            pc, runs = predicted_curve(out, d, n, "footprint", "quadratic")
            pq, _ = predicted_curve(out, d, n, "rate", "quadratic")
            pr, _ = predicted_curve(out, d, n, "rate", "mm1")
            curves[n] = (mc, pc, pr)
            errs = [abs(pc[x] - mc[x]) for x in mc if x in GRID]
            errs_q = [abs(pq[x] - mc[x]) for x in mc if x in GRID]
            errs_r = [abs(pr[x] - mc[x]) for x in mc if x in GRID]
            allpts += len(errs)
            good += sum(e <= 0.05 for e in errs)
            good_q += sum(e <= 0.05 for e in errs_q)
            good_r += sum(e <= 0.05 for e in errs_r)
            xb = int(round(100 * best_shot(out, d, n)["x_best"]))
            xo = min(mc, key=lambda x: mc[x])
            perf = {x: 1 / (1 + s) for x, s in mc.items()}
            ratio = perf.get(xb, float("nan")) / perf[xo]
            ok_bs += ratio >= 0.95
            xc = colloid_pct(out, d, n, P, u)
            f15.append((n, perf.get(xb), perf.get(50), perf.get(100), perf.get(xc), xb, xc))
            q = queue_share(out, d, n, u)
            qs.append(q)
            w(f"| {n} | {len(errs)} | {sum(e <= 0.05 for e in errs)} | {max(errs):.3f} | "
              f"{sum(e <= 0.05 for e in errs_q)} | {max(errs_q):.3f} | "
              f"{sum(e <= 0.05 for e in errs_r)} | {max(errs_r):.3f} | "
              f"{xb} % | {xo} % | {ratio:.3f} | {fmt(q[0], 2)} | {fmt(q[1], 2)} |")
        w("")
        w(f"Points within 5 % absolute: the paper's Eq. 8 {good} of {allpts} "
          f"({pct(good / max(1, allpts))}), rate share with x'^2 {good_q} of {allpts} "
          f"({pct(good_q / max(1, allpts))}), rate share with the M/M/1 latency {good_r} of "
          f"{allpts} ({pct(good_r / max(1, allpts))}); "
          f"the paper: 90 % of its 20 workloads within 5 %. Best-shot within 5 % of the "
          f"measured optimum's performance: {ok_bs} of {len(names)}. Queueing at 50 % of "
          f"the pages, median over the configurations: DRAM {np.nanmedian([q[0] for q in qs]):.2f}, "
          f"device {np.nanmedian([q[1] for q in qs]):.2f} of the endpoint's (Eq. 8: 0.25).\n")
        w("Placement policies (Fig. 15): performance normalised to DRAM-only (1 / (1 + S)).\n")
        w("| config | best-shot (x*) | interleave 1:1 | first-touch (all DRAM) | "
          "latency-equalising (x) |")
        w("|---|---|---|---|---|")
        gaps = {"interleave 1:1": [], "first-touch (all DRAM)": [],
                "latency-equalising (Colloid)": []}
        for n, b, half, ft, col, xb, xc in f15:
            w(f"| {n} | {fmt(b)} ({xb} %) | {fmt(half)} | {fmt(ft)} | {fmt(col)} ({xc} %) |")
            for k, v in zip(gaps, (half, ft, col)):
                if b and v:
                    gaps[k].append(1 - v / b)
        w("")
        w("| policy | largest shortfall against best-shot | mean | paper |")
        w("|---|---|---|---|")
        for k, g in gaps.items():
            if g:
                w(f"| {k} | {100 * max(g):.1f} % | {100 * np.mean(g):.1f} % | {PAPER_F15[k]} |")
        w("")
        # figures 14, 15
        cols = 6
        rows_ = (len(names) + cols - 1) // cols
        fig, axes = plt.subplots(rows_, cols, figsize=(2.4 * cols, 2.1 * rows_), squeeze=False)
        for i, n in enumerate(names):
            ax = axes[i // cols][i % cols]
            mc, pc, pr = curves[n]
            xs = sorted(pc)
            ax.plot(xs, [pc[x] for x in xs], "-", lw=1, label="predicted (Eq. 8)")
            ax.plot(xs, [pr[x] for x in xs], "--", lw=1, label="predicted (rate share, M/M/1)")
            ms = sorted(mc)
            ax.plot(ms, [mc[x] for x in ms], "o", ms=3, label="measured")
            ax.set_title(n, fontsize=8)
            ax.tick_params(labelsize=6)
        for i in range(len(names), rows_ * cols):
            axes[i // cols][i % cols].axis("off")
        axes[0][0].legend(fontsize=6)
        fig.supxlabel("DRAM share of pages (%)")
        fig.supylabel("slowdown vs DRAM-only")
        fig.tight_layout()
        fig.savefig(os.path.join(rep, f"fig14_interleave_{d}.png"), dpi=110)
        plt.close(fig)
        fig, ax = plt.subplots(figsize=(max(6, 0.5 * len(f15)), 3))
        wd = 0.2
        for j, (lab, idx) in enumerate((("best-shot", 1), ("1:1", 2), ("first-touch", 3),
                                        ("latency-equalising", 4))):
            ax.bar(np.arange(len(f15)) + (j - 1.5) * wd, [r[idx] or 0 for r in f15], wd, label=lab)
        ax.set_xticks(np.arange(len(f15)))
        ax.set_xticklabels([r[0] for r in f15], rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("performance vs DRAM-only")
        ax.set_ylim(0.5, None)
        ax.legend(fontsize=7, ncol=4)
        fig.tight_layout()
        fig.savefig(os.path.join(rep, f"fig15_policies_{d}.png"), dpi=110)
        plt.close(fig)
        w(f"Figures: report/fig14_interleave_{d}.png, report/fig15_policies_{d}.png.\n")

    # every configuration
    w("## Every configuration\n")
    w("| config | L_DRAM / idle | L/MLP | s_LLC/c | " +
      " | ".join(f"{NAMES[d]} meas / pred" for d in devs) + " |")
    w("|---|---|---|---|" + "---|" * len(devs))
    by = {d: {x["name"]: x for x in ev[d]} for d in devs}
    for c in tests:
        first = next((by[d][c.name] for d in devs if c.name in by[d]), None)
        if not first:
            continue
        cells = [f"{by[d][c.name]['m']['s_total']:.3f} / {by[d][c.name]['p']['s_total']:.3f}"
                 if c.name in by[d] else "-" for d in devs]
        w(f"| {c.name} | {first['lat_ratio']:.2f} | {first['p']['l_over_mlp']:.0f} | "
          f"{first['p']['s_llc']:.3f} | " + " | ".join(cells) + " |")
    w("")
    times = os.path.join(out, "runs", "times.txt")
    if os.path.exists(times):
        t = [float(l.split()[1]) for l in open(times) if len(l.split()) == 2]
        w(f"{len(t)} simulations, {sum(t) / 60:.1f} minutes of their wall times added up (median "
          f"{np.median(t):.1f} s a run).\n")
    with open(os.path.join(rep, "camp_report.md"), "w") as f:
        f.write("\n".join(md))
    print(f"  {os.path.join(rep, 'camp_report.md')}")


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    cmd, out = argv[0], argv[1]
    if cmd == "calibrate":
        cmd_calibrate(out)
    elif cmd == "select" and len(argv) == 4:
        cmd_select(out, argv[2], int(argv[3]))
    elif cmd == "policies" and len(argv) == 3:
        cmd_policies(out, argv[2])
    elif cmd == "report":
        cmd_report(out)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
