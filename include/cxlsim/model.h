/*
 * model.h — a model as the command line sees it: one const table per model.
 *
 * A model (PHOLD, the CXL memory system, AXLE) owns its configuration keys,
 * reads them in its configure function into an instance of its own, and says
 * how many nodes the run has, which node type each is, and its lookahead. The
 * engine then hands the instance to every node (cxs_lp_ctx), so model code
 * keeps no process-wide mutable state; the command line releases it after
 * the run.
 *
 *   static const struct cxs_key_table *const tables[] = {&phold_keys, NULL};
 *   const struct cxs_model cxs_phold_model = {
 *       .name = "phold", .doc = "...", .keys = tables,
 *       .configure = phold_configure, .release = free,
 *   };
 *
 * The list of models is src/app/models.c, the one place that adds a model.
 */
#ifndef CXLSIM_MODEL_H
#define CXLSIM_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "cxlsim/config.h"
#include "cxlsim/engine.h"


/* What configure produced: the engine's view of the model's run. */
struct cxs_model_run {
	void *ctx;                   /* the model's instance (cxs_lp_ctx in every node) */
	uint32_t nnodes;
	cxs_time lookahead;          /* the model's minimum delay between nodes, > 0 */
	const char *lookahead_section, *lookahead_key; /* the key behind it, for messages */
	cxs_type_of_fn *type_of;     /* called with ctx */
	/*
	 * engine.end_time when it is 0 (the default): a benchmark's own end
	 * (PHOLD's, after ROSS), or for a model whose runs end when their
	 * workload does a safety cap far beyond any workload (CXS_END_CAP).
	 */
	cxs_time end_time;
};

/* The default cap of models whose runs end on their own: 100 s of simulated time. */
#define CXS_END_CAP ((cxs_time)100 * 1000 * 1000 * 1000 * 1000)

struct cxs_model {
	const char *name;            /* engine.model */
	const char *doc;
	const struct cxs_key_table *const *keys; /* every key the model reads; NULL-terminated */
	/*
	 * Reads and checks the model's keys (all registered in cfg) and builds
	 * its instance. 0, or -1 with one line in err naming the key and where
	 * its value came from.
	 */
	int (*configure)(const struct cxs_config *cfg, struct cxs_model_run *out, char *err,
			 size_t errlen);
	void (*release)(void *ctx);  /* frees what configure built; ctx may be NULL */
};

#endif /* CXLSIM_MODEL_H */
