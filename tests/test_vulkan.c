/* tests/test_vulkan.c — calibrate's Vulkan probe (benchmarks/vulkan/) on
 * lavapipe, Mesa's CPU implementation of Vulkan, under the Khronos
 * validation layer with synchronization validation on:
 *
 *   - the probe measures every op it has an analog of with no validation
 *     message, and a deliberately broken probe (BM_VK_PROBE_BROKEN,
 *     mk/vulkan.mk: its fill's destination lacks the transfer-destination
 *     usage) is caught by the same count;
 *   - `calibrate --api vulkan --allow-cpu` writes a profile that
 *     bm_profile_load loads, says it came from a CPU implementation, and
 *     that `run analogs` runs under, n/a beside the ops it lacks;
 *   - without --allow-cpu lavapipe is refused, and without any Vulkan
 *     driver calibrate says so: one line, exit 2, nothing written;
 *   - `run frame --set backend=vulkan --trace` writes the device's timeline
 *     on both paths (the counts behind it: tests/test_vk_graph.c);
 *   - gpu-wait and cpu-wait on lavapipe (--set backend=vulkan): both paths
 *     complete under the validation layer, the counts follow the rounds
 *     (waits == rounds, legacy's held waits == waits, native's 0), their
 *     keys are the model's; lavapipe is refused without allow_cpu, and
 *     `help` lists the parameters.
 *
 * Rounds are few (10): the suite runs on 2 CPUs, and these tests check
 * behaviour and counts, never speed.  A machine without the loader or
 * lavapipe skips, saying so (scripts/install-deps.sh installs both).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchmarks/calibrate.h"
#include "benchmarks/profile.h"
#include "tests/fb_test_exec.h"

#define LVP_ICD "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"

extern const struct bm_probe bm_probe_vulkan_broken;   /* mk/vulkan.mk */

static char fencebench[PATH_MAX + 16];
static char tmpdir[] = "/tmp/fb_test_vulkan.XXXXXX";
FB_TEST_FIXTURES(fencebench, sizeof(fencebench), tmpdir)

/* The loader, lavapipe and the validation layer are installed: else skip. */
static bool need_lavapipe(void)
{
	void *lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib || access(LVP_ICD, R_OK)) {
		if (lib)
			dlclose(lib);
		fb_skip("no Vulkan loader or lavapipe here (scripts/install-deps.sh installs them)");
		return false;
	}
	dlclose(lib);
	return true;
}

/* Only lavapipe, whatever else this machine has: the tests know its shape. */
static void only_lavapipe(void)
{
	setenv("VK_DRIVER_FILES", LVP_ICD, 1);
	setenv("VK_ICD_FILENAMES", LVP_ICD, 1);
}

/* A test that runs the binary on lavapipe: false (skipped) without it. */
static bool lavapipe_and_binary(void)
{
	if (!need_lavapipe())
		return false;
	fb_need_binary(fencebench);
	only_lavapipe();
	return true;
}

/* Run probe p in this process on lavapipe with validation: the validation
 * messages over its whole life, the first one's text in first. */
static uint64_t probe_messages(const struct bm_probe *p, char *first, size_t len)
{
	struct bm_cal_opts o = { .rounds = 10, .device = -1, .allow_cpu = true, .validate = true };
	static struct bm_cal_result r;
	void *self = NULL;
	char err[512] = "";
	int rc = p->open(&o, &self, err, sizeof(err));
	if (rc) {
		p->close(self, first, len);
		fail_msg("open: %s", err);
	}
	rc = bm_cal_measure(p, self, &o, &r, err, sizeof(err));
	uint64_t n = p->close(self, first, len);
	if (rc)
		fail_msg("measure: %s", err);
	for (int op = 0; op < BM_OPS; op++)
		if (r.has[op] != (op != BM_OP_GPU_WAIT_LOCAL && op != BM_OP_KM_SUBMIT))
			fail_msg("%s: measured %d", bm_op_key(op), r.has[op]);
	return n;
}

