/*
 * log_unit.c — a CN's Logging Unit (DIKTAMO §IV-B, §IV-C, §IV-E; Table II):
 * the SRAM Log Buffer that REPLs and VALs update, the DRAM log that VALed
 * entries move to, and the dump that serialises, splits and compresses the
 * DRAM log for the MNs. The messages themselves are the caller's
 * (src/diktamo/replication.c); this file is the unit's state and timing.
 *
 *   REPL ──> SRAM Log Buffer ──drain──> DRAM log ──dump──> chunks for MNs
 *            cap entries                max_log entries     (keep, dest,
 *            arrival order              log order           encode, zlib)
 *
 * SRAM Log Buffer. cap = sram_bytes / CXS_DK_ENTRY_BYTES entries (4 KB / 24
 * = 170, Table II). A REPL of n words takes n entries at once or, when fewer
 * are free, none (back-pressure: the caller keeps the REPL and offers it
 * again after a drain; nothing is half-allocated), unless the caller asks
 * for a spill: then the entries are allocated past the buffer, in the CN's
 * DRAM (logging.c charges the DRAM write and says when it spills). An entry is
 *   allocated  by the REPL: addr, value, requester, repl; stamp 0, valid 0;
 *   VALed      by the VAL naming (requester's CN, repl): stamp, ts, valid 1,
 *              and the value for an atomic;
 * and leaves the buffer only VALed, by drain, or with its whole REPL never
 * VALed, by a forget (its CN failed). The SRAM access (sram_ps, 4 ns) is the
 * REPL's latency: the REPL_ACK may leave when it is over.
 *
 * The buffer's layout. An entry stays in one slot (struct buf_entry) from
 * its REPL until it leaves, and three lists thread the slots:
 *
 *   arrival list  oldest -> ... -> newest       every entry: foreach, forget
 *   word chain    word_rec first -> ... -> last  a word's entries, arrival order
 *   REPL chain    repl_rec first -> ...          a REPL's entries, word order
 *
 * A word's record counts its entries (n) and those not VALed (unvaled); a
 * REPL's counts those still in the buffer and says whether it was VALed.
 * Two maps find the records (struct id_map: word address -> word_rec, CN <<
 * 32 | repl -> repl_rec), and a record lives as long as it has an entry, so
 * records and map keys number at most the entries. Each entry also carries
 * its arrival number (entries taken before it), which orders entries of
 * different words without walking the list. Slots, records and map slots
 * are allocated for cap at cxs_lu_new and grown only by a spill's REPL
 * (make_room), so a VAL, a drain and a forget never allocate. A VAL looks
 * its REPL up and walks the chain of each of its words; a drain touches
 * the entries of the words it moves. A word is movable when it has entries
 * and unvaled is 0; it becomes so only at a VAL or a forget, which put it
 * on cand (once: word_rec.cand), and a drain looks at cand only — the
 * words a full DRAM log leaves movable go back on it. A word on cand that
 * a later REPL blocked again is passed over.
 *
 * Measured (cachegrind, 16 x 4 ocean_cp size 64 proactive, 121 212 REPLs and
 * VALs, 355 140 entries, the buffer's peak 170): the layout before this one
 * kept the entries in an array in arrival order, compacted as they left, and
 * a VAL (finding its REPL, then checking every VALed entry of its words) and
 * a drain (selecting the candidate words' entries, then copying every
 * 56-byte entry after the first that left) were each a pass over the whole
 * buffer: cxs_lu_drain 265 M and cxs_lu_val 107 M instructions, ~880 a VAL,
 * ~750 an entry drained; the Logging Unit's buffer 392 M of the run's 5.49
 * G. This layout: VAL 41 M (~340 each), drain 95 M with its removals (~270
 * an entry), REPL 56 M (it now links lists and fills two maps: 166 -> 465 a
 * REPL), 192 M in all; the run 5.29 G (-3.7 %). In wall time (ocean_cp
 * size 128, 7 runs of each alternating, Release) the median ratio of pairs
 * old/new was 0.999, the pairs 0.89..1.13 apart on a shared machine: the
 * gain is below what that measurement resolves.
 *
 * VAL checks (protocol errors, refused with a message, nothing changed): the
 * REPL is in the buffer and not VALed yet; for every VALed entry of the same
 * word still in the buffer, the stamps differ and, if it is from the same
 * CN, TS order agrees with stamp order (TSs unwrapped, ts_unwrap below); and
 * the stamp is above the word's latest stamp in the DRAM log. TS is compared
 * only inside the buffer: the DRAM log keeps the 7 bits only. Of several
 * violations, the message names the first met walking the REPL's words.
 * The last check is what makes "a word's entries in the DRAM log are in
 * stamp order" an invariant rather than a hope: under coherence the write
 * ordered before a logged one had its REPL acknowledged — so in the buffer —
 * before it was performed, and the blocking rule below holds the later one
 * back until it has moved. It is also the one that costs: a lookup of every
 * VALed word in the DRAM log's index, two cache misses each in a log of
 * 10^5 entries, which at 16 x 4 was 3.5 % of a proactive run and as much
 * again in keeping the index current at every drain. So it is made only
 * with check_dram (diktamo.check, which every diktamo test turns on, and
 * the default of cxs_lu_default_params); without it the index is brought
 * up to date only when something looks a word up (recovery's search), and
 * diktamo.check's own checker is what would report a word out of order.
 *
 * Drain (§IV-C: "it only pushes the entries from that word into the DRAM log
 * in timestamp order"). A word whose buffer entries include one not VALed
 * moves nothing (that one's stamp may be smaller); a word whose entries are
 * all VALed moves all of them. The moves keep the buffer's arrival order
 * across words, and give each word's places in that order to its entries
 * sorted by stamp: with arrivals [w1 s20, w2 s5, w1 s10] the DRAM log gets
 * [w1 s10, w2 s5, w1 s20]. One unit cycle (cycle_ps, 2 ns at 500 MHz) per
 * entry moved; the entries leave the buffer when drain is called, so a REPL
 * offered in those cycles finds the room a little early (at most `moved`
 * cycles; the caller may hold it until the returned time instead). When the
 * DRAM log has room for only part of the movable entries, a prefix in that
 * order moves — for every word the entries with the smallest stamps — and
 * the rest waits for a dump (counted in lu/dram_full_drains;
 * cxs_lu_needs_flush is then true).
 *
 * DRAM log. max_log = dram_bytes / CXS_DK_ENTRY_BYTES entries (18 MiB / 24 =
 * 786 432) of real struct cxs_dk_entry, uncompressed, in log order; its
 * size is counted at CXS_DK_ENTRY_BYTES per entry (the hardware's), while
 * the simulator's copy takes sizeof(struct cxs_dk_entry) = 32. The array and
 * its index are allocated at cxs_lu_new for max_log entries, so drain never
 * fails for memory; the pages are touched only as the log fills (the
 * allocator maps large blocks lazily), so 16 idle LUs in one process cost
 * little.
 *
 * Index (recovery searches many words, TravLU). Built lazily: a drain only
 * appends, and the first lookup after it (a VAL under check_dram, or
 * recovery) links the entries appended since, in log order, as appending
 * them one by one would have. A chained hash over the log itself: head[] holds, per bucket, the position of the latest entry of one
 * of the words hashing there, next[] links the latest entries of the other
 * words of the bucket. Appending an entry unlinks the word's previous latest
 * (found on the way), so a chain holds each distinct word once and its
 * length is the bucket's distinct words: nbuckets = the power of two >=
 * the log's entries (at least MIN_BUCKETS) keeps it below 1 on average at
 * any fill, so a lookup or an append is O(1) expected and cxs_lu_latest is
 * O(n) for n words, not O(n x log). The array is allocated for max_log
 * (never grown, so drain cannot fail) but only its first nbuckets are in
 * use: they double as the log fills, each chain splitting into its two
 * halves, and shrink back when a dump empties the log. A table sized for a
 * full log from the start spread a few thousand entries over 4 MB, and
 * every VAL's lookup missed the caches (60 % of the VAL's time at 16 x 4).
 * Chosen over a sorted copy (O(log) per lookup, but a sort per drain or a
 * lazily rebuilt copy that a const query could not own) and over an
 * open-addressing table (it would have to grow inside drain, which cannot
 * fail). Stored as position + 1 with 0 for "none", so calloc's zeroed,
 * lazily mapped pages are an empty index. Only lookups use it; nothing
 * iterates over it, so no result depends on hash order. Clearing at a dump
 * walks the log (O(entries)), not the buckets.
 *
 * Watermark. cxs_lu_needs_flush is true from ceil(watermark x max_log)
 * entries on; the caller then starts an early flush (§IV-E). The paper gives
 * no value. 0.75 is ours: at the paper's largest fill rate (Fig. 13: up to
 * 18 MB between two dumps 2.5 ms apart, 300 M entries/s) the last quarter
 * (196 608 entries) takes 0.65 ms to fill, far more than the microseconds the
 * Logging Units need to synchronise through the MNs before flushing; here
 * the dump empties the log when it is called.
 *
 * Dump (§IV-E). The unit reads the DRAM log from older to newer, keeps the
 * entries it is in charge of (keep(ctx, line), line = addr >> 6), groups
 * them by dest(ctx, line) keeping log order inside each group, and each
 * group becomes one chunk: its entries encoded (log_format.c) and compressed
 * with zlib at zlib_level, chunks in ascending dest order. Then it clears
 * what it saved, and the other members' entries that were in the log at the
 * previous dump already; those of other members that entered since stay one
 * round more. The paper clears the whole log ("synchronize again, and clear
 * the logs"), but a round does not stop the VALs in flight: a store VALed
 * here just before a dump may reach its saver's unit just after that unit
 * dumped, and clearing it here would leave one copy where N_r were promised
 * until the next round. An entry that was here at one dump reached its saver
 * (whose VAL left in the same event) long before the next — rounds are
 * diktamo.dump_period apart, a VAL's skew is a flight — so the saver has sent
 * it by then; the protocol checker holds every run to it (check.c). The cost:
 * the log holds up to two rounds of the other members' entries. A dump takes
 * one unit cycle per entry read (all of them, saved or not). On out of
 * memory nothing is cleared.
 *
 * Streams. The paper's unit compresses "as [the data] is being deposited
 * into the DRAM buffer" (§VII, Log Size), and so does this one once given
 * its keep and dest (cxs_lu_stream; the logger does): the drain puts each
 * entry it moves that keep says this unit saves into its destination's
 * stream, a writer (log_format.c) fed a segment of CXS_DK_LOG_SEGMENT entries
 * at a time on the spare processors (zpool.c) while the simulation goes on,
 * and a dump only finishes the streams (the last, short segment and the
 * trailer). Before, every chunk was compressed at the dump, and the dump
 * after the workload, which holds most of a short run's log, was a tenth of
 * the 16 x 4 ocean_cp 128 proactive run's event loop with nothing beside it.
 * The dump's pass over the log (above) still asks keep for every entry, and
 * the streams are its chunks only if they hold exactly the entries it keeps
 * (zs_in, a byte per log entry, records which went in); keep's answers change
 * when a member dies or when a dump saves all, and then the dump throws the
 * streams away and streams the round again from the log before finishing.
 * The chunks are the same bytes either way, and the same as a unit that was
 * never given keep (unit.diktamo). Memory: a stream holds zlib's level-9
 * state (about 256 KB) from its round's first entry, reused from round to
 * round: 16 units x 16 MNs take 64 MB at 16 x 4.
 *
 * Statistics (component "lu", when st != NULL):
 *   repls                  REPLs accepted
 *   repls_refused          REPL offers refused for lack of room (each offer)
 *   entries_logged         SRAM entries allocated (words of accepted REPLs)
 *   vals                   VALs accepted
 *   vals_reordered         VALs that came after a later VAL of their CN
 *   vals_behind            VALs for a word with a VALed later-stamped entry
 *                          in the buffer already (another CN's, or reordered)
 *   backpressure_ps        time REPLs were held for lack of room
 *                          (cxs_lu_backpressure)
 *   spilled_entries        entries allocated past the buffer (spill)
 *   drained_entries        entries moved to the DRAM log
 *   drain_busy_ps          unit time spent moving them
 *   dram_full_drains       drains that left movable entries for lack of room
 *   sram_peak_entries      most entries in the SRAM buffer at once
 *   dram_peak_bytes        largest DRAM log, at CXS_DK_ENTRY_BYTES an entry
 *   round_peak_bytes       most entries moved to the DRAM log between two
 *                          dumps, at CXS_DK_ENTRY_BYTES an entry (Fig. 13's
 *                          "log generated between consecutive dumps")
 *   dumps                  dumps (also of an empty log)
 *   dump_entries           entries saved in chunks
 *   dump_others_entries    entries of other members' shares cleared at dumps
 *   dump_raw_bytes         encoded bytes before compression
 *   dump_compressed_bytes  bytes after compression (what goes to the MNs)
 *   dump_busy_ps           unit time reading the log for dumps
 */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxlsim/cache.h"
