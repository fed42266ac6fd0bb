/* src/fb_merge.c — `fencebench merge A.json B.json ... [--out ALL.json]`: a sweep's shards joined.
 *
 * Each input is the --format json output of one shard of one sweep (its
 * context holds "sweep_fingerprint", "grid" and "shard"; every entry its
 * point's index and key).  They must be shards of the same sweep: the same
 * fingerprint (scenario, --set, paths, repetitions, length, warm-up, seed,
 * CPUs), the same grid and shard count, each shard once; otherwise nothing is
 * written and the line says what differs.  The points are put back in grid
 * order and rendered once, as a sweep would have (any --format).  Missing
 * shards and unfinished ones are warnings (in the context too), not errors:
 * a partial merge is still a correct subset.  Single thread.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/fb_app.h"
#include "src/fb_file.h"
#include "src/fb_grid.h"
#include "src/fb_journal.h"
#include "src/fb_output.h"
#include "src/fb_util.h"

struct shard {
	const char *path;
	json_t *doc, *context;
	const char *fp;
	unsigned index, count;
};

struct merge {
	const struct fb_opts *o;
	struct shard *shards;     /* in shard order once loaded */
	size_t n;
	json_t *points;           /* index (as text) -> {"index", "key", "entries"} */
	json_t *warnings;
};

static int refuse(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = snprintf(err, errlen, "merge: ");
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int load(struct shard *sh, const char *path, char *err, size_t errlen)
{
	char p[FB_FILE_SHOWN_MAX];
	json_error_t je;
	sh->path = path;
	sh->doc = json_load_file(path, 0, &je);
	if (!sh->doc)
		return refuse(err, errlen, "%s: not JSON (%s, line %d)", fb_file_shown(path, p, sizeof(p)), je.text, je.line);
	sh->context = json_object_get(sh->doc, "context");
	json_t *shard = json_object_get(sh->context, "shard");
	sh->fp = json_string_value(json_object_get(sh->context, "sweep_fingerprint"));
	json_int_t i = json_integer_value(json_object_get(shard, "index"));
	json_int_t c = json_integer_value(json_object_get(shard, "count"));
	if (!sh->fp || c < 1 || i < 0 || i >= c || !json_is_array(json_object_get(sh->doc, "benchmarks")))
		return refuse(err, errlen, "%s is not the --format json output of a fencebench sweep",
			      fb_file_shown(path, p, sizeof(p)));
	sh->index = (unsigned)i;
	sh->count = (unsigned)c;
	return 0;
}

/* b is a shard of a's sweep, and not the same shard. */
static int same_sweep(const struct shard *a, const struct shard *b, char *err, size_t errlen)
{
	char pa[FB_FILE_SHOWN_MAX], pb[FB_FILE_SHOWN_MAX], diff[512];
	fb_file_shown(a->path, pa, sizeof(pa));
	fb_file_shown(b->path, pb, sizeof(pb));
	if (strcmp(a->fp, b->fp))
		return refuse(err, errlen, "%s and %s are shards of different sweeps (%s)", pb, pa,
			      fb_journal_fp_diff(b->fp, pb, a->fp, pa, diff, sizeof(diff)));
	if (!json_equal(json_object_get(a->context, "grid"), json_object_get(b->context, "grid")))
		return refuse(err, errlen, "%s and %s are shards of different sweeps (the grids differ)", pb, pa);
	if (a->count != b->count)
		return refuse(err, errlen, "%s and %s are shards of different sweeps (split %u and %u ways)", pb, pa,
			      b->count, a->count);
	if (a->index == b->index)
		return refuse(err, errlen, "%s and %s are both shard %u/%u", pb, pa, a->index, a->count);
	return 0;
}

/* Points of the grid in ctx: the product of the grid's axes. */
static uint64_t grid_points(json_t *ctx)
{
	const char *k;
	json_t *v;
	uint64_t n = 1;
	json_object_foreach(json_object_get(ctx, "grid"), k, v)
		n *= json_array_size(v);
	return n;
}

/* Gather sh's entries into their points.  -EINVAL when an entry is not of the shard. */
static int take_points(struct merge *m, const struct shard *sh, uint64_t *count, char *err, size_t errlen)
{
	char p[FB_FILE_SHOWN_MAX], idx[32];
	size_t i;
	json_t *e;
	uint64_t total = grid_points(sh->context);
	json_array_foreach(json_object_get(sh->doc, "benchmarks"), i, e) {
		json_t *meta = json_object_get(e, "fencebench"), *pi = json_object_get(meta, "point_index");
		json_int_t k = json_integer_value(pi);
		if (!json_is_integer(pi) || k < 0 || (uint64_t)k >= total || !fb_shard_has((uint64_t)k, sh->index, sh->count))
			return refuse(err, errlen, "%s: entry %zu is not a point of shard %u/%u",
				      fb_file_shown(sh->path, p, sizeof(p)), i, sh->index, sh->count);
		snprintf(idx, sizeof(idx), "%lld", (long long)k);
		json_t *point = json_object_get(m->points, idx);
		if (!point) {
			point = json_pack("{s:I, s:s, s:[]}", "index", k, "key",
					  json_string_value(json_object_get(meta, "point")) ?: "", "entries");
			json_object_set_new(m->points, idx, point);
			(*count)++;
		}
		json_array_append(json_object_get(point, "entries"), e);
	}
	return 0;
}

static void warn(struct merge *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct merge *m, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_array_append_new(m->warnings, json_string(buf));
	if (!m->o->quiet)
		fprintf(stderr, "***WARNING*** %s\n", buf);
}

/* Missing shards and shards with fewer points than their share. */
static void check_complete(struct merge *m, const uint64_t *held)
{
	unsigned count = m->shards[0].count;
	uint64_t total = grid_points(m->shards[0].context);
	char p[FB_FILE_SHOWN_MAX];
	if (m->n < count)
		warn(m, "merge: %zu of %u shards given: the result lacks the points of the others", m->n, count);
	for (size_t i = 0; i < m->n; i++) {
		uint64_t want = fb_shard_size(total, m->shards[i].index, count);
		if (held[i] < want)
			warn(m, "merge: shard %u/%u (%s) holds %llu of its %llu points (unfinished?)", m->shards[i].index,
			     count, fb_file_shown(m->shards[i].path, p, sizeof(p)), (unsigned long long)held[i],
			     (unsigned long long)want);
	}
}

static int by_shard(const void *a, const void *b)
{
	const struct shard *x = a, *y = b;
	return (x->index > y->index) - (x->index < y->index);
}

/* Union of the shards' arrays under key (deduplicated strings), in order. */
static json_t *union_of(const struct merge *m, const char *key, json_t *extra)
{
	json_t *all = json_array(), *seen = json_object(), *v;
	size_t i;
	for (size_t s = 0; s <= m->n; s++) {
		json_t *a = s < m->n ? json_object_get(m->shards[s].context, key) : extra;
		json_array_foreach(a, i, v) {
			const char *t = json_string_value(v);
			if (t && !json_object_get(seen, t)) {
				json_object_set_new(seen, t, json_true());
				json_array_append(all, v);
			}
		}
	}
	json_decref(seen);
	return all;
}

/* The first shard's context, speaking for all of them. */
static json_t *merged_context(const struct merge *m)
{
	json_t *c = json_deep_copy(m->shards[0].context), *idx = json_array(), *from = json_array();
	json_int_t polling = 0;
	for (size_t i = 0; i < m->n; i++) {
		json_int_t p = json_integer_value(json_object_get(m->shards[i].context, "polling_threads"));
		polling = p > polling ? p : polling;
		json_array_append_new(idx, json_integer(m->shards[i].index));
		json_array_append_new(from, json_string(m->shards[i].path));
		if (json_is_true(json_object_get(m->shards[i].context, "oversubscribed")))
			json_object_set_new(c, "oversubscribed", json_true());
	}
	json_object_set_new(c, "shard", json_pack("{s:i, s:o}", "count", (int)m->shards[0].count, "merged", idx));
	json_object_set_new(c, "merged_from", from);
	json_object_set_new(c, "polling_threads", json_integer(polling));
	json_object_set_new(c, "notes", union_of(m, "notes", NULL));
	json_object_set_new(c, "warnings", union_of(m, "warnings", m->warnings));
	return c;
}

static int by_index(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "index"));
	json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "index"));
	return (x > y) - (x < y);
}

