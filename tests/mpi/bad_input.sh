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
# A program path mpirun cannot execute: Open MPI with --enable-recovery
# would wait for ever without a word; the wrapper says so within seconds.
start=$(date +%s)
set +e
timeout 60 "$MPIRUN" -np 2 "$WORK/no-such-cxlsim" >"$WORK/nolaunch.out" 2>&1
rc=$?
set -e
took=$(($(date +%s) - start))
[ "$rc" -eq 69 ] || { cat "$WORK/nolaunch.out"; echo "FAIL: missing program: status $rc, expected 69"; exit 1; }
grep -q "launched no rank" "$WORK/nolaunch.out" || { cat "$WORK/nolaunch.out"; echo "FAIL: no message"; exit 1; }
[ "$took" -le 20 ] || { echo "FAIL: missing program took $took s"; exit 1; }
echo "bad input: ok"
