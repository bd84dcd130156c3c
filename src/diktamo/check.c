/*
 * check.c — DIKTAMO's protocol checker (diktamo.check), the global half; the
 * local half (no store commits before every REPL_ACK of its replication, its
 * stores performed in order) is in replication.c and always on.
 *
 * With every node in one process (like tester.exact_check: it reaches across
 * nodes, so it is a checker, never a model) it records every committed
 * replicated store — word, value as the store left it, stamp, and its
 * replica group — and at the end of the run requires of each:
 *
 *   - some MN's log holds it (its group dumped it), or else every Logging
 *     Unit of its group holds it VALed (the committed version is replicated
 *     N_r times) — never fewer;
 *   - whoever holds it holds its value, and no Logging Unit outside its
 *     group holds it;
 *
 * and of every Logging Unit: no entry of its DRAM log is un-VALed, and each
 * word's entries there are in increasing stamp order.
 *
 * After CN failures (cxs_dk_check_cn_failed) the dead CNs' units no longer
 * count: a committed store must be in some MN log or in every *live* unit of
 * the group it was replicated to (N_r - dead copies, as the sender completed
 * it with fewer REPL_ACKs); one whose whole group died is not checked —
 * recovery reports its line as unrecoverable (recovery/unrecoverable_*), and
 * the golden-image oracle names its words. Lookups go through a
 * hash of (word, stamp) built once from every log; committed stores are
 * visited in commit order, so the first violation reported is deterministic.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dk_priv.h"

struct commit {
	uint64_t addr, value, stamp;
	uint32_t group[CXS_DK_MAX_REPLICAS];
	uint8_t ngroup;
};

struct cxs_dk_check {
	uint32_t cns, mns;
	const struct cxs_lu **lu;
	const struct cxs_dk_store **store;
	struct commit *c;
	size_t n, cap;
	uint64_t dead; /* CNs that failed: their units are gone */
};

struct cxs_dk_check *cxs_dk_check_new(uint32_t cns, uint32_t mns)
{
	struct cxs_dk_check *k = calloc(1, sizeof *k);
	if (!k)
		return NULL;
	k->cns = cns;
	k->mns = mns;
	k->lu = calloc(cns, sizeof *k->lu);
	k->store = calloc(mns, sizeof *k->store);
	if (!k->lu || !k->store) {
		cxs_dk_check_free(k);
		return NULL;
	}
	return k;
}

void cxs_dk_check_free(struct cxs_dk_check *k)
{
	if (!k)
		return;
	free(k->lu);
	free(k->store);
	free(k->c);
	free(k);
}

void cxs_dk_check_cn_failed(struct cxs_dk_check *k, uint32_t cn)
{
	if (cn < 64)
		k->dead |= UINT64_C(1) << cn;
}

void cxs_dk_check_logger(struct cxs_dk_check *k, uint32_t cn, const struct cxs_lu *lu)
{
	if (cn < k->cns)
		k->lu[cn] = lu;
}

void cxs_dk_check_keeper(struct cxs_dk_check *k, uint32_t mn, const struct cxs_dk_store *s)
{
	if (mn < k->mns)
		k->store[mn] = s;
}

int cxs_dk_check_commit(struct cxs_dk_check *k, uint64_t addr, uint64_t value, uint64_t stamp,
			const uint32_t *group, uint32_t ngroup)
{
	if (k->n == k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 1024;
		struct commit *c = realloc(k->c, cap * sizeof *c);
		if (!c)
			return -1;
		k->c = c;
		k->cap = cap;
	}
	struct commit *c = &k->c[k->n++];
	*c = (struct commit){.addr = addr, .value = value, .stamp = stamp, .ngroup = (uint8_t)ngroup};
	memcpy(c->group, group, ngroup * sizeof *group);
	return 0;
}

size_t cxs_dk_check_commits(const struct cxs_dk_check *k)
{
	return k->n;
}

/* ---- an index of every log entry: (word, stamp) -> where and with what value ---------- */

struct seen {
	uint64_t addr, stamp, value, mn_value;
	uint64_t units;  /* bit per CN whose Logging Unit holds it */
	uint8_t in_mn;
	uint8_t used;
};

struct index {
	struct seen *t;
	size_t cap, n;
};

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t z = a * UINT64_C(0x9e3779b97f4a7c15) ^ (b + UINT64_C(0xbf58476d1ce4e5b9));
	z = (z ^ (z >> 31)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 29);
}

static struct seen *slot(struct index *x, uint64_t addr, uint64_t stamp)
{
	static struct seen none; /* an empty index holds nothing */
	if (x->cap == 0)
		return &none;
	size_t i = mix(addr, stamp) & (x->cap - 1);
	while (x->t[i].used && (x->t[i].addr != addr || x->t[i].stamp != stamp))
		i = (i + 1) & (x->cap - 1);
	return &x->t[i];
}

static int grow(struct index *x)
{
	struct index y = {.cap = x->cap ? 2 * x->cap : 1 << 16};
	y.t = calloc(y.cap, sizeof *y.t);
	if (!y.t)
		return -1;
	for (size_t i = 0; i < x->cap; i++)
		if (x->t[i].used)
			*slot(&y, x->t[i].addr, x->t[i].stamp) = x->t[i];
	y.n = x->n;
	free(x->t);
	*x = y;
	return 0;
}

