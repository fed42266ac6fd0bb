/* benchmarks/host_cpu.c — the host CPU a stack's workload costs (see host_cpu.h). */
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#include "benchmarks/host_cpu.h"
#include "lockfree/arch.h"
#include "lockfree/die.h"
#include "src/fb_scenario.h"

void bm_host_snap(struct rt_stack *s, const struct os_stats *os, struct bm_host *out)
{
	struct os_stats own;
	struct os_ums_stats ums;
	struct rusage ru;
	if (!os) {
		rt_stack_os_stats(s, &own);
		os = &own;
	}
	rt_stack_ums_stats(s, &ums);
	if (lf_clock_ns(CLOCK_THREAD_CPUTIME_ID, &out->app_cpu_ns) || getrusage(RUSAGE_THREAD, &ru))
		lf_die("reading the application thread's CPU clock or usage");   /* the caller's own: cannot fail */
	out->app_wakeups = (uint64_t)ru.ru_nvcsw;
	out->irq_cpu_ns = os->isr_busy_ns;
	out->irq_wakeups = os->irq_wakeups;
	out->sched_cpu_ns = ums.sched_busy_ns;
	out->sched_wakeups = ums.sched_wakeups;
}

void bm_counters_sub(void *a, const void *b, size_t bytes)
{
	uint64_t *x = a;
	const uint64_t *y = b;
	for (size_t k = 0; k < bytes / sizeof(uint64_t); k++)
		x[k] -= y[k];
}

void bm_host_sub(struct bm_host *a, const struct bm_host *b)
{
	_Static_assert(sizeof(struct bm_host) % sizeof(uint64_t) == 0, "bm_host: uint64_t counters only");
	bm_counters_sub(a, b, sizeof(*a));
}

double bm_host_per(uint64_t ns, uint64_t units)
{
	return (double)ns / (double)(units ? units : 1);
}

/* One role's rows: R_cpu_per_U, R_wakeups_per_U. */
static void bm_host_role(struct fb_run *run, const char *role, uint64_t cpu_ns, uint64_t wakeups, uint64_t units,
			 enum bm_host_unit unit)
{
	const char *u = unit == BM_HOST_PER_FRAME ? "frame" : "signal";
	double scale = unit == BM_HOST_PER_FRAME ? 1e3 : 1.0;   /* us/frame, ns/signal */
	char name[64], cpu_unit[32], wake_unit[32];
	snprintf(cpu_unit, sizeof(cpu_unit), "%s/%s", unit == BM_HOST_PER_FRAME ? "us" : "ns", u);
	snprintf(wake_unit, sizeof(wake_unit), "wakeups/%s", u);
	snprintf(name, sizeof(name), "%s_cpu_per_%s", role, u);
	fb_run_metric(run, name, bm_host_per(cpu_ns, units) / scale, cpu_unit);
	snprintf(name, sizeof(name), "%s_wakeups_per_%s", role, u);
	fb_run_metric(run, name, bm_host_per(wakeups, units), wake_unit);
}

/* One role's totals: R_cpu_ms, R_wakeups. */
static void bm_host_total(struct fb_run *run, const char *role, uint64_t cpu_ns, uint64_t wakeups)
{
	char name[64];
	snprintf(name, sizeof(name), "%s_cpu_ms", role);
	fb_run_metric(run, name, cpu_ns / 1e6, "ms");
	snprintf(name, sizeof(name), "%s_wakeups", role);
	fb_run_metric(run, name, (double)wakeups, "wakeups");
}

void bm_host_report(struct fb_run *run, const struct bm_host *d, uint64_t units, enum bm_host_unit unit)
{
	if (unit == BM_HOST_PER_FRAME) {
		bm_host_role(run, "host", d->app_cpu_ns + d->irq_cpu_ns + d->sched_cpu_ns,
			     d->app_wakeups + d->irq_wakeups + d->sched_wakeups, units, unit);
		bm_host_role(run, "os", d->irq_cpu_ns + d->sched_cpu_ns, d->irq_wakeups + d->sched_wakeups, units, unit);
	}
	bm_host_role(run, "app", d->app_cpu_ns, d->app_wakeups, units, unit);
	bm_host_role(run, "os_irq", d->irq_cpu_ns, d->irq_wakeups, units, unit);
	bm_host_role(run, "os_sched", d->sched_cpu_ns, d->sched_wakeups, units, unit);
	bm_host_total(run, "app", d->app_cpu_ns, d->app_wakeups);
	bm_host_total(run, "os_irq", d->irq_cpu_ns, d->irq_wakeups);
	bm_host_total(run, "os_sched", d->sched_cpu_ns, d->sched_wakeups);
}
