/*
 * recv_set.c — receive one message, of a size not known in advance, from each
 * of a list of sources (the batches of a window, the results at the end).
 *
 * Each source's message is probed (MPI_Improbe), then received into a buffer
 * of its size (MPI_Imrecv). The set lives as long as the engine and keeps its
 * buffers: a sync-bound run receives a
 * batch or two per window, hundreds of thousands of times, and allocating
 * the set each window was a tenth of the loop (PHOLD, 16 LPs, np = 2).
 *
 * Deaths: a dead source's message is kept if it has fully arrived by the time
 * the survivors agree, else given up; a partly received one is abandoned and
 * its buffer left to MPI, never reused.
 */
#include "engine_priv.h"

#include <stdlib.h>

struct recv_set *recv_set_new(int cap)
{
	struct recv_set *s = engine_xcalloc(1, sizeof *s);
	s->cap = cap;
	s->src = engine_xcalloc((size_t)cap, sizeof *s->src);
	s->state = engine_xcalloc((size_t)cap, sizeof *s->state);
	s->req = engine_xcalloc((size_t)cap, sizeof *s->req);
	s->buf = engine_xcalloc((size_t)cap, sizeof *s->buf);
	s->bufcap = engine_xcalloc((size_t)cap, sizeof *s->bufcap);
	s->len = engine_xcalloc((size_t)cap, sizeof *s->len);
	return s;
}

void recv_set_free(struct recv_set *s)
{
	if (!s)
		return;
	for (int i = 0; s->buf && i < s->cap; i++) /* every buffer ever used, not just the last set's */
		free(s->buf[i]);
	free(s->src);
	free(s->state);
	free(s->req);
	free(s->buf);
	free(s->bufcap);
	free(s->len);
	free(s);
}

void recv_set_add(struct recv_set *s, int src)
{
	int i = s->n++;
	s->src[i] = src;
	s->state[i] = 0;
	s->len[i] = 0;
}

/* One pass over the set; returns the number still pending. */
static int recv_set_poll(void *ctx, int tag)
{
	struct recv_set *s = ctx;
	int pending = 0, partial = 0;
	for (int i = 0; i < s->n; i++) {
		if (s->state[i] == 0) {
			int flag = 0;
			MPI_Message m;
			MPI_Status st;
			MPI_Improbe(s->src[i], tag, MPI_COMM_WORLD, &flag, &m, &st);
			if (flag) {
				MPI_Get_count(&st, MPI_BYTE, &s->len[i]);
				size_t need = s->len[i] > 0 ? (size_t)s->len[i] : 1;
				if (need > s->bufcap[i]) {
					free(s->buf[i]);
					s->buf[i] = malloc(need);
					if (!s->buf[i])
						cxs_bug(NULL, "out of memory receiving %d bytes", s->len[i]);
					s->bufcap[i] = need;
				}
				MPI_Imrecv(s->buf[i], s->len[i], MPI_BYTE, &m, &s->req[i]);
				s->state[i] = 1;
			}
		}
		if (s->state[i] == 1) {
			int done = 0;
			MPI_Test(&s->req[i], &done, MPI_STATUS_IGNORE);
			if (done)
				s->state[i] = 2;
		}
		if (s->state[i] < 2)
			pending++;
		partial += s->state[i] == 1;
	}
	/* The rest of a message under way comes as its sender polls, ringing no bell. */
	if (s->busy)
		*s->busy = partial > 0;
	return pending;
}

/*
 * Waits for the set, handling deaths: a dead source's message is kept if it
 * has arrived by the time the survivors agreed, else given up (returns how
 * many were given up). `deadline_fn` style waiting is comm_wait's.
 */
int recv_set_wait(struct cxs_engine *e, struct recv_set *s, int tag)
{
	int lost = 0;
	if (recv_set_poll(s, tag) == 0)
		return 0; /* everything had arrived: no clock, no allocation */
	int *awaited = engine_xcalloc((size_t)(s->n ? s->n : 1), sizeof *awaited);
	s->busy = &e->wait_busy;
	for (;;) {
		if (recv_set_poll(s, tag) == 0)
			break;
		int na = 0;
		for (int i = 0; i < s->n; i++)
			if (s->state[i] < 2)
				awaited[na++] = s->src[i];
		/* comm_wait on no requests returns at once; poll in its loop instead. */
		enum wait_result r = comm_wait_poll(e, recv_set_poll, s, tag, awaited, na);
		if (r == WAIT_OK)
			break;
		for (int i = 0; i < s->n; i++) {
			if (s->state[i] >= 2 || e->alive[s->src[i]])
				continue;
			recv_set_poll(s, tag);
			if (s->state[i] == 1) {
				/*
				 * Arrived in part: its sender is gone; drop it rather than
				 * hang. MPI may still write into the buffer, so it is left
				 * to MPI (leaked), never reused.
				 */
				MPI_Cancel(&s->req[i]);
				MPI_Request_free(&s->req[i]);
				s->buf[i] = NULL;
				s->bufcap[i] = 0;
			}
			if (s->state[i] < 2) {
				s->state[i] = 3;
				lost++;
			}
		}
	}
	free(awaited);
	s->busy = NULL;
	e->wait_busy = false;
	return lost;
}

