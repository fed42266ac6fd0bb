/* src/perf_group.c — counter groups, one per thread: opened with the leader
 * disabled, read in one read() with the times, scaled when multiplexed; split
 * into groups that fit when the PMU refuses them as one.
 * Contract in src/perf.h ("counter groups"). */
#include "src/perf_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "src/fb_util.h"

/* ---- groups ------------------------------------------------------------------------- */

/* A group read as the kernel returns it (PERF_FORMAT_GROUP with both times):
 * nr, time_enabled, time_running, value[nr]. */
#define FB_PERF_READ_WORDS (3 + FB_PERF_MAX_EVENTS)

/* One kernel group: events [first, first + n) of the spec, led by fd[first]. */
struct fb_perf_sub {
	size_t first, n;
	/* The group's reading just after the last reset (zero before one): reads
	 * report and scale the deltas since, as perf stat scales the deltas
	 * between two reads.  A reset zeroes the counts, not the times, so
	 * scaling by the times since open would weigh in the warm-up. */
	uint64_t base[FB_PERF_READ_WORDS];
};

struct fb_perf_group {
	size_t n;                       /* events */
	int fd[FB_PERF_MAX_EVENTS];     /* in spec order; fd[sub[k].first] leads sub k */
	char *name[FB_PERF_MAX_EVENTS];
	size_t nsub;                    /* 1, or more after a split */
	struct fb_perf_sub sub[FB_PERF_MAX_EVENTS];
};

/* Open spec event i on tid, in the group led by `leader` (-1: it leads a new
 * one, opened disabled: the leader gates its group).  The fd, or -errno. */
static int fb_perf_open_event(const struct fb_perf_spec *s, size_t i, pid_t tid, int leader)
{
	struct perf_event_attr a = s->ev[i].attr;
	a.size = sizeof(a);
	a.disabled = leader < 0;
	a.inherit = 0;
	a.read_format = FB_PERF_READ_FORMAT;
	int fd = fb_perf_sys()->event_open(&a, tid, -1, leader, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int fb_perf_group_open(const struct fb_perf_spec *s, pid_t tid, struct fb_perf_group **out)
{
	struct fb_perf_group *g;
	int fd;

	*out = NULL;
	if (!s->n)
		return -EINVAL;
	g = fb_xcalloc(1, sizeof(*g));
	for (size_t i = 0; i < s->n; i++) {
		struct fb_perf_sub *cur = g->nsub ? &g->sub[g->nsub - 1] : NULL;
		fd = fb_perf_open_event(s, i, tid, cur ? g->fd[cur->first] : -1);
		/* EINVAL for a member: the group no longer fits the PMU's counters
		 * (x86 validates the group at open).  As perf stat's weak groups do,
		 * the rest goes into a new group, counted (and multiplexed) apart. */
		if (fd == -EINVAL && cur) {
			cur = NULL;
			fd = fb_perf_open_event(s, i, tid, -1);
		}
		if (fd < 0) {
			fb_perf_group_close(g);
			return fd;
		}
		if (!cur)
			g->sub[g->nsub++] = (struct fb_perf_sub){ .first = i };
		g->sub[g->nsub - 1].n++;
		g->fd[i] = fd;
		g->name[i] = fb_xstrdup(s->ev[i].name);
		g->n = i + 1;
	}
	*out = g;
	return 0;
}

/* One ioctl on every group's leader. */
static int fb_perf_group_ioctl(struct fb_perf_group *g, unsigned long request)
{
	int rc = 0;
	for (size_t k = 0; k < g->nsub; k++)
		if (fb_perf_sys()->ioctl(g->fd[g->sub[k].first], request, PERF_IOC_FLAG_GROUP) < 0 && !rc)
			rc = -errno;
	return rc;
}

void fb_perf_group_enable(struct fb_perf_group *g)
{
	fb_perf_group_ioctl(g, PERF_EVENT_IOC_ENABLE);
}

void fb_perf_group_disable(struct fb_perf_group *g)
{
	fb_perf_group_ioctl(g, PERF_EVENT_IOC_DISABLE);
}

/* One read() of sub's leader into buf: 0, or -errno (-EIO: short or inconsistent). */
static int fb_perf_sub_read_raw(const struct fb_perf_group *g, const struct fb_perf_sub *sub, uint64_t *buf)
{
	size_t want = (3 + sub->n) * sizeof(uint64_t);
	ssize_t got;

	do
		got = fb_perf_sys()->read(g->fd[sub->first], buf, want);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return -errno;
	if ((size_t)got != want || buf[0] != sub->n)
		return -EIO;
	return 0;
}

int fb_perf_group_reset(struct fb_perf_group *g)
{
	uint64_t now[FB_PERF_READ_WORDS];
	int rc = fb_perf_group_ioctl(g, PERF_EVENT_IOC_RESET);

	for (size_t k = 0; k < g->nsub && !rc; k++)
		if (!(rc = fb_perf_sub_read_raw(g, &g->sub[k], now)))
			memcpy(g->sub[k].base, now, sizeof(now));
	return rc;
}

size_t fb_perf_group_count(const struct fb_perf_group *g)
{
	return g->n;
}

size_t fb_perf_group_kernel_groups(const struct fb_perf_group *g)
{
	return g->nsub;
}

const char *fb_perf_group_moved(const struct fb_perf_group *g, size_t i)
{
	size_t first_moved = g->nsub > 1 ? g->sub[1].first : g->n;
	return first_moved + i < g->n ? g->name[first_moved + i] : NULL;
}

double fb_perf_scale(uint64_t raw, uint64_t time_enabled, uint64_t time_running, bool *scaled)
{
	bool sc = false;
	double v;

	if (time_running == 0) {
		v = NAN;                      /* never ran: perf stat's <not counted>, not a 0 */
	} else if (time_running >= time_enabled) {
		v = (double)raw;
	} else {
		sc = true;
		v = (double)raw * ((double)time_enabled / (double)time_running);
	}
	if (scaled)
		*scaled = sc;
	return v;
}

/* cur - base, or cur when the kernel's count went below the base (a reset
 * this group did not see): never a wrapped-around difference. */
static uint64_t fb_perf_delta(uint64_t cur, uint64_t base)
{
	return cur >= base ? cur - base : cur;
}

int fb_perf_group_read(struct fb_perf_group *g, struct fb_perf_value *out, size_t n)
{
	uint64_t buf[FB_PERF_READ_WORDS];

	for (size_t k = 0; k < g->nsub; k++) {
		const struct fb_perf_sub *sub = &g->sub[k];
		int rc = fb_perf_sub_read_raw(g, sub, buf);
		if (rc)
			return rc;
		uint64_t enabled = fb_perf_delta(buf[1], sub->base[1]), running = fb_perf_delta(buf[2], sub->base[2]);
		for (size_t j = 0; j < sub->n && sub->first + j < n; j++) {
			struct fb_perf_value *v = &out[sub->first + j];
			v->name = g->name[sub->first + j];
			v->raw = fb_perf_delta(buf[3 + j], sub->base[3 + j]);
			v->time_enabled = enabled;
			v->time_running = running;
			v->value = fb_perf_scale(v->raw, enabled, running, &v->scaled);
			v->counted = running != 0;
		}
	}
	return 0;
}

void fb_perf_group_close(struct fb_perf_group *g)
{
	if (!g)
		return;
	/* members first, each leader after its members: the highest index first */
	for (size_t i = g->n; i-- > 0;) {
		fb_perf_sys()->close(g->fd[i]);
		free(g->name[i]);
	}
	free(g);
}
