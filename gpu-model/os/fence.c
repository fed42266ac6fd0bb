/* gpu-model/os/fence.c — fences, CPU waits and CPU signals.
 *
 * CPU waiters (and legacy GPU waits held on the CPU) are nodes in the fence's
 * lock-free waiter set (lockfree/waitset.h), which publishes the least waited
 * value − 1 straight into the fence's MonitoredValue location (native) or
 * into a word of its own (monitored).  Adds are lock-free from any thread;
 * releases (the set's consumer side) run under the fence's release lock, by
 * the interrupt thread for GPU signals and by the signaling thread itself for
 * CPU signals, each against the value its signal wrote (os.h, the release rule).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu-model/os/os_internal.h"
#include "lockfree/arch.h"
#include "lockfree/alloc.h"

#define OS_HALF32 ((uint64_t)UINT32_MAX / 2)

void (*os_test_wait_timeout_hook)(struct os_fence *f, uint64_t v);
void (*os_test_register_hook)(struct os_fence *f, uint64_t v, enum os_test_register_at at);
void (*os_test_update_hook)(struct os_fence *f, uint64_t v);
void (*os_test_isr_fence_hook)(struct os_fence *f);

/* ---- values ---- */

/* Seed (legacy monitored fence, No64BitAtomics): the GPU updates 32 bits and the
 * OS handles wraparound, reconstructing the 64-bit value from the last one seen. */
static uint64_t os_reconstruct(struct os_fence *f, uint64_t raw)
{
	uint64_t last = atomic_load_explicit(&f->last64, memory_order_acquire);
	uint64_t cand = (last & ~(uint64_t)UINT32_MAX) | (uint32_t)raw;
	if (cand + OS_HALF32 < last)
		cand += (uint64_t)UINT32_MAX + 1;       /* the low half wrapped forward */
	else if (cand > last + OS_HALF32 && cand > UINT32_MAX)
		cand -= (uint64_t)UINT32_MAX + 1;       /* an older value than last */
	/* raise last64 monotonically (any thread may reconstruct) */
	while (cand > last &&
	       !atomic_compare_exchange_weak_explicit(&f->last64, &last, cand,
						      memory_order_acq_rel, memory_order_acquire))
		;
	return cand;
}

/* Seed: NoGPUAccess "the fence is always stored as a 64-bit value
 * (regardless of adapter caps)". */
bool os_fence_narrow(const struct os_fence *f)
{
	return f->a->cfg.caps.no_64bit_atomics && !(f->behaviour & OS_FENCE_NO_GPU_ACCESS);
}

uint64_t os_fence_read(struct os_fence *f)
{
	uint64_t raw = hw_fence_cpu_read(f->a->hw, &f->hw);
	return os_fence_narrow(f) ? os_reconstruct(f, raw) : raw;
}

uint64_t os_fence_value(struct os_fence *f)
{
	return os_fence_read(f);
}

/* The value as the CPU reads it now, with the number of the write it read
 * (or of the last write finished before the read: hw_fence_read_seq). */
static struct os_write os_fence_read_write(struct os_fence *f)
{
	uint64_t seq, raw = hw_fence_read_seq(f->a->hw, &f->hw, &seq);
	return (struct os_write){ os_fence_narrow(f) ? os_reconstruct(f, raw) : raw, seq };
}

/* 32-bit GPUs: values more than UINT32_MAX/2 from the last signaled one are refused. */
bool os_out_of_range(struct os_fence *f, uint64_t v, bool both_ways)
{
	if (!os_fence_narrow(f))
		return false;
	uint64_t last = os_fence_read(f);
	if (v > last)
		return v - last > OS_HALF32;
	return both_ways && last - v > OS_HALF32;
}

/* ---- waiter nodes ---- */

/* Node lifetime.  A blocking waiter's node belongs to the waiting thread: it
 * frees it once released (or the set reclaims it after a successful cancel).
 * An event or multi waiter's node has two references, the registering
 * thread's and the set's: once added, the interrupt thread may release it and
 * drop its reference at any moment, so the registering thread keeps its own
 * until it is done with the node (its resample and cancel). */
/* `since`: the write its first look at the fence read (os.h, the release
 * rule): only later writes release it. */
static struct os_waiter *os_waiter_new(uint64_t v, enum os_waiter_kind kind, struct os_write since)
{
	struct os_waiter *w = lf_alloc(sizeof(*w), LF_CACHELINE);
	w->w.value = v;
	w->w.since = since.seq;
	w->w.ctx = w;
	w->kind = kind;
	atomic_init(&w->refs, kind == OS_WAIT_BLOCKING ? 1 : 2);
	lf_event_init(&w->ev);
	return w;
}

static void os_waiter_free(struct os_waiter *w)
{
	lf_free(w, sizeof(*w), LF_CACHELINE);
}

static void os_waiter_put(struct os_waiter *w)
{
	if (atomic_fetch_sub_explicit(&w->refs, 1, memory_order_acq_rel) == 1)
		os_waiter_free(w);
}

static void os_multi_put(struct os_multi *m)
{
	if (atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) == 1)
		lf_free(m, sizeof(*m), LF_CACHELINE);
}

/* The multi wait is complete (or abandoned): set the caller's event, once.
 * The caller may reuse or free ev as soon as it sees it set (os.h), so only
 * the first to get here may touch it: an any wait's later hits, and an
 * abandon after the wait fired, must not.  acq_rel exchange: exactly one
 * caller reads false. */