#include "cxlsim/diktamo.h"
#include "diktamo_priv.h"

#define NONE UINT32_MAX
#define MIN_BUCKETS 4096u /* the DRAM log index's buckets in use when the log is small */
#define MAX_REPL_WORDS 64

enum {
	C_REPLS,
	C_REPLS_REFUSED,
	C_ENTRIES_LOGGED,
	C_VALS,
	C_VALS_REORDERED,
	C_VALS_BEHIND,
	C_BACKPRESSURE_PS,
	C_SPILLED,
	C_FORGOTTEN,
	C_DRAINED,
	C_DRAIN_BUSY_PS,
	C_DRAM_FULL,
	C_SRAM_PEAK,
	C_DRAM_PEAK,
	C_ROUND_PEAK,
	C_DUMPS,
	C_DUMP_ENTRIES,
	C_DUMP_OTHERS,
	C_DUMP_RAW,
	C_DUMP_COMPRESSED,
	C_DUMP_BUSY_PS,
	NCOUNTERS
};

static const struct {
	const char *name, *unit, *desc;
} counter_def[NCOUNTERS] = {
	[C_REPLS] = {"repls", "messages", "REPLs accepted into the SRAM Log Buffer"},
	[C_REPLS_REFUSED] = {"repls_refused", "messages",
			     "REPL offers refused for lack of room in the SRAM Log Buffer"},
	[C_ENTRIES_LOGGED] = {"entries_logged", "entries", "SRAM Log Buffer entries allocated"},
	[C_VALS] = {"vals", "messages", "VALs accepted"},
	[C_VALS_REORDERED] = {"vals_reordered", "messages",
			      "VALs that arrived after a later VAL of the same CN (the fabric reordered them)"},
	[C_VALS_BEHIND] = {"vals_behind", "messages",
			   "VALs for a word whose buffer already held a VALed entry with a later stamp (from any CN): drained in stamp order all the same"},
	[C_BACKPRESSURE_PS] = {"backpressure_ps", "ps",
			       "time REPLs were held for lack of room in the SRAM Log Buffer"},
	[C_SPILLED] = {"spilled_entries", "entries",
		       "entries of REPLs from a store-buffer head that waited diktamo.spill_after for room and were then kept in the CN's DRAM instead"},
	[C_FORGOTTEN] = {"forgotten_entries", "entries",
			 "entries of a failed CN's REPLs never VALed, dropped when its failure was detected"},
	[C_DRAINED] = {"drained_entries", "entries", "entries moved to the DRAM log"},
	[C_DRAIN_BUSY_PS] = {"drain_busy_ps", "ps", "unit time moving entries to the DRAM log"},
	[C_DRAM_FULL] = {"dram_full_drains", "drains",
			 "drains that left movable entries in the buffer for lack of DRAM log room"},
	[C_SRAM_PEAK] = {"sram_peak_entries", "entries", "most entries in the SRAM Log Buffer"},
	[C_DRAM_PEAK] = {"dram_peak_bytes", "bytes",
			 "largest DRAM log (24 bytes an entry, uncompressed)"},
	[C_ROUND_PEAK] = {"round_peak_bytes", "bytes",
			  "most log (24 bytes an entry, uncompressed) moved to the DRAM log between two dumps (Fig. 13)"},
	[C_DUMPS] = {"dumps", "dumps", "log dumps"},
	[C_DUMP_ENTRIES] = {"dump_entries", "entries", "entries this unit saved in dumps"},
	[C_DUMP_OTHERS] = {"dump_others_entries", "entries",
			   "entries cleared at dumps for other replica group members to save"},
	[C_DUMP_RAW] = {"dump_raw_bytes", "bytes", "encoded dump bytes before compression"},
	[C_DUMP_COMPRESSED] = {"dump_compressed_bytes", "bytes",
			       "compressed dump bytes sent to the MNs"},
	[C_DUMP_BUSY_PS] = {"dump_busy_ps", "ps", "unit time reading the DRAM log for dumps"},
};

