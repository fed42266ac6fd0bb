/* gpu-model/hw/hw_internal.h — adapter, engine and queue layout shared by the hw/ files only. */
#ifndef HW_INTERNAL_H
#define HW_INTERNAL_H

#include <pthread.h>

#include "gpu-model/hw/hw.h"
#include "gpu-model/hw/doorbell.h"
#include "lockfree/counter.h"

/* A physical doorbell register (doorbell.c).  The register has a line of its
 * own, written only by rings (and the KMD's latch) and polled by the engines
 * with plain loads; what the engine and the KMD write sits on a second line,
 * so a ring never waits for the engine's bookkeeping. */
struct hw_doorbell_phys {
	LF_ALIGNED _Atomic uint64_t word;   /* the register: the last value rung (0: never) */
	LF_ALIGNED _Atomic(struct hw_queue *) queue;   /* connected queue (dedicated); NULL: free */
	_Atomic uint64_t last_use_ns;       /* last ring seen or connect: the KMD's LRU clock */
};
/* rings write the register; the engine and the KMD write the rest */
LF_ASSERT_APART(struct hw_doorbell_phys, word, queue);

struct hw_queue {
	/* Kernel-mode: its own.  User-mode: an empty placeholder until the KMD
	 * binds the application's ring buffer allocation at CreateDoorbell
	 * (hw_queue_bind_ring: once; an atomic pointer, every read a load) */
	struct lf_ring *_Atomic ring;
	struct lf_ring *placeholder;      /* user-mode: the empty ring before the bind (freed with the queue) */
	struct hw_adapter *a;
	unsigned engine;
	/* engine-private: the WAIT this queue is blocked on */
	bool waiting;
	struct hw_fence *wait_fence;
	uint64_t wait_value;
	const struct hw_fence *wait_high_fence;   /* HW_FAULT_WAIT_HIGH_WATER only: the fence whose highest */
	uint64_t wait_high;                       /* value seen the broken WAIT compares against (engine) */
	/* engine-private: the command buffer (HW_CMD_INDIRECT) being run */
	const struct hw_cmd *ib;
	uint64_t ib_n, ib_pos;
	/* user-mode submission: the engine runs only up to the write pointer it
	 * read when a doorbell (or a kick) told it to look (seed: "Make the
	 * command buffer visible ... Ring the doorbell") */
	bool um;
	uint32_t id;                      /* engine * HW_MAX_QUEUES + slot: what a global doorbell value names */
	uint64_t known_wptr;              /* engine-private */
	LF_ALIGNED _Atomic uint64_t kick;           /* a write pointer the engine may run up to (0: none): the max of the kicks not taken */
	_Atomic(struct hw_doorbell_phys *) phys;    /* connected doorbell register, NULL (KMD writes) */
	_Atomic uint32_t holds;           /* HW_HOLD_*: who keeps it off the run list (each its own bit); on
	                                   * it while 0 (hw_queue_on_list) */
	_Atomic bool scheduled;           /* HW_FAULT_HOLDS_SPLIT only: the run-list flag stored apart */
	_Atomic bool retired;             /* destroyed: the engine discards what is left */
	_Atomic bool retire_seen;         /* the engine saw it (release): it never touches q's fences again */
	/* logbuf: the OS's log buffers (hw_queue_set_log; the engine acquires)
	 * and the engine-private state of the seed's write order: the CMP decision
	 * of a signal waits for the LOG that follows it */
	_Atomic(struct hw_log *) log[HW_LOG_TYPES];
	struct hw_fence *cmp_fence;       /* engine-private: signaled, interrupt not yet decided */
	uint64_t cmp_value;
	uint64_t cmp_seq;                 /* its write's number (hw_fence_write) */
	const struct hw_fence *signal_fence; /* engine-private: the last SIGNAL's fence and write number, */
	uint64_t signal_seq;              /*   for the LOG entry that follows it */
	uint64_t wait_observed_ts;        /* engine-private: when the current WAIT was queued on the GPU */
	uint64_t wait_end_ts;             /* engine-private: when the engine saw the last WAIT unblocked (GPUT2) */
	uint64_t signal_end_ts;           /* engine-private: when the last SIGNAL executed (GPUT1) */
	uint64_t wait_since_ns;           /* timing.c, engine-private: when the current WAIT blocked (its poll grid) */
	bool fetching;                    /* timing.c, engine-private: the last run left work (false: new work pays doorbell_ns first) */
	/* preempt.c: engine-private state of a preempted queue (its context
	 * allocation) and where the queue is in its DMA buffer */
	bool mid_buffer;                  /* the last ring command run did not end a DMA buffer */
	bool ctx_saved;                   /* preempted: the next run restores the context first */
	bool split_open;                  /* the last command ended a split packet its command continues (HW_CMD_SPLIT_END) */
	bool ctx_in_alloc;                /* switched out by a ContextSwitch packet: its next command restores it */
	struct hw_ctx_alloc *ctx_alloc;   /* its context allocation (NULL: the context stays here); set before it runs */
	bool faulted;                     /* reset by a TDR: never runs again */
	uint32_t kind;                    /* HW_WORK_GRAPHICS / _COMPUTE: of the last WORK run */
	uint64_t wait_t0_ns;              /* trace.c: when the current WAIT was reached (CPU ns) */
	uint32_t work_tag;                /* trace.c: the name tag of the WORK running or interrupted */
	uint64_t work_left_ns;            /* the WORK running or interrupted: ns still to run (0: none; UINT64_MAX: never ends) */
	uint64_t work_slice_ns;
	uint64_t work_run_left_ns;        /* work_left_ns where this run of the WORK started or resumed (engine) */
	_Atomic int32_t priority;         /* the OS writes, the engine reads (relaxed) */
	_Atomic(struct hw_ctx_alloc *) dev_alloc;   /* its device's context allocation (NULL: none; the OS sets, release) */
	bool ctx_loaded_once;             /* engine-private: its context was loaded before (an image to check) */
	uint64_t bind[HW_BIND_SLOTS];     /* engine-private: the context's bindings (HW_CMD_BIND) */
	/* preempt.c: kernel-mode resubmission (hw_queue_flush) */
	_Atomic bool flushed;             /* taken back: off the engine until flush_done (engine sets, OS clears) */
	struct hw_cmd *flush_buf;         /* the OS's, filled by the engine */
	size_t flush_cap, flush_n;
	_Atomic uint32_t paging_first;    /* resubmitted paging buffers still to run: the engine runs q first */
	uint64_t fence_ids[HW_FENCE_ID_LOG];  /* completed submission fence IDs (engine writes, then nfence_ids) */
	_Atomic uint32_t nfence_ids;
	LF_ALIGNED lf_counter executed;   /* engine writes */
	LF_ALIGNED uint64_t submitted;    /* producer-private */
};
/* engine-private state | kicks (KMD, rings) | the engine's count | the producer's */
LF_ASSERT_APART(struct hw_queue, known_wptr, kick);
LF_ASSERT_APART(struct hw_queue, retired, executed);
LF_ASSERT_APART(struct hw_queue, executed, submitted);

