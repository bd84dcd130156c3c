/*
 * kthread.h — thread programs: the code a simulated core runs.
 *
 * A built-in workload is ordinary C written against this API: it loads and
 * stores simulated memory, computes, takes locks and meets at barriers. Each
 * simulated core runs one thread program as a coroutine. The program does
 * not run ahead of the machine: every value it loads comes from the simulated
 * memory system (caches, MESI, MN DRAM contents), so a coherence bug changes
 * the workload's results, and the results are checked.
 *
 * Dataflow, and so memory-level parallelism, is explicit: cxs_kt_ld() issues
 * a load and returns a handle at once; the program blocks only when it needs
 * the value (cxs_kt_get). Loads issued back to back without a get between
 * them are independent and overlap in the core (up to its line fill buffer
 * and load queue); a pointer chase gets each value before it issues the next
 * load and has a memory-level parallelism of 1. cxs_kt_load() is ld + get.
 *
 *   handle h = cxs_kt_ld(kt, a, 8);    issue (no wait)
 *   uint64_t v = cxs_kt_get(kt, h);    wait for the value
 *   cxs_kt_store(kt, a, 8, v + 1);     into the store buffer (TSO), no wait
 *   cxs_kt_compute(kt, 40);            40 non-memory instructions, CPI 1
 *
 * At most CXS_KT_MAX_INFLIGHT loads may be issued and not yet got; issuing one
 * more first waits for the oldest (a program that issues loads and never gets
 * them is therefore fine: it simply stalls when the window is full).
 *
 * A program that does not need a value itself but computes an address from
 * it — a replayed trace, whose records say which load an address came from —
 * hands the dependency to the core instead of waiting: cxs_kt_ld_dep issues a
 * load that the core holds until load `dep` has its value, while the program
 * (and the core's frontend) go on with later, independent operations, as an
 * out-of-order core does; cxs_kt_store_dep does the same for a store, and can
 * make the stored value the producer's value plus a constant.
 *
 * Synchronisation is real memory traffic on shared lines, never a simulator
 * shortcut: cxs_kt_lock is test-and-test-and-set with an atomic swap and
 * exponential back-off; cxs_kt_barrier is a sense-reversing barrier built on
 * an atomic fetch-and-add. Atomics and fences drain the store buffer (TSO).
 *
 * Values are 1, 2, 4 or 8 bytes, naturally aligned; doubles travel as their
 * bit patterns (cxs_kt_ldd / cxs_kt_std).
 *
 * Backends. The same program runs on
 *   - the simulator (src/core/core.c drives it, one coroutine per core), and
 *   - the native backend (cxs_kt_run_native): a flat memory image, threads
 *     interleaved round robin in one process, no timing. It is the reference
 *     run: for a deterministic kernel, the final shared image it produces is
 *     what the simulated machine must produce, word for word.
 *
 * Regions of interest. A program calls cxs_kt_roi_begin() after its set-up
 * (private initialisation) and cxs_kt_roi_end() when the measured work is
 * done; the core's counters cover the ROI only. After roi_end it may verify
 * its results (cxs_kt_check_words against the reference image).
 */
#ifndef CXLSIM_KTHREAD_H
#define CXLSIM_KTHREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cxlsim/config.h"

#define CXS_KT_MAX_INFLIGHT 128 /* loads issued and not yet got, per thread */

struct cxs_kt;
struct cxs_config;

/* Layout and initial contents of a kernel's memory, built the same way on every rank. */
struct cxs_kimage {
	uint64_t size;          /* the kernel's size parameter */
	uint64_t ops;           /* operations per thread, for kernels that take a count
				   (workload.ops; 0: the kernel's default) */
	uint64_t seed;
	uint64_t variant;       /* the kernel's variant or second parameter (workload.variant;
				   0: its default): see each kernel's doc */
	uint32_t nthreads;
	uint8_t *shared;        /* initial contents of the shared (CXL) region */
	uint64_t shared_bytes;  /* multiple of 64 */
	uint64_t private_bytes; /* per thread, in the CN's local memory; starts zeroed */
	void *info;             /* kernel-specific layout, freed with info_free or free() */
	void (*info_free)(void *info);
};

typedef void cxs_kt_main_fn(struct cxs_kt *kt);

