/*
 * dk_compress — how well and how fast a Logging Unit's dumps compress
 * (DIKTAMO §IV-E: gzip -9, "an average compression factor of 5.8x").
 *
 * One Logging Unit (CN 0 of 16, N_r = 3) is fed the REPLs a whole machine's
 * stores would send it, through the real cxs_lu_repl / cxs_lu_val /
 * cxs_lu_drain, and dumps when its log passes the high watermark, keeping
 * its share of each group's lines (cxs_dk_saver) for 16 MNs (line % 16).
 * Two store streams, both of 64 threads (16 CNs x 4 cores) each writing its
 * band of a shared array one line (8 coalesced words) at a time:
 *
 *   stencil  Jacobi sweeps of a G x G grid of doubles (2-D heat diffusion,
 *            a hot edge): consecutive addresses, values that change slowly
 *            from word to word and sweep to sweep, as ocean_cp does;
 *   ints     an int64 array rewritten every pass with a[i] = i * 3 + pass:
 *            consecutive addresses, small integers.
 *
 * Each line's grant epoch grows by one per sweep (its neighbours read it in
 * between), its words get counts 1..8 under the grant, and each CN's VAL TS
 * counts its VALs. Printed per stream: entries, the compression factor
 * against the 24 bytes an entry takes in the log (the paper's accounting)
 * and against the 32-byte records actually compressed (byte planes); the
 * same entries as 32-byte records side by side (the log format's version 1:
 * what a gzip -9 of a log written record after record gives, the paper's
 * kind of figure) and in the lossy 24-byte packing of an SRAM entry (address 6, requester 2, value
 * 8, stamp 8: what the lossless records cost over it), and the
 * dump rate: MB of log (24 B an entry) per second of cxs_lu_dump, which
 * reads, splits, encodes and compresses, as the median of REPS runs, at zlib
 * levels 9 (the paper's), 6 and 1.
 *
 * A benchmark that also checks what it measures, exit 1 on a failure: every
 * dumped chunk inflates to its raw length and decodes to its entry count,
 * each entry VALed, of the chunk's destination MN and of a line CN 0 saves;
 * every entry CN 0 was given and saves reaches a dump; and both streams
 * compress (a factor above 1 against the 24-byte entries).
 *   dk_compress [GRID] [SWEEPS] [REPS]     (defaults 1024 8 5)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zlib.h>

#include "cxlsim/diktamo.h"

#define NCN 16
#define CORES 4
#define NR 3
#define ME 0 /* the Logging Unit measured: CN 0 */

struct ctx {
	uint32_t live[NCN];
};

static bool keep(void *vctx, uint64_t line)
{
	struct ctx *c = vctx;
	uint32_t g[CXS_DK_MAX_REPLICAS];
	uint32_t n = cxs_dk_replicas(line, c->live, NCN, NR, g);
	return g[cxs_dk_saver(line, n)] == ME;
}

