#!/usr/bin/env bash
# The default mapping (engine.mapping = balanced, src/app/rank_map.c) on the
# 16x4 WB run: at np = 2 and np = 4 every rank handles within 10 % of the
# mean share of events and holds CNs (block put all 16 CNs on rank 0 at
# np = 2: 4.11 M of 4.41 M events), each node type is spread evenly, and the
# results are those of np = 1 and of block and round_robin, bit for bit
# (checksum and every counter of every node).
#   balanced_mapping.sh [KERNEL SIZE]
. "$(dirname "$0")/common.sh"
K=${1:-ocean_cp}
SIZE=${2:-64}
args=("$SRC/inputs/wb-16x4.ini" --set workload.kernel="$K" --set workload.size="$SIZE")
run 1 "$WORK/np1.h5" "${args[@]}"
run 2 "$WORK/np2.h5" "${args[@]}"
run 4 "$WORK/np4.h5" "${args[@]}"
run 3 "$WORK/np3.h5" "${args[@]}"
run 2 "$WORK/block2.h5" "${args[@]}" --set engine.mapping=block
run 3 "$WORK/rr3.h5" "${args[@]}" --set engine.mapping=round_robin
$H5CHECK same "$WORK/np1.h5" "$WORK/np2.h5" "$WORK/np4.h5" "$WORK/np3.h5" "$WORK/block2.h5" \
	"$WORK/rr3.h5"
/usr/bin/python3 - "$WORK" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ["SRC"], "analysis"))
import cxlsim_h5
work = sys.argv[1]
for name, np_, exact in (("np2", 2, True), ("np4", 4, True), ("np3", 3, False)):
    r = cxlsim_h5.load(f"{work}/{name}.h5")
    ev = [int(x) for x in r.engine["events"]]
    ranks = [int(x) for x in r.node_rank]
    types = list(r.node_type)
    assert len(ev) == np_, (name, ev)
    mean = sum(ev) / np_
    for t in sorted(set(types)):
        per = [sum(1 for n, tt in enumerate(types) if tt == t and ranks[n] == q) for q in range(np_)]
        assert max(per) - min(per) <= 1, f"{name}: {t} nodes per rank {per}: not spread evenly"
    worst = max(abs(x - mean) / mean for x in ev)
    print(f"{name}: events per rank {ev}, worst {100 * worst:.1f}% from the mean")
    # np = 3 cannot split 16 + 16 nodes evenly; its bound is looser.
    limit = 0.10 if exact else 0.20
    assert worst <= limit, f"{name}: a rank is {100 * worst:.1f}% from the mean share of events"
    b = cxlsim_h5.load(f"{work}/block2.h5")
    if name == "np2":
        bev = [int(x) for x in b.engine["events"]]
        assert max(bev) > 1.5 * max(ev), f"block {bev} vs balanced {ev}: the check cannot tell them apart"
PY
echo "balanced mapping: ok"
