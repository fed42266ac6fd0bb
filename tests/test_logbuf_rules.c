/* tests/test_logbuf_rules.c — the native fence log buffer rules of seed
 * native-gpu-fence that test_logbuf.c does not cover, each named in the
 * seed's words, each ordering or protocol rule with the broken variant it
 * catches: "Log buffer mechanism" (the three mappings of a log), "Order of
 * operations on GPU when signaling or unblocking a fence", "Synchronously
 * updating the native fence log" (the barrier after FirstFreeEntryIndex;
 * DxgkDdiUpdateNativeFenceLogs before the OS reads entries), "Native fence
 * log buffer design" (the moments FenceObservedGpuTimestamp and
 * FenceEndGpuTimestamp are taken), "Future hardware requirements" (current
 * hardware: the OS scans the logs of the fence's parent device). */
#include "tests/fb_test.h"
#include "tests/umd_test_util.h"
#include "tests/logbuf_seam_util.h"
#include "gpu-model/hw/hw.h"

static uint64_t qhandle(struct rt_queue *q)
{
	return hw_queue_handle(os_hwqueue_hw(rt_queue_os(q)));
}

static uint64_t log_pos(struct rt_queue *q, enum hw_log_type t)
{
	struct hw_log *log = os_log_hw(umt_queue_log(q), t);
	return hw_log_pos(log, hw_log_header(log));
}

/* "Log buffer mechanism": "These log buffers have mappings for the
 * kernel-mode CPU VA (LogBufferCpuVa), a GPU VA in process address space
 * (LogBufferGpuVa), and the CMP VA (LogBufferSystemProcessGpuVa)": three
 * different addresses of the same storage; the engine's LOG writes through
 * LogBufferGpuVa (without it the entry is a page fault, not written). */
static void log_buffer_mechanism_three_mappings_cpu_gpu_cmp(void **state)
{
	struct umt t = umt_up_logs(1, HW_PAYLOAD_FENCE_ARRAY, HW_FAULT_NONE, OS_FAULT_NONE);
	struct hw_adapter *hw = os_adapter_hw(t.a);
	struct hw_va_space *proc = hw_adapter_process_vas(hw), *sys = hw_adapter_system_vas(hw);
	struct rt_queue *q = umt_queue(&t, 0, true);
	for (int ty = 0; ty < HW_LOG_TYPES; ty++) {
		struct hw_log *log = os_log_hw(umt_queue_log(q), (enum hw_log_type)ty);
		assert_true(log->gpu_va && log->sys_va);
		assert_true(log->gpu_va != log->sys_va);
		assert_true(log->gpu_va != (uint64_t)(uintptr_t)log && log->sys_va != (uint64_t)(uintptr_t)log);
		assert_ptr_equal(hw_va_resolve(proc, log->gpu_va), log);
		assert_ptr_equal(hw_va_resolve(sys, log->sys_va), log);
		assert_ptr_equal(hw_va_resolve(proc, log->gpu_va + log->bytes - 1), (char *)log + log->bytes - 1);
		assert_ptr_equal(hw_va_resolve(sys, log->sys_va + log->bytes - 1), (char *)log + log->bytes - 1);
		assert_null(hw_va_resolve(sys, log->gpu_va));
	}
	/* a recreated log of two pages is mapped whole, in both spaces */
	assert_int_equal(os_hwqueue_recreate_logs(rt_queue_os(q), 2 * HW_LOG_SIZE), 0);
	struct hw_log *sig = os_log_hw(umt_queue_log(q), HW_LOG_SIGNALS);
	assert_ptr_equal(hw_va_resolve(proc, sig->gpu_va + HW_LOG_SIZE + 8), (char *)sig + HW_LOG_SIZE + 8);
	assert_ptr_equal(hw_va_resolve(sys, sig->sys_va + HW_LOG_SIZE + 8), (char *)sig + HW_LOG_SIZE + 8);

	struct rt_fence *f;
	assert_int_equal(rt_fence_create(t.d, 0, &f), 0);
	assert_int_equal(rt_queue_signal(q, f, 1), 0);
	assert_true(fbt_eventually(log_pos(q, HW_LOG_SIGNALS) == 2));   /* f and the progress write */
	assert_int_equal(hw_adapter_va_faults(hw), 0);
	/* the process's mapping gone: the engine cannot write the entry */
	hw_va_unmap(proc, sig->gpu_va, sig->bytes);
	assert_int_equal(rt_queue_signal(q, f, 2), 0);
	assert_int_equal(rt_queue_wait(q, 0, 5000000000ll), 0);
	/* the value is written before the log payload (the order the seed
	 * gives): the CPU wait may return before the engine tried the entry */
	assert_true(fbt_eventually(hw_adapter_va_faults(hw) >= 2));
	assert_int_equal(log_pos(q, HW_LOG_SIGNALS), 2);
	assert_true(rt_fence_completed(f) >= 2);   /* the fence itself was written */
	umt_down(&t);
}

