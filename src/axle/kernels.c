/*
 * kernels.c — the workloads of AXLE's Table IV as real computations on
 * generated data, split the way the paper offloads them (Table I):
 *
 *   workload   CCM partition (one µthread)        result          host task
 *   KNN        one row: squared L2 distance       4 B / row       top-k merge of a slot
 *   SSSP       8 vertices: pull relaxation        4 B / vertex    min, frontier, write-back
 *   PageRank   8 vertices: pull rank sum          4 B / vertex    rank update, write-back
 *   SSB Q1.x   256 rows: filter (boolean marks)   1 bit / row     revenue sum over marks
 *   LLM        (head, 32 tokens): partial         hd+2 floats     per head: softmax merge,
 *              softmax attention (decode step)    (padded to 64)  out-projection slice
 *   DLRM       one bag: sparse-length sum         dim floats      top-layer dot product
 *
 * Every round's host tasks are followed by an epilogue on one host thread
 * (the frontier test of SSSP, the final reductions). Graph rounds are
 * Jacobi-style: round r reads the values written back after round r-1, so
 * the CCM's copy of the vertex values is updated only by the host's CXL.mem
 * write-backs (real bytes, src/axle/host.c), never shared in memory.
 *
 * The check (axle_wl_check) recomputes each workload on the host alone with
 * the same per-element functions and the same summation order, and requires
 * bit-for-bit equality with what came back through the offload pipeline: it
 * proves that every result byte crossed the rings, in the right slot, once.
 *
 * Inputs come from a splitmix64 stream seeded by axle.seed; the largest
 * tables (DLRM's embeddings, LLM's out-projection) are not stored but are a
 * hash of their coordinates, so Table IV's full sizes need no gigabytes.
 * Graphs are power-law: an edge's source is V * u^3 for uniform u (low ids
 * are hubs), its destination uniform, its weight 1..16.
 *
 * Cost model. A kernel returns the instructions it executed, counted from
 * its inner loop (the constants below); the device charges them at one
 * instruction per cycle per processing unit, shared by its µthreads. Every
 * memory word a kernel reads is reported through `touch` with its address
 * in the node's memory, and the device charges each distinct 64-byte line to
 * its DRAM model, so a kernel is bound by whichever is slower, its issue or
 * its DRAM.
 *
 * Vectors. M²NDP's µthreads run RISC-V code with the vector extension and
 * the host is an x86 server core, so a loop over contiguous floats is
 * counted in vector instructions on both sides. The paper gives no vector
 * width; we assume 256 bits on both (VLANES = 8 fp32 lanes, BLANES = 32
 * byte lanes), one vector instruction issued per cycle like a scalar one.
 * Loops over irregular data (graph edges, a sorted top-k list, a hash
 * probe) stay scalar. Per workload (Table I's split), what each side does:
 *
 *   KNN  CCM: a distance is dim multiply-adds: per 8 dims a vector load of
 *        the row, one of the query (2048 floats do not fit 32 registers),
 *        a subtract and a multiply-add (4), then a horizontal sum, store and
 *        loop per row (12). At 4 instructions per 32 B of row a unit needs
 *        8 B/cycle, below its 19 B/cycle share of the 16 DDR5 channels, so
 *        the distance is issue-bound, not bandwidth-bound, at this width.
 *        Host: the query has one top-k list (the selection of §III-B:
 *        "the host receives #rows distances and selects the top K"); every
 *        candidate distance is loaded and compared with the list's worst
 *        (4), then merged into the list by re-sorting it, k·⌈log2 k⌉
 *        compare-and-swap steps of 2 instructions (k = 10: 80). The list is
 *        shared, so host tasks update it one at a time (struct
 *        axle_round.serial: a lock). Host time is rows x 84 instructions,
 *        CCM time dim x rows / 2 instructions over 16 units: the host's
 *        share grows with rows per dimension, as in Fig. 4 and 5a. (With a
 *        list per host µthread merged at the end, the host would be ~10 %
 *        of RP in all three shapes.)
 *   graphs  CCM: per in-edge a scalar gather (load edge, load the source's
 *        value, add, compare, select: 5), per vertex 6; bound by the random
 *        DRAM reads of the sources' values. Host: per vertex 8 (compare or
 *        rank update, frontier mark, store) and the write-back. The result
 *        is 4 B per vertex, about 1 MB a round, loaded line by line in RP and
 *        BS: that is the data movement.
 *   SSB  The CCM does only the filter scan of Q1.x's lineorder predicates
 *        (lo_discount and lo_quantity ranges), 32 rows per byte vector: two
 *        loads, three or four compares, three ands, a mask store, loop (10
 *        per 32 rows). The host does the rest of the query (M²NDP offloads
 *        the boolean marking only): it scans the bitmap (3 per 64-bit word),
 *        and per marked row finds the bit, loads lo_orderdate and probes
 *        the date dimension's hash table (hash, bucket load, key compare,
 *        d_year / d_yearmonthnum load and compare: 13), and per row that
 *        joins, loads lo_extendedprice and lo_discount, multiplies and adds
 *        (4). Those three columns are read from host memory (a model
 *        simplification: in the paper the whole table is in CXL memory).
 *   LLM  Decode step of one OPT-2.7B layer. CCM: per (head, 32-token chunk)
 *        partial attention, per token q·k and p·v over hd = 80 dims as
 *        vector loads and multiply-adds (4 per 8 dims; q and the
 *        accumulator stay in registers) plus 26 scalar (horizontal sum,
 *        scale, running max, exp). Host: per head the softmax merge of the
 *        chunks (per chunk an exp and a rescaled vector add) and the
 *        head's slice of the out-projection, Hd rows of hd/8 vector
 *        multiply-adds (2 each) plus 7 per row; the epilogue adds the
 *        residual, then runs the layer's MLP (fc1 Hd -> 4Hd, ReLU, fc2 4Hd ->
 *        Hd, residual), which the paper keeps on the host (§V-B). The MLP
 *        needs every head's output, so it cannot start before the last
 *        result: it runs on all host units (its instructions divided among
 *        them) and streams its 2 x 4Hd x Hd fp32 weights (210 MB at full
 *        size) from host DRAM, whichever takes longer.
 *   DLRM CCM: per bag, per pooled row an index load and address (3) and
 *        dim/8 vector load-and-adds (2 each); 80 x 256 floats a bag. Host:
 *        a dot product with the top layer (dim/8 x 2) and a sigmoid (26).
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "axle_priv.h"

#define REGION(n) ((uint64_t)(n) << 40) /* separate arrays in a node's address space */
#define INF_DIST UINT32_MAX
#define LLM_CHUNK 32   /* tokens per CCM partition */
#define GRAPH_VPT 8    /* vertices per CCM partition (32 bytes of result) */
#define SSB_RPT 256    /* rows per CCM partition (32 bytes of marks) */
#define PR_DAMPING 0.85f

