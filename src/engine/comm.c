/*
 * comm.c — how a rank waits: polling with back-off, liveness pings, and the
 * control plane.
 *
 * Waiting. Every wait in the engine goes through comm_wait, which tests its
 * requests in a loop that backs off in stages: a short spin (the common
 * case at np = 2, where the peer answers within microseconds), then sleep.
 * Inside the window loop, when every rank waited for is on this host and
 * none of this rank's own sends is still moving, the sleep is a doorbell
 * (doorbell.c): the rank sleeps in the kernel and the peer's send wakes it
 * at once (in reduce_shm.c's wait, a bell shared by the host's ranks that
 * the reduction's last arrival rings). With more ranks on the host than
 * processors (34 on 2) the spin is only SPIN_POLLS_OVERSUB polls: a rank
 * that cannot go on gives its core away at once. There is no sched_yield stage then: on this 2-core machine,
 * shared with other work, 30 % of the np = 2 16x4 run's cycles went to
 * sched_yield (perf, issue 12), and a yield hands the core to whatever else
 * runs for a whole time slice, so the peer then waits for the yielder.
 * Otherwise (peers on other hosts, agreements, the output phase) the rank
 * yields up to YIELD_POLLS polls, then sleeps with nanosleep doubling from
 * 10 us to 1 ms. Time spent yielding or sleeping is counted as idle time.
 *
 * Liveness. A wait that has made no progress for failure_timeout_s pings the
 * ranks it waits on (the peer of a reduction step, the senders of expected
 * batches). A live rank answers from any wait (comm_service runs inside the
 * loop) and from the event loop, which services control messages at least
 * every few milliseconds of busy work. A rank that stays silent for a further
 * failure_timeout_s after the ping is suspected and the agreement of
 * membership.c starts. So the timeout bounds silence, not work: a rank busy
 * for minutes in a huge window is not suspected, and a descheduled one has the
 * whole timeout to be scheduled again. A rank on this host whose process has
 * ended (doorbell.c, door_ended: killed, or a zombie) is suspected as soon as
 * a wait of ENDED_CHECK_S finds it so, without the two timeouts: the kill
 * tests spent most of their time sitting those out, and a user who kills a
 * rank sees the survivors go on at once.
 *
 * Control messages travel on MPI_COMM_WORLD with TAG_CTL, fire and forget:
 * each send is an MPI_Isend of a private copy that is reaped when it
 * completes, so a send to a dead rank never blocks the sender.
 */
#include "engine_priv.h"
#include "membership_priv.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SPIN_POLLS 256u
#define SPIN_POLLS_OVERSUB 8u
/*
 * Polls before a rank with a core of its own sleeps on the doorbell (about a
 * millisecond): a futex wake-up costs tens of microseconds here, more than
 * a PHOLD window's work, and PHOLD 1024 LPs np = 2 ran 1.5 s with this spin
 * against 2.1 s with 256 polls (medians of 5, loaded machine).
 */
#define DOOR_SPIN_POLLS 4096u
#define YIELD_POLLS 4096u
#define SLEEP_MIN_NS 10000L
#define SLEEP_MAX_NS 1000000L

double comm_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct pending_send {
	MPI_Request req;
	void *buf;
};

static struct pending_send *psends;
static size_t npsends, cap_psends;

static void reap_sends(bool all)
{
	size_t j = 0;
	for (size_t i = 0; i < npsends; i++) {
		int done = 0;
		if (all) {
			/* At exit: a send to a dead rank never completes; drop it. */
			MPI_Test(&psends[i].req, &done, MPI_STATUS_IGNORE);
			if (!done)
				MPI_Request_free(&psends[i].req);
			done = 1;
		} else {
			MPI_Test(&psends[i].req, &done, MPI_STATUS_IGNORE);
		}
		if (done)
			free(psends[i].buf);
		else
			psends[j++] = psends[i];
	}
	npsends = j;
}

void ctl_release_all(void)
{
	reap_sends(true);
	free(psends);
	psends = NULL;
	npsends = cap_psends = 0;
}

