/*
 * reduce_shm.c — the window reduction through shared memory, when every rank
 * of the job is on this host.
 *
 * Why. With one rank per node (32 ranks on this 2-core machine, issue 12)
 * the point-to-point reduction of reduce.c is 5 dependent exchanges per
 * window, and each one is a sleep and a wake-up of every rank: the 16x4
 * ocean_cp size 32 run made ~250 context switches per window and took 14x
 * the wall time of np = 2. Here each rank writes its vector into its own
 * slot of a shared segment and sleeps once; the rank whose arrival completes
 * the set wakes the others: one wake-up per rank per window.
 *
 * Where. The doorbell's segment (doorbell.c) has a region after its slots,
 * sized by rshm_bytes; no MPI collective is involved (MPI_Comm_split_type and
 * MPI_Win_allocate_shared are collectives, which a killed rank would hang —
 * the engine's rule is that every wait can time out). Per window parity
 * (w mod 2):
 *
 *     result block:  | res_stamp | claim | pad to 64 | vector |
 *     slot of rank r: | stamp | pad to 64 | vector |          (r = world rank)
 *
 * with vectors rounded up to 64 bytes. A stamp names (membership epoch + 1,
 * window): a rank copies its contribution into its slot, then stores the
 * stamp (release); a reader that loads the stamp (acquire) sees the vector.
 *
 * The wait. A rank with a core of its own first spins on the segment for
 * about a millisecond (RSHM_SPIN_S); then comm_wait_poll, with a poll that
 * counts the live ranks whose slot does not hold this reduction's stamp,
 * and every other live rank as awaited
 * (after a silence of failure_timeout_s they are pinged, exactly as a
 * reduction step pings its peer, and the silent one is suspected). The sleep
 * is on the region's shared bell (doorbell.c), not the rank's own doorbell;
 * the rank that finds every stamp present after storing its own rings it:
 * one FUTEX_WAKE for the host. No wake-up is lost: a waiter reads the bell's
 * sequence before its last poll, the completer stores its stamp before it
 * scans (both sequentially consistent), so either the waiter's poll sees the
 * last stamp or the completer's scan sees all and its ring changes the
 * sequence the waiter sleeps on. Two ranks that both see the set complete
 * both ring: harmless. A batch sent to a waiting rank rings that rank's own
 * doorbell and no longer wakes it (it is read after the reduction); control
 * messages (pings, the agreement) are seen at the latest when the sleep's
 * bound (2 ms) ends it, far below the failure timeout.
 *
 * The result. The completer combines the slots (in live-list order; the
 * operators are integer and commutative, so the bits are those of reduce.c)
 * and publishes the result in the parity's result block: it takes the
 * block's claim by exchanging the stamp in, writes, then stores res_stamp.
 * A woken rank copies a published result; if there is none (the completer
 * was killed while combining), it combines the slots itself. So no rank's
 * death can leave a survivor without the result once every stamp is there.
 * The block is a seqlock (res_stamp is 0 while it is written, and a reader
 * checks it again after its copy): a rank excluded while it was stopped
 * (SIGSTOP, failure.excluded_rank) can resume and complete its own epoch's
 * reduction of the same window, claiming and writing the block while the
 * survivors read their new epoch's result there; a reader that sees that
 * combines the slots itself, and slots are written only by their owners.
 *
 * Reuse. Parity w mod 2 is written again at window w + 2, by a rank that has
 * completed reduction w + 1 — which needs every live rank's stamp of w + 1,
 * written only after that rank had its result of w. So nobody still reads a
 * slot or result block when it is overwritten. A reduction redone after a
 * failure (same window, new epoch) reuses the parity too; it is redone only
 * if no survivor completed it (membership.c's w_star), so no survivor reads
 * the old epoch's vectors.
 *
 * Failures, the same as reduce.c's. A rank killed before its stamp: nobody
 * completes, the survivors' waits ping it, agree (membership.c), and the
 * reduction is redone over the survivors with the new epoch's stamps. Killed
 * after its stamp: the reduction completes everywhere (its contribution is
 * there, as when a point-to-point reduction completed before a death), and
 * the death is found in the next window. Survivors where it completed and
 * survivors that entered the agreement first are reconciled by the agreement
 * exactly as before (w_star, the adopted result). A rank that was excluded
 * while alive writes only its own slot, which no live list holds any more.
 * So no fallback to reduce.c is needed after a failure.
 *
 * When. Only if every live rank is on this host (its pid is in the doorbell
 * segment), decided once after reduction 0 (done by reduce.c), when every
 * rank has opened the segment — the same decision on every rank — and only
 * with at least RSHM_RANKS_PER_CPU ranks per processor of the host (or
 * CXLSIM_TEST_REDUCE_SHM=1): every waiter sleeps on the one shared bell and
 * is woken with the others, which pays only when recursive doubling's
 * wake-ups are many more. PHOLD 64 LPs, 5 ms, on 2 processors, wall of the
 * whole run, this path against reduce.c: np 4 (20 ms) 7.03 / 2.06 s, np 8
 * 3.71 / 2.13 s, np 16 6.74 / 7.26 s, np 32 13.8 / 31.1 s; np 3 5.61 s
 * against 1.63 s before this path existed. A job over
 * several hosts keeps reduce.c's recursive doubling among all ranks (a
 * hierarchical reduction, one leader per host, is not built), and so does a
 * run with CXLSIM_TEST_REDUCE_P2P=1 (tests/mpi/shm_reduce.sh compares the
 * two). Up to RSHM_MAX_RANKS world ranks: the region is 2 (N + 1) vectors
 * of 2N + N*B + 8 words with their headers, 1.1 MB at 128 ranks.
 */
