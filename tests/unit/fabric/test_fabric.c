/*
 * Unit tests for the fabric (src/fabric/fabric.c, src/fabric/port.c): the
 * message registry, the DIKTAMO calibration (90 ns one way, 200 ns round trip
 * with a 20 ns directory lookup), exact serialisation rounding, egress and
 * ingress queueing, the traffic counters, and the lookahead bound.
 *
 * Expected times are written out in ps from the defaults (8 ps per byte at
 * 125 GB/s, 90 000 ps of flight) rather than recomputed with the functions
 * under test, so a wrong formula cannot agree with itself.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cxlsim/fabric.h"
#include "cxlsim/stats.h"
#include "unit_suites.h"

Suite *fabric_suite(void); /* until unit_suites.h lists it */

#define FLIGHT_PS UINT64_C(90000) /* 40 + 10 + 40 ns */
#define SER16_PS UINT64_C(128)
#define SER80_PS UINT64_C(640)

/* ---- helpers ---------------------------------------------------------- */

struct node {
	struct cxs_stats *st;
	struct cxs_port port;
};

static void node_init(struct node *n)
{
	n->st = cxs_stats_new();
	ck_assert_ptr_nonnull(n->st);
	/* Garbage first: init must zero the timelines itself. */
	memset(&n->port, 0xa5, sizeof(n->port));
	ck_assert_int_eq(cxs_port_init(&n->port, n->st), 0);
}

static uint64_t counter(const struct node *n, const char *name)
{
	const uint64_t *v = cxs_stats_find(n->st, "port", name);

	ck_assert_msg(v != NULL, "counter port/%s not registered", name);
	return *v;
}

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* ceil(bytes * 1e12 / bw), the obvious way, where bytes * 1e12 fits in 64 bits. */
static uint64_t ser_ref_small(uint64_t bytes, uint64_t bw)
{
	uint64_t num = bytes * UINT64_C(1000000000000);

	ck_assert_uint_lt(bytes, UINT64_C(1) << 24);
	return num / bw + (num % bw != 0);
}

/* ---- registry --------------------------------------------------------- */

START_TEST(test_registry_complete)
{
	for (int t = 0; t < CXS_MSG_TYPE_COUNT; t++) {
		const struct cxs_msg_info *mi = cxs_msg_info((enum cxs_msg_type)t);

		ck_assert_ptr_nonnull(mi);
		ck_assert_msg(mi->name != NULL && mi->name[0] != '\0', "type %d has no name", t);
		ck_assert_msg(strspn(mi->name, "abcdefghijklmnopqrstuvwxyz0123456789_") ==
				      strlen(mi->name),
			      "name \"%s\" is not lower_case", mi->name);
		ck_assert_msg(mi->wire_bytes > 0, "%s has no size", mi->name);
		ck_assert_int_lt(mi->cls, CXS_CLASS_COUNT);
		for (int u = 0; u < t; u++)
			ck_assert_str_ne(mi->name, cxs_msg_info((enum cxs_msg_type)u)->name);
	}
	for (int c = 0; c < CXS_CLASS_COUNT; c++) {
		const char *name = cxs_msg_class_name((enum cxs_msg_class)c);

		ck_assert_ptr_nonnull(name);
		for (int d = 0; d < c; d++)
			ck_assert_str_ne(name, cxs_msg_class_name((enum cxs_msg_class)d));
	}
}
END_TEST

