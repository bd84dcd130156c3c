#!/usr/bin/python3
"""DIKTAMO's evaluation (papers/diktamo.md §VII) from cxlsim's HDF5 files.

  diktamo_tables.py TABLE DIR [--json] [--png PNGDIR]
  TABLE: fig10 fig11 fig13 fig14 fig16 compression traffic fig18 fig19 all

DIR holds the runs analysis/run_diktamo.sh makes (tests/mpi/diktamo_scaled.sh
makes the first kind), one HDF5 file each, named

  <kernel>-<protocol>.h5           the machine's run (Fig. 10-16, compression,
                                   traffic), protocol one of wb, wt, baseline,
                                   parallel, proactive, proactive_noc
  <kernel>-proactive-nr<N>.h5      proactive with diktamo.replicas = N (Fig. 18)
  <kernel>-<protocol>-cn<C>.h5     wb or proactive on C CNs (Fig. 19)

Every table prints as markdown, the paper's figures beside ours where §VII
gives them, and below it a line per claim the text makes about individual
applications, with what our runs say. --json prints the table's numbers as
JSON instead (fig10's form, {"rows": {kernel: {protocol: ratio}}, "average":
..., "geomean": ...}, is what tests/mpi/diktamo_scaled.sh asserts on; keep
it). --png PNGDIR also writes PNGDIR/<table>.png, one figure per table
(matplotlib, Agg backend). A run whose status is not "complete" is left out
of every table, with a warning on stderr and a note under the table.

Definitions (counters are summed over all nodes of a run unless a maximum is
said; "time" is the region of interest, max(workload/roi_end_ps) -
min(workload/roi_begin_ps), as in analysis/core_report.py; averages over
workloads are arithmetic means of the per-workload ratios, as the paper's
"on average" figures are, with geometric means beside them where useful):

fig10   Fig. 10 and Fig. 12: each workload's time under every protocol over
        its time under WB, and proactive-best = min(proactive, proactive_noc)
        per workload (§VII-B). Paper: WT 3.68x, baseline 2.88x, parallel 3 %
        below baseline, proactive 1.30x, proactive-best 1.22x.
fig11   Fig. 11, proactive runs: the share of replications sent at the
        store-buffer head, core/repl_at_head / (core/repl_at_entry +
        core/repl_at_head); beside it the REPLs a full Logging Unit refused
        (diktamo/nacks_received / diktamo/repls_sent: an early REPL refused
        is sent again at the head, diktamo/repls_resent), the Logging Units'
        back-pressure (lu/backpressure_ps, the time each REPL from an SB
        head waited for room, per CN over the time: the mean number of
        REPLs waiting in a unit) and the
        time of proactive over parallel (the paper: the higher the share at
        the head, the closer the two).
fig13   Fig. 13, proactive runs: the largest log (24 B an entry,
        uncompressed) moved to any CN's DRAM log between two dumps,
        max over CNs of lu/round_peak_bytes; beside it the largest DRAM log
        at any moment (lu/dram_peak_bytes), the dump rounds
        (keeper/rounds), early flushes (keeper/early_flushes), the run's
        time, and the log the busiest CN would make in one 2.5 ms period at
        its mean rate over the run (max over CNs of lu/drained_entries x
        24 B x 2.5 ms / time): our runs are shorter than the paper's, so
        most have one or two rounds. Paper: at most 18 MB.
fig14   Fig. 14, proactive runs: the bandwidth of the compressed log dumps
        to the MNs, keeper/dump_bytes summed over the MNs; the average is
        the bytes over the time, the peak the largest increase of the
        sampled keeper/dump_bytes (summed over MNs) over one sampling
        interval (run_diktamo.sh samples every 100 us) divided by it. Paper:
        not above 5 GB/s for any workload.
fig16   Fig. 16, wb, proactive and wt runs: the mean time of a remote store
        in each of Fig. 16's four parts, core/rw_rob_ps (ROB->ROBHead),
        rw_sb_ps (ROBHead->SBHead), rw_coh_ps (SBHead->CohEnd) and
        rw_repl_ps (Replication Time) over core/remote_stores, in ns, and
        the total over WB's. Paper: under WB the first two dominate; under
        proactive ROBHead->SBHead grows everywhere and dominates, and
        bodytrack and streamcluster grow most; WT's range is 10x larger,
        ROBHead->SBHead dominating.
compression  proactive runs: keeper/dump_raw_bytes / keeper/dump_bytes (our
        format: 32-byte records in byte planes plus a 24-byte header per
        chunk, src/diktamo/log_format.c) and keeper/dump_entries x 24 B /
        keeper/dump_bytes (the paper's accounting: an entry is 24 bytes in
        the log); lu/dump_compressed_bytes equals keeper/dump_bytes when no
        dump is lost. Paper: 5.8x on average with gzip -9 (what records side
        by side give; tests/bench/dk_compress measures both layouts).
traffic every machine run: bytes on the wire (port/tx_bytes_<class>, all
        classes, all nodes) under each protocol over WB's; remote stores per
        1000 instructions under WB (core/remote_stores / core/instructions);
        and for proactive the replication class's share of the bytes
        (port/tx_bytes_repl: REPL, REPL_ACK, VAL, log dumps and their
        synchronisation), its messages by type (port/tx_repl, tx_repl_ack,
        tx_val, tx_log_dump, tx_log_sync) and the REPL bytes per remote
        store. The paper gives no figure.
fig18   Fig. 18: proactive with N_r = 2 and 4 over N_r = 3, and N_r = 2 over
        WB. Paper: N_r = 4 +2 %, N_r = 2 -2 %, N_r = 2 1.27x WB.
fig19   Fig. 19: wb and proactive on each number of CNs over WB on the
        machine's (system.cns of the <kernel>-wb.h5 run, 16 for the paper),
        and the speed-up from the fewest to the most CNs per protocol. Paper:
        4 -> 16 CNs, 3.15x under WB, 3.07x under proactive, on average.
all     every table above, in that order (missing runs skip a table with a
        note).
"""
import glob
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cxlsim_h5  # noqa: E402
import core_report  # noqa: E402

PROTOCOLS = ["wb", "wt", "baseline", "parallel", "proactive", "proactive_noc"]
ORDER = ["ocean_cp", "ocean_ncp", "barnes", "raytrace", "fluidanimate", "streamcluster",
         "canneal", "bodytrack", "ycsb"]
# §VII-A: WT 3.68x (Fig. 10), baseline 2.88x, parallel 3 % better than
# baseline, proactive 1.30x, proactive-best 1.22x (§VII-B).
PAPER = {"wt": 3.68, "baseline": 2.88, "parallel": 2.88 * 0.97, "proactive": 1.30,
         "proactive_best": 1.22}
