/*
 * k_fluidanimate.c — smoothed-particle hydrodynamics on a grid of cells,
 * modelled after PARSEC's fluidanimate: threads own slabs of cells; each pair
 * of neighbouring particles is visited once and its contribution added to
 * both particles, so updates land in neighbours' cells, under per-cell locks
 * where another thread may be updating the same cell; barriers between the
 * phases; the grid is rebuilt every step. Not the original program: 2-D, and
 * integer (fixed-point) arithmetic, so the sums do not depend on the order in
 * which threads add them and the result is deterministic.
 *
 * Model. size = N particles in a GX x GY grid of cells of side h = CELL
 * fixed-point units (GX = ceil(sqrt(N / 4)), ~4 particles a cell), gravity
 * along +y, walls that reflect at half speed. Per pair within h (r2 < h2):
 *   density    w = (h2 - r2)^2 / 2^24, to both (plus w(0) for the particle
 *              itself);
 *   force      g = (h2 - r2) (P_p + P_q) / 2^28, P = (rho - RHO0) / 16;
 *              f_p += (dx g) / 2^16 + (dv (h2 - r2)) / 2^22, f_q -= the same
 *              (C division truncates toward zero, so f(q, p) = -f(p, q)
 *              exactly and the pair sum is order-independent).
 *   advance    v = (v + f / 2^10) * 15 / 16, |v| <= CELL / 4; x += v.
 *
 * Shared layout (64-byte lines):
 *   line 0         header: N, GX, GY, offsets
 *   line 1         barrier
 *   per thread     one line: particles bound for its cells (rebuild)
 *   locks          one line per cell
 *   cells[2]       GX x GY words: start | count << 32 into particles[same]
 *   particles[2]   N lines: x, y, vx, vy, rho, fx, fy, new cell (int64)
 * Thread t owns cell rows [GY t / T, GY (t+1) / T) (none if T > GY). A cell
 * with a neighbour row owned by another thread is "shared": its particles'
 * accumulators are updated only under its lock, also by its owner.
 *
 * One step (array a current, a ^ 1 next):
 *   P1 density: for each own cell c and each of its half neighbourhood
 *      (itself, E, SW, S, SE: every neighbouring pair of cells once), load
 *      both cells' particles (issued together), accumulate pair terms
 *      locally, add them to the neighbour's particles (lock if shared),
 *      finally to c's.                                            barrier
 *   P2 force: the same with positions, velocities, densities.   barrier
 *   P3 advance own particles; store their new cell.              barrier
 *   P4 rebuild, count: for each own cell, the particles of its 9 neighbour
 *      cells now bound for it; the thread's total to its line.   barrier
 *   P5 rebuild, copy: start of the thread's cells = totals of the threads
 *      before it; copy the particles into array a ^ 1 in a fixed order
 *      (neighbour cells row-major, particles in order), accumulators zero.
 *                                                                barrier
 * Charged compute: ~10 instructions per pair test, ~25 per pair in range,
 * ~30 per advanced particle.
 *
 * Deterministic: each thread checks an even share of both particle arrays
 * and both cell tables against the reference run. CXS_FA_STEPS = 4; ~120
 * memory operations a particle a step: ~0.5 M a thread at N = 65536, T = 64
 * (measured: mean 0.50 M, max 0.52 M).
 */
#include "cxlsim/kthread.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define LINE 64u
#define CELL INT64_C(4096) /* fixed-point units a cell side (= h) */
#define H2 (CELL * CELL)
#define RHO0 INT64_C(80000000)
#define GRAVITY INT64_C(8192)
#define VMAX (CELL / 4)
#define CXS_FA_STEPS 4u
#define CXS_FA_CELL_MAX 256u /* particles a cell can hold during a step */
#define CXS_FA_N_MAX (1u << 19)
#define OFF_HDR 0
#define OFF_BAR LINE
#define OFF_THREADS (2 * LINE)

