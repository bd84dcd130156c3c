/*
 * cn_agent.c — a compute node's memory hierarchy and its side of the CXL.mem
 * protocol (coherence.h).
 *
 *   core 0: L1, L2     core 1: L1, L2   ...      (private, per core)
 *        \                 |             /
 *          shared inclusive L3 + intra-CN directory (core bit mask per line)
 *          |                                  |
 *   local DRAM (private addresses)      CXL port -> home directories (MNs)
 *
 * Two levels of coherence:
 *
 *  - Inside the CN, every copy of a line (L1, L2 of any core, L3) holds the
 *    same bytes: a store writes the requesting core's copies and the L3 copy
 *    and invalidates the other cores' copies, all within the one event that
 *    performs it (one LP handles the whole CN, so nothing can interleave).
 *    The L3's per-line core mask is the intra-CN directory; L3 evictions
 *    invalidate the private copies (inclusion), L2 evictions the L1 copy.
 *    Latencies are charged per level: L1 5, L2 13, L3 36 cycles (DIKTAMO
 *    Table II), a store by a core that is not the line's only holder pays the
 *    L3 latency (the directory invalidates the others).
 *
 *  - Between the CN and the homes, the L3 line carries the CN's MESI state;
 *    lines of private memory are in state L (local: always writable). A miss
 *    allocates an MSHR per line that holds the transient state (IS_D, IM_D,
 *    SM_D: S with an upgrade pending, the L3 line pinned) and the requests
 *    waiting for it; an E/M victim goes to a write-back buffer (MI_A / EI_A)
 *    until PUT_ACK, so its L3 way can be reused at once. Requests for a line
 *    in the write-back buffer wait there and are replayed after PUT_ACK.
 *
 * Requests complete through env.complete at a computed time; the caller turns
 * that into an event for the core. Requests to the same line complete in the
 * order they were served.
 */
#include "cxlsim/addr_map.h"
#include "cxlsim/coherence.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum cn_state { CN_I = 0, CN_S, CN_E, CN_M, CN_L };
enum mshr_kind { MS_NONE = 0, MS_IS_D, MS_IM_D, MS_SM_D };
enum wb_state { WB_NONE = 0, WB_MI_A, WB_EI_A };

static const char *const cn_state_name[] = {"I", "S", "E", "M", "L"};
static const char *const mshr_name[] = {"", "IS_D", "IM_D", "SM_D"};
static const char *const wb_name[] = {"", "MI_A", "EI_A"};

struct waitq {
	struct cxs_mem_req *r;
	uint32_t n, cap;
};

struct mshr {
	uint8_t kind;
	cxs_time issued;
	struct waitq w;
};

struct wbuf {
	uint64_t line;
	uint8_t state;
	cxs_time issued;
	uint8_t data[CXS_LINE_BYTES];
	struct waitq w;
};

/* A write-through waiting for its WT_ACK (at most one per core under TSO). */
struct wt_pending {
	uint32_t id;
	uint64_t ret;
	struct cxs_mem_req r;
};

struct line_info {
	uint32_t epoch;   /* grant epoch of the current E/M grant */
	uint32_t writes;  /* writes under it */
	cxs_time ready;   /* data usable from (local fills in flight) */
	uint8_t unsaved;  /* words written under the grant and not yet in memory (bit per word) */
};

struct cxs_cn {
	uint32_t node;
	struct cxs_cn_params p;
	struct cxs_cn_env env;
	struct cxs_cache *l1, *l2; /* per core */
	struct cxs_cache l3;
	struct cxs_line_map mshr;  /* line -> struct mshr */
	struct cxs_line_map wb;    /* line -> struct wbuf */
	struct cxs_line_map info;  /* line -> struct line_info */
	struct cxs_line_map local; /* line -> 64 bytes of private memory */
	uint64_t *c_hits[3], *c_misses[3];
	uint64_t *c_loads, *c_stores, *c_rmws, *c_remote, *c_local_fills, *c_upgrades;
	uint64_t *c_putm, *c_pute, *c_invs, *c_recalls, *c_replays;
	uint64_t *c_prefetches, *c_wts;
	struct wt_pending *wt;     /* write-throughs in flight */
	uint32_t nwt, cap_wt, next_wt_id;
	struct cxs_hist *h_load, *h_store;
	bool filling; /* serving requests whose miss was already counted */
	/*
	 * Lines with a transaction in progress (MSHR or write-back), so that the
	 * watchdog looks at those only: the maps keep a record for every line ever
	 * touched, and scanning them per tick dominated runs with large footprints.
	 */
	struct active *active;
	size_t nactive, cap_active;
};

struct active {
	uint64_t line;
	uint8_t wb; /* 0: MSHR, 1: write-back buffer */
};

#define BUMP(p) do { if (p) (*(p))++; } while (0)

/* ---- small helpers ------------------------------------------------------ */

static int wq_push(struct waitq *q, const struct cxs_mem_req *r)
{
	if (q->n == q->cap) {
		uint32_t cap = q->cap ? 2 * q->cap : 4;
		struct cxs_mem_req *a = realloc(q->r, cap * sizeof *a);
		if (!a)
			return -1;
		q->r = a;
		q->cap = cap;
	}
	q->r[q->n++] = *r;
	return 0;
}

static cxs_time cyc(const struct cxs_cn *cn, uint32_t cycles)
{
	return (cxs_time)cycles * cn->p.cycle_ps;
}