static void os_multi_fire(struct os_multi *m)
{
	if (m->sets_every_hit || !atomic_exchange_explicit(&m->fired, true, memory_order_acq_rel))
		lf_event_set(m->ev);
}

/* One (fence, value) of a multi-wait was reached. */
static void os_multi_hit(struct os_multi *m)
{
	uint32_t left = atomic_fetch_sub_explicit(&m->remaining, 1, memory_order_acq_rel) - 1;
	if (m->all ? left == 0 : true)
		os_multi_fire(m);
}

/* What one release pass did (the callbacks' argument). */
struct os_release {
	size_t held;                    /* held GPU waits released: the interrupt thread must feed */
	size_t abandoned;               /* waits released because the fence is destroyed */
};

/* Release callback (whoever holds the fence's release lock): the last touch
 * of the node by the set. */
static void os_waiter_wake(struct lf_waiter *lw, void *arg)
{
	struct os_waiter *w = lw->ctx;
	struct os_release *r = arg;
	switch (w->kind) {
	case OS_WAIT_BLOCKING:
		lf_event_set(&w->ev);   /* the owner frees the node once it sees this */
		break;
	case OS_WAIT_EVENT:
		lf_event_set(w->user_ev);
		os_waiter_put(w);
		break;
	case OS_WAIT_MULTI:
		os_multi_hit(w->multi);
		os_multi_put(w->multi);
		os_waiter_put(w);
		break;
	case OS_WAIT_HELD:
		lf_event_set(&w->ev);   /* the holder sees it at its next feed */
		os_waiter_put(w);
		if (r)
			r->held++;
		break;
	}
}

/* A wait whose fence is destroyed under it: released, marked abandoned.  A
 * multi wait's event is set whatever `all` says: it can never be complete. */
static void os_waiter_abandon(struct lf_waiter *lw, void *arg)
{
	struct os_waiter *w = lw->ctx;
	struct os_release *r = arg;
	/* relaxed: published by the event set (release) that follows */
	atomic_store_explicit(&w->abandoned, true, memory_order_relaxed);
	if (r)
		r->abandoned++;
	if (w->kind == OS_WAIT_MULTI)
		os_multi_fire(w->multi);
	os_waiter_wake(lw, r);
}

/* Nodes handed back by the set: cancelled ones, and (lf_waitset_destroy)
 * ones still waiting when their fence's storage is freed (an adapter
 * destroyed under them): those are released as abandoned, never left silent. */
static void os_waiter_reclaim(struct lf_waiter *lw, void *arg)
{
	struct os_waiter *w = lw->ctx;
	uint32_t st = LF_WAITER_WAITING;
	/* acq_rel, as a release's CAS (lockfree/waitset.h): a cancel racing
	 * this either sees RELEASED or has won, and then the node is ours */
	if (atomic_compare_exchange_strong_explicit(&lw->state, &st, LF_WAITER_RELEASED,
						    memory_order_acq_rel, memory_order_acquire)) {
		os_waiter_abandon(lw, NULL);
		return;
	}
	/* cancelled: the set's reference (a blocking waiter gave the whole node up) */
	if (w->kind == OS_WAIT_BLOCKING)
		os_waiter_free(w);
	else
		os_waiter_put(w);
}

/* f's waiter set publishes into its MonitoredValue (a native fence; a
 * cross-adapter instance's MV stays 0 and its set keeps a word of its own):
 * a change of the set's threshold is a DxgkDdiUpdateMonitoredValues call. */
static bool os_fence_owns_mv(const struct os_fence *f)
{
	return f->type == OS_FENCE_NATIVE && !f->x;
}

/* The waiter set lowered f's MonitoredValue (the set's seq_cst RMW was the
 * update; the caller resamples next): "The OS calls
 * DxgkDdiUpdateMonitoredValues to notify the GPU of a new monitored value."
 * The value logged is the one MonitoredValue holds now (read back, not the
 * waiter's value - 1): the caller holds f's interrupt lock, so neither the
 * interrupt handler nor another add changed it since. */
static void os_waiter_lowered_mv_locked(struct os_fence *f, bool lowered)
{
	if (lowered && os_fence_owns_mv(f))
		os_ddi_log(f->a, OS_DDI_UPDATE_MONITORED_VALUES, f->hw.handle, lf_waitset_threshold(&f->ws));
}

/* Seed native-gpu-fence, "Monitored value": DxgkDdiUpdateMonitoredValues
 * "runs at interrupt level, synchronized with the interrupt handler" (the
 * KMD's DxgkCbSynchronizeExecution).  The interrupt thread handles f only
 * under f's interrupt lock (os_fence_isr_enter), and the update takes it:
 * the add that lowers MonitoredValue and its DDI call are one step for the
 * interrupt handler, which never sees the node added and the call not made.
 * Per fence, not per adapter: an update touches one fence's MonitoredValue,
 * and the handler reads and writes a fence's only under that fence's lock.
 * A CPU signaler's release (not the interrupt handler) still races an add
 * lock-free (the waiter set's protocol, tests/model/waitset.pml).  Takes
 * no other lock while it holds it. */
static bool os_waiter_update_mv(struct os_fence *f, struct os_waiter *w)
{
#ifndef OS_BROKEN_UPDATE_UNSYNCHRONIZED
	pthread_mutex_lock(&f->isr_lock);
#endif
	bool lowered = lf_waitset_add(&f->ws, &w->w);
	if (os_test_update_hook)
		os_test_update_hook(f, w->w.value);   /* between the update's steps */
	os_waiter_lowered_mv_locked(f, lowered);
#ifndef OS_BROKEN_UPDATE_UNSYNCHRONIZED
	pthread_mutex_unlock(&f->isr_lock);
#endif
	return lowered;
}

