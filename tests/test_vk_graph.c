/* tests/test_vk_graph.c — the workloads and the replay files on a Vulkan
 * device (benchmarks/vulkan/vk_graph.h), both strategies, under the Khronos
 * validation layer with synchronization validation (any message fails):
 *   - every workload and every shipped replay file completes its frames with
 *     the fence values the frame graph gives;
 *   - held_waits is 0 on native and the graph's queue Waits on legacy, the
 *     CPU waits are the ones the workload asks for, and the replay files
 *     count as on the model (same fences, CPU waits, held waits);
 *   - a legacy scheduler that submits held work before the value arrives
 *     (broken_early_release) is caught: a queue held behind a gate runs;
 *   - a deadlock fails the CPU wait within the watchdog's bound, naming each
 *     queue's wait, and the teardown drains;
 *   - `fencebench run frame --set compare_model=true` (the binary, lavapipe
 *     only, validate=true: any message fails) puts the device's and the
 *     model's native/legacy ratios side by side, each with its 95 % interval
 *     across 3 repetitions, and a verdict on each pair; with one repetition
 *     it says there is no interval and gives no verdict.
 *   - --trace's timeline (vk_trace.c) of `frame`: valid, a track per queue
 *     with one span per list per frame from GPU timestamps, ordered and not
 *     overlapping on each queue, the scheduler's holds on legacy (one per
 *     held Wait) and none on native, a span per CPU wait; a recorder that
 *     loses the lists' bounds (BROKEN_SPAN_PER_BATCH) is caught.
 * Runs on lavapipe here (allow_cpu): tiny durations keep it fast, since its
 * "GPU" is this machine's CPUs.  No Vulkan device: skipped, saying why. */
#include <dlfcn.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks/replay.h"
#include "benchmarks/vulkan/vk_graph.h"
#include "benchmarks/vulkan/vk_testing.h"
#include "benchmarks/workload.h"
#include "lockfree/arch.h"
#include "src/fb_trace.h"
#include "tests/fb_test_exec.h"

#define LVP_ICD "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"

static char fencebench[PATH_MAX + 16];
static char tmpdir[] = "/tmp/fb_test_vk_graph.XXXXXX";
FB_TEST_FIXTURES(fencebench, sizeof(fencebench), tmpdir)

/* Under ASan: what the Vulkan loader, the validation layer and lavapipe
 * leak at exit is theirs, suppressed by their module's name (never a frame
 * of ours); under TSan, the validation layer's race between its own
 * threads on its own locks (a rwlock freed by one while its queue thread
 * unlocks it), and the lock-order cycle it reports between two of the
 * layer's own mutexes (both acquisitions inside the layer, on a queue
 * thread of its own), by the same name.  The modules are kept mapped (RTLD_NODELETE) so that the leak
 * reports can name them after the loader closed them. */
static const char *const vk_modules[] = { "libvulkan.so.1", "libVkLayer_khronos_validation.so", "libvulkan_lvp.so" };

__attribute__((constructor)) static void vk_keep_modules(void)
{
	for (size_t i = 0; i < sizeof(vk_modules) / sizeof(vk_modules[0]); i++)
		dlopen(vk_modules[i], RTLD_NOW | RTLD_NODELETE);   /* absent: nothing to keep */
}

const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libvulkan.so.1\nleak:libVkLayer_khronos_validation.so\nleak:libvulkan_lvp.so\n"
	       "leak:libLLVM-15.so\n";
}

const char *__tsan_default_suppressions(void);
const char *__tsan_default_suppressions(void)
{
	return "race:libVkLayer_khronos_validation.so\ndeadlock:libVkLayer_khronos_validation.so\n";
}

#define US 1000ull
#define MS 1000000ull

static const enum rt_path paths[] = { RT_PATH_NATIVE, RT_PATH_LEGACY };

/* A Vulkan workload under the validation layer; false: no device here (skip). */
static bool vk_up(struct bm_wl *w, enum rt_path path, bool broken)
{
	struct bm_wl_config c = { .backend = BM_BACKEND_VULKAN, .path = path, .validate = true, .device = 0,
				  .allow_cpu = true, .stall_ns = 2000 * (int64_t)MS, .broken_early_release = broken };
	char err[512] = "";
	int rc = bm_wl_up_config(w, &c, err, sizeof(err));
	if (rc == -ENOENT || rc == -ENODEV) {
		print_message("no Vulkan device: %s\n", err);
		return false;
	}
	if (rc)
		fail_msg("bm_wl_up_config: %d %s", rc, err);
	return true;
}

#define VK_UP_OR_SKIP(w, path, broken)                                                       \
	do {                                                                                 \
		if (!vk_up((w), (path), (broken)))                                           \
			fb_skip("no Vulkan loader or device (install mesa-vulkan-drivers)"); \
	} while (0)

/* The region's counts: no validation message, held waits as expected. */
static void check_counts(struct bm_wl *w, const struct bm_wl_snap *a, enum rt_path path, uint64_t waits,
			 uint64_t cpu_waits)
{
	struct bm_wl_snap b;
	bm_wl_snap(w, &b);
	assert_true(b.validating);
	if (b.validation_errors - a->validation_errors) {
		char msg[512];
		w->ops->validation_message(w->be, msg, sizeof(msg));
		fail_msg("%llu validation messages: %s", (unsigned long long)(b.validation_errors - a->validation_errors), msg);
	}
	assert_int_equal(b.held_waits - a->held_waits, path == RT_PATH_LEGACY ? waits : 0);
	assert_int_equal(b.cpu_waits - a->cpu_waits, cpu_waits);
	assert_true(b.gpu_signals > a->gpu_signals);
	/* lavapipe has timestamps: GPU busy per queue type, and the direct queue worked */
	assert_true(b.has_busy);
	assert_true(b.busy_ns[0] > a->busy_ns[0]);
}

