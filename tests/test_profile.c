/* tests/test_profile.c — timing profiles (benchmarks/profile.h): the
 * shipped profile parses and says where it comes from; a bad file is
 * refused in one line naming the problem, and the command line refuses it
 * before anything runs; a profile's latencies are spent in the model
 * (a 5 us command-processor latency makes the native GPU wait at least
 * 5 us: a lower bound, which load can only raise); `analogs` runs under
 * the shipped profile; `calibrate` refuses cleanly without a GPU; every
 * shipped data file is built into the binary as it is in the tree, and the
 * shipped profile loads from that copy where no tree is at hand. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "benchmarks/embedded.h"
#include "benchmarks/fence_rig.h"
#include "benchmarks/profile.h"
#include "benchmarks/scenarios/analogs.h"
#include "gpu-model/hw/hw.h"
#include "lockfree/arch.h"
#include "lockfree/thread.h"
#include "src/fb_hist.h"
#include "tests/fb_test_exec.h"

#define SHIPPED "benchmarks/profiles/h200-pcie5.json"
#define FIXTURE_5US "tests/profile/cmd-5us.json"

static char fencebench[PATH_MAX + 16];
static char tmpdir[] = "/tmp/fb_test_profile.XXXXXX";
FB_TEST_FIXTURES(fencebench, sizeof(fencebench), tmpdir)

static void shipped_profile_names_its_origin(void **state)
{
	(void)state;
	struct bm_profile p;
	char err[512] = "";
	if (bm_profile_load(SHIPPED, &p, err, sizeof(err)))
		fail_msg("%s", err);
	assert_string_equal(p.rt.name, "h200-pcie5");
	assert_non_null(strstr(p.origin, "H200"));
	assert_non_null(strstr(p.origin, "PCIe gen 5"));
	assert_non_null(strstr(p.origin, "580"));
	assert_false(rt_profile_is_ideal(&p.rt));
	assert_true(p.rt.hw.cmd_ns > 0 && p.rt.hw.visible_sys_ns > 0 && p.rt.hw.wait_poll_sys_ns > 0);
	assert_true(p.rt.os.km_call_ns + p.rt.os.km_validate_ns + p.rt.os.km_sched_ns > 0);
	for (int op = 0; op < BM_OPS; op++)
		if (!p.has[op])
			fail_msg("the shipped profile measures no %s", bm_op_key(op));
	/* by name, as --set profile=h200-pcie5 finds it */
	struct bm_profile q;
	assert_int_equal(bm_profile_load("h200-pcie5", &q, err, sizeof(err)), 0);
	assert_memory_equal(&q.rt, &p.rt, sizeof(p.rt));
}

static void ideal_is_every_latency_zero(void **state)
{
	(void)state;
	struct bm_profile p;
	char err[256];
	assert_int_equal(bm_profile_load("ideal", &p, err, sizeof(err)), 0);
	assert_string_equal(p.rt.name, "ideal");
	assert_true(rt_profile_is_ideal(&p.rt));
	assert_string_equal(p.file, "");
}

/* text written to a file is refused with one line saying `want` */
static void refused(const char *text, const char *want)
{
	const char *path = fb_tmp_path(tmpdir, "bad.json");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	struct bm_profile p;
	char err[512] = "";
	assert_int_equal(bm_profile_load(path, &p, err, sizeof(err)), -EINVAL);
	if (!strstr(err, want) || strncmp(err, "profile=", 8) || strchr(err, '\n'))
		fail_msg("error '%s' is not one line saying '%s'", err, want);
}

