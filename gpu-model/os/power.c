/* gpu-model/os/power.c — engine F-states (the power thread) and device
 * D-states.  Contract in ums.h.  Calls doorbell.c (disconnect on F1/D3),
 * device.c (contexts back on the run list) and hw/. */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include "gpu-model/os/ums_internal.h"
#include "lockfree/arch.h"
#include "lockfree/thread.h"

/* ---- engine F-states ---- */

/* Is any queue of engine e, on a context that may run, still owed work?
 * (last queued > completed: the seed's reason for the last-queued value) */
static bool os_engine_pending_locked(struct os_ums *u, unsigned e)
{
	lf_mutex_assert_held(&u->lock);
	uint32_t n = atomic_load_explicit(&u->nqueues, memory_order_relaxed);
	for (uint32_t i = 0; i < n; i++) {
		struct os_hwqueue *q = u->queues[i];
		if (q->ctx->engine == e && !q->ctx->suspended && !atomic_load(&q->gone) && os_hwqueue_pending(q))
			return true;
	}
	return false;
}

/* DXGK_ENGINE_STATE_TRANSITION_TO_F1 from engine e: disconnect every doorbell
 * of its queues, then the engine parks (F0 -> F1).  An engine that is owed
 * work by a runnable queue is left in F0 (it asks again when idle). */
static void os_power_f1_locked(struct os_ums *u, unsigned e)
{
	lf_mutex_assert_held(&u->lock);
	lf_count(&u->f1_requests, 1);
	if (os_engine_pending_locked(u, e))
		return;
	uint32_t n = atomic_load_explicit(&u->nqueues, memory_order_relaxed);
	for (uint32_t i = 0; i < n; i++) {
		struct os_hwqueue *q = u->queues[i];
		if (q->um && q->ctx->engine == e && q->db.connected) {
			os_doorbell_disconnect_locked(q, OS_DOORBELL_DISCONNECTED_RETRY);
			lf_count(&u->f1_disconnects, 1);
		}
	}
}

void *os_power_main(void *arg)
{
	struct os_ums *u = arg;
	pthread_setname_np(pthread_self(), "fb-os-power");
	lf_thread_pin_self(u->cfg.power_cpu);
	atomic_store(&u->power_tid, gettid());
	while (!atomic_load_explicit(&u->stop, memory_order_acquire)) {
		uint32_t taken = hw_state_irq_take(u->hw);
		uint32_t bits = taken & ~HW_STATE_IRQ_KICK;   /* a kick only wakes: the loop re-checks stop */
		if (!taken) {
			hw_state_irq_park(u->hw, -1);
			continue;
		}
		pthread_mutex_lock(&u->lock);
		for (unsigned e = 0; bits; e++, bits >>= 1)
			if (bits & 1)
				os_power_f1_locked(u, e);
		pthread_mutex_unlock(&u->lock);
	}
	return NULL;
}

/* ---- device D-states ---- */

int os_power_d3(struct os_ums *u)
{
	pthread_mutex_lock(&u->lock);
	if (u->d3)
		goto unlock;
	u->d3 = true;
	u->d3_since = lf_now_ns();
	lf_count(&u->d3_entries, 1);
	/* 1. DxgkddiSuspendContext for every context */
	for (uint32_t i = 0; i < u->ncontexts; i++) {
		struct os_context *c = u->contexts[i];
		bool was_running = c->suspended == 0;
		c->suspended |= OS_SUSPEND_D3;
		if (!c->dead && was_running)
			os_context_apply_locked(c);
	}
	/* 2. every doorbell disconnected (RETRY), 3. ring allocations evicted
	 * once no context is on the hardware's list */
	uint32_t n = atomic_load_explicit(&u->nqueues, memory_order_relaxed);
	for (uint32_t i = 0; i < n; i++) {
		struct os_hwqueue *q = u->queues[i];
		if (atomic_load(&q->gone))
			continue;
		if (q->um && q->db.connected)
			os_doorbell_disconnect_locked(q, OS_DOORBELL_DISCONNECTED_RETRY);
		if (q->resident) {
			q->resident = false;
			lf_count(&u->ring_evictions, 1);
		}
	}
unlock:
	pthread_mutex_unlock(&u->lock);
	return 0;
}

/* D0 and rings resident again; contexts stay suspended until
 * os_power_resume_all_locked (the seed connects the doorbell in between). */
void os_power_d0_locked(struct os_ums *u)
{
	lf_mutex_assert_held(&u->lock);
	if (!u->d3)
		return;
	u->d3 = false;
	lf_count(&u->d3_ns, lf_now_ns() - u->d3_since);
	lf_count(&u->d0_exits, 1);
	uint32_t n = atomic_load_explicit(&u->nqueues, memory_order_relaxed);
	for (uint32_t i = 0; i < n; i++) {
		struct os_hwqueue *q = u->queues[i];
		if (!atomic_load(&q->gone) && !q->resident) {
			q->resident = true;
			lf_count(&u->ring_restores, 1);
		}
	}
}

/* DxgkddiResumeContext for every context the power-down suspended. */
void os_power_resume_all_locked(struct os_ums *u)
{
	lf_mutex_assert_held(&u->lock);
	for (uint32_t i = 0; i < u->ncontexts; i++) {
		struct os_context *c = u->contexts[i];
		if (!(c->suspended & OS_SUSPEND_D3))
			continue;
		c->suspended &= ~OS_SUSPEND_D3;
		if (!c->dead && c->suspended == 0)
			os_context_apply_locked(c);
	}
}

int os_power_d0(struct os_ums *u)
{
	pthread_mutex_lock(&u->lock);
	if (u->d3) {
		os_power_d0_locked(u);
		os_power_resume_all_locked(u);
	}
	pthread_mutex_unlock(&u->lock);
	return 0;
}

bool os_power_in_d3(struct os_ums *u)
{
	pthread_mutex_lock(&u->lock);
	bool d3 = u->d3;
	pthread_mutex_unlock(&u->lock);
	return d3;
}