/* The probe is clean under validation; the broken one is caught. */
static void the_probe_is_clean_under_validation_and_a_broken_one_is_caught(void **state)
{
	(void)state;
	if (!need_lavapipe())
		return;
	only_lavapipe();
	char first[512] = "";
	uint64_t n = probe_messages(&bm_probe_vulkan, first, sizeof(first));
	if (n)
		fail_msg("%llu validation messages, the first: %s", (unsigned long long)n, first);
	n = probe_messages(&bm_probe_vulkan_broken, first, sizeof(first));
	if (!n)
		fail_msg("the broken probe (a fill into a buffer without TRANSFER_DST usage) drew no validation message");
	assert_non_null(strstr(first, "vkCmdFillBuffer"));
}

/* calibrate --api vulkan --allow-cpu, 10 rounds, profile name into out. */
static struct fb_exec_result calibrate_lavapipe(const char *name, const char *out)
{
	const char *argv[] = { fencebench, "calibrate", "--api", "vulkan", "--allow-cpu", "--rounds", "10",
			       "--name", name, "--out", out, NULL };
	return fb_exec(tmpdir, argv, FB_EXEC_SEPARATE);
}

static const char *must_load(const char *path, struct bm_profile *p)
{
	char err[512] = "";
	if (bm_profile_load(path, p, err, sizeof(err)))
		fail_msg("%s", err);
	return p->origin;
}

/* calibrate --api vulkan --allow-cpu under validation writes a profile
 * that loads, measured only where Vulkan has an analog, from a CPU. */
static void calibrate_writes_a_lavapipe_profile(void **state)
{
	(void)state;
	if (!lavapipe_and_binary())
		return;
	setenv("FENCEBENCH_VK_VALIDATE", "1", 1);
	const char *out = fb_tmp_path(tmpdir, "lvp.json");
	struct fb_exec_result r = calibrate_lavapipe("lvp", out);
	unsetenv("FENCEBENCH_VK_VALIDATE");
	if (r.status)
		fail_msg("calibrate exited %d: %s", r.status, r.err ? r.err : "");
	assert_null(strstr(r.err, "validation message"));
	assert_non_null(strstr(r.err, "calibrate: cpu_held"));
	fb_exec_free(&r);
	struct bm_profile p;
	const char *origin = must_load(out, &p);
	assert_string_equal(p.rt.name, "lvp");
	assert_non_null(strstr(origin, "implementation: cpu"));
	assert_non_null(strstr(origin, "llvmpipe"));
	assert_non_null(strstr(origin, "api: Vulkan 1."));
	assert_non_null(strstr(origin, "date: 20"));
	assert_non_null(strstr(origin, "one queue"));
	assert_non_null(strstr(origin, "queue_wait: B's wait on A's signal is resolved by the implementation's queue "
				       "thread on the CPU"));
	assert_non_null(strstr(origin, "gpu_wait_local (Vulkan does not place"));
	for (int op = 0; op < BM_OPS; op++)
		if (p.has[op] != (op != BM_OP_GPU_WAIT_LOCAL && op != BM_OP_KM_SUBMIT))
			fail_msg("the profile %s %s", p.has[op] ? "measures" : "lacks", bm_op_key(op));
	/* derived values depend on timing (a CPU's, here): only the rules that
	 * do not are checked: the irq estimate, local memory as system memory */
	assert_int_equal(p.rt.hw.irq_ns, 1000);
	assert_int_equal(p.rt.hw.visible_local_ns, p.rt.hw.visible_sys_ns);
	assert_int_equal(p.rt.hw.wait_poll_local_ns, p.rt.hw.wait_poll_sys_ns);
}

/* A failed write of the profile leaves the file that was there as it was
 * (the old profile is not lost to a full disk), and a profile that cannot
 * be written to stdout is an error, not exit 0. */
static void a_failed_write_keeps_the_old_profile(void **state)
{
	(void)state;
	if (!lavapipe_and_binary())
		return;
	const char *out = fb_tmp_path(tmpdir, "kept.json");
	const char *old = "{ \"the\": \"old profile\" }\n";
	fb_write_file(tmpdir, "kept.json", old);
	setenv("FENCEBENCH_IO_FAULT", "write:1:ENOSPC", 1);
	struct fb_exec_result r = calibrate_lavapipe("kept", out);
	unsetenv("FENCEBENCH_IO_FAULT");
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "No space left on device"));
	fb_exec_free(&r);
	char *now = fb_slurp(out);
	assert_non_null(now);
	assert_string_equal(now, old);
	free(now);

	const char *argv[] = { "/bin/sh", "-c", "exec \"$0\" calibrate --api vulkan --allow-cpu --rounds 10 > /dev/full",
			       fencebench, NULL };
	r = fb_exec(tmpdir, argv, FB_EXEC_SEPARATE);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "stdout"));
	fb_exec_free(&r);
}

