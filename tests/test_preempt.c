/* tests/test_preempt.c — GPU preemption (seed gpu-preemption): priorities on
 * HW queues, preemption requests honoured at the boundary the granularity
 * allows, context save/restore, PreemptionAware = 0, a preempted HW wait.
 *
 * The shape of most tests: a low-priority queue runs a long DMA buffer (a
 * COUNT when it starts, long WORKs, a COUNT at its end) and a second one
 * behind it; once it started, a high-priority queue submits one small
 * buffer.  When the high-priority buffer has completed, where the low one
 * was tells where the engine stopped.  Each runs on kernel-mode queues (the
 * OS scheduler sends the request) and user-mode queues (the run list sees
 * the ring itself).  Orderings are asserted, never durations, and none of
 * them rests on a thread running in time: the engine is held before the low
 * buffer's last WORK until the request to leave it stands (pt_hold, through
 * hw_test_cmd_hook), however late the test thread or the OS scheduler ran,
 * and notes itself where the low queue was when the high buffer ran; where
 * it stops is its own preemption code's decision.
 */
#include "tests/fb_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/umd_test_util.h"

#define PT_WORK_NS 50000000ull     /* one WORK of the low buffer */
#define PT_DEADLINE_NS 10000000000ll

static void pt_config(struct os_config *cfg, enum hw_gfx_preempt g, bool aware, enum hw_fault fault)
{
	umt_config(cfg, 1, HW_DOORBELL_DEDICATED, 0, 0);
	cfg->caps.gfx_preempt = g;
	cfg->caps.preemption_aware = aware;
	cfg->caps.fault = fault;
	cfg->caps.ctx_save_ns = 1000;
	cfg->caps.ctx_restore_ns = 1000;
}

static struct umt pt_up(enum hw_gfx_preempt g, bool aware, enum hw_fault fault)
{
	struct os_config cfg;
	pt_config(&cfg, g, aware, fault);
	return umt_up_with(&cfg, NULL);
}

static struct rt_queue *pt_queue(struct umt *t, bool um, int32_t prio)
{
	struct rt_queue_desc desc = { .engine = 0, .user_mode = um, .priority = prio };
	struct rt_queue *q;
	int rc = rt_queue_create(t->d, &desc, &q);
	assert_int_equal(rc, 0);
	return q;
}

/* Nap i of a bounded poll: 100 us, failing the test at the 100000th (10 s). */
static void pt_poll_nap(int i)
{
	struct timespec d = { 0, 100000 };
	assert_true(i < 100000);
	nanosleep(&d, NULL);
}

static void pt_wait_count(_Atomic uint64_t *c, uint64_t v)
{
	for (int i = 0; atomic_load(c) < v; i++)
		pt_poll_nap(i);
}

/* The hold (hw_test_cmd_hook): the engine, about to begin the `at`-th WORK
 * of queue hq, waits there until a request to leave hq stands
 * (hw_queue_preempt_pending), at most PT_DEADLINE_NS (then it goes on and
 * the test fails on `held`).  So the high-priority submission exists before
 * the low work it must interrupt has run, however late the test thread (or
 * the OS scheduler handing it over) ran; the hook decides nothing about
 * where the engine stops.  And where the low queue was when the high one
 * ran is read by the engine itself, just before the high buffer's COUNT on
 * `hi` (the counts `src` into `at_hi`), not by a test thread that may read
 * it late.  Armed by the test thread for one run; the engine thread is the
 * only other one to touch it. */
struct pt_hold {
	/* written before it is published (pt_hold_now) */
	struct hw_queue *hq;
	unsigned at;
	_Atomic uint64_t *hi, *src[2];
	/* the engine thread's; relaxed: read once the high buffer's COUNT is
	 * seen (acq_rel RMW after these stores) or once the low queue is done */
	_Atomic unsigned works;    /* WORKs of hq begun */
	_Atomic int held;          /* 1: held until the request stood; -1: the bound passed */
	_Atomic uint64_t at_hi[2]; /* *src when the high buffer's COUNT ran */
};
static struct pt_hold pt_hold;
/* &pt_hold while armed; release (arm) / acquire (hook): its fields are seen written */
static _Atomic(struct pt_hold *) pt_hold_now;
/* how late the test thread submits the high-priority buffer (a starved
 * thread, on purpose: late_high_submission_still_preempts_where_the_granularity_allows) */
static uint64_t pt_late_ns;

static void pt_hold_wait(struct pt_hold *h, struct hw_queue *q)
{
	struct timespec d = { 0, 100000 };
	for (uint64_t t0 = lf_now_ns(); !hw_queue_preempt_pending(q); nanosleep(&d, NULL)) {
		if (lf_now_ns() - t0 >= (uint64_t)PT_DEADLINE_NS) {
			atomic_store_explicit(&h->held, -1, memory_order_relaxed);
			return;
		}
	}
	atomic_store_explicit(&h->held, 1, memory_order_relaxed);
}

static void pt_hold_hook(struct hw_queue *q, const struct hw_cmd *c)
{
	struct pt_hold *h = atomic_load_explicit(&pt_hold_now, memory_order_acquire);
	if (!h)
		return;
	if (c->op == HW_CMD_COUNT && c->stamp == h->hi) {
		for (int i = 0; i < 2; i++)
			if (h->src[i])
				atomic_store_explicit(&h->at_hi[i], atomic_load(h->src[i]), memory_order_relaxed);
		return;
	}
	if (q == h->hq && c->op == HW_CMD_WORK &&
	    atomic_fetch_add_explicit(&h->works, 1, memory_order_relaxed) + 1 == h->at)
		pt_hold_wait(h, q);
}

/* Installed before any engine thread exists (they read it unguarded); it
 * acts only on an armed hold. */
__attribute__((constructor)) static void pt_hold_install(void)
{
	hw_test_cmd_hook = pt_hold_hook;
}

/* Hold the engine before lo's `at`-th WORK (armed before lo's submissions);
 * record src0, src1 (may be NULL) when the COUNT on hi runs. */
static struct pt_hold *pt_hold_arm(struct rt_queue *lo, unsigned at, _Atomic uint64_t *hi, _Atomic uint64_t *src0,
				   _Atomic uint64_t *src1)
{
	struct pt_hold *h = &pt_hold;
	h->hq = os_hwqueue_hw(rt_queue_os(lo));
	h->at = at;
	h->hi = hi;
	h->src[0] = src0;
	h->src[1] = src1;
	atomic_store(&h->works, 0);
	atomic_store(&h->held, 0);
	atomic_store(&h->at_hi[0], UINT64_MAX);
	atomic_store(&h->at_hi[1], UINT64_MAX);
	atomic_store_explicit(&pt_hold_now, h, memory_order_release);
	return h;
}

/* The count src[i] had when the high buffer's COUNT ran (UINT64_MAX: it has
 * not); after that COUNT was seen done (*hi). */
static uint64_t pt_hold_at_hi(struct pt_hold *h, int i)
{
	assert_int_equal(atomic_load(h->hi), 1);   /* acquire: the hook's stores before its COUNT */
	return atomic_load_explicit(&h->at_hi[i], memory_order_relaxed);
}

/* The test thread, once the low work started: pt_late_ns late. */
static void pt_late(void)
{
	struct timespec d = { (time_t)(pt_late_ns / 1000000000u), (long)(pt_late_ns % 1000000000u) };
	if (pt_late_ns)
		nanosleep(&d, NULL);
}

/* Once every WORK of the held queue has run (it completed): disarm; the
 * hold happened, and ended because the request stood. */
static void pt_hold_done(struct pt_hold *h)
{
	atomic_store_explicit(&pt_hold_now, NULL, memory_order_relaxed);
	assert_int_equal(atomic_load(&h->held), 1);
}

struct pt_result {
	uint64_t end1_at_hi, end2_at_hi;   /* the low buffers' end counts when the high one ran (engine-noted) */
	uint64_t started, end1, end2;      /* at the end */
	struct hw_engine_preempt_stats st;
};

/* The low buffers: one WORK of `units` sub-units or `nwork` WORKs of one,
 * of kind `kind` (HW_WORK_GRAPHICS / HW_WORK_COMPUTE). */
static void pt_run_kind(struct umt *t, bool um, unsigned nwork, uint64_t units, uint32_t kind, struct pt_result *r)
{
	_Atomic uint64_t started = 0, end1 = 0, end2 = 0, hc = 0;
	struct rt_queue *lo = pt_queue(t, um, 0), *hi = pt_queue(t, um, 10);
	struct hw_cmd b1[8], b2[2];
	size_t n = 0;
	b1[n++] = (struct hw_cmd){ .op = HW_CMD_COUNT, .stamp = &started };
	for (unsigned i = 0; i < nwork; i++)
		b1[n++] = (struct hw_cmd){ .op = HW_CMD_WORK, .pad = kind, .arg = 4 * PT_WORK_NS / nwork, .value = units };
	b1[n++] = (struct hw_cmd){ .op = HW_CMD_COUNT, .stamp = &end1 };
	b2[0] = (struct hw_cmd){ .op = HW_CMD_WORK, .pad = kind, .arg = 4 * PT_WORK_NS, .value = units };
	b2[1] = (struct hw_cmd){ .op = HW_CMD_COUNT, .stamp = &end2 };
	struct pt_hold *hold = pt_hold_arm(lo, nwork, &hc, &end1, &end2);   /* before b1's last WORK */
	assert_int_equal(rt_queue_submit(lo, b1, n, NULL), 0);
	assert_int_equal(rt_queue_submit(lo, b2, 2, NULL), 0);
	pt_wait_count(&started, 1);
	pt_late();
	struct hw_cmd h = { .op = HW_CMD_COUNT, .stamp = &hc };
	uint64_t v;
	assert_int_equal(rt_queue_submit(hi, &h, 1, &v), 0);
	assert_int_equal(rt_queue_wait(hi, v, PT_DEADLINE_NS), 0);
	r->end1_at_hi = pt_hold_at_hi(hold, 0);
	r->end2_at_hi = pt_hold_at_hi(hold, 1);
	assert_int_equal(rt_queue_wait(lo, 0, PT_DEADLINE_NS), 0);
	pt_hold_done(hold);
	r->started = atomic_load(&started);
	r->end1 = atomic_load(&end1);
	r->end2 = atomic_load(&end2);
	assert_int_equal(atomic_load(&hc), 1);
	hw_engine_preempt_stats(os_adapter_hw(t->a), 0, &r->st);
}

static void pt_run(struct umt *t, bool um, unsigned nwork, uint64_t units, struct pt_result *r)
{
	pt_run_kind(t, um, nwork, units, HW_WORK_GRAPHICS, r);
}

/* Nothing of the low work lost or run twice. */
static void pt_assert_whole(const struct pt_result *r)
{
	assert_int_equal(r->started, 1);
	assert_int_equal(r->end1, 1);
	assert_int_equal(r->end2, 1);
}

/* A DMA-boundary engine: the high buffer ran after the first low buffer's
 * end, never inside it; and it did not wait for the second one. */
static bool pt_dma_respected(const struct pt_result *r)
{
	return r->end1_at_hi == 1 && r->st.mid_buffer == 0 && r->st.mid_command == 0;
}

static void dma_boundary_engine_never_stops_mid_buffer(void **state)
{
	for (int um = 0; um < 2; um++) {
		struct umt t = pt_up(HW_GFX_PREEMPT_DMA_BUFFER_BOUNDARY, true, HW_FAULT_NONE);
		struct pt_result r;
		pt_run(&t, um, 4, 64, &r);
		pt_assert_whole(&r);
		assert_true(pt_dma_respected(&r));
		assert_int_equal(r.end2_at_hi, 0);          /* it ran between the two buffers */
		/* kernel-mode: the scheduler's request preempted at the buffer's
		 * end; user-mode: the same, or the engine had not yet seen the
		 * second buffer's ring and left the queue with nothing known to run */
		if (!um)
			assert_true(r.st.at_buffer_end >= 1 && r.st.ctx_restores >= 1);
		umt_down(&t);
	}
}

