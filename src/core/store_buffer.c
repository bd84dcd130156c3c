/*
 * store_buffer.c — the core's TSO store buffer and the remote-store
 * protocols that drive it (the protocol seam: DESIGN.md "DIKTAMO",
 * papers/diktamo.md §IV-D).
 *
 * Retired stores wait here in program order and leave from the head, one
 * transaction at a time (TSO: stores become visible in order). A transaction
 * is the head group: consecutive stores to one line coalesce into it (§IV-D.1).
 * Its life, for a group of remote (CXL) stores:
 *
 *     head ──► ownership (the Coherence transaction: the line writable in L1)
 *        └───► replication (the Replication transaction: REPLs out, every
 *              REPL_ACK in; env.replicate / cxs_core_replicated)
 *     both done ──► perform: the stores are merged into the cache (requests
 *              to the CN, carrying the replication's id, so the CN sends the
 *              VALs the moment they are performed) ──► commit: the group
 *              leaves the buffer
 *
 * A protocol is one const table (struct sb_protocol) saying when each of
 * these happens:
 *
 *   wb              perform at the head (a store acquires and merges in one
 *                   request, as MESI does); no replication
 *   wt              as wb, and the group's last remote store is written
 *                   through: it completes on the MN's WT_ACK (DIKTAMO Fig. 2)
 *   baseline        at the head: ownership; then replication; then perform
 *   parallel        at the head: ownership and replication together
 *   proactive       replication when the store enters the buffer, by the
 *                   coalescing rule of §IV-D.5 to the letter: a store entering
 *                   never sends; it joins the group of the store just before
 *                   it if that one is to the same line and has not sent; when
 *                   the next store cannot join, the group sends; a group that
 *                   reaches the head unsent sends there. The REPL–REPL_ACK
 *                   rounds of many groups overlap (as many as the buffer
 *                   holds); at the head: ownership
 *   proactive_noc   replication of every store alone when it enters; no
 *                   coalescing at all: each store is its own transaction
 *
 * Ownership at the head costs nothing when the store's exclusive prefetch
 * (sent at dispatch, core.c) has already made the line writable in L1;
 * otherwise it is a PREFETCH_M request. It may be lost again before the
 * group performs (another CN's recall): the perform then misses and acquires
 * the line anew, which delays it but never lets a store become visible
 * unreplicated. Local stores are never replicated and perform at the head.
 * Atomics are replicated by core.c before they are performed (they wait for
 * the buffer to drain first, as fences do).
 *
 * Requests this file issues are tagged T_SB; ownership requests carry the
 * slot SB_OWN_SLOT, stores their index in the group.
 *
 * Fault injection (core.commit_before_ack, set by diktamo.fault): perform
 * without waiting for the REPL_ACKs, so the protocol checker has something
 * to catch.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_priv.h"

#define SB_OWN_SLOT 0x3ffffff0u
#define SB_GROUP_MAX 64 /* stores in one transaction (a REPL carries at most 64 words) */

enum sb_phase { SB_IDLE = 0, SB_STARTED, SB_PERFORMING };

struct sb_protocol {
	const char *name;
	bool replicates;            /* remote stores and atomics are replicated */
	bool coalesce;              /* consecutive stores to one line form one transaction */
	/* A store entered the buffer at index idx. */
	int (*enter)(struct cxs_core *c, uint32_t idx, cxs_time now, char *err, size_t len);
	/* The head group was formed: start its transactions. */
	int (*head)(struct cxs_core *c, cxs_time now, char *err, size_t len);
	/* Ownership or replication of the head group finished: go on if it may. */
	int (*progress)(struct cxs_core *c, cxs_time now, char *err, size_t len);
};

static struct sb_ent *at(const struct cxs_core *c, uint32_t i)
{
	return &c->sb.e[(c->sb.head + i) % c->p.sq];
}

static uint64_t line_of(uint64_t addr)
{
	return addr >> CXS_LINE_SHIFT;
}

static void stores_of(const struct cxs_core *c, uint32_t from, uint32_t n,
		      struct cxs_sb_store *out)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct sb_ent *s = at(c, from + i);
		out[i] = (struct cxs_sb_store){s->addr, s->value, s->size, s->remote};
	}
}

