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
		    "the next store waits for the MN's ack (DIKTAMO Fig. 2)")

enum cxs_protocol {
#define CXS_PROTO_ENUM(id, name, doc) CXS_PROTO_##id,
	CXS_PROTOCOLS(CXS_PROTO_ENUM)
#undef CXS_PROTO_ENUM
	CXS_PROTO_COUNT
};

/* "wb|wt|...": the choices of system.protocol, in enum order. */
#define CXS_PROTO_CHOICE(id, name, doc) "|" name
#define CXS_PROTOCOL_CHOICES (CXS_PROTOCOLS(CXS_PROTO_CHOICE) + 1)

/* The name of a protocol ("wb"). */
const char *cxs_protocol_name(enum cxs_protocol p);

#endif /* CXLSIM_PROTOCOL_H */
