/*
 * home.c — the home directory of a memory node (protocol in coherence.h).
 *
 * Per line: a stable state (I, S with a sharer vector, EM with an owner), a
 * grant epoch, and at most one transaction in progress (busy INV: waiting for
 * acknowledgements before granting M; busy RECALL: waiting for the owner's
 * data or write-back). Requests that find the line busy wait in a FIFO of the
 * line and are served, in arrival order, as soon as the transaction ends.
 *
 * Timing: every message costs a directory lookup (dir_latency); a grant that
 * needs memory data waits for a DRAM read of the line, started together with
 * the invalidations when there are any; an upgrade by a CN that still holds
 * S reads nothing; a write-back is a DRAM write that does not delay anything. Outputs to each CN leave in processing
 * order (out_clock per destination), which keeps a grant ahead of any later
 * recall of the line; outputs to other CNs are not held behind it (one clock
 * for all held ~13 % of messages ~10 ns behind unrelated DRAM reads).
 *
 * Memory contents are kept per line in a sparse map (zeros until written):
 * they are the real bytes the workload stored, which is what lets recovery
 * tests compare memory images.
 */
#include "cxlsim/coherence.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *state_name[] = {"I", "S", "EM"};
static const char *busy_name[] = {"idle", "waiting for invalidation acks",
				   "waiting for the owner's data", "waiting for recovery"};

bool cxs_coh_has_data(uint32_t type)
{
	return type == CXS_MSG_DATA_S || type == CXS_MSG_DATA_E || type == CXS_MSG_DATA_M ||
	       type == CXS_MSG_PUTM || type == CXS_MSG_RECALL_DATA || type == CXS_MSG_WT;
}

int cxs_home_init(struct cxs_home *h, uint32_t node, uint32_t ncns, cxs_time dir_latency,
		  const struct cxs_home_env *env, struct cxs_stats *st)
{
	memset(h, 0, sizeof *h);
	h->node = node;
	h->ncns = ncns;
	h->dir_latency = dir_latency;
	h->env = *env;
	if (ncns > CXS_MAX_CNS || cxs_line_map_init(&h->dir, sizeof(struct cxs_home_entry)) != 0)
		return -1;
	if (cxs_line_map_init(&h->mem, CXS_LINE_BYTES) != 0)
		return -1;
	if (!st)
		return 0;
	for (int t = 0; t < CXS_MSG_TYPE_COUNT; t++) {
		const struct cxs_msg_info *mi = cxs_msg_info((enum cxs_msg_type)t);
		if (mi->cls != CXS_CLASS_MEM)
			continue;
		char name[64], desc[96];
		snprintf(name, sizeof name, "rx_%s", mi->name);
		snprintf(desc, sizeof desc, "%s messages handled by the home directory", mi->name);
		h->c_msgs_in[t] = cxs_stats_counter(st, "home", name, "messages", desc);
	}
	h->c_queued = cxs_stats_counter(st, "home", "queued", "requests",
					"requests that waited for another transaction on their line");
	h->c_dram_reads = cxs_stats_counter(st, "home", "dram_reads", "lines",
					    "memory reads for grants");
	h->c_dram_writes = cxs_stats_counter(st, "home", "dram_writes", "lines",
					     "memory writes of dirty data (write-backs, recalls)");
	h->c_invs_sent = cxs_stats_counter(st, "home", "invs_sent", "messages",
					   "invalidations sent to sharers");
	h->c_recalls = cxs_stats_counter(st, "home", "recalls", "messages",
					 "recalls sent to owners");
	h->h_service_ps = cxs_stats_hist(st, "home", "service_ps", "ps",
					 "request arrival to grant sent", 40);
	return 0;
}

void cxs_home_free(struct cxs_home *h)
{
	/* Queues belong to entries; the map has no iteration, so track them here. */
	for (size_t i = 0; i < h->dir.n; i++) {
		struct cxs_home_entry *e = cxs_line_map_at(&h->dir, i);
		free(e->q);
	}
	cxs_line_map_free(&h->dir);
	cxs_line_map_free(&h->mem);
	free(h->busy_lines);
	memset(h, 0, sizeof *h);
}

#define BUMP(p) do { if (p) (*(p))++; } while (0)

