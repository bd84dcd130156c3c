/*
 * rank_map.c — node-to-rank maps: the explicit one of engine.mapping =
 * explicit, and the weighted one of engine.mapping = balanced (the default).
 *
 * Explicit maps.
 * engine.map lists the rank of every node in node order. Real layouts are
 * runs ("the 32 CNs on ranks 0..7, four each, then the MNs"), so an entry may
 * repeat a rank: RANK*COUNT. The grammar, deliberately small:
 *
 *     map   := sep* entry (sep+ entry)* sep*
 *     entry := NUMBER (blank* '*' blank* NUMBER)?
 *     sep   := ' ' | '\t' | ','
 *
 * Numbers are decimal, at most UINT32_MAX. A config string cannot hold ';' or
 * '#', so no other separator is needed. Messages say which entry (1-based)
 * was wrong and quote it, since a map for hundreds of nodes is hard to scan.
 *
 * A repeat count is applied without a loop over the count beyond nnodes, so
 * "0*4000000000" is rejected at once rather than after four billion writes.
 *
 * Balanced maps. What a rank costs is the events its nodes handle, and node
 * types differ by an order of magnitude: on the 16x4 WB run (inputs/
 * wb-16x4.ini, size 128, np = 1) a CN of 4 cores handled 14x the events of an
 * MN under ocean_cp, 6.2x under barnes, 4.1x under ycsb. block put all 16 CNs
 * on rank 0 at np = 2 (4.11 M of 4.41 M events), so np = 2 ran no faster than
 * np = 1. The balanced map gives each node a weight (its type's, engine.weights)
 * and deals every type evenly over the ranks: each rank gets floor(c/R) or
 * ceil(c/R) of the c nodes of a type. Types are placed heaviest first, and a
 * type's extra nodes (c mod R) go to the ranks whose load (sum of weights) is
 * least so far, lowest rank first; within a type nodes are dealt in id order
 * round the ranks, so an even split is round_robin's. 16 CNs + 16 MNs on 2
 * ranks are 8 + 8 on each; on 3 ranks 6/5/5 CNs and 4/6/6 MNs. Why not
 * weights alone (Graham's greedy rule): the ratio moves with the workload
 * and its size (2.3 at size 16), and a greedy map built on a ratio of 8 put
 * no MN at all beside rank 0's six CNs, which then handled 18 % fewer events
 * than the mean; an even deal of each type is right whatever the ratio, and
 * the weights only decide who gets the remainders. The map depends only on
 * the weights and the rank count, never on timing, and results never depend
 * on the map (engine.h).
 *
 * engine.weights overrides a type's weight: "cn=8 mn=1" (TYPE=NUMBER entries,
 * separated like engine.map's, NUMBER a positive decimal). A type not listed
 * keeps its default (main.c: a CN weighs 2 per core, the median of the
 * ratios above per core, anything else 1); a name that is no node type of
 * the model is an error naming the types there are.
 */
#include "rank_map_priv.h"

#include <assert.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUOTE_MAX 24 /* characters of a bad entry echoed in a message */

