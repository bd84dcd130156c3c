/*
 * coherence.h — the CXL.mem coherence protocol between compute nodes (CNs)
 * and the home directories of memory nodes (MNs), as two state machines that
 * know nothing of MPI or of the engine's queues: they receive a message and
 * the current time, update their state, and emit messages through callbacks.
 * The node types (src/node/cn_node.c, mn_node.c) connect them to the engine
 * through the node port (nport.h); the unit tests connect them to each other
 * directly and deliver messages in chosen orders to force races.
 *
 * Protocol (MESI, blocking home, DIKTAMO §II-A / Sorin–Hill–Wood ch. 8):
 *
 *   CN -> home   GETS, GETM (also upgrades from S), PUTM (+data), PUTE,
 *                INV_ACK, RECALL_DATA (+data, dirty flag),
 *                WT (+data: a write-through of a line the CN holds in M)
 *   home -> CN   DATA_S, DATA_E, DATA_M (+data), INV, RECALL_S (downgrade
 *                the owner to S), RECALL_I (invalidate the owner), PUT_ACK,
 *                WT_ACK (the WT is in DRAM: sent when the DRAM write is done)
 *
 * The home serves one transaction per line at a time and queues the others
 * (FIFO per line); its outputs to each CN leave in processing order, so a
 * grant always reaches a CN before any later recall of the same line (the
 * fabric keeps per-pair order). Outputs to different CNs do not wait for
 * each other. Clean S copies are dropped silently, so the home's sharer
 * vector may list CNs that no longer hold the line; they simply acknowledge
 * INV. E and M copies are given back with PUTE / PUTM and wait for PUT_ACK.
 *
 * Races handled (each has a unit test):
 *   - INV reaching a CN whose upgrade (S -> M) is pending: the CN drops its
 *     copy, acknowledges, and receives the data with its DATA_M.
 *   - two CNs upgrading the same line: the home orders them; the second is
 *     invalidated by the first's transaction and gets DATA_M afterwards.
 *   - a recall crossing a write-back (PUTM/PUTE in flight): the home takes
 *     the write-back as the recall's answer and acknowledges it; the CN,
 *     waiting for PUT_ACK, ignores the recall.
 *   - INV reaching a CN that dropped its S copy silently and asked again.
 *
 * Grant epochs: the home counts, per line, the E and M grants it has made;
 * DATA_E and DATA_M carry the count. Together with a CN-local counter of the
 * writes made under the grant, (epoch, count) totally orders every write to
 * the line — the single write order that coherence promises — which is what
 * the random tester checks every load against (src/core/tester.c).
 */
#ifndef CXLSIM_COHERENCE_H
#define CXLSIM_COHERENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cxlsim/addr_map.h"
#include "cxlsim/cache.h"
#include "cxlsim/engine.h"
#include "cxlsim/fabric.h"
#include "cxlsim/line_map.h"

#define CXS_MAX_CNS 64 /* the home's sharer vector is one 64-bit word */

/* A coherence message as it travels in an engine event's payload. */
struct cxs_coh_msg {
	uint64_t line;     /* global line address (byte address >> 6) */
	uint32_t type;     /* enum cxs_msg_type */
	uint32_t src, dst; /* node ids */
	uint32_t epoch;    /* DATA_E / DATA_M: grant count of the line */
	uint8_t dirty;     /* RECALL_DATA: the data differs from memory */
	uint8_t pad[3];
	uint8_t data[CXS_LINE_BYTES];
};
_Static_assert(sizeof(struct cxs_coh_msg) <= CXS_EVENT_PAYLOAD_MAX,
	       "a coherence message fits an event payload");

bool cxs_coh_has_data(uint32_t type);

/* ---- home directory (one per MN) --------------------------------------- */

enum cxs_home_state { CXS_D_I = 0, CXS_D_S, CXS_D_EM };
enum cxs_home_busy { CXS_HB_NONE = 0, CXS_HB_INV, CXS_HB_RECALL, CXS_HB_RECOVER };

struct cxs_home_env {
	void *ctx;
	/* Sends m at time `when` (>= the current time). */
	void (*send)(void *ctx, cxs_time when, const struct cxs_coh_msg *m);
	/* A DRAM access of the line at `now`; returns when it is done. */
	cxs_time (*dram)(void *ctx, cxs_time now, uint64_t line, int is_write);
	/* Optional: initial contents of a line never written (else zeros). */
	void (*init_line)(void *ctx, uint64_t line, uint8_t out[CXS_LINE_BYTES]);
};

