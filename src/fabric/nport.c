/*
 * nport.c — the node port (design in include/cxlsim/nport.h).
 *
 * Order of engine calls, which the event digest sees and which therefore must
 * not change: a send for later schedules cfg.ev_send first and nothing else;
 * an immediate send calls cxs_send once. An arrival runs the arrival hook
 * (which may schedule: memsys's watchdog), then either schedules
 * cfg.ev_deliver or dispatches at once.
 */
#include "cxlsim/nport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cxs_nport_init(struct cxs_nport *np, struct cxs_lp *lp, const struct cxs_nport_cfg *cfg)
{
	memset(np, 0, sizeof *np);
	np->lp = lp;
	np->cfg = cfg;
	return cxs_port_init(&np->link, cxs_lp_stats(lp));
}

void cxs_nport_on_class(struct cxs_nport *np, enum cxs_msg_class cls, cxs_nport_fn *fn, void *ctx)
{
	np->by_class[cls] = (struct cxs_nport_handler){fn, ctx};
}

void cxs_nport_on_type(struct cxs_nport *np, enum cxs_msg_type type, cxs_nport_fn *fn, void *ctx)
{
	np->by_type[type] = (struct cxs_nport_handler){fn, ctx};
}

static uint32_t wire_size(const struct cxs_envelope *env)
{
	return env->wire_bytes ? env->wire_bytes : cxs_msg_info(env->type)->wire_bytes;
}

/* Puts an assembled message (envelope + body) on the link now. */
static void transmit(struct cxs_nport *np, const void *msg, uint32_t size)
{
	const struct cxs_envelope *env = msg;
	const struct cxs_nport_cfg *cfg = np->cfg;
	cxs_time now = cxs_now(np->lp);
	if (cfg->drop_type >= 0 && env->type == (uint32_t)cfg->drop_type && !np->dropped) {
		/* Fault injection for the deadlock tests: this message is lost. */
		np->dropped = true;
		cxs_log(CXS_LOG_WARN, now, "node %u: dropping %s to node %u (%s)", env->src,
			cxs_msg_info(env->type)->name, env->dst,
			cfg->drop_key ? cfg->drop_key : "fault injection");
		return;
	}
	const struct cxs_msg_info *info = cxs_msg_info(env->type);
	cxs_time flight = cxs_port_send_bytes(&np->link, cfg->fab, now, env->type, wire_size(env));
	cxs_time extra = cfg->class_extra[info->cls];
	if (cfg->jitter[info->cls]) {
		/* splitmix64 of (node, message count): the same draws at any rank count */
		uint64_t z = ((uint64_t)env->src << 40) + ++np->jitter_seq + UINT64_C(0x9e3779b97f4a7c15);
		z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
		z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
		z ^= z >> 31;
		extra += z % (cfg->jitter[info->cls] + 1);
	}
	cxs_send(np->lp, env->dst, flight + extra, env->ev, msg, size);
}

void cxs_nport_send(struct cxs_nport *np, cxs_time when, uint32_t ev, uint32_t dst,
		    enum cxs_msg_type type, const void *body, uint32_t len, uint32_t wire_bytes)
{
	struct cxs_envelope env = {.type = (uint8_t)type, .ev = (uint16_t)ev,
				   .src = cxs_lp_id(np->lp), .dst = dst, .wire_bytes = wire_bytes};
	unsigned char small[CXS_EVENT_PAYLOAD_MAX];
	uint32_t size = (uint32_t)sizeof env + len;
	if (ev > UINT16_MAX || (unsigned)type >= CXS_MSG_TYPE_COUNT)
		cxs_bug(np->lp, "message type %u as event %u: out of range", (unsigned)type, ev);
	unsigned char *msg = size <= sizeof small ? small : malloc(size);
	if (!msg)
		cxs_bug(np->lp, "out of memory for a message of %u bytes", size);
	memcpy(msg, &env, sizeof env);
	if (len)
		memcpy(msg + sizeof env, body, len);
	cxs_time now = cxs_now(np->lp);
	if (dst == cxs_lp_id(np->lp)) {
		/* To itself: inside the node, never on the fabric. */
		cxs_schedule(np->lp, (when > now ? when - now : 0) + np->cfg->self_latency,
			     np->cfg->ev_deliver, msg, size);
	} else if (when > now) {
		/* Held until its time, so each egress link serves messages in time order. */
		cxs_schedule(np->lp, when - now, np->cfg->ev_send, msg, size);
	} else {
		transmit(np, msg, size);
	}
	if (msg != small)
		free(msg);
}

void cxs_nport_send_held(struct cxs_nport *np, const struct cxs_event *ev)
{
	transmit(np, cxs_event_data(ev), ev->size);
}

static void dispatch(struct cxs_nport *np, cxs_time now, const struct cxs_event *ev)
{
	const struct cxs_envelope *env = cxs_nport_envelope(ev);
	const struct cxs_nport_handler *h = &np->by_type[env->type];
	if (!h->fn)
		h = &np->by_class[cxs_msg_info(env->type)->cls];
	if (!h->fn)
		cxs_bug(np->lp, "node %u got %s (class %s) from node %u, which nothing here handles",
			cxs_lp_id(np->lp), cxs_msg_info(env->type)->name,
			cxs_msg_class_name(cxs_msg_info(env->type)->cls), env->src);
	h->fn(h->ctx, now, env, cxs_nport_body(ev), ev->size - (uint32_t)sizeof *env);
}

void cxs_nport_arrive(struct cxs_nport *np, const struct cxs_event *ev)
{
	const struct cxs_envelope *env = cxs_nport_envelope(ev);
	if (ev->size < sizeof *env || env->type >= CXS_MSG_TYPE_COUNT)
		cxs_bug(np->lp, "event %u of %u bytes is not a message", ev->type, ev->size);
	if (np->on_arrival)
		np->on_arrival(np->arrival_ctx);
	cxs_time done = cxs_port_receive_bytes(&np->link, np->cfg->fab, ev->time, env->type,
					       wire_size(env));
	if (done > ev->time) {
		cxs_schedule(np->lp, done - ev->time, np->cfg->ev_deliver, cxs_event_data(ev),
			     ev->size);
		return;
	}
	dispatch(np, ev->time, ev);
}

void cxs_nport_deliver(struct cxs_nport *np, const struct cxs_event *ev)
{
	dispatch(np, ev->time, ev);
}
