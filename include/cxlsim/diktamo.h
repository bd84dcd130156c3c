/*
 * diktamo.h — DIKTAMO (papers/diktamo.md §III–V): remote stores replicated
 * to the Logging Units of other CNs, logs compressed and dumped to MNs, and
 * recovery from those logs after a CN fails.
 *
 * This header holds the parts that are pure data structures and can be
 * tested without the engine: replica selection, the Logging Unit's logs, the
 * log format that is compressed and dumped, and the MN's store of dumped
 * logs. The protocol that moves REPL / REPL_ACK / VAL between nodes is in
 * src/diktamo/replication.c and its wiring in src/node.
 *
 * Coherence order in the logs. The paper's 7-bit VAL timestamp (TS) orders
 * the VALs of one CN. Two CNs writing one word one after the other (the line's
 * ownership moving between them) are ordered by coherence: every write is
 * performed under an E/M grant of its line, and the home counts the grants it
 * makes (the grant epoch, coherence.h); with the count of writes made under
 * the grant, (epoch << 32) | count is the line's single write order — the
 * stamp. A store's stamp is known when it is performed, which is when its VAL
 * leaves, so the VAL carries it (8 bytes beyond the paper's VAL) besides TS;
 * the Logging Unit orders a word's entries by stamp, whoever wrote them and in
 * whatever order their VALs arrive, and uses TS to check that one CN's VALs
 * arrive at most reordered, never lost.
 */
#ifndef CXLSIM_DIKTAMO_H
#define CXLSIM_DIKTAMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cxlsim/engine.h"
#include "cxlsim/stats.h"

/* ---- replica groups ------------------------------------------------------- */

#define CXS_DK_MAX_REPLICAS 4

/*
 * The replica group of a line: n_r distinct CNs chosen from the live CNs
 * (live[0 .. nlive-1], ascending node ids) by a hash of the line address
 * (here and below a line is byte address >> 6, as in coherence.h): the group
 * is min(n_r, nlive) consecutive positions (mod nlive) starting at
 * hash % nlive, so every live CN is in exactly that many of the nlive
 * groups (balance) and the members are distinct. The writer may be one of
 * them. Returns the group size, min(n_r, nlive); n_r is 1..4.
 */
uint32_t cxs_dk_replicas(uint64_t line, const uint32_t *live, uint32_t nlive, uint32_t n_r,
			 uint32_t out[CXS_DK_MAX_REPLICAS]);
/*
 * Which member of a line's group saves the line's entries to the MNs at a
 * dump (§IV-E: "each of the Logging Units is in charge of saving only log
 * entries within a range of physical addresses"): a second hash of the line,
 * mod the group size.
 */
uint32_t cxs_dk_saver(uint64_t line, uint32_t group_size);

/* ---- log entries ------------------------------------------------------------ */

/*
 * One word of one replicated store, as the Logging Unit keeps it (Fig. 5:
 * requester, timestamp, address, value, valid bit; plus the stamp). In the
 * SRAM Log Buffer an entry takes CXS_DK_ENTRY_BYTES.
 */
struct cxs_dk_entry {
	uint64_t addr;      /* word address, 8-byte aligned */
	uint64_t value;
	uint64_t stamp;     /* coherence order of the write (see above); 0 until VALed */
	uint32_t requester; /* CN << 8 | core */
	uint32_t repl;      /* the requester's REPL sequence number: a VAL names it */
	uint8_t ts;         /* 7-bit VAL timestamp */
	uint8_t valid;      /* VALed */
};

/*
 * Bytes of an SRAM Log Buffer entry: requester 2, TS 1, valid 1, word
 * address 6 (48-bit physical), value 8, stamp 6 (grant epoch 4 + write count
 * 2): 24, so the paper's 4 KB buffer holds 170 entries.
 */
#define CXS_DK_ENTRY_BYTES 24

/*
 * 7-bit timestamps wrap: a comes before b when b is 1..63 steps after a, mod
 * 128 (serial-number arithmetic; two VALs of one CN more than 63 apart are
 * never both waiting in one SRAM buffer of 170 entries' worth of traffic).
 */