int sb_init(struct cxs_core *c)
{
	memset(&c->sb, 0, sizeof c->sb);
	c->sb.e = calloc(c->p.sq, sizeof *c->sb.e);
	return c->sb.e ? 0 : -1;
}

void sb_free(struct cxs_core *c)
{
	free(c->sb.e);
	c->sb.e = NULL;
}

int sb_forward(const struct cxs_core *c, uint64_t addr, uint8_t size, uint64_t *value)
{
	for (uint32_t k = c->sb.n; k-- > 0;) { /* youngest first */
		const struct sb_ent *s = at(c, k);
		if (s->addr >= addr + size || addr >= s->addr + s->size)
			continue;
		if (s->addr <= addr && addr + size <= s->addr + s->size) {
			uint64_t v = s->value >> (8 * (addr - s->addr));
			*value = size < 8 ? v & ((UINT64_C(1) << (8 * size)) - 1) : v;
			return 1;
		}
		return -1;
	}
	return 0;
}

/* ---- the steps a protocol is made of ------------------------------------------- */

/* Sends the REPL of stores [from, from + n) as one replication (one line). */
static int replicate(struct cxs_core *c, uint32_t from, uint32_t n, cxs_time now, bool at_head,
		     char *err, size_t len)
{
	struct cxs_sb_store group[SB_GROUP_MAX] = {{0}};
	uint32_t id = 0;
	if (!c->env.replicate) {
		snprintf(err, len, "node %u core %u: protocol %s replicates stores, but the CN has no "
			 "replication", c->node, c->id, c->proto->name);
		return -1;
	}
	stores_of(c, from, n, group);
	if (c->env.replicate(c->env.ctx, c->id, now, group, n, at_head ? CXS_REPL_AT_HEAD : 0, &id,
			     err, len) != 0)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		struct sb_ent *s = at(c, from + i);
		s->repl = id;
		s->repl_sent = 1;
	}
	if (c->counting)
		c->c[at_head ? C_repl_at_head : C_repl_at_entry]++;
	return 0;
}

/* The head group's line writable: at once if it is in L1 so, else a PREFETCH_M. */
static int start_ownership(struct cxs_core *c, cxs_time now, char *err, size_t len)
{
	const struct sb_ent *s = at(c, 0);
	if (c->env.where(c->env.ctx, c->id, s->addr, true) == CXS_LVL_L1) {
		c->sb.owned = true;
		c->sb.t_owned = now;
		return 0;
	}
	return core_request(c, now, CXS_OP_PREFETCH_M, s->addr, s->size, 0,
			    TAG(T_SB, SB_OWN_SLOT, ++c->gen), 0, 0, err, len);
}

/* Merges the head group into the cache: one store request each. */
static int perform(struct cxs_core *c, cxs_time now, char *err, size_t len)
{
	uint32_t n = c->sb.group;
	c->sb.phase = SB_PERFORMING;
	c->sb.left = n;
	c->sb.pending[0] = n >= 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;
	c->sb.pending[1] = n <= 64 ? 0 : n >= 128 ? UINT64_MAX : (UINT64_C(1) << (n - 64)) - 1;
	for (uint32_t i = 0; i < n; i++) {
		const struct sb_ent *s = at(c, i);
		uint8_t flags = i == n - 1 && c->p.protocol == CXS_PROTO_WT && s->remote ? CXS_REQ_WT
											 : 0;
		if (core_request(c, now, CXS_OP_STORE, s->addr, s->size, s->value,
				 TAG(T_SB, i, ++c->gen), flags, s->repl, err, len) != 0)
			return -1;
	}
	return 0;
}

static bool head_remote(const struct cxs_core *c)
{
	return at(c, 0)->remote;
}

static bool head_acked(const struct cxs_core *c)
{
	return at(c, 0)->repl_acked || c->p.commit_before_ack;
}

/* ---- the protocols --------------------------------------------------------------- */

static int no_enter(struct cxs_core *c, uint32_t idx, cxs_time now, char *err, size_t len)
{
	(void)c;
	(void)idx;
	(void)now;
	(void)err;
	(void)len;
	return 0;
}

