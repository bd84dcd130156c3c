/*
 * trace_program.c — replaying per-core traces (trace.h) on the out-of-order
 * cores: the "trace" kernel, DIKTAMO's method (§VI: traces collected per core
 * with Pin, K non-memory instructions between records at CPI 1, "only one
 * thread inside a critical section, threads wait at barriers").
 *
 * Thread t replays the file made from the path pattern with t in place of
 * "%u" (workload.trace, e.g. "traces/core%u.trace"); a pattern without "%u"
 * gives every thread the same file. With trace.threads = N (cxlsim-trace
 * record writes it into DIR/trace.ini) threads 0..N-1 replay and the other
 * cores run nothing. Every file is opened and its trailer checked before the
 * run starts, so a missing or damaged trace, one that is not a regular file,
 * or (with "%u") one whose header names another core than its thread, stops
 * the run at once with the file's name; damage found later (a block that
 * does not inflate) stops it with the block and record.
 *
 * Placement
 * ---------
 * With a page map (trace.map, a recording's DIR/pages.map) every traced 4 KiB
 * page gets a simulated page of its own, so no two traced pages alias, and a
 * tier:
 *   a page is *shared* if more than one thread touched it, or a lock,
 *   barrier or event word is on it, or (trace.shared = heap) it is heap;
 *   trace.placement = paper     shared pages in CXL memory, the others in
 *                               their thread's local memory (the papers' rule)
 *                   = cxl       every page in CXL memory
 *                   = local     every page in local memory
 *                   = weighted  trace.cxl_fraction of the pages, spread evenly
 *                               in page order, in CXL memory (CAMP's interleave)
 * CXL pages are numbered densely in page order in the shared region; a
 * thread's local pages in its private region; shared pages placed in local
 * memory need every thread on one CN (they live after thread 0's private
 * pages, which every core of that CN reaches at the same address), which the
 * first access checks. The regions are sized from the map. Without a map
 * (version 1 traces, hand-made ones) addresses are folded as before:
 *   address >= 2^40 (the CXL window)  shared CXL memory, at
 *                                     (address - 2^40) mod the shared size
 *   anything else                     the thread's private local memory, at
 *                                     address mod the private size
 * with the line offset kept (workload.size KiB each, default 64 MiB).
 *
 * Dataflow (trace.dataflow, default on). The last RING producers (ld and rmw
 * records) are remembered with their handles and traced values. A record's
 * addr_dep names one of them: the load or store goes to the core with that
 * producer as its dependency (cxs_kt_ld_dep / cxs_kt_store_dep), so it waits
 * in the window for it (core.c) while later independent records go on. A
 * store flagged `add` stores its producer's replayed value plus the traced
 * difference; an rmw flagged `fadd` is a fetch-and-add. A dependency on a
 * producer whose handle is no longer live (more than CXS_KT_MAX_INFLIGHT
 * handles back) is already satisfied: it has retired. With dataflow off,
 * every load is one nobody waits for and every value is the traced one.
 *
 * Locks. lock / unlock take the lock word at the mapped address. A lock
 * record with a turn (version 3: every lock cxlsim-trace record writes) is
 * taken in the recorded order: the thread waits until the lock's previous
 * turns are done (cxs_kt_lock_turn), so the replay cannot invent an order
 * the program could not have had (pigz's main thread joins its workers
 * holding a mutex each of them took and released first: taken in any
 * order, the replay can deadlock there). With trace.locks (the recording's
 * locks.order, whose each turn is) a turn whose thread is dead after a CN
 * failure is skipped; without it nothing is skipped. A lock record without
 * a turn (versions 1 and 2, hand-made traces, or trace.fault = unordered)
 * is the test-and-test-and-set lock, taken in whatever order threads reach
 * it. With turns the replay cannot deadlock where the program did not:
 * every wait it makes (a turn for the previous turn's release, a barrier
 * leave for its arrivals, a wait for its post) is for an event that came
 * earlier in the one order Valgrind ran the program in, so no wait closes
 * a cycle — short of what the recording leaves out (rwlock readers that
 * held one together, a mutex unlocked by another thread than its locker).
 * Each thread keeps the locks it holds (MAX_HELD): a lock of one it holds
 * is a recursive mutex taken again (the recorder leaves those out; older
 * recordings have them) and only counts its depth, and an unlock of one it
 * does not hold (taken before the recording began) is left out. The
 * program's own stores to a lock word (see lock_word) are left out.
 *
 * Barriers and events. barrier meets `value` threads (0: all traced
 * threads) in a sense-reversing barrier whose sense is the parity of that
 * object's episode (MAX_BARRIERS objects per thread); post adds 1 to the
 * word at the address (an atomic fetch-and-add); wait spins (loads with
 * back-off) until it reaches `value` — or, for a join (a wait for thread
 * k's exit event, cxltrace_proto.h), until thread k is known dead
 * (trace_joins_of_dead), as a dead thread never exits; check loads and
 * compares, stopping the run on a difference — unless a CN has failed,
 * whose threads' work is missing: then a difference is counted in
 * trace_value_checks_waived, as the kernels waive their result checks, and
 * the golden image (diktamo.oracle) is the check. A barrier of every traced
 * thread shrinks to the live ones after a failure (barrier_wait); its
 * order check is then waived too (trace_barrier_checks_waived). A wait that
 * cannot tell whom it waits for — an event word, which anyone may post, or
 * a barrier of a subset of the threads — gives up after a failure once it
 * has waited trace.wait_limit cycles of back-off without a change: the
 * thread stops replaying (trace_waits_abandoned, and a warning); the dead
 * thread it may wait for never comes, and without the limit it would wait
 * until engine.end_time, 100 s by default.
 *
 * Checks (trace.check, default on; with a page map): each sync object has a
 * checker word at the same offset in a mirror of its region. Acquiring a
 * lock swaps the thread's id + 1 into it and must find 0, releasing swaps 0
 * back and must find its own id: two threads inside one critical section,
 * however they got there, stop the run. Arriving at a barrier adds 1 to its
 * checker word; leaving episode e of a barrier of n threads, a thread must
 * see at least n * e arrivals. The checker words cost two atomics per
 * critical section and one per barrier episode, so timing experiments set
 * trace.check = false. trace.fault = skip_locks | skip_barriers replays
 * without the locks or barriers themselves, to show the checks failing.
 */
