/* lockfree/arch.h — the one place for architecture primitives (no inline asm elsewhere).
 *
 * lf_cpu_relax()  spin-wait hint (x86 PAUSE, arm64 YIELD).
 * lf_now_ns()     CLOCK_MONOTONIC in nanoseconds: the clock of every latency in fencebench.
 * lf_clock_ns(c, &ns)  clock c in nanoseconds: a thread's CPU time (user + kernel) through
 *                 CLOCK_THREAD_CPUTIME_ID (the caller's) or pthread_getcpuclockid (another
 *                 live thread's).  0, or -errno (the clock cannot be read: a thread gone).
 * lf_sleep_until(t)  sleep until lf_now_ns() reaches t (at once if it has; signals do not cut it short).
 * lf_spin_ns(ns)  busy-wait for ns nanoseconds (the modeled GPU WORK and PCIe read cost).
 * lf_ticks()      a timestamp counter for latencies that cross threads on a hot path
 *                 (a GPU's timestamp counter, read by one instruction): the invariant
 *                 TSC where the kernel keeps its own clock on it, else lf_now_ns().
 *                 Convert differences with lf_ticks_ns() (lockfree/ticks.c).
 * lf_ticks_ordered()  the same counter, read only after every earlier instruction
 *                 has executed (RDTSCP): the end points of a latency, so that a
 *                 plain RDTSC, which the CPU may run early, does not start the
 *                 window before the caller's last store-and-wait completed, nor
 *                 stamp a command before the load that fetched it returned.
 */
#ifndef LF_ARCH_H
#define LF_ARCH_H

#include <errno.h>
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

static inline int lf_clock_ns(clockid_t c, uint64_t *ns)
{
	struct timespec ts;
	if (clock_gettime(c, &ts))
		return -errno;
	*ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return 0;
}

static inline void lf_sleep_until(uint64_t t)
{
	struct timespec ts = { .tv_sec = (time_t)(t / 1000000000u), .tv_nsec = (long)(t % 1000000000u) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* Nonzero once lf_ticks_init() chose the TSC (ticks.c); read-only after.
 * 2: the CPU also has RDTSCP. */
extern int lf_ticks_tsc;

static inline uint64_t lf_ticks(void)
{
#if defined(__x86_64__)
	if (lf_ticks_tsc) {
		uint32_t lo, hi;
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		return (uint64_t)hi << 32 | lo;
	}
#endif
	return lf_now_ns();
}

static inline uint64_t lf_ticks_ordered(void)
{
#if defined(__x86_64__)
	if (lf_ticks_tsc == 2) {
		uint32_t lo, hi, aux;
		__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux) :: "memory");
		return (uint64_t)hi << 32 | lo;
	}
	if (lf_ticks_tsc) {
		uint32_t lo, hi;
		__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) :: "memory");
		return (uint64_t)hi << 32 | lo;
	}
#endif
	return lf_now_ns();
}

/* Choose the counter and calibrate it (about 10 ms the first time; later
 * calls return at once).  Call before the first lf_ticks() whose value is
 * compared; thread-safe. */
void lf_ticks_init(void);
/* A difference of lf_ticks() values in nanoseconds. */
double lf_ticks_ns(uint64_t ticks);
/* One lf_ticks() value and one CLOCK_MONOTONIC_RAW reading (ns) taken as
 * nearly at once as this thread can: the clock read between two counter
 * reads, the tightest of several tries, the counter at the midpoint.  A
 * thread preempted between a counter read and a clock read would otherwise
 * pair two moments milliseconds apart.  Any thread; does not block. */
void lf_ticks_pair(uint64_t *ticks, uint64_t *raw_ns);
/* What lf_ticks() counts: "tsc" or "clock_monotonic", and its rate in MHz. */
const char *lf_ticks_source(void);
double lf_ticks_mhz(void);

static inline void lf_spin_ns(uint64_t ns)
{
	if (!ns)
		return;
	uint64_t end = lf_now_ns() + ns;
	while (lf_now_ns() < end)
		lf_cpu_relax();
}

#endif
