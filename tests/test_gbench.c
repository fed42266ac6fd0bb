/* tests/test_gbench.c — the Google Benchmark C shim, end to end.
 *
 * 1. Runs the built fb_bench (same build tree: $(BUILD)/fb_bench, or $FB_BENCH)
 *    on the selftest benchmarks of benchmarks/micro/bench_gbench_selftest.c
 *    with --benchmark_repetitions=3 --benchmark_format=json --benchmark_out,
 *    parses both JSON outputs with jansson and checks what the shim promises:
 *    the names (args, arg names, "/threads:2", "/real_time"...), the arithmetic
 *    of every counter flag against values set in advance, batch overshoot
 *    accounting, paused time excluded, setup/teardown around each run, manual
 *    time, errors reported, mean/median/stddev/cv aggregates, the context keys
 *    of bench_main.c; then compare.py on two runs (exit 0).
 * 2. Registers deliberately misused benchmarks in this binary (it links
 *    gbench.o, mk/gbench.mk) and runs gb_main in forked children: each must
 *    abort with its one-line "gbench: ..." message.
 * Whole binary: about 3 s plain (two short fb_bench runs and one compare.py).
 */
#include "tests/fb_test.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "src/gbench/gbench.h"

#define REPS     3
#define COMPARE  "/usr/share/benchmark/compare.py"
#define PYTHON   "/usr/bin/python3"
#define MIN_TIME "/min_time:0.020"  /* SELFTEST_MIN_TIME in the selftest file */

struct fixture {
	char dir[64];              /* mkdtemp scratch directory */
	char bench[PATH_MAX];      /* the fb_bench under test */
	char a_json[PATH_MAX];     /* --benchmark_out of the first run */
	char a_console[PATH_MAX];  /* its stdout: --benchmark_format=json */
	char a_stderr[PATH_MAX];
	json_t *a;                 /* a_json parsed */
};
static struct fixture fx;

/* ---- helpers ---- */

/* Run argv (argv[0] a path); stdout to out (or /dev/null), stderr to err (or
 * the same).  Returns the wait status, or -1 if fork failed. */
static int run(char *const argv[], const char *out, const char *err)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fo = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int fe = err ? open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644) : fo;

		if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return status;
}

static bool exited_0(int status)
{
	return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static void fixture_path(char *dst, const char *name)
{
	snprintf(dst, PATH_MAX, "%s/%s", fx.dir, name);
}

/* fb_bench beside this binary's directory: $(BUILD)/tests/.. */
static int find_fb_bench(void)
{
	const char *env = getenv("FB_BENCH");
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env) {
		snprintf(fx.bench, sizeof(fx.bench), "%s", env);
	} else {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n <= 0)
			return -1;
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (!slash)
			return -1;
		*slash = '\0';
		if (snprintf(fx.bench, sizeof(fx.bench), "%s/../fb_bench", self) >= (int)sizeof(fx.bench))
			return -1;
	}
	return access(fx.bench, X_OK);
}

static double num(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	if (!json_is_number(v))
		fail_msg("%s: no number \"%s\"", json_string_value(json_object_get(obj, "name")), key);
	return json_number_value(v);
}

static void expect_near(const json_t *run, const char *key, double want, double rel)
{
	double got = num(run, key);
	double tol = rel * (want < 0 ? -want : want);

	if (!(got >= want - tol && got <= want + tol))
		fail_msg("%s: %s = %.17g, expected %.17g (rel. tolerance %g)",
			 json_string_value(json_object_get(run, "name")), key, got, want, rel);
}

static bool str_is(const json_t *obj, const char *key, const char *want)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s && strcmp(s, want) == 0;
}

/* The iteration runs (not aggregates) named `name`, up to max; returns the count. */
static size_t iteration_runs(const char *name, const json_t **out, size_t max)
{
	const json_t *runs = json_object_get(fx.a, "benchmarks"), *r;
	size_t i, n = 0;

	json_array_foreach(runs, i, r)
		if (str_is(r, "name", name) && str_is(r, "run_type", "iteration") && n < max)
			out[n++] = r;
	return n;
}

