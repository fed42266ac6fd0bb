/* lockfree/waitset.h — the waiter set of one fence: lock-free adds and
 * cancels, one consumer that releases, and the published least waited value.
 *
 * Many threads add "wake me when the value reaches V" waiters; ONE consumer
 * (the OS interrupt handler) releases every waiter whose value is reached and
 * publishes the threshold:
 *
 *     threshold = (least value still waited for) - 1,  or UINT64_MAX if none
 *
 * which is the native fence's MonitoredValue: a signal of value c needs an
 * interrupt iff c > threshold.  The threshold word lives where the caller
 * says (the fence storage page) or inside the set.
 *
 * THE INVARIANT.  After lf_waitset_add(w) returns, either w has been released
 * or the published threshold is <= w->value - 1.  The only exception is while
 * the consumer is inside lf_waitset_release, which may raise the threshold
 * transiently (the raise window below, announced to signalers by `raising`)
 * but, before it returns, restores the invariant for every add that
 * completed before it returns.  Cancelled waiters may keep the threshold
 * low until a release prunes them (an extra interrupt, never a missed one).
 *
 * How.  Adders push the node on a Treiber stack (CAS on the head) and then
 * lower the threshold with a CAS-min loop: only adders lower it (strictly),
 * only the consumer raises it.  The consumer, in rounds:
 *   1. loads the threshold t0;
 *   2. takes the whole stack (exchange with NULL) and merges it into a
 *      private pairing heap, dropping cancelled nodes (lazy deletion);
 *   3. releases every heap waiter with value <= the released value;
 *   4. publishes the new least by CAS(t0 -> least): a failed CAS means an
 *      adder lowered the threshold after step 1, so its node may be on the
 *      stack: next round.  A CAS that succeeds overwrote no adder's lowering
 *      (adders only write strictly smaller values, so "still t0" means
 *      "nobody wrote");
 *   5. if the CAS raised the threshold, re-loads the stack head and runs
 *      another round if it is not empty.  An adder that pushed after step 2
 *      and then read a threshold low enough to need no write is caught here:
 *      its push and our CAS are both seq_cst RMWs and its threshold read comes
 *      before our CAS in the total order, so our re-load sees its node
 *      (store-buffering argument; without step 5 the raise would strand it).
 * No ABA: the stack has pushes and one whole-stack exchange, never a pop.
 * A push's CAS only needs "the head is still the node I linked below mine";
 * if the head went away and came back (taken, released, re-added by its
 * owner), linking below it is still exactly right, because the push never
 * reads any node's next.  ABA bites pops that read head->next; the single
 * consumer takes the whole list with an exchange and reads the links only
 * after it owns them.
 *
 * The OS resample rule (seed: "after changing MV ... resample CV").  Both
 * lf_waitset_add and lf_waitset_release publish through seq_cst RMWs (add:
 * its push, then the CAS-min that lowers the threshold or, when it lowers
 * nothing, the RMW on `adds`, so its last RMW is not always on the
 * threshold; release: its CAS), so the caller may then load the fence's
 * CurrentValue (seq_cst): either the GPU's CMP sees the new threshold or
 * the caller sees the new CurrentValue.  The caller of add that then finds
 * CurrentValue >= w->value satisfies the wait itself (cancel the node; if
 * the cancel fails the release got there first).  The caller of release
 * compares CurrentValue with the threshold published now (not with the value
 * it released) after EVERY release call, and releases again while
 * CurrentValue is above it: the threshold may have been lowered by adds
 * during the call, and a CMP may have judged a signal against a raise of the
 * call (the raise window below).
 *
 * The raise window.  Between a raising CAS (step 4) and the round that takes
 * an add which pushed after step 2 and found the old threshold low enough
 * (step 5's re-check, then the next round), the published threshold is above
 * that add's value - 1 although its add returned.  No single-word protocol
 * closes it while adds stay lock-free: the add's "low enough" read and the
 * consumer's raise are on one word, its push on another.  So the window is
 * announced instead: the consumer makes `raising` odd (seq_cst store) before
 * its first raising CAS of a call, and even again (seq_cst store) after its
 * last publication and its waiters' callbacks.  A signaler that wrote value
 * v (seq_cst RMW) calls lf_waitset_signal_needs_release: loads r0 = raising,
 * then the threshold t, then raising again (all seq_cst); it may skip the
 * release only if t >= v and r0 is even and unchanged.  Why that is safe:
 * let W be an add that returned before the signaler's write, with
 * W->value <= v, not released.  If t > W->value - 1, some raising CAS R put
 * t there after W's threshold read (a read after R would have seen the raise
 * and lowered it below), and R precedes the signaler's t load.  R lies inside
 * an odd section opened before R; the section cannot contain the t load (r0
 * or the second load would be odd or differ), so it closed before r0.  Inside
 * it, after R, the re-check saw W's push (W's push and threshold read both
 * precede R in the seq_cst order: store buffering), so a later round of the
 * section took W and published a threshold <= W->value - 1, or released W;
 * only another raising section could raise it again before t, and none
 * overlaps.  So t <= W->value - 1 < v: contradiction.  A signaler that is
 * told to release takes the consumer's role (under the caller's lock, after
 * the release in progress) and releases against its own write.  The GPU's
 * CMP cannot take part: a signal it judges against a transient raise is
 * caught by the consumer's resample after the window (the resample rule),
 * unless a rewind overwrote the value before that resample: then that GPU
 * write releases nobody (a known limit of the lock-free add; a CPU signal,
 * and a GPU signal with no rewind behind it, are covered).
 * tests/model/waitset.pml checks the add, the rounds and the CPU signalers
 * exhaustively (and finds the signaler that trusts the threshold alone);
 * tests/test_fence_release_window.c pins the window with the hook below.
 *
 * Nodes: the caller allocates them (the fence stack uses lf_alloc) and owns
 * them until add; from add until released (cb) or cancelled the set holds
 * them; cancelled nodes are passed to the set's reclaim callback, by the
 * consumer or by lf_waitset_destroy.
 *
 * Synchronization (who may run concurrently with whom):
 *
 *   | operation              | caller                | concurrent with                  | progress  |
 *   |------------------------|-----------------------|----------------------------------|-----------|
 *   | lf_waitset_add         | any thread            | add, cancel, release, threshold  | lock-free |
 *   | lf_waitset_cancel      | the waiter's owner    | add, cancel, release, threshold  | wait-free |
 *   | lf_waitset_threshold   | any thread            | everything                       | wait-free |
 *   | lf_waitset_signal_needs_release | any thread   | everything                       | wait-free |
 *   | lf_waitset_release     | the consumer only (*) | add, cancel, threshold           | lock-free (rounds repeat only when adders interfere) |
 *   | lf_waitset_empty       | the consumer only     | add, cancel, threshold           | wait-free |
 *   | lf_waitset_init,       | one owner             | nothing                          | blocking  |
 *   |   _destroy             |                       |                                  |           |
 *
 * (*) One consumer at a time, not necessarily the same thread: threads that
 * share the role serialize it (a lock whose release/acquire hands the
 * consumer's private heap from one to the next; the fence stack lets the
 * interrupt thread and CPU signalers take turns that way).
 *
 * Broken variant (tests only): compiled with -DLF_WAITSET_BROKEN, release
 * publishes with a plain store after a 10 us spin and a sched_yield() (to
 * widen the window) and never re-checks the stack, so an add running
 * meanwhile is overwritten or stranded.
 * tests/test_lf_waitset.c compiles that variant into itself under the
 * lf_waitset_broken_ prefix and asserts its validation catches it.  (The
 * same validation, tried by hand, also catches dropping only step 5, with no
 * yield to help, and adders lowering with load/compare/store in about half
 * the runs.)
 */
