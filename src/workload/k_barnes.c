/*
 * k_barnes.c — Barnes–Hut n-body simulation, modelled after SPLASH-2's
 * barnes: every step a tree of the bodies is built in shared memory, then all
 * threads compute the force on their bodies by walking it (a chain of
 * dependent loads: a cell's children are known only once it is read) and
 * update their bodies. Not the original program: 2-D (a quadtree), and the
 * parallel tree build partitions space instead of locking cells (below), so
 * the tree, and with it the whole image, is deterministic.
 *
 * Bodies. size = N bodies (default 8192) of seeded random position in the unit
 * square, small random velocities, masses in [0.5, 1.5] / N. Softened gravity
 * (EPS2), G = 1, time step DT, opening criterion cell width < THETA x
 * distance to the cell's centre of mass. sqrt is libm's (IEEE correctly
 * rounded: bit-identical in the reference and the simulated run).
 *
 * Tree. The top CXS_BH_TOP levels are always cells: the root's square is cut
 * into NSUB = 4^CXS_BH_TOP subcells (numbered in tree order: quadrant at level
 * 0, then 1, ...); subcell k belongs to thread k mod T, which builds its
 * subtree alone from its own node pool: it scans every body's position,
 * inserts the bodies of its subcells in body order (a leaf is split into a
 * cell when a second body arrives), then computes its subtrees' masses and
 * centres of mass (post order, children 0..3). Thread 0 then builds the top
 * levels above the subcells (cells without bodies are left out).
 *
 * Shared layout (64-byte lines):
 *   line 0     header: N, nodes_off, bodies_off, max_nodes, pool_nodes
 *   line 1     barrier
 *   line 2     tree: root node, root box (x0, y0, width), nodes used
 *   per thread one line: bounding box of its bodies
 *   subroots   NSUB words: subcell k's subtree root + 1, or 0 if empty
 *   bodies     N lines: x, y, vx, vy, mass, ax, ay (doubles)
 *   nodes      T pools of pool_nodes = 8 N / T + 64 lines: mass, centre of
 *              mass x, y, child[4], body + 1 (a leaf) or 0 (a cell). A child
 *              word is 0 (empty) or node index + 1.
 *
 * One step:
 *   1. every thread: the bounding box of its bodies to its line;  barrier
 *   2. every thread: the root box from all lines (the same on every thread);
 *      its subcells' subtrees, summarised; their roots to subroots; barrier
 *   3. thread 0: the top CXS_BH_TOP levels and their centres of mass; barrier
 *   4. every thread, for each of its bodies: walk the tree (depth first,
 *      children in order; a node's 8 words issued together), accumulate the
 *      acceleration, then v += a DT, x += v DT (the walk reads nodes only, so
 *      bodies can be updated in the same phase);                  barrier
 * Charged compute: ~25 instructions per visited node (distance, opening
 * test, accumulation), ~15 per tree level descended, ~20 per body update.
 *
 * Deterministic: each thread checks its share of the bodies and its node
 * pool against the reference run; thread 0 the tree line and subroots.
 * Memory operations: ~8 per visited node, a few hundred nodes per body, plus
 * 2 N for the position scan and ~30 per inserted body. CXS_BH_STEPS = 2:
 * ~0.35 M a thread at N = 8192, T = 64.
 */
#include "cxlsim/kthread.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define LINE 64u
#define CXS_BH_STEPS 2u
#define CXS_BH_N_MAX (1u << 18)
#define CXS_BH_DEPTH_MAX 64u
#define CXS_BH_TOP 3u
#define NSUB 64u /* 4^CXS_BH_TOP */
#define THETA 0.6
#define EPS2 1e-6
#define DT 1e-3
#define OFF_HDR 0
#define OFF_BAR LINE
#define OFF_TREE (2 * LINE)
#define OFF_THREADS (3 * LINE)

