/* gpu-model/os/os_internal.h — layouts shared by the os/ files only. */
#ifndef OS_INTERNAL_H
#define OS_INTERNAL_H

#include <pthread.h>
#include <time.h>

#include "gpu-model/os/os.h"
#include "lockfree/cacheline.h"
#include "lockfree/counter.h"
#include "lockfree/htab.h"
#include "lockfree/waitset.h"

#define OS_MAX_QUEUES 64
#define OS_FAULT_WINDOW_NS 50000     /* the broken variants' widened windows (NO_RESAMPLE, RELEASE_*) */

struct os_fence {
	struct os_adapter *a;
	struct hw_fence hw;
	enum os_fence_type type;
	unsigned behaviour;             /* OS_FENCE_NO_* creation flags (monitored fences) */
	uint32_t index;                 /* slot in the adapter's scan table */
	/* The waiter set's consumer side: whoever releases waiters (the interrupt
	 * thread, a CPU signaler, destroy) holds it around lf_waitset_release and
	 * the resample, so each release is decided against its own signaled value. */
	pthread_mutex_t release_lock;
	/* DxgkDdiUpdateMonitoredValues "synchronized with the interrupt
	 * handler": the interrupt thread holds it (inside the release lock)
	 * while it handles the fence, a CPU waiter's update while it adds and
	 * calls the DDI (fence.c, os_waiter_update_mv) */
	pthread_mutex_t isr_lock;
	LF_ALIGNED struct lf_waitset ws;  /* native: publishes into hw.mv; monitored: internal word */
	LF_ALIGNED _Atomic uint64_t last64; /* 32-bit GPUs: the reconstruction reference: last CPU-signaled value, raised by newer GPU values read */
	/* shared.c / cross.c */
	_Atomic uint32_t opens;         /* shared: local handles open (0: not opened through a process) */
	uint32_t x_slot;                /* cross-adapter: this instance's slot in x */
	struct os_cross *x;             /* cross-adapter: the group sharing CurrentValue; NULL otherwise */
	_Atomic uint64_t x_seen;        /* cross-adapter: last value announced to this instance */
	_Atomic uint32_t log_dev;       /* logbuf: its parent device's log list (os_logs_device; 0: no device) */
};
/* read-mostly identity | the waiter set (waiters, interrupt thread) | the CPU signalers' word */
LF_ASSERT_APART(struct os_fence, index, ws);
LF_ASSERT_APART(struct os_fence, ws, last64);

/* HELD: a legacy GPU wait held on the CPU (queue.c): its node's ev is set
 * when the value is reached, and the interrupt thread then feeds the buffer. */
enum os_waiter_kind { OS_WAIT_BLOCKING, OS_WAIT_EVENT, OS_WAIT_MULTI, OS_WAIT_HELD };

struct os_multi {
	struct lf_event *ev;            /* the caller's: touched only by the one who fires */
	bool all;
	bool sets_every_hit;            /* OS_FAULT_MULTI_SETS_EVERY_HIT (broken on purpose) */
	_Atomic bool fired;             /* ev was set: nobody touches it again */
	_Atomic uint32_t remaining;     /* values not yet reached */
	_Atomic uint32_t refs;          /* nodes still registered + the registering thread */
};

struct os_waiter {
	struct lf_waiter w;             /* w.ctx = this */
	uint32_t kind;
	_Atomic uint32_t refs;          /* event/multi/held: the registering thread's (holder's) + the set's */
	_Atomic bool abandoned;         /* released because the fence was destroyed (before ev is set) */
	struct lf_event ev;             /* blocking waits sleep here; held waits: set when released */
	struct lf_event *user_ev;       /* event-style waits */
	struct os_multi *multi;
};

/* Counters of one application thread (cache-line private, merged on read). */
struct os_app_counters {
	LF_ALIGNED lf_counter waits, waits_fast, waits_blocked, self_released, timeouts, lost_wakeups,
		late_wakeups, signal_released, abandoned;
	struct os_app_counters *next;
	uint64_t adapter_id;
	pid_t tid;                      /* the thread it counts for */
};

