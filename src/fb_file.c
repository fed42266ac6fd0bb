/* src/fb_file.c — --out targets and journals.  Contract in fb_file.h. */
#include "src/fb_file.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/fb_io.h"
#include "src/fb_signal.h"
#include "src/fb_util.h"

#define MAX_LINKS 40   /* symbolic links followed at most, as the kernel's ELOOP */

const char *fb_file_shown(const char *path, char *buf, size_t len)
{
	size_t n = strlen(path), max = len - 1 < 120 ? len - 1 : 120, head = n, tail = 0;
	if (n > max) {
		head = max / 3;
		tail = max - head - 3;
	}
	size_t o = 0;
	for (size_t i = 0; i < head; i++)
		buf[o++] = isprint((unsigned char)path[i]) ? path[i] : '?';
	if (tail) {
		memcpy(buf + o, "...", 3);
		o += 3;
		for (size_t i = n - tail; i < n; i++)
			buf[o++] = isprint((unsigned char)path[i]) ? path[i] : '?';
	}
	buf[o] = '\0';
	return buf;
}

static int out_error(char *err, size_t errlen, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int out_error(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
	char p[FB_FILE_SHOWN_MAX], why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "--out %s: %s", fb_file_shown(path, p, sizeof(p)), why);
	return -EINVAL;
}

/* The folder part of path ("." when it has none).  New string. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return fb_xstrdup(".");
	return fb_xstrndup(path, slash == path ? 1 : (size_t)(slash - path));
}

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* One hop: *p replaced by what the symbolic link *p points to (relative to
 * its folder); false, *p unchanged, when *p is no link that can be read. */
