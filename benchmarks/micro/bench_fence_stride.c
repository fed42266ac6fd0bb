/* benchmarks/micro/bench_fence_stride.c — what packing fence values costs: false sharing.
 *
 * Seed (native-gpu-fence, "Physical memory storage"): non-shareable fences are
 * packed into the same pages by the adapter's CurrentValue stride.  Two
 * threads, each the only writer of its own fence (two engines signaling two
 * fences), signal increasing values as fast as they can, with the CMP's
 * memory traffic (seq_cst exchange of CurrentValue, then a load of
 * MonitoredValue; both strides set to the row's stride):
 *   fence_stride_signal/stride:8     neighbours share a cache line
 *   fence_stride_signal/stride:64    each value on its own line
 *   fence_stride_signal/stride:128   apart even for adjacent-line prefetchers
 * items_per_second is signals per second per thread (Google Benchmark 1.7
 * divides rates by summed CPU time).  Compare the rows of one run; the ratio
 * stride:8 / stride:64 is the false-sharing cost.  The counter `adjacent`
 * checks that the two fences really are `stride` bytes apart.
 *
 * It includes gpu-model/hw/hw.h, below the runtime, on purpose: what it measures
 * is the fence storage itself (hw_fence_alloc's packing), which no runtime call
 * exposes; there is no OS, no engine thread and no submission in it.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpu-model/hw/hw.h"
#include "lockfree/die.h"
#include "src/gbench/gbench.h"

static struct hw_adapter *stride_hw;
static struct hw_fence stride_fence[2];

static void stride_setup(const gb_state *st)
{
	struct hw_caps caps;
	char err[256];
	hw_caps_default(&caps);
	caps.cv_stride = (uint32_t)gb_arg(st, 0);
	caps.mv_stride = caps.cv_stride;
	if (hw_adapter_create(&caps, &stride_hw, err, sizeof(err)))
		lf_die("bench_fence_stride: %s", err);
	for (int i = 0; i < 2; i++)
		hw_fence_alloc(stride_hw, false, true, (uint64_t)i + 1, 0, &stride_fence[i]);
}

static void stride_teardown(const gb_state *st)
{
	for (int i = 0; i < 2; i++)
		hw_fence_free(stride_hw, &stride_fence[i]);
	hw_adapter_destroy(stride_hw);
	stride_hw = NULL;
}

static void fence_stride_signal(gb_state *st)
{
	struct hw_fence *f = &stride_fence[gb_thread_index(st) & 1];
	uint64_t v = 0, raised = 0;
	while (gb_keep_running(st)) {
		/* the CMP (gpu-model/hw/engine.c): publish CV, full barrier, read MV */
		atomic_exchange_explicit(f->cv, ++v, memory_order_seq_cst);
		raised += v > atomic_load_explicit(f->mv, memory_order_seq_cst);
	}
	gb_do_not_optimize(raised);
	gb_set_items_processed(st, gb_iterations(st));
	gb_counter(st, "adjacent", (double)hw_fence_cv_distance(&stride_fence[0], &stride_fence[1]),
		   GB_COUNTER_AVG_THREADS);
}

GB_BENCHMARK(fence_stride_signal,
	     gb_arg_name(b, "stride"); gb_arg_add(b, 8); gb_arg_add(b, 64); gb_arg_add(b, 128);
	     gb_threads(b, 2); gb_use_real_time(b); gb_min_time(b, 0.3);
	     gb_setup(b, stride_setup); gb_teardown(b, stride_teardown))
