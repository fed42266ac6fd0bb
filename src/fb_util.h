/* src/fb_util.h — small helpers of the harness: allocation that cannot fail,
 * user text fit for a one-line message, strict number parsing.
 * Any thread; nothing blocks; allocation failure aborts with file:line. */
#ifndef FB_UTIL_H
#define FB_UTIL_H

#include <stddef.h>
#include <stdint.h>

void *fb_xcalloc(size_t n, size_t size);
void *fb_xrealloc(void *p, size_t size);
char *fb_xstrdup(const char *s);
char *fb_xstrndup(const char *s, size_t n);
/* printf into a new string. */
char *fb_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Buffer size for fb_shown. */
#define FB_SHOWN_MAX 48
/* s as it may appear in a one-line error: at most 40 characters, each
 * non-printable one shown as '?', "..." when cut.  Returns buf. */
const char *fb_shown(const char *s, char *buf, size_t len);

/* Parse decimal digits (nothing else: no sign, no space) up to the first
 * `stop` character or the end.  0, or -EINVAL (empty, not a digit, overflow). */
int fb_parse_u64(const char *text, char stop, unsigned long long *out);
/* A duration: a number with an optional unit ns|us|ms|s (bare: seconds),
 * 0 <= d <= 1e6 s.  0 or -EINVAL. */
int fb_parse_seconds(const char *text, double *seconds);
/* A percentage: a number with an optional '%' ("5%", "5", "0.5"), as a
 * fraction (0.05), 0 <= p <= 1e6 %.  0 or -EINVAL. */
int fb_parse_percent(const char *text, double *fraction);

#endif
