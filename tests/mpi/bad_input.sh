#!/usr/bin/env bash
# Bad input: one clear line naming file, line and key; every rank exits
# non-zero; no hang; no output file passed off as complete.
. "$(dirname "$0")/common.sh"
cfg="$WORK/bad.ini"
printf '[engine]\nend_time = 1ms\nlookahed = 100ns\n' >"$cfg"
expect_error() { # expect_error PATTERN args...
	local pat=$1; shift
	set +e
	timeout -k 5 60 "$MPIRUN" -np 3 "$CXLSIM" --quiet -o "$WORK/never.h5" "$@" \
		>"$WORK/o" 2>"$WORK/e"
	local rc=$?
	set -e
	[ $rc -ne 0 ] || { echo "exit 0 for bad input: $*"; exit 1; }
	[ $rc -ne 124 ] && [ $rc -ne 137 ] || { echo "hang for bad input: $*"; exit 1; }
	grep -q -- "$pat" "$WORK/e" || { echo "no '$pat' in:"; cat "$WORK/e"; exit 1; }
	local n
	n=$(grep -c "^cxlsim: " "$WORK/e" || true)
	[ "$n" -eq 1 ] || { echo "expected one error line, got $n:"; cat "$WORK/e"; exit 1; }
	[ ! -e "$WORK/never.h5" ] || { echo "output written for bad input"; exit 1; }
}
expect_error "bad.ini:3: unknown key engine.lookahed" "$cfg"
expect_error "engine.end_time" --set engine.end_time=fast
expect_error "unknown section" --set nosuch.key=1
expect_error "no-such.ini" "$WORK/no-such.ini"
expect_error "kill" --kill 99@1us
expect_error "unknown option" --frobnicate
echo "bad input: ok"
