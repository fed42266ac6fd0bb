/* src/fb_interval.c — the 95 % intervals of a point's entries.  Contract in fb_run.h
 * (fb_interval_section); the method in src/fb_boot.h.
 *
 *   iteration entry    M_ci_lo/_hi from the run's own replicates of M (a
 *                      percentile of a histogram: fb_run_hist): the sampling
 *                      noise of that run only; a plain metric has none
 *   mean, median       from the repetitions' values alone (the top level: a
 *                      repetition's value already holds its run's noise): the
 *                      t interval of the mean, the order-statistic interval of
 *                      the median, or below FB_CI_MIN_REPS the repetitions'
 *                      range (fb_ci_median); M_ci_level says the coverage,
 *                      M_ci_range = R marks the range of R repetitions
 *   native entries     M_vs_legacy = native / legacy of the same entry kind
 *                      (repetition r, or aggregate), its interval from the
 *                      ratio of the two paths' replicates (a repetition) or
 *                      from the two aggregates' intervals (fb_ci_ratio)
 *
 * Every interval of a histogram's percentile is at least its bucket wide on
 * each side (fb_ci_floor): no interval claims more than the histogram resolves.
 *
 * A latency reported with fb_run_latency under the name and the very value of
 * a percentile that fb_run_hist reported in another section of the same run
 * (the headline's summary repeats its latency section) is the same number and
 * takes that percentile's replicates.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "src/fb_boot.h"
#include "src/fb_run.h"
#include "src/fb_util.h"

#define NRES FB_BOOT_RESAMPLES

/* One metric of one path over the repetitions. */
struct series {
	const char *name;
	double *value;          /* [reps]; NAN where a repetition lacks it */
	const float **draws;    /* [reps]; NULL where it has no replicates */
	bool bucketed;          /* a histogram's percentile: floored at its bucket */
	struct fb_ci ci[2];     /* of the mean and the median aggregates */
};

struct table {
	struct series *m;
	size_t n;
	unsigned reps;
};

static const float *draws_of(const struct fb_run *run, const struct fb_metric *m)
{
	if (m->draws || strcmp(m->unit, "ns"))
		return m->draws;
	for (size_t i = 0; i < run->nmetrics; i++) {
		const struct fb_metric *o = &run->metrics[i];
		if (o->draws && o != m && !strcmp(o->name, m->name) && o->value == m->value)
			return o->draws;
	}
	return NULL;
}

static struct series *series_of(struct table *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->m[i].name, name))
			return &t->m[i];
	return NULL;
}

static struct series *series_add(struct table *t, const char *name)
{
	struct series *m = series_of(t, name);
	if (m)
		return m;
	t->m = fb_xrealloc(t->m, (t->n + 1) * sizeof(*t->m));
	m = &t->m[t->n++];
	memset(m, 0, sizeof(*m));
	m->name = name;
	m->value = fb_xcalloc(t->reps, sizeof(*m->value));
	m->draws = fb_xcalloc(t->reps, sizeof(*m->draws));
	for (unsigned r = 0; r < t->reps; r++)
		m->value[r] = NAN;
	return m;
}

static double num(json_t *e, const char *key)
{
	json_t *v = json_object_get(e, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The metrics of section over the repetitions of one path (runs[0..reps-1],
 * their entries it[0..reps-1]), and each entry's real and CPU time. */
static void table_of(struct table *t, struct fb_run *const *runs, json_t *const *it, unsigned reps,
		     const char *section)
{
	static const char *const times[] = { "real_time", "cpu_time" };
	memset(t, 0, sizeof(*t));
	t->reps = reps;
	for (unsigned r = 0; r < reps; r++) {
		for (size_t k = 0; k < 2; k++)
			series_add(t, times[k])->value[r] = num(it[r], times[k]);
		for (size_t i = 0; i < runs[r]->nmetrics; i++) {
			const struct fb_metric *m = &runs[r]->metrics[i];
			if (strcmp(m->section, section))
				continue;
			struct series *sr = series_add(t, m->name);
			sr->value[r] = m->value;
			sr->draws[r] = draws_of(runs[r], m);
			sr->bucketed |= sr->draws[r] != NULL;
		}
	}
}

static void table_free(struct table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->m[i].value);
		free(t->m[i].draws);
	}
	free(t->m);
}

/* key_ci_lo and key_ci_hi, when the interval exists; key_ci_level, its
 * coverage; key_ci_range = reps when it is the range of reps repetitions. */
static void put_ci(json_t *e, const char *key, struct fb_ci ci, unsigned reps)
{
	if (ci.kind == FB_CI_NONE || !isfinite(ci.lo) || !isfinite(ci.hi))
		return;
	char k[300];
	snprintf(k, sizeof(k), "%s_ci_lo", key);
	json_object_set_new(e, k, json_real(ci.lo));
	snprintf(k, sizeof(k), "%s_ci_hi", key);
	json_object_set_new(e, k, json_real(ci.hi));
	snprintf(k, sizeof(k), "%s_ci_level", key);
	json_object_set_new(e, k, json_real(ci.level));
	snprintf(k, sizeof(k), "%s_ci_range", key);
	if (ci.kind == FB_CI_RANGE)
		json_object_set_new(e, k, json_integer(reps));
}