static inline bool cxs_dk_ts_before(uint8_t a, uint8_t b)
{
	uint8_t d = (uint8_t)((b - a) & 0x7f);
	return d >= 1 && d <= 63;
}

/* ---- the Logging Unit (one per CN; src/diktamo/log_unit.c) -------------------- */

struct cxs_lu_params {
	uint32_t sram_bytes;   /* SRAM Log Buffer: 4 KB (Table II) */
	uint64_t dram_bytes;   /* DRAM log: 18 MB (Table II) */
	cxs_time cycle_ps;     /* the unit's clock: 500 MHz, 2000 ps */
	cxs_time sram_ps;      /* SRAM access: 4 ns */
	double watermark;      /* share of dram_bytes that asks for an early flush */
	int zlib_level;        /* 9 (the paper's gzip -9) */
};
void cxs_lu_default_params(struct cxs_lu_params *p);

struct cxs_lu;

/* st may be NULL (tests); counters go to component "lu". NULL when out of memory. */
struct cxs_lu *cxs_lu_new(const struct cxs_lu_params *p, uint32_t node, struct cxs_stats *st);
void cxs_lu_free(struct cxs_lu *lu);

/*
 * A REPL of n words (stores of one line coalesced into one transaction,
 * §IV-A) from `requester` (CN << 8 | core) with its per-requester-CN sequence
 * number `repl`: allocates n entries. Returns the time they are in the SRAM
 * buffer (the REPL_ACK may leave then), or CXS_TIME_INF when the buffer lacks
 * room: nothing changed, and the caller keeps the REPL and offers it again
 * after a drain has freed room (back-pressure, counted in lu/backpressure_ps
 * by cxs_lu_backpressure). n <= 64 and n <= the buffer's entries; the n
 * word addresses are distinct (one entry per word).
 */
cxs_time cxs_lu_repl(struct cxs_lu *lu, cxs_time now, uint32_t requester, uint32_t repl,
		     const uint64_t *addr, const uint64_t *value, uint32_t n);
/* The caller held a REPL from `since` to now for lack of room. */
void cxs_lu_backpressure(struct cxs_lu *lu, cxs_time since, cxs_time now);

/*
 * The VAL of (requester's CN, repl): entry i of that REPL gets stamp0 + i and
 * becomes valid; with values != NULL (an atomic, whose value was not known
 * when it was replicated) entry i also gets values[i]. ts is the VAL's 7-bit
 * timestamp (incremented by the CN for every VAL it sends, wrapping): for two
 * entries of one word from the same CN, TS order (cxs_dk_ts_before) and stamp
 * order must agree, which the LU checks. Returns 0, or -1 with a message when
 * no such REPL is in the buffer (or it was VALed already) or the orders
 * disagree (protocol errors; also a word given one stamp twice, or a stamp
 * not above the word's latest in the DRAM log). A refused VAL changes nothing.
 */
int cxs_lu_val(struct cxs_lu *lu, cxs_time now, uint32_t requester, uint32_t repl, uint8_t ts,
	       uint64_t stamp0, const uint64_t *values, char *err, size_t errlen);

/*
 * Moves VALed entries from the SRAM buffer to the DRAM log, per word in stamp
 * order: an entry waits while its word has an entry in the buffer that is not
 * VALed yet (that one's stamp may be smaller) or a VALed one with a smaller
 * stamp. Never moves an entry that is not VALed. When the DRAM log lacks
 * room, what fits moves (for each word, its smallest stamps) and the rest
 * waits for a dump. Returns the time the moves are done (one unit cycle per
 * entry, after now) and sets *moved.
 */
cxs_time cxs_lu_drain(struct cxs_lu *lu, cxs_time now, uint32_t *moved);

uint32_t cxs_lu_sram_free(const struct cxs_lu *lu);   /* entries */
uint64_t cxs_lu_dram_bytes(const struct cxs_lu *lu);  /* uncompressed bytes in the DRAM log */
bool cxs_lu_needs_flush(const struct cxs_lu *lu);     /* past the high watermark */

/* One destination's share of a dump: compressed log bytes (cxs_dk_log_* format). */
struct cxs_dk_chunk {
	uint32_t dest;
	unsigned char *bytes;  /* malloc'd */
	size_t len;            /* compressed */
	size_t raw_len;        /* before compression */
	size_t nentries;
};

