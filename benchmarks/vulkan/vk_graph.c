/* benchmarks/vulkan/vk_graph.c — the Vulkan backend of the workloads:
 * bring-up, the ops of backend.h, submission and events.  Contract in
 * vk_graph.h; the state and its locking in vk_graph_internal.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "benchmarks/vulkan/vk_graph.h"
#include "benchmarks/vulkan/vk_graph_internal.h"
#include "benchmarks/workload.h"
#include "lockfree/arch.h"

#define VKG_DRAIN_SLICE_NS 20000000ull

static const struct bm_backend_ops bm_vkg_ops;

uint64_t vkg_value(struct vkg *g, struct bm_fence *f)
{
	uint64_t v = 0;
	if (g->vk.fn.vkGetSemaphoreCounterValue(g->d, f->sem, &v))
		return UINT64_MAX;              /* device lost: every value reached, as D3D12 says of removal */
	return v;
}

static uint64_t vkg_progress(struct vkg *g, struct bm_queue *q)
{
	uint64_t v = 0;
	g->vk.fn.vkGetSemaphoreCounterValue(g->d, q->progress, &v);
	return v;
}

static int vkg_timeline(struct vkg *g, VkSemaphore *out)
{
	VkSemaphoreTypeCreateInfo ti = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
					 .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE };
	VkSemaphoreCreateInfo si = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &ti };
	return g->vk.fn.vkCreateSemaphore(g->d, &si, NULL, out) ? -EIO : 0;
}

/* Keep p in a growing array (fences, events): freed at down. */
static int vkg_own(void ***arr, size_t *n, size_t *cap, void *p)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		void **a = realloc(*arr, c * sizeof(*a));
		if (!a)
			return -ENOMEM;
		*arr = a;
		*cap = c;
	}
	(*arr)[(*n)++] = p;
	return 0;
}

/* ---- submission ---- */

/* One batch on q's device queue: the waits attached so far, cb (or none),
 * then q's progress and, with f, f = v.  g->lock held. */
static int vkg_batch_locked(struct vkg *g, struct bm_queue *q, VkCommandBuffer cb, struct bm_fence *f, uint64_t v)
{
	VkSemaphore ws[VKG_WAITS], ss[2] = { q->progress, f ? f->sem : VK_NULL_HANDLE };
	uint64_t wv[VKG_WAITS], sv[2] = { q->submitted + 1, v };
	VkPipelineStageFlags stage[VKG_WAITS];
	for (size_t i = 0; i < q->nwaits; i++) {
		ws[i] = q->waits[i].f->sem;
		wv[i] = q->waits[i].v;
		stage[i] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
	}
	VkTimelineSemaphoreSubmitInfo ts = { .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
					     .waitSemaphoreValueCount = (uint32_t)q->nwaits, .pWaitSemaphoreValues = wv,
					     .signalSemaphoreValueCount = f ? 2 : 1, .pSignalSemaphoreValues = sv };
	VkSubmitInfo si = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = &ts,
			    .waitSemaphoreCount = (uint32_t)q->nwaits, .pWaitSemaphores = ws, .pWaitDstStageMask = stage,
			    .commandBufferCount = cb ? 1 : 0, .pCommandBuffers = &cb,
			    .signalSemaphoreCount = f ? 2 : 1, .pSignalSemaphores = ss };
	if (g->vk.fn.vkQueueSubmit(g->vk.queue[q->phys].q, 1, &si, VK_NULL_HANDLE))
		return -EIO;
	q->submitted++;
	g->batches++;
	for (size_t i = 0; i < q->nwaits; i++) {   /* what the queue may be stuck behind (blocked_wait) */
		size_t k = q->nrecent++ % VKG_WAITS;
		q->recent[k] = q->waits[i];
		q->recent_tag[k] = q->submitted;
	}
	q->nwaits = 0;
	return 0;
}

/* A Wait at the head of q: true when q may go on past it.  Native: the value
 * is given by a submitted Signal (or the CPU): the wait goes with the next
 * batch.  Legacy: the value arrived (the scheduler waits for it). */
