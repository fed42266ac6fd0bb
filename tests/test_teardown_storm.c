/* tests/test_teardown_storm.c — the OS's teardown paths against each other
 * (gpu-model/os through gpu-model/runtime): TDRs (hangs on one engine and
 * on both at once, reported hung or found by TdrDelay), D3 and F1
 * transitions, user suspends, abnormal terminations and normal destroys,
 * all against work in flight on both submission paths (user-mode and
 * kernel-mode queues), on two engines, for a bounded time (a few seconds;
 * FB_SOAK=1: thirty).
 *
 * Innocent devices (one per path, a queue on each engine) submit and wait
 * the whole time; victim devices (one thread per path) are created, given
 * work, and ended one way or another; a power thread takes the adapter to
 * D3 and back (the engines go to F1 by themselves after 2 ms idle).
 * Counted, each asserted 0:
 *   hangs          a step (one victim's life, one innocent round, one power
 *                  round) past STORM_STEP_NS: reported and failed (the
 *                  stuck thread is left behind, never joined: CI never hangs);
 *   lost waiters   a wait that timed out instead of returning 0 or -EIO;
 *   innocent drops an innocent buffer not executed, an innocent device
 *                  removed, an innocent wait that did not return 0;
 *   victim drops   a buffer of a normally destroyed device not executed
 *                  (destroy drains), or a destroy that timed out.
 * STORM_NO_D3=1 leaves the power thread out (kept apart to tell its part). */
#include "tests/fb_test.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "tests/umd_test_util.h"

#define STORM_STEP_NS 20000000000ll     /* one step's deadline: a step past it is a hang */
#define STORM_WAIT_NS 10000000000ll     /* a wait's deadline: past it, a lost waiter */
#define STORM_TDR_DELAY_NS 100000000ll

struct storm;

struct storm_actor {
	pthread_t th;
	struct storm *s;
	bool um;
	const char *what;
	_Atomic uint64_t step_t0;       /* the running step's start (0: between steps); the monitor reads it */
	_Atomic bool done;              /* returned (release: its counts are final) */
	uint64_t steps;
};

struct storm {
	struct umt t;
	_Atomic bool stop;
	_Atomic uint64_t lost_waiters, innocent_drops, victim_drops, unexpected, d3_refused;
	_Atomic uint64_t hangs_made, terminations, destroys, suspends, d3s;
	struct storm_actor innocent[2], victim[2], power;
};

static void storm_step_begin(struct storm_actor *a)
{
	atomic_store_explicit(&a->step_t0, lf_now_ns(), memory_order_relaxed);
}

static void storm_step_end(struct storm_actor *a)
{
	atomic_store_explicit(&a->step_t0, 0, memory_order_relaxed);
	a->steps++;
}

/* A wait's outcome: 0 or -EIO (device removed) are answers; anything else
 * (-ETIMEDOUT) is a lost waiter. */
static void storm_waited(struct storm *s, int rc)
{
	if (rc == -ETIMEDOUT)
		atomic_fetch_add(&s->lost_waiters, 1);
	else if (rc && rc != -EIO)
		atomic_fetch_add(&s->unexpected, 1);
}

static struct rt_queue *storm_queue(struct rt_device *d, unsigned engine, bool um)
{
	struct rt_queue_desc desc = { .engine = engine, .user_mode = um };
	struct rt_queue *q = NULL;
	return rt_queue_create(d, &desc, &q) ? NULL : q;
}

/* ---- innocent devices: submit and wait the whole time; lose nothing ---- */

