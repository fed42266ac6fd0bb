/* benchmarks/workload.h — the seed's multi-engine workloads
 * (multi-engine-synchronization), written as a D3D12 title writes them
 * against gpu-model/runtime/d3d.h, and what their scenarios report.
 *
 * A workload runs on one stack with three engines (3D, compute, copy) and
 * one queue of each type; the same code runs on the native and the legacy
 * fence path, on user-mode or kernel-mode queues, and on either backend
 * (benchmarks/backend.h): the model, or a Vulkan device
 * (benchmarks/vulkan/vk_graph.h), every queue, list, fence and event call
 * going through the backend's ops.  The workloads live here,
 * not in their scenario files, so the tests drive them step by step
 * (tests/test_workloads.c: the seed's length-3 ring trace).
 *
 * Every CPU wait in a workload goes through an event (SetEventOnCompletion,
 * then WaitForSingleObject) watched for progress: when none of the
 * workload's queues completes anything for stall_ns (BM_WL_STALL_NS by
 * default) the wait fails the step with -ETIMEDOUT, never hangs, and
 * bm_wl_stall says why in one line: what the CPU waits for and what each
 * stuck queue waits for, with the fences' current values ("no progress for
 * 2.0 s: the CPU waits for 'frameFence' >= 3 (now 1); queue 'compute0' waits
 * for 'g' >= 1 (now 0); ...").  bm_wl_down then releases the stuck waits
 * (CPU signals) so that the stack drains.
 *
 *   call                        who
 *   bm_wl_up / bm_wl_down       the scenario's (or test's) thread
 *   bm_frame_*, bm_ring_heap_*, that same thread
 *   bm_pipeline_*, bm_async_* (the queues' one submitter)
 *   bm_wl_snap, bm_wl_report    that thread, at the measured region's edges
 */
#ifndef BM_WORKLOAD_H
#define BM_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "benchmarks/backend.h"
#include "benchmarks/host_cpu.h"
#include "gpu-model/runtime/d3d.h"
#include "gpu-model/runtime/d3d_debug.h"
#include "gpu-model/runtime/stack.h"

struct fb_run;

#define BM_WL_STALL_NS 2000000000ll     /* default: no progress this long fails a CPU wait */
#define BM_WL_QUEUES 20                 /* queues the watchdog watches (the three + a replay file's) */
#define BM_WL_FENCES 32                 /* fences with a name in its message */
#define BM_WL_ENGINES 3                 /* 3D, compute, copy */

struct bm_wl {
	/* the backend (backend.h): every queue, list, fence and event call goes through it */
	const struct bm_backend_ops *ops;
	void *be;                       /* its instance (the model's: this bm_wl) */
	enum bm_backend_kind kind;
	/* the model's stack (backend model only; NULL on another backend) */
	struct rt_stack *s;
	struct rt_device *d;
	bool user_mode;                 /* the queues got user-mode submission */
	struct rt_debug *debug;         /* the model's validation layer, when the workload runs under it */
	struct bm_queue *direct, *compute, *copy;
	struct bm_event *ev;            /* the title's CPU-wait event (auto-reset) */
	uint64_t cpu_wait_ns;           /* time the title's thread spent in CPU waits */
	uint64_t cpu_waits;
	uint64_t woke_ns;               /* when the last CPU wait returned (lf_now_ns), read before any trace work */
	bool trace_waits;               /* not the model: CPU waits go to the backend's timeline (the run traces) */
	struct bm_event *extra_events[2];   /* a workload's own events, destroyed with the stack */
	/* the no-progress watchdog (bm_wl_cpu_wait) */
	int64_t stall_ns;               /* 0: BM_WL_STALL_NS */
	struct bm_queue *queues[BM_WL_QUEUES];
	size_t nqueues;
	struct bm_fence *fence[BM_WL_FENCES];
	char fence_name[BM_WL_FENCES][32];
	size_t nfences;
	char stall[512];                /* why the last wait failed ("" if none did) */
	char notes[4][400];             /* what the backend says about itself, for the run's notes ("" unused) */
};

/* How to bring a workload's backend up: the model (bm_wl_up_profiled's
 * arguments) or a Vulkan device (benchmarks/vulkan/vk_graph.h). */
