/*
 * k_ycsb.c — a key-value store in CXL memory under a YCSB-style load, after
 * the DIKTAMO paper's custom YCSB workload (§VI: a hash-table-backed store of
 * 1 KB records, 80% get / 20% put, uniform keys). Not YCSB itself: the
 * operation mix is drawn by each thread from its own random stream.
 *
 * Store. size = R records of 1 KB (default 16384; the paper has 1.6 M), a
 * chained hash table of B buckets (B the power of two at or above R / 2, so
 * chains hold ~2 records). The chains are built once, at image-build time,
 * and never change; only record contents change.
 *
 * Shared layout (64-byte lines):
 *   line 0     header: R, B, heads_off, locks_off, records_off, ops_per_thread
 *   line 1     barrier
 *   line 2     totals (thread 0, after the ROI): puts, sum of versions, gets
 *   per thread one line: puts, sum of versions of its share of records, gets
 *   locks      B lines: the bucket's lock word (own line)
 *   heads      B words: the first record of the chain (index + 1; 0 = empty)
 *   records    R x 1 KB: key, version, seq, next (index + 1), 124 payload words
 * payload word j of a record = mix(key + version * K1 + j * K2): a record is
 * self-consistent when its payload matches its key and version.
 *
 * Operations: ops_per_thread = workload.ops, or max(1, R / 32) when it is 0
 * (512 at the default), each a put
 * with probability 1/5, on the key of a uniformly drawn record index.
 *   get  walk the chain from the bucket head, getting each record's key and
 *        next before the following load (a pointer chase); then a seqlock
 *        read: seq (must be even), version and the payload issued together
 *        (in two batches of 62, below CXS_KT_MAX_INFLIGHT), seq again; a
 *        changed seq retries; a consistent read whose payload does not match
 *        its key and version is a coherence error (cxs_kt_fail).
 *   put  lock the bucket (a lock per bucket, on its own line), walk the chain,
 *        seq + 1 (odd: writing), version + 1, the 124 payload words,
 *        seq + 1 (even), unlock. TSO keeps the stores in that order.
 * Memory operations: ~130 per get, ~135 per put: ~70 k a thread at the
 * default. Charged compute: ~6 instructions per chain step, 2 per payload word.
 *
 * A thread that takes a bucket's lock over from a thread that died holding it
 * (after a CN failure, cxs_kt_lock) first completes the put the dead thread
 * left half done (repair_bucket), so the store keeps serving.
 *
 * Not deterministic (the interleaving decides the versions' order). Verified
 * after the ROI instead: every thread checks its share of records (key as
 * built, seq = 2 x version, payload matches); thread 0 checks that the sum of
 * all versions equals the number of puts (each put adds exactly one).
 */
#include "cxlsim/kthread.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define LINE 64u
#define REC_BYTES 1024u
#define REC_WORDS (REC_BYTES / 8)
#define PAYLOAD0 4u /* first payload word */
#define PAYLOAD_WORDS (REC_WORDS - PAYLOAD0)
#define CXS_YCSB_R_MAX (1u << 16) /* 64 MiB of records */
#define CXS_YCSB_PUT_PERCENT 20u
#define OFF_HDR 0
#define OFF_BAR LINE
#define OFF_TOTALS (2 * LINE)
#define OFF_THREADS (3 * LINE)

struct ycsb_layout {
	uint64_t r, b, heads_off, locks_off, records_off, ops;
};

static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* A bijection of the record index: keys are distinct. */
static uint64_t key_of(uint64_t seed, uint64_t i)
{
	return (i + 1) * UINT64_C(0x9e3779b97f4a7c15) ^ mix(seed);
}

static uint64_t payload(uint64_t key, uint64_t version, uint32_t j)
{
	return mix(key + version * UINT64_C(0x632be59bd9b4e019) + j * UINT64_C(0x8cb92ba72f3d8dd7));
}

