/*
 * workload.c — what the cores of the memory system's CNs run, and whether it
 * finished.
 *
 * Two kinds (workload.kernel):
 *   tester   the random coherence tester (src/core/tester.c): one request
 *            outstanding per core, every completion checked;
 *   KERNEL   a thread program (include/cxlsim/kthread.h: the built-in
 *            kernels, the microbenchmarks, the litmus tests, trace replay) on
 *            an out-of-order core (src/core/core.c) per simulated core.
 * Thread t = node * cores_per_cn + core; its private memory is a stride of
 * the CN's local region, its shared data at the start of CXL memory — or, in
 * tier mode (tier.h), right after the private strides in local memory, where
 * the tier placement sends every page to DRAM or to the far device.
 *
 * Configure builds the kernel's image (the same way on every rank) and, for a
 * deterministic kernel with workload.check, runs it natively first: the
 * reference run, whose final shared image the simulated machine must produce
 * word for word (the programs check it themselves), and whose count of
 * memory operations per thread is the yardstick of "how much is done".
 *
 * Completion. A run ends when no events are left — a finished workload's
 * cores and watchdogs go quiet — or at engine.end_time, a cap. At the end
 * every live CN checks that each of its cores finished; one that did not
 * makes the run an error, "engine.end_time cap reached at T with N of M
 * operations done", naming the core and its state, so an unfinished workload
 * is never reported complete (a cap shorter than the workload, a core
 * spinning for ever on a lock or a barrier). The check runs in the node's
 * finalize, so it costs no event and leaves a finished run's final time its
 * own. A run stopped by SIGINT/SIGTERM (cxs_run_interrupted) is not checked:
 * its status already says it is unfinished and how far it got.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memsys_priv.h"

static const struct cxs_cfg_key workload_keys[] = {
	{"workload", "kernel", CXS_CFG_STRING, "tester", "What the cores run: tester (the random coherence tester) or a built-in thread program on out-of-order cores (cxlsim --list-kernels).", NULL, 0, 0},
	{"workload", "size", CXS_CFG_UINT, "0", "The kernel's size parameter (0: its default; see --list-kernels).", NULL, 0, 1e15},
	{"workload", "ops", CXS_CFG_UINT, "0", "Operations per thread for kernels that take a count (ycsb: get/put operations); 0: the kernel's default.", NULL, 0, 1e12},
	{"workload", "variant", CXS_CFG_UINT, "0", "The kernel's variant or second parameter (0: its default; cxlsim --list-kernels says what it is for each kernel, e.g. ptrchase: independent chains, graph kernels: 0 power-law, 1 road-like).", NULL, 0, 1e12},
	{"workload", "seed", CXS_CFG_UINT, "1", "Seed of the kernel's data and of its threads' random streams.", NULL, 0, 1e18},
	{"workload", "trace", CXS_CFG_STRING, "", "With kernel = trace: the per-core trace files, a path pattern where %u stands for the thread (node * cores_per_cn + core), e.g. traces/core%u.trace.", NULL, 0, 0},
	{"workload", "check", CXS_CFG_BOOL, "true", "Run the kernel natively first and compare the simulated machine's results with it word for word (deterministic kernels).", NULL, 0, 0},
};
const struct cxs_key_table memsys_workload_key_table = CXS_KEY_TABLE(workload_keys);

static void list_kernels(char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; cxs_kernels[i] && o + 1 < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "", cxs_kernels[i]->name);
}

/* The kernel: its image and, for a deterministic kernel with workload.check, its reference run. */
static int configure_kernel(const struct cxs_config *cfg, struct memsys *M, const char *name,
			    char *err, size_t errlen)
{
	struct workload *w = &M->wl;
	char sub[512];
	w->kernel = cxs_kernel_find(name);
	if (!w->kernel) {
		list_kernels(sub, sizeof sub);
		snprintf(err, errlen, "%s: workload.kernel: unknown kernel '%s' (known: tester, %s)",
			 cxs_config_origin(cfg, "workload", "kernel"), name, sub);
		return -1;
	}
	uint64_t size = cxs_config_uint(cfg, "workload", "size");
	w->img = (struct cxs_kimage){.size = size ? size : w->kernel->default_size,
				     .seed = cxs_config_uint(cfg, "workload", "seed"),
				     .ops = cxs_config_uint(cfg, "workload", "ops"),
				     .variant = cxs_config_uint(cfg, "workload", "variant"),
				     .nthreads = M->cns * M->cn.cores};
	if (w->kernel->configure && w->kernel->configure(cfg, &w->img, err, errlen) != 0)
		return -1;
	if (w->kernel->build(&w->img, sub, sizeof sub) != 0) {
		const char *key = strcmp(name, "trace") == 0 ? "trace" : "size";
		snprintf(err, errlen, "%s: workload.%s: %s: %s",
			 cxs_config_origin(cfg, "workload", key), key, w->kernel->name, sub);
		return -1;
	}
	w->private_stride = (w->img.private_bytes + 4095) & ~UINT64_C(4095);
	const struct cxs_addr_map_params *mp = &M->map.p;
	if (cxs_tier_shared_base(&M->tier, w->private_stride * M->cn.cores, w->img.shared_bytes,
				 mp->local_bytes, &w->shared_base) != 0 ||
	    (M->tier.placement == CXS_TIER_OFF && w->img.shared_bytes > mp->cxl_bytes) ||
	    w->private_stride * M->cn.cores > mp->local_bytes) {
		snprintf(err, errlen,
			 "%s: %s at size %" PRIu64 " needs %" PRIu64 " bytes of CXL memory and %" PRIu64
			 " of local memory per CN: raise system.cxl_size / system.local_size",
			 cxs_config_origin(cfg, "workload", "size"), w->kernel->name, w->img.size,
			 w->img.shared_bytes, w->private_stride * M->cn.cores);
		return -1;
	}
	if (w->kernel->deterministic && cxs_config_bool(cfg, "workload", "check")) {
		w->ref_ops = calloc(w->img.nthreads, sizeof *w->ref_ops);
		if (!w->ref_ops) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		if (cxs_kt_run_native_ops(w->kernel, &w->img, &w->reference, w->ref_ops, sub,
					  sizeof sub) != 0) {
			snprintf(err, errlen, "workload %s: %s", w->kernel->name, sub);
			return -1;
		}
	}
	return 0;
}