static struct seen *note(struct index *x, uint64_t addr, uint64_t stamp)
{
	if ((x->n + 1) * 2 > x->cap && grow(x) != 0)
		return NULL;
	struct seen *s = slot(x, addr, stamp);
	if (!s->used) {
		*s = (struct seen){.addr = addr, .stamp = stamp, .used = 1};
		x->n++;
	}
	return s;
}

struct visit {
	struct index *x;
	uint32_t cn;
	char *err;
	size_t errlen;
	size_t bad;
	bool oom;
	/* per-word stamp order of the DRAM log: the last stamp seen per word */
	struct index last;
};

static void violation(struct visit *v, const char *fmt, uint64_t a, uint64_t b)
{
	if (v->bad++ == 0)
		snprintf(v->err, v->errlen, fmt, v->cn, a, b);
}

static void lu_entry(void *ctx, const struct cxs_dk_entry *e, int where)
{
	struct visit *v = ctx;
	if (where == 1 && !e->valid)
		violation(v, "Logging Unit of CN %u: DRAM log entry for %#" PRIx64
			  " not VALed (stamp %#" PRIx64 ")", e->addr, e->stamp);
	if (!e->valid)
		return;
	if (where == 1) {
		struct seen *l = note(&v->last, e->addr, 0);
		if (!l) {
			v->oom = true;
			return;
		}
		if (l->value && e->stamp <= l->value)
			violation(v, "Logging Unit of CN %u: DRAM log entries of %#" PRIx64
				  " out of stamp order (at %#" PRIx64 ")", e->addr, e->stamp);
		l->value = e->stamp;
	}
	struct seen *s = note(v->x, e->addr, e->stamp);
	if (!s) {
		v->oom = true;
		return;
	}
	s->value = e->value;
	s->units |= UINT64_C(1) << v->cn;
}

static void mn_entry(void *ctx, const struct cxs_dk_entry *e, uint32_t from)
{
	struct visit *v = ctx;
	(void)from;
	struct seen *s = note(v->x, e->addr, e->stamp);
	if (!s) {
		v->oom = true;
		return;
	}
	if (s->in_mn && s->mn_value != e->value && v->bad++ == 0)
		snprintf(v->err, v->errlen, "two MN logs hold word %#" PRIx64 " stamp %#" PRIx64
			 " with different values", e->addr, e->stamp);
	s->mn_value = e->value;
	s->in_mn = 1;
}

int cxs_dk_check_run(struct cxs_dk_check *k, char *err, size_t errlen)
{
	struct index x = {0};
	struct visit v = {.x = &x, .err = err, .errlen = errlen};
	int rc = -1;
	for (uint32_t cn = 0; cn < k->cns; cn++) {
		if (!k->lu[cn] || (k->dead >> cn & 1))
			continue;
		v.cn = cn;
		free(v.last.t);
		v.last = (struct index){0};
		cxs_lu_foreach(k->lu[cn], lu_entry, &v);
	}
	free(v.last.t);
	if (v.oom)
		goto oom;
	for (uint32_t mn = 0; mn < k->mns; mn++) {
		char sub[256];
		if (k->store[mn] && cxs_dk_store_foreach(k->store[mn], mn_entry, &v, sub, sizeof sub) != 0) {
			snprintf(err, errlen, "MN %u's dumped logs: %s", mn, sub);
			goto out;
		}
	}
	if (v.oom)
		goto oom;
	for (size_t i = 0; i < k->n; i++) {
		const struct commit *c = &k->c[i];
		struct seen *s = slot(&x, c->addr, c->stamp);
		uint64_t want = 0;
		for (uint32_t g = 0; g < c->ngroup; g++)
			want |= UINT64_C(1) << c->group[g];
		want &= ~k->dead;
		bool in_units = s->used && s->units, in_mn = s->used && s->in_mn;
		if (want == 0 && !in_mn)
			continue; /* its whole group died: recovery reports the line */
		v.cn = c->group[0];
		if ((in_units && s->value != c->value) || (in_mn && s->mn_value != c->value))
			violation(&v, "committed store (group of CN %u) to %#" PRIx64
				  " logged with another value (stamp %#" PRIx64 ")", c->addr, c->stamp);
		else if (in_units && (s->units & ~want))
			violation(&v, "committed store (group of CN %u) to %#" PRIx64
				  " logged by a unit outside its group (stamp %#" PRIx64 ")", c->addr,
				  c->stamp);
		else if (!in_mn && in_units && s->units != want)
			violation(&v, "committed store (group of CN %u) to %#" PRIx64
				  " held by only some of its replicas' Logging Units and no MN log "
				  "(stamp %#" PRIx64 ")", c->addr, c->stamp);
		else if (!in_mn && !in_units)
			violation(&v, "committed store (group of CN %u) to %#" PRIx64
				  " in no Logging Unit and no MN log (stamp %#" PRIx64 ")", c->addr,
				  c->stamp);
	}
	if (v.bad) {
		size_t l = strlen(err);
		snprintf(err + l, errlen - l, " (%zu violation%s in all)", v.bad, v.bad == 1 ? "" : "s");
		goto out;
	}
	rc = 0;
	goto out;
oom:
	snprintf(err, errlen, "diktamo checker: out of memory");
out:
	free(x.t);
	return rc;
}