/* The interrupt thread handles f (the caller holds f's release lock, then
 * this takes the interrupt lock: that order only, so a CPU signaler that
 * registers a wait inside its release cannot deadlock with it); other
 * threads take nothing. */
static void os_fence_isr_enter(struct os_fence *f)
{
	if (!os_in_irq_thread)
		return;
	pthread_mutex_lock(&f->isr_lock);
	if (os_test_isr_fence_hook)
		os_test_isr_fence_hook(f);
}

static void os_fence_isr_leave(struct os_fence *f)
{
	if (os_in_irq_thread)
		pthread_mutex_unlock(&f->isr_lock);
}

/* Register w on f and resample (seed: "the OS resamples CurrentValue and
 * satisfies any waiters that are unblocked by the new CurrentValue").
 * Returns true when the waiter is complete already (it was reached
 * meanwhile and this thread took it back); the node is then the set's.
 * The caller holds a reference to w (blocking: it owns it; event and multi:
 * its own of the two), so w stays valid here even once released. */
static bool os_waiter_register(struct os_fence *f, struct os_waiter *w)
{
	/* The add ends with a seq_cst RMW (the CAS that lowers MonitoredValue,
	 * or the RMW on the set's `adds` word when it lowers nothing): the
	 * resample below reads CurrentValue after it; pairs with the CMP's CV
	 * exchange + MV load in hw_engine_signal and with a signaler's value
	 * exchange + threshold load (os_signal_needs_release). */
	if (f->a->cfg.fault == OS_FAULT_NO_RESAMPLE) {
		/* Broken on purpose: no resample after lowering MV.  The delay (a
		 * waiter preempted between its first look at CurrentValue and its
		 * registration) makes the missed signal land in that gap every time
		 * the GPU signals meanwhile, not only by luck. */
		lf_spin_ns(OS_FAULT_WINDOW_NS);
		os_waiter_update_mv(f, w);
		return false;
	}
	if (os_test_register_hook)
		os_test_register_hook(f, w->w.value, OS_TEST_REGISTER_ADD);
	os_waiter_update_mv(f, w);
	if (os_test_register_hook)
		os_test_register_hook(f, w->w.value, OS_TEST_REGISTER_RESAMPLE);
	if (os_fence_read(f) < w->w.value)
		return false;
	/* reached meanwhile: take the node back, unless the interrupt thread released it */
	return lf_waitset_cancel(&f->ws, &w->w);
}

/* ---- CPU waits ---- */

/* Seed native-gpu-fence, "Monitored value": "The OS has to modify
 * MonitoredValue when a new CPU waiter is added ... or if an existing CPU
 * waiter is retired."  A CPU wait that timed out leaves only a cancelled
 * node, which would keep MonitoredValue low until a later release: every
 * such wait would cost one more interrupt.  So the place goes at once
 * (the waiter's thread, as a CPU signaler would): a release pass against the
 * current value drops the node and raises MonitoredValue (os_fence_process:
 * one DxgkDdiUpdateMonitoredValues when it changed).  A fence whose set does
 * not publish MonitoredValue (monitored, cross-adapter) has nothing to raise. */
static void os_waiter_retired(struct os_fence *f)
{
	if (os_fence_owns_mv(f))
		os_fence_process(f, OS_WRITE_NONE, NULL);
}

/* A blocking waiter past its deadline with its value reached: return once
 * the engines have finished the runs in progress (the run that wrote the
 * value has raised its interrupt, if the CMP raised one) and the interrupt
 * thread has handled every interrupt raised by then (its releases done).
 * Blocks for as long as those threads take, never on the application: an
 * engine run ends at its last command or at a wait (HW_CMD_WAIT makes the
 * queue unrunnable, it does not block the run). */
static void os_waiter_settle(struct os_adapter *a)
{
	if (a->hw)
		hw_adapter_engines_barrier(a->hw);
	os_adapter_irq_sync(a);
}

int os_fence_wait_cpu(struct os_fence *f, uint64_t v, int64_t timeout_ns)
{
	struct os_app_counters *c = os_app_counters(f->a);
	lf_count(&c->waits, 1);
	struct os_write now = os_fence_read_write(f);
	if (now.value >= v) {
		lf_count(&c->waits_fast, 1);
		return 0;
	}
	if (os_out_of_range(f, v, false))
		return -ERANGE;
	struct os_waiter *w = os_waiter_new(v, OS_WAIT_BLOCKING, now);
	if (os_waiter_register(f, w)) {
		lf_count(&c->self_released, 1);
		return 0;
	}
	lf_count(&c->waits_blocked, 1);
	int rc = lf_event_wait(&w->ev, f->a->cfg.wait_spin_ns, timeout_ns);
	if (rc == -ETIMEDOUT) {
		/* The value when the wait timed out decides: read before giving up
		 * the node, so a value landing after the timeout (before the cancel)
		 * is a timeout, not a lost wake-up. */
		uint64_t at_timeout = os_fence_read(f);
		if (os_test_wait_timeout_hook)
			os_test_wait_timeout_hook(f, v);
		/* Reached but not released: late is not lost yet (an engine or the
		 * interrupt thread starved past the deadline, under load).  Let the
		 * release path finish what was raised; only a waiter still in the
		 * set then was missed by the protocol. */
		if (at_timeout >= v)
			os_waiter_settle(f->a);
		if (lf_waitset_cancel(&f->ws, &w->w)) {
			/* A waiter whose value was reached, with every interrupt raised
			 * by then handled, and still not released: the lost wake-up
			 * every run must report as 0. */
			if (at_timeout >= v) {
				lf_count(&c->lost_wakeups, 1);
				return 0;
			}
			lf_count(&c->timeouts, 1);
			os_waiter_retired(f);
			return -ETIMEDOUT;
		}
		/* released, racing the timeout or after the settle: wait for the
		 * callback's set */
		if (at_timeout >= v)
			lf_count(&c->late_wakeups, 1);
		lf_event_wait(&w->ev, 0, -1);
	}
	rc = atomic_load_explicit(&w->abandoned, memory_order_relaxed) ? -EIDRM : 0;
	os_waiter_free(w);
	return rc;
}