enum { F_X, F_Y, F_VX, F_VY, F_RHO, F_FX, F_FY, F_CELL };

struct fa_layout {
	uint64_t n, gx, gy, locks_off, cells_off[2], parts_off[2];
	uint32_t nthreads;
	uint32_t *row_owner; /* gy entries */
};

static int64_t lcg_range(uint64_t *s, int64_t n)
{
	*s = *s * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
	return (int64_t)((*s >> 20) % (uint64_t)n);
}

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	uint32_t T = img->nthreads;
	if (img->size < 4 || img->size > CXS_FA_N_MAX) {
		snprintf(err, errlen, "fluidanimate: size (particles) must be 4..%u (got %" PRIu64 ")",
			 CXS_FA_N_MAX, img->size);
		return -1;
	}
	uint64_t n = img->size, gx = 1;
	while (gx * gx * 4 < n)
		gx++;
	uint64_t gy = (n / 4 + gx - 1) / gx;
	if (gy < 1)
		gy = 1;
	struct fa_layout *L = calloc(1, sizeof *L + gy * sizeof(uint32_t));
	uint64_t *cnt = calloc(gx * gy, sizeof *cnt);
	int64_t *tmp = malloc(n * 2 * sizeof *tmp);
	if (!L || !cnt || !tmp) {
		free(L), free(cnt), free(tmp);
		snprintf(err, errlen, "fluidanimate: out of memory");
		return -1;
	}
	L->row_owner = (uint32_t *)(L + 1);
	L->n = n, L->gx = gx, L->gy = gy, L->nthreads = T;
	for (uint32_t t = 0; t < T; t++)
		for (uint64_t y = gy * t / T; y < gy * (t + 1) / T; y++)
			L->row_owner[y] = t;
	uint64_t ncells = gx * gy;
	L->locks_off = OFF_THREADS + (uint64_t)T * LINE;
	L->cells_off[0] = L->locks_off + ncells * LINE;
	L->cells_off[1] = L->cells_off[0] + (ncells * 8 + LINE - 1) / LINE * LINE;
	L->parts_off[0] = L->cells_off[1] + (ncells * 8 + LINE - 1) / LINE * LINE;
	L->parts_off[1] = L->parts_off[0] + n * LINE;
	img->shared_bytes = L->parts_off[1] + n * LINE;
	img->private_bytes = LINE;
	img->info = L;
	img->shared = calloc(1, img->shared_bytes);
	if (!img->shared) {
		free(cnt), free(tmp);
		snprintf(err, errlen, "fluidanimate: out of memory for %" PRIu64 " bytes",
			 img->shared_bytes);
		return -1;
	}
	uint8_t *sh = img->shared;
	uint64_t s = img->seed ^ UINT64_C(0xf1d);
	for (uint64_t i = 0; i < n; i++) {
		tmp[2 * i] = lcg_range(&s, (int64_t)gx * CELL);
		tmp[2 * i + 1] = lcg_range(&s, (int64_t)gy * CELL);
		cnt[(uint64_t)(tmp[2 * i + 1] / CELL) * gx + (uint64_t)(tmp[2 * i] / CELL)]++;
	}
	uint64_t start = 0;
	for (uint64_t c = 0; c < ncells; c++) { /* counting sort by cell */
		uint64_t w = start | cnt[c] << 32;
		memcpy(sh + L->cells_off[0] + 8 * c, &w, 8);
		start += cnt[c];
		cnt[c] = w & 0xffffffffu;
	}
	for (uint64_t i = 0; i < n; i++) {
		uint64_t c = (uint64_t)(tmp[2 * i + 1] / CELL) * gx + (uint64_t)(tmp[2 * i] / CELL);
		int64_t *p = (int64_t *)(sh + L->parts_off[0] + cnt[c]++ * LINE);
		p[F_X] = tmp[2 * i], p[F_Y] = tmp[2 * i + 1], p[F_CELL] = (int64_t)c;
	}
	uint64_t hdr[6] = {n, gx, gy, L->cells_off[0], L->parts_off[0], L->parts_off[1]};
	memcpy(sh + OFF_HDR, hdr, sizeof hdr);
	free(cnt), free(tmp);
	return 0;
}

