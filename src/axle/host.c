/*
 * host.c — the host CN's offload runtime (AXLE §III-A, §IV-B/C): it launches
 * each round of the offloaded kernel with one of four mechanisms, learns
 * when results are ready, runs the host tasks that depend on them on its
 * processing units, and writes updated inputs back to the CCM.
 *
 * Processing units: axle.host_pus units of axle.host_threads µthreads at
 * axle.host_ghz (Table III: 32 x 2 at 3 GHz); a unit issues one instruction
 * per cycle, its µthreads served first come first served.
 * µthread 0 is the runtime's own: it launches, polls and takes interrupts
 * (a pinned polling core); host tasks and the epilogue of each round run on
 * the others.
 *
 * Mechanisms (axle.mechanism), per round:
 *   rp    CXL.mem store of the kernel descriptor; CXL.io mailbox enqueue; a
 *         CXL.io read of the mailbox status every axle.rp_interval (Table
 *         III: 1 µs) until it says done; CXL.io dequeue; CXL.mem load of the
 *         whole result; then every host task is ready.
 *   bs    CXL.mem store that launches the kernel; on its ACK, a CXL.mem load
 *         of the result, which the CCM's barrier holds until the kernel is
 *         done (M²NDP, Fig. 6): µthread 0 is stalled from launch to the last
 *         line.
 *   axle  CXL.mem store that launches the kernel, asynchronously. µthread 0
 *         reads the metadata tail in local memory every axle.poll_interval;
 *         new records are fetched into the ready pool, and a host task is
 *         ready when every payload slot of its result range is in the pool.
 *         It reads its payloads from the local ring (cache-bypassed DRAM),
 *         marks them consumed (gap-aware head), and the new heads go to the
 *         CCM by a CXL.mem store (flow control).
 *   axle_irq  as axle, but the CCM sends an MSI per DMA request and the
 *         host fetches that request's metadata axle.irq_latency (50 µs)
 *         later; interrupts are handled concurrently (any core), each
 *         counted as that much core stall.
 * Result loads are real CXL.mem reads of 64-byte lines, axle.host_mlp of
 * them outstanding (a core's line fill buffers).
 *
 * A round whose host tasks update one shared structure (KNN's top-k list)
 * runs their instructions one task at a time, as under a lock: a task's
 * instructions start when both its unit and the lock are free.
 *
 * Host scheduler (axle.host_sched), one queue of the round's host tasks in
 * result-offset order served by every free µthread: fifo runs the head when
 * it is ready and otherwise waits; rr passes over tasks not ready yet and
 * runs the next ready one (§V-E).
 *
 * Checks. Every DMA write is checked against the ring invariants of §IV-C
 * on arrival (ring.c); a violation stops the run. A deadlock — every payload
 * slot of the ring holds a payload already in the ready pool, no host task
 * can run and none is running — can never resolve (the CCM has no credit and
 * the host will free none), so it stops the run at once with the rings'
 * state. A round still running at engine.end_time stops the run too: a run
 * of this model never ends quietly unfinished.
 *
 * Measured (component "axle"): end-to-end time (first launch to the end of
 * the last epilogue), host busy time (some host task or epilogue running;
 * host idle = e2e - busy), host core stall (µthread 0's polls, mailbox and
 * load round trips, BS waits and metadata fetches, and interrupt handling;
 * host tasks' waits for their payload reads are payload_wait_ps),
 * result load time (RP, BS; the data movement time itself is
 * ccm/data_movement_ps).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "axle_priv.h"

struct meta_rec {
	uint64_t pidx;
	uint32_t slot;
};

struct host {
	struct cxs_lp *lp;
	const struct axle_params *P; /* the model's instance (cxs_lp_ctx) */
	const struct axle_wl *wl;
	struct cxs_nport port;
	struct cxs_dram dram;
	void *ws;
	uint32_t ccm;

	/* the round */
	bool active, finished;
	uint32_t iter;
	struct axle_round round;
	uint64_t total;         /* result bytes */
	uint32_t host_bytes;    /* per host task, a multiple of the slot */
	uint32_t ntasks, nslots, tasks_done, running;
	uint8_t *local;         /* RP/BS: the loaded result */
	size_t local_cap;
	uint32_t *have, *need;  /* per host task: slots in the pool, slots needed */
	uint8_t *task_state;    /* 0 waiting, 1 ready, 2 running/done */
	uint64_t *slot_pidx;    /* per result slot: payload index holding it */
	uint64_t *readybits;    /* bit t: task t ready and not started */
	uint32_t nready;        /* tasks ready and not started */
	uint32_t fifo_next;     /* fifo: the next task in offset order */
	uint32_t rr_cursor;     /* rr: where the next look for a ready task starts */
	enum { RP_IDLE, RP_ENQ, RP_POLL, RP_DEQ, RP_LOAD } rp;
	cxs_time poll_sent;
	uint32_t nthreads;      /* task µthreads: 1 .. nthreads */
	uint8_t *thread_busy;
	cxs_time *pu_free;
	cxs_time serial_free;   /* when the lock of a serial round's shared structure is free */
	cxs_time busy_since;
	cxs_time stall_from;

	/* RP / BS result load */
	uint64_t load_next, load_lines, load_got;
	cxs_time load_start;

	/* AXLE rings and the pool */
	struct cxs_axle_ring_rx pay, meta;
	uint8_t *pay_data;      /* capacity x slot bytes */
	uint32_t *pay_slot;     /* per ring slot: result slot id (from the payload write) */
	struct meta_rec *meta_rec;
	uint64_t meta_fetched;  /* metadata indexes taken towards the pool */
	uint64_t pooled_unconsumed;
	bool polling;
	uint64_t fc_pay, fc_meta; /* heads last sent */

	/* touch: local DRAM lines of a host task */
	struct axle_recent recent;
	cxs_time touch_ready;

	uint64_t *c_e2e, *c_busy, *c_idle, *c_stall, *c_dm, *c_polls, *c_rpolls, *c_notif,
		*c_fc, *c_tasks, *c_instr, *c_rounds, *c_ok, *c_digest, *c_wb, *c_max_in_use,
		*c_consumed, *c_payload_wait;
};

