/*
 * logging.c — a CN's Logging Unit as a node component (papers/diktamo.md
 * §IV-B, §IV-E): the unit itself (its SRAM Log Buffer and DRAM log) is
 * log_unit.c; this file puts it on the node port and the CN's local DRAM.
 *
 *   REPL in   the unit allocates its entries (SRAM access); the REPL_ACK
 *             leaves when they are in. When the buffer lacks room
 *             (back-pressure):
 *               - a REPL sent before its group reached the store-buffer head
 *                 (DIKTAMO-proactive) is refused at once, with a NACK; the
 *                 writer asks again when the group reaches the head;
 *               - a REPL from a group at the head waits, in arrival order,
 *                 for a drain to free room — for diktamo.spill_after at
 *                 most, after which its entries are kept in the CN's DRAM
 *                 past the buffer (a spill: a DRAM write, then the ACK).
 *             Without both rules the buffer deadlocks: under proactive it
 *             fills with entries of stores far from their heads, which can
 *             be VALed only after the stores at the heads, whose REPLs it
 *             then holds; and two units each holding REPLs of groups that
 *             the other has taken can wait for each other for ever. The
 *             paper says only that a full buffer back-pressures REPLs.
 *   VAL in    marks the entries valid, then a drain runs: the unit moves
 *             entries to the DRAM log at one per unit cycle, per word in
 *             stamp order (log_unit.c), and writes them to the CN's local
 *             DRAM — 24-byte entries, a line write per 64 bytes, contending
 *             with the CN's own private-memory traffic.
 *   dumps     at each round the coordinating MN announces (keeper.c), the
 *             unit takes the entries of its share of its groups' lines
 *             (cxs_dk_saver), compresses them per home MN with zlib — the
 *             real bytes — and sends each MN its chunk in 64-byte messages,
 *             then says DONE. Past the high watermark it asks for an early
 *             round. After a round with nothing logged anywhere the
 *             coordinator idles, and the first REPL after that wakes it.
 *
 * The DRAM log's lines live in a region of the local DRAM's address space of
 * their own (rows distinct from the CN's private data); only their timing is
 * modelled there, their contents are the unit's entries.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dk_priv.h"

enum { T_DRAIN = 1, T_SPILL };

#define LOG_REGION_LINE (UINT64_C(1) << 36)   /* first DRAM line of the log region */
#define SPILL_REGION_LINE (UINT64_C(3) << 35) /* ... and of the region spills go to */

struct held {
	cxs_time since;
	uint32_t src;
	struct dk_repl m;
};

struct cxs_dk_logger {
	const struct cxs_dk_world *w;
	struct cxs_nport *port;
	struct cxs_lp *lp;
	uint32_t node;
	struct cxs_lu *lu;
	struct cxs_dram *dram;
	uint32_t ev;
	bool drain_armed, spill_armed;
	uint64_t log_line;        /* next DRAM line of the log region */
	uint64_t spill_line;      /* next DRAM line of the spill region */
	uint32_t log_fill;        /* bytes of the current log line */
	struct held *q;           /* REPLs held by back-pressure, FIFO */
	uint32_t qhead, qn, qcap;
	uint32_t live[DK_MAX_CNS];
	uint32_t nlive;
	bool coordinator_idle, told_active, early_asked;
	/*
	 * A CN failed since this unit's last dump: the next one saves every entry
	 * (saving_all while it runs). An entry's saver is a member of the group
	 * it was replicated to, chosen among the live CNs when the unit dumps;
	 * after a failure the groups are formed anew, and the member the new
	 * choice names may not hold the entry at all, while the old saver may be
	 * the dead one — so each holder saves it once, and the MNs' logs keep
	 * what N_r units held (a duplicate in an MN log is the same word, stamp
	 * and value, which recovery's merge takes once).
	 */
	bool save_all, saving_all;
	uint64_t logged_since_round;
	uint64_t *c_dram_lines, *c_held, *c_nacks, *c_spills, *c_rounds, *c_chunks, *c_chunk_bytes;
};

static void send_ack(struct cxs_dk_logger *l, cxs_time when, uint32_t dst, uint32_t requester,
		     uint32_t repl, bool nack)
{
	struct dk_ack a = {.requester = requester, .repl = repl, .nack = nack};
	cxs_nport_send(l->port, when, l->w->ev_msg, dst, CXS_MSG_REPL_ACK, &a, sizeof a, 0);
}

static void sync_to_coordinator(struct cxs_dk_logger *l, cxs_time when, uint8_t kind,
				uint8_t flag, uint32_t round)
{
	struct dk_sync m = {.kind = kind, .flag = flag, .round = round};
	cxs_nport_send(l->port, when, l->w->ev_msg, l->w->first_mn, CXS_MSG_LOG_SYNC, &m,
		       sizeof m, 0);
}

