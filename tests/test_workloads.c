/* tests/test_workloads.c — the seed's multi-engine workloads
 * (benchmarks/workload.c) do what the seed's pseudo-code says, on every
 * fence path and submission path:
 *   - ring-heap: the seed's length-3 trace — with the render engine held,
 *     the copy engine fills exactly `length` slots (fence2 = 3) and waits
 *     (fence1 == 0: "copy engine has exhausted the ring buffer, so must wait
 *     for render to consume it"); released, both run to the end.  The
 *     broken loop without the copy engine's Wait is caught: it overruns the
 *     ring.
 *   - frame: every frame ends with the seed's values (101/102, 201, 301 in
 *     frame 1, +100 a frame), each engine ran its work, nothing was lost. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "benchmarks/workload.h"
#include "tests/fb_test.h"

#define MS 1000000ull
#define WAIT_NS 5000000000ll

struct mode {
	enum rt_path path;
	bool user_mode;
};
static const struct mode modes[] = {
	{ RT_PATH_NATIVE, true }, { RT_PATH_NATIVE, false }, { RT_PATH_LEGACY, false },
};
#define NMODES (sizeof(modes) / sizeof(modes[0]))

static void up(struct bm_wl *w, const struct mode *m)
{
	char err[256] = "";
	int rc = bm_wl_up(w, m->path, m->user_mode, false, err, sizeof(err));
	if (rc)
		fail_msg("bm_wl_up: %d %s", rc, err);
	assert_int_equal(w->user_mode, m->user_mode);
}

static void nap(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	nanosleep(&ts, NULL);
}

/* Run `steps` of the ring with the render queue held behind a gate fence;
 * returns fence2 while held (fence1 must stay 0), then opens the gate and
 * checks both run to the end. */
static uint64_t ring_held(const struct mode *m, uint64_t length, uint64_t steps, bool broken)
{
	struct bm_wl w;
	up(&w, m);
	struct bm_fence *gate = NULL;
	assert_int_equal(bm_fence_create(&w, &gate), 0);
	assert_int_equal(bm_wait(&w, w.direct, gate, 1), 0);     /* render engine held */
	struct bm_ring_heap r;
	assert_int_equal(bm_ring_heap_init(&r, &w, length, 0, 200000, 200000, 1), 0);
	r.broken_no_ring_wait = broken;
	for (uint64_t i = 0; i < steps; i++)
		assert_int_equal(bm_ring_heap_step(&r), 0);
	/* let the copy engine run as far as it can */
	uint64_t seen = 0;
	for (int k = 0; k < 100; k++) {
		nap(2 * MS);
		uint64_t v = bm_fence_value(&w, r.fence2);
		if (v == seen && v >= (length < steps ? length : steps))
			break;
		seen = v;
	}
	nap(20 * MS);
	uint64_t held = bm_fence_value(&w, r.fence2);
	assert_int_equal(bm_fence_value(&w, r.fence1), 0);           /* nothing drawn yet */
	assert_int_equal(bm_fence_signal(&w, gate, 1), 0);
	assert_int_equal(bm_ring_heap_drain(&r), 0);
	assert_int_equal(bm_fence_value(&w, r.fence1), steps);
	assert_int_equal(bm_fence_value(&w, r.fence2), steps);
	struct bm_wl_snap s;
	bm_wl_snap(&w, &s);
	assert_int_equal(s.lost_wakeups, 0);
	bm_ring_heap_fini(&r);
	assert_int_equal(bm_wl_down(&w), 0);
	return held;
}

/* The seed's example for length = 3, and a longer ring. */
static void ring_heap_length_3_trace(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		assert_int_equal(ring_held(&modes[m], 3, 6, false), 3);   /* fence2 = 3, then Wait(fence1, 1) */
		assert_int_equal(ring_held(&modes[m], 5, 8, false), 5);
	}
}

/* Without the copy engine's Wait the ring is overrun: the test sees it. */
static void ring_heap_without_the_wait_is_caught(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++)
		assert_true(ring_held(&modes[m], 3, 6, true) > 3);
}

/* With both engines free: the render engine starves and waits for the
 * copy engine ("renderEngine->Wait(fence2, 4); // fence2 == 3, wait"):
 * each draw comes after its copy — fence1 never passes fence2. */
static void ring_heap_render_never_passes_copy(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		struct bm_wl w;
		up(&w, &modes[m]);
		struct bm_ring_heap r;
		assert_int_equal(bm_ring_heap_init(&r, &w, 3, 4, 300000, 50000, 1), 0);
		uint64_t bad = 0;
		for (int i = 0; i < 30; i++) {
			assert_int_equal(bm_ring_heap_step(&r), 0);
			uint64_t f1 = bm_fence_value(&w, r.fence1), f2 = bm_fence_value(&w, r.fence2);
			bad += f1 > f2;
		}
		assert_int_equal(bm_ring_heap_drain(&r), 0);
		assert_int_equal(bad, 0);
		assert_int_equal(bm_fence_value(&w, r.fence1), 30);
		bm_ring_heap_fini(&r);
		assert_int_equal(bm_wl_down(&w), 0);
	}
}

