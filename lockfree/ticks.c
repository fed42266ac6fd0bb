/* lockfree/ticks.c — the choice and calibration of lf_ticks() (arch.h).
 *
 * The TSC is used only where it is a clock: an x86-64 CPU that says its TSC
 * runs at a constant rate through every power state (constant_tsc,
 * nonstop_tsc) and a kernel that keeps CLOCK_MONOTONIC on it (clocksource
 * "tsc": the kernel checked that the CPUs' counters agree).  Anything else
 * keeps CLOCK_MONOTONIC, one vDSO call per read.  The rate is measured
 * against CLOCK_MONOTONIC_RAW over LF_TICKS_CAL_NS. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lockfree/arch.h"

#define LF_TICKS_CAL_NS 10000000ull   /* 10 ms: the rate to about 1e-5 */

int lf_ticks_tsc;
static double ticks_per_ns = 1.0;
static pthread_once_t ticks_once = PTHREAD_ONCE_INIT;

/* True when the first line of `path` contains `word` (as a whole word for
 * /proc/cpuinfo's flags line). */
static bool file_has(const char *path, const char *prefix, const char *word)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	char line[8192];
	bool found = false;
	size_t wl = strlen(word);
	while (!found && fgets(line, sizeof(line), f)) {
		if (prefix && strncmp(line, prefix, strlen(prefix)))
			continue;
		for (char *p = strstr(line, word); p && !found; p = strstr(p + 1, word))
			found = (p == line || p[-1] == ' ' || p[-1] == '\t') &&
				(p[wl] == ' ' || p[wl] == '\n' || p[wl] == 0);
		if (prefix)
			break;
	}
	fclose(f);
	return found;
}

static uint64_t raw_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define LF_TICKS_PAIR_TRIES 32

void lf_ticks_pair(uint64_t *ticks, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < LF_TICKS_PAIR_TRIES; i++) {
		uint64_t a = lf_ticks(), n = raw_ns(), b = lf_ticks();
		if (b - a < best) {
			best = b - a;
			*ticks = a + (b - a) / 2;
			*ns = n;
		}
	}
}

static void ticks_choose(void)
{
#if defined(__x86_64__)
	if (!file_has("/proc/cpuinfo", "flags", "constant_tsc") || !file_has("/proc/cpuinfo", "flags", "nonstop_tsc") ||
	    !file_has("/sys/devices/system/clocksource/clocksource0/current_clocksource", NULL, "tsc"))
		return;
	lf_ticks_tsc = file_has("/proc/cpuinfo", "flags", "rdtscp") ? 2 : 1;
	/* each end a bracketed pair: a preemption between a clock read and a
	 * counter read (milliseconds on a loaded machine) would skew the rate
	 * by that over LF_TICKS_CAL_NS */
	uint64_t t0, n0, t1, n1;
	lf_ticks_pair(&t0, &n0);
	while (raw_ns() - n0 < LF_TICKS_CAL_NS)
		lf_cpu_relax();
	lf_ticks_pair(&t1, &n1);
	ticks_per_ns = (double)(t1 - t0) / (double)(n1 - n0);
	if (!(ticks_per_ns > 0.01)) {      /* a counter that does not count: keep the clock */
		lf_ticks_tsc = 0;
		ticks_per_ns = 1.0;
	}
#endif
}

void lf_ticks_init(void)
{
	pthread_once(&ticks_once, ticks_choose);
}

double lf_ticks_ns(uint64_t ticks)
{
	return (double)ticks / ticks_per_ns;
}

const char *lf_ticks_source(void)
{
	return lf_ticks_tsc ? "tsc" : "clock_monotonic";
}

double lf_ticks_mhz(void)
{
	return ticks_per_ns * 1000.0;
}
