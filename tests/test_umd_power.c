/* tests/test_umd_power.c — the seed's power and lifetime sequences
 * (user-mode-work-submission): hardware context suspend/resume, engine
 * F-state transitions, device D-state transitions, normal and abnormal
 * process termination.  One test per sequence, named after it. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tests/fb_test.h"
#include "tests/umd_test_util.h"

#define SEC 1000000000ll

/* "Suspending a hardware context": doorbells stay connected, the ring stays
 * resident, the application keeps queuing, nothing runs; "Resuming": the CMP
 * observes the new write pointer. */
static void context_suspend_keeps_queuing_resume_runs(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 4, 5 * SEC);
	struct rt_queue *q = umt_queue(&t, 0, true);
	_Atomic uint64_t n = 0;
	umt_submit_count(q, &n);                        /* connects the doorbell */
	assert_int_equal(rt_queue_wait(q, 0, 5 * SEC), 0);
	os_context_suspend(rt_queue_context(q));
	for (int i = 0; i < 5; i++)
		umt_submit_count(q, &n);
	fbt_settle();
	assert_int_equal(atomic_load(&n), 1);            /* nothing ran */
	assert_true(os_hwqueue_pending(rt_queue_os(q)));
	assert_int_equal(os_hwqueue_last_queued(rt_queue_os(q)), 6);
	struct rt_queue_stats s;
	rt_queue_stats(q, &s);
	assert_int_equal(s.retries, 0);                 /* the doorbell stayed connected */
	assert_int_equal(s.connects, 1);
	assert_int_equal(os_doorbell_status(rt_queue_os(q)), OS_DOORBELL_CONNECTED);
	os_context_resume(rt_queue_context(q));
	assert_int_equal(rt_queue_wait(q, 0, 5 * SEC), 0);
	assert_int_equal(atomic_load(&n), 6);
	struct os_ums_stats us = umt_stats(&t);
	assert_int_equal(us.suspends, 1);
	assert_int_equal(us.resumes, 1);
	umt_down(&t);
}

/* Suspension preempts at a command boundary: a queue taken off the run list
 * mid-buffer runs nothing more of it until resume. */
static void context_suspend_preempts_mid_buffer(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 4, 5 * SEC);
	struct rt_queue *q = umt_queue(&t, 0, true);
	_Atomic uint64_t n = 0, started = 0;
	struct hw_cmd cmds[4] = {
		{ .op = HW_CMD_STAMP, .stamp = &started },
		{ .op = HW_CMD_WORK, .arg = 200000000 },    /* 200 ms: suspended inside it */
		{ .op = HW_CMD_COUNT, .stamp = &n },
		{ .op = HW_CMD_COUNT, .stamp = &n },
	};
	assert_int_equal(rt_queue_submit(q, cmds, 4, NULL), 0);
	/* suspend once the engine is inside the WORK (not after a fixed sleep,
	 * which a loaded machine may stretch past the WORK's end) */
	assert_true(fbt_eventually(atomic_load(&started) != 0));
	os_context_suspend(rt_queue_context(q));        /* returns after the WORK */
	fbt_settle();
	assert_int_equal(atomic_load(&n), 0);
	os_context_resume(rt_queue_context(q));
	assert_int_equal(rt_queue_wait(q, 0, 5 * SEC), 0);
	assert_int_equal(atomic_load(&n), 2);
	umt_down(&t);
}

/* "Engine F-state transitions": idle past the timeout, the engine raises
 * Active -> TransitionToF1; Dxgkrnl disconnects its doorbells; the engine
 * parks (F1).  The next submission sees RETRY, reconnects, and the engine is
 * back in F0. */
static void engine_f1_round_trip(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 4, 2000000);   /* F1 after 2 ms idle */
	struct rt_queue *q = umt_queue(&t, 0, true);
	struct hw_adapter *hw = os_adapter_hw(t.a);
	_Atomic uint64_t n = 0;
	umt_submit_count(q, &n);
	assert_int_equal(rt_queue_wait(q, 0, 5 * SEC), 0);
	assert_true(fbt_eventually(hw_engine_fstate(hw, 0) == HW_F1));
	struct os_ums_stats s = umt_stats(&t);
	assert_true(s.f1_requests >= 1);
	/* >= 1: a test thread descheduled for 2 ms inside its first submission
	 * lets one more F1 (and reconnect) happen there, correctly */
	assert_true(s.f1_disconnects >= 1);
	assert_int_equal(os_doorbell_status(rt_queue_os(q)), OS_DOORBELL_DISCONNECTED_RETRY);
	struct rt_queue_stats rs;
	rt_queue_stats(q, &rs);
	uint64_t connects = rs.connects;
	assert_true(connects >= 1);
	struct hw_engine_um_stats e = umt_engine(&t, 0);
	assert_true(e.state_irqs >= 1);
	assert_true(e.f1_entries >= 1);
	/* the doorbell reads RETRY: the submission reconnects, which is F1 -> F0 */
	umt_submit_count(q, &n);
	assert_int_equal(rt_queue_wait(q, 0, 5 * SEC), 0);
	assert_int_equal(atomic_load(&n), 2);
	rt_queue_stats(q, &rs);
	assert_true(rs.connects >= connects + 1);       /* RETRY forced a reconnect */
	s = umt_stats(&t);
	assert_true(s.f0_by_connect >= 1);
	assert_true(umt_engine(&t, 0).f1_ns > 0);
	umt_down(&t);
}

/* Idle polling (gpu-model/hw/engine.c): an idle engine with a doorbell
 * connected (it cannot park: a ring is a memory write) polls at nice 10,
 * taking little of the time of the CPU-side threads; the first command it
 * fetches puts it back at its own nice value for the work, and idling again
 * lowers it again.  caps.idle_poll_normal: it polls at its own weight. */
static int engine_nice(struct umt *t)
{
	errno = 0;
	int n = getpriority(PRIO_PROCESS, (id_t)hw_engine_tid(os_adapter_hw(t->a), 0));
	assert_int_equal(errno, 0);
	return n;
}

static struct hw_engine_stats engine_stats(struct umt *t)
{
	struct hw_engine_stats s;
	hw_engine_stats(os_adapter_hw(t->a), 0, &s);
	return s;
}

/* An idle engine whose creator already runs at nice 10 or above (`nice make
 * test`) has no lower weight to poll at: it keeps its own and counts no
 * lowering (never a nice value below its creator's). */
static void idle_engine_keeps_a_creators_weight_at_or_above_ten(struct umt *t, int own)
{
	fbt_settle();
	assert_int_equal(engine_nice(t), own);
	assert_int_equal(engine_stats(t).lowered, 0);
}

