/* gpu-model/hw/engine.c — GPU engines running run lists of HW queues, and the CMP.
 *
 * One thread per engine, pinned.  Each pass walks the run list round-robin:
 * a queue blocked on a native WAIT is skipped until its fence's CurrentValue
 * reaches the value (seed native-gpu-fence, "GPU wait on a monitored fence
 * value ... without requiring a CPU roundtrip"); a runnable queue executes up
 * to HW_BUDGET commands.  An engine with nothing runnable polls for
 * caps.idle_spin_ns, then parks on its wake word (F1); a doorbell (submit) or a
 * fence signal that may unblock one of its queues wakes it.
 *
 * User-mode queues (doorbell.h) run only up to the write pointer the engine
 * read when a doorbell ring or a kick told it to look; while any of its
 * doorbells is connected the engine cannot park (a ring is a memory write),
 * so idle past f1_timeout_ns it raises an engine-state-change interrupt and
 * polls on until the OS has disconnected them.  Queues off the run list
 * (context suspended) are skipped; the running-queue hand-shake lets the KMD
 * take a queue off at a command boundary.
 *
 * Idle polling.  A real engine polls its doorbells (and re-evaluates its
 * waits) in silicon, at no cost to the host CPUs; the model's engine polls on
 * a host CPU that the application and OS threads being measured share.  So
 * an idle engine that must go on polling (doorbells connected: it cannot
 * park) polls at a low time-shared weight and yields: once its idle stretch
 * is longer than idle_spin_ns its thread drops to nice HW_IDLE_NICE (10: CFS
 * weight 110 against 1024 for a nice-0 thread) and yields every
 * HW_IDLE_CLOCK_PASSES passes, so a runnable CPU-side thread, or another
 * polling engine, gets the CPU within microseconds; the first WORK it runs
 * puts it back at its own nice value (GPU work runs at normal weight;
 * instant commands such as STAMP or SIGNAL run at once, with no syscall
 * between a ring and them), and so does parking in F1 (a wake-up from F1, a
 * doorbell rung or a signal that matters, runs it at once).  What was tried
 * first: SCHED_IDLE starves a polling engine behind any busy process (with
 * three busy loops beside the suite, user-mode rings went unseen for
 * seconds); nice 19 (weight 15) runs once every ~50 ms against two busy
 * threads, too rarely for workloads of many engine hops under load (their
 * 2 s wait bounds were hit at load 13-15); nice 10 runs about seven times
 * as often, and the yields, not the weight, are what hand the CPU to the
 * CPU side at once.  Submission stays a memory write: the application
 * makes no syscall and the OS does no work for it; the two nice changes
 * are the engine thread's own, once per idle stretch.  Lowered only where
 * the thread may return (Linux needs CAP_SYS_NICE or an RLIMIT_NICE that
 * covers its nice value), else it polls at its own weight and counts
 * lower_failed.  caps.idle_poll_normal keeps it at its own weight.
 *
 * Queue creation, submission and kicks are in queue.c, the interrupt lines
 * in irq.c; this file calls doorbell.c (polling) and irq.c (raising).
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpu-model/hw/hw_internal.h"
#include "lockfree/alloc.h"
#include "lockfree/arch.h"
#include "lockfree/asym.h"
#include "lockfree/die.h"
#include "lockfree/thread.h"

#define HW_BUDGET 32                      /* commands per queue per pass */
#define HW_PARK_TIMEOUT_NS 100000000      /* re-check the stop flag at least every 100 ms */
/* The NO_CMP_BARRIER fault holds the CurrentValue write this long after the
 * MonitoredValue read: a store buffer that drains late.  Far longer than real
 * hardware's, so that a waiter registering meanwhile is caught every time and
 * the stress detector's failure does not depend on luck or machine load. */
#define HW_FAULT_WINDOW_NS 50000
#define HW_IDLE_CLOCK_PASSES 8            /* an idle engine reads the clock every 8 passes, not every one */
#define HW_WATCH_LOADS 64                 /* doorbell register loads between full passes of an idle engine */

/* ---- the CMP ---- */

/* CurrentValue > MonitoredValue, in the width the hardware compares. */
static bool hw_cv_above_mv(const struct hw_adapter *a, uint64_t cv, uint64_t mv)
{
	if (mv == UINT64_MAX)
		return false;              /* no CPU waiter */
	if (a->caps.no_64bit_atomics)
		return (int32_t)((uint32_t)cv - (uint32_t)mv) > 0;
	return cv > mv;
}

/* logbuf: with the OptimizedNativeFenceSignaledInterrupt cap, a queue that
 * logs its signals is named by its kernel handle (or a NULL handle); others
 * fall back to the fence array. */
static void hw_raise_optimized(const struct hw_adapter *a, const struct hw_queue *q, const struct hw_fence *f,
			       struct hw_irq_rec *rec)
{
	if (a->caps.payload != HW_PAYLOAD_OPTIMIZED && a->caps.payload != HW_PAYLOAD_OPTIMIZED_NULL)
		return;
	if (!q || !atomic_load_explicit(&q->log[HW_LOG_SIGNALS], memory_order_relaxed)) {
		rec->fences[0] = f->handle;
		rec->nfences = 1;
		return;
	}
	rec->optimized = true;
	if (a->caps.payload == HW_PAYLOAD_OPTIMIZED) {
		rec->hwqueues[0] = hw_queue_handle(q);
		rec->nqueues = 1;
	}
}