static const json_t *aggregate(const char *run_name, const char *agg)
{
	const json_t *runs = json_object_get(fx.a, "benchmarks"), *r;
	size_t i;

	json_array_foreach(runs, i, r)
		if (str_is(r, "run_name", run_name) && str_is(r, "run_type", "aggregate") &&
		    str_is(r, "aggregate_name", agg))
			return r;
	return NULL;
}

/* All REPS repetitions of `name`, each must exist. */
static void reps_of(const char *name, const json_t *out[REPS])
{
	size_t n = iteration_runs(name, out, REPS);

	if (n != REPS)
		fail_msg("%s: %zu iteration runs, expected %d", name, n, REPS);
}

/* ---- the fixture: one fb_bench run shared by the JSON tests ---- */

static int group_setup(void **state)
{
	char filter[] = "--benchmark_filter=^selftest_", reps[32], out[PATH_MAX + 32];
	char fmt[] = "--benchmark_format=json", ofmt[] = "--benchmark_out_format=json";
	char *argv[] = {fx.bench, filter, reps, out, ofmt, fmt, NULL};
	json_error_t jerr;
	int status;

	snprintf(fx.dir, sizeof(fx.dir), "/tmp/test_gbench.XXXXXX");
	if (!mkdtemp(fx.dir)) {
		fprintf(stderr, "test_gbench: mkdtemp: %s\n", strerror(errno));
		return -1;
	}
	if (find_fb_bench()) {
		fprintf(stderr, "test_gbench: %s not found or not executable: build it first "
			"(make BUILD=... $BUILD/fb_bench) or set FB_BENCH\n", fx.bench);
		return -1;
	}
	fixture_path(fx.a_json, "a.json");
	fixture_path(fx.a_console, "a.console.json");
	fixture_path(fx.a_stderr, "a.stderr");
	snprintf(reps, sizeof(reps), "--benchmark_repetitions=%d", REPS);
	snprintf(out, sizeof(out), "--benchmark_out=%s", fx.a_json);
	status = run(argv, fx.a_console, fx.a_stderr);
	if (!exited_0(status)) {
		fprintf(stderr, "test_gbench: %s failed (wait status 0x%x), its stderr is in %s\n",
			fx.bench, status, fx.a_stderr);
		return -1;
	}
	fx.a = json_load_file(fx.a_json, 0, &jerr);
	if (!fx.a) {
		fprintf(stderr, "test_gbench: %s:%d: %s\n", fx.a_json, jerr.line, jerr.text);
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	static const char *const files[] = {"a.json", "a.console.json", "a.stderr", "b.json",
					    "compare.out", "bad.out", "child.err"};
	char p[PATH_MAX];

	json_decref(fx.a);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		fixture_path(p, files[i]);
		unlink(p);
	}
	rmdir(fx.dir);
	return 0;
}

/* ---- fb_bench output ---- */

/* Exactly the expected selftest names, REPS times each; names carry the args,
 * arg names, threads, real/manual time and fixed iterations. */
static void names_args_threads(void **state)
{
	static const char *const want[] = {
		"selftest_empty_loop" MIN_TIME,
		"selftest_empty_loop_clobber" MIN_TIME,
		"selftest_empty_loop_batch" MIN_TIME,
		"selftest_batch_overshoot/64/iterations:100",
		"selftest_batch_overshoot/7/iterations:100",
		"selftest_batch_overshoot/1000/iterations:100",
		"selftest_counters" MIN_TIME "/real_time",
		"selftest_threads" MIN_TIME "/threads:2",
		"selftest_args/n:8/m:3" MIN_TIME,
		"selftest_args/n:64/m:3" MIN_TIME,
		"selftest_pause_resume/iterations:10/real_time",
		"selftest_setup_teardown/5" MIN_TIME "/threads:2",
		"selftest_manual_time/iterations:100/manual_time",
		"selftest_skip_with_error/iterations:10/threads:2",
	};
	const size_t nwant = sizeof(want) / sizeof(want[0]);
	const json_t *runs = json_object_get(fx.a, "benchmarks"), *r, *reps[REPS];
	size_t i, total = 0;

	for (i = 0; i < nwant; i++) {
		reps_of(want[i], reps);
		assert_int_equal(num(reps[0], "threads"), strstr(want[i], "/threads:2") ? 2 : 1);
		for (int k = 0; k < REPS; k++)
			assert_int_equal(num(reps[k], "repetition_index"), k);
	}
	json_array_foreach(runs, i, r)
		total += str_is(r, "run_type", "iteration");
	assert_int_equal(total, nwant * REPS);  /* nothing unexpected */

	const json_t *ra = NULL;
	assert_int_equal(iteration_runs("selftest_args/n:64/m:3" MIN_TIME, &ra, 1), 1);
	assert_int_equal(num(ra, "n"), 64);
	assert_int_equal(num(ra, "m"), 3);
}

