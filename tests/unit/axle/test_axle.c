/*
 * Unit tests for AXLE's ring buffers (src/axle/ring.c): wrap-around, the
 * gap-aware payload head under out-of-order consumption, flow control with
 * stale and reordered heads, and the §IV-C invariant checker refusing each
 * ordering violation. Expected indexes are written out by hand.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "cxlsim/axle.h"
#include "unit_suites.h"

static char err[256];

/* The producer writes index i (payload, metadata pointing at it, tail) as the DMA executor does. */
static void publish(struct cxs_axle_ring_tx *tx, struct cxs_axle_ring_rx *rx)
{
	ck_assert_uint_gt(cxs_axle_tx_credit(tx), 0);
	uint64_t i = cxs_axle_tx_take(tx);
	ck_assert_int_eq(cxs_axle_check_write(rx, i, err, sizeof err), 0);
	ck_assert_int_eq(cxs_axle_check_tail(rx, i + 1, err, sizeof err), 0);
}

START_TEST(wraps_around_with_credit)
{
	struct cxs_axle_ring_tx tx;
	struct cxs_axle_ring_rx rx;
	cxs_axle_tx_init(&tx, 4);
	ck_assert_int_eq(cxs_axle_rx_init(&rx, 4), 0);
	/* Three laps of a 4-slot ring, consuming in order, heads returned each time. */
	for (uint64_t i = 0; i < 12; i++) {
		publish(&tx, &rx);
		ck_assert(cxs_axle_rx_written(&rx, i));
		ck_assert_int_eq(cxs_axle_rx_consume(&rx, i), 1);
		ck_assert_uint_eq(rx.head, i + 1);
		ck_assert_int_eq(cxs_axle_tx_head(&tx, rx.head), 1);
	}
	/* Index 12 lands in slot 0 again, after index 8 was consumed. */
	publish(&tx, &rx);
	ck_assert_uint_eq(rx.slot_index[0], 13);
	ck_assert(!cxs_axle_rx_written(&rx, 8));
	cxs_axle_rx_free(&rx);
}
END_TEST

START_TEST(full_ring_stops_the_producer)
{
	struct cxs_axle_ring_tx tx;
	struct cxs_axle_ring_rx rx;
	cxs_axle_tx_init(&tx, 3);
	ck_assert_int_eq(cxs_axle_rx_init(&rx, 3), 0);
	for (int i = 0; i < 3; i++)
		publish(&tx, &rx);
	ck_assert_uint_eq(cxs_axle_tx_credit(&tx), 0);
	ck_assert_uint_eq(cxs_axle_rx_in_use(&rx), 3);
	/* Writing index 3 now would overwrite index 0 before it is consumed. */
	ck_assert_int_eq(cxs_axle_check_write(&rx, 3, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "overflows"));
	cxs_axle_rx_free(&rx);
}
END_TEST

START_TEST(gap_aware_head)
{
	struct cxs_axle_ring_rx rx;
	ck_assert_int_eq(cxs_axle_rx_init(&rx, 8), 0);
	for (uint64_t i = 0; i < 5; i++)
		ck_assert_int_eq(cxs_axle_check_write(&rx, i, err, sizeof err), 0);
	ck_assert_int_eq(cxs_axle_check_tail(&rx, 5, err, sizeof err), 0);
	/* Consumed out of order: 1, 3, 2 leave the head at 0 (slot 0 is a gap). */
	ck_assert_int_eq(cxs_axle_rx_consume(&rx, 1), 0);
	ck_assert_int_eq(cxs_axle_rx_consume(&rx, 3), 0);
	ck_assert_int_eq(cxs_axle_rx_consume(&rx, 2), 0);
	ck_assert_uint_eq(rx.head, 0);
	ck_assert_uint_eq(cxs_axle_rx_in_use(&rx), 2);
	/* Filling the gap moves the head over the whole contiguous run, 0..3. */
	ck_assert_int_eq(cxs_axle_rx_consume(&rx, 0), 4);
	ck_assert_uint_eq(rx.head, 4);
	/* Consuming twice, or below the head, is refused. */
	ck_assert_int_eq(cxs_axle_rx_consume(&rx, 2), -1);
	ck_assert_int_eq(cxs_axle_rx_consume(&rx, 4), 1);
	ck_assert_int_eq(cxs_axle_rx_consume(&rx, 4), -1);
	/* Never written. */
	ck_assert_int_eq(cxs_axle_rx_consume(&rx, 6), -1);
	cxs_axle_rx_free(&rx);
}
END_TEST

START_TEST(gap_aware_head_across_the_wrap)
{
	struct cxs_axle_ring_rx rx;
	ck_assert_int_eq(cxs_axle_rx_init(&rx, 4), 0);
	for (uint64_t i = 0; i < 4; i++)
		ck_assert_int_eq(cxs_axle_check_write(&rx, i, err, sizeof err), 0);
	ck_assert_int_eq(cxs_axle_rx_consume(&rx, 0), 1);
	ck_assert_int_eq(cxs_axle_rx_consume(&rx, 1), 1);
	/* Indexes 4 and 5 reuse slots 0 and 1; 5 is consumed before 2, 3 and 4. */
	ck_assert_int_eq(cxs_axle_check_write(&rx, 4, err, sizeof err), 0);
	ck_assert_int_eq(cxs_axle_check_write(&rx, 5, err, sizeof err), 0);
	ck_assert_int_eq(cxs_axle_rx_consume(&rx, 5), 0);
	ck_assert_int_eq(cxs_axle_rx_consume(&rx, 3), 0);
	ck_assert_int_eq(cxs_axle_rx_consume(&rx, 2), 2);
	ck_assert_uint_eq(rx.head, 4);
	ck_assert_int_eq(cxs_axle_rx_consume(&rx, 4), 2);
	ck_assert_uint_eq(rx.head, 6);
	/* Slot 2 now holds consumed index 2; index 6 may take it, index 10 may not. */
	ck_assert_int_eq(cxs_axle_check_write(&rx, 10, err, sizeof err), -1);
	ck_assert_int_eq(cxs_axle_check_write(&rx, 6, err, sizeof err), 0);
	cxs_axle_rx_free(&rx);
}
END_TEST

