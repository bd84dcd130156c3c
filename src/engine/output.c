/*
 * output.c — the end of a run: every live rank packs its nodes' counters and
 * its engine figures into a blob and sends it to the writer (the lowest live
 * rank), which checks and unpacks them, folds the run checksum in node-id
 * order, builds the run record and calls the caller's output function, then
 * releases the others with DONE. If the writer dies meanwhile, the survivors
 * agree and the next lowest rank gathers and writes; a blob behind an
 * abandoned send is never freed (MPI may still read it).
 */
#include "engine_priv.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxlsim/h5out.h"


struct blob_hdr {
	uint32_t rank;
	uint32_t nnodes;
	int32_t abort_code;
	uint32_t pad;
	uint64_t events, windows, remote_msgs, batches_sent, agreements, lost_batches;
	double loop_wall_s, sync_wall_s, idle_wall_s, busy_wall_s, agreement_wall_s;
	uint64_t last_event_ps; /* time of the last event this rank handled */
	char abort_msg[256];
};
struct blob_node {
	uint32_t id;
	uint32_t stats_len;
	uint64_t digest, committed, snapshot;
};
_Static_assert(sizeof(struct blob_hdr) == 368, "gather header layout");
_Static_assert(sizeof(struct blob_node) == 32, "gather node layout");

static unsigned char *make_blob(struct cxs_engine *e, size_t *len)
{
	size_t cap = sizeof(struct blob_hdr), n = 0;
	void **packs = engine_xcalloc(e->nlocal, sizeof *packs);
	size_t *plen = engine_xcalloc(e->nlocal, sizeof *plen);
	for (uint32_t i = 0; i < e->nlocal; i++) {
		engine_publish_counters(&e->lps[i]);
		if (cxs_stats_pack(e->lps[i].stats, &packs[i], &plen[i]) != 0)
			cxs_bug(NULL, "out of memory packing statistics");
		comm_service_now_and_then(e);
		cap += sizeof(struct blob_node) + ((plen[i] + 7) & ~(size_t)7);
	}
	unsigned char *b = engine_xcalloc(cap, 1);
	struct blob_hdr h = {
		.rank = (uint32_t)e->rank, .nnodes = e->nlocal, .abort_code = e->abort_code,
		.events = e->fig.events, .windows = e->fig.windows, .remote_msgs = e->fig.remote_msgs,
		.batches_sent = e->fig.batches_sent, .agreements = e->fig.agreements,
		.lost_batches = e->fig.lost_batches, .loop_wall_s = e->fig.loop_wall_s,
		.sync_wall_s = e->fig.sync_wall_s, .idle_wall_s = e->fig.idle_wall_s,
		.busy_wall_s = e->fig.busy_wall_s, .agreement_wall_s = e->fig.agreement_wall_s,
		.last_event_ps = e->fig.events ? e->now : 0};
	memcpy(h.abort_msg, e->abort_msg, sizeof h.abort_msg);
	memcpy(b, &h, sizeof h);
	n = sizeof h;
	for (uint32_t i = 0; i < e->nlocal; i++) {
		struct cxs_lp *lp = &e->lps[i];
		struct blob_node bn = {.id = lp->id, .stats_len = (uint32_t)plen[i],
				       .digest = lp->digest, .committed = lp->committed};
		if (lp->type->snapshot)
			bn.snapshot = lp->type->snapshot(lp, lp->state);
		memcpy(b + n, &bn, sizeof bn);
		n += sizeof bn;
		memcpy(b + n, packs[i], plen[i]);
		n += (plen[i] + 7) & ~(size_t)7;
		free(packs[i]);
	}
	free(packs);
	free(plen);
	*len = n;
	return b;
}

struct gathered {
	struct blob_hdr *hdr;      /* per rank; rank field UINT32_MAX if missing */
	struct blob_node *node;    /* per node */
	struct cxs_stats **stats;  /* per node, NULL if missing */
	uint8_t *have;             /* per node */
};

