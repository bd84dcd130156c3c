/*
 * Unit tests of the out-of-order core (src/core/core.c, core.h).
 *
 * The core meets the world only through struct cxs_core_env, so each test
 * runs it in a small deterministic rig kept in this file:
 *
 *   - a fake memory hierarchy. Where a line is comes from its address bits
 *     (IN_L1: an L1 hit; IN_L1_RO: readable in L1 but not writable, a write
 *     goes to L2; IN_CXL: CXL memory, remote; otherwise local DRAM; a line
 *     the test made the core lose is in local DRAM from then on), and so
 *     does the latency (L1 5 cycles, L2 15 cycles, memory 100 ns, plus 1 us
 *     for a store that carries CXS_REQ_WT). A word's value is its address
 *     times 3 until something writes it; loads read and stores write the
 *     memory when they complete.
 *   - an event list: a small array ordered by (time, sequence), holding the
 *     core's wakes and the completions of its requests; the loop pops the
 *     earliest and calls cxs_core_step or cxs_core_complete.
 *   - a log of every request (op, address, size, value, flags, issue time,
 *     completion time) and of the hook calls, which the tests inspect.
 *   - a fake DIKTAMO sender behind env.replicate: it logs each call (time,
 *     stores, atomic flag), names it with an id of its own (not its index,
 *     so a mix-up shows), and delivers cxs_core_replicated (every REPL_ACK
 *     in) repl_ps later as an event like a completion — or, with repl_ps
 *     REPL_BY_HAND, only when the test schedules it (rig_ack).
 *
 * Programs are cxs_kernel run functions written here; they take their
 * addresses from, and leave what they saw in, the file-scope `io` (Check
 * forks each test, and every rig resets it).
 *
 * Times: the core runs at 2 GHz (500 ps cycles) so that cycle counts are
 * exact; the ROI starts at 0 unless a test says otherwise.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxlsim/cache.h"
#include "cxlsim/core.h"
#include "unit_suites.h"

#define CYCLE_PS UINT64_C(500)
#define L1_PS (5 * CYCLE_PS)
#define L2_PS (15 * CYCLE_PS)
#define L3_PS (40 * CYCLE_PS)
#define MEM_PS (100 * CXS_PS_PER_NS) /* 200 cycles */
#define WT_PS (1000 * CXS_PS_PER_NS) /* extra for a write-through store */
#define MEM_CYC (MEM_PS / CYCLE_PS)

#define IN_L1 (UINT64_C(1) << 24)    /* L1 hit, readable and writable */
#define IN_L1_RO (UINT64_C(1) << 25) /* L1 hit for reads; a write needs L2 */
#define IN_CXL (UINT64_C(1) << 26)   /* CXL memory (remote) */
#define IN_L3 (UINT64_C(1) << 27)    /* an L3 hit: beyond L2, not memory */
#define SHARED_BASE (UINT64_C(1) << 32)
/* Line i of the rig's memory; one per 4 KiB page, so no prefetch stream forms. */
#define LINE(i) (SHARED_BASE + (uint64_t)(i) * 4096)

#define MAX_EV 512
#define MAX_LOG 1024
#define MAX_MEM 256
#define MAX_HOOK 64
#define MAX_REPL 160
#define MAX_STEPS 100000 /* events: a runaway core is a failure, not a hang */

/* ---- the rig ------------------------------------------------------------------- */

struct req_log {
	struct cxs_mem_req r;
	cxs_time t, done; /* issue time; completion time (CXS_TIME_INF while in flight) */
	uint64_t value;   /* what the completion returned */
};

struct ev {
	cxs_time t;
	uint64_t seq;
	int32_t req;  /* index into the log; -1: a wake or an ack */
	int32_t repl; /* index into the replication log: its REPL_ACKs are in; -1: not an ack */
};

/* One env.replicate call (at most 64 stores: the store buffer's group bound). */
struct repl_log {
	cxs_time t;     /* the REPL left */
	cxs_time acked; /* cxs_core_replicated was delivered (CXS_TIME_INF: not yet) */
	uint32_t id, n;
	bool atomic, at_head; /* flags CXS_REPL_ATOMIC, CXS_REPL_AT_HEAD */
	struct cxs_sb_store s[64];
};

struct hook_call {
	cxs_time t;
	uint32_t n;
	struct cxs_sb_store s[16];
};

struct rig {
	struct cxs_core *core;
	struct cxs_kt *kt;
	struct cxs_stats *st;
	struct cxs_kernel kernel;
	struct cxs_kimage img;
	cxs_time now;
	struct ev ev[MAX_EV];
	uint32_t nev;
	uint64_t seq;
	struct req_log log[MAX_LOG];
	uint32_t nlog;
	struct {
		uint64_t word, value;
	} mem[MAX_MEM];
	uint32_t nmem;
	uint32_t nevents;
	int rc;
	char err[512];
	uint32_t past; /* requests or wakes for a time before now (the env forbids them) */
	uint64_t lost[8]; /* lines the core lost: served by memory from then on */
	uint32_t nlost;

	struct repl_log repl[MAX_REPL];
	uint32_t nrepl;
	struct {
		cxs_time t;
		uint32_t id;
	} at_head[MAX_REPL]; /* env.repl_at_head calls: a group sent early reached the head unacked */
	uint32_t nat_head;
	cxs_time repl_ps; /* REPL to last REPL_ACK; REPL_BY_HAND: the test delivers them */

	bool hold_head; /* sb_head answers false while set */
	uint32_t nenter, nhead, ncommit;
	struct hook_call enter[MAX_HOOK], head[MAX_HOOK], commit[MAX_HOOK];
};

/* What the programs read and what they saw. */
static struct {
	uint64_t a[64];
	uint32_t n;
	int variant;
	uint64_t got[64];
	uint32_t ngot;
} io;

static void io_reset(void)
{
	memset(&io, 0, sizeof io);
}

static uint64_t mem_word(const struct rig *r, uint64_t word)
{
	for (uint32_t i = 0; i < r->nmem; i++)
		if (r->mem[i].word == word)
			return r->mem[i].value;
	return word * 3;
}

static uint64_t mem_read(const struct rig *r, uint64_t addr, uint8_t size)
{
	uint64_t v = mem_word(r, addr & ~UINT64_C(7)) >> (8 * (addr & 7));
	return size < 8 ? v & ((UINT64_C(1) << (8 * size)) - 1) : v;
}

static void mem_write(struct rig *r, uint64_t addr, uint8_t size, uint64_t value)
{
	uint64_t word = addr & ~UINT64_C(7);
	unsigned sh = 8 * (unsigned)(addr & 7);
	uint64_t mask = (size < 8 ? (UINT64_C(1) << (8 * size)) - 1 : UINT64_MAX) << sh;
	uint64_t v = (mem_word(r, word) & ~mask) | ((value << sh) & mask);
	for (uint32_t i = 0; i < r->nmem; i++)
		if (r->mem[i].word == word) {
			r->mem[i].value = v;
			return;
		}
	ck_assert_uint_lt(r->nmem, MAX_MEM);
	r->mem[r->nmem].word = word;
	r->mem[r->nmem++].value = v;
}

static int where_of(const struct rig *r, uint64_t addr, bool write)
{
	for (uint32_t i = 0; i < r->nlost; i++)
		if (r->lost[i] == addr >> CXS_LINE_SHIFT)
			return CXS_LVL_LOCAL; /* invalidated: the next access misses */
	if (addr & IN_L1)
		return CXS_LVL_L1;
	if (addr & IN_L1_RO)
		return write ? CXS_LVL_L2 : CXS_LVL_L1;
	if (addr & IN_L3)
		return CXS_LVL_L3;
	return addr & IN_CXL ? CXS_LVL_CXL : CXS_LVL_LOCAL;
}

static cxs_time latency(const struct rig *r, const struct cxs_mem_req *q)
{
	bool write = q->op != CXS_OP_LOAD && q->op != CXS_OP_PREFETCH_S;
	int lvl = where_of(r, q->addr, write);
	cxs_time t = lvl == CXS_LVL_L1 ? L1_PS : lvl == CXS_LVL_L2 ? L2_PS : lvl == CXS_LVL_L3 ? L3_PS : MEM_PS;
	return q->flags & CXS_REQ_WT ? t + WT_PS : t;
}

static void push_ev(struct rig *r, cxs_time t, int32_t req)
{
	if (t < r->now)
		r->past++;
	ck_assert_uint_lt(r->nev, MAX_EV);
	r->ev[r->nev++] = (struct ev){.t = t, .seq = r->seq++, .req = req, .repl = -1};
}

/* The REPL_ACKs of replication k (index into r->repl) are all in at time t. */
static void rig_ack(struct rig *r, uint32_t k, cxs_time t)
{
	ck_assert_uint_lt(k, r->nrepl);
	push_ev(r, t, -1);
	r->ev[r->nev - 1].repl = (int32_t)k;
}

static int env_request(void *ctx, cxs_time t, const struct cxs_mem_req *q, char *err, size_t len)
{
	struct rig *r = ctx;
	(void)err;
	(void)len;
	ck_assert_uint_lt(r->nlog, MAX_LOG);
	ck_assert_uint_eq(q->issued, t);
	ck_assert_uint_eq(q->core, 0);
	r->log[r->nlog] = (struct req_log){.r = *q, .t = t, .done = CXS_TIME_INF};
	push_ev(r, t + latency(r, q), (int32_t)r->nlog);
	r->nlog++;
	return 0;
}

static int env_where(void *ctx, uint32_t core, uint64_t addr, bool write)
{
	(void)core;
	return where_of(ctx, addr, write);
}

static bool env_remote(void *ctx, uint64_t addr)
{
	(void)ctx;
	return (addr & IN_CXL) != 0;
}

static void env_wake(void *ctx, uint32_t core, cxs_time t)
{
	(void)core;
	push_ev(ctx, t, -1);
}

#define REPL_PS (250 * CXS_PS_PER_NS) /* the rig's REPL -> last REPL_ACK */
#define REPL_BY_HAND CXS_TIME_INF
#define REPL_ID(k) (0x100 + 3 * (k)) /* the id of the k-th replication */

/* A REPL carries stores of one CXL line (never a local store), at most 64. */
static int env_replicate(void *ctx, uint32_t core, cxs_time t, const struct cxs_sb_store *s,
			 uint32_t n, unsigned flags, uint32_t *id, char *err, size_t len)
{
	struct rig *r = ctx;
	bool atomic = flags & CXS_REPL_ATOMIC;
	(void)err;
	(void)len;
	ck_assert_uint_eq(core, 0);
	ck_assert_uint_eq(t, r->now);
	ck_assert_uint_ge(n, 1);
	ck_assert_uint_le(n, 64);
	ck_assert_uint_lt(r->nrepl, MAX_REPL);
	struct repl_log *l = &r->repl[r->nrepl];
	*l = (struct repl_log){.t = t, .acked = CXS_TIME_INF, .id = REPL_ID(r->nrepl), .n = n,
			       .atomic = atomic, .at_head = flags & CXS_REPL_AT_HEAD};
	for (uint32_t i = 0; i < n; i++) {
		ck_assert_msg(s[i].remote && env_remote(r, s[i].addr), "a REPL of a local store");
		ck_assert_uint_eq(s[i].addr >> CXS_LINE_SHIFT, s[0].addr >> CXS_LINE_SHIFT);
		l->s[i] = s[i];
	}
	*id = l->id;
	r->nrepl++;
	if (r->repl_ps != REPL_BY_HAND)
		rig_ack(r, r->nrepl - 1, t + r->repl_ps);
	return 0;
}

static void env_repl_at_head(void *ctx, uint32_t core, cxs_time t, uint32_t id)
{
	struct rig *r = ctx;
	ck_assert_uint_eq(core, 0);
	ck_assert_uint_lt(r->nat_head, MAX_REPL);
	r->at_head[r->nat_head].t = t;
	r->at_head[r->nat_head++].id = id;
}

static void record(struct hook_call *h, uint32_t *count, cxs_time t, const struct cxs_sb_store *s,
		   uint32_t n)
{
	ck_assert_uint_lt(*count, MAX_HOOK);
	struct hook_call *c = &h[(*count)++];
	c->t = t;
	c->n = n;
	for (uint32_t i = 0; i < n && i < 16; i++)
		c->s[i] = s[i];
}

static void env_sb_enter(void *ctx, uint32_t core, cxs_time t, const struct cxs_sb_store *s)
{
	struct rig *r = ctx;
	(void)core;
	record(r->enter, &r->nenter, t, s, 1);
}

static bool env_sb_head(void *ctx, uint32_t core, cxs_time t, const struct cxs_sb_store *s,
			uint32_t n)
{
	struct rig *r = ctx;
	(void)core;
	record(r->head, &r->nhead, t, s, n);
	return !r->hold_head;
}

static void env_commit(void *ctx, uint32_t core, cxs_time t, const struct cxs_sb_store *s,
		       uint32_t n)
{
	struct rig *r = ctx;
	(void)core;
	record(r->commit, &r->ncommit, t, s, n);
}

/* The parameters most tests use: default sizes, no prefetchers, 500 ps cycles. */
static struct cxs_core_params test_params(void)
{
	struct cxs_core_params p;
	cxs_core_default_params(&p);
	p.l1_prefetch = p.l2_prefetch = false;
	p.cycle_ps = CYCLE_PS;
	return p;
}

static struct rig *rig_new(const struct cxs_core_params *p, cxs_kt_main_fn *run, bool hooks)
{
	struct rig *r = calloc(1, sizeof *r);
	ck_assert_ptr_nonnull(r);
	char err[256] = "";
	r->kernel = (struct cxs_kernel){.name = "core-test", .run = run};
	r->img = (struct cxs_kimage){.size = 1, .seed = 1, .nthreads = 1};
	struct cxs_kt_params kp = {.kernel = &r->kernel, .img = &r->img, .id = 0,
				   .shared_base = SHARED_BASE, .private_base = UINT64_C(1) << 40};
	r->kt = cxs_kt_new(&kp, err, sizeof err);
	ck_assert_msg(r->kt != NULL, "%s", err);
	r->st = cxs_stats_new();
	ck_assert_ptr_nonnull(r->st);
	struct cxs_core_env env = {.ctx = r, .request = env_request, .where = env_where,
				   .remote = env_remote, .wake = env_wake, .replicate = env_replicate,
				   .repl_at_head = env_repl_at_head};
	r->repl_ps = REPL_PS;
	if (hooks) {
		env.sb_enter = env_sb_enter;
		env.sb_head = env_sb_head;
		env.commit = env_commit;
	}
	r->core = cxs_core_new(0, 0, p, &env, r->kt, r->st, err, sizeof err);
	ck_assert_msg(r->core != NULL, "%s", err);
	push_ev(r, 0, -1); /* the first step */
	return r;
}

