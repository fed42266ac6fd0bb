/* gpu-model/os/adapter.c — adapter creation and the interrupt thread (ISR + DPC).
 *
 * The interrupt thread drains interrupt records, releases satisfied CPU
 * waiters, advances MonitoredValues and resamples, submits CPU-held legacy
 * command buffers, and parks when there is nothing to do.  Its busy time,
 * idle time and wake-ups are the power proxy.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu-model/os/os_internal.h"
#include "lockfree/alloc.h"
#include "lockfree/arch.h"
#include "lockfree/thread.h"

#define OS_BATCH 32
#define OS_FEED_RETRY_NS 100000     /* poll for ring space every 100 us while a held buffer waits */

static _Atomic uint64_t os_adapter_ids = 1;

/* RCU registration that nests: fence create/destroy run on any thread, the
 * interrupt thread stays registered for its lifetime. */
static __thread unsigned os_rcu_depth;

void os_rcu_enter(void)
{
	if (os_rcu_depth++ == 0)
		lf_htab_thread_online();
}

void os_rcu_leave(void)
{
	if (--os_rcu_depth == 0)
		lf_htab_thread_offline();
}

void os_config_default(struct os_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	hw_caps_default(&cfg->caps);
	cfg->native_fence_enabled = true;
	cfg->wait_spin_ns = 2000;
	cfg->max_fences = 65536;
	cfg->irq_cpu = -1;
}

int os_adapter_create(const struct os_config *cfg, struct os_adapter **out, char *err, size_t errlen)
{
	/* Seed (native-gpu-fence, "Querying native fence feature enablement"): the OS
	 * fails adapter initialization if the KMD advertises native fence support
	 * while the feature is not enabled. */
	if (cfg->caps.native_fence && !cfg->native_fence_enabled) {
		snprintf(err, errlen, "native_fence advertised while the OS has not enabled DXGK_FEATURE_NATIVE_FENCE: adapter initialization fails");
		return -EINVAL;
	}
	if (cfg->max_fences == 0 || cfg->max_fences > (1u << 24)) {
		snprintf(err, errlen, "max_fences=%u: must be 1..%u", cfg->max_fences, 1u << 24);
		return -EINVAL;
	}
	struct os_adapter *a = lf_alloc(sizeof(*a), LF_CACHELINE);
	int rc = hw_adapter_create(&cfg->caps, &a->hw, err, errlen);
	if (rc) {
		lf_free(a, sizeof(*a), LF_CACHELINE);
		return rc;
	}
	a->cfg = *cfg;
	a->cfg.caps = *hw_adapter_caps(a->hw);
	a->native = cfg->caps.native_fence && cfg->native_fence_enabled;
	a->id = atomic_fetch_add(&os_adapter_ids, 1);
	a->handles = lf_htab_create(1024);
	atomic_init(&a->next_handle, (a->id << 32) | 1);
	a->table = calloc(cfg->max_fences, sizeof(*a->table));
	a->free_idx = calloc(cfg->max_fences, sizeof(*a->free_idx));
	a->logs = os_logs_create();   /* logbuf */
	if (!a->handles || !a->table || !a->free_idx || !a->logs) {
		snprintf(err, errlen, "out of memory creating an adapter for %u fences", cfg->max_fences);
		os_adapter_destroy(a);
		return -ENOMEM;
	}
	pthread_mutex_init(&a->fence_lock, NULL);
	pthread_mutex_init(&a->app_lock, NULL);
	*out = a;
	return 0;
}

/* ---- the interrupt thread ---- */

static struct os_fence *os_lookup(struct os_adapter *a, uint64_t handle)
{
	return lf_htab_lookup(a->handles, handle);
}

/* The value record rec's signal wrote to f, if rec names f as the signaled
 * fence (0: none; f is then released against its current value). */
static uint64_t os_signaled_value(const struct hw_irq_rec *rec, const struct os_fence *f)
{
	return rec->signaled && rec->signaled == f->hw.handle ? rec->value : 0;
}

/* Walk the scan table: every fence of the kind asked for that has CPU waiters
 * (the signaled one, if rec names it, against the value written). */
static size_t os_scan(struct os_adapter *a, bool native, bool legacy, const struct hw_irq_rec *rec)
{
	size_t released = 0, scanned = 0;
	uint32_t n = atomic_load_explicit(&a->table_hw, memory_order_acquire);
	struct os_fence *batch[OS_BATCH];
	size_t nb = 0;

	for (uint32_t i = 0; i <= n; i++) {
		struct os_fence *f = i < n ? atomic_load_explicit(&a->table[i], memory_order_acquire) : NULL;
		if (f && (f->type == OS_FENCE_NATIVE ? native : legacy)) {
			scanned++;
			if (f->x)
				os_cross_propagate(f);   /* cross-adapter: pass a new value on */
			if (os_fence_has_waiters(f))
				batch[nb++] = f;
		}
		/* Batch form (seed: DxgkDdiUpdateMonitoredValues updates many values at
		 * once): release and publish for a batch, then resample them all. */
		if (nb == OS_BATCH || (i == n && nb)) {
			for (size_t k = 0; k < nb; k++)
				released += os_fence_process(batch[k], os_signaled_value(rec, batch[k]), NULL);
			nb = 0;
		}
	}
	lf_count(&a->fences_scanned, scanned);
	return released;
}

