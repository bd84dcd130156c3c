/*
 * Unit tests for the CXL.mem coherence protocol (include/cxlsim/coherence.h):
 * the home directory (src/mem/home.c) and the CN agent (src/mem/cn_agent.c)
 * wired to each other through a fake world, without the engine or MPI.
 *
 * The world: homes on nodes 4 and 5 (CXL lines interleaved over them line by
 * line), two to four CNs on nodes 0..3 with two cores each and tiny caches
 * (L1 1 KiB 2-way, L2 2 KiB 2-way, L3 4 KiB 4-way = 16 sets), so that five
 * CXL lines k, k+16, k+32, k+48, k+64 fill an L3 set and evict its LRU line.
 * Every message a state machine emits is appended to one list with its send
 * time; nothing moves until a test delivers it, either one chosen message at
 * a time (to force a race: deliver an INV before the GETM it crosses, a
 * RECALL before the PUT_ACK ...) or with pump(), which delivers everything in
 * time order while keeping each (source, destination) pair FIFO, as the
 * fabric does. Completed requests are recorded with their value.
 *
 * A failed CN (fail_cn) receives nothing any more: what was in flight to it
 * is discarded, and a message a home sends it afterwards fails the test at
 * once. What it sent before failing stays in flight, for the tests to deliver.
 *
 * Expected states are written as cxs_cn_line_state spells them ("S+SM_D",
 * "I+MI_A"); expected values are chosen constants, never recomputed with the
 * code under test.
 */
#include <check.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxlsim/coherence.h"
#include "unit_suites.h"

#define MN0 4u             /* node of the first home */
#define CYCLE_PS 417       /* 2.4 GHz */
#define DIR_PS 20000       /* directory lookup */
#define DRAM_PS 50000      /* MN DRAM access */
#define LOCAL_DRAM_PS 60000
#define LINK_PS 90000      /* one-way flight, added at delivery */
#define L3_SETS 16         /* 4 KiB / (4 ways * 64 B) */
#define ANY UINT32_MAX
#define ANY_LINE UINT64_MAX

enum { MAX_MNS = 2, MAX_CNS = 4, MAX_MSGS = 512, MAX_DONE = 128, MAX_LOCAL = 128,
       MAX_OWNED = 16 };

/* ---- the fake world ------------------------------------------------------ */

struct sent {
	cxs_time when;
	struct cxs_coh_msg m;
	int delivered;
};

struct done {
	uint32_t node;
	cxs_time when;
	struct cxs_mem_req r;
	uint64_t value;
};

struct local_access {
	uint32_t node;
	uint64_t line;
	int is_write;
};

struct cn_ctx {
	uint32_t node;
};

static struct {
	struct cxs_addr_map map;
	uint32_t nmns, ncns;
	struct cxs_home home[MAX_MNS];
	struct cxs_cn *cn[MAX_CNS];
	struct cn_ctx ctx[MAX_CNS];
	struct sent q[MAX_MSGS];
	size_t nq;
	struct done d[MAX_DONE];
	size_t nd;
	struct local_access local[MAX_LOCAL];
	size_t nlocal;
	unsigned dram_reads, dram_writes;
	cxs_time now; /* time of the call in progress, or of the last one */
	uint64_t next_tag;
	uint32_t dead;              /* bit per failed CN (fail_cn) */
	uint64_t owned[MAX_OWNED];  /* lines reported owned by the last fail_cn, in order */
	size_t nowned;
} W;

static void record(cxs_time when, const struct cxs_coh_msg *m)
{
	ck_assert_msg(W.nq < MAX_MSGS, "message list full");
	/* The contract: messages leave at or after the current time. */
	ck_assert_msg(when >= W.now, "%s %u->%u sent at %" PRIu64 " before now %" PRIu64,
		      cxs_msg_info(m->type)->name, m->src, m->dst, when, W.now);
	/* Nothing may be sent to a CN the homes know to have failed. */
	ck_assert_msg(m->dst >= MN0 || !(W.dead >> m->dst & 1), "%s %u->%u: node %u has failed",
		      cxs_msg_info(m->type)->name, m->src, m->dst, m->dst);
	W.q[W.nq].when = when;
	W.q[W.nq].m = *m;
	W.q[W.nq].delivered = 0;
	W.nq++;
}

static void home_send(void *ctx, cxs_time when, const struct cxs_coh_msg *m)
{
	ck_assert_ptr_eq(ctx, &W);
	ck_assert_uint_ge(m->src, MN0);
	record(when, m);
}

static cxs_time home_dram(void *ctx, cxs_time now, uint64_t line, int is_write)
{
	(void)ctx;
	(void)line;
	if (is_write)
		W.dram_writes++;
	else
		W.dram_reads++;
	return now + DRAM_PS;
}

static void cn_send(void *ctx, cxs_time when, const struct cxs_coh_msg *m)
{
	const struct cn_ctx *c = ctx;
	ck_assert_uint_eq(m->src, c->node);
	record(when, m);
}

static void cn_complete(void *ctx, cxs_time when, const struct cxs_mem_req *r, uint64_t value)
{
	const struct cn_ctx *c = ctx;
	ck_assert_msg(W.nd < MAX_DONE, "completion list full");
	W.d[W.nd++] = (struct done){.node = c->node, .when = when, .r = *r, .value = value};
}

static cxs_time cn_local_dram(void *ctx, cxs_time now, uint64_t line, int is_write)
{
	const struct cn_ctx *c = ctx;
	ck_assert_msg(W.nlocal < MAX_LOCAL, "local access list full");
	W.local[W.nlocal++] = (struct local_access){c->node, line, is_write};
	return now + LOCAL_DRAM_PS;
}

static void world_setup_l3(uint32_t nmns, uint32_t ncns, uint64_t l3_bytes, uint32_t l3_ways)
{
	char err[256] = "";

	memset(&W, 0, sizeof W);
	ck_assert(nmns <= MAX_MNS && ncns <= MAX_CNS);
	W.nmns = nmns;
	W.ncns = ncns;
	struct cxs_addr_map_params mp = {
		.nmns = nmns,
		.local_bytes = UINT64_C(1) << 20,
		.cxl_bytes = UINT64_C(1) << 20,
		.interleave_bytes = 64,
	};
	ck_assert_msg(cxs_addr_map_init(&W.map, &mp, err, sizeof err) == 0, "%s", err);
	const struct cxs_home_env he = {.ctx = &W, .send = home_send, .dram = home_dram};
	for (uint32_t i = 0; i < nmns; i++)
		ck_assert_int_eq(cxs_home_init(&W.home[i], MN0 + i, ncns, DIR_PS, &he, NULL), 0);
	const struct cxs_cn_params p = {
		.ncores = 2,
		.l1 = {.size_bytes = 1024, .ways = 2, .latency_cycles = 5},
		.l2 = {.size_bytes = 2048, .ways = 2, .latency_cycles = 13},
		.l3 = {.size_bytes = l3_bytes, .ways = l3_ways, .latency_cycles = 36},
		.cycle_ps = CYCLE_PS,
		.map = &W.map,
		.first_mn_node = MN0,
	};
	for (uint32_t c = 0; c < ncns; c++) {
		W.ctx[c].node = c;
		const struct cxs_cn_env ce = {.ctx = &W.ctx[c], .send = cn_send,
					      .complete = cn_complete, .local_dram = cn_local_dram};
		W.cn[c] = cxs_cn_new(c, &p, &ce, NULL, err, sizeof err);
		ck_assert_msg(W.cn[c] != NULL, "cxs_cn_new: %s", err);
	}
	W.now = CXS_PS_PER_US;
}

static void world_setup(uint32_t nmns, uint32_t ncns)
{
	world_setup_l3(nmns, ncns, 4096, 4);
}

static void world_teardown(void)
{
	for (uint32_t c = 0; c < W.ncns; c++)
		cxs_cn_free(W.cn[c]);
	for (uint32_t i = 0; i < W.nmns; i++)
		cxs_home_free(&W.home[i]);
}

/* ---- addresses ------------------------------------------------------------ */

/* Byte address of CXL line k: home MN0 + k % 2 with two MNs, L3 set k % 16. */
static uint64_t cxl(uint64_t k)
{
	return CXS_CXL_BASE + k * CXS_LINE_BYTES;
}

static uint64_t line_of(uint64_t addr)
{
	return addr >> CXS_LINE_SHIFT;
}

static struct cxs_home *home_of_addr(uint64_t addr)
{
	struct cxs_addr_target t = cxs_addr_map_lookup(&W.map, addr);
	ck_assert_int_eq(t.kind, CXS_ADDR_CXL);
	return &W.home[t.mn];
}

static uint32_t home_node(uint64_t addr)
{
	return home_of_addr(addr)->node;
}

static const struct cxs_home_entry *entry(uint64_t addr)
{
	const struct cxs_home_entry *e = cxs_home_entry(home_of_addr(addr), line_of(addr));
	ck_assert_msg(e != NULL, "home has no entry for %#" PRIx64, addr);
	return e;
}

static uint64_t le64(const uint8_t *d)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | d[i];
	return v;
}

/* 8 bytes of home memory at addr. */
static uint64_t mem64(uint64_t addr)
{
	uint8_t d[CXS_LINE_BYTES];
	cxs_home_read(home_of_addr(addr), line_of(addr), d);
	return le64(d + (addr & (CXS_LINE_BYTES - 1)));
}

/* 8 bytes at addr as CN cn has them cached (must be cached). */
static uint64_t peek(uint32_t cn, uint64_t addr)
{
	uint64_t v = 0;
	ck_assert_msg(cxs_cn_peek(W.cn[cn], addr, 8, &v) == 1, "CN %u has %#" PRIx64 " uncached", cn,
		      addr);
	return v;
}

static const char *state(uint32_t cn, uint64_t addr)
{
	return cxs_cn_line_state(W.cn[cn], line_of(addr));
}

/* "0x..." of the line of addr, as the protocol's messages print it. */
static const char *line_hex(uint64_t addr)
{
	static char buf[32];
	snprintf(buf, sizeof buf, "%#" PRIx64, line_of(addr));
	return buf;
}

/* ---- messages --------------------------------------------------------------- */

static const char *inflight(void)
{
	static char buf[4096];
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < W.nq && n < sizeof buf - 80; i++)
		if (!W.q[i].delivered)
			n += (size_t)snprintf(buf + n, sizeof buf - n, " [%zu %s %u->%u %#" PRIx64 "]", i,
					      cxs_msg_info(W.q[i].m.type)->name, W.q[i].m.src,
					      W.q[i].m.dst, W.q[i].m.line);
	return n ? buf : " none";
}

static int match(size_t i, uint32_t type, uint32_t src, uint32_t dst, uint64_t line)
{
	const struct cxs_coh_msg *m = &W.q[i].m;
	return !W.q[i].delivered && (type == ANY || m->type == type) &&
	       (src == ANY || m->src == src) && (dst == ANY || m->dst == dst) &&
	       (line == ANY_LINE || m->line == line);
}

static unsigned count_msgs(uint32_t type, uint32_t src, uint32_t dst, uint64_t line)
{
	unsigned n = 0;
	for (size_t i = 0; i < W.nq; i++)
		n += (unsigned)match(i, type, src, dst, line);
	return n;
}

static size_t in_flight(void)
{
	return count_msgs(ANY, ANY, ANY, ANY_LINE);
}

/* The first undelivered message of that kind; fails the test if there is none. */
#define EXPECT(type, src, dst, addr) expect_msg(type, src, dst, line_of(addr), __LINE__)
static size_t expect_msg(uint32_t type, uint32_t src, uint32_t dst, uint64_t line, int at)
{
	for (size_t i = 0; i < W.nq; i++)
		if (match(i, type, src, dst, line))
			return i;
	ck_abort_msg("line %d: no %s %u->%u for line %#" PRIx64 " in flight; in flight:%s", at,
		     cxs_msg_info(type)->name, src, dst, line, inflight());
	return 0;
}

static cxs_time deliver_rc(size_t i, int *rc, char *err, size_t errlen)
{
	ck_assert_msg(i < W.nq && !W.q[i].delivered, "message %zu is not in flight", i);
	W.q[i].delivered = 1;
	const struct cxs_coh_msg m = W.q[i].m;
	cxs_time at = (W.q[i].when > W.now ? W.q[i].when : W.now) + LINK_PS;
	W.now = at;
	err[0] = '\0';
	if (m.dst >= MN0) {
		ck_assert_uint_lt(m.dst - MN0, W.nmns);
		*rc = cxs_home_handle(&W.home[m.dst - MN0], at, &m, err, errlen);
	} else {
		ck_assert_uint_lt(m.dst, W.ncns);
		*rc = cxs_cn_handle(W.cn[m.dst], at, &m, err, errlen);
	}
	return at;
}

/* Delivers message i, which must be accepted; returns the delivery time. */
static cxs_time deliver(size_t i)
{
	char err[512];
	int rc;
	cxs_time at = deliver_rc(i, &rc, err, sizeof err);
	ck_assert_msg(rc == 0, "delivering %s %u->%u: %s", cxs_msg_info(W.q[i].m.type)->name,
		      W.q[i].m.src, W.q[i].m.dst, err);
	return at;
}

/* Whether message i is the oldest undelivered one between its two nodes. */
static int pair_head(size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (!W.q[j].delivered && W.q[j].m.src == W.q[i].m.src && W.q[j].m.dst == W.q[i].m.dst)
			return 0;
	return 1;
}

/* Delivers everything in flight, earliest first, FIFO per pair, until quiet. */
static void pump(void)
{
	for (int guard = 0; guard < 10000; guard++) {
		size_t best = SIZE_MAX;
		for (size_t i = 0; i < W.nq; i++)
			if (!W.q[i].delivered && pair_head(i) &&
			    (best == SIZE_MAX || W.q[i].when < W.q[best].when))
				best = i;
		if (best == SIZE_MAX)
			return;
		deliver(best);
	}
	ck_abort_msg("pump: the protocol does not settle");
}

static uint64_t msg64(size_t i, uint32_t off)
{
	return le64(W.q[i].m.data + off);
}

