/*
 * engine.c — conservative windows, the model API, failures and output.
 *
 * Synchronisation (YAWNS-style windows with per-rank bounds). Each window:
 *
 *   1. handle every local event below this rank's bound;
 *   2. send each other rank one batch with the events created for its nodes;
 *   3. all-reduce (reduce.c) each rank's heap minimum, the earliest event sent
 *      to each rank, and who sent batches to whom;
 *   4. receive exactly the batches the bitmap announces.
 *
 * With eff[s] = min(heap minimum of s, earliest event sent to s), rank r's
 * next bound is
 *
 *     min( min over s != r of eff[s] + L,  eff[r] + 2L )
 *
 * Nothing another rank holds can create an event for r earlier than
 * eff[s] + L; r's own events can come back to it only through another rank,
 * a round trip of at least 2L. (Leaving eff[r] out altogether is wrong: the
 * uneven-mapping determinism test caught exactly that reply arriving below
 * the bound.) Messages from r to s created in the window land at or after
 * eff[r] + L >= s's bound, so they wait for the exchange. Against a global
 * bound min_s eff[s] + L, the rank that holds the minimum runs up to one more
 * lookahead of its own events per window. Messages in flight are accounted for by the sent-minimum
 * and the bitmap, both part of the same reduction. The run ends when every
 * eff is at or past the end time.
 *
 * Determinism. Event order is the key (time, src, seq) (engine.h), bounds only
 * decide *when* an event is handled, never in which order, so any mapping of
 * nodes to ranks gives the same per-node event sequences. The run checksum
 * folds, in node-id order, each node's hash chain over its handled events,
 * its event count, its model snapshot and the digest of its counters.
 *
 * Injected kills (--kill NODE@TIME). Every rank caps its bound at TIME while
 * the kill is pending, so no rank handles an event at or past TIME before the
 * failure is agreed. When a reduction shows every eff >= TIME, the rank of
 * NODE waits for its last batches to leave and SIGKILLs itself: this is "the
 * first window boundary at or after TIME". The survivors stall in the next
 * reduction, detect the silence (comm.c), agree (membership.c) and get a
 * failure notice at TIME exactly. The cap is lifted after the first reduction
 * of the new epoch. Because the dead node handled exactly its events below
 * TIME and sent exactly their messages, the survivors' results do not depend
 * on the rank count or on wall-clock timing, as long as the killed node is
 * alone on its rank (otherwise its rank-mates die with it).
 *
 * External kills (kill -9 at any moment). The agreement picks w_star, the
 * highest window whose reduction some survivor completed, and hands its result
 * to those that had not, so all survivors compute the same bounds; the failure
 * notice is delivered at the largest of those bounds (no survivor has handled
 * anything past it). A dead rank's batch is kept by its one destination if it
 * arrives, else dropped (counted as lost_batches): each of its messages is
 * treated one way by everyone, because only its destination ever sees it.
 *
 * Output. At the end every live rank sends its nodes' counters and its engine
 * figures to the writer (the lowest live rank), which builds the run record,
 * calls the caller's output function, and releases the others. If the writer
 * dies meanwhile, the survivors agree and the next lowest rank writes.
 */
#include "engine_priv.h"
#include "membership_priv.h"

#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cxlsim/h5out.h"

#define EV_FAILURE_NOTICE UINT32_MAX
#define SERVICE_EVERY_EVENTS 1024u
#define SERVICE_INTERVAL_S 0.01

static struct recv_set *recv_set_new(int cap);
static void recv_set_free(struct recv_set *s);

int cxs_log_level = CXS_LOG_WARN;
static struct cxs_engine *g_eng; /* for log lines and bug reports */

/* ---- logging and errors ------------------------------------------------ */

void cxs_log_at(enum cxs_log_level lvl, cxs_time t, const char *fmt, ...)
{
	static const char *names[] = {"error", "warn", "info", "debug"};
	va_list ap;
	int rank = g_eng ? g_eng->rank : -1;
	fprintf(stderr, "[rank %d t=%llu ps] %s: ", rank, (unsigned long long)t,
		names[lvl < 4 ? lvl : 3]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

_Noreturn void cxs_bug_at(const struct cxs_lp *lp, const char *file, int line, const char *fmt,
			  ...)
{
	va_list ap;
	int rank = g_eng ? g_eng->rank : -1;
	cxs_time t = g_eng ? g_eng->now : 0;
	fprintf(stderr, "[rank %d t=%llu ps] BUG at %s:%d", rank, (unsigned long long)t, file,
		line);
	if (lp)
		fprintf(stderr, " (node %u)", lp->id);
	fputs(": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, 70);
	abort();
}

void cxs_lp_fail(struct cxs_lp *lp, int code, const char *fmt, ...)
{
	struct cxs_engine *e = lp->eng;
	if (e->abort_code)
		return; /* the first error is the one reported */
	e->abort_code = code > 0 ? code : 1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->abort_msg, sizeof e->abort_msg, fmt, ap);
	va_end(ap);
	cxs_log(CXS_LOG_ERROR, e->now, "node %u: %s", lp->id, e->abort_msg);
}

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);
	if (!p)
		cxs_bug(NULL, "out of memory (%zu x %zu bytes)", n, sz);
	return p;
}

/* ---- random streams (xoshiro256**, seeded by splitmix64) -------------- */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t cxs_rand_u64(struct cxs_lp *lp)
{
	uint64_t *s = lp->rng;
	uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return r;
}

double cxs_rand_unif(struct cxs_lp *lp)
{
	return (double)(cxs_rand_u64(lp) >> 11) * 0x1.0p-53;
}

double cxs_rand_exp(struct cxs_lp *lp, double mean)
{
	return -mean * log1p(-cxs_rand_unif(lp));
}

/* ---- hashing ------------------------------------------------------------ */

static inline uint64_t mix64(uint64_t h, uint64_t v)
{
	h ^= v + UINT64_C(0x9e3779b97f4a7c15) + (h << 6) + (h >> 2);
	h *= UINT64_C(0xff51afd7ed558ccd);
	return h ^ (h >> 33);
}

/* ---- the model API ------------------------------------------------------ */

cxs_time cxs_now(const struct cxs_lp *lp)
{
	return lp->eng->now;
}
uint32_t cxs_lp_id(const struct cxs_lp *lp)
{
	return lp->id;
}
uint32_t cxs_lp_count(const struct cxs_lp *lp)
{
	return lp->eng->cfg.nnodes;
}
cxs_time cxs_lookahead(const struct cxs_lp *lp)
{
	return lp->eng->cfg.lookahead;
}
cxs_time cxs_end_time(const struct cxs_lp *lp)
{
	return lp->eng->cfg.end_time;
}
struct cxs_stats *cxs_lp_stats(struct cxs_lp *lp)
{
	return lp->stats;
}
bool cxs_node_alive(const struct cxs_lp *lp, uint32_t node)
{
	return node < lp->eng->cfg.nnodes && lp->eng->node_alive[node];
}

