/*
 * micro.c — microbenchmarks whose memory behaviour is known in advance, the
 * calibration set of CAMP (papers/camp-summary-ko.md: pointer chase,
 * sequential read, strided access, memset). Each thread works on its own
 * slice of the shared (CXL) region; size is the slice in KiB (default 4 MiB,
 * twice a core's share of the 8 MiB L3, so the data comes from memory).
 *
 *   ptrchase  random cycles through the slice's lines; each load's value is
 *             the next address, so exactly one demand read per chain is ever
 *             outstanding and every load stalls retirement; workload.variant
 *             chains (0: 1) walked side by side give an MLP of that many
 *             (chain c holds the lines i with i % chains == c)
 *   stream    every 8-byte word of the slice, in order, loads issued ahead of
 *             their use: the first word of a line misses, the other seven hit
 *             the line fill buffer; misses overlap up to the LFB size
 *   strided   one word every 4 lines: independent misses, no LFB hits
 *   memset    stores to every word: the store buffer fills, cycles are bound
 *             on stores
 * For stream, strided and memset, workload.variant is the non-memory
 * instructions between accesses (0: 1): more work per access lowers the
 * memory intensity, which the CAMP calibration spans.
 *
 * Each one checks its result after its ROI: the chase must come back to its
 * start after visiting every line, the sums must equal the image's, and memset
 * is deterministic (the reference run's image is compared word for word).
 */
#include "cxlsim/kthread.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define LINE 64u
#define KIB 1024u

static uint64_t slice_bytes(const struct cxs_kimage *img)
{
	return img->size * KIB;
}

static int build_common(struct cxs_kimage *img, char *err, size_t errlen)
{
	if (img->size < 1 || img->size > (UINT64_C(1) << 20)) {
		snprintf(err, errlen, "size must be 1..1048576 KiB per thread (got %" PRIu64 ")",
			 img->size);
		return -1;
	}
	img->shared_bytes = slice_bytes(img) * img->nthreads;
	img->private_bytes = LINE;
	img->shared = calloc(1, img->shared_bytes);
	if (!img->shared) {
		snprintf(err, errlen, "out of memory for %" PRIu64 " bytes", img->shared_bytes);
		return -1;
	}
	return 0;
}

static uint64_t chains_of(const struct cxs_kimage *img)
{
	return img->variant ? img->variant : 1;
}

static uint32_t gap_of(const struct cxs_kimage *img)
{
	return img->variant ? (uint32_t)img->variant : 1;
}

/* Random cycles through each slice's lines (Sattolo), chain c over the lines
 * i with i % chains == c: word 0 of a line holds the offset of the next. */
static int build_chase(struct cxs_kimage *img, char *err, size_t errlen)
{
	if (build_common(img, err, errlen) != 0)
		return -1;
	uint64_t lines = slice_bytes(img) / LINE, chains = chains_of(img);
	if (chains > 16 || lines % chains || lines / chains < 2) {
		snprintf(err, errlen,
			 "ptrchase: workload.variant (chains) must be 1..16 and divide the slice's %" PRIu64
			 " lines into chains of at least 2 (got %" PRIu64 ")",
			 lines, chains);
		return -1;
	}
	uint64_t n = lines / chains;
	uint64_t *perm = malloc(n * sizeof *perm);
	if (!perm) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	uint64_t s = img->seed;
	for (uint32_t t = 0; t < img->nthreads; t++)
		for (uint64_t c = 0; c < chains; c++) {
			for (uint64_t i = 0; i < n; i++)
				perm[i] = i;
			for (uint64_t i = n - 1; i > 0; i--) {
				s = s * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
				uint64_t j = (s >> 11) % i; /* j < i: one single cycle */
				uint64_t x = perm[i];
				perm[i] = perm[j];
				perm[j] = x;
			}
			/* Position i of the chain is line i * chains + c; it links to perm[i]. */
			uint64_t base = t * slice_bytes(img);
			for (uint64_t i = 0; i < n; i++) {
				uint64_t next = base + (perm[i] * chains + c) * LINE;
				memcpy(img->shared + base + (i * chains + c) * LINE, &next, 8);
			}
		}
	free(perm);
	return 0;
}

static int build_values(struct cxs_kimage *img, char *err, size_t errlen)
{
	if (build_common(img, err, errlen) != 0)
		return -1;
	for (uint64_t o = 0; o < img->shared_bytes; o += 8) {
		uint64_t v = (o >> 3) * UINT64_C(0x9e3779b97f4a7c15) >> 40;
		memcpy(img->shared + o, &v, 8);
	}
	return 0;
}