/*
 * An SRAM Log Buffer entry, in a stable slot: the entry, its place in the
 * buffer's arrival order (the list and its number), its word's chain, and
 * its REPL. A slot keeps its contents until reused, and nothing is
 * allocated inside a drain or a forget.
 */
struct buf_entry {
	struct cxs_dk_entry e;
	uint64_t seq;          /* its VAL's TS unwrapped (VALed entries) */
	uint64_t arrival;      /* entries taken before it, since cxs_lu_new */
	uint32_t prev, next;   /* arrival order */
	uint32_t wprev, wnext; /* its word's entries, arrival order */
	uint32_t word;         /* its word's record */
	uint32_t rnext;        /* the next entry of its REPL (idx order) */
	uint32_t rec;          /* its REPL's record */
	uint32_t idx;          /* its word's index in the REPL */
};

/* A word with entries in the buffer. */
struct word_rec {
	uint64_t addr;
	uint32_t first, last; /* its entries, arrival order */
	uint32_t n;           /* entries in the buffer */
	uint32_t unvaled;     /* of them not VALed: the word is blocked while > 0 */
	uint32_t hnext;       /* the next record of its bucket of word_map */
	bool cand;            /* in lu->cand */
};

/* A REPL with entries in the buffer. */
struct repl_rec {
	uint64_t key;   /* repl_key(CN, REPL number) */
	uint32_t first; /* its entries, idx order, chained by rnext */
	uint32_t left;  /* of them still in the buffer */
	uint32_t hnext; /* the next record of its bucket of repl_map */
	bool valed;
};

/*
 * A record by its 64-bit key (a word's address, a REPL's CN and number):
 * chained hashing, the chains running through the records themselves
 * (hnext), a 4-byte head per bucket, as many buckets as the buffer has
 * entries (a power of two), so a chain holds less than one record on average.
 * The heads of a 4 KB buffer's unit take 1 KB. These maps were open
 * addressing with 16-byte slots, 8 KB a map at twice the entries: at 16 x 4
 * the units' slots were evicted between two REPLs by the rest of the model,
 * and the first probe of each REPL's and VAL's lookups was a third of their
 * time; now a lookup that finds its key reads the record it needs anyway,
 * and one that does not stops at a NONE head. Only regrowth walks the
 * chains (it decides chain order, nothing else), so no result depends on
 * hash order.
 */
struct id_map {
	uint32_t *head; /* per bucket: its first record, NONE: empty */
	uint32_t mask;  /* buckets - 1 */
	uint64_t seed;  /* key + seed is mixed (diktamo_priv.h) */
};

/* Drain's sort keys. */
struct stamp_key {
	uint64_t stamp;
	uint32_t pos;
};
struct arrival_key {
	uint64_t arrival;
	uint32_t pos;
};

/* One destination's chunk in the making: its writer's chain and the segment being filled. */
struct lu_stream {
	struct cxs_dk_zchain chain;
	struct cxs_dk_zseg *seg;
	uint64_t count; /* entries given to it this round */
};

struct cxs_lu {
	struct cxs_lu_params p;
	uint32_t node;

	/* SRAM Log Buffer (entries past cap: spilled to DRAM) */
	uint32_t cap;
	uint32_t room;           /* slots in every per-entry array: cap, more after spills */
	uint32_t nbuf;
	uint32_t nvaled;
	struct buf_entry *buf;   /* room slots */
	uint32_t oldest, newest; /* the arrival order list's ends */
	uint64_t arrivals;
	uint32_t *free_slot;     /* stack, room */
	uint32_t nfree_slot;
	struct word_rec *words;  /* room records: a word has an entry */
	uint32_t *free_word;
	uint32_t nfree_word;
	struct id_map word_map;  /* addr -> words[] */
	struct repl_rec *repls;  /* room records: a REPL has an entry */
	uint32_t *free_repl;
	uint32_t nfree_repl;
	struct id_map repl_map;  /* CN << 32 | repl -> repls[] */
	uint32_t *cand;          /* words[] that may be movable, once each, room */
	uint32_t ncand;
	struct stamp_key *skeys;  /* scratch, room */
	struct arrival_key *sel;  /* scratch, room: the positions a drain fills */
	uint32_t *place;          /* scratch, room: per position, the entry it gets */

	/* DRAM log and its index */
	uint32_t max_log;
	uint32_t nlog;
	uint32_t wm_entries;
	struct cxs_dk_entry *log;
	uint32_t *gen;  /* per entry: the dumps done before it entered */
	uint32_t dumps;
	uint64_t round_moved; /* entries moved to the DRAM log since the last dump */
	uint32_t nindexed; /* the log's first entries that are in the index */
	uint32_t *next; /* position + 1 of the bucket's next word, 0: end */
	uint32_t *head; /* per bucket, position + 1 of its first word, 0: empty */
	uint64_t mask;  /* nbuckets - 1: the buckets in use */
	uint64_t max_mask; /* the buckets allocated - 1 */

	/* Streams (module header): per destination, the chunk the drain is filling */
	bool (*keep)(void *ctx, uint64_t line);
	uint32_t (*dest)(void *ctx, uint64_t line);
	void *sctx;
	uint32_t ndest;             /* streams[] */
	struct lu_stream *streams;
	uint8_t *zs_in;             /* per log entry: 1 if it is in its destination's stream */
	bool zs_broken;             /* out of memory while streaming: the dump streams again */
	bool run_open, run_keep;    /* keep's answer for the last line the drain moved */
	uint64_t run_line;
	uint32_t run_dest;

	/* per requester CN: its latest VAL's TS unwrapped, 0 before the first */
	uint64_t seq_last[256];

	uint64_t *c[NCOUNTERS];
	uint64_t local[NCOUNTERS];
};

/*
 * A CN numbers its VALs to this unit without gaps, 7 bits wrapping, and the
 * fabric reorders them by less than 64: a TS is taken as the nearest number
 * (ahead by 0..63 or behind by 1..64) to the latest one seen from its CN.
 * Unwrapped, TSs compare however long their entries wait in the buffer (a
 * VALed entry waits for the word's un-VALed ones, which under
 * DIKTAMO-proactive may be many VALs later).
 */
