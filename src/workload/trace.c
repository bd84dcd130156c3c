/*
 * trace.c — per-core memory traces: writer, reader, text form, converters
 * (the format and the contract are in include/cxlsim/trace.h).
 *
 * Writer
 * ------
 * Records are encoded into a block buffer of block_records * 28 bytes; when it
 * is full the block is compressed with compress2() into a second buffer of
 * compressBound() bytes and written with its header. Memory is therefore two
 * buffers, whatever the trace length. The file header goes out first with a
 * record count of 0 and is rewritten by close, after the trailer, so the
 * "<path>.partial" file is never a valid trace until close has renamed it:
 *
 *   open ----> append* ----> close: last block, trailer, header again,
 *     |           |                  fflush, fsync, fclose, rename
 *     +-----------+-- any error: sticky; close or abort unlinks .partial
 *
 * Reader
 * ------
 * open checks the header (magic, then version so that a newer file is named
 * as such, then the header CRC, then the fields) and, for a regular file, the
 * trailer at the end, so that a trace whose writer never finished is refused
 * at once. next then streams: it loads one block (header CRC, sizes within
 * the bounds the file header allows, CRC of the compressed bytes, zlib
 * stream, exact sizes, CRC of the records),
 * checks each record as it hands it out, and at the trailer checks the block
 * count, the record counts (header, trailer, blocks) and the CRC over the
 * block CRCs, and that nothing follows. Everything the reader trusts from the
 * file is bounded before use: raw_bytes by block_records times the record
 * size, comp_bytes by compressBound of that, so a damaged size never drives
 * an allocation. Version 1 files (24-byte records) are read as version 2
 * records without flags or dependencies, version 2 files as version 3
 * records without the turn flag; the writer writes only version 3.
 *
 * Invariants of struct cxs_trace_reader while state == RD_OK:
 *   pos <= nraw <= block_records;
 *   off is the file offset of the next unread byte;
 *   in_blocks = records in blocks 1..block_no <= hdr_count.
 *
 * Positions in messages are "byte N" (file offset from 0), "block N" and
 * "record N" (both counted from 1, records over the whole trace).
 *
 * Converters
 * ----------
 * from-text and from-lackey read their input with getline, so line length is
 * unbounded; they write through the writer and abort it on any error, which
 * removes the .partial file, so a failed conversion leaves no output at all.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <zlib.h>

#include "cxlsim/errmsg.h"
#include "cxlsim/trace.h"

/* ------------------------------------------------------- on-disk layouts */

/*
 * Byte arrays only, so these structs have no padding and their sizes are the
 * on-disk sizes; fields are encoded little-endian by put_le / get_le, never by
 * copying integers, so the format does not depend on the host.
 */
struct disk_header {
	uint8_t magic[8];
	uint8_t version[2];
	uint8_t header_bytes[2];
	uint8_t flags[4];
	uint8_t core_id[4];
	uint8_t block_records[4];
	uint8_t record_count[8];
	uint8_t reserved[4];
	uint8_t header_crc[4];
};

struct disk_block_header {
	uint8_t raw_bytes[4];
	uint8_t comp_bytes[4];
	uint8_t raw_crc[4];
	uint8_t comp_crc[4];
	uint8_t header_crc[4];
};

/* Version 2's record; version 1's is its first 24 bytes with flags and reserved 0. */
struct disk_rec {
	uint8_t op;
	uint8_t size;
	uint8_t flags;
	uint8_t reserved;
	uint8_t gap[4];
	uint8_t addr[8];
	uint8_t value[8];
	uint8_t addr_dep[2];
	uint8_t value_dep[2];
};

struct disk_trailer {
	uint8_t end_marker[4];
	uint8_t block_count[4];
	uint8_t record_count[8];
	uint8_t blocks_crc[4];
	uint8_t trailer_crc[4];
};

_Static_assert(sizeof(struct disk_header) == CXS_TRACE_HEADER_BYTES, "file header is 40 bytes");
_Static_assert(offsetof(struct disk_header, record_count) == 24, "record_count at byte 24");
_Static_assert(offsetof(struct disk_header, header_crc) == 36, "header_crc at byte 36");
_Static_assert(sizeof(struct disk_block_header) == CXS_TRACE_BLOCK_HEADER_BYTES,
	       "block header is 20 bytes");
_Static_assert(sizeof(struct disk_rec) == CXS_TRACE_REC_BYTES, "record is 28 bytes");
_Static_assert(offsetof(struct disk_rec, gap) == 4 && offsetof(struct disk_rec, addr) == 8 &&
	       offsetof(struct disk_rec, value) == 16 && offsetof(struct disk_rec, addr_dep) == 24 &&
	       offsetof(struct disk_rec, value_dep) == 26, "record field offsets");
_Static_assert(offsetof(struct disk_rec, addr_dep) == CXS_TRACE_REC_BYTES_V1,
	       "a version 1 record is the first 24 bytes of a version 2 record");
_Static_assert(sizeof(struct disk_trailer) == CXS_TRACE_TRAILER_BYTES, "trailer is 24 bytes");
_Static_assert(offsetof(struct disk_trailer, trailer_crc) == 20, "trailer_crc at byte 20");
_Static_assert(sizeof(CXS_TRACE_MAGIC) - 1 == sizeof(((struct disk_header *)0)->magic),
	       "magic is 8 bytes");
/* The largest block and its zlib bound must fit zlib's uInt and our u32 sizes. */
_Static_assert((uint64_t)CXS_TRACE_MAX_BLOCK_RECORDS * CXS_TRACE_REC_BYTES < UINT32_MAX / 2,
	       "block sizes fit in 32 bits");

