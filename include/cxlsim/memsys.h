/*
 * memsys.h — the CXL memory system as a model: compute nodes (cores with
 * private L1/L2, shared L3, local DRAM) and memory nodes (home directory,
 * DRAM, contents) on one CXL switch. Nodes 0 .. cns-1 are CNs, cns ..
 * cns+mns-1 are MNs. The cores are random coherence testers for now
 * (tester.h); the out-of-order core replaces them without touching this.
 *
 * Configuration sections: [system] [cache] [fabric] [mn] [coherence]
 * [tester] — every key in cxs_memsys_keys, documented by --help-config.
 * Defaults are DIKTAMO's Table II wherever it gives a value.
 */
#ifndef CXLSIM_MEMSYS_H
#define CXLSIM_MEMSYS_H

#include <stddef.h>

#include "cxlsim/config.h"
#include "cxlsim/engine.h"

extern const struct cxs_cfg_key cxs_memsys_keys[];
extern const size_t cxs_memsys_nkeys;

struct cxs_memsys_info {
	uint32_t nnodes;
	cxs_time lookahead; /* the fabric's minimum one-way latency */
};

/* Reads and checks the configuration (errors name the key and its origin). */
int cxs_memsys_configure(const struct cxs_config *cfg, struct cxs_memsys_info *out, char *err,
			 size_t errlen);
const struct cxs_node_type *cxs_memsys_type_of(uint32_t node, void *ctx);

#endif /* CXLSIM_MEMSYS_H */
