/*
 * utf8.h — user text that is safe to print and to store.
 *
 * A user's bytes (a value, a path, an option) end up in two places that need
 * valid UTF-8: the one-line error messages (terminals and log collectors
 * mangle raw bytes, and a raw 0xff can be half of an escape sequence) and the
 * HDF5 file, whose strings are declared UTF-8 (h5py raises on decoding
 * anything else, so one Latin-1 path would make the whole file unreadable).
 * Valid UTF-8 passes through unchanged (a path in Cyrillic stays readable);
 * everything else, and control characters, become "\xNN".
 */
#ifndef CXLSIM_UTF8_H
#define CXLSIM_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Length of the well-formed UTF-8 sequence at s[0..n) (1 for ASCII), or 0 if
 * the bytes there are not one (stray continuation byte, truncated sequence,
 * overlong form, surrogate, beyond U+10FFFF).
 */
size_t cxs_utf8_seq(const unsigned char *s, size_t n);

/* Whether the NUL-terminated s is well-formed UTF-8. */
bool cxs_utf8_valid(const char *s);

/*
 * Copies src into dst (size n, NUL-terminated, cut if it does not fit, never
 * in the middle of a sequence or an escape) with every byte that is not part
 * of a well-formed sequence, and every control character, as
 * "\xNN". Returns dst.
 */
char *cxs_utf8_printable(char *dst, size_t n, const char *src);

#endif /* CXLSIM_UTF8_H */