static uint32_t home_of(const struct cxs_cn *cn, uint64_t line)
{
	struct cxs_addr_target t = cxs_addr_map_lookup(cn->p.map, line << CXS_LINE_SHIFT);
	return cn->p.first_mn_node + t.mn;
}

static void send(struct cxs_cn *cn, cxs_time when, uint32_t type, uint64_t line,
		 const uint8_t *data, uint8_t dirty)
{
	struct cxs_coh_msg m = {.line = line, .type = type, .src = cn->node,
				.dst = home_of(cn, line), .dirty = dirty};
	if (data)
		memcpy(m.data, data, CXS_LINE_BYTES);
	cn->env.send(cn->env.ctx, when, &m);
}

static struct line_info *info(struct cxs_cn *cn, uint64_t line)
{
	struct line_info *li = cxs_line_map_get(&cn->info, line, NULL);
	if (!li)
		abort(); /* out of memory: nothing sensible to continue with */
	return li;
}

/* The line's data is on its way to memory: none of its words is unsaved any more. */
static void saved(struct cxs_cn *cn, uint64_t line)
{
	struct line_info *li = cxs_line_map_find(&cn->info, line);
	if (li)
		li->unsaved = 0;
}

static uint64_t get_bytes(const uint8_t *d, uint32_t off, uint8_t size)
{
	uint64_t v = 0;
	for (uint8_t i = 0; i < size; i++)
		v |= (uint64_t)d[off + i] << (8 * i);
	return v;
}

static void put_bytes(uint8_t *d, uint32_t off, uint8_t size, uint64_t v)
{
	for (uint8_t i = 0; i < size; i++)
		d[off + i] = (uint8_t)(v >> (8 * i));
}

static void activate(struct cxs_cn *cn, uint64_t line, uint8_t wb)
{
	if (cn->nactive == cn->cap_active) {
		size_t cap = cn->cap_active ? 2 * cn->cap_active : 64;
		struct active *a = realloc(cn->active, cap * sizeof *a);
		if (!a)
			abort(); /* out of memory: nothing sensible to continue with */
		cn->active = a;
		cn->cap_active = cap;
	}
	cn->active[cn->nactive++] = (struct active){line, wb};
}

static void deactivate(struct cxs_cn *cn, uint64_t line, uint8_t wb)
{
	for (size_t i = 0; i < cn->nactive; i++)
		if (cn->active[i].line == line && cn->active[i].wb == wb) {
			/* Keep the order (oldest first): the watchdog breaks ties by it. */
			memmove(&cn->active[i], &cn->active[i + 1],
				(cn->nactive - i - 1) * sizeof *cn->active);
			cn->nactive--;
			return;
		}
}

/* ---- private caches ------------------------------------------------------ */

/* Drops core c's copies of a line (L1 and L2). */
static void drop_private(struct cxs_cn *cn, cxs_time t, uint32_t c, uint64_t line)
{
	struct cxs_cache_line *x = cxs_cache_find(&cn->l1[c], line);
	if (x)
		cxs_cache_invalidate(&cn->l1[c], x);
	x = cxs_cache_find(&cn->l2[c], line);
	if (x)
		cxs_cache_invalidate(&cn->l2[c], x);
	if (cn->env.invalidated)
		cn->env.invalidated(cn->env.ctx, t, c, line);
}

/* Drops every core's copies except `keep` (or all with keep = ncores). */
static void drop_others(struct cxs_cn *cn, cxs_time t, struct cxs_cache_line *l3l, uint32_t keep)
{
	for (uint32_t c = 0; c < cn->p.ncores; c++)
		if (c != keep && (l3l->aux >> c & 1)) {
			drop_private(cn, t, c, l3l->tag);
			l3l->aux &= ~(UINT32_C(1) << c);
		}
}

/* Installs the line in core c's L2 and L1 (L2 is inclusive of L1). */
static void fill_private(struct cxs_cn *cn, cxs_time t, uint32_t c, struct cxs_cache_line *l3l)
{
	uint64_t line = l3l->tag;
	struct cxs_cache_line *x = cxs_cache_find(&cn->l2[c], line);
	if (!x) {
		struct cxs_cache_line *v = cxs_cache_victim(&cn->l2[c], line);
		if (v->valid) {
			/* Inclusion: the L2 victim leaves the core entirely. */
			struct cxs_cache_line *v1 = cxs_cache_find(&cn->l1[c], v->tag);
			if (v1)
				cxs_cache_invalidate(&cn->l1[c], v1);
			struct cxs_cache_line *o = cxs_cache_find(&cn->l3, v->tag);
			if (o)
				o->aux &= ~(UINT32_C(1) << c);
			if (cn->env.invalidated)
				cn->env.invalidated(cn->env.ctx, t, c, v->tag);
			cxs_cache_invalidate(&cn->l2[c], v);
		}
		cxs_cache_install(&cn->l2[c], v, line, l3l->data);
	} else {
		memcpy(x->data, l3l->data, CXS_LINE_BYTES);
		cxs_cache_touch(&cn->l2[c], x);
	}
	x = cxs_cache_find(&cn->l1[c], line);
	if (!x) {
		struct cxs_cache_line *v = cxs_cache_victim(&cn->l1[c], line);
		if (v->valid)
			cxs_cache_invalidate(&cn->l1[c], v); /* still in L2: no change to aux */
		cxs_cache_install(&cn->l1[c], v, line, l3l->data);
	} else {
		memcpy(x->data, l3l->data, CXS_LINE_BYTES);
		cxs_cache_touch(&cn->l1[c], x);
	}
	l3l->aux |= UINT32_C(1) << c;
}