/* segment.c: a memory segment of context images (local memory or the
 * system-memory aperture): GPU address HW_VA(seg, offset). */
struct hw_segment {
	struct hw_ctx_image *images;
	uint32_t n;
};

/* preempt.c: a context allocation.  The saved context is written by the
 * engine (relaxed atomics: the engine is the only writer; readers take a
 * snapshot). */
struct hw_ctx_alloc {
	struct hw_adapter *a;
	size_t bytes;
	uint64_t save_ns, restore_ns;     /* the modeled cost, from the caps and its size */
	uint64_t id;                      /* what InitContextResource writes into its image (never 0) */
	bool managed;                     /* segment.c: its image lives in a memory segment at va */
	_Atomic uint64_t va;              /* managed: its GPU address (0: not resident); the OS writes */
	struct hw_ctx_image own;          /* not managed: its image, always resident */
	_Atomic bool destroyed;
	_Atomic uint64_t saves, restores, saved_work_ns, restored_work_ns;
	struct hw_ctx_alloc *next;        /* every allocation of the adapter (queue_lock), freed with it */
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
	LF_ALIGNED lf_counter signals, interrupts, cmds, parks, waits_blocked, busy_ns, lowered, lower_failed;
	lf_counter timed, timed_ns, timed_late_ns;        /* timing.c */
	_Atomic uint64_t park_idle_min_ns;                /* the shortest idle stretch that ended in a park (0: none) */
	uint64_t poll_rng;                        /* timing.c, engine-private: the WAIT poll grids' phases */
	bool idle_prio;                           /* engine-private: polling at nice 19 now */
	int base_nice;                            /* engine-private: its own nice value (idle polling returns to it) */
	bool may_lower;                           /* engine-private: time-shared and able to return, so idle polling may lower it */
	/* user-mode submission and F-states (doorbell.c) */
	LF_ALIGNED _Atomic uint32_t um_connected;   /* connected doorbells of this engine's queues (KMD) */
	_Atomic uint32_t um_queues;                 /* user-mode queues on the run list */
	_Atomic(struct hw_queue *) running;         /* the queue being executed: preemption hand-shake */
	_Atomic uint64_t runs_done;                 /* queue runs finished (engine writes, release): hw_adapter_engines_barrier */
	_Atomic uint32_t fstate;                    /* enum hw_fstate (engine writes) */
	uint64_t f1_asked_ns;                       /* engine-private: last engine-state-change interrupt */
	uint64_t db_seen[HW_MAX_DOORBELLS + 1];     /* engine-private: register values seen ([HW_MAX_DOORBELLS]: global) */
	LF_ALIGNED lf_counter rings, global_polls, looks, state_irqs, f1_ns, discarded;
	/* preempt.c: requests (any thread) | the engine's answer and counts */
	LF_ALIGNED _Atomic int32_t preempt_prio;    /* a pending request: leave queues below this (INT32_MIN: none) */
	_Atomic bool prios;                         /* some queue of this engine has a priority other than 0 */
	_Atomic(struct hw_queue *) reset_q;         /* hw_engine_reset: abort this queue (NULL: none) */
	_Atomic(struct hw_queue *) flush_q;         /* hw_queue_flush: preempt and take back this queue (NULL: none) */
	_Atomic bool resubmit_hold;                 /* a queue was taken back: run nothing until the OS resubmitted it */
	LF_ALIGNED _Atomic uint64_t progress;       /* commands run + preemptions (engine writes, release) */
	bool preempted_now;                         /* engine-private: the last run ended in a preemption */
	_Atomic(const struct hw_queue *) ctx_loaded; /* whose context is loaded (NULL: the null context; engine writes, release) */
	lf_counter preemptions, at_buffer_end, mid_buffer, mid_command, ctx_saves, ctx_restores, resets, ctx_switches, at_split;
	lf_counter mid_command_run_ns;   /* WORK ns run before a mid-command stop (preempt.c) */
	lf_counter ctx_faults, ctx_bad_images, paging_ops, data_faults;   /* segment.c */
};
/* the wake word (notifiers) | the run list (creators, signalers read it) |
 * the engine's counters | the KMD's connect count */