START_TEST(test_registry_sizes_and_names)
{
	static const enum cxs_msg_type line_msgs[] = {
		CXS_MSG_DATA_S, CXS_MSG_DATA_E, CXS_MSG_DATA_M, CXS_MSG_PUTM,
		CXS_MSG_RECALL_DATA, CXS_MSG_DMA_WRITE, CXS_MSG_FETCH_LATEST_RESP,
	};
	static const enum cxs_msg_type hdr_msgs[] = {
		CXS_MSG_GETS, CXS_MSG_GETM, CXS_MSG_PUTE, CXS_MSG_INV, CXS_MSG_INV_ACK,
		CXS_MSG_RECALL_S, CXS_MSG_RECALL_I, CXS_MSG_RECALL_ACK, CXS_MSG_PUT_ACK,
		CXS_MSG_REPL_ACK, CXS_MSG_LOG_SYNC, CXS_MSG_INTERRUPT, CXS_MSG_RECOV_END_RESP,
	};

	for (size_t i = 0; i < sizeof(line_msgs) / sizeof(line_msgs[0]); i++)
		ck_assert_uint_eq(cxs_msg_info(line_msgs[i])->wire_bytes, 80);
	for (size_t i = 0; i < sizeof(hdr_msgs) / sizeof(hdr_msgs[0]); i++)
		ck_assert_uint_eq(cxs_msg_info(hdr_msgs[i])->wire_bytes, 16);
	ck_assert_uint_eq(cxs_msg_info(CXS_MSG_REPL)->wire_bytes, 32);
	ck_assert_uint_eq(cxs_msg_info(CXS_MSG_MSI)->wire_bytes, 24);
	/* The smallest of the messages sized by their fields (fabric.c's table). */
	ck_assert_uint_eq(cxs_msg_info(CXS_MSG_VAL)->wire_bytes, 16 + 8);
	ck_assert_uint_eq(cxs_msg_info(CXS_MSG_LOG_DUMP)->wire_bytes, 80);

	ck_assert_str_eq(cxs_msg_info(CXS_MSG_GETS)->name, "gets");
	ck_assert_str_eq(cxs_msg_info(CXS_MSG_DATA_S)->name, "data_s");
	ck_assert_str_eq(cxs_msg_info(CXS_MSG_RECALL_I)->name, "recall_i");
	ck_assert_str_eq(cxs_msg_info(CXS_MSG_PUT_ACK)->name, "put_ack");
	ck_assert_str_eq(cxs_msg_info(CXS_MSG_FETCH_LATEST_RESP)->name, "fetch_latest_resp");

	ck_assert_int_eq(cxs_msg_info(CXS_MSG_GETM)->cls, CXS_CLASS_MEM);
	ck_assert_int_eq(cxs_msg_info(CXS_MSG_MMIO)->cls, CXS_CLASS_IO);
	ck_assert_int_eq(cxs_msg_info(CXS_MSG_DMA_WRITE)->cls, CXS_CLASS_DMA);
	ck_assert_int_eq(cxs_msg_info(CXS_MSG_VAL)->cls, CXS_CLASS_REPL);
	ck_assert_int_eq(cxs_msg_info(CXS_MSG_FETCH_LATEST)->cls, CXS_CLASS_RECOVERY);
	ck_assert_str_eq(cxs_msg_class_name(CXS_CLASS_MEM), "mem");
	ck_assert_str_eq(cxs_msg_class_name(CXS_CLASS_IO), "io");
	ck_assert_str_eq(cxs_msg_class_name(CXS_CLASS_DMA), "dma");
	ck_assert_str_eq(cxs_msg_class_name(CXS_CLASS_REPL), "repl");
	ck_assert_str_eq(cxs_msg_class_name(CXS_CLASS_RECOVERY), "recovery");
}
END_TEST

/* ---- calibration ------------------------------------------------------ */

START_TEST(test_default_min_latency)
{
	struct cxs_fabric_params p;

	cxs_fabric_default(&p);
	ck_assert_uint_eq(cxs_fabric_min_latency(&p), FLIGHT_PS);
	ck_assert_uint_eq(p.link_bytes_per_s, UINT64_C(125000000000));
}
END_TEST

/* CN sends GETS to an idle MN, the directory takes 20 ns, the MN answers DATA_S. */
START_TEST(test_idle_round_trip_200ns)
{
	struct cxs_fabric_params p;
	struct node cn, mn;
	cxs_time t, rt;

	cxs_fabric_default(&p);
	node_init(&cn);
	node_init(&mn);

	t = cxs_port_send(&cn.port, &p, 0, CXS_MSG_GETS);
	t = cxs_port_receive(&mn.port, &p, t, CXS_MSG_GETS);
	t += 20 * CXS_PS_PER_NS;
	t += cxs_port_send(&mn.port, &p, t, CXS_MSG_DATA_S);
	rt = cxs_port_receive(&cn.port, &p, t, CXS_MSG_DATA_S);

	ck_assert_msg(rt >= 199000 && rt <= 201000, "round trip %llu ps, want 200 ns +- 1 ns",
		      (unsigned long long)rt);
	/* Flight once per direction, each message's serialisation once. */
	ck_assert_uint_eq(rt, 2 * FLIGHT_PS + 20000 + SER16_PS + SER80_PS);
	cxs_stats_free(cn.st);
	cxs_stats_free(mn.st);
}
END_TEST