static bool vkg_wait_ready_locked(struct vkg *g, struct bm_queue *q, const struct vkg_op *o)
{
	if (g->legacy)
		return g->broken_early_release || vkg_value(g, o->f) >= o->v;
	if (o->f->submitted < o->v)
		return false;                   /* kept back until a Signal of the value is submitted */
	for (size_t i = 0; i < q->nwaits; i++)
		if (q->waits[i].f == o->f) {    /* one wait per semaphore in a batch: the highest value */
			if (o->v > q->waits[i].v)
				q->waits[i].v = o->v;
			return true;
		}
	if (q->nwaits == VKG_WAITS && vkg_batch_locked(g, q, VK_NULL_HANDLE, NULL, 0))
		return false;
	q->waits[q->nwaits++] = (struct vkg_wait){ o->f, o->v };
	return true;
}

static int vkg_signal_locked(struct vkg *g, struct bm_queue *q, struct bm_fence *f, uint64_t v)
{
	if (v <= f->submitted)
		return 0;   /* a value the fence is given already: a timeline only rises (a rewind is not modeled here) */
	int rc = vkg_batch_locked(g, q, VK_NULL_HANDLE, f, v);
	if (rc)
		return rc;
	f->submitted = v;
	g->gpu_signals++;
	if (g->legacy) {                    /* the monitored fence's interrupt: the scheduler waits for it */
		rc = vkg_outstanding_add_locked(g, f, v);
		vkg_sched_kick_locked(g, true);
	}
	return rc;
}

static int vkg_op_locked(struct vkg *g, struct bm_queue *q, const struct vkg_op *o)
{
	if (o->kind == VKG_SIGNAL)
		return vkg_signal_locked(g, q, o->f, o->v);
	VkCommandBuffer cb;
	int rc = vkg_record_locked(g, q, o, &cb);
	return rc ? rc : vkg_batch_locked(g, q, cb, NULL, 0);
}

void vkg_pump_locked(struct vkg *g, struct bm_queue *q)
{
	struct vkg_op *o;
	while ((o = q->head)) {
		if (o->kind == VKG_WAIT && !vkg_wait_ready_locked(g, q, o))
			return;
		if (o->kind == VKG_WAIT && g->legacy && g->tracing) {   /* the hold: from the Wait to what follows going out */
			uint64_t now = lf_now_ns(), t0 = o->t_enq > q->hold_end ? o->t_enq : q->hold_end;
			vkg_trace_add_locked(g, &(struct vkg_tev){ .kind = VKG_T_HOLD, .q = q->slot, .f = o->f, .v = o->v,
								   .t0 = t0 < now ? t0 : now, .t1 = now });
			q->hold_end = now;
		}
		int rc = o->kind == VKG_WAIT ? 0 : vkg_op_locked(g, q, o);
		if (rc) {                   /* -EAGAIN: every command buffer in flight; tried again later */
			if (rc != -EAGAIN && !g->error)
				g->error = rc;
			return;
		}
		q->head = o->next;
		if (!q->head)
			q->tail = NULL;
		free(o);
	}
}

/* Native: a Signal went out, so a queue kept back behind it may go on. */
static void vkg_pump_all_locked(struct vkg *g)
{
	for (bool moved = true; moved;) {
		moved = false;
		for (size_t i = 0; i < g->nq; i++) {
			struct bm_queue *q = g->q[i];
			struct vkg_op *h = q->head;
			if (!h || q->held)
				continue;
			vkg_pump_locked(g, q);
			moved |= q->head != h;
		}
	}
}

/* The application hands q an op: on a legacy Wait the queue is held (the
 * scheduler owns what follows); else, unless held, it is submitted now
 * (native: as far as its Waits' Signals were submitted). */
