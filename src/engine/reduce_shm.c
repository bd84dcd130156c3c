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
 * and after both parities one standing slot per rank, of the same shape
 * (see "Parking").
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
 * operators are integer and commutative, so the bits are those of reduce.c),
 * writes the result into its own result buffer of the parity (a seqlock with
 * one writer: its stamp is 0 while the vector is written) and publishes it:
 * the parity's result block is one word, the stamp of the newest published
 * result and the rank whose buffer holds it, which a completer sets by
 * compare-and-swap only while the block holds an older stamp. A woken rank
 * copies a published result; if there is none (the completer was killed
 * while combining), it completes it itself: combines the slots, publishes,
 * rings (parked ranks read results only through the block, see "Parking").
 * So no rank's death can leave a survivor without the result once every
 * stamp is there. The block never goes back: a rank descheduled inside
 * complete() for many windows (two CPU hogs beside 34 ranks on 2 cores,
 * failure.no_false_suspicion_34_ranks_2_hogs) once wrote its old result over
 * a newer one that a parked rank needed, and the run hung; a rank excluded
 * while it was stopped (SIGSTOP, failure.excluded_rank) and resuming to
 * complete its own epoch's reduction has an older stamp too. Nobody writes
 * another rank's buffer, so no two writers ever share one.
 *
 * Reuse. Parity w mod 2 is written again at window w + 2, by a rank that has
 * completed reduction w + 1 — which needs every live rank's stamp of w + 1,
 * written only after that rank had its result of w. So nobody still reads a
 * slot or result buffer when its owner overwrites it. A reduction redone after a
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
 * Parking (issue 12). With one node per rank most ranks have nothing to do
 * in most windows (16x4 ocean_cp size 32 at np = 32: each rank has an event
 * below its bound, or a batch to receive, in about 30 % of the 3892
 * windows), yet each woke in every window for the reduction, ~25 us of CPU
 * a time: the loop was bound by 32 x 3892 wake-ups, not by work. So a rank
 * that has no work in a window takes no part in its reduction:
 *
 *   - Who takes part in reduction w + 1 (e->part) is a pure function of
 *     result w and of state every rank shares (engine_takes_part): rank r
 *     does if batches to it are announced, or its eff is below its bound,
 *     or the result is one every rank must act on (the run stops, a kill or
 *     fail is due), or it follows a decision (the new epoch's first
 *     reduction: everyone), or reduction w was reduction 0. Every rank
 *     computes the same set; the rank holding the global minimum is always
 *     in it, so it is never empty.
 *   - A rank outside it (parks) writes the contribution it would have made
 *     into its standing slot (after the two parities, one per rank),
 *     stamped with the reduction it starts to stand for: its heap minimum,
 *     no sends, its sums. Nothing changes it while it is parked — it handles
 *     nothing and receives nothing — so the same vector is its contribution
 *     to every reduction until it takes part again, and every result is
 *     the one the ranks would have made all awake: the bits stay those of
 *     np = 1 (failure.parked_rank_killed_and_parking_identical).
 *   - A combiner takes a parked rank's standing vector if its stamp is the
 *     one after the rank's newest parity stamp (the reduction after the last
 *     one it took part in); an older one (not yet rewritten) counts as
 *     missing. A poll that finds the result published is complete whatever
 *     the slots say (a woken parked rank may already be in the next one).
 *   - Messages to a parked rank are accounted as before (the sender's
 *     sent-minimum and the bitmap), so the LBTS sees them; the announcing
 *     result makes it take part, and the completer (complete()) rings the
 *     doorbell of each parked rank the result needs (engine_wake_needed).
 *     The batch's sender does not ring it: it would wake before the result.
 *   - A parked rank sleeps on its own doorbell (RSHM_PARK_SLEEP_NS) and
 *     looks, when rung, for the newest published result of its epoch at or
 *     after the reduction it parked at that needs it (needed_after); it
 *     takes it as its result, and the one before as its previous one, and
 *     goes on as if it had completed every reduction it stood in. So results
 *     must be published: a waiter that finds every stamp but no result
 *     completes (publishes) it itself. It answers pings and agreements from
 *     that sleep (control messages ring it). A signal to a parked rank is
 *     forwarded (CTL_INTERRUPT) to the ranks at work, which carry it in the
 *     reduction: a standing vector must not change.
 *   - In an agreement a parked rank reports its stale w_red; the decision
 *     carries the results of w_star - 1 and w_star - 2 (membership.c), so
 *     it adopts the first, many reductions ahead, and computes the dead
 *     ranks' fail-stop times from the second like everyone else.
 *
 * Failures of a parked rank. Its standing contribution counts as taking
 * part: killed while parked, it is in simulated time a rank that died just
 * after the last reduction it stood in, and nobody waits for it until a
 * result needs it — an event of its own below its bound, a batch for it,
 * the run's end or a kill due. Then the survivors wait for its stamp, ping
 * it after failure_timeout_s and agree, as for an active rank; T_f is its
 * bound for the window of the last reduction it stood in. So a killed idle
 * rank is found dead when it is next needed, not within the failure timeout
 * of its death (with nothing more to do before the end, in the output
 * gather); that point depends on the results only, so the run is repeatable
 * (the test hook CXLSIM_TEST_DIE_PARKED=RANK:N, SIGKILL at the N-th park,
 * and tests/mpi/park.sh check it). The failure detector's other promise
 * holds as before: a parked rank wakes for every ping.
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
 * two). Up to RSHM_MAX_RANKS world ranks: the region is 5N + 2 vectors
 * of 2N + N*B + 10 words with their headers, 2.8 MB at 128 ranks.
 */