static void hw_raise(struct hw_adapter *a, struct hw_engine *e, const struct hw_queue *q,
		     struct hw_fence *f, uint64_t v, uint64_t seq, enum hw_irq_kind kind)
{
	struct hw_irq_rec *rec = hw_irq_alloc();
	rec->kind = kind;
	rec->engine = e ? e->index : UINT32_MAX;
	rec->signaled = f->handle;
	rec->value = v;
	rec->seq = seq;
	if (kind == HW_IRQ_NATIVE_FENCE_SIGNALED) {
		/* Seed, "Native fence signaled interrupt": the exact subset with CPU
		 * waiters, or a NULL array (the OS scans), optionally with
		 * EvaluateLegacyMonitoredFences. */
		if (a->caps.payload == HW_PAYLOAD_FENCE_ARRAY) {
			rec->fences[0] = f->handle;
			rec->nfences = 1;
		}
		rec->eval_legacy = a->caps.payload == HW_PAYLOAD_NULL_EVAL_LEGACY &&
				   a->caps.fault != HW_FAULT_NO_EVAL_LEGACY;
		hw_raise_optimized(a, q, f, rec);   /* logbuf */
	} else {
		rec->fences[0] = f->handle;
		rec->nfences = 1;
	}
	if (e) {
		lf_count(&e->interrupts, 1);
		hw_timing_spend(e, a->caps.timing.irq_ns);   /* timing.c: interrupt raise latency */
	}
	if (q && kind == HW_IRQ_NATIVE_FENCE_SIGNALED && hw_log_irq_test_hook)
		hw_log_irq_test_hook(atomic_load_explicit(&q->log[HW_LOG_SIGNALS], memory_order_acquire),
				     f->handle, v);   /* the seam: what the OS will read now */
	hw_irq_raise(a, rec);
}

void (*hw_log_irq_test_hook)(const struct hw_log *log, uint64_t fence, uint64_t value);

/* Engines with queues blocked on a WAIT re-evaluate their run lists. */
static void hw_notify_waiters(struct hw_adapter *a, const struct hw_engine *self)
{
	/* seq_cst RMW: the CurrentValue write above is ordered before the loads of
	 * waiting_queues below; pairs with the engine's waiting_queues increment
	 * (hw_queue_run) + lf_wake_prepare + CurrentValue re-check
	 * (hw_engine_has_work) before it parks in hw_engine_park. */
	atomic_fetch_add_explicit(&a->signal_epoch, 1, memory_order_seq_cst);
	for (unsigned i = 0; i < a->caps.engines; i++) {
		struct hw_engine *e = &a->engines[i];
		if (e != self && atomic_load_explicit(&e->waiting_queues, memory_order_seq_cst))
			lf_wake_notify(&e->wake);
	}
}

void hw_cmp_cpu_signal_notify(struct hw_adapter *a)
{
	hw_notify_waiters(a, NULL);
}

/* Broken on purpose (HW_FAULT_CMP_WRITES_MV): a CMP that "acknowledges" its
 * interrupt by writing MonitoredValue.  It goes through the GPU's mapping of
 * MV, which is read-only (seed, "MonitoredValue ... GPU (readable using GPU
 * VA, no write access)"): refused and counted, MV untouched. */
static void hw_cmp_write_mv_broken(struct hw_adapter *a, const struct hw_fence *f)
{
	struct hw_fence_map m;
	if (!hw_fence_map(a, f, HW_AGENT_GPU, HW_VALUE_MV, &m))
		hw_fence_map_write(&m, UINT64_MAX);
}

/* The interrupt a monitored (legacy) fence signal raises.  Seed, "Native
 * fence signaled interrupt": "On hardware that can't distinguish between
 * legacy DXGK_INTERRUPT_MONITORED_FENCE_SIGNALED and
 * DXGK_INTERRUPT_NATIVE_FENCE_SIGNALED, the KMD can always raise only the
 * introduced DXGK_INTERRUPT_NATIVE_FENCE_SIGNALED interrupt with
 * pSignaledNativeFenceArray = NULL and EvaluateLegacyMonitoredFences = 1":
 * the HW_PAYLOAD_NULL_EVAL_LEGACY adapter (hw_raise fills the payload). */
static enum hw_irq_kind hw_monitored_irq_kind(const struct hw_adapter *a)
{
	return a->caps.payload == HW_PAYLOAD_NULL_EVAL_LEGACY ? HW_IRQ_NATIVE_FENCE_SIGNALED
							      : HW_IRQ_MONITORED_FENCE_SIGNALED;
}

/*
 * SIGNAL: write CurrentValue, then decide the interrupt.
 *
 * Native (seed, "Synchronization within the GPU between the engine and CMP"):
 * the CurrentValue write must be visible before MonitoredValue is read, or a
 * CPU waiter that lowered MonitoredValue and then resampled an old
 * CurrentValue would never be interrupted.  The exchange is a seq_cst RMW (a
 * full barrier TSan understands); it pairs with the last seq_cst RMW of the
 * OS's lf_waitset_add (the CAS that lowers MonitoredValue, or, when MV was low
 * enough already, the RMW on the set's `adds` word) followed by its
 * CurrentValue resample, and with a release's publication followed by its
 * resample.  A release may raise MV for a moment above a waiter added during
 * it (lockfree/waitset.h, "The raise window"); a signal the CMP judges against
 * that raise is caught by the release's resample after it publishes the
 * waiter.  Legacy (monitored fence): always raise.
 */
uint64_t hw_engine_signal(struct hw_adapter *a, struct hw_engine *e, struct hw_fence *f, uint64_t v)
{
	uint64_t wv = a->caps.no_64bit_atomics ? (uint32_t)v : v, seq;
	/* va.c: the engine writes through the process's GPU VA; the CMP reads
	 * through its own view (the system process's VAs with MapToGpuSystemProcess) */
	_Atomic uint64_t *ecv = hw_engine_cv(a, f), *cv_at, *mv_at;

	if (e)
		lf_count(&e->signals, 1);
	if (!ecv)
		return 0;                  /* a GPU page fault: nothing written */
	if (!f->native) {
		seq = hw_fence_write_at(f, ecv, wv, true);
		hw_raise(a, e, NULL, f, v, seq, hw_monitored_irq_kind(a));
		hw_notify_waiters(a, e);
		return seq;
	}
	bool seen = hw_cmp_view(a, f, &cv_at, &mv_at);
	uint64_t mv = UINT64_MAX;
	if (a->caps.fault == HW_FAULT_NO_CMP_BARRIER) {
		/* Broken on purpose: MonitoredValue is read while the CurrentValue
		 * write still sits in a store buffer (modeled by the delay). */
		if (seen)
			mv = atomic_load_explicit(mv_at, memory_order_relaxed);
		lf_spin_ns(HW_FAULT_WINDOW_NS);
		seq = hw_fence_write_at(f, ecv, wv, false);
	} else {
		seq = hw_fence_write_at(f, ecv, wv, true);   /* a seq_cst exchange */
		if (seen)
			mv = atomic_load_explicit(mv_at, memory_order_seq_cst);
	}
	/* The value this signal wrote counts as well as CurrentValue read back:
	 * a CPU rewind landing between the write and the read must not take
	 * the interrupt for a waiter the written value satisfied (seed
	 * multi-engine-synchronization: "the wait will be satisfied regardless
	 * of which value remains afterwards").  An extra interrupt is allowed.
	 * A CMP that cannot address the fence (a page fault) raises nothing. */
	uint64_t cv = seen ? atomic_load_explicit(cv_at, memory_order_relaxed) : 0;
	if (seen && (hw_cv_above_mv(a, cv, mv) || hw_cv_above_mv(a, wv, mv))) {
		hw_raise(a, e, NULL, f, v, seq, HW_IRQ_NATIVE_FENCE_SIGNALED);
		if (a->caps.fault == HW_FAULT_CMP_WRITES_MV)
			hw_cmp_write_mv_broken(a, f);
	}
	hw_notify_waiters(a, e);
	return seq;
}