static uint32_t dest(void *vctx, uint64_t line)
{
	return (uint32_t)(line % 16);
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

struct totals {
	uint64_t entries, raw, packed, packed24, rows32;
	uint64_t fed_saved; /* entries CN 0 was given of lines it saves */
	double dump_s;
};

static void put_le(unsigned char *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/*
 * The same entries laid out record after record, compressed alike (for
 * comparison only): the 24-byte packing of an SRAM entry, and (*rows32) the
 * 32-byte records of the log format side by side, as its version 1 stored
 * them before byte planes.
 */
static size_t packed24_size(const struct cxs_dk_chunk *ch, int level, size_t *rows32)
{
	unsigned char *raw;
	struct cxs_dk_entry *e;
	size_t n;
	char err[256];
	if (cxs_dk_inflate(ch->bytes, ch->len, ch->raw_len, &raw, err, sizeof err) != 0 ||
	    cxs_dk_log_decode(raw, ch->raw_len, &e, &n, err, sizeof err) != 0) {
		fprintf(stderr, "dk_compress: %s\n", err);
		exit(1);
	}
	unsigned char *p = malloc(24 * n + 1), *z;
	for (size_t i = 0; i < n; i++) {
		put_le(p + 24 * i, e[i].addr, 6);
		put_le(p + 24 * i + 6, e[i].requester, 2);
		put_le(p + 24 * i + 8, e[i].value, 8);
		put_le(p + 24 * i + 16, e[i].stamp, 8);
	}
	size_t zlen = 0;
	if (cxs_dk_compress(p, 24 * n, level, &z, &zlen) != 0)
		exit(1);
	free(z);
	free(p);
	p = calloc(32 * n + 1, 1);
	for (size_t i = 0; i < n; i++) {
		put_le(p + 32 * i, e[i].addr, 8);
		put_le(p + 32 * i + 8, e[i].requester, 4);
		p[32 * i + 12] = e[i].ts;
		put_le(p + 32 * i + 16, e[i].value, 8);
		put_le(p + 32 * i + 24, e[i].stamp, 8);
	}
	if (cxs_dk_compress(p, 32 * n, level, &z, rows32) != 0)
		exit(1);
	free(z);
	free(p);
	free(e);
	free(raw);
	return zlen;
}

static void dump(struct cxs_lu *lu, struct ctx *c, struct totals *t, int level)
{
	struct cxs_dk_chunk *ch;
	size_t nch;
	cxs_time done;
	double t0 = now_s();
	if (cxs_lu_dump(lu, 0, keep, dest, c, 16, &ch, &nch, &done) != 0) {
		fprintf(stderr, "dk_compress: out of memory in a dump\n");
		exit(1);
	}
	t->dump_s += now_s() - t0;
	for (size_t i = 0; i < nch; i++) {
		unsigned char *raw;
		struct cxs_dk_entry *e;
		size_t n;
		char err[256];
		if (cxs_dk_inflate(ch[i].bytes, ch[i].len, ch[i].raw_len, &raw, err, sizeof err) != 0 ||
		    cxs_dk_log_decode(raw, ch[i].raw_len, &e, &n, err, sizeof err) != 0) {
			fprintf(stderr, "dk_compress: a dumped chunk does not read back: %s\n", err);
			exit(1);
		}
		if (n != ch[i].nentries) {
			fprintf(stderr, "dk_compress: a chunk of %zu entries decodes to %zu\n",
				(size_t)ch[i].nentries, n);
			exit(1);
		}
		for (size_t j = 0; j < n; j++)
			if (!e[j].valid || dest(c, e[j].addr >> 6) != ch[i].dest ||
			    !keep(c, e[j].addr >> 6)) {
				fprintf(stderr, "dk_compress: entry %#llx in the chunk for MN %u is not "
					"CN 0's to save there\n", (unsigned long long)e[j].addr,
					ch[i].dest);
				exit(1);
			}
		free(e);
		free(raw);
		t->entries += ch[i].nentries;
		t->raw += ch[i].raw_len;
		t->packed += ch[i].len;
		size_t r32;
		t->packed24 += packed24_size(&ch[i], level, &r32);
		t->rows32 += r32;
	}
	cxs_dk_chunks_free(ch, nch);
}

/* Feeds one line (8 words) from core `core` of CN `cn` if CN 0 is in its group. */
static void store_line(struct cxs_lu *lu, struct ctx *c, struct totals *t, int level,
		       uint64_t line, uint32_t epoch, const uint64_t v[8], uint32_t cn, uint32_t core,
		       uint32_t *repl, uint32_t *tsn)
{
	uint32_t g[CXS_DK_MAX_REPLICAS];
	uint32_t n = cxs_dk_replicas(line, c->live, NCN, NR, g);
	bool mine = false;
	for (uint32_t i = 0; i < n; i++)
		mine |= g[i] == ME;
	if (!mine)
		return;
	t->fed_saved += keep(c, line) ? 8 : 0;
	uint64_t a[8];
	for (int i = 0; i < 8; i++)
		a[i] = (line << 6) + 8 * (uint64_t)i;
	uint32_t moved, req = cn << 8 | core;
	while (cxs_lu_repl(lu, 0, req, repl[cn], a, v, 8, false) == CXS_TIME_INF) {
		cxs_lu_drain(lu, 0, &moved);
		if (moved == 0)
			dump(lu, c, t, level);
	}
	char err[256];
	if (cxs_lu_val(lu, 0, req, repl[cn], (uint8_t)(tsn[cn]++ & 0x7f),
		       ((uint64_t)epoch << 32) | 1, NULL, NULL, err, sizeof err) != 0) {
		fprintf(stderr, "dk_compress: %s\n", err);
		exit(1);
	}
	repl[cn]++;
	cxs_lu_drain(lu, 0, &moved);
	if (cxs_lu_needs_flush(lu))
		dump(lu, c, t, level);
}

static void run(const char *kind, uint32_t grid, uint32_t sweeps, int level, struct totals *t)
{
	struct ctx c;
	for (uint32_t i = 0; i < NCN; i++)
		c.live[i] = i;
	struct cxs_lu_params p;
	cxs_lu_default_params(&p);
	p.zlib_level = level;
	struct cxs_lu *lu = cxs_lu_new(&p, ME, NULL);
	size_t words = (size_t)grid * grid;
	double *u = malloc(words * sizeof *u), *nu = malloc(words * sizeof *nu);
	uint32_t *epoch = calloc(words / 8, sizeof *epoch);
	uint32_t repl[NCN] = {0}, tsn[NCN] = {0};
	if (!lu || !u || !nu || !epoch) {
		fprintf(stderr, "dk_compress: out of memory\n");
		exit(1);
	}
	bool stencil = strcmp(kind, "stencil") == 0;
	for (size_t i = 0; i < words; i++) {
		size_t y = i / grid, x = i % grid;
		u[i] = y == 0 ? 100.0 : 20.0 + 5.0 * sin(3.14159 * (double)x / grid);
	}
	const uint64_t base_line = (UINT64_C(1) << 32) >> 6; /* the array at 4 GiB */
	uint32_t threads = NCN * CORES, rows = grid / threads;
	memset(t, 0, sizeof *t);
	for (uint32_t s = 0; s < sweeps; s++) {
		for (size_t i = 0; i < words; i++) {
			size_t y = i / grid, x = i % grid;
			if (!stencil || y == 0 || y == grid - 1 || x == 0 || x == grid - 1)
				nu[i] = u[i];
			else
				nu[i] = 0.25 * (u[i - 1] + u[i + 1] + u[i - grid] + u[i + grid]);
		}
		/* Thread k writes rows [k * rows, (k + 1) * rows), line by line; threads interleave per line. */
		for (uint32_t l = 0; l < rows * grid / 8; l++)
			for (uint32_t k = 0; k < threads; k++) {
				size_t w0 = (size_t)k * rows * grid + 8 * (size_t)l;
				uint64_t v[8];
				for (int i = 0; i < 8; i++) {
					if (stencil)
						memcpy(&v[i], &nu[w0 + i], 8);
					else
						v[i] = (w0 + i) * 3 + s;
				}
				uint64_t line = base_line + w0 / 8;
				store_line(lu, &c, t, level, line, ++epoch[w0 / 8], v, k / CORES,
					   k % CORES, repl, tsn);
			}
		double *sw = u;
		u = nu;
		nu = sw;
	}
	uint32_t moved;
	cxs_lu_drain(lu, 0, &moved);
	dump(lu, &c, t, level);
	if (t->entries != t->fed_saved) {
		fprintf(stderr, "dk_compress: %s: CN 0 saves %lu entries, its dumps hold %lu\n", kind,
			(unsigned long)t->fed_saved, (unsigned long)t->entries);
		exit(1);
	}
	free(u);
	free(nu);
	free(epoch);
	cxs_lu_free(lu);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	uint32_t grid = argc > 1 ? (uint32_t)atoi(argv[1]) : 1024;
	uint32_t sweeps = argc > 2 ? (uint32_t)atoi(argv[2]) : 8;
	int reps = argc > 3 ? atoi(argv[3]) : 5;
	if (grid < 64 || grid % 64 != 0 || sweeps < 1 || reps < 1 || reps > 99) {
		fprintf(stderr, "usage: dk_compress [GRID (multiple of 64)] [SWEEPS] [REPS 1..99]\n");
		return 2;
	}
	printf("%-8s %5s %10s %9s %9s %9s %9s %11s %13s\n", "stream", "level", "entries", "x(24B)",
	       "x(32B)", "x(rows32)", "x(pack24)", "dump MB/s", "dump MB/s*");
	const char *kinds[2] = {"stencil", "ints"};
	const int levels[3] = {9, 6, 1};
	for (int k = 0; k < 2; k++)
		for (int l = 0; l < 3; l++) {
			double rate[99], rate_raw[99];
			struct totals t;
			for (int r = 0; r < reps; r++) {
				run(kinds[k], grid, sweeps, levels[l], &t);
				rate[r] = 24.0 * (double)t.entries / 1e6 / t.dump_s;
				rate_raw[r] = (double)t.raw / 1e6 / t.dump_s;
			}
			if (t.packed == 0 || 24.0 * (double)t.entries / (double)t.packed <= 1.0) {
				fprintf(stderr, "dk_compress: %s at level %d does not compress\n",
					kinds[k], levels[l]);
				return 1;
			}
			qsort(rate, (size_t)reps, sizeof *rate, cmp_double);
			qsort(rate_raw, (size_t)reps, sizeof *rate_raw, cmp_double);
			printf("%-8s %5d %10lu %9.2f %9.2f %9.2f %9.2f %11.1f %13.1f\n", kinds[k],
			       levels[l], (unsigned long)t.entries,
			       24.0 * (double)t.entries / (double)t.packed,
			       (double)t.raw / (double)t.packed,
			       24.0 * (double)t.entries / (double)t.rows32,
			       24.0 * (double)t.entries / (double)t.packed24, rate[reps / 2],
			       rate_raw[reps / 2]);
		}
	printf("x(24B): log bytes (24 per entry) / compressed; x(32B): encoded records (byte "
	       "planes) / compressed;\nx(rows32), x(pack24): log bytes (24 per entry) / the same "
	       "entries compressed as 32-byte records side by side (format version 1) or a 24-byte "
	       "packing;\ndump MB/s: log MB (24 B an entry) per second of cxs_lu_dump, median of "
	       "%d; *: encoded MB/s\n",
	       reps);
	return 0;
}
