/* src/fb_compare.c — `fencebench compare BASE.json NEW.json`: did it change, beyond the noise?
 *
 * Two --format json outputs of the same scenario (run, sweep or merge).  Their
 * benchmarks are matched by run_name (scenario/section/path/parameters, as
 * Google Benchmark's compare.py matches them); each stands for itself by its
 * "median" aggregate when it was repeated (robust to one odd repetition),
 * else by its one iteration entry.  For every metric of both (perf counters
 * with --all) and the time per iteration:
 *
 *   change    NEW / BASE - 1, with its 95 % interval from the two sides' own
 *             intervals (fb_boot_change: MOVER on the log scale); a
 *             repeated file without intervals (written before they existed)
 *             has its median's drawn here from the repetitions' values
 *             (fb_ci_median: the range below 6 repetitions)
 *   verdict   as criterion.rs decides it: the whole interval of the change
 *             above +threshold (default 5 %) or below -threshold is a change,
 *             anything reaching inside is "within noise".  A change is
 *             "regressed" or "improved" for a metric whose better direction is
 *             known (latencies and times in ns: lower; --lower-is-better and
 *             --higher-is-better name others; "ns/..." units are lower
 *             too), else "higher" or "lower".  A metric without an interval
 *             on both sides (a plain metric of one repetition) gets "no
 *             interval" and no verdict.
 *
 *   gate      the verdicts above describe; only the gated metrics decide the
 *             exit status: those --gate names, else the files' headline
 *             metrics (the scenario's, in the context as "headline_metrics":
 *             of its main section), else every p50.  Each gated metric of each benchmark is tested
 *             across the two files' repetitions with a Mann-Whitney U test
 *             (fb_mwu_p, as Google Benchmark's compare.py does), and Holm's
 *             step-down keeps the chance of any false failure among them at
 *             FB_COMPARE_ALPHA (5 %).  A gated metric fails when its test
 *             rejects and its change is beyond --threshold the worse way
 *             (either way for a metric without a better direction).  Two
 *             files with too few repetitions for the test to ever reject (3
 *             and 3 give p >= 0.1) are not gated: compare says why and how
 *             many repetitions it needs, and exits 2.  Other metrics are
 *             reported, never gated.
 *
 * Output: console (plain text), markdown (a table per benchmark, for a pull
 * request) or json.  Exit status 1 when a gated metric failed (a CI job gates
 * on it), 0 otherwise, 2 when the inputs cannot be compared or gated, or a
 * metric named by --gate, --lower-is-better or --higher-is-better is in
 * neither file (one line naming why).  Single thread.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/fb_app.h"
#include "src/fb_boot.h"
#include "src/fb_file.h"
#include "src/fb_output.h"
#include "src/fb_util.h"

enum verdict { V_NONE, V_NOISE, V_IMPROVED, V_REGRESSED, V_HIGHER, V_LOWER };
static const char *const verdict_name[] = {
	[V_NONE] = "no interval", [V_NOISE] = "within noise", [V_IMPROVED] = "improved",
	[V_REGRESSED] = "regressed", [V_HIGHER] = "higher", [V_LOWER] = "lower",
};

enum better { B_NEUTRAL, B_LOWER, B_HIGHER };

#define FB_COMPARE_ALPHA 0.05   /* family-wise error of the gate */

enum gate { G_NONE, G_PASS, G_FAIL };

struct side {
	const char *path;
	json_t *doc, *context;
	json_t *entry;      /* run_name -> the entry that stands for it */
	json_t *iters;      /* run_name -> its iteration entries (the repetitions) */
	json_t *order;      /* run_names, in file order */
};

struct row {
	const char *bench, *metric, *unit;
	json_t *be, *ne;    /* the two entries */
	double b[4], n[4];  /* value, interval low, high, and the runs of a range (NAN: an interval) */
	double change, lo, hi;
	int relative;
	enum verdict v;
	bool gated;
	size_t nb, nn;      /* repetitions on each side */
	double p;           /* Mann-Whitney U across them (gated rows) */
	enum gate g;
};