PAPER_FIG13_MB = 18.0       # §VII-B: the DRAM log is sized for the largest, 18 MB
PAPER_FIG14_GBS = 5.0       # §VII-B: "not higher than 5 GB/s across all the workloads"
PAPER_COMPRESSION = 5.8     # §IV-E: gzip -9, "average compression factor of 5.8x"
PAPER_FIG18 = {2: 0.98, 4: 1.02, "nr2_wb": 1.27}
PAPER_FIG19 = {"wb": 3.15, "proactive": 3.07}
ENTRY_BYTES = 24            # CXS_DK_ENTRY_BYTES: an entry in the paper's log
DUMP_PERIOD_PS = 2_500_000_000  # Table II: 2.5 ms between dumps

NAME = re.compile(r"^(?P<kernel>[^-]+)-(?P<proto>proactive_noc|proactive|parallel|baseline|wb|wt)"
                  r"(?:-nr(?P<nr>\d+)|-cn(?P<cn>\d+)|-sram(?P<sram>\d+)|-(?P<fail>fail))?$")


# ---- runs ------------------------------------------------------------------------

class RunInfo:
    """What the tables need of one run: its counters summed and maximised over
    nodes, its time, a few configuration keys; the file itself for series."""

    def __init__(self, path):
        self.path = path
        run = cxlsim_h5.load(path)
        self.run = run
        self.status = str(run.attrs["status"])
        self.roi = core_report.roi_ps(run)
        self.final = int(run.attrs.get("final_time_ps", 0))
        self.wall = float(run.attrs.get("wall_seconds", 0.0))
        text = str(run.attrs.get("config", ""))
        self.cns = int(cxlsim_h5._config_value(text, "system.cns") or 0)
        self.mns = int(cxlsim_h5._config_value(text, "system.mns") or 0)
        self.tot, self.max = {}, {}
        for stats in run.nodes.values():
            for k, v in stats.items():
                if isinstance(v, int):
                    self.tot[k] = self.tot.get(k, 0) + v
                    self.max[k] = max(self.max.get(k, 0), v)
        # the per-core counters under one name, summed over cores
        self.core = {}
        for k, v in self.tot.items():
            m = re.match(r"^core\d+/(.+)$", k)
            if m:
                self.core[m.group(1)] = self.core.get(m.group(1), 0) + v

    def t(self, name):
        return self.tot.get(name, 0)


class Runs:
    """Every run of DIR by (kernel, protocol, variant), variant "" (the
    machine's run), "nr<N>" or "cn<C>"."""

    def __init__(self, d):
        self.dir = d
        self.by = {}
        self.excluded = []
        self.fail_all = {}  # (kernel, proto) -> RunInfo of every -fail run, any status
        for p in sorted(glob.glob(os.path.join(d, "*.h5"))):
            m = NAME.match(os.path.basename(p)[:-3])
            if not m:
                continue
            info = RunInfo(p)
            if m["fail"]:
                self.fail_all[(m["kernel"], m["proto"])] = info
            if not info.status.startswith("complete"):
                print(f"{p}: status {info.status!r}: left out", file=sys.stderr)
                self.excluded.append((os.path.basename(p), info.status))
                continue
            var = (f"nr{m['nr']}" if m["nr"] else f"cn{m['cn']}" if m["cn"] else
                   f"sram{m['sram']}" if m["sram"] else "fail" if m["fail"] else "")
            self.by[(m["kernel"], m["proto"], var)] = info

    def get(self, kernel, proto, var=""):
        return self.by.get((kernel, proto, var))

    def kernels(self, need):
        """Kernels, in the paper's order, that have every (proto, var) in need."""
        ks = {k for (k, _, _) in self.by}
        ks = [k for k in ORDER if k in ks] + sorted(k for k in ks if k not in ORDER)
        return [k for k in ks if all(self.get(k, p, v) is not None for p, v in need)]

    def note(self):
        if not self.excluded:
            return []
        return ["", "Left out (not complete): " +
                ", ".join(f"{n} ({s})" for n, s in self.excluded) + "."]


class Missing(Exception):
    pass


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs) if xs else float("nan")


def gmean(xs):
    xs = list(xs)
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def top(values, n):
    """The n keys of the largest values, largest first."""
    return [k for k, _ in sorted(values.items(), key=lambda kv: -kv[1])[:n]]


def f2(x):
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.2f}"


class Table:
    def __init__(self, name, title, lines, data, plot):
        self.name, self.title, self.lines, self.data, self.plot = name, title, lines, data, plot


# ---- Fig. 10 / Fig. 12 ------------------------------------------------------------

def fig10_numbers(R):
    times = {}
    for (k, p, v), info in R.by.items():
        if v == "" and p in PROTOCOLS:
            times.setdefault(k, {})[p] = info.roi
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
        raise Missing(f"{R.dir}: no <kernel>-wb.h5 with other protocols beside it")
    cols = [p for p in PROTOCOLS + ["proactive_best"] if all(p in r for r in rows.values())]
    avg = {p: mean(r[p] for r in rows.values()) for p in cols}
    geo = {p: gmean(r[p] for r in rows.values()) for p in cols}
    return times, rows, cols, avg, geo


def fig10(R):
    times, rows, cols, avg, geo = fig10_numbers(R)
    lines = md_table(["workload", "WB time (us)"] + cols,
                     [[k, f"{times[k]['wb'] / 1e6:.1f}"] + [f"{r[p]:.2f}" for p in cols]
                      for k, r in rows.items()])
    lines.append("| **average** | | " + " | ".join(f"**{avg[p]:.2f}**" for p in cols) + " |")
    lines.append("| geometric mean | | " + " | ".join(f"{geo[p]:.2f}" for p in cols) + " |")
    lines.append("| paper (§VII-A, Fig. 12) | | " +
                 " | ".join(f"{PAPER[p]:.2f}" if p in PAPER else ("1.00" if p == "wb" else "")
                            for p in cols) + " |")
    claims = []
    if "wt" in cols:
        claims.append("- paper: WT is prohibitively expensive \"especially for write-intensive "
                      "workloads such as Ocean-cp and Ocean-ncp\"; ours, largest WT/WB: " +
                      ", ".join(f"{k} {rows[k]['wt']:.2f}"
                                for k in top({k: r["wt"] for k, r in rows.items()}, 3)))
    if "parallel" in cols and "proactive" in cols:
        gain = {k: r["parallel"] / r["proactive"] for k, r in rows.items()}
        claims.append("- paper: raytrace and fluidanimate \"do not benefit much\" from "
                      "proactive; ours, parallel/proactive: " +
                      ", ".join(f"{k} {gain[k]:.2f}" for k in rows if k in
                                ("raytrace", "fluidanimate")) +
                      f" (range {min(gain.values()):.2f}-{max(gain.values()):.2f})")
    if "proactive_noc" in cols:
        claims.append("- paper (Fig. 12): ocean-cp benefits from coalescing, raytrace loses; "
                      "ours, proactive_noc/proactive: " +
                      ", ".join(f"{k} {rows[k]['proactive_noc'] / rows[k]['proactive']:.2f}"
                                for k in rows if k in ("ocean_cp", "raytrace")))
    lines += [""] + claims + R.note()
    data = {"rows": rows, "average": avg, "geomean": geo}
    plot = {"kind": "bars", "ylabel": "time / WB", "categories": list(rows) + ["average"],
            "series": {p: [rows[k][p] for k in rows] + [avg[p]] for p in cols},
            "paper": {p: PAPER[p] for p in cols if p in PAPER}}
    return Table("fig10", "Fig. 10 / Fig. 12: execution time normalised to WB", lines, data, plot)