#include "cxlsim/cxltrace_proto.h"
#include "cxlsim/kthread.h"
#include "cxlsim/lock_order.h"
#include "cxlsim/page_map.h"
#include "cxlsim/trace.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CXL_WINDOW (UINT64_C(1) << 40)
#define PAGE_BYTES (UINT64_C(1) << CXS_PAGE_SHIFT)
#define RING 256          /* producers remembered; > CXS_KT_MAX_INFLIGHT */
#define MAX_BARRIERS 256  /* distinct barriers per thread (checker episodes) */
#define MAX_HELD 64       /* locks one thread holds at once */

enum { PL_PAPER = 0, PL_CXL, PL_LOCAL, PL_WEIGHTED };
enum { SH_TOUCHED = 0, SH_HEAP };
enum { FAULT_NONE = 0, FAULT_SKIP_LOCKS, FAULT_SKIP_BARRIERS, FAULT_UNORDERED };
/* A page's tier: its thread's local memory, CXL memory, or the CN's local memory (shared). */
enum { TIER_LOCAL = 0, TIER_CXL = 1, TIER_LOCAL_SHARED = 2 };

const struct cxs_cfg_key cxs_trace_replay_keys[] = {
	{"trace", "map", CXS_CFG_STRING, "", "The page map of a recording (cxlsim-trace record writes DIR/pages.map): every traced page gets a simulated page of its own, placed by trace.placement; empty: addresses are folded (version 1 traces).", NULL, 0, 0},
	{"trace", "threads", CXS_CFG_UINT, "0", "Traced threads: threads 0..N-1 replay core<N>.trace, other cores run nothing; 0: one trace per core.", NULL, 0, 1e6},
	{"trace", "placement", CXS_CFG_ENUM, "paper", "With a map: paper (shared pages in CXL memory, private ones in local memory), cxl (every page in CXL), local (every page local; one CN), weighted (trace.cxl_fraction of the pages in CXL, spread evenly).", "paper|cxl|local|weighted", 0, 0},
	{"trace", "shared", CXS_CFG_ENUM, "touched", "Which pages are shared: touched (by more than one thread, or holding a lock, barrier or event word) or heap (those and every heap page).", "touched|heap", 0, 0},
	{"trace", "cxl_fraction", CXS_CFG_DOUBLE, "0.5", "trace.placement = weighted: the share of pages in CXL memory.", NULL, 0, 1},
	{"trace", "dataflow", CXS_CFG_BOOL, "true", "Loads and stores wait in the core for the load their address comes from, and `add` stores recompute their value (false: every load independent, every value as traced).", NULL, 0, 0},
	{"trace", "check", CXS_CFG_BOOL, "true", "With a map: check mutual exclusion at every lock and barrier order at every barrier through checker words (two atomics per critical section: set false for timing runs).", NULL, 0, 0},
	{"trace", "locks", CXS_CFG_STRING, "", "The lock order of a recording (cxlsim-trace record writes DIR/locks.order): whose each lock's turns are, so that after a CN failure the dead threads' turns are skipped; empty: locks are still taken in their recorded turns, none is skipped.", NULL, 0, 0},
	{"trace", "waits", CXS_CFG_ENUM, "sleep", "How a replaying thread waits for a lock, a turn, a barrier or an event: sleep (its back-off passes as cycles without instructions, as a pthread waiter sleeps in futex_wait) or spin (the back-off is executed as instructions, a spin loop).", "sleep|spin", 0, 0},
	{"trace", "wait_limit", CXS_CFG_UINT, "20000000", "After a CN failure, how many cycles of back-off a thread waits for an event whose word does not change, or at a barrier of a subset of the threads (whose members are unknown), before it gives up and stops replaying (counted in trace_waits_abandoned): the dead thread it may be waiting for never comes. 0: no limit (such a wait lasts until engine.end_time).", NULL, 0, 1e15},
	{"trace", "stuck_limit", CXS_CFG_UINT, "2000000000", "Without a CN failure, how many cycles of back-off a thread waits for an event whose word does not change, or at a barrier of a subset of the threads, before the run stops as a deadlock of the replayed program (a post or an arrival that never comes). 0: no limit (until engine.end_time).", NULL, 0, 1e15},
	{"trace", "fault", CXS_CFG_ENUM, "none", "Fault injection for the checks: skip_locks or skip_barriers replays without them; unordered takes locks in any order, ignoring their recorded turns.", "none|skip_locks|skip_barriers|unordered", 0, 0},
};
const size_t cxs_trace_replay_nkeys = sizeof cxs_trace_replay_keys / sizeof cxs_trace_replay_keys[0];
const struct cxs_key_table cxs_trace_replay_key_table = CXS_KEY_TABLE(cxs_trace_replay_keys);

