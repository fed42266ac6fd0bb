/* tests/test_fence_release_window.c — a CPU wait registered while a release
 * runs, and the rewinding rule at the two edges of a registration, pinned
 * down deterministically with the test hooks of lockfree/waitset.h
 * (lf_waitset_test_hook: the raise window of a release) and
 * gpu-model/os/os.h (os_test_register_hook: between a waiter's first look,
 * its add and its resample).
 *
 * The raise window: a release (here a CPU signal of 3 releasing a wait for
 * 3) raises the published threshold (MonitoredValue) once its waiter is
 * gone, then re-checks its stack for adds that came after it took the
 * stack.  A wait for 7 registered just before the raising CAS finds the old,
 * low threshold and writes nothing; for a moment the raise hides it.  A
 * signal of 10 in that moment must still set its event before it returns
 * (seed multi-engine-synchronization: the CPU-side Signal "occurs
 * immediately"), and a rewind to 3 right after must not take the wake-up
 * back ("the wait will be satisfied regardless of which value remains
 * afterwards").  OS_FAULT_SIGNAL_TRUSTS_THRESHOLD (the signaler believes the
 * threshold it reads) loses both: the tests assert it does. */
#include <pthread.h>
#include <string.h>

#include "tests/fb_test.h"
#include "tests/fence_test_util.h"
#include "lockfree/waitset.h"

#define SEC 1000000000ll

/* ---- the raise window ---- */

struct rw_ctx {
	struct os_fence *f;
	bool rewind;                 /* also rewind to 3 inside the window */
	int stage;                   /* 0: before the raise; 1: waiter added; 2: window done */
	struct lf_waitset *ws;       /* the fence's waiter set, as the hook saw it */
	struct lf_event ev;          /* the wait for 7 registered in the window */
	bool registered;             /* os_fence_wait_event returned with ev unset */
	_Atomic bool sig_done, rew_done;
	bool set_at_return;          /* ev was set when the signal of 10 returned */
	pthread_t sig, rew;
};

static struct rw_ctx *rw_ctx;

static void *rw_signal_main(void *arg)
{
	struct rw_ctx *c = arg;
	assert_int_equal(os_fence_signal_cpu(c->f, 10), 0);
	c->set_at_return = lf_event_is_set(&c->ev);
	atomic_store(&c->sig_done, true);
	return NULL;
}

static void *rw_rewind_main(void *arg)
{
	struct rw_ctx *c = arg;
	assert_int_equal(os_fence_signal_cpu(c->f, 3), 0);
	atomic_store(&c->rew_done, true);
	return NULL;
}

/* Until the thread's signal returned, or was sent to the slow path by the
 * release in progress (it then waits for the release lock this thread
 * holds): either way its write has landed and its decision is taken. */
static void rw_wait_decided(struct rw_ctx *c, _Atomic bool *done, uint64_t unsettled0)
{
	assert_true(fbt_eventually(atomic_load(done) || lf_waitset_unsettled(c->ws) != unsettled0));
}

static void rw_hook(struct lf_waitset *ws, enum lf_waitset_hook_at at)
{
	struct rw_ctx *c = rw_ctx;
	if (!c)
		return;
	if (at == LF_WAITSET_HOOK_RAISE && c->stage == 0) {
		/* after the release took its stack, before its raising CAS: the
		 * add pushes after the exchange and finds the threshold at 2 */
		c->stage = 1;
		assert_int_equal(os_fence_wait_event(c->f, 7, &c->ev), 0);
		c->registered = !lf_event_is_set(&c->ev);
	} else if (at == LF_WAITSET_HOOK_RAISED && c->stage == 1) {
		/* the raise is published, the re-check has not run: the window */
		c->stage = 2;
		c->ws = ws;
		uint64_t unsettled0 = lf_waitset_unsettled(ws);
		assert_int_equal(pthread_create(&c->sig, NULL, rw_signal_main, c), 0);
		rw_wait_decided(c, &c->sig_done, unsettled0);
		if (c->rewind) {
			unsettled0 = lf_waitset_unsettled(ws);
			assert_int_equal(pthread_create(&c->rew, NULL, rw_rewind_main, c), 0);
			rw_wait_decided(c, &c->rew_done, unsettled0);
		}
	}
}