struct compare {
	const struct fb_opts *o;
	struct side s[2];
	struct row *rows;
	size_t nrows;
	unsigned count[6];
	unsigned recomputed;   /* intervals compare drew from the repetitions itself */
	const char *gate_list; /* the gated metrics' names, comma-separated */
	const char *gate_why;  /* where that list came from */
	char *not_gated;       /* why nothing was gated (exit 2), or NULL */
	unsigned ngated, failed;
};

/* ---- reading the two files ---- */

static int refuse(char *err, size_t errlen, const char *path, const char *what)
{
	char p[FB_FILE_SHOWN_MAX];
	snprintf(err, errlen, "compare: %s: %s", fb_file_shown(path, p, sizeof(p)), what);
	return -EINVAL;
}

static const char *str_of(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

static double num_of(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The median aggregate of a run_name wins over its iteration entry. */
static void take_entry(struct side *s, json_t *b)
{
	const char *name = str_of(b, "run_name");
	bool median = !strcmp(str_of(b, "run_type"), "aggregate") && !strcmp(str_of(b, "aggregate_name"), "median");
	bool iteration = strcmp(str_of(b, "run_type"), "aggregate") != 0;
	json_t *have = json_object_get(s->entry, name);
	if (iteration) {
		json_t *list = json_object_get(s->iters, name);
		if (!list)
			json_object_set_new(s->iters, name, list = json_array());
		json_array_append(list, b);
	}
	if (!have && (median || iteration))
		json_array_append_new(s->order, json_string(name));
	if ((!have && (median || iteration)) || (median && have && strcmp(str_of(have, "run_type"), "aggregate")))
		json_object_set(s->entry, name, b);
}

static int load_side(struct side *s, const char *path, char *err, size_t errlen)
{
	json_error_t je;
	char msg[256];
	s->path = path;
	s->entry = json_object();
	s->iters = json_object();
	s->order = json_array();
	s->doc = json_load_file(path, 0, &je);
	if (!s->doc) {
		snprintf(msg, sizeof(msg), "not JSON (%s, line %d)", je.text, je.line);
		return refuse(err, errlen, path, msg);
	}
	s->context = json_object_get(s->doc, "context");
	json_t *benches = json_object_get(s->doc, "benchmarks"), *b;
	if (!json_is_object(s->context) || !json_is_array(benches))
		return refuse(err, errlen, path, "not a fencebench --format json output (no context and benchmarks)");
	size_t i;
	json_array_foreach(benches, i, b) {
		if (!json_is_string(json_object_get(b, "run_name")) || !json_is_object(json_object_get(b, "fencebench")))
			return refuse(err, errlen, path, "a benchmark without run_name or fencebench block: not "
					 "written by fencebench");
		take_entry(s, b);
	}
	if (!json_array_size(s->order))
		return refuse(err, errlen, path, "no benchmarks");
	return 0;
}

/* ---- one metric ---- */

static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == n && !strncmp(p, name, n))
			return true;
		p = comma ? comma + 1 : NULL;
	}
	return false;
}

static enum better better_of(const struct fb_opts *o, const char *metric, const char *unit)
{
	if (listed(o->lower_better, metric))
		return B_LOWER;
	if (listed(o->higher_better, metric))
		return B_HIGHER;
	return !strcmp(unit, "ns") || !strncmp(unit, "ns/", 3) ? B_LOWER : B_NEUTRAL;
}

static double bound(json_t *e, const char *metric, const char *which)
{
	char key[300];
	snprintf(key, sizeof(key), "%s_ci_%s", metric, which);
	return num_of(e, key);
}

static enum verdict judge(const struct row *r, double threshold, enum better better)
{
	if (!isfinite(r->lo) || !isfinite(r->hi))
		return V_NONE;
	double t = r->relative ? threshold : 0.0;
	bool up = r->lo > t, down = r->hi < -t;
	if (!up && !down)
		return V_NOISE;
	if (better == B_NEUTRAL)
		return up ? V_HIGHER : V_LOWER;
	return up == (better == B_LOWER) ? V_REGRESSED : V_IMPROVED;
}

/* A median aggregate without an interval (a file written before they existed):
 * the repetitions' own values, bootstrapped here as the harness does. */
