#!/usr/bin/env bash
# Memory before the run (issue 13, item 6): a run that cannot fit is refused
# at once with the figure and the key to change; one that runs out anyway is
# a clear error, not a crash. Before: PHOLD with 1M LPs under a 6 GB
# address-space limit printed "BUG ... out of memory" and segfaulted in
# MPI_Abort (exit 139) after half a minute.
# Usage: memory_estimate.sh MODE
#   as        RLIMIT_AS (ulimit -v 6 GB), phold.lps=1M: refused, names phold.lps
#   host      more than MemAvailable (sized from this machine): refused
#   cache     16 CNs with a 4 GiB L3 each in 16 GB: refused, names cache.l3_size
#   oom       the check switched off: running out is exit 70 with a clear line
#   accurate  the estimate (cxlsim -v) is at least the peak resident size of
#             real runs, and not absurdly above it
. "$(dirname "$0")/common.sh"
mode=${1:?mode}
avail_kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
case $mode in
as)
	(ulimit -v 6000000
	 ERR_NP=1 expect_error "memory: a rank needs about .* of address space .* lower phold.lps" \
		--set phold.lps=1M --end 10us)
	;;
host)
	lps=$((avail_kb * 2 / 25))
	(ulimit -v $((avail_kb * 4))
	 ERR_NP=1 expect_error "memory: the run needs about .* on this host .* lower phold.lps" \
		--set phold.lps=$lps --end 10us)
	;;
cache)
	# 16 CNs with a 4 GiB L3 each: one cache allocates (configure probes it),
	# all of them do not fit in 16 GB of address space
	(ulimit -v 16000000
	 ERR_NP=2 expect_error "memory: .* lower cache.l3_size" --model memsys \
		--set system.cns=16 --set cache.l3_size=4GiB --end 10us)
	;;
oom)
	set +e
	(ulimit -v 4000000
	 timeout -k 5 240 "$CXLSIM" --quiet -o "$WORK/o.h5" --set phold.lps=1M \
		--set engine.memory_check=false --end 10us >"$WORK/o.out" 2>&1)
	rc=$?
	set -e
	[ $rc = 70 ] || { echo "exit $rc, expected 70"; tail -5 "$WORK/o.out"; exit 1; }
	grep -q "out of memory" "$WORK/o.out" || { echo "no out-of-memory line"; cat "$WORK/o.out"; exit 1; }
	[ ! -e "$WORK/o.h5" ] || { echo "output written"; exit 1; }
	;;
accurate)
	check() {
		local f="$WORK/a.h5"
		# (a workload cut short by --end exits 4: only the sizes matter here)
		/usr/bin/time -f "peak %M" "$CXLSIM" -v --quiet -o "$f" "$@" >"$f.out" 2>&1 || true
		/usr/bin/python3 - "$f.out" "$*" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"memory estimate: nodes (\S+) (\S+), events (\S+) (\S+), caches (\S+) (\S+), "
              r"memory (\S+) (\S+), output (\S+) (\S+); in use now (\S+) (\S+) per rank", text)
assert m, text
mb = lambda v, u: float(v) * (1024 if u == "GB" else 1)
est = sum(mb(m.group(i), m.group(i + 1)) for i in range(1, 13, 2))
peak = int(re.search(r"peak (\d+)", text).group(1)) / 1024
print(f"{sys.argv[2]}: estimate {est:.0f} MB, peak {peak:.0f} MB ({est / peak:.2f}x)")
assert est >= 0.95 * peak, "the estimate is below what the run used"
assert est <= 4 * peak + 64, "the estimate is far above what the run used"
PY
	}
	check --set phold.lps=20k --end 10us
	check --set phold.lps=40k --end 10us
	check --model memsys --set workload.kernel=ocean_cp --set workload.size=512 --end 50us
	check "$SRC/inputs/wb-16x4.ini" --set workload.kernel=ocean_cp --set workload.size=128 --end 200us
	check --model axle --set axle.size=full --set axle.workload=dlrm --end 100us
	;;
*) echo "unknown mode $mode"; exit 1 ;;
esac
echo "memory ($mode): ok"
