/* src/fb_results.c — runs to Google Benchmark JSON entries: names, counters, aggregates.
 *
 * One entry per section × path × repetition (run_type "iteration"), plus,
 * with several repetitions, mean/median/stddev/cv aggregates of real_time,
 * cpu_time and every counter (run_type "aggregate"), named as Google
 * Benchmark names them ("<run_name>_mean").  Then the 95 % intervals
 * (src/fb_interval.c): M_ci_lo and M_ci_hi beside each metric M that has one,
 * and on native entries M_vs_legacy, the ratio to the legacy path, with its
 * interval.  Every entry carries a
 * "fencebench" object (scenario, section, path, point, params, units, limits)
 * for the console and CSV writers; compare.py ignores it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "src/fb_run.h"
#include "src/fb_util.h"

char *fb_results_name(const struct fb_params *point, const char *section, enum fb_path path)
{
	char *name = fb_xstrdup(point->scenario->name), *next;
	if (section && *section) {
		next = fb_xasprintf("%s/%s", name, section);
		free(name);
		name = next;
	}
	if (path != FB_PATH_NONE) {
		next = fb_xasprintf("%s/path:%s", name, fb_path_name(path));
		free(name);
		name = next;
	}
	for (size_t i = 0; i < point->n; i++) {
		if (!point->set[i])
			continue;
		char *v = fb_param_text(fb_scenario_param(point->scenario, i), point->v[i]);
		next = fb_xasprintf("%s/%s:%s", name, fb_scenario_param(point->scenario, i)->key, v);
		free(v);
		free(name);
		name = next;
	}
	return name;
}

/* Set key to a number; non-finite values are left out (JSON has no NaN). */
static void put_num(json_t *o, const char *key, double v)
{
	if (isfinite(v))
		json_object_set_new(o, key, json_real(v));
}

/* The sections of the runs, "" first, then in order of first appearance. */
static json_t *sections_of(struct fb_run *const *runs, size_t nruns)
{
	json_t *a = json_array(), *seen = json_object();
	for (size_t r = 0; r < nruns; r++) {
		for (size_t i = 0; i < runs[r]->nmetrics; i++) {
			const char *s = runs[r]->metrics[i].section;
			if (json_object_get(seen, s))
				continue;
			json_object_set_new(seen, s, json_true());
			if (*s)
				json_array_append_new(a, json_string(s));
			else
				json_array_insert_new(a, 0, json_string(""));
		}
	}
	if (!json_array_size(a))
		json_array_append_new(a, json_string(""));
	json_decref(seen);
	return a;
}

json_t *fb_results_params(const struct fb_params *point)
{
	json_t *o = json_object();
	for (size_t i = 0; i < point->n; i++) {
		char *v = fb_param_text(fb_scenario_param(point->scenario, i), point->v[i]);
		json_object_set_new(o, fb_scenario_param(point->scenario, i)->key, json_string(v));
		free(v);
	}
	return o;
}

/* "k=v,k=v" of the explicitly set parameters: a point's identity in a sweep. */
char *fb_results_point_key(const struct fb_params *point)
{
	char *key = fb_xstrdup(""), *next;
	for (size_t i = 0; i < point->n; i++) {
		if (!point->set[i])
			continue;
		char *v = fb_param_text(fb_scenario_param(point->scenario, i), point->v[i]);
		next = fb_xasprintf("%s%s%s=%s", key, *key ? "," : "", fb_scenario_param(point->scenario, i)->key, v);
		free(v);
		free(key);
		key = next;
	}
	return key;
}

static json_t *meta_object(struct fb_session *s, const struct fb_params *point, const char *section,
			   enum fb_path path, const struct fb_run *run)
{
	json_t *units = json_object(), *limits = json_object(), *absent = json_object();
	for (size_t i = 0; i < run->nmetrics; i++) {
		const struct fb_metric *m = &run->metrics[i];
		if (strcmp(m->section, section))
			continue;
		json_object_set_new(units, m->name, json_string(m->unit));
		if (m->limit != FB_LIMIT_NONE)
			json_object_set_new(limits, m->name, json_string(fb_limit_name(m->limit)));
		if (m->absent)
			json_object_set_new(absent, m->name, json_string(m->absent));
	}
	char *key = fb_results_point_key(point);
	json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o}", "scenario", point->scenario->name,
			      "section", section, "path", fb_path_field(path),
			      "point", key, "params", fb_results_params(point), "units", units, "limits", limits);
	if (json_object_size(absent))   /* the metrics that are null, and why ("not counted") */
		json_object_set_new(o, "absent", absent);
	else
		json_decref(absent);
	free(key);
	return o;
}

