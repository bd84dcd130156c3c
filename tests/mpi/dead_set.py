#!/usr/bin/python3
"""After ranks were killed: the output records exactly the killed ranks as dead.

  dead_set.py OUT.h5 RANKS [--allow-excluded RANKS]

RANKS is a comma-separated list ("0,1"; "" for none). Asserts that the file
loads, that its status is complete-with-failures (complete when RANKS is
empty), that the failures table lists every node of exactly those ranks and no
other, that /nodes/alive agrees, and that every failure of a killed rank has
cause "silent" (a killed rank cannot have answered, so it cannot have been
"excluded" while alive). Ranks named by --allow-excluded (stopped past the
timeout on purpose) may also be listed, with cause "excluded" or "silent".
Exit status 0 when all holds, 1 with one line saying what did not.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "analysis"))
import cxlsim_h5  # noqa: E402


def ranks_of(text):
    return {int(x) for x in text.split(",") if x != ""}


def main(argv):
    path, killed = argv[1], ranks_of(argv[2])
    allowed = ranks_of(argv[4]) if len(argv) > 4 and argv[3] == "--allow-excluded" else set()
    run = cxlsim_h5.load(path)
    status = str(run.attrs["status"])
    want = "complete-with-failures" if killed else "complete"
    failed = {int(f["rank"]) for f in run.failures}
    if status != want and not (status == "complete-with-failures" and failed <= allowed):
        return f"{path}: status {status!r}, expected {want!r}"
    if not killed <= failed or not failed <= killed | allowed:
        healthy = sorted(failed - killed - allowed)
        return (f"{path}: dead ranks {sorted(failed)}, killed {sorted(killed)}"
                + (f": healthy rank(s) {healthy} declared dead" if healthy else ""))
    for f in run.failures:
        if int(f["rank"]) in killed and f["cause"] != "silent":
            return f"{path}: killed rank {f['rank']} has cause {f['cause']!r}, expected 'silent'"
    for n, r in enumerate(run.node_rank):
        dead = int(r) in failed
        if bool(run.node_alive[n]) == dead:
            return f"{path}: node {n} of rank {int(r)} alive={bool(run.node_alive[n])}"
    if sorted(int(f["node"]) for f in run.failures) != \
            sorted(n for n, r in enumerate(run.node_rank) if int(r) in failed):
        return f"{path}: failures table does not list exactly the dead ranks' nodes"
    return None


if __name__ == "__main__":
    msg = main(sys.argv)
    if msg:
        print("dead_set: " + msg)
        sys.exit(1)