LF_ASSERT_APART(struct hw_engine, wake, nqueues);
LF_ASSERT_APART(struct hw_engine, a, signals);
LF_ASSERT_APART(struct hw_engine, busy_ns, um_connected);

/* display.c: the display source (one per adapter; FLIP is rare: a mutex) */
struct hw_display {
	pthread_mutex_t lock;
	uint64_t t0, period;
	bool pending;
	uint64_t pending_surface, pending_at;
	uint64_t surface;                 /* on screen */
	struct hw_flip_rec log[HW_FLIP_LOG];
	size_t nlog;
	uint64_t flips, shown, replaced, torn;
};

struct hw_adapter {
	struct hw_caps caps;
	struct hw_display display;
	int cpus[64];
	uint64_t ts_epoch_ns;         /* lf_now_ns at creation: GPU timestamp 0 (read-only after create) */
	LF_ALIGNED struct lf_mpsc irq_q;          /* engines -> OS interrupt thread */
	LF_ALIGNED struct lf_wake irq_wake;       /* the interrupt line: the OS thread parks here */
	LF_ALIGNED _Atomic uint64_t signal_epoch; /* bumped by every fence write that may unblock a WAIT */
	LF_ALIGNED _Atomic bool stop;
	struct hw_engine engines[HW_MAX_ENGINES];
	/* fence storage (allocation is not a hot path: a mutex): the packed
	 * pages, one pool per process and kind of memory (storage.c) */
	pthread_mutex_t storage_lock;
	struct hw_pool *pools;
	_Atomic uint64_t access_faults;   /* reads and writes a fence value mapping refused (storage.c) */
	pthread_mutex_t queue_lock;
	struct hw_ctx_alloc *ctx_allocs;  /* preempt.c: every context allocation (queue_lock) */
	struct hw_segment segments[HW_SEGMENTS];   /* segment.c: [HW_SEGMENT_LOCAL], [HW_SEGMENT_SYSTEM] */
	_Atomic uint64_t *data;                    /* segment.c: caps.data_words words */
	_Atomic uint64_t pt[HW_MAX_ENGINES][HW_DATA_PAGES];   /* segment.c: page tables (word index + 1; 0: unmapped) */
	/* user-mode submission (doorbell.c): registers zeroed by lf_alloc */
	struct hw_doorbell_phys doorbells[HW_MAX_DOORBELLS];
	struct hw_doorbell_phys global_db;
	/* trace.c: the execution records' sink (set once, read by the engines) */
	_Atomic(hw_trace_sink) trace_sink;
	void *trace_ctx;
	/* va.c: the process's and the system (paging) process's GPU VA spaces */
	struct hw_va_space *proc_vas, *sys_vas;
	_Atomic uint64_t va_faults;              /* GPU page faults (rare: relaxed) */
	LF_ALIGNED _Atomic uint32_t state_irq;   /* engine-state-change interrupt status: HW_STATE_IRQ_F1/_HUNG(e) */
	LF_ALIGNED struct lf_wake state_wake;    /* its interrupt line: the OS power thread parks here */
};
/* the interrupt queue, its line, the signal epoch (every signal) and stop
 * (polled by every engine each pass) each on their own lines; the global
 * doorbell (rings) apart from the F1 requests (engines) and their line */