int workload_configure(const struct cxs_config *cfg, struct memsys *M, char *err, size_t errlen)
{
	struct workload *w = &M->wl;
	const struct cxs_addr_map_params *mp = &M->map.p;
	const char *name = cxs_config_str(cfg, "workload", "kernel");
	cxs_core_configure(cfg, &w->core);
	w->core.protocol = (uint8_t)M->protocol;
	w->core.cycle_ps = M->cn.agent.cycle_ps;
	if (cxs_tester_configure(cfg, &w->tester, err, errlen) != 0)
		return -1;
	w->tester.shared_base = CXS_CXL_BASE;
	w->tester.private_base = 0;
	if ((uint64_t)M->cn.cores * w->tester.private_words * 8 > mp->local_bytes ||
	    ((uint64_t)w->tester.stamp_lines + 1) * CXS_LINE_BYTES > mp->cxl_bytes) {
		snprintf(err, errlen, "%s: tester: its words do not fit system.local_size / system.cxl_size",
			 cxs_config_origin(cfg, "tester", "stamp_lines"));
		return -1;
	}
	if (strcmp(name, "tester") == 0)
		return 0;
	return configure_kernel(cfg, M, name, err, errlen);
}

void memsys_initial_line(const struct memsys *M, uint64_t line, uint8_t out[CXS_LINE_BYTES])
{
	const struct workload *w = &M->wl;
	uint64_t addr = line << CXS_LINE_SHIFT, off = addr - w->shared_base;
	if (w->img.shared && addr >= w->shared_base && off < w->img.shared_bytes)
		memcpy(out, w->img.shared + off, CXS_LINE_BYTES);
	else
		memset(out, 0, CXS_LINE_BYTES);
}

void workload_release(struct workload *w)
{
	cxs_kimage_free(&w->img);
	free(w->reference);
	free(w->ref_ops);
	memset(w, 0, sizeof *w);
}

/* ---- out-of-order cores: their environment -------------------------------------- */

