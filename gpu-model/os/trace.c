/* gpu-model/os/trace.c — the timeline trace's records (os.h, "the timeline
 * trace"): one bounded array per adapter that the interrupt thread, the log
 * readers and the runtime append to, and a copy taken once they are idle.
 * The records' meaning is the writers' (irq.c, logbuf.c, the runtime); the
 * file format is the harness's (src/fb_trace.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "gpu-model/os/os_internal.h"

_Static_assert(OS_TRACE_GPU_CTX_SWITCH - OS_TRACE_GPU_RUN == HW_TRACE_CTX_SWITCH - HW_TRACE_RUN,
	       "the GPU records keep the order of enum hw_trace_kind");

struct os_trace_slot {
	struct os_trace_rec rec;
	_Atomic bool ready;              /* release: rec is written */
};

struct os_trace {
	size_t capacity;
	_Atomic uint64_t next;           /* slots taken (may pass capacity: the excess is dropped) */
	struct os_trace_slot slots[];
};

/* The engines' execution records (hw_trace_set_sink), kept as ours. */
static void os_trace_from_hw(void *ctx, const struct hw_trace_rec *h)
{
	if (!h->t0)
		return;                  /* a wait reached before tracing started */
	struct os_trace_rec r = {
		.kind = OS_TRACE_GPU_RUN + h->kind, .engine = h->engine, .queue = h->queue, .fence = h->fence,
		.value = h->value, .t0 = h->t0, .t1 = h->t1, .n = h->tag,
	};
	os_trace_add(ctx, &r);
}

int os_trace_start(struct os_adapter *a, size_t records)
{
	if (atomic_load_explicit(&a->trace, memory_order_acquire))
		return -EALREADY;
	if (!records)
		records = OS_TRACE_RECORDS_DEFAULT;
	struct os_trace *t = calloc(1, sizeof(*t) + records * sizeof(t->slots[0]));
	if (!t)
		return -ENOMEM;
	t->capacity = records;
	/* release: a writer that finds the pointer finds the array initialized */
	atomic_store_explicit(&a->trace, t, memory_order_release);
	hw_trace_set_sink(a->hw, os_trace_from_hw, a);
	return 0;
}

bool os_tracing(const struct os_adapter *a)
{
	return atomic_load_explicit(&a->trace, memory_order_relaxed) != NULL;
}

void os_trace_add(struct os_adapter *a, const struct os_trace_rec *r)
{
	/* acquire: pairs with os_trace_start's release */
	struct os_trace *t = atomic_load_explicit(&a->trace, memory_order_acquire);
	if (!t)
		return;
	/* relaxed: the slot is this writer's alone; its publication is the ready store */
	uint64_t i = atomic_fetch_add_explicit(&t->next, 1, memory_order_relaxed);
	if (i >= t->capacity)
		return;
	t->slots[i].rec = *r;
	/* release: pairs with os_trace_take's acquire load of ready */
	atomic_store_explicit(&t->slots[i].ready, true, memory_order_release);
}

size_t os_trace_count(const struct os_adapter *a)
{
	struct os_trace *t = atomic_load_explicit(&a->trace, memory_order_acquire);
	if (!t)
		return 0;
	uint64_t n = atomic_load_explicit(&t->next, memory_order_relaxed);
	return n < t->capacity ? (size_t)n : t->capacity;
}

size_t os_trace_take(struct os_adapter *a, struct os_trace_rec *out, size_t max, uint64_t *dropped)
{
	struct os_trace *t = atomic_load_explicit(&a->trace, memory_order_acquire);
	uint64_t taken = t ? atomic_load_explicit(&t->next, memory_order_relaxed) : 0;
	size_t n = 0;
	for (uint64_t i = 0; i < taken && i < t->capacity && n < max; i++)
		if (atomic_load_explicit(&t->slots[i].ready, memory_order_acquire))
			out[n++] = t->slots[i].rec;
	if (dropped)
		*dropped = taken - n;
	return n;
}

void os_trace_free(struct os_adapter *a)
{
	free(atomic_load_explicit(&a->trace, memory_order_relaxed));
	atomic_store_explicit(&a->trace, NULL, memory_order_relaxed);
}