static void frame_both_strategies(void **state)
{
	(void)state;
	for (size_t p = 0; p < 2; p++) {
		struct bm_wl w;
		VK_UP_OR_SKIP(&w, paths[p], false);
		struct bm_wl_snap a;
		bm_wl_snap(&w, &a);
		struct bm_frame_cfg cfg = { .geometry_ns = 10 * US, .texture_ns = 5 * US, .prepass_ns = 20 * US,
					    .lighting_ns = 20 * US, .final_ns = 20 * US, .units = 1, .frames_in_flight = 2 };
		struct bm_frame f;
		assert_int_equal(bm_frame_init(&f, &w, &cfg), 0);
		const uint64_t frames = 12;
		for (uint64_t i = 0; i < frames; i++)
			assert_int_equal(bm_frame_submit(&f), 0);
		assert_int_equal(bm_frame_drain(&f), 0);
		assert_int_equal(bm_fence_value(&w, f.copy_fence), 100 * frames + 2);
		assert_int_equal(bm_fence_value(&w, f.render_fence), 100 * (frames + 1) + 1);
		assert_int_equal(bm_fence_value(&w, f.compute_fence), 100 * (frames + 2) + 1);
		assert_int_equal(bm_fence_value(&w, f.frame_fence), frames);
		/* the seed's four queue Waits a frame; the CPU throttle past the frames in flight, and the drain */
		check_counts(&w, &a, paths[p], 4 * frames, frames - cfg.frames_in_flight + 1);
		bm_frame_fini(&f);
		assert_int_equal(bm_wl_down(&w), 0);
	}
}

static void ring_heap_both_strategies(void **state)
{
	(void)state;
	for (size_t p = 0; p < 2; p++) {
		struct bm_wl w;
		VK_UP_OR_SKIP(&w, paths[p], false);
		struct bm_wl_snap a;
		bm_wl_snap(&w, &a);
		struct bm_ring_heap r;
		assert_int_equal(bm_ring_heap_init(&r, &w, 3, 4, 10 * US, 20 * US, 1), 0);
		const uint64_t steps = 16;
		for (uint64_t i = 0; i < steps; i++)
			assert_int_equal(bm_ring_heap_step(&r), 0);
		assert_int_equal(bm_ring_heap_drain(&r), 0);
		assert_int_equal(bm_fence_value(&w, r.fence1), steps);
		assert_int_equal(bm_fence_value(&w, r.fence2), steps);
		/* direct waits every step, copy past the ring's length; the CPU past cpu_latency, and the drain */
		check_counts(&w, &a, paths[p], steps + (steps - 3), steps - 4 + 1);
		bm_ring_heap_fini(&r);
		assert_int_equal(bm_wl_down(&w), 0);
	}
}

static void pipeline_and_async_both_strategies(void **state)
{
	(void)state;
	for (size_t p = 0; p < 2; p++) {
		struct bm_wl w;
		VK_UP_OR_SKIP(&w, paths[p], false);
		struct bm_wl_snap a;
		bm_wl_snap(&w, &a);
		struct bm_pipeline pl;
		assert_int_equal(bm_pipeline_init(&pl, &w, 3, 2, 10 * US, 20 * US, 1), 0);
		for (int i = 0; i < 12; i++)
			assert_int_equal(bm_pipeline_step(&pl), 0);
		assert_int_equal(bm_pipeline_drain(&pl), 0);
		assert_int_equal(bm_fence_value(&w, pl.compute_fence), 12);
		assert_int_equal(bm_fence_value(&w, pl.graphics_fence), 10);
		/* compute waits at the top once FrameNumber > 2 (turns 4..12: 9), graphics for frames 3..12 (10);
		 * the CPU once FrameNumber > 3 (turns 5..12: 8), and the drain's two */
		check_counts(&w, &a, paths[p], 9 + 10, 8 + 2);
		bm_pipeline_fini(&pl);
		bm_wl_snap(&w, &a);
		struct bm_async as;
		assert_int_equal(bm_async_init(&as, &w, 3, 2, 10 * US, 20 * US, 1), 0);
		for (int i = 0; i < 40; i++)
			assert_int_equal(bm_async_step(&as), 0);
		assert_int_equal(bm_async_drain(&as), 0);
		assert_int_equal(bm_fence_value(&w, as.fences[0]), as.frames[0]);
		assert_int_equal(bm_fence_value(&w, as.fences[1]), as.frames[1]);
		struct bm_wl_snap b;
		bm_wl_snap(&w, &b);
		/* graphics' one Wait at init, compute's once past ComputeGraphicsLatency */
		assert_int_equal(b.held_waits - a.held_waits, paths[p] == RT_PATH_LEGACY ? 1 + as.frames[0] - 2 : 0);
		assert_int_equal(b.validation_errors, 0);
		bm_async_fini(&as);
		assert_int_equal(bm_wl_down(&w), 0);
	}
}

struct replay_counts {
	uint64_t fences[BM_REPLAY_FENCES];
	uint64_t cpu_waits, held_waits, validation;
};

