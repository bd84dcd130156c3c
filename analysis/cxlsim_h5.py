"""Load cxlsim run files (HDF5, format 2) into Python objects and pandas DataFrames.

The layout is the one written by src/stats/h5out.c and documented in
include/cxlsim/h5out.h and the README ("Output")::

    import cxlsim_h5
    run = cxlsim_h5.load("out.h5")
    run.attrs["status"]            # 'complete', 'complete-with-failures', 'error: ...'
    run.engine["events"]           # numpy array over ranks
    run.nodes[3]["l1/hits"]        # int; histograms are Hist objects, vectors numpy arrays
    run.nodes[0]["core2/cycles"]   # instanced groups keep their component names
    run.failures[0]["cause"]       # 'injected', 'silent', 'excluded'

    run.frame("core")              # DataFrame: (node, index) rows, one column per counter
    cxlsim_h5.frame("out.h5", "port")        # the same, reading only that group
    cxlsim_h5.series("out.h5", "core")       # time series: time_ps rows, (counter, node, index)
    cxlsim_h5.frames(paths, "core", config=["workload.kernel"])   # many runs, one DataFrame

As a script it prints a short summary of each file::

    /usr/bin/python3 analysis/cxlsim_h5.py out.h5

Needs h5py and numpy (Debian: python3-h5py), and pandas for the DataFrame
functions (python3-pandas), hence /usr/bin/python3. Files of format 1 (cxlsim
before the column-wise layout) are refused with a message saying what to do.
"""

from __future__ import annotations

import configparser
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field

import h5py
import numpy as np

FORMAT_VERSION = 2  # the layout this reader understands


class FormatError(ValueError):
    """The file is not a cxlsim output of the format this reader reads."""


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
class Group:
    """One group of /stats or /series, column-wise, rows ordered by (node, index).

    counters: name -> uint64 array over rows (a series: rows x samples);
    hists: name -> dict of buckets (rows x nbuckets), count, sum, min, max and
    nbuckets (per row, or None when every row has all of them);
    vectors: name -> (values, offsets): row r's values are
    values[offsets[r]:offsets[r + 1]]; absent: name -> row numbers that lack it
    (their entries read 0); columns: every name in file order.
    """

    name: str
    instanced: bool
    node: np.ndarray
    index: np.ndarray
    counters: dict = field(default_factory=dict)
    hists: dict = field(default_factory=dict)
    vectors: dict = field(default_factory=dict)
    absent: dict = field(default_factory=dict)
    columns: list = field(default_factory=list)

    def components(self) -> list:
        """Each row's component name: "core3" for instance 3 of "core"."""
        if self.instanced:
            return [f"{self.name}{i}" for i in self.index.tolist()]
        return [self.name] * len(self.node)


def _py(value):
    """numpy scalars and bytes as the plain Python value."""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, np.generic):
        return value.item()
    return value


def _check_format(path: str, attrs) -> None:
    version = _py(attrs.get("format_version", 0))
    if version == FORMAT_VERSION:
        return
    if isinstance(version, int) and version < FORMAT_VERSION:
        raise FormatError(
            f"{path}: format_version {version} is cxlsim's old per-node layout; this reader "
            f"reads format {FORMAT_VERSION} only: re-run the simulation with this cxlsim "
            f"(its command line and configuration are in the file's attributes "
            f"command_line and config), or read the file with analysis/cxlsim_h5.py "
            f"of the cxlsim that wrote it")
    raise FormatError(
        f"{path}: format_version {version} is newer than this reader ({FORMAT_VERSION}): "
        f"use analysis/cxlsim_h5.py of the cxlsim that wrote the file")


