#!/usr/bin/env bash
# Speed and size of recording against lackey plus conversion, on the issue's
# example: GNU sort of 20,000 numbers (README "Tracing real programs").
#
#   analysis/trace_speed.sh BUILD_DIR [RUNS=3] [WORK=/tmp/cxlsim-trace-speed]
#
# Each run, alternating: (a) valgrind --tool=lackey --trace-mem=yes to a log,
# then cxlsim-trace from-lackey; (b) cxlsim-trace record (levels 1 and 6).
# Prints every run's wall time and the medians, the sizes (lackey log, its
# converted trace, our traces) and the ratios. Heavy: run it under
# flock /tmp/cxlsim-heavy.lock on a shared machine.
set -euo pipefail
BUILD=$(cd "${1:?build directory}" && pwd)
RUNS=${2:-3}
WORK=${3:-/tmp/cxlsim-trace-speed}
T="$BUILD/src/cxlsim-trace"
mkdir -p "$WORK"
cd "$WORK"
seq 20000 | shuf --random-source=<(yes) >nums.txt
now() { date +%s.%N; }
declare -a LK CV R1 R6
for i in $(seq "$RUNS"); do
	t0=$(now)
	valgrind --tool=lackey --trace-mem=yes --log-file=sort.lackey sort -n nums.txt -o out.txt
	t1=$(now)
	"$T" from-lackey sort.lackey sort-lackey.trace >/dev/null
	t2=$(now)
	"$T" record -o rec1 --roi start --level 1 -- sort -n nums.txt -o out1.txt >rec1.out
	t3=$(now)
	"$T" record -o rec6 --roi start --level 6 -- sort -n nums.txt -o out6.txt >rec6.out
	t4=$(now)
	LK+=("$(echo "$t1 - $t0" | bc)"); CV+=("$(echo "$t2 - $t1" | bc)")
	R1+=("$(echo "$t3 - $t2" | bc)"); R6+=("$(echo "$t4 - $t3" | bc)")
	echo "run $i: lackey ${LK[-1]} s + conversion ${CV[-1]} s; record level 1 ${R1[-1]} s, level 6 ${R6[-1]} s"
done
cmp out.txt out1.txt && cmp out.txt out6.txt
/usr/bin/python3 - "${LK[*]}" "${CV[*]}" "${R1[*]}" "${R6[*]}" \
	"$(stat -c %s sort.lackey)" "$(stat -c %s sort-lackey.trace)" \
	"$(stat -c %s rec1/core0.trace)" "$(stat -c %s rec6/core0.trace)" "$(cat rec1.out)" <<'PY'
import statistics as s, sys
lk, cv, r1, r6 = ([float(x) for x in a.split()] for a in sys.argv[1:5])
log, conv, t1, t6 = (int(x) for x in sys.argv[5:9])
m = {k: s.median(v) for k, v in dict(lk=lk, cv=cv, r1=r1, r6=r6).items()}
base = m["lk"] + m["cv"]
print(f"medians of {len(lk)}: lackey {m['lk']:.1f} s + conversion {m['cv']:.1f} s = {base:.1f} s;"
      f" record {m['r1']:.1f} s (level 1), {m['r6']:.1f} s (level 6)")
print(f"speed-up: {base / m['r1']:.1f}x (level 1), {base / m['r6']:.1f}x (level 6)")
print(f"sizes: lackey log {log / 1e6:.0f} MB, its trace {conv / 1e6:.1f} MB; record {t1 / 1e6:.1f} MB"
      f" (level 1, {log / t1:.1f}x smaller than the log), {t6 / 1e6:.1f} MB (level 6, {log / t6:.1f}x)")
print(sys.argv[9])
PY