LF_ASSERT_APART(struct hw_adapter, irq_q, irq_wake);
LF_ASSERT_APART(struct hw_adapter, irq_wake, signal_epoch);
LF_ASSERT_APART(struct hw_adapter, signal_epoch, stop);
LF_ASSERT_APART(struct hw_adapter, stop, engines);
LF_ASSERT_APART(struct hw_adapter, global_db, state_irq);
LF_ASSERT_APART(struct hw_adapter, state_irq, state_wake);

/* A fence page in memory loc (storage.c): the GPU's read-write mapping; the CPU's
 * mapping of the same memory is hw_page_cpu_offset bytes further (0 on an
 * IoMmu adapter: one read-write mapping for both). */
void *hw_page_alloc(const struct hw_adapter *a, enum hw_storage_loc loc);
size_t hw_page_cpu_offset(const struct hw_adapter *a);
void hw_page_free(const struct hw_adapter *a, enum hw_storage_loc loc, void *page);
void hw_pools_free(struct hw_adapter *a);   /* the packed pools' pages */
uint64_t hw_engine_signal(struct hw_adapter *a, struct hw_engine *e, struct hw_fence *f, uint64_t v);



/* trace.c: report r when a sink is set (engine threads). */
void hw_trace(struct hw_adapter *a, const struct hw_trace_rec *r);
bool hw_tracing(const struct hw_adapter *a);
/* One record of q on e, t0 to now (fence may be NULL). */
void hw_trace_op(struct hw_adapter *a, const struct hw_engine *e, const struct hw_queue *q, enum hw_trace_kind kind,
		 const struct hw_fence *f, uint64_t value, uint64_t t0, uint32_t tag);

