/*
 * keeper.c — an MN's part in DIKTAMO's log processing (papers/diktamo.md
 * §IV-E): it keeps the compressed log chunks the Logging Units dump to it —
 * their real bytes, which recovery decompresses and searches (log_store.c) —
 * and the first MN's keeper coordinates the dump rounds.
 *
 * A round (the paper: "the Logging Units synchronize through the controllers
 * in the MNs, save their compressed logs in 64-byte messages to the MNs,
 * synchronize again, and clear the logs"):
 *
 *   coordinator ── BEGIN(r) ──► every live CN's Logging Unit
 *   each unit dumps its share, chunk by chunk to the lines' home MNs,
 *   then ── DONE(r, logged since the last round?) ──► coordinator
 *   all DONE ──► END(r) to every unit; the next round at the next multiple
 *   of diktamo.dump_period, or at once for an early flush that a unit past
 *   its high watermark asked for meanwhile.
 *
 * Rounds run only while something is logged: a round in which no unit logged
 * anything ends with END(idle), the coordinator stops its timer, and the
 * first REPL any unit logs after that wakes it (ACTIVE). So a finished
 * workload's run ends instead of ticking dump rounds to the end time, and the
 * round times stay the multiples of the period. A CN that fails is no longer
 * waited for.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dk_priv.h"

enum { T_ROUND = 1 };
enum { C_IDLE = 0, C_ARMED, C_RUNNING };

struct cxs_dk_keeper {
	const struct cxs_dk_world *w;
	struct cxs_nport *port;
	struct cxs_lp *lp;
	uint32_t node;
	uint32_t ev;
	struct cxs_dk_store *store;
	/* the coordinator's */
	bool coordinator;
	uint8_t state;
	bool early, logged;
	uint32_t round;
	uint64_t live, waiting;     /* CN bits */
	uint64_t *c_chunks, *c_bytes, *c_raw, *c_entries, *c_rounds, *c_early;
};

static void to_units(struct cxs_dk_keeper *k, cxs_time now, uint8_t kind, uint8_t flag)
{
	struct dk_sync m = {.kind = kind, .flag = flag, .round = k->round};
	for (uint32_t c = 0; c < k->w->cns; c++)
		if (k->live >> c & 1)
			cxs_nport_send(k->port, now, k->w->ev_msg, c, CXS_MSG_LOG_SYNC, &m, sizeof m, 0);
}

static void arm(struct cxs_dk_keeper *k, cxs_time now)
{
	cxs_time p = k->w->p->dump_period;
	cxs_time next = (now / p + 1) * p;
	uint32_t kind = T_ROUND;
	k->state = C_ARMED;
	cxs_schedule(k->lp, next - now, k->ev, &kind, sizeof kind);
}

static void begin(struct cxs_dk_keeper *k, cxs_time now)
{
	k->round++;
	k->state = C_RUNNING;
	k->early = false;
	k->logged = false;
	k->waiting = k->live;
	++*k->c_rounds;
	to_units(k, now, DK_SYNC_BEGIN, 0);
	if (!k->waiting)
		k->state = C_IDLE;
}

static void round_over(struct cxs_dk_keeper *k, cxs_time now)
{
	bool idle = !k->logged && !k->early;
	to_units(k, now, DK_SYNC_END, idle);
	if (k->early)
		begin(k, now);
	else if (!idle)
		arm(k, now);
	else
		k->state = C_IDLE;
}

void dk_keeper_on_sync(void *ctx, cxs_time now, const struct cxs_envelope *env, const void *body,
		       uint32_t len)
{
	struct cxs_dk_keeper *k = ctx;
	const struct dk_sync *m = body;
	(void)len;
	if (!k->coordinator)
		cxs_bug(k->lp, "diktamo: MN %u is not the dump coordinator", k->node);
	switch (m->kind) {
	case DK_SYNC_ACTIVE:
		if (k->state == C_IDLE)
			arm(k, now);
		return;
	case DK_SYNC_EARLY:
		++*k->c_early;
		if (k->state == C_RUNNING)
			k->early = true; /* another round right after this one */
		else
			begin(k, now); /* its timer, if armed, finds a round running and waits */
		return;
	case DK_SYNC_DONE:
		if (k->state != C_RUNNING || m->round != k->round || !(k->waiting >> env->src & 1))
			cxs_bug(k->lp, "diktamo: DONE of round %u from node %u out of turn", m->round,
				env->src);
		k->logged |= m->flag;
		k->waiting &= ~(UINT64_C(1) << env->src);
		if (!k->waiting)
			round_over(k, now);
		return;
	default:
		cxs_bug(k->lp, "diktamo: the coordinator got sync message %u", m->kind);
	}
}