enum { B_X, B_Y, B_VX, B_VY, B_M, B_AX, B_AY };
enum { N_M, N_CX, N_CY, N_CHILD, N_BODY = 7 };

struct bh_layout {
	uint64_t n, subroots_off, nodes_off, bodies_off, max_nodes, pool_nodes;
};

struct pool {
	uint64_t next, end; /* node ids */
};


static double unit(uint64_t *s)
{
	*s = *s * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
	return (double)(*s >> 11) / 9007199254740992.0;
}

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	uint32_t T = img->nthreads;
	if (img->size < 2 || img->size > CXS_BH_N_MAX) {
		snprintf(err, errlen, "barnes: size (bodies) must be 2..%u (got %" PRIu64 ")",
			 CXS_BH_N_MAX, img->size);
		return -1;
	}
	struct bh_layout *L = calloc(1, sizeof *L);
	if (!L) {
		snprintf(err, errlen, "barnes: out of memory");
		return -1;
	}
	L->n = img->size;
	L->pool_nodes = 8 * L->n / T + 64;
	L->max_nodes = L->pool_nodes * T;
	L->subroots_off = OFF_THREADS + (uint64_t)T * LINE;
	L->bodies_off = L->subroots_off + NSUB * 8;
	L->nodes_off = L->bodies_off + L->n * LINE;
	img->shared_bytes = L->nodes_off + L->max_nodes * LINE;
	img->private_bytes = LINE;
	img->info = L;
	img->shared = calloc(1, img->shared_bytes);
	if (!img->shared) {
		snprintf(err, errlen, "barnes: out of memory for %" PRIu64 " bytes", img->shared_bytes);
		return -1;
	}
	uint64_t hdr[5] = {L->n, L->nodes_off, L->bodies_off, L->max_nodes, L->pool_nodes};
	memcpy(img->shared + OFF_HDR, hdr, sizeof hdr);
	uint64_t s = img->seed ^ UINT64_C(0xba27e5);
	for (uint64_t i = 0; i < L->n; i++) {
		double b[7] = {unit(&s), unit(&s), 0.1 * (unit(&s) - 0.5), 0.1 * (unit(&s) - 0.5),
			       (0.5 + unit(&s)) / (double)L->n, 0, 0};
		memcpy(img->shared + L->bodies_off + i * LINE, b, sizeof b);
	}
	return 0;
}

static uint64_t node_addr(struct cxs_kt *kt, const struct bh_layout *L, uint64_t id, int w)
{
	return cxs_kt_shared(kt) + L->nodes_off + id * LINE + 8 * (uint64_t)w;
}

/* A fresh node from the thread's pool (all words written: pools are reused). */
static uint64_t new_node(struct cxs_kt *kt, const struct bh_layout *L, struct pool *P,
			 const double mcxcy[3], uint64_t body1)
{
	if (P->next == P->end)
		cxs_kt_fail(kt, "barnes: thread %u used its %" PRIu64 " tree nodes (bodies too "
			    "clustered for the pools)", cxs_kt_id(kt), L->pool_nodes);
	uint64_t id = P->next++;
	for (int w = 0; w < 3; w++)
		cxs_kt_stored(kt, node_addr(kt, L, id, w), mcxcy[w]);
	for (int q = 0; q < 4; q++)
		cxs_kt_store(kt, node_addr(kt, L, id, N_CHILD + q), 8, 0);
	cxs_kt_store(kt, node_addr(kt, L, id, N_BODY), 8, body1);
	return id;
}

static int quadrant(double x, double y, double cx, double cy)
{
	return (x >= cx) | (y >= cy) << 1;
}

static const double zero3[3] = {0, 0, 0};