int hw_engines_start(struct hw_adapter *a);
void hw_engines_stop(struct hw_adapter *a);

/* queue.c: kick q up to write pointer wptr (no wake-up) */
void hw_queue_kick_at(struct hw_queue *q, uint64_t wptr);
/* doorbell.c, called by the engine thread */
unsigned hw_engine_poll_doorbells(struct hw_adapter *a, struct hw_engine *e, uint64_t now);
/* The engine idle with doorbells connected: watch the registers for up to
 * `loads` loads (no pause: a doorbell write reaches the hardware at once).
 * True when one was rung and consumed; *run is then the queue to run now
 * (dedicated: its owner on this engine), or NULL (run the whole list). */
bool hw_engine_watch(struct hw_adapter *a, struct hw_engine *e, unsigned loads, uint64_t now, struct hw_queue **run);
/* irq.c, called by the engine thread: raise the engine-state-change line for e */
void hw_engine_raise_f1(struct hw_adapter *a, struct hw_engine *e);
/* engine.c: wait until the engine is not inside q (the KMD's preemption hand-shake) */
void hw_queue_preempt_wait(struct hw_queue *q);
/* preempt.c, the engine thread */
/* A request (or the run list) asks to leave q, running at a point of level
 * `level` (1: DMA buffer end, 2: between commands, 3..5: inside a WORK). */
bool hw_preempt_due(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q, unsigned level);
/* The granularity level that applies to q now (its last WORK's kind); 0 without PreemptionAware. */
unsigned hw_preempt_level(const struct hw_adapter *a, const struct hw_queue *q);
/* Leave q now: save the context, count where, clear the request. */
void hw_preempt_take(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q, unsigned level);
/* Lazy context switching: load q's context before a command that needs it
 * (restoring it from its allocation after a ContextSwitch packet); run a
 * ContextSwitch packet found on q. */
void hw_ctx_load(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q);
void hw_ctx_switch(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q);
/* Loading q's context the first time (segment-managed allocations): its
 * image must be the one InitContextResource wrote for it; its device's
 * allocation must be resident (faults and bad images are counted). */
void hw_ctx_check_images(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q);
/* Save q's context (to its allocation if it has one) / read it back, at the
 * modeled cost; both count on the engine.  hw_ctx_drop: q's saved context is
 * gone (reset, discard); returns the WORK time it held. */
void hw_ctx_save(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q);
void hw_ctx_restore(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q);
uint64_t hw_ctx_drop(struct hw_queue *q);
/* Run WORK c of q in slices, honouring requests and resets between them.
 * False: the WORK was interrupted (preempted: its rest saved in q; or q reset). */
bool hw_work_run(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q, const struct hw_cmd *c);
/* Continue a WORK interrupted by a preemption. False: interrupted again. */
bool hw_work_resume(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q);
/* A reset names q: abort it (faulted).  True when it did. */
bool hw_reset_check(struct hw_engine *e, struct hw_queue *q);
/* q's priority as the run list sees it: resubmitted paging buffers outrank everything. */
int32_t hw_queue_eff_priority(const struct hw_queue *q);
/* The engine ran a FENCE_ID of q. */
void hw_fence_id_done(struct hw_queue *q, const struct hw_cmd *c);
/* The highest priority of the runnable queues of e (INT32_MIN: none runnable). */
int32_t hw_engine_top_priority(struct hw_adapter *a, struct hw_engine *e);
/* engine.c: q has something to run now (engine thread). */
bool hw_queue_runnable(struct hw_adapter *a, struct hw_queue *q);
/* display.c */
void hw_display_init(struct hw_adapter *a);
void hw_display_destroy(struct hw_adapter *a);
void hw_display_flip(struct hw_adapter *a, uint64_t surface);   /* the engine's FLIP */
/* timing.c (caps.timing), the engine thread (e NULL: a thread that is no
 * engine, counted nowhere).  spend_until: yield, then spin, until the clock
 * passes `until` (the latency started at `start`); spend: ns from now.
 * visible/poll: the write-visibility latency and WAIT poll interval of f's
 * memory (NULL: system).  wait_release: q's WAIT, just seen satisfied,
 * waits for its next poll.  check: false with the reason in what. */
