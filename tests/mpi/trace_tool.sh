#!/usr/bin/env bash
# The cxltrace Valgrind tool end to end (src/vgtool, cxlsim-trace record, the
# trace kernel): tests/trace/trace_test_prog.c is recorded three ways and
# replayed, and the replay must show what the program is:
#   chase   a C pointer chase: MLP 1 (0.95..1.05) with dataflow; the same
#           trace without it (trace.dataflow = false) has MLP > 4 — so the
#           MLP check can fail
#   stream  a C streaming loop: MLP near the LFB count (>= 0.8 x 12), 7 of 8
#           loads LFB hits (data in CXL memory, prefetchers off, as the
#           microbenchmarks' test)
#   sync    16 threads, a mutex-protected counter, a barrier per phase,
#           replayed on 4 CNs x 4 cores with the checks on: complete, the
#           counter the program asked the replay to check is right
#           (trace_value_checks = 1), every critical section and barrier
#           episode checked, identical at np 1 and 2; replayed without its
#           locks or without its barriers, the checks stop the run
# Bad inputs: a page map that is not one, more traced threads than cores, a
# program that never starts the region of interest.
. "$(dirname "$0")/common.sh"
PROG=${1:?path to trace_test_prog}
TRACE="$(dirname "$CXLSIM")/cxlsim-trace"
"$TRACE" record -o "$WORK/chase" --roi-start chase -- "$PROG" chase 32768 >"$WORK/rec.out"
"$TRACE" record -o "$WORK/stream" --roi-start stream -- "$PROG" stream 4194304 >>"$WORK/rec.out"
"$TRACE" record -o "$WORK/sync" -- "$PROG" sync 16 200 3 >>"$WORK/rec.out"
cat "$WORK/rec.out"
for t in chase/core0 stream/core0 sync/core0 sync/core15; do
	"$TRACE" check "$WORK/$t.trace" >/dev/null
done
[ -e "$WORK/sync/core15.trace" ] && [ ! -e "$WORK/sync/core16.trace" ] || {
	echo "sync: expected traces core0..core15"; exit 1; }

one=(--model memsys --end 1s --set system.cns=1 --set system.mns=2 --set system.cores_per_cn=1
     --set core.l1_prefetch=false --set core.l2_prefetch=false --set trace.placement=cxl)
run 1 "$WORK/chase.h5" "${one[@]}" "$WORK/chase/trace.ini"
run 1 "$WORK/chase_nodf.h5" "${one[@]}" "$WORK/chase/trace.ini" --set trace.dataflow=false
run 1 "$WORK/stream.h5" "${one[@]}" "$WORK/stream/trace.ini"
four=(--model memsys --end 100ms --set system.cns=4 --set system.mns=2 --set system.cores_per_cn=4)
run 1 "$WORK/sync1.h5" "${four[@]}" "$WORK/sync/trace.ini"
run 2 "$WORK/sync2.h5" "${four[@]}" "$WORK/sync/trace.ini"
$H5CHECK status "$WORK/sync1.h5" complete
$H5CHECK same "$WORK/sync1.h5" "$WORK/sync2.h5"
for k in chase chase_nodf stream sync1; do
	/usr/bin/python3 "$SRC/analysis/core_report.py" "$WORK/$k.h5" --json >"$WORK/$k.json"
done
/usr/bin/python3 - "$WORK" <<'PY'
import json, sys
w = sys.argv[1]
r = {k: json.load(open(f"{w}/{k}.json")) for k in ["chase", "chase_nodf", "stream", "sync1"]}
t = {k: v["total"] for k, v in r.items()}
res = r["sync1"]["results"]
checks = [
    ("chase MLP ~1 with dataflow", 0.95 <= t["chase"]["mlp"] <= 1.05, t["chase"]["mlp"]),
    ("chase without dataflow MLP >> 1", t["chase_nodf"]["mlp"] > 4, t["chase_nodf"]["mlp"]),
    ("stream MLP near the LFB size", t["stream"]["mlp"] >= 0.8 * 12, t["stream"]["mlp"]),
    ("stream LFB-hit ratio ~7/8", 0.8 <= t["stream"]["lfb_hit_ratio"] <= 0.9,
     t["stream"]["lfb_hit_ratio"]),
    ("sync: the counter checked", res.get("trace_value_checks", 0) == 1,
     res.get("trace_value_checks", 0)),
    ("sync: every critical section checked", res.get("trace_lock_checks", 0) >= 16 * 200 * 3,
     res.get("trace_lock_checks", 0)),
    ("sync: every barrier episode checked", res.get("trace_barrier_checks", 0) == 16 * 3,
     res.get("trace_barrier_checks", 0)),
]
bad = 0
for name, ok, val in checks:
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {val:.3f}")
    bad += not ok
sys.exit(1 if bad else 0)
PY
run_fail 1 "$WORK/nolocks.h5" "${four[@]}" "$WORK/sync/trace.ini" --set trace.fault=skip_locks
grep -q "trace check: mutual exclusion violated: thread [0-9]* acquired lock" \
	"$WORK/nolocks.h5.stderr" || { echo "no mutual exclusion error:"; cat "$WORK/nolocks.h5.stderr"; exit 1; }
run_fail 1 "$WORK/nobar.h5" "${four[@]}" "$WORK/sync/trace.ini" --set trace.fault=skip_barriers
grep -q "trace check: barrier order violated" "$WORK/nobar.h5.stderr" || {
	echo "no barrier error:"; cat "$WORK/nobar.h5.stderr"; exit 1; }
# Bad input.
ERR_NP=2 expect_error "trace.map: $WORK/sync/core0.trace: bad magic" "${four[@]}" \
	"$WORK/sync/trace.ini" --set trace.map="$WORK/sync/core0.trace"
ERR_NP=2 expect_error "trace.threads: 16 traced threads need as many cores; the machine has 8" \
	"${four[@]}" "$WORK/sync/trace.ini" --set system.cores_per_cn=2
set +e
"$TRACE" record -o "$WORK/none" -- "$PROG" chase 100 >"$WORK/none.out" 2>&1
rc=$?
set -e
[ $rc = 2 ] && grep -q "region of interest never began" "$WORK/none.out" || {
	echo "record without a region of interest: exit $rc"; cat "$WORK/none.out"; exit 1; }
# A command line with newlines (sqlite3 with a multi-line script) still makes a trace.ini
# that is all comments, sections and keys.
"$TRACE" record -o "$WORK/nl" --roi start -- /bin/true "$(printf 'a;\nb;')" >/dev/null
if grep -qvE '^(#.*|\[[a-z]+\]|[a-z_]+ = .*|)$' "$WORK/nl/trace.ini"; then
	echo "trace.ini with a stray line:"; cat "$WORK/nl/trace.ini"; exit 1
fi
echo "trace tool: ok"
