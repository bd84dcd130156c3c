/*
 * trace_test_prog.c — the program `ctest -L trace` records with the cxltrace
 * tool and replays (tests/mpi/trace_tool.sh). Three modes, each a known
 * shape of memory traffic:
 *
 *   chase NODES      a pointer chase through NODES 64-byte nodes in a random
 *                    cycle: each load's address is the previous load's value
 *                    (replayed with dataflow: MLP 1)
 *   stream BYTES     a sum over BYTES of 8-byte words, unrolled by a line:
 *                    independent loads (replayed: MLP near the core's fill
 *                    buffers)
 *   sync T ITERS P   T threads (the main one and T-1 created), P phases of
 *                    ITERS increments of one counter under one mutex, a
 *                    barrier after each phase (two barrier objects taken in
 *                    turn); the main thread joins the
 *                    others and asks the replay to check the counter is
 *                    T * ITERS * P (CXLTRACE_CHECK)
 *   recursive T ITERS  T threads, ITERS increments each under a
 *                    PTHREAD_MUTEX_RECURSIVE mutex taken twice (the
 *                    increment's function locks it again, as sqlite's
 *                    mutexes are), no barrier; the main thread joins the
 *                    others and has the counter checked (T * ITERS)
 *   joinheld T       pigz's shape: T-1 workers each take a mutex once, count
 *                    themselves and signal; the main thread waits on a
 *                    condition variable until all have, then joins them
 *                    all while still holding the mutex, and has the count
 *                    checked (T - 1). A replay that lets main take the mutex
 *                    before a worker does waits for ever at the join
 *   reuse T ITERS    sqlite's heap mutexes: T threads increment under a
 *                    malloc'd mutex, which is then destroyed and freed; its
 *                    memory is allocated again (the same address), zeroed
 *                    by the program and holds a new mutex, taken ITERS more
 *                    times by the main thread. The program's zeroing stores
 *                    land on the replay's lock word
 *
 * chase and stream set their data up first and are recorded from the entry
 * of the function named after them (--roi-start); sync from the first
 * pthread_create (the default). Built with -O2 and without sanitizers: it is
 * run under Valgrind, not tested by itself.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxlsim/cxltrace.h"

struct node {
	struct node *next;
	char pad[56];
};

/* noinline: the recorder starts at their entry */
__attribute__((noinline)) struct node *chase(struct node *p, long n)
{
	for (long i = 0; i < n; i++)
		p = p->next;
	return p;
}

/* Unrolled by a line, so that loads come back to back as in CAMP's sequential-read loop. */
__attribute__((noinline)) uint64_t stream(const uint64_t *a, long n)
{
	uint64_t s0 = 0, s1 = 0;
	for (long i = 0; i + 8 <= n; i += 8) {
		s0 += a[i] + a[i + 1] + a[i + 2] + a[i + 3];
		s1 += a[i + 4] + a[i + 5] + a[i + 6] + a[i + 7];
	}
	return s0 + s1;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t barrier[2]; /* alternating: a replay must keep them apart */
static volatile uint64_t counter;
static long iters, phases;

static void *worker(void *arg)
{
	uint64_t mine = 0;
	(void)arg;
	for (long p = 0; p < phases; p++) {
		for (long i = 0; i < iters; i++) {
			pthread_mutex_lock(&lock);
			counter++;
			pthread_mutex_unlock(&lock);
			mine += (uint64_t)i * 7; /* a little private work */
		}
		pthread_barrier_wait(&barrier[p % 2]);
	}
	return (void *)(uintptr_t)mine;
}

static pthread_mutex_t rlock;

/* Locks rlock again, holding it already: a recursive mutex's second level. */
__attribute__((noinline)) static void bump_nested(void)
{
	pthread_mutex_lock(&rlock);
	counter++;
	pthread_mutex_unlock(&rlock);
}

static void *recursive_worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < iters; i++) {
		pthread_mutex_lock(&rlock);
		bump_nested();
		pthread_mutex_unlock(&rlock);
	}
	return NULL;
}

static pthread_cond_t joined_cv = PTHREAD_COND_INITIALIZER;
static volatile long arrived;

static void *joinheld_worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	arrived++;
	pthread_cond_signal(&joined_cv);
	pthread_mutex_unlock(&lock);
	return NULL;
}

struct box {
	pthread_mutex_t m;
	long v;
};
static struct box *volatile bx;

static void *reuse_worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < iters; i++) {
		pthread_mutex_lock(&bx->m);
		bx->v++;
		pthread_mutex_unlock(&bx->m);
	}
	return NULL;
}

