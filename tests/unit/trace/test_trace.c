/*
 * Unit tests for per-core traces (src/workload/trace.c, format in
 * include/cxlsim/trace.h).
 *
 * The format is checked against its documentation by an independent builder
 * written here from the header comment alone (build_trace): its output must
 * equal the writer's byte for byte, and it forges the files a writer never
 * makes (bad records, disagreeing counts, reordered blocks, a newer version)
 * with every CRC correct, so that each check in the reader is reached on its
 * own rather than hidden behind a CRC mismatch.
 *
 * Damage is tested exhaustively on small files: every truncation point and
 * every single-bit flip must be refused with one line naming the file; run
 * under ASan this also shows that no damaged file makes the reader misbehave.
 * Regular files meet the reader's up-front trailer check; the same bytes fed
 * through a pipe (no size known) reach the streaming checks instead, where the
 * message must give the exact byte at which the data stopped.
 *
 * Files go to one mkdtemp() directory per test case, made and removed by an
 * unchecked fixture, that is in the runner's process, so that a failing test
 * (whose forked process ends at once) leaves nothing behind.
 */
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cxlsim/trace.h"

/* Also declared in tests/unit/unit_suites.h once the runner collects it. */
Suite *trace_suite(void);

#define ERR_LEN CXS_TRACE_ERR_MAX
#define PATH_LEN 256

static char tmp_dir[64];

static void make_tmp_dir(void)
{
	strcpy(tmp_dir, "/tmp/cxs_trace_XXXXXX");
	ck_assert_msg(mkdtemp(tmp_dir) != NULL, "mkdtemp failed");
}

/* Removes dir and what is in it (files, and directories a failed test left). */
static void remove_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[PATH_LEN + 300];

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		if (unlink(p) != 0)
			remove_tree(p);
	}
	closedir(d);
	rmdir(dir);
}

static void remove_tmp_dir(void)
{
	remove_tree(tmp_dir);
}

static void tpath(char *buf, const char *name)
{
	snprintf(buf, PATH_LEN, "%s/%s", tmp_dir, name);
}

