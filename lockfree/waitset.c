/* lockfree/waitset.c — a fence's waiter set: Treiber stack in, pairing heap
 * out, threshold published by CAS.  The proof is in waitset.h. */
#include "lockfree/waitset.h"

#include <assert.h>
#include <stdatomic.h>
#ifdef LF_WAITSET_BROKEN
#include <sched.h>

#include "lockfree/arch.h"
#endif

void (*lf_waitset_test_hook)(struct lf_waitset *ws, enum lf_waitset_hook_at at);

void lf_waitset_init(struct lf_waitset *ws, _Atomic uint64_t *threshold,
		     void (*reclaim)(struct lf_waiter *w, void *arg), void *reclaim_arg)
{
	atomic_init(&ws->stack, NULL);
	atomic_init(&ws->adds, 0);
	atomic_init(&ws->threshold_own, UINT64_MAX);
	atomic_init(&ws->raising, 0);
	atomic_init(&ws->unsettled, 0);
	ws->threshold = threshold ? threshold : &ws->threshold_own;
	/* Nobody waits yet.  Release: the set is handed to other threads after this. */
	atomic_store_explicit(ws->threshold, UINT64_MAX, memory_order_release);
	ws->heap = NULL;
	ws->held = 0;
	ws->rounds = 0;
	ws->reclaim = reclaim;
	ws->reclaim_arg = reclaim_arg;
}

/* ---- the consumer's private pairing heap (min by value), intrusive ----
 * A heap root has next == NULL; children hang off child, linked by next. */

static struct lf_waiter *lf_heap_meld(struct lf_waiter *a, struct lf_waiter *b)
{
	struct lf_waiter *t;

	if (!a)
		return b;
	if (!b)
		return a;
	if (b->value < a->value) {
		t = a;
		a = b;
		b = t;
	}
	b->next = a->child;
	a->child = b;
	return a;
}

/* Remove `root` from its heap; return the heap of its children (two-pass pairing). */
static struct lf_waiter *lf_heap_pop(struct lf_waiter *root)
{
	struct lf_waiter *c = root->child, *pairs = NULL, *h = NULL;

	/* Pass 1: meld the children two by two, left to right; the pairs are
	 * stacked, so pass 2 walks them right to left. */
	while (c) {
		struct lf_waiter *a = c, *b = c->next, *m;
		c = b ? b->next : NULL;
		a->next = NULL;
		if (b)
			b->next = NULL;
		m = lf_heap_meld(a, b);
		m->next = pairs;
		pairs = m;
	}
	while (pairs) {
		struct lf_waiter *m = pairs;
		pairs = m->next;
		m->next = NULL;
		h = lf_heap_meld(h, m);
	}
	root->child = NULL;
	return h;
}

/* ---- consumer helpers ---- */

static void lf_waitset_drop(struct lf_waitset *ws, struct lf_waiter *w)
{
	if (ws->reclaim)
		ws->reclaim(w, ws->reclaim_arg);
}

static bool lf_waiter_cancelled(struct lf_waiter *w)
{
	/* Acquire: pairs with the owner's acq_rel cancel CAS, so reclaim sees
	 * everything the owner did before giving w up. */
	return atomic_load_explicit(&w->state, memory_order_acquire) == LF_WAITER_CANCELLED;
}

/* Move everything pushed so far into the heap; drop nodes already cancelled. */
static void lf_waitset_take(struct lf_waitset *ws)
{
	/* seq_cst exchange: acquires the adders' pushes (their nodes' fields),
	 * and is ordered before our threshold CAS and stack re-check. */
	struct lf_waiter *w = atomic_exchange_explicit(&ws->stack, NULL, memory_order_seq_cst);

	while (w) {
		struct lf_waiter *next = w->next;
		w->next = NULL;
		w->child = NULL;
		if (lf_waiter_cancelled(w)) {
			lf_waitset_drop(ws, w);
		} else {
			ws->heap = lf_heap_meld(ws->heap, w);
			ws->held++;
		}
		w = next;
	}
}

/* Mark every heap waiter with value <= value and since < epoch released and
 * chain it on *done (through w->next: the node stays the set's until its
 * callback runs, after the new threshold is published); return how many.
 * Waiters of a later epoch are popped too and melded back afterwards. */
static size_t lf_waitset_release_heap(struct lf_waitset *ws, uint64_t value, uint64_t epoch,
				      struct lf_waiter **done)
{
	size_t n = 0;
	struct lf_waiter *later = NULL;

	while (ws->heap && ws->heap->value <= value) {
		struct lf_waiter *w = ws->heap;
		uint32_t expect = LF_WAITER_WAITING;

		ws->heap = lf_heap_pop(w);
		if (epoch != UINT64_MAX && w->since >= epoch && !lf_waiter_cancelled(w)) {
			later = lf_heap_meld(later, w);   /* registered after this epoch: not ours to take */
			continue;
		}
		ws->held--;
		/* acq_rel: a cancel that lost sees our release; a cancel that won
		 * is acquired (failure order) before reclaim. */
		if (atomic_compare_exchange_strong_explicit(&w->state, &expect, LF_WAITER_RELEASED,
							    memory_order_acq_rel, memory_order_acquire)) {
			w->next = *done;
			*done = w;
			n++;
		} else {
			lf_waitset_drop(ws, w);
		}
	}
	ws->heap = lf_heap_meld(ws->heap, later);
	return n;
}

