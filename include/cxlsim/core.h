/*
 * core.h — the out-of-order core: a trace- or program-driven timing model of
 * one core with a TSO store buffer and PMU-like counters (DESIGN.md, "The
 * core"; DIKTAMO §IV-D.1 and Table II).
 *
 * The core knows nothing of the engine or the fabric: it takes operations
 * from its thread program (kthread.h), asks its CN's memory hierarchy for
 * loads and stores through env.request, learns where a line is through
 * env.where, is told of completions (cxs_core_complete) and of lost lines
 * (cxs_core_invalidated), and asks to be woken at a time (env.wake). The
 * CN node type (src/node/cn_node.c, workload.c) turns wakes and completions into
 * events.
 *
 * The model, per core (all sizes configurable; defaults in brackets):
 *   - frontend: one instruction per cycle (non-memory instructions have CPI
 *     1, as in DIKTAMO's method); it stops when the reorder buffer [224], the
 *     load queue [128] or the store queue [72] is full, at a fence or atomic
 *     until the store buffer has drained, and when the program needs a value
 *     that has not retired yet;
 *   - loads issue as soon as they enter the window (their address is known)
 *     and overlap; an L1 miss takes a line fill buffer entry [12], a load to a
 *     line already in the LFB is an LFB hit and takes none, a miss with no
 *     free entry waits for one (this bounds memory-level parallelism);
 *     store-to-load forwarding from the store queue and buffer;
 *   - retirement in order: a load that has not completed blocks everything
 *     behind it; a load's value reaches the program when it retires;
 *   - TSO: loads may perform out of order, so a load that completed early
 *     and whose line the core then loses (cxs_core_invalidated) is replayed
 *     before it can retire — the snooping load queue of x86 cores; stores
 *     retire into the store buffer and drain from its head one transaction at
 *     a time, in order; consecutive stores to one line coalesce into one
 *     transaction; a store sends an exclusive prefetch when it enters the
 *     window (address known); atomics and fences wait for the buffer to drain;
 *   - prefetchers: an L1 next-line stream prefetcher (2 lines ahead, using
 *     LFB entries) and an L2 stream prefetcher (lines 3..16 ahead, up to 16 in
 *     flight), each following up to 16 streams (4 KiB pages) at once and each
 *     switchable off.
 *
 * Hooks (env.sb_enter, env.sb_head, env.commit) mark where a store enters the
 * store buffer, reaches its head and commits — where DIKTAMO's replication
 * protocols attach. sb_head may hold the head back: it returns false and the
 * protocol calls cxs_core_sb_release() when the store may go.
 *
 * Counters: see cxs_core_counter_defs in core.c; each is defined in the HDF5
 * attributes and named after CAMP's Table 5 (Intel PMU events).
 */
#ifndef CXLSIM_CORE_H
#define CXLSIM_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "cxlsim/coherence.h"
#include "cxlsim/config.h"
#include "cxlsim/engine.h"
#include "cxlsim/model.h"
#include "cxlsim/kthread.h"
#include "cxlsim/protocol.h"
#include "cxlsim/stats.h"

/*
 * Fault injection, to prove the litmus tests can fail: fence_noop makes
 * fences drain nothing (SB with fences then shows its relaxed outcome);
 * sb_parallel drains the whole store buffer at once, in any order;
 * no_replay keeps loads that performed out of order; unordered is both
 * (MP then shows the outcome TSO forbids).
 */
enum cxs_core_fault {
	CXS_CORE_FAULT_NONE = 0,
	CXS_CORE_FAULT_FENCE_NOOP,
	CXS_CORE_FAULT_SB_PARALLEL,
	CXS_CORE_FAULT_NO_REPLAY,   /* loads that performed early are never replayed */
	CXS_CORE_FAULT_UNORDERED,   /* sb_parallel and no_replay together */
};

struct cxs_core_params {
	uint32_t rob, lq, sq, lfb;
	uint8_t fault;        /* enum cxs_core_fault */
	bool l1_prefetch, l2_prefetch;
	uint8_t protocol;     /* enum cxs_protocol: how remote (CXL) stores reach memory */
	bool commit_before_ack; /* fault injection (diktamo.fault): commit without the REPL_ACKs */
	cxs_time cycle_ps;
};

void cxs_core_default_params(struct cxs_core_params *p);

/*
 * The [core] keys and the parameters they give (the caller sets cycle_ps and
 * protocol, which come from the CN and the run). The enum order of
 * core.fault is enum cxs_core_fault.
 */
extern const struct cxs_cfg_key cxs_core_keys[];
extern const struct cxs_key_table cxs_core_key_table;
void cxs_core_configure(const struct cxs_config *cfg, struct cxs_core_params *p);

