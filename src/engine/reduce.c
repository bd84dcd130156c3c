/*
 * reduce.c — the one collective of every window, over point-to-point messages.
 *
 * Every window ends with an all-reduce of a small vector (engine_priv.h: the
 * minima that set the next window's bounds, the bitmap of who sent batches to
 * whom, abort codes, event counts). It is written over MPI_Isend/MPI_Irecv and
 * not as MPI_Iallreduce for two reasons, both measured or forced:
 *
 *  - failure survival: a collective on a communicator with a dead member never
 *    completes, and Open MPI 4.1 (no ULFM) cannot repair it. Over point to
 *    point, each step waits for one named peer, whose silence is detected by
 *    a ping (comm.c), and after an agreement the same code runs over the
 *    survivors' list with a fresh epoch in the tag — that list and tag space is
 *    the survivors' communicator.
 *  - speed: for two ranks the reduction is one exchange of a few hundred
 *    bytes, ~1 us over shared memory; libnbc's Iallreduce costs several times
 *    that per window, and windows are what bound the sync-heavy runs.
 *
 * When every rank is on one host, reduce_shm.c does the same reduction in
 * shared memory instead (one sleep per rank per window, not one per step).
 *
 * Schedule: recursive doubling over the live ranks, with the ranks beyond the
 * largest power of two folding in first and receiving the result last. All
 * operators are integer and commutative, so every rank ends with the same
 * bits whatever the order of combination.
 */
#include "engine_priv.h"

#include <stdlib.h>
#include <string.h>

/*
 * Open MPI's shared-memory eager limit (btl_vader_eager_limit, 4 KiB): a
 * larger vector moves only while its sender polls, so its receiver must not
 * sleep on the doorbell (doorbell.c). 4 KiB is the vector of ~90 ranks.
 */
#define RED_EAGER_BYTES 4096u

void red_layout_init(struct red_layout *l, uint32_t nranks)
{
	l->nranks = nranks;
	l->bitmap_words = (nranks + 63) / 64;
	l->nmin = 2 * (size_t)nranks;
	l->nor = (size_t)nranks * l->bitmap_words;
	l->nmax = RED_NMAX;
	l->nsum = RED_NSUM;
	l->total = l->nmin + l->nor + l->nmax + l->nsum;
}

void red_identity(const struct red_layout *l, uint64_t *v)
{
	for (size_t i = 0; i < l->nmin; i++)
		v[i] = UINT64_MAX;
	memset(v + l->nmin, 0, (l->total - l->nmin) * sizeof *v);
}

void red_combine(const struct red_layout *l, uint64_t *acc, const uint64_t *in)
{
	size_t i = 0;
	for (; i < l->nmin; i++)
		if (in[i] < acc[i])
			acc[i] = in[i];
	for (size_t end = i + l->nor; i < end; i++)
		acc[i] |= in[i];
	for (size_t end = i + l->nmax; i < end; i++)
		if (in[i] > acc[i])
			acc[i] = in[i];
	for (; i < l->total; i++)
		acc[i] += in[i];
}

int red_schedule(uint32_t n, uint32_t i, struct red_step *steps)
{
	int k = 0;
	if (n <= 1)
		return 0;
	uint32_t p = 1;
	while (p * 2 <= n)
		p *= 2;
	uint32_t rem = n - p;
	if (i >= p) {
		steps[k++] = (struct red_step){RED_SEND_ONLY, i - p};
		steps[k++] = (struct red_step){RED_RECV_RESULT, i - p};
		return k;
	}
	if (i < rem)
		steps[k++] = (struct red_step){RED_RECV_COMBINE, i + p};
	for (uint32_t mask = 1; mask < p; mask <<= 1)
		steps[k++] = (struct red_step){RED_EXCHANGE, i ^ mask};
	if (i < rem)
		steps[k++] = (struct red_step){RED_SEND_RESULT, i + p};
	return k;
}

static int my_index(const struct cxs_engine *e)
{
	for (int i = 0; i < e->nlive; i++)
		if (e->live[i] == e->rank)
			return i;
	return -1;
}

/* Drops a request we no longer wait for; its buffer is engine-owned and stays valid. */
static void abandon(MPI_Request *r, bool is_recv)
{
	if (*r == MPI_REQUEST_NULL)
		return;
	if (is_recv)
		MPI_Cancel(r);
	MPI_Request_free(r);
}

static uint64_t *fresh(size_t n)
{
	uint64_t *p = calloc(n, sizeof *p);
	if (!p)
		cxs_bug(NULL, "out of memory for the reduction");
	return p;
}

enum wait_result reduce_run(struct cxs_engine *e)
{
	if (e->rshm)
		return rshm_run(e);
	size_t n = e->rl.total;
	memcpy(e->result, e->contrib, n * sizeof *e->result);
	int me = my_index(e);
	if (me < 0)
		cxs_bug(NULL, "rank %d is not in its own live list", e->rank);
	struct red_step steps[RED_MAX_STEPS];
	int nsteps = red_schedule((uint32_t)e->nlive, (uint32_t)me, steps);
	int tag = tag_reduce(e->epoch, e->w);
	for (int s = 0; s < nsteps; s++) {
		int peer = e->live[steps[s].peer];
		MPI_Request rq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
		bool sends = false, recvs = false;
		uint64_t *rbuf = e->tmp;
		switch (steps[s].kind) {
		case RED_SEND_ONLY:
		case RED_SEND_RESULT:
			sends = true;
			break;
		case RED_RECV_COMBINE:
			recvs = true;
			break;
		case RED_EXCHANGE:
			sends = recvs = true;
			break;
		case RED_RECV_RESULT:
			recvs = true;
			rbuf = e->result;
			break;
		}
		if (sends) {
			memcpy(e->sendbuf, e->result, n * sizeof *e->result);
			MPI_Isend(e->sendbuf, (int)n, MPI_UINT64_T, peer, tag, MPI_COMM_WORLD, &rq[0]);
			door_ring(e->door, peer);
		}
		if (recvs)
			MPI_Irecv(rbuf, (int)n, MPI_UINT64_T, peer, tag, MPI_COMM_WORLD, &rq[1]);
		e->red_sreq = &rq[0];
		e->wait_busy = n * sizeof *e->result > RED_EAGER_BYTES;
		enum wait_result wr = comm_wait(e, rq, 2, &peer, 1);
		e->red_sreq = NULL;
		e->wait_busy = false;
		if (wr == WAIT_CHANGED) {
			/*
			 * A matched transfer cannot be cancelled and may still read or
			 * write its buffer: give the buffers to MPI (leaked, once per
			 * failure) and continue with fresh ones.
			 */
			if (rq[0] != MPI_REQUEST_NULL) {
				abandon(&rq[0], false);
				e->sendbuf = fresh(n);
			}
			if (rq[1] != MPI_REQUEST_NULL) {
				abandon(&rq[1], true);
				if (rbuf == e->result)
					e->result = fresh(n);
				else
					e->tmp = fresh(n);
			}
			return WAIT_CHANGED;
		}
		if (steps[s].kind == RED_RECV_COMBINE || steps[s].kind == RED_EXCHANGE)
			red_combine(&e->rl, e->result, e->tmp);
	}
	return WAIT_OK;
}