/* Idle polling (see the top of this file): the engine thread's nice value,
 * HW_IDLE_NICE while it polls with nothing to run, its own otherwise.  The
 * engine thread only. */
#define HW_IDLE_NICE 10

static void hw_engine_set_idle_prio(struct hw_engine *e, bool idle)
{
	if (e->idle_prio == idle)
		return;
	/* Counted before the setpriority that lowers: once lowered, the engine
	 * runs at nice 10 and may wait long for a CPU on a loaded machine, so a
	 * reader that sees the nice value must already see the count. */
	if (idle)
		lf_count(&e->lowered, 1);
	/* PRIO_PROCESS with a thread id: Linux keeps a nice value per thread */
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), idle ? HW_IDLE_NICE : e->base_nice)) {
		lf_count(&e->lower_failed, 1);
		return;
	}
	e->idle_prio = idle;
}

/* May this thread raise its nice value and lower it back to `nice`?  Linux
 * lets a thread lower its nice value only with CAP_SYS_NICE or an
 * RLIMIT_NICE that covers it; without either the engine would be stuck at
 * HW_IDLE_NICE, so it polls at its own weight instead (lower_failed counts it). */
static bool hw_engine_can_return(int nice)
{
	FILE *f = fopen("/proc/self/status", "r");
	unsigned long long cap = 0;
	char line[256];
	bool nice_cap = false;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &cap) == 1)
			nice_cap = cap >> 23 & 1;   /* CAP_SYS_NICE */
	if (f)
		fclose(f);
	if (nice_cap)
		return true;
	struct rlimit rl;
	return !getrlimit(RLIMIT_NICE, &rl) && (rlim_t)(20 - nice) <= rl.rlim_cur;
}

/* Between idle passes (every HW_IDLE_CLOCK_PASSES): a lowered engine
 * yields, so engines polling at the same weight take turns in microseconds,
 * not in scheduler slices (three pollers on one CPU would otherwise hold a
 * ring unseen for a slice each); with nothing else runnable the yield
 * returns at once. */
static inline void hw_engine_idle_pause(struct hw_engine *e)
{
	if (e->idle_prio)
		sched_yield();
	else
		lf_cpu_relax();
}

/* GPU work to run: at the engine's own weight. */
static inline void hw_engine_working(struct hw_engine *e)
{
	if (e->idle_prio)
		hw_engine_set_idle_prio(e, false);
}

/* ---- logbuf: the seed's write order on a queue that logs its signals ----
 * "Signal Fence(N): write N as a new current value; Write LOG entry including
 * the GPU timestamp; Increment FirstFreeEntryIndex; MemoryBarrier; Monitored
 * fence interrupt (N)": the SIGNAL writes CurrentValue and leaves the CMP's
 * decision pending; the LOG that follows writes the entry, then decides. */
static bool hw_queue_logs_signals(const struct hw_queue *q, const struct hw_fence *f)
{
	return f->native && atomic_load_explicit(&q->log[HW_LOG_SIGNALS], memory_order_relaxed);
}

static uint64_t hw_signal_write(struct hw_engine *e, struct hw_queue *q, struct hw_fence *f, uint64_t v)
{
	lf_count(&e->signals, 1);
	_Atomic uint64_t *cv = hw_engine_cv(e->a, f);   /* va.c: the process's GPU VA */
	if (!cv)
		return 0;                                  /* a GPU page fault: nothing written */
	/* a seq_cst exchange inside: the CurrentValue write before the CMP's
	 * MonitoredValue load in hw_cmp_decide (seed, "Synchronization within the GPU") */
	uint64_t seq = hw_fence_write_at(f, cv, v, true);
	q->cmp_fence = f;
	q->cmp_value = v;
	q->cmp_seq = seq;
	return seq;
}

/* The CMP's pending decision for q's last signal, if any.  `logged`: its LOG
 * ran, so an optimized payload may name q; else the payload names the fence. */
static void hw_cmp_decide(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q, bool logged)
{
	struct hw_fence *f = q->cmp_fence;
	if (!f)
		return;
	q->cmp_fence = NULL;
	_Atomic uint64_t *cv_at, *mv_at;
	if (!hw_cmp_view(a, f, &cv_at, &mv_at)) {
		hw_notify_waiters(a, e);   /* va.c: the CMP cannot address the fence: no interrupt */
		return;
	}
	/* seq_cst: after the CurrentValue exchange and the log's barrier */
	uint64_t mv = atomic_load_explicit(mv_at, memory_order_seq_cst);
	uint64_t cv = atomic_load_explicit(cv_at, memory_order_relaxed);
	/* as hw_engine_signal: the value signaled counts too (a rewind may have
	 * landed while the LOG ran) */
	if (hw_cv_above_mv(a, cv, mv) || hw_cv_above_mv(a, q->cmp_value, mv))
		hw_raise(a, e, logged ? q : NULL, f, q->cmp_value, q->cmp_seq, HW_IRQ_NATIVE_FENCE_SIGNALED);
	hw_notify_waiters(a, e);
}