/* One run on a fence of `type` at 2: a wait for 3, whose release by a CPU
 * signal of 3 raises the threshold; in the window, a wait for 7, a signal of
 * 10 from another thread (and a rewind to 3).  Fills c; returns whether the
 * wait for 7 was released within timeout_ns after everything returned. */
static bool rw_run(enum os_fence_type type, enum os_fault fault, bool rewind, struct rw_ctx *c,
		   int64_t timeout_ns)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.fault = fault;
	struct os_adapter *a = fbt_adapter(&cfg);
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, type, 2, 0, &f), 0);
	memset(c, 0, sizeof(*c));
	c->f = f;
	c->rewind = rewind;
	lf_event_init(&c->ev);
	struct lf_event first;
	lf_event_init(&first);
	assert_int_equal(os_fence_wait_event(f, 3, &first), 0);
	assert_false(lf_event_is_set(&first));

	rw_ctx = c;
	lf_waitset_test_hook = rw_hook;
	assert_int_equal(os_fence_signal_cpu(f, 3), 0);   /* the release that raises */
	assert_int_equal(c->stage, 2);                    /* the window was entered */
	/* the signalers' own releases still call the hook (stage 2: nothing):
	 * uninstall it once they are done */
	assert_int_equal(pthread_join(c->sig, NULL), 0);
	if (rewind)
		assert_int_equal(pthread_join(c->rew, NULL), 0);
	lf_waitset_test_hook = NULL;
	rw_ctx = NULL;

	assert_int_equal(lf_event_wait(&first, 0, 0), 0);
	bool released = lf_event_wait(&c->ev, 0, timeout_ns) == 0;
	/* a wait still registered (the broken variant) is released as abandoned */
	int rc = os_fence_destroy(f);
	assert_true(rc == 0 || (rc == -EBUSY && !released));
	fbt_down(a);
	return released;
}

static const enum os_fence_type rw_types[2] = { OS_FENCE_NATIVE, OS_FENCE_MONITORED };

/* "Signal ... occurs immediately": a wait registered while a release raised
 * the threshold is released by a signal in the raise window before the
 * signal returns, on both paths. */
static void signal_in_raise_window_sets_event_before_it_returns(void **state)
{
	for (int k = 0; k < 2; k++) {
		struct rw_ctx c;
		assert_true(rw_run(rw_types[k], OS_FAULT_NONE, false, &c, 10 * SEC));
		assert_true(c.registered);
		assert_true(c.set_at_return);
	}
}

/* "The wait will be satisfied regardless of which value remains
 * afterwards": the signal of 10 in the raise window, then a rewind to 3
 * before the release resamples: the wait for 7 is released all the same. */
static void rewind_in_raise_window_keeps_the_wake_up(void **state)
{
	for (int k = 0; k < 2; k++) {
		struct rw_ctx c;
		assert_true(rw_run(rw_types[k], OS_FAULT_NONE, true, &c, 10 * SEC));
		assert_true(c.registered);
		assert_true(c.set_at_return);
	}
}

/* The signaler that trusts the threshold it reads (the algorithm before the
 * raise sequence): the event is not set when the signal returns, and with
 * the rewind the wait is never released (a lost wake-up). */
static void raise_window_trusting_the_threshold_caught(void **state)
{
	for (int k = 0; k < 2; k++) {
		struct rw_ctx c;
		rw_run(rw_types[k], OS_FAULT_SIGNAL_TRUSTS_THRESHOLD, false, &c, 10 * SEC);
		assert_true(c.registered);
		assert_false(c.set_at_return);
		/* nothing is left to release it: 100 ms is ample to see it stay unset */
		assert_false(rw_run(rw_types[k], OS_FAULT_SIGNAL_TRUSTS_THRESHOLD, true, &c, SEC / 10));
		assert_true(c.registered);
		assert_false(c.set_at_return);
	}
}