# ---- Fig. 11 -----------------------------------------------------------------------

def fig11(R):
    ks = R.kernels([("proactive", "")])
    if not ks:
        raise Missing("no <kernel>-proactive.h5")
    rows, data = [], {}
    for k in ks:
        i = R.get(k, "proactive")
        e, h = i.core.get("repl_at_entry", 0), i.core.get("repl_at_head", 0)
        frac = h / (e + h) if e + h else float("nan")
        sent = i.t("diktamo/repls_sent")
        nack = i.t("diktamo/nacks_received") / sent if sent else float("nan")
        bp = i.t("lu/backpressure_ps") / i.cns / i.roi if i.roi and i.cns else float("nan")
        par = R.get(k, "parallel")
        ratio = i.roi / par.roi if par else None
        data[k] = {"at_head": frac, "replications": e + h, "nacked": nack,
                   "backpressure": bp, "proactive_over_parallel": ratio}
        rows.append([k, e + h, f"{100 * frac:.1f} %", f"{100 * nack:.1f} %",
                     f"{bp:.2f}", f2(ratio)])
    lines = md_table(["workload", "replications", "sent at SB head (Fig. 11)",
                      "REPLs refused by a full LU", "head REPLs waiting for SRAM room (mean per LU)",
                      "proactive / parallel time"], rows)
    fr = {k: v["at_head"] for k, v in data.items()}
    lines += ["", "- paper: raytrace, fluidanimate and streamcluster have a high fraction at "
              "the head; ours, highest: " + ", ".join(f"{k} {100 * fr[k]:.0f} %"
                                                       for k in top(fr, 3))]
    lines += R.note()
    plot = {"kind": "bars", "ylabel": "share of replications sent at the SB head",
            "categories": ks, "series": {"proactive": [fr[k] for k in ks]}}
    return Table("fig11", "Fig. 11: DIKTAMO-proactive replications sent at the store-buffer head",
                 lines, data, plot)


# ---- Fig. 13 -----------------------------------------------------------------------

def fig13(R):
    ks = R.kernels([("proactive", "")])
    if not ks:
        raise Missing("no <kernel>-proactive.h5")
    rows, data = [], {}
    for k in ks:
        i = R.get(k, "proactive")
        rp = i.max.get("lu/round_peak_bytes", 0) / 1e6
        dp = i.max.get("lu/dram_peak_bytes", 0) / 1e6
        rate = (i.max.get("lu/drained_entries", 0) * ENTRY_BYTES * DUMP_PERIOD_PS / i.roi / 1e6
                if i.roi else float("nan"))
        data[k] = {"round_peak_MB": rp, "dram_peak_MB": dp, "rounds": i.t("keeper/rounds"),
                   "early_flushes": i.t("keeper/early_flushes"), "time_us": i.roi / 1e6,
                   "per_period_MB": rate, "spilled_entries": i.t("lu/spilled_entries")}
        rows.append([k, f"{rp:.2f}", f"{dp:.2f}", i.t("keeper/rounds"),
                     i.t("keeper/early_flushes"), f"{i.roi / 1e6:.0f}", f"{rate:.2f}"])
    rows.append(["**largest**", f"**{max(v['round_peak_MB'] for v in data.values()):.2f}**",
                 f"{max(v['dram_peak_MB'] for v in data.values()):.2f}", "", "", "",
                 f"{max(v['per_period_MB'] for v in data.values()):.2f}"])
    rows.append(["paper (§VII-B)", f"up to {PAPER_FIG13_MB:.0f}", "", "", "", "", ""])
    lines = md_table(["workload", "log between two dumps, largest CN (MB, Fig. 13)",
                      "largest DRAM log (MB)", "dump rounds", "early flushes", "time (us)",
                      "log per 2.5 ms at the mean rate, busiest CN (MB)"], rows)
    lines += R.note()
    plot = {"kind": "bars", "ylabel": "MB (24 B an entry)", "categories": ks,
            "series": {"between two dumps": [data[k]["round_peak_MB"] for k in ks],
                       "per 2.5 ms at the mean rate": [data[k]["per_period_MB"] for k in ks]},
            "paper": {"between two dumps": PAPER_FIG13_MB}}
    return Table("fig13", "Fig. 13: largest uncompressed log between two dumps (proactive)",
                 lines, data, plot)


# ---- Fig. 14 -----------------------------------------------------------------------

def dump_series(info):
    """(interval_ps, per-interval bytes summed over MNs) of keeper/dump_bytes."""
    run = info.run
    if run.series_time is None or "keeper" not in run.series_groups:
        return None, None
    ts = run.series("keeper", ["dump_bytes"])
    total = ts["dump_bytes"].sum(axis=1).to_numpy()
    t = ts.index.to_numpy()
    if len(t) < 2:
        return None, None
    return int(t[1] - t[0]), [int(b - a) for a, b in zip(total[:-1], total[1:])]


def fig14(R):
    ks = R.kernels([("proactive", "")])
    if not ks:
        raise Missing("no <kernel>-proactive.h5")
    rows, data = [], {}
    for k in ks:
        i = R.get(k, "proactive")
        b = i.t("keeper/dump_bytes")
        avg = b / i.roi * 1e3 if i.roi else float("nan")      # bytes/ps -> GB/s
        iv, per = dump_series(i)
        peak = max(per) / iv * 1e3 if per else None
        data[k] = {"dumped_MB": b / 1e6, "average_GBs": avg, "peak_GBs": peak,
                   "interval_us": iv / 1e6 if iv else None}
        rows.append([k, f"{b / 1e6:.2f}", f"{avg:.3f}", f"{peak:.2f}" if peak is not None else
                     "(not sampled)"])
    mx = max(v["average_GBs"] for v in data.values())
    rows.append(["**largest**", "", f"**{mx:.3f}**",
                 f2(max((v["peak_GBs"] or 0) for v in data.values()))])
    rows.append(["paper (§VII-B)", "", f"at most {PAPER_FIG14_GBS:.0f}", ""])
    ivs = {v["interval_us"] for v in data.values() if v["interval_us"]}
    lines = md_table(["workload", "compressed log dumped (MB)", "average (GB/s, Fig. 14)",
                      "peak over " + (f"{ivs.pop():g} us" if len(ivs) == 1 else "a sample") +
                      " (GB/s)"], rows)
    lines += R.note()
    plot = {"kind": "bars", "ylabel": "GB/s to the MNs", "categories": ks,
            "series": {"average": [data[k]["average_GBs"] for k in ks],
                       "peak": [data[k]["peak_GBs"] or 0 for k in ks]},
            "paper": {"average": PAPER_FIG14_GBS}}
    return Table("fig14", "Fig. 14: CXL bandwidth of the log dumps (proactive)", lines, data, plot)