/* Counters of one section of one run, with M_limit and M_vs_limit beside latencies. */
static void put_counters(struct fb_session *s, json_t *e, const struct fb_run *run, const char *section)
{
	for (size_t i = 0; i < run->nmetrics; i++) {
		const struct fb_metric *m = &run->metrics[i];
		if (strcmp(m->section, section))
			continue;
		if (m->absent) {   /* null, never a 0: the reason is in fencebench.absent */
			json_object_set_new(e, m->name, json_null());
			continue;
		}
		put_num(e, m->name, m->value);
		double lim = fb_limits_value(&s->limits, m->limit);
		if (m->limit == FB_LIMIT_NONE || !isfinite(lim) || lim <= 0)
			continue;
		char key[300];
		snprintf(key, sizeof(key), "%s_limit", m->name);
		put_num(e, key, lim);
		snprintf(key, sizeof(key), "%s_vs_limit", m->name);
		put_num(e, key, m->value / lim);
	}
}

static json_t *iteration_entry(struct fb_session *s, const struct fb_params *point, const char *section,
			       enum fb_path path, const struct fb_run *run, unsigned reps)
{
	char *name = fb_results_name(point, section, path);
	double it = (double)run->iterations;
	json_t *e = json_pack("{s:s, s:s, s:s, s:i, s:i, s:i, s:I, s:f, s:f, s:s}",
			      "name", name, "run_name", name, "run_type", "iteration",
			      "repetitions", (int)reps, "repetition_index", (int)run->rep,
			      "threads", (int)(run->nroles ? run->nroles : 1),
			      "iterations", (json_int_t)run->iterations,
			      "real_time", (double)run->real_ns / it, "cpu_time", (double)run->cpu_ns / it,
			      "time_unit", "ns");
	put_counters(s, e, run, section);
	json_object_set_new(e, "fencebench", meta_object(s, point, section, path, run));
	free(name);
	return e;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Google Benchmark's statistics: mean, median, sample stddev, cv = stddev / mean. */
static double statistic(const char *agg, double *v, size_t n)
{
	double mean = 0, var = 0;
	for (size_t i = 0; i < n; i++)
		mean += v[i] / (double)n;
	if (!strcmp(agg, "mean"))
		return mean;
	if (!strcmp(agg, "median")) {
		qsort(v, n, sizeof(*v), cmp_double);
		return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	}
	for (size_t i = 0; i < n; i++)
		var += (v[i] - mean) * (v[i] - mean);
	double sd = n > 1 ? sqrt(var / (double)(n - 1)) : 0.0;
	if (!strcmp(agg, "stddev"))
		return sd;
	return mean != 0 ? sd / mean : 0.0;
}

/* key is null (absent) in every entry of it[0..n-1]. */
static bool absent_in_all(json_t *const *it, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!json_is_null(json_object_get(it[i], key)))
			return false;
	return true;
}

/* The aggregate `agg` of the iteration entries it[0..n-1] (same run_name). */
static json_t *aggregate_entry(json_t *const *it, size_t n, const char *agg)
{
	json_t *first = it[0], *e = json_object();
	const char *run_name = json_string_value(json_object_get(first, "run_name"));
	char *name = fb_xasprintf("%s_%s", run_name, agg);
	double *v = fb_xcalloc(n, sizeof(*v));
	json_object_set_new(e, "name", json_string(name));
	json_object_set_new(e, "run_name", json_string(run_name));
	json_object_set_new(e, "run_type", json_string("aggregate"));
	json_object_set(e, "repetitions", json_object_get(first, "repetitions"));
	json_object_set(e, "threads", json_object_get(first, "threads"));
	json_object_set_new(e, "aggregate_name", json_string(agg));
	json_object_set_new(e, "aggregate_unit", json_string(strcmp(agg, "cv") ? "time" : "percentage"));
	json_object_set_new(e, "iterations", json_integer((json_int_t)n));
	const char *key;
	json_t *val;
	json_object_foreach(first, key, val) {
		if (json_is_null(val) && absent_in_all(it, n, key)) {
			json_object_set_new(e, key, json_null());   /* no value in any repetition: none here */
			continue;
		}
		if (!json_is_number(val) || !strcmp(key, "repetitions") || !strcmp(key, "repetition_index") ||
		    !strcmp(key, "threads") || !strcmp(key, "iterations"))
			continue;
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			json_t *x = json_object_get(it[i], key);
			if (json_is_number(x))
				v[k++] = json_number_value(x);
		}
		if (k == n)
			put_num(e, key, statistic(agg, v, n));
	}
	json_object_set_new(e, "time_unit", json_string("ns"));
	json_object_set(e, "fencebench", json_object_get(first, "fencebench"));
	free(v);
	free(name);
	return e;
}

/*
 * Metrics defined across the two paths of one point (DESIGN.md, "Metrics, and how each is measured"):
 *   suppression = 1 - interrupts_per_signal(native) / interrupts_per_signal(legacy)
 * added to each native entry (an iteration, or the mean or median aggregate;
 * a ratio of two spreads means nothing) whose legacy twin (same section,
 * repetition or aggregate) has the metric too.
 */
static const struct {
	const char *name, *of, *unit;
} fb_cross_path[] = {
	{ "suppression", "interrupts_per_signal", "ratio" },
};

/* json_equal, with two absent values equal too. */
static bool same_json(json_t *a, json_t *b)
{
	return a == b || (a && b && json_equal(a, b));
}