static int ooo_request(void *ctx, cxs_time t, const struct cxs_mem_req *r, char *err, size_t len)
{
	struct cn_node *cn = ctx;
	watch_arm(&cn->watch);
	return cxs_cn_request(cn->agent, t, r, err, len);
}

/*
 * A line filled from local memory is in the caches at once but usable only
 * at its DRAM time: while it is in flight, a load to it is a miss (or an LFB
 * hit), as one to a CXL line in flight is.
 */
static int ooo_where(void *ctx, uint32_t core, uint64_t addr, bool write)
{
	struct cn_node *cn = ctx;
	int lvl = cxs_cn_where(cn->agent, core, addr, write);
	return lvl < CXS_LVL_LOCAL && cxs_cn_local_pending(cn->agent, addr, cxs_now(cn->lp))
		       ? CXS_LVL_LOCAL : lvl;
}

static bool ooo_remote(void *ctx, uint64_t addr)
{
	const struct cn_node *cn = ctx;
	return cxs_addr_map_lookup(&cn->M->map, addr).kind == CXS_ADDR_CXL;
}

static int ooo_replicate(void *ctx, uint32_t core, cxs_time t, const struct cxs_sb_store *s,
			 uint32_t n, unsigned flags, uint32_t *id, char *err, size_t len)
{
	return dk_cn_replicate(ctx, core, t, s, n, flags, id, err, len);
}

static void ooo_repl_at_head(void *ctx, uint32_t core, cxs_time t, uint32_t id)
{
	dk_cn_at_head(ctx, core, t, id);
}

static void ooo_wake(void *ctx, uint32_t core, cxs_time t)
{
	struct cn_node *cn = ctx;
	cxs_schedule(cn->lp, t - cxs_now(cn->lp), EV_CORE_STEP, &core, sizeof core);
}

void workload_invalidated(struct cn_node *cn, cxs_time t, uint32_t core, uint64_t line)
{
	if (cn->ooo)
		cxs_core_invalidated(cn->ooo[core], t, line);
}

/* ---- the random tester ----------------------------------------------------------- */

static void tester_issue_next(struct cn_node *cn, uint32_t core)
{
	struct cxs_mem_req r;
	cxs_time think;
	if (!cxs_tester_next(&cn->testers[core], cn->lp, &r, &think, cn->M->cn.agent.cycle_ps))
		return;
	r.issued = cxs_now(cn->lp) + think;
	cxs_schedule(cn->lp, think, EV_CORE_ISSUE, &r, sizeof r);
}

/* ---- per CN ----------------------------------------------------------------------- */

int workload_cn_init(struct cn_node *cn, char *err, size_t len)
{
	const struct memsys *M = cn->M;
	const struct workload *w = &M->wl;
	struct cxs_lp *lp = cn->lp;
	uint32_t node = cxs_lp_id(lp), cores = M->cn.cores;
	if (!w->kernel) {
		cn->testers = calloc(cores, sizeof *cn->testers);
		if (!cn->testers) {
			snprintf(err, len, "out of memory");
			return -1;
		}
		for (uint32_t c = 0; c < cores; c++)
			if (cxs_tester_init(&cn->testers[c], &w->tester, node, c, cxs_lp_stats(lp)) != 0) {
				snprintf(err, len, "cannot create the tester");
				return -1;
			}
		for (uint32_t c = 0; c < cores; c++)
			tester_issue_next(cn, c);
		return 0;
	}
	cn->kts = calloc(cores, sizeof *cn->kts);
	cn->ooo = calloc(cores, sizeof *cn->ooo);
	if (!cn->kts || !cn->ooo) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	struct cxs_core_env env = {.ctx = cn, .request = ooo_request, .where = ooo_where,
				   .remote = ooo_remote, .wake = ooo_wake,
				   .replicate = M->dk ? ooo_replicate : NULL,
				   .repl_at_head = M->dk ? ooo_repl_at_head : NULL};
	for (uint32_t c = 0; c < cores; c++) {
		struct cxs_kt_params kp = {.kernel = w->kernel, .img = &w->img,
					   .reference = w->reference, .id = node * cores + c,
					   .shared_base = w->shared_base,
					   .private_base = c * w->private_stride,
					   .failed_cns = &cn->runtime_failed,
					   .cores_per_cn = cores};
		if (!(cn->kts[c] = cxs_kt_new(&kp, err, len)) ||
		    !(cn->ooo[c] = cxs_core_new(node, c, &w->core, &env, cn->kts[c],
						cxs_lp_stats(lp), err, len)))
			return -1;
		ooo_wake(cn, c, cxs_now(lp));
	}
	return 0;
}