static void arm_drain(struct cxs_dk_logger *l, cxs_time delay)
{
	if (l->drain_armed)
		return;
	l->drain_armed = true;
	uint32_t kind = T_DRAIN;
	cxs_schedule(l->lp, delay, l->ev, &kind, sizeof kind);
}

/* The spill timer: when the oldest held REPL has waited diktamo.spill_after. */
static void arm_spill(struct cxs_dk_logger *l, cxs_time now)
{
	if (l->spill_armed || l->qn == 0)
		return;
	cxs_time due = l->q[l->qhead].since + l->w->p->spill_after;
	l->spill_armed = true;
	uint32_t kind = T_SPILL;
	cxs_schedule(l->lp, due > now ? due - now : 0, l->ev, &kind, sizeof kind);
}

/* Offers a REPL to the unit: 1 logged (ACK sent), 0 no room. With spill it is always taken. */
static int offer(struct cxs_dk_logger *l, cxs_time now, uint32_t src, const struct dk_repl *m,
		 bool spill)
{
	uint64_t addr[DK_MAX_WORDS], value[DK_MAX_WORDS];
	for (uint32_t i = 0; i < m->n; i++) {
		addr[i] = m->w[i].addr;
		value[i] = m->w[i].value;
	}
	cxs_time t = cxs_lu_repl(l->lu, now, m->requester, m->repl, addr, value, m->n, spill);
	if (t == CXS_TIME_INF) {
		if (spill)
			cxs_bug(l->lp, "diktamo: out of memory spilling a REPL");
		return 0;
	}
	if (spill) {
		/* Its entries went to the CN's DRAM: the ACK waits for the write. */
		uint32_t lines = (uint32_t)((m->n * CXS_DK_ENTRY_BYTES + CXS_LINE_BYTES - 1) /
					    CXS_LINE_BYTES);
		for (uint32_t i = 0; i < lines; i++) {
			cxs_time d = cxs_dram_access(l->dram, now, SPILL_REGION_LINE + l->spill_line++, 1);
			if (d > t)
				t = d;
		}
		++*l->c_spills;
	}
	send_ack(l, t, src, m->requester, m->repl, false);
	l->logged_since_round += m->n;
	return 1;
}

void dk_logger_on_repl(void *ctx, cxs_time now, const struct cxs_envelope *env, const void *body,
		       uint32_t len)
{
	struct cxs_dk_logger *l = ctx;
	const struct dk_repl *m = body;
	if (len < offsetof(struct dk_repl, w) || m->n == 0 || m->n > DK_MAX_WORDS ||
	    len < offsetof(struct dk_repl, w) + m->n * sizeof m->w[0])
		cxs_bug(l->lp, "diktamo: malformed REPL of %u bytes from node %u", len, env->src);
	if (l->coordinator_idle && !l->told_active) {
		l->told_active = true;
		sync_to_coordinator(l, now, DK_SYNC_ACTIVE, 0, 0);
	}
	if (l->qn == 0 && offer(l, now, env->src, m, false))
		return;
	if (!m->at_head) {
		/* Early: refused; the writer asks again at the head (never ahead of those waiting). */
		send_ack(l, now + l->w->p->lu.sram_ps, env->src, m->requester, m->repl, true);
		++*l->c_nacks;
		return;
	}
	/* Back-pressure: it waits, in arrival order, behind those already waiting. */
	if (l->qn == l->qcap) {
		uint32_t cap = l->qcap ? 2 * l->qcap : 16;
		struct held *q = malloc(cap * sizeof *q);
		if (!q)
			cxs_bug(l->lp, "diktamo: out of memory holding REPLs");
		for (uint32_t i = 0; i < l->qn; i++)
			q[i] = l->q[(l->qhead + i) % l->qcap];
		free(l->q);
		l->q = q;
		l->qhead = 0;
		l->qcap = cap;
	}
	struct held *h = &l->q[(l->qhead + l->qn++) % l->qcap];
	h->since = now;
	h->src = env->src;
	memcpy(&h->m, m, len < sizeof h->m ? len : sizeof h->m);
	++*l->c_held;
	arm_spill(l, now);
}

/* Held REPLs that have waited diktamo.spill_after are taken past the buffer. */
static void spill_held(struct cxs_dk_logger *l, cxs_time now)
{
	while (l->qn && l->q[l->qhead].since + l->w->p->spill_after <= now) {
		struct held *h = &l->q[l->qhead];
		offer(l, now, h->src, &h->m, true);
		cxs_lu_backpressure(l->lu, h->since, now);
		l->qhead = (l->qhead + 1) % l->qcap;
		l->qn--;
	}
	arm_spill(l, now);
}

