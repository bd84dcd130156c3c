#!/usr/bin/python3
"""analysis/cxlsim_h5.py against files made here with h5py, no simulator involved.

1. A format-2 file written by hand from the layout in include/cxlsim/h5out.h
   (an instanced group with an absent counter, a histogram with uneven bucket
   counts, a ragged vector, a dead node, time series): the format-1 view
   (run.nodes with "core<i>/name" keys, Hist objects, run.total, units), the
   pandas functions (frame, series, vector, frames) and the summary script.
2. Files of format 1 (the old per-node layout), of no format at all and of a
   newer format are refused with one clear line that says what to do, by
   load() and by the script (exit status 1).
Exit status 0 when every check holds; an AssertionError otherwise.
"""
import io
import os
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "analysis"))
import cxlsim_h5  # noqa: E402

U64 = np.uint64


def counter(g, name, values, units, desc, absent=None):
    d = g.create_dataset(name, data=np.asarray(values, dtype=U64))
    d.attrs["units"], d.attrs["description"] = units, desc
    if absent is not None:
        d.attrs["absent_rows"] = np.asarray(absent, dtype=np.uint32)
    return d


def rows(g, node, index, instanced):
    g.attrs["instanced"] = np.uint8(instanced)
    g.create_dataset("node", data=np.asarray(node, dtype=np.uint32))
    g.create_dataset("index", data=np.asarray(index, dtype=np.uint32))


def write_format2(path, kernel="ocean_cp", seed=1, cycles0=1):
    """Three nodes: 0 and 2 alive (cn, mn), 1 dead; node 0 has cores 0 and 1."""
    with h5py.File(path, "w", track_order=True) as f:
        for k, v in dict(format_version=np.uint32(2), cxlsim_version="0.1.0",
                         command_line="cxlsim x.ini", model="memsys", nranks=np.uint32(2),
                         nnodes=np.uint32(3), status="complete", exit_status=np.int32(0),
                         checksum=U64(0xabc), end_time_ps=U64(100), final_time_ps=U64(25),
                         wall_seconds=1.5, seed=U64(seed),
                         config=f"[engine]\nmodel = memsys\n\n[workload]\nkernel = {kernel}\n"
                         ).items():
            f.attrs[k] = v
        e = f.create_group("engine", track_order=True)
        counter(e, "events", [10, 20], "events", "events handled on this rank")
        n = f.create_group("nodes", track_order=True)
        n.create_dataset("type", data=["cn", "cn", "mn"], dtype=h5py.string_dtype())
        n.create_dataset("alive", data=np.array([1, 0, 1], dtype=np.uint8))
        n.create_dataset("rank", data=np.array([0, 1, 1], dtype=np.uint32))

        s = f.create_group("stats", track_order=True)
        g = s.create_group("engine", track_order=True)
        rows(g, [0, 2], [0, 0], 0)
        counter(g, "events", [5, 7], "events", "events handled by this node")
        g = s.create_group("core", track_order=True)
        rows(g, [0, 0], [0, 1], 1)
        counter(g, "cycles", [cycles0, 2], "cycles", "core clock cycles")
        counter(g, "stalls", [0, 9], "cycles", "stall cycles", absent=[0])
        g = s.create_group("cn", track_order=True)
        rows(g, [0], [0], 0)
        h = g.create_group("lat", track_order=True)
        h.attrs.update(kind="histogram", units="ps", description="latency",
                       bucket_rule="bucket 0: value 0; bucket i>=1: [2^(i-1), 2^i)",
                       nbuckets=np.uint32(3))
        h.create_dataset("buckets", data=np.array([[1, 0, 2]], dtype=U64))
        for k, v in dict(count=3, sum=7, min=0, max=3).items():
            h.create_dataset(k, data=np.array([v], dtype=U64))
        g = s.create_group("home", track_order=True)
        rows(g, [0, 2], [0, 0], 0)
        v = g.create_group("img", track_order=True)
        v.attrs.update(kind="vector", units="words", description="image",
                       absent_rows=np.array([0], dtype=np.uint32))
        v.create_dataset("values", data=np.array([4, 5, 6], dtype=U64))
        v.create_dataset("offsets", data=np.array([0, 0, 3], dtype=U64))
        h2 = g.create_group("svc", track_order=True)  # uneven bucket counts
        h2.attrs.update(kind="histogram", units="ps", description="service",
                        bucket_rule="", nbuckets=np.uint32(3))
        h2.create_dataset("buckets", data=np.array([[1, 1, 0], [2, 0, 0]], dtype=U64))
        for k, vals in dict(count=[2, 2], sum=[1, 0], min=[0, 0], max=[1, 0]).items():
            h2.create_dataset(k, data=np.array(vals, dtype=U64))
        h2.create_dataset("nbuckets", data=np.array([3, 1], dtype=np.uint32))

        ser = f.create_group("series", track_order=True)
        ser.attrs["interval_ps"] = U64(10)
        ser.create_dataset("time_ps", data=np.array([0, 10, 20, 30], dtype=U64))
        g = ser.create_group("core", track_order=True)
        rows(g, [0, 0], [0, 1], 1)
        counter(g, "cycles", [[0, 1, 1, 1], [0, 0, 2, 2]], "cycles", "core clock cycles")

        ft = np.dtype([("node", "<u4"), ("rank", "<u4"), ("time_ps", "<u8"),
                       ("detected_wall_s", "<f8"), ("epoch", "<u4"),
                       ("cause", h5py.string_dtype())])
        f.create_dataset("failures", data=np.array([(1, 1, 12, 0.5, 1, "injected")], dtype=ft))


