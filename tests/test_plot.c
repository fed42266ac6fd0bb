/* tests/test_plot.c — scripts/plot/fbplot.py: figures and report from fencebench JSON.
 *
 * Writes small result files of its own (jansson; the schema fencebench writes,
 * with round numbers, so every table row is known exactly), runs the script
 * with /usr/bin/python3 through posix_spawn and checks: the PNG figures exist
 * and are PNGs with a non-empty image, the SVGs are SVG, the report holds the
 * expected native-vs-legacy rows (suppression), latency rows beside their
 * machine limits, the embedded figures and the reproducing commands.  Bad
 * input (missing file, truncated JSON, JSON not written by fencebench) exits
 * 2 with one line naming the file and leaves the output directory untouched.
 *
 * The script path and the python are compiled in by mk/report.mk
 * (FB_PLOT_SCRIPT, FB_PLOT_PYTHON).  The figure test skips, saying why, when
 * that python cannot import matplotlib; the error-path tests need only python
 * (the script validates its inputs before it imports matplotlib).
 */
#include "tests/fb_test.h"
#include "tests/fb_test_exec.h"

#include <dirent.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef FB_PLOT_SCRIPT
#define FB_PLOT_SCRIPT "scripts/plot/fbplot.py"
#endif
#ifndef FB_PLOT_PYTHON
#define FB_PLOT_PYTHON "/usr/bin/python3"
#endif

static char tmpdir[] = "/tmp/fb_test_plot.XXXXXX";

static const char *tmp_path(const char *name)
{
	return fb_tmp_path(tmpdir, name);
}

/* Run argv (NULL-terminated), stdout and stderr captured apart; -1 status when it cannot start. */
static struct fb_exec_result spawn_capture(const char *const *argv)
{
	return fb_exec(tmpdir, argv, FB_EXEC_SEPARATE);
}

/* Run the plot script with the NULL-terminated args. */
static struct fb_exec_result plot_args(const char *const *args)
{
	const char *argv[32] = { FB_PLOT_PYTHON, FB_PLOT_SCRIPT };
	size_t n = 2;
	for (; args[n - 2]; n++)
		argv[n] = args[n - 2];
	argv[n] = NULL;
	return spawn_capture(argv);
}
#define PLOT(...) plot_args((const char *const[]){ __VA_ARGS__, NULL })

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* ---- synthetic result files: the shape fencebench writes ---- */

static json_t *context(const char *scenario, const char *cmd)
{
	return json_pack("{s:s, s:s, s:i, s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:b,"
			 " s:{s:f, s:f, s:f}, s:[], s:[s], s:[s, s, s]}",
			 "date", "2026-01-02T03:04:05+00:00", "host_name", "testhost",
			 "num_cpus", 2, "mhz_per_cpu", 2600, "cpu_model", "Test CPU",
			 "kernel", "Linux test", "fencebench_version", "0.1.0", "git_rev", "abc1234",
			 "build_type", "release", "scenario", scenario, "repetitions", 1,
			 "polling_threads", 1, "oversubscribed", 0,
			 "limits", "cacheline_rtt_ns", 80.0, "syscall_ns", 150.0, "futex_wake_ns", 20000.0,
			 "warnings", "notes", "a test note",
			 "command_line", "build/fencebench", "run", cmd);
}

/* One benchmark entry; counters as NULL-terminated name, value pairs (value as double). */
static json_t *bench(const char *scen, const char *section, const char *path, const char *waited,
		     const char *limit, ...)
{
	char name[128], point[32] = "";
	if (waited)
		snprintf(point, sizeof(point), "waited=%s", waited);
	snprintf(name, sizeof(name), "%s%s%s/path:%s%s%s", scen, *section ? "/" : "", section, path,
		 waited ? "/waited:" : "", waited ? waited : "");
	json_t *params = waited ? json_pack("{s:s}", "waited", waited) : json_object();
	json_t *fb = json_pack("{s:s, s:s, s:s, s:s, s:o, s:{}, s:{}}", "scenario", scen,
			       "section", section, "path", path, "point", point, "params", params,
			       "units", "limits");
	json_t *b = json_pack("{s:s, s:s, s:s, s:i, s:o}", "name", name, "run_name", name,
			      "run_type", "iteration", "repetitions", 1, "fencebench", fb);
	va_list ap;
	va_start(ap, limit);
	for (const char *k; (k = va_arg(ap, const char *));) {
		double v = va_arg(ap, double);
		json_object_set_new(b, k, json_real(v));
		const char *pct = strrchr(k, '_');
		if (limit && pct && pct[1] == 'p') {       /* a latency percentile: its limit */
			char lk[96];
			snprintf(lk, sizeof(lk), "%s_limit", k);
			json_object_set_new(b, lk, json_real(!strcmp(limit, "futex-wake") ? 20000.0 : 80.0));
			json_object_set_new(json_object_get(fb, "limits"), k, json_string(limit));
		}
	}
	va_end(ap);
	return b;
}