/* A run's own interval of a percentile: its replicates', floored at its bucket. */
static struct fb_ci run_ci(const float *draws, double v)
{
	struct fb_ci ci = { FB_CI_INTERVAL, NAN, NAN, FB_BOOT_LEVEL };
	fb_boot_interval_f(draws, NRES, FB_BOOT_LEVEL, &ci.lo, &ci.hi);
	if (!isfinite(ci.lo))
		ci.kind = FB_CI_NONE;
	fb_ci_floor(&ci, v, fb_ci_bucket_width(v));
	return ci;
}

static void iteration_intervals(struct table *t, json_t *const *it)
{
	for (size_t i = 0; i < t->n; i++) {
		for (unsigned r = 0; r < t->reps; r++) {
			if (!t->m[i].draws[r] || !isfinite(t->m[i].value[r]))
				continue;
			put_ci(it[r], t->m[i].name, run_ci(t->m[i].draws[r], t->m[i].value[r]), 1);
		}
	}
}

static bool complete(const struct series *m, unsigned reps)
{
	for (unsigned r = 0; r < reps; r++)
		if (!isfinite(m->value[r]))
			return false;
	return true;
}

/* The mean's and the median's intervals over the repetitions, on agg[0..1]. */
static void aggregate_intervals(struct table *t, json_t *const *agg)
{
	for (size_t i = 0; i < t->n; i++) {
		struct series *m = &t->m[i];
		m->ci[0] = m->ci[1] = (struct fb_ci){ FB_CI_NONE, NAN, NAN, NAN };
		if (!complete(m, t->reps))
			continue;
		m->ci[0] = fb_ci_mean(m->value, t->reps);
		m->ci[1] = fb_ci_median(m->value, t->reps);
		for (int a = 0; a < 2; a++) {
			double v = num(agg[a], m->name);
			fb_ci_floor(&m->ci[a], v, m->bucketed ? fb_ci_bucket_width(v) : 0);
			put_ci(agg[a], m->name, m->ci[a], t->reps);
		}
	}
}

static void put_ratio(json_t *e, const char *name, double vn, double vl, struct fb_ci ci, unsigned reps)
{
	if (!isfinite(vn) || !isfinite(vl) || vl == 0 || ci.kind == FB_CI_NONE)
		return;
	char key[300];
	snprintf(key, sizeof(key), "%s_vs_legacy", name);
	json_object_set_new(e, key, json_real(vn / vl));
	put_ci(e, key, ci, reps);
}

/* One repetition's native / legacy: the interval of its replicates' ratios,
 * never narrower than the two values' buckets allow. */
static struct fb_ci run_ratio_ci(double vn, double vl, const float *fn, const float *fl)
{
	double ratio[NRES];
	struct fb_ci ci = { FB_CI_INTERVAL, NAN, NAN, FB_BOOT_LEVEL };
	for (size_t j = 0; j < NRES; j++)
		ratio[j] = fl[j] != 0 ? (double)fn[j] / fl[j] : NAN;
	fb_boot_interval(ratio, NRES, FB_BOOT_LEVEL, &ci.lo, &ci.hi);
	if (!isfinite(ci.lo) || !(vn > 0) || !(vl > 0))
		return (struct fb_ci){ FB_CI_NONE, NAN, NAN, NAN };
	struct fb_ci n = { FB_CI_INTERVAL, vn, vn, FB_BOOT_LEVEL }, l = n;
	l.lo = l.hi = vl;
	fb_ci_floor(&n, vn, fb_ci_bucket_width(vn));
	fb_ci_floor(&l, vl, fb_ci_bucket_width(vl));
	struct fb_ci fl_ci = fb_ci_ratio(vn, n, vl, l);   /* what the buckets alone leave open */
	if (fl_ci.kind != FB_CI_NONE) {
		ci.lo = fmin(ci.lo, fl_ci.lo);
		ci.hi = fmax(ci.hi, fl_ci.hi);
	}
	return ci;
}

static void ratios(struct table *tn, struct table *tl, json_t *const *it_n, json_t *const *agg_n,
		   json_t *const *agg_l)
{
	for (size_t i = 0; i < tn->n; i++) {
		struct series *n = &tn->m[i], *l = series_of(tl, n->name);
		if (!l)
			continue;
		for (unsigned r = 0; r < tn->reps; r++)
			if (n->draws[r] && l->draws[r])
				put_ratio(it_n[r], n->name, n->value[r], l->value[r],
					  run_ratio_ci(n->value[r], l->value[r], n->draws[r], l->draws[r]), 1);
		for (int a = 0; agg_n && a < 2; a++) {
			double vn = num(agg_n[a], n->name), vl = num(agg_l[a], n->name);
			put_ratio(agg_n[a], n->name, vn, vl, fb_ci_ratio(vn, n->ci[a], vl, l->ci[a]), tn->reps);
		}
	}
}

void fb_interval_section(struct fb_session *s, const char *section, struct fb_run *const *runs, size_t npaths,
			 unsigned reps, json_t *const *it, json_t *const *agg)
{
	struct table t[2];
	for (size_t p = 0; p < npaths && p < 2; p++) {
		table_of(&t[p], runs + p * reps, it + p * reps, reps, section);
		iteration_intervals(&t[p], it + p * reps);
		if (agg && reps > 1)
			aggregate_intervals(&t[p], agg + p * 2);
	}
	if (npaths == 2 && runs[0]->path == FB_PATH_NATIVE && runs[reps]->path == FB_PATH_LEGACY)
		ratios(&t[0], &t[1], it, agg, agg ? agg + 2 : NULL);
	for (size_t p = 0; p < npaths && p < 2; p++)
		table_free(&t[p]);
}
