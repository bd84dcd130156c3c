/*
 * cn_node.c — the compute node type of the memory system: its node port, its
 * memory hierarchy and CXL.mem agent (src/mem/cn_agent.c), its local DRAM,
 * its deadlock watchdog, and the cores that workload.c puts on it.
 *
 * Owns the keys of the CN's hierarchy: [system] cores_per_cn and core_ghz,
 * every [cache] key, and coherence.fault (a CN-side fault injection).
 *
 * Messages: the agent's coherence messages go out through the port as
 * EV_MSG; arriving CXL.mem messages are dispatched by the port to the agent
 * (class mem). Request completions come back from the agent at a computed
 * time and become EV_CORE_DONE events for the workload.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memsys_priv.h"

static const struct cxs_cfg_key cn_keys[] = {
	{"system", "cores_per_cn", CXS_CFG_UINT, "4", "Cores per compute node (DIKTAMO: 4).", NULL, 1, 32},
	{"system", "core_ghz", CXS_CFG_DOUBLE, "2.4", "Core clock in GHz (DIKTAMO: 2.4).", NULL, 0.1, 10},
	{"cache", "l1_size", CXS_CFG_SIZE, "48KiB", "L1 data cache per core.", NULL, 64, 1e12},
	{"cache", "l1_ways", CXS_CFG_UINT, "12", "L1 associativity.", NULL, 1, 64},
	{"cache", "l1_latency", CXS_CFG_UINT, "5", "L1 round-trip latency in core cycles.", NULL, 1, 1e6},
	{"cache", "l2_size", CXS_CFG_SIZE, "512KiB", "L2 per core.", NULL, 64, 1e12},
	{"cache", "l2_ways", CXS_CFG_UINT, "8", "L2 associativity.", NULL, 1, 64},
	{"cache", "l2_latency", CXS_CFG_UINT, "13", "L2 round-trip latency in core cycles.", NULL, 1, 1e6},
	{"cache", "l3_size", CXS_CFG_SIZE, "8MiB", "Shared inclusive L3 per CN.", NULL, 64, 1e12},
	{"cache", "l3_ways", CXS_CFG_UINT, "16", "L3 associativity.", NULL, 1, 64},
	{"cache", "l3_latency", CXS_CFG_UINT, "36", "L3 round-trip latency in core cycles.", NULL, 1, 1e6},
	{"coherence", "fault", CXS_CFG_ENUM, "none", "Fault injection for testing the checkers: ack_inv_keep_copy makes every CN acknowledge invalidations without dropping its copy (a stale-copy bug the exact check must report).", "none|ack_inv_keep_copy", 0, 0},
};
const struct cxs_key_table memsys_cn_key_table = CXS_KEY_TABLE(cn_keys);

enum { CN_FAULT_NONE = 0, CN_FAULT_ACK_INV_KEEP_COPY = 1 }; /* coherence.fault, in key order */

int cn_configure(const struct cxs_config *cfg, struct memsys *M, char *err, size_t errlen)
{
	char sub[256];
	struct cn_config *c = &M->cn;
	double ghz = cxs_config_double(cfg, "system", "core_ghz");
	c->cores = (uint32_t)cxs_config_uint(cfg, "system", "cores_per_cn");
	c->agent = (struct cxs_cn_params){
		.ncores = c->cores,
		.l1 = {cxs_config_size_bytes(cfg, "cache", "l1_size"),
		       (uint32_t)cxs_config_uint(cfg, "cache", "l1_ways"),
		       (uint32_t)cxs_config_uint(cfg, "cache", "l1_latency")},
		.l2 = {cxs_config_size_bytes(cfg, "cache", "l2_size"),
		       (uint32_t)cxs_config_uint(cfg, "cache", "l2_ways"),
		       (uint32_t)cxs_config_uint(cfg, "cache", "l2_latency")},
		.l3 = {cxs_config_size_bytes(cfg, "cache", "l3_size"),
		       (uint32_t)cxs_config_uint(cfg, "cache", "l3_ways"),
		       (uint32_t)cxs_config_uint(cfg, "cache", "l3_latency")},
		.cycle_ps = cxs_period_ps((uint64_t)llround(ghz * 1e9)),
		.map = &M->map,
		.first_mn_node = M->cns,
	};
	static const char *lv[] = {"l1", "l2", "l3"};
	const struct cxs_cache_geom *g[] = {&c->agent.l1, &c->agent.l2, &c->agent.l3};
	for (int i = 0; i < 3; i++) {
		if (cxs_cache_check(g[i], sub, sizeof sub) != 0) {
			char key[16];
			snprintf(key, sizeof key, "%s_size", lv[i]);
			snprintf(err, errlen, "%s: cache.%s: %s", cxs_config_origin(cfg, "cache", key),
				 key, sub);
			return -1;
		}
	}
	c->fault_keep_copy = cxs_config_enum(cfg, "coherence", "fault") == CN_FAULT_ACK_INV_KEEP_COPY;
	return 0;
}