static void idle_polling_runs_at_the_lowest_weight(void **state)
{
	errno = 0;
	int own = getpriority(PRIO_PROCESS, (id_t)gettid());   /* engines start at the creator's */
	assert_int_equal(errno, 0);
	for (int normal = 0; normal <= 1; normal++) {
		struct os_config cfg;
		umt_config(&cfg, 1, HW_DOORBELL_DEDICATED, 4, 60 * SEC);   /* no F1: it polls throughout */
		cfg.caps.idle_poll_normal = normal;
		struct umt t = umt_up_with(&cfg, NULL);
		struct rt_queue *q = umt_queue(&t, 0, true);
		_Atomic uint64_t n = 0;
		umt_submit_count(q, &n);
		assert_int_equal(rt_queue_wait(q, 0, 5 * SEC), 0);
		if (engine_stats(&t).lower_failed) {
			umt_down(&t);
			fb_skip("this process may not lower its nice value again (no CAP_SYS_NICE, RLIMIT_NICE too "
				"low): engines poll at their own weight here");
		}
		if (normal || own >= 10) {
			idle_engine_keeps_a_creators_weight_at_or_above_ten(&t, own);
			umt_down(&t);
			continue;
		}
		/* the engine counts a lowering before the setpriority that shows it:
		 * once lowered it may wait long for a CPU on a loaded machine, so
		 * the count must not depend on its running again */
		assert_true(fbt_eventually(engine_nice(&t) == 10));
		assert_true(engine_stats(&t).lowered >= 1);
		uint64_t lowered = engine_stats(&t).lowered;
		/* a long WORK: the engine runs it at its own weight */
		struct hw_cmd work = { .op = HW_CMD_WORK, .arg = 300000000ull };   /* 300 ms */
		uint64_t v = 0;
		assert_int_equal(rt_queue_submit(q, &work, 1, &v), 0);
		assert_true(fbt_eventually(engine_nice(&t) == own));
		assert_int_equal(rt_queue_wait(q, v, 5 * SEC), 0);
		/* idle again: lowered again */
		assert_true(fbt_eventually(engine_nice(&t) == 10));
		assert_true(engine_stats(&t).lowered > lowered);
		umt_down(&t);
	}
}

/* The same with the creator at nice 15: the engine never polls at a weight
 * above its creator's (nice 10 would be one). */
static void idle_polling_under_a_creator_at_nice_15_keeps_its_weight(void **state)
{
	errno = 0;
	int own = getpriority(PRIO_PROCESS, (id_t)gettid());
	assert_int_equal(errno, 0);
	if (own >= 15)
		fb_skip("this test already runs at nice 15 or above: idle_polling_runs_at_the_lowest_weight covers it");
	assert_int_equal(setpriority(PRIO_PROCESS, (id_t)gettid(), 15), 0);
	struct os_config cfg;
	umt_config(&cfg, 1, HW_DOORBELL_DEDICATED, 4, 60 * SEC);   /* no F1: it polls throughout */
	struct umt t = umt_up_with(&cfg, NULL);
	struct rt_queue *q = umt_queue(&t, 0, true);
	_Atomic uint64_t n = 0;
	umt_submit_count(q, &n);
	assert_int_equal(rt_queue_wait(q, 0, 5 * SEC), 0);
	idle_engine_keeps_a_creators_weight_at_or_above_ten(&t, 15);
	umt_down(&t);
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), own))
		fb_skip("this thread may not return to its nice value (no CAP_SYS_NICE): later tests run at nice 15");
}

/* "Engine D-state transitions", D0 -> D3: contexts suspended, doorbells
 * disconnected (RETRY), ring allocations evicted.  Work written in D3 runs
 * after the connect wakes the device: D0, resident, connect, resume. */
static void device_d3_round_trip_by_connect(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 4, 5 * SEC);
	struct rt_queue *q = umt_queue(&t, 0, true), *k = umt_queue(&t, 0, false);
	struct hw_adapter *hw = os_adapter_hw(t.a);
	_Atomic uint64_t n = 0;
	umt_submit_count(q, &n);
	umt_submit_count(k, &n);
	assert_int_equal(rt_queue_wait(q, 0, 5 * SEC), 0);
	assert_int_equal(rt_queue_wait(k, 0, 5 * SEC), 0);
	assert_int_equal(os_power_d3(t.u), 0);
	assert_true(os_power_in_d3(t.u));
	struct os_ums_stats s = umt_stats(&t);
	assert_int_equal(s.d3_entries, 1);
	assert_int_equal(s.ring_evictions, 2);
	assert_int_equal(os_doorbell_status(rt_queue_os(q)), OS_DOORBELL_DISCONNECTED_RETRY);
	assert_true(fbt_eventually(hw_engine_fstate(hw, 0) == HW_F1));   /* nothing connected, nothing runnable */
	umt_submit_count(q, &n);                          /* sees RETRY -> connect -> D0 */
	assert_int_equal(rt_queue_wait(q, 0, 5 * SEC), 0);
	assert_false(os_power_in_d3(t.u));
	s = umt_stats(&t);
	assert_int_equal(s.d0_exits, 1);
	assert_int_equal(s.ring_restores, 2);
	assert_true(s.d3_ns > 0);
	assert_int_equal(atomic_load(&n), 3);
	umt_down(&t);
}

/* A kernel-mode submission in D3: the OS (its scheduler) wakes the device. */
static void device_d3_round_trip_by_km_submission(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 4, 5 * SEC);
	struct rt_queue *k = umt_queue(&t, 0, false), *q = umt_queue(&t, 0, true);
	_Atomic uint64_t n = 0;
	umt_submit_count(q, &n);
	assert_int_equal(rt_queue_wait(q, 0, 5 * SEC), 0);
	assert_int_equal(os_power_d3(t.u), 0);
	umt_submit_count(k, &n);
	assert_int_equal(rt_queue_wait(k, 0, 5 * SEC), 0);
	assert_false(os_power_in_d3(t.u));
	/* the user-mode queue's doorbell stays disconnected until it submits */
	umt_submit_count(q, &n);
	assert_int_equal(rt_queue_wait(q, 0, 5 * SEC), 0);
	assert_int_equal(atomic_load(&n), 3);
	umt_down(&t);
}

/* "Normal process termination": disconnect, wait for the last queued value,
 * destroy — nothing queued is lost, including on a suspended context. */
static void normal_termination_loses_nothing(void **state)
{
	enum { N = 40 };
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 4, 0);
	struct rt_queue *q = umt_queue(&t, 0, true), *k = umt_queue(&t, 0, false), *s = umt_queue(&t, 0, true);
	static _Atomic uint64_t c[3][N];
	memset(c, 0, sizeof(c));
	struct hw_cmd cmds[2] = { { .op = HW_CMD_WORK, .arg = 200000 }, { .op = HW_CMD_COUNT } };
	umt_submit_count(s, &c[2][0]);
	assert_int_equal(rt_queue_wait(s, 0, 5 * SEC), 0);
	os_context_suspend(rt_queue_context(s));
	for (int i = 0; i < N; i++) {
		cmds[1].stamp = &c[0][i];
		assert_int_equal(rt_queue_submit(q, cmds, 2, NULL), 0);
		cmds[1].stamp = &c[1][i];
		assert_int_equal(rt_queue_submit(k, cmds, 2, NULL), 0);
		if (i)
			umt_submit_count(s, &c[2][i]);
	}
	assert_true(os_hwqueue_pending(rt_queue_os(q)));
	assert_int_equal(rt_device_destroy(t.d), 0);   /* immediately: ~16 ms of work queued */
	t.d = NULL;
	for (int j = 0; j < 3; j++)
		for (int i = 0; i < N; i++)
			assert_int_equal(atomic_load(&c[j][i]), 1);
	struct os_ums_stats us = umt_stats(&t);
	assert_int_equal(us.drain_timeouts, 0);
	assert_int_equal(umt_engine(&t, 0).discarded, 0);
	umt_down(&t);
}

/* "Abnormal process termination": device in error, contexts suspended,
 * doorbells disconnected, everything destroyed at once; waiters get an
 * error, never a hang. */
struct waiter {
	struct rt_queue *q;
	struct rt_fence *f;
	uint64_t v;
	int rc;
	uint64_t t_ret;
};

static void *wait_queue(void *arg)
{
	struct waiter *w = arg;
	w->rc = rt_queue_wait(w->q, w->v, -1);
	w->t_ret = lf_now_ns();
	return NULL;
}

