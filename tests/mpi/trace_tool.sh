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
#           locks or without its barriers, the checks stop the run; its
#           waiters sleep (trace.waits = sleep, a futex wait): it executes
#           less than twice the recorded instructions, where spinning
#           (trace.waits = spin) executes more than ten times as many in
#           about the same simulated time
#   recursive  16 threads incrementing under a PTHREAD_MUTEX_RECURSIVE mutex
#           taken twice (sqlite's shape): the recorder keeps one lock per
#           outermost acquisition, the replay completes with the counter
#           right; a hand-made trace that locks a lock it holds (what older
#           recordings have) completes too, the second lock counted as
#           recursive (before, its thread waited for itself for ever)
#   joinheld   pigz's shape: main joins its workers holding a mutex each of
#           them took first: replayed in the recorded order of acquisitions
#           it completes with the count right; with the order ignored
#           (trace.fault = unordered) it hangs until the cap
#   reuse   sqlite's heap mutexes: a mutex freed, its memory allocated again,
#           zeroed by the program and holding a new mutex: the zeroing
#           stores are left out of the replay's lock word (before, they reset
#           its turn and the next lock waited for ever); the count is right
#   a CN failure mid-replay: 16 hand-made traces taking one lock in turn
#           (thread t has turns t, t + 16, ...; a locks.order written here
#           from its documented layout), CN 1 (threads 4-7) failed at 20 us:
#           the 12 others skip the dead threads' turns (most of their 200)
#           and all replay every record; without the lock order
#           (trace.locks empty) nothing is skipped and they wait for the
#           dead for ever. The recursive recording with CN 1 failed at
#           100 us: every survivor finishes (turns skipped as needed, and
#           main's joins of the dead threads end)
#   syncfail  the sync recording under DIKTAMO-proactive with CN 1 failed at
#           20 us: its barriers shrink to the 12 live threads (before, they
#           waited for the dead until the cap), the order checks of the
#           barriers the dead miss and the counter check are waived, and the
#           golden image is identical after recovery and at the end
# Bad inputs: a page map that is not one, more traced threads than cores, a
# program that never starts the region of interest.
. "$(dirname "$0")/common.sh"
PROG=${1:?path to trace_test_prog}
TRACE="$(dirname "$CXLSIM")/cxlsim-trace"
"$TRACE" record -o "$WORK/chase" --roi-start chase -- "$PROG" chase 32768 >"$WORK/rec.out"
"$TRACE" record -o "$WORK/stream" --roi-start stream -- "$PROG" stream 4194304 >>"$WORK/rec.out"
"$TRACE" record -o "$WORK/sync" -- "$PROG" sync 16 200 3 >>"$WORK/rec.out"
"$TRACE" record -o "$WORK/recursive" -- "$PROG" recursive 16 50 >>"$WORK/rec.out"
"$TRACE" record -o "$WORK/joinheld" -- "$PROG" joinheld 16 >>"$WORK/rec.out"
"$TRACE" record -o "$WORK/reuse" -- "$PROG" reuse 4 20 >>"$WORK/rec.out"
cat "$WORK/rec.out"
nlock=$("$TRACE" check "$WORK/recursive/core1.trace" | awk '$1 == "lock" { print $2 }')
[ "$nlock" = 50 ] || {
	echo "recursive: core1 has $nlock lock records, expected 50 (its outermost acquisitions)"; exit 1; }
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
run 1 "$WORK/syncspin.h5" "${four[@]}" "$WORK/sync/trace.ini" --set trace.waits=spin
$H5CHECK status "$WORK/sync1.h5" complete
$H5CHECK same "$WORK/sync1.h5" "$WORK/sync2.h5"
run 1 "$WORK/recursive.h5" "${four[@]}" "$WORK/recursive/trace.ini"
run 1 "$WORK/joinheld.h5" "${four[@]}" "$WORK/joinheld/trace.ini"
run 1 "$WORK/reuse.h5" "${four[@]}" "$WORK/reuse/trace.ini"
run 1 "$WORK/fail.h5" "${four[@]}" "$WORK/recursive/trace.ini" --fail 1@100us
/usr/bin/python3 - "$WORK" <<'PY'
import struct, sys, zlib
w, T, K, L = sys.argv[1], 16, 50, 0x10000001000
for t in range(T):
    with open(f"{w}/rr{t}.txt", "w") as f:
        for k in range(K):
            f.write(f"lock 0x{L:x} {k * T + t} turn gap=20\nld 8 0x10000002000\n"
                    f"st 8 0x10000002000 1 gap=5\nunlock 0x{L:x}\n")
