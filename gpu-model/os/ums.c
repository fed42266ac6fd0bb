/* gpu-model/os/ums.c — devices, contexts, HW queues, doorbells and the
 * kernel-mode scheduler thread.  Contract in ums.h; power and termination in power.c. */
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

void os_ums_config_default(struct os_ums_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->sched_cpu = -1;
	cfg->power_cpu = -1;
	cfg->drain_timeout_ns = 10000000000ll;
}

/* ---- the scheduler thread: kernel-mode submission ---- */

/* What the KMD accepts from user mode: the ops a kernel-mode buffer may hold. */
static bool os_km_valid(const struct os_km_desc *d)
{
	if (!d->n)
		return false;
	for (uint64_t i = 0; i < d->n; i++) {
		const struct hw_cmd *c = &d->cmds[i];
		if (c->op > HW_CMD_STAMP)
			return false;      /* INDIRECT: no user-built ring entries through the kernel */
		if ((c->op == HW_CMD_SIGNAL || c->op == HW_CMD_WAIT) && !c->fence)
			return false;
		if ((c->op == HW_CMD_STAMP || c->op == HW_CMD_COUNT) && !c->stamp)
			return false;
	}
	return true;
}

/* Consume q's submissions: validate, resolve dependencies (os_queue_submit
 * holds monitored-fence waits on the CPU) and write the engine's ring. */
/* Hand q's pending kernel-mode submissions to the engine; returns how many. */
static unsigned os_sched_drain(struct os_ums *u, struct os_hwqueue *q)
{
	struct os_km_desc d;
	unsigned handed = 0;
	while (lf_ring_pop_spsc(q->subq, &d)) {
		if (atomic_load_explicit(&q->gone, memory_order_acquire)) {
			lf_count(&u->km_discarded, 1);
			continue;
		}
		if (!os_km_valid(&d) || os_queue_submit(q->kq, d.cmds, (size_t)d.n)) {
			lf_count(&u->km_rejected, 1);
			continue;
		}
		handed++;
	}
	return handed;
}

static bool os_sched_d3(struct os_ums *u)
{
	pthread_mutex_lock(&u->lock);
	bool d3 = u->d3;
	pthread_mutex_unlock(&u->lock);
	return d3;
}

static void *os_sched_main(void *arg)
{
	struct os_ums *u = arg;
	pthread_setname_np(pthread_self(), "fb-os-sched");
	lf_thread_pin_self(u->cfg.sched_cpu);
	atomic_store(&u->sched_tid, gettid());
	while (!atomic_load_explicit(&u->stop, memory_order_acquire)) {
		uint32_t n = atomic_load_explicit(&u->nqueues, memory_order_acquire);
		bool any = false;
		for (uint32_t i = 0; i < n; i++) {
			struct os_hwqueue *q = u->queues[i];
			if (!q->um && lf_ring_size(q->subq))
				any = true;
		}
		/* work for a powered-down device: Dxgkrnl brings it to D0 first */
		if (any && os_sched_d3(u))
			os_power_d0(u);
		unsigned handed = 0;
		for (uint32_t i = 0; i < n; i++)
			if (!u->queues[i]->um)
				handed += os_sched_drain(u, u->queues[i]);
		/* A D3 that came between the check above and the hand-over suspended
		 * the queues this work now sits in: bring the device back, or the
		 * work waits for some later submission to do it. */
		if (handed && os_sched_d3(u))
			os_power_d0(u);
		/* Sleep in the kernel until the next submission's write.  The
		 * eventfd counter makes it race-free: a write after the drain above
		 * makes this read return at once. */
		uint64_t cnt;
		while (read(u->efd, &cnt, sizeof(cnt)) < 0 && errno == EINTR)
			;
		lf_count(&u->sched_wakeups, 1);
	}
	return NULL;
}

int os_hwqueue_submit(struct os_hwqueue *q, const struct hw_cmd *cmds, size_t n, uint64_t progress)
{
	if (q->um || !n)
		return -EINVAL;
	if (atomic_load_explicit(&q->ctx->d->error, memory_order_acquire))
		return -ENODEV;
	atomic_store_explicit(&q->last_queued, progress, memory_order_seq_cst);
	struct os_km_desc d = { .cmds = cmds, .n = n, .progress = progress };
	/* release (the ring's push): the command buffer is visible to the scheduler */
	for (unsigned spin = 0; !lf_ring_push_spsc(q->subq, &d); spin++) {
		uint64_t one = 1;
		if (write(q->u->efd, &one, sizeof(one)) < 0)
			return -errno;
		sched_yield();
	}
	atomic_fetch_add_explicit(&q->u->km_submits, 1, memory_order_relaxed);
	/* the kernel crossing: always a syscall, as entering Dxgkrnl is */
	uint64_t one = 1;
	if (write(q->u->efd, &one, sizeof(one)) < 0)
		return -errno;
	return 0;
}

