/* gpu-model/runtime/d3d.h — the D3D12 multi-engine API (seed
 * multi-engine-synchronization): command queues of a type (direct, compute,
 * copy) and a priority, command lists that record copy / dispatch / draw
 * work, ExecuteCommandLists, queue Signal and Wait, fence events
 * (SetEventOnCompletion, SetEventOnMultipleFenceCompletion) and waits on
 * several events (WaitForMultipleObjects).  Built on rt.h: a command queue is
 * an rt_queue (user-mode or kernel-mode submission, its progress fence), a
 * fence is an rt_fence (native where the adapter supports it, monitored on
 * the legacy path), so a title written against this header runs unchanged on
 * both fence paths and both submission paths.
 *
 * Engines.  "The 3D queue can drive all three GPU engines; the compute queue
 * can drive the compute and copy engines; and the copy queue simply the copy
 * engine."  A queue runs on the engine of its type (rt_engine_for_type):
 * engine 0 is the 3D engine, engine 1 the compute engine, engine 2 the copy
 * engine; an adapter with fewer engines folds the missing ones onto the last
 * it has (one engine: everything on engine 0; two: copy shares the compute
 * engine).  Any number of queues may share an engine (HW_MAX_QUEUES).  What a
 * list type may record follows the same rule (rt_list_type_holds): a direct
 * list holds draw, dispatch and copy; a compute list dispatch and copy; a
 * copy list copy only; a bundle draw and dispatch — and "bundles are not
 * consumed by any queues": no bundle queue, no bundle executed on a queue;
 * a direct list executes one (rt_clist_execute_bundle), compute and copy
 * lists refuse to.  The work a
 * direct queue records for compute or copy runs on its own (3D) engine, as a
 * 3D engine runs a direct list's copies itself.
 *
 * Pipeline state.  "Compute command lists must set a compute PSO when
 * calling SetPipelineState."  A PSO (struct rt_pso: graphics or compute, as
 * CreateGraphicsPipelineState / CreateComputePipelineState make one) is the
 * list's pipeline state, given at creation (rt_clist_create_pso: the
 * pInitialState of CreateCommandList) or by rt_clist_set_pipeline_state.  A
 * compute list refuses a graphics PSO, and refuses to record a dispatch
 * until a compute PSO is set: a compute list that reaches a queue holds no
 * dispatch without one.  Its copies need none (they use no pipeline).  A
 * copy list has no pipeline state (SetPipelineState is not among its
 * methods); a direct list or a bundle takes either kind and is not checked
 * further (the seed's rule is the compute list's).  rt_clist_reset clears
 * the state, as Reset with no initial state does.
 *
 * Priorities go to the queue's HW queue (rt_queue_desc.priority: NORMAL 0,
 * HIGH 1, GLOBAL_REALTIME 2): an engine runs its highest-priority runnable
 * queue and preempts lower work at the boundary its granularity allows
 * (gpu-model/hw/preempt.c); queues of equal priority take turns.
 *
 * Default queues.  "The Direct3D 12 device has methods to create and
 * retrieve command queues of different types and priorities.  Most
 * applications should use the default command queues because these allow
 * for shared usage by other components."  rt_cqueue_create makes a queue of
 * the caller's own; rt_device_default_queue retrieves the device's queue of
 * a type and a priority, the same object for every component that asks.
 *
 * Submission paths.  desc.user_mode asks for user-mode submission.  It needs
 * native fences (WDDM 3.2): on a device whose fences are monitored (the
 * legacy path) the queue is a kernel-mode queue, as the runtime of a WDDM 2.x
 * driver has no other; rt_cqueue_user_mode tells which it got.
 *
 * Fences.  rt_fence (rt.h) is ID3D12Fence: rt_fence_completed is
 * GetCompletedValue, rt_fence_signal the CPU Signal ("this update occurs
 * immediately"), rt_cqueue_signal the queue's Signal ("after all other
 * operations on the command queue have been completed"), rt_cqueue_wait the
 * queue's Wait (native: the engine waits in hardware; legacy: the OS holds
 * the queue's later work on the CPU).  Rewinding (seed, "A fence may be
 * rewound") is the OS's release rule (os.h): a lower value may be signaled;
 * waits and events registered after it compare against the lower value and
 * only a value written after they registered releases them (never an
 * interrupt for a higher value written before the rewind, still in flight);
 * a wait a racing higher value satisfied stays satisfied.
 *
 * Validation.  The multi-queue resource access rules (states per queue
 * type class, races between queues) are checked by the validation layer,
 * gpu-model/runtime/d3d_debug.h: off unless a queue names one.
 *
 * Errors.  Actions return 0 or -errno, and the object keeps a one-line text
 * of its last refusal (rt_clist_error, rt_cqueue_error) naming what was
 * refused and why: "copy list cannot hold a draw (copy lists hold: copy)".
 *
 *   call                                  who                                   blocks?
 *   rt_cqueue_create / _destroy           any thread (destroy: no call of it    no
 *                                           in progress; its rt_queue stays the
 *                                           device's, drained with it)
 *   rt_device_default_queue               any thread                            no (a lock, held while
 *                                                                                 the queue is made)
 *   rt_cqueue_execute/_signal/_wait       one submitting thread per queue;      as rt_queue_submit
 *                                           any thread on a default queue (it
 *                                           takes its lock around each call)
 *   rt_cqueue_finish                      any thread                            yes (timeout)
 *   rt_clist_*                            one thread per list at a time         no
 *   rt_pso_kind_name                      any thread                            no
 *   rt_fence_set_event(_multi)            any thread                            no
 *   rt_event_set/reset/is_set             any thread                            no
 *   rt_event_wait(_multi)                 any thread (one waiter per            yes (timeout)
 *                                           auto-reset event)
 */
