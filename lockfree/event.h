/* lockfree/event.h — futex-based event (one-shot latch) and wake word (eventcount).
 *
 * What a blocked CPU waiter or a parked GPU engine sleeps on.  Both are one
 * 32-bit futex word (futexes are 32-bit: a 64-bit fence value is never waited
 * on directly, its waiters sleep here).  Both make NO syscall when nobody
 * sleeps: a set or notify is one atomic read-modify-write; the futex wake is
 * issued only when a sleeper announced itself in the word.
 *
 * ---- lf_event: a latch any number of threads wait on ----
 *
 * word = generation << 2 | SLEEPERS (bit 1) | SET (bit 0).  A waiter announces
 * itself by a CAS from the value it judged "not set" to the same value with
 * SLEEPERS, and sleeps on exactly that value: the CAS fails, and the futex
 * wait returns EAGAIN, if a set slipped in, so the decision to sleep is always
 * re-checked against the latest value (no lost wake-up).  lf_event_set clears
 * SLEEPERS, sets SET and bumps the generation in one RMW, then wakes all only
 * if SLEEPERS was set.  A waiter returns 0 when the word is SET or its
 * generation moved since the wait began (set, then reset before it ran).
 * A waiter that times out after sleeping leaves SLEEPERS set (other waiters
 * may still sleep): the next set then makes one wake syscall that may find
 * nobody — an extra wake, never a missed one.
 *
 *   | operation            | caller     | concurrent with           | progress / blocking        |
 *   |----------------------|------------|---------------------------|----------------------------|
 *   | lf_event_init        | owner      | nothing                   | -                          |
 *   | lf_event_set         | any thread | everything but init       | lock-free; futex wake only |
 *   |                      |            |                           | if a waiter sleeps         |
 *   | lf_event_reset       | any thread | everything but init       | wait-free                  |
 *   | lf_event_is_set      | any thread | everything but init       | wait-free                  |
 *   | lf_event_wait        | any thread | everything but init       | spins, then blocks         |
 *
 * ---- lf_wake: a wake word for ONE parker thread and any number of notifiers ----
 *
 * word = epoch << 1 | PARKED (bit 0).  The parker's protocol:
 *
 *     if (have_work()) run();                    // poll as long as you like
 *     lf_wake_prepare(&w);                       // announce: RMW, full barrier
 *     if (have_work()) { lf_wake_cancel(&w); run(); }   // MUST re-check
 *     else lf_wake_park(&w, timeout);            // sleeps unless notified since prepare
 *
 * A notifier publishes the work first, then calls lf_wake_notify.  Store
 * buffering is excluded on both sides by seq_cst RMWs on the same word
 * (ThreadSanitizer does not model atomic_thread_fence, so no standalone
 * fences): the notifier's RMW either precedes the parker's prepare in the
 * word's modification order — then it synchronizes with it and the parker's
 * re-check sees the work — or follows it, and then it sees PARKED, bumps the
 * epoch, clears PARKED and wakes; park returns at once when the epoch moved.
 *
 *   | operation        | caller          | concurrent with               | progress / blocking     |
 *   |------------------|-----------------|-------------------------------|-------------------------|
 *   | lf_wake_init     | owner           | nothing                       | -                       |
 *   | lf_wake_prepare, | the parker      | notify (not each other)       | wait-free               |
 *   |   _cancel        |                 |                               |                         |
 *   | lf_wake_park     | the parker      | notify                        | blocks                  |
 *   | lf_wake_notify   | any thread      | everything but init           | lock-free; futex wake   |
 *   |                  |                 |                               | only if the parker      |
 *   |                  |                 |                               | announced itself        |
 *
 * Spurious futex returns and EINTR are absorbed: every return re-checks the
 * word.  Timeouts are absolute CLOCK_MONOTONIC deadlines (FUTEX_WAIT_BITSET),
 * so retries do not stretch them.
 *
 * Broken variant (tests only): compiling event.c with -DLF_EVENT_BROKEN
 * removes the re-check after announcing a sleeper.  lf_event_wait announces
 * itself with a blind fetch_or and sleeps on whatever that returned, even if
 * it shows SET: a set that landed between the waiter's last check and its
 * announcement found no SLEEPERS bit, woke nobody, and the waiter sleeps until
 * its timeout.  lf_wake_park ignores the epoch recorded by prepare and sleeps
 * on the word's current value: a notify that landed between prepare and park
 * (it already cleared PARKED and woke nobody) is lost.  tests/test_lf_event.c
 * links such an object under the lf_event_broken_ / lf_wake_broken_ prefixes
 * and asserts that it loses wake-ups.  Never link it into anything else.
 */
#ifndef LF_EVENT_H
#define LF_EVENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- event ---- */

struct lf_event {
	_Atomic uint32_t word; /* generation << 2 | SLEEPERS | SET; the futex */
};

/* Initialize to "not set".  Not concurrent with any other use. */
void lf_event_init(struct lf_event *ev);

/* Set the event and wake every sleeper.  Any thread; a seq_cst RMW (full
 * barrier, release: what the caller wrote before is visible to any waiter that
 * returns 0 afterwards).  One futex wake syscall iff a waiter had announced
 * sleep, none otherwise.  Setting a set event changes nothing. */
