/* gpu-model/os/device.c — device, context and HW queue lifetime: creation,
 * context suspend/resume, queue destruction, device destruction and process
 * termination.  Contract in ums.h.  Calls doorbell.c (disconnect on
 * destruction) and hw/.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "gpu-model/os/ums_internal.h"
#include "lockfree/alloc.h"
#include "lockfree/arch.h"
#include "lockfree/asym.h"
#include "lockfree/die.h"
#include "lockfree/thread.h"

void (*os_test_drain_hook)(struct os_hwqueue *q);
void (*os_test_sched_wait_hook)(struct os_hwqueue *q);
void (*os_test_destroy_wait_hook)(struct os_device *d);

/* ---- devices and contexts ---- */

int os_device_create(struct os_ums *u, struct os_device **out)
{
	os_ums_thunk(u);
	pthread_mutex_lock(&u->lock);
	if (u->ndevices == OS_UMS_MAX_DEVICES || u->bugchecked) {
		int rc = u->bugchecked ? -ENODEV : -ENOSPC;
		pthread_mutex_unlock(&u->lock);
		return rc;
	}
	struct os_device *d = lf_alloc(sizeof(*d), LF_CACHELINE);
	d->u = u;
	d->log_dev = os_logs_device(u->a);   /* logbuf: the parent device's HW queue logs */
	u->devices[u->ndevices++] = d;
	pthread_mutex_unlock(&u->lock);
	*out = d;
	return 0;
}

bool os_device_in_error(const struct os_device *d)
{
	return atomic_load_explicit(&d->error, memory_order_acquire);
}

void os_device_track_fence(struct os_device *d, struct os_fence *f)
{
	pthread_mutex_lock(&d->u->lock);
	if (d->nfences == d->fences_cap) {
		size_t cap = d->fences_cap ? 2 * d->fences_cap : 16;
		struct os_fence **n = realloc(d->fences, cap * sizeof(*n));
		if (!n)
			lf_die("os_device_track_fence: out of memory");
		d->fences = n;
		d->fences_cap = cap;
	}
	d->fences[d->nfences++] = f;
	/* logbuf: the fence's parent device (release: read by the interrupt thread) */
	atomic_store_explicit(&f->log_dev, d->log_dev, memory_order_release);
	pthread_mutex_unlock(&d->u->lock);
}

void os_device_untrack_fence(struct os_device *d, struct os_fence *f)
{
	pthread_mutex_lock(&d->u->lock);
	for (size_t i = 0; i < d->nfences; i++)
		if (d->fences[i] == f) {
			atomic_store_explicit(&f->log_dev, 0, memory_order_release);
			d->fences[i] = d->fences[--d->nfences];
			break;
		}
	pthread_mutex_unlock(&d->u->lock);
}

int os_context_create(struct os_device *d, unsigned engine, struct os_context **out)
{
	struct os_ums *u = d->u;
	os_ums_thunk(u);
	if (engine >= hw_adapter_caps(u->hw)->engines)
		return -EINVAL;
	pthread_mutex_lock(&u->lock);
	int rc = 0;
	if (d->dead || d->destroying || os_device_in_error(d) || u->bugchecked)
		rc = -ENODEV;
	else if (u->ncontexts == OS_UMS_MAX_CONTEXTS)
		rc = -ENOSPC;
	if (rc) {
		pthread_mutex_unlock(&u->lock);
		return rc;
	}
	struct os_context *c = lf_alloc(sizeof(*c), LF_CACHELINE);
	c->d = d;
	c->engine = engine;
	c->id = u->ncontexts + 1;
	c->suspended = u->d3 ? OS_SUSPEND_D3 : 0;
	c->next = d->contexts;
	d->contexts = c;
	u->contexts[u->ncontexts++] = c;
	pthread_mutex_unlock(&u->lock);
	*out = c;
	return 0;
}

uint64_t os_context_id(const struct os_context *c)
{
	return c->id;
}

void os_context_ddi_locked(struct os_context *c, bool suspend)
{
	lf_mutex_assert_held(&c->d->u->lock);
	os_ddi_log(c->d->u->a, suspend ? OS_DDI_SUSPEND_CONTEXT : OS_DDI_RESUME_CONTEXT, c->id, 0);
}

/* May q be on the run list?  Its context is not suspended, or only by the
 * application while a destroy (of q, or of its device) drains q: the
 * destroy waits for q's work, and a suspend would make it wait out its
 * bound and drop the work.  D3 is refused while a destroy drains
 * (os_power_d3); an abnormal termination takes q off for good. */
