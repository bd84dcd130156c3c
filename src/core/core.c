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
 * Dataflow. A load or store may name the handle of an earlier load (or
 * atomic) its address comes from (kop adep), and a store the handle whose
 * value it adds a constant to (kop vdep): a replayed trace says which load
 * an address was computed from. Such an operation enters the window at once
 * — the frontend goes on with later, independent operations — but stays in
 * S_WAIT until its producer has completed: a dependent load then issues, a
 * dependent store sends its exclusive prefetch and becomes ready to retire.
 * So a pointer chase has one miss outstanding at a time while independent
 * loads behind it still overlap. Producers are found by handle in a table of
 * the last CXS_KT_MAX_INFLIGHT (the program never has more in flight), which
 * keeps a producer's value after it retires. A producer that is replayed
 * (TSO) after its dependants issued does not re-issue them.
 *
 * Counters are integrals over time of piecewise-constant state (between two
 * events of the core nothing changes): at every event, the interval since the
 * last one is split into "frontend busy" (before busy_until) and "stalled"
 * (after, if the frontend is blocked), and the outstanding-miss counts of the
 * interval decide which stall counters it feeds. They count only inside the
 * program's region of interest. Definitions (CAMP Table 5, Intel PMU names):
 */
#include "core_priv.h"
#include "cxlsim/model.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* name, unit, definition (HDF5 attribute), Intel event it stands for */

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
	       i == C_demand_reads_outstanding || i == C_cycles_with_demand_read ||
	       i == C_offcore_demand_reads_outstanding || i == C_cycles_with_offcore_demand_read;
}

static const char *const block_name[] = {"running", "reorder buffer full", "load queue full",
					 "store queue full", "draining for a fence or atomic",
					 "waiting for a value", "finished"};

const struct cxs_cfg_key cxs_core_keys[] = {
	{"core", "rob", CXS_CFG_UINT, "224", "Reorder buffer entries (instructions in flight).", NULL, 1, 1048576},
	{"core", "lq", CXS_CFG_UINT, "128", "Load queue entries (DIKTAMO Table II).", NULL, 1, 1048576},
	{"core", "sq", CXS_CFG_UINT, "72", "Store queue entries, store buffer included (DIKTAMO Table II).", NULL, 1, 1048576},
	{"core", "lfb", CXS_CFG_UINT, "12", "Line fill buffers: L1 misses in flight per core.", NULL, 1, 64},
	{"core", "l1_prefetch", CXS_CFG_BOOL, "true", "L1 next-line stream prefetcher.", NULL, 0, 0},
	{"core", "l2_prefetch", CXS_CFG_BOOL, "true", "L2 stream prefetcher.", NULL, 0, 0},
	{"core", "fault", CXS_CFG_ENUM, "none", "Fault injection for testing the litmus tests: fence_noop (fences drain nothing), sb_parallel (the store buffer drains all at once, out of order), no_replay (loads that performed out of order are kept), unordered (sb_parallel + no_replay).", "none|fence_noop|sb_parallel|no_replay|unordered", 0, 0},
};
const struct cxs_key_table cxs_core_key_table = CXS_KEY_TABLE(cxs_core_keys);

void cxs_core_configure(const struct cxs_config *cfg, struct cxs_core_params *p)
{
	cxs_core_default_params(p);
	p->rob = (uint32_t)cxs_config_uint(cfg, "core", "rob");
	p->lq = (uint32_t)cxs_config_uint(cfg, "core", "lq");
	p->sq = (uint32_t)cxs_config_uint(cfg, "core", "sq");
	p->lfb = (uint32_t)cxs_config_uint(cfg, "core", "lfb");
	p->l1_prefetch = cxs_config_bool(cfg, "core", "l1_prefetch");
	p->l2_prefetch = cxs_config_bool(cfg, "core", "l2_prefetch");
	p->fault = (uint8_t)cxs_config_enum(cfg, "core", "fault");
}

void cxs_core_default_params(struct cxs_core_params *p)
{
	*p = (struct cxs_core_params){.rob = 224, .lq = 128, .sq = 72, .lfb = 12,
				      .l1_prefetch = true, .l2_prefetch = true,
				      .cycle_ps = cxs_period_ps(2400000000u)};
}

/* ---- accounting ------------------------------------------------------------ */

