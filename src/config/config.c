/*
 * config.c — typed, schema-checked configuration (API in include/cxlsim/config.h).
 *
 * What it holds
 * -------------
 * One entry per registered key, in registration order. An entry is a shallow
 * copy of the module's struct cxs_cfg_key plus the current value three ways:
 *
 *     text    the value as written (trimmed); NULL while a required key is unset
 *     val     the parsed value (uint/time/size in u, int in i, ... enum index in e)
 *     origin  "file:line" or "--set"; NULL means the default is in force
 *
 * Invariant: text != NULL implies val is text parsed as the key's type and
 * inside its range. Every assignment parses into a temporary first, so a
 * rejected value never disturbs the previous one. Precedence is simply the
 * order of assignment: defaults (at registration), then files in the order
 * loaded, then --set in command-line order; a later assignment of the same key
 * wins, in the same file or not.
 *
 * Where a value comes from
 * ------------------------
 *
 *   file --slurp--> read_line -----one clean line-----> inih --(sect,key,val)--> on_pair
 *                   counts lines, refuses NUL and bare CR,                       finds the key,
 *                   strips comments, checks [section] and '='                    suggests a name
 *                                                                                       |
 *   --set "s.k=v" --> cxs_config_set (splits at '=' and the first '.') ----------> apply (parse,
 *                                                                                  range, store)
 *
 * Why our own reader in front of ini_parse_stream: inih's handler is not told
 * the line number (Debian builds it with INI_HANDLER_LINENO 0), so the reader
 * counts physical lines and the handler reads the count; inih calls the
 * handler for a line before it asks for the next one. The reader also hands
 * inih lines that mean the same under any of inih's options, which Debian
 * turns into process-wide globals that we must not touch:
 *   - comments start at ';' or '#' at the start of a line or after white
 *     space and are removed here (inih strips only " ;" inline, so
 *     "x = 5 # note" would otherwise reach us as "5 # note");
 *   - leading white space is removed, which disables inih's multi-line
 *     continuation: an indented stray line would otherwise silently become a
 *     new value of the previous key;
 *   - "[section]" lines are checked here, because inih never calls the handler
 *     for a section line, so an unknown empty section would go unreported and
 *     an error in the first key would point at the wrong line; the name is
 *     trimmed, which inih does not do;
 *   - a line must be "key = value": inih would also take "key: value", which
 *     dumps would never write and users rarely mean.
 * The reader stops (returns EOF) after the first error so the message is about
 * the first problem and the configuration is left as of the line before it.
 *
 * What a file is (slurp): a regular file or a pipe, at most 16 MiB, read whole
 * before parsing. A device (/dev/zero would be read for ever), a socket or a
 * directory is refused by name; a pipe is polled for at most 10 s, so a FIFO
 * that nobody writes ends in an error rather than a hang. Bytes are checked
 * before inih sees them (read_line): a NUL or a CR that does not end its
 * line is an error with line and column, since C strings would silently cut
 * the value at the NUL and CR-only line endings make the file one long
 * (comment) line; string values must be UTF-8, because they are stored as
 * UTF-8 in the output file.
 *
 * Limits come from inih: a section name is copied into char[50] (MAX_SECTION),
 * so names are at most NAME_MAX_CHARS = 49 characters, checked at
 * registration; a line, after comments are removed, is at most INI_MAX_LINE - 3
 * = 197 characters (room for "\r\n\0"), checked by the reader rather than let
 * inih split it into two lines.
 *
 * The dump invariant: loading cxs_config_dump(cfg) into a fresh configuration
 * with the same keys gives identical values. Numbers are written canonically
 * (times and sizes in the largest unit that is exact, doubles with the fewest
 * digits that read back to the same bits), so only strings could break it;
 * that is why a string value may not contain control characters, leading or
 * trailing blanks, ';' or '#' where a comment could start, or be too long to
 * fit in a line, wherever it comes from.
 *
 * Lookups are linear scans. A simulator has a few hundred keys that are read
 * once at start-up, never in the event loop, and registration order has to be
 * kept for dump and help anyway.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* open_memstream, strdup, strnlen, strcasecmp */
#endif

#include "cxlsim/errmsg.h"
#include "cxlsim/config.h"
#include "cxlsim/utf8.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <ini.h>

#define NAME_MAX_CHARS 49                 /* inih's MAX_SECTION (50) minus the NUL */
#define LINE_MAX_CHARS (INI_MAX_LINE - 3) /* inih's line buffer minus "\r\n\0" */
#define SUGGEST_MAX_DIST 2                /* farther names are not what the user meant */
#define QUOTE_MAX 80                      /* characters of a user's text echoed in a message */
#define QUOTE_BUF (4 * QUOTE_MAX + 4)     /* each may become "\xNN"; then "..." */
#define VALUE_BUF 256                     /* one canonical value */
#define WHAT_BUF 192                      /* "expected ..." part of a message */
#define FILE_MAX_BYTES (16u << 20)        /* a configuration is a few KiB; this is not one */
#define PIPE_WAIT_S 10                    /* a pipe's writer writes at once, or never */

_Static_assert(VALUE_BUF > LINE_MAX_CHARS, "a string value must fit in a value buffer");

union value {
	uint64_t u; /* uint; time in ps; size in bytes */
	int64_t i;
	double d;
	bool b;
	unsigned e; /* enum: index into choices */
};

struct entry {
	struct cxs_cfg_key key; /* shallow copy: the strings stay the module's */
	char *text;             /* as written, trimmed; NULL = required and unset */
	union value val;
	char *origin;           /* "file:line" or "--set"; NULL = default */
};

struct cxs_config {
	struct entry *entries; /* registration order, which dump and help follow */
	size_t n, cap;
};

/* For messages: "a time", "an enum". */
static const char *const type_phrases[] = {
	[CXS_CFG_UINT] = "a uint",   [CXS_CFG_INT] = "an int",   [CXS_CFG_DOUBLE] = "a double",
	[CXS_CFG_BOOL] = "a bool",   [CXS_CFG_TIME] = "a time",  [CXS_CFG_SIZE] = "a size",
	[CXS_CFG_ENUM] = "an enum",  [CXS_CFG_STRING] = "a string",
};

static const char *const type_names[] = {
	[CXS_CFG_UINT] = "uint",   [CXS_CFG_INT] = "int",   [CXS_CFG_DOUBLE] = "double",
	[CXS_CFG_BOOL] = "bool",   [CXS_CFG_TIME] = "time", [CXS_CFG_SIZE] = "size",
	[CXS_CFG_ENUM] = "enum",   [CXS_CFG_STRING] = "string",
};

/* Time units, largest first so that formatting picks the largest exact one. */
static const struct {
	const char *name;
	unsigned exp10; /* picoseconds per unit = 10^exp10 */
} time_units[] = {
	{ "s", 12 }, { "ms", 9 }, { "us", 6 }, { "ns", 3 }, { "ps", 0 },
};

