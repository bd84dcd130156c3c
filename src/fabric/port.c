/*
 * port.c — one node's CXL port: the two directions of its link to the switch.
 *
 * State is two timestamps, the instant each direction's link is next idle,
 * and the counters registered at init. Each direction is a FIFO served at the
 * link rate, so a queue is fully described by when its last message finishes:
 *
 *            egress_free                     ingress_free
 *   node ──[ egress  link ]──► switch ──[ ingress link ]──► node
 *            sender's timeline               receiver's timeline
 *
 * Sender (cxs_port_send, at `now`):
 *   start = max(now, egress_free), egress_free = start + ser
 *   delay = (start - now) + ser + link + switch + link
 * The flight is charged here and only here; the receiver gets the message at
 * now + delay, the instant its tail reaches the switch's output port towards
 * it, and never adds the flight again.
 *
 * Receiver (cxs_port_receive, at `arrival`), cut-through as fabric.h explains:
 *   done = max(arrival, ingress_free + ser), ingress_free = done
 * On an idle link done == arrival: the output link carried the message while
 * its tail was still coming in. Behind a busy link, the message starts when
 * the link frees and finishes ser later, so messages arriving together leave
 * ser apart, which is what bounds a node's receive bandwidth (an MN answering
 * 16 CNs, a Logging Unit taking REPLs from three writers).
 *
 * Counters (component "port"): busy_ps adds ser per message in each direction,
 * so busy / elapsed is link utilisation; wait_ps adds the time a message spent
 * behind earlier ones (start - now on egress, done - arrival on ingress), so
 * wait / messages is the mean queueing delay. tx_<type> counts messages per
 * type and tx/rx_bytes_<class> counts wire bytes per class; received messages
 * are not counted per type, since every received message was counted as sent
 * by some port and the per-type totals would only double.
 *
 * Invariant: egress_free and ingress_free never decrease. Times stay far from
 * 2^64 ps (213 days) as long as ser does, i.e. for any bandwidth >= 256 B/s.
 */
#include "cxlsim/fabric.h"

#include <stdio.h>
#include <string.h>

#define COMPONENT "port"

/* Registers the counter <prefix><what>; NULL if the name is too long or registration fails. */
static uint64_t *reg(struct cxs_stats *st, const char *prefix, const char *what,
		     const char *unit, const char *desc)
{
	char name[CXS_STATS_NAME_MAX + 1];
	int n = snprintf(name, sizeof(name), "%s%s", prefix, what);

	if (n < 0 || (size_t)n >= sizeof(name))
		return NULL;
	return cxs_stats_counter(st, COMPONENT, name, unit, desc);
}

int cxs_port_init(struct cxs_port *port, struct cxs_stats *st)
{
	char desc[128];

	memset(port, 0, sizeof(*port));
	for (int t = 0; t < CXS_MSG_TYPE_COUNT; t++) {
		const char *name = cxs_msg_info((enum cxs_msg_type)t)->name;

		snprintf(desc, sizeof(desc), "messages of type %s sent", name);
		port->tx_msgs[t] = reg(st, "tx_", name, "messages", desc);
		if (!port->tx_msgs[t])
			return -1;
	}
	for (int c = 0; c < CXS_CLASS_COUNT; c++) {
		const char *cls = cxs_msg_class_name((enum cxs_msg_class)c);

		snprintf(desc, sizeof(desc), "bytes on the wire of class %s sent", cls);
		port->tx_bytes[c] = reg(st, "tx_bytes_", cls, "bytes", desc);
		snprintf(desc, sizeof(desc), "bytes on the wire of class %s received", cls);
		port->rx_bytes[c] = reg(st, "rx_bytes_", cls, "bytes", desc);
		if (!port->tx_bytes[c] || !port->rx_bytes[c])
			return -1;
	}
	port->egress_busy_ps = cxs_stats_counter(st, COMPONENT, "egress_busy_ps", "ps",
						 "time the link towards the switch was transmitting");
	port->ingress_busy_ps = cxs_stats_counter(st, COMPONENT, "ingress_busy_ps", "ps",
						  "time the link from the switch was transmitting");
	port->egress_wait_ps = cxs_stats_counter(st, COMPONENT, "egress_wait_ps", "ps",
						 "time sent messages waited behind earlier ones");
	port->ingress_wait_ps = cxs_stats_counter(st, COMPONENT, "ingress_wait_ps", "ps",
						  "time received messages waited behind earlier ones");
	if (!port->egress_busy_ps || !port->ingress_busy_ps || !port->egress_wait_ps ||
	    !port->ingress_wait_ps)
		return -1;
	return 0;
}

cxs_time cxs_port_send(struct cxs_port *port, const struct cxs_fabric_params *p, cxs_time now,
		       enum cxs_msg_type t)
{
	return cxs_port_send_bytes(port, p, now, t, cxs_msg_info(t)->wire_bytes);
}

cxs_time cxs_port_send_bytes(struct cxs_port *port, const struct cxs_fabric_params *p,
			     cxs_time now, enum cxs_msg_type t, uint32_t bytes)
{
	const struct cxs_msg_info *info = cxs_msg_info(t);
	cxs_time ser = cxs_fabric_ser(p, bytes);
	cxs_time start = now > port->egress_free ? now : port->egress_free;

	port->egress_free = start + ser;
	++*port->tx_msgs[t];
	*port->tx_bytes[info->cls] += bytes;
	*port->egress_busy_ps += ser;
	*port->egress_wait_ps += start - now;
	return (start - now) + ser + cxs_fabric_min_latency(p);
}

cxs_time cxs_port_receive(struct cxs_port *port, const struct cxs_fabric_params *p,
			  cxs_time arrival, enum cxs_msg_type t)
{
	return cxs_port_receive_bytes(port, p, arrival, t, cxs_msg_info(t)->wire_bytes);
}

cxs_time cxs_port_receive_bytes(struct cxs_port *port, const struct cxs_fabric_params *p,
				cxs_time arrival, enum cxs_msg_type t, uint32_t bytes)
{
	const struct cxs_msg_info *info = cxs_msg_info(t);
	cxs_time ser = cxs_fabric_ser(p, bytes);
	cxs_time behind = port->ingress_free + ser;
	cxs_time done = arrival > behind ? arrival : behind;

	port->ingress_free = done;
	*port->rx_bytes[info->cls] += bytes;
	*port->ingress_busy_ps += ser;
	*port->ingress_wait_ps += done - arrival;
	return done;
}