static uint64_t bucket_of(const struct ycsb_layout *L, uint64_t key)
{
	return mix(key ^ UINT64_C(0xb0c4e7)) & (L->b - 1);
}

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	uint32_t T = img->nthreads;
	if (img->size < 1 || img->size > CXS_YCSB_R_MAX) {
		snprintf(err, errlen, "ycsb: size (records of 1 KB) must be 1..%u (got %" PRIu64 ")",
			 CXS_YCSB_R_MAX, img->size);
		return -1;
	}
	struct ycsb_layout *L = calloc(1, sizeof *L);
	if (!L) {
		snprintf(err, errlen, "ycsb: out of memory");
		return -1;
	}
	L->r = img->size;
	L->b = 1;
	while (L->b < L->r / 2)
		L->b *= 2;
	L->ops = img->ops ? img->ops : L->r / 32 ? L->r / 32 : 1;
	L->locks_off = OFF_THREADS + (uint64_t)T * LINE;
	L->heads_off = L->locks_off + L->b * LINE;
	L->records_off = L->heads_off + (L->b * 8 + LINE - 1) / LINE * LINE;
	img->shared_bytes = L->records_off + L->r * REC_BYTES;
	img->private_bytes = LINE;
	img->info = L;
	img->shared = calloc(1, img->shared_bytes);
	if (!img->shared) {
		snprintf(err, errlen, "ycsb: out of memory for %" PRIu64 " bytes", img->shared_bytes);
		return -1;
	}
	uint8_t *sh = img->shared;
	uint64_t hdr[6] = {L->r, L->b, L->heads_off, L->locks_off, L->records_off, L->ops};
	memcpy(sh + OFF_HDR, hdr, sizeof hdr);
	for (uint64_t i = 0; i < L->r; i++) {
		uint64_t *rec = (uint64_t *)(sh + L->records_off + i * REC_BYTES);
		uint64_t key = key_of(img->seed, i), *head = (uint64_t *)(sh + L->heads_off) + bucket_of(L, key);
		rec[0] = key;
		rec[1] = 0; /* version */
		rec[2] = 0; /* seq */
		rec[3] = *head;
		*head = i + 1;
		for (uint32_t j = 0; j < PAYLOAD_WORDS; j++)
			rec[PAYLOAD0 + j] = payload(key, 0, j);
	}
	return 0;
}

/* The record holding `key`: a chain walk, one dependent load pair a step. */
static uint64_t find(struct cxs_kt *kt, const struct ycsb_layout *L, uint64_t key)
{
	uint64_t s = cxs_kt_shared(kt);
	uint64_t next = cxs_kt_load(kt, s + L->heads_off + 8 * bucket_of(L, key), 8);
	while (next != 0) {
		uint64_t rec = s + L->records_off + (next - 1) * REC_BYTES;
		uint32_t hk = cxs_kt_ld(kt, rec, 8), hn = cxs_kt_ld(kt, rec + 24, 8);
		uint64_t k = cxs_kt_get(kt, hk);
		next = cxs_kt_get(kt, hn);
		cxs_kt_compute(kt, 6);
		if (k == key)
			return rec;
	}
	cxs_kt_fail(kt, "ycsb: thread %u: key %#" PRIx64 " is not in its bucket's chain",
		    cxs_kt_id(kt), key);
}

static void repair_bucket(struct cxs_kt *kt, const struct ycsb_layout *L, uint64_t bucket);

/* A seqlock read of the record; returns the checksum of its payload. */
static uint64_t get(struct cxs_kt *kt, const struct ycsb_layout *L, uint64_t rec, uint64_t key,
		    uint64_t *retries)
{
	enum { HALF = PAYLOAD_WORDS / 2 };
	_Static_assert(PAYLOAD_WORDS % 2 == 0, "two equal batches");
	uint32_t backoff = 16;
	for (;;) {
		uint64_t seq = cxs_kt_load(kt, rec + 16, 8);
		if (seq & 1) { /* a put is writing it */
			if (cxs_kt_failed_cns(kt) && backoff == 1024) {
				/* Long odd after a failure: its writer may be dead. Lock and see. */
				uint64_t lock = cxs_kt_shared(kt) + L->locks_off + bucket_of(L, key) * LINE;
				cxs_kt_lock(kt, lock);
				repair_bucket(kt, L, bucket_of(L, key));
				cxs_kt_unlock(kt, lock);
				backoff = 16;
				continue;
			}
			cxs_kt_compute(kt, backoff);
			backoff = backoff < 1024 ? backoff * 2 : backoff;
			++*retries;
			continue;
		}
		uint64_t w[PAYLOAD_WORDS], version;
		uint32_t h[HALF + 1];
		h[HALF] = cxs_kt_ld(kt, rec + 8, 8);
		for (uint32_t j = 0; j < HALF; j++)
			h[j] = cxs_kt_ld(kt, rec + 8 * (PAYLOAD0 + j), 8);
		version = cxs_kt_get(kt, h[HALF]);
		for (uint32_t j = 0; j < HALF; j++)
			w[j] = cxs_kt_get(kt, h[j]);
		for (uint32_t j = 0; j < HALF; j++)
			h[j] = cxs_kt_ld(kt, rec + 8 * (PAYLOAD0 + HALF + j), 8);
		for (uint32_t j = 0; j < HALF; j++)
			w[HALF + j] = cxs_kt_get(kt, h[j]);
		if (cxs_kt_load(kt, rec + 16, 8) != seq) {
			++*retries;
			continue;
		}
		uint64_t sum = 0;
		for (uint32_t j = 0; j < PAYLOAD_WORDS; j++) {
			if (w[j] != payload(key, version, j))
				cxs_kt_fail_or_waive(kt, "ycsb: thread %u: a consistent read of key %#" PRIx64
					    " (version %" PRIu64 ", seq %" PRIu64 ") has payload word %u = %#"
					    PRIx64 ", expected %#" PRIx64, cxs_kt_id(kt), key, version,
					    seq, j, w[j], payload(key, version, j));
			sum += w[j];
		}
		cxs_kt_compute(kt, 2 * PAYLOAD_WORDS);
		return sum;
	}
}

