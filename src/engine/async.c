/*
 * async.c — asynchronous stretches (engine.sync = async): between two
 * reductions the ranks advance on per-peer clocks instead of windows.
 *
 * Why. In a window every rank waits for the busiest one: the 16x4 runs at
 * np = 2 can at best be 1.68-1.73x faster than np = 1 with windows of one
 * lookahead, and 1.87-1.92x when a rank only waits for the peers it depends
 * on (README "Parallel speed", tests/bench/par_model.py --async). A stretch
 * is the second scheme, a Chandy-Misra-Bryant exchange of clocks carried in
 * the batches:
 *
 *   - every message to a peer is a batch followed by a trailer (clock, flags);
 *     the clock is a promise, "no event from me below it after this
 *     message", and MPI keeps one source's messages in order, so a batch and
 *     the clock after it arrive together;
 *   - a rank's bound is B = min over its live peers of their last clock, and it
 *     handles its events below min(B, T), T the stretch's end;
 *   - its own clock is min(its heap minimum, B) + L: anything it will handle
 *     is in its heap or arrives at or after B, and every send adds at least L.
 *     It sends it to every peer when it has handled all it may, and on the
 *     way whenever it has risen by L / ASYNC_GAP (flush_due), so a peer
 *     waiting for it goes on before this one finishes;
 *   - a rank done with the stretch (heap minimum and B at or past T) sends a
 *     final trailer and waits for every peer's. What arrives after its own
 *     final is at or past T and waits in the heap for the next stretch.
 *
 * Each sent clock is larger than the last, so the smallest clock of the job
 * rises by at least L per exchange and a stretch cannot deadlock. Event order
 * is the key (time, src, seq), never arrival order, so the results are the
 * same as with windows, at every rank count (tests check the checksums).
 *
 * Between stretches runs an ordinary reduction (engine.c), which carries what
 * the clocks do not: abort codes, interrupts, the progress figures, planned
 * kills and --fail (a stretch ends at the pending one's time, and the window
 * machinery fires it exactly as with engine.sync = windows). The stretch's
 * length in simulated time adapts so that one lasts ASYNC_TARGET_S of wall
 * time on the slowest rank: every rank reads that figure from the same
 * reduction and computes the same next end.
 *
 * What a stretch does not survive is a rank dying inside it (kill -9): its
 * peers have handled events it sent them after the last reduction, so there
 * is no window boundary at which to put its fail-stop. The survivors detect
 * it as in any wait (comm.c), end the stretch among themselves (on_death)
 * and stop with an error naming the rank and its nodes, which is the status
 * of the file they write; engine.sync = windows (the default) survives it.
 */
#include "engine_priv.h"

#include <stdlib.h>
#include <string.h>

#define TAG_ASYNC (6 << TAG_KIND_SHIFT)
#define ASYNC_FINAL UINT64_C(1)
/* Events between two checks, inside a burst, of whether a clock is due (flush_due). */
#define ASYNC_CHECK_EVENTS 16u
/* A clock is sent on the way once it has risen by L / ASYNC_GAP (flush_due). */
#define ASYNC_GAP 8u
#define ASYNC_TARGET_S 0.02
/*
 * The longest stretch, in lookaheads: after a sparse phase (stretches of
 * microseconds) the length could otherwise double up to the end time, and a
 * dense phase after it would run to its end before the next reduction, with
 * no progress line, interrupt or abort meanwhile. 1024 lookaheads of the
 * 16x4 ocean_cp run are ~0.2 s of wall time.
 */
#define ASYNC_MAX_WINDOWS 1024u
#define SERVICE_EVERY_EVENTS 1024u

struct async_trailer {
	uint64_t clock;
	uint64_t flags;
};

struct async_buf {
	unsigned char *data;
	size_t cap;
};

struct async_flight {
	MPI_Request req;
	struct async_buf buf;
	size_t len;
	int dst;
};

/*
 * Open MPI's shared-memory transport sends up to 4 KiB eagerly: such a send
 * completes on the sender's next progress call whatever the receiver does.
 * A larger one moves only while both ends poll, so a rank that has one in
 * flight must not sleep (comm.c, "how a wait gives its core away").
 */
#define ASYNC_EAGER_BYTES 4096u

