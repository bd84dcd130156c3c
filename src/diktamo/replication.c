/*
 * replication.c — a CN's side of DIKTAMO's Replication transaction
 * (papers/diktamo.md §III-A, §IV-A, Fig. 3 and 4): REPLs out to the Logging
 * Units of a line's replica group, REPL_ACKs in, VALs out.
 *
 *   core ── replicate(stores of one line) ──► REPL to each of the N_r replicas
 *   replicas' Logging Units ── REPL_ACK ──► here; the last one tells the core
 *   the core performs the stores; each performed store reports here with its
 *   stamp (the CN agent's hook) ──► when the replication's last store is
 *   performed: VAL to every replica, with the CN's 7-bit TS and the stamp
 *
 * The 7-bit TS counts the VALs this CN sends to each Logging Unit (one
 * counter per destination), so every unit sees one CN's VALs numbered
 * without gaps and can order them within its window (diktamo.h).
 *
 * VALs leave in the very event that performs the stores, so no other node
 * can see a store's value before its VALs are on their way, and a CN that
 * fails after performing has sent them (its messages before T_f are
 * delivered, engine.h). The writer may be one of its line's replicas: its own
 * Logging Unit is reached inside the node (the port's self delivery).
 *
 * Words. The log keeps whole 8-byte words, one entry per word a
 * replication writes: two stores of a group to one word are one entry, with
 * the word as the later left it and that store's stamp. Wire sizes
 * (fabric.c): REPL 24 + 8 bytes per word, REPL_ACK 16, VAL 24 + 8 per stamp
 * or value it carries. A VAL carries the words' values when the REPL could
 * not: an atomic (its result is known only once performed) and a store of
 * fewer than 8 bytes (the VAL carries the word as the store left it in the
 * cache). It carries one stamp per word when the words' stamps are not
 * consecutive (a word written twice in the group, or another core's write to
 * the line in between); normally the group's stores are performed one after
 * the other under one grant and the first stamp says them all.
 *
 * Outstanding replications live in a table indexed by id modulo its size,
 * which exceeds what a CN can have in flight (its cores' store buffers and
 * one atomic each). Ids increase, but not always by one: a replication can
 * wait at its core's store-buffer head while the CN's other cores make a
 * thousand more (proactive_noc with a 64 KB SRAM: one waited 5 us while
 * 1024 newer ones came and went, 220 in flight), so a new id skips those
 * whose slot is still in use. Nothing needs them consecutive: a Logging
 * Unit names a REPL by (CN, id), and the failure scan below sorts by id.
 *
 * Checks, always on (the protocol checker's local half): a store performed
 * before all its REPL_ACKs are in, or out of its replication's order, stops
 * the run (diktamo.fault = commit_before_ack provokes the first).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dk_priv.h"


/*
 * One replication in flight: its stores (in store-buffer order) and the
 * distinct words they write (in first-store order; the REPL's entries).
 */
struct rec {
	bool used;
	bool need_values;   /* the VAL carries the words */
	uint8_t nst, nw, nrep, acks, performed;
	uint8_t acked;      /* bit k: rep[k]'s REPL_ACK is in */
	uint8_t nacked;     /* bit k: rep[k] refused it (full) and must be asked again at the head */
	bool atomic;
	bool at_head;       /* its group is at the store-buffer head (or was sent from there) */
	uint32_t id, core;
	uint32_t rep[CXS_DK_MAX_REPLICAS];
	uint64_t last_stamp;
	cxs_time sent;
	/* From here on only entries 0 .. nst-1 / nw-1 are ever read: not cleared per use. */
	uint8_t widx[DK_MAX_WORDS];     /* store -> its word */
	uint64_t addr[DK_MAX_WORDS];    /* word addresses */
	uint64_t repl_value[DK_MAX_WORDS]; /* ... and their values in the REPL */
	uint64_t value[DK_MAX_WORDS];   /* each word as its last store left it */
	uint64_t stamp[DK_MAX_WORDS];   /* ... and that store's stamp */
};