#define ORIGIN "\"origin\": { \"machine\": \"m\" }"
static void bad_files_are_refused_in_one_line(void **state)
{
	(void)state;
	refused("{ \"name\": ", "bad.json:1");
	refused("[]", "one JSON object");
	refused("{ " ORIGIN ", \"adapter\": {} }", "\"name\"");
	refused("{ \"name\": \"Bad Name\", " ORIGIN ", \"adapter\": {} }", "\"name\"");
	refused("{ \"name\": \"ideal\", " ORIGIN ", \"adapter\": {} }", "not \"ideal\"");
	refused("{ \"name\": \"x\", \"adapter\": {} }", "\"origin\"");
	refused("{ \"name\": \"x\", " ORIGIN " }", "no \"adapter\"");
	refused("{ \"name\": \"x\", " ORIGIN ", \"adapter\": { \"cmd_nss\": 1 } }", "no field \"cmd_nss\"");
	refused("{ \"name\": \"x\", " ORIGIN ", \"adapter\": { \"cmd_ns\": -1 } }", "adapter.cmd_ns");
	refused("{ \"name\": \"x\", " ORIGIN ", \"adapter\": { \"cmd_ns\": 1.5 } }", "adapter.cmd_ns");
	refused("{ \"name\": \"x\", " ORIGIN ", \"adapter\": { \"irq_ns\": 20000000 } }", "adapter.irq_ns");
	refused("{ \"name\": \"x\", " ORIGIN ", \"adapter\": {}, \"kernel\": { \"km_sched_ns\": \"5\" } }",
		"kernel.km_sched_ns");
	refused("{ \"name\": \"x\", " ORIGIN ", \"adapter\": {}, \"measured\": { \"teleport_ns\": 1 } }",
		"no operation \"teleport_ns\"");
	refused("{ \"name\": \"x\", " ORIGIN ", \"adapter\": {}, \"gpu_side\": { \"teleport_ns\": 1 } }",
		"\"gpu_side\" has no operation \"teleport_ns\"");
	refused("{ \"name\": \"x\", " ORIGIN ", \"adapter\": {}, \"gpu_side\": { \"write_seen_ns\": 1 } }",
		"gpu_side.write_seen_ns is the GPU-side part of an op \"measured\" lacks");
	refused("{ \"name\": \"x\", " ORIGIN ", \"adapter\": {}, \"colour\": 1 }", "unknown key \"colour\"");
	refused("{ \"name\": \"x\", \"name\": \"y\", " ORIGIN ", \"adapter\": {} }", "duplicate");
	struct bm_profile p;
	char err[512] = "";
	assert_int_equal(bm_profile_load("no-such-profile", &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no such profile"));
}

/* The command line refuses a bad profile in one line, exit 2, nothing run. */
static void the_command_line_refuses_a_bad_profile(void **state)
{
	(void)state;
	fb_need_binary(fencebench);
	const char *out = fb_tmp_path(tmpdir, "r.json");
	const char *argv[] = { fencebench, "run", "selftest", "--set", "profile=no-such-profile", "--out", out, NULL };
	struct fb_exec_result r = fb_exec(tmpdir, argv, FB_EXEC_SEPARATE);
	assert_int_equal(r.status, 2);
	assert_int_equal(fb_count_lines(r.err), 1);
	assert_non_null(strstr(r.err, "profile=no-such-profile"));
	assert_int_equal(access(out, F_OK), -1);
	fb_exec_free(&r);
}

/* A 5 us command-processor latency: A's SIGNAL and B's STAMP each pay it
 * between A's stamp and B's, so B is past its wait no sooner than 5 us
 * after A stamped, in every round. */
static void a_5us_command_latency_makes_the_gpu_wait_at_least_5us(void **state)
{
	(void)state;
	struct bm_profile p;
	char err[512] = "";
	if (bm_profile_load(FIXTURE_5US, &p, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(p.rt.hw.cmd_ns, 5000);
	struct os_config cfg;
	rig_config(&cfg, RIG_FENCE_NATIVE);
	cfg.caps.engines = 2;
	rt_profile_apply(&p.rt, &cfg);
	struct rig_gpuwait_params gp = { .path = RIG_FENCE_NATIVE, .rounds = 200, .work_ns = 1000, .cfg = &cfg };
	struct rig_gpuwait_result r;
	if (rig_gpuwait_run(&gp, &r, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(fb_hist_count(r.lat), 200);
	if (fb_hist_min(r.lat) < 5000)
		fail_msg("the fastest native GPU wait took %llu ns under a 5 us command latency",
			 (unsigned long long)fb_hist_min(r.lat));
	fb_hist_free(r.lat);
}

/* The shortest idle stretch engine 0 of an adapter with `timing` polled
 * before it parked, by the engine's own clock, once it has parked twice
 * (an adapter with no queues: every pass is idle; a park times out every
 * 100 ms and the engine idles again). */
static uint64_t idle_before_park_ns(const struct hw_timing *timing, uint64_t poll_ns)
{
	struct hw_caps caps;
	hw_caps_default(&caps);
	caps.timing = *timing;
	caps.idle.poll_ns = poll_ns;
	struct hw_adapter *a;
	char err[256];
	if (hw_adapter_create(&caps, &a, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(hw_adapter_start(a), 0);
	struct hw_engine_stats st;
	uint64_t t0 = lf_now_ns();
	do {
		hw_engine_stats(a, 0, &st);
		if (lf_now_ns() - t0 > 30000000000ull)
			fail_msg("engine 0 parked %llu times in 30 s", (unsigned long long)st.parks);
		usleep(1000);
	} while (st.parks < 2);
	hw_adapter_destroy(a);
	return st.park_idle_min_ns;
}

static double counter(json_t *b, const char *key);

/* The idle rule (gpu-model/hw/engine.c; caps.idle): every engine, under
 * every profile, polls idle.poll_ns idle before it parks, so no host
 * wake-up (7-34 us) lands inside a latency a profile models.  Lower
 * bounds, by the engine's clock: load can only lengthen an idle stretch.
 * Fails if an engine parks after its spin (20 us) as it did without a
 * profile before the rule, or if a poll_ns set on the adapter is not the
 * one its engines run. */
static void every_engine_polls_the_idle_rule_before_it_parks(void **state)
{
	(void)state;
	struct hw_timing ideal = { 0 }, profile = { .cmd_ns = 600, .wait_poll_sys_ns = 1600 };
	uint64_t least = idle_before_park_ns(&profile, HW_IDLE_POLL_DEFAULT_NS);
	if (least < HW_IDLE_POLL_DEFAULT_NS)
		fail_msg("under a profile engine 0 parked after %llu ns idle (want >= 1 ms)", (unsigned long long)least);
	least = idle_before_park_ns(&ideal, HW_IDLE_POLL_DEFAULT_NS);
	if (least < HW_IDLE_POLL_DEFAULT_NS)
		fail_msg("ideal: engine 0 parked after %llu ns idle (want >= 1 ms)", (unsigned long long)least);
	least = idle_before_park_ns(&ideal, 4 * HW_IDLE_POLL_DEFAULT_NS);
	if (least < 4 * HW_IDLE_POLL_DEFAULT_NS)
		fail_msg("caps.idle.poll_ns = 4 ms: engine 0 parked after %llu ns idle", (unsigned long long)least);
}

/* The idle rule's parameters reach every scenario: `fencebench help X`
 * lists idle_spin_ns, idle_wait_spin_ns and idle_poll_ns for each scenario
 * `fencebench list` names that takes the program's parameters (the common
 * ones, benchmarks/profile.h, beside `profile`; only `limits`, which
 * measures the machine alone, takes none). */
static void every_scenario_takes_the_idle_rule(void **state)
{
	(void)state;
	const char *list[] = { fencebench, "list", NULL };
	struct fb_exec_result r = fb_exec(tmpdir, list, FB_EXEC_SEPARATE);
	assert_int_equal(r.status, 0);
	unsigned scenarios = 0;
	for (char *line = r.out, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		char name[64];
		if (sscanf(line, "%63s", name) != 1)
			continue;
		const char *help[] = { fencebench, "help", name, NULL };
		struct fb_exec_result h = fb_exec(tmpdir, help, FB_EXEC_SEPARATE);
		if (h.status)
			fail_msg("fencebench help %s: exit %d", name, h.status);
		if (!strstr(h.out, "\nprofile ")) {   /* no_program_params: the machine's own limits */
			fb_exec_free(&h);
			continue;
		}
		static const char *const keys[] = { "idle_spin_ns ", "idle_wait_spin_ns ", "idle_poll_ns " };
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (!strstr(h.out, keys[k]))
				fail_msg("fencebench help %s lists no %s", name, keys[k]);
		fb_exec_free(&h);
		scenarios++;
	}
	fb_exec_free(&r);
	assert_true(scenarios >= 20);
}

/* A set value reaches the engine: a profile's "idle" section through
 * rt_profile_apply to the adapter the stack starts (read back from the
 * model), and the parameters, set on the command line, over the profile's,
 * to the engine of a scenario's stack (submit-latency reports the rule its
 * engine ran under, read back from the model). */
static void the_idle_rule_set_reaches_the_engine(void **state)
{
	(void)state;
	struct bm_profile p;
	char err[512] = "";
	if (bm_profile_load("tests/profile/idle-rule.json", &p, err, sizeof(err)))
		fail_msg("%s", err);
	assert_true(rt_profile_is_ideal(&p.rt));   /* an idle rule is not a latency */
	struct rt_stack_config sc;
	rt_stack_config_default(&sc, RT_PATH_NATIVE);
	rt_profile_apply(&p.rt, &sc.os);
	struct rt_stack *s;
	if (rt_stack_create(&sc, &s, err, sizeof(err)))
		fail_msg("%s", err);
	struct hw_idle got;
	rt_stack_idle(s, &got);
	rt_stack_destroy(s);
	assert_int_equal(got.spin_ns, 7000);
	assert_int_equal(got.wait_spin_ns, 90000);
	assert_int_equal(got.poll_ns, 3000000);

	const char *out = fb_tmp_path(tmpdir, "idle.json");
	const char *argv[] = { fencebench, "run", "submit-latency", "--set", "engine=polling", "--iterations", "50",
			       "--set", "profile=tests/profile/idle-rule.json", "--set", "idle_poll_ns=2500000",
			       "--format", "json", "--out", out, "-q", NULL };
	json_t *doc = fb_exec_json(tmpdir, argv, out), *b = NULL, *e;
	size_t i;
	json_array_foreach(json_object_get(doc, "benchmarks"), i, e)
		if (json_object_get(e, "engine_idle_poll_ns"))
			b = e;
	assert_non_null(b);
	assert_int_equal((uint64_t)counter(b, "engine_idle_poll_ns"), 2500000);   /* the parameter's */
	assert_int_equal((uint64_t)counter(b, "engine_idle_spin_ns"), 7000);      /* the profile's */
	assert_int_equal((uint64_t)counter(b, "engine_idle_wait_spin_ns"), 90000);
	json_decref(doc);
}

/* ---- a profile's UMD work (os_timing.umd_submit_ns, rt_umd_work) ---- */

/* A thread's time on a CPU so far (ns, /proc schedstat: user + kernel). */
static uint64_t thread_ran_ns(pid_t tid)
{
	char path[64];
	unsigned long long ns = 0;
	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", (int)tid);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%llu", &ns), 1);
	fclose(f);
	return ns;
}

/* This thread's involuntary context switches so far. */
static long involuntary_switches(void)
{
	FILE *f = fopen("/proc/thread-self/status", "r");
	char line[256];
	long n = -1;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "nonvoluntary_ctxt_switches: %ld", &n) == 1)
			break;
	fclose(f);
	assert_true(n >= 0);
	return n;
}

#define UMD_NS 300000ull   /* long beside the model's own submit call, short beside a time slice */
#define UMD_SUBMITS 20

/* What UMD_SUBMITS submissions of [COUNT] on a user-mode queue cost each
 * thread, under a profile whose only cost is UMD_NS of UMD work:
 * the application thread's CPU clock (over the submit calls alone), the OS
 * threads' time on a CPU and the engine's busy time (commands run; its idle
 * polling is not in it) until the last one completed.  clean: the
 * application thread was not preempted during its calls (its CPU clock then
 * holds all of their busy time). */
struct umd_spent {
	uint64_t app, irq, sched, power, engine_busy;
	bool clean;
};

static struct umd_spent umd_spent(enum rt_broken broken)
{
	struct rt_stack_config sc;
	rt_stack_config_default(&sc, RT_PATH_NATIVE);
	sc.os.timing.umd_submit_ns = UMD_NS;
	/* the model's threads on the last CPU, this one alone on the first
	 * (where there are two): nothing of the model preempts the calls */
	static int other_cpu[1];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t saved;
	assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved), 0);
	if (ncpu >= 2) {
		other_cpu[0] = (int)ncpu - 1;
		sc.os.caps.cpus = other_cpu;
		sc.os.caps.ncpus = 1;
		sc.os.irq_cpu = sc.ums.sched_cpu = sc.ums.power_cpu = other_cpu[0];
		assert_int_equal(lf_thread_pin_self(0), 0);
	}
	struct rt_stack *s;
	char err[256];
	if (rt_stack_create(&sc, &s, err, sizeof(err)))
		fail_msg("%s", err);
	struct rt_queue_desc desc = { .engine = 0, .user_mode = true, .broken = broken };
	struct rt_queue *q;
	assert_int_equal(rt_queue_create(rt_stack_device(s), &desc, &q), 0);
	_Atomic uint64_t n = 0;
	struct hw_cmd c = { .op = HW_CMD_COUNT, .stamp = &n };
	uint64_t v = 0;
	assert_int_equal(rt_queue_submit(q, &c, 1, &v), 0);   /* connects the doorbell, warms up */
	assert_int_equal(rt_queue_wait(q, v, 5000000000ll), 0);
	struct hw_engine_stats e0, e1;
	rt_stack_engine_stats(s, 0, &e0);
	uint64_t irq0 = thread_ran_ns(rt_stack_irq_tid(s)), sched0 = thread_ran_ns(rt_stack_sched_tid(s)),
		 power0 = thread_ran_ns(rt_stack_power_tid(s));
	long inv0 = involuntary_switches();
	struct timespec t0, t1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	for (unsigned i = 0; i < UMD_SUBMITS; i++)
		assert_int_equal(rt_queue_submit(q, &c, 1, &v), 0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	long inv1 = involuntary_switches();
	assert_int_equal(rt_queue_wait(q, v, 5000000000ll), 0);
	rt_stack_engine_stats(s, 0, &e1);
	struct umd_spent r = {
		.app = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000ll + (t1.tv_nsec - t0.tv_nsec)),
		.irq = thread_ran_ns(rt_stack_irq_tid(s)) - irq0,
		.sched = thread_ran_ns(rt_stack_sched_tid(s)) - sched0,
		.power = thread_ran_ns(rt_stack_power_tid(s)) - power0,
		.engine_busy = e1.busy_ns - e0.busy_ns,
		.clean = inv1 == inv0,
	};
	assert_int_equal(atomic_load(&n), UMD_SUBMITS + 1);
	rt_stack_destroy(s);
	assert_int_equal(pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved), 0);
	return r;
}

/* A profile's UMD work (umd_submit_ns) is spent on the application thread,
 * as a real user-mode driver spends it: its CPU clock gains at least the
 * UMD work of every submission, and neither the OS threads nor the engine
 * gain as much.  Broken (RT_BROKEN_UMD_ON_ENGINE: the work put on the
 * engine as GPU work): the application's clock does not gain it and the
 * engine's busy time does: caught.  A run whose application thread was
 * preempted during its calls (its clock then misses what the busy wait
 * spent) is run again, up to 50 times. */
static void a_profiles_umd_work_lands_on_the_application_thread(void **state)
{
	(void)state;
	const uint64_t all = UMD_SUBMITS * UMD_NS;
	struct umd_spent r;
	unsigned tries = 0;
	do
		r = umd_spent(RT_BROKEN_NONE);
	while (!r.clean && ++tries < 50);
	if (!r.clean)
		fb_skip("the application thread was preempted in each of 50 runs: CPUs busy");
	if (r.app < all)
		fail_msg("the application thread spent %llu ns in %d submit calls (want >= %llu)",
			 (unsigned long long)r.app, UMD_SUBMITS, (unsigned long long)all);
	assert_true(r.irq < all && r.sched < all && r.power < all);
	assert_true(r.engine_busy < all);

	r = umd_spent(RT_BROKEN_UMD_ON_ENGINE);
	assert_true(r.app < all);
	assert_true(r.engine_busy >= all);
}

/* counter `key` of entry b, failing the test when it has none */
static double counter(json_t *b, const char *key)
{
	json_t *v = json_object_get(b, key);
	if (!json_is_number(v))
		fail_msg("no counter %s", key);
	return json_number_value(v);
}

/* analogs under the shipped profile: every operation reported beside the
 * profile's value with their ratio; the model's times no shorter than the
 * latencies the profile puts on each path (lower bounds: load only adds). */
static void analogs_runs_with_the_shipped_profile(void **state)
{
	(void)state;
	fb_need_binary(fencebench);
	const char *out = fb_tmp_path(tmpdir, "a.json");
	const char *argv[] = { fencebench, "run", "analogs", "--set", "profile=h200-pcie5", "--set", "rounds=50",
			       "--format", "json", "--out", out, "-q", NULL };
	json_t *doc = fb_exec_json(tmpdir, argv, out);
	json_t *params = json_object_get(json_object_get(doc, "context"), "parameters");
	assert_string_equal(json_string_value(json_object_get(params, "profile")), "h200-pcie5");
	json_t *b = fb_bench_named(doc, "analogs/rounds:50/profile:h200-pcie5");
	struct bm_profile p;
	char err[512];
	assert_int_equal(bm_profile_load("h200-pcie5", &p, err, sizeof(err)), 0);
	for (int op = 0; op < BM_OPS; op++) {
		char k[64];
		size_t n = strlen(bm_op_key(op)) - 3;
		snprintf(k, sizeof(k), "%.*s_p50", (int)n, bm_op_key(op));
		double model = counter(b, k);
		snprintf(k, sizeof(k), "%.*s_profile", (int)n, bm_op_key(op));
		assert_true(counter(b, k) == p.measured_ns[op]);
		snprintf(k, sizeof(k), "%.*s_vs_profile", (int)n, bm_op_key(op));
		assert_true(counter(b, k) > 0.0 && fabs(counter(b, k) * p.measured_ns[op] - model) < 0.01 * model + 1);
	}
	const struct hw_timing *t = &p.rt.hw;
	/* a write: the doorbell, the command, its way to memory */
	assert_true(counter(b, "write_seen_p50") >= (double)(t->doorbell_ns + t->cmd_ns + t->visible_sys_ns));
	/* a fence signal adds its flush */
	assert_true(counter(b, "event_spin_p50") >= (double)(t->doorbell_ns + t->cmd_ns + t->signal_ns + t->visible_sys_ns));
	/* A's signal, then B's COUNT after its wait */
	assert_true(counter(b, "gpu_wait_sys_p50") >=
		    (double)(t->doorbell_ns + 2 * t->cmd_ns + t->signal_ns + 2 * t->visible_sys_ns));
	/* the held buffer re-enters through the scheduler's work, after the interrupt's raise */
	assert_true(counter(b, "cpu_held_p50") >= (double)(t->doorbell_ns + t->cmd_ns + t->signal_ns + t->irq_ns +
							   p.rt.os.km_sched_ns + t->cmd_ns + t->visible_sys_ns));
	/* the kernel-mode submit call pays the crossing and the validation */
	assert_true(counter(b, "km_submit_p50") >= (double)(p.rt.os.km_call_ns + p.rt.os.km_validate_ns));
	json_decref(doc);
}

/* The headline under the shipped profile: it runs, names the profile, its
 * native GPU wait is no shorter than the profile's modelled GPU-side time,
 * and a note says how much of it that time is. */
static void headline_runs_with_the_shipped_profile(void **state)
{
	(void)state;
	fb_need_binary(fencebench);
	const char *out = fb_tmp_path(tmpdir, "h.json");
	const char *argv[] = { fencebench, "run", "headline", "--set", "profile=h200-pcie5", "--set", "signals=200",
			       "--set", "waits=100", "--set", "rate_signals=100", "--format", "json", "--out", out, "-q",
			       NULL };
	json_t *doc = fb_exec_json(tmpdir, argv, out);
	json_t *ctx = json_object_get(doc, "context");
	assert_string_equal(json_string_value(json_object_get(json_object_get(ctx, "parameters"), "profile")),
			    "h200-pcie5");
	bool noted = false;
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(ctx, "notes"), i, n)
		noted |= strstr(json_string_value(n), "of the native GPU wait's p50") != NULL;
	assert_true(noted);
	struct bm_profile p;
	char err[512];
	assert_int_equal(bm_profile_load("h200-pcie5", &p, err, sizeof(err)), 0);
	const struct hw_timing *t = &p.rt.hw;
	json_t *b = fb_bench_named(doc, "headline/path:native/signals:200/waits:100/rate_signals:100/profile:h200-pcie5");
	assert_true(counter(b, "gpu_wait_p50") >= (double)(2 * t->cmd_ns + t->signal_ns + t->visible_sys_ns));
	json_decref(doc);
}