def _read_group(name: str, g: h5py.Group) -> Group:
    """Reads one /stats or /series group: values only, no units (see _read_docs)."""
    grp = Group(name=name, instanced=bool(g.attrs.get("instanced", 0)),
                node=g["node"][()], index=g["index"][()])
    for col, obj in g.items():
        if col in ("node", "index"):
            continue
        grp.columns.append(col)
        a = obj.attrs
        if "absent_rows" in a:
            grp.absent[col] = np.asarray(a["absent_rows"])
        if isinstance(obj, h5py.Dataset):
            grp.counters[col] = obj[()]
        elif _py(a.get("kind")) == "histogram":
            grp.hists[col] = {k: obj[k][()] for k in ("buckets", "count", "sum", "min", "max")}
            grp.hists[col]["nbuckets"] = obj["nbuckets"][()] if "nbuckets" in obj else None
        elif _py(a.get("kind")) == "vector":
            grp.vectors[col] = (obj["values"][()], obj["offsets"][()])
        else:
            raise FormatError(f"{g.name}/{col}: a group that is neither histogram nor vector")
    return grp


def _read_docs(f: h5py.File, where: str = "stats", only: str = None) -> dict:
    """(group, column) -> (units, description) for every column under /where (or /where/only)."""
    docs = {}
    if where not in f:
        return docs
    groups = f[where].items() if only is None else [(only, f[where][only])]
    for gname, g in groups:
        for col, obj in g.items():
            if col in ("node", "index"):
                continue
            a = obj.attrs
            docs[(gname, col)] = (_py(a.get("units", "")), _py(a.get("description", "")))
    return docs


class _DocMap(Mapping):
    """"component/name" -> units (or description), read from the file on first use."""

    def __init__(self, run: "Run", which: int):
        self._run, self._which, self._data = run, which, None

    def _load(self) -> dict:
        if self._data is None:
            self._data = {k: v[self._which] for k, v in self._run._docs().items()}
        return self._data

    def __getitem__(self, key):
        return self._load()[key]

    def __iter__(self):
        return iter(self._load())

    def __len__(self):
        return len(self._load())

    def __repr__(self):
        return repr(self._load())


@dataclass
class Run:
    path: str
    attrs: dict                     # root attributes as str / int / float
    engine: dict                    # figure name -> numpy array over ranks
    engine_units: dict              # figure name -> units
    node_type: list                 # node id -> type ("cn", "mn", ...)
    node_alive: np.ndarray          # node id -> bool
    node_rank: np.ndarray           # node id -> hosting rank
    nodes: dict                     # node id -> {"component/name": int | Hist | array}
    units: Mapping = None           # "component/name" -> units (read on first use)
    descriptions: Mapping = None    # "component/name" -> text (read on first use)
    failures: list = field(default_factory=list)      # one dict per /failures row
    groups: dict = field(default_factory=dict)        # /stats: group name -> Group
    series_time: np.ndarray = None  # /series/time_ps, None without sampling
    series_groups: dict = field(default_factory=dict)  # /series: group name -> Group
    _doc_cache: dict = field(default=None, repr=False)

    def __post_init__(self):
        if self.units is None:
            self.units = _DocMap(self, 0)
        if self.descriptions is None:
            self.descriptions = _DocMap(self, 1)

    def _docs(self) -> dict:
        """"component/name" -> (units, description), from the file, once."""
        if self._doc_cache is None:
            with h5py.File(self.path, "r") as f:
                raw = _read_docs(f)
            self._doc_cache = {}
            for (gname, col), doc in raw.items():
                g = self.groups.get(gname)
                comps = dict.fromkeys(g.components()) if g is not None else {gname: None}
                for comp in comps:
                    self._doc_cache[f"{comp}/{col}"] = doc
        return self._doc_cache

    def total(self, stat: str) -> int:
        """A counter summed over the nodes that have it (dead nodes do not)."""
        return sum(int(c[stat]) for c in self.nodes.values()
                   if stat in c and isinstance(c[stat], int))

    def frame(self, group: str):
        """The counters of one group as a DataFrame (see cxlsim_h5.frame)."""
        return _frame(self.groups, group, self.path, lambda: self._group_docs(group))

    def series(self, group: str, counters=None):
        """The time series of one group as a DataFrame (see cxlsim_h5.series)."""
        return _series_frame(self.series_time, self.series_groups, group, counters, self.path)

    def vector(self, group: str, name: str):
        """One vector statistic as a pandas Series (see cxlsim_h5.vector)."""
        return _vector_series(self.groups, group, name, self.path)

    def _group_docs(self, group: str) -> tuple:
        g = self.groups[group]
        first = g.components()[0] if len(g.node) else group
        docs = self._docs()
        return ({c: docs.get(f"{first}/{c}", ("", ""))[0] for c in g.columns},
                {c: docs.get(f"{first}/{c}", ("", ""))[1] for c in g.columns})


