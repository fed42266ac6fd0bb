/* tests/test_report_ci.c — the report shows the runs' 95 % intervals and their noise warnings.
 *
 * The headline fixture (tests/plot/headline.json) with intervals added the way
 * fencebench writes them (M_ci_lo, M_ci_hi; M_vs_legacy and its own on the
 * native entry) and a warning in its context, drawn by scripts/plot/fbplot.py:
 * the headline table shows each number ±its interval (both halves of a
 * lopsided one; a range of too few repetitions called a range) and a native ÷ legacy
 * column with its interval, "no clear difference" where that holds 1 (and not
 * where it is exactly one value); the interval of a number that did not vary
 * is not shown; the warning is in the header.  Without intervals the table
 * keeps its three columns (tests/test_plot.c checks those rows).  Skips,
 * saying why, without Debian's python3 and matplotlib.
 */
#include "tests/fb_test.h"
#include "tests/fb_test_exec.h"

#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#ifndef FB_PLOT_SCRIPT
#define FB_PLOT_SCRIPT "scripts/plot/fbplot.py"
#endif
#ifndef FB_PLOT_FIXTURES
#define FB_PLOT_FIXTURES "tests/plot"
#endif
#ifndef FB_PLOT_PYTHON
#define FB_PLOT_PYTHON "/usr/bin/python3"
#endif
#define PYTHON  FB_PLOT_PYTHON
#define FBPLOT  FB_PLOT_SCRIPT
#define FIXTURE FB_PLOT_FIXTURES "/headline.json"

static char tmpdir[] = "/tmp/fb_test_report_ci.XXXXXX";

static int setup(void **state)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	fb_remove_tree(tmpdir);
	return 0;
}

static void set(json_t *b, const char *key, double v, double lo, double hi)
{
	char k[128];
	if (!isnan(v))   /* the value too */
		json_object_set_new(b, key, json_real(v));
	snprintf(k, sizeof(k), "%s_ci_lo", key);
	json_object_set_new(b, k, json_real(lo));
	snprintf(k, sizeof(k), "%s_ci_hi", key);
	json_object_set_new(b, k, json_real(hi));
}

/* The fixture with intervals and a warning, written to tmpdir/headline.json. */
static const char *with_intervals(void)
{
	json_t *doc = json_load_file(FIXTURE, 0, NULL);
	assert_non_null(doc);
	json_t *n = fb_bench_named(doc, "headline/path:native"), *l = fb_bench_named(doc, "headline/path:legacy");
	set(n, "cpu_wait_p50", NAN, 24000, 26000);                 /* the range of 3 repetitions: called one */
	json_object_set_new(n, "cpu_wait_p50_ci_range", json_integer(3));
	set(l, "cpu_wait_p50", NAN, 29000, 31500);                 /* ±5.0 % */
	set(l, "cpu_wait_p99", NAN, 88000, 180000);                /* a tail's: lopsided, both halves */
	set(n, "cpu_wait_p50_vs_legacy", 0.833, 0.7, 1.05);        /* holds 1 */
	set(n, "gpu_wait_p50_vs_legacy", 0.00714, 0.006, 0.008);
	json_object_set_new(n, "gpu_wait_p50_vs_legacy_ci_range", json_integer(3));   /* from ranges */
	set(n, "interrupts_per_signal", NAN, 0.1, 0.1);            /* the same in every repetition */
	set(n, "interrupts_per_signal_vs_legacy", 0.1, 0.1, 0.1);
	set(n, "os_irq_cpu_per_signal", NAN, 450, 560);            /* ±12 % */
	json_t *ctx = json_object_get(doc, "context");
	json_object_set_new(ctx, "warnings", json_pack("[s]", "other processes took 95 % of a CPU on CPUs 0-1"));
	json_object_set_new(ctx, "noise", json_object());
	const char *path = fb_tmp_path(tmpdir, "headline.json");
	assert_int_equal(json_dump_file(doc, path, JSON_INDENT(1)), 0);
	json_decref(doc);
	return path;
}

