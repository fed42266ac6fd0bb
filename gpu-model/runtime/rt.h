/* gpu-model/runtime/rt.h — the application's D3D12-like view: devices,
 * command queues with user-mode or kernel-mode submission, fences.
 *
 * rt_queue_submit is ExecuteCommandLists: the commands are copied into a
 * command buffer of the queue's own that ends with a write of the next
 * progress-fence value.  A user-mode queue's ring is the UMD's:
 * rt_queue_create allocates the ring buffer and ring buffer control
 * allocations, makes them resident and passes them to CreateDoorbell (seed
 * user-mode-work-submission, "Residency model of doorbell memory and ring
 * buffer allocations").  On a user-mode queue rt_queue_submit then follows the seed's
 * sequence (user-mode-work-submission, "HW queue progress fence changes" and
 * the UMD pseudocode):
 *
 *     N+1 = next progress value; command buffer ends with SIGNAL(progress, N+1)
 *     status word not CONNECTED: D3DKMTConnectDoorbell (ABORT: fall back)
 *     *last_queued = N+1                      (before the buffer is visible)
 *     push the buffer into the ring           (visible: the write pointer moves;
 *                                              up to 4 commands inline, as the OS
 *                                              writes a kernel-mode buffer, else
 *                                              one INDIRECT entry naming it)
 *     ring: write the write pointer through the doorbell mapping
 *     read the status: CONNECTED_NOTIFY -> D3DKMTNotifyWorkSubmission;
 *                      DISCONNECTED_RETRY -> reconnect and ring again;
 *                      DISCONNECTED_ABORT -> fall back
 *
 * Two departures from the pseudocode, both because it writes plain values
 * where this model pushes into a ring: the connect is made only when the
 * status word is not CONNECTED (connecting a connected doorbell does nothing,
 * and calling it every time would make every submission a kernel call:
 * RT_BROKEN_CONNECT_EVERY_SUBMIT, which tests/test_umd_submit.c catches), and
 * a retry rings again without re-publishing (a second push would run the
 * buffer twice).  Fallback (ABORT, or a connect that fails): the user-mode
 * queue is destroyed the normal way — what it made visible completes — and a
 * kernel-mode queue on the same context and progress fence takes over.
 *
 * On a kernel-mode queue the buffer goes through os_hwqueue_submit (a kernel
 * crossing, the OS scheduler thread).  A GPU wait on a monitored (legacy)
 * fence needs the OS to hold it, and a signal of one an interrupt the OS
 * sees, so only kernel-mode queues accept either.
 *
 * Device removal (rt_device_terminate, the OS's abnormal termination): every
 * fence of the device reads UINT64_MAX and every wait returns -EIO.
 *
 *   call                                       who                                  blocks?
 *   rt_device_create/destroy/terminate         one thread; no queue in use          destroy: drains
 *   rt_queue_create                            any thread                           no
 *   rt_queue_submit, rt_queue_signal/_wait_gpu one submitting thread per queue      while the queue's 64
 *                                                                                   buffers are all in flight
 *   rt_queue_wait, rt_fence_wait               any thread                           yes (timeout)
 *   rt_queue_completed, rt_fence_completed,    any thread                           no
 *     rt_fence_signal, stats
 */
#ifndef RT_RT_H
#define RT_RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu-model/os/ums.h"

#define RT_MAX_CMDS 63                 /* commands per rt_queue_submit (the progress write makes 64) */

struct rt_device;
struct rt_queue;
struct rt_fence;

/* Deliberately broken user-mode submission protocols: the tests prove each is caught. */
enum rt_broken {
	RT_BROKEN_NONE,
	RT_BROKEN_RING_BEFORE_VISIBLE,   /* rings, then (a window later) makes the buffer visible */
	RT_BROKEN_NO_STATUS_CHECK,       /* never reads the status after ringing (no retry) */
	RT_BROKEN_LAST_QUEUED_LATE,      /* visible and rung first, last-queued updated a window later */
	RT_BROKEN_CONNECT_EVERY_SUBMIT,  /* D3DKMTConnectDoorbell on every submission, as the pseudocode's loop
	                                  * reads: a kernel call each time (the fast path must make none) */
	RT_BROKEN_DOORBELL_BEFORE_RESIDENT, /* CreateDoorbell with the ring allocations not resident */
};
#define RT_BROKEN_WINDOW_NS 50000000ull   /* how long a broken variant holds its window open */