/* ---- requests ----------------------------------------------------------------- */

static uint64_t issue_flags(uint32_t cn, uint32_t core, uint8_t op, uint64_t addr, uint8_t size,
			    uint64_t value, uint8_t flags)
{
	char err[256] = "";
	W.now += 1000; /* requests at distinct times */
	struct cxs_mem_req r = {.addr = addr, .value = value, .tag = ++W.next_tag,
				.issued = W.now, .core = core, .op = op, .size = size,
				.flags = flags};
	ck_assert_msg(cxs_cn_request(W.cn[cn], W.now, &r, err, sizeof err) == 0, "request: %s",
		      err);
	return r.tag;
}

static uint64_t issue(uint32_t cn, uint32_t core, uint8_t op, uint64_t addr, uint8_t size,
		      uint64_t value)
{
	return issue_flags(cn, core, op, addr, size, value, 0);
}

static uint64_t load(uint32_t cn, uint32_t core, uint64_t addr)
{
	return issue(cn, core, CXS_OP_LOAD, addr, 8, 0);
}

static uint64_t store(uint32_t cn, uint32_t core, uint64_t addr, uint64_t value)
{
	return issue(cn, core, CXS_OP_STORE, addr, 8, value);
}

static const struct done *result(uint64_t tag)
{
	for (size_t i = 0; i < W.nd; i++)
		if (W.d[i].r.tag == tag)
			return &W.d[i];
	return NULL;
}

static uint64_t value_of(uint64_t tag)
{
	const struct done *d = result(tag);
	ck_assert_msg(d != NULL, "request %" PRIu64 " has not completed; in flight:%s", tag,
		      inflight());
	return d->value;
}

/* Loads lines k + 16, k + 32, ... (n of them, the same L3 set as k) on one CN, to
 * completion: with n = 4 the set's LRU line is evicted by the last fill. */
static void fill_l3_set(uint32_t cn, uint32_t core, uint64_t k, int n)
{
	for (int i = 1; i <= n; i++) {
		uint64_t t = load(cn, core, cxl(k + (uint64_t)i * L3_SETS));
		pump();
		ck_assert_ptr_nonnull(result(t));
	}
}

/* Brings line addr to S in CN a and CN b (a gets E first, b's GETS recalls it). */
static void share(uint32_t a, uint32_t b, uint64_t addr)
{
	load(a, 0, addr);
	pump();
	load(b, 0, addr);
	pump();
	ck_assert_str_eq(state(a, addr), "S");
	ck_assert_str_eq(state(b, addr), "S");
}

/* ---- 1. basic MESI ------------------------------------------------------------ */

START_TEST(test_mesi_basic)
{
	world_setup(2, 2);
	const uint64_t x = cxl(0);
	const uint64_t v = UINT64_C(0x1122334455667788);

	/* GETS to an uncached line: DATA_E, CN in E, home EM with the CN as owner. */
	uint64_t t0 = load(0, 0, x);
	ck_assert_str_eq(state(0, x), "I+IS_D");
	ck_assert_uint_eq(in_flight(), 1);
	deliver(EXPECT(CXS_MSG_GETS, 0, MN0, x));
	const struct cxs_home_entry *e = entry(x);
	ck_assert_uint_eq(e->state, CXS_D_EM);
	ck_assert_uint_eq(e->owner, 0);
	size_t i = EXPECT(CXS_MSG_DATA_E, MN0, 0, x);
	ck_assert_uint_eq(W.q[i].m.epoch, 1);
	ck_assert_ptr_null(result(t0));
	deliver(i);
	ck_assert_str_eq(state(0, x), "E");
	ck_assert_uint_eq(value_of(t0), 0);

	/* A second CN's GETS recalls the owner to S. */
	uint64_t t1 = load(1, 0, x);
	deliver(EXPECT(CXS_MSG_GETS, 1, MN0, x));
	ck_assert_uint_eq(e->busy, CXS_HB_RECALL);
	ck_assert_uint_eq(count_msgs(CXS_MSG_DATA_S, ANY, ANY, ANY_LINE), 0);
	deliver(EXPECT(CXS_MSG_RECALL_S, MN0, 0, x));
	ck_assert_str_eq(state(0, x), "S");
	i = EXPECT(CXS_MSG_RECALL_DATA, 0, MN0, x);
	ck_assert_uint_eq(W.q[i].m.dirty, 0);
	deliver(i);
	ck_assert_uint_eq(e->state, CXS_D_S);
	ck_assert_uint_eq(e->busy, CXS_HB_NONE);
	ck_assert_uint_eq(e->sharers, 0x3);
	deliver(EXPECT(CXS_MSG_DATA_S, MN0, 1, x));
	ck_assert_str_eq(state(1, x), "S");
	ck_assert_uint_eq(value_of(t1), 0);
	ck_assert_uint_eq(in_flight(), 0);

	/* A store by CN 1 (core 1) upgrades: INV to CN 0 only, INV_ACK, DATA_M. */
	uint64_t t2 = store(1, 1, x, v);
	ck_assert_str_eq(state(1, x), "S+SM_D");
	deliver(EXPECT(CXS_MSG_GETM, 1, MN0, x));
	ck_assert_uint_eq(count_msgs(CXS_MSG_INV, MN0, ANY, ANY_LINE), 1);
	ck_assert_uint_eq(e->busy, CXS_HB_INV);
	ck_assert_uint_eq(e->acks_left, 1);
	deliver(EXPECT(CXS_MSG_INV, MN0, 0, x));
	ck_assert_str_eq(state(0, x), "I");
	ck_assert_uint_eq(count_msgs(CXS_MSG_DATA_M, ANY, ANY, ANY_LINE), 0);
	deliver(EXPECT(CXS_MSG_INV_ACK, 0, MN0, x));
	ck_assert_uint_eq(e->state, CXS_D_EM);
	ck_assert_uint_eq(e->owner, 1);
	ck_assert_uint_eq(e->sharers, 0);
	i = EXPECT(CXS_MSG_DATA_M, MN0, 1, x);
	ck_assert_uint_eq(W.q[i].m.epoch, 2);
	ck_assert_ptr_null(result(t2));
	deliver(i);
	ck_assert_str_eq(state(1, x), "M");
	ck_assert_ptr_nonnull(result(t2));
	ck_assert_str_eq(state(0, x), "I");

	/* The other core of CN 1 reads the store at once, without a message. */
	size_t nq = W.nq;
	ck_assert_uint_eq(value_of(load(1, 0, x)), v);
	ck_assert_uint_eq(value_of(issue(1, 0, CXS_OP_LOAD, x + 4, 4, 0)), 0x11223344);
	ck_assert_uint_eq(W.nq, nq);

	/* CN 0 reads it through the home: the owner's dirty data. */
	uint64_t t3 = load(0, 1, x);
	pump();
	ck_assert_uint_eq(value_of(t3), v);
	ck_assert_str_eq(state(0, x), "S");
	ck_assert_str_eq(state(1, x), "S");
	ck_assert_uint_eq(mem64(x), v);

	/* A line of the other home takes the same path through node 5. */
	const uint64_t y = cxl(1);
	ck_assert_uint_eq(home_node(y), MN0 + 1);
	uint64_t t4 = store(0, 0, y, 42);
	deliver(EXPECT(CXS_MSG_GETM, 0, MN0 + 1, y));
	deliver(EXPECT(CXS_MSG_DATA_M, MN0 + 1, 0, y));
	ck_assert_ptr_nonnull(result(t4));
	uint64_t t5 = load(1, 0, y);
	pump();
	ck_assert_uint_eq(value_of(t5), 42);
	ck_assert_ptr_null(cxs_home_entry(&W.home[0], line_of(y)));
	world_teardown();
}
END_TEST

/* ---- 2. silent E -> M, dirty recall ---------------------------------------- */

START_TEST(test_e_to_m_silent_then_dirty_recall)
{
	world_setup(2, 2);
	const uint64_t x = cxl(2);
	const uint64_t a = UINT64_C(0xa1a2a3a4a5a6a7a8), b = UINT64_C(0xb1b2b3b4b5b6b7b8);

	load(0, 0, x);
	pump();
	ck_assert_str_eq(state(0, x), "E");
	unsigned reads = W.dram_reads, writes = W.dram_writes;

	/* E -> M: no message, the home still thinks EM with the same owner. */
	size_t nq = W.nq;
	uint64_t t = store(0, 1, x + 8, a);
	ck_assert_ptr_nonnull(result(t));
	ck_assert_uint_eq(W.nq, nq);
	ck_assert_str_eq(state(0, x), "M");
	ck_assert_uint_eq(peek(0, x + 8), a);
	ck_assert_uint_eq(mem64(x + 8), 0);

	/* CN 1 stores: the home recalls the M line (RECALL_I), which comes back dirty. */
	uint64_t t1 = store(1, 0, x, b);
	deliver(EXPECT(CXS_MSG_GETM, 1, MN0, x));
	ck_assert_uint_eq(count_msgs(CXS_MSG_RECALL_S, ANY, ANY, ANY_LINE), 0);
	deliver(EXPECT(CXS_MSG_RECALL_I, MN0, 0, x));
	ck_assert_str_eq(state(0, x), "I");
	size_t i = EXPECT(CXS_MSG_RECALL_DATA, 0, MN0, x);
	ck_assert_uint_eq(W.q[i].m.dirty, 1);
	ck_assert_uint_eq(msg64(i, 8), a);
	deliver(i);
	ck_assert_uint_eq(mem64(x + 8), a);
	ck_assert_uint_eq(W.dram_writes, writes + 1);
	ck_assert_uint_eq(W.dram_reads, reads); /* the data came from the owner */
	ck_assert_uint_eq(entry(x)->owner, 1);
	i = EXPECT(CXS_MSG_DATA_M, MN0, 1, x);
	ck_assert_uint_eq(msg64(i, 8), a);
	deliver(i);
	ck_assert_ptr_nonnull(result(t1));
	ck_assert_str_eq(state(1, x), "M");
	ck_assert_uint_eq(peek(1, x + 8), a);
	ck_assert_uint_eq(peek(1, x), b);
	ck_assert_uint_eq(in_flight(), 0);
	world_teardown();
}
END_TEST

/* ---- 3. INV crossing an upgrade ------------------------------------------------ */

START_TEST(test_inv_crosses_upgrade)
{
	world_setup(2, 2);
	const uint64_t x = cxl(4);
	const uint64_t a = 0xaaaa, b = 0xbbbb;

	share(0, 1, x);
	uint64_t ta = store(0, 0, x, a);     /* offset 0 */
	uint64_t tb = store(1, 0, x + 8, b); /* offset 8 */
	ck_assert_str_eq(state(0, x), "S+SM_D");
	ck_assert_str_eq(state(1, x), "S+SM_D");

	/* The home orders CN 0 first and invalidates CN 1, whose GETM is still in flight. */
	size_t getm1 = EXPECT(CXS_MSG_GETM, 1, MN0, x);
	deliver(EXPECT(CXS_MSG_GETM, 0, MN0, x));
	deliver(EXPECT(CXS_MSG_INV, MN0, 1, x));
	ck_assert_str_eq(state(1, x), "I+IM_D");
	ck_assert_int_eq(cxs_cn_peek(W.cn[1], x, 8, &(uint64_t){0}), 0);
	ck_assert_ptr_null(result(tb));
	size_t ack = EXPECT(CXS_MSG_INV_ACK, 1, MN0, x);

	deliver(getm1);
	ck_assert_uint_eq(entry(x)->qn, 1);
	deliver(ack);
	size_t dm0 = EXPECT(CXS_MSG_DATA_M, MN0, 0, x);
	deliver(dm0);
	ck_assert_uint_eq(value_of(ta), 0);
	ck_assert_str_eq(state(0, x), "M");

	/* CN 0 is recalled for CN 1, whose DATA_M carries CN 0's store. */
	deliver(EXPECT(CXS_MSG_RECALL_I, MN0, 0, x));
	deliver(EXPECT(CXS_MSG_RECALL_DATA, 0, MN0, x));
	size_t dm1 = EXPECT(CXS_MSG_DATA_M, MN0, 1, x);
	ck_assert_uint_eq(msg64(dm1, 0), a);
	ck_assert_uint_eq(msg64(dm1, 8), 0);
	ck_assert_uint_gt(W.q[dm1].m.epoch, W.q[dm0].m.epoch);
	deliver(dm1);
	ck_assert_ptr_nonnull(result(tb));
	ck_assert_str_eq(state(1, x), "M");
	ck_assert_str_eq(state(0, x), "I");
	ck_assert_uint_eq(peek(1, x), a);
	ck_assert_uint_eq(peek(1, x + 8), b);
	ck_assert_uint_eq(in_flight(), 0);

	/* And CN 0 reads both back. */
	uint64_t l0 = load(0, 1, x), l8 = load(0, 1, x + 8);
	pump();
	ck_assert_uint_eq(value_of(l0), a);
	ck_assert_uint_eq(value_of(l8), b);
	world_teardown();
}
END_TEST

/* ---- 4. two upgrades ordered at the home ------------------------------------ */

