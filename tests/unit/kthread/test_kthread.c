/*
 * Thread programs (kthread.h) on the native backend — the reference runs that
 * the simulated machine's results are compared with must themselves be
 * right — and the runtime's view of failed CNs (failed_cns: lock takeover,
 * barriers that shrink, waived checks), driven step by step through the
 * simulator's side of the API so that a test chooses who runs when.
 */
#include <check.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cxlsim/kthread.h"
#include "unit_suites.h"

static int run_native(const char *name, uint64_t size, uint32_t threads, uint8_t **out,
		      struct cxs_kimage *img, char *err)
{
	const struct cxs_kernel *k = cxs_kernel_find(name);
	ck_assert_ptr_nonnull(k);
	*img = (struct cxs_kimage){.size = size, .seed = 7, .nthreads = threads};
	ck_assert_int_eq(k->build(img, err, 256), 0);
	return cxs_kt_run_native(k, img, out, err, 256);
}

START_TEST(test_micro_native)
{
	static const char *const names[] = {"ptrchase", "stream", "strided", "memset"};
	for (size_t i = 0; i < 4; i++) {
		struct cxs_kimage img;
		uint8_t *fin = NULL;
		char err[256] = "";
		ck_assert_msg(run_native(names[i], 16, 3, &fin, &img, err) == 0, "%s: %s",
			      names[i], err);
		if (strcmp(names[i], "memset") == 0) {
			/* thread t's slice holds (t+1) in every byte */
			for (uint32_t t = 0; t < 3; t++)
				ck_assert_int_eq(fin[t * 16 * 1024 + 100], t + 1);
		} else {
			ck_assert_mem_eq(fin, img.shared, img.shared_bytes); /* read only */
		}
		free(fin);
		cxs_kimage_free(&img);
	}
}
END_TEST

START_TEST(test_litmus_native_builds_and_runs)
{
	struct cxs_kimage img;
	uint8_t *fin = NULL;
	char err[256] = "";
	ck_assert_msg(run_native("litmus_iriw", 50, 4, &fin, &img, err) == 0, "%s", err);
	free(fin);
	cxs_kimage_free(&img);
	img = (struct cxs_kimage){.size = 50, .seed = 7, .nthreads = 3}; /* IRIW needs 4 */
	ck_assert_int_eq(cxs_kernel_find("litmus_iriw")->build(&img, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "needs 4 threads"));
}
END_TEST

/* A program that never releases its lock: the native run must report it, not hang. */
static void hold_forever(struct cxs_kt *kt)
{
	cxs_kt_lock(kt, cxs_kt_shared(kt));
	if (cxs_kt_id(kt) == 0)
		return; /* thread 0 keeps the lock; thread 1 spins for ever */
}

static int build_one_line(struct cxs_kimage *img, char *err, size_t errlen)
{
	img->shared_bytes = 64;
	img->shared = calloc(1, 64);
	return img->shared ? 0 : -1;
}

START_TEST(test_native_reports_a_stuck_lock)
{
	const struct cxs_kernel k = {.name = "stuck", .build = build_one_line, .run = hold_forever};
	struct cxs_kimage img = {.size = 1, .seed = 1, .nthreads = 2};
	char err[256] = "";
	uint8_t *fin = NULL;
	ck_assert_int_eq(k.build(&img, err, sizeof err), 0);
	ck_assert_int_eq(cxs_kt_run_native(&k, &img, &fin, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "none progresses"));
	cxs_kimage_free(&img);
}
END_TEST

/* A program that fails: the message comes back. */
static void fails(struct cxs_kt *kt)
{
	if (cxs_kt_id(kt) == 1)
		cxs_kt_fail(kt, "thread %u says no", cxs_kt_id(kt));
}

START_TEST(test_native_failure_message)
{
	const struct cxs_kernel k = {.name = "fails", .build = build_one_line, .run = fails};
	struct cxs_kimage img = {.size = 1, .seed = 1, .nthreads = 3};
	char err[256] = "";
	uint8_t *fin = NULL;
	ck_assert_int_eq(k.build(&img, err, sizeof err), 0);
	ck_assert_int_eq(cxs_kt_run_native(&k, &img, &fin, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "thread 1 says no"));
	cxs_kimage_free(&img);
}
END_TEST

/* ---- the runtime's view of failed CNs (cxs_kt_params.failed_cns) ------------------ */

/*
 * Threads driven through the simulator's side of the API (cxs_kt_next /
 * cxs_kt_loaded) on a flat memory, one operation at a time, in the order a
 * test chooses: each operation acts on memory when it is popped, so the
 * memory is sequentially consistent and a thread's progress is whatever the
 * test grants it. A dead thread is simply never stepped again; the failure
 * becomes visible when the test sets bits in F.failed, the word every
 * thread's failed_cns points to.
 */
