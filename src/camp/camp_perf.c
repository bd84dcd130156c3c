/*
 * camp_perf.c — reading `perf stat` output of a real machine (camp.h), so
 * that a model fitted on the simulator, or on the user's own calibration
 * runs, applies to the user's server.
 *
 * Two layouts, recognised line by line:
 *
 *   text (perf stat -e A,B -- prog):
 *          1,234,567,890      cycles                 #  3.0 GHz   (50.01%)
 *             23,456,789      cycle_activity.stalls_l3_miss
 *          <not counted>      mem_load_retired.fb_hit
 *         1.002345678 seconds time elapsed
 *     value (thousands separated by ',' or not), optional unit (msec,
 *     ns, ...), event; '#' comments, "(xx.xx%)" multiplexing notes and
 *     "+- x%" repeat deviations after it are ignored. With -A, --per-socket
 *     or --per-thread a leading CPU / socket / thread column comes first;
 *     with -I an interval time does (before the other leading columns).
 *   CSV (perf stat -x,):
 *     value,unit,event,run_time,pct,...   with the same optional leading
 *     columns (CPU0,..., S0,8,..., time,...); perf does not quote, so an
 *     event written cpu/event=..,umask=..,name=X/ spans several fields and
 *     is joined back up to its closing '/'.
 *
 * The event is the name perf printed, reduced to a bare name:
 * cpu/event=0xa3,umask=0x6,cmask=6,name=CYCLE_ACTIVITY.STALLS_L3_MISS/ and
 * uncore_cha_3/...,name=.../ become the name=; cpu/instructions/u becomes
 * instructions; a trailing :u, :k or :p modifier is dropped. Lines of the
 * same event (CPUs, uncore boxes, intervals) are summed. An event perf
 * reported as <not counted> or <not supported> on any line is marked so,
 * with the line, and the model refuses it by name (camp_need).
 *
 * Threads (camp_read_perf_threads): `perf stat --per-thread` starts each
 * line with the thread as COMM-TID (a comm may hold blanks in text; perf
 * does not quote it in CSV, so a comm with a comma is not read as one).
 * Lines that start so are also kept per thread, in order of first
 * appearance; the process's counts are still their sum. A line without a
 * thread (duration_time, or uncore events counted system-wide in the same
 * file) gives every thread that lacks the event the same count, so a
 * ratio of such events (SPR's uncore R_Mem) is the system's for each. A
 * thread's <not counted> means it did not run while perf counted (the
 * idle main thread of a program whose workers do the work): the thread
 * keeps the mark, the process's sum does not (<not supported> it does).
 *
 * Elapsed time: the duration_time event (ns) or the text footer "N seconds
 * time elapsed"; CSV output has no footer, so add -e duration_time there.
 * Errors a user can cause: a file that cannot be read, one where no line
 * names a known value and event, or a value that does not parse (with the
 * line). Lines that name events CAMP does not use are skipped.
 */
#include "cxlsim/camp.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "camp_priv.h"

#define LINE_MAX_BYTES 4096
#define THREAD_KEY_BYTES 256

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	return s;
}

