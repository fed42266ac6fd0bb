/* tests/test_engine_idle.c — the engines' idle rule (gpu-model/hw/engine.c,
 * "The idle rule"; DESIGN.md, "Threads") as the engine counts it: a blocked
 * HW wait is seen by an engine still spinning at its own weight (no yield,
 * no park between the wait blocking and the write it waits for), and the
 * spin is bounded (past it the engine lowers and yields, and a wait released
 * then is counted as such).  Counts, never times: the broken variant
 * (HW_FAULT_WAIT_YIELDS, an engine that lowers and yields as soon as its
 * wait blocks) is caught by its yield count. */
#include <string.h>

#include "tests/fb_test.h"
#include "tests/fence_test_util.h"

#define SEC 1000000000ull

static struct hw_engine_stats engine_stats(struct os_adapter *a)
{
	struct hw_engine_stats s;
	hw_engine_stats(os_adapter_hw(a), 0, &s);
	return s;
}

/* What the engine did idle between its WAIT blocking and its running the
 * COUNT after it. */
struct idle_seen {
	uint64_t yields, parks, lowered_waits;
};

/* One engine; a queue [WAIT f >= 1, COUNT]; the WAIT blocks; then the CPU
 * signals f.  wait_spin_ns: the rule's window after the wait blocked
 * (spin_ns 0: only the wait's spin counts; poll_ns 10 s: it never parks
 * here).  `lowered_first`: signal only once the engine has yielded (it
 * lowered: the window ended, or the broken variant never spun).  Returns
 * what the engine counted meanwhile. */
static struct idle_seen wait_then_signal(enum hw_fault fault, uint64_t wait_spin_ns, bool lowered_first)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.caps.engines = 1;
	cfg.caps.fault = fault;
	cfg.caps.idle.spin_ns = 0;
	cfg.caps.idle.wait_spin_ns = wait_spin_ns;
	cfg.caps.idle.poll_ns = 10 * SEC;
	struct os_adapter *a = fbt_adapter(&cfg);
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f), 0);
	struct os_queue *q = fbt_queue(a, 0, 64);
	_Atomic uint64_t n = 0;
	struct hw_cmd cmds[2] = {
		{ .op = HW_CMD_WAIT, .fence = os_fence_hw(f), .value = 1 },
		{ .op = HW_CMD_COUNT, .stamp = &n },
	};
	struct hw_engine_stats s0 = engine_stats(a);
	assert_int_equal(os_queue_submit(q, cmds, 2), 0);
	assert_true(fbt_eventually(engine_stats(a).waits_blocked > s0.waits_blocked));
	struct hw_engine_stats s1 = engine_stats(a);
	if (lowered_first)
		assert_true(fbt_eventually(engine_stats(a).idle_yields > s1.idle_yields));
	assert_int_equal(atomic_load(&n), 0);
	assert_int_equal(os_fence_signal_cpu(f, 1), 0);
	assert_true(fbt_eventually(atomic_load(&n) == 1));
	struct hw_engine_stats s2 = engine_stats(a);
	os_fence_destroy(f);
	fbt_down(a);
	return (struct idle_seen){ .yields = s2.idle_yields - s1.idle_yields, .parks = s2.parks - s1.parks,
				   .lowered_waits = s2.idle_lowered_waits - s1.idle_lowered_waits };
}

/* A write that lands within the wait's window (10 s: the CPU signals at
 * once, so only a machine stalled for 10 s could end it first) is seen by
 * the engine without a yield or a park in between, and the wait is not one
 * released after lowering. */
static void a_blocked_wait_is_seen_without_yielding(void **state)
{
	(void)state;
	struct idle_seen s = wait_then_signal(HW_FAULT_NONE, 10 * SEC, false);
	assert_int_equal(s.yields, 0);
	assert_int_equal(s.parks, 0);
	assert_int_equal(s.lowered_waits, 0);
}

/* Broken (HW_FAULT_WAIT_YIELDS): the engine lowers and yields as soon as
 * its wait blocks, whatever the window: caught by the counts (it yielded
 * before the write, and the wait was released lowered). */
static void an_engine_that_yields_first_is_caught(void **state)
{
	(void)state;
	struct idle_seen s = wait_then_signal(HW_FAULT_WAIT_YIELDS, 10 * SEC, true);
	assert_true(s.yields > 0);
	assert_int_equal(s.lowered_waits, 1);
}

/* The spin is bounded: past a 1 ms window the engine lowers and yields (it
 * would otherwise hold a CPU the measured threads share for as long as the
 * wait lasts), and the wait released then counts as released lowered. */
static void past_its_window_the_engine_lowers(void **state)
{
	(void)state;
	struct idle_seen s = wait_then_signal(HW_FAULT_NONE, 1000000, true);
	assert_true(s.yields > 0);
	assert_int_equal(s.lowered_waits, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_blocked_wait_is_seen_without_yielding),
		cmocka_unit_test(an_engine_that_yields_first_is_caught),
		cmocka_unit_test(past_its_window_the_engine_lowers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