static void *wait_fence(void *arg)
{
	struct waiter *w = arg;
	w->rc = rt_fence_wait(w->f, w->v, -1);
	w->t_ret = lf_now_ns();
	return NULL;
}

static void abnormal_termination_waiters_get_error(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 4, 0);
	struct rt_queue *q = umt_queue(&t, 0, true), *k = umt_queue(&t, 0, false);
	struct rt_fence *never, *app;
	assert_int_equal(rt_fence_create(t.d, 0, &never), 0);
	assert_int_equal(rt_fence_create(t.d, 0, &app), 0);
	_Atomic uint64_t n = 0;
	struct hw_cmd stuck[3] = {
		{ .op = HW_CMD_WAIT, .fence = os_fence_hw(rt_fence_os(never)), .value = 1 },
		{ .op = HW_CMD_COUNT, .stamp = &n },
		{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(rt_fence_os(app)), .value = 5 },
	};
	uint64_t vq, vk;
	assert_int_equal(rt_queue_submit(q, stuck, 3, &vq), 0);
	assert_int_equal(rt_queue_submit(k, stuck, 2, &vk), 0);
	struct waiter wq = { .q = q, .v = vq }, wk = { .q = k, .v = vk }, wf = { .f = app, .v = 5 };
	pthread_t th[3];
	pthread_create(&th[0], NULL, wait_queue, &wq);
	pthread_create(&th[1], NULL, wait_queue, &wk);
	pthread_create(&th[2], NULL, wait_fence, &wf);
	fbt_settle();                                    /* all three asleep */
	uint64_t t0 = lf_now_ns();
	rt_device_terminate(t.d);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(wq.rc, -EIO);
	assert_int_equal(wk.rc, -EIO);
	assert_int_equal(wf.rc, -EIO);
	printf("[ ABNORMAL ] waiters returned %.1f, %.1f, %.1f ms after the termination\n",
	       (wq.t_ret - t0) / 1e6, (wk.t_ret - t0) / 1e6, (wf.t_ret - t0) / 1e6);
	assert_true(rt_device_removed(t.d));
	assert_true(rt_queue_completed(q) == UINT64_MAX);
	assert_true(rt_fence_completed(app) == UINT64_MAX);
	assert_int_equal(rt_queue_submit(q, stuck, 1, NULL), -EIO);
	assert_true(os_device_in_error(rt_device_os(t.d)));
	struct os_ums_stats s = umt_stats(&t);
	assert_int_equal(s.lost_at_abnormal, 2);
	assert_int_equal(os_doorbell_status(rt_queue_os(q)), OS_DOORBELL_DISCONNECTED_ABORT);
	fbt_settle();
	assert_int_equal(atomic_load(&n), 0);            /* destroyed, never run */
	umt_down(&t);
}

/* ---- the order of the DDI calls in the seed's sequences ---- */

/* The DDI calls made on t's adapter from log entry `from` on: *n of them. */
static size_t ddi_since(struct umt *t, size_t from, struct os_ddi_call *out, size_t max)
{
	static struct os_ddi_call all[OS_DDI_LOG_MAX];
	size_t n = os_adapter_ddi_log(t->a, all, OS_DDI_LOG_MAX), k = 0;
	assert_true(n < OS_DDI_LOG_MAX);                 /* nothing fell off the log */
	for (size_t i = from; i < n && k < max; i++)
		out[k++] = all[i];
	return k;
}

static size_t ddi_count_in(const struct os_ddi_call *c, size_t n, enum os_ddi d)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += c[i].ddi == d;
	return k;
}

/* Every call `a` in c[0..n) comes before every call `b`. */
static bool ddi_all_before(const struct os_ddi_call *c, size_t n, enum os_ddi a, enum os_ddi b)
{
	size_t last_a = 0, first_b = SIZE_MAX;
	bool any_a = false;
	for (size_t i = 0; i < n; i++) {
		if (c[i].ddi == a) {
			last_a = i;
			any_a = true;
		}
		if (c[i].ddi == b && first_b == SIZE_MAX)
			first_b = i;
	}
	return !any_a || first_b == SIZE_MAX || last_a < first_b;
}

static struct umt umt_up_fault(enum os_ums_fault fault)
{
	return umt_up_ums_fault(1, 4, 60 * SEC, fault);   /* no F1 disconnects meanwhile */
}

/* Three contexts on engine 0 (two user-mode queues with connected doorbells,
 * one kernel-mode), each queue's count buffer run once on n; returns the
 * first user-mode queue. */
static struct rt_queue *three_contexts_ran_once(struct umt *t, _Atomic uint64_t *n)
{
	struct rt_queue *q1 = umt_queue(t, 0, true), *q2 = umt_queue(t, 0, true), *k = umt_queue(t, 0, false);
	umt_submit_count(q1, n);
	umt_submit_count(q2, n);
	umt_submit_count(k, n);
	assert_int_equal(rt_queue_wait(q1, 0, 5 * SEC), 0);
	assert_int_equal(rt_queue_wait(q2, 0, 5 * SEC), 0);
	assert_int_equal(rt_queue_wait(k, 0, 5 * SEC), 0);
	return q1;
}

/* Seed, "Normal and abnormal process termination", abnormal: "1. Dxgkrnl
 * marks the device in error.  2. For each device context, Dxgkrnl calls
 * DxgkddiSuspendContext to suspend the context. ...  3. For each HWQueue of
 * context, Dxglrnl: a. Calls DxgkDdiDisconnectDoorbell to disconnect the
 * doorbell.  b. Destroys the Ring Buffer/Ring Buffer Control allocations,
 * and the doorbell and HWQueue objects."  Three contexts (two user-mode
 * queues with connected doorbells, one kernel-mode); true: every context
 * suspended before any doorbell was disconnected. */
static bool abnormal_termination_in_seed_order(enum os_ums_fault fault)
{
	struct umt t = umt_up_fault(fault);
	_Atomic uint64_t n = 0;
	three_contexts_ran_once(&t, &n);
	static struct os_ddi_call c[OS_DDI_LOG_MAX];
	size_t from = ddi_since(&t, 0, c, OS_DDI_LOG_MAX);
	rt_device_terminate(t.d);
	size_t m = ddi_since(&t, from, c, OS_DDI_LOG_MAX);
	assert_int_equal(ddi_count_in(c, m, OS_DDI_SUSPEND_CONTEXT), 3);
	assert_int_equal(ddi_count_in(c, m, OS_DDI_DISCONNECT_DOORBELL), 2);
	for (size_t i = 0; i < m; i++)
		if (c[i].ddi == OS_DDI_DISCONNECT_DOORBELL)
			assert_int_equal(c[i].value, OS_DOORBELL_DISCONNECTED_ABORT);
	assert_true(os_device_in_error(rt_device_os(t.d)));
	bool in_order = ddi_all_before(c, m, OS_DDI_SUSPEND_CONTEXT, OS_DDI_DISCONNECT_DOORBELL) &&
			ddi_all_before(c, m, OS_DDI_DISCONNECT_DOORBELL, OS_DDI_DESTROY_DOORBELL);
	umt_down(&t);
	return in_order;
}

static void abnormal_termination_suspends_contexts_before_disconnecting_doorbells(void **state)
{
	assert_true(abnormal_termination_in_seed_order(OS_UMS_FAULT_NONE));
	/* broken: the doorbells disconnected first */
	assert_false(abnormal_termination_in_seed_order(OS_UMS_FAULT_DISCONNECT_BEFORE_SUSPEND));
}

