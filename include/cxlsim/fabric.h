/*
 * fabric.h — the CXL switch, its links, and the registry of message types.
 *
 * Topology: one switch; every node (CN or MN) has one full-duplex link to it.
 * A message of B bytes (header + payload, counted on the wire) sent at t:
 *
 *   sender's link   start = max(t, egress_free); egress_free = start + ser(B)
 *   flight          link + switch + link latency
 *   tail arrives    arrival = start + ser(B) + flight   (what cxs_port_send returns,
 *                                                        as a delay from t)
 *   receiver's link done = max(arrival, ingress_free + ser(B)); ingress_free = done
 *
 * The switch forwards cut-through: the head of a message leaves for the
 * receiver while its tail is still coming in, so on an idle path the second
 * link's serialisation overlaps the first and a message is complete at the
 * receiver when its tail arrives (done == arrival). Only when the receiver's
 * link (the switch's output port towards it) is still busy with earlier
 * messages does a message wait: it then streams out in the ser(B) after the
 * link frees. Counting ser(B) on both links (store and forward) would put an
 * idle request + data round trip at 201.5 ns instead of DIKTAMO's 200 ns.
 *
 * The sender models its egress queue and the flight; the receiver, when the
 * message arrives, models its ingress queue. Both halves need only the node's
 * own state, so the model works with the nodes spread over MPI ranks, the
 * flight is charged once (by the sender), and the minimum one-way latency
 * (cxs_fabric_min_latency: 2 x link + switch, zero serialisation) is a valid
 * engine lookahead. Serialisation time is rounded up to whole ps.
 *
 * Defaults (cxs_fabric_default), DIKTAMO Table II: 200 ns network round trip
 * including a 20 ns directory lookup, so 90 ns one way (40 + 10 + 40);
 * 4 TB/s aggregate over 32 ports (16 CNs + 16 MNs) = 125 GB/s per link and
 * direction, i.e. 8 ps per byte, 128 ps for a 16-byte request and 640 ps for
 * an 80-byte data message. An idle GETS + DATA round trip with the 20 ns
 * lookup is therefore 200.768 ns.
 *
 * Message registry: every message type has a name, a class and a default size
 * on the wire (the sizes and why are in src/fabric/fabric.c); a message sized by
 * its fields (a REPL of several coalesced words) says its own size. Traffic is
 * counted per port, in messages per type and bytes per class. How node types
 * send and receive through their port: include/cxlsim/nport.h.
 */
#ifndef CXLSIM_FABRIC_H
#define CXLSIM_FABRIC_H

#include <stdint.h>

#include "cxlsim/config.h"
#include "cxlsim/engine.h"
#include "cxlsim/model.h"
#include "cxlsim/stats.h"

enum cxs_msg_class {
	CXS_CLASS_MEM = 0,   /* CXL.mem coherence */
	CXS_CLASS_IO,        /* CXL.io: mailbox, MMIO, MSI */
	CXS_CLASS_DMA,       /* CXL.io posted writes of a DMA engine (AXLE back-streaming) */
	CXS_CLASS_REPL,      /* DIKTAMO replication and log dumps */
	CXS_CLASS_RECOVERY,  /* DIKTAMO recovery (§V) */
	CXS_CLASS_COUNT
};

enum cxs_msg_type {
	/* CXL.mem, CN -> MN */
	CXS_MSG_GETS = 0, CXS_MSG_GETM, CXS_MSG_PUTM, CXS_MSG_PUTE, CXS_MSG_INV_ACK,
	CXS_MSG_RECALL_DATA, CXS_MSG_RECALL_ACK,
	/* CXL.mem, MN -> CN */
	CXS_MSG_DATA_S, CXS_MSG_DATA_E, CXS_MSG_DATA_M, CXS_MSG_INV, CXS_MSG_RECALL_S,
	CXS_MSG_RECALL_I, CXS_MSG_PUT_ACK,
	/* CXL.mem write-through (the WT protocol, DIKTAMO §VI): CN -> MN, MN -> CN */
	CXS_MSG_WT, CXS_MSG_WT_ACK,
	/* CXL.io */
	CXS_MSG_MBOX, CXS_MSG_MMIO, CXS_MSG_MSI,
	/* DMA */
	CXS_MSG_DMA_WRITE,
	/* DIKTAMO */
	CXS_MSG_REPL, CXS_MSG_REPL_ACK, CXS_MSG_VAL, CXS_MSG_LOG_DUMP, CXS_MSG_LOG_SYNC,
	/* recovery */
	CXS_MSG_INTERRUPT, CXS_MSG_INTERRUPT_RESP, CXS_MSG_INIT_RECOV, CXS_MSG_FETCH_LATEST,
	CXS_MSG_FETCH_LATEST_RESP, CXS_MSG_INIT_RECOV_RESP, CXS_MSG_RECOV_END,
	CXS_MSG_RECOV_END_RESP,
	/* AXLE: non-coherent CXL.mem (kernel launch, flow control, result loads) */
	CXS_MSG_MEM_RD, CXS_MSG_MEM_RD_DATA, CXS_MSG_MEM_WR, CXS_MSG_MEM_CMP,
	/* AXLE: DMA back-streaming records (CXL.io posted writes) */
	CXS_MSG_DMA_PAYLOAD32, CXS_MSG_DMA_META, CXS_MSG_DMA_TAIL,
	CXS_MSG_TYPE_COUNT
};

