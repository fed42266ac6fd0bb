/* lockfree/mpsc.c — the interrupt-record queue over liburcu cds_wfcq.
 *
 * Built without _LGPL_SOURCE, so the queue operations are liburcu-common's
 * exported functions: the same code in every build, and no inlined volatile
 * accesses that ThreadSanitizer would misread as races.
 */
#include "lockfree/mpsc.h"

#include <assert.h>
#include <sched.h>

#include "lockfree/arch.h"
#include "lockfree/tsan.h"

/* PAUSE this many times before yielding the CPU to a preempted producer. */
#define LF_MPSC_SPINS 64

#ifdef LF_MPSC_BROKEN
/* Broken variant: time between the "was empty" sample and the enqueue. */
#define LF_MPSC_BROKEN_WINDOW_NS 2000
#endif

void lf_mpsc_init(struct lf_mpsc *q)
{
	__cds_wfcq_init(&q->head, &q->tail);
	q->stalls = 0;
}

void lf_mpsc_destroy(struct lf_mpsc *q)
{
	assert(cds_wfcq_empty(&q->head, &q->tail) && "lf_mpsc_destroy: queue not empty");
	(void)q;
}

bool lf_mpsc_push(struct lf_mpsc *q, struct lf_mpsc_node *n)
{
	cds_wfcq_node_init(&n->node);
	/* The record's contents happen-before the consumer's lf_tsan_acquire in
	 * pop: liburcu's xchg (a full barrier) provides it, invisibly to TSan. */
	lf_tsan_release(n);
#ifdef LF_MPSC_BROKEN
	{
		/* BROKEN (tests only): "was empty" sampled before the enqueue, not
		 * read from the tail exchange.  A consumer that drains and sleeps
		 * in between is never woken for this node. */
		bool was_empty = cds_wfcq_empty(&q->head, &q->tail);

		lf_spin_ns(LF_MPSC_BROKEN_WINDOW_NS);   /* widen the window, */
		sched_yield();                          /* and let the consumer run */
		cds_wfcq_enqueue(&q->head, &q->tail, &n->node);
		return was_empty;
	}
#else
	/* cds_wfcq_enqueue returns false when the queue WAS empty. */
	return !cds_wfcq_enqueue(&q->head, &q->tail, &n->node);
#endif
}

/* A producer sits between its tail exchange and its link store: let it run.
 * On 2 cores it may be preempted there, so after a short spin yield to it. */
static void lf_mpsc_wait_producer(unsigned *spins)
{
	if (++*spins < LF_MPSC_SPINS)
		lf_cpu_relax();
	else
		sched_yield();
}

struct lf_mpsc_node *lf_mpsc_pop(struct lf_mpsc *q)
{
	struct cds_wfcq_node *n;
	unsigned spins = 0;

	/* The non-blocking dequeue undoes its partial work on WOULDBLOCK, so
	 * retrying it is the blocking dequeue with our own backoff instead of
	 * liburcu's 10 ms poll() sleep. */
	while ((n = __cds_wfcq_dequeue_nonblocking(&q->head, &q->tail)) == CDS_WFCQ_WOULDBLOCK)
		lf_mpsc_wait_producer(&spins);
	if (spins)
		q->stalls++;
	if (!n)
		return NULL;
	lf_tsan_acquire(n);     /* pairs with lf_tsan_release in lf_mpsc_push */
	return caa_container_of(n, struct lf_mpsc_node, node);
}

bool lf_mpsc_empty(struct lf_mpsc *q)
{
	return cds_wfcq_empty(&q->head, &q->tail);
}
