/* tests/test_fence_cross_adapter.c — cross-adapter fences (seed native-gpu-fence,
 * "Cross-adapter native fences" and "Cross-adapter wait/signal combinations").
 *
 * One test per column pair of each scenario table, named after it:
 *   scenario1_*   dGPU and iGPU both native
 *   scenario2a_*  iGPU not native; wait on the iGPU, signal on the dGPU
 *   scenario2b_*  iGPU not native; signal on the iGPU, wait on the dGPU
 * with "10" as the seed's value.  Then the rules around them: default type
 * only, one CurrentValue in system memory, MonitoredValue held at 0 whatever
 * the waiters, the NULL-payload scan, a lock-step stress that counts lost
 * wake-ups, and the deliberately broken variants that stress catches; the
 * rewinding race across adapters (a value signaled then rewound still
 * releases the other adapter's waits) and its broken variant. */
#include <pthread.h>
#include <string.h>

#include "tests/fb_test.h"
#include "tests/fence_test_util.h"

#define V 10   /* the seed's (hFence, 10) */

static struct os_adapter *xadapter(bool native, enum hw_irq_payload payload)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.caps.native_fence = native;
	cfg.native_fence_enabled = native;
	cfg.caps.payload = payload;
	return fbt_adapter(&cfg);
}

/* The two GPUs, the fence on each, a queue on each, and a marker fence on
 * each that a GPU wait's queue signals once it is past the wait. */
struct xrig {
	struct os_adapter *dgpu, *igpu;
	struct os_fence *fd, *fi;          /* the cross-adapter fence's instances */
	struct os_queue *qd, *qi;
	struct os_fence *md, *mi;          /* markers */
};

/* Scenario 1 / 2a: created on the dGPU (native), opened on the iGPU.
 * Scenario 2b: created on the iGPU (a monitored fence), opened on the dGPU
 * as a native fence (seed: "a regular monitored fence object is created on
 * GPU1 and opened as a native fence on GPU2"). */
static void xrig_up(struct xrig *r, bool igpu_native, bool create_on_igpu)
{
	memset(r, 0, sizeof(*r));
	r->dgpu = xadapter(true, HW_PAYLOAD_FENCE_ARRAY);
	r->igpu = xadapter(igpu_native, HW_PAYLOAD_FENCE_ARRAY);
	if (create_on_igpu) {
		assert_int_equal(os_fence_create(r->igpu, OS_FENCE_MONITORED, 0, OS_FENCE_CROSS_ADAPTER, &r->fi), 0);
		assert_int_equal(os_fence_open_cross(r->fi, r->dgpu, OS_FENCE_NATIVE, &r->fd), 0);
	} else {
		assert_int_equal(os_fence_create(r->dgpu, OS_FENCE_NATIVE, 0, OS_FENCE_CROSS_ADAPTER, &r->fd), 0);
		assert_int_equal(os_fence_open_cross(r->fd, r->igpu, OS_FENCE_NATIVE, &r->fi), 0);
	}
	assert_true(os_fence_is_native(r->fd));
	assert_int_equal(os_fence_is_native(r->fi), igpu_native);
	assert_true(os_fence_is_cross_adapter(r->fd) && os_fence_is_cross_adapter(r->fi));
	r->qd = fbt_queue(r->dgpu, 0, 64);
	r->qi = fbt_queue(r->igpu, 0, 64);
	assert_int_equal(os_fence_create(r->dgpu, OS_FENCE_NATIVE, 0, 0, &r->md), 0);
	assert_int_equal(os_fence_create(r->igpu, OS_FENCE_NATIVE, 0, 0, &r->mi), 0);
}

static void xrig_down(struct xrig *r)
{
	os_fence_destroy(r->fd);
	os_fence_destroy(r->fi);
	fbt_down(r->dgpu);
	fbt_down(r->igpu);
}

/* A native instance's MonitoredValue: 0, always. */
static void assert_mv_zero(struct os_fence *f)
{
	if (os_fence_is_native(f))
		assert_true(atomic_load(os_fence_hw(f)->mv) == 0);
}

static struct os_cross_stats xstats(struct os_adapter *a)
{
	struct os_cross_stats s;
	os_adapter_cross_stats(a, &s);
	return s;
}

/* ---- the wait and signal columns ---- */

enum wait_kind { WAIT_GPU, WAIT_CPU };
enum signal_kind { SIGNAL_GPU, SIGNAL_CPU };

struct xwait {
	enum wait_kind kind;
	struct os_fence *f, *marker;
	struct lf_event ev;
};

/* WaitFromGPU: "UMD inserts a wait for hFence CurrentValue == 10 instruction
 * in the command buffer" (native), or the OS tracks it in its monitored fence
 * waiting list (not native: the queue's later work is held on the CPU).
 * WaitFromCPU: the OS tracks a CPU waiter. */
