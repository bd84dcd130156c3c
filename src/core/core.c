/*
 * core.c — the out-of-order core with a TSO store buffer (core.h).
 *
 * Structures, per core:
 *
 *   program --ops--> frontend --> reorder buffer (memory ops only; the window
 *                                 counts instructions: seq numbers)
 *                                  |  loads issue at once (LFB permitting)
 *                                  |  retire in order; a load's value goes to
 *                                  v  the program when it retires
 *                        store buffer (senior stores) --> head group --> L1
 *
 * Time. The frontend dispatches one non-memory instruction per cycle (CPI 1)
 * and memory operations alongside them at no extra cycle, so a stretch of
 * COMPUTE n costs n cycles unless the window fills first. One event per
 * COMPUTE stretch, plus one per completion: the model never ticks cycles.
 *
 * Counters are integrals over time of piecewise-constant state (between two
 * events of the core nothing changes): at every event, the interval since the
 * last one is split into "frontend busy" (before busy_until) and "stalled"
 * (after, if the frontend is blocked), and the outstanding-miss counts of the
 * interval decide which stall counters it feeds. They count only inside the
 * program's region of interest. Definitions (CAMP Table 5, Intel PMU names):
 */
#include "cxlsim/core.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* name, unit, definition (HDF5 attribute), Intel event it stands for */
#define CORE_COUNTERS(X)                                                                           \
	X(cycles, "cycles", "cycles in the region of interest (CPU_CLK_UNHALTED.THREAD)")            \
	X(instructions, "instructions", "instructions dispatched, memory and non-memory (INST_RETIRED.ANY)") \
	X(loads, "loads", "demand loads (MEM_INST_RETIRED.ALL_LOADS)")                               \
	X(stores, "stores", "stores (MEM_INST_RETIRED.ALL_STORES)")                                  \
	X(atomics, "ops", "atomic read-modify-writes (MEM_INST_RETIRED.LOCK_LOADS)")                 \
	X(fences, "ops", "full fences")                                                              \
	X(stalls_total, "cycles", "cycles the frontend dispatched nothing: window, queue or buffer full, drain, or waiting for a value (CYCLE_ACTIVITY.STALLS_TOTAL)") \
	X(stalls_l1d_miss, "cycles", "stall cycles while a demand load that missed L1 or hit a fill buffer is outstanding (CYCLE_ACTIVITY.STALLS_L1D_MISS)") \
	X(stalls_l2_miss, "cycles", "stall cycles while a demand load that missed L2 is outstanding (CYCLE_ACTIVITY.STALLS_L2_MISS)") \
	X(stalls_l3_miss, "cycles", "stall cycles while a demand load that missed L3 is outstanding (CYCLE_ACTIVITY.STALLS_L3_MISS)") \
	X(bound_on_stores, "cycles", "stall cycles with the store queue full and no demand load missing L1 (EXE_ACTIVITY.BOUND_ON_STORES)") \
	X(l1d_misses, "loads", "demand loads that missed L1 and were not LFB hits (MEM_LOAD_RETIRED.L1_MISS)") \
	X(l2_misses, "loads", "demand loads that missed L2 (MEM_LOAD_RETIRED.L2_MISS)")              \
	X(l3_misses, "loads", "demand loads that missed L3: served by local DRAM or CXL memory (MEM_LOAD_RETIRED.L3_MISS)") \
	X(cxl_loads, "loads", "demand loads that missed L3 to CXL memory")                            \
	X(lfb_hits, "loads", "demand loads to a line already being filled (MEM_LOAD_RETIRED.FB_HIT)") \
	X(forwarded, "loads", "loads served by store-to-load forwarding")                            \
	X(replays, "loads", "loads replayed because their line was lost before they retired (TSO; MACHINE_CLEARS.MEMORY_ORDERING)") \
	X(demand_reads, "loads", "demand loads that missed L3 (OFFCORE_REQUESTS.DEMAND_DATA_RD)")    \
	X(demand_reads_outstanding, "cycles", "sum over cycles of L3-missing demand loads outstanding (OFFCORE_REQUESTS_OUTSTANDING.DEMAND_DATA_RD); / demand_reads = mean latency") \
	X(cycles_with_demand_read, "cycles", "cycles with at least one L3-missing demand load outstanding (OFFCORE_REQUESTS_OUTSTANDING.CYCLES_WITH_DEMAND_DATA_RD); outstanding / this = MLP") \
	X(l1_pf_requests, "requests", "L1 prefetcher requests (L1D_PEND_MISS / SW-visible prefetch responses)") \
	X(l1_pf_from_mem, "requests", "L1 prefetches that missed L3 (served from memory): R_Mem's numerator") \
	X(l2_pf_requests, "requests", "L2 prefetcher requests (L2_RQSTS.ALL_PF)")                     \
	X(l2_pf_l3_hits, "requests", "L2 prefetches that hit L3 (L2_RQSTS.PF_MISS minus LLC misses)") \
	X(store_prefetches, "requests", "exclusive prefetches sent for stores (RFO prefetch)")        \
	X(sb_transactions, "transactions", "store-buffer head transactions (a group of coalesced stores)") \
	X(sb_coalesced, "stores", "stores that joined another store's transaction (coalescing)")      \
	X(sb_drain_ps_total, "ps", "time store-buffer transactions took from issue to commit")

enum {
#define ENUM(n, u, d) C_##n,
	CORE_COUNTERS(ENUM)
#undef ENUM
	C_COUNT
};