void core_account(struct cxs_core *c, cxs_time now)
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
		if (c->n_miss[1]) {
			c->c[C_stalls_l2_miss] += stall;
			c->c[C_offcore_demand_reads_outstanding] += dt * c->n_miss[1];
			c->c[C_cycles_with_offcore_demand_read] += dt;
		}
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

int core_request(struct cxs_core *c, cxs_time t, uint8_t op, uint64_t addr, uint8_t size,
		 uint64_t value, uint64_t tag, uint8_t flags, uint32_t repl, char *err, size_t len)
{
	struct cxs_mem_req r = {.addr = addr, .value = value, .tag = tag, .issued = t,
				.core = c->id, .op = op, .size = size, .flags = flags, .repl = repl};
	return c->env.request(c->env.ctx, t, &r, err, len);
}

static int request(struct cxs_core *c, cxs_time t, uint8_t op, uint64_t addr, uint8_t size,
		   uint64_t value, uint64_t tag, uint8_t flags, char *err, size_t len)
{
	return core_request(c, t, op, addr, size, value, tag, flags, 0, err, len);
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
			c->c[C_l1_pf_offcore] += lvl >= CXS_LVL_L3;
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
		if (s->state != S_DONE)
			return -1; /* its address or value is not known yet: wait for it */
		if (s->addr <= e->addr && e->addr + e->size <= s->addr + s->size) {
			uint64_t v = s->value >> (8 * (e->addr - s->addr));
			*value = e->size < 8 ? v & ((UINT64_C(1) << (8 * e->size)) - 1) : v;
			return 1;
		}
		return -1;
	}
	return sb_forward(c, e->addr, e->size, value); /* then the store buffer */
}

/*
 * Has producer h completed? 1 with its value in *v, 0 if not yet. A handle
 * the table no longer holds was overwritten by one CXS_KT_MAX_INFLIGHT
 * younger, which the program issues only after h retired: ready, its value
 * unknown (*known = false).
 */
static int dep_ready(const struct cxs_core *c, uint32_t h, uint64_t *v, bool *known)
{
	const struct prod *p = &c->prod[h % CXS_KT_MAX_INFLIGHT];
	*known = true;
	*v = 0;
	if (h == CXS_KT_NO_DEP)
		return 1;
	if (p->h != h) {
		*known = false;
		return 1;
	}
	if (p->retired) {
		*v = p->value;
		return 1;
	}
	const struct ent *e = &c->rob[p->slot];
	if (e->gen != p->gen || e->state != S_DONE)
		return 0;
	*v = e->value;
	return 1;
}

static void note_producer(struct cxs_core *c, const struct ent *e)
{
	uint32_t slot = (uint32_t)(e - c->rob);
	c->prod[e->handle % CXS_KT_MAX_INFLIGHT] =
		(struct prod){.h = e->handle, .slot = slot, .gen = e->gen};
}

static int store_prefetch(struct cxs_core *c, cxs_time now, uint64_t addr, uint8_t size,
			  char *err, size_t len);

/*
 * A store waiting for its producers (S_WAIT, counted in nwaiting): once both
 * have completed, its value is known, it sends its exclusive prefetch if its
 * address was what it waited for, and it is ready to retire.
 */
