#!/usr/bin/env bash
# TSO litmus tests on the simulated machine (src/workload/litmus.c): MP, SB,
# LB, IRIW and 2+2W, with and without fences, ITER iterations each with
# randomised timing, every participant on its own CN (4 CNs x 1 core, 2 MNs),
# at two seeds. Outcomes TSO forbids never appear; SB's store-buffering
# outcome (both loads 0) appears without a fence and not with one.
# Then the checks fail when they should: with fences that drain nothing
# (core.fault=fence_noop) SB-with-fences shows the forbidden outcome; with an
# unordered core (core.fault=unordered: store buffer drained out of order, no
# load replay) MP shows it.
#   litmus.sh [ITER] [NP] [SEEDS]
. "$(dirname "$0")/common.sh"
ITER=${1:-1000}
NP=${2:-1}
SEEDS=${3:-1 2}
base=(--model memsys --end 2s --set system.cns=4 --set system.mns=2
      --set system.cores_per_cn=1 --set workload.size="$ITER")

report() { /usr/bin/python3 "$SRC/analysis/core_report.py" "$1" --json; }
field() { /usr/bin/python3 -c "import json,sys; r=json.load(open('$1'))['results']; print(r.get('$2', 0))"; }

for seed in $SEEDS; do
	for t in mp sb lb iriw 2+2w; do
		for f in "" _fence; do
			k="litmus_$t$f"
			out="$WORK/$k.$seed.h5"
			run "$NP" "$out" "${base[@]}" --set workload.kernel="$k" --set workload.seed=$seed
			$H5CHECK status "$out" complete
			report "$out" >"$out.json"
			it=$(field "$out.json" iterations)
			forb=$(field "$out.json" forbidden)
			relax=$(field "$out.json" relaxed)
			[ "$it" = "$ITER" ] || { echo "$k: $it iterations, expected $ITER"; exit 1; }
			[ "$forb" = 0 ] || { echo "$k seed $seed: $forb outcomes TSO forbids"; cat "$out.json"; exit 1; }
			if [ "$k" = litmus_sb ]; then
				[ "$relax" -gt 0 ] || { echo "SB without a fence never showed r0=r1=0"; exit 1; }
			fi
			if [ "$k" = litmus_sb_fence ]; then
				[ "$relax" = 0 ] || { echo "SB with fences showed r0=r1=0 $relax times"; exit 1; }
			fi
			echo "$k seed $seed: $it iterations, forbidden 0, relaxed $relax"
		done
	done
done

# The checks can fail.
out="$WORK/fence_noop.h5"
run "$NP" "$out" "${base[@]}" --set workload.kernel=litmus_sb_fence --set core.fault=fence_noop
report "$out" >"$out.json"
forb=$(field "$out.json" forbidden)
[ "$forb" -gt 0 ] || { echo "fences that drain nothing went unnoticed by SB"; exit 1; }
echo "core.fault=fence_noop: SB with fences shows the forbidden outcome $forb times"
out="$WORK/unordered.h5"
run "$NP" "$out" "${base[@]}" --set workload.kernel=litmus_mp --set core.fault=unordered
report "$out" >"$out.json"
forb=$(field "$out.json" forbidden)
[ "$forb" -gt 0 ] || { echo "an unordered core went unnoticed by MP"; exit 1; }
echo "core.fault=unordered: MP shows the forbidden outcome $forb times"
echo "litmus: ok"