# ---- Fig. 16 -----------------------------------------------------------------------

PARTS = [("rw_rob_ps", "ROB->ROBHead"), ("rw_sb_ps", "ROBHead->SBHead"),
         ("rw_coh_ps", "SBHead->CohEnd"), ("rw_repl_ps", "Replication")]


def fig16(R):
    protos = [p for p in ("wb", "proactive", "wt")]
    ks = R.kernels([(p, "") for p in protos])
    if not ks:
        raise Missing("no <kernel>-wb.h5 with -proactive.h5 and -wt.h5 beside it")
    rows, data = [], {}
    for k in ks:
        data[k] = {}
        for p in protos:
            c = R.get(k, p).core
            n = c.get("remote_stores", 0)
            parts = {name: c.get(key, 0) / n / 1e3 if n else 0.0 for key, name in PARTS}
            total = sum(parts.values())
            data[k][p] = dict(parts, total=total, remote_stores=n)
        for p in protos:
            d = data[k][p]
            rows.append([k if p == "wb" else "", p, d["remote_stores"]] +
                        [f"{d[name]:.1f}" for _, name in PARTS] +
                        [f"{d['total']:.1f}", f2(d["total"] / data[k]["wb"]["total"])
                         if data[k]["wb"]["total"] else ""])
    lines = md_table(["workload", "protocol", "remote stores"] +
                     [f"{name} (ns)" for _, name in PARTS] + ["total (ns)", "total / WB"], rows)
    inc = {k: data[k]["proactive"]["total"] - data[k]["wb"]["total"] for k in ks}
    dom = {p: sum(1 for k in ks if max(PARTS, key=lambda kn: data[k][p][kn[1]])[1] ==
                  "ROBHead->SBHead") for p in protos}
    wt_wb = mean(data[k]["wt"]["total"] / data[k]["wb"]["total"] for k in ks
                 if data[k]["wb"]["total"])
    lines += ["",
              "- paper: under proactive ROBHead->SBHead increases in all cases and dominates; "
              f"ours: it is the largest part in {dom['proactive']} of {len(ks)} workloads "
              f"(WB {dom['wb']}, WT {dom['wt']}), and grows over WB in "
              f"{sum(1 for k in ks if data[k]['proactive']['ROBHead->SBHead'] > data[k]['wb']['ROBHead->SBHead'])}"
              f" of {len(ks)}",
              "- paper: bodytrack and streamcluster have the highest increase in remote write "
              "latency; ours, largest increases (ns): " +
              ", ".join(f"{k} {inc[k]:.0f}" for k in top(inc, 3)),
              f"- paper: WT's axis spans 10x the others'; ours: WT's total over WB's, mean "
              f"{wt_wb:.1f}x"]
    lines += R.note()
    plot = {"kind": "stacked", "ylabel": "ns per remote store", "categories": ks,
            "panels": {p: {name: [data[k][p][name] for k in ks] for _, name in PARTS}
                       for p in protos}}
    return Table("fig16", "Fig. 16: remote store latency breakdown", lines, data, plot)


# ---- compression -------------------------------------------------------------------

def compression(R):
    ks = R.kernels([("proactive", "")])
    ks = [k for k in ks if R.get(k, "proactive").t("keeper/dump_bytes")]
    if not ks:
        raise Missing("no <kernel>-proactive.h5 with dumps")
    rows, data = [], {}
    for k in ks:
        i = R.get(k, "proactive")
        comp, raw, ent = i.t("keeper/dump_bytes"), i.t("keeper/dump_raw_bytes"), \
            i.t("keeper/dump_entries")
        data[k] = {"entries": ent, "raw_bytes": raw, "compressed_bytes": comp,
                   "x_records": raw / comp, "x_entries24": ent * ENTRY_BYTES / comp,
                   "chunks": i.t("keeper/dump_chunks"),
                   "lu_compressed_bytes": i.t("lu/dump_compressed_bytes")}
        rows.append([k, ent, f"{raw / 1e6:.2f}", f"{comp / 1e6:.3f}", data[k]["chunks"],
                     f"{data[k]['x_records']:.2f}", f"{data[k]['x_entries24']:.2f}"])
    a32 = mean(v["x_records"] for v in data.values())
    a24 = mean(v["x_entries24"] for v in data.values())
    rows.append(["**average**", "", "", "", "", f"**{a32:.2f}**", f"**{a24:.2f}**"])
    rows.append(["geometric mean", "", "", "", "", f"{gmean(v['x_records'] for v in data.values()):.2f}",
                 f"{gmean(v['x_entries24'] for v in data.values()):.2f}"])
    rows.append(["paper (§IV-E, gzip -9)", "", "", "", "", "", f"{PAPER_COMPRESSION:.1f}"])
    lines = md_table(["workload", "entries dumped", "records (MB)", "compressed (MB)", "chunks",
                      "x (32 B records, byte planes)", "x (24 B an entry, paper's accounting)"],
                     rows)
    lines += R.note()
    plot = {"kind": "bars", "ylabel": "compression factor", "categories": ks + ["average"],
            "series": {"32 B records": [data[k]["x_records"] for k in ks] + [a32],
                       "24 B entries": [data[k]["x_entries24"] for k in ks] + [a24]},
            "paper": {"24 B entries": PAPER_COMPRESSION}}
    data = {"rows": data, "average": {"x_records": a32, "x_entries24": a24}}
    return Table("compression", "Log compression (zlib level 9, proactive)", lines, data, plot)


# ---- traffic -----------------------------------------------------------------------

def wire_bytes(info):
    return sum(v for k, v in info.tot.items() if k.startswith("port/tx_bytes_"))