struct os_held {                    /* a command buffer (rest) held on the CPU */
	struct os_held *next;
	size_t n, pos;
	struct os_waiter *wait;         /* the WAIT at pos, registered with its fence (NULL: none yet) */
	uint64_t wait_t0;               /* the timeline trace: when the feed reached that WAIT (CPU ns) */
	struct hw_cmd cmds[];
};

/* ddi.c: the DDI calls made on an adapter.  Slots are reserved by a
 * fetch-add and published by their own ready flag (release), so appends from
 * any thread never block; only the first OS_DDI_LOG_MAX are kept. */
struct os_ddi_rec {
	_Atomic uint32_t ready;
	uint32_t ddi;
	uint64_t handle, value;
	uint32_t count;
};
struct os_ddi_log {
	LF_ALIGNED _Atomic uint64_t n;               /* slots reserved */
	_Atomic uint64_t count[OS_DDI_KINDS];
	struct os_ddi_rec rec[OS_DDI_LOG_MAX];
};

struct os_queue {
	struct os_adapter *a;
	struct hw_queue *hwq;
	pthread_mutex_t lock;           /* ring producer side + held list */
	struct os_held *head, *tail;
	_Atomic uint32_t nheld;
	uint64_t next_id;               /* submission fence IDs handed out (q->lock) */
	_Atomic uint64_t resubmitted, resubmitted_paging;
	struct hw_ctx_alloc *ctx_alloc;  /* ctxalloc.c (NULL once destroyed) */
	bool system;                     /* the system context (vidmm.c's paging queue): may carry HW_CMD_PAGING */
	bool retired;                    /* os_queue_retire: nothing held, nothing accepted (q->lock) */
};

struct os_adapter {
	struct os_config cfg;
	struct hw_adapter *hw;
	bool native;
	struct os_feature_state feature;   /* feature.c: the KMD's query at initialization */
	struct os_native_fence_ddis kmd;   /* kmd.c: DRIVER_INITIALIZATION_DATA's native fence DDIs */
	bool feature_queried;           /* the KMD called IsFeatureEnabled(DXGK_FEATURE_NATIVE_FENCE) */
	uint64_t id;
	struct lf_htab *handles;        /* global handle -> fence (RCU lookups) */
	_Atomic uint64_t next_handle;
	_Atomic(struct os_fence *) *table;  /* scan table for NULL payloads and the legacy walk */
	_Atomic uint32_t table_hw;      /* high-water mark */
	uint32_t *free_idx;
	size_t nfree;
	pthread_mutex_t fence_lock;
	struct os_queue *queues[OS_MAX_QUEUES];
	_Atomic uint32_t nqueues;
	_Atomic uint64_t held_total;    /* command buffers held on the CPU, all queues */
	_Atomic bool feed_retry;        /* a held buffer waits for ring space: the interrupt thread polls */
	_Atomic unsigned irq_syncs;     /* os_irq_sync calls under way: the stopping interrupt thread drains
	                                 * until none is (seq_cst: a Dekker pair with a->stop) */
	pthread_t irq;
	bool irq_started;
	clockid_t irq_clock;            /* the interrupt thread's CPU-time clock */
	uint64_t irq_t0;                /* when it started (CLOCK_MONOTONIC ns) */
	_Atomic pid_t irq_tid;
	LF_ALIGNED _Atomic bool stop;
	/* interrupt-thread counters (single writer) */
	LF_ALIGNED lf_counter interrupts, spurious, soft, released, fences_scanned, bugchecks,
		held_released, isr_busy_ns, irq_idle_ns, irq_wakeups, sw_signals;
	LF_ALIGNED _Atomic uint64_t sw_signal_packets;   /* queue.c: any submitting thread */
	_Atomic uint64_t held_waits;    /* queue.c: a submitter or the interrupt thread, under the queue's lock */
	pthread_mutex_t app_lock;
	struct os_app_counters *app;
	/* ddi.c / cross.c */
	struct os_ddi_log ddi;
	LF_ALIGNED lf_counter x_propagated;  /* interrupt thread (single writer) */
	LF_ALIGNED _Atomic uint64_t x_received, x_soft;  /* any propagating interrupt thread */
	struct os_logs *logs;           /* logbuf.c: the log buffers of user-mode HW queues */
	_Atomic(struct os_trace *) trace;  /* trace.c: NULL until tracing starts (then set once, release) */
	struct os_vidmm *vidmm;         /* vidmm.c: NULL without a context segment */
	pthread_mutex_t dma_lock;       /* dma.c: data allocations, the data segment's words, kept buffers */
	uint64_t dma_next;              /* dma.c: the next free word */
	uint32_t dma_pages;             /* dma.c: virtual pages handed out */
	struct os_alloc *allocs;
	struct os_dma_kept *dma_kept;
};
/* dma.c: a command buffer broadcast to linked GPUs, kept until the adapter goes */
struct os_dma_kept {
	struct os_dma_kept *next;
	struct hw_cmd cmds[];
};
/* submitters' held count | stop (polled by the interrupt thread) | its
 * counters | the DDI log (any thread) | cross-adapter counts of two writers */