static int no_progress(struct cxs_core *c, cxs_time now, char *err, size_t len)
{
	(void)c;
	(void)now;
	(void)err;
	(void)len;
	return 0;
}

/* wb, wt: the store requests acquire and merge at once. */
static int perform_at_head(struct cxs_core *c, cxs_time now, char *err, size_t len)
{
	return perform(c, now, err, len);
}

/* Both transactions done: perform (the rule of parallel and proactive). */
static int perform_when_both(struct cxs_core *c, cxs_time now, char *err, size_t len)
{
	if (c->sb.phase == SB_STARTED && c->sb.owned && head_acked(c))
		return perform(c, now, err, len);
	return 0;
}

static int baseline_head(struct cxs_core *c, cxs_time now, char *err, size_t len)
{
	if (!head_remote(c))
		return perform(c, now, err, len);
	if (start_ownership(c, now, err, len) != 0)
		return -1;
	return c->proto->progress(c, now, err, len);
}

/* baseline: replication starts once ownership is in (Fig. 7a). */
static int baseline_progress(struct cxs_core *c, cxs_time now, char *err, size_t len)
{
	if (c->sb.phase != SB_STARTED || !c->sb.owned)
		return 0;
	if (!at(c, 0)->repl_sent && replicate(c, 0, c->sb.group, now, true, err, len) != 0)
		return -1;
	return perform_when_both(c, now, err, len);
}

/* parallel (Fig. 7b) and proactive at the head: whatever is not under way starts now. */
static int both_at_head(struct cxs_core *c, cxs_time now, char *err, size_t len)
{
	if (!head_remote(c))
		return perform(c, now, err, len);
	const struct sb_ent *h = at(c, 0);
	if (h->repl_sent && !h->repl_acked && c->env.repl_at_head)
		c->env.repl_at_head(c->env.ctx, c->id, now, h->repl); /* sent early, still waiting */
	if (!h->repl_sent && replicate(c, 0, c->sb.group, now, true, err, len) != 0)
		return -1;
	if (start_ownership(c, now, err, len) != 0)
		return -1;
	return perform_when_both(c, now, err, len);
}

/*
 * proactive, §IV-D.5: the store at idx never sends; the one before it sends
 * now if idx cannot join its group (another line, a local store, or that
 * group full or already sent).
 */
static int proactive_enter(struct cxs_core *c, uint32_t idx, cxs_time now, char *err,
			   size_t len)
{
	if (idx == 0)
		return 0;
	struct sb_ent *prev = at(c, idx - 1), *s = at(c, idx);
	if (!prev->remote || prev->repl_sent)
		return 0;
	uint32_t first = idx - 1; /* prev's group: the unsent run of its line ending at prev */
	while (first > 0 && at(c, first - 1)->remote && !at(c, first - 1)->repl_sent &&
	       line_of(at(c, first - 1)->addr) == line_of(prev->addr))
		first--;
	/* A group at the head may already be under way as the head transaction. */
	if (first == 0 && c->sb.phase != SB_IDLE)
		return 0;
	bool joins = s->remote && line_of(s->addr) == line_of(prev->addr) &&
		     idx - first < SB_GROUP_MAX;
	if (joins)
		return 0;
	return replicate(c, first, idx - first, now, false, err, len);
}

/* proactive without coalescing: every remote store replicates alone, at once. */
static int noc_enter(struct cxs_core *c, uint32_t idx, cxs_time now, char *err, size_t len)
{
	if (!at(c, idx)->remote)
		return 0;
	return replicate(c, idx, 1, now, false, err, len);
}

static const struct sb_protocol proto_wb = {
	.name = "wb", .coalesce = true,
	.enter = no_enter, .head = perform_at_head, .progress = no_progress,
};
static const struct sb_protocol proto_wt = {
	.name = "wt", .coalesce = true,
	.enter = no_enter, .head = perform_at_head, .progress = no_progress,
};
static const struct sb_protocol proto_baseline = {
	.name = "baseline", .replicates = true, .coalesce = true,
	.enter = no_enter, .head = baseline_head, .progress = baseline_progress,
};
static const struct sb_protocol proto_parallel = {
	.name = "parallel", .replicates = true, .coalesce = true,
	.enter = no_enter, .head = both_at_head, .progress = perform_when_both,
};
static const struct sb_protocol proto_proactive = {
	.name = "proactive", .replicates = true, .coalesce = true,
	.enter = proactive_enter, .head = both_at_head, .progress = perform_when_both,
};
static const struct sb_protocol proto_proactive_noc = {
	.name = "proactive_noc", .replicates = true, .coalesce = false,
	.enter = noc_enter, .head = both_at_head, .progress = perform_when_both,
};

