/* benchmarks/scenarios/workloads.c — "frame", "ring-heap", "pipeline" and
 * "async-compute": the seed's four
 * multi-engine pseudo-codes (multi-engine-synchronization) as scenarios,
 * written against the D3D12 runtime (benchmarks/workload.c) and run
 * unchanged on the native and the legacy fence path.
 *
 * frame: copy geometry -> 3D pre-pass -> compute lighting -> 3D final, with
 * the texture copies and the four fence waits as written; the CPU keeps
 * `frames_in_flight` frames queued (it waits for frame n - that on a frame
 * fence the final draw signals: the one line not in the seed).
 * ring-heap: the copy engine fills a ring of `length` slots that the 3D
 * engine draws from; the copy queue waits for a free slot, the render queue
 * for copied data; the CPU stays `cpu_latency` steps ahead.
 * pipeline: compute frames consumed by graphics ComputeGraphicsLatency
 * frames later, the CPU throttled on the compute fence (CpuLatency).
 * async-compute: compute and graphics each at their own pace, the CPU
 * picking the stage with WaitForMultipleObjects over two events, a third
 * fence telling compute which buffers graphics is done with.  Frames are
 * graphics frames.
 * replay: a frame graph from a JSON file (benchmarks/replay.h), e.g. the
 * seed's workloads in benchmarks/workloads/ (one .json each): one frame is one pass
 * over the file's "frame".
 *
 * Both report frames (steps) per second, interrupts, OS-thread wake-ups, GPU
 * signals and CPU wait per frame, GPU idle per engine and lost wake-ups;
 * `--path both` shows native and legacy side by side, `--set queues=kernel`
 * kernel-mode queues (legacy: kernel-mode always, user-mode submission
 * needs native fences; the result says which it got: user_mode_queues).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "benchmarks/profile.h"
#include "benchmarks/replay.h"
#include "benchmarks/trace_rig.h"
#include "benchmarks/vulkan/vk_graph.h"
#include "benchmarks/workload.h"
#include "lockfree/arch.h"
#include "src/fb_scenario.h"

#define US 1000.0

/* the no-progress watchdog's bound (benchmarks/workload.h) */
#define BM_STALL_PARAM                                                                                          \
	FB_PARAM_DOUBLE("stall_s", "s", BM_WL_STALL_NS / 1e9, 0.01, 30.0,                                        \
			"no queue completing anything this long fails the run, naming what each waits for")

/* where the frame graph runs (benchmarks/backend.h) */
#define BM_BACKEND_PARAMS                                                                                       \
	FB_PARAM_ENUM("backend", "model", "what runs the frame graph: the model, or a Vulkan device", "model",   \
		      "vulkan"),                                                                                \
	FB_PARAM_INT("device", "index", -1, -1, 63, "backend=vulkan: the device (-1: the first real GPU)"),      \
	FB_PARAM_BOOL("allow_cpu", false, "backend=vulkan: accept a CPU implementation (lavapipe)"),             \
	FB_PARAM_BOOL("compare_model", false, "backend=vulkan: run the same frame graph in the model too "      \
		      "(under --set profile=), side by side (--path both; --repetitions 2 or more: 95 % "       \
		      "intervals and a verdict)")

static const struct fb_param frame_params[] = {
	FB_PARAM_ENUM("queues", "user", "submission of the three queues (user-mode needs native fences)", "user",
		      "kernel"),
	FB_PARAM_INT("frames_in_flight", "frames", 2, 1, 16, "frames the CPU keeps queued"),
	FB_PARAM_BOOL("validate", false, "run under the validation layer (model: multi-queue resources; vulkan: "
		      "the Khronos layer, synchronization validation on)"),
	BM_STALL_PARAM,
	BM_BACKEND_PARAMS,
	FB_PARAM_DOUBLE("geometry_us", "us", 100.0, 0.0, 100000.0, "copy engine: the geometry copy"),
	FB_PARAM_DOUBLE("texture_us", "us", 50.0, 0.0, 100000.0, "copy engine: each of the four texture copies"),
	FB_PARAM_DOUBLE("prepass_us", "us", 300.0, 0.0, 100000.0, "3D engine: the pre-pass draw"),
	FB_PARAM_DOUBLE("lighting_us", "us", 400.0, 0.0, 100000.0, "compute engine: the lighting dispatch"),
	FB_PARAM_DOUBLE("final_us", "us", 500.0, 0.0, 100000.0, "3D engine: the final draw"),
	FB_PARAM_INT("units", "units", 1, 1, 64, "preemption sub-units of every command"),
	FB_PARAM_END
};

