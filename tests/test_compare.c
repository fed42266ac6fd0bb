/* tests/test_compare.c — comparing two runs: `fencebench compare`, and Google Benchmark's compare.py.
 *
 * compare.py: runs $(BUILD)/fencebench twice (the limits scenario, small; and
 * selftest with repetitions, both paths and a section) into a.json and b.json,
 * then `compare.py benchmarks a.json b.json`: it must exit 0 and name the
 * benchmarks.  Skips, saying why, when compare.py (libbenchmark-tools) or
 * scipy (python3-scipy) is missing.
 *
 * fencebench compare: two runs of the same build say "within noise" and exit
 * 0; the same run with every latency planted 2x slower says "regressed" and
 * exits 1, 2x faster "improved" and exits 0; 100 metrics whose two sides are
 * independent samples of one distribution (fixed seeds, each side's interval
 * from the harness's own bootstrap) are within noise but for at most 5, and
 * all regressed when one side is 2x; inputs that cannot be compared exit 2
 * with one line.  Nothing is timed: the verdicts follow from the numbers.
 */
#include "tests/fb_test.h"
#include "tests/fb_test_exec.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/fb_boot.h"
#include "src/fb_hist.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

#define COMPARE_PY "/usr/share/benchmark/compare.py"
#define PYTHON     "/usr/bin/python3"

static char fencebench[PATH_MAX + 16];
static char tmpdir[] = "/tmp/fb_test_compare.XXXXXX";

/* Run argv (argv[0] is the program path); stdout+stderr into *output (never NULL). Exit status. */
static int run(const char *const *argv, char **output)
{
	struct fb_exec_result r = fb_exec(tmpdir, argv, FB_EXEC_MERGED);
	assert_int_not_equal(r.status, -1);   /* spawned and waited for */
	*output = r.out ? r.out : calloc(1, 1);
	return r.status;
}

FB_TEST_FIXTURES(fencebench, sizeof(fencebench), tmpdir)

/* Skip unless compare.py and scipy are usable. */
static bool compare_py_usable(void)
{
	char *out;
	if (access(COMPARE_PY, R_OK) || access(PYTHON, X_OK)) {
		fb_skip(COMPARE_PY " not found (Debian package libbenchmark-tools)");
		return false;
	}
	const char *argv[] = { PYTHON, "-c", "import scipy", NULL };
	int rc = run(argv, &out);
	free(out);
	if (rc) {
		fb_skip("python3 cannot import scipy, which compare.py needs (Debian package python3-scipy)");
		return false;
	}
	return true;
}

static void produce(const char *file, const char *const *extra)
{
	char path[PATH_MAX], *out;
	const char *argv[32] = { fencebench };
	size_t n = 1;
	for (; *extra; extra++)
		argv[n++] = *extra;
	snprintf(path, sizeof(path), "%s/%s", tmpdir, file);
	argv[n++] = "--format";
	argv[n++] = "json";
	argv[n++] = "--out";
	argv[n++] = path;
	argv[n++] = "-q";
	argv[n] = NULL;
	int rc = run(argv, &out);
	if (rc)
		fail_msg("fencebench exited %d:\n%s", rc, out);
	free(out);
}

static char *compare(const char *a, const char *b, int *rc)
{
	char pa[PATH_MAX], pb[PATH_MAX], *out;
	snprintf(pa, sizeof(pa), "%s/%s", tmpdir, a);
	snprintf(pb, sizeof(pb), "%s/%s", tmpdir, b);
	const char *argv[] = { PYTHON, COMPARE_PY, "--no-color", "benchmarks", pa, pb, NULL };
	*rc = run(argv, &out);
	return out;
}

static void compare_py_reads_limits_runs(void **state)
{
	fb_need_binary(fencebench);
	if (!compare_py_usable())
		return;
	const char *args[] = { "run", "limits", "--iterations", "10", "--set", "gap_us=50", NULL };
	produce("a.json", args);
	produce("b.json", args);
	int rc;
	char *out = compare("a.json", "b.json", &rc);
	if (rc || !strstr(out, "limits/gap_us:50") || !strstr(out, "Comparing"))
		fail_msg("compare.py exited %d:\n%s", rc, out);
	free(out);
}

