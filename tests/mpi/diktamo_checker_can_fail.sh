#!/usr/bin/env bash
# The DIKTAMO checkers catch the bugs injected with diktamo.fault: a store
# committed before its REPL_ACKs (the sender's own check, always on) and a
# VAL that never reaches a line's saver (the protocol checker at the end: the
# store's N_r copies are incomplete and it never reaches an MN's log). Each
# run ends with exit status 5 and a message naming the store.
. "$(dirname "$0")/common.sh"
args=("$SRC/inputs/wb-16x4.ini" --set system.cns=4 --set system.mns=4
	--set system.protocol=proactive --set workload.kernel=ocean_cp --set workload.size=32
	--set diktamo.check=true --set diktamo.dump_period=20us)
expect_status() {
	local want=$1 pat=$2 out=$3
	shift 3
	set +e
	timeout -k 5 240 "$MPIRUN" -np 1 "$CXLSIM" --quiet -o "$out" "$@" >"$out.stdout" 2>"$out.stderr"
	local rc=$?
	set -e
	[ $rc -eq "$want" ] || { echo "exit $rc, expected $want"; cat "$out.stderr"; exit 1; }
	grep -q -- "$pat" "$out.stderr" || { echo "no '$pat' in:"; cat "$out.stderr"; exit 1; }
	$H5CHECK status "$out" error
}
expect_status 5 "committed a store to 0x[0-9a-f]* with 0 of its 3 REPL_ACKs" \
	"$WORK/early.h5" "${args[@]}" --set diktamo.fault=commit_before_ack
expect_status 5 "diktamo protocol checker: committed store .* to 0x[0-9a-f]* in no Logging Unit and no MN log" \
	"$WORK/drop.h5" "${args[@]}" --set diktamo.fault=drop_val
# Without the fault the same runs pass the same checks.
run 1 "$WORK/ok.h5" "${args[@]}"
$H5CHECK status "$WORK/ok.h5" complete
echo "diktamo checker can fail: ok"
