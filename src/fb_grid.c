/* src/fb_grid.c — sweep grids and shards.  Contract in fb_grid.h. */
#include "src/fb_grid.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/fb_util.h"

static int grid_error(char *err, size_t errlen, const char *spec, const char *why)
{
	char b[FB_SHOWN_MAX];
	snprintf(err, errlen, "--grid %s: %s", fb_shown(spec, b, sizeof(b)), why);
	return -EINVAL;
}

/* Split "v1,v2,..." into axis values; -EINVAL on an empty value. */
static int split_values(struct fb_grid_axis *a, const char *list)
{
	size_t n = 1;
	for (const char *p = list; *p; p++)
		n += *p == ',';
	a->values = fb_xcalloc(n, sizeof(*a->values));
	const char *start = list;
	for (size_t i = 0; i < n; i++) {
		const char *end = strchr(start, ',');
		size_t len = end ? (size_t)(end - start) : strlen(start);
		if (!len)
			return -EINVAL;
		a->values[a->n++] = fb_xstrndup(start, len);
		if (end)
			start = end + 1;
	}
	return 0;
}

static void axis_free(struct fb_grid_axis *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->values[i]);
	free(a->values);
	free(a->key);
}

int fb_grid_add_axis(struct fb_grid *g, const char *spec, char *err, size_t errlen)
{
	const char *eq = strchr(spec, '=');
	if (!eq)
		return grid_error(err, errlen, spec, "expected key=v1,v2,...");
	if (eq == spec)
		return grid_error(err, errlen, spec, "empty key");
	struct fb_grid_axis a = { .key = fb_xstrndup(spec, (size_t)(eq - spec)) };
	int rc = -EINVAL;
	if (split_values(&a, eq + 1)) {
		grid_error(err, errlen, spec, "empty value in the list");
		goto fail;
	}
	for (size_t i = 0; i < g->n; i++) {
		if (!strcmp(g->axes[i].key, a.key)) {
			grid_error(err, errlen, spec, "key given twice");
			goto fail;
		}
	}
	if (fb_grid_points(g) * a.n > FB_GRID_MAX_POINTS) {
		grid_error(err, errlen, spec, "grid too large (more than 1000000 points)");
		goto fail;
	}
	g->axes = fb_xrealloc(g->axes, (g->n + 1) * sizeof(*g->axes));
	g->axes[g->n++] = a;
	return 0;
fail:
	axis_free(&a);
	return rc;
}

uint64_t fb_grid_points(const struct fb_grid *g)
{
	uint64_t n = 1;
	for (size_t i = 0; i < g->n; i++)
		n *= g->axes[i].n;
	return n;
}

void fb_grid_point(const struct fb_grid *g, uint64_t k, size_t *idx)
{
	for (size_t i = g->n; i-- > 0;) {
		idx[i] = (size_t)(k % g->axes[i].n);
		k /= g->axes[i].n;
	}
}

void fb_grid_free(struct fb_grid *g)
{
	for (size_t i = 0; i < g->n; i++)
		axis_free(&g->axes[i]);
	free(g->axes);
	g->axes = NULL;
	g->n = 0;
}

int fb_shard_parse(const char *text, unsigned *index, unsigned *count, char *err, size_t errlen)
{
	char b[FB_SHOWN_MAX];
	unsigned long long i, n;
	if (fb_parse_u64(text, '/', &i) || !strchr(text, '/') ||
	    fb_parse_u64(strchr(text, '/') + 1, '\0', &n) || n < 1 || n > 1000000 || i >= n) {
		snprintf(err, errlen, "--shard %s: expected I/N with 0 <= I < N (e.g. 0/4)",
			 fb_shown(text, b, sizeof(b)));
		return -EINVAL;
	}
	*index = (unsigned)i;
	*count = (unsigned)n;
	return 0;
}

uint64_t fb_shard_size(uint64_t points, unsigned index, unsigned count)
{
	if (count <= 1)
		return points;
	return points / count + (index < points % count);
}
