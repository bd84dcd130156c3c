/*
 * k_triad.c — the STREAM triad a[i] = b[i] + s c[i], modelled after
 * McCalpin's STREAM (the bandwidth benchmark every memory-tier study
 * quotes): each thread its own size-element slices of three arrays of
 * doubles, one pass.
 *
 * Memory behaviour: two sequential load streams and one store stream; the
 * stores miss (read for ownership) and fill the store buffer, so the
 * kernel is bandwidth-bound and bound on stores: 24 B of traffic per
 * element plus the write-backs (12 MiB a pass over 8 threads at the
 * default).
 *
 * Shared layout: barrier line, a, b, c (doubles [T x size]). Result: a.
 */
#include "cxlsim/kthread.h"

#include "kinfo_priv.h"
#include "klayout_priv.h"

#define AHEAD 48u /* elements whose loads are in flight: 96 of the 128 a thread may have */

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	if (!ksize_ok(img, "triad", "elements a thread", 8, UINT64_C(1) << 24, err, errlen))
		return -1;
	struct triad_info *I = calloc(1, sizeof *I);
	if (!I) {
		snprintf(err, errlen, "triad: out of memory");
		return -1;
	}
	img->info = I;
	I->n = img->size * img->nthreads;
	uint64_t off = 0;
	I->bar_off = klay_take(&off, KL_LINE);
	I->a_off = klay_take(&off, 8 * I->n);
	I->b_off = klay_take(&off, 8 * I->n);
	I->c_off = klay_take(&off, 8 * I->n);
	img->private_bytes = KL_LINE;
	if (klay_alloc(img, "triad", off, err, errlen) != 0)
		return -1;
	uint64_t s = img->seed ^ UINT64_C(0x7d);
	for (uint64_t i = 0; i < I->n; i++) {
		kputd(img->shared, I->b_off + 8 * i, kunit(&s));
		kputd(img->shared, I->c_off + 8 * i, kunit(&s));
	}
	return 0;
}

static void run(struct cxs_kt *kt)
{
	const struct triad_info *I = cxs_kt_image(kt)->info;
	uint64_t lo, hi;
	kshare(I->n, cxs_kt_id(kt), cxs_kt_count(kt), &lo, &hi);
	const double scalar = 3.0;
	cxs_kt_roi_begin(kt);
	/* Loads run AHEAD elements ahead of their use, as an out-of-order core's window overlaps
	 * the loop's iterations (224 instructions: about 56 iterations of 4). */
	uint32_t hb[AHEAD], hc[AHEAD];
	for (uint64_t i = lo; i < hi + AHEAD; i++) {
		if (i >= lo + AHEAD) { /* element j's slot is free again once it is used */
			uint64_t j = i - AHEAD;
			kstd(kt, I->a_off + 8 * j,
			     cxs_kt_getd(kt, hb[j % AHEAD]) + scalar * cxs_kt_getd(kt, hc[j % AHEAD]));
			cxs_kt_compute(kt, 1);
		}
		if (i < hi) {
			hb[i % AHEAD] = cxs_kt_ld(kt, ksh(kt, I->b_off + 8 * i), 8);
			hc[i % AHEAD] = cxs_kt_ld(kt, ksh(kt, I->c_off + 8 * i), 8);
		}
	}
	cxs_kt_roi_end(kt);
	cxs_kt_barrier(kt, ksh(kt, I->bar_off), cxs_kt_count(kt)); /* all results written */
	kcheck_share(kt, I->a_off, 8 * I->n);
}

const struct cxs_kernel cxs_kernel_triad = {
	.name = "triad",
	.doc = "modelled after STREAM's triad: a = b + s c over size doubles a thread (two load streams, one store stream)",
	.default_size = 65536,
	.deterministic = true,
	.build = build,
	.run = run,
};