/* irq-suppression over waited = 0, 0.5, 1: 1000 signals; native raises 0, 500, 1000. */
static void write_sweep(const char *path)
{
	json_t *doc = json_pack("{s:o, s:[]}", "context", context("irq-suppression", "sweep"), "benchmarks");
	json_t *b = json_object_get(doc, "benchmarks");
	static const char *const w[] = { "0", "0.5", "1" };
	for (int i = 0; i < 3; i++) {
		double irq = 500.0 * i;
		json_array_append_new(b, bench("irq-suppression", "", "native", w[i], NULL,
			"signals", 1000.0, "interrupts", irq, "interrupts_per_signal", irq / 1000,
			"spurious_interrupts", 0.0, "lost_wakeups", 0.0, NULL));
		json_array_append_new(b, bench("irq-suppression", "", "legacy", w[i], NULL,
			"signals", 1000.0, "interrupts", 1000.0, "interrupts_per_signal", 1.0,
			"spurious_interrupts", 1000.0 - irq, "lost_wakeups", 0.0, NULL));
		json_array_append_new(b, bench("irq-suppression", "power", "native", w[i], NULL,
			"os_irq_wakeups", irq, "os_irq_wakeups_per_s", 10.0 * irq,
			"os_irq_idle_fraction", i ? 0.95 : 0.0, "isr_ns_per_irq", i ? 2000.0 : 0.0, NULL));
		json_array_append_new(b, bench("irq-suppression", "power", "legacy", w[i], NULL,
			"os_irq_wakeups", 1000.0, "os_irq_wakeups_per_s", 10000.0,
			"os_irq_idle_fraction", 0.9, "isr_ns_per_irq", 1000.0, NULL));
	}
	assert_int_equal(json_dump_file(doc, path, JSON_INDENT(1)), 0);
	json_decref(doc);
}

/* cpu-wait (limit: futex wake 20 us) and gpu-wait (limit: cache-line round trip 80 ns). */
static void write_latency(const char *path)
{
	json_t *doc = json_pack("{s:o, s:[]}", "context", context("cpu-wait", "cpu-wait"), "benchmarks");
	json_t *b = json_object_get(doc, "benchmarks");
	json_array_append_new(b, bench("cpu-wait", "", "native", NULL, "futex-wake",
		"cpu_wait_count", 1000.0, "cpu_wait_p50", 25000.0, "cpu_wait_p99", 60000.0,
		"signals", 1000.0, "interrupts", 1000.0, "lost_wakeups", 0.0, NULL));
	json_array_append_new(b, bench("cpu-wait", "", "legacy", NULL, "futex-wake",
		"cpu_wait_count", 1000.0, "cpu_wait_p50", 30000.0, "cpu_wait_p99", 90000.0,
		"signals", 1000.0, "interrupts", 1000.0, "lost_wakeups", 0.0, NULL));
	json_array_append_new(b, bench("gpu-wait", "", "native", NULL, "cacheline-rtt",
		"gpu_wait_count", 1000.0, "gpu_wait_p50", 200.0, "gpu_wait_p99", 40000.0,
		"signals", 1000.0, "interrupts", 0.0, "interrupts_per_signal", 0.0,
		"spurious_interrupts", 0.0, "lost_wakeups", 0.0, NULL));
	json_array_append_new(b, bench("gpu-wait", "", "legacy", NULL, "cacheline-rtt",
		"gpu_wait_count", 1000.0, "gpu_wait_p50", 28000.0, "gpu_wait_p99", 70000.0,
		"signals", 1000.0, "interrupts", 1000.0, "interrupts_per_signal", 1.0,
		"spurious_interrupts", 1000.0, "lost_wakeups", 0.0, NULL));
	assert_int_equal(json_dump_file(doc, path, JSON_INDENT(1)), 0);
	json_decref(doc);
}