static void broken_engine_ignoring_its_granularity_is_caught(void **state)
{
	struct umt t = pt_up(HW_GFX_PREEMPT_DMA_BUFFER_BOUNDARY, true, HW_FAULT_PREEMPT_ANYWHERE);
	struct pt_result r;
	pt_run(&t, false, 1, 64, &r);
	pt_assert_whole(&r);                    /* it loses nothing ... */
	assert_false(pt_dma_respected(&r));      /* ... but stopped inside the DMA buffer */
	umt_down(&t);
}

static void primitive_boundary_stops_between_commands(void **state)
{
	for (int um = 0; um < 2; um++) {
		struct umt t = pt_up(HW_GFX_PREEMPT_PRIMITIVE_BOUNDARY, true, HW_FAULT_NONE);
		struct pt_result r;
		pt_run(&t, um, 4, 64, &r);
		pt_assert_whole(&r);
		assert_int_equal(r.end1_at_hi, 0);          /* inside the first buffer */
		assert_true(r.st.mid_buffer >= 1);
		assert_int_equal(r.st.mid_command, 0);     /* never inside a WORK */
		umt_down(&t);
	}
}

/* A starved test thread: the high-priority buffer is submitted 500 ms
 * after the low work started, later than the whole first low buffer would
 * take.  The hold keeps the engine before that buffer's last WORK until the
 * request stands, so each granularity still stops where it may (without it
 * both low buffers end first). */
static void late_high_submission_still_preempts_where_the_granularity_allows(void **state)
{
	pt_late_ns = 500000000;
	for (int um = 0; um < 2; um++) {
		struct umt t = pt_up(HW_GFX_PREEMPT_DMA_BUFFER_BOUNDARY, true, HW_FAULT_NONE);
		struct pt_result r;
		pt_run(&t, um, 4, 64, &r);
		pt_assert_whole(&r);
		assert_true(pt_dma_respected(&r));
		assert_int_equal(r.end2_at_hi, 0);
		umt_down(&t);
		t = pt_up(HW_GFX_PREEMPT_PRIMITIVE_BOUNDARY, true, HW_FAULT_NONE);
		pt_run(&t, um, 4, 64, &r);
		pt_assert_whole(&r);
		assert_int_equal(r.end1_at_hi, 0);
		assert_true(r.st.mid_buffer >= 1);
		assert_int_equal(r.st.mid_command, 0);
		umt_down(&t);
	}
	pt_late_ns = 0;
}

static void triangle_boundary_stops_inside_a_command(void **state)
{
	for (int um = 0; um < 2; um++) {
		struct umt t = pt_up(HW_GFX_PREEMPT_TRIANGLE_BOUNDARY, true, HW_FAULT_NONE);
		struct pt_result r;
		pt_run(&t, um, 1, 64, &r);                  /* one 200 ms WORK of 64 triangles */
		pt_assert_whole(&r);                        /* the rest of the WORK was kept */
		assert_int_equal(r.end1_at_hi, 0);
		assert_true(r.st.mid_command >= 1);
		assert_true(r.st.ctx_saves >= 1 && r.st.ctx_restores >= 1);
		umt_down(&t);
	}
}

static void granularity_none_and_preemption_unaware_never_preempt(void **state)
{
	for (int c = 0; c < 2; c++) {
		/* NONE; or the finest granularity with PreemptionAware = 0 (Windows 7) */
		struct umt t = c == 0 ? pt_up(HW_GFX_PREEMPT_NONE, true, HW_FAULT_NONE)
				      : pt_up(HW_GFX_PREEMPT_SHADER_BOUNDARY, false, HW_FAULT_NONE);
		struct pt_result r;
		pt_run(&t, c == 1, 1, 64, &r);
		pt_assert_whole(&r);
		assert_int_equal(r.end1_at_hi, 1);          /* the long command ran to its end */
		assert_int_equal(r.st.preemptions, 0);
		umt_down(&t);
	}
}

/* Seed: "it must support the ability to preempt a wait instruction before
 * the wait condition is satisfied".  The low queue blocks in a HW WAIT; the
 * high queue runs meanwhile; the wait is still in force afterwards and,
 * once signaled, the low buffer completes exactly once. */
static void preempted_hw_wait_resumes_and_completes_once(void **state)
{
	for (int um = 0; um < 2; um++) {
		struct umt t = pt_up(HW_GFX_PREEMPT_TRIANGLE_BOUNDARY, true, HW_FAULT_NONE);
		if (!os_adapter_native(t.a)) {
			umt_down(&t);
			fb_skip("no native fences: GPU waits are held by the OS");
		}
		struct rt_fence *f;
		assert_int_equal(rt_fence_create(t.d, 0, &f), 0);
		_Atomic uint64_t before = 0, after = 0, hc = 0;
		struct rt_queue *lo = pt_queue(&t, um, 0), *hi = pt_queue(&t, um, 10);
		struct hw_cmd b[3] = {
			{ .op = HW_CMD_COUNT, .stamp = &before },
			rt_cmd_wait(f, 1),
			{ .op = HW_CMD_COUNT, .stamp = &after },
		};
		uint64_t lv, hv;
		assert_int_equal(rt_queue_submit(lo, b, 3, &lv), 0);
		pt_wait_count(&before, 1);
		struct hw_cmd h[2] = { { .op = HW_CMD_WORK, .arg = 1000000, .value = 8 },
				       { .op = HW_CMD_COUNT, .stamp = &hc } };
		assert_int_equal(rt_queue_submit(hi, h, 2, &hv), 0);
		assert_int_equal(rt_queue_wait(hi, hv, PT_DEADLINE_NS), 0);
		assert_int_equal(atomic_load(&after), 0);      /* the wait is still in force */
		assert_int_equal(rt_queue_wait(lo, lv, 20000000), -ETIMEDOUT);
		assert_int_equal(rt_fence_signal(f, 1), 0);
		assert_int_equal(rt_queue_wait(lo, lv, PT_DEADLINE_NS), 0);
		assert_int_equal(atomic_load(&before), 1);
		assert_int_equal(atomic_load(&after), 1);      /* exactly once */
		assert_int_equal(atomic_load(&hc), 1);
		umt_down(&t);
	}
}

/* The scheduler's request is logged as DxgkDdiPreemptCommand (kernel-mode). */
static void scheduler_sends_preempt_command_for_kernel_mode_work(void **state)
{
	struct umt t = pt_up(HW_GFX_PREEMPT_TRIANGLE_BOUNDARY, true, HW_FAULT_NONE);
	struct pt_result r;
	pt_run(&t, false, 1, 64, &r);
	assert_true(os_adapter_ddi_count(t.a, OS_DDI_PREEMPT_COMMAND) >= 1);
	assert_true(umt_stats(&t).preempt_requests >= 1);
	umt_down(&t);
}

/* FlipOnVSyncMmIo (seed: the scheduler preempts "even if flips are pending";
 * the MMIO flip on the next vsync prevents tearing).  The low queue flips,
 * then runs long work that the high queue preempts; it flips again at the
 * end.  Every surface must reach the screen at a vsync, never mid-frame. */
struct pt_flip {
	uint64_t flips, torn, scanout, end_at_hi, mid_command;
	bool on_vsyncs;
};

static void pt_flip_run(bool mmio, enum os_fault fault, struct pt_flip *r)
{
	struct os_config cfg;
	umt_config(&cfg, 1, HW_DOORBELL_DEDICATED, 0, 0);
	cfg.caps.gfx_preempt = HW_GFX_PREEMPT_TRIANGLE_BOUNDARY;
	cfg.caps.flip_on_vsync_mmio = mmio;
	cfg.fault = fault;
	cfg.caps.vsync_period_ns = 5000000;
	struct umt t = umt_up_with(&cfg, NULL);
	struct hw_adapter *hw = os_adapter_hw(t.a);
	_Atomic uint64_t end = 0, hc = 0;
	struct rt_queue *lo = pt_queue(&t, false, 0), *hi = pt_queue(&t, false, 10);
	struct hw_cmd b[4] = {
		{ .op = HW_CMD_FLIP, .arg = 1 },
		{ .op = HW_CMD_WORK, .arg = 4 * PT_WORK_NS, .value = 64 },
		{ .op = HW_CMD_FLIP, .arg = 2 },
		{ .op = HW_CMD_COUNT, .stamp = &end },
	};
	uint64_t lv, hv;
	struct pt_hold *hold = pt_hold_arm(lo, 1, &hc, &end, NULL);   /* before the WORK */
	assert_int_equal(rt_queue_submit(lo, b, 4, &lv), 0);
	struct hw_display_stats ds;
	for (int i = 0;; i++) {
		hw_display_stats(hw, &ds);
		if (ds.flips >= 1)
			break;
		pt_poll_nap(i);
	}
	struct hw_cmd h = { .op = HW_CMD_COUNT, .stamp = &hc };
	assert_int_equal(rt_queue_submit(hi, &h, 1, &hv), 0);
	assert_int_equal(rt_queue_wait(hi, hv, PT_DEADLINE_NS), 0);
	r->end_at_hi = pt_hold_at_hi(hold, 0);
	assert_int_equal(rt_queue_wait(lo, lv, PT_DEADLINE_NS), 0);
	pt_hold_done(hold);
	struct timespec vs = { 0, 12000000 };       /* two vsyncs: the last flip is latched */
	nanosleep(&vs, NULL);
	r->scanout = hw_display_scanout(hw);
	hw_display_stats(hw, &ds);
	r->flips = ds.flips;
	r->torn = ds.torn;
	struct hw_flip_rec log[HW_FLIP_LOG];
	size_t n = hw_display_log(hw, log, HW_FLIP_LOG);
	r->on_vsyncs = n >= 1;
	for (size_t i = 0; i < n; i++)
		if ((log[i].visible_ns - hw_display_t0(hw)) % hw_display_period(hw) || log[i].visible_ns < log[i].written_ns)
			r->on_vsyncs = false;
	struct hw_engine_preempt_stats st;
	hw_engine_preempt_stats(hw, 0, &st);
	r->mid_command = st.mid_command;
	umt_down(&t);
}

static void flip_latched_at_vsync_never_torn(void **state)
{
	struct pt_flip r;
	pt_flip_run(true, OS_FAULT_NONE, &r);
	assert_int_equal(r.flips, 2);
	assert_int_equal(r.scanout, 2);
	assert_int_equal(r.torn, 0);
	assert_true(r.on_vsyncs);
	assert_int_equal(r.end_at_hi, 0);               /* preempted after the flip was written */
	assert_true(r.mid_command >= 1);
}

static void flip_without_vsync_latch_tears_and_is_caught(void **state)
{
	struct pt_flip r;
	/* FlipOnVSyncMmIo = 0: the scanout moves at once.  The OS refuses it
	 * from a preemption-aware driver (flip_on_vsync_mmio_required_with_preemption_aware);
	 * the broken variant that lets it through shows why */
	pt_flip_run(false, OS_FAULT_VIDSCH_CAPS_UNCHECKED, &r);
	assert_int_equal(r.scanout, 2);
	assert_true(r.torn >= 1);
	assert_false(r.on_vsyncs);
}

