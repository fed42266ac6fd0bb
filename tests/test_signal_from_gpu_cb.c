/* tests/test_signal_from_gpu_cb.c — seed context-monitoring-legacy-monitored-fence:
 * "If a GPU engine isn't capable of writing to a monitored fence using its
 * virtual address, the user-mode driver (UMD) uses the
 * SignalSynchronizationObjectFromGpuCb callback to queue a software signal
 * packet to the GPU context" (os_queue_signal_from_gpu). */
#include <errno.h>

#include "tests/fb_test.h"
#include "tests/fence_test_util.h"

static struct os_adapter *no_va_adapter(enum os_fault fault)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.caps.native_fence = false;
	cfg.native_fence_enabled = false;
	cfg.caps.engines = 2;
	cfg.caps.no_fence_va_engines = 1u << 1;   /* engine 1 cannot write a monitored fence through its VA */
	cfg.fault = fault;
	return fbt_adapter(&cfg);
}

/* The engine that cannot write the fence through its VA is refused a GPU
 * SIGNAL of a monitored fence; an engine that can is not. */
static void engine_not_capable_of_writing_monitored_fence_va_refused_signal(void **state)
{
	struct os_adapter *a = no_va_adapter(OS_FAULT_NONE);
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0, 0, &f), 0);
	struct os_queue *q0 = fbt_queue(a, 0, 64), *q1 = fbt_queue(a, 1, 64);
	struct hw_cmd sig = { .op = HW_CMD_SIGNAL, .fence = os_fence_hw(f), .value = 1 };
	assert_int_equal(os_queue_submit(q1, &sig, 1), -EINVAL);
	assert_int_equal(os_queue_submit_buffer(q1, &sig, 1, false, NULL), -EINVAL);
	assert_int_equal(os_queue_submit(q0, &sig, 1), 0);
	assert_true(fbt_eventually(os_fence_value(f) == 1));
	/* the callback is for monitored fences of this adapter */
	assert_int_equal(os_queue_signal_from_gpu(q1, NULL, 2), -EINVAL);
	fbt_down(a);
}

/* Runs the packet behind a CPU-held wait on g: true when f stayed unsignaled
 * until the GPU context reached the packet (g signaled, the COUNT before it
 * executed), then reached 5 with its blocking waiter released. */
static bool packet_signals_when_context_reaches_it(enum os_fault fault)
{
	struct os_adapter *a = no_va_adapter(fault);
	struct os_fence *f, *g;
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0, 0, &f), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0, 0, &g), 0);
	struct os_queue *q = fbt_queue(a, 1, 64);
	_Atomic uint64_t before = 0, after = 0;
	struct hw_cmd head[2] = {
		{ .op = HW_CMD_COUNT, .stamp = &before },
		{ .op = HW_CMD_WAIT, .fence = os_fence_hw(g), .value = 1 },   /* held on the CPU */
	};
	assert_int_equal(os_queue_submit(q, head, 2), 0);
	assert_int_equal(os_queue_signal_from_gpu(q, f, 5), 0);
	struct hw_cmd tail = { .op = HW_CMD_COUNT, .stamp = &after };
	assert_int_equal(os_queue_submit(q, &tail, 1), 0);
	assert_true(fbt_eventually(atomic_load(&before) == 1));
	fbt_settle();
	bool waited = os_fence_value(f) == 0 && fbt_stats(a).sw_signals == 0 && atomic_load(&after) == 0;
	struct fbt_waiter w = { .f = f, .v = 5, .timeout_ns = 10000000000ll };
	if (waited)
		fbt_waiter_start(a, &w);
	assert_int_equal(os_fence_signal_cpu(g, 1), 0);     /* the context moves on */
	assert_true(fbt_eventually(atomic_load(&after) == 1));
	assert_true(fbt_eventually(os_fence_value(f) == 5));
	if (waited)
		assert_int_equal(fbt_waiter_join(&w), 0);
	struct os_stats s = fbt_settled_stats(a);
	assert_int_equal(s.sw_signal_packets, fault == OS_FAULT_NONE ? 1 : 0);
	assert_int_equal(s.sw_signals, fault == OS_FAULT_NONE ? 1 : 0);
	fbt_down(a);
	return waited;
}

/* "queue a software signal packet to the GPU context": the value is written
 * when the context reaches the packet, behind its earlier work and waits,
 * by the OS on the engine's interrupt, and its waiters are released. */
static void signal_synchronization_object_from_gpu_cb_software_signal_packet(void **state)
{
	assert_true(packet_signals_when_context_reaches_it(OS_FAULT_NONE));
}

/* Broken: the value written when the packet is queued, not when the GPU
 * context reaches it.  The check above catches it. */
static void software_signal_packet_written_at_queue_time_caught(void **state)
{
	assert_false(packet_signals_when_context_reaches_it(OS_FAULT_SW_SIGNAL_AT_QUEUE));
}

FB_TEST_MAIN(cmocka_unit_test(engine_not_capable_of_writing_monitored_fence_va_refused_signal),
	     cmocka_unit_test(signal_synchronization_object_from_gpu_cb_software_signal_packet),
	     cmocka_unit_test(software_signal_packet_written_at_queue_time_caught))
