/* tests/fuzz/fuzz_cli.c — libFuzzer harness for the option, parameter, duration, grid and shard parsers.
 *
 * The input is a command line: arguments separated by '\n' or '\0', after an
 * implicit "fencebench".  It goes through fb_opts_parse, then every --set
 * through fb_params_set against a scenario with one parameter of each type,
 * every --grid axis through fb_param_parse, and the grid's points through the
 * shard arithmetic.  Beyond the sanitizers (ASan + UBSan), it checks:
 *   - an error is one non-empty line that fits its buffer; success leaves none
 *   - a parsed option set is coherent (repetitions >= 1, shard index < count,
 *     not both --duration and --iterations, each --set key once, merge has
 *     inputs and nothing of run's, ...)
 *   - a parameter value formats to text that parses back to the same value
 *   - every grid point belongs to exactly one shard, and shard sizes add up
 * Built by mk/fuzz.mk from the parser sources directly (no library, no I/O).
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/fb_scenario.h"
#include "src/fb_cli.h"
#include "src/fb_grid.h"
#include "src/fb_util.h"

#define MAX_ARGS 40

static const struct fb_param fuzz_params[] = {
	FB_PARAM_INT("n", "ops", 10, -5, 1000000, "an int"),
	FB_PARAM_INT("big", "", 0, INT64_MIN, INT64_MAX, "an int over the whole range"),
	FB_PARAM_DOUBLE("x", "us", 1.5, -1e3, 1e9, "a double"),
	FB_PARAM_BOOL("flag", false, "a bool"),
	FB_PARAM_ENUM("mode", "b", "an enum", "a", "b", "long-choice"),
	FB_PARAM_END
};

static int fuzz_run(struct fb_run *run) { return 0; }

static const struct fb_scenario fuzz_scenario = {
	.name = "fuzz", .summary = "fuzz target", .params = fuzz_params, .run = fuzz_run,
};

static void check_error(const char *err, size_t cap)
{
	size_t n = strnlen(err, cap);
	assert(n > 0 && n < cap);
	assert(!strchr(err, '\n'));
}

static bool same_value(const struct fb_param *p, union fb_value a, union fb_value b)
{
	switch (p->type) {
	case FB_PARAM_INT:    return a.i == b.i;
	case FB_PARAM_DOUBLE: return a.d == b.d;
	case FB_PARAM_BOOL:   return a.b == b.b;
	default:              return a.e == b.e;
	}
}

/* Parse text as p; on success the canonical text must read back the same. */
static void check_value(const struct fb_param *p, const char *text)
{
	char err[256], canon[128];
	union fb_value v, w;
	if (fb_param_parse(p, text, &v, err, sizeof(err))) {
		check_error(err, sizeof(err));
		return;
	}
	fb_param_format(p, v, canon, sizeof(canon));
	assert(fb_param_parse(p, canon, &w, err, sizeof(err)) == 0);
	assert(same_value(p, v, w));
}

static void check_sets(const struct fb_opts *o)
{
	struct fb_params *ps = fb_params_new(&fuzz_scenario);
	char err[256];
	for (size_t i = 0; i < o->nsets; i++) {
		int rc = fb_params_set(ps, o->sets[i].key, o->sets[i].value, err, sizeof(err));
		if (rc) {
			check_error(err, sizeof(err));
			continue;
		}
		int k = fb_scenario_param_index(&fuzz_scenario, o->sets[i].key);
		assert(k >= 0 && ps->set[k]);
		check_value(&fuzz_params[k], o->sets[i].value);
	}
	fb_params_free(ps);
}

/* Every point in exactly one shard; shard sizes add up (bounded work). */
static void check_grid(const struct fb_opts *o)
{
	const struct fb_grid *g = &o->grid;
	uint64_t points = fb_grid_points(g);
	assert(points >= 1 && points <= FB_GRID_MAX_POINTS);
	for (size_t a = 0; a < g->n; a++) {
		int k = fb_scenario_param_index(&fuzz_scenario, g->axes[a].key);
		for (size_t v = 0; k >= 0 && v < g->axes[a].n && v < 8; v++)
			check_value(&fuzz_params[k], g->axes[a].values[v]);
	}
	size_t idx[64];
	uint64_t limit = points < 2000 ? points : 2000, mine = 0;
	for (uint64_t p = 0; p < limit && g->n <= 64; p++) {
		fb_grid_point(g, p, idx);
		for (size_t a = 0; a < g->n; a++)
			assert(idx[a] < g->axes[a].n);
		mine += fb_shard_has(p, o->shard_index, o->shard_count);
	}
	if (limit == points)
		assert(mine == fb_shard_size(points, o->shard_index, o->shard_count));
	uint64_t total = 0;
	for (unsigned i = 0; i < o->shard_count && i < 64; i++)
		total += fb_shard_size(points, i, o->shard_count);
	if (o->shard_count <= 64)
		assert(total == points);
}