bool os_hwqueue_runs_locked(const struct os_hwqueue *q)
{
	lf_mutex_assert_held(&q->u->lock);
	unsigned s = q->ctx->suspended;
	return s == 0 || ((q->draining || q->ctx->d->destroying) && s == OS_SUSPEND_USER);
}

/* q onto / off the HW scheduler's run list. */
static void os_hwqueue_schedule_locked(struct os_hwqueue *q, bool run)
{
	lf_mutex_assert_held(&q->u->lock);
	hw_queue_set_scheduled(q->hwq, run);
	/* kernel-mode: what the OS holds for lack of ring space goes on */
	if (q->kq && run)
		os_queue_resumed(q->kq);
}

/* Bring every queue of c onto / off the run list to match c->suspended
 * (DxgkDdiSuspendContext / DxgkDdiResumeContext: the KMD takes the
 * context's queues off the HW scheduler's list or puts them back). */
void os_context_apply_locked(struct os_context *c)
{
	lf_mutex_assert_held(&c->d->u->lock);
	os_context_ddi_locked(c, c->suspended != 0);
	/* seed user-mode-work-submission, "Hardware context suspension": "KMD
	 * removes all HWQueues of the context" / "adds all HWQueues of the
	 * context"; OS_UMS_FAULT_SUSPEND_ONE_QUEUE: broken on purpose, the first */
	bool one = c->d->u->cfg.ums_fault == OS_UMS_FAULT_SUSPEND_ONE_QUEUE;
	for (struct os_hwqueue *q = c->queues; q; q = q->next) {
		if (atomic_load_explicit(&q->gone, memory_order_relaxed))
			continue;
		os_hwqueue_schedule_locked(q, os_hwqueue_runs_locked(q));
		if (one)
			break;
	}
}

void os_context_suspend(struct os_context *c)
{
	struct os_ums *u = c->d->u;
	os_ums_thunk(u);
	pthread_mutex_lock(&u->lock);
	if (!(c->suspended & OS_SUSPEND_USER)) {
		/* DxgkddiSuspendContext: the KMD removes the context's queues from
		 * the HW scheduler's list; doorbells stay connected, rings resident */
		bool was_running = c->suspended == 0;
		c->suspended |= OS_SUSPEND_USER;
		if (was_running) {
			os_context_apply_locked(c);
			lf_count(&u->suspends, 1);
		}
	}
	pthread_mutex_unlock(&u->lock);
}

void os_context_resume(struct os_context *c)
{
	struct os_ums *u = c->d->u;
	os_ums_thunk(u);
	pthread_mutex_lock(&u->lock);
	if (c->suspended & OS_SUSPEND_USER) {
		c->suspended &= ~OS_SUSPEND_USER;
		if (c->suspended == 0) {
			/* DxgkddiResumeContext: back on the list; the CMP observes the
			 * new write pointers (set_scheduled kicks) */
			os_context_apply_locked(c);
			lf_count(&u->resumes, 1);
		}
	}
	pthread_mutex_unlock(&u->lock);
}

/* ---- HW queues ---- */

static int os_hwqueue_new_hw(struct os_ums *u, struct os_hwqueue *q, unsigned engine, size_t ring_slots)
{
	if (q->um) {
		/* no ring yet: the application's comes with CreateDoorbell */
		int rc = hw_queue_create_um(u->hw, engine, &q->hwq);
		return rc ? rc : os_ctx_alloc_create(u->a, q->hwq, HW_CTX_ALLOC_BYTES_DEFAULT, &q->ctx_alloc);
	}
	q->subq = lf_ring_create(sizeof(struct os_km_desc), ring_slots);
	if (!q->subq)
		return -EINVAL;
	int rc = os_queue_create(u->a, engine, ring_slots, &q->kq);
	if (rc)
		return rc;
	q->hwq = q->kq->hwq;
	return 0;
}