/* Latency of a hit for core c, counting the level that hit. */
static cxs_time hit_latency(struct cxs_cn *cn, uint32_t c, uint64_t line)
{
	if (cn->filling)
		return cyc(cn, cn->p.l3.latency_cycles); /* the fill travels up from L3 */
	if (cxs_cache_find(&cn->l1[c], line)) {
		BUMP(cn->c_hits[0]);
		return cyc(cn, cn->p.l1.latency_cycles);
	}
	BUMP(cn->c_misses[0]);
	if (cxs_cache_find(&cn->l2[c], line)) {
		BUMP(cn->c_hits[1]);
		return cyc(cn, cn->p.l2.latency_cycles);
	}
	BUMP(cn->c_misses[1]);
	BUMP(cn->c_hits[2]);
	return cyc(cn, cn->p.l3.latency_cycles);
}

/* ---- L3 ---------------------------------------------------------------------- */

/* Evicts an L3 way: private copies, then write-back buffer or local memory. */
static int evict(struct cxs_cn *cn, cxs_time t, struct cxs_cache_line *v)
{
	drop_others(cn, t, v, cn->p.ncores);
	uint64_t line = v->tag;
	if (v->state == CN_M || v->state == CN_E) {
		struct wbuf *w = cxs_line_map_get(&cn->wb, line, NULL);
		if (!w)
			return -1;
		w->line = line;
		w->state = v->state == CN_M ? WB_MI_A : WB_EI_A;
		activate(cn, line, 1);
		w->issued = t;
		memcpy(w->data, v->data, CXS_LINE_BYTES);
		saved(cn, line); /* the write-back carries the data */
		if (v->state == CN_M) {
			send(cn, t, CXS_MSG_PUTM, line, v->data, 1);
			BUMP(cn->c_putm);
		} else {
			send(cn, t, CXS_MSG_PUTE, line, NULL, 0);
			BUMP(cn->c_pute);
		}
	} else if (v->state == CN_L && v->dirty) {
		uint8_t *d = cxs_line_map_get(&cn->local, line, NULL);
		if (!d)
			return -1;
		memcpy(d, v->data, CXS_LINE_BYTES);
		cn->env.local_dram(cn->env.ctx, t, line, 1);
	}
	cxs_cache_invalidate(&cn->l3, v);
	return 0;
}

/*
 * Every way of the set is pinned by an upgrade in progress (possible with
 * more cores than L3 ways): give up one of those S copies, least recently
 * used first, exactly as an INV would — the upgrade becomes IM_D and its
 * DATA_M brings the data. Returns the freed way.
 */
static struct cxs_cache_line *unpin_one(struct cxs_cn *cn, cxs_time t, uint64_t line)
{
	struct cxs_cache_line *set = &cn->l3.lines[cxs_cache_set(&cn->l3, line) * cn->l3.geom.ways];
	struct cxs_cache_line *v = NULL;
	for (uint32_t w = 0; w < cn->l3.geom.ways; w++)
		if (set[w].valid && set[w].pinned && (!v || set[w].lru < v->lru))
			v = &set[w];
	if (!v)
		return NULL;
	struct mshr *m = cxs_line_map_find(&cn->mshr, v->tag);
	if (m && m->kind == MS_SM_D)
		m->kind = MS_IM_D;
	drop_others(cn, t, v, cn->p.ncores);
	v->pinned = 0;
	cxs_cache_invalidate(&cn->l3, v);
	return v;
}

static struct cxs_cache_line *l3_alloc(struct cxs_cn *cn, cxs_time t, uint64_t line,
				       const uint8_t *data, uint8_t state)
{
	struct cxs_cache_line *v = cxs_cache_victim(&cn->l3, line);
	if (!v)
		v = unpin_one(cn, t, line);
	if (!v || (v->valid && evict(cn, t, v) != 0))
		return NULL;
	cxs_cache_install(&cn->l3, v, line, data);
	v->state = state;
	return v;
}

/* ---- performing requests --------------------------------------------------- */

static void finish(struct cxs_cn *cn, cxs_time when, const struct cxs_mem_req *r, uint64_t v)
{
	if (r->op == CXS_OP_LOAD) {
		if (cn->h_load)
			cxs_hist_add(cn->h_load, when - r->issued);
	} else if (r->op != CXS_OP_PREFETCH_S && r->op != CXS_OP_PREFETCH_M && cn->h_store) {
		cxs_hist_add(cn->h_store, when - r->issued);
	}
	cn->env.complete(cn->env.ctx, when, r, v);
}

static void do_load(struct cxs_cn *cn, cxs_time t, struct cxs_cache_line *l3l,
		    const struct cxs_mem_req *r)
{
	uint32_t off = (uint32_t)(r->addr & (CXS_LINE_BYTES - 1));
	cxs_time when = t + hit_latency(cn, r->core, l3l->tag);
	cxs_cache_touch(&cn->l3, l3l);
	fill_private(cn, t, r->core, l3l);
	const struct line_info *li = cxs_line_map_find(&cn->info, l3l->tag);
	if (li && li->ready > when)
		when = li->ready;
	uint64_t v = get_bytes(l3l->data, off, r->size);
	if (cn->env.perform && r->op == CXS_OP_LOAD)
		cn->env.perform(cn->env.ctx, t, r, v, 0);
	finish(cn, when, r, v);
}

/*
 * WT protocol: the write is in the CN's copy (still M: other CNs are kept
 * coherent as under WB); it also goes to the home, and the request completes
 * only when the home's WT_ACK says it is in the MN's DRAM.
 */
