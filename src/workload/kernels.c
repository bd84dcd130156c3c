/*
 * kernels.c — the registry of built-in thread programs (kthread.h).
 *
 * Families:
 *   - application kernels modelled after the DIKTAMO paper's workloads
 *     (PARSEC, SPLASH-2, YCSB): k_*.c — real computations on shared data in
 *     CXL memory and private data in local memory; they are not the original
 *     programs, only built to stress memory the same way;
 *   - kernels modelled after the suites CAMP evaluates (papers/camp-summary-ko.md):
 *     GAPBS graph kernels over generated graphs (graph.c), PBBS, XSBench, DLRM,
 *     GPT-2, a Redis-like store and SPEC-like bandwidth-bound codes, k_*.c with
 *     the helpers of klayout_priv.h;
 *   - microbenchmarks with a known memory behaviour (micro.c): pointer chase,
 *     streaming loads, strided loads, memset — CAMP's calibration set;
 *   - TSO litmus tests (litmus.c);
 *   - "trace": per-core trace files replayed (trace_program.c).
 */
#include "cxlsim/kthread.h"

#include <string.h>

extern const struct cxs_kernel cxs_kernel_trace;
extern const struct cxs_kernel cxs_kernel_ptrchase, cxs_kernel_stream, cxs_kernel_strided,
	cxs_kernel_memset;
extern const struct cxs_kernel cxs_kernel_litmus_mp, cxs_kernel_litmus_mp_fence,
	cxs_kernel_litmus_sb, cxs_kernel_litmus_sb_fence, cxs_kernel_litmus_lb,
	cxs_kernel_litmus_lb_fence, cxs_kernel_litmus_iriw, cxs_kernel_litmus_iriw_fence,
	cxs_kernel_litmus_2p2w, cxs_kernel_litmus_2p2w_fence;
/* CAMP_KERNELS_DECL: modelled after the suites CAMP evaluates (GAPBS, PBBS, XSBench, DLRM,
 * GPT-2, Redis, SPEC CPU 2017's bandwidth-bound codes) */
extern const struct cxs_kernel cxs_kernel_bfs, cxs_kernel_pr, cxs_kernel_cc, cxs_kernel_sssp,
	cxs_kernel_bc, cxs_kernel_tc, cxs_kernel_isort, cxs_kernel_msort, cxs_kernel_histogram,
	cxs_kernel_range2d, cxs_kernel_xsbench, cxs_kernel_dlrm, cxs_kernel_gpt2_attn,
	cxs_kernel_gpt2_mlp, cxs_kernel_kvstore, cxs_kernel_fotonik, cxs_kernel_roms, cxs_kernel_lbm,
	cxs_kernel_mcf, cxs_kernel_triad, cxs_kernel_spmv;
/* APP_KERNELS_DECL */
extern const struct cxs_kernel cxs_kernel_bodytrack, cxs_kernel_fluidanimate,
	cxs_kernel_streamcluster, cxs_kernel_canneal, cxs_kernel_raytrace, cxs_kernel_barnes,
	cxs_kernel_ocean_ncp, cxs_kernel_ocean_cp, cxs_kernel_ycsb;

const struct cxs_kernel *const cxs_kernels[] = {
	/* APP_KERNELS */
	&cxs_kernel_bodytrack,
	&cxs_kernel_fluidanimate,
	&cxs_kernel_streamcluster,
	&cxs_kernel_canneal,
	&cxs_kernel_raytrace,
	&cxs_kernel_barnes,
	&cxs_kernel_ocean_ncp,
	&cxs_kernel_ocean_cp,
	&cxs_kernel_ycsb,
	/* CAMP_KERNELS */
	&cxs_kernel_bfs,
	&cxs_kernel_pr,
	&cxs_kernel_cc,
	&cxs_kernel_sssp,
	&cxs_kernel_bc,
	&cxs_kernel_tc,
	&cxs_kernel_isort,
	&cxs_kernel_msort,
	&cxs_kernel_histogram,
	&cxs_kernel_range2d,
	&cxs_kernel_xsbench,
	&cxs_kernel_dlrm,
	&cxs_kernel_gpt2_attn,
	&cxs_kernel_gpt2_mlp,
	&cxs_kernel_kvstore,
	&cxs_kernel_fotonik,
	&cxs_kernel_roms,
	&cxs_kernel_lbm,
	&cxs_kernel_mcf,
	&cxs_kernel_triad,
	&cxs_kernel_spmv,
	&cxs_kernel_trace,
	&cxs_kernel_ptrchase,
	&cxs_kernel_stream,
	&cxs_kernel_strided,
	&cxs_kernel_memset,
	&cxs_kernel_litmus_mp,
	&cxs_kernel_litmus_mp_fence,
	&cxs_kernel_litmus_sb,
	&cxs_kernel_litmus_sb_fence,
	&cxs_kernel_litmus_lb,
	&cxs_kernel_litmus_lb_fence,
	&cxs_kernel_litmus_iriw,
	&cxs_kernel_litmus_iriw_fence,
	&cxs_kernel_litmus_2p2w,
	&cxs_kernel_litmus_2p2w_fence,
	NULL,
};

const struct cxs_kernel *cxs_kernel_find(const char *name)
{
	for (size_t i = 0; cxs_kernels[i]; i++)
		if (strcmp(cxs_kernels[i]->name, name) == 0)
			return cxs_kernels[i];
	return NULL;
}
