/* tests/d3d_resets_util.h — the seed's async example run with its render
 * held behind a gate, under the validation layer: what the layer counted of
 * lists re-recorded in flight (d3d_debug.h, rt_debug_resets).  Shared by
 * test_d3d_debug.c (the code that ships) and model_broken.c (the build
 * without the check, which must be caught).
 *
 * Seed multi-engine-synchronization, "Asynchronous compute and graphics
 * example": the throttle waits for graphics frame N - CpuLatency before it
 * records frame N + 1, whose list (index N mod CpuLatency) frame
 * N + 1 - CpuLatency used; that frame may still run, but every earlier one
 * completed.  The render is held behind a gate (a Wait on a fence only the
 * test signals) so that each frame's list is in flight when its next user
 * records: the gate lets frame N - CpuLatency render just before frame N + 1
 * is recorded.  Ten graphics frames, CpuLatency 3: frames 4..10 re-record
 * the list of a frame held in flight.  broken_throttle
 * (bm_async.broken_no_cpu_throttle) and the gate shut: frames 5..10 also
 * have earlier frames in flight. */
#ifndef D3D_RESETS_UTIL_H
#define D3D_RESETS_UTIL_H

#include "benchmarks/workload.h"
#include "gpu-model/runtime/d3d_debug.h"
#include "tests/fb_test.h"

/* The title's CPU Signal of the gate, told to the layer (its Waits replay). */
static inline void gate_signal(struct bm_wl *w, struct bm_fence *gate, uint64_t v)
{
	assert_int_equal(bm_fence_signal(w, gate, v), 0);
	rt_debug_cpu_signal(w->debug, bm_model_fence(gate), v);
}

static inline struct rt_debug_resets gated_async_resets(enum rt_path path, bool user_mode, bool broken_throttle)
{
	struct bm_wl w;
	char err[256];
	assert_int_equal(bm_wl_up(&w, path, user_mode, true, err, sizeof(err)), 0);
	struct bm_fence *gate = NULL;
	assert_int_equal(bm_fence_create(&w, &gate), 0);
	struct bm_async a;
	assert_int_equal(bm_async_init(&a, &w, 3, 2, 50000, 50000, 1), 0);
	a.render_gate = gate;
	a.broken_no_cpu_throttle = broken_throttle;
	assert_int_equal(bm_async_step_stage(&a, 0), 0);      /* compute frame 1 */
	for (uint64_t fn = 1; fn <= 10; fn++) {
		if (!broken_throttle && fn > a.cpu_latency + 1)   /* frame fn - 1 - CpuLatency renders */
			gate_signal(&w, gate, fn - 1 - a.cpu_latency);
		assert_int_equal(bm_async_step_stage(&a, 1), 0);
	}
	assert_int_equal(a.frames[1], 10);
	struct rt_debug_resets r;
	rt_debug_resets(w.debug, &r, NULL, 0);
	gate_signal(&w, gate, 1u << 20);
	assert_int_equal(bm_async_drain(&a), 0);
	bm_async_fini(&a);
	assert_int_equal(rt_debug_pending(w.debug), 0);
	assert_int_equal(rt_debug_errors(w.debug), 0);
	assert_int_equal(bm_wl_down(&w), 0);
	return r;
}

#endif