/* Instructions per element of each kernel's inner loop (see the header). */
#define VLANES 8  /* fp32 lanes of a 256-bit vector */
#define BLANES 32 /* byte lanes */
enum {
	KNN_CCM_PER_VEC = 4,       /* load row, load query, subtract, multiply-add */
	KNN_CCM_PER_ROW = 12,      /* horizontal sum, store, loop */
	KNN_HOST_PER_ROW = 4,      /* load, compare with the list's worst, loop */
	KNN_HOST_PER_CMP = 2,      /* compare-and-swap of the top-k re-sort */
	GRAPH_CCM_PER_EDGE = 5,    /* load edge, load value, add, compare, select */
	GRAPH_CCM_PER_VERTEX = 6,
	GRAPH_HOST_PER_VERTEX = 8, /* compare/update, frontier mark, store */
	SSB_CCM_PER_VEC = 10,      /* per 32 rows: 2 loads, compares, ands, mask store, loop */
	SSB_CCM_PER_TASK = 6,
	SSB_HOST_PER_WORD = 3,     /* load a bitmap word, test, loop */
	SSB_HOST_PER_MARK = 13,    /* find bit, load orderdate, hash probe of the date dimension */
	SSB_HOST_PER_PASS = 4,     /* load price and discount, multiply, add */
	LLM_CCM_PER_VEC = 4,       /* per 8 dims of a token: load k, fma; load v, fma */
	LLM_CCM_PER_TOKEN = 26,    /* horizontal sum, scale, max, exp */
	LLM_HOST_PER_VEC = 2,      /* load 8 weights, multiply-add */
	LLM_HOST_PER_ROW = 7,      /* horizontal sum, store */
	LLM_HOST_PER_CHUNK = 20,   /* exp of the max difference, rescale */
	DLRM_CCM_PER_VEC = 2,      /* load 8 floats, add */
	DLRM_CCM_PER_ROW = 3,      /* load the index, address */
	DLRM_HOST_PER_VEC = 2,
	DLRM_HOST_PER_BAG = 26,    /* horizontal sum, sigmoid, store */
	EPILOGUE_BASE = 200,
};

static uint64_t vecs(uint64_t n, uint32_t lanes)
{
	return (n + lanes - 1) / lanes;
}

static uint32_t ceil_log2(uint64_t n)
{
	uint32_t l = 0;
	while ((UINT64_C(1) << l) < n)
		l++;
	return l;
}

struct axle_wl {
	struct axle_wl_params p;
	/* KNN */
	float *db, *query;
	/* graphs: in-edges CSR */
	uint32_t *in_start, *in_src, *in_w, *outdeg;
	/* SSB */
	uint32_t *orderdate, *extprice;
	uint8_t *quantity, *discount;
	/* LLM */
	uint32_t hd, chunks, llm_task_bytes;
	float *q, *kc, *vc, *x;
	/* DLRM */
	uint32_t *idx;
	float *wtop;
};

/* ---- generation -------------------------------------------------------- */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static double unif(uint64_t *s)
{
	return (double)(splitmix(s) >> 11) * 0x1.0p-53;
}

/* A value in [lo, lo + span) that depends only on (a, b): tables too large to store. */
static float hashed(uint64_t a, uint64_t b, float lo, float span)
{
	uint64_t s = a * UINT64_C(0x9e3779b97f4a7c15) ^ (b + UINT64_C(0x632be59bd9b4e019));
	return lo + span * (float)((splitmix(&s) >> 40) * 0x1.0p-24);
}

static float *rand_floats(uint64_t *s, size_t n, float lo, float span)
{
	float *v = malloc(n * sizeof *v);
	for (size_t i = 0; v && i < n; i++)
		v[i] = lo + span * (float)unif(s);
	return v;
}

static int gen_graph(struct axle_wl *w, uint64_t *s)
{
	uint32_t V = w->p.vertices, E = w->p.edges;
	uint32_t *src = malloc((size_t)E * sizeof *src), *dst = malloc((size_t)E * sizeof *dst);
	uint32_t *wt = malloc((size_t)E * sizeof *wt);
	w->in_start = calloc((size_t)V + 1, sizeof *w->in_start);
	w->in_src = malloc((size_t)E * sizeof *w->in_src);
	w->in_w = malloc((size_t)E * sizeof *w->in_w);
	w->outdeg = calloc(V, sizeof *w->outdeg);
	int rc = -1;
	if (!src || !dst || !wt || !w->in_start || !w->in_src || !w->in_w || !w->outdeg)
		goto out;
	for (uint32_t e = 0; e < E; e++) {
		double u = unif(s);
		src[e] = (uint32_t)(V * u * u * u);
		dst[e] = (uint32_t)(splitmix(s) % V);
		if (dst[e] == src[e])
			dst[e] = (dst[e] + 1) % V;
		wt[e] = 1 + (uint32_t)(splitmix(s) % 16);
		w->in_start[dst[e] + 1]++;
		w->outdeg[src[e]]++;
	}
	for (uint32_t v = 0; v < V; v++)
		w->in_start[v + 1] += w->in_start[v];
	{
		uint32_t *fill = calloc(V, sizeof *fill);
		if (!fill)
			goto out;
		for (uint32_t e = 0; e < E; e++) {
			uint32_t at = w->in_start[dst[e]] + fill[dst[e]]++;
			w->in_src[at] = src[e];
			w->in_w[at] = wt[e];
		}
		free(fill);
	}
	rc = 0;
out:
	free(src);
	free(dst);
	free(wt);
	return rc;
}