def traffic(R):
    ks = R.kernels([("wb", "")])
    if not ks:
        raise Missing("no <kernel>-wb.h5")
    protos = [p for p in PROTOCOLS if all(R.get(k, p) for k in ks)]
    rows, data = [], {}
    for k in ks:
        wb = R.get(k, "wb")
        base = wire_bytes(wb)
        rs = wb.core.get("remote_stores", 0) / wb.core.get("instructions", 1) * 1e3
        d = {"remote_stores_per_kinstr": rs, "wb_MB": base / 1e6,
             "over_wb": {p: wire_bytes(R.get(k, p)) / base for p in protos}}
        pa = R.get(k, "proactive")
        if pa:
            repl = pa.t("port/tx_bytes_repl")
            n = pa.core.get("remote_stores", 0)
            d["proactive"] = {"repl_share": repl / wire_bytes(pa),
                              "repl_bytes_per_store": repl / n if n else float("nan"),
                              **{m: pa.t("port/tx_" + m) for m in
                                 ("repl", "repl_ack", "val", "log_dump", "log_sync")}}
        data[k] = d
        row = [k, f"{rs:.1f}", f"{base / 1e6:.1f}"] + [f"{d['over_wb'][p]:.2f}" for p in protos]
        if pa:
            q = d["proactive"]
            row += [f"{100 * q['repl_share']:.0f} %", f"{q['repl_bytes_per_store']:.0f}",
                    f"{q['repl']} / {q['repl_ack']} / {q['val']} / {q['log_dump']}"]
        else:
            row += ["", "", ""]
        rows.append(row)
    lines = md_table(["workload", "remote stores / 1000 instr. (WB)", "WB bytes (MB)"] +
                     [f"{p} / WB" for p in protos] +
                     ["proactive: replication class share", "proactive: repl. bytes per "
                      "remote store", "proactive: REPL / REPL_ACK / VAL / log dump msgs"], rows)
    lines += ["", "(bytes on the wire, all classes, sent by every node; the paper gives no "
              "traffic figure)"] + R.note()
    plot = {"kind": "bars", "ylabel": "bytes on the wire / WB", "categories": ks,
            "series": {p: [data[k]["over_wb"][p] for k in ks] for p in protos}}
    return Table("traffic", "CXL traffic by protocol", lines, data, plot)


# ---- Fig. 18 -----------------------------------------------------------------------

def fig18(R):
    ks = R.kernels([("proactive", ""), ("proactive", "nr2"), ("proactive", "nr4")])
    if not ks:
        raise Missing("no <kernel>-proactive-nr2.h5 / -nr4.h5 with -proactive.h5")
    rows, data = [], {}
    for k in ks:
        t3 = R.get(k, "proactive").roi
        t2, t4 = R.get(k, "proactive", "nr2").roi, R.get(k, "proactive", "nr4").roi
        wb = R.get(k, "wb")
        data[k] = {"nr2": t2 / t3, "nr4": t4 / t3, "nr2_wb": t2 / wb.roi if wb else None,
                   "nr3_us": t3 / 1e6}
        rows.append([k, f"{t3 / 1e6:.1f}", f"{t2 / t3:.3f}", f"{t4 / t3:.3f}",
                     f2(data[k]["nr2_wb"])])
    avg = {c: mean(v[c] for v in data.values() if v[c] is not None) for c in ("nr2", "nr4",
                                                                                "nr2_wb")}
    rows.append(["**average**", "", f"**{avg['nr2']:.3f}**", f"**{avg['nr4']:.3f}**",
                 f"**{f2(avg['nr2_wb'])}**"])
    rows.append(["paper (§VII-D)", "", f"{PAPER_FIG18[2]:.2f}", f"{PAPER_FIG18[4]:.2f}",
                 f"{PAPER_FIG18['nr2_wb']:.2f}"])
    lines = md_table(["workload", "N_r = 3 time (us)", "N_r = 2 / N_r = 3", "N_r = 4 / N_r = 3",
                      "N_r = 2 / WB"], rows)
    sp = {k: v["nr4"] / v["nr2"] for k, v in data.items()}
    lines += ["", "- paper: ocean-cp and ocean-ncp are significantly affected; ours, largest "
              "N_r = 4 / N_r = 2: " + ", ".join(f"{k} {sp[k]:.2f}" for k in top(sp, 3))]
    lines += R.note()
    plot = {"kind": "bars", "ylabel": "time / (N_r = 3)", "categories": ks + ["average"],
            "series": {"N_r = 2": [data[k]["nr2"] for k in ks] + [avg["nr2"]],
                       "N_r = 4": [data[k]["nr4"] for k in ks] + [avg["nr4"]]},
            "paper": {"N_r = 2": PAPER_FIG18[2], "N_r = 4": PAPER_FIG18[4]}}
    data = {"rows": data, "average": avg}
    return Table("fig18", "Fig. 18: replication factor (proactive)", lines, data, plot)


# ---- Fig. 19 -----------------------------------------------------------------------

def fig19(R):
    small = sorted({int(v[2:]) for (_, _, v) in R.by if v.startswith("cn")})
    ks = R.kernels([("wb", ""), ("proactive", "")] +
                   [(p, f"cn{c}") for c in small for p in ("wb", "proactive")])
    if not small or not ks:
        raise Missing("no <kernel>-{wb,proactive}-cn<C>.h5 with the machine's runs")
    full = R.get(ks[0], "wb").cns
    cns = small + [full]

    def get(k, p, c):
        return R.get(k, p, "" if c == full else f"cn{c}")

    rows, data = [], {}
    for k in ks:
        ref = get(k, "wb", full).roi
        d = {p: {c: get(k, p, c).roi / ref for c in cns} for p in ("wb", "proactive")}
        d["speedup"] = {p: get(k, p, cns[0]).roi / get(k, p, full).roi for p in ("wb",
                                                                                  "proactive")}
        data[k] = d
        rows.append([k] + [f"{d[p][c]:.2f}" for p in ("wb", "proactive") for c in cns] +
                    [f"{d['speedup'][p]:.2f}" for p in ("wb", "proactive")])
    avg = {p: mean(d["speedup"][p] for d in data.values()) for p in ("wb", "proactive")}
    avgn = {p: {c: mean(d[p][c] for d in data.values()) for c in cns} for p in ("wb", "proactive")}
    rows.append(["**average**"] + [f"{avgn[p][c]:.2f}" for p in ("wb", "proactive") for c in cns]
                + [f"**{avg[p]:.2f}**" for p in ("wb", "proactive")])
    paper_row = ["paper (§VII-D)"] + [""] * (2 * len(cns))
    if cns[0] * 4 == full:
        paper_row += [f"{PAPER_FIG19['wb']:.2f}", f"{PAPER_FIG19['proactive']:.2f}"]
    else:
        paper_row += [f"({PAPER_FIG19['wb']:.2f} for 4x CNs)",
                      f"({PAPER_FIG19['proactive']:.2f})"]
    rows.append(paper_row)
    lines = md_table(["workload"] + [f"{p} {c} CNs" for p in ("WB", "proactive") for c in cns] +
                     [f"WB speed-up {cns[0]} -> {full}", f"proactive speed-up {cns[0]} -> {full}"],
                     rows)
    lines += ["", f"(time over WB on {full} CNs; the problem size is the same on every machine)"]
    lines += R.note()
    plot = {"kind": "bars", "ylabel": f"time / WB on {full} CNs", "categories": ks,
            "series": {f"{p} {c} CNs": [data[k][p][c] for k in ks]
                       for p in ("wb", "proactive") for c in cns}}
    data = {"rows": data, "average_speedup": avg, "cns": cns}
    return Table("fig19", "Fig. 19: scalability with the number of CNs", lines, data, plot)


