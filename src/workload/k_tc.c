/*
 * k_tc.c — triangle counting, modelled after GAPBS's tc (OrderedCount): for
 * every vertex u, every neighbour v < u and every neighbour w < v of v, count
 * w if it is also a neighbour of u (a merge of the two sorted lists), on a
 * generated graph (graph_priv.h; variant 0 kron, 1 road). As GAPBS does for
 * skewed graphs, kron is relabelled by degree (descending) first, so that
 * hubs get low ids and the ordered count never walks a hub's whole list.
 * Vertices are dealt round robin (t, t + T, ...) to spread the skew.
 *
 * Memory behaviour: sequential reads of neighbour lists (prefetch-friendly,
 * 16 ids per line), the merge's compares between them; the lists of
 * neighbours v are at random places (kron) or nearby (road). Compute-heavy
 * next to the other graph kernels; CAMP's tc-road is its high-MPKI, low-
 * slowdown example.
 *
 * Shared layout: barrier line, T count lines, total line, the graph.
 * Result: per-thread counts and their sum.
 */
#include "cxlsim/kthread.h"

#include "graph_priv.h"
#include "kinfo_priv.h"
#include "klayout_priv.h"

static int cmp_deg(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return *x < *y ? -1 : *x > *y;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Relabels g by degree, largest first (ties by id); lists re-sorted. */
static int relabel(struct kgraph *g)
{
	uint64_t *key = malloc(g->nv * sizeof *key);
	uint32_t *newid = malloc(g->nv * sizeof *newid), *adj = malloc((g->ne ? g->ne : 1) * 4);
	uint32_t *index = calloc((size_t)g->nv + 1, 4);
	if (!key || !newid || !adj || !index) {
		free(key), free(newid), free(adj), free(index);
		return -1;
	}
	for (uint32_t v = 0; v < g->nv; v++)
		key[v] = (uint64_t)(UINT32_MAX - (g->index[v + 1] - g->index[v])) << 32 | v;
	qsort(key, g->nv, sizeof *key, cmp_deg);
	for (uint32_t r = 0; r < g->nv; r++)
		newid[(uint32_t)key[r]] = r;
	for (uint32_t r = 0; r < g->nv; r++) {
		uint32_t v = (uint32_t)key[r];
		index[r + 1] = index[r] + (g->index[v + 1] - g->index[v]);
	}
	for (uint32_t r = 0; r < g->nv; r++) {
		uint32_t v = (uint32_t)key[r];
		for (uint32_t e = g->index[v]; e < g->index[v + 1]; e++)
			adj[index[r] + (e - g->index[v])] = newid[g->adj[e]];
		qsort(adj + index[r], index[r + 1] - index[r], 4, cmp_u32);
	}
	free(g->index);
	free(g->adj);
	g->index = index;
	g->adj = adj;
	free(key);
	free(newid);
	return 0;
}

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	struct kgraph g;
	if (kgraph_generate(&g, "tc", (uint32_t)img->variant, img->size, img->seed, false, err,
			    errlen) != 0)
		return -1;
	if (img->variant == KGRAPH_KRON && relabel(&g) != 0) {
		kgraph_free(&g);
		snprintf(err, errlen, "tc: out of memory");
		return -1;
	}
	struct tc_info *I = calloc(1, sizeof *I);
	if (!I) {
		kgraph_free(&g);
		snprintf(err, errlen, "tc: out of memory");
		return -1;
	}
	img->info = I;
	uint64_t off = 0;
	I->bar_off = klay_take(&off, KL_LINE);
	I->counts_off = klay_take(&off, (uint64_t)img->nthreads * KL_LINE);
	I->total_off = klay_take(&off, KL_LINE);
	kgraph_place(&g, &off, &I->g);
	img->private_bytes = KL_LINE;
	if (klay_alloc(img, "tc", off, err, errlen) != 0) {
		kgraph_free(&g);
		return -1;
	}
	kgraph_write(&g, &I->g, img->shared);
	kgraph_free(&g);
	return 0;
}