static int exists(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_ge(n, 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void spit(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	ck_assert_msg(f != NULL, "cannot create %s", path);
	ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

static void write_text(const char *path, const char *text)
{
	spit(path, text, strlen(text));
}

/* xorshift64: a fixed stream, so every run sees the same records. */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A valid record of any op; mostly loads and stores, as in real traces. */
static struct cxs_trace_rec rand_rec(uint64_t *s)
{
	struct cxs_trace_rec r = { 0 };
	uint64_t x = next_rand(s);
	static const uint8_t ops[] = { CXS_TRACE_LOAD, CXS_TRACE_LOAD, CXS_TRACE_LOAD,
				       CXS_TRACE_STORE, CXS_TRACE_STORE, CXS_TRACE_RMW,
				       CXS_TRACE_FENCE, CXS_TRACE_LOCK, CXS_TRACE_UNLOCK,
				       CXS_TRACE_BARRIER, CXS_TRACE_POST, CXS_TRACE_WAIT,
				       CXS_TRACE_CHECK };

	r.op = ops[x % sizeof ops];
	r.gap = (x >> 8) % 16 == 0 ? (uint32_t)(x >> 32) : (uint32_t)((x >> 12) % 40);
	switch (r.op) {
	case CXS_TRACE_LOAD:
	case CXS_TRACE_STORE:
	case CXS_TRACE_RMW:
	case CXS_TRACE_CHECK:
		r.size = (uint8_t)(1u << ((x >> 20) % 4));
		r.addr = (next_rand(s) & 0xffffffffffull) & ~(uint64_t)(r.size - 1);
		r.value = next_rand(s);
		if (r.size < 8)
			r.value &= (UINT64_C(1) << (8 * r.size)) - 1;
		if (r.op == CXS_TRACE_LOAD && (x >> 24) % 2)
			r.value = 0;
		/* Version 2: where, dependencies (mostly short), add and fadd. */
		r.flags = (uint8_t)((x >> 44) % (CXS_TRACE_WHERE_MAX + 1));
		r.addr_dep = (x >> 48) % 3 == 0 ? (uint16_t)((x >> 50) % 5) : 0;
		if (r.op == CXS_TRACE_STORE || r.op == CXS_TRACE_RMW) {
			r.value_dep = (x >> 53) % 2 ? (uint16_t)(1 + (x >> 54) % 300) : 0;
			if (r.value_dep && (x >> 58) % 2)
				r.flags |= CXS_TRACE_F_ADD;
		}
		if (r.op == CXS_TRACE_RMW && (x >> 59) % 2)
			r.flags |= CXS_TRACE_F_FADD;
		break;
	case CXS_TRACE_FENCE:
		break;
	default:
		r.size = 8;
		r.addr = (next_rand(s) & 0xffffff) * 8;
		r.value = (x >> 28) % 3 == 0 ? (x >> 40) % 64 : 0;
		r.flags = (uint8_t)((x >> 44) % (CXS_TRACE_WHERE_MAX + 1));
		break;
	}
	return r;
}

/*
 * Compares without calling ck_assert on success: in fork mode every passing
 * check writes to a pipe, which would make the 100k-record loop slow.
 */
static void assert_same_rec(const struct cxs_trace_rec *a, const struct cxs_trace_rec *b,
			    uint64_t i)
{
	if (a->op != b->op || a->size != b->size || a->addr != b->addr ||
	    a->value != b->value || a->gap != b->gap)
		ck_abort_msg("record %" PRIu64 ": got op %u size %u addr 0x%" PRIx64 " value 0x%"
			     PRIx64 " gap %u, want op %u size %u addr 0x%" PRIx64 " value 0x%"
			     PRIx64 " gap %u", i, a->op, a->size, a->addr, a->value, a->gap, b->op,
			     b->size, b->addr, b->value, b->gap);
	if (a->flags != b->flags || a->addr_dep != b->addr_dep || a->value_dep != b->value_dep)
		ck_abort_msg("record %" PRIu64 ": got flags 0x%x adep %u vdep %u, want flags 0x%x"
			     " adep %u vdep %u", i, a->flags, a->addr_dep, a->value_dep, b->flags,
			     b->addr_dep, b->value_dep);
}

static void write_trace(const char *path, uint32_t core, const struct cxs_trace_writer_opts *o,
			const struct cxs_trace_rec *recs, size_t n)
{
	char err[ERR_LEN] = "";
	struct cxs_trace_writer *w = cxs_trace_writer_open_opts(path, core, o, err, sizeof err);

	ck_assert_msg(w != NULL, "open: %s", err);
	for (size_t i = 0; i < n; i++)
		if (cxs_trace_writer_append(w, &recs[i], err, sizeof err) != 0)
			ck_abort_msg("append %zu: %s", i, err);
	ck_assert_msg(cxs_trace_writer_close(w, err, sizeof err) == 0, "close: %s", err);
}

/*
 * Opens path and reads it to the end. Returns 0 if the whole trace is valid,
 * -1 with the message in err otherwise; *n counts the records read.
 */
static int read_through(const char *path, char *err, size_t errlen, uint64_t *n)
{
	struct cxs_trace_reader *r = cxs_trace_reader_open(path, err, errlen);
	struct cxs_trace_rec rec;
	int rc;

	*n = 0;
	if (r == NULL)
		return -1;
	while ((rc = cxs_trace_reader_next(r, &rec, err, errlen)) == 1)
		(*n)++;
	/* The verdict sticks: asking again gives the same answer. */
	ck_assert_int_eq(cxs_trace_reader_next(r, &rec, err, errlen), rc);
	cxs_trace_reader_close(r);
	return rc == 0 ? 0 : -1;
}

/* Asserts that err is one line that starts with "path:". */
static void assert_names_file(const char *err, const char *path)
{
	size_t n = strlen(path);

	ck_assert_msg(strncmp(err, path, n) == 0 && err[n] == ':',
		      "message does not start with '%s:': %s", path, err);
	ck_assert_msg(strchr(err, '\n') == NULL, "message is not one line: %s", err);
}

/* Reads the bytes through a pipe, so that the reader cannot know the file size. */
static int read_through_pipe(const uint8_t *buf, size_t len, char *name, char *err,
			     size_t errlen)
{
	int fds[2];
	uint64_t n;
	int rc;

	ck_assert_int_eq(pipe(fds), 0);
	ck_assert_uint_lt(len, 60000);  /* fits the pipe: no writer process needed */
	ck_assert_int_eq(write(fds[1], buf, len), (ssize_t)len);
	close(fds[1]);
	snprintf(name, PATH_LEN, "/dev/fd/%d", fds[0]);
	rc = read_through(name, err, errlen, &n);
	close(fds[0]);
	return rc;
}

/* ----------------------------------------------- an independent builder */

static void le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t crc(const uint8_t *p, size_t n)
{
	return (uint32_t)crc32(0, p, (uInt)n);
}

/* One version 1 (24-byte) record laid out as trace.h documents it. */
static void enc(uint8_t *p, unsigned op, unsigned size, unsigned reserved, uint32_t gap,
		uint64_t addr, uint64_t value)
{
	p[0] = (uint8_t)op;
	p[1] = (uint8_t)size;
	le16(p + 2, (uint16_t)reserved);
	le32(p + 4, gap);
	le64(p + 8, addr);
	le64(p + 16, value);
}

/* One version 2 (28-byte) record: flags at byte 2, byte 3 reserved, dependencies at 24. */
static void enc2(uint8_t *p, const struct cxs_trace_rec *r, unsigned reserved)
{
	enc(p, r->op, r->size, r->flags | reserved << 8, r->gap, r->addr, r->value);
	le16(p + 24, r->addr_dep);
	le16(p + 26, r->value_dep);
}

struct build {
	uint32_t core;
	uint32_t block_records;
	uint16_t version;
	uint32_t flags;
	int64_t hdr_count;     /* -1: the true count */
	int64_t trl_count;     /* -1: the true count */
	int64_t trl_blocks;    /* -1: the true number */
	int swap_blocks;       /* write blocks 1 and 2 in each other's place */
};

static const struct build build_default = {
	.core = 0, .block_records = 8, .version = 1, .flags = 0,
	.hdr_count = -1, .trl_count = -1, .trl_blocks = -1, .swap_blocks = 0,
};

/*
 * Writes nrec raw records to path per the documented format, at zlib level 6;
 * records of 24 bytes for version 1, 28 otherwise.
 */
static void build_trace(const char *path, const struct build *b, const uint8_t *raw, size_t nrec)
{
	size_t nblocks = (nrec + b->block_records - 1) / b->block_records;
	size_t rb = b->version == 1 ? 24 : 28;
	uint8_t **blk = calloc(nblocks + 1, sizeof *blk);
	size_t *blen = calloc(nblocks + 1, sizeof *blen);
	uint8_t hdr[40] = { 0 }, trl[24];
	uint32_t chain = 0;
	FILE *f;

	ck_assert(blk != NULL && blen != NULL);
	for (size_t k = 0; k < nblocks; k++) {
		size_t first = k * b->block_records;
		size_t n = nrec - first < b->block_records ? nrec - first : b->block_records;
		uLong raw_bytes = (uLong)(n * rb);
		uLongf clen = compressBound(raw_bytes);
		uint8_t cbuf[4];

		blk[k] = malloc(20 + clen);
		ck_assert_ptr_nonnull(blk[k]);
		ck_assert_int_eq(compress2(blk[k] + 20, &clen, raw + first * rb, raw_bytes, 6),
				 Z_OK);
		le32(blk[k], (uint32_t)raw_bytes);
		le32(blk[k] + 4, (uint32_t)clen);
		le32(blk[k] + 8, crc(raw + first * rb, raw_bytes));
		le32(blk[k] + 12, crc(blk[k] + 20, clen));
		le32(blk[k] + 16, crc(blk[k], 16));
		blen[k] = 20 + clen;
		memcpy(cbuf, blk[k] + 8, 4);
		chain = (uint32_t)crc32(chain, cbuf, 4);
	}
	memcpy(hdr, "CXSTRACE", 8);
	le16(hdr + 8, b->version);
	le16(hdr + 10, 40);
	le32(hdr + 12, b->flags);
	le32(hdr + 16, b->core);
	le32(hdr + 20, b->block_records);
	le64(hdr + 24, b->hdr_count >= 0 ? (uint64_t)b->hdr_count : nrec);
	le32(hdr + 36, crc(hdr, 36));
	le32(trl, 0);
	le32(trl + 4, b->trl_blocks >= 0 ? (uint32_t)b->trl_blocks : (uint32_t)nblocks);
	le64(trl + 8, b->trl_count >= 0 ? (uint64_t)b->trl_count : nrec);
	le32(trl + 16, chain);
	le32(trl + 20, crc(trl, 20));
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(hdr, 1, 40, f), 40);
	for (size_t k = 0; k < nblocks; k++) {
		size_t j = b->swap_blocks && k < 2 && nblocks >= 2 ? 1 - k : k;

		ck_assert_uint_eq(fwrite(blk[j], 1, blen[j], f), blen[j]);
	}
	ck_assert_uint_eq(fwrite(trl, 1, 24, f), 24);
	ck_assert_int_eq(fclose(f), 0);
	for (size_t k = 0; k < nblocks; k++)
		free(blk[k]);
	free(blk);
	free(blen);
}

/* ------------------------------------------------------------ round trip */

START_TEST(test_round_trip_100k_many_blocks)
{
	enum { N = 100000 };
	struct cxs_trace_rec *recs = malloc(N * sizeof *recs);
	struct cxs_trace_writer_opts o;
	struct cxs_trace_summary sum;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	char path[PATH_LEN], err[ERR_LEN] = "";
	uint32_t block_sizes[] = { 1000, CXS_TRACE_DEFAULT_BLOCK_RECORDS };

	ck_assert_ptr_nonnull(recs);
	for (size_t i = 0; i < N; i++)
		recs[i] = rand_rec(&seed);
	tpath(path, "big.trace");
	for (size_t b = 0; b < sizeof block_sizes / sizeof block_sizes[0]; b++) {
		struct cxs_trace_reader *r;
		struct cxs_trace_rec got;
		uint64_t n = 0;
		int rc;

		cxs_trace_writer_opts_default(&o);
		o.block_records = block_sizes[b];
		write_trace(path, 42, &o, recs, N);
		r = cxs_trace_reader_open(path, err, sizeof err);
		ck_assert_msg(r != NULL, "%s", err);
		ck_assert_uint_eq(cxs_trace_reader_core(r), 42);
		ck_assert_uint_eq(cxs_trace_reader_count(r), N);
		while ((rc = cxs_trace_reader_next(r, &got, err, sizeof err)) == 1) {
			if (n >= N)
				ck_abort_msg("more than %d records", N);
			assert_same_rec(&got, &recs[n], n);
			n++;
		}
		ck_assert_msg(rc == 0, "read: %s", err);
		ck_assert_uint_eq(n, N);
		ck_assert_int_eq(cxs_trace_reader_next(r, &got, err, sizeof err), 0);
		cxs_trace_reader_close(r);
		ck_assert_msg(cxs_trace_check(path, &sum, err, sizeof err) == 0, "%s", err);
		ck_assert_uint_eq(sum.blocks, (N + block_sizes[b] - 1) / block_sizes[b]);
		ck_assert_uint_eq(sum.records, N);
	}
	free(recs);
}
END_TEST

START_TEST(test_empty_trace_is_valid)
{
	char path[PATH_LEN], err[ERR_LEN] = "";
	uint64_t n = 99;
	size_t len;
	uint8_t *buf;

	tpath(path, "empty.trace");
	write_trace(path, 5, NULL, NULL, 0);
	buf = slurp(path, &len);
	ck_assert_uint_eq(len, CXS_TRACE_HEADER_BYTES + CXS_TRACE_TRAILER_BYTES);
	free(buf);
	ck_assert_msg(read_through(path, err, sizeof err, &n) == 0, "%s", err);
	ck_assert_uint_eq(n, 0);
}
END_TEST

/* The writer's bytes are those of the documentation, built independently. */
START_TEST(test_writer_matches_documented_format)
{
	enum { N = 1000 };
	struct cxs_trace_rec recs[N];
	uint8_t raw[N * 28];
	struct cxs_trace_writer_opts o;
	struct build b = build_default;
	char a_path[PATH_LEN], b_path[PATH_LEN];
	uint64_t seed = 12345;
	size_t alen, blen;
	uint8_t *a, *bb;

	for (size_t i = 0; i < N; i++) {
		recs[i] = rand_rec(&seed);
		enc2(raw + i * 28, &recs[i], 0);
	}
	cxs_trace_writer_opts_default(&o);
	o.block_records = 64;
	b.block_records = 64;
	b.version = CXS_TRACE_VERSION;
	b.core = 0xabcdef01;
	tpath(a_path, "writer.trace");
	tpath(b_path, "built.trace");
	write_trace(a_path, 0xabcdef01, &o, recs, N);
	build_trace(b_path, &b, raw, N);
	a = slurp(a_path, &alen);
	bb = slurp(b_path, &blen);
	ck_assert_uint_eq(alen, blen);
	ck_assert_msg(memcmp(a, bb, alen) == 0, "writer output differs from the documented layout");
	free(a);
	free(bb);
}
END_TEST

START_TEST(test_partial_until_close)
{
	char path[PATH_LEN], partial[PATH_LEN + 16], err[ERR_LEN] = "";
	struct cxs_trace_rec r = { .op = CXS_TRACE_LOAD, .size = 8, .addr = 0x40 };
	struct cxs_trace_writer *w;
	uint64_t n;

	tpath(path, "p.trace");
	snprintf(partial, sizeof partial, "%s.partial", path);
	w = cxs_trace_writer_open(path, 1, err, sizeof err);
	ck_assert_msg(w != NULL, "%s", err);
	ck_assert_int_eq(cxs_trace_writer_append(w, &r, err, sizeof err), 0);
	ck_assert(!exists(path));
	ck_assert(exists(partial));
	/* What a crash would leave is no trace. */
	ck_assert_int_eq(read_through(partial, err, sizeof err, &n), -1);
	assert_names_file(err, partial);
	ck_assert_int_eq(cxs_trace_writer_close(w, err, sizeof err), 0);
	ck_assert(exists(path));
	ck_assert(!exists(partial));

	/* Abort leaves neither file (the earlier complete one is untouched). */
	w = cxs_trace_writer_open(path, 1, err, sizeof err);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(cxs_trace_writer_append(w, &r, err, sizeof err), 0);
	cxs_trace_writer_abort(w);
	ck_assert(!exists(partial));
	ck_assert(exists(path));
}
END_TEST

/* A failed rename (the name is a non-empty directory) fails close and leaves no .partial. */
START_TEST(test_close_reports_failed_rename)
{
	char path[PATH_LEN], inside[PATH_LEN + 16], partial[PATH_LEN + 16], err[ERR_LEN] = "";
	struct cxs_trace_writer *w;

	tpath(path, "adir");
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(inside, sizeof inside, "%s/f", path);
	write_text(inside, "x");
	snprintf(partial, sizeof partial, "%s.partial", path);
	w = cxs_trace_writer_open(path, 0, err, sizeof err);
	ck_assert_msg(w != NULL, "%s", err);
	ck_assert_int_eq(cxs_trace_writer_close(w, err, sizeof err), -1);
	assert_names_file(err, path);
	ck_assert_msg(strstr(err, "cannot rename") != NULL, "%s", err);
	ck_assert(!exists(partial));
	unlink(inside);
	rmdir(path);
}
END_TEST

START_TEST(test_writer_rejects_bad_options_and_paths)
{
	struct cxs_trace_writer_opts o;
	char path[PATH_LEN], err[ERR_LEN] = "";

	tpath(path, "x.trace");
	cxs_trace_writer_opts_default(&o);
	o.level = 10;
	ck_assert_ptr_null(cxs_trace_writer_open_opts(path, 0, &o, err, sizeof err));
	assert_names_file(err, path);
	ck_assert_msg(strstr(err, "compression level 10") != NULL, "%s", err);
	cxs_trace_writer_opts_default(&o);
	o.block_records = CXS_TRACE_MAX_BLOCK_RECORDS + 1;
	ck_assert_ptr_null(cxs_trace_writer_open_opts(path, 0, &o, err, sizeof err));
	ck_assert_msg(strstr(err, "block size") != NULL, "%s", err);
	tpath(path, "no/such/dir.trace");
	ck_assert_ptr_null(cxs_trace_writer_open(path, 0, err, sizeof err));
	assert_names_file(err, path);
	ck_assert_msg(strstr(err, "cannot create") != NULL, "%s", err);
}
END_TEST

/* -------------------------------------------------------------- damage */

/* A small trace of 40 records in blocks of 8: header, 5 blocks, trailer. */
static uint8_t *small_trace(char *path, size_t *len)
{
	struct cxs_trace_rec recs[40];
	struct cxs_trace_writer_opts o;
	uint64_t seed = 777;

	for (size_t i = 0; i < 40; i++)
		recs[i] = rand_rec(&seed);
	cxs_trace_writer_opts_default(&o);
	o.block_records = 8;
	tpath(path, "small.trace");
	write_trace(path, 3, &o, recs, 40);
	return slurp(path, len);
}

START_TEST(test_every_truncation_rejected)
{
	char path[PATH_LEN], cut[PATH_LEN], name[PATH_LEN], err[ERR_LEN], want[64];
	size_t len;
	uint8_t *full = small_trace(path, &len);
	const char *expect;
	uint64_t n;

	ck_assert_msg(read_through(path, err, sizeof err, &n) == 0, "%s", err);
	ck_assert_uint_eq(n, 40);
	tpath(cut, "cut.trace");
	for (size_t k = 0; k < len; k++) {
		/* As a file: refused at open, by the header or the trailer check. */
		spit(cut, full, k);
		err[0] = '\0';
		ck_assert_msg(read_through(cut, err, sizeof err, &n) == -1,
			      "truncation to %zu of %zu bytes accepted", k, len);
		assert_names_file(err, cut);
		expect = k == 0 ? "empty" : k < 40 ? "truncated in the file header" :
			 k < 64 ? "truncated" : "no valid trailer";
		ck_assert_msg(strstr(err, expect) != NULL, "cut at %zu: %s", k, err);
		/* Through a pipe: found while streaming, at the byte where the data stops. */
		err[0] = '\0';
		ck_assert_msg(read_through_pipe(full, k, name, err, sizeof err) == -1,
			      "streamed truncation to %zu accepted", k);
		assert_names_file(err, name);
		if (k >= 40) {
			snprintf(want, sizeof want, "truncated at byte %zu,", k);
			ck_assert_msg(strstr(err, want) != NULL, "cut at %zu: %s", k, err);
		}
	}
	ck_assert_int_eq(read_through_pipe(full, len, name, err, sizeof err), 0);
	free(full);
}
END_TEST

/*
 * Flips every bit in [lo, hi) of the small trace, one at a time; each must be
 * refused with a message containing want(byte, bit).
 */
static void flip_range(size_t lo, size_t hi, const char *(*want)(size_t byte, int bit), int piped)
{
	char path[PATH_LEN], bad[PATH_LEN], name[PATH_LEN], err[ERR_LEN];
	size_t len;
	uint8_t *buf = small_trace(path, &len);
	uint64_t n;

	ck_assert_uint_le(hi, len);
	tpath(bad, "flipped.trace");
	for (size_t byte = lo; byte < hi; byte++) {
		for (int bit = 0; bit < 8; bit++) {
			const char *where = piped ? name : bad;
			int rc;

			buf[byte] ^= (uint8_t)(1u << bit);
			err[0] = '\0';
			if (piped) {
				rc = read_through_pipe(buf, len, name, err, sizeof err);
			} else {
				spit(bad, buf, len);
				rc = read_through(bad, err, sizeof err, &n);
			}
			buf[byte] ^= (uint8_t)(1u << bit);
			ck_assert_msg(rc == -1, "flip of byte %zu bit %d accepted", byte, bit);
			assert_names_file(err, where);
			ck_assert_msg(strstr(err, want(byte, bit)) != NULL,
				      "flip of byte %zu bit %d: expected '%s' in: %s", byte, bit,
				      want(byte, bit), err);
		}
	}
	free(buf);
}

/* Version 3 with bit 0 or 1 flipped is version 2 or 1, which are read: the CRC catches those. */
_Static_assert(CXS_TRACE_VERSION == 3, "header_flip_want knows which flips give a readable version");
static const char *header_flip_want(size_t byte, int bit)
{
	if (byte < 8)
		return "bad magic";
	if (byte == 8 && bit < 2)
		return "file header CRC mismatch";
	if (byte < 10)
		return "unsupported format version";
	return "file header CRC mismatch";
}

static const char *block_flip_want(size_t byte, int bit)
{
	(void)byte;
	(void)bit;
	return "block 1 at byte 40";
}

static const char *trailer_flip_want(size_t byte, int bit)
{
	(void)byte;
	(void)bit;
	return "no valid trailer";
}

static size_t trailer_start;   /* set by the test before flip_range */

/*
 * Streamed, a damaged end marker makes the trailer look like a sixth block
 * header, whose CRC then fails; anything else fails the trailer's own CRC.
 */
static const char *trailer_flip_piped_want(size_t byte, int bit)
{
	(void)bit;
	return byte < trailer_start + 4 ? "block 6 at byte" : "trailer at byte";
}

/* Where block 1 ends: 40 + 20 + its comp_bytes. */
static size_t first_block_end(void)
{
	char path[PATH_LEN];
	size_t len, end;
	uint8_t *buf = small_trace(path, &len);

	end = 40 + 20 + (size_t)(buf[44] | buf[45] << 8 | buf[46] << 16 | (size_t)buf[47] << 24);
	free(buf);
	return end;
}

START_TEST(test_bit_flips_in_header_rejected)
{
	flip_range(0, CXS_TRACE_HEADER_BYTES, header_flip_want, 0);
}
END_TEST

START_TEST(test_bit_flips_in_block_rejected)
{
	size_t end = first_block_end();

	ck_assert_uint_gt(end, 60);
	flip_range(CXS_TRACE_HEADER_BYTES, end, block_flip_want, 0);
}
END_TEST

START_TEST(test_bit_flips_in_trailer_rejected)
{
	char path[PATH_LEN];
	size_t len;
	uint8_t *buf = small_trace(path, &len);

	free(buf);
	trailer_start = len - CXS_TRACE_TRAILER_BYTES;
	flip_range(len - CXS_TRACE_TRAILER_BYTES, len, trailer_flip_want, 0);
	flip_range(len - CXS_TRACE_TRAILER_BYTES, len, trailer_flip_piped_want, 1);
}
END_TEST

START_TEST(test_missing_empty_directory_and_bad_magic)
{
	char path[PATH_LEN], err[ERR_LEN] = "";
	uint64_t n;

	tpath(path, "absent.trace");
	ck_assert_int_eq(read_through(path, err, sizeof err, &n), -1);
	assert_names_file(err, path);
	ck_assert_msg(strstr(err, "cannot open") != NULL, "%s", err);
	ck_assert_int_eq(read_through(tmp_dir, err, sizeof err, &n), -1);
	assert_names_file(err, tmp_dir);
	ck_assert_msg(strstr(err, "directory") != NULL, "%s", err);
	tpath(path, "empty");
	write_text(path, "");
	ck_assert_int_eq(read_through(path, err, sizeof err, &n), -1);
	ck_assert_msg(strstr(err, "empty file") != NULL, "%s", err);
	tpath(path, "text.trace");
	write_text(path, "ld 8 0x1000 gap=3\nst 4 0x2000 0xdead\nfence\nfence\nfence\n");
	ck_assert_int_eq(read_through(path, err, sizeof err, &n), -1);
	assert_names_file(err, path);
	ck_assert_msg(strstr(err, "bad magic") != NULL, "%s", err);
}
END_TEST

START_TEST(test_newer_version_and_unknown_flags_rejected)
{
	char path[PATH_LEN], err[ERR_LEN] = "";
	uint8_t raw[28] = {0}; /* a version 1 record, or (for version 4) 28 bytes */
	struct build b = build_default;
	uint64_t n;

	enc(raw, CXS_TRACE_LOAD, 8, 0, 0, 0x1000, 0);
	tpath(path, "v4.trace");
	b.version = 4;
	build_trace(path, &b, raw, 1);
	ck_assert_int_eq(read_through(path, err, sizeof err, &n), -1);
	ck_assert_msg(strstr(err, "unsupported format version 4") != NULL, "%s", err);
	b = build_default;
	b.flags = 4;
	build_trace(path, &b, raw, 1);
	ck_assert_int_eq(read_through(path, err, sizeof err, &n), -1);
	ck_assert_msg(strstr(err, "unknown flags 0x4") != NULL, "%s", err);
	b = build_default;
	b.block_records = CXS_TRACE_MAX_BLOCK_RECORDS + 1;
	build_trace(path, &b, raw, 1);
	ck_assert_int_eq(read_through(path, err, sizeof err, &n), -1);
	ck_assert_msg(strstr(err, "block size") != NULL, "%s", err);
	/* The control: the same record with nothing changed is read. */
	build_trace(path, &build_default, raw, 1);
	ck_assert_msg(read_through(path, err, sizeof err, &n) == 0, "%s", err);
	ck_assert_uint_eq(n, 1);
}
END_TEST

START_TEST(test_invalid_records_rejected_by_reader)
{
	static const struct {
		unsigned op, size, reserved;
		uint64_t addr, value;
		const char *want;
	} bad[] = {
		{ 0, 8, 0, 0x1000, 0, "op: 0 is not a valid op" },
		{ 8, 8, 0, 0x1000, 0, "op: 8 is not a version 1 op" },
		{ 255, 8, 0, 0x1000, 0, "op: 255" },
		{ CXS_TRACE_LOAD, 3, 0, 0x1000, 0, "size: 3 is not 1, 2, 4 or 8" },
		{ CXS_TRACE_STORE, 16, 0, 0x1000, 0, "size: 16" },
		{ CXS_TRACE_LOAD, 0, 0, 0x1000, 0, "size: 0" },
		{ CXS_TRACE_STORE, 4, 0, 0x1002, 0, "addr: 0x1002 is not aligned" },
		{ CXS_TRACE_RMW, 8, 0, 0x1004, 1, "addr: 0x1004 is not aligned" },
		{ CXS_TRACE_STORE, 1, 0, 0x1000, 0x100, "value: 0x100 does not fit in 1 byte" },
		{ CXS_TRACE_FENCE, 8, 0, 0, 0, "fence: size 8" },
		{ CXS_TRACE_FENCE, 0, 0, 0x40, 0, "fence: size 0, addr 0x40" },
		{ CXS_TRACE_LOCK, 4, 0, 0x4000, 0, "size: lock has size 4, expected 8" },
		{ CXS_TRACE_BARRIER, 8, 0, 0x5004, 0, "addr: 0x5004 of barrier" },
		{ CXS_TRACE_LOAD, 8, 1, 0x1000, 0, "reserved bytes 2..3" },
	};
	char path[PATH_LEN], err[ERR_LEN];
	uint8_t raw[3 * 24];

	tpath(path, "badrec.trace");
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct cxs_trace_reader *r;
		struct cxs_trace_rec rec;

		enc(raw, CXS_TRACE_LOAD, 8, 0, 1, 0x0, 0);
		enc(raw + 24, bad[i].op, bad[i].size, bad[i].reserved, 2, bad[i].addr,
		    bad[i].value);
		enc(raw + 48, CXS_TRACE_STORE, 8, 0, 3, 0x8, 5);
		build_trace(path, &build_default, raw, 3);
		r = cxs_trace_reader_open(path, err, sizeof err);
		ck_assert_msg(r != NULL, "case %zu: %s", i, err);
		ck_assert_int_eq(cxs_trace_reader_next(r, &rec, err, sizeof err), 1);
		err[0] = '\0';
		ck_assert_msg(cxs_trace_reader_next(r, &rec, err, sizeof err) == -1,
			      "case %zu (%s) accepted", i, bad[i].want);
		assert_names_file(err, path);
		ck_assert_msg(strstr(err, "block 1 at byte 40, record 2: ") != NULL &&
			      strstr(err, bad[i].want) != NULL, "case %zu: %s", i, err);
		ck_assert_int_eq(cxs_trace_reader_next(r, &rec, err, sizeof err), -1);
		cxs_trace_reader_close(r);
	}
	/* The control: the middle record made valid is read. */
	enc(raw + 24, CXS_TRACE_STORE, 1, 0, 2, 0x1001, 0xff);
	build_trace(path, &build_default, raw, 3);
	{
		uint64_t n;

		ck_assert_msg(read_through(path, err, sizeof err, &n) == 0, "%s", err);
		ck_assert_uint_eq(n, 3);
	}
}
END_TEST

/* Version 2 records: flags and dependencies are checked field by field. */
START_TEST(test_invalid_v2_records_rejected_by_reader)
{
	static const struct {
		struct cxs_trace_rec r;
		unsigned reserved;
		const char *want;
	} bad[] = {
		{ { .op = CXS_TRACE_LOAD, .size = 8, .addr = 0x1000 }, 1, "reserved byte 3" },
		{ { .op = CXS_TRACE_LOAD, .size = 8, .addr = 0x1000, .flags = 0x20 }, 0,
		  "flags: unknown bits 0x20" },
		{ { .op = CXS_TRACE_LOAD, .size = 8, .addr = 0x1000, .flags = 5 }, 0,
		  "flags: where 5" },
		{ { .op = CXS_TRACE_FENCE, .flags = 1 }, 0, "a fence has none" },
		{ { .op = CXS_TRACE_LOCK, .size = 8, .addr = 0x1000, .addr_dep = 1 }, 0,
		  "adep: lock has no address dependency" },
		{ { .op = CXS_TRACE_LOAD, .size = 8, .addr = 0x1000, .value_dep = 1 }, 0,
		  "vdep: only st and rmw" },
		{ { .op = CXS_TRACE_STORE, .size = 8, .addr = 0x1000, .flags = CXS_TRACE_F_ADD }, 0,
		  "add: needs" },
		{ { .op = CXS_TRACE_STORE, .size = 8, .addr = 0x1000, .flags = CXS_TRACE_F_FADD }, 0,
		  "fadd: only an rmw" },
		{ { .op = CXS_TRACE_CHECK, .size = 4, .addr = 0x1000, .value = 1ull << 32 }, 0,
		  "value: 0x100000000 does not fit in 4 bytes" },
		{ { .op = CXS_TRACE_WAIT, .size = 8, .addr = 0x1004 }, 0, "of wait is not 8-byte" },
		{ { .op = CXS_TRACE_OP_MAX + 1, .size = 8 }, 0, "op: 11 is not a valid op" },
	};
	const struct cxs_trace_rec first = { .op = CXS_TRACE_LOAD, .size = 8, .gap = 1 };
	const struct cxs_trace_rec last = { .op = CXS_TRACE_STORE, .size = 8, .addr = 8,
					    .value = 5, .value_dep = 2, .addr_dep = 1,
					    .flags = CXS_TRACE_F_ADD | CXS_TRACE_WHERE_HEAP };
	char path[PATH_LEN], err[ERR_LEN];
	uint8_t raw[3 * 28];
	struct build b = build_default;
	struct cxs_trace_reader *r;
	struct cxs_trace_rec rec;

	b.version = 2;
	tpath(path, "badrec2.trace");
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		enc2(raw, &first, 0);
		enc2(raw + 28, &bad[i].r, bad[i].reserved);
		enc2(raw + 56, &last, 0);
		build_trace(path, &b, raw, 3);
		r = cxs_trace_reader_open(path, err, sizeof err);
		ck_assert_msg(r != NULL, "case %zu: %s", i, err);
		ck_assert_int_eq(cxs_trace_reader_version(r), 2);
		ck_assert_int_eq(cxs_trace_reader_next(r, &rec, err, sizeof err), 1);
		err[0] = '\0';
		ck_assert_msg(cxs_trace_reader_next(r, &rec, err, sizeof err) == -1,
			      "case %zu (%s) accepted", i, bad[i].want);
		ck_assert_msg(strstr(err, "record 2: ") != NULL && strstr(err, bad[i].want) != NULL,
			      "case %zu: %s", i, err);
		cxs_trace_reader_close(r);
	}
	/* The control: a valid middle record, and every field of the last one comes back. */
	enc2(raw + 28, &first, 0);
	build_trace(path, &b, raw, 3);
	r = cxs_trace_reader_open(path, err, sizeof err);
	ck_assert_msg(r != NULL, "%s", err);
	for (int k = 0; k < 3; k++)
		ck_assert_msg(cxs_trace_reader_next(r, &rec, err, sizeof err) == 1, "%s", err);
	assert_same_rec(&rec, &last, 2);
	ck_assert_int_eq(cxs_trace_reader_next(r, &rec, err, sizeof err), 0);
	cxs_trace_reader_close(r);
}
END_TEST