enum { HEADER_CRC_SPAN = offsetof(struct disk_header, header_crc),
       BLOCK_CRC_SPAN = offsetof(struct disk_block_header, header_crc),
       TRAILER_CRC_SPAN = offsetof(struct disk_trailer, trailer_crc) };

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t get_le32(const uint8_t *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static uint32_t crc_of(const void *p, size_t n)
{
	return (uint32_t)crc32(0L, (const Bytef *)p, (uInt)n);
}

/* Folds one block's CRC into the running CRC over block CRCs (trailer). */
static uint32_t chain_block_crc(uint32_t acc, uint32_t block_crc)
{
	uint8_t b[4];

	put_le32(b, block_crc);
	return (uint32_t)crc32(acc, b, 4);
}

static void copy_err(char *err, size_t errlen, const char *msg)
{
	cxs_set_err(err, errlen, "%s", msg);
}

static void encode_rec(uint8_t *p, const struct cxs_trace_rec *r)
{
	struct disk_rec *d = (struct disk_rec *)p;

	d->op = r->op;
	d->size = r->size;
	d->flags = r->flags;
	d->reserved = 0;
	put_le32(d->gap, r->gap);
	put_le64(d->addr, r->addr);
	put_le64(d->value, r->value);
	put_le16(d->addr_dep, r->addr_dep);
	put_le16(d->value_dep, r->value_dep);
}

/*
 * Decodes a record of the given version. Returns the bytes that must be 0
 * (version 1: bytes 2..3; versions 2 and 3: byte 3) for the caller to check.
 */
static unsigned decode_rec(const uint8_t *p, unsigned version, struct cxs_trace_rec *r)
{
	const struct disk_rec *d = (const struct disk_rec *)p;

	r->op = d->op;
	r->size = d->size;
	r->gap = get_le32(d->gap);
	r->addr = get_le64(d->addr);
	r->value = get_le64(d->value);
	if (version == 1) {
		r->flags = 0;
		r->addr_dep = r->value_dep = 0;
		return (unsigned)d->flags | (unsigned)d->reserved << 8;
	}
	r->flags = d->flags;
	r->addr_dep = get_le16(d->addr_dep);
	r->value_dep = get_le16(d->value_dep);
	return d->reserved;
}

/* ------------------------------------------------------------ the record */

static const char *const op_names[CXS_TRACE_OP_MAX + 1] = {
	[CXS_TRACE_LOAD] = "ld",       [CXS_TRACE_STORE] = "st",   [CXS_TRACE_RMW] = "rmw",
	[CXS_TRACE_FENCE] = "fence",   [CXS_TRACE_LOCK] = "lock",  [CXS_TRACE_UNLOCK] = "unlock",
	[CXS_TRACE_BARRIER] = "barrier", [CXS_TRACE_POST] = "post", [CXS_TRACE_WAIT] = "wait",
	[CXS_TRACE_CHECK] = "check",
};

static const char *const where_names[CXS_TRACE_WHERE_MAX + 1] = {
	[CXS_TRACE_WHERE_UNKNOWN] = "unknown", [CXS_TRACE_WHERE_HEAP] = "heap",
	[CXS_TRACE_WHERE_STACK] = "stack",     [CXS_TRACE_WHERE_GLOBAL] = "global",
	[CXS_TRACE_WHERE_OTHER] = "other",
};

const char *cxs_trace_where_name(unsigned where)
{
	return where <= CXS_TRACE_WHERE_MAX ? where_names[where] : NULL;
}

const char *cxs_trace_op_name(unsigned op)
{
	return op >= 1 && op <= CXS_TRACE_OP_MAX ? op_names[op] : NULL;
}

/* Ops with a size and an address of their own data (check included). */
static bool is_data_op(unsigned op)
{
	return op == CXS_TRACE_LOAD || op == CXS_TRACE_STORE || op == CXS_TRACE_RMW ||
	       op == CXS_TRACE_CHECK;
}

static bool is_sync_op(unsigned op)
{
	return op == CXS_TRACE_LOCK || op == CXS_TRACE_UNLOCK || op == CXS_TRACE_BARRIER ||
	       op == CXS_TRACE_POST || op == CXS_TRACE_WAIT;
}

/* The version 2 fields: flags and dependencies, by op. */
static int check_v2_fields(const struct cxs_trace_rec *r, char *why, size_t whylen)
{
	unsigned where = r->flags & CXS_TRACE_F_WHERE;
	bool valued = r->op == CXS_TRACE_STORE || r->op == CXS_TRACE_RMW;

	if (r->flags & ~CXS_TRACE_F_KNOWN) {
		cxs_set_err(why, whylen, "flags: unknown bits 0x%02x", r->flags & ~CXS_TRACE_F_KNOWN);
		return -1;
	}
	if (where > CXS_TRACE_WHERE_MAX) {
		cxs_set_err(why, whylen, "flags: where %u is not 0..%d", where, CXS_TRACE_WHERE_MAX);
		return -1;
	}
	if (r->op == CXS_TRACE_FENCE && r->flags != 0) {
		cxs_set_err(why, whylen, "flags: a fence has none (0x%02x)", r->flags);
		return -1;
	}
	if (r->addr_dep != 0 && !is_data_op(r->op)) {
		cxs_set_err(why, whylen, "adep: %s has no address dependency", op_names[r->op]);
		return -1;
	}
	if (r->value_dep != 0 && !valued) {
		cxs_set_err(why, whylen, "vdep: only st and rmw have a value dependency");
		return -1;
	}
	if ((r->flags & CXS_TRACE_F_ADD) && (!valued || r->value_dep == 0)) {
		cxs_set_err(why, whylen, "add: needs a st or rmw with a value dependency");
		return -1;
	}
	if ((r->flags & CXS_TRACE_F_FADD) && r->op != CXS_TRACE_RMW) {
		cxs_set_err(why, whylen, "fadd: only an rmw is a fetch-and-add");
		return -1;
	}
	if ((r->flags & CXS_TRACE_F_TURN) && r->op != CXS_TRACE_LOCK) {
		cxs_set_err(why, whylen, "turn: only a lock has a turn");
		return -1;
	}
	return 0;
}

int cxs_trace_rec_check(const struct cxs_trace_rec *r, char *why, size_t whylen)
{
	unsigned size = r->size;

	if (r->op >= 1 && r->op <= CXS_TRACE_OP_MAX && check_v2_fields(r, why, whylen) < 0)
		return -1;
	if (is_data_op(r->op)) {
		if (size != 1 && size != 2 && size != 4 && size != 8) {
			cxs_set_err(why, whylen, "size: %u is not 1, 2, 4 or 8", size);
			return -1;
		}
		if (r->addr % size != 0) {
			cxs_set_err(why, whylen, "addr: 0x%" PRIx64 " is not aligned to its size"
				" (%u bytes)", r->addr, size);
			return -1;
		}
		if (size < 8 && (r->value >> (8 * size)) != 0) {
			cxs_set_err(why, whylen, "value: 0x%" PRIx64 " does not fit in %u byte%s",
				r->value, size, size == 1 ? "" : "s");
			return -1;
		}
		return 0;
	}
	if (r->op == CXS_TRACE_FENCE) {
		if (size != 0 || r->addr != 0 || r->value != 0) {
			cxs_set_err(why, whylen, "fence: size %u, addr 0x%" PRIx64 ", value 0x%" PRIx64
				" (all must be 0)", size, r->addr, r->value);
			return -1;
		}
		return 0;
	}
	if (is_sync_op(r->op)) {
		if (size != 8) {
			cxs_set_err(why, whylen, "size: %s has size %u, expected 8", op_names[r->op],
				size);
			return -1;
		}
		if (r->addr % 8 != 0) {
			cxs_set_err(why, whylen, "addr: 0x%" PRIx64 " of %s is not 8-byte aligned",
				r->addr, op_names[r->op]);
			return -1;
		}
		return 0;
	}
	cxs_set_err(why, whylen, "op: %u is not a valid op (1..%d)", (unsigned)r->op, CXS_TRACE_OP_MAX);
	return -1;
}

/* ---------------------------------------------------------------- writer */

struct cxs_trace_writer {
	FILE *f;
	char *path;             /* the final name */
	char *partial;          /* path + ".partial", where the bytes go until close */
	uint8_t *raw;           /* block_records * 28 */
	uint8_t *comp;          /* comp_cap bytes */
	uLong comp_cap;
	uint32_t core_id;
	uint32_t block_records;
	int level;
	uint32_t nraw;          /* records in raw, < block_records between appends */
	uint32_t blocks;        /* blocks written */
	uint32_t blocks_crc;    /* CRC over the written blocks' raw CRCs */
	uint64_t count;         /* records appended */
	bool failed;
	char msg[CXS_TRACE_ERR_MAX];  /* the first error, repeated by later calls */
};

void cxs_trace_writer_opts_default(struct cxs_trace_writer_opts *o)
{
	o->level = CXS_TRACE_DEFAULT_LEVEL;
	o->block_records = CXS_TRACE_DEFAULT_BLOCK_RECORDS;
}

static void writer_fail(struct cxs_trace_writer *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void writer_fail(struct cxs_trace_writer *w, const char *fmt, ...)
{
	va_list ap;

	if (w->failed)
		return;
	w->failed = true;
	va_start(ap, fmt);
	vsnprintf(w->msg, sizeof w->msg, fmt, ap);
	va_end(ap);
}

static int write_bytes(struct cxs_trace_writer *w, const void *p, size_t n)
{
	if (fwrite(p, 1, n, w->f) != n) {
		writer_fail(w, "%s: cannot write %s: %s", w->path, w->partial, strerror(errno));
		return -1;
	}
	return 0;
}

static void encode_header(uint8_t *p, uint32_t core_id, uint32_t block_records, uint64_t count)
{
	struct disk_header *h = (struct disk_header *)p;

	memset(h, 0, sizeof *h);
	memcpy(h->magic, CXS_TRACE_MAGIC, sizeof h->magic);
	put_le16(h->version, CXS_TRACE_VERSION);
	put_le16(h->header_bytes, CXS_TRACE_HEADER_BYTES);
	put_le32(h->flags, 0);
	put_le32(h->core_id, core_id);
	put_le32(h->block_records, block_records);
	put_le64(h->record_count, count);
	put_le32(h->header_crc, crc_of(h, HEADER_CRC_SPAN));
}

static void writer_free(struct cxs_trace_writer *w)
{
	if (w->f != NULL)
		fclose(w->f);
	free(w->raw);
	free(w->comp);
	free(w->path);
	free(w->partial);
	free(w);
}

struct cxs_trace_writer *cxs_trace_writer_open(const char *path, uint32_t core_id, char *err,
					       size_t errlen)
{
	return cxs_trace_writer_open_opts(path, core_id, NULL, err, errlen);
}

struct cxs_trace_writer *cxs_trace_writer_open_opts(const char *path, uint32_t core_id,
						    const struct cxs_trace_writer_opts *opts,
						    char *err, size_t errlen)
{
	struct cxs_trace_writer_opts o;
	struct cxs_trace_writer *w = NULL;
	uint8_t hdr[CXS_TRACE_HEADER_BYTES];
	size_t raw_cap;

	if (opts != NULL)
		o = *opts;
	else
		cxs_trace_writer_opts_default(&o);
	if (o.level < 0 || o.level > 9) {
		cxs_set_err(err, errlen, "%s: compression level %d is outside 0..9", path, o.level);
		return NULL;
	}
	if (o.block_records < 1 || o.block_records > CXS_TRACE_MAX_BLOCK_RECORDS) {
		cxs_set_err(err, errlen, "%s: block size %" PRIu32 " records is outside 1..%d", path,
			o.block_records, CXS_TRACE_MAX_BLOCK_RECORDS);
		return NULL;
	}
	w = calloc(1, sizeof *w);
	if (w == NULL)
		goto nomem;
	raw_cap = (size_t)o.block_records * CXS_TRACE_REC_BYTES;
	w->comp_cap = compressBound((uLong)raw_cap);
	w->path = strdup(path);
	w->partial = malloc(strlen(path) + sizeof ".partial");
	w->raw = malloc(raw_cap);
	w->comp = malloc(w->comp_cap);
	if (w->path == NULL || w->partial == NULL || w->raw == NULL || w->comp == NULL)
		goto nomem;
	strcpy(w->partial, path);
	strcat(w->partial, ".partial");
	w->core_id = core_id;
	w->block_records = o.block_records;
	w->level = o.level;
	w->f = fopen(w->partial, "wb");
	if (w->f == NULL) {
		cxs_set_err(err, errlen, "%s: cannot create %s: %s", path, w->partial, strerror(errno));
		goto fail;
	}
	/* Written as 0 here; close rewrites it with the record count. */
	encode_header(hdr, core_id, w->block_records, 0);
	if (write_bytes(w, hdr, sizeof hdr) < 0) {
		copy_err(err, errlen, w->msg);
		goto fail;
	}
	return w;

nomem:
	cxs_set_err(err, errlen, "%s: out of memory for the trace writer", path);
fail:
	if (w != NULL) {
		if (w->f != NULL)
			unlink(w->partial);
		writer_free(w);
	}
	return NULL;
}

static int flush_block(struct cxs_trace_writer *w)
{
	struct disk_block_header bh;
	uLong raw_bytes = (uLong)w->nraw * CXS_TRACE_REC_BYTES;
	uLongf comp_len = w->comp_cap;
	uint32_t raw_crc;
	int zrc;

	if (w->blocks == UINT32_MAX) {
		writer_fail(w, "%s: more than %" PRIu32 " blocks; write larger blocks", w->path,
			    UINT32_MAX);
		return -1;
	}
	zrc = compress2(w->comp, &comp_len, w->raw, raw_bytes, w->level);
	if (zrc != Z_OK) {
		writer_fail(w, "%s: zlib compress2 failed on block %" PRIu32 " (%s)", w->path,
			    w->blocks + 1, zError(zrc));
		return -1;
	}
	raw_crc = crc_of(w->raw, raw_bytes);
	put_le32(bh.raw_bytes, (uint32_t)raw_bytes);
	put_le32(bh.comp_bytes, (uint32_t)comp_len);
	put_le32(bh.raw_crc, raw_crc);
	put_le32(bh.comp_crc, crc_of(w->comp, comp_len));
	put_le32(bh.header_crc, crc_of(&bh, BLOCK_CRC_SPAN));
	if (write_bytes(w, &bh, sizeof bh) < 0 || write_bytes(w, w->comp, comp_len) < 0)
		return -1;
	w->blocks_crc = chain_block_crc(w->blocks_crc, raw_crc);
	w->blocks++;
	w->nraw = 0;
	return 0;
}

int cxs_trace_writer_append(struct cxs_trace_writer *w, const struct cxs_trace_rec *r, char *err,
			    size_t errlen)
{
	char why[CXS_TRACE_ERR_MAX];

	assert(w != NULL && r != NULL);
	if (w->failed) {
		copy_err(err, errlen, w->msg);
		return -1;
	}
	if (cxs_trace_rec_check(r, why, sizeof why) < 0) {
		/* The caller's mistake, not the file's: the writer stays usable. */
		cxs_set_err(err, errlen, "%s: record %" PRIu64 ": %s", w->path, w->count + 1, why);
		return -1;
	}
	encode_rec(w->raw + (size_t)w->nraw * CXS_TRACE_REC_BYTES, r);
	w->nraw++;
	w->count++;
	if (w->nraw == w->block_records && flush_block(w) < 0) {
		copy_err(err, errlen, w->msg);
		return -1;
	}
	return 0;
}

uint64_t cxs_trace_writer_count(const struct cxs_trace_writer *w)
{
	return w->count;
}

int cxs_trace_writer_close(struct cxs_trace_writer *w, char *err, size_t errlen)
{
	struct disk_trailer t;
	uint8_t hdr[CXS_TRACE_HEADER_BYTES];
	FILE *f;
	int rc = -1;

	if (w == NULL)
		return 0;
	if (w->failed)
		goto out;
	if (w->nraw > 0 && flush_block(w) < 0)
		goto out;
	put_le32(t.end_marker, 0);
	put_le32(t.block_count, w->blocks);
	put_le64(t.record_count, w->count);
	put_le32(t.blocks_crc, w->blocks_crc);
	put_le32(t.trailer_crc, crc_of(&t, TRAILER_CRC_SPAN));
	if (write_bytes(w, &t, sizeof t) < 0)
		goto out;
	encode_header(hdr, w->core_id, w->block_records, w->count);
	if (fflush(w->f) != 0 || fseeko(w->f, 0, SEEK_SET) != 0) {
		writer_fail(w, "%s: cannot write %s: %s", w->path, w->partial, strerror(errno));
		goto out;
	}
	if (write_bytes(w, hdr, sizeof hdr) < 0)
		goto out;
	if (fflush(w->f) != 0 || fsync(fileno(w->f)) != 0) {
		writer_fail(w, "%s: cannot write %s: %s", w->path, w->partial, strerror(errno));
		goto out;
	}
	f = w->f;
	w->f = NULL;
	if (fclose(f) != 0) {
		writer_fail(w, "%s: cannot write %s: %s", w->path, w->partial, strerror(errno));
		goto out;
	}
	if (rename(w->partial, w->path) != 0) {
		writer_fail(w, "%s: cannot rename %s to it: %s", w->path, w->partial,
			    strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (rc != 0) {
		copy_err(err, errlen, w->msg);
		unlink(w->partial);
	}
	writer_free(w);
	return rc;
}

void cxs_trace_writer_abort(struct cxs_trace_writer *w)
{
	if (w == NULL)
		return;
	unlink(w->partial);
	writer_free(w);
}

/* ---------------------------------------------------------------- reader */

enum rd_state { RD_OK, RD_END, RD_FAILED };

struct cxs_trace_reader {
	FILE *f;
	char *path;
	uint8_t *raw;            /* block_records * rec_bytes */
	uint8_t *comp;           /* comp_cap bytes */
	uLong raw_cap, comp_cap;
	uint32_t core_id;
	uint32_t block_records;
	unsigned version;        /* 1, 2 or 3 */
	unsigned rec_bytes;      /* CXS_TRACE_REC_BYTES or, for version 1, _V1 */
	uint64_t hdr_count;      /* record count from the file header */
	uint64_t off;            /* file offset of the next unread byte */
	uint64_t block_off;      /* file offset of the current block's header */
	uint32_t block_no;       /* blocks loaded; the current one's number */
	uint32_t nraw, pos;      /* records in the current block; the next to hand out */
	uint64_t in_blocks;      /* records in blocks 1..block_no */
	uint64_t handed;         /* records handed out */
	uint32_t blocks_crc;
	enum rd_state state;
	char msg[CXS_TRACE_ERR_MAX];
};

static int reader_fail(struct cxs_trace_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int reader_fail(struct cxs_trace_reader *r, const char *fmt, ...)
{
	va_list ap;

	r->state = RD_FAILED;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof r->msg, fmt, ap);
	va_end(ap);
	return -1;
}

/* Reads n bytes at r->off; returns how many it got and advances off. */
static size_t read_bytes(struct cxs_trace_reader *r, void *p, size_t n)
{
	size_t got = fread(p, 1, n, r->f);

	r->off += got;
	return got;
}

/* The message for a short read: an I/O error or the end of the file. */
static int short_read(struct cxs_trace_reader *r, const char *what)
{
	if (ferror(r->f))
		return reader_fail(r, "%s: read error at byte %" PRIu64 " (%s): %s", r->path,
				   r->off, what, strerror(errno));
	return reader_fail(r, "%s: truncated at byte %" PRIu64 ", in %s", r->path, r->off, what);
}

/* 0 if t has the end marker and its CRC holds; its counts are checked by the caller. */
static int check_trailer_crc(const struct disk_trailer *t)
{
	return get_le32(t->end_marker) == 0 &&
	       get_le32(t->trailer_crc) == crc_of(t, TRAILER_CRC_SPAN) ? 0 : -1;
}

static int read_trailer(struct cxs_trace_reader *r, const uint8_t *marker)
{
	struct disk_trailer t;
	uint64_t at = r->off - sizeof t.end_marker;
	uint64_t count;
	uint32_t nblocks;

	memcpy(t.end_marker, marker, sizeof t.end_marker);
	if (read_bytes(r, (uint8_t *)&t + sizeof t.end_marker, sizeof t - sizeof t.end_marker) !=
	    sizeof t - sizeof t.end_marker)
		return short_read(r, "the trailer");
	if (check_trailer_crc(&t) < 0)
		return reader_fail(r, "%s: trailer at byte %" PRIu64 ": CRC mismatch (damaged)",
				   r->path, at);
	nblocks = get_le32(t.block_count);
	count = get_le64(t.record_count);
	if (nblocks != r->block_no)
		return reader_fail(r, "%s: trailer at byte %" PRIu64 " says %" PRIu32
				   " blocks, the file has %" PRIu32, r->path, at, nblocks,
				   r->block_no);
	if (count != r->hdr_count)
		return reader_fail(r, "%s: trailer at byte %" PRIu64 " says %" PRIu64
				   " records, the file header says %" PRIu64, r->path, at, count,
				   r->hdr_count);
	if (count != r->in_blocks)
		return reader_fail(r, "%s: trailer at byte %" PRIu64 " says %" PRIu64
				   " records, the blocks hold %" PRIu64, r->path, at, count,
				   r->in_blocks);
	if (get_le32(t.blocks_crc) != r->blocks_crc)
		return reader_fail(r, "%s: trailer at byte %" PRIu64
				   ": CRC over the block CRCs mismatch (a block is missing or"
				   " out of place)", r->path, at);
	if (fgetc(r->f) != EOF)
		return reader_fail(r, "%s: unexpected data after the trailer, at byte %" PRIu64,
				   r->path, r->off);
	if (ferror(r->f))
		return short_read(r, "the end of the file");
	r->state = RD_END;
	return 0;
}

/* Loads the next block: 1 loaded, 0 at a valid trailer, -1 on error. */
static int load_block(struct cxs_trace_reader *r)
{
	struct disk_block_header bh;
	uint32_t raw_bytes, comp_bytes, raw_crc;
	uLongf dest_len;
	uLong src_len;
	int zrc;

	r->block_off = r->off;
	if (read_bytes(r, bh.raw_bytes, sizeof bh.raw_bytes) != sizeof bh.raw_bytes)
		return short_read(r, r->block_no == 0 ? "the first block header or the trailer"
						      : "a block header or the trailer");
	if (get_le32(bh.raw_bytes) == 0)
		return read_trailer(r, bh.raw_bytes);
	if (r->block_no == UINT32_MAX)
		return reader_fail(r, "%s: more than %" PRIu32 " blocks at byte %" PRIu64, r->path,
				   UINT32_MAX, r->block_off);
	r->block_no++;
	if (read_bytes(r, bh.comp_bytes, sizeof bh - sizeof bh.raw_bytes) !=
	    sizeof bh - sizeof bh.raw_bytes)
		return short_read(r, "a block header");
	if (get_le32(bh.header_crc) != crc_of(&bh, BLOCK_CRC_SPAN))
		return reader_fail(r, "%s: block %" PRIu32 " at byte %" PRIu64
				   ": header CRC mismatch (block sizes damaged)", r->path,
				   r->block_no, r->block_off);
	raw_bytes = get_le32(bh.raw_bytes);
	comp_bytes = get_le32(bh.comp_bytes);
	raw_crc = get_le32(bh.raw_crc);
	if (raw_bytes % r->rec_bytes != 0 || raw_bytes > r->raw_cap)
		return reader_fail(r, "%s: block %" PRIu32 " at byte %" PRIu64 ": size %" PRIu32
				   " bytes is not a whole number of %u-byte records up to %" PRIu32,
				   r->path, r->block_no, r->block_off, raw_bytes,
				   r->rec_bytes, r->block_records);
	if (comp_bytes == 0 || comp_bytes > r->comp_cap)
		return reader_fail(r, "%s: block %" PRIu32 " at byte %" PRIu64
				   ": compressed size %" PRIu32 " is outside 1..%lu", r->path,
				   r->block_no, r->block_off, comp_bytes,
				   (unsigned long)r->comp_cap);
	if (read_bytes(r, r->comp, comp_bytes) != comp_bytes)
		return short_read(r, "block data");
	if (crc_of(r->comp, comp_bytes) != get_le32(bh.comp_crc))
		return reader_fail(r, "%s: block %" PRIu32 " at byte %" PRIu64
				   ": compressed data CRC mismatch", r->path, r->block_no,
				   r->block_off);
	dest_len = raw_bytes;
	src_len = comp_bytes;
	zrc = uncompress2(r->raw, &dest_len, r->comp, &src_len);
	if (zrc == Z_BUF_ERROR)
		return reader_fail(r, "%s: block %" PRIu32 " at byte %" PRIu64
				   ": data decompresses to more than its %" PRIu32 " bytes",
				   r->path, r->block_no, r->block_off, raw_bytes);
	if (zrc != Z_OK)
		return reader_fail(r, "%s: block %" PRIu32 " at byte %" PRIu64
				   ": compressed data damaged (zlib: %s)", r->path, r->block_no,
				   r->block_off, zError(zrc));
	if (dest_len != raw_bytes || src_len != comp_bytes)
		return reader_fail(r, "%s: block %" PRIu32 " at byte %" PRIu64
				   ": data decompresses to %lu of %" PRIu32 " bytes from %lu of %"
				   PRIu32 " compressed bytes", r->path, r->block_no, r->block_off,
				   (unsigned long)dest_len, raw_bytes, (unsigned long)src_len,
				   comp_bytes);
	if (crc_of(r->raw, raw_bytes) != raw_crc)
		return reader_fail(r, "%s: block %" PRIu32 " at byte %" PRIu64
				   ": data CRC mismatch", r->path, r->block_no, r->block_off);
	r->nraw = raw_bytes / r->rec_bytes;
	r->pos = 0;
	r->in_blocks += r->nraw;
	if (r->in_blocks > r->hdr_count)
		return reader_fail(r, "%s: block %" PRIu32 " at byte %" PRIu64 " takes the records"
				   " to %" PRIu64 ", more than the %" PRIu64 " of the file header",
				   r->path, r->block_no, r->block_off, r->in_blocks, r->hdr_count);
	r->blocks_crc = chain_block_crc(r->blocks_crc, raw_crc);
	return 1;
}

void cxs_trace_reader_close(struct cxs_trace_reader *r)
{
	if (r == NULL)
		return;
	if (r->f != NULL)
		fclose(r->f);
	free(r->raw);
	free(r->comp);
	free(r->path);
	free(r);
}

/*
 * For a regular file: the last 24 bytes must be a trailer whose record count
 * agrees with the header. Leaves the file positioned after the header.
 */
static int check_tail(struct cxs_trace_reader *r, uint64_t file_bytes)
{
	struct disk_trailer t;
	uint64_t at;

	if (file_bytes < CXS_TRACE_HEADER_BYTES + CXS_TRACE_TRAILER_BYTES)
		return reader_fail(r, "%s: truncated: %" PRIu64 " bytes, a trace has at least %d"
				   " (file header and trailer)", r->path, file_bytes,
				   CXS_TRACE_HEADER_BYTES + CXS_TRACE_TRAILER_BYTES);
	at = file_bytes - sizeof t;
	if (fseeko(r->f, (off_t)at, SEEK_SET) != 0 || fread(&t, 1, sizeof t, r->f) != sizeof t)
		return reader_fail(r, "%s: cannot read the trailer at byte %" PRIu64 ": %s",
				   r->path, at, strerror(errno));
	if (check_trailer_crc(&t) < 0)
		return reader_fail(r, "%s: no valid trailer at byte %" PRIu64 " (the file is"
				   " truncated or damaged, or its writer never closed it)",
				   r->path, at);
	if (get_le64(t.record_count) != r->hdr_count)
		return reader_fail(r, "%s: the file header says %" PRIu64 " records, the trailer"
				   " at byte %" PRIu64 " says %" PRIu64, r->path, r->hdr_count, at,
				   get_le64(t.record_count));
	if (fseeko(r->f, CXS_TRACE_HEADER_BYTES, SEEK_SET) != 0)
		return reader_fail(r, "%s: cannot seek: %s", r->path, strerror(errno));
	return 0;
}

struct cxs_trace_reader *cxs_trace_reader_open(const char *path, char *err, size_t errlen)
{
	struct cxs_trace_reader *r;
	struct disk_header h;
	struct stat sb;
	size_t got;
	uint16_t version, header_bytes;
	uint32_t flags;

	r = calloc(1, sizeof *r);
	if (r == NULL || (r->path = strdup(path)) == NULL) {
		cxs_set_err(err, errlen, "%s: out of memory for the trace reader", path);
		free(r);
		return NULL;
	}
	r->f = fopen(path, "rb");
	if (r->f == NULL) {
		reader_fail(r, "%s: cannot open: %s", path, strerror(errno));
		goto fail;
	}
	if (fstat(fileno(r->f), &sb) != 0) {
		reader_fail(r, "%s: cannot stat: %s", path, strerror(errno));
		goto fail;
	}
	got = read_bytes(r, &h, sizeof h);
	if (got != sizeof h) {
		if (ferror(r->f))
			reader_fail(r, "%s: cannot read: %s", path, strerror(errno));
		else if (got == 0)
			reader_fail(r, "%s: empty file, not a trace", path);
		else
			reader_fail(r, "%s: truncated in the file header: %zu of %d bytes", path,
				    got, CXS_TRACE_HEADER_BYTES);
		goto fail;
	}
	if (memcmp(h.magic, CXS_TRACE_MAGIC, sizeof h.magic) != 0) {
		reader_fail(r, "%s: bad magic at byte 0 (not a cxlsim trace; expected \"%s\")",
			    path, CXS_TRACE_MAGIC);
		goto fail;
	}
	version = get_le16(h.version);
	if (version < 1 || version > CXS_TRACE_VERSION) {
		reader_fail(r, "%s: unsupported format version %u at byte 8 (this build reads"
			    " versions 1 to %d)", path, version, CXS_TRACE_VERSION);
		goto fail;
	}
	r->version = version;
	r->rec_bytes = version == 1 ? CXS_TRACE_REC_BYTES_V1 : CXS_TRACE_REC_BYTES;
	if (get_le32(h.header_crc) != crc_of(&h, HEADER_CRC_SPAN)) {
		reader_fail(r, "%s: file header CRC mismatch (bytes 0..35 damaged)", path);
		goto fail;
	}
	header_bytes = get_le16(h.header_bytes);
	flags = get_le32(h.flags);
	r->core_id = get_le32(h.core_id);
	r->block_records = get_le32(h.block_records);
	r->hdr_count = get_le64(h.record_count);
	if (header_bytes != CXS_TRACE_HEADER_BYTES) {
		reader_fail(r, "%s: header size %u at byte 10, expected %d for version %u", path,
			    header_bytes, CXS_TRACE_HEADER_BYTES, version);
		goto fail;
	}
	if (flags != 0) {
		reader_fail(r, "%s: unknown flags 0x%" PRIx32 " at byte 12", path, flags);
		goto fail;
	}
	if (get_le32(h.reserved) != 0) {
		reader_fail(r, "%s: reserved bytes 32..35 are not zero", path);
		goto fail;
	}
	if (r->block_records < 1 || r->block_records > CXS_TRACE_MAX_BLOCK_RECORDS) {
		reader_fail(r, "%s: block size %" PRIu32 " records at byte 20 is outside 1..%d",
			    path, r->block_records, CXS_TRACE_MAX_BLOCK_RECORDS);
		goto fail;
	}
	r->raw_cap = (uLong)r->block_records * r->rec_bytes;
	r->comp_cap = compressBound(r->raw_cap);
	r->raw = malloc(r->raw_cap);
	r->comp = malloc(r->comp_cap);
	if (r->raw == NULL || r->comp == NULL) {
		reader_fail(r, "%s: out of memory for blocks of %" PRIu32 " records", path,
			    r->block_records);
		goto fail;
	}
	if (S_ISREG(sb.st_mode) && check_tail(r, (uint64_t)sb.st_size) < 0)
		goto fail;
	r->state = RD_OK;
	return r;

fail:
	copy_err(err, errlen, r->msg);
	cxs_trace_reader_close(r);
	return NULL;
}

int cxs_trace_reader_next(struct cxs_trace_reader *r, struct cxs_trace_rec *out, char *err,
			  size_t errlen)
{
	char why[CXS_TRACE_ERR_MAX];
	unsigned reserved;

	assert(r != NULL && out != NULL);
	while (r->state == RD_OK && r->pos == r->nraw) {
		if (load_block(r) < 0)
			break;
	}
	if (r->state == RD_END)
		return 0;
	if (r->state == RD_FAILED) {
		copy_err(err, errlen, r->msg);
		return -1;
	}
	reserved = decode_rec(r->raw + (size_t)r->pos * r->rec_bytes, r->version, out);
	if (reserved != 0)
		snprintf(why, sizeof why, r->version == 1 ? "reserved bytes 2..3 are 0x%04x, not 0" :
			 "reserved byte 3 is 0x%02x, not 0", reserved);
	else if (r->version == 1 && out->op > CXS_TRACE_OP_MAX_V1)
		snprintf(why, sizeof why, "op: %u is not a version 1 op (1..%d)", (unsigned)out->op,
			 CXS_TRACE_OP_MAX_V1);
	else if (r->version == 2 && (out->flags & CXS_TRACE_F_TURN))
		snprintf(why, sizeof why, "flags: unknown bits 0x%02x (turn is version 3's)",
			 (unsigned)CXS_TRACE_F_TURN);
	if (reserved != 0 || (r->version == 1 && out->op > CXS_TRACE_OP_MAX_V1) ||
	    (r->version == 2 && (out->flags & CXS_TRACE_F_TURN)) ||
	    cxs_trace_rec_check(out, why, sizeof why) < 0) {
		reader_fail(r, "%s: block %" PRIu32 " at byte %" PRIu64 ", record %" PRIu64 ": %s",
			    r->path, r->block_no, r->block_off, r->handed + 1, why);
		copy_err(err, errlen, r->msg);
		return -1;
	}
	r->pos++;
	r->handed++;
	return 1;
}

uint32_t cxs_trace_reader_core(const struct cxs_trace_reader *r)
{
	return r->core_id;
}

unsigned cxs_trace_reader_version(const struct cxs_trace_reader *r)
{
	return r->version;
}

uint64_t cxs_trace_reader_count(const struct cxs_trace_reader *r)
{
	return r->hdr_count;
}

/* ------------------------------------------------------------- text form */

#define MAX_FIELDS 12
#define SHOW_MAX 40     /* characters of a bad field quoted in a message */

struct field {
	const char *s;
	int len;
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* Splits line into fields up to a '#'; returns the count, or -1 if too many. */
static int split_fields(const char *line, struct field *f)
{
	int n = 0;
	const char *p = line;

	for (;;) {
		while (is_blank(*p))
			p++;
		if (*p == '\0' || *p == '#')
			return n;
		if (n == MAX_FIELDS)
			return -1;
		f[n].s = p;
		while (*p != '\0' && *p != '#' && !is_blank(*p))
			p++;
		f[n].len = (int)(p - f[n].s);
		n++;
	}
}

static bool field_is(const struct field *f, const char *word)
{
	return (size_t)f->len == strlen(word) && memcmp(f->s, word, (size_t)f->len) == 0;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Parses s[0..len) as a number in base 10 or 16; returns 0, or -1 if it is not
 * one (empty, a stray character, or more than 64 bits).
 */
static int parse_base(const char *s, int len, unsigned base, uint64_t *out)
{
	uint64_t v = 0;

	if (len <= 0)
		return -1;
	for (int i = 0; i < len; i++) {
		int d = hex_digit(s[i]);

		if (d < 0 || (unsigned)d >= base)
			return -1;
		if (v > (UINT64_MAX - (unsigned)d) / base)
			return -1;
		v = v * base + (unsigned)d;
	}
	*out = v;
	return 0;
}

/* Decimal, or hexadecimal after 0x; no sign, no octal. */
static int parse_number(const char *s, int len, uint64_t *out)
{
	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return parse_base(s + 2, len - 2, 16, out);
	return parse_base(s, len, 10, out);
}

static int bad_number(char *why, size_t whylen, const char *name, const struct field *f)
{
	cxs_set_err(why, whylen, "%s: '%.*s%s' is not a number (decimal or 0x hex)", name,
		f->len > SHOW_MAX ? SHOW_MAX : f->len, f->s, f->len > SHOW_MAX ? "..." : "");
	return -1;
}

/* A number after "name=" in g; 1 if g is that field (value in *v), 0 if not, -1 bad. */
static int keyed_number(const struct field *g, const char *name, uint64_t max, uint64_t *v,
			char *why, size_t whylen)
{
	size_t n = strlen(name);
	struct field num;

	if ((size_t)g->len <= n || memcmp(g->s, name, n) != 0 || g->s[n] != '=')
		return 0;
	num.s = g->s + n + 1;
	num.len = g->len - (int)n - 1;
	if (parse_number(num.s, num.len, v) < 0)
		return bad_number(why, whylen, name, &num);
	if (*v > max) {
		cxs_set_err(why, whylen, "%s: %" PRIu64 " is more than %" PRIu64, name, *v, max);
		return -1;
	}
	return 1;
}

/* adep=N, vdep=N, where=NAME, add, fadd, turn: 1 if g is one (applied to r), 0 if not, -1 bad. */
static int parse_v2_field(const struct field *g, struct cxs_trace_rec *r, char *why,
			  size_t whylen)
{
	uint64_t v;
	int k;

	if ((k = keyed_number(g, "adep", UINT16_MAX, &v, why, whylen)) != 0) {
		r->addr_dep = (uint16_t)v;
		return k;
	}
	if ((k = keyed_number(g, "vdep", UINT16_MAX, &v, why, whylen)) != 0) {
		r->value_dep = (uint16_t)v;
		return k;
	}
	if (field_is(g, "add") || field_is(g, "fadd") || field_is(g, "turn")) {
		r->flags |= field_is(g, "add") ? CXS_TRACE_F_ADD :
			    field_is(g, "fadd") ? CXS_TRACE_F_FADD : CXS_TRACE_F_TURN;
		return 1;
	}
	if (g->len > 6 && memcmp(g->s, "where=", 6) == 0) {
		struct field w = { g->s + 6, g->len - 6 };

		for (unsigned k2 = 0; k2 <= CXS_TRACE_WHERE_MAX; k2++)
			if (field_is(&w, where_names[k2])) {
				r->flags = (uint8_t)((r->flags & ~CXS_TRACE_F_WHERE) | k2);
				return 1;
			}
		cxs_set_err(why, whylen, "where: '%.*s%s' is not unknown, heap, stack, global or"
			" other", w.len > SHOW_MAX ? SHOW_MAX : w.len, w.s, w.len > SHOW_MAX ? "..." : "");
		return -1;
	}
	return 0;
}

int cxs_trace_parse_text(const char *line, struct cxs_trace_rec *out, char *why, size_t whylen)
{
	struct field f[MAX_FIELDS];
	struct cxs_trace_rec r = { 0 };
	int n = split_fields(line, f);
	int i = 1, npos = 0, max_pos;
	bool have_gap = false;
	uint64_t v;
	unsigned op = 0;

	if (n < 0) {
		cxs_set_err(why, whylen, "too many fields (at most %d)", MAX_FIELDS);
		return -1;
	}
	if (n == 0)
		return 0;
	for (unsigned k = 1; k <= CXS_TRACE_OP_MAX; k++)
		if (field_is(&f[0], op_names[k]))
			op = k;
	if (op == 0) {
		cxs_set_err(why, whylen, "op: unknown '%.*s%s' (expected ld, st, rmw, fence, lock,"
			" unlock, barrier, post, wait or check)", f[0].len > SHOW_MAX ? SHOW_MAX :
			f[0].len, f[0].s, f[0].len > SHOW_MAX ? "..." : "");
		return -1;
	}
	r.op = (uint8_t)op;
	if (is_data_op(op)) {
		if (i >= n) {
			cxs_set_err(why, whylen, "size: missing (%s SIZE ADDR [VALUE] [GAP])",
				op_names[op]);
			return -1;
		}
		if (parse_number(f[i].s, f[i].len, &v) < 0)
			return bad_number(why, whylen, "size", &f[i]);
		if (v != 1 && v != 2 && v != 4 && v != 8) {
			cxs_set_err(why, whylen, "size: %" PRIu64 " is not 1, 2, 4 or 8", v);
			return -1;
		}
		r.size = (uint8_t)v;
		i++;
	} else if (is_sync_op(op)) {
		r.size = 8;
	}
	if (op != CXS_TRACE_FENCE) {
		if (i >= n) {
			cxs_set_err(why, whylen, "addr: missing (%s %sADDR [VALUE] [GAP])",
				op_names[op], is_data_op(op) ? "SIZE " : "");
			return -1;
		}
		if (parse_number(f[i].s, f[i].len, &r.addr) < 0)
			return bad_number(why, whylen, "addr", &f[i]);
		i++;
	}
	max_pos = op == CXS_TRACE_FENCE ? 0 : 2;   /* VALUE, then GAP */
	for (; i < n; i++) {
		struct field g = f[i];
		int kv = parse_v2_field(&g, &r, why, whylen);

		if (kv < 0)
			return -1;
		if (kv > 0)
			continue;
		if (g.len >= 4 && memcmp(g.s, "gap=", 4) == 0) {
			g.s += 4;
			g.len -= 4;
		} else if (npos >= max_pos) {
			goto extra;
		} else if (npos++ == 0) {
			if (parse_number(g.s, g.len, &r.value) < 0)
				return bad_number(why, whylen, "value", &f[i]);
			continue;
		}
		/* A gap, as gap=N or as the second positional field. */
		if (have_gap) {
			cxs_set_err(why, whylen, "gap: given twice");
			return -1;
		}
		if (parse_number(g.s, g.len, &v) < 0)
			return bad_number(why, whylen, "gap", &f[i]);
		if (v > UINT32_MAX) {
			cxs_set_err(why, whylen, "gap: %" PRIu64 " is more than %" PRIu32, v,
				UINT32_MAX);
			return -1;
		}
		r.gap = (uint32_t)v;
		have_gap = true;
	}
	if (cxs_trace_rec_check(&r, why, whylen) < 0)
		return -1;
	*out = r;
	return 1;

extra:
	cxs_set_err(why, whylen, "unexpected field '%.*s%s' (%s)", f[i].len > SHOW_MAX ? SHOW_MAX :
		f[i].len, f[i].s, f[i].len > SHOW_MAX ? "..." : "",
		op == CXS_TRACE_FENCE ? "fence takes only gap=N" :
		is_data_op(op) ? "expected OP SIZE ADDR [VALUE] [GAP]" :
		"expected OP ADDR [VALUE] [GAP]");
	return -1;
}

void cxs_trace_format_text(const struct cxs_trace_rec *r, char *buf, size_t len)
{
	/*
	 * At most "barrier 0x<16> 0x<16> gap=<10> adep=65535 vdep=65535
	 * where=unknown add fadd turn": 117 characters.
	 */
	char size_s[8] = "", addr_s[24] = "", value_s[24] = "", gap_s[16] = "", v2_s[64] = "";
	unsigned where = r->flags & CXS_TRACE_F_WHERE;
	const char *name = cxs_trace_op_name(r->op);

	if (name == NULL) {
		snprintf(buf, len, "# invalid op %u", (unsigned)r->op);
		return;
	}
	if (is_data_op(r->op))
		snprintf(size_s, sizeof size_s, " %u", (unsigned)r->size);
	if (r->op != CXS_TRACE_FENCE)
		snprintf(addr_s, sizeof addr_s, " 0x%" PRIx64, r->addr);
	if (r->value != 0)
		snprintf(value_s, sizeof value_s, " 0x%" PRIx64, r->value);
	if (r->gap != 0)
		snprintf(gap_s, sizeof gap_s, " gap=%" PRIu32, r->gap);
	snprintf(v2_s, sizeof v2_s, "%s%.0u%s%.0u%s%s%s%s%s", r->addr_dep ? " adep=" : "",
		 (unsigned)r->addr_dep, r->value_dep ? " vdep=" : "", (unsigned)r->value_dep,
		 where ? " where=" : "", where <= CXS_TRACE_WHERE_MAX && where ? where_names[where] : "",
		 r->flags & CXS_TRACE_F_ADD ? " add" : "", r->flags & CXS_TRACE_F_FADD ? " fadd" : "",
		 r->flags & CXS_TRACE_F_TURN ? " turn" : "");
	snprintf(buf, len, "%s%s%s%s%s%s", name, size_s, addr_s, value_s, gap_s, v2_s);
}

/* ------------------------------------------------------------ converters */

static void stats_clear(struct cxs_trace_convert_stats *st)
{
	if (st != NULL)
		memset(st, 0, sizeof *st);
}

int cxs_trace_from_text(const char *in_path, const char *out_path, uint32_t core_id,
			const struct cxs_trace_writer_opts *opts,
			struct cxs_trace_convert_stats *st, char *err, size_t errlen)
{
	struct cxs_trace_convert_stats local;
	struct cxs_trace_writer *w = NULL;
	struct cxs_trace_rec rec;
	char why[CXS_TRACE_ERR_MAX];
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *in;
	int rc = -1;

	if (st == NULL)
		st = &local;
	stats_clear(st);
	in = fopen(in_path, "r");
	if (in == NULL) {
		cxs_set_err(err, errlen, "%s: cannot open: %s", in_path, strerror(errno));
		return -1;
	}
	w = cxs_trace_writer_open_opts(out_path, core_id, opts, err, errlen);
	if (w == NULL)
		goto out;
	while ((len = getline(&line, &cap, in)) >= 0) {
		int prc;

		st->lines++;
		if (strlen(line) != (size_t)len) {
			cxs_set_err(err, errlen, "%s:%" PRIu64 ": contains a NUL byte"
				" (not a text trace)", in_path, st->lines);
			goto out;
		}
		prc = cxs_trace_parse_text(line, &rec, why, sizeof why);
		if (prc < 0) {
			cxs_set_err(err, errlen, "%s:%" PRIu64 ": %s", in_path, st->lines, why);
			goto out;
		}
		if (prc == 1 && cxs_trace_writer_append(w, &rec, err, errlen) < 0)
			goto out;
	}
	if (ferror(in)) {
		cxs_set_err(err, errlen, "%s: cannot read after line %" PRIu64 ": %s", in_path,
			st->lines, strerror(errno));
		goto out;
	}
	st->records = cxs_trace_writer_count(w);
	rc = cxs_trace_writer_close(w, err, errlen);
	w = NULL;
out:
	cxs_trace_writer_abort(w);
	fclose(in);
	free(line);
	return rc;
}

/* Largest lackey access we split (fxsave-like helpers move 512 bytes). */
#define LACKEY_MAX_SIZE (1u << 20)

/*
 * Parses one lackey line. Returns 0 and sets *kind ('I', 'L', 'S', 'M'),
 * addr and size; 1 for a line to skip (blank, valgrind's "==pid==" lines);
 * -1 with why for anything else.
 */
static int parse_lackey_line(const char *line, char *kind, uint64_t *addr, uint64_t *size,
			     char *why, size_t whylen)
{
	const char *p = line, *a, *s;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '\0' || *p == '\n' || (*p == '\r' && p[1] == '\n'))
		return 1;
	if (p[0] == '=' && p[1] == '=')
		return 1;
	if (!(*p == 'I' || *p == 'L' || *p == 'S' || *p == 'M') || (p[1] != ' ' && p[1] != '\t'))
		goto bad;
	*kind = *p;
	p++;
	while (*p == ' ' || *p == '\t')
		p++;
	a = p;
	while (hex_digit(*p) >= 0 || *p == 'x' || *p == 'X')
		p++;
	if (*p != ',')
		goto bad;
	if (p - a > 2 && a[0] == '0' && (a[1] == 'x' || a[1] == 'X'))
		a += 2;
	if (parse_base(a, (int)(p - a), 16, addr) < 0) {
		cxs_set_err(why, whylen, "address '%.*s' is not a hexadecimal number",
			(int)(p - a) > SHOW_MAX ? SHOW_MAX : (int)(p - a), a);
		return -1;
	}
	s = ++p;
	while (*p >= '0' && *p <= '9')
		p++;
	if (parse_base(s, (int)(p - s), 10, size) < 0) {
		cxs_set_err(why, whylen, "size after the comma is not a decimal number");
		return -1;
	}
	while (is_blank(*p))
		p++;
	if (*p != '\0')
		goto bad;
	return 0;
bad:
	cxs_set_err(why, whylen, "not a lackey --trace-mem line (expected \"I  ADDR,SIZE\" or"
		" \" L|S|M ADDR,SIZE\")");
	return -1;
}

/*
 * Appends an access of any size as aligned 1/2/4/8-byte pieces, largest
 * first; the first piece carries *gap, which is then 0.
 */
static int append_pieces(struct cxs_trace_writer *w, uint8_t op, uint64_t addr, uint64_t size,
			 uint32_t *gap, char *err, size_t errlen)
{
	while (size > 0) {
		struct cxs_trace_rec rec = { .op = op, .addr = addr, .gap = *gap };
		uint64_t piece = 8;

		while (piece > 1 && (piece > size || addr % piece != 0))
			piece >>= 1;
		rec.size = (uint8_t)piece;
		if (cxs_trace_writer_append(w, &rec, err, errlen) < 0)
			return -1;
		*gap = 0;
		addr += piece;
		size -= piece;
	}
	return 0;
}

int cxs_trace_from_lackey(const char *in_path, const char *out_path, uint32_t core_id,
			  const struct cxs_trace_writer_opts *opts,
			  struct cxs_trace_convert_stats *st, char *err, size_t errlen)
{
	struct cxs_trace_convert_stats local;
	struct cxs_trace_writer *w = NULL;
	char why[CXS_TRACE_ERR_MAX];
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *in;
	uint64_t gap = 0;     /* non-memory instructions since the last access */
	bool pending = false; /* the last I line has not (yet) made an access */
	int rc = -1;

	if (st == NULL)
		st = &local;
	stats_clear(st);
	in = fopen(in_path, "r");
	if (in == NULL) {
		cxs_set_err(err, errlen, "%s: cannot open: %s", in_path, strerror(errno));
		return -1;
	}
	w = cxs_trace_writer_open_opts(out_path, core_id, opts, err, errlen);
	if (w == NULL)
		goto out;
	while ((len = getline(&line, &cap, in)) >= 0) {
		uint64_t addr = 0, size = 0;
		uint32_t g;
		char kind = 0;
		int prc;

		st->lines++;
		if (strlen(line) != (size_t)len) {
			cxs_set_err(err, errlen, "%s:%" PRIu64 ": contains a NUL byte"
				" (not lackey output)", in_path, st->lines);
			goto out;
		}
		prc = parse_lackey_line(line, &kind, &addr, &size, why, sizeof why);
		if (prc < 0) {
			cxs_set_err(err, errlen, "%s:%" PRIu64 ": %s", in_path, st->lines, why);
			goto out;
		}
		if (prc == 1)
			continue;
		if (kind == 'I') {
			/* The previous instruction made no access: it is one of the K. */
			if (pending)
				gap++;
			pending = true;
			st->instructions++;
			continue;
		}
		pending = false;
		st->accesses++;
		if (size == 0 || size > LACKEY_MAX_SIZE) {
			cxs_set_err(err, errlen, "%s:%" PRIu64 ": size %" PRIu64 " is outside 1..%u",
				in_path, st->lines, size, LACKEY_MAX_SIZE);
			goto out;
		}
		if (addr + size - 1 < addr) {
			cxs_set_err(err, errlen, "%s:%" PRIu64 ": access at 0x%" PRIx64 " of %" PRIu64
				" bytes wraps past the end of the address space", in_path,
				st->lines, addr, size);
			goto out;
		}
		if (gap > UINT32_MAX) {
			cxs_set_err(err, errlen, "%s:%" PRIu64 ": more than %" PRIu32 " instructions"
				" without a memory access before this one", in_path, st->lines,
				UINT32_MAX);
			goto out;
		}
		if ((size != 1 && size != 2 && size != 4 && size != 8) || addr % size != 0)
			st->split++;
		g = (uint32_t)gap;
		if (kind != 'S' &&
		    append_pieces(w, CXS_TRACE_LOAD, addr, size, &g, err, errlen) < 0)
			goto out;
		if (kind != 'L' &&
		    append_pieces(w, CXS_TRACE_STORE, addr, size, &g, err, errlen) < 0)
			goto out;
		gap = 0;
	}
	if (ferror(in)) {
		cxs_set_err(err, errlen, "%s: cannot read after line %" PRIu64 ": %s", in_path,
			st->lines, strerror(errno));
		goto out;
	}
	st->dropped_instructions = gap + (pending ? 1 : 0);
	st->records = cxs_trace_writer_count(w);
	rc = cxs_trace_writer_close(w, err, errlen);
	w = NULL;
out:
	cxs_trace_writer_abort(w);
	fclose(in);
	free(line);
	return rc;
}

int cxs_trace_dump(const char *in_path, FILE *out, uint64_t limit, char *err, size_t errlen)
{
	struct cxs_trace_reader *r;
	struct cxs_trace_rec rec;
	char text[CXS_TRACE_TEXT_MAX];
	uint64_t n = 0;
	int rc = -1, nrc = 0;

	r = cxs_trace_reader_open(in_path, err, errlen);
	if (r == NULL)
		return -1;
	fprintf(out, "# cxlsim trace of core %" PRIu32 ": %" PRIu64 " records\n",
		cxs_trace_reader_core(r), cxs_trace_reader_count(r));
	while ((limit == 0 || n < limit) &&
	       (nrc = cxs_trace_reader_next(r, &rec, err, errlen)) == 1) {
		cxs_trace_format_text(&rec, text, sizeof text);
		fprintf(out, "%s\n", text);
		n++;
	}
	if (nrc < 0)
		goto out;
	if (fflush(out) != 0 || ferror(out)) {
		cxs_set_err(err, errlen, "%s: cannot write the dump: %s", in_path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	cxs_trace_reader_close(r);
	return rc;
}

int cxs_trace_check(const char *in_path, struct cxs_trace_summary *sum, char *err, size_t errlen)
{
	struct cxs_trace_reader *r;
	struct cxs_trace_rec rec;
	int nrc;

	memset(sum, 0, sizeof *sum);
	r = cxs_trace_reader_open(in_path, err, errlen);
	if (r == NULL)
		return -1;
	sum->core_id = r->core_id;
	while ((nrc = cxs_trace_reader_next(r, &rec, err, errlen)) == 1) {
		sum->records++;
		sum->gap_total += rec.gap;
		sum->by_op[rec.op]++;
	}
	sum->blocks = r->block_no;
	cxs_trace_reader_close(r);
	return nrc == 0 ? 0 : -1;
}