static void emit(struct cxs_home *h, cxs_time when, uint32_t type, uint32_t dst, uint64_t line,
		 uint32_t epoch)
{
	if (when < h->out_clock[dst])
		when = h->out_clock[dst];
	h->out_clock[dst] = when;
	struct cxs_coh_msg m = {.line = line, .type = type, .src = h->node, .dst = dst,
				.epoch = epoch};
	if (cxs_coh_has_data(type))
		cxs_home_read(h, line, m.data);
	h->env.send(h->env.ctx, when, &m);
}

void cxs_home_read(const struct cxs_home *h, uint64_t line, uint8_t out[CXS_LINE_BYTES])
{
	const uint8_t *d = cxs_line_map_find(&h->mem, line);
	if (d)
		memcpy(out, d, CXS_LINE_BYTES);
	else if (h->env.init_line)
		h->env.init_line(h->env.ctx, line, out);
	else
		memset(out, 0, CXS_LINE_BYTES);
}

static int write_mem(struct cxs_home *h, cxs_time t, uint64_t line, const uint8_t *data)
{
	uint8_t *d = cxs_line_map_get(&h->mem, line, NULL);
	if (!d)
		return -1;
	memcpy(d, data, CXS_LINE_BYTES);
	h->env.dram(h->env.ctx, t, line, 1);
	BUMP(h->c_dram_writes);
	return 0;
}

static void set_busy(struct cxs_home *h, struct cxs_home_entry *e, uint64_t line, uint8_t busy,
		     cxs_time t)
{
	if (e->busy == CXS_HB_NONE && busy != CXS_HB_NONE) {
		if (h->nbusy == h->cap_busy) {
			size_t cap = h->cap_busy ? 2 * h->cap_busy : 64;
			uint64_t *b = realloc(h->busy_lines, cap * sizeof *b);
			if (!b)
				abort();
			h->busy_lines = b;
			h->cap_busy = cap;
		}
		h->busy_lines[h->nbusy++] = line;
		e->busy_since = t;
	} else if (e->busy != CXS_HB_NONE && busy == CXS_HB_NONE) {
		for (size_t i = 0; i < h->nbusy; i++)
			if (h->busy_lines[i] == line) {
				h->busy_lines[i] = h->busy_lines[--h->nbusy];
				break;
			}
	}
	e->busy = busy;
}

/* A grant with memory data: DRAM read first. */
static void grant(struct cxs_home *h, struct cxs_home_entry *e, cxs_time t, uint32_t type,
		  uint32_t dst, uint64_t line, cxs_time arrived, bool read_dram)
{
	cxs_time when = t;
	if (read_dram) {
		when = h->env.dram(h->env.ctx, t, line, 0);
		BUMP(h->c_dram_reads);
	}
	uint32_t epoch = 0;
	if (type == CXS_MSG_DATA_E || type == CXS_MSG_DATA_M)
		epoch = ++e->epoch;
	emit(h, when, type, dst, line, epoch);
	if (h->h_service_ps)
		cxs_hist_add(h->h_service_ps, h->out_clock[dst] - arrived); /* out_clock: sent at */
}