#include "engine_priv.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define RSHM_MAX_RANKS 128
#define RSHM_SPIN_S 1e-3
#define RSHM_RANKS_PER_CPU 8

struct rshm_hdr {
	_Atomic uint64_t stamp; /* slot: the reduction this vector is for; block: res_stamp */
	_Atomic uint64_t claim; /* block only: the reduction whose result is being written */
	char pad[64 - 2 * sizeof(uint64_t)];
};
_Static_assert(sizeof(struct rshm_hdr) == 64, "one header per cache line");

struct rshm {
	struct door_bell *bell; /* the region's first line */
	unsigned char *base;    /* parity 0, then parity 1 */
	size_t vec_bytes;  /* the vector, rounded up to 64 */
	size_t unit_bytes; /* header + vector */
	size_t par_bytes;  /* result block + nranks slots */
};

static size_t vec_bytes(const struct red_layout *l)
{
	return (l->total * sizeof(uint64_t) + 63) / 64 * 64;
}

size_t rshm_bytes(const struct red_layout *l)
{
	if (l->nranks < 2 || l->nranks > RSHM_MAX_RANKS)
		return 0;
	return sizeof(struct rshm_hdr) + 2 * ((size_t)l->nranks + 1) * (sizeof(struct rshm_hdr) + vec_bytes(l));
}

struct rshm *rshm_attach(struct cxs_engine *e)
{
	void *base = door_extra(e->door);
	if (!base || rshm_bytes(&e->rl) == 0)
		return NULL;
	/* Test hook (tests/mpi/shm_reduce.sh): the same run over reduce.c. */
	const char *p2p = getenv("CXLSIM_TEST_REDUCE_P2P");
	if (p2p && strcmp(p2p, "1") == 0)
		return NULL;
	const char *shm = getenv("CXLSIM_TEST_REDUCE_SHM");
	if (!(shm && strcmp(shm, "1") == 0) && !door_crowded(e->door, RSHM_RANKS_PER_CPU))
		return NULL; /* where it does not pay (the header's "When") */
	for (int i = 0; i < e->nlive; i++)
		if (!door_local(e->door, e->live[i]))
			return NULL;
	struct rshm *s = engine_xcalloc(1, sizeof *s);
	_Static_assert(sizeof(struct door_bell) <= sizeof(struct rshm_hdr), "the bell fits a line");
	s->bell = base;
	s->base = (unsigned char *)base + sizeof(struct rshm_hdr);
	s->vec_bytes = vec_bytes(&e->rl);
	s->unit_bytes = sizeof(struct rshm_hdr) + s->vec_bytes;
	s->par_bytes = ((size_t)e->nranks + 1) * s->unit_bytes;
	return s;
}

void rshm_free(struct rshm *s)
{
	free(s); /* the region is the doorbell's mapping */
}

static struct rshm_hdr *unit(const struct rshm *s, unsigned par, int slot)
{
	/* slot -1 is the result block */
	return (struct rshm_hdr *)(s->base + par * s->par_bytes + (size_t)(slot + 1) * s->unit_bytes);
}

