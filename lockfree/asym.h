/* lockfree/asym.h — an asymmetric store-load fence, for a Dekker pair whose
 * one side runs on every operation of a hot path and whose other side is rare.
 *
 *   hot side:   store A; lf_asym_light(); load B
 *   rare side:  store B; lf_asym_heavy(); load A
 *
 * Guarantee (as of two seq_cst fences): the hot load sees the rare store, or
 * the rare load sees the hot store, or both; never neither.
 *
 * With membarrier(2) (MEMBARRIER_CMD_PRIVATE_EXPEDITED, registered by
 * lf_asym_init) the light side is a compiler barrier only and the heavy side
 * makes every running thread of the process execute a full barrier (an IPI
 * to each CPU running one: what a TLB shootdown costs) — the technique of
 * liburcu's memb flavour.  Without it (old kernel, seccomp, ThreadSanitizer,
 * which cannot see the IPI's barrier) both sides are full barriers.
 *
 *   operation        who may call        blocks?
 *   lf_asym_init     any, any time       no (first call: one syscall)
 *   lf_asym_light    any thread          no
 *   lf_asym_heavy    any thread          no; a syscall + IPIs (a few us)
 *
 * Broken variant (tests only): lf_asym_heavy_broken() skips the barrier on
 * the rare side; tests/test_lf_asym.c shows the hot load and the rare load can
 * then both miss (x86 store buffering), and that the real pair never does.
 */
#ifndef LF_ASYM_H
#define LF_ASYM_H

#include <stdatomic.h>
#include <stdbool.h>

/* Nonzero when the heavy side is membarrier (read-only after lf_asym_init). */
extern int lf_asym_membarrier;

/* Register for the expedited private membarrier; idempotent, thread-safe.
 * Call before the threads that use the light side start. */
void lf_asym_init(void);

/* The full barrier of the fallback.  ThreadSanitizer does not model
 * atomic_thread_fence; an acq_rel RMW on one shared word does the same job
 * visibly: of two such RMWs one reads from the other, so the store before
 * the first happens-before the load after the second. */
#ifdef FB_TSAN
extern _Atomic unsigned long lf_asym_sync;
#define LF_ASYM_FULL() ((void)atomic_fetch_add_explicit(&lf_asym_sync, 0, memory_order_acq_rel))
#else
#define LF_ASYM_FULL() atomic_thread_fence(memory_order_seq_cst)
#endif

static inline void lf_asym_light(void)
{
	if (lf_asym_membarrier)
		atomic_signal_fence(memory_order_seq_cst);
	else
		LF_ASYM_FULL();
}

void lf_asym_heavy(void);
/* Tests only: the rare side without its barrier. */
void lf_asym_heavy_broken(void);
/* "membarrier" or "fence": what the heavy side is. */
const char *lf_asym_kind(void);

#endif
