/*
 * trace.h — per-core memory traces: the record, the file format, the writer,
 * the reader and the converters from text and from valgrind's lackey.
 *
 * What a trace is
 * ---------------
 * The core model is trace driven, as in DIKTAMO's method (papers/diktamo.md
 * §VI, "Execution traces ... collected per core"): one trace per core, a
 * stream of memory operations, each carrying K, the number of non-memory
 * instructions the core executed since the previous record. The core model
 * charges those K instructions at CPI 1 before it issues the operation.
 *
 *   op       what it does                          size      address     value
 *   ld       load                                  1,2,4,8   aligned     the value loaded (0 if unknown)
 *   st       store                                 1,2,4,8   aligned     the bytes stored
 *   rmw      atomic exchange (old value returned,  1,2,4,8   aligned     the new value; with the
 *            value stored; drains the store buffer)                      fadd flag, the addend
 *   fence    full fence (drains the store buffer)  0         0           0
 *   lock     lock acquire; spins until free        8         8-aligned   free (0 by default);
 *                                                                        with flag turn, its turn (v3)
 *   unlock   lock release                          8         8-aligned   free (0 by default)
 *   barrier  barrier arrive and leave              8         8-aligned   participants (0: all)
 *   post     adds 1 to an event counter (release)  8         8-aligned   0            (v2)
 *   wait     waits until the counter at the        8         8-aligned   the count    (v2)
 *            address reaches value (acquire)
 *   check    loads the address; the replay stops   1,2,4,8   aligned     the value the traced
 *            unless it holds value                                       program expects (v2)
 *
 * The address of lock, unlock and barrier names the synchronisation object
 * (DIKTAMO's traces record "lock acquire request, lock release, barrier
 * arrive, and barrier leave"); their value is carried through untouched for
 * the core model to give a meaning to (a barrier's participant count, say).
 * post and wait order threads that have no lock or barrier in common: the
 * recorder (cxlsim-trace record) makes a created thread wait for its
 * creator's post, and a joining thread wait for the joined thread's last
 * post.
 *
 * Dataflow (version 2). ld and rmw records are *producers*: they make a
 * value. A record's addr_dep says which earlier producer of the same trace
 * its address was computed from, counted back in producers (1: the latest
 * producer before this record; 0: none, or more than 65535 back); value_dep
 * says the same of a st's or rmw's value. A recorder that knows several
 * gives the nearest, the one the operation waits for longest. The replay
 * makes a load or store wait for its address's producer, so a pointer chase
 * is serialised and independent loads overlap.
 *
 * Flags (version 2):
 *   bits 0..2  where the address is: 0 unknown (and every v1 record), 1 heap,
 *              2 a thread's stack, 3 a global (a loaded object's data or bss),
 *              4 other (other mappings; the recorder's own sync words)
 *   bit 3      add: for st and rmw with a value_dep, the value is the
 *              producer's value plus a constant, value - (the producer's
 *              traced value); a replay may recompute it from the value the
 *              producer loads there (a counter incremented under a lock
 *              ends right whatever order the replay takes the lock in)
 *   bit 4      fadd: rmw only, an atomic fetch-and-add of value (x86 lock
 *              add/xadd/inc/dec) rather than an exchange
 *   bit 5      turn (version 3): lock only, value is the acquisition's turn,
 *              its index (from 0) among the recorded acquisitions of that
 *              lock by all threads, in the order the program took them; a
 *              replay takes the lock in that order (trace_program.c), and
 *              the recording's DIR/locks.order says whose each turn is
 *              (include/cxlsim/lock_order.h)
 *   bits 6..7  0
 *
 * For ld, st, rmw and check the value must fit in size bytes. "Aligned" means
 * the address is a multiple of the size, so no access crosses a cache line.
 *
 * The file (all integers little-endian; sizes in bytes)
 * -----------------------------------------------------
 *
 *   +-------------------+ 0
 *   | file header   40  |  magic "CXSTRACE", version, core id, record count, ...
 *   +-------------------+ 40
 *   | block header  20  |  raw size, compressed size, CRC32(raw), CRC32(zlib data),
 *   | zlib data         |  CRC32(these 16); zlib data = compress2(n records of
 *   |                   |  28 bytes; 24 in version 1)
 *   +-------------------+
 *   | block header  20  |  ... as many blocks as needed, each independent
 *   | zlib data         |
 *   +-------------------+
 *   | trailer       24  |  end marker 0, block count, record count, CRC32s
 *   +-------------------+ end of file (nothing may follow)
 *
 * File header (CXS_TRACE_HEADER_BYTES = 40):
 *    0  u8[8] magic          "CXSTRACE"
 *    8  u16   version        CXS_TRACE_VERSION (3); readers also read versions 1 and 2
 *   10  u16   header_bytes   40 (a later version may only grow the header)
 *   12  u32   flags          0; no flag is defined yet, readers reject any set bit
 *   16  u32   core_id
 *   20  u32   block_records  the most records any block holds, 1..CXS_TRACE_MAX_BLOCK_RECORDS;
 *                            a reader needs block_records * record bytes plus zlib's bound
 *   24  u64   record_count   written last, by close
 *   32  u32   reserved       0
 *   36  u32   header_crc     CRC32 of bytes 0..35
 *
 * Block header (CXS_TRACE_BLOCK_HEADER_BYTES = 20), then comp_bytes of data:
 *    0  u32   raw_bytes      records * record bytes; 1..block_records records; never 0
 *    4  u32   comp_bytes     length of the zlib stream that follows (1..compressBound)
 *    8  u32   raw_crc        CRC32 of the raw_bytes uncompressed bytes
 *   12  u32   comp_crc       CRC32 of the comp_bytes of zlib data
 *   16  u32   header_crc     CRC32 of bytes 0..15, so damaged sizes are named as such
 * Why two data CRCs: raw_crc is what the trailer chains and what proves the
 * records; comp_crc catches damage that inflate never sees, such as a flipped
 * padding bit after deflate's last block, which leaves the records intact but
 * means the medium is failing.
 *
 * Record (CXS_TRACE_REC_BYTES = 28; version 1: CXS_TRACE_REC_BYTES_V1 = 24,
 * the first 24 bytes with byte 2 and 3 zero), inside the uncompressed block:
 *    0  u8    op             enum cxs_trace_op, 1..10 (1..7 in version 1)
 *    1  u8    size           see the table above
 *    2  u8    flags          CXS_TRACE_F_*, see above (0 in version 1)
 *    3  u8    reserved       0
 *    4  u32   gap            non-memory instructions since the previous record
 *    8  u64   address
 *   16  u64   value
 *   24  u16   addr_dep       producers back (version 2)
 *   26  u16   value_dep      producers back (version 2)
 * A fixed record rather than a varint/delta encoding: deflate already
 * removes most of the redundancy (repeated high address bytes, zero values,
 * small gaps and dependency distances), and fixed records make every field
 * checkable on its own. Version 2 grew the record by the two dependency
 * fields and gave byte 2 to the flags; a reader of version 2 reads version 1
 * files as records without dataflow or placement. Version 3 has the same
 * record and gives flag bit 5 (turn) a meaning; in a version 1 or 2 file the
 * bit is refused, and their locks replay in whatever order the threads
 * reach them.
 *
 * Trailer (CXS_TRACE_TRAILER_BYTES = 24), where the next block header would be:
 *    0  u32   end_marker     0 (a block's raw_bytes is never 0)
 *    4  u32   block_count
 *    8  u64   record_count   must equal the header's and the sum over the blocks
 *   16  u32   blocks_crc     CRC32 over the blocks' raw_crc values, each as 4 LE bytes
 *   20  u32   trailer_crc    CRC32 of bytes 0..19
 *
 * Each block is one zlib (RFC 1950) stream from compress2() at the writer's
 * level (default 6), so a reader holds one block at a time: memory is bounded
 * by block_records (default 4096 records = 112 KiB raw) whatever the trace
 * length, and damage is found and named per block.
 *
 * The defaults, measured (gcc -O2, one core, version 1's 24-byte records) on
 * the lackey trace of /bin/true (43,750 records, 1.05 MB raw) and on 10 M
 * synthetic records:
 *
 *   block_records   1024     4096     16384     65536      (level 6, /bin/true)
 *   file bytes      97,587   80,323   74,514    74,153
 *
 *   level           1        6        9                    (4096 records, /bin/true)
 *   file bytes      114,612  80,323   73,524
 *   write, 10 M     4.6      1.26     -         M records/s
 *   read, 10 M      11       9        -         M records/s
 *
 * 4096 is where larger blocks stop paying (7 % smaller at 4x the memory);
 * level 6 costs write speed only, which a one-off conversion can afford, and
 * reading, the simulator's side, is as fast at every level.
 *
 * A file is valid only once its writer has closed it: the writer writes
 * "<path>.partial", writes the trailer and the record count on close, syncs,
 * and renames it to <path>. A crash leaves at most a .partial file.
 *
 * Errors
 * ------
 * Everything a user can cause (a missing, truncated or damaged file, a bad
 * text line) returns -1 (or NULL) with one line in err, starting with the
 * file name, then where (byte offset, block and record numbers counted from
 * 1, or line number) and what is wrong. Nothing here exits or aborts on bad
 * input. A reader opening a regular file also checks its trailer at once, so
 * a truncated or unfinished trace is refused before a simulation starts, not
 * hours into it.
 */
