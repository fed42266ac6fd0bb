/* benchmarks/backoff.h — what a benchmark or test thread does after a refused
 * push/pop: spin a little, then yield, and give up when the other side has
 * made no progress for a while.
 *
 *   uint64_t tries = 0, since = 0;          // per operation being retried
 *   while (!push(...))
 *           if (!bm_backoff(&tries, &since, &my_backoff))
 *                   ... the other side stalled: report it, stop ...
 *
 * Tries 1 .. spins-1 spin (lf_cpu_relax); every later try yields the CPU
 * (the machine has 2 cores, shared).  Every clock_every-th try reads the
 * clock: the first read starts the stall clock in *since, and bm_backoff
 * returns false once stall_ns have passed since then.  *tries is left as the
 * number of refused attempts (benchmarks count it).
 *
 * Thread-private: tries and since belong to the calling thread; the policy is
 * read-only.  Never blocks for longer than one sched_yield.
 */
#ifndef BM_BACKOFF_H
#define BM_BACKOFF_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "lockfree/arch.h"

struct bm_backoff_policy {
	uint64_t spins;        /* tries before yielding */
	uint64_t clock_every;  /* read the clock every this many tries: a power of two */
	uint64_t stall_ns;     /* no progress for this long: give up */
};

/* True: retry.  False: stall_ns passed without the caller's operation succeeding. */
static inline bool bm_backoff(uint64_t *tries, uint64_t *since, const struct bm_backoff_policy *p)
{
	uint64_t t = ++*tries;
	if (t < p->spins) {
		lf_cpu_relax();
		return true;
	}
	sched_yield();
	if (!(t & (p->clock_every - 1))) {
		uint64_t now = lf_now_ns();
		if (!*since)
			*since = now;
		else if (now - *since > p->stall_ns)
			return false;
	}
	return true;
}

#endif
