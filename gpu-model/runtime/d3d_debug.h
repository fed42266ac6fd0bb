/* gpu-model/runtime/d3d_debug.h — the validation layer for multi-queue
 * resource access (seed multi-engine-synchronization, "Multi-queue resource
 * access"), as the D3D12 debug layer is: off unless a title creates one and
 * names it in the queues it creates (rt_cqueue_desc.debug).
 *
 * Resources.  A resource has one state, shared by every queue of a type
 * class: compute/3D is one class, copy the other.  "The resource states
 * that are shared between the two type classes (COPY_SOURCE and COPY_DEST)
 * are considered different states for each type class": the layer keeps
 * which class set a COPY_* state.  A copy queue uses a resource in COMMON
 * ("The COMMON state can be used for all usages on a Copy queue using the
 * implicit state transitions") or in a COPY_* state of its own class; a
 * compute/3D queue in the state its access names (COMMON promotes to
 * COPY_SOURCE, COPY_DEST or SHADER_RESOURCE on first use); a barrier in a
 * list moves the state (its `before` must be the state).  A presented
 * resource must be in COMMON (rt_debug_present).
 *
 * Races.  "Only one queue can write to a resource at a time"; readers must
 * not read what an unsynchronized writer writes; "a fence must be used to
 * synchronize after writing before another queue can read the written bytes
 * or make any write access".  Happens-before comes from the fences actually
 * signaled and waited: a vector clock per queue timeline and one for the
 * title's CPU thread.  A queue Signal records its queue's clock; a queue
 * Wait joins the clock of the first signal of that fence seen to reach the
 * value; every command the CPU records carries the CPU's clock (the CPU
 * knows what it waited for: rt_debug_cpu_waited).  The layer replays each
 * queue's operations in queue order, a Wait only once a signal it needs was
 * replayed (a Wait no recorded signal satisfies stays pending:
 * rt_debug_pending).  Two accesses of one resource by two queues, one a
 * write, neither ordered before the other, are a race, reported with both
 * submissions: "race on tex1: copy0 (execute #3) writes it while direct0
 * (execute #2) reads it; no fence orders them".  A CPU Signal the title
 * makes must be told too (rt_debug_cpu_signal), or the waits on it stay
 * pending.  Per fence the layer keeps the last RT_DEBUG_SIGNALS signals.
 *
 *   call                                    who                              blocks?
 *   rt_debug_create/destroy                 one thread; destroy after the    no
 *                                             queues that name it are done
 *   rt_resource_create                      any thread                       no
 *   rt_clist_access/_barrier                the list's recording thread      no
 *   queue calls (through rt_cqueue_*),      any thread (one mutex)           no (short lock)
 *     rt_debug_cpu_*, _present, _errors,
 *     _message, _pending
 */
#ifndef RT_D3D_DEBUG_H
#define RT_D3D_DEBUG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu-model/runtime/d3d.h"

#define RT_DEBUG_QUEUES 16              /* queue timelines one layer follows */
#define RT_DEBUG_MESSAGES 64            /* messages kept (all are counted) */
#define RT_DEBUG_SIGNALS 64             /* signals kept per fence */
#define RT_LIST_MAX_USES 64             /* resource uses one list declares */

/* D3D12_RESOURCE_STATES, the ones the seed's rules name. */
enum rt_state {
	RT_STATE_COMMON,                /* also PRESENT */
	RT_STATE_COPY_SOURCE,
	RT_STATE_COPY_DEST,
	RT_STATE_SHADER_RESOURCE,
	RT_STATE_UNORDERED_ACCESS,
	RT_STATE_RENDER_TARGET,
	RT_STATES
};
const char *rt_state_name(enum rt_state s);

struct rt_debug;
struct rt_resource;

int rt_debug_create(struct rt_debug **out);              /* 0 / -ENOMEM */
void rt_debug_destroy(struct rt_debug *v);               /* frees its resources too */
/* A resource the layer follows, in `initial` (COPY_* initial states are of
 * the compute/3D class).  0 / -EINVAL / -ENOMEM.  Freed with v. */
int rt_resource_create(struct rt_debug *v, const char *name, enum rt_state initial, struct rt_resource **out);

/* Declare, in a recording list, that its work reads or writes r in state s,
 * or moves r from before to after (a ResourceBarrier).  The list's commands
 * are not changed.  0 / -EPERM (closed) / -ENOSPC (RT_LIST_MAX_USES) / -EINVAL. */
int rt_clist_access(struct rt_clist *l, struct rt_resource *r, enum rt_state s, bool write);
int rt_clist_barrier(struct rt_clist *l, struct rt_resource *r, enum rt_state before, enum rt_state after);

/* The title's CPU Signal of f to value / its CPU thread saw f reach value. */
void rt_debug_cpu_signal(struct rt_debug *v, struct rt_fence *f, uint64_t value);
void rt_debug_cpu_waited(struct rt_debug *v, struct rt_fence *f, uint64_t value);
/* Present r: it must be in COMMON.  0 / -EINVAL (reported too). */
int rt_debug_present(struct rt_debug *v, struct rt_resource *r);

size_t rt_debug_errors(struct rt_debug *v);              /* reports so far (races, states) */
/* Message i (< RT_DEBUG_MESSAGES and < errors), copied into buf. */
void rt_debug_message(struct rt_debug *v, size_t i, char *buf, size_t len);
size_t rt_debug_pending(struct rt_debug *v);             /* operations not replayed yet */

/* Re-recording a list in flight.  Seed multi-engine-synchronization,
 * "Asynchronous compute and graphics example": "There must be multiple
 * command lists to allow the ComputeGraphicsLatency frames of graphics work
 * to be in flight at a time".  D3D12 lets a title Reset a list right after
 * ExecuteCommandLists (it is the list's allocator that must not be reset
 * while its work runs), and the model's queues copy what they execute, so
 * the layer does not refuse it; it counts every rt_clist_reset of a list
 * whose last execution, on a queue that names this layer, had not completed
 * (`in_flight`), and of those the ones where an earlier execution of that
 * queue had not completed either (`older_in_flight`: the title re-records
 * further ahead than a throttle that waited for everything before that
 * execution lets it).  `msg` (may be NULL): the last one, e.g. "list reset
 * while its execution on direct0 (execute #5) is in flight".  A list must
 * not be reset after the layer it last executed under was destroyed. */
struct rt_debug_resets {
	uint64_t in_flight, older_in_flight;
};
void rt_debug_resets(struct rt_debug *v, struct rt_debug_resets *out, char *msg, size_t len);

#endif
