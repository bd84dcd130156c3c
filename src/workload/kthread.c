/*
 * kthread.c — thread programs as coroutines (kthread.h), their operations,
 * the synchronisation library (locks, barriers) and the native backend.
 *
 * Each program runs on its own stack (ucontext). In the simulator the program
 * and its core take turns: the program appends operations to a small queue
 * and returns control only when the queue is full or it needs a value that
 * has not arrived (a WAIT), so a stretch of independent loads, stores and
 * computation costs one switch, not one per operation. The core pops the
 * queue in program order (cxs_kt_next) and hands values back
 * (cxs_kt_loaded).
 *
 * Natively (the reference run) operations act at once on a flat image; a
 * program yields to the round-robin scheduler every CXS_NATIVE_QUANTUM
 * operations and at every failed spin, so that spinning threads let the
 * others reach the lock holder or the barrier. The order is deterministic.
 *
 * Switching. A program's stack is made once with makecontext and entered
 * the first time with setcontext; every later switch, either way, is
 * sigsetjmp (without the mask) / siglongjmp, which save and restore the
 * callee-saved registers and nothing else. swapcontext also saves and restores the signal mask, a
 * system call each way: at 16 x 4 the cores switch ~10^6 times a run and
 * the rt_sigprocmask calls were 6 % of a memsys run's time. Neither side
 * changes the mask, so there is nothing to restore. A jump lands in a frame
 * that is still live (the enter or leave that saved it, on its own stack);
 * _FORTIFY_SOURCE's longjmp check, which refuses a jump to another stack,
 * is therefore turned off for this file. Under AddressSanitizer the switch
 * stays swapcontext (the sanitizer intercepts it), and every switch is
 * announced with the sanitizer's fiber calls, which keeps its view of the
 * current stack right.
 */
#undef _FORTIFY_SOURCE
#include "cxlsim/kthread.h"

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define KT_ASAN 1
#else
#define KT_ASAN 0
#endif

#define QCAP 64
#define MAX_RESULTS 32
#define CXS_NATIVE_QUANTUM 64
/*
 * Rounds in which every live thread's last yield was a failed spin: a hang. A
 * failed spin changes nothing, so one such round already repeats for ever
 * unless a program counts its own spins; 2e5 rounds leaves that room and
 * reports a stuck lock in a fraction of a second (2e7 took 60 s under ASan).
 */
#define NATIVE_SPIN_ROUNDS_MAX UINT64_C(200000)
#define BACKOFF_MIN 16
#define BACKOFF_MAX 1024

enum kt_state { KT_NEW = 0, KT_RUNNING, KT_DONE, KT_FAILED };

struct native; /* the native backend's shared state */

/* Where a side of a switch resumes: the first entry's context, then a jump buffer. */
struct kt_ctx {
	ucontext_t uc;
	sigjmp_buf jb; /* saved without the signal mask (sigsetjmp's 0) */
};

struct cxs_kt {
	struct cxs_kt_params p;
	struct kt_ctx self, *caller;
	struct kt_ctx caller_ctx;
	bool entered; /* the program's stack has been entered once */
	void *stack;
	size_t stack_bytes;
	void *asan_fake;
	const void *caller_stack_bottom;
	size_t caller_stack_size;
	enum kt_state state;
	char err[512];

	struct cxs_kop q[QCAP];
	uint32_t qhead, qn;

	uint64_t val[CXS_KT_MAX_INFLIGHT];
	uint32_t gen[CXS_KT_MAX_INFLIGHT]; /* handle that owns the slot */
	uint8_t ready[CXS_KT_MAX_INFLIGHT];
	uint32_t next_h;

	uint64_t rng;
	uint64_t sense;
	const char *rname[MAX_RESULTS];
	uint64_t rval[MAX_RESULTS];
	size_t nresults;

	uint64_t mem_ops;   /* loads, stores and atomics the program has issued */
	uint64_t waived, takeovers;
	char waived_msg[512];
	uint64_t seen_failed; /* failed_cns when a waiting barrier last looked */
	struct cxs_kt_wait wait; /* the lock or barrier it spins on, if any */
	bool sleep_waits;        /* a failed wait sleeps its back-off (cxs_kt_set_sleeping_waits) */
	uint64_t wait_limit;     /* cycles a subset barrier waits after a failure (0: no limit) */
	uint64_t stuck_limit;    /* ... and without one, before the run stops (0: no limit) */

