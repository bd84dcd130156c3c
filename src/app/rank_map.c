/*
 * rank_map.c — the explicit node-to-rank map of engine.mapping = explicit.
 *
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
 */
#include "rank_map_priv.h"

#include <assert.h>
#include <stdbool.h>
#include <stdio.h>

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
