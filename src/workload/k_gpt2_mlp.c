/*
 * k_gpt2_mlp.c — the feed-forward block of a GPT-2 decoder layer in
 * generation, modelled after GPT-2's MLP (fc 4d, GELU, projection back to
 * d): BTOK tokens (batched decoding) of hidden size d = size; W1 is 4d x d,
 * W2 d x 4d (floats, row-major); the threads split the output rows of each
 * matrix, four rows at a time (register blocking: one pass over the
 * activations serves four weight rows), with a barrier between the two.
 *
 * Memory behaviour: each weight is read once per layer and reused by the
 * BTOK tokens from registers: a pure stream over 32 d^2 bytes (4.5 MiB at
 * d = 384), the activations cache-resident; bandwidth-bound with the cores
 * streaming together (CAMP's Llama and GPT-2 MLPs are its bandwidth-bound
 * inference cases).
 *
 * Shared layout: barrier line, x (BTOK x d), h (BTOK x 4d), y (BTOK x d)
 * floats, W1, W2. Result: h and y.
 */
#include "cxlsim/kthread.h"

#include <math.h>

#include "kinfo_priv.h"
#include "klayout_priv.h"

#define BLOCK 4u

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	if (!ksize_ok(img, "gpt2_mlp", "hidden size", 8, 8192, err, errlen))
		return -1;
	if (img->size % 8) {
		snprintf(err, errlen, "gpt2_mlp: size (hidden size) must be a multiple of 8 (got %" PRIu64 ")",
			 img->size);
		return -1;
	}
	struct mlp_info *I = calloc(1, sizeof *I);
	if (!I) {
		snprintf(err, errlen, "gpt2_mlp: out of memory");
		return -1;
	}
	img->info = I;
	I->d = img->size;
	uint64_t off = 0, d = I->d;
	I->bar_off = klay_take(&off, KL_LINE);
	I->x_off = klay_take(&off, 4 * MLP_BTOK * d);
	I->h_off = klay_take(&off, 4 * MLP_BTOK * 4 * d);
	I->y_off = klay_take(&off, 4 * MLP_BTOK * d);
	I->w1_off = klay_take(&off, 4 * 4 * d * d);
	I->w2_off = klay_take(&off, 4 * 4 * d * d);
	img->private_bytes = KL_LINE;
	if (klay_alloc(img, "gpt2_mlp", off, err, errlen) != 0)
		return -1;
	uint64_t s = img->seed ^ UINT64_C(0x3a1);
	for (uint64_t i = 0; i < MLP_BTOK * d; i++)
		kputf(img->shared, I->x_off + 4 * i, (float)(kunit(&s) - 0.5));
	float sc = 1.0f / sqrtf((float)d);
	for (uint64_t i = 0; i < 4 * d * d; i++) {
		kputf(img->shared, I->w1_off + 4 * i, (float)(kunit(&s) - 0.5) * sc);
		kputf(img->shared, I->w2_off + 4 * i, (float)(kunit(&s) - 0.5) * sc * 0.5f);
	}
	return 0;
}