static void write_through(struct cxs_cn *cn, cxs_time when, struct cxs_cache_line *l3l,
			  const struct cxs_mem_req *r, uint64_t ret)
{
	if (cn->nwt == cn->cap_wt) {
		uint32_t cap = cn->cap_wt ? 2 * cn->cap_wt : 8;
		struct wt_pending *a = realloc(cn->wt, cap * sizeof *a);
		if (!a)
			abort(); /* out of memory: nothing sensible to continue with */
		cn->wt = a;
		cn->cap_wt = cap;
	}
	uint32_t id = cn->next_wt_id++;
	cn->wt[cn->nwt++] = (struct wt_pending){.id = id, .ret = ret, .r = *r};
	struct cxs_coh_msg m = {.line = l3l->tag, .type = CXS_MSG_WT, .src = cn->node,
				.dst = home_of(cn, l3l->tag), .epoch = id};
	memcpy(m.data, l3l->data, CXS_LINE_BYTES);
	info(cn, l3l->tag)->unsaved = 0; /* the whole line is on its way to memory */
	cn->env.send(cn->env.ctx, when, &m);
	BUMP(cn->c_wts);
}

/* Precondition: the L3 line is writable (E, M or L). */
static void do_write(struct cxs_cn *cn, cxs_time t, struct cxs_cache_line *l3l,
		     const struct cxs_mem_req *r)
{
	uint32_t off = (uint32_t)(r->addr & (CXS_LINE_BYTES - 1));
	uint32_t c = r->core;
	bool alone = l3l->aux == (UINT32_C(1) << c) && cxs_cache_find(&cn->l1[c], l3l->tag);
	cxs_time when = t + (alone ? cyc(cn, cn->p.l1.latency_cycles) : hit_latency(cn, c, l3l->tag));
	if (alone && !cn->filling)
		BUMP(cn->c_hits[0]);
	if (l3l->state == CN_E)
		l3l->state = CN_M; /* silent E -> M */
	l3l->dirty = 1;
	drop_others(cn, t, l3l, c);
	struct line_info *li = info(cn, l3l->tag);
	uint64_t old = get_bytes(l3l->data, off, r->size), ret = 0;
	switch (r->op) {
	case CXS_OP_STORE:
		put_bytes(l3l->data, off, r->size, r->value);
		BUMP(cn->c_stores);
		break;
	case CXS_OP_STORE_STAMP:
		ret = cxs_stamp(li->epoch, ++li->writes);
		put_bytes(l3l->data, off, 8, ret);
		BUMP(cn->c_stores);
		break;
	case CXS_OP_SWAP:
		put_bytes(l3l->data, off, r->size, r->value);
		ret = old;
		BUMP(cn->c_rmws);
		break;
	case CXS_OP_CAS:
		if (old == r->value >> 32)
			put_bytes(l3l->data, off, r->size, r->value & UINT32_MAX);
		ret = old;
		BUMP(cn->c_rmws);
		break;
	default: /* CXS_OP_FETCH_ADD */
		put_bytes(l3l->data, off, r->size, old + r->value);
		ret = old;
		BUMP(cn->c_rmws);
		break;
	}
	{
		uint32_t w0 = off / 8, w1 = (off + (r->op == CXS_OP_STORE_STAMP ? 8 : r->size) - 1) / 8;
		for (uint32_t w = w0; w <= w1; w++)
			li->unsaved |= (uint8_t)(1u << w);
	}
	cxs_cache_touch(&cn->l3, l3l);
	fill_private(cn, t, c, l3l); /* the core's copies get the new bytes */
	if (r->repl && cn->env.replicated_write)
		cn->env.replicated_write(cn->env.ctx, t, r, cxs_stamp(li->epoch, ++li->writes),
					 get_bytes(l3l->data, off & ~7u, 8));
	if (cn->env.perform)
		cn->env.perform(cn->env.ctx, t, r,
				get_bytes(l3l->data, off, r->op == CXS_OP_STORE_STAMP ? 8 : r->size), 1);
	if (li->ready > when)
		when = li->ready;
	if ((r->flags & CXS_REQ_WT) && l3l->state != CN_L) {
		write_through(cn, when, l3l, r, ret);
		return;
	}
	finish(cn, when, r, ret);
}

/* A store's exclusive prefetch found the line writable: bring it to the core. */
static void do_prefetch_m(struct cxs_cn *cn, cxs_time t, struct cxs_cache_line *l3l,
			  const struct cxs_mem_req *r)
{
	cxs_time when = t + hit_latency(cn, r->core, l3l->tag);
	drop_others(cn, t, l3l, r->core);
	cxs_cache_touch(&cn->l3, l3l);
	fill_private(cn, t, r->core, l3l);
	const struct line_info *li = cxs_line_map_find(&cn->info, l3l->tag);
	if (li && li->ready > when)
		when = li->ready;
	finish(cn, when, r, 0);
}

static int start_miss(struct cxs_cn *cn, cxs_time t, uint64_t line, const struct cxs_mem_req *r,
		      uint8_t kind)
{
	struct mshr *m = cxs_line_map_get(&cn->mshr, line, NULL);
	if (!m || wq_push(&m->w, r) != 0)
		return -1;
	m->kind = kind;
	m->issued = t;
	activate(cn, line, 0);
	cxs_time when = t + cyc(cn, cn->p.l3.latency_cycles);
	BUMP(cn->c_misses[0]);
	BUMP(cn->c_misses[1]);
	BUMP(cn->c_misses[2]);
	if (kind == MS_SM_D) {
		BUMP(cn->c_upgrades);
		send(cn, when, CXS_MSG_GETM, line, NULL, 0);
	} else {
		BUMP(cn->c_remote);
		send(cn, when, kind == MS_IS_D ? CXS_MSG_GETS : CXS_MSG_GETM, line, NULL, 0);
	}
	return 0;
}

