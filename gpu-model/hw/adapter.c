/* gpu-model/hw/adapter.c — adapter caps, creation and teardown, statistics.  The interrupt lines are in irq.c. */
#include <errno.h>
#include <limits.h>
#include <numa.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu-model/hw/hw_internal.h"
#include "lockfree/alloc.h"
#include "lockfree/arch.h"
#include "lockfree/die.h"
#include "lockfree/asym.h"

void hw_caps_default(struct hw_caps *caps)
{
	memset(caps, 0, sizeof(*caps));
	caps->native_fence = true;
	caps->map_to_gpu_system_process = true;
	caps->cv_stride = 64;
	caps->mv_stride = 64;
	caps->payload = HW_PAYLOAD_FENCE_ARRAY;
	caps->storage = HW_STORAGE_SYSTEM;
	caps->fence_segments = 1u << 1;   /* one local segment for fence values */
	caps->numa_node = -1;
	caps->engines = 1;
	caps->idle_spin_ns = 20000;
	caps->work_spin_max_ns = 50000;
	/* the Windows 8 model, preemption between commands (what a run list
	 * switching queues at command boundaries always did) */
	caps->preemption_aware = true;
	caps->multi_engine_aware = true;
	caps->flip_on_vsync_mmio = true;   /* what the OS requires of a preemption-aware driver */
	caps->gfx_preempt = HW_GFX_PREEMPT_PRIMITIVE_BOUNDARY;
	caps->compute_preempt = HW_COMPUTE_PREEMPT_DISPATCH_BOUNDARY;
}