/* --benchmark_format=json on stdout is the same report as --benchmark_out. */
static void console_json_matches_file(void **state)
{
	json_error_t jerr;
	json_t *c = json_load_file(fx.a_console, 0, &jerr);

	if (!c)
		fail_msg("%s:%d: %s", fx.a_console, jerr.line, jerr.text);
	assert_int_equal(json_array_size(json_object_get(c, "benchmarks")),
			 json_array_size(json_object_get(fx.a, "benchmarks")));
	json_decref(c);
}

/* Every GB_COUNTER_* flag against the values the benchmark set: one thread,
 * real time, so the rate denominator is real_time * iterations. */
static void counter_flags_arithmetic(void **state)
{
	const json_t *reps[REPS];

	reps_of("selftest_counters" MIN_TIME "/real_time", reps);
	for (int k = 0; k < REPS; k++) {
		const json_t *r = reps[k];
		double iters = num(r, "iterations");
		double s_per_iter = num(r, "real_time") * 1e-9;

		assert_true(str_is(r, "time_unit", "ns"));
		assert_true(str_is(r, "label", "selftest"));
		expect_near(r, "loop_iterations", iters, 0);
		expect_near(r, "plain", 42, 0);
		expect_near(r, "avg_threads", 10, 0);
		expect_near(r, "avg_iterations", 2, 1e-12);
		expect_near(r, "inverted", 0.25, 1e-12);
		expect_near(r, "invariant", 7 * iters, 1e-12);
		/* rates are per second: value / (s per iteration * iterations) */
		expect_near(r, "rate", 3 / s_per_iter, 1e-6);
		expect_near(r, "avg_threads_rate", 5 / s_per_iter, 1e-6);
		expect_near(r, "invariant_rate", 7 / s_per_iter, 1e-6);
		expect_near(r, "avg_iterations_rate", 2 / (s_per_iter * iters), 1e-6);
		expect_near(r, "items_per_second", 6 / s_per_iter, 1e-6);
		expect_near(r, "bytes_per_second", 1024 / s_per_iter, 1e-6);
	}
}

/* Two threads: counters are summed over threads, then the flags apply. */
static void thread_counters_summed(void **state)
{
	const json_t *reps[REPS];

	reps_of("selftest_threads" MIN_TIME "/threads:2", reps);
	for (int k = 0; k < REPS; k++) {
		expect_near(reps[k], "threads_sum", 2, 0);
		expect_near(reps[k], "threads_avg", 5, 0);
		expect_near(reps[k], "avg_iterations", 2, 1e-12);
		expect_near(reps[k], "index_sum", 1, 0);
		expect_near(reps[k], "count", 2, 0);
		/* Google Benchmark 1.7: a rate divides by the CPU time summed over
		 * the threads, so this is 1 / (cpu_time per iteration). */
		expect_near(reps[k], "rate", 1e9 / num(reps[k], "cpu_time"), 1e-6);
	}
}

/* gb_keep_running_batch: the overshoot is run, counted and reported. */
static void batch_overshoot_counted(void **state)
{
	static const struct { const char *name; double iters; } want[] = {
		{"selftest_batch_overshoot/64/iterations:100", 128},
		{"selftest_batch_overshoot/7/iterations:100", 105},
		{"selftest_batch_overshoot/1000/iterations:100", 1000},
	};
	const json_t *reps[REPS];

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		reps_of(want[i].name, reps);
		expect_near(reps[0], "iterations", want[i].iters, 0);
		expect_near(reps[0], "iterations_seen", want[i].iters, 0);
		expect_near(reps[0], "gb_iterations", want[i].iters, 0);
	}
	reps_of("selftest_empty_loop_batch" MIN_TIME, reps);
	for (int k = 0; k < REPS; k++) {
		expect_near(reps[k], "iterations_seen", num(reps[k], "iterations"), 0);
		expect_near(reps[k], "gb_iterations", num(reps[k], "iterations"), 0);
	}
}

