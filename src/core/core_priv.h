/*
 * core_priv.h — what the out-of-order core's files share: core.c (frontend,
 * loads, retirement, prefetchers, counters) and store_buffer.c (the TSO store
 * buffer and the remote-store protocols that drive it).
 */
#ifndef CXLSIM_CORE_PRIV_H
#define CXLSIM_CORE_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "cxlsim/core.h"

/* name, unit, definition (HDF5 attribute), Intel event it stands for */
#define CORE_COUNTERS(X)                                                                           \
	X(cycles, "cycles", "cycles in the region of interest (CPU_CLK_UNHALTED.THREAD)")            \
	X(instructions, "instructions", "instructions dispatched, memory and non-memory (INST_RETIRED.ANY)") \
	X(loads, "loads", "demand loads (MEM_INST_RETIRED.ALL_LOADS)")                               \
	X(stores, "stores", "stores (MEM_INST_RETIRED.ALL_STORES)")                                  \
	X(atomics, "ops", "atomic read-modify-writes (MEM_INST_RETIRED.LOCK_LOADS)")                 \
	X(fences, "ops", "full fences")                                                              \
	X(stalls_total, "cycles", "cycles the frontend dispatched nothing: window, queue or buffer full, drain, or waiting for a value (CYCLE_ACTIVITY.STALLS_TOTAL)") \
	X(stalls_l1d_miss, "cycles", "stall cycles while a demand load that missed L1 or hit a fill buffer is outstanding (CYCLE_ACTIVITY.STALLS_L1D_MISS)") \
	X(stalls_l2_miss, "cycles", "stall cycles while a demand load that missed L2 is outstanding (CYCLE_ACTIVITY.STALLS_L2_MISS)") \
	X(stalls_l3_miss, "cycles", "stall cycles while a demand load that missed L3 is outstanding (CYCLE_ACTIVITY.STALLS_L3_MISS)") \
	X(bound_on_stores, "cycles", "stall cycles with the store queue full and no demand load missing L1 (EXE_ACTIVITY.BOUND_ON_STORES)") \
	X(l1d_misses, "loads", "demand loads that missed L1 and were not LFB hits (MEM_LOAD_RETIRED.L1_MISS)") \
	X(l2_misses, "loads", "demand loads that missed L2 (MEM_LOAD_RETIRED.L2_MISS)")              \
	X(l3_misses, "loads", "demand loads that missed L3: served by local DRAM or CXL memory (MEM_LOAD_RETIRED.L3_MISS)") \
	X(cxl_loads, "loads", "demand loads that missed L3 to CXL memory")                            \
	X(lfb_hits, "loads", "demand loads to a line already being filled (MEM_LOAD_RETIRED.FB_HIT)") \
	X(forwarded, "loads", "loads served by store-to-load forwarding")                            \
	X(replays, "loads", "loads replayed because their line was lost before they retired (TSO; MACHINE_CLEARS.MEMORY_ORDERING)") \
	X(dep_waits, "ops", "loads and stores that entered the window before the load their address or value depends on had completed (dataflow)") \
	X(demand_reads, "loads", "demand loads that missed L3 (OFFCORE_REQUESTS.L3_MISS_DEMAND_DATA_RD; CAMP's P12, OFFCORE_REQUESTS.DEMAND_DATA_RD, also counts those that hit L3)") \
	X(demand_reads_outstanding, "cycles", "sum over cycles of L3-missing demand loads outstanding (OFFCORE_REQUESTS_OUTSTANDING.L3_MISS_DEMAND_DATA_RD; P11 also counts L3 hits); / demand_reads = mean latency") \
	X(cycles_with_demand_read, "cycles", "cycles with at least one L3-missing demand load outstanding (OFFCORE_REQUESTS_OUTSTANDING.CYCLES_WITH_L3_MISS_DEMAND_DATA_RD; P13 also counts L3 hits); outstanding / this = MLP") \
	X(offcore_demand_reads_outstanding, "cycles", "sum over cycles of L2-missing demand loads outstanding, L3 hits included (OFFCORE_REQUESTS_OUTSTANDING.DEMAND_DATA_RD: CAMP's P11); / l2_misses (OFFCORE_REQUESTS.DEMAND_DATA_RD, P12) = mean latency") \
	X(cycles_with_offcore_demand_read, "cycles", "cycles with at least one L2-missing demand load outstanding, L3 hits included (OFFCORE_REQUESTS_OUTSTANDING.CYCLES_WITH_DEMAND_DATA_RD: CAMP's P13)") \
	X(l1_pf_requests, "requests", "L1 prefetcher requests, L2 hits included (no offcore event counts these; see l1_pf_offcore)") \
	X(l1_pf_from_mem, "requests", "L1 prefetches that missed L3 (served from memory): R_Mem's numerator") \
	X(l1_pf_offcore, "requests", "L1 prefetches that missed L2, the ones the uncore answers (OFFCORE_RESPONSE.PF_L1D_AND_SW.ANY_RESPONSE): R_Mem's denominator") \
	X(l2_pf_requests, "requests", "L2 prefetcher requests (L2_RQSTS.ALL_PF)")                     \
	X(l2_pf_l3_hits, "requests", "L2 prefetches that hit L3 (L2_RQSTS.PF_MISS minus LLC misses)") \
	X(store_prefetches, "requests", "exclusive prefetches sent for stores (RFO prefetch)")        \
	X(sb_transactions, "transactions", "store-buffer head transactions (a group of coalesced stores)") \
	X(sb_coalesced, "stores", "stores that joined another store's transaction (coalescing)")      \
	X(sb_drain_ps_total, "ps", "time store-buffer transactions took from issue to commit")      \
	X(remote_stores, "stores", "stores to CXL memory committed (the remote writes of DIKTAMO Fig. 16)") \
	X(rw_rob_ps, "ps", "remote stores: sum of the time from entering the window to retiring (Fig. 16 ROB->ROBHead)") \
	X(rw_sb_ps, "ps", "remote stores: sum of the time from retiring to reaching the store-buffer head (Fig. 16 ROBHead->SBHead)") \
	X(rw_coh_ps, "ps", "remote stores: sum of the time from the store-buffer head to the line writable (Fig. 16 SBHead->CohEnd; under wb and wt the store's own request, which acquires and merges)") \
	X(rw_repl_ps, "ps", "remote stores: sum of the time the last REPL_ACK came after the line was writable (Fig. 16 Replication Time)") \
	X(repl_at_entry, "transactions", "replications sent before their stores reached the store-buffer head (DIKTAMO-proactive: when the next store could not coalesce)") \
	X(repl_at_head, "transactions", "replications sent at the store-buffer head (Fig. 11: the latest moment; all of baseline's and parallel's)")