static void interval_of(struct compare *c, const struct side *s, const char *bench, json_t *e, const char *metric,
			double *v)
{
	v[0] = num_of(e, metric);
	v[1] = bound(e, metric, "lo");
	v[2] = bound(e, metric, "hi");
	v[3] = bound(e, metric, "range");
	json_t *list = json_object_get(s->iters, bench), *it;
	/* a median's interval counts only with the coverage it claims: a file
	 * written before intervals said theirs (no _ci_level) has its median's
	 * drawn again from the repetitions, as the report scripts do */
	bool claimed = isfinite(v[1]) && isfinite(bound(e, metric, "level"));
	if (claimed || strcmp(str_of(e, "aggregate_name"), "median") || json_array_size(list) < 2)
		return;
	size_t reps = json_array_size(list), i;
	double *val = fb_xcalloc(reps, sizeof(*val));
	json_array_foreach(list, i, it)
		val[i] = num_of(it, metric);
	struct fb_ci ci = fb_ci_median(val, reps);
	v[1] = ci.lo;
	v[2] = ci.hi;
	v[3] = ci.kind == FB_CI_RANGE ? (double)reps : NAN;
	c->recomputed += isfinite(v[1]);
	free(val);
}

/* The repetitions' values of metric on one side (its iteration entries). */
static size_t rep_values(const struct side *s, const char *bench, const char *metric, double **out)
{
	json_t *list = json_object_get(s->iters, bench), *it;
	size_t n = json_array_size(list), i, k = 0;
	*out = fb_xcalloc(n ? n : 1, sizeof(**out));
	json_array_foreach(list, i, it) {
		double v = num_of(it, metric);
		if (isfinite(v))
			(*out)[k++] = v;
	}
	return k;
}

static void add_row(struct compare *c, const char *bench, const char *metric, const char *unit, json_t *be,
		    json_t *ne)
{
	struct row r = { .bench = bench, .metric = metric, .unit = unit, .be = be, .ne = ne };
	interval_of(c, &c->s[0], bench, be, metric, r.b);
	interval_of(c, &c->s[1], bench, ne, metric, r.n);
	if (!isfinite(r.b[0]) || !isfinite(r.n[0]))
		return;
	fb_boot_change(r.b[0], r.b[1], r.b[2], r.n[0], r.n[1], r.n[2], &r.change, &r.lo, &r.hi, &r.relative);
	r.v = judge(&r, c->o->threshold, better_of(c->o, metric, unit));
	/* the headline's metrics are its main section's; --gate's, wherever they are */
	r.gated = strncmp(metric, "perf.", 5) && listed(c->gate_list, metric) &&
		  (c->o->gate || !*str_of(json_object_get(be, "fencebench"), "section"));
	r.p = NAN;
	if (r.gated) {
		double *a, *b;
		r.nb = rep_values(&c->s[0], bench, metric, &a);
		r.nn = rep_values(&c->s[1], bench, metric, &b);
		r.p = fb_mwu_p(a, r.nb, b, r.nn);
		free(a);
		free(b);
	}
	c->count[r.v]++;
	c->rows = fb_xrealloc(c->rows, (c->nrows + 1) * sizeof(*c->rows));
	c->rows[c->nrows++] = r;
}

/* Every metric of the pair: the time per iteration (in the main section:
 * the others repeat it), then the scenario's in their order. */
static void compare_bench(struct compare *c, const char *bench, json_t *be, json_t *ne)
{
	if (!*str_of(json_object_get(be, "fencebench"), "section"))
		add_row(c, bench, "real_time", "ns", be, ne);
	const char *k;
	json_t *u;
	json_object_foreach(json_object_get(json_object_get(be, "fencebench"), "units"), k, u) {
		if (!c->o->all && !strncmp(k, "perf.", 5))
			continue;
		add_row(c, bench, k, json_string_value(u) ? json_string_value(u) : "", be, ne);
	}
}

/* ---- output ---- */

static void fmt_change(const struct row *r, double v, char *buf, size_t len, bool sign_only)
{
	if (!isfinite(v))
		snprintf(buf, len, "?");
	else if (r->relative)
		snprintf(buf, len, fabs(v) < 0.1 ? "%+.1f%%" : "%+.0f%%", 100.0 * v);
	else
		snprintf(buf, len, "%+.4g%s%s", v, sign_only || !*r->unit ? "" : " ", sign_only ? "" : r->unit);
}

