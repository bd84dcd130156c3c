/*
 * membership.c — the survivors agree on who is dead.
 *
 * Open MPI 4.1 without ULFM keeps survivors running when a rank is killed
 * (mpirun --enable-recovery), but tells them nothing: a dead rank is only
 * silence. comm.c turns silence into a suspicion; this file turns suspicions
 * into one decision that every survivor applies, so that all of them continue
 * with the same live set, the same epoch (tag space) and the same failure time.
 *
 * Protocol (a leader with two phases; a rank's view is its tentative live set):
 *
 *   1. Whoever suspects a rank asks the lowest rank alive in its view (the
 *      leader) to start (START), or starts itself if it is that rank. START
 *      carries the ranks the sender found silent, so that the leader it asks
 *      does not wait on them again before it leads.
 *   2. The leader picks a round above every round it has seen and QUERYs every
 *      rank alive in its view. A rank answers with a REPORT (how many window
 *      reductions it completed, w_red, and the last two results) and promises
 *      (round, leader). Ranks that do not answer within the failure timeout
 *      are dead in the leader's view.
 *   3. The leader sends DECIDE (the dead set; w_star = the highest w_red; the
 *      reduction results of windows w_star - 1 and w_star - 2, so that a rank
 *      that had not received the first can adopt it, and every rank computes
 *      the dead ranks' fail-stop times from the second — a parked rank,
 *      reduce_shm.c, may be many reductions behind and hold neither) and
 *      waits for every ACK. A rank that does not ACK is dead too, and the
 *      leader starts over with a higher round.
 *   4. COMMIT: every rank applies the decision (engine_on_decision in engine.c).
 *
 * A leader may die while sending its COMMITs, leaving some ranks having
 * applied its decision and others not. So a REPORT carries the reporter's
 * last applied decision, and when the reports disagree the next leader hands
 * the newest one on as the "prior" of its own DECIDE: ranks that missed it
 * apply it first. Every survivor thus applies the same decisions in the same
 * order, and its nodes get the same failure notices (the rule of Paxos: a new
 * leader re-proposes what may already have been chosen).
 *
 * Precedence between competing leaders: higher round wins, then lower rank.
 * A rank answers a QUERY or DECIDE that beats its promise, and REJECTs one that
 * does not; a leader that is rejected by a better one becomes a follower.
 *
 * A follower does not time its leader, it pings it: a leader can be slow for
 * good reasons (it may itself be following a rank that just died, and waits
 * a timeout to find out), and every live rank answers a PING from any of its
 * waits. Only a leader from which nothing at all has come for one failure
 * timeout, pings sent every quarter of it, is marked dead; the follower then
 * moves to the next lowest rank (possibly itself), so a leader that dies
 * during the agreement (a second failure) is replaced. (Issue 13: with a
 * fixed wait of three timeouts, a follower gave up on a live leader that was
 * still following the dead rank 0, declared it dead and finished alone.)
 *
 * Who is dead is only ever concluded from silence towards a ping or a query,
 * never from a leader's slowness: "never a rank that is alive and answering";
 * or, for a rank on this host, from its process having ended (door_ended),
 * which no live rank can fake and which ends those waits at once.
 * A suspicion handed on by START (the suspect and the ranks the sender found
 * silent) is taken over only for ranks the receiver has not heard from for a
 * timeout either.
 *
 * Exclusion. A rank that was wrongly suspected (descheduled past the timeout on
 * an oversubscribed machine) eventually talks to a survivor that has applied a
 * decision which lists it as dead; that survivor answers EXCLUDED and the
 * excluded rank stops at once with exit status 75, as if it had failed — it
 * never continues with its own view. One that is listed dead in a DECIDE it
 * receives stops the same way. On its way out it tells every rank it still
 * believed alive (GONE), so that the survivors record its failure with cause
 * "excluded" (it was alive, only too slow) rather than "silent" (dead), if
 * they hear it before the output is written.
 *
 * Why no MPI_Comm_create_group: it is blocking, and a rank dying while the
 * survivors are inside it hangs them all. The survivors' communicator here is
 * MPI_COMM_WORLD restricted to the live list with the epoch in every reduction
 * tag: it isolates stale traffic exactly like a new context would, and every
 * wait on it can time out.
 */
