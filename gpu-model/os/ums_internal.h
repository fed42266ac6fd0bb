/* gpu-model/os/ums_internal.h — layouts shared by the user-mode submission files
 * only: ums.c, device.c, doorbell.c, sched.c, power.c. */
#ifndef OS_UMS_INTERNAL_H
#define OS_UMS_INTERNAL_H

#include <pthread.h>

#include "gpu-model/os/os_internal.h"
#include "gpu-model/os/ums.h"
#include "lockfree/ring.h"

#define OS_UMS_MAX_QUEUES   (HW_MAX_ENGINES * HW_MAX_QUEUES)
#define OS_UMS_MAX_CONTEXTS 256
#define OS_UMS_MAX_DEVICES  64

/* Why a context is off the run list (any bit set: suspended). */
#define OS_SUSPEND_USER  0x1u   /* os_context_suspend */
#define OS_SUSPEND_D3    0x2u   /* device power-down */
#define OS_SUSPEND_ERROR 0x4u   /* device in error (abnormal termination) */

/* A logical doorbell: the application's two mappings live on one line the
 * application reads on every submission and the OS writes on (dis)connects. */
struct os_doorbell {
	LF_ALIGNED _Atomic(_Atomic uint64_t *) cpuva;   /* physical register or the dummy page */
	_Atomic uint64_t status;                       /* enum os_doorbell_status */
	/* under u->lock */
	int phys;                                      /* physical doorbell held, -1: none */
	bool created, connected, aborted;
	size_t map_bytes;                              /* what the mapping covers: the caps' size (0: none) */
	struct os_ring_alloc *rb, *rbc;                /* the ring allocations it references (created) */
};
/* one line read on every submission */
LF_ASSERT_ONE_LINE(struct os_doorbell, cpuva, status);

/* A kernel-mode submission, from the application to the scheduler thread. */
struct os_km_desc {
	const struct hw_cmd *cmds;
	uint64_t n;
	uint64_t progress;
};

struct os_hwqueue {
	struct os_ums *u;
	struct os_context *ctx;
	bool um;
	bool native_progress;            /* D3DDDI_CREATEHWQUEUEFLAGS::NativeProgressFence */
	struct hw_queue *hwq;            /* user-mode: its own; kernel-mode: kq's */
	struct os_queue *kq;             /* kernel-mode: the OS's queue (held legacy waits) */
	struct lf_ring *subq;            /* kernel-mode: os_km_desc, application -> scheduler */
	struct os_fence *progress;
	LF_ALIGNED _Atomic uint64_t last_queued;   /* the application (user-mode) or os_hwqueue_submit writes */
	struct os_doorbell db;
	LF_ALIGNED _Atomic bool gone;    /* destroyed: the scheduler discards its submissions */
	_Atomic bool sched_busy;         /* kernel-mode: the scheduler holds a popped submission; its seq_cst
	                                  * store before its gone load pairs with the destroy's gone store
	                                  * before its busy load (os_sched_hand, os_hwqueue_sched_wait_locked) */
	bool resident;                   /* ring allocations resident (u->lock) */
	unsigned draining;               /* its os_hwqueue_destroy drains it (0 or 1: a second is -EBUSY); a user
	                                  * suspend leaves it running (u->lock) */
	bool destroyed;                  /* by its owner: its progress fence is no more the OS's (u->lock) */
	struct os_hwqueue *next;         /* in its context (u->lock) */
	struct os_log *log;              /* logbuf: user-mode queues' native fence logs; NULL for kernel-mode */
	struct hw_ctx_alloc *ctx_alloc;  /* ctxalloc.c: user-mode queues' (kernel-mode: kq's); NULL once destroyed */
};
/* read-only after create | the application's last queued | the OS's doorbell | gone */
LF_ASSERT_APART(struct os_hwqueue, progress, last_queued);
LF_ASSERT_APART(struct os_hwqueue, last_queued, db);
LF_ASSERT_APART(struct os_hwqueue, db, gone);

/* A ring buffer or ring buffer control allocation (u->lock). */
struct os_ring_alloc {
	struct os_device *d;
	enum os_ring_alloc_kind kind;
	void *mem;                       /* its memory: the ring's slots, or its control block (write pointer
	                                  * at offset 0); the bound ring's once bound (freed with the queue) */
	size_t bytes, slots;
	struct lf_ring *ring;            /* the ring over the pair, once bound */
	struct hw_queue *bound;          /* the queue whose ring it is, NULL: none yet */
	unsigned refs;                   /* live doorbells referencing it */
	bool resident, d3_evicted, dead;
	void *kept;                      /* its unbound memory after an abnormal termination: the process may
	                                  * still write through its CPU VA; freed at its destroy or detach */
	struct os_ring_alloc *next;      /* in its device */
};