struct axle_wl *axle_wl_new(const struct axle_wl_params *p, char *err, size_t errlen)
{
	struct axle_wl *w = calloc(1, sizeof *w);
	uint64_t s = p->seed;
	bool ok = false;

	if (!w)
		goto out;
	w->p = *p;
	switch (p->kind) {
	case WL_KNN:
		w->db = rand_floats(&s, (size_t)p->knn_rows * p->knn_dim, 0, 1);
		w->query = rand_floats(&s, p->knn_dim, 0, 1);
		ok = w->db && w->query;
		break;
	case WL_SSSP:
	case WL_PAGERANK:
		ok = gen_graph(w, &s) == 0;
		break;
	case WL_SSB: {
		uint32_t n = p->ssb_rows;
		w->orderdate = malloc((size_t)n * 4);
		w->extprice = malloc((size_t)n * 4);
		w->quantity = malloc(n);
		w->discount = malloc(n);
		ok = w->orderdate && w->extprice && w->quantity && w->discount;
		for (uint32_t r = 0; ok && r < n; r++) {
			uint32_t y = 1992 + (uint32_t)(splitmix(&s) % 7);
			uint32_t m = 1 + (uint32_t)(splitmix(&s) % 12), d = 1 + (uint32_t)(splitmix(&s) % 28);
			w->orderdate[r] = y * 10000 + m * 100 + d;
			w->quantity[r] = (uint8_t)(1 + splitmix(&s) % 50);
			w->discount[r] = (uint8_t)(splitmix(&s) % 11);
			w->extprice[r] = 90000 + (uint32_t)(splitmix(&s) % 9910000);
		}
		break;
	}
	case WL_LLM:
		w->hd = p->hidden / p->heads;
		w->chunks = (p->tokens + LLM_CHUNK - 1) / LLM_CHUNK;
		w->llm_task_bytes = (uint32_t)(((w->hd + 2) * 4 + 63) / 64 * 64);
		w->q = rand_floats(&s, p->hidden, -1, 2);
		w->kc = rand_floats(&s, (size_t)p->tokens * p->hidden, -1, 2);
		w->vc = rand_floats(&s, (size_t)p->tokens * p->hidden, -1, 2);
		w->x = rand_floats(&s, p->hidden, -1, 2);
		ok = w->q && w->kc && w->vc && w->x;
		break;
	case WL_DLRM:
		w->idx = malloc((size_t)p->bags * p->pooling * 4);
		w->wtop = rand_floats(&s, p->dlrm_dim, -1, 2);
		ok = w->idx && w->wtop;
		for (size_t i = 0; ok && i < (size_t)p->bags * p->pooling; i++) {
			double u = unif(&s);
			w->idx[i] = (uint32_t)(p->dlrm_rows * u * u);
		}
		break;
	}
out:
	if (!ok) {
		snprintf(err, errlen, "out of memory generating the workload's input");
		axle_wl_free(w);
		return NULL;
	}
	return w;
}

void axle_wl_free(struct axle_wl *w)
{
	if (!w)
		return;
	free(w->db); free(w->query);
	free(w->in_start); free(w->in_src); free(w->in_w); free(w->outdeg);
	free(w->orderdate); free(w->extprice); free(w->quantity); free(w->discount);
	free(w->q); free(w->kc); free(w->vc); free(w->x);
	free(w->idx); free(w->wtop);
	free(w);
}

const char *axle_wl_name(const struct axle_wl *w)
{
	static const char *names[] = {"knn", "sssp", "pagerank", "ssb", "llm", "dlrm"};
	return names[w->p.kind];
}

void axle_wl_round(const struct axle_wl *w, uint32_t iter, struct axle_round *out)
{
	const struct axle_wl_params *p = &w->p;
	(void)iter;
	switch (p->kind) {
	case WL_KNN:
		*out = (struct axle_round){p->knn_rows, 4, 4, true};
		break;
	case WL_SSSP:
	case WL_PAGERANK:
		*out = (struct axle_round){(p->vertices + GRAPH_VPT - 1) / GRAPH_VPT, 4 * GRAPH_VPT,
					   4 * GRAPH_VPT, false};
		break;
	case WL_SSB:
		*out = (struct axle_round){(p->ssb_rows + SSB_RPT - 1) / SSB_RPT, SSB_RPT / 8,
					   SSB_RPT / 8, false};
		break;
	case WL_LLM:
		*out = (struct axle_round){p->heads * w->chunks, w->llm_task_bytes,
					   w->chunks * w->llm_task_bytes, false};
		break;
	case WL_DLRM:
		*out = (struct axle_round){p->bags, p->dlrm_dim * 4, p->dlrm_dim * 4, false};
		break;
	}
}

/* ---- per-element kernels, shared by the offload and the reference ------- */

static float knn_distance(const struct axle_wl *w, uint32_t row, axle_touch_fn *touch, void *ctx)
{
	const float *r = w->db + (size_t)row * w->p.knn_dim;
	float acc = 0;
	for (uint32_t j = 0; j < w->p.knn_dim; j++) {
		float d = r[j] - w->query[j];
		acc += d * d;
		if (touch)
			touch(ctx, REGION(0) + ((uint64_t)row * w->p.knn_dim + j) * 4);
	}
	return acc;
}

struct knn_best {
	float d;
	uint32_t row;
};

