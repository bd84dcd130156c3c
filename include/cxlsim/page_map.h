/*
 * page_map.h — which pages a recorded program touched, from which threads,
 * and where they were: the placement half of a recording (cxlsim-trace
 * record writes DIR/pages.map beside DIR/core%u.trace).
 *
 * Why a separate file: whether a page is shared is known only when the
 * program has ended (a page first touched by one thread may be touched by
 * another an hour later), after the traces' early blocks are long written;
 * and a replay needs the whole answer before its first access, to place
 * every page. The replay maps each traced page to a simulated page of its
 * own (no two traced pages alias), in CXL memory or in a thread's local
 * memory by the page's sharing and the placement rule (trace_program.c).
 *
 * The file (little-endian; sizes in bytes)
 * ----------------------------------------
 *    0  u8[8] magic        "CXSPAGES"
 *    8  u16   version      1
 *   10  u16   header_bytes 32
 *   12  u32   threads      trace threads of the recording (files core0..threads-1)
 *   16  u64   count        entries
 *   24  u32   reserved     0
 *   28  u32   header_crc   CRC32 of bytes 0..27
 *   32  count entries of 16 bytes, by page, strictly increasing:
 *        0  u64  page      address >> 12
 *        8  u32  owner     the thread that touched it first (< threads)
 *       12  u16  threads   how many threads touched it (1..threads; 64 and more
 *                          threads are counted modulo 64 into a mask, so a
 *                          count is a lower bound there, never 1 for a shared page)
 *       14  u8   where     enum cxs_trace_where of its first access
 *       15  u8   flags     CXS_PAGE_SYNC: a lock, barrier or event word is on it
 *   then u32 CRC32 of the entries; nothing follows.
 *
 * Errors are one line naming the file, like the trace reader's.
 */
#ifndef CXLSIM_PAGE_MAP_H
#define CXLSIM_PAGE_MAP_H

#include <stddef.h>
#include <stdint.h>

#define CXS_PAGE_MAP_MAGIC "CXSPAGES"
#define CXS_PAGE_MAP_VERSION 1
#define CXS_PAGE_MAP_HEADER_BYTES 32
#define CXS_PAGE_MAP_ENTRY_BYTES 16
#define CXS_PAGE_SHIFT 12
#define CXS_PAGE_SYNC 0x01u

struct cxs_page_ent {
	uint64_t page;
	uint32_t owner;
	uint16_t threads;
	uint8_t where;
	uint8_t flags;
	uint32_t slot;     /* the replay's: where it placed the page (not on disk) */
	uint8_t tier;      /* the replay's: 0 local, 1 CXL (not on disk) */
};

struct cxs_page_map {
	struct cxs_page_ent *e;   /* by page */
	size_t n;
	uint32_t threads;
	uint32_t *index;          /* open addressing over e, index_cap slots; UINT32_MAX empty */
	size_t index_cap;
};

/* Writes e[0..n) (sorted by page, unique) to path via path.partial. */
int cxs_page_map_write(const char *path, const struct cxs_page_ent *e, size_t n,
		       uint32_t threads, char *err, size_t errlen);

/* Reads and checks path into m (freed with cxs_page_map_free). */
int cxs_page_map_read(const char *path, struct cxs_page_map *m, char *err, size_t errlen);

/* The entry of a page, or NULL. */
struct cxs_page_ent *cxs_page_map_find(const struct cxs_page_map *m, uint64_t page);

void cxs_page_map_free(struct cxs_page_map *m);

#endif /* CXLSIM_PAGE_MAP_H */