/* ---- the agent's environment ------------------------------------------------ */

static void agent_send(void *ctx, cxs_time when, const struct cxs_coh_msg *m)
{
	struct cn_node *cn = ctx;
	cxs_nport_send(&cn->port, when, EV_MSG, m->dst, (enum cxs_msg_type)m->type, m, sizeof *m, 0);
}

static void agent_complete(void *ctx, cxs_time when, const struct cxs_mem_req *r, uint64_t value)
{
	struct cn_node *cn = ctx;
	struct core_done d = {.r = *r, .value = value};
	cxs_schedule(cn->lp, when - cxs_now(cn->lp), EV_CORE_DONE, &d, sizeof d);
}

static cxs_time agent_local_dram(void *ctx, cxs_time now, uint64_t line, int is_write)
{
	return cxs_dram_access(&((struct cn_node *)ctx)->dram, now, line, is_write);
}

static void agent_perform(void *ctx, cxs_time t, const struct cxs_mem_req *r, uint64_t value,
			  int is_write)
{
	exact_perform(ctx, t, r, value, is_write);
}

static void agent_invalidated(void *ctx, cxs_time t, uint32_t core, uint64_t line)
{
	workload_invalidated(ctx, t, core, line);
}

/* Tier mode puts the kernel's image in local memory too (tier.h). */
static void agent_init_local(void *ctx, uint64_t line, uint8_t out[CXS_LINE_BYTES])
{
	memsys_initial_line(((struct cn_node *)ctx)->M, line, out);
}

static void agent_replicated_write(void *ctx, cxs_time t, const struct cxs_mem_req *r,
				   uint64_t stamp, uint64_t word)
{
	dk_cn_performed(ctx, t, r, stamp, word);
}

/* CXL.mem from a home. */
static void on_coherence(void *ctx, cxs_time now, const struct cxs_envelope *env,
			 const void *body, uint32_t len)
{
	struct cn_node *cn = ctx;
	const struct cxs_coh_msg *m = body;
	char err[2048];
	err[0] = 0;
	(void)env;
	(void)len;
	if (cn->M->cn.fault_keep_copy && m->type == CXS_MSG_INV) {
		/* coherence.fault: acknowledge, but keep the (now stale) copy. */
		struct cxs_coh_msg ack = {.line = m->line, .type = CXS_MSG_INV_ACK,
					  .src = cxs_lp_id(cn->lp), .dst = m->src};
		agent_send(cn, now, &ack);
		return;
	}
	if (cxs_cn_handle(cn->agent, now, m, err, sizeof err) != 0)
		cxs_lp_fail(cn->lp, 3, "protocol error: %s", err);
}

/* ---- failures --------------------------------------------------------------------- */

static void cn_failure(struct cxs_lp *lp, void *state, const struct cxs_failure_notice *f)
{
	struct cn_node *cn = state;
	memsys_failure_notice(lp, cn->M, f, &cn->known_dead);
}

/* What this CN held when it failed (memsys.c, "Failures"): only a --fail run has it. */
struct held_record {
	struct cn_node *cn;
	struct cxs_vec *addr, *how, *lost_addr, *lost_value;
	uint64_t dirty_lines, lost_words;
	bool oom;
};

static void held_line(void *ctx, uint64_t line, enum cxs_cn_hold how, const uint8_t *data,
		      uint8_t unsaved)
{
	struct held_record *h = ctx;
	h->oom |= cxs_vec_push(h->addr, line << CXS_LINE_SHIFT) != 0 ||
		  cxs_vec_push(h->how, (uint64_t)how) != 0;
	if (how != CXS_HOLD_M)
		return;
	h->dirty_lines += unsaved != 0;
	for (uint32_t w = 0; w < CXS_LINE_BYTES / 8; w++) {
		if (!(unsaved >> w & 1))
			continue;
		uint64_t v;
		memcpy(&v, data + 8 * w, 8); /* little-endian host, as the line's bytes are */
		h->oom |= cxs_vec_push(h->lost_addr, (line << CXS_LINE_SHIFT) + 8 * w) != 0 ||
			  cxs_vec_push(h->lost_value, v) != 0;
		h->lost_words++;
	}
}

