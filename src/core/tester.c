/*
 * tester.c — the random coherence tester core (see include/cxlsim/tester.h).
 *
 * One request outstanding per core: the checks compare each completion with
 * what the same core saw before, which needs the core's own operations to be
 * ordered; concurrency comes from many cores on many CNs hitting few lines.
 * Addresses: word w of stamp line l is shared_base + 64 l + 8 w; counter k is
 * word k of the line just after the stamp lines; core c's private word i is
 * private_base + 8 (c * private_words + i).
 */
#include "cxlsim/tester.h"
#include "cxlsim/model.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORDS_PER_LINE (CXS_LINE_BYTES / 8)

static const char *const op_name[] = {"load", "store", "store", "fetch_add"};

const struct cxs_cfg_key cxs_tester_keys[] = {
	{"tester", "ops", CXS_CFG_UINT, "20000", "Operations per core.", NULL, 0, 1e15},
	{"tester", "stamp_lines", CXS_CFG_UINT, "16", "Shared lines written with write-order stamps.", NULL, 1, 1e6},
	{"tester", "counters", CXS_CFG_UINT, "4", "Shared fetch-and-add counters (one line).", NULL, 0, CXS_TESTER_MAX_COUNTERS},
	{"tester", "private_words", CXS_CFG_UINT, "64", "Private words per core.", NULL, 0, 1e6},
	{"tester", "load_share", CXS_CFG_DOUBLE, "0.5", "Share of loads among stamp-line operations.", NULL, 0, 1},
	{"tester", "rmw_share", CXS_CFG_DOUBLE, "0.15", "Share of operations on the counters.", NULL, 0, 1},
	{"tester", "private_share", CXS_CFG_DOUBLE, "0.1", "Share of operations on private words.", NULL, 0, 1},
	{"tester", "max_think_cycles", CXS_CFG_UINT, "20", "Uniform random delay before each operation, in core cycles.", NULL, 0, 1e9},
};
const struct cxs_key_table cxs_tester_key_table = CXS_KEY_TABLE(cxs_tester_keys);

int cxs_tester_configure(const struct cxs_config *cfg, struct cxs_tester_params *p, char *err,
			 size_t errlen)
{
	*p = (struct cxs_tester_params){
		.ops = cxs_config_uint(cfg, "tester", "ops"),
		.stamp_lines = (uint32_t)cxs_config_uint(cfg, "tester", "stamp_lines"),
		.counters = (uint32_t)cxs_config_uint(cfg, "tester", "counters"),
		.private_words = (uint32_t)cxs_config_uint(cfg, "tester", "private_words"),
		.load_share = cxs_config_double(cfg, "tester", "load_share"),
		.rmw_share = cxs_config_double(cfg, "tester", "rmw_share"),
		.private_share = cxs_config_double(cfg, "tester", "private_share"),
		.max_think_cycles = (uint32_t)cxs_config_uint(cfg, "tester", "max_think_cycles"),
	};
	if (p->rmw_share + p->private_share > 1) {
		snprintf(err, errlen, "%s: tester.rmw_share + tester.private_share must not exceed 1",
			 cxs_config_origin(cfg, "tester", "rmw_share"));
		return -1;
	}
	return 0;
}

int cxs_tester_init(struct cxs_tester *t, const struct cxs_tester_params *p, uint32_t node,
		    uint32_t core, struct cxs_stats *st)
{
	memset(t, 0, sizeof *t);
	t->p = p;
	t->node = node;
	t->core = core;
	t->seen = calloc((size_t)p->stamp_lines * WORDS_PER_LINE + 1, sizeof *t->seen);
	t->mine = calloc((size_t)p->private_words + 1, sizeof *t->mine);
	if (!t->seen || !t->mine || p->counters > CXS_TESTER_MAX_COUNTERS)
		return -1;
	if (!st || core != 0)
		return 0; /* one set of counters per node, bumped by all its cores */
	t->c_ops = cxs_stats_counter(st, "tester", "ops", "requests", "operations completed and checked");
	t->c_loads = cxs_stats_counter(st, "tester", "loads", "requests", "loads of shared words");
	t->c_stores = cxs_stats_counter(st, "tester", "stores", "requests", "stamped stores");
	t->c_rmws = cxs_stats_counter(st, "tester", "rmws", "requests", "fetch-and-adds");
	t->c_private = cxs_stats_counter(st, "tester", "private", "requests",
					 "loads and stores of private words");
	for (uint32_t k = 0; k < p->counters; k++) {
		char n[48];
		snprintf(n, sizeof n, "rmw%u_count", k);
		t->c_rmw_n[k] = cxs_stats_counter(st, "tester", n, "requests", "fetch-and-adds of this counter");
		snprintf(n, sizeof n, "rmw%u_sum", k);
		t->c_rmw_sum[k] = cxs_stats_counter(st, "tester", n, "1", "sum of the values they returned");
		snprintf(n, sizeof n, "rmw%u_sumsq", k);
		t->c_rmw_sumsq[k] = cxs_stats_counter(st, "tester", n, "1",
						      "sum of the squares of the values they returned");
	}
	return 0;
}

void cxs_tester_free(struct cxs_tester *t)
{
	free(t->seen);
	free(t->mine);
	t->seen = t->mine = NULL;
}

/* Node-wide counters live with core 0; the others share them through `lead`. */
static struct cxs_tester *lead(struct cxs_tester *t)
{
	return t - t->core;
}

static uint64_t counter_addr(const struct cxs_tester_params *p, uint32_t k)
{
	return p->shared_base + (uint64_t)p->stamp_lines * CXS_LINE_BYTES + 8 * (uint64_t)k;
}

