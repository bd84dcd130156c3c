/*
 * exact_check.c — the exact coherence checker (tester.exact_check) and the
 * golden-image oracle (diktamo.oracle), two uses of one shadow of CXL memory.
 *
 * The random tester's own checks are local to a core and cannot see a stale
 * copy that keeps returning an old value; this one can: with every CN in one
 * process, events are performed in global simulated-time order, so a shadow
 * of every CXL line, updated when a write is performed, holds exactly the
 * value a load performed now must see. Results do not depend on the rank
 * count, so checking the np = 1 run checks the run every other rank count
 * reproduces. It reaches across nodes, which models must not do: it is a
 * checker, refused unless all CNs share a process (it counts the CNs
 * initialised here and fails the run on the first access otherwise).
 *
 * The oracle. The shadow holds every performed write: the committed image
 * (a dead CN's writes only those before T_f: it performs nothing after). The
 * coherent image is what a load would return now: a live CN's copy in M or
 * its write-back in flight, else a live CN's S copy (after a recall to S the
 * home writes memory only when the data arrives), else the MN's memory. The
 * check compares the two over every line ever written: after recovery (the
 * CM, when every MN has answered, before the cores resume) or, without
 * recovery (WB, WT), just after the switch has reported the failure; and at
 * the end of every run. Under DIKTAMO the images must be identical — no
 * committed store lost; under WB the check reports the lost words. A line
 * whose home waits for a recalled owner's data in flight has no coherent
 * value at that instant: it is skipped and counted (image/in_transit_lines).
 * The images and the differences go to the checking node's output
 * (component image), one entry per 8-byte word of the written lines.
 *
 * State: the shadow map, owned by the model's instance (struct memsys), not
 * by any process-wide variable.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memsys_priv.h"

static const struct cxs_cfg_key exact_keys[] = {
	{"tester", "exact_check", CXS_CFG_BOOL, "false", "Also check every load of CXL memory against the latest write performed before it in simulated time (a shadow memory; needs every CN in one process, e.g. -np 1).", NULL, 0, 0},
	{"diktamo", "oracle", CXS_CFG_BOOL, "false", "The golden-image oracle: keep the committed image of CXL memory and compare the coherent image with it after a CN failure's recovery (or detection, under wb and wt) and at the end; a difference fails the run naming the words (any protocol; needs every node in one process, e.g. -np 1 with --fail).", NULL, 0, 0},
};
const struct cxs_key_table memsys_exact_key_table = CXS_KEY_TABLE(exact_keys);

struct shadow_line {
	uint64_t line;
	uint8_t data[CXS_LINE_BYTES];
	uint32_t writer;
	cxs_time written;
};

int exact_configure(const struct cxs_config *cfg, struct memsys *M, char *err, size_t errlen)
{
	bool loads = cxs_config_bool(cfg, "tester", "exact_check");
	bool oracle = cxs_config_bool(cfg, "diktamo", "oracle");
	if (!loads && !oracle)
		return 0;
	struct exact_check *x = calloc(1, sizeof *x);
	M->exact = x;
	if (!x || cxs_line_map_init(&x->shadow, sizeof(struct shadow_line)) != 0 ||
	    !(x->cn = calloc(M->cns, sizeof *x->cn)) || !(x->mn = calloc(M->mns, sizeof *x->mn))) {
		snprintf(err, errlen, "out of memory for the shadow of CXL memory");
		return -1;
	}
	x->loads = loads;
	x->oracle = oracle;
	return 0;
}

void exact_release(struct exact_check *x)
{
	if (!x)
		return;
	cxs_line_map_free(&x->shadow);
	free(x->cn);
	free(x->mn);
	free(x);
}

void exact_cn_init(struct exact_check *x, struct cn_node *cn)
{
	x->cn[cxs_lp_id(cn->lp)] = cn;
	x->cns_here++;
}

void exact_mn_init(struct exact_check *x, struct mn_node *mn, uint32_t index)
{
	x->mn[index] = mn;
	x->mns_here++;
}

void exact_perform(struct cn_node *cn, cxs_time t, const struct cxs_mem_req *r, uint64_t value,
		   int is_write)
{
	const struct memsys *M = cn->M;
	struct exact_check *x = M->exact;
	if (!x || cxs_addr_map_lookup(&M->map, r->addr).kind != CXS_ADDR_CXL)
		return;
	if (x->cns_here != M->cns) {
		cxs_lp_fail(cn->lp, 2,
			    "tester.exact_check needs every CN in one process (%u of %u here): run "
			    "with -np 1 or map all CNs to one rank",
			    x->cns_here, M->cns);
		return;
	}
	uint8_t size = r->op == CXS_OP_STORE_STAMP ? 8 : r->size;
	uint32_t off = (uint32_t)(r->addr & (CXS_LINE_BYTES - 1));
	int created = 0;
	struct shadow_line *sl = cxs_line_map_get(&x->shadow, r->addr >> CXS_LINE_SHIFT, &created);
	if (!sl) {
		cxs_lp_fail(cn->lp, 2, "out of memory in tester.exact_check");
		return;
	}
	if (created) {
		sl->line = r->addr >> CXS_LINE_SHIFT;
		memsys_initial_line(M, sl->line, sl->data);
	}
	if (!is_write && !x->loads)
		return;
	uint64_t want = 0;
	for (uint8_t i = 0; i < size; i++)
		want |= (uint64_t)sl->data[off + i] << (8 * i);
	if (is_write) {
		for (uint8_t i = 0; i < size; i++)
			sl->data[off + i] = (uint8_t)(value >> (8 * i));
		sl->writer = cxs_lp_id(cn->lp);
		sl->written = t;
	} else if (value != want) {
		cxs_lp_fail(cn->lp, 5,
			    "coherence violation (exact check): node %u core %u load of 0x%" PRIx64
			    " performed at %" PRIu64 " ps returned 0x%" PRIx64
			    ", but the latest write before it (node %u at %" PRIu64 " ps) left 0x%" PRIx64
			    "; the CN's copy is stale (state %s)",
			    cxs_lp_id(cn->lp), r->core, r->addr, t, value, sl->writer, sl->written, want,
			    cxs_cn_line_state(cn->agent, r->addr >> CXS_LINE_SHIFT));
	}
}

/* ---- the golden-image oracle ---------------------------------------------------------- */

