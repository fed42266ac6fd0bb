/* gpu-model/hw/queue.c — HW queues, the submitter's and the OS's side:
 * creation (kernel- or user-mode) onto an engine's run list, submission,
 * kicks, taking a queue off the run list at a command boundary (the
 * running-queue hand-shake with engine.c), retirement, accessors.  What the
 * engine does with a queue is in engine.c.  Calls only lockfree/; contracts in
 * hw.h and doorbell.h.
 */
#include <errno.h>
#include <sched.h>

#include "gpu-model/hw/hw_internal.h"
#include "lockfree/alloc.h"
#include "lockfree/arch.h"
#include "lockfree/asym.h"
#include "lockfree/ring.h"

/* ---- caps ---- */

bool hw_engine_um_supported(const struct hw_adapter *a, unsigned engine)
{
	return engine < a->caps.engines && !(a->caps.no_um_engines & (1u << engine));
}

/* ---- queues ---- */

/* Create a queue (kernel-mode, or user-mode when um) and append it to the run list. */
static int hw_queue_new(struct hw_adapter *a, unsigned engine, size_t ring_slots, bool um, struct hw_queue **out)
{
	if (engine >= a->caps.engines)
		return -EINVAL;
	struct hw_engine *e = &a->engines[engine];
	struct hw_queue *q = lf_alloc(sizeof(*q), LF_CACHELINE);
	/* user-mode: an empty ring of one slot until hw_queue_bind_ring */
	struct lf_ring *ring = lf_ring_create(sizeof(struct hw_cmd), um ? 1 : ring_slots);
	if (!ring) {
		lf_free(q, sizeof(*q), LF_CACHELINE);
		return -EINVAL;
	}
	atomic_init(&q->ring, ring);
	q->placeholder = um ? ring : NULL;
	q->a = a;
	q->engine = engine;
	q->um = um;
	atomic_init(&q->holds, 0);          /* on the run list: nobody holds it */
	atomic_init(&q->scheduled, true);   /* HW_FAULT_HOLDS_SPLIT: its derived flag, the same */
	pthread_mutex_lock(&a->queue_lock);
	uint32_t n = atomic_load_explicit(&e->nqueues, memory_order_relaxed);
	if (n == HW_MAX_QUEUES) {
		pthread_mutex_unlock(&a->queue_lock);
		lf_ring_destroy(ring);
		lf_free(q, sizeof(*q), LF_CACHELINE);
		return -ENOSPC;
	}
	q->id = engine * HW_MAX_QUEUES + n;
	e->queues[n] = q;
	/* release: the engine sees an initialized queue once it sees the new count */
	atomic_store_explicit(&e->nqueues, n + 1, memory_order_release);
	if (um)
		atomic_fetch_add_explicit(&e->um_queues, 1, memory_order_release);
	pthread_mutex_unlock(&a->queue_lock);
	*out = q;
	return 0;
}

int hw_queue_create(struct hw_adapter *a, unsigned engine, size_t ring_slots, struct hw_queue **out)
{
	return hw_queue_new(a, engine, ring_slots, false, out);
}

int hw_queue_create_um(struct hw_adapter *a, unsigned engine, struct hw_queue **out)
{
	if (engine < a->caps.engines && !hw_engine_um_supported(a, engine))
		return -ENOTSUP;
	return hw_queue_new(a, engine, 1, true, out);
}

int hw_queue_bind_ring(struct hw_queue *q, struct lf_ring *ring)
{
	if (!q->um || !ring || lf_ring_slot_size(ring) != sizeof(struct hw_cmd))
		return -EINVAL;
	struct lf_ring *cur = atomic_load_explicit(&q->ring, memory_order_relaxed);
	if (cur == ring)
		return 0;
	if (cur != q->placeholder)
		return -EBUSY;
	/* release: the engine that loads the pointer sees the ring set up (it
	 * looks only after a connect, which comes after this) */
	atomic_store_explicit(&q->ring, ring, memory_order_release);
	return 0;
}