enum {
#define ENUM(n, u, d) C_##n,
	CORE_COUNTERS(ENUM)
#undef ENUM
	C_COUNT
};

enum kind { K_LOAD = 1, K_STORE, K_ATOMIC };
enum st { S_WAIT = 0, S_ISSUED, S_DONE };
enum block { B_NONE = 0, B_ROB, B_LQ, B_SQ, B_DRAIN, B_VALUE, B_DONE };

/* Request tags: source in the top 2 bits, then slot, then generation. */
enum { T_ROB = 0, T_SB = 1, T_PF = 2 };
#define TAG(src, slot, gen) ((uint64_t)(src) << 62 | (uint64_t)(slot) << 32 | (uint32_t)(gen))
#define TAG_SRC(t) ((uint32_t)((t) >> 62))
#define TAG_SLOT(t) ((uint32_t)((t) >> 32) & 0x3fffffffu)
#define TAG_GEN(t) ((uint32_t)(t))

/* Miss levels a demand load holds while outstanding. */
#define M_L1 1u
#define M_L2 2u
#define M_L3 4u

#define STORE_FILTER 1024 /* buckets of the store-word filter */
#define WORD_BUCKET(a) (((a) >> 3) & (STORE_FILTER - 1))
#define L2PF_MAX 16       /* L2 prefetches in flight per core */
#define L2PF_AHEAD 16     /* how far ahead of a stream the L2 streamer fetches, in lines */
#define PF_STREAMS 16     /* streams (4 KiB pages) each prefetcher tracks at once */
#define PF_NONE (UINT64_MAX - 8) /* a tracker's "no miss yet" line */
#define PF_RECENT 64      /* direct-mapped record of L2-prefetched lines */

/* A prefetcher's view of one page: its last miss. */
struct pf_stream {
	uint64_t page, last, used;
	bool valid;
};

struct ent {
	uint64_t seq, addr, value;
	cxs_time t_disp;      /* when it entered the window */
	uint32_t handle, gen;
	uint32_t adep, vdep;  /* producers still awaited (CXS_KT_NO_DEP: none) */
	uint8_t kind, op, size, state;
	uint8_t replay, fwd, lfb, miss; /* miss: M_* held while outstanding */
};

/* A retired store waiting in the store buffer (store_buffer.c). */
struct sb_ent {
	uint64_t addr, value;
	uint8_t size, remote;
	uint8_t repl_sent;  /* its replication group's REPL has left */
	uint8_t repl_acked; /* ... and every REPL_ACK of it is in */
	uint32_t repl;      /* that group's id from env.replicate (0: none yet) */
	cxs_time t_disp;    /* dispatched (entered the window) */
	cxs_time t_retire;  /* retired into the buffer */
	cxs_time t_acked;   /* its replication's last REPL_ACK came */
};

struct lfb_ent {
	uint64_t line, tag;
	uint8_t valid;
};

/* A producer (load or atomic) by handle: where it is in the window, or its value once retired. */
struct prod {
	uint32_t h, slot, gen;
	bool retired;
	uint64_t value;
};

