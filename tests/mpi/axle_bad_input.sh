#!/usr/bin/env bash
# Bad [axle] input: one line naming file, line and key; non-zero exit; no output.
. "$(dirname "$0")/common.sh"
ERR_NP=2
printf '[axle]\nworkload = llm\nheads = 7\n' >"$WORK/heads.ini"
expect_error "heads.ini:3: axle.heads: must divide axle.hidden" --model axle "$WORK/heads.ini"
printf '[axle]\nmechanism = axle\npoll_intervall = 50ns\n' >"$WORK/typo.ini"
expect_error "typo.ini:3: unknown key axle.poll_intervall" --model axle "$WORK/typo.ini"
printf '[axle]\n\nslot_size = 128B\n' >"$WORK/slot.ini"
expect_error "slot.ini:3: axle.slot_size" --model axle "$WORK/slot.ini"
expect_error "axle.mechanism" --model axle --set axle.mechanism=dma
printf '[axle]\nstreaming_factor = 0\n' >"$WORK/sf.ini"
expect_error "axle.sf_pct: must be above 0" --model axle "$WORK/sf.ini"
echo "axle bad input: ok"
