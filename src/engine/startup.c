/*
 * startup.c — the bounded meeting of all ranks before the run (startup.h).
 *
 * Why not MPI_Allreduce, as before: a rank killed after MPI_Init but before
 * the run (while it reads its configuration, or during a reference run of
 * the workload, which can take minutes) left every other rank in the
 * collective for ever, printing nothing (issue 13, item 2). Here every rank
 * MPI_Isends one fixed-size record to every other and MPI_Irecvs one from
 * each, then tests them until all have come or bound_s has passed since its
 * own arrival. The ranks do the same work before they arrive, so they arrive
 * within moments of each other; the bound (60 s by default) only has to
 * cover the unevenness of scheduling 34 ranks on 2 cores.
 *
 * What each rank then knows:
 *   - all records: the lowest failing rank's message, else the lowest rank
 *     whose configuration hash differs from the lowest rank's — the same
 *     verdict on every rank, since every rank has the same records;
 *   - some records missing: the ranks it did not hear from. Ranks can differ
 *     in that list (a rank that died while sending), so each one whose own
 *     rank is the lowest it heard from (itself included) speaks; usually one.
 *
 * All-to-all is n(n-1) records of 528 bytes: 0.6 MB at 34 ranks, all eager
 * (below every BTL's eager limit), so a send to a dead rank completes locally.
 * Requests still open at the end (a dead peer's) are cancelled or freed, and
 * their buffers left to MPI.
 */
#include "cxlsim/startup.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Below every tag the engine uses (its kinds start at 1 << 27). */
#define TAG_STARTUP 11

struct start_rec {
	uint32_t failed;
	uint32_t rank;
	uint64_t hash;
	char msg[CXS_STARTUP_MSG_MAX];
};
_Static_assert(sizeof(struct start_rec) == 16 + CXS_STARTUP_MSG_MAX, "start-up record layout");

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double cxs_startup_timeout_s(void)
{
	const char *v = getenv(CXS_STARTUP_TIMEOUT_ENV);
	char *end;
	double d;

	if (v == NULL || *v == '\0')
		return CXS_STARTUP_TIMEOUT_DEFAULT_S;
	d = strtod(v, &end);
	return *end == '\0' && d > 0 && d < 1e6 ? d : CXS_STARTUP_TIMEOUT_DEFAULT_S;
}

static void verdict_of(const struct start_rec *recs, const uint8_t *have, int n, int me,
		       struct cxs_startup_result *out)
{
	size_t o = 0;
	int nmissing = 0, lowest = -1;

	for (int r = 0; r < n; r++) {
		if (have[r]) {
			if (lowest < 0)
				lowest = r;
			continue;
		}
		nmissing++;
		if (o < sizeof(out->msg))
			o += (size_t)snprintf(out->msg + o, sizeof(out->msg) - o, "%s%d",
					      nmissing > 1 ? ", " : "", r);
	}
	if (nmissing) {
		out->verdict = CXS_START_MISSING;
		out->rank = -1;
		out->speaker = lowest == me;
		return;
	}
	out->msg[0] = '\0';
	out->speaker = me == 0;
	for (int r = 0; r < n; r++)
		if (recs[r].failed) {
			out->verdict = CXS_START_FAILED;
			out->rank = r;
			snprintf(out->msg, sizeof(out->msg), "%s", recs[r].msg);
			return;
		}
	for (int r = 1; r < n; r++)
		if (recs[r].hash != recs[0].hash || recs[r].hash == 0) {
			out->verdict = CXS_START_DIFFERS;
			out->rank = r;
			return;
		}
	out->verdict = CXS_START_OK;
	out->rank = -1;
}

void cxs_startup_agree(bool failed, const char *msg, uint64_t hash, double bound_s,
		       struct cxs_startup_result *out)
{
	int me, n;
	double deadline = now_s() + bound_s;
	long sleep_ns = 10000;

	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	memset(out, 0, sizeof *out);
	/* Leaked when a request is abandoned: MPI may still use the buffers. */
	struct start_rec *recs = calloc((size_t)n, sizeof *recs);
	struct start_rec *mine = calloc(1, sizeof *mine);
	MPI_Request *rq = calloc(2 * (size_t)n, sizeof *rq);
	uint8_t *have = calloc((size_t)n, 1);
	if (!recs || !mine || !rq || !have) {
		out->verdict = CXS_START_FAILED;
		out->rank = me;
		out->speaker = true;
		snprintf(out->msg, sizeof(out->msg), "out of memory at start-up");
		return;
	}
	mine->failed = failed;
	mine->rank = (uint32_t)me;
	mine->hash = hash;
	snprintf(mine->msg, sizeof(mine->msg), "%s", failed && msg ? msg : "");
	recs[me] = *mine;
	have[me] = 1;
	for (int r = 0; r < n; r++) {
		rq[r] = rq[n + r] = MPI_REQUEST_NULL;
		if (r == me)
			continue;
		MPI_Irecv(&recs[r], (int)sizeof *recs, MPI_BYTE, r, TAG_STARTUP, MPI_COMM_WORLD, &rq[r]);
		MPI_Isend(mine, (int)sizeof *mine, MPI_BYTE, r, TAG_STARTUP, MPI_COMM_WORLD,
			  &rq[n + r]);
	}
	for (;;) {
		int pending = 0;
		for (int r = 0; r < n; r++) {
			int done = 0;
			if (rq[r] == MPI_REQUEST_NULL)
				continue;
			MPI_Test(&rq[r], &done, MPI_STATUS_IGNORE);
			if (done)
				have[r] = 1;
			else
				pending++;
		}
		if (!pending || now_s() > deadline)
			break;
		struct timespec ts = {0, sleep_ns};
		nanosleep(&ts, NULL);
		sleep_ns = sleep_ns * 2 > 1000000 ? 1000000 : sleep_ns * 2;
	}
	bool abandoned = false;
	for (int r = 0; r < 2 * n; r++) {
		int done = 0;
		if (rq[r] == MPI_REQUEST_NULL)
			continue;
		MPI_Test(&rq[r], &done, MPI_STATUS_IGNORE);
		if (done)
			continue;
		if (r < n)
			MPI_Cancel(&rq[r]);
		MPI_Request_free(&rq[r]);
		abandoned = true;
	}
	verdict_of(recs, have, n, me, out);
	if (!abandoned) {
		free(recs);
		free(mine);
	}
	free(rq);
	free(have);
}
