/* gpu-model/os/irq.c — the interrupt thread (ISR + DPC).
 *
 * The interrupt thread drains interrupt records, releases satisfied CPU
 * waiters, advances MonitoredValues and resamples, submits CPU-held legacy
 * command buffers, and parks when there is nothing to do.  Its busy time,
 * idle time and wake-ups are the power proxy.  Started and stopped by
 * adapter.c; calls fence.c, cross.c, queue.c and hw/ (the interrupt line).
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

/* ---- the interrupt thread ---- */

static struct os_fence *os_lookup(struct os_adapter *a, uint64_t handle)
{
	return lf_htab_lookup(a->handles, handle);
}

/* The write record rec's signal made to f, if rec names f as the signaled
 * fence (OS_WRITE_NONE: none; f is then released against its current value). */
static struct os_write os_signaled_write(const struct hw_irq_rec *rec, const struct os_fence *f)
{
	if (rec->signaled && rec->signaled == f->hw.handle)
		return (struct os_write){ rec->value, rec->seq };
	return OS_WRITE_NONE;
}

/* Seed context-monitoring-legacy-monitored-fence, "GPU signal": when a
 * command buffer completes the kernel "Goes through the list of fence
 * objects with pending waits that could be signaled for this process".
 * The process is the one of the fence the signal wrote (its packed pages
 * say which: hw_fence.process); a shared fence may be signaled by any
 * process's queue, so it is always looked at; a record naming no live
 * fence (sig NULL) looks at every process's.  Native fences: as asked. */
static bool os_scan_wants(const struct os_adapter *a, const struct os_fence *f, bool native, bool legacy,
			  bool log_fallback, const struct os_fence *sig)
{
	if (f->type == OS_FENCE_NATIVE)
		return native && (!log_fallback || os_logs_fallback_reads(a, atomic_load_explicit(&f->log_dev,
										       memory_order_acquire)));
	return legacy && (!sig || f->hw.shareable || f->hw.process == sig->hw.process);
}

/* Walk the scan table: every fence of the kind asked for that has CPU waiters
 * (the signaled one, if rec names it, against the value written). */