struct bm_wl_config {
	enum bm_backend_kind backend;
	enum rt_path path;              /* native or legacy, on either backend */
	bool user_mode;                 /* model: user-mode submission asked for */
	bool validate;                  /* model: its validation layer; vulkan: the Khronos layer */
	const struct rt_profile *profile;   /* model: a timing profile (NULL: ideal) */
	int device;                     /* vulkan: the device's index (-1: the first real GPU) */
	bool allow_cpu;                 /* vulkan: accept a CPU implementation (lavapipe) */
	int64_t stall_ns;               /* 0: BM_WL_STALL_NS */
	bool broken_early_release;      /* vulkan tests only: legacy submits held work before the value arrives */
};

/* Bring a three-engine stack up on path with one queue of each type
 * (user-mode submission asked for when user_mode), under the validation
 * layer when validate (the workloads then declare every resource use).
 * 0, or -errno with a one-line reason in err. */
int bm_wl_up(struct bm_wl *w, enum rt_path path, bool user_mode, bool validate, char *err, size_t errlen);
/* bm_wl_up under a timing profile (NULL: ideal). */
int bm_wl_up_profiled(struct bm_wl *w, enum rt_path path, bool user_mode, bool validate,
		      const struct rt_profile *profile, char *err, size_t errlen);
/* Either backend, with one queue of each type.  0 / -errno, one line in err
 * (vulkan: -ENODEV no loader or device, -EPERM a CPU implementation refused). */
int bm_wl_up_config(struct bm_wl *w, const struct bm_wl_config *cfg, char *err, size_t errlen);
/* Drain and tear down.  0 / -ETIMEDOUT (a queue did not drain).  Every
 * queue, list, fence and event made through w is freed with it on a backend
 * that owns them (vulkan); on the model the caller destroys its lists and
 * extra queues after, as before. */
int bm_wl_down(struct bm_wl *w);
/* CPU wait, as the seed's titles do: SetEventOnCompletion(f, v, ev) then
 * WaitForSingleObject(ev).  Counts the time in w; tells the validation
 * layer what the CPU now knows.  0 / -ETIMEDOUT / -errno. */
int bm_wl_cpu_wait(struct bm_wl *w, struct bm_fence *f, uint64_t v);
/* The watchdog watches q too (the three queues are watched already) /
 * calls f `name` in its message.  -ENOSPC when full (then unnamed: "fence 0x..."). */
int bm_wl_watch_queue(struct bm_wl *w, struct bm_queue *q);
int bm_wl_name_fence(struct bm_wl *w, struct bm_fence *f, const char *name);
/* The last no-progress failure's message, "" if none. */
const char *bm_wl_stall(const struct bm_wl *w);
/* A closed list of type t holding one op of ns in `units` sub-units. */
int bm_wl_list(struct bm_wl *w, enum rt_list_type t, enum rt_op op, uint64_t ns, unsigned units, struct bm_list **out);

/* ---- the backend's calls (backend.h), through the workload ---- */

static inline int bm_queue_create(struct bm_wl *w, enum rt_list_type t, const char *name, struct bm_queue **out)
{
	return w->ops->queue_create(w->be, t, name, out);
}
static inline void bm_queue_destroy(struct bm_wl *w, struct bm_queue *q)
{
	w->ops->queue_destroy(w->be, q);
}
static inline const char *bm_queue_name(struct bm_wl *w, const struct bm_queue *q)
{
	return w->ops->queue_name(w->be, q);
}
static inline int bm_execute(struct bm_wl *w, struct bm_queue *q, struct bm_list *const *l, size_t n)
{
	return w->ops->execute(w->be, q, l, n);
}
static inline int bm_signal(struct bm_wl *w, struct bm_queue *q, struct bm_fence *f, uint64_t v)
{
	return w->ops->signal(w->be, q, f, v);
}
static inline int bm_wait(struct bm_wl *w, struct bm_queue *q, struct bm_fence *f, uint64_t v)
{
	return w->ops->wait(w->be, q, f, v);
}
static inline int bm_fence_create(struct bm_wl *w, struct bm_fence **out)
{
	return w->ops->fence_create(w->be, out);
}
static inline uint64_t bm_fence_value(struct bm_wl *w, struct bm_fence *f)
{
	return w->ops->fence_value(w->be, f);
}
static inline int bm_fence_signal(struct bm_wl *w, struct bm_fence *f, uint64_t v)
{
	return w->ops->fence_signal(w->be, f, v);
}
static inline int bm_list_create(struct bm_wl *w, enum rt_list_type t, const char *name, struct bm_list **out)
{
	return w->ops->list_create(w->be, t, name, out);
}
static inline int bm_list_record(struct bm_wl *w, struct bm_list *l, enum rt_op op, uint64_t ns, unsigned units)
{
	return w->ops->list_record(w->be, l, op, ns, units);
}
static inline int bm_list_close(struct bm_wl *w, struct bm_list *l)
{
	return w->ops->list_close(w->be, l);
}
static inline void bm_list_reset(struct bm_wl *w, struct bm_list *l)
{
	w->ops->list_reset(w->be, l);
}
static inline void bm_list_destroy(struct bm_wl *w, struct bm_list *l)
{
	w->ops->list_destroy(w->be, l);
}
static inline int bm_event_create(struct bm_wl *w, bool manual, bool initial, struct bm_event **out)
{
	return w->ops->event_create(w->be, manual, initial, out);
}
static inline void bm_event_set(struct bm_wl *w, struct bm_event *e)
{
	w->ops->event_set(w->be, e);
}
static inline int bm_set_event(struct bm_wl *w, struct bm_fence *f, uint64_t v, struct bm_event *e)
{
	return w->ops->set_event(w->be, f, v, e);
}

