/*
 * lifecycle.c — the cxlsim process around the run.
 *
 * Status files. Under the failure-survival recipe (--enable-recovery, or
 * orte_abort_on_non_zero_status 0) mpirun exits 0 whatever its ranks return.
 * mpi-configs/cxlsim-mpirun therefore names a directory in CXLSIM_STATUS_DIR
 * where every rank leaves:
 *
 *   started-R   before MPI_Init: "SIZE PID HOST" (the job's size, from Open
 *               MPI's environment, so the wrapper knows how many ranks to
 *               expect; pid and host so that it can tell a dead one)
 *   arrived-R   when it comes to the meeting before the run (startup.h)
 *   rank-R      its exit status, when it ends normally
 *
 * and the wrapper exits with the worst status, and stops the job itself if
 * the ranks never all arrive (its own start-up watchdog).
 *
 * Start-up watchdog. A rank killed while the job starts leaves the others in
 * MPI_Init for ever (Open MPI waits in PMIx_Get for the dead rank's
 * business card; issue 13, item 2). Nothing in MPI can time that out, so an
 * alarm does: if MPI_Init has not returned CXLSIM_STARTUP_TIMEOUT seconds
 * (default 60; MPI_Init takes about a second at 34 ranks on 2 cores) after
 * the process began, the handler writes one line and the status 69
 * (CXS_EXIT_STARTUP) and ends the process, using only async-signal-safe
 * calls on a message and a path prepared beforehand. After MPI_Init, the
 * bounded exchange of startup.c takes over.
 *
 * Interrupts. Once the run has started, the first SIGINT or SIGTERM only sets
 * a flag; the engine puts it into the next window's reduction, so every rank
 * stops after the same window and the results are written as a complete,
 * readable file whose status says "interrupted" and up to which simulated
 * time every event was handled; the exit status is 128 + the signal (130,
 * 143). Under the wrapper, Ctrl-C reaches the ranks as SIGTERM from the
 * wrapper (mpirun itself would SIGKILL them a second later). A second signal ends the
 * process at once; if it falls into the write, the handler removes the
 * temporary file first (publish.h), so the previous file stays and nothing
 * unreadable is left. Before the run the default action stays: nothing is
 * worth saving yet, and the start-up bound covers the others.
 *
 * Finalize guard. MPI_Finalize ends with a fence over every process of the
 * job; after a rank died, Open MPI 4.1 intermittently waits for it forever
 * (seen in the kill tests, every rank asleep in ompi_mpi_finalize). By then
 * the output is written and the status reported, so an alarm ends the process
 * with its real status if finalize has not returned in time: a few seconds
 * when ranks died, a minute (never reached in practice) otherwise.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "lifecycle_priv.h"

#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cxlsim/publish.h"
#include "cxlsim/startup.h"

#define FINALIZE_GUARD_AFTER_FAILURE_S 3u
#define FINALIZE_GUARD_S 60u

static char init_msg[512];
static char init_status_path[4096]; /* "" without CXLSIM_STATUS_DIR */
static volatile sig_atomic_t exit_status;

/* The job's rank and size as Open MPI's launcher sets them, before MPI_Init; -1 if unknown. */
static int env_int(const char *a, const char *b)
{
	const char *v = getenv(a);

	if (v == NULL)
		v = getenv(b);
	return v != NULL && *v != '\0' ? atoi(v) : -1;
}

static int status_path(char *out, size_t n, const char *what, int rank)
{
	const char *dir = getenv("CXLSIM_STATUS_DIR");

	if (dir == NULL || *dir == '\0' || rank < 0)
		return -1;
	return snprintf(out, n, "%s/%s-%d", dir, what, rank) < (int)n ? 0 : -1;
}

static void write_file(const char *what, int rank, const char *text)
{
	char path[4096];
	FILE *f;

	if (status_path(path, sizeof(path), what, rank) != 0)
		return;
	f = fopen(path, "w");
	if (f == NULL)
		return;
	fputs(text, f);
	fclose(f);
}

static void init_expired(int sig)
{
	(void)sig;
	ssize_t w = write(STDERR_FILENO, init_msg, strlen(init_msg));
	(void)w;
	if (init_status_path[0] != '\0') {
		int fd = open(init_status_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			w = write(fd, "69\n", 3);
			close(fd);
		}
	}
	_exit(CXS_EXIT_STARTUP);
}

void lifecycle_before_init(void)
{
	int rank = env_int("OMPI_COMM_WORLD_RANK", "PMIX_RANK");
	int size = env_int("OMPI_COMM_WORLD_SIZE", "OMPI_UNIVERSE_SIZE");
	double bound = cxs_startup_timeout_s();
	char text[320];
	_Static_assert(CXS_EXIT_STARTUP == 69, "init_expired writes \"69\"");

	char host[256] = "?";
	gethostname(host, sizeof(host) - 1);
	snprintf(text, sizeof(text), "%d %ld %s\n", size, (long)getpid(), host);
	write_file("started", rank, text);
	if (status_path(init_status_path, sizeof(init_status_path), "rank", rank) != 0)
		init_status_path[0] = '\0';
	snprintf(init_msg, sizeof(init_msg),
		 "cxlsim: rank %d: MPI_Init has not finished after %.0f s: a rank of the job "
		 "died or never started; stopping (bound: %s)\n",
		 rank, bound, CXS_STARTUP_TIMEOUT_ENV);
	signal(SIGALRM, init_expired);
	alarm(bound < 1 ? 1u : (unsigned)(bound + 0.5));
}

void lifecycle_after_init(void)
{
	alarm(0);
	signal(SIGALRM, SIG_DFL);
}

void lifecycle_arrived(int rank)
{
	write_file("arrived", rank, "1\n");
}

void lifecycle_report_status(int rank, int rc)
{
	char text[16];

	snprintf(text, sizeof(text), "%d\n", rc);
	write_file("rank", rank, text);
}

static volatile sig_atomic_t interrupt_sig;

static void on_interrupt(int sig)
{
	if (interrupt_sig) {
		static const char msg[] = "cxlsim: second signal: stopping at once\n";
		cxs_publish_remove_pending();
		ssize_t w = write(STDERR_FILENO, msg, sizeof(msg) - 1);
		(void)w;
		_exit(128 + sig);
	}
	interrupt_sig = sig;
}

const volatile sig_atomic_t *lifecycle_catch_interrupts(void)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	/* An ignored SIGINT stays ignored: that is how a shell protects its
	 * background jobs from the Ctrl-C meant for the foreground. */
	if (sigaction(SIGINT, NULL, &old) != 0 || old.sa_handler != SIG_IGN)
		sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return &interrupt_sig;
}

static void finalize_guard(int sig)
{
	(void)sig;
	_exit(exit_status);
}

int lifecycle_finalize(int rc, int peers_lost)
{
	exit_status = rc;
	signal(SIGALRM, finalize_guard);
	alarm(peers_lost ? FINALIZE_GUARD_AFTER_FAILURE_S : FINALIZE_GUARD_S);
	MPI_Finalize();
	alarm(0);
	return rc;
}