static void compare_py_reads_repetitions_paths_sections(void **state)
{
	fb_need_binary(fencebench);
	if (!compare_py_usable())
		return;
	const char *args[] = { "run", "selftest", "--iterations", "50", "--repetitions", "3", NULL };
	produce("c.json", args);
	produce("d.json", args);
	int rc;
	char *out = compare("c.json", "d.json", &rc);
	const char *want[] = { "selftest/path:native", "selftest/path:legacy", "selftest/power/path:native",
			       "selftest/path:native_mean", "selftest/path:legacy_cv", "selftest/path:native_pvalue",
			       "OVERALL_GEOMEAN" };
	if (rc)
		fail_msg("compare.py exited %d:\n%s", rc, out);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(out, want[i]))
			fail_msg("compare.py output lacks %s:\n%s", want[i], out);
	free(out);
}

/* ---- fencebench compare ---- */

static char *fb_compare(const char *a, const char *b, const char *extra, int *rc)
{
	char *out;
	const char *argv[] = { fencebench, "compare", fb_tmp_path(tmpdir, a), fb_tmp_path(tmpdir, b), extra, NULL };
	*rc = run(argv, &out);
	return out;
}

/* A copy of file `from` with every value in ns (and its interval) times k. */
static void planted(const char *from, const char *to, double k)
{
	json_error_t je;
	json_t *doc = json_load_file(fb_tmp_path(tmpdir, from), 0, &je), *b;
	assert_non_null(doc);
	size_t i;
	json_array_foreach(json_object_get(doc, "benchmarks"), i, b) {
		json_t *units = json_object_get(json_object_get(b, "fencebench"), "units");
		const char *key;
		json_t *v;
		void *tmp;
		json_object_foreach_safe(b, tmp, key, v) {
			char base[256];
			snprintf(base, sizeof(base), "%s", key);
			char *ci = strstr(base, "_ci_");
			if (ci)
				*ci = '\0';
			const char *unit = json_string_value(json_object_get(units, base));
			bool time = !strcmp(base, "real_time") || (unit && !strcmp(unit, "ns"));
			if (time && json_is_number(v))
				json_object_set_new(b, key, json_real(json_number_value(v) * k));
		}
	}
	assert_int_equal(json_dump_file(doc, fb_tmp_path(tmpdir, to), JSON_INDENT(1)), 0);
	json_decref(doc);
}

static void compare_same_build_within_noise_planted_2x_regressed(void **state)
{
	fb_need_binary(fencebench);
	const char *args[] = { "run", "selftest", "--iterations", "200", "--set", "shape=ramp", "--repetitions", "6", NULL };
	produce("s1.json", args);
	produce("s2.json", args);
	int rc;
	/* selftest's latencies are the same in every run; its time per iteration is
	 * measured, and on a loaded machine may move beyond the noise: it decides
	 * the exit status only through its own verdict */
	char *out = fb_compare("s1.json", "s2.json", NULL, &rc);
	static const char *const same[] = { "wait_p50", "wait_p90", "wait_p99", "wait_p999", "submit", "interrupts" };
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		char want[64];
		snprintf(want, sizeof(want), "\n%s ", same[i]);
		const char *row = strstr(out, want);
		const char *eol = row ? strchr(row + 1, '\n') : NULL;
		if (!row || !eol || !strstr(row, "within noise") || strstr(row, "within noise") > eol)
			fail_msg("two runs of one build: %s not within noise:\n%s", same[i], out);
	}
	if (rc != (strstr(out, "\nregressed: ") ? 1 : 0) || !strstr(out, "== selftest/path:native/shape:ramp =="))
		fail_msg("two runs of one build: exit %d:\n%s", rc, out);
	if (strstr(out, "different machines"))
		fail_msg("two runs on one machine called different machines:\n%s", out);
	free(out);
	/* the same file as if run on another CPU: said, with both values */
	json_t *doc = json_load_file(fb_tmp_path(tmpdir, "s2.json"), 0, NULL);
	assert_non_null(doc);
	json_object_set_new(json_object_get(doc, "context"), "cpu_model", json_string("Other CPU 9000"));
	assert_int_equal(json_dump_file(doc, fb_tmp_path(tmpdir, "other-cpu.json"), JSON_INDENT(1)), 0);
	json_decref(doc);
	out = fb_compare("s1.json", "other-cpu.json", NULL, &rc);
	if (!strstr(out, "WARNING: BASE and NEW ran on different machines") || !strstr(out, "-> 'Other CPU 9000'"))
		fail_msg("a run on another CPU: no warning:\n%s", out);
	free(out);
	out = fb_compare("s1.json", "other-cpu.json", "--format=json", &rc);
	if (!strstr(out, "\"machine_differs\": [\n    \"cpu_model\"\n  ]"))
		fail_msg("a run on another CPU: JSON without machine_differs [cpu_model]:\n%s", out);
	free(out);
	planted("s2.json", "slow.json", 2.0);
	out = fb_compare("s1.json", "slow.json", NULL, &rc);
	if (rc != 1 || !strstr(out, "regressed: selftest/path:native/shape:ramp wait_p50 +100% [") ||
	    !strstr(out, "regressed, not gated: selftest/path:legacy/shape:ramp submit +100%"))
		fail_msg("planted 2x slowdown: exit %d (want 1):\n%s", rc, out);
	free(out);
	planted("s2.json", "fast.json", 0.5);
	out = fb_compare("s1.json", "fast.json", "--format=markdown", &rc);
	if (rc || !strstr(out, "| wait_p50 | 1.99 us ±0.4% | 994 ns ±0.4%") || !strstr(out, "| improved |") ||
	    !strstr(out, "#### selftest/power/path:legacy/shape:ramp") || !strstr(out, "|---|--:|--:|--:|---|---|"))
		fail_msg("planted 2x speedup (markdown): exit %d:\n%s", rc, out);
	free(out);
	/* a threshold above the change: within noise again, exit 0 */
	out = fb_compare("s1.json", "slow.json", "--threshold=150%", &rc);
	if (rc || !strstr(out, "0 regressed"))
		fail_msg("--threshold 150%%: exit %d:\n%s", rc, out);
	free(out);
}

