/*
 * Regression test: a failure callback that sends messages.
 *
 * Broke once: a reduction redone after a failure carried the heap minimum from
 * before the decision, without the failure notices queued at the failure
 * time, so the other ranks' bounds went past it and a message sent by a
 * failure callback arrived below its receiver's handled time (the engine
 * stopped with "arrived after this rank handled").
 *
 * Model: every node handles a self event every 10 ns, with a gap just after
 * the kill time (so that the heap minimum after the decision lies well past
 * the failure time); node 2 is killed at 1001 ns; each survivor's failure
 * callback sends one message to the next live node with the lookahead as
 * delay. Checks, on every surviving node: it got exactly one failure notice,
 * at the kill time, and exactly one message from its predecessor, at the kill
 * time plus the lookahead. Exit status 0 only then.
 *
 * Run: mpi-configs/cxlsim-mpirun -np 3 failure_callback_sends
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cxlsim/engine.h"
#include "rank_status.h"

#define NS UINT64_C(1000)
#define KILL_AT (1001 * NS)
#define LOOKAHEAD (100 * NS)

enum { EV_TICK = 1, EV_FROM_FAILURE = 2 };

struct node {
	unsigned notices, messages;
	cxs_time notice_at, message_at;
};

static int failures; /* survivors' nodes that saw something wrong */

static void tick(struct cxs_lp *lp, void *state, const struct cxs_event *ev)
{
	struct node *n = state;
	if (ev->type == EV_FROM_FAILURE) {
		n->messages++;
		n->message_at = ev->time;
		return;
	}
	cxs_time now = cxs_now(lp), next = now + 10 * NS;
	if (next > KILL_AT - 1 * NS && next < 1050 * NS)
		next = 1050 * NS;
	cxs_schedule(lp, next - now, EV_TICK, NULL, 0);
}

static int init(struct cxs_lp *lp, void *state)
{
	(void)state;
	cxs_schedule(lp, 0, EV_TICK, NULL, 0);
	return 0;
}

static void on_failure(struct cxs_lp *lp, void *state, const struct cxs_failure_notice *f)
{
	struct node *n = state;
	n->notices++;
	/* An injected kill is exact: the node's T_f and the notice time are both the kill time. */
	n->notice_at = f->n == 1 && f->times[0] == cxs_now(lp) ? cxs_now(lp) : 0;
	uint32_t count = cxs_lp_count(lp), me = cxs_lp_id(lp);
	for (uint32_t k = 1; k < count; k++) {
		uint32_t dst = (me + k) % count;
		if (cxs_node_alive(lp, dst)) {
			cxs_send(lp, dst, cxs_lookahead(lp), EV_FROM_FAILURE, NULL, 0);
			return;
		}
	}
}

/* Counts a failed expectation (the exit status reports it) and says which. */
#define ASSERT_NODE(lp, cond, ...)                                                     \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "node %u: ", cxs_lp_id(lp));                   \
			fprintf(stderr, __VA_ARGS__);                                  \
			fputc('\n', stderr);                                           \
			failures++;                                                    \
		}                                                                      \
	} while (0)

static void finalize(struct cxs_lp *lp, void *state)
{
	const struct node *n = state;
	ASSERT_NODE(lp, n->notices == 1 && n->notice_at == KILL_AT,
		    "%u failure notices (last at %llu ps), expected 1 at %llu", n->notices,
		    (unsigned long long)n->notice_at, (unsigned long long)KILL_AT);
	ASSERT_NODE(lp, n->messages == 1 && n->message_at == KILL_AT + LOOKAHEAD,
		    "%u messages from a failure callback (last at %llu ps), expected 1 at %llu",
		    n->messages, (unsigned long long)n->message_at,
		    (unsigned long long)(KILL_AT + LOOKAHEAD));
}

static const struct cxs_node_type node_type = {
	.name = "ticker",
	.state_size = sizeof(struct node),
	.init = init,
	.event = tick,
	.failure = on_failure,
	.finalize = finalize,
};

static const struct cxs_node_type *type_of(uint32_t node, void *ctx)
{
	(void)node;
	(void)ctx;
	return &node_type;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	struct cxs_engine_config cfg = {
		.nnodes = 3, .lookahead = LOOKAHEAD, .end_time = 3000 * NS, .seed = 1,
		.failure_timeout_s = 0.5, .progress_interval_s = 1, .quiet = true, .nkills = 1,
		.type_of = type_of, .model = "ticker"};
	cfg.kills[0] = (struct cxs_kill){.node = 2, .time = KILL_AT};
	char err[256];
	struct cxs_engine *e = cxs_engine_new(&cfg, err, sizeof err);
	if (!e) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	struct cxs_run_result res;
	int rc = cxs_engine_run(e, &res, NULL, NULL);
	cxs_engine_free(e);
	if (rc == 0 && failures)
		rc = 1;
	if (rc == 0 && res.nfailures != 1)
		rc = 1;
	fflush(stderr);
	/* As in the cxlsim app: report before MPI_Finalize, which may wait for the dead. */
	report_rank_status(rc);
	_exit(rc);
}