def _hist_rows(h: dict) -> list:
    nb = h["nbuckets"]
    b = h["buckets"]
    return [Hist(buckets=b[r] if nb is None else b[r, :nb[r]], count=c, sum=s, min=lo, max=hi)
            for r, (c, s, lo, hi) in enumerate(zip(h["count"].tolist(), h["sum"].tolist(),
                                                   h["min"].tolist(), h["max"].tolist()))]


def _node_dicts(nnodes: int, groups: dict) -> dict:
    """The format-1 view: node id -> {"component/name": value}, every node present."""
    nodes = {n: {} for n in range(nnodes)}
    for g in groups.values():
        cols = []
        for col in g.columns:
            if col in g.counters:
                vals = g.counters[col].tolist()
            elif col in g.hists:
                vals = _hist_rows(g.hists[col])
            else:
                values, offsets = g.vectors[col]
                vals = [values[offsets[r]:offsets[r + 1]] for r in range(len(g.node))]
            absent = set(g.absent[col].tolist()) if col in g.absent else ()
            cols.append((col, vals, absent))
        for r, (node, comp) in enumerate(zip(g.node.tolist(), g.components())):
            d = nodes.setdefault(node, {})
            prefix = comp + "/"
            for col, vals, absent in cols:
                if r not in absent:
                    d[prefix + col] = vals[r]
    return nodes


def load(path: str) -> Run:
    with h5py.File(path, "r") as f:
        attrs = {k: _py(v) for k, v in f.attrs.items()}
        _check_format(path, attrs)

        engine, engine_units = {}, {}
        for name, dset in f["engine"].items():
            engine[name] = dset[()]
            engine_units[name] = _py(dset.attrs["units"])

        g = f["nodes"]
        groups = {name: _read_group(name, grp) for name, grp in f["stats"].items()}
        series_time, series_groups = None, {}
        if "series" in f:
            series_time = f["series/time_ps"][()]
            series_groups = {name: _read_group(name, grp)
                             for name, grp in f["series"].items() if name != "time_ps"}
        run = Run(path=path, attrs=attrs, engine=engine, engine_units=engine_units,
                  node_type=list(g["type"].asstr()[()]),
                  node_alive=g["alive"][()].astype(bool),
                  node_rank=g["rank"][()],
                  nodes=_node_dicts(int(attrs.get("nnodes", len(g["type"]))), groups),
                  groups=groups, series_time=series_time, series_groups=series_groups)

        rows = f["failures"][()]
        run.failures = [{name: _py(row[name]) for name in rows.dtype.names} for row in rows]
    return run


# ---- pandas -----------------------------------------------------------------

def _pd():
    try:
        import pandas
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise ImportError("cxlsim_h5's DataFrame functions need pandas "
                          "(Debian: apt-get install python3-pandas)") from e
    return pandas


def _no_group(path: str, where: str, group: str, have) -> KeyError:
    return KeyError(f"{path}: no group {group!r} under /{where} (there are: "
                    f"{', '.join(sorted(have)) or 'none'})")


def _rows_index(pd, g: Group):
    return pd.MultiIndex.from_arrays([g.node.astype(np.int64), g.index.astype(np.int64)],
                                     names=["node", "index"])


