/*
 * image.c — the coherent image of CXL memory as the nodes' own parts, so that
 * any run can write it, across any number of ranks: the recovered image at
 * the end of a DIKTAMO recovery, and a snapshot at image.snapshot_at
 * (--snapshot-at TIME).
 *
 * The coherent image is, per word, what a load would return: a live CN's
 * dirty copy (M, or its write-back in flight), else a live CN's shared copy,
 * else the home MN's memory. No node sees all of it, so each writes its part
 * (component image_<name>):
 *   CN   every word of the lines it holds, with the way it holds them
 *        (part_kind: 2 dirty, 1 shared);
 *   MN   every word of the lines its memory has written contents for
 *        (part_kind 0), and the lines whose data is in flight to it from a
 *        recalled owner at that instant (part_transit: no value now).
 * analysis/cxlsim-imagediff assembles the parts (dirty > shared > memory) and
 * compares two runs' images word for word. Lines never written since the
 * image was loaded appear in no part (their value is the workload's image).
 *
 * When. The recovered image is taken by every live CN when RECOV_END reaches
 * it, before its cores resume, and by every MN when RECOV_END reaches it: the
 * cores have been paused since INTERRUPT and every MN has written its
 * recovered lines, so nothing changes a word between those moments but the
 * completion of stores issued before the pause. A snapshot is taken by every
 * node at the same simulated time (an event of its own at that time).
 * Either way the parts depend only on the simulated state, so the same run
 * gives the same parts at any rank count: a --kill run's recovered image can
 * be compared with the --fail run's at np = 1, whose oracle checked it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memsys_priv.h"

struct part {
	struct cxs_vec *addr, *value, *kind;
	bool oom;
};

static int part_open(struct cxs_lp *lp, const char *name, struct part *p)
{
	char comp[32];
	struct cxs_stats *st = cxs_lp_stats(lp);
	snprintf(comp, sizeof comp, "image_%s", name);
	p->addr = cxs_stats_vector(st, comp, "part_addr", "address",
				   "the words of this node's part of the coherent image (image.c)");
	p->value = cxs_stats_vector(st, comp, "part_value", "value", "their values");
	p->kind = cxs_stats_vector(st, comp, "part_kind", "enum",
				   "how this node has each: 2 a dirty copy, 1 a shared copy, 0 its memory");
	uint64_t *t = cxs_stats_counter(st, comp, "time_ps", "ps", "when this node took its part");
	if (!p->addr || !p->value || !p->kind || !t)
		return -1;
	p->addr->len = p->value->len = p->kind->len = 0; /* a later one replaces an earlier one */
	*t = cxs_now(lp);
	return 0;
}

static void part_line(struct part *p, uint64_t line, const uint8_t *data, uint64_t kind)
{
	for (uint32_t w = 0; w < CXS_LINE_BYTES / 8; w++) {
		uint64_t v;
		memcpy(&v, data + 8 * w, 8);
		p->oom |= cxs_vec_push(p->addr, (line << CXS_LINE_SHIFT) + 8 * w) != 0 ||
			  cxs_vec_push(p->value, v) != 0 || cxs_vec_push(p->kind, kind) != 0;
	}
}

static void cn_line(void *ctx, uint64_t line, enum cxs_cn_hold how, const uint8_t *data,
		    uint8_t unsaved)
{
	(void)unsaved;
	if (!data)
		return;
	if (how == CXS_HOLD_M || how == CXS_HOLD_WRITEBACK)
		part_line(ctx, line, data, 2);
	else if (how == CXS_HOLD_S)
		part_line(ctx, line, data, 1);
}

void image_cn_part(struct cn_node *cn, const char *name)
{
	struct part p = {0};
	if (!cxs_node_alive(cn->lp, cxs_lp_id(cn->lp)))
		return;
	if (part_open(cn->lp, name, &p) != 0) {
		cxs_lp_fail(cn->lp, 2, "node %u: out of memory for its image part", cxs_lp_id(cn->lp));
		return;
	}
	cxs_cn_lines_held(cn->agent, cn_line, &p);
	if (p.oom)
		cxs_lp_fail(cn->lp, 2, "node %u: out of memory for its image part", cxs_lp_id(cn->lp));
}

void image_mn_part(struct cxs_lp *lp, const struct cxs_home *h, const char *name)
{
	struct part p = {0};
	char comp[32];
	snprintf(comp, sizeof comp, "image_%s", name);
	struct cxs_vec *transit = cxs_stats_vector(cxs_lp_stats(lp), comp, "part_transit", "address",
						   "lines whose data was in flight to this home (no value at that instant)");
	if (!transit || part_open(lp, name, &p) != 0) {
		cxs_lp_fail(lp, 2, "node %u: out of memory for its image part", cxs_lp_id(lp));
		return;
	}
	transit->len = 0;
	/* Memory contents in creation order (deterministic). */
	for (size_t i = 0; i < h->mem.n; i++)
		part_line(&p, cxs_line_map_key_at(&h->mem, i), cxs_line_map_at(&h->mem, i), 0);
	for (size_t i = 0; i < h->nbusy; i++) {
		const struct cxs_home_entry *e = cxs_home_entry(h, h->busy_lines[i]);
		if (e && e->busy == CXS_HB_RECALL && !e->recover)
			p.oom |= cxs_vec_push(transit, h->busy_lines[i] << CXS_LINE_SHIFT) != 0;
	}
	if (p.oom)
		cxs_lp_fail(lp, 2, "node %u: out of memory for its image part", cxs_lp_id(lp));
}