static json_t *legacy_twin(json_t *out, json_t *e)
{
	json_t *me = json_object_get(e, "fencebench"), *o;
	size_t i;
	json_array_foreach(out, i, o) {
		json_t *mo = json_object_get(o, "fencebench");
		if (strcmp(json_string_value(json_object_get(mo, "path")), "legacy") ||
		    strcmp(json_string_value(json_object_get(mo, "section")),
			   json_string_value(json_object_get(me, "section"))) ||
		    !same_json(json_object_get(o, "run_type"), json_object_get(e, "run_type")) ||
		    !same_json(json_object_get(o, "repetition_index"), json_object_get(e, "repetition_index")) ||
		    !same_json(json_object_get(o, "aggregate_name"), json_object_get(e, "aggregate_name")))
			continue;
		return o;
	}
	return NULL;
}

/* 1 - ratio: its interval is 1 minus the ratio's (M_vs_legacy, src/fb_interval.c), reversed. */
static void cross_path_interval(json_t *e, const char *name, const char *of)
{
	char lo[300], hi[300];
	snprintf(lo, sizeof(lo), "%s_vs_legacy_ci_lo", of);
	snprintf(hi, sizeof(hi), "%s_vs_legacy_ci_hi", of);
	json_t *l = json_object_get(e, lo), *h = json_object_get(e, hi);
	if (!json_is_number(l) || !json_is_number(h))
		return;
	snprintf(lo, sizeof(lo), "%s_ci_lo", name);
	snprintf(hi, sizeof(hi), "%s_ci_hi", name);
	put_num(e, lo, 1.0 - json_number_value(h));
	put_num(e, hi, 1.0 - json_number_value(l));
	static const char *const says[] = { "level", "range" };   /* its coverage, and whether a range */
	for (size_t k = 0; k < 2; k++) {
		snprintf(lo, sizeof(lo), "%s_vs_legacy_ci_%s", of, says[k]);
		snprintf(hi, sizeof(hi), "%s_ci_%s", name, says[k]);
		json_t *v = json_object_get(e, lo);
		if (v)
			json_object_set(e, hi, v);
	}
}

static void add_cross_path(json_t *out)
{
	size_t i;
	json_t *e;
	json_array_foreach(out, i, e) {
		json_t *m = json_object_get(e, "fencebench");
		const char *agg = json_string_value(json_object_get(e, "aggregate_name"));
		if (strcmp(json_string_value(json_object_get(m, "path")), "native") ||
		    (agg && strcmp(agg, "mean") && strcmp(agg, "median")))
			continue;
		json_t *twin = legacy_twin(out, e);
		for (size_t k = 0; twin && k < sizeof(fb_cross_path) / sizeof(fb_cross_path[0]); k++) {
			json_t *n = json_object_get(e, fb_cross_path[k].of), *l = json_object_get(twin, fb_cross_path[k].of);
			if (!json_is_number(n) || !json_is_number(l) || json_number_value(l) == 0)
				continue;
			put_num(e, fb_cross_path[k].name, 1.0 - json_number_value(n) / json_number_value(l));
			cross_path_interval(e, fb_cross_path[k].name, fb_cross_path[k].of);
			json_object_set_new(json_object_get(m, "units"), fb_cross_path[k].name,
					    json_string(fb_cross_path[k].unit));
		}
	}
}

json_t *fb_results_entries(struct fb_session *s, const struct fb_params *point,
			   struct fb_run *const *runs, size_t npaths, unsigned reps)
{
	static const char *const aggs[] = { "mean", "median", "stddev", "cv" };
	json_t *out = json_array(), *sections = sections_of(runs, npaths * reps);
	json_t **it = fb_xcalloc(npaths * reps, sizeof(*it)), **agg = fb_xcalloc(npaths * 2, sizeof(*agg));
	size_t si;
	json_t *sec;
	json_array_foreach(sections, si, sec) {
		const char *section = json_string_value(sec);
		for (size_t p = 0; p < npaths; p++) {
			json_t **mine = it + p * reps;
			for (unsigned r = 0; r < reps; r++) {
				const struct fb_run *run = runs[p * reps + r];
				mine[r] = iteration_entry(s, point, section, run->path, run, reps);
				json_array_append(out, mine[r]);
			}
			for (size_t a = 0; reps > 1 && a < sizeof(aggs) / sizeof(aggs[0]); a++) {
				json_t *e = aggregate_entry(mine, reps, aggs[a]);
				if (a < 2)
					agg[p * 2 + a] = json_incref(e);
				json_array_append_new(out, e);
			}
		}
		/* after the aggregates: they are statistics of the values, not of the intervals */
		fb_interval_section(s, section, runs, npaths, reps, it, reps > 1 ? agg : NULL);
		for (size_t i = 0; i < npaths * reps; i++)
			json_decref(it[i]);
		for (size_t i = 0; reps > 1 && i < npaths * 2; i++)
			json_decref(agg[i]);
	}
	free(it);
	free(agg);
	json_decref(sections);
	add_cross_path(out);
	return out;
}
