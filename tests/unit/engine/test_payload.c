/*
 * Unit tests of the three paths an event's payload can take (engine.h,
 * "Payloads"): inline in the queue record, out of line on the same rank, and
 * across ranks as real bytes in a batch. Every path must give back exactly
 * the bytes put in, for sizes on both sides of CXS_EVENT_PAYLOAD_MAX; the
 * out-of-line buffers must be freed (the sanitizer build checks for leaks).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "engine_priv.h"
#include "event_queue_priv.h"
#include "unit_suites.h"

/* Deterministic bytes of a payload: (seed, i) -> byte. */
static void fill(unsigned char *p, uint32_t n, uint32_t seed)
{
	uint64_t x = seed * UINT64_C(0x9e3779b97f4a7c15) + 1;
	for (uint32_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)x;
	}
}

static const uint32_t sizes[] = {0, 1, 7, 96, CXS_EVENT_PAYLOAD_MAX, CXS_EVENT_PAYLOAD_MAX + 1,
				 4112, 65536, 1u << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* Inline and out of line on one rank: store, queue, pop, read, drop. */
START_TEST(test_local_paths)
{
	struct cxs_event_queue q;
	cxs_eq_init(&q);
	for (size_t i = 0; i < NSIZES; i++) {
		uint32_t n = sizes[i];
		unsigned char *want = malloc(n ? n : 1);
		fill(want, n, (uint32_t)i);
		uint32_t slot;
		struct cxs_event *ev = cxs_eq_alloc(&q, &slot);
		ck_assert_ptr_nonnull(ev);
		ev->time = 100 + i;
		ev->seq = i;
		ev->src = 1;
		ev->dst = 2;
		ev->type = 7;
		engine_store_payload(ev, want, n);
		ck_assert_uint_eq(ev->size, n);
		/* Inline payloads sit in the record; larger ones must not. */
		if (n <= CXS_EVENT_PAYLOAD_MAX)
			ck_assert_ptr_eq(cxs_event_data(ev), ev->data);
		else
			ck_assert_ptr_ne(cxs_event_data(ev), ev->data);
		ck_assert_int_eq(cxs_eq_push(&q, slot), 0);
		free(want);
	}
	for (size_t i = 0; i < NSIZES; i++) {
		uint32_t slot;
		struct cxs_event *ev = cxs_eq_pop(&q, &slot);
		ck_assert_ptr_nonnull(ev);
		ck_assert_uint_eq(ev->seq, i);
		uint32_t n = sizes[i];
		ck_assert_uint_eq(ev->size, n);
		unsigned char *want = malloc(n ? n : 1);
		fill(want, n, (uint32_t)i);
		ck_assert_int_eq(memcmp(cxs_event_data(ev), want, n), 0);
		free(want);
		engine_drop_payload(ev);
		cxs_eq_release(&q, slot);
	}
	cxs_eq_destroy(&q);
}
END_TEST

/* Events still queued at the end (a run stopped early) give their buffers back. */
START_TEST(test_destroy_frees_pending)
{
	struct cxs_event_queue q;
	cxs_eq_init(&q);
	unsigned char big[3000];
	fill(big, sizeof big, 5);
	for (int i = 0; i < 4; i++) {
		struct cxs_event ev = {.time = (cxs_time)i, .seq = (uint64_t)i};
		engine_store_payload(&ev, big, sizeof big);
		ck_assert_int_eq(cxs_eq_insert(&q, &ev), 0); /* the queue owns the buffer now */
	}
	uint32_t slot;
	struct cxs_event *ev = cxs_eq_pop(&q, &slot);
	ck_assert_int_eq(memcmp(cxs_event_data(ev), big, sizeof big), 0);
	engine_drop_payload(ev);
	cxs_eq_release(&q, slot);
	cxs_eq_destroy(&q); /* three left: freed here, or LeakSanitizer fails the test */
}
END_TEST

/* Across ranks: every size survives the batch encoding byte for byte. */
START_TEST(test_batch_paths)
{
	struct batch_buf b = {0};
	for (size_t i = 0; i < NSIZES; i++) {
		uint32_t n = sizes[i];
		unsigned char *p = malloc(n ? n : 1);
		fill(p, n, 100 + (uint32_t)i);
		struct wire_ev w = {.time = 10 * i, .seq = i, .src = 3, .dst = 4, .type = 9, .size = n};
		batch_append(&b, &w, p);
		free(p);
	}
	ck_assert_uint_eq(b.nevents, NSIZES);
	size_t off = 0;
	struct wire_ev w;
	const unsigned char *pay;
	for (size_t i = 0; i < NSIZES; i++) {
		ck_assert_int_eq(batch_next(b.data, b.len, &off, &w, &pay), 1);
		ck_assert_uint_eq(w.seq, i);
		ck_assert_uint_eq(w.size, sizes[i]);
		ck_assert_uint_eq((uintptr_t)pay % 8, (uintptr_t)b.data % 8); /* headers stay aligned */
		unsigned char *want = malloc(sizes[i] ? sizes[i] : 1);
		fill(want, sizes[i], 100 + (uint32_t)i);
		ck_assert_int_eq(memcmp(pay, want, sizes[i]), 0);
		free(want);
	}
	ck_assert_int_eq(batch_next(b.data, b.len, &off, &w, &pay), 0);
	/* A batch cut anywhere inside a record is refused, never read past its end. */
	for (size_t cut = 1; cut < 64; cut += 7) {
		size_t o = 0;
		int rc;
		while ((rc = batch_next(b.data, b.len - cut, &o, &w, &pay)) > 0)
			;
		ck_assert_int_eq(rc, -1);
	}
	free(b.data);
}
END_TEST

/* A corrupt size field (larger than any payload may be) is refused. */
START_TEST(test_batch_bad_size)
{
	struct batch_buf b = {0};
	struct wire_ev w = {.size = 8};
	unsigned char p[8] = {0};
	batch_append(&b, &w, p);
	struct wire_ev bad = w;
	bad.size = CXS_EVENT_PAYLOAD_BIG_MAX + 1;
	memcpy(b.data, &bad, sizeof bad);
	size_t off = 0;
	const unsigned char *pay;
	ck_assert_int_eq(batch_next(b.data, b.len, &off, &w, &pay), -1);
	free(b.data);
}
END_TEST

Suite *payload_suite(void)
{
	Suite *s = suite_create("payload");
	TCase *tc = tcase_create("paths");
	tcase_add_test(tc, test_local_paths);
	tcase_add_test(tc, test_destroy_frees_pending);
	tcase_add_test(tc, test_batch_paths);
	tcase_add_test(tc, test_batch_bad_size);
	suite_add_tcase(s, tc);
	return s;
}
