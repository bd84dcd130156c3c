/*
 * fuzz_trace_text.c — the text form of trace records (cxs_trace_parse_text,
 * cxs_trace_format_text in src/workload/trace.c), line by line.
 *
 * Property: a line that parses is formatted back to text that parses to the
 * same record; one that does not parse says why in one line of valid UTF-8.
 */
#include "harness.h"

#include <string.h>

#include "cxlsim/trace.h"
#include "cxlsim/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t start = 0;

	while (start <= size) {
		size_t end = start;
		while (end < size && data[end] != '\n')
			end++;
		char *line = malloc(end - start + 1), why[CXS_TRACE_ERR_MAX] = "", text[CXS_TRACE_TEXT_MAX];
		struct cxs_trace_rec a, b;
		harness_assert(line != NULL, "out of memory");
		memcpy(line, data + start, end - start);
		line[end - start] = '\0';
		int rc = cxs_trace_parse_text(line, &a, why, sizeof why);
		if (rc == 1) {
			cxs_trace_format_text(&a, text, sizeof text);
			harness_assert(cxs_trace_parse_text(text, &b, why, sizeof why) == 1,
				       "\"%s\" formats as \"%s\", which does not parse: %s", line, text,
				       why);
			harness_assert(a.op == b.op && a.size == b.size && a.gap == b.gap &&
					       a.addr == b.addr && a.value == b.value,
				       "\"%s\" does not read back the same", text);
		} else if (rc < 0) {
			harness_assert(why[0] != '\0' && strchr(why, '\n') == NULL,
				       "a bad reason for \"%s\"", line);
		}
		free(line);
		start = end + 1;
	}
	return 0;
}
