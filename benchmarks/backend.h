/* benchmarks/backend.h — the seam under the workloads: what a D3D12-style
 * frame graph needs from whatever runs it, so that the same workload code
 * (benchmarks/workload.c) and the same replay files (benchmarks/replay.c)
 * run on the model or on a real GPU.
 *
 * Two implementations:
 *   model    gpu-model/runtime/d3d.h: the model's stack (benchmarks/backend_model.c)
 *   vulkan   timeline semaphores on a Vulkan device, as vkd3d-proton builds
 *            D3D12 fences (benchmarks/vulkan/vk_graph.c)
 *
 * What a workload uses, and nothing more: queues of a type (direct,
 * compute, copy), lists of work of a duration (copy / dispatch / draw of
 * `ns`), fences (a 64-bit value: GetCompletedValue, CPU Signal), a queue's
 * Execute / Signal / Wait, and CPU waits through events (SetEventOnCompletion,
 * WaitForSingleObject, WaitForMultipleObjects(any)).  The model's
 * validation layer (d3d_debug.h: resources, states, barriers) stays the
 * model's: bm_model_list / bm_model_fence hand its objects to that code.
 *
 * Handles are opaque; every call names its backend through the workload
 * (struct bm_wl, workload.h), which carries the ops and the instance.
 *
 *   op                          who                              blocks?
 *   queue_*, list_*, fence_     the workload's one thread         execute/signal/wait: no
 *     create/signal, event_*                                      (a legacy hold goes to a thread)
 *   fence_value, queue_progress any thread                        no
 *   event_wait_any              the workload's thread             yes, up to ns (< 0: forever)
 *   snap                        the workload's thread             settles first (bounded)
 *   down                        the workload's thread             drains, bounded by stall_ns
 *   trace_*                     the workload's thread             no (copy: after a drain)
 */
#ifndef BM_BACKEND_H
#define BM_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "benchmarks/host_cpu.h"
#include "gpu-model/runtime/d3d.h"

struct bm_queue;
struct bm_fence;
struct bm_list;
struct bm_event;
struct fb_trace;

enum bm_backend_kind { BM_BACKEND_MODEL, BM_BACKEND_VULKAN };

#define BM_BE_EXEC 16                   /* lists one execute takes */
#define BM_BE_ENGINES 3                 /* 3D, compute, copy: GPU busy per engine where known */

/* Counters at one edge of a measured region: what a backend can tell.  The
 * has_ flags say which it measured (a key it cannot measure is left out of
 * the report, never written as 0). */
struct bm_be_counters {
	uint64_t interrupts;            /* model: the OS's; vulkan: /proc/interrupts lines of the GPU driver */
	uint64_t gpu_signals;           /* queue Signals that reached the GPU */
	uint64_t lost_wakeups;          /* model only */
	uint64_t held_waits;            /* queue Waits the host held on the CPU (legacy) */
	uint64_t validation_errors;     /* the backend's validation layer's reports */
	uint64_t busy_ns[BM_BE_ENGINES];
	struct bm_host host;            /* application thread, and the host's own threads */
	bool has_interrupts, has_lost, has_busy, validating;
};

/* What a backend's trace copy drew (trace_copy). */
struct bm_trace_counts {
	size_t work, holds, cpu_waits;  /* spans: lists' work on the GPU, held Waits, CPU waits */
	size_t clamped;                 /* work spans started before the queue's previous one ended, clamped */
	uint64_t dropped;               /* records past the backend's bound, not kept */
	size_t cap;                     /* that bound: records kept (0: none) */
	size_t unclocked;               /* queues whose GPU times are not on the host clock: not drawn */
	char clock[200];                /* how GPU times became host times (one line) */
};

struct bm_backend_ops {
	const char *name;               /* "model", "vulkan" */
	/* queues: 0 / -errno */
	int (*queue_create)(void *be, enum rt_list_type t, const char *name, struct bm_queue **out);
	void (*queue_destroy)(void *be, struct bm_queue *q);
	const char *(*queue_name)(void *be, const struct bm_queue *q);
	int (*execute)(void *be, struct bm_queue *q, struct bm_list *const *lists, size_t n);
	int (*signal)(void *be, struct bm_queue *q, struct bm_fence *f, uint64_t v);
	int (*wait)(void *be, struct bm_queue *q, struct bm_fence *f, uint64_t v);
	/* the queue's completed work, a count that only rises: the watchdog's progress */
	uint64_t (*queue_progress)(void *be, struct bm_queue *q);
	/* what the queue is stuck behind (d3d.h rt_cqueue_blocked_wait): true and *f, *v */
	bool (*blocked_wait)(void *be, struct bm_queue *q, struct bm_fence **f, uint64_t *v);
	/* fences: the device's, freed at down */
	int (*fence_create)(void *be, struct bm_fence **out);
	uint64_t (*fence_value)(void *be, struct bm_fence *f);
	int (*fence_signal)(void *be, struct bm_fence *f, uint64_t v);   /* the CPU's Signal */
	/* lists of a type; a name for timelines and messages */
	int (*list_create)(void *be, enum rt_list_type t, const char *name, struct bm_list **out);
	int (*list_record)(void *be, struct bm_list *l, enum rt_op op, uint64_t ns, unsigned units);
	int (*list_close)(void *be, struct bm_list *l);
	void (*list_reset)(void *be, struct bm_list *l);
	void (*list_destroy)(void *be, struct bm_list *l);
	/* events (CreateEvent, SetEventOnCompletion, WaitForMultipleObjects any) */
	int (*event_create)(void *be, bool manual_reset, bool initial, struct bm_event **out);
	void (*event_destroy)(void *be, struct bm_event *e);
	void (*event_set)(void *be, struct bm_event *e);
	int (*set_event)(void *be, struct bm_fence *f, uint64_t v, struct bm_event *e);
	/* the index of a set event (auto-reset ones reset) / -ETIMEDOUT / -errno */
	int (*event_wait_any)(void *be, struct bm_event *const *evs, size_t n, int64_t ns);
	/* counters now (the backend settled first) */
	void (*snap)(void *be, struct bm_be_counters *out);
	/* the validation layer's first report into buf ("" if none) */
	void (*validation_message)(void *be, char *buf, size_t len);
	/* drain (bounded) and free what the backend owns: 0 / -ETIMEDOUT */
	int (*down)(void *be);
	/* --trace where the backend records its own timeline (NULL: it does not;
	 * the model's goes through its stack, trace_rig.h).  start: record from
	 * now (broken: tests only, 0); cpu_wait: the application's CPU wait on
	 * f >= v (f may be NULL: several) from t0 to t1 (lf_now_ns); copy: the
	 * records into t, track groups "<label>: ...", after a drain: 0 / -errno */
	int (*trace_start)(void *be, int broken);
	void (*trace_cpu_wait)(void *be, struct bm_fence *f, uint64_t v, uint64_t t0, uint64_t t1);
	int (*trace_copy)(void *be, struct fb_trace *t, const char *label, struct bm_trace_counts *c);
	/* while tracing, after a drain: q's completed lists since trace_start, in
	 * order, their start and end on the host clock (lf_now_ns, from GPU
	 * timestamps); *n of them (at most max).  0 / -ENOTSUP (no timestamps,
	 * or no clock relation) / -ENOBUFS (records were dropped past the
	 * backend's bound: *n are the kept ones, not every list) */
	int (*work_spans)(void *be, struct bm_queue *q, uint64_t *t0, uint64_t *t1, size_t max, size_t *n);
};

#endif