/* Run a replay file for `frames` on w, its counts into c. */
static void replay_on(struct bm_wl *w, const struct bm_replay *spec, uint64_t frames, struct replay_counts *c)
{
	char err[512];
	struct bm_wl_snap a, b;
	bm_wl_snap(w, &a);
	struct bm_replay_run rr;
	if (bm_replay_start(&rr, spec, w, err, sizeof(err)))
		fail_msg("%s", err);
	for (uint64_t i = 0; i < frames; i++)
		assert_int_equal(bm_replay_frame(&rr), 0);
	assert_int_equal(bm_replay_drain(&rr), 0);
	bm_wl_snap(w, &b);
	for (size_t i = 0; i < BM_REPLAY_FENCES && rr.f[i]; i++)
		c->fences[i] = bm_fence_value(w, rr.f[i]);
	c->cpu_waits = b.cpu_waits - a.cpu_waits;
	c->held_waits = b.held_waits - a.held_waits;
	c->validation = b.validation_errors - a.validation_errors;
	if (c->validation) {
		char msg[512];
		w->ops->validation_message(w->be, msg, sizeof(msg));
		print_message("validation: %s\n", msg);
	}
	assert_int_equal(bm_wl_down(w), 0);
	bm_replay_stop(&rr);
}

/* Every shipped file: the same counts on Vulkan as on the model, both strategies. */
static void replay_files_count_as_on_the_model(void **state)
{
	(void)state;
	static const char *const files[] = { "benchmarks/workloads/frame.json", "benchmarks/workloads/ring-heap.json",
					     "benchmarks/workloads/pipeline.json" };
	const uint64_t frames = 8;
	for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
		struct bm_replay *spec = NULL;
		char err[512];
		if (bm_replay_load(files[k], &spec, err, sizeof(err)))
			fail_msg("%s", err);
		uint64_t waits = 0;
		for (uint64_t n = 1; n <= frames; n++)
			waits += bm_replay_waits(spec, n);
		for (size_t p = 0; p < 2; p++) {
			struct replay_counts m, v;
			memset(&m, 0, sizeof(m));
			memset(&v, 0, sizeof(v));
			struct bm_wl w;
			assert_int_equal(bm_wl_up(&w, paths[p], false, false, err, sizeof(err)), 0);
			replay_on(&w, spec, frames, &m);
			VK_UP_OR_SKIP(&w, paths[p], false);
			replay_on(&w, spec, frames, &v);
			print_message("%s %s: %llu held waits (model %llu), %llu CPU waits\n", files[k],
				      paths[p] == RT_PATH_LEGACY ? "legacy" : "native", (unsigned long long)v.held_waits,
				      (unsigned long long)m.held_waits, (unsigned long long)v.cpu_waits);
			assert_memory_equal(m.fences, v.fences, sizeof(m.fences));
			assert_int_equal(m.cpu_waits, v.cpu_waits);
			assert_int_equal(v.held_waits, paths[p] == RT_PATH_LEGACY ? waits : 0);
			assert_int_equal(m.held_waits, v.held_waits);      /* the model counts the same holds */
			assert_int_equal(v.validation, 0);
		}
		bm_replay_free(spec);
	}
}

/* The ring with the render queue held behind a gate fence: with the gate
 * closed nothing is drawn (fence1 stays 0).  Returns fence1 seen while the
 * gate was closed. */
