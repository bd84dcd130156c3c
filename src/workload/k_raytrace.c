/*
 * k_raytrace.c — a ray tracer over a read-mostly shared scene, modelled after
 * SPLASH-2's raytrace: threads take image tiles from a shared work counter,
 * walk a bounding-volume hierarchy (dependent loads: each node's children
 * are known only once the node is read) and write their pixels to a shared
 * framebuffer. Not the original program (no car model, no hierarchical
 * uniform grid, spheres only).
 *
 * Scene. CXS_RT_SPHERES spheres at seeded random places in [-1, 1]^3, built
 * at image-build time into a BVH (median split on the longest axis, at most
 * CXS_RT_LEAF spheres a leaf); the sphere array is stored in leaf order.
 * size = W: the image is W x W pixels (default 256), tiles of
 * CXS_RT_TILE x CXS_RT_TILE pixels, row-major tile numbers.
 *
 * Shared layout (64-byte lines):
 *   line 0     header: nspheres, spheres_off, nodes_off, fb_off, W, nnodes
 *   line 1     barrier;   line 2   tile counter (fetch_add), own line
 *   nodes      64 B each: min xyz, max xyz (doubles), left | right << 32,
 *              first | count << 32 (count 0: inner node)
 *   spheres    64 B each: centre xyz, radius, colour (r | g << 8 | b << 16),
 *              reflectivity, 2 unused words
 *   fb         W x W 32-bit pixels (r | g << 8 | b << 16), row-major
 *
 * Per pixel: a primary ray (closest hit), a shadow ray towards the light
 * (any hit stops the walk), and for a reflective sphere one reflected ray;
 * colour = ambient + diffuse (if lit), blended with the reflection. Loads of
 * a node's 8 words, and of a leaf's spheres, are issued together; the walk
 * itself is a chain (a node's children are read only after the node).
 * Compute charged: ~24 instructions per slab test, ~22 per sphere test, ~40
 * per shade (-O3 bodies of these loops).
 *
 * Every pixel is written once by whoever rendered its tile; its value does
 * not depend on who, so the image is deterministic. Each thread checks an
 * even share of the framebuffer's rows against the reference run; thread 0
 * checks that the tile counter ended at ntiles + T (each thread overshoots
 * once). sqrt is libm's (IEEE correctly rounded, so the reference and the
 * simulated run agree bit for bit). Memory operations: ~415 a pixel at the default scene, W^2 / T
 * pixels a thread: ~0.43 M at W = 256 and T = 64.
 */
#include "cxlsim/kthread.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define LINE 64u
#define CXS_RT_SPHERES 2048u
#define CXS_RT_LEAF 4u
#define CXS_RT_TILE 8u
#define CXS_RT_STACK 64u  /* BVH depth is ~log2(2048 / 4) + 1: far below */
#define CXS_RT_EPS 1e-7
#define OFF_HDR 0
#define OFF_BAR LINE
#define OFF_TILES (2 * LINE)

struct rt_layout {
	uint64_t nspheres, spheres_off, nodes_off, fb_off, w, nnodes;
};

struct ray {
	double o[3], d[3], inv[3];
};


/* ---- build ---------------------------------------------------------------- */

struct bsphere {
	double c[3], r;
	uint64_t colour;
	double refl;
};

struct bnode {
	double lo[3], hi[3];
	uint32_t left, right, first, count;
};

struct bvh_build {
	struct bsphere *sp;
	struct bnode *nodes;
	uint32_t nnodes;
	int axis; /* for the comparator */
};

static struct bvh_build *sort_ctx; /* qsort has no context argument (build-time only) */

static int cmp_axis(const void *a, const void *b)
{
	const struct bsphere *x = a, *y = b;
	int ax = sort_ctx->axis;
	return x->c[ax] < y->c[ax] ? -1 : x->c[ax] > y->c[ax] ? 1 : 0;
}

static uint32_t bvh_node(struct bvh_build *B, uint32_t first, uint32_t count)
{
	uint32_t id = B->nnodes++;
	struct bnode *nd = &B->nodes[id];
	for (int a = 0; a < 3; a++) {
		nd->lo[a] = 1e300;
		nd->hi[a] = -1e300;
	}
	for (uint32_t i = first; i < first + count; i++)
		for (int a = 0; a < 3; a++) {
			double lo = B->sp[i].c[a] - B->sp[i].r, hi = B->sp[i].c[a] + B->sp[i].r;
			if (lo < nd->lo[a])
				nd->lo[a] = lo;
			if (hi > nd->hi[a])
				nd->hi[a] = hi;
		}
	if (count <= CXS_RT_LEAF) {
		nd->first = first, nd->count = count;
		return id;
	}
	int axis = 0;
	for (int a = 1; a < 3; a++)
		if (nd->hi[a] - nd->lo[a] > nd->hi[axis] - nd->lo[axis])
			axis = a;
	B->axis = axis;
	sort_ctx = B;
	qsort(B->sp + first, count, sizeof *B->sp, cmp_axis);
	uint32_t half = count / 2;
	uint32_t l = bvh_node(B, first, half);
	uint32_t r = bvh_node(B, first + half, count - half);
	B->nodes[id].left = l, B->nodes[id].right = r, B->nodes[id].count = 0;
	return id;
}

