/* src/fb_cpus.c — CPU lists through libnuma.  Contract in fb_cpus.h. */
#include "src/fb_cpus.h"

#include <errno.h>
#include <numa.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/fb_util.h"

/* libnuma reports parse errors through numa_warn, a weak symbol meant to be
 * replaced by the application.  While fb_cpus_parse runs, the message is kept
 * for the error line; otherwise it is printed the way libnuma prints it. */
static _Thread_local char *warn_capture;
static _Thread_local size_t warn_capture_len;

void numa_warn(int num, char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (warn_capture) {
		vsnprintf(warn_capture, warn_capture_len, fmt, ap);
		warn_capture[strcspn(warn_capture, "\n")] = '\0';
	} else {
		fprintf(stderr, "libnuma: Warning: ");
		vfprintf(stderr, fmt, ap);
	}
	va_end(ap);
}

void fb_cpus_format(const int *ids, size_t n, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++) {
		size_t j = i;
		while (j + 1 < n && ids[j + 1] == ids[j] + 1)
			j++;
		if (j > i)
			used += (size_t)snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "", ids[i], ids[j]);
		else
			used += (size_t)snprintf(buf + used, len - used, "%s%d", used ? "," : "", ids[i]);
		i = j;
	}
}

static void allowed_text(const cpu_set_t *allowed, char *buf, size_t len)
{
	int ids[CPU_SETSIZE];
	size_t n = 0;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, allowed))
			ids[n++] = c;
	fb_cpus_format(ids, n, buf, len);
}

static int from_bitmask(struct bitmask *bm, const cpu_set_t *allowed, const char *list,
			struct fb_cpus *out, char *err, size_t errlen)
{
	char b[FB_SHOWN_MAX], ok[128];
	size_t n = 0;
	out->ids = fb_xcalloc(bm->size ? bm->size : 1, sizeof(int));
	for (unsigned c = 0; c < bm->size; c++) {
		if (!numa_bitmask_isbitset(bm, c))
			continue;
		if (c >= CPU_SETSIZE || !CPU_ISSET((int)c, allowed)) {
			allowed_text(allowed, ok, sizeof(ok));
			snprintf(err, errlen, "--cpus %s: CPU %u is not available to this process (allowed: %s)",
				 fb_shown(list, b, sizeof(b)), c, ok);
			return -EINVAL;
		}
		out->ids[n++] = (int)c;
	}
	out->n = n;
	if (!n) {
		snprintf(err, errlen, "--cpus %s: the list selects no CPU", fb_shown(list, b, sizeof(b)));
		return -EINVAL;
	}
	char text[512];
	fb_cpus_format(out->ids, n, text, sizeof(text));
	out->text = fb_xstrdup(text);
	return 0;
}

/* libnuma reads "1-0" as CPU 1 alone: a range written backwards is refused. */
static int check_ranges(const char *list, char *err, size_t errlen)
{
	char b[FB_SHOWN_MAX];
	for (const char *p = list; *p;) {
		p += strspn(p, "!+");
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi;
		if (end > p && *end == '-' && end[1] >= '0' && end[1] <= '9') {
			hi = strtoul(end + 1, &end, 10);
			if (lo > hi) {
				snprintf(err, errlen, "--cpus %s: the range %lu-%lu runs backwards (write %lu-%lu)",
					 fb_shown(list, b, sizeof(b)), lo, hi, hi, lo);
				return -EINVAL;
			}
		}
		p = strchr(end, ',') ? strchr(end, ',') + 1 : end + strlen(end);
	}
	return 0;
}

int fb_cpus_parse(const char *list, struct fb_cpus *out, char *err, size_t errlen)
{
	cpu_set_t allowed;
	char why[160] = "", b[FB_SHOWN_MAX], ok[128];
	memset(out, 0, sizeof(*out));
	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		snprintf(err, errlen, "cannot read this process's CPU affinity: %s", strerror(errno));
		return -errno;
	}
	if (!list) {
		allowed_text(&allowed, ok, sizeof(ok));
		return fb_cpus_parse(ok, out, err, errlen);
	}
	if (check_ranges(list, err, errlen))
		return -EINVAL;
	warn_capture = why;
	warn_capture_len = sizeof(why);
	struct bitmask *bm = numa_parse_cpustring_all(list);
	warn_capture = NULL;
	if (!bm) {
		allowed_text(&allowed, ok, sizeof(ok));
		if (strstr(why, "range"))
			snprintf(err, errlen, "--cpus %s: no such CPU (%s; this machine has CPUs %s)",
				 fb_shown(list, b, sizeof(b)), why, ok);
		else
			snprintf(err, errlen, "--cpus %s: cannot parse the CPU list (%s; e.g. 0-1, 0,2, all)",
				 fb_shown(list, b, sizeof(b)), why[0] ? why : "libnuma syntax");
		return -EINVAL;
	}
	int rc = from_bitmask(bm, &allowed, list, out, err, errlen);
	numa_bitmask_free(bm);
	if (rc)
		fb_cpus_free(out);
	return rc;
}

void fb_cpus_free(struct fb_cpus *c)
{
	free(c->ids);
	free(c->text);
	memset(c, 0, sizeof(*c));
}