static int serve(struct cxs_home *h, struct cxs_home_entry *e, uint64_t line, cxs_time t,
		 uint32_t type, uint32_t c, cxs_time arrived, char *err, size_t errlen)
{
	uint64_t cbit = UINT64_C(1) << c;
	if (e->state == CXS_D_EM && e->owner == c) {
		snprintf(err, errlen, "home %u line %#" PRIx64 ": %s from node %u, which owns it",
			 h->node, line, cxs_msg_info(type)->name, c);
		return -1;
	}
	if (type == CXS_MSG_GETS) {
		switch (e->state) {
		case CXS_D_I:
			e->state = CXS_D_EM;
			e->owner = c;
			grant(h, e, t, CXS_MSG_DATA_E, c, line, arrived, true);
			return 0;
		case CXS_D_S:
			e->sharers |= cbit;
			grant(h, e, t, CXS_MSG_DATA_S, c, line, arrived, true);
			return 0;
		default:
			break;
		}
		e->req_type = type;
		e->req_src = c;
		e->req_arrived = arrived;
		set_busy(h, e, line, CXS_HB_RECALL, t);
		emit(h, t, CXS_MSG_RECALL_S, e->owner, line, 0);
		BUMP(h->c_recalls);
		return 0;
	}
	/* GETM */
	switch (e->state) {
	case CXS_D_I:
		e->state = CXS_D_EM;
		e->owner = c;
		grant(h, e, t, CXS_MSG_DATA_M, c, line, arrived, true);
		return 0;
	case CXS_D_S: {
		uint64_t others = e->sharers & ~cbit;
		/*
		 * An upgrade by a CN that still holds S needs no memory read: the data
		 * travels with DATA_M for the protocol's sake, but its timing is that
		 * of an ownership grant. (A CN that dropped its S copy silently and is
		 * asking again is still listed; it is charged no read either: rare.)
		 */
		bool needs_read = !(e->sharers & cbit);
		if (!others) {
			e->state = CXS_D_EM;
			e->owner = c;
			e->sharers = 0;
			grant(h, e, t, CXS_MSG_DATA_M, c, line, arrived, needs_read);
			return 0;
		}
		/* The read, if any, overlaps the invalidation round. */
		e->data_ready = t;
		if (needs_read) {
			e->data_ready = h->env.dram(h->env.ctx, t, line, 0);
			BUMP(h->c_dram_reads);
		}
		e->req_type = type;
		e->req_src = c;
		e->req_arrived = arrived;
		e->acks_left = 0;
		/* While collecting, `sharers` holds the CNs whose ack is still due. */
		e->sharers = others;
		set_busy(h, e, line, CXS_HB_INV, t);
		for (uint32_t s = 0; s < h->ncns; s++)
			if (others >> s & 1) {
				emit(h, t, CXS_MSG_INV, s, line, 0);
				e->acks_left++;
				BUMP(h->c_invs_sent);
			}
		return 0;
	}
	default:
		e->req_type = type;
		e->req_src = c;
		e->req_arrived = arrived;
		set_busy(h, e, line, CXS_HB_RECALL, t);
		emit(h, t, CXS_MSG_RECALL_I, e->owner, line, 0);
		BUMP(h->c_recalls);
		return 0;
	}
}

/* Serves waiting requests until one makes the line busy again. */
static int drain(struct cxs_home *h, struct cxs_home_entry *e, uint64_t line, cxs_time t,
		 char *err, size_t errlen)
{
	while (e->busy == CXS_HB_NONE && e->qn > 0) {
		struct cxs_home_req r = e->q[e->qhead];
		e->qhead = (e->qhead + 1) % e->qcap;
		e->qn--;
		if (serve(h, e, line, t, r.type, r.src, r.arrived, err, errlen) != 0)
			return -1;
	}
	return 0;
}

static int enqueue(struct cxs_home_entry *e, uint32_t type, uint32_t src, cxs_time t)
{
	if (e->qn == e->qcap) {
		uint32_t cap = e->qcap ? 2 * e->qcap : 4;
		struct cxs_home_req *q = malloc(cap * sizeof *q);
		if (!q)
			return -1;
		for (uint32_t i = 0; i < e->qn; i++)
			q[i] = e->q[(e->qhead + i) % e->qcap];
		free(e->q);
		e->q = q;
		e->qhead = 0;
		e->qcap = cap;
	}
	e->q[(e->qhead + e->qn) % e->qcap] = (struct cxs_home_req){type, src, t};
	e->qn++;
	return 0;
}

/* The recalled owner answered (with data, a write-back, or a clean write-back). */
static int finish_recall(struct cxs_home *h, struct cxs_home_entry *e, uint64_t line,
			 cxs_time t, bool owner_keeps_s, char *err, size_t errlen)
{
	uint32_t owner = e->owner, c = e->req_src;
	set_busy(h, e, line, CXS_HB_NONE, t);
	if (e->req_dead) {
		/* Nobody to grant to: the line keeps only what the recalled owner keeps. */
		e->req_dead = 0;
		e->state = owner_keeps_s ? CXS_D_S : CXS_D_I;
		e->sharers = owner_keeps_s ? UINT64_C(1) << owner : 0;
		return drain(h, e, line, t, err, errlen);
	}
	if (e->req_type == CXS_MSG_GETS) {
		e->state = CXS_D_S;
		e->sharers = (UINT64_C(1) << c) | (owner_keeps_s ? UINT64_C(1) << owner : 0);
		grant(h, e, t, CXS_MSG_DATA_S, c, line, e->req_arrived, false);
	} else {
		e->state = CXS_D_EM;
		e->owner = c;
		e->sharers = 0;
		grant(h, e, t, CXS_MSG_DATA_M, c, line, e->req_arrived, false);
	}
	return drain(h, e, line, t, err, errlen);
}