struct cxs_msg_info {
	const char *name;          /* lower_case, unique, used in counter names */
	enum cxs_msg_class cls;
	uint32_t wire_bytes;       /* header + payload */
};

/* t and c must be below CXS_MSG_TYPE_COUNT / CXS_CLASS_COUNT (asserted). */
const struct cxs_msg_info *cxs_msg_info(enum cxs_msg_type t);
const char *cxs_msg_class_name(enum cxs_msg_class c);

struct cxs_fabric_params {
	cxs_time link_latency;      /* node <-> switch, one way */
	cxs_time switch_latency;    /* input to output port, head of message */
	uint64_t link_bytes_per_s;  /* per link and direction; > 0 */
	cxs_time repl_jitter;       /* adaptive routing of class repl: extra flight up to this */
};

void cxs_fabric_default(struct cxs_fabric_params *p);

/* The [fabric] keys (link_latency, switch_latency, link_gbps) and the parameters they give. */
extern const struct cxs_cfg_key cxs_fabric_keys[];
extern const struct cxs_key_table cxs_fabric_key_table;
int cxs_fabric_configure(const struct cxs_config *cfg, struct cxs_fabric_params *p, char *err,
			 size_t errlen);
/* 2 x link + switch: the smallest delay cxs_port_send returns, the lookahead. */
cxs_time cxs_fabric_min_latency(const struct cxs_fabric_params *p);
/*
 * Serialisation time of `bytes` on one link, ceil(bytes * 1e12 / bw) ps,
 * exact for every bytes and bw > 0; saturates at CXS_TIME_INF when the result
 * does not fit (only for bandwidths below ~256 B/s).
 */
cxs_time cxs_fabric_ser(const struct cxs_fabric_params *p, uint32_t bytes);

/* One node's port: egress and ingress timelines and traffic counters. */
struct cxs_port {
	cxs_time egress_free, ingress_free;     /* when each direction's link is next idle */
	uint64_t *tx_msgs[CXS_MSG_TYPE_COUNT];  /* registered counters, per type */
	uint64_t *tx_bytes[CXS_CLASS_COUNT];
	uint64_t *rx_bytes[CXS_CLASS_COUNT];
	uint64_t *egress_busy_ps, *ingress_busy_ps, *egress_wait_ps, *ingress_wait_ps;
};

/*
 * Zeroes the port and registers its counters in `st`, component "port":
 * tx_<type> (messages), tx_bytes_<class> and rx_bytes_<class> (bytes),
 * egress/ingress_busy_ps (link occupancy) and egress/ingress_wait_ps (time
 * messages waited behind earlier ones). Returns 0, or -1 if a registration
 * fails (the port must then not be used).
 */
int cxs_port_init(struct cxs_port *port, struct cxs_stats *st);

/*
 * Sender side: the delay from `now` until the message's tail reaches the
 * receiver (>= cxs_fabric_min_latency): egress queueing + ser + flight.
 * Pass the receiver the arrival time now + delay for cxs_port_receive.
 */
cxs_time cxs_port_send(struct cxs_port *port, const struct cxs_fabric_params *p, cxs_time now,
		       enum cxs_msg_type t);

/*
 * Receiver side: the time the message whose tail arrives at `arrival` is fully
 * received (>= arrival; == arrival when the ingress link is idle). Messages
 * are served in call order, which is arrival order when called from the
 * message's arrival event.
 */
cxs_time cxs_port_receive(struct cxs_port *port, const struct cxs_fabric_params *p,
			  cxs_time arrival, enum cxs_msg_type t);

/* The same for a message of `bytes` on the wire (one sized by its fields, not the registry). */
cxs_time cxs_port_send_bytes(struct cxs_port *port, const struct cxs_fabric_params *p,
			     cxs_time now, enum cxs_msg_type t, uint32_t bytes);
cxs_time cxs_port_receive_bytes(struct cxs_port *port, const struct cxs_fabric_params *p,
				cxs_time arrival, enum cxs_msg_type t, uint32_t bytes);

#endif /* CXLSIM_FABRIC_H */