static void record_held_at_failure(struct cn_node *cn)
{
	struct cxs_stats *st = cxs_lp_stats(cn->lp);
	struct held_record h = {
		.cn = cn,
		.addr = cxs_stats_vector(st, "cn", "held_at_failure_addr", "address",
					 "CXL lines this CN held when it failed (--fail only: a killed rank takes them along)"),
		.how = cxs_stats_vector(st, "cn", "held_at_failure_state", "enum",
					"how each line of held_at_failure_addr was held: 0 S, 1 E, 2 M, 3 request pending at the home, 4 write-back in flight"),
		.lost_addr = cxs_stats_vector(st, "cn", "lost_addr", "address",
					      "words written under an M grant and not yet sent to memory: lost with the CN"),
		.lost_value = cxs_stats_vector(st, "cn", "lost_value", "value",
					       "the unsaved value of each word of lost_addr"),
	};
	uint64_t *c_lost = cxs_stats_counter(st, "cn", "lost_words", "words",
					     "words lost with this CN's failure (unsaved writes)");
	uint64_t *c_dirty = cxs_stats_counter(st, "cn", "lost_lines", "lines",
					      "M lines with unsaved words when this CN failed");
	if (!h.addr || !h.how || !h.lost_addr || !h.lost_value || !c_lost || !c_dirty) {
		cxs_log(CXS_LOG_ERROR, cxs_now(cn->lp), "node %u: cannot record its state at failure",
			cxs_lp_id(cn->lp));
		return;
	}
	cxs_cn_lines_held(cn->agent, held_line, &h);
	*c_lost = h.lost_words;
	*c_dirty = h.dirty_lines;
	if (h.oom)
		cxs_log(CXS_LOG_ERROR, cxs_now(cn->lp), "node %u: out of memory recording its state "
			"at failure (the record is incomplete)", cxs_lp_id(cn->lp));
	cxs_log(CXS_LOG_WARN, cxs_now(cn->lp),
		"node %u failed holding %llu CXL lines: %llu dirty with %llu unsaved words (lost; "
		"their values are in the output, cn/lost_*)",
		cxs_lp_id(cn->lp), (unsigned long long)h.addr->len,
		(unsigned long long)h.dirty_lines, (unsigned long long)h.lost_words);
}

/* ---- the node type -------------------------------------------------------------- */

static int cn_init(struct cxs_lp *lp, void *state)
{
	struct cn_node *cn = state;
	const struct memsys *M = cxs_lp_ctx(lp);
	char err[256];
	if (!M)
		cxs_bug(lp, "memsys: the run has no memsys instance (configure was not called)");
	cn->lp = lp;
	cn->M = M;
	cn->watch = (struct node_watch){.lp = lp, .interval = M->watchdog};
	if (cxs_nport_init(&cn->port, lp, &M->port) != 0 ||
	    cxs_dram_init(&cn->dram, cxs_tier_dram(&M->tier, true, &M->mn.dram), err, sizeof err) != 0) {
		cxs_lp_fail(lp, 2, "node %u: %s", cxs_lp_id(lp), err);
		return -1;
	}
	cn->port.on_arrival = watch_on_arrival;
	cn->port.arrival_ctx = &cn->watch;
	cxs_nport_on_class(&cn->port, CXS_CLASS_MEM, on_coherence, cn);
	struct cxs_cn_env env = {.ctx = cn, .send = agent_send, .complete = agent_complete,
				 .local_dram = agent_local_dram, .perform = agent_perform,
				 .invalidated = agent_invalidated, .init_local = agent_init_local,
				 .replicated_write = M->dk ? agent_replicated_write : NULL};
	if (M->exact)
		exact_cn_init(M->exact, cn);
	cn->agent = cxs_cn_new(cxs_lp_id(lp), &M->cn.agent, &env, cxs_lp_stats(lp), err, sizeof err);
	if (!cn->agent) {
		cxs_lp_fail(lp, 2, "node %u: %s", cxs_lp_id(lp), err);
		return -1;
	}
	if (M->snapshot_at)
		cxs_schedule(lp, M->snapshot_at, EV_SNAPSHOT, NULL, 0);
	if ((M->dk && dk_cn_init(cn, err, sizeof err) != 0) ||
	    workload_cn_init(cn, err, sizeof err) != 0) {
		cxs_lp_fail(lp, 2, "node %u: %s", cxs_lp_id(lp), err);
		return -1;
	}
	return 0;
}

