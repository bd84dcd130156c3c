#!/usr/bin/python3
"""Checks on memory-system runs where a CN failed (src/node/memsys.c, "Failures").

  memsys_failure.py held A.h5 CN        (a --fail run: the CN's state is in the file)
      the lines the homes recorded as owned by CN at its failure are exactly
      the lines CN held in E or M, plus some of those it had a request pending
      for (a grant already on its way); every word it lost is in an M line of
      that list; prints the counts
  memsys_failure.py lost A.h5 CN OP N   the CN's lost words compare OP (eq, gt) with N
  memsys_failure.py same-owned A.h5 B.h5
      the two runs' homes recorded the same owned lines for the same CNs
  memsys_failure.py survivors A.h5 B.h5
      same checksum and the same counters on every node alive in both
  memsys_failure.py survivors-model A.h5 B.h5
      the same counters on every node alive in both, but for the engine's own
      (engine/*: sends to a node between its T_f and the notice, and the
      notice itself, depend on when the survivors learnt of the failure)
  memsys_failure.py blocked A.h5 OP N   workload/blocked_on_failure summed over CNs
Exit status 0 when the check holds, 1 with a message otherwise.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "analysis"))
import cxlsim_h5  # noqa: E402

HOLD = {0: "S", 1: "E", 2: "M", 3: "pending", 4: "writeback"}


def fail(msg):
    print("memsys_failure: " + msg)
    sys.exit(1)


def owned(run):
    """{(cn, line address)} over every home."""
    out = set()
    for n, st in run.nodes.items():
        addr = st.get("home/owned_at_failure_addr")
        cn = st.get("home/owned_at_failure_cn")
        if addr is None:
            continue
        if len(addr) != len(cn):
            fail(f"{run.path}: node {n}: owned_at_failure_addr and _cn differ in length")
        out |= {(int(c), int(a)) for c, a in zip(cn, addr)}
    return out


def held(run, cn):
    st = run.nodes.get(cn, {})
    if "cn/held_at_failure_addr" not in st:
        fail(f"{run.path}: CN {cn} recorded no state at failure (is it a --fail run?)")
    by = {}
    for a, h in zip(st["cn/held_at_failure_addr"], st["cn/held_at_failure_state"]):
        by.setdefault(HOLD[int(h)], set()).add(int(a))
    return by, st


def check_held(path, cn):
    run = cxlsim_h5.load(path)
    if bool(run.node_alive[cn]):
        fail(f"{path}: CN {cn} is alive")
    by, st = held(run, cn)
    mine = {a for c, a in owned(run) if c == cn}
    em = by.get("M", set()) | by.get("E", set())
    pending = by.get("pending", set())
    if not em <= mine:
        fail(f"{path}: lines CN {cn} held in E/M but no home recorded as owned: "
             f"{sorted(hex(a) for a in em - mine)[:8]}")
    extra = mine - em
    if not extra <= pending:
        fail(f"{path}: lines recorded as owned by CN {cn} it neither held in E/M nor had "
             f"pending: {sorted(hex(a) for a in extra - pending)[:8]}")
    if by.get("writeback", set()) & mine:
        fail(f"{path}: a line whose write-back was in flight is recorded as owned")
    lost = [int(a) for a in st["cn/lost_addr"]]
    mlines = by.get("M", set())
    bad = [a for a in lost if (a & ~63) not in mlines]
    if bad:
        fail(f"{path}: lost words outside CN {cn}'s M lines: {[hex(a) for a in bad[:8]]}")
    if len(lost) != int(st["cn/lost_words"]) or len(st["cn/lost_value"]) != len(lost):
        fail(f"{path}: lost_words, lost_addr and lost_value disagree")
    print(f"CN {cn}: {len(mine)} lines owned at failure = {len(em)} in E/M "
          f"({len(by.get('M', set()))} M) + {len(extra)} granted while pending; "
          f"{len(lost)} words lost in {int(st['cn/lost_lines'])} lines")


def compare(op, got, want, what):
    ok = {"eq": got == want, "gt": got > want, "ge": got >= want}[op]
    if not ok:
        fail(f"{what} = {got}, expected {op} {want}")
    print(f"{what} = {got} ({op} {want})")


def main(argv):
    what = argv[1]
    if what == "held":
        check_held(argv[2], int(argv[3]))
    elif what == "lost":
        run = cxlsim_h5.load(argv[2])
        _, st = held(run, int(argv[3]))
        compare(argv[4], int(st["cn/lost_words"]), int(argv[5]), f"CN {argv[3]} lost words")
    elif what == "same-owned":
        a, b = (owned(cxlsim_h5.load(p)) for p in argv[2:4])
        if a != b:
            fail(f"owned lines differ: only in {argv[2]}: {sorted(a - b)[:5]}, only in "
                 f"{argv[3]}: {sorted(b - a)[:5]}")
        if not a:
            fail("no line was recorded as owned at failure: nothing compared")
        print(f"same {len(a)} owned lines")
    elif what == "survivors":
        a, b = (cxlsim_h5.load(p) for p in argv[2:4])
        if a.attrs["checksum"] != b.attrs["checksum"]:
            fail(f"checksum {a.attrs['checksum']:#x} != {b.attrs['checksum']:#x}")
        alive = [n for n in a.nodes if a.node_alive[n] and b.node_alive[n]]
        for n in alive:
            x, y = a.nodes[n], b.nodes[n]
            diff = sorted(k for k in set(x) | set(y) if str(x.get(k)) != str(y.get(k)))
            if diff:
                fail(f"node {n} differs: {diff[:5]}")
        print(f"survivors identical: {len(alive)} nodes, checksum {a.attrs['checksum']:#x}")
    elif what == "survivors-model":
        a, b = (cxlsim_h5.load(p) for p in argv[2:4])
        alive = [n for n in a.nodes if a.node_alive[n] and b.node_alive[n]]
        ncmp = 0
        for n in alive:
            x, y = a.nodes[n], b.nodes[n]
            keys = [k for k in set(x) | set(y) if not k.startswith("engine/")]
            diff = sorted(k for k in keys if str(x.get(k)) != str(y.get(k)))
            if diff:
                fail(f"node {n} differs: {[(k, x.get(k), y.get(k)) for k in diff[:4]]}")
            ncmp += len(keys)
        print(f"survivors' model state identical: {len(alive)} nodes, {ncmp} statistics")
    elif what == "blocked":
        run = cxlsim_h5.load(argv[2])
        compare(argv[3], run.total("workload/blocked_on_failure"), int(argv[4]),
                "threads blocked on failed threads")
    else:
        fail(f"unknown check {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