START_TEST(test_upgrades_ordered_at_home)
{
	world_setup(1, 3);
	const uint64_t x = cxl(5);

	share(0, 1, x);
	load(2, 0, x);
	pump();
	const struct cxs_home_entry *e = entry(x);
	ck_assert_uint_eq(e->state, CXS_D_S);
	ck_assert_uint_eq(e->sharers, 0x7);
	uint32_t epoch0 = e->epoch;

	uint64_t s0 = issue(0, 1, CXS_OP_STORE_STAMP, x, 8, 0);
	uint64_t s1 = issue(1, 1, CXS_OP_STORE_STAMP, x, 8, 0);
	deliver(EXPECT(CXS_MSG_GETM, 0, MN0, x));
	ck_assert_uint_eq(e->busy, CXS_HB_INV);
	ck_assert_uint_eq(e->acks_left, 2);
	ck_assert_uint_eq(e->req_src, 0);
	ck_assert_uint_eq(e->qn, 0);
	deliver(EXPECT(CXS_MSG_GETM, 1, MN0, x));
	ck_assert_uint_eq(e->qn, 1);
	ck_assert_uint_eq(e->req_src, 0); /* still serving CN 0 */
	ck_assert_uint_eq(count_msgs(CXS_MSG_INV, MN0, ANY, ANY_LINE), 2);

	pump();
	ck_assert_uint_eq(e->qn, 0);
	ck_assert_uint_eq(e->busy, CXS_HB_NONE);
	ck_assert_uint_eq(e->owner, 1);
	uint64_t st0 = value_of(s0), st1 = value_of(s1);
	/* CN 0's grant came first, CN 1's next: epochs +1 and +2, core ids in the low byte. */
	ck_assert_uint_eq(st0 >> 32, epoch0 + 1);
	ck_assert_uint_eq(st1 >> 32, epoch0 + 2);
	ck_assert_uint_eq(st0 & 0xff, 1);
	ck_assert_uint_gt(st1, st0);
	ck_assert_uint_eq(result(s0)->node, 0);
	ck_assert_uint_eq(result(s1)->node, 1);

	/* The second grant carried the first store; the line ends with the second. */
	int dm1 = -1;
	for (size_t i = 0; i < W.nq; i++)
		if (W.q[i].m.type == CXS_MSG_DATA_M && W.q[i].m.dst == 1)
			dm1 = (int)i;
	ck_assert_int_ge(dm1, 0);
	ck_assert_uint_eq(msg64((size_t)dm1, 0), st0);
	ck_assert_str_eq(state(1, x), "M");
	ck_assert_str_eq(state(0, x), "I");
	ck_assert_str_eq(state(2, x), "I");
	uint64_t l = load(2, 0, x);
	pump();
	ck_assert_uint_eq(value_of(l), st1);
	world_teardown();
}
END_TEST

/* Requests queued behind a transaction are served in arrival order (FIFO per line). */
START_TEST(test_queued_requests_served_in_arrival_order)
{
	world_setup(1, 3);
	const uint64_t x = cxl(9);

	share(0, 1, x);
	load(2, 0, x);
	pump();
	uint32_t epoch0 = entry(x)->epoch;
	uint64_t s0 = issue(0, 0, CXS_OP_STORE_STAMP, x, 8, 0);
	uint64_t s1 = issue(1, 0, CXS_OP_STORE_STAMP, x, 8, 0);
	uint64_t s2 = issue(2, 0, CXS_OP_STORE_STAMP, x, 8, 0);
	deliver(EXPECT(CXS_MSG_GETM, 0, MN0, x));
	deliver(EXPECT(CXS_MSG_GETM, 2, MN0, x)); /* CN 2 arrives before CN 1 */
	deliver(EXPECT(CXS_MSG_GETM, 1, MN0, x));
	ck_assert_uint_eq(entry(x)->qn, 2);
	pump();
	ck_assert_uint_eq(value_of(s0) >> 32, epoch0 + 1);
	ck_assert_uint_eq(value_of(s2) >> 32, epoch0 + 2);
	ck_assert_uint_eq(value_of(s1) >> 32, epoch0 + 3);
	ck_assert_str_eq(state(1, x), "M");
	ck_assert_uint_eq(peek(1, x), value_of(s1));
	world_teardown();
}
END_TEST

/* ---- 5. recall crossing a write-back ------------------------------------------ */

START_TEST(test_recall_crosses_putm)
{
	world_setup(2, 2);
	const uint64_t x = cxl(0);
	const uint64_t a = UINT64_C(0x5151515151515151);

	uint64_t t = store(0, 0, x, a);
	pump();
	ck_assert_ptr_nonnull(result(t));
	ck_assert_str_eq(state(0, x), "M");

	/* Fill X's L3 set on CN 0; the fourth other line evicts X (LRU): PUTM. */
	fill_l3_set(0, 1, 0, 3);
	ck_assert_str_eq(state(0, x), "M");
	uint64_t tf = load(0, 1, cxl(4 * L3_SETS));
	deliver(EXPECT(CXS_MSG_GETS, 0, MN0, cxl(4 * L3_SETS)));
	deliver(EXPECT(CXS_MSG_DATA_E, MN0, 0, cxl(4 * L3_SETS)));
	ck_assert_ptr_nonnull(result(tf));
	ck_assert_str_eq(state(0, x), "I+MI_A");
	size_t putm = EXPECT(CXS_MSG_PUTM, 0, MN0, x);
	ck_assert_uint_eq(msg64(putm, 0), a);

	/* CN 1 asks; the home, still thinking CN 0 owns it, recalls. */
	uint64_t tb = load(1, 0, x);
	deliver(EXPECT(CXS_MSG_GETS, 1, MN0, x));
	ck_assert_uint_eq(entry(x)->busy, CXS_HB_RECALL);

	/* The recall reaches CN 0 first: ignored, the PUTM answers it. */
	size_t nq = W.nq;
	deliver(EXPECT(CXS_MSG_RECALL_S, MN0, 0, x));
	ck_assert_uint_eq(W.nq, nq);
	ck_assert_str_eq(state(0, x), "I+MI_A");

	/* A load by CN 0 meanwhile waits for the write-back. */
	uint64_t ta = load(0, 0, x);
	ck_assert_uint_eq(W.nq, nq);
	ck_assert_ptr_null(result(ta));
	ck_assert_str_eq(state(0, x), "I+MI_A");

	deliver(putm);
	ck_assert_uint_eq(mem64(x), a);
	const struct cxs_home_entry *e = entry(x);
	ck_assert_uint_eq(e->busy, CXS_HB_NONE);
	ck_assert_uint_eq(e->state, CXS_D_S);
	ck_assert_uint_eq(e->sharers, 0x2);
	size_t ack = EXPECT(CXS_MSG_PUT_ACK, MN0, 0, x);
	size_t ds = EXPECT(CXS_MSG_DATA_S, MN0, 1, x);
	ck_assert_uint_eq(msg64(ds, 0), a);
	deliver(ds);
	ck_assert_uint_eq(value_of(tb), a);
	ck_assert_str_eq(state(1, x), "S");

	/* PUT_ACK ends the write-back and replays the waiting load. */
	ck_assert_ptr_null(result(ta));
	deliver(ack);
	ck_assert_str_eq(state(0, x), "I+IS_D");
	EXPECT(CXS_MSG_GETS, 0, MN0, x);
	pump();
	ck_assert_uint_eq(value_of(ta), a);
	ck_assert_str_eq(state(0, x), "S");
	ck_assert_uint_eq(e->sharers, 0x3);
	world_teardown();
}
END_TEST

/* The same race with a clean E line (PUTE) and a GETM (RECALL_I). */
START_TEST(test_recall_crosses_pute)
{
	world_setup(2, 2);
	const uint64_t x = cxl(6);
	const uint64_t b = 0xbeef;

	load(0, 0, x);
	pump();
	ck_assert_str_eq(state(0, x), "E");
	fill_l3_set(0, 0, 6, 3);
	uint64_t k = 6 + 4 * L3_SETS;
	load(0, 0, cxl(k));
	deliver(EXPECT(CXS_MSG_GETS, 0, MN0, cxl(k)));
	deliver(EXPECT(CXS_MSG_DATA_E, MN0, 0, cxl(k)));
	ck_assert_str_eq(state(0, x), "I+EI_A");
	size_t pute = EXPECT(CXS_MSG_PUTE, 0, MN0, x);
	ck_assert_uint_eq(count_msgs(CXS_MSG_PUTM, ANY, ANY, ANY_LINE), 0);

	uint64_t tb = store(1, 0, x, b);
	deliver(EXPECT(CXS_MSG_GETM, 1, MN0, x));
	size_t nq = W.nq;
	deliver(EXPECT(CXS_MSG_RECALL_I, MN0, 0, x));
	ck_assert_uint_eq(W.nq, nq);
	unsigned writes = W.dram_writes;
	deliver(pute);
	ck_assert_uint_eq(W.dram_writes, writes); /* clean: nothing to write */
	ck_assert_uint_eq(entry(x)->owner, 1);
	deliver(EXPECT(CXS_MSG_PUT_ACK, MN0, 0, x));
	ck_assert_str_eq(state(0, x), "I");
	pump();
	ck_assert_ptr_nonnull(result(tb));
	ck_assert_str_eq(state(1, x), "M");
	uint64_t ta = load(0, 1, x);
	pump();
	ck_assert_uint_eq(value_of(ta), b);
	world_teardown();
}
END_TEST

/* A write-back that crosses nothing: the home goes to I, memory has the data. */
START_TEST(test_writeback_then_reload)
{
	world_setup(2, 2);
	const uint64_t x = cxl(8);

	store(0, 0, x + 56, 77);
	pump();
	fill_l3_set(0, 0, 8, 4); /* evicts X: PUTM, PUT_ACK, all delivered */
	ck_assert_str_eq(state(0, x), "I");
	ck_assert_uint_eq(entry(x)->state, CXS_D_I);
	ck_assert_uint_eq(mem64(x + 56), 77);
	ck_assert_uint_eq(cxs_cn_pending(W.cn[0]), 0);
	uint64_t t = load(1, 0, x + 56);
	deliver(EXPECT(CXS_MSG_GETS, 1, MN0, x));
	deliver(EXPECT(CXS_MSG_DATA_E, MN0, 1, x)); /* the line was I again: E */
	ck_assert_uint_eq(value_of(t), 77);
	world_teardown();
}
END_TEST

/* ---- 6. INV to a CN that dropped its S copy and asked again ------------------ */

START_TEST(test_inv_to_silently_dropped_sharer)
{
	world_setup(2, 2);
	const uint64_t x = cxl(10);
	const uint64_t a = 0x600d;

	share(0, 1, x);
	/* CN 1 drops X silently by filling its L3 set. */
	fill_l3_set(1, 0, 10, 4);
	ck_assert_str_eq(state(1, x), "I");
	for (size_t i = 0; i < W.nq; i++)
		ck_assert(!(W.q[i].m.line == line_of(x) && W.q[i].m.src == 1 &&
			    (W.q[i].m.type == CXS_MSG_PUTE || W.q[i].m.type == CXS_MSG_PUTM)));
	ck_assert_uint_eq(entry(x)->sharers, 0x3); /* the home still lists CN 1 */

	uint64_t tb = load(1, 1, x);
	ck_assert_str_eq(state(1, x), "I+IS_D");
	uint64_t ta = store(0, 0, x, a);
	deliver(EXPECT(CXS_MSG_GETM, 0, MN0, x));
	deliver(EXPECT(CXS_MSG_GETS, 1, MN0, x));
	ck_assert_uint_eq(entry(x)->qn, 1);

	deliver(EXPECT(CXS_MSG_INV, MN0, 1, x));
	ck_assert_str_eq(state(1, x), "I+IS_D");
	EXPECT(CXS_MSG_INV_ACK, 1, MN0, x);
	ck_assert_ptr_null(result(tb));
	pump();
	ck_assert_ptr_nonnull(result(ta));
	ck_assert_uint_eq(value_of(tb), a);
	ck_assert_str_eq(state(1, x), "S");
	ck_assert_str_eq(state(0, x), "S");
	ck_assert_uint_eq(entry(x)->state, CXS_D_S);
	ck_assert_uint_eq(entry(x)->sharers, 0x3);
	world_teardown();
}
END_TEST

/* ---- 7. protocol violations ----------------------------------------------------- */

/*
 * Delivers a forged message that must be refused (-1) with a message naming
 * `who` and the line.
 */
static void expect_violation(uint32_t type, uint32_t src, uint32_t dst, uint64_t addr,
			     const char *who)
{
	struct cxs_coh_msg m = {.line = line_of(addr), .type = type, .src = src, .dst = dst};
	char err[512];
	int rc;

	if (type == CXS_MSG_RECALL_DATA || type == CXS_MSG_PUTM)
		m.dirty = 1;
	record(W.now, &m);
	deliver_rc(W.nq - 1, &rc, err, sizeof err);
	ck_assert_msg(rc == -1, "forged %s %u->%u for line %s was accepted",
		      cxs_msg_info(type)->name, src, dst, line_hex(addr));
	ck_assert_msg(strstr(err, who) != NULL, "\"%s\" does not name %s", err, who);
	ck_assert_msg(strstr(err, line_hex(addr)) != NULL, "\"%s\" does not name line %s", err,
		      line_hex(addr));
}

START_TEST(test_cn_violations_reported)
{
	world_setup(2, 2);
	const uint64_t x = cxl(12), y = cxl(14), z = cxl(16);

	/* PUT_ACK without a write-back, data without a request. */
	expect_violation(CXS_MSG_PUT_ACK, MN0, 0, x, "node 0");
	ck_assert_str_eq(state(0, x), "I");
	expect_violation(CXS_MSG_DATA_S, MN0, 1, x, "node 1");
	expect_violation(CXS_MSG_DATA_M, MN0, 1, x, "node 1");
	ck_assert_str_eq(state(1, x), "I");

	/* A recall to a CN that only shares the line. */
	share(0, 1, y);
	expect_violation(CXS_MSG_RECALL_I, MN0, 0, y, "node 0");
	ck_assert_str_eq(state(0, y), "S");

	/* DATA_S answering an upgrade (the home must send DATA_M). */
	store(1, 0, y, 1);
	ck_assert_str_eq(state(1, y), "S+SM_D");
	expect_violation(CXS_MSG_DATA_S, MN0, 1, y, "node 1");

	/* An INV to the owner of an E line (the home recalls owners, never invalidates them). */
	load(0, 0, z);
	pump();
	ck_assert_str_eq(state(0, z), "E");
	expect_violation(CXS_MSG_INV, MN0, 0, z, "node 0");
	ck_assert_str_eq(state(0, z), "E");
	world_teardown();
}
END_TEST

