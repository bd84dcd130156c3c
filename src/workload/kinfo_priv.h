/*
 * kinfo_priv.h — the layouts (img->info) and input generators of the
 * kernels modelled after CAMP's suites, shared by each kernel (k_*.c, whose
 * module header documents its layout) and by the unit tests that check the
 * kernels' results against independent sequential computations
 * (tests/unit/camp_kernels). Only layout and inputs live here: no
 * algorithm.
 */
#ifndef CXLSIM_KINFO_PRIV_H
#define CXLSIM_KINFO_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "graph_priv.h"
#include "klayout_priv.h"

/* ---- GAPBS ---------------------------------------------------------------- */

struct bfs_info {
	struct kgraph_layout g;
	struct kbfs_layout b;
	uint64_t hdr_off;
};

#define PR_ITERS 3u
#define PR_DAMP 0.85
struct pr_info {
	struct kgraph_layout g;
	uint64_t bar_off, rank_off, contrib_off;
};

struct cc_info {
	struct kgraph_layout g;
	uint64_t bar_off, counts_off, hdr_off, lab_off[2];
};

struct sssp_info {
	struct kgraph_layout g;
	uint64_t bar_off, tail_off, counts_off, hdr_off, dist_off, cand_off, active_off, queue_off;
	uint32_t source;
};

struct bc_info {
	struct kgraph_layout g;
	struct kbfs_layout b;
	uint64_t hdr_off, sigma_off, delta_off;
};

struct tc_info {
	struct kgraph_layout g;
	uint64_t bar_off, counts_off, total_off;
};

/* ---- PBBS ------------------------------------------------------------------ */

#define ISORT_RADIX_BITS 11u
#define ISORT_BUCKETS (1u << ISORT_RADIX_BITS)
#define ISORT_PASSES 3u
struct isort_info {
	uint64_t n, bar_off, table_off, key_off[2];
};

struct msort_info {
	uint64_t n, bar_off, arr_off[2];
};

struct hist_info {
	uint64_t n, b, bar_off, res_off, table_off, key_off;
};

#define RQ_LEAF 8u
#define RQ_QUERIES_PER_THREAD 64u
#define RQ_NODE_BYTES 32u
struct rq_info {
	uint64_t bar_off, npts, nq, nnodes, node_off, pt_off, q_off, res_off;
};

/* ---- XSBench ------------------------------------------------------------------ */

#define XS_NUCS 34u
#define XS_MATS 12u
#define XS_LOOKUPS_PER_THREAD 256u
#define XS_PT_BYTES 48u
#define XS_MAT_BYTES 512u /* count, 34 ids (u32), then 34 concentrations (double) at +256 */
static const uint32_t xs_mat_nucs[XS_MATS] = {34, 5, 4, 4, 27, 21, 21, 21, 21, 21, 9, 9};
static const double xs_mat_dist[XS_MATS] = {0.140, 0.052, 0.275, 0.134, 0.154, 0.064,
					    0.066, 0.055, 0.008, 0.015, 0.025, 0.013};
struct xs_info {
	uint64_t bar_off, ngp, nunion, nlook, union_off, index_off, grid_off, mat_off, res_off;
};

/* Lookup i's energy and material (from i and the seed, not the thread). */
static inline void xs_draw(uint64_t seed, uint64_t i, double *energy, uint32_t *mat)
{
	uint64_t s = seed * UINT64_C(0x9e3779b97f4a7c15) + i;
	*energy = kunit(&s);
	double r = kunit(&s), c = 0;
	*mat = XS_MATS - 1;
	for (uint32_t m = 0; m < XS_MATS; m++)
		if (r < (c += xs_mat_dist[m])) {
			*mat = m;
			break;
		}
}

/* ---- DLRM, GPT-2 ----------------------------------------------------------------- */

#define DLRM_DIM 64u
#define DLRM_POOL 32u
#define DLRM_BAGS_PER_THREAD 32u
struct dlrm_info {
	uint64_t bar_off, rows, bags, table_off, idx_off, out_off;
};

