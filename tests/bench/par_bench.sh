#!/usr/bin/env bash
# Parallel speed (issue 12), in one run: loop wall time at np = 1 and np = 2
# with the default mapping for the 16x4 WB run (inputs/wb-16x4.ini) on
# ocean_cp, barnes and ycsb, np = 2 both with windows (engine.sync, the
# default) and with asynchronous stretches (engine.sync = async), with the
# checksums of all three compared; PHOLD 1024 LPs at np = 1 and np = 2
# (both schemes) against the bare sequential heap loop of the same
# semantics (tests/bench/heap_loop.c, built here), and PHOLD 16 LPs at
# np = 2; the 16x4 ocean_cp run with one node per rank (np = 32) against
# np = 2 on the same size, with context switches per window (of the whole
# processes, by perf, and of the event loop alone, from every rank's -v line,
# which also names the reduction it used). A benchmark,
# not a timed test: it prints figures and fails only if checksums differ.
# Medians of REPEATS runs, np = 1 and np = 2 (and heap loop) alternating so
# that drifts of a shared machine hit both alike. Run it alone:
#   flock /tmp/cxlsim-heavy.lock tests/bench/par_bench.sh [REPEATS]
# (env CXLSIM, SRC as for the tests; ctest -R bench.par does that).
set -euo pipefail
: "${CXLSIM:?path to cxlsim}" "${SRC:?source dir}"
reps=${1:-3}
MPIRUN="$SRC/mpi-configs/cxlsim-mpirun"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_MCA_rmaps_base_oversubscribe=1
cc -O2 -o "$tmp/heap_loop" "$SRC/tests/bench/heap_loop.c" -lm

# one NP OUT ARGS...: prints "checksum loop_wall_s windows events"
one() {
	local np=$1 out=$2
	shift 2
	"$MPIRUN" -np "$np" "$CXLSIM" --quiet -o "$out" "$@" >"$out.stdout" 2>"$out.stderr" || {
		echo "cxlsim -np $np $* failed:" >&2; cat "$out.stdout" "$out.stderr" >&2; exit 1; }
	/usr/bin/python3 - "$out" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ["SRC"], "analysis"))
import cxlsim_h5
r = cxlsim_h5.load(sys.argv[1])
e = r.engine
print("%#018x %.4f %d %d" % (int(r.attrs["checksum"]), float(e["loop_wall_s"].max()),
                             int(e["windows"].max()), int(e["events"].sum())))
PY
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