struct cxs_kernel {
	const char *name;
	const char *doc;        /* one line: what it does and what it is modelled after */
	uint64_t default_size;  /* finishes a 16 CN x 4 core run in minutes */
	bool deterministic;     /* the final shared image is independent of timing */
	/*
	 * Lays out the shared region for img->nthreads threads of size img->size
	 * and fills img->shared (malloc'd; freed by cxs_kimage_free). Returns 0,
	 * or -1 with a message (e.g. size out of range).
	 */
	int (*build)(struct cxs_kimage *img, char *err, size_t errlen);
	cxs_kt_main_fn *run;
	/*
	 * Optional, before build: reads the kernel's own configuration keys
	 * into img->info. -1 with a message naming the file, line and key.
	 */
	int (*configure)(const struct cxs_config *cfg, struct cxs_kimage *img, char *err,
			 size_t errlen);
};

/* Built-in kernels, NULL-terminated (src/workload/kernels.c). */
extern const struct cxs_kernel *const cxs_kernels[];
const struct cxs_kernel *cxs_kernel_find(const char *name);
/* The trace kernel's [trace] keys (trace_program.c), registered by the application. */
extern const struct cxs_cfg_key cxs_trace_replay_keys[];
extern const size_t cxs_trace_replay_nkeys;
extern const struct cxs_key_table cxs_trace_replay_key_table;
void cxs_kimage_free(struct cxs_kimage *img);

/* ---- the program side ---------------------------------------------------- */

uint32_t cxs_kt_id(const struct cxs_kt *kt);      /* 0 .. nthreads-1 */
uint32_t cxs_kt_count(const struct cxs_kt *kt);
const struct cxs_kimage *cxs_kt_image(const struct cxs_kt *kt); /* layout only: never read
								   img->shared in a program */
uint64_t cxs_kt_shared(const struct cxs_kt *kt);  /* address of shared byte 0 */
uint64_t cxs_kt_private(const struct cxs_kt *kt); /* address of this thread's private byte 0 */
/* Deterministic per-thread random stream (splitmix64 of seed and thread). */
uint64_t cxs_kt_rand(struct cxs_kt *kt);

uint32_t cxs_kt_ld(struct cxs_kt *kt, uint64_t addr, uint8_t size);
/*
 * Dataflow in the core (above). dep is a handle of this program issued at
 * most CXS_KT_MAX_INFLIGHT handles ago (older ones have their values: no
 * wait), or CXS_KT_NO_DEP. cxs_kt_store_dep: the store waits for adep before
 * its address is known; with vdep != CXS_KT_NO_DEP the value stored is
 * value + vdep's value (modulo 2^(8 size)).
 */
#define CXS_KT_NO_DEP UINT32_MAX
uint32_t cxs_kt_ld_dep(struct cxs_kt *kt, uint64_t addr, uint8_t size, uint32_t dep);
void cxs_kt_store_dep(struct cxs_kt *kt, uint64_t addr, uint8_t size, uint64_t value,
		      uint32_t adep, uint32_t vdep);
/* Is handle h still one this program can name as a dependency (not yet reused)? */
bool cxs_kt_handle_live(const struct cxs_kt *kt, uint32_t h);
uint64_t cxs_kt_get(struct cxs_kt *kt, uint32_t h);
uint64_t cxs_kt_load(struct cxs_kt *kt, uint64_t addr, uint8_t size);
void cxs_kt_store(struct cxs_kt *kt, uint64_t addr, uint8_t size, uint64_t value);
uint64_t cxs_kt_swap(struct cxs_kt *kt, uint64_t addr, uint8_t size, uint64_t value);
uint64_t cxs_kt_fetch_add(struct cxs_kt *kt, uint64_t addr, uint8_t size, uint64_t add);
/* Compare-and-swap of a word of size <= 4: writes desired if it holds expected; returns the old value. */
uint64_t cxs_kt_cas(struct cxs_kt *kt, uint64_t addr, uint8_t size, uint32_t expected,
		    uint32_t desired);
void cxs_kt_fence(struct cxs_kt *kt);
void cxs_kt_compute(struct cxs_kt *kt, uint32_t instructions);
/* The thread sleeps for `cycles` core cycles: time passes, no instruction is executed. */
void cxs_kt_idle(struct cxs_kt *kt, uint32_t cycles);
/*
 * How a failed wait for a lock, a turn or a barrier backs off (16 doubling
 * to 1024): false (the default) spins, executing the back-off as
 * instructions — a spin lock's loop, what the kernels' own locks are; true
 * sleeps it (cxs_kt_idle) — a pthread program's waiter in futex_wait, which
 * executes nothing until it is woken: the trace replay's.
 */