static uint64_t ts_unwrap(const struct cxs_lu *lu, uint32_t cn, uint8_t ts)
{
	uint64_t last = lu->seq_last[cn & 0xff];
	if (last == 0)
		return (UINT64_C(1) << 32) + ts; /* room to go behind */
	uint32_t d = (uint32_t)(ts - (last & 0x7f)) & 0x7f;
	return d <= 63 ? last + d : last - (128 - d);
}

void cxs_lu_default_params(struct cxs_lu_params *p)
{
	p->sram_bytes = 4096;                       /* Table II */
	p->dram_bytes = UINT64_C(18) << 20;         /* Table II: 18 MB */
	p->cycle_ps = cxs_period_ps(500000000);     /* 500 MHz */
	p->sram_ps = 4000;                          /* Table II: 4 ns */
	p->watermark = 0.75;                        /* see the module header */
	p->zlib_level = 9;                          /* §IV-E: gzip -9 */
	p->compress_threads = 1;                    /* diktamo.compress_threads */
	p->check_dram = true;                       /* diktamo.check = false turns it off */
}

/* Buckets for `room` records: a power of two, at least room. */
static uint32_t map_slots(uint32_t room)
{
	uint32_t s = 16;
	while (s < room)
		s <<= 1;
	return s;
}

static int make_room(struct cxs_lu *lu, uint32_t need);

struct cxs_lu *cxs_lu_new(const struct cxs_lu_params *p, uint32_t node, struct cxs_stats *st)
{
	assert(p->sram_bytes >= CXS_DK_ENTRY_BYTES && p->dram_bytes >= CXS_DK_ENTRY_BYTES);
	assert(p->dram_bytes / CXS_DK_ENTRY_BYTES < UINT32_MAX);
	assert(p->watermark > 0.0 && p->watermark <= 1.0);
	assert(p->cycle_ps > 0 && p->zlib_level >= -1 && p->zlib_level <= 9);
	struct cxs_lu *lu = calloc(1, sizeof *lu);
	if (lu == NULL)
		return NULL;
	lu->p = *p;
	lu->node = node;
	lu->cap = p->sram_bytes / CXS_DK_ENTRY_BYTES;
	lu->max_log = (uint32_t)(p->dram_bytes / CXS_DK_ENTRY_BYTES);
	double wm = p->watermark * (double)lu->max_log;
	uint64_t w = (uint64_t)wm;
	if ((double)w < wm)
		w++;
	lu->wm_entries = (uint32_t)(w < 1 ? 1 : w > lu->max_log ? lu->max_log : w);
	uint64_t nb = 1;
	while (nb < lu->max_log)
		nb <<= 1;
	lu->max_mask = nb - 1;
	lu->mask = (nb < MIN_BUCKETS ? nb : MIN_BUCKETS) - 1;
	lu->oldest = lu->newest = NONE;
	lu->word_map.seed = 7 * DK_GOLDEN;
	lu->repl_map.seed = 5 * DK_GOLDEN;
	lu->log = malloc((size_t)lu->max_log * sizeof *lu->log);
	lu->gen = malloc((size_t)lu->max_log * sizeof *lu->gen);
	lu->next = malloc((size_t)lu->max_log * sizeof *lu->next);
	lu->head = calloc(nb, sizeof *lu->head);
	lu->zs_in = calloc(lu->max_log, 1);
	if (!lu->log || !lu->gen || !lu->next || !lu->head || !lu->zs_in ||
	    make_room(lu, lu->cap) != 0)
		goto fail;
	for (int i = 0; i < NCOUNTERS; i++) {
		lu->c[i] = &lu->local[i];
		if (st == NULL)
			continue;
		lu->c[i] = cxs_stats_counter(st, "lu", counter_def[i].name, counter_def[i].unit,
					     counter_def[i].desc);
		if (lu->c[i] == NULL)
			goto fail;
	}
	return lu;
fail:
	cxs_lu_free(lu);
	return NULL;
}

static void streams_free(struct cxs_lu *lu);

void cxs_lu_free(struct cxs_lu *lu)
{
	if (lu == NULL)
		return;
	streams_free(lu);
	free(lu->zs_in);
	free(lu->buf);
	free(lu->free_slot);
	free(lu->words);
	free(lu->free_word);
	free(lu->word_map.head);
	free(lu->repls);
	free(lu->free_repl);
	free(lu->repl_map.head);
	free(lu->cand);
	free(lu->skeys);
	free(lu->sel);
	free(lu->place);
	free(lu->log);
	free(lu->gen);
	free(lu->next);
	free(lu->head);
	free(lu);
}

static void bump_max(uint64_t *c, uint64_t v)
{
	if (v > *c)
		*c = v;
}

/* ---- the SRAM Log Buffer's maps, records and lists ------------------------------------ */

static inline uint32_t *map_bucket(const struct id_map *m, uint64_t key)
{
	return &m->head[(uint32_t)(dk_mix64(key + m->seed) >> 32) & m->mask];
}

/* The word's record, or NONE. */
static inline uint32_t word_find(const struct cxs_lu *lu, uint64_t addr)
{
	uint32_t id = *map_bucket(&lu->word_map, addr);
	while (id != NONE && lu->words[id].addr != addr)
		id = lu->words[id].hnext;
	return id;
}

static void word_link(struct cxs_lu *lu, uint32_t id)
{
	uint32_t *b = map_bucket(&lu->word_map, lu->words[id].addr);
	lu->words[id].hnext = *b;
	*b = id;
}

static void word_unlink(struct cxs_lu *lu, uint32_t id)
{
	uint32_t *p = map_bucket(&lu->word_map, lu->words[id].addr);
	while (*p != id) {
		assert(*p != NONE);
		p = &lu->words[*p].hnext;
	}
	*p = lu->words[id].hnext;
}

/* The REPL's record, or NONE. */
static inline uint32_t repl_find(const struct cxs_lu *lu, uint64_t key)
{
	uint32_t id = *map_bucket(&lu->repl_map, key);
	while (id != NONE && lu->repls[id].key != key)
		id = lu->repls[id].hnext;
	return id;
}

static void repl_link(struct cxs_lu *lu, uint32_t id)
{
	uint32_t *b = map_bucket(&lu->repl_map, lu->repls[id].key);
	lu->repls[id].hnext = *b;
	*b = id;
}

static void repl_unlink(struct cxs_lu *lu, uint32_t id)
{
	uint32_t *p = map_bucket(&lu->repl_map, lu->repls[id].key);
	while (*p != id) {
		assert(*p != NONE);
		p = &lu->repls[*p].hnext;
	}
	*p = lu->repls[id].hnext;
}

/*
 * Both maps with `buckets` buckets, their records relinked (after make_room
 * grew the record arrays). 0, or -1 (the maps unchanged).
 */
static int maps_regrow(struct cxs_lu *lu, uint32_t buckets)
{
	uint32_t *wh = malloc((size_t)buckets * sizeof *wh);
	uint32_t *rh = malloc((size_t)buckets * sizeof *rh);
	if (wh == NULL || rh == NULL) {
		free(wh);
		free(rh);
		return -1;
	}
	for (uint32_t i = 0; i < buckets; i++)
		wh[i] = rh[i] = NONE;
	struct id_map ow = lu->word_map, orp = lu->repl_map;
	lu->word_map.head = wh;
	lu->repl_map.head = rh;
	lu->word_map.mask = lu->repl_map.mask = buckets - 1;
	for (uint32_t b = 0; ow.head != NULL && b <= ow.mask; b++)
		for (uint32_t id = ow.head[b], nx; id != NONE; id = nx) {
			nx = lu->words[id].hnext;
			word_link(lu, id);
		}
	for (uint32_t b = 0; orp.head != NULL && b <= orp.mask; b++)
		for (uint32_t id = orp.head[b], nx; id != NONE; id = nx) {
			nx = lu->repls[id].hnext;
			repl_link(lu, id);
		}
	free(ow.head);
	free(orp.head);
	return 0;
}

