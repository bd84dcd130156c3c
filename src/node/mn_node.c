/*
 * mn_node.c — the memory node type of the memory system: its node port, the
 * home directory of its share of CXL memory (src/mem/home.c) with the real
 * contents, its DRAM, and its deadlock watchdog.
 *
 * Owns the [mn] keys. DRAM timing (dram_channels, dram_banks) is also that of
 * every CN's local memory. The initial contents of CXL memory are the
 * workload's shared image (zeros beyond it).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memsys_priv.h"

static const struct cxs_cfg_key mn_keys[] = {
	{"mn", "dir_latency", CXS_CFG_TIME, "20ns", "Home directory lookup per message.", NULL, 0, 1e12},
	{"mn", "dram_channels", CXS_CFG_UINT, "4", "DRAM channels per MN (and per CN's local memory).", NULL, 1, 64},
	{"mn", "dram_banks", CXS_CFG_UINT, "16", "Banks per channel.", NULL, 1, 256},
};
const struct cxs_key_table memsys_mn_key_table = CXS_KEY_TABLE(mn_keys);

int mn_configure(const struct cxs_config *cfg, struct memsys *M, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	cxs_dram_default(&M->mn.dram);
	M->mn.dram.nchannels = (uint32_t)cxs_config_uint(cfg, "mn", "dram_channels");
	M->mn.dram.nbanks = (uint32_t)cxs_config_uint(cfg, "mn", "dram_banks");
	M->mn.dir_latency = cxs_config_time_ps(cfg, "mn", "dir_latency");
	return 0;
}

struct mn_node {
	struct cxs_lp *lp;
	const struct memsys *M;
	struct cxs_nport port;
	struct cxs_dram dram;
	struct node_watch watch;
	struct cxs_home home;
	uint64_t known_dead;            /* CNs the engine has said failed */
	struct cxs_vec *owned_addr, *owned_cn; /* registered at the first CN failure */
	uint64_t *c_owned;
	uint32_t failed_cn;             /* the CN being forgotten (cn_failed) */
	bool warned_waiting;            /* the watchdog said once that it waits on a failed CN */
	struct cxs_dk_keeper *keeper;   /* DIKTAMO (M->dk): the logs dumped here */
	struct cxs_dk_rec_mn *rec;      /* ... and recovery */
	uint64_t *waiting;              /* lines held for recovery (cxs_home_cn_failed) */
	size_t nwaiting, cap_waiting;
};

static void home_send(void *ctx, cxs_time when, const struct cxs_coh_msg *m)
{
	struct mn_node *mn = ctx;
	cxs_nport_send(&mn->port, when, EV_MSG, m->dst, (enum cxs_msg_type)m->type, m, sizeof *m, 0);
}

static cxs_time home_dram(void *ctx, cxs_time now, uint64_t line, int is_write)
{
	struct mn_node *mn = ctx;
	struct cxs_addr_target t = cxs_addr_map_lookup(&mn->M->map, line << CXS_LINE_SHIFT);
	return cxs_dram_access(&mn->dram, now, t.mn_line, is_write);
}

/* Initial contents of CXL memory: the workload's image (zeros beyond it). */
static void home_init_line(void *ctx, uint64_t line, uint8_t out[CXS_LINE_BYTES])
{
	memsys_initial_line(((const struct mn_node *)ctx)->M, line, out);
}

struct cxs_home *mn_home(struct mn_node *mn)
{
	return &mn->home;
}

/* CXL.mem from a CN. */
static void on_coherence(void *ctx, cxs_time now, const struct cxs_envelope *env,
			 const void *body, uint32_t len)
{
	struct mn_node *mn = ctx;
	char err[512];
	err[0] = 0;
	(void)env;
	(void)len;
	if (cxs_home_handle(&mn->home, now, body, err, sizeof err) != 0)
		cxs_lp_fail(mn->lp, 3, "protocol error: %s", err);
}

/* cxs_home_cn_failed's report: one line the failed CN owned. */
static void owned_at_failure(void *ctx, uint64_t line)
{
	struct mn_node *mn = ctx;
	if (cxs_vec_push(mn->owned_addr, line << CXS_LINE_SHIFT) != 0 ||
	    cxs_vec_push(mn->owned_cn, mn->failed_cn) != 0)
		cxs_lp_fail(mn->lp, 2, "node %u: out of memory recording lines owned at failure",
			    cxs_lp_id(mn->lp));
	++*mn->c_owned;
	if (!mn->home.recover_owned)
		return;
	/* DIKTAMO: the line waits for recovery. */
	if (mn->nwaiting == mn->cap_waiting) {
		size_t cap = mn->cap_waiting ? 2 * mn->cap_waiting : 256;
		uint64_t *a = realloc(mn->waiting, cap * sizeof *a);
		if (!a)
			cxs_bug(mn->lp, "out of memory holding lines for recovery");
		mn->waiting = a;
		mn->cap_waiting = cap;
	}
	mn->waiting[mn->nwaiting++] = line;
}