enum { F_MAX = 4, F_SHARED = 512 };
#define F_BASE (UINT64_C(1) << 40)
/* Shared layout (byte offsets). */
#define F_LOCK 0     /* lock word */
#define F_LOCK2 64   /* a second lock */
#define F_FLAG 128   /* set by the test: thread 1 may unlock */
#define F_BAR 192    /* barrier: count, sense */
#define F_RES 256    /* per thread: result word (lock: 1 acquired, 2 taken over) */
#define F_RES2 320   /* per thread: a second result word */
#define F_PASS 384   /* per thread: episodes passed (barriers) */

static struct {
	struct cxs_kernel k;
	struct cxs_kimage img;
	struct cxs_kt *kt[F_MAX];
	bool done[F_MAX];
	uint8_t mem[F_SHARED];
	uint64_t failed;
	uint32_t bar_n; /* the barrier's thread count */
} F;

static uint64_t f_word(uint64_t off)
{
	uint64_t v;
	memcpy(&v, F.mem + off, 8);
	return v;
}

static void f_setup(cxs_kt_main_fn *run, uint32_t nthreads, uint32_t cores_per_cn,
		    const uint8_t *reference)
{
	char err[256] = "";
	memset(&F, 0, sizeof F);
	F.k = (struct cxs_kernel){.name = "failview", .run = run};
	F.img = (struct cxs_kimage){.size = 1, .seed = 3, .nthreads = nthreads,
				    .shared_bytes = F_SHARED};
	for (uint32_t t = 0; t < nthreads; t++) {
		struct cxs_kt_params p = {.kernel = &F.k, .img = &F.img, .reference = reference,
					  .id = t, .shared_base = F_BASE,
					  .private_base = (uint64_t)(t + 1) << 32,
					  .stack_bytes = 64 << 10, .failed_cns = &F.failed,
					  .cores_per_cn = cores_per_cn};
		F.kt[t] = cxs_kt_new(&p, err, sizeof err);
		ck_assert_msg(F.kt[t] != NULL, "%s", err);
	}
}

static void f_teardown(void)
{
	for (uint32_t t = 0; t < F.img.nthreads; t++)
		cxs_kt_free(F.kt[t]);
}

/* Performs operation op of thread t. */
static void f_perform(uint32_t t, const struct cxs_kop *o)
{
	struct cxs_kop op = *o;
	uint8_t *a = NULL;
	if (op.kind == CXS_KOP_LOAD || op.kind == CXS_KOP_STORE || op.kind == CXS_KOP_SWAP ||
	    op.kind == CXS_KOP_FETCH_ADD || op.kind == CXS_KOP_CAS) {
		ck_assert_uint_eq(op.size, op.kind == CXS_KOP_CAS ? 4 : 8);
		ck_assert_msg(op.addr >= F_BASE && op.addr - F_BASE + 8 <= F_SHARED,
			      "thread %u: access at %#" PRIx64, t, op.addr);
		a = F.mem + (op.addr - F_BASE);
	}
	uint64_t v = 0, nv;
	switch (op.kind) {
	case CXS_KOP_CAS:
		memcpy(&v, a, 4);
		if (v == op.value >> 32)
			memcpy(a, &(uint32_t){(uint32_t)op.value}, 4);
		cxs_kt_loaded(F.kt[t], op.n, v);
		break;
	case CXS_KOP_LOAD:
		memcpy(&v, a, 8);
		cxs_kt_loaded(F.kt[t], op.n, v);
		break;
	case CXS_KOP_STORE:
		memcpy(a, &op.value, 8);
		break;
	case CXS_KOP_SWAP:
	case CXS_KOP_FETCH_ADD:
		memcpy(&v, a, 8);
		nv = op.kind == CXS_KOP_SWAP ? op.value : v + op.value;
		memcpy(a, &nv, 8);
		cxs_kt_loaded(F.kt[t], op.n, v);
		break;
	case CXS_KOP_DONE:
	case CXS_KOP_FAIL:
		F.done[t] = true;
		break;
	default:
		break;
	}
}

/* Pops and performs one operation of thread t; returns its kind. */
static uint8_t f_step(uint32_t t)
{
	struct cxs_kop op;
	ck_assert(!F.done[t]);
	cxs_kt_next(F.kt[t], &op);
	f_perform(t, &op);
	return op.kind;
}

/* Runs thread t for up to n operations or until it ends; returns how many ran. */
static uint32_t f_run(uint32_t t, uint32_t n)
{
	uint32_t i = 0;
	while (i < n && !F.done[t]) {
		f_step(t);
		i++;
	}
	return i;
}

/* Runs thread t until word `off` is nonzero (at most 10 000 operations). */
static void f_run_until_set(uint32_t t, uint64_t off)
{
	for (uint32_t i = 0; i < 10000 && f_word(off) == 0 && !F.done[t]; i++)
		f_step(t);
	ck_assert_msg(f_word(off) != 0, "thread %u never set shared word %#" PRIx64, t, off);
}