/* The seed's order on a LOG after a signal (seed native-gpu-fence, "Order
 * of operations on GPU when signaling or unblocking a fence": "1. Write the
 * new fence value ... 2. Write the log payload ... 3. Raise a native fence
 * signaled interrupt if necessary"; "Synchronously updating the native
 * fence log": "Increment FirstFreeEntryIndex; MemoryBarrier => Ensures
 * FirstFreeEntryIndex is fully propagated; Monitored fence interrupt").
 *
 * Broken on purpose, build-time only (mk/model-broken.mk compiles this file
 * again into a separate test binary; the code that ships has neither):
 *   HW_BROKEN_LOG_IRQ_FIRST   1, 3, 2: the CMP decides (and raises) before
 *                             the LOG writes the payload;
 *   HW_BROKEN_LOG_NO_BARRIER  the index store without its barrier
 *                             (hw_log_publish), landing where that lets it:
 *                             after the CMP's MonitoredValue read and the
 *                             interrupt.
 * hw_log_irq_test_hook, at the interrupt, sees the entry missing. */
static void hw_log_then_decide(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q, const struct hw_cmd *c)
{
#if defined(HW_BROKEN_LOG_IRQ_FIRST)
	hw_cmp_decide(a, e, q, true);
	hw_engine_log(a, q, c, true);
#elif defined(HW_BROKEN_LOG_NO_BARRIER)
	struct hw_log *log = hw_engine_log(a, q, c, false);   /* the entry; the index not yet */
	hw_cmp_decide(a, e, q, true);
	if (log)
		hw_log_publish(log);
#else
	hw_engine_log(a, q, c, true);   /* entry, index, barrier */
	hw_cmp_decide(a, e, q, true);
#endif
}

/* ---- the engine thread ---- */

/* Broken on purpose (HW_FAULT_WAIT_HIGH_WATER): the value a WAIT compares
 * is the highest the queue ever read of its fence.  Seed
 * multi-engine-synchronization: "If a fence is rewound, any new waits ...
 * will be compared against the new lower fence value": this one is not.
 * The engine thread's. */
static uint64_t hw_wait_high_water_broken(struct hw_queue *q, uint64_t cv)
{
	if (q->wait_high_fence != q->wait_fence) {
		q->wait_high_fence = q->wait_fence;
		q->wait_high = 0;
	}
	if (cv > q->wait_high)
		q->wait_high = cv;
	return q->wait_high;
}

static bool hw_wait_satisfied(const struct hw_adapter *a, const struct hw_queue *q)
{
	/* va.c: the WAIT reads CurrentValue through the process's GPU VA (a
	 * page fault leaves the queue waiting) */
	_Atomic uint64_t *cv_at = hw_engine_cv((struct hw_adapter *)a, q->wait_fence);
	if (!cv_at)
		return false;
	/* seq_cst: the re-check after waiting_queues++ / lf_wake_prepare (RMWs),
	 * the second half of the store-buffering pair with a signaler's CV
	 * exchange + waiting_queues load (hw_notify_waiters) */
	uint64_t cv = atomic_load_explicit(cv_at, memory_order_seq_cst);
	if (a->caps.fault == HW_FAULT_WAIT_HIGH_WATER)
		cv = hw_wait_high_water_broken((struct hw_queue *)q, cv);
	if (a->caps.no_64bit_atomics)
		return (int32_t)((uint32_t)cv - (uint32_t)q->wait_value) >= 0;
	return cv >= q->wait_value;
}

/* User-mode queue: a kick (doorbell consumed, disconnect, resume) carries
 * the ring control's write pointer as the kicker read it. */
static void hw_queue_refresh(struct hw_queue *q)
{
	if (!atomic_load_explicit(&q->kick, memory_order_relaxed))
		return;
	/* acquire: pairs with hw_queue_kick_at's release */
	uint64_t w = atomic_exchange_explicit(&q->kick, 0, memory_order_acquire);
	if (w > q->known_wptr)
		q->known_wptr = w;
}

/* A WAIT that cannot be switched out (caps.wait_unpreemptible): the engine
 * stays inside q, looking at the condition, for a reset every 50 us
 * (sleeping: a GPU's stall costs the CPU nothing) until the condition holds.
 * True: q was reset (a TDR); false: the condition holds, or the adapter
 * stops (the wait is then left as a blocked one). */
static bool hw_wait_hold(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q)
{
	struct timespec d = { 0, 50000 };
	while (!hw_wait_satisfied(a, q)) {
		if (hw_reset_check(e, q))
			return true;
		if (atomic_load_explicit(&a->stop, memory_order_relaxed))
			return false;
		nanosleep(&d, NULL);
	}
	return false;
}

/* Anything to fetch: the rest of a command buffer, or a ring entry the engine may see. */
static bool hw_queue_has_cmds(const struct hw_queue *q)
{
	if (q->ib_pos < q->ib_n)
		return true;
	if (q->um)
		return lf_ring_read_index(q->ring) < q->known_wptr;
	return lf_ring_size(q->ring) > 0;
}

/* Fetch the next command: from the command buffer being run, else the ring
 * (a user-mode ring only below the known write pointer); an INDIRECT entry
 * starts its command buffer. */
/* preempt.c: a split packet's end ends a DMA buffer for a preemption-aware
 * engine (a PreemptionAware = 0 one runs the next packet at once, see
 * hw_queue_run) */
static void hw_note_split(const struct hw_adapter *a, struct hw_queue *q, const struct hw_cmd *c)
{
	q->split_open = (c->pad & HW_CMD_SPLIT_END) && a->caps.fault != HW_FAULT_SPLIT_IGNORED;
	if (q->split_open)
		q->mid_buffer = false;
}