/* Resubmission on the kernel-mode path (seed: paging buffers "resubmitted
 * with the same fence IDs ... scheduled before any other commands on that
 * engine.  Nonpaging commands will be resubmitted with newly assigned fence
 * IDs").  B0 (long, preempted inside its WORK), B1, a paging buffer P and
 * B2 are on the hardware when the OS preempts the queue. */
struct pt_resub {
	int rc;
	uint64_t ids[4], log[8], counts[5];
	size_t nlog;
	uint64_t resubmitted, paging;
};

/* An adapter without user-mode submission (kernel-mode queues only),
 * triangle-boundary preemption, OS fault `fault`. */
static struct os_adapter *pt_km_adapter(enum os_fault fault)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.caps.gfx_preempt = HW_GFX_PREEMPT_TRIANGLE_BOUNDARY;
	cfg.fault = fault;
	return fbt_adapter(&cfg);
}

static void pt_resubmit_run(enum os_fault fault, struct pt_resub *r)
{
	struct os_adapter *a = pt_km_adapter(fault);
	struct os_queue *q = fbt_queue(a, 0, 64);
	_Atomic uint64_t c[5] = { 0 };
	struct hw_cmd b0[3] = { { .op = HW_CMD_COUNT, .stamp = &c[0] },
				{ .op = HW_CMD_WORK, .arg = 4 * PT_WORK_NS, .value = 64 },
				{ .op = HW_CMD_COUNT, .stamp = &c[1] } };
	struct hw_cmd b1 = { .op = HW_CMD_COUNT, .stamp = &c[2] }, p = { .op = HW_CMD_COUNT, .stamp = &c[3] },
		      b2 = { .op = HW_CMD_COUNT, .stamp = &c[4] };
	assert_int_equal(os_queue_submit_buffer(q, b0, 3, false, &r->ids[0]), 0);
	assert_int_equal(os_queue_submit_buffer(q, &b1, 1, false, &r->ids[1]), 0);
	assert_int_equal(os_queue_submit_buffer(q, &p, 1, true, &r->ids[2]), 0);
	assert_int_equal(os_queue_submit_buffer(q, &b2, 1, false, &r->ids[3]), 0);
	pt_wait_count(&c[0], 1);
	r->rc = os_queue_preempt(q, PT_DEADLINE_NS);
	for (int i = 1; i < 5; i++)
		pt_wait_count(&c[i], 1);
	struct timespec d = { 0, 2000000 };
	nanosleep(&d, NULL);                                /* the last FENCE_ID follows its COUNT */
	for (int i = 0; i < 5; i++)
		r->counts[i] = atomic_load(&c[i]);
	r->nlog = os_queue_fence_log(q, r->log, 8);
	r->resubmitted = os_queue_resubmitted(q, &r->paging);
	fbt_down(a);
}

/* Paging first with its ID, every other buffer with a new one, each once. */
static bool pt_resubmit_correct(const struct pt_resub *r)
{
	if (r->rc || r->nlog != 4 || r->log[0] != r->ids[2])
		return false;
	for (size_t i = 1; i < 4; i++)
		if (r->log[i] <= r->ids[3] || (i > 1 && r->log[i] <= r->log[i - 1]))
			return false;
	return true;
}

static void resubmission_paging_first_same_ids_others_new(void **state)
{
	struct pt_resub r;
	pt_resubmit_run(OS_FAULT_NONE, &r);
	assert_int_equal(r.rc, 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(r.counts[i], 1);           /* every buffer completed exactly once */
	assert_int_equal(r.resubmitted, 4);
	assert_int_equal(r.paging, 1);
	assert_true(pt_resubmit_correct(&r));
}

static void broken_resubmission_paging_with_new_ids_is_caught(void **state)
{
	struct pt_resub r;
	pt_resubmit_run(OS_FAULT_PAGING_NEW_ID, &r);
	for (int i = 0; i < 5; i++)
		assert_int_equal(r.counts[i], 1);
	assert_false(pt_resubmit_correct(&r));              /* the paging buffer came back with a new ID */
}

/* Lazy context switching (seed step 4: "submit a zero-length buffer ...
 * ContextSwitch"), kernel-mode path.  A queue runs a buffer; a second one
 * finds its context still loaded (nothing saved); a ContextSwitch packet
 * runs nothing, saves the context once and loads the null context; the next
 * buffer restores it. */
struct pt_lazy {
	uint64_t count_after_switch, count_end;
	bool loaded_after_run, loaded_after_idle, null_after_switch, loaded_at_end, id_logged, ddi_logged;
	struct hw_engine_preempt_stats before, after_second, after_switch, end;
};

static void pt_wait_id(struct os_queue *q, uint64_t id)
{
	uint64_t log[64];
	struct timespec d = { 0, 100000 };
	for (long i = 0; i < PT_DEADLINE_NS / 100000; i++) {
		size_t n = os_queue_fence_log(q, log, 64);
		for (size_t k = 0; k < n; k++)
			if (log[k] == id)
				return;
		nanosleep(&d, NULL);
	}
	fail_msg("fence ID %llu never completed", (unsigned long long)id);
}

static void pt_lazy_run(enum hw_fault fault, struct pt_lazy *r)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.caps.fault = fault;
	struct os_adapter *a = fbt_adapter(&cfg);
	struct hw_adapter *hw = os_adapter_hw(a);
	struct os_queue *q = fbt_queue(a, 0, 64);
	_Atomic uint64_t c = 0;
	struct hw_cmd cmd = { .op = HW_CMD_COUNT, .stamp = &c };
	uint64_t id;
	assert_int_equal(os_queue_submit_buffer(q, &cmd, 1, false, &id), 0);
	pt_wait_id(q, id);
	r->loaded_after_run = hw_engine_context(hw, 0) != NULL;
	hw_engine_preempt_stats(hw, 0, &r->before);
	const struct hw_queue *mine = hw_engine_context(hw, 0);
	assert_int_equal(os_queue_submit_buffer(q, &cmd, 1, false, &id), 0);
	pt_wait_id(q, id);
	r->loaded_after_idle = mine && hw_engine_context(hw, 0) == mine;
	hw_engine_preempt_stats(hw, 0, &r->after_second);

	assert_int_equal(os_queue_context_switch(q, &id), 0);
	pt_wait_id(q, id);
	r->id_logged = true;
	r->count_after_switch = atomic_load(&c);
	r->null_after_switch = hw_engine_context(hw, 0) == NULL;
	hw_engine_preempt_stats(hw, 0, &r->after_switch);
	struct os_ddi_call log[OS_DDI_LOG_MAX];
	size_t n = os_adapter_ddi_log(a, log, OS_DDI_LOG_MAX);
	r->ddi_logged = false;
	for (size_t i = 0; i < n; i++)
		if (log[i].ddi == OS_DDI_SUBMIT_CONTEXT_SWITCH && log[i].value == id)
			r->ddi_logged = true;

	assert_int_equal(os_queue_submit_buffer(q, &cmd, 1, false, &id), 0);
	pt_wait_id(q, id);
	r->count_end = atomic_load(&c);
	r->loaded_at_end = mine && hw_engine_context(hw, 0) == mine;
	hw_engine_preempt_stats(hw, 0, &r->end);
	fbt_down(a);
}

/* The packet switched to the null context and the context came back. */
static bool pt_lazy_switched(const struct pt_lazy *r)
{
	return r->null_after_switch && r->after_switch.ctx_switches == r->after_second.ctx_switches + 1 &&
	       r->after_switch.ctx_saves == r->after_second.ctx_saves + 1 &&
	       r->end.ctx_restores == r->after_switch.ctx_restores + 1;
}

static void lazy_context_switch_runs_nothing_and_switches_to_null(void **state)
{
	struct pt_lazy r;
	pt_lazy_run(HW_FAULT_NONE, &r);
	assert_true(r.loaded_after_run);
	assert_true(r.loaded_after_idle);                   /* lazy: kept loaded while idle */
	assert_int_equal(r.after_second.ctx_saves, r.before.ctx_saves);
	assert_int_equal(r.after_second.ctx_restores, r.before.ctx_restores);
	assert_int_equal(r.count_after_switch, 2);         /* the packet ran no work */
	assert_true(r.id_logged && r.ddi_logged);
	assert_int_equal(r.after_switch.ctx_restores, r.after_second.ctx_restores);
	assert_true(pt_lazy_switched(&r));
	assert_int_equal(r.count_end, 3);
	assert_true(r.loaded_at_end);
}

static void broken_context_switch_ignored_is_caught(void **state)
{
	struct pt_lazy r;
	pt_lazy_run(HW_FAULT_IGNORE_CONTEXT_SWITCH, &r);
	assert_int_equal(r.count_end, 3);
	assert_false(r.null_after_switch);
	assert_false(pt_lazy_switched(&r));
}

/* The context allocation (DxgkCbCreateContextAllocation; seed steps 5-6):
 * a user-mode queue's long WORK preempted inside (TRIANGLE) by a high
 * queue; its context (the rest of the WORK) goes to the queue's allocation
 * and comes back from it.  Destroying the low queue's device destroys it. */
struct pt_alloc {
	uint64_t end;
	struct hw_ctx_alloc_stats st, after;
	bool created_logged, destroyed_logged;
};

static void pt_alloc_run(enum hw_fault fault, struct pt_alloc *r)
{
	struct umt t = pt_up(HW_GFX_PREEMPT_TRIANGLE_BOUNDARY, true, fault);
	struct rt_device *d2;
	assert_int_equal(rt_device_create(t.u, &d2), 0);
	struct rt_queue_desc desc = { .engine = 0, .user_mode = true };
	struct rt_queue *lo, *hi = pt_queue(&t, true, 10);
	assert_int_equal(rt_queue_create(d2, &desc, &lo), 0);
	struct hw_ctx_alloc *c = os_hwqueue_ctx_alloc(rt_queue_os(lo));
	assert_non_null(c);
	_Atomic uint64_t started = 0, end = 0, hc = 0;
	struct hw_cmd b[3] = { { .op = HW_CMD_COUNT, .stamp = &started },
			       { .op = HW_CMD_WORK, .arg = 4 * PT_WORK_NS, .value = 64 },
			       { .op = HW_CMD_COUNT, .stamp = &end } };
	struct pt_hold *hold = pt_hold_arm(lo, 1, &hc, &end, NULL);
	assert_int_equal(rt_queue_submit(lo, b, 3, NULL), 0);
	pt_wait_count(&started, 1);
	pt_late();
	struct hw_cmd h = { .op = HW_CMD_COUNT, .stamp = &hc };
	uint64_t v;
	assert_int_equal(rt_queue_submit(hi, &h, 1, &v), 0);
	assert_int_equal(rt_queue_wait(hi, v, PT_DEADLINE_NS), 0);
	pt_wait_count(&end, 1);
	pt_hold_done(hold);
	r->end = atomic_load(&end);
	hw_ctx_alloc_stats(c, &r->st);
	assert_int_equal(rt_device_destroy(d2), 0);
	hw_ctx_alloc_stats(c, &r->after);       /* its memory lives until the adapter goes */
	struct os_ddi_call log[OS_DDI_LOG_MAX];
	size_t n = os_adapter_ddi_log(t.a, log, OS_DDI_LOG_MAX);
	r->created_logged = r->destroyed_logged = false;
	for (size_t i = 0; i < n; i++) {
		if (log[i].handle != (uint64_t)(uintptr_t)c)
			continue;
		if (log[i].ddi == OS_DDI_CREATE_CONTEXT_ALLOCATION)
			r->created_logged = log[i].value == HW_CTX_ALLOC_BYTES_DEFAULT;
		if (log[i].ddi == OS_DDI_DESTROY_CONTEXT_ALLOCATION)
			r->destroyed_logged = r->created_logged;   /* after its creation */
	}
	umt_down(&t);
}

