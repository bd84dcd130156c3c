/*
 * lock_order.c — the lock order of a recording (format and contract in
 * include/cxlsim/lock_order.h): the recorder's accumulator and writer, the
 * checked reader, and the replay's lookups (a binary search over the locks,
 * then over the lock's runs: done only after a CN failure, when a waiter
 * asks whose a stuck turn is).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "cxlsim/errmsg.h"
#include "cxlsim/lock_order.h"
#include "disk_priv.h"

struct disk_hdr {
	uint8_t magic[8];
	uint8_t version[2];
	uint8_t header_bytes[2];
	uint8_t threads[4];
	uint8_t locks[8];
	uint8_t reserved[4];
	uint8_t crc[4];
};

struct disk_ent {
	uint8_t addr[8];
	uint8_t turns[8];
	uint8_t runs[8];
};

struct disk_run {
	uint8_t thread[4];
	uint8_t count[4];
};

_Static_assert(sizeof(struct disk_hdr) == CXS_LOCK_ORDER_HEADER_BYTES, "header is 32 bytes");
_Static_assert(sizeof(struct disk_ent) == CXS_LOCK_ORDER_ENTRY_BYTES, "entry is 24 bytes");
_Static_assert(sizeof(struct disk_run) == CXS_LOCK_ORDER_RUN_BYTES, "run is 8 bytes");

/* Turns are numbered in 32 bits by the replay (the high half of its lock word). */
#define MAX_TURNS (UINT64_C(1) << 32)


/* ---- the accumulator ----------------------------------------------------------- */

struct acc_lock {
	uint64_t addr;
	uint32_t *owner;  /* by turn; UINT32_MAX: not given (yet) */
	uint64_t len, cap;
};

struct cxs_lock_acc {
	struct acc_lock *l;
	size_t n, cap;
	uint32_t *slot;   /* open addressing into l, at most half full; UINT32_MAX empty */
	size_t nslot;
	size_t last;      /* one-entry cache: consecutive lock records are mostly of one lock */
};

struct cxs_lock_acc *cxs_lock_acc_new(void)
{
	struct cxs_lock_acc *a = calloc(1, sizeof *a);
	if (a)
		a->last = SIZE_MAX;
	return a;
}

void cxs_lock_acc_free(struct cxs_lock_acc *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++)
		free(a->l[i].owner);
	free(a->l);
	free(a->slot);
	free(a);
}

static int acc_grow(struct cxs_lock_acc *a)
{
	size_t ns = a->nslot ? 2 * a->nslot : 256;
	uint32_t *s = malloc(ns * sizeof *s);
	if (!s)
		return -1;
	memset(s, 0xff, ns * sizeof *s);
	for (size_t i = 0; i < a->n; i++) {
		size_t k = disk_hash(a->l[i].addr) & (ns - 1);
		while (s[k] != UINT32_MAX)
			k = (k + 1) & (ns - 1);
		s[k] = (uint32_t)i;
	}
	free(a->slot);
	a->slot = s;
	a->nslot = ns;
	return 0;
}

/* The lock at addr, created if new; NULL when out of memory. */
static struct acc_lock *acc_lock(struct cxs_lock_acc *a, uint64_t addr)
{
	if (a->last < a->n && a->l[a->last].addr == addr)
		return &a->l[a->last];
	if (2 * (a->n + 1) > a->nslot && acc_grow(a) != 0)
		return NULL;
	size_t k = disk_hash(addr) & (a->nslot - 1);
	for (; a->slot[k] != UINT32_MAX; k = (k + 1) & (a->nslot - 1))
		if (a->l[a->slot[k]].addr == addr)
			return &a->l[a->last = a->slot[k]];
	if (a->n == a->cap) {
		size_t nc = a->cap ? 2 * a->cap : 64;
		struct acc_lock *nl = realloc(a->l, nc * sizeof *nl);
		if (!nl)
			return NULL;
		a->l = nl;
		a->cap = nc;
	}
	a->l[a->n] = (struct acc_lock){.addr = addr};
	a->slot[k] = (uint32_t)a->n;
	a->last = a->n;
	return &a->l[a->n++];
}

