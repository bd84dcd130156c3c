/*
 * ccm.c — the CXL computational memory device (CCM MN) of AXLE §IV-B: a
 * firmware mailbox (remote polling), a kernel-launch packet filter (bulk
 * synchronous and AXLE), processing units with fine-grained multithreading
 * running the offloaded kernel against the MN's own DRAM, a scheduler that
 * partitions each task into fixed-size inputs, and the DMA executor that
 * back-streams results into the host's ring buffers.
 *
 * Processing units. axle.ccm_pus units of axle.ccm_threads µthreads at
 * axle.ccm_ghz (Table III: 16 x 16 at 2 GHz). µthread u belongs to unit
 * u % pus, so consecutive partitions spread over the units. The kernel of
 * a partition is run (computing its real result) when it starts, recording
 * the DRAM lines it reads; a line found in the unit's data cache
 * (axle.ccm_l1_lines, direct-mapped, emptied at every launch) costs no DRAM
 * access. The µthread then loads the others axle.ccm_mlp lines at
 * a time (its outstanding loads), each step also issuing its share of the
 * partition's instructions. A unit issues one instruction per cycle, round
 * robin over its running µthreads, so a step's k-th share of the unit takes
 * instructions x cycle x k, k being the µthreads running on the unit when
 * the step starts (processor sharing, re-evaluated every step). A step ends
 * when both its lines and its instructions are done, so one µthread's memory
 * latency overlaps the others' instructions (what fine-grained
 * multithreading is for) and a unit's µthreads advance together.
 *
 * What bounds a kernel should be what bounds M²NDP: its issue rate or its
 * DRAM, not an artefact of this model. Two defaults follow from that:
 *  - axle.ccm_mlp = 16 lines (1 KiB, half the register file of 32 256-bit
 *    vector registers as load destinations). A step waits for its slowest
 *    line before the next is issued, so with 8 the streaming kernels were
 *    latency-bound: KNN 2048x128 (8 µthreads per unit) took 5.6 µs for
 *    4.1 µs of issue, DLRM's random 1 KiB rows 517 µs for 346 µs; with 16
 *    they are within 10 % and 36 % of their issue bound (DLRM's row misses
 *    remain). SSB, LLM and the graphs do not change.
 *  - axle.ccm_l1_lines = 512 (32 KiB per unit, direct-mapped; the paper says
 *    CCM caches are small, not absent). Without a cache the graphs'
 *    power-law sources (the first 256 of 299067 vertices are the source of
 *    10 % of the edges) re-read the same few lines from DRAM, where every
 *    access to a bank is serialised by its timing: PageRank's round took
 *    503 µs for 209 µs of issue. With the cache it is issue-bound (210 µs).
 *    KNN, SSB and LLM read every line once; DLRM gains little (its skewed
 *    indexes repeat rows, but a row is 16 lines of a 512-line cache).
 *
 * Scheduler (axle.ccm_sched). fifo: one queue in result-offset order, a free
 * µthread takes its head, so results appear in offset order. rr: the
 * partitions are dealt round robin to the units in equal contiguous blocks
 * up front (balanced, each unit streams its own DRAM range) and a unit's
 * µthreads take its block in order, so results appear in as many places of
 * the result buffer at once as there are units — the out-of-order
 * production that OoO streaming exists for (§IV-C). The paper does not
 * define its CCM round robin further; this is our reading of "balance the
 * load across µthreads while maximizing CXL memory bandwidth" (§IV-B).
 *
 * DMA executor (AXLE, §IV-B/C). The result buffer is cut into slots of
 * axle.slot_size; a slot is a payload once all its bytes are produced. With
 * OoO streaming a complete slot is pending at once; without, only the next
 * slot in offset order is. When pending bytes reach the streaming factor (or
 * the last partition is done) the executor takes as many pending payloads as
 * both rings have credit for, reads them from DRAM, waits the DMA preparation
 * latency (Table III: 500 ns per request) and writes, per payload, the
 * payload slot, its metadata record and the metadata tail, then the payload
 * tail once per batch (§V-E: "a payload buffer tail-update DMA message per
 * batch, metadata tail-update per payload"). Posted writes on one link
 * arrive in order, which is the fence of §IV-C; the host checks it. With no
 * credit the executor waits for a flow-control store from the host and
 * counts the wait as back-pressure (Fig. 16b). One request at a time: the
 * next starts when the last write of the previous has left the port.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "axle_priv.h"

/* A µthread's partition in progress: its lines, loaded ccm_mlp at a time. */
struct uthread {
	uint32_t task;
	uint64_t *lines;
	uint32_t nlines, cap, next;
	uint64_t instr;
};