START_TEST(test_home_violations_reported)
{
	world_setup(2, 2);
	const uint64_t x = cxl(12);
	char err[256];
	int rc;

	/* An INV_ACK to a home that is not collecting acks. */
	expect_violation(CXS_MSG_INV_ACK, 1, MN0, x, "home 4");
	expect_violation(CXS_MSG_RECALL_DATA, 0, MN0, x, "home 4");
	expect_violation(CXS_MSG_PUTM, 0, MN0, x, "home 4"); /* nobody owns it */

	load(0, 0, x);
	pump();
	const struct cxs_home_entry *e = entry(x);
	ck_assert_uint_eq(e->owner, 0);
	/* A write-back from a CN that does not own the line; a GETM from the owner. */
	expect_violation(CXS_MSG_PUTE, 1, MN0, x, "node 1");
	expect_violation(CXS_MSG_GETM, 0, MN0, x, "node 0");
	expect_violation(CXS_MSG_INV_ACK, 0, MN0, x, "home 4");
	ck_assert_uint_eq(e->state, CXS_D_EM);
	ck_assert_uint_eq(e->owner, 0);
	ck_assert_uint_eq(e->busy, CXS_HB_NONE);

	/* A message from a node that is not a CN. */
	struct cxs_coh_msg m = {.line = line_of(x), .type = CXS_MSG_GETS, .src = 7, .dst = MN0};
	record(W.now, &m);
	deliver_rc(W.nq - 1, &rc, err, sizeof err);
	ck_assert_int_eq(rc, -1);
	ck_assert_ptr_nonnull(strstr(err, "node 7"));
	world_teardown();
}
END_TEST

/*
 * While collecting acks, an INV_ACK from a CN that was not sent an INV (here
 * the requester itself) must be refused: counted, it would let the home grant
 * M while a real sharer still holds its S copy.
 */
START_TEST(test_inv_ack_from_uninvited_node_rejected)
{
	world_setup(1, 3);
	const uint64_t x = cxl(3);

	share(0, 1, x);
	load(2, 0, x);
	pump();
	store(0, 0, x, 9);
	deliver(EXPECT(CXS_MSG_GETM, 0, MN0, x));
	const struct cxs_home_entry *e = entry(x);
	ck_assert_uint_eq(e->acks_left, 2);
	expect_violation(CXS_MSG_INV_ACK, 0, MN0, x, "home 4");
	ck_assert_uint_eq(e->acks_left, 2);
	world_teardown();
}
END_TEST

/*
 * A fill that finds every way of its L3 set pinned by upgrades in progress is
 * a legal situation, not a protocol violation: with a direct-mapped L3 (the
 * configuration allows l3_ways = 1) core 0 upgrading line A while core 1
 * misses on line B of the same set, one request per core. The fill must wait
 * for the way (or be refused) without the CN reporting an error, and both
 * requests must complete with the right values.
 */
START_TEST(test_fill_into_pinned_set_is_not_an_error)
{
	world_setup_l3(1, 2, 1024, 1); /* 16 sets of one way */
	const uint64_t a = cxl(7), b = cxl(7 + L3_SETS);
	char err[512];
	int rc;

	share(0, 1, a);
	uint64_t ts = store(0, 0, a, 0xa);
	ck_assert_str_eq(state(0, a), "S+SM_D");
	uint64_t tl = load(0, 1, b);
	size_t getm = EXPECT(CXS_MSG_GETM, 0, MN0, a);
	deliver(EXPECT(CXS_MSG_GETS, 0, MN0, b));
	deliver_rc(EXPECT(CXS_MSG_DATA_E, MN0, 0, b), &rc, err, sizeof err);
	ck_assert_msg(rc == 0, "a fill into a set of pinned ways was refused: %s", err);
	deliver(getm);
	pump();
	ck_assert_uint_eq(value_of(ts), 0);
	ck_assert_uint_eq(value_of(tl), 0);
	uint64_t t1 = load(1, 0, a);
	pump();
	ck_assert_uint_eq(value_of(t1), 0xa);
	world_teardown();
}
END_TEST

/* ---- 8. deadlock detection --------------------------------------------------- */

START_TEST(test_stuck_detection)
{
	world_setup(2, 2);
	const uint64_t x = cxl(18);
	const cxs_time T = CXS_PS_PER_MS;
	char buf[512];

	share(0, 1, x);
	store(1, 0, x, 3);
	const cxs_time t_req = W.now;
	cxs_time t_home = deliver(EXPECT(CXS_MSG_GETM, 1, MN0, x));
	deliver(EXPECT(CXS_MSG_INV, MN0, 0, x));
	size_t ack = EXPECT(CXS_MSG_INV_ACK, 0, MN0, x); /* withheld */
	struct cxs_home *h = home_of_addr(x);

	ck_assert_int_eq(cxs_home_stuck(h, t_home, T, buf, sizeof buf), 0);
	ck_assert_int_eq(cxs_home_stuck(h, t_home + T - 1, T, buf, sizeof buf), 0);
	ck_assert_int_eq(cxs_home_stuck(h, t_home + DIR_PS + T, T, buf, sizeof buf), 1);
	ck_assert_msg(strstr(buf, "home 4") && strstr(buf, line_hex(x)) &&
			      strstr(buf, "state S") && strstr(buf, "acks"),
		      "home report: %s", buf);
	ck_assert_int_eq(cxs_home_stuck(&W.home[1], t_home + 10 * T, T, buf, sizeof buf), 0);

	ck_assert_int_eq(cxs_cn_stuck(W.cn[1], t_req + T - 1, T, buf, sizeof buf), 0);
	ck_assert_int_eq(cxs_cn_stuck(W.cn[1], t_req + T, T, buf, sizeof buf), 1);
	ck_assert_msg(strstr(buf, "node 1") && strstr(buf, line_hex(x)) && strstr(buf, "S+SM_D"),
		      "CN report: %s", buf);
	ck_assert_int_eq(cxs_cn_stuck(W.cn[0], t_req + 10 * T, T, buf, sizeof buf), 0);
	ck_assert_uint_eq(cxs_cn_pending(W.cn[1]), 1);

	/* Once the ack arrives, nothing is stuck any more. */
	deliver(ack);
	pump();
	ck_assert_int_eq(cxs_home_stuck(h, W.now + 10 * T, T, buf, sizeof buf), 0);
	ck_assert_int_eq(cxs_cn_stuck(W.cn[1], W.now + 10 * T, T, buf, sizeof buf), 0);
	ck_assert_uint_eq(cxs_cn_pending(W.cn[1]), 0);
	world_teardown();
}
END_TEST

/*
 * A write-back that never gets its PUT_ACK is reported, and the report names
 * the line (coherence.h: "node, line, states").
 */
START_TEST(test_cn_stuck_writeback_names_line)
{
	world_setup(2, 2);
	const uint64_t x = cxl(24);
	const cxs_time T = CXS_PS_PER_MS;
	char buf[512];

	store(0, 0, x, 5);
	pump();
	fill_l3_set(0, 0, 24, 3);
	load(0, 0, cxl(24 + 4 * L3_SETS));
	deliver(EXPECT(CXS_MSG_GETS, 0, MN0, cxl(24 + 4 * L3_SETS)));
	cxs_time t_wb = deliver(EXPECT(CXS_MSG_DATA_E, MN0, 0, cxl(24 + 4 * L3_SETS)));
	ck_assert_str_eq(state(0, x), "I+MI_A");
	EXPECT(CXS_MSG_PUTM, 0, MN0, x); /* withheld */
	ck_assert_uint_eq(cxs_cn_pending(W.cn[0]), 1);

	ck_assert_int_eq(cxs_cn_stuck(W.cn[0], t_wb + T - 1, T, buf, sizeof buf), 0);
	ck_assert_int_eq(cxs_cn_stuck(W.cn[0], t_wb + T, T, buf, sizeof buf), 1);
	ck_assert_msg(strstr(buf, "node 0") && strstr(buf, "MI_A"), "CN report: %s", buf);
	ck_assert_msg(strstr(buf, line_hex(x)) != NULL, "CN report does not name line %s: %s",
		      line_hex(x), buf);
	world_teardown();
}
END_TEST

/*
 * With two requests stuck, the report is the oldest one (coherence.h), not the
 * one whose line happened to be seen first.
 */
START_TEST(test_cn_stuck_reports_oldest)
{
	world_setup(2, 2);
	const uint64_t x = cxl(20), y = cxl(22);
	const cxs_time T = CXS_PS_PER_MS;
	char buf[512];

	/* CN 0 uses X first, then loses it to CN 1. */
	load(0, 0, x);
	pump();
	store(1, 0, x, 1);
	pump();
	ck_assert_str_eq(state(0, x), "I");

	/* Y's request is issued long before X's second one; neither is answered. */
	load(0, 0, y);
	const cxs_time t_y = W.now;
	W.now += T / 2;
	load(0, 1, x);
	const cxs_time t_x = W.now;
	ck_assert_uint_lt(t_y, t_x);
	ck_assert_int_eq(cxs_cn_stuck(W.cn[0], t_x + T, T, buf, sizeof buf), 1);
	ck_assert_msg(strstr(buf, line_hex(y)) != NULL,
		      "expected the oldest request (line %s, issued %" PRIu64 " ps), got: %s",
		      line_hex(y), t_y, buf);
	world_teardown();
}
END_TEST

/* ---- 9. local (private) memory ------------------------------------------------- */

static int local_access_seen(size_t from, uint32_t node, uint64_t line, int is_write)
{
	int n = 0;
	for (size_t i = from; i < W.nlocal; i++)
		n += W.local[i].node == node && W.local[i].line == line &&
		     W.local[i].is_write == is_write;
	return n;
}

START_TEST(test_local_memory)
{
	world_setup(1, 2);
	const uint64_t l = 0x1000; /* line 64: L3 set 0 */
	const uint64_t v = UINT64_C(0xfeedfacecafebeef);

	uint64_t ts = store(0, 0, l + 16, v);
	ck_assert_ptr_nonnull(result(ts));
	ck_assert_str_eq(state(0, l), "L");
	ck_assert_uint_ge(result(ts)->when - result(ts)->r.issued, LOCAL_DRAM_PS); /* a fill */
	W.now = result(ts)->when; /* the fill is done */
	uint64_t t = load(0, 1, l + 16);
	ck_assert_uint_eq(value_of(t), v);
	ck_assert_uint_lt(result(t)->when - result(t)->r.issued, LOCAL_DRAM_PS); /* a hit */
	ck_assert_uint_eq(local_access_seen(0, 0, line_of(l), 1), 0);

	/* Four other local lines of the same set evict it: written to local memory. */
	for (uint64_t i = 1; i <= 4; i++)
		ck_assert_uint_eq(value_of(load(0, 0, l + i * L3_SETS * CXS_LINE_BYTES)), 0);
	ck_assert_str_eq(state(0, l), "I");
	ck_assert_int_eq(local_access_seen(0, 0, line_of(l), 1), 1);
	size_t mark = W.nlocal;

	t = load(0, 0, l + 16);
	ck_assert_uint_eq(value_of(t), v);
	ck_assert_str_eq(state(0, l), "L");
	ck_assert_int_eq(local_access_seen(mark, 0, line_of(l), 0), 1);
	ck_assert_uint_ge(result(t)->when - result(t)->r.issued, LOCAL_DRAM_PS); /* a fill */

	/* Private memory is per CN: CN 1's address 0x1010 is another location. */
	ck_assert_uint_eq(value_of(load(1, 0, l + 16)), 0);
	ck_assert_uint_eq(W.nq, 0); /* no message at any point */
	ck_assert_uint_eq(cxs_cn_pending(W.cn[0]), 0);
	world_teardown();
}
END_TEST

/*
 * A compare-and-swap (4 bytes) writes only when the word holds what it
 * expects, returns the old value either way, and takes the line writable
 * either way (as a locked CMPXCHG does): CN 1's failed compare still
 * recalls CN 0's M copy. Eight-byte compares are refused.
 */
START_TEST(test_compare_and_swap)
{
	world_setup(1, 2);
	uint64_t a = cxl(3) + 8;
	uint64_t t = issue(0, 0, CXS_OP_CAS, a, 4, UINT64_C(0) << 32 | 5); /* 0 -> 5 */
	pump();
	ck_assert_uint_eq(value_of(t), 0);
	ck_assert_str_eq(state(0, a), "M");
	t = issue(1, 0, CXS_OP_CAS, a, 4, UINT64_C(0) << 32 | 7); /* expects 0: fails */
	pump();
	ck_assert_uint_eq(value_of(t), 5);
	ck_assert_str_eq(state(1, a), "M");
	ck_assert_str_eq(state(0, a), "I");
	t = load(1, 1, a);
	pump();
	ck_assert_uint_eq(value_of(t), 5);
	t = issue(1, 0, CXS_OP_CAS, a, 4, UINT64_C(5) << 32 | 9); /* 5 -> 9 */
	pump();
	ck_assert_uint_eq(value_of(t), 5);
	t = load(0, 0, a);
	pump();
	ck_assert_uint_eq(value_of(t), 9);

	char err[256] = "";
	struct cxs_mem_req r = {.addr = a, .value = 1, .tag = ++W.next_tag, .issued = W.now,
				.op = CXS_OP_CAS, .size = 8};
	ck_assert_int_ne(cxs_cn_request(W.cn[0], W.now, &r, err, sizeof err), 0);
	ck_assert_msg(strstr(err, "invalid memory request") != NULL, "%s", err);
	world_teardown();
}
END_TEST

/* ---- timing of grants at the home --------------------------------------------- */

/*
 * An upgrade by a CN that still holds S reads no memory; a GETM by a CN that
 * holds nothing reads memory once, at the time the invalidations go out (the
 * read overlaps the round), not after the last acknowledgement.
 */