/* cpu-wait with 3 repetitions: the iteration entries (p50 10 us), then Google Benchmark's
 * aggregates: mean 99 us, median 25 us (native) / 30 us (legacy), stddev 1 us. */
static json_t *as_aggregate(json_t *b, const char *agg)
{
	char name[160];
	snprintf(name, sizeof(name), "%s_%s", json_string_value(json_object_get(b, "name")), agg);
	json_object_set_new(b, "name", json_string(name));
	json_object_set_new(b, "run_type", json_string("aggregate"));
	json_object_set_new(b, "aggregate_name", json_string(agg));
	return b;
}

static void write_repeated(const char *path)
{
	json_t *ctx = context("cpu-wait", "cpu-wait");
	json_object_set_new(ctx, "repetitions", json_integer(3));
	json_t *doc = json_pack("{s:o, s:[]}", "context", ctx, "benchmarks");
	json_t *b = json_object_get(doc, "benchmarks");
	static const char *const paths[] = { "native", "legacy" };
	for (int i = 0; i < 2; i++) {
		for (int rep = 0; rep < 3; rep++)
			json_array_append_new(b, bench("cpu-wait", "", paths[i], NULL, "futex-wake",
				"cpu_wait_count", 100.0, "cpu_wait_p50", 10000.0, NULL));
		json_array_append_new(b, as_aggregate(bench("cpu-wait", "", paths[i], NULL, "futex-wake",
			"cpu_wait_count", 100.0, "cpu_wait_p50", 99000.0, NULL), "mean"));
		json_array_append_new(b, as_aggregate(bench("cpu-wait", "", paths[i], NULL, "futex-wake",
			"cpu_wait_count", 100.0, "cpu_wait_p50", i ? 30000.0 : 25000.0, NULL), "median"));
		json_array_append_new(b, as_aggregate(bench("cpu-wait", "", paths[i], NULL, "futex-wake",
			"cpu_wait_count", 100.0, "cpu_wait_p50", 1000.0, NULL), "stddev"));
	}
	assert_int_equal(json_dump_file(doc, path, JSON_INDENT(1)), 0);
	json_decref(doc);
}

/* ---- checks on the outputs ---- */

static unsigned be32(const unsigned char *p)
{
	return (unsigned)p[0] << 24 | (unsigned)p[1] << 16 | (unsigned)p[2] << 8 | p[3];
}

/* A PNG: signature, IHDR first, a non-empty image, and more than a header. */
static void assert_png(const char *path)
{
	unsigned char h[24];
	struct stat st;
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("%s: not written", path);
	size_t n = fread(h, 1, sizeof(h), f);
	fclose(f);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size > 1000);
	assert_int_equal(n, sizeof(h));
	assert_memory_equal(h, "\x89PNG\r\n\x1a\n", 8);
	assert_memory_equal(h + 12, "IHDR", 4);
	assert_true(be32(h + 16) >= 100 && be32(h + 20) >= 100);    /* width, height in pixels */
}

static void assert_svg(const char *path)
{
	char *s = fb_slurp(path);
	if (!s)
		fail_msg("%s: not written", path);
	assert_non_null(strstr(s, "<svg"));
	assert_non_null(strstr(s, "</svg>"));
	free(s);
}

static void assert_contains(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("report lacks the line\n  %s\n--- report ---\n%s", want, text);
}

/* Entries of dir other than . and .. (leftover temporaries count). */
static int dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static bool have_matplotlib(void)
{
	const char *argv[] = { FB_PLOT_PYTHON, "-c", "import matplotlib", NULL };
	struct fb_exec_result r = spawn_capture(argv);
	fb_exec_free(&r);
	return r.status == 0;
}

