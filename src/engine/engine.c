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
 * eff[r] + L >= s's bound, so they wait for the exchange. Messages in flight
 * are accounted for by the sent-minimum and the bitmap, both part of the same
 * reduction. The run ends when every eff is at or past the end time.
 *
 * Balance. That bound is only the most a rank may do. When every rank has
 * events near the global minimum g, it makes the ranks leapfrog: the one
 * holding g runs to g + 2L while the others stop at g + L, so in the next
 * window it has nothing below the new bound and waits while another runs
 * 2L — one rank works per window. On the 16x4 run at np = 2 the busiest
 * rank's events summed over the windows (the critical path, -v) were 3.61 M
 * of 4.41 M: at most 1.22x over np = 1. So while some other rank has an
 * event below g + L (it will work in this window), no rank's bound exceeds
 * g + L, and every rank handles the same stretch of simulated time; the
 * critical path fell to 2.74 M (ideal 2.21 M) with the same number of
 * windows. When no other rank has work that early, the rank holding g keeps
 * its full bound (up to 2L ahead), which is what PHOLD with 16 LPs, 1.5
 * events per window, gains from. Lowering a bound is always safe.
 *
 * Stretches (engine.sync = async, async.c). After a reduction, instead of
 * one window, the ranks may run a stretch to a common end T on per-peer
 * clocks carried in the batches, each waiting only for the peers it depends
 * on; the next reduction follows as after a window (async_plan decides; a
 * stretch ends at a pending kill's time, so kills and --fail fire here as
 * above). With stretches nobody parks. An unplanned death has no exact
 * fail-stop inside a stretch, so under async it is an error (async_death).
 *
 * Parking. Through the shared-memory reduction a rank without work in a
 * window takes no part in it: its contribution stands (reduce_shm.c,
 * "Parking"). Who takes part in the next reduction is a function of the
 * result (next_part, engine_takes_part: batches announced, eff below the
 * bound, a result every rank acts on, a new epoch), so the bounds above are
 * computed from the same vectors as with every rank awake. A parked rank
 * may rejoin several reductions later: it counts those windows, and the
 * critical-path figures travel in the vector (a MAX of the running sums) so
 * that its -v line is the same as the others'.
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
 * number of reductions the most advanced survivor completed, and hands the
 * result of reduction w_star - 1 to those that had not, so all survivors
 * compute the same bounds (a parked one included: reduce_shm.c, "Failures of
 * a parked rank"). The dead rank took part in reduction w_star - 1, so
 * it had finished that window and announced its batches, which are delivered
 * (a batch that never arrives is counted as lost_batches: the one inexact
 * case); its next window never completed anywhere, so its batches of that
 * window are announced by no reduction and dropped everywhere. Its T_f is
 * therefore its bound for window w_star - 1 (dead_rank_tf), and the notice
 * reaches the survivors at the largest of their bounds for window w_star
 * (T_n >= T_f, engine.h): no survivor has handled anything past T_n.
 *
 * --fail NODE@TIME (a fail-stop inside a live process, np = 1 included) caps
 * the bounds like a kill; at the first boundary where every eff >= TIME every
 * rank marks the node dead, queues the notices at TIME, and from then on the
 * node's events are discarded unhandled, so the survivors see exactly what an
 * injected kill of the node at TIME shows them.
 *
 * Time series (cfg.sample_interval = I > 0). Node n's sample k is its
 * selected counters after every event it handled before k * I. handle()
 * checks, per event, whether the event is at or past the node's next boundary
 * and records the samples of every boundary up to it first, so the cost when
 * sampling is off is one comparison per event, and no event is ever created:
 * the checksum cannot change. Because a node's counters change only in its
 * own events, the samples do not depend on the mapping. At the end of the run
 * every node records its boundaries up to this rank's last event time and one
 * more, which holds its final values; the writer extends every node to the
 * run's common sample count with that last sample (h5out.h, /series).
 *
 * Interrupts. cfg.interrupt (set by a signal handler, src/app/lifecycle.c)
 * goes into every window's reduction as a MAX, like an abort code: whichever
 * rank was signalled, all see it in the same result and stop after that
 * window, at which point every event below its global minimum has been
 * handled; the output is written as usual with status "interrupted". A rank
 * alone (np 1, or the last survivor) runs to the end in one window, so it
 * also looks at the flag every SERVICE_EVERY_EVENTS events.
 *
 * Output (output.c). At the end every live rank sends its nodes' counters and
 * its engine figures to the writer (the lowest live rank), which builds the
 * run record, calls the caller's output function, and releases the others.
 * If the writer dies meanwhile, the survivors agree and the next lowest rank
 * writes.
 */
#include "engine_priv.h"
#include "membership_priv.h"

#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cxlsim/h5out.h"

#define EV_FAILURE_NOTICE UINT32_MAX
#define SERVICE_EVERY_EVENTS 1024u

int cxs_log_level = CXS_LOG_WARN;
static struct cxs_engine *g_eng; /* for log lines and bug reports */
/*
 * Address space given back before MPI_Abort: when the run has exhausted its
 * memory (RLIMIT_AS), MPI_Abort itself needs some to tell mpirun, and without
 * it segfaulted instead (exit 139; issue 13, item 6).
 */
#define ABORT_RESERVE_BYTES (64u << 20)
static void *abort_reserve;

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
	free(abort_reserve);
	abort_reserve = NULL;
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

void *engine_xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);
	if (!p)
		cxs_bug(NULL, "out of memory (%zu x %zu bytes): the run needs more memory than this "
			"process may have (see the estimate with -v, engine.memory_check)", n, sz);
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
int cxs_run_interrupted(const struct cxs_lp *lp)
{
	return lp->eng->interrupted;
}
struct cxs_stats *cxs_lp_stats(struct cxs_lp *lp)
{
	return lp->stats;
}
void *cxs_lp_ctx(const struct cxs_lp *lp)
{
	return lp->eng->cfg.type_ctx;
}
bool cxs_node_alive(const struct cxs_lp *lp, uint32_t node)
{
	return node < lp->eng->cfg.nnodes && lp->eng->node_alive[node];
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
	engine_store_payload(ev, data, size);
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
	if (size > CXS_EVENT_PAYLOAD_BIG_MAX)
		cxs_bug_at(lp, file, line, "payload of %u bytes exceeds %u", size,
			   (unsigned)CXS_EVENT_PAYLOAD_BIG_MAX);
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
	lp->sent++;
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
	if (size > CXS_EVENT_PAYLOAD_BIG_MAX)
		cxs_bug(lp, "payload of %u bytes exceeds %u", size, (unsigned)CXS_EVENT_PAYLOAD_BIG_MAX);
	cxs_time t = e->now + delay;
	if (t < e->now || t >= e->cfg.end_time) {
		(*lp->c_dropped_end)++;
		return;
	}
	lp->scheduled++;
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
	if (c->sample_interval) {
		char why[200];
		if (cxs_stats_patterns_check(c->sample, why, sizeof why) != 0)
			return snprintf(err, errlen, "output.sample: %s", why), -1;
	}
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
		if (nranks < 2 && !c->kills[k].fail_only)
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
	/* The largest tag: kind 6 (a stretch's messages) with window bits set. */
	if (!flag || *tag_ub < (7 << TAG_KIND_SHIFT) - 1) {
		snprintf(err, errlen, "this MPI's MPI_TAG_UB (%d) is below the %d cxlsim's tags need",
			 flag ? *tag_ub : -1, (7 << TAG_KIND_SHIFT) - 1);
		return NULL;
	}
	if (validate(cfg, nranks, err, errlen) != 0)
		return NULL;

	struct cxs_engine *e = engine_xcalloc(1, sizeof *e);
	g_eng = e;
	if (!abort_reserve)
		abort_reserve = malloc(ABORT_RESERVE_BYTES);
	e->cfg = *cfg;
	qsort(e->cfg.kills, e->cfg.nkills, sizeof e->cfg.kills[0], cmp_kill);
	e->kill_pending = e->cfg.nkills ? 0 : -1;
	const char *hook = getenv("CXLSIM_TEST_LEADER_DIES_AFTER_COMMITS");
	e->test_die_after_commits = hook ? atoi(hook) : 0;
	e->rank = rank;
	e->nranks = nranks;
	uint32_t N = cfg->nnodes;
	e->node_rank = engine_xcalloc(N, sizeof *e->node_rank);
	e->node_local = engine_xcalloc(N, sizeof *e->node_local);
	e->node_alive = engine_xcalloc(N, 1);
	for (uint32_t n = 0; n < N; n++) {
		e->node_rank[n] = map_rank(cfg, n, nranks);
		e->node_alive[n] = 1;
		if (e->node_rank[n] == (uint32_t)rank)
			e->node_local[n] = e->nlocal++;
	}
	e->local_ids = engine_xcalloc(e->nlocal, sizeof *e->local_ids);
	e->lps = engine_xcalloc(e->nlocal, sizeof *e->lps);
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
		lp->state = engine_xcalloc(1, lp->type->state_size);
		e->has_progress |= lp->type->progress != NULL;
		lp->stats = cxs_stats_new();
		if (!lp->stats)
			cxs_bug(NULL, "out of memory for statistics");
		lp->next_sample = cfg->sample_interval ? 0 : CXS_TIME_INF;
		if (cfg->sample_interval && cxs_stats_sample_select(lp->stats, cfg->sample) != 0)
			cxs_bug(NULL, "out of memory for the time-series selection");
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
	e->contrib = engine_xcalloc(e->rl.total, sizeof(uint64_t));
	e->result = engine_xcalloc(e->rl.total, sizeof(uint64_t));
	e->tmp = engine_xcalloc(e->rl.total, sizeof(uint64_t));
	e->sendbuf = engine_xcalloc(e->rl.total, sizeof(uint64_t));
	e->done_result = engine_xcalloc(e->rl.total, sizeof(uint64_t));
	e->prev_result = engine_xcalloc(e->rl.total, sizeof(uint64_t));
	e->last.dead_bits = engine_xcalloc(e->rl.bitmap_words, sizeof(uint64_t));
	e->last.result = engine_xcalloc(e->rl.total, sizeof(uint64_t));
	e->last.prev_result = engine_xcalloc(e->rl.total, sizeof(uint64_t));
	e->part = engine_xcalloc(e->rl.bitmap_words, sizeof(uint64_t));
	e->part_next = engine_xcalloc(e->rl.bitmap_words, sizeof(uint64_t));
	for (int r = 0; r < nranks; r++)
		e->part[r / 64] |= UINT64_C(1) << (r % 64);
	e->out = engine_xcalloc((size_t)nranks, sizeof *e->out);
	e->out_reqs = engine_xcalloc((size_t)nranks, sizeof *e->out_reqs);
	e->out_dst = engine_xcalloc((size_t)nranks, sizeof *e->out_dst);
	e->rs = recv_set_new(nranks);
	if (cfg->sync == CXS_SYNC_ASYNC && nranks > 1)
		e->as = async_new(e);
	e->alive = engine_xcalloc((size_t)nranks, 1);
	e->live = engine_xcalloc((size_t)nranks, sizeof *e->live);
	e->last_heard = engine_xcalloc((size_t)nranks, sizeof *e->last_heard);
	e->gone = engine_xcalloc((size_t)nranks, 1);
	for (int r = 0; r < nranks; r++) {
		e->alive[r] = 1;
		e->live[r] = r;
	}
	e->nlive = nranks;
	e->door = door_open(rank, nranks, rshm_bytes(&e->rl));
	return e;
}

