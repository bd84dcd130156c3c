/*
 * protocol.h — how remote (CXL) stores reach memory: the protocols a run can
 * choose with system.protocol, as named constants.
 *
 * The list below is the one place a protocol is added: it gives the enum, the
 * names the configuration accepts (CXS_PROTOCOL_CHOICES) and their meaning.
 * Code compares a run's protocol with these names, never with bare indexes.
 */
#ifndef CXLSIM_PROTOCOL_H
#define CXLSIM_PROTOCOL_H

/* X(ID, name, description) */
#define CXS_PROTOCOLS(X)                                                                           \
	X(WB, "wb", "MESI write-back: remote stores stay in the CN's caches until evicted; "          \
		    "a CN failure loses its dirty lines")                                            \
	X(WT, "wt", "write-through: every remote store is also written to its MN, and under TSO "    \
		    "the next store waits for the MN's ack (DIKTAMO Fig. 2)")                        \
	X(BASELINE, "baseline", "DIKTAMO-baseline: at the store-buffer head, the coherence "          \
				"transaction, then replication to the Logging Units, then commit")    \
	X(PARALLEL, "parallel", "DIKTAMO-parallel: coherence and replication together at the "        \
				"store-buffer head; commit when both are done")                       \
	X(PROACTIVE, "proactive", "DIKTAMO-proactive: replication as stores enter the store "          \
				  "buffer, coalescing as in §IV-D.5; coherence at the head")           \
	X(PROACTIVE_NOC, "proactive_noc", "DIKTAMO-proactive without coalescing: every remote "        \
					  "store replicated alone as it enters the store buffer")

enum cxs_protocol {
#define CXS_PROTO_ENUM(id, name, doc) CXS_PROTO_##id,
	CXS_PROTOCOLS(CXS_PROTO_ENUM)
#undef CXS_PROTO_ENUM
	CXS_PROTO_COUNT
};

/* "wb|wt|...": the choices of system.protocol, in enum order. */
#define CXS_PROTO_CHOICE(id, name, doc) "|" name
#define CXS_PROTOCOL_CHOICES (&(CXS_PROTOCOLS(CXS_PROTO_CHOICE))[1]) /* without the first "|" */

/* The name of a protocol ("wb"). */
const char *cxs_protocol_name(enum cxs_protocol p);
/* Whether it replicates remote stores to Logging Units (the DIKTAMO variants). */
static inline int cxs_protocol_replicates(enum cxs_protocol p)
{
	return p >= CXS_PROTO_BASELINE;
}

#endif /* CXLSIM_PROTOCOL_H */