static void rig_free(struct rig *r)
{
	cxs_core_free(r->core);
	cxs_kt_free(r->kt);
	cxs_stats_free(r->st);
	free(r);
}

/* Handles events up to and including time `limit`; then now = limit. Stops at an error. */
static void run_until(struct rig *r, cxs_time limit)
{
	while (r->rc == 0 && r->nev > 0) {
		uint32_t m = 0;
		for (uint32_t i = 1; i < r->nev; i++)
			if (r->ev[i].t < r->ev[m].t ||
			    (r->ev[i].t == r->ev[m].t && r->ev[i].seq < r->ev[m].seq))
				m = i;
		if (r->ev[m].t > limit)
			break;
		struct ev e = r->ev[m];
		r->ev[m] = r->ev[--r->nev];
		r->now = e.t;
		if (++r->nevents > MAX_STEPS) {
			r->rc = -2;
			snprintf(r->err, sizeof r->err, "rig: more than %d events", MAX_STEPS);
			break;
		}
		if (e.repl >= 0) {
			struct repl_log *l = &r->repl[e.repl];
			l->acked = e.t;
			r->rc = cxs_core_replicated(r->core, e.t, l->id, r->err, sizeof r->err);
			continue;
		}
		if (e.req < 0) {
			r->rc = cxs_core_step(r->core, e.t, r->err, sizeof r->err);
			continue;
		}
		struct req_log *l = &r->log[e.req];
		const struct cxs_mem_req *q = &l->r;
		uint64_t v = 0;
		switch (q->op) {
		case CXS_OP_LOAD:
			v = mem_read(r, q->addr, q->size);
			break;
		case CXS_OP_STORE:
			mem_write(r, q->addr, q->size, q->value);
			break;
		case CXS_OP_SWAP:
			v = mem_read(r, q->addr, q->size);
			mem_write(r, q->addr, q->size, q->value);
			break;
		case CXS_OP_FETCH_ADD:
			v = mem_read(r, q->addr, q->size);
			mem_write(r, q->addr, q->size, v + q->value);
			break;
		case CXS_OP_CAS:
			v = mem_read(r, q->addr, q->size);
			if (v == q->value >> 32)
				mem_write(r, q->addr, q->size, q->value & UINT32_MAX);
			break;
		default: /* prefetches carry no value */
			break;
		}
		l->done = e.t;
		l->value = v;
		r->rc = cxs_core_complete(r->core, e.t, q, v, r->err, sizeof r->err);
	}
	if (limit != CXS_TIME_INF && r->now < limit)
		r->now = limit;
}

static void run(struct rig *r)
{
	run_until(r, CXS_TIME_INF);
}

/* A run that must end cleanly: no error, program done, buffers empty, nothing in flight. */
static void run_ok(struct rig *r)
{
	run(r);
	ck_assert_msg(r->rc == 0, "core stopped: %s", r->err);
	char d[256];
	cxs_core_describe(r->core, d, sizeof d);
	ck_assert_msg(cxs_core_done(r->core), "core not done at the end: %s", d);
	ck_assert(!cxs_core_failed(r->core));
	ck_assert_uint_eq(r->past, 0);
	for (uint32_t i = 0; i < r->nlog; i++)
		ck_assert_uint_ne(r->log[i].done, CXS_TIME_INF);
}

static uint64_t counter(struct rig *r, const char *name)
{
	cxs_core_finish_counters(r->core);
	const uint64_t *v = cxs_stats_find(r->st, "core0", name);
	ck_assert_msg(v != NULL, "no counter core0/%s", name);
	return *v;
}

/* Index of the nth (0-based) request with op at addr, or -1. */
static int find_req(const struct rig *r, uint8_t op, uint64_t addr, int nth)
{
	for (uint32_t i = 0; i < r->nlog; i++)
		if (r->log[i].r.op == op && r->log[i].r.addr == addr && nth-- == 0)
			return (int)i;
	return -1;
}

static const struct req_log *req(const struct rig *r, uint8_t op, uint64_t addr, int nth)
{
	int i = find_req(r, op, addr, nth);
	ck_assert_msg(i >= 0, "no request #%d of op %u at %#" PRIx64, nth, op, addr);
	return &r->log[i];
}

static uint32_t count_op(const struct rig *r, uint8_t op)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < r->nlog; i++)
		n += r->log[i].r.op == op;
	return n;
}

/* The most requests of op to memory (not L1) ever in flight at once, from the log. */
static uint32_t max_in_flight(const struct rig *r, uint8_t op)
{
	uint32_t best = 0;
	for (uint32_t i = 0; i < r->nlog; i++) {
		if (r->log[i].r.op != op)
			continue;
		cxs_time t = r->log[i].t;
		uint32_t n = 0;
		for (uint32_t j = 0; j < r->nlog; j++) {
			const struct req_log *l = &r->log[j];
			n += l->r.op == op && where_of(r, l->r.addr, false) >= CXS_LVL_LOCAL && l->t <= t &&
			     t < l->done;
		}
		best = n > best ? n : best;
	}
	return best;
}

/* Another cache took the line of addr: the core is told, and later accesses miss. */
static void lose_line(struct rig *r, uint64_t addr)
{
	ck_assert_uint_lt(r->nlost, 8);
	r->lost[r->nlost++] = addr >> CXS_LINE_SHIFT;
	cxs_core_invalidated(r->core, r->now, addr >> CXS_LINE_SHIFT);
}

/* ---- programs --------------------------------------------------------------------- */

/* Pointer chase: each address is the value loaded before. */
static void prog_chase(struct cxs_kt *kt)
{
	cxs_kt_roi_begin(kt);
	uint64_t p = io.a[0];
	for (uint32_t i = 0; i < io.n; i++)
		io.got[io.ngot++] = p = cxs_kt_load(kt, p, 8);
	cxs_kt_roi_end(kt);
}

/* io.n independent 8-byte loads of io.a[], all issued before the first get. */
static void prog_independent(struct cxs_kt *kt)
{
	uint32_t h[64];
	cxs_kt_roi_begin(kt);
	for (uint32_t i = 0; i < io.n; i++)
		h[i] = cxs_kt_ld(kt, io.a[i], 8);
	for (uint32_t i = 0; i < io.n; i++)
		io.got[io.ngot++] = cxs_kt_get(kt, h[i]);
	cxs_kt_roi_end(kt);
}

/* ---- 1. memory-level parallelism ------------------------------------------------------ */

START_TEST(test_pointer_chase_keeps_one_miss_outstanding)
{
	io_reset();
	struct cxs_core_params p = test_params();
	struct rig *r = rig_new(&p, prog_chase, false);
	enum { N = 8 };
	for (uint32_t i = 0; i < N; i++)
		mem_write(r, LINE(i), 8, LINE(i + 1));
	io.a[0] = LINE(0);
	io.n = N;
	run_ok(r);

	ck_assert_uint_eq(io.ngot, N);
	ck_assert_uint_eq(io.got[N - 1], LINE(N)); /* followed the chain to its end */
	ck_assert_uint_eq(count_op(r, CXS_OP_LOAD), N);
	for (uint32_t i = 1; i < N; i++) {
		const struct req_log *prev = req(r, CXS_OP_LOAD, LINE(i - 1), 0);
		ck_assert_uint_ge(req(r, CXS_OP_LOAD, LINE(i), 0)->t, prev->done);
	}
	ck_assert_uint_eq(max_in_flight(r, CXS_OP_LOAD), 1);
	ck_assert_uint_eq(counter(r, "demand_reads"), N);
	ck_assert_uint_eq(counter(r, "cycles_with_demand_read"), N * MEM_CYC);
	ck_assert_uint_eq(counter(r, "demand_reads_outstanding"),
			  counter(r, "cycles_with_demand_read")); /* MLP == 1 */
	rig_free(r);
}
END_TEST

/* 20 independent misses with an LFB of 4, then of 12. */
static void independent_misses(uint32_t lfb)
{
	io_reset();
	struct cxs_core_params p = test_params();
	p.lfb = lfb;
	struct rig *r = rig_new(&p, prog_independent, false);
	enum { N = 20 };
	for (uint32_t i = 0; i < N; i++)
		io.a[i] = LINE(i);
	io.n = N;
	run_ok(r);

	ck_assert_uint_eq(io.ngot, N);
	for (uint32_t i = 0; i < N; i++)
		ck_assert_uint_eq(io.got[i], LINE(i) * 3);
	ck_assert_uint_eq(count_op(r, CXS_OP_LOAD), N);
	ck_assert_uint_eq(max_in_flight(r, CXS_OP_LOAD), lfb);
	/* the first lfb go at once; load lfb+1 takes the first entry freed */
	for (uint32_t i = 0; i < lfb; i++)
		ck_assert_uint_eq(req(r, CXS_OP_LOAD, LINE(i), 0)->t, 0);
	ck_assert_uint_eq(req(r, CXS_OP_LOAD, LINE(lfb), 0)->t, MEM_PS);
	ck_assert_uint_eq(counter(r, "l1d_misses"), N);
	ck_assert_uint_eq(counter(r, "lfb_hits"), 0);
	/* waves of lfb loads, 200 cycles each: MLP as the counters see it */
	uint64_t waves = (N + lfb - 1) / lfb;
	ck_assert_uint_eq(counter(r, "demand_reads_outstanding"), N * MEM_CYC);
	ck_assert_uint_eq(counter(r, "cycles_with_demand_read"), waves * MEM_CYC);
	rig_free(r);
}

/*
 * CAMP's P11..P13 as Intel counts them (OFFCORE_REQUESTS[_OUTSTANDING].DEMAND_DATA_RD,
 * CYCLES_WITH_DEMAND_DATA_RD): every demand read that missed L2, L3 hits included; the
 * demand_reads* counters keep the L3 misses alone (the L3_MISS_DEMAND_DATA_RD variants).
 * Four L3 hits (40 cycles) and four misses to memory (200), all sent at once.
 */
START_TEST(test_offcore_demand_read_counters_include_l3_hits)
{
	io_reset();
	struct cxs_core_params p = test_params();
	struct rig *r = rig_new(&p, prog_independent, false);
	enum { N = 8, L3_CYC = L3_PS / CYCLE_PS };
	for (uint32_t i = 0; i < N; i++)
		io.a[i] = LINE(i) | (i % 2 ? IN_L3 : 0);
	io.n = N;
	run_ok(r);

	ck_assert_uint_eq(io.ngot, N);
	ck_assert_uint_eq(counter(r, "l2_misses"), N);   /* P12 */
	ck_assert_uint_eq(counter(r, "demand_reads"), N / 2);
	ck_assert_uint_eq(counter(r, "offcore_demand_reads_outstanding"),
			  N / 2 * (MEM_CYC + L3_CYC)); /* P11: the hits' 40 cycles too */
	ck_assert_uint_eq(counter(r, "demand_reads_outstanding"), N / 2 * MEM_CYC);
	ck_assert_uint_eq(counter(r, "cycles_with_offcore_demand_read"), MEM_CYC); /* P13 */
	ck_assert_uint_eq(counter(r, "cycles_with_demand_read"), MEM_CYC);
	/* the mean latency P11 / P12 is diluted by the hits: (200 + 40) / 2 cycles */
	ck_assert_uint_eq(counter(r, "offcore_demand_reads_outstanding") / counter(r, "l2_misses"),
			  (MEM_CYC + L3_CYC) / 2);
	rig_free(r);
}
END_TEST

START_TEST(test_independent_misses_fill_the_lfb_of_4_and_no_more)
{
	independent_misses(4);
}
END_TEST

START_TEST(test_independent_misses_fill_the_lfb_of_12_and_no_more)
{
	independent_misses(12);
}
END_TEST

/*
 * Dataflow in the core: a chain of io.n loads, each naming the one before as
 * its address's producer (as a replayed pointer chase does), interleaved with
 * io.n independent loads; the program never waits (io.variant 1: no
 * dependencies named, the control).
 */
static void prog_dep_chain(struct cxs_kt *kt)
{
	uint32_t h = CXS_KT_NO_DEP, hi[32];
	cxs_kt_roi_begin(kt);
	for (uint32_t i = 0; i < io.n; i++) {
		h = cxs_kt_ld_dep(kt, LINE(i), 8, io.variant ? CXS_KT_NO_DEP : h);
		hi[i] = cxs_kt_ld(kt, LINE(32 + i), 8);
	}
	io.got[io.ngot++] = cxs_kt_get(kt, h);
	for (uint32_t i = 0; i < io.n; i++)
		(void)cxs_kt_get(kt, hi[i]);
	cxs_kt_roi_end(kt);
}

static void dep_chain(int variant)
{
	io_reset();
	struct cxs_core_params p = test_params();
	p.lfb = 32;
	struct rig *r = rig_new(&p, prog_dep_chain, false);
	enum { N = 8 };
	io.n = N;
	io.variant = variant;
	run_ok(r);

	ck_assert_uint_eq(count_op(r, CXS_OP_LOAD), 2 * N);
	for (uint32_t i = 0; i < N; i++) /* independent loads: all at once, not behind the chain */
		ck_assert_uint_eq(req(r, CXS_OP_LOAD, LINE(32 + i), 0)->t, 0);
	for (uint32_t i = 1; i < N; i++) {
		const struct req_log *prev = req(r, CXS_OP_LOAD, LINE(i - 1), 0);
		if (variant == 0)
			ck_assert_uint_ge(req(r, CXS_OP_LOAD, LINE(i), 0)->t, prev->done);
		else
			ck_assert_uint_eq(req(r, CXS_OP_LOAD, LINE(i), 0)->t, 0);
	}
	ck_assert_uint_eq(counter(r, "dep_waits"), variant == 0 ? N - 1 : 0);
	/* the chain takes N memory latencies with, and one without, dependencies */
	ck_assert_uint_eq(cxs_core_roi_end(r->core) >= N * MEM_PS, variant == 0);
	rig_free(r);
}

START_TEST(test_load_waits_for_its_address_producer_while_later_loads_go)
{
	dep_chain(0);
}
END_TEST

START_TEST(test_loads_without_named_producers_all_overlap)
{
	dep_chain(1);
}
END_TEST

/* A store whose value is a load's value plus 5, and one whose address waits for a load. */
static void prog_dep_store(struct cxs_kt *kt)
{
	cxs_kt_roi_begin(kt);
	uint32_t h = cxs_kt_ld(kt, LINE(0), 8);
	cxs_kt_store_dep(kt, LINE(1) | IN_L1_RO, 8, 5, CXS_KT_NO_DEP, h);
	cxs_kt_store_dep(kt, LINE(2) | IN_L1_RO, 4, 7, h, CXS_KT_NO_DEP);
	cxs_kt_roi_end(kt);
}

