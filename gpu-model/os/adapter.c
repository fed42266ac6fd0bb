/* gpu-model/os/adapter.c — adapter creation, start (the interrupt thread of
 * irq.c), quiesce and destruction.  Calls irq.c, fence.c, cross.c, rcu.c
 * and hw/; counters and statistics are in stats.c.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu-model/os/os_internal.h"
#include "lockfree/alloc.h"
#include "lockfree/arch.h"
#include "lockfree/thread.h"

static _Atomic uint64_t os_adapter_ids = 1;

void os_config_default(struct os_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	hw_caps_default(&cfg->caps);
	cfg->native_fence_enabled = true;
	cfg->native_fence_kmd_version = OS_NATIVE_FENCE_VERSION_1;
	cfg->native_fence_os_caps.SupportOptimizedDefaultFenceType = true;
	cfg->native_fence_os_caps.SupportIntraGpuFenceType = true;
	cfg->wait_spin_ns = 2000;
	cfg->max_fences = 65536;
	cfg->irq_cpu = -1;
}

/* Seed gpu-preemption: the preemption caps as the OS takes them from the
 * KMD.  Step 2: "Declare support for the Windows 8 GPU preemption model by
 * setting the PreemptionAware and MultiEngineAware members ... to 1. To
 * support the Windows 7 preemption model, set PreemptionAware to zero":
 * PreemptionAware alone is no such declaration, so the adapter runs the
 * Windows 7 model.  Step 8: "the driver must ... set FlipOnVSyncMmIo ... to
 * 1": refused without it.  And the OS "doesn't allow the KMD to disable the
 * preemption of GPU DMA packets": its request is not honoured.  0 or -EINVAL. */
static int os_preempt_caps(const struct os_config *cfg, struct hw_caps *caps, char *err, size_t errlen)
{
	if (cfg->kmd_disable_preemption && cfg->fault == OS_FAULT_KMD_DISABLES_PREEMPTION) {
		/* broken on purpose: the KMD's packets are never preempted */
		caps->gfx_preempt = HW_GFX_PREEMPT_NONE;
		caps->compute_preempt = HW_COMPUTE_PREEMPT_NONE;
	}
	if (cfg->fault == OS_FAULT_VIDSCH_CAPS_UNCHECKED)
		return 0;
	if (caps->preemption_aware && !caps->multi_engine_aware)
		caps->preemption_aware = false;   /* the Windows 7 model */
	if (caps->preemption_aware && !caps->flip_on_vsync_mmio) {
		snprintf(err, errlen, "PreemptionAware without FlipOnVSyncMmIo: a preemption-aware driver must support "
				      "memory-mapped I/O flips on the next vsync; adapter initialization fails");
		return -EINVAL;
	}
	return 0;
}

int os_adapter_create(const struct os_config *cfg, struct os_adapter **out, char *err, size_t errlen)
{
	if (cfg->max_fences == 0 || cfg->max_fences > (1u << 24)) {
		snprintf(err, errlen, "max_fences=%u: must be 1..%u", cfg->max_fences, 1u << 24);
		return -EINVAL;
	}
	if (!os_timing_check(&cfg->timing, err, errlen))
		return -EINVAL;
	struct os_adapter *a = lf_alloc(sizeof(*a), LF_CACHELINE);
	a->cfg = *cfg;
	/* The KMD's driver initialization queries the feature first (feature.c) */
	struct hw_caps caps = cfg->caps;
	int rc = os_preempt_caps(cfg, &caps, err, errlen);
	if (rc) {
		lf_free(a, sizeof(*a), LF_CACHELINE);
		return rc;
	}
	rc = os_kmd_query_features(a, err, errlen);
	/* Seed (native-gpu-fence, "Querying native fence feature enablement"): the OS
	 * fails adapter initialization if the KMD advertises native fence support
	 * while the feature is not enabled, which the OS knows by its own answer
	 * to the KMD's IsFeatureEnabled. */
	if (!rc && caps.native_fence && !(a->feature_queried && a->feature.NativeFenceEnabled)) {
		snprintf(err, errlen, a->feature_queried
			 ? "native_fence advertised while the OS has not enabled DXGK_FEATURE_NATIVE_FENCE: adapter initialization fails"
			 : "native_fence advertised without IsFeatureEnabled(DXGK_FEATURE_NATIVE_FENCE): adapter initialization fails");
		rc = -EINVAL;
	}
	/* the KMD's DRIVER_INITIALIZATION_DATA: its native fence DDIs (kmd.c) */
	if (!rc)
		rc = os_kmd_driver_init(a, err, errlen);
	if (rc) {
		lf_free(a, sizeof(*a), LF_CACHELINE);
		return rc;
	}
	/* DXGKARGCB_FEATURE_NATIVEFENCE_CAPS_1: local memory for native fence
	 * storage only where the OS supports the optimized default fence type */
	if (caps.native_fence && caps.storage == HW_STORAGE_LOCAL &&
	    !a->feature.NativeFenceOSCaps1.SupportOptimizedDefaultFenceType)
		caps.storage = HW_STORAGE_SYSTEM;
	rc = hw_adapter_create(&caps, &a->hw, err, errlen);
	if (rc) {
		lf_free(a, sizeof(*a), LF_CACHELINE);
		return rc;
	}
	a->cfg.caps = *hw_adapter_caps(a->hw);
	a->native = caps.native_fence && a->feature.NativeFenceEnabled;
	a->id = atomic_fetch_add(&os_adapter_ids, 1);
	a->handles = lf_htab_create(1024);
	atomic_init(&a->next_handle, (a->id << 32) | 1);
	a->table = calloc(cfg->max_fences, sizeof(*a->table));
	a->free_idx = calloc(cfg->max_fences, sizeof(*a->free_idx));
	a->logs = os_logs_create();   /* logbuf */
	if (!a->handles || !a->table || !a->free_idx || !a->logs || os_vidmm_init(a)) {
		snprintf(err, errlen, "out of memory creating an adapter for %u fences", cfg->max_fences);
		os_adapter_destroy(a);
		return -ENOMEM;
	}
	pthread_mutex_init(&a->fence_lock, NULL);
	pthread_mutex_init(&a->app_lock, NULL);
	pthread_mutex_init(&a->dma_lock, NULL);
	*out = a;
	return 0;
}

