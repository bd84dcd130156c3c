#!/usr/bin/env bash
# PHOLD benchmark with ROSS's semantics, for comparison with ROSS's PHOLD on the
# same machine (a benchmark, not a timed test: it asserts nothing about speed).
#
# Each new event at now + lookahead + Exp(mean - lookahead); with probability
# `remote` the destination is uniform over all LPs (itself included), else
# itself; one starting event per LP; nothing at or past the end time. The rate
# is committed events over the wall time of the event loop (rank 0's loop,
# which spans the whole parallel loop), the same definition ROSS prints.
#
# Usage: tests/bench/phold_bench.sh [REPEATS]  (env CXLSIM, SRC as for the tests)
set -euo pipefail
: "${CXLSIM:?path to cxlsim}" "${SRC:?source dir}"
reps=${1:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-24s %3s %12s %14s %10s %10s\n' config np events "events/s(med)" windows "sync%"
for cfg in "1024:5000" "16:50000"; do
	lps=${cfg%%:*}
	end=${cfg#*:}
	for np in 1 2; do
		rates=()
		for _ in $(seq "$reps"); do
			"$SRC/mpi-configs/cxlsim-mpirun" -np "$np" "$CXLSIM" --quiet -o "$tmp/b.h5" \
				--set phold.lps="$lps" --set phold.mean=1.0 --set phold.lookahead=0.1 \
				--set phold.remote=0.25 --set engine.end_time="${end}us" --seed 1 >/dev/null
			line=$(/usr/bin/python3 - "$tmp/b.h5" <<'PY'
import sys, os
sys.path.insert(0, os.path.join(os.environ["SRC"], "analysis"))
import cxlsim_h5
r = cxlsim_h5.load(sys.argv[1])
ev = int(r.engine["events"].sum())
wall = float(r.engine["loop_wall_s"].max())
sync = float(r.engine["sync_wall_s"].sum()) / max(1e-9, float(r.engine["loop_wall_s"].sum()))
print(ev, ev / wall, int(r.engine["windows"].max()), 100 * sync)
PY
)
			rates+=("$line")
		done
		med=$(printf '%s\n' "${rates[@]}" | sort -k2 -g | sed -n "$(( (reps + 1) / 2 ))p")
		read -r ev rate win sync <<<"$med"
		printf '%-24s %3s %12s %14.3e %10s %9.1f%%\n' "PHOLD ${lps} LPs end ${end}" "$np" "$ev" "$rate" "$win" "$sync"
	done
done