/* ---- serialisation ---------------------------------------------------- */

START_TEST(test_ser_rounding)
{
	struct cxs_fabric_params p;
	uint64_t s = 0x9e3779b97f4a7c15ull;

	cxs_fabric_default(&p);
	ck_assert_uint_eq(cxs_fabric_ser(&p, 0), 0);
	ck_assert_uint_eq(cxs_fabric_ser(&p, 1), 8);
	ck_assert_uint_eq(cxs_fabric_ser(&p, 16), SER16_PS);
	ck_assert_uint_eq(cxs_fabric_ser(&p, 80), SER80_PS);

	/* 1e12 / 3 = 333333333333.33...: rounds up, and 3 bytes are exact. */
	p.link_bytes_per_s = 3;
	ck_assert_uint_eq(cxs_fabric_ser(&p, 1), UINT64_C(333333333334));
	ck_assert_uint_eq(cxs_fabric_ser(&p, 3), UINT64_C(1000000000000));
	/* 1 byte at just under 1 TB/s takes a little over 1 ps: 2. */
	p.link_bytes_per_s = UINT64_C(999999999999);
	ck_assert_uint_eq(cxs_fabric_ser(&p, 1), 2);

	/* Large operands, where bytes * 1e12 overflows 64 bits. */
	p.link_bytes_per_s = UINT64_C(1000000000000);
	ck_assert_uint_eq(cxs_fabric_ser(&p, UINT32_MAX), UINT32_MAX);
	p.link_bytes_per_s = UINT64_C(1000000);
	ck_assert_uint_eq(cxs_fabric_ser(&p, UINT32_MAX), (uint64_t)UINT32_MAX * 1000000);
	p.link_bytes_per_s = (UINT64_C(1) << 50) - 1;
	ck_assert_uint_eq(cxs_fabric_ser(&p, UINT32_MAX), 3814698); /* 3814697.26... */
	p.link_bytes_per_s = UINT64_MAX; /* the doublings must not overflow near 2^64 */
	ck_assert_uint_eq(cxs_fabric_ser(&p, UINT32_MAX), 233); /* 232.83... */
	/* A result past 2^64 ps saturates instead of wrapping. */
	p.link_bytes_per_s = 1;
	ck_assert_uint_eq(cxs_fabric_ser(&p, UINT32_MAX), CXS_TIME_INF);

	/* Against the plain formula wherever it cannot overflow. */
	for (int i = 0; i < 20000; i++) {
		uint64_t bytes = next_rand(&s) % (UINT64_C(1) << 24);
		uint64_t bw = next_rand(&s) % (UINT64_C(1) << 50) + 1;

		if (i % 2)
			bw = bw % 1000000 + 1; /* small rates stress the carries */
		if (i % 5 == 0) {
			/* a divisor of 1e12 = 2^12 5^12: the whole-ps-per-byte path */
			bw = UINT64_C(1) << (next_rand(&s) % 13);
			for (uint64_t k = next_rand(&s) % 13; k > 0; k--)
				bw *= 5;
		}
		p.link_bytes_per_s = bw;
		ck_assert_msg(cxs_fabric_ser(&p, (uint32_t)bytes) == ser_ref_small(bytes, bw),
			      "ser(%llu B at %llu B/s)", (unsigned long long)bytes,
			      (unsigned long long)bw);
	}
}
END_TEST

/* ---- queueing --------------------------------------------------------- */

START_TEST(test_egress_queueing)
{
	struct cxs_fabric_params p;
	struct node n;
	uint64_t wait = 0;

	cxs_fabric_default(&p);
	node_init(&n);
	for (uint64_t i = 0; i < 100; i++) {
		cxs_time d = cxs_port_send(&n.port, &p, 0, CXS_MSG_DATA_M);

		/* Message i leaves after the i before it: tail on the wire at (i+1) * ser. */
		ck_assert_uint_eq(d, (i + 1) * SER80_PS + FLIGHT_PS);
		wait += i * SER80_PS;
	}
	ck_assert_uint_eq(n.port.egress_free, 100 * SER80_PS);
	ck_assert_uint_eq(counter(&n, "egress_busy_ps"), 100 * SER80_PS);
	ck_assert_uint_eq(counter(&n, "egress_wait_ps"), wait);

	/* Once the queue has drained, a send is back to the idle latency. */
	ck_assert_uint_eq(cxs_port_send(&n.port, &p, 100 * SER80_PS + 1, CXS_MSG_GETS),
			  SER16_PS + FLIGHT_PS);
	ck_assert_uint_eq(counter(&n, "egress_wait_ps"), wait);
	cxs_stats_free(n.st);
}
END_TEST

