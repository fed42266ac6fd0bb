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
#include <string.h>
#include <unistd.h>

#include "src/fb_boot.h"
#include "src/fb_hist.h"

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
	const char *args[] = { "run", "selftest", "--iterations", "200", "--set", "shape=ramp", "--repetitions", "3", NULL };
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
	    !strstr(out, "regressed: selftest/path:legacy/shape:ramp submit +100%"))
		fail_msg("planted 2x slowdown: exit %d (want 1):\n%s", rc, out);
	free(out);
	planted("s2.json", "fast.json", 0.5);
	out = fb_compare("s1.json", "fast.json", "--format=markdown", &rc);
	if (rc || !strstr(out, "| wait_p50 | 1.99 us ±5.0% | 99") || !strstr(out, "| improved |") ||
	    !strstr(out, "#### selftest/power/path:legacy/shape:ramp") || !strstr(out, "|---|--:|--:|--:|---|"))
		fail_msg("planted 2x speedup (markdown): exit %d:\n%s", rc, out);
	free(out);
	/* a threshold above the change: within noise again, exit 0 */
	out = fb_compare("s1.json", "slow.json", "--threshold=150%", &rc);
	if (rc || !strstr(out, "0 regressed"))
		fail_msg("--threshold 150%%: exit %d:\n%s", rc, out);
	free(out);
}

/* A result file of nmetric latencies, each the p50 of n exponential values
 * (median mu ln 2, times k) with the harness's own bootstrap interval. */
static void synthetic(const char *file, unsigned nmetric, unsigned n, double k, uint64_t seed)
{
	struct fb_rng data = { seed }, boot = { seed ^ 0xb007 };
	struct fb_hist *h = fb_hist_new();
	static float rep[FB_BOOT_RESAMPLES];
	json_t *b = json_object(), *units = json_object();
	for (unsigned m = 0; m < nmetric; m++) {
		char key[64];
		double p = 50.0, lo, hi;
		fb_hist_reset(h);
		for (unsigned i = 0; i < n; i++)
			fb_hist_record(h, (uint64_t)llround(-100000.0 * k * log(fb_rng_uniform(&data))));
		fb_boot_percentiles(h, &p, 1, &boot, rep, FB_BOOT_RESAMPLES);
		fb_boot_interval_f(rep, FB_BOOT_RESAMPLES, FB_BOOT_LEVEL, &lo, &hi);
		snprintf(key, sizeof(key), "lat%u", m);
		json_object_set_new(b, key, json_real((double)fb_hist_percentile(h, 50.0)));
		json_object_set_new(units, key, json_string("ns"));
		snprintf(key, sizeof(key), "lat%u_ci_lo", m);
		json_object_set_new(b, key, json_real(lo));
		snprintf(key, sizeof(key), "lat%u_ci_hi", m);
		json_object_set_new(b, key, json_real(hi));
	}
	json_object_set_new(b, "name", json_string("synthetic"));
	json_object_set_new(b, "run_name", json_string("synthetic"));
	json_object_set_new(b, "run_type", json_string("iteration"));
	json_object_set_new(b, "fencebench", json_pack("{s:s, s:o}", "scenario", "synthetic", "units", units));
	json_t *doc = json_pack("{s:{s:s}, s:[o]}", "context", "scenario", "synthetic", "benchmarks", b);
	assert_int_equal(json_dump_file(doc, fb_tmp_path(tmpdir, file), 0), 0);
	json_decref(doc);
	fb_hist_free(h);
}

/* How many rows of compare's JSON output have verdict v. */
static unsigned verdicts(const char *json, const char *v)
{
	json_t *doc = json_loads(json, 0, NULL), *r;
	assert_non_null(doc);
	unsigned k = 0;
	size_t i;
	json_array_foreach(json_object_get(doc, "rows"), i, r)
		k += !strcmp(json_string_value(json_object_get(r, "verdict")), v);
	json_decref(doc);
	return k;
}

static void compare_of_noisy_samples_follows_the_intervals(void **state)
{
	fb_need_binary(fencebench);
	synthetic("n1.json", 100, 500, 1.0, 1);
	synthetic("n2.json", 100, 500, 1.0, 2);
	synthetic("n3.json", 100, 500, 2.0, 3);
	int rc;
	char *out = fb_compare("n1.json", "n2.json", "--format=json", &rc);
	unsigned noise = verdicts(out, "within noise"), worse = verdicts(out, "regressed");
	printf("  one distribution twice: %u of 100 within noise, %u regressed (exit %d)\n", noise, worse, rc);
	assert_true(noise >= 95);
	assert_int_equal(rc, worse ? 1 : 0);
	free(out);
	out = fb_compare("n1.json", "n3.json", "--format=json", &rc);
	assert_int_equal(verdicts(out, "regressed"), 100);
	assert_int_equal(rc, 1);
	free(out);
}

static void compare_refuses_what_it_cannot_compare(void **state)
{
	fb_need_binary(fencebench);
	const char *lim[] = { "run", "limits", "--iterations", "5", NULL };
	produce("lim.json", lim);
	synthetic("syn.json", 1, 10, 1.0, 1);
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
		cmocka_unit_test(compare_of_noisy_samples_follows_the_intervals),
		cmocka_unit_test(compare_refuses_what_it_cannot_compare),
	};
	return cmocka_run_group_tests_name(__FILE__, tests, setup, teardown);
}