static uint64_t ring_behind_gate(enum rt_path path, bool broken)
{
	struct bm_wl w;
	if (!vk_up(&w, path, broken))
		return UINT64_MAX;
	struct bm_fence *gate;
	assert_int_equal(bm_fence_create(&w, &gate), 0);
	assert_int_equal(bm_wait(&w, w.direct, gate, 1), 0);
	struct bm_ring_heap r;
	assert_int_equal(bm_ring_heap_init(&r, &w, 3, 0, 10 * US, 10 * US, 1), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(bm_ring_heap_step(&r), 0);
	/* the copy queue fills the ring (it waits for nothing yet); then a draw
	 * gets 300 ms: none may come with the gate closed (the broken scheduler's
	 * comes at once, and ends the wait) */
	struct bm_event *ev;
	assert_int_equal(bm_event_create(&w, false, false, &ev), 0);
	assert_int_equal(bm_set_event(&w, r.fence2, 3, ev), 0);
	assert_int_equal(w.ops->event_wait_any(w.be, &ev, 1, 2000 * (int64_t)MS), 0);
	assert_int_equal(bm_set_event(&w, r.fence1, 1, ev), 0);
	int rc = w.ops->event_wait_any(w.be, &ev, 1, 300 * (int64_t)MS);
	assert_true(rc == 0 || rc == -ETIMEDOUT);
	uint64_t drawn = bm_fence_value(&w, r.fence1);
	assert_int_equal(bm_fence_signal(&w, gate, 1), 0);
	assert_int_equal(bm_ring_heap_drain(&r), 0);
	assert_int_equal(bm_fence_value(&w, r.fence1), 3);
	bm_ring_heap_fini(&r);
	assert_int_equal(bm_wl_down(&w), 0);
	return drawn;
}

/* Legacy holds the render queue's later work on the CPU until the gate's
 * value arrives; the broken scheduler that submits it at once is caught. */
static void legacy_hold_waits_for_the_value(void **state)
{
	(void)state;
	uint64_t ok = ring_behind_gate(RT_PATH_LEGACY, false);
	if (ok == UINT64_MAX)
		fb_skip("no Vulkan loader or device (install mesa-vulkan-drivers)");
	assert_int_equal(ok, 0);
	assert_int_equal(ring_behind_gate(RT_PATH_NATIVE, false), 0);
	assert_true(ring_behind_gate(RT_PATH_LEGACY, true) > 0);     /* broken_early_release: drawn behind a closed gate */
}

/* A cycle of waits: the CPU wait fails within the watchdog's bound naming
 * each queue's wait; teardown releases them and drains.  Both strategies. */
static void deadlock_fails_naming_each_wait(void **state)
{
	(void)state;
	for (size_t p = 0; p < 2; p++) {
		struct bm_wl w;
		VK_UP_OR_SKIP(&w, paths[p], false);
		w.stall_ns = 100 * (int64_t)MS;
		struct bm_fence *f, *g;
		assert_int_equal(bm_fence_create(&w, &f), 0);
		assert_int_equal(bm_fence_create(&w, &g), 0);
		assert_int_equal(bm_wl_name_fence(&w, f, "f"), 0);
		assert_int_equal(bm_wl_name_fence(&w, g, "g"), 0);
		assert_int_equal(bm_wait(&w, w.compute, g, 1), 0);
		assert_int_equal(bm_signal(&w, w.compute, f, 1), 0);
		assert_int_equal(bm_wait(&w, w.direct, f, 1), 0);
		assert_int_equal(bm_signal(&w, w.direct, g, 1), 0);
		uint64_t t0 = lf_now_ns();
		assert_int_equal(bm_wl_cpu_wait(&w, f, 1), -ETIMEDOUT);
		assert_true(lf_now_ns() - t0 < 1000 * MS);
		const char *m = bm_wl_stall(&w);
		print_message("%s\n", m);
		const char *want[] = { "no progress for 0.1 s", "the CPU waits for 'f' >= 1 (now 0)",
				       "queue 'compute0' waits for 'g' >= 1 (now 0)", "queue 'direct0' waits for 'f' >= 1 (now 0)" };
		for (size_t k = 0; k < 4; k++)
			if (!strstr(m, want[k]))
				fail_msg("'%s' lacks '%s'", m, want[k]);
		assert_int_equal(bm_wl_down(&w), 0);
	}
}

/* ---- --trace ---- */

/* What a rendered trace holds, read back from its JSON. */
struct vk_trace_read {
	bool valid;
	size_t queue_tracks, work, holds, cpu_waits;
	size_t bad_order;               /* a span ending before it starts, or overlapping the one before on its track */
	size_t spans_on_sched;          /* spans on the scheduler's tracks */
};

/* Track names by (pid, tid) from the "M" events, then every "X": counted by
 * name, checked in the file's order (track by track, by time). */
static struct vk_trace_read vk_trace_read(const char *text, const char *label)
{
	struct vk_trace_read r = { 0 };
	json_t *root = json_loads(text, 0, NULL), *evs = json_object_get(root, "traceEvents");
	r.valid = json_is_array(evs);
	json_t *groups = json_object(), *threads = json_object();
	char key[64], queues[64];
	snprintf(queues, sizeof(queues), "%s: queues", label);
	size_t i;
	json_t *e;
	json_array_foreach(evs, i, e) {
		const char *name = json_string_value(json_object_get(e, "name"));
		long long pid = json_integer_value(json_object_get(e, "pid")), tid = json_integer_value(json_object_get(e, "tid"));
		json_t *arg = json_object_get(json_object_get(e, "args"), "name");
		if (!strcmp(name, "process_name")) {
			snprintf(key, sizeof(key), "%lld", pid);
			json_object_set(groups, key, arg);
		} else if (!strcmp(name, "thread_name")) {
			snprintf(key, sizeof(key), "%lld/%lld", pid, tid);
			json_object_set(threads, key, arg);
			snprintf(key, sizeof(key), "%lld", pid);
			r.queue_tracks += !strcmp(json_string_value(json_object_get(groups, key)) ?: "", queues);
		}
	}
	long long last_tid = -1;
	double last_end = 0;
	json_array_foreach(evs, i, e) {
		if (strcmp(json_string_value(json_object_get(e, "ph")), "X"))
			continue;
		const char *name = json_string_value(json_object_get(e, "name"));
		long long pid = json_integer_value(json_object_get(e, "pid")), tid = json_integer_value(json_object_get(e, "tid"));
		double ts = json_number_value(json_object_get(e, "ts")), dur = json_number_value(json_object_get(e, "dur"));
		snprintf(key, sizeof(key), "%lld", pid);
		const char *group = json_string_value(json_object_get(groups, key)) ?: "";
		snprintf(key, sizeof(key), "%lld/%lld", pid, tid);
		const char *track = json_string_value(json_object_get(threads, key)) ?: "";
		if (!strcmp(group, queues)) {
			r.work++;
			r.bad_order += dur < 0 || (tid == last_tid && ts + 1e-3 < last_end);
			last_tid = tid;
			last_end = ts + dur;
		}
		r.holds += !strcmp(name, "Wait (held on the CPU)");
		r.cpu_waits += !strcmp(name, "CPU wait");
		r.spans_on_sched += !strncmp(track, "vk-sched (tid ", 14);
		r.bad_order += dur < 0;
	}
	json_decref(groups);
	json_decref(threads);
	json_decref(root);
	return r;
}

/* `frames` frames of `frame` traced on path; the trace read back and the
 * region's held waits and CPU waits. */
static bool traced_frame(enum rt_path path, enum bm_vkg_trace_broken broken, uint64_t frames, struct vk_trace_read *r,
			 struct bm_trace_counts *c, uint64_t *held, uint64_t *cpu_waits)
{
	struct bm_wl w;
	if (!vk_up(&w, path, false))
		return false;
	struct bm_wl_snap a;
	bm_wl_snap(&w, &a);
	assert_non_null(w.ops->trace_start);
	assert_int_equal(w.ops->trace_start(w.be, broken), 0);
	w.trace_waits = true;               /* as the harness does when the run traces */
	struct bm_frame_cfg cfg = { .geometry_ns = 10 * US, .texture_ns = 5 * US, .prepass_ns = 20 * US,
				    .lighting_ns = 20 * US, .final_ns = 20 * US, .units = 1, .frames_in_flight = 2 };
	struct bm_frame f;
	assert_int_equal(bm_frame_init(&f, &w, &cfg), 0);
	for (uint64_t i = 0; i < frames; i++)
		assert_int_equal(bm_frame_submit(&f), 0);
	assert_int_equal(bm_frame_drain(&f), 0);
	struct bm_wl_snap b;
	bm_wl_snap(&w, &b);
	check_counts(&w, &a, path, 4 * frames, frames - cfg.frames_in_flight + 1);   /* no validation message */
	*held = b.held_waits - a.held_waits;
	*cpu_waits = b.cpu_waits - a.cpu_waits;
	struct fb_trace *t = fb_trace_new();
	const char *label = path == RT_PATH_LEGACY ? "legacy" : "native";
	assert_int_equal(w.ops->trace_copy(w.be, t, label, c), 0);
	char *text = fb_trace_render(t);
	*r = vk_trace_read(text, label);
	print_message("%s: %zu queue tracks, %zu work spans, %zu holds, %zu CPU waits; %s\n", label, r->queue_tracks,
		      r->work, r->holds, r->cpu_waits, c->clock);
	free(text);
	fb_trace_free(t);
	bm_frame_fini(&f);
	assert_int_equal(bm_wl_down(&w), 0);
	return true;
}

/* The timeline of `frame` on both strategies: what the issue of a trace on
 * a device asks, in counts.  8 lists a frame (geometry, four textures in one
 * Execute, prepass, lighting, final), 4 queue Waits a frame. */
static void frame_trace_has_queues_holds_and_waits(void **state)
{
	(void)state;
	const uint64_t frames = 6;
	for (size_t p = 0; p < 2; p++) {
		struct vk_trace_read r;
		struct bm_trace_counts c;
		uint64_t held, cpu_waits;
		if (!traced_frame(paths[p], BM_VKG_TRACE_OK, frames, &r, &c, &held, &cpu_waits))
			fb_skip("no Vulkan loader or device (install mesa-vulkan-drivers)");
		assert_true(r.valid);
		assert_int_equal(r.queue_tracks, 3);                 /* direct0, compute0, copy0 */
		assert_int_equal(r.work, 8 * frames);
		assert_int_equal(c.work, r.work);
		assert_int_equal(r.bad_order, 0);
		assert_int_equal(c.clamped, 0);                      /* one device queue: nothing begins early */
		assert_int_equal(r.cpu_waits, cpu_waits);
		assert_int_equal(r.holds, held);
		assert_int_equal(r.holds, paths[p] == RT_PATH_LEGACY ? 4 * frames : 0);
		assert_int_equal(r.spans_on_sched, r.holds);
		assert_int_equal(c.dropped, 0);
		/* how GPU times became host times, whichever way the device allows */
		assert_true(strstr(c.clock, "by calibrated timestamps") ||
			    strstr(c.clock, "span edges carry the offset's uncertainty"));
	}
	struct vk_trace_read r;
	struct bm_trace_counts c;
	uint64_t held, cpu_waits;
	assert_true(traced_frame(RT_PATH_NATIVE, BM_VKG_TRACE_BROKEN_SPAN_PER_BATCH, frames, &r, &c, &held, &cpu_waits));
	assert_int_equal(r.work, 5 * frames);                        /* caught: the textures' four lists as one */
}

/* ---- compare_model through the binary ---- */

/* fencebench run frame on lavapipe alone, compare_model and validate on,
 * reps repetitions: its JSON document; NULL (skipped) without lavapipe. */
static json_t *compare_run(const char *reps, const char *out)
{
	if (access(LVP_ICD, R_OK)) {
		fb_skip("no lavapipe here (scripts/install-deps.sh installs it)");
		return NULL;
	}
	fb_need_binary(fencebench);
	setenv("VK_DRIVER_FILES", LVP_ICD, 1);
	setenv("VK_ICD_FILENAMES", LVP_ICD, 1);
	const char *argv[] = { fencebench, "run", "frame", "--set", "backend=vulkan", "--set", "allow_cpu=true",
			       "--set", "compare_model=true", "--set", "validate=true", "--path", "both",
			       "--repetitions", reps, "--duration", "0.1s", "--warmup", "0.02s", "--format", "json",
			       "--out", out, "-q", NULL };
	return fb_exec_json(tmpdir, argv, out);
}

static const char *meta(json_t *e, const char *key)
{
	const char *v = json_string_value(json_object_get(json_object_get(e, "fencebench"), key));
	return v ? v : "";
}

/* The entry of section and path whose aggregate_name is agg (NULL: the
 * iteration entry of repetition 0); fails the test when there is none. */
static json_t *entry_of(json_t *doc, const char *section, const char *path, const char *agg)
{
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(doc, "benchmarks"), i, e) {
		const char *a = json_string_value(json_object_get(e, "aggregate_name"));
		if (strcmp(meta(e, "section"), section) || strcmp(meta(e, "path"), path))
			continue;
		if (agg ? a && !strcmp(a, agg) : !a && json_integer_value(json_object_get(e, "repetition_index")) == 0)
			return e;
	}
	fail_msg("no %s/%s %s entry", section, path, agg ? agg : "iteration");
	return NULL;
}