int os_adapter_start(struct os_adapter *a)
{
	int rc = hw_adapter_start(a->hw);
	if (rc)
		return rc;
	a->irq_t0 = lf_now_ns();
	rc = pthread_create(&a->irq, NULL, os_irq_main, a);
	if (rc)
		return -rc;
	a->irq_started = true;
	if (pthread_getcpuclockid(a->irq, &a->irq_clock))
		a->irq_clock = (clockid_t)-1;
	while (!atomic_load(&a->irq_tid))
		sched_yield();
	return 0;
}

void os_adapter_destroy(struct os_adapter *a)
{
	if (!a)
		return;
	if (a->irq_started) {
		atomic_store_explicit(&a->stop, true, memory_order_seq_cst);
		hw_irq_kick(a->hw);
		pthread_join(a->irq, NULL);
	}
	/* engines stop before the fences they may signal go away; every live
	 * fence is in the handle table, and destroying it waits for the deferred
	 * frees of destroyed fences, which still use the storage */
	if (a->hw)
		hw_adapter_stop(a->hw);
	if (a->table)
		os_cross_adapter_gone(a);   /* other adapters stop propagating here */
	if (a->handles) {
		os_rcu_enter();
		lf_htab_destroy(a->handles, os_fence_free);
		os_rcu_leave();
	}
	for (uint32_t i = 0; i < atomic_load(&a->nqueues); i++)
		os_ctx_alloc_destroy(a, &a->queues[i]->ctx_alloc);   /* ctxalloc.c: the memory goes with the HW queue */
	os_vidmm_destroy(a);
	os_allocs_free(a);   /* dma.c: after the engines stopped reading kept buffers */
	hw_adapter_destroy(a->hw);
	a->hw = NULL;
	for (uint32_t i = 0; i < atomic_load(&a->nqueues); i++) {
		struct os_queue *q = a->queues[i];
		for (struct os_held *h = q->head, *next; h; h = next) {
			next = h->next;
			if (h->wait)
				os_held_wait_put(NULL, h->wait);   /* its fence's set is gone already */
			free(h);
		}
		pthread_mutex_destroy(&q->lock);
		lf_free(q, sizeof(*q), LF_CACHELINE);
	}
	for (struct os_app_counters *c = a->app, *next; c; c = next) {
		next = c->next;
		lf_free(c, sizeof(*c), LF_CACHELINE);
	}
	os_logs_destroy(a->logs);   /* logbuf: engines and interrupt thread are gone */
	os_trace_free(a);
	free(a->table);
	free(a->free_idx);
	lf_free(a, sizeof(*a), LF_CACHELINE);
}

void os_adapter_quiesce(struct os_adapter *a)
{
	os_irq_sync(a);
	os_rcu_enter();
	lf_htab_barrier();
	os_rcu_leave();
}

void os_adapter_irq_sync(struct os_adapter *a)
{
	os_irq_sync(a);
}

struct hw_adapter *os_adapter_hw(struct os_adapter *a)
{
	return a->hw;
}

pid_t os_adapter_irq_tid(const struct os_adapter *a)
{
	return atomic_load(&a->irq_tid);
}

bool os_adapter_native(const struct os_adapter *a)
{
	return a->native;
}