#ifndef LF_WAITSET_H
#define LF_WAITSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lockfree/cacheline.h"

enum { LF_WAITER_WAITING, LF_WAITER_RELEASED, LF_WAITER_CANCELLED };

struct lf_waiter {
	uint64_t value;             /* released once the value reaches this; >= 1 */
	uint64_t since;             /* the caller's epoch at registration: only a release of a later
				       epoch (> since) takes it (lf_waitset_release_before); 0: any */
	_Atomic uint32_t state;     /* LF_WAITER_*: WAITING -> RELEASED | CANCELLED, by CAS */
	struct lf_waiter *next;     /* private to the set while held: stack link, then heap sibling */
	void *ctx;                  /* the caller's (the waiting thread, its event) */
	struct lf_waiter *child;    /* private: first child in the consumer's pairing heap */
};

struct lf_waitset {
	/* Adders' line: the stack every add CASes and the consumer exchanges. */
	_Atomic(struct lf_waiter *) stack LF_ALIGNED;
	_Atomic uint64_t *threshold;        /* the published word; set at init, read-only after */
	_Atomic uint64_t adds;              /* statistic; also the RMW target of an add that lowers nothing */
	/* Signalers' line: the internal threshold word (when init got NULL) and
	 * the raise sequence, both polled by signalers. */
	_Atomic uint64_t threshold_own LF_ALIGNED;
	_Atomic uint64_t raising;           /* odd while a release that raised may still hide an add */
	_Atomic uint64_t unsettled;         /* statistic: signals sent to the slow path by `raising` */
	/* Consumer's line: private state of lf_waitset_release. */
	struct lf_waiter *heap LF_ALIGNED;  /* pairing heap of held nodes, least value at the root */
	size_t held;                        /* nodes in the heap (waiting or cancelled) */
	uint64_t rounds;                    /* release rounds run (statistic) */
	void (*reclaim)(struct lf_waiter *w, void *arg);
	void *reclaim_arg;
};

LF_ASSERT_OWN_LINE(struct lf_waitset, stack);
LF_ASSERT_OWN_LINE(struct lf_waitset, threshold_own);
LF_ASSERT_OWN_LINE(struct lf_waitset, heap);

/* Initialize an empty set; the threshold word is set to UINT64_MAX.
 * threshold: where to publish (e.g. the fence's MonitoredValue), or NULL for
 * an internal word.  reclaim(w, reclaim_arg) receives every cancelled node
 * (it must not call into the set; NULL: nothing to do).  One owner, before
 * any other use. */