static int vkg_enqueue(struct vkg *g, struct bm_queue *q, struct vkg_op *o)
{
	enum vkg_kind kind = o->kind;       /* o is freed once submitted */
	pthread_mutex_lock(&g->lock);
	if (q->tail)
		q->tail->next = o;
	else
		q->head = o;
	q->tail = o;
	if (g->legacy && kind == VKG_WAIT) {
		g->held_waits++;
		if (!q->held) {
			q->held = true;
			vkg_sched_kick_locked(g, false);
		}
	}
	if (!q->held) {
		vkg_pump_locked(g, q);
		if (!g->legacy && kind == VKG_SIGNAL)
			vkg_pump_all_locked(g);
	}
	int rc = g->error;                  /* a submission that failed, here or on the scheduler thread */
	pthread_mutex_unlock(&g->lock);
	return rc;
}

static struct vkg_op *vkg_op_new(enum vkg_kind k, struct bm_fence *f, uint64_t v, size_t n)
{
	struct vkg_op *o = calloc(1, sizeof(*o) + n * sizeof(uint64_t));
	if (o)
		*o = (struct vkg_op){ .kind = k, .f = f, .v = v, .n = n, .t_enq = lf_now_ns() };
	return o;
}

/* ---- the ops: queues ---- */

static int vkg_queue_create(void *be, enum rt_list_type t, const char *name, struct bm_queue **out)
{
	struct vkg *g = be;
	if (g->nq == VKG_QUEUES)
		return -ENOSPC;
	struct bm_queue *q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	snprintf(q->name, sizeof(q->name), "%s", name ? name : rt_list_type_name(t));
	q->type = t;
	q->phys = t == RT_LIST_COMPUTE && g->nphys > 1 ? 1 : 0;
	q->slot = (unsigned)g->nq;
	char err[160];
	VkQueryPoolCreateInfo qi = { .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
				     .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = VKG_TS * VKG_CBS };
	int rc = vkg_timeline(g, &q->progress);
	if (!rc)
		rc = bm_vk_cmd_pool(&g->vk, q->phys, &q->pool, err, sizeof(err));
	if (!rc && g->ts_bits[q->phys] && g->vk.fn.vkCreateQueryPool(g->d, &qi, NULL, &q->qp))
		q->qp = VK_NULL_HANDLE;         /* no GPU idle for it */
	if (rc) {
		if (q->pool)
			bm_vk_cmd_pool_destroy(&g->vk, q->pool);
		if (q->progress)
			g->vk.fn.vkDestroySemaphore(g->d, q->progress, NULL);
		free(q);
		return rc;
	}
	pthread_mutex_lock(&g->lock);
	g->q[g->nq++] = q;
	pthread_mutex_unlock(&g->lock);
	*out = q;
	return 0;
}

static void vkg_queue_destroy(void *be, struct bm_queue *q)
{
	(void)be;                           /* every queue lives until down, which frees it */
	(void)q;
}

static const char *vkg_queue_name(void *be, const struct bm_queue *q)
{
	(void)be;
	return q->name;
}

static int vkg_execute(void *be, struct bm_queue *q, struct bm_list *const *lists, size_t n)
{
	size_t cmds = 0;
	if (!n)
		return -EINVAL;
	if (n > BM_BE_EXEC)
		return -E2BIG;
	for (size_t i = 0; i < n; i++) {
		if (!lists[i]->closed)
			return -EBUSY;
		if (lists[i]->type != q->type)
			return -EINVAL;
		cmds += lists[i]->n;
	}
	struct vkg_op *o = vkg_op_new(VKG_EXEC, NULL, 0, cmds);
	if (!o)
		return -ENOMEM;
	o->nl = n;
	for (size_t i = 0, k = 0; i < n; i++) {
		for (size_t j = 0; j < lists[i]->n; j++)
			o->ns[k++] = lists[i]->ns[j];
		o->lend[i] = k;
		o->lname[i] = lists[i]->name;
	}
	return vkg_enqueue(be, q, o);
}

static int vkg_signal(void *be, struct bm_queue *q, struct bm_fence *f, uint64_t v)
{
	struct vkg_op *o = vkg_op_new(VKG_SIGNAL, f, v, 0);
	return o ? vkg_enqueue(be, q, o) : -ENOMEM;
}