/* Every save came back, the last one with the WORK time it wrote. */
static bool pt_alloc_round_trip(const struct pt_alloc *r)
{
	return r->st.saves >= 1 && r->st.restores == r->st.saves && r->st.saved_work_ns > 0 &&
	       r->st.restored_work_ns == r->st.saved_work_ns && !r->st.holds;
}

static void preempted_context_round_trips_through_its_allocation(void **state)
{
	struct pt_alloc r;
	pt_alloc_run(HW_FAULT_NONE, &r);
	assert_int_equal(r.end, 1);
	assert_true(pt_alloc_round_trip(&r));
	assert_int_equal(r.st.bytes, HW_CTX_ALLOC_BYTES_DEFAULT);
	assert_false(r.st.destroyed);
	assert_true(r.after.destroyed);                     /* destroyed with its context's queue */
	assert_true(r.created_logged && r.destroyed_logged);
}

static void broken_restore_not_read_from_allocation_is_caught(void **state)
{
	struct pt_alloc r;
	pt_alloc_run(HW_FAULT_CTX_RESTORE_LOST, &r);
	assert_int_equal(r.end, 1);                         /* the WORK's rest was lost, not run */
	assert_true(r.st.saves >= 1);
	assert_false(pt_alloc_round_trip(&r));
}

/* Split/partial DMA buffers (seed: "drivers that are aware of preemption
 * should handle a split/partial DMA packet submission in the same way as a
 * regular full packet"; Windows 7 runs the split packets of one render
 * command back to back).  One render command split into three packets on
 * a DMA_BUFFER_BOUNDARY engine; a high buffer arrives during the first. */
struct pt_split {
	uint64_t p1_at_hi, end_at_hi, counts[4];
	struct hw_engine_preempt_stats st;
};

static void pt_split_run(bool um, bool aware, enum hw_fault fault, struct pt_split *r)
{
	struct umt t = pt_up(HW_GFX_PREEMPT_DMA_BUFFER_BOUNDARY, aware, fault);
	struct rt_queue *lo = pt_queue(&t, um, 0), *hi = pt_queue(&t, um, 10);
	_Atomic uint64_t c[4] = { 0 }, hc = 0;
	struct hw_cmd b[7] = {
		{ .op = HW_CMD_COUNT, .stamp = &c[0] },
		{ .op = HW_CMD_WORK, .arg = PT_WORK_NS, .pad = HW_CMD_SPLIT_END },   /* packet 1 */
		{ .op = HW_CMD_COUNT, .stamp = &c[1] },
		{ .op = HW_CMD_WORK, .arg = PT_WORK_NS, .pad = HW_CMD_SPLIT_END },   /* packet 2 */
		{ .op = HW_CMD_COUNT, .stamp = &c[2] },
		{ .op = HW_CMD_WORK, .arg = PT_WORK_NS },                            /* packet 3 */
		{ .op = HW_CMD_COUNT, .stamp = &c[3] },
	};
	struct pt_hold *hold = pt_hold_arm(lo, 1, &hc, &c[1], &c[3]);   /* before packet 1's WORK */
	assert_int_equal(rt_queue_submit(lo, b, 7, NULL), 0);
	pt_wait_count(&c[0], 1);
	pt_late();
	struct hw_cmd h = { .op = HW_CMD_COUNT, .stamp = &hc };
	uint64_t v;
	assert_int_equal(rt_queue_submit(hi, &h, 1, &v), 0);
	assert_int_equal(rt_queue_wait(hi, v, PT_DEADLINE_NS), 0);
	r->p1_at_hi = pt_hold_at_hi(hold, 0);
	r->end_at_hi = pt_hold_at_hi(hold, 1);
	pt_wait_count(&c[3], 1);
	pt_hold_done(hold);
	for (int i = 0; i < 4; i++)
		r->counts[i] = atomic_load(&c[i]);
	hw_engine_preempt_stats(os_adapter_hw(t.a), 0, &r->st);
	umt_down(&t);
}

/* The high buffer ran between two split packets, the context saved there. */
static bool pt_split_switched(const struct pt_split *r)
{
	return r->end_at_hi == 0 && r->st.at_split >= 1 && r->st.ctx_saves >= 1 && r->st.ctx_restores >= 1;
}

static void split_packet_is_a_full_buffer_another_context_runs_between(void **state)
{
	for (int um = 0; um < 2; um++) {
		struct pt_split r;
		pt_split_run(um, true, HW_FAULT_NONE, &r);
		for (int i = 0; i < 4; i++)
			assert_int_equal(r.counts[i], 1);     /* every packet once */
		assert_true(pt_split_switched(&r));
		assert_int_equal(r.st.mid_buffer + r.st.mid_command, 0);   /* only at boundaries */
	}
}

static void preemption_unaware_runs_split_packets_back_to_back(void **state)
{
	for (int um = 0; um < 2; um++) {
		struct pt_split r;
		pt_split_run(um, false, HW_FAULT_NONE, &r);
		for (int i = 0; i < 4; i++)
			assert_int_equal(r.counts[i], 1);
		assert_int_equal(r.end_at_hi, 1);             /* the whole command first */
		assert_int_equal(r.st.preemptions, 0);
	}
}

static void broken_split_end_not_a_boundary_is_caught(void **state)
{
	struct pt_split r;
	pt_split_run(false, true, HW_FAULT_SPLIT_IGNORED, &r);
	for (int i = 0; i < 4; i++)
		assert_int_equal(r.counts[i], 1);
	assert_false(pt_split_switched(&r));                /* the command ran as one buffer */
}

/* ---- the preemption caps as the OS takes them (issue 22) ---- */

/* pt_run (kernel-mode, nwork WORKs) on an adapter of cfg; returns the caps
 * the adapter ended up with, as the OS took them. */
static struct hw_caps pt_run_with(struct os_config *cfg, unsigned nwork, struct pt_result *r)
{
	struct umt t = umt_up_with(cfg, NULL);
	struct hw_caps caps = *hw_adapter_caps(os_adapter_hw(t.a));
	pt_run(&t, false, nwork, 64, r);
	umt_down(&t);
	return caps;
}

/* Seed "GPU preemption" (the opening list): the OS "Doesn't allow the
 * kernel-mode display driver (KMD) to disable the preemption of GPU DMA
 * packets".  A KMD that asks (os_config.kmd_disable_preemption) on a
 * PRIMITIVE engine: the high buffer still runs inside the low one. */
static void pt_kmd_disable_run(enum os_fault fault, struct pt_result *r, enum hw_gfx_preempt *g)
{
	struct os_config cfg;
	pt_config(&cfg, HW_GFX_PREEMPT_PRIMITIVE_BOUNDARY, true, HW_FAULT_NONE);
	cfg.kmd_disable_preemption = true;
	cfg.fault = fault;
	*g = pt_run_with(&cfg, 4, r).gfx_preempt;
}

static void kmd_cannot_disable_preemption_of_dma_packets(void **state)
{
	struct pt_result r;
	enum hw_gfx_preempt g;
	pt_kmd_disable_run(OS_FAULT_NONE, &r, &g);
	pt_assert_whole(&r);
	assert_int_equal(g, HW_GFX_PREEMPT_PRIMITIVE_BOUNDARY);   /* the caps stand */
	assert_int_equal(r.end1_at_hi, 0);                           /* preempted inside the buffer */
	assert_true(r.st.preemptions >= 1 && r.st.mid_buffer >= 1);
}

static void broken_kmd_disabling_preemption_is_caught(void **state)
{
	struct pt_result r;
	enum hw_gfx_preempt g;
	pt_kmd_disable_run(OS_FAULT_KMD_DISABLES_PREEMPTION, &r, &g);
	pt_assert_whole(&r);
	assert_int_equal(r.end1_at_hi, 1);          /* the high buffer waited for the whole low one */
	assert_int_equal(r.st.preemptions, 0);
}

/* Seed "Driver implementation steps", step 2: "Declare support for the
 * Windows 8 GPU preemption model by setting the PreemptionAware and
 * MultiEngineAware members of the DXGK_VIDSCHCAPS structure to 1. To
 * support the Windows 7 preemption model, set PreemptionAware to zero."
 * PreemptionAware without MultiEngineAware is no declaration of the
 * Windows 8 model: the adapter runs the Windows 7 one (never preempts). */
static void pt_multi_engine_run(bool multi, enum os_fault fault, struct pt_result *r, bool *aware)
{
	struct os_config cfg;
	pt_config(&cfg, HW_GFX_PREEMPT_TRIANGLE_BOUNDARY, true, HW_FAULT_NONE);
	cfg.caps.multi_engine_aware = multi;
	cfg.fault = fault;
	*aware = pt_run_with(&cfg, 1, r).preemption_aware;
}

static void preemption_aware_without_multi_engine_aware_runs_the_windows_7_model(void **state)
{
	struct pt_result r;
	bool aware;
	pt_multi_engine_run(true, OS_FAULT_NONE, &r, &aware);      /* both set: the Windows 8 model */
	pt_assert_whole(&r);
	assert_true(aware);
	assert_int_equal(r.end1_at_hi, 0);
	assert_true(r.st.mid_command >= 1);
	pt_multi_engine_run(false, OS_FAULT_NONE, &r, &aware);     /* MultiEngineAware = 0 */
	pt_assert_whole(&r);
	assert_false(aware);
	assert_int_equal(r.end1_at_hi, 1);
	assert_int_equal(r.st.preemptions, 0);
}

static void broken_preemption_aware_read_without_multi_engine_aware_is_caught(void **state)
{
	struct pt_result r;
	bool aware;
	pt_multi_engine_run(false, OS_FAULT_VIDSCH_CAPS_UNCHECKED, &r, &aware);
	pt_assert_whole(&r);
	assert_true(aware);                        /* the Windows 8 model without its declaration */
	assert_true(r.st.preemptions >= 1);
}

/* Seed step 8: "the driver must support the memory-mapped I/O flip model
 * and must set the FlipOnVSyncMmIo member of the DXGK_FLIPCAPS structure
 * to 1".  A preemption-aware driver without it fails adapter
 * initialization; a Windows 7 model driver does not need it. */
static int pt_create(bool aware, bool mmio, enum os_fault fault, char *err, size_t len)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.caps.preemption_aware = aware;
	cfg.caps.flip_on_vsync_mmio = mmio;
	cfg.fault = fault;
	struct os_adapter *a = NULL;
	err[0] = 0;
	int rc = os_adapter_create(&cfg, &a, err, len);
	if (!rc)
		os_adapter_destroy(a);
	return rc;
}

static void flip_on_vsync_mmio_required_with_preemption_aware(void **state)
{
	char err[256];
	assert_int_equal(pt_create(true, false, OS_FAULT_NONE, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "FlipOnVSyncMmIo"));
	assert_int_equal(pt_create(true, true, OS_FAULT_NONE, err, sizeof(err)), 0);
	assert_int_equal(pt_create(false, false, OS_FAULT_NONE, err, sizeof(err)), 0);
	struct hw_caps def;
	hw_caps_default(&def);
	assert_true(def.preemption_aware && def.flip_on_vsync_mmio);   /* the defaults pass */
}

static void broken_preemption_aware_without_flip_on_vsync_mmio_is_caught(void **state)
{
	char err[256];
	/* accepted: and flip_without_vsync_latch_tears_and_is_caught shows the tearing */
	assert_int_equal(pt_create(true, false, OS_FAULT_VIDSCH_CAPS_UNCHECKED, err, sizeof(err)), 0);
}