struct os_context {
	struct os_device *d;
	uint64_t id;                     /* its handle in the DDI log */
	unsigned engine;
	unsigned suspended;              /* OS_SUSPEND_* (u->lock) */
	bool dead;
	struct os_hwqueue *queues;       /* (u->lock) */
	struct os_context *next;         /* in its device */
};

struct os_device {
	struct os_ums *u;
	uint32_t log_dev;                /* logbuf: its log list in the adapter's os_logs (0: none) */
	LF_ALIGNED _Atomic bool error;
	bool dead;
	bool destroying;                 /* os_device_destroy began: no context or queue is created (u->lock) */
	struct os_context *contexts;     /* (u->lock) */
	struct os_fence **fences;        /* tracked (u->lock) */
	struct os_ring_alloc *allocs;    /* its ring allocations, destroyed ones too (u->lock) */
	size_t nfences, fences_cap;
	struct hw_ctx_alloc *ctx_alloc;  /* ctxalloc.c: its device context allocation (u->lock; NULL: none) */
};

struct os_ums {
	struct os_adapter *a;
	struct hw_adapter *hw;
	struct os_ums_config cfg;
	pthread_mutex_t lock;            /* every doorbell, context, power and lifetime change */
	size_t log_bytes;                /* logbuf: bytes of each new user-mode queue's logs (lock) */
	LF_ALIGNED _Atomic uint64_t *dummy;   /* the dummy page, dummy_bytes: rings here are lost */
	size_t db_bytes, dummy_bytes;    /* the caps' doorbell memory size; the dummy page allocated for it */
	struct os_hwqueue *phys_owner[HW_MAX_DOORBELLS];       /* dedicated: who holds each register */
	/* every queue ever created, append-only until detach (the scheduler walks it) */
	struct os_hwqueue *queues[OS_UMS_MAX_QUEUES];
	LF_ALIGNED _Atomic uint32_t nqueues;
	struct os_context *contexts[OS_UMS_MAX_CONTEXTS];
	uint32_t ncontexts;
	struct os_device *devices[OS_UMS_MAX_DEVICES];
	uint32_t ndevices;
	bool d3;
	uint64_t d3_since;
	unsigned draining;               /* destroys draining queues now: D3 is refused (u->lock) */
	pthread_cond_t drained;          /* an os_hwqueue_destroy's drain ended (with u->lock) */
	/* threads */
	int efd;                         /* the scheduler's eventfd: the kernel crossing of a submission */
	pthread_t sched, power;
	bool sched_started, power_started;
	clockid_t sched_clock;           /* the scheduler thread's CPU-time clock; (clockid_t)-1: none */
	_Atomic pid_t sched_tid, power_tid;
	LF_ALIGNED _Atomic bool stop;
	/* counters: under u->lock or by their one thread; read relaxed */
	LF_ALIGNED lf_counter connects, victimizations, f1_requests, hung_reports, f1_disconnects, f0_by_connect,
		d3_entries, d0_exits, d3_ns, ring_evictions, ring_restores, suspends, resumes, aborts,
		drain_timeouts, lost_at_abnormal;
	LF_ALIGNED lf_counter km_rejected, km_discarded, sched_wakeups, preempt_requests,
		sched_busy_ns;           /* scheduler thread; sched_busy_ns: its CPU time, written once as it exits */
	LF_ALIGNED _Atomic uint64_t km_submits, notifies;                 /* application threads (RMW) */
	_Atomic uint64_t thunks;         /* the applications' other kernel calls (os_ums_kernel_calls) */
	/* tdr.c: the watchdog thread and its counters (single writer) */
	pthread_t tdr;
	bool tdr_started, tdr_init;
	pthread_mutex_t tdr_lock;
	pthread_cond_t tdr_cond;
	_Atomic pid_t tdr_tid;
	bool bugchecked;                 /* (u->lock) */
	uint64_t tdr_times[OS_TDR_HISTORY];
	unsigned tdr_n;
	_Atomic uint32_t tdr_hung_pending;   /* bit e: engine e reported hung, not yet taken by the watchdog
	                                      * (set under tdr_lock by the power thread) */
	/* the watchdog's looks (its thread only): per engine, the queue it was
	 * inside, its progress then and since when; shared by its main loop and
	 * the looks it takes while it waits for a lock or an engine */
	struct hw_queue *tdr_seen[HW_MAX_ENGINES];
	uint64_t tdr_last[HW_MAX_ENGINES], tdr_since[HW_MAX_ENGINES];
	/* resets made while it waited (its thread only), settled once it holds
	 * nothing: each the device found guilty (NULL: a queue of no device);
	 * a reset faults its queue for good, so there are fewer than queues */
	struct os_device *tdr_pend[OS_UMS_MAX_QUEUES + HW_MAX_ENGINES];
	unsigned tdr_npend;
	LF_ALIGNED lf_counter tdr_timeouts, tdr_hung, tdr_preempt_requests, tdr_preempted, tdr_resets, tdr_guilty,
		tdr_bugchecks;
};
/* the lock apart from the dummy page (rings on disconnected doorbells); the
 * counter blocks of u->lock holders, the scheduler and the applications apart */
