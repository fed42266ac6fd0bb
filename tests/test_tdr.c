/* tests/test_tdr.c — timeout detection and recovery (seed gpu-preemption),
 * with TdrDelay at 50 ms.  A hang is a WORK that never ends on an engine
 * that cannot stop inside it (granularity NONE); a long WORK on an engine
 * that can is preempted, never reset.  Every wait has a deadline. */
#include "tests/fb_test.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "tests/umd_test_util.h"

#define TT_DELAY_NS 50000000ll   /* the grace a preemptible engine gets: wide, so load never makes it a reset */
#define TT_DEADLINE_NS 10000000000ll

/* One engine; TdrDelay delay_ns; the engine's F1 timeout f1_ns (0: the default). */
static struct umt tt_up_full(enum hw_gfx_preempt g, enum os_tdr_fault fault, uint32_t limit, bool wait_unpreemptible,
			     int64_t delay_ns, uint64_t f1_ns)
{
	struct os_config cfg;
	umt_config(&cfg, 1, HW_DOORBELL_DEDICATED, 0, f1_ns);
	cfg.caps.gfx_preempt = g;
	cfg.caps.wait_unpreemptible = wait_unpreemptible;
	struct os_ums_config u;
	os_ums_config_default(&u);
	u.drain_timeout_ns = 5000000000ll;
	u.tdr_delay_ns = delay_ns;
	u.tdr_fault = fault;
	if (limit)
		u.tdr_limit_count = limit;
	return umt_up_with(&cfg, &u);
}

static struct umt tt_up_waits(enum hw_gfx_preempt g, enum os_tdr_fault fault, uint32_t limit, bool wait_unpreemptible)
{
	return tt_up_full(g, fault, limit, wait_unpreemptible, TT_DELAY_NS, 0);
}

static struct umt tt_up(enum hw_gfx_preempt g, enum os_tdr_fault fault, uint32_t limit)
{
	return tt_up_waits(g, fault, limit, false);
}

static struct rt_queue *tt_queue(struct rt_device *d, bool um)
{
	struct rt_queue_desc desc = { .engine = 0, .user_mode = um };
	struct rt_queue *q;
	assert_int_equal(rt_queue_create(d, &desc, &q), 0);
	return q;
}

struct tt_waiter {
	pthread_t th;
	struct rt_fence *f;
	struct rt_queue *q;
	uint64_t v;
	int rc;
	struct os_ums *lock_of;          /* set: a device created and destroyed (the OS's lock, twice) */
};

static void *tt_waiter_main(void *arg)
{
	struct tt_waiter *w = arg;
	if (w->lock_of) {
		struct rt_device *n;
		w->rc = rt_device_create(w->lock_of, &n);
		if (!w->rc)
			w->rc = rt_device_destroy(n);
		return NULL;
	}
	w->rc = w->f ? rt_fence_wait(w->f, w->v, TT_DEADLINE_NS) : rt_queue_wait(w->q, w->v, TT_DEADLINE_NS);
	return NULL;
}

/* Every DxgkDdiResetEngine came after a DxgkDdiPreemptCommand for that engine. */
static bool tt_preempt_before_every_reset(struct os_adapter *a)
{
	struct os_ddi_call log[OS_DDI_LOG_MAX];
	size_t n = os_adapter_ddi_log(a, log, OS_DDI_LOG_MAX);
	bool asked = false;
	for (size_t i = 0; i < n; i++) {
		if (log[i].ddi == OS_DDI_PREEMPT_COMMAND && log[i].value == (uint64_t)HW_PRIORITY_PREEMPT_ALL)
			asked = true;
		if (log[i].ddi == OS_DDI_RESET_ENGINE && log[i].value) {
			if (!asked)
				return false;
			asked = false;
		}
	}
	return true;
}