START_TEST(test_grant_memory_reads)
{
	world_setup(1, 3);
	uint64_t a = cxl(0);
	share(0, 1, a);
	unsigned reads = W.dram_reads;
	store(0, 0, a, 7);
	pump();
	ck_assert_uint_eq(W.dram_reads, reads); /* upgrade by a sharer: no read */
	ck_assert_str_eq(state(0, a), "M");
	ck_assert_str_eq(state(1, a), "I");

	uint64_t b = cxl(1);
	share(0, 1, b);
	reads = W.dram_reads;
	uint64_t t = store(2, 0, b, 9);
	deliver(EXPECT(CXS_MSG_GETM, 2, home_node(b), b));
	ck_assert_uint_eq(W.dram_reads, reads + 1); /* started with the INVs, before any ack */
	ck_assert_uint_eq(count_msgs(CXS_MSG_INV, home_node(b), ANY, line_of(b)), 2);
	pump();
	ck_assert_uint_eq(W.dram_reads, reads + 1); /* and only once */
	ck_assert_str_eq(state(2, b), "M");
	ck_assert_ptr_nonnull(result(t));
	world_teardown();
}
END_TEST

/* ---- 10. failure of a CN ----------------------------------------------------- */

static void owned_cb(void *ctx, uint64_t line)
{
	ck_assert_ptr_eq(ctx, &W);
	ck_assert_msg(W.nowned < MAX_OWNED, "owned report list full");
	W.owned[W.nowned++] = line;
}

/*
 * CN cn fails and every home is told (home 4, then home 5). From then on
 * nothing reaches it: what was in flight to it is discarded, and record()
 * refuses anything a home sends it later. W.owned holds the owned lines the
 * homes reported, in report order.
 */
static void fail_cn(uint32_t cn)
{
	char err[512] = "";

	for (size_t i = 0; i < W.nq; i++)
		if (!W.q[i].delivered && W.q[i].m.dst == cn)
			W.q[i].delivered = 1;
	W.dead |= UINT32_C(1) << cn;
	W.nowned = 0;
	W.now += 1000;
	for (uint32_t i = 0; i < W.nmns; i++)
		ck_assert_msg(cxs_home_cn_failed(&W.home[i], W.now, cn, owned_cb, &W, err,
						 sizeof err) == 0,
			      "cxs_home_cn_failed(home %u, node %u): %s", MN0 + i, cn, err);
}

/*
 * A line both CNs share: the dead CN leaves the sharer vector, so the
 * survivor's later upgrade is granted at once. A home still listing CN 1
 * would send it an INV (record() refuses it) and wait for an ack that never
 * comes.
 */
START_TEST(test_failure_sharer_leaves_vector)
{
	world_setup(2, 2);
	const uint64_t x = cxl(0);
	const uint64_t v = 0x5eed;

	share(0, 1, x);
	const struct cxs_home_entry *e = entry(x);
	ck_assert_uint_eq(e->sharers, 0x3);
	fail_cn(1);
	ck_assert_uint_eq(W.nowned, 0); /* a sharer owns nothing */
	ck_assert_uint_eq(e->state, CXS_D_S);
	ck_assert_uint_eq(e->sharers, 0x1);
	ck_assert_uint_eq(in_flight(), 0);

	unsigned reads = W.dram_reads;
	uint64_t t = store(0, 0, x, v);
	ck_assert_str_eq(state(0, x), "S+SM_D");
	deliver(EXPECT(CXS_MSG_GETM, 0, MN0, x));
	ck_assert_uint_eq(count_msgs(CXS_MSG_INV, ANY, ANY, ANY_LINE), 0);
	ck_assert_uint_eq(e->busy, CXS_HB_NONE);
	ck_assert_uint_eq(e->state, CXS_D_EM);
	ck_assert_uint_eq(e->owner, 0);
	ck_assert_uint_eq(e->sharers, 0);
	deliver(EXPECT(CXS_MSG_DATA_M, MN0, 0, x));
	ck_assert_ptr_nonnull(result(t));
	ck_assert_str_eq(state(0, x), "M");
	ck_assert_uint_eq(W.dram_reads, reads); /* an upgrade by a sharer reads nothing */
	ck_assert_uint_eq(in_flight(), 0);
	world_teardown();
}
END_TEST

/*
 * The last sharers fail one after the other: the line goes to I (not S with
 * an empty vector), so the next reader gets it exclusive (DATA_E), not
 * DATA_S.
 */
START_TEST(test_failure_last_sharer_frees_line)
{
	world_setup(2, 3);
	const uint64_t x = cxl(1); /* home 5 */

	share(0, 1, x);
	fail_cn(1);
	ck_assert_uint_eq(entry(x)->state, CXS_D_S);
	ck_assert_uint_eq(entry(x)->sharers, 0x1);
	fail_cn(0);
	ck_assert_uint_eq(W.nowned, 0);
	ck_assert_uint_eq(entry(x)->state, CXS_D_I);
	ck_assert_uint_eq(entry(x)->sharers, 0);

	uint64_t t = load(2, 0, x);
	deliver(EXPECT(CXS_MSG_GETS, 2, MN0 + 1, x));
	ck_assert_uint_eq(count_msgs(CXS_MSG_DATA_S, ANY, ANY, ANY_LINE), 0);
	deliver(EXPECT(CXS_MSG_DATA_E, MN0 + 1, 2, x));
	ck_assert_uint_eq(value_of(t), 0);
	ck_assert_str_eq(state(2, x), "E");
	world_teardown();
}
END_TEST

/*
 * The lines the dead CN owned (one dirty M, one clean E: the home cannot
 * tell them apart) are reported, exactly those and in directory creation
 * order (X, created first, has the higher address: an address-sorted report
 * would put Y first), and go to I with memory's value: M's store is lost.
 * A line CN 0 owns meanwhile is neither reported nor touched. CN 0's next
 * read of X is served from memory, exclusive.
 */
START_TEST(test_failure_owned_lines_reported)
{
	world_setup(2, 2);
	const uint64_t x = cxl(6), y = cxl(2), z = cxl(4); /* all on home 4 */
	const uint64_t a = UINT64_C(0xa0a0a0a0a0a0a0a0), b = UINT64_C(0xb0b0b0b0b0b0b0b0);

	/* Memory of X holds a (CN 0's store, recalled by CN 1's); CN 1 holds b in M. */
	store(0, 0, x, a);
	pump();
	store(1, 0, x, b);
	pump();
	ck_assert_uint_eq(mem64(x), a);
	ck_assert_str_eq(state(1, x), "M");
	load(0, 0, z);
	pump();
	ck_assert_str_eq(state(0, z), "E");
	load(1, 0, y);
	pump();
	ck_assert_str_eq(state(1, y), "E");
	unsigned reads = W.dram_reads, writes = W.dram_writes;

	fail_cn(1);
	ck_assert_uint_eq(W.nowned, 2);
	ck_assert_uint_eq(W.owned[0], line_of(x));
	ck_assert_uint_eq(W.owned[1], line_of(y));
	ck_assert_uint_eq(entry(x)->state, CXS_D_I);
	ck_assert_uint_eq(entry(y)->state, CXS_D_I);
	ck_assert_uint_eq(entry(z)->state, CXS_D_EM);
	ck_assert_uint_eq(entry(z)->owner, 0);
	ck_assert_uint_eq(mem64(x), a);
	ck_assert_uint_eq(W.dram_reads, reads); /* nothing to read or write for idle lines */
	ck_assert_uint_eq(W.dram_writes, writes);
	ck_assert_uint_eq(in_flight(), 0);
	/* Without recover_owned nothing waits for recovery. */
	ck_assert_uint_eq(entry(x)->busy, CXS_HB_NONE);
	ck_assert_uint_eq(entry(y)->busy, CXS_HB_NONE);
	{
		uint8_t d[CXS_LINE_BYTES] = {0};
		char e2[256] = "";
		cxs_time done = 0;
		ck_assert_int_eq(cxs_home_recovered(&W.home[0], W.now, line_of(x), d, 0xff, &done, e2,
						    sizeof e2),
				 -1);
		ck_assert_uint_eq(mem64(x), a);
	}

	uint64_t t = load(0, 1, x);
	deliver(EXPECT(CXS_MSG_GETS, 0, MN0, x));
	ck_assert_uint_eq(count_msgs(CXS_MSG_RECALL_S, ANY, ANY, ANY_LINE), 0);
	size_t i = EXPECT(CXS_MSG_DATA_E, MN0, 0, x);
	ck_assert_uint_eq(msg64(i, 0), a);
	deliver(i);
	ck_assert_uint_eq(value_of(t), a);
	ck_assert_str_eq(state(0, x), "E");
	ck_assert_uint_eq(entry(x)->owner, 0);
	world_teardown();
}
END_TEST

/*
 * An upgrade's invalidation round waits for the dead CN's ack. On line X
 * CN 0 has acked and CN 1's ack is the last one due: the failure itself
 * completes the round (DATA_M to CN 2 with memory's data). On line Y CN 1
 * fails first: the round goes on and CN 0's ack completes it. A home that
 * did not count the dead CN's ack would leave both lines busy forever.
 */
START_TEST(test_failure_completes_inv_round)
{
	world_setup(1, 3);
	const uint64_t x = cxl(3), y = cxl(5);
	const uint64_t a = 0xa11, c = 0xc33, ay = 0xa22, cy = 0xc44;

	/* X: memory a, shared by CN 0 and CN 1 (CN 0's dirty copy recalled to S). */
	store(0, 0, x, a);
	pump();
	load(1, 0, x);
	pump();
	ck_assert_uint_eq(entry(x)->sharers, 0x3);
	ck_assert_uint_eq(mem64(x), a);
	store(0, 0, y, ay);
	pump();
	load(1, 0, y);
	pump();
	ck_assert_uint_eq(entry(y)->sharers, 0x3);

	uint64_t tx = store(2, 0, x + 8, c);
	uint64_t ty = store(2, 1, y + 8, cy);
	deliver(EXPECT(CXS_MSG_GETM, 2, MN0, x));
	deliver(EXPECT(CXS_MSG_GETM, 2, MN0, y));
	ck_assert_uint_eq(entry(x)->acks_left, 2);
	ck_assert_uint_eq(entry(y)->acks_left, 2);
	deliver(EXPECT(CXS_MSG_INV, MN0, 0, x));
	deliver(EXPECT(CXS_MSG_INV_ACK, 0, MN0, x));
	ck_assert_uint_eq(entry(x)->acks_left, 1);
	ck_assert_uint_eq(count_msgs(CXS_MSG_DATA_M, ANY, ANY, ANY_LINE), 0);
	unsigned reads = W.dram_reads;

	fail_cn(1); /* its INVs of X and Y were never received */
	ck_assert_uint_eq(W.nowned, 0);
	ck_assert_uint_eq(W.dram_reads, reads); /* the grant's read was made with the INVs */
	const struct cxs_home_entry *ex = entry(x), *ey = entry(y);
	ck_assert_uint_eq(ex->busy, CXS_HB_NONE);
	ck_assert_uint_eq(ex->state, CXS_D_EM);
	ck_assert_uint_eq(ex->owner, 2);
	ck_assert_uint_eq(ex->sharers, 0);
	size_t i = EXPECT(CXS_MSG_DATA_M, MN0, 2, x);
	ck_assert_uint_eq(msg64(i, 0), a);
	ck_assert_uint_eq(count_msgs(CXS_MSG_DATA_M, ANY, ANY, line_of(y)), 0);
	ck_assert_uint_eq(ey->busy, CXS_HB_INV);
	ck_assert_uint_eq(ey->acks_left, 1);
	ck_assert_uint_eq(ey->sharers, 0x1); /* only CN 0's ack is still due */

	deliver(i);
	ck_assert_ptr_nonnull(result(tx));
	ck_assert_str_eq(state(2, x), "M");
	ck_assert_uint_eq(peek(2, x), a);
	ck_assert_uint_eq(peek(2, x + 8), c);
	ck_assert_ptr_null(result(ty));
	pump(); /* CN 0's INV of Y, its ack, DATA_M */
	ck_assert_ptr_nonnull(result(ty));
	ck_assert_str_eq(state(2, y), "M");
	ck_assert_uint_eq(peek(2, y), ay);
	ck_assert_uint_eq(peek(2, y + 8), cy);
	ck_assert_uint_eq(ey->owner, 2);
	ck_assert_str_eq(state(0, x), "I");
	ck_assert_str_eq(state(0, y), "I");
	world_teardown();
}
END_TEST

/*
 * A recall the dead owner will never answer: the line is reported owned
 * (its copy is lost), the requester is served with memory's value, read
 * now (a DRAM read charged, the grant leaving after it): CN 0's GETS of X
 * gets DATA_S, CN 2's GETM of Y gets DATA_M.
 */
START_TEST(test_failure_unanswered_recall)
{
	world_setup(1, 3);
	const uint64_t x = cxl(0), y = cxl(2);
	const uint64_t a = 0xaaa1, b = 0xbbb1, a2 = 0xaaa2, b2 = 0xbbb2, c = 0xccc2;

	/* Memory holds a (X) and a2 (Y); CN 1 holds b and b2 in M. */
	store(0, 0, x, a);
	pump();
	store(1, 0, x, b);
	pump();
	store(2, 0, y, a2);
	pump();
	store(1, 1, y, b2);
	pump();
	ck_assert_uint_eq(mem64(x), a);
	ck_assert_uint_eq(mem64(y), a2);
	ck_assert_str_eq(state(1, x), "M");
	ck_assert_str_eq(state(1, y), "M");

	uint64_t tx = load(0, 0, x);
	deliver(EXPECT(CXS_MSG_GETS, 0, MN0, x));
	EXPECT(CXS_MSG_RECALL_S, MN0, 1, x);
	uint64_t ty = store(2, 0, y + 8, c);
	deliver(EXPECT(CXS_MSG_GETM, 2, MN0, y));
	EXPECT(CXS_MSG_RECALL_I, MN0, 1, y);
	ck_assert_uint_eq(entry(x)->busy, CXS_HB_RECALL);
	ck_assert_uint_eq(entry(y)->busy, CXS_HB_RECALL);
	unsigned reads = W.dram_reads;

	fail_cn(1);
	const cxs_time t_fail = W.now;
	ck_assert_uint_eq(W.nowned, 2);
	ck_assert_uint_eq(W.owned[0], line_of(x));
	ck_assert_uint_eq(W.owned[1], line_of(y));
	ck_assert_uint_eq(W.dram_reads, reads + 2);
	size_t i = EXPECT(CXS_MSG_DATA_S, MN0, 0, x);
	ck_assert_uint_eq(msg64(i, 0), a);
	ck_assert_uint_ge(W.q[i].when, t_fail + DIR_PS + DRAM_PS);
	size_t j = EXPECT(CXS_MSG_DATA_M, MN0, 2, y);
	ck_assert_uint_eq(msg64(j, 0), a2);
	ck_assert_uint_ge(W.q[j].when, t_fail + DIR_PS + DRAM_PS);
	const struct cxs_home_entry *ex = entry(x), *ey = entry(y);
	ck_assert_uint_eq(ex->busy, CXS_HB_NONE);
	ck_assert_uint_eq(ex->state, CXS_D_S);
	ck_assert_uint_eq(ex->sharers, 0x1); /* the dead owner keeps nothing */
	ck_assert_uint_eq(ey->busy, CXS_HB_NONE);
	ck_assert_uint_eq(ey->state, CXS_D_EM);
	ck_assert_uint_eq(ey->owner, 2);

	pump();
	ck_assert_uint_eq(value_of(tx), a);
	ck_assert_str_eq(state(0, x), "S");
	ck_assert_ptr_nonnull(result(ty));
	ck_assert_str_eq(state(2, y), "M");
	ck_assert_uint_eq(peek(2, y), a2);
	ck_assert_uint_eq(peek(2, y + 8), c);
	ck_assert_uint_eq(mem64(x), a); /* b and b2 died with CN 1 */
	ck_assert_uint_eq(mem64(y), a2);
	world_teardown();
}
END_TEST