/* Runs thread t until shared word `off` equals v (at most 10 000 operations). */
static void f_run_until_eq(uint32_t t, uint64_t off, uint64_t v)
{
	for (uint32_t i = 0; i < 10000 && f_word(off) != v && !F.done[t]; i++)
		f_step(t);
	ck_assert_msg(f_word(off) == v, "thread %u: shared word %#" PRIx64 " is %" PRIu64
		      ", not %" PRIu64, t, off, f_word(off), v);
}

static enum cxs_kt_wait_kind f_waiting(uint32_t t, uint32_t *holder)
{
	struct cxs_kt_wait w;
	cxs_kt_waiting(F.kt[t], &w);
	if (holder)
		*holder = w.holder;
	return w.kind;
}

/*
 * Thread 2 takes LOCK and dies holding it; thread 1 takes LOCK2 and holds it
 * until FLAG; thread 0 takes LOCK (a takeover), releases it, then LOCK2.
 */
static void lock_prog(struct cxs_kt *kt)
{
	uint64_t s = cxs_kt_shared(kt);
	uint32_t id = cxs_kt_id(kt);
	switch (id) {
	case 0:
		cxs_kt_store(kt, s + F_RES, 8, cxs_kt_lock(kt, s + F_LOCK) ? 2 : 1);
		cxs_kt_unlock(kt, s + F_LOCK);
		cxs_kt_store(kt, s + F_RES2, 8, cxs_kt_lock(kt, s + F_LOCK2) ? 2 : 1);
		cxs_kt_unlock(kt, s + F_LOCK2);
		break;
	case 1:
		cxs_kt_store(kt, s + F_RES + 8, 8, cxs_kt_lock(kt, s + F_LOCK2) ? 2 : 1);
		while (cxs_kt_load(kt, s + F_FLAG, 8) == 0)
			cxs_kt_compute(kt, 1);
		cxs_kt_unlock(kt, s + F_LOCK2);
		break;
	case 2:
		cxs_kt_store(kt, s + F_RES + 16, 8, cxs_kt_lock(kt, s + F_LOCK) ? 2 : 1);
		cxs_kt_unlock(kt, s + F_LOCK);
		break;
	default:
		break;
	}
}

/*
 * Four threads, two per CN (threads 0, 1 on CN 0; 2, 3 on CN 1). Thread 0
 * spins on LOCK, held by thread 2, as long as CN 1 is alive (the waiting
 * report names holder 2); once CN 1 has failed it takes the lock over:
 * cxs_kt_lock returns true, the lock word names thread 0, one takeover is
 * counted. LOCK2 is held by thread 1, alive on CN 0 although its id is the
 * failed CN's number (a view mapping threads to CNs by id would take it
 * over): thread 0 waits until thread 1 releases it, and that lock returns
 * false with no second takeover.
 */
START_TEST(test_lock_takeover_of_a_dead_holder)
{
	f_setup(lock_prog, 4, 2, NULL);
	uint32_t holder = 0;

	f_run_until_set(2, F_RES + 16);
	ck_assert_uint_eq(f_word(F_RES + 16), 1);
	ck_assert_uint_eq(f_word(F_LOCK), 3);
	f_run_until_set(1, F_RES + 8);
	ck_assert_uint_eq(f_word(F_LOCK2), 2);

	f_run(0, 500);
	ck_assert_uint_eq(f_word(F_RES), 0);
	ck_assert_int_eq(f_waiting(0, &holder), CXS_KT_WAIT_LOCK);
	ck_assert_uint_eq(holder, 2);
	ck_assert_uint_eq(cxs_kt_takeovers(F.kt[0]), 0);

	F.failed = UINT64_C(1) << 1; /* CN 1: threads 2 and 3 */
	f_run_until_set(0, F_RES);
	ck_assert_uint_eq(f_word(F_RES), 2);
	ck_assert_uint_eq(cxs_kt_takeovers(F.kt[0]), 1);
	ck_assert_uint_eq(cxs_kt_failed_cns(F.kt[0]), 2);

	f_run(0, 500);
	ck_assert_uint_eq(f_word(F_LOCK), 0); /* released after the takeover */
	ck_assert_uint_eq(f_word(F_RES2), 0);
	ck_assert_int_eq(f_waiting(0, &holder), CXS_KT_WAIT_LOCK);
	ck_assert_uint_eq(holder, 1);
	ck_assert_uint_eq(f_word(F_LOCK2), 2);

	memset(F.mem + F_FLAG, 1, 1);
	f_run(1, 10000);
	ck_assert(F.done[1]);
	f_run(0, 10000);
	ck_assert(F.done[0]);
	ck_assert_uint_eq(f_word(F_RES2), 1);
	ck_assert_uint_eq(f_word(F_LOCK2), 0);
	ck_assert_uint_eq(cxs_kt_takeovers(F.kt[0]), 1);
	ck_assert_uint_eq(cxs_kt_takeovers(F.kt[1]), 0);
	ck_assert_int_eq(f_waiting(0, NULL), CXS_KT_NO_WAIT);
	f_teardown();
}
END_TEST