# ---- the Logging Unit's SRAM -------------------------------------------------------

def sram(R):
    """proactive (and proactive_noc, when run) with a larger SRAM Log Buffer."""
    sizes = sorted({int(v[4:]) for (_, p, v) in R.by if p == "proactive" and v.startswith("sram")})
    ks = R.kernels([("wb", ""), ("parallel", ""), ("proactive", "")] +
                   [("proactive", f"sram{b}") for b in sizes])
    if not sizes or not ks:
        raise Missing("no <kernel>-proactive-sram<B>.h5 with -wb, -parallel and -proactive.h5")
    # proactive_noc's columns when any kernel has its runs (blank where missing)
    protos = ["proactive"] + (["proactive_noc"] if any(
        R.get(k, "proactive_noc") and R.get(k, "proactive_noc", f"sram{b}")
        for k in ks for b in sizes) else [])

    def nack(i):
        sent = i.t("diktamo/repls_sent")
        return i.t("diktamo/nacks_received") / sent if sent else float("nan")

    rows, data = [], {}
    for k in ks:
        wb = R.get(k, "wb")
        d = {"parallel": R.get(k, "parallel").roi / wb.roi}
        for p in protos:
            if not (R.get(k, p) and all(R.get(k, p, f"sram{b}") for b in sizes)):
                continue
            d[p] = {"4096": {"time": R.get(k, p).roi / wb.roi, "nack": nack(R.get(k, p))}}
            for b in sizes:
                i = R.get(k, p, f"sram{b}")
                d[p][str(b)] = {"time": i.roi / wb.roi, "nack": nack(i)}
        data[k] = d
        rows.append([k, f"{d['parallel']:.2f}"] +
                    [c for p in protos for b in ["4096"] + [str(x) for x in sizes]
                     for c in ((f"{d[p][b]['time']:.2f}", f"{100 * d[p][b]['nack']:.1f} %")
                               if p in d else ("", ""))])
    avg = {p: {b: mean(v[p][b]["time"] for v in data.values() if p in v)
               for b in ["4096"] + [str(x) for x in sizes]} for p in protos}
    rows.append(["**average**", f"**{mean(v['parallel'] for v in data.values()):.2f}**"] +
                [c for p in protos for b in ["4096"] + [str(x) for x in sizes]
                 for c in (f"**{avg[p][b]:.2f}**", "")])
    prow = ["paper (§VII-A/B, 4 KB)", f"{PAPER['parallel']:.2f}"]
    for p in protos:
        prow += [f"{PAPER['proactive']:.2f}" if p == "proactive" else "slightly above proactive",
                 ""] + ["", ""] * len(sizes)
    rows.append(prow)
    hdr = ["workload", "parallel / WB"]
    for p in protos:
        for b in [4096] + sizes:
            hdr += [f"{p} / WB ({b // 1024} KB)", f"refused ({b // 1024} KB)"]
    lines = md_table(hdr, rows)
    if len(protos) > 1:
        n = sum(1 for v in data.values() if "proactive_noc" in v)
        lines_note = [f"(proactive_noc's average over the {n} kernels that have its runs)"]
    else:
        lines_note = []
    lines += lines_note
    lines += ["", "(diktamo.sram_bytes: the Logging Unit's SRAM Log Buffer, Table II's 4 KB "
              "= 170 entries of 24 B; a full unit refuses an early REPL, \"refused\" = "
              "diktamo/nacks_received / diktamo/repls_sent, and the store asks again at the "
              "SB head)"] + R.note()
    plot = {"kind": "bars", "ylabel": "time / WB", "categories": ks,
            "series": dict({"parallel": [data[k]["parallel"] for k in ks]},
                           **{f"{p} {b // 1024} KB": [data[k][p][str(b)]["time"] if p in data[k]
                                                       else None for k in ks]
                              for p in protos for b in [4096] + sizes}),
            "paper": {"proactive 4 KB": PAPER["proactive"]}}
    data = {"rows": data, "average": avg}
    return Table("sram", "Logging Unit SRAM size and proactive's time", lines, data, plot)


# ---- Fig. 15, Fig. 17 / Table III, the oracle -------------------------------------

# §VII-B: "on average, less than 29K lines are Owned, although, in YCSB, such
# number reaches 119K"; the caches of a CN hold at most 163K lines.
PAPER_FIG15_AVG, PAPER_FIG15_YCSB, PAPER_CN_LINES = 29_000, 119_000, 163_000
STEPS = [("rec_begin_ps", "RecBegin"), ("cm_mn_ps", "CM<->MN"), ("trav_dir_ps", "TravDir"),
         ("mn_lu_ps", "MN<->LU"), ("trav_lu_ps", "TravLU"), ("mn_merge_ps", "MNMerge"),
         ("rec_end_ps", "RecEnd")]
GROUPS = {"Sync": ("RecBegin", "CM<->MN", "MN<->LU", "RecEnd"), "TravDir": ("TravDir",),
          "Merge": ("TravLU", "MNMerge")}
HOLD_E, HOLD_M = 1, 2   # cn/held_at_failure_state (src/node/cn_node.c)


def fail_time(info):
    """The failure's simulated time (the first /failures row), ps."""
    f = info.run.failures
    return int(f[0]["time_ps"]) if f else None


def held_states(info, node):
    """The failed CN's lines by how it held them (cn/held_at_failure_state)."""
    v = info.run.nodes.get(node, {}).get("cn/held_at_failure_state")
    if v is None:
        return {}
    vals, counts = __import__("numpy").unique(v, return_counts=True)
    return {int(a): int(b) for a, b in zip(vals, counts)}


def fail_kernels(R, proto):
    return [k for k in ORDER + sorted({k for (k, _) in R.fail_all} - set(ORDER))
            if (k, proto) in R.fail_all]