struct cxs_home {
	uint32_t node;
	uint32_t ncns;            /* CN node ids are 0 .. ncns-1 */
	cxs_time dir_latency;     /* directory lookup, per message */
	struct cxs_home_env env;
	struct cxs_line_map dir;  /* line -> struct cxs_home_entry */
	struct cxs_line_map mem;  /* line -> 64 bytes of contents */
	cxs_time out_clock[CXS_MAX_CNS]; /* per destination: outputs to a CN leave in processing order */
	uint64_t *busy_lines;     /* lines with a transaction in progress */
	size_t nbusy, cap_busy;
	uint64_t dead;            /* bit per CN: failed, and handled by cxs_home_cn_failed */
	bool recover_owned;       /* a failed CN's lines wait for recovery (DIKTAMO) */
	uint64_t dropped_from_dead; /* messages from failed CNs that arrived after that */
	uint64_t *c_msgs_in[CXS_MSG_TYPE_COUNT];
	uint64_t *c_queued, *c_dram_reads, *c_dram_writes, *c_invs_sent, *c_recalls;
	struct cxs_hist *h_service_ps;
};

struct cxs_home_req {
	uint32_t type, src;
	cxs_time arrived;
};

struct cxs_home_entry {
	uint64_t line;       /* the line this entry is for */
	uint8_t state;       /* enum cxs_home_state */
	uint8_t busy;        /* enum cxs_home_busy */
	uint8_t req_dead;    /* the requester of the transaction in progress failed */
	uint8_t recover;     /* busy RECALL: the recalled owner failed; waits for recovery */
	uint16_t acks_left;
	uint32_t owner;
	uint64_t sharers;    /* bit per CN node id */
	uint32_t epoch;
	uint32_t req_type, req_src; /* the transaction being served */
	cxs_time req_arrived;
	cxs_time data_ready;        /* busy INV: when the memory read for the grant is done */
	cxs_time busy_since;
	struct cxs_home_req *q;     /* waiting requests, FIFO */
	uint32_t qhead, qn, qcap;
};

/* st may be NULL (tests); counters then go nowhere. -1 when out of memory. */
int cxs_home_init(struct cxs_home *h, uint32_t node, uint32_t ncns, cxs_time dir_latency,
		  const struct cxs_home_env *env, struct cxs_stats *st);
void cxs_home_free(struct cxs_home *h);
/* Handles one message that arrived at `now`. Returns 0, or -1 with a message
 * (a protocol violation: a bug) in err. */
int cxs_home_handle(struct cxs_home *h, cxs_time now, const struct cxs_coh_msg *m, char *err,
		    size_t errlen);
/* The directory entry of a line, or NULL if the home never saw it. */
const struct cxs_home_entry *cxs_home_entry(const struct cxs_home *h, uint64_t line);
/* Memory contents of a line (zeros if never written). */
void cxs_home_read(const struct cxs_home *h, uint64_t line, uint8_t out[CXS_LINE_BYTES]);
/*
 * CN `cn` failed (a fail-stop, DIKTAMO §III-B) and the switch has said so.
 * Every line is left as if the CN had never held it: it leaves every sharer
 * vector; a line it owned (E or M: the home cannot tell them apart) goes to I
 * with its memory value as the line's value, and owned(ctx, line) reports it;
 * a transaction waiting for its acknowledgement counts it as given; a recall
 * it will never answer completes with the memory value (the line is reported
 * as owned); a transaction it requested completes without a grant; its queued
 * requests are dropped; the lines freed serve their waiting requests. From
 * then on messages from it are dropped and counted (dropped_from_dead):
 * everything it sent before its failure has arrived by the time the switch
 * detects it (the caller's detection latency). Entries are visited in
 * creation order, so the report is deterministic. 0, or -1 with a message
 * (a bug: an inconsistent directory).
 *
 * With recover_owned (DIKTAMO, whose logs hold the lost writes) a line the
 * CN owned does not take its memory value: it waits, I and busy RECOVER,
 * with requests queued behind it — as does a recall it will never answer —
 * until cxs_home_recovered gives it its recovered words.
 */
int cxs_home_cn_failed(struct cxs_home *h, cxs_time now, uint32_t cn,
		       void (*owned)(void *ctx, uint64_t line), void *ctx, char *err,
		       size_t errlen);