static int vkg_wait(void *be, struct bm_queue *q, struct bm_fence *f, uint64_t v)
{
	struct vkg_op *o = vkg_op_new(VKG_WAIT, f, v, 0);
	return o ? vkg_enqueue(be, q, o) : -ENOMEM;
}

static uint64_t vkg_queue_progress(void *be, struct bm_queue *q)
{
	return vkg_progress(be, q);
}

/* The Wait at the head of q's FIFO, or the oldest submitted one not reached
 * while q has unfinished batches. */
static bool vkg_blocked_wait(void *be, struct bm_queue *q, struct bm_fence **f, uint64_t *v)
{
	struct vkg *g = be;
	bool found = false;
	pthread_mutex_lock(&g->lock);
	if (q->head && q->head->kind == VKG_WAIT && vkg_value(g, q->head->f) < q->head->v) {
		*f = q->head->f;
		*v = q->head->v;
		found = true;
	}
	uint64_t done = vkg_progress(g, q);
	size_t n = q->nrecent < VKG_WAITS ? q->nrecent : VKG_WAITS;
	for (size_t k = 0; k < n && !found && done < q->submitted; k++) {
		size_t i = (q->nrecent - n + k) % VKG_WAITS;
		if (q->recent_tag[i] > done && vkg_value(g, q->recent[i].f) < q->recent[i].v) {
			*f = q->recent[i].f;
			*v = q->recent[i].v;
			found = true;
		}
	}
	pthread_mutex_unlock(&g->lock);
	return found;
}

/* ---- the ops: fences ---- */

static int vkg_fence_create(void *be, struct bm_fence **out)
{
	struct vkg *g = be;
	struct bm_fence *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	int rc = vkg_timeline(g, &f->sem);
	f->id = (unsigned)g->nfences;
	if (!rc && (rc = vkg_own((void ***)&g->fences, &g->nfences, &g->capfences, f)))
		g->vk.fn.vkDestroySemaphore(g->d, f->sem, NULL);
	if (rc) {
		free(f);
		return rc;
	}
	*out = f;
	return 0;
}

static uint64_t vkg_fence_value(void *be, struct bm_fence *f)
{
	return vkg_value(be, f);
}

/* The CPU's Signal: vkSignalSemaphore, allowed while no Signal of the fence
 * is pending on a queue (a host signal must stay below every pending one);
 * -EBUSY otherwise; a value at or below the current one changes nothing. */
static int vkg_fence_signal(void *be, struct bm_fence *f, uint64_t v)
{
	struct vkg *g = be;
	int rc = 0;
	pthread_mutex_lock(&g->lock);
	uint64_t now = vkg_value(g, f);
	if (v > now && f->submitted > now)
		rc = -EBUSY;
	else if (v > now) {
		VkSemaphoreSignalInfo si = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, .semaphore = f->sem,
					     .value = v };
		rc = g->vk.fn.vkSignalSemaphore(g->d, &si) ? -EIO : 0;
		if (!rc && v > f->submitted)
			f->submitted = v;
		if (!rc && !g->legacy)
			vkg_pump_all_locked(g);
		else if (!rc)
			vkg_sched_kick_locked(g, false);   /* a held Wait only the CPU could satisfy may go on */
	}
	pthread_mutex_unlock(&g->lock);
	return rc;
}

/* ---- the ops: lists (descriptions; recorded into a batch when it is submitted) ---- */

static int vkg_list_create(void *be, enum rt_list_type t, const char *name, struct bm_list **out)
{
	struct vkg *g = be;
	if (t >= RT_LIST_BUNDLE)
		return -EINVAL;
	struct bm_list *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->type = t;
	pthread_mutex_lock(&g->lock);
	l->name = vkg_name_locked(g, name ? name : "WORK");   /* its work's name on the timeline */
	pthread_mutex_unlock(&g->lock);
	*out = l;
	return 0;
}