struct async_state {
	cxs_time T;
	cxs_time len;          /* stretch length, simulated time */
	cxs_time *in_clock;    /* per world rank: its last clock (CXS_TIME_INF after its final) */
	uint8_t *peer;         /* world ranks taking part in this stretch (live, not this one) */
	uint8_t *fin;          /* world ranks whose final has arrived */
	int nfinal_wait;       /* peers whose final has not arrived */
	cxs_time B;            /* min over peers of in_clock */
	cxs_time *sent;        /* per world rank: the last clock sent to it (0: none this stretch) */
	int *plist;            /* the peers, ascending */
	int npeers;
	bool final_sent;
	/* sends in flight, and buffers free for reuse */
	struct async_flight *fl;
	size_t nfl, capfl;
	struct async_buf *pool;
	size_t npool, cappool;
	/* the receive in progress (above the eager limit it takes several polls) */
	MPI_Request rreq;
	int rsrc, rlen;
	struct async_buf rbuf;
	int *awaited;
	int nawaited;
	double wall_ns;        /* the last stretch's wall time here, for the reduction */
};

static inline int tag_async(uint64_t w)
{
	return TAG_ASYNC | (int)(w & 0xffff);
}

static cxs_time tsat_add(cxs_time a, cxs_time b)
{
	return a > CXS_TIME_INF - b ? CXS_TIME_INF : a + b;
}

static cxs_time tmin(cxs_time a, cxs_time b)
{
	return a < b ? a : b;
}

struct async_state *async_new(const struct cxs_engine *e)
{
	struct async_state *a = engine_xcalloc(1, sizeof *a);
	a->in_clock = engine_xcalloc((size_t)e->nranks, sizeof *a->in_clock);
	a->peer = engine_xcalloc((size_t)e->nranks, 1);
	a->fin = engine_xcalloc((size_t)e->nranks, 1);
	a->awaited = engine_xcalloc((size_t)e->nranks, sizeof *a->awaited);
	a->sent = engine_xcalloc((size_t)e->nranks, sizeof *a->sent);
	a->plist = engine_xcalloc((size_t)e->nranks, sizeof *a->plist);
	a->len = 64 * e->cfg.lookahead;
	a->rreq = MPI_REQUEST_NULL;
	return a;
}

void async_free(struct async_state *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nfl; i++) {
		if (a->fl[i].req != MPI_REQUEST_NULL)
			MPI_Request_free(&a->fl[i].req); /* to a dead rank: its buffer may still be read */
		else
			free(a->fl[i].buf.data);
	}
	for (size_t i = 0; i < a->npool; i++)
		free(a->pool[i].data);
	free(a->fl);
	free(a->pool);
	free(a->rbuf.data);
	free(a->in_clock);
	free(a->peer);
	free(a->fin);
	free(a->awaited);
	free(a->sent);
	free(a->plist);
	free(a);
}

/* ---- the stretch's end ----------------------------------------------------- */

bool async_plan(struct cxs_engine *e, cxs_time gmin, cxs_time *T)
{
	struct async_state *a = e->as;
	if (!a || e->nlive < 2 || e->epoch_fresh)
		return false;
	cxs_time t = tsat_add(gmin, a->len);
	if (t > e->cfg.end_time)
		t = e->cfg.end_time;
	if (e->kill_pending >= 0 && t > e->cfg.kills[e->kill_pending].time)
		t = e->cfg.kills[e->kill_pending].time;
	if (t <= gmin)
		return false; /* a kill or fail due now: the window machinery fires it */
	*T = t;
	return true;
}

void async_adapt(struct cxs_engine *e, uint64_t slowest_ns)
{
	struct async_state *a = e->as;
	if (!a || slowest_ns == 0)
		return;
	cxs_time L = e->cfg.lookahead;
	double s = (double)slowest_ns * 1e-9;
	if (s < ASYNC_TARGET_S / 2 && a->len < ASYNC_MAX_WINDOWS * L)
		a->len *= 2;
	else if (s > ASYNC_TARGET_S * 2 && a->len >= 8 * L)
		a->len /= 2;
}

uint64_t async_take_wall_ns(struct cxs_engine *e)
{
	if (!e->as)
		return 0;
	uint64_t ns = (uint64_t)e->as->wall_ns;
	e->as->wall_ns = 0;
	return ns;
}

/* ---- sending --------------------------------------------------------------- */

/* Whether a send above the eager limit is still in flight (after reap). */
static bool big_in_flight(const struct async_state *a)
{
	for (size_t i = 0; i < a->nfl; i++)
		if (a->fl[i].len > ASYNC_EAGER_BYTES)
			return true;
	return false;
}