int cxs_lock_acc_add(struct cxs_lock_acc *a, uint64_t addr, uint64_t turn, uint32_t thread,
		     char *err, size_t errlen)
{
	struct acc_lock *l = acc_lock(a, addr);
	if (!l) {
		cxs_set_err(err, errlen, "out of memory for the lock order (%zu locks)", a->n);
		return -1;
	}
	if (turn >= MAX_TURNS - 1 || thread == UINT32_MAX) {
		cxs_set_err(err, errlen, "lock 0x%" PRIx64 ": turn %" PRIu64 " of thread %" PRIu32
			    " is out of range", addr, turn, thread);
		return -1;
	}
	if (turn >= l->cap) {
		uint64_t nc = l->cap ? 2 * l->cap : 64;
		while (nc <= turn)
			nc *= 2;
		uint32_t *no = realloc(l->owner, nc * sizeof *no);
		if (!no) {
			cxs_set_err(err, errlen, "out of memory for the order of lock 0x%" PRIx64
				    " (%" PRIu64 " turns)", addr, nc);
			return -1;
		}
		memset(no + l->cap, 0xff, (nc - l->cap) * sizeof *no);
		l->owner = no;
		l->cap = nc;
	}
	if (l->owner[turn] != UINT32_MAX) {
		cxs_set_err(err, errlen, "lock 0x%" PRIx64 ": turn %" PRIu64 " is thread %" PRIu32
			    "'s and thread %" PRIu32 "'s", addr, turn, l->owner[turn], thread);
		return -1;
	}
	l->owner[turn] = thread;
	if (turn >= l->len)
		l->len = turn + 1;
	return 0;
}

static int cmp_lock(const void *x, const void *y)
{
	uint64_t a = ((const struct acc_lock *)x)->addr, b = ((const struct acc_lock *)y)->addr;
	return a < b ? -1 : a > b;
}

/* Writes n bytes to f and into *crc; false on a write error. */
static bool out(FILE *f, const void *p, size_t n, uint32_t *crc)
{
	*crc = (uint32_t)crc32(*crc, p, (uInt)n);
	return fwrite(p, n, 1, f) == 1;
}

int cxs_lock_acc_write(struct cxs_lock_acc *a, const char *path, uint32_t threads,
		       uint64_t *acquisitions, char *err, size_t errlen)
{
	char partial[4096];
	struct disk_hdr h;
	uint32_t crc = 0;
	uint64_t total = 0;
	FILE *f = NULL;

	/* sorted by address; the index no longer matches, and is not needed again */
	if (a->n > 0)
		qsort(a->l, a->n, sizeof *a->l, cmp_lock);
	free(a->slot);
	a->slot = NULL;
	a->nslot = 0;
	a->last = SIZE_MAX;
	for (size_t i = 0; i < a->n; i++)
		for (uint64_t t = 0; t < a->l[i].len; t++)
			if (a->l[i].owner[t] >= threads) {
				cxs_set_err(err, errlen, "lock 0x%" PRIx64 ": turn %" PRIu64 " of %"
					    PRIu64 " %s", a->l[i].addr, t, a->l[i].len,
					    a->l[i].owner[t] == UINT32_MAX ? "is no thread's" :
					    "is a thread the recording does not have");
				return -1;
			}
	if (snprintf(partial, sizeof partial, "%s.partial", path) >= (int)sizeof partial) {
		cxs_set_err(err, errlen, "%s: path too long", path);
		return -1;
	}
	f = fopen(partial, "wb");
	if (!f) {
		cxs_set_err(err, errlen, "%s: cannot create %s: %s", path, partial, strerror(errno));
		return -1;
	}
	memset(&h, 0, sizeof h);
	memcpy(h.magic, CXS_LOCK_ORDER_MAGIC, 8);
	disk_put(h.version, CXS_LOCK_ORDER_VERSION, 2);
	disk_put(h.header_bytes, CXS_LOCK_ORDER_HEADER_BYTES, 2);
	disk_put(h.threads, threads, 4);
	disk_put(h.locks, a->n, 8);
	disk_put(h.crc, crc32(0, (const Bytef *)&h, offsetof(struct disk_hdr, crc)), 4);
	if (fwrite(&h, sizeof h, 1, f) != 1)
		goto io;
	for (size_t i = 0; i < a->n; i++) {
		const struct acc_lock *l = &a->l[i];
		struct disk_ent d;
		uint64_t runs = 0;
		for (uint64_t t = 0; t < l->len; t++)
			runs += t == 0 || l->owner[t] != l->owner[t - 1];
		disk_put(d.addr, l->addr, 8);
		disk_put(d.turns, l->len, 8);
		disk_put(d.runs, runs, 8);
		if (!out(f, &d, sizeof d, &crc))
			goto io;
		for (uint64_t t = 0; t < l->len;) {
			uint64_t e = t + 1;
			while (e < l->len && l->owner[e] == l->owner[t])
				e++;
			struct disk_run r;
			disk_put(r.thread, l->owner[t], 4);
			disk_put(r.count, e - t, 4); /* < 2^32: turns are */
			if (!out(f, &r, sizeof r, &crc))
				goto io;
			t = e;
		}
		total += l->len;
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
		unlink(partial);
		return -1;
	}
	if (acquisitions)
		*acquisitions = total;
	return 0;
io:
	cxs_set_err(err, errlen, "%s: cannot write %s: %s", path, partial, strerror(errno));
	if (f)
		fclose(f);
	unlink(partial);
	return -1;
}

