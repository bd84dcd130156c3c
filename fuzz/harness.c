/* harness.c — the input file of harness.h, as a memfd. */
#define _GNU_SOURCE /* memfd_create */
#include "harness.h"

#include <sys/mman.h>
#include <unistd.h>

const char *harness_file(int which, const void *data, size_t size)
{
	static int fd[4] = {-1, -1, -1, -1};
	static char path[4][48];

	if (which < 0 || which > 3)
		abort();
	if (fd[which] < 0) {
		fd[which] = memfd_create("cxlsim-fuzz", 0);
		if (fd[which] < 0) {
			perror("memfd_create");
			abort();
		}
		snprintf(path[which], sizeof(path[which]), "/proc/self/fd/%d", fd[which]);
	}
	if (ftruncate(fd[which], 0) != 0 ||
	    (size > 0 && pwrite(fd[which], data, size, 0) != (ssize_t)size)) {
		perror("memfd write");
		abort();
	}
	return path[which];
}