struct trace_info {
	char *pattern;
	char *map_path;
	char *locks_path;
	struct cxs_page_map map;
	bool have_map;
	struct cxs_lock_order order;
	bool have_order;
	uint32_t threads;           /* threads that replay a trace */
	unsigned placement, shared, fault;
	double cxl_fraction;
	bool dataflow, check, sleep;
	uint64_t wait_limit;        /* trace.wait_limit, cycles */
	uint64_t stuck_limit;       /* trace.stuck_limit, cycles */
	uint64_t cxl_pages;         /* the shared region: that many pages, then their mirror */
	uint64_t local_shared_pages;
	uint64_t max_private_pages;
	uint64_t private_stride;    /* what memsys spaces threads' private regions by */
};

static void info_free(void *p)
{
	struct trace_info *ti = p;
	if (!ti)
		return;
	free(ti->pattern);
	free(ti->map_path);
	free(ti->locks_path);
	cxs_page_map_free(&ti->map);
	cxs_lock_order_free(&ti->order);
	free(ti);
}

static int trace_configure(const struct cxs_config *cfg, struct cxs_kimage *img, char *err,
			   size_t errlen)
{
	struct trace_info *ti = calloc(1, sizeof *ti);
	if (!ti || !(ti->pattern = strdup(cxs_config_str(cfg, "workload", "trace"))) ||
	    !(ti->map_path = strdup(cxs_config_str(cfg, "trace", "map"))) ||
	    !(ti->locks_path = strdup(cxs_config_str(cfg, "trace", "locks")))) {
		info_free(ti);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ti->threads = (uint32_t)cxs_config_uint(cfg, "trace", "threads");
	ti->placement = cxs_config_enum(cfg, "trace", "placement");
	ti->shared = cxs_config_enum(cfg, "trace", "shared");
	ti->cxl_fraction = cxs_config_double(cfg, "trace", "cxl_fraction");
	ti->dataflow = cxs_config_bool(cfg, "trace", "dataflow");
	ti->check = cxs_config_bool(cfg, "trace", "check");
	ti->fault = cxs_config_enum(cfg, "trace", "fault");
	ti->sleep = cxs_config_enum(cfg, "trace", "waits") == 0;
	ti->wait_limit = cxs_config_uint(cfg, "trace", "wait_limit");
	ti->stuck_limit = cxs_config_uint(cfg, "trace", "stuck_limit");
	if (ti->threads > img->nthreads) {
		snprintf(err, errlen, "%s: trace.threads: %" PRIu32 " traced threads need as many"
			 " cores; the machine has %" PRIu32 " (system.cns x system.cores_per_cn)",
			 cxs_config_origin(cfg, "trace", "threads"), ti->threads, img->nthreads);
		info_free(ti);
		return -1;
	}
	img->info = ti;
	img->info_free = info_free;
	return 0;
}

static int trace_path(const struct trace_info *ti, uint32_t t, char *out, size_t len)
{
	const char *pat = ti->pattern;
	const char *u = strstr(pat, "%u");
	if (!pat[0])
		return snprintf(out, len, "(no workload.trace)");
	if (!u)
		return snprintf(out, len, "%s", pat);
	return snprintf(out, len, "%.*s%u%s", (int)(u - pat), pat, t, u + 2);
}

static bool page_shared(const struct trace_info *ti, const struct cxs_page_ent *e)
{
	return e->threads > 1 || (e->flags & CXS_PAGE_SYNC) ||
	       (ti->shared == SH_HEAP && e->where == CXS_TRACE_WHERE_HEAP);
}

/* Gives every page of the map its tier and slot, and sizes the regions. */
static int place_pages(struct trace_info *ti, char *err, size_t errlen)
{
	uint64_t *priv = calloc(ti->map.threads ? ti->map.threads : 1, sizeof *priv);
	double acc = 0;
	if (!priv) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < ti->map.n; i++) {
		struct cxs_page_ent *e = &ti->map.e[i];
		bool shared = page_shared(ti, e);
		switch (ti->placement) {
		case PL_PAPER:
			e->tier = shared ? TIER_CXL : TIER_LOCAL;
			break;
		case PL_CXL:
			e->tier = TIER_CXL;
			break;
		case PL_LOCAL:
			e->tier = TIER_LOCAL;
			break;
		default: /* weighted: page i in CXL when the running share crosses 1 */
			acc += ti->cxl_fraction;
			e->tier = acc >= 1 ? TIER_CXL : TIER_LOCAL;
			if (acc >= 1)
				acc -= 1;
			break;
		}
		if (e->tier == TIER_LOCAL && shared)
			e->tier = TIER_LOCAL_SHARED;
		if (e->tier == TIER_CXL)
			e->slot = (uint32_t)ti->cxl_pages++;
		else if (e->tier == TIER_LOCAL_SHARED)
			e->slot = (uint32_t)ti->local_shared_pages++;
		else
			e->slot = (uint32_t)priv[e->owner]++;
	}
	for (uint32_t t = 0; t < ti->map.threads; t++)
		if (priv[t] > ti->max_private_pages)
			ti->max_private_pages = priv[t];
	free(priv);
	return 0;
}

