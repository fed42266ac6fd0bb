/* lockfree/tsan.h — tell ThreadSanitizer about synchronization it cannot see.
 *
 * liburcu 0.13 does its atomics in inline asm and ships an uninstrumented
 * .so, so TSan sees neither the publication of a node through cds_wfcq or
 * cds_lfht nor the grace period behind call_rcu.  Without help it reports
 * false races on every node handed over that way.  The code that hands a node
 * over says so explicitly:
 *
 *     lf_tsan_release(node);   before the liburcu call that publishes node
 *     lf_tsan_acquire(node);   after the liburcu call that hands node over
 *
 * Both are no-ops unless FB_TSAN is defined (the Makefile defines it in
 * SANITIZER=thread builds).  They add happens-before edges only where the
 * library really provides them, so real races on the nodes are still found:
 * annotate the exact object handed over, never a wider one.
 */
#ifndef LF_TSAN_H
#define LF_TSAN_H

/* liburcu's own helper threads (call_rcu, rcu_barrier's completion, the
 * cds_lfht resize workqueue) malloc in one thread and free in another, synced
 * by its invisible atomics: TSan reports those frees as races inside liburcu.
 * A TSan binary that uses lf_htab (or call_rcu/rcu_barrier) puts this in its
 * suppressions, e.g. in the test file:
 *
 *     #ifdef FB_TSAN
 *     const char *__tsan_default_suppressions(void);
 *     const char *__tsan_default_suppressions(void) { return LF_TSAN_SUPPRESS_LIBURCU; }
 *     #endif
 *
 * called_from_lib ignores only the interceptors (malloc, free, mutexes)
 * called from liburcu's uninstrumented code; every access by our own code,
 * including to memory handed over through liburcu, is still checked. */
#define LF_TSAN_SUPPRESS_LIBURCU \
	"called_from_lib:liburcu.so\n"        \
	"called_from_lib:liburcu-cds.so\n"    \
	"called_from_lib:liburcu-common.so\n"

#ifdef FB_TSAN
/* The TSan runtime's annotation entry points (no public header in Debian 12). */
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);

/* Everything this thread did so far happens-before a later lf_tsan_acquire(addr). */
static inline void lf_tsan_release(const void *addr)
{
	__tsan_release((void *)addr);
}

/* Join every earlier lf_tsan_release(addr) into this thread's view. */
static inline void lf_tsan_acquire(const void *addr)
{
	__tsan_acquire((void *)addr);
}
#else
static inline void lf_tsan_release(const void *addr)
{
	(void)addr;
}

static inline void lf_tsan_acquire(const void *addr)
{
	(void)addr;
}
#endif

#endif
