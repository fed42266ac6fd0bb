/* benchmarks/trace_rig.h — a stack's timeline into the harness's trace.
 *
 * The model keeps trace records in its own terms (gpu-model/os/os.h, "the
 * timeline trace": GPU timestamps on the GPU's counter, queue handles,
 * thread ids); the harness writes a generic trace (src/fb_trace.h) and names
 * no GPU.  This joins the two, on the benchmark side, the one room that sees
 * both: scenarios and tests call it once the workload stopped.
 *
 * Tracks, each group named "<label>: ...":
 *   CPU threads   the OS interrupt thread ("os-irq": ISR and DPC spans) and
 *                 each application thread (FENCE_SIGNAL_QUEUED /
 *                 FENCE_WAIT_QUEUED instants, CPU wait spans)
 *   GPU engines   one per engine: the interrupts it raised
 *   HW queues     one per user-mode HW queue: SIGNAL_EXECUTED (the GPU tick
 *                 of FenceEndGpuTimestamp), WAIT_UNBLOCKED (from
 *                 FenceObservedGpuTimestamp to the end of FenceEndGpuTimestamp's
 *                 tick: a GPU timestamp says "within this tick"), and
 *                 "lost N" instants where an overrun skipped N entries
 * GPU timestamps are converted to the CPU clock through the stack's clock
 * calibration (rt_stack_clock_calibration).  A flow arrow goes from each
 * logged signal to every wait it unblocked (a WAIT_UNBLOCKED entry or a CPU
 * wait of the same fence: the signal with the least value reaching the
 * wait's, not after the wait ended).
 *
 * Called from one thread, with no submission in progress (it settles the stack).
 */
#ifndef BM_TRACE_RIG_H
#define BM_TRACE_RIG_H

#include <stddef.h>
#include <stdint.h>

#include "gpu-model/runtime/stack.h"
#include "src/fb_trace.h"

struct rig_trace_counts {
	size_t records;          /* trace records copied from the stack */
	uint64_t dropped;        /* records the stack could not keep (its array was full) */
	size_t log_signals, log_waits, cpu_waits, queued, irqs;
	uint64_t lost;           /* log entries an overrun skipped (sum of the "lost N") */
	size_t flows;
};

/* Tests only: a deliberately broken copy the trace test must catch.
 * RIG_TRACE_BROKEN_RAW_GPU_TS: GPU timestamps written as they are, unconverted. */
enum rig_trace_broken { RIG_TRACE_OK, RIG_TRACE_BROKEN_RAW_GPU_TS };

/* Copy s's trace records into t under `label` (e.g. "native").  0, or
 * -ENOMEM.  c (may be NULL) gets the counts. */
int rig_trace_copy(struct rt_stack *s, struct fb_trace *t, const char *label, enum rig_trace_broken broken,
		   struct rig_trace_counts *c);

#endif