static void *storm_innocent_main(void *arg)
{
	struct storm_actor *a = arg;
	struct storm *s = a->s;
	struct rt_device *d;
	if (rt_device_create(s->t.u, &d)) {
		atomic_fetch_add(&s->unexpected, 1);
		goto out;
	}
	struct rt_queue *q[2] = { storm_queue(d, 0, a->um), storm_queue(d, 1, a->um) };
	_Atomic uint64_t ran = 0;
	uint64_t submitted = 0, v[2] = { 0, 0 };
	if (!q[0] || !q[1]) {
		atomic_fetch_add(&s->unexpected, 1);
		goto out;
	}
	while (!atomic_load(&s->stop)) {
		storm_step_begin(a);
		for (int i = 0; i < 4; i++)
			for (unsigned e = 0; e < 2; e++) {
				v[e] = umt_submit_count(q[e], &ran);
				submitted++;
			}
		for (unsigned e = 0; e < 2; e++) {
			int rc = rt_queue_wait(q[e], v[e], STORM_WAIT_NS);
			storm_waited(s, rc);
			if (rc)
				atomic_fetch_add(&s->innocent_drops, 1);
		}
		storm_step_end(a);
	}
	storm_step_begin(a);
	for (unsigned e = 0; e < 2; e++)
		storm_waited(s, rt_queue_wait(q[e], v[e], STORM_WAIT_NS));
	if (atomic_load(&ran) != submitted || rt_device_removed(d))
		atomic_fetch_add(&s->innocent_drops, submitted - atomic_load(&ran) + rt_device_removed(d));
	if (rt_device_destroy(d))
		atomic_fetch_add(&s->innocent_drops, 1);
	storm_step_end(a);
out:
	atomic_store_explicit(&a->done, true, memory_order_release);
	return NULL;
}

/* ---- victims: created, given work, ended one way or another ---- */

enum storm_end { STORM_DESTROY, STORM_TERMINATE, STORM_HANG_ONE, STORM_HANG_BOTH, STORM_SUSPEND_DESTROY, STORM_ENDS };

/* Hang the engines in `mask` from d's queues, tell the KMD's report or
 * leave it to TdrDelay, and wait: every wait returns -EIO (device lost). */
static void storm_hang(struct storm *s, struct rt_queue *const q[2], unsigned mask, bool report)
{
	uint64_t v[2] = { 0, 0 };
	for (unsigned e = 0; e < 2; e++)
		if (mask >> e & 1) {
			struct hw_cmd hang = { .op = HW_CMD_WORK, .arg = UINT64_MAX };
			if (rt_queue_submit(q[e], &hang, 1, &v[e]))
				mask &= ~(1u << e);   /* removed meanwhile: nothing to hang */
		}
	atomic_fetch_add(&s->hangs_made, 1);
	struct hw_adapter *hw = os_adapter_hw(s->t.a);
	for (unsigned e = 0; e < 2; e++)
		if (report && (mask >> e & 1) && hw_engine_running(hw, e))
			os_ums_engine_hung(s->t.u, e);
	for (unsigned e = 0; e < 2; e++)
		if (mask >> e & 1) {
			int rc = rt_queue_wait(q[e], v[e], STORM_WAIT_NS);
			storm_waited(s, rc);
			if (rc == 0)
				atomic_fetch_add(&s->unexpected, 1);   /* a hang cannot complete */
		}
}

/* One victim's life; false once the adapter has no device or queue slot
 * left (the OS reuses none before detach: the round is over). */
static bool storm_victim_life(struct storm_actor *a, unsigned i)
{
	struct storm *s = a->s;
	struct rt_device *d;
	int rc = rt_device_create(s->t.u, &d);
	if (rc) {
		if (rc != -ENOSPC)
			atomic_fetch_add(&s->unexpected, 1);
		return false;
	}
	struct rt_queue *q[2] = { storm_queue(d, 0, a->um), storm_queue(d, 1, a->um) };
	if (!q[0] || !q[1]) {
		rt_device_destroy(d);
		return false;                 /* no queue slot left (the only failure here) */
	}
	_Atomic uint64_t ran = 0;
	uint64_t submitted = 0;
	for (unsigned e = 0; e < 2; e++)
		for (int k = 0; k < 3; k++) {
			umt_submit_count(q[e], &ran);
			submitted++;
		}
	enum storm_end end = (enum storm_end)(i % STORM_ENDS);
	switch (end) {
	case STORM_DESTROY:                   /* with its work in flight: the drain runs it */
		rc = rt_device_destroy(d);
		atomic_fetch_add(&s->destroys, 1);
		if (rc || atomic_load(&ran) != submitted)
			atomic_fetch_add(&s->victim_drops, 1);
		return true;
	case STORM_TERMINATE:                 /* with its work in flight: dropped, waiters released */
		rt_device_terminate(d);
		atomic_fetch_add(&s->terminations, 1);
		for (unsigned e = 0; e < 2; e++)
			storm_waited(s, rt_queue_wait(q[e], rt_queue_submitted(q[e]), STORM_WAIT_NS));
		break;
	case STORM_HANG_ONE:
		storm_hang(s, q, 1u << (i / STORM_ENDS % 2), i / STORM_ENDS % 3 != 0);
		break;
	case STORM_HANG_BOTH:
		storm_hang(s, q, 3u, i / STORM_ENDS % 2 == 0);
		break;
	case STORM_SUSPEND_DESTROY:           /* destroy resumes what the process suspended */
		os_context_suspend(rt_queue_context(q[i / STORM_ENDS % 2]));
		atomic_fetch_add(&s->suspends, 1);
		rc = rt_device_destroy(d);
		atomic_fetch_add(&s->destroys, 1);
		if (rc || atomic_load(&ran) != submitted)
			atomic_fetch_add(&s->victim_drops, 1);
		return true;
	default:
		break;
	}
	rc = rt_device_destroy(d);           /* after a removal: nothing to drain */
	if (rc && rc != -ETIMEDOUT)
		atomic_fetch_add(&s->unexpected, 1);
	return true;
}