/* "Log buffer mechanism": the logs are mapped "so that they can are
 * read/write to KMD, the GPU engine, and CMP", and the GPU writes "the log
 * payload to the corresponding log buffer GPU VA/CMP VA".  A wait's entry
 * is the CMP's (the GPU scheduler observed the queue unblocked): it goes
 * through LogBufferSystemProcessGpuVa, whatever the process's mapping; with
 * that mapping gone the CMP cannot write it (a page fault, the entry not
 * written).  Signal entries stay the engine's (above). */
static void log_buffer_mechanism_cmp_writes_wait_entries_through_the_cmp_va(void **state)
{
	struct umt t = umt_up_logs(1, HW_PAYLOAD_FENCE_ARRAY, HW_FAULT_NONE, OS_FAULT_NONE);
	struct hw_adapter *hw = os_adapter_hw(t.a);
	struct hw_va_space *proc = hw_adapter_process_vas(hw), *sys = hw_adapter_system_vas(hw);
	struct rt_queue *q = umt_queue(&t, 0, true);
	struct rt_fence *g;
	assert_int_equal(rt_fence_create(t.d, 1, &g), 0);
	struct hw_log *waits = os_log_hw(umt_queue_log(q), HW_LOG_WAITS);
	struct hw_cmd w = rt_cmd_wait(g, 1);
	assert_int_equal(rt_queue_submit(q, &w, 1, NULL), 0);
	assert_int_equal(rt_queue_wait(q, 0, 5000000000ll), 0);
	assert_int_equal(log_pos(q, HW_LOG_WAITS), 1);
	assert_int_equal(hw_adapter_va_faults(hw), 0);
	/* the process's mapping of the wait log gone: the CMP does not use it */
	hw_va_unmap(proc, waits->gpu_va, waits->bytes);
	assert_int_equal(rt_queue_submit(q, &w, 1, NULL), 0);
	assert_int_equal(rt_queue_wait(q, 0, 5000000000ll), 0);
	assert_int_equal(log_pos(q, HW_LOG_WAITS), 2);
	assert_int_equal(hw_adapter_va_faults(hw), 0);
	/* the CMP's mapping gone: the wait entry cannot be written */
	hw_va_unmap(sys, waits->sys_va, waits->bytes);
	assert_int_equal(rt_queue_submit(q, &w, 1, NULL), 0);
	assert_int_equal(rt_queue_wait(q, 0, 5000000000ll), 0);
	assert_int_equal(log_pos(q, HW_LOG_WAITS), 2);
	assert_true(hw_adapter_va_faults(hw) >= 1);
	assert_int_equal(log_pos(q, HW_LOG_SIGNALS), 3);   /* the progress writes: the engine's, logged */
	umt_down(&t);
}

/* One signal with a CPU waiter on a user-mode queue, optimized payload: the
 * waiter is released by the interrupt's read of the queue's log. */