static void xwait_begin(struct xwait *w, enum wait_kind kind, struct os_queue *q, struct os_fence *f,
			struct os_fence *marker)
{
	w->kind = kind;
	w->f = f;
	w->marker = marker;
	if (kind == WAIT_GPU) {
		struct hw_cmd c[2] = {
			{ .op = HW_CMD_WAIT, .fence = os_fence_hw(f), .value = V },
			{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(marker), .value = 1 },
		};
		assert_int_equal(os_queue_submit(q, c, 2), 0);
	} else {
		lf_event_init(&w->ev);
		assert_int_equal(os_fence_wait_event(f, V, &w->ev), 0);
	}
	fbt_settle();
	/* nothing goes on before the signal */
	if (kind == WAIT_GPU)
		assert_int_equal(os_fence_value(marker), 0);
	else
		assert_false(lf_event_is_set(&w->ev));
}

static void xwait_end(struct xwait *w)
{
	if (w->kind == WAIT_GPU)
		assert_true(fbt_eventually(os_fence_value(w->marker) == 1));
	else
		assert_int_equal(lf_event_wait(&w->ev, 0, 5000000000ll), 0);
}

/* SignalFromGpu: "UMD inserts a write hFence CurrentValue = 10 signal
 * instruction in the command buffer".  SignalFromCpu: the runtime calls
 * D3DKMTSignalSynchronizationObjectFromCpu. */
static void xsignal(enum signal_kind kind, struct os_queue *q, struct os_fence *f)
{
	if (kind == SIGNAL_GPU)
		fbt_signal_gpu(q, f, V);
	else
		assert_int_equal(os_fence_signal_cpu(f, V), 0);
}

/* One column pair: the waiter on adapter w (instance fw, queue qw, marker mw),
 * the signal on adapter s (instance fs, queue qs).  Checks what every table
 * row says and what each adapter's OS did. */
static void xpair(struct os_adapter *s, struct os_fence *fs, struct os_queue *qs, enum signal_kind sk,
		  struct os_adapter *w, struct os_fence *fw, struct os_queue *qw, struct os_fence *mw,
		  enum wait_kind wk)
{
	struct xwait wt;
	xwait_begin(&wt, wk, qw, fw, mw);
	assert_mv_zero(fs);
	assert_mv_zero(fw);   /* a CPU waiter did not raise it */
	xsignal(sk, qs, fs);
	xwait_end(&wt);
	assert_int_equal(os_fence_value(fw), V);   /* one CurrentValue */
	/* counters are bumped around the wake-ups they cause: let them land,
	 * then give anything extra a moment to show */
	assert_true(fbt_eventually(xstats(s).propagated >= 1 && xstats(w).received >= 1));
	fbt_settle();

	/* the signaling adapter */
	if (sk == SIGNAL_GPU) {
		/* "VidSch receives a native fence signaled ISR when CurrentValue is
		 * written (because MonitoredValue == 0 always)" — no CPU waiter on
		 * this adapter, still an interrupt (a monitored fence: always one) */
		assert_true(fbt_eventually(fbt_stats(s).interrupts >= 1));
		assert_int_equal(fbt_stats(s).gpu_interrupts, 1);
	} else {
		/* "VidSch calls DxgkDdiUpdateCurrentValuesFromCpu(hFence, 10)" (native) */
		assert_int_equal(fbt_ddi_calls(s, OS_DDI_UPDATE_CV_FROM_CPU, os_fence_handle(fs), V),
				 os_fence_is_native(fs) ? 1 : 0);
		assert_int_equal(fbt_stats(s).gpu_interrupts, 0);
	}
	/* "VidSch propagates the signal (hFence, 10)" — once */
	assert_int_equal(xstats(s).propagated, 1);

	/* the waiting adapter */
	assert_int_equal(xstats(w).received, 1);
	if (os_fence_is_native(fw)) {
		/* "VidSch receives the propagated signal and calls
		 * DxgkDdiUpdateCurrentValuesFromCpu(hFence, NotificationOnly=TRUE)" */
		assert_int_equal(fbt_ddi_calls(w, OS_DDI_UPDATE_CV_NOTIFY_ONLY, os_fence_handle(fw), V), 1);
	} else {
		/* "VidSch receives the propagated signal and observes new fence value":
		 * a monitored fence has no native fence DDI */
		assert_int_equal(os_adapter_ddi_count(w, OS_DDI_UPDATE_CV_NOTIFY_ONLY), 0);
	}
	/* the waiting adapter's interrupt thread ran only where it had to: a CPU
	 * waiter ("signaling the KEVENT") or a CPU-held command buffer ("unblocks
	 * software contexts"); a native GPU wait goes on in hardware ("KMD
	 * rescans the run list") */
	bool needs_os = wk == WAIT_CPU || !os_fence_is_native(fw);
	assert_int_equal(xstats(w).soft_raised, needs_os ? 1 : 0);
	if (wk == WAIT_GPU && !os_fence_is_native(fw))
		assert_int_equal(os_queue_held(qw), 0);
	assert_int_equal(fbt_stats(w).lost_wakeups + fbt_stats(s).lost_wakeups, 0);
	assert_mv_zero(fs);
	assert_mv_zero(fw);
}