static void *storm_victim_main(void *arg)
{
	struct storm_actor *a = arg;
	bool more = true;
	for (unsigned i = a->um; more && !atomic_load(&a->s->stop); i++) {
		storm_step_begin(a);
		more = storm_victim_life(a, i);
		storm_step_end(a);
	}
	atomic_store_explicit(&a->done, true, memory_order_release);
	return NULL;
}

/* ---- power: D3 and back (F1 comes by itself) ---- */

static void *storm_power_main(void *arg)
{
	struct storm_actor *a = arg;
	struct storm *s = a->s;
	struct timespec nap = { 0, 2000000 };
	while (!atomic_load(&s->stop)) {
		storm_step_begin(a);
		int rc = os_power_d3(s->t.u);
		if (rc == 0) {
			atomic_fetch_add(&s->d3s, 1);
			nanosleep(&nap, NULL);
			if (os_power_d0(s->t.u))
				atomic_fetch_add(&s->unexpected, 1);
		} else if (rc == -EBUSY) {     /* a destroy is draining: D3 refused, nothing done */
			atomic_fetch_add(&s->d3_refused, 1);
		} else {
			atomic_fetch_add(&s->unexpected, 1);
		}
		storm_step_end(a);
		nanosleep(&nap, NULL);
	}
	atomic_store_explicit(&a->done, true, memory_order_release);
	return NULL;
}

/* ---- the monitor ---- */

static void storm_start(struct storm *s, struct storm_actor *a, void *(*fn)(void *), bool um, const char *what)
{
	a->s = s;
	a->um = um;
	a->what = what;
	assert_int_equal(pthread_create(&a->th, NULL, fn, a), 0);
}

/* Past its step's deadline?  Reported once. */
static bool storm_hung(struct storm_actor *a, uint64_t now)
{
	if (!a->s || atomic_load_explicit(&a->done, memory_order_acquire))
		return false;
	uint64_t t0 = atomic_load_explicit(&a->step_t0, memory_order_relaxed);
	if (!t0 || t0 > now || now - t0 < (uint64_t)STORM_STEP_NS)
		return false;   /* between steps, or a step begun after `now` was read */
	print_error("storm: %s (%s) stuck in one step for %llu ms\n", a->what, a->um ? "user-mode" : "kernel-mode",
		    (unsigned long long)((now - t0) / 1000000));
	return true;
}

/* Run the storm for `ns`, then let every actor finish its step; the number
 * of actors stuck past their step's deadline (those are left running). */
static unsigned storm_run(struct storm *s, uint64_t ns, bool d3)
{
	struct storm_actor *all[5] = { &s->innocent[0], &s->innocent[1], &s->victim[0], &s->victim[1], &s->power };
	for (int um = 0; um < 2; um++) {
		storm_start(s, &s->innocent[um], storm_innocent_main, um, "innocent");
		storm_start(s, &s->victim[um], storm_victim_main, um, "victim");
	}
	if (d3)
		storm_start(s, &s->power, storm_power_main, false, "power");
	struct timespec tick = { 0, 10000000 };
	unsigned hung = 0;
	uint64_t t0 = lf_now_ns();
	bool stopped = false;
	for (;;) {
		uint64_t now = lf_now_ns();
		if (!stopped && now - t0 >= ns) {
			atomic_store(&s->stop, true);
			stopped = true;
		}
		unsigned live = 0;
		hung = 0;
		for (int i = 0; i < 5; i++) {
			if (all[i]->s && !atomic_load_explicit(&all[i]->done, memory_order_acquire))
				live++;
			hung += storm_hung(all[i], now);
		}
		bool victims = !atomic_load_explicit(&s->victim[0].done, memory_order_acquire) ||
			       !atomic_load_explicit(&s->victim[1].done, memory_order_acquire);
		if (!stopped && !victims) {
			atomic_store(&s->stop, true);   /* the round is full: the next one on a new adapter */
			stopped = true;
		}
		if (hung || (stopped && !live))
			break;
		nanosleep(&tick, NULL);
	}
	if (!hung)
		for (int i = 0; i < 5; i++)
			if (all[i]->s)
				pthread_join(all[i]->th, NULL);
	return hung;
}

