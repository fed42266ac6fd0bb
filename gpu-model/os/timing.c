/* gpu-model/os/timing.c — the kernel-mode submission path's modelled cost
 * (os_config.timing, the OS half of a timing profile; the adapter's half is
 * gpu-model/hw/timing.c).
 *
 * The costs are CPU work in Windows (the kernel crossing, validation and
 * patching, the scheduler's per-buffer work), so the model spends them as
 * CPU work: busy on the clock, on the thread that does that work, where they
 * count in the thread's CPU time and in the host CPU a workload reports.
 * Where: os_hwqueue_submit (the submitting thread: call + validation),
 * the scheduler thread's hand-over of each buffer (sched.c), the interrupt
 * thread's release of a buffer held behind a monitored-fence wait
 * (queue.c).  A busy wait ends no earlier than modelled, and later when the
 * thread is preempted meanwhile (as the work itself would be).
 */
#include <stdio.h>

#include "gpu-model/os/os_internal.h"
#include "lockfree/arch.h"

void os_timing_work(uint64_t ns)
{
	if (!ns)
		return;
	uint64_t until = lf_now_ns() + ns;
	while (lf_now_ns() < until)
		lf_cpu_relax();
}

bool os_timing_check(const struct os_timing *t, char *err, size_t errlen)
{
	const struct { const char *name; uint64_t v; } f[] = {
		{ "km_call_ns", t->km_call_ns }, { "km_validate_ns", t->km_validate_ns },
		{ "km_sched_ns", t->km_sched_ns },
	};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i].v > OS_TIMING_MAX_NS) {
			snprintf(err, errlen, "timing %s=%llu: more than %llu ns", f[i].name,
				 (unsigned long long)f[i].v, OS_TIMING_MAX_NS);
			return false;
		}
	return true;
}
