/*
 * zpool.c — the Logging Units' compression on the processors this rank has
 * to spare (cxs_dk_zchain_*, diktamo.h).
 *
 * A unit compresses each destination MN's share of its log as the drain
 * deposits it (log_unit.c, "Streams"): one deflate stream per destination,
 * fed a segment of CXS_DK_LOG_SEGMENT entries at a time (log_format.c) and
 * finished at the dump. At level 9 deflate runs at ~50 MB/s on our logs;
 * the 30 MB of the 16 x 4 ocean_cp 128 proactive run took 0.27 s of wall
 * time on two threads when it was all compressed at the dump that follows
 * the workload, a tenth of the event loop, with no simulated work beside
 * it. A chain is one writer's queue of segments. Pushed segments are
 * deflated in the order given, on a worker thread while the simulation goes
 * on, and a wait (at the dump) takes the queued work itself until its chains
 * are done. The bytes are a function of each writer's segments alone (a
 * deflate stream is a function of its input calls and level), so the chunks,
 * their lengths and everything the simulation does with them are the same
 * at any thread count — tests/mpi/diktamo_ranks.sh compares the runs at 1
 * and 3 threads, unit.diktamo the chains at 1, 2 and 9.
 *
 * Threads: diktamo.compress_threads, 0 (the default) for "the processors
 * this process may run on, divided among the ranks of this host that share
 * them": sched_getaffinity's count over OMPI_COMM_WORLD_LOCAL_SIZE (1 when
 * not under mpirun), at most ZPOOL_MAX. Under mpirun with one rank per core
 * the ranks get 1, which deflates each segment in the caller when it is
 * pushed; a lone cxlsim on a laptop gets its cores, threads - 1 of them
 * workers. Workers are started by the first push that can use them and live
 * as long as the process; they sleep on a condition variable when no chain
 * has work, never spin, and block every signal (the engine's SIGINT/SIGTERM
 * handling stays on the main thread). They call zlib and free only: never
 * MPI, HDF5 or the engine; only the worker that holds a chain touches its
 * writer, and the owner touches it again only after a wait.
 *
 * Chosen over OpenMP (gcc's libgomp): its idle threads spin after each
 * parallel region (OMP_WAIT_POLICY is read once, at load) and would take the
 * core of the next rank at np = 2 on two processors, and a parallel region
 * ends where it starts, while a chain's work runs on behind the caller.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>

#include "cxlsim/diktamo.h"
#include "diktamo_priv.h"

#define ZPOOL_MAX 8

static struct {
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	unsigned workers;
	struct cxs_dk_zchain *run_head, *run_tail; /* chains with work, none being run */
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,
	    .done = PTHREAD_COND_INITIALIZER};

unsigned cxs_dk_compress_threads(unsigned configured)
{
	if (configured > 0)
		return configured > ZPOOL_MAX ? ZPOOL_MAX : configured;
	cpu_set_t set;
	long cpus = 1;
	if (sched_getaffinity(0, sizeof set, &set) == 0)
		cpus = CPU_COUNT(&set);
	const char *l = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
	long local = l ? strtol(l, NULL, 10) : 1;
	long t = cpus / (local > 0 ? local : 1);
	return t < 1 ? 1 : t > ZPOOL_MAX ? ZPOOL_MAX : (unsigned)t;
}

/* One segment's work on its chain's writer (no lock held: the caller holds the chain). */
static void run_seg(struct cxs_dk_zchain *c, struct cxs_dk_zseg *s)
{
	if (cxs_dk_writer_add(c->w, s->e, s->n) != 0)
		c->rc = -1;
	if (s->finish) {
		if (cxs_dk_writer_finish(c->w, &c->out, &c->out_len, &c->raw_len) != 0)
			c->rc = -1;
		c->finished = true;
	}
	free(s);
}

/* Runs chain c's segments until none is left; called with pool.mu held, c taken off the queue. */
static void run_chain(struct cxs_dk_zchain *c)
{
	while (c->head != NULL) {
		struct cxs_dk_zseg *s = c->head;
		c->head = s->next;
		if (c->head == NULL)
			c->tail = NULL;
		pthread_mutex_unlock(&pool.mu);
		run_seg(c, s);
		pthread_mutex_lock(&pool.mu);
	}
	c->queued = false;
	pthread_cond_broadcast(&pool.done);
}

static struct cxs_dk_zchain *pop_run(void)
{
	struct cxs_dk_zchain *c = pool.run_head;
	if (c != NULL) {
		pool.run_head = c->run_next;
		if (pool.run_head == NULL)
			pool.run_tail = NULL;
		c->run_next = NULL;
	}
	return c;
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pool.mu);
	for (;;) {
		struct cxs_dk_zchain *c;
		while ((c = pop_run()) == NULL)
			pthread_cond_wait(&pool.work, &pool.mu);
		run_chain(c);
	}
	return NULL;
}

/* Starts workers up to `want` (fewer if the system refuses: waits run the work then). */
static void grow(unsigned want)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (pool.workers < want) {
		pthread_t t;
		if (pthread_create(&t, NULL, worker, NULL) != 0)
			break;
		pthread_detach(t);
		pool.workers++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

struct cxs_dk_zseg *cxs_dk_zseg_new(void)
{
	struct cxs_dk_zseg *s = malloc(sizeof *s);
	if (s != NULL) {
		s->next = NULL;
		s->n = 0;
		s->finish = false;
	}
	return s;
}

void cxs_dk_zchain_push(struct cxs_dk_zchain *c, struct cxs_dk_zseg *s, unsigned threads)
{
	s->next = NULL;
	if (threads <= 1) {
		assert(!c->queued && c->head == NULL);
		run_seg(c, s);
		return;
	}
	pthread_mutex_lock(&pool.mu);
	if (pool.workers < threads - 1)
		grow(threads - 1);
	if (c->tail != NULL)
		c->tail->next = s;
	else
		c->head = s;
	c->tail = s;
	if (!c->queued) {
		c->queued = true;
		if (pool.run_tail != NULL)
			pool.run_tail->run_next = c;
		else
			pool.run_head = c;
		pool.run_tail = c;
		pthread_cond_signal(&pool.work);
	}
	pthread_mutex_unlock(&pool.mu);
}

void cxs_dk_zchain_wait(struct cxs_dk_zchain *const *c, size_t n)
{
	pthread_mutex_lock(&pool.mu);
	for (size_t i = 0; i < n;) {
		if (c[i] == NULL || !c[i]->queued) {
			i++;
			continue;
		}
		/* Queued work is taken here rather than waited for (a worker may hold c[i]). */
		struct cxs_dk_zchain *r = pop_run();
		if (r != NULL)
			run_chain(r);
		else
			pthread_cond_wait(&pool.done, &pool.mu);
	}
	pthread_mutex_unlock(&pool.mu);
}

void cxs_dk_zchain_drop(struct cxs_dk_zchain *c)
{
	cxs_dk_zchain_wait(&c, 1);
	free(c->out);
	c->out = NULL;
	c->out_len = c->raw_len = 0;
	c->finished = false;
	c->rc = 0;
}
