/* gpu-model/os/tdr.c — timeout detection and recovery (seed gpu-preemption:
 * the OS "guarantees that preemption requests are sent to the GPU before it
 * initiates a Timeout Detection and Recovery (TDR) process"; repeated TDRs
 * "eventually cause a system bug check").  Contract in ums.h ("TDR").
 *
 * One watchdog thread per adapter looks at every engine each TdrDelay / 4
 * (1 ms .. 100 ms; it sleeps on a condition variable between looks, so it
 * is idle and detach wakes it at once).  An engine inside the same queue
 * with no progress (no command finished, no preemption) for TdrDelay is
 * timed out:
 *   1. a preemption request for everything (DxgkDdiPreemptCommand), then up
 *      to TdrDelay for the engine to yield: it did — nothing lost, done;
 *   2. else DxgkDdiResetEngine: the command is aborted, the queue faulted
 *      (gpu-model/hw/preempt.c); its device is guilty: terminated as an
 *      abnormal termination (device.c: error, doorbells DISCONNECTED_ABORT,
 *      queues retired, the device's fences to UINT64_MAX so every waiter
 *      returns, the runtime reports device removed); other devices' queues
 *      on that engine were not running and keep what they had;
 *   3. TdrLimitCount resets within TdrLimitTime: a bug check — every device
 *      on the adapter terminated, no device or context can be created again.
 * An engine the KMD reported hung (the engine-state-change interrupt with
 * NewState Hung, taken by the power thread: os_tdr_report_hung) is
 * recovered at the watchdog's next wake-up, which the report brings at
 * once: steps 1 to 3 for the queue it is inside then, with the look period
 * rather than TdrDelay to yield (it is known hung; the request still comes
 * first).
 * Calls device.c and hw/.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpu-model/os/ums_internal.h"
#include "lockfree/arch.h"
#include "lockfree/thread.h"

static uint64_t os_tdr_delay(const struct os_ums *u)
{
	return u->cfg.tdr_delay_ns ? (uint64_t)u->cfg.tdr_delay_ns : OS_TDR_DELAY_DEFAULT_NS;
}

/* Sleep up to ns on the watchdog's condition, or not at all while a hung
 * report waits; false once detach asked it to stop. */
static bool os_tdr_sleep(struct os_ums *u, uint64_t ns)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t t = (uint64_t)ts.tv_nsec + ns;
	ts.tv_sec += (time_t)(t / 1000000000u);
	ts.tv_nsec = (long)(t % 1000000000u);
	pthread_mutex_lock(&u->tdr_lock);
	/* the pending bits are set under tdr_lock before the broadcast: read
	 * here under it, a report is either seen or wakes the wait */
	if (!atomic_load(&u->stop) && !atomic_load_explicit(&u->tdr_hung_pending, memory_order_relaxed))
		pthread_cond_timedwait(&u->tdr_cond, &u->tdr_lock, &ts);
	pthread_mutex_unlock(&u->tdr_lock);
	return !atomic_load(&u->stop);
}

void os_tdr_report_hung(struct os_ums *u, uint32_t engines)
{
	pthread_mutex_lock(&u->tdr_lock);
	atomic_fetch_or_explicit(&u->tdr_hung_pending, engines, memory_order_relaxed);   /* tdr_lock orders it */
	pthread_cond_broadcast(&u->tdr_cond);
	pthread_mutex_unlock(&u->tdr_lock);
}

/* The OS queue whose hardware queue is hq (NULL: a queue of no device). */
static struct os_hwqueue *os_tdr_owner(struct os_ums *u, const struct hw_queue *hq)
{
	uint32_t n = atomic_load_explicit(&u->nqueues, memory_order_acquire);
	for (uint32_t i = 0; i < n; i++)
		if (u->queues[i]->hwq == hq)
			return u->queues[i];
	return NULL;
}

static void os_tdr_bugcheck(struct os_ums *u)
{
	pthread_mutex_lock(&u->lock);
	u->bugchecked = true;
	uint32_t nd = u->ndevices;
	pthread_mutex_unlock(&u->lock);
	fprintf(stderr, "fencebench: bug check: %u TDRs within %llu ms (TdrLimitCount)\n",
		u->cfg.tdr_limit_count ? u->cfg.tdr_limit_count : OS_TDR_LIMIT_COUNT_DEFAULT,
		(unsigned long long)((u->cfg.tdr_limit_time_ns ? u->cfg.tdr_limit_time_ns
							: OS_TDR_LIMIT_TIME_DEFAULT_NS) / 1000000));
	for (uint32_t i = 0; i < nd; i++)
		os_device_terminate(u->devices[i]);
	/* counted once every device is lost: whoever sees the count sees them lost */
	lf_count(&u->tdr_bugchecks, 1);
}

/* Count a reset against TdrLimitCount / TdrLimitTime; true: bug check (done). */
static bool os_tdr_limit(struct os_ums *u, uint64_t now)
{
	unsigned limit = u->cfg.tdr_limit_count ? u->cfg.tdr_limit_count : OS_TDR_LIMIT_COUNT_DEFAULT;
	uint64_t window = u->cfg.tdr_limit_time_ns ? u->cfg.tdr_limit_time_ns : OS_TDR_LIMIT_TIME_DEFAULT_NS;
	if (limit > OS_TDR_HISTORY)
		limit = OS_TDR_HISTORY;
	u->tdr_times[u->tdr_n++ % OS_TDR_HISTORY] = now;
	unsigned recent = 0;
	for (unsigned i = 0; i < OS_TDR_HISTORY && i < u->tdr_n; i++)
		if (now - u->tdr_times[i] <= window)
			recent++;
	if (recent < limit)
		return false;
	os_tdr_bugcheck(u);
	return true;
}