void cxs_kt_set_sleeping_waits(struct cxs_kt *kt, bool on);
/*
 * After a CN failure, how long a wait that cannot tell whom it waits for (a
 * barrier of a subset of the threads, cxs_kt_barrier_sense with !first_n)
 * goes on: past `cycles` of back-off since the thread learned of the
 * failure it gives up (cxs_kt_barrier_sense returns false). Whether a dead
 * thread was a member is unknown; a member that is alive but slower than
 * that is taken for dead. Without a failure, past `stuck` cycles of back-off
 * the run stops (cxs_kt_fail): a member that never comes is a deadlock of
 * the program. 0 (the defaults): no limit.
 */
void cxs_kt_set_wait_limit(struct cxs_kt *kt, uint64_t cycles, uint64_t stuck);

/*
 * A lock word (8 bytes, its own line is best): 0 free, else the holder's
 * thread id + 1. It is taken by a compare-and-swap of its low 4 bytes, so a
 * losing attempt leaves the holder's id in place (a swap would write the
 * loser's, and if the holder then died nobody would see it dead). A lock
 * whose holder is a dead thread (failed_cns) is taken over as if free — the
 * compare-and-swap from the dead holder's id to the caller's — and
 * the call returns true: the critical section the dead thread left may be
 * half done, and the caller may repair what it protects (robust mutexes'
 * EOWNERDEAD). Otherwise false.
 */
bool cxs_kt_lock(struct cxs_kt *kt, uint64_t addr);
void cxs_kt_unlock(struct cxs_kt *kt, uint64_t addr);
/*
 * A lock whose acquisitions come in a given order (a replayed trace's: each
 * acquisition has its turn, its index among the lock's acquisitions in the
 * recording). The word's low 4 bytes are the holder's id + 1 (0: free), as
 * cxs_kt_lock's; its high 4 bytes the turn now due, the acquisitions
 * released so far. The caller, whose acquisition is `turn`, waits until its
 * turn is due and the lock free, then takes it by a compare-and-swap of the
 * low half; cxs_kt_unlock_turn releases it and makes turn + 1 due in one
 * store. A lock is taken either always with turns or never.
 *
 * After a failure a dead thread's turns never come. A waiter that finds the
 * due turn's owner (owner(ctx, due), UINT32_MAX: unknown) dead makes the
 * next turn due by a compare-and-swap of the high half (so that of several
 * waiters seeing it one skips it), and counts it in *skipped; the owner of a
 * due turn whose holder died in its critical section takes the lock over
 * and gets true, as from cxs_kt_lock. owner is asked only once a failure is
 * known (failed_cns), so it costs nothing in a run without one; it may be
 * NULL (no turn is ever skipped). A turn found already past stops the run
 * (an order that skipped a live thread: a bug).
 */
typedef uint32_t cxs_kt_turn_owner_fn(const void *ctx, uint64_t turn);
bool cxs_kt_lock_turn(struct cxs_kt *kt, uint64_t addr, uint32_t turn,
		      cxs_kt_turn_owner_fn *owner, const void *ctx, uint64_t *skipped);
void cxs_kt_unlock_turn(struct cxs_kt *kt, uint64_t addr, uint32_t turn);
/*
 * A barrier of n threads at addr: 16 bytes (count word, then sense word),
 * zero-initialised, reusable. Each thread keeps its own sense (in its
 * context), so one barrier object serves any number of episodes. With up
 * to 64 threads (ids 0 .. n-1) the count word is a mask of the threads
 * arrived (each adds its own bit), so that after a failure the barrier
 * shrinks to the live threads: the episode ends when every live thread has
 * arrived, whether the dead ones had or not. The lowest live thread adds
 * the dead ones' bits (at its arrival, or when it learns of a failure while
 * waiting), and the one fetch-and-add that completes the mask ends the
 * episode, so that its count is reset once.
 */