	struct native *nat; /* non-NULL in the native backend */
	uint32_t nat_ops;   /* operations since the last yield */
	bool nat_spun;      /* the last yield was a failed spin */
	uint8_t *nat_priv;
};

struct native {
	uint8_t *shared;
	uint64_t shared_base, shared_bytes, private_bytes;
	struct kt_ctx sched;
};

static struct cxs_kt *starting; /* hand-over to the trampoline (one thread per process) */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* ---- switching ------------------------------------------------------------ */

/* From the caller (core or scheduler) into the program. */
static void enter(struct cxs_kt *kt, struct kt_ctx *from)
{
	kt->caller = from;
#if KT_ASAN
	void *fake = NULL;
	__sanitizer_start_switch_fiber(&fake, kt->stack, kt->stack_bytes);
	swapcontext(&from->uc, &kt->self.uc);
	__sanitizer_finish_switch_fiber(fake, NULL, NULL);
#else
	if (sigsetjmp(from->jb, 0) == 0) {
		if (!kt->entered) {
			kt->entered = true;
			setcontext(&kt->self.uc);
		}
		siglongjmp(kt->self.jb, 1);
	}
#endif
}

/* From the program back to whoever entered it. */
static void leave(struct cxs_kt *kt)
{
#if KT_ASAN
	__sanitizer_start_switch_fiber(kt->state >= KT_DONE ? NULL : &kt->asan_fake,
				       kt->caller_stack_bottom, kt->caller_stack_size);
	swapcontext(&kt->self.uc, &kt->caller->uc);
	__sanitizer_finish_switch_fiber(kt->asan_fake, &kt->caller_stack_bottom,
					&kt->caller_stack_size);
#else
	if (sigsetjmp(kt->self.jb, 0) == 0)
		siglongjmp(kt->caller->jb, 1);
#endif
}

static void trampoline(void)
{
	struct cxs_kt *kt = starting;
#if KT_ASAN
	__sanitizer_finish_switch_fiber(NULL, &kt->caller_stack_bottom, &kt->caller_stack_size);
#endif
	kt->state = KT_RUNNING;
	kt->p.kernel->run(kt);
	kt->state = KT_DONE;
	for (;;)
		leave(kt);
}

/* ---- the simulator backend: the operation queue ----------------------------- */

static void push(struct cxs_kt *kt, const struct cxs_kop *op)
{
	if (kt->qn == QCAP)
		leave(kt); /* the core drains the queue before it enters again */
	kt->q[(kt->qhead + kt->qn) % QCAP] = *op;
	kt->qn++;
}

void cxs_kt_next(struct cxs_kt *kt, struct cxs_kop *op)
{
	if (kt->qn == 0 && kt->state < KT_DONE) {
		if (kt->state == KT_NEW)
			starting = kt;
		enter(kt, &kt->caller_ctx);
	}
	if (kt->qn > 0) {
		*op = kt->q[kt->qhead];
		kt->qhead = (kt->qhead + 1) % QCAP;
		kt->qn--;
		return;
	}
	*op = (struct cxs_kop){.kind = kt->state == KT_FAILED ? CXS_KOP_FAIL : CXS_KOP_DONE};
}

void cxs_kt_loaded(struct cxs_kt *kt, uint32_t h, uint64_t value)
{
	uint32_t s = h % CXS_KT_MAX_INFLIGHT;
	if (kt->gen[s] != h)
		return; /* stale (cannot happen: a slot is reused only once ready) */
	kt->val[s] = value;
	kt->ready[s] = 1;
}

bool cxs_kt_ready(const struct cxs_kt *kt, uint32_t h)
{
	uint32_t s = h % CXS_KT_MAX_INFLIGHT;
	return kt->gen[s] != h || kt->ready[s];
}

/* ---- the native backend ------------------------------------------------------ */

static uint8_t *native_at(struct cxs_kt *kt, uint64_t addr, uint8_t size)
{
	struct native *n = kt->nat;
	if (addr >= n->shared_base && addr + size <= n->shared_base + n->shared_bytes)
		return n->shared + (addr - n->shared_base);
	if (addr >= kt->p.private_base && addr + size <= kt->p.private_base + n->private_bytes)
		return kt->nat_priv + (addr - kt->p.private_base);
	cxs_kt_fail(kt, "thread %u: access of %u bytes at %#" PRIx64 " is outside its memory",
		    kt->p.id, size, addr);
}

