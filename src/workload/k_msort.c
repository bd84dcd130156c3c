/*
 * k_msort.c — comparison sort, modelled after PBBS's comparisonSort (here a
 * parallel merge sort with merge-path partitioning instead of PBBS's sample
 * sort) of size 64-bit keys:
 *   1  each thread sorts its block: runs of 16 keys sorted in registers,
 *      then bottom-up merge passes between the two arrays
 *   2  log2(T) rounds: in round r every pair of sorted runs of 2^r blocks
 *      is merged by the 2^(r+1) threads that own them; each finds where its
 *      share of the output starts in both inputs by a binary search of the
 *      merge path (co-ranking), then merges its share       barrier a round
 * The thread count is rounded down to a power of two for phase 2's groups
 * (extra threads only take part in phase 1). Stable: ties take the left run.
 *
 * Memory behaviour: sequential streams (two in, one out) per merge pass,
 * prefetch-friendly and store-heavy; the co-ranking's binary search is a
 * short chain of dependent loads; the merge's compares decide the next load.
 *
 * Shared layout: barrier line, keys A and B (u64[size]). Result: the sorted
 * keys (and the other array's last pass), checked against the reference.
 */
#include "cxlsim/kthread.h"

#include "kinfo_priv.h"
#include "klayout_priv.h"

#define RUN 16u

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	if (!ksize_ok(img, "msort", "keys", 16 * (uint64_t)img->nthreads, UINT64_C(1) << 25, err,
		      errlen))
		return -1;
	struct msort_info *I = calloc(1, sizeof *I);
	if (!I) {
		snprintf(err, errlen, "msort: out of memory");
		return -1;
	}
	img->info = I;
	I->n = img->size;
	uint64_t off = 0;
	I->bar_off = klay_take(&off, KL_LINE);
	I->arr_off[0] = klay_take(&off, 8 * I->n);
	I->arr_off[1] = klay_take(&off, 8 * I->n);
	img->private_bytes = KL_LINE;
	if (klay_alloc(img, "msort", off, err, errlen) != 0)
		return -1;
	uint64_t s = img->seed ^ UINT64_C(0x3501);
	for (uint64_t i = 0; i < I->n; i++)
		kput64(img->shared, I->arr_off[0] + 8 * i, krand(&s) >> 8);
	return 0;
}

/* Sequential reader of u64 keys, a line (8 keys) of loads at a time. */
struct rd {
	uint64_t off, pos, end, base;
	uint32_t n;
	uint64_t buf[8];
};

static void rd_init(struct rd *r, uint64_t off, uint64_t lo, uint64_t hi)
{
	*r = (struct rd){.off = off, .pos = lo, .end = hi, .base = lo, .n = 0};
}

static uint64_t rd_peek(struct cxs_kt *kt, struct rd *r)
{
	if (r->pos >= r->base + r->n) {
		uint32_t h[8];
		r->base = r->pos;
		r->n = r->end - r->pos < 8 ? (uint32_t)(r->end - r->pos) : 8;
		for (uint32_t i = 0; i < r->n; i++)
			h[i] = cxs_kt_ld(kt, ksh(kt, r->off + 8 * (r->base + i)), 8);
		for (uint32_t i = 0; i < r->n; i++)
			r->buf[i] = cxs_kt_get(kt, h[i]);
	}
	return r->buf[r->pos - r->base];
}

/* Merges a[alo, ahi) and b[blo, bhi) (offsets in one array) to dst from dlo. */
static void merge(struct cxs_kt *kt, uint64_t src, uint64_t alo, uint64_t ahi, uint64_t blo,
		  uint64_t bhi, uint64_t dst, uint64_t dlo)
{
	struct rd a, b;
	rd_init(&a, src, alo, ahi);
	rd_init(&b, src, blo, bhi);
	while (a.pos < a.end || b.pos < b.end) {
		uint64_t v;
		if (b.pos >= b.end || (a.pos < a.end && rd_peek(kt, &a) <= rd_peek(kt, &b)))
			v = rd_peek(kt, &a), a.pos++;
		else
			v = rd_peek(kt, &b), b.pos++;
		kst64(kt, dst + 8 * dlo++, v);
		cxs_kt_compute(kt, 4);
	}
}

/*
 * Co-rank: how many of the output's first k come from a[alo, alo + na) when
 * merged with b[blo, blo + nb) (ties to a): the least i with
 * a[alo + i] > b[blo + k - i - 1] ... found by binary search (dependent loads).
 */