int os_fence_wait_event(struct os_fence *f, uint64_t v, struct lf_event *ev)
{
	struct os_write now = os_fence_read_write(f);
	if (now.value >= v) {
		lf_event_set(ev);
		return 0;
	}
	if (os_out_of_range(f, v, false))
		return -ERANGE;
	struct os_waiter *w = os_waiter_new(v, OS_WAIT_EVENT, now);
	w->user_ev = ev;
	if (os_waiter_register(f, w))
		lf_event_set(ev);
	os_waiter_put(w);   /* this thread's reference */
	return 0;
}

int os_wait_multi(struct os_fence *const *f, const uint64_t *v, size_t n, bool all, struct lf_event *ev)
{
	if (n == 0)
		return -EINVAL;
	if (n > OS_WAIT_MULTI_MAX)
		return -E2BIG;
	for (size_t i = 0; i < n; i++)
		if (os_out_of_range(f[i], v[i], false))
			return -ERANGE;
	struct os_multi *m = lf_alloc(sizeof(*m), LF_CACHELINE);
	m->ev = ev;
	m->all = all;
	m->sets_every_hit = f[0]->a->cfg.fault == OS_FAULT_MULTI_SETS_EVERY_HIT;
	atomic_init(&m->fired, false);
	atomic_init(&m->remaining, (uint32_t)n);
	atomic_init(&m->refs, (uint32_t)n + 1);
	for (size_t i = 0; i < n; i++) {
		struct os_write now = os_fence_read_write(f[i]);
		if (now.value >= v[i]) {
			os_multi_hit(m);
			os_multi_put(m);
			continue;
		}
		struct os_waiter *w = os_waiter_new(v[i], OS_WAIT_MULTI, now);
		w->multi = m;
		if (os_waiter_register(f[i], w)) {
			os_multi_hit(m);
			os_multi_put(m);
		}
		os_waiter_put(w);   /* this thread's reference */
	}
	os_multi_put(m);
	return 0;
}

/* ---- GPU waits held on the CPU (legacy; queue.c holds the buffer) ---- */

struct os_waiter *os_held_wait(struct os_fence *f, uint64_t v)
{
	struct os_write now = os_fence_read_write(f);
	if (now.value >= v)
		return NULL;
	struct os_waiter *w = os_waiter_new(v, OS_WAIT_HELD, now);
	if (!os_waiter_register(f, w))
		return w;
	os_waiter_put(w);     /* reached meanwhile: the node is the set's */
	return NULL;
}

bool os_held_wait_ready(struct os_waiter *w)
{
	return lf_event_is_set(&w->ev);   /* acquire: pairs with the release's set */
}

void os_held_wait_put(struct os_fence *f, struct os_waiter *w)
{
	/* still waiting in a live set: give the place up (the set reclaims it) */
	if (f && !os_held_wait_ready(w))
		lf_waitset_cancel(&f->ws, &w->w);
	os_waiter_put(w);
}

/* ---- releases ---- */

/* Release, among the waiters registered before write w, those its value
 * satisfies. */
static size_t os_release_write(struct os_fence *f, struct os_write w, struct os_release *r)
{
	return lf_waitset_release_before(&f->ws, w.value, w.seq, os_waiter_wake, r);
}

/* Broken on purpose (OS_FAULT_RELEASE_MAX): the value signaled or the
 * current one, whichever satisfies more, for every waiter, whenever it
 * registered.  (The interrupt thread is slowed down in this variant: os_handle.) */
static size_t os_release_max_broken(struct os_fence *f, struct os_write signaled, struct os_release *r)
{
	uint64_t cur = os_fence_read(f);
	return lf_waitset_release(&f->ws, signaled.value > cur ? signaled.value : cur, os_waiter_wake, r);
}

/* Release what the write signaled (OS_WRITE_NONE: none) satisfies among the
 * waiters registered before it, then what the current value satisfies, and
 * publish the new MonitoredValue; then resample (seed: "Upon return from
 * DxgkDdiUpdateMonitoredValue, the OS resamples CurrentValue") until the
 * value no longer exceeds it (`resample` false: publish only; the caller
 * resamples, os_fence_process_batch).  Under the release lock: one releaser
 * at a time. */