/* The last acknowledgement of an upgrade's invalidations is in: grant M. */
static int finish_invs(struct cxs_home *h, struct cxs_home_entry *e, cxs_time t, char *err,
		       size_t errlen)
{
	uint32_t c = e->req_src;
	set_busy(h, e, e->line, CXS_HB_NONE, t);
	e->sharers = 0;
	if (e->req_dead) {
		/* The requester failed: every copy is gone, nobody gets the line. */
		e->req_dead = 0;
		e->state = CXS_D_I;
		return drain(h, e, e->line, t, err, errlen);
	}
	e->state = CXS_D_EM;
	e->owner = c;
	grant(h, e, t > e->data_ready ? t : e->data_ready, CXS_MSG_DATA_M, c, e->line,
	      e->req_arrived, false);
	return drain(h, e, e->line, t, err, errlen);
}

int cxs_home_handle(struct cxs_home *h, cxs_time now, const struct cxs_coh_msg *m, char *err,
		    size_t errlen)
{
	cxs_time t = now + h->dir_latency;
	if (m->type < CXS_MSG_TYPE_COUNT)
		BUMP(h->c_msgs_in[m->type]);
	if (m->src >= h->ncns) {
		snprintf(err, errlen, "home %u: message from node %u, which is not a CN", h->node,
			 m->src);
		return -1;
	}
	if (h->dead >> m->src & 1) {
		/* Sent by a CN before it failed, arrived after the home dealt with that. */
		h->dropped_from_dead++;
		return 0;
	}
	int created = 0;
	struct cxs_home_entry *e = cxs_line_map_get(&h->dir, m->line, &created);
	if (!e) {
		snprintf(err, errlen, "home %u: out of memory", h->node);
		return -1;
	}
	if (created)
		e->line = m->line;
	switch (m->type) {
	case CXS_MSG_GETS:
	case CXS_MSG_GETM:
		if (e->busy != CXS_HB_NONE || e->qn > 0) {
			BUMP(h->c_queued);
			if (enqueue(e, m->type, m->src, now) != 0) {
				snprintf(err, errlen, "home %u: out of memory", h->node);
				return -1;
			}
			return 0;
		}
		return serve(h, e, m->line, t, m->type, m->src, now, err, errlen);
	case CXS_MSG_PUTM:
	case CXS_MSG_PUTE:
		if (e->state != CXS_D_EM || e->owner != m->src)
			break;
		if (m->type == CXS_MSG_PUTM && write_mem(h, t, m->line, m->data) != 0)
			break;
		emit(h, t, CXS_MSG_PUT_ACK, m->src, m->line, 0);
		if (e->busy == CXS_HB_RECALL)
			/* The write-back crossed our recall: it is the answer. */
			return finish_recall(h, e, m->line, t, false, err, errlen);
		e->state = CXS_D_I;
		return 0;
	case CXS_MSG_INV_ACK:
		/* Only from a CN we invalidated and have not heard from yet. */
		if (e->busy != CXS_HB_INV || e->acks_left == 0 || !(e->sharers >> m->src & 1))
			break;
		e->sharers &= ~(UINT64_C(1) << m->src);
		if (--e->acks_left == 0)
			return finish_invs(h, e, t, err, errlen);
		return 0;
	case CXS_MSG_WT: {
		/*
		 * A write-through from the owner of the line: memory takes its
		 * bytes (the CN's copy is the latest), and the ack leaves when the
		 * DRAM write is done — from then on the store survives the CN.
		 * Not a transaction: the directory state does not change.
		 */
		if (e->state != CXS_D_EM || e->owner != m->src)
			break;
		uint8_t *d = cxs_line_map_get(&h->mem, m->line, NULL);
		if (!d) {
			snprintf(err, errlen, "home %u: out of memory", h->node);
			return -1;
		}
		memcpy(d, m->data, CXS_LINE_BYTES);
		BUMP(h->c_dram_writes);
		emit(h, h->env.dram(h->env.ctx, t, m->line, 1), CXS_MSG_WT_ACK, m->src, m->line,
		     m->epoch);
		return 0;
	}
	case CXS_MSG_RECALL_DATA:
		if (e->busy != CXS_HB_RECALL || e->owner != m->src)
			break;
		if (m->dirty && write_mem(h, t, m->line, m->data) != 0)
			break;
		return finish_recall(h, e, m->line, t, e->req_type == CXS_MSG_GETS, err, errlen);
	default:
		break;
	}
	snprintf(err, errlen,
		 "home %u line %#" PRIx64 ": unexpected %s from node %u in state %s (%s, owner %u, "
		 "sharers %#" PRIx64 ")",
		 h->node, m->line, m->type < CXS_MSG_TYPE_COUNT ? cxs_msg_info(m->type)->name : "?",
		 m->src, state_name[e->state], busy_name[e->busy], e->owner, e->sharers);
	return -1;
}