/* Seed step 3: "the D3DKMDT_COMPUTE_PREEMPTION_GRANULARITY" levels, on
 * compute WORK (dispatches of thread groups): the compute granularity
 * applies, whatever the graphics one says. */
static struct umt pt_up_compute(enum hw_gfx_preempt g, enum hw_compute_preempt c, enum hw_fault fault)
{
	struct os_config cfg;
	pt_config(&cfg, g, true, fault);
	cfg.caps.compute_preempt = c;
	return umt_up_with(&cfg, NULL);
}

/* How much of one low WORK (4 x PT_WORK_NS, 64 sub-units) of `kind` runs,
 * with a request standing as it begins (the hold), before the engine
 * leaves it: the whole WORK when the granularity cannot stop inside it,
 * else what ran before the mid-command stop (mid_command_run_ns). */
static uint64_t pt_run_before_leaving(enum hw_gfx_preempt g, enum hw_compute_preempt c, uint32_t kind,
				      enum hw_fault fault)
{
	struct umt t = pt_up_compute(g, c, fault);
	struct pt_result r;
	pt_run_kind(&t, true, 1, 64, kind, &r);
	pt_assert_whole(&r);
	umt_down(&t);
	if (r.st.mid_command == 0)
		return 4 * PT_WORK_NS;
	assert_int_equal(r.st.mid_command, 1);
	return r.st.mid_command_run_ns;
}

/* Seed, "Memory mapping considerations": "Request mid-DMA buffer
 * preemption from the GPU when the Dxgkrnl scheduler sends a preemption
 * command. Hardware devices that have a finer granularity of mid-DMA buffer
 * preemption should produce a better customer experience."  The same WORK
 * at every level from the command boundary down, graphics (PRIMITIVE,
 * TRIANGLE, PIXEL, SHADER) and compute (DISPATCH, THREAD_GROUP, THREAD,
 * SHADER): each finer level leaves it no later than the coarser one, and
 * each level inside a command after exactly one of its slices (64 sub-units,
 * cut HW_WORK_FANOUT ways per finer level). */
static void finer_preemption_granularity_leaves_the_work_no_later(void **state)
{
	const uint64_t whole = 4 * PT_WORK_NS;
	const uint64_t want[4] = { whole, whole / 64, whole / (64 * HW_WORK_FANOUT),
				   whole / (64 * HW_WORK_FANOUT * HW_WORK_FANOUT) };
	for (int kind = 0; kind < 2; kind++) {
		uint64_t run[4];
		for (int l = 0; l < 4; l++) {
			enum hw_gfx_preempt g = (enum hw_gfx_preempt)(HW_GFX_PREEMPT_PRIMITIVE_BOUNDARY + l);
			enum hw_compute_preempt c = (enum hw_compute_preempt)(HW_COMPUTE_PREEMPT_DISPATCH_BOUNDARY + l);
			/* the other kind's granularity the coarsest: only this kind's applies */
			run[l] = kind ? pt_run_before_leaving(HW_GFX_PREEMPT_PRIMITIVE_BOUNDARY, c, HW_WORK_COMPUTE,
							      HW_FAULT_NONE)
				      : pt_run_before_leaving(g, HW_COMPUTE_PREEMPT_DISPATCH_BOUNDARY, HW_WORK_GRAPHICS,
							      HW_FAULT_NONE);
			assert_int_equal(run[l], want[l]);
			if (l)
				assert_true(run[l] < run[l - 1]);
		}
	}
	/* broken (HW_FAULT_PREEMPT_ANYWHERE, the granularity ignored): the
	 * command level stops inside the WORK, at the finest slice */
	assert_int_equal(pt_run_before_leaving(HW_GFX_PREEMPT_PRIMITIVE_BOUNDARY, HW_COMPUTE_PREEMPT_DISPATCH_BOUNDARY,
					       HW_WORK_GRAPHICS, HW_FAULT_PREEMPT_ANYWHERE), want[3]);
}

static void compute_preemption_granularity_dma_buffer_boundary(void **state)
{
	for (int um = 0; um < 2; um++) {
		/* a graphics engine that stops anywhere; compute only between DMA buffers */
		struct umt t = pt_up_compute(HW_GFX_PREEMPT_SHADER_BOUNDARY, HW_COMPUTE_PREEMPT_DMA_BUFFER_BOUNDARY,
					     HW_FAULT_NONE);
		struct pt_result r;
		pt_run_kind(&t, um, 4, 64, HW_WORK_COMPUTE, &r);
		pt_assert_whole(&r);
		assert_true(pt_dma_respected(&r));
		assert_int_equal(r.end2_at_hi, 0);
		umt_down(&t);
	}
}

static void compute_preemption_granularity_dispatch_boundary(void **state)
{
	struct umt t = pt_up_compute(HW_GFX_PREEMPT_NONE, HW_COMPUTE_PREEMPT_DISPATCH_BOUNDARY, HW_FAULT_NONE);
	struct pt_result r;
	pt_run_kind(&t, false, 4, 64, HW_WORK_COMPUTE, &r);
	pt_assert_whole(&r);
	assert_int_equal(r.end1_at_hi, 0);          /* between two dispatches */
	assert_true(r.st.mid_buffer >= 1);
	assert_int_equal(r.st.mid_command, 0);
	umt_down(&t);
}

static void compute_preemption_granularity_thread_group_boundary(void **state)
{
	for (int um = 0; um < 2; um++) {
		struct umt t = pt_up_compute(HW_GFX_PREEMPT_DMA_BUFFER_BOUNDARY, HW_COMPUTE_PREEMPT_THREAD_GROUP_BOUNDARY,
					     HW_FAULT_NONE);
		struct pt_result r;
		pt_run_kind(&t, um, 1, 64, HW_WORK_COMPUTE, &r);   /* one dispatch of 64 thread groups */
		pt_assert_whole(&r);
		assert_int_equal(r.end1_at_hi, 0);
		assert_true(r.st.mid_command >= 1);
		umt_down(&t);
	}
}

static void broken_compute_preempted_at_graphics_granularity_is_caught(void **state)
{
	struct umt t = pt_up_compute(HW_GFX_PREEMPT_SHADER_BOUNDARY, HW_COMPUTE_PREEMPT_DMA_BUFFER_BOUNDARY,
				     HW_FAULT_COMPUTE_AS_GRAPHICS);
	struct pt_result r;
	pt_run_kind(&t, false, 4, 64, HW_WORK_COMPUTE, &r);
	pt_assert_whole(&r);
	assert_false(pt_dma_respected(&r));        /* stopped inside the DMA buffer */
	umt_down(&t);
}

/* Seed "Memory mapping considerations": preempted paging commands are
 * resubmitted "and the paging commands will be scheduled before any other
 * commands on that engine".  Two kernel-mode queues on one engine: O (the
 * other queue, first on the run list) has a buffer X ready while A runs a
 * long buffer with a paging buffer P behind it; the OS preempts A.  P must
 * run before X.  The STAMPs of one engine give the order. */
struct pt_paging2 {
	int rc;
	uint64_t p, x, c[2];
};

static void pt_paging_two_queues_run(enum os_fault fault, struct pt_paging2 *r)
{
	struct os_adapter *a = pt_km_adapter(fault);
	struct os_queue *o = fbt_queue(a, 0, 64), *q = fbt_queue(a, 0, 64);
	_Atomic uint64_t c[2] = { 0 }, p = 0, x = 0;
	struct hw_cmd b0[3] = { { .op = HW_CMD_COUNT, .stamp = &c[0] },
				{ .op = HW_CMD_WORK, .arg = 4 * PT_WORK_NS, .value = 64 },
				{ .op = HW_CMD_COUNT, .stamp = &c[1] } };
	struct hw_cmd pc = { .op = HW_CMD_STAMP, .stamp = &p }, xc = { .op = HW_CMD_STAMP, .stamp = &x };
	uint64_t id;
	assert_int_equal(os_queue_submit_buffer(q, b0, 3, false, &id), 0);
	assert_int_equal(os_queue_submit_buffer(q, &pc, 1, true, &id), 0);
	pt_wait_count(&c[0], 1);
	assert_int_equal(os_queue_submit_buffer(o, &xc, 1, false, &id), 0);   /* ready, behind A's WORK */
	r->rc = os_queue_preempt(q, PT_DEADLINE_NS);
	for (int i = 0; !atomic_load(&p) || !atomic_load(&x) || !atomic_load(&c[1]); i++)
		pt_poll_nap(i);
	r->p = atomic_load(&p);
	r->x = atomic_load(&x);
	r->c[0] = atomic_load(&c[0]);
	r->c[1] = atomic_load(&c[1]);
	fbt_down(a);
}

static void paging_buffers_scheduled_before_any_other_commands_on_that_engine(void **state)
{
	struct pt_paging2 r;
	pt_paging_two_queues_run(OS_FAULT_NONE, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.c[0], 1);
	assert_int_equal(r.c[1], 1);
	assert_true(r.p < r.x);                     /* the paging buffer first, the other queue's after */
}

static void broken_paging_not_first_on_the_engine_is_caught(void **state)
{
	struct pt_paging2 r;
	pt_paging_two_queues_run(OS_FAULT_PAGING_NOT_FIRST, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.c[1], 1);
	assert_true(r.x < r.p);                     /* the other queue's buffer ran first */
}

/* ---- context resources in memory the OS manages (issue 22) ---- */

/* Seed "Driver implementation steps", step 7: "initialize the context
 * resource by filling in the InitContextResource internal structure ...
 * If context resources are evicted or relocated, the video memory manager
 * will preserve the content of the context resources."  Three local-memory
 * slots.  A user-mode queue lo is preempted inside a long WORK by hi; while
 * it waits, the memory manager relocates its allocation, then two new
 * queues need memory and lo's allocation, the least recently used one off
 * the GPU, is evicted; once hi is done lo is brought back (another queue
 * evicted for it) and resumes from its allocation: the rest of its WORK. */
struct pt_vm {
	uint64_t end_at_hi, end, va[4];
	int relocate_rc, back_rc;
	struct hw_ctx_alloc_stats lo;
	struct os_vidmm_stats vm;
	struct hw_engine_preempt_stats st;
	uint64_t paging_ddis;
};

static void pt_wait_saves(struct hw_ctx_alloc *c)
{
	struct hw_ctx_alloc_stats st;
	for (int i = 0;; i++) {
		hw_ctx_alloc_stats(c, &st);
		if (st.saves >= 1)
			return;
		pt_poll_nap(i);
	}
}

/* A triangle-boundary adapter with three local context slots (so context
 * allocations get evicted and relocated), OS fault `fault`. */
static struct umt pt_up_slots(enum os_fault fault)
{
	struct os_config cfg;
	pt_config(&cfg, HW_GFX_PREEMPT_TRIANGLE_BOUNDARY, true, HW_FAULT_NONE);
	cfg.caps.ctx_local_slots = 3;
	cfg.fault = fault;
	return umt_up_with(&cfg, NULL);
}