/* Wire record of one event in a batch; the payload follows, padded to 8. */
struct wire_ev {
	uint64_t time;
	uint64_t seq;
	uint32_t src;
	uint32_t dst;
	uint32_t type;
	uint32_t size;
};
_Static_assert(sizeof(struct wire_ev) == 32, "batch records have a 32-byte header");

static void batch_append(struct batch_buf *b, const struct wire_ev *w, const void *data)
{
	size_t pay = (w->size + 7u) & ~(size_t)7;
	size_t need = b->len + sizeof *w + pay;
	if (need > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < need)
			cap *= 2;
		unsigned char *d = realloc(b->data, cap);
		if (!d)
			cxs_bug(NULL, "out of memory for a batch of %zu bytes", cap);
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, w, sizeof *w);
	if (w->size)
		memcpy(b->data + b->len + sizeof *w, data, w->size);
	if (pay > w->size)
		memset(b->data + b->len + sizeof *w + w->size, 0, pay - w->size);
	b->len = need;
	b->nevents++;
}

static void enqueue_local(struct cxs_engine *e, cxs_time t, uint64_t seq, uint32_t src,
			  uint32_t dst, uint32_t type, const void *data, uint32_t size)
{
	uint32_t slot;
	struct cxs_event *ev = cxs_eq_alloc(&e->eq, &slot);
	if (!ev)
		cxs_bug(NULL, "out of memory for the event queue");
	ev->time = t;
	ev->seq = seq;
	ev->src = src;
	ev->dst = dst;
	ev->type = type;
	ev->size = size;
	if (size)
		memcpy(ev->data, data, size);
	if (cxs_eq_push(&e->eq, slot) != 0)
		cxs_bug(NULL, "out of memory for the event queue");
}

void cxs_send_at(struct cxs_lp *lp, uint32_t dst, cxs_time delay, uint32_t type,
		 const void *data, uint32_t size, const char *file, int line)
{
	struct cxs_engine *e = lp->eng;
	if (delay < e->cfg.lookahead)
		cxs_bug_at(lp, file, line, "send to node %u with delay %llu ps below lookahead %llu ps",
			   dst, (unsigned long long)delay, (unsigned long long)e->cfg.lookahead);
	if (dst >= e->cfg.nnodes || dst == lp->id)
		cxs_bug_at(lp, file, line, "send to invalid node %u (self or >= %u)", dst,
			   e->cfg.nnodes);
	if (size > CXS_EVENT_PAYLOAD_MAX)
		cxs_bug_at(lp, file, line, "payload of %u bytes exceeds %d", size,
			   CXS_EVENT_PAYLOAD_MAX);
	cxs_time t = e->now + delay;
	if (t < e->now || t >= e->cfg.end_time) {
		(*lp->c_dropped_end)++;
		return;
	}
	if (!e->node_alive[dst]) {
		(*lp->c_dropped_dead)++;
		return;
	}
	uint64_t seq = lp->seq++;
	uint32_t r = e->node_rank[dst];
	(*lp->c_sent)++;
	if (r == (uint32_t)e->rank) {
		enqueue_local(e, t, seq, lp->id, dst, type, data, size);
		return;
	}
	struct wire_ev w = {.time = t, .seq = seq, .src = lp->id, .dst = dst, .type = type,
			    .size = size};
	batch_append(&e->out[r], &w, data);
	uint64_t *sm = red_sentmin(&e->rl, e->contrib);
	if (t < sm[r])
		sm[r] = t;
	e->fig.remote_msgs++;
}

void cxs_schedule(struct cxs_lp *lp, cxs_time delay, uint32_t type, const void *data,
		  uint32_t size)
{
	struct cxs_engine *e = lp->eng;
	if (size > CXS_EVENT_PAYLOAD_MAX)
		cxs_bug(lp, "payload of %u bytes exceeds %d", size, CXS_EVENT_PAYLOAD_MAX);
	cxs_time t = e->now + delay;
	if (t < e->now || t >= e->cfg.end_time) {
		(*lp->c_dropped_end)++;
		return;
	}
	(*lp->c_scheduled)++;
	enqueue_local(e, t, lp->seq++, lp->id, lp->id, type, data, size);
}

/* ---- construction ------------------------------------------------------- */

static uint32_t map_rank(const struct cxs_engine_config *c, uint32_t node, int nranks)
{
	if (c->rank_map)
		return c->rank_map[node];
	if (c->mapping == CXS_MAP_ROUND_ROBIN)
		return node % (uint32_t)nranks;
	return (uint32_t)((uint64_t)node * (uint64_t)nranks / c->nnodes);
}