static int resolve_store(struct cxs_core *c, cxs_time now, struct ent *e, char *err, size_t len)
{
	uint64_t av, vv;
	bool aknown, vknown;
	if (!dep_ready(c, e->adep, &av, &aknown) || !dep_ready(c, e->vdep, &vv, &vknown))
		return 0;
	if (e->vdep != CXS_KT_NO_DEP) {
		if (!vknown) {
			snprintf(err, len, "node %u core %u: a store adds to the value of handle %u, "
				 "which the core no longer holds", c->node, c->id, e->vdep);
			return -1;
		}
		e->value += vv;
		if (e->size < 8)
			e->value &= (UINT64_C(1) << (8 * e->size)) - 1;
	}
	bool addr_was_pending = e->adep != CXS_KT_NO_DEP;
	e->adep = e->vdep = CXS_KT_NO_DEP;
	e->state = S_DONE;
	c->nwaiting--;
	return addr_was_pending ? store_prefetch(c, now, e->addr, e->size, err, len) : 0;
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
	if (e->adep != CXS_KT_NO_DEP) {
		bool known;
		if (!dep_ready(c, e->adep, &v, &known))
			return 0; /* its address is not known yet */
		e->adep = CXS_KT_NO_DEP;
	}
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
	/*
	 * An issue can lose a line under an older load that had performed (its
	 * request evicts it from L1: cxs_core_invalidated), which puts that load
	 * back in S_WAIT behind i and lowers wait_lo through mark_waiting. Start
	 * the mark afresh so that such a lowering survives the pass; otherwise the
	 * load is never looked at again and, once it is the oldest, the core
	 * waits for it forever (histogram on 8 threads with 10 % of its pages in
	 * DRAM did).
	 */
	c->wait_lo = UINT64_MAX;
	for (; i < c->rob_n && c->nwaiting; i++) {
		struct ent *e = rob_at(c, i);
		if (e->state != S_WAIT || e->kind == K_ATOMIC)
			continue;
		if (e->kind == K_LOAD ? issue_load(c, now, i, err, len) != 0
				      : resolve_store(c, now, e, err, len) != 0)
			return -1;
		if (e->state == S_WAIT && first == UINT64_MAX)
			first = c->nretired + i;
		/* No break when the buffers are full: a younger load that hits
		 * L1, is an LFB hit or is forwarded still goes. */
	}
	uint64_t end = first != UINT64_MAX ? first : c->nretired + i;
	if (end < c->wait_lo)
		c->wait_lo = end;
	/* What the mark is for: the oldest entry, if it waits, is looked at again. */
	const struct ent *h = c->rob_n ? rob_at(c, 0) : NULL;
	if (h && h->state == S_WAIT && h->kind != K_ATOMIC && c->wait_lo > c->nretired) {
		snprintf(err, len,
			 "node %u core %u: internal error: the oldest %s waits to issue outside the "
			 "issue scan (from entry %" PRIu64 ", oldest %" PRIu64 "); it would wait forever",
			 c->node, c->id, h->kind == K_LOAD ? "load" : "store", c->wait_lo, c->nretired);
		return -1;
	}
	return 0;
}

/* The exclusive prefetch of a store whose address is known (once per line in a row). */
static int store_prefetch(struct cxs_core *c, cxs_time now, uint64_t addr, uint8_t size,
			  char *err, size_t len)
{
	uint64_t line = addr >> CXS_LINE_SHIFT;
	if (line != c->last_pfm_line && c->env.where(c->env.ctx, c->id, addr, true) != CXS_LVL_L1) {
		c->c[C_store_prefetches] += c->counting;
		if (request(c, now, CXS_OP_PREFETCH_M, addr, size, 0, TAG(T_PF, 2, ++c->gen), 0,
			    err, len) != 0)
			return -1;
	}
	c->last_pfm_line = line;
	return 0;
}

/*
 * An atomic at the head of an empty window. Under a protocol that replicates,
 * a remote atomic is replicated first (its operand travels in the REPL, its
 * result in the VAL, which the CN sends when it is performed) and issued once
 * every REPL_ACK is in (core_atomic_replicated). Under WT a remote atomic is
 * written through like a store: it completes when its MN has the new value.
 */
static int issue_atomic(struct cxs_core *c, cxs_time now, struct ent *e, char *err, size_t len)
{
	uint32_t id = 0;
	bool remote = c->env.remote(c->env.ctx, e->addr);
	if (c->p.protocol == CXS_PROTO_WT && remote)
		return core_request(c, now, e->op, e->addr, e->size, e->value,
				    TAG(T_ROB, (uint32_t)(e - c->rob), e->gen), CXS_REQ_WT, 0, err,
				    len);
	if (sb_replicates(c) && remote) {
		struct cxs_sb_store st = {e->addr, e->value, e->size, true};
		if (!c->env.replicate) {
			snprintf(err, len, "node %u core %u: a protocol that replicates, but the CN has no "
				 "replication", c->node, c->id);
			return -1;
		}
		if (c->env.replicate(c->env.ctx, c->id, now, &st, 1, CXS_REPL_ATOMIC | CXS_REPL_AT_HEAD,
				     &id, err, len) != 0)
			return -1;
		if (!c->p.commit_before_ack) {
			c->atomic_repl = id;
			c->atomic_slot = (uint32_t)(e - c->rob);
			return 0;
		}
	}
	return core_request(c, now, e->op, e->addr, e->size, e->value,
			    TAG(T_ROB, (uint32_t)(e - c->rob), e->gen), 0, id, err, len);
}

