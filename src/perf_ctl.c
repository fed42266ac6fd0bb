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
	/* Acks still to come for commands that were sent: perf acks every command,
	 * in order, so after a timeout the next acks answer the older commands
	 * first.  A late ack is consumed as theirs, never taken for a newer one. */
	unsigned owed;
	/* The ack line read so far: kept across a timeout, so an ack whose first
	 * bytes came before it is still read whole. */
	char line[16];
	size_t len;
	bool overflow;
};

/* O_RDONLY / O_WRONLY / O_RDWR of fd, or -errno. */
static int fb_perf_fd_mode(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 ? -errno : (fl & O_ACCMODE);
}

/* Read and drop what the ack FIFO already holds: acks perf sent after an
 * earlier process gave up on them (that process timed out and exited, under
 * the same `perf stat --control`).  No command of this handle is out yet, so
 * none of it is ours; left there, it would answer our first command before
 * perf has acted on it.  Never blocks: reads only what poll says is there. */
static void fb_perf_ctl_drain_stale(int ack_fd)
{
	char buf[256];
	for (;;) {
		struct pollfd p = { .fd = ack_fd, .events = POLLIN };
		int r = fb_perf_sys()->poll(&p, 1, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || !(p.revents & POLLIN))
			return;
		ssize_t n = fb_perf_sys()->read(ack_fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
	}
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
	if (ack_fd >= 0)
		fb_perf_ctl_drain_stale(ack_fd);
	*out = c;
	return 0;
}

void fb_perf_ctl_set_timeout_ms(struct fb_perf_ctl *c, int timeout_ms)
{
	c->timeout_ms = timeout_ms < 0 ? 0 : timeout_ms;
}

/* Milliseconds from now to deadline (ns, lf_now_ns), rounded up; 0 when past. */
static int fb_perf_ms_left(uint64_t deadline)
{
	uint64_t now = lf_now_ns();
	return now >= deadline ? 0 : (int)((deadline - now + 999999u) / 1000000u);
}

/* Poll fd for events until deadline: its revents (> 0), -ETIMEDOUT, or -errno. */
static int fb_perf_poll_until(int fd, short events, uint64_t deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		int r = fb_perf_sys()->poll(&p, 1, fb_perf_ms_left(deadline));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		return r == 0 ? -ETIMEDOUT : p.revents;
	}
}

/* Wait until fd takes a write, at most until deadline: 0, -ETIMEDOUT (the
 * FIFO is full: nobody reads it), -EPIPE (no reader), or -errno. */
static int fb_perf_wait_writable(int fd, uint64_t deadline)
{
	int ev = fb_perf_poll_until(fd, POLLOUT, deadline);
	if (ev < 0)
		return ev;
	return ev & POLLNVAL ? -EBADF : ev & POLLERR ? -EPIPE : 0;
}

/* Write all of buf by deadline without dying of SIGPIPE if perf has gone: block
 * SIGPIPE in this thread, and swallow the one our write raised (not one that
 * was already pending).  Each write waits for room first, so a FIFO nobody
 * reads costs the timeout, never a hang (a command is far below PIPE_BUF:
 * once there is room it goes in whole). */
static int fb_perf_write_all(int fd, const char *buf, size_t len, uint64_t deadline)
{
	sigset_t pipe_set, old, pending;
	int rc = 0;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	sigpending(&pending);
	bool was_pending = sigismember(&pending, SIGPIPE);
	while (len && !(rc = fb_perf_wait_writable(fd, deadline))) {
		ssize_t w = fb_perf_sys()->write(fd, buf, len);
		if (w < 0 && (errno == EINTR || errno == EAGAIN))
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
static int fb_perf_ctl_wait_ack(struct fb_perf_ctl *c, uint64_t deadline)
{
	for (;;) {
		if (lf_now_ns() >= deadline)
			return -ETIMEDOUT;
		int ev = fb_perf_poll_until(c->ack_fd, POLLIN, deadline);
		if (ev < 0)
			return ev;
		if (!(ev & POLLIN))
			return ev & POLLNVAL ? -EBADF : ev & POLLHUP ? -EPIPE : -EIO;
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
			c->line[c->len] = '\0';
			bool ack = !c->overflow && strcmp(c->line, "ack") == 0;
			c->len = 0;
			c->overflow = false;
			return ack ? 0 : -EPROTO;
		}
		if (c->len + 1 < sizeof(c->line))
			c->line[c->len++] = ch;
		else
			c->overflow = true;
	}
}

/* Send cmd and wait for its ack, the acks owed to earlier commands first;
 * the write and the wait share one timeout. */
static int fb_perf_ctl_send(struct fb_perf_ctl *c, const char *cmd)
{
	uint64_t deadline = lf_now_ns() + (uint64_t)c->timeout_ms * 1000000u;
	int rc = fb_perf_write_all(c->ctl_fd, cmd, strlen(cmd), deadline);

	if (rc || c->ack_fd < 0)
		return rc;
	c->owed++;
	while (c->owed) {
		rc = fb_perf_ctl_wait_ack(c, deadline);
		if (rc == -ETIMEDOUT || rc == -EPIPE || rc == -EBADF)
			return rc;   /* this command's ack (and any older one) is still owed */
		c->owed--;       /* an answer, to the oldest command waiting for one */
		if (rc)
			return rc;
	}
	return 0;
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