static bool streaming(const struct host *h)
{
	return h->P->mech == AXLE_AXLE || h->P->mech == AXLE_IRQ;
}

static void send(struct host *h, const struct axle_msg *m)
{
	axle_send(&h->port, h->P, h->ccm, m);
}

static void touch(void *ctx, uint64_t addr)
{
	struct host *h = ctx;
	uint64_t line = addr >> 6;
	if (axle_recent_line(&h->recent, line))
		return;
	cxs_time t = cxs_dram_access(&h->dram, cxs_now(h->lp), line, 0);
	if (t > h->touch_ready)
		h->touch_ready = t;
}

static void busy_change(struct host *h, int delta)
{
	cxs_time now = cxs_now(h->lp);
	if (h->running == 0 && delta > 0)
		h->busy_since = now;
	h->running = (uint32_t)((int)h->running + delta);
	if (h->running == 0 && delta < 0)
		*h->c_busy += now - h->busy_since;
}

/* Where ring index i's bytes live in the host's address space (the DMA region). */
#define PAY_REGION (UINT64_C(9) << 40)
#define META_REGION (UINT64_C(10) << 40)

static void launch(struct host *h);
static void dispatch(struct host *h);

/* ---- host tasks -------------------------------------------------------- */

static void make_ready(struct host *h, uint32_t t)
{
	h->task_state[t] = 1;
	h->nready++;
	h->readybits[t / 64] |= UINT64_C(1) << (t % 64);
}