int core_atomic_replicated(struct cxs_core *c, cxs_time now, uint32_t id, char *err, size_t len)
{
	if (!c->atomic_repl || c->atomic_repl != id)
		return 0;
	struct ent *e = &c->rob[c->atomic_slot];
	c->atomic_repl = 0;
	if (core_request(c, now, e->op, e->addr, e->size, e->value,
			 TAG(T_ROB, c->atomic_slot, e->gen), 0, id, err, len) != 0)
		return -1;
	return 1;
}

/* ---- retirement ------------------------------------------------------------------ */

static int retire(struct cxs_core *c, cxs_time now, char *err, size_t len)
{
	while (c->rob_n) {
		struct ent *e = &c->rob[c->rob_head];
		if (e->state != S_DONE)
			return 0;
		if (e->kind == K_STORE) {
			c->nstores--;
			if (sb_push(c, e, now, err, len) != 0)
				return -1;
		} else {
			struct prod *p = &c->prod[e->handle % CXS_KT_MAX_INFLIGHT];
			if (p->h == e->handle) {
				p->retired = true;
				p->value = e->value;
			}
			cxs_kt_loaded(c->kt, e->handle, e->value);
			if (e->kind == K_LOAD)
				c->nloads--;
		}
		c->rob_head = (c->rob_head + 1) % c->p.rob;
		c->rob_n--;
		c->nretired++;
	}
	return 0;
}

/* ---- the frontend ------------------------------------------------------------------ */

static struct ent *alloc(struct cxs_core *c, uint8_t kind, cxs_time now)
{
	struct ent *e = &c->rob[(c->rob_head + c->rob_n) % c->p.rob];
	*e = (struct ent){.seq = c->seq++, .kind = kind, .gen = ++c->gen, .adep = CXS_KT_NO_DEP,
			  .vdep = CXS_KT_NO_DEP, .t_disp = now};
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
		case CXS_KOP_IDLE:
			/* Asleep: the window drains meanwhile, nothing is dispatched. */
			c->have_op = false;
			c->busy_until = now + cyc(c, op->n);
			wake(c, c->busy_until);
			return 0;
		case CXS_KOP_LOAD: {
			if (full) {
				c->block = B_ROB;
				return 0;
			}
			if (c->nloads == c->p.lq) {
				c->block = B_LQ;
				return 0;
			}
			struct ent *e = alloc(c, K_LOAD, now);
			e->addr = op->addr;
			e->size = op->size;
			e->handle = op->n;
			e->adep = op->adep;
			note_producer(c, e);
			if (e->adep != CXS_KT_NO_DEP) {
				uint64_t v;
				bool known;
				if (dep_ready(c, e->adep, &v, &known))
					e->adep = CXS_KT_NO_DEP;
				else
					c->c[C_dep_waits] += c->counting;
			}
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
			if (c->nstores + sb_count(c) >= c->p.sq) {
				c->block = B_SQ;
				return 0;
			}
			struct ent *e = alloc(c, K_STORE, now);
			e->addr = op->addr;
			e->size = op->size;
			e->value = op->value;
			e->adep = op->adep;
			e->vdep = op->vdep;
			c->nstores++;
			c->store_words[WORD_BUCKET(op->addr)]++;
			c->c[C_stores] += c->counting;
			c->have_op = false;
			bool addr_known = true;
			if (e->adep != CXS_KT_NO_DEP || e->vdep != CXS_KT_NO_DEP) {
				uint64_t v;
				bool known;
				addr_known = dep_ready(c, e->adep, &v, &known);
				e->state = S_WAIT;
				mark_waiting(c, c->rob_n - 1);
				if (resolve_store(c, now, e, err, len) != 0)
					return -1;
				if (e->state == S_WAIT)
					c->c[C_dep_waits] += c->counting;
			} else {
				e->state = S_DONE; /* address and data known: ready to retire */
			}
			if (addr_known && store_prefetch(c, now, op->addr, op->size, err, len) != 0)
				return -1;
			break;
		}
		case CXS_KOP_SWAP:
		case CXS_KOP_FETCH_ADD:
		case CXS_KOP_CAS:
		case CXS_KOP_FENCE:
		case CXS_KOP_ROI_END:
			/* Everything older must be done and the store buffer empty. */
			if (retire(c, now, err, len) != 0)
				return -1;
			bool ignore = op->kind == CXS_KOP_FENCE && c->p.fault == CXS_CORE_FAULT_FENCE_NOOP;
			if ((c->rob_n || sb_count(c)) && !ignore) {
				c->block = B_DRAIN;
				return 0;
			}
			c->have_op = false;
			if (op->kind == CXS_KOP_FENCE) {
				c->seq++;
				c->c[C_fences] += c->counting;
				c->c[C_instructions] += c->counting;
			} else if (op->kind == CXS_KOP_ROI_END) {
				core_account(c, now);
				c->counting = false;
				c->roi_end = now;
			} else {
				struct ent *e = alloc(c, K_ATOMIC, now);
				e->addr = op->addr;
				e->size = op->size;
				e->value = op->value;
				e->handle = op->n;
				e->adep = e->vdep = CXS_KT_NO_DEP;
				note_producer(c, e);
				e->state = S_ISSUED;
				e->op = op->kind == CXS_KOP_SWAP  ? CXS_OP_SWAP
					: op->kind == CXS_KOP_CAS ? CXS_OP_CAS
								  : CXS_OP_FETCH_ADD;
				c->c[C_atomics] += c->counting;
				if (issue_atomic(c, now, e, err, len) != 0)
					return -1;
			}
			break;
		case CXS_KOP_WAIT:
			if (retire(c, now, err, len) != 0)
				return -1;
			if (!cxs_kt_ready(c->kt, op->n)) {
				c->block = B_VALUE;
				return 0;
			}
			c->have_op = false;
			break;
		case CXS_KOP_ROI_BEGIN:
			core_account(c, now);
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
	core_account(c, now);
	if (c->wake_at <= now)
		c->wake_at = 0;
	if (retire(c, now, err, errlen) != 0)
		return -1;
	if (sb_drain(c, now, err, errlen) != 0 || issue_waiting(c, now, err, errlen) != 0)
		return -1;
	if (c->done || c->failed || now < c->busy_until)
		return 0;
	if (frontend(c, now, err, errlen) != 0)
		return -1;
	/* Stores it dispatched are ready: into the buffer, and drain. */
	if (retire(c, now, err, errlen) != 0)
		return -1;
	return sb_drain(c, now, err, errlen);
}