struct ccm {
	struct cxs_lp *lp;
	const struct axle_params *P; /* the model's instance (cxs_lp_ctx) */
	const struct axle_wl *wl;
	struct cxs_nport port;
	struct cxs_dram dram;
	void *ws;                 /* the workload's CCM state */
	uint32_t host;            /* the host node */

	/* the current round */
	bool active, kernel_done;
	uint32_t iter;
	struct axle_round round;
	uint8_t *result;
	size_t result_cap;
	uint32_t tasks_done, running, next_task;
	uint32_t nthreads;
	uint32_t *rr_next, *rr_end; /* rr: each unit's block */
	uint32_t *pu_running;     /* per unit: µthreads running a partition */
	cxs_time busy_since;

	/* BS: result loads that arrived before the kernel finished */
	uint64_t *held;
	size_t nheld, held_cap;

	/* DMA executor */
	uint32_t nslots;
	uint32_t *slot_fill;
	uint32_t *pending;        /* ring of slot ids, nslots long */
	uint32_t pend_head, pend_count, inorder_next;
	uint64_t pending_bytes, sf_bytes;
	uint8_t *slot_done;
	bool dma_busy, bp;
	cxs_time bp_since, dm_until;
	struct cxs_axle_ring_tx pay, meta;
	uint32_t *batch;
	uint32_t nbatch;
	uint64_t batch_pidx0, batch_midx0;

	struct uthread *ut;       /* per µthread: its partition's progress */
	uint64_t *l1;             /* per unit: axle.ccm_l1_lines tags (line + 1, 0 = empty) */

	uint64_t *c_busy, *c_tasks, *c_instr, *c_payloads, *c_batches, *c_bytes, *c_dma_ps,
		*c_bp_ps, *c_bp_cycles, *c_lines_loaded, *c_rounds, *c_fc;
};


struct touch_ctx {
	struct ccm *c;
	struct uthread *t;
	uint64_t *l1;             /* the unit's data cache */
	struct axle_recent recent;
	bool oom;
};

/* Records the line of addr for the partition's loads (a line just read, once). */
static void touch(void *ctx, uint64_t addr)
{
	struct touch_ctx *tc = ctx;
	struct uthread *t = tc->t;
	uint64_t line = addr >> 6;
	if (axle_recent_line(&tc->recent, line))
		return;
	if (tc->l1) {
		uint64_t *tag = &tc->l1[line % tc->c->P->ccm_l1_lines];
		if (*tag == line + 1)
			return;
		*tag = line + 1;
	}
	if (t->nlines == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 64;
		uint64_t *l = realloc(t->lines, cap * sizeof *l);
		if (!l) {
			tc->oom = true;
			return;
		}
		t->lines = l;
		t->cap = cap;
	}
	t->lines[t->nlines++] = line;
}

static void busy_change(struct ccm *c, int delta)
{
	cxs_time now = cxs_now(c->lp);
	if (c->running == 0 && delta > 0)
		c->busy_since = now;
	c->running = (uint32_t)((int)c->running + delta);
	if (c->running == 0 && delta < 0)
		*c->c_busy += now - c->busy_since;
}

/*
 * One step of µthread u's partition: the next ccm_mlp lines go to the DRAM
 * now, and the share of the partition's instructions that goes with them
 * takes the unit's issue slot; the step ends when both are done. The last
 * step ends the partition.
 */
static void step(struct ccm *c, uint32_t u)
{
	struct uthread *t = &c->ut[u];
	cxs_time now = cxs_now(c->lp), ready = now;
	uint32_t pu = u % c->P->ccm_pus;
	uint32_t n = t->nlines - t->next < c->P->ccm_mlp ? t->nlines - t->next : c->P->ccm_mlp;
	uint64_t instr = t->nlines ? t->instr * (t->next + n) / t->nlines - t->instr * t->next / t->nlines
				   : t->instr;
	for (uint32_t k = 0; k < n; k++) {
		cxs_time r = cxs_dram_access(&c->dram, now, t->lines[t->next + k], 0);
		if (r > ready)
			ready = r;
	}
	t->next += n;
	/* Round-robin issue: the unit's k running µthreads each get 1/k of its cycles. */
	cxs_time compute = now + instr * c->P->ccm_cycle * c->pu_running[pu];
	cxs_time end = compute > ready ? compute : ready;
	uint64_t d[2] = {u, t->next == t->nlines};
	cxs_schedule(c->lp, end - now, EV_TASK_DONE, d, sizeof d);
}