/*
 * Recovery's result for a line waiting after a failure (cxs_home_cn_failed
 * with recover_owned): the words of `mask` (bit w: bytes 8w..8w+7) of data
 * are written to memory — a DRAM write, also when the mask is 0 — and the
 * line serves its queued requests (or a recall waiting on the failed owner
 * completes with memory's value); *done: when the write is done. 0, or -1 with a message (the line was not
 * waiting: a bug).
 */
int cxs_home_recovered(struct cxs_home *h, cxs_time now, uint64_t line,
		       const uint8_t data[CXS_LINE_BYTES], uint8_t mask, cxs_time *done, char *err,
		       size_t errlen);
/* Directory entries (for recovery's traversal cost). */
size_t cxs_home_entries(const struct cxs_home *h);

/*
 * The oldest transaction in progress for longer than `timeout`, described in
 * buf (node, line, state, waiting for what); 0 if none.
 */
int cxs_home_stuck(const struct cxs_home *h, cxs_time now, cxs_time timeout, char *buf,
		   size_t len);
/* The same, and *awaited = the node that transaction waits for (UINT32_MAX: none). */
int cxs_home_stuck_on(const struct cxs_home *h, cxs_time now, cxs_time timeout, char *buf,
		      size_t len, uint32_t *awaited);

/* ---- compute node memory hierarchy (one per CN) ------------------------ */

/*
 * A core's memory request. The memory system is the same whatever issues the
 * requests (the random tester's cores, the out-of-order core, a DIKTAMO agent):
 * requests go in through cxs_cn_request and come back through env.complete.
 */
enum cxs_mem_op {
	CXS_OP_LOAD = 0,
	CXS_OP_STORE,        /* writes `value` (size bytes) */
	CXS_OP_STORE_STAMP,  /* writes the line's write-order stamp (8 bytes) and returns it */
	CXS_OP_FETCH_ADD,    /* atomic: returns the old value, writes old + value */
	CXS_OP_SWAP,         /* atomic: returns the old value, writes value */
	CXS_OP_PREFETCH_S,   /* brings the line to the core's L1 readable; no value */
	CXS_OP_PREFETCH_M,   /* brings the line to the core's L1 writable (a store's
				exclusive prefetch); writes nothing */
	CXS_OP_CAS,          /* atomic compare-and-swap of a word of at most 4 bytes:
				value = expected << 32 | desired; returns the old value,
				writes desired only if old == expected (a failed compare
				still takes the line writable, as a locked CMPXCHG does) */
	CXS_OP_COUNT
};

/* Request flags. */
#define CXS_REQ_WT 1u /* write-through: a remote write completes on the MN's WT_ACK */

/* Where a request would be served (cxs_cn_where). */
enum cxs_level { CXS_LVL_L1 = 1, CXS_LVL_L2, CXS_LVL_L3, CXS_LVL_LOCAL, CXS_LVL_CXL };

struct cxs_mem_req {
	uint64_t addr;
	uint64_t value;
	uint64_t tag;        /* the issuer's */
	cxs_time issued;
	uint32_t core;       /* index within the CN */
	uint32_t repl;       /* DIKTAMO: the replication this store belongs to (0: none) */
	uint8_t op;          /* enum cxs_mem_op */
	uint8_t size;        /* 1, 2, 4 or 8, naturally aligned */
	uint8_t flags;       /* CXS_REQ_* */
};

/*
 * Write-order stamp of a store: (grant epoch << 32) | write count under the
 * grant. Larger stamp = later in the line's single write order. (The count is
 * unique per grant, and one grant is held by one CN, so no core id is needed;
 * 2^32 writes under one grant would wrap it.)
 */
static inline uint64_t cxs_stamp(uint32_t epoch, uint32_t count)
{
	return ((uint64_t)epoch << 32) | count;
}

