/* gpu-model/os/ums.h — the OS side of user-mode work submission (Dxgkrnl + KMD
 * analog): devices, HW contexts, HW queues created for user-mode or
 * kernel-mode submission, doorbells, engine F-states, device D-states,
 * process termination.  Seed: user-mode-work-submission.
 *
 * Objects: a device (one process's D3D device) owns HW contexts (one engine
 * each), a context owns HW queues.  A queue created with
 * OS_HWQUEUE_USER_MODE_SUBMISSION (only on nodes whose metadata says
 * UserModeSubmissionSupported) has a ring buffer the application writes and a
 * doorbell; any other queue is kernel-mode: the application submits through
 * os_hwqueue_submit, a real kernel crossing (an eventfd write) that hands the
 * command buffer to the OS scheduler thread, which validates it, holds legacy
 * monitored-fence waits on the CPU (os_queue_submit) and writes the engine's
 * ring itself.  Both kinds run side by side on one adapter and engine.
 *
 * Every queue has a progress fence (the caller's, so that it outlives the
 * queue: waiters on it are released with UINT64_MAX if the device is lost)
 * and a last-queued value; the OS can always tell whether a queue has
 * pending work: last queued > completed (os_hwqueue_pending).  The seed's
 * submission order — progress value N+1 written by the command buffer's last
 * command, last-queued = N+1, then visible (write pointer), then the doorbell
 * — is the application's (gpu-model/runtime/rt.h).
 *
 * A user-mode queue's ring buffer and ring buffer control are allocations
 * the application makes (os_ring_alloc_*, below) and hands to CreateDoorbell.
 * The fast path — write the ring, ring the doorbell, read the status — makes
 * no call into this header; os_ums_kernel_calls counts the calls that are made.
 *
 * Doorbells.  The doorbell mapping the application writes through is
 * `*map.cpuva` (load it, acquire, then hw_doorbell_write through it): the
 * OS rotates it between a physical doorbell and a dummy page, where rings are
 * lost.  The status word says CONNECTED, CONNECTED_NOTIFY (call
 * os_notify_work_submission after ringing), DISCONNECTED_RETRY (reconnect and
 * ring again) or DISCONNECTED_ABORT (fall back to kernel-mode submission).
 * Disconnecting sets the status (seq_cst) before rotating the mapping
 * (release), pays the rotation's TLB shootdown (lf_asym_heavy: the other
 * side of the ringer's lf_asym_light between ring and status load), then the
 * KMD latches the register (hw_doorbell_disconnect): an application that
 * rang and then read CONNECTED was not lost.
 * Dedicated doorbells are virtualized: a connect with every physical doorbell
 * taken victimizes the least recently used one, whichever device or process
 * holds it (one pool: "limited doorbells that are shared across all
 * hardware queues created on the GPU"), the KMD's VictimizeDoorbell:
 * DxgkCbDisconnectDoorbell -> RETRY + dummy page, then the actual
 * disconnection (the register released), then the register goes to the
 * new queue.
 *
 * Power.  Engine F1: an engine idle with doorbells connected raises an
 * engine-state-change interrupt; the OS power thread disconnects every
 * doorbell of that engine (RETRY) and the engine parks; a reconnect brings it
 * back to F0.  Device D3: every context suspended, then every doorbell
 * disconnected (RETRY), then the ring allocations evicted; a connect in D3
 * wakes the device to D0, makes the rings resident, connects and resumes
 * every context (the seed's order; each step a DDI-log entry, os.h).  Context suspend keeps doorbells connected and
 * rings resident; nothing of the context runs until resume, which makes the
 * CMP re-read every write pointer.
 *
 * Termination.  os_device_destroy (normal): disconnect every doorbell, wait
 * for each queue's last queued value, then destroy; nothing queued is lost.
 * os_device_terminate (abnormal): device marked in error, contexts suspended,
 * then doorbells disconnected (ABORT), everything destroyed at once (the
 * ring allocations too: both terminations destroy them), progress
 * fences signaled to UINT64_MAX so no waiter hangs (os_device_in_error tells
 * it an error, as D3D12's device removal does).
 *
 *   call                                  who                                   blocks?
 *   os_ums_attach / os_ums_detach         the adapter's setup thread            detach: drains, joins
 *   os_device_*, os_context_*,            any thread (one lock per adapter;     suspend: until the engine
 *     os_hwqueue_create/destroy,            not the hot path)                     leaves the queue; destroy:
 *     os_doorbell_*, os_power_*                                                   until queued work is done
 *   os_hwqueue_submit                     the queue's one submitting thread     a syscall; never sleeps
 *   os_notify_work_submission             the queue's submitting thread         no
 *   os_hwqueue_pending/last_queued/...    any thread                            no
 *   os_ums_stats                          any thread                            u->lock briefly
 * No thread may use a device's queues once os_device_destroy/terminate began.
 * Queue, context and device memory is reclaimed at os_ums_detach, which must
 * come before os_adapter_destroy.
 */
