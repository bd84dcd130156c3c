/*
 * graph.c — generating the GAPBS-like input graphs (graph_priv.h).
 *
 * Kronecker: 4 nv undirected edges drawn by R-MAT recursion (at each of the
 * log2 nv levels the edge falls in quadrant a, b, c or d), then every vertex
 * id mapped through one random permutation (Graph500 scrambles ids so that
 * high-degree vertices are not the low ids), both directions added, self
 * loops dropped, sorted and deduplicated. Road: a side x side grid in
 * row-major ids, right and down links kept with probability 0.7, a diagonal
 * with 0.1 (intersections: road networks have some triangles).
 *
 * Edge factor 4 (GAPBS's default is 16): the scaled runs must fit a few
 * million memory operations, and for the vertex arrays to be larger than the
 * scaled L3 (inputs/camp.ini) the budget buys more vertices, not more edges
 * per vertex. Mean degree ~8 after symmetrising (twitter: 35, road: 2.4).
 *
 * Everything is seeded from the image's seed, so every rank and the unit
 * tests build the same graph. Cost: a sort of 8 nv 64-bit keys (kron).
 */
#include "graph_priv.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxlsim/kthread.h"
#include "klayout_priv.h"

#define KRON_EDGE_FACTOR 4
#define ROAD_DIAGONAL 0.1
#define ROAD_KEEP 0.7
#define GRAPH_MAX_V (UINT32_C(1) << 22)

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint32_t weight_of(uint64_t seed, uint32_t u, uint32_t v)
{
	uint64_t s = seed ^ ((uint64_t)(u < v ? u : v) << 32 | (u < v ? v : u));
	return 1 + (uint32_t)(krand(&s) % 255);
}

/* Builds the CSR from n directed pairs (u << 32 | v), sorted and deduplicated here. */
static int from_pairs(struct kgraph *g, uint64_t *pairs, uint64_t n, uint64_t seed, bool weighted)
{
	qsort(pairs, n, sizeof *pairs, cmp_u64);
	uint64_t m = 0;
	for (uint64_t i = 0; i < n; i++)
		if (i == 0 || pairs[i] != pairs[m - 1])
			pairs[m++] = pairs[i];
	g->ne = m;
	g->index = calloc((size_t)g->nv + 1, sizeof *g->index);
	g->adj = malloc((m ? m : 1) * sizeof *g->adj);
	g->w = weighted ? malloc((m ? m : 1) * sizeof *g->w) : NULL;
	if (!g->index || !g->adj || (weighted && !g->w))
		return -1;
	for (uint64_t i = 0; i < m; i++) {
		uint32_t u = (uint32_t)(pairs[i] >> 32), v = (uint32_t)pairs[i];
		g->index[u + 1]++;
		g->adj[i] = v;
		if (g->w)
			g->w[i] = weight_of(seed, u, v);
	}
	for (uint32_t u = 0; u < g->nv; u++)
		g->index[u + 1] += g->index[u];
	return 0;
}

