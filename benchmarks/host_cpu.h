/* benchmarks/host_cpu.h — the host CPU a stack's workload costs, per unit of
 * work (per GPU signal, per frame), so that two fence paths that took
 * different times for the same work compare equal work.
 *
 * Three CPU-side roles (the engines are the GPU: their busy time is
 * reported as GPU busy/idle per engine, not here):
 *   app        the application thread: the caller, the one thread that
 *              submits and CPU-waits.  CPU time: CLOCK_THREAD_CPUTIME_ID.
 *              Wake-ups: its voluntary context switches (getrusage
 *              RUSAGE_THREAD ru_nvcsw): each is a sleep it was woken from
 *              (a yield that switches is involuntary and not counted).
 *   os_irq     the OS interrupt thread: os_stats.isr_busy_ns (its CPU-time
 *              clock) and irq_wakeups (returns from its park).
 *   os_sched   the OS scheduler thread (kernel-mode submission):
 *              os_ums_stats.sched_busy_ns and sched_wakeups (returns from
 *              its eventfd read).  A workload that submits through direct
 *              queues or user-mode queues leaves it asleep: 0.
 * CPU time is user + kernel as the kernel accounts it, read before and after
 * the measured region (bm_host_snap at both edges, bm_host_sub).
 *
 *   call             who                                          blocks?
 *   bm_host_snap     the application thread (its own clock), the  no (reads; settle the
 *                      stack settled (rt_stack_settle) for exact   stack first yourself)
 *                      OS counts
 *   bm_host_sub,     any                                          no
 *     bm_counters_sub
 *   bm_host_report   run()'s thread                               no
 */
#ifndef BM_HOST_CPU_H
#define BM_HOST_CPU_H

#include <stddef.h>
#include <stdint.h>

#include "gpu-model/runtime/stack.h"

struct fb_run;

struct bm_host {
	uint64_t app_cpu_ns, app_wakeups;
	uint64_t irq_cpu_ns, irq_wakeups;
	uint64_t sched_cpu_ns, sched_wakeups;
};

/* The three roles now.  os: the stack's os_stats read at this edge already
 * (its interrupt-thread numbers are used, so that they match the caller's
 * other counters), or NULL to read them here. */
void bm_host_snap(struct rt_stack *s, const struct os_stats *os, struct bm_host *out);
/* a -= b, role by role: the region between two snapshots. */
void bm_host_sub(struct bm_host *a, const struct bm_host *b);
/* a -= b counter by counter, for structs of uint64_t counters only (struct
 * os_stats, struct bm_host; the caller asserts it). */
void bm_counters_sub(void *a, const void *b, size_t bytes);

/* The unit of work the report divides by. */
enum bm_host_unit {
	BM_HOST_PER_SIGNAL,   /* GPU signals: CPU in ns/signal, wake-ups/signal */
	BM_HOST_PER_FRAME,    /* frames: CPU in us/frame, wake-ups/frame; first the sums host (every
	                       * role) and os (irq + sched) */
};
/* Into the current section, for each role R in app, os_irq, os_sched:
 * R_cpu_per_U, R_wakeups_per_U (U: signal or frame), then the region's
 * totals R_cpu_ms and R_wakeups, so that per-U = total / units can be
 * checked.  units 0 counts as 1. */
void bm_host_report(struct fb_run *run, const struct bm_host *d, uint64_t units, enum bm_host_unit unit);
/* ns per unit of `ns` over `units` (0 counts as 1): a summary row's value. */
double bm_host_per(uint64_t ns, uint64_t units);

#endif