static int vkg_list_record(void *be, struct bm_list *l, enum rt_op op, uint64_t ns, unsigned units)
{
	(void)be;
	(void)units;                        /* one dispatch per command: no preemption points here */
	if (!rt_list_type_holds(l->type, op) || !units)
		return -EINVAL;
	if (l->closed)
		return -EPERM;
	if (l->n == RT_LIST_MAX_CMDS)
		return -ENOSPC;
	l->ns[l->n++] = ns;
	return 0;
}

static int vkg_list_close(void *be, struct bm_list *l)
{
	(void)be;
	if (l->closed)
		return -EPERM;
	l->closed = true;
	return 0;
}

static void vkg_list_reset(void *be, struct bm_list *l)
{
	(void)be;
	l->n = 0;
	l->closed = false;
}

static void vkg_list_destroy(void *be, struct bm_list *l)
{
	(void)be;
	free(l);                            /* a queue copied what it executed */
}

/* ---- the ops: events ---- */

static int vkg_event_create(void *be, bool manual, bool initial, struct bm_event **out)
{
	struct vkg *g = be;
	struct bm_event *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->manual = manual;
	e->set = initial;
	int rc = vkg_own((void ***)&g->events, &g->nevents, &g->capevents, e);
	if (rc) {
		free(e);
		return rc;
	}
	*out = e;
	return 0;
}

static void vkg_event_destroy(void *be, struct bm_event *e)
{
	(void)be;                           /* freed at down */
	(void)e;
}

static void vkg_event_set(void *be, struct bm_event *e)
{
	(void)be;
	e->set = true;
}

static int vkg_set_event(void *be, struct bm_fence *f, uint64_t v, struct bm_event *e)
{
	struct vkg *g = be;
	if (vkg_value(g, f) >= v) {
		e->set = true;
		return 0;
	}
	if (e->nregs == VKG_REGS)
		return -ENOSPC;
	e->regs[e->nregs++] = (struct vkg_wait){ f, v };
	return 0;
}

/* Set now (a value it waits for reached, or set by the CPU)?  Reached
 * registrations fire once and go. */
static bool vkg_event_fired(struct vkg *g, struct bm_event *e)
{
	size_t k = 0;
	for (size_t i = 0; i < e->nregs; i++) {
		if (vkg_value(g, e->regs[i].f) >= e->regs[i].v)
			e->set = true;
		else
			e->regs[k++] = e->regs[i];
	}
	e->nregs = k;
	return e->set;
}

/* WaitForMultipleObjects(any): the lowest set event's index, reset if
 * auto-reset; else block in vkWaitSemaphores(WAIT_ANY) on what they wait for. */
static int vkg_event_wait_any(void *be, struct bm_event *const *evs, size_t n, int64_t ns)
{
	struct vkg *g = be;
	uint64_t until = ns < 0 ? UINT64_MAX : lf_now_ns() + (uint64_t)ns;
	for (;;) {
		VkSemaphore sems[VKG_REGS * 4];
		uint64_t vals[VKG_REGS * 4];
		uint32_t k = 0;
		for (size_t i = 0; i < n; i++) {
			if (vkg_event_fired(g, evs[i])) {
				if (!evs[i]->manual)
					evs[i]->set = false;
				return (int)i;
			}
			for (size_t j = 0; j < evs[i]->nregs && k < VKG_REGS * 4; j++, k++) {
				sems[k] = evs[i]->regs[j].f->sem;
				vals[k] = evs[i]->regs[j].v;
			}
		}
		uint64_t now = lf_now_ns();
		if (now >= until || !k)
			return -ETIMEDOUT;      /* nothing that can set them: only the time left */
		VkSemaphoreWaitInfo wi = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .flags = VK_SEMAPHORE_WAIT_ANY_BIT,
					   .semaphoreCount = k, .pSemaphores = sems, .pValues = vals };
		VkResult r = g->vk.fn.vkWaitSemaphores(g->d, &wi, until - now);
		if (r != VK_SUCCESS && r != VK_TIMEOUT)
			return -EIO;
	}
}

/* ---- counters ---- */

/* Legacy: wait (bounded) until the scheduler holds nothing and saw every
 * Signal, so that the counts are those of the work done. */
