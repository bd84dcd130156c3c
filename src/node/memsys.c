/*
 * memsys.c — the CXL memory system as a model (`--model memsys`): compute
 * nodes (cores with private L1/L2, a shared L3, local DRAM; cn_node.c) and
 * memory nodes (home directory, DRAM, contents; mn_node.c) on one CXL switch.
 * Nodes 0 .. cns-1 are CNs, cns .. cns+mns-1 are MNs. What the cores run is
 * workload.c's; the exact checker is exact_check.c.
 *
 * This file owns the [system] and [coherence] keys that concern the whole
 * cluster, assembles the instance from every part's configure function, and
 * registers the model. Defaults are DIKTAMO's Table II wherever it gives a
 * value.
 *
 * A message between nodes: the sender's agent emits it at some time `when`
 * (now or later: a DRAM read, a directory lookup); the node port
 * (include/cxlsim/nport.h) adds egress queueing and the flight, and the
 * engine delivers it at the arrival time; the receiver's port adds ingress
 * queueing and hands it to the agent registered for its class.
 *
 * Deadlock and livelock detection: a node with work in progress (requests of
 * its cores, home transactions) runs a watchdog every
 * coherence.watchdog_interval of simulated time; a CN request or a home
 * transaction that has made no progress for coherence.deadlock_timeout stops
 * the run with an error naming the node, the line and the states involved.
 * An idle node's watchdog stops and the next message or request re-arms it,
 * so a finished workload ends the run instead of ticking to the end time
 * (which cost a window per tick: memsys at np = 2 was 3x slower than np = 1).
 *
 * Failures (WB and WT; DIKTAMO's replication and recovery build on this). A
 * CN fail-stops at T_f (engine.h). The switch notices diktamo.detect_latency
 * later and never answers for it (the engine drops what is sent to it); at
 * that moment every home forgets it exactly (cxs_home_cn_failed: sharer
 * vectors, transactions waiting on it, its queued requests), and the lines it
 * owned — E or M, which a home cannot tell apart — keep their memory value
 * and are recorded as owned at failure (home/owned_at_failure_addr); a WB
 * CN's dirty words in them are lost, a WT CN's are not (every store completed
 * only once its MN had it). The detection latency exceeds any message's
 * flight, so everything the CN sent before T_f has arrived by then (anything
 * later is dropped and counted, home/dropped_from_dead). Before detection a
 * transaction waiting on the dead CN is not a deadlock: the watchdog says so
 * and waits. A CN failed with --fail keeps its state in the process and
 * records what it held (cn/held_at_failure_*, cn/lost_*), so a test can check
 * the homes' lists against it. Surviving threads stuck on a lock a dead
 * thread holds or at a barrier dead threads never reach are reported
 * (workload.c), not run forever as errors. An MN failure is outside the model:
 * the run stops with an error naming it.
 */
#include "cxlsim/memsys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxlsim/model.h"
#include "memsys_priv.h"

static const struct cxs_cfg_key memsys_keys[] = {
	{"system", "cns", CXS_CFG_UINT, "4", "Compute nodes (DIKTAMO: 16); at most 64, the home's sharer vector.", NULL, 1, CXS_MAX_CNS},
	{"system", "mns", CXS_CFG_UINT, "2", "Memory nodes (DIKTAMO: 16).", NULL, 1, 1024},
	{"system", "local_size", CXS_CFG_SIZE, "1GiB", "Private memory per CN.", NULL, 4096, 1e15},
	{"system", "cxl_size", CXS_CFG_SIZE, "1GiB", "Shared CXL memory, over all MNs.", NULL, 4096, 1e15},
	{"system", "interleave", CXS_CFG_SIZE, "64B", "Interleaving unit of CXL memory over the MNs: 64B (lines) or 4KiB (pages).", NULL, 64, 1e9},
	{"system", "protocol", CXS_CFG_ENUM, "wb", "How remote (CXL) stores reach memory: wb (MESI write-back) or wt (write-through: every remote store is written to its MN, and under TSO the next store waits for the MN's ack; DIKTAMO Fig. 2).", CXS_PROTOCOL_CHOICES, 0, 0},
	{"coherence", "deadlock_timeout", CXS_CFG_TIME, "100us", "No progress on a request or a home transaction for this long stops the run as a deadlock.", NULL, 1, 1e18},
	{"coherence", "watchdog_interval", CXS_CFG_TIME, "10us", "How often each node checks for a deadlock.", NULL, 1, 1e18},
	{"image", "snapshot_at", CXS_CFG_TIME, "0", "Every node writes its part of the coherent image of CXL memory at this simulated time (--snapshot-at; 0: never); analysis/cxlsim-imagediff assembles and compares images.", NULL, 0, 1e18},
	{"coherence", "drop_message", CXS_CFG_ENUM, "none", "Fault injection for testing the deadlock detector: every node loses the first message of this type it sends.", "none|inv_ack|recall_data|put_ack|data_m", 0, 0},
};