static void run_task(struct host *h, uint32_t u, uint32_t t)
{
	cxs_time now = cxs_now(h->lp);
	uint64_t off = (uint64_t)t * h->host_bytes;
	uint32_t len = (uint32_t)(h->total - off < h->host_bytes ? h->total - off : h->host_bytes);
	uint8_t *data = h->local + off;
	uint8_t wb[64]; /* only graph tasks write back, one slot (<= 64 B) each */
	uint32_t wb_len = 0;

	h->task_state[t] = 2;
	h->nready--;
	h->readybits[t / 64] &= ~(UINT64_C(1) << (t % 64));
	h->thread_busy[u] = 1;
	axle_recent_reset(&h->recent);
	h->touch_ready = now;
	if (streaming(h)) {
		/* Gather the task's payloads from the ring, reading them from local DRAM. */
		uint32_t S = h->P->slot_bytes;
		for (uint64_t s = off / S; s * S < off + len; s++) {
			uint64_t p = h->slot_pidx[s], rs = p % h->pay.capacity;
			uint32_t n = (uint32_t)(h->total - s * S < S ? h->total - s * S : S);
			memcpy(h->local + s * S, h->pay_data + rs * S, n);
			touch(h, PAY_REGION + rs * S);
		}
		*h->c_payload_wait += h->touch_ready - now;
	}
	uint32_t pu = u / h->P->host_threads;
	if (len > sizeof wb && (h->P->wl.kind == WL_SSSP || h->P->wl.kind == WL_PAGERANK))
		cxs_bug(h->lp, "graph host task of %u bytes: write-back buffer too small", len);
	uint64_t instr = axle_wl_host_task(h->wl, h->ws, h->iter, off, data, len, touch, h, wb, &wb_len);
	cxs_time issue = now > h->pu_free[pu] ? now : h->pu_free[pu];
	if (h->round.serial && h->serial_free > issue)
		issue = h->serial_free; /* waits for the lock (its unit counts as taken) */
	h->pu_free[pu] = issue + instr * h->P->host_cycle;
	if (h->round.serial)
		h->serial_free = h->pu_free[pu];
	cxs_time end = h->pu_free[pu] > h->touch_ready ? h->pu_free[pu] : h->touch_ready;
	*h->c_instr += instr;
	busy_change(h, +1);
	/* Write-back of updated inputs: CXL.mem stores, posted as the task ends. */
	for (uint32_t o = 0; o < wb_len; o += 64) {
		struct axle_msg m = {.ev = EV_WB, .a = off + o, .len = wb_len - o < 64 ? wb_len - o : 64};
		memcpy(m.data, wb + o, m.len);
		cxs_schedule(h->lp, end - now, EV_WB_SEND, &m, sizeof m);
	}
	struct axle_msg done = {.a = t, .b = u};
	cxs_schedule(h->lp, end - now, EV_HOST_DONE, &done, sizeof done);
}

/* The first ready task at or after `from` (cyclically), or UINT32_MAX. */
static uint32_t first_ready(const struct host *h, uint32_t from)
{
	uint32_t words = (h->ntasks + 63) / 64;
	for (uint32_t k = 0; k <= words; k++) {
		uint32_t w = (from / 64 + k) % words;
		uint64_t bits = h->readybits[w];
		if (k == 0)
			bits &= ~UINT64_C(0) << (from % 64);
		if (bits)
			return w * 64 + (uint32_t)__builtin_ctzll(bits);
	}
	return UINT32_MAX;
}

/*
 * The task a free µthread runs now, or UINT32_MAX. Both policies walk one
 * queue of the round's tasks in result-offset order. fifo serves its head
 * only: a head not ready yet blocks the queue. rr takes the first ready task
 * from where it last took one, wrapping around: a task not ready is passed
 * over (moved to the back) and met again on a later lap (§V-E).
 */
static uint32_t pick(struct host *h)
{
	uint32_t t;
	if (h->nready == 0)
		return UINT32_MAX;
	if (h->P->host_sched == AXLE_SCHED_FIFO) {
		if (h->fifo_next >= h->ntasks || h->task_state[h->fifo_next] != 1)
			return UINT32_MAX;
		return h->fifo_next++;
	}
	t = first_ready(h, h->rr_cursor);
	if (t != UINT32_MAX)
		h->rr_cursor = t + 1 < h->ntasks ? t + 1 : 0;
	return t;
}

/* Whether pick() would find work: what the deadlock check must rule out. */
static bool runnable(const struct host *h)
{
	if (h->P->host_sched == AXLE_SCHED_FIFO)
		return h->fifo_next < h->ntasks && h->task_state[h->fifo_next] == 1;
	return h->nready > 0;
}

static void dispatch(struct host *h)
{
	for (uint32_t u = 1; u <= h->nthreads; u++) {
		if (h->thread_busy[u])
			continue;
		uint32_t t = pick(h);
		if (t != UINT32_MAX)
			run_task(h, u, t);
	}
}

static void send_fc(struct host *h)
{
	if (h->pay.head == h->fc_pay && h->meta.head == h->fc_meta)
		return;
	struct axle_msg m = {.ev = EV_FC, .a = h->pay.head, .b = h->meta.head};
	h->fc_pay = h->pay.head;
	h->fc_meta = h->meta.head;
	++*h->c_fc;
	send(h, &m);
}

