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
 * (lf_waitset_add: its last step is a seq_cst RMW, the CAS on MV, or on the
 * set's `adds` word when MV was low enough already), then resamples
 * CurrentValue and completes itself if the value was reached meanwhile; the
 * interrupt thread (or a CPU signaler), after raising MV for retired waiters,
 * compares the published MV with a fresh CurrentValue after every release
 * call and releases again while the value is above it.  A raise is briefly
 * visible before the release has taken the adds that came during it
 * (lockfree/waitset.h, "The raise window"): a CPU signaler that sees a
 * release raising takes the slow path and releases against its own write
 * under the release lock.  An extra interrupt that wakes nobody is counted as
 * spurious; a missed one is a lost wake-up and must never happen.
 *
 * The release rule (fences may be rewound; seed multi-engine-synchronization,
 * "A fence may be rewound"), both halves, for every kind of wait:
 *   1. "If a race does occur, between a value which will satisfy an
 *      outstanding wait, and a lower value which will not, the wait will be
 *      satisfied regardless of which value remains afterwards."  Every release
 *      is decided against the value a write put there: a CPU signal releases
 *      against the value passed, before it returns; a GPU signal's interrupt
 *      carries the value the engine wrote (with a NULL payload too: the record
 *      keeps it, as the seed's signal log would; log entries carry it too),
 *      and the interrupt thread releases against it and against what its
 *      resample reads then — never only against a value read later, which a
 *      rewind may have lowered.
 *   2. "If a fence is rewound, any new waits ... will be compared against the
 *      new lower fence value."  A wait is released only by a value written
 *      after its first look at the fence, or by a value it reads itself (that
 *      look, or its resample after lowering MonitoredValue) — never by a value
 *      that was superseded before it registered.  How: every write of
 *      CurrentValue has a number (hw_fence_write; the model's stand-in for
 *      the order memory gives writes to one location); a waiter keeps the
 *      number of the write its first look read; a release from write s (an
 *      interrupt record, a log entry, a CPU signal, a value another adapter
 *      passed on, a resample) takes only waiters registered before s.  A
 *      write that runs during the waiter's first look counts as after it
 *      (the race of half 1).
 * When a wait becomes outstanding (the linearization point of half 1): at
 * its add (the MonitoredValue lowering, or the add's last RMW when nothing
 * was lowered), not at its first look.  A write after the add that satisfies
 * the wait releases it, whatever is written afterwards.  A write between the
 * first look and the add races the registration: a signaler that sees a
 * threshold low enough (another waiter's) releases the wait against it; one
 * that does not leaves it to the resample, which compares the wait with the
 * value there then: if a rewind came first, the seed's "any new waits ...
 * will be compared against the new lower fence value" (a rewind before the
 * wait is outstanding wins; tests/test_fence_release_window.c).  The first
 * look only bounds which writes may release the wait (half 2).
 * This holds for blocking, event and multi waits, for GPU waits held on the
 * CPU (legacy), and for cross-adapter instances (they share CurrentValue and
 * its write numbers): each is a waiter of its fence.  Hardware GPU waits
 * (native) compare the fence's memory as the hardware does, so they see only
 * the value there now.
 *
 * Threads and calls:
 *   os_adapter_create/start/destroy          one setup thread
 *   os_fence_create/open/close               any thread
 *   os_fence_destroy                         any thread but the interrupt thread; not concurrently
 *                                            with blocking waits on that fence; blocks until the
 *                                            engines' runs in progress ended and the interrupt
 *                                            thread handled what was raised before
 *   os_fence_wait_cpu                        any thread; blocks (spin, then futex) up to timeout
 *   os_fence_wait_event / os_wait_multi      any thread; never block
 *   os_fence_signal_cpu                      any thread; never waits for the GPU or the interrupt
 *                                            thread (takes the fence's release lock briefly)
 *   os_fence_value                           any thread; never blocks
 *   os_queue_submit                          the queue's one submitting thread; never waits for ring space
 *   the interrupt thread                     internal
 * A fence's waiter set is consumed (waiters released, MonitoredValue published)
 * under the fence's release lock, by the interrupt thread or by a CPU signaler.
 * Progress: cancels are lock-free, a CPU signal that finds no waiter (and no
 * raising release) takes no lock; an add takes the fence's interrupt lock
 * for its DxgkDdiUpdateMonitoredValues (synchronized with the interrupt
 * handler, which holds it while it handles the fence: fence.c,
 * os_waiter_update_mv), and so may wait for the interrupt thread.  Writers of one fence are
 * serialized, though: a write waits (spins, then sched_yield) while another
 * writer of the same fence is between its write-number steps
 * (gpu-model/hw/storage.c, the odd write sequence), and so may a value read
 * with its number; a release under the release lock may sched_yield-spin
 * behind such a preempted writer (fence.c, os_fence_release_locked).  So a
 * signal, and a release, are blocking with respect to a preempted writer of
 * the same fence; a signal that meets a raising release waits for the release
 * lock.
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
	OS_FAULT_RELEASE_CURRENT, /* releases are decided against the fence's current value read later, not
				     against the value signaled (CPU signals leave them to the interrupt
				     thread, which reads after a widened window): a rewind loses waiters */
	OS_FAULT_RELEASE_MAX,     /* releases are decided against max(value signaled, current value) for
				     every waiter, whenever it registered (the interrupt thread after a
				     widened window): a wait registered after a rewind is released by a
				     value written before it (an early release) */
	OS_FAULT_NO_LOG_FALLBACK, /* a log overrun is counted but the ISR does not read every fence */
	OS_FAULT_PAGING_NEW_ID,   /* resubmission gives preempted paging buffers new fence IDs */
	OS_FAULT_KMD_NO_FEATURE_QUERY, /* the KMD advertises native fence support without calling
					  IsFeatureEnabled(DXGK_FEATURE_NATIVE_FENCE) first */
	OS_FAULT_SW_SIGNAL_AT_QUEUE,   /* os_queue_signal_from_gpu writes the value when the packet is
					  queued, not when the GPU context reaches it */
	OS_FAULT_KMD_QFI_VERSION,      /* the KMD asks QueryFeatureInterface for a version one above
					  the negotiated one */
	OS_FAULT_NO_LOG_UPDATE,        /* the OS reads new log entries without calling DxgkDdiUpdateNativeFenceLogs */
	OS_FAULT_LOG_SCAN_ENGINE,      /* a fence-array interrupt makes the OS read the interrupting engine's logs,
					  not those of the signaled fence's parent device */
	OS_FAULT_CROSS_WAIT_HELD,      /* a GPU wait on a native cross-adapter fence is held on the CPU,
					  as a monitored fence's, instead of waiting in hardware */
	OS_FAULT_KMD_DDI_TABLE_INCOMPLETE, /* the KMD advertises native fences but leaves
					      DxgkDdiUpdateNativeFenceLogs out of its DRIVER_INITIALIZATION_DATA */
	OS_FAULT_VIDSCH_CAPS_UNCHECKED, /* the OS takes the KMD's preemption caps as they come: PreemptionAware
					   without MultiEngineAware runs the Windows 8 model, PreemptionAware
					   without FlipOnVSyncMmIo is accepted (adapter.c, os_preempt_caps) */
	OS_FAULT_KMD_DISABLES_PREEMPTION, /* the OS lets the KMD turn preemption of its DMA packets off
					     (os_config.kmd_disable_preemption honoured) */
	OS_FAULT_PAGING_NOT_FIRST,     /* resubmitted paging buffers are not put before the engine's other
					  queues (os_queue_preempt tells the engine none were paging) */
	OS_FAULT_EVICT_DISCARDS,       /* vidmm.c: evicting or relocating a context allocation does not copy its
					  content (the video memory manager does not preserve it) */
	OS_FAULT_NO_INIT_CONTEXT_RESOURCE, /* vidmm.c: a first residency builds no InitContextResource paging
					      buffer (the context starts from whatever the memory held) */
	OS_FAULT_DEVICE_ALLOC_EVICTABLE, /* vidmm.c: a device context allocation may be evicted while its
					    device lives */
	OS_FAULT_SPLIT_PATCH_ONCE,     /* dma.c: a split DMA buffer is patched once, from one list, at its first
					  packet: later packets keep the addresses of then */
	OS_FAULT_BINDING_LEAK_UNCHECKED, /* dma.c: binding leak detection walks nothing */
	OS_FAULT_LDA_PATCH_PER_GPU,    /* dma.c: the KMD patches a split packet broadcast to linked GPUs in
					  place, for each GPU in turn */
	OS_FAULT_SIGNAL_TRUSTS_THRESHOLD, /* fence.c: a CPU signal (or a deferred release) trusts the published
					     threshold alone, ignoring a raising release in progress: a waiter
					     whose add the raise hides is not released when the signal returns,
					     or at all after a rewind */
	OS_FAULT_MULTI_SETS_EVERY_HIT, /* fence.c: a multi wait sets its event at every pair reached (an any
					  wait) or abandoned, after the caller may have reused it */
};

/* ---- feature enablement (seed native-gpu-fence, "Querying native fence
 * feature enablement in OS", "DDIs to query native fence feature
 * enablement").  The OS's DXGK_FEATURE_INTERFACE, called by the KMD's
 * initialization inside os_adapter_create exactly as the seed's sample
 * driver code does: IsFeatureEnabled (DXGKARGCB_ISFEATUREENABLED2: Enabled
 * and the negotiated Version), then, when enabled, QueryFeatureInterface
 * for that Version, which returns the DXGKCBINT_FEATURE_NATIVEFENCE_1 table,
 * then its GetOSCaps (DXGKCB_FEATURE_NATIVEFENCE_CAPS_1).  The callbacks take
 * the adapter (Windows passes DxgkInterface.DeviceHandle; GetOSCaps's
 * Context is the model's stand-in for the OS state a real callback reaches). */
enum os_feature_id { OS_FEATURE_NATIVE_FENCE = 1 };    /* DXGK_FEATURE_NATIVE_FENCE */
#define OS_NATIVE_FENCE_VERSION_1 1                      /* the one interface table the OS implements */

struct os_isfeatureenabled2 {                  /* DXGKARGCB_ISFEATUREENABLED2 */
	enum os_feature_id FeatureId;
	struct {
		bool Enabled;
		uint16_t Version;              /* negotiated: min(OS's, KMD's); 0 when not enabled */
	} Result;
};
struct os_nativefence_caps_1 {                 /* DXGKARGCB_FEATURE_NATIVEFENCE_CAPS_1 */
	bool SupportOptimizedDefaultFenceType; /* native fence storage may be placed in local memory */
	bool SupportIntraGpuFenceType;         /* D3DDDI_NATIVEFENCE_TYPE_INTRA_GPU: a fence whose values may
						  live in GPU local memory (OS_FENCE_LOCAL_MEMORY) */
};
struct os_feature_nativefence_1 {              /* DXGKCBINT_FEATURE_NATIVEFENCE_1 */
	const void *Context;
	int (*GetOSCaps)(const void *ctx, struct os_nativefence_caps_1 *args);   /* DXGKCB_FEATURE_NATIVEFENCE_CAPS_1 */
};
struct os_queryfeatureinterface {              /* DXGKARGCB_QUERYFEATUREINTERFACE */
	enum os_feature_id FeatureId;
	void *Interface;
	size_t InterfaceSize;
	uint16_t Version;
};
struct os_adapter;
/* IsFeatureEnabled: 0 (Result filled) / -EINVAL (unknown FeatureId). */
int os_feature_is_enabled(struct os_adapter *a, struct os_isfeatureenabled2 *args);
/* QueryFeatureInterface: 0 (Interface filled) / -ENOTSUP: the feature is not
 * enabled, or Version is not the negotiated one / -EINVAL: unknown feature,
 * NULL Interface or InterfaceSize smaller than the table. */
int os_feature_query_interface(struct os_adapter *a, struct os_queryfeatureinterface *args);

/* The KMD's cache of what it queried (the sample's FEATURE_STATE) and the
 * OS's count of the calls, in call order. */
enum os_feature_call { OS_FCALL_IS_FEATURE_ENABLED, OS_FCALL_QUERY_FEATURE_INTERFACE, OS_FCALL_GET_OS_CAPS };
#define OS_FEATURE_CALLS_MAX 8
struct os_feature_state {
	bool NativeFenceEnabled;
	uint16_t NativeFenceVersion;              /* 0 until QueryFeatureInterface succeeded */
	struct os_nativefence_caps_1 NativeFenceOSCaps1;
	unsigned ncalls;
	enum os_feature_call calls[OS_FEATURE_CALLS_MAX];   /* the first ncalls, in order */
};
void os_adapter_feature_state(const struct os_adapter *a, struct os_feature_state *out);

/* The kernel-mode submission path's own cost (gpu-model/os/timing.c), part
 * of a timing profile beside the adapter's (hw_caps.timing).  All zero is
 * "ideal": a kernel-mode submission costs what the model's code costs.
 * These are CPU work, not GPU latency: each is spent busy on the thread
 * that does that work in Windows, so it counts in that thread's CPU time. */
struct os_timing {
	uint64_t km_call_ns;          /* the submitting thread's kernel crossing (D3DKMTSubmitCommand in and out) */
	uint64_t km_validate_ns;      /* validation and patching of the buffer, on the submitting thread */
	uint64_t km_sched_ns;         /* the scheduler's work per buffer (dependencies, DxgkDdiSubmitCommand):
				       * on the scheduler thread, and on the interrupt thread for a buffer
				       * held on the CPU behind a monitored-fence wait when it is released */
};
#define OS_TIMING_MAX_NS 10000000ull   /* any one cost: at most 10 ms */

struct os_config {
	struct hw_caps caps;          /* what the KMD advertises */
	bool native_fence_enabled;    /* IsFeatureEnabled(DXGK_FEATURE_NATIVE_FENCE).Enabled */
	uint16_t native_fence_kmd_version;   /* the highest interface version the KMD implements (1);
						the OS negotiates min(it, OS_NATIVE_FENCE_VERSION_1) */
	struct os_nativefence_caps_1 native_fence_os_caps;   /* what GetOSCaps reports; default:
								both types supported */
	enum os_fault fault;
	/* Seed gpu-preemption: the OS "doesn't allow the kernel-mode display
	 * driver (KMD) to disable the preemption of GPU DMA packets".  A KMD
	 * that asks anyway (this flag) is not heard: the adapter keeps the
	 * granularity its caps advertise (os_adapter_create). */
	bool kmd_disable_preemption;
	/* Seed gpu-preemption: "A verification mode, called binding leak
	 * detection" (os/dma.c, os_split_verify); NoDmaPatching opts out. */
	bool binding_leak_detection;
	uint64_t wait_spin_ns;        /* a CPU waiter spins this long before sleeping */
	uint32_t max_fences;          /* fences per adapter (scan table size) */
	int irq_cpu;                  /* pin the interrupt thread; -1: not pinned */
	struct os_timing timing;      /* the kernel-mode submission path's cost (all zero: "ideal") */
};

/* Defaults: hw_caps_default, the feature enabled (version 1), no fault, 2 µs spin, 65536 fences. */
void os_config_default(struct os_config *cfg);

struct os_adapter;
struct os_fence;
struct os_queue;

/* 0, or -EINVAL with a one-line reason in err: bad caps (among them
 * PreemptionAware = 1 without FlipOnVSyncMmIo = 1: seed gpu-preemption, step
 * 8, "the driver must support the memory-mapped I/O flip model"), or native fence support
 * advertised while the KMD's IsFeatureEnabled did not report the feature
 * enabled (the seed: "The OS fails adapter initialization"), or the KMD's
 * QueryFeatureInterface for the negotiated version failed.  The KMD's
 * feature query runs first (os_adapter_feature_state); it places native
 * fences in system memory when caps.storage asks for local memory and
 * GetOSCaps reports no SupportOptimizedDefaultFenceType.  The preemption
 * model (seed gpu-preemption, step 2): the Windows 8 model needs
 * PreemptionAware and MultiEngineAware both set; PreemptionAware without
 * MultiEngineAware is not that declaration, and the adapter runs the
 * Windows 7 model (PreemptionAware taken as 0: hw_adapter_caps says what
 * the adapter runs).  kmd_disable_preemption is ignored. */
int os_adapter_create(const struct os_config *cfg, struct os_adapter **out, char *err, size_t errlen);
int os_adapter_start(struct os_adapter *a);   /* engines + interrupt thread */
void os_adapter_destroy(struct os_adapter *a);
struct hw_adapter *os_adapter_hw(struct os_adapter *a);
pid_t os_adapter_irq_tid(const struct os_adapter *a);
bool os_adapter_native(const struct os_adapter *a);   /* native fences supported and enabled */

/* ---- fences ---- */

enum os_fence_type { OS_FENCE_MONITORED, OS_FENCE_NATIVE };
#define OS_FENCE_SHARED 0x1u           /* shareable: pages of its own, a global handle */
/* A monitored fence's waiting and signaling behaviour (seed
 * context-monitoring-legacy-monitored-fence, "Monitored fence creation": "A
 * monitored fence object is created along with the following attributes:
 * Initial value; Flags (specifying its waiting and signaling behavior)"),
 * as D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS names them.  Each is enforced where
 * the kernel sees the command: os_queue_submit (and os_queue_submit_buffer)
 * refuse a command it forbids with -EPERM, os_queue_signal_from_gpu too.
 *   NO_SIGNAL      NoSignal: "can only submit wait commands for it": no GPU
 *                  SIGNAL, no software signal packet (a CPU signal is not a
 *                  submitted command: allowed)
 *   NO_WAIT        NoWait: "can only submit signal commands for it": no GPU
 *                  WAIT (CPU waits allowed); not with NO_SIGNAL (-EINVAL)
 *   NO_GPU_ACCESS  NoGPUAccess: "not mapped into the GPU virtual address
 *                  space.  Only packet-based signal/wait operations are
 *                  supported ... always stored as a 64-bit value (regardless
 *                  of adapter caps)": no GPU address (os_fence_gpu_va 0), no
 *                  GPU SIGNAL (the software signal packet signals it), GPU
 *                  WAITs held on the CPU as every monitored wait is, and on
 *                  a 32-bit GPU no UINT_MAX/2 range rule and no wraparound
 * Monitored fences only: a fence that would be native refuses them (-EINVAL). */
#define OS_FENCE_NO_SIGNAL     0x8u
#define OS_FENCE_NO_WAIT       0x10u
#define OS_FENCE_NO_GPU_ACCESS 0x20u
#define OS_FENCE_BEHAVIOUR (OS_FENCE_NO_SIGNAL | OS_FENCE_NO_WAIT | OS_FENCE_NO_GPU_ACCESS)

/* Create a fence.  A native fence on an adapter without native support is
 * created as a monitored fence, as the OS does (os_fence_is_native tells).
 * 0 / -EINVAL (behaviour flags on a native fence, or NO_SIGNAL with NO_WAIT)
 * / -ENOSPC (table full) / -ENOMEM. */
int os_fence_create(struct os_adapter *a, enum os_fence_type type, uint64_t initial,
		    unsigned flags, struct os_fence **out);
/* Destroy.  First the engines finish the queue runs they are in (a signal of
 * f the application saw land may still be reading MonitoredValue) and the
 * interrupt thread handles every interrupt raised before the call (an
 * interrupt the GPU raised for f before f was destroyed is the OS's to
 * retire, never a bug check); then the handle stops resolving (a
 * payload naming it from then on is the KMD naming a destroyed fence: a bug
 * check); storage is freed after an RCU grace period (os_adapter_quiesce
 * waits for that).  0; -EBUSY: waits were still registered on f (event and
 * multi waits, GPU waits held on the CPU): each was released as abandoned (its
 * event set, a held buffer let go: nobody waits forever on a fence that is
 * gone) and counted in os_stats.abandoned.  A blocking wait should not be
 * pending on f (if one is, it returns -EIDRM); nor may a command still queued
 * for the GPU name f. */
int os_fence_destroy(struct os_fence *f);
/* Wait until the interrupt thread has handled every interrupt raised before
 * the call and every destroyed fence's storage has been freed.  Any thread
 * but the interrupt thread; blocking. */
void os_adapter_quiesce(struct os_adapter *a);
/* Only the first half: wait until the interrupt thread has handled every
 * interrupt raised before the call (no RCU grace period).  Any thread but
 * the interrupt thread; blocking. */
void os_adapter_irq_sync(struct os_adapter *a);
bool os_fence_is_native(const struct os_fence *f);
/* A mapping of f's CurrentValue or MonitoredValue for `who`, with the seed's
 * rights (hw.h, "Access rights"): what D3DKMTCreateNativeFence hands user
 * mode is a read-only mapping of CurrentValue, and user mode gets none of
 * MonitoredValue; the kernel both, read-write; the GPU CurrentValue
 * read-write, MonitoredValue read-only.  0 / -EACCES (counted in the
 * adapter's hw_adapter_access_faults).  Any thread. */
int os_fence_map(struct os_fence *f, enum hw_agent who, enum hw_fence_value which, struct hw_fence_map *out);
uint64_t os_fence_handle(const struct os_fence *f);          /* global handle */
struct hw_fence *os_fence_hw(struct os_fence *f);            /* for GPU commands */
/* Seed context-monitoring-legacy-monitored-fence, "Monitored fence
 * creation": besides hSyncObject (os_fence_handle), the kernel returns
 * FenceValueCPUVirtualAddress, a mapping of the fence value the CPU may
 * only read (a write faults: the CPU signals through os_fence_signal_cpu),
 * and FenceValueGPUVirtualAddress, the GPU VA (in the process's GPU VA
 * space, hw.h "GPU virtual addresses") of the read-write mapping the GPU
 * writes through (hw_fence.fv_cpu_va, cv_va).  On an IoMmu adapter
 * (hw_caps.iommu) the CPU address is mapped read-write and is the one the
 * GPU uses; the GPU address is 0, unused (a NO_GPU_ACCESS fence has none
 * either).  A 32-bit GPU's value there is
 * its raw 32 bits (os_fence_value reconstructs).  A cross-adapter
 * instance's CurrentValue is the group's (cross.c): no mapping is modelled
 * for it (NULL, 0).  Any thread; never block. */
const _Atomic uint64_t *os_fence_cpu_va(const struct os_fence *f);
uint64_t os_fence_gpu_va(const struct os_fence *f);

/* The fence's value as the CPU sees it (64-bit, reconstructed on 32-bit GPUs). */
uint64_t os_fence_value(struct os_fence *f);

/* CPU signal: write v and release every waiter v satisfies (seed legacy
 * monitored fence, "CPU signal": the value "becomes immediately visible to
 * any user-mode reader and immediately unwaits any satisfied waits").  When
 * the call returns, every event of an event or multi wait registered before
 * the call that v satisfies is set (an lf_event_wait with a zero timeout
 * right after sees it), and every blocking waiter it satisfies has been
 * released (it may still be on its way back from its futex).  A later
 * rewind (a lower value signaled next) takes none of that back.  GPU waits:
 * native queues re-evaluate their run lists; legacy command buffers held on
 * the CPU for v are released to the interrupt thread, which submits them.
 * 0 / -ERANGE (32-bit GPU: more than UINT32_MAX/2 from the last signaled value). */
int os_fence_signal_cpu(struct os_fence *f, uint64_t v);
/* D3DKMTSignalSynchronizationObjectFromCpu of several fences of one adapter
 * at once: os_fence_signal_cpu of f[i] to v[i] for each, with one
 * DxgkDdiUpdateCurrentValuesFromCpu call for all the native ones (seed,
 * "Instructing KMD to update batches of values"; the DDI log's count says
 * how many).  0; -EINVAL (n == 0, or a fence of another adapter: nothing
 * signaled); -ERANGE (a value out of range: nothing signaled). */
int os_fence_signal_cpu_multi(struct os_fence *const *f, const uint64_t *v, size_t n);

/* Blocking CPU wait until value >= v.  0 when reached; -ETIMEDOUT; -ERANGE
 * (32-bit GPU, v too far ahead); -EIDRM (the fence was destroyed under the
 * wait: misuse, but never a hang).  timeout_ns < 0: forever.  A wait that
 * times out with the value reached first lets the release path finish: it
 * waits until the engines' runs in progress end and the interrupt thread has
 * handled every interrupt raised by then (bounded by those threads, never by
 * the application).  Released by then, it returns 0, late
 * (os_stats.late_wakeups: a starved engine or interrupt thread, not a
 * protocol error); still not released, it is a lost wake-up
 * (os_stats.lost_wakeups, and returns 0).  A value that lands after the
 * timeout, before the waiter gave up its place, makes it a plain timeout
 * (or a release, if the release got there first). */
int os_fence_wait_cpu(struct os_fence *f, uint64_t v, int64_t timeout_ns);

/* Event-style wait: ev is set once the value reaches v (at once if it has).
 * Any number of events per fence.  0 / -ERANGE. */
int os_fence_wait_event(struct os_fence *f, uint64_t v, struct lf_event *ev);

/* One event for many (fence, value) pairs: set when all (all=true) or any is
 * reached (or a fence destroyed under the wait).  ev is set once, by the pair
 * that completes the wait; from then on the OS never touches it, so the
 * caller may reuse or free it as soon as it sees it set (an any wait's other
 * pairs stay registered until reached or abandoned, and touch only the
 * wait's own record).  At most OS_WAIT_MULTI_MAX pairs (WaitForMultipleObjects's
 * MAXIMUM_WAIT_OBJECTS).  0; -EINVAL (n == 0); -E2BIG (n > OS_WAIT_MULTI_MAX:
 * nothing is registered); -ERANGE (32-bit GPU, a value too far ahead). */
#define OS_WAIT_MULTI_MAX 64
int os_wait_multi(struct os_fence *const *f, const uint64_t *v, size_t n, bool all, struct lf_event *ev);

/* Tests only: when set, os_fence_wait_cpu calls it after its wait timed out
 * and it read the value, before it gives up its place in the waiter set:
 * the moment in which a value landing just after the timeout lands.  Set
 * before the waiting threads start; NULL in every production path. */
extern void (*os_test_wait_timeout_hook)(struct os_fence *f, uint64_t v);
/* Tests only, the interrupt thread's stop against os_adapter_irq_sync:
 * os_test_irq_sync_hook is called on the syncing thread once it announced
 * itself (stage 0) and once it saw no stop and is about to raise its record
 * (stage 1); os_test_irq_drain_hook on the interrupt thread after each round
 * of its final drain (the stop seen), before it decides to exit.  NULL in
 * every production path. */
extern void (*os_test_irq_sync_hook)(struct os_adapter *a, int stage);
extern void (*os_test_irq_drain_hook)(struct os_adapter *a);

/* Tests only: when set, every registration of a CPU waiter (or a GPU wait
 * held on the CPU) for value v calls it twice: OS_TEST_REGISTER_ADD after
 * its first look at the fence (which gave its write number) and before its
 * add lowers MonitoredValue, and OS_TEST_REGISTER_RESAMPLE after the add and
 * before its resample.  Set before the threads that use the fence start;
 * NULL in every production path. */
enum os_test_register_at { OS_TEST_REGISTER_ADD, OS_TEST_REGISTER_RESAMPLE };
extern void (*os_test_register_hook)(struct os_fence *f, uint64_t v, enum os_test_register_at at);
/* Tests only: os_test_update_hook is called inside a CPU waiter's
 * DxgkDdiUpdateMonitoredValues for value v (its node added, MonitoredValue
 * lowered, the DDI not yet logged), on the waiter's thread with f's
 * interrupt lock held; os_test_isr_fence_hook on the interrupt thread each
 * time it takes a fence's interrupt lock to handle it.  Set before the threads that
 * use the fence start; NULL in every production path. */
extern void (*os_test_update_hook)(struct os_fence *f, uint64_t v);
extern void (*os_test_isr_fence_hook)(struct os_fence *f);

/* ---- queues (kernel-mode view of a HW queue) ---- */

/* A queue on engine `engine`.  Native GPU waits go to the hardware; a WAIT on a
 * monitored fence is held by the OS on the CPU, with everything after it.
 * 0 and *out; -ENOSPC (OS_MAX_QUEUES on the adapter) or hw_queue_create's
 * -EINVAL / -ENOSPC, *out untouched.  One creator at a time per adapter. */
int os_queue_create(struct os_adapter *a, unsigned engine, size_t ring_slots, struct os_queue **out);
/* Submit a command buffer.  The queue's single submitting thread. 0 / -EINVAL / -ENOMEM /
 * -EPERM (a SIGNAL or WAIT its fence's creation flags forbid, OS_FENCE_NO_*).
 * Never waits for ring space: what the ring cannot take now is held and
 * submitted by the interrupt thread as the engine drains (a suspended queue:
 * once it is resumed, os_queue_resumed). */
int os_queue_submit(struct os_queue *q, const struct hw_cmd *cmds, size_t n);
/* SignalSynchronizationObjectFromGpuCb (seed legacy monitored fence): queue a
 * software signal packet to q's GPU context: when the engine reaches it (all
 * q's earlier work executed, CPU-held waits before it satisfied), the OS's
 * interrupt thread writes v to the monitored fence f and releases its
 * waiters.  For engines that cannot write a monitored fence through its VA
 * (hw_caps.no_fence_va_engines: os_queue_submit refuses their SIGNALs of
 * monitored fences); any queue may use it.  The submitting thread.
 * 0 / -EINVAL (f native or of another adapter) / -EPERM (f created with
 * OS_FENCE_NO_SIGNAL) / -ENOMEM. */
int os_queue_signal_from_gpu(struct os_queue *q, struct os_fence *f, uint64_t v);
/* The queue is back on the hardware's run list (context resume): what it
 * holds for lack of ring space is fed again.  Any thread. */
void os_queue_resumed(struct os_queue *q);
/* Command buffers held on the CPU right now: behind a monitored-fence wait,
 * or for ring space. */
size_t os_queue_held(struct os_queue *q);
/* The queue's owner destroyed it: every held command buffer is dropped now
 * (a held WAIT leaves its fence's waiter set), and every later submission,
 * signal packet or preemption of q is refused (-ENODEV), so nothing of q
 * names a fence any more: the fences its buffers named may be destroyed
 * after this returns.  Any thread but the interrupt thread (takes q->lock);
 * the fences of held WAITs not yet released must still be alive. */
void os_queue_retire(struct os_queue *q);

/* ---- resubmission of preempted kernel-mode buffers (queue.c) ----
 * Seed gpu-preemption: "the Dxgkrnl scheduler will resubmit preempted paging
 * commands with the same fence IDs that were originally used for them, and
 * the paging commands will be scheduled before any other commands on that
 * engine.  Nonpaging commands will be resubmitted with newly assigned fence
 * IDs."
 * os_queue_submit_buffer: os_queue_submit of one DMA buffer that ends with
 * its submission fence ID (HW_CMD_FENCE_ID; per queue, from 1), a paging
 * buffer (what DxgkDdiBuildPagingBuffer builds) or not; *id gets it.
 * os_queue_preempt: DxgkDdiPreemptCommand with resubmission: the engine
 * stops at its granularity's next boundary and hands back what it had not
 * started (hw_queue_flush); the OS puts it back: paging buffers first (the
 * engine runs them before any other queue) with their IDs, then the others
 * with new IDs, then what continues on the CPU.  Every buffer completes once.
 * Takes q's lock (its submitter waits).  0; -EAGAIN (q was not running, or
 * left first: nothing to resubmit); -ETIMEDOUT (no boundary in time: nothing
 * done); -ENOMEM.  os_queue_fence_log: the IDs completed, in order. */
int os_queue_submit_buffer(struct os_queue *q, const struct hw_cmd *cmds, size_t n, bool paging, uint64_t *id);
int os_queue_preempt(struct os_queue *q, int64_t timeout_ns);
/* Lazy context switching (seed gpu-preemption, step 4): DxgkDdiSubmitCommand
 * of a zero-length DMA buffer with Flags.ContextSwitch = 1 on q's engine:
 * no work runs; the engine switches from the loaded context to the null
 * context, saving it to its context allocation (hw.h, hw_engine_context).
 * It completes like any buffer: its submission fence ID (*id) is logged
 * (os_queue_fence_log).  The queue's submitting thread; never waits for
 * ring space.  0 / -ENOMEM. */
int os_queue_context_switch(struct os_queue *q, uint64_t *id);
size_t os_queue_fence_log(struct os_queue *q, uint64_t *out, size_t max);
/* ---- context allocations (ctxalloc.c) ----
 * DxgkCbCreateContextAllocation / DxgkCbDestroyContextAllocation analogs
 * (seed gpu-preemption, steps 5-6; hw.h "context allocation"): where a HW
 * queue's context is saved when it is preempted or switched out and
 * restored from.  os_ctx_alloc_create: creates one of `bytes` (its save and
 * restore cost scale with it) for q, before q's first command; 0 / -EINVAL /
 * -ENOMEM.  os_ctx_alloc_destroy: q is retired; *c destroyed and NULL (no-op
 * when NULL already).  Both logged in the DDI log; the queue's creator /
 * destroyer; never block.  os_queue_ctx_alloc: a kernel-mode queue's (NULL
 * once destroyed). */
int os_ctx_alloc_create(struct os_adapter *a, struct hw_queue *q, size_t bytes, struct hw_ctx_alloc **out);
void os_ctx_alloc_destroy(struct os_adapter *a, struct hw_ctx_alloc **c);
struct hw_ctx_alloc *os_queue_ctx_alloc(struct os_queue *q);

/* ---- the video memory manager (vidmm.c) ----
 * Seed gpu-preemption, step 7 (hw.h "memory segments and context images").
 * With caps.ctx_local_slots, os_ctx_alloc_create makes each context
 * allocation resident at once: a local-memory slot (evicting the least
 * recently used allocation whose context is not on the GPU when none is
 * free) initialized by a paging buffer with InitContextResource.  The moves,
 * each by a paging buffer on the paging queue (the system context, engine 0)
 * that the caller waits for, content kept:
 *   os_ctx_alloc_evict       to the system-memory aperture; its queue stays
 *                            off the run list.  0 / -EBUSY (its context is on
 *                            the GPU, or its queue suspended) / -ENOSPC
 *   os_ctx_alloc_make_resident  back to local memory (at whatever address
 *                            is free), its queue back on the run list; a
 *                            kernel-mode queue's submission does it.  0 / -ENOSPC
 *   os_ctx_alloc_relocate    to another free local address.  0 / -ENOSPC / -EBUSY
 * All -EINVAL without the segment or for an unknown allocation.  Any thread
 * but the engines' and the interrupt thread; blocking (one lock, the paging
 * fence).  A device context allocation is never evicted while its device
 * lives.  os_vidmm_paging_queue: the system context's HW queue (NULL: no segment). */
struct os_vidmm_stats {
	uint64_t inits;           /* InitContextResource paging buffers */
	uint64_t evictions, brought_back, relocations;
	uint64_t paging_buffers;  /* all paging buffers run */
};
int os_ctx_alloc_evict(struct os_adapter *a, struct hw_ctx_alloc *c);
int os_ctx_alloc_make_resident(struct os_adapter *a, struct hw_ctx_alloc *c);
int os_ctx_alloc_relocate(struct os_adapter *a, struct hw_ctx_alloc *c);
void os_vidmm_stats(struct os_adapter *a, struct os_vidmm_stats *out);
struct hw_queue *os_vidmm_paging_queue(struct os_adapter *a);

/* ---- DMA buffers that name allocations (dma.c) ----
 * Seed gpu-preemption, "Memory mapping considerations".  With
 * caps.data_words, data allocations live in GPU memory the OS may move
 * (os_alloc_move: new words, content copied, the old words left as they
 * are); a DMA buffer names them by its allocation list, and the OS patches
 * their addresses into its commands at the patch locations (DxgkDdiPatch):
 * physical addresses, or with caps.no_dma_patching virtual ones, which the
 * engines translate and a move does not change.  A context binds an
 * allocation to a slot (HW_CMD_BIND, patched) and writes through it
 * (HW_CMD_STORE); a binding is context state and survives the end of a
 * packet.
 *   A split DMA buffer (one render command in several packets, between
 *   which "the scheduler can execute render packets from a different
 *   context", and memory may move) has "a patch location list for split
 *   DMA buffers": one per packet.  os_queue_submit_split_packet patches
 *   packet k from its own list when it is submitted (every packet but the
 *   last ends a split packet, HW_CMD_SPLIT_END) and submits it (os_queue_submit).
 *   Binding leak detection (os_config.binding_leak_detection): "walks
 *   through the patch location list and rejects packets that don't unbind
 *   or that don't reprogram allocations for each split packet": every slot
 *   a packet leaves bound must be reprogrammed (a patched BIND) by the
 *   next packet before it is used; a packet that neither unbinds (an
 *   unpatched BIND of 0) nor has it reprogrammed is rejected (-EPERM, the
 *   whole buffer, before anything runs).  caps.no_dma_patching opts out.
 *   Linked display adapters (engines stand for the linked GPUs, each with
 *   its own copy of an allocation and its own page table):
 *   os_lda_broadcast_split_packet patches packet k once, with the virtual
 *   address every GPU resolves to its own copy, and broadcasts the one
 *   buffer (an INDIRECT entry of the same memory) to each GPU's queue; its
 *   content never changes afterwards ("A preemption-aware driver must not
 *   change the content of a split DMA buffer when it's broadcast").
 *   *shared: the one copy (to check that).
 * os_alloc_create: words (1..512) with a copy on each engine of `gpus`.
 * os_alloc_read: word i of GPU gpu's copy.  Any thread; one lock.
 * Returns 0 / -EINVAL / -ENOSPC / -ENOMEM / -EPERM (leak) / -EBUSY (the
 * queue holds buffers on the CPU: a broadcast goes straight to the ring). */
struct os_alloc;
struct os_patch_location {            /* D3DDDI_PATCHLOCATIONLIST */
	uint32_t AllocationIndex;      /* in the buffer's allocation list */
	uint32_t PatchOffset;          /* the command (index in the packet) whose arg gets the address added */
};
struct os_split_packet {
	const struct hw_cmd *cmds;
	size_t n;
	const struct os_patch_location *patches;
	size_t npatches;
};
struct os_split_dma_buffer {
	struct os_alloc *const *allocs;
	size_t nallocs;
	const struct os_split_packet *packets;
	size_t npackets;
};
int os_alloc_create(struct os_adapter *a, uint32_t words, uint32_t gpus, struct os_alloc **out);
int os_alloc_move(struct os_alloc *al);
uint64_t os_alloc_read(struct os_alloc *al, unsigned gpu, uint32_t i);
/* Binding leak detection alone: 0, or -EPERM with the first leaking packet in *bad. */
int os_split_verify(struct os_adapter *a, const struct os_split_dma_buffer *b, size_t *bad);
int os_queue_submit_split_packet(struct os_queue *q, const struct os_split_dma_buffer *b, size_t k);
int os_lda_broadcast_split_packet(struct os_queue *const *qs, size_t nq, const struct os_split_dma_buffer *b,
				  size_t k, const struct hw_cmd **shared);
uint64_t os_dma_checksum(const struct hw_cmd *buf, size_t n);

/* Buffers put back by os_queue_preempt so far (paging and not). */
uint64_t os_queue_resubmitted(struct os_queue *q, uint64_t *paging);

/* ---- counters ---- */

struct os_stats {
	/* interrupt thread */
	uint64_t interrupts;        /* GPU interrupt records handled */
	uint64_t spurious;          /* ... that released no waiter */
	uint64_t soft;              /* OS-queued deferred work (CPU signals) */
	uint64_t sw_signal_packets; /* software signal packets queued (os_queue_signal_from_gpu) */
	uint64_t sw_signals;        /* ... reached by their GPU context and written by the interrupt thread */
	uint64_t released;          /* waiters released by the interrupt thread (CPU waits and held GPU waits) */
	uint64_t fences_scanned;    /* fences looked at by the handler */
	uint64_t bugchecks;         /* payload named a fence that no longer exists */
	uint64_t held_released;     /* CPU-held command buffers submitted */
	uint64_t held_waits;        /* GPU WAITs on monitored fences the OS handled on the CPU (held, or
	                             * found satisfied when it reached them): one per legacy queue Wait */
	uint64_t isr_busy_ns;       /* the interrupt thread's CPU time (user + kernel) */
	uint64_t irq_idle_ns;       /* the rest of its lifetime (wall clock) */
	uint64_t irq_wakeups;       /* times the thread woke from a park */
	/* CPU waiters (merged over threads) */
	uint64_t waits;             /* os_fence_wait_cpu calls */
	uint64_t waits_fast;        /* ... satisfied without registering */
	uint64_t waits_blocked;     /* ... that slept */
	uint64_t self_released;     /* ... completed by their own resample */
	uint64_t timeouts;          /* ... that timed out with the value not reached */
	uint64_t lost_wakeups;      /* ... that timed out with the value reached and, once every
	                             * interrupt raised by then was handled, still not released */
	uint64_t late_wakeups;      /* ... that timed out with the value reached, released by that settle */
	uint64_t signal_released;   /* waiters released by CPU signals themselves (merged over threads) */
	uint64_t abandoned;         /* waits released because their fence was destroyed under them */
	/* GPU (from hw) */
	uint64_t gpu_signals;
	uint64_t gpu_interrupts;
	/* native fence log buffers (os/logbuf.c) */
	uint64_t log_entries;       /* log entries read */
	uint64_t log_updates;       /* HW queues named in UpdateNativeFenceLogs calls (each with new entries) */
	uint64_t log_overruns;      /* reads that found unread entries overwritten */
	uint64_t log_fallbacks;     /* optimized interrupts that fell back to reading every fence */
	uint64_t log_released;      /* waiters released against logged values */
	uint64_t log_ts_zero;       /* entries with a zero FenceEndGpuTimestamp (accepted) */
	uint64_t log_ts_repeated;   /* ... equal to the previous one (accepted) */
	uint64_t log_ts_backwards;  /* ... less than the previous one (reported) */
	uint64_t log_bad_entries;   /* entries whose operation is not the log's (never written / torn) */
	uint64_t log_bad_handles;   /* optimized payloads naming a queue without logs */
	uint64_t log_recreates;     /* log buffers destroyed and recreated */
	uint64_t log_unflushed;     /* entries read past what the last UpdateNativeFenceLogs flushed (must be 0) */
	uint64_t log_signalers;     /* fence-array interrupts whose signaling HW queue a parent-device scan found */
};
void os_adapter_stats(struct os_adapter *a, struct os_stats *out);

/* ==== native fence log buffers, the OS side (gpu-model/os/logbuf.c) ====
 *
 * Seed native-gpu-fence, "Native fence log buffer design".  Every user-mode
 * HW queue gets two log buffers (waits, signals) when it is created
 * (os_log_attach, from os_hwqueue_create; kernel-mode queues get none), each
 * set on the hardware queue with the DxgkDdiSetNativeFenceLogBuffer analog,
 * again whenever the OS recreates one (os_hwqueue_recreate_logs).  The OS
 * keeps, per log, the position it read up to (its cached FirstFreeEntryIndex
 * and WraparoundCount) and the last GPU timestamp.
 *
 * Each log has three mappings (seed, "Log buffer mechanism"): the OS's CPU
 * VA, LogBufferGpuVa in the process's GPU VA space (the engine's LOG writes
 * through it) and LogBufferSystemProcessGpuVa, the CMP's (hw_log.gpu_va,
 * sys_va; gpu-model/hw/va.c).
 *
 * Reading a log: load the header; no new entries: done.  Else call
 * UpdateNativeFenceLogs for the queue (hw_log_update, logged in the DDI log
 * as OS_DDI_UPDATE_NATIVE_FENCE_LOGS; entries read past the position it
 * flushed are counted as log_unflushed), then read the entries
 * and re-read the header: a log's worth or more written past the cached
 * position means the GPU may have overwritten entries not yet read (it
 * writes an entry before it moves the header, so a full log's oldest entry
 * may be under rewrite): an overrun, "permitted" by the seed: counted, the position jumps to the header's, and a reader
 * that releases waiters falls back to reading every native fence.  Timestamps:
 * a zero or repeated FenceEndGpuTimestamp is accepted, a backwards one is
 * counted and reported on stderr (once per adapter).
 *
 * Which logs an interrupt makes the OS read: an optimized payload, the named
 * queues' (a NULL handle: every queue of the engine); a fence array (current
 * hardware, seed "Future hardware requirements"), every queue of each named
 * fence's parent device (the device whose os_device_track_fence took it),
 * for the timestamps and to note which queue did the signal
 * (os_logs_last_signaler); a fence of no device or a NULL array, the
 * interrupting engine's queues.
 *
 *   call                    who                                           blocks?
 *   os_log_attach           os_hwqueue_create (under the ums lock)        no
 *   os_log_read             any registered thread; one log mutex           the log mutex
 *   os_hwqueue_recreate_logs  any thread (takes the ums lock)            until the engine leaves the queue
 */
struct os_log;
struct hw_queue;
/* Give q two log buffers of `bytes` each and register q's kernel handle.  0 or -EINVAL (size). */
int os_log_attach(struct os_adapter *a, struct hw_queue *q, size_t bytes, struct os_log **out);
/* Read both logs' new entries for their timestamps (never releases waiters:
 * that is the interrupt thread's, os_logs_interrupt).  Returns 0; *overrun
 * (may be NULL) says whether a log overran.  Counts go to os_stats. */
size_t os_log_read(struct os_log *l, bool *overrun);
/* os_log_read on every log of a's user-mode queues (a timeline's last
 * entries, which no interrupt made the OS read).  Any registered thread. */
void os_logs_read_every(struct os_adapter *a);
/* The log of the queue with kernel handle h (hw_queue_handle), or NULL. */
struct os_log *os_log_by_handle(struct os_adapter *a, uint64_t h);
/* Buffer size now in use (bytes). */
size_t os_log_bytes(const struct os_log *l);
/* The log buffer of type t now set on the queue (tests, timelines). */
struct hw_log *os_log_hw(struct os_log *l, enum hw_log_type t);
/* Entries of l's log t written and not read yet.  Any thread (the log mutex). */
uint64_t os_log_unread(struct os_log *l, enum hw_log_type t);
/* The kernel handle of the HW queue the last parent-device scan found had
 * done the signal an interrupt named (0: none yet).  Any thread. */
uint64_t os_logs_last_signaler(struct os_adapter *a);

/* ==== the timeline trace (gpu-model/os/trace.c) ====
 *
 * While tracing, the OS keeps records of what a timeline shows (GPUView's
 * view of the seed's ETW events): its interrupt handling (ISR: the payload
 * and the logs it names, DPC: releasing waiters, resampling, held buffers),
 * the interrupts the engines raised, every native fence log entry it reads
 * (GPU timestamps, on the GPU's counter: hw_clock_calibration converts),
 * the entries an overrun made it skip, and what the runtime adds: its
 * FENCE_*_QUEUED events and CPU waits.  Records go into one bounded array
 * (a slot taken by an atomic increment, published with a release store);
 * records past its capacity are dropped and counted.  Tracing once started
 * stays on until the adapter is destroyed.  With tracing, user-mode HW
 * queues get larger log buffers (os_ums_trace_start: seed, "the OS may
 * allocate a larger log buffer when tracing is enabled").
 *
 *   call              who                                         blocks?
 *   os_trace_start    one setup thread, before the records it wants  no (allocates)
 *   os_trace_add      any thread (wait-free; drops when full)     no
 *   os_tracing        any thread                                  no
 *   os_trace_take     any thread, once the writers are idle        no
 *                     (rt_stack_settle): a record being written is skipped
 */
enum os_trace_kind {
	OS_TRACE_ISR,              /* interrupt thread, t0..t1 (CPU ns); n = hw_irq_kind, engine */
	OS_TRACE_DPC,              /* interrupt thread, t0..t1 (CPU ns); n = waiters released; fence/value: the
				    * signal its interrupt carried (0: none) */
	OS_TRACE_IRQ_RAISED,       /* engine raised an interrupt at t0 (CPU ns); fence/value: what it signaled */
	OS_TRACE_LOG_SIGNAL,       /* SIGNAL_EXECUTED entry of queue: fence, value, t1 = FenceEndGpuTimestamp (GPU) */
	OS_TRACE_LOG_WAIT,         /* WAIT_UNBLOCKED: t0 = FenceObservedGpuTimestamp, t1 = FenceEndGpuTimestamp (GPU) */
	OS_TRACE_LOG_LOST,         /* an overrun skipped n entries of queue's log (value = enum hw_log_type), at t0 (CPU ns) */
	OS_TRACE_SIGNAL_QUEUED,    /* runtime: FENCE_SIGNAL_QUEUED on queue by thread tid at t0 (CPU ns) */
	OS_TRACE_WAIT_QUEUED,      /* runtime: FENCE_WAIT_QUEUED */
	OS_TRACE_CPU_WAIT,         /* runtime: thread tid CPU-waited for fence >= value, t0..t1 (CPU ns); n = 0 ok, else -errno */
	/* the engines' execution records (hw.h, "execution records"), the model's
	 * own: CPU ns, in the order of enum hw_trace_kind */
	OS_TRACE_GPU_RUN,          /* queue ran on engine t0..t1; value = commands executed */
	OS_TRACE_GPU_WORK,         /* a WORK (slice) of queue t0..t1; n = its list's name tag (rt); value 1: stopped early */
	OS_TRACE_GPU_SIGNAL,       /* SIGNAL of fence to value on queue, executed t0..t1 */
	OS_TRACE_GPU_WAIT,         /* GPU WAIT of queue for fence >= value: reached t0, went past t1 */
	OS_TRACE_GPU_PREEMPT,      /* queue preempted at t0; value = boundary level */
	OS_TRACE_GPU_CTX_SWITCH,   /* a ContextSwitch packet of queue at t0 */
	OS_TRACE_HELD_WAIT,        /* legacy GPU wait held on the CPU (queue.c): queue, fence >= value, reached t0,
				    * released t1 by thread tid (the DPC's, or the submitter's when it did not block) */
	OS_TRACE_SUBMIT,           /* runtime: thread tid submitted a command buffer of n commands to queue, t0..t1;
				    * value: its progress value */
	OS_TRACE_SCHED_SUBMIT,     /* the OS scheduler thread (tid) handed a kernel-mode buffer of n commands to
				    * queue's ring (or held it), t0..t1 (sched.c) */
	OS_TRACE_KINDS
};
struct os_trace_rec {
	uint32_t kind;             /* enum os_trace_kind */
	uint32_t engine;
	pid_t tid;                 /* the CPU thread (0 for GPU records) */
	uint64_t queue;            /* HW queue kernel handle (hw_queue_handle); 0: none */
	uint64_t fence, value;     /* global handle and value */
	uint64_t t0, t1;
	uint64_t n;
};
#define OS_TRACE_RECORDS_DEFAULT (1u << 18)
/* Start keeping up to `records` records (0: OS_TRACE_RECORDS_DEFAULT).  0, -EALREADY, -ENOMEM. */
int os_trace_start(struct os_adapter *a, size_t records);
bool os_tracing(const struct os_adapter *a);
/* Keep *r (copied); counted as dropped when the array is full.  No-op when not tracing. */
void os_trace_add(struct os_adapter *a, const struct os_trace_rec *r);
/* Copy up to max records, in the order their slots were taken; *dropped
 * (may be NULL) gets the records not copied (full, still being written, past max). */
size_t os_trace_take(struct os_adapter *a, struct os_trace_rec *out, size_t max, uint64_t *dropped);
/* Records kept so far (an upper bound for os_trace_take). */
size_t os_trace_count(const struct os_adapter *a);

/* ==== shared fences and cross-adapter fences (gpu-model/os/shared.c, cross.c) ====
 *
 * Shared fences (seed native-gpu-fence, "Global and local handles for shared
 * fences").  A shared fence has one global handle (the one the KMD reports in
 * interrupt payloads) and one local handle per process that opened it.  A
 * process is an os_process with its own local handle table (lockfree/htab.h).
 * The DDI calls are those of the seed's walk-through:
 *   A creates   -> DxgkDdiCreateNativeFence(global), DxgkDdiOpenNativeFence(local A)
 *   B opens     -> DxgkDdiOpenNativeFence(local B)
 *   A closes    -> DxgkDdiCloseNativeFence(local A)            (the global stays)
 *   B closes    -> DxgkDdiCloseNativeFence(local B), DxgkDdiDestroyNativeFence(global)
 * The native fence DDIs are called for native fences only (a monitored fence
 * is the OS's own business); every native fence, shared or not, gets Create
 * and Destroy.  After the last close the global handle stops resolving: an
 * interrupt payload that names it is a bug check (counted, never a use of
 * freed memory).
 *
 * Cross-adapter fences (seed, "Cross-adapter native fences").  Created with
 * OS_FENCE_CROSS_ADAPTER on one adapter and opened on others with
 * os_fence_open_cross: every adapter gets an os_fence of its own (its own
 * global handle, MonitoredValue, waiter set) and all share one CurrentValue
 * in system memory.  A native instance's MonitoredValue is 0 for its whole
 * lifetime, so every GPU signal interrupts; the interrupt thread that handles
 * a signal propagates the value it wrote (not the CurrentValue read later: a
 * rewind in between loses no wait on another adapter) to the other adapters: DxgkDdiUpdateCurrentValuesFromCpu
 * (NotificationOnly=TRUE) on a native instance (its engines re-evaluate their
 * run lists: GPU waits go on), and the CPU waiters and CPU-held command
 * buffers of that adapter are released by its own interrupt thread.  A CPU
 * signal of a cross-adapter fence is propagated the same way.  An adapter
 * without native support opens the fence as a monitored fence; a monitored
 * cross-adapter fence opens as a native fence on a native adapter.  The
 * waiter set of a cross-adapter instance publishes into a word of its own,
 * never into the MonitoredValue.
 *
 * Threads and calls:
 *   os_process_create/destroy                 any thread; destroy not concurrently with the process's other calls
 *   os_shared_fence_create/open/close         any thread (open and close of one fence may race: refcounted)
 *   os_process_fence                          any thread; the fence stays valid until its local handle is closed
 *   os_fence_open_cross                       any thread (not concurrently with destroying the fence it opens)
 *   os_adapter_ddi_log / _ddi_count / _cross_stats   any thread; never block
 * Close every local handle and every cross-adapter instance before destroying
 * an adapter (os_adapter_destroy detaches stray cross-adapter instances).
 */

#define OS_FENCE_CROSS_ADAPTER 0x2u    /* os_fence_create: a cross-adapter fence (shareable too) */
#define OS_FENCE_LOCAL_MEMORY  0x4u    /* a D3DDDI_NATIVEFENCE_TYPE other than DEFAULT (values in GPU
				          local memory, os_fence_create: -ENOTSUP without the OS's
				          SupportIntraGpuFenceType): a cross-adapter fence with it fails (-EINVAL) */
/* Deliberately broken cross-adapter fences, for the tests that prove they can fail. */
#define OS_FENCE_FAULT_NO_PROPAGATE      0x100u  /* interrupt threads never pass a signal on */
#define OS_FENCE_FAULT_MV_FOLLOWS_WAITERS 0x200u /* the waiter set publishes into MV (not held at 0) */
#define OS_FENCE_FAULT_PROPAGATE_CURRENT 0x400u  /* pass on the CurrentValue read later, not the value signaled */

/* Open cross-adapter fence f on adapter b as `type` (native on an adapter
 * without native support becomes monitored).  0; -EINVAL (f is not a
 * cross-adapter fence); -EEXIST (b has an instance already); -ENOSPC (more
 * than OS_CROSS_MAX_ADAPTERS); -EOPNOTSUPP (b writes only 32-bit values: a
 * shared 64-bit CurrentValue cannot be kept); -ENOMEM.  Destroy the instance
 * with os_fence_destroy; the shared CurrentValue lives until the last goes. */
#define OS_CROSS_MAX_ADAPTERS 8
int os_fence_open_cross(struct os_fence *f, struct os_adapter *b, enum os_fence_type type,
			struct os_fence **out);
bool os_fence_is_cross_adapter(const struct os_fence *f);

/* The DDI calls the OS makes on an adapter, as the tests see them. */
enum os_ddi {
	OS_DDI_CREATE_NATIVE_FENCE,     /* DxgkDdiCreateNativeFence: handle = global */
	OS_DDI_OPEN_NATIVE_FENCE,       /* DxgkDdiOpenNativeFence: handle = local, value = global */
	OS_DDI_CLOSE_NATIVE_FENCE,      /* DxgkDdiCloseNativeFence: handle = local, value = global */
	OS_DDI_DESTROY_NATIVE_FENCE,    /* DxgkDdiDestroyNativeFence: handle = global */
	OS_DDI_UPDATE_CV_FROM_CPU,      /* DxgkDdiUpdateCurrentValuesFromCpu(hFence, value): a CPU signal */
	OS_DDI_UPDATE_CV_NOTIFY_ONLY,   /* ... (NotificationOnly=TRUE): a propagated cross-adapter signal */
	OS_DDI_PREEMPT_COMMAND,         /* DxgkDdiPreemptCommand: handle = engine, value = the priority preempted for */
	OS_DDI_RESET_ENGINE,            /* DxgkDdiResetEngine (a TDR): handle = engine, value = 1 when it reset */
	OS_DDI_SUBMIT_CONTEXT_SWITCH,   /* DxgkDdiSubmitCommand of a zero-length buffer, Flags.ContextSwitch: handle = engine, value = its fence ID */
	OS_DDI_CREATE_CONTEXT_ALLOCATION,  /* DxgkCbCreateContextAllocation: handle = the allocation, value = its bytes */
	OS_DDI_DESTROY_CONTEXT_ALLOCATION, /* DxgkCbDestroyContextAllocation: handle = the allocation */
	OS_DDI_UPDATE_NATIVE_FENCE_LOGS,   /* DxgkDdiUpdateNativeFenceLogs: handle = the HW queue's kernel handle,
					      value = the log position (hw_log_pos) read before the call */
	/* DxgkDdiUpdateMonitoredValues (seed native-gpu-fence, "Monitored value":
	 * "When the OS's CPU wait conditions change, it calls KMD's
	 * DxgkDdiUpdateMonitoredValues"): handle = the first fence's global handle,
	 * value = its new MonitoredValue, count = fences updated by the one call
	 * (a scan's batch: "Instructing KMD to update batches of values") */
	OS_DDI_UPDATE_MONITORED_VALUES,
	OS_DDI_SET_NATIVE_FENCE_LOG_BUFFER, /* DxgkDdiSetNativeFenceLogBuffer: handle = HW queue (hw_queue_handle),
					       value = enum hw_log_type */
	OS_DDI_BUILD_PAGING_BUFFER,     /* DxgkDdiBuildPagingBuffer: handle = enum hw_paging_op, value = the destination address */
	/* user-mode work submission (gpu-model/os/ums.h): handle = the HW queue
	 * (hw_queue_handle) or the context (os_context_id), or the adapter (0) */
	OS_DDI_QUERY_UMS_CAPS,          /* DxgkDdiQueryAdapterInfo(DXGKQAITYPE_USERMODESUBMISSION_CAPS): value = doorbell bytes */
	OS_DDI_SUSPEND_CONTEXT,         /* DxgkDdiSuspendContext: handle = the context */
	OS_DDI_RESUME_CONTEXT,          /* DxgkDdiResumeContext: handle = the context */
	OS_DDI_CREATE_DOORBELL,         /* DxgkDdiCreateDoorbell: handle = the queue */
	OS_DDI_CONNECT_DOORBELL,        /* DxgkDdiConnectDoorbell: handle = the queue, value = the physical doorbell */
	OS_DDI_DISCONNECT_DOORBELL,     /* DxgkDdiDisconnectDoorbell: handle = the queue, value = the status set */
	OS_DDI_DESTROY_DOORBELL,        /* DxgkDdiDestroyDoorbell: handle = the queue */
	OS_DDI_NOTIFY_WORK_SUBMISSION,  /* DxgkDdiNotifyWorkSubmission: handle = the queue */
	OS_DDI_EVICT_RING_ALLOCATION,   /* the ring's paging transfer out (DxgkDdiBuildPagingBuffer): handle = the allocation */
	OS_DDI_RESTORE_RING_ALLOCATION, /* ... and back in: handle = the allocation */
	OS_DDI_KINDS
};
struct os_ddi_call {
	enum os_ddi ddi;
	uint64_t handle;
	uint64_t value;
	uint32_t count;      /* entries of a batched call (the first is handle/value); 1 otherwise */
};
#define OS_DDI_LOG_MAX 256
/* Copy up to max of the first OS_DDI_LOG_MAX DDI calls made on a, in order;
 * returns how many were copied.  Any thread; wait-free. */
size_t os_adapter_ddi_log(struct os_adapter *a, struct os_ddi_call *out, size_t max);
/* Calls of one DDI on a so far (all of them, not only the logged ones). */
uint64_t os_adapter_ddi_count(struct os_adapter *a, enum os_ddi d);
const char *os_ddi_name(enum os_ddi d);   /* "DxgkDdiCreateNativeFence", ... */

/* ---- the KMD's native fence DDIs (gpu-model/os/kmd.c) ----
 * Seed native-gpu-fence, "KMD DDIs to create, open, close, and destroy a
 * native fence object": "The following members were added to
 * DRIVER_INITIALIZATION_DATA.  Drivers that support native GPU fence objects
 * should implement the functions and provide Dxgkrnl with pointers to them
 * via this structure."  The KMD fills the six at initialization (after its
 * feature query); the OS fails adapter initialization when a driver that
 * advertises native fences leaves one out, and calls every native fence DDI
 * through the table, each call recorded in the DDI log (enum os_ddi).  The
 * handles are the model's (global fence handle, local handle, HW queue). */
struct hw_queue;
struct hw_log;
struct os_native_fence_ddis {
	int (*DxgkDdiCreateNativeFence)(struct os_adapter *a, uint64_t hGlobalNativeFence, uint64_t initial);
	int (*DxgkDdiDestroyNativeFence)(struct os_adapter *a, uint64_t hGlobalNativeFence);
	int (*DxgkDdiOpenNativeFence)(struct os_adapter *a, uint64_t hGlobalNativeFence, uint64_t hLocalNativeFence);
	int (*DxgkDdiCloseNativeFence)(struct os_adapter *a, uint64_t hLocalNativeFence, uint64_t hGlobalNativeFence);
	int (*DxgkDdiSetNativeFenceLogBuffer)(struct os_adapter *a, struct hw_queue *q, enum hw_log_type t,
					      struct hw_log *log);
	int (*DxgkDdiUpdateNativeFenceLogs)(struct os_adapter *a, struct hw_queue *const *q, size_t n);
};
#define OS_NATIVE_FENCE_DDIS 6
/* The table the KMD gave the OS at initialization (copied); the number of its
 * entries that are set (0 on an adapter without native fences). */
unsigned os_adapter_native_fence_ddis(const struct os_adapter *a, struct os_native_fence_ddis *out);
/* "DxgkDdiCreateNativeFence", ... : the table's i-th member's name (i < OS_NATIVE_FENCE_DDIS). */
const char *os_native_fence_ddi_name(unsigned i);

struct os_cross_stats {
	uint64_t propagated;    /* new values this adapter's interrupt thread passed to another adapter's instance */
	uint64_t received;      /* new values passed to this adapter's instances */
	uint64_t soft_raised;   /* ... of which needed this adapter's interrupt thread (CPU waiters, held buffers) */
};
void os_adapter_cross_stats(struct os_adapter *a, struct os_cross_stats *out);

/* ---- processes and local handles ---- */

struct os_process;
/* 0 / -ENOMEM. */
int os_process_create(struct os_process **out);
/* Process exit: closes every local handle still open (in opening order), then frees p. */
void os_process_destroy(struct os_process *p);
uint64_t os_process_id(const struct os_process *p);
size_t os_process_handles(const struct os_process *p);    /* local handles open */

/* Create a fence of process p on a (flags as os_fence_create, not
 * OS_FENCE_CROSS_ADAPTER): a non-shareable one is packed in pages only p's
 * fences use (seed native-gpu-fence, "Physical memory storage for current and
 * monitored fence values": "packed in the same memory page" within "the same
 * process"); os_fence_create's fences are packed with no process's (p NULL is
 * that).  0 / the errors of os_fence_create / -EINVAL (cross-adapter). */
int os_process_fence_create(struct os_process *p, struct os_adapter *a, enum os_fence_type type,
			    uint64_t initial, unsigned flags, struct os_fence **out);

/* Create a shared fence on a for process p (flags as os_fence_create; the
 * fence is always shareable) and open p's local handle.  0 / the errors of
 * os_fence_create.  *local: p's handle; os_fence_handle() of the fence is the
 * global handle other processes open. */
int os_shared_fence_create(struct os_process *p, struct os_adapter *a, enum os_fence_type type,
			   uint64_t initial, unsigned flags, uint64_t *local);
/* Open the shared fence with global handle `global` on a for process p.
 * 0; -ENOENT (no such fence, or its last handle is being closed); -EPERM
 * (a fence created without os_shared_fence_create). */
int os_shared_fence_open(struct os_process *p, struct os_adapter *a, uint64_t global, uint64_t *local);
/* Close p's local handle; the last close destroys the fence.  0 / -ENOENT. */
int os_shared_fence_close(struct os_process *p, uint64_t local);
/* The fence p's local handle names, or NULL (not p's, or closed). */
struct os_fence *os_process_fence(struct os_process *p, uint64_t local);

#endif
