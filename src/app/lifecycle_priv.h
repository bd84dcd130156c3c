/*
 * lifecycle_priv.h — the cxlsim process around the run (lifecycle.c): the
 * start-up watchdog, the status files the launch wrapper reads, and the
 * guard on MPI_Finalize.
 */
#ifndef CXLSIM_LIFECYCLE_PRIV_H
#define CXLSIM_LIFECYCLE_PRIV_H

#include <signal.h>

/* Before MPI_Init: writes started-R and arms the watchdog on MPI_Init. */
void lifecycle_before_init(void);
/* After MPI_Init returned: disarms it. */
void lifecycle_after_init(void);
/* This rank has come to the meeting before the run (startup.h): writes arrived-R. */
void lifecycle_arrived(int rank);
/*
 * From now on SIGINT and SIGTERM ask the run to stop: the first sets the
 * returned flag (the signal number), which the engine reads every window; a
 * second ends the process at once, removing a half-written output file.
 */
const volatile sig_atomic_t *lifecycle_catch_interrupts(void);
/* Writes this rank's exit status for the wrapper (rank-R). */
void lifecycle_report_status(int rank, int rc);
/*
 * MPI_Finalize, then returns rc; if finalize hangs (it can wait for a dead
 * rank), the process ends with rc after a few seconds (peers_lost) or a minute.
 */
int lifecycle_finalize(int rc, int peers_lost);

#endif /* CXLSIM_LIFECYCLE_PRIV_H */