int cxs_tester_next(struct cxs_tester *t, struct cxs_lp *lp, struct cxs_mem_req *r,
		    cxs_time *think, cxs_time cycle_ps)
{
	const struct cxs_tester_params *p = t->p;
	if (t->issued >= p->ops)
		return 0;
	memset(r, 0, sizeof *r);
	r->core = t->core;
	r->size = 8;
	r->tag = t->issued++;
	double u = cxs_rand_unif(lp);
	if (p->private_words && u < p->private_share) {
		uint32_t i = (uint32_t)(cxs_rand_u64(lp) % p->private_words);
		r->addr = p->private_base + 8 * ((uint64_t)t->core * p->private_words + i);
		if (cxs_rand_unif(lp) < 0.5) {
			r->op = CXS_OP_STORE;
			r->value = ((uint64_t)t->node << 48) | ((uint64_t)t->core << 40) | t->issued;
		} else {
			r->op = CXS_OP_LOAD;
		}
	} else if (p->counters && u < p->private_share + p->rmw_share) {
		uint32_t k = (uint32_t)(cxs_rand_u64(lp) % p->counters);
		r->addr = counter_addr(p, k);
		r->op = cxs_rand_unif(lp) < 0.8 ? CXS_OP_FETCH_ADD : CXS_OP_LOAD;
		r->value = 1;
	} else {
		uint64_t w = cxs_rand_u64(lp) % ((uint64_t)p->stamp_lines * WORDS_PER_LINE);
		r->addr = p->shared_base + 8 * w;
		r->op = cxs_rand_unif(lp) < p->load_share ? CXS_OP_LOAD : CXS_OP_STORE_STAMP;
	}
	*think = (cxs_time)(cxs_rand_u64(lp) % (p->max_think_cycles + 1)) * cycle_ps;
	return 1;
}

static void remember(struct cxs_tester *t, cxs_time now, const struct cxs_mem_req *r, uint64_t v)
{
	t->hist[t->nhist++ % CXS_TESTER_HISTORY] =
		(struct cxs_tester_obs){.t = now, .addr = r->addr, .value = v, .op = r->op};
}

static int violation(struct cxs_tester *t, cxs_time now, const struct cxs_mem_req *r,
		     uint64_t v, uint64_t before, const char *what, char *err, size_t errlen)
{
	int n = snprintf(err, errlen,
			 "coherence violation: node %u core %u, %s of %#" PRIx64 " at %" PRIu64
			 " ps returned %#" PRIx64 " but %s %#" PRIx64 "; this core's history of "
			 "the location:",
			 t->node, t->core, op_name[r->op], r->addr, now, v, what, before);
	uint32_t first = t->nhist > CXS_TESTER_HISTORY ? t->nhist - CXS_TESTER_HISTORY : 0;
	for (uint32_t i = first; i < t->nhist && n > 0 && (size_t)n < errlen; i++) {
		const struct cxs_tester_obs *o = &t->hist[i % CXS_TESTER_HISTORY];
		if (o->addr != r->addr)
			continue;
		n += snprintf(err + n, errlen - (size_t)n, " [%" PRIu64 " ps %s %#" PRIx64 "]", o->t,
			      op_name[o->op], o->value);
	}
	return -1;
}

int cxs_tester_check(struct cxs_tester *t, cxs_time now, const struct cxs_mem_req *r,
		     uint64_t v, char *err, size_t errlen)
{
	const struct cxs_tester_params *p = t->p;
	struct cxs_tester *L = lead(t);
	t->done++;
	(*L->c_ops)++;
	int rc = 0;
	if (r->addr >= p->private_base && r->addr < p->shared_base) {
		uint32_t i = (uint32_t)((r->addr - p->private_base) / 8 - (uint64_t)t->core * p->private_words);
		(*L->c_private)++;
		if (r->op == CXS_OP_STORE)
			t->mine[i] = r->value;
		else if (v != t->mine[i])
			rc = violation(t, now, r, v, t->mine[i], "this core last stored", err, errlen);
	} else if (r->addr >= counter_addr(p, 0)) {
		uint32_t k = (uint32_t)((r->addr - counter_addr(p, 0)) / 8);
		uint64_t before = t->counter_seen[k];
		if (r->op == CXS_OP_FETCH_ADD) {
			(*L->c_rmws)++;
			(*L->c_rmw_n[k])++;
			*L->c_rmw_sum[k] += v;
			*L->c_rmw_sumsq[k] += v * v;
			/* The core saw `before`; its own add must come after, so return >= it. */
			if (v < before)
				rc = violation(t, now, r, v, before, "the core had seen", err, errlen);
			t->counter_seen[k] = v + 1;
		} else {
			(*L->c_loads)++;
			if (v < before)
				rc = violation(t, now, r, v, before, "the core had seen", err, errlen);
			else
				t->counter_seen[k] = v;
		}
	} else {
		uint64_t w = (r->addr - p->shared_base) / 8;
		uint64_t before = t->seen[w];
		if (r->op == CXS_OP_STORE_STAMP) {
			(*L->c_stores)++;
			if (v <= before || (v >> 32) == 0)
				rc = violation(t, now, r, v, before,
					       "its stamp is not after what the core had seen", err,
					       errlen);
		} else {
			(*L->c_loads)++;
			if (v < before)
				rc = violation(t, now, r, v, before, "the core had seen", err, errlen);
		}
		if (rc == 0)
			t->seen[w] = v;
	}
	remember(t, now, r, v);
	return rc;
}