/* img->info: set by trace_configure. */
static int build_trace(struct cxs_kimage *img, char *err, size_t errlen)
{
	struct trace_info *ti = img->info;
	if (!ti || !ti->pattern[0]) {
		snprintf(err, errlen, "the trace kernel needs workload.trace (a path pattern with %%u)");
		return -1;
	}
	if (ti->map_path[0]) {
		char why[CXS_TRACE_ERR_MAX];
		if (cxs_page_map_read(ti->map_path, &ti->map, why, sizeof why) != 0) {
			snprintf(err, errlen, "trace.map: %s", why);
			return -1;
		}
		ti->have_map = true;
		if (ti->threads == 0)
			ti->threads = ti->map.threads;
		if (ti->threads > ti->map.threads || ti->threads > img->nthreads) {
			snprintf(err, errlen, "%s: the recording has %" PRIu32 " threads; trace.threads"
				 " is %" PRIu32 " and the machine has %" PRIu32 " cores", ti->map_path,
				 ti->map.threads, ti->threads, img->nthreads);
			return -1;
		}
		if (place_pages(ti, err, errlen) != 0)
			return -1;
	} else if (img->size < 4 || img->size > (UINT64_C(1) << 24)) {
		snprintf(err, errlen, "size (KiB of each region) must be 4..16777216");
		return -1;
	}
	if (ti->threads == 0)
		ti->threads = img->nthreads;
	if (ti->locks_path[0]) {
		char why[CXS_TRACE_ERR_MAX];
		if (cxs_lock_order_read(ti->locks_path, &ti->order, why, sizeof why) != 0) {
			snprintf(err, errlen, "trace.locks: %s", why);
			return -1;
		}
		ti->have_order = true;
		if (ti->order.threads < ti->threads) {
			snprintf(err, errlen, "trace.locks: %s: the lock order is of a recording of %"
				 PRIu32 " threads; %" PRIu32 " replay (another recording's?)",
				 ti->locks_path, ti->order.threads, ti->threads);
			return -1;
		}
	}
	bool per_core = strstr(ti->pattern, "%u") != NULL;
	for (uint32_t t = 0; t < ti->threads; t++) {
		char path[1024], why[CXS_TRACE_ERR_MAX];
		struct stat sb;
		trace_path(ti, t, path, sizeof path);
		/* Opened here and again by the thread: a FIFO would be empty (or block
		 * for ever) the second time, so only files are traces. */
		if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
			snprintf(err, errlen, "thread %u: %s: not a regular file (%s): a trace is read "
				 "twice, to check it and to replay it", t, path,
				 S_ISDIR(sb.st_mode) ? "a directory" : S_ISFIFO(sb.st_mode) ? "a FIFO" :
				 "a device or socket");
			return -1;
		}
		struct cxs_trace_reader *r = cxs_trace_reader_open(path, why, sizeof why);
		if (!r) {
			snprintf(err, errlen, "thread %u: %s", t, why);
			return -1;
		}
		uint32_t core = cxs_trace_reader_core(r);
		cxs_trace_reader_close(r);
		if (per_core && core != t) {
			snprintf(err, errlen, "thread %u: %s: the trace was made for core %" PRIu32
				 " (its header's core_id), not core %u: wrong file or wrong --core "
				 "given to cxlsim-trace", t, path, core, t);
			return -1;
		}
	}
	if (ti->have_map) {
		/* CXL pages then their mirror; private pages, then the local shared ones and theirs */
		img->shared_bytes = 2 * (ti->cxl_pages ? ti->cxl_pages : 1) * PAGE_BYTES;
		img->private_bytes = (ti->max_private_pages + 2 * ti->local_shared_pages + 1) * PAGE_BYTES;
	} else {
		img->shared_bytes = img->size * 1024;
		img->private_bytes = img->size * 1024;
	}
	ti->private_stride = (img->private_bytes + 4095) & ~UINT64_C(4095);
	img->shared = calloc(1, img->shared_bytes);
	if (!img->shared) {
		snprintf(err, errlen, "out of memory for %" PRIu64 " bytes of shared memory",
			 img->shared_bytes);
		return -1;
	}
	return 0;
}

/* ---- the replay of one thread ---------------------------------------------------- */

struct prod {
	uint32_t h;       /* its handle, or CXS_KT_NO_DEP once its value is known here */
	bool traced_known; /* an rmw's record holds what it stored, not what it loaded */
	uint64_t traced;  /* the value the trace says it produced */
	uint64_t value;   /* its replayed value, when h == CXS_KT_NO_DEP */
};

/* A lock a thread holds. */
struct held_lock {
	uint64_t addr;   /* traced */
	uint32_t depth;  /* times taken (a recursive mutex: more than once) */
	uint32_t turn;   /* the turn it was taken at */
	bool ordered;    /* ... with cxs_kt_lock_turn */
};

