#!/usr/bin/env bash
# Real programs as cxlsim workloads: Debian packages, run as they ship, each
# recorded with `cxlsim-trace record` into OUT/<name>/ (core<N>.trace,
# pages.map, trace.ini). Traces are made on demand and never committed.
#
#   inputs/real_programs.sh install            apt packages the recipes need (root/sudo)
#   inputs/real_programs.sh list               the recipes
#   inputs/real_programs.sh record OUT [NAME...]   record them (default: all)
#
# CXLSIM_TRACE is the recorder (default build/src/cxlsim-trace). Sizes are
# chosen so that a recording (50-250 M instructions) takes under a minute on
# this machine (2 cores) and a replay on 16 CNs x 4 cores a few minutes; scale
# them with the variables below. Each recipe's region of interest:
#   redis      redis-server under redis-benchmark (SET, GET from 16 clients); from
#              its first thread (its background threads start at once). Not with
#              --io-threads: Redis's I/O threads busy-wait for work, which under
#              Valgrind (one thread at a time) is billions of spinning loads
#   memcached  memcached -t 4 under memcslap (16 clients, set then get)
#   sqlite     sqlite3 on a generated table of $SQLITE_ROWS rows: an index build and
#              a grouped, ordered query with PRAGMA threads=4 (the sorter's workers);
#              recorded from the first instruction
#   sng-*      stress-ng memory stressors, one instance each, following the forks to
#              the stressor process: memthrash (threads), vm, stream, memcpy, malloc
#   sysbench   sysbench memory, 4 threads, 1 MiB blocks
#   pigz       pigz -p 4 on $PIGZ_BYTES of text
#   zstd       zstd -T4 on the same file
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
TRACE=${CXLSIM_TRACE:-$SRC/build/src/cxlsim-trace}
REDIS_REQUESTS=${REDIS_REQUESTS:-10000}
MEMC_OPS=${MEMC_OPS:-500}
SQLITE_ROWS=${SQLITE_ROWS:-40000}
PIGZ_BYTES=${PIGZ_BYTES:-1000000}
ALL="redis memcached sqlite sng-memthrash sng-vm sng-stream sng-memcpy sng-malloc sysbench pigz zstd"
PKGS="valgrind redis-server redis-tools memcached libmemcached-tools sqlite3 stress-ng sysbench pigz zstd"

wait_port() { # wait_port PORT: until something listens (a recorded server starts slowly)
	for _ in $(seq 600); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.2
	done
	echo "nothing listens on port $1" >&2
	return 1
}

text_file() { # text_file PATH BYTES: compressible text, the same every time
	[ -s "$1" ] || awk -v n="$2" 'BEGIN { for (i = 1; b < n; i++) {
		s = i " " i * 7 % 1009 " lorem ipsum dolor"; b += length(s) + 1; print s } }' >"$1"
}

rec_redis() {
	"$TRACE" record -o "$1" -- redis-server --port 6399 --save '' --appendonly no \
		--protected-mode no >"$1.log" 2>&1 &
	local rec=$!
	wait_port 6399
	redis-benchmark -p 6399 -n "$REDIS_REQUESTS" -c 16 -t set,get --csv >"$1.bench" 2>&1
	cat "$1.bench"
	redis-cli -p 6399 shutdown nosave || true
	wait $rec || true
}

rec_memcached() {
	# -c 256: Valgrind keeps file descriptors of its own, below memcached's default 1024
	"$TRACE" record -o "$1" -- memcached -t 4 -c 256 -p 11299 -U 0 -u root -m 64 >"$1.log" 2>&1 &
	local rec=$!
	wait_port 11299
	memcslap --servers=127.0.0.1:11299 --concurrency=16 --execute-number="$MEMC_OPS" --test=set
	memcslap --servers=127.0.0.1:11299 --concurrency=16 --execute-number="$MEMC_OPS" --test=get
	pkill -TERM -P $rec || true # the recorder's child: valgrind running memcached
	wait $rec || true
}

rec_sqlite() {
	local db="$1.db"
	rm -f "$db"
	sqlite3 "$db" "CREATE TABLE t(a INTEGER PRIMARY KEY, b INTEGER, c TEXT);
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $SQLITE_ROWS)
		INSERT INTO t SELECT i, (i * 2654435761) % 1000003, printf('row %d', i) FROM n;"
	"$TRACE" record -o "$1" --roi start -- sqlite3 "$db" "PRAGMA threads=4;
		CREATE INDEX tb ON t(b);
		SELECT b % 97, count(*), max(c) FROM t GROUP BY b % 97 ORDER BY 2 DESC LIMIT 3;"
}

rec_sng() { # rec_sng OUT STRESSOR ARGS...: one instance, following the forks
	local out=$1 s=$2
	shift 2
	local roi=(--roi start)
	[ "$s" = memthrash ] && roi=()
	"$TRACE" record -o "$out" --follow-fork "${roi[@]}" -- stress-ng --"$s" 1 "$@" --metrics-brief
}

rec_sysbench() {
	"$TRACE" record -o "$1" -- sysbench memory --threads=4 --memory-block-size=1M \
		--memory-total-size=64M run
}

rec_pigz() {
	text_file "$1.in" "$PIGZ_BYTES"
	# -k -f: output to a file, so that the recorder's summary on stdout is not lost with it
	"$TRACE" record -o "$1" -- pigz -p 4 -k -f "$1.in"
}

rec_zstd() {
	text_file "$1.in" "$PIGZ_BYTES"
	"$TRACE" record -o "$1" -- zstd -T4 -3 -q -f "$1.in" -o "$1.zst"
}

record_one() {
	local out=$1 name=$2
	echo "== $name"
	case $name in
	redis) rec_redis "$out/$name" ;;
	memcached) rec_memcached "$out/$name" ;;
	sqlite) rec_sqlite "$out/$name" ;;
	sng-memthrash) rec_sng "$out/$name" memthrash --memthrash-ops 4 ;;
	sng-vm) rec_sng "$out/$name" vm --vm-bytes 4M --vm-ops 2 ;;
	sng-stream) rec_sng "$out/$name" stream --stream-l3-size 1M --stream-ops 2 ;;
	sng-memcpy) rec_sng "$out/$name" memcpy --memcpy-ops 2 ;;
	sng-malloc) rec_sng "$out/$name" malloc --malloc-ops 20000 ;;
	sysbench) rec_sysbench "$out/$name" ;;
	pigz) rec_pigz "$out/$name" ;;
	zstd) rec_zstd "$out/$name" ;;
	*) echo "unknown recipe $name (list: $ALL)" >&2; return 2 ;;
	esac
	[ -s "$out/$name/trace.ini" ] || { echo "$name: no recording" >&2; return 1; }
}

case ${1:-} in
install)
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $PKGS
	;;
list)
	echo "$ALL"
	;;
record)
	out=${2:?record OUT [NAME...]}
	shift 2
	mkdir -p "$out"
	for n in ${*:-$ALL}; do
		record_one "$out" "$n"
	done
	;;
*)
	sed -n '2,25p' "$0"
	exit 2
	;;
esac