/* A version 1 file reads as records without flags or dependencies. */
/*
 * Version 3's turn flag: a lock's turn is read back from a version 3 file,
 * refused on any other op, and refused in a version 2 file (where bit 5 had
 * no meaning); the text form carries it as "turn".
 */
START_TEST(test_turn_flag_is_version_3s_and_locks_only)
{
	const struct cxs_trace_rec lock = { .op = CXS_TRACE_LOCK, .size = 8, .addr = 0x4000,
					    .value = 7, .flags = CXS_TRACE_F_TURN |
					    CXS_TRACE_WHERE_GLOBAL };
	const struct cxs_trace_rec load = { .op = CXS_TRACE_LOAD, .size = 8, .addr = 0x4000,
					    .flags = CXS_TRACE_F_TURN };
	char path[PATH_LEN], err[ERR_LEN], text[CXS_TRACE_TEXT_MAX];
	uint8_t raw[28];
	struct build b = build_default;
	struct cxs_trace_reader *r;
	struct cxs_trace_rec rec;

	tpath(path, "turn.trace");
	b.version = 3;
	enc2(raw, &lock, 0);
	build_trace(path, &b, raw, 1);
	r = cxs_trace_reader_open(path, err, sizeof err);
	ck_assert_msg(r != NULL, "%s", err);
	ck_assert_int_eq(cxs_trace_reader_version(r), 3);
	ck_assert_msg(cxs_trace_reader_next(r, &rec, err, sizeof err) == 1, "%s", err);
	assert_same_rec(&rec, &lock, 1);
	cxs_trace_reader_close(r);
	enc2(raw, &load, 0);
	build_trace(path, &b, raw, 1);
	r = cxs_trace_reader_open(path, err, sizeof err);
	ck_assert_msg(r != NULL, "%s", err);
	ck_assert_int_eq(cxs_trace_reader_next(r, &rec, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "turn: only a lock has a turn") != NULL, "%s", err);
	cxs_trace_reader_close(r);
	b.version = 2;
	enc2(raw, &lock, 0);
	build_trace(path, &b, raw, 1);
	r = cxs_trace_reader_open(path, err, sizeof err);
	ck_assert_msg(r != NULL, "%s", err);
	ck_assert_int_eq(cxs_trace_reader_next(r, &rec, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "flags: unknown bits 0x20") != NULL, "%s", err);
	cxs_trace_reader_close(r);
	cxs_trace_format_text(&lock, text, sizeof text);
	ck_assert_str_eq(text, "lock 0x4000 0x7 where=global turn");
	ck_assert_int_eq(cxs_trace_parse_text(text, &rec, err, sizeof err), 1);
	assert_same_rec(&rec, &lock, 1);
	ck_assert_int_eq(cxs_trace_parse_text("ld 8 0x4000 turn", &rec, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "turn: only a lock") != NULL, "%s", err);
}
END_TEST

