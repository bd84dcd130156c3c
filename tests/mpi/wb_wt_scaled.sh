#!/usr/bin/env bash
# DIKTAMO Fig. 2 / Fig. 10's WB and WT bars as a trend on scaled inputs: every
# application kernel on 4 CNs x 4 cores + 4 MNs at a small size, under WB and
# WT. Every run must complete with its results checked (deterministic kernels
# word for word against the reference run, the others by their invariants);
# WT must never be faster than WB, must be slower on average, and most on the
# write-intensive ocean kernels' kind of sharing than on read-mostly raytrace.
# The table comes from analysis/wbwt_table.py, as for the full experiment.
#   wb_wt_scaled.sh [NP]        the 18 runs, then the checks
#   wb_wt_scaled.sh --check DIR the checks on DIR's KERNEL-wb.h5 and KERNEL-wt.h5
#                               (ctest's diktamo.scaled makes the same 18 runs
#                               among its 54 and checks them so)
. "$(dirname "$0")/common.sh"
D=$WORK
if [ "${1:-}" = --check ]; then
	D=${2:?directory of the runs}
else
NP=${1:-1}
base=("$SRC/inputs/wb-16x4.ini" --set system.cns=4 --set system.mns=4)
for ks in ocean_cp:64 ocean_ncp:64 barnes:512 raytrace:32 fluidanimate:2048 \
	streamcluster:256 canneal:1024 bodytrack:128 ycsb:1024; do
	k=${ks%%:*}; s=${ks##*:}
	for p in wb wt; do
		run "$NP" "$D/$k-$p.h5" "${base[@]}" --set system.protocol=$p \
			--set workload.kernel="$k" --set workload.size="$s"
		$H5CHECK status "$D/$k-$p.h5" complete
	done
done
fi
/usr/bin/python3 "$SRC/analysis/wbwt_table.py" "$D" | tee "$WORK/wbwt.md"
/usr/bin/python3 - "$WORK/wbwt.md" <<'PY'
import re, sys
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"\| (\w+) \| [\d.]+ \| [\d.]+ \| \*\*([\d.]+)\*\*", line)
    if m:
        rows[m.group(1)] = float(m.group(2))
avg = sum(rows.values()) / len(rows)
bad = [k for k, r in rows.items() if r < 0.99]
assert len(rows) == 9, rows
assert not bad, f"WT faster than WB for {bad}"
assert avg > 1.1, f"WT / WB averages {avg:.2f}: no slowdown"
assert max(rows["ocean_cp"], rows["ocean_ncp"]) > rows["raytrace"], rows
print(f"WT / WB: average {avg:.2f}, {min(rows.values()):.2f}..{max(rows.values()):.2f}")
PY
echo "wb/wt scaled: ok"