/*
 * The race a swap-based lock loses: thread 0 sees LOCK free, thread 2 takes
 * it before thread 0's atomic performs, and then CN 1 (thread 2) fails. The
 * losing attempt must leave thread 2's id in the word, so that thread 0
 * sees a dead holder and takes the lock over (a swap would have written
 * thread 0's own id there, and thread 0 would wait for itself for ever).
 */
START_TEST(test_lock_lost_race_then_holder_dies)
{
	f_setup(lock_prog, 4, 2, NULL);
	struct cxs_kop op;
	/* Thread 0 up to its atomic on LOCK (whatever atomic the lock uses), held back. */
	bool atomic = false;
	do {
		cxs_kt_next(F.kt[0], &op);
		atomic = op.kind == CXS_KOP_CAS || op.kind == CXS_KOP_SWAP;
		if (!atomic)
			f_perform(0, &op);
	} while (!atomic && !F.done[0]);
	ck_assert(atomic);
	ck_assert_uint_eq(op.addr, F_BASE + F_LOCK);
	f_run_until_set(2, F_LOCK);           /* thread 2 gets there first */
	ck_assert_uint_eq(f_word(F_LOCK), 3);
	f_perform(0, &op); /* thread 0's compare fails */
	ck_assert_uint_eq(f_word(F_LOCK), 3);
	uint32_t holder = 0;
	f_run(0, 200);
	ck_assert_int_eq(f_waiting(0, &holder), CXS_KT_WAIT_LOCK);
	ck_assert_uint_eq(holder, 2);
	ck_assert_uint_eq(f_word(F_RES), 0);

	F.failed = UINT64_C(1) << 1; /* thread 2 dies holding LOCK */
	f_run_until_set(0, F_RES);
	ck_assert_uint_eq(f_word(F_RES), 2); /* a takeover */
	ck_assert_uint_eq(cxs_kt_takeovers(F.kt[0]), 1);
	f_teardown();
}
END_TEST

/*
 * Ordered locks (cxs_kt_lock_turn). Each thread takes LOCK at its turn in
 * turn_of[] (owner_of[] the inverse: whose each turn is), stores 1 (2 for a
 * takeover) in its RES word and the turns it skipped in its RES2 word, and
 * releases it — but thread 2 keeps it until FLAG when turn_hold is set.
 */
static const uint32_t *turn_owner_table;
static uint32_t turn_of[F_MAX];
static bool turn_hold;

static uint32_t f_turn_owner(const void *ctx, uint64_t turn)
{
	(void)ctx;
	return turn < F_MAX ? turn_owner_table[turn] : UINT32_MAX;
}

static void lock_turn_prog(struct cxs_kt *kt)
{
	uint64_t s = cxs_kt_shared(kt), skipped = 0;
	uint32_t id = cxs_kt_id(kt);
	if (turn_of[id] == UINT32_MAX)
		return;
	bool took = cxs_kt_lock_turn(kt, s + F_LOCK, turn_of[id], f_turn_owner, NULL, &skipped);
	cxs_kt_store(kt, s + F_RES + 8 * id, 8, took ? 2 : 1);
	cxs_kt_store(kt, s + F_RES2 + 8 * id, 8, skipped);
	while (turn_hold && id == 2 && cxs_kt_load(kt, s + F_FLAG, 8) == 0)
		cxs_kt_compute(kt, 1);
	cxs_kt_unlock_turn(kt, s + F_LOCK, turn_of[id]);
}

/*
 * The recorded order is kept: thread 0's turn is 1, thread 1's is 0. Thread 0
 * runs first and waits (for whom it does not know: no failure, no owner
 * asked); thread 1 takes turn 0 and releases it, making turn 1 due; thread 0
 * then takes it, and its release makes turn 2 due. Nothing is skipped.
 */
START_TEST(test_lock_turns_keep_the_recorded_order)
{
	static const uint32_t owners[F_MAX] = {1, 0, UINT32_MAX, UINT32_MAX};
	f_setup(lock_turn_prog, 2, 1, NULL);
	turn_owner_table = owners;
	turn_of[0] = 1;
	turn_of[1] = 0;
	turn_hold = false;
	uint32_t holder = 0;
	f_run(0, 500);
	ck_assert_uint_eq(f_word(F_RES), 0);
	ck_assert_int_eq(f_waiting(0, &holder), CXS_KT_WAIT_LOCK);
	ck_assert_uint_eq(holder, UINT32_MAX);
	f_run(1, 10000);
	ck_assert(F.done[1]);
	ck_assert_uint_eq(f_word(F_RES + 8), 1);
	ck_assert_uint_eq(f_word(F_LOCK), UINT64_C(1) << 32);
	f_run(0, 10000);
	ck_assert(F.done[0]);
	ck_assert_uint_eq(f_word(F_RES), 1);
	ck_assert_uint_eq(f_word(F_RES2), 0);
	ck_assert_uint_eq(f_word(F_LOCK), UINT64_C(2) << 32);
	f_teardown();
}
END_TEST

