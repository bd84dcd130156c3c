#!/usr/bin/env bash
# A CN fails under the memory system (src/node/memsys.c, "Failures").
#   memsys_failure.sh wb       --fail of CN 1 at np 1 under WB (the random tester):
#                              complete-with-failures; the homes' owned-at-failure
#                              lines are exactly the CN's own E/M lines (plus grants
#                              in flight to it), read from its state kept in the
#                              process; its unsaved words are reported lost; then
#                              --kill of the same CN at the same time at np 2 (the
#                              CN alone on its rank) gives the same list and the
#                              same survivors, checksum included
#   memsys_failure.sh np17     the same on 16 CNs + 4 MNs, --kill at np 17
#   memsys_failure.sh kernel   ocean_cp on 4 CNs x 4 cores: under WB the failed CN
#                              loses words, under WT none; the survivors' barriers
#                              shrink to the live threads, they run to the end with
#                              the kernel's own checks waived (said on stderr), and
#                              the run is complete-with-failures; with the oracle
#                              (diktamo.oracle) WT's coherent image equals the
#                              committed one and WB's does not: an error naming
#                              the lost words
#   memsys_failure.sh mn       --kill of an MN: outside the failure model, an error
#                              naming it, non-zero exit
. "$(dirname "$0")/common.sh"
CHECK="/usr/bin/python3 $SRC/tests/mpi/memsys_failure.py"
case ${1:?case} in
wb)
	t=(--set tester.ops=3000 "$SRC/inputs/coherence-tester.ini")
	run 1 "$WORK/fail.h5" "${t[@]}" --fail 1@200us
	$H5CHECK status "$WORK/fail.h5" complete-with-failures
	$H5CHECK failed "$WORK/fail.h5" 1
	$CHECK held "$WORK/fail.h5" 1
	$CHECK lost "$WORK/fail.h5" 1 gt 0
	run 2 "$WORK/kill.h5" "${t[@]}" --set engine.mapping=explicit --set "engine.map=0 1 0 0 0 0" \
		--kill 1@200us
	$H5CHECK status "$WORK/kill.h5" complete-with-failures
	$H5CHECK failtime "$WORK/kill.h5" 200000000
	$CHECK same-owned "$WORK/fail.h5" "$WORK/kill.h5"
	$CHECK survivors "$WORK/fail.h5" "$WORK/kill.h5"
	;;
np17)
	t=(--set tester.ops=1000 "$SRC/inputs/coherence-tester.ini" --set system.cns=16
	   --set system.mns=4)
	run 1 "$WORK/fail.h5" "${t[@]}" --fail 5@100us
	$H5CHECK status "$WORK/fail.h5" complete-with-failures
	$CHECK held "$WORK/fail.h5" 5
	map="0 1 2 3 4 16 5 6 7 8 9 10 11 12 13 14 15 15 15 15"
	RUN_TIMEOUT=280 run 17 "$WORK/kill.h5" "${t[@]}" --set engine.mapping=explicit \
		--set "engine.map=$map" --kill 5@100us
	$H5CHECK status "$WORK/kill.h5" complete-with-failures
	$H5CHECK failed "$WORK/kill.h5" 5
	$CHECK same-owned "$WORK/fail.h5" "$WORK/kill.h5"
	$CHECK survivors "$WORK/fail.h5" "$WORK/kill.h5"
	;;
kernel)
	k=("$SRC/inputs/wb-16x4.ini" --set system.cns=4 --set system.mns=4
	   --set workload.kernel=ocean_cp --set workload.size=64 --end 1ms)
	for p in wb wt; do
		run 1 "$WORK/$p.h5" "${k[@]}" --set system.protocol=$p --fail 1@60us
		$H5CHECK status "$WORK/$p.h5" complete-with-failures
		$CHECK held "$WORK/$p.h5" 1
		$CHECK blocked "$WORK/$p.h5" eq 0
		grep -q "checks were waived after the CN failure" "$WORK/$p.h5.stderr" ||
			{ echo "waived checks not reported"; cat "$WORK/$p.h5.stderr"; exit 1; }
	done
	$CHECK lost "$WORK/wb.h5" 1 gt 0
	$CHECK lost "$WORK/wt.h5" 1 eq 0
	run 1 "$WORK/wt-oracle.h5" "${k[@]}" --set system.protocol=wt --fail 1@60us \
		--set diktamo.oracle=true -v
	$H5CHECK status "$WORK/wt-oracle.h5" complete-with-failures
	grep -q "golden image after the failure .*: identical" "$WORK/wt-oracle.h5.stderr" ||
		{ echo "no identical image under WT"; cat "$WORK/wt-oracle.h5.stderr"; exit 1; }
	run_fail 1 "$WORK/wb-oracle.h5" "${k[@]}" --set system.protocol=wb --fail 1@60us \
		--set diktamo.oracle=true
	grep -q "golden image after the failure .*: [1-9][0-9]* of [0-9]* written words differ" \
		"$WORK/wb-oracle.h5.stderr" || { echo "WB's loss not reported"; cat "$WORK/wb-oracle.h5.stderr"; exit 1; }
	$H5CHECK status "$WORK/wb-oracle.h5" "error: golden image"
	;;
mn)
	run_fail 2 "$WORK/mn.h5" --set tester.ops=3000 "$SRC/inputs/coherence-tester.ini" \
		--set engine.mapping=explicit --set "engine.map=0 0 0 0 1 0" --kill 4@100us
	grep -q "memory node 4 failed at 100000000 ps: MN failures are outside the failure model" \
		"$WORK/mn.h5.stderr" || { echo "MN failure not reported:"; cat "$WORK/mn.h5.stderr"; exit 1; }
	$H5CHECK status "$WORK/mn.h5" "error: memory node 4 failed"
	;;
*)
	echo "unknown case $1"; exit 2 ;;
esac
echo "memsys failure $1: ok"
