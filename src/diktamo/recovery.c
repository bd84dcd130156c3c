/*
 * recovery.c — DIKTAMO's recovery after a CN fails (papers/diktamo.md §V,
 * Table I, Algorithm 1, Table III): real messages between the surviving
 * nodes, each step timed in simulated time from what it really scans.
 *
 *   every node   the switch detects the failure diktamo.detect_latency after
 *                T_f and reports it to every node (EV_FAILED; to the CM it
 *                stands for the switch's MSI, §V-A)
 *   CM           the Configuration Manager: core 0 of the lowest-numbered
 *                live CN, the same choice on every node. RecBegin: INTERRUPT
 *                to every live CN (itself included); each pauses its cores
 *                and answers INTERRUPT_RESP. CM<->MN: INIT_RECOV(dead CNs)
 *                to every MN; when every INIT_RECOV_RESP is in, RecEnd:
 *                RECOV_END to every live CN, which resumes its cores and
 *                answers RECOV_END_RESP (and to every MN, which answers
 *                nothing: each node takes its part of the recovered image
 *                when RECOV_END reaches it, src/node/image.c).
 *   MN           TravDir: scans its directory (cxs_home_entries entries at
 *                diktamo.recovery_dir_entry each; the sharer removals and the
 *                list of lines the dead CN owned were made when the failure
 *                was detected, cxs_home_cn_failed, so that transactions
 *                waiting on it could finish; those lines have waited since,
 *                busy RECOVER); MN<->LU: FETCH_LATEST with the Owned lines to
 *                every live Logging Unit; TravLU there (the unit reads its
 *                buffer and DRAM log once: entries x its cycle) and
 *                FETCH_LATEST_RESP with the latest VALed version of every
 *                word it holds; MNMerge: per word the latest by stamp among
 *                the units' answers, and for words no unit had, the MN's own
 *                dumped logs, decompressed and searched (bytes inflated at
 *                diktamo.recovery_inflate_gbps, entries at
 *                diktamo.recovery_log_entry); the versions are written to
 *                memory (DRAM writes), the lines freed (their waiting
 *                requests served), and INIT_RECOV_RESP carries the MN's step
 *                times and word counts to the CM.
 *
 * Logs are dumped to the home MN of their lines (logging.c), so the second
 * step of Algorithm 1, "FetchLatestVers to all the MNs whose log could have
 * the missing versions", is the home's own search: no MN-to-MN messages.
 * FETCH_LATEST goes to every live unit, not only to a line's replica group:
 * after one failure the groups are formed anew, and a line's history may be
 * in the units of its old and its new group.
 *
 * A word no unit and no MN log has keeps its memory value: it was never
 * written since the image was loaded, or its last write is in memory (a
 * write-back before the failure). A line whose whole replica group (at the
 * time of the failure) is dead may have lost writes: its words are counted
 * and named in the output (recovery/unrecoverable_*), never silently kept.
 *
 * Quiescence. A CN answers INTERRUPT once its cores are paused (they issue
 * nothing more and their completions wait); requests already with a home may
 * stay pending, because some wait for lines under recovery and complete only
 * when the recovery frees them. The Logging Units are not paused: VALs still
 * in flight complete their entries.
 *
 * Failures during recovery. A CN that fails while a recovery is running is
 * no longer waited for (INTERRUPT_RESP, FETCH_LATEST_RESP, RECOV_END_RESP);
 * its own recovery follows in another round before RECOV_END (the cores stay
 * paused). If the CM itself fails, the next lowest live CN becomes CM and
 * starts a new round for every failed CN not yet recovered; an MN that gets
 * a newer round drops the older one's state (its answers would be stale)
 * and recovers whatever still waits. Rounds are numbered by the CM and carry
 * the CM's id so that a stale answer is recognised.
 *
 * Table III's steps are recorded on the CM (component recovery, one entry
 * per round in the vectors, totals in the counters): RecBegin (INTERRUPT out
 * to the last INTERRUPT_RESP), CM<->MN (the INIT_RECOV round trip less the
 * slowest MN's own work), TravDir, MN<->LU (the FETCH_LATEST round trip less
 * the slowest unit's scan), TravLU, MNMerge — the last four of the MN whose
 * work took longest, the critical path — and RecEnd.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dk_priv.h"

enum { T_DIR_DONE = 1, T_MERGE_DONE };

#define WORDS_PER_LINE (CXS_LINE_BYTES / 8)

static uint32_t lowest(uint64_t mask)
{
	return mask ? (uint32_t)__builtin_ctzll(mask) : UINT32_MAX;
}

static uint64_t all_cns(uint32_t cns)
{
	return cns >= 64 ? UINT64_MAX : (UINT64_C(1) << cns) - 1;
}

/* ---- the CN: its cores' pause, its Logging Unit's search, and the CM ----------------- */

enum cm_phase { CM_IDLE = 0, CM_INTERRUPT, CM_MNS, CM_END };

