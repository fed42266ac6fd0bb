/* src/fb_cpus.h — the CPU list of a run (--cpus), parsed by libnuma.
 *
 * The syntax is libnuma's (numa_parse_cpustring_all): "0-3,6", "all", "!0",
 * "+1"; a range written backwards ("1-0", which libnuma reads as CPU 1) is
 * refused.  Every CPU must exist and be one this process may run on
 * (sched_getaffinity): pinning to any other would fail later, mid-run.
 * libnuma's own warnings are captured while parsing and turned into the one
 * error line; outside fb_cpus_parse they still go to stderr as libnuma's would.
 * Single thread (the CLI); nothing blocks.
 */
#ifndef FB_CPUS_H
#define FB_CPUS_H

#include <stddef.h>

struct fb_cpus {
	int *ids;      /* ascending */
	size_t n;
	char *text;    /* canonical ranges: "0-1", "0,2-3" */
};

/* Parse list (NULL: every CPU this process may use).  0, or -EINVAL with one
 * line naming the bad part in err: unparsable list, no such CPU, CPU not
 * allowed, empty list. */
int fb_cpus_parse(const char *list, struct fb_cpus *out, char *err, size_t errlen);
void fb_cpus_free(struct fb_cpus *c);
/* "0-3,6" for ids (ascending). */
void fb_cpus_format(const int *ids, size_t n, char *buf, size_t len);

#endif