/* A hangs the engine; B (another process) has work queued behind it. */
static void hung_engine_reset_guilty_lost_innocent_kept(void **state)
{
	for (int um = 0; um < 2; um++) {
		struct umt t = tt_up(HW_GFX_PREEMPT_NONE, OS_TDR_FAULT_NONE, 0);
		struct rt_device *b;
		assert_int_equal(rt_device_create(t.u, &b), 0);
		struct rt_fence *fa;
		assert_int_equal(rt_fence_create(t.d, 0, &fa), 0);
		struct rt_queue *qa = tt_queue(t.d, um), *qb = tt_queue(b, um);
		_Atomic uint64_t bc = 0;

		struct hw_cmd hang[2] = { { .op = HW_CMD_WORK, .arg = UINT64_MAX }, rt_cmd_signal(fa, 1) };
		uint64_t va;
		assert_int_equal(rt_queue_submit(qa, hang, 2, &va), 0);
		struct tt_waiter wf = { .f = fa, .v = 1 }, wq = { .q = qa, .v = va };
		pthread_create(&wf.th, NULL, tt_waiter_main, &wf);
		pthread_create(&wq.th, NULL, tt_waiter_main, &wq);
		uint64_t vb = 0;
		for (int i = 0; i < 8; i++)
			vb = umt_submit_count(qb, &bc);

		pthread_join(wf.th, NULL);
		pthread_join(wq.th, NULL);
		assert_int_equal(wf.rc, -EIO);                 /* released, with device lost */
		assert_int_equal(wq.rc, -EIO);
		assert_true(rt_device_removed(t.d));
		if (um)
			assert_int_equal(os_doorbell_status(rt_queue_os(qa)), OS_DOORBELL_DISCONNECTED_ABORT);
		struct rt_queue *again;
		struct rt_queue_desc desc = { .engine = 0, .user_mode = um };
		assert_int_equal(rt_queue_create(t.d, &desc, &again), -ENODEV);   /* re-create on a new device */

		assert_int_equal(rt_queue_wait(qb, vb, TT_DEADLINE_NS), 0);
		assert_int_equal(atomic_load(&bc), 8);         /* innocent work lost: 0 */
		assert_false(rt_device_removed(b));

		struct os_ums_stats s = umt_stats(&t);
		assert_int_equal(s.tdr_resets, 1);
		assert_int_equal(s.tdr_guilty, 1);
		assert_true(s.tdr_preempt_requests >= 1);
		assert_int_equal(s.tdr_bugchecks, 0);
		assert_true(tt_preempt_before_every_reset(t.a));

		struct rt_device *c;                            /* the process starts over */
		assert_int_equal(rt_device_create(t.u, &c), 0);
		_Atomic uint64_t cc = 0;
		struct rt_queue *qc = tt_queue(c, um);
		assert_int_equal(rt_queue_wait(qc, umt_submit_count(qc, &cc), TT_DEADLINE_NS), 0);
		assert_int_equal(atomic_load(&cc), 1);
		assert_int_equal(rt_device_destroy(c), 0);
		assert_int_equal(rt_device_destroy(b), 0);
		umt_down(&t);
	}
}

/* The wait that never preempts: A's queue waits on a fence nobody signals,
 * on an engine whose waits cannot be switched out (the granularity is fine:
 * TRIANGLE); B (another process) has work queued behind it.  With waits
 * that can be switched out, A's wait leaves the engine and nothing is reset. */
struct tt_wait {
	int rc_fence, rc_queue;
	uint64_t resets, guilty, counted_b, counted_a;
	bool removed_a, removed_b, ordered;
};

static void tt_wait_run(bool um, bool unpreemptible, struct tt_wait *r)
{
	struct umt t = tt_up_waits(HW_GFX_PREEMPT_TRIANGLE_BOUNDARY, OS_TDR_FAULT_NONE, 0, unpreemptible);
	struct rt_device *b;
	assert_int_equal(rt_device_create(t.u, &b), 0);
	struct rt_fence *fw, *fa;
	assert_int_equal(rt_fence_create(t.d, 0, &fw), 0);
	assert_int_equal(rt_fence_create(t.d, 0, &fa), 0);
	struct rt_queue *qa = tt_queue(t.d, um), *qb = tt_queue(b, um);
	_Atomic uint64_t ac = 0, bc = 0;
	struct hw_cmd cmds[3] = { rt_cmd_wait(fw, 1), { .op = HW_CMD_COUNT, .stamp = &ac }, rt_cmd_signal(fa, 1) };
	uint64_t va;
	assert_int_equal(rt_queue_submit(qa, cmds, 3, &va), 0);
	struct tt_waiter wf = { .f = fa, .v = 1 }, wq = { .q = qa, .v = va };
	pthread_create(&wf.th, NULL, tt_waiter_main, &wf);
	pthread_create(&wq.th, NULL, tt_waiter_main, &wq);
	uint64_t vb = 0;
	for (int i = 0; i < 8; i++)
		vb = umt_submit_count(qb, &bc);
	assert_int_equal(rt_queue_wait(qb, vb, TT_DEADLINE_NS), 0);
	if (!unpreemptible) {
		/* switched out: B ran past it; now let A's wait hold */
		struct timespec d = { 0, 4 * TT_DELAY_NS };
		nanosleep(&d, NULL);
		assert_int_equal(rt_fence_signal(fw, 1), 0);
	}
	pthread_join(wf.th, NULL);
	pthread_join(wq.th, NULL);
	r->rc_fence = wf.rc;
	r->rc_queue = wq.rc;
	r->counted_a = atomic_load(&ac);
	r->counted_b = atomic_load(&bc);
	r->removed_a = rt_device_removed(t.d);
	r->removed_b = rt_device_removed(b);
	struct os_ums_stats s = umt_stats(&t);
	r->resets = s.tdr_resets;
	r->guilty = s.tdr_guilty;
	r->ordered = tt_preempt_before_every_reset(t.a);
	assert_int_equal(rt_device_destroy(b), 0);
	umt_down(&t);
}