static inline uint64_t repl_key(uint32_t cn, uint32_t repl)
{
	return (uint64_t)cn << 32 | repl;
}

/* The word's record, made when it has no entry yet. */
static uint32_t word_get(struct cxs_lu *lu, uint64_t addr)
{
	uint32_t id = word_find(lu, addr);
	if (id != NONE)
		return id;
	assert(lu->nfree_word > 0); /* a word has an entry: records <= entries <= room */
	id = lu->free_word[--lu->nfree_word];
	lu->words[id] = (struct word_rec){.addr = addr, .first = NONE, .last = NONE};
	word_link(lu, id);
	return id;
}

/* A word that may have become movable (all its entries VALed) goes to cand, once. */
static inline void cand_add(struct cxs_lu *lu, uint32_t id)
{
	struct word_rec *w = &lu->words[id];
	if (w->cand || w->unvaled != 0 || w->n == 0)
		return;
	w->cand = true;
	lu->cand[lu->ncand++] = id; /* ncand <= words with an entry <= room */
}

/*
 * Takes entry s out of the buffer: its lists, its word (freed with its last
 * entry) and its REPL (freed with its last entry); the slot is free.
 */
static void entry_remove(struct cxs_lu *lu, uint32_t s)
{
	struct buf_entry *b = &lu->buf[s];
	if (b->prev != NONE)
		lu->buf[b->prev].next = b->next;
	else
		lu->oldest = b->next;
	if (b->next != NONE)
		lu->buf[b->next].prev = b->prev;
	else
		lu->newest = b->prev;
	struct word_rec *w = &lu->words[b->word];
	if (b->wprev != NONE)
		lu->buf[b->wprev].wnext = b->wnext;
	else
		w->first = b->wnext;
	if (b->wnext != NONE)
		lu->buf[b->wnext].wprev = b->wprev;
	else
		w->last = b->wprev;
	w->n--;
	if (!b->e.valid)
		w->unvaled--;
	else
		lu->nvaled--;
	if (w->n == 0) {
		assert(!w->cand); /* a word in cand has a VALed entry, and only drain takes those */
		word_unlink(lu, b->word);
		lu->free_word[lu->nfree_word++] = b->word;
	}
	struct repl_rec *r = &lu->repls[b->rec];
	if (--r->left == 0) {
		repl_unlink(lu, b->rec);
		lu->free_repl[lu->nfree_repl++] = b->rec;
	}
	lu->free_slot[lu->nfree_slot++] = s;
	lu->nbuf--;
}

/* ---- DRAM log index ------------------------------------------------------------ */

static uint32_t *bucket_of(const struct cxs_lu *lu, uint64_t addr)
{
	return &lu->head[dk_word_hash(addr) & lu->mask];
}

static void index_catch_up(struct cxs_lu *lu);

/* The word's latest entry in the DRAM log, or NULL. */
static const struct cxs_dk_entry *dram_latest(struct cxs_lu *lu, uint64_t addr)
{
	index_catch_up(lu);
	for (uint32_t q = *bucket_of(lu, addr); q != 0; q = lu->next[q - 1])
		if (lu->log[q - 1].addr == addr)
			return &lu->log[q - 1];
	return NULL;
}

/*
 * Doubles the buckets in use: each old bucket's chain splits between it and
 * its new twin by the next hash bit (a chain holds distinct words, and the
 * order inside a chain is immaterial: lookups match the address).
 */
static void index_grow(struct cxs_lu *lu)
{
	uint64_t old = lu->mask + 1, mask = 2 * old - 1;
	for (uint64_t b = 0; b < old; b++) {
		uint32_t q = lu->head[b];
		lu->head[b] = 0;
		lu->head[b + old] = 0;
		while (q != 0) {
			uint32_t nxt = lu->next[q - 1];
			uint32_t *h = &lu->head[dk_word_hash(lu->log[q - 1].addr) & mask];
			lu->next[q - 1] = *h;
			*h = q;
			q = nxt;
		}
	}
	lu->mask = mask;
}

/*
 * Links log entry pos into the index as its word's latest, unlinking the
 * word's previous latest (found on the way). Entries come in log order, so
 * under the VAL checks each is its word's largest stamp; should one not be
 * (a protocol error that only diktamo.check's checker reports when the
 * VAL's DRAM check is off), the larger stamp stays the latest, so recovery
 * still gets the latest version.
 */
static void index_link(struct cxs_lu *lu, uint32_t pos)
{
	const struct cxs_dk_entry *e = &lu->log[pos];
	uint32_t *b = bucket_of(lu, e->addr);
	uint32_t *link = b;
	for (uint32_t q = *b; q != 0; link = &lu->next[q - 1], q = *link) {
		if (lu->log[q - 1].addr == e->addr) {
			assert(lu->log[q - 1].stamp < e->stamp || !lu->p.check_dram);
			if (lu->log[q - 1].stamp > e->stamp)
				return;
			*link = lu->next[q - 1];
			break;
		}
	}
	lu->next[pos] = *b;
	*b = pos + 1;
}

/* Brings the index up to the log: the entries appended since the last lookup. */
static void index_catch_up(struct cxs_lu *lu)
{
	for (uint32_t pos = lu->nindexed; pos < lu->nlog; pos++) {
		if (pos >= lu->mask + 1 && lu->mask < lu->max_mask)
			index_grow(lu);
		index_link(lu, pos);
	}
	lu->nindexed = lu->nlog;
}

/* Appends e (the caller checked there is room); the index takes it in at the next lookup. */
static void log_append(struct cxs_lu *lu, const struct cxs_dk_entry *e, uint32_t gen)
{
	assert(lu->nlog < lu->max_log);
	uint32_t pos = lu->nlog++;
	lu->log[pos] = *e;
	lu->gen[pos] = gen;
}

/* ---- streams: the chunks compressed as the drain deposits (module header) ----------- */

/* Room for ndest streams (they are only ever added). 0, or -1 out of memory. */
static int streams_room(struct cxs_lu *lu, uint32_t ndest)
{
	if (ndest <= lu->ndest)
		return 0;
	struct lu_stream *st = calloc(ndest, sizeof *st);
	if (st == NULL)
		return -1;
	/* Chains are linked by address while queued: move only idle ones. */
	for (uint32_t d = 0; d < lu->ndest; d++) {
		struct cxs_dk_zchain *c = &lu->streams[d].chain;
		cxs_dk_zchain_wait(&c, 1);
		st[d] = lu->streams[d];
	}
	free(lu->streams);
	lu->streams = st;
	lu->ndest = ndest;
	return 0;
}

/* Forgets what the streams were given this round (they are idle afterwards). */
static void streams_clear(struct cxs_lu *lu)
{
	for (uint32_t d = 0; d < lu->ndest; d++) {
		struct lu_stream *st = &lu->streams[d];
		cxs_dk_zchain_drop(&st->chain);
		if (st->chain.w != NULL)
			cxs_dk_writer_reset(st->chain.w);
		free(st->seg);
		st->seg = NULL;
		st->count = 0;
	}
	lu->zs_broken = false;
}

static void streams_free(struct cxs_lu *lu)
{
	streams_clear(lu);
	for (uint32_t d = 0; d < lu->ndest; d++)
		cxs_dk_writer_free(lu->streams[d].chain.w);
	free(lu->streams);
	lu->streams = NULL;
	lu->ndest = 0;
}

