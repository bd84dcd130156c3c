/*
 * k_range2d.c — 2-D range counting, modelled after PBBS's rangeQuery2d
 * (CAMP's example of a latency-bound workload whose interleave curve is a
 * line): size points in the unit square and 64 x T axis-aligned query
 * rectangles; each query counts the points inside by walking a kd-tree.
 * Not the original program: a kd-tree (median splits alternating x and y,
 * leaves of up to 8 points) instead of PBBS's range tree.
 *
 * Memory behaviour: each node visit is a dependent load (the child to visit
 * next depends on the split just loaded); two subtrees overlap when the
 * rectangle straddles the split, so a walk has a few chains in flight; the
 * leaves' points are short sequential reads. Footprint 32 B a node and 8 B
 * a point.
 *
 * Shared layout: barrier line, nodes (32 B: split, dim, left, right, lo, hi,
 * pad), points (x, y as u32 fixed point, in leaf order), queries (x0, y0,
 * x1, y1 as u32), counts u32[queries]. Result: the counts.
 */
#include "cxlsim/kthread.h"

#include "kinfo_priv.h"
#include "klayout_priv.h"

#define STACK 64u

struct pt {
	uint32_t x, y;
};

static int cmp_x(const void *a, const void *b)
{
	const struct pt *p = a, *q = b;
	return p->x < q->x ? -1 : p->x > q->x ? 1 : (p->y > q->y) - (p->y < q->y);
}

static int cmp_y(const void *a, const void *b)
{
	const struct pt *p = a, *q = b;
	return p->y < q->y ? -1 : p->y > q->y ? 1 : (p->x > q->x) - (p->x < q->x);
}

/* Builds the subtree over pts[lo, hi) as node *next; returns its id. */
static uint32_t build_node(uint8_t *img, const struct rq_info *I, struct pt *pts, uint32_t lo,
			   uint32_t hi, uint32_t dim, uint32_t *next)
{
	uint32_t id = (*next)++;
	uint64_t o = I->node_off + (uint64_t)id * RQ_NODE_BYTES;
	uint32_t left = UINT32_MAX, right = UINT32_MAX, split = 0;
	if (hi - lo > RQ_LEAF) {
		qsort(pts + lo, hi - lo, sizeof *pts, dim ? cmp_y : cmp_x);
		uint32_t mid = lo + (hi - lo) / 2;
		split = dim ? pts[mid].y : pts[mid].x; /* left <= split <= right */
		left = build_node(img, I, pts, lo, mid, 1 - dim, next);
		right = build_node(img, I, pts, mid, hi, 1 - dim, next);
	}
	kput32(img, o, split);
	kput32(img, o + 4, dim);
	kput32(img, o + 8, left);
	kput32(img, o + 12, right);
	kput32(img, o + 16, lo);
	kput32(img, o + 20, hi);
	return id;
}

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	if (!ksize_ok(img, "range2d", "points", 16, UINT64_C(1) << 24, err, errlen))
		return -1;
	struct rq_info *I = calloc(1, sizeof *I);
	struct pt *pts = malloc(img->size * sizeof *pts);
	if (!I || !pts) {
		free(I), free(pts);
		snprintf(err, errlen, "range2d: out of memory");
		return -1;
	}
	img->info = I;
	I->npts = img->size;
	I->nq = (uint64_t)RQ_QUERIES_PER_THREAD * img->nthreads;
	I->nnodes = 2 * (I->npts / RQ_LEAF + 1) * 2;
	uint64_t off = 0;
	I->bar_off = klay_take(&off, KL_LINE);
	I->node_off = klay_take(&off, I->nnodes * RQ_NODE_BYTES);
	I->pt_off = klay_take(&off, 8 * I->npts);
	I->q_off = klay_take(&off, 16 * I->nq);
	I->res_off = klay_take(&off, 4 * I->nq);
	img->private_bytes = KL_LINE;
	if (klay_alloc(img, "range2d", off, err, errlen) != 0) {
		free(pts);
		return -1;
	}
	uint64_t s = img->seed ^ UINT64_C(0x2d2d);
	for (uint64_t i = 0; i < I->npts; i++)
		pts[i] = (struct pt){(uint32_t)(krand(&s) >> 40), (uint32_t)(krand(&s) >> 40)};
	uint32_t next = 0;
	build_node(img->shared, I, pts, 0, (uint32_t)I->npts, 0, &next);
	for (uint64_t i = 0; i < I->npts; i++) {
		kput32(img->shared, I->pt_off + 8 * i, pts[i].x);
		kput32(img->shared, I->pt_off + 8 * i + 4, pts[i].y);
	}
	free(pts);
	/* Rectangles of 1/64 .. 1/16 of the side: ~0.02-0.4 % of the points each. */
	for (uint64_t q = 0; q < I->nq; q++) {
		uint32_t w = (uint32_t)((1u << 18) + krand(&s) % (3u << 18));
		uint32_t h = (uint32_t)((1u << 18) + krand(&s) % (3u << 18));
		uint32_t x0 = (uint32_t)(krand(&s) % ((1u << 24) - w)), y0 = (uint32_t)(krand(&s) % ((1u << 24) - h));
		kput32(img->shared, I->q_off + 16 * q, x0);
		kput32(img->shared, I->q_off + 16 * q + 4, y0);
		kput32(img->shared, I->q_off + 16 * q + 8, x0 + w);
		kput32(img->shared, I->q_off + 16 * q + 12, y0 + h);
	}
	return 0;
}