static bool is_sep(char c)
{
	return c == ' ' || c == '\t' || c == ',';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Length of the entry starting at p: up to the next separator or the end. */
static int entry_len(const char *p)
{
	int n = 0;

	while (p[n] != '\0' && !is_sep(p[n]))
		n++;
	return n;
}

/*
 * Reads a decimal number at *p into *v and advances *p. Returns 0, -1 when no
 * digit is there, -2 when the number exceeds UINT32_MAX.
 */
static int read_number(const char **p, uint32_t *v)
{
	uint64_t x = 0;
	const char *q = *p;

	if (!is_digit(*q))
		return -1;
	for (; is_digit(*q); q++) {
		x = x * 10 + (uint64_t)(*q - '0');
		if (x > UINT32_MAX)
			return -2;
	}
	*v = (uint32_t)x;
	*p = q;
	return 0;
}

int cxs_parse_rank_map(const char *s, uint32_t nnodes, uint32_t nranks, uint32_t *out, char *err,
		       size_t errlen)
{
	const char *p = s;
	uint64_t covered = 0; /* nodes the entries so far give a rank to */
	unsigned entry = 0;

	assert(s != NULL && out != NULL && nnodes >= 1 && nranks >= 1);
	for (;;) {
		const char *start;
		uint32_t rank, count = 1;
		int rc;

		while (is_sep(*p))
			p++;
		if (*p == '\0')
			break;
		start = p;
		entry++;
		rc = read_number(&p, &rank);
		if (rc == 0) {
			const char *q = p;

			while (*q == ' ' || *q == '\t')
				q++;
			if (*q == '*') {
				q++;
				while (*q == ' ' || *q == '\t')
					q++;
				p = q;
				rc = read_number(&p, &count);
			}
		}
		if (rc == 0 && *p != '\0' && !is_sep(*p))
			rc = -1;
		if (rc != 0) {
			int n = entry_len(start);

			snprintf(err, errlen,
				 "engine.map: entry %u: %s, got \"%.*s%s\"", entry,
				 rc == -2 ? "number too large"
					  : "expected a rank such as 2 or a run such as 2*4 (rank*count)",
				 n < QUOTE_MAX ? n : QUOTE_MAX, start, n > QUOTE_MAX ? "..." : "");
			return -1;
		}
		if (rank >= nranks) {
			snprintf(err, errlen,
				 "engine.map: entry %u: rank %u, but the job has %u rank%s (0..%u)",
				 entry, rank, nranks, nranks == 1 ? "" : "s", nranks - 1);
			return -1;
		}
		if (count == 0) {
			snprintf(err, errlen, "engine.map: entry %u: repeat count 0; expected at least 1",
				 entry);
			return -1;
		}
		for (uint64_t i = covered; i < nnodes && i < covered + count; i++)
			out[i] = rank;
		covered += count;
	}
	if (covered != nnodes) {
		snprintf(err, errlen,
			 "engine.map: gives a rank for %llu node%s, expected one for each of the %u nodes",
			 (unsigned long long)covered, covered == 1 ? "" : "s", nnodes);
		return -1;
	}
	return 0;
}

int cxs_parse_weights(const char *s, const char *const *names, uint32_t nnames, double *weights,
		      char *err, size_t errlen)
{
	const char *p = s;
	unsigned entry = 0;

	assert(s != NULL && names != NULL && weights != NULL);
	for (;;) {
		const char *start, *eq;
		char *end;
		double w;
		uint32_t k;
		int n;

		while (is_sep(*p))
			p++;
		if (*p == '\0')
			return 0;
		start = p;
		entry++;
		n = entry_len(start);
		eq = memchr(start, '=', (size_t)n);
		if (eq == NULL || eq == start) {
			snprintf(err, errlen,
				 "engine.weights: entry %u: expected TYPE=WEIGHT such as cn=8, got "
				 "\"%.*s%s\"", entry, n < QUOTE_MAX ? n : QUOTE_MAX, start,
				 n > QUOTE_MAX ? "..." : "");
			return -1;
		}
		for (k = 0; k < nnames; k++)
			if (strlen(names[k]) == (size_t)(eq - start) &&
			    strncmp(names[k], start, (size_t)(eq - start)) == 0)
				break;
		if (k == nnames) {
			char list[128] = "";
			size_t used = 0;

			for (uint32_t i = 0; i < nnames && used < sizeof(list); i++)
				used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
							 i ? ", " : "", names[i]);
			snprintf(err, errlen,
				 "engine.weights: entry %u: \"%.*s\" is no node type of this model "
				 "(its types: %s)", entry, (int)(eq - start) < QUOTE_MAX ? (int)(eq - start)
				 : QUOTE_MAX, start, list);
			return -1;
		}
		w = strtod(eq + 1, &end);
		if (end == eq + 1 || (*end != '\0' && !is_sep(*end)) || !(w > 0) || w > 1e12) {
			snprintf(err, errlen,
				 "engine.weights: entry %u: the weight of %s must be a positive number "
				 "(at most 1e12), got \"%.*s%s\"", entry, names[k],
				 n < QUOTE_MAX ? n : QUOTE_MAX, start, n > QUOTE_MAX ? "..." : "");
			return -1;
		}
		weights[k] = w;
		p = end;
	}
}

int cxs_balanced_rank_map(const double *weight, const uint32_t *kind, uint32_t nkinds,
			  uint32_t nnodes, uint32_t nranks, uint32_t *out)
{
	uint32_t *total = calloc(nkinds, sizeof(*total));  /* nodes of each class */
	uint32_t *order = malloc(nkinds * sizeof(*order));  /* classes, heaviest first */
	double *cw = calloc(nkinds, sizeof(*cw));           /* each class's weight */
	double *load = calloc(nranks, sizeof(*load));
	uint32_t *quota = calloc(nranks, sizeof(*quota));   /* of the class being placed */
	int rc = -1;

	assert(nnodes >= 1 && nranks >= 1 && nkinds >= 1);
	if (total == NULL || order == NULL || cw == NULL || load == NULL || quota == NULL)
		goto out;
	for (uint32_t n = 0; n < nnodes; n++) {
		assert(weight[n] > 0 && kind[n] < nkinds);
		total[kind[n]]++;
		cw[kind[n]] = weight[n];
	}
	for (uint32_t k = 0; k < nkinds; k++) {
		uint32_t i = k;

		/* insertion sort: heavier first, then lower class index */
		while (i > 0 && cw[order[i - 1]] < cw[k]) {
			order[i] = order[i - 1];
			i--;
		}
		order[i] = k;
	}
	for (uint32_t o = 0; o < nkinds; o++) {
		uint32_t k = order[o], extra = total[k] % nranks, next = 0;

		for (uint32_t r = 0; r < nranks; r++)
			quota[r] = total[k] / nranks;
		/* The extra nodes of this class go to the least-loaded ranks, lowest first. */
		for (uint32_t x = 0; x < extra; x++) {
			uint32_t best = UINT32_MAX;

			for (uint32_t r = 0; r < nranks; r++)
				if (quota[r] == total[k] / nranks &&
				    (best == UINT32_MAX || load[r] < load[best]))
					best = r;
			quota[best]++;
		}
		/* Dealt in node order round the ranks, each up to its quota. */
		for (uint32_t n = 0; n < nnodes; n++) {
			if (kind[n] != k)
				continue;
			while (quota[next] == 0)
				next = (next + 1) % nranks;
			out[n] = next;
			quota[next]--;
			load[next] += cw[k];
			next = (next + 1) % nranks;
		}
	}
	rc = 0;
out:
	free(total);
	free(order);
	free(cw);
	free(load);
	free(quota);
	return rc;
}
