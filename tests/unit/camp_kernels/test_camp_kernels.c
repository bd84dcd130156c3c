/*
 * The kernels modelled after CAMP's suites (src/workload/k_*.c over
 * kinfo_priv.h) on the native backend, each checked against an independent
 * sequential computation written here from the kernel's documented layout:
 * BFS by a FIFO queue, PageRank by plain loops, components by union-find,
 * shortest paths by Dijkstra, betweenness by a sequential Brandes, triangles
 * by brute force, sorts by qsort, histogram by counting, range counts by
 * scanning every point, XSBench by a linear-scan reimplementation, the SLS,
 * attention and MLP by straight loops, the store by replaying its requests
 * on plain arrays, the stencils by loops over copies, mcf by a recursive
 * tree walk. Graph kernels run on both graph kinds. Each kernel also runs
 * under a random schedule (sched_run), where a missing barrier shows up that
 * the native round robin hides: its final image must equal the native one.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxlsim/kthread.h"
#include "kinfo_priv.h"
#include "unit_suites.h"

static void run_kernel(const char *name, uint64_t size, uint64_t variant, uint32_t threads,
		       uint64_t seed, struct cxs_kimage *img, uint8_t **fin)
{
	const struct cxs_kernel *k = cxs_kernel_find(name);
	ck_assert_msg(k != NULL, "kernel %s is not registered", name);
	char err[512] = "";
	*img = (struct cxs_kimage){.size = size, .seed = seed, .nthreads = threads, .variant = variant};
	ck_assert_msg(k->build(img, err, sizeof err) == 0, "%s: build: %s", name, err);
	ck_assert_int_eq(img->shared_bytes % 64, 0);
	ck_assert_msg(cxs_kt_run_native(k, img, fin, err, sizeof err) == 0, "%s: %s", name, err);
}

static uint64_t mixs(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/*
 * The kernel on a flat memory through the simulator's side of the API, a
 * random thread running 1..12 operations at a time; its in-kernel checks
 * compare with `ref`, and the final image must equal it.
 */
static void sched_run(const char *name, const struct cxs_kimage *img, const uint8_t *ref,
		      uint64_t seed)
{
	const struct cxs_kernel *k = cxs_kernel_find(name);
	const uint64_t base = UINT64_C(1) << 40;
	uint32_t T = img->nthreads, live = T;
	uint8_t *mem = malloc(img->shared_bytes), **priv = calloc(T, sizeof *priv);
	struct cxs_kt **kts = calloc(T, sizeof *kts);
	bool *done = calloc(T, sizeof *done);
	char err[512];
	memcpy(mem, img->shared, img->shared_bytes);
	for (uint32_t t = 0; t < T; t++) {
		priv[t] = calloc(1, img->private_bytes + 8);
		struct cxs_kt_params p = {.kernel = k, .img = img, .reference = ref, .id = t,
					  .shared_base = base, .private_base = (uint64_t)(t + 1) << 32};
		kts[t] = cxs_kt_new(&p, err, sizeof err);
		ck_assert_ptr_nonnull(kts[t]);
	}
	for (uint64_t r = seed; live > 0;) {
		r = mixs(r + 1);
		uint32_t t = (uint32_t)(r % T), burst = 1 + (uint32_t)(r >> 32) % 12;
		for (uint32_t b = 0; b < burst && !done[t]; b++) {
			struct cxs_kop op;
			cxs_kt_next(kts[t], &op);
			uint8_t *a = NULL;
			if (op.kind == CXS_KOP_LOAD || op.kind == CXS_KOP_STORE ||
			    op.kind == CXS_KOP_SWAP || op.kind == CXS_KOP_FETCH_ADD) {
				if (op.addr >= base) {
					ck_assert_uint_le(op.addr - base + op.size, img->shared_bytes);
					a = mem + (op.addr - base);
				} else {
					ck_assert_uint_eq((op.addr >> 32) - 1, t);
					ck_assert_uint_le((op.addr & 0xffffffffu) + op.size, img->private_bytes);
					a = priv[t] + (op.addr & 0xffffffffu);
				}
			}
			uint64_t v = 0, mask = op.size < 8 ? (UINT64_C(1) << (8 * op.size)) - 1 : UINT64_MAX;
			switch (op.kind) {
			case CXS_KOP_LOAD:
				memcpy(&v, a, op.size);
				cxs_kt_loaded(kts[t], op.n, v);
				break;
			case CXS_KOP_STORE:
				memcpy(a, &op.value, op.size);
				break;
			case CXS_KOP_SWAP:
			case CXS_KOP_FETCH_ADD: {
				memcpy(&v, a, op.size);
				uint64_t nv = (op.kind == CXS_KOP_SWAP ? op.value : v + op.value) & mask;
				memcpy(a, &nv, op.size);
				cxs_kt_loaded(kts[t], op.n, v);
				break;
			}
			case CXS_KOP_DONE:
				done[t] = true;
				live--;
				break;
			case CXS_KOP_FAIL:
				ck_abort_msg("%s under a random schedule: %s", name, cxs_kt_error(kts[t]));
				break;
			default:
				break;
			}
		}
	}
	for (uint64_t o = 0; o < img->shared_bytes; o += 8)
		ck_assert_msg(kget64(mem, o) == kget64(ref, o),
			      "%s, random schedule: word at %#lx is %#lx, native run %#lx", name,
			      (unsigned long)o, (unsigned long)kget64(mem, o), (unsigned long)kget64(ref, o));
	for (uint32_t t = 0; t < T; t++) {
		cxs_kt_free(kts[t]);
		free(priv[t]);
	}
	free(kts), free(priv), free(done), free(mem);
}

static bool close_rel(double a, double b, double tol)
{
	return fabs(a - b) <= tol * fmax(1e-300, fmax(fabs(a), fabs(b))) || a == b;
}

/* ---- graphs ------------------------------------------------------------------ */

struct csr {
	uint32_t nv, *index, *adj, *w;
};

static struct csr csr_of(const struct cxs_kimage *img, const struct kgraph_layout *L)
{
	struct csr g = {.nv = L->nv};
	g.index = (uint32_t *)malloc(4 * ((size_t)L->nv + 1));
	g.adj = malloc(4 * (L->ne ? L->ne : 1));
	memcpy(g.index, img->shared + L->index_off, 4 * ((size_t)L->nv + 1));
	memcpy(g.adj, img->shared + L->adj_off, 4 * L->ne);
	if (L->w_off) {
		g.w = malloc(4 * (L->ne ? L->ne : 1));
		memcpy(g.w, img->shared + L->w_off, 4 * L->ne);
	}
	ck_assert_uint_eq(g.index[g.nv], L->ne);
	return g;
}

