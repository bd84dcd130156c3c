/*
 * k_bodytrack.c — an annealed particle filter tracking a stick figure through
 * edge maps, modelled after PARSEC's bodytrack: read-mostly shared images,
 * per-particle likelihood evaluation in parallel (scattered byte loads into
 * the edge maps), weights written per particle, resampling by one thread,
 * barriers between the phases. Not the original program: a 2-D template of
 * CXS_BT_POINTS points instead of 3-D cylinders, integer arithmetic.
 *
 * Model. A pose is (x, y, scale, lean), integers; template point (dx, dy)
 * projects to (x + dx*scale/256 + dy*lean/256, y + dy*scale/256) in camera 0
 * and to (px - py/8 + 16, py) in camera 1. The likelihood of a pose is
 * (sum of the edge values at its 2 x CXS_BT_POINTS projections)^2 / 1024 + 1.
 *
 * Data. size = P particles (default 4096, bodytrack's 4000). CXS_BT_FRAMES
 * frames of CXS_BT_CAMS edge maps (W x H bytes) are drawn at build time
 * around a known true pose per frame (stored, for tests: the kernel never
 * reads it), plus seeded noise.
 *
 * Shared layout (64-byte lines):
 *   line 0       header: P, points, W, H, frames, cams, offsets (see build)
 *   line 1       barrier
 *   sums         per thread one line: sum of weights, weighted pose sums
 *   idx          P words: the particle each slot resamples
 *   est          per frame, one line: estimated pose (4 words), total weight
 *   truth        per frame, one line: the true pose
 *   template     CXS_BT_POINTS words: dx | dy << 32 (int32 each)
 *   particles    two arrays of P lines: x, y, scale, lean, weight
 *   maps         frames x cams x W x H bytes
 *
 * Per frame, CXS_BT_LAYERS annealing layers, each:
 *   1. every thread, for its P/T particles: load the pose (4 words at once),
 *      add noise (a hash of frame, layer and particle index, so the result
 *      does not depend on which thread does it), project the template and
 *      issue the edge loads (up to 64 at once), sum, store the new pose and
 *      its weight; the thread's weight sums to its line;          barrier
 *   2. thread 0: total weight, the estimate (weighted mean pose, last layer),
 *      systematic resampling: one pass over the P weights writing idx;
 *                                                                  barrier
 *   3. every thread copies the chosen poses into its slots of the other
 *      particle array;                                             barrier
 * The template sits in each thread's private memory (copied before the ROI),
 * as bodytrack keeps its model per thread. Charged compute: ~8 instructions
 * per projected point, ~30 per particle, ~9 per resampled slot.
 *
 * Integer arithmetic only: the result is deterministic. Each thread checks its
 * share of both particle arrays and of idx; thread 0 the estimates. Memory
 * operations per layer: ~400 per particle (P/T particles a thread) plus ~2 P
 * on thread 0 (the serial resampling, as in bodytrack): at P = 4096 and
 * T = 64 about 0.3 M a thread and 0.4 M for thread 0 over 4 frames x 3
 * layers.
 */
#include "cxlsim/kthread.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define LINE 64u
#define CXS_BT_POINTS 128u
#define CXS_BT_FRAMES 4u
#define CXS_BT_LAYERS 3u
#define CXS_BT_CAMS 2u
#define CXS_BT_W 320u
#define CXS_BT_H 240u
#define CXS_BT_P_MAX (1u << 20)
_Static_assert(CXS_BT_POINTS % 32 == 0, "the template is evaluated 32 points at a time");
#define OFF_HDR 0
#define OFF_BAR LINE

struct bt_layout {
	uint64_t p, part_sums_off, idx_off, est_off, truth_off, tmpl_off, part_off[2], maps_off;
};

/* Noise amplitudes per layer: coarse to fine (annealing). */
static const int64_t amp_xy[CXS_BT_LAYERS] = {16, 8, 3};
static const int64_t amp_shape[CXS_BT_LAYERS] = {24, 12, 6};

static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Uniform in [-a, a] from a hash. */
static int64_t noise(uint64_t key, uint32_t k, int64_t a)
{
	return (int64_t)(mix(key * 8 + k) % (uint64_t)(2 * a + 1)) - a;
}

