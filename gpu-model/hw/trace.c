/* gpu-model/hw/trace.c — the engines' execution records (hw.h, "execution
 * records"): handed to the sink the OS set, as they happen. */
#include "gpu-model/hw/hw_internal.h"
#include "lockfree/arch.h"

void hw_trace_set_sink(struct hw_adapter *a, hw_trace_sink sink, void *ctx)
{
	a->trace_ctx = ctx;
	/* release: an engine that finds the sink finds its ctx */
	atomic_store_explicit(&a->trace_sink, sink, memory_order_release);
}

bool hw_tracing(const struct hw_adapter *a)
{
	return atomic_load_explicit(&a->trace_sink, memory_order_relaxed) != NULL;
}

void hw_trace(struct hw_adapter *a, const struct hw_trace_rec *r)
{
	/* acquire: pairs with hw_trace_set_sink's release (trace_ctx) */
	hw_trace_sink sink = atomic_load_explicit(&a->trace_sink, memory_order_acquire);
	if (sink)
		sink(a->trace_ctx, r);
}

void hw_trace_op(struct hw_adapter *a, const struct hw_engine *e, const struct hw_queue *q, enum hw_trace_kind kind,
		 const struct hw_fence *f, uint64_t value, uint64_t t0, uint32_t tag)
{
	struct hw_trace_rec r = {
		.kind = kind, .engine = (uint32_t)(e - a->engines), .queue = hw_queue_handle(q),
		.fence = f ? f->handle : 0, .value = value, .t0 = t0, .t1 = lf_now_ns(), .tag = tag,
	};
	hw_trace(a, &r);
}