START_TEST(test_version1_read_without_v2_fields)
{
	char path[PATH_LEN], err[ERR_LEN] = "";
	uint8_t raw[2 * 24];
	struct cxs_trace_reader *r;
	struct cxs_trace_rec rec;

	enc(raw, CXS_TRACE_LOAD, 8, 0, 3, 0x1000, 0x77);
	enc(raw + 24, CXS_TRACE_STORE, 4, 0, 0, 0x2000, 0xdead);
	tpath(path, "v1.trace");
	build_trace(path, &build_default, raw, 2);
	r = cxs_trace_reader_open(path, err, sizeof err);
	ck_assert_msg(r != NULL, "%s", err);
	ck_assert_int_eq(cxs_trace_reader_version(r), 1);
	ck_assert_int_eq(cxs_trace_reader_next(r, &rec, err, sizeof err), 1);
	ck_assert(rec.op == CXS_TRACE_LOAD && rec.gap == 3 && rec.addr == 0x1000 &&
		  rec.value == 0x77 && rec.flags == 0 && rec.addr_dep == 0 && rec.value_dep == 0);
	ck_assert_int_eq(cxs_trace_reader_next(r, &rec, err, sizeof err), 1);
	ck_assert(rec.op == CXS_TRACE_STORE && rec.size == 4 && rec.value == 0xdead);
	ck_assert_int_eq(cxs_trace_reader_next(r, &rec, err, sizeof err), 0);
	cxs_trace_reader_close(r);
}
END_TEST