static void true_pose(uint32_t f, int64_t pose[4])
{
	pose[0] = 120 + 12 * (int64_t)f;
	pose[1] = 110 + 3 * (int64_t)f;
	pose[2] = 256 + 4 * (int64_t)f;
	pose[3] = 10 * (int64_t)f - 30;
}

/* The stick figure: head, torso, two arms, two legs (128 points). */
static void make_template(int32_t dx[CXS_BT_POINTS], int32_t dy[CXS_BT_POINTS])
{
	static const int32_t seg[][5] = {
		/* x0, y0, x1, y1, points */
		{-8, -68, 8, -52, 8},  {8, -68, -8, -52, 8}, /* head: a cross */
		{0, -50, 0, 10, 32},                          /* torso */
		{0, -40, -30, -10, 16}, {0, -40, 30, -10, 16}, /* arms */
		{0, 10, -15, 60, 24},   {0, 10, 15, 60, 24},   /* legs */
	};
	uint32_t k = 0;
	for (size_t s = 0; s < sizeof seg / sizeof seg[0]; s++)
		for (int32_t i = 0; i < seg[s][4]; i++) {
			dx[k] = seg[s][0] + (seg[s][2] - seg[s][0]) * i / (seg[s][4] - 1);
			dy[k] = seg[s][1] + (seg[s][3] - seg[s][1]) * i / (seg[s][4] - 1);
			k++;
		}
}

/* Projection of template point (dx, dy) in camera c; false if off the map. */
static bool project(const int64_t pose[4], int32_t dx, int32_t dy, uint32_t c, uint32_t *px,
		    uint32_t *py)
{
	int64_t x = pose[0] + dx * pose[2] / 256 + dy * pose[3] / 256;
	int64_t y = pose[1] + dy * pose[2] / 256;
	if (c == 1)
		x = x - y / 8 + 16;
	if (x < 0 || y < 0 || x >= CXS_BT_W || y >= CXS_BT_H)
		return false;
	*px = (uint32_t)x, *py = (uint32_t)y;
	return true;
}

