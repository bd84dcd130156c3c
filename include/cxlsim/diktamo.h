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

#include "cxlsim/config.h"
#include "cxlsim/core.h"
#include "cxlsim/dram.h"
#include "cxlsim/engine.h"
#include "cxlsim/nport.h"
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
 * 128 (serial-number arithmetic). This holds for VALs the fabric reorders by
 * less than 64; the Logging Unit unwraps each CN's TSs against the latest it
 * has seen (log_unit.c), so entries that wait long in its buffer still
 * compare.
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
	unsigned compress_threads; /* threads a dump compresses its chunks on (zpool.c) */
	bool check_dram;       /* a VAL's stamps checked against the DRAM log (log_unit.c) */
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
 * by cxs_lu_backpressure), or refuses it. With spill, a REPL that lacks room
 * is taken all the same, its entries kept past the buffer in the CN's DRAM
 * (lu/spilled_entries; the caller charges the DRAM write); CXS_TIME_INF then
 * means out of memory. n <= 64 and n <= the buffer's entries; the n word
 * addresses are distinct (one entry per word).
 */
cxs_time cxs_lu_repl(struct cxs_lu *lu, cxs_time now, uint32_t requester, uint32_t repl,
		     const uint64_t *addr, const uint64_t *value, uint32_t n, bool spill);
/*
 * CN cn failed: its REPLs that were never VALed will never be (its stores
 * were not performed: not committed), and would keep their words' later
 * entries from the DRAM log for ever; they are dropped. Returns how many.
 */
size_t cxs_lu_forget(struct cxs_lu *lu, uint32_t cn);
/* The caller held a REPL from `since` to now for lack of room. */
void cxs_lu_backpressure(struct cxs_lu *lu, cxs_time since, cxs_time now);

/*
 * The VAL of (requester's CN, repl): entry i of that REPL gets stamps[i] (or
 * stamp0 + i when stamps is NULL: the words were written one after the other
 * under one grant) and becomes valid; with values != NULL (an atomic, or a
 * store of part of a word, whose word was not known when it was replicated)
 * entry i also gets values[i]. ts is the VAL's 7-bit
 * timestamp (incremented by the CN for every VAL it sends, wrapping): for two
 * entries of one word from the same CN, TS order (cxs_dk_ts_before) and stamp
 * order must agree, which the LU checks. Returns 0, or -1 with a message when
 * no such REPL is in the buffer (or it was VALed already) or the orders
 * disagree (protocol errors; also a word given one stamp twice, or a stamp
 * not above the word's latest in the DRAM log). A refused VAL changes nothing.
 */
int cxs_lu_val(struct cxs_lu *lu, cxs_time now, uint32_t requester, uint32_t repl, uint8_t ts,
	       uint64_t stamp0, const uint64_t *stamps, const uint64_t *values, char *err,
	       size_t errlen);

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
 * entry are not produced); then the DRAM log keeps only the other members'
 * entries that entered it since the previous dump (they stay one round more,
 * log_unit.c says why) and the rest is cleared. *done: when the unit has read and compressed it
 * all (a unit cycle per entry read). 0, or -1 when out of memory (the log is
 * then unchanged). keep and dest must depend on the line only: they are
 * called once per run of consecutive log entries of one line (dest only
 * where keep is true).
 */
int cxs_lu_dump(struct cxs_lu *lu, cxs_time now, bool (*keep)(void *ctx, uint64_t line),
		uint32_t (*dest)(void *ctx, uint64_t line), void *ctx, uint32_t ndest,
		struct cxs_dk_chunk **chunks, size_t *nchunks, cxs_time *done);
void cxs_dk_chunks_free(struct cxs_dk_chunk *chunks, size_t n);
/*
 * Compress as the drain deposits (log_unit.c, "Streams"): from now on each
 * entry the drain moves to the DRAM log that keep(ctx, line) says this unit
 * saves goes, a segment at a time, into the deflate stream of its
 * destination dest(ctx, line) < ndest, on compress_threads threads while the
 * simulation goes on. A dump given the same keep, dest and ctx then only
 * finishes the streams, or, where keep's answers changed since an entry was
 * moved, streams the round again from the log: its chunks are the same
 * bytes either way. 0, or -1 out of memory (nothing changed).
 */