static const struct fb_param ring_params[] = {
	FB_PARAM_ENUM("queues", "user", "submission of the queues (user-mode needs native fences)", "user",
		      "kernel"),
	FB_PARAM_INT("length", "slots", 3, 1, 1024, "slots of the ring buffer (validate: up to 64)"),
	FB_PARAM_BOOL("validate", false, "run under the validation layer (model: multi-queue resources; vulkan: "
		      "the Khronos layer, synchronization validation on)"),
	BM_STALL_PARAM,
	BM_BACKEND_PARAMS,
	FB_PARAM_INT("cpu_latency", "steps", 4, 1, 1024, "steps the CPU may run ahead of the render engine"),
	FB_PARAM_DOUBLE("map_us", "us", 100.0, 0.0, 100000.0, "copy engine: filling one slot"),
	FB_PARAM_DOUBLE("draw_us", "us", 200.0, 0.0, 100000.0, "3D engine: the draw from one slot"),
	FB_PARAM_INT("units", "units", 1, 1, 64, "preemption sub-units of every command"),
	FB_PARAM_END
};

static const struct fb_param pipe_params[] = {
	FB_PARAM_ENUM("queues", "user", "submission of the queues (user-mode needs native fences)", "user",
		      "kernel"),
	FB_PARAM_INT("cpu_latency", "frames", 3, 1, 16, "CpuLatency: compute frames the CPU keeps queued"),
	FB_PARAM_INT("cg_latency", "frames", 2, 1, 16, "ComputeGraphicsLatency: graphics lags compute by this"),
	FB_PARAM_BOOL("validate", false, "run under the validation layer (model: multi-queue resources; vulkan: "
		      "the Khronos layer, synchronization validation on)"),
	BM_STALL_PARAM,
	BM_BACKEND_PARAMS,
	FB_PARAM_DOUBLE("compute_us", "us", 400.0, 0.0, 100000.0, "compute engine: one compute frame"),
	FB_PARAM_DOUBLE("graphics_us", "us", 600.0, 0.0, 100000.0, "3D engine: one graphics frame"),
	FB_PARAM_INT("units", "units", 1, 1, 64, "preemption sub-units of every command"),
	FB_PARAM_END
};

static const struct fb_param replay_params[] = {
	FB_PARAM_STRING("file", "benchmarks/workloads/frame.json", "the JSON frame graph to run (benchmarks/replay.h)"),
	FB_PARAM_ENUM("queues", "user", "submission of the file's queues (user-mode needs native fences)", "user",
		      "kernel"),
	FB_PARAM_BOOL("validate", false, "run under the validation layer (model: multi-queue resources; vulkan: "
		      "the Khronos layer, synchronization validation on)"),
	BM_STALL_PARAM,
	BM_BACKEND_PARAMS,
	FB_PARAM_END
};

/* The model's engines poll; a Vulkan device's work polls nothing of ours. */
static unsigned bm_workload_polling(const struct fb_run *run)
{
	return strcmp(fb_run_enum(run, "backend"), "vulkan") ? BM_WL_ENGINES : 0;
}

/* The three queues of a C workload, for a timeline's names. */
#define BM_WL_THREE(w) (struct bm_queue *const[]){ (w)->direct, (w)->compute, (w)->copy }, 3

static uint64_t us_param(struct fb_run *run, const char *key)
{
	return (uint64_t)(fb_run_double(run, key) * US);
}

/* The backend's bring-up of the run: its parameters. */
static void bm_workload_config(struct fb_run *run, struct bm_wl_config *c)
{
	memset(c, 0, sizeof(*c));
	c->backend = strcmp(fb_run_enum(run, "backend"), "vulkan") ? BM_BACKEND_MODEL : BM_BACKEND_VULKAN;
	c->path = fb_run_path(run) == FB_PATH_LEGACY ? RT_PATH_LEGACY : RT_PATH_NATIVE;
	c->user_mode = !strcmp(fb_run_enum(run, "queues"), "user");
	int v = fb_scenario_param_index(fb_run_params(run)->scenario, "validate");
	c->validate = v >= 0 && fb_run_bool(run, "validate");
	c->profile = &bm_profile_of(run)->rt;
	c->device = (int)fb_run_int(run, "device");
	c->allow_cpu = fb_run_bool(run, "allow_cpu");
	c->stall_ns = (int64_t)(fb_run_double(run, "stall_s") * 1e9);
}