/* Every entry that reports validation messages reports none, and the device's do. */
static void no_validation_message(json_t *doc)
{
	size_t i, device = 0;
	json_t *e;
	json_array_foreach(json_object_get(doc, "benchmarks"), i, e) {
		if (!json_object_get(e, "validation_errors"))
			continue;
		if (fb_json_num(e, "validation_errors") != 0)
			fail_msg("%s: validation messages", json_string_value(json_object_get(e, "name")));
		device += !*meta(e, "section");
	}
	assert_true(device > 0);
}

static bool has_note(json_t *doc, const char *a, const char *b)
{
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(json_object_get(doc, "context"), "notes"), i, n)
		if (strstr(json_string_value(n), a) && (!b || strstr(json_string_value(n), b)))
			return true;
	return false;
}

static void compare_model_puts_intervals_and_a_verdict(void **state)
{
	(void)state;
	json_t *doc = compare_run("3", fb_tmp_path(tmpdir, "cmp3.json"));
	if (!doc)
		return;
	no_validation_message(doc);
	json_t *mean = entry_of(doc, "compare", "legacy", "mean");
	static const char *const ratios[] = { "frames_per_s_ratio", "host_cpu_per_frame_ratio" };
	static const char *const sides[] = { "device", "model" };
	char k[128];
	for (size_t r = 0; r < 2; r++) {
		for (size_t s = 0; s < 2; s++) {
			snprintf(k, sizeof(k), "%s_%s", ratios[r], sides[s]);
			double v = fb_json_num(mean, k);
			snprintf(k, sizeof(k), "%s_%s_ci_lo", ratios[r], sides[s]);
			double lo = fb_json_num(mean, k);
			snprintf(k, sizeof(k), "%s_%s_ci_hi", ratios[r], sides[s]);
			double hi = fb_json_num(mean, k);
			print_message("%s_%s %.3g [%.3g, %.3g]\n", ratios[r], sides[s], v, lo, hi);
			assert_true(v > 0 && lo <= v && v <= hi);
		}
		snprintf(k, sizeof(k), "%s_agree", ratios[r]);
		double verdict = fb_json_num(mean, k);
		assert_true(verdict == 0 || verdict == 1);
		snprintf(k, sizeof(k), "legacy %s: device", ratios[r]);
		assert_true(has_note(doc, k, verdict == 1 ? ": agree" : ": DISAGREE"));
	}
	/* the counts follow the graph on both: 0 and its 4 queue Waits, the same every repetition */
	assert_true(fb_json_num(mean, "held_waits_per_frame_native_device") == 0);
	assert_true(fb_json_num(mean, "held_waits_per_frame_legacy_device") == 4);
	assert_true(fb_json_num(mean, "held_waits_per_frame_legacy_model") == 4);
	assert_true(fb_json_num(mean, "held_waits_per_frame_native_agree") == 1);
	assert_true(fb_json_num(mean, "held_waits_per_frame_legacy_agree") == 1);
	/* lavapipe raises no interrupt: nothing beside the model's, and no verdict */
	assert_null(json_object_get(mean, "interrupts_per_frame_legacy_agree"));
	assert_true(has_note(doc, "the device has no GPU interrupt line to count", NULL));
	json_decref(doc);
}

