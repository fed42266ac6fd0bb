/* src/fb_io.h — the harness's write, fsync and rename, with a seam that fails one on purpose.
 *
 * Every byte the harness writes to a result, a journal or stdout goes through
 * these calls, so a test can fail the Nth one with a chosen errno (in the
 * style of SQLite's I/O error tests) and check that nothing is lost and the
 * error is reported as one.  A fault is set by fb_io_fault (a unit test) or,
 * for a test that runs the fencebench binary, by the environment variable
 *
 *   FENCEBENCH_IO_FAULT=OP:N:WHAT     OP: write, fsync, rename or any
 *                                     N: the Nth call of OP from the start (1 = first)
 *                                     WHAT: an errno name (ENOSPC, EIO, EINTR, EPERM,
 *                                     EDQUOT, EROFS), "short" (write: half the bytes),
 *                                     or "kill" (SIGKILL before the call: a crash there)
 *
 * read once, at the first call.  Unset, the calls are the system's.
 * Thread-safe: the call counters are atomic (relaxed: they order nothing).
 */
#ifndef FB_IO_H
#define FB_IO_H

#include <stddef.h>
#include <sys/types.h>

enum fb_io_op { FB_IO_WRITE, FB_IO_FSYNC, FB_IO_RENAME, FB_IO_ANY };

#define FB_IO_SHORT (-1)   /* fb_io_fault err: a write writes half its bytes */
#define FB_IO_KILL  (-2)   /* fb_io_fault err: SIGKILL before the call */

/* write(2), fsync(2), rename(2), unless the fault hits this call: then -1
 * with errno err (or what FB_IO_SHORT / FB_IO_KILL say). */
ssize_t fb_io_write(int fd, const void *buf, size_t n);
int fb_io_fsync(int fd);
int fb_io_rename(const char *from, const char *to);

/* Fail the nth call of op (counted from now; 0: no fault) with err. */
void fb_io_fault(enum fb_io_op op, unsigned nth, int err);

/* All of buf: short writes continued, EINTR retried.  0 or -errno (-EIO
 * when write returns 0). */
int fb_io_write_all(int fd, const void *buf, size_t n);
/* fsync, EINTR retried (a signal cut it short: the data is not known to
 * be on disk yet).  0 or -errno. */
int fb_io_fsync_all(int fd);
/* fsync the folder that holds path (its entries: a new or renamed file
 * survives a power cut).  0 or -errno; a file system that cannot (EINVAL)
 * counts as done. */
int fb_io_fsync_dir_of(const char *path);

#endif
