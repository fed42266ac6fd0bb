/* tests/logbuf_seam_util.h — the native fence log read at the moment the
 * CMP raises its interrupt (hw_log_irq_test_hook), shared by
 * test_logbuf_rules.c (the code that ships) and model_broken.c (the broken
 * builds of mk/model-broken.mk, which must be caught).
 *
 * Seed native-gpu-fence, "Order of operations on GPU when signaling or
 * unblocking a fence": "1. Write the new fence value ... 2. Write the log
 * payload ... 3. Raise a native fence signaled interrupt if necessary. This
 * order of operations ensures that Dxgkrnl sees the most recent log entries
 * when the interrupt is raised"; "Synchronously updating the native fence
 * log": "Increment FirstFreeEntryIndex; MemoryBarrier => Ensures
 * FirstFreeEntryIndex is fully propagated; Monitored fence interrupt".  The
 * seam reads the log as the OS will (the header, then the entries below it)
 * on the engine thread, between the engine's stores and the interrupt: the
 * check is deterministic, whatever the OS thread does next. */
#ifndef LOGBUF_SEAM_UTIL_H
#define LOGBUF_SEAM_UTIL_H

#include "tests/umd_test_util.h"
#include "gpu-model/hw/hw.h"

struct logseam {
	_Atomic uint64_t fence;        /* the test's fence (its global handle): the others' interrupts
					  (the queue's progress fence, waited on at teardown) are not counted */
	_Atomic uint64_t interrupts;   /* hook calls: interrupts raised after a logged signal of it */
	_Atomic uint64_t missing;      /* ... whose signal had no published entry */
	_Atomic uint64_t incomplete;   /* published entries never written (op NONE) */
};
static struct logseam logseam_seen;

static void logseam_hook(const struct hw_log *log, uint64_t fence, uint64_t value)
{
	if (fence != atomic_load(&logseam_seen.fence))
		return;
	atomic_fetch_add(&logseam_seen.interrupts, 1);
	bool found = false;
	if (log) {
		uint64_t pos = hw_log_pos(log, hw_log_header(log));   /* acquire, as the OS */
		for (uint64_t n = pos > log->capacity ? pos - log->capacity : 0; n < pos; n++) {
			const struct hw_log_entry *en = &log->entries[n % log->capacity];
			uint64_t op = atomic_load_explicit(&en->op, memory_order_relaxed);
			if (op == HW_LOG_OP_NONE)
				atomic_fetch_add(&logseam_seen.incomplete, 1);
			found |= op == HW_LOG_OP_SIGNAL_EXECUTED &&
				 atomic_load_explicit(&en->fence, memory_order_relaxed) == fence &&
				 atomic_load_explicit(&en->value, memory_order_relaxed) == value;
		}
	}
	if (!found)
		atomic_fetch_add(&logseam_seen.missing, 1);
}

/* A user-mode queue, optimized payload, signals 1..n of a fence each with a
 * CPU waiter (so each raises an interrupt), the hook set: what it saw.  The
 * waiters are released on the CPU at the end (a broken build may lose them). */
static inline struct logseam logseam_run(uint64_t n)
{
	memset(&logseam_seen, 0, sizeof(logseam_seen));
	hw_log_irq_test_hook = logseam_hook;   /* no adapter runs yet */
	struct umt t = umt_up_logs(1, HW_PAYLOAD_OPTIMIZED, HW_FAULT_NONE, OS_FAULT_NONE);
	struct rt_queue *q = umt_queue(&t, 0, true);
	struct rt_fence *f;
	assert_int_equal(rt_fence_create(t.d, 0, &f), 0);
	atomic_store(&logseam_seen.fence, os_fence_handle(rt_fence_os(f)));
	struct lf_event ev;
	for (uint64_t v = 1; v <= n; v++) {
		umt_signal_awaited(q, f, v, &ev);
		assert_true(fbt_eventually(atomic_load(&logseam_seen.interrupts) >= v));
		assert_int_equal(rt_fence_signal(f, v), 0);   /* a lost waiter released: v is reached */
		assert_true(lf_event_is_set(&ev));
	}
	umt_down(&t);
	hw_log_irq_test_hook = NULL;          /* its threads joined */
	struct logseam s;
	memcpy(&s, &logseam_seen, sizeof(s));
	return s;
}

#endif