/* Points of [x0, x1) x [y0, y1) under the tree: an explicit stack of nodes. */
static uint32_t query(struct cxs_kt *kt, const struct rq_info *I, const uint32_t r[4])
{
	uint32_t stack[STACK], sp = 0, count = 0;
	stack[sp++] = 0;
	while (sp) {
		/* Visit up to 4 stacked nodes at once: their loads overlap, as an OoO core's would. */
		uint32_t n = sp < 4 ? sp : 4, id[4], h[4][5];
		for (uint32_t k = 0; k < n; k++) {
			id[k] = stack[--sp];
			for (uint32_t f = 0; f < 5; f++)
				h[k][f] = cxs_kt_ld(kt, ksh(kt, I->node_off + (uint64_t)id[k] * RQ_NODE_BYTES + 4 * f), 4);
		}
		for (uint32_t k = 0; k < n; k++) {
			uint32_t split = (uint32_t)cxs_kt_get(kt, h[k][0]), dim = (uint32_t)cxs_kt_get(kt, h[k][1]);
			uint32_t left = (uint32_t)cxs_kt_get(kt, h[k][2]), right = (uint32_t)cxs_kt_get(kt, h[k][3]);
			uint32_t lo = (uint32_t)cxs_kt_get(kt, h[k][4]);
			cxs_kt_compute(kt, 6);
			if (left == UINT32_MAX) {
				uint32_t hi = kld32(kt, I->node_off + (uint64_t)id[k] * RQ_NODE_BYTES + 20), hp[2 * RQ_LEAF];
				for (uint32_t p = lo; p < hi; p++)
					hp[p - lo] = cxs_kt_ld(kt, ksh(kt, I->pt_off + 8 * (uint64_t)p), 8);
				for (uint32_t p = lo; p < hi; p++) {
					uint64_t xy = cxs_kt_get(kt, hp[p - lo]);
					uint32_t x = (uint32_t)xy, y = (uint32_t)(xy >> 32);
					count += x >= r[0] && x < r[2] && y >= r[1] && y < r[3];
					cxs_kt_compute(kt, 5);
				}
				continue;
			}
			uint32_t a = dim ? r[1] : r[0], b = dim ? r[3] : r[2];
			/* left holds coordinates <= split, right >= split; the range is [a, b) */
			if (sp + 2 > STACK)
				cxs_kt_fail(kt, "range2d: kd-tree deeper than the walk's stack of %u", STACK);
			if (a <= split)
				stack[sp++] = left;
			if (b > split)
				stack[sp++] = right;
		}
	}
	return count;
}

static void run(struct cxs_kt *kt)
{
	const struct rq_info *I = cxs_kt_image(kt)->info;
	uint64_t lo, hi;
	kshare(I->nq, cxs_kt_id(kt), cxs_kt_count(kt), &lo, &hi);
	cxs_kt_roi_begin(kt);
	for (uint64_t q = lo; q < hi; q++) {
		uint32_t h[4], r[4];
		for (uint32_t f = 0; f < 4; f++)
			h[f] = cxs_kt_ld(kt, ksh(kt, I->q_off + 16 * q + 4 * f), 4);
		for (uint32_t f = 0; f < 4; f++)
			r[f] = (uint32_t)cxs_kt_get(kt, h[f]);
		kst32(kt, I->res_off + 4 * q, query(kt, I, r));
	}
	cxs_kt_roi_end(kt);
	cxs_kt_barrier(kt, ksh(kt, I->bar_off), cxs_kt_count(kt)); /* all results written */
	kcheck_share(kt, I->res_off, 4 * I->nq);
}

const struct cxs_kernel cxs_kernel_range2d = {
	.name = "range2d",
	.doc = "modelled after PBBS's rangeQuery2d: 64 rectangle counts a thread over a kd-tree of size points (dependent node loads)",
	.default_size = 262144,
	.deterministic = true,
	.build = build,
	.run = run,
};
