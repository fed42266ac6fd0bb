/* src/fb_agree.c — the verdicts of two estimates of one quantity
 * (fb_run_agreement, contract in src/fb_scenario.h; fb_agree_point in
 * src/fb_run.h).
 *
 * The intervals are the ones src/fb_interval.c already put on the mean
 * aggregate (M_ci_lo, M_ci_hi: Student's t over the repetitions, floored at
 * the value's resolution), read back from the point's entries, so a verdict
 * and the interval printed beside it are always the same numbers; the
 * verdict is fb_ci_agree's (src/fb_boot.h: the intervals overlap or not).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/fb_boot.h"
#include "src/fb_run.h"
#include "src/fb_util.h"

static const char *str_at(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));
	return v ? v : "";
}

/* The mean aggregate of section and path among entries, or NULL. */
static json_t *mean_entry(json_t *entries, const char *section, enum fb_path path)
{
	size_t i;
	json_t *e;
	json_array_foreach(entries, i, e) {
		json_t *m = json_object_get(e, "fencebench");
		if (!strcmp(str_at(e, "aggregate_name"), "mean") && !strcmp(str_at(m, "section"), section) &&
		    !strcmp(str_at(m, "path"), fb_path_field(path)))   /* as fb_results writes it */
			return e;
	}
	return NULL;
}

static double num_at(json_t *e, const char *key)
{
	json_t *v = json_object_get(e, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Metric m of the mean aggregate e with its interval (kind NONE without one). */
static struct fb_ci ci_of(json_t *e, const char *m, double *value)
{
	char lo[300], hi[300], range[300];
	snprintf(lo, sizeof(lo), "%s_ci_lo", m);
	snprintf(hi, sizeof(hi), "%s_ci_hi", m);
	snprintf(range, sizeof(range), "%s_ci_range", m);
	*value = num_at(e, m);
	struct fb_ci ci = { json_object_get(e, range) ? FB_CI_RANGE : FB_CI_INTERVAL, num_at(e, lo), num_at(e, hi),
			    FB_BOOT_LEVEL };
	if (!isfinite(*value) || !isfinite(ci.lo) || !isfinite(ci.hi))
		ci.kind = FB_CI_NONE;
	return ci;
}

/* What the note calls metric m of agreement name: "device" for
 * "frames_per_s_ratio_device" of "frames_per_s_ratio", else m itself. */
static const char *label(const char *name, const char *m)
{
	size_t n = strlen(name);
	return !strncmp(m, name, n) && m[n] == '_' && m[n + 1] ? m + n + 1 : m;
}

static char *side(const char *name, const char *m, double v, struct fb_ci ci)
{
	if (ci.kind == FB_CI_NONE)
		return fb_xasprintf("%s %.3g (no interval)", label(name, m), v);
	return fb_xasprintf("%s %.3g [%.3g, %.3g]", label(name, m), v, ci.lo, ci.hi);
}

/* "section/path:P name" (and " at point" in a sweep): what every note starts with. */
static char *subject(struct fb_session *s, const struct fb_params *point, const struct fb_agreement *g,
		     enum fb_path path)
{
	char *key = s->opts->grid.n ? fb_results_point_key(point) : fb_xstrdup("");
	const char *pn = fb_path_field(path);
	char *out = fb_xasprintf("%s%s%s%s%s%s%s%s", g->section, *g->section && *pn ? "/" : "", *pn ? "path:" : "", pn,
				 *g->section || *pn ? " " : "", g->name, *key ? " at " : "", key);
	free(key);
	return out;
}

static void one(struct fb_session *s, const struct fb_params *point, const struct fb_agreement *g,
		enum fb_path path, unsigned reps, json_t *entries)
{
	char *subj = subject(s, point, g, path), *note = NULL;
	json_t *e = reps > 1 ? mean_entry(entries, g->section, path) : NULL;
	if (!e) {
		note = fb_xasprintf("%s: one repetition, so no 95 %% interval and no verdict (--repetitions 2 or "
				    "more)", subj);
	} else {
		double va, vb;
		struct fb_ci a = ci_of(e, g->a, &va), b = ci_of(e, g->b, &vb);
		enum fb_agree v = fb_ci_agree(a, b);
		char key[300];
		snprintf(key, sizeof(key), "%s_agree", g->name);
		if (v != FB_AGREE_NONE)
			json_object_set_new(e, key, json_integer(v == FB_AGREE));
		char *sa = side(g->name, g->a, va, a), *sb = side(g->name, g->b, vb, b);
		note = fb_xasprintf("%s: %s, %s (95 %% intervals of the mean of %u repetitions): %s", subj, sa, sb,
				    reps, v == FB_AGREE ? "agree (the intervals overlap)"
				    : v == FB_DISAGREE ? "DISAGREE (further apart than the intervals)"
				    : "no verdict (a side has no interval)");
		free(sa);
		free(sb);
	}
	fb_session_note(s, note);
	free(note);
	free(subj);
}

static bool seen_before(struct fb_run *const *runs, size_t upto, const struct fb_agreement *g)
{
	for (size_t r = 0; r < upto; r++)
		for (size_t i = 0; i < runs[r]->nagreements; i++)
			if (!strcmp(runs[r]->agreements[i].section, g->section) &&
			    !strcmp(runs[r]->agreements[i].name, g->name))
				return true;
	return false;
}

void fb_agree_point(struct fb_session *s, const struct fb_params *point, struct fb_run *const *runs, size_t npaths,
		    unsigned reps, json_t *entries)
{
	for (size_t p = 0; p < npaths; p++) {
		struct fb_run *const *mine = runs + p * reps;
		for (unsigned r = 0; r < reps; r++)
			for (size_t i = 0; i < mine[r]->nagreements; i++)
				if (!seen_before(mine, r, &mine[r]->agreements[i]))
					one(s, point, &mine[r]->agreements[i], mine[r]->path, reps, entries);
	}
}