void hw_timing_spend_until(struct hw_engine *e, uint64_t start, uint64_t until);
void hw_timing_spend(struct hw_engine *e, uint64_t ns);
uint64_t hw_timing_visible_ns(const struct hw_adapter *a, const struct hw_fence *f);
uint64_t hw_timing_poll_ns(const struct hw_adapter *a, const struct hw_fence *f);
void hw_timing_wait_release(struct hw_engine *e, const struct hw_queue *q);
/* A WAIT on f blocked now: the start of its poll grid (a random phase before
 * now; 0: no poll interval for f's memory). */
uint64_t hw_timing_poll_grid(struct hw_engine *e, const struct hw_fence *f);
bool hw_timing_check(const struct hw_timing *t, char *what, size_t len);
/* Under a timing profile an idle engine polls on (lowered) this long before
 * it may park: timing.c, "Where an idle engine waits". */
bool hw_timing_polls_idle(const struct hw_adapter *a, uint64_t idle_ns);
/* va.c: f's storage mapped in the adapter's process VA space (hw_fence_alloc)
 * and unmapped (hw_fence_free).  0 / -ENOMEM. */
int hw_fence_map_process(struct hw_adapter *a, struct hw_fence *f);
void hw_fence_unmap_process(struct hw_fence *f);
/* va.c, engines: f's CurrentValue through the process's GPU VA (NULL: a page
 * fault, counted); the CMP's view of f's CurrentValue and MonitoredValue
 * (false: a page fault, counted). */
_Atomic uint64_t *hw_engine_cv(struct hw_adapter *a, const struct hw_fence *f);
bool hw_cmp_view(struct hw_adapter *a, const struct hw_fence *f, _Atomic uint64_t **cv, _Atomic uint64_t **mv);
/* storage.c: hw_fence_write through the CurrentValue location cv (the engine's resolved VA) */
uint64_t hw_fence_write_at(struct hw_fence *f, _Atomic uint64_t *cv, uint64_t wv, bool barrier);
/* logbuf.c, the engine thread: run a HW_CMD_LOG of q; `publish` false
 * (the broken build HW_BROKEN_LOG_NO_BARRIER, engine.c): the entry is
 * written, FirstFreeEntryIndex not yet: returns the log to hw_log_publish
 * later (NULL: nothing written). */
struct hw_log *hw_engine_log(struct hw_adapter *a, struct hw_queue *q, const struct hw_cmd *c, bool publish);
void hw_log_publish(struct hw_log *log);
/* va.c: count a GPU page fault */
void hw_va_fault(struct hw_adapter *a);
/* segment.c: the image at GPU address va (NULL: no such address); the
 * image of c where it is now (NULL: managed and not resident); the engine's
 * HW_CMD_PAGING. */
struct hw_ctx_image *hw_segment_image(struct hw_adapter *a, uint64_t va);
struct hw_ctx_image *hw_ctx_img(struct hw_adapter *a, struct hw_ctx_alloc *c);
void hw_engine_paging(struct hw_adapter *a, struct hw_engine *e, const struct hw_cmd *c);
void hw_engine_bind(struct hw_queue *q, const struct hw_cmd *c);
void hw_engine_store(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q, const struct hw_cmd *c);
int hw_segments_create(struct hw_adapter *a);
void hw_segments_destroy(struct hw_adapter *a);
/* queue.c: q is on the run list: nobody holds it (hw_queue_hold: the
 * holds word itself; with HW_FAULT_HOLDS_SPLIT the separate flag derived
 * from it).  The engine loads it relaxed, after its light fence; the KMD
 * seq_cst. */
static inline bool hw_queue_on_list(const struct hw_queue *q, memory_order mo)
{
	if (q->a->caps.fault == HW_FAULT_HOLDS_SPLIT)
		return atomic_load_explicit(&q->scheduled, mo);
	return atomic_load_explicit(&q->holds, mo) == 0;
}
#endif