void cxs_dk_keeper_event(struct cxs_dk_keeper *k, const struct cxs_event *ev)
{
	uint32_t kind;
	memcpy(&kind, ev->data, sizeof kind);
	if (kind != T_ROUND)
		cxs_bug(k->lp, "diktamo: keeper event %u", kind);
	if (k->state == C_ARMED)
		begin(k, ev->time);
}

void dk_keeper_on_dump(void *ctx, cxs_time now, const struct cxs_envelope *env, const void *body,
		       uint32_t len)
{
	struct cxs_dk_keeper *k = ctx;
	const struct dk_dump *d = body;
	(void)now;
	if (len < sizeof *d || len - sizeof *d < d->len)
		cxs_bug(k->lp, "diktamo: malformed log dump of %u bytes from node %u", len, env->src);
	if (cxs_dk_store_add(k->store, d->from, d->bytes, d->len, d->raw_len) != 0)
		cxs_bug(k->lp, "diktamo: out of memory keeping a log dump");
	++*k->c_chunks;
	*k->c_bytes += d->len;
	*k->c_raw += d->raw_len;
	*k->c_entries += d->nentries;
}

struct cxs_dk_keeper *cxs_dk_keeper_new(const struct cxs_dk_world *w, struct cxs_nport *port,
					uint32_t ev, struct cxs_stats *st)
{
	struct cxs_dk_keeper *k = calloc(1, sizeof *k);
	if (!k || !(k->store = cxs_dk_store_new())) {
		free(k);
		return NULL;
	}
	k->w = w;
	k->port = port;
	k->lp = port->lp;
	k->node = cxs_lp_id(port->lp);
	k->ev = ev;
	k->coordinator = k->node == w->first_mn;
	k->live = w->cns >= 64 ? UINT64_MAX : (UINT64_C(1) << w->cns) - 1;
	k->c_chunks = cxs_stats_counter(st, "keeper", "dump_chunks", "chunks",
					"compressed log chunks received from Logging Units");
	k->c_bytes = cxs_stats_counter(st, "keeper", "dump_bytes", "bytes",
				       "compressed log bytes received and kept (sample it for the dump bandwidth, Fig. 14)");
	k->c_raw = cxs_stats_counter(st, "keeper", "dump_raw_bytes", "bytes",
				     "the same logs before compression");
	k->c_entries = cxs_stats_counter(st, "keeper", "dump_entries", "entries",
					 "log entries received");
	k->c_rounds = cxs_stats_counter(st, "keeper", "rounds", "rounds",
					"dump rounds coordinated (the first MN only)");
	k->c_early = cxs_stats_counter(st, "keeper", "early_flushes", "requests",
				       "early flushes Logging Units asked for (the first MN only)");
	cxs_nport_on_type(port, CXS_MSG_LOG_DUMP, dk_keeper_on_dump, k);
	if (k->coordinator)
		cxs_nport_on_type(port, CXS_MSG_LOG_SYNC, dk_keeper_on_sync, k);
	if (w->check)
		cxs_dk_check_keeper(w->check, k->node - w->first_mn, k->store);
	return k;
}

void cxs_dk_keeper_free(struct cxs_dk_keeper *k)
{
	if (!k)
		return;
	cxs_dk_store_free(k->store);
	free(k);
}

struct cxs_dk_store *cxs_dk_keeper_store(struct cxs_dk_keeper *k)
{
	return k->store;
}

void cxs_dk_keeper_cn_failed(struct cxs_dk_keeper *k, uint32_t cn)
{
	uint64_t bit = UINT64_C(1) << cn;
	k->live &= ~bit;
	if (k->coordinator && k->state == C_RUNNING && (k->waiting & bit)) {
		k->waiting &= ~bit;
		if (!k->waiting)
			round_over(k, cxs_now(k->lp));
	}
}