static void compare_model_one_repetition_gives_no_verdict(void **state)
{
	(void)state;
	json_t *doc = compare_run("1", fb_tmp_path(tmpdir, "cmp1.json"));
	if (!doc)
		return;
	no_validation_message(doc);
	json_t *it = entry_of(doc, "compare", "legacy", NULL);
	assert_true(fb_json_num(it, "frames_per_s_ratio_device") > 0 && fb_json_num(it, "frames_per_s_ratio_model") > 0);
	assert_null(json_object_get(it, "frames_per_s_ratio_device_ci_lo"));
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(doc, "benchmarks"), i, e) {
		const char *key;
		json_t *v;
		json_object_foreach(e, key, v)
			if (strstr(key, "_agree"))
				fail_msg("a verdict from one repetition: %s", key);
	}
	assert_true(has_note(doc, "legacy frames_per_s_ratio: one repetition, so no 95 % interval and no verdict", NULL));
	json_decref(doc);
}

/* ---- the GPU clock and the work records on a hand-made backend (no
 * device: the driver entry points stubbed in g->vk.fn) ---- */

static uint64_t stub_tick, stub_host, stub_dev;

static VkResult VKAPI_CALL stub_calibrated(VkDevice d, uint32_t n, const VkCalibratedTimestampInfoEXT *info,
					   uint64_t *ts, uint64_t *dev)
{
	(void)d;
	assert_int_equal(n, 2);
	assert_int_equal(info[0].timeDomain, VK_TIME_DOMAIN_DEVICE_EXT);
	assert_int_equal(info[1].timeDomain, VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT);
	ts[0] = stub_tick;
	ts[1] = stub_host;
	*dev = stub_dev;
	return VK_SUCCESS;
}

/* Calibrated timestamps put GPU ticks on the host clock exactly: a known
 * offset in, the exact spans out; and the scenario may subtract them. */