#include "engine_priv.h"
#include "membership_priv.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct agree {
	uint8_t *view;
	bool promised;
	uint64_t prom_round;
	uint32_t prom_leader;
	bool have_dec;
	struct ctl_hdr dec;
	uint64_t *dec_tail; /* dead bits, then the result if dec.b */
	bool done;
};

static bool beats(uint64_t r1, uint32_t l1, uint64_t r2, uint32_t l2)
{
	return r1 > r2 || (r1 == r2 && l1 < l2);
}

static _Noreturn void excluded(struct cxs_engine *e, int by)
{
	fprintf(stderr,
		"[rank %d] excluded by the survivors (told by rank %d): stopping as a failed rank\n",
		e->rank, by);
	fflush(stderr);
	struct ctl_hdr gone = {.type = CTL_GONE, .from = (uint32_t)e->rank};
	for (int r = 0; r < e->nranks; r++)
		if (e->alive[r] && r != e->rank)
			ctl_send(e, r, &gone, NULL, 0);
	ctl_flush(e, GONE_FLUSH_S);
	_exit(CXS_EXIT_EXCLUDED);
}

void membership_note_gone(struct cxs_engine *e, int src)
{
	e->gone[src] = 1;
	for (size_t i = 0; i < e->nfailures; i++)
		if (e->failures[i].rank == (uint32_t)src)
			e->failures[i].cause = "excluded";
}

/*
 * Test hook (CXLSIM_TEST_LEADER_DIES_AFTER_COMMITS=N, read once at start): a
 * leader kills itself after sending N COMMITs, to reproduce a leader that dies
 * in the middle of committing (tests/mpi/leader_dies_mid_commit.sh).
 */
static _Noreturn void die_for_test(struct cxs_engine *e)
{
	fprintf(stderr, "[rank %d] test hook: leader dies after its first COMMIT\n", e->rank);
	fflush(stderr);
	raise(SIGKILL);
	_exit(137);
}

static size_t result_words(const struct cxs_engine *e)
{
	return e->rl.total;
}

/*
 * A decision as a block of words, so that a REPORT can carry the sender's last
 * applied decision and a DECIDE can carry it on as the "prior" decision:
 *
 *   round, leader, w_star, has_result, dead bits (B words), result (R words),
 *   previous result (R words)
 */
static size_t block_words(const struct cxs_engine *e)
{
	return 4 + e->rl.bitmap_words + 2 * result_words(e);
}

static void put_block(const struct cxs_engine *e, const struct decision *d, uint64_t *out)
{
	uint32_t B = e->rl.bitmap_words;
	out[0] = d->round;
	out[1] = d->leader;
	out[2] = d->w_star;
	out[3] = d->has_result;
	memcpy(out + 4, d->dead_bits, B * sizeof *out);
	memcpy(out + 4 + B, d->result, result_words(e) * sizeof *out);
	memcpy(out + 4 + B + result_words(e), d->prev_result, result_words(e) * sizeof *out);
}

/*
 * REPORT tail: the results of reductions w_red - 1 and w_red - 2 (R words
 * each, zeros if none), then our last decision.
 */
static void send_report(struct cxs_engine *e, int dst, uint64_t round, uint32_t leader)
{
	size_t R = result_words(e), n = 2 * R + block_words(e);
	uint64_t *tail = calloc(n, sizeof *tail);
	if (!tail)
		cxs_bug(NULL, "out of memory in agreement");
	if (e->w_red)
		memcpy(tail, e->done_result, R * sizeof *tail);
	if (e->w_red > 1)
		memcpy(tail + R, e->prev_result, R * sizeof *tail);
	put_block(e, &e->last, tail + 2 * R);
	struct ctl_hdr h = {.type = CTL_REPORT, .from = (uint32_t)e->rank, .round = round,
			    .leader = leader, .a = e->w_red};
	ctl_send(e, dst, &h, tail, n);
	free(tail);
}