/* Inserts body i (x, y, m) into the subtree of cell `cur` centred at (cx, cy). */
static void insert(struct cxs_kt *kt, const struct bh_layout *L, struct pool *P, uint64_t cur,
		   double cx, double cy, double half, uint64_t i, double x, double y, double m)
{
	for (uint32_t depth = CXS_BH_TOP;; depth++) {
		if (depth == CXS_BH_DEPTH_MAX)
			cxs_kt_fail(kt, "barnes: tree deeper than %u (body %" PRIu64
				    " at %g, %g: coincident bodies?)", CXS_BH_DEPTH_MAX, i, x, y);
		int q = quadrant(x, y, cx, cy);
		uint64_t child = cxs_kt_load(kt, node_addr(kt, L, cur, N_CHILD + q), 8);
		cxs_kt_compute(kt, 15);
		half /= 2;
		double ncx = cx + (q & 1 ? half : -half), ncy = cy + (q & 2 ? half : -half);
		if (child == 0) {
			double leaf[3] = {m, x, y};
			uint64_t id = new_node(kt, L, P, leaf, i + 1);
			cxs_kt_store(kt, node_addr(kt, L, cur, N_CHILD + q), 8, id + 1);
			return;
		}
		uint64_t c = child - 1;
		if (cxs_kt_load(kt, node_addr(kt, L, c, N_BODY), 8) != 0) {
			/* a leaf: a new cell takes its place and the leaf moves under it */
			uint32_t hl[2] = {cxs_kt_ld(kt, node_addr(kt, L, c, N_CX), 8),
					  cxs_kt_ld(kt, node_addr(kt, L, c, N_CY), 8)};
			double lx = cxs_kt_getd(kt, hl[0]), ly = cxs_kt_getd(kt, hl[1]);
			uint64_t cell = new_node(kt, L, P, zero3, 0);
			cxs_kt_store(kt, node_addr(kt, L, cell, N_CHILD + quadrant(lx, ly, ncx, ncy)), 8,
				     c + 1);
			cxs_kt_store(kt, node_addr(kt, L, cur, N_CHILD + q), 8, cell + 1);
			c = cell;
		}
		cur = c, cx = ncx, cy = ncy;
	}
}

/* The subcell of (x, y): CXS_BH_TOP quadrant steps from the root. */
static uint32_t subcell(double x, double y, const double root[3], double *cx, double *cy,
			double *half)
{
	*half = root[2] / 2, *cx = root[0] + *half, *cy = root[1] + *half;
	uint32_t k = 0;
	for (uint32_t l = 0; l < CXS_BH_TOP; l++) {
		int q = quadrant(x, y, *cx, *cy);
		k = k * 4 + (uint32_t)q;
		*half /= 2;
		*cx += q & 1 ? *half : -*half;
		*cy += q & 2 ? *half : -*half;
	}
	return k;
}

/* Mass and centre of mass of node id's subtree (post order), stored in cells. */
static void summarise(struct cxs_kt *kt, const struct bh_layout *L, uint64_t id, double out[3])
{
	uint32_t h[5];
	for (int w = 0; w < 4; w++)
		h[w] = cxs_kt_ld(kt, node_addr(kt, L, id, N_CHILD + w), 8);
	h[4] = cxs_kt_ld(kt, node_addr(kt, L, id, N_BODY), 8);
	uint64_t kids[4];
	for (int w = 0; w < 4; w++)
		kids[w] = cxs_kt_get(kt, h[w]);
	if (cxs_kt_get(kt, h[4]) != 0) { /* a leaf: its words are the body's */
		for (int w = 0; w < 3; w++)
			out[w] = cxs_kt_loadd(kt, node_addr(kt, L, id, w));
		return;
	}
	double m = 0, mx = 0, my = 0;
	for (int q = 0; q < 4; q++) {
		if (kids[q] == 0)
			continue;
		double c[3];
		summarise(kt, L, kids[q] - 1, c);
		m += c[0], mx += c[0] * c[1], my += c[0] * c[2];
	}
	out[0] = m, out[1] = mx / m, out[2] = my / m;
	cxs_kt_compute(kt, 20);
	for (int w = 0; w < 3; w++)
		cxs_kt_stored(kt, node_addr(kt, L, id, w), out[w]);
}