/* Reduces what perf printed to a bare event name, lower case, in place. */
static char *bare_name(char *ev)
{
	char *nm = strstr(ev, "name=");
	if (nm) {
		ev = nm + 5;
		if (*ev == '\'' || *ev == '"')
			ev++;
		ev[strcspn(ev, ",/'\"")] = 0;
	} else {
		char *slash = strchr(ev, '/');
		if (slash) { /* pmu/event/modifiers: the part inside */
			char *end = strchr(slash + 1, '/');
			ev = slash + 1;
			if (end)
				*end = 0;
		}
		char *colon = strrchr(ev, ':');
		if (colon && strlen(colon + 1) <= 3 && strspn(colon + 1, "ukhpPGHISDW") == strlen(colon + 1))
			*colon = 0;
	}
	for (char *p = ev; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return ev;
}

enum val_kind { V_NUMBER, V_NOT_COUNTED, V_NOT_SUPPORTED, V_NONE };

/* A perf value: digits with optional ',' thousands and '.' decimals. */
static enum val_kind parse_value(const char *s, double *v)
{
	if (strncmp(s, "<not counted>", 13) == 0)
		return V_NOT_COUNTED;
	if (strncmp(s, "<not supported>", 15) == 0)
		return V_NOT_SUPPORTED;
	char buf[128];
	size_t n = 0;
	if (!isdigit((unsigned char)*s))
		return V_NONE;
	for (; *s && !isspace((unsigned char)*s) && n + 1 < sizeof buf; s++)
		if (*s != ',')
			buf[n++] = *s;
	buf[n] = 0;
	char *end;
	errno = 0;
	*v = strtod(buf, &end);
	if (end == buf || *end || errno)
		return V_NONE;
	return V_NUMBER;
}

static void record(struct camp_counts *c, enum camp_ev e, enum val_kind k, double v, uint32_t line)
{
	if (k == V_NUMBER) {
		if (c->state[e] == CAMP_NOT_COUNTED || c->state[e] == CAMP_NOT_SUPPORTED)
			return; /* a partly counted event stays refused */
		camp_add(c, e, v);
		if (c->line[e] == 0)
			c->line[e] = line;
		return;
	}
	c->state[e] = k == V_NOT_COUNTED ? CAMP_NOT_COUNTED : CAMP_NOT_SUPPORTED;
	c->line[e] = line;
	c->v[e] = 0;
}

/* What one line says: an event's value, and the thread it is for ("" if none). */
struct hit {
	enum camp_ev e;
	enum val_kind k;
	double v;
	bool footer; /* "N seconds time elapsed": counts only if no duration_time came first */
	char thread[THREAD_KEY_BYTES];
};

/* Whether a leading column is --per-thread's COMM-TID (CPU3, S0, S0-D0-C1 are not). */
static bool thread_column(const char *s)
{
	const char *dash = strrchr(s, '-');
	return dash && dash > s && dash[1] && strspn(dash + 1, "0123456789") == strlen(dash + 1);
}

/*
 * The thread named by the leading columns col[0..n-1] (an interval time
 * first is skipped), joined by sep; "" when the last is no COMM-TID.
 */
static void thread_key(char *const *col, int n, char sep, char *out)
{
	double t;
	out[0] = 0;
	if (n == 0 || !thread_column(col[n - 1]))
		return;
	int from = n > 1 && parse_value(col[0], &t) == V_NUMBER ? 1 : 0;
	size_t len = 0;
	for (int j = from; j < n && len + 1 < THREAD_KEY_BYTES; j++)
		len += (size_t)snprintf(out + len, THREAD_KEY_BYTES - len, "%s%s", j > from ? (char[]){sep, 0} : "",
					col[j]);
}

/* CSV: the first field i <= 5 that is a value with an event name two fields on. */
static bool csv_line(char *line, char sep, struct hit *h)
{
	char *f[32];
	int n = 0;
	for (char *p = line; n < 32;) {
		f[n++] = p;
		char *q = strchr(p, sep);
		if (!q)
			break;
		*q = 0;
		p = q + 1;
	}
	for (int i = 0; i + 2 < n && i <= 5; i++) {
		double v = 0;
		enum val_kind k = parse_value(trim(f[i]), &v);
		char *ev = trim(f[i + 2]);
		if (k == V_NONE || !*ev || isdigit((unsigned char)*ev))
			continue;
		/*
		 * perf does not quote: cpu/event=0xa3,umask=0x6,name=X/ arrives split
		 * at its commas. Rejoin the fields up to the closing '/'.
		 */
		char joined[LINE_MAX_BYTES];
		char *slash = strchr(ev, '/');
		if (slash && !strchr(slash + 1, '/')) {
			size_t len = (size_t)snprintf(joined, sizeof joined, "%s", ev);
			for (int j = i + 3; j < n && len + 1 < sizeof joined; j++) {
				len += (size_t)snprintf(joined + len, sizeof joined - len, ",%s", f[j]);
				if (strchr(f[j], '/'))
					break;
			}
			ev = joined;
		}
		h->e = camp_ev_lookup(bare_name(ev));
		if (h->e == CAMP_NEV)
			continue; /* "time,value,unit,event": the unit is two on from the time */
		h->k = k;
		h->v = v;
		thread_key(f, i, sep, h->thread);
		return true;
	}
	return false;
}

static bool text_line(char *line, struct hit *h)
{
	char *s = trim(line);
	double v;
	if (!*s || *s == '#')
		return false;
	char *hash = strchr(s, '#');
	if (hash)
		*hash = 0;
	char *tok[16];
	int n = 0;
	for (char *p = strtok(s, " \t"); p && n < 16; p = strtok(NULL, " \t"))
		tok[n++] = p;
	/* "N seconds time elapsed" */
	if (n >= 4 && strcmp(tok[1], "seconds") == 0 && strcmp(tok[2], "time") == 0 &&
	    strcmp(tok[3], "elapsed") == 0 && parse_value(tok[0], &v) == V_NUMBER) {
		h->e = CAMP_TIME_NS;
		h->k = V_NUMBER;
		h->v = v * 1e9;
		h->footer = true;
		return true;
	}
	/*
	 * The value comes after the leading columns (interval time, CPU,
	 * socket and its CPU count, thread): the first value token followed by
	 * a known event, or by a unit and a known event. <not counted> is two
	 * tokens.
	 */
	for (int i = 0; i < n && i <= 8; i++) {
		enum val_kind k;
		int at = i;
		if (strcmp(tok[i], "<not") == 0 && i + 1 < n) {
			k = strncmp(tok[i + 1], "counted>", 8) == 0 ? V_NOT_COUNTED
			    : strncmp(tok[i + 1], "supported>", 10) == 0 ? V_NOT_SUPPORTED
									  : V_NONE;
			at = i + 1;
		} else {
			k = parse_value(tok[i], &v);
		}
		if (k == V_NONE || at + 1 >= n)
			continue;
		double dummy;
		if (parse_value(tok[at + 1], &dummy) == V_NUMBER)
			continue; /* a leading column: the value is further on */
		char ev1[LINE_MAX_BYTES];
		snprintf(ev1, sizeof ev1, "%s", tok[at + 1]); /* bare_name writes in place */
		enum camp_ev e = camp_ev_lookup(bare_name(ev1));
		if (e == CAMP_NEV && at + 2 < n) { /* value, unit, event */
			snprintf(ev1, sizeof ev1, "%s", tok[at + 2]);
			e = camp_ev_lookup(bare_name(ev1));
			if (e == CAMP_TIME_NS && strcmp(tok[at + 1], "ns") != 0)
				e = CAMP_NEV;
		}
		if (e == CAMP_NEV)
			continue; /* an interval time before a CPU or thread column, or no event of ours */
		h->e = e;
		h->k = k;
		h->v = v;
		thread_key(tok, i, ' ', h->thread);
		return true;
	}
	return false;
}

/* The threads of a --per-thread file, as they are read. */
struct threads {
	struct camp_counts *c;
	char (*key)[THREAD_KEY_BYTES];
	uint32_t n, cap;
	struct camp_counts none; /* lines without a thread */
};

static struct camp_counts *thread_of(struct threads *t, const char *name, const char *key)
{
	for (uint32_t i = t->n; i-- > 0;) /* the newest first: perf prints a thread's lines together */
		if (strcmp(t->key[i], key) == 0)
			return &t->c[i];
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 16;
		struct camp_counts *c = realloc(t->c, cap * sizeof *c);
		if (c)
			t->c = c;
		char(*k)[THREAD_KEY_BYTES] = realloc(t->key, cap * sizeof *k);
		if (k)
			t->key = k;
		if (!c || !k)
			return NULL;
		t->cap = cap;
	}
	struct camp_counts *c = &t->c[t->n];
	memset(c, 0, sizeof *c);
	snprintf(t->key[t->n++], THREAD_KEY_BYTES, "%s", key);
	snprintf(c->source, sizeof c->source, "%s (thread %s)", name, key); /* messages name it */
	return c;
}

