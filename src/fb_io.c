/* src/fb_io.c — write, fsync and rename with a test seam.  Contract in fb_io.h. */
#include "src/fb_io.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/fb_util.h"

static _Atomic unsigned calls[FB_IO_ANY + 1];   /* relaxed: counters only */
static enum fb_io_op fault_op;
static unsigned fault_nth;                      /* 0: no fault */
static int fault_err;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static const struct { const char *name; int err; } errs[] = {
	{ "ENOSPC", ENOSPC }, { "EIO", EIO }, { "EINTR", EINTR }, { "EPERM", EPERM }, { "EDQUOT", EDQUOT },
	{ "EROFS", EROFS }, { "EACCES", EACCES }, { "short", FB_IO_SHORT }, { "kill", FB_IO_KILL },
};

static void read_env(void)
{
	const char *v = getenv("FENCEBENCH_IO_FAULT");
	char op[16], what[16];
	unsigned nth;
	if (!v || sscanf(v, "%15[a-z]:%u:%15s", op, &nth, what) != 3)
		return;
	static const char *const ops[] = { "write", "fsync", "rename", "any" };
	for (int o = 0; o <= FB_IO_ANY; o++)
		for (size_t e = 0; e < sizeof(errs) / sizeof(errs[0]); e++)
			if (!strcmp(op, ops[o]) && !strcmp(what, errs[e].name))
				fb_io_fault((enum fb_io_op)o, nth, errs[e].err);
}

void fb_io_fault(enum fb_io_op op, unsigned nth, int err)
{
	for (int o = 0; o <= FB_IO_ANY; o++)
		atomic_store_explicit(&calls[o], 0, memory_order_relaxed);
	fault_op = op;
	fault_err = err;
	fault_nth = nth;
}

/* The fault for this call of op: 0 (none), an errno, FB_IO_SHORT or FB_IO_KILL. */
static int fault(enum fb_io_op op)
{
	pthread_once(&env_once, read_env);
	unsigned n = atomic_fetch_add_explicit(&calls[op], 1, memory_order_relaxed) + 1;
	unsigned any = atomic_fetch_add_explicit(&calls[FB_IO_ANY], 1, memory_order_relaxed) + 1;
	if (!fault_nth || (fault_op == FB_IO_ANY ? any : fault_op == op ? n : 0) != fault_nth)
		return 0;
	if (fault_err == FB_IO_KILL)
		kill(getpid(), SIGKILL);
	return fault_err;
}

ssize_t fb_io_write(int fd, const void *buf, size_t n)
{
	int f = fault(FB_IO_WRITE);
	if (f == FB_IO_SHORT && n > 1)
		return write(fd, buf, n / 2);
	if (f > 0) {
		errno = f;
		return -1;
	}
	return write(fd, buf, n);
}

int fb_io_fsync(int fd)
{
	int f = fault(FB_IO_FSYNC);
	if (f > 0) {
		errno = f;
		return -1;
	}
	return fsync(fd);
}

int fb_io_rename(const char *from, const char *to)
{
	int f = fault(FB_IO_RENAME);
	if (f > 0) {
		errno = f;
		return -1;
	}
	return rename(from, to);
}

int fb_io_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n) {
		ssize_t w = fb_io_write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int fb_io_fsync_all(int fd)
{
	while (fb_io_fsync(fd))
		if (errno != EINTR)
			return -errno;
	return 0;
}

int fb_io_fsync_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = !slash ? fb_xstrdup(".") : fb_xstrndup(path, slash == path ? 1 : (size_t)(slash - path));
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;
	free(dir);
	if (fd < 0)
		return -errno;
	rc = fb_io_fsync_all(fd);
	if (rc == -EINVAL)
		rc = 0;
	close(fd);
	return rc;
}
