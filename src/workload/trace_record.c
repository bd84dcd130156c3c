/*
 * trace_record.c — `cxlsim-trace record`: run a program under the cxltrace
 * Valgrind tool and turn its stream into per-thread traces, a page map and
 * a replay configuration (include/cxlsim/trace_record.h).
 *
 *   recorder                         valgrind --tool=cxltrace --cxl-fd=W PROG
 *     pipe(R, W) ---- fork/exec ---->   (W moved out of the program's reach)
 *     read chunks from R  <------------ CXT_RECORDS / THREAD_END / END / ERROR
 *       per thread: trace writer (zlib, checked blocks)
 *       per record: page -> {first thread, threads mask, where, sync}
 *       per lock record: its turn -> whose (lock_order.h)
 *     EOF + waitpid: close writers, write pages.map, locks.order and trace.ini
 *
 * Every record the tool sends is checked by the trace writer like any other
 * (a tool bug is named with the thread and record). The page table is an
 * open-addressing hash (at most half full) with a one-entry cache per
 * thread, because consecutive accesses of a thread are mostly to one page;
 * at the end it is sorted by page for the map.
 *
 * Thread counts are lower bounds above 64 threads (a 64-bit mask of thread
 * number mod 64): what the replay needs is "one thread or more", which the
 * mask answers exactly.
 */
#define _DEFAULT_SOURCE /* realpath */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cxlsim/cxltrace_proto.h"
#include "cxlsim/errmsg.h"
#include "cxlsim/lock_order.h"
#include "cxlsim/page_map.h"
#include "cxlsim/trace_record.h"

struct page_acc {
	uint64_t page;
	uint64_t mask;   /* threads mod 64 */
	uint32_t owner;
	uint8_t where, flags;
};

struct pages {
	struct page_acc *e;
	size_t n, cap;       /* entries; capacity of e */
	uint32_t *slot;      /* hash slots into e, UINT32_MAX empty */
	size_t nslot;
};

struct thr {
	struct cxs_trace_writer *w;
	uint64_t last_page;  /* one-entry cache */
	uint32_t last_idx;
	bool ended;
};

struct rec_state {
	const struct cxs_trace_record_opts *o;
	struct cxs_trace_writer_opts wopts;
	struct thr *t;
	uint32_t nt;
	struct pages pg;
	struct cxs_lock_acc *locks;
	struct cxs_trace_record_stats *st;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	return x ^ (x >> 29);
}

static int pages_grow(struct pages *p)
{
	size_t ns = p->nslot ? 2 * p->nslot : 1 << 16;
	uint32_t *s = malloc(ns * sizeof *s);
	if (s == NULL)
		return -1;
	memset(s, 0xff, ns * sizeof *s);
	for (size_t i = 0; i < p->n; i++) {
		size_t k = mix(p->e[i].page) & (ns - 1);
		while (s[k] != UINT32_MAX)
			k = (k + 1) & (ns - 1);
		s[k] = (uint32_t)i;
	}
	free(p->slot);
	p->slot = s;
	p->nslot = ns;
	return 0;
}

/* The entry of page, created (owner = thread) if new; UINT32_MAX when out of memory. */
static uint32_t page_index(struct pages *p, uint64_t page, uint32_t thread, uint8_t where)
{
	if (2 * (p->n + 1) > p->nslot && pages_grow(p) != 0)
		return UINT32_MAX;
	size_t k = mix(page) & (p->nslot - 1);
	for (; p->slot[k] != UINT32_MAX; k = (k + 1) & (p->nslot - 1))
		if (p->e[p->slot[k]].page == page)
			return p->slot[k];
	if (p->n == p->cap) {
		size_t nc = p->cap ? 2 * p->cap : 4096;
		struct page_acc *ne = realloc(p->e, nc * sizeof *ne);
		if (ne == NULL)
			return UINT32_MAX;
		p->e = ne;
		p->cap = nc;
	}
	p->e[p->n] = (struct page_acc){.page = page, .owner = thread, .where = where};
	p->slot[k] = (uint32_t)p->n;
	return (uint32_t)p->n++;
}

