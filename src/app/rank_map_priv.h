/*
 * rank_map_priv.h — parsing engine.map, the explicit node-to-rank map.
 */
#ifndef CXLSIM_RANK_MAP_PRIV_H
#define CXLSIM_RANK_MAP_PRIV_H

#include <stddef.h>
#include <stdint.h>

/*
 * Parses s, the rank of each node in node order, into out[0..nnodes). Entries
 * are separated by blanks or commas; an entry is RANK or RANK*COUNT (COUNT
 * consecutive nodes on RANK), both decimal: "0 0 0 1 1 2" = "0*3 1*2 2".
 * Every rank must be below nranks, and the entries must cover exactly nnodes
 * nodes. Returns 0, or -1 with a one-line message starting "engine.map: " in
 * err (out is then unspecified). Preconditions: nnodes >= 1, nranks >= 1.
 */
int cxs_parse_rank_map(const char *s, uint32_t nnodes, uint32_t nranks, uint32_t *out, char *err,
		       size_t errlen);

#endif /* CXLSIM_RANK_MAP_PRIV_H */