int cxs_lu_stream(struct cxs_lu *lu, bool (*keep)(void *ctx, uint64_t line),
		  uint32_t (*dest)(void *ctx, uint64_t line), void *ctx, uint32_t ndest);

/*
 * Recovery's search (§V-C): for each of the n word addresses, the latest
 * VALed entry (largest stamp) in the buffer and the DRAM log: found[i] = 1 and
 * out[i] set, or found[i] = 0. Entries that are not VALed are never returned.
 * Returns the number of entries scanned (the cost of TravLU): the unit reads
 * its buffer and DRAM log once for the whole list, so their entry count, or 0
 * when n is 0.
 */
size_t cxs_lu_latest(struct cxs_lu *lu, const uint64_t *words, size_t n,
		     struct cxs_dk_entry *out, uint8_t *found);
/* Every entry, buffer first (where 0) then DRAM log (where 1), in order: for checks. */
void cxs_lu_foreach(const struct cxs_lu *lu,
		    void (*fn)(void *ctx, const struct cxs_dk_entry *e, int where), void *ctx);

/* ---- the log format (what is compressed and dumped) ------------------------------ */

#define CXS_DK_LOG_SEGMENT 512      /* records per segment of byte planes */
#define CXS_DK_LOG_RECORD_BYTES 32
#define CXS_DK_LOG_TRAILER_BYTES 32

/*
 * Serialises entries (valid ones only) into a versioned little-endian record
 * stream (segments of records in byte planes, then a trailer with magic,
 * version, count and checksum; log_format.c), malloc'd in *out. Decoding
 * checks the magic, version and every length, and returns -1 with a message
 * for anything else (a truncated or corrupt log). Decoded entries have
 * valid = 1 and repl = 0 (a REPL number is not logged).
 */
int cxs_dk_log_encode(const struct cxs_dk_entry *e, size_t n, unsigned char **out, size_t *len);
int cxs_dk_log_decode(const unsigned char *in, size_t len, struct cxs_dk_entry **e, size_t *n,
		      char *err, size_t errlen);
/* zlib around them: level as given; inflate refuses corrupt input. */
int cxs_dk_compress(const unsigned char *in, size_t len, int level, unsigned char **out,
		    size_t *outlen);
int cxs_dk_inflate(const unsigned char *in, size_t len, size_t raw_len, unsigned char **out,
		   char *err, size_t errlen);

/*
 * A chunk compressed as it is made: the encoded stream of cxs_dk_log_encode,
 * deflated (zlib format, level as given) one segment at a time. add takes
 * the next n <= CXS_DK_LOG_SEGMENT valid entries (n below it only for the
 * last segment, n = 0 for none); finish writes the trailer, ends the stream
 * and hands its bytes over (malloc'd; *raw_len what they inflate to), and
 * the writer is ready for the next chunk (its deflate memory is kept). Each
 * 0, or -1 when zlib or memory failed (the writer then fails until a reset).
 * The bytes depend on the entries and the level only.
 */
struct cxs_dk_writer;
struct cxs_dk_writer *cxs_dk_writer_new(int level);
void cxs_dk_writer_free(struct cxs_dk_writer *w);
int cxs_dk_writer_add(struct cxs_dk_writer *w, const struct cxs_dk_entry *e, size_t n);
int cxs_dk_writer_finish(struct cxs_dk_writer *w, unsigned char **out, size_t *len,
			 size_t *raw_len);
void cxs_dk_writer_reset(struct cxs_dk_writer *w); /* drops what was fed */
uint64_t cxs_dk_writer_count(const struct cxs_dk_writer *w); /* records fed */

/*
 * A writer's work, in order, on up to `threads` threads (src/diktamo/zpool.c):
 * a pushed segment is added to the chain's writer (and, with finish, the
 * chunk finished into out/out_len/raw_len, finished = true) on a worker
 * while the caller goes on, or before the push returns when threads <= 1.
 * The owner may touch w, out and rc only after a wait on the chain. rc: -1
 * once a segment or the finish failed. A chain is zero-initialised with w
 * set; drop waits, frees an unclaimed out and clears rc and finished.
 */