static int serve(struct cxs_cn *cn, cxs_time t, const struct cxs_mem_req *r, char *err,
		 size_t errlen)
{
	uint64_t line = r->addr >> CXS_LINE_SHIFT;
	bool write = r->op != CXS_OP_LOAD && r->op != CXS_OP_PREFETCH_S;

	struct wbuf *w = cxs_line_map_find(&cn->wb, line);
	if (w && w->state != WB_NONE)
		return wq_push(&w->w, r);
	struct mshr *m = cxs_line_map_find(&cn->mshr, line);
	if (m && m->kind != MS_NONE)
		return wq_push(&m->w, r);

	struct cxs_cache_line *l3l = cxs_cache_find(&cn->l3, line);
	if (l3l) {
		if (!write) {
			do_load(cn, t, l3l, r);
			return 0;
		}
		if (l3l->state != CN_S) {
			if (r->op == CXS_OP_PREFETCH_M)
				do_prefetch_m(cn, t, l3l, r);
			else
				do_write(cn, t, l3l, r);
			return 0;
		}
		l3l->pinned = 1; /* keep the S copy while upgrading */
		return start_miss(cn, t, line, r, MS_SM_D);
	}
	struct cxs_addr_target tg = cxs_addr_map_lookup(cn->p.map, r->addr);
	if (tg.kind == CXS_ADDR_LOCAL) {
		/* Private memory: no protocol, only the local DRAM's latency. */
		uint8_t zero[CXS_LINE_BYTES] = {0};
		const uint8_t *d = cxs_line_map_find(&cn->local, line);
		if (!d && cn->env.init_local)
			cn->env.init_local(cn->env.ctx, line, zero);
		struct cxs_cache_line *n = l3_alloc(cn, t, line, d ? d : zero, CN_L);
		if (!n) {
			snprintf(err, errlen, "node %u: no L3 way free for line %#" PRIx64, cn->node,
				 line);
			return -1;
		}
		BUMP(cn->c_misses[0]);
		BUMP(cn->c_misses[1]);
		BUMP(cn->c_misses[2]);
		BUMP(cn->c_local_fills);
		info(cn, line)->ready =
			cn->env.local_dram(cn->env.ctx, t + cyc(cn, cn->p.l3.latency_cycles), line, 0);
		bool was = cn->filling;
		cn->filling = true;
		if (r->op == CXS_OP_PREFETCH_M)
			do_prefetch_m(cn, t, n, r);
		else if (write)
			do_write(cn, t, n, r);
		else
			do_load(cn, t, n, r);
		cn->filling = was;
		return 0;
	}
	return start_miss(cn, t, line, r, write ? MS_IM_D : MS_IS_D);
}

int cxs_cn_request(struct cxs_cn *cn, cxs_time now, const struct cxs_mem_req *r, char *err,
		   size_t errlen)
{
	struct cxs_addr_target tg = cxs_addr_map_lookup(cn->p.map, r->addr);
	bool size_ok = r->size == 1 || r->size == 2 || r->size == 4 || r->size == 8;
	if (tg.kind == CXS_ADDR_INVALID || !size_ok || (r->addr & (r->size - 1)) ||
	    r->core >= cn->p.ncores || r->op >= CXS_OP_COUNT ||
	    (r->op == CXS_OP_STORE_STAMP && r->size != 8) || (r->op == CXS_OP_CAS && r->size > 4)) {
		snprintf(err, errlen,
			 "node %u core %u: invalid memory request (op %u, address %#" PRIx64
			 ", size %u)",
			 cn->node, r->core, r->op, r->addr, r->size);
		return -1;
	}
	if (r->op == CXS_OP_LOAD)
		BUMP(cn->c_loads); /* here, not in serve(): waiting requests are served again */
	else if (r->op == CXS_OP_PREFETCH_S || r->op == CXS_OP_PREFETCH_M)
		BUMP(cn->c_prefetches);
	if (serve(cn, now, r, err, errlen) != 0) {
		if (!err[0])
			snprintf(err, errlen, "node %u: out of memory", cn->node);
		return -1;
	}
	return 0;
}

/* Serves queued requests in order; stops at a write that needs an upgrade. */
static int serve_waiters(struct cxs_cn *cn, cxs_time t, uint64_t line, struct mshr *m,
			 char *err, size_t errlen)
{
	struct waitq q = m->w;
	m->w = (struct waitq){0};
	m->kind = MS_NONE;
	deactivate(cn, line, 0);
	int rc = 0;
	for (uint32_t i = 0; i < q.n && rc == 0; i++) {
		if (m->kind != MS_NONE) {
			/* An upgrade started: the rest wait for it, in order. */
			if (wq_push(&m->w, &q.r[i]) != 0)
				rc = -1;
			continue;
		}
		struct cxs_cache_line *l3l = cxs_cache_find(&cn->l3, line);
		if (!l3l) {
			snprintf(err, errlen, "node %u line %#" PRIx64 ": granted line vanished",
				 cn->node, line);
			rc = -1;
			break;
		}
		cn->filling = true;
		rc = serve(cn, t, &q.r[i], err, errlen);
		cn->filling = false;
	}
	free(q.r);
	return rc;
}