static void send_simple(struct cxs_engine *e, int dst, uint32_t type, uint64_t round,
			uint32_t leader)
{
	struct ctl_hdr h = {.type = type, .from = (uint32_t)e->rank, .round = round,
			    .leader = leader};
	ctl_send(e, dst, &h, NULL, 0);
}

static int lowest_alive(const struct cxs_engine *e, const uint8_t *view)
{
	for (int r = 0; r < e->nranks; r++)
		if (view[r])
			return r;
	return -1;
}

static void note_round(struct cxs_engine *e, uint64_t round)
{
	if (round > e->round_seen)
		e->round_seen = round;
}

static void apply_one(struct cxs_engine *e, uint64_t round, uint32_t leader, uint64_t w_star,
		      bool has_result, const uint64_t *dead, const uint64_t *result,
		      const uint64_t *prev)
{
	uint32_t B = e->rl.bitmap_words;
	memcpy(e->last.dead_bits, dead, B * sizeof *dead);
	e->last.round = round;
	e->last.leader = leader;
	e->last.w_star = w_star;
	e->last.has_result = has_result;
	if (has_result) {
		memcpy(e->last.result, result, result_words(e) * sizeof *result);
		memcpy(e->last.prev_result, prev, result_words(e) * sizeof *prev);
	}
	note_round(e, round);
	size_t before = e->nfailures;
	engine_on_decision(e);
	for (size_t i = before; i < e->nfailures; i++)
		if (e->gone[e->failures[i].rank])
			e->failures[i].cause = "excluded";
}

/*
 * DECIDE tail: dead bits (B), result (R), previous result (R), prior decision block. b: bit 0 the
 * result is valid, bit 1 the prior is. A leader that died while sending its
 * COMMITs leaves some ranks having applied its decision and others not; the
 * next leader hands that decision on as the prior, and whoever missed it
 * applies it first, so every survivor applies the same decisions in the same
 * order (and gets the same failure notices).
 */
static void apply(struct cxs_engine *e, const struct ctl_hdr *dec, const uint64_t *tail)
{
	uint32_t B = e->rl.bitmap_words;
	size_t R = result_words(e);
	if (dec->b & 2) {
		const uint64_t *p = tail + B + 2 * R;
		if (p[0] > e->last.round)
			apply_one(e, p[0], (uint32_t)p[1], p[2], p[3] != 0, p + 4, p + 4 + B,
				  p + 4 + B + R);
	}
	apply_one(e, dec->round, dec->leader, dec->a, (dec->b & 1) != 0, tail, tail + B,
		  tail + B + R);
}

/*
 * Takes over the suspicions a START hands on (the sender's suspect and the
 * ranks it found silent): each only if we have not heard from that rank for a
 * timeout either, so that a rank answering us is never dropped from our view
 * on someone else's word.
 */
static void take_hints(struct cxs_engine *e, struct agree *st, int suspect, const uint64_t *bits,
		       int nbits_words)
{
	double now = comm_now(), T = e->cfg.failure_timeout_s;
	for (int r = 0; r < e->nranks; r++) {
		bool hinted = r == suspect ||
			      (r / 64 < nbits_words && (bits[r / 64] >> (r % 64) & 1));
		if (hinted && r != e->rank && st->view[r] &&
		    (now - e->last_heard[r] > T || door_ended(e->door, r)))
			st->view[r] = 0;
	}
}

/*
 * Follower's handling of one message. Returns 1 when a COMMIT of the decision
 * we acknowledged arrived (the decision is applied).
 */
