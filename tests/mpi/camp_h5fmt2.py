#!/usr/bin/python3
"""Writes a cxlsim run in the HDF5 format-2 layout, for the camp tests.

  camp_h5fmt2.py IN.h5 OUT.h5 [--swap A B]

Format 2 (the output format change, README "Output"): /stats/<group>/node and
/stats/<group>/index uint32 columns, /stats/<group>/<counter> uint64 columns
with units and description attributes, /nodes/type and /nodes/alive, the root
attributes (format_version 2, status, config, model, final_time_ps). IN may be
a format-1 file (/nodes/<id>/<component>/<counter> scalars: components
core<i> become rows of group "core" with index i, the others rows of their
own group with index 0) or already format 2 (copied). --swap exchanges two
counters of group "core" in every row: the "fit that can fail" test feeds
cxlsim-camp a run whose counters lie.
"""
import re
import sys

import h5py
import numpy as np


def rows_of(f):
    """{group: {"node": [...], "index": [...], counter: [...], "_attrs": {counter: attrs}}}"""
    groups = {}
    if int(f.attrs["format_version"]) >= 2:
        for g, grp in f["stats"].items():
            d = groups.setdefault(g, {"_attrs": {}})
            for name, ds in grp.items():
                if isinstance(ds, h5py.Dataset):
                    d[name] = list(ds[()])
                    d["_attrs"][name] = dict(ds.attrs)
        return groups
    for node_name, node in f["nodes"].items():
        if not isinstance(node, h5py.Group):
            continue
        for comp_name, comp in node.items():
            m = re.fullmatch(r"core(\d+)", comp_name)
            g, index = ("core", int(m.group(1))) if m else (comp_name, 0)
            d = groups.setdefault(g, {"node": [], "index": [], "_attrs": {}})
            row = len(d["node"])
            d["node"].append(int(node_name))
            d["index"].append(index)
            for name, ds in comp.items():
                if ds.shape != ():
                    continue  # histograms: not needed here
                col = d.setdefault(name, [0] * row)
                col.extend([0] * (row - len(col)))
                col.append(int(ds[()]))
                d["_attrs"][name] = dict(ds.attrs)
            for name, col in d.items():
                if name not in ("node", "index", "_attrs") and len(col) == row:
                    col.append(0)
    return groups


def main(argv):
    src, dst = argv[1], argv[2]
    swap = argv[argv.index("--swap") + 1:argv.index("--swap") + 3] if "--swap" in argv else None
    with h5py.File(src, "r") as f:
        groups = rows_of(f)
        attrs = {k: v for k, v in f.attrs.items()}
        types = [t.decode() if isinstance(t, bytes) else t for t in f["nodes/type"][()]]
        alive = f["nodes/alive"][()]
    if swap:
        core = groups["core"]
        core[swap[0]], core[swap[1]] = core[swap[1]], core[swap[0]]
    with h5py.File(dst, "w") as f:
        for k, v in attrs.items():
            f.attrs[k] = v
        f.attrs["format_version"] = np.uint32(2)
        nodes = f.create_group("nodes")
        nodes.create_dataset("type", data=np.array(types, dtype=h5py.string_dtype()))
        nodes.create_dataset("alive", data=np.asarray(alive, dtype=np.uint8))
        stats = f.create_group("stats")
        for g, d in groups.items():
            grp = stats.create_group(g)
            for name, col in d.items():
                if name == "_attrs":
                    continue
                ds = grp.create_dataset(name, data=np.asarray(col, dtype=np.uint32 if name in ("node", "index") else np.uint64))
                for k, v in d["_attrs"].get(name, {}).items():
                    ds.attrs[k] = v
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