/*
 * A dead thread's turns are skipped. Turn 0 is thread 2's, which takes LOCK
 * and dies holding it; turn 1 is thread 1's, which dies before it arrives;
 * turn 2 is thread 0's, turn 3 thread 3's (one thread per CN). Before the
 * failure thread 0 waits, reported as waiting for thread 2. Once CNs 1 and 2
 * have failed, thread 0 skips turns 0 and 1 and takes LOCK over from dead
 * thread 2 (a takeover); thread 3, alive, is not skipped: it takes turn 3
 * after thread 0's release, skipping nothing itself.
 */
START_TEST(test_lock_turns_of_dead_threads_are_skipped)
{
	static const uint32_t owners[F_MAX] = {2, 1, 0, 3};
	f_setup(lock_turn_prog, 4, 1, NULL);
	turn_owner_table = owners;
	turn_of[0] = 2;
	turn_of[1] = 1;
	turn_of[2] = 0;
	turn_of[3] = 3;
	turn_hold = true;
	uint32_t holder = 0;
	f_run_until_set(2, F_RES + 16);
	ck_assert_uint_eq(f_word(F_LOCK), 3);
	f_run(0, 500);
	f_run(3, 500);
	ck_assert_uint_eq(f_word(F_RES), 0);
	ck_assert_int_eq(f_waiting(0, &holder), CXS_KT_WAIT_LOCK);
	ck_assert_uint_eq(holder, 2);

	F.failed = UINT64_C(1) << 1 | UINT64_C(1) << 2;
	f_run(3, 500); /* turn 3 is not due: thread 3 may skip 0 and 1, but waits for live 0 */
	ck_assert_uint_eq(f_word(F_RES + 24), 0);
	f_run_until_set(0, F_RES);
	ck_assert_uint_eq(f_word(F_RES), 2); /* taken over from thread 2 */
	ck_assert_uint_eq(cxs_kt_takeovers(F.kt[0]), 1);
	f_run(0, 10000);
	ck_assert(F.done[0]);
	ck_assert_uint_eq(f_word(F_LOCK), UINT64_C(3) << 32);
	f_run(3, 10000);
	ck_assert(F.done[3]);
	ck_assert_uint_eq(f_word(F_RES + 24), 1);
	ck_assert_uint_eq(f_word(F_RES2) + f_word(F_RES2 + 24), 2); /* turns 0 and 1, once each */
	ck_assert_uint_eq(f_word(F_LOCK), UINT64_C(4) << 32);
	f_teardown();
}
END_TEST

/* Two episodes of a barrier of F.bar_n threads, each counted in F_PASS + 8 id. */
static void barrier_prog(struct cxs_kt *kt)
{
	uint64_t s = cxs_kt_shared(kt), me = s + F_PASS + 8 * cxs_kt_id(kt);
	if (F.bar_n < cxs_kt_count(kt) && cxs_kt_id(kt) % 2 == 1)
		return; /* a subset barrier: the even threads only */
	for (int ep = 0; ep < 2; ep++) {
		cxs_kt_barrier(kt, s + F_BAR, F.bar_n);
		cxs_kt_store(kt, me, 8, cxs_kt_load(kt, me, 8) + 1);
	}
}

/* Runs thread t until it spins at the barrier (or passes it, or ends). */
static void f_run_to_barrier(uint32_t t)
{
	for (uint32_t i = 0; i < 100 && f_waiting(t, NULL) != CXS_KT_WAIT_BARRIER && !F.done[t]; i++)
		f_step(t);
	ck_assert_int_eq(f_waiting(t, NULL), CXS_KT_WAIT_BARRIER);
}

static uint64_t f_pass(uint32_t t)
{
	return f_word(F_PASS + 8 * t);
}

/*
 * A barrier of all four threads (one per CN). Threads 0, 1 and 3 arrive and
 * spin; thread 2 dies before arriving. Once CN 2 has failed, threads 1 and 3
 * look again and still wait (only the lowest live thread ends the episode);
 * thread 0 then releases it and all three pass. The second episode shrinks
 * at once: the last live arrival (thread 3) completes it with 0 and 1
 * waiting, and the count word is left at zero.
 */