static int follow_msg(struct cxs_engine *e, struct agree *st, const struct ctl_hdr *h,
		      const uint64_t *tail, int ntail, int src)
{
	uint32_t B = e->rl.bitmap_words;
	switch (h->type) {
	case CTL_PING:
		send_simple(e, src, e->alive[src] ? CTL_PONG : CTL_EXCLUDED, 0, 0);
		return 0;
	case CTL_EXCLUDED:
		excluded(e, src);
	case CTL_START:
		/* We already follow someone; the sender waits on us (and pings us)
		 * until that leader or we ourselves query it. Its news helps us
		 * choose should our leader go silent. */
		take_hints(e, st, (int)(int64_t)h->a, tail, ntail);
		return 0;
	case CTL_QUERY:
		note_round(e, h->round);
		if (!e->alive[src]) {
			send_simple(e, src, CTL_EXCLUDED, h->round, h->leader);
		} else if (!st->promised || !beats(st->prom_round, st->prom_leader, h->round,
						   h->leader)) {
			st->promised = true;
			st->prom_round = h->round;
			st->prom_leader = h->leader;
			send_report(e, src, h->round, h->leader);
		} else {
			send_simple(e, src, CTL_REJECT, st->prom_round, st->prom_leader);
		}
		return 0;
	case CTL_DECIDE:
		note_round(e, h->round);
		if (!e->alive[src]) {
			send_simple(e, src, CTL_EXCLUDED, h->round, h->leader);
			return 0;
		}
		if (st->promised && beats(st->prom_round, st->prom_leader, h->round, h->leader)) {
			send_simple(e, src, CTL_REJECT, st->prom_round, st->prom_leader);
			return 0;
		}
		if ((size_t)ntail < B + 2 * result_words(e) + block_words(e))
			return 0; /* malformed: ignore, the leader will time us out */
		if (tail[e->rank / 64] >> (e->rank % 64) & 1)
			excluded(e, src);
		st->promised = true;
		st->prom_round = h->round;
		st->prom_leader = h->leader;
		st->have_dec = true;
		st->dec = *h;
		memcpy(st->dec_tail, tail, (B + 2 * result_words(e) + block_words(e)) * sizeof *tail);
		send_simple(e, src, CTL_ACK, h->round, h->leader);
		return 0;
	case CTL_COMMIT:
		/* Only the decision we still stand by: not one we acknowledged and then
		 * left for a better leader's query. */
		if (st->have_dec && st->dec.round == h->round && st->dec.leader == h->leader &&
		    st->promised && st->prom_round == h->round && st->prom_leader == h->leader) {
			apply(e, &st->dec, st->dec_tail);
			return 1;
		}
		return 0;
	default:
		/* Stale REPORT/ACK/REJECT, PONG: nothing to do (ctl_poll noted the sender alive). */
		return 0;
	}
}

/*
 * Waits for our leader to finish: the leader we promised, or before any
 * promise `asked`, the rank we asked to lead. A leader may legitimately take
 * long (it may be following a rank that has just died, and needs a timeout to
 * find out), so it is pinged rather than timed: PINGs every quarter timeout,
 * and it is given up only when nothing at all has come from it for a whole
 * failure timeout since we began watching it. Returns 1 when the decision is
 * applied, 0 when the leader is silent (its rank in *gone).
 */
static int follow(struct cxs_engine *e, struct agree *st, int asked, int *gone)
{
	double T = e->cfg.failure_timeout_s, since = 0, next_ping = 0, ended_at = 0;
	int watched = -1;
	unsigned polls = 0;
	long sleep_ns = 10000;
	for (;;) {
		void *msg;
		int len, src;
		while (ctl_poll(e, &msg, &len, &src)) {
			const struct ctl_hdr *h = msg;
			int ntail = (len - (int)sizeof *h) / (int)sizeof(uint64_t);
			int r = follow_msg(e, st, h, (const uint64_t *)(h + 1), ntail, src);
			free(msg);
			if (r)
				return 1;
			polls = 0;
		}
		int leader = st->promised ? (int)st->prom_leader : asked;
		double now = comm_now();
		if (leader != watched) {
			watched = leader;
			since = now;
			next_ping = now;
			ended_at = now;
		}
		if (now >= next_ping) {
			send_simple(e, leader, CTL_PING, 0, 0);
			next_ping = now + T / 4;
		}
		double heard = e->last_heard[leader] > since ? e->last_heard[leader] : since;
		bool ended = false;
		if (now - ended_at > ENDED_CHECK_S) {
			ended_at = now;
			ended = door_ended(e->door, leader);
		}
		if (now - heard > T || ended) {
			*gone = leader;
			return 0;
		}
		comm_backoff(e, &polls, &sleep_ns);
	}
}