START_TEST(test_invalid_records_rejected_by_writer)
{
	const struct cxs_trace_rec good = { .op = CXS_TRACE_LOAD, .size = 4, .addr = 0x100 };
	const struct cxs_trace_rec bad[] = {
		{ .op = 0, .size = 8 },
		{ .op = CXS_TRACE_OP_MAX + 1, .size = 8 },
		{ .op = CXS_TRACE_LOAD, .size = 5, .addr = 0x100 },
		{ .op = CXS_TRACE_STORE, .size = 8, .addr = 0x104 },
		{ .op = CXS_TRACE_STORE, .size = 2, .addr = 0x100, .value = 0x10000 },
		{ .op = CXS_TRACE_FENCE, .size = 1 },
		{ .op = CXS_TRACE_UNLOCK, .size = 8, .addr = 0x101 },
	};
	char path[PATH_LEN], err[ERR_LEN] = "";
	struct cxs_trace_writer *w;
	uint64_t n;

	tpath(path, "w.trace");
	w = cxs_trace_writer_open(path, 0, err, sizeof err);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(cxs_trace_writer_append(w, &good, err, sizeof err), 0);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		ck_assert_msg(cxs_trace_writer_append(w, &bad[i], err, sizeof err) == -1,
			      "bad record %zu accepted", i);
		assert_names_file(err, path);
		ck_assert_msg(strstr(err, "record 2: ") != NULL, "%s", err);
	}
	/* A refused record is not written, and the writer goes on. */
	ck_assert_int_eq(cxs_trace_writer_append(w, &good, err, sizeof err), 0);
	ck_assert_uint_eq(cxs_trace_writer_count(w), 2);
	ck_assert_msg(cxs_trace_writer_close(w, err, sizeof err) == 0, "%s", err);
	ck_assert_msg(read_through(path, err, sizeof err, &n) == 0, "%s", err);
	ck_assert_uint_eq(n, 2);
}
END_TEST