void cxs_engine_free(struct cxs_engine *e)
{
	if (!e)
		return;
	ctl_release_all();
	rshm_free(e->rshm);
	async_free(e->as);
	door_close(e->door);
	for (uint32_t i = 0; i < e->nlocal; i++) {
		free(e->lps[i].state);
		cxs_stats_free(e->lps[i].stats);
	}
	for (int r = 0; r < e->nranks; r++)
		free(e->out[r].data);
	for (size_t i = 0; i < e->nfailbatches; i++) {
		free(e->failbatches[i].nodes);
		free(e->failbatches[i].times);
	}
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
	free(e->prev_result);
	free(e->last.dead_bits);
	free(e->last.result);
	free(e->last.prev_result);
	free(e->part);
	free(e->part_next);
	free(e->out);
	free(e->out_reqs);
	free(e->out_dst);
	recv_set_free(e->rs);
	free(e->alive);
	free(e->live);
	free(e->last_heard);
	free(e->gone);
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

/*
 * What every bound of one result depends on, in one pass over the ranks
 * (engine_takes_part evaluates every rank's bound in every window, so the
 * bound of one rank must not cost a pass of its own): the global minimum,
 * the two smallest eff with the first one's rank, and how many ranks have an
 * event below gmin + L.
 */
struct bound_inputs {
	cxs_time gmin, min1, min2;
	int min1_rank;
	int n_busy; /* ranks s with eff[s] < gmin + L */
};

static void bound_inputs_of(const struct cxs_engine *e, const uint64_t *res,
			    struct bound_inputs *in)
{
	in->min1 = in->min2 = CXS_TIME_INF;
	in->min1_rank = -1;
	for (int s = 0; s < e->nranks; s++) {
		cxs_time x = eff_of(e, (uint64_t *)res, s);
		if (in->min1_rank < 0 || x < in->min1) {
			in->min2 = in->min1;
			in->min1 = x;
			in->min1_rank = s;
		} else if (x < in->min2) {
			in->min2 = x;
		}
	}
	in->gmin = in->min1;
	in->n_busy = 0;
	cxs_time busy_below = sat_add(in->gmin, e->cfg.lookahead);
	for (int s = 0; s < e->nranks; s++)
		in->n_busy += eff_of(e, (uint64_t *)res, s) < busy_below;
}

static cxs_time bound_of(const struct cxs_engine *e, const uint64_t *res,
			 const struct bound_inputs *in, int r)
{
	cxs_time L = e->cfg.lookahead;
	cxs_time mine = eff_of(e, (uint64_t *)res, r);
	/*
	 * Own events come back at the earliest after a round trip through another
	 * rank; with no other rank alive, nothing comes back and one window ends
	 * the run.
	 */
	cxs_time b = e->nlive > 1 ? sat_add(mine, 2 * L) : CXS_TIME_INF;
	/* The smallest eff of the other ranks (every rank of the world, as before). */
	cxs_time others = r == in->min1_rank ? in->min2 : in->min1;
	if (e->nranks > 1 && sat_add(others, L) < b)
		b = sat_add(others, L);
	/* Some other rank has an event below gmin + L. */
	bool others_busy = in->n_busy - (mine < sat_add(in->gmin, L)) > 0;
	/* "Balance": while another rank works in this window, nobody runs past gmin + L. */
	if (others_busy && b > sat_add(in->gmin, L))
		b = sat_add(in->gmin, L);
	if (b > e->cfg.end_time)
		b = e->cfg.end_time;
	if (e->kill_pending >= 0 && b > e->cfg.kills[e->kill_pending].time)
		b = e->cfg.kills[e->kill_pending].time;
	return b;
}

/*
 * What rank s can send at the earliest after result res (async.c, a
 * stretch's first clocks): it handles nothing below its own eff, nor below
 * what the others can send it (their smallest eff + L), and adds L to what
 * it sends. The same inputs as its bound.
 */
cxs_time engine_first_send(const struct cxs_engine *e, const uint64_t *res, int s)
{
	struct bound_inputs in;
	bound_inputs_of(e, res, &in);
	cxs_time L = e->cfg.lookahead, others = s == in.min1_rank ? in.min2 : in.min1;
	cxs_time mine = eff_of(e, (uint64_t *)res, s), via = sat_add(others, L);
	return sat_add(mine < via ? mine : via, L);
}

static cxs_time bound_for(const struct cxs_engine *e, uint64_t *res, int r)
{
	struct bound_inputs in;
	bound_inputs_of(e, res, &in);
	return bound_of(e, res, &in, r);
}

/*
 * A result after which every rank must act (reduce_shm.c, "Parking"): the
 * run stops (abort, interrupt, end), or a pending kill or fail is due, which
 * every rank applies (apply_fails) or its node's rank carries out.
 */
static bool all_act_on(const struct cxs_engine *e, const uint64_t *res, cxs_time gmin)
{
	uint64_t *r = (uint64_t *)res;
	if (red_max(&e->rl, r)[RED_MAX_ABORT] || red_max(&e->rl, r)[RED_MAX_INTERRUPT])
		return true;
	if (gmin >= e->cfg.end_time)
		return true;
	return e->kill_pending >= 0 && !e->kill_fired && gmin >= e->cfg.kills[e->kill_pending].time;
}

static bool takes_part(const struct cxs_engine *e, const uint64_t *res,
		       const struct bound_inputs *in, int r)
{
	if (e->epoch_fresh || all_act_on(e, res, in->gmin))
		return true;
	const uint64_t *row = red_bitmap_row(&e->rl, (uint64_t *)res, (uint32_t)r);
	for (uint32_t i = 0; i < e->rl.bitmap_words; i++)
		if (row[i])
			return true; /* batches to receive */
	return eff_of(e, (uint64_t *)res, r) < bound_of(e, res, in, r);
}

bool engine_takes_part(const struct cxs_engine *e, const uint64_t *res, int r)
{
	struct bound_inputs in;
	bound_inputs_of(e, res, &in);
	return takes_part(e, res, &in, r);
}

bool engine_in_part(const struct cxs_engine *e, int r)
{
	return e->epoch_fresh || (e->part[r / 64] >> (r % 64) & 1);
}

void engine_wake_needed(struct cxs_engine *e, const uint64_t *res)
{
	struct bound_inputs in;
	bound_inputs_of(e, res, &in);
	for (int i = 0; i < e->nlive; i++) {
		int r = e->live[i];
		if (r != e->rank && !engine_in_part(e, r) && takes_part(e, res, &in, r))
			door_ring(e->door, r);
	}
}

/*
 * After reduction w: who takes part in reduction w + 1, the same set on every
 * rank (a function of the result and of state all ranks share). Nobody
 * parks when the set would be empty (it never is: the rank holding the
 * global minimum has work below its bound), nor outside reduce_shm.c.
 */
static void next_part(struct cxs_engine *e)
{
	uint32_t B = e->rl.bitmap_words;
	memset(e->part_next, 0, B * sizeof *e->part_next);
	bool any = false;
	struct bound_inputs in;
	bound_inputs_of(e, e->result, &in);
	for (int i = 0; i < e->nlive; i++) {
		int r = e->live[i];
		/* Reduction 0 went point to point: the first shared one needs every stamp
		 * (a standing slot is recognised by the last stamp before it). */
		if (!e->rshm || e->w == 0 || e->as || takes_part(e, e->result, &in, r)) {
			e->part_next[r / 64] |= UINT64_C(1) << (r % 64);
			any = true;
		}
	}
	for (int i = 0; !any && i < e->nlive; i++)
		e->part_next[e->live[i] / 64] |= UINT64_C(1) << (e->live[i] % 64);
	uint64_t *t = e->part;
	e->part = e->part_next;
	e->part_next = t;
}

/* ---- failures ------------------------------------------------------------ */

static void rebuild_live(struct cxs_engine *e)
{
	e->nlive = 0;
	for (int r = 0; r < e->nranks; r++)
		if (e->alive[r])
			e->live[e->nlive++] = r;
}

static void add_failure_rec(struct cxs_engine *e, uint32_t node, cxs_time t, const char *cause)
{
	if (e->nfailures == e->cap_failures) {
		e->cap_failures = e->cap_failures ? 2 * e->cap_failures : 8;
		e->failures = realloc(e->failures, e->cap_failures * sizeof *e->failures);
		if (!e->failures)
			cxs_bug(NULL, "out of memory");
	}
	e->failures[e->nfailures++] = (struct failure_rec){
		.node = node, .rank = e->node_rank[node], .epoch = e->epoch, .time = t,
		.detected_wall_s = comm_now() - e->t_start, .cause = cause};
}

/* Queues the batch's notice for every surviving local node at fb.time; takes fb. */
static void post_notices(struct cxs_engine *e, struct fail_batch fb)
{
	struct fail_batch *fbs = realloc(e->failbatches, (e->nfailbatches + 1) * sizeof *fbs);
	if (!fbs)
		cxs_bug(NULL, "out of memory");
	e->failbatches = fbs;
	uint32_t idx = (uint32_t)e->nfailbatches;
	e->failbatches[e->nfailbatches++] = fb;
	/* One notice per surviving local node, ordered after its own events at fb.time. */
	for (uint32_t i = 0; i < e->nlocal; i++)
		if (e->node_alive[e->local_ids[i]])
			enqueue_local(e, fb.time, ((uint64_t)idx << 32) | e->local_ids[i],
				      CXS_SRC_ENGINE, e->local_ids[i], EV_FAILURE_NOTICE, &idx,
				      sizeof idx);
}

/*
 * The fail-stop time of a rank that died after taking part in reduction
 * w_star - 1 (engine.h, "Failures are exact fail-stops"): its bound for that
 * window, a function of the result of reduction w_star - 2, which the
 * decision carries (membership.c; a parked rank may hold neither result).
 * A parked rank took part through its standing contribution (reduce_shm.c,
 * "Parking"): it had nothing below that bound either. Window 0 is
 * initialisation: with no earlier reduction the rank handled no event, T_f = 0.
 */
static cxs_time dead_rank_tf(const struct cxs_engine *e, const struct decision *d, int rank,
			     int nlive_before)
{
	if (!d->has_result || d->w_star < 2)
		return 0;
	struct cxs_engine tmp = *e; /* bound_for reads nlive: the dead rank's, before the decision */
	tmp.nlive = nlive_before;
	return bound_for(&tmp, d->prev_result, rank);
}

static void async_death(struct cxs_engine *e, uint32_t node);

void engine_on_decision(struct cxs_engine *e)
{
	struct decision *d = &e->last;
	e->epoch = (uint32_t)d->round;
	e->epoch_fresh = true; /* the new epoch's first reduction: every rank, none parked */
	bool any = false;
	int nlive_before = e->nlive;
	uint8_t *newly = engine_xcalloc((size_t)e->nranks, 1);
	for (int r = 0; r < e->nranks; r++)
		if (e->alive[r] && (d->dead_bits[r / 64] >> (r % 64) & 1)) {
			newly[r] = 1;
			e->alive[r] = 0;
			any = true;
		}
	rebuild_live(e);
	memset(e->part, 0, e->rl.bitmap_words * sizeof *e->part);
	for (int i = 0; i < e->nlive; i++)
		e->part[e->live[i] / 64] |= UINT64_C(1) << (e->live[i] % 64);
	if (!any) {
		free(newly);
		return;
	}
	/*
	 * Notice time T_n: no survivor has handled anything at or past its bound
	 * for window w_star, so the largest such bound is the earliest time at
	 * which every survivor can learn of the failure in simulated time.
	 */
	cxs_time t_fail = 0;
	if (d->has_result)
		for (int i = 0; i < e->nlive; i++) {
			cxs_time b = bound_for(e, d->result, e->live[i]);
			if (b > t_fail)
				t_fail = b;
		}
	struct fail_batch fb = {.time = t_fail};
	fb.nodes = engine_xcalloc(e->cfg.nnodes, sizeof *fb.nodes);
	fb.times = engine_xcalloc(e->cfg.nnodes, sizeof *fb.times);
	for (uint32_t n = 0; n < e->cfg.nnodes; n++) {
		if (!newly[e->node_rank[n]] || !e->node_alive[n])
			continue;
		e->node_alive[n] = 0;
		const char *cause = "silent";
		cxs_time tf = dead_rank_tf(e, d, (int)e->node_rank[n], nlive_before);
		if (e->kill_pending >= 0) {
			for (size_t k = (size_t)e->kill_pending; k < e->cfg.nkills; k++)
				if (!e->cfg.kills[k].fail_only &&
				    e->node_rank[e->cfg.kills[k].node] == e->node_rank[n] &&
				    e->cfg.kills[k].time == t_fail) {
					/* The cap held every rank at the kill time: T_f = T_n. */
					cause = "injected";
					tf = t_fail;
					e->kill_fired = true;
				}
		}
		if (tf > t_fail)
			tf = t_fail;
		fb.nodes[fb.n] = n;
		fb.times[fb.n++] = tf;
		add_failure_rec(e, n, tf, cause);
		if (e->as && strcmp(cause, "silent") == 0)
			async_death(e, n);
	}
	/* Once per run, by the lowest survivor, after the first decision that found one. */
	if (e->async_died && !e->async_died_logged && e->nlive && e->live[0] == e->rank)
		cxs_log(CXS_LOG_ERROR, t_fail, "%s", e->abort_msg);
	e->async_died_logged = e->async_died;
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
	if (fb.n == 0) {
		free(fb.nodes);
		free(fb.times);
		return;
	}
	post_notices(e, fb);
}

/*
 * engine.sync = async: a node whose rank died other than by --kill. It may
 * have died inside a stretch, after its peers handled events it sent there,
 * where no fail-stop time is exact (async.c): the run stops with an error that
 * names the nodes, on every survivor, since every one applies this decision.
 */
static void async_death(struct cxs_engine *e, uint32_t node)
{
	if (e->abort_code && !e->async_died)
		return; /* an earlier error (a model's) is the run's */
	size_t n = strlen(e->abort_msg);
	if (!e->async_died) {
		e->abort_code = 1;
		e->async_died = true;
		n = (size_t)snprintf(e->abort_msg, sizeof e->abort_msg,
				     "rank %u died (engine.sync = async survives only --kill and "
				     "--fail; engine.sync = windows survives any kill); its nodes:",
				     e->node_rank[node]);
	}
	if (n < sizeof e->abort_msg)
		snprintf(e->abort_msg + n, sizeof e->abort_msg - n, " %u", node);
}

/* Moves past the pending kill or fail to the next one whose node is still alive. */
static void next_pending_kill(struct cxs_engine *e)
{
	e->kill_pending++;
	while ((size_t)e->kill_pending < e->cfg.nkills &&
	       !e->node_alive[e->cfg.kills[e->kill_pending].node])
		e->kill_pending++;
	if ((size_t)e->kill_pending >= e->cfg.nkills)
		e->kill_pending = -1;
}

/*
 * --fail NODE@TIME entries due now (every rank reaches this at the same window
 * boundary, the first whose reduction shows every eff >= TIME, so all apply
 * them alike without an agreement). The node handles nothing from TIME on;
 * its rank lives on. Returns whether the pending entry moved.
 */
static bool apply_fails(struct cxs_engine *e, cxs_time gmin)
{
	bool moved = false;
	while (e->kill_pending >= 0 && e->cfg.kills[e->kill_pending].fail_only &&
	       gmin >= e->cfg.kills[e->kill_pending].time) {
		const struct cxs_kill *k = &e->cfg.kills[e->kill_pending];
		if (e->node_alive[k->node]) {
			struct fail_batch fb = {.time = k->time, .n = 1};
			fb.nodes = engine_xcalloc(1, sizeof *fb.nodes);
			fb.times = engine_xcalloc(1, sizeof *fb.times);
			fb.nodes[0] = k->node;
			fb.times[0] = k->time;
			e->node_alive[k->node] = 0;
			add_failure_rec(e, k->node, k->time, "failed");
			cxs_log(CXS_LOG_WARN, k->time, "node %u fail-stops (--fail); its rank %u goes on",
				k->node, e->node_rank[k->node]);
			post_notices(e, fb);
		}
		moved = true;
		next_pending_kill(e);
	}
	return moved;
}

/* ---- handling events ------------------------------------------------------ */

void engine_publish_counters(struct cxs_lp *lp)
{
	*lp->c_events = lp->committed;
	*lp->c_sent = lp->sent;
	*lp->c_scheduled = lp->scheduled;
}

/* Records every boundary at or below t not yet recorded (see "Time series"). */
static void sample_until(struct cxs_engine *e, struct cxs_lp *lp, cxs_time t)
{
	cxs_time step = e->cfg.sample_interval;

	engine_publish_counters(lp);
	while (lp->next_sample <= t) {
		if (cxs_stats_sample(lp->stats) != 0)
			cxs_bug(lp, "out of memory for the time series");
		lp->next_sample = lp->next_sample > CXS_TIME_INF - step ? CXS_TIME_INF
									  : lp->next_sample + step;
	}
}

/* The end of the run: every node's samples up to this rank's last event, and one more. */
static void finish_samples(struct cxs_engine *e)
{
	for (uint32_t i = 0; e->cfg.sample_interval && i < e->nlocal; i++) {
		struct cxs_lp *lp = &e->lps[i];
		sample_until(e, lp, e->now);
		if (lp->next_sample != CXS_TIME_INF)
			sample_until(e, lp, lp->next_sample);
	}
}

static void handle(struct cxs_engine *e, struct cxs_event *ev)
{
	if (!e->node_alive[ev->dst])
		return; /* a node that failed inside this process (--fail): it handles nothing more */
	struct cxs_lp *lp = &e->lps[e->node_local[ev->dst]];
	if (ev->time >= lp->next_sample)
		sample_until(e, lp, ev->time);
	e->now = ev->time;
	e->cur = lp;
	/*
	 * One mix per event of the three fields, each spread by its own odd
	 * multiplier first (independent multiplies, one dependent mix): 15
	 * instructions against 37 for three chained mixes, the same chain.
	 */
	lp->digest = mix64(lp->digest, ev->time * UINT64_C(0x9e3779b97f4a7c15) ^
					       (((uint64_t)ev->src << 32) | ev->type) *
						       UINT64_C(0xc2b2ae3d27d4eb4f) ^
					       ev->seq);
	lp->committed++;
	(*lp->c_events)++;
	if (ev->src == CXS_SRC_ENGINE && ev->type == EV_FAILURE_NOTICE) {
		uint32_t idx;
		memcpy(&idx, ev->data, sizeof idx);
		const struct fail_batch *fb = &e->failbatches[idx];
		struct cxs_failure_notice f = {.nodes = fb->nodes, .times = fb->times, .n = fb->n};
		if (lp->type->failure)
			lp->type->failure(lp, lp->state, &f);
	} else {
		lp->type->event(lp, lp->state, ev);
	}
}

void engine_handle_next(struct cxs_engine *e)
{
	uint32_t slot;
	struct cxs_event *ev = cxs_eq_pop(&e->eq, &slot);
	handle(e, ev);
	engine_drop_payload(ev);
	cxs_eq_release(&e->eq, slot);
	e->fig.events++;
}

/* The local nodes' own measure of work done, for the progress line (a few adds per node). */
static void local_work(struct cxs_engine *e, uint64_t *done, uint64_t *total)
{
	*done = *total = 0;
	for (uint32_t i = 0; e->has_progress && !e->cfg.quiet && i < e->nlocal; i++) {
		struct cxs_lp *lp = &e->lps[i];
		uint64_t d = 0, t = 0;
		if (lp->type->progress && e->node_alive[lp->id]) {
			lp->type->progress(lp, lp->state, &d, &t);
			*done += d < t ? d : t;
			*total += t;
		}
	}
}

static void process_window(struct cxs_engine *e)
{
	if (cxs_eq_min_time(&e->eq) >= e->bound)
		return; /* nothing to handle: skip the clock */
	double t0 = comm_now(), last_service = t0;
	unsigned n = 0;
	while (cxs_eq_min_time(&e->eq) < e->bound && !e->abort_code) {
		engine_handle_next(e);
		if (++n % SERVICE_EVERY_EVENTS == 0) {
			/* Alone, the run is one window: an interrupt cannot wait for its end. */
			if (e->nlive == 1 && e->cfg.interrupt && *e->cfg.interrupt)
				break;
			/* ... nor can the progress line: its figures are this rank's own. */
			if (e->nlive == 1 && !e->cfg.quiet) {
				e->global_committed = e->fig.events;
				e->gmin = e->now;
				if (comm_now() - e->last_progress >= e->cfg.progress_interval_s) {
					local_work(e, &e->global_work_done, &e->global_work_total);
					progress_update(e, false);
				}
			}
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
	uint64_t sig = e->cfg.interrupt ? (uint64_t)*e->cfg.interrupt : 0;
	if ((uint64_t)e->interrupt_fwd > sig)
		sig = (uint64_t)e->interrupt_fwd;
	red_max(&e->rl, v)[RED_MAX_INTERRUPT] = sig;
	red_max(&e->rl, v)[RED_MAX_CRIT_EVENTS] = e->fig.crit_events;
	red_max(&e->rl, v)[RED_MAX_CRIT_BUSY_NS] = e->fig.crit_busy_ns;
	red_max(&e->rl, v)[RED_MAX_WIN_EVENTS] = e->fig.events - e->fig.win_events0;
	red_max(&e->rl, v)[RED_MAX_WIN_BUSY_NS] = (uint64_t)((e->fig.busy_wall_s - e->fig.win_busy0_s) * 1e9);
	red_max(&e->rl, v)[RED_MAX_STRETCH_NS] = async_take_wall_ns(e);
	e->fig.win_events0 = e->fig.events;
	e->fig.win_busy0_s = e->fig.busy_wall_s;
	red_sum(&e->rl, v)[RED_SUM_COMMITTED] = e->fig.events; /* = sum of our nodes' counts */
	red_sum(&e->rl, v)[RED_SUM_REMOTE] = e->fig.remote_msgs;
	local_work(e, &red_sum(&e->rl, v)[RED_SUM_WORK_DONE], &red_sum(&e->rl, v)[RED_SUM_WORK_TOTAL]);
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
		/* A parked rank is woken by the completer of the reduction that announces this. */
		if (engine_in_part(e, d))
			door_ring(e->door, d);
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

void engine_unpack_batch(struct cxs_engine *e, const unsigned char *p, size_t len, int src)
{
	size_t off = 0;
	struct wire_ev w;
	const unsigned char *pay;
	int rc;
	while ((rc = batch_next(p, len, &off, &w, &pay)) > 0) {
		if (w.dst >= e->cfg.nnodes || e->node_rank[w.dst] != (uint32_t)e->rank)
			cxs_bug(NULL, "malformed event in a batch from rank %d", src);
		/* This rank has already handled an event at e->now: one arriving
		 * earlier would be handled out of order, a causality error. */
		if (w.time < e->now)
			cxs_bug(NULL, "event at %llu ps from rank %d arrived after this rank handled %llu ps",
				(unsigned long long)w.time, src, (unsigned long long)e->now);
		enqueue_local(e, w.time, w.seq, w.src, w.dst, w.type, pay, w.size);
	}
	if (rc < 0)
		cxs_bug(NULL, "truncated or malformed batch from rank %d", src);
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
			engine_unpack_batch(e, s->buf[i], (size_t)s->len[i], s->src[i]);
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
			e->epoch_fresh = false;
			if (e->kill_fired) {
				/* First reduction of the epoch that agreed the kill. */
				e->kill_fired = false;
				next_pending_kill(e);
			}
			return;
		}
		if (e->last.w_star > e->w && e->last.has_result) {
			/*
			 * A survivor finished this reduction before the failure: adopt
			 * it. A parked rank may be several reductions behind, all of
			 * which it stood in (reduce_shm.c): it takes the latest.
			 */
			e->fig.parked_windows += e->last.w_star - 1 - e->w;
			e->fig.windows += e->last.w_star - 1 - e->w;
			e->w = e->last.w_star - 1;
			memcpy(e->result, e->last.result, e->rl.total * sizeof *e->result);
			if (e->last.w_star >= 2)
				memcpy(e->done_result, e->last.prev_result, e->rl.total * sizeof *e->result);
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

/*
 * Test hook (the external-kill tests, tests/mpi/common.sh): CXLSIM_TEST_READY=DIR; each rank
 * creates DIR/rank.R once every rank has finished the first reduction, so a
 * test that kills a rank from outside kills it in the run, not in MPI_Init or
 * the workload's set-up (a kill there is a start-up failure, another test's).
 */
static void mark_ready(const struct cxs_engine *e)
{
	const char *dir = getenv("CXLSIM_TEST_READY");
	if (!dir)
		return;
	char path[4096];
	snprintf(path, sizeof path, "%s/rank.%d", dir, e->rank);
	FILE *f = fopen(path, "w");
	if (f)
		fclose(f);
}

static void run_windows(struct cxs_engine *e)
{
	for (;;) {
		build_contrib(e);
		send_batches(e);
		reduce_window(e);
		if (e->w == 0) {
			door_unlink(e->door); /* every rank took part, so every rank opened it */
			e->rshm = rshm_attach(e);
			mark_ready(e);
		}
		memcpy(e->prev_result, e->done_result, e->rl.total * sizeof *e->result);
		memcpy(e->done_result, e->result, e->rl.total * sizeof *e->result);
		e->w_red = e->w + 1;
		next_part(e);
		receive_batches(e);
		finish_sends(e);
		e->fig.windows++;
		/* Carried in the vector, so that a rank that sat windows out has the sum too. */
		e->fig.crit_events = red_max(&e->rl, e->result)[RED_MAX_CRIT_EVENTS] +
				     red_max(&e->rl, e->result)[RED_MAX_WIN_EVENTS];
		e->fig.crit_busy_ns = red_max(&e->rl, e->result)[RED_MAX_CRIT_BUSY_NS] +
				      red_max(&e->rl, e->result)[RED_MAX_WIN_BUSY_NS];
		e->global_committed = red_sum(&e->rl, e->result)[RED_SUM_COMMITTED];
		e->global_work_done = red_sum(&e->rl, e->result)[RED_SUM_WORK_DONE];
		e->global_work_total = red_sum(&e->rl, e->result)[RED_SUM_WORK_TOTAL];
		uint64_t abort_code = red_max(&e->rl, e->result)[RED_MAX_ABORT];
		if (abort_code) {
			if (!e->abort_code)
				e->abort_code = (int)abort_code;
			break;
		}
		async_adapt(e, red_max(&e->rl, e->result)[RED_MAX_STRETCH_NS]);
		cxs_time gmin = global_min(e, e->result);
		e->gmin = gmin;
		if (gmin >= e->cfg.end_time)
			break;
		/* A signal on any rank: all stop here, every event below gmin handled. */
		if ((e->interrupted = (int)red_max(&e->rl, e->result)[RED_MAX_INTERRUPT]) != 0)
			break;
		if (e->kill_pending >= 0 && !e->kill_fired) {
			apply_fails(e, gmin);
			const struct cxs_kill *k = e->kill_pending >= 0 ? &e->cfg.kills[e->kill_pending] : NULL;
			if (k && !k->fail_only && gmin >= k->time && hosts_node(e, k->node) &&
			    e->node_alive[k->node])
				die_injected(e, k);
		}
		e->bound = bound_for(e, e->result, e->rank);
		progress_update(e, false);
		e->w++;
		red_identity(&e->rl, e->contrib);
		cxs_time T;
		if (async_plan(e, gmin, &T))
			async_stretch(e, T);
		else
			process_window(e);
	}
}

static double tv_diff(struct timeval a, struct timeval b)
{
	return (double)(a.tv_sec - b.tv_sec) + (double)(a.tv_usec - b.tv_usec) * 1e-6;
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
		comm_service_now_and_then(e);
	}
	/* Context switches of this process in the loop (issue 12: per window). */
	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	e->door_on = true;
	run_windows(e);
	e->door_on = false;
	getrusage(RUSAGE_SELF, &ru1);
	cxs_log(CXS_LOG_INFO, e->now,
		"%llu windows, loop %.3f s, busy %.3f s; critical path %llu events, %.3f s busy "
		"(the busiest rank's, window by window); %llu waits slept on the doorbell, %llu "
		"until its bound; CPU %.3f s (system %.3f s); %ld context switches, %ld involuntary; "
		"%s reduction; parked %llu times, sitting out %llu of the reductions; "
		"%llu asynchronous stretches, %llu clock messages",
		(unsigned long long)e->fig.windows, comm_now() - e->t_start, e->fig.busy_wall_s,
		(unsigned long long)e->fig.crit_events, (double)e->fig.crit_busy_ns * 1e-9,
		(unsigned long long)e->fig.door_sleeps, (unsigned long long)e->fig.door_timeouts,
		tv_diff(ru1.ru_utime, ru0.ru_utime) + tv_diff(ru1.ru_stime, ru0.ru_stime),
		tv_diff(ru1.ru_stime, ru0.ru_stime),
		(ru1.ru_nvcsw - ru0.ru_nvcsw) + (ru1.ru_nivcsw - ru0.ru_nivcsw),
		ru1.ru_nivcsw - ru0.ru_nivcsw, e->rshm ? "shared-memory" : "point-to-point",
		(unsigned long long)e->fig.parks, (unsigned long long)e->fig.parked_windows,
		(unsigned long long)e->fig.stretches, (unsigned long long)e->fig.clock_msgs);
	finish_samples(e);
	e->fig.loop_wall_s = comm_now() - e->t_start;
	progress_update(e, true);
	for (uint32_t i = 0; i < e->nlocal; i++) {
		if (e->lps[i].type->finalize)
			e->lps[i].type->finalize(&e->lps[i], e->lps[i].state);
		comm_service_now_and_then(e);
	}
	int rc = engine_gather_and_write(e, res, out, ctx);
	res->status = e->abort_code ? e->abort_code : rc;
	res->interrupted = e->interrupted;
	if (!res->status && e->interrupted)
		res->status = 128 + e->interrupted;
	res->loop_wall_s = e->fig.loop_wall_s;
	res->nfailures = e->nfailures;
	return res->status;
}
