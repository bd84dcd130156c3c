/*
 * The application kernels (src/workload/k_*.c) on the native backend, each
 * checked against an independent plain-C sequential computation of the same
 * algorithm written here from the kernel's documented layout and model
 * (ocean: a sequential red-black sweep; raytrace: a brute-force render with
 * no BVH; barnes: a host-memory quadtree; fluidanimate: full-neighbourhood
 * sums instead of pair updates; ...). Deterministic kernels must match bit
 * for bit; canneal and ycsb are checked for their invariants. Each kernel is
 * also run under a random schedule (run_interleaved), where a missing
 * barrier shows up that the native round robin hides.
 */
#include <check.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cxlsim/kthread.h"
#include "unit_suites.h"

#define LINE 64u
#define CHECK_SCHEDULES 1u /* random schedules a kernel runs under (~1 s each with ASan) */

static uint64_t rd(const uint8_t *img, uint64_t off)
{
	uint64_t v;
	memcpy(&v, img + off, 8);
	return v;
}

static double rdd(const uint8_t *img, uint64_t off)
{
	double v;
	memcpy(&v, img + off, 8);
	return v;
}

static int64_t rdi(const uint8_t *img, uint64_t off)
{
	return (int64_t)rd(img, off);
}

static bool same_double(double a, double b)
{
	return memcmp(&a, &b, 8) == 0;
}

static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}


/* Builds `name` and runs it natively; *fin is the final image. */
static void run_kernel(const char *name, uint64_t size, uint32_t threads, uint64_t seed,
		       struct cxs_kimage *img, uint8_t **fin)
{
	const struct cxs_kernel *k = cxs_kernel_find(name);
	ck_assert_msg(k != NULL, "kernel %s is not registered", name);
	char err[512] = "";
	*img = (struct cxs_kimage){.size = size, .seed = seed, .nthreads = threads};
	ck_assert_msg(k->build(img, err, sizeof err) == 0, "%s: build: %s", name, err);
	ck_assert_int_eq(img->shared_bytes % 64, 0);
	ck_assert_msg(cxs_kt_run_native(k, img, fin, err, sizeof err) == 0, "%s: %s", name, err);
}

/*
 * The same kernel driven through the simulator's side of the API
 * (cxs_kt_next / cxs_kt_loaded) on a flat sequentially consistent memory,
 * with a random schedule: a random thread runs 1..12 operations at a time.
 * The native backend's round robin keeps threads in step, which hides a
 * missing barrier; this does not (races confined to a few operations, such
 * as an unlocked read-modify-write, are only found by chance). Returns 0, or -1 with the
 * failing thread's message in err.
 */
static int run_interleaved(const char *name, const struct cxs_kimage *img, uint64_t sched_seed,
			   const uint8_t *reference, uint8_t **final_image, char *err, size_t errlen)
{
	const struct cxs_kernel *k = cxs_kernel_find(name);
	uint32_t T = img->nthreads, live = T;
	const uint64_t base = UINT64_C(1) << 40;
	uint8_t *mem = malloc(img->shared_bytes), **priv = calloc(T, sizeof *priv);
	struct cxs_kt **kts = calloc(T, sizeof *kts);
	bool *done = calloc(T, sizeof *done);
	int rc = 0;
	memcpy(mem, img->shared, img->shared_bytes);
	for (uint32_t t = 0; t < T; t++) {
		priv[t] = calloc(1, img->private_bytes + 8);
		struct cxs_kt_params p = {.kernel = k, .img = img, .reference = reference, .id = t,
					  .shared_base = base, .private_base = (uint64_t)(t + 1) << 32};
		kts[t] = cxs_kt_new(&p, err, errlen);
		ck_assert_ptr_nonnull(kts[t]);
	}
	uint64_t r = sched_seed;
	while (live > 0 && rc == 0) {
		r = mix(r + 1);
		uint32_t t = (uint32_t)(r % T), burst = 1 + (uint32_t)(r >> 32) % 12;
		for (uint32_t b = 0; b < burst && !done[t]; b++) {
			struct cxs_kop op;
			cxs_kt_next(kts[t], &op);
			uint8_t *a = NULL;
			if (op.kind == CXS_KOP_LOAD || op.kind == CXS_KOP_STORE ||
			    op.kind == CXS_KOP_SWAP || op.kind == CXS_KOP_FETCH_ADD ||
			    op.kind == CXS_KOP_CAS) {
				if (op.addr >= base) {
					ck_assert_uint_le(op.addr - base + op.size, img->shared_bytes);
					a = mem + (op.addr - base);
				} else {
					uint64_t who = (op.addr >> 32) - 1, off = op.addr & 0xffffffffu;
					ck_assert_uint_eq(who, t);
					ck_assert_uint_le(off + op.size, img->private_bytes);
					a = priv[t] + off;
				}
			}
			uint64_t v = 0, mask = op.size < 8 ? (UINT64_C(1) << (8 * op.size)) - 1 : UINT64_MAX;
			switch (op.kind) {
			case CXS_KOP_LOAD:
				memcpy(&v, a, op.size);
				cxs_kt_loaded(kts[t], op.n, v);
				break;
			case CXS_KOP_STORE:
				memcpy(a, &op.value, op.size);
				break;
			case CXS_KOP_CAS:
				memcpy(&v, a, op.size);
				if (v == op.value >> 32)
					memcpy(a, &op.value, op.size); /* the low bytes: desired */
				cxs_kt_loaded(kts[t], op.n, v);
				break;
			case CXS_KOP_SWAP:
			case CXS_KOP_FETCH_ADD: {
				memcpy(&v, a, op.size);
				uint64_t nv = (op.kind == CXS_KOP_SWAP ? op.value : v + op.value) & mask;
				memcpy(a, &nv, op.size);
				cxs_kt_loaded(kts[t], op.n, v);
				break;
			}
			case CXS_KOP_DONE:
				done[t] = true;
				live--;
				break;
			case CXS_KOP_FAIL:
				snprintf(err, errlen, "%s", cxs_kt_error(kts[t]));
				rc = -1;
				done[t] = true;
				break;
			default:
				break;
			}
		}
	}
	for (uint32_t t = 0; t < T; t++) {
		cxs_kt_free(kts[t]);
		free(priv[t]);
	}
	free(kts), free(priv), free(done);
	if (rc == 0 && final_image)
		*final_image = mem;
	else
		free(mem);
	return rc;
}

/*
 * A deterministic kernel under random schedules: the reference check inside
 * the kernel (cxs_kt_check_words) passes and the whole final image equals the
 * native run's.
 */
