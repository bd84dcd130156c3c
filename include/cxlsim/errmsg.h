/*
 * errmsg.h — writing the one-line message of a user-caused error.
 *
 * Functions that can fail because of what the user gave them (a config key,
 * a trace file, a cache geometry) take `char *err, size_t errlen` and fill it
 * with one line naming the file, line or key and what was expected; the one
 * place that reports it prints it (STYLE.md, "Errors, two tiers").
 */
#ifndef CXLSIM_ERRMSG_H
#define CXLSIM_ERRMSG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* Formats into err (may be NULL or empty: then nothing is written). */
static inline void cxs_set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline void cxs_set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

#endif /* CXLSIM_ERRMSG_H */
