/* tests/test_umd_submit.c — user-mode and kernel-mode submission, one test per
 * rule of the seed (user-mode-work-submission), and the broken submission
 * orders the protocol tests must catch. */
#include <sched.h>

#include "tests/fb_test.h"
#include "tests/umd_test_util.h"

#define SEC 1000000000ll

/* "The OS then allows UMD to create user-mode submission HWQueues and
 * doorbells only on nodes for which this flag is set." */
static void um_flag_refused_on_node_without_support(void **state)
{
	struct os_config cfg;
	umt_config(&cfg, 2, HW_DOORBELL_DEDICATED, 4, 0);
	cfg.caps.no_um_engines = 0x2;                  /* engine 1: no UserModeSubmissionSupported */
	struct umt t = umt_up_with(&cfg, NULL);
	struct rt_queue_desc um1 = { .engine = 1, .user_mode = true };
	struct rt_queue *q;
	assert_int_equal(rt_queue_create(t.d, &um1, &q), -ENOTSUP);
	struct rt_queue *km1 = umt_queue(&t, 1, false), *um0 = umt_queue(&t, 0, true);
	assert_false(rt_queue_user_mode(km1));
	assert_true(rt_queue_user_mode(um0));
	_Atomic uint64_t n = 0;
	umt_submit_count(km1, &n);
	umt_submit_count(um0, &n);
	assert_int_equal(rt_queue_wait(km1, 0, 5 * SEC), 0);
	assert_int_equal(rt_queue_wait(um0, 0, 5 * SEC), 0);
	assert_int_equal(atomic_load(&n), 2);
	umt_down(&t);
}

/* "IHV drivers and hardware that support UM work submission must continue to
 * support the traditional kernel-mode work submission model simultaneously":
 * both on one engine, each command buffer runs exactly once. */
static void um_and_km_queues_share_an_engine(void **state)
{
	enum { N = 300 };
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 4, 0);
	struct rt_queue *um = umt_queue(&t, 0, true), *km = umt_queue(&t, 0, false);
	static _Atomic uint64_t cu[N], ck[N];
	for (int i = 0; i < N; i++) {
		atomic_store(&cu[i], 0);
		atomic_store(&ck[i], 0);
	}
	for (int i = 0; i < N; i++) {
		umt_submit_count(um, &cu[i]);
		umt_submit_count(km, &ck[i]);
	}
	assert_int_equal(rt_queue_wait(um, 0, 5 * SEC), 0);
	assert_int_equal(rt_queue_wait(km, 0, 5 * SEC), 0);
	for (int i = 0; i < N; i++) {
		assert_int_equal(atomic_load(&cu[i]), 1);
		assert_int_equal(atomic_load(&ck[i]), 1);
	}
	struct rt_queue_stats su, sk;
	rt_queue_stats(um, &su);
	rt_queue_stats(km, &sk);
	assert_int_equal(su.um_submits, N);
	assert_int_equal(sk.km_submits, N);
	assert_true(su.rings >= N);
	struct os_ums_stats s = umt_stats(&t);
	assert_int_equal(s.km_submits, N);
	assert_int_equal(s.km_rejected, 0);
	assert_true(s.sched_wakeups > 0);
	assert_int_equal(rt_queue_completed(um), N);
	assert_false(os_hwqueue_pending(rt_queue_os(um)));
	umt_down(&t);
}

/* os_ums_stats.sched_busy_ns is the scheduler thread's own CPU-time clock
 * (the power proxy of kernel-mode submission): it grows with the
 * submissions the thread wakes for, and never passes that thread's clock
 * read after it (the clock of its TID, as pthread_getcpuclockid builds it:
 * CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED), which the process's clock or the
 * wall clock would. */