static void need_python(void)
{
	if (access(FB_PLOT_PYTHON, X_OK))
		fb_skip(FB_PLOT_PYTHON " not found (Debian's python3 runs scripts/plot/fbplot.py)");
	if (access(FB_PLOT_SCRIPT, R_OK))
		fail_msg("%s not found", FB_PLOT_SCRIPT);
}

/* ---- tests ---- */

static void plot_figures_and_report(void **state)
{
	need_python();
	if (!have_matplotlib())
		fb_skip(FB_PLOT_PYTHON " cannot import matplotlib (install python3-matplotlib)");
	const char *sweep = tmp_path("sweep.json"), *lat = tmp_path("latency.json");
	const char *out = tmp_path("out");
	write_sweep(sweep);
	write_latency(lat);
	struct fb_exec_result r = PLOT("-o", out, "--reproduce", "make report", sweep, lat);
	if (r.status != 0)
		fail_msg("fbplot exit %d\nstdout: %s\nstderr: %s", r.status, r.out, r.err);
	fb_exec_free(&r);

	static const char *const figs[] = { "irq_per_signal", "os_power", "latency" };
	char p[PATH_MAX];
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s.png", out, figs[i]);
		assert_png(p);
		snprintf(p, sizeof(p), "%s/%s.svg", out, figs[i]);
		assert_svg(p);
	}
	assert_int_equal(dir_entries(out), 7);       /* 3 PNG + 3 SVG + report.md, no temporaries */

	snprintf(p, sizeof(p), "%s/report.md", out);
	char *md = fb_slurp(p);
	assert_non_null(md);
	/* native vs legacy: workload, signals, irq native, irq legacy, irq/signal n, l, suppression,
	 * spurious n, l, lost wake-ups */
	assert_contains(md, "| irq-suppression waited=0 | 1000 | 0 | 1000 | 0 | 1 | 100.0% | 0 | 1000 | 0 |");
	assert_contains(md, "| irq-suppression waited=0.5 | 1000 | 500 | 1000 | 0.5 | 1 | 50.0% | 0 | 500 | 0 |");
	assert_contains(md, "| irq-suppression waited=1 | 1000 | 1000 | 1000 | 1 | 1 | 0.0% | 0 | 0 | 0 |");
	assert_contains(md, "| gpu-wait | 1000 | 0 | 1000 | 0 | 1 | 100.0% | 0 | 1000 | 0 |");
	/* power: a thread that never woke has no idle fraction to show */
	assert_contains(md, "| irq-suppression waited=0 | 0 | 10000 | n/a (0 wake-ups) | 0.9 | n/a (0 irq) | 1 µs |");
	assert_contains(md, "| irq-suppression waited=1 | 10000 | 10000 | 0.95 | 0.9 | 2 µs | 1 µs |");
	/* each latency beside its machine limit */
	assert_contains(md, "| cpu-wait | cpu_wait p50 | 25 µs | 30 µs | futex wake-to-run 20 µs | ×1.25 | ×1.5 |");
	assert_contains(md, "| cpu-wait | cpu_wait p99 | 60 µs | 90 µs | futex wake-to-run 20 µs | ×3 | ×4.5 |");
	assert_contains(md, "| gpu-wait | gpu_wait p50 | 200 ns | 28 µs | cache-line round trip 80 ns | ×2.5 | ×350 |");
	/* context, checks, figures, reproduction */
	assert_contains(md, "| host | testhost |");
	assert_contains(md, "| `sweep.json` | irq-suppression | 2026-01-02T03:04:05 |");
	assert_contains(md, "- Lost wake-ups: 0 in every run.");
	assert_contains(md, "- Note: a test note");
	assert_contains(md, "![Interrupts per GPU signal vs waited fraction](irq_per_signal.png)");
	assert_contains(md, "(latency.svg)");
	assert_contains(md, "```sh\nmake report\n```");
	assert_contains(md, "build/fencebench run sweep\n");
	assert_contains(md, "fbplot.py -o ");
	free(md);
}