static void deadlock_check(struct host *h)
{
	if (!streaming(h) || !h->active || h->running || runnable(h) ||
	    h->pooled_unconsumed < h->pay.capacity)
		return;
	uint32_t waiting = 0, first = UINT32_MAX;
	for (uint32_t t = 0; t < h->ntasks; t++)
		if (h->task_state[t] == 0) {
			waiting++;
			if (first == UINT32_MAX)
				first = t;
		}
	cxs_lp_fail(h->lp, 7,
		    "AXLE deadlock: every payload slot holds a result no host task can use yet "
		    "(payload ring: head %" PRIu64 ", tail %" PRIu64 ", %" PRIu64 " of %" PRIu64
		    " slots in use; metadata ring: head %" PRIu64 ", tail %" PRIu64
		    "); %u host tasks waiting, task %u has %u of its %u slots; round %u; "
		    "the CCM is blocked on ring credit",
		    h->pay.head, h->pay.tail, cxs_axle_rx_in_use(&h->pay), h->pay.capacity,
		    h->meta.head, h->meta.tail, waiting, first, first < h->ntasks ? h->have[first] : 0,
		    first < h->ntasks ? h->need[first] : 0, h->iter);
}

static void task_done(struct host *h, const struct axle_msg *m)
{
	uint32_t t = (uint32_t)m->a, u = (uint32_t)m->b;
	h->thread_busy[u] = 0;
	h->tasks_done++;
	++*h->c_tasks;
	busy_change(h, -1);
	if (streaming(h)) {
		uint64_t off = (uint64_t)t * h->host_bytes, S = h->P->slot_bytes;
		uint64_t end = off + h->host_bytes < h->total ? off + h->host_bytes : h->total;
		for (uint64_t s = off / S; s * S < end; s++) {
			if (cxs_axle_rx_consume(&h->pay, h->slot_pidx[s]) < 0) {
				cxs_lp_fail(h->lp, 6, "AXLE invariant violated: payload %" PRIu64
					    " consumed twice or never published", h->slot_pidx[s]);
				return;
			}
			h->pooled_unconsumed--;
			++*h->c_consumed;
		}
		send_fc(h);
	}
	if (h->tasks_done < h->ntasks) {
		dispatch(h);
		deadlock_check(h);
		return;
	}
	/* Every host task of the round is done: the epilogue, on one µthread. */
	bool more;
	uint64_t par_instr, par_bytes;
	uint64_t instr = axle_wl_epilogue(h->wl, h->ws, h->iter, &more, &par_instr, &par_bytes);
	*h->c_instr += instr + par_instr;
	h->active = false;
	busy_change(h, +1);
	/*
	 * A parallel part runs on every unit, as long as its instructions or
	 * its bytes at the host DRAM's peak (channels x 64 B per burst), whichever
	 * is longer.
	 */
	cxs_time par = (par_instr + h->P->host_pus - 1) / h->P->host_pus * h->P->host_cycle;
	cxs_time stream = par_bytes / 64 * h->P->host_dram.t_burst / h->P->host_dram.nchannels;
	struct axle_msg e = {.a = more};
	cxs_schedule(h->lp, instr * h->P->host_cycle + (par > stream ? par : stream), EV_EPILOGUE_DONE,
		     &e, sizeof e);
}

/* ---- rounds -------------------------------------------------------------- */

static int begin_round(struct host *h)
{
	axle_wl_round(h->wl, h->iter, &h->round);
	uint32_t S = h->P->slot_bytes;
	h->total = (uint64_t)h->round.ntasks * h->round.task_bytes;
	h->host_bytes = (h->round.host_unit + S - 1) / S * S;
	uint32_t ntasks = (uint32_t)((h->total + h->host_bytes - 1) / h->host_bytes);
	uint32_t nslots = (uint32_t)((h->total + S - 1) / S);
	if (h->total > h->local_cap || ntasks > h->ntasks || nslots > h->nslots) {
		free(h->local); free(h->have); free(h->need); free(h->task_state);
		free(h->slot_pidx); free(h->readybits);
		h->local = calloc(h->total + 64, 1);
		h->local_cap = h->total;
		h->have = calloc(ntasks, sizeof *h->have);
		h->need = calloc(ntasks, sizeof *h->need);
		h->task_state = calloc(ntasks, 1);
		h->readybits = calloc((ntasks + 63) / 64, sizeof *h->readybits);
		h->slot_pidx = calloc(nslots, sizeof *h->slot_pidx);
		if (!h->local || !h->have || !h->need || !h->task_state || !h->readybits || !h->slot_pidx)
			return -1;
	}
	h->ntasks = ntasks;
	h->nslots = nslots;
	memset(h->have, 0, ntasks * sizeof *h->have);
	memset(h->task_state, 0, ntasks);
	for (uint32_t t = 0; t < ntasks; t++) {
		uint64_t off = (uint64_t)t * h->host_bytes;
		uint64_t len = h->total - off < h->host_bytes ? h->total - off : h->host_bytes;
		h->need[t] = (uint32_t)((len + S - 1) / S);
	}
	memset(h->readybits, 0, (ntasks + 63) / 64 * sizeof *h->readybits);
	h->nready = h->fifo_next = h->rr_cursor = 0;
	h->tasks_done = 0;
	h->active = true;
	++*h->c_rounds;
	return 0;
}