struct rt_queue_desc {
	unsigned engine;                 /* the node (copy/compute/3D engine) */
	bool user_mode;                  /* UserModeSubmission: -ENOTSUP on a node without support */
	size_t ring_slots;               /* power of two, 2..1024; 0: 64.  Also the buffers in flight */
	enum rt_broken broken;
	int32_t priority;                /* scheduling priority: higher preempts lower (0: the default) */
};

/* ---- device ---- */

int rt_device_create(struct os_ums *u, struct rt_device **out);       /* 0 / -ENOSPC / -ENOMEM */
/* Normal exit: what was queued completes (os_device_destroy), then every
 * queue and fence of the device is freed.  Also frees a terminated device
 * (once no thread waits any more).  0 / -ETIMEDOUT (a queue did not drain) /
 * -ENODEV (terminated while it drained: the rest was dropped). */
int rt_device_destroy(struct rt_device *d);
/* The process died: abnormal termination; waits in progress return -EIO. */
void rt_device_terminate(struct rt_device *d);
bool rt_device_removed(const struct rt_device *d);
bool rt_device_native(const struct rt_device *d);    /* its fences are native (the adapter's and OS's support) */
unsigned rt_device_engines(const struct rt_device *d);  /* the adapter's engines */
struct os_device *rt_device_os(struct rt_device *d);

/* ---- queues ---- */

int rt_queue_create(struct rt_device *d, const struct rt_queue_desc *desc, struct rt_queue **out);
/* Submit cmds[0..n) (n <= RT_MAX_CMDS; ops WORK, SIGNAL, WAIT, COUNT, STAMP)
 * as one command buffer; *value (may be NULL) gets its progress value.
 * 0; -EINVAL (n, an op, a SIGNAL/WAIT without a fence, a COUNT/STAMP
 * without a target, a SIGNAL or WAIT of a monitored fence on a user-mode
 * queue); -EIO (device removed); -ETIMEDOUT (all buffers in
 * flight for 10 s); -errno of a kernel-mode submission.  Only a submission
 * that returns 0 advances the submitted value: after a failure,
 * rt_queue_submitted and rt_queue_wait(q, 0, ...) are as before the call. */
int rt_queue_submit(struct rt_queue *q, const struct hw_cmd *cmds, size_t n, uint64_t *value);
/* GPU-side Signal / Wait of a fence (a one-command buffer).  A signal or a
 * wait of a monitored fence from a user-mode queue: -EINVAL. */
int rt_queue_signal(struct rt_queue *q, struct rt_fence *f, uint64_t v);
int rt_queue_wait_gpu(struct rt_queue *q, struct rt_fence *f, uint64_t v);
/* CPU wait until the queue's progress reaches v (0: everything submitted).
 * 0 / -ETIMEDOUT / -EIO. */
int rt_queue_wait(struct rt_queue *q, uint64_t v, int64_t timeout_ns);
uint64_t rt_queue_completed(struct rt_queue *q);        /* UINT64_MAX once removed */
uint64_t rt_queue_submitted(const struct rt_queue *q);   /* the last progress value handed out */
uint64_t rt_queue_trace_handle(struct rt_queue *q);     /* what the timeline trace's records call it (hw_queue_handle) */
bool rt_queue_user_mode(const struct rt_queue *q);      /* false after a fallback */
struct os_hwqueue *rt_queue_os(struct rt_queue *q);
struct os_context *rt_queue_context(struct rt_queue *q);

struct rt_queue_stats {
	uint64_t submits;        /* command buffers submitted */
	uint64_t um_submits, km_submits;
	uint64_t rings;          /* doorbell writes */
	uint64_t retries;        /* status DISCONNECTED_RETRY after a ring */
	uint64_t connects;       /* D3DKMTConnectDoorbell calls */
	uint64_t notifies;       /* D3DKMTNotifyWorkSubmission calls */
	uint64_t fallbacks;      /* user-mode -> kernel-mode */
	uint64_t full_waits;     /* submissions that waited for a buffer in flight */
};
/* Counters of the submitting thread (relaxed; exact once it stopped). */
void rt_queue_stats(const struct rt_queue *q, struct rt_queue_stats *out);

/* ---- native fence log buffers: the UMD's part (seed native-gpu-fence) ----
 * On a user-mode queue every native GPU wait and signal the runtime records
 * (rt_queue_submit, the progress write included) is followed by a HW_CMD_LOG
 * naming the next entry of the queue's wait or signal log, and emits a
 * FENCE_WAIT_QUEUED / FENCE_SIGNAL_QUEUED event with a CPU timestamp
 * (lf_now_ns), kept per queue for a timeline.  Kernel-mode queues: neither. */