static void calibrated_timestamps_give_exact_spans(void **state)
{
	(void)state;
	void *g = bm_vkg_fake_new(2.0, NULL);
	assert_non_null(g);
	uint64_t dev = 0;
	assert_int_equal(bm_vkg_fake_calibrate(g), -ENOTSUP);   /* not offered: no claim */
	assert_false(bm_vkg_clock_calibrated(g, &dev));
	bm_vkg_fake_free(g);
	stub_tick = 1000000;
	stub_host = 5000000000ull;
	stub_dev = 7;
	g = bm_vkg_fake_new(2.0, stub_calibrated);
	bm_vkg_fake_sample(g, 100, 900000, 10, 20);   /* a loose bound first: calibration replaces it */
	assert_int_equal(bm_vkg_fake_calibrate(g), 0);
	assert_true(bm_vkg_clock_calibrated(g, &dev));
	assert_int_equal(dev, 7);
	bm_vkg_fake_work(g, stub_tick + 100, stub_tick + 150);
	uint64_t t0[2], t1[2];
	size_t n = 0;
	assert_int_equal(bm_vkg_fake_spans(g, t0, t1, 2, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(t0[0], stub_host + 200);
	assert_int_equal(t1[0], stub_host + 300);
	bm_vkg_fake_free(g);
}

/* The spin's calibration on a busy host: a round whose short tries were
 * all preempted past the full ones is measured again, not taken for a
 * device that does not loop; a device whose full loop is never the longer
 * fails after a bounded number of dispatches; a dispatch's error is
 * returned as is. */
struct cal_script {
	unsigned calls, noisy_rounds;   /* the first noisy_rounds rounds: every short try 300 us */
	double shortest, full;          /* otherwise: short, full dispatches */
	int fail_at;                    /* the call that fails with -ETIMEDOUT (0: none) */
};

static int cal_measure(void *ctx, uint32_t loops, double *ns)
{
	struct cal_script *c = ctx;
	unsigned call = ++c->calls, round = (call - 1) / 6;   /* 3 short, 3 full tries a round */
	if (c->fail_at && (int)call == c->fail_at)
		return -ETIMEDOUT;
	bool is_short = loops < 10000;
	*ns = is_short ? (round < c->noisy_rounds ? 300000 : c->shortest) : c->full;
	return 0;
}

static void spin_calibration_survives_a_busy_round(void **state)
{
	(void)state;
	double s, f;
	struct cal_script busy = { .noisy_rounds = 2, .shortest = 56000, .full = 260000 };
	assert_int_equal(bm_vkg_cal_slope(cal_measure, &busy, &s, &f), 0);
	assert_int_equal(busy.calls, 18);                  /* two rounds inverted, the third not */
	assert_true(s < 60000 && f > 250000 && f < 300000);
	struct cal_script flat = { .shortest = 50000, .full = 50000 };
	assert_int_equal(bm_vkg_cal_slope(cal_measure, &flat, &s, &f), -EIO);
	assert_true(flat.calls > 6 && flat.calls <= 6 * 16);   /* more than one round, and bounded */
	struct cal_script fails = { .shortest = 56000, .full = 260000, .fail_at = 4 };
	assert_int_equal(bm_vkg_cal_slope(cal_measure, &fails, &s, &f), -ETIMEDOUT);
	assert_int_equal(fails.calls, 4);
}

/* Absolute ticks near 1.7e18 (a double steps 256 there) keep their
 * difference: period 1, t1 = t0 + 100 gives a span of 100, through either
 * clock. */
static void large_ticks_keep_their_difference(void **state)
{
	(void)state;
	const uint64_t T = 1700000000000000001ull;
	for (int calibrated = 0; calibrated < 2; calibrated++) {
		void *g = bm_vkg_fake_new(1.0, calibrated ? stub_calibrated : NULL);
		assert_non_null(g);
		if (calibrated) {
			stub_tick = T - 12345;
			stub_host = 1000000;
			assert_int_equal(bm_vkg_fake_calibrate(g), 0);
		} else {
			bm_vkg_fake_sample(g, 1000000, 1000000 + 700, T - 12345, T - 12345 + 500);
		}
		bm_vkg_fake_work(g, T, T + 100);
		uint64_t t0, t1;
		size_t n = 0;
		assert_int_equal(bm_vkg_fake_spans(g, &t0, &t1, 1, &n), 0);
		assert_int_equal(n, 1);
		assert_int_equal(t1 - t0, 100);
		bm_vkg_fake_free(g);
	}
}

/* No clock relation known (no calibration dispatch timed): no spans
 * claimed on the host clock. */
static void no_clock_no_spans(void **state)
{
	(void)state;
	void *g = bm_vkg_fake_new(1.0, NULL);
	assert_non_null(g);
	bm_vkg_fake_work(g, 10, 20);
	uint64_t t0, t1;
	size_t n = 7;
	assert_int_equal(bm_vkg_fake_spans(g, &t0, &t1, 1, &n), -ENOTSUP);
	assert_int_equal(n, 0);
	bm_vkg_fake_free(g);
}

/* A queue on another device queue than the one the start-up dispatches
 * timed has no host clock without calibrated timestamps; with them it has. */
static void second_device_queue_needs_calibrated_timestamps(void **state)
{
	(void)state;
	for (int calibrated = 0; calibrated < 2; calibrated++) {
		void *g = bm_vkg_fake_new(1.0, calibrated ? stub_calibrated : NULL);
		assert_non_null(g);
		bm_vkg_fake_second_queue(g);
		bm_vkg_fake_sample(g, 1000, 1000, 0, 0);
		stub_tick = 0;
		stub_host = 1000;
		if (calibrated)
			assert_int_equal(bm_vkg_fake_calibrate(g), 0);
		bm_vkg_fake_work(g, 10, 20);
		uint64_t t0, t1;
		size_t n = 0;
		assert_int_equal(bm_vkg_fake_spans(g, &t0, &t1, 1, &n), calibrated ? 0 : -ENOTSUP);
		assert_int_equal(n, (size_t)calibrated);
		if (calibrated)
			assert_int_equal(t0, 1010);
		bm_vkg_fake_free(g);
	}
}

/* List names are kept whole (two differing after character 23 are two
 * names) and a name past the table is never drawn as another's. */
static void list_names_are_whole_and_never_another(void **state)
{
	(void)state;
	void *g = bm_vkg_fake_new(1.0, NULL);
	assert_non_null(g);
	const char *a = "shadow cascade pass, tile 1", *b = "shadow cascade pass, tile 2";   /* 31 chars each */
	unsigned ia = bm_vkg_fake_name(g, a), ib = bm_vkg_fake_name(g, b);
	assert_int_not_equal(ia, ib);
	assert_string_equal(bm_vkg_fake_name_text(g, ia), a);
	assert_string_equal(bm_vkg_fake_name_text(g, ib), b);
	assert_int_equal(bm_vkg_fake_name(g, a), ia);
	char name[32];
	unsigned first = ia, last = 0;
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "list %d", i);
		last = bm_vkg_fake_name(g, name);
		if (strcmp(bm_vkg_fake_name_text(g, last), name))
			assert_non_null(strstr(bm_vkg_fake_name_text(g, last), "past the trace"));
	}
	assert_int_not_equal(last, first);
	assert_string_equal(bm_vkg_fake_name_text(g, first), a);
	bm_vkg_fake_free(g);
}