/* A replication's id and slot, to visit them in id order. */
struct id_slot {
	uint32_t id, slot;
	uint32_t age; /* next_id - id, modulo 2^32: issue order across the ids' wrap */
};

/* Oldest first. */
static int cmp_age(const void *a, const void *b)
{
	uint32_t x = ((const struct id_slot *)a)->age, y = ((const struct id_slot *)b)->age;
	return x > y ? -1 : x < y;
}

struct cxs_dk_sender {
	const struct cxs_dk_world *w;
	struct cxs_nport *port;
	uint32_t node;
	cxs_dk_replicated_fn *replicated;
	void *ctx;
	uint32_t live[DK_MAX_CNS];
	uint32_t nlive;
	uint32_t next_id;
	uint32_t tmask;           /* the table's slots - 1: replication id -> slot */
	struct id_slot *order;    /* scratch, as many as slots */
	uint8_t ts[DK_MAX_CNS];   /* 7-bit VAL timestamp per destination Logging Unit */
	size_t outstanding;
	bool dropped;             /* diktamo.fault = drop_val done */
	struct rec *t;
	uint64_t *c_replications, *c_repls, *c_words, *c_acks, *c_nacks, *c_resent, *c_vals,
		*c_val_words;
	struct cxs_hist *h_latency;
};

struct cxs_dk_sender *cxs_dk_sender_new(const struct cxs_dk_world *w, struct cxs_nport *port,
					cxs_dk_replicated_fn *replicated, void *ctx,
					struct cxs_stats *st)
{
	struct cxs_dk_sender *s = calloc(1, sizeof *s);
	/*
	 * In flight at once: at most one replication per store-buffer entry and
	 * one atomic per core; ids are consecutive, so a power of two above that
	 * never meets a slot still in use (cxs_dk_replicate checks). Sized from
	 * the machine, the ring stays small enough to stay in cache.
	 */
	uint64_t need = (uint64_t)(w->cores_per_cn ? w->cores_per_cn : 1) * (w->sb_entries + 1);
	uint64_t slots = 64;
	while (slots < 2 * need)
		slots <<= 1;
	if (!s || slots > (UINT64_C(1) << 31) || !(s->t = calloc(slots, sizeof *s->t)) ||
	    !(s->order = malloc(slots * sizeof *s->order))) {
		if (s)
			free(s->t);
		free(s);
		return NULL;
	}
	s->tmask = (uint32_t)(slots - 1);
	s->w = w;
	s->port = port;
	s->node = cxs_lp_id(port->lp);
	s->replicated = replicated;
	s->ctx = ctx;
	for (uint32_t c = 0; c < w->cns; c++)
		s->live[s->nlive++] = c;
	s->c_replications = cxs_stats_counter(st, "diktamo", "replications", "transactions",
					      "Replication transactions started (one per store-buffer group or atomic)");
	s->c_repls = cxs_stats_counter(st, "diktamo", "repls_sent", "messages", "REPL messages sent");
	s->c_words = cxs_stats_counter(st, "diktamo", "repl_words", "words",
				       "words replicated (one per store, coalesced or not)");
	s->c_acks = cxs_stats_counter(st, "diktamo", "acks_received", "messages", "REPL_ACKs received");
	s->c_nacks = cxs_stats_counter(st, "diktamo", "nacks_received", "messages",
				       "early REPLs a full Logging Unit refused");
	s->c_resent = cxs_stats_counter(st, "diktamo", "repls_resent", "messages",
					"refused REPLs sent again when their group reached the store-buffer head");
	s->c_vals = cxs_stats_counter(st, "diktamo", "vals_sent", "messages", "VAL messages sent");
	s->c_val_words = cxs_stats_counter(st, "diktamo", "val_words", "words",
					   "word values VALs carried (atomics, sub-word stores)");
	s->h_latency = cxs_stats_hist(st, "diktamo", "replication_ps", "ps",
				      "REPL sent to the last REPL_ACK in", 40);
	cxs_nport_on_type(port, CXS_MSG_REPL_ACK, dk_sender_on_ack, s);
	return s;
}

