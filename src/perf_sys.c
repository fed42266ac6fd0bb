/* src/perf_sys.c — the real system calls behind the perf layer's seam, and
 * the switch a test turns.  Contract in src/perf_sys.h. */
#include "src/perf_sys.h"

#include <poll.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <perfmon/pfmlib_perf_event.h>


static int fb_sys_event_open(struct perf_event_attr *attr, pid_t tid, int cpu, int group_fd, unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, attr, tid, cpu, group_fd, flags);
}

static int fb_sys_ioctl(int fd, unsigned long request, unsigned long arg)
{
	return ioctl(fd, request, arg);
}

static int fb_sys_poll(struct pollfd *fds, unsigned long nfds, int timeout_ms)
{
	return poll(fds, (nfds_t)nfds, timeout_ms);
}

static int fb_sys_pfm_encode(const char *name, int dfl_plm, int os, void *arg)
{
	return pfm_get_os_event_encoding(name, dfl_plm, (pfm_os_t)os, arg);
}

const struct fb_perf_sys fb_perf_sys_real = {
	.event_open = fb_sys_event_open,
	.read = read,
	.ioctl = fb_sys_ioctl,
	.close = close,
	.write = write,
	.poll = fb_sys_poll,
	.pfm_encode = fb_sys_pfm_encode,
};

/* The table in use; NULL: the real one.  Release on set, acquire on use: a
 * test's table (its functions' data) is complete before a caller sees it. */
static _Atomic(const struct fb_perf_sys *) fb_perf_sys_cur;

const struct fb_perf_sys *fb_perf_sys(void)
{
	const struct fb_perf_sys *t = atomic_load_explicit(&fb_perf_sys_cur, memory_order_acquire);
	return t ? t : &fb_perf_sys_real;
}

const struct fb_perf_sys *fb_perf_sys_set(const struct fb_perf_sys *t)
{
	const struct fb_perf_sys *old = atomic_exchange_explicit(&fb_perf_sys_cur, t, memory_order_acq_rel);
	return old ? old : &fb_perf_sys_real;
}