/* ---- DIKTAMO recovery's view of the home ---------------------------------------- */

static bool still_waiting(const struct mn_node *mn, uint64_t line)
{
	const struct cxs_home_entry *e = cxs_home_entry(&mn->home, line);
	return e && (e->busy == CXS_HB_RECOVER || (e->busy == CXS_HB_RECALL && e->recover));
}

static size_t rec_owned(void *ctx, const uint64_t **lines)
{
	struct mn_node *mn = ctx;
	size_t k = 0;
	for (size_t i = 0; i < mn->nwaiting; i++)
		if (still_waiting(mn, mn->waiting[i]))
			mn->waiting[k++] = mn->waiting[i];
	mn->nwaiting = k;
	*lines = mn->waiting;
	return k;
}

static void rec_snapshot(void *ctx)
{
	struct mn_node *mn = ctx;
	image_mn_part(mn->lp, &mn->home, "recovered");
}

static size_t rec_dir_entries(void *ctx)
{
	return cxs_home_entries(&((struct mn_node *)ctx)->home);
}

static int rec_recovered(void *ctx, cxs_time now, uint64_t line, const uint8_t data[64],
			 uint8_t mask, cxs_time *done, bool *dirty, char *err, size_t errlen)
{
	struct mn_node *mn = ctx;
	uint8_t before[CXS_LINE_BYTES];
	cxs_home_read(&mn->home, line, before);
	*dirty = false;
	for (uint32_t w = 0; w < CXS_LINE_BYTES / 8; w++)
		*dirty |= (mask >> w & 1) && memcmp(before + 8 * w, data + 8 * w, 8) != 0;
	int rc = cxs_home_recovered(&mn->home, now, line, data, mask, done, err, errlen);
	if (mn->home.nbusy)
		watch_arm(&mn->watch);
	return rc;
}

/* The switch reports a CN's failure: the home forgets it (memsys.c, "Failures"). */
static void cn_failed(struct mn_node *mn, const struct cxs_event *ev)
{
	const struct fail_ev *fe = (const void *)ev->data;
	struct cxs_stats *st = cxs_lp_stats(mn->lp);
	char err[512];
	err[0] = 0;
	if (!mn->owned_addr) {
		mn->owned_addr = cxs_stats_vector(st, "home", "owned_at_failure_addr", "address",
						  "lines a failed CN owned (E or M) when the switch detected its failure: their memory value stands");
		mn->owned_cn = cxs_stats_vector(st, "home", "owned_at_failure_cn", "node",
						"the failed CN of each line in owned_at_failure_addr");
		mn->c_owned = cxs_stats_counter(st, "home", "owned_at_failure_lines", "lines",
						"lines failed CNs owned when their failure was detected");
		if (!mn->owned_addr || !mn->owned_cn || !mn->c_owned) {
			cxs_lp_fail(mn->lp, 2, "node %u: cannot register the failure records",
				    cxs_lp_id(mn->lp));
			return;
		}
	}
	uint64_t before = *mn->c_owned;
	mn->failed_cn = fe->node;
	if (cxs_home_cn_failed(&mn->home, ev->time, fe->node, owned_at_failure, mn, err,
			       sizeof err) != 0) {
		cxs_lp_fail(mn->lp, 3, "protocol error: %s", err);
		return;
	}
	cxs_log(CXS_LOG_INFO, ev->time,
		"node %u: CN %u failed at %llu ps; %llu of the lines it owned (E or M) were "
		"homed here and keep their memory value",
		cxs_lp_id(mn->lp), fe->node, (unsigned long long)fe->tf,
		(unsigned long long)(*mn->c_owned - before));
	if (mn->home.nbusy)
		watch_arm(&mn->watch);
}

static void mn_failure(struct cxs_lp *lp, void *state, const struct cxs_failure_notice *f)
{
	struct mn_node *mn = state;
	memsys_failure_notice(lp, mn->M, f, &mn->known_dead);
}