/* "+5.2% [-0.1%, +10.8%]" */
static void change_cell(const struct row *r, char *buf, size_t len)
{
	char a[48], lo[48], hi[48];
	fmt_change(r, r->change, a, sizeof(a), false);
	if (!isfinite(r->lo) || r->lo == r->hi) {   /* no interval, or every repetition the same: none to show */
		snprintf(buf, len, "%s", a);
		return;
	}
	fmt_change(r, r->lo, lo, sizeof(lo), true);
	fmt_change(r, r->hi, hi, sizeof(hi), true);
	snprintf(buf, len, "%s [%s, %s]", a, lo, hi);
}

static void value_cell(const double *v, const char *unit, char *buf, size_t len)
{
	char pm[96];
	fb_output_value(v[0], unit, buf, len);
	fb_output_span(v[0], v[1], v[2], v[3], unit, pm, sizeof(pm));
	size_t used = strlen(buf);
	snprintf(buf + used, len - used, "%s", pm);
}

static void side_line(FILE *f, const char *label, const struct side *s, bool md)
{
	json_t *c = s->context;
	char p[FB_FILE_SHOWN_MAX];
	fprintf(f, "%s%s %s%s%s: git %s, %.19s, %s, scenario %s, %lld repetition(s)\n", md ? "- " : "", label,
		md ? "`" : "", fb_file_shown(s->path, p, sizeof(p)), md ? "`" : "", str_of(c, "git_rev"),
		str_of(c, "date"), str_of(c, "host_name"), str_of(c, "scenario"),
		json_integer_value(json_object_get(c, "repetitions")));
	size_t i;
	json_t *w;
	json_array_foreach(json_object_get(c, "warnings"), i, w)
		fprintf(f, "%s  %s warned: %s\n", md ? "  -" : "", label, json_string_value(w));
}

/* The machine context keys whose difference makes a change the machine's as
 * much as the code's. */
static const char *const machine_keys[] = { "cpu_model", "num_cpus", "mhz_per_cpu", "kernel", "build_type",
					    "build_flags" };
#define MACHINE_KEYS (sizeof(machine_keys) / sizeof(machine_keys[0]))