static void reap(struct async_state *a)
{
	size_t j = 0;
	for (size_t i = 0; i < a->nfl; i++) {
		int done = 0;
		MPI_Test(&a->fl[i].req, &done, MPI_STATUS_IGNORE);
		if (!done) {
			a->fl[j++] = a->fl[i];
			continue;
		}
		if (a->npool == a->cappool) {
			a->cappool = a->cappool ? 2 * a->cappool : 16;
			a->pool = realloc(a->pool, a->cappool * sizeof *a->pool);
			if (!a->pool)
				cxs_bug(NULL, "out of memory for the asynchronous sends");
		}
		a->pool[a->npool++] = a->fl[i].buf;
	}
	a->nfl = j;
}

/* This rank's promise now: nothing it sends from here on is below it. */
static cxs_time clock_now(const struct cxs_engine *e)
{
	return tsat_add(tmin(cxs_eq_min_time(&e->eq), e->as->B), e->cfg.lookahead);
}

/* Sends peer d its batch and the clock (final: the last message of the stretch). */
static void flush_to(struct cxs_engine *e, int d, bool final)
{
	struct async_state *a = e->as;
	struct batch_buf *b = &e->out[d];
	if (!e->alive[d]) {
		b->len = 0; /* a rank that died: what was for it is dropped (build_contrib) */
		b->nevents = 0;
		return;
	}
	struct async_trailer tr = {.clock = final ? CXS_TIME_INF : clock_now(e),
				   .flags = final ? ASYNC_FINAL : 0};
	batch_append_bytes(b, &tr, sizeof tr);
	if (a->nfl == a->capfl) {
		a->capfl = a->capfl ? 2 * a->capfl : 16;
		a->fl = realloc(a->fl, a->capfl * sizeof *a->fl);
		if (!a->fl)
			cxs_bug(NULL, "out of memory for the asynchronous sends");
	}
	struct async_flight *f = &a->fl[a->nfl++];
	f->buf = (struct async_buf){b->data, b->cap};
	f->dst = d;
	f->len = b->len;
	MPI_Isend(b->data, (int)b->len, MPI_BYTE, d, tag_async(e->w), MPI_COMM_WORLD, &f->req);
	door_ring(e->door, d);
	e->fig.batches_sent += b->nevents > 0;
	e->fig.clock_msgs++;
	if (a->npool) {
		struct async_buf nb = a->pool[--a->npool];
		b->data = nb.data;
		b->cap = nb.cap;
	} else {
		b->data = NULL;
		b->cap = 0;
	}
	b->len = 0;
	b->nevents = 0;
	a->sent[d] = tr.clock;
}

/* Every peer whose last clock is below this rank's promise now (all of them if final). */
static void flush(struct cxs_engine *e, bool final)
{
	struct async_state *a = e->as;
	cxs_time c = clock_now(e);
	reap(a);
	for (int i = 0; i < a->npeers; i++) {
		int d = a->plist[i];
		if (final || c > a->sent[d])
			flush_to(e, d, final);
	}
}

/*
 * On the way through a burst (every ASYNC_CHECK_EVENTS events): a peer gets
 * this rank's clock whenever it has risen by L / ASYNC_GAP since the last
 * one sent to it, so a peer that waits learns of progress within an eighth
 * of a window. Measured on the 16x4 ocean_cp run at np = 2 (loop wall,
 * medians of 7 alternating runs): L/2 1.00 s, L/4 0.94 s, L/8 0.91 s,
 * L/16 0.95 s, L/32 0.97 s (windows: 1.05 s) — smaller steps cost more
 * messages than they save waiting. Sending only to a peer known to wait
 * (a want published in the doorbell segment) was slower, 0.99 s against
 * 0.94 s at L/4: a waiting peer then got just past what it needed and
 * waited again.
 */
static void flush_due(struct cxs_engine *e)
{
	struct async_state *a = e->as;
	cxs_time c = clock_now(e), gap = e->cfg.lookahead / ASYNC_GAP;
	if (gap == 0)
		gap = 1; /* a lookahead below ASYNC_GAP ps: at most a message per picosecond */
	bool reaped = false;
	for (int i = 0; i < a->npeers; i++) {
		int d = a->plist[i];
		if (c < tsat_add(a->sent[d], gap))
			continue;
		if (!reaped) {
			reap(a);
			reaped = true;
		}
		flush_to(e, d, false);
	}
}

/* ---- receiving -------------------------------------------------------------- */

static void recompute_bound(struct async_state *a, const struct cxs_engine *e)
{
	cxs_time B = CXS_TIME_INF;
	for (int s = 0; s < e->nranks; s++)
		if (a->peer[s] && a->in_clock[s] < B)
			B = a->in_clock[s];
	a->B = B;
}