/* Phase 2: the thread's subcells. */
static void build_subtrees(struct cxs_kt *kt, const struct bh_layout *L, struct pool *P,
			   const double root[3])
{
	enum { BATCH = 32 };
	uint32_t t = cxs_kt_id(kt), T = cxs_kt_count(kt);
	uint64_t s = cxs_kt_shared(kt), bodies = s + L->bodies_off;
	uint64_t sub[NSUB]; /* subtree root + 1 */
	memset(sub, 0, sizeof sub);
	if (t >= NSUB)
		return;
	for (uint64_t i0 = 0; i0 < L->n; i0 += BATCH) {
		uint32_t h[BATCH][2], k = 0;
		for (uint64_t i = i0; i < L->n && k < BATCH; i++, k++) {
			h[k][0] = cxs_kt_ld(kt, bodies + i * LINE + 8 * B_X, 8);
			h[k][1] = cxs_kt_ld(kt, bodies + i * LINE + 8 * B_Y, 8);
		}
		double xy[BATCH][2]; /* all values first: insert() issues loads of its own */
		for (uint32_t b = 0; b < k; b++)
			xy[b][0] = cxs_kt_getd(kt, h[b][0]), xy[b][1] = cxs_kt_getd(kt, h[b][1]);
		for (uint32_t b = 0; b < k; b++) {
			double x = xy[b][0], y = xy[b][1], cx, cy, half;
			uint32_t sc = subcell(x, y, root, &cx, &cy, &half);
			cxs_kt_compute(kt, 4 * CXS_BH_TOP + 4);
			if (sc % T != t)
				continue;
			if (sub[sc] == 0)
				sub[sc] = new_node(kt, L, P, zero3, 0) + 1;
			double m = cxs_kt_loadd(kt, bodies + (i0 + b) * LINE + 8 * B_M);
			insert(kt, L, P, sub[sc] - 1, cx, cy, half, i0 + b, x, y, m);
		}
	}
	for (uint32_t sc = t; sc < NSUB; sc += T) {
		if (sub[sc] != 0) {
			double c[3];
			summarise(kt, L, sub[sc] - 1, c);
		}
		cxs_kt_store(kt, s + L->subroots_off + 8 * sc, 8, sub[sc]);
	}
}

/*
 * Phase 3, thread 0: the cell for subcell prefix `k` at `level` (0: the
 * root); returns its child word (0 if no body under it), out its mass and
 * centre of mass.
 */
static uint64_t build_top(struct cxs_kt *kt, const struct bh_layout *L, struct pool *P,
			  uint32_t level, uint32_t k, double out[3])
{
	uint64_t s = cxs_kt_shared(kt);
	if (level == CXS_BH_TOP) {
		uint64_t w = cxs_kt_load(kt, s + L->subroots_off + 8 * k, 8);
		if (w != 0) {
			uint32_t h[3];
			for (int i = 0; i < 3; i++)
				h[i] = cxs_kt_ld(kt, node_addr(kt, L, w - 1, i), 8);
			for (int i = 0; i < 3; i++)
				out[i] = cxs_kt_getd(kt, h[i]);
		}
		return w;
	}
	uint64_t kids[4];
	double m = 0, mx = 0, my = 0;
	for (uint32_t q = 0; q < 4; q++) {
		double c[3];
		kids[q] = build_top(kt, L, P, level + 1, k * 4 + q, c);
		if (kids[q] != 0)
			m += c[0], mx += c[0] * c[1], my += c[0] * c[2];
	}
	if (kids[0] == 0 && kids[1] == 0 && kids[2] == 0 && kids[3] == 0)
		return 0;
	out[0] = m, out[1] = mx / m, out[2] = my / m;
	cxs_kt_compute(kt, 20);
	uint64_t id = new_node(kt, L, P, out, 0);
	for (int q = 0; q < 4; q++)
		cxs_kt_store(kt, node_addr(kt, L, id, N_CHILD + q), 8, kids[q]);
	return id + 1;
}