static const struct {
	const char *name;
	unsigned shift; /* bytes per unit = 2^shift */
} size_units[] = {
	{ "GiB", 30 }, { "MiB", 20 }, { "KiB", 10 }, { "B", 0 },
};

static const struct {
	const char *yes, *no;
} bool_words[] = {
	{ "true", "false" }, { "yes", "no" }, { "on", "off" }, { "1", "0" },
};

/* ---- small helpers ------------------------------------------------------ */

/* A malloc'd, formatted string; NULL when memory runs out. */
static char *fmt_alloc(const char *fmt, ...)
{
	va_list ap;
	int n;
	char *s;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	s = malloc((size_t)n + 1);
	if (s == NULL)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

/*
 * Copies at most max_in bytes of s into dst so that it can be echoed in a
 * one-line message: control characters, bytes that are not well-formed UTF-8
 * (utf8.h), '"' and '\\' are escaped, and "..." marks a cut. dst must hold
 * 4 * max_in + 4 bytes.
 */
static void escape(char *dst, size_t n, const char *s, size_t max_in)
{
	size_t o = 0, i;

	assert(n >= 4 * max_in + 4);
	for (i = 0; i < max_in && s[i] != '\0'; i++) {
		unsigned char c = (unsigned char)s[i];
		size_t k;

		if (c == '"' || c == '\\') {
			dst[o++] = '\\';
			dst[o++] = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			o += (size_t)snprintf(dst + o, n - o, "\\x%02x", c);
		} else if (c < 0x80) {
			dst[o++] = (char)c;
		} else if ((k = cxs_utf8_seq((const unsigned char *)s + i,
					     strnlen(s + i, max_in - i))) > 0) {
			memcpy(dst + o, s + i, k); /* valid UTF-8 stays readable */
			o += k;
			i += k - 1;
		} else {
			o += (size_t)snprintf(dst + o, n - o, "\\x%02x", c);
		}
	}
	if (s[i] != '\0') {
		memcpy(dst + o, "...", 3);
		o += 3;
	}
	dst[o] = '\0';
}

static char *escape_alloc(const char *s)
{
	size_t len = strlen(s);
	char *d = malloc(4 * len + 4);

	if (d != NULL)
		escape(d, 4 * len + 4, s, len);
	return d;
}

/* Trims white space at both ends in place. */
static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	*end = '\0';
	return s;
}

/* Where a comment starts: ';' or '#' first on the line or after white space. */
static char *comment_start(char *s)
{
	char *p;

	for (p = s; *p != '\0'; p++) {
		if ((*p == ';' || *p == '#') && (p == s || isspace((unsigned char)p[-1])))
			return p;
	}
	return NULL;
}

/* Section and key names: letters, digits, '_' and '-'; no '.' so that --set can split. */
static bool valid_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > NAME_MAX_CHARS)
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n;
}