static void check_schedules(const char *name, const struct cxs_kimage *img, const uint8_t *native)
{
	for (uint64_t seed = 1; seed <= CHECK_SCHEDULES; seed++) {
		char err[512] = "";
		uint8_t *fin = NULL;
		ck_assert_msg(run_interleaved(name, img, seed, native, &fin, err, sizeof err) == 0,
			      "%s, schedule %lu: %s", name, (unsigned long)seed, err);
		for (uint64_t o = 0; o < img->shared_bytes; o += 8)
			ck_assert_msg(rd(fin, o) == rd(native, o),
				      "%s, schedule %lu: word at %#lx is %#lx, native run %#lx", name,
				      (unsigned long)seed, (unsigned long)o, (unsigned long)rd(fin, o),
				      (unsigned long)rd(native, o));
		free(fin);
	}
}

/* ---- registry ------------------------------------------------------------- */

START_TEST(test_registry_and_size_validation)
{
	static const char *const names[] = {"bodytrack", "fluidanimate", "streamcluster",
					    "canneal",   "raytrace",     "barnes",
					    "ocean_ncp", "ocean_cp",     "ycsb"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		const struct cxs_kernel *k = cxs_kernel_find(names[i]);
		ck_assert_msg(k != NULL, "%s missing", names[i]);
		ck_assert_msg(k == cxs_kernels[i], "%s must be application kernel %zu", names[i], i);
		ck_assert(k->default_size > 0);
		ck_assert_ptr_nonnull(strstr(k->doc, "modelled after") ? k->doc : strstr(k->doc, "after"));
		struct cxs_kimage img = {.size = 0, .seed = 1, .nthreads = 4};
		char err[256] = "";
		ck_assert_msg(k->build(&img, err, sizeof err) == -1, "%s accepts size 0", names[i]);
		ck_assert_msg(strstr(err, names[i][0] == 'o' ? "ocean" : names[i]) && strstr(err, "size"),
			      "%s: unclear message '%s'", names[i], err);
		cxs_kimage_free(&img);
	}
}
END_TEST

/* ---- ocean ----------------------------------------------------------------- */

/* Offset of grid point (i, j) in a grid: the layout documented in k_ocean.c. */
struct ocean_map {
	uint32_t n, px, py, T;
	bool cp;
	uint64_t blk[64];
};

static void ocean_map_init(struct ocean_map *m, uint32_t n, uint32_t T, bool cp)
{
	m->n = n, m->T = T, m->cp = cp, m->py = 1;
	for (uint32_t d = 1; d * d <= T; d++)
		if (T % d == 0)
			m->py = d;
	m->px = T / m->py;
	uint64_t off = 0, g = n + 2;
	for (uint32_t t = 0; t < T; t++) {
		uint32_t bi = t / m->px, bj = t % m->px;
		m->blk[t] = off;
		uint64_t rows = g * (bi + 1) / m->py - g * bi / m->py;
		uint64_t cols = g * (bj + 1) / m->px - g * bj / m->px;
		off += (rows * cols * 8 + 63) / 64 * 64;
	}
}

static uint64_t ocean_off(const struct ocean_map *m, uint32_t i, uint32_t j)
{
	uint64_t g = m->n + 2;
	if (!m->cp)
		return (i * g + j) * 8;
	uint32_t bi = 0, bj = 0;
	while (g * (bi + 1) / m->py <= i)
		bi++;
	while (g * (bj + 1) / m->px <= j)
		bj++;
	uint64_t r0 = g * bi / m->py, c0 = g * bj / m->px, c1 = g * (bj + 1) / m->px;
	return m->blk[bi * m->px + bj] + ((i - r0) * (c1 - c0) + (j - c0)) * 8;
}

static uint64_t ocean_grid_bytes(const struct ocean_map *m)
{
	uint64_t g = m->n + 2;
	if (!m->cp)
		return (g * g * 8 + 63) / 64 * 64;
	uint32_t t = m->T - 1, bi = t / m->px, bj = t % m->px;
	uint64_t rows = g * (bi + 1) / m->py - g * bi / m->py;
	uint64_t cols = g * (bj + 1) / m->px - g * bj / m->px;
	return m->blk[t] + (rows * cols * 8 + 63) / 64 * 64;
}

/* Sequential red-black SOR: 4 steps of 6 iterations, then the rhs update. */
static void ocean_check(const char *name, bool cp, uint32_t n, uint32_t T)
{
	struct cxs_kimage img;
	uint8_t *fin;
	run_kernel(name, n, T, 11, &img, &fin);
	struct ocean_map m;
	ocean_map_init(&m, n, T, cp);
	uint64_t res_off = (1 + (uint64_t)T) * LINE, psi_off = res_off + LINE;
	uint64_t rhs_off = psi_off + ocean_grid_bytes(&m);
	ck_assert_uint_eq(img.shared_bytes, rhs_off + ocean_grid_bytes(&m));
	uint32_t g = n + 2;
	double *psi = malloc(sizeof(double) * g * g), *rhs = malloc(sizeof(double) * g * g);
	for (uint32_t i = 0; i < g; i++)
		for (uint32_t j = 0; j < g; j++) {
			psi[i * g + j] = rdd(img.shared, psi_off + ocean_off(&m, i, j));
			rhs[i * g + j] = rdd(img.shared, rhs_off + ocean_off(&m, i, j));
		}
	double hs = 1.0 / (n + 1), h2 = hs * hs, res[4];
	for (uint32_t step = 0; step < 4; step++) {
		res[step] = 0;
		for (uint32_t it = 0; it < 6; it++)
			for (uint32_t colour = 0; colour < 2; colour++)
				for (uint32_t i = 1; i <= n; i++)
					for (uint32_t j = 1; j <= n; j++) {
						if ((i + j) % 2 != colour)
							continue;
						double c = psi[i * g + j];
						double sum = psi[(i - 1) * g + j] + psi[(i + 1) * g + j] +
							     psi[i * g + j - 1] + psi[i * g + j + 1];
						double d = 1.15 * ((sum - h2 * rhs[i * g + j]) * 0.25 - c);
						psi[i * g + j] = c + d;
						if (it == 5)
							res[step] += d < 0 ? -d : d;
					}
		double *nr = malloc(sizeof(double) * g * g);
		memcpy(nr, rhs, sizeof(double) * g * g);
		for (uint32_t i = 1; i <= n; i++)
			for (uint32_t j = 1; j <= n; j++) {
				double c = psi[i * g + j];
				double lap = psi[(i - 1) * g + j] + psi[(i + 1) * g + j] + psi[i * g + j - 1] +
					     psi[i * g + j + 1] - 4.0 * c;
				nr[i * g + j] = rhs[i * g + j] * 0.5 + lap * 0.125 + 0.001 * (step + 1);
			}
		memcpy(rhs, nr, sizeof(double) * g * g);
		free(nr);
	}
	uint32_t changed = 0;
	for (uint32_t i = 0; i < g; i++)
		for (uint32_t j = 0; j < g; j++) {
			double kp = rdd(fin, psi_off + ocean_off(&m, i, j));
			double kr = rdd(fin, rhs_off + ocean_off(&m, i, j));
			ck_assert_msg(same_double(kp, psi[i * g + j]) && same_double(kr, rhs[i * g + j]),
				      "%s T=%u: point (%u, %u): psi %.17g rhs %.17g, sequential %.17g %.17g",
				      name, T, i, j, kp, kr, psi[i * g + j], rhs[i * g + j]);
			changed += !same_double(kp, rdd(img.shared, psi_off + ocean_off(&m, i, j)));
		}
	ck_assert_uint_eq(changed, n * n); /* every interior point moved, no boundary point */
	for (uint32_t step = 0; step < 4; step++) { /* summed in a different order */
		double r = rdd(fin, res_off + 8 * step);
		ck_assert_msg(r > 0 && r < res[step] * (1 + 1e-12) && r > res[step] * (1 - 1e-12),
			      "%s: residual %u is %g, sequential %g", name, step, r, res[step]);
	}
	check_schedules(name, &img, fin);
	free(psi), free(rhs), free(fin);
	cxs_kimage_free(&img);
}