h = b"CXSLOCKS" + struct.pack("<HHIQI", 1, 32, T, 1, 0)
h += struct.pack("<I", zlib.crc32(h))
body = struct.pack("<QQQ", L, T * K, T * K)
body += b"".join(struct.pack("<II", i % T, 1) for i in range(T * K))
open(f"{w}/rr.order", "wb").write(h + body + struct.pack("<I", zlib.crc32(body)))
PY
for t in $(seq 0 15); do
	"$TRACE" from-text "$WORK/rr$t.txt" "$WORK/rr$t.trace" --core "$t" >/dev/null
done
rr=("${four[@]}" --set workload.kernel=trace --set workload.trace="$WORK/rr%u.trace"
    --set trace.locks="$WORK/rr.order")
run 1 "$WORK/rrfail.h5" "${rr[@]}" --fail 1@20us
printf 'lock 0x1000\nlock 0x1000\nst 8 0x2000 1\nunlock 0x1000\nunlock 0x1000\ncheck 8 0x2000 1\n' \
	>"$WORK/nested.txt"
"$TRACE" from-text "$WORK/nested.txt" "$WORK/nested0.trace" >/dev/null
run 1 "$WORK/nested.h5" "${one[@]}" --end 1ms --set workload.kernel=trace \
	--set workload.trace="$WORK/nested%u.trace"
run 1 "$WORK/syncfail.h5" "${four[@]}" "$WORK/sync/trace.ini" --fail 1@20us -v \
	--set system.protocol=proactive --set diktamo.oracle=true
$H5CHECK status "$WORK/syncfail.h5" complete-with-failures
for when in "after recovery" "at the end"; do
	grep -q "golden image $when: identical" "$WORK/syncfail.h5.stderr" || {
		echo "syncfail: no identical golden image $when:"; cat "$WORK/syncfail.h5.stderr"; exit 1; }
done
for k in recursive joinheld reuse fail rrfail nested; do
	$H5CHECK status "$WORK/$k.h5" complete
done
for k in fail rrfail syncfail; do
	if grep -q "did not finish" "$WORK/$k.h5.stderr"; then
		echo "$k: after the failure a live thread did not finish:"; cat "$WORK/$k.h5.stderr"; exit 1
	fi
done
for k in chase chase_nodf stream sync1 syncspin recursive joinheld reuse fail rrfail nested syncfail; do
	/usr/bin/python3 "$SRC/analysis/core_report.py" "$WORK/$k.h5" --json >"$WORK/$k.json"
done
/usr/bin/python3 - "$WORK" <<'PY'
import json, sys
w = sys.argv[1]
r = {k: json.load(open(f"{w}/{k}.json")) for k in ["chase", "chase_nodf", "stream", "sync1", "syncspin",
                                                    "recursive", "joinheld", "reuse", "fail",
                                                    "rrfail", "nested", "syncfail"]}