/* A Vulkan device: its scheduler thread registered, what it said about itself noted. */
static int bm_workload_vk_up(struct fb_run *run, struct bm_wl *w)
{
	pid_t tid = bm_vkg_sched_tid(w->be);
	if (tid > 0)
		fb_run_thread(run, "vk-sched", tid);
	for (size_t i = 0; i < sizeof(w->notes) / sizeof(w->notes[0]); i++)
		if (w->notes[i][0])
			fb_run_note(run, "%s", w->notes[i]);
	return 0;
}

/* The stack, its role threads registered with the harness. */
static int bm_workload_up(struct fb_run *run, struct bm_wl *w, enum bm_backend_kind kind)
{
	struct bm_wl_config c;
	bm_workload_config(run, &c);
	c.backend = kind;
	char err[512] = "";
	int rc = bm_wl_up_config(w, &c, err, sizeof(err));
	if (rc)
		return fb_run_error(run, rc, "%s: %s", c.backend == BM_BACKEND_VULKAN ? "backend=vulkan" : "bringing the stack up", err);
	if (c.backend == BM_BACKEND_VULKAN)
		return bm_workload_vk_up(run, w);
	bool um = c.user_mode;
	static const char *const role[BM_WL_ENGINES] = { "engine-3d", "engine-compute", "engine-copy" };
	fb_run_thread(run, "os-irq", rt_stack_irq_tid(w->s));
	fb_run_thread(run, "os-sched", rt_stack_sched_tid(w->s));
	for (unsigned e = 0; e < BM_WL_ENGINES; e++)
		fb_run_thread(run, role[e], rt_stack_engine_tid(w->s, e));
	if (um && !w->user_mode)
		fb_run_note(run, "%s path: kernel-mode queues (user-mode submission needs native fences)",
			    fb_path_name(fb_run_path(run)));
	return 0;
}

/* --trace on a backend that records its own timeline (vulkan): from now. */
static int bm_workload_trace_start(struct fb_run *run, struct bm_wl *w)
{
	if (w->kind == BM_BACKEND_MODEL)
		return rig_trace_run_start(run, w->s);
	if (!fb_run_trace(run) || !w->ops->trace_start)
		return 0;
	int rc = w->ops->trace_start(w->be, 0);
	w->trace_waits = !rc;
	return rc ? fb_run_error(run, rc, "--trace: %s", strerror(-rc)) : 0;
}

/* Its timeline into the run's trace, and what it drew in the notes. */
static int bm_workload_trace_copy_be(struct fb_run *run, struct bm_wl *w)
{
	char label[64];
	struct bm_trace_counts c;
	rig_trace_label(run, label, sizeof(label));
	int rc = w->ops->trace_copy(w->be, fb_run_trace(run), label, &c);
	if (rc)
		return fb_run_error(run, rc, "--trace: %s", strerror(-rc));
	fb_run_note(run, "trace (%s): %zu work spans from GPU timestamps, %zu holds, %zu CPU waits; %s", label,
		    c.work, c.holds, c.cpu_waits, c.clock);
	if (c.unclocked)
		fb_run_note(run, "trace (%s): %zu queues' work not drawn: their GPU clock is not on the host's "
			    "(no calibrated timestamps, another device queue)", label, c.unclocked);
	if (c.dropped)
		fb_run_note(run, "trace (%s): %llu records dropped: the backend keeps %zu: shorten the run", label,
			    (unsigned long long)c.dropped, c.cap);
	if (c.clamped)
		fb_run_note(run, "trace (%s): %zu work spans began (top of the pipe) before their queue's previous one "
			    "ended: drawn from that end", label, c.clamped);
	return 0;
}

/* --trace: the run's timeline into the harness's trace, queues[0..n) named
 * (the model's through its stack; another backend's through its own copy). */
static int bm_workload_trace_copy(struct fb_run *run, struct bm_wl *w, struct bm_queue *const *queues, size_t n)
{
	if (w->kind != BM_BACKEND_MODEL)
		return fb_run_trace(run) && w->ops->trace_copy ? bm_workload_trace_copy_be(run, w) : 0;
	struct rig_trace_queue names[BM_REPLAY_QUEUES];
	size_t k = 0;
	for (size_t i = 0; i < n && k < BM_REPLAY_QUEUES; i++)
		if (queues[i]) {
			struct rt_cqueue *q = bm_model_queue(queues[i]);
			names[k++] = (struct rig_trace_queue){ rt_cqueue_trace_handle(q), rt_cqueue_name(q) };
		}
	return rig_trace_run_copy(run, w->s, NULL, names, k);
}

