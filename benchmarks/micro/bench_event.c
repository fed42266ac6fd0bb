/* benchmarks/micro/bench_event.c — the futex event and wake word.
 *
 * Fast paths (one thread, nobody asleep): what a fence signal costs when no
 * CPU waiter exists.  Each reports syscalls_per_op from lf_futex_syscalls(),
 * which must be 0:
 *   event_set_nosleeper     lf_event_set on an unset event (target <= 30 ns).
 *                           1024 events are set per batch and reset with the
 *                           timer paused, so only the set is timed.
 *   event_set_already_set   lf_event_set on a set event (a same-value RMW).
 *   event_wait_already_set  lf_event_wait on a set event (one acquire load).
 *   wake_notify_noparker    lf_wake_notify with no parker announced.
 *   wake_prepare_cancel     the parker's announce + withdraw (the idle-check cost).
 *
 * Wake-to-run latency, the two mechanisms side by side in the same run: a
 * partner thread sleeps, the benchmark thread stamps lf_now_ns() and wakes it,
 * the partner stamps again as soon as it runs.  Manual time = that latency,
 * so Time is the mean; p50/p99/max (src/fb_hist.h) are counters, in ns.
 *   event_wake_to_run/spin_us:0   lf_event_wait(spin 0) woken by lf_event_set
 *   event_wake_to_run/spin_us:50  the same with a 50 us spin phase: the set
 *                                 lands while the waiter spins, no syscall
 *   cond_wake_to_run              pthread_cond_wait woken by pthread_cond_signal
 * Before each wake the waker waits until the sleeper has announced itself
 * (SLEEPERS bit / a flag under the mutex), then 20 us more so it is inside
 * the futex wait: the numbers are a sleeping thread's wake-up, not a race.
 * The partner hands control back through a second lf_event (not timed).
 * Waker and partner are pinned to the first two CPUs the process may use
 * (counter pinned=1); the machine's idle state decides the number: waking an
 * idle vCPU costs tens of us, one that is busy with another task a few us.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#include "src/fb_hist.h"
#include "lockfree/arch.h"
#include "lockfree/event.h"
#include "lockfree/thread.h"
#include "src/gbench/gbench.h"

#define MIN_TIME_FAST 0.2
#define MIN_TIME_WAKE 0.5
#define SETTLE_NS 20000ull                  /* after the sleeper announced itself */
#define SYNC_TIMEOUT_NS 5000000000ll        /* a partner that does not answer in 5 s: error */
#define SYNC_SPIN_NS 100000ull

/* ---- fast paths ---- */

static void event_set_nosleeper(gb_state *st)
{
	enum { N = 1024 };
	static struct lf_event evs[N]; /* single-threaded benchmark */
	for (int i = 0; i < N; i++)
		lf_event_init(&evs[i]);
	uint64_t s0 = lf_futex_syscalls();
	while (gb_keep_running_batch(st, N)) {
		for (int i = 0; i < N; i++)
			lf_event_set(&evs[i]);
		gb_pause_timing(st);
		for (int i = 0; i < N; i++)
			lf_event_reset(&evs[i]);
		gb_resume_timing(st);
	}
	gb_counter(st, "syscalls_per_op", (double)(lf_futex_syscalls() - s0), GB_COUNTER_AVG_ITERATIONS);
}
GB_BENCHMARK(event_set_nosleeper, gb_min_time(b, MIN_TIME_FAST))

static void event_set_already_set(gb_state *st)
{
	struct lf_event ev;
	lf_event_init(&ev);
	lf_event_set(&ev);
	uint64_t s0 = lf_futex_syscalls();
	while (gb_keep_running(st))
		lf_event_set(&ev);
	gb_counter(st, "syscalls_per_op", (double)(lf_futex_syscalls() - s0), GB_COUNTER_AVG_ITERATIONS);
}
GB_BENCHMARK(event_set_already_set, gb_min_time(b, MIN_TIME_FAST))

static void event_wait_already_set(gb_state *st)
{
	struct lf_event ev;
	lf_event_init(&ev);
	lf_event_set(&ev);
	uint64_t s0 = lf_futex_syscalls();
	while (gb_keep_running(st)) {
		int rc = lf_event_wait(&ev, 0, -1);
		gb_do_not_optimize(rc);
	}
	gb_counter(st, "syscalls_per_op", (double)(lf_futex_syscalls() - s0), GB_COUNTER_AVG_ITERATIONS);
}
GB_BENCHMARK(event_wait_already_set, gb_min_time(b, MIN_TIME_FAST))