static void wait_that_never_preempts_is_reset_innocent_resumes(void **state)
{
	for (int um = 0; um < 2; um++) {
		struct tt_wait r;
		tt_wait_run(um, true, &r);
		assert_int_equal(r.rc_fence, -EIO);          /* every waiter released, device lost */
		assert_int_equal(r.rc_queue, -EIO);
		assert_true(r.removed_a);
		assert_int_equal(r.counted_a, 0);
		assert_int_equal(r.resets, 1);
		assert_int_equal(r.guilty, 1);
		assert_true(r.ordered);                      /* the preemption request came first */
		assert_int_equal(r.counted_b, 8);            /* innocent work lost: 0 */
		assert_false(r.removed_b);
	}
}

static void switchable_wait_is_not_reset(void **state)
{
	for (int um = 0; um < 2; um++) {
		struct tt_wait r;
		tt_wait_run(um, false, &r);
		assert_int_equal(r.rc_fence, 0);
		assert_int_equal(r.rc_queue, 0);
		assert_int_equal(r.counted_a, 1);            /* resumed, the wait still in force, once */
		assert_int_equal(r.resets, 0);
		assert_false(r.removed_a);
		assert_int_equal(r.counted_b, 8);
	}
}

struct tt_long {
	uint64_t resets, preempted, count;
	bool removed, ordered;
};

/* A 300 ms WORK on an engine that preempts between triangles. */
static void tt_long_work(enum os_tdr_fault fault, struct tt_long *r)
{
	struct umt t = tt_up(HW_GFX_PREEMPT_TRIANGLE_BOUNDARY, fault, 0);
	struct rt_queue *q = tt_queue(t.d, false);
	_Atomic uint64_t n = 0;
	struct hw_cmd c[2] = { { .op = HW_CMD_WORK, .arg = 300000000, .value = 256 },
			       { .op = HW_CMD_COUNT, .stamp = &n } };
	uint64_t v;
	assert_int_equal(rt_queue_submit(q, c, 2, &v), 0);
	int rc = rt_queue_wait(q, v, TT_DEADLINE_NS);
	assert_true(rc == 0 || rc == -EIO);
	struct os_ums_stats s = umt_stats(&t);
	r->resets = s.tdr_resets;
	r->preempted = s.tdr_preempted;
	r->count = atomic_load(&n);
	r->removed = rt_device_removed(t.d);
	r->ordered = tt_preempt_before_every_reset(t.a);
	umt_down(&t);
}

static void preemptible_long_work_is_preempted_not_reset(void **state)
{
	struct tt_long r;
	tt_long_work(OS_TDR_FAULT_NONE, &r);
	assert_true(r.preempted >= 1);
	assert_int_equal(r.resets, 0);
	assert_false(r.removed);
	assert_int_equal(r.count, 1);
	assert_true(r.ordered);
}

static void broken_tdr_without_preemption_request_is_caught(void **state)
{
	struct tt_long r;
	tt_long_work(OS_TDR_FAULT_NO_PREEMPT, &r);
	/* what the test above asserts fails: reset, device lost, work gone */
	assert_true(r.resets >= 1);
	assert_true(r.removed);
	assert_int_equal(r.count, 0);
	assert_false(r.ordered);
}

/* TdrLimitCount = 2: the second hang is a bug check; nothing hangs. */
static void repeated_tdrs_end_in_a_bug_check(void **state)
{
	struct umt t = tt_up(HW_GFX_PREEMPT_NONE, OS_TDR_FAULT_NONE, 2);
	struct rt_device *d2, *d3;
	assert_int_equal(rt_device_create(t.u, &d2), 0);
	assert_int_equal(rt_device_create(t.u, &d3), 0);
	struct rt_queue *q3 = tt_queue(d3, false);
	struct rt_device *hung[2] = { t.d, d2 };
	for (int i = 0; i < 2; i++) {
		struct rt_queue *q = tt_queue(hung[i], false);
		struct hw_cmd c = { .op = HW_CMD_WORK, .arg = UINT64_MAX };
		uint64_t v;
		assert_int_equal(rt_queue_submit(q, &c, 1, &v), 0);
		assert_int_equal(rt_queue_wait(q, v, TT_DEADLINE_NS), -EIO);
	}
	/* the second guilty device's waiter is released before the watchdog
	 * has finished the bug check: wait for the count, which comes last */
	assert_true(fbt_eventually(umt_stats(&t).tdr_bugchecks == 1));
	struct os_ums_stats s = umt_stats(&t);
	assert_int_equal(s.tdr_resets, 2);
	assert_int_equal(s.tdr_bugchecks, 1);
	assert_true(os_ums_bugchecked(t.u));
	assert_true(rt_device_removed(d3));             /* every device is lost */
	assert_int_equal(rt_queue_wait(q3, 0, TT_DEADLINE_NS), -EIO);
	struct rt_device *d4;
	assert_int_equal(rt_device_create(t.u, &d4), -ENODEV);
	rt_device_destroy(d2);
	rt_device_destroy(d3);
	umt_down(&t);
}