/* Each --set key at most once. */
static void check_sets_unique(const struct fb_opts *o)
{
	for (size_t i = 0; i < o->nsets; i++)
		for (size_t j = i + 1; j < o->nsets; j++)
			assert(strcmp(o->sets[i].key, o->sets[j].key));
}

static void check_opts(const struct fb_opts *o)
{
	assert(o->repetitions >= 1 && o->repetitions <= 10000);
	check_sets_unique(o);
	if (o->cmd == FB_CMD_MERGE)
		assert(o->ninputs >= 1 && !o->scenario && !o->nsets && !o->grid.n);
	else if (o->cmd == FB_CMD_COMPARE)
		assert(o->ninputs == 2 && !o->scenario && !o->nsets && !o->grid.n);
	else if (o->cmd != FB_CMD_HELP)   /* merge IN... --help: help, the inputs unused */
		assert(!o->ninputs);
	assert(o->shard_count >= 1 && o->shard_index < o->shard_count);
	assert(o->paths >= 1 && o->paths <= 3);
	assert(o->target_ci >= 0 && o->target_ci < 10 && o->max_time_s >= 0 && o->threshold >= 0);
	assert(o->format != FB_FORMAT_MARKDOWN || o->cmd == FB_CMD_COMPARE || o->cmd == FB_CMD_HELP);
	if (o->cmd == FB_CMD_RUN || o->cmd == FB_CMD_SWEEP) {
		assert(o->scenario && o->scenario[0] != '-');
		assert(!(o->iterations && o->duration_s >= 0));
		assert(o->duration_s < 0 || (o->duration_s > 0 && o->duration_s <= 1e6));
		assert(o->warmup_s < 0 || o->warmup_s <= 1e6);
		assert(!o->resume || o->out);
		assert(o->cmd != FB_CMD_SWEEP || o->grid.n > 0);
		check_sets(o);
		check_grid(o);
	}
}

/* The raw bytes also go to the small parsers directly. */
static void check_small_parsers(const char *s)
{
	double sec;
	unsigned i, n;
	unsigned long long u;
	char err[128], shown[FB_SHOWN_MAX];
	if (!fb_parse_seconds(s, &sec))
		assert(sec >= 0 && sec <= 1e6 && !isnan(sec));
	if (!fb_shard_parse(s, &i, &n, err, sizeof(err)))
		assert(i < n);
	else
		check_error(err, sizeof(err));
	fb_parse_u64(s, '/', &u);
	assert(strlen(fb_shown(s, shown, sizeof(shown))) < sizeof(shown));
	struct fb_grid g = { 0 };
	if (fb_grid_add_axis(&g, s, err, sizeof(err)))
		check_error(err, sizeof(err));
	else
		assert(g.n == 1 && g.axes[0].n >= 1);
	fb_grid_free(&g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *argv[MAX_ARGS + 1];
	int argc = 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[argc++] = "fencebench";
	for (size_t start = 0, i = 0; i <= size && argc < MAX_ARGS; i++) {
		if (i == size || buf[i] == '\n' || buf[i] == '\0') {
			buf[i] = '\0';
			argv[argc++] = buf + start;
			start = i + 1;
		}
	}
	argv[argc] = NULL;
	check_small_parsers(argc > 1 ? argv[1] : "");

	struct fb_opts o;
	char err[512];
	memset(err, 'x', sizeof(err));
	int rc = fb_opts_parse(argc, argv, &o, err, sizeof(err));
	if (rc) {
		assert(rc == -EINVAL);
		check_error(err, sizeof(err));
	} else {
		assert(err[0] == '\0');
		check_opts(&o);
	}
	fb_opts_free(&o);
	free(buf);
	return 0;
}