#include "engine_priv.h"
#include "membership_priv.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RSHM_MAX_RANKS 128
#define RSHM_SPIN_S 1e-3
#define RSHM_RANKS_PER_CPU 8
/*
 * The bound on one sleep of a parked rank. What wakes it is a ring (the
 * completer, a control message) or a signal; the bound is only for a
 * completer killed between publishing and ringing, so it can be long.
 */
#define RSHM_PARK_SLEEP_NS 20000000L

struct rshm_hdr {
	/* slot, result buffer: the reduction this vector is for; block: pub_word() */
	_Atomic uint64_t stamp;
	char pad[64 - sizeof(uint64_t)];
};
_Static_assert(sizeof(struct rshm_hdr) == 64, "one header per cache line");

struct rshm {
	struct door_bell *bell; /* the region's first line */
	uint64_t die_at_park;   /* test hook: SIGKILL at this park (0: off) */
	long stall_ns;          /* test hook: a parked completer's stall before it publishes */
	unsigned char *base;    /* parity 0, then parity 1 */
	size_t vec_bytes;  /* the vector, rounded up to 64 */
	size_t unit_bytes; /* header + vector */
	size_t par_bytes;  /* result block + nranks slots */
	int nranks;
};

static size_t vec_bytes(const struct red_layout *l)
{
	return (l->total * sizeof(uint64_t) + 63) / 64 * 64;
}