void hw_queue_submit(struct hw_queue *q, const struct hw_cmd *cmds, size_t n)
{
	struct hw_engine *e = &q->a->engines[q->engine];
	for (size_t i = 0; i < n; i++) {
		while (!lf_ring_push_spsc(q->ring, &cmds[i])) {
			lf_wake_notify(&e->wake);   /* full: make sure the engine drains */
			sched_yield();
		}
	}
	q->submitted += n;
	/* the doorbell: wakes the engine only if it parked (no syscall otherwise) */
	lf_wake_notify(&e->wake);
}

size_t hw_queue_submit_some(struct hw_queue *q, const struct hw_cmd *cmds, size_t n)
{
	struct hw_engine *e = &q->a->engines[q->engine];
	size_t k = 0;
	while (k < n && lf_ring_push_spsc(q->ring, &cmds[k]))
		k++;
	q->submitted += k;
	/* the doorbell (also when full: the engine must drain for the rest) */
	lf_wake_notify(&e->wake);
	return k;
}

size_t hw_queue_pending(const struct hw_queue *q)
{
	return lf_ring_size(q->ring) + (q->waiting ? 1 : 0);
}

void hw_queue_kick_at(struct hw_queue *q, uint64_t wptr)
{
	/* raise to wptr (a lower kick racing this one must not undo it); release:
	 * pairs with the engine's acquire exchange in hw_queue_refresh, so the
	 * slots below wptr, which the kicker saw published, are seen */
	uint64_t cur = atomic_load_explicit(&q->kick, memory_order_relaxed);
	while (cur < wptr && !atomic_compare_exchange_weak_explicit(&q->kick, &cur, wptr, memory_order_release,
								     memory_order_relaxed))
		;
}

void hw_queue_kick(struct hw_queue *q)
{
	/* the write pointer as of now: what was published before this call */
	hw_queue_kick_at(q, lf_ring_write_index(q->ring));
	lf_wake_notify(&q->a->engines[q->engine].wake);
}

/* Wait until the engine is not inside q.  The caller took a hold (an RMW of
 * `holds`); the heavy fence pairs with the engine's light one between its
 * store of `running` and its load of `holds` (lockfree/asym.h, a Dekker pair):
 * either the engine sees the cleared flag, or this sees q.  The engine enters
 * a queue on every pass and the KMD preempts rarely: the engine's side is the
 * cheap one. */
int hw_queue_preempt_wait_for(struct hw_queue *q, int64_t timeout_ns)
{
	struct hw_engine *e = &q->a->engines[q->engine];
	uint64_t t0 = timeout_ns >= 0 ? lf_now_ns() : 0;
	lf_asym_heavy();
	for (unsigned spin = 0; atomic_load_explicit(&e->running, memory_order_acquire) == q; spin++) {
		if (spin < 64) {
			lf_cpu_relax();
			continue;
		}
		if (timeout_ns >= 0 && lf_now_ns() - t0 >= (uint64_t)timeout_ns)
			return -ETIMEDOUT;
		sched_yield();
	}
	return 0;
}

void hw_queue_preempt_wait(struct hw_queue *q)
{
	hw_queue_preempt_wait_for(q, -1);
}

/* Tests only (doorbell.h): NULL in every production path. */
void (*hw_test_hold_hook)(struct hw_queue *q, uint32_t who, bool on, int stage);

/* Set or clear `who` in q->holds, without waiting.  The run list reads the
 * word itself (hw_queue_on_list: no hold), so one seq_cst RMW both publishes
 * the hold and decides whether q is on the run list: no second step that a
 * racing owner's hold could fall behind.  The RMW is the heavy side's store
 * of the Dekker pair with the engine (hw_queue_preempt_wait_for).
 *
 * HW_FAULT_HOLDS_SPLIT, broken on purpose: the run list reads a separate
 * `scheduled` flag, stored from what the RMW returned, then stored again
 * until `holds` did not change meanwhile.  A release's stale `true` can land
 * after the other owner's hold and its preemption wait returned: the engine
 * enters a queue its owner believes it is out of. */