START_TEST(test_counts_and_block_order_must_agree)
{
	static const struct {
		int64_t hdr_count, trl_count, trl_blocks;
		int swap;
		const char *want;
	} cases[] = {
		{ 19, -1, -1, 0, "the file header says 19 records, the trailer" },
		{ 21, 21, -1, 0, "says 21 records, the blocks hold 20" },
		{ 12, 12, -1, 0, "takes the records to 16, more than the 12" },
		{ -1, -1, 2, 0, "says 2 blocks, the file has 3" },
		{ -1, -1, -1, 1, "CRC over the block CRCs" },
	};
	char path[PATH_LEN], name[PATH_LEN], err[ERR_LEN];
	uint8_t raw[20 * 28];
	uint64_t seed = 99, n;

	for (size_t i = 0; i < 20; i++) {
		struct cxs_trace_rec r = rand_rec(&seed);

		enc2(raw + i * 28, &r, 0);
	}
	tpath(path, "count.trace");
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct build b = build_default;
		size_t len;
		uint8_t *buf;

		b.version = 2;
		b.hdr_count = cases[i].hdr_count;
		b.trl_count = cases[i].trl_count;
		b.trl_blocks = cases[i].trl_blocks;
		b.swap_blocks = cases[i].swap;
		build_trace(path, &b, raw, 20);
		err[0] = '\0';
		ck_assert_msg(read_through(path, err, sizeof err, &n) == -1, "case %zu accepted",
			      i);
		assert_names_file(err, path);
		ck_assert_msg(strstr(err, cases[i].want) != NULL, "case %zu: %s", i, err);
		/* Streamed, the header/trailer disagreement is found at the end instead. */
		buf = slurp(path, &len);
		ck_assert_int_eq(read_through_pipe(buf, len, name, err, sizeof err), -1);
		assert_names_file(err, name);
		free(buf);
	}
	{
		struct build b = build_default;

		b.version = 2;
		build_trace(path, &b, raw, 20);
	}
	ck_assert_msg(read_through(path, err, sizeof err, &n) == 0, "%s", err);
	ck_assert_uint_eq(n, 20);
}
END_TEST

START_TEST(test_data_after_trailer_rejected)
{
	char path[PATH_LEN], name[PATH_LEN], err[ERR_LEN] = "";
	size_t len;
	uint8_t *buf = small_trace(path, &len);
	uint8_t *longer = malloc(len + 1);
	uint64_t n;

	ck_assert_ptr_nonnull(longer);
	memcpy(longer, buf, len);
	longer[len] = 0;
	ck_assert_int_eq(read_through_pipe(longer, len + 1, name, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "unexpected data after the trailer") != NULL, "%s", err);
	spit(path, longer, len + 1);
	ck_assert_int_eq(read_through(path, err, sizeof err, &n), -1);
	assert_names_file(err, path);
	free(buf);
	free(longer);
}
END_TEST

/* ----------------------------------------------------------- text form */

START_TEST(test_text_good_lines)
{
	static const struct {
		const char *line;
		struct cxs_trace_rec want;
	} good[] = {
		{ "ld 8 0x1000 gap=3", { .op = CXS_TRACE_LOAD, .size = 8, .addr = 0x1000,
					 .gap = 3 } },
		{ "st 4 0x2000 0xdead", { .op = CXS_TRACE_STORE, .size = 4, .addr = 0x2000,
					  .value = 0xdead } },
		{ "rmw 8 0x3000 1", { .op = CXS_TRACE_RMW, .size = 8, .addr = 0x3000,
				      .value = 1 } },
		{ "fence", { .op = CXS_TRACE_FENCE } },
		{ "fence gap=12", { .op = CXS_TRACE_FENCE, .gap = 12 } },
		{ "lock 0x4000", { .op = CXS_TRACE_LOCK, .size = 8, .addr = 0x4000 } },
		{ "unlock 0x4000", { .op = CXS_TRACE_UNLOCK, .size = 8, .addr = 0x4000 } },
		{ "barrier 0x5000", { .op = CXS_TRACE_BARRIER, .size = 8, .addr = 0x5000 } },
		{ "barrier 0x5000 16 7", { .op = CXS_TRACE_BARRIER, .size = 8, .addr = 0x5000,
					   .value = 16, .gap = 7 } },
		{ "  st 2 4098 65535 9  # trailing", { .op = CXS_TRACE_STORE, .size = 2,
						       .addr = 4098, .value = 65535, .gap = 9 } },
		{ "ld 2 010", { .op = CXS_TRACE_LOAD, .size = 2, .addr = 10 } },  /* not octal */
		{ "st\t1\t0XFF\t0xAb\tgap=4294967295\r\n", { .op = CXS_TRACE_STORE, .size = 1,
							     .addr = 0xff, .value = 0xab,
							     .gap = 4294967295u } },
		{ "ld 8 0xfffffffffffffff8", { .op = CXS_TRACE_LOAD, .size = 8,
					       .addr = 0xfffffffffffffff8ull } },
		{ "st 8 0x8 0xffffffffffffffff gap=0", { .op = CXS_TRACE_STORE, .size = 8,
							 .addr = 8, .value = UINT64_MAX } },
	};
	static const char *const skip[] = { "", "   ", "# comment", "\t# comment\n", "\n" };
	char why[ERR_LEN] = "", text[CXS_TRACE_TEXT_MAX];

	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		struct cxs_trace_rec r, again;

		memset(&r, 0xa5, sizeof r);
		ck_assert_msg(cxs_trace_parse_text(good[i].line, &r, why, sizeof why) == 1,
			      "'%s': %s", good[i].line, why);
		assert_same_rec(&r, &good[i].want, i);
		/* Formatting gives text that parses back to the same record. */
		cxs_trace_format_text(&r, text, sizeof text);
		ck_assert_int_eq(cxs_trace_parse_text(text, &again, why, sizeof why), 1);
		assert_same_rec(&again, &r, i);
	}
	for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++) {
		struct cxs_trace_rec r;

		ck_assert_int_eq(cxs_trace_parse_text(skip[i], &r, why, sizeof why), 0);
	}
}
END_TEST