int os_hwqueue_create(struct os_context *c, unsigned flags, size_t ring_slots, struct os_fence *progress,
		      struct os_hwqueue **out)
{
	struct os_ums *u = c->d->u;
	os_ums_thunk(u);
	if (!progress)
		return -EINVAL;
	/* seed native-gpu-fence, "Indicating a native progress fence for
	 * hardware queues": NativeProgressFence names a native fence, and a
	 * user-mode queue has one (its signals interrupt nobody otherwise) */
	bool native_progress = os_fence_is_native(progress);
	if (!native_progress && (flags & (OS_HWQUEUE_NATIVE_PROGRESS_FENCE | OS_HWQUEUE_USER_MODE_SUBMISSION)))
		return -EINVAL;
	pthread_mutex_lock(&u->lock);
	int rc = 0;
	if (c->d->dead || c->d->destroying || os_device_in_error(c->d))
		rc = -ENODEV;
	else if (atomic_load(&u->nqueues) == OS_UMS_MAX_QUEUES)
		rc = -ENOSPC;
	if (rc)
		goto unlock;
	struct os_hwqueue *q = lf_alloc(sizeof(*q), LF_CACHELINE);
	q->u = u;
	q->ctx = c;
	q->um = flags & OS_HWQUEUE_USER_MODE_SUBMISSION;
	q->native_progress = native_progress;
	q->progress = progress;
	q->db.phys = -1;
	atomic_init(&q->db.cpuva, u->dummy);
	atomic_init(&q->db.status, OS_DOORBELL_DISCONNECTED_RETRY);
	/* the progress fence may already be past 0: nothing is pending */
	atomic_init(&q->last_queued, os_fence_value(progress));
	rc = os_hwqueue_new_hw(u, q, c->engine, ring_slots);
	if (rc) {
		lf_ring_destroy(q->subq);
		lf_free(q, sizeof(*q), LF_CACHELINE);
		goto unlock;
	}
	if (q->um)
		if (!os_log_attach(u->a, q->hwq, u->log_bytes, &q->log))   /* logbuf: kernel-mode queues get none */
			os_log_set_device(q->log, c->d->log_dev);
	if (c->d->ctx_alloc)
		hw_queue_set_dev_alloc(q->hwq, c->d->ctx_alloc);   /* ctxalloc.c: its device's */
	if (c->suspended)
		hw_queue_set_scheduled(q->hwq, false);
	q->next = c->queues;
	c->queues = q;
	uint32_t n = atomic_load_explicit(&u->nqueues, memory_order_relaxed);
	u->queues[n] = q;
	/* release: the scheduler sees an initialized queue once it sees the count */
	atomic_store_explicit(&u->nqueues, n + 1, memory_order_release);
	*out = q;
unlock:
	pthread_mutex_unlock(&u->lock);
	return rc;
}

bool os_hwqueue_is_um(const struct os_hwqueue *q)
{
	return q->um;
}

unsigned os_hwqueue_engine(const struct os_hwqueue *q)
{
	return q->ctx->engine;
}

struct os_fence *os_hwqueue_progress(struct os_hwqueue *q)
{
	return q->progress;
}

bool os_hwqueue_native_progress(const struct os_hwqueue *q)
{
	return q->native_progress;
}

uint64_t os_hwqueue_last_queued(const struct os_hwqueue *q)
{
	return atomic_load_explicit(&q->last_queued, memory_order_acquire);
}

uint64_t os_hwqueue_completed(struct os_hwqueue *q)
{
	return os_fence_value(q->progress);
}

bool os_hwqueue_pending(struct os_hwqueue *q)
{
	/* last queued first: it only grows, and is written before the work
	 * becomes visible (the seed's order), so completed > a stale last
	 * queued is impossible and the answer errs toward "pending" */
	uint64_t lq = os_hwqueue_last_queued(q);
	return lq > os_hwqueue_completed(q);
}

size_t os_hwqueue_held(struct os_hwqueue *q)
{
	return q->um ? 0 : os_queue_held(q->kq);
}

struct hw_ctx_alloc *os_hwqueue_ctx_alloc(struct os_hwqueue *q)
{
	return q->um ? q->ctx_alloc : os_queue_ctx_alloc(q->kq);
}

struct hw_queue *os_hwqueue_hw(struct os_hwqueue *q)
{
	return q->hwq;
}

void os_hwqueue_set_priority(struct os_hwqueue *q, int32_t priority)
{
	hw_queue_set_priority(q->hwq, priority);
}

int32_t os_hwqueue_priority(const struct os_hwqueue *q)
{
	return hw_queue_priority(q->hwq);
}

/* ---- destruction ---- */

/* Disconnect the doorbell and have the CMP look at the final write pointer:
 * a normal termination's first step, before its wait (seed, "Normal and
 * abnormal process termination": "1. Dxgkrnl calls
 * DxgkDdiDisconnectDoorbell to disconnect the doorbell.  2. Dxgkrnl waits
 * for the last queued HwQueueProgressFenceLastQueuedValueCPUVirtualAddress
 * to be completed on the GPU").  OS_UMS_FAULT_DRAIN_BEFORE_DISCONNECT:
 * broken on purpose, the doorbell stays connected through the wait and is
 * disconnected only when the queue goes (os_hwqueue_gone_locked). */
