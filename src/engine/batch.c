/*
 * batch.c — the wire form of the events one rank sends another in a window.
 *
 * A batch is a byte string of records, each a 32-byte header (struct wire_ev:
 * time, seq, src, dst, type, size) followed by the payload's real bytes padded
 * to a multiple of 8, so every header is 8-byte aligned:
 *
 *   | wire_ev | payload (size bytes, + 0..7 zero bytes) | wire_ev | payload | ...
 *
 * An out-of-line payload (engine.h, "Payloads") is written here in full, not
 * as the pointer its record holds: the receiving rank copies the bytes into a
 * buffer of its own, so a log dump or a recovery reply of megabytes arrives
 * intact whatever the rank count. Decoding checks every length against the
 * bytes actually received; a malformed batch is a bug (both ends are ours).
 *
 * These functions make no MPI call and touch no engine state, so the unit
 * tests exercise the wire path of every payload kind without MPI.
 */
#include "engine_priv.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(struct wire_ev) == 32, "batch records have a 32-byte header");

static void reserve(struct batch_buf *b, size_t need)
{
	if (need <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < need)
		cap *= 2;
	unsigned char *d = realloc(b->data, cap);
	if (!d)
		cxs_bug(NULL, "out of memory for a batch of %zu bytes", cap);
	b->data = d;
	b->cap = cap;
}

void batch_append_bytes(struct batch_buf *b, const void *p, size_t n)
{
	reserve(b, b->len + n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void batch_append(struct batch_buf *b, const struct wire_ev *w, const void *data)
{
	size_t pay = (w->size + 7u) & ~(size_t)7;
	size_t need = b->len + sizeof *w + pay;
	reserve(b, need);
	memcpy(b->data + b->len, w, sizeof *w);
	if (w->size)
		memcpy(b->data + b->len + sizeof *w, data, w->size);
	if (pay > w->size)
		memset(b->data + b->len + sizeof *w + w->size, 0, pay - w->size);
	b->len = need;
	b->nevents++;
}

int batch_next(const unsigned char *p, size_t len, size_t *off, struct wire_ev *w,
	       const unsigned char **payload)
{
	if (*off == len)
		return 0;
	if (len - *off < sizeof *w)
		return -1;
	memcpy(w, p + *off, sizeof *w);
	size_t at = *off + sizeof *w;
	size_t pay = ((size_t)w->size + 7u) & ~(size_t)7;
	if (w->size > CXS_EVENT_PAYLOAD_BIG_MAX || len - at < pay)
		return -1;
	*payload = p + at;
	*off = at + pay;
	return 1;
}