def _frame(groups: dict, group: str, path: str, docs):
    pd = _pd()
    if group not in groups:
        raise _no_group(path, "stats", group, groups)
    g = groups[group]
    data = {}
    for col in g.columns:
        if col not in g.counters:
            continue
        a = g.counters[col]
        if col in g.absent:
            mask = np.zeros(len(a), dtype=bool)
            mask[g.absent[col]] = True
            data[col] = pd.arrays.IntegerArray(a, mask)  # UInt64 with <NA> where absent
        else:
            data[col] = a
    df = pd.DataFrame(data, index=_rows_index(pd, g))
    if docs is not None:
        units, descriptions = docs()
        df.attrs["units"] = {c: units[c] for c in data}
        df.attrs["descriptions"] = {c: descriptions[c] for c in data}
    return df


def frame(source, group: str, docs: bool = True):
    """The counters of one /stats group as a DataFrame.

    source is a path or a Run. Rows are indexed by (node, index) (index: the
    instance, e.g. the core, 0 for plain groups), one uint64 column per
    counter; a row that lacks a counter reads <NA> (nullable UInt64).
    With docs, df.attrs["units"] and df.attrs["descriptions"] name each
    column's unit and meaning. Given a path, only that group is read.
    """
    if isinstance(source, Run):
        return source.frame(group) if docs else _frame(source.groups, group, source.path, None)
    with h5py.File(source, "r") as f:
        _check_format(source, f.attrs)
        if "stats" not in f or group not in f["stats"]:
            raise _no_group(source, "stats", group, f["stats"] if "stats" in f else ())
        groups = {group: _read_group(group, f["stats"][group])}
        doc = None
        if docs:
            raw = {c: d for (_, c), d in _read_docs(f, only=group).items()}
            doc = ({c: d[0] for c, d in raw.items()}, {c: d[1] for c, d in raw.items()})
    return _frame(groups, group, source, (lambda: doc) if docs else None)


def _vector_series(groups: dict, group: str, name: str, path: str):
    pd = _pd()
    if group not in groups:
        raise _no_group(path, "stats", group, groups)
    g = groups[group]
    if name not in g.vectors:
        raise KeyError(f"{path}: /stats/{group} has no vector {name!r}")
    values, offsets = g.vectors[name]
    lens = np.diff(offsets).astype(np.int64)
    pos = np.arange(len(values), dtype=np.int64) - np.repeat(offsets[:-1].astype(np.int64), lens)
    idx = pd.MultiIndex.from_arrays([np.repeat(g.node.astype(np.int64), lens),
                                     np.repeat(g.index.astype(np.int64), lens), pos],
                                    names=["node", "index", "position"])
    return pd.Series(values, index=idx, name=name)


def vector(source, group: str, name: str):
    """A vector statistic as a pandas Series indexed by (node, index, position)."""
    run = source if isinstance(source, Run) else None
    if run is not None:
        return run.vector(group, name)
    with h5py.File(source, "r") as f:
        _check_format(source, f.attrs)
        if "stats" not in f or group not in f["stats"]:
            raise _no_group(source, "stats", group, f["stats"] if "stats" in f else ())
        groups = {group: _read_group(group, f["stats"][group])}
    return _vector_series(groups, group, name, source)


def _series_frame(time, groups: dict, group: str, counters, path: str):
    pd = _pd()
    if time is None:
        raise KeyError(f"{path}: no time series (the run had output.sample_interval = 0)")
    if group not in groups:
        raise _no_group(path, "series", group, groups)
    g = groups[group]
    names = [c for c in g.columns if counters is None or c in counters]
    blocks, keys = [], []
    for c in names:
        a = g.counters[c]  # rows x samples
        blocks.append(a.T)
        keys.extend((c, int(n), int(i)) for n, i in zip(g.node.tolist(), g.index.tolist()))
    data = np.hstack(blocks) if blocks else np.zeros((len(time), 0), dtype=np.uint64)
    cols = pd.MultiIndex.from_tuples(keys, names=["counter", "node", "index"])
    return pd.DataFrame(data, index=pd.Index(time, name="time_ps"), columns=cols)