#define RT_EVENTS 1024                 /* queued events kept per queue (the last ones) */
enum rt_event_kind { RT_EVENT_FENCE_WAIT_QUEUED, RT_EVENT_FENCE_SIGNAL_QUEUED };
struct rt_fence_event {
	uint32_t kind;                     /* enum rt_event_kind */
	uint64_t fence;                    /* the fence's global handle */
	uint64_t value;
	uint64_t entry;                    /* the log entry its LOG names */
	uint64_t cpu_ns;                   /* CPU timestamp when recorded */
};
/* Copy up to max of the kept events, oldest first; *total (may be NULL) gets
 * how many were ever emitted.  The submitting thread, or any once it stopped. */
size_t rt_queue_events(const struct rt_queue *q, struct rt_fence_event *out, size_t max, uint64_t *total);

/* ---- fences ---- */

/* A fence (native where the adapter supports it).  0 / -errno. */
int rt_fence_create(struct rt_device *d, uint64_t initial, struct rt_fence **out);
/* Destroy f (no waits pending; event waits still registered are set, os.h).
 * The handle stays refusable until its device is destroyed: every later
 * rt_fence_* / queue Signal or Wait on f returns -EIDRM (a second destroy
 * does nothing), GetCompletedValue UINT64_MAX; a use racing the destroy
 * from another thread is the caller's bug, as in D3D12. */
void rt_fence_destroy(struct rt_fence *f);
bool rt_fence_destroyed(const struct rt_fence *f);
uint64_t rt_fence_completed(struct rt_fence *f);         /* GetCompletedValue: UINT64_MAX once removed or destroyed */
/* CPU Signal (ID3D12Fence::Signal: "occurs immediately"): the value is
 * written and every waiter it satisfies is released before the call returns
 * (os_fence_signal_cpu); a rewind signaled next takes none of that back.
 * 0 / -EIO (device removed) / -ERANGE (32-bit GPU, too far from the last value). */
int rt_fence_signal(struct rt_fence *f, uint64_t v);
int rt_fence_wait(struct rt_fence *f, uint64_t v, int64_t timeout_ns);   /* 0 / -ETIMEDOUT / -EIO / -EIDRM (destroyed) */
/* The timeline trace (os.h): the calling thread CPU-waited for f >= v from
 * t0 until now another way (an event set on completion), with result rc.
 * Any thread; a no-op when the adapter does not trace. */
void rt_fence_trace_wait(struct rt_fence *f, uint64_t v, uint64_t t0, int rc);
struct os_fence *rt_fence_os(struct rt_fence *f);

/* Tests only: when set, called on a user-mode submission between connecting
 * (or finding the doorbell connected) and making the buffer visible and
 * ringing — the window in which a victimization makes the ring land on the
 * dummy page.  Set before the submitting threads start. */
extern void (*rt_test_ring_hook)(struct rt_queue *q);

/* ---- commands, cross-adapter fences, events (scenarios and rigs) ----
 *
 * A command buffer for rt_queue_submit or rt_direct_queue_submit (stack.h)
 * is an array of struct hw_cmd: WORK and STAMP are written as they are; a
 * fence's GPU Signal and Wait come from these builders, so that no caller
 * names the fence's hardware storage.  Any thread; never block. */
struct hw_cmd rt_cmd_signal(struct rt_fence *f, uint64_t v);   /* SIGNAL(f, v) */
struct hw_cmd rt_cmd_wait(struct rt_fence *f, uint64_t v);     /* WAIT(f, v): the GPU waits (native) or the OS holds it */

/* A cross-adapter fence on d (native where the adapter supports it), opened
 * on other devices with rt_fence_open_cross; each instance is a fence of its
 * device (destroyed with it or by rt_fence_destroy).  0 / -errno of
 * os_fence_create and os_fence_open_cross.  Setup thread. */
int rt_fence_create_cross(struct rt_device *d, uint64_t initial, struct rt_fence **out);
int rt_fence_open_cross(struct rt_fence *f, struct rt_device *other, struct rt_fence **out);

/* Event-style CPU wait: ev is set once the fence reaches v (at once if it
 * has; on device removal too: every fence then reads UINT64_MAX).  Any
 * thread; never blocks.  0 / -ERANGE (a 32-bit GPU, v too far ahead). */
int rt_fence_wait_event(struct rt_fence *f, uint64_t v, struct lf_event *ev);

#endif