/* Each iteration sleeps 2 ms with the timer paused: the reported real time
 * per iteration must not contain it. */
static void pause_excluded_from_time(void **state)
{
	const json_t *reps[REPS];

	reps_of("selftest_pause_resume/iterations:10/real_time", reps);
	for (int k = 0; k < REPS; k++) {
		expect_near(reps[k], "pauses", 10, 0);
		assert_true(str_is(reps[k], "time_unit", "ns"));
		if (num(reps[k], "real_time") >= num(reps[k], "paused_ns"))
			fail_msg("paused time was measured: %.0f ns per iteration", num(reps[k], "real_time"));
	}
}

static void setup_teardown_around_run(void **state)
{
	const json_t *reps[REPS];

	reps_of("selftest_setup_teardown/5" MIN_TIME "/threads:2", reps);
	for (int k = 0; k < REPS; k++) {
		expect_near(reps[k], "open_setups", 1, 0);  /* setup ran, teardown not yet */
		expect_near(reps[k], "setup_arg", 10, 0);   /* gb_arg * gb_thread_count in setup */
	}
}

static void manual_time_reported(void **state)
{
	const json_t *reps[REPS];

	reps_of("selftest_manual_time/iterations:100/manual_time", reps);
	assert_true(str_is(reps[0], "time_unit", "ms"));
	expect_near(reps[0], "real_time", 1.0, 1e-9);
}

static void skip_with_error_reported(void **state)
{
	const json_t *reps[REPS];

	reps_of("selftest_skip_with_error/iterations:10/threads:2", reps);
	assert_true(json_is_true(json_object_get(reps[0], "error_occurred")));
	assert_true(str_is(reps[0], "error_message",
			   "deliberate: checks that gb_skip_with_error is reported"));
}

/* --benchmark_repetitions gives mean, median, stddev and cv aggregates. */
static void repetitions_aggregates(void **state)
{
	const char *run = "selftest_counters" MIN_TIME "/real_time";
	static const char *const aggs[] = {"mean", "median", "stddev", "cv"};
	const json_t *a;

	for (size_t i = 0; i < 4; i++) {
		a = aggregate(run, aggs[i]);
		if (!a)
			fail_msg("%s: no %s aggregate", run, aggs[i]);
		expect_near(a, "repetitions", REPS, 0);
	}
	expect_near(aggregate(run, "mean"), "avg_iterations", 2, 1e-12);
	expect_near(aggregate(run, "median"), "plain", 42, 0);
	expect_near(aggregate(run, "stddev"), "plain", 0, 0);
	assert_true(str_is(aggregate(run, "cv"), "aggregate_unit", "percentage"));
}

/* bench_main.c's gb_add_context keys, with this build's values. */
static void context_has_build_keys(void **state)
{
	const json_t *ctx = json_object_get(fx.a, "context");
	const char *rev = json_string_value(json_object_get(ctx, "fb_git_rev"));

	assert_non_null(ctx);
	assert_true(str_is(ctx, "fb_build_type", FB_BUILD_TYPE));
	assert_true(str_is(ctx, "fb_build_cflags", FB_BUILD_CFLAGS));
	assert_non_null(rev);
	assert_true(strlen(rev) > 0);
	assert_non_null(json_object_get(ctx, "num_cpus"));  /* Google's own keys stay */
}