static bool shared_cell(const struct fa_layout *L, uint64_t y)
{
	uint32_t o = L->row_owner[y];
	return (y > 0 && L->row_owner[y - 1] != o) || (y + 1 < L->gy && L->row_owner[y + 1] != o);
}

/* A cell's particles (fields 0 .. nf-1 of each, issued 16 particles at a time) and
 * their accumulators. */
struct cellbuf {
	uint64_t cell, start, count;
	int64_t v[CXS_FA_CELL_MAX][5];
	int64_t acc[CXS_FA_CELL_MAX][2];
};

static uint64_t part_addr(struct cxs_kt *kt, const struct fa_layout *L, int a, uint64_t i, int f)
{
	return cxs_kt_shared(kt) + L->parts_off[a] + i * LINE + 8 * (uint64_t)f;
}

static void load_cell(struct cxs_kt *kt, const struct fa_layout *L, int a, uint64_t c, int nf,
		      struct cellbuf *b)
{
	uint64_t w = cxs_kt_load(kt, cxs_kt_shared(kt) + L->cells_off[a] + 8 * c, 8);
	b->cell = c, b->start = w & 0xffffffffu, b->count = w >> 32;
	if (b->count > CXS_FA_CELL_MAX)
		cxs_kt_fail(kt, "fluidanimate: cell %" PRIu64 " holds %" PRIu64 " particles (at most %u)",
			    c, b->count, CXS_FA_CELL_MAX);
	for (uint64_t i0 = 0; i0 < b->count; i0 += 16) {
		uint32_t h[16][5], k = 0;
		for (uint64_t i = i0; i < b->count && k < 16; i++, k++)
			for (int f = 0; f < nf; f++)
				h[k][f] = cxs_kt_ld(kt, part_addr(kt, L, a, b->start + i, f), 8);
		for (uint32_t j = 0; j < k; j++)
			for (int f = 0; f < nf; f++)
				b->v[i0 + j][f] = (int64_t)cxs_kt_get(kt, h[j][f]);
	}
	memset(b->acc, 0, b->count * sizeof b->acc[0]);
}

/* Adds b's accumulators to fields f0 (.. f0 + nf) of its particles. */
static void flush(struct cxs_kt *kt, const struct fa_layout *L, int a, const struct cellbuf *b,
		  int f0, int nf, uint64_t *locks)
{
	bool lk = shared_cell(L, b->cell / L->gx);
	uint64_t lock = cxs_kt_shared(kt) + L->locks_off + b->cell * LINE;
	if (b->count == 0)
		return;
	if (lk) {
		cxs_kt_lock(kt, lock);
		++*locks;
	}
	for (uint64_t i0 = 0; i0 < b->count; i0 += 32) {
		uint32_t h[32][2], k = 0;
		for (uint64_t i = i0; i < b->count && k < 32; i++, k++)
			for (int f = 0; f < nf; f++)
				h[k][f] = cxs_kt_ld(kt, part_addr(kt, L, a, b->start + i, f0 + f), 8);
		for (uint32_t j = 0; j < k; j++)
			for (int f = 0; f < nf; f++)
				cxs_kt_store(kt, part_addr(kt, L, a, b->start + i0 + j, f0 + f), 8,
					     cxs_kt_get(kt, h[j][f]) + (uint64_t)b->acc[i0 + j][f]);
	}
	if (lk)
		cxs_kt_unlock(kt, lock);
}

static int64_t pressure(int64_t rho)
{
	return (rho - RHO0) / 16;
}

