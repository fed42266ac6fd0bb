/* tests/test_noise.c — the noise warnings fire when the machine was not quiet (src/fb_noise.h), and doctor.
 *
 * A planted busy loop (a child spinning through the run) is warned about, in
 * the JSON context, on stderr and in the header of the report drawn from it,
 * with the processes named.  The checks
 * themselves from planted numbers: a limit that moved by more than 50 % (and
 * one that moved 40 %, which is not), the CPU time of others over a window
 * (and a window too short to judge), a fake sysfs tree with a powersave
 * governor, turbo, SMT siblings and a high load (and a quiet one), repetitions
 * that spread.  `fencebench doctor` prints every check and writes nothing.
 * Nothing is timed: a busy child takes a share of the CPUs whatever else
 * runs (under three more busy loops too).
 */
#include "tests/fb_test.h"
#include "tests/fb_test_exec.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/fb_hist.h"
#include "src/fb_noise.h"

#ifndef FB_PLOT_SCRIPT
#define FB_PLOT_SCRIPT "scripts/plot/fbplot.py"
#endif
#ifndef FB_PLOT_PYTHON
#define FB_PLOT_PYTHON "/usr/bin/python3"
#endif

static char fencebench[PATH_MAX + 16];
static char tmpdir[] = "/tmp/fb_test_noise.XXXXXX";

FB_TEST_FIXTURES(fencebench, sizeof(fencebench), tmpdir)

/* Warnings collected by the checks. */
struct seen {
	char text[8][768];
	int n;
};

static void collect(void *arg, const char *w)
{
	struct seen *s = arg;
	if (s->n < 8)
		snprintf(s->text[s->n++], sizeof(s->text[0]), "%s", w);
}

static bool seen_has(const struct seen *s, const char *part)
{
	for (int i = 0; i < s->n; i++)
		if (strstr(s->text[i], part))
			return true;
	return false;
}

/* ---- a planted busy loop, end to end ---- */

static pid_t spin_child(void)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(60);   /* never outlives a stuck test */
		for (volatile unsigned long i = 0;; i++)
			;
	}
	return pid;
}

static void busy_loop_is_warned(void **state)
{
	fb_need_binary(fencebench);
	pid_t child = spin_child();
	const char *argv[] = { fencebench, "run", "selftest", "--duration", "300ms", "--format", "json", NULL };
	struct fb_exec_result r = fb_exec(tmpdir, argv, FB_EXEC_SEPARATE);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_int_equal(r.status, 0);
	json_t *doc = json_loads(r.out, 0, NULL), *w, *ctx = json_object_get(doc, "context");
	assert_non_null(doc);
	size_t i;
	bool warned = false;
	json_array_foreach(json_object_get(ctx, "warnings"), i, w)
		warned = warned || strstr(json_string_value(w), "other processes took");
	json_t *win = json_object_get(json_object_get(ctx, "noise"), "window");
	if (!warned || !strstr(r.err, "***WARNING*** other processes took") ||
	    !json_array_size(json_object_get(win, "busy_processes")) || json_number_value(json_object_get(win, "others_cpu")) <= 0.2)
		fail_msg("a busy loop went unwarned:\n%s\n%s", r.err, json_dumps(json_object_get(ctx, "noise"), JSON_INDENT(1)));
	/* the limits were measured again after the run */
	assert_true(json_is_object(json_object_get(json_object_get(ctx, "noise"), "limits_after")));
	json_decref(doc);
	/* and the report says so in its header */
	const char *in = fb_tmp_path(tmpdir, "busy.json"), *out = fb_tmp_path(tmpdir, "report");
	FILE *f = fopen(in, "w");
	assert_non_null(f);
	fputs(r.out, f);
	fclose(f);
	fb_exec_free(&r);
	if (access(FB_PLOT_PYTHON, X_OK)) {
		fb_skip(FB_PLOT_PYTHON " not found (Debian's python3 draws the report)");
		return;
	}
	const char *plot[] = { FB_PLOT_PYTHON, FB_PLOT_SCRIPT, "-o", out, "--allow-dirty", in, NULL };
	r = fb_exec(tmpdir, plot, FB_EXEC_SEPARATE);
	if (r.status)
		fail_msg("fbplot: exit %d\n%s", r.status, r.err);
	fb_exec_free(&r);
	char *md = fb_slurp(fb_tmp_path(tmpdir, "report/report.md"));
	if (!md || !strstr(md, "**The machine was not quiet**") || !strstr(md, "- other processes took ") || !strstr(md, "(`busy.json`)"))
		fail_msg("the report's header does not say so:\n%.3000s", md ? md : "(no report.md)");
	free(md);
}