/* Parses text into out (the sum) and, if t, per thread. */
static int parse(const char *name, const char *text, struct camp_counts *out, struct threads *t,
		 char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	snprintf(out->source, sizeof out->source, "%s", name);
	char line[LINE_MAX_BYTES];
	uint32_t lineno = 0;
	int known = 0;
	/* CSV when some line has 3+ separators and no run of blanks between fields. */
	char sep = 0;
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		lineno++;
		if (len >= sizeof line) {
			snprintf(err, errlen, "%s:%u: line longer than %d bytes: not perf stat output",
				 name, lineno, LINE_MAX_BYTES - 1);
			return -1;
		}
		memcpy(line, p, len);
		line[len] = 0;
		if (memchr(line, 0, len) != NULL || (len && strlen(line) != len)) {
			snprintf(err, errlen, "%s:%u: binary data: not perf stat output", name, lineno);
			return -1;
		}
		if (!sep && line[0] != '#') {
			int commas = 0, semis = 0;
			for (char *q = line; *q; q++)
				commas += *q == ',', semis += *q == ';';
			if (semis >= 3 && !strstr(line, "  "))
				sep = ';';
			else if (commas >= 3 && !strstr(line, "  ") && !strstr(line, "\t"))
				sep = ',';
		}
		p = nl ? nl + 1 : p + len;
		struct hit h = {.footer = false};
		if (!(sep && line[0] != '#' ? csv_line(line, sep, &h) : text_line(line, &h)))
			continue;
		known++;
		if (h.footer) {
			if (out->state[CAMP_TIME_NS] == CAMP_ABSENT) {
				camp_add(out, CAMP_TIME_NS, h.v);
				out->line[CAMP_TIME_NS] = lineno;
			}
			continue;
		}
		/*
		 * A thread's <not counted>: it did not run while perf counted
		 * (perf prints so for the idle main thread of a program whose
		 * workers did the work); it adds nothing to the process's count.
		 */
		if (!(h.thread[0] && h.k == V_NOT_COUNTED))
			record(out, h.e, h.k, h.v, lineno);
		if (!t)
			continue;
		struct camp_counts *c = h.thread[0] ? thread_of(t, name, h.thread) : &t->none;
		if (!c) {
			snprintf(err, errlen, "%s: out of memory", name);
			return -1;
		}
		record(c, h.e, h.k, h.v, lineno);
	}
	if (known == 0) {
		snprintf(err, errlen,
			 "%s: no line with a value and an event CAMP reads: not perf stat output "
			 "(expected e.g. '  123,456  cycle_activity.stalls_l3_miss' or CSV from -x,)",
			 name);
		return -1;
	}
	return 0;
}