static void csr_free(struct csr *g)
{
	free(g->index), free(g->adj), free(g->w);
}

static uint32_t hub_of(const struct csr *g)
{
	uint32_t best = 0;
	for (uint32_t v = 1; v < g->nv; v++)
		if (g->index[v + 1] - g->index[v] > g->index[best + 1] - g->index[best])
			best = v;
	return best;
}

/* FIFO BFS depths (~0 unreached); returns the vertices reached. */
static uint32_t bfs_depths(const struct csr *g, uint32_t src, uint32_t *depth)
{
	uint32_t *q = malloc(4 * g->nv), qh = 0, qt = 0;
	for (uint32_t v = 0; v < g->nv; v++)
		depth[v] = UINT32_MAX;
	depth[src] = 0;
	q[qt++] = src;
	while (qh < qt) {
		uint32_t u = q[qh++];
		for (uint32_t e = g->index[u]; e < g->index[u + 1]; e++)
			if (depth[g->adj[e]] == UINT32_MAX) {
				depth[g->adj[e]] = depth[u] + 1;
				q[qt++] = g->adj[e];
			}
	}
	free(q);
	return qt;
}

static void check_graph_basics(const struct csr *g)
{
	for (uint32_t u = 0; u < g->nv; u++)
		for (uint32_t e = g->index[u]; e < g->index[u + 1]; e++) {
			uint32_t v = g->adj[e];
			ck_assert_uint_ne(u, v); /* no self loops */
			if (e > g->index[u])
				ck_assert_uint_gt(v, g->adj[e - 1]); /* sorted, no duplicates */
			bool back = false; /* symmetric */
			for (uint32_t f = g->index[v]; f < g->index[v + 1]; f++)
				back |= g->adj[f] == u;
			ck_assert_msg(back, "edge %u-%u has no reverse", u, v);
		}
}

static void bfs_check(uint64_t nv, uint64_t kind, uint32_t T)
{
	struct cxs_kimage img;
	uint8_t *fin;
	run_kernel("bfs", nv, kind, T, 3, &img, &fin);
	const struct bfs_info *I = img.info;
	struct csr g = csr_of(&img, &I->g);
	check_graph_basics(&g);
	uint32_t *depth = malloc(4 * g.nv), maxd = 0;
	uint32_t reached = bfs_depths(&g, hub_of(&g), depth);
	for (uint32_t v = 0; v < g.nv; v++) {
		ck_assert_uint_eq(kget32(fin, I->b.depth_off + 4 * v), depth[v]);
		if (depth[v] != UINT32_MAX && depth[v] > maxd)
			maxd = depth[v];
		ck_assert_uint_eq(kget32(fin, I->b.queue_off + 4 * v), 0);
	}
	ck_assert_uint_eq(kget64(fin, I->hdr_off), maxd + 1);
	ck_assert_uint_eq(kget64(fin, I->b.tail_off), reached);
	ck_assert_uint_gt(reached, g.nv / 2);
	sched_run("bfs", &img, fin, 7);
	free(depth), free(fin);
	csr_free(&g);
	cxs_kimage_free(&img);
}

START_TEST(test_bfs_matches_fifo_bfs)
{
	bfs_check(1024, KGRAPH_KRON, 4);
	bfs_check(900, KGRAPH_ROAD, 3);
}
END_TEST

static void pr_check(uint64_t nv, uint64_t kind, uint32_t T)
{
	struct cxs_kimage img;
	uint8_t *fin;
	run_kernel("pr", nv, kind, T, 5, &img, &fin);
	const struct pr_info *I = img.info;
	struct csr g = csr_of(&img, &I->g);
	double *r = malloc(8 * g.nv), *c = malloc(8 * g.nv);
	for (uint32_t v = 0; v < g.nv; v++)
		r[v] = 1.0 / g.nv;
	for (uint32_t it = 0; it < PR_ITERS; it++) {
		for (uint32_t v = 0; v < g.nv; v++) {
			uint32_t deg = g.index[v + 1] - g.index[v];
			c[v] = deg ? r[v] / deg : 0.0;
		}
		for (uint32_t v = 0; v < g.nv; v++) {
			double s = 0;
			for (uint32_t e = g.index[v]; e < g.index[v + 1]; e++)
				s += c[g.adj[e]];
			r[v] = (1.0 - PR_DAMP) / g.nv + PR_DAMP * s;
		}
	}
	double total = 0;
	for (uint32_t v = 0; v < g.nv; v++) {
		ck_assert_msg(kgetd(fin, I->rank_off + 8 * v) == r[v], "rank %u: %.17g, sequential %.17g", v,
			      kgetd(fin, I->rank_off + 8 * v), r[v]);
		ck_assert(kgetd(fin, I->contrib_off + 8 * v) == c[v]);
		total += r[v];
	}
	ck_assert(total > 0.2 && total <= 1.0 + 1e-9); /* a distribution (dangling mass lost) */
	sched_run("pr", &img, fin, 9);
	free(r), free(c), free(fin);
	csr_free(&g);
	cxs_kimage_free(&img);
}

START_TEST(test_pr_matches_jacobi_loops)
{
	pr_check(512, KGRAPH_KRON, 4);
	pr_check(400, KGRAPH_ROAD, 3);
}
END_TEST

static uint32_t uf_find(uint32_t *p, uint32_t x)
{
	while (p[x] != x)
		x = p[x] = p[p[x]];
	return x;
}

static void cc_check(uint64_t nv, uint64_t kind, uint32_t T)
{
	struct cxs_kimage img;
	uint8_t *fin;
	run_kernel("cc", nv, kind, T, 2, &img, &fin);
	const struct cc_info *I = img.info;
	struct csr g = csr_of(&img, &I->g);
	uint32_t *p = malloc(4 * g.nv), *mn = malloc(4 * g.nv), comps = 0;
	for (uint32_t v = 0; v < g.nv; v++)
		p[v] = v;
	for (uint32_t u = 0; u < g.nv; u++)
		for (uint32_t e = g.index[u]; e < g.index[u + 1]; e++) {
			uint32_t a = uf_find(p, u), b = uf_find(p, g.adj[e]);
			if (a != b)
				p[a < b ? b : a] = a < b ? a : b;
		}
	for (uint32_t v = 0; v < g.nv; v++)
		mn[v] = UINT32_MAX;
	for (uint32_t v = 0; v < g.nv; v++) {
		uint32_t r = uf_find(p, v);
		if (v < mn[r])
			mn[r] = v;
	}
	for (uint32_t v = 0; v < g.nv; v++) {
		uint32_t want = mn[uf_find(p, v)];
		comps += want == v;
		ck_assert_msg(kget32(fin, I->lab_off[0] + 4 * v) == want &&
				      kget32(fin, I->lab_off[1] + 4 * v) == want,
			      "vertex %u: labels %u %u, smallest id of its component %u", v,
			      kget32(fin, I->lab_off[0] + 4 * v), kget32(fin, I->lab_off[1] + 4 * v), want);
	}
	ck_assert_uint_ge(comps, 1);
	ck_assert_uint_ge(kget64(fin, I->hdr_off), 2);
	sched_run("cc", &img, fin, 11);
	free(p), free(mn), free(fin);
	csr_free(&g);
	cxs_kimage_free(&img);
}