/* ---- Scenario 1: both GPUs native; the iGPU waits, the dGPU signals ---- */

static void scenario1_wait_from_gpu_signal_from_gpu(void **state)
{
	struct xrig r;
	xrig_up(&r, true, false);
	xpair(r.dgpu, r.fd, r.qd, SIGNAL_GPU, r.igpu, r.fi, r.qi, r.mi, WAIT_GPU);
	xrig_down(&r);
}

static void scenario1_wait_from_gpu_signal_from_cpu(void **state)
{
	struct xrig r;
	xrig_up(&r, true, false);
	xpair(r.dgpu, r.fd, r.qd, SIGNAL_CPU, r.igpu, r.fi, r.qi, r.mi, WAIT_GPU);
	xrig_down(&r);
}

static void scenario1_wait_from_cpu_signal_from_gpu(void **state)
{
	struct xrig r;
	xrig_up(&r, true, false);
	xpair(r.dgpu, r.fd, r.qd, SIGNAL_GPU, r.igpu, r.fi, r.qi, r.mi, WAIT_CPU);
	xrig_down(&r);
}

static void scenario1_wait_from_cpu_signal_from_cpu(void **state)
{
	struct xrig r;
	xrig_up(&r, true, false);
	xpair(r.dgpu, r.fd, r.qd, SIGNAL_CPU, r.igpu, r.fi, r.qi, r.mi, WAIT_CPU);
	xrig_down(&r);
}

/* ---- Scenario 2a: iGPU not native (opens the fence as a monitored fence);
 * the iGPU waits, the dGPU signals ---- */

static void scenario2a_wait_from_gpu_signal_from_gpu(void **state)
{
	struct xrig r;
	xrig_up(&r, false, false);
	xpair(r.dgpu, r.fd, r.qd, SIGNAL_GPU, r.igpu, r.fi, r.qi, r.mi, WAIT_GPU);
	xrig_down(&r);
}

static void scenario2a_wait_from_gpu_signal_from_cpu(void **state)
{
	struct xrig r;
	xrig_up(&r, false, false);
	xpair(r.dgpu, r.fd, r.qd, SIGNAL_CPU, r.igpu, r.fi, r.qi, r.mi, WAIT_GPU);
	xrig_down(&r);
}

static void scenario2a_wait_from_cpu_signal_from_gpu(void **state)
{
	struct xrig r;
	xrig_up(&r, false, false);
	xpair(r.dgpu, r.fd, r.qd, SIGNAL_GPU, r.igpu, r.fi, r.qi, r.mi, WAIT_CPU);
	xrig_down(&r);
}

static void scenario2a_wait_from_cpu_signal_from_cpu(void **state)
{
	struct xrig r;
	xrig_up(&r, false, false);
	xpair(r.dgpu, r.fd, r.qd, SIGNAL_CPU, r.igpu, r.fi, r.qi, r.mi, WAIT_CPU);
	xrig_down(&r);
}

/* ---- Scenario 2b: iGPU not native; the iGPU signals, the dGPU waits.  The
 * fence is a monitored fence created on the iGPU and opened as a native
 * fence on the dGPU. ---- */

static void scenario2b_signal_from_gpu_wait_from_gpu(void **state)
{
	struct xrig r;
	xrig_up(&r, false, true);
	xpair(r.igpu, r.fi, r.qi, SIGNAL_GPU, r.dgpu, r.fd, r.qd, r.md, WAIT_GPU);
	xrig_down(&r);
}

static void scenario2b_signal_from_gpu_wait_from_cpu(void **state)
{
	struct xrig r;
	xrig_up(&r, false, true);
	xpair(r.igpu, r.fi, r.qi, SIGNAL_GPU, r.dgpu, r.fd, r.qd, r.md, WAIT_CPU);
	xrig_down(&r);
}

static void scenario2b_signal_from_cpu_wait_from_gpu(void **state)
{
	struct xrig r;
	xrig_up(&r, false, true);
	xpair(r.igpu, r.fi, r.qi, SIGNAL_CPU, r.dgpu, r.fd, r.qd, r.md, WAIT_GPU);
	xrig_down(&r);
}