START_TEST(test_ingress_queueing)
{
	struct cxs_fabric_params p;
	struct node n;
	const cxs_time a = CXS_PS_PER_US;
	cxs_time prev = 0;
	uint64_t wait = 0;

	cxs_fabric_default(&p);
	node_init(&n);
	for (uint64_t i = 0; i < 10; i++) {
		cxs_time done = cxs_port_receive(&n.port, &p, a, CXS_MSG_DATA_S);

		/* The first streamed through as it arrived; each next one ser later. */
		ck_assert_uint_eq(done, a + i * SER80_PS);
		if (i > 0)
			ck_assert_uint_eq(done - prev, SER80_PS);
		prev = done;
		wait += i * SER80_PS;
	}
	ck_assert_uint_eq(counter(&n, "ingress_busy_ps"), 10 * SER80_PS);
	ck_assert_uint_eq(counter(&n, "ingress_wait_ps"), wait);

	/* Arriving while the last one is half out: it waits for the link, then ser. */
	ck_assert_uint_eq(cxs_port_receive(&n.port, &p, prev + SER80_PS / 2, CXS_MSG_DATA_S),
			  prev + SER80_PS);
	wait += SER80_PS / 2;
	/* Arriving at an idle link: done on arrival, no wait. */
	ck_assert_uint_eq(cxs_port_receive(&n.port, &p, 2 * a, CXS_MSG_GETS), 2 * a);
	ck_assert_uint_eq(counter(&n, "ingress_wait_ps"), wait);
	cxs_stats_free(n.st);
}
END_TEST

/* ---- counters --------------------------------------------------------- */

START_TEST(test_counters_match_traffic)
{
	static const enum cxs_msg_type sent[] = {
		CXS_MSG_GETS, CXS_MSG_GETS, CXS_MSG_GETS, CXS_MSG_DATA_M, CXS_MSG_DATA_M,
		CXS_MSG_LOG_DUMP, CXS_MSG_REPL, CXS_MSG_REPL, CXS_MSG_REPL, CXS_MSG_REPL,
		CXS_MSG_MSI, CXS_MSG_DMA_WRITE, CXS_MSG_FETCH_LATEST_RESP,
	};
	static const enum cxs_msg_type recvd[] = {
		CXS_MSG_DATA_E, CXS_MSG_INV, CXS_MSG_REPL_ACK, CXS_MSG_MBOX,
		CXS_MSG_INTERRUPT,
	};
	struct cxs_fabric_params p;
	struct node n;
	struct cxs_stat_view v;
	cxs_time t = 0;

	cxs_fabric_default(&p);
	node_init(&n);
	ck_assert_uint_eq(cxs_stats_count(n.st), CXS_MSG_TYPE_COUNT + 2 * CXS_CLASS_COUNT + 4);
	ck_assert_int_eq(cxs_stats_get(n.st, 0, &v), 0);
	ck_assert_str_eq(v.component, "port");
	ck_assert_str_eq(v.name, "tx_gets");
	ck_assert_str_eq(v.unit, "messages");
	ck_assert_str_eq(v.desc, "messages of type gets sent");

	for (size_t i = 0; i < sizeof(sent) / sizeof(sent[0]); i++)
		t += cxs_port_send(&n.port, &p, t, sent[i]);
	for (size_t i = 0; i < sizeof(recvd) / sizeof(recvd[0]); i++)
		t = cxs_port_receive(&n.port, &p, t + 1000, recvd[i]);

	ck_assert_uint_eq(counter(&n, "tx_gets"), 3);
	ck_assert_uint_eq(counter(&n, "tx_data_m"), 2);
	ck_assert_uint_eq(counter(&n, "tx_log_dump"), 1);
	ck_assert_uint_eq(counter(&n, "tx_repl"), 4);
	ck_assert_uint_eq(counter(&n, "tx_msi"), 1);
	ck_assert_uint_eq(counter(&n, "tx_dma_write"), 1);
	ck_assert_uint_eq(counter(&n, "tx_fetch_latest_resp"), 1);
	/* Received messages are not counted as sent. */
	ck_assert_uint_eq(counter(&n, "tx_data_e"), 0);
	ck_assert_uint_eq(counter(&n, "tx_inv"), 0);

	ck_assert_uint_eq(counter(&n, "tx_bytes_mem"), 3 * 16 + 2 * 80);
	ck_assert_uint_eq(counter(&n, "tx_bytes_repl"), 80 + 4 * 32);
	ck_assert_uint_eq(counter(&n, "tx_bytes_io"), 24);
	ck_assert_uint_eq(counter(&n, "tx_bytes_dma"), 80);
	ck_assert_uint_eq(counter(&n, "tx_bytes_recovery"), 80);
	ck_assert_uint_eq(counter(&n, "rx_bytes_mem"), 80 + 16);
	ck_assert_uint_eq(counter(&n, "rx_bytes_repl"), 16);
	ck_assert_uint_eq(counter(&n, "rx_bytes_io"), 24);
	ck_assert_uint_eq(counter(&n, "rx_bytes_dma"), 0);
	ck_assert_uint_eq(counter(&n, "rx_bytes_recovery"), 16);

	/* Busy time is the bytes at 8 ps each; every send here found the link idle. */
	ck_assert_uint_eq(counter(&n, "egress_busy_ps"), 8 * (3 * 16 + 2 * 80 + 80 + 4 * 32 +
							      24 + 80 + 80));
	ck_assert_uint_eq(counter(&n, "ingress_busy_ps"), 8 * (80 + 16 + 16 + 24 + 16));
	ck_assert_uint_eq(counter(&n, "egress_wait_ps"), 0);
	ck_assert_uint_eq(counter(&n, "ingress_wait_ps"), 0);
	cxs_stats_free(n.st);
}
END_TEST