START_TEST(test_cc_matches_union_find)
{
	cc_check(1024, KGRAPH_KRON, 4);
	cc_check(625, KGRAPH_ROAD, 3);
}
END_TEST

static void sssp_check(uint64_t nv, uint64_t kind, uint32_t T)
{
	struct cxs_kimage img;
	uint8_t *fin;
	run_kernel("sssp", nv, kind, T, 4, &img, &fin);
	const struct sssp_info *I = img.info;
	struct csr g = csr_of(&img, &I->g);
	ck_assert_ptr_nonnull(g.w);
	uint32_t src = hub_of(&g), *dist = malloc(4 * g.nv);
	bool *doneb = calloc(g.nv, 1);
	for (uint32_t v = 0; v < g.nv; v++)
		dist[v] = UINT32_MAX;
	dist[src] = 0;
	for (;;) { /* Dijkstra, O(V^2) */
		uint32_t u = UINT32_MAX;
		for (uint32_t v = 0; v < g.nv; v++)
			if (!doneb[v] && dist[v] != UINT32_MAX && (u == UINT32_MAX || dist[v] < dist[u]))
				u = v;
		if (u == UINT32_MAX)
			break;
		doneb[u] = true;
		for (uint32_t e = g.index[u]; e < g.index[u + 1]; e++)
			if (dist[u] + g.w[e] < dist[g.adj[e]])
				dist[g.adj[e]] = dist[u] + g.w[e];
	}
	ck_assert_uint_eq(I->source, src);
	for (uint32_t v = 0; v < g.nv; v++) {
		ck_assert_msg(kget32(fin, I->dist_off + 4 * v) == dist[v], "vertex %u: %u, Dijkstra %u", v,
			      kget32(fin, I->dist_off + 4 * v), dist[v]);
		uint32_t cand = kget32(fin, I->cand_off + 4 * v);
		ck_assert_uint_eq(cand, v == src ? UINT32_MAX : dist[v]);
		ck_assert_uint_eq(fin[I->active_off + v], 0);
		ck_assert_uint_eq(kget32(fin, I->queue_off + 4 * v), 0);
	}
	sched_run("sssp", &img, fin, 13);
	free(dist), free(doneb), free(fin);
	csr_free(&g);
	cxs_kimage_free(&img);
}

START_TEST(test_sssp_matches_dijkstra)
{
	sssp_check(512, KGRAPH_KRON, 4);
	sssp_check(400, KGRAPH_ROAD, 3);
}
END_TEST

static void bc_check(uint64_t nv, uint64_t kind, uint32_t T)
{
	struct cxs_kimage img;
	uint8_t *fin;
	run_kernel("bc", nv, kind, T, 6, &img, &fin);
	const struct bc_info *I = img.info;
	struct csr g = csr_of(&img, &I->g);
	uint32_t *depth = malloc(4 * g.nv), maxd = 0, src = hub_of(&g);
	double *sigma = calloc(g.nv, 8), *delta = calloc(g.nv, 8);
	bfs_depths(&g, src, depth);
	for (uint32_t v = 0; v < g.nv; v++)
		if (depth[v] != UINT32_MAX && depth[v] > maxd)
			maxd = depth[v];
	sigma[src] = 1;
	for (uint32_t d = 1; d <= maxd; d++) /* pull, in neighbour order */
		for (uint32_t v = 0; v < g.nv; v++)
			if (depth[v] == d) {
				double s = 0;
				for (uint32_t e = g.index[v]; e < g.index[v + 1]; e++)
					if (depth[g.adj[e]] == d - 1)
						s += sigma[g.adj[e]];
				sigma[v] = s;
			}
	for (uint32_t d = maxd; d-- > 0;)
		for (uint32_t v = 0; v < g.nv; v++)
			if (depth[v] == d) {
				double s = 0;
				for (uint32_t e = g.index[v]; e < g.index[v + 1]; e++)
					if (depth[g.adj[e]] == d + 1)
						s += sigma[v] / sigma[g.adj[e]] * (1.0 + delta[g.adj[e]]);
				delta[v] = s;
			}
	for (uint32_t v = 0; v < g.nv; v++) {
		ck_assert_uint_eq(kget32(fin, I->b.depth_off + 4 * v), depth[v]);
		ck_assert_msg(kgetd(fin, I->sigma_off + 8 * v) == sigma[v], "sigma %u: %.17g vs %.17g", v,
			      kgetd(fin, I->sigma_off + 8 * v), sigma[v]);
		ck_assert_msg(kgetd(fin, I->delta_off + 8 * v) == delta[v], "delta %u: %.17g vs %.17g", v,
			      kgetd(fin, I->delta_off + 8 * v), delta[v]);
	}
	ck_assert_uint_eq(kget64(fin, I->hdr_off), maxd + 1);
	sched_run("bc", &img, fin, 15);
	free(depth), free(sigma), free(delta), free(fin);
	csr_free(&g);
	cxs_kimage_free(&img);
}

START_TEST(test_bc_matches_sequential_brandes)
{
	bc_check(512, KGRAPH_KRON, 4);
	bc_check(400, KGRAPH_ROAD, 3);
}
END_TEST

static bool has_edge(const struct csr *g, uint32_t u, uint32_t v)
{
	for (uint32_t e = g->index[u]; e < g->index[u + 1]; e++)
		if (g->adj[e] == v)
			return true;
	return false;
}