static int cmp_kill(const void *a, const void *b)
{
	const struct cxs_kill *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

static int validate(const struct cxs_engine_config *c, int nranks, char *err, size_t errlen)
{
	if (c->nnodes == 0)
		return snprintf(err, errlen, "the model has no nodes"), -1;
	if (c->lookahead == 0)
		return snprintf(err, errlen, "engine.lookahead must be > 0"), -1;
	if (c->failure_timeout_s <= 0)
		return snprintf(err, errlen, "engine.failure_timeout must be > 0"), -1;
	if (!c->type_of)
		return snprintf(err, errlen, "no node types"), -1;
	for (uint32_t n = 0; c->rank_map && n < c->nnodes; n++)
		if (c->rank_map[n] >= (uint32_t)nranks)
			return snprintf(err, errlen,
					"engine.map: node %u is mapped to rank %u but the run has %d ranks",
					n, c->rank_map[n], nranks),
			       -1;
	for (size_t k = 0; k < c->nkills; k++) {
		if (c->kills[k].node >= c->nnodes)
			return snprintf(err, errlen, "--kill %u@%llups: node %u does not exist (%u nodes)",
					c->kills[k].node, (unsigned long long)c->kills[k].time,
					c->kills[k].node, c->nnodes),
			       -1;
		if (nranks < 2)
			return snprintf(err, errlen,
					"--kill needs at least 2 ranks: the killed node's rank dies and the others continue"),
			       -1;
	}
	return 0;
}

struct cxs_engine *cxs_engine_new(const struct cxs_engine_config *cfg, char *err, size_t errlen)
{
	int rank, nranks, flag = 0;
	int *tag_ub = NULL;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
	if (!flag || *tag_ub < (6 << TAG_KIND_SHIFT)) {
		snprintf(err, errlen, "this MPI's MPI_TAG_UB (%d) is below the 2^30 cxlsim needs",
			 flag ? *tag_ub : -1);
		return NULL;
	}
	if (validate(cfg, nranks, err, errlen) != 0)
		return NULL;

	struct cxs_engine *e = xcalloc(1, sizeof *e);
	g_eng = e;
	e->cfg = *cfg;
	qsort(e->cfg.kills, e->cfg.nkills, sizeof e->cfg.kills[0], cmp_kill);
	e->kill_pending = e->cfg.nkills ? 0 : -1;
	e->rank = rank;
	e->nranks = nranks;
	uint32_t N = cfg->nnodes;
	e->node_rank = xcalloc(N, sizeof *e->node_rank);
	e->node_local = xcalloc(N, sizeof *e->node_local);
	e->node_alive = xcalloc(N, 1);
	for (uint32_t n = 0; n < N; n++) {
		e->node_rank[n] = map_rank(cfg, n, nranks);
		e->node_alive[n] = 1;
		if (e->node_rank[n] == (uint32_t)rank)
			e->node_local[n] = e->nlocal++;
	}
	e->local_ids = xcalloc(e->nlocal, sizeof *e->local_ids);
	e->lps = xcalloc(e->nlocal, sizeof *e->lps);
	for (uint32_t n = 0, i = 0; n < N; n++) {
		if (e->node_rank[n] != (uint32_t)rank)
			continue;
		e->local_ids[i] = n;
		struct cxs_lp *lp = &e->lps[i++];
		lp->eng = e;
		lp->id = n;
		lp->type = cfg->type_of(n, cfg->type_ctx);
		if (!lp->type)
			cxs_bug(NULL, "node %u has no type", n);
		lp->state = xcalloc(1, lp->type->state_size);
		lp->stats = cxs_stats_new();
		if (!lp->stats)
			cxs_bug(NULL, "out of memory for statistics");
		uint64_t x = cfg->seed ^ (UINT64_C(0x2545f4914f6cdd1d) * (n + 1));
		for (int k = 0; k < 4; k++)
			lp->rng[k] = splitmix64(&x);
		lp->c_events = cxs_stats_counter(lp->stats, "engine", "events", "events",
						 "events handled by this node");
		/* Node counters must not depend on the mapping: the split of sends
		 * between ranks is a per-rank engine figure (remote_msgs), not here. */
		lp->c_sent = cxs_stats_counter(lp->stats, "engine", "sent", "events",
					       "events sent to other nodes");
		lp->c_scheduled = cxs_stats_counter(lp->stats, "engine", "scheduled", "events",
						    "events scheduled for this node itself");
		lp->c_dropped_dead = cxs_stats_counter(lp->stats, "engine", "dropped_dead", "events",
						       "sends to nodes already known dead");
		lp->c_dropped_end = cxs_stats_counter(lp->stats, "engine", "dropped_end", "events",
						      "events not scheduled: at or past the end time");
	}
	cxs_eq_init(&e->eq);
	red_layout_init(&e->rl, (uint32_t)nranks);
	e->contrib = xcalloc(e->rl.total, sizeof(uint64_t));
	e->result = xcalloc(e->rl.total, sizeof(uint64_t));
	e->tmp = xcalloc(e->rl.total, sizeof(uint64_t));
	e->sendbuf = xcalloc(e->rl.total, sizeof(uint64_t));
	e->done_result = xcalloc(e->rl.total, sizeof(uint64_t));
	e->last.dead_bits = xcalloc(e->rl.bitmap_words, sizeof(uint64_t));
	e->last.result = xcalloc(e->rl.total, sizeof(uint64_t));
	e->out = xcalloc((size_t)nranks, sizeof *e->out);
	e->out_reqs = xcalloc((size_t)nranks, sizeof *e->out_reqs);
	e->out_dst = xcalloc((size_t)nranks, sizeof *e->out_dst);
	e->rs = recv_set_new(nranks);
	e->alive = xcalloc((size_t)nranks, 1);
	e->live = xcalloc((size_t)nranks, sizeof *e->live);
	e->last_heard = xcalloc((size_t)nranks, sizeof *e->last_heard);
	for (int r = 0; r < nranks; r++) {
		e->alive[r] = 1;
		e->live[r] = r;
	}
	e->nlive = nranks;
	return e;
}

void cxs_engine_free(struct cxs_engine *e)
{
	if (!e)
		return;
	ctl_release_all();
	for (uint32_t i = 0; i < e->nlocal; i++) {
		free(e->lps[i].state);
		cxs_stats_free(e->lps[i].stats);
	}
	for (int r = 0; r < e->nranks; r++)
		free(e->out[r].data);
	for (size_t i = 0; i < e->nfailbatches; i++)
		free(e->failbatches[i].nodes);
	free(e->failbatches);
	free(e->failures);
	free(e->lps);
	free(e->local_ids);
	free(e->node_rank);
	free(e->node_local);
	free(e->node_alive);
	free(e->contrib);
	free(e->result);
	free(e->tmp);
	free(e->sendbuf);
	free(e->done_result);
	free(e->last.dead_bits);
	free(e->last.result);
	free(e->out);
	free(e->out_reqs);
	free(e->out_dst);
	recv_set_free(e->rs);
	free(e->alive);
	free(e->live);
	free(e->last_heard);
	cxs_eq_destroy(&e->eq);
	if (g_eng == e)
		g_eng = NULL;
	free(e);
}

/* ---- bounds --------------------------------------------------------------- */

static cxs_time eff_of(const struct cxs_engine *e, uint64_t *res, int s)
{
	uint64_t a = red_heapmin(&e->rl, res)[s], b = red_sentmin(&e->rl, res)[s];
	return a < b ? a : b;
}

static cxs_time global_min(const struct cxs_engine *e, uint64_t *res)
{
	cxs_time m = CXS_TIME_INF;
	for (int s = 0; s < e->nranks; s++) {
		cxs_time x = eff_of(e, res, s);
		if (x < m)
			m = x;
	}
	return m;
}

/*
 * Rank r's bound for the window after reduction `res`. A pure function of the
 * result and the pending kill, so that every survivor computes the same
 * bounds from an adopted result.
 */
static cxs_time sat_add(cxs_time a, cxs_time b)
{
	return a > CXS_TIME_INF - b ? CXS_TIME_INF : a + b;
}

static cxs_time bound_for(const struct cxs_engine *e, uint64_t *res, int r)
{
	cxs_time L = e->cfg.lookahead;
	/*
	 * Own events come back at the earliest after a round trip through another
	 * rank; with no other rank alive, nothing comes back and one window ends
	 * the run.
	 */
	cxs_time b = e->nlive > 1 ? sat_add(eff_of(e, res, r), 2 * L) : CXS_TIME_INF;
	for (int s = 0; s < e->nranks; s++) {
		if (s == r)
			continue;
		cxs_time x = sat_add(eff_of(e, res, s), L);
		if (x < b)
			b = x;
	}
	if (b > e->cfg.end_time)
		b = e->cfg.end_time;
	if (e->kill_pending >= 0 && b > e->cfg.kills[e->kill_pending].time)
		b = e->cfg.kills[e->kill_pending].time;
	return b;
}

/* ---- failures ------------------------------------------------------------ */

static void rebuild_live(struct cxs_engine *e)
{
	e->nlive = 0;
	for (int r = 0; r < e->nranks; r++)
		if (e->alive[r])
			e->live[e->nlive++] = r;
}

void engine_on_decision(struct cxs_engine *e)
{
	struct decision *d = &e->last;
	e->epoch = (uint32_t)d->round;
	bool any = false;
	uint8_t *newly = xcalloc((size_t)e->nranks, 1);
	for (int r = 0; r < e->nranks; r++)
		if (e->alive[r] && (d->dead_bits[r / 64] >> (r % 64) & 1)) {
			newly[r] = 1;
			e->alive[r] = 0;
			any = true;
		}
	rebuild_live(e);
	if (!any) {
		free(newly);
		return;
	}
	/*
	 * Failure time: no survivor has handled anything at or past its bound for
	 * window w_star, so the largest such bound is the earliest time at which
	 * every survivor can learn of the failure in simulated time.
	 */
	cxs_time t_fail = 0;
	if (d->has_result)
		for (int i = 0; i < e->nlive; i++) {
			cxs_time b = bound_for(e, d->result, e->live[i]);
			if (b > t_fail)
				t_fail = b;
		}
	double wall = comm_now() - e->t_start;
	struct fail_batch fb = {.time = t_fail};
	fb.nodes = xcalloc(e->cfg.nnodes, sizeof *fb.nodes);
	for (uint32_t n = 0; n < e->cfg.nnodes; n++) {
		if (!newly[e->node_rank[n]])
			continue;
		e->node_alive[n] = 0;
		fb.nodes[fb.n++] = n;
		const char *cause = "silent";
		if (e->kill_pending >= 0) {
			for (size_t k = (size_t)e->kill_pending; k < e->cfg.nkills; k++)
				if (e->node_rank[e->cfg.kills[k].node] == e->node_rank[n] &&
				    e->cfg.kills[k].time == t_fail) {
					cause = "injected";
					e->kill_fired = true;
				}
		}
		if (e->nfailures == e->cap_failures) {
			e->cap_failures = e->cap_failures ? 2 * e->cap_failures : 8;
			e->failures = realloc(e->failures, e->cap_failures * sizeof *e->failures);
			if (!e->failures)
				cxs_bug(NULL, "out of memory");
		}
		e->failures[e->nfailures++] = (struct failure_rec){
			.node = n, .rank = e->node_rank[n], .epoch = e->epoch, .time = t_fail,
			.detected_wall_s = wall, .cause = cause};
	}
	/*
	 * Tell the newly dead that they are out. A rank that was only descheduled
	 * finds this in its queue when it runs again, possibly after the
	 * survivors have finished, and stops instead of carrying on alone
	 * (pings from it are answered the same way, comm.c).
	 */
	{
		/* Every survivor tells them, not only the leader: it may die next. */
		struct ctl_hdr ex = {.type = CTL_EXCLUDED, .from = (uint32_t)e->rank,
				     .round = d->round, .leader = d->leader};
		for (int r = 0; r < e->nranks; r++)
			if (newly[r])
				ctl_send(e, r, &ex, NULL, 0);
	}
	free(newly);
	/*
	 * A pending kill whose node died some other way (kill -9, exclusion) will
	 * never fire: lift its cap after the next reduction like a fired one, or
	 * every bound would stay at its time forever.
	 */
	if (e->kill_pending >= 0 && !e->node_alive[e->cfg.kills[e->kill_pending].node])
		e->kill_fired = true;
	cxs_log(CXS_LOG_WARN, t_fail, "%zu node(s) failed; %d rank(s) continue (epoch %u)", fb.n,
		e->nlive, e->epoch);
	struct fail_batch *fbs = realloc(e->failbatches, (e->nfailbatches + 1) * sizeof *fbs);
	if (!fbs)
		cxs_bug(NULL, "out of memory");
	e->failbatches = fbs;
	uint32_t idx = (uint32_t)e->nfailbatches;
	e->failbatches[e->nfailbatches++] = fb;
	/* One notice per surviving local node, ordered after its own events at t_fail. */
	for (uint32_t i = 0; i < e->nlocal; i++)
		enqueue_local(e, t_fail, ((uint64_t)idx << 32) | e->local_ids[i], CXS_SRC_ENGINE,
			      e->local_ids[i], EV_FAILURE_NOTICE, &idx, sizeof idx);
}

/*
 * Answers pings and agreements from phases that do long work outside the
 * event loop (init, finalize, packing and writing the output), at most every
 * SERVICE_INTERVAL_S: the failure timeout bounds silence, so no phase may be
 * silent for long.
 */
static void service_now_and_then(struct cxs_engine *e)
{
	double now = comm_now();
	if (now - e->last_service > SERVICE_INTERVAL_S) {
		e->last_service = now;
		comm_service(e);
	}
}

static void service_tick(void *ctx)
{
	service_now_and_then(ctx);
}

/* ---- handling events ------------------------------------------------------ */

static void handle(struct cxs_engine *e, struct cxs_event *ev)
{
	struct cxs_lp *lp = &e->lps[e->node_local[ev->dst]];
	e->now = ev->time;
	e->cur = lp;
	lp->digest = mix64(mix64(mix64(lp->digest, ev->time), ((uint64_t)ev->src << 32) | ev->type),
			   ev->seq);
	lp->committed++;
	(*lp->c_events)++;
	if (ev->src == CXS_SRC_ENGINE && ev->type == EV_FAILURE_NOTICE) {
		uint32_t idx;
		memcpy(&idx, ev->data, sizeof idx);
		const struct fail_batch *fb = &e->failbatches[idx];
		if (lp->type->failure)
			lp->type->failure(lp, lp->state, fb->nodes, fb->n, fb->time);
	} else {
		lp->type->event(lp, lp->state, ev);
	}
}

static void process_window(struct cxs_engine *e)
{
	if (cxs_eq_min_time(&e->eq) >= e->bound)
		return; /* nothing to handle: skip the clock */
	double t0 = comm_now(), last_service = t0;
	unsigned n = 0;
	while (cxs_eq_min_time(&e->eq) < e->bound && !e->abort_code) {
		uint32_t slot;
		struct cxs_event *ev = cxs_eq_pop(&e->eq, &slot);
		handle(e, ev);
		cxs_eq_release(&e->eq, slot);
		e->fig.events++;
		if (++n % SERVICE_EVERY_EVENTS == 0) {
			/* Answer pings and agreements while busy (comm.c, "Liveness"). */
			double now = comm_now();
			if (now - last_service > SERVICE_INTERVAL_S) {
				comm_service(e);
				last_service = now;
			}
		}
	}
	e->fig.busy_wall_s += comm_now() - t0;
}

/* ---- batches --------------------------------------------------------------- */

static void build_contrib(struct cxs_engine *e)
{
	uint64_t *v = e->contrib;
	red_heapmin(&e->rl, v)[e->rank] = cxs_eq_min_time(&e->eq);
	for (int d = 0; d < e->nranks; d++) {
		if (e->out[d].nevents && !e->alive[d]) {
			/* Events for nodes that died before they could be sent: dropped. */
			e->out[d].len = 0;
			e->out[d].nevents = 0;
		}
		if (e->out[d].nevents)
			red_bitmap_row(&e->rl, v, (uint32_t)d)[e->rank / 64] |= UINT64_C(1)
										<< (e->rank % 64);
	}
	red_max(&e->rl, v)[RED_MAX_ABORT] = (uint64_t)e->abort_code;
	red_sum(&e->rl, v)[RED_SUM_COMMITTED] = e->fig.events; /* = sum of our nodes' counts */
	red_sum(&e->rl, v)[RED_SUM_REMOTE] = e->fig.remote_msgs;
}

static void send_batches(struct cxs_engine *e)
{
	e->nout_reqs = 0;
	for (int d = 0; d < e->nranks; d++) {
		struct batch_buf *b = &e->out[d];
		if (!b->nevents)
			continue;

		MPI_Isend(b->data, (int)b->len, MPI_BYTE, d, tag_batch(e->w), MPI_COMM_WORLD,
			  &e->out_reqs[e->nout_reqs]);
		e->out_dst[e->nout_reqs++] = d;
		e->fig.batches_sent++;
	}
}

/* Waits until this window's batches have left, so their buffers can be reused. */
static void finish_sends(struct cxs_engine *e)
{
	while (e->nout_reqs) {
		if (comm_wait(e, e->out_reqs, e->nout_reqs, e->out_dst, e->nout_reqs) == WAIT_OK)
			break;
		/* A destination died: forget its send; its buffer may still be read, so leak it. */
		int j = 0;
		for (int i = 0; i < e->nout_reqs; i++) {
			int d = e->out_dst[i];
			if (!e->alive[d] && e->out_reqs[i] != MPI_REQUEST_NULL) {
				MPI_Request_free(&e->out_reqs[i]);
				e->out[d].data = NULL;
				e->out[d].cap = 0;
				continue;
			}
			e->out_reqs[j] = e->out_reqs[i];
			e->out_dst[j++] = d;
		}
		e->nout_reqs = j;
	}
	e->nout_reqs = 0;
	for (int d = 0; d < e->nranks; d++) {
		e->out[d].len = 0;
		e->out[d].nevents = 0;
	}
}

static void unpack_batch(struct cxs_engine *e, const unsigned char *p, size_t len, int src)
{
	size_t off = 0;
	while (off < len) {
		struct wire_ev w;
		if (len - off < sizeof w)
			cxs_bug(NULL, "truncated batch from rank %d", src);
		memcpy(&w, p + off, sizeof w);
		off += sizeof w;
		size_t pay = (w.size + 7u) & ~(size_t)7;
		if (w.size > CXS_EVENT_PAYLOAD_MAX || len - off < pay || w.dst >= e->cfg.nnodes ||
		    e->node_rank[w.dst] != (uint32_t)e->rank)
			cxs_bug(NULL, "malformed event in a batch from rank %d", src);
		/* This rank has already handled an event at e->now: one arriving
		 * earlier would be handled out of order, a causality error. */
		if (w.time < e->now)
			cxs_bug(NULL, "event at %llu ps from rank %d arrived after this rank handled %llu ps",
				(unsigned long long)w.time, src, (unsigned long long)e->now);
		enqueue_local(e, w.time, w.seq, w.src, w.dst, w.type, p + off, w.size);
		off += pay;
	}
}

/*
 * Receives one message per listed source with the given tag. The set lives as
 * long as the engine and keeps its buffers: a sync-bound run receives a
 * batch or two per window, hundreds of thousands of times, and allocating
 * the set each window was a tenth of the loop (PHOLD, 16 LPs, np = 2).
 */
struct recv_set {
	int n, cap;
	int *src;
	int *state; /* 0 waiting for probe, 1 receiving, 2 done, 3 given up */
	MPI_Request *req;
	unsigned char **buf;
	size_t *bufcap;
	int *len;
};

static struct recv_set *recv_set_new(int cap)
{
	struct recv_set *s = xcalloc(1, sizeof *s);
	s->cap = cap;
	s->src = xcalloc((size_t)cap, sizeof *s->src);
	s->state = xcalloc((size_t)cap, sizeof *s->state);
	s->req = xcalloc((size_t)cap, sizeof *s->req);
	s->buf = xcalloc((size_t)cap, sizeof *s->buf);
	s->bufcap = xcalloc((size_t)cap, sizeof *s->bufcap);
	s->len = xcalloc((size_t)cap, sizeof *s->len);
	return s;
}

static void recv_set_free(struct recv_set *s)
{
	if (!s)
		return;
	for (int i = 0; s->buf && i < s->cap; i++) /* every buffer ever used, not just the last set's */
		free(s->buf[i]);
	free(s->src);
	free(s->state);
	free(s->req);
	free(s->buf);
	free(s->bufcap);
	free(s->len);
	free(s);
}

static void recv_set_add(struct recv_set *s, int src)
{
	int i = s->n++;
	s->src[i] = src;
	s->state[i] = 0;
	s->len[i] = 0;
}

/* One pass over the set; returns the number still pending. */
static int recv_set_poll(void *ctx, int tag)
{
	struct recv_set *s = ctx;
	int pending = 0;
	for (int i = 0; i < s->n; i++) {
		if (s->state[i] == 0) {
			int flag = 0;
			MPI_Message m;
			MPI_Status st;
			MPI_Improbe(s->src[i], tag, MPI_COMM_WORLD, &flag, &m, &st);
			if (flag) {
				MPI_Get_count(&st, MPI_BYTE, &s->len[i]);
				size_t need = s->len[i] > 0 ? (size_t)s->len[i] : 1;
				if (need > s->bufcap[i]) {
					free(s->buf[i]);
					s->buf[i] = malloc(need);
					if (!s->buf[i])
						cxs_bug(NULL, "out of memory receiving %d bytes", s->len[i]);
					s->bufcap[i] = need;
				}
				MPI_Imrecv(s->buf[i], s->len[i], MPI_BYTE, &m, &s->req[i]);
				s->state[i] = 1;
			}
		}
		if (s->state[i] == 1) {
			int done = 0;
			MPI_Test(&s->req[i], &done, MPI_STATUS_IGNORE);
			if (done)
				s->state[i] = 2;
		}
		if (s->state[i] < 2)
			pending++;
	}
	return pending;
}

/*
 * Waits for the set, handling deaths: a dead source's message is kept if it
 * has arrived by the time the survivors agreed, else given up (returns how
 * many were given up). `deadline_fn` style waiting is comm_wait's.
 */
static int recv_set_wait(struct cxs_engine *e, struct recv_set *s, int tag)
{
	int lost = 0;
	if (recv_set_poll(s, tag) == 0)
		return 0; /* everything had arrived: no clock, no allocation */
	int *awaited = xcalloc((size_t)(s->n ? s->n : 1), sizeof *awaited);
	for (;;) {
		if (recv_set_poll(s, tag) == 0)
			break;
		int na = 0;
		for (int i = 0; i < s->n; i++)
			if (s->state[i] < 2)
				awaited[na++] = s->src[i];
		/* comm_wait on no requests returns at once; poll in its loop instead. */
		enum wait_result r = comm_wait_poll(e, recv_set_poll, s, tag, awaited, na);
		if (r == WAIT_OK)
			break;
		for (int i = 0; i < s->n; i++) {
			if (s->state[i] >= 2 || e->alive[s->src[i]])
				continue;
			recv_set_poll(s, tag);
			if (s->state[i] == 1) {
				/*
				 * Arrived in part: its sender is gone; drop it rather than
				 * hang. MPI may still write into the buffer, so it is left
				 * to MPI (leaked), never reused.
				 */
				MPI_Cancel(&s->req[i]);
				MPI_Request_free(&s->req[i]);
				s->buf[i] = NULL;
				s->bufcap[i] = 0;
			}
			if (s->state[i] < 2) {
				s->state[i] = 3;
				lost++;
			}
		}
	}
	free(awaited);
	return lost;
}

static void receive_batches(struct cxs_engine *e)
{
	struct recv_set *s = e->rs;
	s->n = 0;
	const uint64_t *row = red_bitmap_row(&e->rl, e->result, (uint32_t)e->rank);
	for (int src = 0; src < e->nranks; src++)
		if (src != e->rank && (row[src / 64] >> (src % 64) & 1))
			recv_set_add(s, src);
	if (s->n == 0)
		return;
	e->fig.lost_batches += (uint64_t)recv_set_wait(e, s, tag_batch(e->w));
	for (int i = 0; i < s->n; i++)
		if (s->state[i] == 2)
			unpack_batch(e, s->buf[i], (size_t)s->len[i], s->src[i]);
}

/* ---- the window loop ------------------------------------------------------- */

static bool hosts_node(const struct cxs_engine *e, uint32_t node)
{
	return e->node_rank[node] == (uint32_t)e->rank;
}

static _Noreturn void die_injected(struct cxs_engine *e, const struct cxs_kill *k)
{
	cxs_log(CXS_LOG_WARN, k->time, "injected kill of node %u: rank %d stops now", k->node,
		e->rank);
	fflush(stdout);
	fflush(stderr);
	raise(SIGKILL);
	_exit(137);
}

static void reduce_window(struct cxs_engine *e)
{
	for (;;) {
		if (reduce_run(e) == WAIT_OK) {
			if (e->kill_fired) {
				/* First reduction of the epoch that agreed the kill. */
				e->kill_fired = false;
				e->kill_pending++;
				while ((size_t)e->kill_pending < e->cfg.nkills &&
				       !e->node_alive[e->cfg.kills[e->kill_pending].node])
					e->kill_pending++;
				if ((size_t)e->kill_pending >= e->cfg.nkills)
					e->kill_pending = -1;
			}
			return;
		}
		if (e->last.w_star > e->w && e->last.has_result) {
			/* A survivor finished this reduction before the failure: adopt it. */
			memcpy(e->result, e->last.result, e->rl.total * sizeof *e->result);
			return;
		}
		/*
		 * Nobody finished it: run it again over the survivors (new epoch). The
		 * decision may have queued failure notices below our old minimum, and
		 * the others' bounds must see them.
		 */
		uint64_t *hm = red_heapmin(&e->rl, e->contrib);
		cxs_time m = cxs_eq_min_time(&e->eq);
		if (m < hm[e->rank])
			hm[e->rank] = m;
	}
}

static void run_windows(struct cxs_engine *e)
{
	for (;;) {
		build_contrib(e);
		send_batches(e);
		reduce_window(e);
		memcpy(e->done_result, e->result, e->rl.total * sizeof *e->result);
		e->w_red = e->w + 1;
		receive_batches(e);
		finish_sends(e);
		e->fig.windows++;
		e->global_committed = red_sum(&e->rl, e->result)[RED_SUM_COMMITTED];
		uint64_t abort_code = red_max(&e->rl, e->result)[RED_MAX_ABORT];
		if (abort_code) {
			if (!e->abort_code)
				e->abort_code = (int)abort_code;
			break;
		}
		cxs_time gmin = global_min(e, e->result);
		e->gmin = gmin;
		if (gmin >= e->cfg.end_time)
			break;
		if (e->kill_pending >= 0 && !e->kill_fired) {
			const struct cxs_kill *k = &e->cfg.kills[e->kill_pending];
			if (gmin >= k->time && hosts_node(e, k->node) && e->node_alive[k->node])
				die_injected(e, k);
		}
		e->bound = bound_for(e, e->result, e->rank);
		progress_update(e, false);
		e->w++;
		red_identity(&e->rl, e->contrib);
		process_window(e);
	}
}

/* ---- output gathering ------------------------------------------------------- */

struct blob_hdr {
	uint32_t rank;
	uint32_t nnodes;
	int32_t abort_code;
	uint32_t pad;
	uint64_t events, windows, remote_msgs, batches_sent, agreements, lost_batches;
	double loop_wall_s, sync_wall_s, idle_wall_s, busy_wall_s, agreement_wall_s;
	char abort_msg[256];
};
struct blob_node {
	uint32_t id;
	uint32_t stats_len;
	uint64_t digest, committed, snapshot;
};
_Static_assert(sizeof(struct blob_hdr) == 360, "gather header layout");
_Static_assert(sizeof(struct blob_node) == 32, "gather node layout");

static unsigned char *make_blob(struct cxs_engine *e, size_t *len)
{
	size_t cap = sizeof(struct blob_hdr), n = 0;
	void **packs = xcalloc(e->nlocal, sizeof *packs);
	size_t *plen = xcalloc(e->nlocal, sizeof *plen);
	for (uint32_t i = 0; i < e->nlocal; i++) {
		if (cxs_stats_pack(e->lps[i].stats, &packs[i], &plen[i]) != 0)
			cxs_bug(NULL, "out of memory packing statistics");
		service_now_and_then(e);
		cap += sizeof(struct blob_node) + ((plen[i] + 7) & ~(size_t)7);
	}
	unsigned char *b = xcalloc(cap, 1);
	struct blob_hdr h = {
		.rank = (uint32_t)e->rank, .nnodes = e->nlocal, .abort_code = e->abort_code,
		.events = e->fig.events, .windows = e->fig.windows, .remote_msgs = e->fig.remote_msgs,
		.batches_sent = e->fig.batches_sent, .agreements = e->fig.agreements,
		.lost_batches = e->fig.lost_batches, .loop_wall_s = e->fig.loop_wall_s,
		.sync_wall_s = e->fig.sync_wall_s, .idle_wall_s = e->fig.idle_wall_s,
		.busy_wall_s = e->fig.busy_wall_s, .agreement_wall_s = e->fig.agreement_wall_s};
	memcpy(h.abort_msg, e->abort_msg, sizeof h.abort_msg);
	memcpy(b, &h, sizeof h);
	n = sizeof h;
	for (uint32_t i = 0; i < e->nlocal; i++) {
		struct cxs_lp *lp = &e->lps[i];
		struct blob_node bn = {.id = lp->id, .stats_len = (uint32_t)plen[i],
				       .digest = lp->digest, .committed = lp->committed};
		if (lp->type->snapshot)
			bn.snapshot = lp->type->snapshot(lp, lp->state);
		memcpy(b + n, &bn, sizeof bn);
		n += sizeof bn;
		memcpy(b + n, packs[i], plen[i]);
		n += (plen[i] + 7) & ~(size_t)7;
		free(packs[i]);
	}
	free(packs);
	free(plen);
	*len = n;
	return b;
}

struct gathered {
	struct blob_hdr *hdr;      /* per rank; rank field UINT32_MAX if missing */
	struct blob_node *node;    /* per node */
	struct cxs_stats **stats;  /* per node, NULL if missing */
	uint8_t *have;             /* per node */
};

static void absorb_blob(struct cxs_engine *e, struct gathered *g, const unsigned char *b,
			size_t len)
{
	struct blob_hdr h;
	if (len < sizeof h)
		cxs_bug(NULL, "short result blob");
	memcpy(&h, b, sizeof h);
	if (h.rank >= (uint32_t)e->nranks)
		cxs_bug(NULL, "result blob from unknown rank %u", h.rank);
	g->hdr[h.rank] = h;
	size_t off = sizeof h;
	for (uint32_t i = 0; i < h.nnodes; i++) {
		struct blob_node bn;
		if (len - off < sizeof bn)
			cxs_bug(NULL, "truncated result blob from rank %u", h.rank);
		memcpy(&bn, b + off, sizeof bn);
		off += sizeof bn;
		if (bn.id >= e->cfg.nnodes || len - off < bn.stats_len)
			cxs_bug(NULL, "malformed result blob from rank %u", h.rank);
		g->node[bn.id] = bn;
		cxs_stats_free(g->stats[bn.id]);
		g->stats[bn.id] = cxs_stats_unpack(b + off, bn.stats_len);
		if (!g->stats[bn.id])
			cxs_bug(NULL, "corrupt statistics from rank %u node %u", h.rank, bn.id);
		g->have[bn.id] = 1;
		off += (bn.stats_len + 7) & ~(size_t)7;
		service_now_and_then(e);
	}
}

static uint64_t run_checksum(const struct cxs_engine *e, const struct gathered *g)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (uint32_t n = 0; n < e->cfg.nnodes; n++) {
		if (!g->have[n] || !e->node_alive[n])
			continue;
		h = mix64(h, n);
		h = mix64(h, g->node[n].digest);
		h = mix64(h, g->node[n].committed);
		h = mix64(h, g->node[n].snapshot);
		h = mix64(h, cxs_stats_digest(g->stats[n]));
	}
	return h;
}