/* Pair terms between b's particle i and o's particle j (density or force). */
static uint64_t pairs(struct cxs_kt *kt, struct cellbuf *b, struct cellbuf *o, bool force)
{
	bool same = b == o;
	uint64_t tests = 0;
	for (uint64_t i = 0; i < b->count; i++)
		for (uint64_t j = same ? i + 1 : 0; j < o->count; j++) {
			int64_t dx = b->v[i][F_X] - o->v[j][F_X], dy = b->v[i][F_Y] - o->v[j][F_Y];
			int64_t r2 = dx * dx + dy * dy;
			tests++;
			if (r2 >= H2)
				continue;
			int64_t q = H2 - r2;
			if (!force) {
				int64_t w = q * q / (INT64_C(1) << 24);
				b->acc[i][0] += w;
				o->acc[j][0] += w;
				continue;
			}
			int64_t g = q * (pressure(b->v[i][F_RHO]) + pressure(o->v[j][F_RHO])) /
				    (INT64_C(1) << 28);
			int64_t fx = dx * g / (INT64_C(1) << 16) +
				     (o->v[j][F_VX] - b->v[i][F_VX]) * q / (INT64_C(1) << 22);
			int64_t fy = dy * g / (INT64_C(1) << 16) +
				     (o->v[j][F_VY] - b->v[i][F_VY]) * q / (INT64_C(1) << 22);
			b->acc[i][0] += fx, b->acc[i][1] += fy;
			o->acc[j][0] -= fx, o->acc[j][1] -= fy;
		}
	cxs_kt_compute(kt, (uint32_t)(tests * (force ? 18 : 10)));
	return tests;
}

/* P1 (force false) or P2 (force true) over the thread's cells. */
static void interact(struct cxs_kt *kt, const struct fa_layout *L, int a, bool force,
		     struct cellbuf *b, struct cellbuf *o, uint64_t *tests, uint64_t *locks)
{
	static const int half[4][2] = {{1, 0}, {-1, 1}, {0, 1}, {1, 1}};
	uint32_t t = cxs_kt_id(kt), T = cxs_kt_count(kt);
	int nf = force ? 5 : 2, f0 = force ? F_FX : F_RHO, nacc = force ? 2 : 1;
	for (uint64_t y = L->gy * t / T; y < L->gy * (t + 1) / T; y++)
		for (uint64_t x = 0; x < L->gx; x++) {
			load_cell(kt, L, a, y * L->gx + x, nf, b);
			if (!force) /* the particle's own term, w(0) */
				for (uint64_t i = 0; i < b->count; i++)
					b->acc[i][0] = H2 * H2 / (INT64_C(1) << 24);
			*tests += pairs(kt, b, b, force);
			for (int k = 0; k < 4; k++) {
				int64_t nx = (int64_t)x + half[k][0], ny = (int64_t)y + half[k][1];
				if (nx < 0 || nx >= (int64_t)L->gx || ny >= (int64_t)L->gy)
					continue;
				load_cell(kt, L, a, (uint64_t)ny * L->gx + (uint64_t)nx, nf, o);
				*tests += pairs(kt, b, o, force);
				flush(kt, L, a, o, f0, nacc, locks);
			}
			flush(kt, L, a, b, f0, nacc, locks);
		}
}

static int64_t clampv(int64_t v)
{
	return v > VMAX ? VMAX : v < -VMAX ? -VMAX : v;
}

/* Reflects a coordinate into [0, lim). */
static void wall(int64_t *x, int64_t *v, int64_t lim)
{
	if (*x < 0) {
		*x = -*x;
		*v = -*v / 2;
	} else if (*x >= lim) {
		*x = 2 * (lim - 1) - *x;
		*v = -*v / 2;
	}
}