static void os_hwqueue_quiesce_locked(struct os_hwqueue *q)
{
	lf_mutex_assert_held(&q->u->lock);
	if (q->um && q->db.created && q->u->cfg.ums_fault != OS_UMS_FAULT_DRAIN_BEFORE_DISCONNECT)
		os_doorbell_disconnect_locked(q, q->db.aborted ? OS_DOORBELL_DISCONNECTED_ABORT
							       : OS_DOORBELL_DISCONNECTED_RETRY);
	hw_queue_kick(q->hwq);
}

/* Wait for the last queued progress value (the rings stay resident). */
static int os_hwqueue_drain(struct os_hwqueue *q)
{
	if (os_test_drain_hook)
		os_test_drain_hook(q);
	uint64_t lq = os_hwqueue_last_queued(q);
	int rc = os_fence_wait_cpu(q->progress, lq, q->u->cfg.drain_timeout_ns);
	if (rc)
		lf_count(&q->u->drain_timeouts, 1);
	return rc;
}

#define OS_SCHED_LET_GO_NS 10000000000ull   /* a popped submission the scheduler still holds, at most */

/* Wait for the scheduler thread to let go of a submission of q it popped
 * before it could see q gone (os_sched_hand): the caller then releases q's
 * progress fence, after which the application frees the buffer and the
 * fences it names.  u->lock held: the scheduler takes no u->lock while it
 * holds one (it validates, copies and submits to q's OS queue).  Bounded:
 * past OS_SCHED_LET_GO_NS the run ends (lf_die) rather than hang.
 * Within the hold the scheduler may wait for the video memory manager
 * (os_queue_submit_buffer makes q's context allocation resident: a paging
 * buffer on engine 0, up to 10 s, and an eviction that waits for an engine
 * to leave its victim).  If that engine is hung and the caller is the TDR
 * watchdog terminating another engine's guilty device, only the caller can
 * reset it: so the watchdog looks at every engine while it waits here
 * (os_tdr_watch_locked), as in its other waits under u->lock; a shorter
 * bound instead would let the application free a buffer the scheduler
 * still reads. */
static void os_hwqueue_sched_wait_locked(struct os_hwqueue *q)
{
	lf_mutex_assert_held(&q->u->lock);
	if (q->u->cfg.ums_fault == OS_UMS_FAULT_SCHED_NO_LET_GO)
		return;                 /* broken on purpose */
	uint64_t end = 0;
	/* seq_cst load after the seq_cst store of gone (os_hwqueue_gone_locked):
	 * the destroyer's half of os_sched_hand's Dekker pair; seeing it clear
	 * acquires the scheduler's release of busy (its reads are done) */
	while (atomic_load_explicit(&q->sched_busy, memory_order_seq_cst)) {
		if (!end && os_test_sched_wait_hook)
			os_test_sched_wait_hook(q);
		if (!end)
			end = lf_now_ns() + OS_SCHED_LET_GO_NS;
		else if (lf_now_ns() > end)
			lf_die("os_hwqueue_destroy: the scheduler thread held a submission of queue %llu for 10 s",
			       (unsigned long long)hw_queue_handle(q->hwq));
		/* the scheduler may itself wait on an engine (a paging buffer in
		 * vidmm): on the watchdog's thread, look at the engines meanwhile,
		 * since nobody else resets a hung one */
		os_tdr_watch_locked(q->u);
		sched_yield();
	}
}

/* Destroy: off the hardware for good (anything left is discarded), the
 * scheduler drops its submissions and has let go of the one it held, what
 * the OS held on the CPU for it is dropped (so the caller may destroy the
 * fences its buffers named once the destroy returns); memory is reclaimed
 * at detach. */
static void os_hwqueue_gone_locked(struct os_hwqueue *q)
{
	lf_mutex_assert_held(&q->u->lock);
	/* seq_cst: pairs with the scheduler's busy store + gone load (os_sched_hand) */
	atomic_store_explicit(&q->gone, true, memory_order_seq_cst);
	if (!q->um) {
		os_hwqueue_sched_wait_locked(q);
		os_queue_retire(q->kq);     /* before the HW queue: the interrupt thread feeds it no more */
	}
	if (q->db.connected)
		os_doorbell_disconnect_locked(q, OS_DOORBELL_DISCONNECTED_RETRY);
	if (q->db.created) {
		os_ddi_log(q->u->a, OS_DDI_DESTROY_DOORBELL, hw_queue_handle(q->hwq), 0);
		os_doorbell_release_locked(q);
	}
	q->db.created = false;
	os_tdr_retire_locked(q->u, q->hwq);   /* tdr.c: the watchdog's waits watch the engines */
	/* ctxalloc.c: destroying the context's queue destroys its allocation */
	os_ctx_alloc_destroy(q->u->a, q->um ? &q->ctx_alloc : &q->kq->ctx_alloc);
}