void dk_logger_on_val(void *ctx, cxs_time now, const struct cxs_envelope *env, const void *body,
		      uint32_t len)
{
	struct cxs_dk_logger *l = ctx;
	const struct dk_val *v = body;
	char err[256];
	(void)env;
	if (len < offsetof(struct dk_val, w) ||
	    len < offsetof(struct dk_val, w) + (v->nstamps + v->nvalues) * sizeof v->w[0])
		cxs_bug(l->lp, "diktamo: malformed VAL of %u bytes", len);
	if (cxs_lu_val(l->lu, now, v->requester, v->repl, v->ts, v->stamp0,
		       v->nstamps ? v->w : NULL, v->nvalues ? v->w + v->nstamps : NULL, err,
		       sizeof err) != 0) {
		cxs_lp_fail(l->lp, 3, "diktamo protocol error at node %u: %s", l->node, err);
		return;
	}
	arm_drain(l, 0);
}

/* The drain: entries into the DRAM log, their lines into the local DRAM. */
static void drain(struct cxs_dk_logger *l, cxs_time now)
{
	uint32_t moved = 0;
	cxs_time done = cxs_lu_drain(l->lu, now, &moved);
	for (uint32_t i = 0; i < moved; i++) {
		l->log_fill += CXS_DK_ENTRY_BYTES;
		if (l->log_fill >= CXS_LINE_BYTES) {
			l->log_fill -= CXS_LINE_BYTES;
			cxs_dram_access(l->dram, done, LOG_REGION_LINE + l->log_line++, 1);
			++*l->c_dram_lines;
		}
	}
	/* Room freed: the held REPLs go in, oldest first. */
	while (l->qn) {
		struct held *h = &l->q[l->qhead];
		if (!offer(l, done > now ? done : now, h->src, &h->m, false))
			break;
		cxs_lu_backpressure(l->lu, h->since, done > now ? done : now);
		l->qhead = (l->qhead + 1) % l->qcap;
		l->qn--;
	}
	if (cxs_lu_needs_flush(l->lu) && !l->early_asked) {
		l->early_asked = true;
		sync_to_coordinator(l, done > now ? done : now, DK_SYNC_EARLY, 0, 0);
	}
	/* More may have become movable (an earlier VAL in), or the held ones need room. */
	if (moved && (l->qn || cxs_lu_sram_free(l->lu) == 0))
		arm_drain(l, done - now + l->w->p->lu.cycle_ps);
}

void cxs_dk_logger_event(struct cxs_dk_logger *l, const struct cxs_event *ev)
{
	uint32_t kind;
	memcpy(&kind, ev->data, sizeof kind);
	if (kind == T_SPILL) {
		l->spill_armed = false;
		spill_held(l, ev->time);
		return;
	}
	if (kind != T_DRAIN)
		cxs_bug(l->lp, "diktamo: logger event %u", kind);
	l->drain_armed = false;
	drain(l, ev->time);
}

/* ---- dumps ------------------------------------------------------------------------- */

static bool keep(void *ctx, uint64_t line)
{
	struct cxs_dk_logger *l = ctx;
	if (l->saving_all)
		return true;
	uint32_t g[CXS_DK_MAX_REPLICAS];
	uint32_t n = cxs_dk_replicas(line, l->live, l->nlive, l->w->p->replicas, g);
	uint32_t saver = cxs_dk_saver(line, n);
	return g[saver] == l->node;
}

static uint32_t dest(void *ctx, uint64_t line)
{
	struct cxs_dk_logger *l = ctx;
	return l->w->home_of(l->w->home_ctx, line);
}

static void dump(struct cxs_dk_logger *l, cxs_time now, uint32_t round)
{
	struct cxs_dk_chunk *chunks = NULL;
	size_t n = 0;
	cxs_time done = now;
	/* Entries VALed but not yet moved belong to this round too. */
	uint32_t moved = 0;
	cxs_time t = cxs_lu_drain(l->lu, now, &moved);
	l->saving_all = l->save_all;
	l->save_all = false;
	if (cxs_lu_dump(l->lu, t, keep, dest, l, l->w->mns, &chunks, &n, &done) != 0)
		cxs_bug(l->lp, "diktamo: out of memory compressing the log");
	l->saving_all = false;
	for (size_t i = 0; i < n; i++) {
		size_t size = sizeof(struct dk_dump) + chunks[i].len;
		struct dk_dump *d = malloc(size);
		if (!d)
			cxs_bug(l->lp, "diktamo: out of memory for a log dump");
		*d = (struct dk_dump){.round = round, .from = l->node, .raw_len = chunks[i].raw_len,
				      .nentries = chunks[i].nentries, .len = chunks[i].len};
		memcpy(d->bytes, chunks[i].bytes, chunks[i].len);
		cxs_nport_send(l->port, done, l->w->ev_msg, l->w->first_mn + chunks[i].dest,
			       CXS_MSG_LOG_DUMP, d, (uint32_t)size, dk_dump_wire(chunks[i].len));
		++*l->c_chunks;
		*l->c_chunk_bytes += chunks[i].len;
		free(d);
	}
	cxs_dk_chunks_free(chunks, n);
	++*l->c_rounds;
	sync_to_coordinator(l, done, DK_SYNC_DONE, l->logged_since_round > 0, round);
	l->logged_since_round = 0;
	l->early_asked = false;
}