int cxs_core_complete(struct cxs_core *c, cxs_time now, const struct cxs_mem_req *r,
		      uint64_t value, char *err, size_t errlen)
{
	core_account(c, now);
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
		if (sb_complete(c, now, tag, err, errlen) != 0)
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
	for (uint32_t i = 0; i < CXS_KT_MAX_INFLIGHT; i++)
		c->prod[i].h = CXS_KT_NO_DEP; /* names no handle */
	c->rob = calloc(p->rob, sizeof *c->rob);
	c->proto = sb_protocol_of(p->protocol);
	if (!c->rob || sb_init(c) != 0)
		goto oom;
	if (st) {
		char group[32];
		snprintf(group, sizeof group, "core%u", id);
		if (cxs_stats_instance(st, group, "core", id) != 0) /* row `id` of group core */
			goto oom;
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
	sb_free(c);
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
	return c->done && c->rob_n == 0 && sb_count(c) == 0;
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
	uint32_t busy = 0, pf = 0; /* fill buffers held, by L1 prefetches */
	uint64_t first_line = 0;
	for (uint32_t i = 0; i < c->p.lfb; i++)
		if (c->lfb[i].valid) {
			first_line = busy++ ? first_line : c->lfb[i].line;
			pf += TAG_SRC(c->lfb[i].tag) == T_PF;
		}
	char fill[128] = "";
	if (busy)
		snprintf(fill, sizeof fill, "; fill buffers %u of %u busy (%u L1 prefetches; line %#" PRIx64 ")",
			 busy, c->p.lfb, pf, first_line << CXS_LINE_SHIFT);
	return snprintf(buf, len,
			"core %u: %s, %" PRIu64 " instr, window %u (%u ld, %u st), SB %u%s, "
			"oldest %s %#" PRIx64 " %s%s",
			c->id, block_name[c->block], c->seq, c->rob_n, c->nloads, c->nstores, c->sb.n,
			c->sb.held ? " (head held)" : "",
			!h ? "-" : h->kind == K_LOAD ? "load" : h->kind == K_STORE ? "store" : "atomic",
			h ? h->addr : 0,
			!h ? "" : h->state == S_WAIT ? "waiting to issue" : h->state == S_ISSUED ? "in flight" : "done",
			fill);
}
