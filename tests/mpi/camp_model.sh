#!/usr/bin/env bash
# cxlsim-camp end to end on scaled runs (inputs/camp.ini, cxl_a):
#   - calibrate on the four microbenchmarks only (pointer chase with 1 and 4
#     chains, stream, strided, memset; 1 and 2 threads), DRAM-only and
#     CXL-only each; they choose S_DRd's form over L on C;
#   - predict twelve other workloads (2 threads) by CAMP's workflow (the 5 %
#     rule: a latency-bound one from its DRAM run alone, a bandwidth-bound one
#     from its DRAM and CXL runs): Pearson r of predicted against measured
#     slowdown >= 0.9, with at least four predicted from one run;
#   - a run's S is its slowest thread's (per-core counters), --sum the
#     process's sum;
#   - R_Mem reads P7 as the L1 prefetches that missed L2;
#   - a workload whose counters are swapped (stalls on L3 misses <-> cycles
#     bound on stores, in a copy of its file) is mispredicted by far;
#   - interleave and best-shot: a bandwidth-bound run asks for its CXL run
#     (the 5 % rule) and gets a curve whose ends are the measured endpoints;
#   - perf stat fixtures (text, CSV, SKX, SPR/EMR names, --per-thread) predict, and a
#     missing event, <not counted>, a file that is not perf output, a bad
#     parameter file, a file of HDF5 format 1 each give one error line and
#     exit status 1.
. "$(dirname "$0")/common.sh"
CAMP="$(dirname "$CXLSIM")/cxlsim-camp"
FX="$SRC/tests/fixtures/camp"
sim() { # NAME KERNEL SIZE VARIANT THREADS PLACEMENT
	timeout -k 5 120 "$CXLSIM" "$SRC/inputs/camp.ini" --quiet -o "$WORK/$1-$6.h5" \
		--set workload.kernel=$2 --set workload.size=$3 --set workload.variant=$4 \
		--set system.cores_per_cn=$5 --set tier.placement=$6 --set tier.device=cxl_a \
		>"$WORK/$1-$6.out" 2>&1 || { echo "run $1 $6 failed"; cat "$WORK/$1-$6.out"; exit 1; }
}
micro="pc1_1:ptrchase:2048:1:1 pc4_1:ptrchase:1024:4:1 pc1_2:ptrchase:1024:1:2 pc4_2:ptrchase:512:4:2
       st1_1:stream:512:1:1 st1_2:stream:256:1:2 sd1_1:strided:1024:1:1 sd1_2:strided:512:1:2
       ms1_1:memset:512:1:1 ms1_2:memset:256:1:2"
work="xsbench:xsbench:300:0:2 dlrm:dlrm:8192:0:2 kvstore:kvstore:8192:0:2 spmv:spmv:16384:0:2
      triad:triad:16384:0:2 lbm:lbm:48:0:2 roms:roms:32:0:2 pr:pr:8192:0:2 isort:isort:32768:0:2
      mcf:mcf:4096:0:2 gpt2_mlp:gpt2_mlp:192:0:2 range2d:range2d:32768:0:2"
pairs=()
for w in $micro $work; do
	IFS=: read -r n k s v t <<<"$w"
	sim $n $k $s $v $t dram
	sim $n $k $s $v $t cxl
done
for w in $micro; do
	n=${w%%:*}
	pairs+=("$WORK/$n-dram.h5" "$WORK/$n-cxl.h5")
done
"$CAMP" calibrate -o "$WORK/params.txt" "${pairs[@]}" | tee "$WORK/calibrate.txt"
# On this machine MLP does not change with the device and s_LLC is a fraction
# of the memory-active cycles for the streams: the microbenchmarks choose
# S_DRd's hyperbola over L and its base C (camp_model.c), not Eq. 5's form.
# These scaled ones run on 1 and 2 threads and never load memory past the
# queue form's corner, so its beta is not determined and it must not be kept
# (its best fit here, beta near 0, would turn S_DRd negative on loaded programs).
grep -qx "drd_x = l" "$WORK/params.txt" && grep -qx "drd_base = c_mem" "$WORK/params.txt" || {
	echo "calibration kept another S_DRd form:"; cat "$WORK/params.txt"; exit 1; }
# The streams' cache stalls grow with the fill-buffer hits, not with Eq. 6's
# DRAM cache stalls (camp_model.c, "S_Cache"): calibration keeps that form.
grep -qx "cache_x = lfb_hits" "$WORK/params.txt" || {
	echo "calibration kept Eq. 6's S_Cache:"; cat "$WORK/params.txt"; exit 1; }
grep -q "beta not determined" "$WORK/calibrate.txt" || {
	echo "calibrate did not say that the queue form's beta is not determined"; exit 1; }
