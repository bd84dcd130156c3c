#!/usr/bin/env bash
# DIKTAMO-proactive passes the protocol checker at np = 1 and gives the same
# counters, bit for bit, at np = 1, at one rank per node (np = 8: every REPL, VAL and log
# dump crosses ranks) and at an uneven explicit mapping — with adaptive-routing
# jitter on replication traffic and dumps every 20 us, so that the jitter's
# draws, the dump rounds and the Logging Units' back-pressure all take part;
# and at np = 1 with the dumps compressed on 1 and on 3 threads.
#   diktamo_ranks.sh KERNEL SIZE
. "$(dirname "$0")/common.sh"
K=${1:-ocean_cp}
SIZE=${2:-64}
args=("$SRC/inputs/wb-16x4.ini" --set system.cns=4 --set system.mns=4
	--set system.protocol=proactive --set workload.kernel="$K" --set workload.size="$SIZE"
	--set fabric.repl_jitter=30ns --set diktamo.dump_period=20us)
run 1 "$WORK/check.h5" "${args[@]}" --set diktamo.check=true --set diktamo.compress_threads=3
$H5CHECK status "$WORK/check.h5" complete
# (the checker adds its own counter, diktamo/checked_words: compared without it)
run 1 "$WORK/np1.h5" "${args[@]}"
run 8 "$WORK/np8.h5" "${args[@]}"
run 3 "$WORK/np3.h5" "${args[@]}" --set engine.mapping=explicit --set engine.map="2*5 0*1 1*2"
# The dumps' chunks compressed on 1 or 3 threads: the same counters (the MNs' log bytes among them).
run 1 "$WORK/t1.h5" "${args[@]}" --set diktamo.compress_threads=1
run 1 "$WORK/t3.h5" "${args[@]}" --set diktamo.compress_threads=3
$H5CHECK same "$WORK/np1.h5" "$WORK/np8.h5" "$WORK/np3.h5" "$WORK/t1.h5" "$WORK/t3.h5"
# The checker is a whole-process check: refused, with one line, when the nodes are spread.
run_fail 3 "$WORK/spread.h5" "${args[@]}" --set diktamo.check=true
grep -q "diktamo.check needs every node in one process" "$WORK/spread.h5.stderr" || {
	cat "$WORK/spread.h5.stderr"; exit 1; }
echo "diktamo ranks: ok"
