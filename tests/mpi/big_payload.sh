#!/usr/bin/env bash
# Payloads larger than one event (out of line, up to 256 KiB here) arrive with
# every byte intact at np 1, 2 and 3, and every rank count receives exactly
# the same messages at the same times (tests/mpi/big_payload.c).
#   big_payload.sh PROGRAM
set -euo pipefail
PROG=$1
MPIRUN="$(dirname "$0")/../../mpi-configs/cxlsim-mpirun"
W=$(mktemp -d "${TMPDIR:-/tmp}/cxlsim-big.XXXXXX")
trap 'rm -rf "$W"' EXIT
for np in 1 2 3; do
	timeout -k 5 120 "$MPIRUN" -np $np "$PROG" >"$W/out.$np" 2>"$W/err.$np" || {
		echo "np $np: exit $?"; cat "$W/out.$np" "$W/err.$np"; exit 1; }
	sort "$W/out.$np" >"$W/sorted.$np"
	n=$(grep -c "^node .* received" "$W/sorted.$np")
	[ "$n" = 12 ] || { echo "np $np: $n nodes reported, expected 12"; exit 1; }
	if grep -q "received 0 " "$W/sorted.$np"; then echo "np $np: a node received nothing"; exit 1; fi
done
cmp "$W/sorted.1" "$W/sorted.2" && cmp "$W/sorted.1" "$W/sorted.3" || {
	echo "received payloads differ between rank counts"; diff "$W/sorted.1" "$W/sorted.3" | head; exit 1; }
# The check can fail: one flipped byte in one message (np 2, so that it
# crosses ranks or not as the draw falls) makes the run exit non-zero.
if BIG_PAYLOAD_FLIP=1 timeout -k 5 120 "$MPIRUN" -np 2 "$PROG" >"$W/out.flip" 2>"$W/err.flip"; then
	echo "a flipped payload byte went unnoticed"; cat "$W/out.flip" "$W/err.flip"; exit 1
fi
grep -q "^1 bad payloads" "$W/err.flip" || {
	echo "the flipped byte failed the run without saying why"; cat "$W/out.flip" "$W/err.flip"; exit 1; }
# And the count: one payload counted as scheduled that never was must fail it.
if BIG_PAYLOAD_EXTRA=1 timeout -k 5 120 "$MPIRUN" -np 2 "$PROG" >"$W/out.extra" 2>"$W/err.extra"; then
	echo "a missing payload went unnoticed"; cat "$W/out.extra" "$W/err.extra"; exit 1
fi
grep -qE "^([0-9]+) payloads scheduled before the end, ([0-9]+) arrived" "$W/err.extra" || {
	echo "the missing payload failed the run without saying why"; cat "$W/out.extra" "$W/err.extra"; exit 1; }
echo "big payloads: $(grep checksum "$W/sorted.1"), identical at np 1, 2, 3"
