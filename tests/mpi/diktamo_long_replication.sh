#!/usr/bin/env bash
# Regression: a replication that waits at its core's store-buffer head while
# the CN's other cores make more replications than the sender's table has
# slots. The table is indexed by id modulo its size, and ids were consecutive,
# so the waiting one's slot came round again and the run stopped with "BUG:
# diktamo: replication N still in flight when N + slots reuses its slot"
# (16 x 4 proactive_noc with a 64 KB SRAM, ocean_ncp and fluidanimate; here
# the same on 4 CNs with 16-entry store queues, whose table has 128 slots).
# A new id now skips slots in use. Checked: the run completes with the
# protocol checker on, at np 1 and at one rank per node with the same
# counters, and it did replicate (REPLs sent, every store VALed).
. "$(dirname "$0")/common.sh"
args=("$SRC/inputs/wb-16x4.ini" --set system.cns=4 --set system.mns=4
	--set system.protocol=proactive_noc --set workload.kernel=ocean_cp --set workload.size=64
	--set diktamo.sram_bytes=65536 --set core.sq=16)
run 1 "$WORK/np1.h5" "${args[@]}" --set diktamo.check=true
$H5CHECK status "$WORK/np1.h5" complete
run 1 "$WORK/a.h5" "${args[@]}"
run 8 "$WORK/b.h5" "${args[@]}"
$H5CHECK same "$WORK/a.h5" "$WORK/b.h5"
/usr/bin/python3 - "$WORK/np1.h5" "$SRC/analysis" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
import cxlsim_h5
r = cxlsim_h5.load(sys.argv[1])
tot = lambda k: sum(s.get(k, 0) for s in r.nodes.values())
repls, vals = tot("diktamo/repls_sent"), tot("diktamo/vals_sent")
if repls < 10000 or vals == 0:
    sys.exit(f"expected a replicating run: {repls} REPLs, {vals} VALs")
print(f"complete with the checker: {repls} REPLs, {vals} VALs")
PY