/* Starts partition `task` on µthread u now: runs the kernel, then loads its lines. */
static void start_task(struct ccm *c, uint32_t u, uint32_t task)
{
	struct touch_ctx tc = {.c = c, .t = &c->ut[u],
			       .l1 = c->P->ccm_l1_lines ? c->l1 + (size_t)(u % c->P->ccm_pus) * c->P->ccm_l1_lines
							 : NULL};
	axle_recent_reset(&tc.recent);
	tc.t->task = task;
	tc.t->nlines = tc.t->next = 0;
	tc.t->instr = axle_wl_ccm_task(c->wl, c->ws, c->iter, task,
				       c->result + (size_t)task * c->round.task_bytes, touch, &tc);
	if (tc.oom) {
		cxs_lp_fail(c->lp, 2, "CCM: out of memory");
		return;
	}
	*c->c_instr += tc.t->instr;
	busy_change(c, +1);
	c->pu_running[u % c->P->ccm_pus]++;
	step(c, u);
}

static void next_for_thread(struct ccm *c, uint32_t u)
{
	if (c->P->ccm_sched == AXLE_SCHED_FIFO) {
		if (c->next_task < c->round.ntasks)
			start_task(c, u, c->next_task++);
	} else {
		uint32_t pu = u % c->P->ccm_pus;
		if (c->rr_next[pu] < c->rr_end[pu])
			start_task(c, u, c->rr_next[pu]++);
	}
}

static void send(struct ccm *c, const struct axle_msg *m)
{
	axle_send(&c->port, c->P, c->host, m);
}

/* Data movement: the union of the intervals during which results were in flight. */
static void moving(struct ccm *c, cxs_time from, cxs_time until)
{
	if (from < c->dm_until)
		from = c->dm_until;
	if (until > from)
		*c->c_dma_ps += until - from;
	if (until > c->dm_until)
		c->dm_until = until;
}

/* ---- result loads (RP, BS) -------------------------------------------- */

static void answer_load(struct ccm *c, uint64_t line)
{
	cxs_time now = cxs_now(c->lp);
	struct axle_msg m = {.ev = EV_RD_DATA, .a = line, .b = c->iter};
	size_t off = (size_t)line * 64, total = (size_t)c->round.ntasks * c->round.task_bytes;
	m.len = (uint32_t)(total - off < 64 ? total - off : 64);
	memcpy(m.data, c->result + off, m.len);
	cxs_time ready = cxs_dram_access(&c->dram, now, (UINT64_C(7) << 34) + line, 0);
	++*c->c_lines_loaded;
	/* In flight from the DRAM read to the line's arrival at the host (lower bound: idle link). */
	moving(c, now, ready + cxs_fabric_ser(&c->P->fab, cxs_msg_info(CXS_MSG_MEM_RD_DATA)->wire_bytes) +
			       cxs_fabric_min_latency(&c->P->fab));
	if (ready > now) {
		/* Hold the answer until the DRAM has it: the port sees messages in time order. */
		cxs_schedule(c->lp, ready - now, EV_LOAD_DONE, &m, sizeof m);
		return;
	}
	send(c, &m);
}

/* ---- DMA executor ------------------------------------------------------ */

static uint32_t slot_len(const struct ccm *c, uint32_t s)
{
	uint64_t total = (uint64_t)c->round.ntasks * c->round.task_bytes;
	uint64_t lo = (uint64_t)s * c->P->slot_bytes;
	return (uint32_t)(total - lo < c->P->slot_bytes ? total - lo : c->P->slot_bytes);
}

static void make_pending(struct ccm *c, uint32_t s)
{
	c->pending[(c->pend_head + c->pend_count++) % c->nslots] = s;
	c->pending_bytes += slot_len(c, s);
}

static void dma_kick(struct ccm *c);