static size_t os_fence_release_locked(struct os_fence *f, struct os_write signaled, struct os_release *r,
				      bool resample)
{
	enum os_fault fault = f->a->cfg.fault;
	size_t n = 0;
	if (fault == OS_FAULT_RELEASE_CURRENT) {
		/* Broken on purpose: the fence's value read later decides, and the
		 * delay (an interrupt thread slow to run) lets a lower value
		 * signaled meanwhile take the wake-up back every time, not by luck. */
		if (signaled.value)
			lf_spin_ns(OS_FAULT_WINDOW_NS);
	} else if (fault == OS_FAULT_RELEASE_MAX) {
		n = os_release_max_broken(f, signaled, r);
	} else if (signaled.seq) {
		n = os_release_write(f, signaled, r);
	}
	for (;;) {
		/* the current value, for the waiters registered before its write:
		 * always a value written after them, never one superseded first */
		struct os_write cur = os_fence_read_write(f);
		size_t k = os_release_write(f, cur, r);
		n += k;
		if (fault == OS_FAULT_NO_RESAMPLE || !resample)
			return n;
		uint64_t th = lf_waitset_threshold(&f->ws);
		if (th == UINT64_MAX || os_fence_read(f) <= th)
			return n;
		if (!k)
			sched_yield();   /* a write in progress under our read: let it finish
					    (blocking behind a preempted writer: os.h, "Progress") */
	}
}

size_t os_fence_process(struct os_fence *f, struct os_write signaled, size_t *held)
{
	struct os_release r = { 0 };
	pthread_mutex_lock(&f->release_lock);
	os_fence_isr_enter(f);
	uint64_t mv0 = lf_waitset_threshold(&f->ws);
	size_t n = os_fence_release_locked(f, signaled, &r, true);
	uint64_t mv1 = lf_waitset_threshold(&f->ws);
	os_fence_isr_leave(f);
	pthread_mutex_unlock(&f->release_lock);
	/* the releases raised MonitoredValue: one DxgkDdiUpdateMonitoredValues */
	if (mv1 != mv0 && os_fence_owns_mv(f))
		os_ddi_log(f->a, OS_DDI_UPDATE_MONITORED_VALUES, f->hw.handle, mv1);
	if (held)
		*held = r.held;
	return n;
}

/* Seed, "Instructing KMD to update batches of values" and "Synchronization
 * between the GPU and CPU": the new MonitoredValues of a batch go to the KMD
 * in one DxgkDdiUpdateMonitoredValues call; "Upon return ... the OS resamples
 * CurrentValue and satisfies any waiters that are unblocked": each fence is
 * resampled after the whole batch was published (its threshold's seq_cst
 * CAS, then the seq_cst CurrentValue read in os_fence_process). */
size_t os_fence_process_batch(struct os_fence *const *f, const struct os_write *signaled, size_t n)
{
	size_t released = 0;
	uint32_t changed = 0;
	uint64_t first = 0, first_mv = 0;
	for (size_t i = 0; i < n; i++) {
		struct os_release r = { 0 };
		pthread_mutex_lock(&f[i]->release_lock);
		os_fence_isr_enter(f[i]);
		uint64_t mv0 = lf_waitset_threshold(&f[i]->ws);
		released += os_fence_release_locked(f[i], signaled[i], &r, false);
		uint64_t mv1 = lf_waitset_threshold(&f[i]->ws);
		os_fence_isr_leave(f[i]);
		pthread_mutex_unlock(&f[i]->release_lock);
		if (mv1 != mv0 && os_fence_owns_mv(f[i]) && !changed++) {
			first = f[i]->hw.handle;
			first_mv = mv1;
		}
	}
	if (changed)
		os_ddi_log_batch(f[0]->a, OS_DDI_UPDATE_MONITORED_VALUES, first, first_mv, changed);
	for (size_t i = 0; i < n; i++) {
		if (f[i]->a->cfg.fault == OS_FAULT_NO_RESAMPLE)
			continue;
		/* the resample: a value past the published threshold releases again */
		uint64_t th = lf_waitset_threshold(&f[i]->ws);
		if (th != UINT64_MAX && os_fence_read(f[i]) > th)
			released += os_fence_process(f[i], OS_WRITE_NONE, NULL);
	}
	return released;
}

bool os_fence_has_waiters(const struct os_fence *f)
{
	/* the published threshold: UINT64_MAX once the consumer saw no waiter;
	 * an add lowers it before its resample (lockfree/waitset.h) */
	return lf_waitset_threshold(&f->ws) != UINT64_MAX;
}

/* A signaler that wrote v (a seq_cst RMW) asks whether anyone may wait for
 * it: the threshold, unless a raising release ran meanwhile (its raise may be
 * transient and hide a waiter registered before our write: lockfree/waitset.h,
 * "The raise window").  OS_FAULT_SIGNAL_TRUSTS_THRESHOLD, broken on purpose:
 * the threshold alone decides, as before the raise sequence existed. */
static bool os_signal_needs_release(struct os_fence *f, uint64_t v)
{
	if (f->a->cfg.fault == OS_FAULT_SIGNAL_TRUSTS_THRESHOLD)
		return lf_waitset_threshold(&f->ws) < v;
	return lf_waitset_signal_needs_release(&f->ws, v);
}

/* Value v of f was written without a GPU interrupt for this adapter (a value
 * propagated from another adapter, `how` OS_REC_RECEIVED; a CPU signal of a
 * cross-adapter fence, OS_REC_CPU_SIGNAL: its waiters are released already):
 * queue a software record so that f's adapter's interrupt thread releases what
 * v satisfies, feeds CPU-held command buffers and passes v on (not a received
 * one: its sender announced it to every instance) — only when a waiter or a held
 * buffer may be satisfied, unless `always`.  The seq_cst loads come after the
 * caller's seq_cst write or load of the value: they pair with a waiter's
 * threshold RMW + CurrentValue resample (os_waiter_register) and with
 * os_queue_submit's held_total RMW + feed, so either they see the value or we
 * see them.  Returns whether a record was queued. */
