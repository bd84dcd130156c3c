#!/usr/bin/env bash
# Bad input: one clear line naming file, line and key; every rank exits
# non-zero; no hang; no output file passed off as complete.
. "$(dirname "$0")/common.sh"
cfg="$WORK/bad.ini"
printf '[engine]\nend_time = 1ms\nlookahed = 100ns\n' >"$cfg"
expect_error "bad.ini:3: unknown key engine.lookahed" "$cfg"
expect_error "engine.end_time" --set engine.end_time=fast
expect_error "unknown section" --set nosuch.key=1
expect_error "no-such.ini" "$WORK/no-such.ini"
expect_error "kill" --kill 99@1us
expect_error "unknown option" --frobnicate
echo "bad input: ok"