void cxs_dk_sender_free(struct cxs_dk_sender *s)
{
	if (!s)
		return;
	free(s->t);
	free(s->order);
	free(s);
}

size_t cxs_dk_sender_outstanding(const struct cxs_dk_sender *s)
{
	return s->outstanding;
}

bool cxs_dk_sender_stuck(const struct cxs_dk_sender *s, cxs_time now, cxs_time patience,
			 char *err, size_t errlen)
{
	/* The oldest, so the report does not depend on the table's layout. */
	const struct rec *old = NULL;
	for (uint32_t i = 0; i <= s->tmask && s->outstanding; i++) {
		const struct rec *r = &s->t[i];
		if (r->used && r->acks < r->nrep && now - r->sent > patience &&
		    (!old || r->sent < old->sent || (r->sent == old->sent && r->id < old->id)))
			old = r;
	}
	if (!old)
		return false;
	int o = snprintf(err, errlen, "node %u core %u: replication %u of line %#" PRIx64
			 " has waited since %" PRIu64 " ps for the REPL_ACK of",
			 s->node, old->core, old->id, old->addr[0] & ~UINT64_C(63), old->sent);
	for (uint32_t k = 0; k < old->nrep && o > 0 && (size_t)o < errlen; k++)
		if (!(old->acked >> k & 1))
			o += snprintf(err + o, errlen - (size_t)o, " CN %u", old->rep[k]);
	return true;
}

void cxs_dk_sender_cn_failed(struct cxs_dk_sender *s, uint32_t cn, cxs_time now)
{
	s->nlive = dk_live_remove(s->live, s->nlive, cn);
	/*
	 * Replications waiting for the failed CN's REPL_ACK complete without it:
	 * their stores keep N_r - 1 live copies, enough for the one failure
	 * being handled; later replications choose groups among the live CNs.
	 * Visited in issue order (ids wrap after 2^32, so by age), so the cores
	 * hear of them deterministically.
	 */
	uint32_t n = 0;
	for (uint32_t i = 0; i <= s->tmask; i++)
		if (s->t[i].used && s->t[i].acks < s->t[i].nrep)
			s->order[n++] = (struct id_slot){s->t[i].id, i, s->next_id - s->t[i].id};
	qsort(s->order, n, sizeof *s->order, cmp_age);
	for (uint32_t q = 0; q < n; q++) {
		struct rec *r = &s->t[s->order[q].slot];
		/* A core told of an earlier one may have moved on (freed or reused the slot). */
		if (!r->used || r->id != s->order[q].id || r->acks >= r->nrep)
			continue;
		for (uint32_t j = 0; j < r->nrep; j++) {
			if (r->rep[j] != cn || (r->acked >> j & 1))
				continue;
			r->acked |= (uint8_t)(1u << j);
			r->nacked &= (uint8_t)~(1u << j);
			if (++r->acks == r->nrep)
				s->replicated(s->ctx, r->core, r->id, now);
		}
	}
}

/* The REPL of r to its replica k. */
static void send_repl(struct cxs_dk_sender *s, cxs_time now, const struct rec *r, uint32_t k)
{
	struct dk_repl msg = {.requester = s->node << 8 | r->core, .repl = r->id, .n = r->nw,
			      .atomic = r->atomic, .at_head = r->at_head};
	for (uint32_t w = 0; w < r->nw; w++) {
		msg.w[w].addr = r->addr[w];
		msg.w[w].value = r->repl_value[w];
	}
	uint32_t body = (uint32_t)(offsetof(struct dk_repl, w) + r->nw * sizeof msg.w[0]);
	cxs_nport_send(s->port, now, s->w->ev_msg, r->rep[k], CXS_MSG_REPL, &msg, body,
		       DK_REPL_WIRE(r->nw));
}

