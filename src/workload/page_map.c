/*
 * page_map.c — the page map of a recording (format and contract in
 * include/cxlsim/page_map.h): writer, checked reader, and the lookup the
 * replay does per access (open addressing on the page number, at most half
 * full, so a lookup is one or two probes).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "cxlsim/errmsg.h"
#include "cxlsim/page_map.h"
#include "cxlsim/trace.h"
#include "disk_priv.h"

struct disk_hdr {
	uint8_t magic[8];
	uint8_t version[2];
	uint8_t header_bytes[2];
	uint8_t threads[4];
	uint8_t count[8];
	uint8_t reserved[4];
	uint8_t crc[4];
};

struct disk_ent {
	uint8_t page[8];
	uint8_t owner[4];
	uint8_t threads[2];
	uint8_t where;
	uint8_t flags;
};

_Static_assert(sizeof(struct disk_hdr) == CXS_PAGE_MAP_HEADER_BYTES, "header is 32 bytes");
_Static_assert(sizeof(struct disk_ent) == CXS_PAGE_MAP_ENTRY_BYTES, "entry is 16 bytes");


int cxs_page_map_write(const char *path, const struct cxs_page_ent *e, size_t n,
		       uint32_t threads, char *err, size_t errlen)
{
	char partial[4096];
	struct disk_hdr h;
	uint32_t crc = 0;
	FILE *f;
	int rc = -1;

	if (snprintf(partial, sizeof partial, "%s.partial", path) >= (int)sizeof partial) {
		cxs_set_err(err, errlen, "%s: path too long", path);
		return -1;
	}
	f = fopen(partial, "wb");
	if (f == NULL) {
		cxs_set_err(err, errlen, "%s: cannot create %s: %s", path, partial, strerror(errno));
		return -1;
	}
	memset(&h, 0, sizeof h);
	memcpy(h.magic, CXS_PAGE_MAP_MAGIC, 8);
	disk_put(h.version, CXS_PAGE_MAP_VERSION, 2);
	disk_put(h.header_bytes, CXS_PAGE_MAP_HEADER_BYTES, 2);
	disk_put(h.threads, threads, 4);
	disk_put(h.count, n, 8);
	disk_put(h.crc, crc32(0, (const Bytef *)&h, offsetof(struct disk_hdr, crc)), 4);
	if (fwrite(&h, sizeof h, 1, f) != 1)
		goto io;
	for (size_t i = 0; i < n; i++) {
		struct disk_ent d;
		disk_put(d.page, e[i].page, 8);
		disk_put(d.owner, e[i].owner, 4);
		disk_put(d.threads, e[i].threads, 2);
		d.where = e[i].where;
		d.flags = e[i].flags;
		crc = (uint32_t)crc32(crc, (const Bytef *)&d, sizeof d);
		if (fwrite(&d, sizeof d, 1, f) != 1)
			goto io;
	}
	uint8_t c[4];
	disk_put(c, crc, 4);
	if (fwrite(c, 4, 1, f) != 1 || fflush(f) != 0 || fsync(fileno(f)) != 0)
		goto io;
	if (fclose(f) != 0) {
		f = NULL;
		goto io;
	}
	f = NULL;
	if (rename(partial, path) != 0) {
		cxs_set_err(err, errlen, "%s: cannot rename %s to it: %s", path, partial,
			    strerror(errno));
		goto out;
	}
	return 0;
io:
	cxs_set_err(err, errlen, "%s: cannot write %s: %s", path, partial, strerror(errno));
out:
	if (f != NULL)
		fclose(f);
	unlink(partial);
	return rc;
}

static int build_index(struct cxs_page_map *m)
{
	m->index_cap = 16;
	while (m->index_cap < 2 * m->n + 1)
		m->index_cap *= 2;
	m->index = malloc(m->index_cap * sizeof *m->index);
	if (m->index == NULL)
		return -1;
	memset(m->index, 0xff, m->index_cap * sizeof *m->index);
	for (size_t i = 0; i < m->n; i++) {
		size_t k = disk_hash(m->e[i].page) & (m->index_cap - 1);
		while (m->index[k] != UINT32_MAX)
			k = (k + 1) & (m->index_cap - 1);
		m->index[k] = (uint32_t)i;
	}
	return 0;
}

int cxs_page_map_read(const char *path, struct cxs_page_map *m, char *err, size_t errlen)
{
	struct disk_hdr h;
	uint64_t count;
	uint32_t crc = 0;
	uint8_t c[4];
	FILE *f;

	memset(m, 0, sizeof *m);
	f = fopen(path, "rb");
	if (f == NULL) {
		cxs_set_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	if (fread(&h, sizeof h, 1, f) != 1) {
		cxs_set_err(err, errlen, "%s: truncated in the header (not a page map)", path);
		goto fail;
	}
	if (memcmp(h.magic, CXS_PAGE_MAP_MAGIC, 8) != 0) {
		cxs_set_err(err, errlen, "%s: bad magic at byte 0 (not a page map; expected \"%s\")",
			    path, CXS_PAGE_MAP_MAGIC);
		goto fail;
	}
	if (disk_get(h.version, 2) != CXS_PAGE_MAP_VERSION || disk_get(h.header_bytes, 2) != sizeof h) {
		cxs_set_err(err, errlen, "%s: unsupported page map version %u (this build reads %d)",
			    path, (unsigned)disk_get(h.version, 2), CXS_PAGE_MAP_VERSION);
		goto fail;
	}
	if (disk_get(h.crc, 4) != crc32(0, (const Bytef *)&h, offsetof(struct disk_hdr, crc)) ||
	    disk_get(h.reserved, 4) != 0) {
		cxs_set_err(err, errlen, "%s: header CRC mismatch (damaged)", path);
		goto fail;
	}
	count = disk_get(h.count, 8);
	m->threads = (uint32_t)disk_get(h.threads, 4);
	if (count > (UINT64_C(1) << 31)) {
		cxs_set_err(err, errlen, "%s: %" PRIu64 " entries is more than a page map holds",
			    path, count);
		goto fail;
	}
	m->e = calloc(count ? count : 1, sizeof *m->e);
	if (m->e == NULL) {
		cxs_set_err(err, errlen, "%s: out of memory for %" PRIu64 " pages", path, count);
		goto fail;
	}
	for (uint64_t i = 0; i < count; i++) {
		struct disk_ent d;
		if (fread(&d, sizeof d, 1, f) != 1) {
			cxs_set_err(err, errlen, "%s: truncated at entry %" PRIu64 " of %" PRIu64,
				    path, i + 1, count);
			goto fail;
		}
		crc = (uint32_t)crc32(crc, (const Bytef *)&d, sizeof d);
		struct cxs_page_ent *e = &m->e[i];
		e->page = disk_get(d.page, 8);
		e->owner = (uint32_t)disk_get(d.owner, 4);
		e->threads = (uint16_t)disk_get(d.threads, 2);
		e->where = d.where;
		e->flags = d.flags;
		if ((i > 0 && e->page <= m->e[i - 1].page) || e->owner >= m->threads ||
		    e->threads == 0 || e->where > CXS_TRACE_WHERE_MAX ||
		    (e->flags & ~CXS_PAGE_SYNC) != 0) {
			cxs_set_err(err, errlen, "%s: entry %" PRIu64 " (page 0x%" PRIx64 ") is not"
				    " valid: pages increasing, owner < %" PRIu32 ", threads >= 1,"
				    " known where and flags", path, i + 1, e->page, m->threads);
			goto fail;
		}
	}
	m->n = (size_t)count;
	if (fread(c, 4, 1, f) != 1 || disk_get(c, 4) != crc) {
		cxs_set_err(err, errlen, "%s: entries CRC mismatch or missing (damaged or truncated)",
			    path);
		goto fail;
	}
	if (fgetc(f) != EOF) {
		cxs_set_err(err, errlen, "%s: unexpected data after the entries", path);
		goto fail;
	}
	fclose(f);
	if (build_index(m) != 0) {
		cxs_set_err(err, errlen, "%s: out of memory for the page index", path);
		cxs_page_map_free(m);
		return -1;
	}
	return 0;
fail:
	fclose(f);
	cxs_page_map_free(m);
	return -1;
}

struct cxs_page_ent *cxs_page_map_find(const struct cxs_page_map *m, uint64_t page)
{
	if (m->index_cap == 0)
		return NULL;
	for (size_t k = disk_hash(page) & (m->index_cap - 1);; k = (k + 1) & (m->index_cap - 1)) {
		uint32_t i = m->index[k];
		if (i == UINT32_MAX)
			return NULL;
		if (m->e[i].page == page)
			return &m->e[i];
	}
}

void cxs_page_map_free(struct cxs_page_map *m)
{
	free(m->e);
	free(m->index);
	memset(m, 0, sizeof *m);
}