static void put_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	if (img->size < 1 || img->size > CXS_BT_P_MAX) {
		snprintf(err, errlen, "bodytrack: size (particles) must be 1..%u (got %" PRIu64 ")",
			 CXS_BT_P_MAX, img->size);
		return -1;
	}
	struct bt_layout *L = calloc(1, sizeof *L);
	if (!L) {
		snprintf(err, errlen, "bodytrack: out of memory");
		return -1;
	}
	L->p = img->size;
	L->part_sums_off = 2 * LINE;
	L->idx_off = L->part_sums_off + (uint64_t)img->nthreads * LINE;
	L->est_off = L->idx_off + (L->p * 8 + LINE - 1) / LINE * LINE;
	L->truth_off = L->est_off + CXS_BT_FRAMES * LINE;
	L->tmpl_off = L->truth_off + CXS_BT_FRAMES * LINE;
	L->part_off[0] = L->tmpl_off + CXS_BT_POINTS * 8;
	L->part_off[1] = L->part_off[0] + L->p * LINE;
	L->maps_off = L->part_off[1] + L->p * LINE;
	uint64_t map_bytes = (uint64_t)CXS_BT_W * CXS_BT_H;
	img->shared_bytes = L->maps_off + CXS_BT_FRAMES * CXS_BT_CAMS * map_bytes;
	img->shared_bytes = (img->shared_bytes + LINE - 1) / LINE * LINE;
	img->private_bytes = CXS_BT_POINTS * 8;
	img->info = L;
	img->shared = calloc(1, img->shared_bytes);
	if (!img->shared) {
		snprintf(err, errlen, "bodytrack: out of memory for %" PRIu64 " bytes",
			 img->shared_bytes);
		return -1;
	}
	uint8_t *sh = img->shared;
	uint64_t hdr[8] = {L->p, CXS_BT_POINTS, CXS_BT_W, CXS_BT_H, CXS_BT_FRAMES, CXS_BT_CAMS,
			   L->part_off[0], L->maps_off};
	memcpy(sh + OFF_HDR, hdr, sizeof hdr);
	int32_t dx[CXS_BT_POINTS], dy[CXS_BT_POINTS];
	make_template(dx, dy);
	for (uint32_t k = 0; k < CXS_BT_POINTS; k++)
		put_u64(sh + L->tmpl_off + 8 * k, (uint32_t)dx[k] | (uint64_t)(uint32_t)dy[k] << 32);
	uint64_t s = img->seed ^ UINT64_C(0xb0d7);
	for (uint32_t f = 0; f < CXS_BT_FRAMES; f++) {
		int64_t pose[4];
		true_pose(f, pose);
		for (int k = 0; k < 4; k++)
			put_u64(sh + L->truth_off + f * LINE + 8 * k, (uint64_t)pose[k]);
		for (uint32_t c = 0; c < CXS_BT_CAMS; c++) {
			uint8_t *m = sh + L->maps_off + (f * CXS_BT_CAMS + c) * map_bytes;
			for (uint64_t i = 0; i < map_bytes; i++) /* clutter */
				m[i] = (uint8_t)(mix(s + (f * 2 + c) * map_bytes + i) & 31);
			for (uint32_t k = 0; k < CXS_BT_POINTS; k++) {
				uint32_t px, py;
				if (!project(pose, dx[k], dy[k], c, &px, &py))
					continue;
				for (int32_t oy = -3; oy <= 3; oy++)
					for (int32_t ox = -3; ox <= 3; ox++) {
						int32_t x = (int32_t)px + ox, y = (int32_t)py + oy;
						if (x < 0 || y < 0 || x >= (int32_t)CXS_BT_W ||
						    y >= (int32_t)CXS_BT_H)
							continue;
						int32_t d = abs(ox) > abs(oy) ? abs(ox) : abs(oy);
						uint8_t v = (uint8_t)(255 - 70 * d);
						uint8_t *at = m + (uint64_t)y * CXS_BT_W + x;
						if (v > *at)
							*at = v;
					}
			}
		}
	}
	int64_t p0[4];
	true_pose(0, p0);
	for (uint64_t i = 0; i < L->p; i++) {
		uint8_t *r = sh + L->part_off[0] + i * LINE;
		put_u64(r, (uint64_t)(p0[0] + noise(s ^ i, 0, 20)));
		put_u64(r + 8, (uint64_t)(p0[1] + noise(s ^ i, 1, 20)));
		put_u64(r + 16, (uint64_t)(p0[2] + noise(s ^ i, 2, 40)));
		put_u64(r + 24, (uint64_t)(p0[3] + noise(s ^ i, 3, 40)));
		put_u64(r + 32, 1);
	}
	return 0;
}

/* Phase 1 for particle i of array `cur`: perturb, evaluate, store. */
static uint64_t evaluate(struct cxs_kt *kt, const struct bt_layout *L, uint64_t cur, uint64_t i,
			 uint32_t f, uint32_t layer, int64_t pose[4])
{
	uint64_t s = cxs_kt_shared(kt), priv = cxs_kt_private(kt);
	uint64_t rec = cur + i * LINE;
	uint32_t h[64];
	for (int k = 0; k < 4; k++)
		h[k] = cxs_kt_ld(kt, rec + 8 * k, 8);
	uint64_t key = ((uint64_t)f * CXS_BT_LAYERS + layer) << 32 ^ i;
	for (int k = 0; k < 4; k++)
		pose[k] = (int64_t)cxs_kt_get(kt, h[k]) +
			  noise(key, (uint32_t)k, k < 2 ? amp_xy[layer] : amp_shape[layer]);
	cxs_kt_compute(kt, 30);
	uint64_t maps = s + L->maps_off + (uint64_t)f * CXS_BT_CAMS * CXS_BT_W * CXS_BT_H;
	/* Chunks of 32 template points: 32 private loads, then up to 64 edge
	 * loads in flight (below CXS_KT_MAX_INFLIGHT). */
	uint64_t sum = 0;
	for (uint32_t k0 = 0; k0 < CXS_BT_POINTS; k0 += 32) {
		uint32_t ht[32], n = 0;
		for (uint32_t k = 0; k < 32; k++)
			ht[k] = cxs_kt_ld(kt, priv + 8 * (k0 + k), 8); /* an L1 hit */
		for (uint32_t k = 0; k < 32; k++) {
			uint64_t d = cxs_kt_get(kt, ht[k]);
			int32_t dx = (int32_t)(uint32_t)d, dy = (int32_t)(uint32_t)(d >> 32);
			for (uint32_t c = 0; c < CXS_BT_CAMS; c++) {
				uint32_t px, py;
				if (project(pose, dx, dy, c, &px, &py))
					h[n++] = cxs_kt_ld(kt, maps + (uint64_t)c * CXS_BT_W * CXS_BT_H +
								       (uint64_t)py * CXS_BT_W + px, 1);
			}
			cxs_kt_compute(kt, 8);
		}
		for (uint32_t k = 0; k < n; k++)
			sum += cxs_kt_get(kt, h[k]);
	}
	for (int k = 0; k < 4; k++)
		cxs_kt_store(kt, rec + 8 * k, 8, (uint64_t)pose[k]);
	uint64_t s2 = sum * sum / 1024, wt = s2 * s2 / 1024 + 1;
	cxs_kt_store(kt, rec + 32, 8, wt);
	return wt;
}