static int write_output(struct cxs_engine *e, struct gathered *g, struct cxs_run_result *res,
			cxs_output_fn *out, void *ctx, char *err, size_t errlen)
{
	int R = e->nranks;
	uint64_t *u[7];
	double *d[5];
	for (int i = 0; i < 7; i++)
		u[i] = xcalloc((size_t)R, sizeof(uint64_t));
	for (int i = 0; i < 5; i++)
		d[i] = xcalloc((size_t)R, sizeof(double));
	uint64_t committed = 0;
	for (int r = 0; r < R; r++) {
		const struct blob_hdr *h = &g->hdr[r];
		if (h->rank != (uint32_t)r)
			continue;
		u[0][r] = h->events;
		u[1][r] = h->windows;
		u[2][r] = h->remote_msgs;
		u[3][r] = h->batches_sent;
		u[4][r] = h->agreements;
		u[5][r] = h->lost_batches;
		u[6][r] = e->alive[r];
		d[0][r] = h->loop_wall_s;
		d[1][r] = h->sync_wall_s;
		d[2][r] = h->idle_wall_s;
		d[3][r] = h->busy_wall_s;
		d[4][r] = h->agreement_wall_s;
		committed += h->events;
	}
	const struct cxs_rank_column cols[] = {
		{"events", "events", "events handled on this rank", 0, u[0], NULL},
		{"windows", "windows", "synchronisation windows completed", 0, u[1], NULL},
		{"remote_msgs", "events", "events sent to other ranks", 0, u[2], NULL},
		{"batches_sent", "messages", "MPI batch messages sent", 0, u[3], NULL},
		{"agreements", "agreements", "membership agreements taken part in", 0, u[4], NULL},
		{"lost_batches", "messages", "batches of dead ranks given up", 0, u[5], NULL},
		{"alive", "bool", "1 if the rank survived to the end", 0, u[6], NULL},
		{"loop_wall_s", "s", "wall time of the event loop", 1, NULL, d[0]},
		{"sync_wall_s", "s", "wall time waiting in reductions, batch exchange and agreement", 1, NULL, d[1]},
		{"idle_wall_s", "s", "part of sync_wall_s spent yielding or sleeping", 1, NULL, d[2]},
		{"busy_wall_s", "s", "wall time handling events", 1, NULL, d[3]},
		{"agreement_wall_s", "s", "wall time in membership agreements", 1, NULL, d[4]},
	};
	struct cxs_node_record *nodes = xcalloc(e->cfg.nnodes, sizeof *nodes);
	for (uint32_t n = 0; n < e->cfg.nnodes; n++) {
		nodes[n].type = e->cfg.type_of(n, e->cfg.type_ctx)->name;
		nodes[n].rank = e->node_rank[n];
		nodes[n].alive = e->node_alive[n] && g->have[n];
		nodes[n].stats = g->have[n] ? g->stats[n] : NULL;
	}
	struct cxs_failure_record *fr = xcalloc(e->nfailures, sizeof *fr);
	for (size_t i = 0; i < e->nfailures; i++)
		fr[i] = (struct cxs_failure_record){e->failures[i].node, e->failures[i].rank,
						    e->failures[i].time, e->failures[i].detected_wall_s,
						    e->failures[i].epoch, e->failures[i].cause};
	int abort_code = e->abort_code;
	const char *abort_msg = NULL;
	for (int r = 0; r < R && abort_code; r++)
		if (g->hdr[r].rank == (uint32_t)r && g->hdr[r].abort_code && g->hdr[r].abort_msg[0]) {
			abort_msg = g->hdr[r].abort_msg;
			break;
		}
	char status[320];
	if (abort_code)
		snprintf(status, sizeof status, "error: %s", abort_msg ? abort_msg : "model error");
	else
		snprintf(status, sizeof status, "%s",
			 e->nfailures ? "complete-with-failures" : "complete");
	res->checksum = run_checksum(e, g);
	res->committed = committed;
	struct cxs_run_record rec = {
		.model = e->cfg.model, .status = status, .exit_status = abort_code,
		.nranks = (uint32_t)R, .seed = e->cfg.seed, .checksum = res->checksum,
		.end_time_ps = e->cfg.end_time, .final_time_ps = res->final_time,
		.wall_seconds = comm_now() - e->t_start, .ncolumns = sizeof cols / sizeof cols[0],
		.columns = cols, .nnodes = e->cfg.nnodes, .nodes = nodes,
		.nfailures = e->nfailures, .failures = fr, .tick = service_tick, .tick_ctx = e};
	int rc = out ? out(&rec, ctx, err, errlen) : 0;
	for (int i = 0; i < 7; i++)
		free(u[i]);
	for (int i = 0; i < 5; i++)
		free(d[i]);
	free(nodes);
	free(fr);
	return rc;
}