/* A context value as text ("" when absent). */
static void context_text(json_t *c, const char *key, char *buf, size_t len)
{
	json_t *v = json_object_get(c, key);
	if (json_is_string(v))
		snprintf(buf, len, "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, len, "%g", json_real_value(v));
	else
		snprintf(buf, len, "%s", "");
}

/* The machine keys on which BASE and NEW differ: a bit each. */
static unsigned machine_differs(const struct compare *c)
{
	unsigned bits = 0;
	for (size_t k = 0; k < MACHINE_KEYS; k++) {
		char a[256], b[256];
		context_text(c->s[0].context, machine_keys[k], a, sizeof(a));
		context_text(c->s[1].context, machine_keys[k], b, sizeof(b));
		if (strcmp(a, b))
			bits |= 1u << k;
	}
	return bits;
}

static void machine_warning(FILE *f, const struct compare *c, bool md)
{
	unsigned bits = machine_differs(c);
	if (!bits)
		return;
	fprintf(f, "%sWARNING: BASE and NEW ran on different machines or builds, so a change may be the machine's, "
		"not the code's:", md ? "\n**" : "");
	for (size_t k = 0; k < MACHINE_KEYS; k++) {
		if (!(bits & 1u << k))
			continue;
		char a[256], b[256];
		context_text(c->s[0].context, machine_keys[k], a, sizeof(a));
		context_text(c->s[1].context, machine_keys[k], b, sizeof(b));
		fprintf(f, " %s '%s' -> '%s';", machine_keys[k], a, b);
	}
	fprintf(f, " compare runs of one machine%s\n", md ? "**" : "");
}

static void head(FILE *f, const struct compare *c, bool md)
{
	if (md)
		fprintf(f, "### fencebench compare\n\n");
	else
		fprintf(f, "fencebench compare\n");
	side_line(f, "BASE", &c->s[0], md);
	side_line(f, "NEW", &c->s[1], md);
	machine_warning(f, c, md);
	fprintf(f, "%schange = NEW / BASE - 1 with its interval (95 %%, or from ranges where a side has fewer "
		"than 6 repetitions); within noise: the interval reaches inside ±%.3g %% (--threshold); "
		"regressed/improved where lower is better (latencies, times) or --lower/--higher-is-better says; "
		"other metrics read higher/lower\n", md ? "\n" : "", 100.0 * c->o->threshold);
	fprintf(f, "%sgate (the exit status): %s (%s); each a Mann-Whitney U test across the repetitions, Holm "
		"across all %u at %.3g %%, failing when it rejects and the change is beyond the threshold; other "
		"metrics are reported, not gated\n", md ? "\n" : "", c->gate_list, c->gate_why, c->ngated,
		100.0 * FB_COMPARE_ALPHA);
}

static void gate_cell(const struct row *r, char *buf, size_t len)
{
	if (!r->gated)
		snprintf(buf, len, "-");
	else if (!isfinite(r->p))
		snprintf(buf, len, "no test");
	else
		snprintf(buf, len, "%s p=%.2g", r->g == G_FAIL ? "FAIL" : r->g == G_PASS ? "pass" : "not gated", r->p);
}

/* The rows of one benchmark as a table: console columns padded, markdown piped. */
static void table(FILE *f, const struct compare *c, size_t first, size_t end, bool md)
{
	enum { COLS = 6 };
	size_t n = end - first + 1;
	char (*cell)[COLS][128] = fb_xcalloc(n, sizeof(*cell));
	int w[COLS] = { 0 };
	static const char *const header[COLS] = { "metric", "BASE", "NEW", "change", "verdict", "gate" };
	for (int k = 0; k < COLS; k++)
		snprintf(cell[0][k], 128, "%s", header[k]);
	for (size_t i = first; i < end; i++) {
		const struct row *r = &c->rows[i];
		char (*row)[128] = cell[i - first + 1];
		snprintf(row[0], 128, "%s", r->metric);
		value_cell(r->b, r->unit, row[1], 128);
		value_cell(r->n, r->unit, row[2], 128);
		change_cell(r, row[3], 128);
		snprintf(row[4], 128, "%s", verdict_name[r->v]);
		gate_cell(r, row[5], 128);
	}
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < COLS; k++)
			if (fb_output_width(cell[i][k]) > w[k])
				w[k] = fb_output_width(cell[i][k]);
	fprintf(f, md ? "\n#### %s\n\n" : "\n== %s ==\n", c->rows[first].bench);
	for (size_t i = 0; i < n; i++) {
		for (int k = 0; k < COLS; k++) {
			if (md)
				fprintf(f, "| %s ", cell[i][k]);
			else
				fprintf(f, k ? "  %s%*s" : "%s%*s", cell[i][k], w[k] - fb_output_width(cell[i][k]), "");
		}
		fputs(md ? "|\n" : "\n", f);
		if (i == 0 && md)
			fputs("|---|--:|--:|--:|---|---|\n", f);
	}
	free(cell);
}

static void only_in(FILE *f, const struct side *a, const struct side *b, const char *label, bool md)
{
	size_t i, shown = 0;
	json_t *name;
	json_array_foreach(a->order, i, name) {
		if (json_object_get(b->entry, json_string_value(name)))
			continue;
		if (shown++)
			fprintf(f, ", %s", json_string_value(name));
		else
			fprintf(f, "%sonly in %s: %s", md ? "\n" : "", label, json_string_value(name));
	}
	if (shown)
		fputc('\n', f);
}