static uint64_t native_read(struct cxs_kt *kt, uint64_t addr, uint8_t size)
{
	uint64_t v = 0;
	memcpy(&v, native_at(kt, addr, size), size); /* little-endian host */
	return v;
}

static void native_write(struct cxs_kt *kt, uint64_t addr, uint8_t size, uint64_t v)
{
	memcpy(native_at(kt, addr, size), &v, size);
}

static void native_tick(struct cxs_kt *kt, bool spin)
{
	if (spin || ++kt->nat_ops >= CXS_NATIVE_QUANTUM) {
		kt->nat_ops = 0;
		kt->nat_spun = spin;
		leave(kt);
	}
}

/* ---- operations ------------------------------------------------------------ */

static void check_access(struct cxs_kt *kt, uint64_t addr, uint8_t size)
{
	if (!(size == 1 || size == 2 || size == 4 || size == 8) || (addr & (size - 1)))
		cxs_kt_fail(kt, "thread %u: bad access of %u bytes at %#" PRIx64, kt->p.id, size,
			    addr);
}

/* A fresh handle; waits for the slot's previous load if it is still in flight. */
static uint32_t new_handle(struct cxs_kt *kt)
{
	uint32_t h = kt->next_h++;
	uint32_t s = h % CXS_KT_MAX_INFLIGHT;
	if (h >= CXS_KT_MAX_INFLIGHT && !kt->ready[s])
		(void)cxs_kt_get(kt, kt->gen[s]);
	kt->gen[s] = h;
	kt->ready[s] = 0;
	return h;
}

uint32_t cxs_kt_ld(struct cxs_kt *kt, uint64_t addr, uint8_t size)
{
	check_access(kt, addr, size);
	kt->mem_ops++;
	uint32_t h = new_handle(kt);
	if (kt->nat) {
		cxs_kt_loaded(kt, h, native_read(kt, addr, size));
		native_tick(kt, false);
		return h;
	}
	push(kt, &(struct cxs_kop){.kind = CXS_KOP_LOAD, .size = size, .n = h, .addr = addr,
				   .adep = CXS_KT_NO_DEP, .vdep = CXS_KT_NO_DEP});
	return h;
}

uint32_t cxs_kt_ld_dep(struct cxs_kt *kt, uint64_t addr, uint8_t size, uint32_t dep)
{
	check_access(kt, addr, size);
	uint32_t h = new_handle(kt);
	if (kt->nat) {
		cxs_kt_loaded(kt, h, native_read(kt, addr, size));
		native_tick(kt, false);
		return h;
	}
	push(kt, &(struct cxs_kop){.kind = CXS_KOP_LOAD, .size = size, .n = h, .addr = addr,
				   .adep = dep, .vdep = CXS_KT_NO_DEP});
	return h;
}

bool cxs_kt_handle_live(const struct cxs_kt *kt, uint32_t h)
{
	return h < kt->next_h && kt->gen[h % CXS_KT_MAX_INFLIGHT] == h;
}

void cxs_kt_store_dep(struct cxs_kt *kt, uint64_t addr, uint8_t size, uint64_t value,
		      uint32_t adep, uint32_t vdep)
{
	check_access(kt, addr, size);
	uint64_t mask = size < 8 ? (UINT64_C(1) << (8 * size)) - 1 : UINT64_MAX;
	if (vdep != CXS_KT_NO_DEP && !cxs_kt_handle_live(kt, vdep))
		cxs_kt_fail(kt, "thread %u: store value depends on handle %u, which is not in "
			    "flight", kt->p.id, vdep);
	if (kt->nat) {
		if (vdep != CXS_KT_NO_DEP)
			value += kt->val[vdep % CXS_KT_MAX_INFLIGHT];
		native_write(kt, addr, size, value & mask);
		native_tick(kt, false);
		return;
	}
	push(kt, &(struct cxs_kop){.kind = CXS_KOP_STORE, .size = size, .addr = addr,
				   .value = vdep != CXS_KT_NO_DEP ? value : value & mask,
				   .adep = adep, .vdep = vdep});
}

uint64_t cxs_kt_get(struct cxs_kt *kt, uint32_t h)
{
	uint32_t s = h % CXS_KT_MAX_INFLIGHT;
	if (kt->gen[s] != h || h >= kt->next_h)
		cxs_kt_fail(kt, "thread %u: handle %u is not in flight (more than %u loads issued "
				"since; get values sooner)",
			    kt->p.id, h, CXS_KT_MAX_INFLIGHT);
	while (!kt->ready[s]) {
		push(kt, &(struct cxs_kop){.kind = CXS_KOP_WAIT, .n = h});
		leave(kt);
	}
	return kt->val[s];
}