/* compare_model: the last pass's numbers (bm_workload_measure). */
static struct bm_wl_summary bm_compare_last;

/* The region's frames: until the run says stop (the primary pass), or
 * exactly `fixed` frames (compare_model's model pass: the same frames as
 * the device ran).  Returns the step's error, 0 otherwise. */
static int bm_workload_region(struct fb_run *run, int (*step)(void *), uint64_t (*frames)(void *), void *ctx,
			      uint64_t fixed, uint64_t f0)
{
	int rc = 0;
	uint64_t n = 0;
	while (!rc && (fixed ? n < fixed : fb_run_continue(run, n))) {
		rc = step(ctx);
		n = frames(ctx) - f0;
	}
	return rc;
}

/* Warm up for the run's warm-up time, measure, report.  step/drain are the
 * workload's; ctx its state; queues[0..nq) the ones a timeline names.  The
 * primary pass (fixed 0) is the run's measured region; compare_model's model
 * pass (fixed: the primary's frames) reports into the current section only.
 * *measured: the frames measured. */
static int bm_workload_measure(struct fb_run *run, struct bm_wl *w, int (*step)(void *), int (*drain)(void *),
			       uint64_t (*frames)(void *), void *ctx, struct bm_queue *const *queues, size_t nq,
			       uint64_t fixed, uint64_t *measured)
{
	int rc = !fixed ? bm_workload_trace_start(run, w) : 0;   /* warm-up included */
	if (rc)
		return rc;
	uint64_t until = lf_now_ns() + fb_run_warmup_ns(run);
	while (!rc && lf_now_ns() < until)
		rc = step(ctx);
	if (!rc)
		rc = drain(ctx);
	struct bm_wl_snap a, b;
	bm_wl_snap(w, &a);
	uint64_t f0 = frames(ctx);
	if (!fixed)
		fb_run_measure_begin(run);
	if (!rc)
		rc = bm_workload_region(run, step, frames, ctx, fixed, f0);
	if (!rc)
		rc = drain(ctx);
	uint64_t n = frames(ctx) - f0;
	bm_wl_snap(w, &b);
	if (!fixed)
		fb_run_measure_end(run, n);
	if (rc)
		return fb_run_error(run, rc, "%sframe %llu: %s", fixed ? "compare_model: the model's " : "",
				    (unsigned long long)n + 1, *bm_wl_stall(w) ? bm_wl_stall(w) : strerror(-rc));
	bm_wl_report(run, w, &a, &b, n);
	bm_wl_summarize(&a, &b, n, &bm_compare_last);
	*measured = n;
	return fixed ? 0 : bm_workload_trace_copy(run, w, queues, nq);
}

/* ---- compare_model: the model beside the device ----
 *
 * On each repetition's legacy pass, section "compare": that repetition's
 * native/legacy ratios (its native pass ran just before: fb_session.c runs
 * a repetition's paths native first), of the device and of the model, and
 * each path's held waits and interrupts per frame of both.  Each pair is
 * declared two estimates of one quantity (fb_run_agreement): the harness
 * puts a 95 % interval across the repetitions on each and says whether the
 * device and the model agree. */

/* The native path's pair kept for the legacy pass that follows it. */
static struct {
	bool have;
	struct bm_wl_summary dev, model;
} bm_compare_native;

static double bm_ratio(double n, double l)
{
	return l > 0 ? n / l : NAN;
}

/* name_device and name_model, declared estimates of one quantity. */
static void bm_compare_pair(struct fb_run *run, const char *name, double dev, double model, const char *unit)
{
	char a[96], b[96];
	snprintf(a, sizeof(a), "%s_device", name);
	snprintf(b, sizeof(b), "%s_model", name);
	fb_run_metric(run, a, dev, unit);
	fb_run_metric(run, b, model, unit);
	fb_run_agreement(run, name, a, b);
}