bool os_fence_defer_release(struct os_fence *f, struct os_write w, bool always, unsigned how)
{
	struct os_adapter *a = f->a;
	uint64_t v = w.value;
	if (!always && !os_signal_needs_release(f, v) &&
	    !atomic_load_explicit(&a->held_total, memory_order_seq_cst))
		return false;
	struct hw_irq_rec *rec = hw_irq_alloc();
	rec->kind = HW_IRQ_SOFTWARE;
	rec->fences[0] = f->hw.handle;
	rec->nfences = 1;
	rec->signaled = v ? f->hw.handle : 0;
	rec->value = v;
	rec->seq = w.seq;
	rec->os_flags = how;
	hw_irq_raise(a->hw, rec);
	return true;
}

/* ---- CPU signal ---- */


/* "Immediately unwaits any satisfied waits": the signaling thread releases
 * what v satisfies itself, before the signal returns — every waiter
 * registered before the signal, whatever value a racing signal leaves.
 * The threshold load (seq_cst, after the caller's seq_cst value exchange)
 * pairs with a waiter's add + resample: a waiter it does not see resamples
 * the new value itself.  Then the interrupt thread only has what needs it:
 * held GPU waits to feed, a cross-adapter value to pass on. */
static void os_signal_release(struct os_fence *f, struct os_write w)
{
	struct os_adapter *a = f->a;
	size_t held = 0;
	if (a->cfg.fault == OS_FAULT_RELEASE_CURRENT || a->cfg.fault == OS_FAULT_RELEASE_MAX) {
		/* Broken on purpose: the release is left to the interrupt thread,
		 * which decides it against the value it reads then (RELEASE_MAX:
		 * or the value signaled, for whoever waits by then) */
		os_fence_defer_release(f, w, f->x != NULL, 0);
		return;
	}
	if (os_signal_needs_release(f, w.value)) {
		size_t n = os_fence_process(f, w, &held);
		lf_count(&os_app_counters(a)->signal_released, n);
	}
	if (f->x)
		os_fence_defer_release(f, w, true, OS_REC_CPU_SIGNAL);   /* released here; w goes on from there */
	else if (held)
		hw_irq_kick(a->hw);                   /* the interrupt thread feeds what was released */
}

/* os_fence_signal_cpu's write and releases; `log`: its own
 * DxgkDdiUpdateCurrentValuesFromCpu call (false: a batch's, logged once). */
static void os_fence_signal_cpu_one(struct os_fence *f, uint64_t v, bool log);

int os_fence_signal_cpu(struct os_fence *f, uint64_t v)
{
	if (os_out_of_range(f, v, true))
		return -ERANGE;
	os_fence_signal_cpu_one(f, v, true);
	return 0;
}

int os_fence_signal_cpu_multi(struct os_fence *const *f, const uint64_t *v, size_t n)
{
	if (!n)
		return -EINVAL;
	uint32_t native = 0;
	size_t first = n;
	for (size_t i = 0; i < n; i++) {
		if (f[i]->a != f[0]->a)
			return -EINVAL;
		if (os_out_of_range(f[i], v[i], true))
			return -ERANGE;
		if (f[i]->type == OS_FENCE_NATIVE && !native++)
			first = i;
	}
	/* one DxgkDdiUpdateCurrentValuesFromCpu for every native fence of the call */
	if (native)
		os_ddi_log_batch(f[0]->a, OS_DDI_UPDATE_CV_FROM_CPU, f[first]->hw.handle, v[first], native);
	for (size_t i = 0; i < n; i++)
		os_fence_signal_cpu_one(f[i], v[i], false);
	return 0;
}

static void os_fence_signal_cpu_one(struct os_fence *f, uint64_t v, bool log)
{
	struct os_adapter *a = f->a;
	uint64_t wv = os_fence_narrow(f) ? (uint32_t)v : v;
	/* seq_cst RMW (inside): the new value is visible before the waiter-set
	 * and held-buffer checks below; pairs with os_waiter_register's add +
	 * resample.  The write's number decides whom it may release. */
	uint64_t seq = hw_fence_write(&f->hw, wv, true);
	/* 32-bit GPUs: the reconstruction's reference becomes the value signaled,
	 * also when it moves down (raising only would read a later low half as
	 * a forward wrap once the fence dropped more than UINT32_MAX/2 below the
	 * highest value seen; the range check above is against the last signaled
	 * value, as the seed words it) */
	if (os_fence_narrow(f))
		atomic_store_explicit(&f->last64, v, memory_order_seq_cst);
	if (f->type == OS_FENCE_NATIVE && log)
		os_ddi_log(a, OS_DDI_UPDATE_CV_FROM_CPU, f->hw.handle, v);
	os_signal_release(f, (struct os_write){ v, seq });
	/* native: GPU queues waiting on this fence re-evaluate their run lists */
	hw_cmp_cpu_signal_notify(a->hw);
}

/* ---- lifetime ---- */

static int os_table_take(struct os_adapter *a, struct os_fence *f)
{
	pthread_mutex_lock(&a->fence_lock);
	uint32_t idx;
	if (a->nfree) {
		idx = a->free_idx[--a->nfree];
	} else {
		idx = atomic_load_explicit(&a->table_hw, memory_order_relaxed);
		if (idx == a->cfg.max_fences) {
			pthread_mutex_unlock(&a->fence_lock);
			return -ENOSPC;
		}
		atomic_store_explicit(&a->table_hw, idx + 1, memory_order_release);
	}
	f->index = idx;
	/* release: a scanner that sees the pointer sees an initialized fence */
	atomic_store_explicit(&a->table[idx], f, memory_order_release);
	pthread_mutex_unlock(&a->fence_lock);
	return 0;
}