uint64_t cxs_kt_load(struct cxs_kt *kt, uint64_t addr, uint8_t size)
{
	return cxs_kt_get(kt, cxs_kt_ld(kt, addr, size));
}

void cxs_kt_store(struct cxs_kt *kt, uint64_t addr, uint8_t size, uint64_t value)
{
	check_access(kt, addr, size);
	kt->mem_ops++;
	if (size < 8)
		value &= (UINT64_C(1) << (8 * size)) - 1;
	if (kt->nat) {
		native_write(kt, addr, size, value);
		native_tick(kt, false);
		return;
	}
	push(kt, &(struct cxs_kop){.kind = CXS_KOP_STORE, .size = size, .addr = addr,
				   .value = value, .adep = CXS_KT_NO_DEP, .vdep = CXS_KT_NO_DEP});
}

static uint64_t atomic_op(struct cxs_kt *kt, uint8_t kind, uint64_t addr, uint8_t size,
			  uint64_t v)
{
	check_access(kt, addr, size);
	kt->mem_ops++;
	uint64_t mask = size < 8 ? (UINT64_C(1) << (8 * size)) - 1 : UINT64_MAX;
	if (kt->nat) {
		uint64_t old = native_read(kt, addr, size);
		if (kind != CXS_KOP_CAS)
			native_write(kt, addr, size, (kind == CXS_KOP_SWAP ? v : old + v) & mask);
		else if (old == v >> 32)
			native_write(kt, addr, size, v & mask);
		native_tick(kt, false);
		return old;
	}
	uint32_t h = new_handle(kt);
	push(kt, &(struct cxs_kop){.kind = kind, .size = size, .n = h, .addr = addr,
				   .value = kind == CXS_KOP_CAS ? v : v & mask});
	return cxs_kt_get(kt, h);
}

uint64_t cxs_kt_swap(struct cxs_kt *kt, uint64_t addr, uint8_t size, uint64_t value)
{
	return atomic_op(kt, CXS_KOP_SWAP, addr, size, value);
}

uint64_t cxs_kt_fetch_add(struct cxs_kt *kt, uint64_t addr, uint8_t size, uint64_t add)
{
	return atomic_op(kt, CXS_KOP_FETCH_ADD, addr, size, add);
}

uint64_t cxs_kt_cas(struct cxs_kt *kt, uint64_t addr, uint8_t size, uint32_t expected,
		    uint32_t desired)
{
	if (size > 4)
		cxs_kt_fail(kt, "thread %u: a compare-and-swap of %u bytes (at most 4)", kt->p.id, size);
	uint64_t mask = size < 4 ? (UINT64_C(1) << (8 * size)) - 1 : UINT32_MAX;
	return atomic_op(kt, CXS_KOP_CAS, addr, size, (expected & mask) << 32 | (desired & mask));
}

void cxs_kt_fence(struct cxs_kt *kt)
{
	if (!kt->nat)
		push(kt, &(struct cxs_kop){.kind = CXS_KOP_FENCE});
}

void cxs_kt_compute(struct cxs_kt *kt, uint32_t instructions)
{
	if (kt->nat || instructions == 0)
		return;
	/* Merge with a COMPUTE still in the queue: fewer operations for the core. */
	if (kt->qn > 0) {
		struct cxs_kop *last = &kt->q[(kt->qhead + kt->qn - 1) % QCAP];
		if (last->kind == CXS_KOP_COMPUTE && last->n <= UINT32_MAX - instructions) {
			last->n += instructions;
			return;
		}
	}
	push(kt, &(struct cxs_kop){.kind = CXS_KOP_COMPUTE, .n = instructions});
}

void cxs_kt_idle(struct cxs_kt *kt, uint32_t cycles)
{
	if (kt->nat || cycles == 0)
		return;
	push(kt, &(struct cxs_kop){.kind = CXS_KOP_IDLE, .n = cycles});
}

void cxs_kt_set_wait_limit(struct cxs_kt *kt, uint64_t cycles, uint64_t stuck)
{
	kt->wait_limit = cycles;
	kt->stuck_limit = stuck;
}

void cxs_kt_set_sleeping_waits(struct cxs_kt *kt, bool on)
{
	kt->sleep_waits = on;
}