START_TEST(test_barrier_of_all_shrinks_when_one_dies)
{
	f_setup(barrier_prog, 4, 1, NULL);
	F.bar_n = 4;
	f_run_to_barrier(0);
	f_run_to_barrier(1);
	f_run_to_barrier(3);
	f_run(0, 200);
	f_run(1, 200);
	f_run(3, 200);
	ck_assert_uint_eq(f_pass(0) + f_pass(1) + f_pass(3), 0);

	F.failed = UINT64_C(1) << 2;
	f_run(1, 300);
	f_run(3, 300);
	ck_assert_uint_eq(f_pass(1), 0);
	ck_assert_uint_eq(f_pass(3), 0);
	ck_assert_int_eq(f_waiting(1, NULL), CXS_KT_WAIT_BARRIER);
	f_run_until_set(0, F_PASS);
	f_run_until_set(1, F_PASS + 8);
	f_run_until_set(3, F_PASS + 24);

	/* Episode 2. */
	f_run_to_barrier(0);
	f_run_to_barrier(1);
	f_run(0, 200);
	f_run(1, 200);
	ck_assert_uint_eq(f_pass(0), 1);
	ck_assert_uint_eq(f_pass(1), 1);
	f_run(3, 10000);
	ck_assert(F.done[3]);
	ck_assert_uint_eq(f_pass(3), 2);
	f_run(0, 10000);
	f_run(1, 10000);
	ck_assert(F.done[0] && F.done[1]);
	ck_assert_uint_eq(f_pass(0), 2);
	ck_assert_uint_eq(f_pass(1), 2);
	ck_assert_uint_eq(f_pass(2), 0);
	ck_assert_uint_eq(f_word(F_BAR), 0);
	f_teardown();
}
END_TEST

/*
 * The dead thread had arrived before it died (its bit is in the mask), and
 * the failure is known before the last live thread arrives: that arrival
 * ends the episode without anyone looking again. Then the second episode
 * (thread 2's stale bit cleared by the release) completes with the three
 * live threads.
 */
START_TEST(test_barrier_of_all_dead_thread_had_arrived)
{
	f_setup(barrier_prog, 4, 1, NULL);
	F.bar_n = 4;
	f_run_to_barrier(2);
	f_run_to_barrier(0);
	f_run_to_barrier(1);
	F.failed = UINT64_C(1) << 2;
	ck_assert_uint_eq(f_word(F_BAR), 0x7); /* threads 0, 1 and 2 */
	f_run_until_set(3, F_PASS + 24);
	f_run_to_barrier(3); /* episode 2 */
	ck_assert_uint_eq(f_pass(0) + f_pass(1), 0);
	f_run_until_set(0, F_PASS);
	f_run_to_barrier(0);
	/* Thread 2's bit went with the reset; thread 0, the lowest live, adds it again. */
	ck_assert_uint_eq(f_word(F_BAR), 0xd);
	f_run(1, 10000);
	ck_assert(F.done[1]);
	f_run(0, 10000);
	f_run(3, 10000);
	ck_assert(F.done[0] && F.done[3]);
	for (uint32_t t = 0; t < 4; t++)
		ck_assert_uint_eq(f_pass(t), t == 2 ? 0 : 2);
	f_teardown();
}
END_TEST

/*
 * Regression: an episode released twice loses an arrival of the next one.
 * Threads 0 and 1 wait; thread 2 dies before arriving; thread 3, knowing of
 * the failure, arrives last — and before it resets the count and releases,
 * thread 0 (the lowest live thread) learns of the failure and sees every
 * live thread arrived. If both may end the episode, thread 0 releases it,
 * passes and arrives at the next episode, and thread 3's late reset of the
 * count erases that arrival: the next episode then waits for ever for
 * thread 0, which waits in it. Exactly one thread must end an episode.
 */
START_TEST(test_barrier_released_once_after_a_failure)
{
	f_setup(barrier_prog, 4, 1, NULL);
	F.bar_n = 4;
	f_run_to_barrier(0);
	f_run_to_barrier(1);
	f_run(0, 200);
	f_run(1, 200);

	F.failed = UINT64_C(1) << 2;
	for (int i = 0; i < 100 && !(f_word(F_BAR) & 0x8); i++)
		f_step(3); /* up to thread 3's fetch-and-add, not beyond */
	ck_assert_uint_eq(f_word(F_BAR) & 0x8, 0x8);
	f_run_until_eq(0, F_PASS, 1);
	f_run_to_barrier(0); /* thread 0 waits in episode 2 */

	for (int round = 0; round < 50; round++)
		for (uint32_t t = 0; t < 4; t++)
			if (t != 2 && !F.done[t])
				f_run(t, 200);
	for (uint32_t t = 0; t < 4; t++)
		if (t != 2)
			ck_assert_msg(F.done[t] && f_pass(t) == 2,
				      "thread %u passed %" PRIu64 " episodes of 2 (count word %#" PRIx64
				      ")",
				      t, f_pass(t), f_word(F_BAR));
	ck_assert_uint_eq(f_word(F_BAR), 0);
	f_teardown();
}
END_TEST

/*
 * The lowest live thread learns of the failure while its own arrival is in
 * flight (after its fetch-and-add, before it sees the result): its arrival
 * did not account for dead thread 2, so it must look again as soon as it
 * waits — not take the new view as already seen — and end the episode.
 */
