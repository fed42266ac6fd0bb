/* gpu-model/os/power.c — engine F-states and the other engine-state
 * changes (the power thread: TransitionToF1 here, Hung handed to tdr.c) and
 * device D-states.  Contract in ums.h.  Calls doorbell.c (disconnect on F1/D3),
 * device.c (contexts back on the run list) and hw/. */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include "gpu-model/os/ums_internal.h"
#include "lockfree/arch.h"
#include "lockfree/thread.h"

/* ---- engine F-states ---- */

/* Is any queue of engine e on the run list (os_hwqueue_runs_locked) still owed work?
 * (last queued > completed: the seed's reason for the last-queued value) */
static bool os_engine_pending_locked(struct os_ums *u, unsigned e)
{
	lf_mutex_assert_held(&u->lock);
	uint32_t n = atomic_load_explicit(&u->nqueues, memory_order_relaxed);
	for (uint32_t i = 0; i < n; i++) {
		struct os_hwqueue *q = u->queues[i];
		if (q->ctx->engine == e && !atomic_load(&q->gone) && os_hwqueue_runs_locked(q) && os_hwqueue_pending(q))
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
	/* seed, "Engine F-state transitions": "Dxgkrnl disconnects all doorbells
	 * of HWQueues on this engine"; OS_UMS_FAULT_F1_EVERY_ENGINE: broken on
	 * purpose, every engine's */
	bool every = u->cfg.ums_fault == OS_UMS_FAULT_F1_EVERY_ENGINE;
	uint32_t n = atomic_load_explicit(&u->nqueues, memory_order_relaxed);
	for (uint32_t i = 0; i < n; i++) {
		struct os_hwqueue *q = u->queues[i];
		if (q->um && (every || q->ctx->engine == e) && q->db.connected) {
			os_doorbell_disconnect_locked(q, OS_DOORBELL_DISCONNECTED_RETRY);
			lf_count(&u->f1_disconnects, 1);
		}
	}
}

/* The engine-state-change interrupts taken (hw_state_irq_take's word), by
 * EngineStateChange.NewState: TransitionToF1 here, Hung to the watchdog's
 * timeout recovery (tdr.c).  A kick names no engine: the loop re-checks stop. */
static void os_power_state_changes(struct os_ums *u, uint32_t taken)
{
	uint32_t hung = 0;
	pthread_mutex_lock(&u->lock);
	for (unsigned e = 0; e < HW_MAX_ENGINES; e++) {
		bool f1 = taken & HW_STATE_IRQ_F1(e), is_hung = taken & HW_STATE_IRQ_HUNG(e);
		if (u->cfg.tdr_fault == OS_TDR_FAULT_HUNG_AS_F1) {
			f1 |= is_hung;      /* broken on purpose: NewState ignored */
			is_hung = false;
		}
		if (f1)
			os_power_f1_locked(u, e);
		if (is_hung) {
			lf_count(&u->hung_reports, 1);
			hung |= 1u << e;
		}
	}
	pthread_mutex_unlock(&u->lock);
	if (hung)
		os_tdr_report_hung(u, hung);
}

void *os_power_main(void *arg)
{
	struct os_ums *u = arg;
	pthread_setname_np(pthread_self(), "fb-os-power");
	lf_thread_pin_self(u->cfg.power_cpu);
	atomic_store(&u->power_tid, gettid());
	while (!atomic_load_explicit(&u->stop, memory_order_acquire)) {
		uint32_t taken = hw_state_irq_take(u->hw);
		if (!taken) {
			hw_state_irq_park(u->hw, -1);
			continue;
		}
		os_power_state_changes(u, taken);
	}
	return NULL;
}

int os_ums_engine_hung(struct os_ums *u, unsigned engine)
{
	/* the KMD's DxgkCbNotifyInterrupt: DXGK_INTERRUPT_GPU_ENGINE_STATE_CHANGE,
	 * EngineStateChange.NewState = DXGK_ENGINE_STATE_HUNG */
	return hw_engine_state_raise(u->hw, engine, HW_ENGINE_STATE_HUNG);
}

/* ---- device D-states ---- */

/* D3 step 1: DxgkddiSuspendContext for every context. */
static void os_power_suspend_all_locked(struct os_ums *u)
{
	lf_mutex_assert_held(&u->lock);
	for (uint32_t i = 0; i < u->ncontexts; i++) {
		struct os_context *c = u->contexts[i];
		bool was_running = c->suspended == 0;
		c->suspended |= OS_SUSPEND_D3;
		if (!c->dead && was_running)
			os_context_apply_locked(c);
	}
}

/* D3 step 2: every doorbell disconnected (RETRY). */
static void os_power_disconnect_all_locked(struct os_ums *u)
{
	lf_mutex_assert_held(&u->lock);
	uint32_t n = atomic_load_explicit(&u->nqueues, memory_order_relaxed);
	for (uint32_t i = 0; i < n; i++) {
		struct os_hwqueue *q = u->queues[i];
		if (!atomic_load(&q->gone) && q->um && q->db.connected)
			os_doorbell_disconnect_locked(q, OS_DOORBELL_DISCONNECTED_RETRY);
	}
}

/* D3 step 3 (and its undoing at D0): every live ring allocation evicted /
 * made resident again, each a paging transfer on the DDI log. */
static void os_power_rings_locked(struct os_ums *u, bool evict)
{
	lf_mutex_assert_held(&u->lock);
	for (uint32_t i = 0; i < u->ndevices; i++)
		for (struct os_ring_alloc *r = u->devices[i]->allocs; r; r = r->next) {
			if (r->dead || (evict ? !r->resident : !r->d3_evicted))
				continue;
			r->resident = !evict;
			r->d3_evicted = evict;
			os_ddi_log(u->a, evict ? OS_DDI_EVICT_RING_ALLOCATION : OS_DDI_RESTORE_RING_ALLOCATION,
				   (uint64_t)(uintptr_t)r, 0);
			lf_count(evict ? &u->ring_evictions : &u->ring_restores, 1);
		}
}

/* Seed, "Engine D-state transitions", D0 -> D3: 1. suspend every context
 * (off the HW scheduler's list), 2. disconnect every doorbell, 3. evict the
 * ring allocations "once all contexts are suspended and removed from the
 * hardware scheduler's list so that hardware doesn't reference any evicted
 * memory".  OS_UMS_FAULT_D3_DISCONNECT_FIRST: 2, 3, then 1 (broken). */
int os_power_d3(struct os_ums *u)
{
	int rc = 0;
	pthread_mutex_lock(&u->lock);
	if (u->d3)
		goto unlock;
	/* A destroy drains without the lock: suspended, its queues would never
	 * finish the work it waits for (nothing resumes them).  The device is
	 * not idle: no D3 until the drain ends. */
	if (u->draining) {
		rc = -EBUSY;
		goto unlock;
	}
	u->d3 = true;
	u->d3_since = lf_now_ns();
	lf_count(&u->d3_entries, 1);
	bool broken = u->cfg.ums_fault == OS_UMS_FAULT_D3_DISCONNECT_FIRST;
	if (!broken)
		os_power_suspend_all_locked(u);
	os_power_disconnect_all_locked(u);
	os_power_rings_locked(u, true);
	if (broken)
		os_power_suspend_all_locked(u);
unlock:
	pthread_mutex_unlock(&u->lock);
	return rc;
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
	os_power_rings_locked(u, false);
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