static void produced(struct ccm *c, uint32_t task)
{
	uint64_t lo = (uint64_t)task * c->round.task_bytes, hi = lo + c->round.task_bytes;
	uint32_t S = c->P->slot_bytes;
	for (uint64_t s = lo / S; s * S < hi; s++) {
		uint64_t a = s * S > lo ? s * S : lo, b = (s + 1) * S < hi ? (s + 1) * S : hi;
		c->slot_fill[s] += (uint32_t)(b - a);
		if (c->slot_fill[s] < slot_len(c, (uint32_t)s))
			continue;
		c->slot_done[s] = 1;
		if (c->P->ooo)
			make_pending(c, (uint32_t)s);
	}
	if (!c->P->ooo)
		while (c->inorder_next < c->nslots && c->slot_done[c->inorder_next])
			make_pending(c, c->inorder_next++);
	dma_kick(c);
}

static void dma_kick(struct ccm *c)
{
	cxs_time now = cxs_now(c->lp);
	bool last = c->tasks_done == c->round.ntasks;
	if (c->dma_busy || c->pend_count == 0 || (c->pending_bytes < c->sf_bytes && !last))
		return;
	uint64_t n = c->pend_count;
	if (c->P->fault != AXLE_FAULT_IGNORE_CREDIT) {
		uint64_t cp = cxs_axle_tx_credit(&c->pay), cm = cxs_axle_tx_credit(&c->meta);
		n = n < cp ? n : cp;
		n = n < cm ? n : cm;
	}
	if (n == 0) {
		if (!c->bp) {
			c->bp = true;
			c->bp_since = now;
		}
		return;
	}
	if (c->bp) {
		c->bp = false;
		*c->c_bp_ps += now - c->bp_since;
		*c->c_bp_cycles += (now - c->bp_since) / c->P->ccm_cycle;
	}
	cxs_time ready = now;
	c->nbatch = (uint32_t)n;
	c->batch_pidx0 = c->pay.tail;
	c->batch_midx0 = c->meta.tail;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t s = c->pending[c->pend_head];
		c->pend_head = (c->pend_head + 1) % c->nslots;
		c->pend_count--;
		c->pending_bytes -= slot_len(c, s);
		c->batch[k] = s;
		if (c->P->fault == AXLE_FAULT_IGNORE_CREDIT) {
			c->pay.tail++;
			c->meta.tail++;
		} else {
			cxs_axle_tx_take(&c->pay);
			cxs_axle_tx_take(&c->meta);
		}
		uint64_t line0 = (uint64_t)s * c->P->slot_bytes / 64;
		cxs_time t = cxs_dram_access(&c->dram, now, (UINT64_C(7) << 34) + line0, 0);
		if (t > ready)
			ready = t;
	}
	c->dma_busy = true;
	cxs_time issue = now + c->P->dma_prep > ready ? now + c->P->dma_prep : ready;
	cxs_schedule(c->lp, issue - now, EV_DMA_ISSUE, NULL, 0);
}

static void dma_issue(struct ccm *c)
{
	cxs_time now = cxs_now(c->lp);
	for (uint32_t k = 0; k < c->nbatch; k++) {
		uint32_t s = c->batch[k];
		struct axle_msg pay = {.ev = EV_DMA_PAYLOAD, .a = c->batch_pidx0 + k, .b = s,
				       .len = slot_len(c, s)};
		struct axle_msg meta = {.ev = EV_DMA_META, .a = c->batch_midx0 + k,
					.b = c->batch_pidx0 + k, .c = s};
		struct axle_msg mtail = {.ev = EV_DMA_META_TAIL, .a = c->batch_midx0 + k + 1};
		memcpy(pay.data, c->result + (size_t)s * c->P->slot_bytes, pay.len);
		/* In order: payload, its metadata, the metadata tail (§IV-C); a fault swaps two. */
		bool first = k == 0;
		bool early_tail = first && c->P->fault == AXLE_FAULT_TAIL_BEFORE_META;
		bool early_meta = first && c->P->fault == AXLE_FAULT_META_BEFORE_PAYLOAD;
		if (early_tail)
			send(c, &mtail);
		if (early_meta)
			send(c, &meta);
		send(c, &pay);
		if (!early_meta)
			send(c, &meta);
		if (!early_tail)
			send(c, &mtail);
		*c->c_bytes += pay.len;
	}
	struct axle_msg ptail = {.ev = EV_DMA_PAYLOAD_TAIL, .a = c->batch_pidx0 + c->nbatch};
	send(c, &ptail);
	if (c->P->mech == AXLE_IRQ) {
		struct axle_msg msi = {.ev = EV_MSI, .a = c->batch_midx0 + c->nbatch};
		send(c, &msi);
	}
	*c->c_payloads += c->nbatch;
	++*c->c_batches;
	/* Data movement: from this request's issue until its last write reaches the host. */
	moving(c, now, c->port.link.egress_free + cxs_fabric_min_latency(&c->P->fab) + c->P->io_extra);
	cxs_schedule(c->lp, c->port.link.egress_free - now, EV_DMA_IDLE, NULL, 0);
}