/* The profile at path with its adapter latencies set to the shipped
 * profile's: what lavapipe derives follows the CPUs' load (a loaded CPU
 * derives milliseconds), and analogs' run time with it; its measured ops,
 * which analogs prints beside the model, stay as calibrate wrote them. */
static void fixed_adapter(const char *path)
{
	json_error_t je;
	json_t *doc = json_load_file(path, 0, &je), *shipped = json_load_file("benchmarks/profiles/h200-pcie5.json", 0, &je);
	if (!doc || !shipped)
		fail_msg("cannot read %s or the shipped profile", path);
	json_object_set(doc, "adapter", json_object_get(shipped, "adapter"));
	assert_int_equal(json_dump_file(doc, path, JSON_INDENT(2)), 0);
	json_decref(doc);
	json_decref(shipped);
}

/* analogs under the Vulkan profile: each op beside it, n/a where it has none. */
static void analogs_runs_under_a_vulkan_profile(void **state)
{
	(void)state;
	if (!lavapipe_and_binary())
		return;
	const char *prof = fb_tmp_path(tmpdir, "lvp2.json"), *out = fb_tmp_path(tmpdir, "an.json");
	struct fb_exec_result r = calibrate_lavapipe("lvp2", prof);
	assert_int_equal(r.status, 0);
	fb_exec_free(&r);
	fixed_adapter(prof);
	char set[PATH_MAX + 16];
	snprintf(set, sizeof(set), "profile=%s", prof);
	const char *argv[] = { fencebench, "run", "analogs", "--set", set, "--set", "rounds=50",
			       "--format", "json", "--out", out, "-q", NULL };
	json_t *doc = fb_exec_json(tmpdir, argv, out);
	json_t *b = json_array_get(json_object_get(doc, "benchmarks"), 0);
	struct bm_profile p;
	must_load(prof, &p);
	assert_true(json_real_value(json_object_get(b, "write_seen_profile")) == p.measured_ns[BM_OP_WRITE_SEEN]);
	assert_true(json_real_value(json_object_get(b, "cpu_held_profile")) == p.measured_ns[BM_OP_CPU_HELD]);
	assert_null(json_object_get(b, "gpu_wait_local_profile"));
	assert_non_null(json_object_get(b, "gpu_wait_local_p50"));
	int na = 0;
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(json_object_get(doc, "context"), "notes"), i, n)
		na += strstr(json_string_value(n), "beside n/a (profile lvp2 measured no gpu_wait_local)") ||
		      strstr(json_string_value(n), "beside n/a (profile lvp2 measured no km_submit)");
	assert_int_equal(na, 2);
	json_decref(doc);
}

static void planted_describe(void *self, const struct bm_cal_result *r, json_t *o)
{
	json_object_set_new(o, "machine", json_string("planted numbers"));
}

/* Whatever the numbers (a loaded CPU's p50s of milliseconds), the profile
 * calibrate writes loads: derived latencies beyond the model's 10 ms are
 * set to 10 ms, and the derivation says so. */
static void a_profile_of_huge_numbers_still_loads(void **state)
{
	(void)state;
	static const struct bm_probe planted = { .api = "planted", .title = "planted", .cpu_signal = "a call",
						 .describe = planted_describe };
	static struct bm_cal_result r = { .rounds = 10 };
	const double ns[BM_OPS] = { [BM_OP_ENQUEUE] = 1e3, [BM_OP_WRITE_SEEN] = 90e6, [BM_OP_EVENT_SPIN] = 200e6,
				    [BM_OP_EVENT_BLOCK] = 1e6, [BM_OP_CPU_GPU_CPU] = 300e6, [BM_OP_GPU_WAIT_SYS] = 1e6,
				    [BM_OP_CPU_HELD] = 1e6 };
	for (int op = 0; op < BM_OPS; op++)
		if ((r.has[op] = ns[op] > 0)) {
			r.m[op] = ns[op];
			r.has_call[op] = true;
			r.call[op] = 1e3;
		}
	json_t *root = bm_cal_profile(&planted, NULL, "planted", &r);
	const char *path = fb_tmp_path(tmpdir, "planted.json");
	assert_int_equal(json_dump_file(root, path, JSON_INDENT(2)), 0);
	const char *limit = json_string_value(json_object_get(json_object_get(root, "derivation"), "limit"));
	assert_non_null(limit);
	assert_non_null(strstr(limit, "set to 10 ms"));
	json_decref(root);
	struct bm_profile p;
	must_load(path, &p);
	assert_int_equal(p.rt.hw.doorbell_ns, 10000000);
	assert_int_equal(p.rt.hw.signal_ns, 10000000);
	assert_int_equal(p.rt.hw.wait_poll_sys_ns, 10000000);
	assert_false(p.has[BM_OP_GPU_WAIT_LOCAL]);
}