/*
 * Collects one reply of `want` type from every rank alive in the view (except
 * us), for up to one timeout; ranks that do not answer die in the view.
 * Returns -1 if a better leader turned up (we follow it now), else 0.
 */
/* The newest and oldest last-applied decisions among the reports. */
struct prior {
	uint64_t min_round;
	uint64_t *block; /* newest, block_words() */
};

/* best_result: 2R words, the best reporter's last result and the one before. */
static int collect(struct cxs_engine *e, struct agree *st, uint64_t round, uint32_t want,
		   uint64_t *best_w, uint64_t *best_result, struct prior *pr)
{
	uint8_t *got = calloc((size_t)e->nranks, 1);
	if (!got)
		cxs_bug(NULL, "out of memory in agreement");
	got[e->rank] = 1;
	double deadline = comm_now() + e->cfg.failure_timeout_s, ended_at = comm_now();
	unsigned polls = 0;
	long sleep_ns = 10000;
	int ret = 0;
	for (;;) {
		bool all = true;
		for (int r = 0; r < e->nranks; r++)
			if (st->view[r] && !got[r])
				all = false;
		if (all)
			break;
		if (comm_now() - ended_at > ENDED_CHECK_S) {
			/* A rank whose process has ended will not answer: no need to wait for the deadline. */
			ended_at = comm_now();
			for (int r = 0; r < e->nranks; r++)
				if (st->view[r] && !got[r] && door_ended(e->door, r)) {
					cxs_log(CXS_LOG_WARN, e->now,
						"agreement round %llu: rank %d's process has ended",
						(unsigned long long)round, r);
					st->view[r] = 0;
				}
			continue;
		}
		if (comm_now() > deadline) {
			for (int r = 0; r < e->nranks; r++)
				if (st->view[r] && !got[r]) {
					cxs_log(CXS_LOG_WARN, e->now,
						"agreement round %llu: rank %d did not answer",
						(unsigned long long)round, r);
					st->view[r] = 0;
				}
			break;
		}
		void *msg;
		int len, src;
		if (!ctl_poll(e, &msg, &len, &src)) {
			comm_backoff(e, &polls, &sleep_ns);
			continue;
		}
		polls = 0;
		const struct ctl_hdr *h = msg;
		const uint64_t *tail = (const uint64_t *)(h + 1);
		int ntail = (len - (int)sizeof *h) / (int)sizeof(uint64_t);
		if (h->type == CTL_EXCLUDED)
			excluded(e, src);
		if (h->type == CTL_PING) {
			send_simple(e, src, e->alive[src] ? CTL_PONG : CTL_EXCLUDED, 0, 0);
		} else if (h->type == want && h->round == round && h->leader == (uint32_t)e->rank) {
			got[src] = 1;
			size_t R = result_words(e);
			if (want == CTL_REPORT && (size_t)ntail >= 2 * R + block_words(e)) {
				if (h->a > *best_w) {
					*best_w = h->a;
					memcpy(best_result, tail, 2 * R * sizeof *tail);
				}
				const uint64_t *blk = tail + 2 * R;
				if (blk[0] < pr->min_round)
					pr->min_round = blk[0];
				if (blk[0] > pr->block[0])
					memcpy(pr->block, blk, block_words(e) * sizeof *blk);
			}
		} else if ((h->type == CTL_QUERY || h->type == CTL_DECIDE || h->type == CTL_REJECT) &&
			   beats(h->round, h->leader, round, (uint32_t)e->rank)) {
			/* A better leader exists: follow it. */
			note_round(e, h->round);
			if (h->type == CTL_REJECT) {
				st->promised = true;
				st->prom_round = h->round;
				st->prom_leader = h->leader;
			} else {
				st->promised = false;
				follow_msg(e, st, h, tail, ntail, src);
			}
			free(msg);
			ret = -1;
			break;
		} else if (h->type == CTL_QUERY || h->type == CTL_DECIDE) {
			send_simple(e, src, CTL_REJECT, round, (uint32_t)e->rank);
		}
		free(msg);
	}
	free(got);
	return ret;
}