static void summary(FILE *f, const struct compare *c, bool md)
{
	fprintf(f, "\n%s%u regressed, %u improved, %u higher, %u lower, %u within noise, %u without an interval%s\n",
		md ? "**" : "", c->count[V_REGRESSED], c->count[V_IMPROVED], c->count[V_HIGHER], c->count[V_LOWER],
		c->count[V_NOISE], c->count[V_NONE], md ? "**" : "");
	if (c->recomputed)
		fprintf(f, "%s(%u intervals drawn here from the repetitions' values: the files carry none, written "
			"before fencebench wrote intervals; they hold the spread between repetitions only)\n",
			md ? "\n" : "", c->recomputed);
	if (c->count[V_NONE])
		fprintf(f, "%s(without an interval: a plain metric of one repetition; --repetitions 3 gives every metric "
			"one)\n", md ? "\n" : "");
	only_in(f, &c->s[0], &c->s[1], "BASE", md);
	only_in(f, &c->s[1], &c->s[0], "NEW", md);
	if (c->not_gated)
		fprintf(f, "%snot gated: %s\n", md ? "\n" : "", c->not_gated);
	else
		fprintf(f, "%sgate: %u of %u gated metrics failed\n", md ? "\n" : "", c->failed, c->ngated);
	for (size_t i = 0; i < c->nrows; i++) {
		const struct row *r = &c->rows[i];
		char ch[160];
		if (r->g != G_FAIL && (r->v != V_REGRESSED || r->gated))
			continue;
		change_cell(r, ch, sizeof(ch));
		fprintf(f, "%s%s: %s %s %s", md ? "\n" : "", r->g == G_FAIL ? "regressed" : "regressed, not gated",
			r->bench, r->metric, ch);
		if (r->g == G_FAIL)
			fprintf(f, " (Mann-Whitney p=%.2g)", r->p);
		fputc('\n', f);
	}
}

static char *render_text(const struct compare *c, bool md)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	head(f, c, md);
	for (size_t i = 0; i < c->nrows;) {
		size_t end = i + 1;
		while (end < c->nrows && c->rows[end].bench == c->rows[i].bench)
			end++;
		table(f, c, i, end, md);
		i = end;
	}
	summary(f, c, md);
	fclose(f);
	return buf;
}

static json_t *interval_json(double lo, double hi)
{
	return isfinite(lo) && isfinite(hi) ? json_pack("[f, f]", lo, hi) : json_null();
}

static char *render_json(const struct compare *c)
{
	json_t *rows = json_array();
	for (size_t i = 0; i < c->nrows; i++) {
		const struct row *r = &c->rows[i];
		json_t *o = json_pack("{s:s, s:s, s:s, s:f, s:o, s:f, s:o, s:s}", "benchmark", r->bench, "metric",
				      r->metric, "unit", r->unit, "base", r->b[0], "base_ci", interval_json(r->b[1], r->b[2]),
				      "new", r->n[0], "new_ci", interval_json(r->n[1], r->n[2]), "verdict",
				      verdict_name[r->v]);
		json_object_set_new(o, r->relative ? "change" : "difference", json_real(r->change));
		json_object_set_new(o, r->relative ? "change_ci" : "difference_ci", interval_json(r->lo, r->hi));
		/* a side's interval that is the range of too few repetitions for 95 % says so */
		if (isfinite(r->b[3]))
			json_object_set_new(o, "base_ci_range", json_integer((json_int_t)r->b[3]));
		if (isfinite(r->n[3]))
			json_object_set_new(o, "new_ci_range", json_integer((json_int_t)r->n[3]));
		json_object_set_new(o, "gated", json_boolean(r->gated));
		if (r->gated) {
			json_object_set_new(o, "p_value", isfinite(r->p) ? json_real(r->p) : json_null());
			json_object_set_new(o, "gate", json_string(r->g == G_FAIL ? "fail" : r->g == G_PASS ? "pass"
										     : "not gated"));
		}
		json_array_append_new(rows, o);
	}
	json_t *differ = json_array();
	unsigned bits = machine_differs(c);
	for (size_t k = 0; k < MACHINE_KEYS; k++)
		if (bits & 1u << k)
			json_array_append_new(differ, json_string(machine_keys[k]));
	json_t *doc = json_pack("{s:s, s:s, s:f, s:i, s:o, s:o}", "base", c->s[0].path, "new", c->s[1].path,
				"threshold", c->o->threshold, "regressed", (int)c->count[V_REGRESSED],
				"machine_differs", differ, "rows", rows);
	json_object_set_new(doc, "gate", json_pack("{s:s, s:i, s:i, s:f, s:o}", "metrics", c->gate_list, "gated",
						   (int)c->ngated, "failed", (int)c->failed, "alpha", FB_COMPARE_ALPHA,
						   "not_gated", c->not_gated ? json_string(c->not_gated) : json_null()));
	char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	char *out = fb_xasprintf("%s\n", s);
	free(s);
	json_decref(doc);
	return out;
}