/* A store as the hooks see it (coalesced stores of one line: one per store). */
struct cxs_sb_store {
	uint64_t addr, value;
	uint8_t size;
	bool remote; /* CXL memory */
};

/* env.replicate's flags. */
enum {
	CXS_REPL_ATOMIC = 1,  /* an atomic, replicated alone before it is performed */
	CXS_REPL_AT_HEAD = 2, /* sent with its group at the store-buffer head (or the window's) */
};

struct cxs_core_env {
	void *ctx;
	/* Hand a request to the CN's hierarchy at time t (>= now). 0, or -1 with err. */
	int (*request)(void *ctx, cxs_time t, const struct cxs_mem_req *r, char *err, size_t len);
	/* enum cxs_level of an access now; `write`: it needs a writable copy. */
	int (*where)(void *ctx, uint32_t core, uint64_t addr, bool write);
	/* Is addr in CXL memory (a remote store)? */
	bool (*remote)(void *ctx, uint64_t addr);
	/* Call cxs_core_step at time t (>= now). */
	void (*wake)(void *ctx, uint32_t core, cxs_time t);
	/*
	 * DIKTAMO (the protocols that replicate remote stores): send a REPL of
	 * the n stores (one line, coalesced) to the line's replicas; *id names
	 * the replication, which cxs_core_replicated reports complete (all
	 * REPL_ACKs in). The stores' later requests carry the id (r.repl), so
	 * the CN sends the VALs when the group is performed. An atomic is
	 * replicated alone, with its operand, before it is performed. flags:
	 * CXS_REPL_*; a replication sent before its group reached the head
	 * (DIKTAMO-proactive) may be refused by a full Logging Unit, which the
	 * CN then asks again when the group reaches the head (repl_at_head).
	 */
	int (*replicate)(void *ctx, uint32_t core, cxs_time t, const struct cxs_sb_store *s,
			 uint32_t n, unsigned flags, uint32_t *id, char *err, size_t len);
	/* Optional: the group of replication id, sent early, reached the head without its REPL_ACKs. */
	void (*repl_at_head)(void *ctx, uint32_t core, cxs_time t, uint32_t id);
	/* Optional hooks (NULL: nothing). */
	void (*sb_enter)(void *ctx, uint32_t core, cxs_time t, const struct cxs_sb_store *s);
	bool (*sb_head)(void *ctx, uint32_t core, cxs_time t, const struct cxs_sb_store *s, uint32_t n);
	void (*commit)(void *ctx, uint32_t core, cxs_time t, const struct cxs_sb_store *s, uint32_t n);
};

struct cxs_core;

/* NULL with a message in err. Registers its counters under "core<i>/" in st. */
struct cxs_core *cxs_core_new(uint32_t node, uint32_t id, const struct cxs_core_params *p,
			      const struct cxs_core_env *env, struct cxs_kt *program,
			      struct cxs_stats *st, char *err, size_t errlen);
void cxs_core_free(struct cxs_core *c);

/* Runs the core at `now` until it must wait. -1 with err: the run must stop. */
int cxs_core_step(struct cxs_core *c, cxs_time now, char *err, size_t errlen);
/* A request made through env.request completed at now with value. */
int cxs_core_complete(struct cxs_core *c, cxs_time now, const struct cxs_mem_req *r,
		      uint64_t value, char *err, size_t errlen);
/* The core lost its copy of a line (TSO: replay loads that performed early). */
void cxs_core_invalidated(struct cxs_core *c, cxs_time now, uint64_t line);
/* The protocol lets the held store-buffer head go (see env.sb_head). */
int cxs_core_sb_release(struct cxs_core *c, cxs_time now, char *err, size_t errlen);
/* Every REPL_ACK of replication `id` (env.replicate) is in. */
int cxs_core_replicated(struct cxs_core *c, cxs_time now, uint32_t id, char *err, size_t errlen);

bool cxs_core_done(const struct cxs_core *c);        /* program finished, buffers empty */
bool cxs_core_failed(const struct cxs_core *c);      /* the program reported a wrong result */
const char *cxs_core_error(const struct cxs_core *c);
/* ROI bounds (0 if never reached) and a line of state for deadlock reports. */
cxs_time cxs_core_roi_begin(const struct cxs_core *c);
cxs_time cxs_core_roi_end(const struct cxs_core *c);
int cxs_core_describe(const struct cxs_core *c, char *buf, size_t len);
/* Writes the counters (cycles from ps) into the stats; call once at the end. */
void cxs_core_finish_counters(struct cxs_core *c);

#endif /* CXLSIM_CORE_H */
