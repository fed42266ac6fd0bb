/* tests/test_lf_event.c — event (latch) and wake word (eventcount).
 *
 * Counts, not speed: futex syscalls made (lf_futex_syscalls), timeouts, and
 * lost wake-ups in races built to hit the window between a waiter's last
 * check and its announcement.  A lost wake-up is a wait that runs into its
 * generous deadline although the event was set / the work was posted and
 * notified.  The same races against event.c built with -DLF_EVENT_BROKEN (no
 * re-check after announcing; linked in from $(BUILD)/lockfree-broken/event.o
 * by mk/lockfree-broken.mk) must lose wake-ups, and the test asserts they do.
 */
#include "tests/fb_test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "lockfree/arch.h"
#include "lockfree/event.h"

/* The broken variant: lockfree/event.c built with -DLF_EVENT_BROKEN and renamed. */
void lf_event_broken_init(struct lf_event *ev);
void lf_event_broken_set(struct lf_event *ev);
void lf_event_broken_reset(struct lf_event *ev);
int lf_event_broken_wait(struct lf_event *ev, uint64_t spin_ns, int64_t timeout_ns);
int lf_event_broken_wait_any(struct lf_event *const *evs, size_t n, uint64_t spin_ns, int64_t timeout_ns);
extern void (*lf_event_broken_test_window_hook)(struct lf_event *ev);
void lf_wake_broken_init(struct lf_wake *w);
void lf_wake_broken_prepare(struct lf_wake *w);
void lf_wake_broken_cancel(struct lf_wake *w);
int lf_wake_broken_park(struct lf_wake *w, int64_t timeout_ns);
bool lf_wake_broken_notify(struct lf_wake *w);

struct event_ops {
	const char *name;
	void (*init)(struct lf_event *);
	void (*set)(struct lf_event *);
	void (*reset)(struct lf_event *);
	int (*wait)(struct lf_event *, uint64_t, int64_t);
	void (**hook)(struct lf_event *);
	int64_t deadline_ns; /* a wait that reaches it although the event was set is a lost wake-up */
};

struct wake_ops {
	const char *name;
	void (*init)(struct lf_wake *);
	void (*prepare)(struct lf_wake *);
	void (*cancel)(struct lf_wake *);
	int (*park)(struct lf_wake *, int64_t);
	bool (*notify)(struct lf_wake *);
	int64_t deadline_ns;
};

#define MS 1000000ll
#define SYNC_SPIN_NS 50000ull   /* round-sync waits spin this long before sleeping */
#define SYNC_TIMEOUT_NS (10 * 1000 * MS)

/* Generous deadlines for the real implementation (a miss fails the test);
 * short ones for the broken variant (a miss is expected and costs the deadline). */
static const struct event_ops good_event = {"lf_event", lf_event_init, lf_event_set, lf_event_reset,
					    lf_event_wait, &lf_event_test_window_hook, 3000 * MS};
static const struct event_ops broken_event = {"lf_event_broken", lf_event_broken_init, lf_event_broken_set,
					      lf_event_broken_reset, lf_event_broken_wait,
					      &lf_event_broken_test_window_hook, 20 * MS};
static const struct wake_ops good_wake = {"lf_wake", lf_wake_init, lf_wake_prepare, lf_wake_cancel,
					  lf_wake_park, lf_wake_notify, 3000 * MS};
static const struct wake_ops broken_wake = {"lf_wake_broken", lf_wake_broken_init, lf_wake_broken_prepare,
					    lf_wake_broken_cancel, lf_wake_broken_park, lf_wake_broken_notify, 20 * MS};

/* lf_event_wait_any as a one-event wait: the event under test behind one
 * that is never set, so the race meets the multi-word announce and sleep. */
