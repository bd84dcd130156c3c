#!/usr/bin/env bash
# Regressions of issue 13 (items 4, 5, 7): bad input that used to be read
# wrongly without a word, checked only after the whole simulation, or hung.
# Each case must give one clear error line, a non-zero exit on every rank, no
# output file, and do so at once: the runs here would take minutes if they
# started (engine.end_time = 10 s of PHOLD).
# Usage: bad_input_up_front.sh CASE
#   config_cr   CR-only line endings (was: one long comment, defaults, exit 0)
#   config_nul  a NUL byte in a value (was: "lps = 1\0 24" ran with 1); a file of NULs
#   config_dev  /dev/zero, a FIFO nobody writes (was: accepted / hung)
#   output      -o DIR, -o /proc/x.h5 (was: refused only after the run)
#   help        --help-config --bogus (was: exit 0)
#   utf8        non-UTF-8 bytes in error lines (were echoed raw)
#   trace       a trace made for another core; a FIFO as trace (was: ran / hung)
. "$(dirname "$0")/common.sh"
case_=${1:?case}
LONG=(--set phold.lps=64 --end 10s)
export RUN_TIMEOUT=60
# refused PATTERN ARGS...: expect_error, and within 20 s.
refused() {
	local t0=$SECONDS
	expect_error "$@"
	[ $((SECONDS - t0)) -lt 20 ] || { echo "refused only after $((SECONDS - t0)) s: $*"; exit 1; }
}
case $case_ in
config_cr)
	printf '; PHOLD\r[engine]\rend_time = 10s\r[phold]\rlps = 64\r' >"$WORK/cr.ini"
	refused "cr.ini:1: .*carriage return" "$WORK/cr.ini"
	# CRLF is fine: the same file from a Windows editor runs (checked up to validate).
	printf '[engine]\r\nend_time = 1ms\r\n[phold]\r\nlps = 1.5\r\n' >"$WORK/crlf.ini"
	refused "crlf.ini:4: phold.lps: expected a non-negative integer" "$WORK/crlf.ini"
	;;
config_nul)
	printf '[phold]\nlps = 1\00024\n' >"$WORK/nul.ini"
	refused "nul.ini:2: .*NUL byte" "$WORK/nul.ini" "${LONG[@]}"
	head -c 4096 /dev/zero >"$WORK/zeros.ini"
	refused "zeros.ini:1: .*NUL byte" "$WORK/zeros.ini" "${LONG[@]}"
	;;
config_dev)
	refused "/dev/zero: .*not a regular file" /dev/zero "${LONG[@]}"
	mkfifo "$WORK/fifo.ini"
	refused "fifo.ini: .*nothing" "$WORK/fifo.ini" "${LONG[@]}"
	refused "is a directory" "$WORK" "${LONG[@]}"
	;;
output)
	mkdir "$WORK/outdir"
	refused "output.file: .*outdir.* is a directory" "${LONG[@]}" -o "$WORK/outdir"
	refused "output.file: cannot create /proc/x.h5" "${LONG[@]}" -o /proc/x.h5
	refused "output.file: cannot create /nonexistent/x.h5" "${LONG[@]}" -o /nonexistent/x.h5
	mkfifo "$WORK/out.fifo"
	refused "output.file: .*out.fifo.* not a regular file" "${LONG[@]}" -o "$WORK/out.fifo"
	;;
help)
	refused "unknown option --bogus" --help-config --bogus
	refused "unknown option --bogus" --help --bogus
	refused "unknown option --bogus" --version --bogus
	;;
utf8)
	bad=$(printf '\377\376')
	refused 'engine.model: expected one of' --set "engine.model=x${bad}y"
	refused 'cannot open' "$WORK/n${bad}.ini"
	refused 'unknown option' "--x${bad}"
	for f in "$WORK"/never.h5.stderr; do :; done
	# the line must be valid UTF-8 (h5py, terminals and log collectors choke otherwise)
	for a in "--set engine.model=x${bad}y" "$WORK/n${bad}.ini" "--x${bad}"; do
		run_fail 1 "$WORK/u.h5" $a
		/usr/bin/python3 -c 'import sys; sys.stdin.buffer.read().decode("utf-8")' \
			<"$WORK/u.h5.stderr" || { echo "raw non-UTF-8 bytes in:"; cat -v "$WORK/u.h5.stderr"; exit 1; }
		grep -q 'xff' "$WORK/u.h5.stderr" || { echo "byte not shown escaped:"; cat -v "$WORK/u.h5.stderr"; exit 1; }
	done
	;;
trace)
	TRACE="$(dirname "$CXLSIM")/cxlsim-trace"
	printf 'ld 8 0x1000\n' >"$WORK/t.txt"
	"$TRACE" from-text "$WORK/t.txt" "$WORK/core0.trace" --core 0 >/dev/null
	"$TRACE" from-text "$WORK/t.txt" "$WORK/core1.trace" --core 0 >/dev/null # core 0's, named core 1
	args=(--model memsys --end 10ms --set system.cns=2 --set system.mns=1
	      --set system.cores_per_cn=1 --set workload.kernel=trace)
	ERR_NP=2 refused "thread 1: .*core1.trace: .*core 0" "${args[@]}" --set workload.trace="$WORK/core%u.trace"
	mkfifo "$WORK/fifo0.trace" "$WORK/fifo1.trace"
	ERR_NP=2 refused "fifo0.trace: .*not a regular file" "${args[@]}" --set workload.trace="$WORK/fifo%u.trace"
	;;
*)
	echo "unknown case $case_"; exit 1 ;;
esac
echo "bad input ($case_): refused up front"
