/*
 * k_spmv.c — sparse matrix-vector products, modelled after the SpMV of
 * HPCG and of iterative solvers (CSR): a size x size matrix with NNZ
 * entries a row, half of them within a band of the diagonal (a mesh's
 * neighbours) and half anywhere (long-range couplings); two products
 * y = A x, then x' = A y / 8. Threads own bands of rows.
 *
 * Memory behaviour: the column indices and values stream (12 B a nonzero);
 * each nonzero gathers x[col]: the band's hit the cache, the others are
 * random 8-byte loads over the vector, independent within a row (MLP).
 *
 * Shared layout: barrier line, row offsets (u32[size + 1]), columns
 * (u32[nnz]), values (doubles), x, y (doubles [size]). Result: y and x.
 */
#include "cxlsim/kthread.h"

#include "kinfo_priv.h"
#include "klayout_priv.h"

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	if (!ksize_ok(img, "spmv", "rows", 2 * SPMV_BAND, UINT64_C(1) << 24, err, errlen))
		return -1;
	struct spmv_info *I = calloc(1, sizeof *I);
	if (!I) {
		snprintf(err, errlen, "spmv: out of memory");
		return -1;
	}
	img->info = I;
	I->n = img->size;
	I->nnz = SPMV_NNZ * I->n;
	uint64_t off = 0;
	I->bar_off = klay_take(&off, KL_LINE);
	I->row_off = klay_take(&off, 4 * (I->n + 1));
	I->col_off = klay_take(&off, 4 * I->nnz);
	I->val_off = klay_take(&off, 8 * I->nnz);
	I->x_off = klay_take(&off, 8 * I->n);
	I->y_off = klay_take(&off, 8 * I->n);
	img->private_bytes = KL_LINE;
	if (klay_alloc(img, "spmv", off, err, errlen) != 0)
		return -1;
	uint64_t s = img->seed ^ UINT64_C(0x5b5);
	for (uint64_t r = 0; r <= I->n; r++)
		kput32(img->shared, I->row_off + 4 * r, (uint32_t)(r * SPMV_NNZ));
	for (uint64_t r = 0; r < I->n; r++)
		for (uint32_t k = 0; k < SPMV_NNZ; k++) {
			uint64_t c = k < SPMV_NNZ / 2 ? (r + I->n + krand(&s) % (2 * SPMV_BAND) - SPMV_BAND) % I->n
						 : krand(&s) % I->n;
			kput32(img->shared, I->col_off + 4 * (r * SPMV_NNZ + k), (uint32_t)c);
			kputd(img->shared, I->val_off + 8 * (r * SPMV_NNZ + k), kunit(&s) - 0.25);
		}
	for (uint64_t r = 0; r < I->n; r++)
		kputd(img->shared, I->x_off + 8 * r, kunit(&s));
	return 0;
}

static void product(struct cxs_kt *kt, const struct spmv_info *I, uint64_t in, uint64_t out,
		    double scale, uint64_t lo, uint64_t hi)
{
	for (uint64_t r = lo; r < hi; r += 2) { /* two rows (16 nonzeros) in flight */
		uint32_t nr = hi - r < 2 ? 1 : 2, hc[2 * SPMV_NNZ], hv[2 * SPMV_NNZ], hx[2 * SPMV_NNZ];
		for (uint32_t k = 0; k < nr * SPMV_NNZ; k++) {
			hc[k] = cxs_kt_ld(kt, ksh(kt, I->col_off + 4 * (r * SPMV_NNZ + k)), 4);
			hv[k] = cxs_kt_ld(kt, ksh(kt, I->val_off + 8 * (r * SPMV_NNZ + k)), 8);
		}
		for (uint32_t k = 0; k < nr * SPMV_NNZ; k++)
			hx[k] = cxs_kt_ld(kt, ksh(kt, in + 8 * cxs_kt_get(kt, hc[k])), 8);
		for (uint32_t q = 0; q < nr; q++) {
			double sum = 0;
			for (uint32_t k = q * SPMV_NNZ; k < (q + 1) * SPMV_NNZ; k++)
				sum += cxs_kt_getd(kt, hv[k]) * cxs_kt_getd(kt, hx[k]);
			kstd(kt, out + 8 * (r + q), sum * scale);
		}
		cxs_kt_compute(kt, nr * SPMV_NNZ * 2);
	}
}

static void run(struct cxs_kt *kt)
{
	const struct spmv_info *I = cxs_kt_image(kt)->info;
	uint32_t T = cxs_kt_count(kt);
	uint64_t lo, hi;
	kshare(I->n, cxs_kt_id(kt), T, &lo, &hi);
	cxs_kt_roi_begin(kt);
	product(kt, I, I->x_off, I->y_off, 1.0, lo, hi);
	cxs_kt_barrier(kt, ksh(kt, I->bar_off), T);
	product(kt, I, I->y_off, I->x_off, 0.125, lo, hi);
	cxs_kt_roi_end(kt);
	cxs_kt_barrier(kt, ksh(kt, I->bar_off), cxs_kt_count(kt)); /* all results written */
	kcheck_share(kt, I->x_off, 8 * I->n);
	kcheck_share(kt, I->y_off, 8 * I->n);
}

const struct cxs_kernel cxs_kernel_spmv = {
	.name = "spmv",
	.doc = "modelled after HPCG's CSR SpMV: two products with a size-row matrix of 8 nonzeros a row (half banded, half random columns)",
	.default_size = 32768,
	.deterministic = true,
	.build = build,
	.run = run,
};