static void scenario2b_signal_from_cpu_wait_from_cpu(void **state)
{
	struct xrig r;
	xrig_up(&r, false, true);
	xpair(r.igpu, r.fi, r.qi, SIGNAL_CPU, r.dgpu, r.fd, r.qd, r.md, WAIT_CPU);
	xrig_down(&r);
}

/* ---- the rules ---- */

/* "A cross-adapter fence must be created with type D3DDDI_NATIVEFENCE_TYPE_DEFAULT.
 * Otherwise, D3DKMTCreateNativeFence fails."  And the open's own errors. */
static void cross_requires_default_type(void **state)
{
	struct os_adapter *a = xadapter(true, HW_PAYLOAD_FENCE_ARRAY), *b = xadapter(true, HW_PAYLOAD_FENCE_ARRAY);
	struct os_fence *f, *g, *plain;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, OS_FENCE_CROSS_ADAPTER | OS_FENCE_LOCAL_MEMORY, &f),
			 -EINVAL);
	assert_int_equal(os_adapter_ddi_count(a, OS_DDI_CREATE_NATIVE_FENCE), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &plain), 0);
	assert_int_equal(os_fence_open_cross(plain, b, OS_FENCE_NATIVE, &g), -EINVAL);
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, OS_FENCE_CROSS_ADAPTER, &f), 0);
	assert_int_equal(os_fence_open_cross(f, a, OS_FENCE_NATIVE, &g), -EEXIST);
	assert_int_equal(os_fence_open_cross(f, b, OS_FENCE_NATIVE, &g), 0);
	assert_int_equal(os_fence_open_cross(f, b, OS_FENCE_NATIVE, &g), -EEXIST);
	/* a GPU that writes 32 bits cannot share a 64-bit CurrentValue */
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.caps.native_fence = false;
	cfg.native_fence_enabled = false;
	cfg.caps.no_64bit_atomics = true;
	struct os_adapter *old = fbt_adapter(&cfg);
	struct os_fence *h;
	assert_int_equal(os_fence_open_cross(f, old, OS_FENCE_NATIVE, &h), -EOPNOTSUPP);
	os_fence_destroy(g);
	os_fence_destroy(f);
	os_fence_destroy(plain);
	fbt_down(old);
	fbt_down(a);
	fbt_down(b);
}

/* "All GPUs share the same copy of CurrentValue storage, which is always
 * allocated in system memory"; "Each GPU gets its own copy of MonitoredValue".
 * The shared value outlives the instance that created it. */
static void cross_one_current_value_in_system_memory(void **state)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.caps.storage = HW_STORAGE_LOCAL;      /* the dGPU keeps its fences in local memory */
	struct os_adapter *d = fbt_adapter(&cfg), *i = xadapter(true, HW_PAYLOAD_FENCE_ARRAY);
	struct os_fence *fd, *fi, *local;
	assert_int_equal(os_fence_create(d, OS_FENCE_NATIVE, 5, 0, &local), 0);
	assert_true(os_fence_hw(local)->local);
	assert_int_equal(os_fence_create(d, OS_FENCE_NATIVE, 5, OS_FENCE_CROSS_ADAPTER, &fd), 0);
	assert_int_equal(os_fence_open_cross(fd, i, OS_FENCE_NATIVE, &fi), 0);
	assert_ptr_equal(os_fence_hw(fd)->cv, os_fence_hw(fi)->cv);
	assert_false(os_fence_hw(fd)->local);
	assert_false(os_fence_hw(fi)->local);
	assert_ptr_not_equal(os_fence_hw(fd)->mv, os_fence_hw(fi)->mv);
	assert_true(os_fence_handle(fd) != os_fence_handle(fi));
	assert_int_equal(os_fence_value(fi), 5);
	assert_int_equal(os_fence_signal_cpu(fd, 6), 0);
	assert_int_equal(os_fence_value(fi), 6);
	/* the creator goes; the value stays for the other GPU */
	os_fence_destroy(fd);
	os_adapter_quiesce(d);
	assert_int_equal(os_fence_signal_cpu(fi, 7), 0);
	assert_int_equal(os_fence_wait_cpu(fi, 7, 5000000000ll), 0);
	os_fence_destroy(fi);
	os_fence_destroy(local);
	fbt_down(d);
	fbt_down(i);
}

/* "setting MonitoredValue for the cross-adapter fence to 0 for its lifetime":
 * CPU waiters on either adapter never raise it, so every GPU signal
 * interrupts — with no waiter anywhere too ("the power benefit of reduced CPU
 * interrupts is lost") — while a plain native fence beside it stays silent. */