static const char *const counter_name[C_COUNT] = {
#define NAME(n, u, d) #n,
	CORE_COUNTERS(NAME)
#undef NAME
};
static const char *const counter_unit[C_COUNT] = {
#define UNIT(n, u, d) u,
	CORE_COUNTERS(UNIT)
#undef UNIT
};
static const char *const counter_doc[C_COUNT] = {
#define DOC(n, u, d) d,
	CORE_COUNTERS(DOC)
#undef DOC
};

/* Counters kept in ps and converted to cycles at the end. */
static bool in_ps(int i)
{
	return i == C_cycles || i == C_stalls_total || i == C_stalls_l1d_miss ||
	       i == C_stalls_l2_miss || i == C_stalls_l3_miss || i == C_bound_on_stores ||
	       i == C_demand_reads_outstanding || i == C_cycles_with_demand_read;
}

enum kind { K_LOAD = 1, K_STORE, K_ATOMIC };
enum st { S_WAIT = 0, S_ISSUED, S_DONE };
enum block { B_NONE = 0, B_ROB, B_LQ, B_SQ, B_DRAIN, B_VALUE, B_DONE };
static const char *const block_name[] = {"running", "reorder buffer full", "load queue full",
					 "store queue full", "draining for a fence or atomic",
					 "waiting for a value", "finished"};

/* Request tags: source in the top 2 bits, then slot, then generation. */
enum { T_ROB = 0, T_SB = 1, T_PF = 2 };
#define TAG(src, slot, gen) ((uint64_t)(src) << 62 | (uint64_t)(slot) << 32 | (uint32_t)(gen))
#define TAG_SRC(t) ((uint32_t)((t) >> 62))
#define TAG_SLOT(t) ((uint32_t)((t) >> 32) & 0x3fffffffu)
#define TAG_GEN(t) ((uint32_t)(t))

/* Miss levels a demand load holds while outstanding. */
#define M_L1 1u
#define M_L2 2u
#define M_L3 4u

#define STORE_FILTER 1024 /* buckets of the store-word filter */
#define L2PF_MAX 16       /* L2 prefetches in flight per core */
#define L2PF_AHEAD 16     /* how far ahead of a stream the L2 streamer fetches, in lines */
#define PF_STREAMS 16     /* streams (4 KiB pages) each prefetcher tracks at once */
#define PF_NONE (UINT64_MAX - 8) /* a tracker's "no miss yet" line */
#define PF_RECENT 64      /* direct-mapped record of L2-prefetched lines */

/* A prefetcher's view of one page: its last miss. */
struct pf_stream {
	uint64_t page, last, used;
	bool valid;
};
#define WORD_BUCKET(a) (((a) >> 3) & (STORE_FILTER - 1))

struct ent {
	uint64_t seq, addr, value;
	uint32_t handle, gen;
	uint8_t kind, op, size, state;
	uint8_t replay, fwd, lfb, miss; /* miss: M_* held while outstanding */
};

struct sb_ent {
	uint64_t addr, value;
	uint8_t size, remote;
};

struct lfb_ent {
	uint64_t line, tag;
	uint8_t valid;
};

struct cxs_core {
	uint32_t node, id;
	struct cxs_core_params p;
	struct cxs_core_env env;
	struct cxs_kt *kt;

	struct ent *rob;          /* ring of p.rob */
	uint32_t rob_head, rob_n, nloads, nstores;
	uint64_t seq;             /* instructions dispatched */
	uint32_t gen;

	struct sb_ent *sb;        /* ring of p.sq */
	uint32_t sb_head, sb_n;
	uint32_t sb_group, sb_left; /* head transaction: stores in it, completions awaited */
	uint64_t sb_pending[2];     /* which stores of the head transaction are in flight */
	bool sb_held;
	uint32_t sb_held_n;         /* the group the protocol held (sb_head returned false) */
	bool sb_released;           /* ... and then released: issue exactly that group */
	cxs_time sb_issued;

	/*
	 * Stores in the window or the buffer per 8-byte word (hashed): accesses
	 * are aligned and at most 8 bytes, so a load can overlap a store only in
	 * the same word, and an empty bucket proves there is nothing to forward.
	 */
	uint16_t store_words[STORE_FILTER];
	uint32_t nwaiting;        /* loads in S_WAIT */
	uint64_t nretired;        /* window entries retired: entry i of the window is number nretired + i */
	uint64_t wait_lo;         /* no entry numbered below this is in S_WAIT */

	struct lfb_ent lfb[64];
	uint32_t l2pf_inflight;
	struct lfb_ent l2pf[L2PF_MAX]; /* lines the L2 prefetcher has in flight */
	struct pf_stream l1s[PF_STREAMS], l2s[PF_STREAMS]; /* per-page stream trackers */
	uint64_t pf_clock;        /* LRU order of the trackers */
	uint64_t pf_recent[PF_RECENT]; /* lines the L2 prefetcher fetched (line + 1; 0 empty) */
	uint64_t last_pfm_line;

	struct cxs_kop op;
	bool have_op;
	uint32_t compute_left;
	uint8_t block;
	cxs_time busy_until, wake_at, acc_t;
	uint32_t n_miss[3];       /* outstanding demand loads that missed L1, L2, L3 */
	bool counting, failed, done;
	cxs_time roi_begin, roi_end;
	char err[512];

	uint64_t c[C_COUNT];
	uint64_t *out[C_COUNT];
};