START_TEST(test_ocean_matches_sequential_red_black)
{
	ocean_check("ocean_ncp", false, 21, 4); /* 2 x 2 blocks, uneven */
	ocean_check("ocean_cp", true, 21, 4);
	ocean_check("ocean_cp", true, 14, 3); /* 1 x 3 column blocks */
	ocean_check("ocean_ncp", false, 14, 3);
}
END_TEST

/* ---- raytrace ------------------------------------------------------------- */

struct rt_scene {
	uint64_t n;
	const uint8_t *sph;
};

static double rt_hit(const double o[3], const double d[3], const uint8_t *s)
{
	double c[3] = {rdd(s, 0), rdd(s, 8), rdd(s, 16)}, rad = rdd(s, 24);
	double oc[3] = {o[0] - c[0], o[1] - c[1], o[2] - c[2]};
	double b = oc[0] * d[0] + oc[1] * d[1] + oc[2] * d[2];
	double cc = oc[0] * oc[0] + oc[1] * oc[1] + oc[2] * oc[2] - rad * rad;
	double disc = b * b - cc;
	if (disc < 0)
		return -1.0;
	double sq = sqrt(disc), t = -b - sq;
	if (t > 1e-7)
		return t;
	t = -b + sq;
	return t > 1e-7 ? t : -1.0;
}

/* Every sphere, no BVH: the nearest hit (any_hit: any). */
static int64_t rt_trace(const struct rt_scene *S, const double o[3], const double d[3],
			bool any_hit, double *tb)
{
	int64_t best = -1;
	*tb = 1e300;
	for (uint64_t i = 0; i < S->n; i++) {
		double t = rt_hit(o, d, S->sph + i * LINE);
		if (t > 0 && t < *tb) {
			*tb = t, best = (int64_t)i;
			if (any_hit)
				return best;
		}
	}
	return best;
}

static void rt_shade(const struct rt_scene *S, const double o[3], const double d[3], int depth,
		     double out[3], uint64_t *hits)
{
	static const double light[3] = {0.5773502691896258, 0.5773502691896258, -0.5773502691896258};
	double t;
	int64_t s = rt_trace(S, o, d, false, &t);
	if (s < 0) {
		double sky = 40.0 + 100.0 * (d[1] + 1.0);
		out[0] = sky * 0.5, out[1] = sky * 0.7, out[2] = sky;
		return;
	}
	++*hits;
	const uint8_t *sp = S->sph + (uint64_t)s * LINE;
	double p[3], nrm[3];
	for (int k = 0; k < 3; k++) {
		p[k] = o[k] + t * d[k];
		nrm[k] = (p[k] - rdd(sp, 8 * k)) / rdd(sp, 24);
	}
	double diff = nrm[0] * light[0] + nrm[1] * light[1] + nrm[2] * light[2];
	if (diff > 0) {
		double so[3] = {p[0] + 1e-6 * nrm[0], p[1] + 1e-6 * nrm[1], p[2] + 1e-6 * nrm[2]}, ts;
		if (rt_trace(S, so, light, true, &ts) >= 0)
			diff = 0;
	} else {
		diff = 0;
	}
	double lum = 0.15 + 0.85 * diff, refl = rdd(sp, 40);
	uint64_t col = rd(sp, 32);
	for (int k = 0; k < 3; k++)
		out[k] = lum * (double)(col >> (8 * k) & 0xff);
	if (refl > 0 && depth == 0) {
		double dn = d[0] * nrm[0] + d[1] * nrm[1] + d[2] * nrm[2], rd2[3], ro[3], rc[3];
		for (int k = 0; k < 3; k++) {
			rd2[k] = d[k] - 2 * dn * nrm[k];
			ro[k] = p[k] + 1e-6 * nrm[k];
		}
		rt_shade(S, ro, rd2, 1, rc, hits);
		for (int k = 0; k < 3; k++)
			out[k] = (1 - refl) * out[k] + refl * rc[k];
	}
}

START_TEST(test_raytrace_matches_brute_force_render)
{
	struct cxs_kimage img;
	uint8_t *fin;
	run_kernel("raytrace", 16, 3, 5, &img, &fin);
	struct rt_scene S = {.n = rd(img.shared, 0), .sph = img.shared + rd(img.shared, 8)};
	uint64_t fb = rd(img.shared, 24), w = rd(img.shared, 32), hits = 0;
	ck_assert_uint_eq(w, 16);
	ck_assert_uint_eq(rd(fin, 2 * LINE), (w / 8) * (w / 8) + 3); /* the tile counter */
	for (uint32_t y = 0; y < w; y++)
		for (uint32_t x = 0; x < w; x++) {
			double d[3] = {((x + 0.5) / (double)w * 2 - 1) * 0.6,
				       ((y + 0.5) / (double)w * 2 - 1) * 0.6, 1.0};
			double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
			for (int k = 0; k < 3; k++)
				d[k] /= len;
			static const double eye[3] = {0.0, 0.0, -3.0};
			double c[3];
			rt_shade(&S, eye, d, 0, c, &hits);
			uint32_t v = 0;
			for (int k = 0; k < 3; k++) {
				double x8 = c[k] < 0 ? 0 : c[k] > 255 ? 255 : c[k];
				v |= (uint32_t)x8 << (8 * k);
			}
			uint32_t got;
			memcpy(&got, fin + fb + ((uint64_t)y * w + x) * 4, 4);
			ck_assert_msg(got == v, "pixel (%u, %u) is %#x, brute force %#x", x, y, got, v);
		}
	ck_assert_msg(hits > w * w / 4, "only %lu rays hit a sphere", (unsigned long)hits);
	check_schedules("raytrace", &img, fin);
	free(fin);
	cxs_kimage_free(&img);
}
END_TEST

