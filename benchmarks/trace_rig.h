/* benchmarks/trace_rig.h — a stack's timeline into the harness's trace.
 *
 * The model keeps trace records in its own terms (gpu-model/os/os.h, "the
 * timeline trace": GPU timestamps on the GPU's counter, queue handles,
 * thread ids); the harness writes a generic trace (src/fb_trace.h) and names
 * no GPU.  This joins the two, on the benchmark side, the one room that sees
 * both: scenarios and tests call it once the workload stopped.
 *
 * Tracks, each group named "<label>: ...":
 *   queues        one per queue, named after it (rig_trace_queue; else
 *                 "HW queue 0x.. (engine e)"): each WORK as a span named
 *                 after its list (rt_clist_set_name; "WORK" unnamed), each
 *                 Signal as the short span of its execution, each Wait as a
 *                 span over the time it blocked.  Signals and waits come from
 *                 the queue's native fence log buffers where it has them
 *                 (user-mode queues: SIGNAL_EXECUTED at the GPU tick of
 *                 FenceEndGpuTimestamp, WAIT_UNBLOCKED from
 *                 FenceObservedGpuTimestamp to the end of FenceEndGpuTimestamp's
 *                 tick, "lost N" where an overrun skipped N entries), else from
 *                 the model's own records ("Signal", "Wait" from the engine;
 *                 "Wait (held on the CPU)" from the OS on the legacy path);
 *                 every such span says which in args.source
 *   GPU engines   one per engine: which queue ran when, preemptions,
 *                 ContextSwitch packets, the interrupts it raised
 *   CPU threads   the OS interrupt thread ("os-irq": ISR and DPC spans, each
 *                 with the signal its interrupt carried), the OS scheduler
 *                 thread on kernel-mode paths ("os-sched": each buffer it hands
 *                 to a ring, "to the ring") and each application thread
 *                 ("submit" spans, FENCE_SIGNAL_QUEUED / FENCE_WAIT_QUEUED
 *                 instants, CPU wait spans)
 * GPU timestamps are converted to the CPU clock through the stack's clock
 * calibration (rt_stack_clock_calibration).  Flow arrows go from each signal
 * to every wait it released, on both paths: a GPU wait straight from the
 * signal (the GPU released it); a CPU wait or a wait held on the CPU through
 * the DPC whose interrupt carried the signal (signal -> DPC -> wait), or
 * straight when no such DPC ran before the wait ended.  The releasing signal
 * is the one of the same fence with the least value reaching the wait's,
 * not after the wait ended.  Every span a flow joins has args fence and
 * value.
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
	size_t gpu_work, gpu_signals, gpu_waits, held_waits;   /* the model's own records drawn */
	size_t runs, preemptions, ctx_switches;
	size_t submits, sched_submits;   /* application submissions; kernel-mode buffers the OS scheduler handed on */
	size_t queues;           /* queue tracks */
	size_t flows;            /* all arrows */
	size_t flows_via_dpc;    /* of which: a signal to the DPC that carried it, or that DPC to a wait */
};

/* A queue's name on the timeline: its handle (rt_cqueue_trace_handle). */
struct rig_trace_queue {
	uint64_t handle;
	const char *name;
};

/* Tests only: a deliberately broken copy the trace test must catch.
 * RIG_TRACE_BROKEN_RAW_GPU_TS: GPU timestamps written as they are, unconverted;
 * RIG_TRACE_BROKEN_WRONG_FENCE: a wait's arrow from a signal of another fence. */
enum rig_trace_broken { RIG_TRACE_OK, RIG_TRACE_BROKEN_RAW_GPU_TS, RIG_TRACE_BROKEN_WRONG_FENCE };

/* Copy s's trace records into t under `label` (e.g. "native").  0, or
 * -ENOMEM.  c (may be NULL) gets the counts. */
int rig_trace_copy(struct rt_stack *s, struct fb_trace *t, const char *label, enum rig_trace_broken broken,
		   struct rig_trace_counts *c);
/* The same, the queues named: q[0..nq) (may be NULL, 0). */
int rig_trace_copy_named(struct rt_stack *s, struct fb_trace *t, const char *label, const struct rig_trace_queue *q,
			 size_t nq, enum rig_trace_broken broken, struct rig_trace_counts *c);

/* The label of a run's track groups: its path ("native"; "run" for a
 * scenario that compares none), " #2" from the second repetition on. */
struct fb_run;
void rig_trace_label(struct fb_run *run, char *out, size_t len);
/* --trace for a scenario: start s's trace when the run has one (before the
 * work it should show) / copy it into the run's trace under rig_trace_label
 * (+ " " + part when not NULL: one stack of several, "adapter A"), q[0..nq)
 * named, with rig_trace_report's notes (after the work, before s is
 * destroyed).  0, or the run's error (fb_run_error). */
int rig_trace_run_start(struct fb_run *run, struct rt_stack *s);
int rig_trace_run_copy(struct fb_run *run, struct rt_stack *s, const char *part, const struct rig_trace_queue *q,
		       size_t nq);
/* The run's notes on its timeline: tracing overhead, records dropped, what
 * the signals and waits came from. */
void rig_trace_report(struct fb_run *run, const struct rig_trace_counts *c);

#endif
