/*
 * replay_main.c — runs a harness once on every file named on the command line
 * or found in a directory named there (harness.h). Exit status 0 when every
 * input ran (a crash or a failed property aborts); the count goes to stdout.
 */
#include "harness.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0, got;

	if (f == NULL) {
		perror(path);
		return -1;
	}
	do {
		if (len == cap) {
			cap = cap ? 2 * cap : 65536;
			buf = realloc(buf, cap);
			if (buf == NULL)
				abort();
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
	} while (got > 0);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long n = 0;

	for (int i = 1; i < argc; i++) {
		struct stat sb;
		if (stat(argv[i], &sb) != 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(sb.st_mode)) {
			if (run_file(argv[i]) != 0)
				return 1;
			n++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		struct dirent *de;
		if (d == NULL) {
			perror(argv[i]);
			return 1;
		}
		while ((de = readdir(d)) != NULL) {
			char p[4096];
			if (de->d_name[0] == '.')
				continue; /* also .gitkeep */
			snprintf(p, sizeof(p), "%s/%s", argv[i], de->d_name);
			if (stat(p, &sb) == 0 && S_ISREG(sb.st_mode)) {
				if (run_file(p) != 0)
					return 1;
				n++;
			}
		}
		closedir(d);
	}
	printf("replayed %lu inputs\n", n);
	return 0;
}