int cxs_dk_replicate(struct cxs_dk_sender *s, cxs_time now, uint32_t core,
		     const struct cxs_sb_store *st, uint32_t n, unsigned flags, uint32_t *id,
		     char *err, size_t errlen)
{
	bool atomic = flags & CXS_REPL_ATOMIC;
	if (n == 0 || n > DK_MAX_WORDS) {
		snprintf(err, errlen, "node %u: a replication of %u stores", s->node, n);
		return -1;
	}
	if (s->outstanding > s->tmask)
		cxs_bug(s->port->lp, "diktamo: %zu replications in flight fill the table of %u",
			s->outstanding, s->tmask + 1);
	uint32_t my;
	struct rec *r;
	do { /* the next id whose slot is free (see the header) */
		my = ++s->next_id;
		if (my == 0)
			my = ++s->next_id; /* 0 names no replication */
		r = &s->t[my & s->tmask];
	} while (r->used);
	uint64_t line = st[0].addr >> CXS_LINE_SHIFT;
	memset(r, 0, offsetof(struct rec, widx));
	r->used = true;
	r->nst = (uint8_t)n;
	r->id = my;
	r->core = core;
	r->sent = now;
	r->atomic = atomic;
	r->at_head = (flags & CXS_REPL_AT_HEAD) != 0;
	r->nrep = (uint8_t)cxs_dk_replicas(line, s->live, s->nlive, s->w->p->replicas, r->rep);
	for (uint32_t i = 0; i < n; i++) {
		if (st[i].addr >> CXS_LINE_SHIFT != line)
			cxs_bug(s->port->lp, "diktamo: a replication spans two lines");
		/* The log keeps whole words: two stores to one word are one entry. */
		uint64_t word = st[i].addr & ~UINT64_C(7);
		uint32_t w = 0;
		while (w < r->nw && r->addr[w] != word)
			w++;
		if (w == r->nw)
			r->addr[r->nw++] = word;
		r->widx[i] = (uint8_t)w;
		r->need_values |= atomic || st[i].size < 8;
		r->repl_value[w] = st[i].value;
	}
	for (uint32_t k = 0; k < r->nrep; k++)
		send_repl(s, now, r, k);
	s->outstanding++;
	++*s->c_replications;
	*s->c_repls += r->nrep;
	*s->c_words += r->nw;
	*id = my;
	return 0;
}

/* A REPL_ACK (port handler, type repl_ack). */
void dk_sender_on_ack(void *ctx, cxs_time now, const struct cxs_envelope *env, const void *body,
		      uint32_t len)
{
	struct cxs_dk_sender *s = ctx;
	const struct dk_ack *a = body;
	struct rec *r = &s->t[a->repl & s->tmask];
	(void)len;
	uint32_t k = 0;
	while (r->used && r->id == a->repl && k < r->nrep && r->rep[k] != env->src)
		k++;
	if (!r->used || r->id != a->repl || k == r->nrep || (r->acked >> k & 1))
		cxs_bug(s->port->lp, "diktamo: REPL_ACK from node %u for replication %u, which does "
			"not wait for one from it", env->src, a->repl);
	if (a->nack) {
		/* A full unit refused an early REPL: asked again once the group is at the head. */
		++*s->c_nacks;
		r->nacked |= (uint8_t)(1u << k);
		if (r->at_head)
			cxs_dk_sender_at_head(s, now, r->core, r->id);
		return;
	}
	r->acked |= (uint8_t)(1u << k);
	++*s->c_acks;
	if (++r->acks < r->nrep)
		return;
	if (s->h_latency)
		cxs_hist_add(s->h_latency, now - r->sent);
	s->replicated(s->ctx, r->core, r->id, now);
}

void cxs_dk_sender_at_head(struct cxs_dk_sender *s, cxs_time now, uint32_t core, uint32_t id)
{
	struct rec *r = &s->t[id & s->tmask];
	if (!r->used || r->id != id || r->core != core)
		cxs_bug(s->port->lp, "diktamo: core %u's replication %u reached the head, but it is "
			"not in flight", core, id);
	r->at_head = true;
	for (uint32_t k = 0; k < r->nrep; k++) {
		if (!(r->nacked >> k & 1))
			continue;
		r->nacked &= (uint8_t)~(1u << k);
		send_repl(s, now, r, k);
		++*s->c_resent;
	}
}