START_TEST(test_barrier_failure_learned_during_an_arrival)
{
	f_setup(barrier_prog, 4, 1, NULL);
	F.bar_n = 4;
	f_run_to_barrier(1);
	f_run_to_barrier(3);
	for (int i = 0; i < 100 && !(f_word(F_BAR) & 0x1); i++)
		f_step(0);
	ck_assert_uint_eq(f_word(F_BAR), 0xb);
	F.failed = UINT64_C(1) << 2;
	f_run_until_eq(0, F_PASS, 1);
	f_run_until_eq(1, F_PASS + 8, 1);
	f_run_until_eq(3, F_PASS + 24, 1);
	f_teardown();
}
END_TEST

/*
 * The lowest live thread learns of a failure just after the episode it
 * waits in was completed — by the dead thread's own arrival, made before
 * it died — and reset: it must not add the dead thread's bit to the word
 * then (its own bit is gone from it: the word is no longer its episode's),
 * or the final episode leaves the count nonzero, unlike a run without the
 * failure, whose memory image recovery is checked against.
 */
START_TEST(test_barrier_failure_learned_after_the_release)
{
	f_setup(barrier_prog, 4, 1, NULL);
	F.bar_n = 4;
	for (int round = 0; round < 50; round++)
		for (uint32_t t = 0; t < 4; t++)
			for (int i = 0; i < 20 && f_pass(t) == 0; i++)
				f_step(t);
	for (uint32_t t = 0; t < 4; t++)
		ck_assert_uint_eq(f_pass(t), 1);
	f_run_to_barrier(2); /* episode 2: thread 2 arrives, then dies */
	f_run_to_barrier(0);
	f_run_to_barrier(1);
	struct cxs_kop op;
	do { /* thread 0 has just read the old sense */
		cxs_kt_next(F.kt[0], &op);
		ck_assert(op.kind != CXS_KOP_DONE && op.kind != CXS_KOP_FAIL);
		if (op.kind == CXS_KOP_LOAD) {
			uint64_t v;
			memcpy(&v, F.mem + (op.addr - F_BASE), 8);
			cxs_kt_loaded(F.kt[0], op.n, v);
		}
	} while (!(op.kind == CXS_KOP_LOAD && op.addr == F_BASE + F_BAR + 8));
	F.failed = UINT64_C(1) << 2;
	f_run(3, 10000); /* the last arrival: completes and resets */
	ck_assert(F.done[3]);
	f_run(0, 10000);
	f_run(1, 10000);
	ck_assert(F.done[0] && F.done[1]);
	ck_assert_uint_eq(f_word(F_BAR), 0);
	f_teardown();
}
END_TEST

/*
 * A barrier of a subset: participants 0 and 2 of four threads, n = 2, as
 * litmus tests do. It completes in either arrival order, twice, and leaves
 * the count at zero; the other threads never touch it. Regression (commit
 * 4d190b3): with the arrival mask indexed by thread id, 0 and 2 set bits 0
 * and 2 of a count that completes at 0b11, and deadlocked at 4 CNs.
 */
START_TEST(test_barrier_of_a_subset_completes)
{
	for (int order = 0; order < 2; order++) {
		const uint32_t a = order ? 2 : 0, b = order ? 0 : 2;
		f_setup(barrier_prog, 4, 1, NULL);
		F.bar_n = 2;
		f_run(1, 100);
		f_run(3, 100);
		ck_assert(F.done[1] && F.done[3]);
		/* Episode 1: a, then b. */
		f_run_to_barrier(a);
		f_run(a, 200);
		ck_assert_uint_eq(f_pass(a), 0);
		f_run_until_eq(b, F_PASS + 8 * b, 1);
		f_run_until_eq(a, F_PASS + 8 * a, 1);
		/* Episode 2: b, then a. */
		f_run_to_barrier(b);
		f_run(b, 200);
		ck_assert_uint_eq(f_pass(b), 1);
		f_run_until_eq(a, F_PASS + 8 * a, 2);
		f_run_until_eq(b, F_PASS + 8 * b, 2);
		f_run(0, 100);
		f_run(2, 100);
		ck_assert(F.done[0] && F.done[2]);
		ck_assert_uint_eq(f_word(F_BAR), 0);
		f_teardown();
	}
}
END_TEST

/* Compares the shared region with the reference, then gives up on its own. */
static void checking_prog(struct cxs_kt *kt)
{
	cxs_kt_check_words(kt, 0, 64);
	cxs_kt_fail(kt, "thread %u: wrong answer", cxs_kt_id(kt));
}

/*
 * Checks after a failure are waived: with a CN failed before the program
 * runs, its comparison with the reference (which differs from memory) loads
 * nothing and fails nothing, cxs_kt_fail ends the thread (DONE, not FAIL),
 * and cxs_kt_waived counts both with the first one's message. Without a
 * failure the same program stops the run at the comparison (FAIL, with the
 * word and the reference's value in the message) and nothing is waived.
 */