#ifndef OS_UMS_H
#define OS_UMS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "gpu-model/hw/doorbell.h"
#include "gpu-model/os/os.h"

struct lf_ring;
struct os_ums;
struct os_device;
struct os_context;
struct os_hwqueue;

/* D3DDDI_DOORBELL_STATUS: the word at map.status (64-bit, as the seed reads it). */
enum os_doorbell_status {
	OS_DOORBELL_CONNECTED = 0,
	OS_DOORBELL_CONNECTED_NOTIFY = 1,
	OS_DOORBELL_DISCONNECTED_RETRY = 2,
	OS_DOORBELL_DISCONNECTED_ABORT = 3,
};

/* ---- TDR (gpu-model/os/tdr.c) ----
 * A watchdog thread per adapter (started by os_ums_attach): an engine inside
 * one queue without progress for TdrDelay gets a preemption request first
 * (always: seed gpu-preemption), then TdrDelay to yield; an engine that does
 * not is reset: the queue it ran is faulted, its device is guilty and
 * terminated (os_device_terminate: error, doorbells DISCONNECTED_ABORT, every
 * waiter on the device's fences released, queues must be re-created on a
 * new device); queues of other devices lose nothing.  TdrLimitCount resets
 * within TdrLimitTime: a bug check (every device terminated, no device or
 * context can be created any more).  Counted in os_ums_stats (tdr_*).
 *
 * Seed user-mode-work-submission, "Engine F-state transitions": the KMD
 * uses the engine-state-change interrupt "to notify Dxgkrnl of engine state
 * transitions that require a GPU power action or timeout recovery such as
 * Active -> TransitionToF1 and Active -> Hung".  os_ums_engine_hung is the
 * KMD raising it with NewState Hung; the power thread, which takes that
 * interrupt, hands the engine to the watchdog, which recovers it at once
 * instead of after TdrDelay without progress: the same preemption request
 * first, then the watchdog's look period (TdrDelay / 4, 1 ms .. 100 ms) to
 * yield, then the reset, guilty device and limit as above.  An engine
 * running nothing when the report is taken has nothing to recover. */
/* Tests only: when set, the watchdog calls it (on its thread, holding the
 * OS's lock) when a wait it makes for engine `engine` (a guilty device's
 * termination waiting for the engine to leave or retire its queue) outlasts
 * its first look period: the moment at which another hung engine would hold
 * it.  Set before os_ums_attach; NULL in every production path. */
extern void (*os_test_tdr_wait_hook)(unsigned engine);

#define OS_TDR_DELAY_DEFAULT_NS      2000000000ll
#define OS_TDR_LIMIT_COUNT_DEFAULT   5u
#define OS_TDR_LIMIT_TIME_DEFAULT_NS 60000000000ull
#define OS_TDR_HISTORY               16
enum os_tdr_fault {
	OS_TDR_FAULT_NONE,
	OS_TDR_FAULT_NO_PREEMPT,    /* broken on purpose: resets without sending the preemption request first */
	OS_TDR_FAULT_HUNG_AS_F1,    /* broken on purpose: the power thread reads every engine-state change as
	                             * TransitionToF1 (NewState ignored) */
	OS_TDR_FAULT_WAIT_UNWATCHED,/* broken on purpose: the watchdog waits on an engine, or for a lock, without
	                             * looking at the others meanwhile (a second hung engine holds it) */
};

/* Deliberately broken user-mode submission steps, for the tests that prove
 * each is caught (os_ums_config.ums_fault). */