int cxs_dk_performed(struct cxs_dk_sender *s, cxs_time now, const struct cxs_mem_req *req,
		     uint64_t stamp, uint64_t word, char *err, size_t errlen)
{
	struct rec *r = &s->t[req->repl & s->tmask];
	if (!r->used || r->id != req->repl) {
		snprintf(err, errlen, "diktamo: node %u core %u performed a store of replication %u, "
			 "which is not in flight", s->node, req->core, req->repl);
		return -1;
	}
	if (r->acks < r->nrep) {
		snprintf(err, errlen,
			 "diktamo protocol checker: node %u core %u committed a store to %#" PRIx64
			 " with %u of its %u REPL_ACKs (replication %u)",
			 s->node, req->core, req->addr, r->acks, r->nrep, r->id);
		return -1;
	}
	uint32_t k = r->performed++;
	uint32_t w = k < r->nst ? r->widx[k] : 0;
	if (k >= r->nst || (req->addr & ~UINT64_C(7)) != r->addr[w] ||
	    (k > 0 && stamp <= r->last_stamp)) {
		snprintf(err, errlen, "diktamo: node %u core %u: store %u of replication %u performed "
			 "out of its order (stamp %#" PRIx64 " after %#" PRIx64 ")",
			 s->node, req->core, k, r->id, stamp, r->last_stamp);
		return -1;
	}
	r->last_stamp = stamp;
	r->stamp[w] = stamp;
	r->value[w] = word;
	if (r->performed < r->nst)
		return 0;
	/* The last store of the replication: VALs to every replica. */
	struct dk_val v = {.requester = s->node << 8 | r->core, .repl = r->id,
			   .stamp0 = r->stamp[0]};
	bool contiguous = true;
	for (uint32_t i = 1; i < r->nw; i++)
		contiguous &= r->stamp[i] == r->stamp[0] + i;
	uint32_t extra = 0;
	if (!contiguous) {
		v.nstamps = r->nw;
		memcpy(v.w, r->stamp, r->nw * sizeof r->stamp[0]);
		extra += r->nw;
	}
	if (r->need_values) {
		v.nvalues = r->nw;
		memcpy(v.w + extra, r->value, r->nw * sizeof r->value[0]);
		extra += r->nw;
		*s->c_val_words += (uint64_t)r->nw * r->nrep;
	}
	uint32_t body = (uint32_t)(offsetof(struct dk_val, w) + extra * sizeof v.w[0]);
	uint32_t drop = CXS_DK_MAX_REPLICAS;
	if (s->w->p->fault == CXS_DK_FAULT_DROP_VAL && !s->dropped && r->nrep > 1) {
		s->dropped = true;
		drop = cxs_dk_saver(r->addr[0] >> CXS_LINE_SHIFT, r->nrep);
		cxs_log(CXS_LOG_WARN, now, "diktamo.fault = drop_val: node %u drops its VAL of "
			"replication %u to CN %u", s->node, r->id, r->rep[drop]);
	}
	for (uint32_t i = 0; i < r->nrep; i++) {
		if (i == drop)
			continue;
		/* Each unit sees this CN's VALs numbered without gaps (its TS window). */
		v.ts = (uint8_t)(s->ts[r->rep[i]]++ & 0x7f);
		cxs_nport_send(s->port, now, s->w->ev_msg, r->rep[i], CXS_MSG_VAL, &v, body,
			       DK_VAL_WIRE(extra));
	}
	*s->c_vals += r->nrep;
	if (s->w->check)
		for (uint32_t i = 0; i < r->nw; i++)
			if (cxs_dk_check_commit(s->w->check, r->addr[i], r->value[i], r->stamp[i],
						r->rep, r->nrep) != 0) {
				snprintf(err, errlen, "diktamo checker: out of memory");
				return -1;
			}
	r->used = false;
	s->outstanding--;
	return 0;
}