/* ---- Active -> Hung (seed user-mode-work-submission, "Engine F-state transitions") ----
 *
 * "KMD uses this interrupt to notify Dxgkrnl of engine state transitions
 * that require a GPU power action or timeout recovery such as Active ->
 * TransitionToF1 and Active -> Hung."  TdrDelay is 30 s here, longer than
 * any deadline of these tests: what recovers the engine within them is the
 * report, never the watchdog's own look. */
#define TT_HUNG_DELAY_NS 30000000000ll

struct tt_hung {
	struct umt t;
	struct rt_device *b;
	struct rt_queue *qa, *qb;
	struct rt_fence *fa;
	struct tt_waiter w;
	_Atomic uint64_t bc;
	uint64_t vb;
};

/* A hangs engine 0 (a WORK that never ends, granularity NONE) with a waiter
 * on its fence; B (another process) has 8 buffers queued behind it; the
 * engine is inside A's queue when this returns.  The engine's own F1
 * timeout is 60 s: every TransitionToF1 a test sees is a report read wrong. */
static void tt_hung_up(struct tt_hung *h, bool um, enum os_tdr_fault fault)
{
	h->t = tt_up_full(HW_GFX_PREEMPT_NONE, fault, 0, false, TT_HUNG_DELAY_NS, 60000000000ull);
	assert_int_equal(rt_device_create(h->t.u, &h->b), 0);
	assert_int_equal(rt_fence_create(h->t.d, 0, &h->fa), 0);
	h->qa = tt_queue(h->t.d, um);
	h->qb = tt_queue(h->b, um);
	atomic_store(&h->bc, 0);
	struct hw_cmd hang[2] = { { .op = HW_CMD_WORK, .arg = UINT64_MAX }, rt_cmd_signal(h->fa, 1) };
	assert_int_equal(rt_queue_submit(h->qa, hang, 2, NULL), 0);
	h->w = (struct tt_waiter){ .f = h->fa, .v = 1 };
	pthread_create(&h->w.th, NULL, tt_waiter_main, &h->w);
	for (int i = 0; i < 8; i++)
		h->vb = umt_submit_count(h->qb, &h->bc);
	assert_true(fbt_eventually(hw_engine_running(os_adapter_hw(h->t.a), 0) != NULL));
}

static void engine_state_change_active_to_hung_starts_timeout_recovery(void **state)
{
	for (int um = 0; um < 2; um++) {
		struct tt_hung h;
		tt_hung_up(&h, um, OS_TDR_FAULT_NONE);
		assert_int_equal(os_ums_engine_hung(h.t.u, 1), -EINVAL);   /* one engine */
		assert_int_equal(os_ums_engine_hung(h.t.u, 0), 0);          /* the KMD: NewState Hung */
		pthread_join(h.w.th, NULL);
		assert_int_equal(h.w.rc, -EIO);                 /* released within the deadline, < TdrDelay */
		assert_true(rt_device_removed(h.t.d));          /* guilty */
		assert_int_equal(rt_queue_wait(h.qb, h.vb, TT_DEADLINE_NS), 0);
		assert_int_equal(atomic_load(&h.bc), 8);        /* innocent work kept */
		assert_false(rt_device_removed(h.b));
		struct os_ums_stats s = umt_stats(&h.t);
		assert_int_equal(s.hung_reports, 1);
		assert_int_equal(s.tdr_hung, 1);
		assert_int_equal(s.tdr_timeouts, 0);            /* not the watchdog's own finding */
		assert_int_equal(s.f1_requests, 0);             /* NewState told apart from TransitionToF1 */
		assert_int_equal(s.tdr_resets, 1);
		assert_int_equal(s.tdr_guilty, 1);
		assert_true(s.tdr_preempt_requests >= 1);
		assert_true(tt_preempt_before_every_reset(h.t.a));   /* the preemption request still first */
		assert_int_equal(rt_device_destroy(h.b), 0);
		umt_down(&h.t);
	}
}

/* With NewState ignored (every engine-state change read as TransitionToF1),
 * the report is handled as a power request and nothing recovers the engine:
 * what the test above asserts fails.  The test then resets the engine
 * itself, as the watchdog would have, to tear down. */
static void broken_hung_read_as_f1_is_caught(void **state)
{
	struct tt_hung h;
	tt_hung_up(&h, true, OS_TDR_FAULT_HUNG_AS_F1);
	assert_int_equal(os_ums_engine_hung(h.t.u, 0), 0);
	assert_true(fbt_eventually(umt_stats(&h.t).f1_requests == 1));   /* taken, as an F1 request */
	struct os_ums_stats s = umt_stats(&h.t);
	assert_int_equal(s.hung_reports, 0);
	assert_int_equal(s.tdr_hung, 0);
	assert_int_equal(s.tdr_resets, 0);
	assert_false(rt_device_removed(h.t.d));
	assert_int_equal(rt_fence_completed(h.fa), 0);  /* the waiter still waits */
	struct hw_adapter *hw = os_adapter_hw(h.t.a);
	assert_int_equal(hw_engine_reset(hw, 0, hw_engine_running(hw, 0), TT_DEADLINE_NS), 0);
	rt_device_terminate(h.t.d);
	pthread_join(h.w.th, NULL);
	assert_int_equal(h.w.rc, -EIO);
	assert_int_equal(rt_queue_wait(h.qb, h.vb, TT_DEADLINE_NS), 0);
	assert_int_equal(rt_device_destroy(h.b), 0);
	umt_down(&h.t);
}