static bool same_str(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

static bool has_range(const struct cxs_cfg_key *k)
{
	return !(k->min == 0 && k->max == 0);
}

static uint64_t pow10u(unsigned e)
{
	uint64_t p = 1;

	while (e-- > 0)
		p *= 10;
	return p;
}

/*
 * Optimal-string-alignment distance (Levenshtein plus adjacent swaps, so
 * "lookahaed" is one edit from "lookahead"). Names longer than any registered
 * name could be are reported as far away.
 */
static unsigned edit_distance(const char *a, const char *b)
{
	unsigned d[NAME_MAX_CHARS + 1][NAME_MAX_CHARS + 1];
	size_t la = strlen(a), lb = strlen(b), i, j;

	if (la > NAME_MAX_CHARS || lb > NAME_MAX_CHARS)
		return UINT_MAX;
	for (i = 0; i <= la; i++)
		d[i][0] = (unsigned)i;
	for (j = 0; j <= lb; j++)
		d[0][j] = (unsigned)j;
	for (i = 1; i <= la; i++) {
		for (j = 1; j <= lb; j++) {
			unsigned cost = a[i - 1] != b[j - 1];
			unsigned best = d[i - 1][j - 1] + cost;

			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[la][lb];
}

/* ---- lookup ------------------------------------------------------------- */

static struct entry *find(const struct cxs_config *cfg, const char *section, const char *key)
{
	size_t i;

	for (i = 0; i < cfg->n; i++) {
		struct entry *e = &cfg->entries[i];

		if (strcmp(e->key.section, section) == 0 && strcmp(e->key.key, key) == 0)
			return e;
	}
	return NULL;
}

static bool section_known(const struct cxs_config *cfg, const char *section)
{
	size_t i;

	for (i = 0; i < cfg->n; i++) {
		if (strcmp(cfg->entries[i].key.section, section) == 0)
			return true;
	}
	return false;
}

/* The closest registered section name, or NULL if none is within reach. Ties go to the first registered. */
static const char *suggest_section(const struct cxs_config *cfg, const char *section)
{
	const char *best = NULL;
	unsigned best_d = SUGGEST_MAX_DIST + 1;
	size_t i;

	for (i = 0; i < cfg->n; i++) {
		unsigned d = edit_distance(section, cfg->entries[i].key.section);

		if (d < best_d) {
			best_d = d;
			best = cfg->entries[i].key.section;
		}
	}
	return best;
}

static const char *suggest_key(const struct cxs_config *cfg, const char *section, const char *key)
{
	const char *best = NULL;
	unsigned best_d = SUGGEST_MAX_DIST + 1;
	size_t i;

	for (i = 0; i < cfg->n; i++) {
		const struct entry *e = &cfg->entries[i];
		unsigned d;

		if (strcmp(e->key.section, section) != 0)
			continue;
		d = edit_distance(key, e->key.key);
		if (d < best_d) {
			best_d = d;
			best = e->key.key;
		}
	}
	return best;
}

/* "PREFIX: unknown section [x]" with a suggestion when one is close. */
static void unknown_section(const struct cxs_config *cfg, const char *prefix, const char *section,
			    char *err, size_t errlen)
{
	char name[QUOTE_BUF];
	const char *s = suggest_section(cfg, section);

	escape(name, sizeof(name), section, QUOTE_MAX);
	if (s != NULL)
		cxs_set_err(err, errlen, "%s: unknown section [%s] (did you mean [%s]?)", prefix, name, s);
	else
		cxs_set_err(err, errlen, "%s: unknown section [%s]", prefix, name);
}

static void unknown_key(const struct cxs_config *cfg, const char *prefix, const char *section,
			const char *key, char *err, size_t errlen)
{
	char name[QUOTE_BUF];
	const char *s = suggest_key(cfg, section, key);

	/* section is registered, hence a valid name; key is the user's and may be anything */
	escape(name, sizeof(name), key, QUOTE_MAX);
	if (s != NULL)
		cxs_set_err(err, errlen, "%s: unknown key %s.%s (did you mean %s.%s?)", prefix, section, name,
			section, s);
	else
		cxs_set_err(err, errlen, "%s: unknown key %s.%s", prefix, section, name);
}

/* ---- parsing values ----------------------------------------------------- */

enum num_status { NUM_OK, NUM_SYNTAX, NUM_OVERFLOW, NUM_FRACTION };

/*
 * Digits s[0..n) in base 10 or 16, nothing else (strtoull would also take
 * blanks, a sign, and wrap "-1" to 2^64 - 1). Syntax is judged before overflow.
 */
static enum num_status parse_digits(const char *s, size_t n, unsigned base, uint64_t *out)
{
	uint64_t v = 0;
	bool overflow = false;
	size_t i;

	if (n == 0)
		return NUM_SYNTAX;
	for (i = 0; i < n; i++) {
		unsigned c = (unsigned char)s[i], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return NUM_SYNTAX;
		if (v > (UINT64_MAX - d) / base)
			overflow = true;
		else
			v = v * base + d;
	}
	if (overflow)
		return NUM_OVERFLOW;
	*out = v;
	return NUM_OK;
}

/* Decimal or 0x-hex digits, no suffix. */
static enum num_status parse_integer(const char *s, size_t n, uint64_t *out)
{
	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return parse_digits(s + 2, n - 2, 16, out);
	return parse_digits(s, n, 10, out);
}

/*
 * "I[.F]" in s[0..n) times 10^exp10, exactly: digits of F beyond the exp10-th
 * must be zero, or the value is not a whole number of the base unit.
 */
static enum num_status parse_decimal(const char *s, size_t n, unsigned exp10, uint64_t *out)
{
	const char *dot = memchr(s, '.', n);
	size_t ni = dot != NULL ? (size_t)(dot - s) : n;
	size_t nf = dot != NULL ? n - ni - 1 : 0;
	uint64_t ip = 0, fp = 0, scale = pow10u(exp10), v, add;
	unsigned k = 0;
	bool inexact = false;
	enum num_status st;
	size_t i;

	if (dot != NULL && (nf == 0 || strspn(dot + 1, "0123456789") < nf))
		return NUM_SYNTAX;
	st = parse_digits(s, ni, 10, &ip);
	if (st == NUM_SYNTAX)
		return st;
	for (i = 0; i < nf; i++) {
		unsigned d = (unsigned)(dot[1 + i] - '0');

		if (k < exp10) {
			fp = fp * 10 + d;
			k++;
		} else if (d != 0) {
			inexact = true;
		}
	}
	if (inexact)
		return NUM_FRACTION;
	if (st == NUM_OVERFLOW || ip > UINT64_MAX / scale)
		return NUM_OVERFLOW;
	v = ip * scale;
	add = fp * pow10u(exp10 - k);
	if (v > UINT64_MAX - add)
		return NUM_OVERFLOW;
	*out = v + add;
	return NUM_OK;
}

static void format_double(double d, char *buf, size_t n)
{
	int prec;

	/* the fewest digits that read back to the same double, so dumps round-trip */
	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, n, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			return;
	}
	snprintf(buf, n, "%.17g", d);
}

static void format_time(uint64_t ps, char *buf, size_t n)
{
	size_t i;

	for (i = 0; i < sizeof(time_units) / sizeof(time_units[0]); i++) {
		uint64_t unit = pow10u(time_units[i].exp10);

		if (ps >= unit && ps % unit == 0) {
			snprintf(buf, n, "%" PRIu64 "%s", ps / unit, time_units[i].name);
			return;
		}
	}
	snprintf(buf, n, "%" PRIu64 "ps", ps);
}

static void format_size(uint64_t bytes, char *buf, size_t n)
{
	size_t i;

	for (i = 0; i < sizeof(size_units) / sizeof(size_units[0]); i++) {
		uint64_t unit = (uint64_t)1 << size_units[i].shift;

		if (bytes >= unit && bytes % unit == 0) {
			snprintf(buf, n, "%" PRIu64 "%s", bytes / unit, size_units[i].name);
			return;
		}
	}
	snprintf(buf, n, "%" PRIu64 "B", bytes);
}

/* A range bound in the key's own notation: "[1ns, 1ms]" rather than "[1000, 1e+09]". */
static void format_bound(enum cxs_cfg_type type, double x, char *buf, size_t n)
{
	bool integral = x == floor(x);

	if ((type == CXS_CFG_TIME || type == CXS_CFG_SIZE) && integral && x >= 0 &&
	    x < 18446744073709551616.0) {
		if (type == CXS_CFG_TIME)
			format_time((uint64_t)x, buf, n);
		else
			format_size((uint64_t)x, buf, n);
	} else if ((type == CXS_CFG_UINT || type == CXS_CFG_INT) && integral &&
		   fabs(x) < 9223372036854775808.0) {
		snprintf(buf, n, "%" PRId64, (int64_t)x);
	} else {
		format_double(x, buf, n);
	}
}

/* The nth word of "a|b|c" (length in *len), or NULL past the end. */
static const char *choice(const char *choices, unsigned idx, size_t *len)
{
	const char *p = choices;

	while (idx-- > 0) {
		p = strchr(p, '|');
		if (p == NULL)
			return NULL;
		p++;
	}
	*len = strcspn(p, "|");
	return p;
}

/* The canonical text of a value: what dump writes and help shows. */
static const char *format_value(const struct cxs_cfg_key *k, const union value *v, const char *text,
				char *buf, size_t n)
{
	const char *w;
	size_t len = 0;

	switch (k->type) {
	case CXS_CFG_UINT:
		snprintf(buf, n, "%" PRIu64, v->u);
		break;
	case CXS_CFG_INT:
		snprintf(buf, n, "%" PRId64, v->i);
		break;
	case CXS_CFG_DOUBLE:
		format_double(v->d, buf, n);
		break;
	case CXS_CFG_BOOL:
		snprintf(buf, n, "%s", v->b ? "true" : "false");
		break;
	case CXS_CFG_TIME:
		format_time(v->u, buf, n);
		break;
	case CXS_CFG_SIZE:
		format_size(v->u, buf, n);
		break;
	case CXS_CFG_ENUM:
		w = choice(k->choices, v->e, &len);
		assert(w != NULL);
		snprintf(buf, n, "%.*s", (int)len, w);
		break;
	case CXS_CFG_STRING:
		return text;
	}
	return buf;
}

/*
 * Whether a string survives being written as "key = text" and read back:
 * see the header comment. On failure, says what was expected.
 */
static bool writable_string(const struct cxs_cfg_key *k, const char *text, char *what, size_t whatlen)
{
	size_t len = strlen(text), i;
	char tmp[LINE_MAX_CHARS + 1];

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c < 0x20 || c == 0x7f) {
			snprintf(what, whatlen, "expected text without control characters");
			return false;
		}
	}
	if (!cxs_utf8_valid(text)) {
		/* it would be stored in the output file as UTF-8, which readers reject */
		snprintf(what, whatlen, "expected UTF-8 text");
		return false;
	}
	if (len > 0 && (isspace((unsigned char)text[0]) || isspace((unsigned char)text[len - 1]))) {
		snprintf(what, whatlen, "expected text without leading or trailing blanks");
		return false;
	}
	if (strlen(k->key) + 1 + len > LINE_MAX_CHARS) {
		snprintf(what, whatlen, "expected at most %zu characters",
			 LINE_MAX_CHARS - 1 - strlen(k->key));
		return false;
	}
	memcpy(tmp, text, len + 1);
	if (comment_start(tmp) != NULL) {
		snprintf(what, whatlen, "expected text without ';' or '#' at its start or after a blank");
		return false;
	}
	return true;
}

