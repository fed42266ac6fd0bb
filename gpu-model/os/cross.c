/* gpu-model/os/cross.c — cross-adapter fences: one CurrentValue, an instance per adapter.
 *
 * Seed (native-gpu-fence, "Cross-adapter native fences"):
 *   - "All GPUs share the same copy of CurrentValue storage, which is always
 *     allocated in system memory": the group (struct os_cross) owns one page;
 *     every adapter's instance (an ordinary os_fence, with its own global
 *     handle, MonitoredValue and waiter set) points its CurrentValue there.
 *   - "Each GPU gets its own copy of MonitoredValue"; "setting MonitoredValue
 *     for the cross-adapter fence to 0 for its lifetime": a native instance's
 *     MV is written 0 once, and its waiter set publishes into a word of its
 *     own (lf_waitset_init with NULL), so no waiter ever raises MV.
 *   - "when GPU2 signals the native fence, it also raises a CPU interrupt,
 *     allowing Dxgkrnl to update CurrentValue on GPU1 (DxgkDdiUpdateCurrentValuesFromCpu
 *     with the NotificationOnly flag set TRUE) and unblock any pending CPU/GPU
 *     waiters of that GPU": os_cross_propagate, run by the interrupt thread
 *     that handled the signal (GPU interrupt, or the deferred work of a CPU
 *     signal), for every other instance.
 *
 * What is announced is the value the signal wrote (the interrupt record's, the
 * log entry's, the CPU signal's own), never the CurrentValue read later: the
 * fence may have been rewound meanwhile, and seed multi-engine-synchronization
 * says "If a race does occur, between a value which will satisfy an
 * outstanding wait, and a lower value which will not, the wait will be
 * satisfied regardless" — on every adapter, as on one.  So every signal is
 * announced, in the order its adapter handles them, to every other instance,
 * which decides its waiters against that value (os_fence_defer_release,
 * OS_REC_RECEIVED).  A received value is never passed on again: its sender
 * announced it to every instance already.  No dedup by value: after a rewind
 * a value may be signaled again and must be announced again, and a value two
 * threads announce (a signal seen by a log and by a payload) costs an extra
 * deferred record, never a missed one.
 *
 * Only where no signal names the fence (a scan's other fences), or the value
 * signaled is 0 (it satisfies no wait), is the CurrentValue read now; those announcements skip a value equal to the last
 * one announced to the instance (x_seen), so a scan does not repeat values.
 *
 * Lifetime: the instance array is read by interrupt threads inside RCU
 * read-side sections.  An instance leaves the array (os_cross_detach, under
 * the group lock) before its fence leaves its handle table, and its memory is
 * freed only after a grace period (os_fence_free), so a propagator never
 * touches a freed instance.  The group is reference counted by instances not
 * yet freed; the last free releases the shared CurrentValue.
 *
 *   operation                    who                          blocks?
 *   os_cross_create, _open       any thread                   group lock (not on a hot path)
 *   os_cross_detach              os_fence_destroy's caller    group lock
 *   os_cross_propagate           an interrupt thread, in RCU  never; lock-free
 *   os_cross_put                 the call_rcu thread          no
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu-model/os/os_internal.h"
#include "lockfree/alloc.h"
#include "lockfree/die.h"
#include "lockfree/thread.h"

#define OS_FENCE_FAULTS (OS_FENCE_FAULT_NO_PROPAGATE | OS_FENCE_FAULT_MV_FOLLOWS_WAITERS | \
			 OS_FENCE_FAULT_PROPAGATE_CURRENT)

struct os_cross {
	_Atomic uint64_t *cv;           /* the one CurrentValue: system memory, never local */
	void *cv_page;
	_Atomic uint64_t wseq;          /* the numbers of its writes (hw_fence_write), for every instance */
	unsigned faults;                /* OS_FENCE_FAULT_*: deliberately broken, for tests */
	_Atomic uint32_t refs;          /* instances not yet freed */
	pthread_mutex_t lock;           /* joining and leaving */
	uint32_t binding;               /* the slot os_cross_bind fills (lock held across the create) */
	/* published with release under the lock; read (acquire) by propagators */
	_Atomic(struct os_fence *) inst[OS_CROSS_MAX_ADAPTERS];
};

static void os_cross_free(struct os_cross *x)
{
	lf_free(x->cv_page, HW_PAGE_SIZE, HW_PAGE_SIZE);
	pthread_mutex_destroy(&x->lock);
	lf_free(x, sizeof(*x), LF_CACHELINE);
}