enum os_ums_fault {
	OS_UMS_FAULT_NONE,
	OS_UMS_FAULT_NO_RING_REFERENCE,     /* CreateDoorbell takes no reference on the ring allocations:
	                                     * the application may destroy them under a live doorbell */
	OS_UMS_FAULT_DISCONNECT_BEFORE_SUSPEND, /* abnormal termination disconnects the doorbells, then
	                                     * suspends the contexts */
	OS_UMS_FAULT_D3_DISCONNECT_FIRST,   /* D0 -> D3 disconnects the doorbells and evicts the rings
	                                     * before suspending the contexts */
	OS_UMS_FAULT_VICTIM_MRU,            /* VictimizeDoorbell takes the most recently used doorbell */
	OS_UMS_FAULT_SCHED_NO_LET_GO,       /* a queue's destroy (a termination's too) does not wait for the
	                                     * scheduler to let go of a submission it popped: the progress
	                                     * fence is released while the buffer is still read */
	OS_UMS_FAULT_DESTROY_SHARED,        /* a queue has no one destroy owning it: a second os_hwqueue_destroy of
	                                     * it, or its device's destroy, drains it too, past the first's return */
	OS_UMS_FAULT_RELEASE_BEFORE_RETRY,  /* a disconnect (a victimization's) releases the physical doorbell
	                                     * before the victim's status and mapping change */
	OS_UMS_FAULT_DRAIN_BEFORE_DISCONNECT, /* normal termination waits for the last queued value, then
	                                     * disconnects the doorbell */
	OS_UMS_FAULT_SUSPEND_ONE_QUEUE,     /* suspend and resume act on the context's first HW queue only */
	OS_UMS_FAULT_F1_EVERY_ENGINE,       /* TransitionToF1 of one engine disconnects every engine's doorbells */
	OS_UMS_FAULT_POOL_PER_DEVICE,       /* dedicated doorbells are a pool per device: a connect victimizes only
	                                     * its own device's doorbells (-EBUSY when it holds none) */
	OS_UMS_FAULT_QUEUE_DESTROYS_RINGS,  /* destroying a HW queue destroys the UMD's ring allocations */
};

struct os_ums_config {
	int sched_cpu;              /* pin the scheduler thread (kernel-mode submission); -1: not pinned */
	int power_cpu;              /* pin the power thread (engine-state-change interrupts); -1 */
	uint32_t notify_engines;    /* bit e: the KMD asks for NotifyWorkSubmission on engine e (CONNECTED_NOTIFY) */
	int64_t drain_timeout_ns;   /* normal termination waits this long per queue; < 0: forever */
	size_t log_bytes;           /* each native fence log buffer of a user-mode HW queue: header + entries,
	                             * HW_LOG_HEADER_BYTES + one entry .. OS_LOG_MAX_BYTES (seed: 4 KiB) */
	/* TDR (gpu-model/os/tdr.c) */
	int64_t tdr_delay_ns;       /* TdrDelay; 0: OS_TDR_DELAY_DEFAULT_NS; < 0: no watchdog (TdrLevel off) */
	uint32_t tdr_limit_count;   /* TdrLimitCount; 0: OS_TDR_LIMIT_COUNT_DEFAULT (at most OS_TDR_HISTORY) */
	uint64_t tdr_limit_time_ns; /* TdrLimitTime; 0: OS_TDR_LIMIT_TIME_DEFAULT_NS */
	enum os_tdr_fault tdr_fault;  /* tests only */
	enum os_ums_fault ums_fault;  /* tests only */
};
#define OS_LOG_MAX_BYTES (1u << 20)   /* the largest log buffer the OS allocates */
/* Defaults: nothing pinned, no notify, 10 s drain timeout, 4 KiB log buffers, TdrDelay 2 s, 5 TDRs in 60 s. */
void os_ums_config_default(struct os_ums_config *cfg);

/* Start user-mode submission support on adapter a: the scheduler and power
 * threads.  Queries the KMD's DXGK_USERMODESUBMISSION_CAPS (the doorbell
 * memory size, hw_doorbell_bytes: DxgkDdiQueryAdapterInfo, in the DDI log)
 * and allocates the dummy page of that size.  0; -EINVAL with a one-line
 * reason (bad doorbell caps); -errno. */
int os_ums_attach(struct os_adapter *a, const struct os_ums_config *cfg, struct os_ums **out,
		  char *err, size_t errlen);
/* Destroy the devices left (normal termination), stop the threads, free
 * everything.  Before os_adapter_destroy.  NULL is ignored. */
void os_ums_detach(struct os_ums *u);
struct os_adapter *os_ums_adapter(struct os_ums *u);
pid_t os_ums_sched_tid(const struct os_ums *u);
pid_t os_ums_power_tid(const struct os_ums *u);
/* The doorbell memory size the caps reported, and the bytes of the dummy
 * page allocated for it (seed, "DXGK_QUERYADAPTERINFOTYPE::DXGKQAITYPE_
 * USERMODESUBMISSION_CAPS": "The size of the doorbell is needed to allocate
 * the dummy page").  Any thread. */