/* compare.py, unchanged, on two runs. */
static void compare_py_accepts_two_runs(void **state)
{
	char b_json[PATH_MAX], out[PATH_MAX + 32], cmp_out[PATH_MAX];
	char filter[] = "--benchmark_filter=^selftest_(counters|args|threads)";
	char reps[] = "--benchmark_repetitions=3", ofmt[] = "--benchmark_out_format=json";
	char *bench_argv[] = {fx.bench, filter, reps, out, ofmt, NULL};
	char py[] = PYTHON, cmp[] = COMPARE, mode[] = "benchmarks";
	char *cmp_argv[] = {py, cmp, mode, fx.a_json, b_json, NULL};
	char imp[] = "-c", code[] = "import scipy, numpy";
	char *probe_argv[] = {py, imp, code, NULL};
	char *text;
	int status;

	if (access(COMPARE, R_OK) != 0)
		fb_skip(COMPARE " missing (Debian package libbenchmark-tools)");
	if (access(PYTHON, X_OK) != 0 || !exited_0(run(probe_argv, NULL, NULL)))
		fb_skip("compare.py needs python3-scipy and python3-numpy for " PYTHON);
	fixture_path(b_json, "b.json");
	fixture_path(cmp_out, "compare.out");
	snprintf(out, sizeof(out), "--benchmark_out=%s", b_json);
	assert_true(exited_0(run(bench_argv, NULL, NULL)));
	status = run(cmp_argv, cmp_out, NULL);
	if (!exited_0(status))
		fail_msg("compare.py failed (wait status 0x%x), output in %s", status, cmp_out);
	text = slurp(cmp_out);
	assert_non_null(text);
	assert_non_null(strstr(text, "selftest_counters" MIN_TIME "/real_time_pvalue"));
	free(text);
}

/* Google Benchmark's flag handling is the driver's: a bad flag and a filter
 * that matches nothing both exit 1 with a message. */
static void driver_errors_exit_1(void **state)
{
	char bad[] = "--benchmark_no_such_flag", nomatch[] = "--benchmark_filter=^no_such_benchmark$";
	char *argv1[] = {fx.bench, bad, NULL}, *argv2[] = {fx.bench, nomatch, NULL};
	char out[PATH_MAX], *text;
	int status;

	fixture_path(out, "bad.out");
	status = run(argv1, out, NULL);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	text = slurp(out);
	assert_non_null(text);
	assert_non_null(strstr(text, "unrecognized command-line flag: --benchmark_no_such_flag"));
	free(text);

	status = run(argv2, out, NULL);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	text = slurp(out);
	assert_non_null(text);
	assert_non_null(strstr(text, "Failed to match any benchmarks"));
	free(text);
}

/* ---- misuse, in this process's own registry, checked in forked children ---- */

static void misuse_early_return(gb_state *st)
{
	(void)gb_keep_running(st);  /* one iteration, then leave the loop unfinished */
}
GB_BENCHMARK(misuse_early_return, gb_iterations_fixed(b, 5))

static void misuse_arg(gb_state *st)
{
	while (gb_keep_running(st)) {
	}
	gb_counter(st, "x", (double)gb_arg(st, 1), GB_COUNTER_DEFAULT);
}
GB_BENCHMARK(misuse_arg, gb_arg_add(b, 1); gb_iterations_fixed(b, 5))

static void misuse_counter_flag(gb_state *st)
{
	while (gb_keep_running(st)) {
	}
	gb_counter(st, "x", 1, 1u << 5);
}
GB_BENCHMARK(misuse_counter_flag, gb_iterations_fixed(b, 5))

static void misuse_batch_n(gb_state *st)
{
	while (gb_keep_running_batch(st, 0)) {
	}
}
GB_BENCHMARK(misuse_batch_n, gb_iterations_fixed(b, 5))

/* An error before the loop: the function may return at once, also while
 * another thread of the run is in its loop (it must not wait for this one). */
static void early_error_returns(gb_state *st)
{
	if (gb_thread_index(st) == 0) {
		gb_skip_with_error(st, "early");
		return;
	}
	while (gb_keep_running(st)) {
	}
}
GB_BENCHMARK(early_error_returns, gb_threads(b, 2); gb_iterations_fixed(b, 5))

enum child_action { RUN_FILTER, REGISTER_DUPLICATE, REGISTER_AFTER_MAIN, CONTEXT_CODES };