START_TEST(test_store_value_and_address_from_a_producer)
{
	io_reset();
	struct cxs_core_params p = test_params();
	struct rig *r = rig_new(&p, prog_dep_store, false);
	run_ok(r);
	ck_assert_uint_eq(mem_read(r, LINE(1) | IN_L1_RO, 8), LINE(0) * 3 + 5);
	ck_assert_uint_eq(mem_read(r, LINE(2) | IN_L1_RO, 4), 7);
	const struct req_log *ld = req(r, CXS_OP_LOAD, LINE(0), 0);
	/* the value-dependent store's address was known: its prefetch went at once */
	ck_assert_uint_eq(req(r, CXS_OP_PREFETCH_M, LINE(1) | IN_L1_RO, 0)->t, 0);
	/* the address-dependent one's only once the load completed */
	ck_assert_uint_ge(req(r, CXS_OP_PREFETCH_M, LINE(2) | IN_L1_RO, 0)->t, ld->done);
	ck_assert_uint_eq(counter(r, "dep_waits"), 2);
	rig_free(r);
}
END_TEST

START_TEST(test_load_to_a_line_being_filled_is_an_lfb_hit)
{
	io_reset();
	struct cxs_core_params p = test_params();
	p.lfb = 4;
	struct rig *r = rig_new(&p, prog_independent, false);
	/* four misses fill the LFB; then another word of line 0, then line 4 */
	uint64_t a[] = {LINE(0), LINE(1), LINE(2), LINE(3), LINE(0) + 8, LINE(4)};
	memcpy(io.a, a, sizeof a);
	io.n = 6;
	run_ok(r);

	ck_assert_uint_eq(io.got[4], (LINE(0) + 8) * 3);
	ck_assert_uint_eq(counter(r, "lfb_hits"), 1);
	ck_assert_uint_eq(counter(r, "l1d_misses"), 5);
	ck_assert_uint_eq(counter(r, "demand_reads"), 5);
	ck_assert_uint_eq(count_op(r, CXS_OP_LOAD), 6); /* the hit still asks the hierarchy */
	/* it needs no entry, so it does not wait for one; line 4 does */
	ck_assert_uint_eq(req(r, CXS_OP_LOAD, LINE(0) + 8, 0)->t, 0);
	ck_assert_uint_eq(req(r, CXS_OP_LOAD, LINE(4), 0)->t, MEM_PS);
	rig_free(r);
}
END_TEST

/* ---- 3. store-to-load forwarding ------------------------------------------------------ */

#define STORED UINT64_C(0x1122334455667788)

/* Store a[0]; load it back (8 bytes) and its upper half; variant 1 lets the store retire first. */
static void prog_forward(struct cxs_kt *kt)
{
	cxs_kt_roi_begin(kt);
	cxs_kt_store(kt, io.a[0], 8, STORED);
	if (io.variant == 1)
		cxs_kt_compute(kt, 10); /* the store is in the store buffer now */
	uint32_t h8 = cxs_kt_ld(kt, io.a[0], 8);
	uint32_t h4 = cxs_kt_ld(kt, io.a[0] + 4, 4);
	io.got[io.ngot++] = cxs_kt_get(kt, h8);
	io.got[io.ngot++] = cxs_kt_get(kt, h4);
	cxs_kt_roi_end(kt);
}

static void forwarding(int variant)
{
	io_reset();
	struct cxs_core_params p = test_params();
	struct rig *r = rig_new(&p, prog_forward, false);
	io.a[0] = LINE(0);
	io.variant = variant;
	run_ok(r);

	ck_assert_uint_eq(io.got[0], STORED);
	ck_assert_uint_eq(io.got[1], STORED >> 32);
	ck_assert_uint_eq(count_op(r, CXS_OP_LOAD), 0); /* neither load went to memory */
	ck_assert_uint_eq(counter(r, "forwarded"), 2);
	ck_assert_uint_eq(count_op(r, CXS_OP_STORE), 1);
	/* variant 1: the store had left the window (its request went at 0) and was
	   still draining when the loads came at cycle 10 */
	if (variant == 1) {
		ck_assert_uint_eq(req(r, CXS_OP_STORE, LINE(0), 0)->t, 0);
		ck_assert_uint_gt(req(r, CXS_OP_STORE, LINE(0), 0)->done, 10 * CYCLE_PS);
	}
	rig_free(r);
}

START_TEST(test_store_forwards_to_covered_loads_from_the_window)
{
	forwarding(0);
}
END_TEST

START_TEST(test_store_forwards_to_covered_loads_from_the_store_buffer)
{
	forwarding(1);
}
END_TEST

static void prog_partial(struct cxs_kt *kt)
{
	cxs_kt_roi_begin(kt);
	cxs_kt_store(kt, io.a[0], 4, 0xdeadbeef);
	io.got[io.ngot++] = cxs_kt_load(kt, io.a[0], 8);
	cxs_kt_roi_end(kt);
}

START_TEST(test_partly_covered_load_waits_for_the_store_then_reads_memory)
{
	io_reset();
	struct cxs_core_params p = test_params();
	struct rig *r = rig_new(&p, prog_partial, false);
	io.a[0] = LINE(0);
	run_ok(r);

	const struct req_log *st = req(r, CXS_OP_STORE, LINE(0), 0);
	const struct req_log *ld = req(r, CXS_OP_LOAD, LINE(0), 0);
	ck_assert_uint_eq(st->done, MEM_PS);
	ck_assert_uint_ge(ld->t, st->done);
	ck_assert_uint_eq(io.got[0], ((LINE(0) * 3) & ~UINT64_C(0xffffffff)) | 0xdeadbeef);
	ck_assert_uint_eq(counter(r, "forwarded"), 0);
	rig_free(r);
}
END_TEST

/*
 * A 4-byte store to an L1 line, two misses with one fill buffer, then an
 * 8-byte load the store covers only in part: all issued before any get.
 */
static void prog_partial_behind_lfb(struct cxs_kt *kt)
{
	cxs_kt_roi_begin(kt);
	cxs_kt_store(kt, io.a[0], 4, 0xdeadbeef);
	uint32_t h0 = cxs_kt_ld(kt, io.a[1], 8);
	uint32_t h1 = cxs_kt_ld(kt, io.a[2], 8);
	uint32_t hp = cxs_kt_ld(kt, io.a[0], 8);
	io.got[io.ngot++] = cxs_kt_get(kt, h0);
	io.got[io.ngot++] = cxs_kt_get(kt, h1);
	io.got[io.ngot++] = cxs_kt_get(kt, hp);
	cxs_kt_roi_end(kt);
}

/*
 * Regression (issue_waiting used to stop scanning at the first waiting load
 * that found no free fill buffer): a younger waiting load that needs no
 * buffer (here an L1 hit whose partial store has drained) must issue when
 * the store completes (5 cycles), not when a miss completes (100 ns).
 */
START_TEST(test_load_needing_no_fill_buffer_is_not_held_behind_a_miss_waiting_for_one)
{
	io_reset();
	struct cxs_core_params p = test_params();
	p.lfb = 1;
	const uint64_t a[] = {LINE(0) | IN_L1, LINE(1), LINE(2)};
	memcpy(io.a, a, sizeof a);
	struct rig *r = rig_new(&p, prog_partial_behind_lfb, false);
	run_ok(r);
	const struct req_log *st = req(r, CXS_OP_STORE, a[0], 0);
	ck_assert_uint_eq(st->done, L1_PS);
	ck_assert_uint_eq(req(r, CXS_OP_LOAD, a[2], 0)->t, MEM_PS); /* waits for the buffer */
	ck_assert_uint_eq(io.got[2], ((a[0] * 3) & ~UINT64_C(0xffffffff)) | 0xdeadbeef);
	ck_assert_uint_eq(req(r, CXS_OP_LOAD, a[0], 0)->t, st->done);
	rig_free(r);
}
END_TEST

/* ---- 4. TSO store order and coalescing -------------------------------------------------- */

/* Stores io.a[0..n) with values 100 + i. */
static void prog_stores(struct cxs_kt *kt)
{
	cxs_kt_roi_begin(kt);
	for (uint32_t i = 0; i < io.n; i++)
		cxs_kt_store(kt, io.a[i], 8, 100 + i);
	cxs_kt_roi_end(kt);
}

static struct rig *run_stores(const struct cxs_core_params *p, const uint64_t *a, uint32_t n,
			      bool hooks)
{
	io_reset();
	memcpy(io.a, a, n * sizeof *a);
	io.n = n;
	struct rig *r = rig_new(p, prog_stores, hooks);
	run_ok(r);
	for (uint32_t i = 0; i < n; i++)
		ck_assert_uint_eq(mem_read(r, a[i], 8), 100 + i); /* every store reached memory */
	return r;
}

START_TEST(test_store_to_a_second_line_waits_for_the_first)
{
	struct cxs_core_params p = test_params();
	const uint64_t a[] = {LINE(0), LINE(1)};
	struct rig *r = run_stores(&p, a, 2, false);
	const struct req_log *sa = req(r, CXS_OP_STORE, LINE(0), 0);
	const struct req_log *sb = req(r, CXS_OP_STORE, LINE(1), 0);
	ck_assert_uint_eq(sa->t, 0);
	ck_assert_uint_ge(sb->t, sa->done);
	ck_assert_uint_eq(counter(r, "sb_transactions"), 2);
	ck_assert_uint_eq(counter(r, "sb_coalesced"), 0);
	rig_free(r);
}
END_TEST

/* Fault injection must be visible to the same check: sb_parallel breaks the order. */
START_TEST(test_sb_parallel_fault_issues_both_stores_at_once)
{
	struct cxs_core_params p = test_params();
	p.fault = CXS_CORE_FAULT_SB_PARALLEL;
	const uint64_t a[] = {LINE(0), LINE(1)};
	struct rig *r = run_stores(&p, a, 2, false);
	ck_assert_uint_lt(req(r, CXS_OP_STORE, LINE(1), 0)->t, req(r, CXS_OP_STORE, LINE(0), 0)->done);
	rig_free(r);
}
END_TEST

START_TEST(test_consecutive_stores_to_one_line_coalesce_into_one_transaction)
{
	struct cxs_core_params p = test_params();
	uint64_t a[9];
	for (uint32_t i = 0; i < 8; i++)
		a[i] = LINE(0) + 8 * i;
	a[8] = LINE(1);
	struct rig *r = run_stores(&p, a, 9, false);
	ck_assert_uint_eq(count_op(r, CXS_OP_STORE), 9);
	for (uint32_t i = 0; i < 8; i++)
		ck_assert_uint_eq(req(r, CXS_OP_STORE, a[i], 0)->t, 0); /* the group goes together */
	cxs_time group_done = req(r, CXS_OP_STORE, a[7], 0)->done;
	ck_assert_uint_ge(req(r, CXS_OP_STORE, LINE(1), 0)->t, group_done);
	ck_assert_uint_eq(counter(r, "sb_transactions"), 2);
	ck_assert_uint_eq(counter(r, "sb_coalesced"), 7);
	/* one exclusive prefetch per line, not per store */
	ck_assert_uint_eq(count_op(r, CXS_OP_PREFETCH_M), 2);
	ck_assert_uint_eq(counter(r, "store_prefetches"), 2);
	rig_free(r);
}
END_TEST

/* ---- 5. exclusive prefetch ---------------------------------------------------------- */

/* A miss to io.a[0] that holds retirement until the end, then stores of i to io.a[i]. */
static void prog_miss_then_stores(struct cxs_kt *kt)
{
	cxs_kt_roi_begin(kt);
	uint32_t h = cxs_kt_ld(kt, io.a[0], 8);
	for (uint32_t i = 1; i < io.n; i++)
		cxs_kt_store(kt, io.a[i], 8, i);
	io.got[io.ngot++] = cxs_kt_get(kt, h);
	cxs_kt_roi_end(kt);
}

START_TEST(test_store_to_a_line_not_writable_in_l1_prefetches_it_exclusive_at_dispatch)
{
	io_reset();
	struct cxs_core_params p = test_params();
	struct rig *r = rig_new(&p, prog_miss_then_stores, false);
	const uint64_t a[] = {LINE(9), LINE(1) | IN_L1_RO, LINE(2), LINE(3) | IN_L1};
	memcpy(io.a, a, sizeof a);
	io.n = 4;
	run_ok(r);

	cxs_time load_done = req(r, CXS_OP_LOAD, LINE(9), 0)->done;
	for (int i = 1; i <= 2; i++) {
		int pf = find_req(r, CXS_OP_PREFETCH_M, a[i], 0);
		int st = find_req(r, CXS_OP_STORE, a[i], 0);
		ck_assert_int_ge(pf, 0);
		ck_assert_int_gt(st, pf);
		ck_assert_uint_eq(r->log[pf].t, 0);          /* when it entered the window */
		ck_assert_uint_ge(r->log[st].t, load_done); /* the store itself after retirement */
	}
	ck_assert_int_eq(find_req(r, CXS_OP_PREFETCH_M, a[3], 0), -1); /* writable in L1 already */
	ck_assert_uint_eq(count_op(r, CXS_OP_PREFETCH_M), 2);
	ck_assert_uint_eq(counter(r, "store_prefetches"), 2);
	rig_free(r);
}
END_TEST

/* ---- 6. fences and atomics -------------------------------------------------------------- */

/* Store a[0]; a fence unless variant 1; load a[1]. */
static void prog_fence(struct cxs_kt *kt)
{
	cxs_kt_roi_begin(kt);
	cxs_kt_store(kt, io.a[0], 8, 1);
	if (io.variant != 1)
		cxs_kt_fence(kt);
	io.got[io.ngot++] = cxs_kt_load(kt, io.a[1], 8);
	cxs_kt_roi_end(kt);
}

static struct rig *run_fence(int variant, uint8_t fault)
{
	io_reset();
	struct cxs_core_params p = test_params();
	p.fault = fault;
	io.a[0] = LINE(0);
	io.a[1] = LINE(1) | IN_L1;
	io.variant = variant;
	struct rig *r = rig_new(&p, prog_fence, false);
	run_ok(r);
	return r;
}

START_TEST(test_fence_holds_a_later_load_until_the_store_buffer_drains)
{
	struct rig *r = run_fence(0, CXS_CORE_FAULT_NONE);
	ck_assert_uint_ge(req(r, CXS_OP_LOAD, LINE(1) | IN_L1, 0)->t,
			  req(r, CXS_OP_STORE, LINE(0), 0)->done);
	ck_assert_uint_eq(counter(r, "fences"), 1);
	rig_free(r);

	/* without the fence (or with it made a no-op) the load passes the store */
	for (int i = 0; i < 2; i++) {
		r = i == 0 ? run_fence(1, CXS_CORE_FAULT_NONE) : run_fence(0, CXS_CORE_FAULT_FENCE_NOOP);
		ck_assert_uint_lt(req(r, CXS_OP_LOAD, LINE(1) | IN_L1, 0)->t,
				  req(r, CXS_OP_STORE, LINE(0), 0)->done);
		rig_free(r);
	}
}
END_TEST

