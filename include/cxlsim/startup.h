/*
 * startup.h — the ranks meet before the run, with a bound (src/engine/startup.c).
 *
 * Until every rank has reached the run, nothing survives a death: there is no
 * engine yet to notice it. So the start is one bounded exchange instead of
 * collectives that wait for ever: every rank brings its verdict on the command
 * line and configuration and a hash of what it read, and waits for all the
 * others for at most a bound after its own arrival. A rank that never comes
 * (killed, stuck) is named, and every rank that did come stops non-zero.
 */
#ifndef CXLSIM_STARTUP_H
#define CXLSIM_STARTUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit status of a rank whose job could not start: some rank never arrived. */
#define CXS_EXIT_STARTUP 69
/* Wall-clock seconds of the bound, CXLSIM_STARTUP_TIMEOUT (default 60). */
#define CXS_STARTUP_TIMEOUT_ENV "CXLSIM_STARTUP_TIMEOUT"
#define CXS_STARTUP_TIMEOUT_DEFAULT_S 60.0
#define CXS_STARTUP_MSG_MAX 512

enum cxs_startup_verdict {
	CXS_START_OK,      /* everyone came, nobody failed, the same configuration everywhere */
	CXS_START_FAILED,  /* `rank` (the lowest that failed) said `msg` */
	CXS_START_DIFFERS, /* `rank` (the lowest) read another configuration than the first */
	CXS_START_MISSING, /* `msg` lists the ranks that never arrived within the bound */
};

struct cxs_startup_result {
	enum cxs_startup_verdict verdict;
	int rank;
	bool speaker;      /* this rank prints the one line (the lowest rank present) */
	char msg[CXS_STARTUP_MSG_MAX];
};

/* The bound from the environment: CXLSIM_STARTUP_TIMEOUT seconds, or the default. */
double cxs_startup_timeout_s(void);

/*
 * Between MPI_Init and the engine, on every rank. failed/msg: this rank's
 * verdict; hash: of what it read (compared with the lowest present rank's).
 * Waits at most bound_s after the call for the other ranks. Uses only
 * point-to-point messages that cannot block, so a dead peer costs the bound,
 * never a hang.
 */
void cxs_startup_agree(bool failed, const char *msg, uint64_t hash, double bound_s,
		       struct cxs_startup_result *out);

#endif /* CXLSIM_STARTUP_H */