static void tc_check(uint64_t nv, uint64_t kind, uint32_t T)
{
	struct cxs_kimage img;
	uint8_t *fin;
	run_kernel("tc", nv, kind, T, 8, &img, &fin);
	const struct tc_info *I = img.info;
	struct csr g = csr_of(&img, &I->g);
	check_graph_basics(&g);
	uint64_t tri = 0, sum = 0;
	for (uint32_t a = 0; a < g.nv; a++) /* every edge a < b, every c > b adjacent to both */
		for (uint32_t e = g.index[a]; e < g.index[a + 1]; e++) {
			uint32_t b = g.adj[e];
			if (b <= a)
				continue;
			for (uint32_t f = g.index[b]; f < g.index[b + 1]; f++)
				if (g.adj[f] > b && has_edge(&g, a, g.adj[f]))
					tri++;
		}
	for (uint32_t t = 0; t < T; t++)
		sum += kget64(fin, I->counts_off + 64 * t);
	ck_assert_uint_eq(kget64(fin, I->total_off), tri);
	ck_assert_uint_eq(sum, tri);
	ck_assert_uint_gt(tri, 0);
	sched_run("tc", &img, fin, 17);
	free(fin);
	csr_free(&g);
	cxs_kimage_free(&img);
}

START_TEST(test_tc_matches_brute_force)
{
	tc_check(1024, KGRAPH_KRON, 4);
	tc_check(900, KGRAPH_ROAD, 3);
}
END_TEST

/* ---- PBBS --------------------------------------------------------------------- */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

START_TEST(test_isort_matches_qsort)
{
	struct cxs_kimage img;
	uint8_t *fin;
	run_kernel("isort", 5000, 0, 3, 1, &img, &fin);
	const struct isort_info *I = img.info;
	uint32_t *k = malloc(4 * I->n);
	memcpy(k, img.shared + I->key_off[0], 4 * I->n);
	qsort(k, I->n, 4, cmp_u32);
	for (uint64_t i = 0; i < I->n; i++) /* three passes: the result is in B */
		ck_assert_uint_eq(kget32(fin, I->key_off[1] + 4 * i), k[i]);
	sched_run("isort", &img, fin, 19);
	free(k), free(fin);
	cxs_kimage_free(&img);
}
END_TEST

static void msort_check(uint64_t n, uint32_t T)
{
	struct cxs_kimage img;
	uint8_t *fin;
	run_kernel("msort", n, 0, T, 2, &img, &fin);
	const struct msort_info *I = img.info;
	uint64_t *k = malloc(8 * n);
	memcpy(k, img.shared + I->arr_off[0], 8 * n);
	qsort(k, n, 8, cmp_u64);
	uint32_t P = 1, flips = 0;
	while (P * 2 <= T)
		P *= 2;
	for (uint64_t w = 16; w < (n + P - 1) / P; w *= 2)
		flips++;
	for (uint32_t g = 2; g <= P; g *= 2)
		flips++;
	for (uint64_t i = 0; i < n; i++)
		ck_assert_msg(kget64(fin, I->arr_off[flips % 2] + 8 * i) == k[i], "T=%u key %lu", T,
			      (unsigned long)i);
	sched_run("msort", &img, fin, 21);
	free(k), free(fin);
	cxs_kimage_free(&img);
}

START_TEST(test_msort_matches_qsort)
{
	msort_check(3001, 4);
	msort_check(2048, 3); /* 2 threads merge, 1 only waits */
	msort_check(777, 8);
}
END_TEST

START_TEST(test_histogram_matches_counting)
{
	struct cxs_kimage img;
	uint8_t *fin;
	run_kernel("histogram", 20000, 256, 3, 3, &img, &fin);
	const struct hist_info *I = img.info;
	uint32_t cnt[256] = {0}, nonzero = 0;
	for (uint64_t i = 0; i < I->n; i++)
		cnt[kget32(img.shared, I->key_off + 4 * i)]++;
	for (uint32_t b = 0; b < 256; b++) {
		ck_assert_uint_eq(kget32(fin, I->res_off + 4 * b), cnt[b]);
		nonzero += cnt[b] > 0;
	}
	ck_assert_uint_gt(cnt[0], cnt[255]); /* skewed towards small buckets */
	ck_assert_uint_gt(nonzero, 100);
	sched_run("histogram", &img, fin, 23);
	free(fin);
	cxs_kimage_free(&img);
}
END_TEST

START_TEST(test_range2d_matches_scan)
{
	struct cxs_kimage img;
	uint8_t *fin;
	run_kernel("range2d", 3000, 0, 3, 4, &img, &fin);
	const struct rq_info *I = img.info;
	uint64_t found = 0;
	for (uint64_t q = 0; q < I->nq; q++) {
		uint32_t r[4], c = 0;
		for (int f = 0; f < 4; f++)
			r[f] = kget32(img.shared, I->q_off + 16 * q + 4 * f);
		for (uint64_t p = 0; p < I->npts; p++) {
			uint32_t x = kget32(img.shared, I->pt_off + 8 * p);
			uint32_t y = kget32(img.shared, I->pt_off + 8 * p + 4);
			c += x >= r[0] && x < r[2] && y >= r[1] && y < r[3];
		}
		ck_assert_uint_eq(kget32(fin, I->res_off + 4 * q), c);
		found += c;
	}
	ck_assert_uint_gt(found, 0);
	sched_run("range2d", &img, fin, 25);
	free(fin);
	cxs_kimage_free(&img);
}
END_TEST

/* ---- XSBench ---------------------------------------------------------------------- */

START_TEST(test_xsbench_matches_linear_scan)
{
	struct cxs_kimage img;
	uint8_t *fin;
	run_kernel("xsbench", 60, 0, 3, 5, &img, &fin);
	const struct xs_info *I = img.info;
	const uint8_t *m = img.shared;
	for (uint64_t i = 0; i < I->nlook; i++) {
		double e;
		uint32_t mat;
		xs_draw(img.seed, i, &e, &mat);
		uint64_t lo = 0; /* the last union energy <= e, at most nunion - 2 */
		for (uint64_t u = 1; u + 1 < I->nunion; u++)
			if (kgetd(m, I->union_off + 8 * u) <= e)
				lo = u;
		uint64_t mo = I->mat_off + (uint64_t)mat * XS_MAT_BYTES;
		double macro[5] = {0};
		ck_assert_uint_eq(kget32(m, mo), xs_mat_nucs[mat]);
		for (uint32_t k = 0; k < xs_mat_nucs[mat]; k++) {
			uint32_t nuc = kget32(m, mo + 4 + 4 * k);
			double conc = kgetd(m, mo + 256 + 8 * k);
			uint64_t p = kget32(m, I->index_off + 4 * (lo * XS_NUCS + nuc));
			uint64_t o = I->grid_off + ((uint64_t)nuc * I->ngp + p) * XS_PT_BYTES;
			double fr = (kgetd(m, o + 48) - e) / (kgetd(m, o + 48) - kgetd(m, o));
			for (uint32_t x = 0; x < 5; x++) {
				double lv = kgetd(m, o + 8 + 8 * x), hv = kgetd(m, o + 56 + 8 * x);
				macro[x] += conc * (hv - fr * (hv - lv));
			}
		}
		uint32_t best = 0;
		for (uint32_t x = 1; x < 5; x++)
			if (macro[x] > macro[best])
				best = x;
		uint64_t h = best + 1;
		for (uint32_t x = 0; x < 5; x++) {
			uint64_t bits;
			memcpy(&bits, &macro[x], 8);
			h = (h ^ bits) * UINT64_C(0x100000001b3);
		}
		ck_assert_msg(kget64(fin, I->res_off + 8 * i) == h, "lookup %lu", (unsigned long)i);
	}
	sched_run("xsbench", &img, fin, 27);
	free(fin);
	cxs_kimage_free(&img);
}
END_TEST