static void cn_event(struct cxs_lp *lp, void *state, const struct cxs_event *ev)
{
	struct cn_node *cn = state;
	char err[512];
	err[0] = 0;
	switch (ev->type) {
	case EV_MSG:
		cxs_nport_arrive(&cn->port, ev);
		return;
	case EV_DELIVER:
		cxs_nport_deliver(&cn->port, ev);
		return;
	case EV_SEND:
		cxs_nport_send_held(&cn->port, ev);
		return;
	case EV_CORE_ISSUE:
		watch_arm(&cn->watch);
		workload_issue(cn, ev);
		return;
	case EV_CORE_STEP:
		workload_step(cn, ev);
		return;
	case EV_CORE_DONE:
		workload_done(cn, ev);
		return;
	case EV_DK_LOGGER:
		cxs_dk_logger_event(cn->dkl, ev);
		return;
	case EV_FAILED: {
		uint32_t failed = ((const struct fail_ev *)(const void *)ev->data)->node;
		cn->dead |= UINT64_C(1) << failed;
		if (cn->M->dk) {
			dk_cn_failed(cn, failed);
		} else {
			cn->runtime_failed = cn->dead; /* no recovery: the runtime learns now */
			/* The oracle looks once every node has taken the report in (same instant). */
			uint64_t live = ~cn->dead & (cn->M->cns >= 64 ? UINT64_MAX
								   : (UINT64_C(1) << cn->M->cns) - 1);
			if (cn->M->exact && live && (uint32_t)__builtin_ctzll(live) == cxs_lp_id(lp))
				cxs_schedule(lp, 1, EV_ORACLE, NULL, 0);
		}
		return;
	}
	case EV_SNAPSHOT:
		image_cn_part(cn, "snapshot");
		return;
	case EV_ORACLE:
		oracle_check(lp, cn->M, "after the failure (no recovery under wb and wt)");
		return;
	case EV_WATCHDOG:
		cn->watch.armed = false;
		if (ev->time >= cn->watch_quiet_until &&
		    (cxs_cn_stuck(cn->agent, ev->time, cn->M->deadlock_timeout, err, sizeof err) ||
		     (cn->M->dk && dk_cn_stuck(cn, ev->time, err, sizeof err))))
			cxs_lp_fail(lp, 4, "deadlock: %s", err);
		else if (cxs_cn_pending(cn->agent) || (cn->M->dk && dk_cn_busy(cn)))
			watch_arm(&cn->watch);
		return;
	default:
		cxs_bug(lp, "CN got event type %u", ev->type);
	}
}

static void cn_progress(const struct cxs_lp *lp, const void *state, uint64_t *done,
			uint64_t *total)
{
	(void)lp;
	workload_progress(state, done, total);
}

static void cn_finalize(struct cxs_lp *lp, void *state)
{
	struct cn_node *cn = state;
	oracle_finalize(lp, cn->M);
	dram_counters(cxs_lp_stats(cn->lp), &cn->dram);
	if (!cxs_node_alive(lp, cxs_lp_id(lp)))
		record_held_at_failure(cn);
	workload_cn_finish(cn);
	dk_finalize(lp);
	cxs_cn_free(cn->agent);
	cxs_dram_destroy(&cn->dram);
}

const struct cxs_node_type memsys_cn_type = {
	.name = "cn",
	.state_size = sizeof(struct cn_node),
	.init = cn_init,
	.event = cn_event,
	.failure = cn_failure,
	.finalize = cn_finalize,
	.progress = cn_progress,
};

/* ---- shared with the MN ----------------------------------------------------------- */

void dram_counters(struct cxs_stats *st, const struct cxs_dram *d)
{
	*cxs_stats_counter(st, "dram", "reads", "lines", "DRAM reads") = d->reads;
	*cxs_stats_counter(st, "dram", "writes", "lines", "DRAM writes") = d->writes;
	*cxs_stats_counter(st, "dram", "bytes", "bytes", "bytes moved to or from DRAM") = d->bytes;
	*cxs_stats_counter(st, "dram", "row_hits", "accesses", "accesses that found their row open") =
		d->row_hits;
	*cxs_stats_counter(st, "dram", "bus_busy_ps", "ps",
			   "data bus occupancy summed over channels: bandwidth used = bytes / end time") =
		d->busy_bus_ps;
	*cxs_stats_counter(st, "dram", "latency_ps_total", "ps", "sum of access latencies") =
		d->total_latency_ps;
}
