/*
 * Unit tests for the CXL.mem coherence protocol (include/cxlsim/coherence.h):
 * the home directory (src/mem/home.c) and the CN agent (src/mem/cn_agent.c)
 * wired to each other through a fake world, without the engine or MPI.
 *
 * The world: homes on nodes 4 and 5 (CXL lines interleaved over them line by
 * line), two or three CNs on nodes 0..2 with two cores each and tiny caches
 * (L1 1 KiB 2-way, L2 2 KiB 2-way, L3 4 KiB 4-way = 16 sets), so that five
 * CXL lines k, k+16, k+32, k+48, k+64 fill an L3 set and evict its LRU line.
 * Every message a state machine emits is appended to one list with its send
 * time; nothing moves until a test delivers it, either one chosen message at
 * a time (to force a race: deliver an INV before the GETM it crosses, a
 * RECALL before the PUT_ACK ...) or with pump(), which delivers everything in
 * time order while keeping each (source, destination) pair FIFO, as the
 * fabric does. Completed requests are recorded with their value.
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

enum { MAX_MNS = 2, MAX_CNS = 3, MAX_MSGS = 512, MAX_DONE = 128, MAX_LOCAL = 128 };

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
} W;

static void record(cxs_time when, const struct cxs_coh_msg *m)
{
	ck_assert_msg(W.nq < MAX_MSGS, "message list full");
	/* The contract: messages leave at or after the current time. */
	ck_assert_msg(when >= W.now, "%s %u->%u sent at %" PRIu64 " before now %" PRIu64,
		      cxs_msg_info(m->type)->name, m->src, m->dst, when, W.now);
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

static uint64_t issue(uint32_t cn, uint32_t core, uint8_t op, uint64_t addr, uint8_t size,
		      uint64_t value)
{
	char err[256] = "";
	W.now += 1000; /* requests at distinct times */
	struct cxs_mem_req r = {.addr = addr, .value = value, .tag = ++W.next_tag,
				.issued = W.now, .core = core, .op = op, .size = size};
	ck_assert_msg(cxs_cn_request(W.cn[cn], W.now, &r, err, sizeof err) == 0, "request: %s",
		      err);
	return r.tag;
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

Suite *coherence_suite(void)
{
	Suite *s = suite_create("coherence");
	TCase *mesi = tcase_create("mesi");
	tcase_add_test(mesi, test_mesi_basic);
	tcase_add_test(mesi, test_e_to_m_silent_then_dirty_recall);
	tcase_add_test(mesi, test_writeback_then_reload);
	tcase_add_test(mesi, test_local_memory);
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
	return s;
}