/*
 * Phase 2, thread 0: the total weight and (last layer) the estimate from the
 * threads' partial sums, then systematic resampling: targets u0 + j total / P,
 * j = 0 .. P-1, against the running sum of the weights; the chosen particle
 * of slot j goes to idx[j].
 */
static void resample(struct cxs_kt *kt, const struct bt_layout *L, uint64_t cur, uint32_t f,
		     uint32_t layer)
{
	enum { BATCH = 64 };
	uint64_t s = cxs_kt_shared(kt), total = 0, wsum[4] = {0, 0, 0, 0};
	uint32_t T = cxs_kt_count(kt);
	for (uint32_t u = 0; u < T; u++) {
		uint32_t h[5];
		for (int w = 0; w < 5; w++)
			h[w] = cxs_kt_ld(kt, s + L->part_sums_off + (uint64_t)u * LINE + 8 * (uint64_t)w, 8);
		total += cxs_kt_get(kt, h[0]);
		for (int w = 0; w < 4; w++)
			wsum[w] += cxs_kt_get(kt, h[1 + w]); /* two's complement sums */
	}
	if (layer + 1 == CXS_BT_LAYERS) {
		uint64_t est = s + L->est_off + (uint64_t)f * LINE;
		for (int w = 0; w < 4; w++)
			cxs_kt_store(kt, est + 8 * (uint64_t)w, 8, (uint64_t)((int64_t)wsum[w] / (int64_t)total));
		cxs_kt_store(kt, est + 32, 8, total);
	}
	uint64_t u0 = mix(((uint64_t)f << 8 | layer) ^ UINT64_C(0x5e5a)) % (total / L->p + 1);
	uint64_t i = 0, cum = 0, wt[BATCH];
	uint64_t j = 0, target = u0;
	for (uint64_t i0 = 0; i0 < L->p && j < L->p; i0 += BATCH) {
		uint32_t h[BATCH], k = 0;
		for (i = i0; i < L->p && k < BATCH; i++, k++)
			h[k] = cxs_kt_ld(kt, cur + i * LINE + 32, 8);
		for (uint32_t b = 0; b < k; b++)
			wt[b] = cxs_kt_get(kt, h[b]);
		for (uint32_t b = 0; b < k; b++) {
			cum += wt[b];
			/* every target below the running sum picks particle i0 + b; the
			 * last particle takes what rounding leaves */
			while (j < L->p && (target < cum || i0 + b + 1 == L->p)) {
				cxs_kt_store(kt, s + L->idx_off + 8 * j, 8, i0 + b);
				j++;
				target = u0 + j * total / L->p;
				cxs_kt_compute(kt, 6);
			}
			cxs_kt_compute(kt, 3);
		}
	}
}