static float gelu(float x)
{
	return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

/*
 * out[t][r] = act(sum_k W[r][k] in[t][k]) for rows r of [lo, hi): n_in inputs
 * a token; rows four at a time, eight inputs a step, the loads of AHEAD steps
 * in flight (an out-of-order core's window over the loop; the layer writes
 * only out, which it never reads).
 */
#define AHEAD 3u

struct step_loads {
	uint32_t w[BLOCK][4], x[MLP_BTOK][4];
};

static void layer(struct cxs_kt *kt, uint64_t w_off, uint64_t in_off, uint64_t n_in,
		  uint64_t out_off, uint64_t n_out, uint64_t lo, uint64_t hi, bool act)
{
	uint64_t ksteps = n_in / 8, nblocks = (hi - lo + BLOCK - 1) / BLOCK, total = nblocks * ksteps;
	struct step_loads h[AHEAD];
	float acc[BLOCK][MLP_BTOK] = {{0}};
	for (uint64_t it = 0; it < total + AHEAD; it++) {
		if (it >= AHEAD) {
			uint64_t st = it - AHEAD, r0 = lo + st / ksteps * BLOCK;
			uint32_t nr = hi - r0 < BLOCK ? (uint32_t)(hi - r0) : BLOCK;
			struct step_loads *g = &h[st % AHEAD];
			float x[MLP_BTOK][8];
			for (uint32_t t = 0; t < MLP_BTOK; t++)
				for (uint32_t j = 0; j < 4; j++) {
					uint64_t v = cxs_kt_get(kt, g->x[t][j]);
					x[t][2 * j] = kbits_f(v);
					x[t][2 * j + 1] = kbits_f(v >> 32);
				}
			for (uint32_t r = 0; r < nr; r++)
				for (uint32_t j = 0; j < 4; j++) {
					uint64_t v = cxs_kt_get(kt, g->w[r][j]);
					float w0 = kbits_f(v), w1 = kbits_f(v >> 32);
					for (uint32_t t = 0; t < MLP_BTOK; t++)
						acc[r][t] += w0 * x[t][2 * j] + w1 * x[t][2 * j + 1];
				}
			cxs_kt_compute(kt, nr * MLP_BTOK); /* one 8-wide FMA per row and token */
			if (st % ksteps == ksteps - 1) { /* the block's last step */
				for (uint32_t r = 0; r < nr; r++)
					for (uint32_t t = 0; t < MLP_BTOK; t++) {
						kstf(kt, out_off + 4 * (t * n_out + r0 + r),
						     act ? gelu(acc[r][t]) : acc[r][t]);
						acc[r][t] = 0;
					}
				cxs_kt_compute(kt, act ? nr * MLP_BTOK * 12 : nr * MLP_BTOK);
			}
		}
		if (it < total) {
			uint64_t r0 = lo + it / ksteps * BLOCK, k = it % ksteps * 8;
			uint32_t nr = hi - r0 < BLOCK ? (uint32_t)(hi - r0) : BLOCK;
			struct step_loads *g = &h[it % AHEAD];
			for (uint32_t r = 0; r < nr; r++)
				for (uint32_t j = 0; j < 4; j++)
					g->w[r][j] = cxs_kt_ld(kt, ksh(kt, w_off + 4 * ((r0 + r) * n_in + k + 2 * j)), 8);
			for (uint32_t t = 0; t < MLP_BTOK; t++)
				for (uint32_t j = 0; j < 4; j++)
					g->x[t][j] = cxs_kt_ld(kt, ksh(kt, in_off + 4 * (t * n_in + k + 2 * j)), 8);
		}
	}
}

static void run(struct cxs_kt *kt)
{
	const struct mlp_info *I = cxs_kt_image(kt)->info;
	uint32_t T = cxs_kt_count(kt);
	uint64_t d = I->d, lo, hi;
	cxs_kt_roi_begin(kt);
	kshare(4 * d / BLOCK, cxs_kt_id(kt), T, &lo, &hi);
	layer(kt, I->w1_off, I->x_off, d, I->h_off, 4 * d, lo * BLOCK, hi * BLOCK, true);
	cxs_kt_barrier(kt, ksh(kt, I->bar_off), T);
	kshare(d / BLOCK, cxs_kt_id(kt), T, &lo, &hi);
	layer(kt, I->w2_off, I->h_off, 4 * d, I->y_off, d, lo * BLOCK, hi * BLOCK, false);
	cxs_kt_roi_end(kt);
	cxs_kt_barrier(kt, ksh(kt, I->bar_off), cxs_kt_count(kt)); /* all results written */
	kcheck_share(kt, I->h_off, 4 * MLP_BTOK * 4 * d);
	kcheck_share(kt, I->y_off, 4 * MLP_BTOK * d);
}

const struct cxs_kernel cxs_kernel_gpt2_mlp = {
	.name = "gpt2_mlp",
	.doc = "modelled after GPT-2's decoder MLP: 4 tokens through fc (4d x d, GELU) and projection (d x 4d) of hidden size d = size, weights streamed once",
	.default_size = 384,
	.deterministic = true,
	.build = build,
	.run = run,
};