/* With repetitions, the median aggregate stands for each run (not the mean, not one repetition). */
static void plot_median_of_repetitions(void **state)
{
	need_python();
	if (!have_matplotlib())
		fb_skip(FB_PLOT_PYTHON " cannot import matplotlib (install python3-matplotlib)");
	const char *in = tmp_path("repeated.json"), *out = tmp_path("out-reps");
	write_repeated(in);
	struct fb_exec_result r = PLOT("-o", out, "--formats", "png", in);
	if (r.status != 0)
		fail_msg("fbplot exit %d\nstderr: %s", r.status, r.err);
	fb_exec_free(&r);
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/latency.png", out);
	assert_png(p);
	snprintf(p, sizeof(p), "%s/latency.svg", out);
	assert_int_equal(access(p, F_OK), -1);             /* --formats png: no SVG */
	snprintf(p, sizeof(p), "%s/report.md", out);
	char *md = fb_slurp(p);
	assert_non_null(md);
	assert_contains(md, "| cpu-wait | cpu_wait p50 | 25 µs | 30 µs | futex wake-to-run 20 µs | ×1.25 | ×1.5 |");
	assert_contains(md, "_Interrupts per GPU signal vs waited fraction: not drawn");
	free(md);
}

static void plot_missing_input(void **state)
{
	need_python();
	const char *out = tmp_path("out-missing"), *nofile = tmp_path("no-such.json");
	struct fb_exec_result r = PLOT("-o", out, nofile);
	assert_int_equal(r.status, 2);
	assert_int_equal(fb_count_lines(r.err), 1);
	assert_non_null(strstr(r.err, "no-such.json: no such file"));
	assert_int_equal(access(out, F_OK), -1);     /* nothing written, not even the directory */
	fb_exec_free(&r);
}

struct bad_input {
	const char *text;
	const char *says;     /* what the one error line must contain */
};

static const struct bad_input bad_inputs[] = {
	{ "{\"context\": {}, \"benchmarks\": [", "not valid JSON (line 1" },
	{ "", "empty file" },
	{ "[1, 2]", "not a fencebench result file" },
	{ "{\"context\": {}, \"benchmarks\": []}", "\"benchmarks\" array is empty" },
	{ "{\"context\": {}, \"benchmarks\": [{\"name\": \"x\"}]}", "has no \"fencebench\" block" },
};

static void plot_malformed_input(void **state)
{
	need_python();
	const char *out = tmp_path("out-bad"), *bad = tmp_path("bad.json");
	char old[PATH_MAX];
	assert_int_equal(mkdir(out, 0755), 0);
	snprintf(old, sizeof(old), "%s/report.md", out);
	write_text(old, "previous report\n");
	for (size_t i = 0; i < sizeof(bad_inputs) / sizeof(bad_inputs[0]); i++) {
		write_text(bad, bad_inputs[i].text);
		struct fb_exec_result r = PLOT("-o", out, bad);
		if (r.status != 2 || fb_count_lines(r.err) != 1 || !strstr(r.err, "bad.json: ") ||
		    !strstr(r.err, bad_inputs[i].says))
			fail_msg("input %zu: exit %d, stderr: %s(wanted exit 2, one line naming bad.json: %s)",
				 i, r.status, r.err, bad_inputs[i].says);
		fb_exec_free(&r);
		char *s = fb_slurp(old);
		assert_string_equal(s, "previous report\n");      /* the old output untouched */
		free(s);
		assert_int_equal(dir_entries(out), 1);             /* no partial output, no temporaries */
	}
}

static void plot_usage(void **state)
{
	need_python();
	struct fb_exec_result r = PLOT("--help");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "usage: fbplot.py"));
	assert_non_null(strstr(r.out, "--out-dir"));
	assert_non_null(strstr(r.out, "Exit status"));
	fb_exec_free(&r);
	r = PLOT("--formats", "pdf", tmp_path("x.json"));
	assert_int_equal(r.status, 2);
	assert_int_equal(fb_count_lines(r.err), 1);
	assert_non_null(strstr(r.err, "--formats"));
	fb_exec_free(&r);
}

/* ---- fixture ---- */

static int setup(void **state)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	fb_remove_tree(tmpdir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plot_figures_and_report),
		cmocka_unit_test(plot_median_of_repetitions),
		cmocka_unit_test(plot_missing_input),
		cmocka_unit_test(plot_malformed_input),
		cmocka_unit_test(plot_usage),
	};
	return cmocka_run_group_tests_name(__FILE__, tests, setup, teardown);
}
