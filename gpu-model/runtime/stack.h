/* gpu-model/runtime/stack.h — the one way into the model: bring-up and
 * teardown of the whole stack, and what scenarios and rigs read of it.
 *
 * A stack is one adapter (the GPU and its engines), its OS (interrupt
 * thread), user-mode submission support (the OS scheduler and power
 * threads) and one runtime device on it — the state of a process that opened
 * a D3D device on that adapter.  Fences and queues are the device's
 * (rt.h: rt_fence_create, rt_queue_create, rt_stack_device()), plus the
 * direct queue below.  Scenarios, rigs and micro-benchmarks reach the model
 * through here and rt.h only; the os_ and hw_ types they still see (struct
 * os_config, os_stats, hw_cmd, ...) are re-exported on purpose, as data.
 *
 * Bring-up order: adapter created and started (engines, interrupt thread),
 * user-mode submission attached, device created.  Teardown is the reverse:
 * the device is closed the normal way (what was queued on its queues
 * completes), the engines stop, the device's fences and queues are freed,
 * the OS threads stop, the adapter goes.  The engines stop before any fence
 * is freed because a signal's CMP part still reads the fence after the
 * value a CPU waiter returns on is written.  Direct queues are not drained:
 * what is still in them is dropped with the adapter.
 *
 *   call                                       who                            blocks?
 *   rt_stack_create / rt_stack_destroy         one setup thread               create: starts threads;
 *                                                                             destroy: drains, joins
 *   rt_direct_queue_create                     the setup thread, not          no
 *                                                concurrently with rt_queue_create
 *   rt_direct_queue_submit                     the queue's one submitting     only while its ring is full
 *                                                thread
 *   rt_stack_*_tid, rt_stack_engines,          any thread                     no (wait-free reads)
 *     rt_stack_*_stats, rt_stack_ddi_count,
 *     rt_stack_engine_fstate
 * Statistics are relaxed reads of single-writer counters: exact once the
 * threads that write them are idle, a consistent-enough snapshot otherwise.
 */
#ifndef RT_STACK_H
#define RT_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gpu-model/runtime/rt.h"

struct rt_stack;
struct rt_direct_queue;

/* Which WDDM generation the adapter and OS are. */
enum rt_path {
	RT_PATH_NATIVE,   /* WDDM 3.2: native GPU fences, user-mode submission */
	RT_PATH_LEGACY,   /* WDDM 2.x: monitored fences only */
};

struct rt_stack_config {
	struct os_config os;          /* the adapter's caps (engines, their CPUs, payload, ...) and the OS (irq_cpu, ...) */
	struct os_ums_config ums;     /* user-mode submission (scheduler and power thread CPUs, drain timeout,
	                               * the size of each user-mode HW queue's native fence log buffers) */
};

/* ---- timing profiles ----
 *
 * A timing profile is what one real machine's GPU side (struct hw_timing:
 * command processor, write visibility, HW wait polls, doorbell, interrupt
 * raise) and kernel-mode submission path (struct os_timing) take, which the
 * model otherwise does at host-CPU speed.  The profile named "ideal" has
 * every latency 0: the model as it runs without one.  Where and how each is
 * spent: gpu-model/hw/timing.c, gpu-model/os/timing.c.  Pure data: any
 * thread. */
#define RT_PROFILE_NAME_MAX 64
struct rt_profile {
	char name[RT_PROFILE_NAME_MAX];   /* "ideal", or the profile file's "name" */
	struct hw_timing hw;
	struct os_timing os;
};
/* The "ideal" profile. */
void rt_profile_ideal(struct rt_profile *p);
/* True when every latency of p is 0 (whatever its name). */
bool rt_profile_is_ideal(const struct rt_profile *p);
/* Put p's latencies into cfg (the adapter's caps and the OS's config). */
void rt_profile_apply(const struct rt_profile *p, struct os_config *cfg);

/* Defaults for a path: os_config_default with native fences on (native) or
 * off in both the caps and the OS (legacy); os_ums_config_default.  Nothing
 * pinned.  Any thread. */
void rt_stack_config_default(struct rt_stack_config *cfg, enum rt_path path);

/* Bring the whole stack up.  0; -EINVAL with a one-line reason in err (bad
 * caps, native support advertised but not enabled, bad doorbell caps, a
 * log buffer size out of range);
 * -errno (threads, memory, device table).  Nothing is left on failure. */
int rt_stack_create(const struct rt_stack_config *cfg, struct rt_stack **out, char *err, size_t errlen);
/* Tear it down (order above).  No thread may use the stack's fences or
 * queues any more; no CPU wait may be in progress.  0, or -ETIMEDOUT when a
 * queue did not drain (everything is freed anyway). */
int rt_stack_destroy(struct rt_stack *s);
struct rt_device *rt_stack_device(struct rt_stack *s);
bool rt_stack_native(const struct rt_stack *s);   /* native fences supported and enabled */

/* ---- role threads (pinning is in the config; these are for perf and reports) ---- */

unsigned rt_stack_engines(const struct rt_stack *s);
pid_t rt_stack_engine_tid(const struct rt_stack *s, unsigned engine);
pid_t rt_stack_irq_tid(const struct rt_stack *s);     /* the OS interrupt thread */
pid_t rt_stack_sched_tid(const struct rt_stack *s);   /* the OS scheduler (kernel-mode submission) */
pid_t rt_stack_power_tid(const struct rt_stack *s);   /* the OS power thread (engine F-states) */