static void vkg_settle(struct vkg *g)
{
	uint64_t until = lf_now_ns() + 1000000000ull;
	while (g->legacy && lf_now_ns() < until) {
		pthread_mutex_lock(&g->lock);
		bool busy = g->nout > 0;
		for (size_t i = 0; i < g->nq && !busy; i++)
			busy = g->q[i]->held;
		pthread_mutex_unlock(&g->lock);
		if (!busy)
			return;
		lf_sleep_until(lf_now_ns() + 200000);
	}
}

static void vkg_snap(void *be, struct bm_be_counters *o)
{
	struct vkg *g = be;
	vkg_settle(g);
	struct rusage ru;
	if (lf_clock_ns(CLOCK_THREAD_CPUTIME_ID, &o->host.app_cpu_ns) == 0 && getrusage(RUSAGE_THREAD, &ru) == 0)
		o->host.app_wakeups = (uint64_t)ru.ru_nvcsw;
	pthread_mutex_lock(&g->lock);
	if (g->sched_started && g->sched_clock != (clockid_t)-1)
		lf_clock_ns(g->sched_clock, &o->host.sched_cpu_ns);
	o->host.sched_wakeups = g->sched_wakeups;
	o->gpu_signals = g->gpu_signals;
	o->held_waits = g->held_waits;
	for (size_t i = 0; i < g->nq; i++) {   /* GPU busy by queue type, as the model's by engine */
		struct bm_queue *q = g->q[i];
		if (!q->qp)
			continue;
		vkg_busy_locked(g, q);
		o->busy_ns[q->type == RT_LIST_COMPUTE ? 1 : q->type == RT_LIST_COPY ? 2 : 0] += q->busy_ns;
		o->has_busy = true;
	}
	pthread_mutex_unlock(&g->lock);
	o->has_interrupts = g->has_irq && vkg_irq_read("/proc/interrupts", &o->interrupts, NULL, 0);
	o->validating = g->vk.validating;
	o->validation_errors = bm_vk_messages(&g->vk);
}

static void vkg_validation_message(void *be, char *buf, size_t len)
{
	struct vkg *g = be;
	snprintf(buf, len, "%s", bm_vk_first_message(&g->vk));
}

/* ---- bring-up and teardown ---- */

/* vk_device's bring-up: device -1 is the first real GPU (a CPU
 * implementation only when allowed and nothing else answers). */
static int vkg_open(struct vkg *g, const struct bm_wl_config *c, char *err, size_t errlen)
{
	struct bm_vk_opts o = { .device = c->device < 0 ? 0 : c->device, .allow_cpu = c->allow_cpu,
				.validate = c->validate };
	if (c->device >= 0)
		return bm_vk_open(&g->vk, &o, err, errlen);
	int rc = -ENODEV, first_cpu = -1;
	o.allow_cpu = false;
	for (o.device = 0; o.device < 16; o.device++) {
		rc = bm_vk_open(&g->vk, &o, err, errlen);
		if (rc != -EPERM)
			break;
		if (first_cpu < 0)
			first_cpu = o.device;
	}
	if (rc == -ENODEV && first_cpu >= 0) {
		o.device = first_cpu;
		o.allow_cpu = c->allow_cpu;
		rc = bm_vk_open(&g->vk, &o, err, errlen);
	}
	return rc;
}