# asked for, the queue form is refused in one line; a bad form name is a usage error
rc=0; "$CAMP" calibrate -o "$WORK/q.txt" --drd-form queue "${pairs[@]}" 2>"$WORK/q.err" || rc=$?
[ "$rc" = 1 ] && grep -q "the queue form's beta is not determined" "$WORK/q.err" &&
	[ "$(wc -l <"$WORK/q.err")" = 1 ] && [ ! -e "$WORK/q.txt" ] || {
	echo "calibrate --drd-form queue: exit $rc:"; cat "$WORK/q.err"; exit 1; }
rc=0; "$CAMP" calibrate --drd-form cubic "${pairs[@]}" 2>"$WORK/q.err" >/dev/null || rc=$?
[ "$rc" = 2 ] && grep -q "drd-form: expected auto, l_over_mlp, l or queue, got 'cubic'" "$WORK/q.err" || {
	echo "calibrate --drd-form cubic: exit $rc:"; cat "$WORK/q.err"; exit 1; }
: >"$WORK/acc.csv"
for w in $work; do
	n=${w%%:*}
	one=$("$CAMP" predict -p "$WORK/params.txt" --csv "$WORK/$n-dram.h5" | tail -1)
	camp=$("$CAMP" predict -p "$WORK/params.txt" --csv --pair "$WORK/$n-dram.h5" "$WORK/$n-cxl.h5" | tail -1)
	m=$("$CAMP" measure --csv "$WORK/$n-dram.h5" "$WORK/$n-cxl.h5" | tail -1)
	echo "$n,$(echo "$camp" | cut -d, -f5-7),$(echo "$m" | cut -d, -f3),$(echo "$one" | cut -d, -f5)" >>"$WORK/acc.csv"
done
/usr/bin/python3 - "$WORK/acc.csv" <<'PY'
import sys
import numpy as np
rows = [l.strip().split(",") for l in open(sys.argv[1])]
p = np.array([float(r[1]) for r in rows]); m = np.array([float(r[4]) for r in rows])
one = np.array([float(r[5]) for r in rows])
for r in rows:
    print(f"  {r[0]:10s} CAMP {float(r[1]):6.3f} ({r[3]}, {r[2]} run{'s' if r[2] != '1' else ''})"
          f"  DRAM run alone {float(r[5]):6.3f}  measured {float(r[4]):6.3f}")
r = np.corrcoef(p, m)[0, 1]
print(f"CAMP's workflow: Pearson r {r:.3f} over {len(rows)} workloads; within 5 %: "
      f"{np.mean(abs(p - m) <= 0.05):.0%}, within 10 %: {np.mean(abs(p - m) <= 0.10):.0%}")
print(f"the DRAM run alone for every workload: Pearson r {np.corrcoef(one, m)[0, 1]:.3f}")
assert len(rows) == 12 and r >= 0.9, f"Pearson r {r:.3f} < 0.9"
assert sum(r[2] == "1" for r in rows) >= 4, "too few latency-bound workloads to test the one-run model"
PY
# R_Mem's P7 is the L1 prefetches that missed L2 (OFFCORE_RESPONSE sees no
# L2 hit): cxlsim-camp's R_Mem is l1_pf_from_mem / l1_pf_offcore, and the
# offcore ones are a subset of all L1 prefetches.
for n in spmv gpt2_mlp; do
	rm_=$("$CAMP" predict -p "$WORK/params.txt" --csv "$WORK/$n-dram.h5" | tail -1 | cut -d, -f13)
	/usr/bin/python3 - "$WORK/$n-dram.h5" "$rm_" <<'PY'