void ctl_send(struct cxs_engine *e, int dst, const struct ctl_hdr *h, const uint64_t *tail,
	      size_t ntail)
{
	if (dst == e->rank)
		return;
	size_t len = sizeof *h + ntail * sizeof *tail;
	unsigned char *buf = malloc(len);
	if (!buf)
		cxs_bug(NULL, "out of memory for a control message");
	memcpy(buf, h, sizeof *h);
	if (ntail)
		memcpy(buf + sizeof *h, tail, ntail * sizeof *tail);
	if (npsends == cap_psends) {
		size_t cap = cap_psends ? 2 * cap_psends : 64;
		struct pending_send *p = realloc(psends, cap * sizeof *p);
		if (!p)
			cxs_bug(NULL, "out of memory for a control message");
		psends = p;
		cap_psends = cap;
	}
	MPI_Isend(buf, (int)len, MPI_BYTE, dst, TAG_CTL, MPI_COMM_WORLD, &psends[npsends].req);
	psends[npsends++].buf = buf;
	door_ring(e->door, dst);
}

void ctl_flush(struct cxs_engine *e, double seconds)
{
	(void)e;
	double until = comm_now() + seconds;
	reap_sends(false);
	while (npsends && comm_now() < until) {
		struct timespec ts = {0, 100000};
		nanosleep(&ts, NULL);
		reap_sends(false);
	}
}

/*
 * GONE needs no answer from whatever loop is polling, only a note: it is
 * consumed here, so that every wait records it the same way.
 */
int ctl_poll(struct cxs_engine *e, void **msg, int *len, int *src)
{
	reap_sends(false);
	for (;;) {
		int flag = 0;
		MPI_Message m;
		MPI_Status st;
		MPI_Improbe(MPI_ANY_SOURCE, TAG_CTL, MPI_COMM_WORLD, &flag, &m, &st);
		if (!flag)
			return 0;
		int n = 0;
		MPI_Get_count(&st, MPI_BYTE, &n);
		void *buf = malloc(n > 0 ? (size_t)n : 1);
		if (!buf)
			cxs_bug(NULL, "out of memory for a control message");
		MPI_Mrecv(buf, n, MPI_BYTE, &m, MPI_STATUS_IGNORE);
		if ((size_t)n < sizeof(struct ctl_hdr)) {
			free(buf);
			continue;
		}
		e->last_heard[st.MPI_SOURCE] = comm_now();
		if (((const struct ctl_hdr *)buf)->type == CTL_GONE) {
			membership_note_gone(e, st.MPI_SOURCE);
			free(buf);
			continue;
		}
		*msg = buf;
		*len = n;
		*src = st.MPI_SOURCE;
		return 1;
	}
}

enum wait_result comm_service(struct cxs_engine *e)
{
	enum wait_result r = WAIT_OK;
	void *msg;
	int len, src;
	while (ctl_poll(e, &msg, &len, &src)) {
		const struct ctl_hdr *h = msg;
		if (h->type == CTL_PING) {
			/* A rank we agreed is dead must not be kept going by our answers. */
			struct ctl_hdr pong = {.type = e->alive[src] ? CTL_PONG : CTL_EXCLUDED,
					       .from = (uint32_t)e->rank};
			ctl_send(e, src, &pong, NULL, 0);
		} else if (h->type == CTL_INTERRUPT) {
			/* A parked rank's signal: it goes into this rank's next contributions. */
			if (e->alive[src] && h->a > (uint64_t)e->interrupt_fwd && h->a < 256)
				e->interrupt_fwd = (int)h->a;
		} else if (h->type != CTL_PONG) {
			if (membership_on_ctl(e, msg, len, src) == WAIT_CHANGED)
				r = WAIT_CHANGED;
		}
		free(msg);
	}
	return r;
}

/*
 * How a wait that has spun long enough gives its core away (doorbell.c):
 * asleep on the doorbell; yielding while one of its own transfers is under
 * way (a message above the eager limit moves only while both ends poll, and
 * a sleeping end would stall it for as long as the other sleeps); or, where
 * no bell can ring (a peer on another host, outside the window loop, the
 * agreement), with the nanosleep back-off. Testing the outstanding sends
 * also moves them on.
 */