static void scheduler_cpu_time_is_its_own_clock(void **state)
{
	enum { N = 200 };
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 4, 0);
	struct rt_queue *km = umt_queue(&t, 0, false);
	clockid_t own = (clockid_t)((~(unsigned)os_ums_sched_tid(t.u) << 3) | 6u);
	struct os_ums_stats s0 = umt_stats(&t);
	static _Atomic uint64_t n;
	atomic_store(&n, 0);
	for (int i = 0; i < N; i++)
		umt_submit_count(km, &n);
	assert_int_equal(rt_queue_wait(km, 0, 5 * SEC), 0);
	struct os_ums_stats s1 = umt_stats(&t);
	uint64_t clock_after;
	assert_int_equal(lf_clock_ns(own, &clock_after), 0);
	assert_int_equal(atomic_load(&n), N);
	assert_true(s1.sched_wakeups > s0.sched_wakeups);
	assert_true(s1.sched_busy_ns > s0.sched_busy_ns);
	assert_true(s1.sched_busy_ns <= clock_after);
	umt_down(&t);
}

/* Kernel-mode submission: the scheduler thread resolves dependencies — a GPU
 * wait on a monitored (legacy) fence is held on the CPU, with what follows. */
static void km_scheduler_holds_legacy_waits(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 4, 0);
	struct rt_queue *km = umt_queue(&t, 0, false);
	struct os_fence *legacy;
	assert_int_equal(os_fence_create(t.a, OS_FENCE_MONITORED, 0, 0, &legacy), 0);
	_Atomic uint64_t n = 0;
	struct hw_cmd cmds[2] = {
		{ .op = HW_CMD_WAIT, .fence = os_fence_hw(legacy), .value = 1 },
		{ .op = HW_CMD_COUNT, .stamp = &n },
	};
	uint64_t v;
	assert_int_equal(rt_queue_submit(km, cmds, 2, &v), 0);
	fbt_settle();
	assert_int_equal(atomic_load(&n), 0);
	assert_true(os_hwqueue_pending(rt_queue_os(km)));
	assert_int_equal(os_fence_signal_cpu(legacy, 1), 0);
	assert_int_equal(rt_queue_wait(km, v, 5 * SEC), 0);
	assert_int_equal(atomic_load(&n), 1);
	/* a command-buffer-in-a-command-buffer: the runtime refuses it at once,
	 * nothing submitted; one that reaches the kernel anyway, the kernel refuses */
	struct hw_cmd bad = { .op = HW_CMD_INDIRECT, .ib = cmds, .arg = 2 };
	assert_int_equal(rt_queue_submit(km, &bad, 1, NULL), -EINVAL);
	assert_int_equal(rt_queue_submitted(km), v);
	assert_int_equal(os_hwqueue_submit(rt_queue_os(km), &bad, 1, v + 1), 0);
	assert_true(fbt_eventually(umt_stats(&t).km_rejected == 1));
	os_fence_destroy(legacy);
	/* the refused buffer's progress value never completes: terminate */
	rt_device_terminate(t.d);
	umt_down(&t);
}

/* Global doorbell: one register for every queue; the value names the queue,
 * and when several rang before the engine looked it polls them all. */
static void global_doorbell_several_queues(void **state)
{
	enum { Q = 4, N = 400 };
	struct umt t = umt_up(2, HW_DOORBELL_GLOBAL, 0, 0);
	struct rt_queue *q[Q];
	static _Atomic uint64_t c[Q][N];
	memset(c, 0, sizeof(c));
	for (int i = 0; i < Q; i++)
		q[i] = umt_queue(&t, i % 2, true);
	for (int k = 0; k < N; k++)
		for (int i = 0; i < Q; i++)
			umt_submit_count(q[i], &c[i][k]);
	for (int i = 0; i < Q; i++)
		assert_int_equal(rt_queue_wait(q[i], 0, 5 * SEC), 0);
	for (int i = 0; i < Q; i++)
		for (int k = 0; k < N; k++)
			assert_int_equal(atomic_load(&c[i][k]), 1);
	/* all four share the one register: no victimization */
	struct os_ums_stats s = umt_stats(&t);
	assert_int_equal(s.victimizations, 0);
	struct hw_engine_um_stats e0 = umt_engine(&t, 0), e1 = umt_engine(&t, 1);
	printf("[ GLOBAL   ] rings consumed %llu, polls of every queue %llu\n",
	       (unsigned long long)(e0.rings + e1.rings), (unsigned long long)(e0.global_polls + e1.global_polls));
	assert_true(e0.rings + e1.rings > 0);
	umt_down(&t);
}

