/* src/fb_interval.c — the 95 % intervals of a point's entries.  Contract in fb_run.h
 * (fb_interval_section); the method in src/fb_boot.h.
 *
 *   iteration entry    M_ci_lo/_hi from the run's own replicates of M (a
 *                      percentile of a histogram: fb_run_hist); a plain metric
 *                      has none
 *   mean, median       two-level replicates over the repetitions (each picks
 *                      repetitions, then one replicate of each, or its value)
 *   native entries     M_vs_legacy = native / legacy of the same entry kind
 *                      (repetition r, or aggregate), its interval from the
 *                      ratio of the two paths' replicates (independent runs)
 *
 * A latency reported with fb_run_latency under the name and the very value of
 * a percentile that fb_run_hist reported in another section of the same run
 * (the headline's summary repeats its latency section) is the same number and
 * takes that percentile's replicates.
 */
#include <math.h>
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
	double *rep[2];         /* replicates of the mean and the median, or NULL */
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
		}
	}
}

static void table_free(struct table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->m[i].value);
		free(t->m[i].draws);
		free(t->m[i].rep[0]);
		free(t->m[i].rep[1]);
	}
	free(t->m);
}

/* key_ci_lo and key_ci_hi, when the interval exists. */
static void put_interval(json_t *e, const char *key, double lo, double hi)
{
	if (!isfinite(lo) || !isfinite(hi))
		return;
	char k[300];
	snprintf(k, sizeof(k), "%s_ci_lo", key);
	json_object_set_new(e, k, json_real(lo));
	snprintf(k, sizeof(k), "%s_ci_hi", key);
	json_object_set_new(e, k, json_real(hi));
}

static void iteration_intervals(struct table *t, json_t *const *it)
{
	for (size_t i = 0; i < t->n; i++) {
		for (unsigned r = 0; r < t->reps; r++) {
			if (!t->m[i].draws[r] || !isfinite(t->m[i].value[r]))
				continue;
			double lo, hi;
			fb_boot_interval_f(t->m[i].draws[r], NRES, FB_BOOT_LEVEL, &lo, &hi);
			put_interval(it[r], t->m[i].name, lo, hi);
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

/* Replicates of the mean and median over the repetitions; intervals on agg[0..1]. */
static void aggregate_intervals(struct table *t, json_t *const *agg, uint64_t seed, const char *section,
				const char *path)
{
	static const enum fb_boot_stat stat[2] = { FB_BOOT_MEAN, FB_BOOT_MEDIAN };
	for (size_t i = 0; i < t->n; i++) {
		struct series *m = &t->m[i];
		if (!complete(m, t->reps))
			continue;
		for (int a = 0; a < 2; a++) {
			struct fb_rng rng = { fb_boot_seed(seed, section, m->name, path, 1000 + (uint64_t)a) };
			double lo, hi;
			m->rep[a] = fb_xcalloc(NRES, sizeof(double));
			fb_boot_reps(m->draws, NRES, m->value, t->reps, stat[a], &rng, m->rep[a], NRES);
			fb_boot_interval(m->rep[a], NRES, FB_BOOT_LEVEL, &lo, &hi);
			put_interval(agg[a], m->name, lo, hi);
		}
	}
}

/* e[name_vs_legacy] = vn / vl with the interval of the replicates' ratios;
 * float replicates (fn, fl) or double ones (dn, dl). */
static void put_ratio(json_t *e, const char *name, double vn, double vl, const float *fn, const float *fl,
		      const double *dn, const double *dl)
{
	if (!isfinite(vn) || !isfinite(vl) || vl == 0)
		return;
	double ratio[NRES], lo, hi;
	for (size_t j = 0; j < NRES; j++) {
		double n = fn ? fn[j] : dn[j], l = fl ? fl[j] : dl[j];
		ratio[j] = l != 0 ? n / l : NAN;
	}
	fb_boot_interval(ratio, NRES, FB_BOOT_LEVEL, &lo, &hi);
	if (!isfinite(lo))
		return;
	char key[300];
	snprintf(key, sizeof(key), "%s_vs_legacy", name);
	json_object_set_new(e, key, json_real(vn / vl));
	put_interval(e, key, lo, hi);
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
				put_ratio(it_n[r], n->name, n->value[r], l->value[r], n->draws[r], l->draws[r],
					  NULL, NULL);
		for (int a = 0; agg_n && a < 2; a++)
			if (n->rep[a] && l->rep[a])
				put_ratio(agg_n[a], n->name, num(agg_n[a], n->name), num(agg_l[a], n->name), NULL,
					  NULL, n->rep[a], l->rep[a]);
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
			aggregate_intervals(&t[p], agg + p * 2, s->opts->seed, section, fb_path_name(runs[p * reps]->path));
	}
	if (npaths == 2 && runs[0]->path == FB_PATH_NATIVE && runs[reps]->path == FB_PATH_LEGACY)
		ratios(&t[0], &t[1], it, agg, agg ? agg + 2 : NULL);
	for (size_t p = 0; p < npaths && p < 2; p++)
		table_free(&t[p]);
}
