/*
 * ring.c — AXLE's metadata and payload ring buffers (papers/axle.md §IV-B/C),
 * the producer's and the consumer's views, and the §IV-C invariant checker.
 *
 * The layout and the rules are in include/cxlsim/axle.h. Why 64-bit indexes
 * that never wrap: "full" and "empty" are then tail - head == capacity and
 * tail == head with no extra bit, a stale head compares correctly with a
 * fresh one, and the slot of an index is one modulo, so wrap-around is
 * correct by construction and the checker can still tell which lap a slot
 * holds (slot_index). 2^64 writes are never reached.
 *
 * The consumer's checker is what makes the ordering guarantees of §IV-C
 * observable in a simulation where messages carry real bytes:
 *   - no overwrite before consumption: a write of index i into slot
 *     i % capacity is legal only if the slot is empty, or holds index
 *     i - capacity and that one was consumed (visibility problem);
 *   - payload before metadata: a metadata record may only name a payload
 *     index already written (partial-write problem);
 *   - metadata (and payload) before tail: a tail may only move over indexes
 *     already written (reordering problem).
 * Cost: one 8-byte index and one byte per slot, O(1) per write and per
 * consumption; a tail update walks the indexes it publishes once.
 */
#include "cxlsim/axle.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

void cxs_axle_tx_init(struct cxs_axle_ring_tx *r, uint64_t capacity)
{
	assert(capacity >= 1);
	r->capacity = capacity;
	r->head = 0;
	r->tail = 0;
}

uint64_t cxs_axle_tx_credit(const struct cxs_axle_ring_tx *r)
{
	assert(r->tail - r->head <= r->capacity);
	return r->capacity - (r->tail - r->head);
}

uint64_t cxs_axle_tx_take(struct cxs_axle_ring_tx *r)
{
	assert(cxs_axle_tx_credit(r) > 0);
	return r->tail++;
}

int cxs_axle_tx_head(struct cxs_axle_ring_tx *r, uint64_t head)
{
	if (head > r->tail)
		return -1;
	if (head <= r->head)
		return 0;
	r->head = head;
	return 1;
}

int cxs_axle_rx_init(struct cxs_axle_ring_rx *r, uint64_t capacity)
{
	assert(capacity >= 1);
	r->capacity = capacity;
	r->head = 0;
	r->tail = 0;
	r->slot_index = calloc(capacity, sizeof *r->slot_index);
	r->consumed = calloc(capacity, 1);
	if (!r->slot_index || !r->consumed) {
		cxs_axle_rx_free(r);
		return -1;
	}
	return 0;
}

void cxs_axle_rx_free(struct cxs_axle_ring_rx *r)
{
	free(r->slot_index);
	free(r->consumed);
	r->slot_index = NULL;
	r->consumed = NULL;
}

uint64_t cxs_axle_rx_in_use(const struct cxs_axle_ring_rx *r)
{
	uint64_t n = 0;
	for (uint64_t s = 0; s < r->capacity; s++)
		if (r->slot_index[s] && !r->consumed[s])
			n++;
	return n;
}

bool cxs_axle_rx_written(const struct cxs_axle_ring_rx *r, uint64_t i)
{
	return r->slot_index[i % r->capacity] == i + 1;
}

int cxs_axle_check_write(struct cxs_axle_ring_rx *r, uint64_t index, char *err, size_t errlen)
{
	uint64_t s = index % r->capacity;
	uint64_t held = r->slot_index[s]; /* index + 1, or 0 */

	if (index < r->head) {
		snprintf(err, errlen, "write of index %" PRIu64 " below the head %" PRIu64
			 " (a consumed slot written again)", index, r->head);
		return -1;
	}
	if (index - r->head >= r->capacity) {
		snprintf(err, errlen, "write of index %" PRIu64 " into slot %" PRIu64
			 " overflows the ring (head %" PRIu64 ", capacity %" PRIu64 ")",
			 index, s, r->head, r->capacity);
		return -1;
	}
	if (held != 0 && !(held - 1 + r->capacity == index && r->consumed[s])) {
		snprintf(err, errlen, "write of index %" PRIu64 " overwrites slot %" PRIu64
			 " holding index %" PRIu64 " (%s)", index, s, held - 1,
			 r->consumed[s] ? "consumed, but not the previous lap" : "not consumed yet");
		return -1;
	}
	r->slot_index[s] = index + 1;
	r->consumed[s] = 0;
	return 0;
}

int cxs_axle_check_tail(struct cxs_axle_ring_rx *r, uint64_t tail, char *err, size_t errlen)
{
	if (tail < r->tail) {
		snprintf(err, errlen, "tail moved back from %" PRIu64 " to %" PRIu64, r->tail, tail);
		return -1;
	}
	for (uint64_t i = r->tail; i < tail; i++) {
		if (!cxs_axle_rx_written(r, i)) {
			snprintf(err, errlen, "tail %" PRIu64 " published index %" PRIu64
				 " before it was written", tail, i);
			return -1;
		}
	}
	r->tail = tail;
	return 0;
}

int cxs_axle_check_meta(const struct cxs_axle_ring_rx *payload, uint64_t p, char *err,
			size_t errlen)
{
	if (!cxs_axle_rx_written(payload, p) || payload->consumed[p % payload->capacity]) {
		snprintf(err, errlen, "metadata names payload index %" PRIu64
			 " before that payload was written", p);
		return -1;
	}
	return 0;
}

int64_t cxs_axle_rx_consume(struct cxs_axle_ring_rx *r, uint64_t i)
{
	uint64_t start = r->head;

	if (i < r->head || !cxs_axle_rx_written(r, i) || r->consumed[i % r->capacity])
		return -1;
	r->consumed[i % r->capacity] = 1;
	while (r->consumed[r->head % r->capacity] && cxs_axle_rx_written(r, r->head))
		r->head++;
	return (int64_t)(r->head - start);
}