#ifndef RT_D3D_H
#define RT_D3D_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu-model/runtime/rt.h"

/* D3D12_COMMAND_LIST_TYPE: of a queue and of a list. */
enum rt_list_type { RT_LIST_DIRECT, RT_LIST_COMPUTE, RT_LIST_COPY, RT_LIST_BUNDLE, RT_LIST_TYPES };
/* What a list records: each is WORK of a duration on the engine it runs on. */
enum rt_op { RT_OP_COPY, RT_OP_DISPATCH, RT_OP_DRAW, RT_OPS };
/* D3D12_COMMAND_QUEUE_PRIORITY */
enum rt_priority { RT_PRIORITY_NORMAL, RT_PRIORITY_HIGH, RT_PRIORITY_GLOBAL_REALTIME };

const char *rt_list_type_name(enum rt_list_type t);   /* "direct", "compute", "copy", "bundle" */
const char *rt_op_name(enum rt_op op);                /* "copy", "dispatch", "draw" */
/* May a list (and queue) of type t hold op?  Any thread. */
bool rt_list_type_holds(enum rt_list_type t, enum rt_op op);
/* The engine a queue of type t runs on, on an adapter of `engines` engines. */
unsigned rt_engine_for_type(unsigned engines, enum rt_list_type t);

/* ---- command lists ---- */

#define RT_LIST_MAX_CMDS 256            /* WORK commands (recorded ops) one list holds */

struct rt_clist;

/* ID3D12PipelineState, as far as the model needs one: its kind and a name
 * for messages.  The caller's; it outlives the lists it is set on. */
enum rt_pso_kind { RT_PSO_GRAPHICS, RT_PSO_COMPUTE };
struct rt_pso {
	enum rt_pso_kind kind;
	const char *name;
};
const char *rt_pso_kind_name(enum rt_pso_kind k);      /* "graphics", "compute" */

/* A list of type t, recording, with no pipeline state.  0 / -EINVAL (no such
 * type) / -ENOMEM. */
int rt_clist_create(enum rt_list_type t, struct rt_clist **out);
/* The same with pipeline state pso (NULL: none), set as
 * rt_clist_set_pipeline_state sets it: 0 / -EINVAL (no such type; a PSO the
 * type refuses, with nothing created) / -ENOMEM. */
int rt_clist_create_pso(enum rt_list_type t, const struct rt_pso *pso, struct rt_clist **out);
/* SetPipelineState.  0; -EINVAL (pso NULL; a copy list; a compute list given
 * a graphics PSO: the list keeps its state); -EPERM (closed). */
int rt_clist_set_pipeline_state(struct rt_clist *l, const struct rt_pso *pso);
const struct rt_pso *rt_clist_pipeline_state(const struct rt_clist *l);   /* NULL: none */
void rt_clist_destroy(struct rt_clist *l);
/* Record op: one WORK of ns made of `units` sub-units (triangles of a draw,
 * thread groups of a dispatch: the points at which an engine whose
 * granularity allows it may switch to another queue; a dispatch follows the
 * compute granularity, a draw or a copy the graphics one).  0; -EINVAL (the
 * list type cannot hold op, units 0, a dispatch on a compute list without a
 * compute PSO); -EPERM (the list is closed); -ENOSPC (RT_LIST_MAX_CMDS
 * reached).  A refused command records nothing. */