/* ---- several engines hung at once ----
 *
 * Terminating a guilty device waits, under the OS's lock, for each engine
 * to leave the device's queues and to see them retired.  Engine 1 hung
 * (the guilty device's own queue there, or another device's while the guilty
 * one has an idle queue there) holds that wait: only the watchdog can reset
 * engine 1, and it is the thread that waits.  Engine 0 is reported hung, so
 * the watchdog takes it first; engine 1 has been hung a little longer, but
 * less than TdrDelay.  Every wait of the test has a deadline: a watchdog
 * that blocks itself fails it there. */
#define TT_MULTI_DELAY_NS 500000000ll

static _Atomic unsigned tt_engine_waits[HW_MAX_ENGINES];

static void tt_count_engine_wait(unsigned e)
{
	atomic_fetch_add(&tt_engine_waits[e], 1);
}

struct tt_multi {
	struct umt t;
	struct rt_device *b, *c;              /* b: innocent on both engines; c: hangs engine 1 (other) */
	struct rt_queue *qb[2];
	_Atomic uint64_t bc;
	uint64_t vb[2];
	struct tt_waiter wa, wc;
};

static void tt_hang(struct rt_queue *q, struct rt_fence *f)
{
	struct hw_cmd hang[2] = { { .op = HW_CMD_WORK, .arg = UINT64_MAX }, rt_cmd_signal(f, 1) };
	assert_int_equal(rt_queue_submit(q, hang, 2, NULL), 0);
}

static void tt_wait_start(struct tt_waiter *w, struct rt_fence *f)
{
	*w = (struct tt_waiter){ .f = f, .v = 1 };
	pthread_create(&w->th, NULL, tt_waiter_main, w);
}

/* Engine 1 hung by A itself (other = false) or by C while A has an idle
 * queue there; then A hangs engine 0, the KMD reports engine 0 hung. */
static void tt_multi_run(struct tt_multi *m, bool um, bool other, enum os_tdr_fault fault)
{
	memset(tt_engine_waits, 0, sizeof(tt_engine_waits));
	os_test_tdr_wait_hook = tt_count_engine_wait;
	struct os_config cfg;
	umt_config(&cfg, 2, HW_DOORBELL_DEDICATED, 0, 60000000000ull);
	cfg.caps.gfx_preempt = HW_GFX_PREEMPT_NONE;
	struct os_ums_config u;
	os_ums_config_default(&u);
	u.drain_timeout_ns = 5000000000ll;
	u.tdr_delay_ns = TT_MULTI_DELAY_NS;
	u.tdr_fault = fault;
	m->t = umt_up_with(&cfg, &u);
	struct hw_adapter *hw = os_adapter_hw(m->t.a);
	assert_int_equal(rt_device_create(m->t.u, &m->b), 0);
	atomic_store(&m->bc, 0);
	struct rt_fence *fa, *fc;
	assert_int_equal(rt_fence_create(m->t.d, 0, &fa), 0);
	struct rt_queue *qa0 = umt_queue(&m->t, 0, um), *qa1 = umt_queue(&m->t, 1, um);
	_Atomic uint64_t ac = 0;
	assert_int_equal(rt_queue_wait(qa1, umt_submit_count(qa1, &ac), TT_DEADLINE_NS), 0);   /* idle there now */
	m->c = NULL;
	m->wc.th = 0;
	if (other) {
		assert_int_equal(rt_device_create(m->t.u, &m->c), 0);
		assert_int_equal(rt_fence_create(m->c, 0, &fc), 0);
		struct rt_queue_desc d1 = { .engine = 1, .user_mode = um };
		struct rt_queue *qc;
		assert_int_equal(rt_queue_create(m->c, &d1, &qc), 0);
		tt_hang(qc, fc);
		tt_wait_start(&m->wc, fc);
	} else {
		struct rt_fence *f1;
		assert_int_equal(rt_fence_create(m->t.d, 0, &f1), 0);
		tt_hang(qa1, f1);
	}
	assert_true(fbt_eventually(hw_engine_running(hw, 1) != NULL));
	tt_hang(qa0, fa);
	tt_wait_start(&m->wa, fa);
	for (unsigned e = 0; e < 2; e++) {
		struct rt_queue_desc de = { .engine = e, .user_mode = um };
		assert_int_equal(rt_queue_create(m->b, &de, &m->qb[e]), 0);
		for (int i = 0; i < 4; i++)
			m->vb[e] = umt_submit_count(m->qb[e], &m->bc);
	}
	assert_true(fbt_eventually(hw_engine_running(hw, 0) != NULL));
	assert_int_equal(os_ums_engine_hung(m->t.u, 0), 0);
}