/* ---- rounds -------------------------------------------------------------- */

static int begin_round(struct ccm *c, uint32_t iter)
{
	axle_wl_round(c->wl, iter, &c->round);
	size_t total = (size_t)c->round.ntasks * c->round.task_bytes;
	uint32_t nslots = (uint32_t)((total + c->P->slot_bytes - 1) / c->P->slot_bytes);
	if (total > c->result_cap) {
		free(c->result);
		c->result = calloc(total + 64, 1);
		c->result_cap = total;
	}
	if (nslots > c->nslots) {
		free(c->slot_fill); free(c->pending); free(c->slot_done); free(c->batch);
		c->slot_fill = malloc(nslots * sizeof *c->slot_fill);
		c->pending = malloc(nslots * sizeof *c->pending);
		c->slot_done = malloc(nslots);
		c->batch = malloc(nslots * sizeof *c->batch);
		c->nslots = nslots;
	}
	if (!c->result || !c->slot_fill || !c->pending || !c->slot_done || !c->batch)
		return -1;
	c->nslots = nslots;
	memset(c->slot_fill, 0, nslots * sizeof *c->slot_fill);
	memset(c->slot_done, 0, nslots);
	c->pend_head = c->pend_count = c->inorder_next = 0;
	c->pending_bytes = 0;
	c->sf_bytes = c->P->sf_bytes ? c->P->sf_bytes
				      : (uint64_t)(c->P->sf_pct / 100.0 * (double)total + 0.5);
	if (c->sf_bytes == 0)
		c->sf_bytes = 1;
	c->iter = iter;
	c->active = true;
	c->kernel_done = false;
	c->tasks_done = 0;
	c->next_task = 0;
	++*c->c_rounds;
	axle_wl_ccm_begin_round(c->wl, c->ws);
	/* A launch starts with empty caches: the host's write-backs changed the values. */
	memset(c->l1, 0, ((size_t)c->P->ccm_pus * c->P->ccm_l1_lines + 1) * sizeof *c->l1);
	for (uint32_t p = 0; p < c->P->ccm_pus; p++) {
		c->rr_next[p] = (uint32_t)((uint64_t)c->round.ntasks * p / c->P->ccm_pus);
		c->rr_end[p] = (uint32_t)((uint64_t)c->round.ntasks * (p + 1) / c->P->ccm_pus);
	}
	for (uint32_t u = 0; u < c->nthreads; u++)
		next_for_thread(c, u);
	return 0;
}

static void task_done(struct ccm *c, uint32_t u)
{
	uint32_t task = c->ut[u].task;
	cxs_time now = cxs_now(c->lp);
	/* The result is written back to the MN's DRAM (posted: nothing waits for it). */
	uint64_t lo = (uint64_t)task * c->round.task_bytes;
	for (uint64_t l = lo / 64; l * 64 < lo + c->round.task_bytes; l++)
		cxs_dram_access(&c->dram, now, (UINT64_C(7) << 34) + l, 1);
	c->tasks_done++;
	++*c->c_tasks;
	busy_change(c, -1);
	c->pu_running[u % c->P->ccm_pus]--;
	if (c->P->mech == AXLE_AXLE || c->P->mech == AXLE_IRQ)
		produced(c, task);
	if (c->tasks_done == c->round.ntasks) {
		c->kernel_done = true;
		for (size_t i = 0; i < c->nheld; i++)
			answer_load(c, c->held[i]);
		c->nheld = 0;
	}
	next_for_thread(c, u);
}

/* ---- node type ---------------------------------------------------------- */

static uint64_t *counter(struct ccm *c, const char *name, const char *unit, const char *desc)
{
	return cxs_stats_counter(cxs_lp_stats(c->lp), "ccm", name, unit, desc);
}

static void ccm_message(struct ccm *c, const struct axle_msg *m);

