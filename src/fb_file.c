/* src/fb_file.c — --out targets and journals.  Contract in fb_file.h. */
#include "src/fb_file.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* path with every symbolic link of its last component followed (a dangling
 * link gives the path it points to).  New string, or NULL with errno ELOOP. */
static char *follow_links(const char *path)
{
	char *p = fb_xstrdup(path), target[PATH_MAX];
	struct stat st;
	for (int hops = 0; hops <= MAX_LINKS; hops++) {
		if (lstat(p, &st) || !S_ISLNK(st.st_mode))
			return p;
		ssize_t n = readlink(p, target, sizeof(target) - 1);
		if (n < 0)
			return p;
		target[n] = '\0';
		char *dir = dir_of(p), *next = target[0] == '/' ? fb_xstrdup(target)
						  : fb_xasprintf("%s/%s", dir, target);
		free(dir);
		free(p);
		p = next;
	}
	free(p);
	errno = ELOOP;
	return NULL;
}

/* A new temporary beside target: TARGET.tmp.PID.XXXXXX (O_EXCL, mode 0600).  fd or -errno. */
static int make_temp(const char *target, char **name)
{
	*name = fb_xasprintf("%s.tmp.%ld.XXXXXX", target, (long)getpid());
	int fd = mkostemp(*name, O_CLOEXEC);
	return fd < 0 ? -errno : fd;
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

/* Remove the temporaries beside target whose fencebench no longer runs. */
static void remove_leftovers(const char *target)
{
	char *dir = dir_of(target);
	DIR *d = opendir(dir);
	free(dir);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		long pid = temp_owner(e->d_name, base_of(target));
		if (pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) && errno == ESRCH)
			unlinkat(dirfd(d), e->d_name, 0);
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

/* An existing path that is not a regular file: written in place, or refused. */
static int open_special(struct fb_out *out, const char *path, const struct stat *st, char *err, size_t errlen)
{
	if (S_ISDIR(st->st_mode))
		return out_error(err, errlen, path, "is a folder: give a file name");
	if (!S_ISFIFO(st->st_mode) && !S_ISCHR(st->st_mode))
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

int fb_out_open(struct fb_out *out, const char *path, char *err, size_t errlen)
{
	struct stat st, tst;
	memset(out, 0, sizeof(*out));
	out->path = fb_xstrdup(path);
	bool exists = stat(path, &st) == 0;
	if (!exists && errno != ENOENT)
		return out_error(err, errlen, path, "%s", strerror(errno));
	if (exists && !S_ISREG(st.st_mode))
		return open_special(out, path, &st, err, errlen);
	out->target = follow_links(path);
	if (!out->target)
		return out_error(err, errlen, path, "%s", strerror(errno));
	if (exists && (lstat(out->target, &tst) || tst.st_dev != st.st_dev || tst.st_ino != st.st_ino)) {
		/* A link that names no path (/proc/self/fd/N of a deleted file): write it as it is. */
		free(out->target);
		out->target = NULL;
		return open_special(out, path, &st, err, errlen);
	}
	mode_t mask = umask(0);
	umask(mask);
	out->mode = exists ? st.st_mode & 07777 : 0666 & ~mask;
	int rc = check_creatable(path, out->target, err, errlen);
	if (!rc)
		remove_leftovers(out->target);
	return rc;
}

void fb_out_free(struct fb_out *out)
{
	free(out->path);
	free(out->target);
	memset(out, 0, sizeof(*out));
}

static int write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

static int write_in_place(const struct fb_out *out, const char *data, size_t len, char *err, size_t errlen)
{
	char p[FB_FILE_SHOWN_MAX];
	int fd = open(out->path, O_WRONLY | O_TRUNC | O_NOCTTY | O_CLOEXEC), rc;
	if (fd < 0)
		rc = -errno;
	else if ((rc = write_all(fd, data, len)) == 0 && close(fd))
		rc = -errno;
	else if (rc)
		close(fd);
	if (rc)
		snprintf(err, errlen, "--out %s: cannot write: %s", fb_file_shown(out->path, p, sizeof(p)), strerror(-rc));
	return rc;
}

/* The temporary's content, mode and data on disk.  0 or -errno; fd closed either way. */
static int fill_temp(int fd, const struct fb_out *out, const char *data, size_t len)
{
	int rc = write_all(fd, data, len);
	if (!rc && (fchmod(fd, out->mode) || fsync(fd)))
		rc = -errno;
	if (close(fd) && !rc)
		rc = -errno;
	return rc;
}

static int write_atomic(const struct fb_out *out, const char *data, size_t len, char *err, size_t errlen)
{
	char *tmp, p[FB_FILE_SHOWN_MAX];
	const char *what = "cannot create a temporary file beside it";
	fb_signal_hold();
	int fd = make_temp(out->target, &tmp), rc = fd < 0 ? fd : 0;
	if (!rc) {
		what = "cannot write";
		rc = fill_temp(fd, out, data, len);
	}
	if (!rc) {
		what = "cannot rename the temporary file onto it";
		rc = rename(tmp, out->target) ? -errno : 0;
	}
	if (rc && fd >= 0)
		unlink(tmp);
	fb_signal_release();
	if (rc)
		snprintf(err, errlen, "--out %s: %s: %s", fb_file_shown(out->path, p, sizeof(p)), what, strerror(-rc));
	free(tmp);
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
