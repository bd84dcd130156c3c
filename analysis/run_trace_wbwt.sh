#!/usr/bin/env bash
# Recordings (cxlsim-trace record) replayed on 16 CNs x 4 cores + 16 MNs
# under write-back and write-through, one HDF5 file per run, then the table
# (analysis/trace_table.py): instructions, remote stores per 1000
# instructions, WB and WT time, WT / WB.
#
#   analysis/run_trace_wbwt.sh OUT REC_DIR... [-- extra cxlsim args]
#   e.g. inputs/real_programs.sh record /tmp/rec && analysis/run_trace_wbwt.sh /tmp/wbwt /tmp/rec/*/
#
# A recording with more threads than 64 cores is replayed on as many CNs as
# it needs (4 cores each). Replays run with trace.check = false (timing
# runs; the checks add atomics) and a 10 s cap on simulated time. CXLSIM
# and NP as for run_wbwt.sh; a run whose file exists is not redone.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:?OUT REC_DIR...}
shift
RECS=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do RECS+=("${1%/}"); shift; done
[ "${1:-}" = -- ] && shift
NP=${NP:-1}
CXLSIM=${CXLSIM:-$( [ -x "$SRC/build-release/src/cxlsim" ] && echo "$SRC/build-release/src/cxlsim" || echo "$SRC/build/src/cxlsim")}
mkdir -p "$OUT"
for r in "${RECS[@]}"; do
	name=$(basename "$r")
	threads=$(sed -n 's/^threads = //p' "$r/trace.ini")
	cns=16
	[ "$threads" -gt 64 ] && cns=$(( (threads + 3) / 4 ))
	for p in wb wt; do
		f="$OUT/$name-$p.h5"
		[ -e "$f" ] && { echo "$f: exists"; continue; }
		start=$(date +%s)
		"$SRC/mpi-configs/cxlsim-mpirun" -np "$NP" "$CXLSIM" --quiet "$SRC/inputs/$p-16x4.ini" \
			"$r/trace.ini" --set system.cns=$cns --set trace.check=false --end 10s \
			-o "$f" "$@"
		echo "$f: $(( $(date +%s) - start )) s"
	done
done
/usr/bin/python3 "$SRC/analysis/trace_table.py" "$OUT"