/* RP and BS: load the whole result, host_mlp lines outstanding. */
static void load_more(struct host *h)
{
	while (h->load_next < h->load_lines && h->load_next - h->load_got < h->P->host_mlp) {
		struct axle_msg m = {.ev = EV_RD, .a = h->load_next++, .b = h->iter};
		send(h, &m);
	}
}

static void start_load(struct host *h)
{
	h->load_next = h->load_got = 0;
	h->load_lines = (h->total + 63) / 64;
	h->load_start = cxs_now(h->lp);
	if (h->P->mech != AXLE_BS) /* BS: the stall began at the launch */
		h->stall_from = cxs_now(h->lp);
	load_more(h);
}

static void launch(struct host *h)
{
	if (begin_round(h) != 0) {
		cxs_lp_fail(h->lp, 2, "host: out of memory for round %u", h->iter);
		return;
	}
	cxs_time now = cxs_now(h->lp);
	struct axle_msg m = {.ev = EV_LAUNCH, .a = h->iter};
	send(h, &m);
	switch (h->P->mech) {
	case AXLE_RP: {
		struct axle_msg enq = {.ev = EV_MBOX_ENQ, .a = h->iter};
		send(h, &enq);
		h->rp = RP_ENQ;
		h->stall_from = now;
		break;
	}
	case AXLE_BS:
		/* The core is stalled from here: the launch's ACK, then the load the barrier holds. */
		h->stall_from = now;
		break;
	case AXLE_AXLE:
		if (!h->polling) {
			h->polling = true;
			cxs_schedule(h->lp, h->P->poll_interval, EV_POLL, NULL, 0);
		}
		break;
	case AXLE_IRQ:
		break;
	}
}

/* Moves metadata [a, b) into the ready pool. */
static void to_pool(struct host *h, uint64_t a, uint64_t b)
{
	for (uint64_t i = a; i < b; i++) {
		struct meta_rec r = h->meta_rec[i % h->meta.capacity];
		if (cxs_axle_rx_consume(&h->meta, i) < 0) {
			cxs_lp_fail(h->lp, 6, "AXLE invariant violated: metadata %" PRIu64
				    " fetched before it was published", i);
			return;
		}
		h->slot_pidx[r.slot] = r.pidx;
		h->pooled_unconsumed++;
		uint32_t t = (uint32_t)((uint64_t)r.slot * h->P->slot_bytes / h->host_bytes);
		if (++h->have[t] == h->need[t])
			make_ready(h, t);
	}
	uint64_t in_use = h->pay.tail - h->pay.head;
	if (in_use > *h->c_max_in_use)
		*h->c_max_in_use = in_use;
	send_fc(h);
	dispatch(h);
	deadlock_check(h);
}

static void poll(struct host *h)
{
	cxs_time now = cxs_now(h->lp);
	if (!h->active) {
		h->polling = false;
		return;
	}
	++*h->c_polls;
	/* One local read of the metadata tail; then the new records, if any. */
	cxs_time done = cxs_dram_access(&h->dram, now, META_REGION >> 6, 0);
	uint64_t tail = h->meta.tail;
	if (tail > h->meta_fetched) {
		for (uint64_t i = h->meta_fetched; i < tail; i++) {
			cxs_time t = cxs_dram_access(&h->dram, now,
						     (META_REGION + 64 + (i % h->meta.capacity) * 16) >> 6, 0);
			if (t > done)
				done = t;
		}
		struct axle_msg r = {.a = h->meta_fetched, .b = tail, .c = now};
		h->meta_fetched = tail;
		*h->c_stall += done - now;
		cxs_schedule(h->lp, done - now, EV_POLL_DONE, &r, sizeof r);
		return;
	}
	*h->c_stall += done - now;
	deadlock_check(h);
	cxs_time next = now + h->P->poll_interval > done ? now + h->P->poll_interval : done;
	cxs_schedule(h->lp, next - now, EV_POLL, NULL, 0);
}

/* ---- messages ------------------------------------------------------------ */

