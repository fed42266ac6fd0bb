/* benchmarks/embedded.c — finding a built-in copy of a shipped data file.
 * Contract in embedded.h; the table itself is generated at build time
 * (scripts/embed-files.py into $(BUILD)/gen/embedded_files.c). */
#include <stdbool.h>
#include <string.h>

#include "benchmarks/embedded.h"

const struct bm_embedded *bm_embedded_find(const char *path)
{
	while (!strncmp(path, "./", 2))
		path += 2;
	for (const struct bm_embedded *e = bm_embedded_files; e->path; e++)
		if (!strcmp(e->path, path))
			return e;
	return NULL;
}

/* e->path is dir/NAME with NAME ending in suffix (and longer than it). */
static bool bm_embedded_under(const struct bm_embedded *e, const char *dir, const char *suffix)
{
	size_t d = strlen(dir), n = strlen(e->path), s = strlen(suffix);
	return !strncmp(e->path, dir, d) && e->path[d] == '/' && !strchr(e->path + d + 1, '/') &&
	       n > d + 1 + s && !strcmp(e->path + n - s, suffix);
}

const struct bm_embedded *bm_embedded_in(const char *dir, const char *suffix, size_t i)
{
	for (const struct bm_embedded *e = bm_embedded_files; e->path; e++)
		if (bm_embedded_under(e, dir, suffix) && !i--)
			return e;
	return NULL;
}