LF_ASSERT_APART(struct os_adapter, held_total, stop);
LF_ASSERT_APART(struct os_adapter, stop, interrupts);
LF_ASSERT_APART(struct os_adapter, irq_wakeups, ddi);
LF_ASSERT_APART(struct os_adapter, ddi, x_propagated);
LF_ASSERT_APART(struct os_adapter, x_propagated, x_received);

/* trace.c: free the adapter's trace (adapter teardown) */
void os_trace_free(struct os_adapter *a);
/* irq.c: true on an adapter's interrupt thread */
extern __thread bool os_in_irq_thread;
/* irq.c: the interrupt thread's body (os_adapter_start starts it on the adapter) */
void *os_irq_main(void *arg);
/* rcu.c: nesting RCU reader registration for the handle table */
void os_rcu_enter(void);
void os_rcu_leave(void);
/* irq.c: wait until the interrupt thread has handled every record raised
 * before the call (a no-op when it does not run, or on the interrupt thread) */
void os_irq_sync(struct os_adapter *a);
/* tdr.c: take m.  On the TDR watchdog's thread it never waits without
 * watching the engines (a thread holding m may wait for a hung engine that
 * only the watchdog can reset): it tries, and looks at the engines between
 * tries; elsewhere pthread_mutex_lock. */
void os_mutex_lock_watching(pthread_mutex_t *m);
/* fence.c */
void os_fence_free(void *obj);                                /* deferred (call_rcu) */
/* What a software record for one fence (os_fence_defer_release) carries. */
#define OS_REC_RECEIVED   0x1u   /* value v came from another adapter: release against it, never pass it on */
#define OS_REC_CPU_SIGNAL 0x2u   /* a CPU signal of v: released by the signaler already; pass v on */
/* A value as one write put it in CurrentValue: the value (64-bit) and the
 * write's number (hw_fence_write; 0: no known write).  It may release only
 * the waiters registered before that write (os.h, the release rule). */
struct os_write {
	uint64_t value, seq;
};
#define OS_WRITE_NONE ((struct os_write){ 0, 0 })
bool os_fence_defer_release(struct os_fence *f, struct os_write w, bool always, unsigned how);  /* queue a software record */
uint64_t os_fence_read(struct os_fence *f);                   /* reconstructed CPU read */
/* 32-bit GPUs (No64BitAtomics): v more than UINT32_MAX/2 above the last
 * signaled value (both_ways: or below it).  Always false on 64-bit GPUs. */