/* The runtime's view of failed CNs (cxs_kt_params.failed_cns). */
static uint64_t failed_view(const struct cxs_kt *kt)
{
	return kt->p.failed_cns ? *kt->p.failed_cns : 0;
}

static bool thread_dead(const struct cxs_kt *kt, uint64_t tid)
{
	uint64_t cn = kt->p.cores_per_cn ? tid / kt->p.cores_per_cn : 64;
	return cn < 64 && (failed_view(kt) >> cn & 1);
}

/*
 * One failed spin: back off (simulated instructions, or cycles of sleep with
 * sleep_waits), or let others run (native).
 */
static void spin_wait(struct cxs_kt *kt, uint32_t *backoff)
{
	if (kt->nat) {
		native_tick(kt, true);
		return;
	}
	if (kt->sleep_waits)
		cxs_kt_idle(kt, *backoff);
	else
		cxs_kt_compute(kt, *backoff);
	if (*backoff < BACKOFF_MAX)
		*backoff *= 2;
}

/*
 * The lock word holds its holder's thread id + 1 (0: free), so that a thread
 * spinning on it knows whom it waits for: a failure report names a lock held
 * by a dead thread, and recovery can release it.
 */
bool cxs_kt_lock(struct cxs_kt *kt, uint64_t addr)
{
	uint32_t backoff = BACKOFF_MIN;
	kt->wait = (struct cxs_kt_wait){.kind = CXS_KT_WAIT_LOCK, .addr = addr,
					.holder = UINT32_MAX};
	for (;;) {
		uint64_t v = cxs_kt_load(kt, addr, 8);
		if (v == 0 || thread_dead(kt, v - 1)) {
			/*
			 * Free, or its holder died: the compare-and-swap from what was
			 * seen decides (another may get there first, and then the word
			 * keeps the winner's id).
			 */
			uint64_t seen = v;
			v = cxs_kt_cas(kt, addr, 4, (uint32_t)seen, kt->p.id + 1);
			if (v == seen) {
				kt->wait.kind = CXS_KT_NO_WAIT;
				kt->takeovers += v != 0;
				return v != 0;
			}
		}
		kt->wait.holder = (uint32_t)(v - 1);
		spin_wait(kt, &backoff);
	}
}

void cxs_kt_unlock(struct cxs_kt *kt, uint64_t addr)
{
	cxs_kt_store(kt, addr, 8, 0); /* a release: TSO keeps it after the critical section */
}

/*
 * The word is (due turn << 32 | holder + 1). Only the owner of the due turn
 * sets the low half, and its release sets both halves in one store, so a
 * nonzero holder is always the due turn's owner: a skip leaves a dead
 * holder's id in place for the next turn's owner to take over from.
 */
bool cxs_kt_lock_turn(struct cxs_kt *kt, uint64_t addr, uint32_t turn,
		      cxs_kt_turn_owner_fn *owner, const void *ctx, uint64_t *skipped)
{
	uint32_t backoff = BACKOFF_MIN;
	kt->wait = (struct cxs_kt_wait){.kind = CXS_KT_WAIT_LOCK, .addr = addr,
					.holder = UINT32_MAX};
	for (;;) {
		uint64_t v = cxs_kt_load(kt, addr, 8);
		uint32_t due = (uint32_t)(v >> 32), h = (uint32_t)v;
		if (due == turn && (h == 0 || thread_dead(kt, h - 1))) {
			if (cxs_kt_cas(kt, addr, 4, h, kt->p.id + 1) == h) {
				kt->wait.kind = CXS_KT_NO_WAIT;
				kt->takeovers += h != 0;
				return h != 0;
			}
			continue;
		}
		if (due > turn)
			cxs_kt_fail(kt, "lock %#" PRIx64 ": thread %u's turn %" PRIu32 " is past (turn %"
				    PRIu32 " is due): a live thread's turn was skipped", addr, kt->p.id,
				    turn, due);
		if (due < turn) {
			uint32_t o = owner && failed_view(kt) ? owner(ctx, due) : UINT32_MAX;
			kt->wait.holder = h ? h - 1 : o;
			if (o != UINT32_MAX && thread_dead(kt, o)) {
				if (cxs_kt_cas(kt, addr + 4, 4, due, due + 1) == due && skipped)
					++*skipped;
				continue;
			}
		}
		spin_wait(kt, &backoff);
	}
}