/* ---- the checks, from planted numbers ---- */

static void moved_limit_is_warned(void **state)
{
	struct fb_limits before = { .cacheline_rtt_ns = 50, .futex_wake_ns = 30000 };
	struct fb_limits after = { .cacheline_rtt_ns = 420, .futex_wake_ns = 31000 };
	struct seen s = { .n = 0 };
	fb_noise_check_limits(&before, &after, collect, &s);
	assert_int_equal(s.n, 1);
	assert_true(seen_has(&s, "the cache-line round trip moved from 50 ns before the run to 420 ns after (up by 8.40x, more than 1.50x"));
	after.cacheline_rtt_ns = 70;          /* +40 %: inside the 50 % */
	after.futex_wake_ns = 12000;          /* 2.5x faster: moved */
	s.n = 0;
	fb_noise_check_limits(&before, &after, collect, &s);
	assert_int_equal(s.n, 1);
	assert_true(seen_has(&s, "futex wake-to-run moved from 30.0 us before the run to 12.0 us after (down by 2.50x, more than 1.50x"));
	after.futex_wake_ns = 24100;          /* 1.75x apart: judged on the ratio, said as the ratio */
	before.futex_wake_ns = 42100;
	s.n = 0;
	fb_noise_check_limits(&before, &after, collect, &s);
	assert_int_equal(s.n, 1);
	assert_true(seen_has(&s, "42.1 us before the run to 24.1 us after (down by 1.75x, more than 1.50x either way)"));
	assert_false(seen_has(&s, "more than 50 %"));   /* never a percentage the rule did not test */
	before.futex_wake_ns = 30000;
	after.futex_wake_ns = NAN;            /* not measured after: nothing to say */
	s.n = 0;
	fb_noise_check_limits(&before, &after, collect, &s);
	assert_int_equal(s.n, 0);
}

static void others_cpu_time_is_warned(void **state)
{
	long tck = sysconf(_SC_CLK_TCK);
	struct fb_noise_proc pa[] = { { 5, "cc1", 10 }, { 9, "idle", 3 } };
	struct fb_noise_proc pb[] = { { 5, "cc1", 10 + (uint64_t)tck / 2 }, { 9, "idle", 3 }, { 12, "new", (uint64_t)tck / 10 } };
	struct fb_noise_snap a = { .t_ns = 0, .self_cpu_ns = 0, .busy = 0, .steal = 0, .total = 0, .procs = pa, .nprocs = 2 };
	struct fb_noise_snap b = { .t_ns = 1000000000, .self_cpu_ns = 300000000, .busy = (uint64_t)tck,
				   .steal = (uint64_t)tck / 5, .total = 2 * (uint64_t)tck, .procs = pb, .nprocs = 3 };
	struct fb_noise_window w;
	fb_noise_between(&a, &b, &w);
	assert_true(fabs(w.others_cpu - 0.7) < 1e-9);    /* 1 s busy less 0.3 s of ours, over 1 s */
	assert_true(fabs(w.steal - 0.1) < 1e-9);
	assert_int_equal(w.ntop, 2);                     /* idle took nothing: not named */
	assert_int_equal(w.top[0].pid, 5);
	assert_int_equal(w.top[1].pid, 12);              /* started in the window: all of it counts */
	struct seen s = { .n = 0 };
	fb_noise_check_window(&w, "0-1", collect, &s);
	assert_int_equal(s.n, 2);
	assert_true(seen_has(&s, "other processes took 70 % of a CPU on CPUs 0-1 during the run (1.0 s): cc1 (pid 5) 50 %, new (pid 12) 10 %"));
	assert_true(seen_has(&s, "the hypervisor took 10.0 % of CPUs 0-1"));
	b.busy = (uint64_t)tck / 2;                      /* others 0.2: at the threshold, not above */
	b.steal = 0;
	fb_noise_between(&a, &b, &w);
	s.n = 0;
	fb_noise_check_window(&w, "0-1", collect, &s);
	assert_int_equal(s.n, 0);
	b.t_ns = 50000000;                               /* 50 ms: too short to judge */
	fb_noise_between(&a, &b, &w);
	assert_true(isnan(w.others_cpu));
	fb_noise_check_window(&w, "0-1", collect, &s);
	assert_int_equal(s.n, 0);
}

