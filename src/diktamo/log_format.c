/*
 * log_format.c — what a Logging Unit compresses and dumps to an MN (DIKTAMO
 * §IV-E), and the compression around it.
 *
 * Record stream (version 3). Little-endian, written field by field (never
 * memcpy'd from a struct, so the host's layout and padding never reach a
 * byte on the wire):
 *
 *   segments of CXS_DK_LOG_SEGMENT records (the last one shorter, or none
 *   when there are no records), each in byte planes (below): a segment of m
 *   records is m bytes of every record's byte 0, then m of byte 1, ..., byte 31
 *   records, 32 bytes each
 *     0  addr          8   word address
 *     8  requester     4   CN << 8 | core
 *    12  ts            1   the VAL's 7-bit TS (bit 7 is 0)
 *    13  reserved      3   0
 *    16  value         8
 *    24  stamp         8   coherence order of the write (diktamo.h)
 *   trailer, 32 bytes
 *     0  magic         4   "DKLG"
 *     4  version       2   3
 *     6  record_bytes  2   32
 *     8  count         8   records before it
 *    16  crc32         4   zlib crc32 of the segments
 *    20  segment       4   records per segment
 *    24  reserved      8   0
 *
 * A record is wider than the 24 bytes an entry takes in the SRAM Log Buffer
 * (CXS_DK_ENTRY_BYTES) so that no field is ever truncated: the SRAM layout's
 * 2-byte write count passes 2^16 when a line stays owned through that many
 * writes, and a truncated stamp would make recovery pick a wrong "latest"
 * version. The field order is chosen for deflate: what repeats from one
 * record to the next (the address but its low byte, the requester, the
 * reserved bytes) is adjacent, and the value, which carries most of the
 * entropy, sits next to the stamp. On the streams of tests/bench/dk_compress.c
 * at level 9 (64-thread Jacobi sweeps and integer rewrites, grid 256, 4
 * sweeps) this order compresses to 6.3x and 4.5x the 24-byte entries where
 * the order addr, value, stamp, requester, ts compressed to 4.0x and 3.2x.
 * The REPL number is not kept: it names a REPL only while its VAL is
 * awaited. Only VALed entries are logged, so there is no valid bit; decoded
 * entries come back with valid = 1 and repl = 0.
 *
 * Byte planes. The records are transposed before they are compressed, as
 * HDF5's shuffle filter does before its deflate and for the same reason:
 * what repeats from one record to the next (the high bytes of addresses,
 * values and stamps, the requester, the zero bytes) becomes long runs, which
 * deflate matches at full length at once. At level 9 on records laid side by
 * side deflate spends its time walking 4096-long hash chains of near matches
 * (1.2–2.4 MB/s on the streams of tests/bench/dk_compress.c; a quarter of a
 * DIKTAMO run's wall time went to it) for the same factor level 6 reaches;
 * byte planes compress faster by far and smaller. Version 1 (records side
 * by side) is what the bench still measures, for the paper's comparison: a
 * gzip -9 of a log written as records is what the paper's 5.8x is.
 *
 * Segments and the trailer (version 3; version 2 transposed a whole chunk
 * and led with a header holding the count and checksum). The paper's unit
 * compresses "as [the data] is being deposited into the DRAM buffer" (§VII,
 * Log Size), and so does ours (log_unit.c, "Streams"): a chunk is one deflate
 * stream fed a segment at a time as the drain fills them, finished at the
 * dump. Planes of a whole chunk cannot be written before its last record is
 * known, nor a count or checksum placed in front of them, so the planes are
 * per segment and the count and checksum come last. A segment's planes are
 * 512 bytes long, and deflate's 32 KB window reaches the same plane of the
 * previous segment, so the runs and matches that byte planes give are kept:
 * on the 16 x 4 ocean_cp 128 proactive run the chunks compress to 7.55x
 * against version 2's 7.77x. cxs_dk_log_encode writes the same stream in one
 * piece (tests, the bench); a writer (cxs_dk_writer_*) produces its deflate
 * stream segment by segment.
 *
 * Decoding refuses anything but exactly this: a wrong magic, version, record
 * or segment size, a count that does not match the length (truncated or with
 * trailing bytes), a checksum mismatch, a set reserved bit or TS bit 7. The
 * crc32 catches corruption that still parses, which the compressed path
 * would also catch (zlib's adler32) but a raw stream would not.
 *
 * Compression is zlib's deflate (Debian's zlib1g, already a dependency of the
 * trace reader): the paper compresses with gzip -9 (§IV-E), which is the same
 * deflate at the same levels with the same window and memory (compress2's
 * defaults, which the writer uses too), so the compression factor measured
 * here is the paper's quantity; the gzip wrapper's 18 bytes would only add a
 * file name and a time stamp that a log chunk does not have. A writer's bytes
 * are a function of its segments and level alone: the same calls in the same
 * order, on whichever thread (zpool.c). The level is
 * cxs_lu_params.zlib_level (9).
 */