/* Wait up to ns for engine e to leave q or make progress past p. */
static bool os_tdr_yielded(struct os_ums *u, unsigned e, struct hw_queue *q, uint64_t p, uint64_t ns)
{
	uint64_t t0 = lf_now_ns();
	struct timespec d = { 0, 200000 };
	while (lf_now_ns() - t0 < ns) {
		if (hw_engine_progress(u->hw, e) != p || hw_engine_running(u->hw, e) != q)
			return true;
		if (atomic_load(&u->stop))
			return true;
		nanosleep(&d, NULL);
	}
	return false;
}

/* Recover engine e, inside q at progress p (for TdrDelay, or reported
 * hung): a preemption request and `grace` to yield, else a reset. */
static void os_tdr_engine(struct os_ums *u, unsigned e, struct hw_queue *q, uint64_t p, uint64_t grace)
{
	uint64_t delay = os_tdr_delay(u);
	if (u->cfg.tdr_fault != OS_TDR_FAULT_NO_PREEMPT) {
		/* the seed's guarantee: a preemption request before any TDR */
		hw_engine_preempt(u->hw, e, HW_PRIORITY_PREEMPT_ALL);
		os_ddi_log(u->a, OS_DDI_PREEMPT_COMMAND, e, (uint64_t)HW_PRIORITY_PREEMPT_ALL);
		lf_count(&u->tdr_preempt_requests, 1);
		if (os_tdr_yielded(u, e, q, p, grace)) {
			lf_count(&u->tdr_preempted, 1);
			return;
		}
	}
	int rc = hw_engine_reset(u->hw, e, q, (int64_t)delay);
	os_ddi_log(u->a, OS_DDI_RESET_ENGINE, e, rc == 0);
	if (rc)
		return;                     /* it moved on meanwhile: nothing to recover */
	lf_count(&u->tdr_resets, 1);
	struct os_hwqueue *oq = os_tdr_owner(u, q);
	if (oq)
		lf_count(&u->tdr_guilty, 1);
	/* the limit first: a waiter the guilty device's termination releases
	 * sees the bug check's outcome already */
	if (!os_tdr_limit(u, lf_now_ns()) && oq)
		os_device_terminate(oq->ctx->d);   /* guilty: device lost for its process */
}

void *os_tdr_main(void *arg)
{
	struct os_ums *u = arg;
	pthread_setname_np(pthread_self(), "fb-os-tdr");
	atomic_store(&u->tdr_tid, gettid());
	unsigned ne = hw_adapter_caps(u->hw)->engines;
	uint64_t delay = os_tdr_delay(u);
	uint64_t period = delay / 4;
	if (period < 1000000)
		period = 1000000;
	if (period > 100000000)
		period = 100000000;
	uint64_t last[HW_MAX_ENGINES] = { 0 }, since[HW_MAX_ENGINES] = { 0 };
	struct hw_queue *seen[HW_MAX_ENGINES] = { 0 };
	while (os_tdr_sleep(u, period)) {
		uint32_t hung = atomic_exchange_explicit(&u->tdr_hung_pending, 0, memory_order_relaxed);
		for (unsigned e = 0; e < ne; e++) {
			struct hw_queue *q = hw_engine_running(u->hw, e);
			if (!(hung >> e & 1) || !q)
				continue;           /* not reported, or running nothing: nothing to recover */
			lf_count(&u->tdr_hung, 1);
			os_tdr_engine(u, e, q, hw_engine_progress(u->hw, e), period);
			seen[e] = NULL;          /* start over */
		}
		uint64_t now = lf_now_ns();
		for (unsigned e = 0; e < ne; e++) {
			struct hw_queue *q = hw_engine_running(u->hw, e);
			uint64_t p = hw_engine_progress(u->hw, e);
			if (!q || q != seen[e] || p != last[e]) {
				seen[e] = q;
				last[e] = p;
				since[e] = now;
				continue;
			}
			if (now - since[e] < delay)
				continue;
			lf_count(&u->tdr_timeouts, 1);
			os_tdr_engine(u, e, q, p, delay);
			seen[e] = NULL;          /* start over */
		}
	}
	return NULL;
}

int os_tdr_start(struct os_ums *u)
{
	pthread_mutex_init(&u->tdr_lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&u->tdr_cond, &ca);
	pthread_condattr_destroy(&ca);
	u->tdr_init = true;
	if (u->cfg.tdr_delay_ns < 0)
		return 0;                   /* TdrLevel off */
	int rc = pthread_create(&u->tdr, NULL, os_tdr_main, u);
	if (rc)
		return rc;
	u->tdr_started = true;
	while (!atomic_load(&u->tdr_tid))
		sched_yield();
	return 0;
}

void os_tdr_stop(struct os_ums *u)
{
	if (!u->tdr_init)
		return;
	if (u->tdr_started) {
		pthread_mutex_lock(&u->tdr_lock);
		pthread_cond_broadcast(&u->tdr_cond);   /* u->stop is set */
		pthread_mutex_unlock(&u->tdr_lock);
		pthread_join(u->tdr, NULL);
		u->tdr_started = false;
	}
	pthread_cond_destroy(&u->tdr_cond);
	pthread_mutex_destroy(&u->tdr_lock);
	u->tdr_init = false;
}
