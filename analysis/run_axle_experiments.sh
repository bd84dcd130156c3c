#!/usr/bin/env bash
# Runs the AXLE experiments behind Figs. 10 and 12-16 of papers/axle.md and
# leaves one HDF5 file per run in OUTDIR; analysis/axle_tables.py turns them
# into tables. Not part of CI (a few minutes on 2 cores).
#
#   analysis/run_axle_experiments.sh OUTDIR [small|full]    (default full)
#
# Environment: CXLSIM (default build/src/cxlsim), JOBS (parallel runs,
# default 2), NP (ranks per run, default 1: results are the same at any
# rank count, the tests check it; NP > 1 runs through mpi-configs/cxlsim-mpirun).
# Every run uses inputs/axle-table3.ini (Table III) plus the settings in its name:
#   fig10-WL-{rp,bs,irq,p1,p10,p100}   mechanisms; AXLE at 50 ns, 500 ns, 5 us polling
#                                      (Figs. 12 and 13 reuse rp, bs, p10, p100)
#   fig14-WL-sf{1..64},sfpct{25,50,100} streaming factor 32 B x N, or % of the result
#   fig15-WL-{rr,fifo}-ooo{1,0}         scheduler (both sides) and OoO streaming
#   fig16-WL-cap{100,50,25,12.5}        DMA slot capacity, % of a round's slots
# A run that fails (the LLM deadlock at 12.5 %) still leaves its file, with
# the error as its status.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: run_axle_experiments.sh OUTDIR [small|full]}
size=${2:-full}
CXLSIM=${CXLSIM:-$here/build/src/cxlsim}
JOBS=${JOBS:-2}
NP=${NP:-1}
mkdir -p "$out"
WLS="knn_a knn_b knn_c sssp pagerank ssb_q11 ssb_q12 llm dlrm"
jobs=$(mktemp)
trap 'rm -f "$jobs"' EXIT
add() { # add NAME args...
	local name=$1; shift
	echo "$name --set axle.size=$size $*" >>"$jobs"
}
for wl in $WLS; do
	w="--set axle.workload=$wl"
	add "fig10-$wl-rp" "$w --set axle.mechanism=rp"
	add "fig10-$wl-bs" "$w --set axle.mechanism=bs"
	add "fig10-$wl-irq" "$w --set axle.mechanism=axle_irq"
	add "fig10-$wl-p1" "$w --set axle.poll_interval=50ns"
	add "fig10-$wl-p10" "$w --set axle.poll_interval=500ns"
	add "fig10-$wl-p100" "$w --set axle.poll_interval=5us"
	for n in 1 2 4 8 16 32 64; do
		add "fig14-$wl-sf$n" "$w --set axle.streaming_factor=$((32 * n))B"
	done
	for pct in 25 50 100; do
		add "fig14-$wl-sfpct$pct" "$w --set axle.streaming_factor=0 --set axle.sf_pct=$pct"
	done
	for sched in rr fifo; do
		for ooo in 1 0; do
			add "fig15-$wl-$sched-ooo$ooo" "$w --set axle.ccm_sched=$sched --set axle.host_sched=$sched --set axle.ooo=$([ $ooo = 1 ] && echo true || echo false)"
		done
	done
	for cap in 100 50 25 12.5; do
		add "fig16-$wl-cap$cap" "$w --set axle.dma_slots_pct=$cap"
	done
done
launch="$CXLSIM"
[ "$NP" -gt 1 ] && launch="$here/mpi-configs/cxlsim-mpirun -np $NP $CXLSIM"
export launch out here
n=$(wc -l <"$jobs")
echo "running $n simulations into $out ($JOBS at a time)"
# shellcheck disable=SC2016
xargs -P "$JOBS" -L 1 bash -c 'name=$0; $launch --quiet "$here/inputs/axle-table3.ini" -o "$out/$name.h5" "$@" \
	>"$out/$name.log" 2>&1 || echo "$name: exit $? ($(grep -m1 -o "error:.*" "$out/$name.log" | cut -c1-100))"' <"$jobs"
echo "done: /usr/bin/python3 $here/analysis/axle_tables.py $out"