START_TEST(test_text_converter_good_file)
{
	static const char text[] =
		"# the examples of the brief\n"
		"ld 8 0x1000 gap=3\n"
		"st 4 0x2000 0xdead\n"
		"\n"
		"rmw 8 0x3000 1\n"
		"fence\n"
		"lock 0x4000\n"
		"unlock 0x4000\n"
		"barrier 0x5000\n";
	static const struct cxs_trace_rec want[] = {
		{ .op = CXS_TRACE_LOAD, .size = 8, .addr = 0x1000, .gap = 3 },
		{ .op = CXS_TRACE_STORE, .size = 4, .addr = 0x2000, .value = 0xdead },
		{ .op = CXS_TRACE_RMW, .size = 8, .addr = 0x3000, .value = 1 },
		{ .op = CXS_TRACE_FENCE },
		{ .op = CXS_TRACE_LOCK, .size = 8, .addr = 0x4000 },
		{ .op = CXS_TRACE_UNLOCK, .size = 8, .addr = 0x4000 },
		{ .op = CXS_TRACE_BARRIER, .size = 8, .addr = 0x5000 },
	};
	struct cxs_trace_convert_stats st;
	struct cxs_trace_reader *r;
	struct cxs_trace_rec rec;
	char in[PATH_LEN], out[PATH_LEN], err[ERR_LEN] = "";
	size_t n = 0;
	int rc;

	tpath(in, "in.txt");
	tpath(out, "out.trace");
	write_text(in, text);
	ck_assert_msg(cxs_trace_from_text(in, out, 9, NULL, &st, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(st.lines, 9);
	ck_assert_uint_eq(st.records, 7);
	r = cxs_trace_reader_open(out, err, sizeof err);
	ck_assert_msg(r != NULL, "%s", err);
	ck_assert_uint_eq(cxs_trace_reader_core(r), 9);
	while ((rc = cxs_trace_reader_next(r, &rec, err, sizeof err)) == 1) {
		ck_assert_uint_lt(n, 7);
		assert_same_rec(&rec, &want[n], n);
		n++;
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(n, 7);
	cxs_trace_reader_close(r);
}
END_TEST

START_TEST(test_text_converter_bad_lines)
{
	static const struct {
		const char *line;
		const char *want;
	} bad[] = {
		{ "load 8 0x10", "op: unknown 'load'" },
		{ "LD 8 0x10", "op: unknown 'LD'" },
		{ "ld 3 0x10", "size: 3 is not 1, 2, 4 or 8" },
		{ "ld 256 0x10", "size: 256 is not" },
		{ "ld x 0x10", "size: 'x' is not a number" },
		{ "ld", "size: missing" },
		{ "ld 8", "addr: missing" },
		{ "lock", "addr: missing" },
		{ "ld 8 0x1004", "addr: 0x1004 is not aligned to its size (8 bytes)" },
		{ "ld 8 0x1g", "addr: '0x1g' is not a number" },
		{ "ld 8 -16", "addr: '-16' is not a number" },
		{ "ld 8 0x", "addr: '0x' is not a number" },
		{ "ld 8 18446744073709551616", "addr: '18446744073709551616' is not a number" },
		{ "st 1 0x10 0x100", "value: 0x100 does not fit in 1 byte" },
		{ "st 1 0x10 zz", "value: 'zz' is not a number" },
		{ "ld 8 0x10 gap=abc", "gap: 'gap=abc' is not a number" },
		{ "ld 8 0x10 gap=", "gap: 'gap=' is not a number" },
		{ "ld 8 0x10 gap=4294967296", "gap: 4294967296 is more than 4294967295" },
		{ "ld 8 0x10 gap=1 gap=2", "gap: given twice" },
		{ "ld 8 0x10 5 gap=1 2", "gap: given twice" },
		{ "ld 8 0x10 1 2 3", "unexpected field '3'" },
		{ "fence 3", "unexpected field '3' (fence takes only gap=N)" },
		{ "lock 0x4004", "addr: 0x4004 of lock is not 8-byte aligned" },
		{ "a b c d e f g h i j k l m", "too many fields" },
		{ "ld 8 0x10 adep=70000", "adep: 70000 is more than 65535" },
		{ "ld 8 0x10 vdep=1", "vdep: only st and rmw" },
		{ "st 8 0x10 5 add", "add: needs a st or rmw with a value dependency" },
		{ "st 8 0x10 5 fadd vdep=1", "fadd: only an rmw" },
		{ "fence adep=2", "adep: fence has no address dependency" },
		{ "ld 8 0x10 where=moon", "where: 'moon' is not" },
	};
	char in[PATH_LEN], out[PATH_LEN], partial[PATH_LEN + 16], err[ERR_LEN], want[PATH_LEN + 16];
	char text[256];

	tpath(in, "bad.txt");
	tpath(out, "bad.trace");
	snprintf(partial, sizeof partial, "%s.partial", out);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(text, sizeof text, "# line 1\nld 8 0x0\n%s\nld 8 0x8\n", bad[i].line);
		write_text(in, text);
		err[0] = '\0';
		ck_assert_msg(cxs_trace_from_text(in, out, 0, NULL, NULL, err, sizeof err) == -1,
			      "'%s' accepted", bad[i].line);
		snprintf(want, sizeof want, "%s:3: ", in);
		ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "'%s': %s", bad[i].line, err);
		ck_assert_msg(strstr(err, bad[i].want) != NULL, "'%s': expected '%s' in: %s",
			      bad[i].line, bad[i].want, err);
		ck_assert_msg(strchr(err, '\n') == NULL, "not one line: %s", err);
		ck_assert(!exists(out));
		ck_assert(!exists(partial));
	}
	/* A binary file given as text is named as such, at its line. */
	spit(in, "ld 8 0x0\n\0ld\n", 13);
	ck_assert_int_eq(cxs_trace_from_text(in, out, 0, NULL, NULL, err, sizeof err), -1);
	ck_assert_msg(strstr(err, ":2: contains a NUL byte") != NULL, "%s", err);
	/* A missing input names the input. */
	tpath(in, "absent.txt");
	ck_assert_int_eq(cxs_trace_from_text(in, out, 0, NULL, NULL, err, sizeof err), -1);
	assert_names_file(err, in);
	ck_assert(!exists(out));
}
END_TEST

/* --------------------------------------------------------------- lackey */

START_TEST(test_lackey_sample)
{
	/*
	 * Instructions 1-2 make no access: the load of instruction 3 has gap 2.
	 * Instruction 4's M becomes a load and a store, gap 0 (4 follows 3).
	 * Instructions 5-7 make none: the 6-byte store at 0x3003 of instruction 8
	 * is split 1+4+1 with gap 3 on its first piece. Instruction 8 also loads
	 * 16 bytes (two 8s, no gap). An unaligned M of 4 at 0x6002 gives loads
	 * 2+2 then stores 2+2. Two trailing instructions have no record.
	 */
	static const char text[] =
		"==4242== Lackey, an example Valgrind tool\n"
		"==4242== Command: ./a.out\n"
		"==4242== \n"
		"I  04000000,3\n"
		"I  04000003,4\n"
		"I  04000007,2\n"
		" L 00001000,8\n"
		"I  04000009,5\n"
		" M 00002000,4\n"
		"I  0400000e,1\n"
		"I  0400000f,1\n"
		"I  04000010,1\n"
		"I  04000011,6\n"
		" S 00003003,6\n"
		" L 00004000,16\n"
		"I  04000017,3\n"
		" M 00006002,4\n"
		"I  0400001a,2\n"
		" S 1ffefffd38,8\n"
		"I  0400001c,2\n"
		"I  0400001e,2\n"
		"==4242== \n"
		"==4242== Counted 1 call to main()\n";
	static const struct cxs_trace_rec want[] = {
		{ .op = CXS_TRACE_LOAD, .size = 8, .addr = 0x1000, .gap = 2 },
		{ .op = CXS_TRACE_LOAD, .size = 4, .addr = 0x2000 },
		{ .op = CXS_TRACE_STORE, .size = 4, .addr = 0x2000 },
		{ .op = CXS_TRACE_STORE, .size = 1, .addr = 0x3003, .gap = 3 },
		{ .op = CXS_TRACE_STORE, .size = 4, .addr = 0x3004 },
		{ .op = CXS_TRACE_STORE, .size = 1, .addr = 0x3008 },
		{ .op = CXS_TRACE_LOAD, .size = 8, .addr = 0x4000 },
		{ .op = CXS_TRACE_LOAD, .size = 8, .addr = 0x4008 },
		{ .op = CXS_TRACE_LOAD, .size = 2, .addr = 0x6002 },
		{ .op = CXS_TRACE_LOAD, .size = 2, .addr = 0x6004 },
		{ .op = CXS_TRACE_STORE, .size = 2, .addr = 0x6002 },
		{ .op = CXS_TRACE_STORE, .size = 2, .addr = 0x6004 },
		{ .op = CXS_TRACE_STORE, .size = 8, .addr = 0x1ffefffd38ull },
	};
	enum { NWANT = sizeof want / sizeof want[0] };
	struct cxs_trace_convert_stats st;
	struct cxs_trace_reader *r;
	struct cxs_trace_rec rec;
	char in[PATH_LEN], out[PATH_LEN], err[ERR_LEN] = "";
	size_t n = 0;
	int rc;

	tpath(in, "sample.lackey");
	tpath(out, "sample.trace");
	write_text(in, text);
	ck_assert_msg(cxs_trace_from_lackey(in, out, 2, NULL, &st, err, sizeof err) == 0, "%s",
		      err);
	ck_assert_uint_eq(st.lines, 23);
	ck_assert_uint_eq(st.instructions, 12);
	ck_assert_uint_eq(st.accesses, 6);
	ck_assert_uint_eq(st.split, 3);
	ck_assert_uint_eq(st.dropped_instructions, 2);
	ck_assert_uint_eq(st.records, NWANT);
	r = cxs_trace_reader_open(out, err, sizeof err);
	ck_assert_msg(r != NULL, "%s", err);
	ck_assert_uint_eq(cxs_trace_reader_core(r), 2);
	while ((rc = cxs_trace_reader_next(r, &rec, err, sizeof err)) == 1) {
		ck_assert_uint_lt(n, NWANT);
		assert_same_rec(&rec, &want[n], n);
		n++;
	}
	ck_assert_msg(rc == 0, "%s", err);
	ck_assert_uint_eq(n, NWANT);
	cxs_trace_reader_close(r);
}
END_TEST

START_TEST(test_lackey_bad_lines)
{
	static const struct {
		const char *line;
		const char *want;
	} bad[] = {
		{ "X  04000000,3", "not a lackey --trace-mem line" },
		{ " L 1000", "not a lackey --trace-mem line" },
		{ " L zz,8", "not a lackey --trace-mem line" },
		{ " L 1000,8 junk", "not a lackey --trace-mem line" },
		{ "L1000,8", "not a lackey --trace-mem line" },
		{ " L 1000,abc", "size after the comma is not a decimal number" },
		{ " L 1000,0", "size 0 is outside 1..1048576" },
		{ " S 1000,2000000", "size 2000000 is outside" },
		{ " L 11112222333344445,8", "is not a hexadecimal number" },
		{ " L fffffffffffffffc,8", "wraps past the end of the address space" },
	};
	char in[PATH_LEN], out[PATH_LEN], err[ERR_LEN], want[PATH_LEN + 16], text[256];

	tpath(in, "bad.lackey");
	tpath(out, "bad.trace");
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(text, sizeof text, "I  04000000,3\n L 1000,8\n%s\n", bad[i].line);
		write_text(in, text);
		err[0] = '\0';
		ck_assert_msg(cxs_trace_from_lackey(in, out, 0, NULL, NULL, err, sizeof err) == -1,
			      "'%s' accepted", bad[i].line);
		snprintf(want, sizeof want, "%s:3: ", in);
		ck_assert_msg(strncmp(err, want, strlen(want)) == 0 &&
			      strstr(err, bad[i].want) != NULL, "'%s': expected '%s' in: %s",
			      bad[i].line, bad[i].want, err);
		ck_assert(!exists(out));
	}
}
END_TEST

