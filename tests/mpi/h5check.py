#!/usr/bin/python3
"""Assertions on cxlsim HDF5 outputs, for the MPI and failure tests.

  h5check.py same A.h5 B.h5 ...      identical checksum and identical counters of
                                     every node (wall-clock figures excluded)
  h5check.py status A.h5 STATUS      root attribute status starts with STATUS
  h5check.py failed A.h5 NODE[,NODE] the failures table lists exactly these nodes
                                     (and they are dead in /nodes/alive)
  h5check.py failtime A.h5 PS        every failure row has time_ps == PS
  h5check.py cause A.h5 CAUSE        every failure row has this cause
  h5check.py events A.h5 MIN         committed events (sum of engine/events) >= MIN
  h5check.py counter A.h5 NODE NAME V the counter NAME ("comp/name") of NODE equals V
  h5check.py less A.h5 B.h5 NODE NAME counter NAME of NODE is smaller in A than in B
Exit status 0 when the assertion holds, 1 with a message otherwise.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "analysis"))
import cxlsim_h5  # noqa: E402


def fail(msg):
    print("h5check: " + msg)
    sys.exit(1)


def counters(run):
    out = {}
    for node, stats in run.nodes.items():
        for name, value in stats.items():
            if isinstance(value, int):
                out[(node, name)] = value
            elif hasattr(value, "buckets"):  # a histogram
                out[(node, name)] = tuple(value.buckets.tolist())
            else:  # a vector
                out[(node, name)] = tuple(value.tolist())
    return out


def main(argv):
    what, path = argv[1], argv[2]
    run = cxlsim_h5.load(path)
    if what == "same":
        ref_sum, ref_c = run.attrs["checksum"], counters(run)
        if not ref_c:
            fail(f"{path}: no counters")
        for other in argv[3:]:
            o = cxlsim_h5.load(other)
            if o.attrs["checksum"] != ref_sum:
                fail(f"checksum {path}={ref_sum:#x} but {other}={o.attrs['checksum']:#x}")
            oc = counters(o)
            if oc != ref_c:
                diff = sorted(k for k in set(oc) | set(ref_c) if oc.get(k) != ref_c.get(k))
                fail(f"counters differ between {path} and {other}: {diff[:5]}")
        print(f"same: {len(argv) - 2} files, checksum {ref_sum:#018x}, {len(ref_c)} counters")
    elif what == "status":
        if not str(run.attrs["status"]).startswith(argv[3]):
            fail(f"{path}: status {run.attrs['status']!r}, expected {argv[3]!r}")
    elif what == "failed":
        want = sorted(int(x) for x in argv[3].split(","))
        got = sorted(int(f["node"]) for f in run.failures)
        if got != want:
            fail(f"{path}: failed nodes {got}, expected {want}")
        for n in want:
            if run.node_alive[n]:
                fail(f"{path}: node {n} failed but is alive in /nodes/alive")
    elif what == "failtime":
        for f in run.failures:
            if int(f["time_ps"]) != int(argv[3]):
                fail(f"{path}: failure time {f['time_ps']}, expected {argv[3]}")
    elif what == "cause":
        for f in run.failures:
            if f["cause"] != argv[3]:
                fail(f"{path}: failure cause {f['cause']!r}, expected {argv[3]!r}")
    elif what == "events":
        total = int(run.engine["events"].sum())
        if total < int(argv[3]):
            fail(f"{path}: {total} events, expected at least {argv[3]}")
    elif what == "counter":
        node, name, want = int(argv[3]), argv[4], int(argv[5])
        got = run.nodes[node].get(name)
        if got != want:
            fail(f"{path}: node {node} {name} = {got}, expected {want}")
    elif what == "less":
        other = cxlsim_h5.load(argv[3])
        node, name = int(argv[4]), argv[5]
        a, b = run.nodes[node][name], other.nodes[node][name]
        if not a < b:
            fail(f"{name} of node {node}: {a} in {path} is not below {b} in {argv[3]}")
        print(f"less: {name} {a} < {b} ({a / b:.3f})")
    else:
        fail("unknown check " + what)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
