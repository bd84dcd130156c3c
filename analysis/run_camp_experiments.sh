#!/usr/bin/env bash
# The whole CAMP experiment (README "CAMP"): every workload configuration of
# inputs/camp_workloads.txt on inputs/camp.ini, DRAM-only and CXL-only on each
# device preset, the four microbenchmarks' pairs calibrating one model per
# preset, the interleave sweeps of the bandwidth-bound configurations, the
# placement policies of the paper's Fig. 15, then the tables and figures
# (analysis/camp_report.py).
#
#   analysis/run_camp_experiments.sh [OUT]          (default /tmp/camp-exp)
#
# Phases (a run whose file exists is not redone, so an interrupted
# experiment resumes where it stopped):
#   1  every configuration DRAM-only, and CXL-only on each of $DEVICES
#   2  calibration (cxlsim-camp calibrate on the cal_* pairs, one parameter
#      file per preset), then the bandwidth-bound configurations (the 5 %
#      rule on their DRAM runs) swept at DRAM shares 10 .. 90 % on each of
#      $IL_DEVICES (with the endpoints: 11 ratios)
#   3  the policies' ratios that the sweep did not run: best-shot's x*
#      (cxlsim-camp best-shot) and the latency-equalising (Colloid-like) one
#   4  OUT/report: camp_report.md and the PNG figures
#
# It takes the heavy lock (/tmp/cxlsim-heavy.lock) for the whole run (LOCK=0:
# not, for a machine shared with others' test suites, where an hour-long hold
# would stall them) and runs $JOBS simulations at a time (default 2: both
# cores) at nice $NICE (10). Environment: DEVICES (numa cxl_a cxl_b cxl_c),
# IL_DEVICES (cxl_a), IL_MAX (24: at most that many configurations swept),
# JOBS, NICE, LOCK, CXLSIM (build/src/cxlsim), LIST, PHASES (1234: the phases
# to run), DRD_FORM (auto: calibrate's --drd-form, S_DRd's curve).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${CAMP_EXP_LOCKED:-}" ] && [ "${LOCK:-1}" != 0 ]; then
	export CAMP_EXP_LOCKED=1
	exec flock /tmp/cxlsim-heavy.lock "$0" "$@"
fi
OUT=${1:-/tmp/camp-exp}
export SRC OUT
export RUNS="$OUT/runs"
export CXLSIM=${CXLSIM:-$SRC/build/src/cxlsim}
CAMP=${CAMP:-$(dirname "$CXLSIM")/cxlsim-camp}
JOBS=${JOBS:-2}
export NICE=${NICE:-10}
DEVICES=${DEVICES:-numa cxl_a cxl_b cxl_c}
IL_DEVICES=${IL_DEVICES:-cxl_a}
IL_MAX=${IL_MAX:-24}
LIST=${LIST:-$SRC/inputs/camp_workloads.txt}
PHASES=${PHASES:-1234}
REPORT="/usr/bin/python3 $SRC/analysis/camp_report.py"
export CAMP DEVICES IL_DEVICES LIST
[ -x "$CXLSIM" ] && [ -x "$CAMP" ] || { echo "build first: .ci/setup build ($CXLSIM, $CAMP)"; exit 1; }
mkdir -p "$RUNS"
t0=$(date +%s)

# One simulation: NAME KERNEL SIZE VARIANT THREADS TAG PLACEMENT DEVICE DRAM_PCT
run_one() {
	local f="$RUNS/$1@$6.h5" log="$RUNS/$1@$6.log" s e
	[ -s "$f" ] && return 0
	s=$(date +%s.%N)
	if nice -n "$NICE" timeout -k 5 900 "$CXLSIM" "$SRC/inputs/camp.ini" --quiet -o "$f" \
		--set workload.kernel="$2" --set workload.size="$3" --set workload.variant="$4" \
		--set system.cores_per_cn="$5" --set tier.placement="$7" --set tier.device="$8" \
		--set tier.dram_pct="$9" >"$log" 2>&1; then
		e=$(date +%s.%N)
		echo "$1@$6 $(echo "$e - $s" | bc)" >>"$RUNS/times.txt"
	else
		echo "FAILED: $1@$6 (exit $?, $log)"
		rm -f "$f"
	fi
}
export -f run_one
run_jobs() { # job lines on stdin
	xargs -P "$JOBS" -L 1 bash -c 'run_one "$@"' _
}
configs() { grep -v '^#' "$LIST" | awk 'NF == 5'; }

phase() { case "$PHASES" in *$1*) return 0 ;; *) return 1 ;; esac; }

phase 1 && echo "phase 1: $(configs | wc -l) configurations x (DRAM + $DEVICES)" &&
configs | while read -r n k s v t; do
	echo "$n $k $s $v $t dram dram cxl_a 100"
	for d in $DEVICES; do echo "$n $k $s $v $t $d cxl $d 0"; done
done | run_jobs

phase 2 && echo "phase 2: calibration and interleave sweeps ($IL_DEVICES)" &&
$REPORT calibrate "$OUT"
phase 2 && for d in $IL_DEVICES; do
	$REPORT select "$OUT" "$d" "$IL_MAX" >"$OUT/interleave-$d.txt"
	echo "  $d: $(wc -l <"$OUT/interleave-$d.txt") bandwidth-bound configurations"
	configs | while read -r n k s v t; do
		grep -qx "$n" "$OUT/interleave-$d.txt" || continue
		for x in 10 20 30 40 50 60 70 80 90; do echo "$n $k $s $v $t il-$d-$x interleave $d $x"; done
	done | run_jobs
done

phase 3 && echo "phase 3: best-shot and latency-equalising ratios" &&
for d in $IL_DEVICES; do
	$REPORT policies "$OUT" "$d" >"$OUT/policies-$d.txt"
	configs | while read -r n k s v t; do
		awk -v n="$n" '$1 == n { print $2 }' "$OUT/policies-$d.txt" | sort -u | while read -r x; do
			echo "$n $k $s $v $t il-$d-$x interleave $d $x"
		done
	done | run_jobs
done

phase 4 && echo "phase 4: report" && $REPORT report "$OUT"
t1=$(date +%s)
echo "wall time $((t1 - t0)) s ($(wc -l <"$RUNS/times.txt") runs, $JOBS at a time); report: $OUT/report/camp_report.md"