struct replay {
	struct cxs_kt *kt;
	const struct trace_info *ti;
	uint32_t id;
	uint64_t last_page, last_base; /* one-entry cache of the page map */
	bool last_sync;                /* ... the page holds a lock word */
	uint64_t local_shared_base;
	bool local_shared_ok;          /* ... checked: every thread on one CN */
	struct prod ring[RING];
	uint64_t nprod;
	struct {
		uint64_t addr, episodes;
	} bar[MAX_BARRIERS];
	uint32_t nbar;
	struct held_lock held[MAX_HELD];
	uint32_t nheld;
	uint64_t nrec;
	bool gave_up; /* a wait past trace.wait_limit after a failure: the replay stops */
};

/* Whose turn `turn` of the lock is (cxs_kt_turn_owner_fn; ctx: struct turn_ctx). */
struct turn_ctx {
	const struct trace_info *ti;
	uint64_t addr;  /* traced */
};

static uint32_t turn_owner(const void *ctx, uint64_t turn)
{
	const struct turn_ctx *c = ctx;
	const struct cxs_lock_ent *e = cxs_lock_order_find(&c->ti->order, c->addr);
	return e ? cxs_lock_order_owner(&c->ti->order, e, turn) : UINT32_MAX;
}

static uint64_t fold(struct cxs_kt *kt, uint64_t addr)
{
	const struct cxs_kimage *img = cxs_kt_image(kt);
	if (addr >= CXL_WINDOW)
		return cxs_kt_shared(kt) + (addr - CXL_WINDOW) % img->shared_bytes;
	return cxs_kt_private(kt) + addr % img->private_bytes;
}

/*
 * The simulated address of traced address a; *mirror its checker word's;
 * *sync (may be NULL) whether a's page holds a synchronisation word.
 */
static uint64_t map_addr(struct replay *x, uint64_t a, uint64_t *mirror, bool *sync)
{
	const struct trace_info *ti = x->ti;
	uint64_t page = a >> CXS_PAGE_SHIFT;
	if (sync)
		*sync = false;
	if (!ti->have_map) {
		*mirror = 0;
		return fold(x->kt, a);
	}
	const struct cxs_page_ent *e = cxs_page_map_find(&ti->map, page);
	if (!e)
		cxs_kt_fail(x->kt, "thread %u, record %" PRIu64 ": page 0x%" PRIx64 " is not in %s"
			    " (a page map from another recording?)", x->id, x->nrec, page,
			    ti->map_path);
	if (sync)
		*sync = (e->flags & CXS_PAGE_SYNC) != 0;
	uint64_t base, mirror_off;
	if (e->tier == TIER_CXL) {
		base = cxs_kt_shared(x->kt) + (uint64_t)e->slot * PAGE_BYTES;
		mirror_off = ti->cxl_pages * PAGE_BYTES;
	} else if (e->tier == TIER_LOCAL_SHARED) {
		if (!x->local_shared_ok) {
			/* every thread on one CN: core t's private region is the t-th */
			if (cxs_kt_private(x->kt) != (uint64_t)x->id * ti->private_stride)
				cxs_kt_fail(x->kt, "trace.placement puts shared pages in local memory,"
					    " which needs every traced thread on one CN (thread %u"
					    " is not on the first; set system.cns = 1)", x->id);
			x->local_shared_base = ti->max_private_pages * PAGE_BYTES;
			x->local_shared_ok = true;
		}
		base = x->local_shared_base + (uint64_t)e->slot * PAGE_BYTES;
		mirror_off = ti->local_shared_pages * PAGE_BYTES;
	} else {
		base = cxs_kt_private(x->kt) + (uint64_t)e->slot * PAGE_BYTES;
		mirror_off = 0;
	}
	*mirror = mirror_off ? base + mirror_off + (a & (PAGE_BYTES - 1)) : 0;
	return base + (a & (PAGE_BYTES - 1));
}

static uint64_t addr_of(struct replay *x, uint64_t a)
{
	uint64_t page = a >> CXS_PAGE_SHIFT, m;
	if (page == x->last_page)
		return x->last_base + (a & (PAGE_BYTES - 1));
	uint64_t s = map_addr(x, a, &m, &x->last_sync);
	x->last_page = page;
	x->last_base = s - (a & (PAGE_BYTES - 1));
	return s;
}

/*
 * Is the 8-byte word at traced address a a lock word (call after addr_of(a))?
 * The program's own stores there are left out: a mutex's first bytes are
 * the replay's lock word (its due turn and holder), and a store of the
 * program's — memory reused after the mutex was freed, a zeroing before it
 * is initialised again — would set its turn to whatever was stored (sqlite
 * zeroes and reuses a heap mutex: its thread then waited for ever for a
 * turn the store had erased). The library's own accesses to its mutexes
 * are left out by the recorder in the same way.
 */
static bool lock_word(const struct replay *x, uint64_t a)
{
	return x->last_sync && x->ti->have_order &&
	       cxs_lock_order_find(&x->ti->order, a & ~UINT64_C(7)) != NULL;
}

/* The producer k back, or NULL. */
static struct prod *producer(struct replay *x, uint16_t k)
{
	if (!x->ti->dataflow || k == 0 || k > x->nprod || k > RING)
		return NULL;
	return &x->ring[(x->nprod - k) % RING];
}

/* The handle a record must wait for, or CXS_KT_NO_DEP. */
static uint32_t dep_handle(struct replay *x, uint16_t k)
{
	struct prod *p = producer(x, k);
	if (!p || p->h == CXS_KT_NO_DEP || !cxs_kt_handle_live(x->kt, p->h))
		return CXS_KT_NO_DEP;
	return p->h;
}

