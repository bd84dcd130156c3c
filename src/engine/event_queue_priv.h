/*
 * event_queue_priv.h — the pending-event set of one rank.
 *
 * A binary min-heap of (time, src, seq) keys with an index into a pool of
 * event records. Keys live in the heap entries themselves so that sifting
 * touches one contiguous array, not the 144-byte records; the records sit in a
 * chunked pool with a free list and never move, so a handler may keep a
 * pointer to the event it is handling.
 *
 * The key is the engine's total order (engine.h): equal keys cannot occur,
 * because (src, seq) is unique per event.
 */
#ifndef CXLSIM_EVENT_QUEUE_PRIV_H
#define CXLSIM_EVENT_QUEUE_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "cxlsim/engine.h"

struct eq_entry {
	cxs_time time;
	uint64_t seq;
	uint32_t src;
	uint32_t slot; /* index of the record in the pool */
};

struct cxs_event_queue {
	struct eq_entry *heap;
	size_t n, cap;
	struct cxs_event **chunks; /* pool storage, EQ_CHUNK records each */
	size_t nchunks;
	uint32_t *free_slots;
	size_t nfree, free_cap;
};

int cxs_eq_init(struct cxs_event_queue *q);
/* Frees the queue and the out-of-line payloads of the events still in it. */
void cxs_eq_destroy(struct cxs_event_queue *q);

/* A record to fill, then cxs_eq_push it. NULL when out of memory. */
struct cxs_event *cxs_eq_alloc(struct cxs_event_queue *q, uint32_t *slot);
/* Pushes a filled record (its time/src/seq are the key). -1 when out of memory. */
int cxs_eq_push(struct cxs_event_queue *q, uint32_t slot);
/* Copies ev into the queue. -1 when out of memory. */
int cxs_eq_insert(struct cxs_event_queue *q, const struct cxs_event *ev);

static inline size_t cxs_eq_size(const struct cxs_event_queue *q)
{
	return q->n;
}

/* Time of the least event, CXS_TIME_INF when empty. */
static inline cxs_time cxs_eq_min_time(const struct cxs_event_queue *q)
{
	return q->n ? q->heap[0].time : CXS_TIME_INF;
}

/*
 * Removes the least event and returns its record, which stays valid until
 * cxs_eq_release(slot) (the caller handles it in place, then releases).
 */
struct cxs_event *cxs_eq_pop(struct cxs_event_queue *q, uint32_t *slot);
void cxs_eq_release(struct cxs_event_queue *q, uint32_t slot);

/* Key order: -1, 0, 1. */
static inline int cxs_event_key_cmp(cxs_time ta, uint32_t sa, uint64_t qa, cxs_time tb,
				    uint32_t sb, uint64_t qb)
{
	if (ta != tb)
		return ta < tb ? -1 : 1;
	if (sa != sb)
		return sa < sb ? -1 : 1;
	if (qa != qb)
		return qa < qb ? -1 : 1;
	return 0;
}

#endif /* CXLSIM_EVENT_QUEUE_PRIV_H */