static void released_by_log(void)
{
	struct umt t = umt_up_logs(1, HW_PAYLOAD_OPTIMIZED, HW_FAULT_NONE, OS_FAULT_NONE);
	struct rt_queue *q = umt_queue(&t, 0, true);
	struct rt_fence *f;
	assert_int_equal(rt_fence_create(t.d, 0, &f), 0);
	struct lf_event ev;
	umt_signal_awaited(q, f, 1, &ev);
	assert_int_equal(lf_event_wait(&ev, 0, 5000000000ll), 0);
	struct os_stats s = fbt_settled_stats(t.a);
	assert_int_equal(s.log_released, 1);
	assert_int_equal(s.fences_scanned, 0);   /* the log told */
	umt_down(&t);
}

/* "Order of operations on GPU when signaling or unblocking a fence": "1.
 * Write the new fence value ... 2. Write the log payload ... 3. Raise a
 * native fence signaled interrupt if necessary. This order of operations
 * ensures that Dxgkrnl sees the most recent log entries when the interrupt
 * is raised".  At each interrupt (the seam, logbuf_seam_util.h) the
 * signal's entry is below the published index.  The broken build
 * HW_BROKEN_LOG_IRQ_FIRST (the real engine raising first, mk/model-broken.mk)
 * is caught by the same check: tests/model_broken.c. */
static void order_of_operations_value_then_log_payload_then_interrupt(void **state)
{
	released_by_log();
	struct logseam s = logseam_run(3);
	assert_int_equal(s.interrupts, 3);
	assert_int_equal(s.missing, 0);
	assert_int_equal(s.incomplete, 0);
}

/* "Synchronously updating the native fence log": "Increment
 * FirstFreeEntryIndex; MemoryBarrier => Ensures FirstFreeEntryIndex is fully
 * propagated; Monitored fence interrupt (N)": at each interrupt the index
 * covers the entry.  The broken build HW_BROKEN_LOG_NO_BARRIER (the real
 * publish without its barrier, its store landing after the interrupt) is
 * caught by the same check: tests/model_broken.c.  A weaker barrier whose
 * store still lands in time is not visible here (x86): the log's ordering
 * against the interrupt is the spin model's (tests/model/fence.pml, LOG and
 * NO_LOG_BARRIER). */
static void synchronously_updating_barrier_after_first_free_entry_index(void **state)
{
	struct logseam s = logseam_run(2);
	assert_int_equal(s.interrupts, 2);
	assert_int_equal(s.missing + s.incomplete, 0);
}

/* "Synchronously updating the native fence log": "For every HWQueue log with
 * new entries: Call DxgkDdiUpdateNativeFenceLogs ... Dxgkrnl reads log
 * entries".  The DDI log shows the call for the queue, no entry is read past
 * what it flushed; the broken OS_FAULT_NO_LOG_UPDATE reads without it:
 * caught by the unflushed count. */
static uint64_t read_with_update(enum os_fault fault, uint64_t *calls)
{
	struct umt t = umt_up_logs(1, HW_PAYLOAD_FENCE_ARRAY, HW_FAULT_NONE, fault);
	struct rt_queue *q = umt_queue(&t, 0, true);
	struct rt_fence *f;
	assert_int_equal(rt_fence_create(t.d, 0, &f), 0);
	for (uint64_t v = 1; v <= 5; v++)
		assert_int_equal(rt_queue_signal(q, f, v), 0);
	assert_true(fbt_eventually(log_pos(q, HW_LOG_SIGNALS) == 10));
	os_log_read(umt_queue_log(q), NULL);
	struct os_stats s = fbt_settled_stats(t.a);
	assert_int_equal(s.log_entries, 10);
	*calls = os_adapter_ddi_count(t.a, OS_DDI_UPDATE_NATIVE_FENCE_LOGS);
	assert_int_equal(*calls, s.log_updates);
	struct os_ddi_call log[OS_DDI_LOG_MAX];
	size_t n = os_adapter_ddi_log(t.a, log, OS_DDI_LOG_MAX);
	bool named = false;
	for (size_t i = 0; i < n; i++)
		if (log[i].ddi == OS_DDI_UPDATE_NATIVE_FENCE_LOGS) {
			assert_int_equal(log[i].handle, qhandle(q));
			named |= log[i].value == 10;   /* called with the 10 entries it then read */
		}
	assert_true(named == (*calls > 0));
	umt_down(&t);
	return s.log_unflushed;
}