#include <assert.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "cxlsim/diktamo.h"

#define LOG_MAGIC "DKLG"
#define LOG_VERSION 3
#define SEG CXS_DK_LOG_SEGMENT

/* The layouts, for offsetof() and the asserts that pin the table above. */
struct log_trailer {
	char magic[4];
	uint16_t version;
	uint16_t record_bytes;
	uint64_t count;
	uint32_t crc32;
	uint32_t segment;
	uint64_t reserved;
};
_Static_assert(sizeof(struct log_trailer) == 32, "log trailer is 32 bytes");
_Static_assert(offsetof(struct log_trailer, count) == 8, "count at 8");
_Static_assert(offsetof(struct log_trailer, crc32) == 16, "crc32 at 16");
_Static_assert(offsetof(struct log_trailer, segment) == 20, "segment at 20");
_Static_assert(offsetof(struct log_trailer, reserved) == 24, "reserved at 24");

struct log_record {
	uint64_t addr;
	uint32_t requester;
	uint8_t ts;
	uint8_t reserved[3];
	uint64_t value;
	uint64_t stamp;
};
_Static_assert(sizeof(struct log_record) == 32, "log record is 32 bytes");
_Static_assert(offsetof(struct log_record, requester) == 8, "requester at 8");
_Static_assert(offsetof(struct log_record, ts) == 12, "ts at 12");
_Static_assert(offsetof(struct log_record, reserved) == 13, "reserved at 13");
_Static_assert(offsetof(struct log_record, value) == 16, "value at 16");
_Static_assert(offsetof(struct log_record, stamp) == 24, "stamp at 24");

#define TRAILER_BYTES sizeof(struct log_trailer)
#define RECORD_BYTES sizeof(struct log_record)
_Static_assert(TRAILER_BYTES == CXS_DK_LOG_TRAILER_BYTES, "trailer size in diktamo.h");
_Static_assert(RECORD_BYTES == CXS_DK_LOG_RECORD_BYTES, "record size in diktamo.h");