int kgraph_generate(struct kgraph *g, const char *kernel, uint32_t kind, uint64_t nv,
		    uint64_t seed, bool weighted, char *err, size_t errlen)
{
	memset(g, 0, sizeof *g);
	if (kind > KGRAPH_ROAD) {
		snprintf(err, errlen, "%s: workload.variant (graph) must be " KGRAPH_KINDS " (got %u)",
			 kernel, kind);
		return -1;
	}
	if (nv < 16 || nv > GRAPH_MAX_V) {
		snprintf(err, errlen, "%s: size (vertices) must be 16..%u (got %" PRIu64 ")", kernel,
			 GRAPH_MAX_V, nv);
		return -1;
	}
	uint64_t s = seed * UINT64_C(0x2545f4914f6cdd1d) + kind;
	uint64_t *pairs = NULL, n = 0;
	int rc = -1;
	if (kind == KGRAPH_KRON) {
		uint32_t scale = 0;
		while ((UINT64_C(1) << scale) < nv)
			scale++;
		g->nv = UINT32_C(1) << scale;
		uint64_t m = (uint64_t)KRON_EDGE_FACTOR * g->nv;
		uint32_t *perm = malloc(g->nv * sizeof *perm);
		pairs = malloc(2 * m * sizeof *pairs);
		if (!perm || !pairs) {
			free(perm);
			goto out;
		}
		for (uint32_t i = 0; i < g->nv; i++)
			perm[i] = i;
		for (uint32_t i = g->nv - 1; i > 0; i--) {
			uint32_t j = (uint32_t)(krand(&s) % (i + 1));
			uint32_t x = perm[i];
			perm[i] = perm[j];
			perm[j] = x;
		}
		for (uint64_t e = 0; e < m; e++) {
			uint32_t u = 0, v = 0;
			for (uint32_t b = 0; b < scale; b++) {
				double r = kunit(&s);
				uint32_t ub = r >= 0.57 + 0.19, vb = (r >= 0.57 && r < 0.76) || r >= 0.95;
				u |= ub << b;
				v |= vb << b;
			}
			u = perm[u];
			v = perm[v];
			if (u == v)
				continue;
			pairs[n++] = (uint64_t)u << 32 | v;
			pairs[n++] = (uint64_t)v << 32 | u;
		}
		free(perm);
	} else {
		uint32_t side = (uint32_t)sqrt((double)nv);
		while ((uint64_t)(side + 1) * (side + 1) <= nv)
			side++;
		g->nv = side * side;
		pairs = malloc((size_t)6 * g->nv * sizeof *pairs);
		if (!pairs)
			goto out;
		for (uint32_t r = 0; r < side; r++)
			for (uint32_t c = 0; c < side; c++) {
				uint32_t u = r * side + c;
				if (c + 1 < side && kunit(&s) < ROAD_KEEP) {
					pairs[n++] = (uint64_t)u << 32 | (u + 1);
					pairs[n++] = (uint64_t)(u + 1) << 32 | u;
				}
				if (r + 1 < side && kunit(&s) < ROAD_KEEP) {
					pairs[n++] = (uint64_t)u << 32 | (u + side);
					pairs[n++] = (uint64_t)(u + side) << 32 | u;
				}
				if (r + 1 < side && c + 1 < side && kunit(&s) < ROAD_DIAGONAL) {
					pairs[n++] = (uint64_t)u << 32 | (u + side + 1);
					pairs[n++] = (uint64_t)(u + side + 1) << 32 | u;
				}
			}
	}
	if (from_pairs(g, pairs, n, seed, weighted) != 0)
		goto out;
	rc = 0;
out:
	free(pairs);
	if (rc != 0) {
		kgraph_free(g);
		snprintf(err, errlen, "%s: out of memory generating the graph", kernel);
	}
	return rc;
}

void kgraph_free(struct kgraph *g)
{
	free(g->index);
	free(g->adj);
	free(g->w);
	memset(g, 0, sizeof *g);
}

void kgraph_place(const struct kgraph *g, uint64_t *off, struct kgraph_layout *L)
{
	L->nv = g->nv;
	L->ne = g->ne;
	L->index_off = klay_take(off, 4 * ((uint64_t)g->nv + 1));
	L->adj_off = klay_take(off, 4 * g->ne);
	L->w_off = g->w ? klay_take(off, 4 * g->ne) : 0;
}

void kgraph_write(const struct kgraph *g, const struct kgraph_layout *L, uint8_t *img)
{
	memcpy(img + L->index_off, g->index, 4 * ((size_t)g->nv + 1));
	memcpy(img + L->adj_off, g->adj, 4 * g->ne);
	if (g->w)
		memcpy(img + L->w_off, g->w, 4 * g->ne);
}

uint32_t kgraph_hub(const struct kgraph *g)
{
	uint32_t best = 0;
	for (uint32_t v = 1; v < g->nv; v++)
		if (g->index[v + 1] - g->index[v] > g->index[best + 1] - g->index[best])
			best = v;
	return best;
}

void kgraph_bfs_place(uint32_t nv, bool levels, uint64_t *off, struct kbfs_layout *B)
{
	B->levels_off = levels ? klay_take(off, 8 * ((uint64_t)nv + 1)) : 0;
	B->barrier_off = klay_take(off, KL_LINE);
	B->tail_off = klay_take(off, KL_LINE);
	B->depth_off = klay_take(off, 4 * (uint64_t)nv);
	B->queue_off = klay_take(off, 4 * (uint64_t)nv);
}

void kgraph_bfs_init(const struct kbfs_layout *B, uint32_t nv, uint32_t source, uint8_t *img)
{
	memset(img + B->depth_off, 0xff, 4 * (size_t)nv);
	kput32(img, B->depth_off + 4 * (uint64_t)source, 0);
	kput32(img, B->queue_off, source);
	kput64(img, B->tail_off, 1);
}

#define QBUF 64u

struct qbuf {
	uint32_t v[QBUF], n;
};

static void flush(struct cxs_kt *kt, const struct kbfs_layout *B, struct qbuf *q)
{
	if (q->n == 0)
		return;
	uint64_t at = cxs_kt_fetch_add(kt, ksh(kt, B->tail_off), 8, q->n);
	for (uint32_t i = 0; i < q->n; i++)
		kst32(kt, B->queue_off + 4 * (at + i), q->v[i]);
	q->n = 0;
}

