#!/usr/bin/env bash
# DIKTAMO's evaluation (papers/diktamo.md §VII, Fig. 10-19 and Table III):
# every run the tables of analysis/diktamo_tables.py need, one after another,
# each to OUT/<name>.h5, then all the tables.
#   analysis/run_diktamo.sh [OUT] [NP] [extra cxlsim args...]
#   e.g. nice -n 15 analysis/run_diktamo.sh results/diktamo 1
# Runs (M = the machine: inputs/wb-16x4.ini, CNS CNs x 4 cores, MNS MNs):
#   <k>-<p>.h5            the nine kernels x p in wb wt baseline parallel
#                         proactive proactive_noc on M, with the MNs' received
#                         dump bytes sampled every 100 us (Fig. 10, 11, 12,
#                         13, 14, 16, compression, traffic)
#   <k>-proactive-nr<N>.h5  proactive with diktamo.replicas = N, N in 2 4
#                         (Fig. 18; N_r = 3 is <k>-proactive.h5)
#   <k>-<p>-cn<C>.h5      wb and proactive on C CNs, C in FIG19_CNS (Fig. 19;
#                         C = CNS is <k>-<p>.h5). The MNs stay MNS and the
#                         cores 4 per CN, so the threads are 4 C; the problem
#                         is the same at every C (the kernels split a fixed
#                         problem over their threads; ycsb's operations are
#                         per thread, so workload.ops is scaled by CNS / C to
#                         keep its total).
#   <k>-<p>-fail.h5       p in FAIL_PROTOCOLS (default proactive baseline):
#                         CN 0 fail-stops (--fail 0@T_f) with the golden-image
#                         oracle on (diktamo.oracle; np 1 whatever NP is),
#                         T_f = 12.5 ms (§VII-B, §VII-C) when <k>-proactive.h5's
#                         region of interest lasts longer, else half of it,
#                         rounded down to 1 us (Fig. 15, Fig. 17 / Table III;
#                         the table prints each kernel's T_f), with
#                         FAIL_ARGS
#   <k>-<p>-sram<B>.h5    p in SRAM_PROTOCOLS (default proactive) with
#                         diktamo.sram_bytes = B bytes,
#                         B in SRAM_BYTES (default 65536; Table II's is 4096,
#                         <k>-proactive.h5): how much of proactive's time is
#                         its Logging Units' SRAM refusing early REPLs
# A file that exists is not run again (so the script resumes after an
# interruption); each run's wall time is printed, and the total at the end.
# Environment:
#   KERNELS    the kernels (default the nine of the paper)
#   SIZES      per-kernel workload.size, "kernel:size ..." (default: each
#              kernel's own default size), e.g. the scaled set of
#              tests/mpi/diktamo_scaled.sh
#   CNS, MNS   the machine (default 16 and 16)
#   FIG19_CNS  the smaller machines of Fig. 19 (default "4 8")
#   PARTS      which sets of runs, in this order (default
#              "main fail sram nr cn failrest"): main (Fig. 10-16), fail
#              (Fig. 15/17 with FAIL_PROTOCOLS' first), sram (the SRAM
#              sensitivity), nr (Fig. 18), cn (Fig. 19), failrest (the other
#              FAIL_PROTOCOLS)
#   SRAM_BYTES the Logging Unit SRAM sizes of part sram (default 65536)
#   SRAM_PROTOCOLS  the protocols of part sram (default proactive)
#   FAIL_ARGS  extra options of the recovery runs (default
#              "--set coherence.deadlock_timeout=20ms": a request waiting for a
#              line under recovery counts against the deadlock watchdog, and
#              when T_f is past a dump the MNs' MNMerge inflates their dumped
#              logs for longer than the default 100 us — canneal at 5.1 ms
#              stopped as a "deadlock" in the middle of its recovery)
#   FAIL_PROTOCOLS  the protocols of the recovery runs (default "proactive baseline")
#   CXLSIM     the binary (default build-release/src/cxlsim, else build/src/cxlsim)
# A scaled run for development (4 CNs, small sizes, about a minute):
#   CNS=4 MNS=4 FIG19_CNS="1 2" SIZES="ocean_cp:64 ocean_ncp:64 barnes:512 \
#     raytrace:32 fluidanimate:2048 streamcluster:256 canneal:1024 \
#     bodytrack:128 ycsb:1024" analysis/run_diktamo.sh results/diktamo-scaled 1
# Extra arguments go to every run, after the script's own --set options.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-results/diktamo}
NP=${2:-1}
shift $(( $# > 2 ? 2 : $# ))
CXLSIM=${CXLSIM:-$( [ -x "$SRC/build-release/src/cxlsim" ] && echo "$SRC/build-release/src/cxlsim" || echo "$SRC/build/src/cxlsim")}
KERNELS=${KERNELS:-"ocean_cp ocean_ncp barnes raytrace fluidanimate streamcluster canneal bodytrack ycsb"}
SIZES=${SIZES:-}
CNS=${CNS:-16}
MNS=${MNS:-16}
FIG19_CNS=${FIG19_CNS:-"4 8"}
PROTOCOLS="wb wt baseline parallel proactive proactive_noc"
PARTS=${PARTS:-"main fail sram nr cn failrest"}
SRAM_BYTES=${SRAM_BYTES:-65536}
SRAM_PROTOCOLS=${SRAM_PROTOCOLS:-proactive}
FAIL_ARGS=${FAIL_ARGS-"--set coherence.deadlock_timeout=20ms"}
FAIL_PROTOCOLS=${FAIL_PROTOCOLS:-"proactive baseline"}
export OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$OUT"

size_of() { # the SIZES entry of kernel $1, or nothing
	local ks
	for ks in $SIZES; do
		[ "${ks%%:*}" = "$1" ] && { echo "${ks##*:}"; return; }
	done
	return 0
}

total=0
runs=0
RUN_NP=$NP
run() { # name, then cxlsim --set options
	local f="$OUT/$1.h5"
	shift
	[ -e "$f" ] && { echo "$f: exists"; return; }
	local start end
	start=$(date +%s.%N)
	# a failed run (a recovery run whose oracle check fails, say) keeps its
	# file and its stderr beside it, and the experiment goes on
	"$SRC/mpi-configs/cxlsim-mpirun" -np "$RUN_NP" "$CXLSIM" --quiet "$SRC/inputs/wb-16x4.ini" \
		--set system.cns="$CNS" --set system.mns="$MNS" "$@" "${EXTRA[@]}" -o "$f" \
		>/dev/null 2>"$f.stderr" || echo "$f: exit status $? (see $f.stderr)"
	[ -s "$f.stderr" ] || rm -f "$f.stderr"
	end=$(date +%s.%N)
	local s
	s=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
	echo "$f: $s s"
	total=$(awk -v a="$total" -v b="$s" 'BEGIN { print a + b }')
	runs=$((runs + 1))
}

EXTRA=("$@")
sample=(--set output.sample_interval=100us --set output.sample="keeper/dump_bytes")
kargs() { # the --set options of kernel $1 (its size, if SIZES has one)
	local sz
	sz=$(size_of "$1")
	ks=(--set workload.kernel="$1")
	[ -n "$sz" ] && ks+=(--set workload.size="$sz")
	return 0
}
part_main() {
	for k in $KERNELS; do
		kargs "$k"
		for p in $PROTOCOLS; do
			run "$k-$p" "${ks[@]}" --set system.protocol="$p" "${sample[@]}"
		done
	done
}
fail_time() { # T_f of kernel $1 in ps: 12.5 ms, or half its proactive ROI if shorter
	/usr/bin/python3 - "$SRC/analysis" "$OUT/$1-proactive.h5" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import core_report, cxlsim_h5
roi = core_report.roi_ps(cxlsim_h5.load(sys.argv[2]))
print(min(12_500_000_000, roi // 2 // 1_000_000 * 1_000_000))
PY
}
fail_runs() { # the recovery runs of the protocols $@
	local k p tf
	for k in $KERNELS; do
		[ -e "$OUT/$k-proactive.h5" ] || { echo "$k: no $k-proactive.h5 for T_f"; continue; }
		tf=$(fail_time "$k")
		kargs "$k"
		for p in "$@"; do
			RUN_NP=1 run "$k-$p-fail" "${ks[@]}" --set system.protocol="$p" \
				--fail "0@$tf" --set diktamo.oracle=true $FAIL_ARGS
		done
	done
}
part_fail() {
	fail_runs ${FAIL_PROTOCOLS%% *}
}
part_failrest() {
	local rest=${FAIL_PROTOCOLS#* }
	[ "$rest" = "$FAIL_PROTOCOLS" ] || fail_runs $rest
}
part_sram() {
	for k in $KERNELS; do
		kargs "$k"
		for p in $SRAM_PROTOCOLS; do
			for b in $SRAM_BYTES; do
				run "$k-$p-sram$b" "${ks[@]}" --set system.protocol="$p" \
					--set diktamo.sram_bytes="${b}B" "${sample[@]}"
			done
		done
	done
}
part_nr() {
	for k in $KERNELS; do
		kargs "$k"
		for n in 2 4; do
			run "$k-proactive-nr$n" "${ks[@]}" --set system.protocol=proactive --set diktamo.replicas=$n
		done
	done
}
part_cn() {
	for k in $KERNELS; do
		sz=$(size_of "$k")
		for c in $FIG19_CNS; do
			kargs "$k"
			if [ "$k" = ycsb ]; then
				# k_ycsb.c: ops_per_thread = max(1, R / 32) at workload.ops = 0,
				# R = workload.size (default 16384); keep R / 32 x 4 CNS in total.
				r=${sz:-16384}
				per=$(( r / 32 > 0 ? r / 32 : 1 ))
				ks+=(--set workload.ops=$(( per * CNS / c )))
			fi
			for p in wb proactive; do
				run "$k-$p-cn$c" "${ks[@]}" --set system.protocol="$p" --set system.cns="$c"
			done
		done
	done
}
for part in $PARTS; do
	"part_$part"
done
echo "$runs runs: $total s of wall time"
/usr/bin/python3 "$SRC/analysis/diktamo_tables.py" all "$OUT" --png "$OUT/png" | tee "$OUT/tables.md"