static bool hw_queue_fetch(const struct hw_adapter *a, struct hw_queue *q, struct hw_cmd *c)
{
	for (;;) {
		if (q->ib_pos < q->ib_n) {
			*c = q->ib[q->ib_pos++];
			/* preempt.c: the end of an INDIRECT buffer ends a DMA buffer */
			q->mid_buffer = q->ib_pos < q->ib_n && !(c->pad & HW_CMD_END_OF_BUFFER);
			hw_note_split(a, q, c);
			return true;
		}
		if (q->um && lf_ring_read_index(q->ring) >= q->known_wptr)
			return false;
		if (!lf_ring_pop_spsc(q->ring, c))
			return false;
		if (c->op != HW_CMD_INDIRECT) {
			q->mid_buffer = !(c->pad & HW_CMD_END_OF_BUFFER);
			hw_note_split(a, q, c);
			return true;
		}
		q->ib = c->ib;
		q->ib_n = c->arg;
		q->ib_pos = 0;
		lf_count(&q->executed, 1);
	}
}

/* A destroyed queue: drop what is left unexecuted (hw_queue_retire). */
static void hw_queue_discard(struct hw_engine *e, struct hw_queue *q)
{
	struct hw_cmd c;
	uint64_t n = q->ib_n - q->ib_pos;
	q->ib_n = q->ib_pos = 0;
	if (q->waiting) {
		q->waiting = false;
		atomic_fetch_sub_explicit(&e->waiting_queues, 1, memory_order_relaxed);
	}
	uint64_t saved = hw_ctx_drop(q);
	if (q->work_left_ns || saved)
		n++;                       /* a preempted WORK's rest (in q or its context allocation) */
	q->work_left_ns = 0;
	q->ctx_saved = false;
	q->ctx_in_alloc = false;
	q->split_open = false;
	if (atomic_load_explicit(&e->ctx_loaded, memory_order_relaxed) == q)
		atomic_store_explicit(&e->ctx_loaded, NULL, memory_order_release);
	while (lf_ring_pop_spsc(q->ring, &c))
		n++;
	if (n)
		lf_count(&e->discarded, n);
}

static inline void hw_engine_progress_bump(struct hw_engine *e)
{
	/* release, single writer: the watchdog (hw_engine_progress) */
	atomic_store_explicit(&e->progress, atomic_load_explicit(&e->progress, memory_order_relaxed) + 1,
			      memory_order_release);
}

/* A preempted queue runs again: restore its context, finish its WORK.
 * False: preempted again (or reset) inside that WORK. */
static bool hw_queue_restore(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q)
{
	hw_ctx_restore(a, e, q);       /* preempt.c: from its context allocation */
	q->ctx_saved = false;
	atomic_store_explicit(&e->ctx_loaded, q, memory_order_release);
	if (!q->work_left_ns)
		return true;
	uint64_t t0 = hw_tracing(a) ? lf_now_ns() : 0;
	bool done = hw_work_resume(a, e, q);
	if (t0)   /* trace.c: the rest of the WORK, as a slice of it */
		hw_trace_op(a, e, q, HW_TRACE_WORK, NULL, !done, t0, q->work_tag);
	if (!done)
		return false;
	lf_count(&q->executed, 1);     /* the WORK is done now */
	hw_engine_progress_bump(e);
	return true;
}

bool hw_queue_runnable(struct hw_adapter *a, struct hw_queue *q)
{
	if (!hw_queue_on_list(q, memory_order_relaxed) ||
	    atomic_load_explicit(&q->retired, memory_order_relaxed) || q->faulted ||
	    atomic_load_explicit(&q->flushed, memory_order_acquire))
		return false;
	if (q->um)
		hw_queue_refresh(q);
	if (q->ctx_saved)
		return true;
	return q->waiting ? hw_wait_satisfied(a, q) : hw_queue_has_cmds(q);
}

void (*hw_test_cmd_hook)(struct hw_queue *q, const struct hw_cmd *c);