static void dma_write(struct host *h, const struct axle_msg *m)
{
	char why[256];
	uint64_t S = h->P->slot_bytes;
	switch (m->ev) {
	case EV_DMA_PAYLOAD:
		if (cxs_axle_check_write(&h->pay, m->a, why, sizeof why) != 0)
			goto violated;
		memcpy(h->pay_data + (m->a % h->pay.capacity) * S, m->data, m->len);
		h->pay_slot[m->a % h->pay.capacity] = (uint32_t)m->b;
		return;
	case EV_DMA_META:
		if (cxs_axle_check_meta(&h->pay, m->b, why, sizeof why) != 0 ||
		    cxs_axle_check_write(&h->meta, m->a, why, sizeof why) != 0)
			goto violated;
		if (h->pay_slot[m->b % h->pay.capacity] != m->c) {
			snprintf(why, sizeof why, "metadata %" PRIu64 " names result slot %" PRIu64
				 " but payload %" PRIu64 " holds slot %u", m->a, m->c, m->b,
				 h->pay_slot[m->b % h->pay.capacity]);
			goto violated;
		}
		h->meta_rec[m->a % h->meta.capacity] = (struct meta_rec){m->b, (uint32_t)m->c};
		return;
	case EV_DMA_META_TAIL:
		if (cxs_axle_check_tail(&h->meta, m->a, why, sizeof why) != 0)
			goto violated;
		return;
	case EV_DMA_PAYLOAD_TAIL:
		if (cxs_axle_check_tail(&h->pay, m->a, why, sizeof why) != 0)
			goto violated;
		return;
	}
	return;
violated:
	cxs_lp_fail(h->lp, 6, "AXLE invariant violated (%s ring): %s",
		    m->ev == EV_DMA_PAYLOAD || m->ev == EV_DMA_PAYLOAD_TAIL ? "payload" : "metadata", why);
}

static void load_data(struct host *h, const struct axle_msg *m)
{
	cxs_time now = cxs_now(h->lp);
	memcpy(h->local + m->a * 64, m->data, m->len);
	h->load_got++;
	if (h->load_got < h->load_lines) {
		load_more(h);
		return;
	}
	/* The whole result is here: every host task is ready. */
	*h->c_dm += now - h->load_start;
	*h->c_stall += now - h->stall_from;
	for (uint32_t t = 0; t < h->ntasks; t++)
		make_ready(h, t);
	dispatch(h);
}

static void host_message(struct host *h, const struct axle_msg *m)
{
	cxs_time now = cxs_now(h->lp);
	switch (m->ev) {
	case EV_LAUNCH_CMP:
		/* BS: the launch is acknowledged, the result load goes out (Fig. 6). */
		if (h->P->mech == AXLE_BS && h->active && m->a == h->iter)
			start_load(h);
		return;
	case EV_MBOX_ACK:
		*h->c_stall += now - h->stall_from;
		if (h->rp == RP_ENQ) {
			/* enqueued: poll the mailbox every rp_interval */
			h->rp = RP_POLL;
			h->poll_sent = now;
			cxs_schedule(h->lp, h->P->rp_interval, EV_POLL, NULL, 0);
		} else if (h->rp == RP_DEQ) {
			/* dequeued: load the result */
			h->rp = RP_LOAD;
			start_load(h);
		}
		return;
	case EV_POLL_RESP: {
		*h->c_stall += now - h->stall_from;
		if (m->b) {
			struct axle_msg deq = {.ev = EV_MBOX_DEQ, .a = h->iter};
			h->rp = RP_DEQ;
			h->stall_from = now;
			send(h, &deq);
			return;
		}
		cxs_time next = h->poll_sent + h->P->rp_interval > now ? h->poll_sent + h->P->rp_interval : now;
		cxs_schedule(h->lp, next - now, EV_POLL, NULL, 0);
		return;
	}
	case EV_RD_DATA:
		load_data(h, m);
		return;
	case EV_DMA_PAYLOAD:
	case EV_DMA_META:
	case EV_DMA_META_TAIL:
	case EV_DMA_PAYLOAD_TAIL:
		dma_write(h, m);
		return;
	case EV_MSI: {
		++*h->c_notif;
		/* Handled on some core after the handling latency; it publishes its request's records. */
		struct axle_msg r = {.a = m->a};
		*h->c_stall += h->P->irq_latency;
		cxs_schedule(h->lp, h->P->irq_latency, EV_IRQ_DONE, &r, sizeof r);
		return;
	}
	default:
		cxs_bug(h->lp, "host got message %u", m->ev);
	}
}