/* Removes the queued requests of CN cn from an entry's FIFO, keeping the others' order. */
static void drop_queued(struct cxs_home_entry *e, uint32_t cn)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < e->qn; i++) {
		struct cxs_home_req r = e->q[(e->qhead + i) % e->qcap];
		if (r.src != cn)
			e->q[(e->qhead + k++) % e->qcap] = r;
	}
	e->qn = k;
}

int cxs_home_cn_failed(struct cxs_home *h, cxs_time now, uint32_t cn,
		       void (*owned)(void *ctx, uint64_t line), void *ctx, char *err,
		       size_t errlen)
{
	cxs_time t = now + h->dir_latency;
	if (cn >= h->ncns) {
		snprintf(err, errlen, "home %u: failure of node %u, which is not a CN", h->node, cn);
		return -1;
	}
	uint64_t bit = UINT64_C(1) << cn; /* cn < ncns <= 64 */
	h->dead |= bit;
	for (size_t i = 0; i < h->dir.n; i++) {
		struct cxs_home_entry *e = cxs_line_map_at(&h->dir, i);
		drop_queued(e, cn);
		switch (e->busy) {
		case CXS_HB_NONE:
			if (e->state == CXS_D_S) {
				e->sharers &= ~bit;
				if (!e->sharers)
					e->state = CXS_D_I;
			} else if (e->state == CXS_D_EM && e->owner == cn) {
				owned(ctx, e->line);
				e->state = CXS_D_I;
				if (h->recover_owned)
					set_busy(h, e, e->line, CXS_HB_RECOVER, t);
			}
			break;
		case CXS_HB_INV:
			/* `sharers` holds the CNs whose ack is still due (serve()). */
			if (e->req_src == cn)
				e->req_dead = 1;
			if (e->sharers & bit) {
				e->sharers &= ~bit;
				if (--e->acks_left == 0 && finish_invs(h, e, t, err, errlen) != 0)
					return -1;
			}
			break;
		case CXS_HB_RECALL:
			if (e->req_src == cn)
				e->req_dead = 1;
			if (e->owner == cn && h->recover_owned) {
				/* It will never answer: the requester waits for recovery. */
				owned(ctx, e->line);
				e->recover = 1;
			} else if (e->owner == cn) {
				/*
				 * It will never answer: its copy, whatever it held, is
				 * lost; the requester gets memory's value, read now.
				 */
				owned(ctx, e->line);
				BUMP(h->c_dram_reads);
				cxs_time ready = h->env.dram(h->env.ctx, t, e->line, 0);
				if (finish_recall(h, e, e->line, ready, false, err, errlen) != 0)
					return -1;
			}
			break;
		case CXS_HB_RECOVER:
			break; /* still waiting for an earlier failure's recovery */
		}
		/* A line left idle with requests waiting (its transaction was the dead CN's). */
		if (e->busy == CXS_HB_NONE && e->qn > 0 && drain(h, e, e->line, t, err, errlen) != 0)
			return -1;
	}
	return 0;
}

