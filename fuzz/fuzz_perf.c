/*
 * fuzz_perf.c — the `perf stat` readers of cxlsim-camp (camp_parse_perf,
 * camp_parse_perf_threads in src/camp/camp_perf.c): a user's file from a
 * real server, text or CSV, per CPU, socket, thread or interval.
 *
 * Properties: both readers accept or refuse the same input, a refusal is
 * one line; per thread, a count is finite and not negative, a thread's
 * source names its file, and a thread's counted event was counted in the
 * process too unless it came from a line without a thread.
 */
#include "harness.h"

#include <math.h>
#include <string.h>

#include "cxlsim/camp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), err[1024] = "", err2[1024] = "";
	harness_assert(text != NULL, "out of memory");
	memcpy(text, data, size);
	text[size] = '\0';
	struct camp_counts sum, *t = NULL;
	uint32_t n = 0;
	int a = camp_parse_perf("fuzz.txt", text, &sum, err, sizeof err);
	int b = camp_parse_perf_threads("fuzz.txt", text, &t, &n, err2, sizeof err2);
	harness_assert(a == b, "the readers disagree: %d / %d (%s / %s)", a, b, err, err2);
	if (a != 0) {
		harness_assert(err[0] && !strchr(err, '\n') && strcmp(err, err2) == 0,
			       "a bad reason: \"%s\" / \"%s\"", err, err2);
		harness_assert(t == NULL && n == 0, "threads after a refusal");
	}
	for (uint32_t i = 0; i < n; i++) {
		harness_assert(strncmp(t[i].source, "fuzz.txt (thread ", 17) == 0, "source %s",
			       t[i].source);
		for (int e = 0; e < CAMP_NEV; e++) {
			/* a count may be as large as perf printed, but never NaN */
			harness_assert(!isnan(t[i].v[e]), "thread %u event %d: NaN", i, e);
			if (t[i].state[e] == CAMP_COUNTED && e != CAMP_TIME_NS)
				harness_assert(sum.state[e] != CAMP_ABSENT,
					       "thread %u counts event %d, the process has no line", i, e);
		}
	}
	free(t);
	free(text);
	return 0;
}
