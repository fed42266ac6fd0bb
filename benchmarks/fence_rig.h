/* benchmarks/fence_rig.h — the fence-stack workloads the scenarios and tests share.
 *
 * rig_irq_run: N GPU signals on one fence, a chosen fraction of them with a CPU
 * waiter registered before the signal, on one path (native or legacy), and
 * the counters that come out: interrupts per signal, spurious interrupts,
 * OS-thread wake-ups and idle time, wait latency (GPU signal -> CPU waiter
 * running), lost wake-ups.  Lockstep: each signal completes before the next
 * is submitted, so "had a CPU waiter" is exact.
 *
 * rig_stress_run: many application threads, each with a fence and a HW queue
 * of its own, each submitting WORK(random) + SIGNAL(i) and CPU-waiting for i:
 * a signal whose interrupt is lost is the last one on its fence until the
 * waiter's deadline, so every lost interrupt is a counted lost wake-up (the
 * detector the fault-injection tests prove can fail).
 *
 * Both: called from one thread; they bring up and tear down their own stack
 * (gpu-model/runtime/stack.h) and submit through its direct queues.
 */
#ifndef BM_FENCE_RIG_H
#define BM_FENCE_RIG_H

#include <stdbool.h>
#include <stdint.h>

#include "src/fb_hist.h"
#include "benchmarks/host_cpu.h"
#include "benchmarks/trace_rig.h"
#include "gpu-model/runtime/stack.h"

enum rig_fence_path { RIG_FENCE_NATIVE, RIG_FENCE_LEGACY };

/* splitmix64: the workloads' (and their tests') reproducible randomness. */
uint64_t rig_rand(uint64_t *s);

/* Fill cfg for a path: native = native fences enabled; legacy = monitored fences only. */
void rig_config(struct os_config *cfg, enum rig_fence_path path);

struct rig_irq_params {
	enum rig_fence_path path;
	uint64_t signals;             /* GPU signals */
	double waited_fraction;       /* 0..1: fraction with a CPU waiter */
	uint64_t work_ns;             /* GPU WORK before each signal */
	uint64_t seed;
	uint64_t deadline_ns;         /* a waiter not released this long after its value is lost */
	const struct os_config *cfg;  /* NULL: rig_config(path) */
	unsigned idle_fences;         /* more fences, each with a CPU waiter never satisfied (ISR scaling) */
	uint64_t period_ns;           /* pace: submit signal i at start + i * period (0: back to back) */
	uint64_t warmup_ns;           /* the same workload this long first, not counted */
	bool user_mode;               /* submit through a user-mode HW queue (native: it has log buffers, and
	                               * the runtime's progress write + LOG follow each buffer) instead of a
	                               * direct kernel-mode queue */
	size_t log_bytes;             /* user_mode: each log buffer's size (0: the OS default, 4 KiB) */
	void (*started)(void *arg, struct rt_stack *s);   /* optional: threads are up (perf hooks) */
	void *started_arg;
	struct fb_trace *trace;       /* optional: the measured region's timeline goes here (trace_rig.h) */
	const char *trace_label;      /* its track groups' label ("native") */
};

struct rig_irq_result {
	struct os_stats os;
	uint64_t signals;             /* GPU signals executed */
	uint64_t waited;              /* signals that had a CPU waiter */
	uint64_t lost_wakeups;        /* waited signals whose waiter missed its deadline */
	uint64_t elapsed_ns;
	struct bm_host host;          /* the region's host CPU: the calling (application) thread's from the
	                               * first signal to the last, the OS threads' from settled to settled */
	struct fb_hist *wait_lat;     /* GPU signal -> waiter running, ns (caller frees) */
	struct rig_trace_counts trace;   /* with params.trace: what the timeline holds */
};

/* 0, or -errno with a one-line reason in err. */
int rig_irq_run(const struct rig_irq_params *p, struct rig_irq_result *r, char *err, size_t errlen);

/* GPU wait: engine A signals, engine B runs past its WAIT on that value.
 * Native: the wait is in hardware; legacy: the OS holds B's command buffer on
 * the CPU and submits it on A's interrupt.  Lockstep rounds: the application
 * sleeps in a CPU wait on a second fence B signals after its wait (so it
 * takes no CPU from the engines; that wait adds one interrupt per round). */
struct rig_gpuwait_params {
	enum rig_fence_path path;
	uint64_t rounds;
	uint64_t work_ns;             /* engine A's WORK before each signal */
	uint64_t warmup_ns;           /* rounds this long first, not counted */
	const struct os_config *cfg;  /* NULL: rig_config(path) with 2 engines */
	void (*started)(void *arg, struct rt_stack *s);
	void *started_arg;
	struct fb_trace *trace;       /* optional: the measured rounds' timeline goes here (trace_rig.h) */
	const char *trace_label;      /* its track groups' label ("native") */
};

struct rig_gpuwait_result {
	struct rig_trace_counts trace;   /* with params.trace: what the timeline holds */
	struct os_stats os;
	uint64_t elapsed_ns;
	struct bm_host host;          /* the rounds' host CPU (as rig_irq_result.host) */
	struct fb_hist *lat;          /* A's signal -> B past its wait, ns (caller frees) */
};

int rig_gpuwait_run(const struct rig_gpuwait_params *p, struct rig_gpuwait_result *r, char *err, size_t errlen);

struct rig_stress_params {
	enum rig_fence_path path;
	unsigned threads;             /* application threads, one fence + queue each */
	unsigned engines;             /* queues are spread over this many engines */
	uint64_t pairs;               /* signal/wait pairs per thread */
	uint64_t max_work_ns;         /* random GPU work before each signal: 0..max */
	uint64_t max_app_delay_ns;    /* random application delay between submit and wait: 0..max */
	uint64_t stop_after_lost;     /* end early once this many were lost (0: never) */
	uint64_t seed;
	uint64_t deadline_ns;
	enum hw_fault hw_fault;
	enum os_fault os_fault;
};

struct rig_stress_result {
	struct os_stats os;
	uint64_t pairs;               /* signal/wait pairs completed */
	uint64_t blocked;             /* ... whose wait found the value not yet reached */
	uint64_t lost_wakeups;
	uint64_t elapsed_ns;
};

int rig_stress_run(const struct rig_stress_params *p, struct rig_stress_result *r, char *err, size_t errlen);

#endif