/* ---- bodytrack -------------------------------------------------------------- */

static int64_t bt_noise(uint64_t key, uint32_t k, int64_t a)
{
	return (int64_t)(mix(key * 8 + k) % (uint64_t)(2 * a + 1)) - a;
}

START_TEST(test_bodytrack_matches_sequential_filter)
{
	enum { P = 64, T = 4, PTS = 128, W = 320, H = 240, FR = 4, LAY = 3 };
	static const int64_t amp_xy[LAY] = {16, 8, 3}, amp_shape[LAY] = {24, 12, 6};
	struct cxs_kimage img;
	uint8_t *fin;
	run_kernel("bodytrack", P, T, 3, &img, &fin);
	const uint8_t *sh = img.shared;
	ck_assert_uint_eq(rd(sh, 0), P);
	uint64_t parts = rd(sh, 48), maps = rd(sh, 56);
	uint64_t idx_off = 2 * LINE + T * LINE, est_off = idx_off + (P * 8 + 63) / 64 * 64;
	uint64_t truth_off = est_off + FR * LINE, tmpl_off = truth_off + FR * LINE;
	ck_assert_uint_eq(parts, tmpl_off + PTS * 8);
	int64_t (*cur)[5] = calloc(P, sizeof *cur), (*nxt)[5] = calloc(P, sizeof *nxt);
	for (int i = 0; i < P; i++)
		for (int w = 0; w < 5; w++)
			cur[i][w] = rdi(sh, parts + (uint64_t)i * LINE + 8 * w);
	int a = 0;
	for (uint32_t f = 0; f < FR; f++)
		for (uint32_t layer = 0; layer < LAY; layer++) {
			uint64_t total = 0, wsum[4] = {0};
			for (uint64_t i = 0; i < P; i++) {
				uint64_t key = ((uint64_t)f * LAY + layer) << 32 ^ i;
				int64_t pose[4];
				for (int k = 0; k < 4; k++)
					pose[k] = cur[i][k] +
						  bt_noise(key, (uint32_t)k, k < 2 ? amp_xy[layer] : amp_shape[layer]);
				uint64_t sum = 0;
				for (int p = 0; p < PTS; p++) {
					uint64_t dd = rd(sh, tmpl_off + 8 * p);
					int32_t dx = (int32_t)(uint32_t)dd, dy = (int32_t)(uint32_t)(dd >> 32);
					for (int c = 0; c < 2; c++) {
						int64_t x = pose[0] + dx * pose[2] / 256 + dy * pose[3] / 256;
						int64_t y = pose[1] + dy * pose[2] / 256;
						if (c == 1)
							x = x - y / 8 + 16;
						if (x < 0 || y < 0 || x >= W || y >= H)
							continue;
						sum += sh[maps + ((uint64_t)f * 2 + c) * W * H + (uint64_t)y * W + (uint64_t)x];
					}
				}
				uint64_t s2 = sum * sum / 1024, wt = s2 * s2 / 1024 + 1;
				for (int k = 0; k < 4; k++)
					cur[i][k] = pose[k];
				cur[i][4] = (int64_t)wt;
				total += wt;
				for (int k = 0; k < 4; k++)
					wsum[k] += wt * (uint64_t)pose[k];
			}
			if (layer == LAY - 1)
				for (int k = 0; k < 4; k++)
					ck_assert_int_eq(rdi(fin, est_off + f * LINE + 8 * k),
							 (int64_t)wsum[k] / (int64_t)total);
			/* systematic resampling, written independently: slot j takes the
			 * first particle whose running sum exceeds its target */
			uint64_t u0 = mix(((uint64_t)f << 8 | layer) ^ UINT64_C(0x5e5a)) % (total / P + 1);
			uint64_t cum = 0, i = 0;
			cum = (uint64_t)cur[0][4];
			for (uint64_t j = 0; j < P; j++) {
				uint64_t target = u0 + j * total / P;
				while (cum <= target && i + 1 < P)
					cum += (uint64_t)cur[++i][4];
				for (int k = 0; k < 4; k++)
					nxt[j][k] = cur[i][k];
				nxt[j][4] = 1;
			}
			/* the kernel evaluates in array a and resamples into a ^ 1 */
			int64_t(*x)[5] = cur;
			cur = nxt, nxt = x;
			a ^= 1;
		}
	/* array a holds the last resampled copy (cur), a ^ 1 the last evaluation */
	uint64_t off_cur = parts + (uint64_t)a * P * LINE, off_prev = parts + (uint64_t)(a ^ 1) * P * LINE;
	for (uint64_t i = 0; i < P; i++)
		for (int k = 0; k < 5; k++) {
			ck_assert_msg(rdi(fin, off_cur + i * LINE + 8 * k) == cur[i][k],
				      "particle %lu word %d: %ld, sequential %ld", (unsigned long)i, k,
				      (long)rdi(fin, off_cur + i * LINE + 8 * k), (long)cur[i][k]);
			ck_assert_int_eq(rdi(fin, off_prev + i * LINE + 8 * k), nxt[i][k]);
		}
	/* and it tracks: every frame's estimate is near the true pose (position
	 * within 4 pixels, scale within 1/8, lean within 10/256) */
	static const int64_t tol[4] = {4, 4, 32, 10};
	for (int f = 0; f < FR; f++)
		for (int k = 0; k < 4; k++) {
			int64_t e = rdi(fin, est_off + (uint64_t)f * LINE + 8 * (uint64_t)k);
			int64_t tr = rdi(sh, truth_off + (uint64_t)f * LINE + 8 * (uint64_t)k);
			ck_assert_msg(e - tr <= tol[k] && tr - e <= tol[k],
				      "frame %d: estimate %d is %ld, truth %ld", f, k, (long)e, (long)tr);
		}
	check_schedules("bodytrack", &img, fin);
	free(cur), free(nxt), free(fin);
	cxs_kimage_free(&img);
}
END_TEST

