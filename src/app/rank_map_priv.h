/*
 * rank_map_priv.h — node-to-rank maps: parsing engine.map (explicit) and
 * the weighted map of engine.mapping = balanced (rank_map.c).
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

/*
 * Parses engine.weights, TYPE=WEIGHT entries separated by blanks or commas,
 * into weights[k] for the type names[k] each entry names (entries not given
 * leave weights[] as they were). WEIGHT is a decimal > 0 and <= 1e12. Returns
 * 0, or -1 with a one-line message starting "engine.weights: " in err.
 */
int cxs_parse_weights(const char *s, const char *const *names, uint32_t nnames, double *weights,
		      char *err, size_t errlen);

/*
 * The balanced map of nnodes nodes over nranks ranks into out[0..nnodes):
 * node n weighs weight[n] > 0 and belongs to weight class kind[n] < nkinds
 * (its node type; nodes of a class weigh the same). Every rank gets
 * floor(c/nranks) or ceil(c/nranks) of the c nodes of each class; classes are
 * placed heaviest first, their remainders on the least-loaded ranks (lowest
 * first), their nodes dealt in id order round the ranks. Returns 0, or -1
 * when out of memory.
 */
int cxs_balanced_rank_map(const double *weight, const uint32_t *kind, uint32_t nkinds,
			  uint32_t nnodes, uint32_t nranks, uint32_t *out);

#endif /* CXLSIM_RANK_MAP_PRIV_H */