static int thread_writer(struct rec_state *s, uint32_t th, char *err, size_t errlen)
{
	if (th >= s->nt) {
		uint32_t nn = s->nt ? s->nt : 16;
		while (nn <= th)
			nn *= 2;
		struct thr *t = realloc(s->t, nn * sizeof *t);
		if (t == NULL) {
			cxs_set_err(err, errlen, "out of memory for %" PRIu32 " threads", nn);
			return -1;
		}
		memset(t + s->nt, 0, (nn - s->nt) * sizeof *t);
		for (uint32_t i = s->nt; i < nn; i++)
			t[i].last_page = UINT64_MAX;
		s->t = t;
		s->nt = nn;
	}
	if (s->t[th].w == NULL) {
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/core%" PRIu32 ".trace", s->o->out_dir, th);
		s->t[th].w = cxs_trace_writer_open_opts(path, th, &s->wopts, err, errlen);
		if (s->t[th].w == NULL)
			return -1;
	}
	return 0;
}

static bool has_addr(unsigned op)
{
	return op != CXS_TRACE_FENCE;
}

static bool is_sync(unsigned op)
{
	return op == CXS_TRACE_LOCK || op == CXS_TRACE_UNLOCK || op == CXS_TRACE_BARRIER ||
	       op == CXS_TRACE_POST || op == CXS_TRACE_WAIT;
}

static int take_records(struct rec_state *s, uint32_t th, const struct cxt_rec *r, uint32_t n,
			char *err, size_t errlen)
{
	if (thread_writer(s, th, err, errlen) != 0)
		return -1;
	struct thr *t = &s->t[th];
	if (t->ended) {
		cxs_set_err(err, errlen, "the tool sent records for thread %" PRIu32 " after its end",
			    th);
		return -1;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct cxs_trace_rec x = {.addr = r[i].addr, .value = r[i].value, .gap = r[i].gap,
					  .addr_dep = r[i].addr_dep, .value_dep = r[i].value_dep,
					  .op = r[i].op, .size = r[i].size, .flags = r[i].flags};
		char why[CXS_TRACE_ERR_MAX];
		if (cxs_trace_writer_append(t->w, &x, why, sizeof why) != 0) {
			cxs_set_err(err, errlen, "thread %" PRIu32 ": %s", th, why);
			return -1;
		}
		s->st->records++;
		s->st->by_op[x.op]++;
		s->st->instructions += x.gap + (x.op <= CXS_TRACE_RMW || x.op == CXS_TRACE_FENCE);
		s->st->with_addr_dep += x.addr_dep != 0;
		s->st->with_value_dep += x.value_dep != 0;
		if (x.op == CXS_TRACE_LOCK && (x.flags & CXS_TRACE_F_TURN) &&
		    cxs_lock_acc_add(s->locks, x.addr, x.value, th, why, sizeof why) != 0) {
			cxs_set_err(err, errlen, "thread %" PRIu32 ": %s", th, why);
			return -1;
		}
		if (!has_addr(x.op))
			continue;
		uint64_t page = x.addr >> CXS_PAGE_SHIFT;
		uint32_t k = t->last_page == page ? t->last_idx
			: page_index(&s->pg, page, th, (uint8_t)(x.flags & CXS_TRACE_F_WHERE));
		if (k == UINT32_MAX) {
			cxs_set_err(err, errlen, "out of memory for the page table (%zu pages)",
				    s->pg.n);
			return -1;
		}
		t->last_page = page;
		t->last_idx = k;
		s->pg.e[k].mask |= UINT64_C(1) << (th % 64);
		if (is_sync(x.op))
			s->pg.e[k].flags |= CXS_PAGE_SYNC;
	}
	return 0;
}

static int cmp_page(const void *a, const void *b)
{
	uint64_t x = ((const struct cxs_page_ent *)a)->page, y = ((const struct cxs_page_ent *)b)->page;
	return x < y ? -1 : x > y;
}

static int write_map(struct rec_state *s, uint32_t threads, char *err, size_t errlen)
{
	struct cxs_page_ent *e = calloc(s->pg.n ? s->pg.n : 1, sizeof *e);
	char path[PATH_MAX];
	int rc;

	if (e == NULL) {
		cxs_set_err(err, errlen, "out of memory for the page map");
		return -1;
	}
	for (size_t i = 0; i < s->pg.n; i++) {
		const struct page_acc *a = &s->pg.e[i];
		int nt = __builtin_popcountll(a->mask);
		e[i] = (struct cxs_page_ent){.page = a->page, .owner = a->owner,
					     .threads = (uint16_t)(nt ? nt : 1), .where = a->where,
					     .flags = a->flags};
		s->st->shared_pages += nt > 1;
	}
	qsort(e, s->pg.n, sizeof *e, cmp_page);
	s->st->pages = s->pg.n;
	snprintf(path, sizeof path, "%s/pages.map", s->o->out_dir);
	rc = cxs_page_map_write(path, e, s->pg.n, threads, err, errlen);
	free(e);
	return rc;
}

