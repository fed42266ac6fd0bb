/* lockfree/mpsc.h — multi-producer single-consumer FIFO of intrusive nodes.
 *
 * The interrupt-record queue: many GPU engine threads push records, the one
 * OS interrupt thread pops them.  A thin layer over liburcu's wait-free
 * concurrent queue (urcu/wfcqueue.h, cds_wfcq) used in its lock-free flavor
 * (struct __cds_wfcq_head: no mutex, the caller guarantees one consumer).
 * The record embeds a struct lf_mpsc_node; the queue never allocates.
 *
 * Order: FIFO per producer (records pushed by one thread are popped in the
 * order pushed); pushes of different producers are ordered by their tail
 * exchange, the linearization point.
 *
 * Wake-up rule: lf_mpsc_push returns true iff the queue was empty just before
 * (the old tail was the head sentinel).  A consumer that pops until NULL and
 * then sleeps can rely on "a push that returns true wakes me": lf_mpsc_pop
 * returns NULL only once the tail is back on the sentinel, and every push
 * after that moment returns true.  It never returns NULL while a producer is
 * half-way through a push that returned false (see lf_mpsc_pop).
 *
 * Memory ordering: push is a full barrier before the publication (the tail
 * exchange, liburcu's uatomic_xchg): everything the producer wrote into the
 * record before lf_mpsc_push is visible to the consumer once lf_mpsc_pop
 * returns it.  Nothing else is ordered.  For ThreadSanitizer the hand-over is
 * annotated on the node (lockfree/tsan.h), since liburcu is uninstrumented.
 *
 * Synchronization (who may run concurrently with whom):
 *
 *   | operation       | caller            | concurrent with          | progress                  |
 *   |-----------------|-------------------|--------------------------|---------------------------|
 *   | lf_mpsc_push    | any thread        | push, pop, empty         | wait-free                 |
 *   | lf_mpsc_pop     | the consumer only | push, empty              | blocking (briefly, below) |
 *   | lf_mpsc_empty   | any thread        | push, pop, empty         | wait-free                 |
 *   | lf_mpsc_init,   | one owner         | nothing                  | wait-free                 |
 *   |   _destroy      |                   |                          |                           |
 *
 * "The consumer" is one thread at a time; handing the role over needs a
 * happens-before edge (join, lock, release/acquire pair).
 *
 * Broken variant (tests only): compiled with -DLF_MPSC_BROKEN, push samples
 * lf_mpsc_empty() BEFORE its enqueue and returns that sample as "was empty"
 * (with a 2 us spin and a sched_yield() between the two to widen the
 * window), as one writes it without cds_wfcq_enqueue's atomic result.  A
 * consumer that drains and sleeps between a producer's sample and its
 * enqueue is never woken for that record: it is stranded, and so is every
 * record behind it, since later pushes sample a non-empty queue (rescued
 * only by a push that sampled empty inside the same window).
 * tests/test_lf_mpsc.c compiles that variant into itself under the
 * lf_mpsc_broken_ prefix and asserts its stress test catches the stranding
 * (within about 3-50 ms of a run capped at 2 s).  (Tried by hand: the spin
 * alone or the yield alone are caught as surely; with no widening at all,
 * in 3 of 5 runs of 300000 records per producer.)
 */
#ifndef LF_MPSC_H
#define LF_MPSC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <urcu/wfcqueue.h>

#include "lockfree/cacheline.h"

/* Embed in the record; recover the record with container_of. */
struct lf_mpsc_node {
	struct cds_wfcq_node node;
};

struct lf_mpsc {
	/* Consumer's line: the head sentinel (its next is written by the consumer,
	 * and by the one producer that appends to an empty queue). */
	struct __cds_wfcq_head head __attribute__((aligned(LF_DESTRUCTIVE)));
	uint64_t stalls;        /* consumer only: pops that waited for a producer's second step */
	/* Producers' line: the tail every push exchanges. */
	struct cds_wfcq_tail tail __attribute__((aligned(LF_DESTRUCTIVE)));
};

LF_ASSERT_OWN_LINE(struct lf_mpsc, head);
LF_ASSERT_OWN_LINE(struct lf_mpsc, tail);
_Static_assert(offsetof(struct lf_mpsc, tail) - offsetof(struct lf_mpsc, head) >= LF_DESTRUCTIVE,
	       "lf_mpsc: head and tail must be a prefetch pair of lines apart");

/* Initialize an empty queue.  One owner, before any other use. */
void lf_mpsc_init(struct lf_mpsc *q);

/* Tear down.  The queue must be empty (asserted); it holds no resources. */
void lf_mpsc_destroy(struct lf_mpsc *q);

/* Append n (its record fully written) at the tail.  Any thread; wait-free:
 * one exchange and one store.  Full barrier before the publication.
 * Returns true iff the queue was empty before this push: the caller then
 * owns the wake-up of the consumer. */
bool lf_mpsc_push(struct lf_mpsc *q, struct lf_mpsc_node *n);

/* Remove the oldest node, or return NULL when the queue is empty.
 * The consumer only.  Not wait-free: when a producer has exchanged the tail
 * but not yet linked its node (its two steps), the queue is not empty and
 * the node behind it cannot be reached yet, so pop spins (PAUSE, then
 * sched_yield) until the producer finishes; it never sleeps on a timer.
 * Such waits are counted in q->stalls.  The returned node's record is
 * visible (acquire, pairs with push's barrier); it may be reused or freed
 * at once. */
struct lf_mpsc_node *lf_mpsc_pop(struct lf_mpsc *q);

/* True when the queue holds no node (neither linked nor being linked).
 * Any thread; no barrier: a hint, exact only when no push or pop runs. */
bool lf_mpsc_empty(struct lf_mpsc *q);

#endif