/* ---- DLRM, GPT-2 ------------------------------------------------------------------- */

START_TEST(test_dlrm_matches_direct_sums)
{
	struct cxs_kimage img;
	uint8_t *fin;
	run_kernel("dlrm", 500, 0, 3, 6, &img, &fin);
	const struct dlrm_info *I = img.info;
	for (uint64_t b = 0; b < I->bags; b++) {
		float acc[DLRM_DIM] = {0};
		for (uint32_t p = 0; p < DLRM_POOL; p++) {
			uint32_t row = kget32(img.shared, I->idx_off + 4 * (b * DLRM_POOL + p));
			ck_assert_uint_lt(row, I->rows);
			for (uint32_t d = 0; d < DLRM_DIM; d++)
				acc[d] += kgetf(img.shared, I->table_off + 4 * ((uint64_t)row * DLRM_DIM + d));
		}
		for (uint32_t d = 0; d < DLRM_DIM; d++)
			ck_assert(kgetf(fin, I->out_off + 4 * (b * DLRM_DIM + d)) == acc[d]);
	}
	sched_run("dlrm", &img, fin, 29);
	free(fin);
	cxs_kimage_free(&img);
}
END_TEST

START_TEST(test_gpt2_attn_matches_direct_softmax)
{
	struct cxs_kimage img;
	uint8_t *fin;
	run_kernel("gpt2_attn", 40, 0, 5, 7, &img, &fin);
	const struct attn_info *I = img.info;
	const uint8_t *m = img.shared;
	for (uint32_t t = 0; t < ATTN_QTOK; t++)
		for (uint32_t h = 0; h < ATTN_HEADS; h++) {
			uint64_t qo = I->q_off + 4 * ((uint64_t)(t * ATTN_HEADS + h) * ATTN_HDIM);
			uint64_t cache = (uint64_t)h * I->ctx * ATTN_HDIM;
			double sc[64], mx = -INFINITY, sum = 0, out[ATTN_HDIM] = {0};
			ck_assert_uint_le(I->ctx, 64);
			for (uint64_t j = 0; j < I->ctx; j++) {
				double dot = 0;
				for (uint32_t d = 0; d < ATTN_HDIM; d++)
					dot += (double)kgetf(m, qo + 4 * d) *
					       kgetf(m, I->k_off + 4 * (cache + j * ATTN_HDIM + d));
				sc[j] = dot / sqrt((double)ATTN_HDIM);
				mx = fmax(mx, sc[j]);
			}
			for (uint64_t j = 0; j < I->ctx; j++) {
				double p = exp(sc[j] - mx);
				sum += p;
				for (uint32_t d = 0; d < ATTN_HDIM; d++)
					out[d] += p * kgetf(m, I->v_off + 4 * (cache + j * ATTN_HDIM + d));
			}
			double scale = 0; /* float sums: compare to the vector's magnitude */
			for (uint32_t d = 0; d < ATTN_HDIM; d++)
				scale = fmax(scale, fabs(out[d] / sum));
			for (uint32_t d = 0; d < ATTN_HDIM; d++)
				ck_assert_msg(fabs(kgetf(fin, qo - I->q_off + I->out_off + 4 * d) - out[d] / sum) <=
						      1e-4 * scale,
					      "token %u head %u dim %u: %g vs %g", t, h, d,
					      kgetf(fin, qo - I->q_off + I->out_off + 4 * d), out[d] / sum);
		}
	sched_run("gpt2_attn", &img, fin, 31);
	free(fin);
	cxs_kimage_free(&img);
}
END_TEST

START_TEST(test_gpt2_mlp_matches_gemv)
{
	struct cxs_kimage img;
	uint8_t *fin;
	run_kernel("gpt2_mlp", 32, 0, 3, 8, &img, &fin);
	const struct mlp_info *I = img.info;
	const uint8_t *m = img.shared;
	uint64_t d = I->d;
	double *h = malloc(8 * MLP_BTOK * 4 * d);
	for (uint32_t t = 0; t < MLP_BTOK; t++)
		for (uint64_t r = 0; r < 4 * d; r++) {
			double s = 0;
			for (uint64_t k = 0; k < d; k++)
				s += (double)kgetf(m, I->w1_off + 4 * (r * d + k)) * kgetf(m, I->x_off + 4 * (t * d + k));
			double g = 0.5 * s * (1 + tanh(0.7978845608 * (s + 0.044715 * s * s * s)));
			h[t * 4 * d + r] = g;
			ck_assert_msg(close_rel(kgetf(fin, I->h_off + 4 * (t * 4 * d + r)), g, 1e-3) ||
					      fabs(g) < 1e-5,
				      "h[%u][%lu] %g vs %g", t, (unsigned long)r,
				      kgetf(fin, I->h_off + 4 * (t * 4 * d + r)), g);
		}
	for (uint32_t t = 0; t < MLP_BTOK; t++)
		for (uint64_t r = 0; r < d; r++) {
			double s = 0;
			for (uint64_t k = 0; k < 4 * d; k++)
				s += (double)kgetf(m, I->w2_off + 4 * (r * 4 * d + k)) *
				     kgetf(fin, I->h_off + 4 * (t * 4 * d + k));
			ck_assert_msg(close_rel(kgetf(fin, I->y_off + 4 * (t * d + r)), s, 1e-3) || fabs(s) < 1e-5,
				      "y[%u][%lu] %g vs %g", t, (unsigned long)r,
				      kgetf(fin, I->y_off + 4 * (t * d + r)), s);
		}
	sched_run("gpt2_mlp", &img, fin, 33);
	free(h), free(fin);
	cxs_kimage_free(&img);
}
END_TEST

/* ---- the store ------------------------------------------------------------------------- */