/* On the legacy pass: both paths of both backends, side by side. */
static void bm_compare_paths(struct fb_run *run, const struct bm_wl_summary *dev, const struct bm_wl_summary *model)
{
	if (fb_run_path(run) != FB_PATH_LEGACY) {
		bm_compare_native.have = true;
		bm_compare_native.dev = *dev;
		bm_compare_native.model = *model;
		return;
	}
	if (!bm_compare_native.have) {
		fb_run_note(run, "compare_model: native/legacy needs both paths (--path both)");
		return;
	}
	const struct bm_wl_summary *nd = &bm_compare_native.dev, *nm = &bm_compare_native.model;
	fb_run_section(run, "compare");
	bm_compare_pair(run, "frames_per_s_ratio", bm_ratio(nd->frames_per_s, dev->frames_per_s),
			bm_ratio(nm->frames_per_s, model->frames_per_s), "ratio");
	bm_compare_pair(run, "host_cpu_per_frame_ratio", bm_ratio(nd->host_cpu_us_per_frame, dev->host_cpu_us_per_frame),
			bm_ratio(nm->host_cpu_us_per_frame, model->host_cpu_us_per_frame), "ratio");
	bm_compare_pair(run, "held_waits_per_frame_native", nd->held_waits_per_frame, nm->held_waits_per_frame, "waits");
	bm_compare_pair(run, "held_waits_per_frame_legacy", dev->held_waits_per_frame, model->held_waits_per_frame,
			"waits");
	if (dev->has_interrupts) {
		bm_compare_pair(run, "interrupts_per_frame_native", nd->interrupts_per_frame, nm->interrupts_per_frame,
				"irq");
		bm_compare_pair(run, "interrupts_per_frame_legacy", dev->interrupts_per_frame,
				model->interrupts_per_frame, "irq");
	} else {
		fb_run_note(run, "compare_model: interrupts per frame: the device has no GPU interrupt line to count, "
			    "so there is nothing to put beside the model's (section model)");
	}
	bm_compare_native.have = false;
}

typedef int (*bm_pass_fn)(struct fb_run *run, enum bm_backend_kind kind, uint64_t fixed, uint64_t *measured);

/* A workload's run: on its backend; with compare_model, then in the model
 * (section "model", the same frames) and the two side by side. */
static int bm_workload_run(struct fb_run *run, bm_pass_fn pass)
{
	struct bm_wl_config c;
	bm_workload_config(run, &c);
	bool cmp = fb_run_bool(run, "compare_model");
	if (cmp && c.backend != BM_BACKEND_VULKAN)
		return fb_run_error(run, -EINVAL, "compare_model=true needs backend=vulkan (it puts the model beside "
				    "a device)");
	uint64_t n = 0;
	int rc = pass(run, c.backend, 0, &n);
	if (rc || !cmp)
		return rc;
	struct bm_wl_summary dev = bm_compare_last;
	fb_run_section(run, "model");
	rc = pass(run, BM_BACKEND_MODEL, n ? n : 1, &n);
	if (!rc)
		bm_compare_paths(run, &dev, &bm_compare_last);
	return rc;
}

static int frame_step(void *f)
{
	return bm_frame_submit(f);
}

static int frame_drain(void *f)
{
	return bm_frame_drain(f);
}

static uint64_t frame_frames(void *f)
{
	return ((struct bm_frame *)f)->n;
}

static int frame_pass(struct fb_run *run, enum bm_backend_kind kind, uint64_t fixed, uint64_t *measured)
{
	struct bm_wl w;
	int rc = bm_workload_up(run, &w, kind);
	if (rc)
		return rc;
	struct bm_frame_cfg cfg = {
		.geometry_ns = us_param(run, "geometry_us"), .texture_ns = us_param(run, "texture_us"),
		.prepass_ns = us_param(run, "prepass_us"), .lighting_ns = us_param(run, "lighting_us"),
		.final_ns = us_param(run, "final_us"), .units = (unsigned)fb_run_int(run, "units"),
		.frames_in_flight = (unsigned)fb_run_int(run, "frames_in_flight"),
	};
	struct bm_frame f;
	rc = bm_frame_init(&f, &w, &cfg);
	if (rc)
		rc = fb_run_error(run, rc, "creating the frame's fences and lists: %s", strerror(-rc));
	else
		rc = bm_workload_measure(run, &w, frame_step, frame_drain, frame_frames, &f, BM_WL_THREE(&w), fixed, measured);
	bm_frame_fini(&f);
	int rc2 = bm_wl_down(&w);
	return rc ? rc : rc2 ? fb_run_error(run, rc2, "a queue did not drain") : 0;
}