/*
 * Parses text as k's type, range included. On failure writes what was
 * expected ("expected a time such as 100ns") to what and returns -1.
 */
static int parse_value(const struct cxs_cfg_key *k, const char *text, union value *v, char *what,
		       size_t whatlen)
{
	size_t n = strlen(text), i, len;
	enum num_status st;
	const char *unit;
	double x = 0;
	uint64_t mult;

	switch (k->type) {
	case CXS_CFG_UINT:
		mult = 1;
		if (n > 0 && (text[n - 1] == 'k' || text[n - 1] == 'K'))
			mult = 1000;
		else if (n > 0 && text[n - 1] == 'M')
			mult = 1000000;
		else if (n > 0 && text[n - 1] == 'G')
			mult = 1000000000;
		st = parse_integer(text, mult == 1 ? n : n - 1, &v->u);
		if (st == NUM_OK && v->u > UINT64_MAX / mult)
			st = NUM_OVERFLOW;
		if (st == NUM_SYNTAX) {
			snprintf(what, whatlen,
				 "expected a non-negative integer such as 42, 0x2a or 4k");
			return -1;
		}
		if (st == NUM_OVERFLOW) {
			snprintf(what, whatlen, "expected an integer below 2^64");
			return -1;
		}
		v->u *= mult;
		x = (double)v->u;
		break;
	case CXS_CFG_INT: {
		bool neg = text[0] == '-';
		uint64_t mag;

		i = (text[0] == '-' || text[0] == '+') ? 1 : 0;
		st = parse_integer(text + i, n - i, &mag);
		if (st == NUM_OK && mag > (neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX))
			st = NUM_OVERFLOW;
		if (st == NUM_SYNTAX) {
			snprintf(what, whatlen, "expected an integer such as -3");
			return -1;
		}
		if (st == NUM_OVERFLOW) {
			snprintf(what, whatlen, "expected an integer in [-2^63, 2^63 - 1]");
			return -1;
		}
		/* -(2^63) does not fit before negation; build it from INT64_MIN */
		if (neg)
			v->i = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
		else
			v->i = (int64_t)mag;
		x = (double)v->i;
		break;
	}
	case CXS_CFG_DOUBLE: {
		char *end;

		/* strtod follows LC_NUMERIC; cxlsim never calls setlocale, so '.' it is */
		errno = 0;
		v->d = n > 0 && !isspace((unsigned char)text[0]) ? strtod(text, &end) : NAN;
		if (n == 0 || isspace((unsigned char)text[0]) || *end != '\0' || !isfinite(v->d)) {
			snprintf(what, whatlen, "expected a finite number such as 0.25 or 1e-3");
			return -1;
		}
		x = v->d;
		break;
	}
	case CXS_CFG_BOOL:
		for (i = 0; i < sizeof(bool_words) / sizeof(bool_words[0]); i++) {
			if (strcasecmp(text, bool_words[i].yes) == 0) {
				v->b = true;
				return 0;
			}
			if (strcasecmp(text, bool_words[i].no) == 0) {
				v->b = false;
				return 0;
			}
		}
		snprintf(what, whatlen, "expected true/false, yes/no, on/off or 1/0");
		return -1;
	case CXS_CFG_TIME: {
		size_t nlen = strspn(text, "0123456789.");
		unsigned exp10 = 0;
		bool unit_ok = false;

		unit = text + nlen;
		while (*unit == ' ' || *unit == '\t')
			unit++;
		if (*unit == '\0')
			unit_ok = true; /* a bare number is picoseconds */
		for (i = 0; !unit_ok && i < sizeof(time_units) / sizeof(time_units[0]); i++) {
			if (strcmp(unit, time_units[i].name) == 0) {
				exp10 = time_units[i].exp10;
				unit_ok = true;
			}
		}
		st = unit_ok ? parse_decimal(text, nlen, exp10, &v->u) : NUM_SYNTAX;
		if (st == NUM_SYNTAX) {
			snprintf(what, whatlen,
				 "expected a time such as 100ns (units ps, ns, us, ms, s)");
			return -1;
		}
		if (st == NUM_FRACTION) {
			snprintf(what, whatlen, "expected a whole number of picoseconds");
			return -1;
		}
		if (st == NUM_OVERFLOW) {
			snprintf(what, whatlen,
				 "expected a time of at most 18446744073709551615ps (213 days)");
			return -1;
		}
		x = (double)v->u;
		break;
	}
	case CXS_CFG_SIZE: {
		size_t nlen = strspn(text, "0123456789");
		unsigned shift = 0;
		bool unit_ok = false;

		unit = text + nlen;
		while (*unit == ' ' || *unit == '\t')
			unit++;
		if (*unit == '\0')
			unit_ok = true; /* a bare number is bytes */
		for (i = 0; !unit_ok && i < sizeof(size_units) / sizeof(size_units[0]); i++) {
			if (strcmp(unit, size_units[i].name) == 0) {
				shift = size_units[i].shift;
				unit_ok = true;
			}
		}
		st = unit_ok ? parse_digits(text, nlen, 10, &v->u) : NUM_SYNTAX;
		if (st == NUM_OK && v->u > UINT64_MAX >> shift)
			st = NUM_OVERFLOW;
		if (st == NUM_SYNTAX) {
			snprintf(what, whatlen,
				 "expected a size such as 48KiB (a whole number; units B, KiB, MiB, GiB)");
			return -1;
		}
		if (st == NUM_OVERFLOW) {
			snprintf(what, whatlen, "expected a size below 2^64 bytes");
			return -1;
		}
		v->u <<= shift;
		x = (double)v->u;
		break;
	}
	case CXS_CFG_ENUM:
		for (i = 0; (unit = choice(k->choices, (unsigned)i, &len)) != NULL; i++) {
			if (len == n && strncmp(unit, text, n) == 0) {
				v->e = (unsigned)i;
				return 0;
			}
		}
		snprintf(what, whatlen, "expected one of %s", k->choices);
		return -1;
	case CXS_CFG_STRING:
		return writable_string(k, text, what, whatlen) ? 0 : -1;
	}
	if (has_range(k) && (x < k->min || x > k->max)) {
		char lo[64], hi[64];

		format_bound(k->type, k->min, lo, sizeof(lo));
		format_bound(k->type, k->max, hi, sizeof(hi));
		snprintf(what, whatlen, "expected a value in [%s, %s]", lo, hi);
		return -1;
	}
	return 0;
}

/*
 * Assigns text to e. where prefixes any message ("file:line" or "--set") and
 * becomes the value's origin. A rejected value leaves e as it was.
 */
