/* tests/test_compare.c — Google Benchmark's compare.py reads fencebench JSON unchanged.
 *
 * Runs $(BUILD)/fencebench twice (the limits scenario, small; and selftest with
 * repetitions, both paths and a section) into a.json and b.json, then
 * `compare.py benchmarks a.json b.json`: it must exit 0 and name the
 * benchmarks.  Skips, saying why, when compare.py (libbenchmark-tools) or
 * scipy (python3-scipy) is missing.
 */
#include "tests/fb_test.h"
#include "tests/fb_test_exec.h"

#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(compare_py_reads_limits_runs),
		cmocka_unit_test(compare_py_reads_repetitions_paths_sections),
	};
	return cmocka_run_group_tests_name(__FILE__, tests, setup, teardown);
}