/* ---- streamcluster -------------------------------------------------------- */

START_TEST(test_streamcluster_matches_sequential_pgain)
{
	enum { N = 60, T = 3, D = 32, K = 64, ITERS = 128 };
	struct cxs_kimage img;
	uint8_t *fin;
	run_kernel("streamcluster", N, T, 9, &img, &fin);
	const uint8_t *sh = img.shared;
	uint64_t meta = rd(sh, 24), coords = rd(sh, 32), table_off = rd(sh, 40);
	double z = rdd(sh, 48);
	const double *co = (const double *)(sh + coords);
	uint64_t slot[N], tab[K];
	double cost[N], initial = 0;
	for (int p = 0; p < N; p++) {
		slot[p] = rd(sh, meta + 16 * (uint64_t)p);
		cost[p] = rdd(sh, meta + 16 * (uint64_t)p + 8);
		initial += cost[p];
	}
	for (int k = 0; k < K; k++)
		tab[k] = rd(sh, table_off + 8 * (uint64_t)k);
	uint64_t opened = 0;
	for (uint32_t it = 0; it < ITERS; it++) {
		uint64_t x = mix(UINT64_C(0xca4d) + it) % N;
		double xcost[N], lower[T][K], gain[T], closing[T], gl[K];
		bool sw[N];
		memset(lower, 0, sizeof lower);
		for (uint32_t t = 0; t < T; t++) {
			gain[t] = 0;
			for (uint64_t p = N * t / T; p < N * (t + 1) / T; p++) {
				double dist = 0;
				for (int d = 0; d < D; d++) {
					double v = co[p * D + d] - co[x * D + d];
					dist += v * v;
				}
				xcost[p] = dist;
				sw[p] = dist < cost[p];
				if (sw[p])
					gain[t] += dist - cost[p];
				else
					lower[t][slot[p]] += cost[p] - dist;
			}
		}
		for (uint32_t t = 0; t < T; t++) {
			closing[t] = 0;
			for (uint32_t k = K * t / T; k < K * (t + 1) / T; k++) {
				gl[k] = 0;
				if (tab[k] == UINT64_MAX)
					continue;
				gl[k] = z;
				for (uint32_t u = 0; u < T; u++)
					gl[k] += lower[u][k];
				if (gl[k] > 0)
					closing[t] += gl[k];
			}
		}
		double total = z;
		for (uint32_t t = 0; t < T; t++)
			total += gain[t] - closing[t];
		uint32_t xs = K;
		for (uint32_t k = 0; k < K && xs == K; k++)
			if (tab[k] == UINT64_MAX || gl[k] > 0)
				xs = k;
		if (!(total < 0 && xs < K && tab[slot[x]] != x))
			continue;
		opened++;
		for (uint64_t p = 0; p < N; p++)
			if (sw[p] || (tab[slot[p]] != UINT64_MAX && gl[slot[p]] > 0))
				slot[p] = xs, cost[p] = xcost[p];
		for (uint32_t k = 0; k < K; k++)
			if (tab[k] != UINT64_MAX && gl[k] > 0)
				tab[k] = UINT64_MAX;
		tab[xs] = x;
	}
	double final_cost = 0;
	uint64_t centres = 0;
	for (int p = 0; p < N; p++) {
		ck_assert_msg(rd(fin, meta + 16 * (uint64_t)p) == slot[p] &&
				      same_double(rdd(fin, meta + 16 * (uint64_t)p + 8), cost[p]),
			      "point %d: slot %lu cost %g, sequential %lu %g", p,
			      (unsigned long)rd(fin, meta + 16 * (uint64_t)p),
			      rdd(fin, meta + 16 * (uint64_t)p + 8), (unsigned long)slot[p], cost[p]);
		ck_assert_msg(tab[slot[p]] != UINT64_MAX, "point %d assigned to a closed centre", p);
		final_cost += cost[p];
	}
	for (int k = 0; k < K; k++) {
		ck_assert_uint_eq(rd(fin, table_off + 8 * (uint64_t)k), tab[k]);
		centres += tab[k] != UINT64_MAX;
	}
	ck_assert_uint_eq(rd(fin, 2 * LINE + 8), centres);
	ck_assert_uint_eq(rd(fin, 2 * LINE + 16), opened);
	double kc = rdd(fin, 2 * LINE);
	ck_assert(kc > final_cost * (1 - 1e-12) && kc < final_cost * (1 + 1e-12));
	ck_assert_msg(centres >= 8 && final_cost < initial / 4,
		      "clustering did little: %lu centres, cost %g from %g", (unsigned long)centres,
		      final_cost, initial);
	check_schedules("streamcluster", &img, fin);
	free(fin);
	cxs_kimage_free(&img);
}
END_TEST

/* ---- ycsb ------------------------------------------------------------------- */

static uint64_t ycsb_payload(uint64_t key, uint64_t version, uint32_t j)
{
	return mix(key + version * UINT64_C(0x632be59bd9b4e019) + j * UINT64_C(0x8cb92ba72f3d8dd7));
}

/* Every record self-consistent, versions adding up to the puts. */
static void ycsb_verify(const struct cxs_kimage *img, const uint8_t *fin, const char *what)
{
	uint64_t R = img->size, T = img->nthreads;
	uint64_t rec_off = rd(img->shared, 32), ops = rd(img->shared, 40), vsum = 0, changed = 0;
	ck_assert_uint_eq(ops, R / 32);
	for (uint64_t i = 0; i < R; i++) {
		const uint8_t *r = fin + rec_off + i * 1024;
		uint64_t key = rd(r, 0), version = rd(r, 8);
		ck_assert_uint_eq(key, rd(img->shared, rec_off + i * 1024)); /* keys never change */
		ck_assert_msg(rd(r, 16) == 2 * version, "%s: record %lu seq %lu version %lu", what,
			      (unsigned long)i, (unsigned long)rd(r, 16), (unsigned long)version);
		for (uint32_t j = 0; j < 124; j++)
			ck_assert_msg(rd(r, 32 + 8 * j) == ycsb_payload(key, version, j),
				      "%s: record %lu word %u", what, (unsigned long)i, j);
		vsum += version;
		changed += version != 0;
	}
	uint64_t puts = rd(fin, 2 * LINE), gets = rd(fin, 2 * LINE + 16);
	ck_assert_uint_eq(rd(fin, 2 * LINE + 8), vsum);
	ck_assert_uint_eq(vsum, puts);
	ck_assert_uint_eq(puts + gets, T * ops);
	ck_assert_msg(puts >= T * ops / 10 && puts <= T * ops * 3 / 10, "%lu puts of %lu ops",
		      (unsigned long)puts, (unsigned long)(T * ops));
	ck_assert(changed > 0);
}

