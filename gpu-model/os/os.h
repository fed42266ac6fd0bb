/* gpu-model/os/os.h — the Dxgkrnl + KMD analog: fences, CPU waits and signals,
 * the interrupt thread, the legacy monitored-fence path.
 *
 * Two fence paths (DESIGN.md, "The two fence paths"):
 *   native     — MonitoredValue (MV) = least CPU-waited value − 1, UINT64_MAX when
 *                nobody waits; the CMP interrupts only when CurrentValue > MV;
 *                GPU waits run in hardware.
 *   monitored  — (legacy) every GPU signal interrupts; on each interrupt the OS
 *                walks every fence with pending waits; GPU waits are held on
 *                the CPU and their command buffers submitted when satisfied.
 *
 * The protocol that never loses an interrupt (seed native-gpu-fence,
 * "Synchronization between the GPU and CPU"): a new CPU waiter lowers MV
 * (lf_waitset_add: a seq_cst RMW), then resamples CurrentValue and completes
 * itself if the value was reached meanwhile; the interrupt thread, after
 * raising MV for retired waiters, resamples CurrentValue and releases what the
 * new value satisfies.  An extra interrupt that wakes nobody is counted as
 * spurious; a missed one is a lost wake-up and must never happen.
 *
 * Threads and calls:
 *   os_adapter_create/start/destroy          one setup thread
 *   os_fence_create/open/close/destroy       any thread (not concurrently with waits on that fence)
 *   os_fence_wait_cpu                        any thread; blocks (spin, then futex) up to timeout
 *   os_fence_wait_event / os_wait_multi      any thread; never block
 *   os_fence_signal_cpu, os_fence_value      any thread; never block
 *   os_queue_submit                          the queue's one submitting thread
 *   the interrupt thread                     internal: the only consumer of every waiter set
 */
#ifndef OS_OS_H
#define OS_OS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "gpu-model/hw/hw.h"
#include "lockfree/event.h"

enum os_fault {
	OS_FAULT_NONE,
	OS_FAULT_NO_RESAMPLE,     /* neither the waiter nor the ISR resamples CurrentValue after an MV change */
};

struct os_config {
	struct hw_caps caps;          /* what the KMD advertises */
	bool native_fence_enabled;    /* IsFeatureEnabled(DXGK_FEATURE_NATIVE_FENCE) */
	enum os_fault fault;
	uint64_t wait_spin_ns;        /* a CPU waiter spins this long before sleeping */
	uint32_t max_fences;          /* fences per adapter (scan table size) */
	int irq_cpu;                  /* pin the interrupt thread; -1: not pinned */
};

/* Defaults: hw_caps_default, the feature enabled, no fault, 2 µs spin, 65536 fences. */
void os_config_default(struct os_config *cfg);

struct os_adapter;
struct os_fence;
struct os_queue;

/* 0, or -EINVAL with a one-line reason in err: bad caps, or native fence support
 * advertised while the OS has not enabled the feature (the seed: "The OS fails
 * adapter initialization"). */
int os_adapter_create(const struct os_config *cfg, struct os_adapter **out, char *err, size_t errlen);
int os_adapter_start(struct os_adapter *a);   /* engines + interrupt thread */
void os_adapter_destroy(struct os_adapter *a);
struct hw_adapter *os_adapter_hw(struct os_adapter *a);
pid_t os_adapter_irq_tid(const struct os_adapter *a);
bool os_adapter_native(const struct os_adapter *a);   /* native fences supported and enabled */

/* ---- fences ---- */

enum os_fence_type { OS_FENCE_MONITORED, OS_FENCE_NATIVE };
#define OS_FENCE_SHARED 0x1u           /* shareable: pages of its own, a global handle */

/* Create a fence.  A native fence on an adapter without native support is
 * created as a monitored fence, as the OS does (os_fence_is_native tells).
 * 0 / -ENOSPC (table full) / -ENOMEM. */