/*
 * Gathers to the writer and writes; repeats with a new writer if the writer
 * dies. Returns the output function's status on the writer, 0 elsewhere.
 */
static int gather_and_write(struct cxs_engine *e, struct cxs_run_result *res, cxs_output_fn *out,
			    void *ctx)
{
	size_t blen;
	unsigned char *blob = make_blob(e, &blen);
	bool blob_in_flight = false;
	int rc = 0;
	for (;;) {
		int writer = e->live[0];
		int tag = TAG_GATHER | (int)(e->epoch & 0xffff);
		int done_tag = TAG_DONE | (int)(e->epoch & 0xffff);
		if (writer != e->rank) {
			int64_t status = 0;
			MPI_Request rq[2];
			MPI_Isend(blob, (int)blen, MPI_BYTE, writer, tag, MPI_COMM_WORLD, &rq[0]);
			MPI_Irecv(&status, 1, MPI_INT64_T, writer, done_tag, MPI_COMM_WORLD, &rq[1]);
			if (comm_wait(e, rq, 2, &writer, 1) == WAIT_OK) {
				res->writer = false;
				break;
			}
			/* The abandoned send may still read the blob: never free it now. */
			MPI_Request_free(&rq[0]);
			MPI_Cancel(&rq[1]);
			MPI_Request_free(&rq[1]);
			blob_in_flight = true;
			continue;
		}
		struct gathered g = {0};
		g.hdr = xcalloc((size_t)e->nranks, sizeof *g.hdr);
		for (int r = 0; r < e->nranks; r++)
			g.hdr[r].rank = UINT32_MAX;
		g.node = xcalloc(e->cfg.nnodes, sizeof *g.node);
		g.stats = xcalloc(e->cfg.nnodes, sizeof *g.stats);
		g.have = xcalloc(e->cfg.nnodes, 1);
		absorb_blob(e, &g, blob, blen);
		struct recv_set *s = e->rs;
		s->n = 0;
		for (int i = 0; i < e->nlive; i++)
			if (e->live[i] != e->rank)
				recv_set_add(s, e->live[i]);
		uint32_t epoch = e->epoch;
		recv_set_wait(e, s, tag);
		bool changed = epoch != e->epoch;
		for (int i = 0; i < s->n && !changed; i++)
			if (s->state[i] == 2)
				absorb_blob(e, &g, s->buf[i], (size_t)s->len[i]);
		if (!changed) {
			char err[512] = "";
			res->writer = true;
			rc = write_output(e, &g, res, out, ctx, err, sizeof err);
			if (rc != 0)
				fprintf(stderr, "cxlsim: %s\n", err);
			/* A copy: a decision during the sends may rebuild the live list. */
			static int64_t status; /* stays valid for sends we stop waiting for */
			status = rc;
			int nl = e->nlive;
			int *to = xcalloc((size_t)nl, sizeof *to);
			memcpy(to, e->live, (size_t)nl * sizeof *to);
			for (int i = 0; i < nl; i++) {
				if (to[i] == e->rank || !e->alive[to[i]])
					continue;
				MPI_Request rq;
				MPI_Isend(&status, 1, MPI_INT64_T, to[i], done_tag, MPI_COMM_WORLD, &rq);
				if (comm_wait(e, &rq, 1, &to[i], 1) != WAIT_OK && rq != MPI_REQUEST_NULL)
					MPI_Request_free(&rq);
			}
			free(to);
		}
		for (uint32_t n = 0; n < e->cfg.nnodes; n++)
			cxs_stats_free(g.stats[n]);
		free(g.hdr);
		free(g.node);
		free(g.stats);
		free(g.have);
		if (!changed)
			break;
		/* Someone died while we gathered: everyone starts over in the new epoch. */
	}
	if (!blob_in_flight)
		free(blob);
	return rc;
}

