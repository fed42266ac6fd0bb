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

#define VKG_QUEUES 20                   /* logical queues (the workload's three + a replay file's) */
#define VKG_PHYS 2                      /* device queues used */
#define VKG_WAITS 32                    /* waits attached to one batch; recent waits a queue remembers */
#define VKG_CBS 256                     /* command buffers a logical queue recycles */
#define VKG_SLOT 256                    /* bytes per output slot: the largest minStorageBufferOffsetAlignment */
#define VKG_REGS 8                      /* fence values one event waits for */

enum vkg_kind { VKG_EXEC, VKG_SIGNAL, VKG_WAIT };

/* One queue operation in a logical queue's FIFO (kept back, or held). */
struct vkg_op {
	struct vkg_op *next;
	enum vkg_kind kind;
	struct bm_fence *f;
	uint64_t v;
	size_t n;                       /* EXEC: durations */
	uint64_t ns[];
};

struct bm_fence {
	VkSemaphore sem;
	uint64_t submitted;             /* the highest value a submitted signal (or the CPU) gives it; g->lock */
	char name[32];
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
	VkQueryPool qp;                 /* two timestamps per command buffer (none: the family has none) */
	bool cb_timed[VKG_CBS];         /* its timestamps not yet added to busy_ns */
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
	/* /proc/interrupts: the GPU driver's lines */
	char irq_names[160];
	bool has_irq;
};

/* vk_graph.c */
void vkg_pump_locked(struct vkg *g, struct bm_queue *q);
uint64_t vkg_value(struct vkg *g, struct bm_fence *f);
/* vk_spin.c: the pipeline, its calibration, a batch's command buffer */
int vkg_spin_up(struct vkg *g, char *err, size_t errlen);
void vkg_spin_down(struct vkg *g);
int vkg_record_locked(struct vkg *g, struct bm_queue *q, const uint64_t *ns, size_t n, VkCommandBuffer *out);
/* q's completed work's GPU time added to q->busy_ns (its timestamps read) */
void vkg_busy_locked(struct vkg *g, struct bm_queue *q);
/* vk_sched.c: the legacy scheduler thread */
int vkg_sched_start(struct vkg *g);
void vkg_sched_stop(struct vkg *g);
void vkg_sched_kick_locked(struct vkg *g, bool gpu_item);
int vkg_outstanding_add_locked(struct vkg *g, struct bm_fence *f, uint64_t v);
/* vk_irq.c: the GPU drivers' lines of path (/proc/interrupts) summed over CPUs into *count,
 * their names into names (NULL: not wanted); false: no such line, or no file */
bool vkg_irq_read(const char *path, uint64_t *count, char *names, size_t len);

#endif