/* The run's notes: the device, how the logical queues map, interrupts. */
static void vkg_notes(struct vkg *g, struct bm_wl *w)
{
	char ver[32];
	bm_vk_driver_version(&g->vk.id, ver, sizeof(ver));
	snprintf(w->notes[0], sizeof(w->notes[0]), "vulkan: %.100s (%s, %.60s %s), %s strategy; spin shader %.3g turns/us "
		 "(a dispatch costs %.3g us more), calibrated from %s", g->vk.id.name, bm_vk_type_name(g->vk.id.type),
		 g->vk.id.driver_name, ver, g->legacy ? "legacy" : "native", g->loops_per_ns * 1e3, g->dispatch_ns / 1e3,
		 g->calibrated_by_timestamps ? "GPU timestamps" : "the host clock (no timestamps on the queue)");
	if (g->nphys == 1)
		snprintf(w->notes[1], sizeof(w->notes[1]), "vulkan: the device has one queue (family %u): every logical "
			 "queue (direct, compute, copy) shares it and their work runs one batch after another",
			 g->family[0]);
	else
		snprintf(w->notes[1], sizeof(w->notes[1]), "vulkan: direct and copy queues on device queue 0 (family %u), "
			 "compute queues on device queue 1 (family %u); copy work is the spin shader too", g->family[0],
			 g->family[1]);
	if (g->cpu_impl)
		snprintf(w->notes[3], sizeof(w->notes[3]), "vulkan: %.100s is a CPU implementation: its queue work runs "
			 "on this machine's CPUs in the driver's threads (not counted as host CPU here)", g->vk.id.name);
	uint64_t n;
	g->has_irq = vkg_irq_read("/proc/interrupts", &n, g->irq_names, sizeof(g->irq_names));
	if (g->has_irq)
		snprintf(w->notes[2], sizeof(w->notes[2]), "vulkan: interrupts_per_frame counts /proc/interrupts %.140s",
			 g->irq_names);
	else
		snprintf(w->notes[2], sizeof(w->notes[2]), "vulkan: no interrupts_per_frame: /proc/interrupts has no "
			 "line of a GPU driver%s", g->cpu_impl ? " (a CPU implementation raises none)" : "");
}

static void vkg_free(struct vkg *g, bool device_ok);

int bm_vkg_up(struct bm_wl *w, const struct bm_wl_config *c, char *err, size_t errlen)
{
	struct vkg *g = calloc(1, sizeof(*g));
	if (!g) {
		snprintf(err, errlen, "no memory");
		return -ENOMEM;
	}
	pthread_mutex_init(&g->lock, NULL);
	g->legacy = c->path == RT_PATH_LEGACY;
	g->broken_early_release = c->broken_early_release;
	g->stall_ns = c->stall_ns > 0 ? c->stall_ns : BM_WL_STALL_NS;
	int rc = vkg_open(g, c, err, errlen);
	if (rc == -EPERM)
		snprintf(err + strlen(err), errlen - strlen(err), ": add --set allow_cpu=true to run on it anyway");
	if (rc) {
		free(g);
		return rc;
	}
	g->d = g->vk.dev;
	g->cpu_impl = g->vk.id.type == VK_PHYSICAL_DEVICE_TYPE_CPU;
	g->nphys = g->vk.nqueues;
	for (unsigned i = 0; i < VKG_PHYS; i++) {
		g->queue[i] = g->vk.queue[i].q;
		g->family[i] = g->vk.queue[i].family;
		g->ts_bits[i] = g->vk.queue[i].timestamp_bits;
	}
	g->ts_period_ns = g->vk.id.timestamp_period;
	rc = vkg_spin_up(g, err, errlen);
	if (!rc && vkg_clock_calibrate(g) == -EIO) {   /* -ENOTSUP: the dispatches' bound stays */
		rc = -EIO;
		snprintf(err, errlen, "reading the calibrated timestamps (vkGetCalibratedTimestampsEXT) failed");
	}
	if (!rc && g->legacy && (rc = vkg_sched_start(g)))
		snprintf(err, errlen, "starting the scheduler thread: %s", strerror(-rc));
	if (rc) {
		vkg_free(g, true);
		return rc;
	}
	w->ops = &bm_vkg_ops;
	w->be = g;
	w->kind = BM_BACKEND_VULKAN;
	vkg_notes(g, w);
	return 0;
}

pid_t bm_vkg_sched_tid(void *be)
{
	struct vkg *g = be;
	return g && g->sched_started ? g->sched_tid : 0;
}