/* Starts t - 1 threads running fn, or returns NULL. */
static pthread_t *start_threads(long t, void *(*fn)(void *))
{
	pthread_t *th = calloc((size_t)t, sizeof *th);
	for (long i = 1; th && i < t; i++)
		if (pthread_create(&th[i], NULL, fn, NULL) != 0)
			return NULL;
	return th;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "chase") == 0) {
		long n = atol(argv[2]);
		struct node *nodes = calloc((size_t)n, sizeof *nodes);
		long *perm = malloc((size_t)n * sizeof *perm);
		if (!nodes || !perm || n < 2)
			return 1;
		for (long i = 0; i < n; i++)
			perm[i] = i;
		srand(1);
		for (long i = n - 1; i > 0; i--) {
			long j = rand() % (i + 1), t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
		for (long i = 0; i < n; i++)
			nodes[perm[i]].next = &nodes[perm[(i + 1) % n]];
		printf("%p\n", (void *)chase(&nodes[perm[0]], n));
		return 0;
	}
	if (argc >= 3 && strcmp(argv[1], "stream") == 0) {
		long n = atol(argv[2]) / 8;
		uint64_t *a = malloc((size_t)n * sizeof *a);
		if (!a)
			return 1;
		for (long i = 0; i < n; i++)
			a[i] = (uint64_t)i;
		printf("%llu\n", (unsigned long long)stream(a, n));
		return 0;
	}
	if (argc >= 5 && strcmp(argv[1], "sync") == 0) {
		long t = atol(argv[2]);
		iters = atol(argv[3]);
		phases = atol(argv[4]);
		pthread_t *th = calloc((size_t)t, sizeof *th);
		if (!th || t < 1 || pthread_barrier_init(&barrier[0], NULL, (unsigned)t) != 0 ||
		    pthread_barrier_init(&barrier[1], NULL, (unsigned)t) != 0)
			return 1;
		for (long i = 1; i < t; i++)
			if (pthread_create(&th[i], NULL, worker, NULL) != 0)
				return 1;
		worker(NULL);
		for (long i = 1; i < t; i++)
			pthread_join(th[i], NULL);
		CXLTRACE_CHECK(&counter, 8, (uint64_t)(t * iters * phases));
		printf("%llu\n", (unsigned long long)counter);
		return counter == (uint64_t)(t * iters * phases) ? 0 : 1;
	}
	if (argc >= 4 && strcmp(argv[1], "recursive") == 0) {
		long t = atol(argv[2]);
		pthread_mutexattr_t ma;
		iters = atol(argv[3]);
		if (t < 1 || pthread_mutexattr_init(&ma) != 0 ||
		    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE) != 0 ||
		    pthread_mutex_init(&rlock, &ma) != 0)
			return 1;
		pthread_t *th = start_threads(t, recursive_worker);
		if (!th)
			return 1;
		recursive_worker(NULL);
		for (long i = 1; i < t; i++)
			pthread_join(th[i], NULL);
		CXLTRACE_CHECK(&counter, 8, (uint64_t)(t * iters));
		printf("%llu\n", (unsigned long long)counter);
		return counter == (uint64_t)(t * iters) ? 0 : 1;
	}
	if (argc >= 3 && strcmp(argv[1], "joinheld") == 0) {
		long t = atol(argv[2]);
		pthread_t *th = t >= 2 ? start_threads(t, joinheld_worker) : NULL;
		if (!th)
			return 1;
		pthread_mutex_lock(&lock);
		while (arrived < t - 1)
			pthread_cond_wait(&joined_cv, &lock);
		for (long i = 1; i < t; i++) /* holding the mutex, as pigz's join_all */
			pthread_join(th[i], NULL);
		CXLTRACE_CHECK(&arrived, 8, (uint64_t)(t - 1));
		pthread_mutex_unlock(&lock);
		printf("%ld\n", arrived);
		return arrived == t - 1 ? 0 : 1;
	}
	if (argc >= 4 && strcmp(argv[1], "reuse") == 0) {
		long t = atol(argv[2]);
		iters = atol(argv[3]);
		bx = malloc(sizeof *bx);
		if (t < 1 || !bx || pthread_mutex_init(&bx->m, NULL) != 0)
			return 1;
		bx->v = 0;
		pthread_t *th = start_threads(t, reuse_worker);
		if (!th)
			return 1;
		reuse_worker(NULL);
		for (long i = 1; i < t; i++)
			pthread_join(th[i], NULL);
		long first = bx->v;
		struct box *old = bx;
		pthread_mutex_destroy(&bx->m);
		free(bx);
		bx = malloc(sizeof *bx);
		if (!bx)
			return 1;
		memset(bx, 0, sizeof *bx); /* sqlite3MallocZero */
		pthread_mutex_init(&bx->m, NULL);
		reuse_worker(NULL);
		CXLTRACE_CHECK(&bx->v, 8, (uint64_t)iters);
		printf("%ld %ld %s\n", first, bx->v, bx == old ? "reused" : "moved");
		return first == t * iters && bx->v == iters ? 0 : 1;
	}
	fprintf(stderr, "usage: %s chase NODES | stream BYTES | sync THREADS ITERS PHASES |"
		" recursive THREADS ITERS | joinheld THREADS | reuse THREADS ITERS\n", argv[0]);
	return 2;
}
