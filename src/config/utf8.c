/*
 * utf8.c — well-formed UTF-8 and printable copies of user text (utf8.h).
 *
 * The decoder follows the table of well-formed byte sequences in the Unicode
 * Standard (chapter 3, table 3-7), so overlong forms (C0 80), surrogates
 * (ED A0 80) and code points past U+10FFFF (F4 90 80 80) are refused exactly
 * as Python's decoder refuses them: what passes here is what h5py can read.
 * A few dozen lines did not justify a dependency (glib and ICU are large; iconv
 * cannot say where a sequence ends without converting).
 */
#include "cxlsim/utf8.h"

#include <stdio.h>
#include <string.h>

size_t cxs_utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t len;

	if (n == 0)
		return 0;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0; /* continuation byte, C0/C1 (overlong), F5..FF */
	if (c == 0xe0)
		lo = 0xa0; /* overlong below U+0800 */
	else if (c == 0xed)
		hi = 0x9f; /* surrogates U+D800..U+DFFF */
	else if (c == 0xf0)
		lo = 0x90; /* overlong below U+10000 */
	else if (c == 0xf4)
		hi = 0x8f; /* beyond U+10FFFF */
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

bool cxs_utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);

	while (n > 0) {
		size_t k = cxs_utf8_seq(p, n);

		if (k == 0)
			return false;
		p += k;
		n -= k;
	}
	return true;
}

char *cxs_utf8_printable(char *dst, size_t n, const char *src)
{
	const unsigned char *p = (const unsigned char *)src;
	size_t left = strlen(src), o = 0;

	if (n == 0)
		return dst;
	while (left > 0) {
		size_t k = cxs_utf8_seq(p, left);

		if (k == 1 && (p[0] < 0x20 || p[0] == 0x7f))
			k = 0; /* a control character: escaped like a stray byte */
		if (k == 0) {
			if (o + 4 >= n)
				break;
			snprintf(dst + o, n - o, "\\x%02x", p[0]);
			o += 4;
			p++;
			left--;
			continue;
		}
		if (o + k >= n)
			break;
		memcpy(dst + o, p, k);
		o += k;
		p += k;
		left -= k;
	}
	dst[o] = '\0';
	return dst;
}