static void synchronously_updating_update_native_fence_logs_before_reading(void **state)
{
	uint64_t calls;
	assert_int_equal(read_with_update(OS_FAULT_NONE, &calls), 0);
	assert_true(calls >= 1);
	assert_string_equal(os_ddi_name(OS_DDI_UPDATE_NATIVE_FENCE_LOGS), "DxgkDdiUpdateNativeFenceLogs");
	assert_true(read_with_update(OS_FAULT_NO_LOG_UPDATE, &calls) > 0);   /* caught */
	assert_int_equal(calls, 0);
}

/* Seed, "Synchronously updating the native fence log", in the interrupt
 * handler: "For each HWQueue Log: Read FirstFreeEntryIndex and determine if
 * new entries are written.  For every HWQueue log with new entries: Call
 * DxgkDdiUpdateNativeFenceLogs and provide the kernel handles for those
 * HWQueues."  One call for the interrupt, naming every queue with new
 * entries and no other.  Three user-mode queues on one engine whose
 * interrupts name no queue (the OS reads every log of the engine): b
 * signals a fence nobody waits on (entries, no interrupt), c runs nothing,
 * a waits on a signaled fence and signals one a CPU waiter waits on (new
 * entries in both its logs, one interrupt).  That interrupt makes one call,
 * for a and b (its count 2), not one per queue and log type, none for c. */
static void synchronously_updating_one_update_call_per_interrupt_for_every_queue_with_new_entries(void **state)
{
	struct umt t = umt_up_logs(1, HW_PAYLOAD_OPTIMIZED_NULL, HW_FAULT_NONE, OS_FAULT_NONE);
	struct rt_queue *qa = umt_queue(&t, 0, true), *qb = umt_queue(&t, 0, true), *qc = umt_queue(&t, 0, true);
	struct rt_fence *f, *g, *h;
	assert_int_equal(rt_fence_create(t.d, 0, &f), 0);
	assert_int_equal(rt_fence_create(t.d, 1, &g), 0);
	assert_int_equal(rt_fence_create(t.d, 0, &h), 0);
	assert_int_equal(rt_queue_signal(qb, h, 1), 0);
	assert_true(fbt_eventually(log_pos(qb, HW_LOG_SIGNALS) == 2));     /* h and qb's progress */
	struct os_stats s0 = fbt_settled_stats(t.a);
	uint64_t u0 = os_adapter_ddi_count(t.a, OS_DDI_UPDATE_NATIVE_FENCE_LOGS);
	assert_int_equal(log_pos(qc, HW_LOG_SIGNALS) + log_pos(qc, HW_LOG_WAITS), 0);
	struct lf_event ev;
	lf_event_init(&ev);
	assert_int_equal(rt_fence_wait_event(f, 1, &ev), 0);
	struct hw_cmd c[2] = { rt_cmd_wait(g, 1), rt_cmd_signal(f, 1) };
	assert_int_equal(rt_queue_submit(qa, c, 2, NULL), 0);
	assert_int_equal(lf_event_wait(&ev, 0, 5000000000ll), 0);
	struct os_stats s1 = fbt_settled_stats(t.a);
	assert_int_equal(s1.gpu_interrupts - s0.gpu_interrupts, 1);
	assert_int_equal(os_adapter_ddi_count(t.a, OS_DDI_UPDATE_NATIVE_FENCE_LOGS) - u0, 1);
	struct os_ddi_call log[OS_DDI_LOG_MAX];
	size_t n = os_adapter_ddi_log(t.a, log, OS_DDI_LOG_MAX), k = n;
	while (k > 0 && log[k - 1].ddi != OS_DDI_UPDATE_NATIVE_FENCE_LOGS)
		k--;
	assert_true(k > 0);
	assert_int_equal(log[k - 1].count, 2);                            /* a and b, not c */
	assert_true(log[k - 1].handle == qhandle(qa) || log[k - 1].handle == qhandle(qb));
	assert_int_equal(log_pos(qc, HW_LOG_SIGNALS) + log_pos(qc, HW_LOG_WAITS), 0);
	umt_down(&t);
}