printf '%-28s %8s %8s %8s %8s %8s %8s  %s\n' run "np=1 s" "win s" speedup "async s" speedup windows checksums
for kw in ocean_cp:128 barnes:256 ycsb:1024; do
	k=${kw%:*} s=${kw#*:}
	args=("$SRC/inputs/wb-16x4.ini" --set workload.kernel="$k" --set workload.size="$s")
	: >"$tmp/w1" >"$tmp/w2" >"$tmp/wa" >"$tmp/sums"
	for _ in $(seq "$reps"); do
		read -r c1 w1 _ _ <<<"$(one 1 "$tmp/a.h5" "${args[@]}")"
		read -r c2 w2 win _ <<<"$(one 2 "$tmp/b.h5" "${args[@]}")"
		read -r ca wa _ _ <<<"$(one 2 "$tmp/b.h5" "${args[@]}" --set engine.sync=async)"
		echo "$w1" >>"$tmp/w1"; echo "$w2" >>"$tmp/w2"; echo "$wa" >>"$tmp/wa"
		echo "$c1 $c2 $ca" >>"$tmp/sums"
	done
	m1=$(median <"$tmp/w1") m2=$(median <"$tmp/w2") ma=$(median <"$tmp/wa")
	same=identical
	[ "$(tr ' ' '\n' <"$tmp/sums" | sort -u | wc -l)" -eq 1 ] || same=DIFFERENT
	printf '%-28s %8.3f %8.3f %7.2fx %8.3f %7.2fx %8s  %s\n' "16x4 WB $k size $s" "$m1" "$m2" \
		"$(echo "$m1 / $m2" | bc -l)" "$ma" "$(echo "$m1 / $ma" | bc -l)" "$win" \
		"$same $(head -c 18 "$tmp/sums")"
	[ "$same" = identical ] || { echo "checksums differ: $(cat "$tmp/sums")"; exit 1; }
done

echo
printf '%-28s %12s %12s %12s %10s %10s %12s %10s\n' "PHOLD 1024 LPs end 5 ms" "heap ev/s" "np=1 ev/s" \
	"np=2 ev/s" "np1/heap" "np2/np1" "async ev/s" "async/np1"
ph=(--model phold --set phold.lps=1024 --set phold.mean=1.0 --set phold.lookahead=0.1
	--set phold.remote=0.25 --set engine.end_time=5000us --seed 1)
: >"$tmp/h" >"$tmp/p1" >"$tmp/p2" >"$tmp/pa"
for _ in $(seq "$reps"); do
	read -r hev _ hr <<<"$("$tmp/heap_loop" 1024 5000)"
	read -r _ w1 _ ev1 <<<"$(one 1 "$tmp/a.h5" "${ph[@]}")"
	read -r _ w2 _ ev2 <<<"$(one 2 "$tmp/b.h5" "${ph[@]}")"
	read -r _ wa _ eva <<<"$(one 2 "$tmp/b.h5" "${ph[@]}" --set engine.sync=async)"
	[ "$hev" = "$ev1" ] && [ "$ev1" = "$ev2" ] && [ "$ev1" = "$eva" ] ||
		{ echo "event counts differ: heap $hev, np=1 $ev1, np=2 $ev2, async $eva"; exit 1; }
	echo "$hr" >>"$tmp/h"; echo "$ev1 / $w1" | bc -l >>"$tmp/p1"; echo "$ev2 / $w2" | bc -l >>"$tmp/p2"
	echo "$eva / $wa" | bc -l >>"$tmp/pa"
done
h=$(median <"$tmp/h" | awk '{printf "%.1f", $1}') p1=$(median <"$tmp/p1") p2=$(median <"$tmp/p2")
pa=$(median <"$tmp/pa")
printf '%-28s %12.3e %12.3e %12.3e %9.0f%% %9.2fx %12.3e %9.2fx\n' "($ev1 events, all four)" "$h" "$p1" \
	"$p2" "$(echo "100 * $p1 / $h" | bc -l)" "$(echo "$p2 / $p1" | bc -l)" "$pa" "$(echo "$pa / $p1" | bc -l)"
: >"$tmp/p16"
for _ in $(seq "$reps"); do
	read -r _ w _ ev <<<"$(one 2 "$tmp/b.h5" "${ph[@]}" --set phold.lps=16 --set engine.end_time=50000us)"
	echo "$ev / $w" | bc -l >>"$tmp/p16"
done
printf '%-28s %12s %12s %12.3e\n' "PHOLD 16 LPs end 50 ms" "" "" "$(median <"$tmp/p16")"

echo
oc=("$SRC/inputs/wb-16x4.ini" --set workload.kernel=ocean_cp --set workload.size=32)
: >"$tmp/n2" >"$tmp/n32" >"$tmp/sums"
for _ in $(seq "$reps"); do
	read -r c2 w2 _ _ <<<"$(one 2 "$tmp/b.h5" "${oc[@]}")"
	# -v: every rank's line names its reduction and its context switches in the loop
	if command -v perf >/dev/null; then
		perf stat -x, -e context-switches -o "$tmp/cs" -- "$MPIRUN" -np 32 "$CXLSIM" -v \
			-o "$tmp/c.h5" "${oc[@]}" >/dev/null 2>"$tmp/c.err"
		cs=$(awk -F, '/context-switches/ {print $1}' "$tmp/cs")
	else
		"$MPIRUN" -np 32 "$CXLSIM" -v -o "$tmp/c.h5" "${oc[@]}" >/dev/null 2>"$tmp/c.err"
		cs=0
	fi
	lcs=$(grep -o '[0-9]* context switches' "$tmp/c.err" | awk '{s += $1} END {print s + 0}')
	red=$(grep -oE '(shared-memory|point-to-point) reduction' "$tmp/c.err" | sort | uniq -c | tr -s ' ' | paste -sd, -)
	read -r c32 w32 win32 _ <<<"$(/usr/bin/python3 - "$tmp/c.h5" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ["SRC"], "analysis"))
import cxlsim_h5
r = cxlsim_h5.load(sys.argv[1])
print("%#018x %.4f %d" % (int(r.attrs["checksum"]), float(r.engine["loop_wall_s"].max()), int(r.engine["windows"].max())))
PY
)"
	echo "$w2" >>"$tmp/n2"; echo "$w32 $cs $win32 $lcs" >>"$tmp/n32"; echo "$c2 $c32" >>"$tmp/sums"
done
m2=$(median <"$tmp/n2")
read -r m32 cs win32 lcs <<<"$(sort -g "$tmp/n32" | sed -n "$(( (reps + 1) / 2 ))p")"
[ "$(tr ' ' '\n' <"$tmp/sums" | sort -u | wc -l)" -eq 1 ] || { echo "checksums differ: $(cat "$tmp/sums")"; exit 1; }
printf '%-28s %10s %10s %8s %9s  %s\n' "16x4 ocean_cp size 32" "np=2 s" "np=32 s" "np32/np2" windows "ctx switches/window: process, loop"
printf '%-28s %10.3f %10.3f %7.2fx %9s  %s, %s  (%s)\n' "one node per rank at 32" "$m2" "$m32" \
	"$(echo "$m32 / $m2" | bc -l)" "$win32" "$(echo "$cs / $win32" | bc -l | xargs printf '%.1f')" \
	"$(echo "$lcs / $win32" | bc -l | xargs printf '%.1f')" "${red:-reduction not reported}"