/* Replays requests that waited for a write-back to finish. */
static int replay(struct cxs_cn *cn, cxs_time t, struct wbuf *w, char *err, size_t errlen)
{
	struct waitq q = w->w;
	w->w = (struct waitq){0};
	w->state = WB_NONE;
	deactivate(cn, w->line, 1);
	int rc = 0;
	for (uint32_t i = 0; i < q.n && rc == 0; i++) {
		BUMP(cn->c_replays);
		rc = serve(cn, t, &q.r[i], err, errlen);
	}
	free(q.r);
	return rc;
}

static int violation(struct cxs_cn *cn, const struct cxs_coh_msg *m, char *err, size_t errlen)
{
	snprintf(err, errlen, "node %u line %#" PRIx64 ": unexpected %s from node %u in state %s",
		 cn->node, m->line, m->type < CXS_MSG_TYPE_COUNT ? cxs_msg_info(m->type)->name : "?",
		 m->src, cxs_cn_line_state(cn, m->line));
	return -1;
}

int cxs_cn_handle(struct cxs_cn *cn, cxs_time now, const struct cxs_coh_msg *m, char *err,
		  size_t errlen)
{
	cxs_time t = now;
	uint64_t line = m->line;
	struct cxs_cache_line *l3l = cxs_cache_find(&cn->l3, line);
	struct mshr *ms = cxs_line_map_find(&cn->mshr, line);
	struct wbuf *w = cxs_line_map_find(&cn->wb, line);
	bool pending = ms && ms->kind != MS_NONE;
	bool in_wb = w && w->state != WB_NONE;

	switch (m->type) {
	case CXS_MSG_DATA_S:
	case CXS_MSG_DATA_E:
	case CXS_MSG_DATA_M: {
		if (!pending || (m->type == CXS_MSG_DATA_S && ms->kind != MS_IS_D))
			return violation(cn, m, err, errlen);
		uint8_t st = m->type == CXS_MSG_DATA_S ? CN_S : m->type == CXS_MSG_DATA_E ? CN_E : CN_M;
		if (ms->kind == MS_SM_D) {
			/* Our S copy is still here (an INV would have made this IM_D). */
			l3l->pinned = 0;
			memcpy(l3l->data, m->data, CXS_LINE_BYTES);
			l3l->state = st;
		} else {
			l3l = l3_alloc(cn, t, line, m->data, st);
			if (!l3l) {
				snprintf(err, errlen, "node %u: no L3 way free for line %#" PRIx64,
					 cn->node, line);
				return -1;
			}
		}
		if (st != CN_S) {
			struct line_info *li = info(cn, line);
			li->epoch = m->epoch;
			li->writes = 0;
			li->unsaved = 0;
		}
		return serve_waiters(cn, t, line, ms, err, errlen);
	}
	case CXS_MSG_INV:
		BUMP(cn->c_invs);
		if (l3l && l3l->state == CN_S) {
			drop_others(cn, t, l3l, cn->p.ncores);
			l3l->pinned = 0;
			cxs_cache_invalidate(&cn->l3, l3l);
			if (pending && ms->kind == MS_SM_D)
				ms->kind = MS_IM_D; /* the data will come with DATA_M */
		} else if (l3l) {
			return violation(cn, m, err, errlen);
		}
		/* Absent (dropped silently, maybe asked again): just acknowledge. */
		send(cn, t, CXS_MSG_INV_ACK, line, NULL, 0);
		return 0;
	case CXS_MSG_RECALL_S:
	case CXS_MSG_RECALL_I:
		BUMP(cn->c_recalls);
		if (in_wb)
			return 0; /* our write-back crossed it and answers it */
		if (!l3l || (l3l->state != CN_E && l3l->state != CN_M))
			return violation(cn, m, err, errlen);
		send(cn, t + cyc(cn, cn->p.l3.latency_cycles), CXS_MSG_RECALL_DATA, line, l3l->data,
		     l3l->state == CN_M);
		saved(cn, line);
		if (m->type == CXS_MSG_RECALL_S) {
			l3l->state = CN_S;
		} else {
			drop_others(cn, t, l3l, cn->p.ncores);
			cxs_cache_invalidate(&cn->l3, l3l);
		}
		return 0;
	case CXS_MSG_PUT_ACK:
		if (!in_wb)
			return violation(cn, m, err, errlen);
		return replay(cn, t, w, err, errlen);
	case CXS_MSG_WT_ACK:
		for (uint32_t i = 0; i < cn->nwt; i++)
			if (cn->wt[i].id == m->epoch && cn->wt[i].r.addr >> CXS_LINE_SHIFT == line) {
				struct wt_pending p = cn->wt[i];
				cn->wt[i] = cn->wt[--cn->nwt];
				finish(cn, t, &p.r, p.ret);
				return 0;
			}
		return violation(cn, m, err, errlen);
	default:
		return violation(cn, m, err, errlen);
	}
}

/* ---- construction, inspection ---------------------------------------------- */