/* ---- the command ---- */

static int check_same(const struct compare *c, char *err, size_t errlen)
{
	const char *a = str_of(c->s[0].context, "scenario"), *b = str_of(c->s[1].context, "scenario");
	if (strcmp(a, b)) {
		char msg[256];
		snprintf(msg, sizeof(msg), "scenario '%s', but BASE is '%s': compare two outputs of the same scenario",
			 b, a);
		return refuse(err, errlen, c->s[1].path, msg);
	}
	size_t i;
	json_t *name;
	json_array_foreach(c->s[0].order, i, name)
		if (json_object_get(c->s[1].entry, json_string_value(name)))
			return 0;
	return refuse(err, errlen, c->s[1].path, "no benchmark in common with BASE (other points or --set?)");
}

/* Is name a metric of some benchmark of either side? */
static bool known_metric(const struct compare *c, const char *name)
{
	if (!strcmp(name, "real_time"))
		return true;
	for (int k = 0; k < 2; k++) {
		const char *run;
		json_t *e;
		json_object_foreach(c->s[k].entry, run, e)
			if (json_object_get(json_object_get(json_object_get(e, "fencebench"), "units"), name))
				return true;
	}
	return false;
}

/* Every name of the lists --gate, --lower-is-better and --higher-is-better must be a metric. */
static int check_names(const struct compare *c, char *err, size_t errlen)
{
	const char *const opt[] = { "--gate", "--lower-is-better", "--higher-is-better" };
	const char *const list[] = { c->o->gate, c->o->lower_better, c->o->higher_better };
	for (int k = 0; k < 3; k++) {
		for (const char *p = list[k]; p && *p;) {
			const char *comma = strchr(p, ',');
			size_t len = comma ? (size_t)(comma - p) : strlen(p);
			char name[256];
			snprintf(name, sizeof(name), "%.*s", (int)(len < 255 ? len : 255), p);
			if (!known_metric(c, name)) {
				snprintf(err, errlen, "compare: %s: no metric '%s' in BASE or NEW", opt[k], name);
				return -EINVAL;
			}
			p = comma ? comma + 1 : NULL;
		}
	}
	return 0;
}

/* The gated metrics: --gate, else the headline's, else every p50 of BASE. */
static char *gate_list_of(struct compare *c)
{
	if (c->o->gate) {
		c->gate_why = "named by --gate";
		return fb_xasprintf("%s", c->o->gate);
	}
	for (int k = 0; k < 2; k++) {
		const char *h = json_string_value(json_object_get(c->s[k].context, "headline_metrics"));
		if (h && *h) {
			c->gate_why = "the scenario's headline metrics";
			return fb_xasprintf("%s", h);
		}
	}
	c->gate_why = "every p50: the files name no headline metrics (--gate names others)";
	char *list = fb_xasprintf("%s", "");
	const char *run;
	json_t *e;
	json_object_foreach(c->s[0].entry, run, e) {
		const char *k;
		json_t *u;
		json_object_foreach(json_object_get(json_object_get(e, "fencebench"), "units"), k, u) {
			size_t n = strlen(k);
			if (n < 4 || strcmp(k + n - 4, "_p50") || listed(list, k))
				continue;
			char *more = fb_xasprintf("%s%s%s", list, *list ? "," : "", k);
			free(list);
			list = more;
		}
	}
	return list;
}

static bool beyond(const struct row *r, double threshold, enum better better)
{
	double t = r->relative ? threshold : 0.0;
	if (better == B_LOWER)
		return r->change > t;
	if (better == B_HIGHER)
		return r->change < -t;
	return fabs(r->change) > t;
}