/* Records past the backend's bound are dropped visibly: the spans say so
 * (-ENOBUFS, the kept ones given) and the bound is the one set. */
static void dropped_records_are_not_silent(void **state)
{
	(void)state;
	void *g = bm_vkg_fake_new(1.0, NULL);
	assert_non_null(g);
	bm_vkg_fake_sample(g, 1000, 1000, 0, 0);
	bm_vkg_fake_cap(g, 4);
	assert_int_equal(bm_vkg_trace_cap(g), 4);
	for (uint64_t i = 0; i < 6; i++)
		bm_vkg_fake_work(g, 10 * i, 10 * i + 5);
	uint64_t t0[8], t1[8];
	size_t n = 0;
	assert_int_equal(bm_vkg_fake_spans(g, t0, t1, 8, &n), -ENOBUFS);
	assert_int_equal(n, 4);
	assert_int_equal(t0[3], 1000 + 30);
	bm_vkg_fake_free(g);
	g = bm_vkg_fake_new(1.0, NULL);     /* within the bound: no complaint */
	bm_vkg_fake_sample(g, 1000, 1000, 0, 0);
	bm_vkg_fake_cap(g, 4);
	for (uint64_t i = 0; i < 4; i++)
		bm_vkg_fake_work(g, 10 * i, 10 * i + 5);
	assert_int_equal(bm_vkg_fake_spans(g, t0, t1, 8, &n), 0);
	assert_int_equal(n, 4);
	bm_vkg_fake_free(g);
}

/* The CPU wait's wake time is read as the wait returns: a slow timeline
 * record (the backend's lock contended) is not in it; and without a trace
 * nothing is recorded. */
static uint64_t hook_entered, hook_calls;
static void slow_trace_cpu_wait(void *be, struct bm_fence *f, uint64_t v, uint64_t t0, uint64_t t1)
{
	(void)be, (void)f, (void)v, (void)t0, (void)t1;
	hook_entered = lf_now_ns();
	hook_calls++;
	lf_sleep_until(hook_entered + 20 * MS);
}

static void cpu_wait_wake_time_excludes_the_trace(void **state)
{
	(void)state;
	struct bm_wl w;
	VK_UP_OR_SKIP(&w, RT_PATH_NATIVE, false);
	struct bm_backend_ops ops = *w.ops;
	const struct bm_backend_ops *real = w.ops;
	ops.trace_cpu_wait = slow_trace_cpu_wait;
	w.ops = &ops;
	struct bm_fence *f;
	assert_int_equal(bm_fence_create(&w, &f), 0);
	hook_calls = 0;
	w.trace_waits = true;
	assert_int_equal(bm_signal(&w, w.compute, f, 1), 0);
	assert_int_equal(bm_wl_cpu_wait(&w, f, 1), 0);
	uint64_t after = lf_now_ns();
	assert_int_equal(hook_calls, 1);
	assert_true(w.woke_ns <= hook_entered);
	assert_true(after - w.woke_ns >= 20 * MS);   /* the hook ran after the stamp */
	w.trace_waits = false;                       /* not tracing: no record at all */
	assert_int_equal(bm_signal(&w, w.compute, f, 2), 0);
	assert_int_equal(bm_wl_cpu_wait(&w, f, 2), 0);
	assert_int_equal(hook_calls, 1);
	w.ops = real;
	assert_int_equal(bm_wl_down(&w), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(frame_both_strategies), cmocka_unit_test(ring_heap_both_strategies),
		cmocka_unit_test(pipeline_and_async_both_strategies), cmocka_unit_test(replay_files_count_as_on_the_model),
		cmocka_unit_test(legacy_hold_waits_for_the_value), cmocka_unit_test(deadlock_fails_naming_each_wait),
		cmocka_unit_test(compare_model_puts_intervals_and_a_verdict),
		cmocka_unit_test(compare_model_one_repetition_gives_no_verdict),
		cmocka_unit_test(frame_trace_has_queues_holds_and_waits),
		cmocka_unit_test(calibrated_timestamps_give_exact_spans), cmocka_unit_test(large_ticks_keep_their_difference),
		cmocka_unit_test(spin_calibration_survives_a_busy_round),
		cmocka_unit_test(no_clock_no_spans), cmocka_unit_test(dropped_records_are_not_silent),
		cmocka_unit_test(second_device_queue_needs_calibrated_timestamps),
		cmocka_unit_test(list_names_are_whole_and_never_another), cmocka_unit_test(cpu_wait_wake_time_excludes_the_trace),
	};
	return cmocka_run_group_tests_name(__FILE__, tests, setup, teardown);
}