void os_cross_put(struct os_cross *x)
{
	/* acq_rel: the last put sees every instance's use of the group */
	if (atomic_fetch_sub_explicit(&x->refs, 1, memory_order_acq_rel) == 1)
		os_cross_free(x);
}

_Atomic uint64_t *os_cross_bind(struct os_fence *f, struct os_cross *x)
{
	f->x = x;
	f->x_slot = x->binding;
	/* the fence is not published yet: the handle table insert releases these */
	atomic_init(&f->x_seen, atomic_load_explicit(x->cv, memory_order_acquire));
	/* its own CV page (hw's) stays unused until freed; the process's GPU VA
	 * now maps the shared one (va.c) */
	if (hw_fence_set_cv(&f->hw, x->cv))
		lf_die("os_cross_bind: out of GPU VA");
	f->hw.wseq = &x->wseq;      /* one CurrentValue, one order of its writes */
	f->hw.local = false;        /* "Current value for cross adapter fences is always in system memory" */
	if (f->type != OS_FENCE_NATIVE)
		return NULL;            /* monitored: every GPU signal interrupts anyway */
	atomic_store_explicit(f->hw.mv, 0, memory_order_release);   /* MV = 0 for the fence's lifetime */
	/* BROKEN (tests only): the set owns MV, as for any native fence */
	return (x->faults & OS_FENCE_FAULT_MV_FOLLOWS_WAITERS) ? f->hw.mv : NULL;
}

/* Add an instance on adapter b.  x->lock held. */
static int os_cross_join_locked(struct os_cross *x, struct os_adapter *b, enum os_fence_type type,
				struct os_fence **out)
{
	lf_mutex_assert_held(&x->lock);
	int slot = -1;
	for (int i = 0; i < OS_CROSS_MAX_ADAPTERS; i++) {
		struct os_fence *g = atomic_load_explicit(&x->inst[i], memory_order_relaxed);
		if (g && g->a == b)
			return -EEXIST;
		if (!g && slot < 0)
			slot = i;
	}
	if (slot < 0)
		return -ENOSPC;
	x->binding = (uint32_t)slot;
	atomic_fetch_add_explicit(&x->refs, 1, memory_order_relaxed);   /* dropped by os_fence_free */
	struct os_fence *g;
	uint64_t now = atomic_load_explicit(x->cv, memory_order_acquire);
	int rc = os_fence_create_in(b, type, now, OS_FENCE_SHARED, x, &g);
	if (rc) {
		atomic_fetch_sub_explicit(&x->refs, 1, memory_order_relaxed);
		return rc;
	}
	/* release: a propagator that finds g sees it initialized */
	atomic_store_explicit(&x->inst[slot], g, memory_order_release);
	*out = g;
	return 0;
}

int os_cross_create(struct os_adapter *a, enum os_fence_type type, uint64_t initial,
		    unsigned flags, struct os_fence **out)
{
	/* "A cross-adapter fence must be created with type D3DDDI_NATIVEFENCE_TYPE_DEFAULT.
	 * Otherwise, D3DKMTCreateNativeFence fails." */
	if (flags & OS_FENCE_LOCAL_MEMORY)
		return -EINVAL;
	if (a->cfg.caps.no_64bit_atomics)
		return -EOPNOTSUPP;
	struct os_cross *x = lf_alloc(sizeof(*x), LF_CACHELINE);
	x->cv_page = lf_alloc(HW_PAGE_SIZE, HW_PAGE_SIZE);
	x->cv = x->cv_page;
	atomic_store_explicit(x->cv, initial, memory_order_relaxed);
	atomic_init(&x->wseq, 0);
	x->faults = flags & OS_FENCE_FAULTS;
	pthread_mutex_init(&x->lock, NULL);
	pthread_mutex_lock(&x->lock);
	int rc = os_cross_join_locked(x, a, type, out);
	pthread_mutex_unlock(&x->lock);
	if (rc)
		os_cross_free(x);
	return rc;
}

int os_fence_open_cross(struct os_fence *f, struct os_adapter *b, enum os_fence_type type,
			struct os_fence **out)
{
	struct os_cross *x = f->x;
	if (!x)
		return -EINVAL;
	if (b->cfg.caps.no_64bit_atomics)
		return -EOPNOTSUPP;   /* a GPU writing 32 bits would tear the shared 64-bit value */
	pthread_mutex_lock(&x->lock);
	int rc = os_cross_join_locked(x, b, type, out);
	pthread_mutex_unlock(&x->lock);
	return rc;
}