void cxs_kt_unlock_turn(struct cxs_kt *kt, uint64_t addr, uint32_t turn)
{
	cxs_kt_store(kt, addr, 8, (uint64_t)(turn + 1) << 32);
}

/* The mask of dead threads among 0 .. n-1 (n <= 64). */
static uint64_t dead_threads(const struct cxs_kt *kt, uint32_t n)
{
	uint64_t m = 0;
	for (uint32_t t = 0; failed_view(kt) && t < n; t++)
		if (thread_dead(kt, t))
			m |= UINT64_C(1) << t;
	return m;
}

/* Is this thread the lowest of 0 .. n-1 (mask all) not in `dead`? */
static bool lowest_live(const struct cxs_kt *kt, uint64_t dead, uint64_t all)
{
	return (uint64_t)__builtin_ctzll(~dead & all) == kt->p.id;
}

void cxs_kt_barrier(struct cxs_kt *kt, uint64_t addr, uint32_t n)
{
	kt->sense ^= 1;
	cxs_kt_barrier_sense(kt, addr, n, kt->sense, n == kt->p.img->nthreads);
}

bool cxs_kt_barrier_sense(struct cxs_kt *kt, uint64_t addr, uint32_t n, uint64_t sense,
			  bool first_n)
{
	/*
	 * The count word is a mask of arrivals (bit = thread id) when every
	 * thread of the program takes part, so that after a failure the dead
	 * ones can be told apart; a barrier of a subset (litmus participants)
	 * counts, and does not shrink. An episode ends at the one fetch-and-add
	 * that completes the word, never on a load of it: two releasers would
	 * reset it twice, and the later reset would erase arrivals at the next
	 * episode (which then waits for ever). So the dead threads' bits are
	 * added to the word, by the lowest live thread alone — at its arrival,
	 * or when it learns of a failure while waiting; a load tells which are
	 * missing, as the dead add nothing more and nobody else adds theirs.
	 */
	bool masked = n <= 64 && first_n;
	uint64_t all = n >= 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;
	uint64_t add = masked ? UINT64_C(1) << kt->p.id : 1;
	uint64_t view = failed_view(kt), dead = masked ? dead_threads(kt, n) : 0;
	if (dead && lowest_live(kt, dead, all))
		add |= dead & ~cxs_kt_load(kt, addr, 8);
	uint64_t old = cxs_kt_fetch_add(kt, addr, 8, add);
	if (masked ? (old | add) == all : old == n - 1) {
		cxs_kt_store(kt, addr, 8, 0);         /* reset the count ... */
		cxs_kt_store(kt, addr + 8, 8, sense); /* ... before releasing (TSO order) */
		return true;
	}
	uint32_t backoff = BACKOFF_MIN;
	kt->wait = (struct cxs_kt_wait){.kind = CXS_KT_WAIT_BARRIER, .addr = addr, .n = n,
					.first_n = first_n, .holder = UINT32_MAX};
	kt->seen_failed = view; /* what the arrival accounted for: a later failure is looked at */
	uint64_t waited = 0, stuck = 0; /* cycles of back-off (a subset barrier): since a failure, in all */
	while (cxs_kt_load(kt, addr + 8, 8) != sense) {
		if (!masked && kt->wait_limit && failed_view(kt)) {
			/* Its members are unknown: after a failure it waits wait_limit at most. */
			if (waited >= kt->wait_limit) {
				kt->wait.kind = CXS_KT_NO_WAIT;
				return false;
			}
			waited += backoff;
		} else if (!masked && kt->stuck_limit && (stuck += backoff) > kt->stuck_limit) {
			cxs_kt_fail(kt, "deadlock: thread %u has waited %" PRIu64 " cycles at barrier "
				    "0x%" PRIx64 " of %u threads, and no CN has failed: a member never "
				    "arrives", kt->p.id, stuck, addr, n);
		}
		if (masked && failed_view(kt) != kt->seen_failed) {
			/* A failure: the dead never arrive; the lowest live thread adds them. */
			kt->seen_failed = failed_view(kt);
			dead = dead_threads(kt, n);
			uint64_t w = lowest_live(kt, dead, all) ? cxs_kt_load(kt, addr, 8) : 0;
			/*
			 * Only while its own bit is in (the word is still this
			 * episode's, released and reset otherwise); nothing can
			 * complete it before the add, which brings missing bits.
			 */
			uint64_t miss = w >> kt->p.id & 1 ? dead & ~w : 0;
			if (miss && (cxs_kt_fetch_add(kt, addr, 8, miss) | miss) == all) {
				cxs_kt_store(kt, addr, 8, 0);
				cxs_kt_store(kt, addr + 8, 8, sense);
				break;
			}
		}
		spin_wait(kt, &backoff);
	}
	kt->wait.kind = CXS_KT_NO_WAIT;
	return true;
}