/* Run calibrate with argv; expect exit 2, one line on stderr holding want,
 * nothing on stdout and no file written. */
static void refused(const char *const *argv, const char *out, const char *want)
{
	struct fb_exec_result r = fb_exec(tmpdir, argv, FB_EXEC_SEPARATE);
	if (r.status != 2 || fb_count_lines(r.err) != 1 || !strstr(r.err, want))
		fail_msg("exit %d, stderr '%s' (want exit 2 and one line with '%s')", r.status, r.err ? r.err : "",
			 want);
	assert_string_equal(r.out, "");
	assert_int_equal(access(out, F_OK), -1);
	fb_exec_free(&r);
}

/* lavapipe is a CPU: refused without --allow-cpu, by --api vulkan and by
 * the search of every API alike. */
static void lavapipe_is_refused_without_allow_cpu(void **state)
{
	(void)state;
	if (!lavapipe_and_binary())
		return;
	const char *out = fb_tmp_path(tmpdir, "no.json");
	const char *vk[] = { fencebench, "calibrate", "--api", "vulkan", "--out", out, NULL };
	refused(vk, out, "is a CPU implementation, not a GPU (--allow-cpu measures it anyway)");
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (cuda) {
		dlclose(cuda);
		return;   /* an NVIDIA driver: the search would find it first */
	}
	const char *any[] = { fencebench, "calibrate", "--out", out, NULL };
	refused(any, out, "no GPU here: CUDA driver API: no NVIDIA driver");
}

/* No Vulkan driver at all (the loader pointed at nothing): one line, exit 2. */
static void no_vulkan_driver_is_one_line_exit_2(void **state)
{
	(void)state;
	fb_need_binary(fencebench);
	setenv("VK_DRIVER_FILES", "/nonexistent/icd.json", 1);
	setenv("VK_ICD_FILENAMES", "/nonexistent/icd.json", 1);
	const char *out = fb_tmp_path(tmpdir, "none.json");
	const char *vk[] = { fencebench, "calibrate", "--api", "vulkan", "--allow-cpu", "--out", out, NULL };
	refused(vk, out, "fencebench: calibrate: no Vulkan");
	unsetenv("VK_DRIVER_FILES");
	unsetenv("VK_ICD_FILENAMES");
}

/* --trace on the Vulkan backend: both paths' queue tracks with the lists'
 * work, legacy's holds, the CPU waits, and the notes saying how GPU times
 * became host times. */
static void run_frame_on_lavapipe_writes_a_trace(void **state)
{
	(void)state;
	if (!lavapipe_and_binary())
		return;
	const char *t = fb_tmp_path(tmpdir, "vk-trace.json");
	const char *args[] = { "run", "frame", "--set", "backend=vulkan", "--set", "allow_cpu=true", "--set",
			       "validate=true", "--path", "both", "--iterations", "4", "--warmup", "0", "--trace", t,
			       "-q", NULL };
	struct fb_exec_result r = fb_exec_args(tmpdir, fencebench, args);
	if (r.status != 0)
		fail_msg("exit %d: %s", r.status, r.err);
	assert_non_null(strstr(r.out, "trace (legacy): 32 work spans from GPU timestamps, 16 holds"));
	assert_non_null(strstr(r.out, "trace (native): 32 work spans from GPU timestamps, 0 holds"));
	assert_true(strstr(r.out, "GPU timestamps to the host clock by calibrated timestamps") ||
		    strstr(r.out, "span edges carry the offset's uncertainty"));
	fb_exec_free(&r);
	char *text = fb_slurp(t);
	assert_non_null(text);
	const char *want[] = { "\"native: queues\"", "\"legacy: queues\"", "\"legacy: CPU threads\"", "\"prepass\"",
			       "\"tex4\"", "\"Wait (held on the CPU)\"", "\"CPU wait\"", "\"direct0\"" };
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
		if (!strstr(text, want[k]))
			fail_msg("the trace lacks %s", want[k]);
	free(text);
	unlink(t);
}

