#!/usr/bin/env bash
# --kill NODE@TIME: the node's rank SIGKILLs itself at the first window
# boundary at or after TIME; the survivors detect the silence, agree, and
# finish. Whenever the killed node is alone on its rank, the results are the
# same at every run and rank count, and the failure is recorded at TIME.
# Usage: phold_kill.sh NODE   (node 5 of 6, or node 0 to kill rank 0)
. "$(dirname "$0")/common.sh"
node=${1:-5}
KT=100000000 # 100 us in ps
ARGS=(--set phold.lps=6 --set engine.end_time=300us --set phold.remote=0.5 --seed 3
      --set engine.failure_timeout=1.0 --kill "$node@100us")
if [ "$node" = 5 ]; then
	maps=("2:0 0 0 0 0 1" "3:0 0 0 1 1 2" "6:0 1 2 3 4 5" "3:0 0 0 1 1 2")
else
	maps=("2:0 1 1 1 1 1" "3:0 1 1 2 2 2" "6:0 1 2 3 4 5" "2:0 1 1 1 1 1")
fi
files=()
i=0
for m in "${maps[@]}"; do
	np=${m%%:*}
	f="$WORK/kill$i.h5"
	run "$np" "$f" "${ARGS[@]}" --set engine.mapping=explicit --set "engine.map=${m#*:}"
	$H5CHECK status "$f" complete-with-failures
	$H5CHECK failed "$f" "$node"
	$H5CHECK failtime "$f" "$KT"
	$H5CHECK cause "$f" injected
	files+=("$f")
	i=$((i + 1))
done
$H5CHECK same "${files[@]}"
# The kill changes the run: it must differ from the run without it.
run 3 "$WORK/nokill.h5" --set phold.lps=6 --set engine.end_time=300us --set phold.remote=0.5 --seed 3
if $H5CHECK same "$WORK/nokill.h5" "${files[0]}" >/dev/null; then
	echo "the kill had no effect on the results"; exit 1
fi
echo "phold deterministic kill of node $node: ok"
