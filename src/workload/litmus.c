/*
 * litmus.c — TSO litmus tests as thread programs on the simulated machine.
 *
 * Each test is run `size` times (iterations). Its participants are spread
 * over the machine (participant i is thread i * nthreads / needed, so with one
 * core per CN they sit on different CNs and every access crosses the CXL
 * fabric); the other threads return at once. An iteration:
 *
 *   barrier; every participant loads x and y (shared copies everywhere, so
 *   a store waits in the store buffer for its upgrade while a load hits);
 *   barrier; random delay (0..CXS_LITMUS_JITTER instructions, from the
 *   thread's own stream); the test's accesses; registers stored to the
 *   participant's result line; barrier; participant 0 reads every result,
 *   tallies the outcome and resets x and y (the next barrier orders the
 *   reset before the next iteration's accesses).
 *
 * Tests (x, y: 0 at the start; r*: registers):
 *   MP     T0: x=1; y=1            T1: r0=y; r1=x           forbidden r0=1, r1=0
 *   SB     T0: x=1; r0=y           T1: y=1; r1=x            r0=0, r1=0 allowed by TSO
 *                                                           (store buffering), forbidden
 *                                                           with a fence after the store
 *   LB     T0: r0=x; y=1           T1: r1=y; x=1            forbidden r0=1, r1=1
 *   IRIW   T0: x=1   T1: y=1   T2: r0=x; r1=y   T3: r2=y; r3=x
 *                                                           forbidden 1,0,1,0
 *   2+2W   T0: x=1; y=2            T1: y=1; x=2             forbidden final x=1, y=1
 * The _fence variants put a full fence between each thread's two accesses.
 * Loads of one thread are issued together (no value needed in between), so
 * the core may perform them out of order; TSO's load-load order must still
 * hold (src/core/core.c replays a load whose line was invalidated before it
 * could retire).
 *
 * Result counters: iterations, forbidden (outcomes TSO forbids; the tests
 * require 0), relaxed (SB's 0/0: non-zero expected without the fence) and
 * outcome_<bits> per outcome seen.
 */
#include "cxlsim/kthread.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define LINE 64u
#define CXS_LITMUS_JITTER 3000u /* instructions (1.25 us): wider than the barrier's release skew */

enum test { T_MP, T_SB, T_LB, T_IRIW, T_2P2W };

struct litmus {
	enum test test;
	bool fence;
};

/*
 * Shared layout: barrier, x, y, results of participant i — each in its own
 * 4 KiB page, so that no prefetcher (they stay within a page) brings x or y
 * along with another line and spoils the warm-up below.
 */
#define PAGE 4096u
#define OFF_BAR 0
#define OFF_X (1 * PAGE)
#define OFF_Y (2 * PAGE)
#define OFF_RES(i) ((3 + (i)) * PAGE)

static const char *const outcome_names[16] = {
	"outcome_0000", "outcome_0001", "outcome_0010", "outcome_0011",
	"outcome_0100", "outcome_0101", "outcome_0110", "outcome_0111",
	"outcome_1000", "outcome_1001", "outcome_1010", "outcome_1011",
	"outcome_1100", "outcome_1101", "outcome_1110", "outcome_1111",
};

static uint32_t needed(enum test t)
{
	return t == T_IRIW ? 4 : 2;
}