int camp_parse_perf(const char *name, const char *text, struct camp_counts *out, char *err,
		    size_t errlen)
{
	return parse(name, text, out, NULL, err, errlen);
}

int camp_parse_perf_threads(const char *name, const char *text, struct camp_counts **out,
			    uint32_t *n, char *err, size_t errlen)
{
	struct camp_counts sum;
	struct threads t = {.c = NULL};
	*out = NULL;
	*n = 0;
	int rc = parse(name, text, &sum, &t, err, errlen);
	free(t.key);
	if (rc != 0) {
		free(t.c);
		return -1;
	}
	for (uint32_t i = 0; i < t.n; i++)
		for (int e = 0; e < CAMP_NEV; e++)
			if (t.c[i].state[e] == CAMP_ABSENT && t.none.state[e] != CAMP_ABSENT) {
				t.c[i].v[e] = t.none.v[e];
				t.c[i].state[e] = t.none.state[e];
				t.c[i].line[e] = t.none.line[e];
			}
	*out = t.c;
	*n = t.n;
	return 0;
}

/* The whole file in *buf (NUL-terminated; free()), or -1 with err. */
static int slurp(const char *path, char **buf_out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	*buf_out = NULL;
	if (!f) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	int rc = -1;
	for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
		n += got;
		if (n == cap) {
			if (cap >= (size_t)64 << 20) {
				snprintf(err, errlen, "%s: larger than 64 MiB: not perf stat output", path);
				goto out;
			}
			char *b = realloc(buf, 2 * cap + 1);
			if (!b)
				break;
			buf = b;
			cap *= 2;
		}
	}
	if (!buf) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read error: %s", path, strerror(errno));
		goto out;
	}
	buf[n] = 0;
	if (strlen(buf) != n) {
		snprintf(err, errlen, "%s: binary data: not perf stat output", path);
		goto out;
	}
	*buf_out = buf;
	buf = NULL;
	rc = 0;
out:
	free(buf);
	fclose(f);
	return rc;
}

int camp_read_perf_threads(const char *path, struct camp_counts **out, uint32_t *n, char *err,
			   size_t errlen)
{
	char *buf;
	*out = NULL;
	*n = 0;
	if (slurp(path, &buf, err, errlen) != 0)
		return -1;
	int rc = camp_parse_perf_threads(path, buf, out, n, err, errlen);
	free(buf);
	return rc;
}

int camp_read_perf(const char *path, struct camp_counts *out, char *err, size_t errlen)
{
	char *buf;
	if (slurp(path, &buf, err, errlen) != 0)
		return -1;
	int rc = camp_parse_perf(path, buf, out, err, errlen);
	free(buf);
	return rc;
}