void workload_issue(struct cn_node *cn, const struct cxs_event *ev)
{
	char err[512];
	err[0] = 0;
	if (cxs_cn_request(cn->agent, ev->time, (const void *)ev->data, err, sizeof err) != 0)
		cxs_lp_fail(cn->lp, 3, "%s", err);
}

void workload_defer(struct cn_node *cn, const struct deferred *d)
{
	if (cn->ndeferred == cn->cap_deferred) {
		size_t cap = cn->cap_deferred ? 2 * cn->cap_deferred : 32;
		struct deferred *a = realloc(cn->deferred, cap * sizeof *a);
		if (!a)
			cxs_bug(cn->lp, "out of memory pausing the cores");
		cn->deferred = a;
		cn->cap_deferred = cap;
	}
	cn->deferred[cn->ndeferred++] = *d;
}

void workload_pause(struct cn_node *cn)
{
	cn->paused = true;
}

void workload_resume(struct cn_node *cn, cxs_time now)
{
	char err[2048];
	err[0] = 0;
	cn->paused = false;
	/* In arrival order; anything they start now is for after the pause. */
	for (size_t i = 0; i < cn->ndeferred && !cn->paused; i++) {
		const struct deferred *d = &cn->deferred[i];
		struct cxs_core *c = cn->ooo[d->core];
		int rc = 0;
		if (d->type == EV_CORE_STEP)
			rc = cxs_core_step(c, now, err, sizeof err);
		else if (d->type == EV_CORE_DONE)
			rc = cxs_core_complete(c, now, &d->r, d->value, err, sizeof err);
		else
			rc = cxs_core_replicated(c, now, d->id, err, sizeof err);
		if (rc != 0) {
			cxs_lp_fail(cn->lp, cxs_core_failed(c) ? 6 : 3, "%s", err);
			break;
		}
	}
	cn->ndeferred = 0;
}

void workload_step(struct cn_node *cn, const struct cxs_event *ev)
{
	char err[2048];
	err[0] = 0;
	uint32_t core;
	memcpy(&core, ev->data, sizeof core);
	if (cn->paused) {
		workload_defer(cn, &(struct deferred){.type = EV_CORE_STEP, .core = core});
		return;
	}
	if (cxs_core_step(cn->ooo[core], ev->time, err, sizeof err) != 0)
		cxs_lp_fail(cn->lp, cxs_core_failed(cn->ooo[core]) ? 6 : 3, "%s", err);
}

void workload_done(struct cn_node *cn, const struct cxs_event *ev)
{
	char err[2048];
	err[0] = 0;
	const struct core_done *d = (const void *)ev->data;
	if (cn->ooo && cn->paused) {
		workload_defer(cn, &(struct deferred){.type = EV_CORE_DONE, .core = d->r.core,
						      .r = d->r, .value = d->value});
		return;
	}
	if (cn->ooo) {
		if (cxs_core_complete(cn->ooo[d->r.core], ev->time, &d->r, d->value, err,
				      sizeof err) != 0)
			cxs_lp_fail(cn->lp, cxs_core_failed(cn->ooo[d->r.core]) ? 6 : 3, "%s", err);
		return;
	}
	if (cxs_tester_check(&cn->testers[d->r.core], ev->time, &d->r, d->value, err,
			     sizeof err) != 0) {
		cxs_lp_fail(cn->lp, 5, "%s", err);
		return;
	}
	tester_issue_next(cn, d->r.core);
}

/*
 * After a CN failure, a surviving thread may spin for ever on a lock a dead
 * thread holds, or at a barrier whose dead participants never arrive: that is
 * the failure's doing, not the workload's. Returns a description, or NULL if
 * the thread's wait does not involve a failed node.
 */