void lf_waitset_init(struct lf_waitset *ws, _Atomic uint64_t *threshold,
		     void (*reclaim)(struct lf_waiter *w, void *arg), void *reclaim_arg);

/* Pass every node still held (waiting or cancelled) to reclaim, and reset the
 * threshold to UINT64_MAX.  Nothing else may use the set any more. */
void lf_waitset_destroy(struct lf_waitset *ws);

/* Add w (w->value >= 1, asserted; ctx set by the caller; other fields are
 * written here).  Any thread; lock-free.  Publishes w (release) and makes
 * threshold <= w->value - 1 unless it already was.  Returns true iff this
 * call lowered the threshold.  Ends with a seq_cst RMW: the caller may then
 * resample the fence's CurrentValue (see the resample rule above).
 * From here on w belongs to the set until released or cancelled. */
bool lf_waitset_add(struct lf_waitset *ws, struct lf_waiter *w);

/* The waiter's owner gives up on w (timeout, or it saw the value itself).
 * true: cancelled; the set now owns w and passes it to reclaim later; the
 * owner must not touch w again.  false: w was released already: the release
 * callback has run or is running for it.  Wait-free (one CAS, acq_rel). */
bool lf_waitset_cancel(struct lf_waitset *ws, struct lf_waiter *w);

/* The consumer only.  Release every held waiter with w->value <= value: CAS
 * WAITING -> RELEASED; cancelled nodes met are passed to reclaim; publish the
 * new threshold (see the rounds above); THEN cb(w, arg) for each released
 * waiter (after cb returns the set never touches w again; cb must not call
 * into the set).  Waking after publishing means a woken waiter's next wait,
 * and the GPU signal it triggers, never meet the retired waiter's stale
 * threshold (that would be a spurious interrupt).  Returns
 * the number released.  Lock-free; its cost is O(new nodes + released nodes
 * * log held).  A raise is published by a seq_cst CAS: the caller then
 * resamples CurrentValue (seq_cst) and releases again if it moved on. */
size_t lf_waitset_release(struct lf_waitset *ws, uint64_t value,
			  void (*cb)(struct lf_waiter *w, void *arg), void *arg);

/* As lf_waitset_release, for the waiters registered before `epoch` only:
 * those with w->value <= value AND w->since < epoch.  The others stay held
 * (and keep the threshold where they put it).  Epochs are the caller's: a
 * fence uses the sequence of writes to its value, so a release carrying the
 * value of write s never takes a waiter that registered after reading write
 * s or a later one (seed multi-engine-synchronization: "any new waits ...
 * will be compared against the new lower fence value").
 * lf_waitset_release(ws, v, cb, arg) is lf_waitset_release_before(ws, v,
 * UINT64_MAX, cb, arg).  Cost: also O(skipped * log held) per call, for
 * the waiters with value <= value but a later epoch. */
size_t lf_waitset_release_before(struct lf_waitset *ws, uint64_t value, uint64_t epoch,
				 void (*cb)(struct lf_waiter *w, void *arg), void *arg);

/* A signaler that just wrote `value` into the fence (a seq_cst RMW) asks
 * whether it must release (take the consumer's role, under the caller's
 * lock, against its own write): true when the threshold is below value, and
 * also when a raising release ran at any moment of this call (the raise
 * sequence above), since the threshold it read may then be a transient
 * raise hiding a registered waiter.  false: every waiter whose add returned
 * before the caller's write is above value (or released).  Any thread;
 * three seq_cst loads; wait-free. */
bool lf_waitset_signal_needs_release(struct lf_waitset *ws, uint64_t value);

/* Statistic: how often lf_waitset_signal_needs_release sent a signaler to
 * the slow path only because a raising release was in progress. */
uint64_t lf_waitset_unsettled(const struct lf_waitset *ws);

/* Tests only: when set, the consumer calls it at the two edges of a raise:
 * LF_WAITSET_HOOK_RAISE just before the raising CAS (its exchange is done:
 * an add now pushes after it and finds the old, lower threshold), and
 * LF_WAITSET_HOOK_RAISED just after it, before the stack re-check (the
 * window in which the raise hides such an add).  Set before the threads
 * that use the set start; NULL in every production path. */
enum lf_waitset_hook_at { LF_WAITSET_HOOK_RAISE, LF_WAITSET_HOOK_RAISED };
extern void (*lf_waitset_test_hook)(struct lf_waitset *ws, enum lf_waitset_hook_at at);

/* The published threshold (least waited value - 1, or UINT64_MAX).
 * Any thread; a seq_cst load (a signaler's "does anyone wait?" after its
 * seq_cst value write pairs with an add + resample); wait-free. */
uint64_t lf_waitset_threshold(const struct lf_waitset *ws);

/* The consumer only: true when no node is pending on the stack or held in the
 * heap (cancelled nodes not yet reclaimed count as held). */
bool lf_waitset_empty(struct lf_waitset *ws);

#endif