size_t os_ums_doorbell_bytes(const struct os_ums *u);
size_t os_ums_dummy_page_bytes(const struct os_ums *u);
/* Kernel calls the applications made on u (D3DKMT* of this header: device,
 * context, queue, allocation and doorbell calls, kernel-mode submissions,
 * NotifyWorkSubmission).  Any thread; relaxed. */
uint64_t os_ums_kernel_calls(const struct os_ums *u);

/* ---- devices, contexts ---- */

int os_device_create(struct os_ums *u, struct os_device **out);               /* 0 / -ENOSPC */
/* Normal termination.  0, or -ETIMEDOUT when a queue did not drain in time
 * (destroyed anyway, counted in drain_timeouts); -ENODEV: an abnormal
 * termination came during the drain and dropped the rest; -EBUSY: another
 * os_device_destroy of d is under way.  An os_hwqueue_destroy of one of d's
 * queues under way ends first (this waits for it, then leaves that queue
 * alone).  From its start no context or queue is created on d (-ENODEV),
 * no queue of d is destroyed on its own (-EBUSY), a suspend of d's contexts
 * leaves their queues running, and D3 is refused (os_power_d3) until the
 * drain ends. */
int os_device_destroy(struct os_device *d);
/* Abnormal termination (the process died): see above.  It waits for no GPU
 * work to finish, only for each engine to leave the device's queues and see
 * them retired (a command boundary): a hung engine holds it until the
 * watchdog resets that engine (about 2 x TdrDelay; never, with TdrLevel off).
 * On the watchdog's own thread it never waits on a hung engine: it resets
 * it meanwhile (see "TDR"). */
void os_device_terminate(struct os_device *d);
bool os_device_in_error(const struct os_device *d);
/* The device's own fences, beside its queues' progress fences: an abnormal
 * termination (a TDR's included) signals them UINT64_MAX, so no waiter on
 * them hangs.  Untrack before destroying the fence.  Any thread (u->lock). */
void os_device_track_fence(struct os_device *d, struct os_fence *f);
void os_device_untrack_fence(struct os_device *d, struct os_fence *f);
pid_t os_ums_tdr_tid(const struct os_ums *u);   /* the watchdog thread (0: none) */
/* The KMD: engine e hung (what its firmware or its own checks tell it; the
 * model's engines never say so themselves).  Raises e's engine-state-change
 * interrupt with NewState Hung (DXGK_ENGINE_STATE_HUNG) for timeout
 * recovery ("TDR" above).  Any thread; does not block.  0 / -EINVAL (no
 * such engine). */
int os_ums_engine_hung(struct os_ums *u, unsigned engine);
bool os_ums_bugchecked(struct os_ums *u);

/* Tests only: NULL in every production path; set before the threads that
 * call them start.
 * os_test_drain_hook: a destroy's drain (os_hwqueue_destroy,
 *   os_device_destroy) calls it for each queue it drains, without u->lock,
 *   before it waits: the window in which a D3 or a suspend may come.
 * os_test_sched_popped_hook: the scheduler thread calls it once it popped a
 *   kernel-mode submission of q and found q live, before it reads the
 *   command buffer: the window in which a termination may come.
 * os_test_sched_wait_hook: a destroy or termination (u->lock held) calls it
 *   once when it finds the scheduler holding a popped submission of q, before
 *   it waits for the scheduler to let go: a popped hook that holds the
 *   scheduler may end its hold then, and only then. */
extern void (*os_test_drain_hook)(struct os_hwqueue *q);
extern void (*os_test_sched_popped_hook)(struct os_hwqueue *q);
extern void (*os_test_sched_wait_hook)(struct os_hwqueue *q);
/* os_test_destroy_wait_hook: os_device_destroy calls it once (u->lock held)
 *   when it finds a queue destroy of d under way, before it waits for it. */
extern void (*os_test_destroy_wait_hook)(struct os_device *d);

/* A HW context on engine `engine`.  0 / -EINVAL (engine) / -ENOSPC / -ENODEV (device in error). */
int os_context_create(struct os_device *d, unsigned engine, struct os_context **out);
/* The context's handle in the DDI log (OS_DDI_SUSPEND_CONTEXT ...). */
uint64_t os_context_id(const struct os_context *c);
/* DxgkddiSuspendContext / DxgkddiResumeContext (nesting with D3 and errors). */
void os_context_suspend(struct os_context *c);
void os_context_resume(struct os_context *c);

