/*
 * dk_node.c — DIKTAMO on the memory system's nodes (system.protocol =
 * baseline, parallel, proactive or proactive_noc; papers/diktamo.md §III–IV).
 *
 *   CN   a sender (src/diktamo/replication.c) behind its cores' env.replicate
 *        and the agent's replicated_write hook, which performs a store and
 *        sends its VALs in one step; a logger (logging.c): the CN's Logging
 *        Unit, whose DRAM log lives in the CN's local DRAM
 *   MN   a keeper (keeper.c): the compressed logs dumped to it; the first
 *        MN's keeper coordinates the dump rounds
 *
 * They talk through the node port, class repl, whose messages may take up to
 * fabric.repl_jitter of extra flight (adaptive routing: VALs overtake each
 * other, which the Logging Units must and do handle); a CN's messages to its
 * own Logging Unit stay inside the node (an L3 access away).
 *
 * The components of this process's nodes are kept in the cluster (struct
 * dk_cluster) and freed at release, after the output is written: the
 * protocol checker (diktamo.check) reads every Logging Unit and MN log at the
 * end, in the finalize of the process's last node, so none may be freed
 * before. Like tester.exact_check, the checker reaches across nodes: it
 * needs every node in one process and fails the run otherwise.
 *
 * Failures: the switch's report (EV_FAILED) takes the CN out of every
 * component's live set (no more REPLs to it, no dump round waits for it).
 * Recovery is not here yet.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memsys_priv.h"

struct dk_cluster {
	struct cxs_dk_params p;
	struct cxs_dk_world w;
	/* this process's components by node id (NULL elsewhere), freed by dk_release */
	struct cxs_dk_sender **senders;
	struct cxs_dk_logger **loggers;
	struct cxs_dk_keeper **keepers;
	struct cxs_dk_rec_cn **rec_cns;
	struct cxs_dk_rec_mn **rec_mns;
	uint32_t nodes, here, finalized;
};

static uint32_t home_of(void *ctx, uint64_t line)
{
	const struct memsys *M = ctx;
	return cxs_addr_map_lookup(&M->map, line << CXS_LINE_SHIFT).mn;
}

/* A [diktamo] key the configuration sets, or NULL. */
static const char *set_key(const struct cxs_config *cfg)
{
	for (size_t i = 0; i < cxs_dk_key_table.n; i++) {
		const struct cxs_cfg_key *k = &cxs_dk_key_table.keys[i];
		if (strcmp(cxs_config_origin(cfg, k->section, k->key), "default") != 0)
			return k->key;
	}
	return NULL;
}

