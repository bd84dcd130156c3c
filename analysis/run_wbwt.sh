#!/usr/bin/env bash
# DIKTAMO Fig. 2 / Fig. 10 (WB and WT bars): every workload on 16 CNs x 4
# cores + 16 MNs under the write-back and the write-through protocol, one
# HDF5 file per run in OUT, then the table (analysis/wbwt_table.py).
#   analysis/run_wbwt.sh [OUT] [NP] [extra cxlsim args...]
#   e.g. analysis/run_wbwt.sh results/wbwt 1
#        analysis/run_wbwt.sh results/wbwt-small 1 --set workload.size=...  (scaled)
# CXLSIM (default build-release/src/cxlsim, else build/src/cxlsim) is the binary.
# A run that exists already (OUT/<kernel>-<protocol>.h5) is not redone.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-results/wbwt}
NP=${2:-1}
shift $(( $# > 2 ? 2 : $# ))
CXLSIM=${CXLSIM:-$( [ -x "$SRC/build-release/src/cxlsim" ] && echo "$SRC/build-release/src/cxlsim" || echo "$SRC/build/src/cxlsim")}
KERNELS=${KERNELS:-"ocean_cp ocean_ncp barnes raytrace fluidanimate streamcluster canneal bodytrack ycsb"}
mkdir -p "$OUT"
for k in $KERNELS; do
	for p in wb wt; do
		f="$OUT/$k-$p.h5"
		[ -e "$f" ] && { echo "$f: exists"; continue; }
		start=$(date +%s)
		"$SRC/mpi-configs/cxlsim-mpirun" -np "$NP" "$CXLSIM" --quiet "$SRC/inputs/$p-16x4.ini" \
			--set workload.kernel="$k" -o "$f" "$@"
		echo "$f: $(( $(date +%s) - start )) s"
	done
done
/usr/bin/python3 "$SRC/analysis/wbwt_table.py" "$OUT"