static int apply(struct entry *e, const char *text, const char *where, char *err, size_t errlen)
{
	char what[WHAT_BUF], got[QUOTE_BUF];
	char *t = NULL, *o = NULL;
	union value v;
	int rc = -1;

	if (parse_value(&e->key, text, &v, what, sizeof(what)) != 0) {
		escape(got, sizeof(got), text, QUOTE_MAX);
		cxs_set_err(err, errlen, "%s: %s.%s: %s, got \"%s\"", where, e->key.section, e->key.key,
			what, got);
		goto out;
	}
	t = strdup(text);
	o = strdup(where);
	if (t == NULL || o == NULL) {
		cxs_set_err(err, errlen, "%s: %s.%s: out of memory", where, e->key.section, e->key.key);
		goto out;
	}
	free(e->text);
	free(e->origin);
	e->text = t;
	e->origin = o;
	e->val = v;
	t = o = NULL;
	rc = 0;
out:
	free(t);
	free(o);
	return rc;
}

/* ---- lifecycle and registration ----------------------------------------- */

struct cxs_config *cxs_config_new(void)
{
	return calloc(1, sizeof(struct cxs_config));
}

void cxs_config_free(struct cxs_config *cfg)
{
	size_t i;

	if (cfg == NULL)
		return;
	for (i = 0; i < cfg->n; i++) {
		free(cfg->entries[i].text);
		free(cfg->entries[i].origin);
	}
	free(cfg->entries);
	free(cfg);
}

/* Checks one table row on its own (names, type, choices, range, default). */
static int check_key(const struct cxs_cfg_key *k, char *what, size_t whatlen)
{
	union value v;
	char sub[WHAT_BUF], got[QUOTE_BUF];

	if ((unsigned)k->type > CXS_CFG_STRING) {
		snprintf(what, whatlen, "unknown type %d", (int)k->type);
		return -1;
	}
	if (k->type == CXS_CFG_ENUM) {
		size_t i, len;
		const char *w;

		if (k->choices == NULL || k->choices[0] == '\0') {
			snprintf(what, whatlen, "enum without choices");
			return -1;
		}
		for (i = 0; (w = choice(k->choices, (unsigned)i, &len)) != NULL; i++) {
			if (len == 0) {
				snprintf(what, whatlen, "empty word in choices \"%s\"", k->choices);
				return -1;
			}
		}
	} else if (k->choices != NULL) {
		snprintf(what, whatlen, "choices given for %s", type_phrases[k->type]);
		return -1;
	}
	if (has_range(k)) {
		bool numeric = k->type == CXS_CFG_UINT || k->type == CXS_CFG_INT ||
			       k->type == CXS_CFG_DOUBLE || k->type == CXS_CFG_TIME ||
			       k->type == CXS_CFG_SIZE;
		bool is_unsigned = k->type == CXS_CFG_UINT || k->type == CXS_CFG_TIME ||
				   k->type == CXS_CFG_SIZE;

		if (!numeric) {
			snprintf(what, whatlen, "range given for %s", type_phrases[k->type]);
			return -1;
		}
		if (!(k->min <= k->max)) { /* also catches NaN */
			snprintf(what, whatlen, "range [%g, %g] is empty", k->min, k->max);
			return -1;
		}
		if (is_unsigned && k->min < 0) {
			snprintf(what, whatlen, "negative lower bound %g for %s", k->min,
				 type_phrases[k->type]);
			return -1;
		}
	}
	if (k->def != NULL && parse_value(k, k->def, &v, sub, sizeof(sub)) != 0) {
		escape(got, sizeof(got), k->def, QUOTE_MAX);
		snprintf(what, whatlen, "bad default: %s, got \"%s\"", sub, got);
		return -1;
	}
	return 0;
}

static bool same_def(const struct cxs_cfg_key *a, const struct cxs_cfg_key *b)
{
	return a->type == b->type && same_str(a->def, b->def) && same_str(a->choices, b->choices) &&
	       a->min == b->min && a->max == b->max;
}

int cxs_config_register(struct cxs_config *cfg, const struct cxs_cfg_key *keys, size_t n,
			char *err, size_t errlen)
{
	char what[WHAT_BUF + QUOTE_BUF + 32];
	size_t i, j;

	assert(cfg != NULL);
	assert(keys != NULL || n == 0);

	/* all rows are checked before any is added, so a bad table adds nothing */
	for (i = 0; i < n; i++) {
		const struct cxs_cfg_key *k = &keys[i];
		const struct entry *old;

		if (k->section == NULL || k->key == NULL || !valid_name(k->section) ||
		    !valid_name(k->key)) {
			cxs_set_err(err, errlen,
				"cxs_config_register: key %zu: section and key must be 1 to %d "
				"letters, digits, '_' or '-'",
				i, NAME_MAX_CHARS);
			return -1;
		}
		if (check_key(k, what, sizeof(what)) != 0) {
			cxs_set_err(err, errlen, "cxs_config_register: %s.%s: %s", k->section, k->key, what);
			return -1;
		}
		old = find(cfg, k->section, k->key);
		if (old != NULL && !same_def(&old->key, k)) {
			cxs_set_err(err, errlen,
				"cxs_config_register: %s.%s: registered twice with different definitions",
				k->section, k->key);
			return -1;
		}
		for (j = 0; j < i; j++) {
			if (strcmp(keys[j].section, k->section) == 0 &&
			    strcmp(keys[j].key, k->key) == 0 && !same_def(&keys[j], k)) {
				cxs_set_err(err, errlen,
					"cxs_config_register: %s.%s: registered twice with different "
					"definitions",
					k->section, k->key);
				return -1;
			}
		}
	}
	if (cfg->n + n > cfg->cap) {
		size_t cap = cfg->cap > 0 ? cfg->cap : 16;
		struct entry *grown;

		while (cap < cfg->n + n)
			cap *= 2;
		grown = realloc(cfg->entries, cap * sizeof(*grown));
		if (grown == NULL) {
			cxs_set_err(err, errlen, "cxs_config_register: out of memory");
			return -1;
		}
		cfg->entries = grown;
		cfg->cap = cap;
	}
	for (i = 0; i < n; i++) {
		struct entry *e;
		char sub[WHAT_BUF];

		if (find(cfg, keys[i].section, keys[i].key) != NULL)
			continue; /* the same table again, or a repeated row: harmless */
		e = &cfg->entries[cfg->n];
		memset(e, 0, sizeof(*e));
		e->key = keys[i];
		if (keys[i].def != NULL) {
			e->text = strdup(keys[i].def);
			if (e->text == NULL) {
				cxs_set_err(err, errlen, "cxs_config_register: out of memory");
				return -1;
			}
			/* cannot fail: check_key parsed this default above */
			(void)parse_value(&e->key, e->text, &e->val, sub, sizeof(sub));
		}
		cfg->n++;
	}
	return 0;
}