static void absorb_blob(struct cxs_engine *e, struct gathered *g, const unsigned char *b,
			size_t len)
{
	struct blob_hdr h;
	if (len < sizeof h)
		cxs_bug(NULL, "short result blob");
	memcpy(&h, b, sizeof h);
	if (h.rank >= (uint32_t)e->nranks)
		cxs_bug(NULL, "result blob from unknown rank %u", h.rank);
	g->hdr[h.rank] = h;
	size_t off = sizeof h;
	for (uint32_t i = 0; i < h.nnodes; i++) {
		struct blob_node bn;
		if (len - off < sizeof bn)
			cxs_bug(NULL, "truncated result blob from rank %u", h.rank);
		memcpy(&bn, b + off, sizeof bn);
		off += sizeof bn;
		if (bn.id >= e->cfg.nnodes || len - off < bn.stats_len)
			cxs_bug(NULL, "malformed result blob from rank %u", h.rank);
		g->node[bn.id] = bn;
		cxs_stats_free(g->stats[bn.id]);
		errno = 0;
		g->stats[bn.id] = cxs_stats_unpack(b + off, bn.stats_len);
		if (!g->stats[bn.id] && errno == ENOMEM)
			cxs_bug(NULL, "out of memory unpacking the statistics of node %u (rank %u): "
				"the writer holds every node's statistics at the end (see the estimate "
				"with -v)", bn.id, h.rank);
		if (!g->stats[bn.id])
			cxs_bug(NULL, "corrupt statistics from rank %u node %u", h.rank, bn.id);
		g->have[bn.id] = 1;
		off += (bn.stats_len + 7) & ~(size_t)7;
		comm_service_now_and_then(e);
	}
}

static uint64_t run_checksum(const struct cxs_engine *e, const struct gathered *g)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (uint32_t n = 0; n < e->cfg.nnodes; n++) {
		if (!g->have[n] || !e->node_alive[n])
			continue;
		h = mix64(h, n);
		h = mix64(h, g->node[n].digest);
		h = mix64(h, g->node[n].committed);
		h = mix64(h, g->node[n].snapshot);
		h = mix64(h, cxs_stats_digest(g->stats[n]));
	}
	return h;
}