/* "Native fence log buffer design": a WAIT_UNBLOCKED entry's
 * FenceObservedGpuTimestamp is the "Time that GPU acknowledged UMD's
 * submitted command and queued the fence wait on HW" and its
 * FenceEndGpuTimestamp when "the GPU scheduler observes HWQueueA is
 * unblocked" (GPUT2); a SIGNAL_EXECUTED entry's FenceEndGpuTimestamp when
 * "the GPU scheduler executes the GPU signal" (GPUT1).  Bracketed by GPU
 * timestamps the test reads around each moment. */
static void log_buffer_design_fence_observed_and_fence_end_moments(void **state)
{
	struct umt t = umt_up_logs(1, HW_PAYLOAD_FENCE_ARRAY, HW_FAULT_NONE, OS_FAULT_NONE);
	struct hw_adapter *hw = os_adapter_hw(t.a);
	struct rt_queue *q = umt_queue(&t, 0, true);
	struct rt_fence *f, *g;
	assert_int_equal(rt_fence_create(t.d, 0, &f), 0);
	assert_int_equal(rt_fence_create(t.d, 0, &g), 0);
	struct hw_engine_stats st;
	hw_engine_stats(hw, 0, &st);
	uint64_t blocked0 = st.waits_blocked;
	uint64_t t_sub = hw_gpu_timestamp(hw);
	struct hw_cmd c[2] = { rt_cmd_wait(f, 1), rt_cmd_signal(g, 1) };
	assert_int_equal(rt_queue_submit(q, c, 2, NULL), 0);
	assert_true(fbt_eventually((hw_engine_stats(hw, 0, &st), st.waits_blocked > blocked0)));
	uint64_t t_blocked = hw_gpu_timestamp(hw);
	uint64_t t_rel = hw_gpu_timestamp(hw);
	assert_int_equal(rt_fence_signal(f, 1), 0);
	assert_true(fbt_eventually(rt_fence_completed(g) >= 1));
	uint64_t t_seen = hw_gpu_timestamp(hw);
	assert_true(fbt_eventually(log_pos(q, HW_LOG_WAITS) >= 1 && log_pos(q, HW_LOG_SIGNALS) >= 1));
	const struct hw_log_entry *w = &os_log_hw(umt_queue_log(q), HW_LOG_WAITS)->entries[0];
	const struct hw_log_entry *s = &os_log_hw(umt_queue_log(q), HW_LOG_SIGNALS)->entries[0];
	assert_int_equal(atomic_load(&w->fence), os_fence_handle(rt_fence_os(f)));
	assert_int_equal(atomic_load(&s->fence), os_fence_handle(rt_fence_os(g)));
	uint64_t observed = atomic_load(&w->observed_ts), wend = atomic_load(&w->end_ts);
	uint64_t send = atomic_load(&s->end_ts);
	/* queued on the GPU after submission, before the test saw it blocked */
	assert_true(observed >= t_sub && observed <= t_blocked);
	/* unblocked after the value arrived, before the signal that followed was seen */
	assert_true(wend >= t_rel && wend <= t_seen);
	/* the signal executed after the unblock, before its value was seen */
	assert_true(send >= wend && send <= t_seen);
	assert_int_equal(atomic_load(&s->observed_ts), 0);   /* signals carry no observed time */
	umt_down(&t);
}

/* "Future hardware requirements": on current hardware (the interrupt names
 * the fence), "for the parent device of this fence, the OS scans the log
 * buffers of all its HWQueues. The OS then reads the last written log buffer
 * entries to determine which HWQueue did the signal".  Device 1 has queue A
 * (engine 0) and B (engine 1), device 2 queue C (engine 1); B signals a
 * device-1 fence with a waiter.  The OS reads A's and B's logs, not C's, and
 * finds B.  The broken OS_FAULT_LOG_SCAN_ENGINE reads engine 1's (B, C):
 * caught. */
