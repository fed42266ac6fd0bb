/* tests/test_bench_all.c — every micro-benchmark of fb_bench runs to the end.
 *
 * `make bench` runs all of benchmarks/micro/ in one process, so one benchmark
 * that aborts (an assert, lf_die, a reconcile failure) loses every one after
 * it.  This runs the built fb_bench ($(BUILD)/fb_bench, ../fb_bench beside
 * this test's directory) over every registered benchmark at
 * --benchmark_min_time=0.001 (Google Benchmark 1.7 takes plain seconds, no
 * "s"; the gbench shim lets the flag replace each benchmark's gb_min_time,
 * src/gbench/gbench.h) and checks that it exits 0 and that both the console
 * output and the JSON file name every benchmark --benchmark_list_tests lists,
 * once, so a benchmark that aborts mid-way is caught by name.
 * What the benchmarks measure is not checked (tests never assert speed), nor
 * their gb_skip_with_error reports (a stall limit is a timing matter).
 * Under 1 s on 2 cores (3 s loaded, 3-12 s under TSan); a watchdog kills a
 * hung fb_bench after WATCHDOG_S.
 */
#include "tests/fb_test.h"
#include "tests/fb_test_exec.h"

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>

#define MIN_TIME   "0.001"          /* seconds per benchmark run */
#define WATCHDOG_S 300              /* generous: the whole run takes seconds */
#define MAX_NAMES  512

static char fb_bench[PATH_MAX + 16];   /* fb_build_path: the build tree + "/fb_bench" */
#define TMPDIR_TEMPLATE "/tmp/fb_test_bench_all.XXXXXX"
static char tmpdir[sizeof(TMPDIR_TEMPLATE)];

static int setup(void **state)
{
	(void)state;
	fb_build_path(fb_bench, sizeof(fb_bench), "fb_bench");
	memcpy(tmpdir, TMPDIR_TEMPLATE, sizeof(tmpdir));   /* mkdtemp fills it in */
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	fb_remove_tree(tmpdir);
	return 0;
}

/* The watchdog: SIGALRM kills the running fb_bench; waitpid restarts (SA_RESTART)
 * and sees it killed. */
static volatile sig_atomic_t watched = -1;

static void on_alarm(int sig)
{
	(void)sig;
	if (watched > 0)
		kill((pid_t)watched, SIGKILL);
}

/* Run fb_bench with the NULL-terminated args, stdout and stderr apart. */
static struct fb_exec_result bench(const char *const *args)
{
	const char *argv[8] = { fb_bench };
	size_t n = 1;
	for (; args[n - 1]; n++) {
		assert_true(n < sizeof(argv) / sizeof(argv[0]) - 1);
		argv[n] = args[n - 1];
	}
	argv[n] = NULL;
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART }, old;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	pid_t pid = fb_exec_start(tmpdir, argv, FB_EXEC_SEPARATE);
	watched = pid;
	alarm(WATCHDOG_S);
	struct fb_exec_result r = fb_exec_wait(tmpdir, pid, FB_EXEC_SEPARATE);
	alarm(0);
	watched = -1;
	sigaction(SIGALRM, &old, NULL);
	if (r.status != 0)
		fail_msg("fb_bench %s ...: exit %d%s; its stderr:\n%s", args[0], r.status,
			 r.status == 128 + SIGKILL ? " (killed by the watchdog: hung?)" : "",
			 r.err ? r.err : "(none)");
	return r;
}
#define BENCH(...) bench((const char *const[]){ __VA_ARGS__, NULL })

/* The lines of text, in place; returns how many (at most max). */
static size_t split_lines(char *text, char **lines, size_t max)
{
	size_t n = 0;
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (n == max)
			fail_msg("more than %d benchmarks: raise MAX_NAMES", MAX_NAMES);
		lines[n++] = l;
	}
	return n;
}

/* name without its "/min_time:S" part, into buf. */
static const char *without_min_time(const char *name, char *buf, size_t size)
{
	const char *m = strstr(name, "/min_time:");
	if (!m)
		return name;
	const char *rest = strchr(m + 1, '/');
	snprintf(buf, size, "%.*s%s", (int)(m - name), name, rest ? rest : "");
	return buf;
}

