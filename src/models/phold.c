/*
 * phold.c — the PHOLD benchmark model (API and semantics in include/cxlsim/phold.h).
 *
 * One LP per node; its state is four counters in the node's registry,
 * component "phold":
 *
 *     events_handled  events this LP handled
 *     sent_self       events it created for itself (the start event included)
 *     sent_remote     events it created for another LP
 *     failures_seen   dead nodes announced to it by failure notices
 *
 * sent_self and sent_remote count only events created before the end time,
 * the ones the engine keeps and therefore handles, so in a run without
 * failures the sums over all LPs satisfy
 *
 *     sum(events_handled) = sum(sent_self + sent_remote)
 *
 * which a test can check. A remote draw that lands on the LP itself is a self
 * event (cxs_schedule) and counts as sent_self.
 *
 * Randomness: per event, one uniform draw decides remote or not, a second
 * (remote only) picks the destination, one exponential draw the delay — the
 * order of ROSS's phold_event_handler. The start event draws only the delay.
 * All draws come from the node's own stream, so the event sequence of every
 * LP depends on nothing but (seed, node id, events received): identical at
 * any rank count and mapping.
 *
 * Failures. The failure callback (run at the agreed simulated failure time)
 * records the dead nodes in the LP's own bitmap, and from then on a remote
 * destination is drawn again until it is a live node, so the survivors keep
 * the full load instead of losing every event chain that reaches a dead
 * node. Because the LP learns of a death only through its own callback, at a
 * simulated time, the redraws are as deterministic as everything else.
 * Events already in flight to a dead node are dropped by the engine.
 */
#include "cxlsim/phold.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxlsim/model.h"
#include "cxlsim/stats.h"

enum { PHOLD_EV = 1 }; /* the only event type; it carries no payload */

struct phold {
	uint64_t *events_handled;
	uint64_t *sent_self;
	uint64_t *sent_remote;
	uint64_t *failures_seen;
	uint64_t *failure_notices;
	uint64_t *dead;    /* bitmap over node ids; NULL until the first failure */
	uint32_t ndead;
};

static bool is_dead(const struct phold *s, uint32_t node)
{
	return s->dead != NULL && (s->dead[node / 64] >> (node % 64) & 1);
}

/*
 * Bounds: a delay must be at least 1 ps to be representable, and 1e12 units
 * (1e18 ps, 11.6 days) keeps lookahead + mean far below 2^64 ps (213 days), so
 * the conversions below cannot overflow.
 */
const struct cxs_cfg_key cxs_phold_keys[] = {
	{ .section = "phold", .key = "mean", .type = CXS_CFG_DOUBLE, .def = "1.0",
	  .doc = "Mean delay from an event to the event it creates, lookahead included, in "
		 "time units (1 unit = 1 us; ROSS's --mean). Must be at least phold.lookahead.",
	  .min = 1e-6, .max = 1e12 },
	{ .section = "phold", .key = "lookahead", .type = CXS_CFG_DOUBLE, .def = "0.1",
	  .doc = "Minimum delay of every event, in time units (1 unit = 1 us; ROSS's "
		 "--lookahead); also the engine's lookahead (engine.lookahead, if set, must "
		 "equal it).",
	  .min = 1e-6, .max = 1e12 },
	{ .section = "phold", .key = "remote", .type = CXS_CFG_DOUBLE, .def = "0.25",
	  .doc = "Probability that a new event goes to an LP drawn uniformly from all LPs "
		 "(itself included) rather than to itself (ROSS's --remote).",
	  .min = 0.0, .max = 1.0 },
	{ .section = "phold", .key = "lps", .type = CXS_CFG_UINT, .def = "16",
	  .doc = "Number of PHOLD LPs, one per simulated node, spread over the MPI ranks.",
	  .min = 1, .max = 4294967294.0 /* UINT32_MAX is CXS_SRC_ENGINE */ },
};

static const struct cxs_node_type *phold_type_of(uint32_t node, void *ctx);

/* Rounds a non-negative number of units (at most 1e12, checked by the key table) to ps. */
static cxs_time units_to_ps(double units)
{
	return (cxs_time)llround(units * (double)CXS_PHOLD_PS_PER_UNIT);
}