START_TEST(test_ycsb_records_consistent)
{
	enum { R = 512, T = 4 };
	struct cxs_kimage img;
	uint8_t *fin;
	char err[512] = "";
	run_kernel("ycsb", R, T, 21, &img, &fin);
	ycsb_verify(&img, fin, "native");
	free(fin);
	for (uint64_t seed = 1; seed <= CHECK_SCHEDULES; seed++) {
		ck_assert_msg(run_interleaved("ycsb", &img, seed, NULL, &fin, err, sizeof err) == 0,
			      "schedule %lu: %s", (unsigned long)seed, err);
		ycsb_verify(&img, fin, "random schedule");
		free(fin);
	}
	uint64_t rec_off = rd(img.shared, 32);
	cxs_kimage_free(&img);

	/* A corrupted record is found (its key no longer matches the built key). */
	const struct cxs_kernel *k = cxs_kernel_find("ycsb");
	img = (struct cxs_kimage){.size = R, .seed = 21, .nthreads = T};
	ck_assert_int_eq(k->build(&img, err, sizeof err), 0);
	img.shared[rec_off + 77 * 1024 + 3] ^= 0x10;
	ck_assert_int_eq(cxs_kt_run_native(k, &img, &fin, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "ycsb") != NULL, "%s", err);
	cxs_kimage_free(&img);
}
END_TEST

/* ---- canneal ----------------------------------------------------------------- */

/* A permutation, locks free, and the recomputed cost equal to the tracked one. */
static void canneal_verify(const struct cxs_kimage *img, const uint8_t *fin)
{
	enum { E = 256 };
	uint64_t g = rd(img->shared, 8), elems = rd(img->shared, 16), locs = rd(img->shared, 24);
	uint64_t initial = rd(img->shared, 32), locks = rd(img->shared, 40);
	ck_assert_uint_eq(img->size, E);
	ck_assert_uint_eq(g, 16);
	bool seen[E] = {false};
	for (uint64_t l = 0; l < E; l++) {
		uint64_t e = rd(fin, locs + l * 8);
		ck_assert_uint_lt(e, E);
		ck_assert_msg(!seen[e], "element %lu placed twice", (unsigned long)e);
		seen[e] = true;
		ck_assert_uint_eq(rd(fin, elems + e * LINE), l);
		ck_assert_uint_eq(rd(fin, locks + l * LINE), 0); /* lock free */
	}
	uint64_t twice = 0, edges = 0;
	for (uint64_t e = 0; e < E; e++) {
		uint64_t at = rd(fin, elems + e * LINE), nn = rd(fin, elems + e * LINE + 8);
		ck_assert_uint_le(nn, 6);
		for (uint64_t k = 0; k < nn; k++) {
			uint64_t o = rd(fin, elems + rd(fin, elems + e * LINE + 16 + 8 * k) * LINE);
			int64_t dx = (int64_t)(at % g) - (int64_t)(o % g), dy = (int64_t)(at / g) - (int64_t)(o / g);
			twice += (uint64_t)((dx < 0 ? -dx : dx) + (dy < 0 ? -dy : dy));
			edges++;
		}
	}
	ck_assert_uint_gt(edges, E);
	ck_assert_uint_eq(rd(fin, 2 * LINE), twice / 2);      /* recomputed by the kernel */
	ck_assert_uint_eq(rd(fin, 2 * LINE + 8), twice / 2);  /* tracked by its swaps */
	ck_assert_uint_eq(rd(fin, 2 * LINE + 16), initial);
	ck_assert_uint_gt(rd(fin, 2 * LINE + 24), 0);
	ck_assert_msg(twice / 2 < initial * 9 / 10, "annealing did not lower the cost: %lu from %lu",
		      (unsigned long)(twice / 2), (unsigned long)initial);
}

START_TEST(test_canneal_permutation_and_cost)
{
	struct cxs_kimage img;
	uint8_t *fin;
	char err[512] = "";
	run_kernel("canneal", 256, 3, 4, &img, &fin);
	canneal_verify(&img, fin);
	free(fin);
	for (uint64_t seed = 1; seed <= CHECK_SCHEDULES; seed++) {
		ck_assert_msg(run_interleaved("canneal", &img, seed, NULL, &fin, err, sizeof err) == 0,
			      "schedule %lu: %s", (unsigned long)seed, err);
		canneal_verify(&img, fin);
		free(fin);
	}
	cxs_kimage_free(&img);
}
END_TEST

/* ---- fluidanimate ------------------------------------------------------------- */

#define FA_CELL INT64_C(4096)
#define FA_H2 (FA_CELL * FA_CELL)

struct fa_part {
	int64_t v[8]; /* x, y, vx, vy, rho, fx, fy, cell */
};