static void os_ring_alloc_free_locked(struct os_ring_alloc *r);

/* A queue's own destroy: the queue and its doorbell go, the UMD's ring
 * allocations stay (seed, "Residency model of doorbell memory and ring
 * buffer allocations": "The only scenario in which Dxgkrnl destroys ring
 * buffer allocations is during device termination"); the UMD destroys them.
 * OS_UMS_FAULT_QUEUE_DESTROYS_RINGS: broken on purpose, destroyed with it. */
static void os_hwqueue_gone_rings_stay_locked(struct os_hwqueue *q)
{
	lf_mutex_assert_held(&q->u->lock);
	struct os_ring_alloc *rb = q->db.rb, *rbc = q->db.rbc;
	os_hwqueue_gone_locked(q);
	if (q->u->cfg.ums_fault != OS_UMS_FAULT_QUEUE_DESTROYS_RINGS)
		return;
	if (rb && !rb->dead)
		os_ring_alloc_free_locked(rb);
	if (rbc && !rbc->dead)
		os_ring_alloc_free_locked(rbc);
}

/* A destroy drains q from now on (os_hwqueue_runs_locked): a context the
 * application suspended lets q run for it. */
static void os_hwqueue_drain_begin_locked(struct os_hwqueue *q)
{
	lf_mutex_assert_held(&q->u->lock);
	q->draining++;
	q->u->draining++;
	if (q->ctx->suspended && os_hwqueue_runs_locked(q))
		os_hwqueue_schedule_locked(q, true);
}

static void os_hwqueue_drain_end_locked(struct os_hwqueue *q)
{
	lf_mutex_assert_held(&q->u->lock);
	q->draining--;
	q->u->draining--;
	pthread_cond_broadcast(&q->u->drained);   /* a device destroy may wait for it */
}

int os_hwqueue_destroy(struct os_hwqueue *q)
{
	struct os_ums *u = q->u;
	os_ums_thunk(u);
	pthread_mutex_lock(&u->lock);
	bool shared = u->cfg.ums_fault == OS_UMS_FAULT_DESTROY_SHARED;   /* broken on purpose */
	if (atomic_load(&q->gone) || q->ctx->d->destroying || (q->draining && !shared)) {
		/* destroyed already; or another destroy (of q, or of its device)
		 * owns it now: that one's caller may destroy q's progress fence
		 * the moment it returns, so this one must not be draining q then */
		int rc = atomic_load(&q->gone) ? 0 : -EBUSY;
		pthread_mutex_unlock(&u->lock);
		return rc;
	}
	if (u->d3) {
		os_power_d0_locked(u);
		os_power_resume_all_locked(u);
	}
	os_hwqueue_drain_begin_locked(q);
	os_hwqueue_quiesce_locked(q);
	pthread_mutex_unlock(&u->lock);
	int rc = os_hwqueue_drain(q);
	pthread_mutex_lock(&u->lock);
	os_hwqueue_drain_end_locked(q);
	/* Gone during the drain: the device's destroy (which drained it too)
	 * or an abnormal termination, which dropped what was queued and whose
	 * progress-fence signal ended the wait. */
	if (!atomic_load(&q->gone))
		os_hwqueue_gone_rings_stay_locked(q);
	else if (os_device_in_error(q->ctx->d))
		rc = -ENODEV;
	q->destroyed = true;
	pthread_mutex_unlock(&u->lock);
	return rc;
}

/* Normal termination, first part (u->lock; d->destroying set, so no context
 * or queue is created on d any more, and no queue destroy of d runs): D0; contexts the process suspended resume so that what it
 * queued completes (and a suspend from now on leaves d's queues running,
 * os_hwqueue_runs_locked; D3 is refused until the drain ends); doorbells
 * disconnected. */
static void os_device_destroy_begin_locked(struct os_device *d)
{
	struct os_ums *u = d->u;
	lf_mutex_assert_held(&u->lock);
	if (u->d3) {
		os_power_d0_locked(u);
		os_power_resume_all_locked(u);
	}
	for (struct os_context *c = d->contexts; c; c = c->next) {
		if (c->suspended & OS_SUSPEND_USER) {
			c->suspended &= ~OS_SUSPEND_USER;
			if (!c->suspended)
				os_context_apply_locked(c);
		}
		for (struct os_hwqueue *q = c->queues; q; q = q->next)
			if (!atomic_load(&q->gone))
				os_hwqueue_quiesce_locked(q);
	}
}