static void cross_mv_held_at_zero_whatever_the_waiters(void **state)
{
	struct xrig r;
	xrig_up(&r, true, false);
	struct os_fence *plain;
	assert_int_equal(os_fence_create(r.dgpu, OS_FENCE_NATIVE, 0, 0, &plain), 0);
	for (uint64_t v = 1; v <= 20; v++) {
		fbt_signal_gpu(r.qd, r.fd, v);
		fbt_signal_gpu(r.qd, plain, v);
	}
	assert_true(fbt_eventually(os_fence_value(plain) == 20));
	assert_true(fbt_eventually(fbt_stats(r.dgpu).interrupts == 20));
	assert_int_equal(fbt_stats(r.dgpu).gpu_interrupts, 20);   /* the plain fence: none */
	assert_mv_zero(r.fd);
	assert_mv_zero(r.fi);

	struct lf_event ev[6];
	const uint64_t at[6] = { 30, 25, 40, 22, 35, 21 };
	for (int k = 0; k < 6; k++) {
		lf_event_init(&ev[k]);
		assert_int_equal(os_fence_wait_event(k % 2 ? r.fi : r.fd, at[k], &ev[k]), 0);
		assert_mv_zero(r.fd);
		assert_mv_zero(r.fi);
	}
	for (uint64_t v = 21; v <= 40; v++) {
		fbt_signal_gpu(r.qi, r.fi, v);   /* the iGPU signals now */
		if (v == 30)
			for (int k = 0; k < 6; k++)
				if (at[k] <= 30)
					assert_int_equal(lf_event_wait(&ev[k], 0, 5000000000ll), 0);
		if (v == 30) {
			assert_mv_zero(r.fd);
			assert_mv_zero(r.fi);
		}
	}
	for (int k = 0; k < 6; k++)
		assert_int_equal(lf_event_wait(&ev[k], 0, 5000000000ll), 0);
	assert_true(fbt_eventually(fbt_stats(r.igpu).interrupts == 20));
	assert_int_equal(fbt_stats(r.igpu).gpu_interrupts, 20);
	assert_mv_zero(r.fd);
	assert_mv_zero(r.fi);
	os_fence_destroy(plain);
	xrig_down(&r);
}

/* With a NULL pSignaledNativeFenceArray the OS scans: the scan finds the
 * cross-adapter fence's new value and propagates it all the same. */
static void cross_null_payload_scan_propagates(void **state)
{
	struct os_adapter *d = xadapter(true, HW_PAYLOAD_NULL), *i = xadapter(true, HW_PAYLOAD_NULL);
	struct os_fence *fd, *fi;
	assert_int_equal(os_fence_create(d, OS_FENCE_NATIVE, 0, OS_FENCE_CROSS_ADAPTER, &fd), 0);
	assert_int_equal(os_fence_open_cross(fd, i, OS_FENCE_NATIVE, &fi), 0);
	struct os_queue *q = fbt_queue(d, 0, 64);
	struct lf_event ev;
	lf_event_init(&ev);
	assert_int_equal(os_fence_wait_event(fi, V, &ev), 0);
	fbt_signal_gpu(q, fd, V);
	assert_int_equal(lf_event_wait(&ev, 0, 5000000000ll), 0);
	assert_int_equal(fbt_ddi_calls(i, OS_DDI_UPDATE_CV_NOTIFY_ONLY, os_fence_handle(fi), V), 1);
	os_fence_destroy(fd);
	os_fence_destroy(fi);
	fbt_down(d);
	fbt_down(i);
}

/* ---- lock-step stress: signals alternate between the GPUs, the other one's
 * CPU waiter is asleep when each lands; a signal not propagated is a lost
 * wake-up the OS counts ---- */

struct xstress {
	uint64_t rounds, deadline_ns;
	uint64_t work_ns;             /* GPU work before each signal; 0: 0..18 us by round */
	uint64_t lost, completed;
};

static void xstress_run(struct xrig *r, struct xstress *x)
{
	for (uint64_t v = 1; v <= x->rounds; v++) {
		bool from_d = v & 1;
		struct hw_cmd c[2] = {
			/* 0..18 us: sometimes the waiter sleeps first */
			{ .op = HW_CMD_WORK, .arg = x->work_ns ? x->work_ns : (v % 7) * 3000 },
			{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(from_d ? r->fd : r->fi), .value = v },
		};
		os_queue_submit(from_d ? r->qd : r->qi, c, 2);
		int rc = os_fence_wait_cpu(from_d ? r->fi : r->fd, v, (int64_t)x->deadline_ns);
		if (rc == -ETIMEDOUT)
			os_fence_wait_cpu(from_d ? r->fi : r->fd, v, -1);
		x->completed++;
	}
	fbt_settle();
	x->lost = fbt_stats(r->dgpu).lost_wakeups + fbt_stats(r->igpu).lost_wakeups;
}

