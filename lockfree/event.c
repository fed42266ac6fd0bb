/* lockfree/event.c — futex event and wake word.  Contract in event.h. */
#include "lockfree/event.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lockfree/arch.h"

#define LF_EVENT_SET      1u
#define LF_EVENT_SLEEPERS 2u
#define LF_EVENT_GEN      4u /* generation unit: bits 2..31 */

#define LF_WAKE_PARKED 1u
#define LF_WAKE_EPOCH  2u /* epoch unit: bits 1..31 */

#define LF_NO_DEADLINE LF_FUTEX_FOREVER

void (*lf_event_test_window_hook)(struct lf_event *ev);

/* Per-thread count of futex syscalls: no shared line touched on any path. */
static _Thread_local uint64_t lf_futex_calls;

uint64_t lf_futex_syscalls(void)
{
	return lf_futex_calls;
}

/* ---- futex primitives (private: threads of one process) ---- */

/* An absolute CLOCK_MONOTONIC deadline as the futex calls take it: ts, or
 * NULL for LF_NO_DEADLINE (no timeout). */
static struct timespec *lf_deadline_ts(uint64_t deadline, struct timespec *ts)
{
	if (deadline == LF_NO_DEADLINE)
		return NULL;
	ts->tv_sec = (time_t)(deadline / 1000000000u);
	ts->tv_nsec = (long)(deadline % 1000000000u);
	return ts;
}

/* Callers loop and re-check the word, so every result is safe. */
int lf_futex_wait_until(_Atomic uint32_t *word, uint32_t expected, uint64_t deadline)
{
	struct timespec ts, *tsp = lf_deadline_ts(deadline, &ts);
	lf_futex_calls++;
	/* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC timeout. */
	long rc = syscall(SYS_futex, word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, expected, tsp, NULL,
			  FUTEX_BITSET_MATCH_ANY);
	return rc == 0 ? 0 : -errno;
}

