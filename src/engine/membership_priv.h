/*
 * membership_priv.h — control messages (comm.c sends and polls them,
 * membership.c interprets them).
 */
#ifndef CXLSIM_MEMBERSHIP_PRIV_H
#define CXLSIM_MEMBERSHIP_PRIV_H

#include <stddef.h>
#include <stdint.h>

struct cxs_engine;

enum ctl_type {
	CTL_PING = 1,   /* are you alive? */
	CTL_PONG,       /* yes */
	CTL_START,      /* I suspect a rank (a): please lead an agreement */
	CTL_QUERY,      /* leader of (round) asks for a report */
	CTL_REPORT,     /* a = w_red; tail: reduction result of window w_red - 1 */
	CTL_REJECT,     /* I promised (round, leader) which beats yours */
	CTL_DECIDE,     /* a = w_star, b = has_result; tail: dead bits, result */
	CTL_ACK,
	CTL_COMMIT,
	CTL_EXCLUDED,   /* the survivors have excluded you: stop */
	CTL_GONE,       /* I was excluded while alive and stop now (for the failure's cause) */
	CTL_INTERRUPT,  /* a = signal: a parked rank was interrupted (reduce_shm.c, "Parking") */
};

/* Fixed header of every control message; a tail of uint64_t words may follow. */
struct ctl_hdr {
	uint32_t type;
	uint32_t from;
	uint64_t round;
	uint32_t leader;
	uint32_t pad;
	uint64_t a, b;
};
_Static_assert(sizeof(struct ctl_hdr) == 40, "control header is 40 bytes on the wire");

void ctl_send(struct cxs_engine *e, int dst, const struct ctl_hdr *h, const uint64_t *tail,
	      size_t ntail);
/* One pending control message (malloc'd, caller frees), or 0 when none. */
int ctl_poll(struct cxs_engine *e, void **msg, int *len, int *src);
void ctl_release_all(void);
/* Progresses pending control sends until none is left or `seconds` have passed. */
void ctl_flush(struct cxs_engine *e, double seconds);
#define GONE_FLUSH_S 0.05
/* A rank told us it was excluded while alive: its failure's cause is "excluded". */
void membership_note_gone(struct cxs_engine *e, int src);
void comm_backoff(struct cxs_engine *e, unsigned *polls, long *sleep_ns);

#endif /* CXLSIM_MEMBERSHIP_PRIV_H */
