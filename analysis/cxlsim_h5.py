"""Load one cxlsim run file (HDF5) into plain Python objects.

The layout is the one written by src/stats/h5out.c and documented in
include/cxlsim/h5out.h (README, "Output")::

    import cxlsim_h5
    run = cxlsim_h5.load("out.h5")
    run.attrs["status"]            # 'complete', 'complete-with-failures', 'error: ...'
    run.engine["events"]           # numpy array over ranks
    run.nodes[3]["l1/hits"]        # int; histograms are Hist objects
    run.failures[0]["cause"]       # 'injected', 'silent', 'excluded'

As a script it prints a short summary of a file::

    /usr/bin/python3 analysis/cxlsim_h5.py out.h5

Needs h5py and numpy (Debian: python3-h5py), hence /usr/bin/python3.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import h5py
import numpy as np

FORMAT_VERSION = 1  # the newest layout this reader understands


@dataclass
class Hist:
    """A log2 histogram: bucket 0 counts 0, bucket i >= 1 counts [2^(i-1), 2^i).

    Values past the last bucket were counted in it, so the last bucket is
    open-ended.
    """

    buckets: np.ndarray
    count: int
    sum: int
    min: int
    max: int

    @property
    def lows(self) -> np.ndarray:
        """Lower bound of each bucket: 0, 1, 2, 4, 8, ..."""
        i = np.arange(len(self.buckets), dtype=np.float64)
        return np.where(i == 0, 0.0, np.exp2(i - 1))

    @property
    def mean(self) -> float:
        return self.sum / self.count if self.count else float("nan")


@dataclass
class Run:
    path: str
    attrs: dict                     # root attributes as str / int / float
    engine: dict                    # figure name -> numpy array over ranks
    engine_units: dict              # figure name -> units
    node_type: list                 # node id -> type ("cn", "mn", ...)
    node_alive: np.ndarray          # node id -> bool
    node_rank: np.ndarray           # node id -> hosting rank
    nodes: dict                     # node id -> {"component/name": int | Hist}
    units: dict = field(default_factory=dict)         # "component/name" -> units
    descriptions: dict = field(default_factory=dict)  # "component/name" -> text
    failures: list = field(default_factory=list)      # one dict per /failures row

    def total(self, stat: str) -> int:
        """A counter summed over the nodes that have it (dead nodes may not)."""
        return sum(int(c[stat]) for c in self.nodes.values()
                   if stat in c and not isinstance(c[stat], Hist))


def _py(value):
    """numpy scalars and bytes as the plain Python value."""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, np.generic):
        return value.item()
    return value


def _read_stat(dset: h5py.Dataset):
    if dset.shape == ():
        return int(dset[()])
    a = dset.attrs
    return Hist(buckets=dset[()], count=int(a["count"]), sum=int(a["sum"]),
                min=int(a["min"]), max=int(a["max"]))


def load(path: str) -> Run:
    with h5py.File(path, "r") as f:
        attrs = {k: _py(v) for k, v in f.attrs.items()}
        version = attrs.get("format_version", 0)
        if version > FORMAT_VERSION:
            raise ValueError(f"{path}: format_version {version} is newer than this "
                             f"reader ({FORMAT_VERSION})")

        engine, engine_units = {}, {}
        for name, dset in f["engine"].items():
            engine[name] = dset[()]
            engine_units[name] = _py(dset.attrs["units"])

        g = f["nodes"]
        run = Run(path=path, attrs=attrs, engine=engine, engine_units=engine_units,
                  node_type=list(g["type"].asstr()[()]),
                  node_alive=g["alive"][()].astype(bool),
                  node_rank=g["rank"][()], nodes={})

        # Groups track creation order, so h5py lists counters in the order the
        # model registered them (within each component).
        for key, node in g.items():
            if not key.isdigit():
                continue
            stats = {}
            for comp_name, comp in node.items():
                for stat_name, dset in comp.items():
                    key2 = f"{comp_name}/{stat_name}"
                    stats[key2] = _read_stat(dset)
                    run.units.setdefault(key2, _py(dset.attrs["units"]))
                    run.descriptions.setdefault(key2, _py(dset.attrs["description"]))
            run.nodes[int(key)] = stats

        rows = f["failures"][()]
        run.failures = [{name: _py(row[name]) for name in rows.dtype.names} for row in rows]
    return run


def _time(ps: int) -> str:
    for unit, scale in (("s", 10**12), ("ms", 10**9), ("us", 10**6), ("ns", 10**3)):
        if ps >= scale:
            return f"{ps / scale:.3f} {unit}"
    return f"{ps} ps"


def summary(run: Run, max_counters: int = 20) -> str:
    a = run.attrs
    out = [
        f"{run.path}: model {a.get('model')}, status {a.get('status')!r} "
        f"(exit {a.get('exit_status')}), cxlsim {a.get('cxlsim_version')}",
        f"  {a.get('nranks')} ranks, {a.get('nnodes')} nodes "
        f"({int(run.node_alive.sum())} alive), end {_time(a.get('end_time_ps', 0))}, "
        f"reached {_time(a.get('final_time_ps', 0))}, wall {a.get('wall_seconds', 0):.2f} s, "
        f"seed {a.get('seed')}, checksum {a.get('checksum', 0):#018x}",
    ]
    if run.engine:
        out.append("engine (total over ranks, max rank):")
        for name, col in run.engine.items():
            unit = run.engine_units.get(name, "")
            total = col.sum() if len(col) else 0
            peak = col.max() if len(col) else 0
            out.append(f"  {name:<24} {total:>14.6g} {unit:<8} max {peak:.6g}")
    out.append(f"failures: {len(run.failures)}")
    for r in run.failures:
        out.append(f"  node {r['node']} (rank {r['rank']}) at {_time(r['time_ps'])}, "
                   f"agreed {r['detected_wall_s']:.2f} s after start, "
                   f"epoch {r['epoch']}: {r['cause']}")

    names = list(dict.fromkeys(k for stats in run.nodes.values() for k in stats))
    if names:
        out.append("statistics (total over nodes):")
        for name in names[:max_counters]:
            vals = [s[name] for s in run.nodes.values() if name in s]
            unit = run.units.get(name, "")
            if isinstance(vals[0], Hist):
                count = sum(h.count for h in vals)
                total = sum(h.sum for h in vals)
                mean = total / count if count else float("nan")
                out.append(f"  {name:<32} {count:>14} samples, mean {mean:.6g} {unit}")
            else:
                out.append(f"  {name:<32} {sum(int(v) for v in vals):>14} {unit}")
        if len(names) > max_counters:
            out.append(f"  ... and {len(names) - max_counters} more")
    return "\n".join(out)


def main(argv: list) -> int:
    if len(argv) < 2:
        print(f"usage: {argv[0]} RUN.h5 ...", file=sys.stderr)
        return 2
    for path in argv[1:]:
        try:
            print(summary(load(path)))
        except (OSError, KeyError, ValueError) as e:
            print(f"{path}: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