def fig15(R):
    ks = [k for k in fail_kernels(R, "proactive") if R.get(k, "proactive", "fail")]
    if not ks:
        raise Missing("no complete <kernel>-proactive-fail.h5")
    rows, data = [], {}
    for k in ks:
        i = R.get(k, "proactive", "fail")
        owned = i.t("home/owned_at_failure_lines")
        hs = held_states(i, 0)
        dirty = hs.get(HOLD_M, 0)
        d = {"t_f_us": fail_time(i) / 1e6, "owned": owned, "dirty": dirty,
             "exclusive": owned - dirty, "held_E": hs.get(HOLD_E, 0),
             "held_S": hs.get(0, 0), "lost_words": i.t("cn/lost_words"),
             "recovered_lines": i.t("recovery/lines"),
             "words_from_lu": i.t("recovery/words_from_lu"),
             "words_from_mn_logs": i.t("recovery/words_from_mn_logs"),
             "words_kept": i.t("recovery/words_kept")}
        data[k] = d
        rows.append([k, f"{d['t_f_us']:.0f}", owned, dirty, d["exclusive"], d["held_E"],
                     d["held_S"], d["lost_words"], d["words_from_lu"], d["words_from_mn_logs"],
                     d["words_kept"]])
    avg = mean(v["owned"] for v in data.values())
    rows.append(["**average**", "", f"**{avg:.0f}**", f"{mean(v['dirty'] for v in data.values()):.0f}",
                 f"{mean(v['exclusive'] for v in data.values()):.0f}", "", "", "", "", "", ""])
    rows.append(["paper (§VII-B)", "12500", f"< {PAPER_FIG15_AVG} (ycsb {PAPER_FIG15_YCSB})",
                 "", "", "", "", "", "", "", ""])
    lines = md_table(["workload", "T_f (us)", "owned lines (directory, Fig. 15)",
                      "dirty (M in CN 0's caches)", "exclusive (owned - dirty)",
                      "E in CN 0's caches", "S in CN 0's caches", "unsaved words lost with CN 0",
                      "words recovered from LUs", "from MN logs", "kept (memory's value)"], rows)
    lines += ["", f"(CN 0 fail-stops at T_f under proactive; a CN's caches hold at most "
              f"{PAPER_CN_LINES // 1000}K lines in the paper; owned = home/owned_at_failure_lines "
              "over the MNs, dirty = CN 0's lines in M, cn/held_at_failure_state = 2)"]
    if "ycsb" in data:
        lines.append(f"- paper: YCSB owns the most, 119K; ours: ycsb {data['ycsb']['owned']}, "
                     "largest " + ", ".join(f"{k} {data[k]['owned']}" for k in
                                            top({k: v['owned'] for k, v in data.items()}, 3)))
    plot = {"kind": "stacked", "ylabel": "lines owned by CN 0", "categories": ks,
            "panels": {"proactive": {"dirty": [data[k]["dirty"] for k in ks],
                                     "exclusive": [data[k]["exclusive"] for k in ks]}}}
    return Table("fig15", "Fig. 15: lines owned by the crashed CN 0, dirty vs exclusive",
                 lines, {"rows": data, "average_owned": avg}, plot)


def fig17(R):
    protos = [p for p in ("proactive", "baseline") if fail_kernels(R, p)]
    if not protos:
        raise Missing("no <kernel>-<protocol>-fail.h5")
    rows, data = [], {}
    for p in protos:
        for k in fail_kernels(R, p):
            i = R.get(k, p, "fail")
            if i is None or not i.t("recovery/rounds"):
                continue
            st = {name: i.t("recovery/" + key) for key, name in STEPS}
            tot = sum(st.values())
            gr = {g: sum(st[n] for n in ns) for g, ns in GROUPS.items()}
            data.setdefault(p, {})[k] = {"steps_ns": {n: v / 1e3 for n, v in st.items()},
                                         "total_ns": tot / 1e3,
                                         "share": {g: v / tot if tot else 0 for g, v in gr.items()},
                                         "t_f_us": fail_time(i) / 1e6,
                                         "owned": i.t("home/owned_at_failure_lines"),
                                         "lu_scanned": i.t("lu/recovery_scanned_entries"),
                                         "mn_log_scanned": i.t("recovery/mn_log_entries_scanned"),
                                         "mn_inflated": i.t("recovery/mn_log_bytes_inflated"),
                                         "rounds": i.t("recovery/rounds")}
            d = data[p][k]
            rows.append([k, p, f"{d['t_f_us']:.0f}"] + [f"{st[n] / 1e3:.0f}" for _, n in STEPS] +
                        [f"{tot / 1e3:.0f}"] + [f"{100 * d['share'][g]:.0f} %" for g in GROUPS] +
                        [d["lu_scanned"], d["mn_log_scanned"]])
    if not data:
        raise Missing("no -fail run recovered")
    for p in data:
        av = {g: mean(v["share"][g] for v in data[p].values()) for g in GROUPS}
        rows.append([f"**average ({p})**", "", ""] + [""] * len(STEPS) +
                    [f"{mean(v['total_ns'] for v in data[p].values()):.0f}"] +
                    [f"**{100 * av[g]:.0f} %**" for g in GROUPS] + ["", ""])
    rows.append(["paper (§VII-C)", "", "12500"] + [""] * (len(STEPS) + 1) +
                 ["small", "small", "most (\"the very large fraction\")", "", ""])
    lines = md_table(["workload", "protocol", "T_f (us)"] + [f"{n} (ns)" for _, n in STEPS] +
                     ["total (ns)"] + [f"{g} share" for g in GROUPS] +
                     ["LU entries scanned (TravLU)", "MN log entries scanned (MNMerge)"], rows)
    dom = {p: sum(1 for v in data[p].values() if max(v["share"], key=v["share"].get) == "Merge")
           for p in data}
    lines += ["", "(Table III's steps on the Configuration Manager, recovery/*_ps; TravDir, "
              "MN<->LU, TravLU and MNMerge are the slowest MN's, the critical path; Sync = "
              "RecBegin + CM<->MN + MN<->LU + RecEnd, Merge = TravLU + MNMerge)",
              "- paper: Merge dominates in most cases; ours: Merge is the largest group in " +
              ", ".join(f"{dom[p]} of {len(data[p])} ({p})" for p in data)]
    cats = list(data[protos[0]]) if protos[0] in data else []
    plot = {"kind": "stacked", "ylabel": "share of the recovery", "categories": cats,
            "panels": {p: {g: [data[p][k]["share"][g] if k in data[p] else 0 for k in cats]
                           for g in GROUPS} for p in data}}
    return Table("fig17", "Fig. 17 / Table III: recovery latency breakdown (CN 0 fails)",
                 lines, data, plot)


def short(status):
    """A run's status, an error cut after its first clause (the table stays readable)."""
    m = re.match(r"^(error: [^:]+: node \d+)", status)
    return m.group(1) + " ..." if m else status


