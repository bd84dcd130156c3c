/*
 * exact_check.c — the exact coherence checker (tester.exact_check).
 *
 * The random tester's own checks are local to a core and cannot see a stale
 * copy that keeps returning an old value; this one can: with every CN in one
 * process, events are performed in global simulated-time order, so a shadow
 * of every CXL line, updated when a write is performed, holds exactly the
 * value a load performed now must see. Results do not depend on the rank
 * count, so checking the np = 1 run checks the run every other rank count
 * reproduces. It reaches across nodes, which models must not do: it is a
 * checker, refused unless all CNs share a process (it counts the CNs
 * initialised here and fails the run on the first access otherwise).
 *
 * State: the shadow map, owned by the model's instance (struct memsys), not
 * by any process-wide variable.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memsys_priv.h"

static const struct cxs_cfg_key exact_keys[] = {
	{"tester", "exact_check", CXS_CFG_BOOL, "false", "Also check every load of CXL memory against the latest write performed before it in simulated time (a shadow memory; needs every CN in one process, e.g. -np 1).", NULL, 0, 0},
};
const struct cxs_key_table memsys_exact_key_table = CXS_KEY_TABLE(exact_keys);

struct shadow_line {
	uint8_t data[CXS_LINE_BYTES];
	uint32_t writer;
	cxs_time written;
};

int exact_configure(const struct cxs_config *cfg, struct memsys *M, char *err, size_t errlen)
{
	if (!cxs_config_bool(cfg, "tester", "exact_check"))
		return 0;
	M->exact = calloc(1, sizeof *M->exact);
	if (!M->exact || cxs_line_map_init(&M->exact->shadow, sizeof(struct shadow_line)) != 0) {
		free(M->exact);
		M->exact = NULL;
		snprintf(err, errlen, "out of memory for tester.exact_check");
		return -1;
	}
	return 0;
}

void exact_release(struct exact_check *x)
{
	if (!x)
		return;
	cxs_line_map_free(&x->shadow);
	free(x);
}

void exact_cn_init(struct exact_check *x)
{
	x->cns_here++;
}

void exact_perform(struct cn_node *cn, cxs_time t, const struct cxs_mem_req *r, uint64_t value,
		   int is_write)
{
	const struct memsys *M = cn->M;
	struct exact_check *x = M->exact;
	if (!x || cxs_addr_map_lookup(&M->map, r->addr).kind != CXS_ADDR_CXL)
		return;
	if (x->cns_here != M->cns) {
		cxs_lp_fail(cn->lp, 2,
			    "tester.exact_check needs every CN in one process (%u of %u here): run "
			    "with -np 1 or map all CNs to one rank",
			    x->cns_here, M->cns);
		return;
	}
	uint8_t size = r->op == CXS_OP_STORE_STAMP ? 8 : r->size;
	uint32_t off = (uint32_t)(r->addr & (CXS_LINE_BYTES - 1));
	struct shadow_line *sl = cxs_line_map_get(&x->shadow, r->addr >> CXS_LINE_SHIFT, NULL);
	if (!sl) {
		cxs_lp_fail(cn->lp, 2, "out of memory in tester.exact_check");
		return;
	}
	uint64_t want = 0;
	for (uint8_t i = 0; i < size; i++)
		want |= (uint64_t)sl->data[off + i] << (8 * i);
	if (is_write) {
		for (uint8_t i = 0; i < size; i++)
			sl->data[off + i] = (uint8_t)(value >> (8 * i));
		sl->writer = cxs_lp_id(cn->lp);
		sl->written = t;
	} else if (value != want) {
		cxs_lp_fail(cn->lp, 5,
			    "coherence violation (exact check): node %u core %u load of 0x%" PRIx64
			    " performed at %" PRIu64 " ps returned 0x%" PRIx64
			    ", but the latest write before it (node %u at %" PRIu64 " ps) left 0x%" PRIx64
			    "; the CN's copy is stale (state %s)",
			    cxs_lp_id(cn->lp), r->core, r->addr, t, value, sl->writer, sl->written, want,
			    cxs_cn_line_state(cn->agent, r->addr >> CXS_LINE_SHIFT));
	}
}