/* The model's objects behind a handle, for the model-only code (its
 * validation layer, its tests): valid on the model backend only. */
static inline struct rt_cqueue *bm_model_queue(struct bm_queue *q)
{
	return (struct rt_cqueue *)(void *)q;
}
static inline struct rt_fence *bm_model_fence(struct bm_fence *f)
{
	return (struct rt_fence *)(void *)f;
}
static inline struct rt_clist *bm_model_list(struct bm_list *l)
{
	return (struct rt_clist *)(void *)l;
}
static inline struct rt_event *bm_model_event(struct bm_event *e)
{
	return (struct rt_event *)(void *)e;
}
/* The model backend (benchmarks/backend_model.c): its ops, and its
 * bring-up into w (the stack, the validation layer; not the queues). */
extern const struct bm_backend_ops bm_model_ops;
int bm_model_up(struct bm_wl *w, const struct bm_wl_config *cfg, char *err, size_t errlen);

/* Counters at one edge of the measured region (the backend settled first). */
struct bm_wl_snap {
	uint64_t t_ns;
	uint64_t interrupts, gpu_signals, lost_wakeups, held_waits;
	struct bm_host host;            /* the title's thread (the caller) and the host's own threads: CPU time, wake-ups */
	uint64_t busy_ns[BM_WL_ENGINES];
	uint64_t cpu_wait_ns, cpu_waits;
	uint64_t validation_errors;
	bool has_interrupts, has_lost, has_busy, validating;
};
void bm_wl_snap(struct bm_wl *w, struct bm_wl_snap *out);
/* frames/s; host CPU per frame (benchmarks/host_cpu.h: us/frame and
 * wake-ups/frame of the title's thread, the OS interrupt and scheduler
 * threads, their sums host_ and os_, and the region's totals); interrupts,
 * GPU signals, CPU waits (calls: one WaitForMultipleObjects counts once),
 * queue Waits held on the CPU (held_waits_per_frame) and CPU wait time per
 * frame; GPU idle per engine (the engines are the GPU, not host CPU); lost
 * wake-ups: between a and b, for frames.  A key the backend cannot measure
 * is left out. */
void bm_wl_report(struct fb_run *run, const struct bm_wl *w, const struct bm_wl_snap *a,
		  const struct bm_wl_snap *b, uint64_t frames);
/* The few numbers compare_model puts beside each other (the same as the
 * report's keys frames_per_s, host_cpu_per_frame, held_waits_per_frame,
 * interrupts_per_frame). */
struct bm_wl_summary {
	double frames_per_s, host_cpu_us_per_frame, held_waits_per_frame, interrupts_per_frame;
	bool has_interrupts;
};
void bm_wl_summarize(const struct bm_wl_snap *a, const struct bm_wl_snap *b, uint64_t frames,
		     struct bm_wl_summary *out);

/* ---- frame: copy geometry -> 3D pre-pass -> compute lighting -> 3D final ---- */