/* 1: decided and applied; 0: demoted to follower (st->promised set). */
static int lead(struct cxs_engine *e, struct agree *st)
{
	uint32_t B = e->rl.bitmap_words;
	size_t R = result_words(e), P = block_words(e);
	uint64_t *tail = calloc(B + 2 * R + P, sizeof *tail);
	if (!tail)
		cxs_bug(NULL, "out of memory in agreement");
	int ret = 0;
	for (;;) {
		uint64_t round = ++e->round_seen;
		if (st->promised && round <= st->prom_round)
			round = e->round_seen = st->prom_round + 1;
		st->promised = true;
		st->prom_round = round;
		st->prom_leader = (uint32_t)e->rank;
		for (int r = 0; r < e->nranks; r++)
			if (st->view[r])
				send_simple(e, r, CTL_QUERY, round, (uint32_t)e->rank);
		uint64_t best_w = e->w_red;
		memset(tail, 0, (B + 2 * R + P) * sizeof *tail);
		if (e->w_red)
			memcpy(tail + B, e->done_result, R * sizeof *tail);
		if (e->w_red > 1)
			memcpy(tail + B + R, e->prev_result, R * sizeof *tail);
		struct prior pr = {.min_round = e->last.round, .block = tail + B + 2 * R};
		put_block(e, &e->last, pr.block);
		if (collect(e, st, round, CTL_REPORT, &best_w, tail + B, &pr) < 0)
			goto out;
		bool has_prior = pr.block[0] > pr.min_round; /* someone missed the newest */

		memset(tail, 0, B * sizeof *tail);
		for (int r = 0; r < e->nranks; r++)
			if (!st->view[r])
				tail[r / 64] |= UINT64_C(1) << (r % 64);
		struct ctl_hdr dec = {.type = CTL_DECIDE, .from = (uint32_t)e->rank, .round = round,
				      .leader = (uint32_t)e->rank, .a = best_w,
				      .b = (best_w > 0 ? 1u : 0u) | (has_prior ? 2u : 0u)};
		for (int r = 0; r < e->nranks; r++)
			if (st->view[r])
				ctl_send(e, r, &dec, tail, B + 2 * R + P);
		uint8_t *before = malloc((size_t)e->nranks);
		if (!before)
			cxs_bug(NULL, "out of memory in agreement");
		memcpy(before, st->view, (size_t)e->nranks);
		uint64_t ack_w = 0;
		struct prior ack_pr = {0};
		if (collect(e, st, round, CTL_ACK, &ack_w, NULL, &ack_pr) < 0) {
			free(before);
			goto out;
		}
		bool lost = memcmp(before, st->view, (size_t)e->nranks) != 0;
		free(before);
		if (lost)
			continue; /* someone died between QUERY and ACK: decide again */
		int commits = 0;
		for (int r = 0; r < e->nranks; r++)
			if (st->view[r] && r != e->rank) {
				send_simple(e, r, CTL_COMMIT, round, (uint32_t)e->rank);
				if (++commits == e->test_die_after_commits && e->last.round == 0)
					die_for_test(e); /* only the first decision's leader */
			}
		apply(e, &dec, tail);
		ret = 1;
		break;
	}
out:
	free(tail);
	return ret;
}

/*
 * The agreement as one rank runs it, until a decision is applied. `suspect`
 * (or -1) and `hints` (dead bits, nhints words, or NULL) are what made us
 * enter: our own suspicion, or a START's; `first` is a QUERY or DECIDE that
 * made us enter, handled first.
 */