static void put_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static void put_d(uint8_t *p, double v)
{
	memcpy(p, &v, 8);
}

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	if (img->size < CXS_RT_TILE || img->size > 4096 || img->size % CXS_RT_TILE) {
		snprintf(err, errlen, "raytrace: size (image width) must be a multiple of %u in %u..4096 "
			 "(got %" PRIu64 ")", CXS_RT_TILE, CXS_RT_TILE, img->size);
		return -1;
	}
	uint32_t n = CXS_RT_SPHERES, maxnodes = 2 * n;
	struct bvh_build B = {.sp = calloc(n, sizeof *B.sp), .nodes = calloc(maxnodes, sizeof *B.nodes)};
	struct rt_layout *L = calloc(1, sizeof *L);
	if (!B.sp || !B.nodes || !L) {
		free(B.sp), free(B.nodes), free(L);
		snprintf(err, errlen, "raytrace: out of memory");
		return -1;
	}
	uint64_t s = img->seed ^ UINT64_C(0x7a7ace);
	for (uint32_t i = 0; i < n; i++) {
		double v[6];
		for (int k = 0; k < 6; k++) {
			s = s * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
			v[k] = (double)(s >> 11) / 9007199254740992.0;
		}
		B.sp[i].c[0] = 2 * v[0] - 1, B.sp[i].c[1] = 2 * v[1] - 1, B.sp[i].c[2] = 2 * v[2] - 1;
		B.sp[i].r = 0.02 + 0.06 * v[3];
		B.sp[i].colour = (s >> 8 & 0xff) | (s >> 16 & 0xff) << 8 | (s >> 24 & 0xff) << 16;
		B.sp[i].refl = v[4] < 0.3 ? 0.5 * v[5] : 0.0;
	}
	bvh_node(&B, 0, n);
	L->nspheres = n;
	L->nnodes = B.nnodes;
	L->w = img->size;
	L->nodes_off = 3 * LINE;
	L->spheres_off = L->nodes_off + (uint64_t)B.nnodes * LINE;
	L->fb_off = L->spheres_off + (uint64_t)n * LINE;
	img->shared_bytes = L->fb_off + (L->w * L->w * 4 + LINE - 1) / LINE * LINE;
	img->private_bytes = LINE;
	img->info = L;
	img->shared = calloc(1, img->shared_bytes);
	if (!img->shared) {
		free(B.sp), free(B.nodes);
		snprintf(err, errlen, "raytrace: out of memory for %" PRIu64 " bytes", img->shared_bytes);
		return -1;
	}
	uint8_t *h = img->shared + OFF_HDR;
	put_u64(h, n), put_u64(h + 8, L->spheres_off), put_u64(h + 16, L->nodes_off);
	put_u64(h + 24, L->fb_off), put_u64(h + 32, L->w), put_u64(h + 40, L->nnodes);
	for (uint32_t i = 0; i < B.nnodes; i++) {
		uint8_t *p = img->shared + L->nodes_off + (uint64_t)i * LINE;
		for (int a = 0; a < 3; a++) {
			put_d(p + 8 * a, B.nodes[i].lo[a]);
			put_d(p + 24 + 8 * a, B.nodes[i].hi[a]);
		}
		put_u64(p + 48, B.nodes[i].left | (uint64_t)B.nodes[i].right << 32);
		put_u64(p + 56, B.nodes[i].first | (uint64_t)B.nodes[i].count << 32);
	}
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *p = img->shared + L->spheres_off + (uint64_t)i * LINE;
		for (int a = 0; a < 3; a++)
			put_d(p + 8 * a, B.sp[i].c[a]);
		put_d(p + 24, B.sp[i].r);
		put_u64(p + 32, B.sp[i].colour);
		put_d(p + 40, B.sp[i].refl);
	}
	free(B.sp);
	free(B.nodes);
	return 0;
}

/* ---- tracing ---------------------------------------------------------------- */

static void make_ray(struct ray *r, const double o[3], const double d[3])
{
	for (int a = 0; a < 3; a++) {
		r->o[a] = o[a];
		r->d[a] = d[a];
		r->inv[a] = d[a] != 0.0 ? 1.0 / d[a] : 1e300;
	}
}