/* Phase 3: the thread's slots [lo, hi) of `nxt` copy the chosen particles. */
static void copy_chosen(struct cxs_kt *kt, const struct bt_layout *L, uint64_t cur, uint64_t nxt,
			uint64_t lo, uint64_t hi)
{
	enum { BATCH = 16 };
	uint64_t s = cxs_kt_shared(kt);
	for (uint64_t j0 = lo; j0 < hi; j0 += BATCH) {
		uint32_t h[BATCH * 4], k = 0;
		uint64_t idx[BATCH];
		for (uint64_t j = j0; j < hi && k < BATCH; j++)
			h[k++] = cxs_kt_ld(kt, s + L->idx_off + 8 * j, 8);
		for (uint32_t b = 0; b < k; b++)
			idx[b] = cxs_kt_get(kt, h[b]);
		for (uint32_t b = 0; b < k; b++)
			for (int w = 0; w < 4; w++)
				h[4 * b + (uint32_t)w] = cxs_kt_ld(kt, cur + idx[b] * LINE + 8 * (uint64_t)w, 8);
		for (uint32_t b = 0; b < k; b++) {
			for (int w = 0; w < 4; w++)
				cxs_kt_store(kt, nxt + (j0 + b) * LINE + 8 * (uint64_t)w, 8,
					     cxs_kt_get(kt, h[4 * b + (uint32_t)w]));
			cxs_kt_store(kt, nxt + (j0 + b) * LINE + 32, 8, 1);
			cxs_kt_compute(kt, 8);
		}
	}
}

static void run(struct cxs_kt *kt)
{
	const struct bt_layout *L = cxs_kt_image(kt)->info;
	uint64_t s = cxs_kt_shared(kt), bar = s + OFF_BAR;
	uint32_t t = cxs_kt_id(kt), T = cxs_kt_count(kt);
	uint64_t lo = L->p * t / T, hi = L->p * (t + 1) / T;
	for (uint32_t k = 0; k < CXS_BT_POINTS; k++) /* the thread's copy of the model */
		cxs_kt_store(kt, cxs_kt_private(kt) + 8 * k, 8,
			     cxs_kt_load(kt, s + L->tmpl_off + 8 * k, 8));
	uint32_t a = 0;
	cxs_kt_roi_begin(kt);
	for (uint32_t f = 0; f < CXS_BT_FRAMES; f++)
		for (uint32_t layer = 0; layer < CXS_BT_LAYERS; layer++) {
			uint64_t cur = s + L->part_off[a], nxt = s + L->part_off[a ^ 1];
			uint64_t sums[5] = {0, 0, 0, 0, 0};
			for (uint64_t i = lo; i < hi; i++) {
				int64_t pose[4];
				uint64_t w = evaluate(kt, L, cur, i, f, layer, pose);
				sums[0] += w;
				for (int k = 0; k < 4; k++)
					sums[1 + k] += w * (uint64_t)pose[k];
			}
			for (int k = 0; k < 5; k++)
				cxs_kt_store(kt, s + L->part_sums_off + (uint64_t)t * LINE + 8 * (uint64_t)k,
					     8, sums[k]);
			cxs_kt_barrier(kt, bar, T);
			if (t == 0)
				resample(kt, L, cur, f, layer);
			cxs_kt_barrier(kt, bar, T);
			copy_chosen(kt, L, cur, nxt, lo, hi);
			cxs_kt_barrier(kt, bar, T);
			a ^= 1;
		}
	cxs_kt_roi_end(kt);
	for (int arr = 0; arr < 2; arr++)
		cxs_kt_check_words(kt, L->part_off[arr] + lo * LINE, (hi - lo) * LINE);
	cxs_kt_check_words(kt, L->idx_off + lo * 8, (hi - lo) * 8);
	if (t == 0)
		cxs_kt_check_words(kt, L->est_off, CXS_BT_FRAMES * LINE);
	cxs_kt_result(kt, "particles_evaluated", (hi - lo) * CXS_BT_FRAMES * CXS_BT_LAYERS);
	if (t == 0)
		cxs_kt_result(kt, "resamplings", CXS_BT_FRAMES * CXS_BT_LAYERS);
}

const struct cxs_kernel cxs_kernel_bodytrack = {
	.name = "bodytrack",
	.doc = "modelled after PARSEC's bodytrack: annealed particle filter (size particles) over "
	       "shared edge maps, parallel likelihoods, resampling by one thread",
	.default_size = 4096,
	.deterministic = true,
	.build = build,
	.run = run,
};