/* The acceleration on body `self` at (x, y): a depth-first walk. */
static void force(struct cxs_kt *kt, const struct bh_layout *L, uint64_t root, uint64_t self,
		  double x, double y, double width, double acc[2], uint64_t *visits)
{
	struct {
		uint64_t id;
		double width;
	} stack[3 * CXS_BH_DEPTH_MAX + 4];
	uint32_t sp = 0;
	stack[sp].id = root, stack[sp++].width = width;
	acc[0] = acc[1] = 0;
	while (sp > 0) {
		sp--;
		uint64_t id = stack[sp].id;
		double w = stack[sp].width;
		uint32_t h[8];
		for (int k = 0; k < 8; k++)
			h[k] = cxs_kt_ld(kt, node_addr(kt, L, id, k), 8);
		double m = cxs_kt_getd(kt, h[N_M]), cx = cxs_kt_getd(kt, h[N_CX]),
		       cy = cxs_kt_getd(kt, h[N_CY]);
		uint64_t kids[4];
		for (int q = 0; q < 4; q++)
			kids[q] = cxs_kt_get(kt, h[N_CHILD + q]);
		uint64_t body1 = cxs_kt_get(kt, h[N_BODY]);
		double dx = cx - x, dy = cy - y, r2 = dx * dx + dy * dy;
		cxs_kt_compute(kt, 25);
		++*visits;
		if (body1 == self + 1)
			continue;
		if (body1 != 0 || w * w < THETA * THETA * r2) {
			double inv = 1.0 / sqrt(r2 + EPS2), inv3 = inv * inv * inv;
			acc[0] += m * dx * inv3;
			acc[1] += m * dy * inv3;
			continue;
		}
		for (int q = 3; q >= 0; q--) /* child 0 is walked first */
			if (kids[q] != 0) {
				stack[sp].id = kids[q] - 1, stack[sp++].width = w / 2;
			}
	}
}