START_TEST(test_kvstore_matches_replayed_requests)
{
	struct cxs_kimage img;
	uint8_t *fin;
	uint32_t T = 3;
	run_kernel("kvstore", 3000, 0, T, 9, &img, &fin);
	const struct kv_info *I = img.info;
	uint8_t *m = malloc(img.shared_bytes);
	memcpy(m, img.shared, img.shared_bytes);
	uint64_t gets = 0;
	for (uint32_t t = 0; t < T; t++) {
		const struct kv_shard *S = &I->sh[t];
		uint64_t sum = 0;
		for (uint64_t r = 0; r < I->ops; r++) {
			uint64_t key, vs, at = UINT64_MAX;
			bool get;
			kv_request(img.seed, t, r, S->nkeys, &key, &get, &vs);
			for (uint64_t i = 0; i < S->nkeys; i++) /* find the key's entry by scanning */
				if (kget64(m, S->entry_off + KV_ENTRY_BYTES * i) == key)
					at = S->entry_off + KV_ENTRY_BYTES * i;
			ck_assert_uint_ne(at, UINT64_MAX);
			uint64_t vo = kget64(m, at + 8), len = kget64(m, at + 16);
			ck_assert_uint_eq(len, kv_value_len(key));
			for (uint64_t w = 0; w < len; w += 8) {
				if (get)
					sum = (sum ^ kget64(m, vo + w)) * UINT64_C(0x100000001b3);
				else
					kput64(m, vo + w, krand(&vs));
			}
			gets += get;
		}
		ck_assert_uint_eq(kget64(fin, I->sum_off + 64 * t), sum);
	}
	for (uint64_t o = I->sh[0].bucket_off; o < img.shared_bytes; o += 8)
		ck_assert_msg(kget64(fin, o) == kget64(m, o), "word %#lx", (unsigned long)o);
	ck_assert(gets > 0.8 * T * I->ops && gets < T * I->ops); /* 90 % GET */
	sched_run("kvstore", &img, fin, 35);
	free(m), free(fin);
	cxs_kimage_free(&img);
}
END_TEST

/* ---- SPEC-like codes, STREAM, SpMV ------------------------------------------------------- */

START_TEST(test_fotonik_matches_yee_loops)
{
	struct cxs_kimage img;
	uint8_t *fin;
	run_kernel("fotonik", 9, 0, 4, 10, &img, &fin);
	const struct fdtd_info *I = img.info;
	uint64_t n = I->n, cells = n * n * n;
	double *a[FD_NARR];
	for (int k = 0; k < FD_NARR; k++) {
		a[k] = malloc(8 * cells);
		memcpy(a[k], img.shared + I->arr[k], 8 * cells);
	}
#define AT(k, i, j, l) a[k][((i) * n + (j)) * n + (l)]
	for (uint64_t i = 0; i + 1 < n; i++)
		for (uint64_t j = 0; j + 1 < n; j++)
			for (uint64_t l = 0; l + 1 < n; l++) {
				AT(FD_HX, i, j, l) += 0.5 * ((AT(FD_EY, i, j, l + 1) - AT(FD_EY, i, j, l)) -
							    (AT(FD_EZ, i, j + 1, l) - AT(FD_EZ, i, j, l)));
				AT(FD_HY, i, j, l) += 0.5 * ((AT(FD_EZ, i + 1, j, l) - AT(FD_EZ, i, j, l)) -
							    (AT(FD_EX, i, j, l + 1) - AT(FD_EX, i, j, l)));
				AT(FD_HZ, i, j, l) += 0.5 * ((AT(FD_EX, i, j + 1, l) - AT(FD_EX, i, j, l)) -
							    (AT(FD_EY, i + 1, j, l) - AT(FD_EY, i, j, l)));
			}
	for (uint64_t i = 1; i < n; i++)
		for (uint64_t j = 1; j < n; j++)
			for (uint64_t l = 1; l < n; l++) {
				double c = AT(FD_EPS, i, j, l);
				AT(FD_EX, i, j, l) += c * ((AT(FD_HZ, i, j, l) - AT(FD_HZ, i, j - 1, l)) -
							  (AT(FD_HY, i, j, l) - AT(FD_HY, i, j, l - 1)));
				AT(FD_EY, i, j, l) += c * ((AT(FD_HX, i, j, l) - AT(FD_HX, i, j, l - 1)) -
							  (AT(FD_HZ, i, j, l) - AT(FD_HZ, i - 1, j, l)));
				AT(FD_EZ, i, j, l) += c * ((AT(FD_HY, i, j, l) - AT(FD_HY, i - 1, j, l)) -
							  (AT(FD_HX, i, j, l) - AT(FD_HX, i, j - 1, l)));
			}
#undef AT
	for (int k = 0; k < FD_EPS; k++)
		for (uint64_t c = 0; c < cells; c++)
			ck_assert_msg(close_rel(kgetd(fin, I->arr[k] + 8 * c), a[k][c], 1e-12),
				      "field %d cell %lu: %.17g vs %.17g", k, (unsigned long)c,
				      kgetd(fin, I->arr[k] + 8 * c), a[k][c]);
	sched_run("fotonik", &img, fin, 37);
	for (int k = 0; k < FD_NARR; k++)
		free(a[k]);
	free(fin);
	cxs_kimage_free(&img);
}
END_TEST

START_TEST(test_roms_matches_direct_solve)
{
	struct cxs_kimage img;
	uint8_t *fin;
	run_kernel("roms", 11, 0, 3, 11, &img, &fin);
	const struct roms_info *I = img.info;
	uint64_t nx = I->nx, cells = ROMS_NZ * nx * nx;
	double *a[ROMS_NARR];
	for (int k = 0; k < ROMS_NARR; k++) {
		a[k] = malloc(8 * cells);
		memcpy(a[k], img.shared + I->arr[k], 8 * cells);
	}
#define AT(k, z, j, i) a[k][((z) * nx + (j)) * nx + (i)]
	for (uint64_t z = 0; z < ROMS_NZ; z++)
		for (uint64_t j = 1; j + 1 < nx; j++)
			for (uint64_t i = 1; i + 1 < nx; i++) {
				double tc = AT(ROMS_T, z, j, i), te = AT(ROMS_T, z, j, i + 1), tw = AT(ROMS_T, z, j, i - 1);
				double tn = AT(ROMS_T, z, j + 1, i), ts = AT(ROMS_T, z, j - 1, i);
				double adv = -0.5 * (AT(ROMS_U, z, j, i + 1) * (te + tc) - AT(ROMS_U, z, j, i) * (tc + tw) +
						     AT(ROMS_V, z, j + 1, i) * (tn + tc) - AT(ROMS_V, z, j, i) * (tc + ts));
				AT(ROMS_TN, z, j, i) = tc + 0.1 * (adv + 0.05 * (te + tw + tn + ts - 4 * tc));
			}
	for (uint64_t j = 1; j + 1 < nx; j++)
		for (uint64_t i = 0; i < nx; i++) { /* Thomas down each column */
			double cp = 0, dp = 0;
			for (uint64_t z = 0; z < ROMS_NZ; z++) {
				double ak = AT(ROMS_AKV, z, j, i);
				double b = 1 + 2 * ak + (z > 0 ? ak * cp : 0);
				cp = (z + 1 < ROMS_NZ ? -ak : 0) / b;
				dp = (AT(ROMS_TN, z, j, i) + ak * dp) / b;
				AT(ROMS_CP, z, j, i) = cp;
				AT(ROMS_DP, z, j, i) = dp;
			}
			double below = 0;
			for (uint64_t z = ROMS_NZ; z-- > 0;) {
				below = AT(ROMS_DP, z, j, i) - AT(ROMS_CP, z, j, i) * below;
				AT(ROMS_T, z, j, i) = below;
			}
		}
#undef AT
	static const int checked[] = {ROMS_T, ROMS_TN, ROMS_CP, ROMS_DP};
	for (int q = 0; q < 4; q++)
		for (uint64_t c = 0; c < cells; c++)
			ck_assert_msg(close_rel(kgetd(fin, I->arr[checked[q]] + 8 * c), a[checked[q]][c], 1e-12),
				      "array %d cell %lu: %.17g vs %.17g", checked[q], (unsigned long)c,
				      kgetd(fin, I->arr[checked[q]] + 8 * c), a[checked[q]][c]);
	sched_run("roms", &img, fin, 39);
	for (int k = 0; k < ROMS_NARR; k++)
		free(a[k]);
	free(fin);
	cxs_kimage_free(&img);
}
END_TEST