static const char *blocked_by_failure(const struct cn_node *cn, uint32_t c, char *buf,
				      size_t len)
{
	uint64_t dead = cn->dead | cn->known_dead;
	uint32_t cores = cn->M->cn.cores;
	struct cxs_kt_wait w;
	if (!dead || !cn->kts)
		return NULL;
	cxs_kt_waiting(cn->kts[c], &w);
	if (w.kind == CXS_KT_WAIT_LOCK && w.holder != UINT32_MAX && w.holder / cores < 64 &&
	    (dead >> (w.holder / cores) & 1)) {
		snprintf(buf, len, "waits for lock %#" PRIx64 ", held by thread %u of failed node %u",
			 w.addr, w.holder, w.holder / cores);
		return buf;
	}
	if (w.kind == CXS_KT_WAIT_BARRIER && w.first_n) {
		/* (a barrier of a subset of the threads: whose arrival is missing is unknown) */
		for (uint32_t t = 0; t < w.n; t += cores)
			if (t / cores < 64 && (dead >> (t / cores) & 1)) {
				snprintf(buf, len, "waits at barrier %#" PRIx64 " of %u threads, "
					 "among them failed node %u's", w.addr, w.n, t / cores);
				return buf;
			}
	}
	return NULL;
}

void workload_progress(const struct cn_node *cn, uint64_t *done, uint64_t *total)
{
	const struct memsys *M = cn->M;
	const struct workload *w = &M->wl;
	uint32_t node = cxs_lp_id(cn->lp);
	*done = *total = 0;
	for (uint32_t c = 0; c < M->cn.cores; c++) {
		if (cn->kts && w->ref_ops) {
			*done += cxs_kt_mem_ops(cn->kts[c]);
			*total += w->ref_ops[node * M->cn.cores + c];
		} else if (cn->testers) {
			*done += cn->testers[c].done;
			*total += w->tester.ops;
		}
	}
}

/*
 * Every core of a live CN must have finished (see the header). Memory
 * operations done and the reference run's count, summed over the CN's cores.
 * A core blocked by a failure is reported (workload/blocked_on_failure), not
 * counted against the workload.
 */
static void completion_check(struct cn_node *cn)
{
	const struct memsys *M = cn->M;
	const struct workload *w = &M->wl;
	struct cxs_lp *lp = cn->lp;
	uint32_t node = cxs_lp_id(lp);
	if (!cxs_node_alive(lp, node))
		return; /* a failed node's work ended with it */
	if (cxs_run_interrupted(lp))
		return; /* stopped on a signal: the status says how far it got */
	/*
	 * Of the unfinished cores, the one furthest behind its reference run's
	 * operation count is named: at a barrier the others spin and pass their
	 * count, and the first unfinished core is as likely one of them.
	 */
	uint32_t unfinished = 0, worst = 0;
	uint64_t worst_done = 0, worst_want = 0;
	for (uint32_t c = 0; c < M->cn.cores; c++) {
		char why[160];
		uint64_t done, want = 0;
		if (cn->ooo) {
			if (cxs_core_done(cn->ooo[c]))
				continue;
			const char *b = blocked_by_failure(cn, c, why, sizeof why);
			if (b) {
				struct cxs_stats *st = cxs_lp_stats(lp);
				++*cxs_stats_counter(st, "workload", "blocked_on_failure", "threads",
						     "threads of this CN stuck at the end on a lock or barrier of failed threads");
				struct cxs_vec *v = cxs_stats_vector(st, "workload", "blocked_threads", "thread",
								     "the threads counted in blocked_on_failure");
				if (v)
					cxs_vec_push(v, (uint64_t)node * M->cn.cores + c);
				cxs_log(CXS_LOG_WARN, cxs_now(lp), "node %u core %u did not finish: it %s",
					node, c, b);
				continue;
			}
			done = cxs_kt_mem_ops(cn->kts[c]);
			if (w->ref_ops)
				want = w->ref_ops[node * M->cn.cores + c];
		} else {
			if (cn->testers[c].done >= w->tester.ops)
				continue;
			done = cn->testers[c].done;
			want = w->tester.ops;
		}
		/* done / want below worst_done / worst_want; without a count, the first */
		if (unfinished++ == 0 ||
		    (want && (!worst_want || (double)done * worst_want < (double)worst_done * want))) {
			worst = c;
			worst_done = done;
			worst_want = want;
		}
	}
	if (!unfinished)
		return;
	char d[512] = "", total[96] = "", others[96] = "";
	if (cn->ooo)
		cxs_core_describe(cn->ooo[worst], d, sizeof d);
	else
		snprintf(d, sizeof d, "core %u: tester, %" PRIu64 " requests issued", worst,
			 cn->testers[worst].issued);
	if (worst_want)
		snprintf(total, sizeof total, " of %" PRIu64, worst_want);
	if (unfinished > 1)
		snprintf(others, sizeof others, " (%u of its %u cores unfinished; this one furthest behind)",
			 unfinished, M->cn.cores);
	cxs_lp_fail(lp, 4,
		    "workload %s unfinished at the engine.end_time cap (%" PRIu64
		    " ps): node %u core %u did %" PRIu64 "%s operations%s; %s",
		    w->kernel ? w->kernel->name : "tester", cxs_end_time(lp), node, worst, worst_done,
		    total, others, d);
}

