/*
 * progress.c — one line on the writer rank (the lowest live rank) for runs
 * longer than a couple of seconds: simulated time, share of the end time,
 * committed events per wall second, estimated time left. On a terminal the
 * line is rewritten in place; otherwise each update is a plain line, at most
 * one per progress interval. --quiet silences it. Figures come from the
 * window reduction (a global sum), so printing costs no communication.
 */
#include "engine_priv.h"

#include <stdio.h>
#include <unistd.h>

#define PROGRESS_AFTER_S 2.0

void progress_update(struct cxs_engine *e, bool final)
{
	if (e->cfg.quiet || e->nlive == 0 || e->live[0] != e->rank)
		return;
	double now = comm_now();
	double elapsed = now - e->t_start;
	if (elapsed < PROGRESS_AFTER_S || (!final && now - e->last_progress < e->cfg.progress_interval_s))
		return;
	bool tty = isatty(STDERR_FILENO);
	if (final && !tty && !e->printed_progress)
		return;
	e->last_progress = now;
	e->printed_progress = true;
	cxs_time t = e->gmin < e->cfg.end_time ? e->gmin : e->cfg.end_time;
	if (final)
		t = e->cfg.end_time;
	double share = e->cfg.end_time ? (double)t / (double)e->cfg.end_time : 1.0;
	double rate = elapsed > 0 ? (double)e->global_committed / elapsed : 0;
	double left = share > 0 ? elapsed * (1 - share) / share : 0;
	fprintf(stderr, "%s[cxlsim] t=%.6g us (%5.1f%%)  %.3g events/s  %s %.0f s%s",
		tty ? "\r" : "", (double)t / 1e6, 100 * share, rate, final ? "took" : "left ~",
		final ? elapsed : left, tty ? (final ? "\033[K\n" : "\033[K") : "\n");
	fflush(stderr);
}