static void cross_lockstep_stress_no_lost_wakeups(void **state)
{
	struct xrig r;
	xrig_up(&r, true, false);
	struct xstress x = { .rounds = 400, .deadline_ns = 2000000000ull };
	xstress_run(&r, &x);
	struct os_cross_stats sd = xstats(r.dgpu), si = xstats(r.igpu);
	printf("  stress: %llu rounds, %llu lost, propagated d->i %llu i->d %llu, irq d %llu i %llu\n",
	       (unsigned long long)x.completed, (unsigned long long)x.lost,
	       (unsigned long long)sd.propagated, (unsigned long long)si.propagated,
	       (unsigned long long)fbt_stats(r.dgpu).gpu_interrupts,
	       (unsigned long long)fbt_stats(r.igpu).gpu_interrupts);
	assert_int_equal(x.completed, x.rounds);
	assert_int_equal(x.lost, 0);
	/* every signal interrupts its GPU; each value is announced to the other once at most */
	assert_int_equal(fbt_stats(r.dgpu).gpu_interrupts, x.rounds / 2 + x.rounds % 2);
	assert_int_equal(fbt_stats(r.igpu).gpu_interrupts, x.rounds / 2);
	assert_true(sd.propagated <= x.rounds && si.propagated <= x.rounds);
	assert_mv_zero(r.fd);
	assert_mv_zero(r.fi);
	xrig_down(&r);
}

/* The same stress catches both broken variants: a fence whose interrupt
 * threads do not propagate, and one whose waiter set raises MonitoredValue
 * above 0 (the dGPU then stays silent while only the iGPU waits). */
static void cross_broken_variants_are_caught(void **state)
{
	const unsigned faults[2] = { OS_FENCE_FAULT_NO_PROPAGATE, OS_FENCE_FAULT_MV_FOLLOWS_WAITERS };
	for (int k = 0; k < 2; k++) {
		struct xrig r = { 0 };
		r.dgpu = xadapter(true, HW_PAYLOAD_FENCE_ARRAY);
		r.igpu = xadapter(true, HW_PAYLOAD_FENCE_ARRAY);
		assert_int_equal(os_fence_create(r.dgpu, OS_FENCE_NATIVE, 0, OS_FENCE_CROSS_ADAPTER | faults[k], &r.fd), 0);
		assert_int_equal(os_fence_open_cross(r.fd, r.igpu, OS_FENCE_NATIVE, &r.fi), 0);
		r.qd = fbt_queue(r.dgpu, 0, 64);
		r.qi = fbt_queue(r.igpu, 0, 64);
		if (faults[k] == OS_FENCE_FAULT_MV_FOLLOWS_WAITERS)
			assert_true(atomic_load(os_fence_hw(r.fd)->mv) != 0);   /* what the waiter-set rule forbids */
		/* 2 ms of GPU work: the waiter is asleep before each signal lands */
		struct xstress x = { .rounds = 3, .deadline_ns = 100000000ull, .work_ns = 2000000 };
		xstress_run(&r, &x);
		printf("  broken variant %#x: %llu of %llu waits lost\n", faults[k],
		       (unsigned long long)x.lost, (unsigned long long)x.rounds);
		assert_int_equal(x.completed, x.rounds);
		assert_true(x.lost >= 1);
		xrig_down(&r);
	}
}

/* ---- the rewinding race across adapters ----
 * Seed multi-engine-synchronization: "If a race does occur, between a value
 * which will satisfy an outstanding wait, and a lower value which will not,
 * the wait will be satisfied regardless."  The signaling adapter writes 25
 * then 0, back to back (CPU: two Signals; GPU: one buffer); the waits on the
 * other adapter's instance for 20 were registered before (a CPU event wait;
 * on a monitored instance also a GPU wait held on the CPU) and every one of
 * them is due.  The other adapter learns of the 25 only from the signaling
 * adapter's interrupt thread, which may run after the 0 landed. */

enum { XR_HI = 25, XR_WANT = 20 };

struct xrace {
	uint64_t races, due, lost, early;
	uint64_t deadline_ns;         /* a due wait not released this long after its race is lost */
	uint64_t stop_after_lost;     /* end early (0: never) */
};

/* Bounded: until *c reaches n or deadline_ns passes; whether it did. */
static bool xr_count_reaches(_Atomic uint64_t *c, uint64_t n, uint64_t deadline_ns)
{
	uint64_t end = lf_now_ns() + deadline_ns;
	while (atomic_load(c) < n && lf_now_ns() < end)
		sched_yield();
	return atomic_load(c) >= n;
}

