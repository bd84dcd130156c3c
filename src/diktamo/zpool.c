/*
 * zpool.c — the chunks of one log dump compressed on the processors this
 * rank has to spare (cxs_dk_compress_all, diktamo_priv.h).
 *
 * A dump compresses one chunk per destination MN with zlib at level 9
 * (log_format.c), up to 16 independent buffers at 16 x 4, and at level 9
 * deflate runs at ~35 MB/s on our logs: the 15 MB of the 16 x 4 ocean_cp 128
 * proactive run took 0.42 s, a ninth of its event loop, all of it at the
 * dump round that follows the workload (no simulated work overlaps it). The
 * chunks do not depend on each other, so a rank with processors to spare
 * compresses them side by side, inside the dump's event: the bytes, their
 * lengths and everything the simulation does with them are the same as
 * compressing one after the other (a deflate stream is a function of its
 * input and level), at any thread count — tests/mpi/diktamo_ranks.sh
 * compares the runs at 1 and 3 threads.
 *
 * Threads: diktamo.compress_threads, 0 (the default) for "the processors
 * this process may run on, divided among the ranks of this host that share
 * them": sched_getaffinity's count over OMPI_COMM_WORLD_LOCAL_SIZE (1 when
 * not under mpirun), at most ZPOOL_MAX. Under mpirun with one rank per core
 * the ranks are bound to a core each and get 1, which compresses in the
 * caller as before; a lone cxlsim on a laptop gets its cores. Workers are
 * started on the first dump that can use them and live as long as the
 * process; they sleep on a condition variable between dumps, never spin, and
 * block every signal (the engine's SIGINT/SIGTERM handling stays on the main
 * thread). A dump's caller takes chunks as well, so threads = 2 starts one
 * worker. They call zlib only: never MPI, HDF5 or the engine.
 *
 * Chosen over OpenMP (gcc's libgomp): its idle threads spin after each
 * parallel region (OMP_WAIT_POLICY is read once, at load) and would take the
 * core of the next rank at np = 2 on two processors; over compressing on a
 * thread while the simulation goes on (the sends wait until the dump's end
 * anyway): it would need a second kind of send, and the final dump, which is
 * most of the work, has nothing to overlap.
 */
#define _GNU_SOURCE
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
	/* the batch in progress (njobs 0: none) */
	struct cxs_dk_zjob *jobs;
	size_t njobs, next, finished;
	int level;
	uint64_t batch; /* batches begun: a worker sleeps until the next */
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

static void run(struct cxs_dk_zjob *j, int level)
{
	j->rc = cxs_dk_compress(j->raw, j->raw_len, level, &j->out, &j->out_len);
}

/* Takes and runs the batch's jobs until none is left; called with pool.mu held. */
static void take_jobs(void)
{
	while (pool.next < pool.njobs) {
		struct cxs_dk_zjob *j = &pool.jobs[pool.next++];
		int level = pool.level;
		pthread_mutex_unlock(&pool.mu);
		run(j, level);
		pthread_mutex_lock(&pool.mu);
		if (++pool.finished == pool.njobs)
			pthread_cond_signal(&pool.done);
	}
}

static void *worker(void *arg)
{
	(void)arg;
	uint64_t seen = 0;
	pthread_mutex_lock(&pool.mu);
	for (;;) {
		while (pool.batch == seen)
			pthread_cond_wait(&pool.work, &pool.mu);
		seen = pool.batch;
		take_jobs();
	}
	return NULL;
}

/* Starts workers up to `want` (fewer if the system refuses: the caller does the rest). */
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

int cxs_dk_compress_all(struct cxs_dk_zjob *jobs, size_t n, int level, unsigned threads)
{
	if (threads <= 1 || n <= 1) {
		for (size_t i = 0; i < n; i++)
			run(&jobs[i], level);
	} else {
		pthread_mutex_lock(&pool.mu);
		grow((unsigned)(threads - 1 < n - 1 ? threads - 1 : n - 1));
		pool.jobs = jobs;
		pool.njobs = n;
		pool.next = pool.finished = 0;
		pool.level = level;
		pool.batch++;
		pthread_cond_broadcast(&pool.work);
		take_jobs();
		while (pool.finished < pool.njobs)
			pthread_cond_wait(&pool.done, &pool.mu);
		pool.njobs = 0;
		pool.jobs = NULL;
		pthread_mutex_unlock(&pool.mu);
	}
	for (size_t i = 0; i < n; i++)
		if (jobs[i].rc != 0)
			return -1;
	return 0;
}