static void pt_vidmm_run(enum os_fault fault, struct pt_vm *r)
{
	struct umt t = pt_up_slots(fault);
	struct rt_queue *lo = pt_queue(&t, true, 0), *hi = pt_queue(&t, true, 10);
	struct hw_ctx_alloc *c = os_hwqueue_ctx_alloc(rt_queue_os(lo));
	r->va[0] = hw_ctx_alloc_va(c);
	_Atomic uint64_t started = 0, end = 0, hc = 0;
	struct hw_cmd b[3] = { { .op = HW_CMD_COUNT, .stamp = &started },
			       { .op = HW_CMD_WORK, .arg = 4 * PT_WORK_NS, .value = 64 },
			       { .op = HW_CMD_COUNT, .stamp = &end } };
	struct pt_hold *hold = pt_hold_arm(lo, 1, &hc, &end, NULL);
	assert_int_equal(rt_queue_submit(lo, b, 3, NULL), 0);
	pt_wait_count(&started, 1);
	pt_late();
	struct hw_cmd h[2] = { { .op = HW_CMD_WORK, .arg = 2 * PT_WORK_NS, .value = 64 },
			       { .op = HW_CMD_COUNT, .stamp = &hc } };
	uint64_t hv;
	assert_int_equal(rt_queue_submit(hi, h, 2, &hv), 0);
	pt_wait_saves(c);                                        /* lo preempted: its context in its allocation */
	r->relocate_rc = os_ctx_alloc_relocate(t.a, c);
	r->va[1] = hw_ctx_alloc_va(c);
	struct rt_queue *z1 = pt_queue(&t, true, 0), *z2 = pt_queue(&t, true, 0);   /* memory pressure */
	(void)z1;
	(void)z2;
	r->va[2] = hw_ctx_alloc_va(c);
	assert_int_equal(rt_queue_wait(hi, hv, PT_DEADLINE_NS), 0);
	r->end_at_hi = pt_hold_at_hi(hold, 0);
	r->back_rc = os_ctx_alloc_make_resident(t.a, c);
	r->va[3] = hw_ctx_alloc_va(c);
	pt_wait_count(&end, 1);
	pt_hold_done(hold);
	r->end = atomic_load(&end);
	hw_ctx_alloc_stats(c, &r->lo);
	os_vidmm_stats(t.a, &r->vm);
	hw_engine_preempt_stats(os_adapter_hw(t.a), 0, &r->st);
	r->paging_ddis = os_adapter_ddi_count(t.a, OS_DDI_BUILD_PAGING_BUFFER);
	umt_down(&t);
}

static void init_context_resource_and_content_preserved_across_eviction_and_relocation(void **state)
{
	struct pt_vm r;
	pt_vidmm_run(OS_FAULT_NONE, &r);
	assert_int_equal(r.relocate_rc, 0);
	assert_int_equal(r.back_rc, 0);
	assert_true(r.va[0] != 0 && r.va[1] != 0 && r.va[1] != r.va[0]);   /* relocated */
	assert_int_equal(r.va[2], 0);                                    /* evicted under pressure */
	assert_true(r.va[3] != 0);                                       /* brought back */
	assert_int_equal(r.end_at_hi, 0);                                /* an evicted context does not run */
	assert_int_equal(r.end, 1);
	/* the preempted context resumed from its allocation: the rest of its WORK */
	assert_true(r.lo.saves >= 1 && r.lo.restores == r.lo.saves);
	assert_true(r.lo.saved_work_ns > 0 && r.lo.restored_work_ns == r.lo.saved_work_ns);
	assert_int_equal(r.vm.inits, 4);                                 /* InitContextResource for lo, hi, z1, z2 */
	assert_true(r.vm.evictions >= 2 && r.vm.brought_back >= 1 && r.vm.relocations == 1);
	assert_true(r.paging_ddis == r.vm.paging_buffers && r.paging_ddis >= 8);
	assert_int_equal(r.st.ctx_faults, 0);
	assert_int_equal(r.st.ctx_bad_images, 0);
}

static void broken_eviction_discarding_context_content_is_caught(void **state)
{
	struct pt_vm r;
	pt_vidmm_run(OS_FAULT_EVICT_DISCARDS, &r);
	assert_int_equal(r.end, 1);                                      /* it ran on ... */
	assert_true(r.lo.saved_work_ns > 0);
	assert_true(r.lo.restored_work_ns != r.lo.saved_work_ns);        /* ... without the rest of its WORK */
}

static void broken_missing_init_context_resource_is_caught(void **state)
{
	struct pt_vm r;
	pt_vidmm_run(OS_FAULT_NO_INIT_CONTEXT_RESOURCE, &r);
	assert_int_equal(r.vm.inits, 0);
	assert_true(r.st.ctx_bad_images >= 1);                          /* contexts loaded from whatever was there */
}

/* DxgkCbCreateContextAllocation's Remarks (seed step 5, "Note the specific
 * instructions and restrictions given in Remarks"): device context
 * allocations "only for non-system devices", with hContext NULL when
 * SharedAcrossContexts is set; GPU context allocations "only for
 * non-system contexts"; a device context allocation "remains resident for
 * any context belonging to its associated device".  Two local slots. */
struct pt_dev {
	int rc_ctx_set, rc_sys_dev, rc_sys_ctx, rc_no_ctx, rc_ok, rc_again;
	uint64_t dev_va_end;
	struct os_vidmm_stats vm;
	struct hw_engine_preempt_stats st;
	uint64_t counts[3];
};

/* Submit one counting buffer to q and wait for it. */
static void pt_submit_wait(struct rt_queue *q, _Atomic uint64_t *counter)
{
	uint64_t v = umt_submit_count(q, counter);
	assert_int_equal(rt_queue_wait(q, v, PT_DEADLINE_NS), 0);
}

static void pt_dev_run(enum os_fault fault, struct pt_dev *r)
{
	struct umt t = pt_up_slots(fault);
	struct os_device *d = rt_device_os(t.d);
	struct os_createcontextallocation ca = { .SharedAcrossContexts = true, .hDevice = d,
						  .hContext = os_vidmm_paging_queue(t.a), .Size = 4096 };
	r->rc_ctx_set = os_create_context_allocation(t.u, &ca);
	ca = (struct os_createcontextallocation){ .SharedAcrossContexts = true, .Size = 4096 };
	r->rc_sys_dev = os_create_context_allocation(t.u, &ca);
	ca = (struct os_createcontextallocation){ .hContext = os_vidmm_paging_queue(t.a), .Size = 4096 };
	r->rc_sys_ctx = os_create_context_allocation(t.u, &ca);
	ca = (struct os_createcontextallocation){ .hDevice = d, .Size = 4096 };
	r->rc_no_ctx = os_create_context_allocation(t.u, &ca);
	ca = (struct os_createcontextallocation){ .SharedAcrossContexts = true, .hDevice = d, .Size = 4096 };
	r->rc_ok = os_create_context_allocation(t.u, &ca);
	struct hw_ctx_alloc *dev = ca.hAllocation;
	r->rc_again = os_create_context_allocation(t.u, &ca);
	/* two contexts of the device after it: 3 slots used */
	struct rt_queue *q1 = pt_queue(&t, true, 0), *q2 = pt_queue(&t, true, 0);
	_Atomic uint64_t c[3] = { 0 };
	pt_submit_wait(q1, &c[0]);
	pt_submit_wait(q2, &c[1]);
	/* another device's queue needs memory: q1's allocation, or (broken) the
	 * device's, goes; the other device's context runs in between */
	struct rt_device *d2;
	assert_int_equal(rt_device_create(t.u, &d2), 0);
	struct rt_queue_desc desc = { .engine = 0, .user_mode = true };
	struct rt_queue *x;
	assert_int_equal(rt_queue_create(d2, &desc, &x), 0);
	pt_submit_wait(x, &c[2]);
	pt_submit_wait(q2, &c[1]);                              /* the device's context loaded again */
	for (int i = 0; i < 3; i++)
		r->counts[i] = atomic_load(&c[i]);
	r->dev_va_end = dev ? hw_ctx_alloc_va(dev) : 0;
	os_vidmm_stats(t.a, &r->vm);
	hw_engine_preempt_stats(os_adapter_hw(t.a), 0, &r->st);
	assert_int_equal(rt_device_destroy(d2), 0);
	umt_down(&t);
}

static void device_context_allocation_remarks_restrictions_and_residency(void **state)
{
	struct pt_dev r;
	pt_dev_run(OS_FAULT_NONE, &r);
	assert_int_equal(r.rc_ctx_set, -EINVAL);     /* SharedAcrossContexts with an hContext */
	assert_int_equal(r.rc_sys_dev, -EINVAL);     /* the system device */
	assert_int_equal(r.rc_sys_ctx, -EINVAL);     /* the system context (the paging queue) */
	assert_int_equal(r.rc_no_ctx, -EINVAL);      /* a GPU context allocation without its context */
	assert_int_equal(r.rc_ok, 0);
	assert_int_equal(r.rc_again, -EEXIST);       /* one per device */
	assert_int_equal(r.counts[0], 1);
	assert_int_equal(r.counts[1], 2);
	assert_int_equal(r.counts[2], 1);
	assert_true(r.vm.evictions >= 1);            /* there was pressure ... */
	assert_true(r.dev_va_end != 0);              /* ... and the device's allocation stayed */
	assert_int_equal(r.st.ctx_faults, 0);
}

static void broken_device_context_allocation_evicted_is_caught(void **state)
{
	struct pt_dev r;
	pt_dev_run(OS_FAULT_DEVICE_ALLOC_EVICTABLE, &r);
	assert_int_equal(r.rc_ok, 0);
	assert_int_equal(r.dev_va_end, 0);           /* evicted while its device lives */
	assert_true(r.st.ctx_faults >= 1);           /* its context found it gone */
}

/* Is there a DxgkCbDestroyContextAllocation of allocation c on t's DDI
 * log, from entry `from` on?  (An address may be reused once destroyed.)
 * from == SIZE_MAX: the log's length. */
static size_t pt_ctx_alloc_destroyed(struct umt *t, size_t from, const struct hw_ctx_alloc *c)
{
	static struct os_ddi_call log[OS_DDI_LOG_MAX];
	size_t n = os_adapter_ddi_log(t->a, log, OS_DDI_LOG_MAX);
	assert_true(n < OS_DDI_LOG_MAX);                 /* nothing fell off the log */
	if (from == SIZE_MAX)
		return n;
	for (size_t i = from; i < n; i++)
		if (log[i].ddi == OS_DDI_DESTROY_CONTEXT_ALLOCATION && log[i].handle == (uint64_t)(uintptr_t)c)
			return 1;
	return 0;
}

/* Seed step 6: "Call the DxgkCbDestroyContextAllocation function to destroy
 * GPU context allocations and device context allocations that were created
 * with DxgkCbCreateContextAllocation."  A device with a device context
 * allocation and a queue (its GPU context allocation), ended normally and
 * abnormally: both allocations destroyed with it, each call on the DDI log. */
static void context_allocations_destroyed_with_their_device(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 4, 60 * 1000000000ll);
	for (int abnormal = 0; abnormal < 2; abnormal++) {
		struct rt_device *d;
		struct rt_queue *q;
		struct rt_queue_desc desc = { .engine = 0, .user_mode = abnormal == 0 };
		assert_int_equal(rt_device_create(t.u, &d), 0);
		assert_int_equal(rt_queue_create(d, &desc, &q), 0);
		_Atomic uint64_t n = 0;
		umt_submit_count(q, &n);
		assert_int_equal(rt_queue_wait(q, 0, PT_DEADLINE_NS), 0);
		struct hw_ctx_alloc *qa = os_hwqueue_ctx_alloc(rt_queue_os(q));
		struct os_createcontextallocation args = {
			.SharedAcrossContexts = true, .hDevice = rt_device_os(d), .Size = 64,
		};
		assert_int_equal(os_create_context_allocation(t.u, &args), 0);
		assert_non_null(qa);
		size_t from = pt_ctx_alloc_destroyed(&t, SIZE_MAX, NULL);
		if (abnormal)
			rt_device_terminate(d);
		else
			assert_int_equal(os_device_destroy(rt_device_os(d)), 0);
		assert_true(pt_ctx_alloc_destroyed(&t, from, qa));
		assert_true(pt_ctx_alloc_destroyed(&t, from, args.hAllocation));
		rt_device_destroy(d);
	}
	umt_down(&t);
}