/* A result file of nmetric latencies (lat0, lat1, ...) over reps repetitions:
 * each repetition's value 36 us times k times exp(0.03 Z) (the noise between
 * runs), rounded to its histogram bucket; the iteration entries and their
 * median aggregate with its interval, as the harness writes them.  headline:
 * the context's "headline_metrics", or NULL for none. */
static void synthetic(const char *file, unsigned nmetric, unsigned reps, double k, uint64_t seed,
		      const char *headline)
{
	struct fb_rng data = { seed };
	json_t *benches = json_array(), *units = json_object(), *med = json_object();
	double v[64][8];
	for (unsigned m = 0; m < nmetric; m++) {
		char key[64];
		snprintf(key, sizeof(key), "lat%u", m);
		json_object_set_new(units, key, json_string("ns"));
		for (unsigned r = 0; r < reps; r++) {
			double z = sqrt(-2.0 * log(fb_rng_uniform(&data))) * cos(2.0 * M_PI * fb_rng_uniform(&data));
			unsigned b = fb_hist_bucket_of((uint64_t)llround(36000.0 * k * exp(0.03 * z)));
			v[r][m] = (double)fb_hist_bucket_lo(b) + (double)(fb_hist_bucket_width(b) / 2);
		}
	}
	for (unsigned r = 0; r < reps; r++) {
		json_t *b = json_pack("{s:s, s:s, s:s, s:i}", "name", "synthetic", "run_name", "synthetic", "run_type",
				      "iteration", "repetition_index", (int)r);
		for (unsigned m = 0; m < nmetric; m++) {
			char key[64];
			snprintf(key, sizeof(key), "lat%u", m);
			json_object_set_new(b, key, json_real(v[r][m]));
		}
		json_object_set_new(b, "fencebench", json_pack("{s:s, s:O}", "scenario", "synthetic", "units", units));
		json_array_append_new(benches, b);
	}
	for (unsigned m = 0; reps > 1 && m < nmetric; m++) {
		char key[64];
		double col[64];
		for (unsigned r = 0; r < reps; r++)
			col[r] = v[r][m];
		struct fb_ci ci = fb_ci_median(col, reps);
		qsort(col, reps, sizeof(*col), cmp_double);
		double mid = reps % 2 ? col[reps / 2] : (col[reps / 2 - 1] + col[reps / 2]) / 2;
		fb_ci_floor(&ci, mid, fb_ci_bucket_width(mid));
		snprintf(key, sizeof(key), "lat%u", m);
		json_object_set_new(med, key, json_real(mid));
		snprintf(key, sizeof(key), "lat%u_ci_lo", m);
		json_object_set_new(med, key, json_real(ci.lo));
		snprintf(key, sizeof(key), "lat%u_ci_hi", m);
		json_object_set_new(med, key, json_real(ci.hi));
		snprintf(key, sizeof(key), "lat%u_ci_range", m);
		if (ci.kind == FB_CI_RANGE)
			json_object_set_new(med, key, json_integer(reps));
	}
	if (reps > 1) {
		json_t *names = json_pack("{s:s, s:s, s:s, s:s}", "name", "synthetic_median", "run_name", "synthetic",
					  "run_type", "aggregate", "aggregate_name", "median");
		json_object_update(med, names);
		json_decref(names);
		json_object_set_new(med, "fencebench", json_pack("{s:s, s:O}", "scenario", "synthetic", "units", units));
		json_array_append(benches, med);
	}
	json_t *context = json_pack("{s:s, s:i}", "scenario", "synthetic", "repetitions", (int)reps);
	if (headline)
		json_object_set_new(context, "headline_metrics", json_string(headline));
	json_t *doc = json_pack("{s:o, s:o}", "context", context, "benchmarks", benches);
	assert_int_equal(json_dump_file(doc, fb_tmp_path(tmpdir, file), 0), 0);
	json_decref(doc);
	json_decref(med);
	json_decref(units);
}

