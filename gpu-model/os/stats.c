/* gpu-model/os/stats.c — the OS's counters: each application thread's
 * counter block of an adapter (os_app_counters, the writers' side) and
 * os_adapter_stats, which sums them with the interrupt thread's counters.
 * Calls only hw/ (the adapter's signal and interrupt counts) and lockfree/.
 */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpu-model/os/os_internal.h"
#include "lockfree/alloc.h"
#include "lockfree/arch.h"
#include "lockfree/thread.h"

/* ---- counters ---- */

/* This thread's counter block for adapter a (one per thread and adapter). */
struct os_app_counters *os_app_counters(struct os_adapter *a)
{
	/* A few adapters per thread are cached (cross-adapter work alternates
	 * between two).  The id, not the block, identifies the adapter: a
	 * destroyed adapter's blocks are freed and its address may be reused. */
	enum { OS_APP_CACHE = 4 };
	static __thread struct { uint64_t id; struct os_app_counters *c; } cache[OS_APP_CACHE];
	static __thread unsigned victim;
	for (unsigned k = 0; k < OS_APP_CACHE; k++)
		if (cache[k].id == a->id)
			return cache[k].c;
	/* a miss: this thread's block for a, or a new one (one per thread and adapter) */
	pid_t tid = gettid();
	pthread_mutex_lock(&a->app_lock);
	struct os_app_counters *c = a->app;
	while (c && c->tid != tid)
		c = c->next;
	if (!c) {
		c = lf_alloc(sizeof(*c), LF_CACHELINE);
		c->adapter_id = a->id;
		c->tid = tid;
		c->next = a->app;
		a->app = c;
	}
	pthread_mutex_unlock(&a->app_lock);
	unsigned k = victim++ % OS_APP_CACHE;
	cache[k].id = a->id;
	cache[k].c = c;
	return c;
}

#define OS_LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)

void os_adapter_stats(struct os_adapter *a, struct os_stats *o)
{
	memset(o, 0, sizeof(*o));
	o->interrupts = OS_LOAD(a->interrupts);
	o->spurious = OS_LOAD(a->spurious);
	o->soft = OS_LOAD(a->soft);
	o->sw_signal_packets = atomic_load_explicit(&a->sw_signal_packets, memory_order_relaxed);
	o->sw_signals = OS_LOAD(a->sw_signals);
	o->released = OS_LOAD(a->released);
	o->fences_scanned = OS_LOAD(a->fences_scanned);
	o->bugchecks = OS_LOAD(a->bugchecks);
	o->held_released = OS_LOAD(a->held_released);
	o->held_waits = atomic_load_explicit(&a->held_waits, memory_order_relaxed);
	/* Power proxy: the interrupt thread's CPU time (user + kernel, the
	 * scheduler's own accounting) is its busy time; the rest of its life is idle. */
	o->isr_busy_ns = OS_LOAD(a->isr_busy_ns);
	o->irq_idle_ns = OS_LOAD(a->irq_idle_ns);
	uint64_t cpu = 0;
	if (a->irq_started && !atomic_load_explicit(&a->stop, memory_order_acquire) &&
	    a->irq_clock != (clockid_t)-1 && lf_clock_ns(a->irq_clock, &cpu) == 0) {
		uint64_t wall = lf_now_ns() - a->irq_t0;
		o->isr_busy_ns = cpu;
		o->irq_idle_ns = wall > cpu ? wall - cpu : 0;
	}
	o->irq_wakeups = OS_LOAD(a->irq_wakeups);
	pthread_mutex_lock(&a->app_lock);
	for (struct os_app_counters *c = a->app; c; c = c->next) {
		o->waits += OS_LOAD(c->waits);
		o->waits_fast += OS_LOAD(c->waits_fast);
		o->waits_blocked += OS_LOAD(c->waits_blocked);
		o->self_released += OS_LOAD(c->self_released);
		o->timeouts += OS_LOAD(c->timeouts);
		o->lost_wakeups += OS_LOAD(c->lost_wakeups);
		o->late_wakeups += OS_LOAD(c->late_wakeups);
		o->signal_released += OS_LOAD(c->signal_released);
		o->abandoned += OS_LOAD(c->abandoned);
	}
	pthread_mutex_unlock(&a->app_lock);
	if (a->hw) {
		o->gpu_signals = hw_adapter_signals(a->hw);
		o->gpu_interrupts = hw_adapter_interrupts(a->hw);
	}
	os_logs_stats(a, o);   /* logbuf */
}
