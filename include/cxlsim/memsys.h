/*
 * memsys.h — the CXL memory system as a model (`--model memsys`): compute
 * nodes with out-of-order cores (or random coherence testers), private L1/L2,
 * a shared L3 and local DRAM, and memory nodes with home directories, DRAM
 * and the real contents of CXL memory, on one CXL switch. Nodes 0 .. cns-1
 * are CNs, cns .. cns+mns-1 are MNs.
 *
 * Configuration sections [system] [cache] [fabric] [mn] [coherence] [core]
 * [tester] [workload], each owned by the part that reads it and documented by
 * --help-config. Defaults are DIKTAMO's Table II wherever it gives a value.
 * The model's files are listed in src/node/memsys_priv.h.
 */
#ifndef CXLSIM_MEMSYS_H
#define CXLSIM_MEMSYS_H

#include "cxlsim/model.h"

extern const struct cxs_model cxs_memsys_model;

#endif /* CXLSIM_MEMSYS_H */