struct cxs_dk_rec_cn {
	const struct cxs_dk_world *w;
	struct cxs_nport *port;
	struct cxs_lp *lp;
	uint32_t node;
	struct cxs_dk_logger *logger;
	struct cxs_dk_rec_cn_env env;
	uint64_t live;      /* CNs this node knows alive */
	uint64_t failed;    /* CNs whose failure the switch reported */
	uint64_t recovered; /* ... and whose recovery ended (RECOV_END) */
	bool paused;
	/* the CM's */
	uint8_t phase;
	uint32_t round;
	uint64_t round_dead;   /* the failed CNs this round recovers */
	uint64_t awaiting;     /* CNs (INTERRUPT_RESP, RECOV_END_RESP) */
	uint32_t mns_left;     /* MNs whose INIT_RECOV_RESP is still due */
	uint8_t *mn_answered;  /* per MN index, this round */
	cxs_time t_start, t_mns, t_end;
	struct dk_rec_report worst; /* the slowest MN's report this round */
	cxs_time worst_total;
	struct dk_rec_report sum;
	struct cxs_vec *v_dead, *v_start, *v_steps[7];
	uint64_t *c_rounds, *c_steps[7], *c_lines, *c_from_lu, *c_from_mn, *c_kept, *c_lost_lines,
		*c_lost_words, *c_total, *c_dirty, *c_clean;
	/* the unit's */
	uint64_t *c_fetches, *c_scanned;
};

static const char *const step_name[7] = {"rec_begin_ps", "cm_mn_ps", "trav_dir_ps", "mn_lu_ps",
					 "trav_lu_ps", "mn_merge_ps", "rec_end_ps"};
static const char *const step_doc[7] = {
	"RecBegin: INTERRUPT to every live CN until the last INTERRUPT_RESP",
	"CM<->MN: the INIT_RECOV round trip less the slowest MN's own work",
	"TravDir: the slowest MN's directory traversal",
	"MN<->LU: that MN's FETCH_LATEST round trip less the slowest Logging Unit's scan",
	"TravLU: the slowest Logging Unit's scan for that MN",
	"MNMerge: that MN's search of its dumped logs, merge and memory writes",
	"RecEnd: RECOV_END to every live CN until the last RECOV_END_RESP",
};

static void send_cn(struct cxs_dk_rec_cn *r, cxs_time when, uint32_t dst, enum cxs_msg_type type,
		    const void *body, uint32_t len, uint32_t wire)
{
	cxs_nport_send(r->port, when, r->w->ev_msg, dst, type, body, len, wire);
}

static void cm_interrupt(struct cxs_dk_rec_cn *r, cxs_time now)
{
	r->round++;
	r->round_dead = r->failed & ~r->recovered;
	r->phase = CM_INTERRUPT;
	r->awaiting = r->live;
	r->t_start = now;
	r->worst_total = 0;
	memset(&r->worst, 0, sizeof r->worst);
	memset(&r->sum, 0, sizeof r->sum);
	struct dk_rec_msg m = {.round = r->round, .cm = r->node, .dead = r->round_dead};
	for (uint32_t c = 0; c < r->w->cns; c++)
		if (r->live >> c & 1)
			send_cn(r, now, c, CXS_MSG_INTERRUPT, &m, sizeof m, 0);
	cxs_log(CXS_LOG_INFO, now, "diktamo recovery: CM node %u interrupts the live CNs (round "
		"%u, failed CNs %#" PRIx64 ")", r->node, r->round, r->round_dead);
}

static void cm_init_recov(struct cxs_dk_rec_cn *r, cxs_time now)
{
	r->phase = CM_MNS;
	r->t_mns = now;
	r->round_dead = r->failed & ~r->recovered;
	r->mns_left = r->w->mns;
	memset(r->mn_answered, 0, r->w->mns);
	struct dk_rec_msg m = {.round = r->round, .cm = r->node, .dead = r->round_dead};
	for (uint32_t i = 0; i < r->w->mns; i++)
		send_cn(r, now, r->w->first_mn + i, CXS_MSG_INIT_RECOV, &m, sizeof m, 0);
}

static void cm_end(struct cxs_dk_rec_cn *r, cxs_time now)
{
	if (r->env.ended)
		r->env.ended(r->env.ctx, now);
	r->phase = CM_END;
	r->t_end = now;
	r->recovered |= r->round_dead;
	r->awaiting = r->live;
	struct dk_rec_msg m = {.round = r->round, .cm = r->node, .dead = r->recovered};
	for (uint32_t c = 0; c < r->w->cns; c++)
		if (r->live >> c & 1)
			send_cn(r, now, c, CXS_MSG_RECOV_END, &m, sizeof m, 0);
	/* The MNs too, so that they take their part of the recovered image (no answer). */
	for (uint32_t i = 0; i < r->w->mns; i++)
		send_cn(r, now, r->w->first_mn + i, CXS_MSG_RECOV_END, &m, sizeof m, 0);
}