/*
 * The store buffer: retired stores in program order, and the transaction of
 * the group at its head (phases in store_buffer.c).
 */
struct sb {
	struct sb_ent *e;           /* ring of p.sq */
	uint32_t head, n;
	uint32_t group, left;       /* head transaction: stores in it, store completions awaited */
	uint64_t pending[2];        /* which stores of the head transaction are in flight */
	uint8_t phase;              /* enum sb_phase */
	bool owned;                 /* the head group's line is writable (ownership acquired) */
	bool held;
	uint32_t held_n;            /* the group the sb_head hook held */
	bool released;              /* ... and then released: issue exactly that group */
	cxs_time issued;            /* the head transaction started */
	cxs_time t_head, t_owned;   /* the head group reached the head; ownership came */
};

struct cxs_core {
	uint32_t node, id;
	struct cxs_core_params p;
	struct cxs_core_env env;
	struct cxs_kt *kt;

	struct ent *rob;          /* ring of p.rob */
	uint32_t rob_head, rob_n, nloads, nstores;
	uint64_t seq;             /* instructions dispatched */
	uint32_t gen;

	struct sb sb;             /* the store buffer (store_buffer.c) */
	uint32_t atomic_repl;     /* the atomic waiting for its REPL_ACKs (0: none) */
	uint32_t atomic_slot;     /* ... its window slot */
	const struct sb_protocol *proto; /* how remote stores reach memory */

	/*
	 * Stores in the window or the buffer per 8-byte word (hashed): accesses
	 * are aligned and at most 8 bytes, so a load can overlap a store only in
	 * the same word, and an empty bucket proves there is nothing to forward.
	 */
	uint16_t store_words[STORE_FILTER];
	uint32_t nwaiting;        /* loads and stores in S_WAIT */
	struct prod prod[CXS_KT_MAX_INFLIGHT]; /* by handle % CXS_KT_MAX_INFLIGHT */
	uint64_t nretired;        /* window entries retired: entry i of the window is number nretired + i */
	uint64_t wait_lo;         /* no entry numbered below this is in S_WAIT */

	struct lfb_ent lfb[64];
	uint32_t l2pf_inflight;
	struct lfb_ent l2pf[L2PF_MAX]; /* lines the L2 prefetcher has in flight */
	struct pf_stream l1s[PF_STREAMS], l2s[PF_STREAMS]; /* per-page stream trackers */
	uint64_t pf_clock;        /* LRU order of the trackers */
	uint64_t pf_recent[PF_RECENT]; /* lines the L2 prefetcher fetched (line + 1; 0 empty) */
	uint64_t last_pfm_line;

	struct cxs_kop op;
	bool have_op;
	uint32_t compute_left;
	uint8_t block;
	cxs_time busy_until, wake_at, acc_t;
	uint32_t n_miss[3];       /* outstanding demand loads that missed L1, L2, L3 */
	bool counting, failed, done;
	cxs_time roi_begin, roi_end;
	char err[512];

	uint64_t c[C_COUNT];
	uint64_t *out[C_COUNT];
};

/* ---- core.c, for store_buffer.c -------------------------------------------------- */

void core_account(struct cxs_core *c, cxs_time now);
int core_request(struct cxs_core *c, cxs_time t, uint8_t op, uint64_t addr, uint8_t size,
		 uint64_t value, uint64_t tag, uint8_t flags, uint32_t repl, char *err, size_t len);

/* ---- store_buffer.c ---------------------------------------------------------------- */

/* The protocol table of `p` (sb_protocol in store_buffer.c). */
const struct sb_protocol *sb_protocol_of(enum cxs_protocol p);
int sb_init(struct cxs_core *c);
void sb_free(struct cxs_core *c);
/* A retired store enters the buffer (the protocol may replicate it at once). */
int sb_push(struct cxs_core *c, const struct ent *e, cxs_time now, char *err, size_t len);
/* Forwarding from the buffer to a load, youngest store first: 1 value set, -1 partial, 0 none. */
int sb_forward(const struct cxs_core *c, uint64_t addr, uint8_t size, uint64_t *value);
/* Starts or advances the head transaction. */
int sb_drain(struct cxs_core *c, cxs_time now, char *err, size_t len);
/* A request the buffer issued (tag source T_SB) completed. */
int sb_complete(struct cxs_core *c, cxs_time now, uint64_t tag, char *err, size_t len);
bool sb_replicates(const struct cxs_core *c);
/* core.c: replication `id` was the atomic's: 1 (issued), -1 (failed, err set); 0 not it. */
int core_atomic_replicated(struct cxs_core *c, cxs_time now, uint32_t id, char *err, size_t len);
static inline uint32_t sb_count(const struct cxs_core *c)
{
	return c->sb.n;
}

#endif /* CXLSIM_CORE_PRIV_H */