/* Keeps best[0..k) sorted by (distance, row): the result does not depend on merge order. */
static uint64_t knn_insert(struct knn_best *best, uint32_t *n, uint32_t k, float d, uint32_t row)
{
	uint32_t i = *n;
	if (i == k && !(d < best[k - 1].d || (d == best[k - 1].d && row < best[k - 1].row)))
		return 0;
	if (i < k)
		(*n)++;
	else
		i = k - 1;
	uint64_t moved = 0;
	while (i > 0 && (d < best[i - 1].d || (d == best[i - 1].d && row < best[i - 1].row))) {
		best[i] = best[i - 1];
		i--;
		moved++;
	}
	best[i] = (struct knn_best){d, row};
	return moved + 1;
}

/* Pull relaxation of vertex v over values `val` (SSSP distances). */
static uint32_t sssp_pull(const struct axle_wl *w, const uint32_t *val, uint32_t v,
			  axle_touch_fn *touch, void *ctx, uint64_t *instr)
{
	uint32_t best = val[v];
	for (uint32_t e = w->in_start[v]; e < w->in_start[v + 1]; e++) {
		uint32_t u = w->in_src[e];
		if (touch) {
			touch(ctx, REGION(1) + (uint64_t)e * 8);
			touch(ctx, REGION(2) + (uint64_t)u * 4);
		}
		if (val[u] != INF_DIST && val[u] + w->in_w[e] < best)
			best = val[u] + w->in_w[e];
	}
	*instr += GRAPH_CCM_PER_VERTEX + GRAPH_CCM_PER_EDGE * (uint64_t)(w->in_start[v + 1] - w->in_start[v]);
	return best;
}

/* Pull sum of rank / outdegree over v's in-edges (PageRank). */
static float pr_pull(const struct axle_wl *w, const float *scaled, uint32_t v,
		     axle_touch_fn *touch, void *ctx, uint64_t *instr)
{
	float sum = 0;
	for (uint32_t e = w->in_start[v]; e < w->in_start[v + 1]; e++) {
		uint32_t u = w->in_src[e];
		if (touch) {
			touch(ctx, REGION(1) + (uint64_t)e * 8);
			touch(ctx, REGION(2) + (uint64_t)u * 4);
		}
		sum += scaled[u];
	}
	*instr += GRAPH_CCM_PER_VERTEX + GRAPH_CCM_PER_EDGE * (uint64_t)(w->in_start[v + 1] - w->in_start[v]);
	return sum;
}

static float pr_rank(const struct axle_wl *w, float contrib)
{
	return (1.0f - PR_DAMPING) / (float)w->p.vertices + PR_DAMPING * contrib;
}

static float pr_scaled(const struct axle_wl *w, uint32_t v, float rank)
{
	return w->outdeg[v] ? rank / (float)w->outdeg[v] : 0.0f;
}

/* Q1.x's predicates on lineorder's own columns: the CCM's filter. */
static bool ssb_mark(const struct axle_wl *w, uint32_t r)
{
	uint32_t q = w->quantity[r], d = w->discount[r];
	if (w->p.ssb_query == 1)
		return d >= 1 && d <= 3 && q < 25;
	return d >= 4 && d <= 6 && q >= 26 && q <= 35;
}

/*
 * The join with the date dimension (d_datekey = lo_orderdate) and its
 * predicate (Q1.1: d_year = 1993; Q1.2: d_yearmonthnum = 199401): the host's.
 * Our date keys are yyyymmdd, so the dimension's attributes are arithmetic
 * on the key; the host is charged a hash probe for it.
 */
static bool ssb_join(const struct axle_wl *w, uint32_t r)
{
	uint32_t date = w->orderdate[r];
	return w->p.ssb_query == 1 ? date / 10000 == 1993 : date / 100 == 199401;
}

/* Partial attention of head h over token chunk c: out[hd] = sum p_t v_t, then max, sum p_t. */
static void llm_partial(const struct axle_wl *w, uint32_t h, uint32_t c, float *out,
			axle_touch_fn *touch, void *ctx)
{
	uint32_t hd = w->hd, Hd = w->p.hidden;
	uint32_t t0 = c * LLM_CHUNK, t1 = t0 + LLM_CHUNK < w->p.tokens ? t0 + LLM_CHUNK : w->p.tokens;
	float s[LLM_CHUNK], m = -INFINITY, l = 0, scale = 1.0f / sqrtf((float)hd);
	const float *q = w->q + (size_t)h * hd;
	for (uint32_t t = t0; t < t1; t++) {
		const float *k = w->kc + (size_t)t * Hd + (size_t)h * hd;
		float dot = 0;
		for (uint32_t j = 0; j < hd; j++) {
			dot += q[j] * k[j];
			if (touch)
				touch(ctx, REGION(0) + ((uint64_t)t * Hd + (uint64_t)h * hd + j) * 4);
		}
		s[t - t0] = dot * scale;
		if (s[t - t0] > m)
			m = s[t - t0];
	}
	memset(out, 0, (hd + 2) * sizeof *out);
	for (uint32_t t = t0; t < t1; t++) {
		const float *v = w->vc + (size_t)t * Hd + (size_t)h * hd;
		float pr = expf(s[t - t0] - m);
		l += pr;
		for (uint32_t j = 0; j < hd; j++) {
			out[j] += pr * v[j];
			if (touch)
				touch(ctx, REGION(1) + ((uint64_t)t * Hd + (uint64_t)h * hd + j) * 4);
		}
	}
	out[hd] = m;
	out[hd + 1] = l;
}

static float llm_wo(const struct axle_wl *w, uint32_t i, uint32_t j)
{
	return hashed(i, j, -0.05f, 0.1f);
}