static void xr_run(struct os_adapter *s, struct os_fence *fs, struct os_queue *qs, enum signal_kind sk,
		   struct os_adapter *w, struct os_fence *fw, struct os_queue *qw, struct xrace *x, uint64_t races)
{
	bool held = !os_fence_is_native(fw);   /* a monitored instance: its GPU waits are held on the CPU */
	_Atomic uint64_t held_done = 0, gpu_done = 0;
	for (uint64_t k = 0; k < races && !(x->stop_after_lost && x->lost >= x->stop_after_lost); k++) {
		struct lf_event ev;
		lf_event_init(&ev);
		assert_int_equal(os_fence_wait_event(fw, XR_WANT, &ev), 0);
		if (held) {
			struct hw_cmd c[2] = {
				{ .op = HW_CMD_WAIT, .fence = os_fence_hw(fw), .value = XR_WANT },
				{ .op = HW_CMD_COUNT, .stamp = &held_done },
			};
			assert_int_equal(os_queue_submit(qw, c, 2), 0);
		}
		x->early += lf_event_is_set(&ev) + (atomic_load(&held_done) > k);
		if (sk == SIGNAL_CPU) {
			assert_int_equal(os_fence_signal_cpu(fs, XR_HI), 0);
			assert_int_equal(os_fence_signal_cpu(fs, 0), 0);
		} else {
			struct hw_cmd c[3] = {
				{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(fs), .value = XR_HI },
				{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(fs), .value = 0 },
				{ .op = HW_CMD_COUNT, .stamp = &gpu_done },
			};
			assert_int_equal(os_queue_submit(qs, c, 3), 0);
		}
		bool lost_ev = lf_event_wait(&ev, 0, (int64_t)x->deadline_ns) != 0;
		bool lost_held = held && !xr_count_reaches(&held_done, k + 1, x->deadline_ns);
		x->due += 1 + held;
		x->lost += lost_ev + lost_held;
		x->races++;
		if (sk == SIGNAL_GPU)
			assert_true(xr_count_reaches(&gpu_done, k + 1, 5000000000ull));
		if (lost_ev || lost_held) {
			/* a broken variant: a value above every one signaled so
			 * far until what is stuck is released, then back to 0 */
			assert_int_equal(os_fence_signal_cpu(fs, XR_HI + x->lost), 0);
			assert_int_equal(lf_event_wait(&ev, 0, 5000000000ll), 0);
			assert_true(!held || xr_count_reaches(&held_done, k + 1, 5000000000ull));
			assert_int_equal(os_fence_signal_cpu(fs, 0), 0);
		}
	}
}

/* Every combination: both native (scenario 1), a monitored instance waiting
 * (2a: event and held GPU wait), a monitored instance signaling (2b); CPU
 * and GPU signals.  Returns the totals. */
static struct xrace xr_all(unsigned faults, uint64_t races_each, uint64_t deadline_ns, uint64_t stop_after_lost)
{
	struct xrace x = { .deadline_ns = deadline_ns, .stop_after_lost = stop_after_lost };
	for (int cfg = 0; cfg < 3; cfg++) {
		for (int sk = SIGNAL_GPU; sk <= SIGNAL_CPU; sk++) {
			struct xrig r = { 0 };
			bool igpu_native = cfg == 0, on_igpu = cfg == 2;
			r.dgpu = xadapter(true, HW_PAYLOAD_FENCE_ARRAY);
			r.igpu = xadapter(igpu_native, HW_PAYLOAD_FENCE_ARRAY);
			unsigned fl = OS_FENCE_CROSS_ADAPTER | faults;
			if (on_igpu) {
				assert_int_equal(os_fence_create(r.igpu, OS_FENCE_MONITORED, 0, fl, &r.fi), 0);
				assert_int_equal(os_fence_open_cross(r.fi, r.dgpu, OS_FENCE_NATIVE, &r.fd), 0);
			} else {
				assert_int_equal(os_fence_create(r.dgpu, OS_FENCE_NATIVE, 0, fl, &r.fd), 0);
				assert_int_equal(os_fence_open_cross(r.fd, r.igpu, OS_FENCE_NATIVE, &r.fi), 0);
			}
			r.qd = fbt_queue(r.dgpu, 0, 64);
			r.qi = fbt_queue(r.igpu, 0, 64);
			struct xrace one = x;
			one.races = one.due = one.lost = one.early = 0;
			if (on_igpu)
				xr_run(r.igpu, r.fi, r.qi, (enum signal_kind)sk, r.dgpu, r.fd, r.qd, &one, races_each);
			else
				xr_run(r.dgpu, r.fd, r.qd, (enum signal_kind)sk, r.igpu, r.fi, r.qi, &one, races_each);
			printf("  rewind race %s, %s signal: %llu races, %llu due, %llu lost, %llu early\n",
			       cfg == 0 ? "1 (both native)" : cfg == 1 ? "2a (monitored waits)" : "2b (monitored signals)",
			       sk == SIGNAL_CPU ? "CPU" : "GPU", (unsigned long long)one.races,
			       (unsigned long long)one.due, (unsigned long long)one.lost,
			       (unsigned long long)one.early);
			assert_int_equal(fbt_stats(r.dgpu).lost_wakeups + fbt_stats(r.igpu).lost_wakeups, 0);
			x.races += one.races;
			x.due += one.due;
			x.lost += one.lost;
			x.early += one.early;
			xrig_down(&r);
		}
	}
	return x;
}