static void add_producer(struct replay *x, uint32_t h, bool traced_known, uint64_t traced,
			 uint64_t value)
{
	x->ring[x->nprod % RING] = (struct prod){.h = h, .traced_known = traced_known,
						 .traced = traced, .value = value};
	x->nprod++;
}

static uint64_t mask_of(uint8_t size)
{
	return size < 8 ? (UINT64_C(1) << (8 * size)) - 1 : UINT64_MAX;
}

/*
 * An `add` value: its producer's replayed value plus the traced difference.
 * Returns 1 with *v the value (producer's value known), 2 with *v the
 * difference and *h the producer to add it to in the core, 0 to use the
 * traced value.
 */
static int add_value(struct replay *x, const struct cxs_trace_rec *r, uint64_t *v, uint32_t *h)
{
	struct prod *p = (r->flags & CXS_TRACE_F_ADD) ? producer(x, r->value_dep) : NULL;
	if (!p || !p->traced_known)
		return 0;
	uint64_t diff = r->value - p->traced;
	if (p->h == CXS_KT_NO_DEP) {
		*v = (p->value + diff) & mask_of(r->size);
		return 1;
	}
	if (!cxs_kt_handle_live(x->kt, p->h))
		return 0;
	*v = diff;
	*h = p->h;
	return 2;
}

/* The thread whose exit event traced address a is (a join), or UINT32_MAX. */
static uint32_t exit_of(uint64_t a)
{
	if (a < CXT_SYNC_BASE || (a - CXT_SYNC_BASE) % 128 != 64 ||
	    (a - CXT_SYNC_BASE) / 128 >= UINT32_MAX)
		return UINT32_MAX;
	return (uint32_t)((a - CXT_SYNC_BASE) / 128);
}

/*
 * Waits until the word at a reaches want, or (poster != UINT32_MAX) thread
 * poster is dead; the back-off sleeps or spins (trace.waits). After a CN
 * failure, a wait whose word has not changed for `limit` cycles of back-off
 * (0: no limit) gives up: false. Whoever would have posted may be dead, and
 * an event word does not say who posts it.
 */
static bool spin_until(const struct replay *x, uint64_t a, uint64_t want, uint32_t poster)
{
	struct cxs_kt *kt = x->kt;
	bool sleep = x->ti->sleep;
	uint64_t limit = x->ti->wait_limit, stuck_limit = x->ti->stuck_limit;
	uint32_t backoff = 16;
	uint64_t v, last = UINT64_MAX, quiet = 0;
	bool failed = false;
	while ((v = cxs_kt_load(kt, a, 8)) < want) {
		if (poster != UINT32_MAX && cxs_kt_thread_dead(kt, poster)) {
			cxs_kt_result(kt, "trace_joins_of_dead", 1);
			return true;
		}
		if (v != last || failed != (cxs_kt_failed_cns(kt) != 0)) {
			last = v;
			failed = cxs_kt_failed_cns(kt) != 0;
			quiet = 0;
		}
		quiet += backoff;
		if (failed && limit && quiet > limit)
			return false;
		if (!failed && stuck_limit && quiet > stuck_limit)
			cxs_kt_fail(kt, "deadlock: trace thread %u (record %" PRIu64 ") has waited %"
				    PRIu64 " cycles for the word at 0x%" PRIx64 " to reach %" PRIu64
				    "; it is %" PRIu64 " and no CN has failed: nothing posts it",
				    x->id, x->nrec, quiet, a, want, v);
		if (sleep)
			cxs_kt_idle(kt, backoff);
		else
			cxs_kt_compute(kt, backoff);
		if (backoff < 1024)
			backoff *= 2;
	}
	return true;
}

/* Index of the held entry of traced lock addr, or nheld. */
static uint32_t held_find(const struct replay *x, uint64_t addr)
{
	uint32_t i = 0;
	while (i < x->nheld && x->held[i].addr != addr)
		i++;
	return i;
}

static void do_lock(struct replay *x, const struct cxs_trace_rec *r)
{
	uint32_t i = held_find(x, r->addr);
	if (i < x->nheld) { /* a recursive mutex taken again: no hand-over */
		x->held[i].depth++;
		cxs_kt_result(x->kt, "trace_recursive_locks", 1);
		return;
	}
	if (x->nheld == MAX_HELD)
		cxs_kt_fail(x->kt, "thread %u, record %" PRIu64 ": more than %d locks held at once",
			    x->id, x->nrec, MAX_HELD);
	bool ordered = (r->flags & CXS_TRACE_F_TURN) && x->ti->fault != FAULT_UNORDERED;
	if (ordered && r->value >= UINT32_MAX)
		cxs_kt_fail(x->kt, "thread %u, record %" PRIu64 ": lock 0x%" PRIx64 " turn %" PRIu64
			    " (at most 2^32 - 2)", x->id, x->nrec, r->addr, r->value);
	x->held[x->nheld++] = (struct held_lock){.addr = r->addr, .depth = 1,
						   .turn = (uint32_t)r->value, .ordered = ordered};
	uint64_t m, a = map_addr(x, r->addr, &m, NULL);
	if (x->ti->fault != FAULT_SKIP_LOCKS) {
		if (ordered) {
			struct turn_ctx c = {x->ti, r->addr};
			uint64_t skipped = 0;
			cxs_kt_lock_turn(x->kt, a, (uint32_t)r->value,
					 x->ti->have_order ? turn_owner : NULL, &c, &skipped);
			if (skipped)
				cxs_kt_result(x->kt, "trace_turns_skipped", skipped);
		} else {
			cxs_kt_lock(x->kt, a);
		}
	}
	if (x->ti->check && m) {
		uint64_t old = cxs_kt_swap(x->kt, m, 8, x->id + 1);
		if (old != 0)
			cxs_kt_fail(x->kt, "trace check: mutual exclusion violated: thread %u acquired"
				    " lock 0x%" PRIx64 " (record %" PRIu64 ") while thread %" PRIu64
				    " holds it", x->id, r->addr, x->nrec, old - 1);
		cxs_kt_result(x->kt, "trace_lock_checks", 1);
	}
}