/* ------------------------------------------------------ dump and check */

START_TEST(test_dump_from_text_round_trip_is_identical)
{
	enum { N = 5000 };
	struct cxs_trace_rec *recs = malloc(N * sizeof *recs);
	struct cxs_trace_writer_opts o;
	char a[PATH_LEN], txt[PATH_LEN], b[PATH_LEN], err[ERR_LEN] = "", line[128];
	uint64_t seed = 4242;
	size_t alen, blen, lines = 0;
	uint8_t *abuf, *bbuf;
	FILE *f;

	ck_assert_ptr_nonnull(recs);
	for (size_t i = 0; i < N; i++)
		recs[i] = rand_rec(&seed);
	cxs_trace_writer_opts_default(&o);
	o.block_records = 700;
	tpath(a, "a.trace");
	tpath(txt, "a.txt");
	tpath(b, "b.trace");
	write_trace(a, 7, &o, recs, N);
	f = fopen(txt, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_msg(cxs_trace_dump(a, f, 0, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_msg(cxs_trace_from_text(txt, b, 7, &o, NULL, err, sizeof err) == 0, "%s", err);
	abuf = slurp(a, &alen);
	bbuf = slurp(b, &blen);
	ck_assert_uint_eq(alen, blen);
	ck_assert_msg(memcmp(abuf, bbuf, alen) == 0, "dump -> from-text changed the trace");
	free(abuf);
	free(bbuf);

	/* --limit: the comment line and exactly that many records. */
	f = fopen(txt, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(cxs_trace_dump(a, f, 10, err, sizeof err), 0);
	ck_assert_int_eq(fclose(f), 0);
	f = fopen(txt, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof line, f) != NULL) {
		struct cxs_trace_rec r;

		if (lines > 0) {
			ck_assert_int_eq(cxs_trace_parse_text(line, &r, err, sizeof err), 1);
			assert_same_rec(&r, &recs[lines - 1], lines - 1);
		} else {
			ck_assert_msg(line[0] == '#', "first line: %s", line);
		}
		lines++;
	}
	fclose(f);
	ck_assert_uint_eq(lines, 11);
	free(recs);
}
END_TEST

START_TEST(test_check_summary)
{
	static const char text[] =
		"ld 8 0x0 gap=5\nld 4 0x8\nst 2 0x10 gap=1\nfence gap=4\n"
		"lock 0x40\nunlock 0x40\nlock 0x40 gap=10\nunlock 0x40\nbarrier 0x80\n";
	struct cxs_trace_writer_opts o;
	struct cxs_trace_summary s;
	char in[PATH_LEN], out[PATH_LEN], err[ERR_LEN] = "";

	tpath(in, "s.txt");
	tpath(out, "s.trace");
	write_text(in, text);
	cxs_trace_writer_opts_default(&o);
	o.block_records = 4;
	o.level = 0;
	ck_assert_msg(cxs_trace_from_text(in, out, 11, &o, NULL, err, sizeof err) == 0, "%s", err);
	ck_assert_msg(cxs_trace_check(out, &s, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(s.core_id, 11);
	ck_assert_uint_eq(s.records, 9);
	ck_assert_uint_eq(s.blocks, 3);
	ck_assert_uint_eq(s.gap_total, 20);
	ck_assert_uint_eq(s.by_op[CXS_TRACE_LOAD], 2);
	ck_assert_uint_eq(s.by_op[CXS_TRACE_STORE], 1);
	ck_assert_uint_eq(s.by_op[CXS_TRACE_RMW], 0);
	ck_assert_uint_eq(s.by_op[CXS_TRACE_FENCE], 1);
	ck_assert_uint_eq(s.by_op[CXS_TRACE_LOCK], 2);
	ck_assert_uint_eq(s.by_op[CXS_TRACE_UNLOCK], 2);
	ck_assert_uint_eq(s.by_op[CXS_TRACE_BARRIER], 1);
}
END_TEST

Suite *trace_suite(void)
{
	Suite *s = suite_create("trace");
	TCase *fmt = tcase_create("format");
	TCase *dmg = tcase_create("damage");
	TCase *conv = tcase_create("convert");

	tcase_add_unchecked_fixture(fmt, make_tmp_dir, remove_tmp_dir);
	tcase_add_unchecked_fixture(dmg, make_tmp_dir, remove_tmp_dir);
	tcase_add_unchecked_fixture(conv, make_tmp_dir, remove_tmp_dir);
	tcase_add_test(fmt, test_round_trip_100k_many_blocks);
	tcase_add_test(fmt, test_empty_trace_is_valid);
	tcase_add_test(fmt, test_writer_matches_documented_format);
	tcase_add_test(fmt, test_partial_until_close);
	tcase_add_test(fmt, test_close_reports_failed_rename);
	tcase_add_test(fmt, test_writer_rejects_bad_options_and_paths);
	tcase_add_test(fmt, test_invalid_records_rejected_by_writer);
	tcase_add_test(dmg, test_every_truncation_rejected);
	tcase_add_test(dmg, test_bit_flips_in_header_rejected);
	tcase_add_test(dmg, test_bit_flips_in_block_rejected);
	tcase_add_test(dmg, test_bit_flips_in_trailer_rejected);
	tcase_add_test(dmg, test_missing_empty_directory_and_bad_magic);
	tcase_add_test(dmg, test_newer_version_and_unknown_flags_rejected);
	tcase_add_test(dmg, test_invalid_records_rejected_by_reader);
	tcase_add_test(dmg, test_invalid_v2_records_rejected_by_reader);
	tcase_add_test(dmg, test_version1_read_without_v2_fields);
	tcase_add_test(dmg, test_turn_flag_is_version_3s_and_locks_only);
	tcase_add_test(dmg, test_counts_and_block_order_must_agree);
	tcase_add_test(dmg, test_data_after_trailer_rejected);
	tcase_add_test(conv, test_text_good_lines);
	tcase_add_test(conv, test_text_converter_good_file);
	tcase_add_test(conv, test_text_converter_bad_lines);
	tcase_add_test(conv, test_lackey_sample);
	tcase_add_test(conv, test_lackey_bad_lines);
	tcase_add_test(conv, test_dump_from_text_round_trip_is_identical);
	tcase_add_test(conv, test_check_summary);
	suite_add_tcase(s, fmt);
	suite_add_tcase(s, dmg);
	suite_add_tcase(s, conv);
	return s;
}
