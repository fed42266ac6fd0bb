/* tests/test_compare.c — Google Benchmark's compare.py reads fencebench JSON unchanged.
 *
 * Runs $(BUILD)/fencebench twice (the limits scenario, small; and selftest with
 * repetitions, both paths and a section) into a.json and b.json, then
 * `compare.py benchmarks a.json b.json`: it must exit 0 and name the
 * benchmarks.  Skips, saying why, when compare.py (libbenchmark-tools) or
 * scipy (python3-scipy) is missing.
 */
#include "tests/fb_test.h"

#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define COMPARE_PY "/usr/share/benchmark/compare.py"
#define PYTHON     "/usr/bin/python3"

extern char **environ;

static char fencebench[PATH_MAX + 16];
static char tmpdir[] = "/tmp/fb_test_compare.XXXXXX";

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return calloc(1, 1);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *s = calloc(1, (size_t)n + 1);
	if (fread(s, 1, (size_t)n, f) != (size_t)n)
		s[0] = '\0';
	fclose(f);
	return s;
}

/* Run argv (argv[0] is the program path); stdout+stderr into *output. Exit status. */
static int run(const char *const *argv, char **output)
{
	char log[PATH_MAX];
	snprintf(log, sizeof(log), "%s/.log", tmpdir);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	pid_t pid;
	int st = 0;
	assert_int_equal(posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	*output = slurp(log);
	unlink(log);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int setup(void **state)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	*strrchr(self, '/') = '\0';
	snprintf(fencebench, sizeof(fencebench), "%s/fencebench", self);
	assert_non_null(mkdtemp(tmpdir));
	return 0;
}

static int teardown(void **state)
{
	char p[PATH_MAX];
	const char *names[] = { "a.json", "b.json", "c.json", "d.json" };
	for (size_t i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s", tmpdir, names[i]);
		unlink(p);
	}
	rmdir(tmpdir);
	return 0;
}

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
	if (access(fencebench, X_OK))
		fail_msg("%s not built (mk/harness.mk builds it before the tests)", fencebench);
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
	if (access(fencebench, X_OK))
		fail_msg("%s not built", fencebench);
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