bool os_fence_is_cross_adapter(const struct os_fence *f)
{
	return f->x != NULL;
}

void os_cross_detach(struct os_fence *f)
{
	struct os_cross *x = f->x;
	pthread_mutex_lock(&x->lock);
	/* propagators that loaded f before this are inside read-side sections
	 * that end before f is freed (a grace period after os_fence_destroy) */
	if (atomic_load_explicit(&x->inst[f->x_slot], memory_order_relaxed) == f)
		atomic_store_explicit(&x->inst[f->x_slot], NULL, memory_order_release);
	pthread_mutex_unlock(&x->lock);
}

void os_cross_adapter_gone(struct os_adapter *a)
{
	uint32_t n = atomic_load_explicit(&a->table_hw, memory_order_acquire);
	for (uint32_t i = 0; i < n; i++) {
		struct os_fence *f = atomic_load_explicit(&a->table[i], memory_order_acquire);
		if (f && f->x)
			os_cross_detach(f);
	}
}

/* ---- propagation ---- */

/* Record v as the last value announced to an instance; true when it differs
 * from the one before (a read CurrentValue then owes a notification).
 * Relaxed: seen publishes nothing; the notification's ordering comes from the
 * seq_cst loads of the value and of the waiter threshold. */
static bool os_cross_changed(_Atomic uint64_t *seen, uint64_t v)
{
	return atomic_exchange_explicit(seen, v, memory_order_relaxed) != v;
}

/* Announce write w to instance g on its adapter b. */
static void os_cross_notify(struct os_fence *g, struct os_write w)
{
	uint64_t v = w.value;
	struct os_adapter *b = g->a;
	atomic_fetch_add_explicit(&b->x_received, 1, memory_order_relaxed);
	if (g->type == OS_FENCE_NATIVE) {
		/* DxgkDdiUpdateCurrentValuesFromCpu(NotificationOnly=TRUE): the value is
		 * in the shared CurrentValue already; "KMD rescans the run list to
		 * unblock HW channel that was waiting on hFence". */
		os_ddi_log(b, OS_DDI_UPDATE_CV_NOTIFY_ONLY, g->hw.handle, v);
		hw_cmp_cpu_signal_notify(b->hw);
	}
	/* CPU waiters and CPU-held command buffers: b's own interrupt thread
	 * releases them (os_fence_defer_release), after the seq_cst load of the
	 * value in os_cross_propagate. */
	if (os_fence_defer_release(g, w, false, OS_REC_RECEIVED))
		atomic_fetch_add_explicit(&b->x_soft, 1, memory_order_relaxed);
}

void os_cross_propagate(struct os_fence *f, struct os_write w)
{
	struct os_cross *x = f->x;
	if (x->faults & OS_FENCE_FAULT_NO_PROPAGATE)
		return;
	/* BROKEN (tests only): the value read now stands for the one signaled */
	bool known = w.value && !(x->faults & OS_FENCE_FAULT_PROPAGATE_CURRENT);
	/* seq_cst inside: the value read here was written (engine exchange, or
	 * CPU signal exchange) before the interrupt that brought us here; the
	 * load also orders a known w's notification checks after it.  The
	 * instances share the write numbers (os_cross_bind): each decides whom
	 * w may release by the one order of writes to the one CurrentValue. */
	uint64_t seq, now = hw_fence_read_seq(f->a->hw, &f->hw, &seq);
	if (!known)
		w = (struct os_write){ now, seq };
	uint64_t v = w.value;
	for (unsigned i = 0; i < OS_CROSS_MAX_ADAPTERS; i++) {
		struct os_fence *g = atomic_load_explicit(&x->inst[i], memory_order_acquire);
		if (!g || g == f)
			continue;
		bool changed = os_cross_changed(&g->x_seen, v);
		if (!known && !changed)
			continue;
		os_cross_notify(g, w);
		lf_count(&f->a->x_propagated, 1);
	}
}

void os_adapter_cross_stats(struct os_adapter *a, struct os_cross_stats *out)
{
	out->propagated = atomic_load_explicit(&a->x_propagated, memory_order_relaxed);
	out->received = atomic_load_explicit(&a->x_received, memory_order_relaxed);
	out->soft_raised = atomic_load_explicit(&a->x_soft, memory_order_relaxed);
}