static void wake_notify_noparker(gb_state *st)
{
	struct lf_wake w;
	lf_wake_init(&w);
	uint64_t s0 = lf_futex_syscalls(), woke = 0;
	while (gb_keep_running(st))
		woke += lf_wake_notify(&w);
	gb_counter(st, "syscalls_per_op", (double)(lf_futex_syscalls() - s0), GB_COUNTER_AVG_ITERATIONS);
	gb_counter(st, "wakes", (double)woke, GB_COUNTER_DEFAULT);
}
GB_BENCHMARK(wake_notify_noparker, gb_min_time(b, MIN_TIME_FAST))

static void wake_prepare_cancel(gb_state *st)
{
	struct lf_wake w;
	lf_wake_init(&w);
	uint64_t s0 = lf_futex_syscalls();
	while (gb_keep_running(st)) {
		lf_wake_prepare(&w);
		lf_wake_cancel(&w);
	}
	gb_counter(st, "syscalls_per_op", (double)(lf_futex_syscalls() - s0), GB_COUNTER_AVG_ITERATIONS);
}
GB_BENCHMARK(wake_prepare_cancel, gb_min_time(b, MIN_TIME_FAST))

/* ---- wake-to-run: shared by the event and condvar variants ---- */

struct wake_run {
	/* the measured wake: one of the two mechanisms */
	struct lf_event a;
	pthread_mutex_t m;
	pthread_cond_t c;
	bool flag, sleeping;          /* under m */
	uint64_t spin_ns;             /* partner's spin phase (event only) */
	_Atomic bool armed;           /* partner is about to wait on `a` (spin mode) */
	/* not measured */
	struct lf_event back;         /* partner -> waker: latency recorded */
	_Atomic uint64_t stamp;       /* waker's lf_now_ns() just before the wake */
	_Atomic uint64_t latency;     /* partner's lf_now_ns() on running - stamp */
	_Atomic bool stop;
};

static void wake_run_report(struct wake_run *x, uint64_t latency)
{
	atomic_store_explicit(&x->latency, latency, memory_order_relaxed);
	lf_event_set(&x->back); /* release: the latency is visible to the waker */
}

static void *event_partner(void *p)
{
	struct wake_run *x = p;
	for (;;) {
		atomic_store(&x->armed, true);
		/* No timeout, like pthread_cond_wait (a timeout arms an hrtimer):
		 * the waker stops us with a set if we never answer. */
		int rc = lf_event_wait(&x->a, x->spin_ns, -1);
		uint64_t t1 = lf_now_ns();
		atomic_store(&x->armed, false);
		if (atomic_load(&x->stop))
			return NULL;
		lf_event_reset(&x->a); /* the only waiter: re-arm before answering */
		(void)rc; /* 0: no timeout was given */
		wake_run_report(x, t1 - atomic_load_explicit(&x->stamp, memory_order_relaxed));
	}
}

static void *cond_partner(void *p)
{
	struct wake_run *x = p;
	for (;;) {
		pthread_mutex_lock(&x->m);
		x->sleeping = true;
		while (!x->flag && !atomic_load(&x->stop))
			pthread_cond_wait(&x->c, &x->m);
		uint64_t t1 = lf_now_ns();
		x->sleeping = false;
		x->flag = false;
		pthread_mutex_unlock(&x->m);
		if (atomic_load(&x->stop))
			return NULL;
		wake_run_report(x, t1 - atomic_load_explicit(&x->stamp, memory_order_relaxed));
	}
}

/* Bounded wait (polling with yields, up to 5 s) until cond(x) holds. */
static bool await_partner(struct wake_run *x, bool (*cond)(struct wake_run *))
{
	uint64_t end = lf_now_ns() + (uint64_t)SYNC_TIMEOUT_NS;
	for (unsigned i = 0; !cond(x); i++) {
		if (i < 1000)
			lf_cpu_relax();
		else
			sched_yield();
		if (!(i & 255) && lf_now_ns() > end)
			return false;
	}
	return true;
}

static bool event_partner_asleep(struct wake_run *x) { return lf_event_has_sleepers(&x->a); }
static bool event_partner_armed(struct wake_run *x) { return atomic_load(&x->armed); }
static bool cond_partner_asleep(struct wake_run *x)
{
	pthread_mutex_lock(&x->m);
	bool s = x->sleeping; /* set under m before cond_wait releases m: it is in the wait */
	pthread_mutex_unlock(&x->m);
	return s;
}