static void record(struct cxs_dk_rec_cn *r, cxs_time now)
{
	const struct dk_rec_report *w = &r->worst;
	cxs_time mn_span = r->worst_total;
	cxs_time cm_mn = r->t_end - r->t_mns;
	cxs_time steps[7] = {
		r->t_mns - r->t_start,
		cm_mn > mn_span ? cm_mn - mn_span : 0,
		w->trav_dir_ps,
		w->mn_lu_ps,
		w->trav_lu_ps,
		w->merge_ps,
		now - r->t_end,
	};
	++*r->c_rounds;
	for (int i = 0; i < 7; i++) {
		*r->c_steps[i] += steps[i];
		cxs_vec_push(r->v_steps[i], steps[i]);
	}
	*r->c_total += now - r->t_start;
	cxs_vec_push(r->v_dead, r->round_dead);
	cxs_vec_push(r->v_start, r->t_start);
	*r->c_lines += r->sum.lines;
	*r->c_from_lu += r->sum.words_from_lu;
	*r->c_from_mn += r->sum.words_from_mn;
	*r->c_kept += r->sum.words_kept;
	*r->c_lost_lines += r->sum.lost_lines;
	*r->c_lost_words += r->sum.lost_words;
	*r->c_dirty += r->sum.dirty_lines;
	*r->c_clean += r->sum.lines - r->sum.dirty_lines;
	cxs_log(CXS_LOG_INFO, now,
		"diktamo recovery of CNs %#" PRIx64 " done in %" PRIu64 " ps: %" PRIu64
		" lines, %" PRIu64 " words from Logging Units, %" PRIu64 " from MN logs",
		r->round_dead, now - r->t_start, r->sum.lines, r->sum.words_from_lu,
		r->sum.words_from_mn);
	if (r->sum.lost_lines)
		cxs_log(CXS_LOG_WARN, now,
			"diktamo recovery: %" PRIu64 " lines owned by failed CNs had every replica "
			"failed: their %" PRIu64 " words may have lost writes (recovery/unrecoverable_*)",
			r->sum.lost_lines, r->sum.lost_words);
}

/* Is this node the CM now, and is there something to recover? */
static void cm_consider(struct cxs_dk_rec_cn *r, cxs_time now)
{
	if (lowest(r->live) != r->node)
		return;
	if (r->phase == CM_IDLE && (r->failed & ~r->recovered))
		cm_interrupt(r, now);
}

static void on_interrupt(void *ctx, cxs_time now, const struct cxs_envelope *env, const void *body,
			 uint32_t len)
{
	struct cxs_dk_rec_cn *r = ctx;
	const struct dk_rec_msg *m = body;
	(void)len;
	if (!r->paused) {
		r->paused = true;
		r->env.pause(r->env.ctx, now);
	}
	struct dk_rec_msg a = *m;
	send_cn(r, now, env->src, CXS_MSG_INTERRUPT_RESP, &a, sizeof a, 0);
}

static void on_recov_end(void *ctx, cxs_time now, const struct cxs_envelope *env, const void *body,
			 uint32_t len)
{
	struct cxs_dk_rec_cn *r = ctx;
	const struct dk_rec_msg *m = body;
	(void)len;
	r->recovered |= m->dead;
	if (r->env.snapshot)
		r->env.snapshot(r->env.ctx);
	if (r->paused) {
		r->paused = false;
		r->env.resume(r->env.ctx, now);
	}
	struct dk_rec_msg a = *m;
	send_cn(r, now, env->src, CXS_MSG_RECOV_END_RESP, &a, sizeof a, 0);
}

/* A CM's answer arrived: from CN `who`, or (INIT_RECOV_RESP) from MN index `who`. */
static void cm_answer(struct cxs_dk_rec_cn *r, cxs_time now, uint32_t who)
{
	if (r->phase == CM_MNS) {
		if (r->mn_answered[who])
			return;
		r->mn_answered[who] = 1;
		if (--r->mns_left)
			return;
	} else {
		r->awaiting &= ~(UINT64_C(1) << who);
		if (r->awaiting)
			return;
	}
	switch (r->phase) {
	case CM_INTERRUPT:
		cm_init_recov(r, now);
		return;
	case CM_MNS:
		if (r->failed & ~r->recovered & ~r->round_dead) {
			/* Another CN failed meanwhile: its round, before anyone resumes. */
			r->t_end = now;
			record(r, now);
			r->recovered |= r->round_dead;
			r->round++;
			r->t_start = now;
			r->worst_total = 0;
			memset(&r->worst, 0, sizeof r->worst);
			memset(&r->sum, 0, sizeof r->sum);
			cm_init_recov(r, now);
			return;
		}
		cm_end(r, now);
		return;
	case CM_END:
		record(r, now);
		r->phase = CM_IDLE;
		cm_consider(r, now);
		return;
	default:
		return;
	}
}

