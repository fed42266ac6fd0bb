/* src/perf_group.c — counter groups, one per thread: opened with the leader
 * disabled, read in one read() with the times, scaled when multiplexed.
 * Contract in src/perf.h ("counter groups"). */
#include "src/perf_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "src/fb_util.h"

/* ---- groups ------------------------------------------------------------------------- */

struct fb_perf_group {
	size_t n;
	int fd[FB_PERF_MAX_EVENTS];   /* fd[0] is the leader */
	char *name[FB_PERF_MAX_EVENTS];
};

int fb_perf_group_open(const struct fb_perf_spec *s, pid_t tid, struct fb_perf_group **out)
{
	struct fb_perf_group *g;
	int rc;

	*out = NULL;
	if (!s->n)
		return -EINVAL;
	g = fb_xcalloc(1, sizeof(*g));
	for (size_t i = 0; i < s->n; i++) {
		struct perf_event_attr a = s->ev[i].attr;
		a.size = sizeof(a);
		a.disabled = i == 0;          /* the leader gates the whole group */
		a.inherit = 0;
		a.read_format = FB_PERF_READ_FORMAT;
		int fd = fb_perf_sys()->event_open(&a, tid, -1, i ? g->fd[0] : -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			rc = -errno;
			fb_perf_group_close(g);
			return rc;
		}
		g->fd[i] = fd;
		g->name[i] = fb_xstrdup(s->ev[i].name);
		g->n = i + 1;
	}
	*out = g;
	return 0;
}

void fb_perf_group_enable(struct fb_perf_group *g)
{
	fb_perf_sys()->ioctl(g->fd[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
}

void fb_perf_group_disable(struct fb_perf_group *g)
{
	fb_perf_sys()->ioctl(g->fd[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
}

void fb_perf_group_reset(struct fb_perf_group *g)
{
	fb_perf_sys()->ioctl(g->fd[0], PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
}

size_t fb_perf_group_count(const struct fb_perf_group *g)
{
	return g->n;
}

double fb_perf_scale(uint64_t raw, uint64_t time_enabled, uint64_t time_running, bool *scaled)
{
	bool sc = false;
	double v;

	if (time_running == 0) {
		sc = time_enabled != 0;       /* enabled but never scheduled: not counted */
		v = sc ? 0.0 : (double)raw;
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

int fb_perf_group_read(struct fb_perf_group *g, struct fb_perf_value *out, size_t n)
{
	/* PERF_FORMAT_GROUP|TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING layout:
	 * nr, time_enabled, time_running, value[nr] */
	uint64_t buf[3 + FB_PERF_MAX_EVENTS];
	size_t want = (3 + g->n) * sizeof(uint64_t);
	ssize_t got;

	do
		got = fb_perf_sys()->read(g->fd[0], buf, want);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return -errno;
	if ((size_t)got != want || buf[0] != g->n)
		return -EIO;
	for (size_t i = 0; i < n && i < g->n; i++) {
		out[i].name = g->name[i];
		out[i].raw = buf[3 + i];
		out[i].time_enabled = buf[1];
		out[i].time_running = buf[2];
		out[i].value = fb_perf_scale(buf[3 + i], buf[1], buf[2], &out[i].scaled);
	}
	return 0;
}

void fb_perf_group_close(struct fb_perf_group *g)
{
	if (!g)
		return;
	/* members first, the leader last */
	for (size_t i = g->n; i-- > 0;) {
		fb_perf_sys()->close(g->fd[i]);
		free(g->name[i]);
	}
	free(g);
}