struct scan_result {
	uint64_t unread_a, unread_c, signaler, b;
};

static struct scan_result parent_device_scan(enum os_fault fault)
{
	struct umt t = umt_up_logs(2, HW_PAYLOAD_FENCE_ARRAY, HW_FAULT_NONE, fault);
	struct rt_device *d2;
	assert_int_equal(rt_device_create(t.u, &d2), 0);
	struct rt_queue *qa = umt_queue(&t, 0, true), *qb = umt_queue(&t, 1, true), *qc;
	struct rt_queue_desc desc = { .engine = 1, .user_mode = true };
	assert_int_equal(rt_queue_create(d2, &desc, &qc), 0);
	struct rt_fence *f, *g, *h;
	assert_int_equal(rt_fence_create(t.d, 0, &f), 0);
	assert_int_equal(rt_fence_create(d2, 0, &g), 0);
	assert_int_equal(rt_fence_create(t.d, 0, &h), 0);
	/* no waiters: no interrupt, the entries stay unread */
	assert_int_equal(rt_queue_signal(qa, h, 1), 0);
	assert_int_equal(rt_queue_signal(qc, g, 1), 0);
	assert_true(fbt_eventually(log_pos(qa, HW_LOG_SIGNALS) == 2 && log_pos(qc, HW_LOG_SIGNALS) == 2));
	assert_int_equal(os_log_unread(umt_queue_log(qa), HW_LOG_SIGNALS), 2);
	struct lf_event ev;
	umt_signal_awaited(qb, f, 1, &ev);
	assert_int_equal(lf_event_wait(&ev, 0, 5000000000ll), 0);
	struct os_stats s = fbt_settled_stats(t.a);
	assert_true(s.gpu_interrupts >= 1);
	struct scan_result r = {
		.unread_a = os_log_unread(umt_queue_log(qa), HW_LOG_SIGNALS),
		.unread_c = os_log_unread(umt_queue_log(qc), HW_LOG_SIGNALS),
		.signaler = os_logs_last_signaler(t.a), .b = qhandle(qb),
	};
	if (fault == OS_FAULT_NONE)
		assert_true(s.log_signalers >= 1);
	else
		assert_int_equal(s.log_signalers, 0);
	assert_int_equal(rt_device_destroy(d2), 0);
	umt_down(&t);
	return r;
}

static void future_hardware_current_scans_parent_device_queue_logs(void **state)
{
	struct scan_result r = parent_device_scan(OS_FAULT_NONE);
	assert_int_equal(r.unread_a, 0);    /* the parent device's other queue: read */
	assert_int_equal(r.unread_c, 2);    /* another device's queue on the same engine: not read */
	assert_int_equal(r.signaler, r.b);  /* the HW queue that did the signal */
	r = parent_device_scan(OS_FAULT_LOG_SCAN_ENGINE);
	assert_int_equal(r.unread_a, 2);    /* caught: the device's queue on another engine unread */
	assert_int_equal(r.unread_c, 0);
	assert_int_equal(r.signaler, 0);
}

FB_TEST_MAIN(cmocka_unit_test(log_buffer_mechanism_three_mappings_cpu_gpu_cmp),
	     cmocka_unit_test(order_of_operations_value_then_log_payload_then_interrupt),
	     cmocka_unit_test(synchronously_updating_barrier_after_first_free_entry_index),
	     cmocka_unit_test(synchronously_updating_update_native_fence_logs_before_reading),
	     cmocka_unit_test(log_buffer_mechanism_cmp_writes_wait_entries_through_the_cmp_va),
	     cmocka_unit_test(synchronously_updating_one_update_call_per_interrupt_for_every_queue_with_new_entries),
	     cmocka_unit_test(log_buffer_design_fence_observed_and_fence_end_moments),
	     cmocka_unit_test(future_hardware_current_scans_parent_device_queue_logs))