static void on_cm_answer(void *ctx, cxs_time now, const struct cxs_envelope *env, const void *body,
			 uint32_t len)
{
	struct cxs_dk_rec_cn *r = ctx;
	const struct dk_rec_msg *m = body;
	if (m->cm != r->node || m->round != r->round)
		return; /* an answer to an earlier round or to an earlier CM */
	switch (env->type) {
	case CXS_MSG_INTERRUPT_RESP:
		if (r->phase == CM_INTERRUPT)
			cm_answer(r, now, env->src);
		return;
	case CXS_MSG_RECOV_END_RESP:
		if (r->phase == CM_END)
			cm_answer(r, now, env->src);
		return;
	case CXS_MSG_INIT_RECOV_RESP: {
		if (r->phase != CM_MNS || len < sizeof(struct dk_rec_report))
			return;
		const struct dk_rec_report *p = body;
		cxs_time total = p->trav_dir_ps + p->mn_lu_ps + p->trav_lu_ps + p->merge_ps;
		if (total >= r->worst_total) {
			r->worst_total = total;
			r->worst = *p;
		}
		r->sum.lines += p->lines;
		r->sum.words_from_lu += p->words_from_lu;
		r->sum.words_from_mn += p->words_from_mn;
		r->sum.words_kept += p->words_kept;
		r->sum.lost_lines += p->lost_lines;
		r->sum.lost_words += p->lost_words;
		r->sum.dirty_lines += p->dirty_lines;
		cm_answer(r, now, env->src - r->w->first_mn);
		return;
	}
	default:
		return;
	}
}

/* FETCH_LATEST at this CN's Logging Unit: TravLU. */
static void on_fetch(void *ctx, cxs_time now, const struct cxs_envelope *env, const void *body,
		     uint32_t len)
{
	struct cxs_dk_rec_cn *r = ctx;
	const struct dk_fetch *f = body;
	if (len < sizeof *f || (len - sizeof *f) / sizeof f->line[0] < f->nlines)
		cxs_bug(r->lp, "diktamo: malformed FETCH_LATEST of %u bytes", len);
	size_t nw = (size_t)f->nlines * WORDS_PER_LINE;
	uint64_t *words = malloc((nw ? nw : 1) * sizeof *words);
	struct cxs_dk_entry *out = malloc((nw ? nw : 1) * sizeof *out);
	uint8_t *found = malloc(nw ? nw : 1);
	struct dk_fetch_resp *resp = malloc(sizeof *resp + (nw ? nw : 1) * sizeof resp->v[0]);
	if (!words || !out || !found || !resp)
		cxs_bug(r->lp, "diktamo: out of memory searching the log for recovery");
	for (uint32_t i = 0; i < f->nlines; i++)
		for (uint32_t k = 0; k < WORDS_PER_LINE; k++)
			words[(size_t)i * WORDS_PER_LINE + k] =
				(f->line[i] << CXS_LINE_SHIFT) + 8 * k;
	size_t scanned = cxs_lu_latest(cxs_dk_logger_lu(r->logger), words, nw, out, found);
	cxs_time scan = (cxs_time)scanned * r->w->p->lu.cycle_ps;
	*resp = (struct dk_fetch_resp){.round = f->round, .cm = f->cm, .scan_ps = scan};
	for (size_t i = 0; i < nw; i++)
		if (found[i])
			resp->v[resp->n++] = (struct dk_version){out[i].addr, out[i].value, out[i].stamp};
	++*r->c_fetches;
	*r->c_scanned += scanned;
	uint32_t size = (uint32_t)(sizeof *resp + resp->n * sizeof resp->v[0]);
	send_cn(r, now + scan, env->src, CXS_MSG_FETCH_LATEST_RESP, resp, size,
		16 + 24 * resp->n);
	free(words);
	free(out);
	free(found);
	free(resp);
}