void cxs_core_default_params(struct cxs_core_params *p)
{
	*p = (struct cxs_core_params){.rob = 224, .lq = 128, .sq = 72, .lfb = 12,
				      .l1_prefetch = true, .l2_prefetch = true,
				      .cycle_ps = cxs_period_ps(2400000000u)};
}

/* ---- accounting ------------------------------------------------------------ */

static void account(struct cxs_core *c, cxs_time now)
{
	if (now <= c->acc_t)
		return;
	if (c->counting) {
		cxs_time dt = now - c->acc_t;
		cxs_time stall_from = c->busy_until > c->acc_t ? c->busy_until : c->acc_t;
		cxs_time stall = c->block != B_NONE && now > stall_from ? now - stall_from : 0;
		c->c[C_cycles] += dt;
		c->c[C_stalls_total] += stall;
		if (c->n_miss[0])
			c->c[C_stalls_l1d_miss] += stall;
		if (c->n_miss[1])
			c->c[C_stalls_l2_miss] += stall;
		if (c->n_miss[2]) {
			c->c[C_stalls_l3_miss] += stall;
			c->c[C_demand_reads_outstanding] += dt * c->n_miss[2];
			c->c[C_cycles_with_demand_read] += dt;
		}
		/* Intel's BOUND_ON_STORES: the store buffer full and no load stalling (so a
		 * cycle is not counted both here and as a load miss's stall). */
		if (c->block == B_SQ && c->n_miss[0] == 0)
			c->c[C_bound_on_stores] += stall;
	}
	c->acc_t = now;
}

static void wake(struct cxs_core *c, cxs_time t)
{
	if (c->wake_at == t)
		return;
	c->wake_at = t;
	c->env.wake(c->env.ctx, c->id, t);
}

static cxs_time cyc(const struct cxs_core *c, uint64_t n)
{
	return (cxs_time)n * c->p.cycle_ps;
}

static struct ent *rob_at(struct cxs_core *c, uint32_t i) /* i-th oldest */
{
	return &c->rob[(c->rob_head + i) % c->p.rob];
}

static uint64_t window(const struct cxs_core *c)
{
	return c->rob_n ? c->seq - c->rob[c->rob_head].seq : 0;
}

static int request(struct cxs_core *c, cxs_time t, uint8_t op, uint64_t addr, uint8_t size,
		   uint64_t value, uint64_t tag, uint8_t flags, char *err, size_t len)
{
	struct cxs_mem_req r = {.addr = addr, .value = value, .tag = tag, .issued = t,
				.core = c->id, .op = op, .size = size, .flags = flags};
	return c->env.request(c->env.ctx, t, &r, err, len);
}

/* ---- line fill buffer and prefetchers -------------------------------------- */

static struct lfb_ent *lfb_find(struct cxs_core *c, uint64_t line)
{
	for (uint32_t i = 0; i < c->p.lfb; i++)
		if (c->lfb[i].valid && c->lfb[i].line == line)
			return &c->lfb[i];
	return NULL;
}

static struct lfb_ent *lfb_free(struct cxs_core *c)
{
	for (uint32_t i = 0; i < c->p.lfb; i++)
		if (!c->lfb[i].valid)
			return &c->lfb[i];
	return NULL;
}

static void lfb_release(struct cxs_core *c, uint64_t tag)
{
	for (uint32_t i = 0; i < c->p.lfb; i++)
		if (c->lfb[i].valid && c->lfb[i].tag == tag)
			c->lfb[i].valid = 0;
}

static bool l2pf_find(const struct cxs_core *c, uint64_t line)
{
	for (uint32_t i = 0; i < L2PF_MAX; i++)
		if (c->l2pf[i].valid && c->l2pf[i].line == line)
			return true;
	return false;
}

static bool same_page(uint64_t a, uint64_t b)
{
	return a >> 6 == b >> 6; /* lines within one 4 KiB page */
}

static int prefetch(struct cxs_core *c, cxs_time now, uint64_t line, bool into_l1, char *err,
		    size_t len)
{
	uint64_t addr = line << CXS_LINE_SHIFT;
	int lvl = c->env.where(c->env.ctx, c->id, addr, false);
	if (lvl == CXS_LVL_L1 || (!into_l1 && lvl == CXS_LVL_L2) || lfb_find(c, line))
		return 0;
	uint64_t tag = TAG(T_PF, into_l1, ++c->gen);
	if (into_l1) {
		struct lfb_ent *f = lfb_free(c);
		if (!f)
			return 0;
		*f = (struct lfb_ent){.line = line, .tag = tag, .valid = 1};
		if (c->counting) {
			c->c[C_l1_pf_requests]++;
			c->c[C_l1_pf_from_mem] += lvl >= CXS_LVL_LOCAL;
		}
	} else {
		if (c->l2pf_inflight >= L2PF_MAX || l2pf_find(c, line))
			return 0;
		c->l2pf_inflight++;
		c->pf_recent[line % PF_RECENT] = line + 1;
		for (uint32_t i = 0; i < L2PF_MAX; i++)
			if (!c->l2pf[i].valid) {
				c->l2pf[i] = (struct lfb_ent){.line = line, .tag = tag, .valid = 1};
				break;
			}
		if (c->counting) {
			c->c[C_l2_pf_requests]++;
			c->c[C_l2_pf_l3_hits] += lvl == CXS_LVL_L3;
		}
	}
	return request(c, now, CXS_OP_PREFETCH_S, addr, 8, 0, tag, 0, err, len);
}