static void agree(struct cxs_engine *e, int suspect, const uint64_t *hints, int nhints,
		  const struct ctl_hdr *first, int first_src, const uint64_t *first_tail,
		  int first_ntail)
{
	uint32_t B = e->rl.bitmap_words;
	struct agree st = {0};
	st.view = malloc((size_t)e->nranks);
	st.dec_tail = malloc((B + 2 * result_words(e) + block_words(e)) * sizeof(uint64_t));
	uint64_t *silent = calloc(B, sizeof *silent);
	if (!st.view || !st.dec_tail || !silent)
		cxs_bug(NULL, "out of memory in agreement");
	memcpy(st.view, e->alive, (size_t)e->nranks);
	take_hints(e, &st, suspect, hints, hints ? nhints : 0);
	e->in_agreement = true;
	double t0 = comm_now();
	bool applied = false;
	if (first)
		applied = follow_msg(e, &st, first, first_tail, first_ntail, first_src) == 1;
	while (!applied) {
		int gone;
		if (st.promised && st.prom_leader != (uint32_t)e->rank) {
			if (follow(e, &st, (int)st.prom_leader, &gone)) {
				applied = true;
				break;
			}
			cxs_log(CXS_LOG_WARN, e->now, "agreement: leader %d silent", gone);
			st.view[gone] = 0;
			st.promised = false;
			continue;
		}
		int leader = lowest_alive(e, st.view);
		if (leader == e->rank) {
			if (lead(e, &st))
				applied = true;
			continue;
		}
		/* Ask it to lead, and tell it whom we found silent. */
		memset(silent, 0, B * sizeof *silent);
		for (int r = 0; r < e->nranks; r++)
			if (e->alive[r] && !st.view[r])
				silent[r / 64] |= UINT64_C(1) << (r % 64);
		struct ctl_hdr h = {.type = CTL_START, .from = (uint32_t)e->rank,
				    .a = (uint64_t)(int64_t)suspect};
		ctl_send(e, leader, &h, silent, B);
		if (follow(e, &st, leader, &gone)) {
			applied = true;
			break;
		}
		cxs_log(CXS_LOG_WARN, e->now, "agreement: leader %d silent", gone);
		st.view[gone] = 0;
		st.promised = false;
	}
	e->in_agreement = false;
	e->fig.agreements++;
	e->fig.agreement_wall_s += comm_now() - t0;
	free(st.view);
	free(st.dec_tail);
	free(silent);
}

void membership_agree(struct cxs_engine *e, const char *why, int suspect)
{
	cxs_log(CXS_LOG_INFO, e->now, "agreement (%s, suspect %d)", why, suspect);
	agree(e, suspect, NULL, 0, NULL, -1, NULL, 0);
}

enum wait_result membership_on_ctl(struct cxs_engine *e, const void *msg, int len, int src)
{
	const struct ctl_hdr *h = msg;
	const uint64_t *tail = (const uint64_t *)(h + 1);
	int ntail = (len - (int)sizeof *h) / (int)sizeof(uint64_t);
	switch (h->type) {
	case CTL_EXCLUDED:
		excluded(e, src);
	case CTL_START:
		if (!e->alive[src]) {
			send_simple(e, src, CTL_EXCLUDED, 0, 0);
			return WAIT_OK;
		}
		agree(e, (int)(int64_t)h->a, tail, ntail, NULL, -1, NULL, 0);
		return WAIT_CHANGED;
	case CTL_QUERY:
	case CTL_DECIDE:
		if (!e->alive[src]) {
			send_simple(e, src, CTL_EXCLUDED, h->round, h->leader);
			return WAIT_OK;
		}
		if (h->round <= e->last.round)
			return WAIT_OK; /* from an agreement we already finished */
		agree(e, -1, NULL, 0, h, src, tail, ntail);
		return WAIT_CHANGED;
	default:
		/* Stale replies from a finished agreement. */
		if (!e->alive[src])
			send_simple(e, src, CTL_EXCLUDED, 0, 0);
		return WAIT_OK;
	}
}