static bool link_step(char **p)
{
	char target[PATH_MAX];
	ssize_t n = readlink(*p, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	char *dir = dir_of(*p), *next = target[0] == '/' ? fb_xstrdup(target) : fb_xasprintf("%s/%s", dir, target);
	free(dir);
	free(*p);
	*p = next;
	return true;
}

/* path with every symbolic link of its last component followed (a dangling
 * link gives the path it points to).  New string, or NULL with errno ELOOP. */
static char *follow_links(const char *path)
{
	char *p = fb_xstrdup(path);
	struct stat st;
	for (int hops = 0; hops <= MAX_LINKS; hops++)
		if (lstat(p, &st) || !S_ISLNK(st.st_mode) || !link_step(&p))
			return p;
	free(p);
	errno = ELOOP;
	return NULL;
}

/* fd is (still) the file at name. */
static bool is_at(int fd, const char *name)
{
	struct stat a, b;
	return !fstat(fd, &a) && !lstat(name, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* A new temporary beside target: TARGET.tmp.PID.XXXXXX (O_EXCL, mode 0600),
 * locked (flock) until closed, so remove_leftovers leaves it alone.  A
 * cleaner that removed it between the create and the lock is seen (the name
 * no longer reaches it): made again.  fd or -errno. */
static int make_temp(const char *target, char **name)
{
	for (int tries = 0;; tries++) {
		*name = fb_xasprintf("%s.tmp.%ld.XXXXXX", target, (long)getpid());
		int fd = mkostemp(*name, O_CLOEXEC);
		if (fd < 0)
			return -errno;
		int locked = flock(fd, LOCK_EX | LOCK_NB) ? -errno : 0;
		/* A file system without locks (-ENOLCK...): the temporary unlocked,
		 * as a cleaner there cannot take its lock either. */
		if (locked != -EWOULDBLOCK && is_at(fd, *name))
			return fd;
		close(fd);
		if (tries == 100)   /* a cleaner removing every one: give up, never spin */
			return -EAGAIN;
		free(*name);
	}
}

/* "NAME.tmp.PID.XXXXXX" for target base NAME: the PID, or -1 when name is no such temporary. */
static long temp_owner(const char *name, const char *base)
{
	size_t n = strlen(base);
	if (strncmp(name, base, n) || strncmp(name + n, ".tmp.", 5))
		return -1;
	const char *p = name + n + 5;
	char *end;
	long pid = strtol(p, &end, 10);
	if (end == p || *end != '.' || strlen(end + 1) != 6 || pid <= 0)
		return -1;
	return pid;
}

/* Remove the temporaries beside target that no writer holds: their lock
 * can be taken (a writer locks its temporary from creation to rename). */
static void remove_leftovers(const char *target)
{
	char *dir = dir_of(target);
	DIR *d = opendir(dir);
	free(dir);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		if (temp_owner(e->d_name, base_of(target)) <= 0)
			continue;
		int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			continue;
		struct stat st;
		if (!fstat(fd, &st) && S_ISREG(st.st_mode) && !flock(fd, LOCK_EX | LOCK_NB))
			unlinkat(dirfd(d), e->d_name, 0);   /* under our lock: no writer can take it meanwhile */
		close(fd);
	}
	closedir(d);
}

/* The target's folder exists and takes a new file (a temporary, removed again). */
static int check_creatable(const char *path, const char *target, char *err, size_t errlen)
{
	char *dir = dir_of(target), *tmp, d[FB_FILE_SHOWN_MAX];
	struct stat st;
	int rc = 0;
	if (stat(dir, &st))
		rc = out_error(err, errlen, path, "folder %s %s", fb_file_shown(dir, d, sizeof(d)),
			       errno == ENOENT ? "does not exist" : strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		rc = out_error(err, errlen, path, "%s is not a folder", fb_file_shown(dir, d, sizeof(d)));
	if (!rc) {
		int fd = make_temp(target, &tmp);
		if (fd < 0)
			rc = out_error(err, errlen, path, "cannot create a file in %s: %s",
				       fb_file_shown(dir, d, sizeof(d)), strerror(-fd));
		else
			close(fd), unlink(tmp);
		free(tmp);
	}
	free(dir);
	return rc;
}

/* An existing path that is not a regular file (or one no path reaches):
 * written in place, or refused. */
static int open_special(struct fb_out *out, const char *path, const struct stat *st, char *err, size_t errlen)
{
	if (S_ISDIR(st->st_mode))
		return out_error(err, errlen, path, "is a folder: give a file name");
	if (!S_ISFIFO(st->st_mode) && !S_ISCHR(st->st_mode) && !S_ISREG(st->st_mode))
		return out_error(err, errlen, path, "is a %s: give a file, a FIFO or a character device",
				 S_ISSOCK(st->st_mode) ? "socket" : "block device");
	/* A FIFO without a reader yet (ENXIO) is fine: the write waits for one. */
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno != ENXIO)
		return out_error(err, errlen, path, "cannot write it: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
	out->in_place = true;
	return 0;
}

/* The descriptor p names when its folder is this process's descriptor
 * folder, however spelled (/proc/self/fd, /dev/fd, /proc/PID/fd,
 * /proc/thread-self/fd, "..": compared as the real folder), or /dev/stdin,
 * /dev/stdout, /dev/stderr; else -1. */
static int fd_spelled(const char *p)
{
	static const char *const std[] = { "/dev/stdin", "/dev/stdout", "/dev/stderr" };
	for (int i = 0; i < 3; i++)
		if (!strcmp(p, std[i]))
			return i;
	const char *base = base_of(p);
	char *end, *dir = dir_of(p), *real = realpath(dir, NULL), mine[48], task[48];
	long fd = strtol(base, &end, 10);
	bool digits = isdigit((unsigned char)*base) && !*end && fd <= INT_MAX;
	snprintf(mine, sizeof(mine), "/proc/%ld/fd", (long)getpid());
	snprintf(task, sizeof(task), "/proc/%ld/task/", (long)getpid());
	size_t n = real ? strlen(real) : 0;
	bool ours = real && (!strcmp(real, mine) || (!strncmp(real, task, strlen(task)) && n > 3 &&
						     !strcmp(real + n - 3, "/fd")));
	free(real);
	free(dir);
	return digits && ours ? (int)fd : -1;
}

/* The open descriptor path reaches, spelled so itself or through links
 * (/dev/stdout -> /proc/self/fd/1): the fd, or -1. */
static int named_fd(const char *path)
{
	char *p = fb_xstrdup(path);
	int fd = -1;
	for (int hops = 0; hops <= MAX_LINKS && fd < 0; hops++)
		if ((fd = fd_spelled(p)) < 0 && !link_step(&p))
			break;
	free(p);
	return fd >= 0 && fcntl(fd, F_GETFD) >= 0 ? fd : -1;
}

bool fb_out_is_stdout(const struct fb_out *out)
{
	struct stat st;
	return out->exists && !fstat(STDOUT_FILENO, &st) && st.st_dev == out->dev && st.st_ino == out->ino;
}

/* Where a file not yet there would be: the real folder and the name. */
static char *where_of(const char *target)
{
	char *dir = dir_of(target), *real = realpath(dir, NULL);
	char *w = fb_xasprintf("%s/%s", real ? real : dir, base_of(target));
	free(real);
	free(dir);
	return w;
}

/* The file out reaches, for fb_out_same. */
static void identify(struct fb_out *out, const struct stat *st)
{
	if (st) {
		out->exists = true;
		out->dev = st->st_dev;
		out->ino = st->st_ino;
	} else {
		out->where = where_of(out->target ? out->target : out->path);
	}
}

bool fb_out_same(const struct fb_out *a, const struct fb_out *b)
{
	if (a->exists || b->exists)
		return a->exists && b->exists && a->dev == b->dev && a->ino == b->ino;
	return a->where && b->where && !strcmp(a->where, b->where);
}

/* A sticky folder lets only the file's owner (or the folder's) replace it:
 * a rename that would fail at the end is refused before any work. */
static int check_replaceable(const char *path, const char *target, const struct stat *st, char *err, size_t errlen)
{
	char *dir = dir_of(target);
	struct stat dst;
	int rc = 0;
	uid_t me = geteuid();
	if (!stat(dir, &dst) && (dst.st_mode & S_ISVTX) && me != 0 && st->st_uid != me && dst.st_uid != me)
		rc = out_error(err, errlen, path, "cannot be replaced: it belongs to another user, in a sticky folder "
			       "(give another file name)");
	free(dir);
	return rc;
}

int fb_out_open(struct fb_out *out, const char *path, char *err, size_t errlen)
{
	struct stat st, tst;
	memset(out, 0, sizeof(*out));
	out->path = fb_xstrdup(path);
	out->fd = named_fd(path);
	if (out->fd >= 0) {   /* written through the descriptor: where it points, as it was opened */
		out->in_place = true;
		int mode = fcntl(out->fd, F_GETFL);
		if (mode < 0 || (mode & O_ACCMODE) == O_RDONLY)
			return out_error(err, errlen, path, "names descriptor %d, which is not open for writing", out->fd);
		if (!fstat(out->fd, &st))
			identify(out, &st);
		return 0;
	}
	bool exists = stat(path, &st) == 0;
	if (!exists && errno != ENOENT)
		return out_error(err, errlen, path, "%s", strerror(errno));
	if (exists && !S_ISREG(st.st_mode)) {
		identify(out, &st);
		return open_special(out, path, &st, err, errlen);
	}
	out->target = follow_links(path);
	if (!out->target)
		return out_error(err, errlen, path, "%s", strerror(errno));
	if (exists && (lstat(out->target, &tst) || tst.st_dev != st.st_dev || tst.st_ino != st.st_ino)) {
		/* A link that names no path (/proc/PID/fd/N of another process, a deleted file): write it as it is. */
		free(out->target);
		out->target = NULL;
		identify(out, &st);
		return open_special(out, path, &st, err, errlen);
	}
	identify(out, exists ? &st : NULL);
	mode_t mask = umask(0);
	umask(mask);
	/* The permission bits only: the new file is ours, and set-ID bits
	 * copied from another user's file would make a set-ID file of ours. */
	out->mode = exists ? st.st_mode & 0777 : 0666 & ~mask;
	int rc = exists ? check_replaceable(path, out->target, &st, err, errlen) : 0;
	if (!rc)
		rc = check_creatable(path, out->target, err, errlen);
	if (!rc)
		remove_leftovers(out->target);
	return rc;
}

void fb_out_free(struct fb_out *out)
{
	free(out->path);
	free(out->target);
	free(out->where);
	memset(out, 0, sizeof(*out));
}

/* Open a FIFO for writing, waiting for a reader (every 10 ms: a FIFO tells
 * no one when a reader comes) until one opens it or a SIGINT or SIGTERM
 * arrives (fb_signal_stopping): a stopped sweep never hangs on it.  fd or -errno. */
static int open_fifo(const char *path)
{
	const struct timespec tick = { 0, 10 * 1000 * 1000 };
	for (;;) {
		int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd >= 0)
			return fcntl(fd, F_SETFL, 0) ? (close(fd), -errno) : fd;   /* blocking writes again */
		if (errno != ENXIO)
			return -errno;
		if (fb_signal_stopping())
			return -EPIPE;
		nanosleep(&tick, NULL);
	}
}

/* Write all of data to fd.  A FIFO or pipe is written a page at a time,
 * each once poll says the pipe has room for it (a free page: the write then
 * never blocks), so that a reader that stopped reading cannot hold the
 * writer, and the stop hook waiting on it, for ever: a SIGINT or SIGTERM
 * (fb_signal_stopping) ends the wait with -ECANCELED, what was written
 * staying written.  While the pipe is full, a 10 ms poll: nothing tells a
 * writer that a signal came.  0 or -errno. */
static int write_until_stopped(int fd, const char *data, size_t len)
{
	struct stat st;
	if (fstat(fd, &st) || !S_ISFIFO(st.st_mode))
		return fb_io_write_all(fd, data, len);
	while (len) {
		if (fb_signal_stopping())
			return -ECANCELED;
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		int n = poll(&p, 1, 10);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n <= 0)
			continue;
		size_t chunk = len < PIPE_BUF ? len : PIPE_BUF;
		int rc = fb_io_write_all(fd, data, chunk);   /* POLLERR (no reader): EPIPE here */
		if (rc)
			return rc;
		data += chunk;
		len -= chunk;
	}
	return 0;
}

static int write_in_place(const struct fb_out *out, const char *data, size_t len, char *err, size_t errlen)
{
	char p[FB_FILE_SHOWN_MAX];
	struct stat st;
	int fd, rc;
	if (out->fd >= 0) {
		fd = out->fd;   /* as it was opened: at its offset, appending if it appends */
		fflush(NULL);   /* what stdio holds for it goes first */
	}
	else if (!stat(out->path, &st) && S_ISFIFO(st.st_mode))
		fd = open_fifo(out->path);
	else
		fd = open(out->path, O_WRONLY | O_TRUNC | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		rc = fd == -1 ? -errno : fd;
	else
		rc = write_until_stopped(fd, data, len);
	if (fd >= 0 && fd != out->fd && close(fd) && !rc)
		rc = -errno;
	if (rc == -EPIPE && fd < 0)
		snprintf(err, errlen, "--out %s: stopped while waiting for a reader: nothing written",
			 fb_file_shown(out->path, p, sizeof(p)));
	else if (rc == -ECANCELED)
		snprintf(err, errlen, "--out %s: stopped while its reader was not reading: the output is cut short",
			 fb_file_shown(out->path, p, sizeof(p)));
	else if (rc)
		snprintf(err, errlen, "--out %s: cannot write: %s", fb_file_shown(out->path, p, sizeof(p)), strerror(-rc));
	return rc;
}

/* The temporary's content, mode and data on disk.  0 or -errno; fd closed either way. */
static int fill_temp(int fd, const struct fb_out *out, const char *data, size_t len)
{
	int rc = fb_io_write_all(fd, data, len);
	if (!rc && fchmod(fd, out->mode))
		rc = -errno;
	if (!rc)
		rc = fb_io_fsync_all(fd);   /* EINTR retried, as the journal's and the folder's */
	if (close(fd) && !rc)
		rc = -errno;
	return rc;
}

/* The rename failed: the finished results stay, as TARGET.unsaved.XXXXXX
 * (a name remove_leftovers never takes).  The name kept. New string. */
static char *keep_temp(const char *tmp, const char *target)
{
	char *keep = fb_xasprintf("%s.unsaved.%s", target, tmp + strlen(tmp) - 6);
	if (rename(tmp, keep)) {
		free(keep);
		keep = fb_xstrdup(tmp);
	}
	fb_io_fsync_dir_of(keep);
	return keep;
}

static int write_atomic(const struct fb_out *out, const char *data, size_t len, char *err, size_t errlen)
{
	char *tmp = NULL, *kept = NULL, p[FB_FILE_SHOWN_MAX], k[FB_FILE_SHOWN_MAX];
	const char *what = "cannot create a temporary file beside it";
	bool renamed = false;
	fb_signal_hold();
	int fd = make_temp(out->target, &tmp), rc = fd < 0 ? fd : 0;
	if (!rc) {
		what = "cannot write";
		rc = fill_temp(fd, out, data, len);
	}
	if (!rc) {
		what = "cannot rename the temporary file onto it";
		rc = fb_io_rename(tmp, out->target) ? -errno : 0;
		renamed = !rc;
		if (rc)   /* never delete the only copy of finished results */
			kept = keep_temp(tmp, out->target);
	}
	if (renamed) {
		what = "written, but its folder could not be fsync'd (a power cut may lose it)";
		rc = fb_io_fsync_dir_of(out->target);
	}
	if (rc && fd >= 0 && !renamed && !kept)
		unlink(tmp);
	fb_signal_release();
	if (rc && kept)
		snprintf(err, errlen, "--out %s: %s: %s; the results are in %s", fb_file_shown(out->path, p, sizeof(p)),
			 what, strerror(-rc), fb_file_shown(kept, k, sizeof(k)));
	else if (rc)
		snprintf(err, errlen, "--out %s: %s: %s", fb_file_shown(out->path, p, sizeof(p)), what, strerror(-rc));
	free(tmp);
	free(kept);
	return rc;
}

static int stdout_errno;   /* the first error of a flush of stdout: the CLI thread's, or under the sweep's lock */

int fb_file_flush_stdout(void)
{
	if (fflush(stdout) == 0)
		return 0;
	if (!stdout_errno)
		stdout_errno = errno;
	return -errno;
}

int fb_file_stdout_error(void)
{
	if (fb_file_flush_stdout() == 0 && !ferror(stdout))
		return 0;
	return -(stdout_errno ? stdout_errno : EIO);
}

int fb_file_write_stdout(const char *text, char *err, size_t errlen)
{
	int rc = fb_file_flush_stdout();
	if (!rc)
		rc = write_until_stopped(STDOUT_FILENO, text, strlen(text));
	if (rc == -ECANCELED)
		snprintf(err, errlen, "stdout: stopped while its reader was not reading: the output is cut short");
	else if (rc)
		snprintf(err, errlen, "stdout: cannot write: %s", strerror(-rc));
	return rc;
}

int fb_out_write(const struct fb_out *out, const char *data, size_t len, char *err, size_t errlen)
{
	return out->in_place ? write_in_place(out, data, len, err, errlen) : write_atomic(out, data, len, err, errlen);
}

char *fb_file_shard_name(const char *path, unsigned index, unsigned count)
{
	const char *base = base_of(path), *dot = strrchr(base, '.');
	if (!dot || dot == base)
		return fb_xasprintf("%s.shard%u-of-%u", path, index, count);
	return fb_xasprintf("%.*s.shard%u-of-%u%s", (int)(dot - path), path, index, count, dot);
}

static int journal_error(char *err, size_t errlen, const char *path, int rc, const char *why)
{
	char p[FB_FILE_SHOWN_MAX];
	snprintf(err, errlen, "journal %s: %s", fb_file_shown(path, p, sizeof(p)), why);
	return rc;
}

int fb_file_open_journal(const char *path, char *err, size_t errlen)
{
	struct stat st;
	/* O_NOFOLLOW: a symbolic link fails (ELOOP) instead of truncating its target;
	 * O_NONBLOCK: a planted FIFO does not block the open (refused below). */
	int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0666);
	if (fd < 0 && errno == ELOOP)
		return journal_error(err, errlen, path, -EINVAL, "is a symbolic link: refused (remove it)");
	if (fd < 0 && errno == EISDIR)
		return journal_error(err, errlen, path, -EINVAL, "is a folder: refused (remove it)");
	if (fd < 0)
		return journal_error(err, errlen, path, -errno, strerror(errno));
	const char *why = NULL;
	int rc = -EINVAL;
	if (fstat(fd, &st))
		rc = -errno, why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "is not a regular file: refused (remove it)";
	else if (st.st_nlink > 1)
		why = "has other hard links: refused (remove it)";
	if (why) {
		close(fd);
		return journal_error(err, errlen, path, rc, why);
	}
	if (fcntl(fd, F_SETFL, O_APPEND)) {   /* blocking again, still appending */
		rc = -errno;
		close(fd);
		return journal_error(err, errlen, path, rc, strerror(-rc));
	}
	return fd;
}