START_TEST(test_fluidanimate_matches_full_neighbourhood_sums)
{
	enum { N = 300, T = 4 };
	struct cxs_kimage img;
	uint8_t *fin;
	run_kernel("fluidanimate", N, T, 8, &img, &fin);
	const uint8_t *sh = img.shared;
	uint64_t gx = rd(sh, 8), gy = rd(sh, 16), cells0 = rd(sh, 24), parts[2] = {rd(sh, 32), rd(sh, 40)};
	uint64_t nc = gx * gy, cells[2] = {cells0, cells0 + (nc * 8 + 63) / 64 * 64};
	uint64_t *tab[2] = {calloc(nc, 8), calloc(nc, 8)};
	struct fa_part *p[2] = {calloc(N, sizeof(struct fa_part)), calloc(N, sizeof(struct fa_part))};
	for (uint64_t c = 0; c < nc; c++)
		tab[0][c] = rd(sh, cells[0] + 8 * c);
	for (uint64_t i = 0; i < N; i++)
		for (int f = 0; f < 8; f++)
			p[0][i].v[f] = rdi(sh, parts[0] + i * LINE + 8 * (uint64_t)f);
	int a = 0;
	for (int step = 0; step < 4; step++, a ^= 1) {
		struct fa_part *P = p[a];
		for (int phase = 0; phase < 2; phase++)
			for (uint64_t i = 0; i < N; i++) {
				int64_t cx = P[i].v[0] / FA_CELL, cy = P[i].v[1] / FA_CELL;
				int64_t acc[2] = {phase == 0 ? FA_H2 * FA_H2 / (INT64_C(1) << 24) : 0, 0};
				for (int64_t y = cy - 1; y <= cy + 1; y++)
					for (int64_t x = cx - 1; x <= cx + 1; x++) {
						if (x < 0 || y < 0 || x >= (int64_t)gx || y >= (int64_t)gy)
							continue;
						uint64_t w = tab[a][(uint64_t)y * gx + (uint64_t)x];
						for (uint64_t j = w & 0xffffffffu; j < (w & 0xffffffffu) + (w >> 32); j++) {
							if (j == i)
								continue;
							int64_t dx = P[i].v[0] - P[j].v[0], dy = P[i].v[1] - P[j].v[1];
							int64_t r2 = dx * dx + dy * dy;
							if (r2 >= FA_H2)
								continue;
							int64_t q = FA_H2 - r2;
							if (phase == 0) {
								acc[0] += q * q / (INT64_C(1) << 24);
								continue;
							}
							int64_t g = q * ((P[i].v[4] - INT64_C(80000000)) / 16 +
									 (P[j].v[4] - INT64_C(80000000)) / 16) /
								    (INT64_C(1) << 28);
							acc[0] += dx * g / 65536 + (P[j].v[2] - P[i].v[2]) * q / (INT64_C(1) << 22);
							acc[1] += dy * g / 65536 + (P[j].v[3] - P[i].v[3]) * q / (INT64_C(1) << 22);
						}
					}
				/* densities only after the whole pass: written to a side slot */
				if (phase == 0)
					P[i].v[7] = acc[0]; /* (cell is recomputed below) */
				else
					P[i].v[5] = acc[0], P[i].v[6] = acc[1];
				if (phase == 0 && i + 1 == N)
					for (uint64_t k = 0; k < N; k++)
						P[k].v[4] = P[k].v[7];
			}
		for (uint64_t i = 0; i < N; i++) {
			int64_t *v = P[i].v, lim[2] = {(int64_t)gx * FA_CELL, (int64_t)gy * FA_CELL};
			int64_t vel[2] = {(v[2] + v[5] / 1024) * 15 / 16, (v[3] + (v[6] + 8192) / 1024) * 15 / 16};
			int64_t pos[2];
			for (int k = 0; k < 2; k++) {
				vel[k] = vel[k] > 1024 ? 1024 : vel[k] < -1024 ? -1024 : vel[k];
				pos[k] = v[k] + vel[k];
				if (pos[k] < 0)
					pos[k] = -pos[k], vel[k] = -vel[k] / 2;
				else if (pos[k] >= lim[k])
					pos[k] = 2 * (lim[k] - 1) - pos[k], vel[k] = -vel[k] / 2;
			}
			v[0] = pos[0], v[1] = pos[1], v[2] = vel[0], v[3] = vel[1];
			v[7] = pos[1] / FA_CELL * (int64_t)gx + pos[0] / FA_CELL;
		}
		/* rebuild into a ^ 1: cells in order; within a cell, neighbour cells
		 * row-major, particles in order */
		uint64_t pos = 0;
		for (uint64_t c = 0; c < nc; c++) {
			uint64_t start = pos;
			for (int64_t y = (int64_t)(c / gx) - 1; y <= (int64_t)(c / gx) + 1; y++)
				for (int64_t x = (int64_t)(c % gx) - 1; x <= (int64_t)(c % gx) + 1; x++) {
					if (x < 0 || y < 0 || x >= (int64_t)gx || y >= (int64_t)gy)
						continue;
					uint64_t w = tab[a][(uint64_t)y * gx + (uint64_t)x];
					for (uint64_t j = w & 0xffffffffu; j < (w & 0xffffffffu) + (w >> 32); j++)
						if (P[j].v[7] == (int64_t)c) {
							struct fa_part np = {{P[j].v[0], P[j].v[1], P[j].v[2], P[j].v[3], 0, 0, 0, (int64_t)c}};
							p[a ^ 1][pos++] = np;
						}
				}
			tab[a ^ 1][c] = start | (pos - start) << 32;
		}
		ck_assert_uint_eq(pos, N); /* no particle lost or duplicated */
	}
	for (int k = 0; k < 2; k++) {
		for (uint64_t c = 0; c < nc; c++)
			ck_assert_uint_eq(rd(fin, cells[k] + 8 * c), tab[k][c]);
		for (uint64_t i = 0; i < N; i++)
			for (int f = 0; f < 8; f++)
				ck_assert_msg(rdi(fin, parts[k] + i * LINE + 8 * (uint64_t)f) == p[k][i].v[f],
					      "array %d particle %lu field %d: %ld, sequential %ld", k,
					      (unsigned long)i, f,
					      (long)rdi(fin, parts[k] + i * LINE + 8 * (uint64_t)f),
					      (long)p[k][i].v[f]);
	}
	check_schedules("fluidanimate", &img, fin);
	free(tab[0]), free(tab[1]), free(p[0]), free(p[1]), free(fin);
	cxs_kimage_free(&img);
}
END_TEST

/* ---- barnes ------------------------------------------------------------------ */

struct bh_node {
	double m, cx, cy;
	int32_t child[4]; /* node index + 1, 0 empty */
	int64_t body;     /* -1: a cell */
};

struct bh_tree {
	struct bh_node *n;
	int32_t count;
};

static int32_t bh_new(struct bh_tree *t, int64_t body, double m, double x, double y)
{
	struct bh_node *nd = &t->n[t->count];
	memset(nd, 0, sizeof *nd);
	nd->body = body, nd->m = m, nd->cx = x, nd->cy = y;
	return t->count++;
}

static int bh_quad(double x, double y, double cx, double cy)
{
	return (x >= cx) | (y >= cy) << 1;
}

/* Sequential build: the top 3 levels are cells wherever a body lies below. */
static void bh_insert(struct bh_tree *t, int32_t root, const double box[3], int64_t i, double x,
		      double y, double m)
{
	double half = box[2] / 2, cx = box[0] + half, cy = box[1] + half;
	int32_t cur = root;
	for (int level = 0; level < 3; level++) {
		int q = bh_quad(x, y, cx, cy);
		half /= 2;
		cx += q & 1 ? half : -half;
		cy += q & 2 ? half : -half;
		if (t->n[cur].child[q] == 0) {
			int32_t c = bh_new(t, -1, 0, 0, 0);
			t->n[cur].child[q] = c + 1;
		}
		cur = t->n[cur].child[q] - 1;
	}
	for (;;) {
		int q = bh_quad(x, y, cx, cy);
		half /= 2;
		double ncx = cx + (q & 1 ? half : -half), ncy = cy + (q & 2 ? half : -half);
		int32_t c = t->n[cur].child[q] - 1;
		if (c < 0) {
			t->n[cur].child[q] = bh_new(t, i, m, x, y) + 1;
			return;
		}
		if (t->n[c].body >= 0) {
			int32_t cell = bh_new(t, -1, 0, 0, 0);
			t->n[cell].child[bh_quad(t->n[c].cx, t->n[c].cy, ncx, ncy)] = c + 1;
			t->n[cur].child[q] = cell + 1;
			c = cell;
		}
		cur = c, cx = ncx, cy = ncy;
	}
}