void oracle_finalize(struct cxs_lp *lp, const struct memsys *M)
{
	struct exact_check *x = M->exact;
	if (!x || !x->oracle || x->end_checked || !cxs_node_alive(lp, cxs_lp_id(lp)))
		return;
	x->end_checked = true;
	oracle_check(lp, M, "at the end");
}

/* A live CN's copies: dirty (M, write-back in flight) and shared, by line. */
struct copies {
	struct cxs_line_map dirty, shared; /* line -> struct held_copy */
	bool oom;
};
struct held_copy {
	uint8_t data[CXS_LINE_BYTES];
	uint32_t cn;
};

static void note_copy(void *ctx, uint64_t line, enum cxs_cn_hold how, const uint8_t *data,
		      uint8_t unsaved)
{
	struct copies *c = ctx;
	(void)unsaved;
	struct cxs_line_map *m = how == CXS_HOLD_M || how == CXS_HOLD_WRITEBACK ? &c->dirty
				 : how == CXS_HOLD_S ? &c->shared : NULL;
	if (!m || !data)
		return;
	struct held_copy *h = cxs_line_map_get(m, line, NULL);
	if (!h) {
		c->oom = true;
		return;
	}
	memcpy(h->data, data, CXS_LINE_BYTES);
}

/* The coherent value of a line now, into out: 0, or 1 (in transit: no value now). */
static int coherent_line(const struct memsys *M, const struct exact_check *x,
			 const struct copies *c, uint64_t line, uint8_t out[CXS_LINE_BYTES])
{
	const struct held_copy *h = cxs_line_map_find(&c->dirty, line);
	if (!h)
		h = cxs_line_map_find(&c->shared, line);
	if (h) {
		memcpy(out, h->data, CXS_LINE_BYTES);
		return 0;
	}
	struct cxs_addr_target t = cxs_addr_map_lookup(&M->map, line << CXS_LINE_SHIFT);
	const struct cxs_home *home = mn_home(x->mn[t.mn]);
	const struct cxs_home_entry *e = cxs_home_entry(home, line);
	if (e && e->busy == CXS_HB_RECALL && !e->recover)
		return 1; /* the owner's data is on its way to the home */
	cxs_home_read(home, line, out);
	return 0;
}