/* Head h's output from its chunks' partials, projected: y[Hd] = Wo[:, h*hd..] . o. */
static void llm_head(const struct axle_wl *w, uint32_t h, const uint8_t *parts, float *y,
		     axle_touch_fn *touch, void *ctx)
{
	uint32_t hd = w->hd, Hd = w->p.hidden, C = w->chunks;
	float M = -INFINITY, L = 0, o[hd > 0 ? hd : 1];
	for (uint32_t c = 0; c < C; c++) {
		float part[hd + 2];
		memcpy(part, parts + (size_t)c * w->llm_task_bytes, sizeof part);
		if (part[hd] > M)
			M = part[hd];
	}
	memset(o, 0, sizeof o);
	for (uint32_t c = 0; c < C; c++) {
		float part[hd + 2];
		memcpy(part, parts + (size_t)c * w->llm_task_bytes, sizeof part);
		float f = expf(part[hd] - M);
		L += part[hd + 1] * f;
		for (uint32_t j = 0; j < hd; j++)
			o[j] += part[j] * f;
	}
	for (uint32_t j = 0; j < hd; j++)
		o[j] /= L;
	for (uint32_t i = 0; i < Hd; i++) {
		float acc = 0;
		for (uint32_t j = 0; j < hd; j++) {
			acc += llm_wo(w, i, h * hd + j) * o[j];
			if (touch)
				touch(ctx, REGION(5) + ((uint64_t)i * Hd + (uint64_t)h * hd + j) * 4);
		}
		y[i] = acc;
	}
}

/* The layer's MLP weights: fc1 [4Hd][Hd], fc2 [Hd][4Hd] (generated, not stored). */
static float llm_w1(uint32_t i, uint32_t j)
{
	return hashed(i | UINT64_C(1) << 40, j, -0.02f, 0.04f);
}

static float llm_w2(uint32_t i, uint32_t j)
{
	return hashed(i | UINT64_C(2) << 40, j, -0.02f, 0.04f);
}

/* z = y + fc2(relu(fc1(y))), y and z Hd floats; tmp 4Hd floats. */
static void llm_mlp(const struct axle_wl *w, const float *y, float *tmp, float *z)
{
	uint32_t Hd = w->p.hidden, F = 4 * Hd;
	for (uint32_t m = 0; m < F; m++) {
		float acc = 0;
		for (uint32_t j = 0; j < Hd; j++)
			acc += llm_w1(m, j) * y[j];
		tmp[m] = acc > 0 ? acc : 0;
	}
	for (uint32_t i = 0; i < Hd; i++) {
		float acc = 0;
		for (uint32_t m = 0; m < F; m++)
			acc += llm_w2(i, m) * tmp[m];
		z[i] = y[i] + acc;
	}
}

static float dlrm_emb(uint32_t row, uint32_t j)
{
	return hashed(row, j, -1.0f, 2.0f);
}

static void dlrm_bag(const struct axle_wl *w, uint32_t b, float *acc, axle_touch_fn *touch,
		     void *ctx)
{
	uint32_t D = w->p.dlrm_dim;
	memset(acc, 0, D * sizeof *acc);
	for (uint32_t l = 0; l < w->p.pooling; l++) {
		uint32_t row = w->idx[(size_t)b * w->p.pooling + l];
		for (uint32_t j = 0; j < D; j++) {
			acc[j] += dlrm_emb(row, j);
			if (touch)
				touch(ctx, REGION(0) + ((uint64_t)row * D + j) * 4);
		}
	}
}

static float dlrm_score(const struct axle_wl *w, const float *pooled)
{
	float s = 0;
	for (uint32_t j = 0; j < w->p.dlrm_dim; j++)
		s += pooled[j] * w->wtop[j];
	return s;
}

/* ---- the CCM side ------------------------------------------------------- */

/*
 * Vertex values are double-buffered: write-backs of round r land in the
 * `next` copy while round r's partitions may still be reading `cur`, and the
 * next launch copies next into cur (axle_wl_ccm_begin_round), as a real CCM
 * kernel would use two arrays.
 */
struct ccm_state {
	uint32_t *dist, *dist_next;  /* SSSP */
	float *scaled, *scaled_next; /* PageRank: rank / outdegree */
};

void *axle_wl_ccm_new(const struct axle_wl *w)
{
	struct ccm_state *s = calloc(1, sizeof *s);
	uint32_t V = w->p.vertices;
	if (!s)
		return NULL;
	if (w->p.kind == WL_SSSP) {
		s->dist = malloc((size_t)V * 4);
		s->dist_next = malloc((size_t)V * 4);
		if (!s->dist || !s->dist_next)
			goto fail;
		for (uint32_t v = 0; v < V; v++)
			s->dist[v] = s->dist_next[v] = v == 0 ? 0 : INF_DIST;
	} else if (w->p.kind == WL_PAGERANK) {
		s->scaled = malloc((size_t)V * 4);
		s->scaled_next = malloc((size_t)V * 4);
		if (!s->scaled || !s->scaled_next)
			goto fail;
		for (uint32_t v = 0; v < V; v++)
			s->scaled[v] = s->scaled_next[v] = pr_scaled(w, v, 1.0f / (float)V);
	}
	return s;
fail:
	axle_wl_ccm_free(s);
	return NULL;
}

void axle_wl_ccm_free(void *p)
{
	struct ccm_state *s = p;
	if (!s)
		return;
	free(s->dist);
	free(s->dist_next);
	free(s->scaled);
	free(s->scaled_next);
	free(s);
}

void axle_wl_ccm_begin_round(const struct axle_wl *w, void *sp)
{
	struct ccm_state *s = sp;
	if (s->dist)
		memcpy(s->dist, s->dist_next, (size_t)w->p.vertices * 4);
	if (s->scaled)
		memcpy(s->scaled, s->scaled_next, (size_t)w->p.vertices * 4);
}