struct cxs_dk_zseg {
	struct cxs_dk_zseg *next;
	uint32_t n;  /* entries in e */
	bool finish; /* finish the chunk after adding them */
	struct cxs_dk_entry e[CXS_DK_LOG_SEGMENT];
};
struct cxs_dk_zchain {
	struct cxs_dk_writer *w;
	int rc;
	bool finished;
	unsigned char *out;
	size_t out_len, raw_len;
	/* zpool.c's */
	struct cxs_dk_zseg *head, *tail;
	struct cxs_dk_zchain *run_next;
	bool queued;
};
struct cxs_dk_zseg *cxs_dk_zseg_new(void); /* n 0, finish false; NULL out of memory */
void cxs_dk_zchain_push(struct cxs_dk_zchain *c, struct cxs_dk_zseg *s, unsigned threads);
/* Until none of the n chains (NULL ones skipped) has work left; the caller runs queued work. */
void cxs_dk_zchain_wait(struct cxs_dk_zchain *const *c, size_t n);
void cxs_dk_zchain_drop(struct cxs_dk_zchain *c);
/* diktamo.compress_threads resolved: configured if > 0, else this rank's share of the host. */
unsigned cxs_dk_compress_threads(unsigned configured);

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

/*
 * Every entry of every kept chunk, chunk by chunk in arrival order (checks,
 * recovery reports). 0, or -1 with a message for a corrupt chunk.
 */
int cxs_dk_store_foreach(const struct cxs_dk_store *s,
			 void (*fn)(void *ctx, const struct cxs_dk_entry *e, uint32_t from),
			 void *ctx, char *err, size_t errlen);

/* ---- configuration: [diktamo] (src/diktamo/dk_config.c) ---------------------------- */

/* diktamo.fault: bugs the checkers must catch (tests). */
enum cxs_dk_fault {
	CXS_DK_FAULT_NONE = 0,
	CXS_DK_FAULT_COMMIT_BEFORE_ACK, /* stores commit without their REPL_ACKs */
	CXS_DK_FAULT_DROP_VAL,          /* the first VAL to a line's saver is never sent */
};

struct cxs_dk_params {
	uint32_t replicas;          /* N_r, 1..4 */
	struct cxs_lu_params lu;
	cxs_time dump_period;       /* 2.5 ms */
	cxs_time spill_after;       /* a head REPL's longest wait for room before it spills */
	/* recovery's costs (recovery.c) */
	cxs_time rec_dir_entry_ps;  /* TravDir: per directory entry scanned */
	cxs_time rec_log_entry_ps;  /* MNMerge: per dumped-log entry read and per word merged */
	double rec_inflate_bytes_per_ps; /* MNMerge: decompression rate of the dumped logs */
	bool check;                 /* the protocol checker (needs every node in one process) */
	enum cxs_dk_fault fault;
};
extern const struct cxs_key_table cxs_dk_key_table;
int cxs_dk_configure(const struct cxs_config *cfg, struct cxs_dk_params *p, char *err,
		     size_t errlen);

/*
 * ---- the node components ----------------------------------------------------------
 *
 * A CN running a DIKTAMO protocol has a sender (replication.c: REPLs out for
 * its cores' stores, REPL_ACKs in, VALs out when the stores are performed)
 * and a logger (logging.c: its Logging Unit on the node port: REPLs and VALs
 * in, REPL_ACKs out, the drain into the DRAM log in its local DRAM, the
 * dumps); every MN has a keeper (keeper.c: the dumped logs it stores), and
 * the first MN's keeper coordinates the dump rounds. They speak through the
 * node port (message class repl); local timers are engine events of the
 * type the node gives them, which the node hands back (cxs_dk_*_event).
 */

/* What every component knows of the cluster; read-only, shared. */
struct cxs_dk_world {
	const struct cxs_dk_params *p;
	uint32_t cns, mns, first_mn;      /* CN ids 0..cns-1, MN ids first_mn.. */
	uint32_t cores_per_cn;
	uint32_t sb_entries;              /* store-buffer entries per core (core.sq) */
	uint32_t ev_msg;                  /* the engine event type messages travel as (nport.h) */
	/* The home MN index (0..mns-1) of a line. */
	uint32_t (*home_of)(void *ctx, uint64_t line);
	void *home_ctx;
	struct cxs_dk_check *check;       /* NULL unless diktamo.check */
};

struct cxs_dk_sender;
struct cxs_dk_logger;
struct cxs_dk_keeper;