/* Least value still waited for, minus one (UINT64_MAX if none), after
 * reclaiming cancelled nodes at the top of the heap (lazy deletion: deeper
 * cancelled nodes wait until they surface). */
static uint64_t lf_waitset_least(struct lf_waitset *ws)
{
	while (ws->heap && lf_waiter_cancelled(ws->heap)) {
		struct lf_waiter *w = ws->heap;
		ws->heap = lf_heap_pop(w);
		ws->held--;
		lf_waitset_drop(ws, w);
	}
	return ws->heap ? ws->heap->value - 1 : UINT64_MAX;
}

/* ---- the public operations ---- */

bool lf_waitset_add(struct lf_waitset *ws, struct lf_waiter *w)
{
	struct lf_waiter *head;
	uint64_t want, cur;

	assert(w->value >= 1 && "lf_waitset_add: waiter value must be >= 1");
	/* Read everything we need from w now: once pushed, w may be released,
	 * and its owner may free it, before this call returns. */
	want = w->value - 1;
	w->child = NULL;
	atomic_store_explicit(&w->state, LF_WAITER_WAITING, memory_order_relaxed);

	/* Push.  seq_cst CAS: releases w's fields to the consumer's exchange, and
	 * is the first half of the store-buffering pair with the consumer's
	 * threshold CAS + stack re-check (waitset.h, round step 5). */
	head = atomic_load_explicit(&ws->stack, memory_order_relaxed);
	do {
		w->next = head;
	} while (!atomic_compare_exchange_weak_explicit(&ws->stack, &head, w,
							memory_order_seq_cst, memory_order_relaxed));

	/* CAS-min: only adders lower, only the consumer raises.  seq_cst: a read
	 * that finds it low enough is ordered before a consumer raise in the
	 * total order, which is what makes the consumer's re-check see our push. */
	cur = atomic_load_explicit(ws->threshold, memory_order_seq_cst);
	while (cur > want) {
		if (atomic_compare_exchange_weak_explicit(ws->threshold, &cur, want,
							  memory_order_seq_cst, memory_order_seq_cst)) {
			atomic_fetch_add_explicit(&ws->adds, 1, memory_order_relaxed);
			return true;    /* the CAS was the full barrier */
		}
	}
	/* Nothing to lower: still end with a seq_cst RMW (a full barrier on every
	 * CPU) so the caller's CurrentValue resample cannot move above it. */
	atomic_fetch_add_explicit(&ws->adds, 1, memory_order_seq_cst);
	return false;
}

bool lf_waitset_cancel(struct lf_waitset *ws, struct lf_waiter *w)
{
	uint32_t expect = LF_WAITER_WAITING;

	(void)ws;
	/* acq_rel: release our use of w to the consumer's reclaim; on failure,
	 * acquire the consumer's RELEASED so the caller sees what cb saw. */
	return atomic_compare_exchange_strong_explicit(&w->state, &expect, LF_WAITER_CANCELLED,
						       memory_order_acq_rel, memory_order_acquire);
}

/* Run the release callbacks: each node is its owner's again once cb returns. */
static size_t lf_waitset_wake(struct lf_waiter *done, size_t n,
			      void (*cb)(struct lf_waiter *w, void *arg), void *arg)
{
	while (done) {
		struct lf_waiter *next = done->next;
		cb(done, arg);
		done = next;
	}
	return n;
}

/* The callbacks run after the new threshold is published: a released waiter
 * that runs on and queues its next wait (and the GPU's next signal) already
 * meets the raised MonitoredValue, not the stale one of the waiter just
 * retired (which would cost a spurious interrupt). */
size_t lf_waitset_release(struct lf_waitset *ws, uint64_t value,
			  void (*cb)(struct lf_waiter *w, void *arg), void *arg)
{
	return lf_waitset_release_before(ws, value, UINT64_MAX, cb, arg);
}

#ifndef LF_WAITSET_BROKEN
/* The consumer opens a raise (the raise sequence goes odd) before its first
 * raising CAS of a call.  seq_cst store: ordered before that CAS, so a
 * signaler whose threshold load reads the raise reads the sequence odd, or
 * changed since its load before (waitset.h, "The raise window"). */
static void lf_waitset_open_raise(struct lf_waitset *ws, bool *open)
{
	if (*open)
		return;
	*open = true;
	/* relaxed load: only the consumer writes it */
	uint64_t r = atomic_load_explicit(&ws->raising, memory_order_relaxed);
	atomic_store_explicit(&ws->raising, r + 1, memory_order_seq_cst);
}

/* ... and closes it (even again) once every add its raise could hide is in
 * the published threshold or released, its waiters' callbacks run.
 * seq_cst store: after all of that. */
