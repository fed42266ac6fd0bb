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

/* ---- devices and contexts ---- */

int os_device_create(struct os_ums *u, struct os_device **out)
{
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
	if (engine >= hw_adapter_caps(u->hw)->engines)
		return -EINVAL;
	pthread_mutex_lock(&u->lock);
	int rc = 0;
	if (d->dead || os_device_in_error(d) || u->bugchecked)
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
	c->suspended = u->d3 ? OS_SUSPEND_D3 : 0;
	c->next = d->contexts;
	d->contexts = c;
	u->contexts[u->ncontexts++] = c;
	pthread_mutex_unlock(&u->lock);
	*out = c;
	return 0;
}

/* Bring every queue of c onto / off the run list to match c->suspended. */
void os_context_apply_locked(struct os_context *c)
{
	lf_mutex_assert_held(&c->d->u->lock);
	for (struct os_hwqueue *q = c->queues; q; q = q->next) {
		if (atomic_load_explicit(&q->gone, memory_order_relaxed))
			continue;
		hw_queue_set_scheduled(q->hwq, c->suspended == 0);
		/* kernel-mode: what the OS holds for lack of ring space goes on */
		if (q->kq && c->suspended == 0)
			os_queue_resumed(q->kq);
	}
}

void os_context_suspend(struct os_context *c)
{
	struct os_ums *u = c->d->u;
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
		int rc = hw_queue_create_um(u->hw, engine, ring_slots, &q->hwq);
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
	if (c->d->dead || os_device_in_error(c->d))
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
	q->resident = !u->d3;
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

/* Disconnect the doorbell and have the CMP look at the final write pointer. */
static void os_hwqueue_quiesce_locked(struct os_hwqueue *q)
{
	lf_mutex_assert_held(&q->u->lock);
	if (q->um && q->db.created)
		os_doorbell_disconnect_locked(q, q->db.aborted ? OS_DOORBELL_DISCONNECTED_ABORT
							       : OS_DOORBELL_DISCONNECTED_RETRY);
	hw_queue_kick(q->hwq);
}

/* Wait for the last queued progress value (the rings stay resident). */
static int os_hwqueue_drain(struct os_hwqueue *q)
{
	uint64_t lq = os_hwqueue_last_queued(q);
	int rc = os_fence_wait_cpu(q->progress, lq, q->u->cfg.drain_timeout_ns);
	if (rc)
		lf_count(&q->u->drain_timeouts, 1);
	return rc;
}

/* Destroy: off the hardware for good (anything left is discarded), the
 * scheduler drops its submissions; memory is reclaimed at detach. */
static void os_hwqueue_gone_locked(struct os_hwqueue *q)
{
	lf_mutex_assert_held(&q->u->lock);
	if (q->db.connected)
		os_doorbell_disconnect_locked(q, OS_DOORBELL_DISCONNECTED_RETRY);
	q->db.created = false;
	hw_queue_retire(q->hwq);
	/* ctxalloc.c: destroying the context's queue destroys its allocation */
	os_ctx_alloc_destroy(q->u->a, q->um ? &q->ctx_alloc : &q->kq->ctx_alloc);
	atomic_store_explicit(&q->gone, true, memory_order_release);
}

int os_hwqueue_destroy(struct os_hwqueue *q)
{
	struct os_ums *u = q->u;
	pthread_mutex_lock(&u->lock);
	if (atomic_load(&q->gone)) {
		pthread_mutex_unlock(&u->lock);
		return 0;
	}
	if (u->d3) {
		os_power_d0_locked(u);
		os_power_resume_all_locked(u);
	}
	os_hwqueue_quiesce_locked(q);
	pthread_mutex_unlock(&u->lock);
	int rc = os_hwqueue_drain(q);
	pthread_mutex_lock(&u->lock);
	os_hwqueue_gone_locked(q);
	pthread_mutex_unlock(&u->lock);
	return rc;
}

/* Normal termination: for each queue, disconnect, wait for the last queued
 * value, destroy.  The process is exiting: contexts it suspended resume so
 * that what it queued completes. */
int os_device_destroy(struct os_device *d)
{
	struct os_ums *u = d->u;
	pthread_mutex_lock(&u->lock);
	if (d->dead) {
		pthread_mutex_unlock(&u->lock);
		return 0;
	}
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
	pthread_mutex_unlock(&u->lock);

	int rc = 0;
	for (struct os_context *c = d->contexts; c; c = c->next)
		for (struct os_hwqueue *q = c->queues; q; q = q->next)
			if (!atomic_load(&q->gone) && os_hwqueue_drain(q))
				rc = -ETIMEDOUT;

	pthread_mutex_lock(&u->lock);
	for (struct os_context *c = d->contexts; c; c = c->next) {
		for (struct os_hwqueue *q = c->queues; q; q = q->next)
			if (!atomic_load(&q->gone))
				os_hwqueue_gone_locked(q);
		c->dead = true;
	}
	d->dead = true;
	os_ctx_alloc_destroy(u->a, &d->ctx_alloc);   /* ctxalloc.c: with its last context */
	pthread_mutex_unlock(&u->lock);
	return rc;
}

/* Abnormal termination: error, suspend, disconnect (ABORT), destroy at
 * once; then release every progress-fence waiter with UINT64_MAX. */
void os_device_terminate(struct os_device *d)
{
	struct os_ums *u = d->u;
	pthread_mutex_lock(&u->lock);
	if (d->dead) {
		pthread_mutex_unlock(&u->lock);
		return;
	}
	atomic_store_explicit(&d->error, true, memory_order_seq_cst);
	for (struct os_context *c = d->contexts; c; c = c->next) {
		bool was_running = c->suspended == 0;
		c->suspended |= OS_SUSPEND_ERROR;
		if (was_running)
			os_context_apply_locked(c);      /* preempted, off the run list */
	}
	for (struct os_context *c = d->contexts; c; c = c->next) {
		for (struct os_hwqueue *q = c->queues; q; q = q->next) {
			if (atomic_load(&q->gone))
				continue;
			if (os_hwqueue_pending(q))
				lf_count(&u->lost_at_abnormal, 1);
			if (q->um && q->db.created)
				os_doorbell_disconnect_locked(q, OS_DOORBELL_DISCONNECTED_ABORT);
			os_hwqueue_gone_locked(q);
		}
		c->dead = true;
	}
	d->dead = true;
	/* D3D12 device removal: fences read UINT64_MAX, waiters return; the
	 * queues' progress fences and the device's own, all under the lock: a
	 * waiter released here may destroy the device at once, and
	 * os_device_destroy takes the lock first, so no queue or fence this
	 * walks is freed meanwhile (TSan saw the walk race the free when the
	 * progress fences were signaled after the unlock) */
	for (struct os_context *c = d->contexts; c; c = c->next)
		for (struct os_hwqueue *q = c->queues; q; q = q->next)
			os_fence_signal_cpu(q->progress, UINT64_MAX);
	for (size_t i = 0; i < d->nfences; i++)
		os_fence_signal_cpu(d->fences[i], UINT64_MAX);
	pthread_mutex_unlock(&u->lock);
}