void lf_event_set(struct lf_event *ev);

/* Clear the event (release).  Any thread.  Waiters already woken by an
 * earlier set still return 0 (the generation moved). */
void lf_event_reset(struct lf_event *ev);

/* Any thread: is the event set now?  Load-acquire, pairs with lf_event_set. */
bool lf_event_is_set(const struct lf_event *ev);

/* Any thread: has a waiter announced that it sleeps (or is about to)?  For
 * tests and benchmarks that want to set only after the waiter went to sleep. */
bool lf_event_has_sleepers(const struct lf_event *ev);

/* Any thread.  Return 0 once the event is set (acquire: pairs with the set),
 * spinning first for up to spin_ns, then sleeping on the futex; -ETIMEDOUT
 * when timeout_ns (from the call) passes first.  timeout_ns < 0 waits forever;
 * timeout_ns == 0 only polls.  Blocking. */
int lf_event_wait(struct lf_event *ev, uint64_t spin_ns, int64_t timeout_ns);

/* Any thread: wait until ANY of evs[0..n) fires (WaitForMultipleObjects with
 * bWaitAll FALSE).  Returns the index of a fired event (the lowest one seen
 * fired; acquire, pairs with its set), -ETIMEDOUT, or -EINVAL (n == 0 or
 * n > LF_EVENT_WAIT_ANY_MAX).  Spins up to spin_ns over all of them, then
 * announces a sleeper on each (the same CAS re-check as lf_event_wait, one
 * event at a time: a set that lands on an event already announced wakes its
 * word, one that lands before fails the CAS) and sleeps on all the words at
 * once (futex_waitv; kernels without it: 1 ms sleeps re-checking every
 * word).  Clears nothing: the caller resets what it consumes.  Blocking. */
#define LF_EVENT_WAIT_ANY_MAX 128
int lf_event_wait_any(struct lf_event *const *evs, size_t n, uint64_t spin_ns, int64_t timeout_ns);

/* Tests only: when non-NULL, called by lf_event_wait (of any event) between
 * deciding to sleep on `ev` and announcing itself (the lost-wake-up window), to
 * widen that window.  Set before the threads that wait start; NULL in every
 * production path. */
extern void (*lf_event_test_window_hook)(struct lf_event *ev);

/* ---- wake word ---- */

struct lf_wake {
	_Atomic uint32_t word; /* epoch << 1 | PARKED; the futex */
	uint32_t parked_epoch; /* parker-private: the epoch (word & ~PARKED) at prepare */
};

void lf_wake_init(struct lf_wake *w);

/* Parker: announce the intent to sleep.  A seq_cst RMW (full barrier after):
 * the caller MUST then re-check its work condition and either cancel or park.
 * Asserts that no announcement is pending (one parker, no double prepare). */
void lf_wake_prepare(struct lf_wake *w);

/* Parker: the re-check found work; withdraw the announcement, do not sleep. */
void lf_wake_cancel(struct lf_wake *w);

/* Parker, after prepare: sleep until a notify that happened after prepare
 * (return at once if one already did) — 0, with acquire ordering against that
 * notify — or until timeout_ns passes: -ETIMEDOUT (timeout_ns < 0: forever;
 * 0: no sleep).  The announcement is withdrawn on return either way.  Blocking. */
int lf_wake_park(struct lf_wake *w, int64_t timeout_ns);

/* Any thread, AFTER publishing the work: a seq_cst RMW (full barrier), then,
 * only if the parker announced sleep, bump the epoch and futex-wake it.
 * Returns true iff it made a syscall.  Lock-free (a CAS retry only when the
 * parker or another notifier changed the word at the same time). */
bool lf_wake_notify(struct lf_wake *w);

/* Any thread: has the parker announced sleep and not yet been notified? */
bool lf_wake_parker_waiting(const struct lf_wake *w);

/* ---- the futex itself, for protocols of their own ---- */

/* The two syscalls lf_event and lf_wake are built on, for code that keeps its
 * own futex word and protocol (the machine-limit probe of wake-to-run
 * latency).  Private futexes: threads of one process only.  Neither has a
 * memory-ordering effect of its own: the caller publishes with its own
 * atomics before waking, and re-checks its word after every return. */

/* lf_futex_wait_until's "no deadline". */
#define LF_FUTEX_FOREVER UINT64_MAX

/* Sleep while *word == expected (compared atomically by the kernel with the
 * sleep, so a change plus wake that came first makes it return at once), until
 * woken or `deadline_ns` (absolute lf_now_ns()/CLOCK_MONOTONIC time;
 * LF_FUTEX_FOREVER: none).  0 (woken, maybe spuriously), -EAGAIN (*word !=
 * expected), -EINTR or -ETIMEDOUT.  Any thread; blocks. */
int lf_futex_wait_until(_Atomic uint32_t *word, uint32_t expected, uint64_t deadline_ns);

/* Wake up to n threads sleeping on word.  Any thread; one syscall, never blocks. */
void lf_futex_wake(_Atomic uint32_t *word, int n);

/* ---- accounting ---- */

/* Futex syscalls (waits and wakes, any result) made by the calling thread
 * through this module so far.  Thread-local; wait-free. */
uint64_t lf_futex_syscalls(void);

#endif
