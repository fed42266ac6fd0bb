/* src/perf_sys.h — the seam under the perf layer's system calls.
 *
 * Every perf_event_open, and every read, ioctl and close of a counter fd in
 * src/perf_*.c, and every poll, write and read on perf stat's --control FIFOs,
 * goes through the table fb_perf_sys() returns: the real system calls
 * (fb_perf_sys_real), unless a test has put in its own with fb_perf_sys_set to
 * play what this machine lacks: a PMU (multiplexed reads with moving
 * time_enabled/time_running, EINVAL for a group larger than the counters, an
 * event never scheduled), or a perf stat that acks late; and libpfm4's event
 * encoder, to see what it is handed.  Each entry behaves as
 * its system call: the result, or -1 with errno set.
 *
 * Threads: any thread may call fb_perf_sys; set the table before the perf
 * calls it should see start, and put the old one back after they end (the
 * pointer is published with a release store, read with an acquire load: a
 * table set before a thread starts is the one that thread sees).
 */
#ifndef FB_PERF_SYS_H
#define FB_PERF_SYS_H

#include <stddef.h>
#include <sys/types.h>

struct perf_event_attr;
struct pollfd;

struct fb_perf_sys {
	int (*event_open)(struct perf_event_attr *attr, pid_t tid, int cpu, int group_fd, unsigned long flags);
	ssize_t (*read)(int fd, void *buf, size_t len);
	int (*ioctl)(int fd, unsigned long request, unsigned long arg);
	int (*close)(int fd);
	ssize_t (*write)(int fd, const void *buf, size_t len);
	int (*poll)(struct pollfd *fds, unsigned long nfds, int timeout_ms);
	/* libpfm4's pfm_get_os_event_encoding (os: a pfm_os_t, arg: its
	 * pfm_perf_encode_arg_t), so a test sees what the encoder is handed;
	 * NULL in a test's table: libpfm4's own */
	int (*pfm_encode)(const char *name, int dfl_plm, int os, void *arg);
};

/* The real system calls. */
extern const struct fb_perf_sys fb_perf_sys_real;

/* The table in use (never NULL).  Any thread; does not block. */
const struct fb_perf_sys *fb_perf_sys(void);
/* Use t from now on (NULL: the real calls); returns the table it replaces. */
const struct fb_perf_sys *fb_perf_sys_set(const struct fb_perf_sys *t);

#endif
