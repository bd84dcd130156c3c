/*
 * k_kvstore.c — an in-memory key-value store serving GET and SET, modelled
 * after Redis (its dict: a power-of-two bucket array of chained entries,
 * values as separately allocated strings): each thread is one single-
 * threaded store instance with its own shard of size / T keys (Redis
 * Cluster's shards, one core each), serving workload.ops requests (default
 * 2048): 90 % GET, 10 % SET of the same length, keys drawn with a
 * power-law popularity (as memtier/YCSB's zipfian). A GET hashes the key,
 * loads its bucket, walks the chain comparing keys (each entry a dependent
 * load) and copies the value (64..512 B) into the client's reply buffer (the
 * thread's private memory); a SET walks the same way and overwrites the
 * value in place.
 *
 * Memory behaviour: per request a dependent chain of 2-3 random loads (the
 * pointer chase of a hash lookup: latency-bound, little MLP), then a short
 * sequential value copy (reads; stores on SET): CAMP's Redis-like case.
 * Footprint ~ size x (48 + mean value 288) B.
 *
 * Shared layout per shard: buckets (u64 entry offsets, 0 = empty), entries
 * (48 B: key, value offset, value length, next entry offset), values.
 * Result: the whole store after the SETs, and per-thread checksums of the
 * GET replies; both checked against the reference.
 */
#include "cxlsim/kthread.h"

#include "kinfo_priv.h"
#include "klayout_priv.h"

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	uint32_t T = img->nthreads;
	if (!ksize_ok(img, "kvstore", "keys", 16 * (uint64_t)T, UINT64_C(1) << 24, err, errlen))
		return -1;
	struct kv_info *I = calloc(1, sizeof *I + T * sizeof I->sh[0]);
	if (!I) {
		snprintf(err, errlen, "kvstore: out of memory");
		return -1;
	}
	img->info = I;
	I->ops = img->ops ? img->ops : 2048;
	I->nshards = T;
	uint64_t off = 0;
	I->sum_off = klay_take(&off, (uint64_t)T * KL_LINE);
	for (uint32_t t = 0; t < T; t++) {
		struct kv_shard *S = &I->sh[t];
		uint64_t lo, hi, vbytes = 0;
		kshare(img->size, t, T, &lo, &hi);
		S->nkeys = hi - lo;
		S->nbuckets = 1;
		while (S->nbuckets < S->nkeys)
			S->nbuckets *= 2; /* Redis grows to the next power of two: load factor <= 1 */
		for (uint64_t i = 0; i < S->nkeys; i++)
			vbytes += kv_value_len(kv_key(t, i));
		S->bucket_off = klay_take(&off, 8 * S->nbuckets);
		S->entry_off = klay_take(&off, KV_ENTRY_BYTES * S->nkeys);
		S->value_off = klay_take(&off, vbytes);
	}
	img->private_bytes = 512 + KL_LINE;
	if (klay_alloc(img, "kvstore", off, err, errlen) != 0)
		return -1;
	uint8_t *m = img->shared;
	for (uint32_t t = 0; t < T; t++) {
		const struct kv_shard *S = &I->sh[t];
		uint64_t vo = S->value_off, s = img->seed ^ t;
		for (uint64_t i = 0; i < S->nkeys; i++) {
			uint64_t key = kv_key(t, i), e = S->entry_off + KV_ENTRY_BYTES * i;
			uint32_t len = kv_value_len(key);
			uint64_t b = S->bucket_off + 8 * (kv_hash(key) & (S->nbuckets - 1));
			kput64(m, e, key);
			kput64(m, e + 8, vo);
			kput64(m, e + 16, len);
			kput64(m, e + 24, kget64(m, b)); /* push at the chain's head */
			kput64(m, b, e + 1);            /* +1: offset 0 means empty */
			for (uint32_t w = 0; w < len; w += 8)
				kput64(m, vo + w, krand(&s));
			vo += len;
		}
	}
	return 0;
}

static void run(struct cxs_kt *kt)
{
	const struct kv_info *I = cxs_kt_image(kt)->info;
	uint32_t t = cxs_kt_id(kt);
	const struct kv_shard *S = &I->sh[t];
	uint64_t sum = 0;
	cxs_kt_roi_begin(kt);
	for (uint64_t r = 0; r < I->ops; r++) {
		uint64_t key, vseed;
		bool get;
		kv_request(cxs_kt_image(kt)->seed, t, r, S->nkeys, &key, &get, &vseed);
		cxs_kt_compute(kt, 60); /* request parsing and hashing (Redis: a few hundred) */
		uint64_t e = kld64(kt, S->bucket_off + 8 * (kv_hash(key) & (S->nbuckets - 1)));
		while (e) {
			uint32_t hk = cxs_kt_ld(kt, ksh(kt, e - 1), 8), hn = cxs_kt_ld(kt, ksh(kt, e - 1 + 24), 8);
			cxs_kt_compute(kt, 4);
			if (cxs_kt_get(kt, hk) == key)
				break;
			e = cxs_kt_get(kt, hn);
		}
		if (!e)
			cxs_kt_fail(kt, "kvstore: key %#" PRIx64 " missing from shard %u", key, t);
		uint32_t hv = cxs_kt_ld(kt, ksh(kt, e - 1 + 8), 8), hl = cxs_kt_ld(kt, ksh(kt, e - 1 + 16), 8);
		uint64_t vo = cxs_kt_get(kt, hv), len = cxs_kt_get(kt, hl);
		for (uint64_t w = 0; w < len; w += 64) {
			uint32_t h[8], n = len - w < 64 ? (uint32_t)(len - w) / 8 : 8;
			if (get) {
				for (uint32_t k = 0; k < n; k++)
					h[k] = cxs_kt_ld(kt, ksh(kt, vo + w + 8 * k), 8);
				for (uint32_t k = 0; k < n; k++) {
					uint64_t v = cxs_kt_get(kt, h[k]);
					cxs_kt_store(kt, kpv(kt, w + 8 * k), 8, v); /* the reply buffer */
					sum = (sum ^ v) * UINT64_C(0x100000001b3);
				}
			} else {
				for (uint32_t k = 0; k < n; k++)
					kst64(kt, vo + w + 8 * k, krand(&vseed));
			}
			cxs_kt_compute(kt, 2 * n);
		}
	}
	kst64(kt, I->sum_off + (uint64_t)t * KL_LINE, sum);
	cxs_kt_roi_end(kt);
	cxs_kt_check_words(kt, I->sum_off + (uint64_t)t * KL_LINE, 8);
	uint64_t end = t + 1 < I->nshards ? I->sh[t + 1].bucket_off : cxs_kt_image(kt)->shared_bytes;
	cxs_kt_check_words(kt, S->bucket_off, end - S->bucket_off);
}

const struct cxs_kernel cxs_kernel_kvstore = {
	.name = "kvstore",
	.doc = "modelled after Redis: one single-threaded store a thread (chained dict, string values of 64-512 B), workload.ops requests (default 2048) of 90% GET / 10% SET over size keys, power-law keys",
	.default_size = 32768,
	.deterministic = true,
	.build = build,
	.run = run,
};