START_TEST(test_checks_waived_after_a_failure)
{
	uint8_t ref[F_SHARED];
	memset(ref, 0x11, sizeof ref);
	const char *first = NULL;

	f_setup(checking_prog, 2, 1, ref);
	F.failed = UINT64_C(1) << 1;
	uint8_t kind = 0;
	for (int i = 0; i < 100 && !F.done[0]; i++)
		kind = f_step(0);
	ck_assert_int_eq(kind, CXS_KOP_DONE);
	ck_assert_uint_eq(cxs_kt_mem_ops(F.kt[0]), 0);
	ck_assert_uint_eq(cxs_kt_waived(F.kt[0], &first), 2);
	ck_assert_ptr_nonnull(first);
	ck_assert_msg(strstr(first, "thread 0's comparison with the reference") != NULL, "%s", first);
	ck_assert_str_eq(cxs_kt_error(F.kt[0]), "");
	f_teardown();

	f_setup(checking_prog, 2, 1, ref);
	for (int i = 0; i < 100 && !F.done[0]; i++)
		kind = f_step(0);
	ck_assert_int_eq(kind, CXS_KOP_FAIL);
	ck_assert_uint_eq(cxs_kt_waived(F.kt[0], &first), 0);
	ck_assert_ptr_null(first);
	ck_assert_msg(strstr(cxs_kt_error(F.kt[0]), "read 0 at shared offset 0") != NULL &&
			      strstr(cxs_kt_error(F.kt[0]), "0x1111111111111111") != NULL,
		      "%s", cxs_kt_error(F.kt[0]));
	f_teardown();
}
END_TEST

static void going_on_prog(struct cxs_kt *kt)
{
	cxs_kt_fail_or_waive(kt, "thread %u: a record is half written", cxs_kt_id(kt));
	cxs_kt_store(kt, cxs_kt_shared(kt) + 8, 8, 42); /* the program goes on past it */
}

/*
 * A check in the middle of the program (cxs_kt_fail_or_waive): after a
 * failure it is waived and returns — the store after it happens, so the
 * thread would still reach later barriers — and without one it stops the
 * run with its message, the store never issued.
 */
START_TEST(test_midway_check_waived_goes_on)
{
	const char *first = NULL;
	f_setup(going_on_prog, 2, 1, NULL);
	F.failed = UINT64_C(1) << 1;
	uint8_t kind = 0;
	for (int i = 0; i < 100 && !F.done[0]; i++)
		kind = f_step(0);
	ck_assert_int_eq(kind, CXS_KOP_DONE);
	ck_assert_uint_eq(f_word(8), 42);
	ck_assert_uint_eq(cxs_kt_waived(F.kt[0], &first), 1);
	ck_assert_str_eq(first, "thread 0: a record is half written");
	ck_assert_str_eq(cxs_kt_error(F.kt[0]), "");
	f_teardown();

	f_setup(going_on_prog, 2, 1, NULL);
	for (int i = 0; i < 100 && !F.done[0]; i++)
		kind = f_step(0);
	ck_assert_int_eq(kind, CXS_KOP_FAIL);
	ck_assert_uint_eq(f_word(8), 0);
	ck_assert_uint_eq(cxs_kt_waived(F.kt[0], &first), 0);
	ck_assert_str_eq(cxs_kt_error(F.kt[0]), "thread 0: a record is half written");
	f_teardown();
}
END_TEST

Suite *kthread_suite(void)
{
	Suite *s = suite_create("kthread");
	TCase *tc = tcase_create("native");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_micro_native);
	tcase_add_test(tc, test_litmus_native_builds_and_runs);
	tcase_add_test(tc, test_native_reports_a_stuck_lock);
	tcase_add_test(tc, test_native_failure_message);
	suite_add_tcase(s, tc);
	tc = tcase_create("failure_view");
	tcase_add_test(tc, test_lock_takeover_of_a_dead_holder);
	tcase_add_test(tc, test_lock_lost_race_then_holder_dies);
	tcase_add_test(tc, test_lock_turns_keep_the_recorded_order);
	tcase_add_test(tc, test_lock_turns_of_dead_threads_are_skipped);
	tcase_add_test(tc, test_barrier_of_all_shrinks_when_one_dies);
	tcase_add_test(tc, test_barrier_of_all_dead_thread_had_arrived);
	tcase_add_test(tc, test_barrier_released_once_after_a_failure);
	tcase_add_test(tc, test_barrier_failure_learned_during_an_arrival);
	tcase_add_test(tc, test_barrier_failure_learned_after_the_release);
	tcase_add_test(tc, test_barrier_of_a_subset_completes);
	tcase_add_test(tc, test_checks_waived_after_a_failure);
	tcase_add_test(tc, test_midway_check_waived_goes_on);
	suite_add_tcase(s, tc);
	return s;
}