import sys, h5py
c = h5py.File(sys.argv[1], "r")["stats/core"]
req, off, mem = (c[k][()].sum() for k in ("l1_pf_requests", "l1_pf_offcore", "l1_pf_from_mem"))
assert mem <= off <= req and off > 0, (mem, off, req)
assert abs(float(sys.argv[2]) - mem / off) < 1e-5, (sys.argv[2], mem / off)
print(f"{sys.argv[1].split('/')[-1]}: R_Mem {mem / off:.4f} (over all L1 prefetches it would be {mem / req:.4f})")
PY
done
# The slowest thread: an HDF5 run's S is predicted per core (2 threads here);
# --sum gives the paper's sum over the process's counters.
crit=$("$CAMP" predict -p "$WORK/params.txt" --csv "$WORK/mcf-dram.h5" | tail -1)
sum=$("$CAMP" predict -p "$WORK/params.txt" --csv --sum "$WORK/mcf-dram.h5" | tail -1)
/usr/bin/python3 - "$crit" "$sum" <<'PY'
import sys
c, s = sys.argv[1].split(","), sys.argv[2].split(",")
assert c[14] == "2" and s[14] == "1", (c, s)
assert c[13] == s[4] == s[13] and c[1:4] == s[1:4], (c, s)
print(f"mcf: slowest of 2 threads {float(c[4]):.3f}, the process's sum {float(s[4]):.3f}")
PY
# The fit can fail: swapped counters (a copy of the file whose columns swap).
SWAP="$SRC/tests/mpi/camp_h5swap.py"
/usr/bin/python3 "$SWAP" "$WORK/xsbench-dram.h5" "$WORK/xs-swapped.h5" stalls_l3_miss bound_on_stores
/usr/bin/python3 "$SWAP" "$WORK/xsbench-dram.h5" "$WORK/xs-v1.h5" --v1
orig=$("$CAMP" predict -p "$WORK/params.txt" --csv "$WORK/xsbench-dram.h5" | tail -1 | cut -d, -f2-)
sw=$("$CAMP" predict -p "$WORK/params.txt" --csv "$WORK/xs-swapped.h5" | tail -1 | cut -d, -f5)
meas=$("$CAMP" measure --csv "$WORK/xsbench-dram.h5" "$WORK/xsbench-cxl.h5" | tail -1 | cut -d, -f3)
/usr/bin/python3 -c "
o, s, m = float('$(echo "$orig" | cut -d, -f4)'), float('$sw'), float('$meas')
print(f'xsbench: measured {m:.3f}, predicted {o:.3f}, with swapped counters {s:.3f}')
assert abs(o - m) < 0.1, 'the true counters should predict xsbench within 0.1'
assert abs(s - m) > max(0.25, 3 * abs(o - m)), 'swapped counters must be mispredicted'"
# Interleaving: triad is bandwidth-bound; the curve's ends are the measured endpoints.
set +e
"$CAMP" interleave -p "$WORK/params.txt" "$WORK/triad-dram.h5" >"$WORK/il1.out" 2>&1
rc=$?
set -e
[ $rc = 1 ] && grep -q "bandwidth-bound.*give its CXL-only run too" "$WORK/il1.out" || {
	echo "interleave without the CXL run: exit $rc"; cat "$WORK/il1.out"; exit 1; }
"$CAMP" interleave -p "$WORK/params.txt" --csv --points 11 "$WORK/triad-dram.h5" "$WORK/triad-cxl.h5" >"$WORK/il2.csv"
"$CAMP" interleave -p "$WORK/params.txt" --load footprint --csv --points 11 "$WORK/triad-dram.h5" "$WORK/triad-cxl.h5" >"$WORK/il2f.csv"
"$CAMP" interleave -p "$WORK/params.txt" --load-latency quadratic --csv --points 11 "$WORK/triad-dram.h5" "$WORK/triad-cxl.h5" >"$WORK/il2q.csv"
"$CAMP" best-shot -p "$WORK/params.txt" --csv "$WORK/triad-dram.h5" "$WORK/triad-cxl.h5" >"$WORK/bs.csv"
set +e
"$CAMP" interleave -p "$WORK/params.txt" --load-latency mm2 "$WORK/triad-dram.h5" "$WORK/triad-cxl.h5" >"$WORK/il4.out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "^cxlsim-camp: --load-latency: expected quadratic or mm1, got 'mm2'" "$WORK/il4.out" || {
	echo "interleave --load-latency mm2: exit $rc"; cat "$WORK/il4.out"; exit 1; }
"$CAMP" interleave -p "$WORK/params.txt" --load busy "$WORK/triad-dram.h5" "$WORK/triad-cxl.h5" >"$WORK/il3.out" 2>&1
rc=$?
set -e
[ $rc = 2 ] && grep -q "^cxlsim-camp: --load: expected footprint or rate, got 'busy'" "$WORK/il3.out" || {
	echo "interleave --load busy: exit $rc"; cat "$WORK/il3.out"; exit 1; }
