/*
 * publish.c — how an output file is named while it is written, cleaned up and
 * published (publish.h).
 *
 * The file is written as "<path>.incomplete" in the same directory (rename is
 * atomic only within one file system) and, once complete, flushed to disk
 * (fsync) and renamed over <path>, and the directory is flushed so the rename
 * itself survives a crash. Without the fsync a power cut after the rename can
 * leave an empty file under the final name on ext4 and xfs.
 *
 * A write can be cut short three ways; none leaves a file that cannot be read
 * under the final name, and the previous file stays until the rename:
 *   - an error (disk full, HDF5 failure): the temporary file is removed;
 *   - SIGINT or SIGTERM during the write: the process's handler removes it
 *     (cxs_publish_remove_pending, async-signal-safe: unlink of a path kept in
 *     a static buffer) before the process ends;
 *   - SIGKILL or a crash: nothing runs, so the file stays, and its name says
 *     what it is ("out.h5.incomplete", not a bare ".partial" that looks like
 *     a format); the next write to the same path removes it first.
 *
 * The check before a run (cxs_publish_check) really creates the temporary
 * file and removes it: access(2) says yes for a root user in /proc or on a
 * read-only mount, and only creating shows that the write at the end will
 * work. An existing path must be a regular file: renaming over a directory
 * fails only at the end, and renaming over /dev/null as root would replace
 * the device node.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "cxlsim/publish.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cxlsim/errmsg.h"

/* The temporary file being written, for the signal handler; "" when none. */
static char pending[4096];
static volatile sig_atomic_t have_pending;

static char *temp_name(const char *path)
{
	char *tmp = malloc(strlen(path) + sizeof(CXS_PUBLISH_SUFFIX));

	if (tmp != NULL) {
		strcpy(tmp, path);
		strcat(tmp, CXS_PUBLISH_SUFFIX);
	}
	return tmp;
}

static const char *kind_of(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" :
	       S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "a special file";
}

int cxs_publish_check(const char *path, char *err, size_t errlen)
{
	struct stat sb;
	char *tmp;
	int fd, rc = -1;

	if (stat(path, &sb) == 0) {
		if (S_ISDIR(sb.st_mode)) {
			cxs_set_err(err, errlen, "%s is a directory; name a file in it, such as "
				    "%s/cxlsim-out.h5", path, path);
			return -1;
		}
		if (!S_ISREG(sb.st_mode)) {
			cxs_set_err(err, errlen, "%s is not a regular file (%s): the output is "
				    "written beside it and renamed over it", path, kind_of(sb.st_mode));
			return -1;
		}
	}
	tmp = temp_name(path);
	if (tmp == NULL) {
		cxs_set_err(err, errlen, "out of memory");
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
	if (fd < 0) {
		cxs_set_err(err, errlen, "cannot create %s (as %s): %s", path, tmp, strerror(errno));
		goto out;
	}
	close(fd);
	unlink(tmp);
	rc = 0;
out:
	free(tmp);
	return rc;
}

char *cxs_publish_begin(const char *path)
{
	char *tmp = temp_name(path);

	if (tmp == NULL)
		return NULL;
	unlink(tmp); /* a killed writer's; ENOENT is the usual answer */
	have_pending = 0;
	if (strlen(tmp) < sizeof(pending)) {
		memcpy(pending, tmp, strlen(tmp) + 1);
		have_pending = 1;
	}
	return tmp;
}

/* fsync of a file or directory by name; 0 or -1 with errno. */
static int sync_path(const char *p, int flags)
{
	int fd = open(p, flags | O_CLOEXEC), rc, saved;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

int cxs_publish_commit(const char *tmp, const char *path, char *err, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	char *dir;

	if (sync_path(tmp, O_RDONLY) != 0) {
		cxs_set_err(err, errlen, "cannot flush %s to disk: %s", tmp, strerror(errno));
		return -1;
	}
	if (rename(tmp, path) != 0) {
		cxs_set_err(err, errlen, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
		return -1;
	}
	have_pending = 0;
	dir = slash == NULL ? strdup(".") : strndup(path, slash == path ? 1 : (size_t)(slash - path));
	if (dir != NULL) {
		(void)sync_path(dir, O_RDONLY | O_DIRECTORY); /* the file is in place already */
		free(dir);
	}
	return 0;
}

void cxs_publish_abort(const char *tmp)
{
	have_pending = 0;
	if (tmp != NULL)
		unlink(tmp);
}

void cxs_publish_remove_pending(void)
{
	if (have_pending) {
		have_pending = 0;
		unlink(pending);
	}
}