static struct lf_event never_set;
static int wait_any_good(struct lf_event *ev, uint64_t spin, int64_t timeout)
{
	struct lf_event *evs[2] = { &never_set, ev };
	int rc = lf_event_wait_any(evs, 2, spin, timeout);
	return rc == 1 ? 0 : rc >= 0 ? -EPROTO : rc;
}
static int wait_any_broken(struct lf_event *ev, uint64_t spin, int64_t timeout)
{
	struct lf_event *evs[2] = { &never_set, ev };
	int rc = lf_event_broken_wait_any(evs, 2, spin, timeout);
	return rc == 1 ? 0 : rc >= 0 ? -EPROTO : rc;
}
static const struct event_ops good_any = {"lf_event_wait_any", lf_event_init, lf_event_set, lf_event_reset,
					  wait_any_good, &lf_event_test_window_hook, 3000 * MS};
static const struct event_ops broken_any = {"lf_event_broken_wait_any", lf_event_broken_init,
					    lf_event_broken_set, lf_event_broken_reset, wait_any_broken,
					    &lf_event_broken_test_window_hook, 20 * MS};

#define BROKEN_ENOUGH 3 /* lost wake-ups after which a broken run stops: it is caught */

static unsigned race_rounds(void)
{
	return fb_soak() ? 200000 : 20000; /* 20000: ~1 s plain, ~3 s ASan or TSan */
}