/* ---- DMA buffers that name allocations (issue 22) ---- */

/* A split DMA buffer of one render command, two packets, one allocation A:
 * packet 0 binds A to slot 0 and writes 11 to its word 0; packet 1 writes
 * 22 to its word 1, after reprogramming slot 0 (PT_SPLIT_GOOD), after an
 * unbind at packet 0's end and a reprogramming (PT_SPLIT_UNBIND), or
 * through the binding packet 0 left (PT_SPLIT_LEAK).  Between the packets
 * the memory manager moves A. */
enum pt_split_kind { PT_SPLIT_GOOD, PT_SPLIT_UNBIND, PT_SPLIT_LEAK };

struct pt_splitbuf {
	struct hw_cmd p0[4], p1[3];
	struct os_patch_location l0[1], l1[1];
	struct os_split_packet pk[2];
	struct os_alloc *allocs[1];
	struct os_split_dma_buffer b;
	_Atomic uint64_t c[2];
};

static void pt_splitbuf_init(struct pt_splitbuf *s, struct os_alloc *al, enum pt_split_kind kind)
{
	memset(s, 0, sizeof(*s));
	size_t n0 = 0, n1 = 0;
	s->p0[n0++] = (struct hw_cmd){ .op = HW_CMD_BIND, .pad = 0 };
	s->p0[n0++] = (struct hw_cmd){ .op = HW_CMD_STORE, .pad = 0, .arg = 0, .value = 11 };
	if (kind == PT_SPLIT_UNBIND)
		s->p0[n0++] = (struct hw_cmd){ .op = HW_CMD_BIND, .pad = 0, .arg = 0 };   /* unbind: no patch location */
	s->p0[n0++] = (struct hw_cmd){ .op = HW_CMD_COUNT, .stamp = &s->c[0] };
	if (kind != PT_SPLIT_LEAK)
		s->p1[n1++] = (struct hw_cmd){ .op = HW_CMD_BIND, .pad = 0 };            /* reprogrammed */
	s->p1[n1++] = (struct hw_cmd){ .op = HW_CMD_STORE, .pad = 0, .arg = 8, .value = 22 };
	s->p1[n1++] = (struct hw_cmd){ .op = HW_CMD_COUNT, .stamp = &s->c[1] };
	s->l0[0] = (struct os_patch_location){ .AllocationIndex = 0, .PatchOffset = 0 };
	s->l1[0] = (struct os_patch_location){ .AllocationIndex = 0, .PatchOffset = 0 };
	s->pk[0] = (struct os_split_packet){ .cmds = s->p0, .n = n0, .patches = s->l0, .npatches = 1 };
	s->pk[1] = (struct os_split_packet){ .cmds = s->p1, .n = n1, .patches = s->l1, .npatches = kind == PT_SPLIT_LEAK ? 0 : 1 };
	s->allocs[0] = al;
	s->b = (struct os_split_dma_buffer){ .allocs = s->allocs, .nallocs = 1, .packets = s->pk, .npackets = 2 };
}

struct pt_patch {
	int rc0, rc1, verify;
	size_t bad;
	uint64_t w0, w1, c0_rejected, faults;
};

static void pt_patch_run(enum pt_split_kind kind, bool detect, bool no_patching, enum os_fault fault, struct pt_patch *r)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.caps.data_words = 1024;
	cfg.caps.no_dma_patching = no_patching;
	cfg.binding_leak_detection = detect;
	cfg.fault = fault;
	struct os_adapter *a = fbt_adapter(&cfg);
	struct os_queue *q = fbt_queue(a, 0, 64);
	struct os_alloc *al;
	assert_int_equal(os_alloc_create(a, 8, 1, &al), 0);
	struct pt_splitbuf *s = malloc(sizeof(*s));
	pt_splitbuf_init(s, al, kind);
	r->bad = SIZE_MAX;
	r->verify = os_split_verify(a, &s->b, &r->bad);
	r->rc0 = os_queue_submit_split_packet(q, &s->b, 0);
	r->rc1 = -1;
	r->c0_rejected = 0;
	if (r->rc0 == 0) {
		pt_wait_count(&s->c[0], 1);
		assert_int_equal(os_alloc_move(al), 0);       /* between two split packets */
		r->rc1 = os_queue_submit_split_packet(q, &s->b, 1);
		assert_int_equal(r->rc1, 0);
		pt_wait_count(&s->c[1], 1);
	} else {
		struct hw_cmd cnt = { .op = HW_CMD_COUNT, .stamp = &s->c[1] };
		assert_int_equal(os_queue_submit(q, &cnt, 1), 0);   /* a marker behind what would have run */
		pt_wait_count(&s->c[1], 1);
		r->c0_rejected = atomic_load(&s->c[0]);
	}
	r->w0 = os_alloc_read(al, 0, 0);
	r->w1 = os_alloc_read(al, 0, 1);
	struct hw_engine_preempt_stats st;
	hw_engine_preempt_stats(os_adapter_hw(a), 0, &st);
	r->faults = st.data_faults;
	fbt_down(a);
	free(s);
}

/* The split buffer ran, each packet writing where A was when it was
 * submitted (11, then 22), without a fault. */
static void pt_assert_patched(const struct pt_patch *r)
{
	assert_int_equal(r->rc0, 0);
	assert_int_equal(r->w0, 11);
	assert_int_equal(r->w1, 22);
	assert_int_equal(r->faults, 0);
}

/* Seed "Memory mapping considerations": "Provide a patch location list for
 * split DMA buffers."  Each packet is patched from its own list when it is
 * submitted, so the second one reaches A where it is now. */
static void patch_location_list_for_split_dma_buffers(void **state)
{
	struct pt_patch r;
	pt_patch_run(PT_SPLIT_GOOD, false, false, OS_FAULT_NONE, &r);
	pt_assert_patched(&r);
}

static void broken_split_packets_patched_from_one_list_is_caught(void **state)
{
	struct pt_patch r;
	pt_patch_run(PT_SPLIT_GOOD, false, false, OS_FAULT_SPLIT_PATCH_ONCE, &r);
	assert_int_equal(r.w0, 11);
	assert_true(r.w1 != 22);                     /* the second packet wrote where A was */
}

/* Seed: "A verification mode, called binding leak detection, is available.
 * This verification mode walks through the patch location list and rejects
 * packets that don't unbind or that don't reprogram allocations for each
 * split packet. ... set the NoDmaPatching member of the DXGK_VIDSCHCAPS
 * structure to 1" to opt out. */
static void binding_leak_detection_rejects_split_packets_that_neither_unbind_nor_reprogram(void **state)
{
	struct pt_patch r;
	pt_patch_run(PT_SPLIT_LEAK, true, false, OS_FAULT_NONE, &r);
	assert_int_equal(r.verify, -EPERM);
	assert_int_equal(r.bad, 0);                  /* packet 0 leaves slot 0 bound, packet 1 uses it unprogrammed */
	assert_int_equal(r.rc0, -EPERM);
	assert_int_equal(r.c0_rejected, 0);          /* nothing of it ran */
	for (int k = PT_SPLIT_GOOD; k <= PT_SPLIT_UNBIND; k++) {
		pt_patch_run((enum pt_split_kind)k, true, false, OS_FAULT_NONE, &r);   /* reprogrammed; unbound */
		assert_int_equal(r.verify, 0);
		assert_int_equal(r.w0, 11);
		assert_int_equal(r.w1, 22);
	}
	/* why: without the mode the leaking packet writes through a stale binding */
	pt_patch_run(PT_SPLIT_LEAK, false, false, OS_FAULT_NONE, &r);
	assert_int_equal(r.rc0, 0);
	assert_true(r.w1 != 22);
}

static void no_dma_patching_opts_out_of_binding_leak_detection(void **state)
{
	struct pt_patch r;
	pt_patch_run(PT_SPLIT_LEAK, true, true, OS_FAULT_NONE, &r);
	assert_int_equal(r.verify, 0);
	pt_assert_patched(&r);                       /* the virtual address survived the move */
}

static void broken_binding_leak_detection_walking_nothing_is_caught(void **state)
{
	struct pt_patch r;
	pt_patch_run(PT_SPLIT_LEAK, true, false, OS_FAULT_BINDING_LEAK_UNCHECKED, &r);
	assert_int_equal(r.rc0, 0);                  /* accepted ... */
	assert_true(r.w1 != 22);                     /* ... and it wrote through the stale binding */
}

/* Seed: "A preemption-aware driver must not change the content of a split
 * DMA buffer when it's broadcast to multiple adapters in linked display
 * adapter (LDA) mode ... if the packet was executed on another engine, it
 * would operate on the same copy of DMA buffer data."  Two engines stand
 * for two linked GPUs, A has a copy on each.  GPU 0 is held back when the
 * split buffer is broadcast, so it runs its
 * packets after GPU 1 (here GPU 0 waits for a fence first). */
struct pt_lda {
	uint64_t w[2][2], sum_after_push, sum_end;
};

static void pt_lda_run(enum os_fault fault, struct pt_lda *r)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.caps.engines = 2;
	cfg.caps.data_words = 1024;
	cfg.fault = fault;
	struct os_adapter *a = fbt_adapter(&cfg);
	struct os_queue *qs[2] = { fbt_queue(a, 0, 64), fbt_queue(a, 1, 64) };
	struct os_alloc *al;
	assert_int_equal(os_alloc_create(a, 8, 3, &al), 0);
	struct pt_splitbuf *s = malloc(sizeof(*s));
	pt_splitbuf_init(s, al, PT_SPLIT_GOOD);
	/* GPU 0 reaches the broadcast packets only once f is signaled, after
	 * the broadcast (a HW wait: the CPU signal orders the broadcast before
	 * GPU 0's reads, so the broken variant's rewrite is no data race) */
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f), 0);
	struct hw_cmd w = { .op = HW_CMD_WAIT, .fence = os_fence_hw(f), .value = 1 };
	assert_int_equal(os_queue_submit(qs[0], &w, 1), 0);
	const struct hw_cmd *shared[2];
	for (size_t k = 0; k < 2; k++)
		assert_int_equal(os_lda_broadcast_split_packet(qs, 2, &s->b, k, &shared[k]), 0);
	r->sum_after_push = os_dma_checksum(shared[0], s->b.packets[0].n) ^ os_dma_checksum(shared[1], s->b.packets[1].n);
	pt_wait_count(&s->c[1], 1);                 /* GPU 1 ran both packets */
	assert_int_equal(os_fence_signal_cpu(f, 1), 0);
	pt_wait_count(&s->c[1], 2);                 /* both GPUs ran both packets */
	r->sum_end = os_dma_checksum(shared[0], s->b.packets[0].n) ^ os_dma_checksum(shared[1], s->b.packets[1].n);
	for (unsigned g = 0; g < 2; g++)
		for (unsigned i = 0; i < 2; i++)
			r->w[g][i] = os_alloc_read(al, g, i);
	fbt_down(a);
	free(s);
}

static void linked_display_adapter_broadcast_split_dma_buffer_not_changed(void **state)
{
	struct pt_lda r;
	pt_lda_run(OS_FAULT_NONE, &r);
	for (unsigned g = 0; g < 2; g++) {            /* each GPU wrote its own copy */
		assert_int_equal(r.w[g][0], 11);
		assert_int_equal(r.w[g][1], 22);
	}
	assert_true(r.sum_after_push == r.sum_end);  /* the one copy never changed */
}