/*
 * The requester dies while its recall is out. CN 0 still answers: on X
 * (RECALL_I for CN 1's GETM) its dirty data goes to memory, nobody is
 * granted, the line ends in I; on Y the same with CN 2's GETS queued
 * behind, which is then served from the freed line (DATA_E with CN 0's
 * data: the line was I); on Z (RECALL_S for CN 1's GETS) CN 0 keeps its S
 * copy and is the only sharer, so its upgrade needs no INV.
 */
START_TEST(test_failure_requester_dies_during_recall)
{
	world_setup(2, 3);
	const uint64_t x = cxl(0), y = cxl(3), z = cxl(4); /* homes 4, 5, 4 */
	const uint64_t a = 0xa0a1, ay = 0xa0a2;

	store(0, 0, x, a);
	pump();
	store(0, 0, y, ay);
	pump();
	load(0, 0, z);
	pump();
	ck_assert_str_eq(state(0, x), "M");
	ck_assert_str_eq(state(0, y), "M");
	ck_assert_str_eq(state(0, z), "E");

	store(1, 0, x, 0xdead1);
	deliver(EXPECT(CXS_MSG_GETM, 1, MN0, x));
	store(1, 0, y, 0xdead2);
	deliver(EXPECT(CXS_MSG_GETM, 1, MN0 + 1, y));
	uint64_t t2 = load(2, 0, y + 8);
	deliver(EXPECT(CXS_MSG_GETS, 2, MN0 + 1, y));
	ck_assert_uint_eq(entry(y)->qn, 1);
	load(1, 1, z);
	deliver(EXPECT(CXS_MSG_GETS, 1, MN0, z));

	fail_cn(1);
	ck_assert_uint_eq(W.nowned, 0); /* CN 1 owned nothing */
	ck_assert_uint_eq(entry(x)->busy, CXS_HB_RECALL); /* still waiting for CN 0 */
	ck_assert_uint_eq(entry(x)->req_dead, 1);
	ck_assert_uint_eq(entry(y)->qn, 1);

	/* X: the dirty answer reaches memory, and no grant goes anywhere. */
	deliver(EXPECT(CXS_MSG_RECALL_I, MN0, 0, x));
	size_t i = EXPECT(CXS_MSG_RECALL_DATA, 0, MN0, x);
	ck_assert_uint_eq(W.q[i].m.dirty, 1);
	deliver(i);
	ck_assert_uint_eq(mem64(x), a);
	const struct cxs_home_entry *ex = entry(x);
	ck_assert_uint_eq(ex->busy, CXS_HB_NONE);
	ck_assert_uint_eq(ex->state, CXS_D_I);
	ck_assert_uint_eq(ex->sharers, 0);
	ck_assert_uint_eq(ex->req_dead, 0);
	ck_assert_uint_eq(count_msgs(CXS_MSG_DATA_M, ANY, ANY, ANY_LINE), 0);

	/* Y: the queued GETS of CN 2 is served once the dead CN's transaction ends. */
	deliver(EXPECT(CXS_MSG_RECALL_I, MN0 + 1, 0, y));
	deliver(EXPECT(CXS_MSG_RECALL_DATA, 0, MN0 + 1, y));
	ck_assert_uint_eq(mem64(y), ay);
	ck_assert_uint_eq(count_msgs(CXS_MSG_DATA_S, ANY, ANY, line_of(y)), 0);
	size_t j = EXPECT(CXS_MSG_DATA_E, MN0 + 1, 2, y);
	ck_assert_uint_eq(msg64(j, 0), ay);
	deliver(j);
	ck_assert_uint_eq(value_of(t2), 0);
	ck_assert_str_eq(state(2, y), "E");
	ck_assert_uint_eq(peek(2, y), ay);
	ck_assert_uint_eq(entry(y)->owner, 2);
	ck_assert_uint_eq(entry(y)->qn, 0);

	/* Z: CN 0 keeps S alone; its upgrade is granted without an INV. */
	deliver(EXPECT(CXS_MSG_RECALL_S, MN0, 0, z));
	size_t k = EXPECT(CXS_MSG_RECALL_DATA, 0, MN0, z);
	ck_assert_uint_eq(W.q[k].m.dirty, 0);
	deliver(k);
	ck_assert_str_eq(state(0, z), "S");
	ck_assert_uint_eq(entry(z)->state, CXS_D_S);
	ck_assert_uint_eq(entry(z)->sharers, 0x1);
	uint64_t tz = store(0, 0, z, 0x2222);
	pump();
	ck_assert_ptr_nonnull(result(tz));
	for (size_t n = 0; n < W.nq; n++) /* delivered or not: no INV was ever sent */
		ck_assert(W.q[n].m.type != CXS_MSG_INV);
	ck_assert_str_eq(state(0, z), "M");
	world_teardown();
}
END_TEST

/*
 * Requests queued behind a transaction: the dead CN's are dropped, the
 * others keep their arrival order. All four CNs share X and upgrade; CN 0
 * is served first, the others queue as 3, 1, 2. After CN 1 fails the grants
 * go 0, 3, 2 (epochs +1, +2, +3): a queue that lost the order would grant 2
 * before 3, one that kept CN 1 would grant it (record() refuses that) or
 * stall on its recall.
 */
START_TEST(test_failure_drops_queued_requests)
{
	world_setup(1, 4);
	const uint64_t x = cxl(9);

	share(0, 1, x);
	load(2, 0, x);
	load(3, 0, x);
	pump();
	const struct cxs_home_entry *e = entry(x);
	ck_assert_uint_eq(e->sharers, 0xf);
	uint32_t epoch0 = e->epoch;

	uint64_t s0 = issue(0, 0, CXS_OP_STORE_STAMP, x, 8, 0);
	uint64_t s3 = issue(3, 0, CXS_OP_STORE_STAMP, x, 8, 0);
	uint64_t s1 = issue(1, 0, CXS_OP_STORE_STAMP, x, 8, 0);
	uint64_t s2 = issue(2, 0, CXS_OP_STORE_STAMP, x, 8, 0);
	deliver(EXPECT(CXS_MSG_GETM, 0, MN0, x));
	deliver(EXPECT(CXS_MSG_GETM, 3, MN0, x));
	deliver(EXPECT(CXS_MSG_GETM, 1, MN0, x));
	deliver(EXPECT(CXS_MSG_GETM, 2, MN0, x));
	ck_assert_uint_eq(e->qn, 3);
	ck_assert_uint_eq(e->acks_left, 3);

	fail_cn(1);
	ck_assert_uint_eq(e->qn, 2);
	ck_assert_uint_eq(e->q[e->qhead % e->qcap].src, 3);
	ck_assert_uint_eq(e->q[(e->qhead + 1) % e->qcap].src, 2);
	ck_assert_uint_eq(e->acks_left, 2); /* CN 1's ack counted as given */
	ck_assert_uint_eq(e->req_src, 0);

	pump();
	ck_assert_uint_eq(value_of(s0) >> 32, epoch0 + 1);
	ck_assert_uint_eq(value_of(s3) >> 32, epoch0 + 2);
	ck_assert_uint_eq(value_of(s2) >> 32, epoch0 + 3);
	ck_assert_ptr_null(result(s1));
	ck_assert_uint_eq(e->epoch, epoch0 + 3);
	ck_assert_uint_eq(e->qn, 0);
	ck_assert_uint_eq(e->busy, CXS_HB_NONE);
	ck_assert_uint_eq(e->owner, 2);
	ck_assert_str_eq(state(2, x), "M");
	ck_assert_str_eq(state(3, x), "I");
	ck_assert_str_eq(state(0, x), "I");
	world_teardown();
}
END_TEST

/*
 * Messages the dead CN sent that arrive after the home dealt with its
 * failure (a write-back, a request) are dropped and counted, not taken as
 * protocol violations: the PUTM does not overwrite memory (its line was
 * already given up as lost and reported) and gets no PUT_ACK; the GETS
 * creates no directory entry and gets no grant.
 */
START_TEST(test_failure_late_messages_dropped)
{
	world_setup(2, 2);
	const uint64_t x = cxl(10); /* home 4; L3 set 10 */
	const uint64_t g = cxl(11); /* home 5 */
	const uint64_t a = 0xa10, b = 0xb10;

	store(0, 0, x, a);
	pump();
	store(1, 0, x, b);
	pump();
	ck_assert_uint_eq(mem64(x), a);

	/* CN 1 evicts X: PUTM (b) in flight. */
	fill_l3_set(1, 0, 10, 3);
	load(1, 0, cxl(10 + 4 * L3_SETS));
	deliver(EXPECT(CXS_MSG_GETS, 1, MN0, cxl(10 + 4 * L3_SETS)));
	deliver(EXPECT(CXS_MSG_DATA_E, MN0, 1, cxl(10 + 4 * L3_SETS)));
	ck_assert_str_eq(state(1, x), "I+MI_A");
	size_t putm = EXPECT(CXS_MSG_PUTM, 1, MN0, x);
	ck_assert_uint_eq(msg64(putm, 0), b);
	load(1, 1, g);
	size_t gets = EXPECT(CXS_MSG_GETS, 1, MN0 + 1, g);

	fail_cn(1);
	/* The home still thought CN 1 owned X, and the four lines of the fill. */
	ck_assert_uint_eq(W.nowned, 5);
	ck_assert_uint_eq(W.owned[0], line_of(x));
	for (uint64_t k = 1; k <= 4; k++)
		ck_assert_uint_eq(W.owned[k], line_of(cxl(10 + k * L3_SETS)));
	ck_assert_uint_eq(entry(x)->state, CXS_D_I);

	unsigned writes = W.dram_writes;
	deliver(putm); /* deliver() requires rc == 0 */
	ck_assert_uint_eq(W.home[0].dropped_from_dead, 1);
	ck_assert_uint_eq(mem64(x), a);
	ck_assert_uint_eq(W.dram_writes, writes);
	ck_assert_uint_eq(entry(x)->state, CXS_D_I);
	deliver(gets);
	ck_assert_uint_eq(W.home[1].dropped_from_dead, 1);
	ck_assert_ptr_null(cxs_home_entry(&W.home[1], line_of(g)));
	ck_assert_uint_eq(in_flight(), 0);

	/* The lost line serves the survivor from memory. */
	uint64_t t = load(0, 0, x);
	pump();
	ck_assert_uint_eq(value_of(t), a);
	ck_assert_str_eq(state(0, x), "E");
	ck_assert_uint_eq(W.home[0].dropped_from_dead, 1);
	world_teardown();
}
END_TEST

/*
 * The failure of a node that is not one of the home's CNs (ncns, or 64: past
 * the sharer vector) is refused with a message naming it, and changes
 * nothing: no CN is marked dead, nothing is reported, CN 1 keeps its line.
 */
START_TEST(test_failure_of_non_cn_refused)
{
	world_setup(1, 2);
	const uint64_t x = cxl(0);
	const uint32_t bad[] = {2, 64};
	char err[256];

	load(1, 0, x);
	pump();
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char name[16];
		snprintf(name, sizeof name, "node %u", bad[i]);
		err[0] = '\0';
		W.nowned = 0;
		ck_assert_int_eq(cxs_home_cn_failed(&W.home[0], W.now, bad[i], owned_cb, &W, err,
						    sizeof err),
				 -1);
		ck_assert_msg(strstr(err, name) != NULL, "\"%s\" does not name %s", err, name);
		ck_assert_uint_eq(W.nowned, 0);
		ck_assert_uint_eq(W.home[0].dead, 0);
	}
	ck_assert_uint_eq(entry(x)->state, CXS_D_EM);
	ck_assert_uint_eq(entry(x)->owner, 1);
	world_teardown();
}
END_TEST

/* ---- 10b. failure with recover_owned (DIKTAMO: the logs hold the lost writes) ---- */

/* 64 bytes of 0xee with the given 8-byte words set (word w at bytes 8w..8w+7). */
static void line_words(uint8_t d[CXS_LINE_BYTES], uint32_t w0, uint64_t v0, uint32_t w1,
		       uint64_t v1)
{
	memset(d, 0xee, CXS_LINE_BYTES);
	for (int i = 0; i < 8; i++) {
		d[8 * w0 + i] = (uint8_t)(v0 >> (8 * i));
		d[8 * w1 + i] = (uint8_t)(v1 >> (8 * i));
	}
}