static void os_table_drop(struct os_adapter *a, struct os_fence *f)
{
	pthread_mutex_lock(&a->fence_lock);
	atomic_store_explicit(&a->table[f->index], NULL, memory_order_release);
	a->free_idx[a->nfree++] = f->index;
	pthread_mutex_unlock(&a->fence_lock);
}

int os_fence_create(struct os_adapter *a, enum os_fence_type type, uint64_t initial,
		    unsigned flags, struct os_fence **out)
{
	if (flags & OS_FENCE_CROSS_ADAPTER)
		return os_cross_create(a, type, initial, flags, out);   /* cross.c */
	return os_fence_create_in(a, type, initial, flags, NULL, out);
}

/* Seed native-gpu-fence, "GPU VA mappings in paging process address space
 * for CMP use": with MapToGpuSystemProcess the OS maps a native fence's
 * CurrentValue and MonitoredValue into the system (paging) process's GPU VA
 * space as well and passes those VAs at create (the KMD's
 * DXGKARG_CREATENATIVEFENCE::CurrentValueSystemProcessGpuVa and
 * MonitoredValueSystemProcessGpuVa: f->hw.cv_sys_va, mv_sys_va), which the
 * CMP then uses.  Before the fence is published.  0 / -ENOMEM. */
static int os_fence_map_system_process(struct os_adapter *a, struct os_fence *f)
{
	if (f->type != OS_FENCE_NATIVE || !hw_adapter_caps(a->hw)->map_to_gpu_system_process)
		return 0;
	struct hw_va_space *s = hw_adapter_system_vas(a->hw);
	f->hw.cv_sys_va = hw_va_map(s, (void *)f->hw.cv, sizeof(*f->hw.cv));
	f->hw.mv_sys_va = hw_va_map(s, (void *)f->hw.mv, sizeof(*f->hw.mv));
	return f->hw.cv_sys_va && f->hw.mv_sys_va ? 0 : -ENOMEM;
}

static void os_fence_unmap_system_process(struct os_adapter *a, struct os_fence *f)
{
	struct hw_va_space *s = hw_adapter_system_vas(a->hw);
	hw_va_unmap(s, f->hw.cv_sys_va, sizeof(*f->hw.cv));
	hw_va_unmap(s, f->hw.mv_sys_va, sizeof(*f->hw.mv));
	f->hw.cv_sys_va = f->hw.mv_sys_va = 0;
}

int os_process_fence_create(struct os_process *p, struct os_adapter *a, enum os_fence_type type,
			    uint64_t initial, unsigned flags, struct os_fence **out)
{
	if (flags & OS_FENCE_CROSS_ADAPTER)
		return -EINVAL;
	return os_fence_create_proc(a, p ? os_process_id(p) : 0, type, initial, flags, NULL, out);
}

/* Seed native-gpu-fence, "Current value" / "Monitored value": the values'
 * memory follows the fence type (D3DDDI_NATIVEFENCE_TYPE): a type other than
 * DEFAULT (OS_FENCE_LOCAL_MEMORY: a native fence the OS lets live in local
 * memory, when GetOSCaps reports SupportIntraGpuFenceType) in GPU local
 * memory, from the segments the driver named; DEFAULT where the adapter puts
 * it (system memory, or local memory when the OS supports the optimized
 * default fence type: os_adapter_create).  A monitored fence ignores the
 * type.  0 with *loc; -ENOTSUP (the OS does not support the type). */
static int os_fence_storage(const struct os_adapter *a, enum os_fence_type type, unsigned flags,
			    enum hw_storage_loc *loc)
{
	*loc = hw_adapter_caps(a->hw)->storage;
	if (!(flags & OS_FENCE_LOCAL_MEMORY) || type != OS_FENCE_NATIVE)
		return 0;
	if (!a->feature.NativeFenceOSCaps1.SupportIntraGpuFenceType)
		return -ENOTSUP;
	*loc = HW_STORAGE_LOCAL;
	return 0;
}

int os_fence_create_in(struct os_adapter *a, enum os_fence_type type, uint64_t initial,
		       unsigned flags, struct os_cross *x, struct os_fence **out)
{
	return os_fence_create_proc(a, 0, type, initial, flags, x, out);
}