static int mn_init(struct cxs_lp *lp, void *state)
{
	struct mn_node *mn = state;
	const struct memsys *M = cxs_lp_ctx(lp);
	char err[256];
	if (!M)
		cxs_bug(lp, "memsys: the run has no memsys instance (configure was not called)");
	mn->lp = lp;
	mn->M = M;
	mn->watch = (struct node_watch){.lp = lp, .interval = M->watchdog};
	if (cxs_nport_init(&mn->port, lp, &M->port) != 0 ||
	    cxs_dram_init(&mn->dram, cxs_tier_dram(&M->tier, false, &M->mn.dram), err, sizeof err) != 0) {
		cxs_lp_fail(lp, 2, "node %u: %s", cxs_lp_id(lp), err);
		return -1;
	}
	mn->port.on_arrival = watch_on_arrival;
	mn->port.arrival_ctx = &mn->watch;
	cxs_nport_on_class(&mn->port, CXS_CLASS_MEM, on_coherence, mn);
	struct cxs_home_env env = {.ctx = mn, .send = home_send, .dram = home_dram,
				   .init_line = home_init_line};
	if (cxs_home_init(&mn->home, cxs_lp_id(lp), M->cns, M->mn.dir_latency, &env,
			  cxs_lp_stats(lp)) != 0) {
		cxs_lp_fail(lp, 2, "node %u: cannot create the home directory", cxs_lp_id(lp));
		return -1;
	}
	if (M->exact)
		exact_mn_init(M->exact, mn, cxs_lp_id(lp) - M->cns);
	struct cxs_dk_rec_mn_env renv = {.ctx = mn, .owned = rec_owned,
					 .dir_entries = rec_dir_entries, .recovered = rec_recovered,
					 .snapshot = rec_snapshot};
	if (M->snapshot_at)
		cxs_schedule(lp, M->snapshot_at, EV_SNAPSHOT, NULL, 0);
	mn->home.recover_owned = M->dk != NULL;
	if (M->dk && !(mn->keeper = dk_mn_init(lp, &mn->port, &renv, &mn->rec, err, sizeof err))) {
		cxs_lp_fail(lp, 2, "node %u: %s", cxs_lp_id(lp), err);
		return -1;
	}
	return 0;
}

static void mn_event(struct cxs_lp *lp, void *state, const struct cxs_event *ev)
{
	struct mn_node *mn = state;
	char err[512];
	err[0] = 0;
	switch (ev->type) {
	case EV_MSG:
		cxs_nport_arrive(&mn->port, ev);
		return;
	case EV_DELIVER:
		cxs_nport_deliver(&mn->port, ev);
		return;
	case EV_SEND:
		cxs_nport_send_held(&mn->port, ev);
		return;
	case EV_WATCHDOG: {
		uint32_t awaited = UINT32_MAX;
		mn->watch.armed = false;
		if (!cxs_home_stuck_on(&mn->home, ev->time, mn->M->deadlock_timeout, err, sizeof err,
				       &awaited)) {
			if (mn->home.nbusy)
				watch_arm(&mn->watch);
			return;
		}
		if (awaited < 64 && (mn->known_dead >> awaited & 1) && !(mn->home.dead >> awaited & 1)) {
			/* Not a deadlock: the CN it waits on failed, the switch will say so. */
			if (!mn->warned_waiting)
				cxs_log(CXS_LOG_WARN, ev->time, "node %u: waiting on failed node %u "
					"until the switch detects it: %s", cxs_lp_id(lp), awaited, err);
			mn->warned_waiting = true;
			watch_arm(&mn->watch);
			return;
		}
		if (awaited < 64 && (mn->home.dead >> awaited & 1))
			cxs_lp_fail(lp, 4, "deadlock on failed node %u, which the home has "
				    "already forgotten (a bug): %s", awaited, err);
		else
			cxs_lp_fail(lp, 4, "deadlock: %s", err);
		return;
	}
	case EV_FAILED:
		cn_failed(mn, ev);
		if (mn->keeper) {
			uint32_t failed = ((const struct fail_ev *)(const void *)ev->data)->node;
			cxs_dk_keeper_cn_failed(mn->keeper, failed);
			cxs_dk_rec_mn_failed(mn->rec, failed, ev->time);
		}
		return;
	case EV_DK_RECOVERY:
		cxs_dk_rec_mn_event(mn->rec, ev);
		return;
	case EV_SNAPSHOT:
		image_mn_part(lp, &mn->home, "snapshot");
		return;
	case EV_DK_KEEPER:
		cxs_dk_keeper_event(mn->keeper, ev);
		return;
	default:
		cxs_bug(lp, "MN got event type %u", ev->type);
	}
}

static void mn_finalize(struct cxs_lp *lp, void *state)
{
	struct mn_node *mn = state;
	oracle_finalize(lp, mn->M);
	dram_counters(cxs_lp_stats(mn->lp), &mn->dram);
	if (mn->home.dropped_from_dead)
		*cxs_stats_counter(cxs_lp_stats(lp), "home", "dropped_from_dead", "messages",
				   "messages from failed CNs that arrived after their failure was handled") =
			mn->home.dropped_from_dead;
	dk_finalize(lp);
	free(mn->waiting);
	cxs_home_free(&mn->home);
	cxs_dram_destroy(&mn->dram);
}

const struct cxs_node_type memsys_mn_type = {
	.name = "mn",
	.state_size = sizeof(struct mn_node),
	.init = mn_init,
	.event = mn_event,
	.failure = mn_failure,
	.finalize = mn_finalize,
};