struct cxs_cn_env {
	void *ctx;
	void (*send)(void *ctx, cxs_time when, const struct cxs_coh_msg *m);
	/* The request is done at `when`; value: loaded / old / stamp. */
	void (*complete)(void *ctx, cxs_time when, const struct cxs_mem_req *r, uint64_t value);
	/* Local DRAM access (private memory); returns when it is done. */
	cxs_time (*local_dram)(void *ctx, cxs_time now, uint64_t line, int is_write);
	/*
	 * Optional (may be NULL): called when a request is performed — the moment
	 * its value is read from or written into the CN's copy — with the bytes
	 * read (loads) or the bytes now in memory (writes). For exact checkers.
	 */
	void (*perform)(void *ctx, cxs_time t, const struct cxs_mem_req *r, uint64_t value,
			int is_write);
	/*
	 * Optional: core `core` lost its private copy of a line (another core's
	 * write, an invalidation or recall from the home, an eviction). A core
	 * that performed loads out of order replays those to the line (TSO).
	 */
	void (*invalidated)(void *ctx, cxs_time t, uint32_t core, uint64_t line);
	/*
	 * Optional: the initial contents of a line of private memory that was
	 * never written back (NULL: zeros). Tier mode (tier.h) puts a workload's
	 * initial image in local memory.
	 */
	void (*init_local)(void *ctx, uint64_t line, uint8_t out[CXS_LINE_BYTES]);
	/*
	 * Optional: a store of a replication (r->repl != 0, DIKTAMO) was
	 * performed at t, as the `stamp`-th write of the line's order
	 * (cxs_stamp), leaving `word` in its aligned 8-byte word. Called before
	 * anything else can see the store.
	 */
	void (*replicated_write)(void *ctx, cxs_time t, const struct cxs_mem_req *r, uint64_t stamp,
				 uint64_t word);
};

struct cxs_cn_params {
	uint32_t ncores;                  /* <= 32 */
	struct cxs_cache_geom l1, l2, l3; /* latencies in core cycles */
	cxs_time cycle_ps;
	const struct cxs_addr_map *map;
	uint32_t first_mn_node;           /* MN i is node first_mn_node + i */
};

struct cxs_cn;

/* st may be NULL (tests). Returns NULL with a message in err on bad parameters. */
struct cxs_cn *cxs_cn_new(uint32_t node, const struct cxs_cn_params *p,
			  const struct cxs_cn_env *env, struct cxs_stats *st, char *err,
			  size_t errlen);
void cxs_cn_free(struct cxs_cn *cn);
/* A core's request at `now`. -1 with a message for an invalid request. */
int cxs_cn_request(struct cxs_cn *cn, cxs_time now, const struct cxs_mem_req *r, char *err,
		   size_t errlen);
/* A coherence message from a home. -1 with a message on a protocol violation. */
int cxs_cn_handle(struct cxs_cn *cn, cxs_time now, const struct cxs_coh_msg *m, char *err,
		  size_t errlen);
/* The oldest request outstanding for longer than timeout (node, line, states); 0 if none. */
int cxs_cn_stuck(const struct cxs_cn *cn, cxs_time now, cxs_time timeout, char *buf,
		 size_t len);
/*
 * Where core's access to addr would be served now (enum cxs_level); a line with
 * a miss in flight counts as its memory. With `write`, a line the CN holds
 * only shared (S) needs the home, so it counts as CXL memory too.
 */
int cxs_cn_where(struct cxs_cn *cn, uint32_t core, uint64_t addr, bool write);
/*
 * Is a fill of addr's line from local memory still in flight at `now`? A
 * local fill enters the CN's caches at once and becomes usable at its DRAM
 * time, so cxs_cn_where (which has no clock) sees it as a hit; the core's
 * glue asks this too, so that a load to the line counts as a miss (or an LFB
 * hit) exactly as one to a CXL line in flight does.
 */
bool cxs_cn_local_pending(const struct cxs_cn *cn, uint64_t addr, cxs_time now);
/* Requests waiting for the protocol (MSHRs and write-backs in flight). */
size_t cxs_cn_pending(const struct cxs_cn *cn);
/*
 * The CXL lines a CN holds, as a failure leaves them (a --fail run records
 * them for the checks): every L3 line in S, E or M with its data (for M, the
 * mask of words written under its grant and not yet sent to memory: what the
 * failure loses), every line with a request waiting for the home, every line
 * whose write-back is in flight. Deterministic order.
 */
enum cxs_cn_hold { CXS_HOLD_S, CXS_HOLD_E, CXS_HOLD_M, CXS_HOLD_PENDING, CXS_HOLD_WRITEBACK };
typedef void cxs_cn_held_fn(void *ctx, uint64_t line, enum cxs_cn_hold how, const uint8_t *data,
			    uint8_t unsaved_words);
void cxs_cn_lines_held(const struct cxs_cn *cn, cxs_cn_held_fn *fn, void *ctx);
/* The CN's protocol state of a line, for tests: "I", "S", "E", "M", "L" + transient. */
const char *cxs_cn_line_state(const struct cxs_cn *cn, uint64_t line);
/* Reads `size` bytes at addr as the CN sees them now (tests), if cached: 1, else 0. */
int cxs_cn_peek(const struct cxs_cn *cn, uint64_t addr, uint8_t size, uint64_t *value);

#endif /* CXLSIM_COHERENCE_H */
