/*
 * harness.h — what every fuzzing harness here shares (fuzz/README.md).
 *
 * A harness is fuzz_<name>.c defining LLVMFuzzerTestOneInput. It is built
 * twice: with clang's libFuzzer when CXLSIM_FUZZ is on (fuzz_<name>), and
 * always with replay_main.c (fuzz_<name>_replay), which runs it once on every
 * file of its corpus and regression directories, so that every input that
 * once crashed stays a test in every build, sanitizers included.
 *
 * Properties beyond "does not crash" are checked with harness_assert, which
 * aborts (libFuzzer then saves the input).
 */
#ifndef CXLSIM_FUZZ_HARNESS_H
#define CXLSIM_FUZZ_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define harness_assert(cond, ...)                                                      \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "harness: %s:%d: %s: ", __FILE__, __LINE__, #cond);  \
			fprintf(stderr, __VA_ARGS__);                                  \
			fputc('\n', stderr);                                           \
			abort();                                                       \
		}                                                                      \
	} while (0)

/*
 * The input as a regular file that the code under test opens by name: a
 * memfd (no disk traffic, nothing left behind), rewritten for every input.
 * `which` picks one of a few files. Returns its path ("/proc/self/fd/N").
 */
const char *harness_file(int which, const void *data, size_t size);

#endif /* CXLSIM_FUZZ_HARNESS_H */
