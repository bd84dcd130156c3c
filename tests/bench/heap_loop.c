/*
 * heap_loop.c — the bare sequential PHOLD loop that par_bench.sh measures the
 * engine against (issue 12: np = 1 should reach 75 % of it).
 *
 * The same semantics as src/models/phold.c, with nothing else: one start
 * event per LP; each event, one uniform draw decides remote (probability
 * `remote`), a second picks the destination uniformly over all LPs (itself
 * included), one exponential draw gives the delay lookahead + Exp(mean -
 * lookahead), rounded to picoseconds; nothing at or past the end time. Each
 * LP draws from its own xoshiro256** stream seeded like the engine's. The
 * pending set is a binary heap of (time, src, seq) keys, the engine's order,
 * with no payload, no counters, no windows and no checksum. It prints the
 * events handled and the rate over the loop alone.
 *
 *   heap_loop LPS END_US [MEAN_US LOOKAHEAD_US REMOTE]   (defaults 1.0 0.1 0.25)
 *
 * With HEAP_LOOP_CHECK=1 in the environment (tests/bench/heap_loop_check.sh,
 * not the timed runs) it also checks that it pops events in key order and
 * exits 1 if not; the events it handles must equal cxlsim's PHOLD count for
 * the same run, which that test compares.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct key {
	uint64_t time, seq;
	uint32_t src, dst;
};

static struct key *heap;
static size_t n, cap;

static int less(const struct key *a, const struct key *b)
{
	if (a->time != b->time)
		return a->time < b->time;
	if (a->src != b->src)
		return a->src < b->src;
	return a->seq < b->seq;
}

static void push(struct key k)
{
	if (n == cap) {
		cap = cap ? 2 * cap : 1024;
		heap = realloc(heap, cap * sizeof *heap);
		if (!heap)
			exit(2);
	}
	size_t i = n++;
	while (i > 0 && less(&k, &heap[(i - 1) / 2])) {
		heap[i] = heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	heap[i] = k;
}

static struct key pop(void)
{
	struct key top = heap[0], last = heap[--n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && less(&heap[c + 1], &heap[c]))
			c++;
		if (!less(&heap[c], &last))
			break;
		heap[i] = heap[c];
		i = c;
	}
	if (n)
		heap[i] = last;
	return top;
}

struct lp {
	uint64_t s[4], seq;
};

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static double unif(struct lp *l)
{
	uint64_t *s = l->s, r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return (double)(r >> 11) * 0x1.0p-53;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: heap_loop LPS END_US [MEAN_US LOOKAHEAD_US REMOTE]\n");
		return 2;
	}
	uint32_t lps = (uint32_t)atoi(argv[1]);
	uint64_t end = (uint64_t)(atof(argv[2]) * 1e6);
	double mean = argc > 3 ? atof(argv[3]) * 1e6 : 1e6;
	uint64_t la = (uint64_t)((argc > 4 ? atof(argv[4]) : 0.1) * 1e6);
	double remote = argc > 5 ? atof(argv[5]) : 0.25;
	struct lp *lp = calloc(lps, sizeof *lp);
	if (!lp || lps == 0)
		return 2;
	for (uint32_t i = 0; i < lps; i++) {
		uint64_t x = 1 ^ (UINT64_C(0x2545f4914f6cdd1d) * (i + 1)); /* seed 1, as the engine */
		for (int k = 0; k < 4; k++)
			lp[i].s[k] = splitmix64(&x);
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint32_t i = 0; i < lps; i++) {
		uint64_t d = la + (uint64_t)(-(mean - (double)la) * log1p(-unif(&lp[i])) + 0.5);
		if (d < end)
			push((struct key){d, lp[i].seq++, i, i});
	}
	uint64_t events = 0;
	const char *chk = getenv("HEAP_LOOP_CHECK");
	int check = chk && chk[0] == '1';
	struct key prev = {0, 0, 0, 0};
	while (n) {
		struct key k = pop();
		if (check && events && less(&k, &prev)) {
			fprintf(stderr, "heap_loop: event %llu (time %llu) popped after a later one (time %llu)\n",
				(unsigned long long)events, (unsigned long long)k.time,
				(unsigned long long)prev.time);
			return 1;
		}
		prev = k;
		struct lp *l = &lp[k.dst];
		events++;
		uint32_t dst = k.dst;
		if (unif(l) < remote) {
			dst = (uint32_t)(unif(l) * (double)lps);
			if (dst >= lps)
				dst = lps - 1;
		}
		uint64_t t = k.time + la + (uint64_t)(-(mean - (double)la) * log1p(-unif(l)) + 0.5);
		if (t < end)
			push((struct key){t, l->seq++, k.dst, dst});
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	printf("%llu %.6f %.4e\n", (unsigned long long)events, s, (double)events / s);
	return 0;
}
