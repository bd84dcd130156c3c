/*
 * line_map.c — see include/cxlsim/line_map.h. The table is kept at most half
 * full so that probe sequences stay short; keys are mixed before indexing
 * because line addresses are strided (interleaving over MNs makes every MN's
 * keys multiples of the MN count).
 */
#include "cxlsim/line_map.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK_RECS 1024u

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= UINT64_C(0xff51afd7ed558ccd);
	k ^= k >> 33;
	return k;
}

int cxs_line_map_init(struct cxs_line_map *m, size_t rec_size)
{
	memset(m, 0, sizeof *m);
	m->rec_size = rec_size ? rec_size : 1;
	m->cap = 64;
	m->keys = malloc(m->cap * sizeof *m->keys);
	m->slots = malloc(m->cap * sizeof *m->slots);
	if (!m->keys || !m->slots) {
		cxs_line_map_free(m);
		return -1;
	}
	memset(m->keys, 0xff, m->cap * sizeof *m->keys);
	return 0;
}

void cxs_line_map_free(struct cxs_line_map *m)
{
	for (size_t i = 0; i < m->nchunks; i++) {
		free(m->chunks[i]);
		free(m->chunk_keys[i]);
	}
	free(m->chunks);
	free(m->chunk_keys);
	free(m->keys);
	free(m->slots);
	memset(m, 0, sizeof *m);
}

static void *record(const struct cxs_line_map *m, uint32_t idx)
{
	return m->chunks[idx / CHUNK_RECS] + (size_t)(idx % CHUNK_RECS) * m->rec_size;
}

void *cxs_line_map_find(const struct cxs_line_map *m, uint64_t key)
{
	size_t mask = m->cap - 1;
	for (size_t i = mix(key) & mask;; i = (i + 1) & mask) {
		if (m->keys[i] == key)
			return record(m, m->slots[i]);
		if (m->keys[i] == UINT64_MAX)
			return NULL;
	}
}

static int grow(struct cxs_line_map *m)
{
	size_t cap = m->cap * 2, mask = cap - 1;
	uint64_t *keys = malloc(cap * sizeof *keys);
	uint32_t *slots = malloc(cap * sizeof *slots);
	if (!keys || !slots) {
		free(keys);
		free(slots);
		return -1;
	}
	memset(keys, 0xff, cap * sizeof *keys);
	for (size_t i = 0; i < m->cap; i++) {
		if (m->keys[i] == UINT64_MAX)
			continue;
		size_t j = mix(m->keys[i]) & mask;
		while (keys[j] != UINT64_MAX)
			j = (j + 1) & mask;
		keys[j] = m->keys[i];
		slots[j] = m->slots[i];
	}
	free(m->keys);
	free(m->slots);
	m->keys = keys;
	m->slots = slots;
	m->cap = cap;
	return 0;
}

void *cxs_line_map_get(struct cxs_line_map *m, uint64_t key, int *created)
{
	if (created)
		*created = 0;
	void *r = cxs_line_map_find(m, key);
	if (r)
		return r;
	if (2 * (m->n + 1) > m->cap && grow(m) != 0)
		return NULL;
	if (m->n % CHUNK_RECS == 0) {
		unsigned char **c = realloc(m->chunks, (m->nchunks + 1) * sizeof *c);
		if (!c)
			return NULL;
		m->chunks = c;
		uint64_t **k = realloc(m->chunk_keys, (m->nchunks + 1) * sizeof *k);
		if (!k)
			return NULL;
		m->chunk_keys = k;
		m->chunks[m->nchunks] = calloc(CHUNK_RECS, m->rec_size);
		m->chunk_keys[m->nchunks] = malloc(CHUNK_RECS * sizeof **k);
		if (!m->chunks[m->nchunks] || !m->chunk_keys[m->nchunks]) {
			free(m->chunks[m->nchunks]);
			free(m->chunk_keys[m->nchunks]);
			return NULL;
		}
		m->nchunks++;
	}
	uint32_t idx = (uint32_t)m->n++;
	size_t mask = m->cap - 1, i = mix(key) & mask;
	while (m->keys[i] != UINT64_MAX)
		i = (i + 1) & mask;
	m->keys[i] = key;
	m->slots[i] = idx;
	m->chunk_keys[idx / CHUNK_RECS][idx % CHUNK_RECS] = key;
	if (created)
		*created = 1;
	return record(m, idx);
}

void *cxs_line_map_at(const struct cxs_line_map *m, size_t idx)
{
	return idx < m->n ? record(m, (uint32_t)idx) : NULL;
}

uint64_t cxs_line_map_key_at(const struct cxs_line_map *m, size_t idx)
{
	return idx < m->n ? m->chunk_keys[idx / CHUNK_RECS][idx % CHUNK_RECS] : UINT64_MAX;
}