void cxs_kt_barrier(struct cxs_kt *kt, uint64_t addr, uint32_t n);
/*
 * The same barrier with the sense given by the caller (a program with many
 * barrier objects keeps one per object, e.g. its episode's parity) instead
 * of the thread's own. first_n: the n threads are those with ids 0 .. n-1
 * (cxs_kt_barrier: n is every thread of the program), so that it shrinks
 * after a failure; otherwise it counts arrivals and does not shrink. true
 * when released; false when a subset barrier was given up after a failure
 * (cxs_kt_set_wait_limit).
 */
bool cxs_kt_barrier_sense(struct cxs_kt *kt, uint64_t addr, uint32_t n, uint64_t sense,
			  bool first_n);

void cxs_kt_roi_begin(struct cxs_kt *kt);
void cxs_kt_roi_end(struct cxs_kt *kt);

/*
 * The reference's final shared image (NULL during the reference run itself,
 * and for kernels that are not deterministic).
 */
const uint8_t *cxs_kt_reference(const struct cxs_kt *kt);
/*
 * Loads the 8-byte words of the shared region [off, off + len) through the
 * memory system and compares them with the reference; the first mismatch
 * stops the run (cxs_kt_fail). Does nothing without a reference.
 */
void cxs_kt_check_words(struct cxs_kt *kt, uint64_t off, uint64_t len);
/*
 * Stops the run: the workload found a wrong result. Does not return. After
 * a failure (failed_cns) the program's checks are waived — a kernel whose
 * result needs all threads cannot produce it — and the thread just ends;
 * cxs_kt_waived says how many checks were, and the first one's message.
 */
