/*
 * k_gpt2_attn.c — attention of a GPT-2 decoder layer in generation,
 * modelled after GPT-2's (small) multi-head attention over a KV cache (CAMP
 * runs GPT-2 and Llama inference): HEADS heads of HDIM, a context of size
 * tokens (the K and V caches, [head][token][HDIM] floats), and QTOK new
 * tokens (batched decoding); each (token, head) pair computes scores
 * q . k_j / sqrt(HDIM) over the context, a softmax, and the weighted sum
 * of the v_j. Pairs are split over the threads.
 *
 * Memory behaviour: two sequential passes (K, then V) over the head's
 * context per pair: 2 x size x 256 B streamed, re-read by every new token
 * (QTOK passes over 1.5 MiB at 256 tokens: prefetch-friendly streaming,
 * bandwidth-bound with many threads); softmax's exps are compute.
 *
 * Shared layout: barrier line, q (QTOK x HEADS x HDIM floats), K, V caches, out (like q).
 * Result: out.
 */
#include "cxlsim/kthread.h"

#include <math.h>

#include "kinfo_priv.h"
#include "klayout_priv.h"

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	if (!ksize_ok(img, "gpt2_attn", "context tokens", 1, ATTN_CTX_MAX, err, errlen))
		return -1;
	struct attn_info *I = calloc(1, sizeof *I);
	if (!I) {
		snprintf(err, errlen, "gpt2_attn: out of memory");
		return -1;
	}
	img->info = I;
	I->ctx = img->size;
	uint64_t off = 0, cache = 4 * (uint64_t)ATTN_HEADS * I->ctx * ATTN_HDIM;
	I->bar_off = klay_take(&off, KL_LINE);
	I->q_off = klay_take(&off, 4 * ATTN_QTOK * ATTN_HEADS * ATTN_HDIM);
	I->k_off = klay_take(&off, cache);
	I->v_off = klay_take(&off, cache);
	I->out_off = klay_take(&off, 4 * ATTN_QTOK * ATTN_HEADS * ATTN_HDIM);
	img->private_bytes = 4 * (uint64_t)ATTN_CTX_MAX; /* the scores of one pair */
	if (klay_alloc(img, "gpt2_attn", off, err, errlen) != 0)
		return -1;
	uint64_t s = img->seed ^ UINT64_C(0xa77);
	for (uint64_t i = 0; i < ATTN_QTOK * ATTN_HEADS * ATTN_HDIM; i++)
		kputf(img->shared, I->q_off + 4 * i, (float)(kunit(&s) - 0.5));
	for (uint64_t i = 0; i < cache / 4; i++) {
		kputf(img->shared, I->k_off + 4 * i, (float)(kunit(&s) - 0.5));
		kputf(img->shared, I->v_off + 4 * i, (float)(kunit(&s) - 0.5));
	}
	return 0;
}

/* Issues the loads of ATTN_HDIM floats at off (32 loads of two floats). */
static void issue_vec(struct cxs_kt *kt, uint64_t off, uint32_t *h)
{
	for (uint32_t d = 0; d < ATTN_HDIM / 2; d++)
		h[d] = cxs_kt_ld(kt, ksh(kt, off + 8 * d), 8);
}

static void get_vec(struct cxs_kt *kt, const uint32_t *h, float *v)
{
	for (uint32_t d = 0; d < ATTN_HDIM / 2; d++) {
		uint64_t w = cxs_kt_get(kt, h[d]);
		v[2 * d] = kbits_f(w);
		v[2 * d + 1] = kbits_f(w >> 32);
	}
}

/* Rows of K and V in flight: 3 x 32 loads of the 128 a thread may have. */
#define AHEAD 3u

static void pair(struct cxs_kt *kt, const struct attn_info *I, uint32_t tok, uint32_t head)
{
	float q[ATTN_HDIM], row[ATTN_HDIM], out[ATTN_HDIM] = {0};
	uint32_t h[AHEAD][ATTN_HDIM / 2], hs[AHEAD];
	uint64_t cache = (uint64_t)head * I->ctx * ATTN_HDIM, n = I->ctx;
	issue_vec(kt, I->q_off + 4 * ((uint64_t)(tok * ATTN_HEADS + head) * ATTN_HDIM), h[0]);
	get_vec(kt, h[0], q);
	const float scale = 1.0f / sqrtf((float)ATTN_HDIM);
	float max = -INFINITY;
	for (uint64_t it = 0; it < n + AHEAD; it++) {
		if (it >= AHEAD) {
			uint64_t j = it - AHEAD;
			get_vec(kt, h[j % AHEAD], row);
			float dot = 0;
			for (uint32_t d = 0; d < ATTN_HDIM; d++)
				dot += q[d] * row[d];
			dot *= scale;
			if (dot > max)
				max = dot;
			cxs_kt_store(kt, kpv(kt, 4 * j), 4, kf_bits(dot));
			cxs_kt_compute(kt, ATTN_HDIM / 8 + 4); /* 8-wide FMAs, horizontal sum */
		}
		if (it < n)
			issue_vec(kt, I->k_off + 4 * (cache + it * ATTN_HDIM), h[it % AHEAD]);
	}
	float sum = 0;
	for (uint64_t it = 0; it < n + AHEAD; it++) {
		if (it >= AHEAD) { /* the scores were stored by the first loop, long before */
			uint64_t j = it - AHEAD;
			float p = expf(kbits_f(cxs_kt_get(kt, hs[j % AHEAD])) - max);
			sum += p;
			get_vec(kt, h[j % AHEAD], row);
			for (uint32_t d = 0; d < ATTN_HDIM; d++)
				out[d] += p * row[d];
			cxs_kt_compute(kt, ATTN_HDIM / 8 + 20); /* the FMAs and an exp */
		}
		if (it < n) {
			hs[it % AHEAD] = cxs_kt_ld(kt, kpv(kt, 4 * it), 4);
			issue_vec(kt, I->v_off + 4 * (cache + it * ATTN_HDIM), h[it % AHEAD]);
		}
	}
	uint64_t o = I->out_off + 4 * ((uint64_t)(tok * ATTN_HEADS + head) * ATTN_HDIM);
	for (uint32_t d = 0; d < ATTN_HDIM; d += 2)
		kst64(kt, o + 4 * d, kf_bits(out[d] / sum) | (uint64_t)kf_bits(out[d + 1] / sum) << 32);
}

static void run(struct cxs_kt *kt)
{
	const struct attn_info *I = cxs_kt_image(kt)->info;
	uint64_t lo, hi;
	kshare(ATTN_QTOK * ATTN_HEADS, cxs_kt_id(kt), cxs_kt_count(kt), &lo, &hi);
	cxs_kt_roi_begin(kt);
	for (uint64_t p = lo; p < hi; p++)
		pair(kt, I, (uint32_t)(p / ATTN_HEADS), (uint32_t)(p % ATTN_HEADS));
	cxs_kt_roi_end(kt);
	cxs_kt_barrier(kt, ksh(kt, I->bar_off), cxs_kt_count(kt)); /* all results written */
	kcheck_share(kt, I->out_off, 4 * ATTN_QTOK * ATTN_HEADS * ATTN_HDIM);
}

const struct cxs_kernel cxs_kernel_gpt2_attn = {
	.name = "gpt2_attn",
	.doc = "modelled after GPT-2 small's decoder attention: 4 new tokens x 12 heads of 64 over a KV cache of size tokens (scores, softmax, weighted V)",
	.default_size = 256,
	.deterministic = true,
	.build = build,
	.run = run,
};