/usr/bin/python3 - "$WORK" <<'PY'
import sys
w = sys.argv[1]
rows = [l.strip().split(",") for l in open(f"{w}/il2.csv") if l[0].isdigit()]
assert len(rows) == 11, rows
s0, s1 = float(rows[0][4]), float(rows[-1][4])
assert s1 == 0 and s0 > 0.3, f"curve ends {s0} {s1}"
# calibrate's load share is the rate share; the paper's footprint share gives the same
# measured endpoints and another curve in between
assert "; load share rate, latency mm1" in open(f"{w}/il2.csv").readline()
ff = [l.strip().split(",") for l in open(f"{w}/il2f.csv") if l[0].isdigit()]
assert "; load share footprint" in open(f"{w}/il2f.csv").readline()
assert float(ff[0][4]) == s0 and float(ff[-1][4]) == 0, (ff[0], ff[-1])
mid = [(float(a[4]), float(b[4])) for a, b in zip(ff[1:-1], rows[1:-1])]
assert any(abs(r - f) > 0.01 for f, r in mid), mid
print("triad, S(x) footprint / rate: " + " ".join(f"{f:.3f}/{r:.3f}" for f, r in mid))
# the quadratic latency of Eq. 8: the same endpoints, another curve
qq = [l.strip().split(",") for l in open(f"{w}/il2q.csv") if l[0].isdigit()]
assert "; load share rate, latency quadratic" in open(f"{w}/il2q.csv").readline()
assert float(qq[0][4]) == s0 and float(qq[-1][4]) == 0, (qq[0], qq[-1])
assert any(abs(float(a[4]) - float(b[4])) > 0.005 for a, b in zip(qq[1:-1], rows[1:-1]))
bs = open(f"{w}/bs.csv").read().splitlines()[1].split(",")
assert bs[6] == "2" and bs[7] == "bandwidth-bound", bs
print(f"triad: S(0) {s0:.3f}, S(1) {s1:.3f}, best shot x* {bs[1]}")
PY
# perf stat fixtures and the errors a user can make.
for f in skx_text skx_csv spr_text spr_csv_percpu; do
	"$CAMP" predict -p "$WORK/params.txt" --csv "$FX/$f.txt" | tail -1 | cut -d, -f2,4 >"$WORK/$f.p"
done
cmp -s "$WORK/skx_text.p" "$WORK/skx_csv.p" && cmp -s "$WORK/skx_text.p" "$WORK/spr_text.p" &&
	cmp -s "$WORK/spr_text.p" "$WORK/spr_csv_percpu.p" || { echo "fixtures predict differently"; exit 1; }
# perf stat --per-thread (text, and -I -x, CSV): one worker stalls, one spins
# as long, the main thread waited (<not counted>). S is the stalling
# thread's, read the same from both layouts, and above the process's sum.
for f in skx_per_thread skx_per_thread_csv; do
	"$CAMP" predict -p "$WORK/params.txt" --csv "$FX/$f.txt" | tail -1 | cut -d, -f5,14,15 >"$WORK/$f.p"
done
cmp -s "$WORK/skx_per_thread.p" "$WORK/skx_per_thread_csv.p" || {
	echo "per-thread fixtures predict differently:"; cat "$WORK/skx_per_thread.p" "$WORK/skx_per_thread_csv.p"; exit 1; }
IFS=, read -r s_crit s_sum nthr <"$WORK/skx_per_thread.p"
"$CAMP" predict -p "$WORK/params.txt" --csv --sum "$FX/skx_per_thread.txt" | tail -1 | cut -d, -f5 >"$WORK/sum.p"
[ "$nthr" = 3 ] && awk -v c="$s_crit" -v s="$s_sum" -v f="$(cat "$WORK/sum.p")" \
	'BEGIN { exit !(c > 1.5 * s && s == f) }' || {
	echo "per-thread: S $s_crit over $nthr threads, sum $s_sum, --sum $(cat "$WORK/sum.p")"; exit 1; }
"$CAMP" predict -p "$WORK/params.txt" "$FX/skx_per_thread.txt" | grep -q "(slowest thread)" || {
	echo "per-thread: not predicted as the slowest thread"; exit 1; }
echo "perf --per-thread: slowest thread S $s_crit, process sum $s_sum"
expect_camp_error() { # PATTERN ARGS...
	local pat=$1 rc n
	shift
	set +e
	"$CAMP" "$@" >"$WORK/e.out" 2>"$WORK/e.err"
	rc=$?
	set -e
	n=$(wc -l <"$WORK/e.err")
	[ $rc = 1 ] && [ "$n" = 1 ] && grep -q -- "$pat" "$WORK/e.err" || {
		echo "cxlsim-camp $*: exit $rc, $n lines, expected 1 line with '$pat':"; cat "$WORK/e.err"; exit 1; }
}
expect_camp_error "skx_not_counted.txt:12: mem_load_retired.fb_hit is <not counted>" \
	predict -p "$WORK/params.txt" "$FX/skx_not_counted.txt"
expect_camp_error "skx_missing_store.txt: no count of exe_activity.bound_on_stores .*add -e" \
	predict -p "$WORK/params.txt" "$FX/skx_missing_store.txt"
expect_camp_error "garbage.txt: no line with a value and an event CAMP reads: not perf stat output" \
	predict -p "$WORK/params.txt" "$FX/garbage.txt"
printf 'p = 1\nq = x\n' >"$WORK/bad-params.txt"
expect_camp_error "bad-params.txt:2: q: expected a number" predict -p "$WORK/bad-params.txt" "$FX/skx_text.txt"
expect_camp_error "xs-v1.h5: format_version 1; cxlsim-camp reads format 2 only" \
	predict -p "$WORK/params.txt" "$WORK/xs-v1.h5"
expect_camp_error "cannot open" predict -p "$WORK/params.txt" "$WORK/none.h5"
echo "camp model: ok"