/* Seed, "Engine D-state transitions", "A D0 to D3 GPU power down occurs:
 * 1. Dxgkrnl calls DxgkddiSuspendContext for all HW contexts on the GPU. ...
 * 2. Dxgkrnl disconnects all doorbells.  3. Dxgkrnl possibly evicts all Ring
 * Buffer/Ring Buffer Control allocations from VRAM if necessary. It does so
 * once all contexts are suspended and removed from the hardware scheduler's
 * list so that hardware doesn't reference any evicted memory."  And the way
 * back, a connect in D3: "2. Dxgkrnl initiates a D0 transition. 3. ... makes
 * all Ring Buffer/Ring Buffer Control allocations resident ... 4. ... calls
 * KMD's DxgkddiCreateDoorbell ... 5. ... calls DxgkddiResumeContext for all
 * HWContexts."  True: both in the seed's order. */
static bool d3_power_down_in_seed_order(enum os_ums_fault fault)
{
	struct umt t = umt_up_fault(fault);
	_Atomic uint64_t n = 0;
	struct rt_queue *q1 = three_contexts_ran_once(&t, &n);
	static struct os_ddi_call c[OS_DDI_LOG_MAX];
	size_t from = ddi_since(&t, 0, c, OS_DDI_LOG_MAX);
	assert_int_equal(os_power_d3(t.u), 0);
	size_t m = ddi_since(&t, from, c, OS_DDI_LOG_MAX);
	assert_int_equal(ddi_count_in(c, m, OS_DDI_SUSPEND_CONTEXT), 3);
	assert_int_equal(ddi_count_in(c, m, OS_DDI_DISCONNECT_DOORBELL), 2);
	assert_int_equal(ddi_count_in(c, m, OS_DDI_EVICT_RING_ALLOCATION), 4);   /* ring buffer + control, each */
	bool down = ddi_all_before(c, m, OS_DDI_SUSPEND_CONTEXT, OS_DDI_DISCONNECT_DOORBELL) &&
		    ddi_all_before(c, m, OS_DDI_SUSPEND_CONTEXT, OS_DDI_EVICT_RING_ALLOCATION) &&
		    ddi_all_before(c, m, OS_DDI_DISCONNECT_DOORBELL, OS_DDI_EVICT_RING_ALLOCATION);
	from += m;
	umt_submit_count(q1, &n);                         /* RETRY -> connect in D3 */
	assert_int_equal(rt_queue_wait(q1, 0, 5 * SEC), 0);
	m = ddi_since(&t, from, c, OS_DDI_LOG_MAX);
	assert_int_equal(ddi_count_in(c, m, OS_DDI_RESTORE_RING_ALLOCATION), 4);
	assert_int_equal(ddi_count_in(c, m, OS_DDI_CONNECT_DOORBELL), 1);
	assert_int_equal(ddi_count_in(c, m, OS_DDI_RESUME_CONTEXT), 3);
	bool up = ddi_all_before(c, m, OS_DDI_RESTORE_RING_ALLOCATION, OS_DDI_CONNECT_DOORBELL) &&
		  ddi_all_before(c, m, OS_DDI_CONNECT_DOORBELL, OS_DDI_RESUME_CONTEXT);
	assert_true(up);
	assert_int_equal(atomic_load(&n), 4);
	umt_down(&t);
	return down;
}

static void d3_power_down_suspend_contexts_then_disconnect_doorbells_then_evict_rings(void **state)
{
	assert_true(d3_power_down_in_seed_order(OS_UMS_FAULT_NONE));
	/* broken: doorbells disconnected and rings evicted while the contexts still run */
	assert_false(d3_power_down_in_seed_order(OS_UMS_FAULT_D3_DISCONNECT_FIRST));
}

/* Kernel-mode submission to a suspended context's queue whose ring is full:
 * the OS scheduler thread holds what the ring cannot take and goes on (it
 * hands other queues' submissions over meanwhile), nobody polls for the
 * suspended ring, and the resume submits the rest. */
static void km_submission_to_suspended_full_ring_is_held(void **state)
{
	alarm(60);   /* the bug spins the scheduler; the rest of the test waits 5 s for it */
	struct umt t = umt_up(2, HW_DOORBELL_DEDICATED, 4, 0);
	struct rt_queue_desc desc = { .engine = 0, .user_mode = false, .ring_slots = 4 };
	struct rt_queue *q, *other;
	/* q first: the scheduler drains queues in creation order, so once other's
	 * later submission ran, q's were handed over (or held) */
	assert_int_equal(rt_queue_create(t.d, &desc, &q), 0);
	other = umt_queue(&t, 1, false);
	os_context_suspend(rt_queue_context(q));
	_Atomic uint64_t n = 0, m = 0;
	struct hw_cmd cmds[3] = {
		{ .op = HW_CMD_COUNT, .stamp = &n },
		{ .op = HW_CMD_COUNT, .stamp = &n },
		{ .op = HW_CMD_COUNT, .stamp = &n },
	};
	for (int i = 0; i < 3; i++)     /* 3 buffers of 4 commands, a ring of 4 */
		assert_int_equal(rt_queue_submit(q, cmds, 3, NULL), 0);
	umt_submit_count(other, &m);
	assert_int_equal(rt_queue_wait(other, 0, 5 * SEC), 0);
	assert_int_equal(atomic_load(&m), 1);
	assert_int_equal(atomic_load(&n), 0);
	uint64_t wakeups = fbt_stats(t.a).irq_wakeups;
	fbt_settle();
	assert_true(fbt_stats(t.a).irq_wakeups - wakeups <= 2);   /* no 100 us polling while suspended */
	os_context_resume(rt_queue_context(q));
	assert_int_equal(rt_queue_wait(q, 0, 5 * SEC), 0);
	assert_int_equal(atomic_load(&n), 9);
	umt_down(&t);
	alarm(0);
}

/* ---- teardown under races: each test drives one interleaving through a
 * test hook (ums.h) at the point where it opens ---- */

/* An adapter whose destroys drain for at most drain_ms: a drain that hangs
 * fails the test within that bound. */
static struct umt umt_up_drain(unsigned engines, int64_t drain_ms)
{
	struct os_config cfg;
	struct os_ums_config ucfg;
	umt_config(&cfg, engines, HW_DOORBELL_DEDICATED, 4, 0);
	os_ums_config_default(&ucfg);
	ucfg.drain_timeout_ns = drain_ms * 1000000;
	return umt_up_with(&cfg, &ucfg);
}

/* A destroyed kernel-mode queue's CPU-held buffers go with it: none is left
 * for the interrupt thread to feed, and the fences their WAITs name may be
 * destroyed after the queue (rt_device_destroy's order), in any order,
 * without the OS touching them again.  Held: [WAIT a, COUNT] [WAIT b, COUNT];
 * b goes first (no waiter registered on it yet), then a: a held buffer
 * left behind would have its WAIT on a abandoned, and the feed would go on
 * to register a waiter with the freed b (ASan: heap-use-after-free). */