static void take_message(struct cxs_engine *e, int src, const unsigned char *p, size_t len)
{
	struct async_state *a = e->as;
	struct async_trailer tr;
	if (len < sizeof tr || !a->peer[src])
		cxs_bug(NULL, "malformed asynchronous message from rank %d", src);
	if (!e->alive[src])
		return; /* sent before it died; the run stops with an error (on_death) */
	memcpy(&tr, p + len - sizeof tr, sizeof tr);
	engine_unpack_batch(e, p, len - sizeof tr, src);
	e->last_heard[src] = comm_now();
	if (tr.flags & ASYNC_FINAL) {
		if (a->fin[src])
			cxs_bug(NULL, "two final messages from rank %d in one stretch", src);
		a->fin[src] = 1;
		a->nfinal_wait--;
		a->in_clock[src] = CXS_TIME_INF;
	} else if (tr.clock > a->in_clock[src]) {
		a->in_clock[src] = tr.clock;
	}
	recompute_bound(a, e);
}

/*
 * Gives up the receive in progress (its source died): it will never
 * complete, and while it is pending drain() looks at nothing else. Its
 * buffer may still be written, so it is left to MPI.
 */
static void drop_receive(struct async_state *a)
{
	MPI_Cancel(&a->rreq);
	MPI_Request_free(&a->rreq);
	a->rreq = MPI_REQUEST_NULL;
	a->rbuf.data = NULL;
	a->rbuf.cap = 0;
}

/*
 * Receives what has arrived, without waiting; returns how many messages. A
 * message above the eager limit may need several calls: its receive stays
 * pending in a->rreq and the caller's wait keeps both ends moving.
 */
static int drain(struct cxs_engine *e)
{
	struct async_state *a = e->as;
	int got = 0;
	for (;;) {
		if (a->rreq != MPI_REQUEST_NULL && !e->alive[a->rsrc])
			drop_receive(a);
		if (a->rreq != MPI_REQUEST_NULL) {
			int done = 0;
			MPI_Test(&a->rreq, &done, MPI_STATUS_IGNORE);
			if (!done) {
				e->wait_busy = true;
				return got;
			}
			take_message(e, a->rsrc, a->rbuf.data, (size_t)a->rlen);
			got++;
		}
		int flag = 0;
		MPI_Message m;
		MPI_Status st;
		MPI_Improbe(MPI_ANY_SOURCE, tag_async(e->w), MPI_COMM_WORLD, &flag, &m, &st);
		if (!flag)
			return got;
		int n = 0;
		MPI_Get_count(&st, MPI_BYTE, &n);
		if ((size_t)n > a->rbuf.cap) {
			size_t cap = a->rbuf.cap ? a->rbuf.cap : 4096;
			while (cap < (size_t)n)
				cap *= 2;
			free(a->rbuf.data);
			a->rbuf.data = malloc(cap);
			if (!a->rbuf.data)
				cxs_bug(NULL, "out of memory for a batch of %zu bytes", cap);
			a->rbuf.cap = cap;
		}
		a->rsrc = st.MPI_SOURCE;
		a->rlen = n;
		MPI_Imrecv(a->rbuf.data, n, MPI_BYTE, &m, &a->rreq);
	}
}

static int poll_async(void *ctx, int arg)
{
	(void)arg;
	return drain(ctx) > 0 ? 0 : 1;
}

/* ---- the stretch ------------------------------------------------------------ */

static void begin(struct cxs_engine *e, cxs_time T)
{
	struct async_state *a = e->as;
	a->T = T;
	a->final_sent = false;
	a->nfinal_wait = 0;
	memset(a->peer, 0, (size_t)e->nranks);
	memset(a->fin, 0, (size_t)e->nranks);
	for (int i = 0; i < e->nlive; i++) {
		int s = e->live[i];
		if (s == e->rank)
			continue;
		a->in_clock[s] = engine_first_send(e, e->result, s);
		a->peer[s] = 1;
		a->sent[s] = 0;
		a->nfinal_wait++;
	}
	a->npeers = 0;
	for (int s = 0; s < e->nranks; s++)
		if (a->peer[s])
			a->plist[a->npeers++] = s;
	recompute_bound(a, e);
}

/*
 * Handles the events below min(B, T), sending the clock on the way. It does
 * not look for the peers' messages meanwhile: B matters only once reached,
 * and an MPI probe costs about 20 events' worth of a lookahead's work (the
 * 16x4 ocean_cp run at np = 2 was 10 % busier probing every 16 events).
 */