/* Execute up to HW_BUDGET commands of q; returns the number executed. */
static unsigned hw_queue_run(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q)
{
	struct hw_cmd c;
	unsigned done = 0;
	uint64_t run_t0 = 0, t0;

	if (q->um)
		hw_queue_refresh(q);
	if (atomic_load_explicit(&q->retired, memory_order_acquire)) {
		hw_queue_discard(e, q);
		/* release: every earlier look at q's wait fence is done */
		atomic_store_explicit(&q->retire_seen, true, memory_order_release);
		return 0;
	}
	if (q->faulted || atomic_load_explicit(&q->flushed, memory_order_acquire))
		return 0;                  /* reset by a TDR (the OS retires it); taken back (the OS resubmits) */
	/* preempt.c: the OS is putting a queue's commands back, paging ones
	 * first: nothing runs meanwhile (acquire: pairs with
	 * hw_queue_flush_done's release) */
	if (atomic_load_explicit(&e->resubmit_hold, memory_order_acquire))
		return 0;
	if (!q->ctx_saved && (q->waiting ? !hw_wait_satisfied(a, q) : !hw_queue_has_cmds(q)))
		return 0;
	/* the preemption hand-shake: announce, then check the run-list bit
	 * (the light side of the pair with hw_queue_preempt_wait) */
	atomic_store_explicit(&e->running, q, memory_order_relaxed);
	lf_asym_light();
	if (!hw_queue_on_list(q, memory_order_relaxed))
		goto out;
	run_t0 = hw_tracing(a) ? lf_now_ns() : 0;
	if (q->waiting) {
		hw_timing_wait_release(e, q);   /* timing.c: the wait's next poll of its fence */
		q->waiting = false;
		if (run_t0)   /* trace.c: the wait blocked from when it was reached until now */
			hw_trace_op(a, e, q, HW_TRACE_WAIT, q->wait_fence, q->wait_value, q->wait_t0_ns, 0);
		if (q->um)
			q->wait_end_ts = hw_gpu_timestamp(a);   /* logbuf: seen unblocked */
		atomic_fetch_sub_explicit(&e->waiting_queues, 1, memory_order_relaxed);
	}
	if (q->ctx_saved && !hw_queue_restore(a, e, q))
		goto out;
	if (!q->fetching) {
		q->fetching = true;
		hw_timing_spend(e, a->caps.timing.doorbell_ns);   /* timing.c: new work until its fetch */
	}
	/* NONE and DMA_BUFFER granularities cannot switch inside a DMA buffer:
	 * the round-robin budget waits for its end; PreemptionAware = 0 runs
	 * the split packets of one command back to back */
	while ((done < HW_BUDGET || (q->mid_buffer && hw_preempt_level(a, q) < 2) ||
		(q->split_open && !a->caps.preemption_aware)) &&
	       hw_queue_on_list(q, memory_order_relaxed) && hw_queue_fetch(a, q, &c)) {
		done++;
		if (c.op != HW_CMD_LOG)
			hw_cmp_decide(a, e, q, false);   /* logbuf: a signal not followed by its LOG */
		if (c.op != HW_CMD_FENCE_ID && c.op != HW_CMD_CONTEXT_SWITCH && c.op != HW_CMD_PAGING)
			hw_ctx_load(a, e, q);            /* preempt.c: lazily, for a command that needs it */
		/* timing.c: the command processor's fetch and decode (a LOG is the
		 * signal's own write sequence; FENCE_ID and CONTEXT_SWITCH are the
		 * OS's markers of a DMA buffer) */
		if (c.op != HW_CMD_LOG && c.op != HW_CMD_FENCE_ID && c.op != HW_CMD_CONTEXT_SWITCH)
			hw_timing_spend(e, a->caps.timing.cmd_ns);
		if (hw_test_cmd_hook)
			hw_test_cmd_hook(q, &c);     /* tests only (hw.h) */
		switch (c.op) {
		case HW_CMD_WORK:
			/* idle polling: GPU work runs at the engine's own weight.
			 * Not before the instant commands (a STAMP, a SIGNAL): the
			 * syscall would sit between a ring and what it started. */
			hw_engine_working(e);
			q->work_tag = HW_CMD_TAG(c.pad);
			t0 = run_t0 ? lf_now_ns() : 0;
			bool whole = hw_work_run(a, e, q, &c);
			if (t0)
				hw_trace_op(a, e, q, HW_TRACE_WORK, NULL, !whole, t0, q->work_tag);
			if (!whole)
				goto out;          /* preempted inside (the rest kept) or reset */
			break;
		case HW_CMD_SIGNAL:
			/* timing.c: the fence signal's flush, then its write's way to memory */
			hw_timing_spend(e, a->caps.timing.signal_ns + hw_timing_visible_ns(a, c.fence));
			t0 = run_t0 ? lf_now_ns() : 0;
			if (q->um)   /* logbuf: the time the signal executed, before its value is seen */
				q->signal_end_ts = hw_gpu_timestamp(a);
			if (q->um && hw_queue_logs_signals(q, c.fence))
				q->signal_seq = hw_signal_write(e, q, c.fence, c.value);   /* logbuf: decided after the LOG */
			else
				q->signal_seq = hw_engine_signal(a, e, c.fence, c.value);
			q->signal_fence = c.fence;
			if (t0)
				hw_trace_op(a, e, q, HW_TRACE_SIGNAL, c.fence, c.value, t0, 0);
			break;
		case HW_CMD_LOG:
			hw_log_then_decide(a, e, q, &c);
			break;
		case HW_CMD_FENCE_ID:
			hw_fence_id_done(q, &c);
			break;
		case HW_CMD_SW_SIGNAL:
			/* a software signal packet: what came before it in the context has
			 * executed; the OS does the write (legacy monitored fence) */
			hw_raise(a, e, NULL, c.fence, c.value, 0, HW_IRQ_SW_SIGNAL_PACKET);
			break;
		case HW_CMD_CONTEXT_SWITCH:
			if (run_t0)
				hw_trace_op(a, e, q, HW_TRACE_CTX_SWITCH, NULL, 0, lf_now_ns(), 0);
			hw_ctx_switch(a, e, q);
			break;
		case HW_CMD_FLIP:
			hw_display_flip(a, c.arg);
			break;
		case HW_CMD_PAGING:
			hw_engine_paging(a, e, &c);   /* segment.c */
			break;
		case HW_CMD_BIND:
			hw_engine_bind(q, &c);        /* segment.c */
			break;
		case HW_CMD_STORE:
			hw_engine_store(a, e, q, &c);
			break;
		case HW_CMD_STAMP: {
			/* the time it executed, seen once the write reached memory (timing.c) */
			uint64_t t = lf_ticks_ordered();
			hw_timing_spend(e, a->caps.timing.visible_sys_ns);
			atomic_store_explicit(c.stamp, t, memory_order_release);
			break;
		}
		case HW_CMD_COUNT:
			hw_timing_spend(e, a->caps.timing.visible_sys_ns);   /* timing.c */
			atomic_fetch_add_explicit(c.stamp, 1, memory_order_acq_rel);
			break;
		case HW_CMD_WAIT:
			q->wait_fence = c.fence;
			q->wait_value = c.value;
			q->wait_observed_ts = hw_gpu_timestamp(a);   /* logbuf: FenceObservedGpuTimestamp */
			q->wait_t0_ns = run_t0 ? lf_now_ns() : 0;
			if (!hw_wait_satisfied(a, q) && a->caps.wait_unpreemptible && hw_wait_hold(a, e, q))
				goto out;          /* reset by a TDR while it held the engine */
			if (!hw_wait_satisfied(a, q)) {
				q->waiting = true;
				q->wait_since_ns = hw_timing_poll_grid(e, c.fence);   /* timing.c: its poll grid */
				/* seq_cst RMW: pairs with hw_notify_waiters (signaler writes CV, then reads this) */
				atomic_fetch_add_explicit(&e->waiting_queues, 1, memory_order_seq_cst);
				lf_count(&e->waits_blocked, 1);
				lf_count(&q->executed, 1);
				goto out;
			}
			if (q->um)
				q->wait_end_ts = q->wait_observed_ts;   /* satisfied when observed */
			if (run_t0)   /* trace.c: a wait that did not block */
				hw_trace_op(a, e, q, HW_TRACE_WAIT, c.fence, c.value, q->wait_t0_ns, 0);
			break;
		default:
			lf_die("bad command op %u (a command buffer inside a command buffer?)", c.op);
		}
		lf_count(&q->executed, 1);
		hw_engine_progress_bump(e);
		if (hw_reset_check(e, q))
			goto out;
		unsigned level = q->mid_buffer ? 2 : 1;
		if (hw_queue_has_cmds(q) && hw_preempt_due(a, e, q, level)) {
			hw_preempt_take(a, e, q, level);
			goto out;
		}
	}
	/* preempt.c: left between two split packets of one command (the
	 * round-robin budget): its context is saved at that boundary, as at a
	 * full buffer's, and restored when the next packet runs */
	if (q->split_open && !q->ctx_saved && hw_queue_has_cmds(q)) {
		hw_ctx_save(a, e, q);
		q->ctx_saved = true;
		atomic_store_explicit(&e->ctx_loaded, NULL, memory_order_release);
	}
out:
	hw_cmp_decide(a, e, q, false);   /* logbuf: no LOG followed the last signal */
	if (run_t0)   /* trace.c: what ran on e */
		hw_trace_op(a, e, q, HW_TRACE_RUN, NULL, done, run_t0, 0);
	if (!q->waiting && !q->ctx_saved && !hw_queue_has_cmds(q))
		q->fetching = false;     /* timing.c: ran dry; new work pays doorbell_ns */
	/* release: what q's commands did is done before the KMD sees q left */
	atomic_store_explicit(&e->running, NULL, memory_order_release);
	/* release, single writer: a barrier that saw this run in progress sees
	 * it done (hw_adapter_engines_barrier) */
	atomic_store_explicit(&e->runs_done, atomic_load_explicit(&e->runs_done, memory_order_relaxed) + 1,
			      memory_order_release);
	lf_count(&e->cmds, done);
	return done;
}