static void destroyed_km_queue_retires_its_held_buffers(void **state)
{
	struct umt t = umt_up_drain(1, 100);
	struct rt_queue *k = umt_queue(&t, 0, false);
	struct os_fence *fa, *fb;
	assert_int_equal(os_fence_create(t.a, OS_FENCE_MONITORED, 0, 0, &fa), 0);
	assert_int_equal(os_fence_create(t.a, OS_FENCE_MONITORED, 0, 0, &fb), 0);
	_Atomic uint64_t n = 0;
	struct hw_cmd cmds[2][2] = {
		{ { .op = HW_CMD_WAIT, .fence = os_fence_hw(fa), .value = 1 }, { .op = HW_CMD_COUNT, .stamp = &n } },
		{ { .op = HW_CMD_WAIT, .fence = os_fence_hw(fb), .value = 1 }, { .op = HW_CMD_COUNT, .stamp = &n } },
	};
	for (int i = 0; i < 2; i++)
		assert_int_equal(rt_queue_submit(k, cmds[i], 2, NULL), 0);
	assert_true(fbt_eventually(os_hwqueue_held(rt_queue_os(k)) == 2));
	assert_int_equal(os_device_destroy(rt_device_os(t.d)), -ETIMEDOUT);   /* the WAITs never end */
	size_t held = os_hwqueue_held(rt_queue_os(k));
	assert_int_equal(os_fence_destroy(fb), 0);
	os_adapter_quiesce(t.a);        /* b's memory freed (the grace period passed) */
	int destroyed = os_fence_destroy(fa);   /* no held wait left on a to abandon */
	os_adapter_quiesce(t.a);        /* a's memory freed too */
	/* an interrupt (a CPU signal's record): the interrupt thread feeds what is held */
	struct os_fence *fc;
	assert_int_equal(os_fence_create(t.a, OS_FENCE_MONITORED, 0, 0, &fc), 0);
	struct lf_event ev;
	lf_event_init(&ev);
	assert_int_equal(os_fence_wait_event(fc, 1, &ev), 0);
	assert_int_equal(os_fence_signal_cpu(fc, 1), 0);
	os_adapter_quiesce(t.a);
	assert_true(lf_event_is_set(&ev));
	assert_int_equal(os_fence_destroy(fc), 0);
	assert_int_equal(held, 0);
	assert_int_equal(destroyed, 0);
	assert_int_equal(atomic_load(&n), 0);
	umt_down(&t);
}

/* The scheduler thread popped a kernel-mode submission and is about to read
 * it when the device is terminated: the termination must not release the
 * progress fence (after which the application frees the buffer) before the
 * scheduler is done with it.  The hook holds the scheduler until the
 * application has "freed" the buffer (poisoned in a release build: the
 * scheduler's validation would refuse it; freed under ASan), or until the
 * termination says it waits for the scheduler (os_test_sched_wait_hook):
 * no clock decides, so an application thread descheduled for long still
 * frees while the scheduler holds; 10 s only bounds a hang. */
static struct {
	_Atomic bool entered, freed, waited;
} popped;

static void popped_hold(struct os_hwqueue *q)
{
	(void)q;
	atomic_store(&popped.entered, true);
	uint64_t end = lf_now_ns() + 10 * SEC;
	while (!atomic_load(&popped.freed) && !atomic_load(&popped.waited) && lf_now_ns() < end)
		sched_yield();
}

static void popped_waited(struct os_hwqueue *q)
{
	(void)q;
	atomic_store(&popped.waited, true);
}

/* Terminate while the scheduler holds a popped submission; the submissions
 * the scheduler refused afterwards (it read the application's freed buffer). */
static uint64_t terminate_with_a_popped_km_submission(enum os_ums_fault fault)
{
	struct umt t = umt_up_ums_fault(1, 4, 0, fault);
	struct rt_queue *k = umt_queue(&t, 0, false);
	struct rt_device *d2;
	assert_int_equal(rt_device_create(t.u, &d2), 0);
	struct rt_queue_desc desc = { .engine = 0 };
	struct rt_queue *other;
	assert_int_equal(rt_queue_create(d2, &desc, &other), 0);
	struct os_hwqueue *q = rt_queue_os(k);
	_Atomic uint64_t n = 0, m = 0;
	size_t bytes = 2 * sizeof(struct hw_cmd);
	struct hw_cmd *cmds = malloc(bytes);
	cmds[0] = (struct hw_cmd){ .op = HW_CMD_COUNT, .stamp = &n };
	cmds[1] = (struct hw_cmd){ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(os_hwqueue_progress(q)), .value = 1 };
	atomic_store(&popped.entered, false);
	atomic_store(&popped.freed, false);
	atomic_store(&popped.waited, false);
	os_test_sched_popped_hook = popped_hold;
	os_test_sched_wait_hook = popped_waited;
	assert_int_equal(os_hwqueue_submit(q, cmds, 2, 1), 0);
	assert_true(fbt_eventually(atomic_load(&popped.entered)));
	os_device_terminate(rt_device_os(t.d));
	assert_true(os_hwqueue_completed(q) == UINT64_MAX);   /* the application may free the buffer now */
	usleep(400000);                 /* the application thread descheduled for a while (a loaded machine) */
#if defined(__SANITIZE_ADDRESS__)
	if (fault == OS_UMS_FAULT_NONE) {
		free(cmds);             /* ASan reports a read of it as heap-use-after-free */
		cmds = NULL;
	}
#endif
	if (cmds)
		memset(cmds, 0xff, bytes);   /* no valid op: a read of it is refused (km_rejected) */
	atomic_store(&popped.freed, true);
	/* the scheduler takes other's submission after the popped one */
	umt_submit_count(other, &m);
	assert_int_equal(rt_queue_wait(other, 0, 5 * SEC), 0);
	os_test_sched_popped_hook = NULL;
	os_test_sched_wait_hook = NULL;
	uint64_t rejected = umt_stats(&t).km_rejected;
	free(cmds);
	rt_device_destroy(d2);
	umt_down(&t);
	return rejected;
}

static void terminate_waits_for_a_popped_km_submission(void **state)
{
	assert_int_equal(terminate_with_a_popped_km_submission(OS_UMS_FAULT_NONE), 0);
	/* broken: the termination does not wait; the scheduler reads the freed buffer */
	assert_int_equal(terminate_with_a_popped_km_submission(OS_UMS_FAULT_SCHED_NO_LET_GO), 1);
}

/* ---- normal termination: the doorbell first, then the wait ---- */

/* What each drained user-mode queue's doorbell was when its drain's wait
 * began (os_test_drain_hook, on the destroying thread). */
static struct {
	struct umt *t;
	unsigned drained, disconnected_first;
} dorder;

static void drain_order_seen(struct os_hwqueue *q)
{
	dorder.drained++;
	uint64_t h = hw_queue_handle(os_hwqueue_hw(q));
	static struct os_ddi_call c[OS_DDI_LOG_MAX];
	size_t n = os_adapter_ddi_log(dorder.t->a, c, OS_DDI_LOG_MAX);
	bool logged = false;
	for (size_t i = 0; i < n; i++)
		logged |= c[i].ddi == OS_DDI_DISCONNECT_DOORBELL && c[i].handle == h;
	if (logged && os_doorbell_status(q) == OS_DOORBELL_DISCONNECTED_RETRY)
		dorder.disconnected_first++;
}

/* Seed, "Normal and abnormal process termination", normal: "For each
 * HWQueue of the device/context: 1. Dxgkrnl calls DxgkDdiDisconnectDoorbell
 * to disconnect the doorbell.  2. Dxgkrnl waits for the last queued
 * HwQueueProgressFenceLastQueuedValueCPUVirtualAddress to be completed on
 * the GPU."  Two user-mode queues with connected doorbells and work queued;
 * one destroyed on its own, then the device: true when every drain's wait
 * began with its doorbell disconnected (DDI logged, status RETRY), and
 * nothing queued was lost. */