struct cxs_dk_rec_cn *cxs_dk_rec_cn_new(const struct cxs_dk_world *w, struct cxs_nport *port,
					struct cxs_dk_logger *logger,
					const struct cxs_dk_rec_cn_env *env, struct cxs_stats *st)
{
	struct cxs_dk_rec_cn *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->w = w;
	r->port = port;
	r->lp = port->lp;
	r->node = cxs_lp_id(port->lp);
	r->logger = logger;
	r->env = *env;
	r->live = all_cns(w->cns);
	if (!(r->mn_answered = calloc(w->mns, 1)))
		goto fail;
	for (int i = 0; i < 7; i++) {
		r->c_steps[i] = cxs_stats_counter(st, "recovery", step_name[i], "ps", step_doc[i]);
		char vname[64];
		snprintf(vname, sizeof vname, "round_%s", step_name[i]);
		r->v_steps[i] = cxs_stats_vector(st, "recovery", vname, "ps",
						 "per recovery round this node led as CM: the step's time");
		if (!r->c_steps[i] || !r->v_steps[i])
			goto fail;
	}
	r->v_dead = cxs_stats_vector(st, "recovery", "round_failed_cns", "mask",
				     "per round: the failed CNs it recovered (bit per CN)");
	r->v_start = cxs_stats_vector(st, "recovery", "round_start_ps", "ps",
				      "per round: when the CM began it");
	r->c_rounds = cxs_stats_counter(st, "recovery", "rounds", "rounds",
					"recovery rounds this node led as Configuration Manager");
	r->c_total = cxs_stats_counter(st, "recovery", "total_ps", "ps",
				       "time from the CM's start of recovery to the last RECOV_END_RESP");
	r->c_lines = cxs_stats_counter(st, "recovery", "lines", "lines",
				       "lines failed CNs owned, recovered by the MNs (CM's totals)");
	r->c_from_lu = cxs_stats_counter(st, "recovery", "words_from_lu", "words",
					 "words whose latest version came from a Logging Unit");
	r->c_from_mn = cxs_stats_counter(st, "recovery", "words_from_mn_logs", "words",
					 "words whose latest version came from an MN's dumped logs");
	r->c_kept = cxs_stats_counter(st, "recovery", "words_kept", "words",
				      "words of recovered lines with no logged version: memory's value stands");
	r->c_lost_lines = cxs_stats_counter(st, "recovery", "unrecoverable_lines", "lines",
					    "lines whose whole replica group had failed");
	r->c_dirty = cxs_stats_counter(st, "recovery", "owned_dirty_lines", "lines",
				       "of `lines`: the dead owner had modified them (Fig. 15's M: the recovered words changed memory)");
	r->c_clean = cxs_stats_counter(st, "recovery", "owned_exclusive_lines", "lines",
				       "of `lines`: held clean (Fig. 15's E: recovery left memory's value)");
	r->c_lost_words = cxs_stats_counter(st, "recovery", "unrecoverable_words", "words",
					    "their words (their latest writes may be lost)");
	r->c_fetches = cxs_stats_counter(st, "lu", "recovery_fetches", "messages",
					 "FETCH_LATEST requests this Logging Unit answered");
	r->c_scanned = cxs_stats_counter(st, "lu", "recovery_scanned_entries", "entries",
					 "entries this Logging Unit read answering them (TravLU)");
	if (!r->v_dead || !r->v_start || !r->c_rounds || !r->c_total || !r->c_lines ||
	    !r->c_from_lu || !r->c_from_mn || !r->c_kept || !r->c_lost_lines || !r->c_lost_words ||
	    !r->c_dirty || !r->c_clean ||
	    !r->c_fetches || !r->c_scanned)
		goto fail;
	cxs_nport_on_type(port, CXS_MSG_INTERRUPT, on_interrupt, r);
	cxs_nport_on_type(port, CXS_MSG_RECOV_END, on_recov_end, r);
	cxs_nport_on_type(port, CXS_MSG_INTERRUPT_RESP, on_cm_answer, r);
	cxs_nport_on_type(port, CXS_MSG_INIT_RECOV_RESP, on_cm_answer, r);
	cxs_nport_on_type(port, CXS_MSG_RECOV_END_RESP, on_cm_answer, r);
	cxs_nport_on_type(port, CXS_MSG_FETCH_LATEST, on_fetch, r);
	return r;
fail:
	free(r->mn_answered);
	free(r);
	return NULL;
}

void cxs_dk_rec_cn_free(struct cxs_dk_rec_cn *r)
{
	if (r)
		free(r->mn_answered);
	free(r);
}

bool cxs_dk_rec_cn_paused(const struct cxs_dk_rec_cn *r)
{
	return r->paused;
}

uint64_t cxs_dk_rec_cn_recovered(const struct cxs_dk_rec_cn *r)
{
	return r->recovered;
}

void cxs_dk_rec_cn_failed(struct cxs_dk_rec_cn *r, uint32_t cn, cxs_time now)
{
	uint64_t bit = UINT64_C(1) << cn;
	r->live &= ~bit;
	r->failed |= bit;
	if (lowest(r->live) == r->node && r->phase != CM_IDLE) {
		/* The CM stops waiting for it; its own recovery comes in a following round. */
		if (r->phase != CM_MNS && (r->awaiting & bit))
			cm_answer(r, now, cn);
		return;
	}
	cm_consider(r, now);
}

/* ---- the MN: directory traversal, the units' answers, the merge ---------------------- */

struct cxs_dk_rec_mn {
	const struct cxs_dk_world *w;
	struct cxs_nport *port;
	struct cxs_lp *lp;
	uint32_t node, index;
	uint32_t ev;
	struct cxs_dk_keeper *keeper;
	struct cxs_dk_rec_mn_env env;
	uint64_t live;            /* CNs alive */
	uint64_t round_dead;      /* the failed CNs the round recovers */
	/* the round being worked on */
	bool active;
	uint32_t round, cm;
	uint64_t awaiting;        /* Logging Units still to answer */
	uint64_t *lines;          /* the Owned lines */
	size_t nlines;
	struct dk_version *best;  /* per word of the lines: the latest version so far */
	uint8_t *have;
	cxs_time t_init, t_dir, t_fetch_back, trav_lu;
	struct dk_rec_report rep;
	uint64_t *c_rounds, *c_lines, *c_from_lu, *c_from_mn, *c_kept, *c_inflated, *c_scanned,
		*c_lost_lines, *c_lost_words, *c_dirty;
	struct cxs_vec *v_lost;
};