/* Join w within the deadline, or fail: a watchdog that blocked itself holds
 * the OS's lock, and a waiter can block on it beyond its own deadline. */
static void tt_join(struct tt_waiter *w)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += TT_DEADLINE_NS / 1000000000ll + 1;
	if (pthread_timedjoin_np(w->th, NULL, &ts))
		fail_msg("a waiter (or a call needing the OS's lock) not back within %lld s: the watchdog is blocked",
			 TT_DEADLINE_NS / 1000000000ll + 1);
}

static void tt_multi_check(struct tt_multi *m, bool other)
{
	tt_join(&m->wa);
	assert_int_equal(m->wa.rc, -EIO);               /* released within the deadline: the watchdog went on */
	if (other) {
		tt_join(&m->wc);
		assert_int_equal(m->wc.rc, -EIO);       /* C is guilty too: it hung engine 1 */
	}
	struct tt_waiter l = { .lock_of = m->t.u };     /* a call that needs the OS's lock returns */
	pthread_create(&l.th, NULL, tt_waiter_main, &l);
	tt_join(&l);
	assert_int_equal(l.rc, 0);
	for (unsigned e = 0; e < 2; e++)
		assert_int_equal(rt_queue_wait(m->qb[e], m->vb[e], TT_DEADLINE_NS), 0);
	assert_int_equal(atomic_load(&m->bc), 8);       /* innocent work lost: 0 */
	assert_false(rt_device_removed(m->b));
	assert_true(rt_device_removed(m->t.d));
	struct os_ums_stats s = umt_stats(&m->t);
	assert_int_equal(s.tdr_resets, 2);              /* both engines, each once */
	assert_int_equal(s.tdr_guilty, 2);
	assert_int_equal(s.tdr_bugchecks, 0);
	assert_true(tt_preempt_before_every_reset(m->t.a));
	print_message("watchdog waits on engine 1 that outlasted a look: %u\n", atomic_load(&tt_engine_waits[1]));
	os_test_tdr_wait_hook = NULL;
	assert_int_equal(rt_device_destroy(m->b), 0);
	if (m->c)
		assert_int_equal(rt_device_destroy(m->c), 0);
	umt_down(&m->t);
}

static void guilty_device_hung_on_two_engines_is_recovered(void **state)
{
	for (int um = 0; um < 2; um++) {
		struct tt_multi m;
		tt_multi_run(&m, um, false, OS_TDR_FAULT_NONE);
		tt_multi_check(&m, false);
	}
}

static void engine_hung_by_another_device_does_not_block_termination(void **state)
{
	for (int um = 0; um < 2; um++) {
		struct tt_multi m;
		tt_multi_run(&m, um, true, OS_TDR_FAULT_NONE);
		tt_multi_check(&m, true);
	}
}

/* With the watchdog waiting on engine 1 without looking at it (the old
 * wait), what the tests above assert fails: the guilty device's waiter is
 * not released, the watchdog holds the OS's lock.  The test then resets
 * engine 1 itself, as the watchdog would have, to tear down. */
static void broken_unwatched_wait_is_caught(void **state)
{
	struct tt_multi m;
	tt_multi_run(&m, false, false, OS_TDR_FAULT_WAIT_UNWATCHED);
	assert_true(fbt_eventually(atomic_load(&tt_engine_waits[1]) >= 1));   /* it waits on engine 1 */
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 4 * TT_MULTI_DELAY_NS / 1000000000ll + 1;   /* the fixed watchdog is done by 3 x TdrDelay */
	assert_int_equal(pthread_timedjoin_np(m.wa.th, NULL, &ts), ETIMEDOUT);
	struct hw_adapter *hw = os_adapter_hw(m.t.a);
	assert_int_equal(hw_engine_reset(hw, 1, hw_engine_running(hw, 1), TT_DEADLINE_NS), 0);
	tt_join(&m.wa);
	assert_int_equal(m.wa.rc, -EIO);
	os_test_tdr_wait_hook = NULL;
	for (unsigned e = 0; e < 2; e++)
		assert_int_equal(rt_queue_wait(m.qb[e], m.vb[e], TT_DEADLINE_NS), 0);
	assert_int_equal(rt_device_destroy(m.b), 0);
	umt_down(&m.t);
}

/* A thread holds the OS's lock and the video memory manager's while it
 * waits (up to 10 s, then lf_die) for a paging buffer behind engine 0, hung
 * by C; engine 1, hung by A 300 ms earlier, is reset first, and the
 * watchdog then needs the OS's lock to terminate A.  It must look at the
 * engines while it waits for that lock: engine 0 reaches TdrDelay and is
 * reset, the paging buffer runs, the lock comes free.  A watchdog that
 * waits for the lock blindly ends the run in lf_die. */
struct tt_create {
	pthread_t th;
	struct rt_device *d;
	int rc;
};

static void *tt_create_main(void *arg)
{
	struct tt_create *c = arg;
	struct rt_queue_desc d1 = { .engine = 1 };
	struct rt_queue *q;
	c->rc = rt_queue_create(c->d, &d1, &q);   /* InitContextResource: a paging buffer on engine 0 */
	return NULL;
}