static int frame_run(struct fb_run *run)
{
	return bm_workload_run(run, frame_pass);
}

static int ring_step(void *r)
{
	return bm_ring_heap_step(r);
}

static int ring_drain(void *r)
{
	return bm_ring_heap_drain(r);
}

static uint64_t ring_frames(void *r)
{
	return ((struct bm_ring_heap *)r)->i;
}

static int ring_pass(struct fb_run *run, enum bm_backend_kind kind, uint64_t fixed, uint64_t *measured)
{
	struct bm_wl w;
	int rc = bm_workload_up(run, &w, kind);
	if (rc)
		return rc;
	struct bm_ring_heap r;
	rc = bm_ring_heap_init(&r, &w, (uint64_t)fb_run_int(run, "length"), (unsigned)fb_run_int(run, "cpu_latency"),
			       us_param(run, "map_us"), us_param(run, "draw_us"), (unsigned)fb_run_int(run, "units"));
	if (rc)
		rc = fb_run_error(run, rc, "creating the ring's fences and lists: %s", strerror(-rc));
	else
		rc = bm_workload_measure(run, &w, ring_step, ring_drain, ring_frames, &r, BM_WL_THREE(&w), fixed, measured);
	bm_ring_heap_fini(&r);
	int rc2 = bm_wl_down(&w);
	return rc ? rc : rc2 ? fb_run_error(run, rc2, "a queue did not drain") : 0;
}

static int ring_run(struct fb_run *run)
{
	return bm_workload_run(run, ring_pass);
}

static int pipe_step(void *p)
{
	return bm_pipeline_step(p);
}

static int pipe_drain(void *p)
{
	return bm_pipeline_drain(p);
}

static uint64_t pipe_frames(void *p)
{
	return ((struct bm_pipeline *)p)->graphics_frames;
}

static int pipe_pass(struct fb_run *run, enum bm_backend_kind kind, uint64_t fixed, uint64_t *measured)
{
	struct bm_wl w;
	int rc = bm_workload_up(run, &w, kind);
	if (rc)
		return rc;
	struct bm_pipeline p;
	rc = bm_pipeline_init(&p, &w, (unsigned)fb_run_int(run, "cpu_latency"), (unsigned)fb_run_int(run, "cg_latency"),
			      us_param(run, "compute_us"), us_param(run, "graphics_us"), (unsigned)fb_run_int(run, "units"));
	if (rc)
		rc = fb_run_error(run, rc, "creating the pipeline's fences and lists: %s", strerror(-rc));
	else
		rc = bm_workload_measure(run, &w, pipe_step, pipe_drain, pipe_frames, &p, BM_WL_THREE(&w), fixed, measured);
	bm_pipeline_fini(&p);
	int rc2 = bm_wl_down(&w);
	return rc ? rc : rc2 ? fb_run_error(run, rc2, "a queue did not drain") : 0;
}

static int pipe_run(struct fb_run *run)
{
	return bm_workload_run(run, pipe_pass);
}

static int async_step(void *a)
{
	return bm_async_step(a);
}

static int async_drain(void *a)
{
	return bm_async_drain(a);
}

static uint64_t async_frames(void *a)
{
	return ((struct bm_async *)a)->frames[1];
}

static int async_pass(struct fb_run *run, enum bm_backend_kind kind, uint64_t fixed, uint64_t *measured)
{
	struct bm_wl w;
	int rc = bm_workload_up(run, &w, kind);
	if (rc)
		return rc;
	struct bm_async a;
	rc = bm_async_init(&a, &w, (unsigned)fb_run_int(run, "cpu_latency"), (unsigned)fb_run_int(run, "cg_latency"),
			   us_param(run, "compute_us"), us_param(run, "graphics_us"), (unsigned)fb_run_int(run, "units"));
	if (rc)
		rc = fb_run_error(run, rc, "creating the async pipeline's fences, events and lists: %s", strerror(-rc));
	else
		rc = bm_workload_measure(run, &w, async_step, async_drain, async_frames, &a, BM_WL_THREE(&w), fixed, measured);
	if (!rc)
		fb_run_metric(run, "compute_frames", (double)a.frames[0], "frames");
	bm_async_fini(&a);
	int rc2 = bm_wl_down(&w);
	return rc ? rc : rc2 ? fb_run_error(run, rc2, "a queue did not drain") : 0;
}

static int async_run(struct fb_run *run)
{
	return bm_workload_run(run, async_pass);
}