static void prog_atomic(struct cxs_kt *kt)
{
	cxs_kt_roi_begin(kt);
	cxs_kt_store(kt, io.a[0], 8, 5);
	io.got[io.ngot++] = cxs_kt_swap(kt, io.a[1], 8, 77);
	io.got[io.ngot++] = cxs_kt_load(kt, io.a[2], 8);
	io.got[io.ngot++] = cxs_kt_load(kt, io.a[1], 8);
	cxs_kt_roi_end(kt);
}

START_TEST(test_atomic_waits_for_older_stores_and_younger_loads_wait_for_it)
{
	io_reset();
	struct cxs_core_params p = test_params();
	const uint64_t a[] = {LINE(0), LINE(1), LINE(2) | IN_L1};
	memcpy(io.a, a, sizeof a);
	struct rig *r = rig_new(&p, prog_atomic, false);
	run_ok(r);

	const struct req_log *st = req(r, CXS_OP_STORE, a[0], 0);
	const struct req_log *sw = req(r, CXS_OP_SWAP, a[1], 0);
	ck_assert_uint_ge(sw->t, st->done);
	ck_assert_uint_eq(sw->r.value, 77);
	ck_assert_uint_ge(req(r, CXS_OP_LOAD, a[2], 0)->t, sw->done);
	ck_assert_uint_eq(io.got[0], a[1] * 3); /* the old value */
	ck_assert_uint_eq(io.got[1], a[2] * 3);
	ck_assert_uint_eq(io.got[2], 77);
	ck_assert_uint_eq(counter(r, "atomics"), 1);
	rig_free(r);
}
END_TEST

/* ---- 7. write-through ------------------------------------------------------------------- */

START_TEST(test_write_through_flags_the_last_store_of_a_transaction_and_waits_for_it)
{
	/* three stores to a CXL line, two to another, one to local memory */
	const uint64_t a[] = {LINE(0) | IN_CXL, (LINE(0) | IN_CXL) + 8, (LINE(0) | IN_CXL) + 16,
			      LINE(1) | IN_CXL, (LINE(1) | IN_CXL) + 8, LINE(2)};
	const uint8_t wt[] = {0, 0, CXS_REQ_WT, 0, CXS_REQ_WT, 0};
	struct cxs_core_params p = test_params();
	p.protocol = CXS_PROTO_WT;
	struct rig *r = run_stores(&p, a, 6, false);
	for (int i = 0; i < 6; i++)
		ck_assert_msg(req(r, CXS_OP_STORE, a[i], 0)->r.flags == wt[i], "store %d: flags %u", i,
			      req(r, CXS_OP_STORE, a[i], 0)->r.flags);
	const struct req_log *last = req(r, CXS_OP_STORE, a[2], 0);
	ck_assert_uint_eq(last->done, MEM_PS + WT_PS);
	ck_assert_uint_eq(req(r, CXS_OP_STORE, a[3], 0)->t, last->done); /* not at 100 ns */
	ck_assert_uint_ge(req(r, CXS_OP_STORE, a[5], 0)->t, req(r, CXS_OP_STORE, a[4], 0)->done);
	rig_free(r);

	/* write-back: no store carries the flag */
	p.protocol = CXS_PROTO_WB;
	r = run_stores(&p, a, 6, false);
	for (int i = 0; i < 6; i++)
		ck_assert_uint_eq(req(r, CXS_OP_STORE, a[i], 0)->r.flags, 0);
	ck_assert_uint_eq(req(r, CXS_OP_STORE, a[3], 0)->t, MEM_PS);
	rig_free(r);
}
END_TEST

/* ---- 8. hooks --------------------------------------------------------------------------- */

START_TEST(test_hooks_see_each_store_enter_the_head_held_and_the_group_commit)
{
	io_reset();
	struct cxs_core_params p = test_params();
	/* a miss holds retirement; two stores to one L1 line, one to another */
	const uint64_t a[] = {LINE(9), LINE(0) | IN_L1, (LINE(0) | IN_L1) + 8, LINE(1) | IN_L1};
	memcpy(io.a, a, sizeof a);
	io.n = 4;
	struct rig *r = rig_new(&p, prog_miss_then_stores, true);
	r->hold_head = true;
	run(r); /* runs until nothing is left: the head is held */
	ck_assert_msg(r->rc == 0, "%s", r->err);

	ck_assert_uint_eq(r->nenter, 3); /* once per store, at retirement, in order */
	for (uint32_t i = 0; i < 3; i++) {
		ck_assert_uint_eq(r->enter[i].t, MEM_PS);
		ck_assert_uint_eq(r->enter[i].s[0].addr, a[i + 1]);
		ck_assert_uint_eq(r->enter[i].s[0].value, i + 1);
		ck_assert_uint_eq(r->enter[i].s[0].size, 8);
		ck_assert(!r->enter[i].s[0].remote);
	}
	ck_assert_uint_ge(r->nhead, 1);
	ck_assert_uint_eq(r->head[0].n, 2);
	ck_assert_uint_eq(r->head[0].s[1].addr, a[2]);
	ck_assert_uint_eq(count_op(r, CXS_OP_STORE), 0); /* held: nothing went */
	ck_assert_uint_eq(r->ncommit, 0);
	ck_assert(!cxs_core_done(r->core));

	run_until(r, 2 * MEM_PS);
	r->hold_head = false;
	ck_assert_int_eq(cxs_core_sb_release(r->core, r->now, r->err, sizeof r->err), 0);
	run_ok(r);

	const struct req_log *s0 = req(r, CXS_OP_STORE, a[1], 0);
	ck_assert_uint_eq(s0->t, 2 * MEM_PS);
	ck_assert_uint_eq(req(r, CXS_OP_STORE, a[2], 0)->t, 2 * MEM_PS);
	ck_assert_uint_eq(r->ncommit, 2);
	ck_assert_uint_eq(r->commit[0].n, 2);
	ck_assert_uint_eq(r->commit[0].t, s0->done);
	ck_assert_uint_eq(r->commit[0].s[0].addr, a[1]);
	ck_assert_uint_eq(r->commit[0].s[1].value, 2);
	ck_assert_uint_eq(r->commit[1].n, 1);
	ck_assert_uint_eq(r->commit[1].s[0].addr, a[3]);
	ck_assert_uint_ge(req(r, CXS_OP_STORE, a[3], 0)->t, r->commit[0].t);
	ck_assert_uint_eq(r->nenter, 3);
	rig_free(r);
}
END_TEST

/* ---- 9. load replay ------------------------------------------------------------------- */

/* Load a[0] (slow) and a[1] (fast) together, then get both. */
static void prog_two_loads(struct cxs_kt *kt)
{
	cxs_kt_roi_begin(kt);
	uint32_t ha = cxs_kt_ld(kt, io.a[0], 8);
	uint32_t hb = cxs_kt_ld(kt, io.a[1], 8);
	io.got[io.ngot++] = cxs_kt_get(kt, ha);
	io.got[io.ngot++] = cxs_kt_get(kt, hb);
	cxs_kt_roi_end(kt);
}

#define A_SLOW LINE(0)
#define B_FAST (LINE(1) | IN_L1)
#define NEW_B UINT64_C(0x5eed)

/*
 * Runs the two loads; at time `at` (if not 0) B's word becomes NEW_B and the
 * core loses the line `lost`.
 */
static struct rig *run_replay(uint8_t fault, cxs_time at, uint64_t lost)
{
	io_reset();
	struct cxs_core_params p = test_params();
	p.fault = fault;
	io.a[0] = A_SLOW;
	io.a[1] = B_FAST;
	struct rig *r = rig_new(&p, prog_two_loads, false);
	if (at) {
		run_until(r, at);
		mem_write(r, B_FAST, 8, NEW_B);
		lose_line(r, lost);
	}
	run_ok(r);
	ck_assert_uint_eq(io.got[0], A_SLOW * 3);
	return r;
}

START_TEST(test_load_that_performed_early_is_replayed_when_its_line_is_lost)
{
	struct rig *r = run_replay(CXS_CORE_FAULT_NONE, 50 * CXS_PS_PER_NS, B_FAST);
	ck_assert_uint_eq(req(r, CXS_OP_LOAD, B_FAST, 0)->done, L1_PS);
	ck_assert_uint_eq(req(r, CXS_OP_LOAD, B_FAST, 1)->t, 50 * CXS_PS_PER_NS);
	ck_assert_int_eq(find_req(r, CXS_OP_LOAD, B_FAST, 2), -1);
	ck_assert_uint_eq(counter(r, "replays"), 1);
	ck_assert_uint_eq(io.got[1], NEW_B); /* the value memory held at the replay */
	rig_free(r);
}
END_TEST

START_TEST(test_load_in_flight_when_its_line_is_lost_is_replayed_on_completion)
{
	struct rig *r = run_replay(CXS_CORE_FAULT_NONE, CYCLE_PS, B_FAST);
	ck_assert_uint_eq(req(r, CXS_OP_LOAD, B_FAST, 1)->t, req(r, CXS_OP_LOAD, B_FAST, 0)->done);
	ck_assert_int_eq(find_req(r, CXS_OP_LOAD, B_FAST, 2), -1);
	ck_assert_uint_eq(counter(r, "replays"), 1);
	rig_free(r);
}
END_TEST

START_TEST(test_no_replay_without_a_lost_line_or_for_the_oldest_load)
{
	/* nothing lost */
	struct rig *r = run_replay(CXS_CORE_FAULT_NONE, 0, 0);
	ck_assert_int_eq(find_req(r, CXS_OP_LOAD, B_FAST, 1), -1);
	ck_assert_uint_eq(counter(r, "replays"), 0);
	ck_assert_uint_eq(io.got[1], B_FAST * 3);
	rig_free(r);

	/* the oldest load's line: nothing older is incomplete, nothing performed early */
	r = run_replay(CXS_CORE_FAULT_NONE, 50 * CXS_PS_PER_NS, A_SLOW);
	ck_assert_int_eq(find_req(r, CXS_OP_LOAD, A_SLOW, 1), -1);
	ck_assert_int_eq(find_req(r, CXS_OP_LOAD, B_FAST, 1), -1);
	ck_assert_uint_eq(counter(r, "replays"), 0);
	rig_free(r);

	/* the no_replay fault keeps the stale value: the first test above can fail */
	r = run_replay(CXS_CORE_FAULT_NO_REPLAY, 50 * CXS_PS_PER_NS, B_FAST);
	ck_assert_uint_eq(io.got[1], B_FAST * 3);
	ck_assert_uint_eq(counter(r, "replays"), 0);
	rig_free(r);
}
END_TEST

/* Load a[0] (slow) and a[1] (fast), 150 instructions, then get both. */
static void prog_two_loads_compute(struct cxs_kt *kt)
{
	cxs_kt_roi_begin(kt);
	uint32_t ha = cxs_kt_ld(kt, io.a[0], 8);
	uint32_t hb = cxs_kt_ld(kt, io.a[1], 8);
	cxs_kt_compute(kt, 150);
	io.got[io.ngot++] = cxs_kt_get(kt, ha);
	io.got[io.ngot++] = cxs_kt_get(kt, hb);
	cxs_kt_roi_end(kt);
}

/*
 * Regression (cxs_core_invalidated used to wake the core at
 * max(now, busy_until), so a load to replay waited for the frontend's
 * COMPUTE stretch to end). A misses (200 cycles), B hits L1 (done at 5),
 * 150 instructions keep the frontend busy until cycle 150; B's line is lost
 * at cycle 20: B must be re-issued at cycle 20 (done at 220, the ROI 220
 * cycles), not at cycle 150 (350 cycles).
 */
START_TEST(test_replay_is_issued_when_the_line_is_lost_not_when_the_frontend_is_free)
{
	io_reset();
	struct cxs_core_params p = test_params();
	io.a[0] = A_SLOW;
	io.a[1] = B_FAST;
	struct rig *r = rig_new(&p, prog_two_loads_compute, false);
	run_until(r, 20 * CYCLE_PS);
	lose_line(r, B_FAST);
	run_ok(r);
	ck_assert_uint_eq(counter(r, "replays"), 1);
	ck_assert_uint_eq(req(r, CXS_OP_LOAD, B_FAST, 1)->t, 20 * CYCLE_PS);
	ck_assert_uint_eq(cxs_core_roi_end(r->core) - cxs_core_roi_begin(r->core),
			  20 * CYCLE_PS + MEM_PS);
	rig_free(r);
}
END_TEST

/* ---- 10. window limits --------------------------------------------------------------- */

/* A miss (never got), then io.n instructions of computation. */
static void prog_miss_compute(struct cxs_kt *kt)
{
	cxs_kt_roi_begin(kt);
	(void)cxs_kt_ld(kt, io.a[0], 8);
	cxs_kt_compute(kt, io.n);
	cxs_kt_roi_end(kt);
}

static struct rig *run_miss_compute(uint32_t rob, char *state, size_t len)
{
	io_reset();
	struct cxs_core_params p = test_params();
	p.rob = rob;
	io.a[0] = LINE(0);
	io.n = 1000;
	struct rig *r = rig_new(&p, prog_miss_compute, false);
	run_until(r, MEM_PS / 2);
	cxs_core_describe(r->core, state, len);
	run_ok(r);
	return r;
}

START_TEST(test_reorder_buffer_of_16_stalls_dispatch_behind_a_miss)
{
	char st[256];
	struct rig *r = run_miss_compute(16, st, sizeof st);
	/* the miss and 15 instructions fill the window; the other 985 wait for it */
	ck_assert_msg(strstr(st, "reorder buffer full"), "%s", st);
	ck_assert_uint_eq(cxs_core_roi_end(r->core) - cxs_core_roi_begin(r->core),
			  MEM_PS + 985 * CYCLE_PS);
	ck_assert_uint_eq(counter(r, "stalls_total"), MEM_CYC - 15);
	ck_assert_uint_eq(counter(r, "stalls_l3_miss"), MEM_CYC - 15);
	ck_assert_uint_eq(counter(r, "instructions"), 1001);
	rig_free(r);

	/* a 224-entry window hides the miss behind the computation */
	r = run_miss_compute(224, st, sizeof st);
	ck_assert_msg(strstr(st, "running"), "%s", st);
	ck_assert_uint_eq(cxs_core_roi_end(r->core) - cxs_core_roi_begin(r->core), 1000 * CYCLE_PS);
	ck_assert_uint_eq(counter(r, "stalls_total"), 0);
	rig_free(r);
}
END_TEST

