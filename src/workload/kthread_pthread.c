/*
 * kthread_pthread.c — a third backend for thread programs (kthread.h): real
 * threads on real memory, so that a kernel's code compiled -O3 can be run
 * natively and recorded by the cxltrace Valgrind tool like any program
 * (cxlsim-native, src/app/cxlsim_native.c). The simulator's backend and the
 * reference backend are in kthread.c; this file replaces it in that one
 * binary, which links no other part of cxlsim.
 *
 * What each call becomes (the point is to leave only the kernel's own work
 * in the recording):
 *   shared / private bases   real pointers: a kernel's addresses are its
 *                            memory's addresses, so an access is one
 *                            instruction after inlining (-O3 -flto)
 *   ld, get                  the load happens at ld; its value waits in a
 *                            per-thread slot until get (a private L1 hit;
 *                            the compiler keeps many in registers)
 *   store, swap, fetch_add   plain stores, __atomic exchange / fetch-add
 *   fence                    __atomic_thread_fence (mfence)
 *   lock / unlock            a pthread mutex per lock word, found in an
 *                            open-addressing table by the word's address
 *                            (inserted lock-free on first use; distinct
 *                            words never share a mutex, so a kernel that
 *                            holds several locks at once — canneal — cannot
 *                            deadlock on a collision): the recorder sees
 *                            pthread_mutex_lock, as in a pthreads program
 *   barrier                  a pthread barrier per barrier address, made by
 *                            the first thread to arrive
 *   compute                  nothing: the compiled code's own instructions
 *                            are what the recording counts
 *   roi_begin                all threads meet, thread 0 starts the
 *                            recording (CXLTRACE_ROI_BEGIN) while the others
 *                            wait for it, then all meet again (recorded)
 *   check_words, reference   nothing (no reference image here)
 *   fail                     prints the message and exits 1
 * Random streams are the same splitmix64 as kthread.c's, so a kernel makes
 * the same data and choices as in the simulator.
 */
#include "cxlsim/kthread.h"

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cxlsim/cxltrace.h"

#define MAX_RESULTS 32
#define NLOCKS (1u << 20) /* lock words a run may use; glibc's mutex initialiser is all zeros */
#define NBARRIERS 64

struct cxs_kt {
	struct cxs_kt_params p;
	uint64_t val[CXS_KT_MAX_INFLIGHT];
	uint32_t next_h;
	uint64_t rng;
	const char *rname[MAX_RESULTS];
	uint64_t rval[MAX_RESULTS];
	size_t nresults;
};

static struct {
	uint64_t addr; /* 0: free */
	pthread_mutex_t m;
} locks[NLOCKS];
static struct {
	uint64_t addr;
	int state; /* 0 free, 1 being made, 2 ready */
	pthread_barrier_t b;
} barriers[NBARRIERS];
static pthread_barrier_t roi_barrier;
static int roi_started;
static uint32_t roi_threads;