static void mn_reset(struct cxs_dk_rec_mn *r)
{
	free(r->lines);
	free(r->best);
	free(r->have);
	r->lines = NULL;
	r->best = NULL;
	r->have = NULL;
	r->nlines = 0;
	r->active = false;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void mn_timer(struct cxs_dk_rec_mn *r, cxs_time delay, uint32_t kind)
{
	uint32_t k[2] = {kind, r->round};
	cxs_schedule(r->lp, delay, r->ev, k, sizeof k);
}

static void on_init_recov(void *ctx, cxs_time now, const struct cxs_envelope *env,
			  const void *body, uint32_t len)
{
	struct cxs_dk_rec_mn *r = ctx;
	const struct dk_rec_msg *m = body;
	(void)env;
	(void)len;
	mn_reset(r); /* a newer round supersedes an older one */
	r->active = true;
	r->round = m->round;
	r->cm = m->cm;
	r->round_dead = m->dead;
	r->t_init = now;
	memset(&r->rep, 0, sizeof r->rep);
	r->rep.round = m->round;
	r->rep.cm = m->cm;
	const uint64_t *lines;
	size_t n = r->env.owned(r->env.ctx, &lines);
	r->lines = malloc((n ? n : 1) * sizeof *r->lines);
	r->best = calloc((n ? n : 1) * WORDS_PER_LINE, sizeof *r->best);
	r->have = calloc((n ? n : 1) * WORDS_PER_LINE, 1);
	if (!r->lines || !r->best || !r->have)
		cxs_bug(r->lp, "diktamo: out of memory for recovery");
	if (n) { /* an MN that homes none of the dead CN's lines may be given NULL */
		memcpy(r->lines, lines, n * sizeof *lines);
		qsort(r->lines, n, sizeof *r->lines, cmp_u64); /* word_slot searches them */
	}
	r->nlines = n;
	cxs_time dir = (cxs_time)r->env.dir_entries(r->env.ctx) * r->w->p->rec_dir_entry_ps;
	r->rep.trav_dir_ps = dir;
	mn_timer(r, dir, T_DIR_DONE);
}

/* TravDir is over: the Owned lines to every live Logging Unit. */
static void mn_fetch(struct cxs_dk_rec_mn *r, cxs_time now)
{
	r->t_dir = now;
	r->trav_lu = 0;
	r->awaiting = r->nlines ? r->live : 0;
	if (!r->awaiting) {
		r->t_fetch_back = now;
		mn_timer(r, 0, T_MERGE_DONE); /* nothing to merge */
		return;
	}
	size_t size = sizeof(struct dk_fetch) + r->nlines * sizeof(uint64_t);
	struct dk_fetch *f = malloc(size);
	if (!f)
		cxs_bug(r->lp, "diktamo: out of memory for FETCH_LATEST");
	*f = (struct dk_fetch){.round = r->round, .cm = r->cm, .nlines = (uint32_t)r->nlines};
	memcpy(f->line, r->lines, r->nlines * sizeof *r->lines);
	for (uint32_t c = 0; c < r->w->cns; c++)
		if (r->live >> c & 1)
			cxs_nport_send(r->port, now, r->w->ev_msg, c, CXS_MSG_FETCH_LATEST, f,
				       (uint32_t)size, (uint32_t)(16 + 8 * r->nlines));
	free(f);
}

/* Which slot of best[] a word address is (lines are distinct and few per MN: a search). */
static long word_slot(const struct cxs_dk_rec_mn *r, uint64_t addr)
{
	uint64_t line = addr >> CXS_LINE_SHIFT;
	size_t lo = 0, hi = r->nlines;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (r->lines[mid] < line)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == r->nlines || r->lines[lo] != line)
		return -1;
	return (long)(lo * WORDS_PER_LINE + ((addr & (CXS_LINE_BYTES - 1)) >> 3));
}

/* All units answered: search the MN's logs for what they lacked; the merge's time. */
static void mn_merge(struct cxs_dk_rec_mn *r, cxs_time now)
{
	r->t_fetch_back = now;
	size_t nw = r->nlines * WORDS_PER_LINE, nmiss = 0;
	for (size_t i = 0; i < nw; i++)
		nmiss += !r->have[i];
	r->rep.words_from_lu = nw - nmiss;
	size_t scanned = 0, inflated = 0;
	if (nmiss) {
		uint64_t *words = malloc(nmiss * sizeof *words);
		struct cxs_dk_entry *out = malloc(nmiss * sizeof *out);
		uint8_t *found = malloc(nmiss);
		size_t *slot = malloc(nmiss * sizeof *slot);
		if (!words || !out || !found || !slot)
			cxs_bug(r->lp, "diktamo: out of memory merging for recovery");
		size_t k = 0;
		for (size_t i = 0; i < nw; i++)
			if (!r->have[i]) {
				slot[k] = i;
				words[k++] = (r->lines[i / WORDS_PER_LINE] << CXS_LINE_SHIFT) +
					     8 * (i % WORDS_PER_LINE);
			}
		char err[256];
		scanned = cxs_dk_store_latest(cxs_dk_keeper_store(r->keeper), words, nmiss, out,
					      found, &inflated, err, sizeof err);
		if (scanned == (size_t)-1) {
			cxs_lp_fail(r->lp, 3, "diktamo recovery at node %u: %s", r->node, err);
			scanned = 0;
		}
		for (size_t j = 0; j < nmiss && scanned != (size_t)-1; j++)
			if (found[j]) {
				r->best[slot[j]] = (struct dk_version){out[j].addr, out[j].value,
								       out[j].stamp};
				r->have[slot[j]] = 1;
				r->rep.words_from_mn++;
			}
		free(words);
		free(out);
		free(found);
		free(slot);
	}
	r->rep.words_kept = nw - r->rep.words_from_lu - r->rep.words_from_mn;
	*r->c_inflated += inflated;
	*r->c_scanned += scanned;
	const struct cxs_dk_params *p = r->w->p;
	cxs_time merge = (cxs_time)((double)inflated / p->rec_inflate_bytes_per_ps) +
			 (cxs_time)(scanned + nw) * p->rec_log_entry_ps;
	r->rep.merge_ps = merge;
	mn_timer(r, merge, T_MERGE_DONE);
}