/* Without an NVIDIA driver, calibrate --api cuda says so in one line and
 * exits 2, writing nothing (without --api: tests/test_vulkan.c). */
static void calibrate_refuses_cleanly_without_a_gpu(void **state)
{
	(void)state;
	fb_need_binary(fencebench);
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (cuda) {
		dlclose(cuda);
		fb_skip("this machine has an NVIDIA driver: the refusal cannot be seen here");
		return;
	}
	const char *out = fb_tmp_path(tmpdir, "cal.json");
	const char *argv[] = { fencebench, "calibrate", "--api", "cuda", "--out", out, NULL };
	struct fb_exec_result r = fb_exec(tmpdir, argv, FB_EXEC_SEPARATE);
	assert_int_equal(r.status, 2);
	assert_int_equal(fb_count_lines(r.err), 1);
	assert_non_null(strstr(r.err, "fencebench: calibrate: no NVIDIA driver"));
	assert_string_equal(r.out, "");
	assert_int_equal(access(out, F_OK), -1);
	fb_exec_free(&r);
	/* a bad option: also one line, exit 2, before looking for a GPU */
	const char *bad[] = { fencebench, "calibrate", "--rounds", "3", NULL };
	r = fb_exec(tmpdir, bad, FB_EXEC_SEPARATE);
	assert_int_equal(r.status, 2);
	assert_int_equal(fb_count_lines(r.err), 1);
	assert_non_null(strstr(r.err, "--rounds"));
	fb_exec_free(&r);
}

