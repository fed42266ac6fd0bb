/* benchmarks/vulkan/vk_graph_internal.h — the Vulkan backend's state,
 * shared by vk_graph.c (the ops, submission, events), vk_sched.c (the legacy
 * scheduler thread), vk_spin.c (the spin shader, its calibration, command
 * buffers) and vk_irq.c (/proc/interrupts).  Included from this folder only.
 *
 * Locking: one mutex, g->lock, guards every queue's FIFO and command
 * buffers, every fence's submitted value, the scheduler's sets and every
 * vkQueueSubmit (a VkQueue is externally synchronized; two logical queues
 * may share one).  Nobody blocks in Vulkan while holding it: waits
 * (vkWaitSemaphores) are made with it released.
 *
 *   field                        written by                         read by
 *   queue FIFO, held, waits      app (enqueue) / scheduler (pump),   both, under g->lock
 *                                under g->lock
 *   fence submitted              whoever submits its signal, locked  both, under g->lock
 *   counters (lf_counter-like)   under g->lock                       snap, under g->lock
 *   stop                         the app (down)                      the scheduler (under g->lock)
 */
#ifndef BM_VK_GRAPH_INTERNAL_H
#define BM_VK_GRAPH_INTERNAL_H

#define VK_NO_PROTOTYPES
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <vulkan/vulkan.h>

#include "benchmarks/backend.h"
#include "benchmarks/vulkan/vk_device.h"
#include "benchmarks/vulkan/vk_graph.h"

#define VKG_QUEUES 20                   /* logical queues (the workload's three + a replay file's) */
#define VKG_PHYS 2                      /* device queues used */
#define VKG_WAITS 32                    /* waits attached to one batch; recent waits a queue remembers */
#define VKG_CBS 256                     /* command buffers a logical queue recycles */
#define VKG_SLOT 256                    /* bytes per output slot: the largest minStorageBufferOffsetAlignment */
#define VKG_REGS 8                      /* fence values one event waits for */
#define VKG_TS (BM_BE_EXEC + 1)         /* timestamps per command buffer: before its lists, after each */
#define VKG_NAMES 255                   /* list names the trace keeps (interned); index VKG_NAMES: */
#define VKG_NAME_OTHER VKG_NAMES        /* a name past them, drawn as VKG_NAME_OTHER_TEXT (never another's) */
#define VKG_NAME_OTHER_TEXT "(a list name past the trace's 255)"
#define VKG_NAME_LEN 64                 /* a name's room, NUL included (a replay file's: 31 characters) */
#define VKG_TRACE_MAX (1u << 20)        /* trace records kept; more are counted as dropped */

enum vkg_kind { VKG_EXEC, VKG_SIGNAL, VKG_WAIT };

/* One queue operation in a logical queue's FIFO (kept back, or held). */
struct vkg_op {
	struct vkg_op *next;
	enum vkg_kind kind;
	struct bm_fence *f;
	uint64_t v;
	uint64_t t_enq;                 /* when the application handed it over (lf_now_ns): a hold's start */
	size_t nl;                      /* EXEC: its lists; list j's commands end at ns[lend[j]] */
	uint8_t lname[BM_BE_EXEC];      /* EXEC: list j's name, an index of g->names */
	size_t lend[BM_BE_EXEC];
	size_t n;                       /* EXEC: durations */
	uint64_t ns[];
};

/* --trace: what the backend records while tracing (vk_trace.c), in the
 * host's clock (lf_now_ns); WORK's times are GPU ticks until copied. */
enum vkg_tkind { VKG_T_WORK, VKG_T_HOLD, VKG_T_CPU_WAIT };
struct vkg_tev {
	enum vkg_tkind kind;
	uint8_t name;                   /* WORK: the list's name (g->names) */
	unsigned q;                     /* WORK, HOLD: the logical queue's index */
	struct bm_fence *f;             /* HOLD, CPU_WAIT: what it waited for (CPU_WAIT: may be NULL) */
	uint64_t v;
	uint64_t t0, t1;
};

struct bm_fence {
	VkSemaphore sem;
	uint64_t submitted;             /* the highest value a submitted signal (or the CPU) gives it; g->lock */
	char name[32];
	unsigned id;                    /* its index in g->fences: the trace's fence id */
};

struct vkg_wait { struct bm_fence *f; uint64_t v; };