#ifndef CXLSIM_TRACE_H
#define CXLSIM_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CXS_TRACE_MAGIC "CXSTRACE"
#define CXS_TRACE_VERSION 3
#define CXS_TRACE_HEADER_BYTES 40
#define CXS_TRACE_BLOCK_HEADER_BYTES 20
#define CXS_TRACE_REC_BYTES 28
#define CXS_TRACE_REC_BYTES_V1 24
#define CXS_TRACE_TRAILER_BYTES 24

/* Default and largest records per block (112 KiB and 1.75 MiB uncompressed). */
#define CXS_TRACE_DEFAULT_BLOCK_RECORDS 4096
#define CXS_TRACE_MAX_BLOCK_RECORDS 65536
#define CXS_TRACE_DEFAULT_LEVEL 6

/* Room for any message this module writes; shorter buffers truncate it. */
#define CXS_TRACE_ERR_MAX 512
/* Room for one record in the text format, with its terminating NUL. */
#define CXS_TRACE_TEXT_MAX 144

enum cxs_trace_op {
	CXS_TRACE_LOAD = 1,
	CXS_TRACE_STORE = 2,
	CXS_TRACE_RMW = 3,
	CXS_TRACE_FENCE = 4,
	CXS_TRACE_LOCK = 5,
	CXS_TRACE_UNLOCK = 6,
	CXS_TRACE_BARRIER = 7,
	CXS_TRACE_POST = 8,
	CXS_TRACE_WAIT = 9,
	CXS_TRACE_CHECK = 10,
};
#define CXS_TRACE_OP_MAX 10   /* ops are 1..CXS_TRACE_OP_MAX; index arrays by op */
#define CXS_TRACE_OP_MAX_V1 7

