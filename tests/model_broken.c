/* tests/model_broken.c — the deliberately broken builds of the GPU model
 * (mk/model-broken.mk), one binary per variant, compiled with the variant's
 * define: each must be caught by the check the code that ships passes.
 *
 *   test_broken_log_irq_first   HW_BROKEN_LOG_IRQ_FIRST: the CMP raises the
 *                               interrupt before the LOG writes
 *                               (test_logbuf_rules.c)
 *   test_broken_log_no_barrier  HW_BROKEN_LOG_NO_BARRIER: FirstFreeEntryIndex
 *                               stored without its barrier, landing after the
 *                               interrupt (test_logbuf_rules.c)
 *   test_broken_no_reset_check  RT_BROKEN_NO_RESET_CHECK: the validation layer
 *                               does not look at a list's Reset
 *                               (test_d3d_debug.c)
 *   test_broken_update_unsynchronized  OS_BROKEN_UPDATE_UNSYNCHRONIZED: a CPU
 *                               waiter's DxgkDdiUpdateMonitoredValues without
 *                               the fence's release lock (test_fence_native_core.c)
 */
#include "tests/fb_test.h"

#if defined(HW_BROKEN_LOG_IRQ_FIRST) || defined(HW_BROKEN_LOG_NO_BARRIER)
#include "tests/logbuf_seam_util.h"

/* Every interrupt after a logged signal finds its entry unpublished. */
static void broken_build_caught(void **state)
{
	struct logseam s = logseam_run(3);
	assert_int_equal(s.interrupts, 3);
	assert_int_equal(s.missing, 3);
}
#elif defined(RT_BROKEN_NO_RESET_CHECK)
#include "tests/d3d_resets_util.h"

/* The async example re-records 7 lists in flight: none is counted. */
static void broken_build_caught(void **state)
{
	struct rt_debug_resets r = gated_async_resets(RT_PATH_NATIVE, true, false);
	assert_int_equal(r.in_flight, 0);
	r = gated_async_resets(RT_PATH_NATIVE, true, true);
	assert_int_equal(r.in_flight + r.older_in_flight, 0);
}
#elif defined(OS_BROKEN_UPDATE_UNSYNCHRONIZED)
#include "tests/update_seam_util.h"

/* The interrupt handler takes the fence while the waiter's update is half
 * done (waited for up to 5 s: it comes). */
static void broken_build_caught(void **state)
{
	struct upseam s = upseam_run(5000000000ull);
	assert_true(s.isr_in_during_update);
}
#else
#error "tests/model_broken.c is built by mk/model-broken.mk, with one variant's define"
#endif

FB_TEST_MAIN(cmocka_unit_test(broken_build_caught))