/* The port's handler for every class the host hears: CXL.mem, CXL.io and DMA. */
static void on_message(void *ctx, cxs_time now, const struct cxs_envelope *env, const void *body,
		       uint32_t len)
{
	(void)now;
	(void)env;
	(void)len;
	host_message(ctx, body);
}

static uint64_t *counter(struct host *h, const char *name, const char *unit, const char *desc)
{
	return cxs_stats_counter(cxs_lp_stats(h->lp), "axle", name, unit, desc);
}

static int host_init(struct cxs_lp *lp, void *state)
{
	struct host *h = state;
	const struct axle_model *M = cxs_lp_ctx(lp);
	char err[256];
	if (!M)
		cxs_bug(lp, "axle: the run has no AXLE instance (configure was not called)");
	h->lp = lp;
	h->P = &M->P;
	h->wl = M->wl;
	h->ccm = cxs_lp_id(lp) + 1;
	h->nthreads = h->P->host_pus * h->P->host_threads - 1;
	h->thread_busy = calloc(h->nthreads + 1, 1);
	h->pu_free = calloc(h->P->host_pus, sizeof *h->pu_free);
	h->ws = axle_wl_host_new(h->wl);
	bool ok = h->thread_busy && h->pu_free && h->ws &&
		  cxs_nport_init(&h->port, lp, &M->port) == 0 &&
		  cxs_dram_init(&h->dram, &h->P->host_dram, err, sizeof err) == 0;
	if (ok && streaming(h)) {
		ok = cxs_axle_rx_init(&h->pay, h->P->dma_slots) == 0 &&
		     cxs_axle_rx_init(&h->meta, h->P->dma_slots) == 0 &&
		     (h->pay_data = calloc(h->P->dma_slots, h->P->slot_bytes)) != NULL &&
		     (h->pay_slot = calloc(h->P->dma_slots, sizeof *h->pay_slot)) != NULL &&
		     (h->meta_rec = calloc(h->P->dma_slots, sizeof *h->meta_rec)) != NULL;
	}
	if (!ok) {
		cxs_lp_fail(lp, 2, "node %u: cannot create the host (out of memory)", cxs_lp_id(lp));
		return -1;
	}
	cxs_nport_on_class(&h->port, CXS_CLASS_MEM, on_message, h);
	cxs_nport_on_class(&h->port, CXS_CLASS_IO, on_message, h);
	cxs_nport_on_class(&h->port, CXS_CLASS_DMA, on_message, h);
	h->c_e2e = counter(h, "e2e_ps", "ps", "end-to-end time: first launch to the end of the last round's epilogue");
	h->c_busy = counter(h, "host_busy_ps", "ps", "time at least one host task or epilogue ran");
	h->c_idle = counter(h, "host_idle_ps", "ps", "e2e_ps - host_busy_ps (application-level host idle, Fig. 12)");
	h->c_stall = counter(h, "stall_ps", "ps", "stall of the runtime's core on offload interactions: polls, mailbox and load round trips, BS waits, metadata fetches; plus interrupt handling (Fig. 13)");
	h->c_dm = counter(h, "load_ps", "ps", "RP/BS: time the host's result loads took, first request to last line");
	h->c_polls = counter(h, "local_polls", "polls", "AXLE reads of the local metadata tail");
	h->c_rpolls = counter(h, "remote_polls", "polls", "RP CXL.io reads of the remote mailbox");
	h->c_notif = counter(h, "notifications", "interrupts", "AXLE-interrupt notifications handled");
	h->c_fc = counter(h, "flow_control", "messages", "CXL.mem head updates sent to the CCM");
	h->c_tasks = counter(h, "host_tasks", "tasks", "host tasks run");
	h->c_instr = counter(h, "host_instructions", "instructions", "host task and epilogue instructions (cost model)");
	h->c_rounds = counter(h, "rounds", "launches", "offload rounds launched");
	h->c_ok = counter(h, "result_ok", "bool", "1 when the result equals the host-only computation");
	h->c_digest = counter(h, "result_digest", "FNV-1a", "digest of the final result");
	h->c_wb = counter(h, "writebacks", "messages", "CXL.mem write-backs of updated inputs");
	h->c_max_in_use = counter(h, "max_payload_slots_in_use", "slots", "most payload slots published and not consumed");
	h->c_consumed = counter(h, "payloads_consumed", "slots", "payload slots consumed by host tasks");
	h->c_payload_wait = counter(h, "payload_wait_ps", "ps", "AXLE: host-task time waiting for payload reads from the uncached local ring, summed over µthreads");
	if (!h->c_e2e || !h->c_busy || !h->c_idle || !h->c_stall || !h->c_dm || !h->c_polls ||
	    !h->c_rpolls || !h->c_notif || !h->c_fc || !h->c_tasks || !h->c_instr || !h->c_rounds ||
	    !h->c_ok || !h->c_digest || !h->c_wb || !h->c_max_in_use || !h->c_consumed ||
	    !h->c_payload_wait) {
		cxs_lp_fail(lp, 2, "node %u: cannot register the host counters", cxs_lp_id(lp));
		return -1;
	}
	launch(h);
	if (cxs_end_time(lp) > 1)
		cxs_schedule(lp, cxs_end_time(lp) - 1, EV_END_CHECK, NULL, 0);
	return 0;
}

