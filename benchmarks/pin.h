/* benchmarks/pin.h — pin a thread to the n-th CPU this process may use.
 *
 * For micro-benchmarks (and tests) that put two threads on different CPUs so
 * what they measure is the cross-core hand-off, not the scheduler taking
 * turns on one CPU.  "The n-th CPU" counts only the CPUs in the thread's
 * current affinity mask (taskset, cgroups), not CPU numbers.
 *
 *   fb_pin_nth_cpu(t, n, saved)  save t's mask in *saved, then pin t to the n-th
 *                                CPU of that mask.  True when pinned; false (t
 *                                left as it was) when the mask could not be read
 *                                or holds n CPUs or fewer, or the kernel refused.
 *   fb_pin_restore(t, saved)     give t back the mask fb_pin_nth_cpu saved.
 *
 * Either may be called by any thread for any thread t that is alive; they do
 * not block and touch no shared state of their own.
 */
#ifndef FB_BENCH_PIN_H
#define FB_BENCH_PIN_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>

static inline bool fb_pin_nth_cpu(pthread_t t, int n, cpu_set_t *saved)
{
	if (pthread_getaffinity_np(t, sizeof(*saved), saved))
		return false;
	for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, saved) || seen++ != n)
			continue;
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		return pthread_setaffinity_np(t, sizeof(one), &one) == 0;
	}
	return false;
}

static inline void fb_pin_restore(pthread_t t, const cpu_set_t *saved)
{
	pthread_setaffinity_np(t, sizeof(*saved), saved);
}

#endif