/* Several rings before the engine looks: the value holds only the last queue,
 * so the engine must poll every connected queue.  Deterministic: the rings
 * are written while the queue's engine does a long WORK. */
static void global_doorbell_collision_polls_all(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_GLOBAL, 0, 0);
	struct rt_queue *busy = umt_queue(&t, 0, true), *a = umt_queue(&t, 0, true), *b = umt_queue(&t, 0, true);
	_Atomic uint64_t na = 0, nb = 0, started = 0;
	struct hw_cmd work[2] = {
		{ .op = HW_CMD_STAMP, .stamp = &started },
		{ .op = HW_CMD_WORK, .arg = 100000000 },      /* 100 ms */
	};
	assert_int_equal(rt_queue_submit(busy, work, 2, NULL), 0);
	assert_true(fbt_eventually(atomic_load(&started) != 0));   /* the engine is inside the WORK */
	umt_submit_count(a, &na);
	umt_submit_count(b, &nb);                       /* overwrites a's value in the register */
	assert_int_equal(rt_queue_wait(a, 0, 5 * SEC), 0);
	assert_int_equal(rt_queue_wait(b, 0, 5 * SEC), 0);
	assert_int_equal(atomic_load(&na), 1);
	assert_int_equal(atomic_load(&nb), 1);
	assert_true(umt_engine(&t, 0).global_polls >= 1);
	umt_down(&t);
}

/* CONNECTED_NOTIFY: "D3DKMTNotifyWorkSubmission notifies the KMD that new work
 * was submitted" — the application calls it after every ring. */
static void notify_work_submission_when_asked(void **state)
{
	struct os_config cfg;
	umt_config(&cfg, 1, HW_DOORBELL_DEDICATED, 4, 0);
	struct os_ums_config ucfg;
	os_ums_config_default(&ucfg);
	ucfg.notify_engines = 0x1;
	struct umt t = umt_up_with(&cfg, &ucfg);
	struct rt_queue *q = umt_queue(&t, 0, true);
	_Atomic uint64_t n = 0;
	for (int i = 0; i < 10; i++)
		umt_submit_count(q, &n);
	assert_int_equal(rt_queue_wait(q, 0, 5 * SEC), 0);
	struct rt_queue_stats s;
	rt_queue_stats(q, &s);
	assert_int_equal(atomic_load(&n), 10);
	assert_int_equal(s.notifies, 10);
	assert_int_equal(umt_stats(&t).notifies, 10);
	umt_down(&t);
}

/* What the OS (Dxgkrnl + KMD) did during the measured submissions. */
struct os_calls {
	uint64_t kernel_calls;   /* the application's D3DKMT* calls (os_ums_kernel_calls) */
	uint64_t ddi_calls;      /* DDI calls of every kind (the DDI log's counts) */
	uint64_t sched_wakeups;  /* the kernel-mode scheduler thread's */
	uint64_t rings, submits;
};

static struct os_calls os_calls_now(struct umt *t, struct rt_queue *q)
{
	struct os_calls c = { .kernel_calls = os_ums_kernel_calls(t->u) };
	for (int d = 0; d < OS_DDI_KINDS; d++)
		c.ddi_calls += os_adapter_ddi_count(t->a, (enum os_ddi)d);
	c.sched_wakeups = umt_stats(t).sched_wakeups;
	struct rt_queue_stats s;
	rt_queue_stats(q, &s);
	c.rings = s.rings;
	c.submits = s.um_submits;
	return c;
}

/* Wait for q's last submission by reading its progress fence (GetCompleted
 * Value): no CPU waiter, so no interrupt and no DDI of the interrupt path
 * lands in the next measured round. */
static void drain_polling(struct rt_queue *q)
{
	uint64_t v = rt_queue_submitted(q), end = lf_now_ns() + 5 * SEC;
	while (rt_queue_completed(q) < v && lf_now_ns() < end)
		sched_yield();
	assert_true(rt_queue_completed(q) >= v);
}

