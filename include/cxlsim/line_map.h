/*
 * line_map.h — a map from 64-bit keys (line addresses) to fixed-size records.
 *
 * Open addressing with linear probing over a power-of-two table of keys; the
 * records live in a separate array of chunks that never moves, so a pointer
 * returned by cxs_line_map_get stays valid until the map is freed (records
 * are never removed one by one: directories and memory contents only grow,
 * and a record's own state says whether it is in use). Lookups never iterate
 * in table order, so nothing that depends on hashing reaches the results.
 */
#ifndef CXLSIM_LINE_MAP_H
#define CXLSIM_LINE_MAP_H

#include <stddef.h>
#include <stdint.h>

struct cxs_line_map {
	size_t rec_size;
	uint64_t *keys;      /* table; UINT64_MAX marks an empty slot */
	uint32_t *slots;     /* record index per table entry */
	size_t cap, n;       /* table capacity (power of two), records */
	unsigned char **chunks;
	uint64_t **chunk_keys; /* per chunk: its records' keys */
	size_t nchunks;
};

int cxs_line_map_init(struct cxs_line_map *m, size_t rec_size);
void cxs_line_map_free(struct cxs_line_map *m);
/* The record of key, or NULL. Key UINT64_MAX is not allowed. */
void *cxs_line_map_find(const struct cxs_line_map *m, uint64_t key);
/* The record of key, created zero-filled if absent; NULL only when out of memory. */
void *cxs_line_map_get(struct cxs_line_map *m, uint64_t key, int *created);
/* Records in creation order, 0 .. m->n - 1 (deterministic, unlike the table). */
void *cxs_line_map_at(const struct cxs_line_map *m, size_t idx);
/* The key of record idx (creation order). */
uint64_t cxs_line_map_key_at(const struct cxs_line_map *m, size_t idx);

#endif /* CXLSIM_LINE_MAP_H */