/* One round on a fresh adapter, for up to ns (less once its device or
 * queue slots are used up); every count asserted 0. */
static uint64_t storm_round(bool d3, uint64_t ns, unsigned round)
{
	struct storm *s = calloc(1, sizeof(*s));   /* left behind with a stuck actor */
	assert_non_null(s);
	struct os_config cfg;
	umt_config(&cfg, 2, HW_DOORBELL_DEDICATED, 0, 2000000);   /* F1 after 2 ms idle */
	cfg.caps.gfx_preempt = HW_GFX_PREEMPT_NONE;               /* a WORK that never ends is a hang */
	struct os_ums_config u;
	os_ums_config_default(&u);
	u.drain_timeout_ns = STORM_WAIT_NS;
	u.tdr_delay_ns = STORM_TDR_DELAY_NS;
	u.tdr_limit_time_ns = 1;                                  /* never a bug check: each TDR counts alone */
	s->t = umt_up_with(&cfg, &u);
	unsigned hung = storm_run(s, ns, d3);
	if (hung)   /* the stuck thread may hold the OS's lock: no call that takes it, nothing torn down */
		fail_msg("storm: %u actor(s) stuck past the %lld s step deadline (hangs); lost waiters so far %llu",
			 hung, STORM_STEP_NS / 1000000000ll, (unsigned long long)atomic_load(&s->lost_waiters));
	struct os_ums_stats st = umt_stats(&s->t);
	print_message("storm%s round %u: %llu victims, %llu hangs made (%llu resets), %llu terminations, "
		      "%llu destroys, %llu suspends, %llu D3 (%llu refused during a drain; %llu F1 requests); innocent rounds %llu+%llu\n",
		      d3 ? "" : " (no D3)", round, (unsigned long long)(s->victim[0].steps + s->victim[1].steps),
		      (unsigned long long)atomic_load(&s->hangs_made), (unsigned long long)st.tdr_resets,
		      (unsigned long long)atomic_load(&s->terminations), (unsigned long long)atomic_load(&s->destroys),
		      (unsigned long long)atomic_load(&s->suspends), (unsigned long long)atomic_load(&s->d3s),
		      (unsigned long long)atomic_load(&s->d3_refused),
		      (unsigned long long)st.f1_requests, (unsigned long long)s->innocent[0].steps,
		      (unsigned long long)s->innocent[1].steps);
	print_message("storm: hangs %u, lost waiters %llu, innocent work dropped %llu, victim work dropped %llu, "
		      "unexpected %llu\n",
		      hung, (unsigned long long)atomic_load(&s->lost_waiters),
		      (unsigned long long)atomic_load(&s->innocent_drops), (unsigned long long)atomic_load(&s->victim_drops),
		      (unsigned long long)atomic_load(&s->unexpected));
	assert_int_equal(atomic_load(&s->lost_waiters), 0);
	assert_int_equal(atomic_load(&s->innocent_drops), 0);
	assert_int_equal(atomic_load(&s->victim_drops), 0);
	assert_int_equal(atomic_load(&s->unexpected), 0);
	uint64_t made = atomic_load(&s->hangs_made);
	if (made)
		assert_true(st.tdr_resets >= 1);                /* hangs end in resets, not by themselves */
	assert_int_equal(st.tdr_bugchecks, 0);
	umt_down(&s->t);
	free(s);
	return made;
}

static void storm(bool d3)
{
	uint64_t ns = fb_soak() ? 30000000000ull : 3000000000ull;
	uint64_t t0 = lf_now_ns();
	unsigned round = 0;
	uint64_t made = 0;
	for (uint64_t now = t0; now - t0 < ns; now = lf_now_ns())
		made += storm_round(d3, ns - (now - t0), round++);
	assert_true(made >= 1);                                 /* the storm did storm */
}

