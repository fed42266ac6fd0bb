/* gpu-model/hw/hw_internal.h — adapter, engine and queue layout shared by the hw/ files only. */
#ifndef HW_INTERNAL_H
#define HW_INTERNAL_H

#include <pthread.h>

#include "gpu-model/hw/hw.h"

/* A counter written by one thread and read by others at any time. */
typedef _Atomic uint64_t hw_counter;
static inline void hw_count(hw_counter *c, uint64_t n)
{
	/* single writer: a relaxed load + store, no locked instruction on the hot path */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n, memory_order_relaxed);
}

struct hw_queue {
	struct lf_ring *ring;
	struct hw_adapter *a;
	unsigned engine;
	/* engine-private: the WAIT this queue is blocked on */
	bool waiting;
	struct hw_fence *wait_fence;
	uint64_t wait_value;
	LF_ALIGNED hw_counter executed;   /* engine writes */
	LF_ALIGNED uint64_t submitted;    /* producer-private */
};

struct hw_engine {
	LF_ALIGNED struct lf_wake wake;           /* parks here in F1; doorbells and signals notify */
	LF_ALIGNED _Atomic uint32_t nqueues;      /* run list length (release on add) */
	_Atomic uint32_t waiting_queues;          /* >0: signalers must notify this engine */
	struct hw_queue *queues[HW_MAX_QUEUES];
	pthread_t thread;
	bool started;
	_Atomic pid_t tid;
	unsigned index;
	struct hw_adapter *a;
	/* counters: written by the engine only */
	LF_ALIGNED hw_counter signals, interrupts, cmds, parks, waits_blocked, busy_ns;
};

struct hw_adapter {
	struct hw_caps caps;
	int cpus[64];
	LF_ALIGNED struct lf_mpsc irq_q;          /* engines -> OS interrupt thread */
	LF_ALIGNED struct lf_wake irq_wake;       /* the interrupt line: the OS thread parks here */
	LF_ALIGNED _Atomic uint64_t signal_epoch; /* bumped by every fence write that may unblock a WAIT */
	LF_ALIGNED _Atomic bool stop;
	struct hw_engine engines[HW_MAX_ENGINES];
	/* fence storage (allocation is not a hot path: a mutex) */
	pthread_mutex_t storage_lock;
	void **cv_pages, **mv_pages;
	size_t npages_cv, npages_mv;
	uint32_t nslots;              /* packed slots handed out so far */
	uint32_t *free_slots;
	size_t nfree, free_cap;
	pthread_mutex_t queue_lock;
};

void *hw_page_alloc(const struct hw_adapter *a);
void hw_page_free(const struct hw_adapter *a, void *page);
void hw_engine_signal(struct hw_adapter *a, struct hw_engine *e, struct hw_fence *f, uint64_t v);



int hw_engines_start(struct hw_adapter *a);
void hw_engines_stop(struct hw_adapter *a);
#endif