static void cross_rewind_race_loses_nothing(void **state)
{
	struct xrace x = xr_all(0, 200, 2000000000ull, 1);
	assert_true(x.races >= 1000);
	assert_int_equal(x.lost, 0);
	assert_int_equal(x.early, 0);
}

/* The broken variant: the value propagated is the CurrentValue read by the
 * interrupt thread, not the value signaled; the same race catches it. */
static void cross_rewind_broken_variant_is_caught(void **state)
{
	struct xrace x = xr_all(OS_FENCE_FAULT_PROPAGATE_CURRENT, 20, 50000000ull, 2);
	printf("  broken variant %#x: %llu of %llu due waits lost\n", OS_FENCE_FAULT_PROPAGATE_CURRENT,
	       (unsigned long long)x.lost, (unsigned long long)x.due);
	assert_true(x.lost >= 1);
}

/* Instances come and go on the iGPU while the dGPU keeps signaling: the
 * propagating interrupt thread never touches a closed instance (ASan), and
 * each open gets a fresh instance with MV 0. */
struct churn {
	struct os_queue *q;
	struct os_fence *f;
	_Atomic bool stop;
	uint64_t signals;
};

static void *churn_signaler(void *arg)
{
	struct churn *c = arg;
	while (!atomic_load(&c->stop)) {
		c->signals++;
		fbt_signal_gpu(c->q, c->f, c->signals);
		struct timespec ts = { 0, 30000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void cross_instances_come_and_go_while_signaling(void **state)
{
	struct os_adapter *d = xadapter(true, HW_PAYLOAD_FENCE_ARRAY), *i = xadapter(true, HW_PAYLOAD_FENCE_ARRAY);
	struct churn c = { .q = fbt_queue(d, 0, 256) };
	assert_int_equal(os_fence_create(d, OS_FENCE_NATIVE, 0, OS_FENCE_CROSS_ADAPTER, &c.f), 0);
	pthread_t t;
	pthread_create(&t, NULL, churn_signaler, &c);
	for (int k = 0; k < 40; k++) {
		struct os_fence *fi;
		assert_int_equal(os_fence_open_cross(c.f, i, OS_FENCE_NATIVE, &fi), 0);
		assert_mv_zero(fi);
		/* a waiter on the iGPU instance is released by a later dGPU signal */
		uint64_t want = os_fence_value(fi) + 2;
		assert_int_equal(os_fence_wait_cpu(fi, want, 5000000000ll), 0);
		os_fence_destroy(fi);
	}
	atomic_store(&c.stop, true);
	pthread_join(t, NULL);
	assert_int_equal(fbt_stats(i).lost_wakeups, 0);
	assert_true(xstats(i).received > 0);
	os_fence_destroy(c.f);
	fbt_down(d);
	fbt_down(i);
}

FB_TEST_MAIN(cmocka_unit_test(scenario1_wait_from_gpu_signal_from_gpu),
	     cmocka_unit_test(scenario1_wait_from_gpu_signal_from_cpu),
	     cmocka_unit_test(scenario1_wait_from_cpu_signal_from_gpu),
	     cmocka_unit_test(scenario1_wait_from_cpu_signal_from_cpu),
	     cmocka_unit_test(scenario2a_wait_from_gpu_signal_from_gpu),
	     cmocka_unit_test(scenario2a_wait_from_gpu_signal_from_cpu),
	     cmocka_unit_test(scenario2a_wait_from_cpu_signal_from_gpu),
	     cmocka_unit_test(scenario2a_wait_from_cpu_signal_from_cpu),
	     cmocka_unit_test(scenario2b_signal_from_gpu_wait_from_gpu),
	     cmocka_unit_test(scenario2b_signal_from_gpu_wait_from_cpu),
	     cmocka_unit_test(scenario2b_signal_from_cpu_wait_from_gpu),
	     cmocka_unit_test(scenario2b_signal_from_cpu_wait_from_cpu),
	     cmocka_unit_test(cross_requires_default_type),
	     cmocka_unit_test(cross_one_current_value_in_system_memory),
	     cmocka_unit_test(cross_mv_held_at_zero_whatever_the_waiters),
	     cmocka_unit_test(cross_null_payload_scan_propagates),
	     cmocka_unit_test(cross_lockstep_stress_no_lost_wakeups),
	     cmocka_unit_test(cross_broken_variants_are_caught),
	     cmocka_unit_test(cross_instances_come_and_go_while_signaling),
	     cmocka_unit_test(cross_rewind_race_loses_nothing),
	     cmocka_unit_test(cross_rewind_broken_variant_is_caught))
