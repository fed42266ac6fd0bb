/* src/fb_util.c — harness helpers.  Contract in fb_util.h. */
#include "src/fb_util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lockfree/die.h"

static void *checked(void *p)
{
	if (!p)
		lf_die("out of memory");
	return p;
}

void *fb_xcalloc(size_t n, size_t size) { return checked(calloc(n ? n : 1, size ? size : 1)); }
void *fb_xrealloc(void *p, size_t size) { return checked(realloc(p, size ? size : 1)); }
char *fb_xstrdup(const char *s) { return checked(strdup(s)); }
char *fb_xstrndup(const char *s, size_t n) { return checked(strndup(s, n)); }

char *fb_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return checked(n < 0 ? NULL : s);
}

const char *fb_shown(const char *s, char *buf, size_t len)
{
	size_t i = 0, max = len >= FB_SHOWN_MAX ? FB_SHOWN_MAX - 8 : len - 4;
	for (; s[i] && i < max; i++)
		buf[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
	if (s[i])
		buf[i++] = '.', buf[i++] = '.', buf[i++] = '.';
	buf[i] = '\0';
	return buf;
}

int fb_parse_u64(const char *text, char stop, unsigned long long *out)
{
	unsigned long long v = 0;
	const char *p = text;
	for (; *p && *p != stop; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		unsigned d = (unsigned)(*p - '0');
		if (v > (~0ull - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	if (p == text)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A finite number without sign or leading space; *end after it.  0 or -EINVAL. */
static int parse_unsigned_number(const char *text, char **end, double *v)
{
	if (!*text || isspace((unsigned char)*text) || *text == '-' || *text == '+')
		return -EINVAL;
	errno = 0;
	*v = strtod(text, end);
	return errno || *end == text || !isfinite(*v) ? -EINVAL : 0;
}

int fb_parse_seconds(const char *text, double *seconds)
{
	static const struct { const char *suffix; double scale; } units[] = {
		{ "ns", 1e-9 }, { "us", 1e-6 }, { "ms", 1e-3 }, { "s", 1.0 }, { "", 1.0 },
	};
	char *end;
	double v;
	if (parse_unsigned_number(text, &end, &v))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].suffix)) {
			v *= units[i].scale;
			if (v < 0 || v > 1e6)
				return -EINVAL;
			*seconds = v;
			return 0;
		}
	}
	return -EINVAL;
}

int fb_parse_percent(const char *text, double *fraction)
{
	char *end;
	double v;
	if (parse_unsigned_number(text, &end, &v) || (strcmp(end, "%") && *end) || v > 1e6)
		return -EINVAL;
	*fraction = v / 100.0;
	return 0;
}
