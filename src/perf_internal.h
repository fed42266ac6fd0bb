/* src/perf_internal.h — what the perf layer's files share: the layout of a
 * spec (perf_spec.c builds it, perf_group.c opens groups from it) and the
 * read format of every counter fd.  Included by src/perf_*.c only. */
#ifndef FB_PERF_INTERNAL_H
#define FB_PERF_INTERNAL_H

#include <perfmon/pfmlib_perf_event.h> /* also perf_event_attr and libpfm4's perf_event_open() stub */

#include "src/perf.h"
#include "src/perf_sys.h"

/* Every read carries the times, so multiplexed counts can be scaled (and said to be). */
#define FB_PERF_READ_FORMAT \
	(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_GROUP)

struct fb_perf_event {
	char *name;                   /* as the user wrote it (+ ":u" after the user-only fallback) */
	char *encoding;               /* libpfm4's fully qualified string */
	struct perf_event_attr attr;  /* as encoded; group_open sets disabled/read_format */
};

struct fb_perf_spec {
	size_t n;
	struct fb_perf_event ev[FB_PERF_MAX_EVENTS];
	char note[384];               /* "" = no note */
};

#endif