START_TEST(flow_control_with_stale_heads)
{
	struct cxs_axle_ring_tx tx;
	cxs_axle_tx_init(&tx, 4);
	for (int i = 0; i < 4; i++)
		cxs_axle_tx_take(&tx);
	ck_assert_uint_eq(cxs_axle_tx_credit(&tx), 0);
	/* Head updates 3 then (reordered, stale) 1: the older one is ignored. */
	ck_assert_int_eq(cxs_axle_tx_head(&tx, 3), 1);
	ck_assert_int_eq(cxs_axle_tx_head(&tx, 1), 0);
	ck_assert_uint_eq(tx.head, 3);
	ck_assert_uint_eq(cxs_axle_tx_credit(&tx), 3);
	/* A stale head is conservative: with head 3 the producer may write 4, 5, 6 only. */
	for (int i = 0; i < 3; i++)
		cxs_axle_tx_take(&tx);
	ck_assert_uint_eq(tx.tail, 7);
	ck_assert_uint_eq(cxs_axle_tx_credit(&tx), 0);
	/* The same head again changes nothing; a head past the tail is an error. */
	ck_assert_int_eq(cxs_axle_tx_head(&tx, 3), 0);
	ck_assert_int_eq(cxs_axle_tx_head(&tx, 8), -1);
	ck_assert_int_eq(cxs_axle_tx_head(&tx, 7), 1);
	ck_assert_uint_eq(cxs_axle_tx_credit(&tx), 4);
}
END_TEST

START_TEST(stale_head_never_overwrites)
{
	/* Producer with a stale head against the consumer's checker: never a violation. */
	struct cxs_axle_ring_tx tx;
	struct cxs_axle_ring_rx rx;
	uint64_t heard = 0;
	cxs_axle_tx_init(&tx, 5);
	ck_assert_int_eq(cxs_axle_rx_init(&rx, 5), 0);
	for (int round = 0; round < 40; round++) {
		while (cxs_axle_tx_credit(&tx) > 0)
			publish(&tx, &rx);
		/* Consume everything, but the producer hears only every other head update. */
		while (rx.head < rx.tail)
			ck_assert_int_ge(cxs_axle_rx_consume(&rx, rx.head), 1);
		if (round % 2 == 0)
			heard = rx.head;
		ck_assert_int_ge(cxs_axle_tx_head(&tx, heard), 0);
	}
	cxs_axle_rx_free(&rx);
}
END_TEST

START_TEST(checker_sees_reordering)
{
	struct cxs_axle_ring_rx pay, meta;
	ck_assert_int_eq(cxs_axle_rx_init(&pay, 4), 0);
	ck_assert_int_eq(cxs_axle_rx_init(&meta, 4), 0);
	/* Metadata naming payload 0 before payload 0 was written (partial write). */
	ck_assert_int_eq(cxs_axle_check_meta(&pay, 0, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "before that payload was written"));
	ck_assert_int_eq(cxs_axle_check_write(&pay, 0, err, sizeof err), 0);
	ck_assert_int_eq(cxs_axle_check_meta(&pay, 0, err, sizeof err), 0);
	/* A tail over a record not written yet (reordering). */
	ck_assert_int_eq(cxs_axle_check_tail(&meta, 1, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "before it was written"));
	ck_assert_int_eq(cxs_axle_check_write(&meta, 0, err, sizeof err), 0);
	ck_assert_int_eq(cxs_axle_check_tail(&meta, 1, err, sizeof err), 0);
	/* A tail never moves back. */
	ck_assert_int_eq(cxs_axle_check_tail(&meta, 0, err, sizeof err), -1);
	/* Overwriting an unconsumed slot of the previous lap. */
	ck_assert_int_eq(cxs_axle_check_write(&pay, 1, err, sizeof err), 0);
	ck_assert_int_eq(cxs_axle_check_write(&pay, 1, err, sizeof err), -1);
	cxs_axle_rx_free(&pay);
	cxs_axle_rx_free(&meta);
}
END_TEST

Suite *axle_suite(void)
{
	Suite *s = suite_create("axle");
	TCase *tc = tcase_create("ring");
	tcase_add_test(tc, wraps_around_with_credit);
	tcase_add_test(tc, full_ring_stops_the_producer);
	tcase_add_test(tc, gap_aware_head);
	tcase_add_test(tc, gap_aware_head_across_the_wrap);
	tcase_add_test(tc, flow_control_with_stale_heads);
	tcase_add_test(tc, stale_head_never_overwrites);
	tcase_add_test(tc, checker_sees_reordering);
	suite_add_tcase(s, tc);
	return s;
}