struct bm_queue {
	char name[32];
	enum rt_list_type type;
	unsigned phys;                  /* the device queue it runs on */
	VkSemaphore progress;           /* +1 per batch */
	uint64_t submitted;             /* the last progress value submitted */
	VkCommandPool pool;
	VkCommandBuffer cb[VKG_CBS];
	uint64_t cb_tag[VKG_CBS];       /* the progress value of its batch (0: never used) */
	size_t ncb, next_cb;
	VkQueryPool qp;                 /* VKG_TS timestamps per command buffer (none: the family has none) */
	bool cb_timed[VKG_CBS];         /* its timestamps not yet added to busy_ns */
	uint8_t cb_nl[VKG_CBS];         /* its lists (a span each on the trace) */
	uint8_t cb_lname[VKG_CBS][BM_BE_EXEC];
	uint64_t hold_end;              /* legacy: when its last hold ended (the next starts no earlier) */
	uint64_t busy_ns;               /* GPU time of its completed work, from the timestamps */
	struct vkg_op *head, *tail;     /* ops kept back (native) or held (legacy) */
	bool held;                      /* legacy: the scheduler owns the FIFO until it empties */
	struct vkg_wait waits[VKG_WAITS];   /* native: waits for the next batch */
	size_t nwaits;
	struct vkg_wait recent[VKG_WAITS];  /* the last waits submitted, with the batch after them */
	uint64_t recent_tag[VKG_WAITS];
	size_t nrecent;
	unsigned slot;                  /* its slot of the output buffer */
};

struct bm_list {
	enum rt_list_type type;
	uint8_t name;                   /* an index of g->names ("WORK": unnamed) */
	bool closed;
	size_t n;
	uint64_t ns[RT_LIST_MAX_CMDS];
};

struct bm_event {
	bool manual, set;
	size_t nregs;
	struct vkg_wait regs[VKG_REGS];
};

struct vkg {
	struct bm_vk vk;                /* vk_device.h: loader, instance, device, queues, validation count */
	VkDevice d;
	VkQueue queue[VKG_PHYS];
	uint32_t family[VKG_PHYS];
	unsigned nphys;
	uint32_t ts_bits[VKG_PHYS];     /* timestampValidBits of each queue's family */
	double ts_period_ns;
	bool legacy, cpu_impl, broken_early_release;
	int64_t stall_ns;
	/* the spin shader */
	VkShaderModule module;
	VkDescriptorSetLayout dsl;
	VkPipelineLayout layout;
	VkPipeline pipe;
	VkDescriptorPool dpool;
	VkDescriptorSet set;
	VkBuffer buf;
	VkDeviceMemory mem;
	double loops_per_ns;            /* the spin's turns per ns */
	double dispatch_ns;             /* a short dispatch's time: the device's fixed cost of one */
	bool calibrated_by_timestamps;
	/* objects, owned: freed at down */
	pthread_mutex_t lock;
	struct bm_queue *q[VKG_QUEUES];
	size_t nq;
	struct bm_fence **fences;
	size_t nfences, capfences;
	struct bm_event **events;
	size_t nevents, capevents;
	/* the legacy scheduler thread */
	pthread_t sched;
	pthread_cond_t cond;            /* the scheduler sleeps on it with nothing of the GPU's to wait for */
	bool sched_started, stop, sched_sleeping, sched_gpu;
	pid_t sched_tid;
	clockid_t sched_clock;
	struct vkg_wait *outstanding;   /* legacy: submitted signals the scheduler has not seen yet */
	size_t nout, capout;
	int error;                      /* the first failed submission's -errno (sticky); g->lock */
	/* counters (g->lock) */
	uint64_t gpu_signals, held_waits, sched_wakeups, signals_seen, batches;
	/* --trace (vk_trace.c; g->lock): the records, the list names, the GPU clock's offset */
	bool tracing;
	int trace_broken;               /* tests only: enum bm_vkg_trace_broken (vk_graph.h) */
	pid_t app_tid;                  /* the thread that started the trace: the application's */
	struct vkg_tev *tev;
	size_t ntev, captev;
	uint64_t tev_dropped;
	size_t tev_max;                 /* records kept: VKG_TRACE_MAX (tests: smaller) */
	char (*names)[VKG_NAME_LEN];    /* VKG_NAMES of them, allocated on the first */
	size_t nnames;
	/* the GPU clock on the host's: GPU tick clock_tick0 is host ns clock_lo..clock_hi
	 * (calibration's dispatches: a bound only), or exactly clock_lo (calibrated:
	 * VK_EXT_calibrated_timestamps, within +-clock_dev_ns) */
	uint64_t clock_tick0;
	int64_t clock_lo, clock_hi;
	uint64_t clock_dev_ns;
	bool clock_known, clock_calibrated;
	/* /proc/interrupts: the GPU driver's lines */
	char irq_names[160];
	bool has_irq;
};

