/*
 * progress.c — one line on the writer rank (the lowest live rank) for runs
 * longer than a couple of seconds: simulated time, share of the work done,
 * committed events per wall second, estimated time left.
 *
 * The share is the nodes' own measure when they have one (cxs_progress_fn:
 * a memory-system CN counts its cores' memory operations against the
 * reference run's counts, so 16x4 ocean_cp shows "work 42%" and a time left
 * from it), else the share of engine.end_time, which for a workload that
 * ends long before its end-time cap means nothing (issue 12: "left ~
 * 111965 s" on a run of seconds). Both come from the window reduction. On a terminal the
 * line is rewritten in place; otherwise each update is a plain line, at most
 * one per progress interval. --quiet silences it. Figures come from the
 * window reduction (a global sum), so printing costs no communication.
 *
 * Under mpirun a rank's stderr is always a pipe (Open MPI forwards it, and
 * holds a line until its newline), so a rank started by mpirun writes the
 * line to its controlling terminal (/dev/tty) when it has one; without one
 * (CI, batch jobs, remote nodes) it prints plain lines on stderr.
 */
#include "engine_priv.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
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
	static FILE *out;
	static bool tty;
	if (!out) {
		out = stderr;
		tty = isatty(STDERR_FILENO);
		if (!tty && getenv("OMPI_COMM_WORLD_SIZE")) {
			int fd = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC);
			FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
			if (f) {
				out = f;
				tty = true;
			} else if (fd >= 0) {
				close(fd);
			}
		}
	}
	if (final && !tty && !e->printed_progress)
		return;
	e->last_progress = now;
	e->printed_progress = true;
	cxs_time t = e->gmin < e->cfg.end_time ? e->gmin : e->cfg.end_time;
	if (final)
		t = e->global_work_total ? e->now : e->cfg.end_time; /* a workload ends at its last event */
	bool work = e->global_work_total > 0;
	double share = work ? (double)e->global_work_done / (double)e->global_work_total
		       : e->cfg.end_time ? (double)t / (double)e->cfg.end_time : 1.0;
	if (final)
		share = 1.0;
	double rate = elapsed > 0 ? (double)e->global_committed / elapsed : 0;
	double left = share > 0 ? elapsed * (1 - share) / share : 0;
	fprintf(out, "%s[cxlsim] t=%.6g us  %s %5.1f%%  %.3g events/s  %s %.0f s%s",
		tty ? "\r" : "", (double)t / 1e6, work ? "work" : "of end time", 100 * share, rate,
		final ? "took" : "left ~", final ? elapsed : left,
		tty ? (final ? "\033[K\n" : "\033[K") : "\n");
	fflush(out);
}