struct cxs_cn *cxs_cn_new(uint32_t node, const struct cxs_cn_params *p,
			  const struct cxs_cn_env *env, struct cxs_stats *st, char *err,
			  size_t errlen)
{
	if (p->ncores == 0 || p->ncores > 32) {
		snprintf(err, errlen, "cores per CN must be 1..32, got %u", p->ncores);
		return NULL;
	}
	struct cxs_cn *cn = calloc(1, sizeof *cn);
	if (!cn)
		goto oom;
	cn->node = node;
	cn->p = *p;
	cn->env = *env;
	cn->l1 = calloc(p->ncores, sizeof *cn->l1);
	cn->l2 = calloc(p->ncores, sizeof *cn->l2);
	if (!cn->l1 || !cn->l2)
		goto oom;
	char sub[256];
	for (uint32_t c = 0; c < p->ncores; c++) {
		if (cxs_cache_init(&cn->l1[c], &p->l1, sub, sizeof sub) != 0) {
			snprintf(err, errlen, "L1: %s", sub);
			goto fail;
		}
		if (cxs_cache_init(&cn->l2[c], &p->l2, sub, sizeof sub) != 0) {
			snprintf(err, errlen, "L2: %s", sub);
			goto fail;
		}
	}
	if (cxs_cache_init(&cn->l3, &p->l3, sub, sizeof sub) != 0) {
		snprintf(err, errlen, "L3: %s", sub);
		goto fail;
	}
	if (cxs_line_map_init(&cn->mshr, sizeof(struct mshr)) != 0 ||
	    cxs_line_map_init(&cn->wb, sizeof(struct wbuf)) != 0 ||
	    cxs_line_map_init(&cn->info, sizeof(struct line_info)) != 0 ||
	    cxs_line_map_init(&cn->local, CXS_LINE_BYTES) != 0)
		goto oom;
	if (st) {
		static const char *lvl[3] = {"l1", "l2", "l3"};
		for (int i = 0; i < 3; i++) {
			cn->c_hits[i] = cxs_stats_counter(st, lvl[i], "hits", "accesses",
							  "accesses that found the line at this level (all cores)");
			cn->c_misses[i] = cxs_stats_counter(st, lvl[i], "misses", "accesses",
							    "accesses that did not (all cores)");
		}
		cn->c_loads = cxs_stats_counter(st, "cn", "loads", "requests", "loads served");
		cn->c_stores = cxs_stats_counter(st, "cn", "stores", "requests", "stores performed");
		cn->c_rmws = cxs_stats_counter(st, "cn", "rmws", "requests",
					       "atomic read-modify-writes performed");
		cn->c_remote = cxs_stats_counter(st, "cn", "remote_misses", "requests",
						 "L3 misses sent to a home (GETS/GETM from I)");
		cn->c_local_fills = cxs_stats_counter(st, "cn", "local_fills", "lines",
						      "L3 misses served by local DRAM");
		cn->c_upgrades = cxs_stats_counter(st, "cn", "upgrades", "requests",
						   "GETM for lines held in S");
		cn->c_putm = cxs_stats_counter(st, "cn", "writebacks_dirty", "lines",
					       "PUTM: dirty CXL lines written back on eviction");
		cn->c_pute = cxs_stats_counter(st, "cn", "writebacks_clean", "lines",
					       "PUTE: exclusive clean CXL lines given back");
		cn->c_invs = cxs_stats_counter(st, "cn", "invs_received", "messages",
					       "invalidations received");
		cn->c_recalls = cxs_stats_counter(st, "cn", "recalls_received", "messages",
						  "recalls received");
		cn->c_replays = cxs_stats_counter(st, "cn", "wb_replays", "requests",
						  "requests that waited for a write-back to finish");
		cn->c_prefetches = cxs_stats_counter(st, "cn", "prefetches", "requests",
						     "prefetch requests (L1/L2 prefetchers and the "
						     "exclusive prefetches of stores)");
		cn->c_wts = cxs_stats_counter(st, "cn", "write_throughs", "requests",
					      "remote writes sent through to their MN (WT protocol)");
		cn->h_load = cxs_stats_hist(st, "cn", "load_latency_ps", "ps",
					    "issue to completion of loads", 40);
		cn->h_store = cxs_stats_hist(st, "cn", "store_latency_ps", "ps",
					     "issue to completion of stores and atomics", 40);
	}
	return cn;
oom:
	snprintf(err, errlen, "out of memory creating node %u", node);
fail:
	cxs_cn_free(cn);
	return NULL;
}

void cxs_cn_free(struct cxs_cn *cn)
{
	if (!cn)
		return;
	for (uint32_t c = 0; cn->l1 && c < cn->p.ncores; c++)
		cxs_cache_destroy(&cn->l1[c]);
	for (uint32_t c = 0; cn->l2 && c < cn->p.ncores; c++)
		cxs_cache_destroy(&cn->l2[c]);
	free(cn->l1);
	free(cn->l2);
	cxs_cache_destroy(&cn->l3);
	for (size_t i = 0; i < cn->mshr.n; i++)
		free(((struct mshr *)cxs_line_map_at(&cn->mshr, i))->w.r);
	for (size_t i = 0; i < cn->wb.n; i++)
		free(((struct wbuf *)cxs_line_map_at(&cn->wb, i))->w.r);
	cxs_line_map_free(&cn->mshr);
	cxs_line_map_free(&cn->wb);
	cxs_line_map_free(&cn->info);
	cxs_line_map_free(&cn->local);
	free(cn->active);
	free(cn->wt);
	free(cn);
}