/* ---- HW queues ---- */

#define OS_HWQUEUE_USER_MODE_SUBMISSION 0x1u   /* D3DDDI_CREATEHWQUEUEFLAGS::UserModeSubmission */
/* D3DDDI_CREATEHWQUEUEFLAGS::NativeProgressFence (seed native-gpu-fence,
 * "Indicating a native progress fence for hardware queues"): the queue's
 * progress fence is a native fence.  The OS marks every queue whose progress
 * fence is native (os_hwqueue_native_progress), with the flag or without; the
 * flag with a monitored progress fence is refused, and so is a user-mode
 * queue whose progress fence is not native (user-mode queues cannot use
 * monitored fences: nobody would see their signals without an interrupt). */
#define OS_HWQUEUE_NATIVE_PROGRESS_FENCE 0x2u

/* Create a queue: kernel-mode, with a ring of ring_slots (power of two) the
 * OS writes; user-mode, without a ring (ring_slots ignored): the application
 * brings its ring allocations to os_doorbell_create.  progress: the
 * queue's progress fence (the caller keeps it alive until os_hwqueue_destroy or
 * os_device_destroy returned, or the device was terminated).
 * 0; -ENOTSUP: UserModeSubmission on a node without support; -EINVAL (also:
 * NativeProgressFence or UserModeSubmission with a monitored progress fence);
 * -ENOSPC (run list or OS queue table full); -ENODEV (device in error). */
int os_hwqueue_create(struct os_context *c, unsigned flags, size_t ring_slots, struct os_fence *progress,
		      struct os_hwqueue **out);
/* Normal destroy of one queue: disconnect, wait for the last queued value,
 * destroy.  The wait runs even if the application suspended the queue's
 * context (before or during it: the queue alone stays on the run list), and
 * D3 is refused while it runs.  0 / -ETIMEDOUT / -ENODEV (its device was
 * terminated during the wait: the rest was dropped) / -EBUSY (another
 * destroy of it, or its device's destroy, is under way and owns it).  Once it returns, the OS no longer touches the queue's
 * progress fence (an abnormal termination of the device leaves it alone),
 * holds none of its command buffers, and names none of the fences they
 * named: the caller may destroy them. */
int os_hwqueue_destroy(struct os_hwqueue *q);
bool os_hwqueue_is_um(const struct os_hwqueue *q);
unsigned os_hwqueue_engine(const struct os_hwqueue *q);
struct os_fence *os_hwqueue_progress(struct os_hwqueue *q);
/* The queue was created with a native progress fence (NativeProgressFence). */
bool os_hwqueue_native_progress(const struct os_hwqueue *q);
uint64_t os_hwqueue_last_queued(const struct os_hwqueue *q);
uint64_t os_hwqueue_completed(struct os_hwqueue *q);
/* last queued > completed: the queue has work pending.  Any thread. */
bool os_hwqueue_pending(struct os_hwqueue *q);
struct hw_queue *os_hwqueue_hw(struct os_hwqueue *q);
/* Kernel-mode: command buffers the OS holds on the CPU for the queue (a
 * WAIT on a monitored fence not yet reached, or no ring space); 0 for a
 * user-mode queue and once the queue is destroyed.  Any thread; relaxed. */
size_t os_hwqueue_held(struct os_hwqueue *q);
/* Its context allocation (ctxalloc.c; a kernel-mode queue's is its OS
 * queue's); NULL once destroyed with the queue.  Any thread. */
struct hw_ctx_alloc *os_hwqueue_ctx_alloc(struct os_hwqueue *q);
/* DxgkCbCreateContextAllocation with its arguments
 * (DXGKARGCB_CREATECONTEXTALLOCATION), for the Remarks' two kinds (seed
 * gpu-preemption, step 5: "Note the specific instructions and restrictions
 * given in Remarks"):
 *   a device context allocation (SharedAcrossContexts = 1): hContext NULL,
 *     hDevice a device (NULL is the system device: refused); one per
 *     device; resident for as long as the device lives, whatever else the
 *     memory manager evicts, and reached by every context of the device
 *     (hw_queue_set_dev_alloc); destroyed with the device;
 *   a GPU context allocation (SharedAcrossContexts = 0): hContext a
 *     context's HW queue; refused for the system context (the paging
 *     queue, os_vidmm_paging_queue); every other context got its one when
 *     it was created (os_ctx_alloc_create), so -EEXIST.
 * 0 (hAllocation set) / -EINVAL / -EEXIST / -ENODEV (device destroyed) /
 * -ENOMEM / -ENOSPC (no slot).  Any thread; takes the ums lock; blocks for
 * the paging buffer that initializes it. */
