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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchmarks/embedded.h"
#include "benchmarks/fence_rig.h"
#include "benchmarks/profile.h"
#include "benchmarks/scenarios/analogs.h"
#include "gpu-model/hw/hw.h"
#include "lockfree/arch.h"
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
static uint64_t idle_before_park_ns(const struct hw_timing *timing)
{
	struct hw_caps caps;
	hw_caps_default(&caps);
	caps.timing = *timing;
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

/* timing.c, "Where an idle engine waits": under a profile an idle engine
 * polls for 1 ms before it parks, so no host wake-up (24-34 us on the
 * reference VM) lands inside a latency the profile models; without one it
 * parks after caps.idle_spin_ns.  Lower bounds, by the engine's clock:
 * load can only lengthen an idle stretch.  Fails if the rule is dropped
 * (the engine would park after 20 us under the profile too). */
static void under_a_profile_an_idle_engine_polls_1ms_before_it_parks(void **state)
{
	(void)state;
	struct hw_timing ideal = { 0 }, profile = { .cmd_ns = 600, .wait_poll_sys_ns = 1600 };
	uint64_t least = idle_before_park_ns(&profile);
	if (least < 1000000)
		fail_msg("under a profile engine 0 parked after %llu ns idle (want >= 1 ms)", (unsigned long long)least);
	least = idle_before_park_ns(&ideal);
	if (least < 20000)
		fail_msg("ideal: engine 0 parked after %llu ns idle (want >= caps.idle_spin_ns, 20 us)",
			 (unsigned long long)least);
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
		cmocka_unit_test(under_a_profile_an_idle_engine_polls_1ms_before_it_parks),
		cmocka_unit_test(analogs_runs_with_the_shipped_profile),
		cmocka_unit_test(analogs_floor_follows_the_numbers),
		cmocka_unit_test(headline_runs_with_the_shipped_profile),
		cmocka_unit_test(calibrate_refuses_cleanly_without_a_gpu),
	};
	return cmocka_run_group_tests_name(__FILE__, tests, setup, teardown);
}