static int build(struct cxs_kimage *img, enum test t, char *err, size_t errlen)
{
	if (img->nthreads < needed(t)) {
		snprintf(err, errlen, "this litmus test needs %u threads (have %u)", needed(t),
			 img->nthreads);
		return -1;
	}
	if (img->size < 1) {
		snprintf(err, errlen, "size (iterations) must be at least 1");
		return -1;
	}
	img->shared_bytes = OFF_RES(4);
	img->private_bytes = LINE;
	img->shared = calloc(1, img->shared_bytes);
	if (!img->shared) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

#define BUILD(T)                                                                   \
	static int build_##T(struct cxs_kimage *img, char *err, size_t errlen)     \
	{                                                                          \
		return build(img, T, err, errlen);                                 \
	}
BUILD(T_MP)
BUILD(T_SB)
BUILD(T_LB)
BUILD(T_IRIW)
BUILD(T_2P2W)

static void sep(struct cxs_kt *kt, bool fence)
{
	if (fence)
		cxs_kt_fence(kt);
}

/* Thread `me`'s accesses; returns its registers (bit i = register i). */
static uint64_t body(struct cxs_kt *kt, const struct litmus *L, uint32_t me)
{
	uint64_t x = cxs_kt_shared(kt) + OFF_X, y = cxs_kt_shared(kt) + OFF_Y;
	uint32_t h0, h1;
	switch (L->test) {
	case T_MP:
		if (me == 0) {
			cxs_kt_store(kt, x, 8, 1);
			sep(kt, L->fence);
			cxs_kt_store(kt, y, 8, 1);
			return 0;
		}
		h0 = cxs_kt_ld(kt, y, 8);
		sep(kt, L->fence);
		h1 = cxs_kt_ld(kt, x, 8);
		return cxs_kt_get(kt, h0) | cxs_kt_get(kt, h1) << 1;
	case T_SB:
		cxs_kt_store(kt, me == 0 ? x : y, 8, 1);
		sep(kt, L->fence);
		return cxs_kt_load(kt, me == 0 ? y : x, 8);
	case T_LB:
		h0 = cxs_kt_ld(kt, me == 0 ? x : y, 8);
		sep(kt, L->fence);
		cxs_kt_store(kt, me == 0 ? y : x, 8, 1);
		return cxs_kt_get(kt, h0);
	case T_IRIW:
		if (me < 2) {
			cxs_kt_store(kt, me == 0 ? x : y, 8, 1);
			return 0;
		}
		h0 = cxs_kt_ld(kt, me == 2 ? x : y, 8);
		sep(kt, L->fence);
		h1 = cxs_kt_ld(kt, me == 2 ? y : x, 8);
		return cxs_kt_get(kt, h0) | cxs_kt_get(kt, h1) << 1;
	case T_2P2W:
		cxs_kt_store(kt, me == 0 ? x : y, 8, 1);
		sep(kt, L->fence);
		cxs_kt_store(kt, me == 0 ? y : x, 8, 2);
		return 0;
	}
	return 0;
}

/* Participant 0, after the second barrier: the outcome's bits. */
static uint32_t outcome(struct cxs_kt *kt, const struct litmus *L)
{
	uint64_t s = cxs_kt_shared(kt);
	uint64_t r0 = cxs_kt_load(kt, s + OFF_RES(0), 8), r1 = cxs_kt_load(kt, s + OFF_RES(1), 8);
	switch (L->test) {
	case T_MP:
		return (uint32_t)r1; /* T1's r0 (bit 0), r1 (bit 1) */
	case T_SB:
	case T_LB:
		return (uint32_t)(r0 | r1 << 1);
	case T_IRIW:
		return (uint32_t)(cxs_kt_load(kt, s + OFF_RES(2), 8) |
				  cxs_kt_load(kt, s + OFF_RES(3), 8) << 2);
	case T_2P2W:
		return (uint32_t)((cxs_kt_load(kt, s + OFF_X, 8) - 1) |
				  (cxs_kt_load(kt, s + OFF_Y, 8) - 1) << 1);
	}
	return 0;
}

static bool forbidden(const struct litmus *L, uint32_t o)
{
	switch (L->test) {
	case T_MP:
		return o == 1; /* r0 = y = 1, r1 = x = 0 */
	case T_SB:
		return L->fence && o == 0;
	case T_LB:
		return o == 3;
	case T_IRIW:
		return o == (1 | 0 << 1 | 1 << 2 | 0 << 3); /* r0=1 r1=0 r2=1 r3=0 */
	case T_2P2W:
		return o == 0; /* x = 1 and y = 1 */
	}
	return false;
}

/*
 * Shared copies before the test: a store then waits in the store buffer for
 * its upgrade while a load hits. A reader of MP and IRIW keeps only the line
 * it reads second, so its first load misses while its second hits at once:
 * the two perform out of order, and only the core's load-order replay keeps
 * the forbidden outcome away (a core without it shows that outcome).
 */
static void warm(struct cxs_kt *kt, const struct litmus *L, uint32_t me)
{
	uint64_t x = cxs_kt_shared(kt) + OFF_X, y = cxs_kt_shared(kt) + OFF_Y;
	bool reader = (L->test == T_MP && me == 1) || (L->test == T_IRIW && me >= 2);
	if (reader) {
		bool second_is_x = (L->test == T_MP) || me == 3;
		(void)cxs_kt_load(kt, second_is_x ? x : y, 8);
		return;
	}
	uint32_t hx = cxs_kt_ld(kt, x, 8), hy = cxs_kt_ld(kt, y, 8);
	(void)cxs_kt_get(kt, hx);
	(void)cxs_kt_get(kt, hy);
}

static void run(struct cxs_kt *kt, const struct litmus *L)
{
	uint32_t n = needed(L->test), all = cxs_kt_count(kt), id = cxs_kt_id(kt);
	uint32_t me = UINT32_MAX;
	for (uint32_t i = 0; i < n; i++)
		if (id == i * all / n)
			me = i;
	if (me == UINT32_MAX)
		return;
	uint64_t s = cxs_kt_shared(kt);
	const struct cxs_kimage *img = cxs_kt_image(kt);
	cxs_kt_roi_begin(kt);
	for (uint64_t it = 0; it < img->size; it++) {
		cxs_kt_barrier(kt, s + OFF_BAR, n);
		/* Everyone takes shared copies of x and y: stores then need the
		 * home (they wait in the store buffer), loads hit at once. */
		warm(kt, L, me);
		cxs_kt_barrier(kt, s + OFF_BAR, n);
		cxs_kt_compute(kt, (uint32_t)(cxs_kt_rand(kt) % CXS_LITMUS_JITTER));
		cxs_kt_store(kt, s + OFF_RES(me), 8, body(kt, L, me));
		cxs_kt_barrier(kt, s + OFF_BAR, n);
		if (me != 0)
			continue;
		uint32_t o = outcome(kt, L);
		cxs_kt_result(kt, outcome_names[o & 15], 1);
		cxs_kt_result(kt, "iterations", 1);
		cxs_kt_result(kt, "forbidden", forbidden(L, o));
		cxs_kt_result(kt, "relaxed", L->test == T_SB && o == 0);
		cxs_kt_store(kt, s + OFF_X, 8, 0);
		cxs_kt_store(kt, s + OFF_Y, 8, 0);
	}
	cxs_kt_roi_end(kt);
}

#define LITMUS(T, F, nm, name_s, doc_s)                                            \
	static const struct litmus nm##_spec = {T, F};                             \
	static void run_##nm(struct cxs_kt *kt)                                    \
	{                                                                          \
		run(kt, &nm##_spec);                                               \
	}                                                                          \
	const struct cxs_kernel cxs_kernel_##nm = {                                \
		.name = name_s,                                                    \
		.doc = doc_s,                                                      \
		.default_size = 2000,                                              \
		.deterministic = false,                                            \
		.build = build_##T,                                                \
		.run = run_##nm,                                                   \
	};

LITMUS(T_MP, false, litmus_mp, "litmus_mp", "TSO litmus MP (message passing)")
LITMUS(T_MP, true, litmus_mp_fence, "litmus_mp_fence", "TSO litmus MP with fences")
LITMUS(T_SB, false, litmus_sb, "litmus_sb", "TSO litmus SB (store buffering)")
LITMUS(T_SB, true, litmus_sb_fence, "litmus_sb_fence", "TSO litmus SB with fences")
LITMUS(T_LB, false, litmus_lb, "litmus_lb", "TSO litmus LB (load buffering)")
LITMUS(T_LB, true, litmus_lb_fence, "litmus_lb_fence", "TSO litmus LB with fences")
LITMUS(T_IRIW, false, litmus_iriw, "litmus_iriw", "TSO litmus IRIW")
LITMUS(T_IRIW, true, litmus_iriw_fence, "litmus_iriw_fence", "TSO litmus IRIW with fences")
LITMUS(T_2P2W, false, litmus_2p2w, "litmus_2+2w", "TSO litmus 2+2W")
LITMUS(T_2P2W, true, litmus_2p2w_fence, "litmus_2+2w_fence", "TSO litmus 2+2W with fences")
