/*
 * trace_program.c — replaying per-core traces (trace.h) on the out-of-order
 * cores: the "trace" kernel, DIKTAMO's method (§VI: traces collected per core
 * with Pin, K non-memory instructions between records at CPI 1).
 *
 * Thread t replays the file made from the path pattern with t in place of
 * "%u" (workload.trace, e.g. "traces/core%u.trace"); a pattern without "%u"
 * gives every thread the same file. Every file is opened and its trailer
 * checked before the run starts, so a missing or damaged trace, one that is
 * not a regular file, or (with "%u") one whose header names another core than
 * its thread, stops the run at once with the file's name; damage found later (a block that does not
 * inflate) stops it with the block and record.
 *
 * Addresses. A trace from a real program (valgrind lackey) carries that
 * process's virtual addresses, so they are folded into the simulated memory:
 *   address >= 2^40 (the CXL window)  shared CXL memory, at
 *                                     (address - 2^40) mod the shared size
 *   anything else                     the thread's private local memory, at
 *                                     address mod the private size
 * with the line offset kept, so locality within lines and pages survives.
 * workload.size is the size of each region in KiB (default 64 MiB).
 *
 * Records: ld issues a load whose value nobody waits for (traces carry no
 * dataflow: loads overlap up to the core's limits); st stores its value; rmw
 * is an atomic swap (drains the store buffer); fence; lock / unlock are the
 * test-and-test-and-set lock on the (folded) address; barrier meets `value`
 * threads (0: all of them) at the address.
 */
#include "cxlsim/kthread.h"
#include "cxlsim/trace.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CXL_WINDOW (UINT64_C(1) << 40)

static int trace_path(const struct cxs_kimage *img, uint32_t t, char *out, size_t len)
{
	const char *pat = img->info;
	const char *u = pat ? strstr(pat, "%u") : NULL;
	if (!pat)
		return snprintf(out, len, "(no workload.trace)");
	if (!u)
		return snprintf(out, len, "%s", pat);
	return snprintf(out, len, "%.*s%u%s", (int)(u - pat), pat, t, u + 2);
}

/* img->info: the path pattern (malloc'd by the caller, freed with the image). */
static int build_trace(struct cxs_kimage *img, char *err, size_t errlen)
{
	if (!img->info) {
		snprintf(err, errlen, "the trace kernel needs workload.trace (a path pattern with %%u)");
		return -1;
	}
	if (img->size < 4 || img->size > (UINT64_C(1) << 24)) {
		snprintf(err, errlen, "size (KiB of each region) must be 4..16777216");
		return -1;
	}
	bool per_core = strstr(img->info, "%u") != NULL;
	for (uint32_t t = 0; t < img->nthreads; t++) {
		char path[1024], why[CXS_TRACE_ERR_MAX];
		struct stat sb;
		trace_path(img, t, path, sizeof path);
		/* Opened here and again by the thread: a FIFO would be empty (or block
		 * for ever) the second time, so only files are traces. */
		if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
			snprintf(err, errlen, "thread %u: %s: not a regular file (%s): a trace is read "
				 "twice, to check it and to replay it", t, path,
				 S_ISDIR(sb.st_mode) ? "a directory" : S_ISFIFO(sb.st_mode) ? "a FIFO" :
				 "a device or socket");
			return -1;
		}
		struct cxs_trace_reader *r = cxs_trace_reader_open(path, why, sizeof why);
		if (!r) {
			snprintf(err, errlen, "thread %u: %s", t, why);
			return -1;
		}
		uint32_t core = cxs_trace_reader_core(r);
		cxs_trace_reader_close(r);
		if (per_core && core != t) {
			snprintf(err, errlen, "thread %u: %s: the trace was made for core %" PRIu32
				 " (its header's core_id), not core %u: wrong file or wrong --core "
				 "given to cxlsim-trace", t, path, core, t);
			return -1;
		}
	}
	img->shared_bytes = img->size * 1024;
	img->private_bytes = img->size * 1024;
	img->shared = calloc(1, img->shared_bytes);
	if (!img->shared) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

static uint64_t fold(struct cxs_kt *kt, uint64_t addr)
{
	const struct cxs_kimage *img = cxs_kt_image(kt);
	if (addr >= CXL_WINDOW)
		return cxs_kt_shared(kt) + (addr - CXL_WINDOW) % img->shared_bytes;
	return cxs_kt_private(kt) + addr % img->private_bytes;
}

static void run_trace(struct cxs_kt *kt)
{
	const struct cxs_kimage *img = cxs_kt_image(kt);
	char path[1024], why[CXS_TRACE_ERR_MAX];
	trace_path(img, cxs_kt_id(kt), path, sizeof path);
	struct cxs_trace_reader *r = cxs_trace_reader_open(path, why, sizeof why);
	if (!r)
		cxs_kt_fail(kt, "%s", why);
	struct cxs_trace_rec rec;
	int rc;
	uint64_t n = 0;
	cxs_kt_roi_begin(kt);
	while ((rc = cxs_trace_reader_next(r, &rec, why, sizeof why)) == 1) {
		n++;
		cxs_kt_compute(kt, rec.gap);
		uint64_t a = fold(kt, rec.addr);
		switch (rec.op) {
		case CXS_TRACE_LOAD:
			(void)cxs_kt_ld(kt, a, rec.size);
			break;
		case CXS_TRACE_STORE:
			cxs_kt_store(kt, a, rec.size, rec.value);
			break;
		case CXS_TRACE_RMW:
			(void)cxs_kt_swap(kt, a, rec.size, rec.value);
			break;
		case CXS_TRACE_FENCE:
			cxs_kt_fence(kt);
			break;
		case CXS_TRACE_LOCK:
			cxs_kt_lock(kt, a);
			break;
		case CXS_TRACE_UNLOCK:
			cxs_kt_unlock(kt, a);
			break;
		case CXS_TRACE_BARRIER:
			cxs_kt_barrier(kt, a, rec.value ? (uint32_t)rec.value : cxs_kt_count(kt));
			break;
		default:
			break; /* the reader checked every record */
		}
	}
	cxs_trace_reader_close(r);
	if (rc < 0)
		cxs_kt_fail(kt, "%s", why);
	cxs_kt_fence(kt);
	cxs_kt_roi_end(kt);
	cxs_kt_result(kt, "trace_records", n);
}

const struct cxs_kernel cxs_kernel_trace = {
	.name = "trace",
	.doc = "replays per-core trace files (workload.trace; cxlsim-trace makes them)",
	.default_size = 65536,
	.deterministic = false,
	.build = build_trace,
	.run = run_trace,
};
