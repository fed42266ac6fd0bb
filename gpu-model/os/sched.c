/* gpu-model/os/sched.c — the kernel-mode scheduler thread: kernel-mode
 * submissions of user-mode-capable queues (os_hwqueue_submit) handed to the
 * thread, which feeds them to the hardware, bringing the device to D0 first.
 * Contract in ums.h.  Calls power.c (D0) and hw/; started by ums.c.
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

void (*os_test_sched_popped_hook)(struct os_hwqueue *q);

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

#define OS_SCHED_RESUBMIT_WAIT_NS 2000000   /* the scheduler waits this long for a boundary to resubmit at */

/* The kernel-mode queue whose hardware queue is hq, or NULL. */
static struct os_hwqueue *os_sched_km_owner(struct os_ums *u, const struct hw_queue *hq)
{
	uint32_t n = atomic_load_explicit(&u->nqueues, memory_order_acquire);
	for (uint32_t i = 0; i < n; i++)
		if (u->queues[i]->hwq == hq && !u->queues[i]->um && !atomic_load(&u->queues[i]->gone))
			return u->queues[i];
	return NULL;
}

/* Seed gpu-preemption: work for a queue that outranks the one its engine
 * runs now: DxgkDdiPreemptCommand.  A kernel-mode queue is preempted with
 * resubmission (os_queue_preempt: what the engine had not started comes
 * back, paging buffers first with their fence IDs) when the engine reaches
 * a boundary within OS_SCHED_RESUBMIT_WAIT_NS; otherwise, and for a
 * user-mode queue, the request stands and the engine honours it at the
 * next point its granularity allows, if the work is still waiting (hw.h). */
static void os_sched_preempt(struct os_ums *u, struct os_hwqueue *q)
{
	unsigned engine = q->ctx->engine;
	int32_t p = hw_queue_priority(q->hwq);
	struct hw_queue *r = hw_engine_running(u->hw, engine);
	if (!r || r == q->hwq || hw_queue_priority(r) >= p)
		return;
	struct os_hwqueue *k = os_sched_km_owner(u, r);
	if (k && !os_queue_preempt(k->kq, OS_SCHED_RESUBMIT_WAIT_NS)) {
		lf_count(&u->preempt_requests, 1);
		return;                 /* logged by os_queue_preempt */
	}
	hw_engine_preempt(u->hw, engine, p);
	os_ddi_log(u->a, OS_DDI_PREEMPT_COMMAND, engine, (uint64_t)(int64_t)p);
	lf_count(&u->preempt_requests, 1);
}

/* Consume q's submissions: validate, resolve dependencies (os_queue_submit
 * holds monitored-fence waits on the CPU) and write the engine's ring. */
/* The timeline trace (os.h): this thread handed d to q from t0 until now. */
static void os_sched_trace(struct os_ums *u, struct os_hwqueue *q, const struct os_km_desc *d, uint64_t t0)
{
	struct os_trace_rec r = {
		.kind = OS_TRACE_SCHED_SUBMIT, .tid = gettid(), .queue = hw_queue_handle(q->hwq), .t0 = t0,
		.t1 = lf_now_ns(), .n = (uint64_t)d->n,
	};
	os_trace_add(u->a, &r);
}

/* Hand the popped submission d to q's OS queue: 0, -ENODEV (q destroyed:
 * discarded unread), -EINVAL or os_queue_submit_buffer's error (refused).
 * The application's buffer, and the fences it names, are read only while
 * q->sched_busy is set: a destroy or termination of q that began (q->gone)
 * waits for it to clear before it releases q's progress fence
 * (os_hwqueue_sched_wait_locked), after which the application may free both. */
static int os_sched_hand(struct os_ums *u, struct os_hwqueue *q, const struct os_km_desc *d)
{
	/* Dekker with os_hwqueue_gone_locked: seq_cst store of busy, then the
	 * load of gone; it stores gone (seq_cst), then loads busy.  Either this
	 * thread sees gone, or the destroyer sees busy and waits. */
	atomic_store_explicit(&q->sched_busy, true, memory_order_seq_cst);
	int rc = -ENODEV;
	if (!atomic_load_explicit(&q->gone, memory_order_seq_cst)) {
		if (os_test_sched_popped_hook)
			os_test_sched_popped_hook(q);
		uint64_t t0 = os_tracing(u->a) ? lf_now_ns() : 0;
		os_timing_work(u->a->cfg.timing.km_sched_ns);   /* timing.c: the scheduler's work per buffer */
		rc = os_km_valid(d) ? os_queue_submit_buffer(q->kq, d->cmds, (size_t)d->n, false, NULL) : -EINVAL;
		if (!rc && t0)
			os_sched_trace(u, q, d, t0);
	}
	/* release: this thread's reads of the buffer and its fences happen
	 * before the destroyer's acquire load that sees busy clear */
	atomic_store_explicit(&q->sched_busy, false, memory_order_release);
	return rc;
}

/* Hand q's pending kernel-mode submissions to the engine; returns how many. */
static unsigned os_sched_drain(struct os_ums *u, struct os_hwqueue *q)
{
	struct os_km_desc d;
	unsigned handed = 0;
	while (lf_ring_pop_spsc(q->subq, &d)) {
		int rc = os_sched_hand(u, q, &d);
		if (rc == -ENODEV)
			lf_count(&u->km_discarded, 1);
		else if (rc)
			lf_count(&u->km_rejected, 1);
		else
			handed++;
	}
	if (handed)
		os_sched_preempt(u, q);
	return handed;
}

static bool os_sched_d3(struct os_ums *u)
{
	pthread_mutex_lock(&u->lock);
	bool d3 = u->d3;
	pthread_mutex_unlock(&u->lock);
	return d3;
}

void *os_sched_main(void *arg)
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
	/* the last reading of the thread's own clock, for stats after it is gone */
	uint64_t cpu = 0;
	lf_clock_ns(CLOCK_THREAD_CPUTIME_ID, &cpu);
	lf_count(&u->sched_busy_ns, cpu);
	return NULL;
}

int os_hwqueue_submit(struct os_hwqueue *q, const struct hw_cmd *cmds, size_t n, uint64_t progress)
{
	if (q->um || !n || atomic_load_explicit(&q->ctx->d->error, memory_order_acquire)) {
		os_ums_thunk(q->u);      /* a kernel call all the same (accepted ones count as km_submits) */
		return q->um || !n ? -EINVAL : -ENODEV;
	}
	/* timing.c: the kernel crossing, validation and patching, on the caller,
	 * before the buffer is handed to the scheduler */
	os_timing_work(q->u->a->cfg.timing.km_call_ns + q->u->a->cfg.timing.km_validate_ns);
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