static void os_bugcheck(struct os_adapter *a, uint64_t handle)
{
	/* Seed: "Passing a handle to a destroyed native fence object causes a bug
	 * check."  Reported and counted; the fence's memory is never touched. */
	if (atomic_load_explicit(&a->bugchecks, memory_order_relaxed) == 0)
		fprintf(stderr, "fencebench: bug check: interrupt payload names fence handle %#llx, which was destroyed\n",
			(unsigned long long)handle);
	lf_count(&a->bugchecks, 1);
}

/* A software record a thread waits on (os_irq_sync): every record queued
 * before it has been handled.  Returns true when rec was one. */
static bool os_handle_sync(struct hw_irq_rec *rec)
{
	if (rec->kind != HW_IRQ_SOFTWARE || !rec->ctx)
		return false;
	lf_event_set(rec->ctx);   /* release: what was handled before is visible to the waiter */
	return true;
}

static void os_handle(struct os_adapter *a, struct hw_irq_rec *rec)
{
	size_t released = 0;
	bool scan_native = false, scan_legacy = false;
	uint64_t propagated = atomic_load_explicit(&a->x_propagated, memory_order_relaxed);

	/* logbuf: optimized payloads read HW queue logs; an overrun sets scan_native */
	released += os_logs_interrupt(a, rec, &scan_native);
	switch (rec->kind) {
	case HW_IRQ_NATIVE_FENCE_SIGNALED:
		if (rec->nfences == 0 && !rec->optimized) {
			scan_native = true;             /* NULL pSignaledNativeFenceArray */
			scan_legacy = rec->eval_legacy;
		}
		break;
	case HW_IRQ_MONITORED_FENCE_SIGNALED:
		scan_legacy = true;                     /* legacy: walk every fence with pending waits */
		break;
	default:
		if (os_handle_sync(rec))
			return;
		break;
	}
	if (rec->kind == HW_IRQ_SOFTWARE || rec->kind == HW_IRQ_NATIVE_FENCE_SIGNALED) {
		for (uint32_t i = 0; i < rec->nfences; i++) {
			struct os_fence *f = os_lookup(a, rec->fences[i]);
			if (!f) {
				if (rec->kind != HW_IRQ_SOFTWARE)
					os_bugcheck(a, rec->fences[i]);
				continue;
			}
			lf_count(&a->fences_scanned, 1);
			released += os_fence_process(f, os_signaled_value(rec, f), NULL);
			if (f->x)
				os_cross_propagate(f);   /* cross-adapter: pass a new value on */
		}
	}
	if (scan_native || scan_legacy)
		released += os_scan(a, scan_native, scan_legacy, rec);
	if (atomic_load_explicit(&a->held_total, memory_order_seq_cst))
		lf_count(&a->held_released, os_queues_feed_held(a));
	lf_count(&a->released, released);
	if (rec->kind == HW_IRQ_SOFTWARE) {
		lf_count(&a->soft, 1);
	} else {
		lf_count(&a->interrupts, 1);
		/* spurious: released no waiter here and passed nothing to another adapter */
		if (!released && atomic_load_explicit(&a->x_propagated, memory_order_relaxed) == propagated)
			lf_count(&a->spurious, 1);
	}
}

__thread bool os_in_irq_thread;

static void *os_irq_main(void *arg)
{
	struct os_adapter *a = arg;
	os_in_irq_thread = true;
	pthread_setname_np(pthread_self(), "fb-os-irq");
	atomic_store(&a->irq_tid, gettid());
	lf_thread_pin_self(a->cfg.irq_cpu);
	os_rcu_enter();
	while (!atomic_load_explicit(&a->stop, memory_order_acquire)) {
		struct hw_irq_rec *rec = hw_irq_pop(a->hw);
		if (rec) {
			lf_htab_read_lock();
			os_handle(a, rec);
			lf_htab_read_unlock();
			hw_irq_free(rec);
			continue;
		}
		/* Parked with no timeout: every wake-up is a real one (the power
		 * proxy).  Outside any read-side section: grace periods go on.
		 * While a held command buffer waits for ring space, a bounded park:
		 * the engine drains without telling the OS. */
		bool retry = atomic_exchange_explicit(&a->feed_retry, false, memory_order_seq_cst);
		if (retry) {
			lf_htab_read_lock();
			lf_count(&a->held_released, os_queues_feed_held(a));
			lf_htab_read_unlock();
			if (atomic_load_explicit(&a->feed_retry, memory_order_seq_cst))
				hw_irq_park(a->hw, OS_FEED_RETRY_NS);   /* returns at once on a record */
			continue;
		}
		hw_irq_park(a->hw, -1);
		lf_count(&a->irq_wakeups, 1);
	}
	/* records left at the stop: release whoever waits on a sync record */
	for (struct hw_irq_rec *rec; (rec = hw_irq_pop(a->hw));) {
		os_handle_sync(rec);
		hw_irq_free(rec);
	}
	/* the last reading of the thread's own clock, for stats after it is gone */
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	uint64_t cpu = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	uint64_t wall = lf_now_ns() - a->irq_t0;
	lf_count(&a->isr_busy_ns, cpu);
	lf_count(&a->irq_idle_ns, wall > cpu ? wall - cpu : 0);
	os_rcu_leave();
	return NULL;
}