static void run(struct cxs_kt *kt)
{
	const struct bh_layout *L = cxs_kt_image(kt)->info;
	uint64_t s = cxs_kt_shared(kt), bar = s + OFF_BAR, bodies = s + L->bodies_off;
	uint32_t t = cxs_kt_id(kt), T = cxs_kt_count(kt);
	uint64_t lo = L->n * t / T, hi = L->n * (t + 1) / T, visits = 0, nodes = 0;
	uint64_t mine = s + OFF_THREADS + (uint64_t)t * LINE;
	cxs_kt_roi_begin(kt);
	for (uint32_t step = 0; step < CXS_BH_STEPS; step++) {
		/* 1: bounding box of the thread's bodies */
		double box[4] = {1e300, 1e300, -1e300, -1e300};
		for (uint64_t i = lo; i < hi; i++) {
			uint32_t hx = cxs_kt_ld(kt, bodies + i * LINE, 8), hy = cxs_kt_ld(kt, bodies + i * LINE + 8, 8);
			double x = cxs_kt_getd(kt, hx), y = cxs_kt_getd(kt, hy);
			box[0] = x < box[0] ? x : box[0], box[1] = y < box[1] ? y : box[1];
			box[2] = x > box[2] ? x : box[2], box[3] = y > box[3] ? y : box[3];
			cxs_kt_compute(kt, 6);
		}
		for (int k = 0; k < 4; k++)
			cxs_kt_stored(kt, mine + 8 * (uint64_t)k, box[k]);
		cxs_kt_barrier(kt, bar, T);
		/* 2: the root box (every thread, the same), the subtrees */
		double all[4] = {1e300, 1e300, -1e300, -1e300};
		for (uint32_t u = 0; u < T; u++) {
			uint32_t hb[4];
			for (int k = 0; k < 4; k++)
				hb[k] = cxs_kt_ld(kt, s + OFF_THREADS + (uint64_t)u * LINE + 8 * (uint64_t)k, 8);
			for (int k = 0; k < 4; k++) {
				double v = cxs_kt_getd(kt, hb[k]);
				all[k] = k < 2 ? (v < all[k] ? v : all[k]) : (v > all[k] ? v : all[k]);
			}
		}
		double root[3] = {all[0], all[1],
				  all[2] - all[0] > all[3] - all[1] ? all[2] - all[0] : all[3] - all[1]};
		root[2] = root[2] * 1.0001 + 1e-9;
		struct pool P = {.next = L->pool_nodes * t, .end = L->pool_nodes * (t + 1)};
		build_subtrees(kt, L, &P, root);
		cxs_kt_barrier(kt, bar, T);
		/* 3: thread 0, the top levels */
		if (t == 0) {
			double c[3];
			uint64_t r = build_top(kt, L, &P, 0, 0, c);
			cxs_kt_store(kt, s + OFF_TREE, 8, r - 1);
			for (int k = 0; k < 3; k++)
				cxs_kt_stored(kt, s + OFF_TREE + 8 + 8 * (uint64_t)k, root[k]);
		}
		nodes += P.next - L->pool_nodes * t;
		cxs_kt_store(kt, mine + 32, 8, P.next - L->pool_nodes * t);
		cxs_kt_barrier(kt, bar, T);
		/* 3: forces and update */
		uint64_t root_id = cxs_kt_load(kt, s + OFF_TREE, 8);
		double width = cxs_kt_loadd(kt, s + OFF_TREE + 24);
		for (uint64_t i = lo; i < hi; i++) {
			uint64_t b = bodies + i * LINE;
			uint32_t h[4];
			for (int k = 0; k < 4; k++)
				h[k] = cxs_kt_ld(kt, b + 8 * (uint64_t)k, 8);
			double v[4];
			for (int k = 0; k < 4; k++)
				v[k] = cxs_kt_getd(kt, h[k]);
			double a[2];
			force(kt, L, root_id, i, v[0], v[1], width, a, &visits);
			v[2] += a[0] * DT, v[3] += a[1] * DT;
			v[0] += v[2] * DT, v[1] += v[3] * DT;
			cxs_kt_compute(kt, 20);
			for (int k = 0; k < 4; k++)
				cxs_kt_stored(kt, b + 8 * (uint64_t)k, v[k]);
			cxs_kt_stored(kt, b + 8 * B_AX, a[0]);
			cxs_kt_stored(kt, b + 8 * B_AY, a[1]);
		}
		cxs_kt_barrier(kt, bar, T);
	}
	cxs_kt_roi_end(kt);
	cxs_kt_check_words(kt, L->bodies_off + lo * LINE, (hi - lo) * LINE);
	cxs_kt_check_words(kt, L->nodes_off + L->pool_nodes * t * LINE, L->pool_nodes * LINE);
	cxs_kt_check_words(kt, OFF_THREADS + (uint64_t)t * LINE, LINE);
	if (t == 0) {
		cxs_kt_check_words(kt, OFF_TREE, LINE);
		cxs_kt_check_words(kt, L->subroots_off, NSUB * 8);
	}
	cxs_kt_result(kt, "tree_nodes_built", nodes);
	cxs_kt_result(kt, "bodies", (hi - lo) * CXS_BH_STEPS);
	cxs_kt_result(kt, "nodes_visited", visits);
}

const struct cxs_kernel cxs_kernel_barnes = {
	.name = "barnes",
	.doc = "modelled after SPLASH-2's barnes: 2-D Barnes-Hut of size bodies, quadtree built "
	       "in CXL memory each step, parallel force walks (dependent loads)",
	.default_size = 8192,
	.deterministic = true,
	.build = build,
	.run = run,
};