static int write_ini(const struct rec_state *s, uint32_t threads, int argc, char *const argv[],
		     char *err, size_t errlen)
{
	char path[PATH_MAX], dir[PATH_MAX];
	FILE *f;

	if (realpath(s->o->out_dir, dir) == NULL) {
		cxs_set_err(err, errlen, "%s: %s", s->o->out_dir, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof path, "%s/trace.ini", s->o->out_dir);
	f = fopen(path, "w");
	if (f == NULL) {
		cxs_set_err(err, errlen, "%s: cannot create: %s", path, strerror(errno));
		return -1;
	}
	fprintf(f, "# Made by cxlsim-trace record from:");
	for (int i = 0; i < argc; i++) { /* one comment line: an argument's newlines are spaces */
		fputc(' ', f);
		for (const char *c = argv[i]; *c != '\0'; c++)
			fputc(*c == '\n' || *c == '\r' ? ' ' : *c, f);
	}
	fprintf(f, "\n# %" PRIu32 " threads, %" PRIu64 " records. Replay on a machine with at least\n"
		   "# that many cores (system.cns x system.cores_per_cn), e.g.\n"
		   "#   cxlsim inputs/wb-16x4.ini %s\n"
		   "[workload]\nkernel = trace\ntrace = %s/core%%u.trace\n\n"
		   "[trace]\nmap = %s/pages.map\nlocks = %s/locks.order\nthreads = %" PRIu32 "\n",
		threads, s->st->records, path, dir, dir, dir, threads);
	if (fclose(f) != 0) {
		cxs_set_err(err, errlen, "%s: cannot write: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static void cleanup(struct rec_state *s)
{
	for (uint32_t i = 0; i < s->nt; i++)
		cxs_trace_writer_abort(s->t[i].w);
	free(s->t);
	free(s->pg.e);
	free(s->pg.slot);
	cxs_lock_acc_free(s->locks);
}

/* Runs valgrind in the child; never returns. */
static void exec_valgrind(const struct cxs_trace_record_opts *o, int wfd, int argc,
			  char *const argv[])
{
	char fdopt[32], roiopt[64], startopt[512];
	const char *vg = o->valgrind ? o->valgrind : "valgrind";
	char **av = calloc((size_t)argc + 8, sizeof *av);
	int n = 0;

	if (av == NULL)
		_exit(127);
	if (setenv("VALGRIND_LIB", o->vglib, 1) != 0)
		_exit(127);
	snprintf(fdopt, sizeof fdopt, "--cxl-fd=%d", wfd);
	av[n++] = (char *)vg;
	if (!o->verbose)
		av[n++] = "-q";
	av[n++] = "--tool=cxltrace";
	av[n++] = fdopt;
	if (o->roi) {
		snprintf(roiopt, sizeof roiopt, "--roi=%s", o->roi);
		av[n++] = roiopt;
	}
	if (o->roi_start) {
		snprintf(startopt, sizeof startopt, "--roi-start=%s", o->roi_start);
		av[n++] = startopt;
	}
	if (o->follow_fork)
		av[n++] = "--fork=child";
	for (int i = 0; i < argc; i++)
		av[n++] = argv[i];
	av[n] = NULL;
	execvp(vg, av);
	fprintf(stderr, "cxlsim-trace: cannot run %s: %s\n", vg, strerror(errno));
	_exit(127);
}

int cxs_trace_record(const struct cxs_trace_record_opts *o, int argc, char *const argv[],
		     struct cxs_trace_record_stats *st, char *err, size_t errlen)
{
	struct rec_state s = {.o = o, .st = st};
	struct cxt_rec *buf = NULL;
	int fds[2] = {-1, -1}, rc = -1, wst;
	bool ended = false;
	uint32_t threads = 0;
	char terr[CXS_TRACE_ERR_MAX] = "";
	FILE *in = NULL;
	pid_t pid;

	memset(st, 0, sizeof *st);
	s.locks = cxs_lock_acc_new();
	if (s.locks == NULL) {
		cxs_set_err(err, errlen, "record: out of memory");
		return -1;
	}
	cxs_trace_writer_opts_default(&s.wopts);
	s.wopts.level = o->level;
	if (argc < 1) {
		cxs_set_err(err, errlen, "record: no program given (record -o DIR -- PROGRAM ARGS)");
		return -1;
	}
	if (mkdir(o->out_dir, 0777) != 0 && errno != EEXIST) {
		cxs_set_err(err, errlen, "%s: cannot create: %s", o->out_dir, strerror(errno));
		return -1;
	}
	buf = malloc(CXT_CHUNK_RECORDS * sizeof *buf);
	if (buf == NULL || pipe(fds) != 0) {
		cxs_set_err(err, errlen, "record: %s", buf ? strerror(errno) : "out of memory");
		free(buf);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		cxs_set_err(err, errlen, "record: fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		free(buf);
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		exec_valgrind(o, fds[1], argc, argv);
	}
	close(fds[1]);
	in = fdopen(fds[0], "rb");
	if (in == NULL) {
		cxs_set_err(err, errlen, "record: fdopen: %s", strerror(errno));
		close(fds[0]);
		goto reap;
	}
	for (;;) {
		struct cxt_chunk h;
		size_t got = fread(&h, 1, sizeof h, in);
		if (got == 0)
			break;
		if (got != sizeof h || h.magic != CXT_MAGIC) {
			cxs_set_err(terr, sizeof terr, "the tool's stream is damaged (chunk header)");
			break;
		}
		if (h.kind == CXT_RECORDS) {
			if (h.count > CXT_CHUNK_RECORDS ||
			    fread(buf, sizeof *buf, h.count, in) != h.count) {
				cxs_set_err(terr, sizeof terr, "the tool's stream is damaged (records)");
				break;
			}
			if (take_records(&s, h.thread, buf, h.count, terr, sizeof terr) != 0)
				break;
		} else if (h.kind == CXT_THREAD_END) {
			if (thread_writer(&s, h.thread, terr, sizeof terr) != 0)
				break;
			s.t[h.thread].ended = true;
		} else if (h.kind == CXT_END) {
			ended = true;
			threads = h.thread;
		} else if (h.kind == CXT_ERROR) {
			char msg[512];
			size_t n = h.count < sizeof msg - 1 ? h.count : sizeof msg - 1;
			if (fread(msg, 1, n, in) != n)
				n = 0;
			msg[n] = 0;
			cxs_set_err(terr, sizeof terr, "the tool: %s", msg);
			break;
		} else {
			cxs_set_err(terr, sizeof terr, "the tool's stream is damaged (chunk kind %u)",
				    h.kind);
			break;
		}
	}
reap:
	if (in != NULL)
		fclose(in); /* a tool still writing gets EPIPE and stops */
	while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
		;
	st->status = WIFEXITED(wst) ? WEXITSTATUS(wst) : WIFSIGNALED(wst) ? 128 + WTERMSIG(wst) : 1;
	if (in == NULL)
		goto out;
	if (terr[0]) {
		cxs_set_err(err, errlen, "record: %s", terr);
		goto out;
	}
	if (!ended) {
		cxs_set_err(err, errlen, "record: the stream ended before the tool's end marker"
			    " (valgrind exit status %d: it could not start, crashed, or the program"
			    " exec'ed another one)", st->status);
		goto out;
	}
	for (uint32_t th = 0; th < threads; th++) {
		if (thread_writer(&s, th, err, errlen) != 0)
			goto out;
		if (cxs_trace_writer_close(s.t[th].w, err, errlen) != 0) {
			s.t[th].w = NULL;
			goto out;
		}
		s.t[th].w = NULL;
		char path[PATH_MAX];
		struct stat sb;
		snprintf(path, sizeof path, "%s/core%" PRIu32 ".trace", o->out_dir, th);
		if (stat(path, &sb) == 0)
			st->trace_bytes += (uint64_t)sb.st_size;
	}
	st->threads = threads;
	char lpath[PATH_MAX];
	snprintf(lpath, sizeof lpath, "%s/locks.order", o->out_dir);
	if (cxs_lock_acc_write(s.locks, lpath, threads, &st->lock_turns, terr, sizeof terr) != 0) {
		cxs_set_err(err, errlen, "record: %s", terr);
		goto out;
	}
	if (write_map(&s, threads, err, errlen) != 0 ||
	    write_ini(&s, threads, argc, argv, err, errlen) != 0)
		goto out;
	rc = 0;
out:
	cleanup(&s);
	free(buf);
	return rc;
}
