/* tests/test_fence_stress.c — the fence protocol under contention, on both paths,
 * and proof that the lost-wake-up detector fails when the protocol is broken.
 *
 * Default run: >= 10^6 signal/wait pairs in all (FB_SOAK=1: ten times more).
 * Fault injection (the seed's two rules, each removed in turn):
 *   HW_FAULT_NO_CMP_BARRIER — the CMP reads MonitoredValue before its
 *     CurrentValue write is visible ("Synchronization within the GPU");
 *   OS_FAULT_NO_RESAMPLE — the OS does not resample CurrentValue after
 *     changing MonitoredValue ("Synchronization between the GPU and CPU").
 * Each must make the same detector report lost wake-ups. */
#include <string.h>

#include "benchmarks/fence_rig.h"
#include "tests/fb_test.h"

static struct rig_stress_result stress(enum rig_fence_path path, uint64_t pairs, enum hw_fault hf,
				      enum os_fault of, uint64_t deadline_ns, uint64_t stop_after_lost)
{
	/* With a fault, the application also dawdles 0..5 us between submit and
	 * wait, so its registration often comes after the CMP's MonitoredValue
	 * read: the order the missing barrier gets wrong. */
	struct rig_stress_params p = {
		.path = path, .threads = 4, .engines = 2, .pairs = pairs, .max_work_ns = 3000,
		.max_app_delay_ns = (hf || of) ? 5000 : 0,
		.seed = 42, .deadline_ns = deadline_ns, .hw_fault = hf, .os_fault = of,
		.stop_after_lost = stop_after_lost,
	};
	struct rig_stress_result r;
	char err[256] = "";
	if (rig_stress_run(&p, &r, err, sizeof(err)))
		fail_msg("stress: %s", err);
	printf("[ STRESS   ] %s: pairs %llu (blocked %llu), interrupts %llu (spurious %llu), "
	       "self-released %llu, lost %llu, %.2f s\n",
	       path == RIG_FENCE_NATIVE ? "native" : "legacy", (unsigned long long)r.pairs,
	       (unsigned long long)r.blocked, (unsigned long long)r.os.interrupts,
	       (unsigned long long)r.os.spurious, (unsigned long long)r.os.self_released,
	       (unsigned long long)r.lost_wakeups, r.elapsed_ns / 1e9);
	return r;
}

static uint64_t pairs_per_path(void)
{
#ifdef FB_SANITIZER
	/* the sanitizer suites check the same code for races and memory errors,
	 * at a tenth to a twentieth of the speed: fewer pairs */
	return fb_soak() ? 125000 : 5000;
#else
	return fb_soak() ? 1250000 : 125000;   /* x 4 threads x 2 paths = 10^6 */
#endif
}

/* Native: 0 lost wake-ups; every interrupt is a signal that had a CPU waiter
 * (interrupts - spurious <= blocked waits), and no more interrupts than signals. */
static void stress_native_no_lost_wakeups(void **state)
{
	struct rig_stress_result r = stress(RIG_FENCE_NATIVE, pairs_per_path(), HW_FAULT_NONE, OS_FAULT_NONE, 1000000000ull, 0);
	assert_int_equal(r.pairs, 4 * pairs_per_path());
	assert_int_equal(r.lost_wakeups, 0);
	assert_int_equal(r.os.interrupts, r.os.gpu_interrupts);
	assert_true(r.os.gpu_interrupts <= r.os.gpu_signals);
	assert_true(r.os.interrupts - r.os.spurious <= r.blocked);
	/* conditional interrupts: signals nobody waited for did not interrupt */
	assert_true(r.os.gpu_interrupts <= r.blocked + r.os.spurious);
}

/* Legacy, side by side: 0 lost wake-ups, and every signal interrupted. */
static void stress_legacy_no_lost_wakeups(void **state)
{
	struct rig_stress_result r = stress(RIG_FENCE_LEGACY, pairs_per_path(), HW_FAULT_NONE, OS_FAULT_NONE, 1000000000ull, 0);
	assert_int_equal(r.pairs, 4 * pairs_per_path());
	assert_int_equal(r.lost_wakeups, 0);
	assert_int_equal(r.os.gpu_interrupts, r.os.gpu_signals);
	assert_int_equal(r.os.interrupts, r.os.gpu_interrupts);
}

/* The detector can fail: without the CMP barrier, lost wake-ups are reported. */
static void fault_no_cmp_barrier_is_detected(void **state)
{
	struct rig_stress_result r = stress(RIG_FENCE_NATIVE, 20000, HW_FAULT_NO_CMP_BARRIER, OS_FAULT_NONE, 20000000ull, 3);
	assert_true(r.lost_wakeups > 0);
}

/* The detector can fail: without the OS resample, lost wake-ups are reported. */
static void fault_no_os_resample_is_detected(void **state)
{
	struct rig_stress_result r = stress(RIG_FENCE_NATIVE, 20000, HW_FAULT_NONE, OS_FAULT_NO_RESAMPLE, 20000000ull, 3);
	assert_true(r.lost_wakeups > 0);
}

FB_TEST_MAIN(cmocka_unit_test(stress_native_no_lost_wakeups),
	     cmocka_unit_test(stress_legacy_no_lost_wakeups),
	     cmocka_unit_test(fault_no_cmp_barrier_is_detected),
	     cmocka_unit_test(fault_no_os_resample_is_detected))