void lf_futex_wake(_Atomic uint32_t *word, int n)
{
	lf_futex_calls++;
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

static uint64_t lf_deadline(uint64_t now, int64_t timeout_ns)
{
	if (timeout_ns < 0)
		return LF_NO_DEADLINE;
	return now + (uint64_t)timeout_ns;
}

/* ---- event ---- */

void lf_event_init(struct lf_event *ev)
{
	atomic_init(&ev->word, 0);
}

void lf_event_set(struct lf_event *ev)
{
	uint32_t old = atomic_load_explicit(&ev->word, memory_order_relaxed);
	uint32_t next;
	do {
		/* Already set: rewrite the same value, so the RMW still releases
		 * what this caller wrote to later waiters.  Otherwise set SET, clear
		 * SLEEPERS (they are all woken below) and move the generation. */
		next = (old & LF_EVENT_SET) ? old : (((old & ~LF_EVENT_SLEEPERS) + LF_EVENT_GEN) | LF_EVENT_SET);
		/* seq_cst RMW: totally ordered with the waiters' announcing CAS on
		 * this word, so either they see SET or we see SLEEPERS. */
	} while (!atomic_compare_exchange_weak_explicit(&ev->word, &old, next, memory_order_seq_cst,
							memory_order_relaxed));
	if (old & LF_EVENT_SLEEPERS)
		lf_futex_wake(&ev->word, INT_MAX);
}

void lf_event_reset(struct lf_event *ev)
{
	/* Clears SET only; release orders the caller's earlier writes before it.
	 * SLEEPERS is never set together with SET, so nothing else changes. */
	atomic_fetch_and_explicit(&ev->word, ~LF_EVENT_SET, memory_order_release);
}

bool lf_event_is_set(const struct lf_event *ev)
{
	/* Acquire pairs with the set's RMW. */
	return atomic_load_explicit((_Atomic uint32_t *)&ev->word, memory_order_acquire) & LF_EVENT_SET;
}

bool lf_event_has_sleepers(const struct lf_event *ev)
{
	return atomic_load_explicit((_Atomic uint32_t *)&ev->word, memory_order_relaxed) & LF_EVENT_SLEEPERS;
}

/* Has the event fired since the wait began with word value `start`? */
static inline bool lf_event_fired(uint32_t w, uint32_t start)
{
	return (w & LF_EVENT_SET) || ((w ^ start) & ~(LF_EVENT_GEN - 1));
}

/* Spin until fired or `until`; returns true when fired. */
static bool lf_event_spin(struct lf_event *ev, uint32_t start, uint64_t until)
{
	for (unsigned i = 1;; i++) {
		/* Acquire pairs with the set's RMW. */
		if (lf_event_fired(atomic_load_explicit(&ev->word, memory_order_acquire), start))
			return true;
		lf_cpu_relax();
		if (!(i & 7) && lf_now_ns() >= until)
			return false;
	}
}

/* Announce a sleeper on a word `w` judged not fired.  Returns the value to
 * sleep on, or 0 when the word changed under us and must be re-checked
 * (0 is never a valid sleep value: it lacks SLEEPERS). */
static uint32_t lf_event_announce(struct lf_event *ev, uint32_t w)
{
	if (w & LF_EVENT_SLEEPERS)
		return w; /* another waiter already announced this generation */
	if (lf_event_test_window_hook)
		lf_event_test_window_hook(ev);
#ifdef LF_EVENT_BROKEN
	/* BROKEN on purpose: announce blindly and sleep on whatever was there,
	 * without re-checking it for SET.  A set that landed since `w` was read
	 * saw no SLEEPERS, woke nobody, and this value matches: we sleep to the
	 * deadline. */
	return atomic_fetch_or_explicit(&ev->word, LF_EVENT_SLEEPERS, memory_order_seq_cst) | LF_EVENT_SLEEPERS;
#else
	/* seq_cst CAS from exactly the value judged "not set": fails if a set
	 * (or anything) came in between — the re-check after announcing.  Pairs
	 * with the RMW in lf_event_set. */
	if (!atomic_compare_exchange_strong_explicit(&ev->word, &w, w | LF_EVENT_SLEEPERS, memory_order_seq_cst,
						     memory_order_acquire))
		return 0;
	return w | LF_EVENT_SLEEPERS;
#endif
}

int lf_event_wait(struct lf_event *ev, uint64_t spin_ns, int64_t timeout_ns)
{
	/* Acquire pairs with the set's RMW. */
	uint32_t start = atomic_load_explicit(&ev->word, memory_order_acquire);
	if (start & LF_EVENT_SET)
		return 0;
	if (timeout_ns == 0)
		return -ETIMEDOUT;
	uint64_t now = lf_now_ns();
	uint64_t deadline = lf_deadline(now, timeout_ns);
	if (spin_ns) {
		uint64_t until = now + spin_ns < deadline ? now + spin_ns : deadline;
		if (lf_event_spin(ev, start, until))
			return 0;
		if (until == deadline)
			return -ETIMEDOUT; /* spun to the deadline: no need to announce or sleep */
	}
	bool timed_out = false;
	for (;;) {
		uint32_t w = atomic_load_explicit(&ev->word, memory_order_acquire);
		if (lf_event_fired(w, start))
			return 0;
		if (timed_out)
			return -ETIMEDOUT;
		uint32_t sleep_on = lf_event_announce(ev, w);
		if (!sleep_on)
			continue; /* changed under us: re-check */
		/* EAGAIN (changed), EINTR, spurious 0: loop and re-check. */
		if (lf_futex_wait_until(&ev->word, sleep_on, deadline) == -ETIMEDOUT)
			timed_out = true;
	}
}

/* ---- waiting for any of several events ---- */

/* The first of evs fired since its start value, or -1.  Acquire loads. */
static int lf_event_first_fired(struct lf_event *const *evs, size_t n, const uint32_t *start)
{
	for (size_t i = 0; i < n; i++)
		if (lf_event_fired(atomic_load_explicit(&evs[i]->word, memory_order_acquire), start[i]))
			return (int)i;
	return -1;
}

/* Announce a sleeper on every word; false when one changed under us. */
static bool lf_event_announce_all(struct lf_event *const *evs, size_t n, const uint32_t *start,
				  struct futex_waitv *wv)
{
	for (size_t i = 0; i < n; i++) {
		/* judged on the value announced on, as lf_event_wait does */
		uint32_t w = atomic_load_explicit(&evs[i]->word, memory_order_acquire);
		if (lf_event_fired(w, start[i]))
			return false;
		uint32_t s = lf_event_announce(evs[i], w);
		if (!s)
			return false;
		wv[i] = (struct futex_waitv){ .val = s, .uaddr = (uintptr_t)&evs[i]->word,
					      .flags = FUTEX_32 | FUTEX_PRIVATE_FLAG };
	}
	return true;
}

/* Sleep on every word of wv until one changes or the deadline: 0, -EAGAIN,
 * -ETIMEDOUT, ... (callers re-check).  Without futex_waitv: a 1 ms nap. */
static int lf_futex_waitv_until(struct futex_waitv *wv, size_t n, uint64_t deadline)
{
	struct timespec ts, *tsp = lf_deadline_ts(deadline, &ts);
	lf_futex_calls++;
	long rc = syscall(SYS_futex_waitv, wv, (unsigned)n, 0, tsp, CLOCK_MONOTONIC);
	if (rc >= 0)
		return 0;
	if (errno != ENOSYS)
		return -errno;
	uint64_t now = lf_now_ns(), until = now + 1000000u < deadline ? now + 1000000u : deadline;
	struct timespec nap = { 0, (long)(until - now) };
	nanosleep(&nap, NULL);
	return lf_now_ns() >= deadline ? -ETIMEDOUT : 0;
}

int lf_event_wait_any(struct lf_event *const *evs, size_t n, uint64_t spin_ns, int64_t timeout_ns)
{
	if (n == 0 || n > LF_EVENT_WAIT_ANY_MAX)
		return -EINVAL;
	uint32_t start[LF_EVENT_WAIT_ANY_MAX];
	for (size_t i = 0; i < n; i++) {
		start[i] = atomic_load_explicit(&evs[i]->word, memory_order_acquire);
		if (start[i] & LF_EVENT_SET)
			return (int)i;
	}
	if (timeout_ns == 0)
		return -ETIMEDOUT;
	uint64_t now = lf_now_ns();
	uint64_t deadline = lf_deadline(now, timeout_ns);
	for (uint64_t until = now + spin_ns; spin_ns && lf_now_ns() < until && lf_now_ns() < deadline;) {
		int i = lf_event_first_fired(evs, n, start);
		if (i >= 0)
			return i;
		lf_cpu_relax();
	}
	struct futex_waitv wv[LF_EVENT_WAIT_ANY_MAX];
	bool timed_out = false;
	for (;;) {
		int i = lf_event_first_fired(evs, n, start);
		if (i >= 0)
			return i;
		if (timed_out)
			return -ETIMEDOUT;
		if (!lf_event_announce_all(evs, n, start, wv))
			continue; /* a word changed under us: re-check */
		/* EAGAIN (a word changed), EINTR, spurious 0: loop and re-check. */
		if (lf_futex_waitv_until(wv, n, deadline) == -ETIMEDOUT)
			timed_out = true;
	}
}

/* ---- wake word ---- */

void lf_wake_init(struct lf_wake *w)
{
	atomic_init(&w->word, 0);
	w->parked_epoch = 0;
}

void lf_wake_prepare(struct lf_wake *w)
{
	/* seq_cst RMW: the full barrier between announcing PARKED and the
	 * caller's re-check of its work; pairs with the RMW in lf_wake_notify. */
	uint32_t old = atomic_fetch_or_explicit(&w->word, LF_WAKE_PARKED, memory_order_seq_cst);
	assert(!(old & LF_WAKE_PARKED) && "lf_wake_prepare: announcement already pending (two parkers?)");
	w->parked_epoch = old & ~LF_WAKE_PARKED;
}

void lf_wake_cancel(struct lf_wake *w)
{
	/* Withdraw; a notifier that already saw PARKED just makes one needless wake. */
	atomic_fetch_and_explicit(&w->word, ~LF_WAKE_PARKED, memory_order_relaxed);
}

/* After a timeout: withdraw, and report a notify that raced with it as a wake. */
static int lf_wake_timed_out(struct lf_wake *w)
{
	uint32_t v = atomic_fetch_and_explicit(&w->word, ~LF_WAKE_PARKED, memory_order_acquire);
	return (v & ~LF_WAKE_PARKED) != w->parked_epoch ? 0 : -ETIMEDOUT;
}

#ifdef LF_EVENT_BROKEN
int lf_wake_park(struct lf_wake *w, int64_t timeout_ns)
{
	/* BROKEN on purpose: sleeps on the word as it is now, never comparing
	 * the epoch with the one recorded by prepare.  A notify that came in
	 * between already bumped the epoch, cleared PARKED and woke nobody. */
	uint64_t deadline = lf_deadline(lf_now_ns(), timeout_ns);
	for (;;) {
		uint32_t v = atomic_load_explicit(&w->word, memory_order_acquire);
		int rc = lf_futex_wait_until(&w->word, v, deadline);
		if (rc == 0)
			return 0;
		if (rc == -ETIMEDOUT)
			return lf_wake_timed_out(w);
	}
}
#else
int lf_wake_park(struct lf_wake *w, int64_t timeout_ns)
{
	uint64_t deadline = timeout_ns > 0 ? lf_deadline(lf_now_ns(), timeout_ns) : LF_NO_DEADLINE;
	for (;;) {
		/* Acquire pairs with the notifier's RMW: its work is visible. */
		uint32_t v = atomic_load_explicit(&w->word, memory_order_acquire);
		if ((v & ~LF_WAKE_PARKED) != w->parked_epoch)
			return 0; /* notified after prepare; the notifier cleared PARKED */
		assert(v & LF_WAKE_PARKED);
		if (timeout_ns == 0)
			return lf_wake_timed_out(w);
		/* EAGAIN (notified meanwhile), EINTR, spurious 0: loop and re-check. */
		if (lf_futex_wait_until(&w->word, v, deadline) == -ETIMEDOUT)
			return lf_wake_timed_out(w);
	}
}
#endif

bool lf_wake_notify(struct lf_wake *w)
{
	/* A seq_cst RMW that changes nothing: the full barrier between the
	 * caller's publication of work and our read of PARKED (store buffering:
	 * pairs with the RMW in lf_wake_prepare).  Not a fence: TSan models RMWs. */
	uint32_t v = atomic_fetch_add_explicit(&w->word, 0, memory_order_seq_cst);
	while (v & LF_WAKE_PARKED) {
		/* Bump the epoch and withdraw PARKED in one step, so exactly one
		 * notifier wakes the parker per announcement. */
		uint32_t next = (v & ~LF_WAKE_PARKED) + LF_WAKE_EPOCH;
		if (atomic_compare_exchange_weak_explicit(&w->word, &v, next, memory_order_seq_cst,
							  memory_order_relaxed)) {
			lf_futex_wake(&w->word, 1);
			return true;
		}
	}
	return false;
}

bool lf_wake_parker_waiting(const struct lf_wake *w)
{
	return atomic_load_explicit((_Atomic uint32_t *)&w->word, memory_order_relaxed) & LF_WAKE_PARKED;
}