/* cxs_home_recovered at a fresh time, which must be accepted; returns that time. */
static cxs_time recovered(uint64_t addr, const uint8_t *data, uint8_t mask, cxs_time *done)
{
	char err[512] = "";
	W.now += 1000;
	ck_assert_msg(cxs_home_recovered(home_of_addr(addr), W.now, line_of(addr), data, mask, done,
					 err, sizeof err) == 0,
		      "cxs_home_recovered(%#" PRIx64 "): %s", line_of(addr), err);
	return W.now;
}

/*
 * With recover_owned, the lines the dead CN owned (X dirty in M, Y clean in
 * E) are reported as before but do not take memory's value: they wait, I
 * and busy RECOVER, and requests to them queue without an answer (a home
 * that served them would hand out memory's stale a for X). The long wait is
 * not reported stuck (recovery times itself). Meanwhile a line the dead CN
 * did not own (Z, CN 0's) is served as usual, and a line it shared (V)
 * loses it from the sharer vector at once. cxs_home_recovered then writes
 * the recovered words of its mask over memory's line — X: words 0 and 3 (b
 * and d); word 1 keeps memory's a1, words 2 and 4..7 memory's zeros, not
 * the 0xee filler — as a DRAM write whose end is *done, and serves the
 * queued requests with that line: DATA_E with b to CN 0 (the line was I),
 * after a DRAM read. Y, recovered with mask 0, is still written (a DRAM
 * write) but keeps memory's zeros, and its queued GETM is granted. Lines
 * not waiting (recovered already, owned by a live CN, never seen) are
 * refused with a message naming the line, and nothing is written.
 */
START_TEST(test_recover_owned_lines_wait_for_recovery)
{
	world_setup(1, 3);
	W.home[0].recover_owned = true;
	const uint64_t x = cxl(0), y = cxl(2), z = cxl(4), v = cxl(6), never = cxl(8);
	const uint64_t a = 0xa000a, a1 = 0xa111a, b = 0xb000b, c = 0xc000c, d = 0xd000d;
	const cxs_time T = CXS_PS_PER_MS;
	char buf[512], err[512];
	uint8_t data[CXS_LINE_BYTES];
	cxs_time done = 0;

	/* X: memory a, a1 (CN 0's stores, recalled by CN 1's); CN 1 holds b in M. */
	store(0, 0, x, a);
	store(0, 1, x + 8, a1);
	pump();
	store(1, 0, x, b);
	pump();
	ck_assert_uint_eq(mem64(x), a);
	ck_assert_uint_eq(mem64(x + 8), a1);
	ck_assert_str_eq(state(1, x), "M");
	load(1, 0, y);
	pump();
	ck_assert_str_eq(state(1, y), "E");
	load(0, 0, z);
	pump();
	ck_assert_str_eq(state(0, z), "E");
	share(1, 2, v);
	unsigned reads = W.dram_reads, writes = W.dram_writes;

	fail_cn(1);
	ck_assert_uint_eq(W.nowned, 2);
	ck_assert_uint_eq(W.owned[0], line_of(x));
	ck_assert_uint_eq(W.owned[1], line_of(y));
	const struct cxs_home_entry *ex = entry(x), *ey = entry(y), *ez = entry(z), *ev = entry(v);
	ck_assert_uint_eq(ex->state, CXS_D_I);
	ck_assert_uint_eq(ex->busy, CXS_HB_RECOVER);
	ck_assert_uint_eq(ey->state, CXS_D_I);
	ck_assert_uint_eq(ey->busy, CXS_HB_RECOVER);
	ck_assert_uint_eq(ez->state, CXS_D_EM);
	ck_assert_uint_eq(ez->owner, 0);
	ck_assert_uint_eq(ez->busy, CXS_HB_NONE);
	ck_assert_uint_eq(ev->state, CXS_D_S);
	ck_assert_uint_eq(ev->sharers, 0x4);
	ck_assert_uint_eq(ev->busy, CXS_HB_NONE);
	ck_assert_uint_eq(mem64(x), a); /* nothing written yet */
	ck_assert_uint_eq(W.dram_reads, reads);
	ck_assert_uint_eq(W.dram_writes, writes);
	ck_assert_uint_eq(in_flight(), 0);
	ck_assert_uint_eq(cxs_home_entries(&W.home[0]), 4);
	ck_assert_int_eq(cxs_home_stuck(&W.home[0], W.now + 10 * T, T, buf, sizeof buf), 0);

	/* Requests to the waiting lines queue; the others are served. */
	uint64_t tx = load(0, 0, x);
	deliver(EXPECT(CXS_MSG_GETS, 0, MN0, x));
	uint64_t ty = store(2, 0, y + 8, c);
	deliver(EXPECT(CXS_MSG_GETM, 2, MN0, y));
	ck_assert_uint_eq(ex->qn, 1);
	ck_assert_uint_eq(ey->qn, 1);
	ck_assert_uint_eq(count_msgs(ANY, MN0, ANY, line_of(x)), 0);
	ck_assert_uint_eq(count_msgs(ANY, MN0, ANY, line_of(y)), 0);
	uint64_t tz = load(2, 1, z);
	uint64_t tv = store(2, 1, v + 8, 0x5);
	pump();
	ck_assert_uint_eq(value_of(tz), 0);
	ck_assert_ptr_nonnull(result(tv));
	ck_assert_str_eq(state(2, v), "M"); /* no INV to the dead sharer: record() refuses it */
	ck_assert_ptr_null(result(tx));
	ck_assert_ptr_null(result(ty));
	ck_assert_uint_eq(ex->busy, CXS_HB_RECOVER);
	ck_assert_int_eq(cxs_home_stuck(&W.home[0], W.now + 10 * T, T, buf, sizeof buf), 0);

	/* X: words 0 and 3 recovered, the rest memory's. */
	line_words(data, 0, b, 3, d);
	writes = W.dram_writes;
	reads = W.dram_reads;
	cxs_time t = recovered(x, data, 0x09, &done);
	ck_assert_uint_eq(done, t + DRAM_PS);
	ck_assert_uint_eq(W.dram_writes, writes + 1);
	ck_assert_uint_eq(mem64(x), b);
	ck_assert_uint_eq(mem64(x + 8), a1);
	ck_assert_uint_eq(mem64(x + 16), 0);
	ck_assert_uint_eq(mem64(x + 24), d);
	for (uint64_t o = 32; o < CXS_LINE_BYTES; o += 8)
		ck_assert_uint_eq(mem64(x + o), 0);
	ck_assert_uint_eq(ex->busy, CXS_HB_NONE);
	ck_assert_uint_eq(ex->state, CXS_D_EM);
	ck_assert_uint_eq(ex->owner, 0);
	ck_assert_uint_eq(ex->qn, 0);
	ck_assert_uint_eq(W.dram_reads, reads + 1); /* the grant's read */
	size_t i = EXPECT(CXS_MSG_DATA_E, MN0, 0, x);
	ck_assert_uint_eq(msg64(i, 0), b);
	ck_assert_uint_eq(msg64(i, 8), a1);
	ck_assert_uint_eq(msg64(i, 16), 0);
	ck_assert_uint_eq(msg64(i, 24), d);
	ck_assert_uint_ge(W.q[i].when, t + DRAM_PS);
	deliver(i);
	ck_assert_uint_eq(value_of(tx), b);
	ck_assert_str_eq(state(0, x), "E");

	/* Y: mask 0 writes memory's own value back. */
	line_words(data, 0, 0x1, 1, 0x2);
	writes = W.dram_writes;
	t = recovered(y, data, 0, &done);
	ck_assert_uint_eq(done, t + DRAM_PS);
	ck_assert_uint_eq(W.dram_writes, writes + 1);
	for (uint64_t o = 0; o < CXS_LINE_BYTES; o += 8)
		ck_assert_uint_eq(mem64(y + o), 0);
	ck_assert_uint_eq(ey->busy, CXS_HB_NONE);
	pump();
	ck_assert_ptr_nonnull(result(ty));
	ck_assert_str_eq(state(2, y), "M");
	ck_assert_uint_eq(peek(2, y), 0);
	ck_assert_uint_eq(peek(2, y + 8), c);

	/* Lines that do not wait are refused and nothing is written. */
	const uint64_t bad[] = {x, z, never};
	writes = W.dram_writes;
	line_words(data, 0, 0x77, 1, 0x77);
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		err[0] = '\0';
		ck_assert_int_eq(cxs_home_recovered(&W.home[0], W.now, line_of(bad[k]), data, 0xff,
						    &done, err, sizeof err),
				 -1);
		ck_assert_msg(strstr(err, line_hex(bad[k])) != NULL, "\"%s\" does not name %s", err,
			      line_hex(bad[k]));
	}
	ck_assert_uint_eq(W.dram_writes, writes);
	ck_assert_uint_eq(mem64(x), b);
	ck_assert_uint_eq(mem64(z), 0);
	ck_assert_ptr_null(cxs_home_entry(&W.home[0], line_of(never)));
	ck_assert_uint_eq(in_flight(), 0);
	world_teardown();
}
END_TEST

/*
 * With recover_owned, a recall the dead owner will never answer waits for
 * recovery instead of serving memory's value (a, a2: what the old behaviour
 * hands out, test_failure_unanswered_recall): no DRAM read and no grant at
 * the failure. cxs_home_recovered completes it with the recovered word: Y
 * first (CN 2's GETM gets DATA_M with b2, after a DRAM read that starts at
 * the recovery), then X (CN 0's GETS gets DATA_S with b; the dead owner is
 * no sharer; CN 2's GETS queued behind is then served from the S line).
 */
START_TEST(test_recover_owned_unanswered_recall)
{
	world_setup(1, 3);
	W.home[0].recover_owned = true;
	const uint64_t x = cxl(0), y = cxl(2);
	const uint64_t a = 0xaaa1, b = 0xbbb1, a2 = 0xaaa2, b2 = 0xbbb2, c = 0xccc2;
	uint8_t data[CXS_LINE_BYTES];
	cxs_time done = 0;

	store(0, 0, x, a);
	pump();
	store(1, 0, x, b);
	pump();
	store(2, 0, y, a2);
	pump();
	store(1, 1, y, b2);
	pump();
	ck_assert_str_eq(state(1, x), "M");
	ck_assert_str_eq(state(1, y), "M");

	uint64_t tx = load(0, 0, x);
	deliver(EXPECT(CXS_MSG_GETS, 0, MN0, x));
	EXPECT(CXS_MSG_RECALL_S, MN0, 1, x);
	uint64_t ty = store(2, 0, y + 8, c);
	deliver(EXPECT(CXS_MSG_GETM, 2, MN0, y));
	EXPECT(CXS_MSG_RECALL_I, MN0, 1, y);
	uint64_t tx2 = load(2, 1, x + 16);
	deliver(EXPECT(CXS_MSG_GETS, 2, MN0, x));
	unsigned reads = W.dram_reads;

	fail_cn(1);
	ck_assert_uint_eq(W.nowned, 2);
	ck_assert_uint_eq(W.owned[0], line_of(x));
	ck_assert_uint_eq(W.owned[1], line_of(y));
	ck_assert_uint_eq(W.dram_reads, reads);
	ck_assert_uint_eq(in_flight(), 0);
	const struct cxs_home_entry *ex = entry(x), *ey = entry(y);
	ck_assert_uint_eq(ex->busy, CXS_HB_RECALL);
	ck_assert_uint_eq(ex->recover, 1);
	ck_assert_uint_eq(ex->qn, 1);
	ck_assert_uint_eq(ey->busy, CXS_HB_RECALL);
	ck_assert_uint_eq(ey->recover, 1);

	line_words(data, 0, b2, 7, 0x99);
	cxs_time t = recovered(y, data, 0x01, &done);
	ck_assert_uint_eq(done, t + DRAM_PS);
	ck_assert_uint_eq(W.dram_reads, reads + 1);
	ck_assert_uint_eq(mem64(y), b2);
	ck_assert_uint_eq(mem64(y + 56), 0);
	size_t j = EXPECT(CXS_MSG_DATA_M, MN0, 2, y);
	ck_assert_uint_eq(msg64(j, 0), b2);
	ck_assert_uint_ge(W.q[j].when, t + DRAM_PS);
	ck_assert_uint_eq(ey->busy, CXS_HB_NONE);
	ck_assert_uint_eq(ey->recover, 0);
	ck_assert_uint_eq(ey->state, CXS_D_EM);
	ck_assert_uint_eq(ey->owner, 2);
	ck_assert_uint_eq(count_msgs(ANY, MN0, ANY, line_of(x)), 0); /* X still waits */

	line_words(data, 0, b, 1, 0x99);
	t = recovered(x, data, 0x01, &done);
	ck_assert_uint_eq(done, t + DRAM_PS);
	ck_assert_uint_eq(mem64(x), b);
	ck_assert_uint_eq(mem64(x + 8), 0);
	size_t i = EXPECT(CXS_MSG_DATA_S, MN0, 0, x);
	ck_assert_uint_eq(msg64(i, 0), b);
	ck_assert_uint_ge(W.q[i].when, t + DRAM_PS);
	ck_assert_uint_eq(ex->busy, CXS_HB_NONE);
	ck_assert_uint_eq(ex->recover, 0);
	ck_assert_uint_eq(ex->state, CXS_D_S);
	ck_assert_uint_eq(ex->sharers, 0x5); /* CN 0, then CN 2's queued GETS; not CN 1 */
	ck_assert_uint_eq(ex->qn, 0);

	pump();
	ck_assert_uint_eq(value_of(tx), b);
	ck_assert_uint_eq(value_of(tx2), 0);
	ck_assert_str_eq(state(0, x), "S");
	ck_assert_str_eq(state(2, x), "S");
	ck_assert_ptr_nonnull(result(ty));
	ck_assert_uint_eq(peek(2, y), b2);
	ck_assert_uint_eq(peek(2, y + 8), c);
	world_teardown();
}
END_TEST

/*
 * A second CN fails while a line waits for the first one's recovery: its
 * queued request is dropped (the line keeps waiting, CN 0's request keeps
 * its place) and the recovery serves only CN 0 — a grant to dead CN 2
 * would fail the test in record().
 */