START_TEST(test_lbm_matches_direct_steps)
{
	struct cxs_kimage img;
	uint8_t *fin;
	run_kernel("lbm", 10, 0, 3, 12, &img, &fin);
	const struct lbm_info *I = img.info;
	uint64_t n = I->n, vals = LBM_Q * n * n;
	double *f[2] = {malloc(8 * vals), malloc(8 * vals)};
	memcpy(f[0], img.shared + I->lat[0], 8 * vals);
	memset(f[1], 0, 8 * vals);
	for (uint32_t s = 0; s < LBM_STEPS; s++) {
		double *src = f[s % 2], *dst = f[1 - s % 2];
		for (uint64_t y = 0; y < n; y++)
			for (uint64_t x = 0; x < n; x++) {
				double g[LBM_Q], rho = 0, ux = 0, uy = 0;
				for (uint32_t q = 0; q < LBM_Q; q++) {
					uint64_t sx = (x + n - (uint64_t)(int64_t)lbm_cx[q]) % n;
					uint64_t sy = (y + n - (uint64_t)(int64_t)lbm_cy[q]) % n;
					g[q] = src[(sy * n + sx) * LBM_Q + q];
					rho += g[q], ux += g[q] * lbm_cx[q], uy += g[q] * lbm_cy[q];
				}
				ux /= rho, uy /= rho;
				for (uint32_t q = 0; q < LBM_Q; q++) {
					double cu = lbm_cx[q] * ux + lbm_cy[q] * uy;
					double feq = lbm_w[q] * rho * (1 + 3 * cu + 4.5 * cu * cu - 1.5 * (ux * ux + uy * uy));
					dst[(y * n + x) * LBM_Q + q] = g[q] - 1.7 * (g[q] - feq);
				}
			}
	}
	double m0 = 0, m2 = 0;
	for (uint64_t c = 0; c < vals; c++) {
		m0 += f[0][c];
		m2 += f[LBM_STEPS % 2][c];
		for (int l = 0; l < 2; l++)
			ck_assert(close_rel(kgetd(fin, I->lat[l] + 8 * c), f[l][c], 1e-12));
	}
	ck_assert(close_rel(m0, m2, 1e-9)); /* BGK conserves mass */
	sched_run("lbm", &img, fin, 41);
	free(f[0]), free(f[1]), free(fin);
	cxs_kimage_free(&img);
}
END_TEST

/* mcf's potentials by a recursive walk over pred (independent of child/sibling). */
static int64_t mcf_pot(uint8_t *m, const struct mcf_info *I, uint32_t t, uint32_t v, bool *done)
{
	uint64_t o = I->base_off + t * I->stride + (uint64_t)v * MCF_NODE_BYTES;
	if (v == 0 || done[v])
		return (int64_t)kget64(m, o);
	int64_t p = mcf_pot(m, I, t, kget32(m, o + 8), done) + (int64_t)kget64(m, o + 24);
	kput64(m, o, (uint64_t)p);
	done[v] = true;
	return p;
}

START_TEST(test_mcf_matches_direct_pricing)
{
	struct cxs_kimage img;
	uint8_t *fin;
	uint32_t T = 3;
	run_kernel("mcf", 900, 0, T, 13, &img, &fin);
	const struct mcf_info *I = img.info;
	uint8_t *m = malloc(img.shared_bytes);
	memcpy(m, img.shared, img.shared_bytes);
	bool *done = malloc(I->nodes);
	for (uint32_t t = 0; t < T; t++)
		for (uint32_t it = 0; it < MCF_ITERS; it++) {
			uint64_t nb = I->base_off + t * I->stride, ab = nb + I->nodes * MCF_NODE_BYTES;
			int64_t best = 0;
			uint64_t best_arc = UINT64_MAX;
			for (uint64_t a = 0; a < I->arcs; a++) {
				uint64_t o = ab + a * MCF_ARC_BYTES;
				if (kget32(m, o + 16))
					continue;
				int64_t red = (int64_t)kget64(m, o + 8) -
					      (int64_t)kget64(m, nb + (uint64_t)kget32(m, o) * MCF_NODE_BYTES) +
					      (int64_t)kget64(m, nb + (uint64_t)kget32(m, o + 4) * MCF_NODE_BYTES);
				if (red < best)
					best = red, best_arc = a;
			}
			if (best_arc != UINT64_MAX) {
				uint64_t o = ab + best_arc * MCF_ARC_BYTES;
				kput32(m, o + 16, 1);
				uint64_t w = nb + (uint64_t)kget32(m, o) * MCF_NODE_BYTES + 24;
				kput64(m, w, kget64(m, w) + (uint64_t)(-best % 97));
			}
			memset(done, 0, I->nodes);
			for (uint32_t v = 1; v < I->nodes; v++)
				mcf_pot(m, I, t, v, done);
		}
	for (uint64_t o = I->base_off; o < I->base_off + T * I->stride; o += 8)
		ck_assert_msg(kget64(fin, o) == kget64(m, o), "word %#lx", (unsigned long)o);
	sched_run("mcf", &img, fin, 43);
	free(done), free(m), free(fin);
	cxs_kimage_free(&img);
}
END_TEST

