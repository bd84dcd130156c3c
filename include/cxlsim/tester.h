/*
 * tester.h — the random coherence tester: a test core that issues random
 * loads, stores and atomic fetch-and-adds and checks every value it gets back
 * (in the spirit of gem5's Ruby random tester, but distributed: no global
 * shadow memory, so it works with the CNs on different MPI ranks).
 *
 * Locations (8-byte words):
 *   stamp lines    shared CXL lines; stores write the line's write-order stamp
 *                  (coherence.h: grant epoch, write count, core)
 *   counter words  shared CXL words, target of fetch-and-add +1
 *   private words  in the CN's local memory, written and read back by one core
 *
 * Checks, each a violation of coherence if it fails:
 *   - a load of a stamp location returns a stamp no earlier than the latest
 *     this core has seen for it (its own stores included): every location has
 *     a single order of writes, and a core never observes it going back;
 *   - a store's stamp is later than every stamp the core has seen for the
 *     location (a write is ordered after what its writer already saw);
 *   - a fetch-and-add returns a value larger than any the core has seen for
 *     the counter, and loads of a counter never go back;
 *   - a private word reads back exactly the core's last store to it;
 *   - across the run, the values returned by all fetch-and-adds of a counter
 *     are exactly 0 .. N-1 (checked from the output's sums: count, sum, sum of
 *     squares per counter; tests/mpi/coherence_tester.sh).
 * A violation stops the run with the location's recent history on this core.
 *
 * These checks are local to a core: a CN that keeps a stale copy keeps
 * returning the same old value, which none of them can see. The exact check
 * (tester.exact_check, src/node/exact_check.c) closes that gap: with every CN in
 * one process it compares every load of CXL memory with the latest write
 * performed before it in simulated time. The tests run it at np = 1 and
 * require np = 6 to reproduce the same run; coherence.checker_can_fail injects
 * a stale-copy bug that only the exact check reports.
 */
#ifndef CXLSIM_TESTER_H
#define CXLSIM_TESTER_H

#include <stdint.h>

#include "cxlsim/coherence.h"
#include "cxlsim/config.h"
#include "cxlsim/engine.h"
#include "cxlsim/model.h"

#define CXS_TESTER_HISTORY 32
#define CXS_TESTER_MAX_COUNTERS 8

struct cxs_tester_params {
	uint64_t ops;             /* per core */
	uint32_t stamp_lines;     /* shared lines written with stamps */
	uint32_t counters;        /* shared fetch-and-add words, <= CXS_TESTER_MAX_COUNTERS */
	uint32_t private_words;   /* per core */
	double load_share, rmw_share, private_share;
	uint32_t max_think_cycles;
	uint64_t shared_base;     /* CXL address of the first stamp line */
	uint64_t private_base;    /* local address of core 0's private words */
};

struct cxs_tester_obs {
	cxs_time t;
	uint64_t addr, value;
	uint8_t op;
};

struct cxs_tester {
	const struct cxs_tester_params *p;
	uint32_t node, core;
	uint64_t issued, done;
	uint64_t *seen;           /* latest stamp per stamp-line word */
	uint64_t *mine;           /* last value stored per private word */
	uint64_t counter_seen[CXS_TESTER_MAX_COUNTERS];
	struct cxs_tester_obs hist[CXS_TESTER_HISTORY];
	uint32_t nhist;
	uint64_t *c_ops, *c_loads, *c_stores, *c_rmws, *c_private;
	uint64_t *c_rmw_n[CXS_TESTER_MAX_COUNTERS], *c_rmw_sum[CXS_TESTER_MAX_COUNTERS],
		*c_rmw_sumsq[CXS_TESTER_MAX_COUNTERS];
};

/* The [tester] keys and the parameters they give (the caller sets the two bases). */
extern const struct cxs_cfg_key cxs_tester_keys[];
extern const struct cxs_key_table cxs_tester_key_table;
int cxs_tester_configure(const struct cxs_config *cfg, struct cxs_tester_params *p, char *err,
			 size_t errlen);

int cxs_tester_init(struct cxs_tester *t, const struct cxs_tester_params *p, uint32_t node,
		    uint32_t core, struct cxs_stats *st);
void cxs_tester_free(struct cxs_tester *t);
/*
 * The next request (returns 0 when the core has issued all its operations);
 * *think is the delay before issuing it. Randomness from the node's stream.
 */
int cxs_tester_next(struct cxs_tester *t, struct cxs_lp *lp, struct cxs_mem_req *r,
		    cxs_time *think, cxs_time cycle_ps);
/* Checks a completion; -1 with the violation and history in err. */
int cxs_tester_check(struct cxs_tester *t, cxs_time now, const struct cxs_mem_req *r,
		     uint64_t value, char *err, size_t errlen);

#endif /* CXLSIM_TESTER_H */