/*
 * The tracker of line's page (4 KiB: 64 lines), allocated over the least
 * recently used one if the page has none. Real stream prefetchers follow
 * many streams at once (Intel's L2 streamer: 32 pages); a single
 * last-miss register would never see the streams of a loop over three
 * arrays, whose misses alternate between them.
 */
static struct pf_stream *stream_of(struct cxs_core *c, struct pf_stream *t, uint64_t line)
{
	uint64_t page = line >> 6;
	struct pf_stream *victim = &t[0];
	for (uint32_t i = 0; i < PF_STREAMS; i++) {
		if (t[i].valid && t[i].page == page) {
			t[i].used = ++c->pf_clock;
			return &t[i];
		}
		if (!t[i].valid || (victim->valid && t[i].used < victim->used))
			victim = &t[i];
	}
	*victim = (struct pf_stream){.page = page, .last = PF_NONE, .used = ++c->pf_clock, .valid = true};
	return victim;
}

/*
 * The L2 streamer sees an access to line in a stream: it keeps lines 3 ..
 * L2PF_AHEAD ahead fetched (1 and 2 are the L1 prefetcher's), within the
 * page and the 16 in flight. Intel's streamer runs up to 20 lines ahead; a
 * short fixed distance (6 lines) covered DRAM's latency but not a CXL
 * device's, and made every prefetch-friendly loop fall off a cliff on CXL
 * that no DRAM-side counter foretells.
 */
static int train_l2(struct cxs_core *c, cxs_time now, uint64_t line, char *err, size_t len)
{
	int rc = 0;
	struct pf_stream *s2 = stream_of(c, c->l2s, line);
	if (c->p.l2_prefetch && s2->last != PF_NONE && line > s2->last && line - s2->last <= 2)
		for (uint64_t d = 3; d <= L2PF_AHEAD && rc == 0 && c->l2pf_inflight < L2PF_MAX; d++)
			if (same_page(line, line + d))
				rc = prefetch(c, now, line + d, false, err, len);
	s2->last = line;
	return rc;
}

/* After a demand miss of `line` at level lvl: stream detection, then prefetches. */
static int train(struct cxs_core *c, cxs_time now, uint64_t line, int lvl, char *err, size_t len)
{
	int rc = 0;
	struct pf_stream *s1 = stream_of(c, c->l1s, line);
	if (c->p.l1_prefetch && line == s1->last + 1)
		for (uint64_t d = 1; d <= 2 && rc == 0; d++)
			if (same_page(line, line + d))
				rc = prefetch(c, now, line + d, true, err, len);
	s1->last = line;
	if (rc == 0 && lvl >= CXS_LVL_L3)
		rc = train_l2(c, now, line, err, len);
	return rc;
}

/*
 * A demand load's first touch of a line the L2 streamer fetched: the stream
 * advances, as the real streamer trains on its L2 hits. The prefetch filled
 * L1 too (the CN fills a core's L1 and L2 together), so without this the
 * load is an L1 hit the streamer never sees and every stream would stall
 * after one burst of four lines.
 */
static int touch_prefetched(struct cxs_core *c, cxs_time now, uint64_t line, char *err, size_t len)
{
	if (c->pf_recent[line % PF_RECENT] != line + 1)
		return 0;
	c->pf_recent[line % PF_RECENT] = 0;
	return train_l2(c, now, line, err, len);
}

/* ---- loads ------------------------------------------------------------------- */

/* The youngest older store overlapping the load: 1 covers it (value set), -1 partial, 0 none. */
static int forward(struct cxs_core *c, uint32_t idx, const struct ent *e, uint64_t *value)
{
	if (c->store_words[WORD_BUCKET(e->addr)] == 0)
		return 0;
	for (uint32_t k = idx; k-- > 0;) { /* older stores still in the window */
		const struct ent *s = rob_at(c, k);
		if (s->kind != K_STORE || s->addr >= e->addr + e->size || e->addr >= s->addr + s->size)
			continue;
		if (s->addr <= e->addr && e->addr + e->size <= s->addr + s->size) {
			uint64_t v = s->value >> (8 * (e->addr - s->addr));
			*value = e->size < 8 ? v & ((UINT64_C(1) << (8 * e->size)) - 1) : v;
			return 1;
		}
		return -1;
	}
	for (uint32_t k = c->sb_n; k-- > 0;) { /* then the store buffer, youngest first */
		const struct sb_ent *s = &c->sb[(c->sb_head + k) % c->p.sq];
		if (s->addr >= e->addr + e->size || e->addr >= s->addr + s->size)
			continue;
		if (s->addr <= e->addr && e->addr + e->size <= s->addr + s->size) {
			uint64_t v = s->value >> (8 * (e->addr - s->addr));
			*value = e->size < 8 ? v & ((UINT64_C(1) << (8 * e->size)) - 1) : v;
			return 1;
		}
		return -1;
	}
	return 0;
}

/*
 * Tries to issue the load at window index idx (in S_WAIT, counted in
 * nwaiting); it stays S_WAIT if it cannot yet.
 */
static int try_issue(struct cxs_core *c, cxs_time now, uint32_t idx, char *err, size_t len);

static int issue_load(struct cxs_core *c, cxs_time now, uint32_t idx, char *err, size_t len)
{
	struct ent *e = rob_at(c, idx);
	int rc = try_issue(c, now, idx, err, len);
	if (e->state != S_WAIT)
		c->nwaiting--;
	return rc;
}