static void watchdog_looks_while_it_waits_for_a_paging_lock_holder(void **state)
{
	struct os_config cfg;
	umt_config(&cfg, 2, HW_DOORBELL_DEDICATED, 0, 60000000000ull);
	cfg.caps.gfx_preempt = HW_GFX_PREEMPT_NONE;
	cfg.caps.ctx_local_slots = 8;
	struct os_ums_config u;
	os_ums_config_default(&u);
	u.drain_timeout_ns = 5000000000ll;
	u.tdr_delay_ns = TT_MULTI_DELAY_NS;
	struct umt t = umt_up_with(&cfg, &u);
	struct hw_adapter *hw = os_adapter_hw(t.a);
	struct rt_device *b, *c;
	assert_int_equal(rt_device_create(t.u, &b), 0);
	assert_int_equal(rt_device_create(t.u, &c), 0);
	struct rt_fence *fa, *fc;
	assert_int_equal(rt_fence_create(t.d, 0, &fa), 0);
	assert_int_equal(rt_fence_create(c, 0, &fc), 0);
	struct rt_queue *qa = umt_queue(&t, 1, false), *qc;
	struct rt_queue_desc d0 = { .engine = 0 };
	assert_int_equal(rt_queue_create(c, &d0, &qc), 0);
	struct tt_waiter wa, wc;
	tt_hang(qa, fa);
	tt_wait_start(&wa, fa);
	assert_true(fbt_eventually(hw_engine_running(hw, 1) != NULL));
	struct timespec lead = { 0, 300000000 };        /* engine 1 reaches TdrDelay a look or two first */
	nanosleep(&lead, NULL);
	tt_hang(qc, fc);
	tt_wait_start(&wc, fc);
	assert_true(fbt_eventually(hw_engine_running(hw, 0) != NULL));
	struct tt_create cr = { .d = b };
	pthread_create(&cr.th, NULL, tt_create_main, &cr);
	tt_join(&wa);
	assert_int_equal(wa.rc, -EIO);
	tt_join(&wc);
	assert_int_equal(wc.rc, -EIO);
	pthread_join(cr.th, NULL);
	assert_int_equal(cr.rc, 0);                     /* the paging buffer ran once engine 0 was reset */
	assert_false(rt_device_removed(b));
	struct os_ums_stats s = umt_stats(&t);
	assert_int_equal(s.tdr_resets, 2);
	assert_int_equal(s.tdr_guilty, 2);
	assert_int_equal(rt_device_destroy(b), 0);
	assert_int_equal(rt_device_destroy(c), 0);
	umt_down(&t);
}

/* The scheduler thread holds a popped kernel-mode submission of A's queue
 * and, inside that hold, waits for engine 0 (as it would for a paging
 * buffer there), which C hung from a user-mode queue; engine 1, hung by A
 * 300 ms earlier, is reset
 * first and the watchdog terminates A, which waits, under the OS's lock,
 * for the scheduler to let go.  Only the watchdog can reset engine 0: it
 * must look at the engines during that wait.  A blind wait leaves the
 * scheduler's hold to its own bound (5 s here, then it gives up and says
 * so); the run would otherwise end in lf_die after 10 s. */
static struct os_hwqueue *_Atomic tt_hold_q;
static struct hw_adapter *tt_hold_hw;
static _Atomic bool tt_hold_gave_up, tt_hold_held;

static void tt_hold_until_engine0_free(struct os_hwqueue *q)
{
	struct os_hwqueue *want = q;
	if (!atomic_compare_exchange_strong(&tt_hold_q, &want, NULL))
		return;                                 /* not the armed queue, or held once already */
	atomic_store(&tt_hold_held, true);
	uint64_t end = lf_now_ns() + 5000000000ull;
	struct timespec ts = { 0, 1000000 };
	struct hw_engine_preempt_stats ps;
	do {                                            /* C hangs engine 0, the watchdog resets it */
		nanosleep(&ts, NULL);
		hw_engine_preempt_stats(tt_hold_hw, 0, &ps);
	} while (!ps.resets && lf_now_ns() < end);
	if (!ps.resets)
		atomic_store(&tt_hold_gave_up, true);
}

