/* lockfree/arch.h — the one place for architecture primitives (no inline asm elsewhere).
 *
 * lf_cpu_relax()  spin-wait hint (x86 PAUSE, arm64 YIELD).
 * lf_now_ns()     CLOCK_MONOTONIC in nanoseconds: the clock of every latency in fencebench.
 * lf_spin_ns(ns)  busy-wait for ns nanoseconds (the modeled GPU WORK and PCIe read cost).
 */
#ifndef LF_ARCH_H
#define LF_ARCH_H

#include <stdint.h>
#include <time.h>

static inline void lf_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

static inline uint64_t lf_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void lf_spin_ns(uint64_t ns)
{
	if (!ns)
		return;
	uint64_t end = lf_now_ns() + ns;
	while (lf_now_ns() < end)
		lf_cpu_relax();
}

#endif