/* Event: wake once; returns the setter's futex syscalls, or -1 on timeout. */
static int event_wake_once(struct wake_run *x)
{
	if (!await_partner(x, x->spin_ns ? event_partner_armed : event_partner_asleep))
		return -1;
	lf_spin_ns(x->spin_ns ? 2000 : SETTLE_NS); /* spin mode: be inside its spin phase */
	uint64_t s0 = lf_futex_syscalls();
	atomic_store_explicit(&x->stamp, lf_now_ns(), memory_order_relaxed); /* ordered by the set's RMW */
	lf_event_set(&x->a);
	return (int)(lf_futex_syscalls() - s0);
}

static int cond_wake_once(struct wake_run *x)
{
	if (!await_partner(x, cond_partner_asleep))
		return -1;
	lf_spin_ns(SETTLE_NS);
	pthread_mutex_lock(&x->m);
	atomic_store_explicit(&x->stamp, lf_now_ns(), memory_order_relaxed); /* ordered by the mutex */
	x->flag = true;
	pthread_cond_signal(&x->c);
	pthread_mutex_unlock(&x->m);
	return 0;
}

static void wake_to_run(gb_state *st, struct wake_run *x, void *(*partner)(void *), int (*wake_once)(struct wake_run *))
{
	lf_event_init(&x->a);
	lf_event_init(&x->back);
	pthread_mutex_init(&x->m, NULL);
	pthread_cond_init(&x->c, NULL);
	struct fb_hist *h = fb_hist_new();
	pthread_t t;
	if (pthread_create(&t, NULL, partner, x)) {
		gb_skip_with_error(st, "pthread_create failed");
		fb_hist_free(h);
		return;
	}
	/* Waker and sleeper on different CPUs: otherwise a spinning waker and a
	 * spinning sleeper take turns on one CPU and the result is the scheduler's. */
	cpu_set_t saved, partner_saved;
	bool pinned = lf_thread_pin_nth(pthread_self(), 0, &saved);
	pinned = lf_thread_pin_nth(t, 1, &partner_saved) && pinned;
	uint64_t setter_syscalls = 0;
	const char *error = NULL;
	while (gb_keep_running(st)) {
		int sc = wake_once(x);
		if (sc < 0 || lf_event_wait(&x->back, SYNC_SPIN_NS, SYNC_TIMEOUT_NS)) {
			error = "partner did not answer within 5 s";
			break;
		}
		lf_event_reset(&x->back);
		uint64_t lat = atomic_load_explicit(&x->latency, memory_order_relaxed);
		setter_syscalls += (uint64_t)sc;
		fb_hist_record(h, lat);
		gb_set_iteration_time(st, (double)lat * 1e-9);
	}
	if (error)
		gb_skip_with_error(st, error);
	/* Stop the partner wherever it is: asleep on the event or the condvar. */
	atomic_store(&x->stop, true);
	lf_event_set(&x->a);
	pthread_mutex_lock(&x->m);
	pthread_cond_signal(&x->c);
	pthread_mutex_unlock(&x->m);
	pthread_join(t, NULL);
	lf_thread_pin_restore(pthread_self(), &saved);

	struct fb_hist_summary s;
	fb_hist_summarize(h, &s);
	gb_counter(st, "p50_ns", (double)s.p50, GB_COUNTER_DEFAULT);
	gb_counter(st, "p99_ns", (double)s.p99, GB_COUNTER_DEFAULT);
	gb_counter(st, "max_ns", (double)s.max, GB_COUNTER_DEFAULT);
	if (partner == event_partner) /* glibc's condvar futex calls are not counted */
		gb_counter(st, "setter_syscalls_per_op", (double)setter_syscalls, GB_COUNTER_AVG_ITERATIONS);
	gb_counter(st, "pinned", pinned, GB_COUNTER_DEFAULT);
	fb_hist_free(h);
	pthread_mutex_destroy(&x->m);
	pthread_cond_destroy(&x->c);
}

static void event_wake_to_run(gb_state *st)
{
	struct wake_run x = {.spin_ns = (uint64_t)gb_arg(st, 0) * 1000u};
	wake_to_run(st, &x, event_partner, event_wake_once);
}
GB_BENCHMARK(event_wake_to_run, gb_arg_name(b, "spin_us"); gb_arg_add(b, 0); gb_arg_add(b, 50);
	     gb_use_manual_time(b); gb_unit(b, GB_US); gb_min_time(b, MIN_TIME_WAKE))

static void cond_wake_to_run(gb_state *st)
{
	struct wake_run x = {.spin_ns = 0};
	wake_to_run(st, &x, cond_partner, cond_wake_once);
}
GB_BENCHMARK(cond_wake_to_run, gb_use_manual_time(b); gb_unit(b, GB_US); gb_min_time(b, MIN_TIME_WAKE))