static uint32_t xorshift(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void join(pthread_t t)
{
	assert_int_equal(pthread_join(t, NULL), 0);
}

/* ---- single-thread semantics, timeouts, syscall counts ---- */

static void event_basic_semantics(void **state)
{
	(void)state;
	struct lf_event ev;
	lf_event_init(&ev);
	assert_false(lf_event_is_set(&ev));
	assert_false(lf_event_has_sleepers(&ev));
	assert_int_equal(lf_event_wait(&ev, 0, 0), -ETIMEDOUT);
	lf_event_set(&ev);
	assert_true(lf_event_is_set(&ev));
	lf_event_set(&ev); /* setting a set event changes nothing */
	assert_true(lf_event_is_set(&ev));
	for (int i = 0; i < 3; i++)
		assert_int_equal(lf_event_wait(&ev, 1000, -1), 0);
	lf_event_reset(&ev);
	assert_false(lf_event_is_set(&ev));
	assert_int_equal(lf_event_wait(&ev, 0, 0), -ETIMEDOUT);
	lf_event_reset(&ev); /* resetting a clear event changes nothing */
	assert_false(lf_event_is_set(&ev));
}

static int64_t elapsed_since(uint64_t t0)
{
	return (int64_t)(lf_now_ns() - t0);
}

static void event_and_wake_timeouts(void **state)
{
	(void)state;
	struct lf_event ev;
	lf_event_init(&ev);
	/* Sleep only, spin then sleep, and a spin longer than the timeout: all
	 * return -ETIMEDOUT no earlier than the timeout; the last never sleeps. */
	const struct { uint64_t spin; int64_t timeout; unsigned max_syscalls; } cases[] = {
		{0, 20 * MS, 100}, {1 * MS, 5 * MS, 100}, {50 * MS, 2 * MS, 0}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t t0 = lf_now_ns(), s0 = lf_futex_syscalls();
		assert_int_equal(lf_event_wait(&ev, cases[i].spin, cases[i].timeout), -ETIMEDOUT);
		assert_true(elapsed_since(t0) >= cases[i].timeout);
		assert_true(lf_futex_syscalls() - s0 <= cases[i].max_syscalls);
	}
	assert_false(lf_event_is_set(&ev));

	struct lf_wake w;
	lf_wake_init(&w);
	lf_wake_prepare(&w);
	assert_true(lf_wake_parker_waiting(&w));
	uint64_t t0 = lf_now_ns();
	assert_int_equal(lf_wake_park(&w, 10 * MS), -ETIMEDOUT);
	assert_true(elapsed_since(t0) >= 10 * MS);
	assert_false(lf_wake_parker_waiting(&w)); /* withdrawn on return */
	lf_wake_prepare(&w);
	assert_int_equal(lf_wake_park(&w, 0), -ETIMEDOUT);
	assert_false(lf_wake_parker_waiting(&w));
	/* A notify after prepare makes park return at once, whatever the timeout. */
	lf_wake_prepare(&w);
	assert_true(lf_wake_notify(&w)); /* the parker announced: one wake syscall */
	assert_int_equal(lf_wake_park(&w, -1), 0);
	lf_wake_prepare(&w);
	lf_wake_cancel(&w);
	assert_false(lf_wake_parker_waiting(&w));
}

static void no_sleeper_means_no_syscall(void **state)
{
	(void)state;
	struct lf_event ev;
	struct lf_wake w;
	lf_event_init(&ev);
	lf_wake_init(&w);
	uint64_t s0 = lf_futex_syscalls();
	for (int i = 0; i < 10000; i++) {
		lf_event_set(&ev);
		assert_int_equal(lf_event_wait(&ev, 0, -1), 0);
		lf_event_set(&ev);
		lf_event_reset(&ev);
		assert_false(lf_wake_notify(&w));
		lf_wake_prepare(&w);
		lf_wake_cancel(&w);
		assert_false(lf_wake_notify(&w)); /* cancelled: nobody to wake */
	}
	assert_int_equal(lf_futex_syscalls() - s0, 0);
}

/* ---- a sleeping waiter is woken by exactly one syscall ---- */

struct sleeper_arg {
	struct lf_event *ev;
	int rc;
	uint64_t syscalls;
	_Atomic pid_t tid;   /* published before the wait: await_in_futex reads its state */
};

static void *sleeper_main(void *p)
{
	struct sleeper_arg *a = p;
	atomic_store(&a->tid, (pid_t)syscall(SYS_gettid));
	uint64_t s0 = lf_futex_syscalls();
	a->rc = lf_event_wait(a->ev, 0, SYNC_TIMEOUT_NS);
	a->syscalls = lf_futex_syscalls() - s0;
	return NULL;
}

/* Poll (bounded, sleeping 100 us a time) until every sleeper announced itself. */
static void await_sleepers(struct lf_event *ev)
{
	for (int i = 0; i < 20000 && !lf_event_has_sleepers(ev); i++)
		nanosleep(&(struct timespec){0, 100000}, NULL);
	assert_true(lf_event_has_sleepers(ev));
}

/* Whether thread tid is blocked in futex(2) now (/proc/self/task/TID/syscall
 * starts with the number of the system call a blocked thread is in). */
static bool in_futex(pid_t tid)
{
	char path[64], buf[32] = "";
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool in = fgets(buf, sizeof(buf), f) && atol(buf) == SYS_futex;
	fclose(f);
	return in;
}

/* Poll (bounded: 20 s, 100 us a time) until every sleeper is blocked in the
 * futex: a timed guess ("5 ms is enough") fails on a loaded machine. */
static void await_in_futex(struct sleeper_arg *args, int n)
{
	for (int i = 0; i < n; i++) {
		for (int k = 0; k < 200000; k++) {
			pid_t tid = atomic_load(&args[i].tid);
			if (tid && in_futex(tid))
				break;
			nanosleep(&(struct timespec){0, 100000}, NULL);
		}
		assert_true(in_futex(atomic_load(&args[i].tid)));
	}
}

static void event_wakes_all_sleepers(void **state)
{
	(void)state;
	enum { N = 3 };
	struct lf_event ev;
	lf_event_init(&ev);
	struct sleeper_arg args[N];
	pthread_t t[N];
	for (int i = 0; i < N; i++) {
		args[i] = (struct sleeper_arg){.ev = &ev, .rc = 1};
		assert_int_equal(pthread_create(&t[i], NULL, sleeper_main, &args[i]), 0);
	}
	await_sleepers(&ev);
	await_in_futex(args, N);
	uint64_t s0 = lf_futex_syscalls();
	lf_event_set(&ev);
	assert_int_equal(lf_futex_syscalls() - s0, 1); /* one FUTEX_WAKE for all */
	for (int i = 0; i < N; i++) {
		join(t[i]);
		assert_int_equal(args[i].rc, 0);
		assert_true(args[i].syscalls >= 1);
	}
	/* Set then reset before the sleeper runs: it still returns 0 (the generation moved). */
	lf_event_reset(&ev);
	args[0] = (struct sleeper_arg){.ev = &ev, .rc = 1};
	assert_int_equal(pthread_create(&t[0], NULL, sleeper_main, &args[0]), 0);
	await_sleepers(&ev);
	lf_event_set(&ev);
	lf_event_reset(&ev);
	join(t[0]);
	assert_int_equal(args[0].rc, 0);
}

/* ---- event race: a waiter vs a setter, the set aimed at the announce window ---- */

struct event_race {
	const struct event_ops *ops;
	struct lf_event ev;          /* under test */
	struct lf_event go, done;    /* round sync (the real event) */
	unsigned rounds;
	_Atomic bool stop;
	/* waiter's counts */
	unsigned ran, lost, window_hits, sync_stalls;
	uint64_t waiter_syscalls;
};

static struct event_race *hook_race; /* the race the window hook reports to */

/* Called by every lf_event_wait between deciding to sleep and announcing
 * itself; acts only for the event under test (not the round-sync events). */
static void race_window_hook(struct lf_event *ev)
{
	if (ev != &hook_race->ev)
		return;
	sched_yield(); /* widen the window: a setter on this CPU runs now */
	if (lf_event_is_set(&hook_race->ev)) /* same word layout in the broken object */
		hook_race->window_hits++; /* the set landed inside the window */
}

static void *event_race_waiter(void *p)
{
	struct event_race *x = p;
	uint64_t s0 = lf_futex_syscalls();
	for (unsigned r = 0; r < x->rounds; r++) {
		if (lf_event_wait(&x->go, SYNC_SPIN_NS, SYNC_TIMEOUT_NS)) {
			x->sync_stalls++;
			atomic_store(&x->stop, true);
			break;
		}
		lf_event_reset(&x->go);
		uint64_t spin = (r & 1) ? 0 : 1000; /* both paths: sleep at once, and spin then sleep */
		uint64_t t0 = lf_now_ns();
		int rc = x->ops->wait(&x->ev, spin, x->ops->deadline_ns);
		if (rc != 0 || elapsed_since(t0) >= x->ops->deadline_ns)
			x->lost++; /* the setter sets every round: reaching the deadline is a lost wake-up */
		x->ran++;
		if (x->lost >= BROKEN_ENOUGH)
			atomic_store(&x->stop, true);
		lf_event_set(&x->done);
		if (atomic_load(&x->stop))
			break;
	}
	x->waiter_syscalls = lf_futex_syscalls() - s0;
	return NULL;
}

static void *event_race_setter(void *p)
{
	struct event_race *x = p;
	uint32_t seed = 0x2545f491;
	for (unsigned r = 0; r < x->rounds; r++) {
		x->ops->reset(&x->ev);
		lf_event_set(&x->go);
		lf_spin_ns(xorshift(&seed) % 3000); /* land the set anywhere in the waiter's first ~3 us */
		x->ops->set(&x->ev);
		if (lf_event_wait(&x->done, SYNC_SPIN_NS, SYNC_TIMEOUT_NS)) {
			atomic_store(&x->stop, true);
			break;
		}
		lf_event_reset(&x->done);
		if (atomic_load(&x->stop))
			break;
	}
	return NULL;
}

static void event_race_run(struct event_race *x)
{
	x->ops->init(&x->ev);
	lf_event_init(&x->go);
	lf_event_init(&x->done);
	hook_race = x;
	*x->ops->hook = race_window_hook;
	pthread_t w, s;
	assert_int_equal(pthread_create(&w, NULL, event_race_waiter, x), 0);
	assert_int_equal(pthread_create(&s, NULL, event_race_setter, x), 0);
	join(w);
	join(s);
	*x->ops->hook = NULL;
	printf("[ INFO     ] %s race: rounds=%u lost=%u window_hits=%u waiter_futex_syscalls=%llu sync_stalls=%u\n",
	       x->ops->name, x->ran, x->lost, x->window_hits, (unsigned long long)x->waiter_syscalls,
	       x->sync_stalls);
}

static void event_race_no_lost_wakeups(void **state)
{
	(void)state;
	struct event_race x = {.ops = &good_event, .rounds = race_rounds()};
	event_race_run(&x);
	assert_int_equal(x.sync_stalls, 0);
	assert_int_equal(x.ran, x.rounds);
	assert_int_equal(x.lost, 0);
	assert_true(x.window_hits > 0); /* the dangerous interleaving did happen */
}

static void event_broken_variant_is_caught(void **state)
{
	(void)state;
	struct event_race x = {.ops = &broken_event, .rounds = race_rounds()};
	event_race_run(&x);
	assert_int_equal(x.sync_stalls, 0);
	assert_true(x.lost > 0); /* the test catches the broken event */
}

/* ---- wake word: notifier/parker ping-pong, notify aimed at prepare..park ---- */

struct wake_pingpong {
	const struct wake_ops *ops;
	struct lf_wake wake;   /* under test: the parker sleeps here */
	struct lf_event ack;   /* the parker acknowledges each item (the real event) */
	_Atomic uint64_t posted;
	unsigned rounds;
	_Atomic bool stop;
	/* parker's counts */
	uint64_t consumed;
	unsigned parks, lost, window_hits, empty_wakes;
	/* notifier's counts */
	unsigned ack_stalls;
	uint64_t notify_syscalls;
};

/* The parker's step when it found no work: announce, re-check, park. */
static void wake_park_once(struct wake_pingpong *x)
{
	x->ops->prepare(&x->wake);
	/* The re-check after announcing (acquire: pairs with the notifier's release store). */
	if (atomic_load_explicit(&x->posted, memory_order_acquire) > x->consumed) {
		x->ops->cancel(&x->wake);
		return;
	}
	sched_yield(); /* widen the window between the re-check and park */
	if (atomic_load_explicit(&x->posted, memory_order_relaxed) > x->consumed)
		x->window_hits++; /* the notify landed inside the window */
	x->parks++;
	uint64_t t0 = lf_now_ns();
	int rc = x->ops->park(&x->wake, x->ops->deadline_ns);
	bool work = atomic_load_explicit(&x->posted, memory_order_acquire) > x->consumed;
	if (work && (rc != 0 || elapsed_since(t0) >= x->ops->deadline_ns))
		x->lost++; /* posted and notified, yet the parker slept to its deadline */
	else if (!work && rc == 0)
		x->empty_wakes++;
}

static void *wake_parker(void *p)
{
	struct wake_pingpong *x = p;
	while (x->consumed < x->rounds && !atomic_load(&x->stop)) {
		uint64_t posted = atomic_load_explicit(&x->posted, memory_order_acquire);
		if (posted > x->consumed) {
			x->consumed = posted;
			lf_event_set(&x->ack);
			continue;
		}
		wake_park_once(x);
		if (x->lost >= BROKEN_ENOUGH) {
			atomic_store(&x->stop, true);
			lf_event_set(&x->ack); /* release the notifier */
		}
	}
	return NULL;
}

static void *wake_notifier(void *p)
{
	struct wake_pingpong *x = p;
	uint64_t s0 = lf_futex_syscalls();
	for (uint64_t i = 1; i <= x->rounds && !atomic_load(&x->stop); i++) {
		/* Publish the work (release), then notify. */
		atomic_store_explicit(&x->posted, i, memory_order_release);
		x->ops->notify(&x->wake);
		if (lf_event_wait(&x->ack, SYNC_SPIN_NS, SYNC_TIMEOUT_NS)) {
			x->ack_stalls++;
			atomic_store(&x->stop, true);
			break;
		}
		lf_event_reset(&x->ack);
	}
	x->notify_syscalls = lf_futex_syscalls() - s0;
	return NULL;
}

static void wake_pingpong_run(struct wake_pingpong *x)
{
	x->ops->init(&x->wake);
	lf_event_init(&x->ack);
	pthread_t pk, nt;
	assert_int_equal(pthread_create(&pk, NULL, wake_parker, x), 0);
	assert_int_equal(pthread_create(&nt, NULL, wake_notifier, x), 0);
	join(pk);
	join(nt);
	printf("[ INFO     ] %s ping-pong: rounds=%llu parks=%u lost=%u window_hits=%u empty_wakes=%u "
	       "notifier_futex_syscalls=%llu ack_stalls=%u\n",
	       x->ops->name, (unsigned long long)x->consumed, x->parks, x->lost, x->window_hits, x->empty_wakes,
	       (unsigned long long)x->notify_syscalls, x->ack_stalls);
}

static void wake_pingpong_no_lost_wakeups(void **state)
{
	(void)state;
	struct wake_pingpong x = {.ops = &good_wake, .rounds = race_rounds()};
	wake_pingpong_run(&x);
	assert_int_equal(x.ack_stalls, 0);
	assert_int_equal(x.consumed, x.rounds);
	assert_int_equal(x.lost, 0);
	assert_true(x.window_hits > 0); /* the dangerous interleaving did happen */
}

static void wake_broken_variant_is_caught(void **state)
{
	(void)state;
	struct wake_pingpong x = {.ops = &broken_wake, .rounds = race_rounds()};
	wake_pingpong_run(&x);
	assert_int_equal(x.ack_stalls, 0);
	assert_true(x.lost > 0); /* the test catches the broken wake word */
}

/* ---- wake word: several notifiers, no ack, nothing lost ---- */

struct wake_many {
	struct lf_wake wake;
	_Atomic uint64_t posted;
	uint64_t per_notifier;
	unsigned notifiers;
	uint64_t consumed;
	unsigned parks, lost;
};

static void *wake_many_notifier(void *p)
{
	struct wake_many *x = p;
	uint32_t seed = 0x9e3779b9u ^ (uint32_t)(uintptr_t)&seed;
	for (uint64_t i = 0; i < x->per_notifier; i++) {
		atomic_fetch_add_explicit(&x->posted, 1, memory_order_release); /* publish */
		lf_wake_notify(&x->wake);
		if (!(xorshift(&seed) & 63))
			sched_yield(); /* let the parker drain and park now and then */
	}
	return NULL;
}

static void wake_many_notifiers(void **state)
{
	(void)state;
	enum { K = 3 };
	struct wake_many x = {.per_notifier = race_rounds() * 2u, .notifiers = K};
	lf_wake_init(&x.wake);
	pthread_t t[K];
	for (int i = 0; i < K; i++)
		assert_int_equal(pthread_create(&t[i], NULL, wake_many_notifier, &x), 0);
	const uint64_t total = x.per_notifier * K;
	/* This thread is the parker. */
	while (x.consumed < total) {
		uint64_t posted = atomic_load_explicit(&x.posted, memory_order_acquire);
		if (posted > x.consumed) {
			x.consumed = posted;
			continue;
		}
		lf_wake_prepare(&x.wake);
		if (atomic_load_explicit(&x.posted, memory_order_acquire) > x.consumed) {
			lf_wake_cancel(&x.wake);
			continue;
		}
		x.parks++;
		if (lf_wake_park(&x.wake, good_wake.deadline_ns) == 0)
			continue;
		if (atomic_load(&x.posted) > x.consumed)
			x.lost++; /* posted and notified, yet the parker slept to its deadline */
		else
			break;    /* nothing posted for the whole deadline: stalled, fails below */
	}
	for (int i = 0; i < K; i++)
		join(t[i]);
	printf("[ INFO     ] lf_wake %d notifiers: posted=%llu consumed=%llu parks=%u lost=%u\n", K,
	       (unsigned long long)atomic_load(&x.posted), (unsigned long long)x.consumed, x.parks, x.lost);
	assert_int_equal(x.consumed, total);
	assert_int_equal(x.lost, 0);
}

/* The exported futex: a changed word returns at once, a deadline is kept, a
 * wake ends the sleep, and each call is one counted syscall. */
struct futex_sleeper {
	_Atomic uint32_t word;
	_Atomic int asleep;
	int rc;
};

static void *futex_sleeper_main(void *arg)
{
	struct futex_sleeper *f = arg;
	atomic_store(&f->asleep, 1);
	do
		f->rc = lf_futex_wait_until(&f->word, 0, lf_now_ns() + SYNC_TIMEOUT_NS);
	while (f->rc == 0 && atomic_load(&f->word) == 0);   /* spurious: sleep again */
	return NULL;
}

static void futex_wait_and_wake_exported(void **state)
{
	(void)state;
	_Atomic uint32_t word = 1;
	uint64_t s0 = lf_futex_syscalls();
	assert_int_equal(lf_futex_wait_until(&word, 0, LF_FUTEX_FOREVER), -EAGAIN);
	assert_int_equal(lf_futex_wait_until(&word, 1, lf_now_ns() + MS), -ETIMEDOUT);
	assert_int_equal(lf_futex_syscalls() - s0, 2);

	struct futex_sleeper f = { .word = 0 };
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, futex_sleeper_main, &f), 0);
	while (!atomic_load(&f.asleep))
		sched_yield();
	nanosleep(&(struct timespec){0, 5000000}, NULL); /* let it reach the futex */
	atomic_store(&f.word, 1);
	lf_futex_wake(&f.word, 1);
	join(t);
	assert_true(f.rc == 0 || f.rc == -EAGAIN);   /* woken, or saw the store first */
}