/* The analogs note names a floor only where the numbers it prints make it
 * one: the report's blocking CPU wait of 29.0 us beside two futex
 * wake-to-runs of 25.2 us (50.4 us) is no floor, and the note says the
 * wake-ups overlapped; at 60 us the floor holds. */
static void analogs_floor_follows_the_numbers(void **state)
{
	char buf[256];
	bm_analogs_floor(BM_OP_EVENT_BLOCK, 25200, 29000, buf, sizeof(buf));
	assert_null(strstr(buf, "its floor here"));
	assert_non_null(strstr(buf, "took 29.0 us, less than the two apart: the wake-ups overlapped"));
	bm_analogs_floor(BM_OP_EVENT_BLOCK, 25200, 60000, buf, sizeof(buf));
	assert_non_null(strstr(buf, "its floor here is two futex wake-to-runs"));
	assert_non_null(strstr(buf, "2 x 25.2 us"));
	bm_analogs_floor(BM_OP_CPU_HELD, 25200, 20000, buf, sizeof(buf));
	assert_null(strstr(buf, "its floor here"));
	bm_analogs_floor(BM_OP_CPU_HELD, 25200, 46000, buf, sizeof(buf));
	assert_non_null(strstr(buf, "its floor here is the interrupt thread's futex wake-to-run, 25.2 us"));
}