static size_t os_scan(struct os_adapter *a, bool native, bool legacy, bool log_fallback, const struct hw_irq_rec *rec)
{
	size_t released = 0, scanned = 0;
	uint32_t n = atomic_load_explicit(&a->table_hw, memory_order_acquire);
	struct os_fence *batch[OS_BATCH];
	size_t nb = 0;
	/* the interrupt thread is inside its handle-table read section */
	const struct os_fence *sig = legacy && rec && rec->signaled ? os_lookup(a, rec->signaled) : NULL;

	for (uint32_t i = 0; i <= n; i++) {
		struct os_fence *f = i < n ? atomic_load_explicit(&a->table[i], memory_order_acquire) : NULL;
		if (f && os_scan_wants(a, f, native, legacy, log_fallback, sig)) {
			scanned++;
			if (f->x)
				os_cross_propagate(f, os_signaled_write(rec, f));   /* cross-adapter: pass the value on */
			if (os_fence_has_waiters(f))
				batch[nb++] = f;
		}
		/* Batch form (seed: DxgkDdiUpdateMonitoredValues updates many values at
		 * once): release and publish for a batch, one DDI call, then resample
		 * them all (os_fence_process_batch). */
		if (nb == OS_BATCH || (i == n && nb)) {
			struct os_write sw[OS_BATCH];
			for (size_t k = 0; k < nb; k++)
				sw[k] = os_signaled_write(rec, batch[k]);
			released += os_fence_process_batch(batch, sw, nb);
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

/* The timeline trace (os.h): the interrupt as raised, its ISR (t0..t1) and
 * DPC (t1..now) spans. */
static void os_trace_irq(struct os_adapter *a, const struct hw_irq_rec *rec, uint64_t t0, uint64_t t1,
			 size_t released)
{
	uint64_t t2 = lf_now_ns();
	struct os_trace_rec r = {
		.kind = OS_TRACE_IRQ_RAISED, .engine = rec->engine, .fence = rec->signaled, .value = rec->value,
		.t0 = rec->t_raise_ns, .n = rec->kind,
	};
	os_trace_add(a, &r);
	r = (struct os_trace_rec){ .kind = OS_TRACE_ISR, .engine = rec->engine, .tid = gettid(), .t0 = t0, .t1 = t1,
				   .n = rec->kind, .fence = rec->signaled, .value = rec->value };
	os_trace_add(a, &r);
	r = (struct os_trace_rec){ .kind = OS_TRACE_DPC, .engine = rec->engine, .tid = gettid(), .t0 = t1, .t1 = t2,
				   .n = released, .fence = rec->signaled, .value = rec->value };
	os_trace_add(a, &r);
}

static void os_handle(struct os_adapter *a, struct hw_irq_rec *rec)
{
	size_t released = 0;
	bool scan_native = false, scan_legacy = false;
	uint64_t propagated = atomic_load_explicit(&a->x_propagated, memory_order_relaxed);
	bool trace = rec->kind != HW_IRQ_SOFTWARE && os_tracing(a);
	uint64_t t0 = trace ? lf_now_ns() : 0, t1;

	/* Broken on purpose (OS_FAULT_RELEASE_MAX): an interrupt thread slow to
	 * run, so a rewind and a new wait land before a record is handled every
	 * time one is in flight, not by luck */
	if (a->cfg.fault == OS_FAULT_RELEASE_MAX && rec->signaled)
		lf_spin_ns(OS_FAULT_WINDOW_NS);

	/* ISR: the payload; logbuf: optimized payloads read HW queue logs (an
	 * overrun sets scan_native) */
	bool log_fallback = false;
	released += os_logs_interrupt(a, rec, &log_fallback);
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
	case HW_IRQ_SW_SIGNAL_PACKET: {
		/* SignalSynchronizationObjectFromGpuCb's packet reached: the OS
		 * writes the value (the engine could not) and releases its waiters */
		struct os_fence *f = os_lookup(a, rec->signaled);
		if (!f) {
			os_bugcheck(a, rec->signaled);
			break;
		}
		os_fence_signal_cpu(f, rec->value);
		lf_count(&a->sw_signals, 1);
		released++;   /* the signal is the work: never a spurious interrupt */
		break;
	}
	default:
		if (os_handle_sync(rec))
			return;
		break;
	}
	t1 = trace ? lf_now_ns() : 0;
	/* DPC: release what the payload names, scan, feed held buffers */
	if (rec->kind == HW_IRQ_SOFTWARE || rec->kind == HW_IRQ_NATIVE_FENCE_SIGNALED) {
		for (uint32_t i = 0; i < rec->nfences; i++) {
			struct os_fence *f = os_lookup(a, rec->fences[i]);
			if (!f) {
				if (rec->kind != HW_IRQ_SOFTWARE)
					os_bugcheck(a, rec->fences[i]);
				continue;
			}
			lf_count(&a->fences_scanned, 1);
			struct os_write sv = os_signaled_write(rec, f);
			/* a CPU signal's own thread released against its value already */
			released += os_fence_process(f, rec->os_flags & OS_REC_CPU_SIGNAL ? OS_WRITE_NONE : sv, NULL);
			/* cross-adapter: pass the value signaled on (a received one was
			 * announced to every instance by its sender) */
			if (f->x && !(rec->os_flags & OS_REC_RECEIVED))
				os_cross_propagate(f, sv);
		}
	}
	/* a log's overrun alone: its device's fences (os_logs_fallback_reads) */
	bool per_device = log_fallback && !scan_native;
	scan_native |= log_fallback;
	if (scan_native || scan_legacy)
		released += os_scan(a, scan_native, scan_legacy, per_device, rec);
	if (atomic_load_explicit(&a->held_total, memory_order_seq_cst))
		lf_count(&a->held_released, os_queues_feed_held(a));
	lf_count(&a->released, released);
	if (trace)
		os_trace_irq(a, rec, t0, t1, released);
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

void *os_irq_main(void *arg)
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
	/* records left at the stop: release whoever waits on a sync record,
	 * also one raised after this thread saw the stop (os_irq_sync) */
	for (;;) {
		for (struct hw_irq_rec *rec; (rec = hw_irq_pop(a->hw));) {
			os_handle_sync(rec);
			hw_irq_free(rec);
		}
		if (os_test_irq_drain_hook)
			os_test_irq_drain_hook(a);
		if (!atomic_load_explicit(&a->irq_syncs, memory_order_seq_cst))
			break;
		sched_yield();
	}
	/* the last reading of the thread's own clock, for stats after it is gone */
	uint64_t cpu = 0;
	lf_clock_ns(CLOCK_THREAD_CPUTIME_ID, &cpu);   /* the caller's own clock: always readable */
	uint64_t wall = lf_now_ns() - a->irq_t0;
	lf_count(&a->isr_busy_ns, cpu);
	lf_count(&a->irq_idle_ns, wall > cpu ? wall - cpu : 0);
	os_rcu_leave();
	return NULL;
}

void (*os_test_irq_sync_hook)(struct os_adapter *a, int stage);
void (*os_test_irq_drain_hook)(struct os_adapter *a);

void os_irq_sync(struct os_adapter *a)
{
	if (!a->irq_started || os_in_irq_thread)
		return;
	/* Checking the stop, then raising, can lose the record: the thread may
	 * finish its final drain in between and this would wait for ever.  So
	 * announce first, then check (seq_cst, a Dekker pair with the stopper's
	 * store of a->stop and the thread's loads of stop, then irq_syncs):
	 * either this sees the stop and raises nothing, or the thread's final
	 * drain sees this call and drains until it is over.  The stopper's side
	 * is a seq_cst store, not an RMW, and enough: this load of stop reading
	 * false puts this RMW before that store in the single order; the thread
	 * read stop (acquire, from that store) before its load of irq_syncs, so
	 * that load follows the store too, and sees this call. */
	atomic_fetch_add_explicit(&a->irq_syncs, 1, memory_order_seq_cst);
	if (os_test_irq_sync_hook)
		os_test_irq_sync_hook(a, 0);
	if (atomic_load_explicit(&a->stop, memory_order_seq_cst)) {
		atomic_fetch_sub_explicit(&a->irq_syncs, 1, memory_order_seq_cst);
		return;
	}
	if (os_test_irq_sync_hook)
		os_test_irq_sync_hook(a, 1);
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
	atomic_fetch_sub_explicit(&a->irq_syncs, 1, memory_order_seq_cst);
}