/* vk_graph.c */
void vkg_pump_locked(struct vkg *g, struct bm_queue *q);
uint64_t vkg_value(struct vkg *g, struct bm_fence *f);
/* vk_spin.c: the pipeline, its calibration, a batch's command buffer */
int vkg_spin_up(struct vkg *g, char *err, size_t errlen);
/* The spin's calibration (vk_spin.c): the fastest dispatch of a short and
 * of a full loop count, round after round (at most VKG_CAL_ROUNDS) until
 * the full one is the longer.  measure(ctx, loops, &ns) times one dispatch
 * (0 or -errno, returned as is).  -EIO: the full loop was never the longer
 * (a device that does not run the loop); *t_short, *t_full: the fastest
 * seen.  Calling thread only. */
typedef int (*vkg_cal_measure_fn)(void *ctx, uint32_t loops, double *ns);
int vkg_cal_slope(vkg_cal_measure_fn measure, void *ctx, double *t_short, double *t_full);
void vkg_spin_down(struct vkg *g);
int vkg_record_locked(struct vkg *g, struct bm_queue *q, const struct vkg_op *o, VkCommandBuffer *out);
/* q's completed work's GPU time added to q->busy_ns (its timestamps read) */
void vkg_busy_locked(struct vkg *g, struct bm_queue *q);
/* vk_sched.c: the legacy scheduler thread */
int vkg_sched_start(struct vkg *g);
void vkg_sched_stop(struct vkg *g);
void vkg_sched_kick_locked(struct vkg *g, bool gpu_item);
int vkg_outstanding_add_locked(struct vkg *g, struct bm_fence *f, uint64_t v);
/* vk_trace.c: --trace (the ops trace_start, trace_cpu_wait, trace_copy) */
/* name's index in g->names (interned), or VKG_NAME_OTHER when they are
 * full or out of memory; vkg_name_text: an index's text */
uint8_t vkg_name_locked(struct vkg *g, const char *name);
const char *vkg_name_text(const struct vkg *g, uint8_t i);
void vkg_trace_add_locked(struct vkg *g, const struct vkg_tev *e);
/* a calibration dispatch: host before its submit and after its completion, its two GPU times (ticks) */
void vkg_clock_sample(struct vkg *g, uint64_t host0, uint64_t host1, uint64_t tick0, uint64_t tick1);
/* The GPU clock from vkGetCalibratedTimestampsEXT (device and CLOCK_MONOTONIC
 * domains): 0, or -ENOTSUP (the device does not offer it: the dispatches'
 * bound stays), or -EIO.  Bring-up's thread, before any queue. */
int vkg_clock_calibrate(struct vkg *g);
/* A GPU time (ticks) on the host clock (ns).  g->clock_known. */
uint64_t vkg_host_ns(const struct vkg *g, uint64_t ticks);
/* command buffer i of q completed: its lists' spans (ts[0..nl] in GPU ticks) recorded when tracing */
void vkg_trace_work_locked(struct vkg *g, struct bm_queue *q, size_t i, const uint64_t *ts);
int vkg_trace_start(void *be, int broken);
void vkg_trace_cpu_wait(void *be, struct bm_fence *f, uint64_t v, uint64_t t0, uint64_t t1);
int vkg_trace_copy(void *be, struct fb_trace *t, const char *label, struct bm_trace_counts *c);
int vkg_work_spans(void *be, struct bm_queue *q, uint64_t *t0, uint64_t *t1, size_t max, size_t *n);
/* vk_irq.c: the GPU drivers' lines of path (/proc/interrupts) summed over CPUs into *count,
 * their names into names (NULL: not wanted); false: no such line, or no file */
bool vkg_irq_read(const char *path, uint64_t *count, char *names, size_t len);

#endif