int os_adapter_start(struct os_adapter *a)
{
	int rc = hw_adapter_start(a->hw);
	if (rc)
		return rc;
	a->irq_t0 = lf_now_ns();
	rc = pthread_create(&a->irq, NULL, os_irq_main, a);
	if (rc)
		return -rc;
	a->irq_started = true;
	if (pthread_getcpuclockid(a->irq, &a->irq_clock))
		a->irq_clock = (clockid_t)-1;
	while (!atomic_load(&a->irq_tid))
		sched_yield();
	return 0;
}

void os_adapter_destroy(struct os_adapter *a)
{
	if (!a)
		return;
	if (a->irq_started) {
		atomic_store_explicit(&a->stop, true, memory_order_seq_cst);
		hw_irq_kick(a->hw);
		pthread_join(a->irq, NULL);
	}
	/* engines stop before the fences they may signal go away; every live
	 * fence is in the handle table, and destroying it waits for the deferred
	 * frees of destroyed fences, which still use the storage */
	if (a->hw)
		hw_adapter_stop(a->hw);
	if (a->table)
		os_cross_adapter_gone(a);   /* other adapters stop propagating here */
	if (a->handles) {
		os_rcu_enter();
		lf_htab_destroy(a->handles, os_fence_free);
		os_rcu_leave();
	}
	hw_adapter_destroy(a->hw);
	a->hw = NULL;
	for (uint32_t i = 0; i < atomic_load(&a->nqueues); i++) {
		struct os_queue *q = a->queues[i];
		for (struct os_held *h = q->head, *next; h; h = next) {
			next = h->next;
			if (h->wait)
				os_held_wait_put(NULL, h->wait);   /* its fence's set is gone already */
			free(h);
		}
		pthread_mutex_destroy(&q->lock);
		lf_free(q, sizeof(*q), LF_CACHELINE);
	}
	for (struct os_app_counters *c = a->app, *next; c; c = next) {
		next = c->next;
		lf_free(c, sizeof(*c), LF_CACHELINE);
	}
	os_logs_destroy(a->logs);   /* logbuf: engines and interrupt thread are gone */
	free(a->table);
	free(a->free_idx);
	lf_free(a, sizeof(*a), LF_CACHELINE);
}

void os_irq_sync(struct os_adapter *a)
{
	if (!a->irq_started || os_in_irq_thread || atomic_load_explicit(&a->stop, memory_order_acquire))
		return;
	/* The interrupt queue is FIFO (lf_mpsc): once this record is handled,
	 * every record raised before it has been.  One thread consumes it; the
	 * event lives on this stack until it is set (the thread touches the
	 * record, not the event, afterwards). */
	struct lf_event done;
	lf_event_init(&done);
	struct hw_irq_rec *rec = hw_irq_alloc();
	rec->kind = HW_IRQ_SOFTWARE;
	rec->ctx = &done;
	hw_irq_raise(a->hw, rec);
	lf_event_wait(&done, a->cfg.wait_spin_ns, -1);
}

void os_adapter_quiesce(struct os_adapter *a)
{
	os_irq_sync(a);
	os_rcu_enter();
	lf_htab_barrier();
	os_rcu_leave();
}

struct hw_adapter *os_adapter_hw(struct os_adapter *a)
{
	return a->hw;
}

pid_t os_adapter_irq_tid(const struct os_adapter *a)
{
	return atomic_load(&a->irq_tid);
}

bool os_adapter_native(const struct os_adapter *a)
{
	return a->native;
}

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
	o->released = OS_LOAD(a->released);
	o->fences_scanned = OS_LOAD(a->fences_scanned);
	o->bugchecks = OS_LOAD(a->bugchecks);
	o->held_released = OS_LOAD(a->held_released);
	/* Power proxy: the interrupt thread's CPU time (user + kernel, the
	 * scheduler's own accounting) is its busy time; the rest of its life is idle. */
	o->isr_busy_ns = OS_LOAD(a->isr_busy_ns);
	o->irq_idle_ns = OS_LOAD(a->irq_idle_ns);
	struct timespec ts;
	if (a->irq_started && !atomic_load_explicit(&a->stop, memory_order_acquire) &&
	    a->irq_clock != (clockid_t)-1 && clock_gettime(a->irq_clock, &ts) == 0) {
		uint64_t cpu = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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