/* ---- waiting for any of several events ---- */

static void *set_later(void *p)
{
	lf_spin_ns(2 * MS);
	lf_event_set(p);
	return NULL;
}

/* The index of the set event; a timeout when none is; bad counts refused;
 * a sleeper woken by a set of the third event from another thread. */
static void event_wait_any_semantics(void **state)
{
	(void)state;
	struct lf_event e[3], *evs[3] = { &e[0], &e[1], &e[2] };
	for (int i = 0; i < 3; i++)
		lf_event_init(&e[i]);
	assert_int_equal(lf_event_wait_any(evs, 3, 0, 0), -ETIMEDOUT);
	assert_int_equal(lf_event_wait_any(evs, 3, 1000, 1 * MS), -ETIMEDOUT);
	assert_int_equal(lf_event_wait_any(evs, 0, 0, 0), -EINVAL);
	assert_int_equal(lf_event_wait_any(evs, LF_EVENT_WAIT_ANY_MAX + 1, 0, 0), -EINVAL);
	lf_event_set(&e[1]);
	assert_int_equal(lf_event_wait_any(evs, 3, 0, 0), 1);
	lf_event_reset(&e[1]);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, set_later, &e[2]), 0);
	assert_int_equal(lf_event_wait_any(evs, 3, 0, 3000 * MS), 2);
	join(t);
	assert_false(lf_event_is_set(&e[0]));
	assert_false(lf_event_is_set(&e[1]));
}