def series(source, group: str, counters=None):
    """The sampled counters of one /series group as a DataFrame over time.

    Rows: the sample times /series/time_ps (the value at time T is the counter
    after every event before T). Columns: a MultiIndex (counter, node, index),
    so df["cycles"] is a (node, index) -> values table. counters limits the
    columns to those names. Given a path, only that group is read.
    """
    if isinstance(source, Run):
        return source.series(group, counters)
    with h5py.File(source, "r") as f:
        _check_format(source, f.attrs)
        if "series" not in f:
            return _series_frame(None, {}, group, counters, source)
        s = f["series"]
        if group not in s or group == "time_ps":
            raise _no_group(source, "series", group, [k for k in s if k != "time_ps"])
        return _series_frame(s["time_ps"][()], {group: _read_group(group, s[group])}, group,
                             counters, source)


def _config_value(text: str, key: str):
    section, _, name = key.partition(".")
    cp = configparser.ConfigParser(interpolation=None, inline_comment_prefixes=(";", "#"))
    cp.read_string(text)
    return cp.get(section, name, fallback=None)


def frames(paths, group: str, attrs=(), config=(), run_column: str = "run"):
    """Many runs' counters of one group in one DataFrame (CAMP fitting, sweeps).

    One frame(path, group) per file, concatenated, with a column run_column
    holding the path, one column per root attribute named in attrs (e.g.
    "seed", "status") and one per configuration key named in config as
    "section.key" (e.g. "workload.kernel", read from the file's config
    attribute). The index stays (node, index); reset_index() makes it columns.
    """
    pd = _pd()
    parts, docs = [], None
    for path in paths:
        with h5py.File(path, "r") as f:
            _check_format(path, f.attrs)
            if "stats" not in f or group not in f["stats"]:
                raise _no_group(path, "stats", group, f["stats"] if "stats" in f else ())
            g = _read_group(group, f["stats"][group])
            extra = {a: _py(f.attrs[a]) if a in f.attrs else None for a in attrs}
            if config:
                text = _py(f.attrs.get("config", ""))
                extra.update({k: _config_value(text, k) for k in config})
            if docs is None:
                raw = {c: d for (_, c), d in _read_docs(f, only=group).items()}
                docs = ({c: d[0] for c, d in raw.items()}, {c: d[1] for c, d in raw.items()})
        df = _frame({group: g}, group, path, None)
        df.insert(0, run_column, path)
        for i, (k, v) in enumerate(extra.items()):
            df.insert(1 + i, k, v)
        parts.append(df)
    out = pd.concat(parts) if parts else pd.DataFrame()
    if docs is not None:
        out.attrs["units"], out.attrs["descriptions"] = docs
    return out


# ---- the script --------------------------------------------------------------

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
            elif isinstance(vals[0], np.ndarray):
                out.append(f"  {name:<32} {sum(len(v) for v in vals):>14} values {unit}")
            else:
                out.append(f"  {name:<32} {sum(int(v) for v in vals):>14} {unit}")
        if len(names) > max_counters:
            out.append(f"  ... and {len(names) - max_counters} more")
    if run.series_time is not None:
        n = sum(len(g.columns) for g in run.series_groups.values())
        out.append(f"time series: {len(run.series_time)} samples every "
                   f"{_time(int(run.series_time[1] - run.series_time[0]))}, {n} counters in "
                   f"{', '.join(run.series_groups) or 'no group'}")
    return "\n".join(out)


def main(argv: list) -> int:
    if len(argv) < 2:
        print(f"usage: {argv[0]} RUN.h5 ...", file=sys.stderr)
        return 2
    for path in argv[1:]:
        try:
            print(summary(load(path)))
        except FormatError as e:
            print(e, file=sys.stderr)  # names the path already
            return 1
        except (OSError, KeyError, ValueError) as e:
            print(f"{path}: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