/* A name taken by a histogram makes registration fail, and init must say so. */
START_TEST(test_init_reports_failure)
{
	struct cxs_stats *st = cxs_stats_new();
	struct cxs_port port;

	ck_assert_ptr_nonnull(st);
	ck_assert_ptr_nonnull(cxs_stats_hist(st, "port", "ingress_wait_ps", "ps", NULL, 8));
	ck_assert_int_eq(cxs_port_init(&port, st), -1);
	cxs_stats_free(st);
}
END_TEST

/* ---- lookahead -------------------------------------------------------- */

START_TEST(test_send_never_below_min_latency)
{
	uint64_t s = 12345;

	for (int run = 0; run < 50; run++) {
		struct cxs_fabric_params p;
		struct node n;
		cxs_time now = 0, last_arrival = 0;

		cxs_fabric_default(&p);
		if (run > 0) {
			p.link_latency = next_rand(&s) % (100 * CXS_PS_PER_NS);
			p.switch_latency = next_rand(&s) % (50 * CXS_PS_PER_NS);
			p.link_bytes_per_s = next_rand(&s) % UINT64_C(1000000000000) + 1000000;
		}
		node_init(&n);
		for (int i = 0; i < 2000; i++) {
			enum cxs_msg_type t = (enum cxs_msg_type)(next_rand(&s) % CXS_MSG_TYPE_COUNT);
			cxs_time d;

			now += next_rand(&s) % 3 == 0 ? 0 : next_rand(&s) % 2000;
			d = cxs_port_send(&n.port, &p, now, t);
			ck_assert_uint_ge(d, cxs_fabric_min_latency(&p));
			ck_assert_uint_ge(d, cxs_fabric_min_latency(&p) +
						     cxs_fabric_ser(&p, cxs_msg_info(t)->wire_bytes));
			/* One link is FIFO: no message overtakes an earlier one. */
			ck_assert_uint_ge(now + d, last_arrival);
			last_arrival = now + d;
		}
		cxs_stats_free(n.st);
	}
}
END_TEST

Suite *fabric_suite(void)
{
	Suite *s = suite_create("fabric");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_registry_complete);
	tcase_add_test(tc, test_registry_sizes_and_names);
	tcase_add_test(tc, test_default_min_latency);
	tcase_add_test(tc, test_idle_round_trip_200ns);
	tcase_add_test(tc, test_ser_rounding);
	tcase_add_test(tc, test_egress_queueing);
	tcase_add_test(tc, test_ingress_queueing);
	tcase_add_test(tc, test_counters_match_traffic);
	tcase_add_test(tc, test_init_reports_failure);
	tcase_add_test(tc, test_send_never_below_min_latency);
	suite_add_tcase(s, tc);
	return s;
}
