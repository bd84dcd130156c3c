#!/usr/bin/python3
"""Copies a cxlsim run (HDF5 format 2) with two core counters exchanged.

  camp_h5swap.py IN.h5 OUT.h5 A B     the columns /stats/core/A and /stats/core/B swap
  camp_h5swap.py IN.h5 OUT.h5 --v1    the root attribute format_version set to 1

The "fit that can fail" test feeds cxlsim-camp a run whose counters lie; the
second form is a file of the old per-node format, which it must refuse.
"""
import shutil
import sys

import h5py
import numpy as np

src, dst, *what = sys.argv[1:]
shutil.copyfile(src, dst)
with h5py.File(dst, "r+") as f:
    if what == ["--v1"]:
        f.attrs["format_version"] = np.uint32(1)
    else:
        a, b = what
        core = f["stats/core"]
        va, vb = core[a][()], core[b][()]
        core[a][...] = vb
        core[b][...] = va