/* Per-CN workload figures: the ROI's bounds and the programs' result counters. */
static void workload_counters(struct cn_node *cn)
{
	struct cxs_stats *st = cxs_lp_stats(cn->lp);
	uint64_t *b = cxs_stats_counter(st, "workload", "roi_begin_ps", "ps",
					"earliest start of the region of interest over the CN's cores");
	uint64_t *e = cxs_stats_counter(st, "workload", "roi_end_ps", "ps",
					"latest end of the region of interest over the CN's cores");
	uint64_t *waived = cxs_stats_counter(st, "workload", "checks_waived", "checks",
					     "the program's result checks skipped after a CN failure (the golden-image check replaces them)");
	uint64_t *takeovers = cxs_stats_counter(st, "workload", "locks_taken_over", "locks",
						"locks taken over from threads that died holding them");
	const char *first_waived_s = NULL, **first_waived = &first_waived_s;
	*b = UINT64_MAX;
	*e = 0;
	for (uint32_t c = 0; c < cn->M->cn.cores; c++) {
		if (!cn->ooo[c])
			continue;
		cxs_core_finish_counters(cn->ooo[c]);
		cxs_time rb = cxs_core_roi_begin(cn->ooo[c]), re = cxs_core_roi_end(cn->ooo[c]);
		if (rb < *b)
			*b = rb;
		if (re > *e)
			*e = re;
		uint64_t v;
		const char *name, *first;
		*waived += cxs_kt_waived(cn->kts[c], &first);
		if (first && !*first_waived)
			*first_waived = first;
		*takeovers += cxs_kt_takeovers(cn->kts[c]);
		for (size_t i = 0; (name = cxs_kt_result_at(cn->kts[c], i, &v)); i++) {
			*cxs_stats_counter(st, "workload", name, "count",
					   "the kernel's own result counter, summed over the CN's cores") += v;
			if (v && strcmp(name, "trace_waits_abandoned") == 0)
				cxs_log(CXS_LOG_WARN, cxs_now(cn->lp),
					"node %u core %u: its thread gave up a wait after the CN failure "
					"(trace.wait_limit) and did not replay the rest of its trace",
					cxs_lp_id(cn->lp), c);
		}
	}
	if (*b == UINT64_MAX)
		*b = 0;
	if (*waived)
		cxs_log(CXS_LOG_WARN, cxs_now(cn->lp),
			"node %u: %" PRIu64 " of the workload's own checks were waived after the CN "
			"failure (first: %s); the golden-image check stands in for them",
			cxs_lp_id(cn->lp), *waived, first_waived_s);
}

void workload_cn_finish(struct cn_node *cn)
{
	uint32_t cores = cn->M->cn.cores;
	if (cn->testers || cn->ooo)
		completion_check(cn);
	for (uint32_t c = 0; cn->testers && c < cores; c++)
		cxs_tester_free(&cn->testers[c]);
	free(cn->testers);
	if (cn->ooo)
		workload_counters(cn);
	for (uint32_t c = 0; cn->ooo && c < cores; c++) {
		cxs_core_free(cn->ooo[c]);
		cxs_kt_free(cn->kts[c]);
	}
	free(cn->ooo);
	free(cn->kts);
	free(cn->deferred);
}