/* fencebench compare a b [extra]: its exit status, stdout and stderr apart. */
static int compare_status(const char *a, const char *b, const char *extra, char **err)
{
	const char *argv[] = { fencebench, "compare", fb_tmp_path(tmpdir, a), fb_tmp_path(tmpdir, b), extra, NULL };
	struct fb_exec_result r = fb_exec(tmpdir, argv, FB_EXEC_SEPARATE);
	assert_int_not_equal(r.status, -1);
	int status = r.status;
	if (err)
		*err = strdup(r.err ? r.err : "");
	fb_exec_free(&r);
	return status;
}

/* The gate as a CI job keeps it: four headline latencies, 10 repetitions a
 * side.  Two files of one distribution pass (exit 0) in at least 95 % of 200
 * trials (Holm holds any false failure among the 4 to 5 %; the threshold
 * lowers it further); a planted 10 % slowdown of one of them fails (exit 1)
 * in at least 95 % of 20 trials.  Fixed seeds. */
static void compare_gate_holds_its_false_failures_and_finds_a_shift(void **state)
{
	fb_need_binary(fencebench);
	const char *head = "lat0,lat1,lat2,lat3";
	unsigned pass = 0, found = 0;
	for (unsigned t = 0; t < 200; t++) {
		synthetic("g1.json", 4, 10, 1.0, 1000 + 2 * t, head);
		synthetic("g2.json", 4, 10, 1.0, 1001 + 2 * t, head);
		int rc = compare_status("g1.json", "g2.json", NULL, NULL);
		assert_true(rc == 0 || rc == 1);
		pass += rc == 0;
	}
	for (unsigned t = 0; t < 20; t++) {
		synthetic("g1.json", 4, 10, 1.0, 5000 + 2 * t, head);
		synthetic("g3.json", 4, 10, 1.0, 5001 + 2 * t, head);
		/* lat2 alone 10 % slower: the same draws, then scaled */
		json_t *doc = json_load_file(fb_tmp_path(tmpdir, "g3.json"), 0, NULL), *b;
		size_t i;
		json_array_foreach(json_object_get(doc, "benchmarks"), i, b) {
			const char *const keys[] = { "lat2", "lat2_ci_lo", "lat2_ci_hi" };
			for (int k = 0; k < 3; k++)
				if (json_object_get(b, keys[k]))
					json_object_set_new(b, keys[k], json_real(1.1 * json_number_value(json_object_get(b, keys[k]))));
		}
		assert_int_equal(json_dump_file(doc, fb_tmp_path(tmpdir, "g3.json"), 0), 0);
		json_decref(doc);
		found += compare_status("g1.json", "g3.json", NULL, NULL) == 1;
	}
	printf("  same distribution: exit 0 in %u of 200; a 10 %% shift in one metric found in %u of 20\n", pass, found);
	assert_true(pass >= 190);
	assert_true(found >= 19);
}

/* Only the gated metrics decide: a 2x slowdown of a metric outside the
 * headline is reported, not gated; --gate names it and it fails; too few
 * repetitions, or a name that is no metric, exit 2 with one line saying why. */