static void broken_lda_split_buffer_patched_per_gpu_is_caught(void **state)
{
	struct pt_lda r;
	pt_lda_run(OS_FAULT_LDA_PATCH_PER_GPU, &r);
	assert_true(r.w[0][0] != 11 || r.w[0][1] != 22);   /* GPU 0 ran GPU 1's addresses */
}

/* Two owners hold a queue off the run list: the OS's context suspension and
 * the video memory manager's eviction.  Neither releasing its hold puts
 * back a queue the other holds: an allocation brought back leaves a
 * suspended context's queue off, a resume leaves an evicted one off.  The
 * counter is the proof that nothing of the queue ran meanwhile. */
static void suspension_and_eviction_hold_a_queue_apart(void **state)
{
	for (int order = 0; order < 2; order++) {
		struct umt t = pt_up_slots(OS_FAULT_NONE);
		struct rt_queue *q = pt_queue(&t, true, 0);
		struct hw_ctx_alloc *c = os_hwqueue_ctx_alloc(rt_queue_os(q));
		struct hw_queue *hq = os_hwqueue_hw(rt_queue_os(q));
		_Atomic uint64_t n = 0;
		assert_int_equal(rt_queue_wait(q, umt_submit_count(q, &n), PT_DEADLINE_NS), 0);
		struct rt_queue *z = pt_queue(&t, true, 0);     /* another context on the GPU: q's may move */
		_Atomic uint64_t zn = 0;
		assert_int_equal(rt_queue_wait(z, umt_submit_count(z, &zn), PT_DEADLINE_NS), 0);
		assert_int_equal(os_ctx_alloc_evict(t.a, c), 0);
		os_context_suspend(rt_queue_context(q));
		uint64_t v = umt_submit_count(q, &n);          /* held twice: it must not run */
		if (order == 0) {
			assert_int_equal(os_ctx_alloc_make_resident(t.a, c), 0);
			assert_false(hw_queue_scheduled(hq));   /* still suspended */
			os_context_resume(rt_queue_context(q));
		} else {
			os_context_resume(rt_queue_context(q));
			assert_false(hw_queue_scheduled(hq));   /* still evicted */
			assert_int_equal(atomic_load(&n), 1);
			assert_int_equal(os_ctx_alloc_make_resident(t.a, c), 0);
		}
		assert_int_equal(rt_queue_wait(q, v, PT_DEADLINE_NS), 0);
		assert_int_equal(atomic_load(&n), 2);
		umt_down(&t);
	}
}

/* The holds race, made deterministic through hw_test_hold_hook: the video
 * memory manager releases its hold (an allocation brought back) on thread
 * A; right after its RMW (stage 0) the OS suspends the context on thread B
 * and waits for the engine to be out of the queue.  From then on nothing of
 * the queue may run until the resume.  With the split run-list flag
 * (HW_FAULT_HOLDS_SPLIT) A's stale store lands after B's hold: at stage 1
 * the test rings the queue (as the application may at any time) and the
 * engine runs it while it is suspended. */
struct hr {
	struct hw_queue *hq;
	struct os_context *ctx;
	_Atomic uint64_t *n;
	_Atomic int go, suspended, stage0;
	uint64_t n_at_suspend;        /* n once the suspension returned (written by B before `suspended`) */
};
static struct hr *hr_now;

static bool hr_wait(_Atomic int *flag, uint64_t bound_ns)
{
	struct timespec d = { 0, 100000 };
	for (uint64_t t0 = lf_now_ns(); !atomic_load(flag);) {
		if (lf_now_ns() - t0 >= bound_ns)
			return false;
		nanosleep(&d, NULL);
	}
	return true;
}

static void hr_hook(struct hw_queue *q, uint32_t who, bool on, int stage)
{
	struct hr *h = hr_now;
	if (!h || q != h->hq || who != HW_HOLD_VIDMM || on)
		return;
	if (stage == 0 && !atomic_exchange(&h->stage0, 1)) {
		atomic_store(&h->go, 1);
		hr_wait(&h->suspended, 10000000000ull);   /* the test asserts B finished */
		return;
	}
	if (stage == 1 && atomic_load(&h->suspended) && atomic_load(h->n) == h->n_at_suspend) {
		hw_queue_kick(q);
		struct timespec d = { 0, 100000 };
		for (int i = 0; i < 20000 && atomic_load(h->n) == h->n_at_suspend; i++)
			nanosleep(&d, NULL);   /* up to 2 s for the engine to run what it must not */
	}
}

static void *hr_suspender(void *arg)
{
	struct hr *h = arg;
	if (!hr_wait(&h->go, 10000000000ull))
		return NULL;
	os_context_suspend(h->ctx);
	h->n_at_suspend = atomic_load(h->n);
	atomic_store(&h->suspended, 1);
	return NULL;
}

struct hr_resident {
	struct umt *t;
	struct hw_ctx_alloc *c;
	int rc;
};

static void *hr_make_resident(void *arg)
{
	struct hr_resident *r = arg;
	r->rc = os_ctx_alloc_make_resident(r->t->a, r->c);
	return NULL;
}

/* Returns how many of the queue's commands ran while it was suspended. */
static uint64_t hr_run(enum hw_fault fault)
{
	struct os_config cfg;
	pt_config(&cfg, HW_GFX_PREEMPT_TRIANGLE_BOUNDARY, true, fault);
	cfg.caps.ctx_local_slots = 3;
	struct umt t = umt_up_with(&cfg, NULL);
	struct rt_queue *q = pt_queue(&t, true, 0);
	struct hw_ctx_alloc *c = os_hwqueue_ctx_alloc(rt_queue_os(q));
	_Atomic uint64_t n = 0, zn = 0;
	assert_int_equal(rt_queue_wait(q, umt_submit_count(q, &n), PT_DEADLINE_NS), 0);
	struct rt_queue *z = pt_queue(&t, true, 0);     /* another context on the GPU: q's may move */
	assert_int_equal(rt_queue_wait(z, umt_submit_count(z, &zn), PT_DEADLINE_NS), 0);
	assert_int_equal(os_ctx_alloc_evict(t.a, c), 0);
	uint64_t v = umt_submit_count(q, &n);           /* held by the eviction */
	struct hr h = { .hq = os_hwqueue_hw(rt_queue_os(q)), .ctx = rt_queue_context(q), .n = &n };
	struct hr_resident r = { .t = &t, .c = c };
	pthread_t a, b;
	hr_now = &h;
	hw_test_hold_hook = hr_hook;
	assert_int_equal(pthread_create(&b, NULL, hr_suspender, &h), 0);
	assert_int_equal(pthread_create(&a, NULL, hr_make_resident, &r), 0);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	hw_test_hold_hook = NULL;
	hr_now = NULL;
	assert_int_equal(r.rc, 0);
	assert_true(atomic_load(&h.suspended));           /* the interleaving happened */
	uint64_t ran = atomic_load(&n) - h.n_at_suspend;
	os_context_resume(h.ctx);
	assert_int_equal(rt_queue_wait(q, v, PT_DEADLINE_NS), 0);
	assert_int_equal(atomic_load(&n), 2);
	umt_down(&t);
	return ran;
}

static void hold_released_while_another_owner_holds_never_runs_the_queue(void **state)
{
	(void)state;
	assert_int_equal(hr_run(HW_FAULT_NONE), 0);
}

static void broken_holds_split_run_list_flag_is_caught(void **state)
{
	(void)state;
	assert_int_equal(hr_run(HW_FAULT_HOLDS_SPLIT), 1);
}

FB_TEST_MAIN(cmocka_unit_test(dma_boundary_engine_never_stops_mid_buffer),
	     cmocka_unit_test(context_allocations_destroyed_with_their_device),
	     cmocka_unit_test(finer_preemption_granularity_leaves_the_work_no_later),
	     cmocka_unit_test(hold_released_while_another_owner_holds_never_runs_the_queue),
	     cmocka_unit_test(broken_holds_split_run_list_flag_is_caught),
	     cmocka_unit_test(suspension_and_eviction_hold_a_queue_apart),
	     cmocka_unit_test(broken_engine_ignoring_its_granularity_is_caught),
	     cmocka_unit_test(primitive_boundary_stops_between_commands),
	     cmocka_unit_test(late_high_submission_still_preempts_where_the_granularity_allows),
	     cmocka_unit_test(triangle_boundary_stops_inside_a_command),
	     cmocka_unit_test(granularity_none_and_preemption_unaware_never_preempt),
	     cmocka_unit_test(preempted_hw_wait_resumes_and_completes_once),
	     cmocka_unit_test(scheduler_sends_preempt_command_for_kernel_mode_work),
	     cmocka_unit_test(flip_latched_at_vsync_never_torn),
	     cmocka_unit_test(flip_without_vsync_latch_tears_and_is_caught),
	     cmocka_unit_test(resubmission_paging_first_same_ids_others_new),
	     cmocka_unit_test(broken_resubmission_paging_with_new_ids_is_caught),
	     cmocka_unit_test(lazy_context_switch_runs_nothing_and_switches_to_null),
	     cmocka_unit_test(broken_context_switch_ignored_is_caught),
	     cmocka_unit_test(preempted_context_round_trips_through_its_allocation),
	     cmocka_unit_test(broken_restore_not_read_from_allocation_is_caught),
	     cmocka_unit_test(split_packet_is_a_full_buffer_another_context_runs_between),
	     cmocka_unit_test(preemption_unaware_runs_split_packets_back_to_back),
	     cmocka_unit_test(broken_split_end_not_a_boundary_is_caught),
	     cmocka_unit_test(kmd_cannot_disable_preemption_of_dma_packets),
	     cmocka_unit_test(broken_kmd_disabling_preemption_is_caught),
	     cmocka_unit_test(preemption_aware_without_multi_engine_aware_runs_the_windows_7_model),
	     cmocka_unit_test(broken_preemption_aware_read_without_multi_engine_aware_is_caught),
	     cmocka_unit_test(flip_on_vsync_mmio_required_with_preemption_aware),
	     cmocka_unit_test(broken_preemption_aware_without_flip_on_vsync_mmio_is_caught),
	     cmocka_unit_test(compute_preemption_granularity_dma_buffer_boundary),
	     cmocka_unit_test(compute_preemption_granularity_dispatch_boundary),
	     cmocka_unit_test(compute_preemption_granularity_thread_group_boundary),
	     cmocka_unit_test(broken_compute_preempted_at_graphics_granularity_is_caught),
	     cmocka_unit_test(paging_buffers_scheduled_before_any_other_commands_on_that_engine),
	     cmocka_unit_test(broken_paging_not_first_on_the_engine_is_caught),
	     cmocka_unit_test(init_context_resource_and_content_preserved_across_eviction_and_relocation),
	     cmocka_unit_test(broken_eviction_discarding_context_content_is_caught),
	     cmocka_unit_test(broken_missing_init_context_resource_is_caught),
	     cmocka_unit_test(device_context_allocation_remarks_restrictions_and_residency),
	     cmocka_unit_test(broken_device_context_allocation_evicted_is_caught),
	     cmocka_unit_test(patch_location_list_for_split_dma_buffers),
	     cmocka_unit_test(broken_split_packets_patched_from_one_list_is_caught),
	     cmocka_unit_test(binding_leak_detection_rejects_split_packets_that_neither_unbind_nor_reprogram),
	     cmocka_unit_test(no_dma_patching_opts_out_of_binding_leak_detection),
	     cmocka_unit_test(broken_binding_leak_detection_walking_nothing_is_caught),
	     cmocka_unit_test(linked_display_adapter_broadcast_split_dma_buffer_not_changed),
	     cmocka_unit_test(broken_lda_split_buffer_patched_per_gpu_is_caught))