/* Where an address is (flags bits 0..2). */
enum cxs_trace_where {
	CXS_TRACE_WHERE_UNKNOWN = 0,
	CXS_TRACE_WHERE_HEAP = 1,
	CXS_TRACE_WHERE_STACK = 2,
	CXS_TRACE_WHERE_GLOBAL = 3,
	CXS_TRACE_WHERE_OTHER = 4,
};
#define CXS_TRACE_WHERE_MAX 4
#define CXS_TRACE_F_WHERE 0x07u
#define CXS_TRACE_F_ADD 0x08u
#define CXS_TRACE_F_FADD 0x10u
#define CXS_TRACE_F_TURN 0x20u   /* version 3 */
#define CXS_TRACE_F_KNOWN 0x3fu

struct cxs_trace_rec {
	uint64_t addr;
	uint64_t value;
	uint32_t gap;        /* non-memory instructions since the previous record */
	uint16_t addr_dep;   /* producers back the address depends on; 0: none */
	uint16_t value_dep;  /* producers back a st's or rmw's value depends on; 0: none */
	uint8_t op;          /* enum cxs_trace_op */
	uint8_t size;        /* bytes */
	uint8_t flags;       /* CXS_TRACE_F_* */
};

/* Is op a producer (ld, rmw), whose value later records may depend on? */
static inline int cxs_trace_is_producer(unsigned op)
{
	return op == CXS_TRACE_LOAD || op == CXS_TRACE_RMW;
}