START_TEST(test_full_store_queue_stalls_the_fifth_store)
{
	/* a miss holds retirement; four stores to L1 lines, then one to memory */
	const uint64_t a[] = {LINE(9), LINE(1) | IN_L1, LINE(2) | IN_L1, LINE(3) | IN_L1,
			      LINE(4) | IN_L1, LINE(5)};
	for (int sq = 4; sq <= 8; sq += 4) {
		io_reset();
		memcpy(io.a, a, sizeof a);
		io.n = 6;
		struct cxs_core_params p = test_params();
		p.sq = (uint32_t)sq;
		struct rig *r = rig_new(&p, prog_miss_then_stores, false);
		char st[256];
		run_until(r, MEM_PS / 2);
		cxs_core_describe(r->core, st, sizeof st);
		run_ok(r);
		cxs_time dispatched = req(r, CXS_OP_PREFETCH_M, LINE(5), 0)->t;
		if (sq == 4) {
			ck_assert_msg(strstr(st, "store queue full"), "%s", st);
			/* it enters when the first store leaves the buffer: miss + one L1 store */
			ck_assert_uint_eq(dispatched, MEM_PS + L1_PS);
			/* bound on stores only once no load miss is stalling (Intel's definition):
			 * the L1 store's time after the miss returned */
			ck_assert_uint_eq(counter(r, "bound_on_stores"), L1_PS / CYCLE_PS);
			ck_assert_uint_ge(counter(r, "stalls_total"), (MEM_PS + L1_PS) / CYCLE_PS);
		} else {
			ck_assert_uint_eq(dispatched, 0);
			ck_assert_uint_eq(counter(r, "bound_on_stores"), 0);
		}
		rig_free(r);
	}
}
END_TEST

START_TEST(test_load_queue_of_2_holds_the_third_load)
{
	io_reset();
	struct cxs_core_params p = test_params();
	p.lq = 2;
	for (uint32_t i = 0; i < 3; i++)
		io.a[i] = LINE(i);
	io.n = 3;
	struct rig *r = rig_new(&p, prog_independent, false);
	char st[256];
	run_until(r, MEM_PS / 2);
	cxs_core_describe(r->core, st, sizeof st);
	run_ok(r);
	ck_assert_msg(strstr(st, "load queue full"), "%s", st);
	ck_assert_uint_eq(req(r, CXS_OP_LOAD, LINE(1), 0)->t, 0);
	ck_assert_uint_eq(req(r, CXS_OP_LOAD, LINE(2), 0)->t, MEM_PS); /* when the first retired */
	ck_assert_uint_eq(io.got[2], LINE(2) * 3);
	rig_free(r);
}
END_TEST

/* ---- 11. counter accounting ------------------------------------------------------------ */

static void prog_mixed(struct cxs_kt *kt)
{
	cxs_kt_compute(kt, 77); /* set-up: not counted */
	(void)cxs_kt_load(kt, LINE(9) | IN_L1, 8);
	cxs_kt_roi_begin(kt);
	cxs_kt_compute(kt, 100);
	for (uint32_t i = 0; i < 3; i++)
		io.got[io.ngot++] = cxs_kt_load(kt, LINE(i) | IN_L1, 8);
	cxs_kt_store(kt, LINE(4) | IN_L1, 8, 1);
	cxs_kt_store(kt, LINE(5), 8, 2);
	cxs_kt_fence(kt);
	(void)cxs_kt_swap(kt, LINE(6) | IN_L1, 8, 3);
	cxs_kt_compute(kt, 50);
	cxs_kt_roi_end(kt);
	cxs_kt_compute(kt, 33); /* after the ROI: not counted */
	(void)cxs_kt_load(kt, LINE(7), 8);
	cxs_kt_store(kt, LINE(7), 8, 4);
}

START_TEST(test_counters_cover_exactly_the_region_of_interest)
{
	io_reset();
	struct cxs_core_params p = test_params();
	struct rig *r = rig_new(&p, prog_mixed, false);
	run_ok(r);
	cxs_time b = cxs_core_roi_begin(r->core), e = cxs_core_roi_end(r->core);
	ck_assert_uint_eq(b, 77 * CYCLE_PS + L1_PS); /* set-up compute, then an L1 load */
	ck_assert_uint_gt(e, b);
	ck_assert_uint_eq(counter(r, "cycles"), (e - b) / CYCLE_PS);
	ck_assert_uint_eq(counter(r, "instructions"), 100 + 3 + 2 + 1 + 1 + 50);
	ck_assert_uint_eq(counter(r, "loads"), 3);
	ck_assert_uint_eq(counter(r, "stores"), 2);
	ck_assert_uint_eq(counter(r, "fences"), 1);
	ck_assert_uint_eq(counter(r, "atomics"), 1);
	ck_assert_uint_eq(counter(r, "l1d_misses"), 0);
	ck_assert_uint_eq(counter(r, "store_prefetches"), 1);
	ck_assert_uint_le(counter(r, "stalls_total"), counter(r, "cycles"));
	rig_free(r);
}
END_TEST

/* A sleep (cxs_kt_idle) takes its cycles of time and dispatches nothing; a compute of as many retires them. */
static void prog_idle(struct cxs_kt *kt)
{
	cxs_kt_roi_begin(kt);
	cxs_kt_compute(kt, 10);
	if (io.n)
		cxs_kt_idle(kt, 300);
	else
		cxs_kt_compute(kt, 300);
	io.got[io.ngot++] = cxs_kt_load(kt, LINE(1) | IN_L1, 8);
	cxs_kt_roi_end(kt);
}

START_TEST(test_idle_passes_time_without_instructions)
{
	uint64_t cycles[2], instr[2];
	for (uint32_t sleep = 0; sleep < 2; sleep++) {
		io_reset();
		io.n = sleep;
		struct cxs_core_params p = test_params();
		struct rig *r = rig_new(&p, prog_idle, false);
		run_ok(r);
		cycles[sleep] = counter(r, "cycles");
		instr[sleep] = counter(r, "instructions");
		ck_assert_uint_eq(io.got[0], (LINE(1) | IN_L1) * 3);
		rig_free(r);
	}
	ck_assert_uint_eq(instr[0], 10 + 300 + 1);
	ck_assert_uint_eq(instr[1], 10 + 1);
	ck_assert_uint_ge(cycles[1], 10 + 300); /* the sleep's cycles passed */
	ck_assert_uint_eq(cycles[1], cycles[0]);
}
END_TEST

/* ---- prefetchers ---------------------------------------------------------------------- */

/*
 * Misses to consecutive lines 60..63 of one page with only the L1 prefetcher:
 * the second miss of the stream (line 61) prefetches 62 and 63 into fill
 * buffers, so the demand loads of 62 and 63 are LFB hits. A stream at the
 * end of a page prefetches nothing (the prefetcher stays within 4 KiB).
 */
START_TEST(test_l1_prefetcher_fetches_the_next_two_lines_within_the_page)
{
	io_reset();
	struct cxs_core_params p = test_params();
	p.l1_prefetch = true;
	const uint64_t base = SHARED_BASE + 60 * 64; /* lines 60..63 of the first page */
	for (uint32_t i = 0; i < 4; i++)
		io.a[i] = base + 64 * i;
	io.a[4] = SHARED_BASE + 64 * 64; /* line 0 of the next page: 64 */
	io.n = 5;
	struct rig *r = rig_new(&p, prog_independent, false);
	run_ok(r);
	ck_assert_uint_eq(count_op(r, CXS_OP_PREFETCH_S), 2);
	ck_assert_uint_eq(req(r, CXS_OP_PREFETCH_S, base + 128, 0)->t, 0);
	ck_assert_uint_eq(req(r, CXS_OP_PREFETCH_S, base + 192, 0)->t, 0);
	ck_assert_uint_eq(counter(r, "l1_pf_requests"), 2);
	ck_assert_uint_eq(counter(r, "l1_pf_from_mem"), 2);
	ck_assert_uint_eq(counter(r, "lfb_hits"), 2);
	ck_assert_uint_eq(counter(r, "l1d_misses"), 3);
	ck_assert_uint_eq(counter(r, "l2_pf_requests"), 0);
	for (uint32_t i = 0; i < 5; i++)
		ck_assert_uint_eq(io.got[i], io.a[i] * 3);
	rig_free(r);

	/* lines 62 and 63: the next two lines are in the next page, so nothing goes */
	io_reset();
	io.a[0] = base + 128;
	io.a[1] = base + 192;
	io.n = 2;
	r = rig_new(&p, prog_independent, false);
	run_ok(r);
	ck_assert_uint_eq(count_op(r, CXS_OP_PREFETCH_S), 0);
	ck_assert_uint_eq(counter(r, "l1d_misses"), 2);
	rig_free(r);
}
END_TEST

/*
 * With only the L2 prefetcher: two misses to lines 1 and 2 (memory) start a
 * stream; lines 3..16 ahead of line 2 are prefetched (not into fill buffers).
 */
START_TEST(test_l2_prefetcher_fetches_lines_3_to_16_ahead_without_fill_buffers)
{
	io_reset();
	struct cxs_core_params p = test_params();
	p.l2_prefetch = true;
	p.lfb = 2;
	io.a[0] = SHARED_BASE + 64;
	io.a[1] = SHARED_BASE + 128;
	io.a[2] = SHARED_BASE + 64 * 40; /* far away: needs a fill buffer */
	io.n = 3;
	struct rig *r = rig_new(&p, prog_independent, false);
	run_ok(r);
	ck_assert_uint_eq(count_op(r, CXS_OP_PREFETCH_S), 14);
	for (uint64_t d = 3; d <= 16; d++)
		ck_assert_uint_eq(req(r, CXS_OP_PREFETCH_S, SHARED_BASE + 64 * (2 + d), 0)->t, 0);
	ck_assert_uint_eq(counter(r, "l2_pf_requests"), 14);
	ck_assert_uint_eq(counter(r, "l1_pf_requests"), 0);
	/* the L2 prefetches hold no fill buffer: the third miss waits only for a demand miss */
	ck_assert_uint_eq(req(r, CXS_OP_LOAD, io.a[2], 0)->t, MEM_PS);
	rig_free(r);
}
END_TEST

/* ---- 12. a failing program ------------------------------------------------------------ */

static void prog_fails(struct cxs_kt *kt)
{
	cxs_kt_roi_begin(kt);
	if (io.variant == 1)
		(void)cxs_kt_load(kt, LINE(0), 8);
	cxs_kt_fail(kt, "value %d is wrong", 42);
}

START_TEST(test_failing_program_stops_the_core_with_its_message)
{
	io_reset();
	struct cxs_core_params p = test_params();
	struct rig *r = rig_new(&p, prog_fails, false);
	char err[256] = "";
	ck_assert_int_eq(cxs_core_step(r->core, 0, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "value 42 is wrong") != NULL, "%s", err);
	ck_assert(cxs_core_failed(r->core));
	ck_assert_str_eq(cxs_core_error(r->core), "value 42 is wrong");
	ck_assert(!cxs_core_done(r->core));
	rig_free(r);

	/* failing after a load: the step inside the completion reports it */
	io_reset();
	io.variant = 1;
	r = rig_new(&p, prog_fails, false);
	run(r);
	ck_assert_int_eq(r->rc, -1);
	ck_assert_uint_eq(r->now, MEM_PS);
	ck_assert_msg(strstr(r->err, "value 42 is wrong") != NULL, "%s", r->err);
	ck_assert(cxs_core_failed(r->core));
	rig_free(r);
}
END_TEST

/* ---- misuse --------------------------------------------------------------------------- */

START_TEST(test_completion_of_a_request_twice_is_an_error)
{
	io_reset();
	struct cxs_core_params p = test_params();
	io.a[0] = LINE(0);
	io.a[1] = LINE(1);
	io.n = 2;
	struct rig *r = rig_new(&p, prog_independent, false);
	run_ok(r);
	char err[256] = "";
	ck_assert_int_eq(cxs_core_complete(r->core, r->now, &r->log[0].r, 0, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "does not have") != NULL, "%s", err);
	rig_free(r);
}
END_TEST

/*
 * Regression (store-buffer completions used to be only counted down): two
 * stores to line 0 form one transaction; delivering the first store's
 * completion twice (a hierarchy bug) must be an error (-1) with nothing
 * committed, not a commit while the second store is still in flight followed
 * by line 1's store — TSO broken silently.
 */
START_TEST(test_store_completion_delivered_twice_is_an_error)
{
	io_reset();
	struct cxs_core_params p = test_params();
	const uint64_t a[] = {LINE(0), LINE(0) + 8, LINE(1)};
	memcpy(io.a, a, sizeof a);
	io.n = 3;
	struct rig *r = rig_new(&p, prog_stores, true);
	run_until(r, CYCLE_PS); /* both stores of line 0 are in flight */
	const struct req_log *first = req(r, CXS_OP_STORE, a[0], 0);
	ck_assert_uint_eq(first->done, CXS_TIME_INF);
	char err[256] = "";
	ck_assert_int_eq(cxs_core_complete(r->core, r->now, &first->r, 0, err, sizeof err), 0);
	int rc = cxs_core_complete(r->core, r->now, &first->r, 0, err, sizeof err);
	ck_assert_uint_eq(r->ncommit, 0);
	ck_assert_int_eq(find_req(r, CXS_OP_STORE, a[2], 0), -1);
	ck_assert_int_eq(rc, -1);
	rig_free(r);
}
END_TEST

START_TEST(test_new_rejects_empty_queues_and_an_oversized_lfb)
{
	struct cxs_core_params p = test_params();
	struct cxs_core_env env = {.request = env_request, .where = env_where,
				   .remote = env_remote, .wake = env_wake};
	char err[256];
	p.lfb = 65;
	ck_assert_ptr_null(cxs_core_new(0, 0, &p, &env, NULL, NULL, err, sizeof err));
	ck_assert_ptr_nonnull(strstr(err, "lfb"));
	p = test_params();
	p.sq = 0;
	ck_assert_ptr_null(cxs_core_new(0, 0, &p, &env, NULL, NULL, err, sizeof err));
}
END_TEST

/* ---- 13. DIKTAMO's remote-store protocols (papers/diktamo.md §IV-D, Fig. 7) ---------------- */

/*
 * Hand-built sequences: a script of stores, computation (so that stores enter
 * the buffer at chosen times: one instruction per cycle, and a memory
 * operation costs none), loads that hold retirement until the end, and
 * atomics. Addresses, and what the rig makes of them:
 *
 *   RX(i)    line i in CXL memory, not writable in L1: ownership at the SB head
 *            is a PREFETCH_M (100 ns), and each store's own request 100 ns
 *   RW(i)    line i in CXL memory, writable in L1: ownership at once, a store 5 cycles
 *   LOC(i)   local DRAM (a store 100 ns); LOC1(i) local, writable in L1 (5 cycles)
 *
 * Most scripts open with a store to LOC(5): it holds the SB head 0..100 ns
 * while the stores behind it enter. REPL_ACKs come REPL_PS (250 ns) after
 * their REPL unless a test delivers them by hand. The times in the comments
 * are the ones these latencies imply.
 */
