/*
 * log_store.c — an MN's store of the log chunks Logging Units dumped to it
 * (DIKTAMO §IV-E), and recovery's search of them (§V-C, second step: "in
 * each MN, a software handler searches the log and returns the latest
 * version of the addresses").
 *
 * Chunks are kept as received: their compressed bytes, the length they
 * inflate to and the CN that sent them, in arrival order. MN memory is safe
 * by assumption (§III-B), so nothing else is kept — no decompressed copy and
 * no index: the paper's MN keeps the compressed log, and recovery pays for
 * decompressing it (MNMerge), which is what *inflated reports.
 *
 * Search. The n query words go into an open-addressing table (the power of
 * two >= 2n slots, linear probing, keyed by dk_word_hash) holding each
 * distinct word's best entry so far; every chunk is inflated, decoded and
 * its entries looked up one by one, an entry replacing the best when its
 * stamp is larger. O(entries + n) for the whole search, one chunk in memory
 * at a time. Equal stamps (the same write saved twice, e.g. by the members
 * of a group that changed at a failure) keep the first one found: chunks in
 * arrival order, entries in log order. The table is only looked up, never
 * iterated, so its order reaches no result. A chunk that does not inflate to
 * its stated length or does not decode is refused with a message naming it;
 * the search then returns (size_t)-1 and sets no result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxlsim/diktamo.h"
#include "diktamo_priv.h"

struct stored_chunk {
	uint32_t from;
	unsigned char *bytes;
	size_t len;
	size_t raw_len;
};

struct cxs_dk_store {
	struct stored_chunk *chunks;
	size_t n, cap;
	size_t bytes;
};

struct cxs_dk_store *cxs_dk_store_new(void)
{
	return calloc(1, sizeof(struct cxs_dk_store));
}

void cxs_dk_store_free(struct cxs_dk_store *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->chunks[i].bytes);
	free(s->chunks);
	free(s);
}

int cxs_dk_store_add(struct cxs_dk_store *s, uint32_t from_node, const unsigned char *bytes,
		     size_t len, size_t raw_len)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct stored_chunk *c = realloc(s->chunks, cap * sizeof *c);
		if (c == NULL)
			return -1;
		s->chunks = c;
		s->cap = cap;
	}
	unsigned char *copy = malloc(len ? len : 1);
	if (copy == NULL)
		return -1;
	memcpy(copy, bytes, len);
	s->chunks[s->n++] = (struct stored_chunk){from_node, copy, len, raw_len};
	s->bytes += len;
	return 0;
}

size_t cxs_dk_store_bytes(const struct cxs_dk_store *s)
{
	return s->bytes;
}

/* One distinct query word and the best entry seen for it. */
struct slot {
	uint64_t word;
	uint8_t used;
	uint8_t found;
	struct cxs_dk_entry best;
};

static struct slot *find(struct slot *t, size_t mask, uint64_t word)
{
	for (size_t i = dk_word_hash(word) & mask;; i = (i + 1) & mask)
		if (!t[i].used || t[i].word == word)
			return &t[i];
}

/* Chunk c's entries, decompressed and decoded (malloc'd in *e). 0, or -1 with a message. */
static int chunk_entries(const struct cxs_dk_store *s, size_t c, struct cxs_dk_entry **e,
			 size_t *ne, char *err, size_t errlen)
{
	const struct stored_chunk *ch = &s->chunks[c];
	unsigned char *raw = NULL;
	char why[192];
	*e = NULL;
	*ne = 0;
	if (cxs_dk_inflate(ch->bytes, ch->len, ch->raw_len, &raw, why, sizeof why) != 0 ||
	    cxs_dk_log_decode(raw, ch->raw_len, e, ne, why, sizeof why) != 0) {
		snprintf(err, errlen, "MN log chunk %zu (from node %u): %s", c, ch->from, why);
		free(raw);
		return -1;
	}
	free(raw);
	return 0;
}

size_t cxs_dk_store_latest(const struct cxs_dk_store *s, const uint64_t *words, size_t n,
			   struct cxs_dk_entry *out, uint8_t *found, size_t *inflated, char *err,
			   size_t errlen)
{
	*inflated = 0;
	if (n == 0)
		return 0;
	size_t nslots = 1;
	while (nslots < 2 * n)
		nslots <<= 1;
	struct slot *t = calloc(nslots, sizeof *t);
	if (t == NULL) {
		snprintf(err, errlen, "MN log search: out of memory for %zu words", n);
		return (size_t)-1;
	}
	for (size_t i = 0; i < n; i++) {
		struct slot *q = find(t, nslots - 1, words[i]);
		q->used = 1;
		q->word = words[i];
	}
	size_t scanned = 0, total = 0;
	for (size_t c = 0; c < s->n; c++) {
		const struct stored_chunk *ch = &s->chunks[c];
		struct cxs_dk_entry *e;
		size_t ne;
		if (chunk_entries(s, c, &e, &ne, err, errlen) != 0) {
			free(t);
			return (size_t)-1;
		}
		total += ch->raw_len;
		for (size_t k = 0; k < ne; k++) {
			struct slot *q = find(t, nslots - 1, e[k].addr);
			if (!q->used)
				continue;
			if (!q->found || e[k].stamp > q->best.stamp) {
				q->best = e[k];
				q->found = 1;
			}
		}
		scanned += ne;
		free(e);
	}
	for (size_t i = 0; i < n; i++) {
		const struct slot *q = find(t, nslots - 1, words[i]);
		found[i] = q->found;
		if (q->found)
			out[i] = q->best;
	}
	free(t);
	*inflated = total;
	return scanned;
}

int cxs_dk_store_foreach(const struct cxs_dk_store *s,
			 void (*fn)(void *ctx, const struct cxs_dk_entry *e, uint32_t from),
			 void *ctx, char *err, size_t errlen)
{
	for (size_t c = 0; c < s->n; c++) {
		struct cxs_dk_entry *e;
		size_t ne;
		if (chunk_entries(s, c, &e, &ne, err, errlen) != 0)
			return -1;
		for (size_t k = 0; k < ne; k++)
			fn(ctx, &e[k], s->chunks[c].from);
		free(e);
	}
	return 0;
}