static int configure_system(const struct cxs_config *cfg, struct memsys *M, char *err,
			    size_t errlen)
{
	char sub[256];
	M->cns = (uint32_t)cxs_config_uint(cfg, "system", "cns");
	M->mns = (uint32_t)cxs_config_uint(cfg, "system", "mns");
	M->protocol = (enum cxs_protocol)cxs_config_enum(cfg, "system", "protocol");
	struct cxs_addr_map_params mp = {
		.nmns = M->mns,
		.local_bytes = cxs_config_size_bytes(cfg, "system", "local_size"),
		.cxl_bytes = cxs_config_size_bytes(cfg, "system", "cxl_size"),
		.interleave_bytes = cxs_config_size_bytes(cfg, "system", "interleave"),
	};
	if (cxs_tier_configure(cfg, &M->tier, &mp, err, errlen) != 0)
		return -1;
	if (cxs_addr_map_init(&M->map, &mp, sub, sizeof sub) != 0) {
		snprintf(err, errlen, "[system]: %s", sub);
		return -1;
	}
	if (cxs_fabric_configure(cfg, &M->fab, err, errlen) != 0)
		return -1;
	M->detect_latency = cxs_config_time_ps(cfg, "diktamo", "detect_latency");
	M->deadlock_timeout = cxs_config_time_ps(cfg, "coherence", "deadlock_timeout");
	M->watchdog = cxs_config_time_ps(cfg, "coherence", "watchdog_interval");
	M->snapshot_at = cxs_config_time_ps(cfg, "image", "snapshot_at");
	cxs_time end = cxs_config_time_ps(cfg, "engine", "end_time");
	if (M->snapshot_at && M->snapshot_at >= (end ? end : CXS_END_CAP)) {
		snprintf(err, errlen, "%s: image.snapshot_at: not before engine.end_time (from %s): the "
			 "run would never reach it", cxs_config_origin(cfg, "image", "snapshot_at"),
			 cxs_config_origin(cfg, "engine", "end_time"));
		return -1;
	}
	static const int drops[] = {-1, CXS_MSG_INV_ACK, CXS_MSG_RECALL_DATA, CXS_MSG_PUT_ACK,
				    CXS_MSG_DATA_M};
	M->port = (struct cxs_nport_cfg){
		.fab = &M->fab,
		.ev_deliver = EV_DELIVER,
		.ev_send = EV_SEND,
		.drop_type = drops[cxs_config_enum(cfg, "coherence", "drop_message")],
		.drop_key = "coherence.drop_message",
	};
	return 0;
}

void memsys_failure_notice(struct cxs_lp *lp, const struct memsys *M,
			   const struct cxs_failure_notice *f, uint64_t *known)
{
	cxs_time now = cxs_now(lp);
	for (size_t i = 0; i < f->n; i++) {
		uint32_t node = f->nodes[i];
		cxs_time tf = f->times[i];
		if (node >= M->cns) {
			cxs_lp_fail(lp, 9,
				    "memory node %u failed at %llu ps: MN failures are outside the "
				    "failure model (MNs do not fail, DIKTAMO §III-B); the run stops",
				    node, (unsigned long long)tf);
			continue;
		}
		*known |= UINT64_C(1) << node;
		cxs_time detect = tf + M->detect_latency;
		if (detect < now) {
			/* Only a kill from outside, with windows far apart, gets here. */
			cxs_log(CXS_LOG_WARN, now,
				"node %u: learnt of CN %u's failure (at %llu ps) only after the switch "
				"would have detected it (%llu ps): reacting now",
				cxs_lp_id(lp), node, (unsigned long long)tf, (unsigned long long)detect);
			detect = now;
		}
		struct fail_ev fe = {.node = node, .tf = tf};
		cxs_schedule(lp, detect - now, EV_FAILED, &fe, sizeof fe);
	}
}

static const struct cxs_node_type *type_of(uint32_t node, void *ctx)
{
	const struct memsys *M = ctx;
	return node < M->cns ? &memsys_cn_type : &memsys_mn_type;
}

static void release(void *ctx)
{
	struct memsys *M = ctx;
	if (!M)
		return;
	workload_release(&M->wl);
	exact_release(M->exact);
	dk_release(M->dk);
	free(M);
}

static int configure(const struct cxs_config *cfg, struct cxs_model_run *out, char *err,
		     size_t errlen)
{
	struct memsys *M = calloc(1, sizeof *M);
	if (!M) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* The order matters: the CN's configuration needs the address map,
	 * the workload the CN's clock and the cluster's sizes. */
	if (configure_system(cfg, M, err, errlen) != 0 || cn_configure(cfg, M, err, errlen) != 0 ||
	    mn_configure(cfg, M, err, errlen) != 0 || exact_configure(cfg, M, err, errlen) != 0 ||
	    workload_configure(cfg, M, err, errlen) != 0 || dk_configure(cfg, M, err, errlen) != 0) {
		release(M);
		return -1;
	}
	*out = (struct cxs_model_run){
		.ctx = M,
		.nnodes = M->cns + M->mns,
		.lookahead = cxs_fabric_min_latency(&M->fab),
		.lookahead_section = "fabric",
		.lookahead_key = "link_latency",
		.type_of = type_of,
		.end_time = CXS_END_CAP,
	};
	return 0;
}

static const struct cxs_key_table system_keys = CXS_KEY_TABLE(memsys_keys);
static const struct cxs_key_table *const tables[] = {
	&system_keys, &memsys_cn_key_table, &memsys_mn_key_table, &cxs_fabric_key_table,
	&memsys_workload_key_table, &cxs_core_key_table, &cxs_tester_key_table,
	&memsys_exact_key_table, &cxs_trace_replay_key_table, &cxs_tier_key_table,
	&cxs_dk_key_table, NULL,
};

const struct cxs_model cxs_memsys_model = {
	.name = "memsys",
	.doc = "the CXL memory system: CNs with out-of-order cores and caches, MNs with home "
	       "directories, one switch",
	.keys = tables,
	.configure = configure,
	.release = release,
};
