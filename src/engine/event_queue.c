/*
 * event_queue.c — binary heap over a chunked record pool (see event_queue_priv.h).
 *
 * Why a binary heap and not a calendar queue or splay tree: the windows of the
 * conservative engine pop a few events to a few thousand per rank between
 * synchronisations; at those sizes a flat binary heap of 24-byte keys stays in
 * cache and beats pointer-based structures (ROSS's default is also a heap).
 */
#include "event_queue_priv.h"

#include <stdlib.h>
#include <string.h>

#define EQ_CHUNK 4096u /* records per pool chunk */

_Static_assert(sizeof(struct eq_entry) == 24, "heap entries are 24 bytes");

int cxs_eq_init(struct cxs_event_queue *q)
{
	memset(q, 0, sizeof *q);
	return 0;
}

void cxs_eq_destroy(struct cxs_event_queue *q)
{
	/* Events never handled (a run stopped early) may own out-of-line payloads. */
	for (size_t i = 0; i < q->n; i++) {
		struct cxs_event *ev = &q->chunks[q->heap[i].slot / EQ_CHUNK][q->heap[i].slot % EQ_CHUNK];
		if (ev->size > CXS_EVENT_PAYLOAD_MAX)
			free((void *)cxs_event_data(ev));
	}
	for (size_t i = 0; i < q->nchunks; i++)
		free(q->chunks[i]);
	free(q->chunks);
	free(q->heap);
	free(q->free_slots);
	memset(q, 0, sizeof *q);
}

static struct cxs_event *record(struct cxs_event_queue *q, uint32_t slot)
{
	return &q->chunks[slot / EQ_CHUNK][slot % EQ_CHUNK];
}

static int grow_pool(struct cxs_event_queue *q)
{
	struct cxs_event **chunks = realloc(q->chunks, (q->nchunks + 1) * sizeof *chunks);
	if (!chunks)
		return -1;
	q->chunks = chunks;
	struct cxs_event *c = malloc(EQ_CHUNK * sizeof *c);
	if (!c)
		return -1;
	/* Every slot may be released at once: room for all of them, not just the new ones. */
	size_t need = (q->nchunks + 1) * EQ_CHUNK;
	if (need > q->free_cap) {
		uint32_t *fs = realloc(q->free_slots, need * sizeof *fs);
		if (!fs) {
			free(c);
			return -1;
		}
		q->free_slots = fs;
		q->free_cap = need;
	}
	uint32_t base = (uint32_t)(q->nchunks * EQ_CHUNK);
	q->chunks[q->nchunks++] = c;
	/* Push in reverse so that low slots are handed out first. */
	for (uint32_t i = EQ_CHUNK; i-- > 0;)
		q->free_slots[q->nfree++] = base + i;
	return 0;
}

struct cxs_event *cxs_eq_alloc(struct cxs_event_queue *q, uint32_t *slot)
{
	if (q->nfree == 0 && grow_pool(q) != 0)
		return NULL;
	*slot = q->free_slots[--q->nfree];
	return record(q, *slot);
}

void cxs_eq_release(struct cxs_event_queue *q, uint32_t slot)
{
	/* free_cap always covers every slot ever created, so this cannot overflow. */
	q->free_slots[q->nfree++] = slot;
}

static inline int entry_less(const struct eq_entry *a, const struct eq_entry *b)
{
	return cxs_event_key_cmp(a->time, a->src, a->seq, b->time, b->src, b->seq) < 0;
}

/* Puts e at hole i or above it, moving larger parents down. */
static inline void sift_up(struct cxs_event_queue *q, size_t i, struct eq_entry e)
{
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!entry_less(&e, &q->heap[parent]))
			break;
		q->heap[i] = q->heap[parent];
		i = parent;
	}
	q->heap[i] = e;
}

int cxs_eq_push(struct cxs_event_queue *q, uint32_t slot)
{
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 1024;
		struct eq_entry *h = realloc(q->heap, cap * sizeof *h);
		if (!h)
			return -1;
		q->heap = h;
		q->cap = cap;
	}
	const struct cxs_event *ev = record(q, slot);
	struct eq_entry e = {.time = ev->time, .seq = ev->seq, .src = ev->src, .slot = slot};
	sift_up(q, q->n++, e);
	return 0;
}

int cxs_eq_insert(struct cxs_event_queue *q, const struct cxs_event *ev)
{
	uint32_t slot;
	struct cxs_event *r = cxs_eq_alloc(q, &slot);
	if (!r)
		return -1;
	/* An out-of-line payload's pointer moves with the record (the queue owns it now). */
	memcpy(r, ev, offsetof(struct cxs_event, data) +
			      (ev->size <= CXS_EVENT_PAYLOAD_MAX ? ev->size : sizeof(void *)));
	if (cxs_eq_push(q, slot) != 0) {
		cxs_eq_release(q, slot);
		return -1;
	}
	return 0;
}

/*
 * Bottom-up (Floyd's) pop: the hole left by the minimum goes down to a leaf
 * along the smaller children, one comparison a level, and the last entry
 * goes up from there. The last entry of a heap is usually one of the
 * largest, so it rarely climbs, and the two comparisons a level of the
 * textbook sift-down (which child, then child against the last entry) —
 * the second one unpredictable — become one. The heap is the same either
 * way, so the order is.
 */
struct cxs_event *cxs_eq_pop(struct cxs_event_queue *q, uint32_t *slot)
{
	if (q->n == 0)
		return NULL;
	*slot = q->heap[0].slot;
	struct eq_entry last = q->heap[--q->n];
	size_t n = q->n, i = 0;
	if (n == 0)
		return record(q, *slot);
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && entry_less(&q->heap[c + 1], &q->heap[c]))
			c++;
		q->heap[i] = q->heap[c];
		i = c;
	}
	sift_up(q, i, last);
	/* The next pop's record: fetched while this event is handled (PHOLD: its record load was a miss). */
	__builtin_prefetch(record(q, q->heap[0].slot));
	return record(q, *slot);
}
