/*
 * Payloads larger than one event reach their destination intact at any rank
 * count (engine.h, "Payloads").
 *
 * A model of 12 nodes: every node, every 50 ns, sends one message of a
 * pseudo-random size — 0 bytes to 256 KiB, half of them above the inline
 * limit — to a pseudo-random other node, and schedules a self event of
 * another random size. Every payload's bytes are a function of (source,
 * sequence number) and its first 16 bytes say which, so each receiver checks
 * every byte it gets. The program prints a digest of everything received, in
 * node order, and the number of bad payloads; the test runs it at np 1, 2 and
 * 3 and requires zero bad payloads and the same digest every time. Each sender
 * also counts the payloads it scheduled before the end time; the program fails
 * unless exactly that many arrived over all ranks (none lost, none twice).
 * BIG_PAYLOAD_FLIP=1 flips one byte, BIG_PAYLOAD_EXTRA=1 counts one payload that
 * was never sent: both runs must fail (big_payload.sh).
 *
 * Run: mpi-configs/cxlsim-mpirun -np N big_payload
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxlsim/engine.h"
#include "rank_status.h"

#define NODES 12
#define LOOKAHEAD 50000u   /* 50 ns */
#define END (20u * 1000u * 1000u) /* 20 us: 4 800 big messages (12 s under ASan for np 1, 2, 3) */
#define MAXSIZE (256u << 10)

enum { EV_TICK = 1, EV_BIG = 2, EV_SELF = 3 };

struct node {
	uint64_t sent, received, bad, digest, expect;
};

static int bad_total;
static uint64_t expect_total, arrived_total; /* this rank's nodes' */
static int flip;  /* BIG_PAYLOAD_FLIP */
static int extra; /* BIG_PAYLOAD_EXTRA */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	return x;
}

/* Payload: [src u32][n u32][tag u64] then bytes b[i] = mix(tag + i / 8) >> (8 * (i % 8)). */
static unsigned char *make(uint32_t src, uint64_t tag, uint32_t n)
{
	unsigned char *p = malloc(n + 16);
	memcpy(p, &src, 4);
	memcpy(p + 4, &n, 4);
	memcpy(p + 8, &tag, 8);
	for (uint32_t i = 0; i < n; i++)
		p[16 + i] = (unsigned char)(mix(tag + i / 8) >> (8 * (i % 8)));
	return p;
}

static void check(struct node *s, const struct cxs_event *ev)
{
	const unsigned char *p = cxs_event_data(ev);
	uint32_t src, n;
	uint64_t tag;
	if (ev->size < 16) {
		s->bad++;
		return;
	}
	memcpy(&src, p, 4);
	memcpy(&n, p + 4, 4);
	memcpy(&tag, p + 8, 8);
	if (n + 16 != ev->size || (ev->type == EV_BIG && src != ev->src)) {
		s->bad++;
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		if (p[16 + i] != (unsigned char)(mix(tag + i / 8) >> (8 * (i % 8)))) {
			s->bad++;
			return;
		}
	s->received++;
	s->digest = mix(s->digest ^ tag ^ ((uint64_t)n << 40) ^ ev->time);
}

static int init(struct cxs_lp *lp, void *state)
{
	(void)state;
	cxs_schedule(lp, 0, EV_TICK, NULL, 0);
	return 0;
}

static void event(struct cxs_lp *lp, void *state, const struct cxs_event *ev)
{
	struct node *s = state;
	if (ev->type != EV_TICK) {
		check(s, ev);
		return;
	}
	uint32_t me = cxs_lp_id(lp);
	uint32_t dst = (me + 1 + (uint32_t)(cxs_rand_u64(lp) % (NODES - 1))) % NODES;
	uint32_t n = (uint32_t)(cxs_rand_u64(lp) % MAXSIZE);
	if (cxs_rand_u64(lp) % 2)
		n %= CXS_EVENT_PAYLOAD_MAX; /* half of them small, inline */
	uint64_t tag = ((uint64_t)me << 48) | s->sent++;
	unsigned char *p = make(me, tag, n);
	/* BIG_PAYLOAD_FLIP=1: one byte of node 3's 100th message flipped before it
	 * leaves, so that the receiver's check is seen to fail (big_payload.sh). */
	if (flip && me == 3 && s->sent == 100 && n > 0)
		p[16 + n - 1] ^= 0x40;
	cxs_time d = LOOKAHEAD + cxs_rand_u64(lp) % 1000;
	s->expect += ev->time + d < END; /* at or past the end: not scheduled (engine.h) */
	cxs_send(lp, dst, d, EV_BIG, p, n + 16);
	free(p);
	n = (uint32_t)(cxs_rand_u64(lp) % 8192);
	tag |= UINT64_C(1) << 47;
	p = make(me, tag, n);
	d = cxs_rand_u64(lp) % 100000;
	s->expect += ev->time + d < END;
	cxs_schedule(lp, d, EV_SELF, p, n + 16);
	free(p);
	cxs_schedule(lp, LOOKAHEAD, EV_TICK, NULL, 0);
}

static void finalize(struct cxs_lp *lp, void *state)
{
	const struct node *s = state;
	if (s->bad)
		fprintf(stderr, "node %u: %llu bad payloads\n", cxs_lp_id(lp),
			(unsigned long long)s->bad);
	bad_total += (int)s->bad;
	expect_total += s->expect + (uint64_t)(extra && cxs_lp_id(lp) == 0);
	arrived_total += s->received + s->bad;
	printf("node %u received %llu digest %016llx\n", cxs_lp_id(lp),
	       (unsigned long long)s->received, (unsigned long long)s->digest);
}

static const struct cxs_node_type type = {
	.name = "big",
	.state_size = sizeof(struct node),
	.init = init,
	.event = event,
	.finalize = finalize,
};

static const struct cxs_node_type *type_of(uint32_t node, void *ctx)
{
	(void)node;
	(void)ctx;
	return &type;
}

static int out(struct cxs_run_record *rec, void *ctx, char *err, size_t errlen)
{
	(void)rec;
	(void)ctx;
	(void)err;
	(void)errlen;
	return 0;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	flip = getenv("BIG_PAYLOAD_FLIP") != NULL;
	extra = getenv("BIG_PAYLOAD_EXTRA") != NULL;
	struct cxs_engine_config cfg = {.nnodes = NODES, .lookahead = LOOKAHEAD, .end_time = END,
					.seed = 7, .failure_timeout_s = 30, .progress_interval_s = 10,
					.quiet = true, .type_of = type_of, .model = "big_payload"};
	char err[256];
	struct cxs_engine *e = cxs_engine_new(&cfg, err, sizeof err);
	if (!e) {
		fprintf(stderr, "%s\n", err);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	struct cxs_run_result res;
	int rc = cxs_engine_run(e, &res, out, NULL);
	if (res.writer)
		printf("checksum %016llx\n", (unsigned long long)res.checksum);
	cxs_engine_free(e);
	int bad = bad_total, any;
	MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (any != 0 && res.writer)
		fprintf(stderr, "%d bad payloads\n", any);
	uint64_t mine[2] = {expect_total, arrived_total}, all[2];
	MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (all[0] != all[1] && res.writer)
		fprintf(stderr, "%llu payloads scheduled before the end, %llu arrived\n",
			(unsigned long long)all[0], (unsigned long long)all[1]);
	rc = rc != 0 || any != 0 || all[0] != all[1] ? 1 : 0;
	report_rank_status(rc);
	MPI_Finalize();
	return rc;
}