START_TEST(test_triad_and_spmv_match_loops)
{
	struct cxs_kimage img;
	uint8_t *fin;
	run_kernel("triad", 100, 0, 3, 14, &img, &fin);
	const struct triad_info *I = img.info;
	for (uint64_t i = 0; i < I->n; i++)
		ck_assert(kgetd(fin, I->a_off + 8 * i) ==
			  kgetd(img.shared, I->b_off + 8 * i) + 3.0 * kgetd(img.shared, I->c_off + 8 * i));
	sched_run("triad", &img, fin, 45);
	free(fin);
	cxs_kimage_free(&img);

	run_kernel("spmv", 1000, 0, 3, 15, &img, &fin);
	const struct spmv_info *S = img.info;
	const uint8_t *m = img.shared;
	double *y = malloc(8 * S->n), *x2 = malloc(8 * S->n);
	for (int pass = 0; pass < 2; pass++)
		for (uint64_t r = 0; r < S->n; r++) {
			double s = 0;
			for (uint32_t k = kget32(m, S->row_off + 4 * r); k < kget32(m, S->row_off + 4 * r + 4); k++) {
				uint32_t c = kget32(m, S->col_off + 4 * (uint64_t)k);
				s += kgetd(m, S->val_off + 8 * (uint64_t)k) * (pass ? y[c] : kgetd(m, S->x_off + 8 * (uint64_t)c));
			}
			(pass ? x2 : y)[r] = pass ? s * 0.125 : s;
		}
	for (uint64_t r = 0; r < S->n; r++) {
		ck_assert(close_rel(kgetd(fin, S->y_off + 8 * r), y[r], 1e-12));
		ck_assert(close_rel(kgetd(fin, S->x_off + 8 * r), x2[r], 1e-12));
	}
	sched_run("spmv", &img, fin, 47);
	free(y), free(x2), free(fin);
	cxs_kimage_free(&img);
}
END_TEST

/* ---- registry and input checks ---------------------------------------------------------- */

START_TEST(test_registry_docs_and_bad_sizes)
{
	static const char *const names[] = {"bfs", "pr", "cc", "sssp", "bc", "tc", "isort", "msort",
					    "histogram", "range2d", "xsbench", "dlrm", "gpt2_attn",
					    "gpt2_mlp", "kvstore", "fotonik", "roms", "lbm", "mcf",
					    "triad", "spmv"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		const struct cxs_kernel *k = cxs_kernel_find(names[i]);
		ck_assert_msg(k != NULL, "%s missing", names[i]);
		ck_assert_msg(strstr(k->doc, "modelled after"), "%s: doc must say what it is modelled after",
			      names[i]);
		ck_assert(k->deterministic && k->default_size > 0);
		struct cxs_kimage img = {.size = 0, .seed = 1, .nthreads = 4};
		char err[256] = "";
		ck_assert_msg(k->build(&img, err, sizeof err) == -1, "%s accepts size 0", names[i]);
		ck_assert_msg(strstr(err, names[i]) && strstr(err, "size"), "%s: unclear message '%s'",
			      names[i], err);
		cxs_kimage_free(&img);
	}
	/* A graph kind that does not exist, a ptrchase chain count that does not divide the lines. */
	struct cxs_kimage img = {.size = 1024, .seed = 1, .nthreads = 2, .variant = 7};
	char err[256] = "";
	ck_assert_int_eq(cxs_kernel_find("bfs")->build(&img, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "workload.variant"));
	cxs_kimage_free(&img);
	img = (struct cxs_kimage){.size = 3, .seed = 1, .nthreads = 2, .variant = 5};
	ck_assert_int_eq(cxs_kernel_find("ptrchase")->build(&img, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "chains"));
	cxs_kimage_free(&img);
}
END_TEST

START_TEST(test_ptrchase_chains_visit_every_line)
{
	for (uint64_t chains = 1; chains <= 8; chains *= 2) {
		struct cxs_kimage img;
		uint8_t *fin;
		run_kernel("ptrchase", 64, chains, 2, 3, &img, &fin);
		uint64_t lines = 64 * 1024 / 64;
		for (uint32_t t = 0; t < 2; t++) {
			uint64_t base = t * 64 * 1024;
			for (uint64_t c = 0; c < chains; c++) { /* each chain is one cycle over its lines */
				uint64_t off = base + c * 64, steps = 0;
				do {
					ck_assert_uint_eq((off - base) / 64 % chains, c);
					off = kget64(img.shared, off);
					steps++;
				} while (off != base + c * 64 && steps <= lines);
				ck_assert_uint_eq(steps, lines / chains);
			}
		}
		free(fin);
		cxs_kimage_free(&img);
	}
}
END_TEST

static void add_case(Suite *s, const char *name, const TTest *test)
{
	TCase *tc = tcase_create(name);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test);
	suite_add_tcase(s, tc);
}

Suite *camp_kernels_suite(void)
{
	Suite *s = suite_create("camp_kernels");
	add_case(s, "registry", test_registry_docs_and_bad_sizes);
	add_case(s, "ptrchase", test_ptrchase_chains_visit_every_line);
	add_case(s, "bfs", test_bfs_matches_fifo_bfs);
	add_case(s, "pr", test_pr_matches_jacobi_loops);
	add_case(s, "cc", test_cc_matches_union_find);
	add_case(s, "sssp", test_sssp_matches_dijkstra);
	add_case(s, "bc", test_bc_matches_sequential_brandes);
	add_case(s, "tc", test_tc_matches_brute_force);
	add_case(s, "isort", test_isort_matches_qsort);
	add_case(s, "msort", test_msort_matches_qsort);
	add_case(s, "histogram", test_histogram_matches_counting);
	add_case(s, "range2d", test_range2d_matches_scan);
	add_case(s, "xsbench", test_xsbench_matches_linear_scan);
	add_case(s, "dlrm", test_dlrm_matches_direct_sums);
	add_case(s, "gpt2_attn", test_gpt2_attn_matches_direct_softmax);
	add_case(s, "gpt2_mlp", test_gpt2_mlp_matches_gemv);
	add_case(s, "kvstore", test_kvstore_matches_replayed_requests);
	add_case(s, "fotonik", test_fotonik_matches_yee_loops);
	add_case(s, "roms", test_roms_matches_direct_solve);
	add_case(s, "lbm", test_lbm_matches_direct_steps);
	add_case(s, "mcf", test_mcf_matches_direct_pricing);
	add_case(s, "triad_spmv", test_triad_and_spmv_match_loops);
	return s;
}