/* Every queue's FIFO empty and its batches completed, within stall_ns. */
static bool vkg_drain(struct vkg *g)
{
	uint64_t until = lf_now_ns() + (uint64_t)g->stall_ns;
	for (;;) {
		VkSemaphore sems[VKG_QUEUES];
		uint64_t vals[VKG_QUEUES];
		bool kept = false;
		pthread_mutex_lock(&g->lock);
		for (size_t i = 0; i < g->nq; i++) {
			kept |= g->q[i]->head != NULL;
			sems[i] = g->q[i]->progress;
			vals[i] = g->q[i]->submitted;
		}
		size_t n = g->nq;
		pthread_mutex_unlock(&g->lock);
		VkSemaphoreWaitInfo wi = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .semaphoreCount = (uint32_t)n,
					   .pSemaphores = sems, .pValues = vals };
		VkResult r = n ? g->vk.fn.vkWaitSemaphores(g->d, &wi, VKG_DRAIN_SLICE_NS) : VK_SUCCESS;
		if (r == VK_SUCCESS && !kept)
			return true;
		if (r != VK_SUCCESS && r != VK_TIMEOUT)
			return false;
		if (lf_now_ns() >= until)
			return false;
		if (kept)
			lf_sleep_until(lf_now_ns() + 1000000);   /* the scheduler's to move, or nobody's */
	}
}

/* Free what the backend made; with device_ok the device objects too (else
 * they are left to the process: a device that does not drain is never
 * waited for). */
static void vkg_free(struct vkg *g, bool device_ok)
{
	vkg_sched_stop(g);
	if (device_ok && g->vk.fn.vkDeviceWaitIdle)
		g->vk.fn.vkDeviceWaitIdle(g->d);
	for (size_t i = 0; i < g->nq; i++) {
		struct bm_queue *q = g->q[i];
		for (struct vkg_op *o = q->head, *next; o; o = next) {
			next = o->next;
			free(o);
		}
		if (device_ok) {
			if (q->qp)
				g->vk.fn.vkDestroyQueryPool(g->d, q->qp, NULL);
			bm_vk_cmd_pool_destroy(&g->vk, q->pool);   /* its command buffers with it */
			g->vk.fn.vkDestroySemaphore(g->d, q->progress, NULL);
		}
		free(q);
	}
	for (size_t i = 0; i < g->nfences; i++) {
		if (device_ok)
			g->vk.fn.vkDestroySemaphore(g->d, g->fences[i]->sem, NULL);
		free(g->fences[i]);
	}
	for (size_t i = 0; i < g->nevents; i++)
		free(g->events[i]);
	if (device_ok) {
		vkg_spin_down(g);
		bm_vk_close(&g->vk);
	}
	free(g->fences);
	free(g->events);
	free(g->outstanding);
	free(g->tev);
	free(g->names);
	pthread_mutex_destroy(&g->lock);
	free(g);
}

static int vkg_down(void *be)
{
	struct vkg *g = be;
	bool drained = vkg_drain(g);
	vkg_free(g, drained);
	return drained ? 0 : -ETIMEDOUT;
}

static const struct bm_backend_ops bm_vkg_ops = {
	.name = "vulkan",
	.queue_create = vkg_queue_create, .queue_destroy = vkg_queue_destroy, .queue_name = vkg_queue_name,
	.execute = vkg_execute, .signal = vkg_signal, .wait = vkg_wait,
	.queue_progress = vkg_queue_progress, .blocked_wait = vkg_blocked_wait,
	.fence_create = vkg_fence_create, .fence_value = vkg_fence_value, .fence_signal = vkg_fence_signal,
	.list_create = vkg_list_create, .list_record = vkg_list_record, .list_close = vkg_list_close,
	.list_reset = vkg_list_reset, .list_destroy = vkg_list_destroy,
	.event_create = vkg_event_create, .event_destroy = vkg_event_destroy, .event_set = vkg_event_set,
	.set_event = vkg_set_event, .event_wait_any = vkg_event_wait_any,
	.snap = vkg_snap, .validation_message = vkg_validation_message, .down = vkg_down,
	.trace_start = vkg_trace_start, .trace_cpu_wait = vkg_trace_cpu_wait, .trace_copy = vkg_trace_copy, .work_spans = vkg_work_spans,
};