/* The name of a where value ("heap", ...), or NULL if it is not valid. */
const char *cxs_trace_where_name(unsigned where);

/* The text mnemonic of an op ("ld", ...), or NULL if op is not valid. */
const char *cxs_trace_op_name(unsigned op);

/*
 * Checks one record against the table above. Returns 0, or -1 with "what is
 * wrong" (no file name) in why, e.g. "size 3 is not 1, 2, 4 or 8".
 */
int cxs_trace_rec_check(const struct cxs_trace_rec *r, char *why, size_t whylen);

/* ------------------------------------------------------------------ writer */

struct cxs_trace_writer_opts {
	int level;               /* zlib level 0..9 (0 stores; 6 default) */
	uint32_t block_records;  /* records per block, 1..CXS_TRACE_MAX_BLOCK_RECORDS */
};

void cxs_trace_writer_opts_default(struct cxs_trace_writer_opts *o);

struct cxs_trace_writer;

/*
 * Creates "<path>.partial". Returns NULL with a message on error (bad
 * options, cannot create). opts may be NULL for the defaults.
 */
struct cxs_trace_writer *cxs_trace_writer_open(const char *path, uint32_t core_id, char *err,
					       size_t errlen);
struct cxs_trace_writer *cxs_trace_writer_open_opts(const char *path, uint32_t core_id,
						    const struct cxs_trace_writer_opts *opts,
						    char *err, size_t errlen);

/*
 * Appends a record. An invalid record (cxs_trace_rec_check) is refused with a
 * message and not written; the writer stays usable. A write error is sticky:
 * every later append and close fails with the same message. w and r must not
 * be NULL.
 */
int cxs_trace_writer_append(struct cxs_trace_writer *w, const struct cxs_trace_rec *r, char *err,
			    size_t errlen);

/*
 * Flushes the last block, writes the trailer and the record count, syncs and
 * renames "<path>.partial" to path. Frees w whatever happens; on failure the
 * .partial file is removed and -1 returned. A NULL w is a no-op.
 */
int cxs_trace_writer_close(struct cxs_trace_writer *w, char *err, size_t errlen);

/* Gives up: frees w and removes "<path>.partial". A NULL w is a no-op. */
void cxs_trace_writer_abort(struct cxs_trace_writer *w);

uint64_t cxs_trace_writer_count(const struct cxs_trace_writer *w);

/* ------------------------------------------------------------------ reader */

struct cxs_trace_reader;

/*
 * Opens a trace: checks the header and, for a regular file, the trailer.
 * Returns NULL with a message on error.
 */
struct cxs_trace_reader *cxs_trace_reader_open(const char *path, char *err, size_t errlen);

/*
 * Reads the next record into out. Returns 1 for a record, 0 at the end of a
 * valid trace (every block, count and CRC checked), -1 with a message on
 * error. After 0 or -1 every later call returns the same.
 */
int cxs_trace_reader_next(struct cxs_trace_reader *r, struct cxs_trace_rec *out, char *err,
			  size_t errlen);

void cxs_trace_reader_close(struct cxs_trace_reader *r);

uint32_t cxs_trace_reader_core(const struct cxs_trace_reader *r);
unsigned cxs_trace_reader_version(const struct cxs_trace_reader *r);  /* 1, 2 or 3 */
uint64_t cxs_trace_reader_count(const struct cxs_trace_reader *r);  /* from the header */

/* -------------------------------------------------------------- text form */