/* The points in grid order. */
static json_t *sorted_points(const struct merge *m)
{
	size_t n = json_object_size(m->points), i = 0;
	json_t **v = fb_xcalloc(n, sizeof(*v)), *p, *all = json_array();
	const char *k;
	json_object_foreach(m->points, k, p)
		v[i++] = p;
	qsort(v, n, sizeof(*v), by_index);
	for (i = 0; i < n; i++)
		json_array_append(all, v[i]);
	free(v);
	return all;
}

static int load_all(struct merge *m, char *err, size_t errlen)
{
	int rc = 0;
	for (size_t i = 0; i < m->o->ninputs && !rc; i++, m->n++)
		rc = load(&m->shards[i], m->o->inputs[i], err, errlen);
	if (rc)
		return rc;
	qsort(m->shards, m->n, sizeof(*m->shards), by_shard);
	for (size_t i = 1; i < m->n && !rc; i++)
		rc = same_sweep(&m->shards[0], &m->shards[i], err, errlen);
	uint64_t *held = fb_xcalloc(m->n, sizeof(*held));
	for (size_t i = 0; i < m->n && !rc; i++)
		rc = take_points(m, &m->shards[i], &held[i], err, errlen);
	if (!rc)
		check_complete(m, held);
	free(held);
	return rc;
}

static int emit(struct merge *m, const struct fb_out *out, char *err, size_t errlen)
{
	json_t *ctx = merged_context(m), *points = sorted_points(m);
	char *text = fb_output_render(m->o->format, ctx, points);
	int rc = 0;
	if (out) {
		rc = fb_out_write(out, text, strlen(text), err, errlen);
	} else {
		fputs(text, stdout);
		fb_file_flush_stdout();
	}
	free(text);
	json_decref(ctx);
	json_decref(points);
	return rc;
}

int fb_merge_main(const struct fb_opts *o)
{
	struct merge m = { .o = o, .points = json_object(), .warnings = json_array() };
	struct fb_out out;
	char err[1024];
	int status = FB_EXIT_OK;
	m.shards = fb_xcalloc(o->ninputs, sizeof(*m.shards));
	if (o->out && fb_out_open(&out, o->out, err, sizeof(err))) {   /* checked before reading anything */
		fprintf(stderr, "fencebench: %s\n", err);
		status = FB_EXIT_USAGE;
	} else if (load_all(&m, err, sizeof(err))) {
		fprintf(stderr, "fencebench: %s\n", err);
		status = FB_EXIT_USAGE;
	} else if (emit(&m, o->out ? &out : NULL, err, sizeof(err))) {
		fprintf(stderr, "fencebench: %s\n", err);
		status = FB_EXIT_RUN;
	}
	if (o->out)
		fb_out_free(&out);
	for (size_t i = 0; i < m.n; i++)
		json_decref(m.shards[i].doc);
	free(m.shards);
	json_decref(m.points);
	json_decref(m.warnings);
	return status;
}