static void teardown_storm_without_d3(void **state)
{
	storm(false);
}

static void teardown_storm(void **state)
{
	const char *no = getenv("STORM_NO_D3");
	if (no && *no && *no != '0')
		fb_skip("STORM_NO_D3 set");
	storm(true);
}

/* os_adapter_irq_sync against the interrupt thread's stop, made
 * deterministic through the irq hooks: at the syncing thread's `stage`
 * (0: announced, stop not yet checked; 1: stop seen clear, record not yet
 * raised) the adapter is destroyed on another thread, and the interrupt
 * thread's first round of its final drain waits for the sync to go on.  The
 * sync must return either way (a record raised after the first round is
 * still handled), and the destroy must finish. */
struct irqs {
	struct os_adapter *a;
	int stage;
	pthread_t destroyer;
	_Atomic int fired, drained, resumed, synced, destroyed;
};
static struct irqs *irqs_now;

static bool irqs_wait(_Atomic int *flag, uint64_t bound_ns)
{
	struct timespec d = { 0, 100000 };
	for (uint64_t t0 = lf_now_ns(); !atomic_load(flag);) {
		if (lf_now_ns() - t0 >= bound_ns)
			return false;
		nanosleep(&d, NULL);
	}
	return true;
}

static void *irqs_destroy(void *arg)
{
	struct irqs *x = arg;
	os_adapter_destroy(x->a);
	atomic_store(&x->destroyed, 1);
	return NULL;
}

static void irqs_sync_hook(struct os_adapter *a, int stage)
{
	struct irqs *x = irqs_now;
	if (!x || a != x->a || stage != x->stage || atomic_exchange(&x->fired, 1))
		return;
	if (pthread_create(&x->destroyer, NULL, irqs_destroy, x))
		return;                      /* `drained` stays 0: the test fails */
	irqs_wait(&x->drained, STORM_WAIT_NS);   /* the interrupt thread's first final round */
	atomic_store(&x->resumed, 1);
}

static void irqs_drain_hook(struct os_adapter *a)
{
	struct irqs *x = irqs_now;
	if (!x || a != x->a || atomic_exchange(&x->drained, 1))
		return;
	irqs_wait(&x->resumed, STORM_WAIT_NS);
}

static void *irqs_sync(void *arg)
{
	struct irqs *x = arg;
	os_adapter_irq_sync(x->a);
	atomic_store(&x->synced, 1);
	return NULL;
}

static void irqs_run(int stage)
{
	struct os_config cfg;
	os_config_default(&cfg);
	char err[256];
	struct irqs x = { .stage = stage };
	if (os_adapter_create(&cfg, &x.a, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(os_adapter_start(x.a), 0);
	irqs_now = &x;
	os_test_irq_sync_hook = irqs_sync_hook;
	os_test_irq_drain_hook = irqs_drain_hook;
	pthread_t s;
	assert_int_equal(pthread_create(&s, NULL, irqs_sync, &x), 0);
	bool synced = irqs_wait(&x.synced, STORM_WAIT_NS);
	bool destroyed = synced && irqs_wait(&x.destroyed, STORM_WAIT_NS);
	os_test_irq_sync_hook = NULL;   /* before any failure: the later tests run without them */
	os_test_irq_drain_hook = NULL;
	irqs_now = NULL;
	if (!synced)
		fail_msg("os_adapter_irq_sync lost its record to the interrupt thread's stop (stage %d)", stage);
	pthread_join(s, NULL);
	assert_true(atomic_load(&x.fired));
	assert_true(atomic_load(&x.drained));
	assert_true(destroyed);
	pthread_join(x.destroyer, NULL);
}

static void irq_sync_announced_before_the_stop_returns(void **state)
{
	(void)state;
	irqs_run(0);
}

static void irq_sync_raised_after_the_final_drain_round_is_handled(void **state)
{
	(void)state;
	irqs_run(1);
}

FB_TEST_MAIN(cmocka_unit_test(irq_sync_announced_before_the_stop_returns),
	     cmocka_unit_test(irq_sync_raised_after_the_final_drain_round_is_handled),
	     cmocka_unit_test(teardown_storm_without_d3), cmocka_unit_test(teardown_storm))