static void compare_gates_only_its_metrics_and_refuses_to_guess(void **state)
{
	fb_need_binary(fencebench);
	synthetic("h1.json", 2, 8, 1.0, 11, "lat0");
	synthetic("h2.json", 2, 8, 1.0, 12, "lat0");
	json_t *doc = json_load_file(fb_tmp_path(tmpdir, "h2.json"), 0, NULL), *b;
	size_t i;
	json_array_foreach(json_object_get(doc, "benchmarks"), i, b) {
		const char *const keys[] = { "lat1", "lat1_ci_lo", "lat1_ci_hi" };
		for (int k = 0; k < 3; k++)
			if (json_object_get(b, keys[k]))
				json_object_set_new(b, keys[k], json_real(2 * json_number_value(json_object_get(b, keys[k]))));
	}
	assert_int_equal(json_dump_file(doc, fb_tmp_path(tmpdir, "h2.json"), 0), 0);
	json_decref(doc);
	int rc;
	char *out = fb_compare("h1.json", "h2.json", NULL, &rc);
	if (rc != 0 || !strstr(out, "regressed, not gated: synthetic lat1 +9") ||
	    !strstr(out, "gate: 0 of 1 gated metrics failed") || !strstr(out, "the scenario's headline metrics"))
		fail_msg("a regression outside the headline: exit %d (want 0):\n%s", rc, out);
	free(out);
	out = fb_compare("h1.json", "h2.json", "--gate=lat0,lat1", &rc);
	if (rc != 1 || !strstr(out, "regressed: synthetic lat1 +9") || !strstr(out, "FAIL p="))
		fail_msg("--gate lat0,lat1: exit %d (want 1):\n%s", rc, out);
	free(out);
	/* JSON: a side of 3 repetitions says its interval is their range */
	synthetic("q1.json", 1, 3, 1.0, 31, "lat0");
	synthetic("q2.json", 1, 3, 1.0, 32, "lat0");
	out = fb_compare("q1.json", "q2.json", "--format=json", &rc);
	if (rc != 2 || !strstr(out, "\"base_ci_range\": 3") || !strstr(out, "\"new_ci_range\": 3"))
		fail_msg("3 repetitions, JSON: exit %d (want 2), no base_ci_range/new_ci_range 3:\n%s", rc, out);
	free(out);
	char *err;
	static const struct { unsigned reps; const char *extra, *want; } bad[] = {
		{ 3, NULL, "not gated: BASE has 3 and NEW 3 repetitions" },
		{ 1, NULL, "not gated: BASE has 1 and NEW 1 repetitions" },
		{ 8, "--gate=lat9", "--gate: no metric 'lat9' in BASE or NEW" },
		{ 8, "--lower-is-better=lat0,nope", "--lower-is-better: no metric 'nope' in BASE or NEW" },
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		synthetic("r1.json", 2, bad[k].reps, 1.0, 21, "lat0");
		synthetic("r2.json", 2, bad[k].reps, 1.0, 22, "lat0");
		rc = compare_status("r1.json", "r2.json", bad[k].extra, &err);
		if (rc != 2 || fb_count_lines(err) != 1 || !strstr(err, bad[k].want))
			fail_msg("%u repetitions %s: exit %d, stderr:\n%s", bad[k].reps, bad[k].extra ? bad[k].extra : "",
				 rc, err);
		free(err);
	}
}

static void compare_refuses_what_it_cannot_compare(void **state)
{
	fb_need_binary(fencebench);
	const char *lim[] = { "run", "limits", "--iterations", "5", NULL };
	produce("lim.json", lim);
	synthetic("syn.json", 1, 1, 1.0, 1, NULL);
	static const struct { const char *a, *b, *want; } bad[] = {
		{ "lim.json", "syn.json", "scenario 'synthetic', but BASE is 'limits'" },
		{ "lim.json", "missing.json", "missing.json: not JSON" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *argv[] = { fencebench, "compare", fb_tmp_path(tmpdir, bad[i].a), fb_tmp_path(tmpdir, bad[i].b), NULL };
		struct fb_exec_result r = fb_exec(tmpdir, argv, FB_EXEC_SEPARATE);
		if (r.status != 2 || fb_count_lines(r.err) != 1 || !strstr(r.err, bad[i].want))
			fail_msg("compare %s %s: exit %d, stderr:\n%s", bad[i].a, bad[i].b, r.status, r.err);
		fb_exec_free(&r);
	}
	const char *one[] = { fencebench, "compare", fb_tmp_path(tmpdir, "lim.json"), NULL };
	struct fb_exec_result r = fb_exec(tmpdir, one, FB_EXEC_SEPARATE);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "compare: give two result files"));
	fb_exec_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(compare_py_reads_limits_runs),
		cmocka_unit_test(compare_py_reads_repetitions_paths_sections),
		cmocka_unit_test(compare_same_build_within_noise_planted_2x_regressed),
		cmocka_unit_test(compare_gate_holds_its_false_failures_and_finds_a_shift),
		cmocka_unit_test(compare_gates_only_its_metrics_and_refuses_to_guess),
		cmocka_unit_test(compare_refuses_what_it_cannot_compare),
	};
	return cmocka_run_group_tests_name(__FILE__, tests, setup, teardown);
}