int rt_clist_record(struct rt_clist *l, enum rt_op op, uint64_t ns, unsigned units);
int rt_clist_copy(struct rt_clist *l, uint64_t ns);       /* one unit each */
int rt_clist_dispatch(struct rt_clist *l, uint64_t ns);
int rt_clist_draw(struct rt_clist *l, uint64_t ns);
/* ID3D12GraphicsCommandList::ExecuteBundle: record the closed bundle's
 * commands (and the resource uses it declared) into the direct list l, in
 * l's order; the bundle stays as it is and may be executed again.  Seed:
 * "Bundles cannot be used with compute or copy command lists or queues".
 * 0; -EINVAL (l is not a direct list: a compute, copy list or a bundle;
 * bundle is not a bundle); -EBUSY (the bundle is still recording); -EPERM
 * (l is closed); -ENOSPC (RT_LIST_MAX_CMDS or RT_LIST_MAX_USES).  A refusal
 * records nothing and says why in rt_clist_error(l). */
int rt_clist_execute_bundle(struct rt_clist *l, const struct rt_clist *bundle);
/* Close: 0 / -EPERM (not recording).  Reset: empty and recording again (the
 * queues copied what they executed: a list may be reset right after; a
 * validation layer counts a Reset while its execution runs: d3d_debug.h). */
int rt_clist_close(struct rt_clist *l);
void rt_clist_reset(struct rt_clist *l);
bool rt_clist_recording(const struct rt_clist *l);
enum rt_list_type rt_clist_type(const struct rt_clist *l);
size_t rt_clist_cmds(const struct rt_clist *l);           /* WORK commands recorded */
uint64_t rt_clist_work_ns(const struct rt_clist *l);      /* their durations added */
const char *rt_clist_error(const struct rt_clist *l);     /* the last refusal, "" if none */
/* ID3D12Object::SetName: the list's name on a timeline (its WORK carries the
 * name's tag, hw.h HW_CMD_TAG; execution records report it).  0 / -ENOSPC
 * (the process has RT_NAME_TAGS names already: the list stays unnamed).
 * Any thread (names are interned under a lock). */
int rt_clist_set_name(struct rt_clist *l, const char *name);
/* The name of a tag, NULL for 0 or an unknown tag.  Any thread. */
const char *rt_tag_name(uint32_t tag);

/* ---- command queues ---- */

struct rt_cqueue;
struct rt_debug;

struct rt_cqueue_desc {
	enum rt_list_type type;         /* direct, compute or copy (a bundle queue: -EINVAL) */
	enum rt_priority priority;
	bool user_mode;                 /* user-mode submission where fences are native */
	size_t ring_slots;              /* as rt_queue_desc (0: the default) */
	const char *name;               /* for messages ("copy0"); NULL: "<type><n>" */
	struct rt_debug *debug;         /* the validation layer to report to (d3d_debug.h); NULL: off */
};

/* 0; -EINVAL (bundle or unknown type, priority, ring_slots); -ENOSPC (the
 * validation layer follows RT_DEBUG_QUEUES queues); the errors of rt_queue_create. */
int rt_cqueue_create(struct rt_device *d, const struct rt_cqueue_desc *desc, struct rt_cqueue **out);
void rt_cqueue_destroy(struct rt_cqueue *q);
/* ExecuteCommandLists: lists[0..n) in order, as command buffers of up to
 * RT_MAX_CMDS commands each.  Every list is checked before anything is
 * submitted: 0; -EBUSY (a list is still recording); -EINVAL (a bundle, a
 * list of another type, n == 0); -EIO (device removed); the errors of
 * rt_queue_submit (then the lists before the failing buffer were submitted). */
int rt_cqueue_execute(struct rt_cqueue *q, struct rt_clist *const *lists, size_t n);
/* Signal / Wait (GPU side), in the queue's order.  0 / the errors of rt_queue_submit. */
int rt_cqueue_signal(struct rt_cqueue *q, struct rt_fence *f, uint64_t v);
int rt_cqueue_wait(struct rt_cqueue *q, struct rt_fence *f, uint64_t v);
/* CPU wait until everything submitted so far completed.  0 / -ETIMEDOUT / -EIO. */
int rt_cqueue_finish(struct rt_cqueue *q, int64_t timeout_ns);

/* The device's default queue of type t and priority p.  Made on the first
 * retrieval — user-mode submission where the device's fences are native,
 * no validation layer, named "default-<type>" ("-high", "-realtime" for the
 * higher priorities) — and the same object for every later retrieval, from
 * any thread.  It belongs to the device: rt_device_destroy frees it, and
 * rt_cqueue_destroy on it is misuse (asserts).  Shared by components on
 * several threads, it serializes their execute, signal and wait calls, so
 * each call's commands stay together in the queue's one order.  0; -EINVAL
 * (a bundle or unknown type, an unknown priority); the errors of
 * rt_cqueue_create (nothing kept: a later retrieval tries again). */