static bool normal_termination_disconnects_before_waiting(enum os_ums_fault fault)
{
	struct umt t = umt_up_fault(fault);
	struct rt_queue *q1 = umt_queue(&t, 0, true), *q2 = umt_queue(&t, 0, true);
	_Atomic uint64_t n = 0;
	struct hw_cmd cmds[2] = { { .op = HW_CMD_WORK, .arg = 1000000 }, { .op = HW_CMD_COUNT, .stamp = &n } };
	for (int i = 0; i < 4; i++) {
		assert_int_equal(rt_queue_submit(q1, cmds, 2, NULL), 0);
		assert_int_equal(rt_queue_submit(q2, cmds, 2, NULL), 0);
	}
	memset(&dorder, 0, sizeof(dorder));
	dorder.t = &t;
	os_test_drain_hook = drain_order_seen;          /* called on this thread only */
	assert_int_equal(os_hwqueue_destroy(rt_queue_os(q1)), 0);
	assert_int_equal(rt_device_destroy(t.d), 0);
	t.d = NULL;
	os_test_drain_hook = NULL;
	assert_int_equal(dorder.drained, 2);
	assert_int_equal(atomic_load(&n), 8);
	bool first = dorder.disconnected_first == dorder.drained;
	umt_down(&t);
	return first;
}

static void normal_termination_disconnects_doorbell_before_waiting_for_last_queued(void **state)
{
	assert_true(normal_termination_disconnects_before_waiting(OS_UMS_FAULT_NONE));
	/* broken: the wait runs with the doorbell still connected */
	assert_false(normal_termination_disconnects_before_waiting(OS_UMS_FAULT_DRAIN_BEFORE_DISCONNECT));
}

/* ---- suspend and resume: every HW queue of the context ---- */

/* Seed, "Hardware context suspension": "Suspending a hardware context: 1.
 * Dxgkrnl calls DxgkddiSuspendContext.  2. KMD removes all HWQueues of the
 * context from the HW scheduler's list." and "Resuming: ... 2. KMD adds all
 * HWQueues of the context to HW scheduler's list."  One context with two
 * user-mode queues (doorbells connected): true when the suspend took both
 * off the run list, one DDI call for the context, and the resume put both
 * back and ran what each queued meanwhile. */
static bool suspend_resume_every_queue_of_the_context(enum os_ums_fault fault)
{
	struct umt t = umt_up_fault(fault);
	struct os_device *d;
	struct os_context *c;
	assert_int_equal(os_device_create(t.u, &d), 0);
	assert_int_equal(os_context_create(d, 0, &c), 0);
	struct raw_queue r[2];
	_Atomic uint64_t n = 0;
	for (int i = 0; i < 2; i++) {
		raw_queue_open(&t, d, c, &r[i]);
		assert_int_equal(os_doorbell_connect(r[i].q), 0);
		raw_submit(&r[i], 1, &n);
		assert_int_equal(os_fence_wait_cpu(r[i].progress, 1, 5 * SEC), 0);
	}
	uint64_t suspends = os_adapter_ddi_count(t.a, OS_DDI_SUSPEND_CONTEXT);
	os_context_suspend(c);
	assert_int_equal(os_adapter_ddi_count(t.a, OS_DDI_SUSPEND_CONTEXT), suspends + 1);
	/* hw_queue_set_scheduled(false) returned: off the list now, or never taken off */
	bool off = !hw_queue_scheduled(os_hwqueue_hw(r[0].q)) && !hw_queue_scheduled(os_hwqueue_hw(r[1].q));
	for (int i = 0; i < 2; i++) {
		raw_submit(&r[i], 2, &n);                  /* queued while suspended: the doorbell stays */
		assert_int_equal(raw_status(&r[i]), OS_DOORBELL_CONNECTED);
	}
	os_context_resume(c);
	bool on = hw_queue_scheduled(os_hwqueue_hw(r[0].q)) && hw_queue_scheduled(os_hwqueue_hw(r[1].q));
	for (int i = 0; i < 2; i++)
		assert_int_equal(os_fence_wait_cpu(r[i].progress, 2, 5 * SEC), 0);
	assert_int_equal(atomic_load(&n), 4);
	assert_int_equal(os_device_destroy(d), 0);
	for (int i = 0; i < 2; i++)
		os_fence_destroy(r[i].progress);
	umt_down(&t);
	return off && on;
}

static void suspend_and_resume_act_on_every_hwqueue_of_a_context(void **state)
{
	assert_true(suspend_resume_every_queue_of_the_context(OS_UMS_FAULT_NONE));
	/* broken: only the context's first queue leaves the run list */
	assert_false(suspend_resume_every_queue_of_the_context(OS_UMS_FAULT_SUSPEND_ONE_QUEUE));
}

/* ---- F1: that engine's doorbells only ---- */

/* Seed, "Engine F-state transitions": "When KMD raises a
 * DXGK_INTERRUPT_GPU_ENGINE_STATE_CHANGE interrupt with
 * EngineStateChange.NewState set to DXGK_ENGINE_STATE_TRANSITION_TO_F1,
 * Dxgkrnl disconnects all doorbells of HWQueues on this engine".  Two
 * engines, a queue with a connected doorbell on each, no engine idle long
 * enough to ask by itself (60 s): engine 0 raises TransitionToF1.  True
 * when engine 1's doorbell stayed connected (engine 0's was disconnected). */
static bool f1_leaves_the_other_engines_doorbells(enum os_ums_fault fault)
{
	struct umt t = umt_up_ums_fault(2, 4, 60 * SEC, fault);
	struct rt_queue *q0 = umt_queue(&t, 0, true), *q1 = umt_queue(&t, 1, true);
	_Atomic uint64_t n = 0;
	umt_submit_count(q0, &n);                        /* connects each doorbell */
	umt_submit_count(q1, &n);
	assert_int_equal(rt_queue_wait(q0, 0, 5 * SEC), 0);
	assert_int_equal(rt_queue_wait(q1, 0, 5 * SEC), 0);
	assert_int_equal(umt_stats(&t).f1_requests, 0);
	assert_int_equal(hw_engine_state_raise(os_adapter_hw(t.a), 0, HW_ENGINE_STATE_TRANSITION_TO_F1), 0);
	/* the power thread counts the request and disconnects under one hold of the lock */
	assert_true(fbt_eventually(umt_stats(&t).f1_requests == 1));
	assert_int_equal(os_doorbell_status(rt_queue_os(q0)), OS_DOORBELL_DISCONNECTED_RETRY);
	bool kept = os_doorbell_status(rt_queue_os(q1)) == OS_DOORBELL_CONNECTED;
	assert_int_equal(umt_stats(&t).f1_disconnects, kept ? 1 : 2);
	/* both go on: engine 0 back to F0 by the reconnect */
	umt_submit_count(q0, &n);
	umt_submit_count(q1, &n);
	assert_int_equal(rt_queue_wait(q0, 0, 5 * SEC), 0);
	assert_int_equal(rt_queue_wait(q1, 0, 5 * SEC), 0);
	assert_int_equal(atomic_load(&n), 4);
	umt_down(&t);
	return kept;
}

static void f1_disconnects_only_that_engines_doorbells(void **state)
{
	assert_true(f1_leaves_the_other_engines_doorbells(OS_UMS_FAULT_NONE));
	/* broken: every engine's doorbells go */
	assert_false(f1_leaves_the_other_engines_doorbells(OS_UMS_FAULT_F1_EVERY_ENGINE));
}

/* A D3 or a user suspend that comes while a destroy drains: the drain still
 * ends with every queued buffer run (the contexts being drained are not
 * left suspended), within the drain bound (1 s). */
static struct {
	struct os_ums *u;
	struct os_context *c;
	int d3_rc;
} drain;

static void drain_enter_d3(struct os_hwqueue *q)
{
	(void)q;
	drain.d3_rc = os_power_d3(drain.u);
}

static void drain_suspend(struct os_hwqueue *q)
{
	(void)q;
	os_context_suspend(drain.c);
}

enum drain_what { DRAIN_QUEUE, DRAIN_DEVICE };