/* Every shipped data file is built in, byte for byte (benchmarks/embedded.h):
 * a copy that drifted from its file, or a file left out, fails here. */
static void every_shipped_file_is_built_in_as_it_is(void **state)
{
	(void)state;
	static const char *const dirs[] = { "benchmarks/profiles", "benchmarks/workloads" };
	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		size_t on_disk = 0, built_in = 0;
		DIR *dir = opendir(dirs[d]);
		assert_non_null(dir);
		for (struct dirent *e; (e = readdir(dir));) {
			size_t n = strlen(e->d_name);
			if (n <= 5 || strcmp(e->d_name + n - 5, ".json"))
				continue;
			char path[512];
			snprintf(path, sizeof(path), "%s/%s", dirs[d], e->d_name);
			char *text = fb_slurp(path);
			assert_non_null(text);
			const struct bm_embedded *b = bm_embedded_find(path);
			if (!b)
				fail_msg("%s is not built in", path);
			assert_int_equal(b->len, strlen(text));
			assert_memory_equal(b->text, text, b->len);
			assert_int_equal(b->text[b->len], 0);
			free(text);
			on_disk++;
		}
		closedir(dir);
		while (bm_embedded_in(dirs[d], ".json", built_in))
			built_in++;
		assert_int_equal(built_in, on_disk);
		assert_true(on_disk > 0);
	}
	assert_null(bm_embedded_find("benchmarks/profiles/no-such.json"));
	assert_non_null(bm_embedded_find("./" SHIPPED));
}