/* Whether every CN of the line's replica group, as it was before the round's failures, is dead. */
static bool group_dead(const struct cxs_dk_rec_mn *r, uint64_t line)
{
	uint32_t live[DK_MAX_CNS], n = 0, g[CXS_DK_MAX_REPLICAS];
	for (uint32_t c = 0; c < r->w->cns; c++)
		if ((r->live | r->round_dead) >> c & 1)
			live[n++] = c;
	uint32_t k = cxs_dk_replicas(line, live, n, r->w->p->replicas, g);
	for (uint32_t i = 0; i < k; i++)
		if (r->live >> g[i] & 1)
			return false;
	return true;
}

static void mn_write(struct cxs_dk_rec_mn *r, cxs_time now)
{
	cxs_time done = now;
	char err[256];
	for (size_t i = 0; i < r->nlines; i++) {
		uint8_t data[CXS_LINE_BYTES] = {0}, mask = 0;
		for (uint32_t k = 0; k < WORDS_PER_LINE; k++) {
			const size_t s = i * WORDS_PER_LINE + k;
			if (!r->have[s])
				continue;
			memcpy(data + 8 * k, &r->best[s].value, 8); /* little-endian host */
			mask |= (uint8_t)(1u << k);
		}
		if (group_dead(r, r->lines[i])) {
			r->rep.lost_lines++;
			r->rep.lost_words += WORDS_PER_LINE;
			cxs_vec_push(r->v_lost, r->lines[i] << CXS_LINE_SHIFT);
		}
		cxs_time t;
		bool dirty = false;
		if (r->env.recovered(r->env.ctx, now, r->lines[i], data, mask, &t, &dirty, err,
				     sizeof err) != 0) {
			cxs_lp_fail(r->lp, 3, "diktamo recovery at node %u: %s", r->node, err);
			return;
		}
		r->rep.dirty_lines += dirty;
		if (t > done)
			done = t;
	}
	r->rep.merge_ps += done - now;
	r->rep.lines = r->nlines;
	if (r->rep.lost_lines)
		cxs_log(CXS_LOG_WARN, now,
			"diktamo recovery at node %u: %" PRIu64 " lines owned by failed CNs had every "
			"replica failed: their %" PRIu64 " words may have lost writes "
			"(recovery/unrecoverable_addr)",
			r->node, r->rep.lost_lines, r->rep.lost_words);
	cxs_time fetch = r->t_fetch_back - r->t_dir;
	r->rep.mn_lu_ps = fetch > r->trav_lu ? fetch - r->trav_lu : 0;
	r->rep.trav_lu_ps = r->trav_lu;
	++*r->c_rounds;
	*r->c_lines += r->nlines;
	*r->c_from_lu += r->rep.words_from_lu;
	*r->c_from_mn += r->rep.words_from_mn;
	*r->c_kept += r->rep.words_kept;
	*r->c_lost_lines += r->rep.lost_lines;
	*r->c_lost_words += r->rep.lost_words;
	*r->c_dirty += r->rep.dirty_lines;
	cxs_nport_send(r->port, done, r->w->ev_msg, r->cm, CXS_MSG_INIT_RECOV_RESP, &r->rep,
		       sizeof r->rep, 0);
	mn_reset(r);
}

static void on_fetch_resp(void *ctx, cxs_time now, const struct cxs_envelope *env,
			  const void *body, uint32_t len)
{
	struct cxs_dk_rec_mn *r = ctx;
	const struct dk_fetch_resp *f = body;
	if (len < sizeof *f || (len - sizeof *f) / sizeof f->v[0] < f->n)
		cxs_bug(r->lp, "diktamo: malformed FETCH_LATEST_RESP of %u bytes", len);
	if (!r->active || f->round != r->round || f->cm != r->cm ||
	    !(r->awaiting >> env->src & 1))
		return;
	for (uint32_t i = 0; i < f->n; i++) {
		long s = word_slot(r, f->v[i].addr);
		if (s < 0)
			cxs_bug(r->lp, "diktamo: a Logging Unit answered for a word not asked");
		if (!r->have[s] || f->v[i].stamp > r->best[s].stamp) {
			r->best[s] = f->v[i];
			r->have[s] = 1;
		}
	}
	if (f->scan_ps > r->trav_lu)
		r->trav_lu = f->scan_ps;
	r->awaiting &= ~(UINT64_C(1) << env->src);
	if (!r->awaiting)
		mn_merge(r, now);
}