LF_ASSERT_APART(struct os_ums, lock, dummy);
LF_ASSERT_APART(struct os_ums, power_tid, stop);
LF_ASSERT_APART(struct os_ums, stop, connects);
LF_ASSERT_APART(struct os_ums, lost_at_abnormal, km_rejected);
LF_ASSERT_APART(struct os_ums, sched_busy_ns, km_submits);

/* doorbell.c, u->lock held */
void os_doorbell_disconnect_locked(struct os_hwqueue *q, enum os_doorbell_status status);
/* The doorbell is gone: its references on the ring allocations dropped. */
void os_doorbell_release_locked(struct os_hwqueue *q);
/* An application's kernel call (os_ums_kernel_calls). */
static inline void os_ums_thunk(struct os_ums *u)
{
	atomic_fetch_add_explicit(&u->thunks, 1, memory_order_relaxed);
}
/* device.c, u->lock held: the device's end destroys its ring allocations */
void os_ring_allocs_destroy_locked(struct os_device *d);
/* device.c, u->lock held */
void os_context_apply_locked(struct os_context *c);
/* device.c: may q be on the HW scheduler's run list now?  The one rule for
 * every place that puts a queue on or off it, or asks whether it runs.  u->lock. */
bool os_hwqueue_runs_locked(const struct os_hwqueue *q);
/* sched.c: the scheduler thread's body (os_ums_attach starts it on the instance) */
void *os_sched_main(void *arg);
/* tdr.c */
int os_tdr_start(struct os_ums *u);
void os_tdr_stop(struct os_ums *u);   /* after u->stop is set */
/* The power thread: engines (bit e) reported hung, for the watchdog to recover. */
void os_tdr_report_hung(struct os_ums *u, uint32_t engines);
/* Wait, under u->lock, for the engine of hq to leave it (retire: to have
 * seen hq retired, after hw_queue_retire_begin / hw_queue_unschedule_begin).
 * Any thread; the watchdog never waits on an engine without watching every
 * engine meanwhile: one it finds hung (TdrDelay without progress, or
 * reported) it resets at once, the device found guilty terminated once it
 * holds nothing.  Another thread waits as long as the engine takes: a hung
 * one is the watchdog's to recover, which takes no lock for that. */
void os_tdr_engine_wait_locked(struct os_ums *u, struct hw_queue *hq, bool retire);
/* hw_queue_retire, through os_tdr_engine_wait_locked. */
void os_tdr_retire_locked(struct os_ums *u, struct hw_queue *hq);
/* One look at every engine when the caller is u's watchdog (a wait it
 * makes under u->lock for another thread that may itself wait on a hung
 * engine: the scheduler letting go of a popped submission); nothing on any
 * other thread.  Resets it makes are settled when the watchdog holds nothing. */
void os_tdr_watch_locked(struct os_ums *u);
/* power.c */
void *os_power_main(void *arg);
/* device.c: DxgkDdiSuspendContext / DxgkDdiResumeContext of c on the DDI log. */
void os_context_ddi_locked(struct os_context *c, bool suspend);
void os_power_d0_locked(struct os_ums *u);
void os_power_resume_all_locked(struct os_ums *u);

#endif
