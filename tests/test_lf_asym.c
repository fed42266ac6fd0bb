/* tests/test_lf_asym.c — the asymmetric fence (lockfree/asym.h) and the tick
 * clock (lockfree/arch.h, ticks.c).
 *
 * The fence is checked on the store-buffering litmus it exists for: per
 * round, the hot thread stores x and loads y, the rare thread stores y and
 * loads x, and "both loads missed" must never happen with the real pair.  The
 * deliberately broken pair (lf_asym_heavy_broken: no barrier on the rare
 * side) lets both loads miss on x86, where a store waits in the store buffer
 * while the next load runs: the test asserts it sees that outcome, or skips
 * saying the two CPUs never overlapped a round (one CPU, or a sanitizer whose
 * instrumented atomics serialize). */
#include "tests/fb_test.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include "lockfree/arch.h"
#include "lockfree/asym.h"
#include "lockfree/cacheline.h"
#include "lockfree/thread.h"

struct litmus {
	LF_ALIGNED _Atomic uint64_t arrived;    /* two-thread spin barrier: 2 per round */
	LF_ALIGNED _Atomic uint64_t x;          /* round n stores n */
	LF_ALIGNED _Atomic uint64_t y;
	LF_ALIGNED _Atomic uint64_t missed;     /* rounds where both loads missed */
	LF_ALIGNED _Atomic int stop;
	uint64_t rounds, deadline_ns;
	void (*heavy)(void);
	unsigned char *hot_missed;              /* per round: the hot load missed */
	unsigned char *rare_missed;
};

/* Both threads arrive before either runs round n: they start within a
 * cache-line transfer of each other. */
static bool barrier(struct litmus *l, uint64_t n)
{
	atomic_fetch_add_explicit(&l->arrived, 1, memory_order_acq_rel);
	for (unsigned i = 0; atomic_load_explicit(&l->arrived, memory_order_acquire) < 2 * n; i++) {
		if (atomic_load_explicit(&l->stop, memory_order_relaxed))
			return false;
		if (i > 1000000)
			sched_yield();
	}
	return !atomic_load_explicit(&l->stop, memory_order_relaxed);
}

static void *hot_side(void *arg)
{
	struct litmus *l = arg;
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		lf_thread_pin_self(0);
	for (uint64_t n = 1; n <= l->rounds && barrier(l, n); n++) {
		atomic_store_explicit(&l->x, n, memory_order_relaxed);
		lf_asym_light();
		l->hot_missed[n] = atomic_load_explicit(&l->y, memory_order_relaxed) < n;
		if ((n & 1023) == 0 && lf_now_ns() > l->deadline_ns)
			atomic_store(&l->stop, 1);
	}
	atomic_store(&l->stop, 1);
	return NULL;
}

static void *rare_side(void *arg)
{
	struct litmus *l = arg;
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		lf_thread_pin_self(1);
	for (uint64_t n = 1; n <= l->rounds && barrier(l, n); n++) {
		atomic_store_explicit(&l->y, n, memory_order_relaxed);
		l->heavy();
		l->rare_missed[n] = atomic_load_explicit(&l->x, memory_order_relaxed) < n;
	}
	atomic_store(&l->stop, 1);
	return NULL;
}

/* Up to `rounds` rounds or deadline_ms; returns the rounds where both loads
 * missed, *ran the rounds both sides completed. */
static uint64_t litmus_run(void (*heavy)(void), uint64_t rounds, unsigned deadline_ms, uint64_t *ran)
{
	static struct litmus l;
	l = (struct litmus){ .rounds = rounds, .heavy = heavy,
			     .deadline_ns = lf_now_ns() + (uint64_t)deadline_ms * 1000000u };
	l.hot_missed = calloc(rounds + 1, 1);
	l.rare_missed = calloc(rounds + 1, 1);
	assert_non_null(l.hot_missed);
	assert_non_null(l.rare_missed);
	pthread_t th, tr;
	assert_int_equal(pthread_create(&th, NULL, hot_side, &l), 0);
	assert_int_equal(pthread_create(&tr, NULL, rare_side, &l), 0);
	pthread_join(th, NULL);
	pthread_join(tr, NULL);
	/* a round counts once both sides got past its barrier: 2n arrivals */
	uint64_t done = atomic_load(&l.arrived) / 2, missed = 0;
	if (done > rounds)
		done = rounds;
	if (done)
		done--;          /* the last round may be half run */
	for (uint64_t n = 1; n <= done; n++)
		missed += l.hot_missed[n] && l.rare_missed[n];
	free(l.hot_missed);
	free(l.rare_missed);
	*ran = done;
	return missed;
}

static void asym_pair_never_misses_both(void **state)
{
	lf_asym_init();
	uint64_t ran, missed = litmus_run(lf_asym_heavy, 2000, 20000, &ran);
	printf("[ ASYM     ] heavy side: %s; %llu rounds, both loads missed in %llu\n", lf_asym_kind(),
	       (unsigned long long)ran, (unsigned long long)missed);
	assert_true(ran >= 100);
	assert_int_equal(missed, 0);
}

static void broken_pair_is_caught(void **state)
{
	lf_asym_init();
	uint64_t ran, missed = litmus_run(lf_asym_heavy_broken, 1000000, 3000, &ran);
	printf("[ ASYM     ] broken heavy side: %llu rounds, both loads missed in %llu\n", (unsigned long long)ran,
	       (unsigned long long)missed);
	if (!missed)
		fb_skip("store buffering never observed: the two sides never overlapped (one CPU, or "
			"instrumented atomics)");
	assert_true(missed > 0);
}

/* lf_ticks() counts at the rate lf_ticks_ns() assumes, against CLOCK_MONOTONIC. */
static void ticks_agree_with_the_clock(void **state)
{
	lf_ticks_init();
	/* bracketed pairs: this thread may be preempted between a counter read
	 * and a clock read on a loaded machine (a 1.5 ms gap was seen) */
	uint64_t t0, n0, t1, n1;
	lf_ticks_pair(&t0, &n0);
	struct timespec ts = { 0, 50000000 };
	nanosleep(&ts, NULL);
	lf_ticks_pair(&t1, &n1);
	double dt = lf_ticks_ns(t1 - t0), dn = (double)(n1 - n0);
	printf("[ TICKS    ] %s at %.1f MHz: %.0f ns by ticks, %.0f ns by the clock\n", lf_ticks_source(),
	       lf_ticks_mhz(), dt, dn);
	assert_true(t1 > t0);
	assert_true(dt > dn * 0.99 && dt < dn * 1.01);
}

FB_TEST_MAIN(cmocka_unit_test(asym_pair_never_misses_both), cmocka_unit_test(broken_pair_is_caught),
	     cmocka_unit_test(ticks_agree_with_the_clock))