/* The frame: the seed's values, each engine's work done, nothing lost. */
static void frame_runs_the_seed_sequence(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		struct bm_wl w;
		up(&w, &modes[m]);
		struct bm_frame_cfg cfg = {
			.geometry_ns = 100000, .texture_ns = 50000, .prepass_ns = 300000, .lighting_ns = 400000,
			.final_ns = 500000, .units = 2, .frames_in_flight = 2,
		};
		struct bm_frame f;
		assert_int_equal(bm_frame_init(&f, &w, &cfg), 0);
		struct bm_wl_snap a, b;
		bm_wl_snap(&w, &a);
		const uint64_t frames = 10;
		for (uint64_t i = 0; i < frames; i++)
			assert_int_equal(bm_frame_submit(&f), 0);
		assert_int_equal(bm_frame_drain(&f), 0);
		bm_wl_snap(&w, &b);
		assert_int_equal(bm_fence_value(&w, f.copy_fence), 100 * frames + 2);
		assert_int_equal(bm_fence_value(&w, f.render_fence), 100 * (frames + 1) + 1);
		assert_int_equal(bm_fence_value(&w, f.compute_fence), 100 * (frames + 2) + 1);
		assert_int_equal(bm_fence_value(&w, f.frame_fence), frames);
		assert_true(b.busy_ns[0] - a.busy_ns[0] >= frames * (300000 + 500000));
		assert_true(b.busy_ns[1] - a.busy_ns[1] >= frames * 400000);
		assert_true(b.busy_ns[2] - a.busy_ns[2] >= frames * (100000 + 4 * 50000));
		assert_int_equal(b.lost_wakeups - a.lost_wakeups, 0);
		/* the CPU waited once a frame past the frames in flight, and the last */
		assert_int_equal(b.cpu_waits - a.cpu_waits, frames - cfg.frames_in_flight + 1);
		/* legacy: the OS handled each of the frame's four queue Waits on the CPU; native: none */
		assert_int_equal(b.held_waits - a.held_waits, modes[m].path == RT_PATH_LEGACY ? frames * 4 : 0);
		struct rt_cqueue_stats st;
		rt_cqueue_stats(bm_model_queue(w.copy), &st);
		assert_int_equal(st.ops[RT_OP_COPY], frames * 5 * cfg.units);
		assert_int_equal(st.signals, frames * 2);
		rt_cqueue_stats(bm_model_queue(w.direct), &st);
		assert_int_equal(st.waits, frames * 3);                  /* the seed's three render waits */
		rt_cqueue_stats(bm_model_queue(w.compute), &st);
		assert_int_equal(st.waits, frames);
		bm_frame_fini(&f);
		assert_int_equal(bm_wl_down(&w), 0);
	}
}


/* The pipelined compute/graphics loop: after N turns compute and graphics
 * reached their frame numbers (graphics CGL behind), nothing lost. */
static void pipeline_runs_the_seed_loop(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		struct bm_wl w;
		up(&w, &modes[m]);
		struct bm_pipeline p;
		assert_int_equal(bm_pipeline_init(&p, &w, 3, 2, 200000, 300000, 1), 0);
		for (int i = 0; i < 20; i++)
			assert_int_equal(bm_pipeline_step(&p), 0);
		assert_int_equal(bm_pipeline_drain(&p), 0);
		assert_int_equal(p.frame, 20);
		assert_int_equal(p.graphics_frames, 18);
		assert_int_equal(bm_fence_value(&w, p.compute_fence), 20);
		assert_int_equal(bm_fence_value(&w, p.graphics_fence), 18);
		struct rt_cqueue_stats st;
		rt_cqueue_stats(bm_model_queue(w.compute), &st);
		assert_int_equal(st.waits, 20 - 3);                    /* FrameNumber > CGL at the top: 3..19 */
		bm_pipeline_fini(&p);
		assert_int_equal(bm_wl_down(&w), 0);
	}
}

/* Seed multi-engine-synchronization, the pipelined example: "if
 * (FrameNumber > CpuLatency) { pComputeFence->SetEventOnFenceCompletion(
 * FrameNumber - CpuLatency, handle); WaitForSingleObject(handle, INFINITE); }"
 * before ++FrameNumber: compute is never submitted more than CpuLatency + 1
 * frames past its completion.  After every turn, every mode.  Broken (no
 * throttle), with compute held behind a gate fence so that nothing of it
 * completes: the CPU runs all ten frames ahead. */