static void bh_summarise(struct bh_tree *t, int32_t id)
{
	struct bh_node *nd = &t->n[id];
	if (nd->body >= 0)
		return;
	double m = 0, mx = 0, my = 0;
	for (int q = 0; q < 4; q++) {
		if (!nd->child[q])
			continue;
		bh_summarise(t, nd->child[q] - 1);
		const struct bh_node *c = &t->n[nd->child[q] - 1];
		m += c->m, mx += c->m * c->cx, my += c->m * c->cy;
	}
	nd->m = m, nd->cx = mx / m, nd->cy = my / m;
}

static void bh_force(const struct bh_tree *t, int32_t id, double w, int64_t self, double x,
		     double y, double acc[2])
{
	const struct bh_node *nd = &t->n[id];
	double dx = nd->cx - x, dy = nd->cy - y, r2 = dx * dx + dy * dy;
	if (nd->body == self)
		return;
	if (nd->body >= 0 || w * w < 0.6 * 0.6 * r2) {
		double inv = 1.0 / sqrt(r2 + 1e-6), inv3 = inv * inv * inv;
		acc[0] += nd->m * dx * inv3;
		acc[1] += nd->m * dy * inv3;
		return;
	}
	for (int q = 0; q < 4; q++)
		if (nd->child[q])
			bh_force(t, nd->child[q] - 1, w / 2, self, x, y, acc);
}

static void barnes_check(uint64_t n, uint32_t T)
{
	struct cxs_kimage img;
	uint8_t *fin;
	run_kernel("barnes", n, T, 2, &img, &fin);
	uint64_t bodies = rd(img.shared, 16);
	double (*b)[7] = calloc(n, sizeof *b);
	for (uint64_t i = 0; i < n; i++)
		for (int k = 0; k < 7; k++)
			b[i][k] = rdd(img.shared, bodies + i * LINE + 8 * (uint64_t)k);
	struct bh_tree tr = {.n = calloc(8 * n + 64, sizeof(struct bh_node))};
	double err2 = 0, norm2 = 0; /* the approximation's error, summed over bodies */
	for (int step = 0; step < 2; step++) {
		double box[4] = {1e300, 1e300, -1e300, -1e300};
		for (uint64_t i = 0; i < n; i++) {
			box[0] = b[i][0] < box[0] ? b[i][0] : box[0];
			box[1] = b[i][1] < box[1] ? b[i][1] : box[1];
			box[2] = b[i][0] > box[2] ? b[i][0] : box[2];
			box[3] = b[i][1] > box[3] ? b[i][1] : box[3];
		}
		double root[3] = {box[0], box[1],
				  box[2] - box[0] > box[3] - box[1] ? box[2] - box[0] : box[3] - box[1]};
		root[2] = root[2] * 1.0001 + 1e-9;
		tr.count = 0;
		bh_new(&tr, -1, 0, 0, 0);
		for (uint64_t i = 0; i < n; i++)
			bh_insert(&tr, 0, root, (int64_t)i, b[i][0], b[i][1], b[i][4]);
		bh_summarise(&tr, 0);
		for (uint64_t i = 0; i < n; i++) {
			double a[2] = {0, 0};
			bh_force(&tr, 0, root[2], (int64_t)i, b[i][0], b[i][1], a);
			/* the approximation itself: against direct summation */
			double da[2] = {0, 0};
			for (uint64_t j = 0; j < n; j++) {
				if (j == i)
					continue;
				double dx = b[j][0] - b[i][0], dy = b[j][1] - b[i][1];
				double inv = 1.0 / sqrt(dx * dx + dy * dy + 1e-6);
				da[0] += b[j][4] * dx * inv * inv * inv;
				da[1] += b[j][4] * dy * inv * inv * inv;
			}
			err2 += (a[0] - da[0]) * (a[0] - da[0]) + (a[1] - da[1]) * (a[1] - da[1]);
			norm2 += da[0] * da[0] + da[1] * da[1];
			b[i][5] = a[0], b[i][6] = a[1];
		}
		for (uint64_t i = 0; i < n; i++) { /* updates after all forces: same values */
			b[i][2] += b[i][5] * 1e-3, b[i][3] += b[i][6] * 1e-3;
			b[i][0] += b[i][2] * 1e-3, b[i][1] += b[i][3] * 1e-3;
		}
	}
	ck_assert_msg(err2 < 0.01 * 0.01 * norm2, "Barnes-Hut RMS error %g of the RMS acceleration",
		      sqrt(err2 / norm2));
	for (uint64_t i = 0; i < n; i++)
		for (int k = 0; k < 7; k++)
			ck_assert_msg(same_double(rdd(fin, bodies + i * LINE + 8 * (uint64_t)k), b[i][k]),
				      "T=%u body %lu word %d: %.17g, sequential %.17g", T, (unsigned long)i,
				      k, rdd(fin, bodies + i * LINE + 8 * (uint64_t)k), b[i][k]);
	check_schedules("barnes", &img, fin);
	free(tr.n), free(b), free(fin);
	cxs_kimage_free(&img);
}

START_TEST(test_barnes_matches_sequential_tree)
{
	barnes_check(120, 3);
	barnes_check(81, 4);
}
END_TEST

/* One case per kernel, so that CK_RUN_CASE=<kernel> runs one. */
static void add_case(Suite *s, const char *name, const TTest *test)
{
	TCase *tc = tcase_create(name);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test);
	suite_add_tcase(s, tc);
}

Suite *kernels_suite(void)
{
	Suite *s = suite_create("kernels");
	add_case(s, "registry", test_registry_and_size_validation);
	add_case(s, "ocean", test_ocean_matches_sequential_red_black);
	add_case(s, "raytrace", test_raytrace_matches_brute_force_render);
	add_case(s, "bodytrack", test_bodytrack_matches_sequential_filter);
	add_case(s, "streamcluster", test_streamcluster_matches_sequential_pgain);
	add_case(s, "ycsb", test_ycsb_records_consistent);
	add_case(s, "canneal", test_canneal_permutation_and_cost);
	add_case(s, "fluidanimate", test_fluidanimate_matches_full_neighbourhood_sums);
	add_case(s, "barnes", test_barnes_matches_sequential_tree);
	return s;
}
