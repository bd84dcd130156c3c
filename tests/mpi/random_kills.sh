#!/usr/bin/env bash
# Randomised external kills, as a user would do them (issue 13): kill -9 of
# one or two ranks (rank 0 included) at random wall-clock moments — during
# start-up, during the run, a second one during the first one's detection and
# agreement, or the writer while it writes — in a loop with a fixed number of
# trials, each bounded in time. Every trial must:
#   - end within its bound (no hang);
#   - if the run got going, leave an output that loads, whose dead set is
#     exactly the ranks that were killed while still running (a rank that had
#     already finished, with its status written, is not "killed");
#   - never exclude a live rank (nothing is stopped here, so no rank may be
#     told "excluded by the survivors", and the dead set holds no other rank);
#   - if a rank died before every rank arrived, stop every other rank with
#     status 69 and name it, and write nothing.
# Prints one line per trial and the counts per outcome at the end.
#
# Usage: random_kills.sh [--trials N] [--np "3 4 8"] [--seed S] [--bound SECONDS]
#   CI (ctest failure.random_kills): a few trials; the long run in the README:
#   tests/mpi/random_kills.sh --trials 60 --np "3 4 8"   (needs CXLSIM and SRC)
. "$(dirname "$0")/common.sh"
trials=6 nps="3 4" seed=13 bound=120
while [ $# -gt 0 ]; do
	case $1 in
	--trials) trials=$2; shift 2 ;;
	--np) nps=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--bound) bound=$2; shift 2 ;;
	*) echo "unknown argument $1"; exit 2 ;;
	esac
done
RANDOM=$seed
read -r -a nplist <<<"$nps"
export CXLSIM_STARTUP_TIMEOUT=10
T=1.0 # engine.failure_timeout
declare -A count
failures=0

# rnd LO HI: a uniform float in [LO, HI) from bash's seeded RANDOM.
rnd() { awk -v r=$RANDOM -v lo="$1" -v hi="$2" 'BEGIN { printf "%.3f", lo + (hi - lo) * r / 32768 }'; }

# kill_rank R: kill -9 rank R if it is running and has not finished; prints R
# if killed before the output was published (a rank killed after the rename,
# on its way out, has left a complete run behind: that kill came too late).
kill_rank() {
	local p
	p=$(pid_of_rank "$1") || return 0
	[ -f "$CXLSIM_STATUS_DIR/rank-$1" ] && return 0 # it already ended normally
	kill -9 "$p" 2>/dev/null || return 0 # it may have ended just now
	[ -f "$out" ] || echo "$1"
}

for t in $(seq 1 "$trials"); do
	np=${nplist[$((RANDOM % ${#nplist[@]}))]}
	# in turn, so that even the few trials of CI meet every kind
	scenarios=(startup run two write two run)
	sc=${scenarios[$(((t - 1) % ${#scenarios[@]}))]}
	v1=$((RANDOM % np))
	v2=$(((v1 + 1 + RANDOM % (np - 1)) % np))
	export CXLSIM_STATUS_DIR="$WORK/st$t"
	mkdir -p "$CXLSIM_STATUS_DIR"
	out="$WORK/rk$t.h5"
	if [ "$sc" = write ]; then
		args=(--set phold.lps=2048 --end 2ms)
	else
		args=(--set phold.lps=$((16 * np)) --end 50ms)
	fi
	t0=$SECONDS
	timeout -k 5 "$bound" "$MPIRUN" -np "$np" "$CXLSIM" --quiet -o "$out" \
		--set engine.failure_timeout=$T "${args[@]}" >"$out.stdout" 2>"$out.stderr" &
	mp=$!
	for _ in $(seq 4000); do pid_of_rank "$v1" >/dev/null && break; sleep 0.005; done
	killed=""
	what=""
	case $sc in
	startup)
		d=$(rnd 0.02 0.5); sleep "$d"
		killed=$(kill_rank "$v1"); what="rank $v1 at +${d}s after it appeared"
		;;
	run)
		d=$(rnd 1.0 4.0); sleep "$d"
		killed=$(kill_rank "$v1"); what="rank $v1 at +${d}s"
		;;
	two)
		d=$(rnd 1.0 3.0); d2=$(rnd 0.3 2.5); sleep "$d"
		killed=$(kill_rank "$v1"); sleep "$d2"
		killed="$killed $(kill_rank "$v2")"; what="rank $v1 at +${d}s, rank $v2 ${d2}s later"
		;;
	write)
		# the writer is the lowest live rank: 0, unless we also kill it first
		for _ in $(seq 12000); do
			[ -e "$out.incomplete" ] && break
			kill -0 $mp 2>/dev/null || break
			sleep 0.005
		done
		killed=$(kill_rank 0); what="rank 0 (the writer) in the write"
		;;
	esac
	killed=$(echo $killed | tr ' ' '\n' | sort -n | tr '\n' ',' | sed 's/,$//')
	set +e
	wait $mp
	rc=$?
	set -e
	took=$((SECONDS - t0))
	outcome=""
	msg=""
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		outcome=HANG
		msg="did not end within $bound s"
	elif grep -q "excluded by the survivors" "$out.stderr"; then
		outcome=HEALTHY-EXCLUDED
		msg=$(grep "excluded by the survivors" "$out.stderr" | head -1)
	elif [ -f "$out" ]; then
		if msg=$(/usr/bin/python3 "$SRC/tests/mpi/dead_set.py" "$out" "$killed"); then
			outcome=$([ -n "$killed" ] && echo complete-with-failures || echo complete-kill-too-late)
		else
			outcome=WRONG-DEAD-SET
		fi
	elif [ $rc = 69 ] && [ -n "$killed" ] &&
		grep -q "rank(s) .*\b${killed%%,*}\b.*\(never reached\|did not arrive\|died before\)" "$out.stderr"; then
		outcome=stopped-at-start-up
	else
		outcome=NO-OUTPUT
		msg="exit $rc, killed [$killed], no output"
	fi
	[ -e "$out.incomplete" ] && [ -f "$out" ] && { outcome=LEFT-TEMP-FILE; msg="$out.incomplete left"; }
	count[$outcome]=$((${count[$outcome]:-0} + 1))
	printf 'trial %2d np %d %-8s %s: %s (exit %d, %d s)%s\n' "$t" "$np" "$sc" "$what" "$outcome" \
		"$rc" "$took" "${msg:+ — $msg}"
	case $outcome in
	[A-Z]*) failures=$((failures + 1)); sed 's/^/    /' "$out.stderr" | grep -v PMIX | tail -15 ;;
	esac
	rm -f "$out" "$out".*
done
echo "outcomes over $trials trials:"
for k in "${!count[@]}"; do printf '  %-26s %d\n' "$k" "${count[$k]}"; done | sort
[ $failures = 0 ] || { echo "$failures trial(s) failed"; exit 1; }
echo "random kills: no hang, no healthy rank excluded, dead sets exact"