static int child_main(enum child_action what, const char *filter)
{
	char arg0[] = "test_gbench", flt[128], *argv[] = {arg0, flt, NULL};

	snprintf(flt, sizeof(flt), "--benchmark_filter=%s", filter ? filter : "^$");
	switch (what) {
	case RUN_FILTER:
		return gb_main(2, argv);
	case REGISTER_DUPLICATE:
		gb_register("misuse_arg", misuse_arg);
		return 0;
	case REGISTER_AFTER_MAIN:
		(void)gb_main(2, argv);
		gb_register("late", misuse_arg);
		return 0;
	case CONTEXT_CODES:
		/* Exit code: 0 if every return value is as documented, else the step. */
		if (gb_add_context("k", "v") != 0)
			return 10;
		if (gb_add_context("k", "w") != -EEXIST)
			return 11;
		if (gb_add_context("date", "x") != -EEXIST)
			return 12;
		if (gb_add_context("", "x") != -EINVAL || gb_add_context(NULL, "x") != -EINVAL ||
		    gb_add_context("k2", NULL) != -EINVAL)
			return 13;
		return gb_main(2, argv) == 1 ? 0 : 14;  /* "^$" matches nothing */
	}
	return 99;
}

/* Fork; the child does `what` with stderr to child.err and exits with its
 * result.  Returns the wait status; *err gets the child's stderr (free it). */
static int in_child(enum child_action what, const char *filter, char **err)
{
	char path[PATH_MAX];
	pid_t pid;
	int status;

	fixture_path(path, "child.err");
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int devnull = open("/dev/null", O_WRONLY);

		if (fd < 0 || devnull < 0 || dup2(fd, 2) < 0 || dup2(devnull, 1) < 0)
			_exit(126);
		exit(child_main(what, filter));  /* exit, not _exit: LeakSanitizer checks gb_main */
	}
	assert_true(waitpid(pid, &status, 0) == pid);
	*err = slurp(path);
	assert_non_null(*err);
	return status;
}

static void expect_abort(enum child_action what, const char *filter, const char *msg)
{
	char *err;
	int status = in_child(what, filter, &err);

	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT || !strstr(err, msg))
		fail_msg("expected abort with \"%s\"; wait status 0x%x, stderr:\n%s", msg, status, err);
	free(err);
}

static void misuse_aborts_with_message(void **state)
{
	expect_abort(RUN_FILTER, "^misuse_early_return/",
		     "gbench: misuse_early_return: returned before gb_keep_running() returned false");
	expect_abort(RUN_FILTER, "^misuse_arg/",
		     "gbench: misuse_arg: gb_arg(st, 1) but the benchmark has 1 argument(s)");
	expect_abort(RUN_FILTER, "^misuse_counter_flag",
		     "gbench: misuse_counter_flag: gb_counter(x): unknown flag bits 0x20");
	expect_abort(RUN_FILTER, "^misuse_batch_n",
		     "gbench: misuse_batch_n: gb_keep_running_batch(st, 0): n must be > 0");
	expect_abort(REGISTER_DUPLICATE, NULL, "gbench: gb_register: misuse_arg: name registered twice");
	expect_abort(REGISTER_AFTER_MAIN, NULL, "gbench: gb_register: late: registered after gb_main started");
}

static void early_error_does_not_hang(void **state)
{
	char *err;
	int status = in_child(RUN_FILTER, "^early_error_returns", &err);

	if (!exited_0(status))
		fail_msg("wait status 0x%x, stderr:\n%s", status, err);
	free(err);
}

static void add_context_return_codes(void **state)
{
	char *err;
	int status = in_child(CONTEXT_CODES, NULL, &err);

	if (!exited_0(status))
		fail_msg("step %d failed (wait status 0x%x), stderr:\n%s",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1, status, err);
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names_args_threads),
		cmocka_unit_test(console_json_matches_file),
		cmocka_unit_test(counter_flags_arithmetic),
		cmocka_unit_test(thread_counters_summed),
		cmocka_unit_test(batch_overshoot_counted),
		cmocka_unit_test(pause_excluded_from_time),
		cmocka_unit_test(setup_teardown_around_run),
		cmocka_unit_test(manual_time_reported),
		cmocka_unit_test(skip_with_error_reported),
		cmocka_unit_test(repetitions_aggregates),
		cmocka_unit_test(context_has_build_keys),
		cmocka_unit_test(compare_py_accepts_two_runs),
		cmocka_unit_test(driver_errors_exit_1),
		cmocka_unit_test(misuse_aborts_with_message),
		cmocka_unit_test(early_error_does_not_hang),
		cmocka_unit_test(add_context_return_codes),
	};

	return cmocka_run_group_tests_name(__FILE__, tests, group_setup, group_teardown);
}