/* ---- statistics ---- */

/* Settle the stack before reading counters at a region's edge: return once
 * every engine has finished the run it was in at the call (its signals'
 * interrupts raised) and the interrupt thread has handled every interrupt
 * raised before that.  A CPU that saw a fence value may run ahead of the
 * interrupt the same signal raises; without this, a count read at an edge
 * could split a signal from its interrupt.  Any thread but the interrupt
 * thread; blocking (bounded by the runs in progress). */
void rt_stack_settle(struct rt_stack *s);
/* The same without the RCU grace period rt_stack_settle also waits for (no
 * fence's storage is waited on): the engines' runs done and every interrupt
 * they raised handled.  Cheap enough to run between two timed operations. */
void rt_stack_settle_irqs(struct rt_stack *s);

void rt_stack_os_stats(struct rt_stack *s, struct os_stats *out);         /* interrupts, waits, power proxy */
void rt_stack_ums_stats(struct rt_stack *s, struct os_ums_stats *out);    /* doorbells, F/D-states, km submits */
void rt_stack_cross_stats(struct rt_stack *s, struct os_cross_stats *out);  /* cross-adapter propagation */
uint64_t rt_stack_ddi_count(struct rt_stack *s, enum os_ddi ddi);          /* DDI calls made on the adapter */
void rt_stack_engine_um_stats(struct rt_stack *s, unsigned engine, struct hw_engine_um_stats *out);
/* The engine's counters: signals, interrupts, commands, parks, busy time (GPU idle = elapsed - busy). */
void rt_stack_engine_stats(struct rt_stack *s, unsigned engine, struct hw_engine_stats *out);
enum hw_fstate rt_stack_engine_fstate(struct rt_stack *s, unsigned engine);   /* F0 polling / F1 parked */
/* Preemptions, where they happened, context saves and resets of an engine (hw.h). */
void rt_stack_engine_preempt_stats(struct rt_stack *s, unsigned engine, struct hw_engine_preempt_stats *out);
/* Another process's device on the stack's adapter (a TDR makes one guilty
 * and leaves the others); destroy it with rt_device_destroy before
 * rt_stack_destroy.  0 / rt_device_create's errors.  The setup thread. */
int rt_stack_device_create(struct rt_stack *s, struct rt_device **out);

/* ---- the timeline trace (os.h, "the timeline trace") ----
 *
 * rt_stack_trace_start: from now on the OS keeps trace records (interrupt
 * handling, the log entries it reads, lost entries) and the runtime adds its
 * FENCE_*_QUEUED events and CPU waits; user-mode queues' log buffers are
 * enlarged first (os_ums_trace_start).  rt_stack_trace_flush: settle and
 * read every log's last entries; then rt_stack_trace_take copies the records.  Log entries carry GPU
 * timestamps: rt_stack_clock_calibration converts them to lf_now_ns's clock.
 *
 *   rt_stack_trace_start       the setup thread, no log recreation running     no
 *   rt_stack_trace_flush       the setup thread, no submission in progress     settles (rt_stack_settle)
 *   rt_stack_trace_take        the setup thread, after rt_stack_trace_flush     no
 *   rt_stack_clock_calibration any thread                                      no
 */
/* records: capacity (0: OS_TRACE_RECORDS_DEFAULT).  0, -EALREADY, -ENOMEM. */
int rt_stack_trace_start(struct rt_stack *s, size_t records);
bool rt_stack_tracing(const struct rt_stack *s);
/* Records kept so far. */
size_t rt_stack_trace_count(const struct rt_stack *s);
/* Settle the stack and read the logs' last entries (those no interrupt made
 * the OS read); returns the records kept, the bound for rt_stack_trace_take. */
size_t rt_stack_trace_flush(struct rt_stack *s);
/* Copy up to max records into out; *dropped: records not copied. */
size_t rt_stack_trace_take(struct rt_stack *s, struct os_trace_rec *out, size_t max, uint64_t *dropped);
/* ID3D12CommandQueue::GetClockCalibration + GetTimestampFrequency: a GPU
 * timestamp and the lf_now_ns of the same instant, and the GPU counter's
 * frequency (Hz). */
void rt_stack_clock_calibration(struct rt_stack *s, uint64_t *gpu, uint64_t *cpu_ns, uint64_t *hz);

/* ---- the direct queue ----
 *
 * A queue whose command buffers the OS writes into the engine's ring on the
 * submitting thread (os_queue_submit): no scheduler thread, no kernel
 * crossing, no progress fence — the signals a fence workload measures are
 * the only signals the queue makes (a progress write would double the
 * interrupts of the legacy path).  A WAIT on a monitored fence is held on
 * the CPU by the OS, with everything after it.  Freed with the stack. */

/* 0 / -ENOSPC (queue tables full) / -EINVAL (engine, ring_slots not a power of two). */
int rt_direct_queue_create(struct rt_stack *s, unsigned engine, size_t ring_slots, struct rt_direct_queue **out);
/* Submit cmds[0..n) (WORK, STAMP, COUNT, rt_cmd_signal, rt_cmd_wait); they
 * are copied.  0 / -EINVAL (a bad command) / -ENOMEM (held on the CPU, no memory). */
int rt_direct_queue_submit(struct rt_direct_queue *q, const struct hw_cmd *cmds, size_t n);

#endif
