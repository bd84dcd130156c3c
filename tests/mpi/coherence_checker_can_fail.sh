#!/usr/bin/env bash
# The checks can fail: with a stale-copy bug injected (every CN acknowledges
# invalidations but keeps its copy: coherence.fault = ack_inv_keep_copy), the
# exact check must stop the run with a coherence violation naming the node,
# the core, the address and the stale value. (The per-core checks alone cannot
# see a copy that keeps returning an old value; that is why the exact check
# exists.)
. "$(dirname "$0")/common.sh"
out="$WORK/stale.h5"
set +e
timeout -k 5 120 "$MPIRUN" -np 1 "$CXLSIM" --quiet -o "$out" --model memsys --end 1s \
	--set tester.ops=3000 --set tester.exact_check=true \
	--set coherence.fault=ack_inv_keep_copy >"$out.stdout" 2>"$out.stderr"
rc=$?
set -e
[ $rc -ne 0 ] && [ $rc -ne 124 ] || { echo "exit $rc for an injected stale copy"; cat "$out.stderr"; exit 1; }
grep -qE "coherence violation \(exact check\): node [0-9]+ core [0-9]+ load of 0x[0-9a-f]+ .* returned 0x[0-9a-f]+, but the latest write" "$out.stderr" || {
	echo "no exact-check violation reported:"; cat "$out.stderr"; exit 1; }
$H5CHECK status "$out" "error: coherence violation"
# The same run without the fault passes the exact check.
run 1 "$WORK/ok.h5" --model memsys --end 1s --set tester.ops=3000 --set tester.exact_check=true
$H5CHECK status "$WORK/ok.h5" complete
echo "checker can fail: ok"
