/* src/fb_output.c — console, JSON and CSV writers.  Contract in fb_output.h. */
#include "src/fb_output.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/fb_boot.h"
#include "src/fb_util.h"

/* ---- small accessors ---- */

static const char *str_at(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

static json_t *meta(json_t *entry) { return json_object_get(entry, "fencebench"); }

static double num_at(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Why metric key of entry e has no value ("not counted"), or NULL when it has one. */
static const char *absent_at(json_t *e, const char *key)
{
	if (!json_is_null(json_object_get(e, key)))
		return NULL;
	const char *why = json_string_value(json_object_get(json_object_get(meta(e), "absent"), key));
	return why ? why : "not counted";
}

/* The entry that stands for a section × path: the iteration when there is
 * one repetition, the "mean" aggregate otherwise. */
static bool representative(json_t *e)
{
	if (!strcmp(str_at(e, "run_type"), "aggregate"))
		return !strcmp(str_at(e, "aggregate_name"), "mean");
	return json_integer_value(json_object_get(e, "repetitions")) <= 1;
}

/* ---- console ---- */

static void fmt_ns(double ns, char *buf, size_t len)
{
	if (!isfinite(ns))
		snprintf(buf, len, "-");
	else if (fabs(ns) < 1e3)
		snprintf(buf, len, "%.0f ns", ns);
	else if (fabs(ns) < 1e6)
		snprintf(buf, len, "%.2f us", ns / 1e3);
	else if (fabs(ns) < 1e9)
		snprintf(buf, len, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.3f s", ns / 1e9);
}

void fb_output_value(double v, const char *unit, char *buf, size_t len)
{
	if (!strcmp(unit, "ns"))
		fmt_ns(v, buf, len);
	else if (!isfinite(v))
		snprintf(buf, len, "-");
	else if (!*unit)
		snprintf(buf, len, "%.6g", v);
	else
		snprintf(buf, len, "%.6g %s", v, unit);
}

/* A relative amount as a percentage: one decimal below 10 %. */
static void percent(double w, char *buf, size_t len)
{
	snprintf(buf, len, w < 0.1 ? "%.1f%%" : "%.0f%%", 100.0 * w);
}

void fb_output_interval(double v, double lo, double hi, char *buf, size_t len)
{
	double w = fb_boot_rel_halfwidth(v, lo, hi);
	buf[0] = '\0';
	if (!isfinite(w) || w <= 0)   /* 0: the same in every repetition (a count) */
		return;
	double up = (hi - v) / fabs(v), down = (v - lo) / fabs(v);
	char a[16], b[16];
	if (w >= 0.1 && w > 2 * (up < down ? up : down)) {   /* lopsided: a tail's, say so */
		percent(up > 0 ? up : 0, a, sizeof(a));
		percent(down > 0 ? down : 0, b, sizeof(b));
		snprintf(buf, len, " +%s/-%s", a, b);
		return;
	}
	percent(w, a, sizeof(a));
	snprintf(buf, len, " ±%s", a);
}

void fb_output_span(double v, double lo, double hi, double runs, const char *unit, char *buf, size_t len)
{
	if (!(runs >= 2) || !isfinite(lo) || !isfinite(hi)) {
		fb_output_interval(v, lo, hi, buf, len);
		return;
	}
	if ((!unit || !*unit) && lo == hi) {
		snprintf(buf, len, " (all %.0f runs)", runs);
		return;
	}
	if (!unit || !*unit) {   /* a ratio: relative, and said to come from ranges */
		char pm[48];
		fb_output_interval(v, lo, hi, pm, sizeof(pm));
		snprintf(buf, len, "%s (%.0f-run ranges)", pm, runs);
		return;
	}
	char a[48], b[48];
	fb_output_value(lo, unit, a, sizeof(a));
	fb_output_value(hi, unit, b, sizeof(b));
	if (lo == hi)
		snprintf(buf, len, " (%.0f runs: all %s)", runs, a);
	else
		snprintf(buf, len, " (%.0f runs: %s–%s)", runs, a, b);
}

void fb_output_plus_minus(json_t *e, const char *key, char *buf, size_t len)
{
	char lo[300], hi[300], range[300];
	snprintf(lo, sizeof(lo), "%s_ci_lo", key);
	snprintf(hi, sizeof(hi), "%s_ci_hi", key);
	snprintf(range, sizeof(range), "%s_ci_range", key);
	fb_output_span(num_at(e, key), num_at(e, lo), num_at(e, hi), num_at(e, range),
		       str_at(json_object_get(meta(e), "units"), key), buf, len);
}

/* One cell: the value, "±4.1%" (its 95 % interval), "(x12.3 futex-wake)" beside a limit. */
static void cell(json_t *e, const char *metric, char *buf, size_t len)
{
	if (!e || !json_object_get(e, metric)) {
		snprintf(buf, len, "-");
		return;
	}
	const char *unit = str_at(json_object_get(meta(e), "units"), metric);
	char pm[96];
	size_t used;
	if (absent_at(e, metric)) {   /* as perf stat prints it */
		snprintf(buf, len, "<%s>", absent_at(e, metric));
		return;
	}
	fb_output_value(num_at(e, metric), unit, buf, len);
	fb_output_plus_minus(e, metric, pm, sizeof(pm));
	used = strlen(buf);
	used += (size_t)snprintf(buf + used, len - used, "%s", pm);
	char key[300];
	snprintf(key, sizeof(key), "%s_vs_limit", metric);
	double ratio = num_at(e, key);
	if (isfinite(ratio) && used < len)
		snprintf(buf + used, len - used, " (x%.3g %s)", ratio,
			 str_at(json_object_get(meta(e), "limits"), metric));
}

/* The native/legacy cell: the ratio with its interval when the native entry
 * has one (M_vs_legacy), "no clear difference" when that interval holds 1. */
static void ratio_cell(json_t *native, json_t *legacy, const char *metric, char *buf, size_t len)
{
	char key[300], lo[320], hi[320], pm[96];
	snprintf(key, sizeof(key), "%s_vs_legacy", metric);
	snprintf(lo, sizeof(lo), "%s_ci_lo", key);
	snprintf(hi, sizeof(hi), "%s_ci_hi", key);
	double r = num_at(native, key);
	if (!isfinite(r)) {
		double a = num_at(native, metric), b = num_at(legacy, metric);
		if (isfinite(a) && isfinite(b) && b != 0)
			snprintf(buf, len, "%.3g", a / b);
		return;
	}
	fb_output_plus_minus(native, key, pm, sizeof(pm));
	double l = num_at(native, lo), h = num_at(native, hi);
	bool clear = !(l <= 1.0 && h >= 1.0) || l == h;   /* l == h: exactly the same, not noise */
	snprintf(buf, len, "%.3g%s%s", r, pm, clear ? "" : " (no clear difference)");
}

struct table {
	json_t *rows;          /* metric names, in order */
	json_t *col[2];
	size_t ncols;
	const char *head[2];
};

static void add_rows(struct table *t, json_t *e)
{
	const char *k;
	json_t *v;
	json_object_foreach(json_object_get(meta(e), "units"), k, v) {
		size_t i;
		json_t *r;
		bool seen = false;
		json_array_foreach(t->rows, i, r)
			seen = seen || !strcmp(json_string_value(r), k);
		if (!seen)
			json_array_append_new(t->rows, json_string(k));
	}
}

int fb_output_width(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static void print_table(FILE *f, struct table *t)
{
	size_t nrows = json_array_size(t->rows) + 2;
	char (*cells)[4][160] = fb_xcalloc(nrows, sizeof(*cells));
	int w[4] = { 6, 0, 0, 0 };
	size_t ncell = t->ncols + 1 + (t->ncols == 2);
	snprintf(cells[0][0], 160, "metric");
	for (size_t c = 0; c < t->ncols; c++)
		snprintf(cells[0][c + 1], 160, "%s", t->head[c]);
	if (t->ncols == 2)
		snprintf(cells[0][3], 160, "%s/%s", t->head[0], t->head[1]);
	snprintf(cells[1][0], 160, "time/iteration");
	for (size_t c = 0; c < t->ncols; c++) {
		char pm[32];
		fmt_ns(num_at(t->col[c], "real_time"), cells[1][c + 1], 120);
		fb_output_plus_minus(t->col[c], "real_time", pm, sizeof(pm));
		strcat(cells[1][c + 1], pm);
	}
	for (size_t r = 2; r < nrows; r++) {
		const char *m = json_string_value(json_array_get(t->rows, r - 2));
		snprintf(cells[r][0], 160, "%s", m);
		for (size_t c = 0; c < t->ncols; c++)
			cell(t->col[c], m, cells[r][c + 1], 160);
		if (t->ncols == 2)
			ratio_cell(t->col[0], t->col[1], m, cells[r][3], 160);
	}
	for (size_t r = 0; r < nrows; r++)
		for (size_t c = 0; c < ncell; c++)
			if (fb_output_width(cells[r][c]) > w[c])
				w[c] = fb_output_width(cells[r][c]);
	for (size_t r = 0; r < nrows; r++) {
		for (size_t c = 0; c < ncell; c++)
			fprintf(f, c ? "  %s%*s" : "%s%*s", cells[r][c], w[c] - fb_output_width(cells[r][c]), "");
		fputc('\n', f);
		if (!r) {
			int total = w[0];
			for (size_t c = 1; c < ncell; c++)
				total += 2 + w[c];
			for (int i = 0; i < total; i++)
				fputc('-', f);
			fputc('\n', f);
		}
	}
	free(cells);
}

/* Entries of one section, in order: the representative entry per path. */
static void print_section(FILE *f, json_t *entries, const char *section, const char *point_key)
{
	struct table t = { .rows = json_array() };
	size_t i;
	json_t *e;
	const char *scenario = "";
	json_array_foreach(entries, i, e) {
		json_t *m = meta(e);
		if (strcmp(str_at(m, "section"), section))
			continue;
		scenario = str_at(m, "scenario");
		const char *path = str_at(m, "path");
		size_t c = 0;
		while (c < t.ncols && strcmp(t.head[c], *path ? path : "value"))
			c++;
		if (c == t.ncols && t.ncols < 2)
			t.head[t.ncols++] = *path ? path : "value";
		if (c >= 2)
			continue;
		if (representative(e)) {
			t.col[c] = e;
			add_rows(&t, e);
		}
	}
	fprintf(f, "\n== %s%s%s%s%s ==\n", scenario, *section ? "/" : "", section, *point_key ? "  " : "", point_key);
	print_table(f, &t);
	json_decref(t.rows);
}

char *fb_output_console_point(json_t *point)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_t *entries = json_object_get(point, "entries"), *seen = json_object(), *e;
	size_t i;
	json_array_foreach(entries, i, e) {
		const char *section = str_at(meta(e), "section");
		if (json_object_get(seen, section))
			continue;
		json_object_set_new(seen, section, json_true());
		print_section(f, entries, section, str_at(point, "key"));
	}
	json_decref(seen);
	fclose(f);
	return buf;
}

static void print_limits(FILE *f, json_t *l)
{
	char a[32], b[32], c[32], m[32];
	fmt_ns(num_at(l, "cacheline_rtt_ns"), a, sizeof(a));
	fmt_ns(num_at(l, "cacheline_msg_ns"), m, sizeof(m));
	fmt_ns(num_at(l, "syscall_ns"), b, sizeof(b));
	fmt_ns(num_at(l, "futex_wake_ns"), c, sizeof(c));
	fprintf(f, "limits: cache-line round trip %s, message one way %s", a, m);
	if (json_integer_value(json_object_get(l, "cpu_b")) >= 0)
		fprintf(f, " (CPUs %lld<->%lld)", json_integer_value(json_object_get(l, "cpu_a")),
			json_integer_value(json_object_get(l, "cpu_b")));
	fprintf(f, ", syscall %s, futex wake-to-run %s\n", b, c);
}

char *fb_output_console_context(json_t *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_t *perf = json_object_get(c, "perf"), *v, *params = json_object_get(c, "parameters");
	size_t i;
	const char *k;
	fprintf(f, "fencebench %s (git %s), scenario %s\n", str_at(c, "fencebench_version"), str_at(c, "git_rev"),
		str_at(c, "scenario"));
	fprintf(f, "%s on %s: %lld x %s (%lld MHz), running on CPUs %s\n", str_at(c, "date"), str_at(c, "host_name"),
		json_integer_value(json_object_get(c, "num_cpus")), str_at(c, "cpu_model"),
		json_integer_value(json_object_get(c, "mhz_per_cpu")), str_at(c, "cpus"));
	fprintf(f, "kernel: %s\n", str_at(c, "kernel"));
	fprintf(f, "build: %s, %s\n", str_at(c, "build_type"), str_at(c, "build_flags"));
	fprintf(f, "perf events:");
	json_array_foreach(json_object_get(perf, "events"), i, v)
		fprintf(f, "%s%s", i ? "," : " ", json_string_value(v));
	if (json_object_get(perf, "note"))
		fprintf(f, " (%s)", str_at(perf, "note"));
	fputc('\n', f);
	print_limits(f, json_object_get(c, "limits"));
	json_t *seed = json_object_get(c, "seed");
	if (json_is_string(seed))
		fprintf(f, "run: paths %s, seed %s, ", str_at(c, "paths"), json_string_value(seed));
	else
		fprintf(f, "run: paths %s, seed %lld, ", str_at(c, "paths"), json_integer_value(seed));
	if (json_integer_value(json_object_get(c, "iterations")))
		fprintf(f, "%lld iterations", json_integer_value(json_object_get(c, "iterations")));
	else
		fprintf(f, "%g s", num_at(c, "duration_s"));
	fprintf(f, ", warm-up %g s, %lld repetition(s)\n", num_at(c, "warmup_s"),
		json_integer_value(json_object_get(c, "repetitions")));
	fprintf(f, "parameters:");
	json_object_foreach(params, k, v)
		fprintf(f, " %s=%s", k, json_string_value(v));
	json_object_foreach(json_object_get(c, "grid"), k, v) {
		fprintf(f, " %s=", k);
		json_t *x;
		json_array_foreach(v, i, x)
			fprintf(f, "%s%s", i ? "," : "{", json_string_value(x));
		fprintf(f, "}");
	}
	fputc('\n', f);
	json_array_foreach(json_object_get(c, "warnings"), i, v)
		fprintf(f, "***WARNING*** %s\n", json_string_value(v));
	json_array_foreach(json_object_get(c, "notes"), i, v)
		if (strcmp(json_string_value(v), str_at(perf, "note")))   /* already on the perf line */
			fprintf(f, "note: %s\n", json_string_value(v));
	fclose(f);
	return buf;
}

static char *render_console(json_t *context, json_t *points)
{
	char *buf = NULL, *part;
	size_t len = 0, i;
	json_t *p;
	FILE *f = open_memstream(&buf, &len);
	part = fb_output_console_context(context);
	fputs(part, f);
	free(part);
	json_array_foreach(points, i, p) {
		part = fb_output_console_point(p);
		fputs(part, f);
		free(part);
	}
	fclose(f);
	return buf;
}

/* ---- JSON ---- */

static char *render_json(json_t *context, json_t *points)
{
	json_t *all = json_array(), *families = json_object(), *p, *e;
	size_t i, k;
	json_array_foreach(points, i, p) {
		json_array_foreach(json_object_get(p, "entries"), k, e) {
			const char *rn = str_at(e, "run_name");
			json_t *fam = json_object_get(families, rn);
			if (!fam) {
				fam = json_integer((json_int_t)json_object_size(families));
				json_object_set_new(families, rn, fam);
			}
			json_t *copy = json_copy(e), *m = json_copy(meta(e));
			json_object_set(m, "point_index", json_object_get(p, "index"));   /* fencebench merge orders by it */
			json_object_set_new(copy, "fencebench", m);
			json_object_set(copy, "family_index", fam);
			json_object_set_new(copy, "per_family_instance_index", json_integer(0));
			json_array_append_new(all, copy);
		}
	}
	json_t *doc = json_pack("{s:O, s:o}", "context", context, "benchmarks", all);
	char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	char *out = fb_xasprintf("%s\n", s);
	free(s);
	json_decref(doc);
	json_decref(families);
	return out;
}

/* ---- CSV ---- */

static bool is_gb_field(const char *k)
{
	static const char *const fields[] = {
		"name", "run_name", "run_type", "repetitions", "repetition_index", "threads", "iterations",
		"real_time", "cpu_time", "time_unit", "aggregate_name", "aggregate_unit", "fencebench",
		"family_index", "per_family_instance_index", NULL,
	};
	for (size_t i = 0; fields[i]; i++)
		if (!strcmp(k, fields[i]))
			return true;
	return false;
}

static void csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void csv_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.10g", v);
}

/* Columns: parameter keys and counters, in order of first appearance. */
static void csv_columns(json_t *points, json_t *params, json_t *counters)
{
	size_t i, k;
	json_t *p, *e, *v;
	const char *key;
	json_array_foreach(points, i, p) {
		json_array_foreach(json_object_get(p, "entries"), k, e) {
			if (!representative(e))
				continue;
			json_object_foreach(json_object_get(meta(e), "params"), key, v)
				json_object_set_new(params, key, json_true());
			json_object_foreach(e, key, v)
				if (!is_gb_field(key) && (json_is_number(v) || json_is_null(v)))
					json_object_set_new(counters, key, json_true());
		}
	}
}

static char *render_csv(json_t *points)
{
	char *buf = NULL;
	size_t len = 0, i, k;
	json_t *params = json_object(), *counters = json_object(), *p, *e, *v;
	const char *key;
	FILE *f = open_memstream(&buf, &len);
	csv_columns(points, params, counters);
	fputs("name,scenario,section,path", f);
	json_object_foreach(params, key, v) {
		fputc(',', f);
		csv_field(f, key);
	}
	fputs(",repetitions,iterations,real_time,cpu_time,time_unit", f);
	json_object_foreach(counters, key, v) {
		fputc(',', f);
		csv_field(f, key);
	}
	fputc('\n', f);
	json_array_foreach(points, i, p) {
		json_array_foreach(json_object_get(p, "entries"), k, e) {
			if (!representative(e))
				continue;
			json_t *m = meta(e), *pv = json_object_get(m, "params");
			csv_field(f, str_at(e, "run_name"));
			fputc(',', f);
			csv_field(f, str_at(m, "scenario"));
			fputc(',', f);
			csv_field(f, str_at(m, "section"));
			fputc(',', f);
			csv_field(f, str_at(m, "path"));
			json_object_foreach(params, key, v) {
				fputc(',', f);
				csv_field(f, str_at(pv, key));
			}
			fprintf(f, ",%lld,%lld,", json_integer_value(json_object_get(e, "repetitions")),
				json_integer_value(json_object_get(e, "iterations")));
			csv_num(f, num_at(e, "real_time"));
			fputc(',', f);
			csv_num(f, num_at(e, "cpu_time"));
			fputs(",ns", f);
			json_object_foreach(counters, key, v) {
				fputc(',', f);
				if (absent_at(e, key))   /* as perf stat -x prints it */
					fprintf(f, "<%s>", absent_at(e, key));
				else
					csv_num(f, num_at(e, key));
			}
			fputc('\n', f);
		}
	}
	fclose(f);
	json_decref(params);
	json_decref(counters);
	return buf;
}

char *fb_output_render(enum fb_format fmt, json_t *context, json_t *points)
{
	switch (fmt) {
	case FB_FORMAT_JSON: return render_json(context, points);
	case FB_FORMAT_CSV:  return render_csv(points);
	default:             return render_console(context, points);
	}
}