static void report_shows_intervals_and_warnings(void **state)
{
	const char *probe[] = { PYTHON, "-c", "import matplotlib", NULL };
	struct fb_exec_result r = fb_exec(tmpdir, probe, FB_EXEC_SEPARATE);
	bool ok = r.status == 0;
	fb_exec_free(&r);
	if (!ok) {
		fb_skip(PYTHON " cannot import matplotlib (Debian package python3-matplotlib)");
		return;
	}
	const char *in = with_intervals(), *out = fb_tmp_path(tmpdir, "out");
	const char *argv[] = { PYTHON, FBPLOT, "-o", out, "--formats", "svg", in, NULL };
	r = fb_exec(tmpdir, argv, FB_EXEC_SEPARATE);
	if (r.status)
		fail_msg("fbplot: exit %d\n%s", r.status, r.err);
	fb_exec_free(&r);
	char *md = fb_slurp(fb_tmp_path(tmpdir, "out/report.md"));
	assert_non_null(md);
	static const char *const want[] = {
		"| metric | native | legacy | native ÷ legacy [95 % interval] |",
		"| interrupts per signal (10.0% CPU-waited) | 0.1 | 1 | 0.1 [0.1–0.1] |",
		"| OS interrupt-thread CPU per signal | 500 ns ±12% | ",
		"| CPU wait p50 / p99 | 25 µs (range of 3 runs: -4.0%/+4.0%) / ",
		" | 30 µs ±5.0% / 90 µs +100%/-2.2% (×1.5 futex wake-to-run) | ",
		" | 0.833 [0.7–1.05] no clear difference |",
		" | 0.00714 [0.006–0.008, from 3-run ranges] |",
		"**The machine was not quiet**: 1 warning(s) in 1 of 1 run(s)",
		"- other processes took 95 % of a CPU on CPUs 0-1 (`headline.json`)",
		"**Intervals**: ±x % beside a number",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(md, want[i]))
			fail_msg("report.md lacks '%s':\n%.4000s", want[i], md);
	free(md);
}

/* A file written before intervals said their coverage (the published
 * reference headline: 3 repetitions, their iteration entries kept): the
 * report draws each median's interval again from the repetitions' values,
 * so it shows ranges called ranges, and native ÷ legacy from them holds 1
 * where the old zero-width interval read as a difference. */
static void report_recomputes_old_intervals_as_ranges(void **state)
{
	const char *probe[] = { PYTHON, "-c", "import matplotlib", NULL };
	struct fb_exec_result r = fb_exec(tmpdir, probe, FB_EXEC_SEPARATE);
	bool ok = r.status == 0;
	fb_exec_free(&r);
	if (!ok) {
		fb_skip(PYTHON " cannot import matplotlib (Debian package python3-matplotlib)");
		return;
	}
	const char *out = fb_tmp_path(tmpdir, "old");
	const char *argv[] = { PYTHON, FBPLOT, "-o", out, "--formats", "svg", FB_PLOT_FIXTURES "/../../results/2026-11-26-vm-3/headline.json", NULL };
	r = fb_exec(tmpdir, argv, FB_EXEC_SEPARATE);
	if (r.status)
		fail_msg("fbplot: exit %d\n%s", r.status, r.err);
	fb_exec_free(&r);
	char *md = fb_slurp(fb_tmp_path(tmpdir, "old/report.md"));
	assert_non_null(md);
	static const char *const want[] = {
		"36.5 µs (range of 3 runs: -1.4%/+1.4%)",            /* legacy CPU wait p50: 35967, 36479, 36991 */
		"0.986 [0.972–1.01, from 3-run ranges] no clear difference",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(md, want[i]))
			fail_msg("report.md lacks '%s':\n%.4000s", want[i], md);
	if (strstr(md, "[0.986–0.986]"))
		fail_msg("a zero-width ratio interval left in:\n%.4000s", md);
	free(md);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(report_shows_intervals_and_warnings),
					    cmocka_unit_test(report_recomputes_old_intervals_as_ranges) };
	return cmocka_run_group_tests_name(__FILE__, tests, setup, teardown);
}