static void on_mn_recov_end(void *ctx, cxs_time now, const struct cxs_envelope *env,
			    const void *body, uint32_t len)
{
	struct cxs_dk_rec_mn *r = ctx;
	(void)now;
	(void)env;
	(void)body;
	(void)len;
	if (r->env.snapshot)
		r->env.snapshot(r->env.ctx);
}

void cxs_dk_rec_mn_event(struct cxs_dk_rec_mn *r, const struct cxs_event *ev)
{
	uint32_t k[2];
	memcpy(k, ev->data, sizeof k);
	if (!r->active || k[1] != r->round)
		return; /* a superseded round's timer */
	if (k[0] == T_DIR_DONE)
		mn_fetch(r, ev->time);
	else if (k[0] == T_MERGE_DONE)
		mn_write(r, ev->time);
	else
		cxs_bug(r->lp, "diktamo: recovery event %u", k[0]);
}


struct cxs_dk_rec_mn *cxs_dk_rec_mn_new(const struct cxs_dk_world *w, struct cxs_nport *port,
					struct cxs_dk_keeper *keeper, uint32_t ev,
					const struct cxs_dk_rec_mn_env *env, struct cxs_stats *st)
{
	struct cxs_dk_rec_mn *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->w = w;
	r->port = port;
	r->lp = port->lp;
	r->node = cxs_lp_id(port->lp);
	r->index = r->node - w->first_mn;
	r->ev = ev;
	r->keeper = keeper;
	r->env = *env;
	r->live = all_cns(w->cns);
	r->c_rounds = cxs_stats_counter(st, "recovery", "mn_rounds", "rounds",
					"recovery rounds this MN took part in");
	r->c_lines = cxs_stats_counter(st, "recovery", "mn_lines", "lines",
				       "lines homed here that failed CNs owned, recovered");
	r->c_from_lu = cxs_stats_counter(st, "recovery", "mn_words_from_lu", "words",
					 "their words whose latest version came from a Logging Unit");
	r->c_from_mn = cxs_stats_counter(st, "recovery", "mn_words_from_mn_logs", "words",
					 "... from this MN's dumped logs");
	r->c_kept = cxs_stats_counter(st, "recovery", "mn_words_kept", "words",
				      "... with no logged version (memory's value stands)");
	r->c_inflated = cxs_stats_counter(st, "recovery", "mn_log_bytes_inflated", "bytes",
					  "dumped-log bytes decompressed searching for them (MNMerge)");
	r->c_scanned = cxs_stats_counter(st, "recovery", "mn_log_entries_scanned", "entries",
					 "dumped-log entries read searching for them (MNMerge)");
	r->c_lost_lines = cxs_stats_counter(st, "recovery", "mn_unrecoverable_lines", "lines",
					    "lines homed here whose whole replica group had failed");
	r->c_dirty = cxs_stats_counter(st, "recovery", "mn_owned_dirty_lines", "lines",
				       "of mn_lines: their recovered words changed this MN's memory (the owner had them M)");
	r->c_lost_words = cxs_stats_counter(st, "recovery", "mn_unrecoverable_words", "words",
					    "their words");
	r->v_lost = cxs_stats_vector(st, "recovery", "unrecoverable_addr", "address",
				     "lines (byte address) whose whole replica group had failed: their latest writes may be lost");
	if (!r->c_rounds || !r->c_lines || !r->c_from_lu || !r->c_from_mn || !r->c_kept ||
	    !r->c_inflated || !r->c_scanned || !r->c_lost_lines || !r->c_lost_words || !r->v_lost ||
	    !r->c_dirty) {
		free(r);
		return NULL;
	}
	cxs_nport_on_type(port, CXS_MSG_INIT_RECOV, on_init_recov, r);
	cxs_nport_on_type(port, CXS_MSG_FETCH_LATEST_RESP, on_fetch_resp, r);
	cxs_nport_on_type(port, CXS_MSG_RECOV_END, on_mn_recov_end, r);
	return r;
}

void cxs_dk_rec_mn_free(struct cxs_dk_rec_mn *r)
{
	if (!r)
		return;
	mn_reset(r);
	free(r);
}

void cxs_dk_rec_mn_failed(struct cxs_dk_rec_mn *r, uint32_t cn, cxs_time now)
{
	uint64_t bit = UINT64_C(1) << cn;
	r->live &= ~bit;
	if (r->active && (r->awaiting & bit)) {
		r->awaiting &= ~bit;
		if (!r->awaiting)
			mn_merge(r, now);
	}
}