static int try_issue(struct cxs_core *c, cxs_time now, uint32_t idx, char *err, size_t len)
{
	struct ent *e = rob_at(c, idx);
	uint64_t v;
	int f = forward(c, idx, e, &v);
	if (f < 0)
		return 0; /* partly covered by an older store: wait until it drains */
	if (f > 0) {
		e->value = v;
		e->state = S_DONE;
		e->fwd = 1;
		c->c[C_forwarded] += c->counting;
		return 0;
	}
	uint64_t line = e->addr >> CXS_LINE_SHIFT;
	int lvl = c->env.where(c->env.ctx, c->id, e->addr, false);
	uint64_t tag = TAG(T_ROB, (c->rob_head + idx) % c->p.rob, e->gen);
	e->miss = 0;
	e->lfb = 0;
	if (lvl != CXS_LVL_L1) {
		if (lfb_find(c, line)) {
			/*
			 * Waiting on a fill buffer counts as an L1 miss pending (Intel's
			 * L1D_PEND_MISS counts buffers a demand load hit, so STALLS_L1D_MISS
			 * covers a demand waiting on an L1 prefetch from memory: CAMP's
			 * s_Cache); not as an L2 or L3 miss, which the buffer's own
			 * request is.
			 */
			c->c[C_lfb_hits] += c->counting;
			e->miss = M_L1;
			c->n_miss[0]++;
		} else {
			struct lfb_ent *slot = lfb_free(c);
			if (!slot)
				return 0; /* every fill buffer busy: wait */
			*slot = (struct lfb_ent){.line = line, .tag = tag, .valid = 1};
			e->lfb = 1;
			/*
			 * A line the L2 prefetcher has in flight: the load waits for that
			 * prefetch (an L1 miss), and makes no demand request of its own
			 * beyond L2 (no demand read, no L2 or L3 demand miss). Timing is
			 * the same either way: the CN merges the request with the fill.
			 */
			int dl = l2pf_find(c, line) ? CXS_LVL_L2 : lvl;
			e->miss = M_L1 | (dl >= CXS_LVL_L3 ? M_L2 : 0) | (dl >= CXS_LVL_LOCAL ? M_L3 : 0);
			if (c->counting) {
				c->c[C_l1d_misses]++;
				c->c[C_l2_misses] += dl >= CXS_LVL_L3;
				c->c[C_l3_misses] += dl >= CXS_LVL_LOCAL;
				c->c[C_demand_reads] += dl >= CXS_LVL_LOCAL;
				c->c[C_cxl_loads] += dl == CXS_LVL_CXL;
			}
			for (int i = 0; i < 3; i++)
				c->n_miss[i] += e->miss >> i & 1;
		}
	}
	e->state = S_ISSUED;
	if (request(c, now, CXS_OP_LOAD, e->addr, e->size, 0, tag, 0, err, len) != 0)
		return -1;
	if (e->lfb && train(c, now, line, lvl, err, len) != 0)
		return -1;
	return touch_prefetched(c, now, line, err, len);
}

static void release_miss(struct cxs_core *c, struct ent *e, uint64_t tag)
{
	for (int i = 0; i < 3; i++)
		c->n_miss[i] -= e->miss >> i & 1;
	e->miss = 0;
	if (e->lfb)
		lfb_release(c, tag);
	e->lfb = 0;
}

/* Loads waiting for a fill buffer or a draining store, oldest first. */
static void mark_waiting(struct cxs_core *c, uint32_t idx)
{
	c->nwaiting++;
	if (c->nretired + idx < c->wait_lo)
		c->wait_lo = c->nretired + idx;
}

static int issue_waiting(struct cxs_core *c, cxs_time now, char *err, size_t len)
{
	if (c->nwaiting == 0)
		return 0;
	uint32_t i = c->wait_lo > c->nretired ? (uint32_t)(c->wait_lo - c->nretired) : 0;
	uint64_t first = UINT64_MAX;
	for (; i < c->rob_n && c->nwaiting; i++) {
		struct ent *e = rob_at(c, i);
		if (e->kind == K_LOAD && e->state == S_WAIT) {
			if (issue_load(c, now, i, err, len) != 0)
				return -1;
			if (e->state == S_WAIT && first == UINT64_MAX)
				first = c->nretired + i;
			/* No break when the buffers are full: a younger load that hits
			 * L1, is an LFB hit or is forwarded still goes. */
		}
	}
	c->wait_lo = first != UINT64_MAX ? first : c->nretired + i;
	return 0;
}

/* ---- store buffer -------------------------------------------------------------- */

static void sb_stores(const struct cxs_core *c, struct cxs_sb_store *out, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct sb_ent *s = &c->sb[(c->sb_head + i) % c->p.sq];
		out[i] = (struct cxs_sb_store){s->addr, s->value, s->size, s->remote};
	}
}