static int replay_step(void *r)
{
	return bm_replay_frame(r);
}

static int replay_drain(void *r)
{
	return bm_replay_drain(r);
}

static uint64_t replay_frames(void *r)
{
	return ((struct bm_replay_run *)r)->n;
}

static size_t spec_queues(const struct bm_replay_run *rr)
{
	size_t n = 0;
	while (n < BM_REPLAY_QUEUES && rr->q[n])
		n++;
	return n;
}

static int replay_pass(struct fb_run *run, enum bm_backend_kind kind, uint64_t fixed, uint64_t *measured)
{
	struct bm_replay *spec = NULL;
	char err[512] = "";
	int rc = bm_replay_load(fb_run_string(run, "file"), &spec, err, sizeof(err));
	if (rc)
		return fb_run_error(run, rc, "%s", err);
	struct bm_wl w;
	rc = bm_workload_up(run, &w, kind);
	if (rc) {
		bm_replay_free(spec);
		return rc;
	}
	struct bm_replay_run rr;
	rc = bm_replay_start(&rr, spec, &w, err, sizeof(err));
	if (rc)
		rc = fb_run_error(run, rc, "%s: %s", fb_run_string(run, "file"), err);
	else
		rc = bm_workload_measure(run, &w, replay_step, replay_drain, replay_frames, &rr, rr.q, spec_queues(&rr), fixed, measured);
	if (!rc && !fixed)
		fb_run_note(run, "replay of %s (%s)%s", fb_run_string(run, "file"), bm_replay_name(spec),
			    bm_replay_built_in(spec) ? ": no such file here, the binary's built-in copy of the shipped one" : "");
	int rc2 = bm_wl_down(&w);
	bm_replay_stop(&rr);
	bm_replay_free(spec);
	return rc ? rc : rc2 ? fb_run_error(run, rc2, "a queue did not drain") : 0;
}

static int replay_run(struct fb_run *run)
{
	return bm_workload_run(run, replay_pass);
}

const struct fb_scenario bm_scenario_frame = {
	.name = "frame",
	.summary = "the seed's frame: copy -> 3D pre-pass -> compute lighting -> 3D final, native vs legacy",
	.params = frame_params, .compares_paths = true, .polling_threads = BM_WL_ENGINES, .polling_threads_fn = bm_workload_polling,
	.default_duration_s = 0.5, .takes_duration = true, .default_warmup_s = 0.05, .takes_trace = true, .run = frame_run,
};

const struct fb_scenario bm_scenario_ring_heap = {
	.name = "ring-heap",
	.summary = "the seed's copy/render ring-buffer heap of configurable length, native vs legacy",
	.params = ring_params, .compares_paths = true, .polling_threads = BM_WL_ENGINES, .polling_threads_fn = bm_workload_polling,
	.default_duration_s = 0.5, .takes_duration = true, .default_warmup_s = 0.05, .takes_trace = true, .run = ring_run,
};

const struct fb_scenario bm_scenario_pipeline = {
	.name = "pipeline",
	.summary = "the seed's pipelined compute/graphics (CpuLatency, ComputeGraphicsLatency), native vs legacy",
	.params = pipe_params, .compares_paths = true, .polling_threads = BM_WL_ENGINES, .polling_threads_fn = bm_workload_polling,
	.default_duration_s = 0.5, .takes_duration = true, .default_warmup_s = 0.05, .takes_trace = true, .run = pipe_run,
};

const struct fb_scenario bm_scenario_async_compute = {
	.name = "async-compute",
	.summary = "the seed's asynchronous compute/graphics: three fences, WaitForMultipleObjects, native vs legacy",
	.params = pipe_params, .compares_paths = true, .polling_threads = BM_WL_ENGINES, .polling_threads_fn = bm_workload_polling,
	.default_duration_s = 0.5, .takes_duration = true, .default_warmup_s = 0.05, .takes_trace = true, .run = async_run,
};

const struct fb_scenario bm_scenario_replay = {
	.name = "replay",
	.summary = "a frame graph from a JSON file (queues, lists, fences, submission order), native vs legacy",
	.params = replay_params, .compares_paths = true, .polling_threads = BM_WL_ENGINES, .polling_threads_fn = bm_workload_polling,
	.default_duration_s = 0.5, .takes_duration = true, .default_warmup_s = 0.05, .takes_trace = true, .run = replay_run,
};