static void put_le(unsigned char *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* crc32 continued over any length (zlib's takes a uInt length). */
static uint32_t crc_more(uint32_t crc, const unsigned char *p, size_t n)
{
	uLong c = crc;
	while (n > 0) {
		uInt step = n > (1u << 30) ? (1u << 30) : (uInt)n;
		c = crc32(c, p, step);
		p += step;
		n -= step;
	}
	return (uint32_t)c;
}

static uint32_t crc_start(void)
{
	return (uint32_t)crc32(0L, Z_NULL, 0);
}

/*
 * One segment: the m valid entries of e[0..n) in byte planes at out
 * (m x RECORD_BYTES bytes; the caller counted m). Byte j of record i at j x m + i.
 */
static void put_segment(const struct cxs_dk_entry *e, size_t n, size_t m, unsigned char *out)
{
	size_t i = 0;
	for (size_t k = 0; k < n; k++) {
		if (!e[k].valid)
			continue;
		unsigned char r[RECORD_BYTES];
		put_le(r + offsetof(struct log_record, addr), e[k].addr, 8);
		put_le(r + offsetof(struct log_record, requester), e[k].requester, 4);
		r[offsetof(struct log_record, ts)] = e[k].ts & 0x7f;
		memset(r + offsetof(struct log_record, reserved), 0, 3);
		put_le(r + offsetof(struct log_record, value), e[k].value, 8);
		put_le(r + offsetof(struct log_record, stamp), e[k].stamp, 8);
		for (size_t j = 0; j < RECORD_BYTES; j++)
			out[j * m + i] = r[j];
		i++;
	}
}

static void put_trailer(unsigned char *t, uint64_t count, uint32_t crc)
{
	memcpy(t, LOG_MAGIC, 4);
	put_le(t + offsetof(struct log_trailer, version), LOG_VERSION, 2);
	put_le(t + offsetof(struct log_trailer, record_bytes), RECORD_BYTES, 2);
	put_le(t + offsetof(struct log_trailer, count), count, 8);
	put_le(t + offsetof(struct log_trailer, crc32), crc, 4);
	put_le(t + offsetof(struct log_trailer, segment), SEG, 4);
	put_le(t + offsetof(struct log_trailer, reserved), 0, 8);
}

int cxs_dk_log_encode(const struct cxs_dk_entry *e, size_t n, unsigned char **out, size_t *len)
{
	size_t count = 0;
	for (size_t i = 0; i < n; i++)
		count += e[i].valid != 0;
	if (count > (SIZE_MAX - TRAILER_BYTES) / RECORD_BYTES)
		return -1;
	size_t body = count * RECORD_BYTES;
	unsigned char *b = malloc(body + TRAILER_BYTES);
	if (b == NULL)
		return -1;
	/* Segments of SEG valid entries each. */
	size_t k = 0, at = 0;
	while (at < count) {
		size_t m = count - at < SEG ? count - at : SEG, from = k;
		for (size_t got = 0; got < m; k++)
			got += e[k].valid != 0;
		put_segment(e + from, k - from, m, b + at * RECORD_BYTES);
		at += m;
	}
	put_trailer(b + body, count, crc_more(crc_start(), b, body));
	*out = b;
	*len = body + TRAILER_BYTES;
	return 0;
}

int cxs_dk_log_decode(const unsigned char *in, size_t len, struct cxs_dk_entry **e, size_t *n,
		      char *err, size_t errlen)
{
	*e = NULL;
	*n = 0;
	if (len < TRAILER_BYTES) {
		snprintf(err, errlen, "DIKTAMO log: %zu bytes, shorter than its %zu-byte trailer", len,
			 (size_t)TRAILER_BYTES);
		return -1;
	}
	size_t body = len - TRAILER_BYTES;
	const unsigned char *t = in + body;
	if (memcmp(t, LOG_MAGIC, 4) != 0) {
		snprintf(err, errlen, "DIKTAMO log: bad magic (not a log, or truncated)");
		return -1;
	}
	uint64_t version = get_le(t + offsetof(struct log_trailer, version), 2);
	uint64_t rec = get_le(t + offsetof(struct log_trailer, record_bytes), 2);
	uint64_t count = get_le(t + offsetof(struct log_trailer, count), 8);
	uint32_t crc = (uint32_t)get_le(t + offsetof(struct log_trailer, crc32), 4);
	uint64_t seg = get_le(t + offsetof(struct log_trailer, segment), 4);
	if (version != LOG_VERSION) {
		snprintf(err, errlen, "DIKTAMO log: version %" PRIu64 ", this build reads %d", version,
			 LOG_VERSION);
		return -1;
	}
	if (rec != RECORD_BYTES) {
		snprintf(err, errlen, "DIKTAMO log: %" PRIu64 "-byte records, expected %zu", rec,
			 (size_t)RECORD_BYTES);
		return -1;
	}
	if (seg != SEG) {
		snprintf(err, errlen, "DIKTAMO log: %" PRIu64 "-record segments, expected %d", seg,
			 SEG);
		return -1;
	}
	if (get_le(t + offsetof(struct log_trailer, reserved), 8) != 0) {
		snprintf(err, errlen, "DIKTAMO log: reserved trailer field is not 0 (corrupt)");
		return -1;
	}
	if (body % RECORD_BYTES != 0 || count != body / RECORD_BYTES) {
		snprintf(err, errlen,
			 "DIKTAMO log: trailer says %" PRIu64 " records, %zu bytes precede it "
			 "(truncated or corrupt)",
			 count, body);
		return -1;
	}
	if (crc_more(crc_start(), in, body) != crc) {
		snprintf(err, errlen, "DIKTAMO log: checksum mismatch over %" PRIu64 " records (corrupt)",
			 count);
		return -1;
	}
	struct cxs_dk_entry *out = calloc(count ? count : 1, sizeof *out);
	if (out == NULL) {
		snprintf(err, errlen, "DIKTAMO log: out of memory for %" PRIu64 " entries", count);
		return -1;
	}
	for (size_t i = 0; i < count; i++) {
		size_t s0 = i / SEG * SEG, m = count - s0 < SEG ? count - s0 : SEG;
		const unsigned char *planes = in + s0 * RECORD_BYTES;
		size_t at = i - s0;
		unsigned char r[RECORD_BYTES];
		for (size_t j = 0; j < RECORD_BYTES; j++)
			r[j] = planes[j * m + at];
		uint8_t ts = r[offsetof(struct log_record, ts)];
		const unsigned char *res = r + offsetof(struct log_record, reserved);
		if ((ts & 0x80) || res[0] || res[1] || res[2]) {
			snprintf(err, errlen, "DIKTAMO log: record %zu has reserved bits set (corrupt)",
				 i);
			free(out);
			return -1;
		}
		out[i].addr = get_le(r + offsetof(struct log_record, addr), 8);
		out[i].value = get_le(r + offsetof(struct log_record, value), 8);
		out[i].stamp = get_le(r + offsetof(struct log_record, stamp), 8);
		out[i].requester = (uint32_t)get_le(r + offsetof(struct log_record, requester), 4);
		out[i].ts = ts;
		out[i].valid = 1;
	}
	*e = out;
	*n = count;
	return 0;
}

/* ---- a chunk's deflate stream, a segment at a time -------------------------------- */

struct cxs_dk_writer {
	z_stream z;
	bool open;       /* deflateInit2 done */
	int level;
	uint64_t count;  /* records fed */
	uint32_t crc;    /* of the segments fed */
	bool failed;
	unsigned char *out;
	size_t out_len, out_cap;
	unsigned char planes[SEG * RECORD_BYTES]; /* the segment being deflated */
};

struct cxs_dk_writer *cxs_dk_writer_new(int level)
{
	if (level < Z_DEFAULT_COMPRESSION || level > Z_BEST_COMPRESSION)
		return NULL;
	struct cxs_dk_writer *w = calloc(1, sizeof *w);
	if (w == NULL)
		return NULL;
	w->level = level;
	w->crc = crc_start();
	return w;
}

void cxs_dk_writer_free(struct cxs_dk_writer *w)
{
	if (w == NULL)
		return;
	if (w->open)
		deflateEnd(&w->z);
	free(w->out);
	free(w);
}

/* Deflates in[0..n) with flush; grows the output as it fills. */
static void feed(struct cxs_dk_writer *w, const unsigned char *in, size_t n, int flush)
{
	if (w->failed)
		return;
	if (!w->open) {
		/* compress2's window and memory (zlib's defaults): the paper's gzip -9. */
		if (deflateInit2(&w->z, w->level, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
			w->failed = true;
			return;
		}
		w->open = true;
	}
	w->z.next_in = (unsigned char *)in;
	w->z.avail_in = (uInt)n;
	for (;;) {
		if (w->out_cap - w->out_len < 4096) {
			size_t cap = w->out_cap ? 2 * w->out_cap : 16384;
			unsigned char *b = realloc(w->out, cap);
			if (b == NULL) {
				w->failed = true;
				return;
			}
			w->out = b;
			w->out_cap = cap;
		}
		w->z.next_out = w->out + w->out_len;
		w->z.avail_out = (uInt)(w->out_cap - w->out_len);
		int rc = deflate(&w->z, flush);
		w->out_len = (size_t)(w->z.next_out - w->out);
		if (rc == Z_STREAM_END)
			return;
		if (rc != Z_OK && rc != Z_BUF_ERROR) {
			w->failed = true;
			return;
		}
		if (flush == Z_NO_FLUSH && w->z.avail_in == 0 && w->z.avail_out > 0)
			return;
	}
}

int cxs_dk_writer_add(struct cxs_dk_writer *w, const struct cxs_dk_entry *e, size_t n)
{
	assert(n <= SEG && w->count % SEG == 0); /* only the last segment is short */
	for (size_t i = 0; i < n; i++)
		assert(e[i].valid);
	if (n == 0)
		return w->failed ? -1 : 0;
	put_segment(e, n, n, w->planes);
	w->crc = crc_more(w->crc, w->planes, n * RECORD_BYTES);
	w->count += n;
	feed(w, w->planes, n * RECORD_BYTES, Z_NO_FLUSH);
	return w->failed ? -1 : 0;
}

int cxs_dk_writer_finish(struct cxs_dk_writer *w, unsigned char **out, size_t *len,
			 size_t *raw_len)
{
	unsigned char t[TRAILER_BYTES];
	put_trailer(t, w->count, w->crc);
	feed(w, t, sizeof t, Z_FINISH);
	if (w->failed)
		return -1;
	unsigned char *shrunk = realloc(w->out, w->out_len ? w->out_len : 1);
	*out = shrunk ? shrunk : w->out;
	*len = w->out_len;
	*raw_len = (size_t)w->count * RECORD_BYTES + TRAILER_BYTES;
	w->out = NULL;
	w->out_len = w->out_cap = 0;
	/* Ready for the next chunk: the stream's memory is kept. */
	if (deflateReset(&w->z) != Z_OK)
		w->failed = true;
	w->count = 0;
	w->crc = crc_start();
	return w->failed ? -1 : 0;
}

void cxs_dk_writer_reset(struct cxs_dk_writer *w)
{
	if (w->open && deflateReset(&w->z) != Z_OK) {
		deflateEnd(&w->z);
		w->open = false;
	}
	w->failed = false;
	w->count = 0;
	w->crc = crc_start();
	w->out_len = 0;
}

uint64_t cxs_dk_writer_count(const struct cxs_dk_writer *w)
{
	return w->count;
}

int cxs_dk_compress(const unsigned char *in, size_t len, int level, unsigned char **out,
		    size_t *outlen)
{
	if (level < Z_DEFAULT_COMPRESSION || level > Z_BEST_COMPRESSION || len > (uLong)-1 / 2)
		return -1;
	uLong cap = compressBound((uLong)len);
	unsigned char *b = malloc(cap);
	if (b == NULL)
		return -1;
	uLongf got = cap;
	if (compress2(b, &got, in, (uLong)len, level) != Z_OK) {
		free(b);
		return -1;
	}
	unsigned char *shrunk = realloc(b, got ? got : 1);
	*out = shrunk ? shrunk : b;
	*outlen = got;
	return 0;
}

int cxs_dk_inflate(const unsigned char *in, size_t len, size_t raw_len, unsigned char **out,
		   char *err, size_t errlen)
{
	*out = NULL;
	if (len > (uLong)-1 || raw_len >= (uLong)-1) {
		snprintf(err, errlen, "compressed DIKTAMO log: %zu -> %zu bytes is too large", len,
			 raw_len);
		return -1;
	}
	/* One byte more than promised, so that a stream longer than raw_len shows as such. */
	unsigned char *b = malloc(raw_len + 1);
	if (b == NULL) {
		snprintf(err, errlen, "compressed DIKTAMO log: out of memory for %zu bytes", raw_len);
		return -1;
	}
	uLongf got = raw_len + 1;
	uLong used = len;
	int rc = uncompress2(b, &got, in, &used);
	const char *why = NULL;
	if (rc == Z_DATA_ERROR)
		why = "corrupt or truncated";
	else if (rc == Z_MEM_ERROR)
		why = "out of memory";
	else if (got > raw_len)
		why = "inflates to more bytes than stated";
	else if (rc != Z_OK)
		why = "truncated";
	else if (got != raw_len)
		why = "inflates to fewer bytes than stated";
	else if (used != len)
		why = "trailing bytes after the compressed stream";
	if (why != NULL) {
		snprintf(err, errlen, "compressed DIKTAMO log (%zu bytes, %zu stated): %s", len,
			 raw_len, why);
		free(b);
		return -1;
	}
	*out = b;
	return 0;
}