int dk_configure(const struct cxs_config *cfg, struct memsys *M, char *err, size_t errlen)
{
	const char *key = set_key(cfg);
	if (!cxs_protocol_replicates(M->protocol)) {
		if (key) {
			snprintf(err, errlen,
				 "%s: diktamo.%s: system.protocol = %s replicates nothing (DIKTAMO's "
				 "protocols are baseline, parallel, proactive, proactive_noc)",
				 cxs_config_origin(cfg, "diktamo", key), key,
				 cxs_protocol_name(M->protocol));
			return -1;
		}
		return 0;
	}
	if (!M->wl.kernel) {
		snprintf(err, errlen,
			 "%s: system.protocol = %s replicates the stores of out-of-order cores, but "
			 "workload.kernel = tester issues requests without a store buffer: choose a "
			 "kernel",
			 cxs_config_origin(cfg, "system", "protocol"), cxs_protocol_name(M->protocol));
		return -1;
	}
	struct dk_cluster *d = calloc(1, sizeof *d);
	if (!d) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	M->dk = d;
	if (cxs_dk_configure(cfg, &d->p, err, errlen) != 0)
		return -1;
	d->nodes = M->cns + M->mns;
	d->senders = calloc(M->cns, sizeof *d->senders);
	d->loggers = calloc(M->cns, sizeof *d->loggers);
	d->keepers = calloc(M->mns, sizeof *d->keepers);
	d->rec_cns = calloc(M->cns, sizeof *d->rec_cns);
	d->rec_mns = calloc(M->mns, sizeof *d->rec_mns);
	if (!d->senders || !d->loggers || !d->keepers || !d->rec_cns || !d->rec_mns ||
	    (d->p.check && !(d->w.check = cxs_dk_check_new(M->cns, M->mns)))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	d->w.p = &d->p;
	d->w.cns = M->cns;
	d->w.mns = M->mns;
	d->w.first_mn = M->cns;
	d->w.cores_per_cn = M->cn.cores;
	d->w.sb_entries = M->wl.core.sq;
	d->w.ev_msg = EV_MSG;
	d->w.home_of = home_of;
	d->w.home_ctx = M;
	M->wl.core.commit_before_ack = d->p.fault == CXS_DK_FAULT_COMMIT_BEFORE_ACK;
	/* A CN's own Logging Unit is an L3 access away; the fabric may reorder class repl. */
	M->port.self_latency = M->cn.agent.l3.latency_cycles * M->cn.agent.cycle_ps;
	M->port.jitter[CXS_CLASS_REPL] = M->fab.repl_jitter;
	return 0;
}

void dk_release(struct dk_cluster *d)
{
	if (!d)
		return;
	for (uint32_t i = 0; d->senders && d->loggers && d->rec_cns && i < d->w.cns; i++) {
		cxs_dk_sender_free(d->senders[i]);
		cxs_dk_logger_free(d->loggers[i]);
		cxs_dk_rec_cn_free(d->rec_cns[i]);
	}
	for (uint32_t i = 0; d->keepers && d->rec_mns && i < d->w.mns; i++) {
		cxs_dk_keeper_free(d->keepers[i]);
		cxs_dk_rec_mn_free(d->rec_mns[i]);
	}
	free(d->senders);
	free(d->loggers);
	free(d->keepers);
	free(d->rec_cns);
	free(d->rec_mns);
	cxs_dk_check_free(d->w.check);
	free(d);
}

/* ---- the CN ------------------------------------------------------------------------ */

static void replicated(void *ctx, uint32_t core, uint32_t id, cxs_time now)
{
	struct cn_node *cn = ctx;
	char err[512];
	err[0] = 0;
	if (cn->paused) {
		workload_defer(cn, &(struct deferred){.type = 0, .core = core, .id = id});
		return;
	}
	if (cxs_core_replicated(cn->ooo[core], now, id, err, sizeof err) != 0)
		cxs_lp_fail(cn->lp, 3, "%s", err);
}

static void rec_pause(void *ctx, cxs_time now)
{
	struct cn_node *cn = ctx;
	(void)now;
	cn->watch_quiet_until = CXS_TIME_INF;
	workload_pause(ctx);
}

static void rec_ended(void *ctx, cxs_time now)
{
	struct cn_node *cn = ctx;
	(void)now;
	oracle_check(cn->lp, cn->M, "after recovery");
}

static void rec_snapshot(void *ctx)
{
	image_cn_part(ctx, "recovered");
}

static void rec_resume(void *ctx, cxs_time now)
{
	struct cn_node *cn = ctx;
	/* The threads' runtime learns which CNs failed (their locks, barriers, checks). */
	cn->runtime_failed = cxs_dk_rec_cn_recovered(cn->dkr);
	cn->watch_quiet_until = now + cn->M->deadlock_timeout;
	workload_resume(cn, now);
}

int dk_cn_init(struct cn_node *cn, char *err, size_t errlen)
{
	struct dk_cluster *d = cn->M->dk;
	uint32_t node = cxs_lp_id(cn->lp);
	struct cxs_stats *st = cxs_lp_stats(cn->lp);
	cn->dks = cxs_dk_sender_new(&d->w, &cn->port, replicated, cn, st);
	cn->dkl = cxs_dk_logger_new(&d->w, &cn->port, &cn->dram, EV_DK_LOGGER, st);
	struct cxs_dk_rec_cn_env env = {.ctx = cn, .pause = rec_pause, .resume = rec_resume,
					.ended = rec_ended, .snapshot = rec_snapshot};
	cn->dkr = cn->dkl ? cxs_dk_rec_cn_new(&d->w, &cn->port, cn->dkl, &env, st) : NULL;
	d->senders[node] = cn->dks;
	d->loggers[node] = cn->dkl;
	d->rec_cns[node] = cn->dkr;
	if (!cn->dks || !cn->dkl || !cn->dkr) {
		snprintf(err, errlen, "out of memory for DIKTAMO's sender, Logging Unit and recovery");
		return -1;
	}
	d->here++;
	return 0;
}

void dk_cn_performed(struct cn_node *cn, cxs_time t, const struct cxs_mem_req *r, uint64_t stamp,
		     uint64_t word)
{
	char err[512];
	err[0] = 0;
	if (cxs_dk_performed(cn->dks, t, r, stamp, word, err, sizeof err) != 0)
		cxs_lp_fail(cn->lp, 5, "%s", err);
}

int dk_cn_replicate(struct cn_node *cn, uint32_t core, cxs_time t, const struct cxs_sb_store *s,
		    uint32_t n, unsigned flags, uint32_t *id, char *err, size_t errlen)
{
	watch_arm(&cn->watch);
	return cxs_dk_replicate(cn->dks, t, core, s, n, flags, id, err, errlen);
}

void dk_cn_at_head(struct cn_node *cn, uint32_t core, cxs_time t, uint32_t id)
{
	cxs_dk_sender_at_head(cn->dks, t, core, id);
}

bool dk_cn_stuck(struct cn_node *cn, cxs_time now, char *err, size_t errlen)
{
	const struct memsys *M = cn->M;
	/* A REPL_ACK may wait for a dump round when a Logging Unit's DRAM log is full. */
	cxs_time patience = M->deadlock_timeout + 2 * M->dk->p.dump_period;
	return cxs_dk_sender_stuck(cn->dks, now, patience, err, errlen);
}

bool dk_cn_busy(const struct cn_node *cn)
{
	return cxs_dk_sender_outstanding(cn->dks) > 0;
}

void dk_cn_failed(struct cn_node *cn, uint32_t failed)
{
	cxs_dk_sender_cn_failed(cn->dks, failed, cxs_now(cn->lp));
	cxs_dk_logger_cn_failed(cn->dkl, failed);
	cxs_dk_rec_cn_failed(cn->dkr, failed, cxs_now(cn->lp));
	if (cn->M->dk->w.check)
		cxs_dk_check_cn_failed(cn->M->dk->w.check, failed); /* every live CN tells it: idempotent */
}

/* ---- the MN ------------------------------------------------------------------------ */

struct cxs_dk_keeper *dk_mn_init(struct cxs_lp *lp, struct cxs_nport *port,
				 const struct cxs_dk_rec_mn_env *env, struct cxs_dk_rec_mn **rec,
				 char *err, size_t errlen)
{
	const struct memsys *M = cxs_lp_ctx(lp);
	struct dk_cluster *d = M->dk;
	uint32_t mn = cxs_lp_id(lp) - M->cns;
	struct cxs_dk_keeper *k = cxs_dk_keeper_new(&d->w, port, EV_DK_KEEPER, cxs_lp_stats(lp));
	*rec = k ? cxs_dk_rec_mn_new(&d->w, port, k, EV_DK_RECOVERY, env, cxs_lp_stats(lp)) : NULL;
	d->keepers[mn] = k;
	d->rec_mns[mn] = *rec;
	if (!k || !*rec) {
		snprintf(err, errlen, "out of memory for DIKTAMO's log keeper and recovery");
		return NULL;
	}
	d->here++;
	return k;
}

/* ---- the end ------------------------------------------------------------------------- */

void dk_finalize(struct cxs_lp *lp)
{
	const struct memsys *M = cxs_lp_ctx(lp);
	struct dk_cluster *d = M->dk;
	if (!d || ++d->finalized != d->here || !d->w.check || cxs_run_interrupted(lp))
		return; /* an interrupted run stopped with replications in flight */
	if (d->here != d->nodes) {
		cxs_lp_fail(lp, 2,
			    "diktamo.check needs every node in one process (%u of %u here): run with "
			    "-np 1 or map all nodes to one rank",
			    d->here, d->nodes);
		return;
	}
	char err[1024];
	err[0] = 0;
	uint64_t *checked = cxs_stats_counter(cxs_lp_stats(lp), "diktamo", "checked_words", "words",
					      "committed remote words the protocol checker verified (diktamo.check; on the process's last node)");
	if (checked)
		*checked = cxs_dk_check_commits(d->w.check);
	if (cxs_dk_check_run(d->w.check, err, sizeof err) != 0)
		cxs_lp_fail(lp, 5, "diktamo protocol checker: %s", err);
	else
		cxs_log(CXS_LOG_INFO, cxs_now(lp), "diktamo protocol checker: each of the %zu "
			"committed remote words is in its replicas' Logging Units or an MN log",
			cxs_dk_check_commits(d->w.check));
}