/*
 * One record per line, fields separated by blanks; '#' starts a comment:
 *
 *   ld|st|rmw|check SIZE ADDR [VALUE] [GAP]   ld 8 0x1000 gap=3
 *                                             st 4 0x2000 0xdead
 *                                             rmw 8 0x3000 1
 *   fence                                     fence gap=12
 *   lock|unlock|barrier|post|wait ADDR [VALUE] [GAP]   lock 0x4000
 *
 * and after the required fields, in any order, the version 2 fields:
 *   adep=N vdep=N          addr_dep and value_dep (producers back)
 *   where=heap|stack|global|other
 *   add fadd turn          the flags (turn: a lock whose VALUE is its turn)
 *
 * Numbers are decimal or 0x-prefixed hexadecimal. The optional fields are
 * positional (first VALUE, then GAP), and "gap=N" may stand anywhere after
 * the required ones. Missing VALUE and GAP are 0.
 *
 * cxs_trace_parse_text returns 1 and fills out for a record, 0 for a blank
 * or comment-only line, -1 with "FIELD: what is wrong" in why (no file name).
 */
int cxs_trace_parse_text(const char *line, struct cxs_trace_rec *out, char *why, size_t whylen);

/*
 * Writes r in the text form (size, value and gap only where they are needed),
 * so that cxs_trace_parse_text gives r back. buf needs CXS_TRACE_TEXT_MAX.
 */
void cxs_trace_format_text(const struct cxs_trace_rec *r, char *buf, size_t len);

/* -------------------------------------------------------------- converters */

struct cxs_trace_convert_stats {
	uint64_t lines;              /* input lines read */
	uint64_t records;            /* records written */
	uint64_t instructions;       /* lackey: I lines */
	uint64_t accesses;           /* lackey: L, S and M lines */
	uint64_t split;              /* lackey: accesses split into aligned pieces */
	uint64_t dropped_instructions; /* lackey: after the last access (no record to carry them) */
};

/*
 * Text file in_path to trace out_path. On error (message "in_path:LINE:
 * FIELD: what", or a write error naming out_path) nothing is left at
 * out_path. opts may be NULL; st may be NULL.
 */
int cxs_trace_from_text(const char *in_path, const char *out_path, uint32_t core_id,
			const struct cxs_trace_writer_opts *opts,
			struct cxs_trace_convert_stats *st, char *err, size_t errlen);

/*
 * Output of `valgrind --tool=lackey --trace-mem=yes` to a trace:
 *
 *   I  04016f0,3      an instruction (address, length)
 *    L 1ffefffd38,8   a load by the last instruction (address, bytes)
 *    S ...            a store;  M ...  a modify: a load, then a store
 *   ==1234== ...      valgrind's own lines: ignored
 *
 * Only instructions without a data access count toward a record's gap (the
 * instruction that makes an access is that access). An access of any other
 * size than 1, 2, 4 or 8, or not aligned to its size, is split into aligned
 * pieces, largest first, in address order; an M of such an access gives all
 * its load pieces, then all its store pieces. Only the first record of an
 * instruction carries the gap. Values are unknown and written as 0.
 * Instructions after the last access have no record to carry them and are
 * counted in st->dropped_instructions.
 */
int cxs_trace_from_lackey(const char *in_path, const char *out_path, uint32_t core_id,
			  const struct cxs_trace_writer_opts *opts,
			  struct cxs_trace_convert_stats *st, char *err, size_t errlen);

/*
 * Prints the records of in_path to out in the text form, after one comment
 * line naming the core; at most limit records (0: all). Reading stops at the
 * first damaged record, after printing those before it.
 */
int cxs_trace_dump(const char *in_path, FILE *out, uint64_t limit, char *err, size_t errlen);

struct cxs_trace_summary {
	uint32_t core_id;
	uint64_t records;
	uint64_t blocks;
	uint64_t gap_total;                     /* non-memory instructions */
	uint64_t by_op[CXS_TRACE_OP_MAX + 1];   /* records per op; [0] unused */
};

/* Reads all of in_path, checking everything, and summarises it. */
int cxs_trace_check(const char *in_path, struct cxs_trace_summary *sum, char *err, size_t errlen);

#endif /* CXLSIM_TRACE_H */