static size_t lf_waitset_finish(struct lf_waitset *ws, bool open, struct lf_waiter *done, size_t n,
				void (*cb)(struct lf_waiter *w, void *arg), void *arg)
{
	lf_waitset_wake(done, n, cb, arg);
	if (open) {
		uint64_t r = atomic_load_explicit(&ws->raising, memory_order_relaxed);
		atomic_store_explicit(&ws->raising, r + 1, memory_order_seq_cst);
	}
	return n;
}

static void lf_waitset_hook(struct lf_waitset *ws, enum lf_waitset_hook_at at)
{
	if (lf_waitset_test_hook)
		lf_waitset_test_hook(ws, at);
}

#endif

size_t lf_waitset_release_before(struct lf_waitset *ws, uint64_t value, uint64_t epoch,
				 void (*cb)(struct lf_waiter *w, void *arg), void *arg)
{
	size_t released = 0;
	struct lf_waiter *done = NULL;
	bool open = false;

	for (;;) {
		/* Step 1 before step 2: an adder whose lowering we may overwrite
		 * pushed before this load, so the exchange below takes its node. */
		uint64_t seen = atomic_load_explicit(ws->threshold, memory_order_seq_cst);
		uint64_t least;

		ws->rounds++;
		lf_waitset_take(ws);
		released += lf_waitset_release_heap(ws, value, epoch, &done);
		least = lf_waitset_least(ws);
#ifdef LF_WAITSET_BROKEN
		/* BROKEN (tests only): overwrite whatever adders wrote meanwhile,
		 * and never look at the stack again. */
		(void)seen;
		(void)open;
		lf_spin_ns(10000);      /* widen the window for adders on the other CPU, */
		sched_yield();          /* and for adders waiting for this one */
		atomic_store_explicit(ws->threshold, least, memory_order_seq_cst);
		return lf_waitset_wake(done, released, cb, arg);
#else
		if (least == seen)
			return lf_waitset_finish(ws, open, done, released, cb, arg);
		if (least > seen) {
			lf_waitset_open_raise(ws, &open);
			lf_waitset_hook(ws, LF_WAITSET_HOOK_RAISE);
		}
		/* seq_cst CAS: fails iff an adder lowered since step 1 (adders only
		 * write strictly smaller values); its node is then on the stack. */
		if (!atomic_compare_exchange_strong_explicit(ws->threshold, &seen, least,
							     memory_order_seq_cst, memory_order_seq_cst))
			continue;
		if (least < seen)
			return lf_waitset_finish(ws, open, done, released, cb, arg);   /* lowered: no add can be hurt */
		lf_waitset_hook(ws, LF_WAITSET_HOOK_RAISED);
		/* Raised: an add that pushed after our exchange and found the old
		 * threshold low enough wrote nothing; its push precedes our CAS in
		 * the seq_cst order, so this load sees it. */
		if (!atomic_load_explicit(&ws->stack, memory_order_seq_cst))
			return lf_waitset_finish(ws, open, done, released, cb, arg);
#endif
	}
}

bool lf_waitset_signal_needs_release(struct lf_waitset *ws, uint64_t value)
{
	/* seq_cst loads, after the caller's seq_cst write of the value: the
	 * threshold load is the store-buffering partner of an add's RMW +
	 * resample; the raise sequence around it tells a transient raise
	 * (opened before the raising CAS, closed after the hidden adds are
	 * published) from a settled threshold. */
	uint64_t r0 = atomic_load_explicit(&ws->raising, memory_order_seq_cst);
	uint64_t t = atomic_load_explicit(ws->threshold, memory_order_seq_cst);

	if (t < value)
		return true;
	if (!(r0 & 1) && atomic_load_explicit(&ws->raising, memory_order_seq_cst) == r0)
		return false;
	atomic_fetch_add_explicit(&ws->unsettled, 1, memory_order_relaxed);   /* statistic */
	return true;
}

uint64_t lf_waitset_unsettled(const struct lf_waitset *ws)
{
	return atomic_load_explicit(&ws->unsettled, memory_order_relaxed);
}

uint64_t lf_waitset_threshold(const struct lf_waitset *ws)
{
	/* seq_cst, not only acquire: a signaler that wrote the value with a
	 * seq_cst RMW and then asks "does anyone wait?" is the other half of the
	 * store-buffering pair with an add's RMW + CurrentValue resample. */
	return atomic_load_explicit(ws->threshold, memory_order_seq_cst);
}

bool lf_waitset_empty(struct lf_waitset *ws)
{
	return !atomic_load_explicit(&ws->stack, memory_order_acquire) && !ws->heap;
}

void lf_waitset_destroy(struct lf_waitset *ws)
{
	struct lf_waiter *w = atomic_exchange_explicit(&ws->stack, NULL, memory_order_acquire);

	while (w) {
		struct lf_waiter *next = w->next;
		lf_waitset_drop(ws, w);
		w = next;
	}
	while (ws->heap) {
		w = ws->heap;
		ws->heap = lf_heap_pop(w);
		lf_waitset_drop(ws, w);
	}
	ws->held = 0;
	atomic_store_explicit(ws->threshold, UINT64_MAX, memory_order_release);
}