/*
 * The bucket's lock was taken from a thread that died holding it: a record
 * of the bucket may be half written (seq odd). Its put is completed — the
 * version it was writing, the payload of that version, seq even — so that
 * readers stop waiting for it and the record is self-consistent again.
 */
static void repair_bucket(struct cxs_kt *kt, const struct ycsb_layout *L, uint64_t bucket)
{
	uint64_t s = cxs_kt_shared(kt);
	uint64_t next = cxs_kt_load(kt, s + L->heads_off + 8 * bucket, 8);
	while (next != 0) {
		uint64_t rec = s + L->records_off + (next - 1) * REC_BYTES;
		uint32_t hk = cxs_kt_ld(kt, rec, 8), hn = cxs_kt_ld(kt, rec + 24, 8),
			 hs = cxs_kt_ld(kt, rec + 16, 8);
		uint64_t key = cxs_kt_get(kt, hk), seq = cxs_kt_get(kt, hs);
		next = cxs_kt_get(kt, hn);
		if (!(seq & 1))
			continue;
		uint64_t version = (seq + 1) / 2;
		cxs_kt_store(kt, rec + 8, 8, version);
		for (uint32_t j = 0; j < PAYLOAD_WORDS; j++)
			cxs_kt_store(kt, rec + 8 * (PAYLOAD0 + j), 8, payload(key, version, j));
		cxs_kt_store(kt, rec + 16, 8, seq + 1);
		cxs_kt_result(kt, "records_repaired", 1);
	}
}

static void put(struct cxs_kt *kt, const struct ycsb_layout *L, uint64_t key)
{
	uint64_t lock = cxs_kt_shared(kt) + L->locks_off + bucket_of(L, key) * LINE;
	if (cxs_kt_lock(kt, lock))
		repair_bucket(kt, L, bucket_of(L, key));
	uint64_t rec = find(kt, L, key);
	uint32_t hs = cxs_kt_ld(kt, rec + 16, 8), hv = cxs_kt_ld(kt, rec + 8, 8);
	uint64_t seq = cxs_kt_get(kt, hs), version = cxs_kt_get(kt, hv) + 1;
	cxs_kt_store(kt, rec + 16, 8, seq + 1);
	cxs_kt_store(kt, rec + 8, 8, version);
	for (uint32_t j = 0; j < PAYLOAD_WORDS; j++) {
		cxs_kt_store(kt, rec + 8 * (PAYLOAD0 + j), 8, payload(key, version, j));
		cxs_kt_compute(kt, 2);
	}
	cxs_kt_store(kt, rec + 16, 8, seq + 2);
	cxs_kt_unlock(kt, lock);
}

