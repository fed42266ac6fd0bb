/* src/perf_ctl.c — fencebench's side of `perf stat --delay=-1 --control
 * fd:CTL,ACK`: write enable/disable, wait for perf's ack.  Contract in
 * src/perf.h ("perf stat --control"). */
#include "src/perf.h"
#include "src/perf_sys.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lockfree/arch.h"
#include "src/fb_util.h"

/* ---- perf stat --control fd:CTL,ACK ------------------------------------------------ */

struct fb_perf_ctl {
	int ctl_fd, ack_fd;           /* the caller's; ack_fd -1: no acks */
	int timeout_ms;
};

/* O_RDONLY / O_WRONLY / O_RDWR of fd, or -errno. */
static int fb_perf_fd_mode(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 ? -errno : (fl & O_ACCMODE);
}

int fb_perf_ctl_open(int ctl_fd, int ack_fd, struct fb_perf_ctl **out)
{
	struct fb_perf_ctl *c;
	int m;

	*out = NULL;
	if (ctl_fd < 0 || ack_fd < -1 || ctl_fd == ack_fd)
		return -EINVAL;
	m = fb_perf_fd_mode(ctl_fd);
	if (m < 0)
		return m;
	if (m == O_RDONLY)
		return -EBADF;
	if (ack_fd >= 0) {
		m = fb_perf_fd_mode(ack_fd);
		if (m < 0)
			return m;
		if (m == O_WRONLY)
			return -EBADF;
	}
	c = fb_xcalloc(1, sizeof(*c));
	c->ctl_fd = ctl_fd;
	c->ack_fd = ack_fd;
	c->timeout_ms = 2000;
	*out = c;
	return 0;
}

void fb_perf_ctl_set_timeout_ms(struct fb_perf_ctl *c, int timeout_ms)
{
	c->timeout_ms = timeout_ms < 0 ? 0 : timeout_ms;
}

/* Write all of buf without dying of SIGPIPE if perf has gone: block SIGPIPE in this
 * thread, and swallow the one our write raised (not one that was already pending). */
static int fb_perf_write_all(int fd, const char *buf, size_t len)
{
	sigset_t pipe_set, old, pending;
	int rc = 0;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	sigpending(&pending);
	bool was_pending = sigismember(&pending, SIGPIPE);
	while (len) {
		ssize_t w = fb_perf_sys()->write(fd, buf, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			rc = -errno;
			break;
		}
		buf += w;
		len -= (size_t)w;
	}
	if (rc == -EPIPE && !was_pending) {
		struct timespec zero = { 0, 0 };
		while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* Wait for one "ack\n" line on the ack fd.  perf writes "ack\n" and its C string
 * terminator; NULs are skipped.  One byte per read, so nothing past the line is
 * consumed. */
static int fb_perf_ctl_wait_ack(struct fb_perf_ctl *c)
{
	uint64_t deadline = lf_now_ns() + (uint64_t)c->timeout_ms * 1000000u;
	char line[16];
	size_t len = 0;
	bool overflow = false;

	for (;;) {
		uint64_t now = lf_now_ns();
		if (now >= deadline)
			return -ETIMEDOUT;
		struct pollfd p = { .fd = c->ack_fd, .events = POLLIN };
		int r = fb_perf_sys()->poll(&p, 1, (int)((deadline - now + 999999u) / 1000000u));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
		if (!(p.revents & POLLIN))
			return p.revents & POLLNVAL ? -EBADF : p.revents & POLLHUP ? -EPIPE : -EIO;
		char ch;
		ssize_t got = fb_perf_sys()->read(c->ack_fd, &ch, 1);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			return -EPIPE;
		if (ch == '\0')
			continue;
		if (ch == '\n') {
			line[len] = '\0';
			return !overflow && strcmp(line, "ack") == 0 ? 0 : -EPROTO;
		}
		if (len + 1 < sizeof(line))
			line[len++] = ch;
		else
			overflow = true;
	}
}

static int fb_perf_ctl_send(struct fb_perf_ctl *c, const char *cmd)
{
	int rc = fb_perf_write_all(c->ctl_fd, cmd, strlen(cmd));

	if (rc || c->ack_fd < 0)
		return rc;
	return fb_perf_ctl_wait_ack(c);
}

int fb_perf_ctl_enable(struct fb_perf_ctl *c)
{
	return fb_perf_ctl_send(c, "enable\n");
}

int fb_perf_ctl_disable(struct fb_perf_ctl *c)
{
	return fb_perf_ctl_send(c, "disable\n");
}

void fb_perf_ctl_close(struct fb_perf_ctl *c)
{
	free(c);
}