static void event_wait_any_race_no_lost_wakeups(void **state)
{
	(void)state;
	lf_event_init(&never_set);
	struct event_race x = {.ops = &good_any, .rounds = race_rounds()};
	event_race_run(&x);
	assert_int_equal(x.sync_stalls, 0);
	assert_int_equal(x.ran, x.rounds);
	assert_int_equal(x.lost, 0);
	assert_true(x.window_hits > 0);
}

static void event_wait_any_broken_variant_is_caught(void **state)
{
	(void)state;
	lf_event_init(&never_set);
	struct event_race x = {.ops = &broken_any, .rounds = race_rounds()};
	event_race_run(&x);
	assert_int_equal(x.sync_stalls, 0);
	assert_true(x.lost > 0);
}

FB_TEST_MAIN(cmocka_unit_test(event_basic_semantics), cmocka_unit_test(event_and_wake_timeouts),
	     cmocka_unit_test(no_sleeper_means_no_syscall), cmocka_unit_test(event_wakes_all_sleepers),
	     cmocka_unit_test(event_race_no_lost_wakeups), cmocka_unit_test(event_broken_variant_is_caught),
	     cmocka_unit_test(wake_pingpong_no_lost_wakeups), cmocka_unit_test(wake_broken_variant_is_caught),
	     cmocka_unit_test(wake_many_notifiers), cmocka_unit_test(futex_wait_and_wake_exported),
	     cmocka_unit_test(event_wait_any_semantics), cmocka_unit_test(event_wait_any_race_no_lost_wakeups),
	     cmocka_unit_test(event_wait_any_broken_variant_is_caught))