/* Tells core `core` that replication `id` has every REPL_ACK (the node calls cxs_core_replicated). */
typedef void cxs_dk_replicated_fn(void *ctx, uint32_t core, uint32_t id, cxs_time now);

struct cxs_dk_sender *cxs_dk_sender_new(const struct cxs_dk_world *w, struct cxs_nport *port,
					cxs_dk_replicated_fn *replicated, void *ctx,
					struct cxs_stats *st);
void cxs_dk_sender_free(struct cxs_dk_sender *s);
/* env.replicate of the node's cores (core.h; flags CXS_REPL_*). */
int cxs_dk_replicate(struct cxs_dk_sender *s, cxs_time now, uint32_t core,
		     const struct cxs_sb_store *st, uint32_t n, unsigned flags, uint32_t *id,
		     char *err, size_t errlen);
/*
 * env.repl_at_head: replication id, sent before its group reached the head,
 * is there now; the REPLs full Logging Units refused are sent again, as REPLs
 * from the head (which a unit never refuses: logging.c).
 */
void cxs_dk_sender_at_head(struct cxs_dk_sender *s, cxs_time now, uint32_t core, uint32_t id);
/*
 * A store of replication r.repl was performed (the CN agent's hook): its
 * stamp and the whole word it leaves; when the replication's last store is
 * performed the VALs leave. 0, or -1 with a message (a checker violation).
 */
int cxs_dk_performed(struct cxs_dk_sender *s, cxs_time now, const struct cxs_mem_req *r,
		     uint64_t stamp, uint64_t word, char *err, size_t errlen);
/*
 * CN `cn` failed (the switch says so): no more REPLs to it, and replications
 * waiting for its REPL_ACK complete without it.
 */
void cxs_dk_sender_cn_failed(struct cxs_dk_sender *s, uint32_t cn, cxs_time now);
size_t cxs_dk_sender_outstanding(const struct cxs_dk_sender *s);
/*
 * A replication has waited longer than `patience` for its REPL_ACKs: true,
 * with the oldest such one and the CNs it waits for in err (the watchdog's
 * deadlock report).
 */
bool cxs_dk_sender_stuck(const struct cxs_dk_sender *s, cxs_time now, cxs_time patience,
			 char *err, size_t errlen);

/* ev: the engine event type of the logger's own timer. dram: the CN's local DRAM. */
struct cxs_dk_logger *cxs_dk_logger_new(const struct cxs_dk_world *w, struct cxs_nport *port,
					struct cxs_dram *dram, uint32_t ev, struct cxs_stats *st);
void cxs_dk_logger_free(struct cxs_dk_logger *l);
void cxs_dk_logger_event(struct cxs_dk_logger *l, const struct cxs_event *ev);
struct cxs_lu *cxs_dk_logger_lu(struct cxs_dk_logger *l);
void cxs_dk_logger_cn_failed(struct cxs_dk_logger *l, uint32_t cn);

struct cxs_dk_keeper *cxs_dk_keeper_new(const struct cxs_dk_world *w, struct cxs_nport *port,
					uint32_t ev, struct cxs_stats *st);
void cxs_dk_keeper_free(struct cxs_dk_keeper *k);
void cxs_dk_keeper_event(struct cxs_dk_keeper *k, const struct cxs_event *ev);
struct cxs_dk_store *cxs_dk_keeper_store(struct cxs_dk_keeper *k);
void cxs_dk_keeper_cn_failed(struct cxs_dk_keeper *k, uint32_t cn);

/*
 * ---- recovery (recovery.c; papers/diktamo.md §V) -------------------------------------
 *
 * On every CN a recovery component: its cores' pause and resume, its Logging
 * Unit's search for the MNs, and the Configuration Manager's part when the
 * CN is the CM; on every MN one: directory traversal, the units' answers,
 * the merge. The nodes hand them the switch's failure reports.
 */