uint64_t axle_wl_ccm_task(const struct axle_wl *w, void *sp, uint32_t iter, uint32_t task,
			  uint8_t *out, axle_touch_fn *touch, void *ctx)
{
	struct ccm_state *s = sp;
	uint64_t instr = 0;
	(void)iter;
	switch (w->p.kind) {
	case WL_KNN: {
		float d = knn_distance(w, task, touch, ctx);
		memcpy(out, &d, 4);
		return (uint64_t)KNN_CCM_PER_VEC * vecs(w->p.knn_dim, VLANES) + KNN_CCM_PER_ROW;
	}
	case WL_SSSP:
		for (uint32_t i = 0; i < GRAPH_VPT; i++) {
			uint32_t v = task * GRAPH_VPT + i;
			uint32_t d = v < w->p.vertices ? sssp_pull(w, s->dist, v, touch, ctx, &instr) : INF_DIST;
			memcpy(out + 4 * i, &d, 4);
		}
		return instr;
	case WL_PAGERANK:
		for (uint32_t i = 0; i < GRAPH_VPT; i++) {
			uint32_t v = task * GRAPH_VPT + i;
			float c = v < w->p.vertices ? pr_pull(w, s->scaled, v, touch, ctx, &instr) : 0.0f;
			memcpy(out + 4 * i, &c, 4);
		}
		return instr;
	case WL_SSB:
		memset(out, 0, SSB_RPT / 8);
		for (uint32_t i = 0; i < SSB_RPT; i++) {
			uint32_t r = task * SSB_RPT + i;
			if (r >= w->p.ssb_rows)
				break;
			touch(ctx, REGION(1) + r);
			touch(ctx, REGION(2) + r);
			if (ssb_mark(w, r))
				out[i / 8] |= (uint8_t)(1u << (i % 8));
			if (i % BLANES == 0)
				instr += SSB_CCM_PER_VEC;
		}
		return instr + SSB_CCM_PER_TASK;
	case WL_LLM: {
		float part[w->hd + 2];
		uint32_t h = task / w->chunks, c = task % w->chunks;
		llm_partial(w, h, c, part, touch, ctx);
		memset(out, 0, w->llm_task_bytes);
		memcpy(out, part, sizeof part);
		uint32_t toks = w->p.tokens - c * LLM_CHUNK < LLM_CHUNK ? w->p.tokens - c * LLM_CHUNK : LLM_CHUNK;
		return (uint64_t)toks * (LLM_CCM_PER_VEC * vecs(w->hd, VLANES) + LLM_CCM_PER_TOKEN) +
		       vecs(w->hd + 2, VLANES) + 10;
	}
	case WL_DLRM: {
		float acc[w->p.dlrm_dim];
		dlrm_bag(w, task, acc, touch, ctx);
		memcpy(out, acc, sizeof acc);
		return (uint64_t)w->p.pooling * (DLRM_CCM_PER_VEC * vecs(w->p.dlrm_dim, VLANES) + DLRM_CCM_PER_ROW) +
		       vecs(w->p.dlrm_dim, VLANES) + 10;
	}
	}
	return 0;
}

void axle_wl_ccm_writeback(const struct axle_wl *w, void *sp, uint64_t off, const uint8_t *data,
			   uint32_t len)
{
	struct ccm_state *s = sp;
	uint64_t v0 = off / 4;
	assert(off % 4 == 0 && len % 4 == 0 && v0 + len / 4 <= w->p.vertices);
	if (w->p.kind == WL_SSSP)
		memcpy(s->dist_next + v0, data, len);
	else if (w->p.kind == WL_PAGERANK)
		memcpy(s->scaled_next + v0, data, len);
}

/* ---- the host side ------------------------------------------------------ */

struct host_state {
	/* KNN */
	struct knn_best *best;
	uint32_t nbest;
	/* graphs */
	uint32_t *dist;
	float *rank;
	uint64_t changed;
	uint32_t rounds;
	/* SSB */
	uint64_t revenue;
	/* LLM: per-head projections, the attention block's output, the MLP's hidden layer */
	float *yh, *y, *attn, *ffn;
	/* DLRM */
	float *scores;
};

void *axle_wl_host_new(const struct axle_wl *w)
{
	struct host_state *s = calloc(1, sizeof *s);
	const struct axle_wl_params *p = &w->p;
	bool ok = s != NULL;
	if (!ok)
		return NULL;
	switch (p->kind) {
	case WL_KNN:
		ok = (s->best = calloc(p->knn_k, sizeof *s->best)) != NULL;
		break;
	case WL_SSSP:
		ok = (s->dist = malloc((size_t)p->vertices * 4)) != NULL;
		for (uint32_t v = 0; ok && v < p->vertices; v++)
			s->dist[v] = v == 0 ? 0 : INF_DIST;
		break;
	case WL_PAGERANK:
		ok = (s->rank = malloc((size_t)p->vertices * 4)) != NULL;
		for (uint32_t v = 0; ok && v < p->vertices; v++)
			s->rank[v] = 1.0f / (float)p->vertices;
		break;
	case WL_SSB:
		break;
	case WL_LLM:
		s->yh = calloc((size_t)p->heads * p->hidden, sizeof *s->yh);
		s->y = calloc(p->hidden, sizeof *s->y);
		s->attn = calloc(p->hidden, sizeof *s->attn);
		s->ffn = calloc((size_t)4 * p->hidden, sizeof *s->ffn);
		ok = s->yh && s->y && s->attn && s->ffn;
		break;
	case WL_DLRM:
		ok = (s->scores = calloc(p->bags, sizeof *s->scores)) != NULL;
		break;
	}
	if (!ok) {
		axle_wl_host_free(s);
		return NULL;
	}
	return s;
}

void axle_wl_host_free(void *p)
{
	struct host_state *s = p;
	if (!s)
		return;
	free(s->best); free(s->dist); free(s->rank); free(s->yh); free(s->y); free(s->attn); free(s->ffn); free(s->scores);
	free(s);
}