/* rounds x 48 user-mode submissions on a connected queue (fewer than its 64
 * buffers in flight: no flow-control wait among them), counting only what
 * the submissions themselves caused; the queue drains between rounds
 * (polled: nobody waits on the CPU, so nothing interrupts). */
static struct os_calls os_calls_over_um_submissions(enum rt_broken broken, uint32_t notify_engines, int rounds)
{
	struct os_config cfg;
	umt_config(&cfg, 1, HW_DOORBELL_DEDICATED, 4, 60 * SEC);   /* no F1 disconnect meanwhile */
	struct os_ums_config ucfg;
	os_ums_config_default(&ucfg);
	ucfg.notify_engines = notify_engines;
	struct umt t = umt_up_with(&cfg, &ucfg);
	struct rt_queue_desc desc = { .engine = 0, .user_mode = true, .broken = broken };
	struct rt_queue *q;
	assert_int_equal(rt_queue_create(t.d, &desc, &q), 0);
	_Atomic uint64_t n = 0;
	umt_submit_count(q, &n);                          /* the first one connects */
	drain_polling(q);
	struct os_calls sum = { 0 };
	for (int r = 0; r < rounds; r++) {
		struct os_calls a = os_calls_now(&t, q);
		for (int i = 0; i < 48; i++)
			umt_submit_count(q, &n);
		struct os_calls b = os_calls_now(&t, q);
		sum.kernel_calls += b.kernel_calls - a.kernel_calls;
		sum.ddi_calls += b.ddi_calls - a.ddi_calls;
		sum.sched_wakeups += b.sched_wakeups - a.sched_wakeups;
		sum.rings += b.rings - a.rings;
		sum.submits += b.submits - a.submits;
		drain_polling(q);
	}
	assert_int_equal(atomic_load(&n), 1 + 48ull * rounds);
	umt_down(&t);
	return sum;
}

/* Seed, "User-mode work submission APIs": "The point of this feature is a
 * low latency work submission path, where KMD isn't involved or aware when
 * work is submitted."  Over N user-mode submissions on a connected
 * doorbell: no kernel call, no DDI call, the scheduler thread never woken —
 * 0 per submission; one ring each.  Broken (RT_BROKEN_CONNECT_EVERY_SUBMIT,
 * the pseudocode's loop taken literally: D3DKMTConnectDoorbell each time):
 * one kernel call per submission, caught.  And the seed's exception, the
 * KMD asking for NotifyWorkSubmission ("it involves a round trip from UMD to
 * KMD on every work submission"): one kernel call and one DDI each. */
static void umd_fast_path_kmd_not_involved_no_os_call_per_submission(void **state)
{
	enum { ROUNDS = 20, N = 48 * ROUNDS };
	struct os_calls c = os_calls_over_um_submissions(RT_BROKEN_NONE, 0, ROUNDS);
	assert_int_equal(c.submits, N);
	assert_int_equal(c.rings, N);
	assert_int_equal(c.kernel_calls, 0);
	assert_int_equal(c.ddi_calls, 0);
	assert_int_equal(c.sched_wakeups, 0);
	/* broken: a kernel call per submission */
	c = os_calls_over_um_submissions(RT_BROKEN_CONNECT_EVERY_SUBMIT, 0, ROUNDS);
	assert_int_equal(c.submits, N);
	assert_int_equal(c.kernel_calls, N);
	assert_int_equal(c.ddi_calls, 0);                /* connected already: the KMD does nothing */
	/* CONNECTED_NOTIFY: the exception the seed names */
	c = os_calls_over_um_submissions(RT_BROKEN_NONE, 0x1, ROUNDS);
	assert_int_equal(c.kernel_calls, N);
	assert_int_equal(c.ddi_calls, N);
	assert_int_equal(c.sched_wakeups, 0);
}

/* The seed's pseudocode: DISCONNECTED_ABORT -> "destroy this HWQueue and
 * re-create using traditional kernel mode submission".  Before and after: every
 * buffer once. */