/* ---- attach / detach ---- */

int os_ums_attach(struct os_adapter *a, const struct os_ums_config *cfg, struct os_ums **out,
		  char *err, size_t errlen)
{
	const struct hw_caps *caps = hw_adapter_caps(os_adapter_hw(a));
	if (caps->doorbell_model > HW_DOORBELL_GLOBAL) {
		snprintf(err, errlen, "doorbell_model=%d: must be dedicated or global", (int)caps->doorbell_model);
		return -EINVAL;
	}
	if (caps->doorbells > HW_MAX_DOORBELLS) {
		snprintf(err, errlen, "doorbells=%u: at most %d physical doorbells", caps->doorbells, HW_MAX_DOORBELLS);
		return -EINVAL;
	}
	struct os_ums *u = lf_alloc(sizeof(*u), LF_CACHELINE);
	u->a = a;
	u->hw = os_adapter_hw(a);
	u->cfg = *cfg;
	pthread_mutex_init(&u->lock, NULL);
	u->efd = eventfd(0, EFD_CLOEXEC);
	if (u->efd < 0) {
		int rc = -errno;
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		pthread_mutex_destroy(&u->lock);
		lf_free(u, sizeof(*u), LF_CACHELINE);
		return rc;
	}
	int rc = pthread_create(&u->sched, NULL, os_sched_main, u);
	if (!rc) {
		u->sched_started = true;
		rc = pthread_create(&u->power, NULL, os_power_main, u);
		u->power_started = !rc;
	}
	if (rc) {
		snprintf(err, errlen, "starting the OS submission threads: %s", strerror(rc));
		os_ums_detach(u);
		return -rc;
	}
	while (!atomic_load(&u->sched_tid) || !atomic_load(&u->power_tid))
		sched_yield();
	*out = u;
	return 0;
}

void os_ums_detach(struct os_ums *u)
{
	if (!u)
		return;
	for (uint32_t i = 0; i < u->ndevices; i++)
		if (!u->devices[i]->dead)
			os_device_destroy(u->devices[i]);
	atomic_store_explicit(&u->stop, true, memory_order_seq_cst);
	if (u->sched_started) {
		uint64_t one = 1;
		if (write(u->efd, &one, sizeof(one)) < 0)
			lf_die("stopping the scheduler thread: eventfd write: %s", strerror(errno));
		pthread_join(u->sched, NULL);
	}
	if (u->power_started) {
		hw_state_irq_kick(u->hw);
		pthread_join(u->power, NULL);
	}
	close(u->efd);
	uint32_t nq = atomic_load(&u->nqueues);
	for (uint32_t i = 0; i < nq; i++) {
		lf_ring_destroy(u->queues[i]->subq);
		lf_free(u->queues[i], sizeof(struct os_hwqueue), LF_CACHELINE);
	}
	for (uint32_t i = 0; i < u->ncontexts; i++)
		lf_free(u->contexts[i], sizeof(struct os_context), LF_CACHELINE);
	for (uint32_t i = 0; i < u->ndevices; i++)
		lf_free(u->devices[i], sizeof(struct os_device), LF_CACHELINE);
	pthread_mutex_destroy(&u->lock);
	lf_free(u, sizeof(*u), LF_CACHELINE);
}

struct os_adapter *os_ums_adapter(struct os_ums *u)
{
	return u->a;
}

pid_t os_ums_sched_tid(const struct os_ums *u)
{
	return atomic_load(&u->sched_tid);
}

pid_t os_ums_power_tid(const struct os_ums *u)
{
	return atomic_load(&u->power_tid);
}

/* ---- devices and contexts ---- */

int os_device_create(struct os_ums *u, struct os_device **out)
{
	pthread_mutex_lock(&u->lock);
	if (u->ndevices == OS_UMS_MAX_DEVICES) {
		pthread_mutex_unlock(&u->lock);
		return -ENOSPC;
	}
	struct os_device *d = lf_alloc(sizeof(*d), LF_CACHELINE);
	d->u = u;
	u->devices[u->ndevices++] = d;
	pthread_mutex_unlock(&u->lock);
	*out = d;
	return 0;
}

bool os_device_in_error(const struct os_device *d)
{
	return atomic_load_explicit(&d->error, memory_order_acquire);
}