/* The JSON entry named `name` (benchmarks[i].name; the parameters set
 * follow it as "/key:value"), or fail. */
static json_t *entry(json_t *doc, const char *name)
{
	size_t i, n = strlen(name);
	json_t *b;
	json_array_foreach(json_object_get(doc, "benchmarks"), i, b) {
		const char *s = json_string_value(json_object_get(b, "name"));
		if (!strncmp(s, name, n) && (!s[n] || s[n] == '/'))
			return b;
	}
	fail_msg("no entry %s", name);
	return NULL;
}

/* Every measured key of dev's entry (its own, not the harness's perf.* and
 * interval keys) is one the model's entry has too. */
static void keys_are_the_models(json_t *dev, json_t *model)
{
	const char *key;
	json_t *v;
	json_object_foreach(dev, key, v) {
		if (!strncmp(key, "perf.", 5) || strstr(key, "_ci_") || !strcmp(key, "validation_errors"))
			continue;
		if (!json_object_get(model, key))
			fail_msg("%s: key %s is not the model's", json_string_value(json_object_get(dev, "name")), key);
	}
}

/* Whether a note of doc contains text. */
static bool has_note(json_t *doc, const char *text)
{
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(json_object_get(doc, "context"), "notes"), i, n)
		if (strstr(json_string_value(n), text))
			return true;
	return false;
}

/* One scenario on lavapipe (both paths, validation on) and on the model:
 * the two documents. */
static void run_both_backends(const char *scenario, json_t **dev, json_t **model)
{
	const char *out = fb_tmp_path(tmpdir, "dev.json");
	const char *d[] = { fencebench, "run", scenario, "--set", "backend=vulkan", "--set", "allow_cpu=true", "--set",
			    "validate=true", "--path", "both", "--iterations", "12", "--warmup", "0", "--format", "json",
			    "--out", out, "-q", NULL };
	*dev = fb_exec_json(tmpdir, d, out);
	const char *mout = fb_tmp_path(tmpdir, "model.json");
	const char *m[] = { fencebench, "run", scenario, "--path", "both", "--iterations", "12", "--warmup", "0",
			    "--format", "json", "--out", mout, "-q", NULL };
	*model = fb_exec_json(tmpdir, m, mout);
}

static void gpu_wait_on_lavapipe_counts_as_the_rounds(void **state)
{
	(void)state;
	if (!lavapipe_and_binary())
		return;
	json_t *dev, *model;
	run_both_backends("gpu-wait", &dev, &model);
	static const char *const paths[] = { "native", "legacy" };
	for (size_t p = 0; p < 2; p++) {
		char name[64];
		snprintf(name, sizeof(name), "gpu-wait/path:%s", paths[p]);
		json_t *b = entry(dev, name), *mb = entry(model, name);
		assert_int_equal((int)fb_json_num(b, "validation_errors"), 0);
		assert_int_equal((int)fb_json_num(b, "waits"), 12);
		assert_int_equal((int)fb_json_num(b, "gpu_wait_count"), 12);
		assert_int_equal((int)fb_json_num(b, "signals"), 24);        /* A's and B's, a round */
		assert_int_equal((int)fb_json_num(b, "held_waits"), p ? 12 : 0);
		assert_int_equal((int)fb_json_num(mb, "held_waits"), p ? 12 : 0);   /* the model's count agrees */
		keys_are_the_models(b, mb);
		snprintf(name, sizeof(name), "gpu-wait/cpu/path:%s", paths[p]);
		keys_are_the_models(entry(dev, name), entry(model, name));
		assert_true(fb_json_num(entry(dev, name), "os_sched_wakeups") > 0 || !p);   /* legacy's scheduler thread woke */
	}
	json_decref(dev);
	json_decref(model);
}