/* Starts the head transaction: consecutive stores to the head's line coalesce. */
static int sb_drain(struct cxs_core *c, cxs_time now, char *err, size_t len)
{
	if (c->sb_left || c->sb_n == 0 || c->sb_held)
		return 0;
	uint64_t line = c->sb[c->sb_head].addr >> CXS_LINE_SHIFT;
	uint32_t n = 1;
	while (n < c->sb_n && (c->sb[(c->sb_head + n) % c->p.sq].addr >> CXS_LINE_SHIFT == line ||
			       c->p.fault == CXS_CORE_FAULT_SB_PARALLEL ||
			       c->p.fault == CXS_CORE_FAULT_UNORDERED))
		n++;
	struct cxs_sb_store group[128];
	if (n > 128)
		n = 128;
	if (c->sb_released) {
		n = c->sb_held_n; /* what the protocol saw, even if the group grew since */
		c->sb_released = false;
	} else if (c->env.sb_head) {
		sb_stores(c, group, n);
		if (!c->env.sb_head(c->env.ctx, c->id, now, group, n)) {
			c->sb_held = true;
			c->sb_held_n = n;
			return 0;
		}
	}
	c->sb_group = c->sb_left = n;
	c->sb_pending[0] = n >= 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;
	c->sb_pending[1] = n <= 64 ? 0 : n >= 128 ? UINT64_MAX : (UINT64_C(1) << (n - 64)) - 1;
	c->sb_issued = now;
	if (c->counting) {
		c->c[C_sb_transactions]++;
		c->c[C_sb_coalesced] += n - 1;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct sb_ent *s = &c->sb[(c->sb_head + i) % c->p.sq];
		uint8_t flags = i == n - 1 && c->p.write_through && s->remote ? CXS_REQ_WT : 0;
		if (request(c, now, CXS_OP_STORE, s->addr, s->size, s->value,
			    TAG(T_SB, i, ++c->gen), flags, err, len) != 0)
			return -1;
	}
	return 0;
}

static int sb_done_one(struct cxs_core *c, cxs_time now, uint32_t idx, char *err, size_t len)
{
	if (idx >= c->sb_group || !(c->sb_pending[idx / 64] >> (idx % 64) & 1)) {
		snprintf(err, len, "node %u core %u: completion of store %u of a store-buffer "
			 "transaction that does not have it in flight", c->node, c->id, idx);
		return -1;
	}
	c->sb_pending[idx / 64] &= ~(UINT64_C(1) << (idx % 64));
	if (--c->sb_left > 0)
		return 0;
	uint32_t n = c->sb_group;
	if (c->env.commit) {
		struct cxs_sb_store group[128];
		sb_stores(c, group, n);
		c->env.commit(c->env.ctx, c->id, now, group, n);
	}
	if (c->counting)
		c->c[C_sb_drain_ps_total] += now - c->sb_issued;
	for (uint32_t i = 0; i < n; i++)
		c->store_words[WORD_BUCKET(c->sb[(c->sb_head + i) % c->p.sq].addr)]--;
	c->sb_head = (c->sb_head + n) % c->p.sq;
	c->sb_n -= n;
	c->sb_group = 0;
	return sb_drain(c, now, err, len);
}

int cxs_core_sb_release(struct cxs_core *c, cxs_time now, char *err, size_t errlen)
{
	account(c, now);
	if (!c->sb_held)
		return 0;
	c->sb_held = false;
	c->sb_released = true;
	if (sb_drain(c, now, err, errlen) != 0)
		return -1;
	return cxs_core_step(c, now, err, errlen);
}

/* ---- retirement ------------------------------------------------------------------ */

static void retire(struct cxs_core *c, cxs_time now)
{
	while (c->rob_n) {
		struct ent *e = &c->rob[c->rob_head];
		if (e->state != S_DONE)
			return;
		if (e->kind == K_STORE) {
			struct sb_ent *s = &c->sb[(c->sb_head + c->sb_n) % c->p.sq];
			*s = (struct sb_ent){e->addr, e->value, e->size,
					     c->env.remote(c->env.ctx, e->addr)};
			c->sb_n++;
			c->nstores--;
			if (c->env.sb_enter) {
				struct cxs_sb_store st = {s->addr, s->value, s->size, s->remote};
				c->env.sb_enter(c->env.ctx, c->id, now, &st);
			}
		} else {
			cxs_kt_loaded(c->kt, e->handle, e->value);
			if (e->kind == K_LOAD)
				c->nloads--;
		}
		c->rob_head = (c->rob_head + 1) % c->p.rob;
		c->rob_n--;
		c->nretired++;
	}
}

/* ---- the frontend ------------------------------------------------------------------ */

static struct ent *alloc(struct cxs_core *c, uint8_t kind)
{
	struct ent *e = &c->rob[(c->rob_head + c->rob_n) % c->p.rob];
	*e = (struct ent){.seq = c->seq++, .kind = kind, .gen = ++c->gen};
	c->rob_n++;
	c->c[C_instructions] += c->counting;
	return e;
}

static void roi_begin(struct cxs_core *c, cxs_time now)
{
	memset(c->c, 0, sizeof c->c);
	c->counting = true;
	c->roi_begin = now;
}