static int hw_caps_error(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool hw_stride_ok(uint32_t s)
{
	return s >= 8 && s <= HW_PAGE_SIZE && (s & (s - 1)) == 0;
}

/* The checks a KMD's caps must pass before the adapter starts. */
static int hw_caps_check(const struct hw_caps *c, char *err, size_t errlen)
{
	if (c->engines < 1 || c->engines > HW_MAX_ENGINES)
		return hw_caps_error(err, errlen, "engines=%u: must be 1..%d", c->engines, HW_MAX_ENGINES);
	if (!hw_stride_ok(c->cv_stride))
		return hw_caps_error(err, errlen, "cv_stride=%u: must be a power of two in 8..4096 bytes", c->cv_stride);
	if (!hw_stride_ok(c->mv_stride))
		return hw_caps_error(err, errlen, "mv_stride=%u: must be a power of two in 8..4096 bytes", c->mv_stride);
	/* Seed (native-gpu-fence, "Current value"): 64-bit CurrentValue writes must
	 * be atomic for the CPU and the GPU; a 32-bit-only GPU cannot do native fences. */
	if (c->native_fence && c->no_64bit_atomics)
		return hw_caps_error(err, errlen, "native_fence with no_64bit_atomics: native fences need atomic 64-bit CurrentValue writes");
	if (c->payload > HW_PAYLOAD_OPTIMIZED_NULL)
		return hw_caps_error(err, errlen, "payload=%d: unknown interrupt payload kind", (int)c->payload);
	if (c->storage == HW_STORAGE_LOCAL && c->numa_node >= 0 &&
	    (numa_available() < 0 || c->numa_node > numa_max_node()))
		return hw_caps_error(err, errlen, "numa_node=%d: no such NUMA node on this machine (highest is %d)",
				     c->numa_node, numa_available() < 0 ? 0 : numa_max_node());
	if (c->fence_segments & 1u)
		return hw_caps_error(err, errlen, "fence_segments=%#x: segment 0 is system memory, not a local segment",
				     c->fence_segments);
	if (c->storage == HW_STORAGE_LOCAL && !c->fence_segments)
		return hw_caps_error(err, errlen, "storage=local with no fence_segments: the driver names no segment "
				     "for fence values in local memory (D3DKMDT_FENCESTORAGESURFACEDATA)");
	if (c->local_read_ns > 1000000)
		return hw_caps_error(err, errlen, "local_read_ns=%u: more than 1 ms per read is not a PCIe read", c->local_read_ns);
	if (c->gfx_preempt > HW_GFX_PREEMPT_SHADER_BOUNDARY || c->compute_preempt > HW_COMPUTE_PREEMPT_SHADER_BOUNDARY)
		return hw_caps_error(err, errlen, "preemption granularity %d/%d: unknown", (int)c->gfx_preempt,
				     (int)c->compute_preempt);
	if (c->data_words > (1u << 24))
		return hw_caps_error(err, errlen, "data_words=%u: at most %u", c->data_words, 1u << 24);
	if (c->ctx_local_slots > HW_CTX_SLOTS_MAX || c->ctx_system_slots > HW_CTX_SLOTS_MAX)
		return hw_caps_error(err, errlen, "ctx_local_slots=%u / ctx_system_slots=%u: at most %u", c->ctx_local_slots,
				     c->ctx_system_slots, HW_CTX_SLOTS_MAX);
	char what[160];
	if (!hw_timing_check(&c->timing, what, sizeof(what)))
		return hw_caps_error(err, errlen, "%s", what);
	if (c->ncpus > 64)
		return hw_caps_error(err, errlen, "%zu CPUs: at most 64", c->ncpus);
	for (size_t i = 0; i < c->ncpus; i++)
		if (c->cpus[i] < 0 || c->cpus[i] >= CPU_SETSIZE)
			return hw_caps_error(err, errlen, "cpu %d: out of range", c->cpus[i]);
	return 0;
}

int hw_adapter_create(const struct hw_caps *caps, struct hw_adapter **out, char *err, size_t errlen)
{
	int rc = hw_caps_check(caps, err, errlen);
	if (rc)
		return rc;
	lf_ticks_init();              /* the counter HW_CMD_STAMP writes */
	lf_asym_init();               /* before the engines: the preemption hand-shake */
	struct hw_adapter *a = lf_alloc(sizeof(*a), LF_CACHELINE);
	a->caps = *caps;
	for (size_t i = 0; i < caps->ncpus; i++)
		a->cpus[i] = caps->cpus[i];
	a->caps.cpus = a->cpus;
	if (!a->caps.gpu_ts_hz)
		a->caps.gpu_ts_hz = HW_GPU_TS_HZ_DEFAULT;
	a->ts_epoch_ns = lf_now_ns();
	hw_display_init(a);
	if (hw_segments_create(a)) {
		hw_display_destroy(a);
		lf_free(a, sizeof(*a), LF_CACHELINE);
		return hw_caps_error(err, errlen, "out of memory for %u context images and %u data words",
				     caps->ctx_local_slots, caps->data_words);
	}
	lf_mpsc_init(&a->irq_q);
	lf_wake_init(&a->irq_wake);
	pthread_mutex_init(&a->storage_lock, NULL);
	pthread_mutex_init(&a->queue_lock, NULL);
	if (hw_va_space_create(HW_VA_PROCESS_BASE, &a->proc_vas) || hw_va_space_create(HW_VA_SYSTEM_BASE, &a->sys_vas))
		lf_die("hw_adapter_create: out of memory for the GPU VA spaces");
	for (unsigned i = 0; i < caps->engines; i++) {
		a->engines[i].index = i;
		a->engines[i].a = a;
		lf_wake_init(&a->engines[i].wake);
		atomic_init(&a->engines[i].preempt_prio, INT32_MIN);   /* no request */
	}
	*out = a;
	return 0;
}

/* ns since the epoch in ticks of hz, without overflowing 64 bits for ~900 years of ns. */
static uint64_t hw_ticks_of(uint64_t ns, uint64_t hz)
{
	return ns / 1000000000ull * hz + ns % 1000000000ull * hz / 1000000000ull;
}

uint64_t hw_gpu_timestamp(const struct hw_adapter *a)
{
	uint64_t now = lf_now_ns();
	return hw_ticks_of(now - a->ts_epoch_ns, a->caps.gpu_ts_hz);
}

void hw_clock_calibration(const struct hw_adapter *a, uint64_t *gpu, uint64_t *cpu_ns, uint64_t *hz)
{
	/* one clock read for both: the pair names the same instant (up to the
	 * counter's resolution, the tick holding it) */
	uint64_t now = lf_now_ns();
	uint64_t ticks = hw_ticks_of(now - a->ts_epoch_ns, a->caps.gpu_ts_hz);
	*gpu = ticks;
	*hz = a->caps.gpu_ts_hz;
	/* the CPU time of the tick's start, so the pair converts exactly */
	*cpu_ns = a->ts_epoch_ns + ticks / *hz * 1000000000ull + ticks % *hz * 1000000000ull / *hz;
}

int hw_adapter_start(struct hw_adapter *a)
{
	return hw_engines_start(a);
}

void hw_adapter_stop(struct hw_adapter *a)
{
	hw_engines_stop(a);
}

void hw_adapter_destroy(struct hw_adapter *a)
{
	if (!a)
		return;
	hw_engines_stop(a);
	struct hw_irq_rec *rec;
	while ((rec = hw_irq_pop(a)))
		hw_irq_free(rec);
	lf_mpsc_destroy(&a->irq_q);
	hw_display_destroy(a);
	hw_segments_destroy(a);   /* segment.c: the context allocations and their segments */
	for (unsigned i = 0; i < a->caps.engines; i++) {
		struct hw_engine *e = &a->engines[i];
		uint32_t n = atomic_load(&e->nqueues);
		for (uint32_t k = 0; k < n; k++) {
			/* a user-mode queue's bound ring buffer allocation too: the
			 * hardware kept addressing it (hw_queue_bind_ring) */
			if (e->queues[k]->placeholder != e->queues[k]->ring)
				lf_ring_destroy(e->queues[k]->placeholder);
			lf_ring_destroy(e->queues[k]->ring);
			lf_free(e->queues[k], sizeof(*e->queues[k]), LF_CACHELINE);
		}
	}
	hw_pools_free(a);
	hw_va_space_destroy(a->proc_vas);
	hw_va_space_destroy(a->sys_vas);
	pthread_mutex_destroy(&a->storage_lock);
	pthread_mutex_destroy(&a->queue_lock);
	lf_free(a, sizeof(*a), LF_CACHELINE);
}

const struct hw_caps *hw_adapter_caps(const struct hw_adapter *a)
{
	return &a->caps;
}

/* ---- statistics ---- */

void hw_engine_stats(const struct hw_adapter *a, unsigned engine, struct hw_engine_stats *out)
{
	const struct hw_engine *e = &a->engines[engine];
	out->signals = atomic_load_explicit(&e->signals, memory_order_relaxed);
	out->interrupts = atomic_load_explicit(&e->interrupts, memory_order_relaxed);
	out->cmds = atomic_load_explicit(&e->cmds, memory_order_relaxed);
	out->parks = atomic_load_explicit(&e->parks, memory_order_relaxed);
	out->waits_blocked = atomic_load_explicit(&e->waits_blocked, memory_order_relaxed);
	out->busy_ns = atomic_load_explicit(&e->busy_ns, memory_order_relaxed);
	out->lowered = atomic_load_explicit(&e->lowered, memory_order_relaxed);
	out->lower_failed = atomic_load_explicit(&e->lower_failed, memory_order_relaxed);
	out->timed = atomic_load_explicit(&e->timed, memory_order_relaxed);
	out->timed_ns = atomic_load_explicit(&e->timed_ns, memory_order_relaxed);
	out->timed_late_ns = atomic_load_explicit(&e->timed_late_ns, memory_order_relaxed);
	out->park_idle_min_ns = atomic_load_explicit(&e->park_idle_min_ns, memory_order_relaxed);
}

pid_t hw_engine_tid(const struct hw_adapter *a, unsigned engine)
{
	return atomic_load(&a->engines[engine].tid);
}

uint64_t hw_adapter_interrupts(const struct hw_adapter *a)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < a->caps.engines; i++)
		n += atomic_load_explicit(&a->engines[i].interrupts, memory_order_relaxed);
	return n;
}

uint64_t hw_adapter_signals(const struct hw_adapter *a)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < a->caps.engines; i++)
		n += atomic_load_explicit(&a->engines[i].signals, memory_order_relaxed);
	return n;
}