#define RX(i) (LINE(i) | IN_CXL)
#define RW(i) (LINE(i) | IN_CXL | IN_L1)
#define LOC(i) LINE(i)
#define LOC1(i) (LINE(i) | IN_L1)
#define NS(x) ((cxs_time)((x) * 1000.0)) /* x ns in ps; x may end in .5 */
#define MAX_SCRIPT 160

enum sc_kind { SC_STORE = 1, SC_COMPUTE, SC_LOAD, SC_SWAP, SC_FETCH_ADD };

static struct {
	uint32_t n;
	struct sc_step {
		uint8_t kind, size;
		uint64_t addr, value; /* value: the store's, the swap's or the addend */
		uint32_t cycles;      /* SC_COMPUTE */
	} s[MAX_SCRIPT];
} script;

static const uint8_t replicating[] = {CXS_PROTO_BASELINE, CXS_PROTO_PARALLEL, CXS_PROTO_PROACTIVE,
				      CXS_PROTO_PROACTIVE_NOC};

static void sc_reset(void)
{
	memset(&script, 0, sizeof script);
}

static void sc_add(struct sc_step st)
{
	ck_assert_uint_lt(script.n, MAX_SCRIPT);
	script.s[script.n++] = st;
}

static void sc_store_sized(uint64_t addr, uint8_t size, uint64_t value)
{
	sc_add((struct sc_step){.kind = SC_STORE, .size = size, .addr = addr, .value = value});
}

/* An 8-byte store whose value names its step (so each store's value is unique). */
static uint64_t sc_store(uint64_t addr)
{
	uint64_t v = 0x1000 + script.n;
	sc_store_sized(addr, 8, v);
	return v;
}

static void sc_compute(uint32_t cycles)
{
	sc_add((struct sc_step){.kind = SC_COMPUTE, .cycles = cycles});
}

/* A load got only at the end: it holds retirement until it completes. */
static void sc_load(uint64_t addr)
{
	sc_add((struct sc_step){.kind = SC_LOAD, .size = 8, .addr = addr});
}

static void sc_atomic(enum sc_kind kind, uint64_t addr, uint64_t value)
{
	sc_add((struct sc_step){.kind = (uint8_t)kind, .size = 8, .addr = addr, .value = value});
}

static void prog_script(struct cxs_kt *kt)
{
	uint32_t held[8], nheld = 0;
	cxs_kt_roi_begin(kt);
	for (uint32_t i = 0; i < script.n; i++) {
		const struct sc_step *s = &script.s[i];
		switch (s->kind) {
		case SC_STORE:
			cxs_kt_store(kt, s->addr, s->size, s->value);
			break;
		case SC_COMPUTE:
			cxs_kt_compute(kt, s->cycles);
			break;
		case SC_LOAD:
			ck_assert_uint_lt(nheld, 8);
			held[nheld++] = cxs_kt_ld(kt, s->addr, s->size);
			break;
		case SC_SWAP:
			io.got[io.ngot++] = cxs_kt_swap(kt, s->addr, s->size, s->value);
			break;
		case SC_FETCH_ADD:
			io.got[io.ngot++] = cxs_kt_fetch_add(kt, s->addr, s->size, s->value);
			break;
		}
	}
	for (uint32_t i = 0; i < nheld; i++)
		(void)cxs_kt_get(kt, held[i]);
	cxs_kt_roi_end(kt);
}

/* A rig for the script under protocol proto (not run yet). */
static struct rig *sc_rig(uint8_t proto, cxs_time repl_ps, bool commit_before_ack)
{
	io_reset();
	struct cxs_core_params p = test_params();
	p.protocol = proto;
	p.commit_before_ack = commit_before_ack;
	struct rig *r = rig_new(&p, prog_script, false);
	r->repl_ps = repl_ps;
	return r;
}

/* Runs the script to its end; every store's value is in memory (the last one to an address). */
static struct rig *sc_run(uint8_t proto, cxs_time repl_ps)
{
	struct rig *r = sc_rig(proto, repl_ps, false);
	run_ok(r);
	for (uint32_t i = 0; i < script.n; i++) {
		const struct sc_step *s = &script.s[i];
		bool last = s->kind == SC_STORE;
		for (uint32_t j = i + 1; j < script.n && last; j++)
			last = !(script.s[j].kind == SC_STORE && script.s[j].addr == s->addr);
		if (last)
			ck_assert_uint_eq(mem_read(r, s->addr, s->size), s->value);
	}
	return r;
}

/* Four stores to lines RX(0..3), entering at 5, 10, 15 and 20 ns behind LOC(5). */
static void sc_four_lines(void)
{
	sc_reset();
	sc_store(LOC(5));
	for (uint32_t i = 0; i < 4; i++) {
		sc_compute(10);
		sc_store(RX(i));
	}
}

static bool is_write(uint8_t op)
{
	return op == CXS_OP_STORE || op == CXS_OP_SWAP || op == CXS_OP_FETCH_ADD ||
	       op == CXS_OP_CAS;
}

static const struct repl_log *repl_by_id(const struct rig *r, uint32_t id)
{
	for (uint32_t k = 0; k < r->nrepl; k++)
		if (r->repl[k].id == id)
			return &r->repl[k];
	return NULL;
}

/* How many REPLs carried the store (or atomic) of value to addr; *which: the last. */
static uint32_t repls_with(const struct rig *r, uint64_t addr, uint64_t value, bool atomic,
			   const struct repl_log **which)
{
	uint32_t n = 0;
	for (uint32_t k = 0; k < r->nrepl; k++)
		for (uint32_t i = 0; i < r->repl[k].n; i++)
			if (r->repl[k].s[i].addr == addr && r->repl[k].s[i].value == value &&
			    r->repl[k].atomic == atomic) {
				n++;
				*which = &r->repl[k];
			}
	return n;
}

/*
 * The rule every replicating protocol keeps, and the one fault injection
 * breaks: a store or atomic to CXL memory is issued only once every
 * REPL_ACK of its replication is in. Returns how many requests break it.
 */
static uint32_t early_or_unreplicated(const struct rig *r)
{
	uint32_t bad = 0;
	for (uint32_t i = 0; i < r->nlog; i++) {
		const struct req_log *l = &r->log[i];
		if (!is_write(l->r.op) || !env_remote(NULL, l->r.addr))
			continue;
		const struct repl_log *k = repl_by_id(r, l->r.repl);
		bad += !k || k->acked == CXS_TIME_INF || l->t < k->acked;
	}
	return bad;
}

/*
 * cxs_mem_req.repl: a store or atomic to CXL memory under a protocol that
 * replicates carries the id of the one REPL that carried it; every other
 * request (local stores, prefetches, ownership, any under wb or wt) carries 0.
 */
static void assert_repl_tags(const struct rig *r, bool replicates)
{
	for (uint32_t i = 0; i < r->nlog; i++) {
		const struct cxs_mem_req *q = &r->log[i].r;
		if (!replicates || !is_write(q->op) || !env_remote(NULL, q->addr)) {
			ck_assert_msg(q->repl == 0, "request %u (op %u at %#" PRIx64 ") carries %u", i,
				      q->op, q->addr, q->repl);
			continue;
		}
		const struct repl_log *k = NULL;
		ck_assert_uint_eq(repls_with(r, q->addr, q->value, q->op != CXS_OP_STORE, &k), 1);
		ck_assert_msg(q->repl == k->id, "request %u (op %u at %#" PRIx64 ") carries %u, not %u",
			      i, q->op, q->addr, q->repl, k->id);
	}
}

/* The most REPLs ever outstanding at once (sent, their REPL_ACKs not all in). */
static uint32_t max_repls_outstanding(const struct rig *r)
{
	uint32_t best = 0;
	for (uint32_t k = 0; k < r->nrepl; k++) {
		uint32_t n = 0;
		for (uint32_t j = 0; j < r->nrepl; j++)
			n += r->repl[j].t <= r->repl[k].t && r->repl[k].t < r->repl[j].acked;
		best = n > best ? n : best;
	}
	return best;
}

static void assert_carries(const struct repl_log *k, uint32_t i, uint64_t addr, uint64_t value)
{
	ck_assert_uint_lt(i, k->n);
	ck_assert_uint_eq(k->s[i].addr, addr);
	ck_assert_uint_eq(k->s[i].value, value);
	ck_assert(k->s[i].remote);
}

/* -- baseline (Fig. 7a) -- */

START_TEST(test_baseline_repl_after_ownership_and_stores_after_the_repl_acks)
{
	sc_reset();
	sc_store(LOC(5));
	uint64_t v0 = sc_store(RX(0));
	uint64_t v1 = sc_store(RX(0) + 8);
	sc_store(LOC1(6));
	struct rig *r = sc_run(CXS_PROTO_BASELINE, REPL_PS);

	/* the group reaches the head at 100 ns; its line is not in L1: ownership 100..200 ns */
	const struct req_log *own = req(r, CXS_OP_PREFETCH_M, RX(0), 1);
	ck_assert_uint_eq(own->t, NS(100));
	ck_assert_uint_eq(own->done, NS(200));
	/* one REPL of both stores, sent when ownership is in, not at the head */
	ck_assert_uint_eq(r->nrepl, 1);
	const struct repl_log *k = &r->repl[0];
	ck_assert_uint_eq(k->t, own->done);
	ck_assert(!k->atomic);
	ck_assert_uint_eq(k->n, 2);
	assert_carries(k, 0, RX(0), v0);
	assert_carries(k, 1, RX(0) + 8, v1);
	/* the stores go together when the REPL_ACKs are in, 200 + 250 ns */
	ck_assert_uint_eq(k->acked, NS(450));
	ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(0), 0)->t, NS(450));
	ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(0) + 8, 0)->t, NS(450));
	ck_assert_uint_eq(early_or_unreplicated(r), 0);
	/* the local store behind them performs at the head (550 ns) */
	ck_assert_uint_eq(req(r, CXS_OP_STORE, LOC1(6), 0)->t, NS(550));
	ck_assert_uint_eq(counter(r, "repl_at_head"), 1);
	ck_assert_uint_eq(counter(r, "repl_at_entry"), 0);
	ck_assert_uint_eq(counter(r, "sb_coalesced"), 1);
	rig_free(r);
}
END_TEST

START_TEST(test_baseline_replicates_at_once_at_the_head_when_the_line_is_writable_in_l1)
{
	sc_reset();
	sc_store(LOC(5));
	uint64_t v = sc_store(RW(0));
	struct rig *r = sc_run(CXS_PROTO_BASELINE, REPL_PS);
	ck_assert_int_eq(find_req(r, CXS_OP_PREFETCH_M, RW(0), 0), -1); /* no ownership request */
	ck_assert_uint_eq(r->nrepl, 1);
	ck_assert_uint_eq(r->repl[0].t, NS(100)); /* at the head, not at entry (0) */
	assert_carries(&r->repl[0], 0, RW(0), v);
	const struct req_log *st = req(r, CXS_OP_STORE, RW(0), 0);
	ck_assert_uint_eq(st->t, NS(350));
	ck_assert_uint_eq(st->done, NS(350) + L1_PS);
	ck_assert_uint_eq(early_or_unreplicated(r), 0);
	rig_free(r);
}
END_TEST

/* -- local stores, under every protocol that replicates -- */

START_TEST(test_local_store_is_never_replicated_and_performs_at_the_head)
{
	for (size_t i = 0; i < sizeof replicating; i++) {
		sc_reset();
		uint64_t v = sc_store(RX(0));
		sc_compute(10);
		sc_store(LOC(5)); /* enters at 5 ns */
		sc_compute(10);
		sc_store(LOC1(6));
		struct rig *r = sc_run(replicating[i], REPL_PS);
		ck_assert_uint_eq(r->nrepl, 1);
		ck_assert_uint_eq(r->repl[0].n, 1);
		assert_carries(&r->repl[0], 0, RX(0), v);
		/* LOC(5) reaches the head when RX(0) commits and performs there: no ownership step */
		const struct req_log *st = req(r, CXS_OP_STORE, LOC(5), 0);
		ck_assert_uint_eq(st->t, req(r, CXS_OP_STORE, RX(0), 0)->done);
		ck_assert_uint_eq(req(r, CXS_OP_PREFETCH_M, LOC(5), 0)->t, NS(5)); /* at dispatch */
		ck_assert_int_eq(find_req(r, CXS_OP_PREFETCH_M, LOC(5), 1), -1);
		ck_assert_uint_eq(req(r, CXS_OP_STORE, LOC1(6), 0)->t, st->done);
		rig_free(r);
	}
}
END_TEST

/* -- parallel (Fig. 7b) -- */

static void parallel_case(cxs_time repl_ps, cxs_time store_at)
{
	sc_reset();
	sc_store(LOC(5));
	sc_store(RX(0));
	sc_store(RX(0) + 8);
	struct rig *r = sc_run(CXS_PROTO_PARALLEL, repl_ps);
	const struct req_log *own = req(r, CXS_OP_PREFETCH_M, RX(0), 1);
	ck_assert_uint_eq(r->nrepl, 1);
	const struct repl_log *k = &r->repl[0];
	ck_assert_uint_eq(k->n, 2);
	/* both start when the group reaches the head, 100 ns */
	ck_assert_uint_eq(k->t, NS(100));
	ck_assert_uint_eq(own->t, NS(100));
	ck_assert_uint_eq(own->done, NS(200));
	ck_assert_uint_eq(k->acked, NS(100) + repl_ps);
	/* the stores when both are done */
	ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(0), 0)->t, store_at);
	ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(0) + 8, 0)->t, store_at);
	ck_assert_uint_eq(early_or_unreplicated(r), 0);
	ck_assert_uint_eq(counter(r, "repl_at_head"), 1);
	rig_free(r);
}

START_TEST(test_parallel_repl_and_ownership_start_at_the_head_stores_wait_for_repl_acks)
{
	parallel_case(REPL_PS, NS(350)); /* ownership in at 200 ns, REPL_ACKs at 350 */
}
END_TEST

START_TEST(test_parallel_repl_and_ownership_start_at_the_head_stores_wait_for_ownership)
{
	parallel_case(NS(40), NS(200)); /* REPL_ACKs in at 140 ns, ownership at 200 */
}
END_TEST

/* -- proactive (§IV-D.4 and 5) -- */

