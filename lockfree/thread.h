/* lockfree/thread.h — where a thread runs, and whether a lock is held.
 *
 * Pinning.  The model's role threads (engines, the OS interrupt, scheduler
 * and power threads), the harness's application threads, the machine-limit
 * probes and the micro-benchmarks pin themselves to one CPU each, so what
 * they measure is a cross-core hand-off, not the scheduler taking turns.
 *
 *   lf_thread_pin_self(cpu)       pin the calling thread to CPU `cpu` (a CPU
 *                                 number).  cpu < 0: leave it where it is.
 *                                 0, -EINVAL (cpu >= CPU_SETSIZE), or -errno of
 *                                 pthread_setaffinity_np (EINVAL: a CPU the
 *                                 thread may not use).
 *   lf_thread_create_pinned(t, cpu, fn, arg)
 *                                 pthread_create with the affinity set in the
 *                                 attributes: fn runs on `cpu` from its first
 *                                 instruction.  0 or -errno (-EINVAL: cpu < 0 or
 *                                 >= CPU_SETSIZE).
 *   lf_thread_pin_nth(t, n, saved)  save t's mask in *saved, then pin t to the
 *                                 n-th CPU of that mask (counting only the CPUs
 *                                 in it: taskset, cgroups).  True when pinned;
 *                                 false (t left as it was) when the mask could
 *                                 not be read, holds n CPUs or fewer, or the
 *                                 kernel refused.
 *   lf_thread_pin_restore(t, saved)  give t back the mask lf_thread_pin_nth saved.
 *
 * Any thread may call these for any live thread t; they do not block (one
 * syscall) and touch no shared state of their own.  Not on hot paths.
 *
 * Lock assertions.  A function named `_locked` requires its caller to hold a
 * lock (CONTRIBUTING.md, "Conventions"); it says so first thing with
 *
 *   lf_mutex_assert_held(&u->lock);
 *
 * an assert(): compiled out with NDEBUG, like every misuse check.  It asks
 * lf_mutex_is_locked, which tries the mutex: EBUSY means some thread holds it.
 * A plain pthread mutex records no owner the program may read, so the check
 * is "held by someone", not "held by me": it catches a caller that forgot the
 * lock whenever no other thread holds it at that instant, which is nearly
 * always in tests.  It never fires on a correct caller.  The trylock is one
 * atomic RMW on a line the caller already owns; when it succeeds (the bug
 * case) the mutex is unlocked again before the assert fires.  ThreadSanitizer
 * sees no lock operation in a failed trylock, so the check adds no
 * happens-before edge that could hide a race.  Default (non-recursive)
 * mutexes only: a recursive mutex's owner would get it again.
 */
#ifndef LF_THREAD_H
#define LF_THREAD_H

#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>

int lf_thread_pin_self(int cpu);
int lf_thread_create_pinned(pthread_t *t, int cpu, void *(*fn)(void *), void *arg);
bool lf_thread_pin_nth(pthread_t t, int n, cpu_set_t *saved);
void lf_thread_pin_restore(pthread_t t, const cpu_set_t *saved);

/* Is m locked by any thread right now?  Any thread; never blocks. */
bool lf_mutex_is_locked(pthread_mutex_t *m);

#define lf_mutex_assert_held(m) assert(lf_mutex_is_locked(m) && "caller must hold " #m)

#endif