/* Anything runnable?  Called after lf_wake_prepare, so a doorbell or signal
 * that raced the decision to park is seen here or wakes the park. */
static bool hw_engine_has_work(struct hw_adapter *a, struct hw_engine *e)
{
	uint32_t n = atomic_load_explicit(&e->nqueues, memory_order_acquire);
	for (uint32_t i = 0; i < n; i++) {
		struct hw_queue *q = e->queues[i];
		if (q->um && atomic_load_explicit(&q->kick, memory_order_relaxed))
			return true;
		if (atomic_load_explicit(&q->retired, memory_order_relaxed)) {
			if (lf_ring_size(q->ring) > 0)
				return true;   /* left to discard */
			continue;
		}
		if (!hw_queue_on_list(q, memory_order_relaxed) || q->faulted ||
		    atomic_load_explicit(&q->flushed, memory_order_relaxed))
			continue;      /* suspended: resume kicks; faulted: retired next; flushed: the OS resubmits */
		if (q->ctx_saved || (q->waiting ? hw_wait_satisfied(a, q) : hw_queue_has_cmds(q)))
			return true;
	}
	return false;
}

static void hw_pin(const struct hw_adapter *a, unsigned idx)
{
	if (a->caps.ncpus)
		lf_thread_pin_self(a->cpus[idx % a->caps.ncpus]);
}

/* The engine loop's clock: when it last read the time, since when it has been
 * idle (0: busy), idle passes since the last read.  The engine thread's own. */
struct hw_engine_clock {
	uint64_t now, idle_since;
	unsigned idle_passes;
};

/* One pass: the connected doorbells, then the run list round-robin.  Returns
 * the commands run. */
static inline unsigned hw_engine_pass(struct hw_adapter *a, struct hw_engine *e, uint64_t now)
{
	uint32_t n = atomic_load_explicit(&e->nqueues, memory_order_acquire);
	unsigned done = 0;
	/* preempt.c: a queue taken back for resubmission: the pass that runs
	 * next starts after the OS put it back (hw_queue_run checks it too, for
	 * a pass already under way and the idle doorbell watch) */
	if (atomic_load_explicit(&e->resubmit_hold, memory_order_acquire))
		return 0;
	if (atomic_load_explicit(&e->um_connected, memory_order_relaxed))
		hw_engine_poll_doorbells(a, e, now);
	/* preempt.c: with priorities, only the highest runnable ones run (a
	 * retired queue is visited whatever its priority: it discards) */
	bool prios = atomic_load_explicit(&e->prios, memory_order_relaxed);
	int32_t top = prios ? hw_engine_top_priority(a, e) : INT32_MIN;
	for (uint32_t i = 0; i < n; i++) {
		struct hw_queue *q = e->queues[i];
		if (prios && hw_queue_eff_priority(q) < top &&
		    !atomic_load_explicit(&q->retired, memory_order_relaxed))
			continue;
		done += hw_queue_run(a, e, q);
		if (e->preempted_now) {
			/* a queue was left for another: choose again */
			e->preempted_now = false;
			return done + 1;
		}
	}
	return done;
}

/* Busy since the last clock read: at most HW_IDLE_CLOCK_PASSES idle passes
 * too much, and no clock read per idle pass. */
static inline void hw_engine_busy(struct hw_engine *e, struct hw_engine_clock *c)
{
	uint64_t t = lf_now_ns();
	lf_count(&e->busy_ns, t - c->now);
	c->now = t;
	c->idle_since = 0;
	c->idle_passes = 0;
}

/* After a pass that ran nothing: watch the doorbells, spin, or ask the OS for
 * F1.  Returns true to pass again, false when the engine may park. */