struct os_createcontextallocation {
	bool SharedAcrossContexts;         /* ContextAllocationFlags.SharedAcrossContexts */
	struct os_device *hDevice;
	struct hw_queue *hContext;
	size_t Size;
	struct hw_ctx_alloc *hAllocation;  /* out */
};
int os_create_context_allocation(struct os_ums *u, struct os_createcontextallocation *args);
/* The queue's scheduling priority (higher runs first; 0 by default).  On
 * the engine's run list at once; kernel-mode submissions to a queue that
 * outranks the one its engine runs make the scheduler send a preemption
 * request (DxgkDdiPreemptCommand), user-mode queues are seen by the run
 * list itself (hw.h, "preemption").  Any thread. */
void os_hwqueue_set_priority(struct os_hwqueue *q, int32_t priority);
int32_t os_hwqueue_priority(const struct os_hwqueue *q);

/* Kernel-mode submission (D3DKMTSubmitCommandToHwQueue): record `progress`
 * as the last queued value, hand cmds[0..n) to the scheduler thread and make
 * a kernel crossing (eventfd write).  cmds must stay valid until `progress`
 * completes, or until the queue's destroy returned (an abnormal termination
 * signals the progress fence only once the scheduler let go of every
 * buffer it had taken).  0; -EINVAL (a user-mode queue, n == 0); -ENODEV
 * (device in error). */
int os_hwqueue_submit(struct os_hwqueue *q, const struct hw_cmd *cmds, size_t n, uint64_t progress);

/* ---- ring buffer allocations ----
 * Seed, "Residency model of doorbell memory and ring buffer allocations": the
 * UMD allocates the ring buffer and the ring buffer control allocations,
 * makes them resident before creating a doorbell, and passes them to it
 * (hRingBuffer, hRingBufferControl); it manages their lifetime, but Dxgkrnl
 * holds a reference on them while the doorbell lives, and destroys them
 * itself only when the device is destroyed or terminated.
 *
 * The ring is an lf_ring split over the two (lf_ring_create_split): the
 * ring buffer allocation holds its ring_slots struct hw_cmd slots, the ring
 * buffer control allocation its control block, whose first word is the
 * write pointer (the seed's pseudocode: "Assume the write pointer is at
 * offset 0 in this alloc"); os_ring_alloc_cpuva is an allocation's CPU VA
 * (what D3DKMTLock2 returns), os_ring_alloc_ring the ring the application
 * produces into (also in the doorbell's map).  The ring is made over the
 * pair at its first CreateDoorbell and stays the queue's (the hardware
 * addresses it): a later CreateDoorbell on the queue must bring the same
 * pair, and a pair serves one queue.  An allocation's memory, once bound,
 * lives until the adapter goes (as queue memory does); a shell until
 * os_ums_detach.
 *
 *   os_ring_alloc_*       any thread (u->lock); never block */
enum os_ring_alloc_kind {
	OS_RING_BUFFER,             /* hRingBuffer: ring_slots command slots (power of two, 1..2^20) */
	OS_RING_BUFFER_CONTROL,     /* hRingBufferControl: the ring's control block (ring_slots ignored) */
};
struct os_ring_alloc;
/* D3DKMTCreateAllocation: created not resident.  0 / -EINVAL / -ENODEV (device in error). */
int os_ring_alloc_create(struct os_device *d, enum os_ring_alloc_kind kind, size_t ring_slots,
			 struct os_ring_alloc **out);
/* D3DKMTMakeResident.  0 / -EIDRM (destroyed). */
int os_ring_alloc_make_resident(struct os_ring_alloc *r);
/* D3DKMTEvict.  0 / -EBUSY (a doorbell holds it) / -EIDRM. */
int os_ring_alloc_evict(struct os_ring_alloc *r);
/* D3DKMTDestroyAllocation.  0 / -EBUSY (a live doorbell references it) /
 * -EIDRM (destroyed already: by the application, or by its device's end).
 * After an abnormal termination (a TDR's) the memory of an allocation no
 * ring is bound to stays, so that a CPU VA the process still holds stays
 * writable, until this call (-EIDRM) or os_ums_detach. */
