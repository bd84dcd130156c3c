/*
 * log_format.c — what a Logging Unit compresses and dumps to an MN (DIKTAMO
 * §IV-E), and the compression around it.
 *
 * Record stream (version 2). Little-endian, written field by field (never
 * memcpy'd from a struct, so the host's layout and padding never reach a
 * byte on the wire):
 *
 *   header, 24 bytes
 *     0  magic         4   "DKLG"
 *     4  version       2   2
 *     6  record_bytes  2   32
 *     8  count         8   records that follow
 *    16  crc32         4   zlib crc32 of the records
 *    20  reserved      4   0
 *   count records, 32 bytes each, stored byte-plane: all records' byte 0,
 *   then all records' byte 1, ..., byte 31 (see "Byte planes" below)
 *     0  addr          8   word address
 *     8  requester     4   CN << 8 | core
 *    12  ts            1   the VAL's 7-bit TS (bit 7 is 0)
 *    13  reserved      3   0
 *    16  value         8
 *    24  stamp         8   coherence order of the write (diktamo.h)
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
 * Decoding refuses anything but exactly this: a wrong magic, version or
 * record size, a count that does not match the length (truncated or with
 * trailing bytes), a checksum mismatch, a set reserved bit or TS bit 7. The
 * crc32 catches corruption that still parses, which the compressed path
 * would also catch (zlib's adler32) but a raw stream would not.
 *
 * Compression is zlib's deflate (compress2/uncompress2 in zlib format, from
 * Debian's zlib1g, already a dependency of the trace reader): the paper
 * compresses with gzip -9 (§IV-E), which is the same deflate at the same
 * levels, so the compression factor measured here is the paper's quantity;
 * the gzip wrapper's 18 bytes would only add a file name and a time stamp
 * that a log chunk does not have. The level is cxs_lu_params.zlib_level (9).
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "cxlsim/diktamo.h"

#define LOG_MAGIC "DKLG"
#define LOG_VERSION 2

/* The layouts, for offsetof() and the asserts that pin the table above. */
struct log_header {
	char magic[4];
	uint16_t version;
	uint16_t record_bytes;
	uint64_t count;
	uint32_t crc32;
	uint32_t reserved;
};
_Static_assert(sizeof(struct log_header) == 24, "log header is 24 bytes");
_Static_assert(offsetof(struct log_header, count) == 8, "count at 8");
_Static_assert(offsetof(struct log_header, crc32) == 16, "crc32 at 16");

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

#define HEADER_BYTES sizeof(struct log_header)
#define RECORD_BYTES sizeof(struct log_record)

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

/* crc32 over any length (zlib's takes a uInt length). */
static uint32_t crc_of(const unsigned char *p, size_t n)
{
	uLong crc = crc32(0L, Z_NULL, 0);
	while (n > 0) {
		uInt step = n > (1u << 30) ? (1u << 30) : (uInt)n;
		crc = crc32(crc, p, step);
		p += step;
		n -= step;
	}
	return (uint32_t)crc;
}

int cxs_dk_log_encode(const struct cxs_dk_entry *e, size_t n, unsigned char **out, size_t *len)
{
	size_t count = 0;
	for (size_t i = 0; i < n; i++)
		count += e[i].valid != 0;
	if (count > (SIZE_MAX - HEADER_BYTES) / RECORD_BYTES)
		return -1;
	size_t bytes = HEADER_BYTES + count * RECORD_BYTES;
	unsigned char *b = malloc(bytes);
	unsigned char *rows = malloc(count ? count * RECORD_BYTES : 1);
	if (b == NULL || rows == NULL) {
		free(b);
		free(rows);
		return -1;
	}
	unsigned char *r = rows;
	for (size_t i = 0; i < n; i++) {
		if (!e[i].valid)
			continue;
		put_le(r + offsetof(struct log_record, addr), e[i].addr, 8);
		put_le(r + offsetof(struct log_record, value), e[i].value, 8);
		put_le(r + offsetof(struct log_record, stamp), e[i].stamp, 8);
		put_le(r + offsetof(struct log_record, requester), e[i].requester, 4);
		r[offsetof(struct log_record, ts)] = e[i].ts & 0x7f;
		memset(r + offsetof(struct log_record, reserved), 0, 3);
		r += RECORD_BYTES;
	}
	/* Byte planes: byte j of record i at j * count + i. */
	unsigned char *body = b + HEADER_BYTES;
	for (size_t i = 0; i < count; i++)
		for (size_t j = 0; j < RECORD_BYTES; j++)
			body[j * count + i] = rows[i * RECORD_BYTES + j];
	free(rows);
	memcpy(b, LOG_MAGIC, 4);
	put_le(b + offsetof(struct log_header, version), LOG_VERSION, 2);
	put_le(b + offsetof(struct log_header, record_bytes), RECORD_BYTES, 2);
	put_le(b + offsetof(struct log_header, count), count, 8);
	put_le(b + offsetof(struct log_header, crc32), crc_of(b + HEADER_BYTES, bytes - HEADER_BYTES),
	       4);
	put_le(b + offsetof(struct log_header, reserved), 0, 4);
	*out = b;
	*len = bytes;
	return 0;
}