static void abort_falls_back_to_kernel_mode(void **state)
{
	enum { N = 20 };
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 4, 0);
	struct rt_queue *q = umt_queue(&t, 0, true);
	static _Atomic uint64_t c[2 * N];
	memset(c, 0, sizeof(c));
	for (int i = 0; i < N; i++)
		umt_submit_count(q, &c[i]);
	assert_int_equal(rt_queue_wait(q, 0, 5 * SEC), 0);
	os_doorbell_abort(rt_queue_os(q));              /* device-lost for its doorbell */
	for (int i = N; i < 2 * N; i++)
		umt_submit_count(q, &c[i]);
	assert_false(rt_queue_user_mode(q));
	assert_int_equal(rt_queue_wait(q, 0, 5 * SEC), 0);
	for (int i = 0; i < 2 * N; i++)
		assert_int_equal(atomic_load(&c[i]), 1);
	struct rt_queue_stats s;
	rt_queue_stats(q, &s);
	assert_int_equal(s.fallbacks, 1);
	assert_int_equal(s.um_submits, N);
	assert_int_equal(s.km_submits, N);
	assert_int_equal(umt_stats(&t).aborts, 1);
	umt_down(&t);
}

/* ABORT after the buffer was made visible (between push and ring): the
 * fallback's normal destroy runs it; it is not submitted again. */
static struct rt_queue *abort_in_window_queue;
static void abort_in_window(struct rt_queue *q)
{
	if (q == abort_in_window_queue) {
		abort_in_window_queue = NULL;
		os_doorbell_abort(rt_queue_os(q));
	}
}

static void abort_after_visible_runs_once(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 4, 0);
	struct rt_queue *q = umt_queue(&t, 0, true);
	_Atomic uint64_t a = 0, b = 0;
	umt_submit_count(q, &a);
	abort_in_window_queue = q;
	rt_test_ring_hook = abort_in_window;
	umt_submit_count(q, &b);
	rt_test_ring_hook = NULL;
	assert_false(rt_queue_user_mode(q));
	assert_int_equal(rt_queue_wait(q, 0, 5 * SEC), 0);
	assert_int_equal(atomic_load(&a), 1);
	assert_int_equal(atomic_load(&b), 1);
	struct rt_queue_stats s;
	rt_queue_stats(q, &s);
	assert_int_equal(s.km_submits, 0);
	umt_down(&t);
}

/* Broken order 1: the doorbell rung before the buffer is visible — the
 * engine reads the old write pointer and the buffer is never run.  The same
 * check passes with the seed's order. */
static void broken_ring_before_visible_is_caught(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 4, 5 * SEC);   /* the engine keeps polling */
	struct rt_queue_desc bad = { .engine = 0, .user_mode = true, .broken = RT_BROKEN_RING_BEFORE_VISIBLE };
	struct rt_queue *qb, *qg = umt_queue(&t, 0, true);
	assert_int_equal(rt_queue_create(t.d, &bad, &qb), 0);
	_Atomic uint64_t nb = 0, ng = 0;
	uint64_t vb = umt_submit_count(qb, &nb), vg = umt_submit_count(qg, &ng);
	assert_int_equal(rt_queue_wait(qg, vg, 5 * SEC), 0);
	assert_int_equal(rt_queue_wait(qb, vb, 200000000), -ETIMEDOUT);   /* lost */
	assert_int_equal(atomic_load(&nb), 0);
	assert_true(os_hwqueue_pending(rt_queue_os(qb)));   /* the OS still knows it is owed */
	/* normal termination has the CMP look at the final write pointer: it runs */
	assert_int_equal(rt_device_destroy(t.d), 0);
	t.d = NULL;
	assert_int_equal(atomic_load(&nb), 1);
	umt_down(&t);
}

/* Broken order 2: last-queued updated after the buffer is visible.  The OS
 * cannot tell the queue has pending work, and normal termination destroys it
 * with the buffer unrun.  The buffer waits on a fence so the engine cannot
 * run it before the termination decides. */
struct late_ctx {
	struct rt_queue *q;
	struct rt_fence *gate;
	_Atomic uint64_t *n;
};

