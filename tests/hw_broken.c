/* tests/hw_broken.c — the deliberately broken builds of the hardware model
 * (mk/hw-broken.mk): linked into one binary per variant, each must be caught
 * by the check the code that ships passes (test_logbuf_rules.c).
 *
 *   test_hw_broken_log_irq_first    HW_BROKEN_LOG_IRQ_FIRST: the CMP raises
 *                                   the interrupt before the LOG writes
 *   test_hw_broken_log_no_barrier   HW_BROKEN_LOG_NO_BARRIER: FirstFreeEntryIndex
 *                                   stored without its barrier, landing after
 *                                   the interrupt
 */
#include "tests/fb_test.h"
#include "tests/logbuf_seam_util.h"

/* Every interrupt after a logged signal finds its entry unpublished. */
static void broken_log_order_caught_at_the_interrupt(void **state)
{
	struct logseam s = logseam_run(3);
	assert_int_equal(s.interrupts, 3);
	assert_int_equal(s.missing, 3);
}

FB_TEST_MAIN(cmocka_unit_test(broken_log_order_caught_at_the_interrupt))