void cxs_kt_waiting(const struct cxs_kt *kt, struct cxs_kt_wait *w)
{
	*w = kt->wait;
}

void cxs_kt_roi_begin(struct cxs_kt *kt)
{
	if (!kt->nat)
		push(kt, &(struct cxs_kop){.kind = CXS_KOP_ROI_BEGIN});
}

void cxs_kt_roi_end(struct cxs_kt *kt)
{
	if (!kt->nat)
		push(kt, &(struct cxs_kop){.kind = CXS_KOP_ROI_END});
}

const uint8_t *cxs_kt_reference(const struct cxs_kt *kt)
{
	return kt->p.reference;
}

void cxs_kt_check_words(struct cxs_kt *kt, uint64_t off, uint64_t len)
{
	const uint8_t *ref = kt->p.reference;
	if (!ref)
		return;
	if (failed_view(kt)) {
		if (kt->waived++ == 0)
			snprintf(kt->waived_msg, sizeof kt->waived_msg,
				 "%s: thread %u's comparison with the reference run", kt->p.kernel->name,
				 kt->p.id);
		return;
	}
	enum { BATCH = 32 };
	uint64_t base = kt->p.shared_base;
	for (uint64_t o = off & ~UINT64_C(7); o < off + len; o += 8 * BATCH) {
		uint32_t h[BATCH];
		uint32_t n = 0;
		for (uint64_t a = o; a < off + len && n < BATCH; a += 8)
			h[n++] = cxs_kt_ld(kt, base + a, 8);
		for (uint32_t i = 0; i < n; i++) {
			uint64_t want;
			memcpy(&want, ref + o + 8 * i, 8);
			uint64_t got = cxs_kt_get(kt, h[i]);
			if (got != want)
				cxs_kt_fail(kt,
					    "%s: thread %u read %#" PRIx64 " at shared offset %#" PRIx64
					    " (address %#" PRIx64 "); the reference run has %#" PRIx64,
					    kt->p.kernel->name, kt->p.id, got, o + 8 * i,
					    base + o + 8 * i, want);
		}
	}
}

uint64_t cxs_kt_waived(const struct cxs_kt *kt, const char **first)
{
	*first = kt->waived ? kt->waived_msg : NULL;
	return kt->waived;
}

uint64_t cxs_kt_failed_cns(const struct cxs_kt *kt)
{
	return failed_view(kt);
}

bool cxs_kt_thread_dead(const struct cxs_kt *kt, uint32_t t)
{
	return thread_dead(kt, t);
}

uint64_t cxs_kt_takeovers(const struct cxs_kt *kt)
{
	return kt->takeovers;
}

void cxs_kt_fail(struct cxs_kt *kt, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (failed_view(kt)) {
		/* After a failure: the check is waived, the thread ends. */
		if (kt->waived++ == 0)
			vsnprintf(kt->waived_msg, sizeof kt->waived_msg, fmt, ap);
		va_end(ap);
		kt->state = KT_DONE;
		for (;;)
			leave(kt);
	}
	vsnprintf(kt->err, sizeof kt->err, fmt, ap);
	va_end(ap);
	kt->state = KT_FAILED;
	kt->qn = 0; /* nothing after the failure reaches the core */
	for (;;)
		leave(kt);
}