int cxs_config_check_required(const struct cxs_config *cfg, char *err, size_t errlen)
{
	size_t i;

	assert(cfg != NULL);
	for (i = 0; i < cfg->n; i++) {
		const struct entry *e = &cfg->entries[i];

		if (e->text == NULL) {
			cxs_set_err(err, errlen, "missing required key %s.%s", e->key.section, e->key.key);
			return -1;
		}
	}
	return 0;
}

/* ---- files -------------------------------------------------------------- */

struct load_ctx {
	struct cxs_config *cfg;
	const char *data;       /* the whole file (slurp) */
	size_t len, pos;        /* its length; start of the next line */
	char *path;             /* escaped for messages and origins */
	unsigned long lineno;   /* physical line last handed to inih */
	char *buf;              /* the current line, NUL-terminated */
	size_t cap;
	bool failed;            /* an error is in err; stop reading */
	char *err;
	size_t errlen;
};

/* Rejects a line that is neither "[section]" nor "key = value", as inih would, but with the text. */
static char *syntax_error(struct load_ctx *c, const char *line)
{
	char got[QUOTE_BUF];

	escape(got, sizeof(got), line, QUOTE_MAX);
	cxs_set_err(c->err, c->errlen, "%s:%lu: expected \"[section]\" or \"key = value\", got \"%s\"",
		c->path, c->lineno, got);
	c->failed = true;
	return NULL;
}

/*
 * Reads the whole file at path (shown as `shown` in messages) into a malloc'd
 * buffer. Only regular files and pipes are configurations: every rank reads
 * the same path, a device never ends (/dev/zero) and a directory is a typo.
 * A pipe (a FIFO, /dev/stdin from `cat x.ini |`) is read without blocking:
 * it is polled for at most PIPE_WAIT_S, so a FIFO that nobody writes is an
 * error, not a hang (open() itself would block on it without O_NONBLOCK).
 */
static int slurp(const char *path, const char *shown, char **out, size_t *outlen, char *err,
		 size_t errlen)
{
	struct stat sb;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	struct timespec t0, now;
	int fd, rc = -1;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		cxs_set_err(err, errlen, "%s: cannot open: %s", shown, strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb) != 0) {
		cxs_set_err(err, errlen, "%s: cannot stat: %s", shown, strerror(errno));
		goto out;
	}
	if (S_ISDIR(sb.st_mode)) {
		cxs_set_err(err, errlen, "%s: is a directory, not a configuration file", shown);
		goto out;
	}
	if (!S_ISREG(sb.st_mode) && !S_ISFIFO(sb.st_mode)) {
		cxs_set_err(err, errlen,
			    "%s: not a regular file (a %s): a configuration is a file that every "
			    "rank reads", shown,
			    S_ISCHR(sb.st_mode) ? "character device" :
			    S_ISBLK(sb.st_mode) ? "block device" :
			    S_ISSOCK(sb.st_mode) ? "socket" : "special file");
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		ssize_t got;

		if (len == cap) {
			char *grown;

			cap = cap ? 2 * cap : 4096;
			grown = realloc(buf, cap);
			if (grown == NULL) {
				cxs_set_err(err, errlen, "%s: out of memory", shown);
				goto out;
			}
			buf = grown;
		}
		if (S_ISFIFO(sb.st_mode)) {
			struct pollfd pfd = { .fd = fd, .events = POLLIN };
			long left_ms;

			clock_gettime(CLOCK_MONOTONIC, &now);
			left_ms = PIPE_WAIT_S * 1000L - ((now.tv_sec - t0.tv_sec) * 1000L +
							 (now.tv_nsec - t0.tv_nsec) / 1000000L);
			if (left_ms <= 0 || poll(&pfd, 1, (int)left_ms) == 0) {
				cxs_set_err(err, errlen,
					    "%s: a FIFO with nothing to read after %d s (is anything "
					    "writing to it?)", shown, PIPE_WAIT_S);
				goto out;
			}
		}
		got = read(fd, buf + len, cap - len);
		if (got == 0)
			break;
		if (got < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			cxs_set_err(err, errlen, "%s: cannot read: %s", shown, strerror(errno));
			goto out;
		}
		len += (size_t)got;
		if (len > FILE_MAX_BYTES) {
			cxs_set_err(err, errlen, "%s: larger than %u MiB: not a configuration file",
				    shown, FILE_MAX_BYTES >> 20);
			goto out;
		}
	}
	*out = buf;
	*outlen = len;
	buf = NULL;
	rc = 0;
out:
	free(buf);
	close(fd);
	return rc;
}

/*
 * inih's fgets-like reader: returns one physical line, cleaned as described
 * in the header comment, or NULL at the end or once an error has been
 * reported (inih then stops and returns). Before anything else it refuses
 * what would otherwise be read wrongly without a word: a NUL byte (C strings
 * would cut the line there: "lps = 1\0 24" read as 1) and a carriage return
 * that does not end the line (CR-only line endings make the whole file one
 * line, and the first ';' turned it into one long comment). CRLF is fine.
 */