void cxs_cn_lines_held(const struct cxs_cn *cn, cxs_cn_held_fn *fn, void *ctx)
{
	/* L3 ways in array order, then MSHRs and write-backs in creation order. */
	const struct cxs_cache *l3 = &cn->l3;
	size_t nlines = (size_t)l3->nsets * l3->geom.ways;
	for (size_t i = 0; i < nlines; i++) {
		const struct cxs_cache_line *l = &l3->lines[i];
		if (!l->valid || l->state == CN_L)
			continue;
		const struct line_info *li = cxs_line_map_find(&cn->info, l->tag);
		enum cxs_cn_hold h = l->state == CN_M ? CXS_HOLD_M : l->state == CN_E ? CXS_HOLD_E
										       : CXS_HOLD_S;
		fn(ctx, l->tag, h, l->data, h == CXS_HOLD_M && li ? li->unsaved : 0);
	}
	for (size_t i = 0; i < cn->mshr.n; i++) {
		const struct mshr *m = cxs_line_map_at(&cn->mshr, i);
		if (m->kind != MS_NONE && m->w.n)
			fn(ctx, m->w.r[0].addr >> CXS_LINE_SHIFT, CXS_HOLD_PENDING, NULL, 0);
	}
	for (size_t i = 0; i < cn->wb.n; i++) {
		const struct wbuf *w = cxs_line_map_at(&cn->wb, i);
		if (w->state != WB_NONE)
			fn(ctx, w->line, CXS_HOLD_WRITEBACK, w->data, 0);
	}
}

const char *cxs_cn_line_state(const struct cxs_cn *cn, uint64_t line)
{
	static _Thread_local char buf[32];
	const struct mshr *m = cxs_line_map_find(&cn->mshr, line);
	const struct wbuf *w = cxs_line_map_find(&cn->wb, line);
	const struct cxs_cache_line *l = cxs_cache_find((struct cxs_cache *)&cn->l3, line);
	snprintf(buf, sizeof buf, "%s%s%s%s%s", l ? cn_state_name[l->state] : "I",
		 m && m->kind ? "+" : "", m && m->kind ? mshr_name[m->kind] : "",
		 w && w->state ? "+" : "", w && w->state ? wb_name[w->state] : "");
	return buf;
}

int cxs_cn_peek(const struct cxs_cn *cn, uint64_t addr, uint8_t size, uint64_t *value)
{
	const struct cxs_cache_line *l =
		cxs_cache_find((struct cxs_cache *)&cn->l3, addr >> CXS_LINE_SHIFT);
	if (!l)
		return 0;
	*value = get_bytes(l->data, (uint32_t)(addr & (CXS_LINE_BYTES - 1)), size);
	return 1;
}

int cxs_cn_where(struct cxs_cn *cn, uint32_t core, uint64_t addr, bool write)
{
	uint64_t line = addr >> CXS_LINE_SHIFT;
	const struct mshr *m = cxs_line_map_find(&cn->mshr, line);
	const struct wbuf *w = cxs_line_map_find(&cn->wb, line);
	bool busy = (m && m->kind != MS_NONE) || (w && w->state != WB_NONE);
	if (!busy && write) {
		const struct cxs_cache_line *l3l = cxs_cache_find(&cn->l3, line);
		busy = l3l && l3l->state == CN_S; /* an upgrade: the home answers */
	}
	if (!busy && cxs_cache_find(&cn->l1[core], line))
		return CXS_LVL_L1;
	if (!busy && cxs_cache_find(&cn->l2[core], line))
		return CXS_LVL_L2;
	if (!busy && cxs_cache_find(&cn->l3, line))
		return CXS_LVL_L3;
	return cxs_addr_map_lookup(cn->p.map, addr).kind == CXS_ADDR_LOCAL ? CXS_LVL_LOCAL
									 : CXS_LVL_CXL;
}

bool cxs_cn_local_pending(const struct cxs_cn *cn, uint64_t addr, cxs_time now)
{
	const struct line_info *li = cxs_line_map_find(&cn->info, addr >> CXS_LINE_SHIFT);
	return li && li->ready > now;
}

size_t cxs_cn_pending(const struct cxs_cn *cn)
{
	return cn->nactive;
}

int cxs_cn_stuck(const struct cxs_cn *cn, cxs_time now, cxs_time timeout, char *buf, size_t len)
{
	/* The oldest of requests and write-backs; ties by creation order (deterministic). */
	const struct mshr *om = NULL;
	const struct wbuf *ow = NULL;
	cxs_time oldest = CXS_TIME_INF;
	for (size_t i = 0; i < cn->nactive; i++) {
		uint64_t line = cn->active[i].line;
		if (cn->active[i].wb) {
			const struct wbuf *w = cxs_line_map_find(&cn->wb, line);
			if (w->issued < oldest) {
				oldest = w->issued;
				ow = w;
				om = NULL;
			}
		} else {
			const struct mshr *m = cxs_line_map_find(&cn->mshr, line);
			if (m->issued < oldest) {
				oldest = m->issued;
				om = m;
				ow = NULL;
			}
		}
	}
	if ((!om && !ow) || now < oldest || now - oldest < timeout)
		return 0;
	if (om) {
		const struct cxs_mem_req *r = &om->w.r[0];
		uint64_t line = r->addr >> CXS_LINE_SHIFT;
		snprintf(buf, len,
			 "node %u line %#" PRIx64 " (address %#" PRIx64 "): request of core %u "
			 "outstanding for %" PRIu64 " ps, CN state %s, home node %u, %u requests "
			 "waiting",
			 cn->node, line, r->addr, r->core, now - oldest, cxs_cn_line_state(cn, line),
			 home_of(cn, line), om->w.n);
	} else {
		snprintf(buf, len,
			 "node %u line %#" PRIx64 " (address %#" PRIx64 "): write-back (%s) waited "
			 "%" PRIu64 " ps for PUT_ACK from home node %u, CN state %s",
			 cn->node, ow->line, ow->line << CXS_LINE_SHIFT, wb_name[ow->state],
			 now - oldest, home_of(cn, ow->line), cxs_cn_line_state(cn, ow->line));
	}
	return 1;
}