int os_ring_alloc_destroy(struct os_ring_alloc *r);
bool os_ring_alloc_resident(const struct os_ring_alloc *r);
bool os_ring_alloc_destroyed(const struct os_ring_alloc *r);
unsigned os_ring_alloc_refs(const struct os_ring_alloc *r);   /* doorbells referencing it */
/* The allocation's CPU VA: valid while it lives, whatever its doorbell's
 * state (NULL once destroyed). */
const void *os_ring_alloc_cpuva(struct os_ring_alloc *r);
/* The ring over the pair r belongs to: NULL until its first CreateDoorbell
 * and once destroyed. */
struct lf_ring *os_ring_alloc_ring(struct os_ring_alloc *r);

/* ---- doorbells ---- */

/* What D3DKMTCreateDoorbell returns: the application's mappings. */
struct os_doorbell_map {
	_Atomic(_Atomic uint64_t *) *cpuva;   /* DoorbellCPUVirtualAddress (a physical doorbell or the dummy page) */
	const _Atomic uint64_t *status;      /* DoorbellStatusCPUVirtualAddress: enum os_doorbell_status */
	_Atomic uint64_t *last_queued;       /* HwQueueProgressFenceLastQueuedValueCPUVirtualAddress */
	struct lf_ring *ring;                /* the ring over the two allocations: the application is its producer */
	uint64_t value;                      /* the tag: ring with hw_doorbell_ring_value(value, write pointer) */
	size_t bytes;                        /* the doorbell mapping's size: the caps' doorbell memory size */
};

/* D3DKMTCreateDoorbell(hHwQueue, hRingBuffer, hRingBufferControl): status
 * DISCONNECTED_RETRY, mapping on the dummy page; binds the ring (above) and
 * takes a reference on both allocations until the doorbell is destroyed.
 * 0 / -EINVAL (kernel-mode queue; an allocation missing, of the wrong kind,
 * of another device or destroyed) / -EFAULT (an allocation not resident:
 * the UMD must make them resident first) / -EBUSY (the queue is bound to
 * another ring buffer, or the ring buffer to another queue) / -EEXIST / -ENODEV. */
int os_doorbell_create(struct os_hwqueue *q, struct os_ring_alloc *ring_buffer, struct os_ring_alloc *ring_control,
		       struct os_doorbell_map *out);
/* D3DKMTConnectDoorbell.  Connected already: nothing to do.  In D3: wakes the
 * device first.  May victimize another queue's doorbell, of any device.  0
 * (the status word says which); -ENOENT (no doorbell); -ENODEV (aborted,
 * device in error); -EBUSY only under OS_UMS_FAULT_POOL_PER_DEVICE. */
int os_doorbell_connect(struct os_hwqueue *q);
/* D3DKMTDestroyDoorbell: disconnect and forget it, drop its references on
 * the ring allocations (which stay).  0 / -ENOENT. */
int os_doorbell_destroy(struct os_hwqueue *q);
/* The status word as the application reads it (tests, diagnostics). */
enum os_doorbell_status os_doorbell_status(const struct os_hwqueue *q);
/* The bytes the application's doorbell mapping covers now: the caps'
 * doorbell memory size, on the dummy page or on the physical doorbell
 * (seed, "DXGKQAITYPE_USERMODESUBMISSION_CAPS": at D3DKMTConnectDoorbell
 * "Dxgkrnl needs to rotate the DoorbellCpuVirtualAddress to a
 * DoorbellPhysicalAddress provided by KMD.  Again, Dxgkrnl needs to know
 * the doorbell size"); 0 without a doorbell.  Any thread (u->lock). */
size_t os_doorbell_mapped_bytes(const struct os_hwqueue *q);
/* Tests only: when set, a disconnect calls it (u->lock held) right after
 * the physical doorbell of q was released (hw_doorbell_disconnect): what
 * q's application reads there is what a ringer racing the release sees.
 * Set before the threads that disconnect start; NULL in every production path. */
extern void (*os_test_doorbell_release_hook)(struct os_hwqueue *q);
/* D3DKMTNotifyWorkSubmission: the KMD learns of the ring (and has the CMP look). */
int os_notify_work_submission(struct os_hwqueue *q);
/* Device lost for this queue's doorbell (a TDR, a GPU stop): disconnect with
 * DISCONNECTED_ABORT; connects fail from now on.  Work already visible runs. */
void os_doorbell_abort(struct os_hwqueue *q);