int cxs_dk_log_decode(const unsigned char *in, size_t len, struct cxs_dk_entry **e, size_t *n,
		      char *err, size_t errlen)
{
	*e = NULL;
	*n = 0;
	if (len < HEADER_BYTES) {
		snprintf(err, errlen, "DIKTAMO log: %zu bytes, shorter than its %zu-byte header", len,
			 (size_t)HEADER_BYTES);
		return -1;
	}
	if (memcmp(in, LOG_MAGIC, 4) != 0) {
		snprintf(err, errlen, "DIKTAMO log: bad magic (not a log)");
		return -1;
	}
	uint64_t version = get_le(in + offsetof(struct log_header, version), 2);
	uint64_t rec = get_le(in + offsetof(struct log_header, record_bytes), 2);
	uint64_t count = get_le(in + offsetof(struct log_header, count), 8);
	uint32_t crc = (uint32_t)get_le(in + offsetof(struct log_header, crc32), 4);
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
	if (get_le(in + offsetof(struct log_header, reserved), 4) != 0) {
		snprintf(err, errlen, "DIKTAMO log: reserved header field is not 0 (corrupt)");
		return -1;
	}
	size_t body = len - HEADER_BYTES;
	if (body % RECORD_BYTES != 0 || count != body / RECORD_BYTES) {
		snprintf(err, errlen,
			 "DIKTAMO log: header says %" PRIu64 " records, %zu bytes follow "
			 "(truncated or corrupt)",
			 count, body);
		return -1;
	}
	if (crc_of(in + HEADER_BYTES, body) != crc) {
		snprintf(err, errlen, "DIKTAMO log: checksum mismatch over %" PRIu64 " records (corrupt)",
			 count);
		return -1;
	}
	struct cxs_dk_entry *out = calloc(count ? count : 1, sizeof *out);
	unsigned char *rows = malloc(count ? body : 1);
	if (out == NULL || rows == NULL) {
		snprintf(err, errlen, "DIKTAMO log: out of memory for %" PRIu64 " entries", count);
		free(out);
		free(rows);
		return -1;
	}
	const unsigned char *planes = in + HEADER_BYTES;
	for (size_t j = 0; j < RECORD_BYTES; j++)
		for (size_t i = 0; i < count; i++)
			rows[i * RECORD_BYTES + j] = planes[j * count + i];
	const unsigned char *r = rows;
	for (size_t i = 0; i < count; i++, r += RECORD_BYTES) {
		uint8_t ts = r[offsetof(struct log_record, ts)];
		const unsigned char *res = r + offsetof(struct log_record, reserved);
		if ((ts & 0x80) || res[0] || res[1] || res[2]) {
			snprintf(err, errlen, "DIKTAMO log: record %zu has reserved bits set (corrupt)",
				 i);
			free(out);
			free(rows);
			return -1;
		}
		out[i].addr = get_le(r + offsetof(struct log_record, addr), 8);
		out[i].value = get_le(r + offsetof(struct log_record, value), 8);
		out[i].stamp = get_le(r + offsetof(struct log_record, stamp), 8);
		out[i].requester = (uint32_t)get_le(r + offsetof(struct log_record, requester), 4);
		out[i].ts = ts;
		out[i].valid = 1;
	}
	free(rows);
	*e = out;
	*n = count;
	return 0;
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