/* Queue N buffers (a 2 ms WORK and a COUNT each) on a queue of the given
 * kind, then destroy it (or its device) with `hook` in the drain; a
 * pre-suspended context when `suspended`.  The destroy's result; *ran: the
 * buffers that ran. */
static int destroy_draining(bool user_mode, enum drain_what what, void (*hook)(struct os_hwqueue *), bool suspended,
			    uint64_t *ran)
{
	enum { N = 16 };
	struct umt t = umt_up_drain(1, 1000);
	struct rt_queue *q = umt_queue(&t, 0, user_mode);
	drain.u = t.u;
	drain.c = rt_queue_context(q);
	drain.d3_rc = 0;
	_Atomic uint64_t n = 0;
	struct hw_cmd cmds[2] = { { .op = HW_CMD_WORK, .arg = 2000000 }, { .op = HW_CMD_COUNT, .stamp = &n } };
	if (suspended)
		os_context_suspend(drain.c);
	for (int i = 0; i < N; i++)
		assert_int_equal(rt_queue_submit(q, cmds, 2, NULL), 0);
	os_test_drain_hook = hook;
	int rc = what == DRAIN_QUEUE ? os_hwqueue_destroy(rt_queue_os(q)) : os_device_destroy(rt_device_os(t.d));
	os_test_drain_hook = NULL;
	*ran = atomic_load(&n);
	umt_down(&t);
	return rc;
}

static void d3_or_suspend_during_a_destroy_drain_loses_nothing(void **state)
{
	static void (*const hooks[])(struct os_hwqueue *) = { drain_enter_d3, drain_suspend };
	unsigned bad = 0;
	for (int um = 0; um < 2; um++)
		for (int what = DRAIN_QUEUE; what <= DRAIN_DEVICE; what++)
			for (size_t h = 0; h < 2; h++) {
				uint64_t ran;
				int rc = destroy_draining(um, what, hooks[h], false, &ran);
				/* D3 waits for the destroy: the device has work to finish */
				bool ok = rc == 0 && ran == 16 && (h || drain.d3_rc == -EBUSY);
				printf("[ DRAIN ] %s queue, %s destroy, %s in the drain: %d, %lu of 16 ran%s\n",
				       um ? "user-mode" : "kernel-mode", what == DRAIN_QUEUE ? "queue" : "device",
				       h ? "a suspend" : "D3", rc, (unsigned long)ran, ok ? "" : "  <- wrong");
				bad += !ok;
			}
	assert_int_equal(bad, 0);
}

/* A queue destroyed while the application has its context suspended: the
 * destroy drains it all the same (the suspend does not hold the queue being
 * destroyed back), without waiting the drain bound out. */
static void queue_destroy_on_a_suspended_context_drains(void **state)
{
	for (int um = 0; um < 2; um++) {
		uint64_t ran;
		int rc = destroy_draining(um, DRAIN_QUEUE, NULL, true, &ran);
		assert_int_equal(rc, 0);
		assert_int_equal(ran, 16);
	}
}

/* A user-mode queue's logs recreated (a trace session starting, any thread)
 * while its destroy drains it on a context the application suspended: the
 * recreate puts the queue back as it found it, on the run list for the
 * drain, so every queued buffer still runs within the drain bound. */
static void drain_recreate_logs(struct os_hwqueue *q)
{
	drain.d3_rc = os_hwqueue_recreate_logs(q, 2 * HW_LOG_SIZE);
}

static void log_recreate_during_a_destroy_drain_loses_nothing(void **state)
{
	uint64_t ran;
	int rc = destroy_draining(true, DRAIN_QUEUE, drain_recreate_logs, true, &ran);
	assert_int_equal(drain.d3_rc, 0);
	assert_int_equal(rc, 0);
	assert_int_equal(ran, 16);
}

/* An abnormal termination that comes while a destroy drains a queue on a
 * context the application suspended (the queue runs for the drain): the
 * seed's step 2 takes that context's queues off the run list
 * (DxgkddiSuspendContext) before step 3 destroys them, the drained queue
 * too, though the context was suspended already. */
static struct {
	struct umt *t;
	size_t from;
} term;

static void drain_terminate(struct os_hwqueue *q)
{
	static struct os_ddi_call scratch[OS_DDI_LOG_MAX];
	term.from = ddi_since(term.t, 0, scratch, OS_DDI_LOG_MAX);
	(void)q;
	os_device_terminate(rt_device_os(term.t->d));
}

static void abnormal_termination_during_a_drain_suspends_the_drained_context(void **state)
{
	struct umt t = umt_up_drain(1, 1000);
	struct rt_queue *q = umt_queue(&t, 0, true);
	_Atomic uint64_t n = 0;
	struct hw_cmd cmds[2] = { { .op = HW_CMD_WORK, .arg = 2000000 }, { .op = HW_CMD_COUNT, .stamp = &n } };
	os_context_suspend(rt_queue_context(q));
	for (int i = 0; i < 16; i++)
		assert_int_equal(rt_queue_submit(q, cmds, 2, NULL), 0);
	term.t = &t;
	os_test_drain_hook = drain_terminate;
	int rc = os_hwqueue_destroy(rt_queue_os(q));
	os_test_drain_hook = NULL;
	static struct os_ddi_call c[OS_DDI_LOG_MAX];
	size_t m = ddi_since(&t, term.from, c, OS_DDI_LOG_MAX);
	assert_int_equal(rc, -ENODEV);
	assert_int_equal(ddi_count_in(c, m, OS_DDI_SUSPEND_CONTEXT), 1);
	/* the drain disconnected the doorbell already: step 3's first DDI is its destroy */
	assert_int_equal(ddi_count_in(c, m, OS_DDI_DESTROY_DOORBELL), 1);
	assert_true(ddi_all_before(c, m, OS_DDI_SUSPEND_CONTEXT, OS_DDI_DESTROY_DOORBELL));
	umt_down(&t);
}

/* A queue destroyed normally is the OS's no more: a later abnormal
 * termination of its device leaves its progress fence alone (the caller may
 * have destroyed it after the queue). */
static void terminate_leaves_destroyed_queues_progress_fences_alone(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 4, 0);
	struct rt_queue *k = umt_queue(&t, 0, false);
	struct os_fence *pa, *pb;
	assert_int_equal(os_fence_create(t.a, OS_FENCE_NATIVE, 0, 0, &pa), 0);
	assert_int_equal(os_fence_create(t.a, OS_FENCE_NATIVE, 0, 0, &pb), 0);
	struct os_hwqueue *qa, *qb;
	assert_int_equal(os_hwqueue_create(rt_queue_context(k), 0, 16, pa, &qa), 0);
	assert_int_equal(os_hwqueue_create(rt_queue_context(k), 0, 16, pb, &qb), 0);
	assert_int_equal(os_hwqueue_destroy(qa), 0);
	assert_int_equal(os_hwqueue_destroy(qb), 0);
	assert_int_equal(os_fence_destroy(pb), 0);   /* the caller's, after its queue */
	os_adapter_quiesce(t.a);        /* its memory freed (the grace period passed) */
	os_device_terminate(rt_device_os(t.d));
	assert_int_equal(os_fence_value(pa), 0);
	assert_int_equal(os_fence_destroy(pa), 0);
	umt_down(&t);
}

/* Two destroys of one queue at once: os_hwqueue_destroy(q) is draining q
 * when a second destroy comes, of q again (an alias) or of its device.  The
 * first returns and its caller may destroy q's progress fence at once
 * (ums.h): the second must not drain q from then on (its wait would read the
 * freed fence).  The hook holds the first destroy's drain (bounded) until
 * the second is in its own drain of q, or has returned, or waits for the
 * first (os_test_destroy_wait_hook), then lets the first return; a drain
 * of q by the second after that is counted.  No clock decides: 10 s only
 * bounds a hang. */