static char *read_line(char *str, int num, void *stream)
{
	struct load_ctx *c = stream;
	size_t n, limit, raw;
	const char *start, *nl, *bad;
	char *s, *cut;

	if (c->failed || c->pos >= c->len)
		return NULL;
	start = c->data + c->pos;
	nl = memchr(start, '\n', c->len - c->pos);
	raw = nl != NULL ? (size_t)(nl - start) : c->len - c->pos;
	c->pos += raw + (nl != NULL);
	c->lineno++;
	if (raw > 0 && start[raw - 1] == '\r')
		raw--; /* CRLF */
	if ((bad = memchr(start, '\0', raw)) != NULL) {
		cxs_set_err(c->err, c->errlen,
			"%s:%lu: NUL byte at column %zu: a configuration file is text (a binary "
			"file?)", c->path, c->lineno, (size_t)(bad - start) + 1);
		c->failed = true;
		return NULL;
	}
	if ((bad = memchr(start, '\r', raw)) != NULL) {
		cxs_set_err(c->err, c->errlen,
			"%s:%lu: carriage return at column %zu that does not end the line: lines "
			"must end in LF or CRLF (CR-only line endings, as classic Mac OS "
			"editors write, make the file one long line)", c->path, c->lineno,
			(size_t)(bad - start) + 1);
		c->failed = true;
		return NULL;
	}
	if (raw + 1 > c->cap) {
		char *grown = realloc(c->buf, raw + 1);

		if (grown == NULL) {
			cxs_set_err(c->err, c->errlen, "%s: out of memory", c->path);
			c->failed = true;
			return NULL;
		}
		c->buf = grown;
		c->cap = raw + 1;
	}
	memcpy(c->buf, start, raw);
	c->buf[raw] = '\0';
	s = c->buf;
	if (c->lineno == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
		s += 3; /* UTF-8 byte order mark */
	cut = comment_start(s);
	if (cut != NULL)
		*cut = '\0';
	s = trim(s);
	n = strlen(s);
	limit = num > 0 && (size_t)num - 1 < LINE_MAX_CHARS ? (size_t)num - 1 : LINE_MAX_CHARS;
	if (n > limit) {
		cxs_set_err(c->err, c->errlen, "%s:%lu: expected a line of at most %zu characters, got %zu",
			c->path, c->lineno, limit, n);
		c->failed = true;
		return NULL;
	}
	if (s[0] == '[') {
		char *close = strchr(s, ']'), *name;

		if (close == NULL || close[1] != '\0')
			return syntax_error(c, s);
		*close = '\0';
		name = trim(s + 1);
		if (name[0] == '\0') {
			*close = ']';
			return syntax_error(c, s);
		}
		if (!section_known(c->cfg, name)) {
			char *prefix = fmt_alloc("%s:%lu", c->path, c->lineno);

			if (prefix == NULL) {
				cxs_set_err(c->err, c->errlen, "%s: out of memory", c->path);
			} else {
				unknown_section(c->cfg, prefix, name, c->err, c->errlen);
				free(prefix);
			}
			c->failed = true;
			return NULL;
		}
		/* hand inih the trimmed name: it keeps "[ engine ]" as " engine " */
		snprintf(str, (size_t)num, "[%s]", name);
		return str;
	}
	if (s[0] != '\0') {
		size_t sep = strcspn(s, "=:");

		/* inih splits at the first '=' or ':'; only '=' is ours, and s is trimmed, so
		 * sep == 0 means no key */
		if (s[sep] != '=' || sep == 0)
			return syntax_error(c, s);
	}
	memcpy(str, s, n + 1);
	return str;
}

static int on_pair(void *user, const char *section, const char *name, const char *value)
{
	struct load_ctx *c = user;
	char *where = fmt_alloc("%s:%lu", c->path, c->lineno);
	char got[QUOTE_BUF];
	struct entry *e;
	int ok = 0;

	if (where == NULL) {
		cxs_set_err(c->err, c->errlen, "%s: out of memory", c->path);
		goto out;
	}
	if (section[0] == '\0') {
		escape(got, sizeof(got), name, QUOTE_MAX);
		cxs_set_err(c->err, c->errlen, "%s: expected a [section] before the first key, got key \"%s\"",
			where, got);
		goto out;
	}
	/* read_line let only registered sections through; this guards a future change there */
	if (!section_known(c->cfg, section)) {
		unknown_section(c->cfg, where, section, c->err, c->errlen);
		goto out;
	}
	e = find(c->cfg, section, name);
	if (e == NULL) {
		unknown_key(c->cfg, where, section, name, c->err, c->errlen);
		goto out;
	}
	if (apply(e, value, where, c->err, c->errlen) != 0)
		goto out;
	ok = 1;
out:
	if (!ok)
		c->failed = true;
	free(where);
	return ok;
}

int cxs_config_load(struct cxs_config *cfg, const char *path, char *err, size_t errlen)
{
	struct load_ctx c = { .cfg = cfg, .err = err, .errlen = errlen };
	char *data = NULL;
	int rc = -1, line;

	assert(cfg != NULL && path != NULL);
	c.path = escape_alloc(path);
	if (c.path == NULL) {
		cxs_set_err(err, errlen, "cxs_config_load: out of memory");
		goto out;
	}
	if (slurp(path, c.path, &data, &c.len, err, errlen) != 0)
		goto out;
	c.data = data;
	line = ini_parse_stream(read_line, &c, on_pair, &c);
	if (c.failed)
		goto out;
	if (line == -2) {
		cxs_set_err(err, errlen, "%s: out of memory", c.path);
		goto out;
	}
	if (line != 0) {
		/* read_line should have caught anything inih rejects; say where, at least */
		cxs_set_err(err, errlen, "%s:%d: syntax error", c.path, line);
		goto out;
	}
	rc = 0;
out:
	free(data);
	free(c.buf);
	free(c.path);
	return rc;
}

/* ---- --set -------------------------------------------------------------- */

int cxs_config_set(struct cxs_config *cfg, const char *assignment, char *err, size_t errlen)
{
	char *copy, *eq, *dot, *section, *key, *value;
	char got[QUOTE_BUF];
	struct entry *e;
	int rc = -1;

	assert(cfg != NULL && assignment != NULL);
	copy = strdup(assignment);
	if (copy == NULL) {
		cxs_set_err(err, errlen, "--set: out of memory");
		goto out;
	}
	eq = strchr(copy, '=');
	dot = eq != NULL ? memchr(copy, '.', (size_t)(eq - copy)) : NULL;
	if (eq == NULL || dot == NULL) {
		escape(got, sizeof(got), assignment, QUOTE_MAX);
		cxs_set_err(err, errlen, "--set: expected section.key=value, got \"%s\"", got);
		goto out;
	}
	*eq = '\0';
	*dot = '\0';
	section = trim(copy);
	key = trim(dot + 1);
	value = trim(eq + 1);
	if (section[0] == '\0' || key[0] == '\0') {
		escape(got, sizeof(got), assignment, QUOTE_MAX);
		cxs_set_err(err, errlen, "--set: expected section.key=value, got \"%s\"", got);
		goto out;
	}
	if (!section_known(cfg, section)) {
		unknown_section(cfg, "--set", section, err, errlen);
		goto out;
	}
	e = find(cfg, section, key);
	if (e == NULL) {
		unknown_key(cfg, "--set", section, key, err, errlen);
		goto out;
	}
	rc = apply(e, value, "--set", err, errlen);
out:
	free(copy);
	return rc;
}

/* ---- getters ------------------------------------------------------------ */

#define ANY_TYPE (-1)

/* A misuse by the calling code, not by the user: stop with the key's name. */
static const struct entry *must_find(const struct cxs_config *cfg, const char *section,
				     const char *key, int want, const char *fn)
{
	const struct entry *e;

	if (cfg == NULL || section == NULL || key == NULL) {
		fprintf(stderr, "cxs_config: %s(%s.%s): null argument\n", fn,
			section != NULL ? section : "(null)", key != NULL ? key : "(null)");
		abort();
	}
	e = find(cfg, section, key);
	if (e == NULL) {
		fprintf(stderr, "cxs_config: %s(%s.%s): key was never registered\n", fn, section, key);
		abort();
	}
	if (want != ANY_TYPE && e->key.type != (enum cxs_cfg_type)want) {
		fprintf(stderr, "cxs_config: %s(%s.%s): key is %s, not %s\n", fn, section, key,
			type_phrases[e->key.type], type_phrases[want]);
		abort();
	}
	if (want != ANY_TYPE && e->text == NULL) {
		fprintf(stderr,
			"cxs_config: %s(%s.%s): required key was never set "
			"(call cxs_config_check_required after loading)\n",
			fn, section, key);
		abort();
	}
	return e;
}

uint64_t cxs_config_uint(const struct cxs_config *cfg, const char *section, const char *key)
{
	return must_find(cfg, section, key, CXS_CFG_UINT, __func__)->val.u;
}

int64_t cxs_config_int(const struct cxs_config *cfg, const char *section, const char *key)
{
	return must_find(cfg, section, key, CXS_CFG_INT, __func__)->val.i;
}

double cxs_config_double(const struct cxs_config *cfg, const char *section, const char *key)
{
	return must_find(cfg, section, key, CXS_CFG_DOUBLE, __func__)->val.d;
}

bool cxs_config_bool(const struct cxs_config *cfg, const char *section, const char *key)
{
	return must_find(cfg, section, key, CXS_CFG_BOOL, __func__)->val.b;
}

uint64_t cxs_config_time_ps(const struct cxs_config *cfg, const char *section, const char *key)
{
	return must_find(cfg, section, key, CXS_CFG_TIME, __func__)->val.u;
}

uint64_t cxs_config_size_bytes(const struct cxs_config *cfg, const char *section, const char *key)
{
	return must_find(cfg, section, key, CXS_CFG_SIZE, __func__)->val.u;
}

unsigned cxs_config_enum(const struct cxs_config *cfg, const char *section, const char *key)
{
	return must_find(cfg, section, key, CXS_CFG_ENUM, __func__)->val.e;
}

const char *cxs_config_str(const struct cxs_config *cfg, const char *section, const char *key)
{
	return must_find(cfg, section, key, CXS_CFG_STRING, __func__)->text;
}

const char *cxs_config_origin(const struct cxs_config *cfg, const char *section, const char *key)
{
	const struct entry *e = must_find(cfg, section, key, ANY_TYPE, __func__);

	if (e->origin != NULL)
		return e->origin;
	return e->text != NULL ? "default" : "unset";
}

/* ---- dump and help ------------------------------------------------------ */

/*
 * Whether entry i is the first of its section. Sections are listed in the
 * order they were first registered, even when tables interleave them; the
 * quadratic scan is over a few hundred keys, once per dump.
 */
static bool first_of_section(const struct cxs_config *cfg, size_t i)
{
	size_t j;

	for (j = 0; j < i; j++) {
		if (strcmp(cfg->entries[j].key.section, cfg->entries[i].key.section) == 0)
			return false;
	}
	return true;
}

char *cxs_config_dump(const struct cxs_config *cfg)
{
	char *buf = NULL;
	size_t len = 0, i, j;
	FILE *f;

	assert(cfg != NULL);
	f = open_memstream(&buf, &len);
	if (f == NULL)
		return NULL;
	fputs("; effective configuration: every key, defaults included\n", f);
	for (i = 0; i < cfg->n; i++) {
		if (!first_of_section(cfg, i))
			continue;
		fprintf(f, "\n[%s]\n", cfg->entries[i].key.section);
		for (j = i; j < cfg->n; j++) {
			const struct entry *e = &cfg->entries[j];
			char vbuf[VALUE_BUF];
			const char *v;

			if (strcmp(e->key.section, cfg->entries[i].key.section) != 0)
				continue;
			if (e->text == NULL) {
				fprintf(f, "; %s is required and was never set\n", e->key.key);
				continue;
			}
			v = format_value(&e->key, &e->val, e->text, vbuf, sizeof(vbuf));
			/* writable_string guarantees "key=value" fits in a line; use the spaces if they fit */
			if (v[0] == '\0')
				fprintf(f, "%s =", e->key.key); /* no trailing blank */
			else if (strlen(e->key.key) + 3 + strlen(v) <= LINE_MAX_CHARS)
				fprintf(f, "%s = %s", e->key.key, v);
			else
				fprintf(f, "%s=%s", e->key.key, v);
			if (e->origin != NULL)
				fprintf(f, " ; from %s", e->origin);
			fputc('\n', f);
		}
	}
	if (ferror(f)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Writes doc wrapped to width columns, each line indented by indent spaces. */
static void wrap(FILE *out, const char *doc, int indent, int width)
{
	const char *p = doc;
	int col = 0;

	while (*p != '\0') {
		size_t w;

		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		w = strcspn(p, " ");
		if (col > 0 && col + 1 + (int)w > width) {
			fputc('\n', out);
			col = 0;
		}
		if (col == 0) {
			fprintf(out, "%*s", indent, "");
			col = indent;
		} else {
			fputc(' ', out);
			col++;
		}
		fprintf(out, "%.*s", (int)w, p);
		col += (int)w;
		p += w;
	}
	if (col > 0)
		fputc('\n', out);
}

/* The default as help shows it: canonical, or a word saying there is none. */
static const char *help_default(const struct cxs_cfg_key *k, char *buf, size_t n)
{
	union value v;
	char what[WHAT_BUF];

	if (k->def == NULL)
		return "(required)";
	if (k->type == CXS_CFG_STRING && k->def[0] == '\0')
		return "\"\"";
	if (parse_value(k, k->def, &v, what, sizeof(what)) != 0)
		return k->def; /* unreachable: register checked it */
	return format_value(k, &v, k->def, buf, n);
}

void cxs_config_help(const struct cxs_config *cfg, FILE *out)
{
	enum { DEF_COL_MAX = 24, DOC_INDENT = 6, WIDTH = 79 };
	int key_w = 0, def_w = 0;
	size_t i, j;

	assert(cfg != NULL && out != NULL);
	for (i = 0; i < cfg->n; i++) {
		char buf[VALUE_BUF];
		int kl = (int)strlen(cfg->entries[i].key.key);
		int dl = (int)strlen(help_default(&cfg->entries[i].key, buf, sizeof(buf)));

		if (kl > key_w)
			key_w = kl;
		if (dl > def_w)
			def_w = dl < DEF_COL_MAX ? dl : DEF_COL_MAX;
	}
	for (i = 0; i < cfg->n; i++) {
		if (!first_of_section(cfg, i))
			continue;
		fprintf(out, "%s[%s]\n", i > 0 ? "\n" : "", cfg->entries[i].key.section);
		for (j = i; j < cfg->n; j++) {
			const struct cxs_cfg_key *k = &cfg->entries[j].key;
			char dbuf[VALUE_BUF], extra[160] = "", line[512];
			size_t len;

			if (strcmp(k->section, cfg->entries[i].key.section) != 0)
				continue;
			if (k->type == CXS_CFG_ENUM) {
				snprintf(extra, sizeof(extra), "one of %s", k->choices);
			} else if (has_range(k)) {
				char lo[64], hi[64];

				format_bound(k->type, k->min, lo, sizeof(lo));
				format_bound(k->type, k->max, hi, sizeof(hi));
				snprintf(extra, sizeof(extra), "in [%s, %s]", lo, hi);
			}
			snprintf(line, sizeof(line), "  %-*s  %-6s  %-*s  %s", key_w, k->key,
				 type_names[k->type], def_w, help_default(k, dbuf, sizeof(dbuf)),
				 extra);
			len = strlen(line);
			while (len > 0 && line[len - 1] == ' ')
				line[--len] = '\0';
			fprintf(out, "%s\n", line);
			wrap(out, k->doc != NULL ? k->doc : "(undocumented)", DOC_INDENT, WIDTH);
		}
	}
}