uint64_t axle_wl_host_task(const struct axle_wl *w, void *sp, uint32_t iter, uint64_t off,
			   const uint8_t *data, uint32_t len, axle_touch_fn *touch, void *ctx,
			   uint8_t *wb, uint32_t *wb_len)
{
	struct host_state *s = sp;
	const struct axle_wl_params *p = &w->p;
	uint64_t instr = 0;
	(void)iter;
	*wb_len = 0;
	switch (p->kind) {
	case WL_KNN:
		for (uint32_t i = 0; i < len / 4; i++) {
			uint32_t row = (uint32_t)(off / 4 + i);
			float d;
			if (row >= p->knn_rows)
				break;
			memcpy(&d, data + 4 * i, 4);
			knn_insert(s->best, &s->nbest, p->knn_k, d, row);
			instr += KNN_HOST_PER_ROW +
				 KNN_HOST_PER_CMP * (uint64_t)p->knn_k * ceil_log2(p->knn_k);
		}
		return instr;
	case WL_SSSP: {
		bool any = false;
		for (uint32_t i = 0; i < len / 4; i++) {
			uint32_t v = (uint32_t)(off / 4 + i), d;
			if (v >= p->vertices)
				break;
			memcpy(&d, data + 4 * i, 4);
			if (d < s->dist[v]) {
				s->dist[v] = d;
				s->changed++;
				any = true;
			}
			instr += GRAPH_HOST_PER_VERTEX;
		}
		if (any) {
			uint32_t n = (uint32_t)(p->vertices - off / 4 < len / 4 ? p->vertices - off / 4 : len / 4);
			memcpy(wb, s->dist + off / 4, (size_t)n * 4);
			*wb_len = n * 4;
		}
		return instr;
	}
	case WL_PAGERANK: {
		uint32_t n = 0;
		for (uint32_t i = 0; i < len / 4; i++) {
			uint32_t v = (uint32_t)(off / 4 + i);
			float c, sc;
			if (v >= p->vertices)
				break;
			memcpy(&c, data + 4 * i, 4);
			s->rank[v] = pr_rank(w, c);
			sc = pr_scaled(w, v, s->rank[v]);
			memcpy(wb + 4 * i, &sc, 4);
			n++;
			instr += GRAPH_HOST_PER_VERTEX;
		}
		*wb_len = n * 4;
		return instr;
	}
	case WL_SSB:
		for (uint32_t i = 0; i < len * 8; i++) {
			uint64_t r = off * 8 + i;
			if (r >= p->ssb_rows)
				break;
			if (i % 64 == 0)
				instr += SSB_HOST_PER_WORD;
			if (!(data[i / 8] >> (i % 8) & 1))
				continue;
			touch(ctx, REGION(4) + r * 4);
			instr += SSB_HOST_PER_MARK;
			if (!ssb_join(w, (uint32_t)r))
				continue;
			touch(ctx, REGION(3) + r * 4);
			touch(ctx, REGION(2) + r);
			s->revenue += (uint64_t)w->extprice[r] * w->discount[r];
			instr += SSB_HOST_PER_PASS;
		}
		return instr;
	case WL_LLM: {
		uint32_t h = (uint32_t)(off / ((uint64_t)w->chunks * w->llm_task_bytes));
		assert(len == w->chunks * w->llm_task_bytes);
		llm_head(w, h, data, s->yh + (size_t)h * p->hidden, touch, ctx);
		return (uint64_t)w->chunks * (LLM_HOST_PER_CHUNK + LLM_HOST_PER_VEC * vecs(w->hd, VLANES)) +
		       LLM_HOST_PER_VEC * vecs(w->hd, VLANES) +
		       (uint64_t)p->hidden * (LLM_HOST_PER_VEC * vecs(w->hd, VLANES) + LLM_HOST_PER_ROW);
	}
	case WL_DLRM: {
		uint32_t b = (uint32_t)(off / (p->dlrm_dim * 4));
		float pooled[p->dlrm_dim];
		memcpy(pooled, data, sizeof pooled);
		s->scores[b] = dlrm_score(w, pooled);
		return DLRM_HOST_PER_VEC * vecs(p->dlrm_dim, VLANES) + DLRM_HOST_PER_BAG;
	}
	}
	return 0;
}

uint64_t axle_wl_epilogue(const struct axle_wl *w, void *sp, uint32_t iter, bool *more,
			  uint64_t *par_instr, uint64_t *par_bytes)
{
	struct host_state *s = sp;
	const struct axle_wl_params *p = &w->p;
	*more = false;
	*par_instr = *par_bytes = 0;
	s->rounds = iter + 1;
	switch (p->kind) {
	case WL_SSSP:
		*more = s->changed > 0 && (p->iterations == 0 || iter + 1 < p->iterations);
		s->changed = 0;
		return EPILOGUE_BASE;
	case WL_PAGERANK:
		*more = iter + 1 < p->iterations;
		return EPILOGUE_BASE;
	case WL_LLM: {
		uint64_t Hd = p->hidden, F = 4 * Hd;
		for (uint32_t i = 0; i < p->hidden; i++) {
			float acc = w->x[i];
			for (uint32_t h = 0; h < p->heads; h++)
				acc += s->yh[(size_t)h * p->hidden + i];
			s->attn[i] = acc;
		}
		llm_mlp(w, s->attn, s->ffn, s->y);
		/* fc1: F rows of Hd, ReLU; fc2: Hd rows of F, residual; on every host unit. */
		*par_instr = F * (LLM_HOST_PER_VEC * vecs(Hd, VLANES) + LLM_HOST_PER_ROW + 1) +
			     Hd * (LLM_HOST_PER_VEC * vecs(F, VLANES) + LLM_HOST_PER_ROW + 1);
		*par_bytes = 2 * F * Hd * 4;
		return EPILOGUE_BASE + (uint64_t)p->heads * 2 * vecs(Hd, VLANES);
	}
	case WL_KNN:
		return EPILOGUE_BASE + p->knn_k; /* read out the list */
	default:
		return EPILOGUE_BASE;
	}
}

/* ---- host-only reference ------------------------------------------------ */

static int mismatch(char *err, size_t errlen, const char *what, uint64_t i)
{
	snprintf(err, errlen, "result differs from the host-only computation: %s at %llu", what,
		 (unsigned long long)i);
	return -1;
}