/* The port's handler for every class the CCM hears: CXL.mem and CXL.io. */
static void on_message(void *ctx, cxs_time now, const struct cxs_envelope *env, const void *body,
		       uint32_t len)
{
	(void)now;
	(void)env;
	(void)len;
	ccm_message(ctx, body);
}

static int ccm_init(struct cxs_lp *lp, void *state)
{
	struct ccm *c = state;
	const struct axle_model *M = cxs_lp_ctx(lp);
	char err[256];
	if (!M)
		cxs_bug(lp, "axle: the run has no AXLE instance (configure was not called)");
	c->lp = lp;
	c->P = &M->P;
	c->wl = M->wl;
	c->host = cxs_lp_id(lp) - 1;
	c->nthreads = c->P->ccm_pus * c->P->ccm_threads;
	c->pu_running = calloc(c->P->ccm_pus, sizeof *c->pu_running);
	c->rr_next = calloc(c->P->ccm_pus, sizeof *c->rr_next);
	c->rr_end = calloc(c->P->ccm_pus, sizeof *c->rr_end);
	c->ut = calloc(c->nthreads, sizeof *c->ut);
	c->l1 = calloc((size_t)c->P->ccm_pus * c->P->ccm_l1_lines + 1, sizeof *c->l1);
	c->ws = axle_wl_ccm_new(c->wl);
	if (!c->pu_running || !c->rr_next || !c->rr_end || !c->ut || !c->l1 || !c->ws ||
	    cxs_nport_init(&c->port, lp, &M->port) != 0 ||
	    cxs_dram_init(&c->dram, &c->P->ccm_dram, err, sizeof err) != 0) {
		cxs_lp_fail(lp, 2, "node %u: cannot create the CCM (out of memory)", cxs_lp_id(lp));
		return -1;
	}
	cxs_nport_on_class(&c->port, CXS_CLASS_MEM, on_message, c);
	cxs_nport_on_class(&c->port, CXS_CLASS_IO, on_message, c);
	cxs_axle_tx_init(&c->pay, c->P->dma_slots);
	cxs_axle_tx_init(&c->meta, c->P->dma_slots);
	c->c_busy = counter(c, "busy_ps", "ps", "time at least one CCM µthread ran a partition (CCM idle = axle/e2e_ps - this)");
	c->c_tasks = counter(c, "tasks", "partitions", "partitions executed");
	c->c_instr = counter(c, "instructions", "instructions", "kernel instructions executed (cost model)");
	c->c_payloads = counter(c, "payloads", "slots", "payload slots back-streamed");
	c->c_batches = counter(c, "dma_requests", "requests", "DMA requests (batches) issued");
	c->c_bytes = counter(c, "bytes_streamed", "bytes", "result bytes back-streamed by DMA");
	c->c_dma_ps = counter(c, "data_movement_ps", "ps", "time result data was in flight to the host: DMA requests (AXLE) or CXL.mem result loads (RP, BS), union of intervals");
	c->c_bp_ps = counter(c, "backpressure_ps", "ps", "time the DMA executor had payloads but no ring credit");
	c->c_bp_cycles = counter(c, "backpressure_cycles", "CCM cycles", "backpressure_ps in CCM clock cycles (Fig. 16b)");
	c->c_lines_loaded = counter(c, "lines_loaded", "lines", "result lines the host loaded by CXL.mem (RP, BS)");
	c->c_rounds = counter(c, "rounds", "launches", "kernel launches");
	c->c_fc = counter(c, "flow_control", "messages", "flow-control head updates received");
	if (!c->c_busy || !c->c_tasks || !c->c_instr || !c->c_payloads || !c->c_batches ||
	    !c->c_bytes || !c->c_dma_ps || !c->c_bp_ps || !c->c_bp_cycles || !c->c_lines_loaded ||
	    !c->c_rounds || !c->c_fc) {
		cxs_lp_fail(lp, 2, "node %u: cannot register the CCM counters", cxs_lp_id(lp));
		return -1;
	}
	return 0;
}