t = {k: v["total"] for k, v in r.items()}
import re
recorded = int(re.search(r"/sync: .*?, (\d+) instructions", open(f"{w}/rec.out").read()).group(1))
res = r["sync1"]["results"]
rec, jh, ru, fl, ne, sf = (r[k]["results"] for k in ["recursive", "joinheld", "reuse", "rrfail",
                                                      "nested", "syncfail"])
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
    ("sync: waiters sleep: under 2x the recorded instructions",
     t["sync1"]["instructions"] < 2 * recorded, t["sync1"]["instructions"] / recorded),
    ("sync: spinning waiters: over 10x the recorded instructions",
     t["syncspin"]["instructions"] > 10 * recorded, t["syncspin"]["instructions"] / recorded),
    ("sync: about the same simulated time sleeping or spinning (ratio)",
     abs(t["sync1"]["cycles"] / t["syncspin"]["cycles"] - 1) < 0.05,
     t["sync1"]["cycles"] / t["syncspin"]["cycles"]),
    ("sync: every barrier episode checked", res.get("trace_barrier_checks", 0) == 16 * 3,
     res.get("trace_barrier_checks", 0)),
    ("recursive: the counter checked", rec.get("trace_value_checks", 0) == 1,
     rec.get("trace_value_checks", 0)),
    ("recursive: every outermost lock checked", rec.get("trace_lock_checks", 0) >= 16 * 50,
     rec.get("trace_lock_checks", 0)),
    ("recursive: no nested lock left in the recording", rec.get("trace_recursive_locks", 0) == 0,
     rec.get("trace_recursive_locks", 0)),
    ("joinheld: the count checked", jh.get("trace_value_checks", 0) == 1,
     jh.get("trace_value_checks", 0)),
    ("reuse: the program's stores to a lock word left out", ru.get("trace_lock_word_stores", 0) > 0,
     ru.get("trace_lock_word_stores", 0)),
    ("reuse: the count checked", ru.get("trace_value_checks", 0) == 1,
     ru.get("trace_value_checks", 0)),
    ("failure: most of the dead threads' 200 turns skipped",
     150 <= fl.get("trace_turns_skipped", 0) <= 200, fl.get("trace_turns_skipped", 0)),
    ("failure: the 12 survivors replayed all their records",
     fl.get("trace_records", 0) == 12 * 200, fl.get("trace_records", 0)),
    ("syncfail: the barriers the dead miss shrink, their checks waived",
     sf.get("trace_barrier_checks_waived", 0) >= 12, sf.get("trace_barrier_checks_waived", 0)),
    ("syncfail: every barrier episode of the 12 survivors counted",
     sf.get("trace_barrier_checks", 0) + sf.get("trace_barrier_checks_waived", 0) >= 12 * 3,
     sf.get("trace_barrier_checks", 0) + sf.get("trace_barrier_checks_waived", 0)),
    ("syncfail: the counter check waived (the dead threads' increments are missing)",
     sf.get("trace_value_checks_waived", 0) == 1, sf.get("trace_value_checks_waived", 0)),
    ("nested lock of an older trace counted as recursive", ne.get("trace_recursive_locks", 0) == 1,
     ne.get("trace_recursive_locks", 0)),
    ("nested lock: the store checked", ne.get("trace_value_checks", 0) == 1,
     ne.get("trace_value_checks", 0)),
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
# The order matters: ignoring it, joinheld's main takes the mutex first and waits for ever.
run_fail 1 "$WORK/unordered.h5" "${four[@]}" "$WORK/joinheld/trace.ini" --set trace.fault=unordered \
	--end 2ms
grep -q "workload trace unfinished at the engine.end_time cap" "$WORK/unordered.h5.stderr" || {
	echo "joinheld without its lock order did not hang:"; cat "$WORK/unordered.h5.stderr"; exit 1; }
# Without the lock order nobody skips the dead threads' turns.
run 1 "$WORK/noorder.h5" "${rr[@]}" --fail 1@20us --set trace.locks= --end 2ms
grep -q "did not finish: it waits for lock" "$WORK/noorder.h5.stderr" || {
	echo "without the lock order the survivors finished:"; cat "$WORK/noorder.h5.stderr"; exit 1; }
ERR_NP=2 expect_error "trace.locks: $WORK/sync/pages.map: bad magic" "${four[@]}" \
	"$WORK/sync/trace.ini" --set trace.locks="$WORK/sync/pages.map"
ERR_NP=2 expect_error "trace.locks: $WORK/recursive/locks.order: the lock order is of a recording of 16 threads; 17 replay" \
	"${four[@]}" "$WORK/sync/trace.ini" --set trace.threads=17 --set system.cores_per_cn=5 \
	--set trace.map= --set workload.trace="$WORK/sync/core0.trace" \
	--set trace.locks="$WORK/recursive/locks.order"
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