/* Does an os_hwqueue_destroy drain a queue of d now? */
static bool os_device_queue_draining_locked(const struct os_device *d)
{
	lf_mutex_assert_held(&d->u->lock);
	for (const struct os_context *c = d->contexts; c; c = c->next)
		for (const struct os_hwqueue *q = c->queues; q; q = q->next)
			if (q->draining)
				return true;
	return false;
}

/* Normal termination: for each queue, disconnect, wait for the last queued
 * value, destroy.  The process is exiting: contexts it suspended resume so
 * that what it queued completes.  A queue whose own destroy is draining it
 * is that destroy's: this one waits for it to end first (its caller may
 * destroy the queue's progress fence as soon as it returns, so this drain
 * must not be waiting on that fence then); d->destroying keeps new ones
 * out.  The wait releases u->lock; it lasts what that drain does (its
 * bound, drain_timeout_ns). */
int os_device_destroy(struct os_device *d)
{
	struct os_ums *u = d->u;
	os_ums_thunk(u);
	pthread_mutex_lock(&u->lock);
	if (d->dead || d->destroying) {
		int rc = d->dead ? 0 : -EBUSY;
		pthread_mutex_unlock(&u->lock);
		return rc;
	}
	d->destroying = true;
	u->draining++;
	for (bool told = false; u->cfg.ums_fault != OS_UMS_FAULT_DESTROY_SHARED && os_device_queue_draining_locked(d);
	     told = true) {
		if (!told && os_test_destroy_wait_hook)
			os_test_destroy_wait_hook(d);
		pthread_cond_wait(&u->drained, &u->lock);
	}
	if (d->dead) {
		/* terminated meanwhile: nothing left to drain */
		u->draining--;
		pthread_mutex_unlock(&u->lock);
		return -ENODEV;
	}
	os_device_destroy_begin_locked(d);
	pthread_mutex_unlock(&u->lock);

	/* The lists are walked without u->lock: they change only under it, by
	 * the creates, which d->destroying refuses from here on (the unlock
	 * above orders every earlier insertion before this walk); a
	 * termination meanwhile only marks queues gone. */
	int rc = 0;
	for (struct os_context *c = d->contexts; c; c = c->next)
		for (struct os_hwqueue *q = c->queues; q; q = q->next)
			if (!atomic_load(&q->gone) && os_hwqueue_drain(q))
				rc = -ETIMEDOUT;

	pthread_mutex_lock(&u->lock);
	u->draining--;
	if (d->dead) {
		/* an abnormal termination came during the drain and dropped the rest */
		pthread_mutex_unlock(&u->lock);
		return -ENODEV;
	}
	for (struct os_context *c = d->contexts; c; c = c->next) {
		for (struct os_hwqueue *q = c->queues; q; q = q->next) {
			if (!atomic_load(&q->gone))
				os_hwqueue_gone_locked(q);
			q->destroyed = true;
		}
		c->dead = true;
	}
	/* "it can now destroy the Ring Buffer/Ring Buffer Control allocations" */
	os_ring_allocs_destroy_locked(d);
	d->dead = true;
	os_ctx_alloc_destroy(u->a, &d->ctx_alloc);   /* ctxalloc.c: with its last context */
	pthread_mutex_unlock(&u->lock);
	return rc;
}

/* Every doorbell of d disconnected with ABORT (abnormal termination). */
static void os_device_disconnect_abort_locked(struct os_device *d)
{
	lf_mutex_assert_held(&d->u->lock);
	for (struct os_context *c = d->contexts; c; c = c->next)
		for (struct os_hwqueue *q = c->queues; q; q = q->next)
			if (!atomic_load(&q->gone) && q->um && q->db.created)
				os_doorbell_disconnect_locked(q, OS_DOORBELL_DISCONNECTED_ABORT);
}

/* Is a queue of c on the run list for a destroy's drain alone (its context
 * suspended by the application)? */
static bool os_context_drains_locked(const struct os_context *c)
{
	lf_mutex_assert_held(&c->d->u->lock);
	for (const struct os_hwqueue *q = c->queues; q; q = q->next)
		if (!atomic_load(&q->gone) && os_hwqueue_runs_locked(q))
			return true;
	return false;
}

/* os_context_apply_locked's suspend, with each wait through tdr.c (the
 * watchdog terminating a guilty device must not wait on a hung engine). */