int axle_wl_check(const struct axle_wl *w, const void *sp, char *err, size_t errlen)
{
	const struct host_state *s = sp;
	const struct axle_wl_params *p = &w->p;
	int rc = 0;
	uint64_t instr = 0;

	switch (p->kind) {
	case WL_KNN: {
		struct knn_best best[p->knn_k];
		uint32_t n = 0;
		for (uint32_t r = 0; r < p->knn_rows; r++)
			knn_insert(best, &n, p->knn_k, knn_distance(w, r, NULL, NULL), r);
		if (n != s->nbest)
			return mismatch(err, errlen, "number of neighbours", n);
		for (uint32_t i = 0; i < n; i++)
			if (best[i].row != s->best[i].row || memcmp(&best[i].d, &s->best[i].d, 4) != 0)
				return mismatch(err, errlen, "neighbour", i);
		return 0;
	}
	case WL_SSSP: {
		uint32_t V = p->vertices, *d = malloc((size_t)V * 4), *nd = malloc((size_t)V * 4);
		uint32_t rounds = 0;
		bool changed = true;
		if (!d || !nd) {
			rc = mismatch(err, errlen, "out of memory", 0);
			goto sssp_out;
		}
		for (uint32_t v = 0; v < V; v++)
			d[v] = v == 0 ? 0 : INF_DIST;
		while (changed && (p->iterations == 0 || rounds < p->iterations)) {
			changed = false;
			for (uint32_t v = 0; v < V; v++) {
				nd[v] = sssp_pull(w, d, v, NULL, NULL, &instr);
				changed |= nd[v] < d[v];
			}
			memcpy(d, nd, (size_t)V * 4);
			rounds++;
		}
		if (rounds != s->rounds)
			rc = mismatch(err, errlen, "number of rounds", rounds);
		for (uint32_t v = 0; rc == 0 && v < V; v++)
			if (d[v] != s->dist[v])
				rc = mismatch(err, errlen, "distance of vertex", v);
sssp_out:
		free(d);
		free(nd);
		return rc;
	}
	case WL_PAGERANK: {
		uint32_t V = p->vertices;
		float *sc = malloc((size_t)V * 4), *rk = malloc((size_t)V * 4), *c = malloc((size_t)V * 4);
		if (!sc || !rk || !c) {
			rc = mismatch(err, errlen, "out of memory", 0);
			goto pr_out;
		}
		for (uint32_t v = 0; v < V; v++)
			sc[v] = pr_scaled(w, v, 1.0f / (float)V);
		for (uint32_t it = 0; it < p->iterations; it++) {
			for (uint32_t v = 0; v < V; v++)
				c[v] = pr_pull(w, sc, v, NULL, NULL, &instr);
			for (uint32_t v = 0; v < V; v++) {
				rk[v] = pr_rank(w, c[v]);
				sc[v] = pr_scaled(w, v, rk[v]);
			}
		}
		for (uint32_t v = 0; v < V; v++)
			if (memcmp(&rk[v], &s->rank[v], 4) != 0) {
				rc = mismatch(err, errlen, "rank of vertex", v);
				break;
			}
pr_out:
		free(sc);
		free(rk);
		free(c);
		return rc;
	}
	case WL_SSB: {
		uint64_t rev = 0;
		for (uint32_t r = 0; r < p->ssb_rows; r++)
			if (ssb_mark(w, r) && ssb_join(w, r))
				rev += (uint64_t)w->extprice[r] * w->discount[r];
		return rev == s->revenue ? 0 : mismatch(err, errlen, "revenue", rev);
	}
	case WL_LLM: {
		uint32_t hd = w->hd, C = w->chunks, Hd = p->hidden;
		uint8_t *parts = calloc((size_t)C, w->llm_task_bytes);
		float *yh = malloc((size_t)p->heads * Hd * 4), *attn = calloc(Hd, 4);
		float *ffn = malloc((size_t)4 * Hd * 4), *out = malloc((size_t)Hd * 4);
		if (!parts || !yh || !attn || !ffn || !out) {
			rc = mismatch(err, errlen, "out of memory", 0);
			goto llm_out;
		}
		for (uint32_t h = 0; h < p->heads; h++) {
			for (uint32_t c = 0; c < C; c++) {
				float part[hd + 2];
				llm_partial(w, h, c, part, NULL, NULL);
				memcpy(parts + (size_t)c * w->llm_task_bytes, part, sizeof part);
			}
			llm_head(w, h, parts, yh + (size_t)h * Hd, NULL, NULL);
		}
		for (uint32_t i = 0; i < Hd; i++) {
			float acc = w->x[i];
			for (uint32_t h = 0; h < p->heads; h++)
				acc += yh[(size_t)h * Hd + i];
			attn[i] = acc;
		}
		llm_mlp(w, attn, ffn, out);
		for (uint32_t i = 0; i < Hd && rc == 0; i++)
			if (memcmp(&out[i], &s->y[i], 4) != 0)
				rc = mismatch(err, errlen, "layer output", i);
llm_out:
		free(parts);
		free(yh);
		free(attn);
		free(ffn);
		free(out);
		return rc;
	}
	case WL_DLRM:
		for (uint32_t b = 0; b < p->bags; b++) {
			float acc[p->dlrm_dim], sc;
			dlrm_bag(w, b, acc, NULL, NULL);
			sc = dlrm_score(w, acc);
			if (memcmp(&sc, &s->scores[b], 4) != 0)
				return mismatch(err, errlen, "score of bag", b);
		}
		return 0;
	}
	return 0;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * UINT64_C(0x100000001b3);
	return h;
}

uint64_t axle_wl_digest(const struct axle_wl *w, const void *sp)
{
	const struct host_state *s = sp;
	const struct axle_wl_params *p = &w->p;
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	switch (p->kind) {
	case WL_KNN: return fnv(h, s->best, (size_t)s->nbest * sizeof *s->best);
	case WL_SSSP: return fnv(h, s->dist, (size_t)p->vertices * 4);
	case WL_PAGERANK: return fnv(h, s->rank, (size_t)p->vertices * 4);
	case WL_SSB: return fnv(h, &s->revenue, sizeof s->revenue);
	case WL_LLM: return fnv(h, s->y, (size_t)p->hidden * 4);
	case WL_DLRM: return fnv(h, s->scores, (size_t)p->bags * 4);
	}
	return h;
}