/* P3: the thread's particles (a contiguous run of array a). */
static void advance(struct cxs_kt *kt, const struct fa_layout *L, int a)
{
	uint32_t t = cxs_kt_id(kt), T = cxs_kt_count(kt);
	uint64_t s = cxs_kt_shared(kt);
	uint64_t c0 = L->gy * t / T * L->gx, c1 = L->gy * (t + 1) / T * L->gx;
	if (c0 == c1)
		return;
	uint64_t w0 = cxs_kt_load(kt, s + L->cells_off[a] + 8 * c0, 8);
	uint64_t w1 = cxs_kt_load(kt, s + L->cells_off[a] + 8 * (c1 - 1), 8);
	uint64_t lo = w0 & 0xffffffffu, hi = (w1 & 0xffffffffu) + (w1 >> 32);
	for (uint64_t i = lo; i < hi; i++) {
		uint32_t h[7];
		static const int fld[7] = {F_X, F_Y, F_VX, F_VY, F_FX, F_FY, F_CELL};
		for (int f = 0; f < 7; f++)
			h[f] = cxs_kt_ld(kt, part_addr(kt, L, a, i, fld[f]), 8);
		int64_t v[7];
		for (int f = 0; f < 7; f++)
			v[f] = (int64_t)cxs_kt_get(kt, h[f]);
		int64_t vx = clampv((v[2] + v[4] / 1024) * 15 / 16);
		int64_t vy = clampv((v[3] + (v[5] + GRAVITY) / 1024) * 15 / 16);
		int64_t x = v[0] + vx, y = v[1] + vy;
		wall(&x, &vx, (int64_t)L->gx * CELL);
		wall(&y, &vy, (int64_t)L->gy * CELL);
		int64_t cell = y / CELL * (int64_t)L->gx + x / CELL;
		cxs_kt_compute(kt, 30);
		cxs_kt_store(kt, part_addr(kt, L, a, i, F_X), 8, (uint64_t)x);
		cxs_kt_store(kt, part_addr(kt, L, a, i, F_Y), 8, (uint64_t)y);
		cxs_kt_store(kt, part_addr(kt, L, a, i, F_VX), 8, (uint64_t)vx);
		cxs_kt_store(kt, part_addr(kt, L, a, i, F_VY), 8, (uint64_t)vy);
		cxs_kt_store(kt, part_addr(kt, L, a, i, F_CELL), 8, (uint64_t)cell);
	}
}

/*
 * P4 (copy false: count) and P5 (copy true: copy from index *pos) for cell c:
 * the particles of its 9 neighbour cells in array a bound for c.
 */
static uint64_t gather(struct cxs_kt *kt, const struct fa_layout *L, int a, uint64_t c, bool copy,
		       uint64_t pos)
{
	uint64_t s = cxs_kt_shared(kt), x = c % L->gx, y = c / L->gx, n = 0;
	for (int dy = -1; dy <= 1; dy++)
		for (int dx = -1; dx <= 1; dx++) {
			int64_t nx = (int64_t)x + dx, ny = (int64_t)y + dy;
			if (nx < 0 || ny < 0 || nx >= (int64_t)L->gx || ny >= (int64_t)L->gy)
				continue;
			uint64_t w = cxs_kt_load(kt, s + L->cells_off[a] + 8 * ((uint64_t)ny * L->gx + (uint64_t)nx), 8);
			uint64_t st = w & 0xffffffffu, cnt = w >> 32;
			for (uint64_t i0 = 0; i0 < cnt; i0 += 64) {
				uint32_t h[64], k = 0;
				for (uint64_t i = i0; i < cnt && k < 64; i++)
					h[k++] = cxs_kt_ld(kt, part_addr(kt, L, a, st + i, F_CELL), 8);
				uint64_t dest[64]; /* all values first: a copy issues loads of its own */
				for (uint32_t j = 0; j < k; j++)
					dest[j] = cxs_kt_get(kt, h[j]);
				for (uint32_t j = 0; j < k; j++) {
					if (dest[j] != c)
						continue;
					if (copy) {
						uint32_t hv[4];
						for (int f = 0; f < 4; f++)
							hv[f] = cxs_kt_ld(kt, part_addr(kt, L, a, st + i0 + j, f), 8);
						for (int f = 0; f < 4; f++)
							cxs_kt_store(kt, part_addr(kt, L, a ^ 1, pos + n, f), 8,
								     cxs_kt_get(kt, hv[f]));
						for (int f = F_RHO; f <= F_FY; f++)
							cxs_kt_store(kt, part_addr(kt, L, a ^ 1, pos + n, f), 8, 0);
						cxs_kt_store(kt, part_addr(kt, L, a ^ 1, pos + n, F_CELL), 8, c);
					}
					n++;
				}
				cxs_kt_compute(kt, 3 * k);
			}
		}
	return n;
}