/* Dispatches until blocked or busy. Returns -1 when the run must stop. */
static int frontend(struct cxs_core *c, cxs_time now, char *err, size_t len)
{
	for (;;) {
		c->block = B_NONE;
		if (!c->have_op) {
			cxs_kt_next(c->kt, &c->op);
			c->have_op = true;
			if (c->op.kind == CXS_KOP_COMPUTE)
				c->compute_left = c->op.n;
		}
		struct cxs_kop *op = &c->op;
		bool full = c->rob_n == c->p.rob || window(c) >= c->p.rob;
		switch (op->kind) {
		case CXS_KOP_COMPUTE: {
			uint64_t room = c->p.rob - (window(c) < c->p.rob ? window(c) : c->p.rob);
			if (c->rob_n == 0)
				room = c->compute_left; /* nothing to wait for: the window is empty */
			if (room == 0) {
				c->block = B_ROB;
				return 0;
			}
			uint32_t k = room < c->compute_left ? (uint32_t)room : c->compute_left;
			c->seq += k;
			c->c[C_instructions] += c->counting ? k : 0;
			c->compute_left -= k;
			if (c->compute_left == 0)
				c->have_op = false;
			c->busy_until = now + cyc(c, k);
			wake(c, c->busy_until);
			return 0;
		}
		case CXS_KOP_LOAD: {
			if (full) {
				c->block = B_ROB;
				return 0;
			}
			if (c->nloads == c->p.lq) {
				c->block = B_LQ;
				return 0;
			}
			struct ent *e = alloc(c, K_LOAD);
			e->addr = op->addr;
			e->size = op->size;
			e->handle = op->n;
			c->nloads++;
			mark_waiting(c, c->rob_n - 1);
			c->c[C_loads] += c->counting;
			c->have_op = false;
			if (issue_load(c, now, c->rob_n - 1, err, len) != 0)
				return -1;
			break;
		}
		case CXS_KOP_STORE: {
			if (full) {
				c->block = B_ROB;
				return 0;
			}
			if (c->nstores + c->sb_n >= c->p.sq) {
				c->block = B_SQ;
				return 0;
			}
			struct ent *e = alloc(c, K_STORE);
			e->addr = op->addr;
			e->size = op->size;
			e->value = op->value;
			e->state = S_DONE; /* address and data known: ready to retire */
			c->nstores++;
			c->store_words[WORD_BUCKET(op->addr)]++;
			c->c[C_stores] += c->counting;
			c->have_op = false;
			uint64_t line = op->addr >> CXS_LINE_SHIFT;
			if (line != c->last_pfm_line &&
			    c->env.where(c->env.ctx, c->id, op->addr, true) != CXS_LVL_L1) {
				c->c[C_store_prefetches] += c->counting;
				if (request(c, now, CXS_OP_PREFETCH_M, op->addr, op->size, 0,
					    TAG(T_PF, 2, ++c->gen), 0, err, len) != 0)
					return -1;
			}
			c->last_pfm_line = line;
			break;
		}
		case CXS_KOP_SWAP:
		case CXS_KOP_FETCH_ADD:
		case CXS_KOP_FENCE:
		case CXS_KOP_ROI_END:
			/* Everything older must be done and the store buffer empty. */
			retire(c, now);
			bool ignore = op->kind == CXS_KOP_FENCE && c->p.fault == CXS_CORE_FAULT_FENCE_NOOP;
			if ((c->rob_n || c->sb_n) && !ignore) {
				c->block = B_DRAIN;
				return 0;
			}
			c->have_op = false;
			if (op->kind == CXS_KOP_FENCE) {
				c->seq++;
				c->c[C_fences] += c->counting;
				c->c[C_instructions] += c->counting;
			} else if (op->kind == CXS_KOP_ROI_END) {
				account(c, now);
				c->counting = false;
				c->roi_end = now;
			} else {
				struct ent *e = alloc(c, K_ATOMIC);
				e->addr = op->addr;
				e->size = op->size;
				e->value = op->value;
				e->handle = op->n;
				e->state = S_ISSUED;
				c->c[C_atomics] += c->counting;
				if (request(c, now,
					    op->kind == CXS_KOP_SWAP ? CXS_OP_SWAP : CXS_OP_FETCH_ADD,
					    op->addr, op->size, op->value, TAG(T_ROB, c->rob_head, e->gen),
					    0, err, len) != 0)
					return -1;
			}
			break;
		case CXS_KOP_WAIT:
			retire(c, now);
			if (!cxs_kt_ready(c->kt, op->n)) {
				c->block = B_VALUE;
				return 0;
			}
			c->have_op = false;
			break;
		case CXS_KOP_ROI_BEGIN:
			account(c, now);
			roi_begin(c, now);
			c->have_op = false;
			break;
		case CXS_KOP_DONE:
			c->block = B_DONE;
			c->done = true;
			return 0;
		case CXS_KOP_FAIL:
		default:
			c->block = B_DONE;
			c->failed = true;
			snprintf(c->err, sizeof c->err, "%s", cxs_kt_error(c->kt));
			snprintf(err, len, "workload: node %u core %u: %s", c->node, c->id, c->err);
			return -1;
		}
	}
}

int cxs_core_step(struct cxs_core *c, cxs_time now, char *err, size_t errlen)
{
	account(c, now);
	if (c->wake_at <= now)
		c->wake_at = 0;
	retire(c, now);
	if (sb_drain(c, now, err, errlen) != 0 || issue_waiting(c, now, err, errlen) != 0)
		return -1;
	if (c->done || c->failed || now < c->busy_until)
		return 0;
	if (frontend(c, now, err, errlen) != 0)
		return -1;
	/* Stores it dispatched are ready: into the buffer, and drain. */
	retire(c, now);
	return sb_drain(c, now, err, errlen);
}

