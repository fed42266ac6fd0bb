/* tests/test_costs.c — honest costs (issue 19): what the native fence saves
 * is reported per unit of work (per GPU signal, per frame), so that two
 * paths that took different times for the same work compare equal work,
 * and the power proxy's rates are compared at an equal paced rate.
 * Through the fencebench binary's JSON, as a user reads it:
 *   - the headline's summary leads with the per-signal rows (interrupts,
 *     OS interrupt-thread CPU and wake-ups, application CPU), holds the
 *     equal-rate rows with the same rate on both paths, and no longer the
 *     rates over each path's own span (those are in "power", with span_ms);
 *   - every per-unit row is the region's total over its units, for every
 *     CPU-side role (app, os_irq, os_sched), in the headline, a fence
 *     scenario and a workload; its unit says ns/signal or us/frame;
 *   - counts, not speed: native handles a tenth of legacy's interrupts on
 *     the same signals, so its interrupt thread's CPU per signal is below
 *     legacy's; the scheduler thread runs only for kernel-mode submission.
 */
#include "tests/fb_test.h"
#include "tests/fb_test_exec.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

static char fencebench[PATH_MAX + 16];
static char tmpdir[] = "/tmp/fb_test_costs.XXXXXX";

static const char *const ROLES[] = { "app", "os_irq", "os_sched" };

static int setup(void **state)
{
	fb_build_path(fencebench, sizeof(fencebench), "fencebench");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	fb_remove_tree(tmpdir);
	return 0;
}

/* fencebench's JSON output of the NULL-terminated args (a new reference). */
static json_t *run_json(const char *const *args)
{
	fb_need_binary(fencebench);
	const char *argv[64] = { fencebench };
	size_t n = 1;
	for (; args[n - 1]; n++)
		argv[n] = args[n - 1];
	argv[n++] = "--format";
	argv[n++] = "json";
	argv[n++] = "-q";
	argv[n] = NULL;
	struct fb_exec_result r = fb_exec(tmpdir, argv, FB_EXEC_SEPARATE);
	if (r.status != 0)
		fail_msg("fencebench exited %d: %s", r.status, r.err ? r.err : "");
	json_error_t je;
	json_t *doc = json_loads(r.out, 0, &je);
	if (!doc)
		fail_msg("not JSON (%s at line %d)", je.text, je.line);
	fb_exec_free(&r);
	return doc;
}
#define RUN_JSON(...) run_json((const char *const[]){ __VA_ARGS__, NULL })

/* The iteration entry of section/path (the first point). */
static json_t *entry(json_t *doc, const char *section, const char *path)
{
	size_t i;
	json_t *b;
	json_array_foreach(json_object_get(doc, "benchmarks"), i, b) {
		json_t *fb = json_object_get(b, "fencebench");
		if (!strcmp(json_string_value(json_object_get(b, "run_type")), "iteration") &&
		    !strcmp(json_string_value(json_object_get(fb, "section")), section) &&
		    !strcmp(json_string_value(json_object_get(fb, "path")), path))
			return b;
	}
	fail_msg("no entry of section '%s' path %s", section, path);
	return NULL;
}

static const char *unit(json_t *b, const char *key)
{
	const char *u = json_string_value(json_object_get(json_object_get(json_object_get(b, "fencebench"), "units"), key));
	if (!u)
		fail_msg("%s: no unit for %s", json_string_value(json_object_get(b, "name")), key);
	return u;
}

/* a == b up to the rounding of two double operations. */
static void assert_same(double a, double b, const char *what)
{
	if (fabs(a - b) > 1e-9 * fmax(fabs(a), fabs(b)) + 1e-12)
		fail_msg("%s: %.17g != %.17g", what, a, b);
}