static void run(struct cxs_kt *kt)
{
	const struct fa_layout *L = cxs_kt_image(kt)->info;
	uint64_t s = cxs_kt_shared(kt), bar = s + OFF_BAR;
	uint32_t t = cxs_kt_id(kt), T = cxs_kt_count(kt);
	uint64_t c0 = L->gy * t / T * L->gx, c1 = L->gy * (t + 1) / T * L->gx;
	uint64_t tests = 0, locks = 0, moved = 0;
	struct cellbuf b[2]; /* ~28 KiB of the program's 256 KiB stack */
	int a = 0;
	cxs_kt_roi_begin(kt);
	for (uint32_t step = 0; step < CXS_FA_STEPS; step++, a ^= 1) {
		interact(kt, L, a, false, &b[0], &b[1], &tests, &locks);
		cxs_kt_barrier(kt, bar, T);
		interact(kt, L, a, true, &b[0], &b[1], &tests, &locks);
		cxs_kt_barrier(kt, bar, T);
		advance(kt, L, a);
		cxs_kt_barrier(kt, bar, T);
		uint64_t total = 0;
		for (uint64_t c = c0; c < c1; c++) {
			uint64_t n = gather(kt, L, a, c, false, 0);
			cxs_kt_store(kt, s + L->cells_off[a ^ 1] + 8 * c, 8, n << 32);
			total += n;
		}
		cxs_kt_store(kt, s + OFF_THREADS + (uint64_t)t * LINE, 8, total);
		cxs_kt_barrier(kt, bar, T);
		uint64_t pos = 0;
		for (uint32_t u = 0; u < t; u++)
			pos += cxs_kt_load(kt, s + OFF_THREADS + (uint64_t)u * LINE, 8);
		for (uint64_t c = c0; c < c1; c++) {
			uint64_t cnt = cxs_kt_load(kt, s + L->cells_off[a ^ 1] + 8 * c, 8) >> 32;
			cxs_kt_store(kt, s + L->cells_off[a ^ 1] + 8 * c, 8, pos | cnt << 32);
			if (gather(kt, L, a, c, true, pos) != cnt)
				cxs_kt_fail(kt, "fluidanimate: cell %" PRIu64 " gathered a different "
					    "number of particles the second time", c);
			pos += cnt;
			moved += cnt;
		}
		cxs_kt_barrier(kt, bar, T);
	}
	cxs_kt_roi_end(kt);
	uint64_t ncells = L->gx * L->gy;
	for (int k = 0; k < 2; k++) {
		cxs_kt_check_words(kt, L->parts_off[k] + L->n * t / T * LINE,
				   (L->n * (t + 1) / T - L->n * t / T) * LINE);
		cxs_kt_check_words(kt, L->cells_off[k] + ncells * t / T * 8,
				   (ncells * (t + 1) / T - ncells * t / T) * 8);
	}
	cxs_kt_result(kt, "pair_tests", tests);
	cxs_kt_result(kt, "cell_locks", locks);
	cxs_kt_result(kt, "particles_rebinned", moved);
}

const struct cxs_kernel cxs_kernel_fluidanimate = {
	.name = "fluidanimate",
	.doc = "modelled after PARSEC's fluidanimate: 2-D fixed-point SPH of size particles in a "
	       "cell grid, pair updates into neighbour cells under per-cell locks, barriers",
	.default_size = 65536,
	.deterministic = true,
	.build = build,
	.run = run,
};