void cxs_kt_fail(struct cxs_kt *kt, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
/*
 * The same for a check in the middle of the program, which the thread can go
 * on past: before a failure it stops the run as cxs_kt_fail does; after one
 * it is waived and returns, so that the thread still reaches the barriers
 * the survivors wait at (cxs_kt_fail would end it there).
 */
void cxs_kt_fail_or_waive(struct cxs_kt *kt, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Adds to a per-thread result counter (stored in HDF5 as workload/<name>). */
void cxs_kt_result(struct cxs_kt *kt, const char *name, uint64_t add);

static inline uint64_t cxs_kt_ldd_bits(double d)
{
	uint64_t u;
	memcpy(&u, &d, 8);
	return u;
}
static inline double cxs_kt_bits_d(uint64_t u)
{
	double d;
	memcpy(&d, &u, 8);
	return d;
}
static inline double cxs_kt_loadd(struct cxs_kt *kt, uint64_t addr)
{
	return cxs_kt_bits_d(cxs_kt_load(kt, addr, 8));
}
static inline double cxs_kt_getd(struct cxs_kt *kt, uint32_t h)
{
	return cxs_kt_bits_d(cxs_kt_get(kt, h));
}
static inline void cxs_kt_stored(struct cxs_kt *kt, uint64_t addr, double d)
{
	cxs_kt_store(kt, addr, 8, cxs_kt_ldd_bits(d));
}

/* ---- the backend side ------------------------------------------------------ */

/* What a program asks of its core. */
enum cxs_kop_kind {
	CXS_KOP_COMPUTE = 1, /* n non-memory instructions */
	CXS_KOP_LOAD,        /* handle h; value arrives later (cxs_kt_loaded) */
	CXS_KOP_STORE,
	CXS_KOP_SWAP,        /* atomic: drains the store buffer; handle h gets the old value */
	CXS_KOP_FETCH_ADD,   /* idem */
	CXS_KOP_FENCE,       /* drains the store buffer */
	CXS_KOP_WAIT,        /* the program needs handle h: stop fetching until it is loaded */
	CXS_KOP_ROI_BEGIN,
	CXS_KOP_ROI_END,
	CXS_KOP_DONE,        /* the program returned */
	CXS_KOP_FAIL,        /* the program found a wrong result: message in cxs_kt_error */
	CXS_KOP_CAS,         /* atomic, size <= 4: value = expected << 32 | desired; handle h
				gets the old value */
	CXS_KOP_IDLE,        /* n cycles of sleep: no instruction is dispatched (cxs_kt_idle) */
};

struct cxs_kop {
	uint8_t kind;
	uint8_t size;
	uint16_t pad;
	uint32_t n;       /* COMPUTE: instructions; IDLE: cycles; LOAD/SWAP/FETCH_ADD/CAS/WAIT: handle */
	uint64_t addr;
	uint64_t value;   /* STORE, SWAP: the value; FETCH_ADD: the addend; STORE with
			     vdep: the constant added to vdep's value */
	uint32_t adep;    /* LOAD, STORE: the address waits for this handle (CXS_KT_NO_DEP) */
	uint32_t vdep;    /* STORE: value += this handle's value (CXS_KT_NO_DEP: none) */
};

struct cxs_kt_params {
	const struct cxs_kernel *kernel;
	const struct cxs_kimage *img;
	const uint8_t *reference; /* may be NULL */
	uint32_t id;
	uint64_t shared_base, private_base;
	size_t stack_bytes;       /* 0: 256 KiB */
	/*
	 * The runtime's view of failed CNs (bit per CN; NULL: none ever), which
	 * the CN's node updates when it learns of a failure (after recovery
	 * under DIKTAMO); thread t is on CN t / cores_per_cn. With it, locks
	 * held by dead threads are taken over, barriers shrink to the live
	 * threads, and the program's own checks are waived (the run's golden
	 * image check replaces them): see cxs_kt_lock, cxs_kt_barrier.
	 */
	const uint64_t *failed_cns;
	uint32_t cores_per_cn;
};

/* NULL with a message when out of memory. */
struct cxs_kt *cxs_kt_new(const struct cxs_kt_params *p, char *err, size_t errlen);
void cxs_kt_free(struct cxs_kt *kt);
/*
 * The next operation of the program, in program order. Runs the program until
 * it issues one. After CXS_KOP_DONE or CXS_KOP_FAIL it keeps returning that.
 */
void cxs_kt_next(struct cxs_kt *kt, struct cxs_kop *op);
/* The value of handle h (a load, swap or fetch-and-add) is available. */
void cxs_kt_loaded(struct cxs_kt *kt, uint32_t h, uint64_t value);
/* Has handle h's value been given (cxs_kt_loaded)? */
bool cxs_kt_ready(const struct cxs_kt *kt, uint32_t h);
const char *cxs_kt_error(const struct cxs_kt *kt);
/* Checks waived after a failure (cxs_kt_fail, cxs_kt_check_words), and the first one's message. */
uint64_t cxs_kt_waived(const struct cxs_kt *kt, const char **first);
/* The failed CNs the runtime knows of (bit per CN; 0: none). */
uint64_t cxs_kt_failed_cns(const struct cxs_kt *kt);
/* Is thread t on a CN the runtime knows has failed? */
bool cxs_kt_thread_dead(const struct cxs_kt *kt, uint32_t t);
/* Locks this thread took over from dead holders. */
uint64_t cxs_kt_takeovers(const struct cxs_kt *kt);
/* Result counters: the i-th name and its value; NULL past the last. */
const char *cxs_kt_result_at(const struct cxs_kt *kt, size_t i, uint64_t *value);

/*
 * The reference run: every thread of the kernel on a flat memory image, round
 * robin, no timing. On success *final_image (malloc'd, img->shared_bytes) is
 * the final shared memory. -1 with a message if a program failed.
 */
int cxs_kt_run_native(const struct cxs_kernel *k, const struct cxs_kimage *img,
		      uint8_t **final_image, char *err, size_t errlen);
/* The same, also giving each thread's count of memory operations (mem_ops[nthreads]). */
int cxs_kt_run_native_ops(const struct cxs_kernel *k, const struct cxs_kimage *img,
			  uint8_t **final_image, uint64_t *mem_ops, char *err, size_t errlen);
/* Loads, stores and atomics the program has issued so far (either backend). */
uint64_t cxs_kt_mem_ops(const struct cxs_kt *kt);

/* What a thread spins on now, if anything (failure reports, recovery). */
enum cxs_kt_wait_kind { CXS_KT_NO_WAIT = 0, CXS_KT_WAIT_LOCK, CXS_KT_WAIT_BARRIER };
struct cxs_kt_wait {
	enum cxs_kt_wait_kind kind;
	uint64_t addr;   /* the lock word or barrier */
	uint32_t n;      /* barrier: its thread count */
	bool first_n;    /* barrier: its members are threads 0 .. n-1 (else unknown: a subset) */
	uint32_t holder; /* lock: the thread last seen holding it (UINT32_MAX: not seen yet) */
};
void cxs_kt_waiting(const struct cxs_kt *kt, struct cxs_kt_wait *w);

#endif /* CXLSIM_KTHREAD_H */