/* Does a line of the console report start with name followed by a blank? */
static bool console_has(const char *console, const char *name)
{
	size_t len = strlen(name);
	for (const char *p = console; (p = strstr(p, name)); p += len)
		if ((p == console || p[-1] == '\n') && (p[len] == ' ' || p[len] == '\t'))
			return true;
	return false;
}

/* Iteration runs named name (NULL: any) in the JSON report. */
static size_t json_runs(const json_t *doc, const char *name)
{
	const json_t *r;
	size_t i, n = 0;
	json_array_foreach(json_object_get(doc, "benchmarks"), i, r)
		n += !strcmp(json_string_value(json_object_get(r, "run_type")) ?: "", "iteration") &&
		     (!name || !strcmp(json_string_value(json_object_get(r, "name")) ?: "", name));
	return n;
}

/* The flag replaces every gb_min_time and changes nothing else in the list:
 * without it, the run would take the benchmarks' own 0.2-0.5 s each. */
static void min_time_flag_shortens_every_benchmark(void **state)
{
	fb_need_binary(fb_bench);
	struct fb_exec_result quick = BENCH("--benchmark_list_tests", "--benchmark_min_time=" MIN_TIME);
	struct fb_exec_result plain = BENCH("--benchmark_list_tests");
	char *q[MAX_NAMES], *p[MAX_NAMES], a[512], b[512];
	size_t nq = split_lines(quick.out, q, MAX_NAMES), np = split_lines(plain.out, p, MAX_NAMES);
	assert_true(nq > 0);
	assert_int_equal(nq, np);
	for (size_t i = 0; i < nq; i++) {
		const char *m = strstr(q[i], "/min_time:"), *v = m ? m + strlen("/min_time:") : NULL;
		if (v && (strncmp(v, MIN_TIME, strlen(MIN_TIME)) || (v[strlen(MIN_TIME)] && v[strlen(MIN_TIME)] != '/')))
			fail_msg("%s: --benchmark_min_time=" MIN_TIME " did not replace its min time", q[i]);
		if (strcmp(without_min_time(q[i], a, sizeof(a)), without_min_time(p[i], b, sizeof(b))))
			fail_msg("benchmark %zu: \"%s\" with the flag, \"%s\" without", i, q[i], p[i]);
	}
	fb_exec_free(&quick);
	fb_exec_free(&plain);
}

/* The whole of `make bench`, quickly: exit 0, and every listed benchmark in
 * the console report and in the JSON file, once each. */
static void every_benchmark_runs_to_the_end(void **state)
{
	fb_need_binary(fb_bench);
	struct fb_exec_result list = BENCH("--benchmark_list_tests", "--benchmark_min_time=" MIN_TIME);
	char *names[MAX_NAMES];
	size_t n = split_lines(list.out, names, MAX_NAMES);
	assert_true(n > 0);

	char out_flag[PATH_MAX + 32];
	const char *json = fb_tmp_path(tmpdir, "all.json");
	snprintf(out_flag, sizeof(out_flag), "--benchmark_out=%s", json);
	struct fb_exec_result run = BENCH("--benchmark_min_time=" MIN_TIME, out_flag, "--benchmark_out_format=json");
	json_error_t je;
	json_t *doc = json_load_file(json, 0, &je);
	if (!doc)
		fail_msg("%s: %s (line %d)", json, je.text, je.line);
	for (size_t i = 0; i < n; i++) {
		if (!console_has(run.out, names[i]))
			fail_msg("%s (benchmark %zu of %zu) is missing from the console report", names[i], i + 1, n);
		if (json_runs(doc, names[i]) != 1)
			fail_msg("%s: %zu runs in %s, expected 1", names[i], json_runs(doc, names[i]), json);
	}
	assert_int_equal(json_runs(doc, NULL), n);   /* nothing unlisted either */
	json_decref(doc);
	fb_exec_free(&run);
	fb_exec_free(&list);
}

FB_TEST_MAIN(cmocka_unit_test_setup_teardown(min_time_flag_shortens_every_benchmark, setup, teardown),
	     cmocka_unit_test_setup_teardown(every_benchmark_runs_to_the_end, setup, teardown))
