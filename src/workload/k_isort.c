/*
 * k_isort.c — integer sort, modelled after PBBS's integerSort (a parallel
 * LSD radix sort): size 32-bit keys, three passes of 11, 11 and 10 bits.
 * Each pass:
 *   1  count: each thread histograms the digit of its share of the keys into
 *      a private table (2048 counters), then publishes it as its row of the
 *      shared count table                                        barrier
 *   2  offsets: each thread reads the whole table and computes where each
 *      digit of its share starts (digits in order, threads in order within a
 *      digit: a stable sort)
 *   3  scatter: each key to its digit's next slot of the other array
 *                                                                barrier
 * Not the original program: PBBS sorts in blocks with a bucket transpose;
 * the memory behaviour is the same — two sequential reads of the keys, a
 * private random read-modify-write per key, and a scatter of stores over
 * 2048 sequential streams (store-bound, poor coalescing).
 *
 * Shared layout: barrier line, count table (T x 2048 u32), keys A and B
 * (u32[size]). Private: the thread's counters and offsets (2 x 2048 u32).
 * Result: the sorted keys (in B: three passes), checked against the
 * reference with both arrays and the table.
 */
#include "cxlsim/kthread.h"

#include "kinfo_priv.h"
#include "klayout_priv.h"

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	if (!ksize_ok(img, "isort", "keys", 2 * (uint64_t)img->nthreads, UINT64_C(1) << 26, err,
		      errlen))
		return -1;
	struct isort_info *I = calloc(1, sizeof *I);
	if (!I) {
		snprintf(err, errlen, "isort: out of memory");
		return -1;
	}
	img->info = I;
	I->n = img->size;
	uint64_t off = 0;
	I->bar_off = klay_take(&off, KL_LINE);
	I->table_off = klay_take(&off, 4 * (uint64_t)img->nthreads * ISORT_BUCKETS);
	I->key_off[0] = klay_take(&off, 4 * I->n);
	I->key_off[1] = klay_take(&off, 4 * I->n);
	img->private_bytes = 2 * 4 * ISORT_BUCKETS;
	if (klay_alloc(img, "isort", off, err, errlen) != 0)
		return -1;
	uint64_t s = img->seed ^ UINT64_C(0x150f7);
	for (uint64_t i = 0; i < I->n; i++)
		kput32(img->shared, I->key_off[0] + 4 * i, (uint32_t)krand(&s));
	return 0;
}

static uint32_t digit(uint32_t key, uint32_t pass)
{
	return key >> (pass * ISORT_RADIX_BITS) & (ISORT_BUCKETS - 1);
}

static void run(struct cxs_kt *kt)
{
	const struct isort_info *I = cxs_kt_image(kt)->info;
	uint32_t T = cxs_kt_count(kt), t = cxs_kt_id(kt);
	uint64_t lo, hi;
	kshare(I->n, t, T, &lo, &hi);
	const uint64_t cnt = 0, ofs = 4 * ISORT_BUCKETS; /* private tables */
	cxs_kt_roi_begin(kt);
	for (uint32_t pass = 0; pass < ISORT_PASSES; pass++) {
		uint64_t src = I->key_off[pass % 2], dst = I->key_off[1 - pass % 2];
		for (uint32_t b = 0; b < ISORT_BUCKETS; b += 2)
			cxs_kt_store(kt, kpv(kt, cnt + 4 * b), 8, 0);
		for (uint64_t i = lo; i < hi; i += 16) {
			uint32_t n = hi - i < 16 ? (uint32_t)(hi - i) : 16, h[16];
			for (uint32_t k = 0; k < n; k++)
				h[k] = cxs_kt_ld(kt, ksh(kt, src + 4 * (i + k)), 4);
			for (uint32_t k = 0; k < n; k++) {
				uint64_t a = kpv(kt, cnt + 4 * digit((uint32_t)cxs_kt_get(kt, h[k]), pass));
				cxs_kt_store(kt, a, 4, cxs_kt_load(kt, a, 4) + 1);
				cxs_kt_compute(kt, 3);
			}
		}
		for (uint32_t b = 0; b < ISORT_BUCKETS; b += 2)
			cxs_kt_store(kt, ksh(kt, I->table_off + 4 * ((uint64_t)t * ISORT_BUCKETS + b)), 8,
				     cxs_kt_load(kt, kpv(kt, cnt + 4 * b), 8));
		cxs_kt_barrier(kt, ksh(kt, I->bar_off), T);
		/* Offsets: all threads' counts of smaller digits, then earlier threads' of ours. */
		uint64_t run_total = 0;
		for (uint32_t b = 0; b < ISORT_BUCKETS; b++) {
			uint64_t before = run_total;
			for (uint32_t r0 = 0; r0 < T; r0 += 64) {
				uint32_t m = T - r0 < 64 ? T - r0 : 64, h[64];
				for (uint32_t r = 0; r < m; r++)
					h[r] = cxs_kt_ld(
						kt, ksh(kt, I->table_off + 4 * ((uint64_t)(r0 + r) * ISORT_BUCKETS + b)), 4);
				for (uint32_t r = 0; r < m; r++) {
					uint64_t c = cxs_kt_get(kt, h[r]);
					if (r0 + r < t)
						before += c;
					run_total += c;
				}
			}
			cxs_kt_store(kt, kpv(kt, ofs + 4 * b), 4, before);
			cxs_kt_compute(kt, 2 * T);
		}
		for (uint64_t i = lo; i < hi; i += 16) {
			uint32_t n = hi - i < 16 ? (uint32_t)(hi - i) : 16, h[16];
			for (uint32_t k = 0; k < n; k++)
				h[k] = cxs_kt_ld(kt, ksh(kt, src + 4 * (i + k)), 4);
			for (uint32_t k = 0; k < n; k++) {
				uint32_t key = (uint32_t)cxs_kt_get(kt, h[k]);
				uint64_t a = kpv(kt, ofs + 4 * digit(key, pass));
				uint32_t at = (uint32_t)cxs_kt_load(kt, a, 4);
				cxs_kt_store(kt, a, 4, at + 1);
				kst32(kt, dst + 4 * (uint64_t)at, key);
				cxs_kt_compute(kt, 4);
			}
		}
		cxs_kt_barrier(kt, ksh(kt, I->bar_off), T);
	}
	cxs_kt_roi_end(kt);
	kcheck_share(kt, I->key_off[0], 4 * I->n);
	kcheck_share(kt, I->key_off[1], 4 * I->n);
	kcheck_share(kt, I->table_off, 4 * (uint64_t)T * ISORT_BUCKETS);
}

const struct cxs_kernel cxs_kernel_isort = {
	.name = "isort",
	.doc = "modelled after PBBS's integerSort: parallel LSD radix sort of size 32-bit keys, 3 passes of 11/11/10 bits (private counts, shared table, scatter)",
	.default_size = 262144,
	.deterministic = true,
	.build = build,
	.run = run,
};