void dk_logger_on_sync(void *ctx, cxs_time now, const struct cxs_envelope *env, const void *body,
		       uint32_t len)
{
	struct cxs_dk_logger *l = ctx;
	const struct dk_sync *m = body;
	(void)env;
	(void)len;
	switch (m->kind) {
	case DK_SYNC_BEGIN:
		dump(l, now, m->round);
		return;
	case DK_SYNC_END:
		l->coordinator_idle = m->flag;
		l->told_active = false;
		return;
	default:
		cxs_bug(l->lp, "diktamo: a Logging Unit got sync message %u", m->kind);
	}
}

/* ---- life -------------------------------------------------------------------------- */

struct cxs_dk_logger *cxs_dk_logger_new(const struct cxs_dk_world *w, struct cxs_nport *port,
					struct cxs_dram *dram, uint32_t ev, struct cxs_stats *st)
{
	struct cxs_dk_logger *l = calloc(1, sizeof *l);
	if (!l)
		return NULL;
	l->w = w;
	l->port = port;
	l->lp = port->lp;
	l->node = cxs_lp_id(port->lp);
	l->dram = dram;
	l->ev = ev;
	l->coordinator_idle = true; /* until the first round */
	for (uint32_t c = 0; c < w->cns; c++)
		l->live[l->nlive++] = c;
	if (!(l->lu = cxs_lu_new(&w->p->lu, l->node, st))) {
		free(l);
		return NULL;
	}
	/* Compressed as the drain deposits (the paper's §VII, Log Size): dumps only finish. */
	if (cxs_lu_stream(l->lu, keep, dest, l, w->mns) != 0) {
		cxs_lu_free(l->lu);
		free(l);
		return NULL;
	}
	l->c_dram_lines = cxs_stats_counter(st, "lu", "dram_log_lines", "lines",
					    "line writes of the DRAM log to the CN's local DRAM");
	l->c_held = cxs_stats_counter(st, "lu", "repls_held", "messages",
				      "REPLs from store-buffer heads that waited for room in the SRAM buffer (back-pressure)");
	l->c_nacks = cxs_stats_counter(st, "lu", "repls_nacked", "messages",
				       "early REPLs (sent before their group reached the store-buffer head) refused for lack of room: asked again at the head");
	l->c_spills = cxs_stats_counter(st, "lu", "repls_spilled", "messages",
					"REPLs taken past the SRAM buffer into the CN's DRAM after waiting diktamo.spill_after");
	l->c_rounds = cxs_stats_counter(st, "lu", "dump_rounds", "rounds", "dump rounds taken part in");
	l->c_chunks = cxs_stats_counter(st, "lu", "dump_chunks", "chunks",
					"compressed log chunks sent to MNs");
	l->c_chunk_bytes = cxs_stats_counter(st, "lu", "dump_sent_bytes", "bytes",
					     "compressed log bytes sent to MNs");
	cxs_nport_on_type(port, CXS_MSG_REPL, dk_logger_on_repl, l);
	cxs_nport_on_type(port, CXS_MSG_VAL, dk_logger_on_val, l);
	cxs_nport_on_type(port, CXS_MSG_LOG_SYNC, dk_logger_on_sync, l);
	if (w->check)
		cxs_dk_check_logger(w->check, l->node, l->lu);
	return l;
}

void cxs_dk_logger_free(struct cxs_dk_logger *l)
{
	if (!l)
		return;
	cxs_lu_free(l->lu);
	free(l->q);
	free(l);
}

struct cxs_lu *cxs_dk_logger_lu(struct cxs_dk_logger *l)
{
	return l->lu;
}

void cxs_dk_logger_cn_failed(struct cxs_dk_logger *l, uint32_t cn)
{
	l->nlive = dk_live_remove(l->live, l->nlive, cn);
	l->save_all = true;
	/* Its REPLs that were never VALed (nor can be), and those still held for room. */
	cxs_lu_forget(l->lu, cn);
	uint32_t kept = 0;
	for (uint32_t i = 0; i < l->qn; i++) {
		struct held h = l->q[(l->qhead + i) % l->qcap];
		if (h.m.requester >> 8 != cn)
			l->q[(l->qhead + kept++) % l->qcap] = h;
	}
	l->qn = kept;
	/* Words they held back may move now. */
	arm_drain(l, 0);
}