/* ---- power ---- */

/* D0 -> D3 (0; already in D3: 0; -EBUSY, nothing done: a destroy is
 * draining queues, whose work must finish first). */
int os_power_d3(struct os_ums *u);
int os_power_d0(struct os_ums *u);   /* D3 -> D0 without a connect */
bool os_power_in_d3(struct os_ums *u);

struct os_ums_stats {
	uint64_t connects;            /* doorbells connected */
	uint64_t victimizations;      /* ... that took another queue's physical doorbell */
	uint64_t f1_requests;         /* engine-state-change interrupts handled with NewState TransitionToF1 */
	uint64_t hung_reports;        /* ... with NewState Hung, handed to timeout recovery */
	uint64_t f1_disconnects;      /* doorbells disconnected for F1 */
	uint64_t f0_by_connect;       /* connects that found their engine in F1 */
	uint64_t d3_entries, d0_exits;
	uint64_t d3_ns;               /* time in D3 (to the last exit) */
	uint64_t ring_evictions, ring_restores;   /* ring buffer (control) allocations evicted in D3, restored */
	uint64_t suspends, resumes;   /* context suspend/resume calls that changed the run list */
	uint64_t notifies;            /* NotifyWorkSubmission calls */
	uint64_t aborts;              /* doorbells disconnected with ABORT */
	uint64_t km_submits;          /* kernel-mode submissions (each one syscall) */
	uint64_t km_rejected;         /* ... refused by the scheduler's validation */
	uint64_t km_discarded;        /* ... dropped because their device died */
	uint64_t sched_wakeups;       /* scheduler thread returns from its eventfd read */
	uint64_t sched_busy_ns;       /* the scheduler thread's CPU time (user + kernel, the kernel's own
	                               * accounting: its CPU-time clock) since it started; the difference
	                               * of two readings is a region's (the interrupt thread's is
	                               * os_stats.isr_busy_ns) */
	uint64_t drain_timeouts;      /* normal terminations whose wait timed out */
	uint64_t lost_at_abnormal;    /* queues with pending work destroyed by abnormal termination */
	uint64_t preempt_requests;    /* preemption requests the scheduler sent for higher-priority work */
	uint64_t tdr_timeouts;        /* engines found without progress for TdrDelay */
	uint64_t tdr_hung;            /* engines recovered because they were reported hung */
	uint64_t tdr_preempt_requests;/* ... sent a preemption request */
	uint64_t tdr_preempted;       /* ... that yielded to it (nothing reset) */
	uint64_t tdr_resets;          /* engines reset (DxgkDdiResetEngine that aborted a command) */
	uint64_t tdr_guilty;          /* resets whose queue had a device, terminated as guilty (hung on two engines: 2) */
	uint64_t tdr_bugchecks;       /* TdrLimitCount reached */
};
/* Relaxed reads of single-writer counters: exact once the threads that
 * write them are idle (sched_busy_ns reads the scheduler thread's clock). */
void os_ums_stats(struct os_ums *u, struct os_ums_stats *out);

/* ---- native fence log buffers of a user-mode queue (gpu-model/os/logbuf.c) ---- */
struct os_log;
/* The queue's logs (os.h, "native fence log buffers"); NULL for a kernel-mode queue. */
struct os_log *os_hwqueue_log(struct os_hwqueue *q);
/* Destroy and recreate q's two log buffers at `bytes` each, calling the
 * SetNativeFenceLogBuffer analog for each; the new logs continue the old
 * entry numbering.  Takes q off the run list meanwhile.  Unread signal
 * entries make the interrupt thread read every fence.  0, -EINVAL
 * (kernel-mode queue, bad size) or -ENODEV (destroyed). */
int os_hwqueue_recreate_logs(struct os_hwqueue *q, size_t bytes);
/* Start the adapter's timeline trace (os.h: os_trace_start, `records`) and,
 * first, give user-mode queues larger logs (seed: "when tracing is enabled,
 * the OS may allocate a larger log buffer"): `log_bytes` each (0:
 * OS_TRACE_LOG_BYTES), existing queues' logs recreated at that size, new
 * queues created with it.  One setup thread, with no log recreation running.
 * 0, -EINVAL (size), -EALREADY, -ENOMEM. */
#define OS_TRACE_LOG_BYTES (64u * 1024u)   /* 16 times the default: about 1600 entries a log */
int os_ums_trace_start(struct os_ums *u, size_t records, size_t log_bytes);

#endif