int cxs_engine_run(struct cxs_engine *e, struct cxs_run_result *res, cxs_output_fn *out,
		   void *ctx)
{
	memset(res, 0, sizeof *res);
	e->t_start = comm_now();
	e->last_progress = e->t_start;
	red_identity(&e->rl, e->contrib);
	for (uint32_t i = 0; i < e->nlocal; i++) {
		struct cxs_lp *lp = &e->lps[i];
		e->cur = lp;
		e->now = 0;
		if (lp->type->init && lp->type->init(lp, lp->state) != 0 && !e->abort_code) {
			e->abort_code = 1;
			snprintf(e->abort_msg, sizeof e->abort_msg, "node %u (%s) failed to initialise",
				 lp->id, lp->type->name);
		}
		service_now_and_then(e);
	}
	run_windows(e);
	e->fig.loop_wall_s = comm_now() - e->t_start;
	res->final_time = e->gmin < e->cfg.end_time ? e->gmin : e->cfg.end_time;
	progress_update(e, true);
	for (uint32_t i = 0; i < e->nlocal; i++) {
		if (e->lps[i].type->finalize)
			e->lps[i].type->finalize(&e->lps[i], e->lps[i].state);
		service_now_and_then(e);
	}
	int rc = gather_and_write(e, res, out, ctx);
	res->status = e->abort_code ? e->abort_code : rc;
	res->loop_wall_s = e->fig.loop_wall_s;
	res->nfailures = e->nfailures;
	return res->status;
}