void cxs_kt_fail_or_waive(struct cxs_kt *kt, const char *fmt, ...)
{
	char msg[sizeof kt->err];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (!failed_view(kt))
		cxs_kt_fail(kt, "%s", msg);
	if (kt->waived++ == 0)
		snprintf(kt->waived_msg, sizeof kt->waived_msg, "%s", msg);
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

const char *cxs_kt_error(const struct cxs_kt *kt)
{
	return kt->err;
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

uint64_t cxs_kt_rand(struct cxs_kt *kt)
{
	return splitmix(&kt->rng);
}

/* ---- life cycle -------------------------------------------------------------- */

/* Apart from cxs_kt_new: getcontext returns twice as far as the compiler knows. */
static int make_context(struct cxs_kt *kt)
{
	if (getcontext(&kt->self.uc) != 0)
		return -1;
	kt->self.uc.uc_stack.ss_sp = kt->stack;
	kt->self.uc.uc_stack.ss_size = kt->stack_bytes;
	kt->self.uc.uc_link = NULL;
	makecontext(&kt->self.uc, trampoline, 0);
	return 0;
}

struct cxs_kt *cxs_kt_new(const struct cxs_kt_params *p, char *err, size_t errlen)
{
	struct cxs_kt *kt = calloc(1, sizeof *kt);
	if (!kt)
		goto oom;
	kt->p = *p;
	kt->stack_bytes = p->stack_bytes ? p->stack_bytes : (size_t)256 << 10;
	kt->stack = malloc(kt->stack_bytes);
	if (!kt->stack)
		goto oom;
	kt->rng = p->img->seed * UINT64_C(0x100000001b3) ^ ((uint64_t)p->id << 32 | 0x5bd1e995);
	if (make_context(kt) != 0)
		goto oom;
	return kt;
oom:
	if (kt)
		free(kt->stack);
	free(kt);
	snprintf(err, errlen, "out of memory for a thread program");
	return NULL;
}

void cxs_kt_free(struct cxs_kt *kt)
{
	if (!kt)
		return;
	free(kt->stack);
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

uint64_t cxs_kt_mem_ops(const struct cxs_kt *kt)
{
	return kt->mem_ops;
}

int cxs_kt_run_native(const struct cxs_kernel *k, const struct cxs_kimage *img,
		      uint8_t **final_image, char *err, size_t errlen)
{
	return cxs_kt_run_native_ops(k, img, final_image, NULL, err, errlen);
}

int cxs_kt_run_native_ops(const struct cxs_kernel *k, const struct cxs_kimage *img,
			  uint8_t **final_image, uint64_t *mem_ops, char *err, size_t errlen)
{
	int rc = -1;
	uint32_t n = img->nthreads;
	struct native nat = {.shared_base = UINT64_C(1) << 40,
			     .shared_bytes = img->shared_bytes,
			     .private_bytes = img->private_bytes};
	struct cxs_kt **kts = calloc(n, sizeof *kts);
	nat.shared = malloc(img->shared_bytes ? img->shared_bytes : 1);
	if (!kts || !nat.shared) {
		snprintf(err, errlen, "out of memory for the reference run of %s", k->name);
		goto out;
	}
	memcpy(nat.shared, img->shared, img->shared_bytes);
	for (uint32_t t = 0; t < n; t++) {
		struct cxs_kt_params p = {.kernel = k, .img = img, .id = t,
					  .shared_base = nat.shared_base,
					  .private_base = (uint64_t)(t + 1) << 32};
		if (!(kts[t] = cxs_kt_new(&p, err, errlen)))
			goto out;
		kts[t]->nat = &nat;
		kts[t]->nat_priv = calloc(1, img->private_bytes ? img->private_bytes : 1);
		if (!kts[t]->nat_priv) {
			snprintf(err, errlen, "out of memory for the reference run of %s", k->name);
			goto out;
		}
	}
	uint64_t idle_rounds = 0;
	for (bool live = true; live;) {
		live = false;
		bool progress = false;
		for (uint32_t t = 0; t < n; t++) {
			struct cxs_kt *kt = kts[t];
			if (kt->state >= KT_DONE)
				continue;
			if (kt->state == KT_NEW)
				starting = kt;
			enter(kt, &nat.sched);
			if (kt->state == KT_FAILED) {
				snprintf(err, errlen, "reference run of %s: %s", k->name, kt->err);
				goto out;
			}
			progress |= kt->state == KT_DONE || !kt->nat_spun;
			live |= kt->state != KT_DONE;
		}
		idle_rounds = progress ? 0 : idle_rounds + 1;
		if (idle_rounds > NATIVE_SPIN_ROUNDS_MAX) {
			snprintf(err, errlen,
				 "reference run of %s: every thread spins and none progresses "
				 "(a lock never released or a barrier with a wrong count)",
				 k->name);
			goto out;
		}
	}
	*final_image = nat.shared;
	nat.shared = NULL;
	for (uint32_t t = 0; mem_ops && t < n; t++)
		mem_ops[t] = kts[t]->mem_ops;
	rc = 0;
out:
	for (uint32_t t = 0; kts && t < n; t++) {
		if (kts[t])
			free(kts[t]->nat_priv);
		cxs_kt_free(kts[t]);
	}
	free(kts);
	free(nat.shared);
	return rc;
}