static void burst(struct cxs_engine *e)
{
	struct async_state *a = e->as;
	double t0 = comm_now(), last_service = t0;
	unsigned n = 0;
	while (!e->abort_code && cxs_eq_min_time(&e->eq) < tmin(a->B, a->T)) {
		engine_handle_next(e);
		if (++n % ASYNC_CHECK_EVENTS)
			continue;
		flush_due(e);
		if (n % SERVICE_EVERY_EVENTS == 0) {
			double now = comm_now();
			if (now - last_service > SERVICE_INTERVAL_S) {
				comm_service(e);
				last_service = now;
			}
		}
	}
	e->fig.busy_wall_s += comm_now() - t0;
}

/*
 * A peer died inside the stretch: nothing can be made exact of it (header),
 * and the decision has set the run's error on every survivor
 * (engine_on_decision). The stretch still ends as usual among the live
 * ranks — each sends its final, at once since it handles nothing more, and
 * receives every live peer's — so that no live rank is left waiting for a
 * send (above the eager limit) that a peer which moved on never receives;
 * the dead are counted as finished. The next reduction then carries the
 * abort to everyone.
 */
static void on_death(struct cxs_engine *e)
{
	struct async_state *a = e->as;
	for (int s = 0; s < e->nranks; s++) {
		if (!a->peer[s] || e->alive[s])
			continue;
		if (!a->fin[s]) {
			a->fin[s] = 1;
			a->nfinal_wait--;
		}
		a->in_clock[s] = CXS_TIME_INF;
	}
	if (a->rreq != MPI_REQUEST_NULL && !e->alive[a->rsrc])
		drop_receive(a);
	recompute_bound(a, e);
}

static enum wait_result wait_peers(struct cxs_engine *e)
{
	struct async_state *a = e->as;
	a->nawaited = 0;
	for (int s = 0; s < e->nranks; s++)
		if (a->peer[s] && (!a->fin[s] || (a->rreq != MPI_REQUEST_NULL && a->rsrc == s)))
			a->awaited[a->nawaited++] = s;
	reap(a);
	e->wait_busy = big_in_flight(a) || a->rreq != MPI_REQUEST_NULL;
	enum wait_result r = comm_wait_poll(e, poll_async, e, 0, a->awaited, a->nawaited);
	e->wait_busy = false;
	return r;
}

static void finish(struct cxs_engine *e)
{
	struct async_state *a = e->as;
	for (;;) {
		reap(a);
		if (a->nfl == 0)
			return;
		MPI_Request *reqs = engine_xcalloc(a->nfl, sizeof *reqs);
		int *dst = engine_xcalloc(a->nfl, sizeof *dst);
		for (size_t i = 0; i < a->nfl; i++) {
			reqs[i] = a->fl[i].req;
			dst[i] = a->fl[i].dst;
		}
		e->wait_busy = big_in_flight(a);
		enum wait_result r = comm_wait(e, reqs, (int)a->nfl, dst, (int)a->nfl);
		e->wait_busy = false;
		for (size_t i = 0; i < a->nfl; i++)
			a->fl[i].req = reqs[i];
		free(reqs);
		free(dst);
		if (r == WAIT_OK)
			continue;
		/* To a rank that died: forget the send; its buffer may still be read, so leak it. */
		size_t j = 0;
		for (size_t i = 0; i < a->nfl; i++) {
			if (!e->alive[a->fl[i].dst] && a->fl[i].req != MPI_REQUEST_NULL) {
				MPI_Request_free(&a->fl[i].req);
				continue;
			}
			a->fl[j++] = a->fl[i];
		}
		a->nfl = j;
	}
}

void async_stretch(struct cxs_engine *e, cxs_time T)
{
	struct async_state *a = e->as;
	double t0 = comm_now();
	begin(e, T);
	for (;;) {
		if (!e->abort_code && cxs_eq_min_time(&e->eq) < tmin(a->B, a->T))
			burst(e);
		if (!a->final_sent) {
			bool done = e->abort_code ||
				    (cxs_eq_min_time(&e->eq) >= a->T && a->B >= a->T);
			if (done) {
				flush(e, true);
				a->final_sent = true;
			} else {
				flush(e, false);
			}
		}
		if (a->final_sent && a->nfinal_wait == 0 && a->rreq == MPI_REQUEST_NULL)
			break;
		if (drain(e) > 0)
			continue;
		if (wait_peers(e) == WAIT_CHANGED)
			on_death(e);
	}
	finish(e);
	/* Everything sent in the stretch has arrived: the next reduction must not count it. */
	uint64_t *sm = red_sentmin(&e->rl, e->contrib);
	for (int d = 0; d < e->nranks; d++)
		sm[d] = CXS_TIME_INF;
	e->fig.stretches++;
	a->wall_ns = (comm_now() - t0) * 1e9;
}