bool os_out_of_range(struct os_fence *f, uint64_t v, bool both_ways);
/* The fence's value is 32 bits wide in memory: a 32-bit GPU's fence, unless NO_GPU_ACCESS. */
bool os_fence_narrow(const struct os_fence *f);
/* Release what the write `signaled` satisfies among the waiters registered
 * before it (OS_WRITE_NONE: none), then what the current value satisfies
 * among those registered before its write; publish, resample; under f's
 * release lock.  Any thread.  Returns the waiters released; *held counts the
 * held GPU waits among them. */
size_t os_fence_process(struct os_fence *f, struct os_write signaled, size_t *held);
bool os_fence_has_waiters(const struct os_fence *f);          /* published threshold: someone may wait */
/* The batch form of os_fence_process (one DxgkDdiUpdateMonitoredValues call
 * for the batch): release and publish for every f[i] (against signaled[i]),
 * log the one call for the MonitoredValues that changed, then resample them
 * all.  The interrupt thread.  Returns the waiters released. */
size_t os_fence_process_batch(struct os_fence *const *f, const struct os_write *signaled, size_t n);
/* stats.c: this thread's counter block for adapter a */
struct os_app_counters *os_app_counters(struct os_adapter *a);
/* A GPU wait held on the CPU, as a waiter of its fence (queue.c's side).
 * os_held_wait: NULL when f already reached v, else a registered node the
 * caller holds a reference to; os_held_wait_ready: released (value reached,
 * or the fence destroyed); os_held_wait_put: the holder is done with it
 * (f: its fence while it lives, NULL once the fence is gone). */
struct os_waiter *os_held_wait(struct os_fence *f, uint64_t v);
bool os_held_wait_ready(struct os_waiter *w);
void os_held_wait_put(struct os_fence *f, struct os_waiter *w);

/* logbuf.c (native fence log buffers) */
struct os_logs *os_logs_create(void);
void os_logs_destroy(struct os_logs *l);
/* logbuf: a new device's key for its log list (0: too many devices: its
 * fences' interrupts read the interrupting engine's logs), and a log joining
 * its device's list.  Under the ums lock. */
uint32_t os_logs_device(struct os_adapter *a);
void os_log_set_device(struct os_log *l, uint32_t dev);              /* after the engines and the interrupt thread stopped */
/* Interrupt thread, inside a read-side section: the log part of a native fence
 * signaled interrupt.  Optimized payload: read the named queues' signal logs
 * (a NULL handle: every queue of the engine) and release waiters against the
 * logged values; *fallback set when a log overran (scan every fence).  Other
 * payloads: read the engine's logs for their timestamps only.  Returns waiters released. */
size_t os_logs_interrupt(struct os_adapter *a, const struct hw_irq_rec *rec, bool *fallback);
/* Interrupt thread, after os_logs_interrupt set *fallback: does the fallback
 * read a native fence of log device `dev` (f->log_dev)?  Seed, "Log buffer
 * overrun is permitted": "the live value of every fence owned by the same
 * device" as the queue whose log overran; a fence of no device, or a
 * fallback whose device is not known (a handle without a log, a recreation
 * that dropped entries): read. */
bool os_logs_fallback_reads(const struct os_adapter *a, uint32_t dev);
void os_logs_stats(const struct os_adapter *a, struct os_stats *o);
/* queue.c */
size_t os_queues_feed_held(struct os_adapter *a);             /* interrupt thread: submit satisfied held buffers */

/* ---- ddi.c / shared.c / cross.c ---- */
struct os_cross;
/* ddi.c: record one DDI call on a.  Any thread; wait-free. */
void os_ddi_log(struct os_adapter *a, enum os_ddi d, uint64_t handle, uint64_t value);
/* One batched call of d for `count` entries, the first (handle, value). */
void os_ddi_log_batch(struct os_adapter *a, enum os_ddi d, uint64_t handle, uint64_t value, uint32_t count);
/* fence.c's create, with the cross-adapter group to join (NULL: none). */
int os_fence_create_in(struct os_adapter *a, enum os_fence_type type, uint64_t initial,
		       unsigned flags, struct os_cross *x, struct os_fence **out);