static int write_output(struct cxs_engine *e, struct gathered *g, struct cxs_run_result *res,
			cxs_output_fn *out, void *ctx, char *err, size_t errlen)
{
	int R = e->nranks;
	uint64_t *u[7];
	double *d[5];
	for (int i = 0; i < 7; i++)
		u[i] = engine_xcalloc((size_t)R, sizeof(uint64_t));
	for (int i = 0; i < 5; i++)
		d[i] = engine_xcalloc((size_t)R, sizeof(double));
	uint64_t committed = 0;
	/* When the simulation really ended: the last event any survivor handled. */
	res->final_time = 0;
	for (int r = 0; r < R; r++) {
		const struct blob_hdr *h = &g->hdr[r];
		if (h->rank != (uint32_t)r)
			continue;
		if (h->last_event_ps > res->final_time)
			res->final_time = h->last_event_ps;
		u[0][r] = h->events;
		u[1][r] = h->windows;
		u[2][r] = h->remote_msgs;
		u[3][r] = h->batches_sent;
		u[4][r] = h->agreements;
		u[5][r] = h->lost_batches;
		u[6][r] = e->alive[r];
		d[0][r] = h->loop_wall_s;
		d[1][r] = h->sync_wall_s;
		d[2][r] = h->idle_wall_s;
		d[3][r] = h->busy_wall_s;
		d[4][r] = h->agreement_wall_s;
		committed += h->events;
	}
	const struct cxs_rank_column cols[] = {
		{"events", "events", "events handled on this rank", 0, u[0], NULL},
		{"windows", "windows", "synchronisation windows completed", 0, u[1], NULL},
		{"remote_msgs", "events", "events sent to other ranks", 0, u[2], NULL},
		{"batches_sent", "messages", "MPI batch messages sent", 0, u[3], NULL},
		{"agreements", "agreements", "membership agreements taken part in", 0, u[4], NULL},
		{"lost_batches", "messages", "batches of dead ranks given up", 0, u[5], NULL},
		{"alive", "bool", "1 if the rank survived to the end", 0, u[6], NULL},
		{"loop_wall_s", "s", "wall time of the event loop", 1, NULL, d[0]},
		{"sync_wall_s", "s", "wall time waiting in reductions, batch exchange and agreement", 1, NULL, d[1]},
		{"idle_wall_s", "s", "part of sync_wall_s spent yielding or sleeping", 1, NULL, d[2]},
		{"busy_wall_s", "s", "wall time handling events", 1, NULL, d[3]},
		{"agreement_wall_s", "s", "wall time in membership agreements", 1, NULL, d[4]},
	};
	struct cxs_node_record *nodes = engine_xcalloc(e->cfg.nnodes, sizeof *nodes);
	for (uint32_t n = 0; n < e->cfg.nnodes; n++) {
		nodes[n].type = e->cfg.type_of(n, e->cfg.type_ctx)->name;
		nodes[n].rank = e->node_rank[n];
		nodes[n].alive = e->node_alive[n] && g->have[n];
		nodes[n].stats = g->have[n] ? g->stats[n] : NULL;
	}
	struct cxs_failure_record *fr = engine_xcalloc(e->nfailures, sizeof *fr);
	for (size_t i = 0; i < e->nfailures; i++)
		fr[i] = (struct cxs_failure_record){e->failures[i].node, e->failures[i].rank,
						    e->failures[i].time, e->failures[i].detected_wall_s,
						    e->failures[i].epoch, e->failures[i].cause};
	/*
	 * The run's error: one reported during the run reached every rank with
	 * the reductions; one found at the end (a node's finalize: a workload
	 * cut off by the end time) only its own rank's blob. The lowest rank's wins.
	 */
	int abort_code = e->abort_code;
	const char *abort_msg = NULL;
	for (int r = 0; r < R; r++)
		if (g->hdr[r].rank == (uint32_t)r && g->hdr[r].abort_code) {
			if (!abort_code)
				abort_code = g->hdr[r].abort_code;
			if (g->hdr[r].abort_msg[0]) {
				abort_msg = g->hdr[r].abort_msg;
				break;
			}
		}
	e->abort_code = abort_code;
	char status[320];
	if (abort_code)
		snprintf(status, sizeof status, "error: %s", abort_msg ? abort_msg : "model error");
	else if (e->interrupted) {
		double t = (double)e->gmin;
		const char *unit = t >= 1e12 ? "s" : t >= 1e9 ? "ms" : t >= 1e6 ? "us" : "ns";
		double div = t >= 1e12 ? 1e12 : t >= 1e9 ? 1e9 : t >= 1e6 ? 1e6 : 1e3;
		snprintf(status, sizeof status,
			 "interrupted (%s): complete up to %.6g %s of simulated time (every event "
			 "before it handled)", e->interrupted == SIGINT ? "SIGINT" :
			 e->interrupted == SIGTERM ? "SIGTERM" : "signal", t / div, unit);
	}
	else
		snprintf(status, sizeof status, "%s",
			 e->nfailures ? "complete-with-failures" : "complete");
	res->checksum = run_checksum(e, g);
	res->committed = committed;
	struct cxs_run_record rec = {
		.model = e->cfg.model, .status = status,
		.exit_status = abort_code ? abort_code : e->interrupted ? 128 + e->interrupted : 0,
		.nranks = (uint32_t)R, .seed = e->cfg.seed, .checksum = res->checksum,
		.end_time_ps = e->cfg.end_time, .final_time_ps = res->final_time,
		.wall_seconds = comm_now() - e->t_start, .ncolumns = sizeof cols / sizeof cols[0],
		.columns = cols, .nnodes = e->cfg.nnodes, .nodes = nodes,
		.nfailures = e->nfailures, .failures = fr, .tick = comm_service_tick, .tick_ctx = e,
		.sample_interval_ps = e->cfg.sample_interval};
	int rc = out ? out(&rec, ctx, err, errlen) : 0;
	for (int i = 0; i < 7; i++)
		free(u[i]);
	for (int i = 0; i < 5; i++)
		free(d[i]);
	free(nodes);
	free(fr);
	return rc;
}

