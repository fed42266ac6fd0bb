/* benchmarks/scenarios/stride.c — fence-stride: what packing fence values costs.
 *
 * Seed (native-gpu-fence, "Physical memory storage for current and monitored
 * fence values"): non-shareable fences share pages, packed by the adapter's
 * CurrentValue and MonitoredValue strides.  Two engines (threads pinned to
 * the run's first two CPUs) each signal a fence of their own, with the CMP's
 * memory traffic (exchange CurrentValue, load MonitoredValue), as fast as
 * they can.  At stride 8 the two fences share a cache line and every signal
 * pulls it across; at 64 they do not.  Sweep it:
 *     fencebench sweep fence-stride --grid stride=8,16,32,64,128
 * The micro-benchmark fence_stride_signal (make bench) measures the same in
 * Google Benchmark.
 *
 * The one scenario that includes gpu-model/hw/hw.h instead of going through
 * the runtime (gpu-model/runtime/stack.h), on purpose: it measures the fence
 * storage layout itself (hw_fence_alloc's packing by stride), which no
 * runtime call exposes; no OS, engine thread or submission is involved.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "src/fb_scenario.h"
#include "gpu-model/hw/hw.h"
#include "lockfree/arch.h"

static const struct fb_param stride_params[] = {
	FB_PARAM_INT("stride", "bytes", 64, 8, 4096, "CurrentValue and MonitoredValue stride (power of two)"),
	FB_PARAM_END
};

struct stride_engine {
	pthread_t thread;
	struct fb_run *run;
	struct hw_fence *fence;
	size_t slot;
	uint64_t signals, ns;
	_Atomic int *go;
};

static void *stride_engine_main(void *arg)
{
	struct stride_engine *e = arg;
	fb_run_pin_self(e->run, e->slot);
	fb_run_thread_self(e->run, e->slot ? "engine1" : "engine0");
	while (!atomic_load_explicit(e->go, memory_order_acquire))
		lf_cpu_relax();
	uint64_t t0 = lf_now_ns(), raised = 0;
	for (uint64_t v = 1; v <= e->signals; v++) {
		/* the CMP (gpu-model/hw/engine.c): publish CV, full barrier, read MV */
		atomic_exchange_explicit(e->fence->cv, v, memory_order_seq_cst);
		raised += v > atomic_load_explicit(e->fence->mv, memory_order_seq_cst);
	}
	e->ns = lf_now_ns() - t0;
	return raised ? e : NULL;   /* MV is UINT64_MAX: never raised */
}

static int stride_run(struct fb_run *run)
{
	struct hw_caps caps;
	struct hw_adapter *hw;
	struct hw_fence f[2];
	char err[256];
	hw_caps_default(&caps);
	caps.cv_stride = caps.mv_stride = (uint32_t)fb_run_int(run, "stride");
	int rc = hw_adapter_create(&caps, &hw, err, sizeof(err));
	if (rc)
		return fb_run_error(run, rc, "%s", err);
	for (int i = 0; i < 2; i++)
		hw_fence_alloc(hw, false, true, (uint64_t)i + 1, 0, &f[i]);
	_Atomic int go = 0;
	uint64_t n = fb_run_iterations(run) ? fb_run_iterations(run) : 5000000;
	struct stride_engine e[2];
	for (int i = 0; i < 2; i++) {
		e[i] = (struct stride_engine){ .run = run, .fence = &f[i], .slot = (size_t)i, .signals = n, .go = &go };
		pthread_create(&e[i].thread, NULL, stride_engine_main, &e[i]);
	}
	fb_run_measure_begin(run);
	atomic_store_explicit(&go, 1, memory_order_release);
	void *raised[2];
	for (int i = 0; i < 2; i++)
		pthread_join(e[i].thread, &raised[i]);
	fb_run_measure_end(run, 2 * n);
	double ns = (double)(e[0].ns > e[1].ns ? e[0].ns : e[1].ns);
	fb_run_metric(run, "cv_distance", (double)hw_fence_cv_distance(&f[0], &f[1]), "bytes");
	fb_run_latency(run, "signal_ns", ns / (double)n, FB_LIMIT_CACHELINE_HALF);
	fb_run_metric(run, "signals_per_s_per_engine", (double)n / (ns / 1e9), "signals/s");
	if (raised[0] || raised[1])
		return fb_run_error(run, -EPROTO, "a signal with no CPU waiter raised an interrupt");
	for (int i = 0; i < 2; i++)
		hw_fence_free(hw, &f[i]);
	hw_adapter_destroy(hw);
	return 0;
}

const struct fb_scenario bm_scenario_fence_stride = {
	.name = "fence-stride",
	.summary = "false sharing of packed fence values: two engines signaling neighbouring fences",
	.params = stride_params, .compares_paths = false, .polling_threads = 2,
	.default_iterations = 5000000, .run = stride_run,
};