static void os_terminate_suspend_locked(struct os_context *c)
{
	os_context_ddi_locked(c, true);
	for (struct os_hwqueue *q = c->queues; q; q = q->next)
		if (!atomic_load_explicit(&q->gone, memory_order_relaxed)) {
			hw_queue_unschedule_begin(q->hwq);
			os_tdr_engine_wait_locked(c->d->u, q->hwq, false);
		}
}

/* Abnormal termination, the seed's order ("Normal and abnormal process
 * termination"): device in error, every context suspended, then each
 * queue's doorbell disconnected (ABORT) and everything destroyed at once
 * (ring allocations too); then every progress-fence waiter released with
 * UINT64_MAX.  OS_UMS_FAULT_DISCONNECT_BEFORE_SUSPEND: the broken order. */
void os_device_terminate(struct os_device *d)
{
	struct os_ums *u = d->u;
	os_mutex_lock_watching(&u->lock);   /* tdr.c: the watchdog looks while it waits */
	if (d->dead) {
		pthread_mutex_unlock(&u->lock);
		return;
	}
	/* 1. the device is marked in error */
	atomic_store_explicit(&d->error, true, memory_order_seq_cst);
	bool broken = u->cfg.ums_fault == OS_UMS_FAULT_DISCONNECT_BEFORE_SUSPEND;
	if (broken)
		os_device_disconnect_abort_locked(d);
	/* 2. DxgkddiSuspendContext for each context: preempted, off the run
	 * list; the ring allocations stay resident */
	for (struct os_context *c = d->contexts; c; c = c->next) {
		/* a context the application suspended runs still, if a destroy
		 * drains one of its queues (os_hwqueue_runs_locked) */
		bool was_running = c->suspended == 0 || os_context_drains_locked(c);
		c->suspended |= OS_SUSPEND_ERROR;
		if (was_running)
			os_terminate_suspend_locked(c);
	}
	/* 3a. DxgkDdiDisconnectDoorbell for each HW queue (ABORT) */
	if (!broken)
		os_device_disconnect_abort_locked(d);
	/* 3b. the doorbell and HW queue objects, then the ring allocations */
	for (struct os_context *c = d->contexts; c; c = c->next) {
		for (struct os_hwqueue *q = c->queues; q; q = q->next) {
			if (atomic_load(&q->gone))
				continue;
			if (os_hwqueue_pending(q))
				lf_count(&u->lost_at_abnormal, 1);
			os_hwqueue_gone_locked(q);
		}
		c->dead = true;
	}
	os_ring_allocs_destroy_locked(d);
	d->dead = true;
	/* ctxalloc.c: the device context allocation goes with the device, an
	 * abnormal end too (seed gpu-preemption, step 6: DxgkCbDestroyContextAllocation
	 * "to destroy GPU context allocations and device context allocations") */
	os_ctx_alloc_destroy(u->a, &d->ctx_alloc);
	/* D3D12 device removal: fences read UINT64_MAX, waiters return; the
	 * queues' progress fences and the device's own, all under the lock: a
	 * waiter released here may destroy the device at once, and
	 * os_device_destroy takes the lock first, so no queue or fence this
	 * walks is freed meanwhile (TSan saw the walk race the free when the
	 * progress fences were signaled after the unlock) */
	for (struct os_context *c = d->contexts; c; c = c->next)
		for (struct os_hwqueue *q = c->queues; q; q = q->next)
			if (!q->destroyed)   /* a destroyed queue's fence is its owner's alone (ums.h) */
				os_fence_signal_cpu(q->progress, UINT64_MAX);
	for (size_t i = 0; i < d->nfences; i++)
		os_fence_signal_cpu(d->fences[i], UINT64_MAX);
	pthread_mutex_unlock(&u->lock);
}

/* ---- ring buffer allocations ---- */

int os_ring_alloc_create(struct os_device *d, enum os_ring_alloc_kind kind, size_t ring_slots,
			 struct os_ring_alloc **out)
{
	struct os_ums *u = d->u;
	os_ums_thunk(u);
	if (kind != OS_RING_BUFFER && kind != OS_RING_BUFFER_CONTROL)
		return -EINVAL;
	if (kind == OS_RING_BUFFER && (!ring_slots || ring_slots > (1u << 20) || (ring_slots & (ring_slots - 1))))
		return -EINVAL;
	/* zeroed: a control block's indices start at 0 */
	size_t bytes = kind == OS_RING_BUFFER ? ring_slots * sizeof(struct hw_cmd) : lf_ring_control_bytes();
	void *mem = lf_alloc(bytes, LF_DESTRUCTIVE);
	pthread_mutex_lock(&u->lock);
	if (d->dead || os_device_in_error(d)) {
		pthread_mutex_unlock(&u->lock);
		lf_free(mem, bytes, LF_DESTRUCTIVE);
		return -ENODEV;
	}
	struct os_ring_alloc *r = lf_alloc(sizeof(*r), LF_CACHELINE);
	r->d = d;
	r->kind = kind;
	r->mem = mem;
	r->bytes = bytes;
	r->slots = kind == OS_RING_BUFFER ? ring_slots : 0;
	r->next = d->allocs;
	d->allocs = r;
	pthread_mutex_unlock(&u->lock);
	*out = r;
	return 0;
}