static pthread_mutex_t *lock_of(struct cxs_kt *kt, uint64_t addr)
{
	uint64_t h = addr * UINT64_C(0x9e3779b97f4a7c15);
	for (uint32_t k = 0; k < NLOCKS; k++) {
		uint32_t i = (uint32_t)((h >> 40) + k) % NLOCKS;
		uint64_t a = __atomic_load_n(&locks[i].addr, __ATOMIC_ACQUIRE), zero = 0;
		if (a == addr)
			return &locks[i].m;
		if (a == 0) {
			if (__atomic_compare_exchange_n(&locks[i].addr, &zero, addr, false,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
			    zero == addr)
				return &locks[i].m;
		}
	}
	cxs_kt_fail(kt, "more than %u lock words", NLOCKS);
}

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static uint64_t rd(uint64_t a, uint8_t size)
{
	switch (size) {
	case 1:
		return *(const uint8_t *)(uintptr_t)a;
	case 2:
		return *(const uint16_t *)(uintptr_t)a;
	case 4:
		return *(const uint32_t *)(uintptr_t)a;
	default:
		return *(const uint64_t *)(uintptr_t)a;
	}
}

static void wr(uint64_t a, uint8_t size, uint64_t v)
{
	switch (size) {
	case 1:
		*(uint8_t *)(uintptr_t)a = (uint8_t)v;
		break;
	case 2:
		*(uint16_t *)(uintptr_t)a = (uint16_t)v;
		break;
	case 4:
		*(uint32_t *)(uintptr_t)a = (uint32_t)v;
		break;
	default:
		*(uint64_t *)(uintptr_t)a = v;
		break;
	}
}

uint32_t cxs_kt_ld(struct cxs_kt *kt, uint64_t addr, uint8_t size)
{
	uint32_t h = kt->next_h++;
	kt->val[h % CXS_KT_MAX_INFLIGHT] = rd(addr, size);
	return h;
}

uint32_t cxs_kt_ld_dep(struct cxs_kt *kt, uint64_t addr, uint8_t size, uint32_t dep)
{
	(void)dep;
	return cxs_kt_ld(kt, addr, size);
}

uint64_t cxs_kt_get(struct cxs_kt *kt, uint32_t h)
{
	return kt->val[h % CXS_KT_MAX_INFLIGHT];
}

uint64_t cxs_kt_load(struct cxs_kt *kt, uint64_t addr, uint8_t size)
{
	(void)kt;
	return rd(addr, size);
}

bool cxs_kt_handle_live(const struct cxs_kt *kt, uint32_t h)
{
	return h < kt->next_h && kt->next_h - h <= CXS_KT_MAX_INFLIGHT;
}

void cxs_kt_store(struct cxs_kt *kt, uint64_t addr, uint8_t size, uint64_t value)
{
	(void)kt;
	wr(addr, size, value);
}

void cxs_kt_store_dep(struct cxs_kt *kt, uint64_t addr, uint8_t size, uint64_t value,
		      uint32_t adep, uint32_t vdep)
{
	(void)adep;
	if (vdep != CXS_KT_NO_DEP)
		value += kt->val[vdep % CXS_KT_MAX_INFLIGHT];
	wr(addr, size, value);
}

uint64_t cxs_kt_swap(struct cxs_kt *kt, uint64_t addr, uint8_t size, uint64_t value)
{
	(void)kt;
	switch (size) {
	case 1:
		return __atomic_exchange_n((uint8_t *)(uintptr_t)addr, (uint8_t)value, __ATOMIC_SEQ_CST);
	case 2:
		return __atomic_exchange_n((uint16_t *)(uintptr_t)addr, (uint16_t)value,
					   __ATOMIC_SEQ_CST);
	case 4:
		return __atomic_exchange_n((uint32_t *)(uintptr_t)addr, (uint32_t)value,
					   __ATOMIC_SEQ_CST);
	default:
		return __atomic_exchange_n((uint64_t *)(uintptr_t)addr, value, __ATOMIC_SEQ_CST);
	}
}

uint64_t cxs_kt_fetch_add(struct cxs_kt *kt, uint64_t addr, uint8_t size, uint64_t add)
{
	(void)kt;
	switch (size) {
	case 1:
		return __atomic_fetch_add((uint8_t *)(uintptr_t)addr, (uint8_t)add, __ATOMIC_SEQ_CST);
	case 2:
		return __atomic_fetch_add((uint16_t *)(uintptr_t)addr, (uint16_t)add, __ATOMIC_SEQ_CST);
	case 4:
		return __atomic_fetch_add((uint32_t *)(uintptr_t)addr, (uint32_t)add, __ATOMIC_SEQ_CST);
	default:
		return __atomic_fetch_add((uint64_t *)(uintptr_t)addr, add, __ATOMIC_SEQ_CST);
	}
}

void cxs_kt_fence(struct cxs_kt *kt)
{
	(void)kt;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void cxs_kt_compute(struct cxs_kt *kt, uint32_t instructions)
{
	(void)kt;
	(void)instructions;
}

uint64_t cxs_kt_cas(struct cxs_kt *kt, uint64_t addr, uint8_t size, uint32_t expected,
		    uint32_t desired)
{
	(void)kt;
	switch (size) {
	case 1: {
		uint8_t e = (uint8_t)expected;
		__atomic_compare_exchange_n((uint8_t *)(uintptr_t)addr, &e, (uint8_t)desired, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		return e;
	}
	case 2: {
		uint16_t e = (uint16_t)expected;
		__atomic_compare_exchange_n((uint16_t *)(uintptr_t)addr, &e, (uint16_t)desired, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		return e;
	}
	default: {
		uint32_t e = expected;
		__atomic_compare_exchange_n((uint32_t *)(uintptr_t)addr, &e, desired, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		return e;
	}
	}
}

bool cxs_kt_lock(struct cxs_kt *kt, uint64_t addr)
{
	pthread_mutex_lock(lock_of(kt, addr));
	return false; /* native threads do not fail */
}

void cxs_kt_unlock(struct cxs_kt *kt, uint64_t addr)
{
	pthread_mutex_unlock(lock_of(kt, addr));
}

void cxs_kt_barrier(struct cxs_kt *kt, uint64_t addr, uint32_t n)
{
	for (int i = 0; i < NBARRIERS; i++) {
		int st = __atomic_load_n(&barriers[i].state, __ATOMIC_ACQUIRE);
		if (st == 0) {
			int zero = 0;
			if (__atomic_compare_exchange_n(&barriers[i].state, &zero, 1, false,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				barriers[i].addr = addr;
				pthread_barrier_init(&barriers[i].b, NULL, n);
				__atomic_store_n(&barriers[i].state, 2, __ATOMIC_RELEASE);
				st = 2;
			} else {
				st = zero;
			}
		}
		while (st == 1)
			st = __atomic_load_n(&barriers[i].state, __ATOMIC_ACQUIRE);
		if (barriers[i].addr == addr) {
			pthread_barrier_wait(&barriers[i].b);
			return;
		}
	}
	cxs_kt_fail(kt, "thread %u: more than %d barriers", kt->p.id, NBARRIERS);
}

/*
 * Every thread must be recorded from the same point: a thread that entered
 * the second barrier before thread 0 started the recording would have no
 * barrier record, and the replayed barrier would wait for it for ever. So
 * the others wait (unrecorded) until thread 0 has started it.
 */
void cxs_kt_roi_begin(struct cxs_kt *kt)
{
	pthread_barrier_wait(&roi_barrier);
	if (kt->p.id == 0) {
		CXLTRACE_ROI_BEGIN();
		__atomic_store_n(&roi_started, 1, __ATOMIC_RELEASE);
	} else {
		while (!__atomic_load_n(&roi_started, __ATOMIC_ACQUIRE))
			sched_yield();
	}
	pthread_barrier_wait(&roi_barrier);
}

void cxs_kt_roi_end(struct cxs_kt *kt)
{
	(void)kt;
}

const uint8_t *cxs_kt_reference(const struct cxs_kt *kt)
{
	(void)kt;
	return NULL;
}

void cxs_kt_check_words(struct cxs_kt *kt, uint64_t off, uint64_t len)
{
	(void)kt;
	(void)off;
	(void)len;
}

void cxs_kt_fail(struct cxs_kt *kt, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "cxlsim-native: %s: ", kt->p.kernel->name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

void cxs_kt_fail_or_waive(struct cxs_kt *kt, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "cxlsim-native: %s: ", kt->p.kernel->name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1); /* no failures here: nothing is waived */
}

void cxs_kt_result(struct cxs_kt *kt, const char *name, uint64_t add)
{
	for (size_t i = 0; i < kt->nresults; i++)
		if (strcmp(kt->rname[i], name) == 0) {
			kt->rval[i] += add;
			return;
		}
	if (kt->nresults == MAX_RESULTS)
		cxs_kt_fail(kt, "thread %u: more than %d result counters", kt->p.id, MAX_RESULTS);
	kt->rname[kt->nresults] = name;
	kt->rval[kt->nresults++] = add;
}

const char *cxs_kt_result_at(const struct cxs_kt *kt, size_t i, uint64_t *value)
{
	if (i >= kt->nresults)
		return NULL;
	*value = kt->rval[i];
	return kt->rname[i];
}

uint32_t cxs_kt_id(const struct cxs_kt *kt)
{
	return kt->p.id;
}

uint32_t cxs_kt_count(const struct cxs_kt *kt)
{
	return kt->p.img->nthreads;
}

const struct cxs_kimage *cxs_kt_image(const struct cxs_kt *kt)
{
	return kt->p.img;
}

uint64_t cxs_kt_shared(const struct cxs_kt *kt)
{
	return kt->p.shared_base;
}

uint64_t cxs_kt_private(const struct cxs_kt *kt)
{
	return kt->p.private_base;
}

uint64_t cxs_kt_failed_cns(const struct cxs_kt *kt)
{
	(void)kt;
	return 0;
}

uint64_t cxs_kt_rand(struct cxs_kt *kt)
{
	return splitmix(&kt->rng);
}

struct cxs_kt *cxs_kt_new(const struct cxs_kt_params *p, char *err, size_t errlen)
{
	struct cxs_kt *kt = calloc(1, sizeof *kt);
	if (!kt) {
		snprintf(err, errlen, "out of memory for a thread");
		return NULL;
	}
	kt->p = *p;
	/* the seed mix of kthread.c, so the streams are the simulator's */
	kt->rng = p->img->seed * UINT64_C(0x100000001b3) ^ ((uint64_t)p->id << 32 | 0x5bd1e995);
	return kt;
}

void cxs_kt_free(struct cxs_kt *kt)
{
	free(kt);
}

void cxs_kimage_free(struct cxs_kimage *img)
{
	free(img->shared);
	if (img->info_free)
		img->info_free(img->info);
	else
		free(img->info);
	img->shared = NULL;
	img->info = NULL;
}

/* Sets up the barrier cxs_kt_roi_begin uses; call before starting the threads. */
void cxs_kt_pthread_init(uint32_t nthreads);
void cxs_kt_pthread_init(uint32_t nthreads)
{
	roi_threads = nthreads;
	pthread_barrier_init(&roi_barrier, NULL, roi_threads);
}