START_TEST(test_proactive_repl_goes_when_the_next_store_cannot_coalesce_not_on_entry)
{
	sc_reset();
	sc_store(LOC(5));
	sc_compute(10);
	uint64_t v0 = sc_store(RX(0)); /* enters at 5 ns */
	sc_compute(10);
	uint64_t v1 = sc_store(RX(0) + 8); /* 10 ns: coalesces with RX(0) */
	sc_compute(10);
	uint64_t v2 = sc_store(RX(1)); /* 15 ns: another line: RX(0)'s group sends */
	sc_compute(10);
	sc_store(LOC1(7)); /* 20 ns: a local store: RX(1)'s sends */
	sc_compute(10);
	uint64_t v3 = sc_store(RX(2)); /* 25 ns: nothing follows it: it sends at the head */
	struct rig *r = sc_run(CXS_PROTO_PROACTIVE, REPL_PS);

	ck_assert_uint_eq(r->nrepl, 3);
	ck_assert_uint_eq(r->repl[0].t, NS(15));
	ck_assert_uint_eq(r->repl[0].n, 2);
	assert_carries(&r->repl[0], 0, RX(0), v0);
	assert_carries(&r->repl[0], 1, RX(0) + 8, v1);
	ck_assert_uint_eq(r->repl[1].t, NS(20));
	ck_assert_uint_eq(r->repl[1].n, 1);
	assert_carries(&r->repl[1], 0, RX(1), v2);
	/* RX(2) reaches the head when LOC1(7) commits (565 + 2.5 ns) */
	ck_assert_uint_eq(r->repl[2].t, req(r, CXS_OP_STORE, LOC1(7), 0)->done);
	ck_assert_uint_eq(r->repl[2].t, NS(567.5));
	ck_assert_uint_eq(r->repl[2].n, 1);
	assert_carries(&r->repl[2], 0, RX(2), v3);
	ck_assert_uint_eq(counter(r, "repl_at_entry"), 2);
	ck_assert_uint_eq(counter(r, "repl_at_head"), 1);
	/* RX(0): head 100, owned 200, REPL_ACKs 265; RX(1): acked at 270, owned 365..465 */
	ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(0), 0)->t, NS(265));
	ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(0) + 8, 0)->t, NS(265));
	ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(1), 0)->t, NS(465));
	ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(2), 0)->t, NS(567.5) + REPL_PS);
	ck_assert_uint_eq(early_or_unreplicated(r), 0);
	rig_free(r);
}
END_TEST

START_TEST(test_proactive_run_of_stores_to_one_line_is_one_repl_of_all_of_them)
{
	uint64_t v[5];
	sc_reset();
	sc_store(LOC(5));
	for (uint32_t w = 0; w < 5; w++) { /* enter at 5, 10, .. 25 ns */
		sc_compute(10);
		v[w] = sc_store(RX(0) + 8 * w);
	}
	sc_compute(10);
	sc_store(RX(1)); /* 30 ns */
	struct rig *r = sc_run(CXS_PROTO_PROACTIVE, REPL_PS);
	ck_assert_uint_eq(r->nrepl, 2);
	ck_assert_uint_eq(r->repl[0].t, NS(30));
	ck_assert_uint_eq(r->repl[0].n, 5);
	for (uint32_t w = 0; w < 5; w++) {
		assert_carries(&r->repl[0], w, RX(0) + 8 * w, v[w]);
		/* one transaction: all five when the REPL_ACKs are in (30 + 250 ns) */
		ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(0) + 8 * w, 0)->t, NS(280));
		ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(0) + 8 * w, 0)->r.repl, r->repl[0].id);
	}
	ck_assert_uint_eq(counter(r, "sb_coalesced"), 4);
	ck_assert_uint_eq(counter(r, "repl_at_entry"), 1);
	rig_free(r);
}
END_TEST

START_TEST(test_proactive_group_is_full_at_64_stores_and_sends_when_the_65th_enters)
{
	sc_reset();
	sc_store(LOC(5));
	for (uint32_t k = 0; k <= 64; k++) { /* byte k % 64 of RX(0), entering at k + 1 cycles */
		sc_compute(1);
		sc_store_sized(RX(0) + k % 64, 1, k);
	}
	struct rig *r = sc_run(CXS_PROTO_PROACTIVE, REPL_PS);
	ck_assert_uint_eq(r->nrepl, 2);
	const struct repl_log *g = &r->repl[0];
	ck_assert_uint_eq(g->t, 65 * CYCLE_PS); /* when store 64 entered, not store 63 */
	ck_assert_uint_eq(g->n, 64);
	for (uint32_t k = 0; k < 64; k++) {
		assert_carries(g, k, RX(0) + k, k);
		ck_assert_uint_eq(g->s[k].size, 1);
		/* head 100 ns, owned 200, REPL_ACKs 32.5 + 250 ns */
		ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(0) + k, 0)->t, NS(282.5));
	}
	/* the 65th alone, sent at the head: when the 64 committed (282.5 + 100 ns) */
	const struct repl_log *h = &r->repl[1];
	ck_assert_uint_eq(h->n, 1);
	assert_carries(h, 0, RX(0), 64);
	ck_assert_uint_eq(h->t, req(r, CXS_OP_STORE, RX(0), 0)->done);
	ck_assert_uint_eq(h->t, NS(382.5));
	ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(0), 1)->t, NS(382.5) + REPL_PS);
	ck_assert_uint_eq(counter(r, "repl_at_entry"), 1);
	ck_assert_uint_eq(counter(r, "repl_at_head"), 1);
	ck_assert_uint_eq(counter(r, "sb_transactions"), 3);
	ck_assert_uint_eq(early_or_unreplicated(r), 0);
	rig_free(r);
}
END_TEST

START_TEST(test_proactive_group_still_unsent_at_the_head_sends_there_and_counts_at_head)
{
	sc_reset();
	sc_store(LOC(5));
	sc_compute(10);
	uint64_t v0 = sc_store(RX(0)); /* 5 ns */
	sc_compute(10);
	uint64_t v1 = sc_store(RX(0) + 8); /* 10 ns: joins; nothing else comes */
	struct rig *r = sc_run(CXS_PROTO_PROACTIVE, REPL_PS);
	ck_assert_uint_eq(r->nrepl, 1);
	ck_assert_uint_eq(r->repl[0].t, NS(100)); /* at the head, after LOC(5) */
	ck_assert_uint_eq(r->repl[0].n, 2);
	assert_carries(&r->repl[0], 0, RX(0), v0);
	assert_carries(&r->repl[0], 1, RX(0) + 8, v1);
	ck_assert_uint_eq(req(r, CXS_OP_PREFETCH_M, RX(0), 1)->t, NS(100));
	ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(0), 0)->t, NS(350));
	ck_assert_uint_eq(counter(r, "repl_at_head"), 1);
	ck_assert_uint_eq(counter(r, "repl_at_entry"), 0);
	rig_free(r);
}
END_TEST

START_TEST(test_proactive_overlaps_the_repls_of_the_stores_waiting_in_the_buffer)
{
	sc_four_lines();
	struct rig *r = sc_run(CXS_PROTO_PROACTIVE, REPL_PS);
	ck_assert_uint_eq(r->nrepl, 4);
	/* RX(0..2) send as the next store enters: three out before the first REPL_ACK (260 ns) */
	for (uint32_t i = 0; i < 3; i++)
		ck_assert_uint_eq(r->repl[i].t, NS(10 + 5 * i));
	ck_assert_uint_eq(r->repl[0].acked, NS(260));
	ck_assert_uint_eq(max_repls_outstanding(r), 3);
	/* in order, each when owned and acked: 260, 460, 660; RX(3) sends at its head, 760 */
	ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(0), 0)->t, NS(260));
	ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(1), 0)->t, NS(460));
	ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(2), 0)->t, NS(660));
	ck_assert_uint_eq(r->repl[3].t, NS(760));
	ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(3), 0)->t, NS(1010));
	ck_assert_uint_eq(cxs_core_roi_end(r->core), NS(1110));
	rig_free(r);

	/* parallel on the same stores: one REPL at a time, each at its head; 390 ns longer */
	r = sc_run(CXS_PROTO_PARALLEL, REPL_PS);
	ck_assert_uint_eq(max_repls_outstanding(r), 1);
	ck_assert_uint_eq(cxs_core_roi_end(r->core), NS(1500));
	rig_free(r);
}
END_TEST

START_TEST(test_proactive_issues_groups_in_order_each_only_when_its_repl_acks_are_in)
{
	sc_four_lines();
	struct rig *r = sc_rig(CXS_PROTO_PROACTIVE, REPL_BY_HAND, false);
	run_until(r, NS(1000));
	ck_assert_int_eq(r->rc, 0);
	/* RX(0) owned at 200 ns but not acked: no remote store has gone */
	ck_assert_uint_eq(r->nrepl, 3);
	/* the three went on entry (not flagged at-head); RX(0)'s group reached the head
	 * still waiting, which the CN hears once (it may resend a REPL a full LU refused) */
	for (uint32_t i = 0; i < 3; i++)
		ck_assert(!r->repl[i].at_head);
	ck_assert_uint_eq(r->nat_head, 1);
	ck_assert_uint_eq(r->at_head[0].id, r->repl[0].id);
	ck_assert_uint_eq(req(r, CXS_OP_PREFETCH_M, RX(0), 1)->done, NS(200));
	ck_assert_uint_eq(count_op(r, CXS_OP_STORE), 1); /* LOC(5) */
	/* the REPL_ACKs of the younger groups first: still nothing passes RX(0) */
	rig_ack(r, 2, NS(1000));
	rig_ack(r, 1, NS(1100));
	run_until(r, NS(1150));
	ck_assert_int_eq(r->rc, 0);
	ck_assert_uint_eq(count_op(r, CXS_OP_STORE), 1);
	/* RX(0)'s at 1200 ns: RX(0) 1200..1300, RX(1) owned 1300..1400, RX(2) 1500..1600 */
	rig_ack(r, 0, NS(1200));
	run_until(r, NS(1800));
	ck_assert_int_eq(r->rc, 0);
	ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(0), 0)->t, NS(1200));
	ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(1), 0)->t, NS(1400));
	ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(2), 0)->t, NS(1600));
	/* RX(3) reached the head unsent at 1700 ns: sent there, flagged at-head, waits;
	 * RX(1) and RX(2) were acked before their heads: no at-head call for them */
	ck_assert_uint_eq(r->nrepl, 4);
	ck_assert_uint_eq(r->repl[3].t, NS(1700));
	ck_assert(r->repl[3].at_head);
	ck_assert_uint_eq(r->nat_head, 1);
	ck_assert_int_eq(find_req(r, CXS_OP_STORE, RX(3), 0), -1);
	rig_ack(r, 3, NS(2000));
	run_ok(r);
	ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(3), 0)->t, NS(2000));
	ck_assert_uint_eq(early_or_unreplicated(r), 0);
	rig_free(r);
}
END_TEST

/* -- proactive_noc -- */

START_TEST(test_proactive_noc_replicates_each_store_alone_on_entry_and_never_coalesces)
{
	sc_reset();
	sc_store(LOC(5));
	sc_compute(10);
	uint64_t v0 = sc_store(RX(0)); /* 5 ns */
	sc_compute(10);
	uint64_t v1 = sc_store(RX(0) + 8); /* 10 ns */
	sc_compute(10);
	uint64_t v2 = sc_store(RX(1)); /* 15 ns */
	sc_compute(10);
	sc_store(LOC1(7)); /* 20 ns */
	sc_compute(10);
	sc_store(LOC1(7) + 8); /* 25 ns */
	struct rig *r = sc_run(CXS_PROTO_PROACTIVE_NOC, REPL_PS);
	ck_assert_uint_eq(r->nrepl, 3);
	const uint64_t addr[] = {RX(0), RX(0) + 8, RX(1)}, val[] = {v0, v1, v2};
	for (uint32_t i = 0; i < 3; i++) {
		ck_assert_uint_eq(r->repl[i].t, NS(5 + 5 * i));
		ck_assert_uint_eq(r->repl[i].n, 1);
		assert_carries(&r->repl[i], 0, addr[i], val[i]);
	}
	ck_assert_uint_eq(counter(r, "repl_at_entry"), 3);
	ck_assert_uint_eq(counter(r, "repl_at_head"), 0);
	/* every store its own transaction, even to one line: RX(0)+8 is owned anew after RX(0) */
	ck_assert_uint_eq(counter(r, "sb_transactions"), 6);
	ck_assert_uint_eq(counter(r, "sb_coalesced"), 0);
	ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(0), 0)->t, NS(255));
	ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(0) + 8, 0)->t, NS(455));
	ck_assert_uint_eq(req(r, CXS_OP_STORE, LOC1(7) + 8, 0)->t,
			  req(r, CXS_OP_STORE, LOC1(7), 0)->done);
	ck_assert_uint_eq(early_or_unreplicated(r), 0);
	rig_free(r);
}
END_TEST

/* -- fault injection -- */

START_TEST(test_commit_before_ack_issues_the_stores_without_waiting_for_the_repl_acks)
{
	for (size_t i = 0; i < sizeof replicating; i++) {
		sc_reset();
		sc_store(LOC(5));
		sc_compute(10);
		sc_store(RX(0));
		sc_compute(10);
		sc_store(RX(1));
		/* the rule: no REPL_ACK ever comes, so no remote store goes */
		struct rig *r = sc_rig(replicating[i], REPL_BY_HAND, false);
		run(r);
		ck_assert_msg(r->rc == 0, "%s", r->err);
		ck_assert(!cxs_core_done(r->core));
		ck_assert_uint_eq(count_op(r, CXS_OP_STORE), 1);
		ck_assert_uint_eq(early_or_unreplicated(r), 0);
		rig_free(r);
		/* the fault: both go once owned, replicated but unacknowledged */
		r = sc_rig(replicating[i], REPL_BY_HAND, true);
		run_ok(r);
		ck_assert_uint_eq(r->nrepl, 2);
		ck_assert_uint_eq(early_or_unreplicated(r), 2);
		ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(0), 0)->t,
				  req(r, CXS_OP_PREFETCH_M, RX(0), 1)->done);
		rig_free(r);
	}
}
END_TEST

/* -- atomics -- */

static void sc_atomics(uint64_t *v0)
{
	sc_reset();
	*v0 = sc_store(RX(0));
	sc_atomic(SC_SWAP, RX(1), 77);
	sc_atomic(SC_FETCH_ADD, RX(2), 5);
	sc_atomic(SC_SWAP, LOC1(3), 9);
}

