/*
 * series.c — time series of a registry: which counters to sample
 * (component/name globs) and their samples.
 *
 * Sampling keeps, per selected counter, one array of nsamples values; all of
 * them grow together (one shared capacity, doubled), so a sample is one store
 * per selected counter. Statistics registered since the last sample are
 * matched against the patterns at the next one (`examined` counts how far the
 * registry has been matched), so a counter registered late joins the series
 * with zeros for the samples before it. When to sample is the engine's
 * business (src/engine/engine.c, "Time series"): nothing here reads time.
 */
#include "stats_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_SAMPLES 64 /* first capacity of the series arrays */

static bool pattern_sep(char c)
{
	return c == ' ' || c == '\t' || c == ',' || c == '\n';
}

/*
 * '*' matches any run of characters, including none: the classic greedy
 * match with one backtrack point, O(len(p) * len(s)) at worst, on strings of
 * at most 63 bytes. p is [p, pend), not NUL-terminated.
 */
static bool glob_match(const char *p, const char *pend, const char *s)
{
	const char *star = NULL, *resume = NULL;

	while (*s != '\0') {
		if (p < pend && *p == '*') {
			star = p++;
			resume = s;
		} else if (p < pend && *p == *s) {
			p++;
			s++;
		} else if (star != NULL) {
			p = star + 1;
			s = ++resume;
		} else {
			return false;
		}
	}
	while (p < pend && *p == '*')
		p++;
	return p == pend;
}

/* One pattern's sides: [c, cend) / [n, nend). */
struct pattern {
	const char *c, *cend, *n, *nend;
};

/* Splits the pattern starting at *pos; false at the end of the list. */
static bool next_pattern(const char **pos, struct pattern *pt)
{
	const char *p = *pos;

	while (*p != '\0' && pattern_sep(*p))
		p++;
	if (*p == '\0')
		return false;
	const char *start = p;
	while (*p != '\0' && !pattern_sep(*p))
		p++;
	*pos = p;
	const char *slash = memchr(start, '/', (size_t)(p - start));
	pt->c = start;
	pt->cend = slash != NULL ? slash : p;
	pt->n = slash != NULL ? slash + 1 : p;
	pt->nend = p;
	return true;
}

static bool pattern_side_ok(const char *s, const char *end)
{
	if (end - s < 1 || end - s > CXS_STATS_NAME_MAX)
		return false;
	for (; s < end; s++)
		if (!stats_name_char(*s) && *s != '*')
			return false;
	return true;
}

int cxs_stats_patterns_check(const char *patterns, char *err, size_t errlen)
{
	const char *pos = patterns != NULL ? patterns : "";
	struct pattern pt;
	size_t n = 0;

	while (next_pattern(&pos, &pt)) {
		n++;
		int len = (int)(pt.nend - pt.c);
		if (pt.cend == pt.nend) {
			snprintf(err, errlen, "pattern \"%.*s\" has no '/': write component/name, "
				 "e.g. port/tx_bytes_* or */* for every counter", len, pt.c);
			return -1;
		}
		if (memchr(pt.n, '/', (size_t)(pt.nend - pt.n)) != NULL ||
		    !pattern_side_ok(pt.c, pt.cend) || !pattern_side_ok(pt.n, pt.nend)) {
			snprintf(err, errlen, "pattern \"%.*s\": expected component/name, each 1..%d "
				 "of A-Z a-z 0-9 _ . - or *", len, pt.c, CXS_STATS_NAME_MAX);
			return -1;
		}
	}
	if (n == 0) {
		snprintf(err, errlen, "no pattern: list component/name globs such as "
			 "\"port/tx_bytes_repl engine/events\"");
		return -1;
	}
	return 0;
}

static bool selected(const struct cxs_stats *st, const struct entry *e)
{
	const char *pos = st->patterns, *group;
	struct pattern pt;
	uint32_t index;
	bool inst = cxs_stats_instance_of(st, e->component, &group, &index);

	while (next_pattern(&pos, &pt)) {
		if (!glob_match(pt.n, pt.nend, e->name))
			continue;
		if (glob_match(pt.c, pt.cend, e->component) ||
		    (inst && glob_match(pt.c, pt.cend, group)))
			return true;
	}
	return false;
}

int cxs_stats_sample_select(struct cxs_stats *st, const char *patterns)
{
	char err[160];

	assert(st != NULL);
	if (cxs_stats_patterns_check(patterns, err, sizeof(err)) != 0)
		return -1;
	char *copy = stats_dup_text(patterns);
	if (copy == NULL)
		return -1;
	free(st->patterns);
	st->patterns = copy;
	st->examined = 0; /* new patterns: match everything again */
	return 0;
}

/* Grows every series to hold n samples. */
int stats_samples_reserve(struct cxs_stats *st, uint64_t n)
{
	if (n <= st->capsamples)
		return 0;
	uint64_t cap = st->capsamples ? st->capsamples : MIN_SAMPLES;
	while (cap < n) {
		if (cap > UINT64_MAX / 2)
			return -1;
		cap *= 2;
	}
	if (cap > SIZE_MAX / sizeof(uint64_t))
		return -1;
	for (size_t i = 0; i < st->nser; i++) {
		uint64_t *p = realloc(st->ser[i].values, (size_t)cap * sizeof(uint64_t));
		if (p == NULL)
			return -1; /* the arrays grown so far keep their data */
		st->ser[i].values = p;
	}
	st->capsamples = cap;
	return 0;
}

/* Adds counter `stat` to the series, its first nsamples values zero. */
int stats_add_series(struct cxs_stats *st, uint32_t stat)
{
	if (st->nser == st->capser) {
		size_t cap = st->capser ? st->capser * 2 : 16;
		struct series *p = realloc(st->ser, cap * sizeof(*p));
		if (p == NULL)
			return -1;
		st->ser = p;
		st->capser = cap;
	}
	uint64_t cap = st->capsamples ? st->capsamples : 1;
	uint64_t *v = calloc((size_t)cap, sizeof(uint64_t));
	if (v == NULL)
		return -1;
	st->ser[st->nser++] = (struct series){ .stat = stat, .values = v };
	return 0;
}

int cxs_stats_sample(struct cxs_stats *st)
{
	assert(st != NULL);
	if (st->patterns != NULL) {
		for (; st->examined < st->count; st->examined++) {
			struct entry *e = entry_at(st, st->examined);
			if (e->kind != CXS_STAT_COUNTER || e->sampled || !selected(st, e))
				continue;
			if (stats_add_series(st, (uint32_t)st->examined) != 0)
				return -1;
			e->sampled = true;
		}
	}
	if (stats_samples_reserve(st, st->nsamples + 1) != 0)
		return -1;
	for (size_t i = 0; i < st->nser; i++)
		st->ser[i].values[st->nsamples] = entry_at(st, st->ser[i].stat)->value;
	st->nsamples++;
	return 0;
}

uint64_t cxs_stats_nsamples(const struct cxs_stats *st)
{
	return st != NULL ? st->nsamples : 0;
}

size_t cxs_stats_nseries(const struct cxs_stats *st)
{
	return st != NULL ? st->nser : 0;
}

int cxs_stats_series(const struct cxs_stats *st, size_t i, struct cxs_series_view *out)
{
	if (st == NULL || out == NULL || i >= st->nser)
		return -1;
	out->stat = st->ser[i].stat;
	out->values = st->ser[i].values;
	return 0;
}