static void do_unlock(struct replay *x, const struct cxs_trace_rec *r)
{
	uint32_t i = held_find(x, r->addr);
	if (i == x->nheld) { /* taken before the recording began: not this replay's to release */
		cxs_kt_result(x->kt, "trace_unheld_unlocks", 1);
		return;
	}
	if (--x->held[i].depth > 0)
		return;
	bool ordered = x->held[i].ordered;
	uint32_t turn = x->held[i].turn;
	x->held[i] = x->held[--x->nheld];
	uint64_t m, a = map_addr(x, r->addr, &m, NULL);
	if (x->ti->check && m) {
		uint64_t old = cxs_kt_swap(x->kt, m, 8, 0);
		if (old != x->id + 1)
			cxs_kt_fail(x->kt, "trace check: mutual exclusion violated: thread %u released"
				    " lock 0x%" PRIx64 " (record %" PRIu64 ") and found %s%" PRIu64
				    " as its holder", x->id, r->addr, x->nrec,
				    old ? "thread " : "no thread, ", old ? old - 1 : 0);
	}
	if (x->ti->fault == FAULT_SKIP_LOCKS)
		return;
	if (ordered)
		cxs_kt_unlock_turn(x->kt, a, turn);
	else
		cxs_kt_unlock(x->kt, a);
}

/*
 * A sense-reversing barrier on the mapped object (count word, then sense
 * word), whose sense is the parity of this object's episode: a program has
 * many barriers, and one sense per thread (cxs_kt_barrier's) would find a
 * fresh barrier already released. A barrier of every traced thread (ids
 * 0 .. n-1) shrinks to the live ones after a CN failure, as the kernels'
 * do (cxs_kt_barrier_sense); one of a subset counts arrivals and cannot
 * tell whose are missing, so after a failure it waits trace.wait_limit
 * at most (cxs_kt_set_wait_limit) and then gives up: false.
 */
static bool barrier_wait(struct replay *x, uint64_t a, uint32_t n, uint64_t episode)
{
	return cxs_kt_barrier_sense(x->kt, a, n, episode & 1, n <= 64 && n == x->ti->threads);
}

/* Whether one of threads 0 .. n-1 is dead (a failure): their arrivals are missing. */
static bool members_dead(const struct replay *x, uint32_t n)
{
	for (uint32_t t = 0; cxs_kt_failed_cns(x->kt) && t < n; t++)
		if (cxs_kt_thread_dead(x->kt, t))
			return true;
	return false;
}

static void do_barrier(struct replay *x, const struct cxs_trace_rec *r)
{
	uint64_t m, a = map_addr(x, r->addr, &m, NULL);
	uint32_t n = r->value ? (uint32_t)r->value : x->ti->threads;
	bool check = x->ti->check && m;
	uint32_t i = 0;
	while (i < x->nbar && x->bar[i].addr != r->addr)
		i++;
	if (i == x->nbar) {
		if (x->nbar == MAX_BARRIERS)
			cxs_kt_fail(x->kt, "thread %u: more than %d barriers", x->id, MAX_BARRIERS);
		x->bar[x->nbar++].addr = r->addr;
	}
	x->bar[i].episodes++;
	if (check)
		(void)cxs_kt_fetch_add(x->kt, m, 8, 1);
	if (x->ti->fault != FAULT_SKIP_BARRIERS && !barrier_wait(x, a, n, x->bar[i].episodes)) {
		x->gave_up = true;
		return;
	}
	if (check && members_dead(x, n)) {
		/* The dead arrive no more: the order cannot be counted from here on. */
		cxs_kt_result(x->kt, "trace_barrier_checks_waived", 1);
	} else if (check) {
		uint64_t seen = cxs_kt_load(x->kt, m, 8), want = (uint64_t)n * x->bar[i].episodes;
		if (seen < want)
			cxs_kt_fail(x->kt, "trace check: barrier order violated: thread %u left episode"
				    " %" PRIu64 " of barrier 0x%" PRIx64 " (%u threads, record %" PRIu64
				    ") after %" PRIu64 " arrivals, fewer than %" PRIu64, x->id,
				    x->bar[i].episodes, r->addr, n, x->nrec, seen, want);
		cxs_kt_result(x->kt, "trace_barrier_checks", 1);
	}
}

