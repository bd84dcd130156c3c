/*
 * payload.c — where an event's payload lives (engine.h, "Payloads").
 *
 * Up to CXS_EVENT_PAYLOAD_MAX bytes are copied into the queue record itself;
 * a larger payload (up to CXS_EVENT_PAYLOAD_BIG_MAX) into a buffer of its own
 * whose pointer the record holds in its data field, so queue records keep one
 * fixed size and the heap never moves payload bytes. The buffer belongs to the
 * event: engine_drop_payload frees it once the event has been handled (or
 * discarded, for a node that failed), cxs_eq_destroy frees those of events
 * never handled, and a record copied by cxs_eq_insert takes the pointer with
 * it. Across ranks the payload's bytes travel in the batch (batch.c).
 */
#include "engine_priv.h"

#include <stdlib.h>
#include <string.h>

void engine_store_payload(struct cxs_event *ev, const void *data, uint32_t size)
{
	ev->size = size;
	if (size <= CXS_EVENT_PAYLOAD_MAX) {
		if (size)
			memcpy(ev->data, data, size);
		return;
	}
	void *big = malloc(size);
	if (!big)
		cxs_bug(NULL, "out of memory for a payload of %u bytes", size);
	memcpy(big, data, size);
	memcpy(ev->data, &big, sizeof big);
}

void engine_drop_payload(struct cxs_event *ev)
{
	if (ev->size > CXS_EVENT_PAYLOAD_MAX) {
		free((void *)cxs_event_data(ev));
		ev->size = 0;
	}
}