/* A sequential reader of a u32 array: one line's worth of loads at a time. */
struct reader {
	uint64_t off;       /* of element 0 */
	uint32_t pos, end;  /* next element, one past the last */
	uint32_t base, n;   /* buf holds elements base .. base + n - 1 */
	uint32_t buf[16];
};

static void reader_init(struct reader *r, uint64_t off, uint32_t lo, uint32_t hi)
{
	*r = (struct reader){.off = off, .pos = lo, .end = hi, .base = lo, .n = 0};
}

/* The next element, or UINT32_MAX past the end. */
static uint32_t reader_next(struct cxs_kt *kt, struct reader *r)
{
	if (r->pos >= r->end)
		return UINT32_MAX;
	if (r->pos >= r->base + r->n) {
		uint32_t h[16];
		r->base = r->pos;
		r->n = r->end - r->pos < 16 ? r->end - r->pos : 16;
		for (uint32_t i = 0; i < r->n; i++)
			h[i] = cxs_kt_ld(kt, ksh(kt, r->off + 4 * (uint64_t)(r->base + i)), 4);
		for (uint32_t i = 0; i < r->n; i++)
			r->buf[i] = (uint32_t)cxs_kt_get(kt, h[i]);
	}
	return r->buf[r->pos++ - r->base];
}

static uint64_t count_vertex(struct cxs_kt *kt, const struct tc_info *I, uint32_t u)
{
	uint32_t ulo = kld32(kt, I->g.index_off + 4 * (uint64_t)u);
	uint32_t uhi = kld32(kt, I->g.index_off + 4 * (uint64_t)u + 4);
	struct reader ru;
	uint64_t total = 0;
	reader_init(&ru, I->g.adj_off, ulo, uhi);
	for (uint32_t v; (v = reader_next(kt, &ru)) != UINT32_MAX && v < u;) {
		uint32_t h0 = cxs_kt_ld(kt, ksh(kt, I->g.index_off + 4 * (uint64_t)v), 4);
		uint32_t h1 = cxs_kt_ld(kt, ksh(kt, I->g.index_off + 4 * (uint64_t)v + 4), 4);
		struct reader rv, it;
		reader_init(&rv, I->g.adj_off, (uint32_t)cxs_kt_get(kt, h0),
			    (uint32_t)cxs_kt_get(kt, h1));
		reader_init(&it, I->g.adj_off, ulo, uhi);
		uint32_t cur = reader_next(kt, &it);
		for (uint32_t w; (w = reader_next(kt, &rv)) != UINT32_MAX && w < v;) {
			while (cur < w)
				cur = reader_next(kt, &it), cxs_kt_compute(kt, 2);
			total += w == cur;
			cxs_kt_compute(kt, 3);
		}
	}
	return total;
}

static void run(struct cxs_kt *kt)
{
	const struct tc_info *I = cxs_kt_image(kt)->info;
	uint32_t T = cxs_kt_count(kt), t = cxs_kt_id(kt);
	uint64_t total = 0;
	cxs_kt_roi_begin(kt);
	for (uint32_t u = t; u < I->g.nv; u += T)
		total += count_vertex(kt, I, u);
	kst64(kt, I->counts_off + (uint64_t)t * KL_LINE, total);
	cxs_kt_barrier(kt, ksh(kt, I->bar_off), T);
	if (t == 0) {
		uint64_t sum = 0;
		for (uint32_t i = 0; i < T; i++)
			sum += kld64(kt, I->counts_off + (uint64_t)i * KL_LINE);
		kst64(kt, I->total_off, sum);
	}
	cxs_kt_roi_end(kt);
	cxs_kt_check_words(kt, I->counts_off + (uint64_t)t * KL_LINE, 8);
	if (t == 0)
		cxs_kt_check_words(kt, I->total_off, 8);
	cxs_kt_result(kt, "triangles", total);
}

const struct cxs_kernel cxs_kernel_tc = {
	.name = "tc",
	.doc = "modelled after GAPBS's tc: ordered triangle count by sorted-list merges (kron relabelled by degree) over a generated graph (variant " KGRAPH_KINDS "; size vertices)",
	.default_size = 16384,
	.deterministic = true,
	.build = build,
	.run = run,
};