static void replay_one(struct replay *x, const struct cxs_trace_rec *r)
{
	struct cxs_kt *kt = x->kt;
	uint64_t v;
	uint32_t h;
	cxs_kt_compute(kt, r->gap);
	switch (r->op) {
	case CXS_TRACE_LOAD:
		h = cxs_kt_ld_dep(kt, addr_of(x, r->addr), r->size, dep_handle(x, r->addr_dep));
		add_producer(x, h, true, r->value, 0);
		break;
	case CXS_TRACE_STORE: {
		uint64_t a = addr_of(x, r->addr);
		if (lock_word(x, r->addr)) {
			cxs_kt_result(kt, "trace_lock_word_stores", 1);
			break;
		}
		uint32_t adep = dep_handle(x, r->addr_dep);
		switch (add_value(x, r, &v, &h)) {
		case 1:
			cxs_kt_store_dep(kt, a, r->size, v, adep, CXS_KT_NO_DEP);
			break;
		case 2:
			cxs_kt_store_dep(kt, a, r->size, v, adep, h);
			break;
		default:
			cxs_kt_store_dep(kt, a, r->size, r->value, adep, CXS_KT_NO_DEP);
			break;
		}
		break;
	}
	case CXS_TRACE_RMW: {
		uint64_t a = addr_of(x, r->addr), old;
		if (lock_word(x, r->addr)) {
			cxs_kt_result(kt, "trace_lock_word_stores", 1);
			add_producer(x, CXS_KT_NO_DEP, false, 0, 0);
			break;
		}
		if ((r->flags & CXS_TRACE_F_FADD) && x->ti->dataflow) {
			old = cxs_kt_fetch_add(kt, a, r->size, r->value);
		} else {
			int k = x->ti->dataflow ? add_value(x, r, &v, &h) : 0;
			if (k == 2) /* the rmw drains the window: the producer has its value */
				v = (cxs_kt_get(kt, h) + v) & mask_of(r->size);
			old = cxs_kt_swap(kt, a, r->size, k ? v : r->value);
		}
		add_producer(x, CXS_KT_NO_DEP, false, 0, old);
		break;
	}
	case CXS_TRACE_FENCE:
		cxs_kt_fence(kt);
		break;
	case CXS_TRACE_LOCK:
		do_lock(x, r);
		break;
	case CXS_TRACE_UNLOCK:
		do_unlock(x, r);
		break;
	case CXS_TRACE_BARRIER:
		do_barrier(x, r);
		break;
	case CXS_TRACE_POST:
		(void)cxs_kt_fetch_add(kt, addr_of(x, r->addr), 8, 1);
		break;
	case CXS_TRACE_WAIT:
		x->gave_up = !spin_until(x, addr_of(x, r->addr), r->value, exit_of(r->addr));
		break;
	case CXS_TRACE_CHECK:
		v = cxs_kt_load(kt, addr_of(x, r->addr), r->size);
		if (v != r->value && cxs_kt_failed_cns(kt)) {
			/* A dead thread's work is missing: the kernels' rule, the oracle checks instead. */
			cxs_kt_result(kt, "trace_value_checks_waived", 1);
			break;
		}
		if (v != r->value)
			cxs_kt_fail(kt, "trace check: thread %u, record %" PRIu64 ": %u bytes at 0x%"
				    PRIx64 " hold 0x%" PRIx64 " in the replay; the traced program"
				    " expects 0x%" PRIx64, x->id, x->nrec, r->size, r->addr, v, r->value);
		cxs_kt_result(kt, "trace_value_checks", 1);
		break;
	default:
		break; /* the reader checked every record */
	}
}

static void run_trace(struct cxs_kt *kt)
{
	const struct cxs_kimage *img = cxs_kt_image(kt);
	const struct trace_info *ti = img->info;
	if (cxs_kt_id(kt) >= ti->threads)
		return; /* no traced thread for this core */
	struct replay rs = {0}, *x = &rs; /* on the program's stack: nothing to free on a failure */
	x->kt = kt;
	x->ti = ti;
	x->id = cxs_kt_id(kt);
	x->last_page = UINT64_MAX;
	cxs_kt_set_sleeping_waits(kt, ti->sleep);
	cxs_kt_set_wait_limit(kt, ti->wait_limit, ti->stuck_limit);
	char path[1024], why[CXS_TRACE_ERR_MAX];
	trace_path(ti, x->id, path, sizeof path);
	struct cxs_trace_reader *r = cxs_trace_reader_open(path, why, sizeof why);
	if (!r)
		cxs_kt_fail(kt, "%s", why);
	struct cxs_trace_rec rec;
	int rc;
	cxs_kt_roi_begin(kt);
	while ((rc = cxs_trace_reader_next(r, &rec, why, sizeof why)) == 1) {
		x->nrec++;
		replay_one(x, &rec);
		if (x->gave_up) {
			/* After a failure: the rest of this thread's records are not replayed. */
			cxs_kt_result(kt, "trace_waits_abandoned", 1);
			break;
		}
	}
	cxs_trace_reader_close(r);
	if (rc < 0)
		cxs_kt_fail(kt, "%s", why);
	cxs_kt_fence(kt);
	cxs_kt_roi_end(kt);
	cxs_kt_result(kt, "trace_records", x->nrec);
}

const struct cxs_kernel cxs_kernel_trace = {
	.name = "trace",
	.doc = "replays per-core trace files (workload.trace, [trace]; cxlsim-trace makes them)",
	.default_size = 65536,
	.deterministic = false,
	.configure = trace_configure,
	.build = build_trace,
	.run = run_trace,
};