static void watchdog_looks_while_the_scheduler_holds_a_submission(void **state)
{
	struct os_config cfg;
	umt_config(&cfg, 2, HW_DOORBELL_DEDICATED, 4, 60000000000ull);
	cfg.caps.gfx_preempt = HW_GFX_PREEMPT_NONE;
	struct os_ums_config u;
	os_ums_config_default(&u);
	u.drain_timeout_ns = 5000000000ll;
	u.tdr_delay_ns = TT_MULTI_DELAY_NS;
	atomic_store(&tt_hold_q, NULL);
	os_test_sched_popped_hook = tt_hold_until_engine0_free;   /* before the threads start: armed later */
	struct umt t = umt_up_with(&cfg, &u);
	tt_hold_hw = os_adapter_hw(t.a);
	atomic_store(&tt_hold_gave_up, false);
	atomic_store(&tt_hold_held, false);
	struct rt_device *c;
	assert_int_equal(rt_device_create(t.u, &c), 0);
	struct rt_fence *fa, *fc;
	assert_int_equal(rt_fence_create(t.d, 0, &fa), 0);
	assert_int_equal(rt_fence_create(c, 0, &fc), 0);
	struct rt_queue *qa = umt_queue(&t, 1, false), *qc;
	/* user mode: C's hang reaches engine 0 while the scheduler is held */
	struct rt_queue_desc d0 = { .engine = 0, .user_mode = true };
	assert_int_equal(rt_queue_create(c, &d0, &qc), 0);
	struct tt_waiter wa, wc;
	tt_hang(qa, fa);
	tt_wait_start(&wa, fa);
	assert_true(fbt_eventually(hw_engine_running(tt_hold_hw, 1) != NULL));
	atomic_store(&tt_hold_q, rt_queue_os(qa));   /* armed: the next submission of qa the scheduler pops */
	struct hw_cmd more = rt_cmd_signal(fa, 2);
	assert_int_equal(rt_queue_submit(qa, &more, 1, NULL), 0);
	assert_true(fbt_eventually(atomic_load(&tt_hold_held)));   /* the scheduler holds it */
	struct timespec lead = { 0, 300000000 };        /* engine 1 reaches TdrDelay a look or two first */
	nanosleep(&lead, NULL);
	tt_hang(qc, fc);
	tt_wait_start(&wc, fc);
	tt_join(&wa);
	tt_join(&wc);
	assert_false(atomic_load(&tt_hold_gave_up));   /* engine 0 was reset while A's termination waited */
	assert_int_equal(wa.rc, -EIO);
	assert_int_equal(wc.rc, -EIO);
	struct os_ums_stats s = umt_stats(&t);
	assert_int_equal(s.tdr_resets, 2);
	rt_device_destroy(c);
	umt_down(&t);
	os_test_sched_popped_hook = NULL;            /* after the threads stopped */
}

/* A TDR ends the device under a process that still holds the CPU VA of a
 * ring allocation (D3DKMTLock2's) no doorbell bound yet: the memory stays
 * until the application destroys the allocation (Windows keeps a removed
 * device's allocations until they are released).  On the old code the
 * writes after the TDR were a heap use after free (ASan). */
static void tdr_keeps_ring_allocation_memory_the_process_holds(void **state)
{
	struct umt t = tt_up(HW_GFX_PREEMPT_NONE, OS_TDR_FAULT_NONE, 0);
	struct os_ring_alloc *r;
	assert_int_equal(os_ring_alloc_create(rt_device_os(t.d), OS_RING_BUFFER, 64, &r), 0);
	volatile uint64_t *va = (volatile uint64_t *)os_ring_alloc_cpuva(r);
	assert_non_null(va);
	va[0] = 1;
	struct rt_queue *q = tt_queue(t.d, false);
	struct hw_cmd c = { .op = HW_CMD_WORK, .arg = UINT64_MAX };
	uint64_t v;
	assert_int_equal(rt_queue_submit(q, &c, 1, &v), 0);
	assert_int_equal(rt_queue_wait(q, v, TT_DEADLINE_NS), -EIO);   /* the TDR ended the device */
	assert_true(os_ring_alloc_destroyed(r));
	assert_null(os_ring_alloc_cpuva(r));            /* no new CPU VA */
	va[0] = 2;                                      /* the one it holds still writes */
	va[63 * sizeof(struct hw_cmd) / sizeof(uint64_t)] = 3;
	assert_int_equal(va[0], 2);
	assert_int_equal(os_ring_alloc_destroy(r), -EIDRM);   /* the application releases it */
	umt_down(&t);
}

FB_TEST_MAIN(cmocka_unit_test(hung_engine_reset_guilty_lost_innocent_kept),
	     cmocka_unit_test(preemptible_long_work_is_preempted_not_reset),
	     cmocka_unit_test(broken_tdr_without_preemption_request_is_caught),
	     cmocka_unit_test(repeated_tdrs_end_in_a_bug_check),
	     cmocka_unit_test(wait_that_never_preempts_is_reset_innocent_resumes),
	     cmocka_unit_test(switchable_wait_is_not_reset),
	     cmocka_unit_test(engine_state_change_active_to_hung_starts_timeout_recovery),
	     cmocka_unit_test(broken_hung_read_as_f1_is_caught),
	     cmocka_unit_test(watchdog_looks_while_the_scheduler_holds_a_submission),
	     cmocka_unit_test(guilty_device_hung_on_two_engines_is_recovered),
	     cmocka_unit_test(engine_hung_by_another_device_does_not_block_termination),
	     cmocka_unit_test(broken_unwatched_wait_is_caught),
	     cmocka_unit_test(watchdog_looks_while_it_waits_for_a_paging_lock_holder),
	     cmocka_unit_test(tdr_keeps_ring_allocation_memory_the_process_holds))