static struct {
	struct os_hwqueue *q;
	pthread_t first;
	_Atomic int phase;              /* 1: first in its drain; 2: second in its drain; 3: first returned */
	_Atomic bool second_out;        /* the second returned, or waits for the first */
	_Atomic unsigned late;          /* drains of q after its destroy returned */
} twice;

static void twice_waits(struct os_device *d)
{
	(void)d;
	atomic_store(&twice.second_out, true);
}

static void twice_hold(struct os_hwqueue *q)
{
	if (q != twice.q)
		return;
	uint64_t end = lf_now_ns() + 10 * SEC;
	if (pthread_equal(pthread_self(), twice.first) && atomic_load(&twice.phase) == 0) {
		atomic_store(&twice.phase, 1);
		while (atomic_load(&twice.phase) != 2 && !atomic_load(&twice.second_out) && lf_now_ns() < end)
			sched_yield();
		return;
	}
	int expect = 1;
	if (atomic_compare_exchange_strong(&twice.phase, &expect, 2))
		while (atomic_load(&twice.phase) != 3 && lf_now_ns() < end)
			sched_yield();
	if (atomic_load(&twice.phase) == 3)
		atomic_fetch_add(&twice.late, 1);
}

struct twice_call {
	struct os_hwqueue *q;          /* destroy q, or else its device d */
	struct os_device *d;
	int rc;
};

static void *twice_first(void *arg)
{
	struct twice_call *c = arg;
	twice.first = pthread_self();
	c->rc = os_hwqueue_destroy(c->q);
	atomic_store(&twice.phase, 3);
	return NULL;
}

static void *twice_second(void *arg)
{
	struct twice_call *c = arg;
	usleep(400000);                 /* the second destroy's thread descheduled for a while (a loaded machine) */
	c->rc = c->q ? os_hwqueue_destroy(c->q) : os_device_destroy(c->d);
	atomic_store(&twice.second_out, true);
	return NULL;
}

/* The first destroy's result, the second's; *late: the drains counted. */
static void destroy_twice(enum os_ums_fault fault, bool device, int *rc1, int *rc2, unsigned *late)
{
	struct os_config cfg;
	struct os_ums_config ucfg;
	umt_config(&cfg, 1, HW_DOORBELL_DEDICATED, 4, 0);
	os_ums_config_default(&ucfg);
	ucfg.drain_timeout_ns = SEC;
	ucfg.ums_fault = fault;
	struct umt t = umt_up_with(&cfg, &ucfg);
	struct rt_queue *k = umt_queue(&t, 0, false);
	struct os_fence *p;
	assert_int_equal(os_fence_create(t.a, OS_FENCE_NATIVE, 0, 0, &p), 0);
	struct os_hwqueue *q;
	assert_int_equal(os_hwqueue_create(rt_queue_context(k), 0, 16, p, &q), 0);
	twice.q = q;
	atomic_store(&twice.phase, 0);
	atomic_store(&twice.late, 0);
	atomic_store(&twice.second_out, false);
	os_test_drain_hook = twice_hold;
	os_test_destroy_wait_hook = twice_waits;
	struct twice_call first = { .q = q }, second = { .q = device ? NULL : q, .d = rt_device_os(t.d) };
	pthread_t th[2];
	pthread_create(&th[0], NULL, twice_first, &first);
	assert_true(fbt_eventually(atomic_load(&twice.phase) >= 1));
	pthread_create(&th[1], NULL, twice_second, &second);
	pthread_join(th[0], NULL);
	/* the caller's, once its queue's destroy returned (ASan: a drain of it
	 * afterwards reads freed memory); the broken variant's second drain
	 * does, so there it goes after both */
	if (fault == OS_UMS_FAULT_NONE)
		assert_int_equal(os_fence_destroy(p), 0);
	pthread_join(th[1], NULL);
	if (fault != OS_UMS_FAULT_NONE)
		assert_int_equal(os_fence_destroy(p), 0);
	os_test_drain_hook = NULL;
	os_test_destroy_wait_hook = NULL;
	*rc1 = first.rc;
	*rc2 = second.rc;
	*late = atomic_load(&twice.late);
	umt_down(&t);
}

static void a_queue_destroyed_twice_at_once_is_drained_by_one(void **state)
{
	int rc1, rc2;
	unsigned late;
	destroy_twice(OS_UMS_FAULT_NONE, false, &rc1, &rc2, &late);
	assert_int_equal(late, 0);
	assert_int_equal(rc1, 0);
	assert_int_equal(rc2, -EBUSY);   /* the other destroy owns it */
	/* broken: both drain it, the second past the first's return */
	destroy_twice(OS_UMS_FAULT_DESTROY_SHARED, false, &rc1, &rc2, &late);
	assert_int_equal(late, 1);
}

static void a_device_destroy_leaves_a_queue_its_own_destroy_drains(void **state)
{
	int rc1, rc2;
	unsigned late;
	destroy_twice(OS_UMS_FAULT_NONE, true, &rc1, &rc2, &late);
	assert_int_equal(late, 0);
	assert_int_equal(rc1, 0);
	assert_int_equal(rc2, 0);
	destroy_twice(OS_UMS_FAULT_DESTROY_SHARED, true, &rc1, &rc2, &late);
	assert_int_equal(late, 1);
}

FB_TEST_MAIN(cmocka_unit_test(km_submission_to_suspended_full_ring_is_held),
	     cmocka_unit_test(normal_termination_disconnects_doorbell_before_waiting_for_last_queued),
	     cmocka_unit_test(suspend_and_resume_act_on_every_hwqueue_of_a_context),
	     cmocka_unit_test(f1_disconnects_only_that_engines_doorbells),
	     cmocka_unit_test(a_queue_destroyed_twice_at_once_is_drained_by_one),
	     cmocka_unit_test(a_device_destroy_leaves_a_queue_its_own_destroy_drains),
	     cmocka_unit_test(destroyed_km_queue_retires_its_held_buffers),
	     cmocka_unit_test(terminate_waits_for_a_popped_km_submission),
	     cmocka_unit_test(d3_or_suspend_during_a_destroy_drain_loses_nothing),
	     cmocka_unit_test(queue_destroy_on_a_suspended_context_drains),
	     cmocka_unit_test(log_recreate_during_a_destroy_drain_loses_nothing),
	     cmocka_unit_test(abnormal_termination_during_a_drain_suspends_the_drained_context),
	     cmocka_unit_test(terminate_leaves_destroyed_queues_progress_fences_alone),
	     cmocka_unit_test(context_suspend_keeps_queuing_resume_runs),
	     cmocka_unit_test(context_suspend_preempts_mid_buffer),
	     cmocka_unit_test(engine_f1_round_trip),
	     cmocka_unit_test(idle_polling_runs_at_the_lowest_weight),
	     cmocka_unit_test(idle_polling_under_a_creator_at_nice_15_keeps_its_weight),
	     cmocka_unit_test(device_d3_round_trip_by_connect),
	     cmocka_unit_test(device_d3_round_trip_by_km_submission),
	     cmocka_unit_test(normal_termination_loses_nothing),
	     cmocka_unit_test(abnormal_termination_waiters_get_error),
	     cmocka_unit_test(abnormal_termination_suspends_contexts_before_disconnecting_doorbells),
	     cmocka_unit_test(d3_power_down_suspend_contexts_then_disconnect_doorbells_then_evict_rings))