static bool hw_queue_hold_set(struct hw_queue *q, uint32_t who, bool on)
{
	uint32_t h = on ? atomic_fetch_or_explicit(&q->holds, who, memory_order_seq_cst) | who
			: atomic_fetch_and_explicit(&q->holds, ~who, memory_order_seq_cst) & ~who;
	if (hw_test_hold_hook)
		hw_test_hold_hook(q, who, on, 0);
	if (q->a->caps.fault != HW_FAULT_HOLDS_SPLIT)
		return h == 0;
	for (;;) {
		atomic_store_explicit(&q->scheduled, h == 0, memory_order_seq_cst);
		if (hw_test_hold_hook)
			hw_test_hold_hook(q, who, on, 1);
		uint32_t again = atomic_load_explicit(&q->holds, memory_order_seq_cst);
		if (again == h)
			return h == 0;
		h = again;
	}
}

bool hw_queue_hold(struct hw_queue *q, uint32_t who, bool on)
{
	bool sched = hw_queue_hold_set(q, who, on);
	if (sched)
		hw_queue_kick(q);
	else if (on)
		hw_queue_preempt_wait(q);
	return sched;
}

void hw_queue_unschedule_begin(struct hw_queue *q)
{
	hw_queue_hold_set(q, HW_HOLD_OS, true);
}

void hw_queue_set_scheduled(struct hw_queue *q, bool on)
{
	hw_queue_hold(q, HW_HOLD_OS, !on);
}

void hw_queue_retire_begin(struct hw_queue *q)
{
	struct hw_engine *e = &q->a->engines[q->engine];
	/* seq_cst, both: the heavy fence of the wait that follows orders them
	 * before its loads of `running` (the Dekker pair above) */
	atomic_store_explicit(&q->retired, true, memory_order_seq_cst);
	hw_queue_hold_set(q, HW_HOLD_OS, true);
	lf_wake_notify(&e->wake);   /* it discards what is left */
}

int hw_queue_retire_wait_for(struct hw_queue *q, int64_t timeout_ns)
{
	struct hw_engine *e = &q->a->engines[q->engine];
	uint64_t t0 = timeout_ns >= 0 ? lf_now_ns() : 0;
	int rc = hw_queue_preempt_wait_for(q, timeout_ns);
	/* Until the engine has seen it, it may still look at the fence q waits
	 * on (hw_engine_has_work), which the OS may free once q is gone.  An
	 * engine not running (not started, stopping) looks at nothing. */
	for (unsigned spin = 0; !rc && !atomic_load_explicit(&q->retire_seen, memory_order_acquire); spin++) {
		if (!atomic_load(&e->tid) || atomic_load_explicit(&q->a->stop, memory_order_acquire))
			return 0;
		if (spin < 64) {
			lf_cpu_relax();
			continue;
		}
		if (timeout_ns >= 0 && lf_now_ns() - t0 >= (uint64_t)timeout_ns)
			return -ETIMEDOUT;
		sched_yield();
	}
	return rc;
}

void hw_queue_retire(struct hw_queue *q)
{
	hw_queue_retire_begin(q);
	hw_queue_retire_wait_for(q, -1);
}

/* ---- accessors ---- */

struct lf_ring *hw_queue_ring(struct hw_queue *q)
{
	return q->ring;
}

unsigned hw_queue_engine(const struct hw_queue *q)
{
	return q->engine;
}

bool hw_queue_is_um(const struct hw_queue *q)
{
	return q->um;
}

uint64_t hw_queue_executed(const struct hw_queue *q)
{
	return atomic_load_explicit(&q->executed, memory_order_relaxed);
}

bool hw_queue_scheduled(const struct hw_queue *q)
{
	/* seq_cst: after the OS's hold of a buffer (held_total RMW), the other
	 * half of the store-buffering pair with hw_queue_set_scheduled's RMW
	 * followed by os_queue_resumed's held_total load */
	return hw_queue_on_list(q, memory_order_seq_cst);
}