static void run(struct cxs_kt *kt)
{
	const struct cxs_kimage *img = cxs_kt_image(kt);
	const struct ycsb_layout *L = img->info;
	uint64_t s = cxs_kt_shared(kt), bar = s + OFF_BAR, mine = s + OFF_THREADS + cxs_kt_id(kt) * LINE;
	uint32_t t = cxs_kt_id(kt), T = cxs_kt_count(kt);
	uint64_t gets = 0, puts = 0, retries = 0, checksum = 0;
	cxs_kt_roi_begin(kt);
	for (uint64_t op = 0; op < L->ops; op++) {
		uint64_t r = cxs_kt_rand(kt);
		uint64_t key = key_of(img->seed, (r >> 8) % L->r);
		cxs_kt_compute(kt, 20); /* drawing the operation, hashing the key */
		if (r % 100 < CXS_YCSB_PUT_PERCENT) {
			put(kt, L, key);
			puts++;
		} else {
			checksum += get(kt, L, find(kt, L, key), key, &retries);
			gets++;
		}
	}
	cxs_kt_barrier(kt, bar, T);
	cxs_kt_roi_end(kt);

	/*
	 * Every record of the thread's share is self-consistent (after a CN
	 * failure a dead writer's half-done put may remain where no survivor
	 * took its lock over: waived, and the thread goes on to the barrier).
	 */
	uint64_t lo = L->r * t / T, hi = L->r * (t + 1) / T, vsum = 0;
	for (uint64_t i = lo; i < hi; i++) {
		uint64_t rec = s + L->records_off + i * REC_BYTES, w[REC_WORDS];
		for (uint32_t j0 = 0; j0 < REC_WORDS; j0 += 64) {
			uint32_t h[64];
			for (uint32_t j = 0; j < 64; j++)
				h[j] = cxs_kt_ld(kt, rec + 8 * (j0 + j), 8);
			for (uint32_t j = 0; j < 64; j++)
				w[j0 + j] = cxs_kt_get(kt, h[j]);
		}
		if (w[0] != key_of(img->seed, i) || w[2] != 2 * w[1])
			cxs_kt_fail_or_waive(kt, "ycsb: record %" PRIu64 " has key %#" PRIx64 " (built with %#"
				    PRIx64 "), version %" PRIu64 ", seq %" PRIu64 " (must be 2 x version)",
				    i, w[0], key_of(img->seed, i), w[1], w[2]);
		for (uint32_t j = 0; j < PAYLOAD_WORDS; j++)
			if (w[PAYLOAD0 + j] != payload(w[0], w[1], j))
				cxs_kt_fail_or_waive(kt, "ycsb: record %" PRIu64 " (version %" PRIu64 ") payload "
					    "word %u is %#" PRIx64 ", expected %#" PRIx64, i, w[1], j,
					    w[PAYLOAD0 + j], payload(w[0], w[1], j));
		vsum += w[1];
	}
	cxs_kt_store(kt, mine, 8, puts);
	cxs_kt_store(kt, mine + 8, 8, vsum);
	cxs_kt_store(kt, mine + 16, 8, gets);
	cxs_kt_barrier(kt, bar, T);
	if (t == 0) {
		uint64_t all_puts = 0, all_versions = 0, all_gets = 0;
		for (uint32_t u = 0; u < T; u++) {
			uint64_t a = s + OFF_THREADS + (uint64_t)u * LINE;
			all_puts += cxs_kt_load(kt, a, 8);
			all_versions += cxs_kt_load(kt, a + 8, 8);
			all_gets += cxs_kt_load(kt, a + 16, 8);
		}
		if (all_versions != all_puts)
			cxs_kt_fail(kt, "ycsb: the records' versions add up to %" PRIu64 " but %" PRIu64
				    " puts were done", all_versions, all_puts);
		cxs_kt_store(kt, s + OFF_TOTALS, 8, all_puts);
		cxs_kt_store(kt, s + OFF_TOTALS + 8, 8, all_versions);
		cxs_kt_store(kt, s + OFF_TOTALS + 16, 8, all_gets);
	}
	cxs_kt_result(kt, "gets", gets);
	cxs_kt_result(kt, "puts", puts);
	cxs_kt_result(kt, "get_retries", retries);
	cxs_kt_result(kt, "get_checksum", checksum);
	cxs_kt_result(kt, "records_checked", hi - lo);
}

const struct cxs_kernel cxs_kernel_ycsb = {
	.name = "ycsb",
	.doc = "after the paper's YCSB store: hash table of size 1 KB records in CXL memory, "
	       "80% seqlock gets / 20% locked puts, uniform keys, size/32 ops a thread",
	.default_size = 16384,
	.deterministic = false,
	.build = build,
	.run = run,
};