static uint64_t corank(struct cxs_kt *kt, uint64_t src, uint64_t alo, uint64_t na, uint64_t blo,
		       uint64_t nb, uint64_t k)
{
	uint64_t lo = k > nb ? k - nb : 0, hi = k < na ? k : na;
	while (lo < hi) {
		uint64_t i = (lo + hi) / 2, j = k - i - 1;
		uint32_t ha = cxs_kt_ld(kt, ksh(kt, src + 8 * (alo + i)), 8);
		uint32_t hb = cxs_kt_ld(kt, ksh(kt, src + 8 * (blo + j)), 8);
		uint64_t ai = cxs_kt_get(kt, ha), bj = cxs_kt_get(kt, hb);
		cxs_kt_compute(kt, 5);
		if (ai <= bj)
			lo = i + 1; /* a[i] goes before b[j]: at least i + 1 from a */
		else
			hi = i;
	}
	return lo;
}

static void run(struct cxs_kt *kt)
{
	const struct msort_info *I = cxs_kt_image(kt)->info;
	uint32_t T = cxs_kt_count(kt), t = cxs_kt_id(kt), P = 1;
	while (P * 2 <= T)
		P *= 2;
	uint64_t lo, hi;
	cxs_kt_roi_begin(kt);
	/* Phase 1: P blocks (one per thread of the power-of-two group). */
	kshare(I->n, t, P, &lo, &hi);
	uint32_t cur = 0;
	if (t < P) {
		for (uint64_t i = lo; i < hi; i += RUN) {
			uint32_t n = hi - i < RUN ? (uint32_t)(hi - i) : RUN, h[RUN];
			uint64_t v[RUN];
			for (uint32_t k = 0; k < n; k++)
				h[k] = cxs_kt_ld(kt, ksh(kt, I->arr_off[0] + 8 * (i + k)), 8);
			for (uint32_t k = 0; k < n; k++)
				v[k] = cxs_kt_get(kt, h[k]);
			for (uint32_t k = 1; k < n; k++) /* insertion sort in registers */
				for (uint32_t j = k; j > 0 && v[j - 1] > v[j]; j--) {
					uint64_t x = v[j];
					v[j] = v[j - 1];
					v[j - 1] = x;
				}
			cxs_kt_compute(kt, 4 * n * 4);
			for (uint32_t k = 0; k < n; k++)
				kst64(kt, I->arr_off[0] + 8 * (i + k), v[k]);
		}
	}
	/* The same number of passes for every block (sizes differ by one key at most). */
	uint64_t maxblock = (I->n + P - 1) / P;
	for (uint64_t w = RUN; w < maxblock; w *= 2) {
		if (t < P)
			for (uint64_t i = lo; i < hi; i += 2 * w) {
				uint64_t m = i + w < hi ? i + w : hi, e = i + 2 * w < hi ? i + 2 * w : hi;
				merge(kt, I->arr_off[cur], i, m, m, e, I->arr_off[1 - cur], i);
			}
		cur = 1 - cur;
	}
	cxs_kt_barrier(kt, ksh(kt, I->bar_off), T);
	/* Phase 2: merge rounds. */
	for (uint32_t g = 2; g <= P; g *= 2) {
		if (t < P) {
			uint32_t first = t / g * g, r = t % g;
			uint64_t alo, amid, ahi, dummy;
			kshare(I->n, first, P, &alo, &dummy);
			kshare(I->n, first + g / 2, P, &amid, &dummy);
			kshare(I->n, first + g - 1, P, &dummy, &ahi);
			uint64_t na = amid - alo, nb = ahi - amid, total = na + nb, k0, k1;
			kshare(total, r, g, &k0, &k1);
			uint64_t i0 = corank(kt, I->arr_off[cur], alo, na, amid, nb, k0);
			uint64_t i1 = corank(kt, I->arr_off[cur], alo, na, amid, nb, k1);
			merge(kt, I->arr_off[cur], alo + i0, alo + i1, amid + (k0 - i0), amid + (k1 - i1),
			      I->arr_off[1 - cur], alo + k0);
		}
		cur = 1 - cur;
		cxs_kt_barrier(kt, ksh(kt, I->bar_off), T);
	}
	cxs_kt_roi_end(kt);
	kcheck_share(kt, I->arr_off[0], 8 * I->n);
	kcheck_share(kt, I->arr_off[1], 8 * I->n);
	cxs_kt_result(kt, "sorted_in_b", t == 0 ? cur : 0);
}

const struct cxs_kernel cxs_kernel_msort = {
	.name = "msort",
	.doc = "modelled after PBBS's comparisonSort: parallel merge sort of size 64-bit keys (block sorts, then merge-path rounds)",
	.default_size = 131072,
	.deterministic = true,
	.build = build,
	.run = run,
};