void kedges_begin(struct cxs_kt *kt, struct kedges *it, const struct kgraph_layout *L,
		  const uint32_t *u, uint32_t n)
{
	uint32_t h[16];
	it->L = L;
	it->n = n;
	for (uint32_t i = 0; i < n; i++) {
		h[2 * i] = cxs_kt_ld(kt, ksh(kt, L->index_off + 4 * (uint64_t)u[i]), 4);
		h[2 * i + 1] = cxs_kt_ld(kt, ksh(kt, L->index_off + 4 * (uint64_t)u[i] + 4), 4);
	}
	for (uint32_t i = 0; i < n; i++) {
		it->lo[i] = (uint32_t)cxs_kt_get(kt, h[2 * i]);
		it->hi[i] = (uint32_t)cxs_kt_get(kt, h[2 * i + 1]);
	}
	it->i = 0;
	it->e = n ? it->lo[0] : 0;
}

uint32_t kedges_next(struct cxs_kt *kt, struct kedges *it, uint8_t *src, uint32_t *v,
		     uint32_t *pos)
{
	uint32_t m = 0, h[KGRAPH_BATCH];
	while (it->i < it->n && m < KGRAPH_BATCH) {
		if (it->e >= it->hi[it->i]) {
			if (++it->i < it->n)
				it->e = it->lo[it->i];
			continue;
		}
		src[m] = (uint8_t)it->i;
		pos[m] = it->e;
		h[m++] = cxs_kt_ld(kt, ksh(kt, it->L->adj_off + 4 * (uint64_t)it->e++), 4);
	}
	for (uint32_t k = 0; k < m; k++)
		v[k] = (uint32_t)cxs_kt_get(kt, h[k]);
	cxs_kt_compute(kt, m);
	return m;
}

/* Expands frontier vertices u[0..n) at depth d. */
static void expand(struct cxs_kt *kt, const struct kgraph_layout *L, const struct kbfs_layout *B,
		   const uint32_t *u, uint32_t n, uint32_t d, struct qbuf *q)
{
	struct kedges it;
	uint8_t src[KGRAPH_BATCH];
	uint32_t v[KGRAPH_BATCH], pos[KGRAPH_BATCH], hb[KGRAPH_BATCH], m;
	kedges_begin(kt, &it, L, u, n);
	while ((m = kedges_next(kt, &it, src, v, pos)) > 0) {
		for (uint32_t k = 0; k < m; k++)
			hb[k] = cxs_kt_ld(kt, ksh(kt, B->depth_off + 4 * (uint64_t)v[k]), 4);
		for (uint32_t k = 0; k < m; k++) {
			cxs_kt_compute(kt, 3);
			if ((uint32_t)cxs_kt_get(kt, hb[k]) != UINT32_MAX)
				continue;
			if ((uint32_t)cxs_kt_swap(kt, ksh(kt, B->depth_off + 4 * (uint64_t)v[k]), 4,
						  d + 1) != UINT32_MAX)
				continue; /* another thread won it */
			q->v[q->n++] = v[k];
			if (q->n == QBUF)
				flush(kt, B, q);
		}
	}
}

uint32_t kgraph_bfs(struct cxs_kt *kt, const struct kgraph_layout *L, const struct kbfs_layout *B)
{
	uint32_t T = cxs_kt_count(kt), t = cxs_kt_id(kt);
	uint64_t start = 0, end = 1;
	struct qbuf q = {.n = 0};
	for (uint32_t d = 0;; d++) {
		uint64_t a, b;
		kshare(end - start, t, T, &a, &b);
		for (uint64_t i = start + a; i < start + b; i += 8) {
			uint32_t n = start + b - i < 8 ? (uint32_t)(start + b - i) : 8, u[8], h[8];
			for (uint32_t k = 0; k < n; k++)
				h[k] = cxs_kt_ld(kt, ksh(kt, B->queue_off + 4 * (i + k)), 4);
			for (uint32_t k = 0; k < n; k++)
				u[k] = (uint32_t)cxs_kt_get(kt, h[k]);
			expand(kt, L, B, u, n, d, &q);
		}
		flush(kt, B, &q);
		cxs_kt_barrier(kt, ksh(kt, B->barrier_off), T);
		if (t == 0 && B->levels_off)
			kst64(kt, B->levels_off + 8 * (uint64_t)d, start);
		start = end;
		end = kld64(kt, B->tail_off);
		cxs_kt_barrier(kt, ksh(kt, B->barrier_off), T); /* all have read the tail */
		if (end == start) {
			if (t == 0 && B->levels_off)
				kst64(kt, B->levels_off + 8 * ((uint64_t)d + 1), start);
			return d + 1;
		}
	}
}

void kgraph_bfs_clear_queue(struct cxs_kt *kt, const struct kbfs_layout *B, uint32_t nv)
{
	uint64_t lo, hi;
	kshare(((uint64_t)nv + 1) / 2, cxs_kt_id(kt), cxs_kt_count(kt), &lo, &hi);
	for (uint64_t w = lo; w < hi; w++)
		kst64(kt, B->queue_off + 8 * w, 0);
}
