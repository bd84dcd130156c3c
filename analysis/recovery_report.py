#!/usr/bin/python3
"""recovery_report.py RUN.h5 [--json]

What happened to the compute nodes that failed in a cxlsim memory-system run,
in a few lines: who died and when (and how: --kill, --fail or an outside
kill), the DIKTAMO recovery's seven steps (Table III: RecBegin, CM<->MN,
TravDir, MN<->LU, TravLU, MNMerge, RecEnd) as the Configuration Manager
timed them, the lines the dead CNs owned (Fig. 15: dirty — the recovered
words changed memory — against exclusive), where the recovered words came
from (Logging Units, the MNs' dumped logs, or memory's value kept), and what
the survivors' runtime did (locks taken over, checks waived, the end of the
region of interest). The counters are those of components "recovery",
"home" and "workload" (src/diktamo/recovery.c, src/node/mn_node.c,
src/node/workload.c); nothing is recomputed here.

Needs h5py and numpy (Debian: python3-h5py), hence /usr/bin/python3.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cxlsim_h5  # noqa: E402

STEPS = (("rec_begin_ps", "RecBegin"), ("cm_mn_ps", "CM<->MN"), ("trav_dir_ps", "TravDir"),
         ("mn_lu_ps", "MN<->LU"), ("trav_lu_ps", "TravLU"), ("mn_merge_ps", "MNMerge"),
         ("rec_end_ps", "RecEnd"))


def us(ps):
    return ps / 1e6


def config_value(run, section, key):
    """A key of the effective configuration the run recorded (attribute config)."""
    cur = None
    for line in run.attrs["config"].splitlines():
        line = line.split(";", 1)[0].strip()
        if line.startswith("[") and line.endswith("]"):
            cur = line[1:-1]
        elif cur == section and "=" in line and line.split("=", 1)[0].strip() == key:
            return line.split("=", 1)[1].strip()
    raise KeyError(f"{section}.{key} not in the run's configuration")


def report(run):
    nodes = run.nodes
    cns = int(config_value(run, "system", "cns"))
    total = lambda k: sum(int(s.get(k, 0)) for s in nodes.values())  # noqa: E731
    cm = [n for n, s in nodes.items() if s.get("recovery/rounds", 0)]
    live_cns = [n for n in range(cns) if n in nodes and not any(f["node"] == n for f in run.failures)]
    r = {
        "status": run.attrs["status"],
        "failures": [{"node": f["node"], "rank": f.get("rank"), "time_ps": f["time_ps"],
                      "cause": f.get("cause", "")} for f in run.failures],
        "cm": cm,
        "rounds": total("recovery/rounds"),
        "steps_ps": {name: total("recovery/" + k) for k, name in STEPS},
        "recovery_ps": total("recovery/total_ps"),
        "owned_lines": total("recovery/lines"),
        "owned_dirty": total("recovery/owned_dirty_lines"),
        "owned_exclusive": total("recovery/owned_exclusive_lines"),
        "words_from_lu": total("recovery/words_from_lu"),
        "words_from_mn_logs": total("recovery/words_from_mn_logs"),
        "words_kept": total("recovery/words_kept"),
        "unrecoverable_words": total("recovery/unrecoverable_words"),
        "locks_taken_over": total("workload/locks_taken_over"),
        "checks_waived": total("workload/checks_waived"),
        "roi_end_ps": max((int(nodes[n].get("workload/roi_end_ps", 0)) for n in live_cns), default=0),
        "live_cns": len(live_cns),
    }
    return r


def text(r):
    out = []
    for f in r["failures"]:
        how = {"injected": "its rank killed by --kill", "failed": "--fail: its process lived on",
               "silent": "its rank died: killed from outside or crashed"}.get(f["cause"], f["cause"])
        out.append(f"CN {f['node']} died at T_f = {us(f['time_ps']):.3f} us"
                   f" (rank {f['rank']}, {how})")
    if not r["rounds"]:
        out.append("no DIKTAMO recovery ran (the protocol does not replicate, or nothing failed)")
        return out
    s = r["steps_ps"]
    steps = ", ".join(f"{name} {us(v):.2f}" for name, v in s.items())
    out.append(f"recovery by CM node {','.join(map(str, r['cm']))}, {r['rounds']} round(s),"
               f" {us(r['recovery_ps']):.2f} us: {steps} (us)")
    sync = s["RecBegin"] + s["CM<->MN"] + s["MN<->LU"] + s["RecEnd"]
    merge = s["TravLU"] + s["MNMerge"]
    out.append(f"  grouped as Table III: Sync {us(sync):.2f} us, TravDir {us(s['TravDir']):.2f} us,"
               f" Merge {us(merge):.2f} us")
    out.append(f"lines the dead CN(s) owned: {r['owned_lines']} ({r['owned_dirty']} dirty,"
               f" {r['owned_exclusive']} exclusive)")
    out.append(f"words recovered: {r['words_from_lu']} from Logging Units, {r['words_from_mn_logs']}"
               f" from MN logs ({r['words_kept']} words of those lines kept memory's value)")
    if r["unrecoverable_words"]:
        out.append(f"UNRECOVERABLE: {r['unrecoverable_words']} words whose whole replica group died")
    out.append(f"survivors: {r['live_cns']} CNs ran to the end of the region of interest at"
               f" {us(r['roi_end_ps']):.1f} us; {r['locks_taken_over']} lock(s) of dead threads"
               f" taken over, {r['checks_waived']} result check(s) waived")
    return out


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 1:
        sys.stderr.write(__doc__)
        return 2
    run = cxlsim_h5.load(args[0])
    r = report(run)
    if "--json" in argv:
        print(json.dumps(r, indent=1))
    else:
        for line in text(r):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
