/* gpu-model/runtime/d3d_internal.h — the command list, as the queues read it
 * (d3d_list.c writes, d3d_queue.c executes, d3d_debug.c reads its resource
 * uses), and the validation layer's hooks.  Runtime folder only. */
#ifndef RT_D3D_INTERNAL_H
#define RT_D3D_INTERNAL_H

#include <pthread.h>

#include "gpu-model/runtime/d3d.h"
#include "gpu-model/runtime/d3d_debug.h"

/* A resource use a list declares for the validation layer. */
struct rt_clist_use {
	struct rt_resource *res;
	bool barrier, write;
	uint8_t state, after;           /* access: state; barrier: before -> after */
};

struct rt_clist {
	enum rt_list_type type;
	bool recording;
	uint32_t tag;                           /* its name's tag (rt_clist_set_name), in every WORK's pad */
	const struct rt_pso *pso;               /* the pipeline state (the caller's), NULL: none */
	size_t n;                               /* commands recorded */
	uint64_t work_ns;
	struct hw_cmd cmds[RT_LIST_MAX_CMDS];   /* WORK, one per unit */
	uint8_t ops[RT_LIST_MAX_CMDS];          /* enum rt_op of each */
	char err[160];
	size_t nuses;
	struct rt_clist_use uses[RT_LIST_MAX_USES];
	/* its last execution on a queue that names a validation layer (the
	 * submitting thread writes at execute, the recording thread reads at
	 * Reset: the title orders the two, as D3D12 asks): the layer (NULL:
	 * none), the queue, the queue's progress value once that execution is
	 * done, and once the one before it (0: none) was (rt_debug_list_reset) */
	struct rt_debug *exec_debug;
	struct rt_queue *exec_q;
	uint64_t exec_done, exec_prev_done;
	char exec_what[64];                     /* "direct0 (execute #5)" */
};

/* The device's default queues (rt_device_default_queue): one slot per
 * queue type (direct, compute, copy) and priority.  rt.c keeps the table in
 * the device and frees the queues with it (rt_cqueue_free_default);
 * d3d_queue.c makes them, under the lock rt_device_defaults hands out. */
#define RT_DEFAULT_QUEUE_SLOTS (3 * 3)
struct rt_cqueue **rt_device_defaults(struct rt_device *d, pthread_mutex_t **lock);
void rt_cqueue_free_default(struct rt_cqueue *q);

/* The validation layer's hooks, called by the queues (d3d_queue.c) after a
 * successful call: a queue's timeline (-ENOSPC when full), then its
 * executes, signals and waits in queue order. */
int rt_debug_add_queue(struct rt_debug *v, const char *name, enum rt_list_type type);
void rt_debug_execute(struct rt_debug *v, int tl, struct rt_clist *const *lists, size_t n, uint64_t exec);
void rt_debug_signal(struct rt_debug *v, int tl, struct rt_fence *f, uint64_t value);
void rt_debug_wait(struct rt_debug *v, int tl, struct rt_fence *f, uint64_t value);
/* rt_clist_reset of l, executed last on a queue that names a layer: the
 * re-recording checked against that execution's completion. */
void rt_debug_list_reset(struct rt_debug *v, const struct rt_clist *l);

#endif