enum pause { PAUSE_DOOR, PAUSE_YIELD, PAUSE_BACKOFF };

static enum pause how_to_pause(struct cxs_engine *e, bool can_ring)
{
	if (!can_ring || !e->door || !e->door_on || !e->wait_local)
		return PAUSE_BACKOFF;
	if (e->wait_busy)
		return PAUSE_YIELD;
	int done = 1;
	for (int i = 0; i < e->nout_reqs && done; i++)
		if (e->out_reqs[i] != MPI_REQUEST_NULL)
			MPI_Testall(e->nout_reqs, e->out_reqs, &done, MPI_STATUSES_IGNORE);
	if (done && e->red_sreq && *e->red_sreq != MPI_REQUEST_NULL)
		MPI_Test(e->red_sreq, &done, MPI_STATUS_IGNORE);
	if (done && npsends) {
		reap_sends(false);
		done = npsends == 0;
	}
	return done ? PAUSE_DOOR : PAUSE_YIELD;
}

/*
 * One pause of a wait after its poll found it incomplete; returns true if a
 * poll made here found it complete. Before sleeping on the doorbell the wait
 * polls twice after door_arm: Open MPI's test calls report what was complete
 * before they moved MPI on, so a message that arrived (and rang) before
 * door_arm is seen only by the second poll, while one that arrives later
 * rings after door_arm and ends the sleep at once.
 */
static bool pause_wait(struct cxs_engine *e, unsigned *polls, long *sleep_ns, comm_poll_fn *poll,
		       void *ctx, int arg)
{
	unsigned p = ++*polls;
	bool over = door_oversubscribed(e->door);
	if (p < (over ? SPIN_POLLS_OVERSUB : SPIN_POLLS))
		return false;
	double t0 = comm_now();
	enum pause how = how_to_pause(e, poll != NULL);
	bool done = false;
	if (how == PAUSE_DOOR && !over && p < DOOR_SPIN_POLLS)
		return false; /* a free core: spin on, the peer may answer in microseconds */
	if (how == PAUSE_DOOR) {
		struct door_bell *bell = e->wait_bell;
		uint32_t armed = bell ? bell_arm(bell) : door_arm(e->door);
		if (poll(ctx, arg) == 0 || poll(ctx, arg) == 0) {
			done = true;
		} else {
			e->fig.door_sleeps++;
			bool rung = bell ? bell_sleep(bell, armed) : door_sleep(e->door, armed);
			if (!rung)
				e->fig.door_timeouts++;
			/* A shared bell rings for the wait itself, never for a ping. */
			e->door_woke = rung && !bell;
		}
	} else if (how == PAUSE_YIELD || p < YIELD_POLLS) {
		sched_yield();
	} else {
		struct timespec ts = {0, *sleep_ns};
		nanosleep(&ts, NULL);
		*sleep_ns = *sleep_ns * 2 > SLEEP_MAX_NS ? SLEEP_MAX_NS : *sleep_ns * 2;
	}
	e->fig.idle_wall_s += comm_now() - t0;
	return done;
}

void comm_backoff(struct cxs_engine *e, unsigned *polls, long *sleep_ns)
{
	pause_wait(e, polls, sleep_ns, NULL, NULL, 0);
}

static bool any_dead(const struct cxs_engine *e, const int *ranks, int n)
{
	for (int i = 0; i < n; i++)
		if (!e->alive[ranks[i]])
			return true;
	return false;
}

static int testall(void *ctx, int n)
{
	int done = 0;
	MPI_Testall(n, ctx, &done, MPI_STATUSES_IGNORE);
	return !done;
}

enum wait_result comm_wait(struct cxs_engine *e, MPI_Request *reqs, int nreqs,
			   const int *awaited, int nawaited)
{
	return comm_wait_poll(e, testall, reqs, nreqs, awaited, nawaited);
}