/* Every role's per-U rows of entry b are its totals over `units`, in the stated units. */
static void assert_per_unit(json_t *b, const char *u, double units)
{
	char per[64], total[64], what[160];
	bool frames = !strcmp(u, "frame");
	for (size_t i = 0; i < sizeof(ROLES) / sizeof(ROLES[0]); i++) {
		snprintf(per, sizeof(per), "%s_cpu_per_%s", ROLES[i], u);
		snprintf(total, sizeof(total), "%s_cpu_ms", ROLES[i]);
		assert_string_equal(unit(b, per), frames ? "us/frame" : "ns/signal");
		assert_string_equal(unit(b, total), "ms");
		assert_true(fb_json_num(b, per) >= 0);
		snprintf(what, sizeof(what), "%s x %g %ss = %s", per, units, u, total);
		assert_same(fb_json_num(b, per) * units * (frames ? 1e3 : 1.0), fb_json_num(b, total) * 1e6, what);
		snprintf(per, sizeof(per), "%s_wakeups_per_%s", ROLES[i], u);
		snprintf(total, sizeof(total), "%s_wakeups", ROLES[i]);
		snprintf(what, sizeof(what), "%s x %g %ss = %s", per, units, u, total);
		assert_true(strstr(unit(b, per), "wakeups/") != NULL);
		assert_same(fb_json_num(b, per) * units, fb_json_num(b, total), what);
	}
}

/* The headline's summary: the per-signal rows first, the equal-rate rows
 * with one rate on both paths, no rate over a path's own span; its cpu
 * section per signal = total / signals; native's interrupt thread spends
 * less CPU per signal than legacy's (a tenth of the interrupts). */
static void headline_compares_equal_work(void **state)
{
	json_t *doc = RUN_JSON("run", "headline", "--set", "signals=2000", "--set", "waits=200", "--set",
			       "rate_signals=200", "--set", "rate=2000");
	static const char *const lead[] = { "interrupts_per_signal", "os_irq_cpu_per_signal",
					    "os_irq_wakeups_per_signal", "app_cpu_per_signal" };
	static const char *const paths[] = { "native", "legacy" };
	for (size_t p = 0; p < 2; p++) {
		json_t *m = entry(doc, "", paths[p]), *cpu = entry(doc, "cpu", paths[p]);
		/* the summary leads with the per-signal rows, in this order */
		const char *key;
		json_t *v;
		size_t k = 0;
		json_object_foreach(m, key, v) {
			if (!json_is_number(v) || !strcmp(key, "repetitions") || !strcmp(key, "repetition_index") ||
			    !strcmp(key, "threads") || !strcmp(key, "iterations") || !strcmp(key, "real_time") ||
			    !strcmp(key, "cpu_time"))
				continue;
			if (k == sizeof(lead) / sizeof(lead[0]))
				break;
			assert_string_equal(key, lead[k++]);
		}
		assert_string_equal(unit(m, "os_irq_cpu_per_signal"), "ns/signal");
		assert_string_equal(unit(m, "app_cpu_per_signal"), "ns/signal");
		/* the same numbers as the detail */
		assert_same(fb_json_num(m, "os_irq_cpu_per_signal"), fb_json_num(cpu, "os_irq_cpu_per_signal"), "summary = cpu section");
		assert_same(fb_json_num(m, "app_cpu_per_signal"), fb_json_num(cpu, "app_cpu_per_signal"), "summary = cpu section");
		double signals = fb_json_num(entry(doc, "interrupts", paths[p]), "signals");
		assert_int_equal((int)signals, 2000);
		assert_per_unit(cpu, "signal", signals);
		/* the equal-rate rows: the rate asked, an idle fraction, wake-ups per second */
		assert_true(fb_json_num(m, "paced_rate") == 2000.0);
		double idle = fb_json_num(m, "paced_os_irq_idle_fraction");
		assert_true(idle >= 0 && idle <= 1);
		assert_string_equal(unit(m, "paced_os_irq_wakeups_per_s"), "wakeups/s");
		json_t *paced = entry(doc, "paced", paths[p]);
		assert_true(fb_json_num(paced, "rate") == 2000.0);
		assert_int_equal((int)fb_json_num(paced, "signals"), 200);
		assert_per_unit(paced, "signal", fb_json_num(paced, "signals"));
		/* rates over each path's own span: in "power" beside the span, not in the summary */
		assert_null(json_object_get(m, "os_irq_idle_fraction"));
		assert_null(json_object_get(m, "os_irq_wakeups_per_s"));
		json_t *power = entry(doc, "power", paths[p]);
		assert_true(fb_json_num(power, "span_ms") > 0);
		assert_same(fb_json_num(power, "os_irq_busy_ms"), fb_json_num(cpu, "os_irq_cpu_ms"), "power busy = cpu section");
		/* direct queues: the scheduler thread never woke */
		assert_true(fb_json_num(cpu, "os_sched_wakeups") == 0);
		/* submissions on equal terms: the engine polls between them on
		 * both paths (legacy has no doorbell to keep it up; it parked
		 * before every submission, and each kernel-mode submission paid
		 * the engine's futex wake: 23 us p50 against 2.2).  It parks only
		 * when the application was away 10 ms: at most a few times. */
		double parks = fb_json_num(entry(doc, "latency", paths[p]), "submit_engine_parks");
		if (!(parks * 2 < 200))
			fail_msg("%s: the engine parked %g times in 200 kernel-mode submissions", paths[p], parks);
	}
	json_t *n = entry(doc, "", "native"), *l = entry(doc, "", "legacy");
	assert_true(fb_json_num(n, "interrupts_per_signal") < fb_json_num(l, "interrupts_per_signal"));
	if (!(fb_json_num(n, "os_irq_cpu_per_signal") < fb_json_num(l, "os_irq_cpu_per_signal")))
		fail_msg("native's interrupt thread spent %g ns/signal, legacy's %g, for a tenth of the interrupts",
			 fb_json_num(n, "os_irq_cpu_per_signal"), fb_json_num(l, "os_irq_cpu_per_signal"));
	json_decref(doc);
}