#define ATTN_HEADS 12u
#define ATTN_HDIM 64u
#define ATTN_QTOK 4u
#define ATTN_CTX_MAX 8192u
struct attn_info {
	uint64_t bar_off, ctx, q_off, k_off, v_off, out_off;
};

#define MLP_BTOK 4u
struct mlp_info {
	uint64_t d, bar_off, x_off, h_off, y_off, w1_off, w2_off;
};

/* ---- Redis-like store ---------------------------------------------------------------- */

#define KV_ENTRY_BYTES 48u
#define KV_GET_PCT 90u
struct kv_shard {
	uint64_t nkeys, nbuckets, bucket_off, entry_off, value_off;
};
struct kv_info { /* one allocation (freed with free() by cxs_kimage_free) */
	uint64_t ops, sum_off;
	uint32_t nshards;
	struct kv_shard sh[];
};

static inline uint64_t kv_hash(uint64_t k)
{
	uint64_t s = k;
	return krand(&s);
}

/* Key i of shard t: distinct across shards, never 0. */
static inline uint64_t kv_key(uint32_t t, uint64_t i)
{
	return ((uint64_t)t << 40 | i) * 2 + 1;
}

static inline uint32_t kv_value_len(uint64_t key)
{
	uint64_t s = key ^ 0x77;
	return 64 + (uint32_t)(krand(&s) % 8) * 64; /* 64 .. 512 B */
}

/* Request r of shard t: its key, GET or SET, and the SET's value seed. */
static inline void kv_request(uint64_t seed, uint32_t t, uint64_t r, uint64_t nkeys, uint64_t *key,
			      bool *get, uint64_t *vseed)
{
	uint64_t s = seed * UINT64_C(0x2545f4914f6cdd1d) + ((uint64_t)t << 32) + r;
	double u = kunit(&s);
	uint64_t i = (uint64_t)((double)nkeys * u * u * u); /* skewed to the first keys */
	if (i >= nkeys)
		i = nkeys - 1;
	*key = kv_key(t, (i * UINT64_C(0x9e3779b1)) % nkeys); /* popular keys spread out */
	*get = krand(&s) % 100 < KV_GET_PCT;
	*vseed = krand(&s);
}

/* ---- SPEC-like codes, STREAM, SpMV ----------------------------------------------------- */

enum { FD_EX, FD_EY, FD_EZ, FD_HX, FD_HY, FD_HZ, FD_EPS, FD_NARR };
struct fdtd_info {
	uint64_t n, bar_off, arr[FD_NARR];
};

#define ROMS_NZ 16u
enum { ROMS_T, ROMS_TN, ROMS_U, ROMS_V, ROMS_AKV, ROMS_CP, ROMS_DP, ROMS_NARR };
struct roms_info {
	uint64_t nx, bar_off, arr[ROMS_NARR];
};

#define LBM_STEPS 2u
#define LBM_Q 9u
static const int lbm_cx[LBM_Q] = {0, 1, 0, -1, 0, 1, -1, -1, 1};
static const int lbm_cy[LBM_Q] = {0, 0, 1, 0, -1, 1, 1, -1, -1};
static const double lbm_w[LBM_Q] = {4.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 9,
				    1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36};
struct lbm_info {
	uint64_t n, bar_off, lat[2];
};

#define MCF_ARCS 6u
#define MCF_ITERS 2u
#define MCF_NODE_BYTES 64u
#define MCF_ARC_BYTES 32u
#define MCF_NONE UINT32_MAX
struct mcf_info {
	uint64_t nodes, arcs; /* per thread */
	uint64_t base_off, stride;
};

struct triad_info {
	uint64_t bar_off, n, a_off, b_off, c_off;
};

#define SPMV_NNZ 8u
#define SPMV_BAND 256u
struct spmv_info {
	uint64_t n, nnz, bar_off, row_off, col_off, val_off, x_off, y_off;
};

#endif /* CXLSIM_KINFO_PRIV_H */