/* Gives log entry pos to destination d's stream. 0, or -1 out of memory. */
static int stream_add(struct cxs_lu *lu, uint32_t d, uint32_t pos)
{
	struct lu_stream *st = &lu->streams[d];
	if (st->chain.w == NULL && (st->chain.w = cxs_dk_writer_new(lu->p.zlib_level)) == NULL)
		return -1;
	if (st->seg == NULL && (st->seg = cxs_dk_zseg_new()) == NULL)
		return -1;
	st->seg->e[st->seg->n++] = lu->log[pos];
	st->count++;
	if (st->seg->n == CXS_DK_LOG_SEGMENT) {
		cxs_dk_zchain_push(&st->chain, st->seg, lu->p.compress_threads);
		st->seg = NULL;
	}
	return 0;
}

/* The drain moved log entry pos: into its destination's stream if this unit saves it. */
static void stream_entry(struct cxs_lu *lu, uint32_t pos)
{
	lu->zs_in[pos] = 0;
	if (lu->keep == NULL || lu->zs_broken)
		return;
	uint64_t line = lu->log[pos].addr >> CXS_LINE_SHIFT;
	if (!lu->run_open || line != lu->run_line) {
		lu->run_open = true;
		lu->run_line = line;
		lu->run_keep = lu->keep(lu->sctx, line);
		lu->run_dest = lu->run_keep ? lu->dest(lu->sctx, line) : 0;
		assert(!lu->run_keep || lu->run_dest < lu->ndest);
	}
	if (!lu->run_keep)
		return;
	if (stream_add(lu, lu->run_dest, pos) != 0) {
		lu->zs_broken = true;
		return;
	}
	lu->zs_in[pos] = 1;
}

int cxs_lu_stream(struct cxs_lu *lu, bool (*keep)(void *ctx, uint64_t line),
		  uint32_t (*dest)(void *ctx, uint64_t line), void *ctx, uint32_t ndest)
{
	if (streams_room(lu, ndest) != 0)
		return -1;
	streams_clear(lu);
	for (uint32_t p = 0; p < lu->nlog; p++)
		lu->zs_in[p] = 0;
	lu->keep = keep;
	lu->dest = dest;
	lu->sctx = ctx;
	lu->run_open = false;
	return 0;
}

/*
 * After a dump: the log keeps only the entries of other members' shares that
 * entered it since the previous dump (retain[p]), in order, re-indexed.
 */
static void log_compact(struct cxs_lu *lu, const uint8_t *retain)
{
	uint32_t n = lu->nlog;
	for (uint32_t p = 0; p < lu->nindexed; p++)
		*bucket_of(lu, lu->log[p].addr) = 0;
	lu->nlog = 0;
	lu->nindexed = 0;
	lu->mask = (lu->max_mask + 1 < MIN_BUCKETS ? lu->max_mask + 1 : MIN_BUCKETS) - 1;
	for (uint32_t p = 0; p < n && retain; p++) {
		if (!retain[p])
			continue;
		struct cxs_dk_entry e = lu->log[p]; /* p >= its new place */
		log_append(lu, &e, lu->gen[p]);
		lu->zs_in[lu->nlog - 1] = 0;
	}
}

/* ---- REPL and VAL ----------------------------------------------------------------- */

/*
 * Room for `need` buffer entries in every per-entry array, record pool and
 * map (spills grow them; cxs_lu_new makes the first cap). 0, or -1 with
 * room unchanged (an array already grown stays so).
 */
static int make_room(struct cxs_lu *lu, uint32_t need)
{
	if (need <= lu->room)
		return 0;
	uint32_t room = lu->room ? lu->room : need;
	while (room < need)
		room *= 2;
#define GROW(f)                                                                         \
	do {                                                                            \
		void *p_ = realloc(lu->f, (size_t)room * sizeof *lu->f);                \
		if (p_ == NULL)                                                         \
			return -1;                                                      \
		lu->f = p_;                                                             \
	} while (0)
	GROW(buf);
	GROW(free_slot);
	GROW(words);
	GROW(free_word);
	GROW(repls);
	GROW(free_repl);
	GROW(cand);
	GROW(skeys);
	GROW(sel);
	GROW(place);
#undef GROW
	uint32_t buckets = map_slots(room);
	if ((lu->word_map.head == NULL || buckets > lu->word_map.mask + 1) &&
	    maps_regrow(lu, buckets) != 0)
		return -1;
	/* The new slots and records on the free stacks, the lowest on top. */
	for (uint32_t k = room; k-- > lu->room;) {
		lu->free_slot[lu->nfree_slot++] = k;
		lu->free_word[lu->nfree_word++] = k;
		lu->free_repl[lu->nfree_repl++] = k;
	}
	lu->room = room;
	return 0;
}

cxs_time cxs_lu_repl(struct cxs_lu *lu, cxs_time now, uint32_t requester, uint32_t repl,
		     const uint64_t *addr, const uint64_t *value, uint32_t n, bool spill)
{
	assert(n >= 1 && n <= MAX_REPL_WORDS);
	assert(n <= lu->cap); /* a REPL larger than the buffer could never be taken */
	if (lu->nbuf + n > lu->cap) {
		if (!spill) {
			(*lu->c[C_REPLS_REFUSED])++;
			return CXS_TIME_INF;
		}
		if (make_room(lu, lu->nbuf + n) != 0)
			return CXS_TIME_INF;
		*lu->c[C_SPILLED] += n;
	}
	uint32_t cn = requester >> 8;
	assert(repl_find(lu, repl_key(cn, repl)) == NONE);
#ifndef NDEBUG
	for (uint32_t i = 0; i < n; i++) {
		assert((addr[i] & 7) == 0);
		for (uint32_t j = 0; j < i; j++)
			assert(addr[j] != addr[i]); /* one entry per word of a REPL */
	}
#endif
	assert(lu->nfree_repl > 0 && lu->nfree_slot >= n);
	uint32_t rec = lu->free_repl[--lu->nfree_repl];
	lu->repls[rec] = (struct repl_rec){.key = repl_key(cn, repl), .first = NONE, .left = n};
	repl_link(lu, rec);
	uint32_t *link = &lu->repls[rec].first;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t s = lu->free_slot[--lu->nfree_slot];
		uint32_t wid = word_get(lu, addr[i]);
		struct word_rec *w = &lu->words[wid];
		struct buf_entry *b = &lu->buf[s];
		*b = (struct buf_entry){
			.e = {.addr = addr[i], .value = value[i], .requester = requester, .repl = repl},
			.arrival = lu->arrivals++,
			.prev = lu->newest,
			.next = NONE,
			.wprev = w->last,
			.wnext = NONE,
			.word = wid,
			.rnext = NONE,
			.rec = rec,
			.idx = i,
		};
		if (lu->newest != NONE)
			lu->buf[lu->newest].next = s;
		else
			lu->oldest = s;
		lu->newest = s;
		if (w->last != NONE)
			lu->buf[w->last].wnext = s;
		else
			w->first = s;
		w->last = s;
		w->n++;
		w->unvaled++;
		*link = s;
		link = &b->rnext;
	}
	lu->nbuf += n;
	(*lu->c[C_REPLS])++;
	*lu->c[C_ENTRIES_LOGGED] += n;
	bump_max(lu->c[C_SRAM_PEAK], lu->nbuf);
	return now + lu->p.sram_ps;
}

/* A forget is rare (a CN's failure detected): one walk of the buffer. */
size_t cxs_lu_forget(struct cxs_lu *lu, uint32_t cn)
{
	size_t gone = 0;
	for (uint32_t s = lu->oldest, nx; s != NONE; s = nx) {
		const struct buf_entry *b = &lu->buf[s];
		nx = b->next;
		if (b->e.valid || b->e.requester >> 8 != cn)
			continue;
		uint32_t wid = b->word;
		entry_remove(lu, s);
		gone++;
		/* The word may have been blocked by this entry only (its record outlives it then). */
		if (lu->words[wid].n > 0)
			cand_add(lu, wid);
	}
	*lu->c[C_FORGOTTEN] += gone;
	return gone;
}