static void pipeline_cpu_throttle_keeps_compute_within_cpu_latency(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		struct bm_wl w;
		up(&w, &modes[m]);
		struct bm_pipeline p;
		assert_int_equal(bm_pipeline_init(&p, &w, 3, 2, 200000, 300000, 1), 0);
		uint64_t lead = 0;
		for (int i = 0; i < 20; i++) {
			assert_int_equal(bm_pipeline_step(&p), 0);
			/* completed only grows: read after the turn, it is at least what the throttle waited for */
			uint64_t ahead = p.frame - rt_fence_completed(bm_model_fence(p.compute_fence));
			lead = ahead > lead ? ahead : lead;
		}
		assert_true(lead <= 3 + 1);
		assert_int_equal(bm_pipeline_drain(&p), 0);
		bm_pipeline_fini(&p);
		assert_int_equal(bm_wl_down(&w), 0);
	}
	struct bm_wl w;
	up(&w, &modes[0]);
	struct rt_fence *gate = NULL;
	assert_int_equal(rt_fence_create(w.d, 0, &gate), 0);
	struct bm_pipeline p;
	assert_int_equal(bm_pipeline_init(&p, &w, 3, 2, 200000, 300000, 1), 0);
	p.broken_no_cpu_throttle = true;
	assert_int_equal(rt_cqueue_wait(bm_model_queue(w.compute), gate, 1), 0);
	for (int i = 0; i < 10; i++)
		assert_int_equal(bm_pipeline_step(&p), 0);
	assert_int_equal(p.frame - rt_fence_completed(bm_model_fence(p.compute_fence)), 10);   /* past the throttle */
	assert_int_equal(rt_fence_signal(gate, 1), 0);
	assert_int_equal(bm_pipeline_drain(&p), 0);
	bm_pipeline_fini(&p);
	assert_int_equal(bm_wl_down(&w), 0);
}

/* The asynchronous loop: both stages advance, neither past its CpuLatency
 * throttle, graphics re-records its lists, both drain; nothing lost. */
static void async_compute_runs_both_stages(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		struct bm_wl w;
		up(&w, &modes[m]);
		struct bm_async a;
		assert_int_equal(bm_async_init(&a, &w, 3, 2, 200000, 300000, 1), 0);
		uint64_t ahead = 0;
		for (int i = 0; i < 400; i++) {
			int rc = bm_async_step(&a);
			/* the CpuLatency throttle: a stage runs at most cpu_latency + 1 past its completion */
			for (int k = 0; k < 2; k++) {
				uint64_t c = bm_fence_value(&w, a.fences[k]);
				if (a.frames[k] > c + 3 + 1)
					ahead++;
			}
			if (rc)
				fail_msg("mode %zu turn %d: %d (frames %llu/%llu, compute %llu graphics %llu gcf %llu)", m, i,
					 rc, (unsigned long long)a.frames[0], (unsigned long long)a.frames[1],
					 (unsigned long long)bm_fence_value(&w, a.fences[0]),
					 (unsigned long long)bm_fence_value(&w, a.fences[1]),
					 (unsigned long long)bm_fence_value(&w, a.graphics_compute_fence));
		}
		assert_int_equal(ahead, 0);
		assert_int_equal(bm_async_drain(&a), 0);
		assert_true(a.frames[0] > 3);
		assert_true(a.frames[1] > 3);
		assert_int_equal(bm_fence_value(&w, a.fences[0]), a.frames[0]);
		assert_int_equal(bm_fence_value(&w, a.fences[1]), a.frames[1]);
		struct bm_wl_snap s;
		bm_wl_snap(&w, &s);
		assert_int_equal(s.lost_wakeups, 0);
		bm_async_fini(&a);
		assert_int_equal(bm_wl_down(&w), 0);
	}
}

/* The deadlock, run: queue compute0 waits for g (which only
 * direct0 signals) before it signals f; direct0 waits for f before it
 * signals g; the CPU waits for f.  The no-progress watchdog fails the CPU
 * wait and names the CPU's wait and each queue's, with the current values;
 * bm_wl_down then releases them and the stack drains.  Every path. */
static void deadlock_fails_naming_each_wait(void **state)
{
	for (size_t i = 0; i < NMODES; i++) {
		struct bm_wl w;
		up(&w, &modes[i]);
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
		assert_int_equal(bm_wl_cpu_wait(&w, f, 1), -ETIMEDOUT);
		const char *m = bm_wl_stall(&w);
		print_message("%s\n", m);
		const char *want[] = { "no progress for 0.1 s", "the CPU waits for 'f' >= 1 (now 0)",
				       "queue 'compute0' waits for 'g' >= 1 (now 0)", "queue 'direct0' waits for 'f' >= 1 (now 0)" };
		for (size_t k = 0; k < 4; k++)
			if (!strstr(m, want[k]))
				fail_msg("mode %zu: '%s' lacks '%s'", i, m, want[k]);
		assert_null(strstr(m, "copy0"));            /* idle: not named */
		assert_int_equal(bm_wl_down(&w), 0);        /* released: drained */
	}
}