/* A binary with no tree beside it and none under its working directory
 * (one file copied to a lab machine) still loads the shipped profile by
 * name and by its path, from the built-in copy, and says so; a name that
 * is neither still fails in one line. */
static void the_shipped_profile_loads_without_a_tree(void **state)
{
	(void)state;
	struct bm_profile disk, p, q;
	char err[512] = "", cwd[PATH_MAX];
	assert_int_equal(bm_profile_load(SHIPPED, &disk, err, sizeof(err)), 0);
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(tmpdir), 0);
	int by_name = bm_profile_load("h200-pcie5", &p, err, sizeof(err));
	char file[sizeof(p.file)];
	snprintf(file, sizeof(file), "%s", p.file);
	int by_path = bm_profile_load(SHIPPED, &q, err, sizeof(err));
	int none = bm_profile_load("no-such-profile", &p, err, sizeof(err));
	assert_int_equal(chdir(cwd), 0);
	if (by_name)
		fail_msg("by name, without a tree: %s", err);
	assert_string_equal(file, SHIPPED " (built in)");
	assert_int_equal(by_path, 0);
	assert_memory_equal(&q.rt, &disk.rt, sizeof(q.rt));
	assert_string_equal(q.file, SHIPPED " (built in)");
	assert_int_equal(none, -EINVAL);
	assert_non_null(strstr(err, "no such profile"));
	assert_null(strchr(err, '\n'));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shipped_profile_names_its_origin),
		cmocka_unit_test(every_shipped_file_is_built_in_as_it_is),
		cmocka_unit_test(the_shipped_profile_loads_without_a_tree),
		cmocka_unit_test(ideal_is_every_latency_zero),
		cmocka_unit_test(bad_files_are_refused_in_one_line),
		cmocka_unit_test(the_command_line_refuses_a_bad_profile),
		cmocka_unit_test(a_5us_command_latency_makes_the_gpu_wait_at_least_5us),
		cmocka_unit_test(every_engine_polls_the_idle_rule_before_it_parks),
		cmocka_unit_test(every_scenario_takes_the_idle_rule),
		cmocka_unit_test(the_idle_rule_set_reaches_the_engine),
		cmocka_unit_test(a_profiles_umd_work_lands_on_the_application_thread),
		cmocka_unit_test(analogs_runs_with_the_shipped_profile),
		cmocka_unit_test(analogs_floor_follows_the_numbers),
		cmocka_unit_test(headline_runs_with_the_shipped_profile),
		cmocka_unit_test(calibrate_refuses_cleanly_without_a_gpu),
	};
	return cmocka_run_group_tests_name(__FILE__, tests, setup, teardown);
}
