#!/usr/bin/env bash
# How fast analysis loads a run: file size and load time of the HDF5 output
# with analysis/cxlsim_h5.py, for a 16 CN x 4 cores + 16 MN memsys run
# (inputs/wb-16x4.ini, ocean_cp at workload.size=32) and a 1024-node PHOLD run
# (inputs/phold-ross-1024.ini, end 0.5 ms). Per file: the median over REPEATS
# of load() (every statistic, the format-1 node view included), of
# frame(path, group) (one group as a DataFrame, read alone) and of
# frames() over 10 copies of the file (what a sweep or CAMP fit does).
# Targets (issue 9): 16x4+16 under 0.3 s and at most half of format 1's
# 2.3 MB; 1024-node PHOLD under 1 s. A benchmark: it prints, it asserts nothing.
# Usage: tests/bench/h5load_bench.sh [REPEATS]   (env CXLSIM, SRC)
set -euo pipefail
: "${CXLSIM:?path to cxlsim}" "${SRC:?source dir}"
reps=${1:-7}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$SRC/mpi-configs/cxlsim-mpirun" -np 1 "$CXLSIM" "$SRC/inputs/wb-16x4.ini" --set workload.size=32 \
	--quiet -o "$tmp/memsys.h5" >/dev/null
"$SRC/mpi-configs/cxlsim-mpirun" -np 1 "$CXLSIM" "$SRC/inputs/phold-ross-1024.ini" \
	--set engine.end_time=0.5ms --quiet -o "$tmp/phold.h5" >/dev/null
/usr/bin/python3 - "$tmp" "$reps" <<'PY'
import os, shutil, statistics, sys, time
sys.path.insert(0, os.path.join(os.environ["SRC"], "analysis"))
import cxlsim_h5

d, reps = sys.argv[1], int(sys.argv[2])

def median(fn):
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)

print(f"{'run':<28} {'bytes':>10} {'datasets':>9} {'load s':>8} {'frame s':>8} {'10 frames s':>12}")
for name, label, group in (("memsys", "memsys 16x4 CN + 16 MN", "core"),
                           ("phold", "PHOLD 1024 LPs", "phold")):
    p = f"{d}/{name}.h5"
    copies = []
    for i in range(10):
        q = f"{d}/{name}-{i}.h5"
        shutil.copy(p, q)
        copies.append(q)
    import h5py
    n = [0]
    with h5py.File(p, "r") as f:
        f.visititems(lambda _, o: n.__setitem__(0, n[0] + isinstance(o, h5py.Dataset)))
    cxlsim_h5.load(p)  # warm the page cache and the imports
    t_load = median(lambda: cxlsim_h5.load(p))
    t_frame = median(lambda: cxlsim_h5.frame(p, group))
    t_many = median(lambda: cxlsim_h5.frames(copies, group))
    print(f"{label:<28} {os.path.getsize(p):>10} {n[0]:>9} {t_load:>8.3f} {t_frame:>8.3f} "
          f"{t_many:>12.3f}")
print(f"(medians of {reps}; frame and frames read the group {'core'!r} / {'phold'!r})")
PY
