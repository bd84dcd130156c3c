/*
 * protocol.c — the names of the remote-store protocols (include/cxlsim/protocol.h).
 */
#include "cxlsim/protocol.h"

#include <stddef.h>

static const char *const names[] = {
#define NAME(id, name, doc) [CXS_PROTO_##id] = name,
	CXS_PROTOCOLS(NAME)
#undef NAME
};

const char *cxs_protocol_name(enum cxs_protocol p)
{
	return (unsigned)p < CXS_PROTO_COUNT ? names[p] : "?";
}
