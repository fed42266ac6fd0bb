/* benchmarks/scenarios/submit.h — the submission-latency rig shared by the
 * submit-latency scenario and the headline's "submit" section.
 *
 * One adapter, one engine pinned to the run's last CPU, the application (the
 * caller) on the first, the OS scheduler thread beside the application.  A
 * user-mode queue and a kernel-mode queue on that engine; submissions
 * alternate between them, each one buffer [STAMP] whose completion is awaited
 * before the next.  Latency = the engine's STAMP - the clock read just before
 * rt_queue_submit: "from the application's submit call to the engine starting
 * that command buffer" (DESIGN.md, "Metrics, and how each is measured").
 * With `parked`, every submission is made while the engine is in F1 (waited
 * for first): the user-mode path then pays the reconnect and the engine's
 * wake-up, the kernel-mode path the scheduler's and the engine's.
 *
 * Called from one thread; brings up and tears down its own stack
 * (gpu-model/runtime/stack.h).
 */
#ifndef BM_SUBMIT_H
#define BM_SUBMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu-model/runtime/stack.h"

struct fb_run;

struct bm_submit_params {
	uint64_t submissions;          /* per path (user-mode, kernel-mode) */
	bool parked;                   /* submit only while the engine is in F1 */
	bool user_mode;                /* measure the user-mode path (false: kernel-mode only) */
	enum hw_doorbell_model model;
	uint64_t f1_timeout_ns;        /* 0: the default (1 ms) while polling, 50 us when parked */
	const struct os_config *cfg;   /* NULL: rt_stack_config_default (native) */
	struct fb_run *run;            /* non-NULL: pin from its CPUs */
	bool register_threads;         /* ... and register the role threads (perf groups) */
	bool mark_region;              /* ... and mark the measured loop (fb_run_measure_begin/end) */
	bool sched_on_engine_cpu;      /* the scheduler thread on the engine's CPU, not the application's */
};

struct bm_submit_result {
	struct fb_hist *um, *km;       /* ns; caller frees (um NULL when !user_mode) */
	uint64_t um_retries, um_connects, f1_entries, state_irqs, sched_wakeups;
	uint64_t f1_ns;                /* engine time parked (F1), over the rig's life */
	uint64_t life_ns;              /* the rig's life: adapter start to the last submission */
	uint64_t elapsed_ns;
};

/* 0, or -errno with a one-line reason (a submission not started within 2 s
 * is an error: a lost submission). */
int bm_submit_measure(const struct bm_submit_params *p, struct bm_submit_result *r, char *err, size_t errlen);

/* The headline's "submit" section: `submissions` per path with the engine
 * polling, p50 and p99 of each path beside its limit (user-mode beside the
 * one-way cache-line transfer, kernel-mode beside a bare syscall).  The
 * user-mode path only when user_mode (the WDDM 3.2 stack; WDDM 2.x has
 * kernel-mode submission only).  Reports into the current section; 0 or the
 * -errno of fb_run_error.  *engine_parks: how often the engine parked (F1)
 * meanwhile: the engine polls between submissions on both paths, so only a
 * submission that came 10 ms after the one before finds it parked. */
int bm_submit_headline(struct fb_run *run, const struct os_config *cfg, uint64_t submissions, bool user_mode,
		       uint64_t *engine_parks);

#endif
