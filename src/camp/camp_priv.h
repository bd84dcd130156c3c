/*
 * camp_priv.h — what the readers of src/camp share (camp.h is the contract).
 */
#ifndef CXLSIM_CAMP_PRIV_H
#define CXLSIM_CAMP_PRIV_H

#include "cxlsim/camp.h"

/* The event a bare perf name stands for (case-insensitive), or CAMP_NEV. */
enum camp_ev camp_ev_lookup(const char *perf_name);

/* Adds v to a counted event (a line of perf output, a core's counter). */
static inline void camp_add(struct camp_counts *c, enum camp_ev e, double v)
{
	if (c->state[e] == CAMP_ABSENT)
		c->state[e] = CAMP_COUNTED;
	c->v[e] += v;
}

#endif /* CXLSIM_CAMP_PRIV_H */