int cxs_core_complete(struct cxs_core *c, cxs_time now, const struct cxs_mem_req *r,
		      uint64_t value, char *err, size_t errlen)
{
	account(c, now);
	uint64_t tag = r->tag;
	switch (TAG_SRC(tag)) {
	case T_ROB: {
		struct ent *e = &c->rob[TAG_SLOT(tag) % c->p.rob];
		if (e->gen != TAG_GEN(tag) || e->state != S_ISSUED) {
			snprintf(err, errlen, "node %u core %u: completion of a request it does not have",
				 c->node, c->id);
			return -1;
		}
		release_miss(c, e, tag);
		if (e->replay) {
			/* Its line was lost after it performed: perform it again (TSO). */
			e->replay = 0;
			e->state = S_WAIT;
			c->c[C_replays] += c->counting;
			uint32_t idx = (TAG_SLOT(tag) + c->p.rob - c->rob_head) % c->p.rob;
			mark_waiting(c, idx);
			if (issue_load(c, now, idx, err, errlen) != 0)
				return -1;
		} else {
			e->value = value;
			e->state = S_DONE;
		}
		break;
	}
	case T_SB:
		if (sb_done_one(c, now, TAG_SLOT(tag), err, errlen) != 0)
			return -1;
		break;
	default: /* prefetches */
		if (TAG_SLOT(tag) == 1)
			lfb_release(c, tag);
		else if (TAG_SLOT(tag) == 0 && c->l2pf_inflight) {
			c->l2pf_inflight--;
			for (uint32_t i = 0; i < L2PF_MAX; i++)
				if (c->l2pf[i].valid && c->l2pf[i].tag == tag)
					c->l2pf[i].valid = 0;
		}
		break;
	}
	return cxs_core_step(c, now, err, errlen);
}

void cxs_core_invalidated(struct cxs_core *c, cxs_time now, uint64_t line)
{
	/* Loads behind an incomplete older one may have performed too early. */
	bool older_incomplete = false;
	if (c->p.fault == CXS_CORE_FAULT_NO_REPLAY || c->p.fault == CXS_CORE_FAULT_UNORDERED)
		return;
	for (uint32_t i = 0; i < c->rob_n; i++) {
		struct ent *e = rob_at(c, i);
		if (e->kind == K_LOAD && older_incomplete && !e->fwd && e->state != S_WAIT &&
		    e->addr >> CXS_LINE_SHIFT == line) {
			if (e->state == S_ISSUED) {
				e->replay = 1;
			} else { /* S_DONE: perform again */
				e->state = S_WAIT;
				mark_waiting(c, i);
				c->c[C_replays] += c->counting;
			}
		}
		older_incomplete |= e->state != S_DONE;
	}
	/* The re-issue happens at the next step: now, even if the frontend is busy. */
	if (c->nwaiting)
		wake(c, now);
}

/* ---- life cycle, inspection ------------------------------------------------------------ */

struct cxs_core *cxs_core_new(uint32_t node, uint32_t id, const struct cxs_core_params *p,
			      const struct cxs_core_env *env, struct cxs_kt *program,
			      struct cxs_stats *st, char *err, size_t errlen)
{
	if (p->rob < 1 || p->lq < 1 || p->sq < 1 || p->lfb < 1 || p->lfb > 64 || p->rob > (1u << 20) ||
	    p->sq > (1u << 20) || p->cycle_ps == 0) {
		snprintf(err, errlen, "core: rob, lq, sq must be >= 1, lfb 1..64 and the cycle > 0 ps");
		return NULL;
	}
	struct cxs_core *c = calloc(1, sizeof *c);
	if (!c)
		goto oom;
	c->node = node;
	c->id = id;
	c->p = *p;
	c->env = *env;
	c->kt = program;
	c->last_pfm_line = PF_NONE;
	c->rob = calloc(p->rob, sizeof *c->rob);
	c->sb = calloc(p->sq, sizeof *c->sb);
	if (!c->rob || !c->sb)
		goto oom;
	if (st) {
		char group[32];
		snprintf(group, sizeof group, "core%u", id);
		for (int i = 0; i < C_COUNT; i++)
			c->out[i] = cxs_stats_counter(st, group, counter_name[i], counter_unit[i],
						      counter_doc[i]);
	}
	return c;
oom:
	cxs_core_free(c);
	snprintf(err, errlen, "out of memory for a core");
	return NULL;
}

void cxs_core_free(struct cxs_core *c)
{
	if (!c)
		return;
	free(c->rob);
	free(c->sb);
	free(c);
}

void cxs_core_finish_counters(struct cxs_core *c)
{
	for (int i = 0; i < C_COUNT; i++)
		if (c->out[i])
			*c->out[i] = in_ps(i) ? c->c[i] / c->p.cycle_ps : c->c[i];
}

bool cxs_core_done(const struct cxs_core *c)
{
	return c->done && c->rob_n == 0 && c->sb_n == 0;
}

bool cxs_core_failed(const struct cxs_core *c)
{
	return c->failed;
}

const char *cxs_core_error(const struct cxs_core *c)
{
	return c->err;
}

cxs_time cxs_core_roi_begin(const struct cxs_core *c)
{
	return c->roi_begin;
}

cxs_time cxs_core_roi_end(const struct cxs_core *c)
{
	return c->roi_end;
}

int cxs_core_describe(const struct cxs_core *c, char *buf, size_t len)
{
	const struct ent *h = c->rob_n ? &c->rob[c->rob_head] : NULL;
	return snprintf(buf, len,
			"core %u: %s, %" PRIu64 " instr, window %u (%u ld, %u st), SB %u%s, "
			"oldest %s %#" PRIx64 " %s",
			c->id, block_name[c->block], c->seq, c->rob_n, c->nloads, c->nstores, c->sb_n,
			c->sb_held ? " (head held)" : "",
			!h ? "-" : h->kind == K_LOAD ? "load" : h->kind == K_STORE ? "store" : "atomic",
			h ? h->addr : 0,
			!h ? "" : h->state == S_WAIT ? "waiting to issue" : h->state == S_ISSUED ? "in flight" : "done");
}