static void host_event(struct cxs_lp *lp, void *state, const struct cxs_event *ev)
{
	struct host *h = state;
	const struct axle_msg *m = (const void *)ev->data;
	if (ev->type <= EV_MSG_LAST) {
		cxs_nport_arrive(&h->port, ev);
		return;
	}
	switch (ev->type) {
	case EV_DELIVER:
		cxs_nport_deliver(&h->port, ev);
		return;
	case EV_WB_SEND:
		/* Sent after the task's last store (same time, scheduled first): before its done. */
		++*h->c_wb;
		send(h, m);
		return;
	case EV_HOST_DONE:
		task_done(h, m);
		return;
	case EV_EPILOGUE_DONE:
		busy_change(h, -1);
		if (m->a) {
			h->iter++;
			launch(h);
			return;
		}
		h->active = false;
		h->finished = true;
		{
			cxs_time now = cxs_now(lp);
			char err[256];
			*h->c_e2e = now;
			*h->c_idle = now - *h->c_busy;
			*h->c_digest = axle_wl_digest(h->wl, h->ws);
			if (axle_wl_check(h->wl, h->ws, err, sizeof err) != 0) {
				cxs_lp_fail(lp, 5, "AXLE %s: %s", axle_wl_name(h->wl), err);
				return;
			}
			*h->c_ok = 1;
		}
		return;
	case EV_POLL:
		if (h->P->mech == AXLE_RP) {
			struct axle_msg r = {.ev = EV_POLL_REQ, .a = h->iter};
			++*h->c_rpolls;
			h->stall_from = h->poll_sent = cxs_now(lp);
			send(h, &r);
			return;
		}
		poll(h);
		return;
	case EV_POLL_DONE: {
		cxs_time next = m->c + h->P->poll_interval > ev->time ? m->c + h->P->poll_interval : ev->time;
		to_pool(h, m->a, m->b);
		if (h->active)
			cxs_schedule(lp, next - ev->time, EV_POLL, NULL, 0);
		else
			h->polling = false;
		return;
	}
	case EV_IRQ_DONE: {
		uint64_t a = h->meta_fetched, b = m->a;
		if (b > h->meta_fetched) {
			h->meta_fetched = b;
			to_pool(h, a, b);
		}
		return;
	}
	case EV_END_CHECK:
		if (!h->finished)
			cxs_lp_fail(lp, 8, "AXLE: round %u of %s not finished at engine.end_time "
				    "(%u of %u host tasks done); raise engine.end_time", h->iter,
				    axle_wl_name(h->wl), h->tasks_done, h->ntasks);
		return;
	default:
		cxs_bug(lp, "host got event type %u", ev->type);
	}
}

static void host_finalize(struct cxs_lp *lp, void *state)
{
	struct host *h = state;
	(void)lp;
	axle_wl_host_free(h->ws);
	free(h->thread_busy); free(h->pu_free); free(h->local);
	free(h->have); free(h->need); free(h->task_state); free(h->slot_pidx); free(h->readybits);
	free(h->pay_data); free(h->pay_slot); free(h->meta_rec);
	if (h->pay.slot_index)
		cxs_axle_rx_free(&h->pay);
	if (h->meta.slot_index)
		cxs_axle_rx_free(&h->meta);
	cxs_dram_destroy(&h->dram);
}

const struct cxs_node_type axle_host_type = {
	.name = "host",
	.state_size = sizeof(struct host),
	.init = host_init,
	.event = host_event,
	.failure = axle_failure,
	.finalize = host_finalize,
};