void cxs_lu_backpressure(struct cxs_lu *lu, cxs_time since, cxs_time now)
{
	assert(now >= since);
	*lu->c[C_BACKPRESSURE_PS] += now - since;
}

int cxs_lu_val(struct cxs_lu *lu, cxs_time now, uint32_t requester, uint32_t repl, uint8_t ts,
	       uint64_t stamp0, const uint64_t *stamps, const uint64_t *values, char *err,
	       size_t errlen)
{
	uint32_t cn = requester >> 8;
	ts &= 0x7f;
	uint64_t seq = ts_unwrap(lu, cn, ts);
	uint32_t rec = repl_find(lu, repl_key(cn, repl));
	if (rec == NONE) {
		snprintf(err, errlen, "LU %u: VAL of REPL %u from CN %u, which is not in the SRAM "
				      "Log Buffer",
			 lu->node, repl, cn);
		return -1;
	}
	struct repl_rec *r = &lu->repls[rec];
	if (r->valed) {
		snprintf(err, errlen, "LU %u: second VAL of REPL %u from CN %u", lu->node, repl, cn);
		return -1;
	}
	/*
	 * Check everything first: a refused VAL changes nothing. A REPL not VALed
	 * has all its entries (only drain takes entries out, VALed ones; a forget
	 * takes whole REPLs), its words distinct: each word's chain is walked
	 * once, for its VALed entries.
	 */
	bool behind = false;
	for (uint32_t s = r->first; s != NONE; s = lu->buf[s].rnext) {
		const struct buf_entry *b = &lu->buf[s];
		uint64_t stamp = stamps != NULL ? stamps[b->idx] : stamp0 + b->idx;
		for (uint32_t q = lu->words[b->word].first; q != NONE; q = lu->buf[q].wnext) {
			const struct buf_entry *ob = &lu->buf[q];
			const struct cxs_dk_entry *o = &ob->e;
			if (!o->valid)
				continue;
			behind |= o->stamp > stamp;
			if (o->stamp == stamp) {
				snprintf(err, errlen,
					 "LU %u: word %#" PRIx64 " gets stamp %#" PRIx64
					 " twice (REPL %u from CN %u and REPL %u from CN %u)",
					 lu->node, o->addr, stamp, o->repl, o->requester >> 8, repl, cn);
				return -1;
			}
			if (o->requester >> 8 == cn && (ob->seq < seq) != (o->stamp < stamp)) {
				snprintf(err, errlen,
					 "LU %u: CN %u word %#" PRIx64 ": TS %u stamp %#" PRIx64
					 " (REPL %u) against TS %u stamp %#" PRIx64
					 " (REPL %u): TS order and stamp order disagree",
					 lu->node, cn, o->addr, ts, stamp, repl, o->ts, o->stamp, o->repl);
				return -1;
			}
		}
	}
	for (uint32_t s = r->first; s != NONE && lu->p.check_dram; s = lu->buf[s].rnext) {
		const struct buf_entry *b = &lu->buf[s];
		uint64_t stamp = stamps != NULL ? stamps[b->idx] : stamp0 + b->idx;
		const struct cxs_dk_entry *d = dram_latest(lu, b->e.addr);
		if (d != NULL && d->stamp >= stamp) {
			snprintf(err, errlen,
				 "LU %u: word %#" PRIx64 " stamp %#" PRIx64 " (REPL %u from CN %u) "
				 "is not above its latest in the DRAM log, %#" PRIx64,
				 lu->node, b->e.addr, stamp, repl, cn, d->stamp);
			return -1;
		}
	}
	for (uint32_t s = r->first; s != NONE; s = lu->buf[s].rnext) {
		struct buf_entry *b = &lu->buf[s];
		b->e.stamp = stamps != NULL ? stamps[b->idx] : stamp0 + b->idx;
		b->e.ts = ts;
		b->seq = seq;
		b->e.valid = 1;
		if (values != NULL)
			b->e.value = values[b->idx];
		lu->words[b->word].unvaled--;
		cand_add(lu, b->word);
	}
	r->valed = true;
	if (seq > lu->seq_last[cn & 0xff])
		lu->seq_last[cn & 0xff] = seq;
	else if (lu->seq_last[cn & 0xff] != 0)
		(*lu->c[C_VALS_REORDERED])++;
	*lu->c[C_VALS_BEHIND] += behind;
	lu->nvaled += r->left;
	(*lu->c[C_VALS])++;
	return 0;
}

/* ---- drain ------------------------------------------------------------------------- */

/* Sorts a word's few entries by stamp (insertion sort: a word has few entries in the buffer). */
static void sort_stamps(struct stamp_key *k, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++) {
		struct stamp_key x = k[i];
		uint32_t j = i;
		for (; j > 0 && k[j - 1].stamp > x.stamp; j--)
			k[j] = k[j - 1];
		k[j] = x;
	}
}

static int arrival_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct arrival_key *)a)->arrival;
	uint64_t y = ((const struct arrival_key *)b)->arrival;
	return (x > y) - (x < y);
}

/*
 * Sorts a drain's positions by arrival: runs, one per word, each in order
 * already. Insertion sort for the few of a usual drain, qsort past that
 * (arrival numbers are distinct, so the order is total).
 */
static void sort_arrivals(struct arrival_key *k, uint32_t n)
{
	if (n > 32) {
		qsort(k, n, sizeof *k, arrival_cmp);
		return;
	}
	for (uint32_t i = 1; i < n; i++) {
		struct arrival_key x = k[i];
		uint32_t j = i;
		for (; j > 0 && k[j - 1].arrival > x.arrival; j--)
			k[j] = k[j - 1];
		k[j] = x;
	}
}

cxs_time cxs_lu_drain(struct cxs_lu *lu, cxs_time now, uint32_t *moved)
{
	*moved = 0;
	/*
	 * The movable words are in cand: a word becomes movable only by a VAL
	 * or a forget (either puts it there), and one a drain leaves movable (a
	 * full DRAM log) goes back. Each gives its entries' arrival positions
	 * (sel) the entries sorted by stamp (place).
	 */
	uint32_t nsel = 0;
	for (uint32_t c = 0; c < lu->ncand; c++) {
		struct word_rec *w = &lu->words[lu->cand[c]];
		w->cand = false;
		assert(w->n > 0);
		if (w->unvaled != 0)
			continue; /* blocked again by a later REPL */
		uint32_t i = 0;
		for (uint32_t q = w->first; q != NONE; q = lu->buf[q].wnext)
			lu->skeys[i++] = (struct stamp_key){lu->buf[q].e.stamp, q};
		sort_stamps(lu->skeys, i); /* stamps of a word are distinct (VAL checks) */
		i = 0;
		for (uint32_t q = w->first; q != NONE; q = lu->buf[q].wnext) {
			lu->place[q] = lu->skeys[i++].pos;
			lu->sel[nsel++] = (struct arrival_key){lu->buf[q].arrival, q};
		}
	}
	lu->ncand = 0;
	if (nsel == 0)
		return now;
	assert(lu->nvaled >= nsel);
	sort_arrivals(lu->sel, nsel);
	uint32_t m = nsel;
	if (lu->max_log - lu->nlog < nsel) {
		/* A prefix moves; the words of the rest stay movable. */
		m = lu->max_log - lu->nlog;
		(*lu->c[C_DRAM_FULL])++;
		for (uint32_t i = m; i < nsel; i++)
			cand_add(lu, lu->buf[lu->sel[i].pos].word);
	}
	lu->run_open = false; /* keep's answers may have changed since the last drain */
	for (uint32_t i = 0; i < m; i++) {
		uint32_t s = lu->place[lu->sel[i].pos];
		log_append(lu, &lu->buf[s].e, lu->dumps);
		stream_entry(lu, lu->nlog - 1);
		entry_remove(lu, s);
	}
	if (m == 0)
		return now;
	*moved = m;
	cxs_time busy = (cxs_time)m * lu->p.cycle_ps;
	*lu->c[C_DRAINED] += m;
	*lu->c[C_DRAIN_BUSY_PS] += busy;
	bump_max(lu->c[C_DRAM_PEAK], (uint64_t)lu->nlog * CXS_DK_ENTRY_BYTES);
	lu->round_moved += m;
	bump_max(lu->c[C_ROUND_PEAK], lu->round_moved * CXS_DK_ENTRY_BYTES);
	return now + busy;
}