/* ---- the reader ------------------------------------------------------------------ */

/* Reads n bytes into p and into *crc; false at the end of the file. */
static bool in(FILE *f, void *p, size_t n, uint32_t *crc)
{
	if (fread(p, n, 1, f) != 1)
		return false;
	*crc = (uint32_t)crc32(*crc, p, (uInt)n);
	return true;
}

int cxs_lock_order_read(const char *path, struct cxs_lock_order *o, char *err, size_t errlen)
{
	struct disk_hdr h;
	uint64_t locks;
	uint32_t crc = 0;
	size_t run_cap = 0;
	uint8_t c[4];
	FILE *f;

	memset(o, 0, sizeof *o);
	f = fopen(path, "rb");
	if (!f) {
		cxs_set_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	if (fread(&h, sizeof h, 1, f) != 1) {
		cxs_set_err(err, errlen, "%s: truncated in the header (not a lock order)", path);
		goto fail;
	}
	if (memcmp(h.magic, CXS_LOCK_ORDER_MAGIC, 8) != 0) {
		cxs_set_err(err, errlen, "%s: bad magic at byte 0 (not a lock order; expected"
			    " \"%s\")", path, CXS_LOCK_ORDER_MAGIC);
		goto fail;
	}
	if (disk_get(h.version, 2) != CXS_LOCK_ORDER_VERSION || disk_get(h.header_bytes, 2) != sizeof h) {
		cxs_set_err(err, errlen, "%s: unsupported lock order version %u (this build reads"
			    " %d)", path, (unsigned)disk_get(h.version, 2), CXS_LOCK_ORDER_VERSION);
		goto fail;
	}
	if (disk_get(h.crc, 4) != crc32(0, (const Bytef *)&h, offsetof(struct disk_hdr, crc)) ||
	    disk_get(h.reserved, 4) != 0) {
		cxs_set_err(err, errlen, "%s: header CRC mismatch (damaged)", path);
		goto fail;
	}
	locks = disk_get(h.locks, 8);
	o->threads = (uint32_t)disk_get(h.threads, 4);
	if (locks > (UINT64_C(1) << 31)) {
		cxs_set_err(err, errlen, "%s: %" PRIu64 " locks is more than a lock order holds",
			    path, locks);
		goto fail;
	}
	for (uint64_t i = 0; i < locks; i++) {
		struct disk_ent d;
		if (!in(f, &d, sizeof d, &crc)) {
			cxs_set_err(err, errlen, "%s: truncated at lock %" PRIu64 " of %" PRIu64,
				    path, i + 1, locks);
			goto fail;
		}
		if (o->n % 64 == 0) { /* grown as read: a damaged count allocates nothing */
			struct cxs_lock_ent *ne = realloc(o->e, (o->n + 64) * sizeof *ne);
			if (!ne) {
				cxs_set_err(err, errlen, "%s: out of memory at lock %" PRIu64, path,
					    i + 1);
				goto fail;
			}
			o->e = ne;
		}
		struct cxs_lock_ent *e = &o->e[o->n];
		e->addr = disk_get(d.addr, 8);
		e->turns = disk_get(d.turns, 8);
		e->run0 = o->nruns;
		e->nruns = 0;
		uint64_t runs = disk_get(d.runs, 8);
		if ((o->n > 0 && e->addr <= o->e[o->n - 1].addr) || e->addr % 8 != 0 ||
		    e->turns == 0 || e->turns >= MAX_TURNS || runs == 0 || runs > e->turns) {
			cxs_set_err(err, errlen, "%s: lock %" PRIu64 " (0x%" PRIx64 ") is not valid:"
				    " addresses increasing and 8-aligned, 1 <= runs <= turns < 2^32",
				    path, i + 1, e->addr);
			goto fail;
		}
		o->n++;
		uint64_t sum = 0;
		for (uint64_t k = 0; k < runs; k++) {
			struct disk_run r;
			if (!in(f, &r, sizeof r, &crc)) {
				cxs_set_err(err, errlen, "%s: truncated in lock %" PRIu64 " (0x%" PRIx64
					    "), run %" PRIu64 " of %" PRIu64, path, i + 1, e->addr,
					    k + 1, runs);
				goto fail;
			}
			if (o->nruns == run_cap) {
				size_t nc = run_cap ? 2 * run_cap : 256;
				struct cxs_lock_run *nr = realloc(o->runs, nc * sizeof *nr);
				if (!nr) {
					cxs_set_err(err, errlen, "%s: out of memory for %zu runs", path,
						    nc);
					goto fail;
				}
				o->runs = nr;
				run_cap = nc;
			}
			struct cxs_lock_run *x = &o->runs[o->nruns];
			x->thread = (uint32_t)disk_get(r.thread, 4);
			x->count = (uint32_t)disk_get(r.count, 4);
			x->first = sum;
			if (x->thread >= o->threads || x->count == 0 || sum + x->count > e->turns) {
				cxs_set_err(err, errlen, "%s: lock %" PRIu64 " (0x%" PRIx64 "), run %"
					    PRIu64 ": thread %" PRIu32 " x %" PRIu32 " is not valid"
					    " (thread < %" PRIu32 ", count >= 1, runs add up to %"
					    PRIu64 " turns)", path, i + 1, e->addr, k + 1, x->thread,
					    x->count, o->threads, e->turns);
				goto fail;
			}
			sum += x->count;
			o->nruns++;
			e->nruns++;
		}
		if (sum != e->turns) {
			cxs_set_err(err, errlen, "%s: lock %" PRIu64 " (0x%" PRIx64 "): its runs add up"
				    " to %" PRIu64 " turns, not %" PRIu64, path, i + 1, e->addr, sum,
				    e->turns);
			goto fail;
		}
	}
	if (fread(c, 4, 1, f) != 1 || disk_get(c, 4) != crc) {
		cxs_set_err(err, errlen, "%s: CRC mismatch or missing after the locks (damaged or"
			    " truncated)", path);
		goto fail;
	}
	if (fgetc(f) != EOF) {
		cxs_set_err(err, errlen, "%s: unexpected data after the locks", path);
		goto fail;
	}
	fclose(f);
	return 0;
fail:
	fclose(f);
	cxs_lock_order_free(o);
	return -1;
}

const struct cxs_lock_ent *cxs_lock_order_find(const struct cxs_lock_order *o, uint64_t addr)
{
	size_t lo = 0, hi = o->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->e[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < o->n && o->e[lo].addr == addr ? &o->e[lo] : NULL;
}

uint32_t cxs_lock_order_owner(const struct cxs_lock_order *o, const struct cxs_lock_ent *e,
			      uint64_t turn)
{
	if (turn >= e->turns)
		return UINT32_MAX;
	const struct cxs_lock_run *r = o->runs + e->run0;
	size_t lo = 0, hi = e->nruns; /* the last run whose first turn <= turn */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (r[mid].first <= turn)
			lo = mid;
		else
			hi = mid;
	}
	return r[lo].thread;
}

void cxs_lock_order_free(struct cxs_lock_order *o)
{
	free(o->e);
	free(o->runs);
	memset(o, 0, sizeof *o);
}