struct cxs_dk_rec_cn_env {
	void *ctx;
	void (*pause)(void *ctx, cxs_time now);  /* the CN's cores stop where they are */
	void (*resume)(void *ctx, cxs_time now); /* ... and go on */
	/* Optional: at the CM, every MN has recovered (before RECOV_END leaves). */
	void (*ended)(void *ctx, cxs_time now);
	/* Optional: RECOV_END is here; the recovered image's part, before resuming. */
	void (*snapshot)(void *ctx);
};
struct cxs_dk_rec_mn_env {
	void *ctx;
	/* The lines still waiting for recovery here (cxs_home_cn_failed), in any order. */
	size_t (*owned)(void *ctx, const uint64_t **lines);
	size_t (*dir_entries)(void *ctx);
	/*
	 * A line's recovered words (cxs_home_recovered); *done: its memory write
	 * is done; *dirty: they changed memory's value (the dead owner had the
	 * line modified, Fig. 15's M; else it held it clean, E).
	 */
	int (*recovered)(void *ctx, cxs_time now, uint64_t line, const uint8_t data[64],
			 uint8_t mask, cxs_time *done, bool *dirty, char *err, size_t errlen);
	/* Optional: RECOV_END is here (the CM tells the MNs too); the recovered image's part. */
	void (*snapshot)(void *ctx);
};
struct cxs_dk_rec_cn;
struct cxs_dk_rec_mn;
struct cxs_dk_rec_cn *cxs_dk_rec_cn_new(const struct cxs_dk_world *w, struct cxs_nport *port,
					struct cxs_dk_logger *logger,
					const struct cxs_dk_rec_cn_env *env, struct cxs_stats *st);
void cxs_dk_rec_cn_free(struct cxs_dk_rec_cn *r);
/* The switch reported CN cn's failure (EV_FAILED): the CM, if this is it, starts recovery. */
void cxs_dk_rec_cn_failed(struct cxs_dk_rec_cn *r, uint32_t cn, cxs_time now);
bool cxs_dk_rec_cn_paused(const struct cxs_dk_rec_cn *r);
/* The failed CNs whose recovery has ended (RECOV_END), bit per CN. */
uint64_t cxs_dk_rec_cn_recovered(const struct cxs_dk_rec_cn *r);
/* ev: the engine event type of the MN's recovery timers, which the node hands back. */
struct cxs_dk_rec_mn *cxs_dk_rec_mn_new(const struct cxs_dk_world *w, struct cxs_nport *port,
					struct cxs_dk_keeper *keeper, uint32_t ev,
					const struct cxs_dk_rec_mn_env *env, struct cxs_stats *st);
void cxs_dk_rec_mn_free(struct cxs_dk_rec_mn *r);
void cxs_dk_rec_mn_event(struct cxs_dk_rec_mn *r, const struct cxs_event *ev);
void cxs_dk_rec_mn_failed(struct cxs_dk_rec_mn *r, uint32_t cn, cxs_time now);

/*
 * ---- the protocol checker (check.c; diktamo.check) -------------------------------
 *
 * With every node in one process it records every committed replicated store
 * and, at the end (cxs_dk_check_run), requires each to be VALed with its value
 * and stamp in exactly its group's Logging Units or, once dumped, in an MN's
 * log; no DRAM log to hold an entry that is not VALed, nor a word's entries
 * out of stamp order. Commits before all REPL_ACKs are refused at once by the
 * sender, checker or not.
 */
struct cxs_dk_check;
struct cxs_dk_check *cxs_dk_check_new(uint32_t cns, uint32_t mns);
void cxs_dk_check_free(struct cxs_dk_check *c);
void cxs_dk_check_logger(struct cxs_dk_check *c, uint32_t cn, const struct cxs_lu *lu);
void cxs_dk_check_keeper(struct cxs_dk_check *c, uint32_t mn, const struct cxs_dk_store *s);
/* CN cn failed: its unit's contents no longer count (see check.c). */
void cxs_dk_check_cn_failed(struct cxs_dk_check *c, uint32_t cn);
/* A committed store: word, value, stamp, and the CNs of its group. */
int cxs_dk_check_commit(struct cxs_dk_check *c, uint64_t addr, uint64_t value, uint64_t stamp,
			const uint32_t *group, uint32_t ngroup);
/* 0, or -1 with the first violation in err (and how many there were). */
int cxs_dk_check_run(struct cxs_dk_check *c, char *err, size_t errlen);
/* Committed stores recorded so far (words). */
size_t cxs_dk_check_commits(const struct cxs_dk_check *c);

#endif /* CXLSIM_DIKTAMO_H */