struct bm_frame_cfg {
	uint64_t geometry_ns, texture_ns;   /* the geometry copy; each of the four texture copies */
	uint64_t prepass_ns, lighting_ns, final_ns;
	unsigned units;                     /* sub-units of every command */
	unsigned frames_in_flight;          /* the CPU waits for frame n - this before frame n */
};
/* A frame in flight has resources of its own (geometry, tex1..4, rt1,
 * buf1) and lists naming them: slot (n - 1) % frames_in_flight. */
#define BM_FRAME_SLOTS 16
struct bm_frame_slot {
	struct bm_list *geometry, *tex[4], *prepass, *lighting, *final;
	struct rt_resource *geometry_r, *tex_r[4], *rt1, *buf1;
};
struct bm_frame {
	struct bm_wl *w;
	struct bm_frame_cfg cfg;
	struct bm_fence *copy_fence, *render_fence, *compute_fence, *frame_fence;
	struct bm_frame_slot slot[BM_FRAME_SLOTS];
	uint64_t n;                         /* frames submitted */
};
/* 0 / -EINVAL (frames_in_flight 0 or > BM_FRAME_SLOTS) / -errno. */
int bm_frame_init(struct bm_frame *f, struct bm_wl *w, const struct bm_frame_cfg *cfg);
/* Submit frame n + 1 (after the CPU throttle).  0 / -errno. */
int bm_frame_submit(struct bm_frame *f);
/* Wait until every submitted frame completed.  0 / -ETIMEDOUT. */
int bm_frame_drain(struct bm_frame *f);
void bm_frame_fini(struct bm_frame *f);

/* ---- ring-heap: the copy/render ring-buffer heap of `length` slots ---- */

#define BM_RING_SLOTS 64                /* ring length the validation layer follows */
struct bm_ring_heap {
	struct bm_wl *w;
	uint64_t length;
	unsigned cpu_latency;               /* the CPU waits for fence1 >= i - this before step i */
	bool broken_no_ring_wait;           /* tests only: the copy engine never waits for a free slot */
	struct bm_fence *fence1, *fence2;   /* render consumed i / copy produced i */
	struct bm_list *map[BM_RING_SLOTS], *draw[BM_RING_SLOTS];   /* one per slot when validating, else [0] */
	struct rt_resource *slot[BM_RING_SLOTS];
	uint64_t i;                         /* steps submitted */
};
/* 0 / -EINVAL (length 0, or > BM_RING_SLOTS under the validation layer) / -errno. */
int bm_ring_heap_init(struct bm_ring_heap *r, struct bm_wl *w, uint64_t length, unsigned cpu_latency,
		      uint64_t map_ns, uint64_t draw_ns, unsigned units);
/* One step of the seed's loop (i + 1).  0 / -errno. */
int bm_ring_heap_step(struct bm_ring_heap *r);
int bm_ring_heap_drain(struct bm_ring_heap *r);
void bm_ring_heap_fini(struct bm_ring_heap *r);

/* ---- pipeline: the seed's PipelinedComputeGraphics ---- */

/* "There must be a buffer of ComputeGraphicsLatency+1 different copies of
 * the data passing from the compute queue to the graphics queue": compute
 * frame n writes pipe[(n - 1) % (cg_latency + 1)] as a UAV, graphics frame n
 * moves it to SHADER_RESOURCE, reads it and moves it back.  Under the
 * validation layer each copy is a resource and has its own list pair (the
 * seed's "multiple command lists corresponding to each of the renamed
 * versions"), else one pair serves every frame. */
#define BM_PIPE_SLOTS 17                /* cg_latency + 1 for every cg_latency the scenarios take */
struct bm_pipeline {
	struct bm_wl *w;
	unsigned cpu_latency, cg_latency;   /* CpuLatency, ComputeGraphicsLatency */
	bool broken_no_compute_wait;        /* tests only: graphics never waits for the compute fence */
	bool broken_no_cpu_throttle;        /* tests only: the CPU never waits for compute (no CpuLatency throttle) */
	struct bm_fence *compute_fence, *graphics_fence;
	struct bm_list *compute[BM_PIPE_SLOTS], *graphics[BM_PIPE_SLOTS];   /* per copy when validating, else [0] */
	struct rt_resource *pipe[BM_PIPE_SLOTS];
	uint64_t frame;                     /* FrameNumber */
	uint64_t graphics_frames;           /* graphics frames submitted */
};
/* 0 / -EINVAL (cg_latency + 1 > BM_PIPE_SLOTS under the validation layer) / -errno. */
int bm_pipeline_init(struct bm_pipeline *p, struct bm_wl *w, unsigned cpu_latency, unsigned cg_latency,
		     uint64_t compute_ns, uint64_t graphics_ns, unsigned units);