static void cpu_wait_on_lavapipe_counts_as_the_rounds(void **state)
{
	(void)state;
	if (!lavapipe_and_binary())
		return;
	/* with calibrated timestamps (lavapipe of Mesa 23 on) a cpu_wait per
	 * round; without them (FENCEBENCH_VK_CALIBRATED=0: as lavapipe 22.3) no
	 * cpu_wait claimed, and a note says why; the counts either way */
	for (int calibrated = 1; calibrated >= 0; calibrated--) {
		if (!calibrated)
			setenv("FENCEBENCH_VK_CALIBRATED", "0", 1);
		json_t *dev, *model;
		run_both_backends("cpu-wait", &dev, &model);
		unsetenv("FENCEBENCH_VK_CALIBRATED");
		bool offered = has_note(dev, "cpu_wait: GPU times on the host clock by calibrated timestamps");
		if (calibrated && !offered)
			print_message("this lavapipe offers no calibrated timestamps: the calibrated path untested\n");
		static const char *const paths[] = { "native", "legacy" };
		for (size_t p = 0; p < 2; p++) {
			char name[64];
			snprintf(name, sizeof(name), "cpu-wait/path:%s", paths[p]);
			json_t *b = entry(dev, name);
			assert_int_equal((int)fb_json_num(b, "validation_errors"), 0);
			assert_int_equal((int)fb_json_num(b, "waited_signals"), 12);
			assert_int_equal((int)fb_json_num(b, "signals"), 12);
			if (calibrated && offered)
				assert_int_equal((int)fb_json_num(b, "cpu_wait_count"), 12);
			else
				assert_null(json_object_get(b, "cpu_wait_count"));
			keys_are_the_models(b, entry(model, name));
			snprintf(name, sizeof(name), "cpu-wait/cpu/path:%s", paths[p]);
			keys_are_the_models(entry(dev, name), entry(model, name));
		}
		assert_true(calibrated ? offered || has_note(dev, "cpu_wait n/a: without calibrated timestamps")
				       : has_note(dev, "cpu_wait n/a: without calibrated timestamps") && !offered);
		json_decref(dev);
		json_decref(model);
	}
}

/* Without allow_cpu lavapipe is refused in one line; help lists the parameters. */
static void fence_scenarios_refuse_lavapipe_and_list_the_backend(void **state)
{
	(void)state;
	if (!lavapipe_and_binary())
		return;
	static const char *const sc[] = { "gpu-wait", "cpu-wait" };
	for (size_t i = 0; i < 2; i++) {
		const char *run[] = { "run", sc[i], "--set", "backend=vulkan", "--iterations", "3", "-q", NULL };
		struct fb_exec_result r = fb_exec_args(tmpdir, fencebench, run);
		assert_int_not_equal(r.status, 0);
		assert_non_null(strstr(r.err, "is a CPU implementation, not a GPU: add --set allow_cpu=true"));
		assert_int_equal(fb_count_lines(r.err) - (strstr(r.err, "note:") ? 1 : 0), 1);
		fb_exec_free(&r);
		const char *help[] = { "help", sc[i], NULL };
		r = fb_exec_args(tmpdir, fencebench, help);
		assert_int_equal(r.status, 0);
		const char *want[] = { "backend          enum", "model|vulkan", "device ", "allow_cpu ", "validate " };
		for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
			if (!strstr(r.out, want[k]))
				fail_msg("help %s lacks %s", sc[i], want[k]);
		fb_exec_free(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_probe_is_clean_under_validation_and_a_broken_one_is_caught),
		cmocka_unit_test(run_frame_on_lavapipe_writes_a_trace),
		cmocka_unit_test(gpu_wait_on_lavapipe_counts_as_the_rounds),
		cmocka_unit_test(cpu_wait_on_lavapipe_counts_as_the_rounds),
		cmocka_unit_test(fence_scenarios_refuse_lavapipe_and_list_the_backend),
		cmocka_unit_test(calibrate_writes_a_lavapipe_profile),
		cmocka_unit_test(a_failed_write_keeps_the_old_profile),
		cmocka_unit_test(analogs_runs_under_a_vulkan_profile),
		cmocka_unit_test(a_profile_of_huge_numbers_still_loads),
		cmocka_unit_test(lavapipe_is_refused_without_allow_cpu),
		cmocka_unit_test(no_vulkan_driver_is_one_line_exit_2),
	};
	return cmocka_run_group_tests_name(__FILE__, tests, setup, teardown);
}