def write_old(path, version):
    with h5py.File(path, "w") as f:
        if version is not None:
            f.attrs["format_version"] = np.uint32(version)
        f.create_dataset("nodes/0000/l1/hits", data=U64(3))


def check_format2(d):
    p = os.path.join(d, "a.h5")
    write_format2(p)
    run = cxlsim_h5.load(p)
    assert run.attrs["status"] == "complete" and run.attrs["format_version"] == 2
    assert list(run.nodes) == [0, 1, 2], run.nodes.keys()
    assert run.nodes[1] == {}, run.nodes[1]  # dead: no rows
    n0 = run.nodes[0]
    assert list(n0) == ["engine/events", "core0/cycles", "core1/cycles", "core1/stalls",
                        "cn/lat", "home/svc"], list(n0)
    assert n0["core1/cycles"] == 2 and isinstance(n0["core1/cycles"], int)
    assert "core0/stalls" not in n0 and n0["core1/stalls"] == 9
    h = n0["cn/lat"]
    assert isinstance(h, cxlsim_h5.Hist) and h.count == 3 and h.sum == 7 and h.max == 3
    assert h.buckets.tolist() == [1, 0, 2] and h.lows.tolist() == [0, 1, 2]
    assert run.nodes[2]["home/svc"].buckets.tolist() == [2], "uneven buckets cut to the row's"
    assert run.nodes[0]["home/svc"].buckets.tolist() == [1, 1, 0]
    assert "home/img" not in n0 and run.nodes[2]["home/img"].tolist() == [4, 5, 6]
    assert run.total("engine/events") == 12 and run.total("core0/cycles") == 1
    assert run.units["core1/cycles"] == "cycles" and run.units["core0/cycles"] == "cycles"
    assert run.descriptions["cn/lat"] == "latency"
    assert run.units.get("no/such", "-") == "-"
    assert run.engine["events"].tolist() == [10, 20] and run.engine_units["events"] == "events"
    assert run.node_type == ["cn", "cn", "mn"] and run.node_alive.tolist() == [True, False, True]
    assert run.failures == [{"node": 1, "rank": 1, "time_ps": 12, "detected_wall_s": 0.5,
                             "epoch": 1, "cause": "injected"}], run.failures

    df = run.frame("core")
    assert list(df.index.names) == ["node", "index"] and df.index.tolist() == [(0, 0), (0, 1)]
    assert df["cycles"].tolist() == [1, 2]
    assert df["stalls"].isna().tolist() == [True, False] and int(df["stalls"].iloc[1]) == 9
    assert df.attrs["units"] == {"cycles": "cycles", "stalls": "cycles"}, df.attrs
    df2 = cxlsim_h5.frame(p, "core")
    assert df2.equals(df) and df2.attrs["descriptions"]["stalls"] == "stall cycles"
    assert cxlsim_h5.frame(p, "engine")["events"].tolist() == [5, 7]
    try:
        cxlsim_h5.frame(p, "nope")
        raise AssertionError("frame of a missing group")
    except KeyError as e:
        assert "nope" in str(e) and "core" in str(e), e

    vec = cxlsim_h5.vector(p, "home", "img")
    assert vec.tolist() == [4, 5, 6]
    assert vec.index.tolist() == [(2, 0, 0), (2, 0, 1), (2, 0, 2)], vec.index.tolist()
    assert run.vector("home", "img").equals(vec)

    s = cxlsim_h5.series(p, "core")
    assert s.index.tolist() == [0, 10, 20, 30] and s.index.name == "time_ps"
    assert s[("cycles", 0, 1)].tolist() == [0, 0, 2, 2]
    assert s["cycles"].shape == (4, 2)
    assert run.series("core").equals(s)

    q = os.path.join(d, "b.h5")
    write_format2(q, kernel="barnes", seed=7, cycles0=100)
    many = cxlsim_h5.frames([p, q], "core", attrs=["seed"], config=["workload.kernel"])
    assert len(many) == 4 and list(many.columns[:3]) == ["run", "seed", "workload.kernel"]
    assert many["run"].tolist() == [p, p, q, q]
    assert many["workload.kernel"].tolist() == ["ocean_cp"] * 2 + ["barnes"] * 2
    assert many["seed"].tolist() == [1, 1, 7, 7]
    assert many["cycles"].tolist() == [1, 2, 100, 2]
    assert many.attrs["units"]["cycles"] == "cycles"

    out = io.StringIO()
    with redirect_stdout(out):
        assert cxlsim_h5.main(["cxlsim_h5.py", p]) == 0
    text = out.getvalue()
    assert "core1/stalls" in text and "time series: 4 samples" in text, text
    print(f"format 2: {len(run.nodes)} nodes, frame {df.shape}, series {s.shape}, "
          f"frames {many.shape}")