START_TEST(test_recover_owned_second_failure_while_waiting)
{
	world_setup(1, 3);
	W.home[0].recover_owned = true;
	const uint64_t x = cxl(0);
	const uint64_t b = 0xb0b0;
	uint8_t data[CXS_LINE_BYTES];
	cxs_time done = 0;

	store(1, 0, x, b);
	pump();
	fail_cn(1);
	const struct cxs_home_entry *ex = entry(x);
	ck_assert_uint_eq(ex->busy, CXS_HB_RECOVER);
	load(2, 0, x);
	deliver(EXPECT(CXS_MSG_GETS, 2, MN0, x));
	uint64_t t0 = load(0, 0, x);
	deliver(EXPECT(CXS_MSG_GETS, 0, MN0, x));
	ck_assert_uint_eq(ex->qn, 2);

	fail_cn(2);
	ck_assert_uint_eq(W.nowned, 0);
	ck_assert_uint_eq(ex->busy, CXS_HB_RECOVER);
	ck_assert_uint_eq(ex->qn, 1);
	ck_assert_uint_eq(ex->q[ex->qhead % ex->qcap].src, 0);
	ck_assert_uint_eq(in_flight(), 0);

	line_words(data, 0, b, 1, 0);
	recovered(x, data, 0x01, &done);
	pump();
	ck_assert_uint_eq(value_of(t0), b);
	ck_assert_str_eq(state(0, x), "E");
	ck_assert_uint_eq(ex->owner, 0);
	ck_assert_uint_eq(ex->qn, 0);
	world_teardown();
}
END_TEST

/* ---- 11. what a CN holds (cxs_cn_lines_held) --------------------------------- */

enum { MAX_HELD = 32 };

static struct {
	struct {
		uint64_t line;
		enum cxs_cn_hold how;
		int has_data;
		uint8_t data[CXS_LINE_BYTES];
		uint8_t unsaved;
	} r[MAX_HELD];
	size_t n;
} H;

static void held_cb(void *ctx, uint64_t line, enum cxs_cn_hold how, const uint8_t *data,
		    uint8_t unsaved_words)
{
	ck_assert_ptr_eq(ctx, &H);
	ck_assert_msg(H.n < MAX_HELD, "held list full");
	H.r[H.n].line = line;
	H.r[H.n].how = how;
	H.r[H.n].has_data = data != NULL;
	if (data)
		memcpy(H.r[H.n].data, data, CXS_LINE_BYTES);
	H.r[H.n].unsaved = unsaved_words;
	H.n++;
}

static void collect_held(uint32_t cn)
{
	memset(&H, 0, sizeof H);
	cxs_cn_lines_held(W.cn[cn], held_cb, &H);
}

/* How many reports name the line of addr. */
static unsigned held_count(uint64_t addr)
{
	unsigned n = 0;
	for (size_t i = 0; i < H.n; i++)
		n += H.r[i].line == line_of(addr);
	return n;
}

/* The one report of the line of addr, which must be of kind `how`. */
#define HELD(addr, how) held_one(addr, how, __LINE__)
static size_t held_one(uint64_t addr, enum cxs_cn_hold how, int at)
{
	ck_assert_msg(held_count(addr) == 1, "line %d: line %#" PRIx64 " reported %u times", at,
		      line_of(addr), held_count(addr));
	for (size_t i = 0; i < H.n; i++)
		if (H.r[i].line == line_of(addr)) {
			ck_assert_msg(H.r[i].how == how,
				      "line %d: line %#" PRIx64 " reported as %d, expected %d", at,
				      line_of(addr), (int)H.r[i].how, (int)how);
			return i;
		}
	return 0;
}

/*
 * A CN holding a line of every kind: M written in two words (1 and 5), E
 * loaded with a value another CN had written back, S, a GETS not yet
 * answered, a PUTM in flight, and the four E lines that filled the PUTM'd
 * line's set. Each is reported once with its kind, the M line's unsaved mask
 * is exactly words 1 and 5 (0x22), data travels with every kind but
 * PENDING. Once the M line is recalled (RECALL_DATA sent, copy dropped) it
 * is not reported at all, whatever its mask was.
 */
START_TEST(test_lines_held_kinds_and_unsaved)
{
	world_setup(2, 2);
	const uint64_t m = cxl(0), e = cxl(2), s = cxl(4), p = cxl(6), w = cxl(8);
	const uint64_t A = UINT64_C(0x0101010101010101), B = UINT64_C(0x0505050505050505);
	const uint64_t EV = UINT64_C(0xe1e2e3e4e5e6e7e8), WV = UINT64_C(0x7777777777777777);

	/* E: CN 1 writes EV at e+16 and writes it back; CN 0 then loads it exclusive. */
	store(1, 0, e + 16, EV);
	pump();
	fill_l3_set(1, 0, 2, 4);
	ck_assert_uint_eq(mem64(e + 16), EV);
	uint64_t te = load(0, 0, e + 16);
	pump();
	ck_assert_uint_eq(value_of(te), EV);
	ck_assert_str_eq(state(0, e), "E");

	store(0, 0, m + 8, A);
	pump();
	store(0, 1, m + 40, B);
	ck_assert_str_eq(state(0, m), "M");
	share(0, 1, s);
	store(0, 0, w, WV);
	pump();
	fill_l3_set(0, 0, 8, 3);
	load(0, 0, cxl(8 + 4 * L3_SETS));
	deliver(EXPECT(CXS_MSG_GETS, 0, MN0, cxl(8 + 4 * L3_SETS)));
	deliver(EXPECT(CXS_MSG_DATA_E, MN0, 0, cxl(8 + 4 * L3_SETS)));
	ck_assert_str_eq(state(0, w), "I+MI_A");
	load(0, 1, p);
	ck_assert_str_eq(state(0, p), "I+IS_D");

	collect_held(0);
	ck_assert_uint_eq(H.n, 9);
	size_t i = HELD(m, CXS_HOLD_M);
	ck_assert_uint_eq(H.r[i].unsaved, 0x22);
	ck_assert(H.r[i].has_data);
	ck_assert_uint_eq(le64(H.r[i].data + 8), A);
	ck_assert_uint_eq(le64(H.r[i].data + 40), B);
	ck_assert_uint_eq(le64(H.r[i].data), 0);

	uint8_t want[CXS_LINE_BYTES] = {0};
	for (int b = 0; b < 8; b++)
		want[16 + b] = (uint8_t)(0xe8 - b); /* EV, little-endian */
	i = HELD(e, CXS_HOLD_E);
	ck_assert(H.r[i].has_data);
	ck_assert_mem_eq(H.r[i].data, want, CXS_LINE_BYTES);
	ck_assert_uint_eq(H.r[i].unsaved, 0);

	i = HELD(s, CXS_HOLD_S);
	ck_assert(H.r[i].has_data);
	ck_assert_uint_eq(H.r[i].unsaved, 0);
	i = HELD(p, CXS_HOLD_PENDING);
	ck_assert(!H.r[i].has_data);
	ck_assert_uint_eq(H.r[i].unsaved, 0);
	i = HELD(w, CXS_HOLD_WRITEBACK);
	ck_assert(H.r[i].has_data);
	ck_assert_uint_eq(le64(H.r[i].data), WV);
	ck_assert_uint_eq(H.r[i].unsaved, 0);
	for (uint64_t k = 1; k <= 4; k++)
		HELD(cxl(8 + k * L3_SETS), CXS_HOLD_E);

	/* The same state reports the same list (deterministic). */
	size_t n1 = H.n;
	uint64_t first = H.r[0].line, last = H.r[n1 - 1].line;
	collect_held(0);
	ck_assert_uint_eq(H.n, n1);
	ck_assert_uint_eq(H.r[0].line, first);
	ck_assert_uint_eq(H.r[n1 - 1].line, last);

	/* CN 1's store recalls M: the data goes home, the line is no longer held. */
	store(1, 0, m, 0x99);
	deliver(EXPECT(CXS_MSG_GETM, 1, MN0, m));
	deliver(EXPECT(CXS_MSG_RECALL_I, MN0, 0, m));
	size_t rd = EXPECT(CXS_MSG_RECALL_DATA, 0, MN0, m);
	ck_assert_uint_eq(W.q[rd].m.dirty, 1);
	ck_assert_uint_eq(msg64(rd, 8), A);
	ck_assert_uint_eq(msg64(rd, 40), B);
	collect_held(0);
	ck_assert_uint_eq(held_count(m), 0);
	ck_assert_uint_eq(H.n, 8);
	HELD(p, CXS_HOLD_PENDING);
	HELD(w, CXS_HOLD_WRITEBACK);
	world_teardown();
}
END_TEST

/*
 * Write-through (the WT protocol's stores carry CXS_REQ_WT): the line stays
 * M, but once the WT is sent none of its words is unsaved — the whole line
 * is on its way to memory — while the store itself completes only on
 * WT_ACK. A plain store afterwards starts a new mask with only its word
 * (3). On an E line the WT store makes it M (silent E -> M) with mask 0 too.
 */
START_TEST(test_lines_held_write_through_saves)
{
	world_setup(2, 2);
	const uint64_t x = cxl(0), y = cxl(2);
	const uint64_t v1 = 0x1111, v2 = 0x2222, v3 = 0x3333, vy = 0x4444;

	store(0, 0, x, v1);
	pump();
	collect_held(0);
	ck_assert_uint_eq(H.r[HELD(x, CXS_HOLD_M)].unsaved, 0x01);

	uint64_t t = issue_flags(0, 0, CXS_OP_STORE, x + 16, 8, v2, CXS_REQ_WT);
	ck_assert_ptr_null(result(t));
	ck_assert_str_eq(state(0, x), "M");
	size_t i = EXPECT(CXS_MSG_WT, 0, MN0, x);
	ck_assert_uint_eq(msg64(i, 0), v1);
	ck_assert_uint_eq(msg64(i, 16), v2);
	collect_held(0);
	ck_assert_uint_eq(H.n, 1);
	size_t k = HELD(x, CXS_HOLD_M);
	ck_assert_uint_eq(H.r[k].unsaved, 0);
	ck_assert_uint_eq(le64(H.r[k].data + 16), v2);

	deliver(i);
	ck_assert_uint_eq(mem64(x), v1);
	ck_assert_uint_eq(mem64(x + 16), v2);
	ck_assert_uint_eq(entry(x)->state, CXS_D_EM);
	ck_assert_uint_eq(entry(x)->owner, 0);
	ck_assert_ptr_null(result(t));
	deliver(EXPECT(CXS_MSG_WT_ACK, MN0, 0, x));
	ck_assert_ptr_nonnull(result(t));
	ck_assert_str_eq(state(0, x), "M");

	store(0, 1, x + 24, v3);
	collect_held(0);
	ck_assert_uint_eq(H.r[HELD(x, CXS_HOLD_M)].unsaved, 0x08);

	load(0, 0, y);
	pump();
	ck_assert_str_eq(state(0, y), "E");
	issue_flags(0, 1, CXS_OP_STORE, y + 56, 8, vy, CXS_REQ_WT);
	ck_assert_str_eq(state(0, y), "M");
	EXPECT(CXS_MSG_WT, 0, MN0, y);
	collect_held(0);
	ck_assert_uint_eq(H.r[HELD(y, CXS_HOLD_M)].unsaved, 0);
	ck_assert_uint_eq(H.r[HELD(x, CXS_HOLD_M)].unsaved, 0x08);
	world_teardown();
}
END_TEST

Suite *coherence_suite(void)
{
	Suite *s = suite_create("coherence");
	TCase *mesi = tcase_create("mesi");
	tcase_add_test(mesi, test_mesi_basic);
	tcase_add_test(mesi, test_e_to_m_silent_then_dirty_recall);
	tcase_add_test(mesi, test_writeback_then_reload);
	tcase_add_test(mesi, test_local_memory);
	tcase_add_test(mesi, test_compare_and_swap);
	tcase_add_test(mesi, test_grant_memory_reads);
	suite_add_tcase(s, mesi);

	TCase *races = tcase_create("races");
	tcase_add_test(races, test_inv_crosses_upgrade);
	tcase_add_test(races, test_upgrades_ordered_at_home);
	tcase_add_test(races, test_queued_requests_served_in_arrival_order);
	tcase_add_test(races, test_recall_crosses_putm);
	tcase_add_test(races, test_recall_crosses_pute);
	tcase_add_test(races, test_inv_to_silently_dropped_sharer);
	suite_add_tcase(s, races);

	TCase *errors = tcase_create("errors");
	tcase_add_test(errors, test_cn_violations_reported);
	tcase_add_test(errors, test_home_violations_reported);
	tcase_add_test(errors, test_inv_ack_from_uninvited_node_rejected);
	tcase_add_test(errors, test_fill_into_pinned_set_is_not_an_error);
	tcase_add_test(errors, test_stuck_detection);
	tcase_add_test(errors, test_cn_stuck_writeback_names_line);
	tcase_add_test(errors, test_cn_stuck_reports_oldest);
	suite_add_tcase(s, errors);

	TCase *failure = tcase_create("failure");
	tcase_add_test(failure, test_failure_sharer_leaves_vector);
	tcase_add_test(failure, test_failure_last_sharer_frees_line);
	tcase_add_test(failure, test_failure_owned_lines_reported);
	tcase_add_test(failure, test_failure_completes_inv_round);
	tcase_add_test(failure, test_failure_unanswered_recall);
	tcase_add_test(failure, test_failure_requester_dies_during_recall);
	tcase_add_test(failure, test_failure_drops_queued_requests);
	tcase_add_test(failure, test_failure_late_messages_dropped);
	tcase_add_test(failure, test_failure_of_non_cn_refused);
	tcase_add_test(failure, test_recover_owned_lines_wait_for_recovery);
	tcase_add_test(failure, test_recover_owned_unanswered_recall);
	tcase_add_test(failure, test_recover_owned_second_failure_while_waiting);
	tcase_add_test(failure, test_lines_held_kinds_and_unsaved);
	tcase_add_test(failure, test_lines_held_write_through_saves);
	suite_add_tcase(s, failure);
	return s;
}