uint32_t cxs_lu_sram_free(const struct cxs_lu *lu)
{
	return lu->nbuf < lu->cap ? lu->cap - lu->nbuf : 0;
}

uint64_t cxs_lu_dram_bytes(const struct cxs_lu *lu)
{
	return (uint64_t)lu->nlog * CXS_DK_ENTRY_BYTES;
}

bool cxs_lu_needs_flush(const struct cxs_lu *lu)
{
	return lu->nlog >= lu->wm_entries;
}

/* ---- dump -------------------------------------------------------------------------- */

void cxs_dk_chunks_free(struct cxs_dk_chunk *chunks, size_t n)
{
	if (chunks == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		free(chunks[i].bytes);
	free(chunks);
}

int cxs_lu_dump(struct cxs_lu *lu, cxs_time now, bool (*keep)(void *ctx, uint64_t line),
		uint32_t (*dest)(void *ctx, uint64_t line), void *ctx, uint32_t ndest,
		struct cxs_dk_chunk **chunks, size_t *nchunks, cxs_time *done)
{
	uint32_t nl = lu->nlog;
	uint32_t *to = NULL;
	uint8_t *retain = NULL;
	size_t *count = NULL;
	struct cxs_dk_chunk *out = NULL;
	struct cxs_dk_zchain **wait = NULL;
	size_t nout = 0;
	int rc = -1;

	*chunks = NULL;
	*nchunks = 0;
	if (streams_room(lu, ndest) != 0)
		goto fail;
	count = calloc((size_t)ndest + 1, sizeof *count);
	wait = calloc((size_t)ndest + 1, sizeof *wait);
	if (!count || !wait)
		goto fail;
	if (nl > 0) {
		to = malloc((size_t)nl * sizeof *to);
		retain = calloc(nl, 1);
		if (!to || !retain)
			goto fail;
	}
	/*
	 * Which destination each entry goes to. keep and dest are asked once per
	 * run of entries of one line (a store group's words are consecutive in
	 * the log): keep hashes the line to its group and saver, two divisions an
	 * entry otherwise. The streams hold what the drain gave them; they are
	 * this dump's chunks if they were given exactly the entries kept now
	 * (keep may have changed since: a member died, or this dump saves all).
	 */
	bool same = !lu->zs_broken && keep == lu->keep && dest == lu->dest && ctx == lu->sctx;
	size_t kept = 0, groups = 0, retained = 0;
	uint64_t run_line = 0;
	bool run_keep = false, run_open = false;
	uint32_t run_dest = 0;
	for (uint32_t p = 0; p < nl; p++) {
		uint64_t line = lu->log[p].addr >> CXS_LINE_SHIFT;
		if (!run_open || line != run_line) {
			run_open = true;
			run_line = line;
			run_keep = keep(ctx, line);
			run_dest = run_keep ? dest(ctx, line) : 0;
		}
		to[p] = NONE;
		same = same && lu->zs_in[p] == run_keep;
		if (!run_keep) {
			/* Another member's: kept until the dump after the one it was first in. */
			retain[p] = lu->gen[p] == lu->dumps;
			retained += retain[p];
			continue;
		}
		uint32_t d = run_dest;
		assert(d < ndest);
		to[p] = d;
		groups += count[d]++ == 0;
		kept++;
	}
	if (!same) {
		/* The round streamed again from the log, as the drain would have given it. */
		streams_clear(lu);
		for (uint32_t p = 0; p < nl; p++)
			if (to[p] != NONE && stream_add(lu, to[p], p) != 0)
				goto fail;
	}
	/* Every destination's chunk finished at once (zpool.c: on spare processors). */
	if (groups > 0 && (out = calloc(groups, sizeof *out)) == NULL)
		goto fail;
	for (uint32_t d = 0; d < ndest; d++) {
		struct lu_stream *st = &lu->streams[d];
		assert(st->count == count[d]);
		if (count[d] == 0)
			continue;
		if (st->seg == NULL && (st->seg = cxs_dk_zseg_new()) == NULL)
			goto fail;
		st->seg->finish = true;
		cxs_dk_zchain_push(&st->chain, st->seg, lu->p.compress_threads);
		st->seg = NULL;
		wait[nout] = &st->chain;
		out[nout].dest = d;
		out[nout].nentries = count[d];
		nout++;
	}
	cxs_dk_zchain_wait(wait, nout);
	size_t raw_total = 0, packed_total = 0;
	bool failed = false;
	for (size_t i = 0; i < nout; i++) {
		struct cxs_dk_zchain *c = wait[i];
		failed = failed || c->rc != 0 || !c->finished;
		out[i].bytes = c->out;
		out[i].len = c->out_len;
		out[i].raw_len = c->raw_len;
		c->out = NULL;
		c->finished = false;
		raw_total += out[i].raw_len;
		packed_total += out[i].len;
	}
	if (failed)
		goto fail;
	for (uint32_t d = 0; d < ndest; d++)
		lu->streams[d].count = 0;
	cxs_time busy = (cxs_time)nl * lu->p.cycle_ps;
	(*lu->c[C_DUMPS])++;
	*lu->c[C_DUMP_ENTRIES] += kept;
	*lu->c[C_DUMP_OTHERS] += nl - kept - retained;
	*lu->c[C_DUMP_RAW] += raw_total;
	*lu->c[C_DUMP_COMPRESSED] += packed_total;
	*lu->c[C_DUMP_BUSY_PS] += busy;
	log_compact(lu, retain);
	lu->dumps++;
	lu->round_moved = 0;
	*chunks = out;
	*nchunks = nout;
	*done = now + busy;
	out = NULL;
	rc = 0;
	goto out;
fail:
	/* The log is as it was; the streams are not: the next dump streams again. */
	streams_clear(lu);
	lu->zs_broken = true;
out:
	cxs_dk_chunks_free(out, nout);
	free(wait);
	free(to);
	free(retain);
	free(count);
	return rc;
}

/* ---- recovery's search and checks ------------------------------------------------------ */

size_t cxs_lu_latest(struct cxs_lu *lu, const uint64_t *words, size_t n,
		     struct cxs_dk_entry *out, uint8_t *found)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const struct cxs_dk_entry *best = dram_latest(lu, words[i]);
		uint32_t wid = word_find(lu, words[i]);
		for (uint32_t q = wid != NONE ? lu->words[wid].first : NONE; q != NONE;
		     q = lu->buf[q].wnext) {
			const struct cxs_dk_entry *e = &lu->buf[q].e;
			if (e->valid && (best == NULL || e->stamp > best->stamp))
				best = e;
		}
		found[i] = best != NULL;
		if (best != NULL)
			out[i] = *best;
	}
	return (size_t)lu->nbuf + lu->nlog;
}

void cxs_lu_foreach(const struct cxs_lu *lu,
		    void (*fn)(void *ctx, const struct cxs_dk_entry *e, int where), void *ctx)
{
	for (uint32_t s = lu->oldest; s != NONE; s = lu->buf[s].next)
		fn(ctx, &lu->buf[s].e, 0);
	for (uint32_t p = 0; p < lu->nlog; p++)
		fn(ctx, &lu->log[p], 1);
}