/*
 * A dump (§IV-E): every entry of the DRAM log this unit is in charge of
 * saving (keep(ctx, line) true: its share of its replica groups' lines) is
 * serialised in log order and compressed with zlib, one chunk per destination
 * (dest(ctx, line) in 0 .. ndest-1, the MN that will keep it; chunks with no
 * entry are not produced); then the DRAM log is cleared (the other members of
 * each group save the rest). *done: when the unit has read and compressed it
 * all (a unit cycle per entry read). 0, or -1 when out of memory (the log is
 * then unchanged).
 */
int cxs_lu_dump(struct cxs_lu *lu, cxs_time now, bool (*keep)(void *ctx, uint64_t line),
		uint32_t (*dest)(void *ctx, uint64_t line), void *ctx, uint32_t ndest,
		struct cxs_dk_chunk **chunks, size_t *nchunks, cxs_time *done);
void cxs_dk_chunks_free(struct cxs_dk_chunk *chunks, size_t n);

/*
 * Recovery's search (§V-C): for each of the n word addresses, the latest
 * VALed entry (largest stamp) in the buffer and the DRAM log: found[i] = 1 and
 * out[i] set, or found[i] = 0. Entries that are not VALed are never returned.
 * Returns the number of entries scanned (the cost of TravLU): the unit reads
 * its buffer and DRAM log once for the whole list, so their entry count, or 0
 * when n is 0.
 */
size_t cxs_lu_latest(const struct cxs_lu *lu, const uint64_t *words, size_t n,
		     struct cxs_dk_entry *out, uint8_t *found);
/* Every entry, buffer first (where 0) then DRAM log (where 1), in order: for checks. */
void cxs_lu_foreach(const struct cxs_lu *lu,
		    void (*fn)(void *ctx, const struct cxs_dk_entry *e, int where), void *ctx);

/* ---- the log format (what is compressed and dumped) ------------------------------ */

/*
 * Serialises entries (valid ones only) into a versioned little-endian record
 * stream (magic, version, count, then fixed-size records), malloc'd in *out.
 * Decoding checks the magic, version and every length, and returns -1 with a
 * message for anything else (a truncated or corrupt log). Decoded entries
 * have valid = 1 and repl = 0 (a REPL number is not logged).
 */
int cxs_dk_log_encode(const struct cxs_dk_entry *e, size_t n, unsigned char **out, size_t *len);
int cxs_dk_log_decode(const unsigned char *in, size_t len, struct cxs_dk_entry **e, size_t *n,
		      char *err, size_t errlen);
/* zlib around them: level as given; inflate refuses corrupt input. */
int cxs_dk_compress(const unsigned char *in, size_t len, int level, unsigned char **out,
		    size_t *outlen);
int cxs_dk_inflate(const unsigned char *in, size_t len, size_t raw_len, unsigned char **out,
		   char *err, size_t errlen);

/* ---- an MN's store of dumped logs (src/diktamo/log_store.c) ----------------------- */

struct cxs_dk_store;

struct cxs_dk_store *cxs_dk_store_new(void);
void cxs_dk_store_free(struct cxs_dk_store *s);
/* Keeps one dumped chunk (its compressed bytes, as received). 0, or -1 out of memory. */
int cxs_dk_store_add(struct cxs_dk_store *s, uint32_t from_node, const unsigned char *bytes,
		     size_t len, size_t raw_len);
size_t cxs_dk_store_bytes(const struct cxs_dk_store *s); /* compressed bytes kept */
/*
 * Recovery's search of the dumped logs: decompresses every chunk and returns,
 * per word, the latest entry (largest stamp) as cxs_lu_latest does. Returns
 * entries scanned; *inflated the bytes decompressed (the cost of MNMerge's
 * log search); -1 (as (size_t)-1) with a message for a corrupt chunk.
 */
size_t cxs_dk_store_latest(const struct cxs_dk_store *s, const uint64_t *words, size_t n,
			   struct cxs_dk_entry *out, uint8_t *found, size_t *inflated, char *err,
			   size_t errlen);

#endif /* CXLSIM_DIKTAMO_H */
