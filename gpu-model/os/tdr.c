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
 *
 * Several engines hung at once (Linux amdgpu's recovery stops and resets
 * every hung ring before it signals anything): terminating a guilty device
 * waits, under u->lock, for each engine to leave its queues and to see them
 * retired, and an engine hung in another queue (the device's own on a
 * second engine, or another device's while this one has an idle queue
 * there) would hold that wait forever, since only the watchdog resets.  So
 * the watchdog never waits, for an engine or for a lock, without watching:
 * it waits in slices of its look period and between them looks at every
 * engine, resetting one it finds hung (the same rule and order as above).
 * The devices found guilty meanwhile are terminated, and their resets
 * counted against TdrLimitCount, once it holds nothing (os_tdr_settle).
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
#include "lockfree/die.h"
#include "lockfree/thread.h"

static uint64_t os_tdr_delay(const struct os_ums *u)
{
	return u->cfg.tdr_delay_ns ? (uint64_t)u->cfg.tdr_delay_ns : OS_TDR_DELAY_DEFAULT_NS;
}

/* The watchdog's thread knows its adapter: the waits it makes watch the
 * engines (os_mutex_lock_watching, os_tdr_engine_wait_locked). */
static __thread struct os_ums *os_tdr_self;

void (*os_test_tdr_wait_hook)(unsigned engine);

/* The look period: TdrDelay / 4, 1 ms .. 100 ms. */
static uint64_t os_tdr_period(const struct os_ums *u)
{
	uint64_t period = os_tdr_delay(u) / 4;
	if (period < 1000000)
		period = 1000000;
	if (period > 100000000)
		period = 100000000;
	return period;
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
	os_mutex_lock_watching(&u->lock);
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
	if (u->tdr_npend == sizeof(u->tdr_pend) / sizeof(u->tdr_pend[0]))
		lf_die("tdr: more resets pending than queues");   /* each reset faults a queue for good */
	u->tdr_pend[u->tdr_npend++] = oq ? oq->ctx->d : NULL;   /* guilty: settled with nothing held */
}

/* Each reset made: counted against TdrLimitCount, then its guilty device
 * terminated (the limit first: a waiter the termination releases sees the
 * bug check's outcome already).  With nothing held; a termination may add
 * resets (engines it found hung while it waited), settled here too. */
static void os_tdr_settle(struct os_ums *u)
{
	for (unsigned i = 0; i < u->tdr_npend; i++) {
		struct os_device *d = u->tdr_pend[i];
		if (os_tdr_limit(u, lf_now_ns()))
			break;                      /* bug check: every device terminated */
		if (d)
			os_device_terminate(d);     /* guilty: device lost for its process */
	}
	u->tdr_npend = 0;
}

/* One look at every engine: those reported hung first, then those inside
 * one queue without progress for TdrDelay.  Resets it makes are pending. */
static void os_tdr_look(struct os_ums *u)
{
	unsigned ne = hw_adapter_caps(u->hw)->engines;
	uint64_t delay = os_tdr_delay(u), period = os_tdr_period(u);
	uint32_t hung = atomic_exchange_explicit(&u->tdr_hung_pending, 0, memory_order_relaxed);
	for (unsigned e = 0; e < ne; e++) {
		struct hw_queue *q = hw_engine_running(u->hw, e);
		if (!(hung >> e & 1) || !q)
			continue;           /* not reported, or running nothing: nothing to recover */
		lf_count(&u->tdr_hung, 1);
		os_tdr_engine(u, e, q, hw_engine_progress(u->hw, e), period);
		u->tdr_seen[e] = NULL;   /* start over */
	}
	uint64_t now = lf_now_ns();
	for (unsigned e = 0; e < ne; e++) {
		struct hw_queue *q = hw_engine_running(u->hw, e);
		uint64_t p = hw_engine_progress(u->hw, e);
		if (!q || q != u->tdr_seen[e] || p != u->tdr_last[e]) {
			u->tdr_seen[e] = q;
			u->tdr_last[e] = p;
			u->tdr_since[e] = now;
			continue;
		}
		if (now - u->tdr_since[e] < delay)
			continue;
		lf_count(&u->tdr_timeouts, 1);
		os_tdr_engine(u, e, q, p, delay);
		u->tdr_seen[e] = NULL;   /* start over */
	}
}

void os_mutex_lock_watching(pthread_mutex_t *m)
{
	struct os_ums *u = os_tdr_self;
	if (!u || u->cfg.tdr_fault == OS_TDR_FAULT_WAIT_UNWATCHED) {
		pthread_mutex_lock(m);
		return;
	}
	/* the holder may wait for an engine only this thread can reset: look
	 * between tries (a vidmm paging wait under u->lock and the video memory
	 * manager's lock is one; it gives up after 10 s, TdrDelay is less) */
	struct timespec d = { 0, 200000 };
	while (pthread_mutex_trylock(m)) {
		os_tdr_look(u);
		nanosleep(&d, NULL);
	}
}

void os_tdr_engine_wait_locked(struct os_ums *u, struct hw_queue *hq, bool retire)
{
	lf_mutex_assert_held(&u->lock);
	bool self = os_tdr_self == u;
	int64_t slice = self ? (int64_t)os_tdr_period(u) : -1;
	for (bool first = true;; first = false) {
		int rc = retire ? hw_queue_retire_wait_for(hq, slice) : hw_queue_preempt_wait_for(hq, slice);
		if (!rc)
			return;
		/* only the watchdog gets here: the engine is still inside hq, or
		 * busy elsewhere and has not seen it retired; it may be hung */
		if (first && os_test_tdr_wait_hook)
			os_test_tdr_wait_hook(hw_queue_engine(hq));
		if (u->cfg.tdr_fault != OS_TDR_FAULT_WAIT_UNWATCHED)
			os_tdr_look(u);
	}
}

void os_tdr_watch_locked(struct os_ums *u)
{
	lf_mutex_assert_held(&u->lock);
	if (os_tdr_self == u && u->cfg.tdr_fault != OS_TDR_FAULT_WAIT_UNWATCHED)
		os_tdr_look(u);
}

void os_tdr_retire_locked(struct os_ums *u, struct hw_queue *hq)
{
	hw_queue_retire_begin(hq);
	os_tdr_engine_wait_locked(u, hq, true);
}

void *os_tdr_main(void *arg)
{
	struct os_ums *u = arg;
	pthread_setname_np(pthread_self(), "fb-os-tdr");
	os_tdr_self = u;
	atomic_store(&u->tdr_tid, gettid());
	uint64_t period = os_tdr_period(u);
	while (os_tdr_sleep(u, period)) {
		os_tdr_look(u);
		os_tdr_settle(u);
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