/* A fake root of the files fb_noise_machine reads, CPUs 0 and 1 online. */
static const char *fake_tree(const char *name, const char *gov0, const char *gov1, const char *siblings0,
			     const char *no_turbo, const char *loadavg)
{
	static char root[PATH_MAX];
	snprintf(root, sizeof(root), "%s/%s", tmpdir, name);
	fb_write_file(root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", gov0);
	fb_write_file(root, "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", gov1);
	fb_write_file(root, "sys/devices/system/cpu/cpu0/topology/thread_siblings_list", siblings0);
	fb_write_file(root, "sys/devices/system/cpu/intel_pstate/no_turbo", no_turbo);
	fb_write_file(root, "sys/devices/system/cpu/online", "0-1\n");
	fb_write_file(root, "proc/loadavg", loadavg);
	return root;
}

static void machine_checks_read_sysfs(void **state)
{
	int cpus[] = { 0, 1 };
	struct fb_noise_machine m;
	struct seen s = { .n = 0 };
	fb_noise_machine(fake_tree("noisy", "powersave\n", "performance\n", "0-1\n", "0\n", "9.50 3.00 1.00 2/100 1234\n"),
			 cpus, 2, &m);
	fb_noise_check_machine(&m, collect, &s);
	assert_int_equal(s.n, 4);
	assert_true(seen_has(&s, "CPU frequency scaling governor powersave on CPU 0 (not 'performance')"));
	assert_true(seen_has(&s, "turbo boost is on"));
	assert_true(seen_has(&s, "CPUs 0 and 1 of the run are SMT siblings of one core"));
	assert_true(seen_has(&s, "load average 9.50 over the last minute on 2 CPUs"));
	/* quiet: performance everywhere, turbo off, one CPU per core, low load */
	s.n = 0;
	fb_noise_machine(fake_tree("quiet", "performance\n", "performance\n", "0\n", "1\n", "0.10 0.20 0.30 1/100 1234\n"),
			 cpus, 2, &m);
	fb_noise_check_machine(&m, collect, &s);
	assert_int_equal(s.n, 0);
	assert_string_equal(m.governor, "performance");
	assert_int_equal(m.turbo, 0);
}

static void spread_of_repetitions_is_warned(void **state)
{
	json_t *entries = json_pack(
		"[{s:s, s:s, s:i, s:f, s:f, s:f, s:f, s:f, s:{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s}}}]",
		"run_type", "aggregate", "aggregate_name", "cv", "repetitions", 3, "wait_p50", 0.3, "wait_p99", 0.5,
		"perf.app.task-clock", 0.9, "interrupts", 0.05, "wait_count", 0.4, "fencebench", "section", "latency",
		"path", "legacy", "units", "wait_p50", "ns", "wait_p99", "ns", "perf.app.task-clock", "ns", "interrupts",
		"irq", "wait_count", "samples");
	struct seen s = { .n = 0 };
	fb_noise_check_cv(entries, "waited=0.5", collect, &s);
	assert_int_equal(s.n, 1);
	assert_true(seen_has(&s, "at waited=0.5: coefficient of variation above 10 % across 3 repetitions in 1 metric "
				 "(worst: latency wait_p50 legacy, 30 %; above 10 % even at its 95 % lower bound, 16 %)"));
	json_object_set_new(json_array_get(entries, 0), "wait_p50", json_real(0.08));
	s.n = 0;
	fb_noise_check_cv(entries, "", collect, &s);
	assert_int_equal(s.n, 0);
	/* 15 % from 3 values is within what 3 values' own spread allows (lower
	 * bound 8 %); from 30 it is not (12 %) */
	json_object_set_new(json_array_get(entries, 0), "wait_p50", json_real(0.15));
	fb_noise_check_cv(entries, "", collect, &s);
	assert_int_equal(s.n, 0);
	json_object_set_new(json_array_get(entries, 0), "repetitions", json_integer(30));
	fb_noise_check_cv(entries, "", collect, &s);
	assert_int_equal(s.n, 1);
	assert_true(seen_has(&s, "above 10 % even at its 95 % lower bound, 12 %"));
	/* the time per iteration of the main section too */
	json_t *main_cv = json_pack("{s:s, s:s, s:i, s:f, s:f, s:{s:s, s:s, s:{}}}", "run_type", "aggregate",
				    "aggregate_name", "cv", "repetitions", 6, "real_time", 0.4, "cpu_time", 0.02,
				    "fencebench", "section", "", "path", "native", "units");
	json_t *only = json_pack("[o]", main_cv);
	s.n = 0;
	fb_noise_check_cv(only, "", collect, &s);
	assert_int_equal(s.n, 1);
	assert_true(seen_has(&s, "in 1 metric (worst: real_time native, 40 %"));
	json_decref(only);
	json_decref(entries);
}

/* ---- doctor ---- */

/* The futex wake-to-run limit past its budget answers -ETIMEDOUT, however
 * its two threads meet the deadline: one of them, or both at once (a busy
 * machine can preempt one between its look at the other's abort flag and its
 * own store).  The answer is read after the joins, never stored by both
 * threads: under ThreadSanitizer (make tsan) that store was a data race. */
static void futex_wake_past_its_budget_times_out(void **state)
{
	(void)state;
	for (int i = 0; i < 50; i++) {
		struct fb_hist *h = fb_hist_new();
		int rc = fb_limits_futex_wake(0, 1, 100000, 200, 20, h);
		if (rc != -ETIMEDOUT)
			fail_msg("try %d: 100000 wakes within 20 ms answer %d, not -ETIMEDOUT", i, rc);
		assert_true(fb_hist_count(h) < 100000);
		fb_hist_free(h);
	}
}

static void doctor_prints_every_check_and_writes_nothing(void **state)
{
	fb_need_binary(fencebench);
	const char *argv[] = { fencebench, "doctor", "--cpus", "0", NULL };
	struct fb_exec_result r = fb_exec(tmpdir, argv, FB_EXEC_SEPARATE);
	assert_int_equal(r.status, 0);
	static const char *const want[] = {
		"(reads only; changes nothing)", "a run would use CPUs 0 (--cpus)", " governor ", " turbo ", " SMT ",
		" isolation ", " load average ", " other processes ", " steal ", " limits ", " perf ",
		" checks say the machine is not quiet",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(r.out, want[i]))
			fail_msg("doctor lacks '%s':\n%s", want[i], r.out);
	fb_exec_free(&r);
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	while ((e = readdir(d)))   /* what the other tests left, and nothing else */
		if (e->d_name[0] != '.' && strcmp(e->d_name, "noisy") && strcmp(e->d_name, "quiet") &&
		    strcmp(e->d_name, "busy.json") && strcmp(e->d_name, "report"))
			fail_msg("doctor wrote %s", e->d_name);
	closedir(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(busy_loop_is_warned),
		cmocka_unit_test(moved_limit_is_warned),
		cmocka_unit_test(others_cpu_time_is_warned),
		cmocka_unit_test(machine_checks_read_sysfs),
		cmocka_unit_test(spread_of_repetitions_is_warned),
		cmocka_unit_test(futex_wake_past_its_budget_times_out),
		cmocka_unit_test(doctor_prints_every_check_and_writes_nothing),
	};
	return cmocka_run_group_tests_name(__FILE__, tests, setup, teardown);
}
