/* tests/test_fence_native_core.c — the native fence core rules of seed
 * native-gpu-fence that issue 22 found built but unproven, one test per rule,
 * each named after the seed's words and quoting its section title; a
 * protocol rule's test also runs the deliberately broken variant and asserts
 * the failure is seen. */
#include <pthread.h>
#include <string.h>

#include "tests/fb_test.h"
#include "tests/umd_test_util.h"

#define SEC 1000000000ll

/* ---- "Indicating a native progress fence for hardware queues" ---- */

/* D3DDDI_CREATEHWQUEUEFLAGS::NativeProgressFence: a HW queue whose progress
 * fence is native is marked so; the flag with a monitored progress fence is
 * refused, and a user-mode queue must have a native progress fence. */
static void native_progress_fence_for_hardware_queues(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 4, 0);
	/* the runtime's queues, user-mode and kernel-mode: marked native */
	struct rt_queue *um = umt_queue(&t, 0, true), *km = umt_queue(&t, 0, false);
	assert_true(os_hwqueue_native_progress(rt_queue_os(um)));
	assert_true(os_hwqueue_native_progress(rt_queue_os(km)));
	assert_true(os_fence_is_native(os_hwqueue_progress(rt_queue_os(um))));

	struct os_device *d;
	struct os_context *c;
	assert_int_equal(os_device_create(t.u, &d), 0);
	assert_int_equal(os_context_create(d, 0, &c), 0);
	struct os_fence *legacy, *native;
	assert_int_equal(os_fence_create(t.a, OS_FENCE_MONITORED, 0, 0, &legacy), 0);
	assert_int_equal(os_fence_create(t.a, OS_FENCE_NATIVE, 0, 0, &native), 0);
	struct os_hwqueue *q;
	/* NativeProgressFence naming a monitored fence, and a user-mode queue
	 * with a monitored progress fence: refused */
	assert_int_equal(os_hwqueue_create(c, OS_HWQUEUE_NATIVE_PROGRESS_FENCE, 64, legacy, &q), -EINVAL);
	assert_int_equal(os_hwqueue_create(c, OS_HWQUEUE_USER_MODE_SUBMISSION, 64, legacy, &q), -EINVAL);
	/* a kernel-mode queue may keep a monitored progress fence: not marked */
	assert_int_equal(os_hwqueue_create(c, 0, 64, legacy, &q), 0);
	assert_false(os_hwqueue_native_progress(q));
	struct os_hwqueue *nq;
	assert_int_equal(os_hwqueue_create(c, OS_HWQUEUE_NATIVE_PROGRESS_FENCE, 64, native, &nq), 0);
	assert_true(os_hwqueue_native_progress(nq));
	assert_int_equal(os_device_destroy(d), 0);
	os_fence_destroy(legacy);
	os_fence_destroy(native);
	umt_down(&t);
}

/* ---- "Cross-adapter native fences": "user-mode queues can't support
 * monitored fences" ---- */

/* Refused on signal as well as on wait, nothing submitted; the same commands
 * on a kernel-mode queue are accepted (the OS holds the wait on the CPU). */
static void user_mode_queues_cant_support_monitored_fences(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 4, 0);
	struct rt_queue *um = umt_queue(&t, 0, true), *km = umt_queue(&t, 0, false);
	struct os_fence *legacy;
	assert_int_equal(os_fence_create(t.a, OS_FENCE_MONITORED, 0, 0, &legacy), 0);
	struct hw_cmd sig = { .op = HW_CMD_SIGNAL, .fence = os_fence_hw(legacy), .value = 1 };
	struct hw_cmd wait = { .op = HW_CMD_WAIT, .fence = os_fence_hw(legacy), .value = 1 };
	_Atomic uint64_t n = 0;
	struct hw_cmd work_then_sig[2] = { { .op = HW_CMD_COUNT, .stamp = &n }, sig };
	assert_int_equal(rt_queue_submit(um, &sig, 1, NULL), -EINVAL);
	assert_int_equal(rt_queue_submit(um, &wait, 1, NULL), -EINVAL);
	assert_int_equal(rt_queue_submit(um, work_then_sig, 2, NULL), -EINVAL);
	assert_int_equal(rt_queue_submitted(um), 0);
	fbt_settle();
	assert_int_equal(atomic_load(&n), 0);
	assert_int_equal(os_fence_value(legacy), 0);
	assert_true(rt_queue_user_mode(um));
	/* the kernel-mode queue: the wait is held, the signal (a CPU signal here) releases it */
	uint64_t v;
	assert_int_equal(rt_queue_submit(km, &wait, 1, &v), 0);
	assert_int_equal(os_fence_signal_cpu(legacy, 1), 0);
	assert_int_equal(rt_queue_wait(km, v, 5 * SEC), 0);
	assert_int_equal(rt_queue_submit(km, &sig, 1, &v), 0);
	assert_int_equal(rt_queue_wait(km, v, 5 * SEC), 0);
	os_fence_destroy(legacy);
	umt_down(&t);
}

FB_TEST_MAIN(cmocka_unit_test(native_progress_fence_for_hardware_queues),
	     cmocka_unit_test(user_mode_queues_cant_support_monitored_fences))
