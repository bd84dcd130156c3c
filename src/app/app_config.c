/*
 * app_config.c — the [engine] and [output] keys, read by src/app/main.c.
 *
 * The engine itself takes a plain struct (struct cxs_engine_config) and reads
 * no configuration, so that tests can build engines without a config file;
 * these keys are how a user fills that struct. Defaults:
 *
 *   end_time 5ms    ROSS's PHOLD benchmark end (5000 units of 1 us, see phold.h)
 *   lookahead 0     "ask the model": PHOLD's is phold.lookahead
 *   failure_timeout 5 s   long enough for 34 ranks on 2 cores, where a rank may
 *                   wait a whole scheduler round of its neighbours before it
 *                   runs; short enough that a killed rank is noticed quickly
 *
 *   mapping balanced    block put every CN of the 16x4 run on rank 0 at np = 2
 *                   (4.11 M of 4.41 M events) and gained nothing over np = 1;
 *                   balanced gives every rank 8 CNs and 8 MNs (rank_map.c)
 *
 *   sync windows    the only scheme that survives kill -9 at any moment; async
 *                   (src/engine/async.c) is for runs that want speed more
 *
 *   sample_interval 0   time series cost memory on every node (8 bytes per
 *                   selected counter per sample): only when asked for
 *
 * The enum choices' order is part of app_config_priv.h (enum app_mapping ...).
 */
#include "app_config_priv.h"

#include "cxlsim/engine.h"
#include "cxlsim/errmsg.h"
#include "cxlsim/stats.h"

const struct cxs_cfg_key cxs_app_keys[] = {
	{ .section = "engine", .key = "model", .type = CXS_CFG_ENUM, .def = "phold",
	  .choices = APP_MODEL_CHOICES,
	  .doc = "Which model every node runs (--model)." },
	{ .section = "engine", .key = "end_time", .type = CXS_CFG_TIME, .def = "0",
	  .doc = "Simulated time at which the run ends; events at or past it are not "
		 "scheduled (--end). Must exceed the lookahead. 0 takes the model's: 5 ms "
		 "for PHOLD (ROSS's benchmark); for memsys and axle, whose runs end when "
		 "their workload does, a safety cap of 100 s." },
	{ .section = "engine", .key = "lookahead", .type = CXS_CFG_TIME, .def = "0",
	  .doc = "Minimum delay of a message between nodes, the width of a synchronisation "
		 "window; 0 takes the model's (phold.lookahead for PHOLD, which it must "
		 "equal when set)." },
	{ .section = "engine", .key = "seed", .type = CXS_CFG_UINT, .def = "1",
	  .doc = "Run seed; every node's random stream is derived from it and the node id "
		 "(--seed)." },
	{ .section = "engine", .key = "mapping", .type = CXS_CFG_ENUM, .def = "balanced",
	  .choices = "block|round_robin|explicit|balanced",
	  .doc = "How nodes are placed on MPI ranks: contiguous blocks, node n on rank "
		 "n mod ranks, as engine.map lists, or balanced: every rank about the same "
		 "sum of node weights (engine.weights), each node type spread over the ranks. "
		 "Results do not depend on it." },
	{ .section = "engine", .key = "map", .type = CXS_CFG_STRING, .def = "",
	  .doc = "With mapping = explicit: the rank of each node in node order, e.g. "
		 "\"0 0 0 1 1 2\" or \"0*3 1*2 2\" (rank*count)." },
	{ .section = "engine", .key = "weights", .type = CXS_CFG_STRING, .def = "",
	  .doc = "With mapping = balanced: the weight of a node of each type, e.g. \"cn=8 "
		 "mn=1\"; types not listed keep theirs (a memory-system CN 2 per core, any "
		 "other node 1)." },
	{ .section = "engine", .key = "sync", .type = CXS_CFG_ENUM, .def = "windows",
	  .choices = "windows|async",
	  .doc = "How ranks synchronise: windows of one lookahead, each ended by a reduction, "
		 "or async: stretches in which each rank waits only for the clocks of its "
		 "peers, with a reduction between stretches. async is faster where ranks' work "
		 "is uneven, but a rank killed from outside (kill -9) ends the run with an "
		 "error; --kill and --fail work with both. Results do not depend on it." },
	{ .section = "engine", .key = "failure_timeout", .type = CXS_CFG_DOUBLE, .def = "5.0",
	  .doc = "Wall-clock seconds of silence after which a rank is suspected dead.",
	  .min = 0.001, .max = 86400.0 },
	{ .section = "engine", .key = "progress_interval", .type = CXS_CFG_DOUBLE, .def = "1.0",
	  .doc = "Wall-clock seconds between updates of the progress line (see --quiet).",
	  .min = 0.01, .max = 86400.0 },
	{ .section = "engine", .key = "memory_check", .type = CXS_CFG_BOOL, .def = "true",
	  .doc = "Refuse a run whose memory estimate (cxlsim -v prints it) exceeds the host's "
		 "available memory or the address-space limit, before it starts." },
	{ .section = "output", .key = "file", .type = CXS_CFG_STRING, .def = "cxlsim-out.h5",
	  .doc = "HDF5 file the run writes (--output); written as FILE.incomplete, then renamed." },
	{ .section = "output", .key = "sample_interval", .type = CXS_CFG_TIME, .def = "0",
	  .doc = "Time series: sample the counters output.sample selects every this much "
		 "simulated time into /series of the output (0: no time series)." },
	{ .section = "output", .key = "sample", .type = CXS_CFG_STRING, .def = "",
	  .doc = "Time series: which counters, as component/name globs separated by spaces, "
		 "e.g. \"port/tx_bytes_repl l1/misses\" (*/* for all); needs "
		 "output.sample_interval." },
	{ .section = "output", .key = "log_level", .type = CXS_CFG_ENUM, .def = "warn",
	  .choices = "error|warn|info|debug",
	  .doc = "Least severe log messages printed on stderr; -v and -vv raise it to info "
		 "and debug." },
};
const size_t cxs_app_nkeys = sizeof(cxs_app_keys) / sizeof(cxs_app_keys[0]);

int app_sampling_configure(const struct cxs_config *cfg, struct cxs_engine_config *e, char *err,
			   size_t errlen)
{
	const char *sample = cxs_config_str(cfg, "output", "sample");
	cxs_time interval = cxs_config_time_ps(cfg, "output", "sample_interval");
	char why[200];

	if (interval == 0) {
		if (sample[0] != '\0') {
			cxs_set_err(err, errlen, "%s: output.sample: is set, but output.sample_interval "
				    "is 0 (from %s); set an interval such as 1us to sample",
				    cxs_config_origin(cfg, "output", "sample"),
				    cxs_config_origin(cfg, "output", "sample_interval"));
			return -1;
		}
		return 0;
	}
	if (cxs_stats_patterns_check(sample, why, sizeof(why)) != 0) {
		cxs_set_err(err, errlen, "%s: output.sample: %s",
			    cxs_config_origin(cfg, "output", "sample"), why);
		return -1;
	}
	e->sample_interval = interval;
	e->sample = sample;
	return 0;
}