int bm_pipeline_step(struct bm_pipeline *p);    /* one turn of the seed's loop */
int bm_pipeline_drain(struct bm_pipeline *p);
void bm_pipeline_fini(struct bm_pipeline *p);

/* ---- async-compute: the seed's AsyncPipelinedComputeGraphics ---- */

/* The pipe buffers: compute frame n writes pipe[(n - 1) % cg_latency] as a
 * UAV (the seed's PipeBufferIndex); a graphics frame moves the buffer of the
 * last compute frame the CPU saw complete to SHADER_RESOURCE, reads it and
 * moves it back, declared as it re-records its list.  Under the validation
 * layer each buffer is a resource and compute has one list per buffer, else
 * one compute list serves every frame. */
#define BM_ASYNC_MAX_LISTS 16
struct bm_async {
	struct bm_wl *w;
	unsigned cpu_latency, cg_latency;
	uint64_t graphics_ns;
	unsigned units;
	bool broken_no_graphics_wait;       /* tests only: compute never waits for the graphics-compute fence */
	bool broken_no_first_compute_wait;  /* tests only (bm_async_init_broken): graphics never waits for
					       (computeFence, 1) */
	bool broken_signal_after_render;    /* tests only: graphics signals the graphics-compute fence after
					       its render, not before */
	bool broken_no_cpu_throttle;        /* tests only: neither stage waits for its fence (no CpuLatency
					       throttle: the seed's SetEventOnCompletion left out) */
	/* tests only: when set, graphics waits for (render_gate, its frame)
	 * right before its render; gate_progress is then the direct queue's
	 * progress value of the last thing submitted before that wait */
	struct bm_fence *render_gate;
	uint64_t gate_progress;
	struct bm_fence *fences[2];         /* compute fence at 0, graphics fence at 1 */
	struct bm_fence *graphics_compute_fence;
	struct bm_event *handles[2];        /* auto-reset, initially set */
	struct bm_list *compute[BM_ASYNC_MAX_LISTS];    /* per pipe buffer when validating, else [0] */
	struct bm_list *graphics[BM_ASYNC_MAX_LISTS];   /* CpuLatency graphics lists */
	struct rt_resource *pipe[BM_ASYNC_MAX_LISTS];
	uint64_t frames[2];                 /* FrameNumbers */
	uint64_t armed[2];                  /* the value each stage's event is armed for (0: none) */
	uint64_t pipe_buffer;               /* the last PipeBufferIndex */
};
/* 0 / -EINVAL (cpu_latency > BM_ASYNC_MAX_LISTS, cg_latency 0, or > BM_ASYNC_MAX_LISTS
 * under the validation layer) / -errno. */
int bm_async_init(struct bm_async *a, struct bm_wl *w, unsigned cpu_latency, unsigned cg_latency,
		  uint64_t compute_ns, uint64_t graphics_ns, unsigned units);
/* Tests only: bm_async_init with deliberate breaks of the seed's protocol:
 * no_first_wait leaves out "pGraphicsQueue->Wait(pComputeFence, 1)"
 * (broken_no_first_compute_wait), signal_after_render signals the
 * graphics-compute fence after the render (broken_signal_after_render). */
int bm_async_init_broken(struct bm_async *a, struct bm_wl *w, unsigned cpu_latency, unsigned cg_latency,
			 uint64_t compute_ns, uint64_t graphics_ns, unsigned units, bool no_first_wait,
			 bool signal_after_render);
int bm_async_step(struct bm_async *a);          /* one turn: WaitForMultipleObjects, one stage */
/* Tests: one turn of the given stage (0 compute, 1 graphics) after waiting
 * for its event alone, so that a test interleaves the stages whatever the
 * CPU's speed against the GPU's; -EINVAL for another stage. */
int bm_async_step_stage(struct bm_async *a, int stage);
int bm_async_drain(struct bm_async *a);
void bm_async_fini(struct bm_async *a);

#endif
