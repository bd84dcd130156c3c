#!/usr/bin/env bash
# Time series (output.sample_interval, output.sample): sampling is invisible to
# the run — the checksum and every counter equal those of the same run without
# sampling — and the series are identical at np 1 and np 3 (PHOLD, and a
# memsys run whose 4 nodes do not divide evenly over 3 ranks). The series'
# times are 0, I, 2I, ... up to the final time and one more, whose values are
# the final counters.
. "$(dirname "$0")/common.sh"
ph="$SRC/inputs/phold-ross-16.ini --set engine.end_time=10ms"
samp=(--set output.sample_interval=50us --set "output.sample=engine/* phold/*")
run 1 "$WORK/p_plain.h5" $ph
run 1 "$WORK/p1.h5" $ph "${samp[@]}"
run 3 "$WORK/p3.h5" $ph "${samp[@]}"
$H5CHECK same "$WORK/p_plain.h5" "$WORK/p1.h5" "$WORK/p3.h5"

ms="$SRC/inputs/wb-16x4.ini --set system.cns=2 --set system.mns=2 --set system.cores_per_cn=2
    --set workload.size=16"
msamp=(--set output.sample_interval=2us --set "output.sample=port/tx_bytes_* engine/events")
run 1 "$WORK/m_plain.h5" $ms
run 1 "$WORK/m1.h5" $ms "${msamp[@]}"
run 3 "$WORK/m3.h5" $ms "${msamp[@]}"
$H5CHECK same "$WORK/m_plain.h5" "$WORK/m1.h5" "$WORK/m3.h5"

/usr/bin/python3 - "$WORK" <<'PY'
import os, sys
import numpy as np
sys.path.insert(0, os.path.join(os.environ["SRC"], "analysis"))
import cxlsim_h5
d = sys.argv[1]
for base, interval, groups in (("p", 50_000_000, {"engine", "phold"}),
                               ("m", 2_000_000, {"engine", "port"})):
    a, b = cxlsim_h5.load(f"{d}/{base}1.h5"), cxlsim_h5.load(f"{d}/{base}3.h5")
    plain = cxlsim_h5.load(f"{d}/{base}_plain.h5")
    assert plain.series_time is None and not plain.series_groups
    assert set(a.series_groups) == groups, a.series_groups.keys()
    final = a.attrs["final_time_ps"]
    assert final == b.attrs["final_time_ps"]
    S = final // interval + 2
    assert a.series_time.tolist() == [k * interval for k in range(S)], a.series_time[:4]
    assert np.array_equal(a.series_time, b.series_time)
    n = 0
    for g, sa in a.series_groups.items():
        sb = b.series_groups[g]
        assert np.array_equal(sa.node, sb.node) and np.array_equal(sa.index, sb.index)
        assert sa.columns == sb.columns and sa.columns, (g, sa.columns)
        for c in sa.columns:
            x, y = sa.counters[c], sb.counters[c]
            assert x.shape == (len(sa.node), S), (g, c, x.shape)
            assert np.array_equal(x, y), f"{base}: series {g}/{c} differs between np 1 and np 3"
            assert (np.diff(x.astype(np.int64), axis=1) >= 0).all(), f"{g}/{c} decreases"
            n += 1
    # The first sample is the state after init; the last holds the final values.
    ev = a.series_groups["engine"].counters["events"]
    assert (ev[:, 0] == 0).all()
    assert np.array_equal(ev[:, -1], a.groups["engine"].counters["events"])
    assert ev[:, S // 2].sum() > 0
    df = cxlsim_h5.series(f"{d}/{base}3.h5", "engine", ["events"])
    assert df.shape == (S, len(ev)) and df.index[1] == interval
    print(f"{base}: {n} series of {S} samples identical at np 1 and 3; checksum unchanged")
PY

# Bad sampling keys: one line naming the key, no output.
expect_error "output.sample: pattern \"core\" has no '/'" "$SRC/inputs/phold-ross-16.ini" \
	--set output.sample_interval=1us --set output.sample=core
expect_error "output.sample: is set, but output.sample_interval is 0" \
	"$SRC/inputs/phold-ross-16.ini" --set output.sample=engine/events
expect_error "output.sample: no pattern" "$SRC/inputs/phold-ross-16.ini" \
	--set output.sample_interval=1us
echo "bad sampling keys refused"