def check_refused(d):
    for version, want in ((1, "format_version 1 is cxlsim's old per-node layout"),
                          (None, "format_version 0"), (3, "newer than this reader")):
        p = os.path.join(d, f"old{version}.h5")
        write_old(p, version)
        try:
            cxlsim_h5.load(p)
            raise AssertionError(f"format {version} was loaded")
        except cxlsim_h5.FormatError as e:
            msg = str(e)
        assert msg.startswith(p + ": ") and want in msg and "\n" not in msg, msg
        assert "re-run" in msg or "use analysis/cxlsim_h5.py" in msg, msg
        err = io.StringIO()
        with redirect_stderr(err), redirect_stdout(io.StringIO()):
            rc = cxlsim_h5.main(["cxlsim_h5.py", p])
        lines = err.getvalue().splitlines()
        assert rc == 1 and lines == [msg], (rc, lines)
        for fn in (lambda: cxlsim_h5.frame(p, "l1"), lambda: cxlsim_h5.series(p, "l1")):
            try:
                fn()
                raise AssertionError("a pandas function read an old file")
            except cxlsim_h5.FormatError:
                pass
    print("format 1, 0 and 3 refused with:", msg)


def main():
    with tempfile.TemporaryDirectory() as d:
        check_format2(d)
        check_refused(d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