/* Every fence scenario reports its roles per signal in a "cpu" section. */
static void fence_scenarios_report_cpu_per_signal(void **state)
{
	static const char *const runs[][4] = {
		{ "irq-suppression", "--iterations", "1000", NULL },
		{ "gpu-wait", "--iterations", "200", NULL },
	};
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		json_t *doc = RUN_JSON("run", runs[i][0], runs[i][1], runs[i][2]);
		for (int p = 0; p < 2; p++) {
			const char *path = p ? "legacy" : "native";
			double signals = fb_json_num(entry(doc, "", path), "signals");
			assert_true(signals > 0);
			assert_per_unit(entry(doc, "cpu", path), "signal", signals);
		}
		json_decref(doc);
	}
}

/* A workload reports host CPU per frame: every role, their sums (os: the
 * interrupt and scheduler threads; host: all three), per frame = total /
 * frames; the scheduler thread works only for kernel-mode submission. */
static void workloads_report_host_cpu_per_frame(void **state)
{
	json_t *doc = RUN_JSON("run", "frame", "--duration", "0.1s", "--path", "both", "--set", "queues=user");
	for (int p = 0; p < 2; p++) {
		json_t *b = entry(doc, "", p ? "legacy" : "native");
		double frames = fb_json_num(b, "frames");
		assert_true(frames > 0);
		assert_per_unit(b, "frame", frames);
		double app = fb_json_num(b, "app_cpu_per_frame"), irq = fb_json_num(b, "os_irq_cpu_per_frame");
		double sched = fb_json_num(b, "os_sched_cpu_per_frame");
		assert_same(fb_json_num(b, "os_cpu_per_frame"), irq + sched, "os = irq + sched");
		assert_same(fb_json_num(b, "host_cpu_per_frame"), app + irq + sched, "host = app + os");
		assert_string_equal(unit(b, "host_cpu_per_frame"), "us/frame");
		assert_true(app > 0);                                /* the title's thread ran */
		if (fb_json_num(b, "user_mode_queues") == 1.0) {
			assert_true(fb_json_num(b, "os_sched_wakeups") == 0);   /* doorbells: no kernel crossing */
		} else {
			/* legacy: kernel-mode submissions wake the scheduler, which spends CPU on them */
			assert_true(fb_json_num(b, "os_sched_wakeups") > 0);
			assert_true(sched > 0);
		}
		/* the engines are the GPU: reported as GPU idle per engine */
		assert_true(fb_json_num(b, "gpu_idle_3d") >= 0);
	}
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(headline_compares_equal_work),
		cmocka_unit_test(fence_scenarios_report_cpu_per_signal),
		cmocka_unit_test(workloads_report_host_cpu_per_frame),
	};
	return cmocka_run_group_tests_name(__FILE__, tests, setup, teardown);
}
