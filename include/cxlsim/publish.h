/*
 * publish.h — putting an output file in place atomically.
 *
 * A file is written under a temporary name beside its final one and renamed
 * over it only when complete (publish.c says why and what else is done), so
 * a reader sees no file, the previous one, or a complete one — never a torn
 * file under the final name.
 */
#ifndef CXLSIM_PUBLISH_H
#define CXLSIM_PUBLISH_H

#include <stddef.h>

/* The suffix of the temporary name: "out.h5" is written as "out.h5.incomplete". */
#define CXS_PUBLISH_SUFFIX ".incomplete"

/*
 * Before a run: whether a file can be published at path — path is not a
 * directory or anything but a regular file, and its temporary file can be
 * created in its directory (tried, then removed). 0, or -1 with "cannot
 * create PATH: reason" (or "PATH is a directory ...") in err.
 */
int cxs_publish_check(const char *path, char *err, size_t errlen);

/*
 * Starts a file for path: returns the malloc'd temporary name to write to
 * (NULL when out of memory), having removed any stale temporary file of
 * an earlier writer that was killed, and remembers it for
 * cxs_publish_remove_pending.
 */
char *cxs_publish_begin(const char *path);

/* Flushes tmp to disk and renames it to path; 0, or -1 with a message. */
int cxs_publish_commit(const char *tmp, const char *path, char *err, size_t errlen);

/* Gives up: removes tmp (a missing tmp is fine). */
void cxs_publish_abort(const char *tmp);

/*
 * Async-signal-safe: removes the temporary file being written, if any — for
 * a signal handler that is about to end the process in the middle of a write.
 */
void cxs_publish_remove_pending(void);

#endif /* CXLSIM_PUBLISH_H */