static uint64_t *vec(struct rshm_hdr *h)
{
	return (uint64_t *)(h + 1);
}

static uint64_t stamp_of(const struct cxs_engine *e)
{
	return ((uint64_t)e->epoch + 1) << 40 | (e->w & ((UINT64_C(1) << 40) - 1));
}

struct rshm_wait {
	struct cxs_engine *e;
	unsigned par;
	uint64_t stamp;
};

/* comm_poll_fn: how many live ranks have not stored this reduction's stamp. */
static int missing(void *ctx, int arg)
{
	(void)arg;
	const struct rshm_wait *w = ctx;
	struct cxs_engine *e = w->e;
	int n = 0;
	for (int i = 0; i < e->nlive; i++)
		if (atomic_load(&unit(e->rshm, w->par, e->live[i])->stamp) != w->stamp)
			n++;
	return n;
}

/* Every stamp is there: combine the slots into e->result, in live-list order. */
static void combine_slots(struct cxs_engine *e, unsigned par)
{
	size_t n = e->rl.total;
	memcpy(e->result, vec(unit(e->rshm, par, e->live[0])), n * sizeof *e->result);
	for (int i = 1; i < e->nlive; i++)
		red_combine(&e->rl, e->result, vec(unit(e->rshm, par, e->live[i])));
}

/* The completer: the result for everyone, then the bells. */
static void complete(struct cxs_engine *e, const struct rshm_wait *w)
{
	struct rshm *s = e->rshm;
	combine_slots(e, w->par);
	struct rshm_hdr *blk = unit(s, w->par, -1);
	if (atomic_exchange(&blk->claim, w->stamp) != w->stamp) {
		/* A seqlock: res_stamp is 0 while the vector is written. */
		atomic_store_explicit(&blk->stamp, 0, memory_order_relaxed);
		atomic_thread_fence(memory_order_release);
		memcpy(vec(blk), e->result, e->rl.total * sizeof *e->result);
		atomic_store_explicit(&blk->stamp, w->stamp, memory_order_release);
	}
	bell_ring_all(s->bell);
}

enum wait_result rshm_run(struct cxs_engine *e)
{
	struct rshm *s = e->rshm;
	struct rshm_wait w = {e, (unsigned)(e->w & 1), stamp_of(e)};
	struct rshm_hdr *mine = unit(s, w.par, e->rank);
	memcpy(vec(mine), e->contrib, e->rl.total * sizeof *e->contrib);
	atomic_store(&mine->stamp, w.stamp);
	if (missing(&w, 0) == 0) {
		complete(e, &w);
		return WAIT_OK;
	}
	if (!door_oversubscribed(e->door)) {
		/*
		 * A rank with a core of its own spins first, as comm.c's waits do
		 * for about a millisecond before they sleep: they count polls, and
		 * polling this segment is some 20 times quicker than MPI_Testall,
		 * so their count alone put these waits to sleep after ~50 us and
		 * np = 2 paid a futex wake-up in most windows.
		 */
		double until = comm_now() + RSHM_SPIN_S;
		for (unsigned p = 1; missing(&w, 0) != 0; p++)
			if ((p & 255) == 0 && comm_now() > until)
				break;
	}
	int others[RSHM_MAX_RANKS];
	int nothers = 0;
	for (int i = 0; i < e->nlive; i++)
		if (e->live[i] != e->rank)
			others[nothers++] = e->live[i];
	e->red_sreq = NULL;
	e->wait_busy = false;
	e->wait_bell = s->bell;
	enum wait_result wr = comm_wait_poll(e, missing, &w, 0, others, nothers);
	e->wait_bell = NULL;
	if (wr == WAIT_CHANGED)
		return WAIT_CHANGED;
	struct rshm_hdr *blk = unit(s, w.par, -1);
	bool copied = false;
	if (atomic_load_explicit(&blk->stamp, memory_order_acquire) == w.stamp) {
		memcpy(e->result, vec(blk), e->rl.total * sizeof *e->result);
		atomic_thread_fence(memory_order_acquire);
		copied = atomic_load_explicit(&blk->stamp, memory_order_relaxed) == w.stamp;
	}
	if (!copied)
		combine_slots(e, w.par); /* its completer died, is still writing, or was overwritten */
	return WAIT_OK;
}