/* Ray-sphere: the nearest t > eps, or -1. */
static double hit_sphere(const struct ray *r, const double c[3], double rad)
{
	double oc[3] = {r->o[0] - c[0], r->o[1] - c[1], r->o[2] - c[2]};
	double b = oc[0] * r->d[0] + oc[1] * r->d[1] + oc[2] * r->d[2];
	double cc = oc[0] * oc[0] + oc[1] * oc[1] + oc[2] * oc[2] - rad * rad;
	double disc = b * b - cc;
	if (disc < 0)
		return -1.0;
	double sq = sqrt(disc), t = -b - sq;
	if (t > CXS_RT_EPS)
		return t;
	t = -b + sq;
	return t > CXS_RT_EPS ? t : -1.0;
}

/*
 * Walks the BVH: the closest hit (any_hit: the first found). Returns the
 * sphere index or UINT32_MAX; *t_best the distance.
 */
static uint32_t trace(struct cxs_kt *kt, const struct rt_layout *L, const struct ray *r,
		      bool any_hit, double *t_best)
{
	uint64_t nodes = cxs_kt_shared(kt) + L->nodes_off, sph = cxs_kt_shared(kt) + L->spheres_off;
	uint32_t stack[CXS_RT_STACK], sp = 0, best = UINT32_MAX;
	double tb = 1e300;
	stack[sp++] = 0;
	while (sp > 0) {
		uint32_t id = stack[--sp], h[8];
		for (int k = 0; k < 8; k++)
			h[k] = cxs_kt_ld(kt, nodes + (uint64_t)id * LINE + 8 * k, 8);
		double lo[3], hi[3];
		for (int a = 0; a < 3; a++) {
			lo[a] = cxs_kt_getd(kt, h[a]);
			hi[a] = cxs_kt_getd(kt, h[3 + a]);
		}
		uint64_t kids = cxs_kt_get(kt, h[6]), leaf = cxs_kt_get(kt, h[7]);
		double tn = 0.0, tf = tb;
		for (int a = 0; a < 3; a++) {
			double t0 = (lo[a] - r->o[a]) * r->inv[a], t1 = (hi[a] - r->o[a]) * r->inv[a];
			if (t0 > t1) {
				double x = t0;
				t0 = t1, t1 = x;
			}
			if (t0 > tn)
				tn = t0;
			if (t1 < tf)
				tf = t1;
		}
		cxs_kt_compute(kt, 24);
		if (tn > tf)
			continue;
		uint32_t count = (uint32_t)(leaf >> 32), first = (uint32_t)leaf;
		if (count == 0) {
			if (sp + 2 > CXS_RT_STACK)
				cxs_kt_fail(kt, "raytrace: BVH deeper than %u", CXS_RT_STACK);
			stack[sp++] = (uint32_t)(kids >> 32);
			stack[sp++] = (uint32_t)kids;
			continue;
		}
		uint32_t hs[CXS_RT_LEAF][4];
		for (uint32_t i = 0; i < count; i++)
			for (int k = 0; k < 4; k++)
				hs[i][k] = cxs_kt_ld(kt, sph + (uint64_t)(first + i) * LINE + 8 * k, 8);
		for (uint32_t i = 0; i < count; i++) {
			double c[3] = {cxs_kt_getd(kt, hs[i][0]), cxs_kt_getd(kt, hs[i][1]),
				       cxs_kt_getd(kt, hs[i][2])};
			double t = hit_sphere(r, c, cxs_kt_getd(kt, hs[i][3]));
			cxs_kt_compute(kt, 22);
			if (t > 0 && t < tb) {
				tb = t, best = first + i;
				if (any_hit) {
					*t_best = tb;
					return best;
				}
			}
		}
	}
	*t_best = tb;
	return best;
}

static const double light_dir[3] = {0.5773502691896258, 0.5773502691896258, -0.5773502691896258};

