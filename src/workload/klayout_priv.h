/*
 * klayout_priv.h — what the kernels modelled after CAMP's suites share:
 * laying out a shared image as line-aligned regions, a seeded generator for
 * their inputs, splitting work over threads, and typed loads and stores.
 *
 * Layout. A kernel's build computes every region's offset first (klay_take:
 * a bump allocator, each region starting on a 64-byte line so that arrays
 * never share a line with a neighbour's tail), then allocates the image once
 * (klay_alloc) and fills it. The offsets go into the kernel's info struct,
 * which the program reads through cxs_kt_image()->info (layout only: a
 * program never reads img->shared).
 *
 * Generators are splitmix64 (a full-period 64-bit mix, good enough for
 * synthetic inputs and identical on every rank and in the tests).
 */
#ifndef CXLSIM_KLAYOUT_PRIV_H
#define CXLSIM_KLAYOUT_PRIV_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxlsim/kthread.h"

#define KL_LINE 64u

/*
 * The next region of `bytes` bytes, line-aligned; *off moves past it and one
 * guard line. The guard skews the regions' cache sets: arrays of a power of
 * two in size, back to back, would otherwise start in the same set of every
 * cache (modulo indexing), and streaming three of them together (a triad)
 * thrashes a 16-way L3 set with 24 streams on 8 cores.
 */
static inline uint64_t klay_take(uint64_t *off, uint64_t bytes)
{
	uint64_t o = *off;
	*off += (bytes + KL_LINE - 1) / KL_LINE * KL_LINE + KL_LINE;
	return o;
}

/* Allocates the zeroed image of `bytes` (rounded to lines). */
static inline int klay_alloc(struct cxs_kimage *img, const char *kernel, uint64_t bytes,
			     char *err, size_t errlen)
{
	img->shared_bytes = (bytes + KL_LINE - 1) / KL_LINE * KL_LINE;
	if (img->shared_bytes == 0)
		img->shared_bytes = KL_LINE;
	img->shared = calloc(1, img->shared_bytes);
	if (!img->shared) {
		snprintf(err, errlen, "%s: out of memory for %" PRIu64 " bytes", kernel,
			 img->shared_bytes);
		return -1;
	}
	return 0;
}

static inline uint64_t krand(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Uniform in [0, 1) with 53 bits. */
static inline double kunit(uint64_t *s)
{
	return (double)(krand(s) >> 11) / 9007199254740992.0;
}

/* Thread t's share [*lo, *hi) of n items in T contiguous blocks. */
static inline void kshare(uint64_t n, uint32_t t, uint32_t T, uint64_t *lo, uint64_t *hi)
{
	*lo = n * t / T;
	*hi = n * (t + 1) / T;
}

static inline void kput32(uint8_t *img, uint64_t off, uint32_t v)
{
	memcpy(img + off, &v, 4);
}
static inline void kput64(uint8_t *img, uint64_t off, uint64_t v)
{
	memcpy(img + off, &v, 8);
}
static inline void kputd(uint8_t *img, uint64_t off, double v)
{
	memcpy(img + off, &v, 8);
}
static inline void kputf(uint8_t *img, uint64_t off, float v)
{
	memcpy(img + off, &v, 4);
}
static inline uint32_t kget32(const uint8_t *img, uint64_t off)
{
	uint32_t v;
	memcpy(&v, img + off, 4);
	return v;
}
static inline uint64_t kget64(const uint8_t *img, uint64_t off)
{
	uint64_t v;
	memcpy(&v, img + off, 8);
	return v;
}
static inline double kgetd(const uint8_t *img, uint64_t off)
{
	double v;
	memcpy(&v, img + off, 8);
	return v;
}
static inline float kgetf(const uint8_t *img, uint64_t off)
{
	float v;
	memcpy(&v, img + off, 4);
	return v;
}

/* ---- the program side: shared-region loads and stores by offset ------------ */

static inline uint64_t ksh(struct cxs_kt *kt, uint64_t off)
{
	return cxs_kt_shared(kt) + off;
}
static inline uint32_t kld32(struct cxs_kt *kt, uint64_t off)
{
	return (uint32_t)cxs_kt_load(kt, ksh(kt, off), 4);
}
static inline uint64_t kld64(struct cxs_kt *kt, uint64_t off)
{
	return cxs_kt_load(kt, ksh(kt, off), 8);
}
static inline double kldd(struct cxs_kt *kt, uint64_t off)
{
	return cxs_kt_bits_d(cxs_kt_load(kt, ksh(kt, off), 8));
}
static inline float kbits_f(uint64_t u)
{
	uint32_t w = (uint32_t)u;
	float f;
	memcpy(&f, &w, 4);
	return f;
}
static inline uint32_t kf_bits(float f)
{
	uint32_t w;
	memcpy(&w, &f, 4);
	return w;
}
static inline float kldf(struct cxs_kt *kt, uint64_t off)
{
	return kbits_f(cxs_kt_load(kt, ksh(kt, off), 4));
}
static inline void kst32(struct cxs_kt *kt, uint64_t off, uint32_t v)
{
	cxs_kt_store(kt, ksh(kt, off), 4, v);
}
static inline void kst64(struct cxs_kt *kt, uint64_t off, uint64_t v)
{
	cxs_kt_store(kt, ksh(kt, off), 8, v);
}
static inline void kstd(struct cxs_kt *kt, uint64_t off, double v)
{
	cxs_kt_store(kt, ksh(kt, off), 8, cxs_kt_ldd_bits(v));
}
static inline void kstf(struct cxs_kt *kt, uint64_t off, float v)
{
	cxs_kt_store(kt, ksh(kt, off), 4, kf_bits(v));
}
/* Private-region (the thread's local memory) loads and stores by offset. */
static inline uint64_t kpv(struct cxs_kt *kt, uint64_t off)
{
	return cxs_kt_private(kt) + off;
}

/*
 * After the ROI: thread t compares its share of the 8-byte words of
 * [off, off + bytes) with the reference (bytes rounded up to a word; regions
 * are line-aligned, so the padding read is the region's own).
 */
static inline void kcheck_share(struct cxs_kt *kt, uint64_t off, uint64_t bytes)
{
	uint64_t lo, hi;
	kshare((bytes + 7) / 8, cxs_kt_id(kt), cxs_kt_count(kt), &lo, &hi);
	if (hi > lo)
		cxs_kt_check_words(kt, off + 8 * lo, 8 * (hi - lo));
}

/* The size check every build starts with: one line naming the kernel and the range. */
static inline int ksize_ok(const struct cxs_kimage *img, const char *kernel, const char *what,
			   uint64_t lo, uint64_t hi, char *err, size_t errlen)
{
	if (img->size >= lo && img->size <= hi)
		return 1;
	snprintf(err, errlen, "%s: size (%s) must be %" PRIu64 "..%" PRIu64 " (got %" PRIu64 ")",
		 kernel, what, lo, hi, img->size);
	return 0;
}

static inline int kvariant_ok(const struct cxs_kimage *img, const char *kernel, const char *what,
			      uint64_t hi, char *err, size_t errlen)
{
	if (img->variant <= hi)
		return 1;
	snprintf(err, errlen, "%s: workload.variant (%s) must be 0..%" PRIu64 " (got %" PRIu64 ")",
		 kernel, what, hi, img->variant);
	return 0;
}

#endif /* CXLSIM_KLAYOUT_PRIV_H */
