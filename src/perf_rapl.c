/* src/perf_rapl.c — RAPL package energy through perf's power PMU, counted
 * system-wide on one CPU per package.  Contract in src/perf.h ("RAPL"). */
#include "src/perf.h"
#include "src/perf_sys.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perfmon/pfmlib_perf_event.h> /* perf_event_attr and libpfm4's perf_event_open() stub */

#include "src/fb_util.h"

/* ---- RAPL through the power PMU ---------------------------------------------------- */

#define FB_RAPL_MAX_PKGS 64

struct fb_rapl {
	size_t n;
	int fd[FB_RAPL_MAX_PKGS];     /* one per package, counting system-wide on its CPU */
	double scale;                 /* joules per count (energy-pkg.scale) */
};

/* First line of dir/file, trailing blanks trimmed.  0 or -errno. */
static int fb_sysfs_read(const char *dir, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX];
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	size_t n = strlen(buf);
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	return 0;
}

/* Place value into attr as the PMU's format file says ("config:0-7",
 * "config1:0-3,8-11", "config:5"): low bits of value fill the ranges in order. */
static int fb_pmu_apply_format(struct perf_event_attr *a, const char *fmt, uint64_t value)
{
	uint64_t *word;
	const char *p;

	if (!strncmp(fmt, "config:", 7))
		word = &a->config, p = fmt + 7;
	else if (!strncmp(fmt, "config1:", 8))
		word = &a->config1, p = fmt + 8;
	else if (!strncmp(fmt, "config2:", 8))
		word = &a->config2, p = fmt + 8;
	else
		return -EINVAL;
	while (*p) {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;
		if (end == p)
			return -EINVAL;
		if (*end == '-')
			hi = strtoul(end + 1, &end, 10);
		if (hi < lo || hi > 63)
			return -EINVAL;
		unsigned width = (unsigned)(hi - lo + 1);
		uint64_t mask = width == 64 ? ~0ull : (1ull << width) - 1;
		*word |= (value & mask) << lo;
		value = width == 64 ? 0 : value >> width;
		p = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -EINVAL;
	}
	return 0;
}

/* Turn an events/ file ("event=0x02" or "event=0x1,umask=0x2") into attr. */
static int fb_pmu_parse_event(const char *pmu_dir, const char *terms, struct perf_event_attr *a)
{
	char copy[256], fmt[128], file[160];
	char *save = NULL;

	snprintf(copy, sizeof(copy), "%s", terms);
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		uint64_t v = 1;
		if (eq) {
			*eq = '\0';
			v = strtoull(eq + 1, NULL, 0);
		}
		snprintf(file, sizeof(file), "format/%s", t);
		if (fb_sysfs_read(pmu_dir, file, fmt, sizeof(fmt)) || fb_pmu_apply_format(a, fmt, v))
			return -ENODEV;
	}
	return 0;
}

/* CPUs of a cpumask file ("0", "0,18", "0-1") into cpus.  Count, or -ENODEV. */
static int fb_pmu_cpus(const char *pmu_dir, int *cpus, int max)
{
	char buf[256];
	const char *p = buf;
	int n = 0;

	if (fb_sysfs_read(pmu_dir, "cpumask", buf, sizeof(buf)) || !buf[0])
		return -ENODEV;
	while (*p) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;
		if (end == p)
			return -ENODEV;
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		for (long c = lo; c <= hi && n < max; c++)
			cpus[n++] = (int)c;
		p = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -ENODEV;
	}
	return n ? n : -ENODEV;
}

int fb_rapl_open_at(const char *pmu_dir, struct fb_rapl **out)
{
	struct perf_event_attr a;
	struct fb_rapl *r;
	char buf[256];
	int cpus[FB_RAPL_MAX_PKGS], ncpu, rc;

	*out = NULL;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	if (fb_sysfs_read(pmu_dir, "type", buf, sizeof(buf)) || !buf[0])
		return -ENODEV;
	a.type = (uint32_t)strtoul(buf, NULL, 10);
	if (fb_sysfs_read(pmu_dir, "events/energy-pkg", buf, sizeof(buf)) ||
	    fb_pmu_parse_event(pmu_dir, buf, &a))
		return -ENODEV;
	if (fb_sysfs_read(pmu_dir, "events/energy-pkg.unit", buf, sizeof(buf)) == 0 &&
	    strcmp(buf, "Joules") != 0)
		return -ENODEV;
	ncpu = fb_pmu_cpus(pmu_dir, cpus, FB_RAPL_MAX_PKGS);
	if (ncpu < 0)
		return ncpu;
	r = fb_xcalloc(1, sizeof(*r));
	r->scale = 1.0;               /* perf's rule when a PMU gives no scale file */
	if (fb_sysfs_read(pmu_dir, "events/energy-pkg.scale", buf, sizeof(buf)) == 0 && buf[0])
		r->scale = strtod(buf, NULL);
	for (int i = 0; i < ncpu; i++) {
		int fd = fb_perf_sys()->event_open(&a, -1, cpus[i], -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			rc = -errno;
			fb_rapl_close(r);
			return rc;
		}
		r->fd[r->n++] = fd;
	}
	*out = r;
	return 0;
}

int fb_rapl_open(struct fb_rapl **out)
{
	return fb_rapl_open_at("/sys/bus/event_source/devices/power", out);
}

int fb_rapl_read_joules(struct fb_rapl *r, double *joules)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < r->n; i++) {
		uint64_t v;
		ssize_t got;
		do
			got = fb_perf_sys()->read(r->fd[i], &v, sizeof(v));
		while (got < 0 && errno == EINTR);
		if (got < 0)
			return -errno;
		if (got != sizeof(v))
			return -EIO;
		sum += v;
	}
	*joules = (double)sum * r->scale;
	return 0;
}

void fb_rapl_close(struct fb_rapl *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		fb_perf_sys()->close(r->fd[i]);
	free(r);
}