static const struct sb_protocol *const protocols[CXS_PROTO_COUNT] = {
	[CXS_PROTO_WB] = &proto_wb,
	[CXS_PROTO_WT] = &proto_wt,
	[CXS_PROTO_BASELINE] = &proto_baseline,
	[CXS_PROTO_PARALLEL] = &proto_parallel,
	[CXS_PROTO_PROACTIVE] = &proto_proactive,
	[CXS_PROTO_PROACTIVE_NOC] = &proto_proactive_noc,
};
_Static_assert(CXS_PROTO_COUNT == 6, "every protocol of protocol.h has a table here");

const struct sb_protocol *sb_protocol_of(enum cxs_protocol p)
{
	return (unsigned)p < CXS_PROTO_COUNT ? protocols[p] : &proto_wb;
}

bool sb_replicates(const struct cxs_core *c)
{
	return c->proto->replicates;
}

/* ---- the buffer -------------------------------------------------------------------- */

int sb_push(struct cxs_core *c, const struct ent *e, cxs_time now, char *err, size_t len)
{
	uint32_t idx = c->sb.n;
	struct sb_ent *s = at(c, idx);
	*s = (struct sb_ent){.addr = e->addr, .value = e->value, .size = e->size,
			     .remote = c->env.remote(c->env.ctx, e->addr), .t_disp = e->t_disp,
			     .t_retire = now};
	c->sb.n++;
	if (c->env.sb_enter) {
		struct cxs_sb_store st = {s->addr, s->value, s->size, s->remote};
		c->env.sb_enter(c->env.ctx, c->id, now, &st);
	}
	return c->proto->enter(c, idx, now, err, len);
}

/* Stores in the head group, by the protocol's coalescing (and, for proactive, its REPL groups). */
static uint32_t head_group(const struct cxs_core *c)
{
	uint64_t line = line_of(at(c, 0)->addr);
	uint32_t n = 1, max = !c->proto->coalesce ? 1 : c->proto->replicates ? SB_GROUP_MAX : 128;
	bool parallel_fault = c->p.fault == CXS_CORE_FAULT_SB_PARALLEL ||
			      c->p.fault == CXS_CORE_FAULT_UNORDERED;
	if (parallel_fault)
		max = 128;
	while (n < c->sb.n && n < max) {
		const struct sb_ent *s = at(c, n);
		if (!parallel_fault && line_of(s->addr) != line)
			break;
		/* A store already replicated in another group starts its own transaction. */
		if (at(c, 0)->repl_sent && s->repl != at(c, 0)->repl)
			break;
		n++;
	}
	return n;
}

int sb_drain(struct cxs_core *c, cxs_time now, char *err, size_t len)
{
	if (c->sb.phase != SB_IDLE || c->sb.n == 0 || c->sb.held)
		return 0;
	uint32_t n = head_group(c);
	if (c->sb.released) {
		n = c->sb.held_n; /* what the protocol saw, even if the group grew since */
		c->sb.released = false;
	} else if (c->env.sb_head) {
		struct cxs_sb_store group[128];
		stores_of(c, 0, n, group);
		if (!c->env.sb_head(c->env.ctx, c->id, now, group, n)) {
			c->sb.held = true;
			c->sb.held_n = n;
			return 0;
		}
	}
	c->sb.group = n;
	c->sb.phase = SB_STARTED;
	c->sb.owned = false;
	c->sb.issued = c->sb.t_head = c->sb.t_owned = now;
	if (c->counting) {
		c->c[C_sb_transactions]++;
		c->c[C_sb_coalesced] += n - 1;
	}
	return c->proto->head(c, now, err, len);
}

