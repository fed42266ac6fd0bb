/* tests/test_sweep_resume.c — results are never lost: a resumed sweep says
 * exactly what an uninterrupted one says, the output path's aliases are seen
 * through, and write errors are errors.
 *
 * Runs $(BUILD)/fencebench (the "selftest" scenario: deterministic numbers,
 * a "pollers" parameter that oversubscribes the CPUs) and compares result
 * files key by key.  Timing values (JSON reals: latencies, CPU times, the
 * machine limits) differ between runs and are left aside; points,
 * parameters, context and counts must not differ.
 */
#include "tests/fb_test.h"
#include "tests/fb_test_exec.h"

#include <errno.h>
#include <stdbool.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char fencebench[PATH_MAX + 16];
static char tmpdir[] = "/tmp/fb_test_sweep_resume.XXXXXX";

FB_TEST_FIXTURES(fencebench, sizeof(fencebench), tmpdir)

static struct fb_exec_result run_args(const char *const *args)
{
	const char *argv[64] = { fencebench };
	size_t n = 1;
	for (; args[n - 1]; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	struct fb_exec_result r = fb_exec(tmpdir, argv, FB_EXEC_SEPARATE);
	assert_int_not_equal(r.status, -1);
	return r;
}
#define RUN(...) run_args((const char *const[]){ __VA_ARGS__, NULL })

static const char *tmp_path(const char *name)
{
	return fb_tmp_path(tmpdir, name);
}

/* Context keys measured anew by every session (the machine and its noise)
 * or naming this invocation: not part of what a resume must reproduce. */
static bool context_key_varies(const char *k)
{
	static const char *const vary[] = { "limits", "noise", "command_line", "date", "load_avg", "executable",
					    "host_name", "mhz_per_cpu", "caches", NULL };
	for (size_t i = 0; vary[i]; i++)
		if (!strcmp(k, vary[i]))
			return true;
	return false;
}

/* a and b are equal but for JSON reals (timing values).  false with where
 * and what differs in why. */
static bool same_but_timing(json_t *a, json_t *b, const char *where, char *why, size_t len, bool top)
{
	if (json_is_real(a) && json_is_real(b))
		return true;
	if (json_typeof(a) != json_typeof(b) || !a || !b) {
		snprintf(why, len, "%s: %s vs %s", where, a ? "present" : "missing", b ? "present" : "missing");
		if (a && b)
			snprintf(why, len, "%s: types differ", where);
		return false;
	}
	char sub[512];
	if (json_is_object(a)) {
		const char *k;
		json_t *v;
		json_object_foreach(a, k, v) {
			if (top && context_key_varies(k))
				continue;
			snprintf(sub, sizeof(sub), "%s.%s", where, k);
			if (!same_but_timing(v, json_object_get(b, k), sub, why, len, false))
				return false;
		}
		json_object_foreach(b, k, v) {
			if (!(top && context_key_varies(k)) && !json_object_get(a, k)) {
				snprintf(why, len, "%s.%s: only in the second", where, k);
				return false;
			}
		}
		return true;
	}
	if (json_is_array(a)) {
		if (json_array_size(a) != json_array_size(b)) {
			snprintf(why, len, "%s: %zu vs %zu items", where, json_array_size(a), json_array_size(b));
			return false;
		}
		for (size_t i = 0; i < json_array_size(a); i++) {
			snprintf(sub, sizeof(sub), "%s[%zu]", where, i);
			if (!same_but_timing(json_array_get(a, i), json_array_get(b, i), sub, why, len, false))
				return false;
		}
		return true;
	}
	if (!json_equal(a, b)) {
		char *ta = json_dumps(a, JSON_ENCODE_ANY), *tb = json_dumps(b, JSON_ENCODE_ANY);
		snprintf(why, len, "%s: %.150s vs %.150s", where, ta, tb);
		free(ta);
		free(tb);
		return false;
	}
	return true;
}

/* The result files a and b (JSON) hold the same points, parameters, context and counts. */
static void assert_same_results(const char *a, const char *b)
{
	json_error_t e;
	json_t *ja = json_load_file(a, 0, &e), *jb = json_load_file(b, 0, &e);
	char why[1024] = "";
	if (!ja || !jb)
		fail_msg("%s is not JSON: %s", ja ? b : a, e.text);
	bool same = same_but_timing(json_object_get(ja, "context"), json_object_get(jb, "context"), "context", why,
				    sizeof(why), true) &&
		    same_but_timing(json_object_get(ja, "benchmarks"), json_object_get(jb, "benchmarks"), "benchmarks",
				    why, sizeof(why), false);
	json_decref(ja);
	json_decref(jb);
	if (!same)
		fail_msg("%s and %s differ: %s", a, b, why);
}

/* ---- an exact resume ---- */

/* A point journaled by one session and resumed by the next gives the output
 * the same context (threads, oversubscription, warnings, repetitions) as
 * when it ran in the session that writes the output. */
static void resume_rebuilds_each_points_context(void **state)
{
	(void)state;
	const char *part = tmp_path("part.json"), *whole = tmp_path("whole.json");
	/* The grid grown by one value: the point pollers=8 resumes from the journal. */
	struct fb_exec_result r = RUN("sweep", "selftest", "--cpus", "0-1", "--grid", "pollers=8", "--iterations", "5",
				      "--format", "json", "--out", part, "-q");
	assert_int_equal(r.status, 0);
	fb_exec_free(&r);
	r = RUN("sweep", "selftest", "--cpus", "0-1", "--grid", "pollers=8,1", "--iterations", "5", "--format", "json",
		"--out", part, "--resume", "-q");
	assert_int_equal(r.status, 0);
	fb_exec_free(&r);
	r = RUN("sweep", "selftest", "--cpus", "0-1", "--grid", "pollers=8,1", "--iterations", "5", "--format", "json",
		"--out", whole, "-q");
	assert_int_equal(r.status, 0);
	fb_exec_free(&r);
	assert_same_results(part, whole);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(resume_rebuilds_each_points_context),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
