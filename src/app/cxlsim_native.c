/*
 * cxlsim_native.c — `cxlsim-native`: one of the nine application kernels run
 * natively with real threads (the pthreads backend, kthread_pthread.c),
 * compiled -O3, so that `cxlsim-trace record` can record it as the papers
 * recorded their -O3 binaries with Pin:
 *
 *   cxlsim-native KERNEL THREADS [--size N] [--ops N] [--seed N]
 *   cxlsim-trace record -o DIR --roi request -- cxlsim-native ocean_cp 64
 *
 * The kernel builds its data as in the simulator (same sizes, same seeds),
 * thread 0 is the main thread and threads 1..THREADS-1 are created in
 * order, so the recording's thread N is the kernel's thread N and core N of
 * the machine that replays it. The recording starts where the kernel's
 * region of interest begins (the backend's roi_begin). It prints the
 * kernel's result counters and the wall time. Bad arguments: one line, exit 2.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cxlsim/kthread.h"

void cxs_kt_pthread_init(uint32_t nthreads);

extern const struct cxs_kernel cxs_kernel_bodytrack, cxs_kernel_fluidanimate,
	cxs_kernel_streamcluster, cxs_kernel_canneal, cxs_kernel_raytrace, cxs_kernel_barnes,
	cxs_kernel_ocean_ncp, cxs_kernel_ocean_cp, cxs_kernel_ycsb;
static const struct cxs_kernel *const kernels[] = {
	&cxs_kernel_ocean_cp, &cxs_kernel_ocean_ncp, &cxs_kernel_barnes, &cxs_kernel_raytrace,
	&cxs_kernel_fluidanimate, &cxs_kernel_streamcluster, &cxs_kernel_canneal,
	&cxs_kernel_bodytrack, &cxs_kernel_ycsb, NULL,
};

static const struct cxs_kernel *run_kernel;

static void *thread_main(void *arg)
{
	run_kernel->run(arg);
	return NULL;
}

static int usage(const char *msg)
{
	fprintf(stderr, "cxlsim-native: %s\nusage: cxlsim-native KERNEL THREADS [--size N] [--ops N]"
		" [--seed N]\nkernels:", msg);
	for (int i = 0; kernels[i]; i++)
		fprintf(stderr, " %s", kernels[i]->name);
	fputc('\n', stderr);
	return 2;
}

static int number(const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || *s == '\0' || *end != '\0' || *s == '-')
		return -1;
	*v = x;
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t threads, size = 0, ops = 0, seed = 1;
	char err[512];
	if (argc < 3)
		return usage("needs KERNEL and THREADS");
	for (int i = 0; kernels[i]; i++)
		if (strcmp(kernels[i]->name, argv[1]) == 0)
			run_kernel = kernels[i];
	if (!run_kernel)
		return usage("unknown kernel");
	if (number(argv[2], &threads) != 0 || threads < 1 || threads > 1024)
		return usage("THREADS must be 1..1024");
	for (int i = 3; i < argc; i += 2) {
		uint64_t *dst = strcmp(argv[i], "--size") == 0 ? &size
			: strcmp(argv[i], "--ops") == 0 ? &ops : strcmp(argv[i], "--seed") == 0 ? &seed : NULL;
		if (!dst || i + 1 >= argc || number(argv[i + 1], dst) != 0)
			return usage("bad option");
	}
	struct cxs_kimage img = {.size = size ? size : run_kernel->default_size, .ops = ops,
				 .seed = seed, .nthreads = (uint32_t)threads};
	if (run_kernel->build(&img, err, sizeof err) != 0) {
		fprintf(stderr, "cxlsim-native: %s: %s\n", run_kernel->name, err);
		return 2;
	}
	/* Page-aligned copies, so a kernel's line-aligned offsets are lines here too. */
	uint8_t *shared = NULL;
	if (posix_memalign((void **)&shared, 4096, img.shared_bytes ? img.shared_bytes : 4096) != 0)
		return 1;
	memcpy(shared, img.shared, img.shared_bytes);
	struct cxs_kt **kt = calloc(threads, sizeof *kt);
	pthread_t *th = calloc(threads, sizeof *th);
	if (!kt || !th)
		return 1;
	cxs_kt_pthread_init((uint32_t)threads);
	for (uint32_t t = 0; t < threads; t++) {
		void *priv = NULL;
		if (posix_memalign(&priv, 4096, img.private_bytes ? img.private_bytes : 4096) != 0)
			return 1;
		memset(priv, 0, img.private_bytes);
		struct cxs_kt_params p = {.kernel = run_kernel, .img = &img, .id = t,
					  .shared_base = (uint64_t)(uintptr_t)shared,
					  .private_base = (uint64_t)(uintptr_t)priv};
		if (!(kt[t] = cxs_kt_new(&p, err, sizeof err))) {
			fprintf(stderr, "cxlsim-native: %s\n", err);
			return 1;
		}
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint32_t t = 1; t < threads; t++)
		if (pthread_create(&th[t], NULL, thread_main, kt[t]) != 0) {
			fprintf(stderr, "cxlsim-native: cannot create thread %u\n", t);
			return 1;
		}
	thread_main(kt[0]);
	for (uint32_t t = 1; t < threads; t++)
		pthread_join(th[t], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%s: %" PRIu64 " threads, size %" PRIu64 ", %.3f s\n", run_kernel->name, threads,
	       img.size, (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9);
	uint64_t v;
	for (size_t i = 0; cxs_kt_result_at(kt[0], i, &v); i++) {
		const char *name = cxs_kt_result_at(kt[0], i, &v);
		uint64_t sum = 0, w;
		for (uint32_t t = 0; t < threads; t++)
			for (size_t j = 0; cxs_kt_result_at(kt[t], j, &w); j++)
				if (strcmp(cxs_kt_result_at(kt[t], j, &w), name) == 0)
					sum += w;
		printf("  %s %" PRIu64 "\n", name, sum);
	}
	return 0;
}