static inline bool hw_engine_idle(struct hw_adapter *a, struct hw_engine *e, struct hw_engine_clock *c)
{
	if (c->idle_passes + 1 < HW_IDLE_CLOCK_PASSES &&
	    atomic_load_explicit(&e->um_connected, memory_order_relaxed)) {
		/* idle with doorbells connected: watch them instead of pausing;
		 * what a ring starts counts as busy like any other run */
		struct hw_queue *q;
		if (hw_engine_watch(a, e, HW_WATCH_LOADS, c->now, &q) && q && hw_queue_run(a, e, q)) {
			hw_engine_busy(e, c);
			return true;
		}
		c->idle_passes++;
		return true;
	}
	if (++c->idle_passes < HW_IDLE_CLOCK_PASSES) {
		lf_cpu_relax();
		return true;
	}
	c->idle_passes = 0;
	c->now = lf_now_ns();
	if (!c->idle_since)
		c->idle_since = c->now;
	if (c->now - c->idle_since < a->caps.idle_spin_ns) {
		lf_cpu_relax();
		return true;
	}
	/* Past idle_spin_ns only two kinds of idle polling may last, lowered
	 * (an engine that parks after idle_spin_ns would only be slow to park
	 * if lowered): with doorbells connected, rings are memory writes, so
	 * keep polling, and idle long enough ask the OS for F1 (it disconnects
	 * them); under a timing profile, poll on for a while so no host wake-up
	 * lands in what it models (timing.c, "Where an idle engine waits"). */
	bool doorbells = atomic_load_explicit(&e->um_connected, memory_order_seq_cst);
	if (!doorbells && !hw_timing_polls_idle(a, c->now - c->idle_since))
		return false;
	if (e->may_lower)
		hw_engine_set_idle_prio(e, true);
	if (doorbells) {
		uint64_t timeout = a->caps.f1_timeout_ns ? a->caps.f1_timeout_ns : HW_F1_TIMEOUT_DEFAULT_NS;
		if (c->now - c->idle_since >= timeout && c->now - e->f1_asked_ns >= timeout) {
			e->f1_asked_ns = c->now;
			hw_engine_raise_f1(a, e);
		}
	}
	hw_engine_idle_pause(e);
	return true;
}

/* F1: announce, re-check, park.  Submitters, signalers, kickers and doorbell
 * connects notify after publishing, so nothing published after this prepare
 * is missed. */
static inline void hw_engine_park(struct hw_adapter *a, struct hw_engine *e, struct hw_engine_clock *c)
{
	lf_wake_prepare(&e->wake);
	if (hw_engine_has_work(a, e) || atomic_load_explicit(&e->um_connected, memory_order_seq_cst) ||
	    atomic_load(&a->stop)) {
		lf_wake_cancel(&e->wake);
		return;
	}
	hw_engine_working(e);   /* a wake-up from F1 runs at once */
	lf_count(&e->parks, 1);
	uint64_t idle = c->idle_since ? c->now - c->idle_since : 0, least = atomic_load_explicit(&e->park_idle_min_ns,
												 memory_order_relaxed);
	idle = idle ? idle : 1;
	if (!least || idle < least)   /* the engine thread is the only writer */
		atomic_store_explicit(&e->park_idle_min_ns, idle, memory_order_relaxed);
	atomic_store_explicit(&e->fstate, HW_F1, memory_order_release);
	lf_wake_park(&e->wake, HW_PARK_TIMEOUT_NS);
	atomic_store_explicit(&e->fstate, HW_F0, memory_order_release);
	uint64_t t = lf_now_ns();
	lf_count(&e->f1_ns, t - c->now);
	c->now = t;
	c->idle_since = 0;
}

/* The engine thread: pass; after a pass that ran nothing, idle; once idle
 * long enough with no doorbell connected, park. */
static void *hw_engine_main(void *arg)
{
	struct hw_engine *e = arg;
	struct hw_adapter *a = e->a;
	struct hw_engine_clock c = { 0 };
	char name[16];

	snprintf(name, sizeof(name), "fb-engine%u", e->index);
	pthread_setname_np(pthread_self(), name);
	/* what idle polling returns to; a real-time engine thread (the user's
	 * choice) keeps its weight: only time-shared ones are lowered */
	errno = 0;
	e->base_nice = getpriority(PRIO_PROCESS, (id_t)gettid());
	int policy = sched_getscheduler(0);
	e->may_lower = !errno && (policy == SCHED_OTHER || policy == SCHED_BATCH) && e->base_nice < HW_IDLE_NICE &&
		       !a->caps.idle_poll_normal;
	if (e->may_lower && !hw_engine_can_return(e->base_nice)) {
		e->may_lower = false;
		lf_count(&e->lower_failed, 1);
	}
	atomic_store(&e->tid, gettid());
	hw_pin(a, e->index);

	c.now = lf_now_ns();
	while (!atomic_load_explicit(&a->stop, memory_order_acquire)) {
		if (hw_engine_pass(a, e, c.now)) {
			hw_engine_busy(e, &c);
			continue;
		}
		if (!hw_engine_idle(a, e, &c))
			hw_engine_park(a, e, &c);
	}
	return NULL;
}

void hw_adapter_engines_barrier(struct hw_adapter *a)
{
	for (unsigned i = 0; i < a->caps.engines; i++) {
		struct hw_engine *e = &a->engines[i];
		/* acquire, both: the count first, so that a run in progress when
		 * `running` is read ends with an increment past it */
		uint64_t done = atomic_load_explicit(&e->runs_done, memory_order_acquire);
		if (!atomic_load_explicit(&e->running, memory_order_acquire))
			continue;               /* between runs: the last one's release is seen */
		for (unsigned spin = 0; atomic_load_explicit(&e->runs_done, memory_order_acquire) == done; spin++) {
			if (spin < 64)
				lf_cpu_relax();
			else
				sched_yield();
		}
	}
}

int hw_engines_start(struct hw_adapter *a)
{
	for (unsigned i = 0; i < a->caps.engines; i++) {
		struct hw_engine *e = &a->engines[i];
		int rc = pthread_create(&e->thread, NULL, hw_engine_main, e);
		if (rc)
			return -rc;
		e->started = true;
	}
	/* every engine's tid is known on return (hw_engine_tid): a caller that
	 * registers it for perf counters at once must not read 0, which
	 * perf_event_open takes for "the calling thread" */
	for (unsigned i = 0; i < a->caps.engines; i++)
		while (!atomic_load(&a->engines[i].tid))
			sched_yield();
	return 0;
}

void hw_engines_stop(struct hw_adapter *a)
{
	atomic_store_explicit(&a->stop, true, memory_order_seq_cst);
	for (unsigned i = 0; i < a->caps.engines; i++) {
		struct hw_engine *e = &a->engines[i];
		if (!e->started)
			continue;
		lf_wake_notify(&e->wake);
		pthread_join(e->thread, NULL);
		e->started = false;
	}
}