def oracle(R):
    if not R.fail_all:
        raise Missing("no <kernel>-<protocol>-fail.h5")
    rows, data = [], {}
    for (k, p), i in sorted(R.fail_all.items(), key=lambda kv: (kv[0][1], ORDER.index(kv[0][0])
                                                                 if kv[0][0] in ORDER else 99)):
        d = {"status": i.status, "checks": i.t("image/checks"), "words": i.t("image/words"),
             "diff_words": i.t("image/diff_words"), "in_transit": i.t("image/in_transit_lines"),
             "unrecoverable_words": i.t("recovery/unrecoverable_words"),
             "t_f_us": (fail_time(i) or 0) / 1e6}
        data[f"{k}-{p}"] = d
        ok = d["diff_words"] == 0 and d["checks"] > 0 and i.status.startswith("complete")
        rows.append([k, p, f"{d['t_f_us']:.0f}", short(i.status), d["checks"], d["words"],
                     d["diff_words"], d["unrecoverable_words"], "pass" if ok else "**FAIL**"])
    # runs kept aside under another name, <kernel>-<protocol>-fail-<why>.h5
    for path in sorted(glob.glob(os.path.join(R.dir, "*-fail-*.h5"))):
        name = os.path.basename(path)[:-3]
        k, p, why = name.split("-", 3)[0], name.split("-", 3)[1], name.split("-", 3)[3]
        i = RunInfo(path)
        d = {"status": i.status, "checks": i.t("image/checks"), "words": i.t("image/words"),
             "diff_words": i.t("image/diff_words"),
             "unrecoverable_words": i.t("recovery/unrecoverable_words"),
             "t_f_us": (fail_time(i) or 0) / 1e6}
        data[name] = d
        ok = d["diff_words"] == 0 and d["checks"] > 0 and i.status.startswith("complete")
        rows.append([k, f"{p} ({why})", f"{d['t_f_us']:.0f}", short(i.status), d["checks"], d["words"],
                     d["diff_words"], d["unrecoverable_words"], "pass" if ok else "**FAIL**"])
    lines = md_table(["workload", "protocol", "T_f (us)", "status", "golden-image checks",
                      "words compared", "image/diff_words", "unrecoverable words", "oracle"], rows)
    lines += ["", "(diktamo.oracle: the coherent image of CXL memory against every committed "
              "store, after recovery and at the end; the last check's counts)"]
    return Table("oracle", "Recovery runs: golden-image oracle", lines, data, None)


TABLES = {"fig10": fig10, "fig11": fig11, "fig13": fig13, "fig14": fig14, "fig16": fig16,
          "compression": compression, "traffic": traffic, "fig18": fig18, "fig19": fig19,
          "sram": sram, "fig15": fig15, "fig17": fig17, "oracle": oracle}


def header(R):
    """The machine and each kernel's size, from the runs' configurations."""
    sizes, machines = {}, set()
    for (k, p, v), i in R.by.items():
        text = str(i.run.attrs.get("config", ""))
        sz = cxlsim_h5._config_value(text, "workload.size") or "0"
        sizes.setdefault(k, set()).add(sz)
        if v == "":
            machines.add((i.cns, i.mns))
    ks = [k for k in ORDER if k in sizes] + sorted(k for k in sizes if k not in ORDER)
    m = ", ".join(f"{c} CNs x 4 cores + {n} MNs" for c, n in sorted(machines))
    return ["# DIKTAMO evaluation (papers/diktamo.md §VII) from " + R.dir, "",
            f"Machine: {m} (inputs/wb-16x4.ini, Table II). Workload sizes (workload.size; "
            "0 = the kernel's default), the same for every protocol: " +
            ", ".join(f"{k} {'/'.join(sorted(sizes[k]))}" for k in ks) + "."]


# ---- figures -----------------------------------------------------------------------

def png(table, d):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    p = table.plot
    cats = p["categories"]
    if p["kind"] == "stacked":
        panels = p["panels"]
        fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4.2), squeeze=False)
        for ax, (proto, parts) in zip(axes[0], panels.items()):
            bottom = [0.0] * len(cats)
            for name, vals in parts.items():
                ax.bar(cats, vals, bottom=bottom, label=name)
                bottom = [b + v for b, v in zip(bottom, vals)]
            ax.set_title(proto)
            ax.set_ylabel(p["ylabel"])
            ax.tick_params(axis="x", rotation=60)
        axes[0][0].legend(fontsize=7)
    else:
        series = p["series"]
        fig, ax = plt.subplots(figsize=(min(14, max(6, 0.3 * len(cats) * len(series))), 4.5))
        w = 0.8 / len(series)
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for j, (name, vals) in enumerate(series.items()):
            xs = [i + (j - (len(series) - 1) / 2) * w for i in range(len(cats))]
            c = colors[j % len(colors)]
            ax.bar(xs, [v if v is not None else 0 for v in vals], w, label=name, color=c)
            if name in p.get("paper", {}):
                ax.axhline(p["paper"][name], color=c, linestyle="--", linewidth=1,
                           label=f"paper: {name}")
        ax.set_xticks(range(len(cats)))
        ax.set_xticklabels(cats, rotation=60, ha="right")
        ax.set_ylabel(p["ylabel"])
        ax.legend(fontsize=7, ncol=2)
    fig.suptitle(table.title, fontsize=10)
    fig.tight_layout()
    os.makedirs(d, exist_ok=True)
    out = os.path.join(d, table.name + ".png")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    try:  # a 64-colour palette: a quarter of the bytes, small enough for doc/
        from PIL import Image
        Image.open(out).convert("RGB").quantize(colors=64).save(out, optimize=True)
    except ImportError:
        pass
    return out


# ---- the script --------------------------------------------------------------------

def main(argv):
    args = argv[1:]
    want_json = "--json" in args
    pngdir = None
    if "--png" in args:
        i = args.index("--png")
        if i + 1 >= len(args):
            print("diktamo_tables.py: --png needs a directory", file=sys.stderr)
            return 2
        pngdir = args[i + 1]
        del args[i:i + 2]
    args = [a for a in args if a != "--json"]
    if len(args) != 2 or args[0] not in list(TABLES) + ["all"]:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    which, d = args
    if not os.path.isdir(d):
        print(f"diktamo_tables.py: {d}: not a directory", file=sys.stderr)
        return 2
    R = Runs(d)
    names = list(TABLES) if which == "all" else [which]
    if which == "all" and not want_json:
        print("\n".join(header(R)) + "\n")
    out_json = {}
    for n in names:
        try:
            t = TABLES[n](R)
        except Missing as e:
            if which != "all":
                raise SystemExit(f"diktamo_tables.py {n}: {e}")
            if not want_json:
                print(f"## {n}\n\n(no table: {e})\n")
            continue
        if want_json:
            out_json[n] = t.data
        else:
            if which == "all":
                print(f"## {t.title}\n")
            print("\n".join(t.lines))
            if which == "all":
                print()
        if pngdir and t.plot:
            print(f"wrote {png(t, pngdir)}", file=sys.stderr)
    if want_json:
        print(json.dumps(out_json[which] if which != "all" else out_json, indent=1,
                         sort_keys=True, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