int os_fence_create(struct os_adapter *a, enum os_fence_type type, uint64_t initial,
		    unsigned flags, struct os_fence **out);
/* Destroy: the handle stops resolving at once (a payload naming it is a bug
 * check); storage is freed after an RCU grace period (os_adapter_quiesce
 * waits for that).  No waits may be pending on f. */
void os_fence_destroy(struct os_fence *f);
/* Wait until every destroyed fence's storage has been freed.  Any thread. */
void os_adapter_quiesce(struct os_adapter *a);
bool os_fence_is_native(const struct os_fence *f);
uint64_t os_fence_handle(const struct os_fence *f);          /* global handle */
struct hw_fence *os_fence_hw(struct os_fence *f);            /* for GPU commands */

/* The fence's value as the CPU sees it (64-bit, reconstructed on 32-bit GPUs). */
uint64_t os_fence_value(struct os_fence *f);

/* CPU signal: write v and release every waiter it satisfies (CPU and GPU).
 * 0 / -ERANGE (32-bit GPU: more than UINT32_MAX/2 from the last signaled value). */
int os_fence_signal_cpu(struct os_fence *f, uint64_t v);

/* Blocking CPU wait until value >= v.  0 when reached; -ETIMEDOUT; -ERANGE
 * (32-bit GPU, v too far ahead).  timeout_ns < 0: forever. */
int os_fence_wait_cpu(struct os_fence *f, uint64_t v, int64_t timeout_ns);

/* Event-style wait: ev is set once the value reaches v (at once if it has).
 * Any number of events per fence.  0 / -ERANGE. */
int os_fence_wait_event(struct os_fence *f, uint64_t v, struct lf_event *ev);

/* One event for many (fence, value) pairs: set when all (all=true) or any is reached.
 * 0 / -ERANGE / -EINVAL (n == 0). */
int os_wait_multi(struct os_fence *const *f, const uint64_t *v, size_t n, bool all, struct lf_event *ev);

/* ---- queues (kernel-mode view of a HW queue) ---- */

/* A queue on engine `engine`.  Native GPU waits go to the hardware; a WAIT on a
 * monitored fence is held by the OS on the CPU, with everything after it. */
struct os_queue *os_queue_create(struct os_adapter *a, unsigned engine, size_t ring_slots);
/* Submit a command buffer.  The queue's single submitting thread. 0 / -EINVAL. */
int os_queue_submit(struct os_queue *q, const struct hw_cmd *cmds, size_t n);
/* Command buffers held on the CPU for a monitored-fence wait right now. */
size_t os_queue_held(struct os_queue *q);

/* ---- counters ---- */

struct os_stats {
	/* interrupt thread */
	uint64_t interrupts;        /* GPU interrupt records handled */
	uint64_t spurious;          /* ... that released no waiter */
	uint64_t soft;              /* OS-queued deferred work (CPU signals) */
	uint64_t released;          /* waiters released by the interrupt thread */
	uint64_t fences_scanned;    /* fences looked at by the handler */
	uint64_t bugchecks;         /* payload named a fence that no longer exists */
	uint64_t held_released;     /* CPU-held command buffers submitted */
	uint64_t isr_busy_ns;       /* the interrupt thread's CPU time (user + kernel) */
	uint64_t irq_idle_ns;       /* the rest of its lifetime (wall clock) */
	uint64_t irq_wakeups;       /* times the thread woke from a park */
	/* CPU waiters (merged over threads) */
	uint64_t waits;             /* os_fence_wait_cpu calls */
	uint64_t waits_fast;        /* ... satisfied without registering */
	uint64_t waits_blocked;     /* ... that slept */
	uint64_t self_released;     /* ... completed by their own resample */
	uint64_t timeouts;          /* ... that timed out with the value not reached */
	uint64_t lost_wakeups;      /* ... that timed out although the value was reached */
	/* GPU (from hw) */
	uint64_t gpu_signals;
	uint64_t gpu_interrupts;
};
void os_adapter_stats(struct os_adapter *a, struct os_stats *out);

#endif
