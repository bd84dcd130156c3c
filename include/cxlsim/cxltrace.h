/*
 * cxltrace.h — what a program run under `cxlsim-trace record` may tell the
 * recorder (the Valgrind tool in src/vgtool), and the requests the tool's
 * own pthread wrappers make. A program needs none of this: real programs
 * are traced as they ship. A test program uses CXLTRACE_CHECK to have the
 * replay verify a value, and CXLTRACE_ROI_BEGIN to mark where its region of
 * interest starts when neither the first thread creation nor a function
 * entry (--roi-start FUNC) is right.
 *
 *   CXLTRACE_ROI_BEGIN()                start recording every thread here
 *   CXLTRACE_CHECK(addr, size, value)   a `check` record: the replay loads
 *                                       size bytes at addr and stops the run
 *                                       unless they hold value
 *
 * Outside Valgrind these are Valgrind client requests, which do nothing
 * and cost a few instructions (valgrind.h); under another Valgrind tool they
 * are ignored.
 *
 * The request codes belong to the tool ('C','X'); the pthread wrappers
 * (src/vgtool/cxltrace_preload.c) bracket each call with SYNC_ENTER and
 * SYNC_LEAVE, so that the library's own loads, stores and atomics (the lock
 * word's CAS, futex bookkeeping) are not recorded: the replay substitutes
 * its own lock, barrier and event words for them.
 */
#ifndef CXLSIM_CXLTRACE_H
#define CXLSIM_CXLTRACE_H

#include <valgrind/valgrind.h>

enum cxltrace_request {
	CXLTRACE_REQ_BASE = VG_USERREQ_TOOL_BASE('C', 'X'),
	CXLTRACE_REQ_SYNC_ENTER,   /* the thread enters a wrapped library call */
	CXLTRACE_REQ_SYNC_LEAVE,   /* ... and leaves it */
	CXLTRACE_REQ_LOCK,         /* arg1: the lock object, acquired */
	CXLTRACE_REQ_UNLOCK,       /* arg1: the lock object, about to be released */
	CXLTRACE_REQ_BARRIER_INIT, /* arg1: barrier, arg2: its count */
	CXLTRACE_REQ_BARRIER,      /* arg1: barrier, about to wait */
	CXLTRACE_REQ_CREATE,       /* the thread is about to create a thread */
	CXLTRACE_REQ_CREATED,      /* arg1: the pthread_t of the thread it created */
	CXLTRACE_REQ_JOINED,       /* arg1: the pthread_t of the thread it joined */
	CXLTRACE_REQ_ROI_BEGIN,    /* CXLTRACE_ROI_BEGIN */
	CXLTRACE_REQ_CHECK,        /* arg1: addr, arg2: size, arg3: value */
};

#define CXLTRACE_ROI_BEGIN() \
	VALGRIND_DO_CLIENT_REQUEST_STMT(CXLTRACE_REQ_ROI_BEGIN, 0, 0, 0, 0, 0)
#define CXLTRACE_CHECK(addr, size, value)                                              \
	VALGRIND_DO_CLIENT_REQUEST_STMT(CXLTRACE_REQ_CHECK, (addr), (size), (value), 0, 0)

#endif /* CXLSIM_CXLTRACE_H */