static void *late_submit(void *arg)
{
	struct late_ctx *c = arg;
	struct hw_cmd cmds[2] = {
		{ .op = HW_CMD_WAIT, .fence = os_fence_hw(rt_fence_os(c->gate)), .value = 1 },
		{ .op = HW_CMD_COUNT, .stamp = c->n },
	};
	rt_queue_submit(c->q, cmds, 2, NULL);
	return NULL;
}

static void *late_open_gate(void *arg)
{
	struct timespec ts = { 0, 100000000 };
	nanosleep(&ts, NULL);
	rt_fence_signal(arg, 1);
	return NULL;
}

/* Returns how many times the buffer ran (1 with the seed's order). */
static uint64_t terminate_during_submit(enum rt_broken broken, bool *pending_when_visible)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 4, 0);
	struct rt_queue_desc desc = { .engine = 0, .user_mode = true, .broken = broken };
	struct late_ctx c;
	_Atomic uint64_t n = 0;
	c.n = &n;
	assert_int_equal(rt_queue_create(t.d, &desc, &c.q), 0);
	assert_int_equal(rt_fence_create(t.d, 0, &c.gate), 0);
	pthread_t sub, gate;
	pthread_create(&sub, NULL, late_submit, &c);
	struct lf_ring *ring = hw_queue_ring(os_hwqueue_hw(rt_queue_os(c.q)));
	assert_true(fbt_eventually(lf_ring_write_index(ring) > 0));        /* visible */
	*pending_when_visible = os_hwqueue_pending(rt_queue_os(c.q));
	if (broken == RT_BROKEN_NONE)
		pthread_join(sub, NULL);                  /* the broken one is still in its window */
	pthread_create(&gate, NULL, late_open_gate, c.gate);
	os_device_destroy(rt_device_os(t.d));             /* process exit: normal termination */
	pthread_join(gate, NULL);
	if (broken != RT_BROKEN_NONE)
		pthread_join(sub, NULL);
	fbt_settle();
	uint64_t ran = atomic_load(&n);
	umt_down(&t);
	return ran;
}

static void broken_last_queued_late_is_caught(void **state)
{
	bool pending;
	assert_int_equal(terminate_during_submit(RT_BROKEN_NONE, &pending), 1);
	assert_true(pending);
	assert_int_equal(terminate_during_submit(RT_BROKEN_LAST_QUEUED_LATE, &pending), 0);
	assert_false(pending);                           /* visible work the OS cannot see */
}

/* A short command buffer goes into the ring itself (its commands, then the
 * progress write and the LOG that follows it), a long one as one INDIRECT entry; both run exactly once,
 * in submission order, across many laps of the ring. */
static void short_buffers_inline_long_ones_indirect(void **state)
{
	enum { N = 300, LONG = 9 };
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 4, 0);
	struct rt_queue *q = umt_queue(&t, 0, true);
	struct lf_ring *ring = hw_queue_ring(os_hwqueue_hw(rt_queue_os(q)));
	static _Atomic uint64_t c[N][LONG];
	memset(c, 0, sizeof(c));
	for (int i = 0; i < N; i++) {
		struct hw_cmd cmds[LONG];
		size_t n = i % 3 == 2 ? LONG : 1 + (size_t)(i % 3);   /* 1, 2 (inline with the progress write + LOG), 9 */
		for (size_t j = 0; j < n; j++)
			cmds[j] = (struct hw_cmd){ .op = HW_CMD_COUNT, .stamp = &c[i][j] };
		uint64_t w0 = lf_ring_write_index(ring), v;
		assert_int_equal(rt_queue_submit(q, cmds, n, &v), 0);
		assert_int_equal(lf_ring_write_index(ring) - w0, n == LONG ? 1 : n + 2);
		if (i % 50 == 49)
			assert_int_equal(rt_queue_wait(q, v, 5 * SEC), 0);
	}
	assert_int_equal(rt_queue_wait(q, 0, 5 * SEC), 0);
	for (int i = 0; i < N; i++)
		for (size_t j = 0; j < LONG; j++)
			assert_int_equal(atomic_load(&c[i][j]), j < (i % 3 == 2 ? LONG : 1 + (size_t)(i % 3)) ? 1 : 0);
	umt_down(&t);
}