static void ccm_message(struct ccm *c, const struct axle_msg *m)
{
	switch (m->ev) {
	case EV_LAUNCH: {
		/* The packet filter sees a kernel-launch store (M²NDP); RP only stores the descriptor. */
		struct axle_msg cmp = {.ev = EV_LAUNCH_CMP, .a = m->a};
		if (c->P->mech != AXLE_RP && begin_round(c, (uint32_t)m->a) != 0) {
			cxs_lp_fail(c->lp, 2, "CCM: out of memory for the result buffer");
			return;
		}
		send(c, &cmp);
		return;
	}
	case EV_MBOX_ENQ: {
		struct axle_msg ack = {.ev = EV_MBOX_ACK, .a = m->a};
		if (begin_round(c, (uint32_t)m->a) != 0) {
			cxs_lp_fail(c->lp, 2, "CCM: out of memory for the result buffer");
			return;
		}
		send(c, &ack);
		return;
	}
	case EV_MBOX_DEQ: {
		struct axle_msg ack = {.ev = EV_MBOX_ACK, .a = m->a};
		c->active = false;
		send(c, &ack);
		return;
	}
	case EV_POLL_REQ: {
		struct axle_msg r = {.ev = EV_POLL_RESP, .a = m->a, .b = c->kernel_done && c->iter == m->a};
		send(c, &r);
		return;
	}
	case EV_RD:
		if (!c->kernel_done || c->iter != m->b) {
			/* BS: the barrier holds the load until the kernel has populated the result. */
			if (c->nheld == c->held_cap) {
				size_t cap = c->held_cap ? 2 * c->held_cap : 256;
				uint64_t *h = realloc(c->held, cap * sizeof *h);
				if (!h) {
					cxs_lp_fail(c->lp, 2, "CCM: out of memory");
					return;
				}
				c->held = h;
				c->held_cap = cap;
			}
			c->held[c->nheld++] = m->a;
			return;
		}
		answer_load(c, m->a);
		return;
	case EV_WB:
		axle_wl_ccm_writeback(c->wl, c->ws, m->a, m->data, m->len);
		return;
	case EV_FC:
		++*c->c_fc;
		if (cxs_axle_tx_head(&c->pay, m->a) < 0 || cxs_axle_tx_head(&c->meta, m->b) < 0) {
			cxs_lp_fail(c->lp, 6, "AXLE protocol error: head update (payload %" PRIu64
				    ", metadata %" PRIu64 ") past the CCM's tails (%" PRIu64 ", %" PRIu64 ")",
				    m->a, m->b, c->pay.tail, c->meta.tail);
			return;
		}
		dma_kick(c);
		return;
	default:
		cxs_bug(c->lp, "CCM got message %u", m->ev);
	}
}

static void ccm_event(struct cxs_lp *lp, void *state, const struct cxs_event *ev)
{
	struct ccm *c = state;
	if (ev->type <= EV_MSG_LAST) {
		cxs_nport_arrive(&c->port, ev);
		return;
	}
	switch (ev->type) {
	case EV_DELIVER:
		cxs_nport_deliver(&c->port, ev);
		return;
	case EV_TASK_DONE: {
		const uint64_t *d = (const void *)ev->data;
		if (d[1])
			task_done(c, (uint32_t)d[0]);
		else
			step(c, (uint32_t)d[0]);
		return;
	}
	case EV_LOAD_DONE:
		send(c, (const void *)ev->data);
		return;
	case EV_DMA_ISSUE:
		dma_issue(c);
		return;
	case EV_DMA_IDLE:
		c->dma_busy = false;
		dma_kick(c);
		return;
	default:
		cxs_bug(lp, "CCM got event type %u", ev->type);
	}
}

static void ccm_finalize(struct cxs_lp *lp, void *state)
{
	struct ccm *c = state;
	(void)lp;
	if (c->bp) {
		/* Still waiting for credit at the end (a deadlock): count the wait so far. */
		*c->c_bp_ps += cxs_now(lp) - c->bp_since;
		*c->c_bp_cycles += (cxs_now(lp) - c->bp_since) / c->P->ccm_cycle;
	}
	axle_wl_ccm_free(c->ws);
	for (uint32_t u = 0; c->ut && u < c->nthreads; u++)
		free(c->ut[u].lines);
	free(c->ut);
	free(c->l1);
	free(c->pu_running); free(c->rr_next); free(c->rr_end); free(c->result);
	free(c->slot_fill); free(c->pending); free(c->slot_done); free(c->batch); free(c->held);
	cxs_dram_destroy(&c->dram);
}

const struct cxs_node_type axle_ccm_type = {
	.name = "ccm",
	.state_size = sizeof(struct ccm),
	.init = ccm_init,
	.event = ccm_event,
	.failure = axle_failure,
	.finalize = ccm_finalize,
};