/* Slow but moving: a queue that completes a buffer every 30 ms keeps a CPU
 * wait of 15 buffers alive under a 300 ms watchdog. */
static void slow_progress_is_not_a_stall(void **state)
{
	struct bm_wl w;
	up(&w, &modes[0]);
	w.stall_ns = 300 * (int64_t)MS;
	struct bm_list *l;
	struct bm_fence *f;
	assert_int_equal(bm_wl_list(&w, RT_LIST_COPY, RT_OP_COPY, 30 * MS, 1, &l), 0);
	assert_int_equal(bm_fence_create(&w, &f), 0);
	for (int k = 0; k < 15; k++)
		assert_int_equal(bm_execute(&w, w.copy, &l, 1), 0);
	assert_int_equal(bm_signal(&w, w.copy, f, 1), 0);
	assert_int_equal(bm_wl_cpu_wait(&w, f, 1), 0);
	assert_string_equal(bm_wl_stall(&w), "");
	assert_int_equal(bm_wl_down(&w), 0);
	bm_list_destroy(&w, l);
}

/* Seed multi-engine-synchronization, "Asynchronous compute and graphics
 * example": "// Signal *before* new rendering to indicate what compute work
 * the graphics queue is DONE with".  The order lets compute rewrite a pipe
 * buffer graphics is done with while graphics still renders.  The render
 * is held behind a gate (a Wait on a fence only the test signals): once
 * everything the direct queue has before the gate completed, the
 * graphics-compute fence says graphics is done with compute frame 1, and
 * compute frame 3 (which waits for it) completes while the render is still
 * held.  The broken variant (broken_signal_after_render: the Signal behind
 * the render) is caught: the graphics-compute fence stays 0, and nothing
 * before the gate can change it, so compute cannot run during the render. */
static void async_graphics_signals_before_render(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		for (int broken = 0; broken < 2; broken++) {
			struct bm_wl w;
			up(&w, &modes[m]);
			struct bm_fence *gate = NULL;
			assert_int_equal(bm_fence_create(&w, &gate), 0);
			struct bm_async a;
			assert_int_equal(bm_async_init_broken(&a, &w, 3, 2, 50000, 50000, 1, false, broken), 0);
			a.render_gate = gate;
			assert_int_equal(bm_async_step_stage(&a, 0), 0);          /* compute frames 1, 2 */
			assert_int_equal(bm_async_step_stage(&a, 0), 0);
			assert_int_equal(rt_fence_wait(bm_model_fence(a.fences[0]), 2, WAIT_NS), 0);
			assert_int_equal(bm_async_step_stage(&a, 1), 0);          /* graphics frame 1, held */
			assert_int_equal(rt_queue_wait(rt_cqueue_queue(bm_model_queue(w.direct)), a.gate_progress, WAIT_NS), 0);
			assert_int_equal(bm_fence_value(&w, a.graphics_compute_fence), broken ? 0 : 1);
			assert_int_equal(bm_async_step_stage(&a, 0), 0);          /* compute frame 3: Wait(gcf, 1) */
			if (!broken)
				assert_int_equal(rt_fence_wait(bm_model_fence(a.fences[0]), 3, WAIT_NS), 0);
			else
				assert_int_equal(bm_fence_value(&w, a.fences[0]), 2);
			assert_int_equal(bm_fence_value(&w, a.fences[1]), 0);     /* the render is still held */
			assert_int_equal(bm_fence_signal(&w, gate, 1u << 20), 0);
			assert_int_equal(bm_async_drain(&a), 0);
			assert_int_equal(bm_fence_value(&w, a.fences[0]), a.frames[0]);
			assert_int_equal(bm_fence_value(&w, a.fences[1]), a.frames[1]);
			bm_async_fini(&a);
			assert_int_equal(bm_wl_down(&w), 0);
		}
	}
}

FB_TEST_MAIN(cmocka_unit_test(deadlock_fails_naming_each_wait), cmocka_unit_test(slow_progress_is_not_a_stall),
	     cmocka_unit_test(ring_heap_length_3_trace), cmocka_unit_test(ring_heap_without_the_wait_is_caught),
	     cmocka_unit_test(ring_heap_render_never_passes_copy), cmocka_unit_test(frame_runs_the_seed_sequence),
	     cmocka_unit_test(pipeline_runs_the_seed_loop),
	     cmocka_unit_test(pipeline_cpu_throttle_keeps_compute_within_cpu_latency), cmocka_unit_test(async_compute_runs_both_stages),
	     cmocka_unit_test(async_graphics_signals_before_render))