size_t rshm_bytes(const struct red_layout *l)
{
	if (l->nranks < 2 || l->nranks > RSHM_MAX_RANKS)
		return 0;
	size_t unit = sizeof(struct rshm_hdr) + vec_bytes(l);
	/* two parities (block + slots), the standing slots, two parities of result buffers */
	return sizeof(struct rshm_hdr) + (2 * ((size_t)l->nranks + 1) + 3 * (size_t)l->nranks) * unit;
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
	s->nranks = e->nranks;
	/* Test hook (tests/mpi/park.sh): CXLSIM_TEST_DIE_PARKED=RANK:N kills RANK at its N-th park. */
	const char *die = getenv("CXLSIM_TEST_DIE_PARKED");
	int dr = -1;
	unsigned long long dn = 0;
	if (die && sscanf(die, "%d:%llu", &dr, &dn) == 2 && dr == e->rank)
		s->die_at_park = dn;
	/*
	 * Test hook (tests/mpi/park.sh): CXLSIM_TEST_STALL_COMPLETE=MS, a rank
	 * that completes a reduction as it parks sleeps MS ms before it
	 * publishes, as one descheduled there does; the others go on.
	 */
	const char *stall = getenv("CXLSIM_TEST_STALL_COMPLETE");
	if (stall)
		s->stall_ns = atol(stall) * 1000000L;
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

/* Rank r's standing slot, after both parities. */
static struct rshm_hdr *standing(const struct rshm *s, int r)
{
	return (struct rshm_hdr *)(s->base + 2 * s->par_bytes + (size_t)r * s->unit_bytes);
}

/* Rank r's result buffer of parity par, after the standing slots: only r writes it. */
static struct rshm_hdr *resbuf(const struct rshm *s, unsigned par, int r)
{
	size_t i = (size_t)s->nranks + par * (size_t)s->nranks + (size_t)r;
	return (struct rshm_hdr *)(s->base + 2 * s->par_bytes + i * s->unit_bytes);
}

#define WINDOW_BITS 40

static uint64_t stamp_at(const struct cxs_engine *e, uint64_t w)
{
	/*
	 * pub_word() keeps 7 bits below the stamp and the window takes 40, which leaves 17 for
	 * the epoch + 1; 16 of them are used, far above any run's epochs.
	 */
	if (e->epoch + 1 >= (UINT32_C(1) << 16))
		cxs_bug(NULL, "membership epoch %u beyond the shared reduction's stamps", e->epoch);
	return ((uint64_t)e->epoch + 1) << WINDOW_BITS | (w & ((UINT64_C(1) << WINDOW_BITS) - 1));
}

/* A result block's word: the stamp of the published result, and whose buffer holds it. */
#define OWNER_BITS 7
_Static_assert(RSHM_MAX_RANKS <= 1 << OWNER_BITS, "an owner fits its bits");

static uint64_t pub_word(uint64_t stamp, int owner)
{
	return stamp << OWNER_BITS | (uint64_t)owner;
}

static uint64_t pub_stamp(uint64_t word)
{
	return word >> OWNER_BITS;
}

static uint64_t stamp_of(const struct cxs_engine *e)
{
	return stamp_at(e, e->w);
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/*
 * Whether rank r's standing slot holds its contribution for this stretch of
 * windows: it was stamped with the reduction after the last one r took part
 * in (its newest parity stamp), so a slot from an earlier stretch, or one
 * not yet written, does not count.
 */
static bool standing_ok(const struct rshm *s, int r, uint64_t stamp)
{
	uint64_t st = atomic_load(&standing(s, r)->stamp);
	uint64_t j = max_u64(atomic_load(&unit(s, 0, r)->stamp), atomic_load(&unit(s, 1, r)->stamp));
	return st != 0 && st == j + 1 && st <= stamp;
}

/* Rank r's vector for this reduction: its parity slot, or its standing one if parked. */
static uint64_t *contribution(const struct cxs_engine *e, unsigned par, int r)
{
	return engine_in_part(e, r) ? vec(unit(e->rshm, par, r)) : vec(standing(e->rshm, r));
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
	/*
	 * Published: complete, whatever the slots say now — a parked rank woken
	 * by this result may already be taking part in the next reduction, and
	 * its standing slot no longer looks current.
	 */
	if (pub_stamp(atomic_load(&unit(e->rshm, w->par, -1)->stamp)) == w->stamp)
		return 0;
	int n = 0;
	for (int i = 0; i < e->nlive; i++) {
		int r = e->live[i];
		if (engine_in_part(e, r) ? atomic_load(&unit(e->rshm, w->par, r)->stamp) != w->stamp
					 : !standing_ok(e->rshm, r, w->stamp))
			n++;
	}
	return n;
}

/* Every stamp is there: combine the slots into e->result, in live-list order. */
static void combine_slots(struct cxs_engine *e, unsigned par)
{
	size_t n = e->rl.total;
	memcpy(e->result, contribution(e, par, e->live[0]), n * sizeof *e->result);
	for (int i = 1; i < e->nlive; i++)
		red_combine(&e->rl, e->result, contribution(e, par, e->live[i]));
}

/*
 * The completer: the result into its own buffer, published in the block
 * unless a newer one is there, then the bells (see "The result").
 */
static void complete(struct cxs_engine *e, const struct rshm_wait *w, bool parking)
{
	struct rshm *s = e->rshm;
	combine_slots(e, w->par);
	if (parking && s->stall_ns) {
		fprintf(stderr, "[rank %d] test hook: stalled completing reduction %llu\n", e->rank,
			(unsigned long long)e->w);
		struct timespec ts = {s->stall_ns / 1000000000L, s->stall_ns % 1000000000L};
		nanosleep(&ts, NULL);
	}
	/* A seqlock with one writer: the stamp is 0 while the vector is written. */
	struct rshm_hdr *buf = resbuf(s, w->par, e->rank);
	atomic_store_explicit(&buf->stamp, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	memcpy(vec(buf), e->result, e->rl.total * sizeof *e->result);
	atomic_store_explicit(&buf->stamp, w->stamp, memory_order_release);
	struct rshm_hdr *blk = unit(s, w->par, -1);
	uint64_t cur = atomic_load(&blk->stamp);
	while (pub_stamp(cur) < w->stamp &&
	       !atomic_compare_exchange_weak(&blk->stamp, &cur, pub_word(w->stamp, e->rank)))
		;
	bell_ring_all(s->bell);
	engine_wake_needed(e, e->result);
}

/*
 * Reads the result of reduction `stamp` if parity par's block publishes it:
 * a seqlock read of its owner's buffer, true if out holds it whole.
 */
static bool read_result(const struct rshm *s, unsigned par, uint64_t stamp, uint64_t *out,
			size_t n)
{
	uint64_t word = atomic_load(&unit(s, par, -1)->stamp);
	if (pub_stamp(word) != stamp)
		return false;
	struct rshm_hdr *buf = resbuf(s, par, (int)(word & ((1u << OWNER_BITS) - 1)));
	if (atomic_load_explicit(&buf->stamp, memory_order_acquire) != stamp)
		return false;
	memcpy(out, vec(buf), n * sizeof *out);
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&buf->stamp, memory_order_relaxed) == stamp;
}

/*
 * A parked rank (standing since reduction w0) looks for the reduction after
 * which it is needed: the newest published result of this epoch, m >= w0,
 * after which it takes part. Then e->result is that result, e->done_result
 * the one before (m - 1, published too: reduction m needed every stamp of
 * m - 1's participants, and m + 1, which would overwrite it, needs ours),
 * and *m is set.
 */
static bool needed_after(struct cxs_engine *e, uint64_t w0, uint64_t *m)
{
	struct rshm *s = e->rshm;
	size_t n = e->rl.total;
	uint64_t lo = stamp_at(e, w0), best = 0;
	for (unsigned par = 0; par < 2; par++) {
		uint64_t st = pub_stamp(atomic_load(&unit(s, par, -1)->stamp));
		if (st >= lo && (st >> WINDOW_BITS) == (lo >> WINDOW_BITS) && st > best)
			best = st;
	}
	if (best == 0)
		return false;
	uint64_t mw = w0 + (best - lo);
	if (!read_result(s, (unsigned)(mw & 1), best, e->tmp, n) ||
	    !engine_takes_part(e, e->tmp, e->rank))
		return false;
	if (mw > w0 && !read_result(s, (unsigned)((mw - 1) & 1), best - 1, e->sendbuf, n))
		return false;
	if (mw > w0)
		memcpy(e->done_result, e->sendbuf, n * sizeof *e->done_result);
	memcpy(e->result, e->tmp, n * sizeof *e->result);
	*m = mw;
	return true;
}

/*
 * A rank that takes no part in reduction e->w (see "Parking"): it leaves its
 * contribution standing and sleeps until a result needs it, or an agreement
 * (a control message) starts.
 */
static enum wait_result park(struct cxs_engine *e)
{
	struct rshm *s = e->rshm;
	struct rshm_hdr *st = standing(s, e->rank);
	struct rshm_wait w = {e, (unsigned)(e->w & 1), stamp_of(e)};
	memcpy(vec(st), e->contrib, e->rl.total * sizeof *e->contrib);
	atomic_store(&st->stamp, w.stamp);
	e->fig.parks++;
	if (s->die_at_park && e->fig.parks == s->die_at_park) {
		fprintf(stderr, "[rank %d] test hook: killed while parked (park %llu, window %llu)\n",
			e->rank, (unsigned long long)e->fig.parks, (unsigned long long)e->w);
		fflush(stderr);
		raise(SIGKILL);
		_exit(137);
	}
	/* Ours may be the contribution the reduction was waiting for. */
	if (missing(&w, 0) == 0)
		complete(e, &w, true);
	uint64_t w0 = e->w, m;
	double t0 = comm_now();
	bool told = false;
	enum wait_result wr = WAIT_OK;
	for (;;) {
		uint32_t armed = door_arm(e->door);
		if (needed_after(e, w0, &m)) {
			e->fig.parked_windows += m - w0 + 1;
			e->fig.windows += m - w0;
			e->w = m;
			break;
		}
		if (comm_service(e) == WAIT_CHANGED) {
			wr = WAIT_CHANGED;
			break;
		}
		if (!told && e->cfg.interrupt && *e->cfg.interrupt) {
			/* Our contribution stands without it: the ranks at work carry it. */
			struct ctl_hdr h = {.type = CTL_INTERRUPT, .from = (uint32_t)e->rank,
					    .a = (uint64_t)*e->cfg.interrupt};
			for (int i = 0; i < e->nlive; i++)
				ctl_send(e, e->live[i], &h, NULL, 0);
			told = true;
		}
		door_sleep_ns(e->door, armed, RSHM_PARK_SLEEP_NS);
	}
	double dt = comm_now() - t0;
	e->fig.sync_wall_s += dt;
	e->fig.idle_wall_s += dt;
	return wr;
}

enum wait_result rshm_run(struct cxs_engine *e)
{
	struct rshm *s = e->rshm;
	if (!engine_in_part(e, e->rank))
		return park(e);
	struct rshm_wait w = {e, (unsigned)(e->w & 1), stamp_of(e)};
	struct rshm_hdr *mine = unit(s, w.par, e->rank);
	memcpy(vec(mine), e->contrib, e->rl.total * sizeof *e->contrib);
	atomic_store(&mine->stamp, w.stamp);
	if (missing(&w, 0) == 0) {
		complete(e, &w, false);
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
	/*
	 * No published result: its completer died, is still writing, or the
	 * last contribution was a parked rank's standing one and nobody was
	 * the completer. Complete it here: parked ranks find the results they
	 * are needed after only in the block.
	 */
	if (!read_result(s, w.par, w.stamp, e->result, e->rl.total))
		complete(e, &w, false);
	return WAIT_OK;
}
