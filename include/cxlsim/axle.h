/*
 * axle.h — offloading to CXL computational memory (AXLE, papers/axle.md).
 *
 * Two parts are public:
 *
 * 1. The ring buffers of asynchronous back-streaming (§IV-B/C), as both sides
 *    see them. The host owns two rings in its local DMA region, one of
 *    payload slots and one of metadata records; the CCM's DMA executor writes
 *    them with CXL.io posted writes and the host returns head indexes with
 *    CXL.mem stores (flow control). Indexes are 64-bit counts that never
 *    wrap; the slot of index i is i % capacity, so wrap-around is one modulo
 *    and "full" is tail - head == capacity.
 *
 *      producer (CCM)            consumer (host)
 *      tail: next index to       head: first index not yet consumed;
 *            write                     the payload head is gap-aware: it
 *      head: the host's head as        moves only over a contiguous run of
 *            last heard (stale,        consumed slots, so slot i+1 consumed
 *            so conservative)          before slot i leaves it at i
 *
 *    The producer may write index t only if t - head < capacity with its
 *    (possibly stale) head; a stale head is always <= the true one, so this
 *    never overwrites an unconsumed slot. Heads arriving out of order are
 *    ignored when older than the one already known.
 *
 *    The consumer side also checks the memory-correctness invariants of
 *    §IV-C on every DMA write it receives (cxs_axle_check_*): a payload slot
 *    is not overwritten before it is consumed and lands in slot index %
 *    capacity; a metadata record names a payload already written (payload
 *    before metadata); a tail moves only over records already written
 *    (metadata before tail). A violation returns -1 with a message.
 *
 * 2. The model (`--model axle`): node 0 is the host CN, node 1 the CCM MN;
 *    with axle.pairs = N there are N independent host/CCM pairs (node 2k is a
 *    host, 2k+1 its CCM). Configuration section [axle], documented by
 *    --help-config; the README's AXLE section lists the counters.
 */
#ifndef CXLSIM_AXLE_H
#define CXLSIM_AXLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cxlsim/config.h"
#include "cxlsim/engine.h"
#include "cxlsim/model.h"

/* ---- ring buffers ------------------------------------------------------- */

/* The producer's (CCM's) view of one ring. */
struct cxs_axle_ring_tx {
	uint64_t capacity; /* slots, >= 1 */
	uint64_t head;     /* the consumer's head as last heard */
	uint64_t tail;     /* next index to write */
};

void cxs_axle_tx_init(struct cxs_axle_ring_tx *r, uint64_t capacity);
/* Slots the producer may still write without hearing from the consumer. */
uint64_t cxs_axle_tx_credit(const struct cxs_axle_ring_tx *r);
/* Takes the next index. Precondition: credit > 0 (asserted). */
uint64_t cxs_axle_tx_take(struct cxs_axle_ring_tx *r);
/*
 * A head index heard from the consumer. An older head than the one known
 * (stale, reordered) is ignored and returns 0; a head past the tail is a
 * protocol error and returns -1; a newer one is taken and returns 1.
 */
int cxs_axle_tx_head(struct cxs_axle_ring_tx *r, uint64_t head);

/*
 * The consumer's (host's) view of one ring with the invariant checker. For
 * every slot it remembers the index last written there and whether it was
 * consumed, and for every index in [head, written_max) whether it was written.
 */
struct cxs_axle_ring_rx {
	uint64_t capacity;
	uint64_t head;      /* first index not consumed (gap-aware) */
	uint64_t tail;      /* tail index as published by the producer */
	uint64_t *slot_index; /* per slot: index + 1 last written there, 0 = never */
	uint8_t *consumed;    /* per slot: consumed since written */
};

int cxs_axle_rx_init(struct cxs_axle_ring_rx *r, uint64_t capacity);
void cxs_axle_rx_free(struct cxs_axle_ring_rx *r);
/* Slots written and not yet consumed, as the consumer sees them. */
uint64_t cxs_axle_rx_in_use(const struct cxs_axle_ring_rx *r);
/* Whether index i has been written into its slot (and not overwritten since). */
bool cxs_axle_rx_written(const struct cxs_axle_ring_rx *r, uint64_t i);

/* Invariants; each returns 0, or -1 with a one-line reason in err. */
int cxs_axle_check_write(struct cxs_axle_ring_rx *r, uint64_t index, char *err, size_t errlen);
int cxs_axle_check_tail(struct cxs_axle_ring_rx *r, uint64_t tail, char *err, size_t errlen);
/* A metadata record at meta index m names payload index p: p must be written. */
int cxs_axle_check_meta(const struct cxs_axle_ring_rx *payload, uint64_t p, char *err,
			size_t errlen);

/*
 * Marks index i consumed (i >= head must be written and not yet consumed;
 * the payload tail need not cover it yet: a payload is published to the host
 * by its metadata record, the payload tail only once per DMA request) and
 * advances the head over the contiguous consumed run. Returns the number of
 * slots the head moved (0 when i leaves a gap before it), or -1 for an index
 * below the head, never written, overwritten since, or consumed twice.
 */
int64_t cxs_axle_rx_consume(struct cxs_axle_ring_rx *r, uint64_t i);

/* ---- the model ---------------------------------------------------------- */

/* Keys of [axle], configure, node types (model.h); src/axle/axle_model.c. */
extern const struct cxs_model cxs_axle_model;

#endif /* CXLSIM_AXLE_H */