int cxs_phold_configure(const struct cxs_config *cfg, struct cxs_phold_params *out, char *err,
			size_t errlen)
{
	double mean = cxs_config_double(cfg, "phold", "mean");
	double lookahead = cxs_config_double(cfg, "phold", "lookahead");
	struct cxs_phold_params p = {
		.lps = (uint32_t)cxs_config_uint(cfg, "phold", "lps"),
		.lookahead_ps = units_to_ps(lookahead),
		.mean_ps = units_to_ps(mean),
		.remote = cxs_config_double(cfg, "phold", "remote"),
	};

	if (p.mean_ps < p.lookahead_ps) {
		snprintf(err, errlen,
			 "%s: phold.mean: %g is below phold.lookahead = %g (from %s); the mean "
			 "delay includes the lookahead",
			 cxs_config_origin(cfg, "phold", "mean"), mean, lookahead,
			 cxs_config_origin(cfg, "phold", "lookahead"));
		return -1;
	}
	*out = p;
	return 0;
}

static int phold_configure(const struct cxs_config *cfg, struct cxs_model_run *out, char *err,
			   size_t errlen)
{
	struct cxs_phold_params *p = malloc(sizeof *p);

	if (p == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (cxs_phold_configure(cfg, p, err, errlen) != 0) {
		free(p);
		return -1;
	}
	*out = (struct cxs_model_run){ .ctx = p, .nnodes = p->lps, .lookahead = p->lookahead_ps,
				       .lookahead_section = "phold", .lookahead_key = "lookahead",
				       .type_of = phold_type_of,
				       .end_time = (cxs_time)5 * 1000 * 1000 * 1000 /* ROSS's 5000 us */ };
	return 0;
}

/*
 * lookahead + Exp(mean - lookahead), rounded to the nearest ps. A draw too
 * large for 63 bits is capped there: such an event lies past any end time.
 */
static cxs_time draw_delay(struct cxs_lp *lp)
{
	const struct cxs_phold_params *params = cxs_lp_ctx(lp);
	double x = 0.0;

	if (params->mean_ps > params->lookahead_ps)
		x = cxs_rand_exp(lp, (double)(params->mean_ps - params->lookahead_ps));
	if (!(x < 0x1p63))
		return params->lookahead_ps + (UINT64_C(1) << 63);
	return params->lookahead_ps + (cxs_time)(x + 0.5);
}

/* Whether an event created now with this delay survives the end-time cut. */
static bool before_end(const struct cxs_lp *lp, cxs_time delay)
{
	cxs_time now = cxs_now(lp), end = cxs_end_time(lp);

	return now < end && delay < end - now;
}

static int phold_init(struct cxs_lp *lp, void *state)
{
	struct phold *s = state;
	struct cxs_stats *st = cxs_lp_stats(lp);
	const struct cxs_phold_params *params = cxs_lp_ctx(lp);
	cxs_time delay;

	if (params == NULL)
		cxs_bug(lp, "phold: the run has no PHOLD instance (configure was not called)");
	/* the engine may be more conservative than the model, never less */
	if (cxs_lookahead(lp) > params->lookahead_ps)
		cxs_bug(lp, "phold: engine lookahead %llu ps exceeds phold.lookahead %llu ps",
			(unsigned long long)cxs_lookahead(lp),
			(unsigned long long)params->lookahead_ps);

	s->events_handled = cxs_stats_counter(st, "phold", "events_handled", "events",
					      "PHOLD events this LP handled");
	s->sent_self = cxs_stats_counter(st, "phold", "sent_self", "events",
					 "events this LP created for itself before the end time, "
					 "the start event included");
	s->sent_remote = cxs_stats_counter(st, "phold", "sent_remote", "events",
					   "events this LP created for another LP before the end time");
	s->failures_seen = cxs_stats_counter(st, "phold", "failures_seen", "nodes",
					     "dead nodes announced to this LP by failure notices");
	s->failure_notices = cxs_stats_counter(st, "phold", "failure_notices", "notices",
					       "failure callbacks this LP received (one per agreed decision)");
	if (s->events_handled == NULL || s->sent_self == NULL || s->sent_remote == NULL ||
	    s->failures_seen == NULL || s->failure_notices == NULL)
		cxs_bug(lp, "phold: cannot register counters");

	delay = draw_delay(lp);
	if (before_end(lp, delay))
		(*s->sent_self)++;
	cxs_schedule(lp, delay, PHOLD_EV, NULL, 0);
	return 0;
}

static void phold_event(struct cxs_lp *lp, void *state, const struct cxs_event *ev)
{
	struct phold *s = state;
	const struct cxs_phold_params *params = cxs_lp_ctx(lp);
	uint32_t self = cxs_lp_id(lp), n = cxs_lp_count(lp), dst = self;
	cxs_time delay;
	bool kept;

	(void)ev;
	(*s->events_handled)++;
	if (cxs_rand_unif(lp) < params->remote) {
		/* Redraw over dead nodes; the LP itself is alive, so this ends. */
		do {
			dst = (uint32_t)(cxs_rand_unif(lp) * (double)n);
			if (dst >= n) /* u * n can round up to n when n is near 2^32 */
				dst = n - 1;
		} while (is_dead(s, dst));
	}
	delay = draw_delay(lp);
	kept = before_end(lp, delay);
	if (dst == self) {
		*s->sent_self += kept;
		cxs_schedule(lp, delay, PHOLD_EV, NULL, 0);
	} else {
		*s->sent_remote += kept;
		cxs_send(lp, dst, delay, PHOLD_EV, NULL, 0);
	}
}

static void phold_failure(struct cxs_lp *lp, void *state, const struct cxs_failure_notice *f)
{
	struct phold *s = state;
	uint32_t n = cxs_lp_count(lp);
	const uint32_t *dead_nodes = f->nodes;
	size_t ndead = f->n;

	if (s->dead == NULL) {
		s->dead = calloc((n + 63) / 64, sizeof(*s->dead));
		if (s->dead == NULL)
			cxs_bug(lp, "phold: out of memory for the dead-node bitmap");
	}
	for (size_t i = 0; i < ndead; i++) {
		if (dead_nodes[i] >= n || is_dead(s, dead_nodes[i]))
			continue;
		s->dead[dead_nodes[i] / 64] |= UINT64_C(1) << (dead_nodes[i] % 64);
		s->ndead++;
	}
	*s->failures_seen += ndead;
	(*s->failure_notices)++;
}

/* FNV-1a over the counters, little-endian, so the digest is the same on any host. */
static uint64_t phold_snapshot(struct cxs_lp *lp, const void *state)
{
	const struct phold *s = state;
	const uint64_t vals[] = { *s->events_handled, *s->sent_self, *s->sent_remote,
				  *s->failures_seen };
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	(void)lp;
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		for (int b = 0; b < 8; b++)
			h = (h ^ ((vals[i] >> (8 * b)) & 0xff)) * UINT64_C(0x100000001b3);
	return h;
}

/* The counters belong to the node's registry; only the bitmap is ours. */
static void phold_finalize(struct cxs_lp *lp, void *state)
{
	struct phold *s = state;

	(void)lp;
	free(s->dead);
	s->dead = NULL;
}

static const struct cxs_node_type phold_type = {
	.name = "phold",
	.state_size = sizeof(struct phold),
	.init = phold_init,
	.event = phold_event,
	.failure = phold_failure,
	.snapshot = phold_snapshot,
	.finalize = phold_finalize,
};

static const struct cxs_node_type *phold_type_of(uint32_t node, void *ctx)
{
	(void)node;
	(void)ctx;
	return &phold_type;
}

static const struct cxs_key_table phold_keys = CXS_KEY_TABLE(cxs_phold_keys);
static const struct cxs_key_table *const phold_tables[] = { &phold_keys, NULL };

const struct cxs_model cxs_phold_model = {
	.name = "phold",
	.doc = "ROSS's PHOLD benchmark of the engine: one LP per node",
	.keys = phold_tables,
	.configure = phold_configure,
	.release = free,
};