/* The head group is performed: it leaves the buffer (commit). */
static int commit(struct cxs_core *c, cxs_time now, char *err, size_t len)
{
	uint32_t n = c->sb.group;
	if (c->env.commit) {
		struct cxs_sb_store group[128];
		stores_of(c, 0, n, group);
		c->env.commit(c->env.ctx, c->id, now, group, n);
	}
	if (c->counting) {
		c->c[C_sb_drain_ps_total] += now - c->sb.issued;
		/* Fig. 16: where each remote store of the group spent its time. */
		cxs_time coh_end = c->proto->replicates ? c->sb.t_owned : now;
		if (coh_end < c->sb.t_head)
			coh_end = c->sb.t_head;
		for (uint32_t i = 0; i < n; i++) {
			const struct sb_ent *s = at(c, i);
			if (!s->remote)
				continue;
			c->c[C_remote_stores]++;
			c->c[C_rw_rob_ps] += s->t_retire - s->t_disp;
			c->c[C_rw_sb_ps] += c->sb.t_head - s->t_retire;
			c->c[C_rw_coh_ps] += coh_end - c->sb.t_head;
			if (s->repl_sent && s->t_acked > coh_end)
				c->c[C_rw_repl_ps] += s->t_acked - coh_end;
		}
	}
	for (uint32_t i = 0; i < n; i++)
		c->store_words[WORD_BUCKET(at(c, i)->addr)]--;
	c->sb.head = (c->sb.head + n) % c->p.sq;
	c->sb.n -= n;
	c->sb.group = 0;
	c->sb.phase = SB_IDLE;
	return sb_drain(c, now, err, len);
}

int sb_complete(struct cxs_core *c, cxs_time now, uint64_t tag, char *err, size_t len)
{
	uint32_t idx = TAG_SLOT(tag);
	if (idx == SB_OWN_SLOT) {
		if (c->sb.phase != SB_STARTED || c->sb.owned) {
			snprintf(err, len, "node %u core %u: ownership for a store-buffer transaction "
				 "that does not wait for it", c->node, c->id);
			return -1;
		}
		c->sb.owned = true;
		c->sb.t_owned = now;
		return c->proto->progress(c, now, err, len);
	}
	if (c->sb.phase != SB_PERFORMING || idx >= c->sb.group ||
	    !(c->sb.pending[idx / 64] >> (idx % 64) & 1)) {
		snprintf(err, len, "node %u core %u: completion of store %u of a store-buffer "
			 "transaction that does not have it in flight", c->node, c->id, idx);
		return -1;
	}
	c->sb.pending[idx / 64] &= ~(UINT64_C(1) << (idx % 64));
	if (--c->sb.left > 0)
		return 0;
	return commit(c, now, err, len);
}

int cxs_core_sb_release(struct cxs_core *c, cxs_time now, char *err, size_t errlen)
{
	core_account(c, now);
	if (!c->sb.held)
		return 0;
	c->sb.held = false;
	c->sb.released = true;
	if (sb_drain(c, now, err, errlen) != 0)
		return -1;
	return cxs_core_step(c, now, err, errlen);
}

int cxs_core_replicated(struct cxs_core *c, cxs_time now, uint32_t id, char *err, size_t errlen)
{
	core_account(c, now);
	int a = core_atomic_replicated(c, now, id, err, errlen);
	if (a != 0)
		return a < 0 ? -1 : cxs_core_step(c, now, err, errlen);
	bool found = false;
	/* Only stores still waiting: a second report for one replication is a bug of the sender. */
	for (uint32_t i = 0; i < c->sb.n; i++) {
		struct sb_ent *s = at(c, i);
		if (s->repl_sent && s->repl == id && !s->repl_acked) {
			s->repl_acked = 1;
			s->t_acked = now;
			found = true;
		}
	}
	if (!found) {
		snprintf(err, errlen, "node %u core %u: replication %u completed, but no store of the "
			 "buffer waits for it", c->node, c->id, id);
		return -1;
	}
	if (c->sb.n && at(c, 0)->repl == id && c->proto->progress(c, now, err, errlen) != 0)
		return -1;
	return cxs_core_step(c, now, err, errlen);
}