int cxs_home_recovered(struct cxs_home *h, cxs_time now, uint64_t line,
		       const uint8_t data[CXS_LINE_BYTES], uint8_t mask, cxs_time *done, char *err,
		       size_t errlen)
{
	struct cxs_home_entry *e = cxs_line_map_find(&h->dir, line);
	if (!e || !(e->busy == CXS_HB_RECOVER || (e->busy == CXS_HB_RECALL && e->recover))) {
		snprintf(err, errlen, "home %u: recovery of line %#" PRIx64 ", which does not wait "
			 "for it", h->node, line);
		return -1;
	}
	uint8_t cur[CXS_LINE_BYTES];
	cxs_home_read(h, line, cur);
	for (uint32_t w = 0; w < CXS_LINE_BYTES / 8; w++)
		if (mask >> w & 1)
			memcpy(cur + 8 * w, data + 8 * w, 8);
	uint8_t *d = cxs_line_map_get(&h->mem, line, NULL);
	if (!d) {
		snprintf(err, errlen, "home %u: out of memory", h->node);
		return -1;
	}
	memcpy(d, cur, CXS_LINE_BYTES);
	BUMP(h->c_dram_writes);
	*done = h->env.dram(h->env.ctx, now, line, 1);
	if (e->busy == CXS_HB_RECOVER) {
		set_busy(h, e, line, CXS_HB_NONE, now);
		return drain(h, e, line, now, err, errlen);
	}
	e->recover = 0;
	BUMP(h->c_dram_reads);
	cxs_time ready = h->env.dram(h->env.ctx, now, line, 0);
	return finish_recall(h, e, line, ready, false, err, errlen);
}

size_t cxs_home_entries(const struct cxs_home *h)
{
	return h->dir.n;
}

const struct cxs_home_entry *cxs_home_entry(const struct cxs_home *h, uint64_t line)
{
	return cxs_line_map_find(&h->dir, line);
}

int cxs_home_stuck(const struct cxs_home *h, cxs_time now, cxs_time timeout, char *buf,
		   size_t len)
{
	return cxs_home_stuck_on(h, now, timeout, buf, len, NULL);
}

int cxs_home_stuck_on(const struct cxs_home *h, cxs_time now, cxs_time timeout, char *buf,
		      size_t len, uint32_t *awaited)
{
	const struct cxs_home_entry *worst = NULL;
	uint64_t wline = 0;
	for (size_t i = 0; i < h->nbusy; i++) {
		const struct cxs_home_entry *e = cxs_line_map_find(&h->dir, h->busy_lines[i]);
		/* busy_since may lie ahead of now (it includes the lookup). */
		if (!e || now < e->busy_since || now - e->busy_since < timeout)
			continue;
		/* Waiting for recovery is the recovery protocol's to time (it has its own watch). */
		if (e->busy == CXS_HB_RECOVER || (e->busy == CXS_HB_RECALL && e->recover))
			continue;
		if (!worst || e->busy_since < worst->busy_since ||
		    (e->busy_since == worst->busy_since && h->busy_lines[i] < wline)) {
			worst = e;
			wline = h->busy_lines[i];
		}
	}
	if (!worst)
		return 0;
	if (awaited) {
		/* The first CN whose ack is due (INV), or the recalled owner. */
		*awaited = UINT32_MAX;
		if (worst->busy == CXS_HB_RECALL)
			*awaited = worst->owner;
		for (uint32_t c = 0; worst->busy == CXS_HB_INV && c < h->ncns; c++)
			if (worst->sharers >> c & 1) {
				*awaited = c;
				break;
			}
	}
	snprintf(buf, len,
		 "home %u line %#" PRIx64 " (address %#" PRIx64 "): no progress for %" PRIu64
		 " ps: state %s, %s (%u acks missing), serving %s from node %u, owner %u, sharers "
		 "%#" PRIx64 ", %u requests waiting",
		 h->node, wline, wline << CXS_LINE_SHIFT, now - worst->busy_since,
		 state_name[worst->state], busy_name[worst->busy], worst->acks_left,
		 cxs_msg_info(worst->req_type)->name, worst->req_src, worst->owner, worst->sharers,
		 worst->qn);
	return 1;
}