int os_fence_create_proc(struct os_adapter *a, uint64_t process, enum os_fence_type type, uint64_t initial,
			 unsigned flags, struct os_cross *x, struct os_fence **out)
{
	/* Without native support (caps or the OS feature), a native fence is a monitored fence. */
	enum os_fence_type t = (type == OS_FENCE_NATIVE && a->native) ? OS_FENCE_NATIVE : OS_FENCE_MONITORED;
	unsigned behaviour = flags & OS_FENCE_BEHAVIOUR;
	/* NoWait "cannot be set simultaneously with NoSignal" */
	if ((behaviour && (t == OS_FENCE_NATIVE || x)) ||
	    (behaviour & (OS_FENCE_NO_SIGNAL | OS_FENCE_NO_WAIT)) == (OS_FENCE_NO_SIGNAL | OS_FENCE_NO_WAIT))
		return -EINVAL;
	enum hw_storage_loc loc;
	int rc = os_fence_storage(a, t, flags, &loc);
	if (rc)
		return rc;
	struct os_fence *f = lf_alloc(sizeof(*f), LF_CACHELINE);
	f->a = a;
	f->type = t;
	f->behaviour = behaviour;
	uint64_t handle = atomic_fetch_add(&a->next_handle, 1);
	rc = hw_fence_alloc_in(a->hw, process, loc, flags & OS_FENCE_SHARED, f->type == OS_FENCE_NATIVE, handle,
			       initial, &f->hw);
	if (rc)
		goto free_fence;
	f->hw.owner = f;
	if (behaviour & OS_FENCE_NO_GPU_ACCESS) {
		/* "not mapped into the GPU virtual address space" */
		hw_va_unmap(f->hw.vas, f->hw.cv_va, sizeof(*f->hw.cv));
		f->hw.cv_va = 0;
		atomic_store_explicit(f->hw.cv, initial, memory_order_release);   /* 64 bits, whatever the caps */
	}
	pthread_mutex_init(&f->release_lock, NULL);
	pthread_mutex_init(&f->isr_lock, NULL);
	atomic_init(&f->last64, initial);
	/* native: the set publishes MonitoredValue where the CMP reads it;
	 * cross-adapter: MV stays 0 and the set keeps a word of its own */
	_Atomic uint64_t *threshold = f->type == OS_FENCE_NATIVE ? f->hw.mv : NULL;
	if (x)
		threshold = os_cross_bind(f, x);
	rc = os_fence_map_system_process(a, f);   /* after the bind: the CurrentValue the CMP reads */
	if (rc)
		goto unmap_system;
	lf_waitset_init(&f->ws, threshold, os_waiter_reclaim, NULL);
	os_rcu_enter();
	rc = lf_htab_insert(a->handles, handle, f);
	os_rcu_leave();
	if (rc)
		goto free_storage;
	rc = os_table_take(a, f);
	if (rc)
		goto remove_handle;
	if (f->type == OS_FENCE_NATIVE)
		os_kmd_create_native_fence(a, handle, initial);
	*out = f;
	return 0;

remove_handle:
	os_rcu_enter();
	lf_htab_remove(a->handles, handle, NULL);
	os_rcu_leave();
free_storage:
	lf_waitset_destroy(&f->ws);
unmap_system:
	os_fence_unmap_system_process(a, f);
	pthread_mutex_destroy(&f->release_lock);
	pthread_mutex_destroy(&f->isr_lock);
	hw_fence_free(a->hw, &f->hw);
free_fence:
	lf_free(f, sizeof(*f), LF_CACHELINE);
	return rc;
}

/* After a grace period (call_rcu) the interrupt thread, which reads fences
 * only inside read-side sections, holds no reference any more. */
void os_fence_free(void *obj)
{
	struct os_fence *f = obj;
	struct os_cross *x = f->x;
	lf_waitset_destroy(&f->ws);
	pthread_mutex_destroy(&f->release_lock);
	pthread_mutex_destroy(&f->isr_lock);
	os_fence_unmap_system_process(f->a, f);
	hw_fence_free(f->a->hw, &f->hw);
	lf_free(f, sizeof(*f), LF_CACHELINE);
	if (x)
		os_cross_put(x);        /* the last instance frees the shared CurrentValue */
}

/* Release every wait still registered on f as abandoned; how many there were. */
static size_t os_fence_abandon(struct os_fence *f)
{
	struct os_release r = { 0 };
	pthread_mutex_lock(&f->release_lock);
	lf_waitset_release(&f->ws, UINT64_MAX, os_waiter_abandon, &r);
	pthread_mutex_unlock(&f->release_lock);
	if (r.abandoned)
		lf_count(&os_app_counters(f->a)->abandoned, r.abandoned);
	return r.abandoned;
}

int os_fence_destroy(struct os_fence *f)
{
	struct os_adapter *a = f->a;
	if (f->x)
		os_cross_detach(f);     /* other adapters stop propagating to it */
	if (f->type == OS_FENCE_NATIVE)
		os_kmd_destroy_native_fence(a, f->hw.handle);
	os_table_drop(a, f);
	/* A GPU signal of f the application already saw land may still be
	 * finishing (the CMP reads MonitoredValue after writing CurrentValue,
	 * then raises): wait for the engines' runs in progress.  Then the
	 * interrupts raised for f before now are handled while the handle still
	 * resolves: the OS retires its own backlog; only a payload raised after
	 * this names a destroyed fence (a bug check). */
	hw_adapter_engines_barrier(a->hw);
	os_irq_sync(a);
	size_t abandoned = os_fence_abandon(f);
	os_rcu_enter();
	lf_htab_remove(a->handles, f->hw.handle, os_fence_free);
	os_rcu_leave();
	return abandoned ? -EBUSY : 0;
}

int os_fence_map(struct os_fence *f, enum hw_agent who, enum hw_fence_value which, struct hw_fence_map *out)
{
	return hw_fence_map(f->a->hw, &f->hw, who, which, out);
}

bool os_fence_is_native(const struct os_fence *f)
{
	return f->type == OS_FENCE_NATIVE;
}

uint64_t os_fence_handle(const struct os_fence *f)
{
	return f->hw.handle;
}

struct hw_fence *os_fence_hw(struct os_fence *f)
{
	return &f->hw;
}

const _Atomic uint64_t *os_fence_cpu_va(const struct os_fence *f)
{
	return f->x ? NULL : f->hw.fv_cpu_va;
}

uint64_t os_fence_gpu_va(const struct os_fence *f)
{
	return f->x ? 0 : f->hw.cv_va;
}