static void run_chase(struct cxs_kt *kt)
{
	const struct cxs_kimage *img = cxs_kt_image(kt);
	uint64_t base = cxs_kt_id(kt) * slice_bytes(img), chains = chains_of(img);
	uint64_t lines = slice_bytes(img) / LINE, off[16];
	for (uint64_t c = 0; c < chains; c++)
		off[c] = base + c * LINE;
	cxs_kt_roi_begin(kt);
	for (uint64_t i = 0; i < lines / chains; i++) {
		uint32_t h[16];
		for (uint64_t c = 0; c < chains; c++)
			h[c] = cxs_kt_ld(kt, cxs_kt_shared(kt) + off[c], 8);
		for (uint64_t c = 0; c < chains; c++)
			off[c] = cxs_kt_get(kt, h[c]);
		cxs_kt_compute(kt, 4);
	}
	cxs_kt_roi_end(kt);
	for (uint64_t c = 0; c < chains; c++)
		if (off[c] != base + c * LINE)
			cxs_kt_fail(kt, "ptrchase: thread %u chain %" PRIu64 " ended at offset %#" PRIx64
				    ", not at %#" PRIx64,
				    cxs_kt_id(kt), c, off[c], base + c * LINE);
	cxs_kt_result(kt, "steps", lines);
}

/*
 * Loads every `step` bytes of the slice, keeping WINDOW loads issued ahead of
 * their use (software pipelining, as an out-of-order core's window would):
 * the load queue, not the program, bounds how many are in flight.
 */
static void run_loads(struct cxs_kt *kt, uint64_t step)
{
	enum { WINDOW = 120 };
	const struct cxs_kimage *img = cxs_kt_image(kt);
	uint64_t base = cxs_kt_id(kt) * slice_bytes(img), end = base + slice_bytes(img);
	uint64_t sum = 0, n = 0;
	uint32_t h[WINDOW];
	cxs_kt_roi_begin(kt);
	for (uint64_t o = base; o < end; o += step, n++) {
		if (n >= WINDOW)
			sum += cxs_kt_get(kt, h[n % WINDOW]);
		h[n % WINDOW] = cxs_kt_ld(kt, cxs_kt_shared(kt) + o, 8);
		cxs_kt_compute(kt, gap_of(img));
	}
	for (uint64_t i = n > WINDOW ? n - WINDOW : 0; i < n; i++)
		sum += cxs_kt_get(kt, h[i % WINDOW]);
	cxs_kt_roi_end(kt);
	uint64_t want = 0;
	for (uint64_t o = base; o < end; o += step) {
		uint64_t v;
		memcpy(&v, img->shared + o, 8); /* after the ROI: the expected sum */
		want += v;
	}
	if (sum != want)
		cxs_kt_fail(kt, "thread %u: sum of %" PRIu64 " loads is %#" PRIx64 ", expected %#" PRIx64,
			    cxs_kt_id(kt), n, sum, want);
	cxs_kt_result(kt, "loads", n);
}

static void run_stream(struct cxs_kt *kt)
{
	run_loads(kt, 8);
}

static void run_strided(struct cxs_kt *kt)
{
	run_loads(kt, 4 * LINE);
}

static void run_memset(struct cxs_kt *kt)
{
	const struct cxs_kimage *img = cxs_kt_image(kt);
	uint64_t base = cxs_kt_id(kt) * slice_bytes(img), end = base + slice_bytes(img);
	uint64_t v = UINT64_C(0x0101010101010101) * (cxs_kt_id(kt) + 1);
	cxs_kt_roi_begin(kt);
	for (uint64_t o = base; o < end; o += 8) {
		cxs_kt_store(kt, cxs_kt_shared(kt) + o, 8, v);
		cxs_kt_compute(kt, gap_of(img));
	}
	cxs_kt_fence(kt);
	cxs_kt_roi_end(kt);
	cxs_kt_check_words(kt, base, end - base);
	cxs_kt_result(kt, "stores", (end - base) / 8);
}

const struct cxs_kernel cxs_kernel_ptrchase = {
	.name = "ptrchase",
	.doc = "pointer chase through random cycles of lines: variant chains side by side (0: 1, MLP 1); size KiB a thread",
	.default_size = 4096,
	.deterministic = true,
	.build = build_chase,
	.run = run_chase,
};

const struct cxs_kernel cxs_kernel_stream = {
	.name = "stream",
	.doc = "independent sequential 8-byte loads (MLP up to the LFB size, LFB hits); variant instructions between loads (0: 1)",
	.default_size = 4096,
	.deterministic = true,
	.build = build_values,
	.run = run_stream,
};

const struct cxs_kernel cxs_kernel_strided = {
	.name = "strided",
	.doc = "independent loads one every 4 lines (no LFB hits); variant instructions between loads (0: 1)",
	.default_size = 4096,
	.deterministic = true,
	.build = build_values,
	.run = run_strided,
};

const struct cxs_kernel cxs_kernel_memset = {
	.name = "memset",
	.doc = "8-byte stores to every word (bound on stores); variant instructions between stores (0: 1)",
	.default_size = 4096,
	.deterministic = true,
	.build = build_common,
	.run = run_memset,
};