void oracle_check(struct cxs_lp *lp, const struct memsys *M, const char *when)
{
	struct exact_check *x = M->exact;
	if (!x || !x->oracle)
		return;
	if (x->cns_here != M->cns || x->mns_here != M->mns) {
		cxs_lp_fail(lp, 2, "diktamo.oracle needs every node in one process (%u of %u CNs, %u "
			    "of %u MNs here): run with -np 1 (and --fail for failures)",
			    x->cns_here, M->cns, x->mns_here, M->mns);
		return;
	}
	struct copies c = {0};
	if (cxs_line_map_init(&c.dirty, sizeof(struct held_copy)) != 0 ||
	    cxs_line_map_init(&c.shared, sizeof(struct held_copy)) != 0) {
		cxs_lp_fail(lp, 2, "out of memory in diktamo.oracle");
		return;
	}
	for (uint32_t n = 0; n < M->cns; n++)
		if (cxs_node_alive(lp, n))
			cxs_cn_lines_held(x->cn[n]->agent, note_copy, &c);
	struct cxs_stats *st = cxs_lp_stats(lp);
	struct cxs_vec *v_addr = cxs_stats_vector(st, "image", "addr", "address",
						  "every 8-byte word of the CXL lines ever written (at the last golden-image check)");
	struct cxs_vec *v_val = cxs_stats_vector(st, "image", "value", "value",
						 "its coherent value: a live CN's dirty or shared copy, else its MN's memory");
	struct cxs_vec *v_want = cxs_stats_vector(st, "image", "oracle_value", "value",
						  "its committed value (the oracle's: every store as it was performed)");
	struct cxs_vec *v_writer = cxs_stats_vector(st, "image", "writer", "node",
						    "the node that last wrote the word's line");
	struct cxs_vec *v_time = cxs_stats_vector(st, "image", "written_ps", "ps",
						  "when it wrote it");
	struct cxs_vec *d_addr = cxs_stats_vector(st, "image", "diff_addr", "address",
						  "words whose coherent value differs from the committed one");
	struct cxs_vec *d_writer = cxs_stats_vector(st, "image", "diff_writer", "node",
						    "the last writer of each one's line");
	struct cxs_vec *d_time = cxs_stats_vector(st, "image", "diff_written_ps", "ps",
						  "and when it wrote it");
	uint64_t *c_words = cxs_stats_counter(st, "image", "words", "words",
					      "words compared at the last golden-image check");
	uint64_t *c_diff = cxs_stats_counter(st, "image", "diff_words", "words",
					     "words that differed (lost committed stores, or worse)");
	uint64_t *c_transit = cxs_stats_counter(st, "image", "in_transit_lines", "lines",
						"lines skipped: their data was in flight to the home");
	uint64_t *c_checks = cxs_stats_counter(st, "image", "checks", "checks",
					       "golden-image checks run on this node");
	if (!v_addr || !v_val || !v_want || !v_writer || !v_time || !d_addr || !d_writer || !d_time || !c_words ||
	    !c_diff || !c_transit || !c_checks || c.oom) {
		cxs_lp_fail(lp, 2, "out of memory in diktamo.oracle");
		goto out;
	}
	/* This check's image replaces the previous one's. */
	v_addr->len = v_val->len = v_want->len = v_writer->len = v_time->len = 0;
	d_addr->len = d_writer->len = d_time->len = 0;
	*c_words = *c_diff = *c_transit = 0;
	++*c_checks;
	char first[256] = "";
	for (size_t i = 0; i < x->shadow.n; i++) {
		const struct shadow_line *sl = cxs_line_map_at(&x->shadow, i);
		uint64_t line = sl->line;
		uint8_t now[CXS_LINE_BYTES];
		if (coherent_line(M, x, &c, line, now)) {
			++*c_transit;
			continue;
		}
		for (uint32_t w = 0; w < CXS_LINE_BYTES / 8; w++) {
			uint64_t got, want, addr = (line << CXS_LINE_SHIFT) + 8 * w;
			memcpy(&got, now + 8 * w, 8);
			memcpy(&want, sl->data + 8 * w, 8);
			int oom = cxs_vec_push(v_addr, addr) | cxs_vec_push(v_val, got) |
				  cxs_vec_push(v_want, want) | cxs_vec_push(v_writer, sl->writer) |
				  cxs_vec_push(v_time, sl->written);
			++*c_words;
			if (got != want) {
				if (!*c_diff)
					snprintf(first, sizeof first,
						 "%#" PRIx64 " is %#" PRIx64 ", but node %u committed %#"
						 PRIx64 " to its line at %" PRIu64 " ps",
						 addr, got, sl->writer, want, sl->written);
				++*c_diff;
				oom |= cxs_vec_push(d_addr, addr) | cxs_vec_push(d_writer, sl->writer) |
				       cxs_vec_push(d_time, sl->written);
			}
			if (oom) {
				cxs_lp_fail(lp, 2, "out of memory in diktamo.oracle");
				goto out;
			}
		}
	}
	if (*c_diff && !x->oracle_failed) {
		x->oracle_failed = true;
		cxs_lp_fail(lp, 5,
			    "golden image %s: %" PRIu64 " of %" PRIu64 " written words differ from the "
			    "committed image (image/diff_*); first: %s",
			    when, *c_diff, *c_words, first);
	} else if (!*c_diff) {
		cxs_log(CXS_LOG_INFO, cxs_now(lp),
			"golden image %s: identical (%" PRIu64 " words, %" PRIu64 " lines in transit)",
			when, *c_words, *c_transit);
	}
out:
	cxs_line_map_free(&c.dirty);
	cxs_line_map_free(&c.shared);
}