/* Colour of a ray, as three doubles in 0..255; depth 0 may reflect once. */
static void shade(struct cxs_kt *kt, const struct rt_layout *L, const struct ray *r, int depth,
		  double out[3])
{
	double t;
	uint32_t s = trace(kt, L, r, false, &t);
	if (s == UINT32_MAX) {
		double sky = 40.0 + 100.0 * (r->d[1] + 1.0);
		out[0] = sky * 0.5, out[1] = sky * 0.7, out[2] = sky;
		return;
	}
	uint64_t a = cxs_kt_shared(kt) + L->spheres_off + (uint64_t)s * LINE;
	uint32_t h[6];
	for (int k = 0; k < 6; k++)
		h[k] = cxs_kt_ld(kt, a + 8 * k, 8);
	double c[3] = {cxs_kt_getd(kt, h[0]), cxs_kt_getd(kt, h[1]), cxs_kt_getd(kt, h[2])};
	double rad = cxs_kt_getd(kt, h[3]), refl = cxs_kt_getd(kt, h[5]);
	uint64_t col = cxs_kt_get(kt, h[4]);
	double p[3], nrm[3];
	for (int k = 0; k < 3; k++) {
		p[k] = r->o[k] + t * r->d[k];
		nrm[k] = (p[k] - c[k]) / rad;
	}
	double diff = nrm[0] * light_dir[0] + nrm[1] * light_dir[1] + nrm[2] * light_dir[2];
	cxs_kt_compute(kt, 40);
	if (diff > 0) {
		struct ray sh;
		double o[3] = {p[0] + 1e-6 * nrm[0], p[1] + 1e-6 * nrm[1], p[2] + 1e-6 * nrm[2]};
		make_ray(&sh, o, light_dir);
		double ts;
		if (trace(kt, L, &sh, true, &ts) != UINT32_MAX)
			diff = 0;
	} else {
		diff = 0;
	}
	double lum = 0.15 + 0.85 * diff;
	for (int k = 0; k < 3; k++)
		out[k] = lum * (double)(col >> (8 * k) & 0xff);
	if (refl > 0 && depth == 0) {
		double dn = r->d[0] * nrm[0] + r->d[1] * nrm[1] + r->d[2] * nrm[2];
		double d[3], o[3], rc[3];
		for (int k = 0; k < 3; k++) {
			d[k] = r->d[k] - 2 * dn * nrm[k];
			o[k] = p[k] + 1e-6 * nrm[k];
		}
		struct ray rr;
		make_ray(&rr, o, d);
		shade(kt, L, &rr, 1, rc);
		for (int k = 0; k < 3; k++)
			out[k] = (1 - refl) * out[k] + refl * rc[k];
	}
}

static uint32_t pixel(struct cxs_kt *kt, const struct rt_layout *L, uint32_t x, uint32_t y)
{
	double w = (double)L->w;
	double d[3] = {((x + 0.5) / w * 2 - 1) * 0.6, ((y + 0.5) / w * 2 - 1) * 0.6, 1.0};
	double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
	for (int k = 0; k < 3; k++)
		d[k] /= len;
	static const double eye[3] = {0.0, 0.0, -3.0};
	struct ray r;
	make_ray(&r, eye, d);
	double c[3];
	shade(kt, L, &r, 0, c);
	uint32_t v = 0;
	for (int k = 0; k < 3; k++) {
		double x8 = c[k] < 0 ? 0 : c[k] > 255 ? 255 : c[k];
		v |= (uint32_t)x8 << (8 * k);
	}
	return v;
}

static void run(struct cxs_kt *kt)
{
	const struct rt_layout *L = cxs_kt_image(kt)->info;
	uint64_t s = cxs_kt_shared(kt);
	uint32_t T = cxs_kt_count(kt), t = cxs_kt_id(kt);
	uint32_t tiles_x = (uint32_t)(L->w / CXS_RT_TILE), ntiles = tiles_x * tiles_x;
	uint64_t done = 0, pixels = 0;
	cxs_kt_roi_begin(kt);
	for (;;) {
		uint64_t tile = cxs_kt_fetch_add(kt, s + OFF_TILES, 8, 1);
		if (tile >= ntiles)
			break;
		uint32_t x0 = (uint32_t)(tile % tiles_x) * CXS_RT_TILE;
		uint32_t y0 = (uint32_t)(tile / tiles_x) * CXS_RT_TILE;
		for (uint32_t y = y0; y < y0 + CXS_RT_TILE; y++)
			for (uint32_t x = x0; x < x0 + CXS_RT_TILE; x++) {
				cxs_kt_store(kt, s + L->fb_off + ((uint64_t)y * L->w + x) * 4, 4,
					     pixel(kt, L, x, y));
				pixels++;
			}
		done++;
	}
	cxs_kt_barrier(kt, s + OFF_BAR, T);
	cxs_kt_roi_end(kt);
	uint64_t rows_lo = L->w * t / T, rows_hi = L->w * (t + 1) / T;
	cxs_kt_check_words(kt, L->fb_off + rows_lo * L->w * 4, (rows_hi - rows_lo) * L->w * 4);
	if (t == 0) {
		uint64_t end = cxs_kt_load(kt, s + OFF_TILES, 8);
		if (end != (uint64_t)ntiles + T)
			cxs_kt_fail(kt, "raytrace: tile counter ended at %" PRIu64 ", expected %" PRIu64,
				    end, (uint64_t)ntiles + T);
	}
	cxs_kt_result(kt, "tiles", done);
	cxs_kt_result(kt, "pixels", pixels);
}

const struct cxs_kernel cxs_kernel_raytrace = {
	.name = "raytrace",
	.doc = "modelled after SPLASH-2's raytrace: size x size image of a 2048-sphere scene "
	       "walked through a shared BVH, tiles from a shared counter",
	.default_size = 256,
	.deterministic = true,
	.build = build,
	.run = run,
};