START_TEST(test_remote_atomic_replicated_alone_with_its_operand_issued_after_repl_acks)
{
	for (size_t i = 0; i < sizeof replicating; i++) {
		uint64_t v0;
		sc_atomics(&v0);
		struct rig *r = sc_run(replicating[i], REPL_PS);
		ck_assert_uint_eq(r->nrepl, 3); /* the store's, the two remote atomics'; not the local one */
		const struct repl_log *st = NULL;
		ck_assert_uint_eq(repls_with(r, RX(0), v0, false, &st), 1);
		ck_assert_uint_eq(st->n, 1);
		const struct req_log *sw = req(r, CXS_OP_SWAP, RX(1), 0);
		const struct req_log *fa = req(r, CXS_OP_FETCH_ADD, RX(2), 0);
		const struct req_log *loc = req(r, CXS_OP_SWAP, LOC1(3), 0);
		const struct repl_log *k = &r->repl[1];
		ck_assert(k->atomic);
		ck_assert_uint_eq(k->n, 1);
		assert_carries(k, 0, RX(1), 77);
		ck_assert_uint_eq(k->s[0].size, 8);
		/* replicated when the buffer has drained, issued when its REPL_ACKs are in */
		ck_assert_uint_eq(k->t, req(r, CXS_OP_STORE, RX(0), 0)->done);
		ck_assert_uint_eq(sw->t, k->t + REPL_PS);
		ck_assert_uint_eq(sw->r.repl, k->id);
		k = &r->repl[2];
		ck_assert(k->atomic);
		ck_assert_uint_eq(k->n, 1);
		assert_carries(k, 0, RX(2), 5);
		ck_assert_uint_eq(k->t, sw->done);
		ck_assert_uint_eq(fa->t, k->t + REPL_PS);
		ck_assert_uint_eq(fa->r.repl, k->id);
		/* the local atomic goes at once, unreplicated */
		ck_assert_uint_eq(loc->t, fa->done);
		ck_assert_uint_eq(loc->r.repl, 0);
		ck_assert_uint_eq(io.got[0], RX(1) * 3);
		ck_assert_uint_eq(io.got[1], RX(2) * 3);
		ck_assert_uint_eq(mem_read(r, RX(1), 8), 77);
		ck_assert_uint_eq(mem_read(r, RX(2), 8), RX(2) * 3 + 5);
		ck_assert_uint_eq(mem_read(r, LOC1(3), 8), 9);
		ck_assert_uint_eq(early_or_unreplicated(r), 0);
		rig_free(r);
	}
}
END_TEST

START_TEST(test_wb_and_wt_replicate_neither_stores_nor_atomics)
{
	const uint8_t protos[] = {CXS_PROTO_WB, CXS_PROTO_WT};
	for (size_t i = 0; i < sizeof protos; i++) {
		uint64_t v0;
		sc_atomics(&v0);
		struct rig *r = sc_run(protos[i], REPL_PS);
		ck_assert_uint_eq(r->nrepl, 0);
		/* the swap goes as soon as the buffer has drained */
		ck_assert_uint_eq(req(r, CXS_OP_SWAP, RX(1), 0)->t, req(r, CXS_OP_STORE, RX(0), 0)->done);
		assert_repl_tags(r, false);
		ck_assert_uint_eq(counter(r, "repl_at_head") + counter(r, "repl_at_entry"), 0);
		rig_free(r);
	}
}
END_TEST

/* -- replication ids on the requests -- */

START_TEST(test_requests_of_a_replicated_store_carry_its_replication_id_and_the_others_0)
{
	for (uint8_t proto = 0; proto < CXS_PROTO_COUNT; proto++) {
		sc_reset();
		sc_store(LOC(5));
		sc_compute(10);
		sc_store(RX(0));
		sc_store(RX(0) + 8);
		sc_compute(10);
		sc_store(RX(1));
		sc_store(LOC1(7));
		sc_store(RW(2));
		sc_store(RW(2) + 8);
		sc_atomic(SC_FETCH_ADD, RX(3), 1);
		struct rig *r = sc_run(proto, REPL_PS);
		bool replicates = cxs_protocol_replicates(proto);
		ck_assert_uint_eq(r->nrepl > 0, replicates);
		assert_repl_tags(r, replicates);
		/* distinct groups, distinct ids; under a protocol that coalesces, one id per line */
		uint32_t a = req(r, CXS_OP_STORE, RX(0), 0)->r.repl;
		uint32_t b = req(r, CXS_OP_STORE, RX(0) + 8, 0)->r.repl;
		uint32_t c = req(r, CXS_OP_STORE, RX(1), 0)->r.repl;
		if (replicates) {
			ck_assert_uint_ne(a, c);
			ck_assert_uint_eq(a == b, proto != CXS_PROTO_PROACTIVE_NOC);
		}
		rig_free(r);
	}
}
END_TEST

/* -- Fig. 16 counters -- */

/*
 * A load miss (100 ns) holds retirement; behind it RX(0), RX(1) and RW(2)
 * enter the window at 0 and the buffer at 100 ns. Each of the three spends
 * 100 ns in the window; the rest is the protocol's.
 */
static void fig16_case(uint8_t proto, cxs_time sb, cxs_time coh, cxs_time repl, uint64_t at_entry,
		       uint64_t at_head)
{
	sc_reset();
	sc_load(LOC(9));
	sc_store(RX(0));
	sc_store(RX(1));
	sc_store(RW(2));
	sc_store(LOC1(7)); /* not a remote store: not counted */
	struct rig *r = sc_run(proto, REPL_PS);
	ck_assert_uint_eq(counter(r, "remote_stores"), 3);
	ck_assert_uint_eq(counter(r, "rw_rob_ps"), 3 * MEM_PS);
	ck_assert_uint_eq(counter(r, "rw_sb_ps"), sb);
	ck_assert_uint_eq(counter(r, "rw_coh_ps"), coh);
	ck_assert_uint_eq(counter(r, "rw_repl_ps"), repl);
	ck_assert_uint_eq(counter(r, "repl_at_entry"), at_entry);
	ck_assert_uint_eq(counter(r, "repl_at_head"), at_head);
	rig_free(r);
}

START_TEST(test_fig16_counters_of_proactive_are_the_times_its_latencies_imply)
{
	/*
	 * RX(0) and RX(1) send as the next store enters (100 ns), RW(2) as
	 * LOC1(7) does. RX(0): head 100, owned 200, acked 350, done 450. RX(1):
	 * head 450 (350 in the buffer), owned 550 (acked before). RW(2): head
	 * 650 (550), owned at once, acked 350, done 652.5. LOC1(7) last.
	 */
	fig16_case(CXS_PROTO_PROACTIVE, NS(0 + 350 + 550), NS(100 + 100 + 0), NS(150 + 0 + 0), 3, 0);
}
END_TEST

START_TEST(test_fig16_counters_of_baseline_are_the_times_its_latencies_imply)
{
	/*
	 * RX(0): head 100, owned 200, acked 450, done 550. RX(1): head 550,
	 * owned 650, acked 900, done 1000. RW(2): head 1000, owned at once,
	 * acked 1250.
	 */
	fig16_case(CXS_PROTO_BASELINE, NS(0 + 450 + 900), NS(100 + 100 + 0), NS(250 + 250 + 250), 0,
		   3);
}
END_TEST

START_TEST(test_fig16_counters_of_wb_count_the_store_requests_as_coherence)
{
	/* RX(0) 100..200, RX(1) 200..300, RW(2) 300..302.5: no replication */
	fig16_case(CXS_PROTO_WB, NS(0 + 100 + 200), NS(100 + 100 + 2.5), 0, 0, 0);
}
END_TEST

/* -- misuse -- */

START_TEST(test_replicated_for_an_id_no_store_waits_for_is_an_error_not_a_crash)
{
	char err[256] = "";
	/* a core whose buffer is empty */
	sc_reset();
	sc_store(RX(0));
	struct rig *r = sc_run(CXS_PROTO_PROACTIVE, REPL_PS);
	ck_assert_int_eq(cxs_core_replicated(r->core, r->now, REPL_ID(7), err, sizeof err), -1);
	ck_assert_msg(strstr(err, "no store") != NULL, "%s", err);
	rig_free(r);

	/* stores waiting for their REPL_ACKs (RX(0..2) sent by 20 ns) */
	sc_four_lines();
	r = sc_rig(CXS_PROTO_PROACTIVE, REPL_BY_HAND, false);
	run_until(r, NS(50));
	ck_assert_uint_eq(r->nrepl, 3);
	err[0] = '\0';
	ck_assert_int_eq(cxs_core_replicated(r->core, r->now, REPL_ID(3), err, sizeof err), -1);
	ck_assert_msg(strstr(err, "no store") != NULL, "%s", err);
	ck_assert_int_eq(cxs_core_replicated(r->core, r->now, 0, err, sizeof err), -1);
	/*
	 * Regression (a second cxs_core_replicated for a replication whose
	 * REPL_ACKs were in was accepted, and moved the stores' REPL_ACK time):
	 * RX(1)'s delivered, then again: the second names nothing that waits.
	 */
	rig_ack(r, 1, NS(60));
	run_until(r, NS(70));
	ck_assert_msg(r->rc == 0, "%s", r->err);
	err[0] = '\0';
	ck_assert_int_eq(cxs_core_replicated(r->core, r->now, r->repl[1].id, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "no store") != NULL, "%s", err);
	/* nothing was disturbed: with the real REPL_ACKs the stores go in order, on time */
	ck_assert_uint_eq(r->repl[1].acked, NS(60));
	rig_ack(r, 0, NS(300));
	rig_ack(r, 2, NS(300));
	r->repl_ps = REPL_PS; /* RX(3)'s, sent later */
	run_ok(r);
	ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(0), 0)->t, NS(300));
	ck_assert_uint_eq(req(r, CXS_OP_STORE, RX(1), 0)->t, NS(500)); /* owned 400..500 */
	ck_assert_uint_eq(early_or_unreplicated(r), 0);
	ck_assert_uint_eq(counter(r, "rw_repl_ps"), NS(300 - 200) + NS(1050 - 900)); /* RX(0), RX(3) */
	rig_free(r);
}
END_TEST

Suite *core_suite(void)
{
	Suite *s = suite_create("core");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_pointer_chase_keeps_one_miss_outstanding);
	tcase_add_test(tc, test_offcore_demand_read_counters_include_l3_hits);
	tcase_add_test(tc, test_independent_misses_fill_the_lfb_of_4_and_no_more);
	tcase_add_test(tc, test_independent_misses_fill_the_lfb_of_12_and_no_more);
	tcase_add_test(tc, test_load_to_a_line_being_filled_is_an_lfb_hit);
	tcase_add_test(tc, test_load_waits_for_its_address_producer_while_later_loads_go);
	tcase_add_test(tc, test_loads_without_named_producers_all_overlap);
	tcase_add_test(tc, test_store_value_and_address_from_a_producer);
	tcase_add_test(tc, test_store_forwards_to_covered_loads_from_the_window);
	tcase_add_test(tc, test_store_forwards_to_covered_loads_from_the_store_buffer);
	tcase_add_test(tc, test_partly_covered_load_waits_for_the_store_then_reads_memory);
	tcase_add_test(tc, test_load_needing_no_fill_buffer_is_not_held_behind_a_miss_waiting_for_one);
	tcase_add_test(tc, test_store_to_a_second_line_waits_for_the_first);
	tcase_add_test(tc, test_sb_parallel_fault_issues_both_stores_at_once);
	tcase_add_test(tc, test_consecutive_stores_to_one_line_coalesce_into_one_transaction);
	tcase_add_test(tc, test_store_to_a_line_not_writable_in_l1_prefetches_it_exclusive_at_dispatch);
	tcase_add_test(tc, test_fence_holds_a_later_load_until_the_store_buffer_drains);
	tcase_add_test(tc, test_atomic_waits_for_older_stores_and_younger_loads_wait_for_it);
	tcase_add_test(tc, test_write_through_flags_the_last_store_of_a_transaction_and_waits_for_it);
	tcase_add_test(tc, test_hooks_see_each_store_enter_the_head_held_and_the_group_commit);
	tcase_add_test(tc, test_load_that_performed_early_is_replayed_when_its_line_is_lost);
	tcase_add_test(tc, test_load_in_flight_when_its_line_is_lost_is_replayed_on_completion);
	tcase_add_test(tc, test_no_replay_without_a_lost_line_or_for_the_oldest_load);
	tcase_add_test(tc, test_replay_is_issued_when_the_line_is_lost_not_when_the_frontend_is_free);
	tcase_add_test(tc, test_reorder_buffer_of_16_stalls_dispatch_behind_a_miss);
	tcase_add_test(tc, test_full_store_queue_stalls_the_fifth_store);
	tcase_add_test(tc, test_load_queue_of_2_holds_the_third_load);
	tcase_add_test(tc, test_l1_prefetcher_fetches_the_next_two_lines_within_the_page);
	tcase_add_test(tc, test_l2_prefetcher_fetches_lines_3_to_16_ahead_without_fill_buffers);
	tcase_add_test(tc, test_counters_cover_exactly_the_region_of_interest);
	tcase_add_test(tc, test_idle_passes_time_without_instructions);
	tcase_add_test(tc, test_failing_program_stops_the_core_with_its_message);
	tcase_add_test(tc, test_completion_of_a_request_twice_is_an_error);
	tcase_add_test(tc, test_store_completion_delivered_twice_is_an_error);
	tcase_add_test(tc, test_new_rejects_empty_queues_and_an_oversized_lfb);
	suite_add_tcase(s, tc);

	/* DIKTAMO's remote-store protocols in the store buffer (§IV-D) */
	tc = tcase_create("protocols");
	tcase_add_test(tc, test_baseline_repl_after_ownership_and_stores_after_the_repl_acks);
	tcase_add_test(tc, test_baseline_replicates_at_once_at_the_head_when_the_line_is_writable_in_l1);
	tcase_add_test(tc, test_local_store_is_never_replicated_and_performs_at_the_head);
	tcase_add_test(tc, test_parallel_repl_and_ownership_start_at_the_head_stores_wait_for_repl_acks);
	tcase_add_test(tc, test_parallel_repl_and_ownership_start_at_the_head_stores_wait_for_ownership);
	tcase_add_test(tc, test_proactive_repl_goes_when_the_next_store_cannot_coalesce_not_on_entry);
	tcase_add_test(tc, test_proactive_run_of_stores_to_one_line_is_one_repl_of_all_of_them);
	tcase_add_test(tc, test_proactive_group_is_full_at_64_stores_and_sends_when_the_65th_enters);
	tcase_add_test(tc, test_proactive_group_still_unsent_at_the_head_sends_there_and_counts_at_head);
	tcase_add_test(tc, test_proactive_overlaps_the_repls_of_the_stores_waiting_in_the_buffer);
	tcase_add_test(tc, test_proactive_issues_groups_in_order_each_only_when_its_repl_acks_are_in);
	tcase_add_test(tc, test_proactive_noc_replicates_each_store_alone_on_entry_and_never_coalesces);
	tcase_add_test(tc, test_commit_before_ack_issues_the_stores_without_waiting_for_the_repl_acks);
	tcase_add_test(tc, test_remote_atomic_replicated_alone_with_its_operand_issued_after_repl_acks);
	tcase_add_test(tc, test_wb_and_wt_replicate_neither_stores_nor_atomics);
	tcase_add_test(tc, test_requests_of_a_replicated_store_carry_its_replication_id_and_the_others_0);
	tcase_add_test(tc, test_fig16_counters_of_proactive_are_the_times_its_latencies_imply);
	tcase_add_test(tc, test_fig16_counters_of_baseline_are_the_times_its_latencies_imply);
	tcase_add_test(tc, test_fig16_counters_of_wb_count_the_store_requests_as_coherence);
	tcase_add_test(tc, test_replicated_for_an_id_no_store_waits_for_is_an_error_not_a_crash);
	suite_add_tcase(s, tc);
	return s;
}
