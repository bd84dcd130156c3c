#!/usr/bin/env bash
# Bad [axle] input: one line naming file, line and key; non-zero exit; no output.
. "$(dirname "$0")/common.sh"
expect_error() { # expect_error PATTERN args...
	local pat=$1; shift
	set +e
	timeout -k 5 60 "$MPIRUN" -np 2 "$CXLSIM" --quiet -o "$WORK/never.h5" --model axle "$@" \
		>"$WORK/o" 2>"$WORK/e"
	local rc=$?
	set -e
	[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ] || { echo "exit $rc for: $*"; exit 1; }
	grep -q -- "$pat" "$WORK/e" || { echo "no '$pat' in:"; cat "$WORK/e"; exit 1; }
	local n
	n=$(grep -c "^cxlsim: " "$WORK/e" || true)
	[ "$n" -eq 1 ] || { echo "expected one error line, got $n:"; cat "$WORK/e"; exit 1; }
	[ ! -e "$WORK/never.h5" ] || { echo "output written for bad input"; exit 1; }
}
printf '[axle]\nworkload = llm\nheads = 7\n' >"$WORK/heads.ini"
expect_error "heads.ini:3: axle.heads: must divide axle.hidden" "$WORK/heads.ini"
printf '[axle]\nmechanism = axle\npoll_intervall = 50ns\n' >"$WORK/typo.ini"
expect_error "typo.ini:3: unknown key axle.poll_intervall" "$WORK/typo.ini"
printf '[axle]\n\nslot_size = 128B\n' >"$WORK/slot.ini"
expect_error "slot.ini:3: axle.slot_size" "$WORK/slot.ini"
expect_error "axle.mechanism" --set axle.mechanism=dma
printf '[axle]\nstreaming_factor = 0\n' >"$WORK/sf.ini"
expect_error "axle.sf_pct: must be above 0" "$WORK/sf.ini"
echo "axle bad input: ok"