int os_context_create(struct os_device *d, unsigned engine, struct os_context **out)
{
	struct os_ums *u = d->u;
	if (engine >= hw_adapter_caps(u->hw)->engines)
		return -EINVAL;
	pthread_mutex_lock(&u->lock);
	int rc = 0;
	if (d->dead || os_device_in_error(d))
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
	if (q->um)
		return hw_queue_create_um(u->hw, engine, ring_slots, &q->hwq);
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
		os_log_attach(u->a, q->hwq, HW_LOG_SIZE, &q->log);   /* logbuf: kernel-mode queues get none */
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

struct hw_queue *os_hwqueue_hw(struct os_hwqueue *q)
{
	return q->hwq;
}

/* ---- doorbells ---- */

int os_doorbell_create(struct os_hwqueue *q, struct os_doorbell_map *out)
{
	struct os_ums *u = q->u;
	if (!q->um)
		return -EINVAL;
	pthread_mutex_lock(&u->lock);
	int rc = 0;
	if (atomic_load(&q->gone) || os_device_in_error(q->ctx->d))
		rc = -ENODEV;
	else if (q->db.created)
		rc = -EEXIST;
	if (!rc) {
		/* the doorbell is not assigned yet: the mapping is the dummy page */
		q->db.created = true;
		atomic_store_explicit(&q->db.cpuva, u->dummy, memory_order_release);
		atomic_store_explicit(&q->db.status, OS_DOORBELL_DISCONNECTED_RETRY, memory_order_seq_cst);
		out->cpuva = &q->db.cpuva;
		out->status = &q->db.status;
		out->last_queued = &q->last_queued;
		out->ring = hw_queue_ring(q->hwq);
		out->value = hw_doorbell_value(q->hwq);
	}
	pthread_mutex_unlock(&u->lock);
	return rc;
}

/* DxgkCbDisconnectDoorbell + the KMD's disconnection.  Status first, then
 * the mapping (so an application that sees the dummy page sees the status),
 * then a barrier on every CPU (the rotation's TLB shootdown), then the
 * register is latched (a ring that made it is not lost). */
void os_doorbell_disconnect_locked(struct os_hwqueue *q, enum os_doorbell_status status)
{
	lf_mutex_assert_held(&q->u->lock);
	struct os_ums *u = q->u;
	if (status == OS_DOORBELL_DISCONNECTED_ABORT)
		q->db.aborted = true;
	/* seq_cst: ordered before the latch RMW in hw_doorbell_disconnect */
	atomic_store_explicit(&q->db.status, status, memory_order_seq_cst);
	/* release: pairs with the application's acquire load of the mapping */
	atomic_store_explicit(&q->db.cpuva, u->dummy, memory_order_release);
	if (!q->db.connected)
		return;
	/* The rotation's TLB shootdown: a barrier on every CPU running the
	 * process, the heavy side of the ringer's Dekker pair (doorbell.h).
	 * After it, a ringer that may still read CONNECTED has its ring on the
	 * register for the latch to find. */
	lf_asym_heavy();
	hw_doorbell_disconnect(u->hw, q->hwq);
	if (q->db.phys >= 0 && hw_doorbell_model(u->hw) == HW_DOORBELL_DEDICATED)
		u->phys_owner[q->db.phys] = NULL;
	q->db.phys = -1;
	q->db.connected = false;
}

/* A physical doorbell for q: a free one, else the least recently used
 * connected one, victimized (the KMD's VictimizeDoorbell). */
static unsigned os_doorbell_pick_locked(struct os_ums *u)
{
	lf_mutex_assert_held(&u->lock);
	unsigned n = hw_doorbell_count(u->hw), victim = 0;
	uint64_t oldest = UINT64_MAX;
	for (unsigned i = 0; i < n; i++) {
		if (!u->phys_owner[i])
			return i;
		uint64_t t = hw_doorbell_last_use(u->hw, i);
		if (t < oldest) {
			oldest = t;
			victim = i;
		}
	}
	os_doorbell_disconnect_locked(u->phys_owner[victim], OS_DOORBELL_DISCONNECTED_RETRY);
	lf_count(&u->victimizations, 1);
	return victim;
}

static void os_doorbell_connect_locked(struct os_hwqueue *q)
{
	lf_mutex_assert_held(&q->u->lock);
	struct os_ums *u = q->u;
	unsigned engine = q->ctx->engine;
	unsigned phys = 0;
	if (hw_doorbell_model(u->hw) == HW_DOORBELL_DEDICATED) {
		phys = os_doorbell_pick_locked(u);
		u->phys_owner[phys] = q;
	}
	if (hw_engine_fstate(u->hw, engine) == HW_F1)
		lf_count(&u->f0_by_connect, 1);
	_Atomic uint64_t *reg = hw_doorbell_connect(u->hw, phys, q->hwq);   /* wakes the engine: F0 */
	q->db.phys = (int)phys;
	q->db.connected = true;
	/* Dxgkrnl maps the register (release: the register is set up before the
	 * application can write it), then reports the status */
	atomic_store_explicit(&q->db.cpuva, reg, memory_order_release);
	bool notify = u->cfg.notify_engines & (1u << engine);
	atomic_store_explicit(&q->db.status, notify ? OS_DOORBELL_CONNECTED_NOTIFY : OS_DOORBELL_CONNECTED,
			      memory_order_seq_cst);
	lf_count(&u->connects, 1);
}

int os_doorbell_connect(struct os_hwqueue *q)
{
	struct os_ums *u = q->u;
	pthread_mutex_lock(&u->lock);
	int rc = 0;
	if (!q->db.created)
		rc = -ENOENT;
	else if (q->db.aborted || atomic_load(&q->gone) || os_device_in_error(q->ctx->d))
		rc = -ENODEV;
	if (rc || q->db.connected)
		goto unlock;
	/* The seed's D3 sequence: D0, rings resident, connect, resume contexts. */
	bool was_d3 = u->d3;
	if (was_d3)
		os_power_d0_locked(u);
	os_doorbell_connect_locked(q);
	if (was_d3)
		os_power_resume_all_locked(u);
unlock:
	pthread_mutex_unlock(&u->lock);
	return rc;
}

int os_doorbell_destroy(struct os_hwqueue *q)
{
	struct os_ums *u = q->u;
	pthread_mutex_lock(&u->lock);
	int rc = q->db.created ? 0 : -ENOENT;
	if (!rc) {
		os_doorbell_disconnect_locked(q, q->db.aborted ? OS_DOORBELL_DISCONNECTED_ABORT
							       : OS_DOORBELL_DISCONNECTED_RETRY);
		q->db.created = false;
	}
	pthread_mutex_unlock(&u->lock);
	return rc;
}

enum os_doorbell_status os_doorbell_status(const struct os_hwqueue *q)
{
	return (enum os_doorbell_status)atomic_load_explicit(&q->db.status, memory_order_seq_cst);
}

int os_notify_work_submission(struct os_hwqueue *q)
{
	if (!q->um)
		return -EINVAL;
	/* the KMD learns of the submission and has the CMP look at the ring */
	atomic_fetch_add_explicit(&q->u->notifies, 1, memory_order_relaxed);
	hw_queue_kick(q->hwq);
	return 0;
}

void os_doorbell_abort(struct os_hwqueue *q)
{
	struct os_ums *u = q->u;
	pthread_mutex_lock(&u->lock);
	if (q->um && !q->db.aborted) {
		os_doorbell_disconnect_locked(q, OS_DOORBELL_DISCONNECTED_ABORT);
		lf_count(&u->aborts, 1);
	}
	pthread_mutex_unlock(&u->lock);
}

/* ---- statistics ---- */

#define UMS_LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)

void os_ums_stats(struct os_ums *u, struct os_ums_stats *o)
{
	memset(o, 0, sizeof(*o));
	pthread_mutex_lock(&u->lock);
	o->connects = UMS_LOAD(u->connects);
	o->victimizations = UMS_LOAD(u->victimizations);
	o->f1_requests = UMS_LOAD(u->f1_requests);
	o->f1_disconnects = UMS_LOAD(u->f1_disconnects);
	o->f0_by_connect = UMS_LOAD(u->f0_by_connect);
	o->d3_entries = UMS_LOAD(u->d3_entries);
	o->d0_exits = UMS_LOAD(u->d0_exits);
	o->d3_ns = UMS_LOAD(u->d3_ns);
	o->ring_evictions = UMS_LOAD(u->ring_evictions);
	o->ring_restores = UMS_LOAD(u->ring_restores);
	o->suspends = UMS_LOAD(u->suspends);
	o->resumes = UMS_LOAD(u->resumes);
	o->aborts = UMS_LOAD(u->aborts);
	o->drain_timeouts = UMS_LOAD(u->drain_timeouts);
	o->lost_at_abnormal = UMS_LOAD(u->lost_at_abnormal);
	pthread_mutex_unlock(&u->lock);
	o->km_rejected = UMS_LOAD(u->km_rejected);
	o->km_discarded = UMS_LOAD(u->km_discarded);
	o->sched_wakeups = UMS_LOAD(u->sched_wakeups);
	o->km_submits = UMS_LOAD(u->km_submits);
	o->notifies = UMS_LOAD(u->notifies);
}