enum wait_result comm_wait_poll(struct cxs_engine *e, comm_poll_fn *poll, void *ctx, int arg,
				const int *awaited, int nawaited)
{
	if (poll(ctx, arg) == 0)
		return WAIT_OK; /* already complete: no clock read */
	/*
	 * Waiting on a rank the survivors already agreed is dead would last
	 * forever (a rendezvous send to it never completes, a receive from it
	 * never matches): hand it back to the caller, which gives it up and waits
	 * for the rest.
	 */
	if (any_dead(e, awaited, nawaited))
		return WAIT_CHANGED;
	double t0 = comm_now(), since = t0, ping_at = 0, ended_at = t0;
	unsigned polls = 0;
	long sleep_ns = SLEEP_MIN_NS;
	enum wait_result r = WAIT_OK;
	e->wait_local = e->door != NULL;
	for (int i = 0; i < nawaited && e->wait_local; i++)
		e->wait_local = door_local(e->door, awaited[i]);
	for (;;) {
		if (poll(ctx, arg) == 0)
			break;
		/* Woken by a bell that was not for this wait: maybe a ping, answer it now. */
		bool woke = e->door_woke;
		e->door_woke = false;
		if (((polls & 15) == 15 || woke) && comm_service(e) == WAIT_CHANGED) {
			r = WAIT_CHANGED;
			break;
		}
		if (pause_wait(e, &polls, &sleep_ns, poll, ctx, arg))
			break;
		if (polls < SPIN_POLLS || (polls & 31) != 0)
			continue;
		double now = comm_now();
		double to = e->cfg.failure_timeout_s;
		if (now - ended_at > ENDED_CHECK_S) {
			ended_at = now;
			int gone = comm_first_ended(e, awaited, nawaited);
			if (gone >= 0) {
				if (poll(ctx, arg) == 0)
					break; /* what it sent before it died completed the wait */
				cxs_log(CXS_LOG_WARN, e->now,
					"rank %d's process has ended; starting agreement", gone);
				e->wait_local = false;
				membership_agree(e, "silent", gone);
				r = WAIT_CHANGED;
				break;
			}
		}
		if (ping_at == 0 && now - since > to) {
			struct ctl_hdr ping = {.type = CTL_PING, .from = (uint32_t)e->rank};
			for (int i = 0; i < nawaited; i++)
				if (e->alive[awaited[i]])
					ctl_send(e, awaited[i], &ping, NULL, 0);
			ping_at = now;
		} else if (ping_at != 0 && now - ping_at > to) {
			int suspect = -1;
			for (int i = 0; i < nawaited && suspect < 0; i++)
				if (e->alive[awaited[i]] && e->last_heard[awaited[i]] < ping_at)
					suspect = awaited[i];
			if (suspect < 0) {
				/* Everyone we wait on is alive: they wait on someone else. */
				since = now;
				ping_at = 0;
				continue;
			}
			cxs_log(CXS_LOG_WARN, e->now, "rank %d silent for %.1f s; starting agreement",
				suspect, now - ping_at + to);
			e->wait_local = false; /* the agreement's own waits decide for themselves */
			membership_agree(e, "silent", suspect);
			r = WAIT_CHANGED;
			break;
		}
	}
	e->wait_local = false;
	e->door_woke = false;
	e->fig.sync_wall_s += comm_now() - t0;
	return r;
}

/* The first of the n ranks (alive in our view) whose process has ended, or -1. */
int comm_first_ended(const struct cxs_engine *e, const int *ranks, int n)
{
	for (int i = 0; e->door && i < n; i++)
		if (e->alive[ranks[i]] && door_ended(e->door, ranks[i]))
			return ranks[i];
	return -1;
}

/*
 * Answers pings and agreements from phases that do long work outside the
 * event loop (init, finalize, packing and writing the output), at most every
 * SERVICE_INTERVAL_S: the failure timeout bounds silence, so no phase may be
 * silent for long.
 */
void comm_service_now_and_then(struct cxs_engine *e)
{
	double now = comm_now();
	if (now - e->last_service > SERVICE_INTERVAL_S) {
		e->last_service = now;
		comm_service(e);
	}
}

void comm_service_tick(void *ctx)
{
	comm_service_now_and_then(ctx);
}