/* ---- the edges of a registration ---- */

struct reg_ctx {
	enum os_test_register_at at; /* where the hook signals */
	struct lf_event *ev;         /* the wait's event (set by the caller before registering) */
	bool fired;
	bool set_at_return;          /* ev was set when the signal of 10 returned */
};

static struct reg_ctx *reg_ctx;

/* At `at` of the registration of the wait for 7: signal 10, then rewind to 3. */
static void reg_hook(struct os_fence *f, uint64_t v, enum os_test_register_at at)
{
	struct reg_ctx *c = reg_ctx;
	if (!c || c->fired || v != 7 || at != c->at)
		return;
	c->fired = true;
	assert_int_equal(os_fence_signal_cpu(f, 10), 0);
	c->set_at_return = lf_event_is_set(c->ev);
	assert_int_equal(os_fence_signal_cpu(f, 3), 0);
}

/* A registration of a wait for 7 on a fence at 3 with the hook at `at`;
 * returns whether the event was set when os_fence_wait_event returned. */
static bool reg_run(struct os_adapter *a, enum os_fence_type type, enum os_test_register_at at,
		    struct reg_ctx *c, struct os_fence **out, struct lf_event *ev)
{
	assert_int_equal(os_fence_create(a, type, 3, 0, out), 0);
	lf_event_init(ev);
	*c = (struct reg_ctx){ .at = at, .ev = ev };
	reg_ctx = c;
	os_test_register_hook = reg_hook;
	assert_int_equal(os_fence_wait_event(*out, 7, ev), 0);
	os_test_register_hook = NULL;
	reg_ctx = NULL;
	assert_true(c->fired);
	return lf_event_is_set(ev);
}

/* Seed multi-engine-synchronization, "A fence may be rewound": a wait is
 * outstanding from its add (the MonitoredValue lowering, or the add's last
 * RMW); a write that a rewind supersedes before then races the registration
 * and the wait "will be compared against the new lower fence value" (its
 * resample reads 3: it stays registered, and the next 7 releases it before
 * that signal returns).  A write after the add is a write to an outstanding
 * wait: the signal of 10 releases it before it returns, whatever the rewind
 * after it leaves. */
static void rewind_during_registration_judged_from_the_add(void **state)
{
	struct os_config cfg;
	os_config_default(&cfg);
	struct os_adapter *a = fbt_adapter(&cfg);
	for (int k = 0; k < 2; k++) {
		struct reg_ctx c;
		struct os_fence *f;
		struct lf_event ev;
		/* 10 and 3 between the first look and the add: compared against 3 */
		assert_false(reg_run(a, rw_types[k], OS_TEST_REGISTER_ADD, &c, &f, &ev));
		assert_false(c.set_at_return);
		assert_int_equal(os_fence_value(f), 3);
		assert_int_equal(os_fence_signal_cpu(f, 7), 0);
		assert_true(lf_event_is_set(&ev));
		assert_int_equal(os_fence_destroy(f), 0);
		/* 10 and 3 between the add and the resample: 10 releases it */
		assert_true(reg_run(a, rw_types[k], OS_TEST_REGISTER_RESAMPLE, &c, &f, &ev));
		assert_true(c.set_at_return);
		assert_int_equal(os_fence_destroy(f), 0);
	}
	fbt_down(a);
}

FB_TEST_MAIN(cmocka_unit_test(signal_in_raise_window_sets_event_before_it_returns),
	     cmocka_unit_test(rewind_in_raise_window_keeps_the_wake_up),
	     cmocka_unit_test(raise_window_trusting_the_threshold_caught),
	     cmocka_unit_test(rewind_during_registration_judged_from_the_add))
