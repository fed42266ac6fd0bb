/* lockfree/counter.h — a statistics counter with ONE writer and any readers.
 *
 *   lf_counter c;          zero it (lf_alloc, = 0, atomic_init) before use
 *   lf_count(&c, n);       the writer adds n: a relaxed load and a relaxed
 *                          store, no locked instruction on the hot path
 *   readers                any thread, any time: atomic_load_explicit(&c,
 *                          memory_order_relaxed)
 *
 * The writer is one thread, or whoever holds the one lock every write is made
 * under: two writers without a lock between them lose counts (each stores its
 * own load + n).  Readers see a value the counter really had (the 64-bit load
 * and store are single-copy atomic), never a torn one, but no ordering: a
 * counter publishes nothing and is read as a statistic only.  Keep the hot
 * counters of one writer on a line of their own (lockfree/cacheline.h).
 */
#ifndef LF_COUNTER_H
#define LF_COUNTER_H

#include <stdatomic.h>
#include <stdint.h>

typedef _Atomic uint64_t lf_counter;

static inline void lf_count(lf_counter *c, uint64_t n)
{
	/* single writer: relaxed load + store; readers need no ordering */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n, memory_order_relaxed);
}

#endif