/* ... for process `process` (os_process_id; 0: none): its fences' packed pages. */
int os_fence_create_proc(struct os_adapter *a, uint64_t process, enum os_fence_type type, uint64_t initial,
			 unsigned flags, struct os_cross *x, struct os_fence **out);
int os_cross_create(struct os_adapter *a, enum os_fence_type type, uint64_t initial,
		    unsigned flags, struct os_fence **out);
/* Before f is published: point CurrentValue at the group's, hold a native MV
 * at 0.  Returns the word the waiter set publishes into (NULL: its own). */
_Atomic uint64_t *os_cross_bind(struct os_fence *f, struct os_cross *x);
void os_cross_detach(struct os_fence *f);           /* os_fence_destroy: leave the group */
void os_cross_put(struct os_cross *x);              /* os_fence_free: drop the instance's reference */
/* Interrupt thread of f's adapter, inside a read-side section: pass the
 * write w that a signal made to f (value 0: not known; the CurrentValue read
 * now) to every other adapter's instance. */
void os_cross_propagate(struct os_fence *f, struct os_write w);
void os_cross_adapter_gone(struct os_adapter *a);   /* os_adapter_destroy: detach stray instances */

/* ---- timing.c: the kernel-mode submission path's cost (os_config.timing) ---- */
/* Busy for ns on the calling thread (0: nothing).  Any thread. */
void os_timing_work(uint64_t ns);
/* false with a one-line reason in err: a cost out of range. */
bool os_timing_check(const struct os_timing *t, char *err, size_t errlen);

/* kmd.c: the KMD fills a->kmd (DRIVER_INITIALIZATION_DATA); 0, or -EINVAL with
 * the reason in err when native fences are advertised and an entry is missing. */
int os_kmd_driver_init(struct os_adapter *a, char *err, size_t errlen);
/* kmd.c: the OS's calls of the native fence DDIs, through the table, logged. */
void os_kmd_create_native_fence(struct os_adapter *a, uint64_t global, uint64_t initial);
void os_kmd_destroy_native_fence(struct os_adapter *a, uint64_t global);
void os_kmd_open_native_fence(struct os_adapter *a, uint64_t global, uint64_t local);
void os_kmd_close_native_fence(struct os_adapter *a, uint64_t local, uint64_t global);
void os_kmd_set_native_fence_log_buffer(struct os_adapter *a, struct hw_queue *q, enum hw_log_type t,
					struct hw_log *log);
/* ... UpdateNativeFenceLogs for q[0..n): logged as one call naming q[0], value
 * pos (the log position read before the call: os.h, OS_DDI_UPDATE_NATIVE_FENCE_LOGS) */
void os_kmd_update_native_fence_logs(struct os_adapter *a, struct hw_queue *const *q, size_t n, uint64_t pos);
/* feature.c: the KMD's initialization query (IsFeatureEnabled, QueryFeatureInterface, GetOSCaps). */
int os_kmd_query_features(struct os_adapter *a, char *err, size_t errlen);

/* vidmm.c: the video memory manager (NULL without caps.ctx_local_slots).
 * add: c (of queue q; NULL for a device context allocation) resident now. */
int os_vidmm_init(struct os_adapter *a);
void os_vidmm_destroy(struct os_adapter *a);
int os_vidmm_add(struct os_adapter *a, struct hw_ctx_alloc *c, struct hw_queue *q);
void os_vidmm_remove(struct os_adapter *a, struct hw_ctx_alloc *c);
/* queue.c: a queue of the system context (no context allocation: the
 * paging queue). */
int os_queue_create_system(struct os_adapter *a, unsigned engine, size_t ring_slots, struct os_queue **out);
/* dma.c: free every data allocation and kept buffer (adapter teardown). */
void os_allocs_free(struct os_adapter *a);
#endif