/* A failed submission hands no progress value out: rt_queue_submitted (and
 * so a wait for "everything submitted") is as before the call. */
static void failed_submit_advances_nothing(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 4, 0);
	struct rt_queue *km = umt_queue(&t, 0, false), *um = umt_queue(&t, 0, true);
	_Atomic uint64_t n = 0;
	umt_submit_count(km, &n);
	umt_submit_count(um, &n);
	assert_int_equal(rt_queue_wait(km, 0, 5 * SEC), 0);
	assert_int_equal(rt_queue_wait(um, 0, 5 * SEC), 0);
	/* a buffer no queue may run: refused before anything is queued */
	struct hw_cmd bad = { .op = HW_CMD_SIGNAL };
	assert_int_equal(rt_queue_submit(km, &bad, 1, NULL), -EINVAL);
	assert_int_equal(rt_queue_submit(um, &bad, 1, NULL), -EINVAL);
	/* the OS terminated the device under the runtime: both kinds fail */
	os_device_terminate(rt_device_os(t.d));
	struct hw_cmd c = { .op = HW_CMD_COUNT, .stamp = &n };
	uint64_t v = 77;
	assert_int_equal(rt_queue_submit(km, &c, 1, &v), -ENODEV);
	assert_int_equal(rt_queue_submit(um, &c, 1, &v), -ENODEV);
	assert_int_equal(v, 77);
	assert_int_equal(rt_queue_submitted(km), 1);
	assert_int_equal(rt_queue_submitted(um), 1);
	assert_int_equal(atomic_load(&n), 2);
	umt_down(&t);
}

/* Normal teardown right after the last wait, again and again: an interrupt
 * still queued for a progress fence the device destroys is the OS's to
 * retire, never a bug check (umt_down asserts 0). */
static void device_destroy_after_last_wait_never_bugchecks(void **state)
{
	struct umt t = umt_up(2, HW_DOORBELL_DEDICATED, 4, 0);
	for (int i = 0; i < 30; i++) {
		struct rt_device *d = t.d;
		if (i && rt_device_create(t.u, &d))
			fail_msg("rt_device_create");
		struct rt_queue_desc kd = { .engine = (unsigned)i % 2 }, ud = { .engine = (unsigned)i % 2, .user_mode = true };
		struct rt_queue *km, *um;
		assert_int_equal(rt_queue_create(d, &kd, &km), 0);
		assert_int_equal(rt_queue_create(d, &ud, &um), 0);
		_Atomic uint64_t n = 0;
		umt_submit_count(km, &n);
		umt_submit_count(um, &n);
		assert_int_equal(rt_queue_wait(km, 0, 5 * SEC), 0);
		assert_int_equal(rt_queue_wait(um, 0, 5 * SEC), 0);
		assert_int_equal(rt_device_destroy(d), 0);
	}
	t.d = NULL;
	umt_down(&t);
}

FB_TEST_MAIN(cmocka_unit_test(failed_submit_advances_nothing),
	     cmocka_unit_test(device_destroy_after_last_wait_never_bugchecks),
	     cmocka_unit_test(um_flag_refused_on_node_without_support),
	     cmocka_unit_test(um_and_km_queues_share_an_engine),
	     cmocka_unit_test(km_scheduler_holds_legacy_waits),
	     cmocka_unit_test(scheduler_cpu_time_is_its_own_clock),
	     cmocka_unit_test(global_doorbell_several_queues),
	     cmocka_unit_test(global_doorbell_collision_polls_all),
	     cmocka_unit_test(notify_work_submission_when_asked),
	     cmocka_unit_test(umd_fast_path_kmd_not_involved_no_os_call_per_submission),
	     cmocka_unit_test(abort_falls_back_to_kernel_mode),
	     cmocka_unit_test(abort_after_visible_runs_once),
	     cmocka_unit_test(broken_ring_before_visible_is_caught),
	     cmocka_unit_test(broken_last_queued_late_is_caught),
	     cmocka_unit_test(short_buffers_inline_long_ones_indirect))