int rt_device_default_queue(struct rt_device *d, enum rt_list_type t, enum rt_priority p, struct rt_cqueue **out);
bool rt_cqueue_is_default(const struct rt_cqueue *q);   /* one of its device's default queues */

enum rt_list_type rt_cqueue_type(const struct rt_cqueue *q);
enum rt_priority rt_cqueue_priority(const struct rt_cqueue *q);
unsigned rt_cqueue_engine(const struct rt_cqueue *q);
bool rt_cqueue_user_mode(const struct rt_cqueue *q);
const char *rt_cqueue_name(const struct rt_cqueue *q);
struct rt_queue *rt_cqueue_queue(struct rt_cqueue *q);
/* What the queue is stuck behind, as far as its submitter can tell: the
 * oldest of its last RT_CQUEUE_WAITS Waits whose fence has not reached the
 * value, while the queue has unfinished work.  True and *f, *v; false: no
 * such wait (idle, or busy with work).  The submitting thread. */
#define RT_CQUEUE_WAITS 32
bool rt_cqueue_blocked_wait(const struct rt_cqueue *q, struct rt_fence **f, uint64_t *v);
/* The handle the timeline trace's records name the queue by (os.h: its HW
 * queue's hw_queue_handle). */
uint64_t rt_cqueue_trace_handle(struct rt_cqueue *q);
/* The last refusal, "" if none (of a default queue: read it while no other
 * component submits to it). */
const char *rt_cqueue_error(const struct rt_cqueue *q);

struct rt_cqueue_stats {
	uint64_t executes;              /* successful rt_cqueue_execute calls */
	uint64_t lists;                 /* lists they executed */
	uint64_t ops[RT_OPS];           /* copy / dispatch / draw sub-units executed (a command of n units: n) */
	uint64_t work_ns;               /* GPU work submitted */
	uint64_t signals, waits;        /* queue Signal / Wait */
};
/* The submitting thread, or any once it stopped. */
void rt_cqueue_stats(const struct rt_cqueue *q, struct rt_cqueue_stats *out);

/* ---- events and fence completion ---- */

#define RT_WAIT_MAX 64                  /* MAXIMUM_WAIT_OBJECTS */

struct rt_event;

/* CreateEvent(manual_reset, initial).  0 / -ENOMEM. */
int rt_event_create(bool manual_reset, bool initial, struct rt_event **out);
/* No fence may still be due to set it (its value reached, the fence
 * destroyed, or the device down). */
void rt_event_destroy(struct rt_event *e);
void rt_event_set(struct rt_event *e);
void rt_event_reset(struct rt_event *e);
bool rt_event_is_set(const struct rt_event *e);
/* WaitForSingleObject: 0 once set (an auto-reset event is reset on the way
 * out) / -ETIMEDOUT (timeout_ns < 0: forever). */
int rt_event_wait(struct rt_event *e, int64_t timeout_ns);
/* WaitForMultipleObjects(n, evs, all, timeout): any — the index of a set
 * event (the lowest, and only that one is reset if auto-reset); all — 0 once
 * every one was seen set (each auto-reset one reset).  -ETIMEDOUT; -EINVAL
 * (n == 0); -E2BIG (n > RT_WAIT_MAX: nothing waited).  "All" waits for the
 * events one after the other: an auto-reset event set and consumed by
 * another thread meanwhile is not modeled (one waiter per auto-reset event). */
int rt_event_wait_multi(struct rt_event *const *evs, size_t n, bool all, int64_t timeout_ns);

/* ID3D12Fence::SetEventOnCompletion: e is set once f reaches v — at once
 * when it has; UINT64_MAX is accepted (reached on device removal, when every
 * fence reads UINT64_MAX).  One event may wait for several values, several
 * events for one value.  0 / -EINVAL (e NULL) / -ERANGE (32-bit GPU). */
int rt_fence_set_event(struct rt_fence *f, uint64_t v, struct rt_event *e);
/* ID3D12Device1::SetEventOnMultipleFenceCompletion: e is set when all (or
 * any) of f[i] reached v[i].  0 / -EINVAL (n == 0, e NULL) / -E2BIG (n >
 * RT_WAIT_MAX) / -ERANGE. */
int rt_fence_set_event_multi(struct rt_fence *const *f, const uint64_t *v, size_t n, bool all,
			     struct rt_event *e);

#endif
