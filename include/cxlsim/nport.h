/*
 * nport.h — the node port: how every node type puts messages on the CXL
 * fabric, and how a message that arrives reaches the agent that handles it.
 *
 * Every message between nodes travels as one engine event whose payload is an
 * envelope followed by the message's body:
 *
 *   | envelope (16 bytes)                            | body (len bytes)        |
 *   | type | flags | ev | src | dst | wire_bytes     | struct cxs_coh_msg, ... |
 *
 * type is the fabric's message type (fabric.h): its class and its default size
 * on the wire come from the one registry, so traffic is counted per type and
 * class whoever sends it. wire_bytes overrides the registry's size for
 * messages sized by their fields (a REPL of three coalesced words, a recovery
 * reply with its lines); 0 takes the registry's. ev is the engine event type
 * the message travels as: a node type's own numbering of its events, so that
 * its event function can tell a message from a local event (and the event
 * digest, which folds the type, stays the model's own). A body larger than an
 * event's inline payload travels out of line with its real bytes (engine.h).
 *
 * Sending (cxs_nport_send at `when` >= now): a message for later is held as a
 * local event (cfg.ev_send) and given to the link at its time, so that each
 * egress link serves messages in time order; then the sender's link adds
 * egress queueing, serialisation and the flight (src/fabric/port.c), plus the
 * class's extra protocol latency (AXLE's CXL.io round trip), and the engine
 * delivers the event at the arrival time.
 *
 * A message to the node itself (a CN that is one of its own line's replicas)
 * never crosses the fabric: it is delivered by a local event cfg.self_latency
 * later and counted in no link counter.
 *
 * Receiving (cxs_nport_arrive, from the node type's event function for an
 * event of a message type): the arrival hook runs (memsys arms its watchdog),
 * the receiver's link adds ingress queueing, and the message is dispatched at
 * once, or by a local event (cfg.ev_deliver, handed to cxs_nport_deliver) at
 * the time its tail is in. Dispatch is by type if an agent registered for the
 * type, else by class (coherence agent, replication, Logging Unit, recovery,
 * AXLE's CXL.io and DMA); a message nobody registered for is a bug that stops
 * the run with rank, time and file:line.
 *
 * The port lives in the fabric module so that every module that defines node
 * types (mem, core, diktamo, axle, node) can use it: DESIGN.md's dependency
 * order puts the fabric to the left of all of them.
 */
#ifndef CXLSIM_NPORT_H
#define CXLSIM_NPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "cxlsim/engine.h"
#include "cxlsim/fabric.h"

struct cxs_envelope {
	uint8_t type;        /* enum cxs_msg_type */
	uint8_t flags;       /* none defined yet: 0 */
	uint16_t ev;         /* engine event type the message travels as */
	uint32_t src, dst;   /* node ids */
	uint32_t wire_bytes; /* on the wire; 0: the registry's size for type */
};
_Static_assert(sizeof(struct cxs_envelope) == 16, "the envelope is 16 bytes");
_Static_assert(CXS_MSG_TYPE_COUNT <= 256, "message types fit the envelope's type byte");

/* An agent's handler: the message arrived completely at `now`. */
typedef void cxs_nport_fn(void *ctx, cxs_time now, const struct cxs_envelope *env,
			  const void *body, uint32_t len);

/* What a node type fixes for its ports; shared read-only by all its nodes. */
struct cxs_nport_cfg {
	const struct cxs_fabric_params *fab;
	cxs_time class_extra[CXS_CLASS_COUNT]; /* extra one-way latency per class */
	uint32_t ev_deliver;  /* engine event type of a message held by ingress queueing */
	uint32_t ev_send;     /* engine event type of a message sent for a later time */
	int drop_type;        /* fault injection: lose the first message of this type sent; -1 none */
	const char *drop_key; /* the key that asked for it, for the log line */
	cxs_time self_latency; /* a message to the node itself (its own Logging Unit): delivered
				  by a local event after this, never on the fabric */
	cxs_time jitter[CXS_CLASS_COUNT]; /* adaptive routing: up to this much extra flight,
					     drawn per message (deterministic); classes whose
					     order the protocols rely on keep 0 */
};

struct cxs_nport_handler {
	cxs_nport_fn *fn;
	void *ctx;
};

struct cxs_nport {
	struct cxs_lp *lp;
	const struct cxs_nport_cfg *cfg;
	struct cxs_port link;
	struct cxs_nport_handler by_class[CXS_CLASS_COUNT];
	struct cxs_nport_handler by_type[CXS_MSG_TYPE_COUNT];
	void (*on_arrival)(void *ctx); /* optional: every arriving message, first */
	void *arrival_ctx;
	bool dropped;                  /* drop_type already applied */
	uint64_t jitter_seq;           /* messages jittered so far (the draw's input) */
};

/* Registers the link's counters in the node's statistics. 0, or -1 (out of memory). */
int cxs_nport_init(struct cxs_nport *np, struct cxs_lp *lp, const struct cxs_nport_cfg *cfg);
void cxs_nport_on_class(struct cxs_nport *np, enum cxs_msg_class cls, cxs_nport_fn *fn, void *ctx);
void cxs_nport_on_type(struct cxs_nport *np, enum cxs_msg_type type, cxs_nport_fn *fn, void *ctx);

/*
 * Sends a message of `type` with `len` body bytes to dst at `when` (>= now),
 * travelling as engine event `ev`. wire_bytes 0: the registry's size.
 */
void cxs_nport_send(struct cxs_nport *np, cxs_time when, uint32_t ev, uint32_t dst,
		    enum cxs_msg_type type, const void *body, uint32_t len, uint32_t wire_bytes);

/* The node type's event function hands these over: */
void cxs_nport_arrive(struct cxs_nport *np, const struct cxs_event *ev);  /* a message type */
void cxs_nport_deliver(struct cxs_nport *np, const struct cxs_event *ev); /* cfg->ev_deliver */
void cxs_nport_send_held(struct cxs_nport *np, const struct cxs_event *ev); /* cfg->ev_send */

/* The envelope and body of a message event. */
static inline const struct cxs_envelope *cxs_nport_envelope(const struct cxs_event *ev)
{
	return (const struct cxs_envelope *)cxs_event_data(ev);
}
static inline const void *cxs_nport_body(const struct cxs_event *ev)
{
	return (const unsigned char *)cxs_event_data(ev) + sizeof(struct cxs_envelope);
}

#endif /* CXLSIM_NPORT_H */