/*
 * Gathers to the writer and writes; repeats with a new writer if the writer
 * dies. Returns the output function's status on the writer, 0 elsewhere.
 */
int engine_gather_and_write(struct cxs_engine *e, struct cxs_run_result *res, cxs_output_fn *out,
			    void *ctx)
{
	size_t blen;
	unsigned char *blob = make_blob(e, &blen);
	bool blob_in_flight = false;
	int rc = 0;
	for (;;) {
		int writer = e->live[0];
		int tag = TAG_GATHER | (int)(e->epoch & 0xffff);
		int done_tag = TAG_DONE | (int)(e->epoch & 0xffff);
		if (writer != e->rank) {
			int64_t status = 0;
			MPI_Request rq[2];
			MPI_Isend(blob, (int)blen, MPI_BYTE, writer, tag, MPI_COMM_WORLD, &rq[0]);
			MPI_Irecv(&status, 1, MPI_INT64_T, writer, done_tag, MPI_COMM_WORLD, &rq[1]);
			if (comm_wait(e, rq, 2, &writer, 1) == WAIT_OK) {
				res->writer = false;
				/* The run's status as the writer saw it: every rank exits with it. */
				if (status && !e->abort_code)
					e->abort_code = (int)status;
				break;
			}
			/* The abandoned send may still read the blob: never free it now. */
			MPI_Request_free(&rq[0]);
			MPI_Cancel(&rq[1]);
			MPI_Request_free(&rq[1]);
			blob_in_flight = true;
			continue;
		}
		struct gathered g = {0};
		g.hdr = engine_xcalloc((size_t)e->nranks, sizeof *g.hdr);
		for (int r = 0; r < e->nranks; r++)
			g.hdr[r].rank = UINT32_MAX;
		g.node = engine_xcalloc(e->cfg.nnodes, sizeof *g.node);
		g.stats = engine_xcalloc(e->cfg.nnodes, sizeof *g.stats);
		g.have = engine_xcalloc(e->cfg.nnodes, 1);
		absorb_blob(e, &g, blob, blen);
		struct recv_set *s = e->rs;
		s->n = 0;
		for (int i = 0; i < e->nlive; i++)
			if (e->live[i] != e->rank)
				recv_set_add(s, e->live[i]);
		uint32_t epoch = e->epoch;
		recv_set_wait(e, s, tag);
		bool changed = epoch != e->epoch;
		for (int i = 0; i < s->n && !changed; i++)
			if (s->state[i] == 2)
				absorb_blob(e, &g, s->buf[i], (size_t)s->len[i]);
		if (!changed) {
			char err[512] = "";
			res->writer = true;
			rc = write_output(e, &g, res, out, ctx, err, sizeof err);
			if (rc != 0)
				fprintf(stderr, "cxlsim: %s\n", err);
			/* A copy: a decision during the sends may rebuild the live list. */
			static int64_t status; /* stays valid for sends we stop waiting for */
			status = e->abort_code ? e->abort_code : rc;
			int nl = e->nlive;
			int *to = engine_xcalloc((size_t)nl, sizeof *to);
			memcpy(to, e->live, (size_t)nl * sizeof *to);
			for (int i = 0; i < nl; i++) {
				if (to[i] == e->rank || !e->alive[to[i]])
					continue;
				MPI_Request rq;
				MPI_Isend(&status, 1, MPI_INT64_T, to[i], done_tag, MPI_COMM_WORLD, &rq);
				if (comm_wait(e, &rq, 1, &to[i], 1) != WAIT_OK && rq != MPI_REQUEST_NULL)
					MPI_Request_free(&rq);
			}
			free(to);
		}
		for (uint32_t n = 0; n < e->cfg.nnodes; n++)
			cxs_stats_free(g.stats[n]);
		free(g.hdr);
		free(g.node);
		free(g.stats);
		free(g.have);
		if (!changed)
			break;
		/* Someone died while we gathered: everyone starts over in the new epoch. */
	}
	if (!blob_in_flight)
		free(blob);
	return rc;
}