/* Test the gated rows, Holm across them; or say why they cannot be. */
static void gate(struct compare *c)
{
	size_t k = 0, fewest_b = SIZE_MAX, fewest_n = SIZE_MAX;
	for (size_t i = 0; i < c->nrows; i++) {
		const struct row *r = &c->rows[i];
		if (!r->gated)
			continue;
		k++;
		fewest_b = r->nb < fewest_b ? r->nb : fewest_b;
		fewest_n = r->nn < fewest_n ? r->nn : fewest_n;
	}
	c->ngated = (unsigned)k;
	if (!k) {
		c->not_gated = fb_xasprintf("no gated metric (%s) is in both files", c->gate_list);
		return;
	}
	double need = FB_COMPARE_ALPHA / (double)k;
	if (fb_mwu_min_p(fewest_b, fewest_n) > need) {
		unsigned r = 2;
		while (fb_mwu_min_p(r, r) > need)
			r++;
		c->not_gated = fb_xasprintf("BASE has %zu and NEW %zu repetitions: a Mann-Whitney test over them "
					    "cannot reach p < %.2g (Holm over %zu gated metrics at %.3g %%); run both "
					    "with --repetitions %u or more", fewest_b, fewest_n, need, k,
					    100.0 * FB_COMPARE_ALPHA, r);
		return;
	}
	double *p = fb_xcalloc(c->nrows, sizeof(*p));
	bool *reject = fb_xcalloc(c->nrows, sizeof(*reject));
	for (size_t i = 0; i < c->nrows; i++)
		p[i] = c->rows[i].gated ? c->rows[i].p : NAN;
	fb_holm(p, c->nrows, FB_COMPARE_ALPHA, reject);
	for (size_t i = 0; i < c->nrows; i++) {
		struct row *r = &c->rows[i];
		if (!r->gated)
			continue;
		bool fail = reject[i] && beyond(r, c->o->threshold, better_of(c->o, r->metric, r->unit));
		r->g = fail ? G_FAIL : G_PASS;
		c->failed += fail;
	}
	free(p);
	free(reject);
}

static int run_compare(struct compare *c, char *err, size_t errlen)
{
	int rc = load_side(&c->s[0], c->o->inputs[0], err, errlen);
	if (!rc)
		rc = load_side(&c->s[1], c->o->inputs[1], err, errlen);
	if (!rc)
		rc = check_same(c, err, errlen);
	if (!rc)
		rc = check_names(c, err, errlen);
	if (rc)
		return rc;
	c->gate_list = gate_list_of(c);
	size_t i;
	json_t *name;
	json_array_foreach(c->s[0].order, i, name) {
		json_t *be = json_object_get(c->s[0].entry, json_string_value(name));
		json_t *ne = json_object_get(c->s[1].entry, json_string_value(name));
		if (ne)
			compare_bench(c, json_string_value(name), be, ne);
	}
	gate(c);
	return 0;
}

int fb_compare_main(const struct fb_opts *o)
{
	struct compare c = { .o = o };
	char err[1024];
	int status = FB_EXIT_OK;
	if (run_compare(&c, err, sizeof(err))) {
		fprintf(stderr, "fencebench: %s\n", err);
		status = FB_EXIT_USAGE;
	} else {
		char *text = o->format == FB_FORMAT_JSON ? render_json(&c) : render_text(&c, o->format == FB_FORMAT_MARKDOWN);
		struct fb_out out;
		int rc = 0;
		if (o->out && !(rc = fb_out_open(&out, o->out, err, sizeof(err)))) {
			rc = fb_out_write(&out, text, strlen(text), err, sizeof(err));
			fb_out_free(&out);
		} else if (!o->out) {
			fputs(text, stdout);
		}
		free(text);
		if (rc) {
			fprintf(stderr, "fencebench: %s\n", err);
			status = FB_EXIT_USAGE;
		} else if (c.not_gated) {
			fprintf(stderr, "fencebench: compare: not gated: %s\n", c.not_gated);
			status = FB_EXIT_USAGE;
		} else if (c.failed) {
			status = FB_EXIT_RUN;
		}
	}
	for (int k = 0; k < 2; k++) {
		json_decref(c.s[k].doc);
		json_decref(c.s[k].entry);
		json_decref(c.s[k].iters);
		json_decref(c.s[k].order);
	}
	free(c.rows);
	free((char *)c.gate_list);
	free(c.not_gated);
	return status;
}