int os_ring_alloc_make_resident(struct os_ring_alloc *r)
{
	struct os_ums *u = r->d->u;
	os_ums_thunk(u);
	pthread_mutex_lock(&u->lock);
	int rc = r->dead ? -EIDRM : 0;
	if (!rc)
		r->resident = true;
	pthread_mutex_unlock(&u->lock);
	return rc;
}

int os_ring_alloc_evict(struct os_ring_alloc *r)
{
	struct os_ums *u = r->d->u;
	os_ums_thunk(u);
	pthread_mutex_lock(&u->lock);
	int rc = r->dead ? -EIDRM : r->refs ? -EBUSY : 0;
	if (!rc)
		r->resident = false;
	pthread_mutex_unlock(&u->lock);
	return rc;
}

/* Destroy r: its memory goes now unless a queue's ring is bound to it (the
 * hardware addresses it until the adapter goes: the ring owns it then and
 * is freed with the queue). */
static void os_ring_alloc_free_locked(struct os_ring_alloc *r)
{
	lf_mutex_assert_held(&r->d->u->lock);
	r->dead = true;
	r->resident = false;
	/* an abnormal termination (a TDR's) ends the device under a process
	 * that may still write through the CPU VA it got: Windows keeps a
	 * removed device's allocations until the application releases them */
	if (!r->bound && os_device_in_error(r->d))
		r->kept = r->mem;
	else if (!r->bound)
		lf_free(r->mem, r->bytes, LF_DESTRUCTIVE);
	r->mem = NULL;
	r->ring = NULL;
}

int os_ring_alloc_destroy(struct os_ring_alloc *r)
{
	struct os_ums *u = r->d->u;
	os_ums_thunk(u);
	pthread_mutex_lock(&u->lock);
	/* Dxgkrnl's reference: not while a doorbell lives on it */
	int rc = r->dead ? -EIDRM : r->refs ? -EBUSY : 0;
	if (!rc)
		os_ring_alloc_free_locked(r);
	if (rc == -EIDRM && r->kept) {
		lf_free(r->kept, r->bytes, LF_DESTRUCTIVE);   /* the application releases it now */
		r->kept = NULL;
	}
	pthread_mutex_unlock(&u->lock);
	return rc;
}

void os_ring_allocs_destroy_locked(struct os_device *d)
{
	lf_mutex_assert_held(&d->u->lock);
	for (struct os_ring_alloc *r = d->allocs; r; r = r->next)
		if (!r->dead) {
			r->refs = 0;          /* its doorbells are gone with the device's queues */
			os_ring_alloc_free_locked(r);
		}
}

bool os_ring_alloc_resident(const struct os_ring_alloc *r)
{
	pthread_mutex_lock(&r->d->u->lock);
	bool b = r->resident;
	pthread_mutex_unlock(&r->d->u->lock);
	return b;
}

bool os_ring_alloc_destroyed(const struct os_ring_alloc *r)
{
	pthread_mutex_lock(&r->d->u->lock);
	bool b = r->dead;
	pthread_mutex_unlock(&r->d->u->lock);
	return b;
}

unsigned os_ring_alloc_refs(const struct os_ring_alloc *r)
{
	pthread_mutex_lock(&r->d->u->lock);
	unsigned n = r->refs;
	pthread_mutex_unlock(&r->d->u->lock);
	return n;
}

struct lf_ring *os_ring_alloc_ring(struct os_ring_alloc *r)
{
	pthread_mutex_lock(&r->d->u->lock);
	struct lf_ring *ring = r->ring;
	pthread_mutex_unlock(&r->d->u->lock);
	return ring;
}

const void *os_ring_alloc_cpuva(struct os_ring_alloc *r)
{
	pthread_mutex_lock(&r->d->u->lock);
	const void *mem = r->mem;
	pthread_mutex_unlock(&r->d->u->lock);
	return mem;
}
