/*
 * fuzz_trace.c — the binary trace reader (src/workload/trace.c) on arbitrary
 * files: open, then every record to the end.
 *
 * Properties checked beyond not crashing: a refused file gives one line of
 * valid UTF-8 naming it; every record the reader hands out passes the
 * record check (cxs_trace_rec_check); a trace that reads to its end agrees
 * with its header's count; cxs_trace_check gives the same verdict.
 */
#include "harness.h"

#include <string.h>

#include "cxlsim/trace.h"
#include "cxlsim/utf8.h"

static void one_line(const char *err)
{
	harness_assert(err[0] != '\0', "an error without a message");
	harness_assert(strchr(err, '\n') == NULL, "a message of several lines: %s", err);
	harness_assert(cxs_utf8_valid(err), "a message that is not UTF-8");
	harness_assert(strstr(err, "/proc/self/fd/") != NULL, "the message names no file: %s", err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[CXS_TRACE_ERR_MAX] = "", why[CXS_TRACE_ERR_MAX];
	const char *path = harness_file(0, data, size);
	struct cxs_trace_reader *r = cxs_trace_reader_open(path, err, sizeof err);
	struct cxs_trace_summary sum;
	int ok_read = 0, ok_check;
	uint64_t n = 0;

	if (r == NULL) {
		one_line(err);
	} else {
		struct cxs_trace_rec rec;
		int rc;
		uint64_t want = cxs_trace_reader_count(r);

		while ((rc = cxs_trace_reader_next(r, &rec, err, sizeof err)) == 1) {
			harness_assert(cxs_trace_rec_check(&rec, why, sizeof why) == 0,
				       "the reader handed out a bad record: %s", why);
			n++;
		}
		if (rc < 0) {
			one_line(err);
		} else {
			harness_assert(n == want, "read %llu records, the header says %llu",
				       (unsigned long long)n, (unsigned long long)want);
			ok_read = 1;
		}
		cxs_trace_reader_close(r);
	}
	ok_check = cxs_trace_check(path, &sum, err, sizeof err) == 0;
	harness_assert(ok_check == ok_read, "reader and check disagree (%d, %d): %s", ok_read,
		       ok_check, err);
	if (ok_check)
		harness_assert(sum.records == n, "check counted %llu records, the reader %llu",
			       (unsigned long long)sum.records, (unsigned long long)n);
	return 0;
}
