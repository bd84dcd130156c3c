/*
 * phold.h — the PHOLD benchmark as a cxlsim node type.
 *
 * PHOLD (Fujimoto 1990) is the standard synthetic load for parallel
 * discrete-event engines; cxlsim's follows ROSS's models/phold exactly so the
 * two engines can be compared on the same parameters:
 *
 *   - every node is one PHOLD LP;
 *   - at init each LP schedules one event for itself at
 *     lookahead + Exp(mean - lookahead);
 *   - handling an event creates exactly one new event at
 *     now + lookahead + Exp(mean - lookahead) whose destination is, with
 *     probability `remote`, uniform over all LPs (the LP itself included),
 *     otherwise the LP itself.
 *
 * So `mean` is the mean of the whole delay, lookahead included (ROSS
 * subtracts the lookahead from its mean before drawing), and mean must be at
 * least lookahead. Events at or past the end time are dropped by the engine.
 *
 * Units. The user gives mean and lookahead in PHOLD "time units", as in ROSS;
 * one unit is CXS_PHOLD_PS_PER_UNIT = 1 000 000 ps (1 us), so ROSS's defaults
 * mean 1.0, lookahead 0.1, end 5000 are mean 1 us, lookahead 100 ns and
 * end_time 5 ms here. A delay is rounded to the nearest picosecond, a
 * resolution of 1e-6 units, far below any mean a benchmark uses.
 *
 * Configuration is read once, before the run, into the model's instance
 * (cxs_phold_model.configure), which every LP reads through cxs_lp_ctx; every
 * rank reads the same configuration, so every LP sees the same values.
 */
#ifndef CXLSIM_PHOLD_H
#define CXLSIM_PHOLD_H

#include <stddef.h>
#include <stdint.h>

#include "cxlsim/config.h"
#include "cxlsim/engine.h"
#include "cxlsim/model.h"

#define CXS_PHOLD_PS_PER_UNIT UINT64_C(1000000) /* picoseconds per PHOLD time unit */

/* The keys of section [phold]: mean, lookahead, remote, lps. */
extern const struct cxs_cfg_key cxs_phold_keys[];

/* The parameters of a PHOLD run, converted to engine units. */
struct cxs_phold_params {
	uint32_t lps;           /* number of LPs = number of nodes */
	cxs_time lookahead_ps;  /* minimum delay of every event, >= 1 */
	cxs_time mean_ps;       /* mean delay, lookahead included, >= lookahead_ps */
	double remote;          /* probability that a new event goes to a random LP */
};

/*
 * Reads section [phold] of cfg (whose keys must be registered) into *out and
 * checks that mean >= lookahead. Returns 0, or -1 with a one-line message
 * naming the keys and where their values came from.
 */
int cxs_phold_configure(const struct cxs_config *cfg, struct cxs_phold_params *out, char *err,
			size_t errlen);

/* The model (model.h): its keys, configure and node type. */
extern const struct cxs_model cxs_phold_model;

#endif /* CXLSIM_PHOLD_H */
