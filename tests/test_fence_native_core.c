/* tests/test_fence_native_core.c — the native fence core rules of seed
 * native-gpu-fence that issue 22 found built but unproven, one test per rule,
 * each named after the seed's words and quoting its section title; a
 * protocol rule's test also runs the deliberately broken variant and asserts
 * the failure is seen. */
#include <pthread.h>
#include <string.h>

#include "tests/fb_test.h"
#include "tests/umd_test_util.h"
#include "tests/update_seam_util.h"

#define SEC 1000000000ll

/* ---- "Indicating a native progress fence for hardware queues" ---- */

/* D3DDDI_CREATEHWQUEUEFLAGS::NativeProgressFence: a HW queue whose progress
 * fence is native is marked so; the flag with a monitored progress fence is
 * refused, and a user-mode queue must have a native progress fence. */
static void native_progress_fence_for_hardware_queues(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 4, 0);
	/* the runtime's queues, user-mode and kernel-mode: marked native */
	struct rt_queue *um = umt_queue(&t, 0, true), *km = umt_queue(&t, 0, false);
	assert_true(os_hwqueue_native_progress(rt_queue_os(um)));
	assert_true(os_hwqueue_native_progress(rt_queue_os(km)));
	assert_true(os_fence_is_native(os_hwqueue_progress(rt_queue_os(um))));

	struct os_device *d;
	struct os_context *c;
	assert_int_equal(os_device_create(t.u, &d), 0);
	assert_int_equal(os_context_create(d, 0, &c), 0);
	struct os_fence *legacy, *native;
	assert_int_equal(os_fence_create(t.a, OS_FENCE_MONITORED, 0, 0, &legacy), 0);
	assert_int_equal(os_fence_create(t.a, OS_FENCE_NATIVE, 0, 0, &native), 0);
	struct os_hwqueue *q;
	/* NativeProgressFence naming a monitored fence, and a user-mode queue
	 * with a monitored progress fence: refused */
	assert_int_equal(os_hwqueue_create(c, OS_HWQUEUE_NATIVE_PROGRESS_FENCE, 64, legacy, &q), -EINVAL);
	assert_int_equal(os_hwqueue_create(c, OS_HWQUEUE_USER_MODE_SUBMISSION, 64, legacy, &q), -EINVAL);
	/* a kernel-mode queue may keep a monitored progress fence: not marked */
	assert_int_equal(os_hwqueue_create(c, 0, 64, legacy, &q), 0);
	assert_false(os_hwqueue_native_progress(q));
	struct os_hwqueue *nq;
	assert_int_equal(os_hwqueue_create(c, OS_HWQUEUE_NATIVE_PROGRESS_FENCE, 64, native, &nq), 0);
	assert_true(os_hwqueue_native_progress(nq));
	assert_int_equal(os_device_destroy(d), 0);
	os_fence_destroy(legacy);
	os_fence_destroy(native);
	umt_down(&t);
}

/* ---- "Cross-adapter native fences": "user-mode queues can't support
 * monitored fences" ---- */

/* Refused on signal as well as on wait, nothing submitted; the same commands
 * on a kernel-mode queue are accepted (the OS holds the wait on the CPU). */
static void user_mode_queues_cant_support_monitored_fences(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 4, 0);
	struct rt_queue *um = umt_queue(&t, 0, true), *km = umt_queue(&t, 0, false);
	struct os_fence *legacy;
	assert_int_equal(os_fence_create(t.a, OS_FENCE_MONITORED, 0, 0, &legacy), 0);
	struct hw_cmd sig = { .op = HW_CMD_SIGNAL, .fence = os_fence_hw(legacy), .value = 1 };
	struct hw_cmd wait = { .op = HW_CMD_WAIT, .fence = os_fence_hw(legacy), .value = 1 };
	_Atomic uint64_t n = 0;
	struct hw_cmd work_then_sig[2] = { { .op = HW_CMD_COUNT, .stamp = &n }, sig };
	assert_int_equal(rt_queue_submit(um, &sig, 1, NULL), -EINVAL);
	assert_int_equal(rt_queue_submit(um, &wait, 1, NULL), -EINVAL);
	assert_int_equal(rt_queue_submit(um, work_then_sig, 2, NULL), -EINVAL);
	assert_int_equal(rt_queue_submitted(um), 0);
	fbt_settle();
	assert_int_equal(atomic_load(&n), 0);
	assert_int_equal(os_fence_value(legacy), 0);
	assert_true(rt_queue_user_mode(um));
	/* the kernel-mode queue: the wait is held, the signal (a CPU signal here) releases it */
	uint64_t v;
	assert_int_equal(rt_queue_submit(km, &wait, 1, &v), 0);
	assert_int_equal(os_fence_signal_cpu(legacy, 1), 0);
	assert_int_equal(rt_queue_wait(km, v, 5 * SEC), 0);
	assert_int_equal(rt_queue_submit(km, &sig, 1, &v), 0);
	assert_int_equal(rt_queue_wait(km, v, 5 * SEC), 0);
	os_fence_destroy(legacy);
	umt_down(&t);
}

/* ---- "Native fence signaled interrupt" ---- */

/* The interrupts of kind `kind` the adapter's interrupt thread handled (its
 * ISR records in the timeline trace). */
static size_t isr_records(struct os_adapter *a, enum hw_irq_kind kind)
{
	static struct os_trace_rec recs[4096];
	size_t n = os_trace_take(a, recs, 4096, NULL), k = 0;
	for (size_t i = 0; i < n; i++)
		k += recs[i].kind == OS_TRACE_ISR && recs[i].n == kind;
	return k;
}

/* "On hardware that can't distinguish between legacy
 * DXGK_INTERRUPT_MONITORED_FENCE_SIGNALED and
 * DXGK_INTERRUPT_NATIVE_FENCE_SIGNALED, the KMD can always raise only the
 * introduced DXGK_INTERRUPT_NATIVE_FENCE_SIGNALED interrupt with
 * pSignaledNativeFenceArray = NULL and EvaluateLegacyMonitoredFences = 1".
 * A GPU signal of a monitored fence raises that interrupt, and the OS scans
 * the legacy waiters too: a CPU waiter and a GPU wait held on the CPU are
 * released.  Broken (HW_FAULT_NO_EVAL_LEGACY): the same interrupt without
 * EvaluateLegacyMonitoredFences scans only native waiters: the CPU waiter
 * stays waiting. */
static void raise_only_native_fence_signaled_with_evaluate_legacy_monitored_fences(void **state)
{
	for (int broken = 0; broken < 2; broken++) {
		struct os_config cfg;
		os_config_default(&cfg);
		cfg.caps.payload = HW_PAYLOAD_NULL_EVAL_LEGACY;
		cfg.caps.engines = 2;
		cfg.caps.fault = broken ? HW_FAULT_NO_EVAL_LEGACY : HW_FAULT_NONE;
		struct os_adapter *a = fbt_adapter(&cfg);
		assert_int_equal(os_trace_start(a, 0), 0);
		struct os_fence *legacy, *marker;
		assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0, 0, &legacy), 0);
		assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &marker), 0);
		struct os_queue *qs = fbt_queue(a, 0, 64), *qw = fbt_queue(a, 1, 64);
		/* a GPU wait on the monitored fence: held on the CPU */
		struct hw_cmd held[2] = {
			{ .op = HW_CMD_WAIT, .fence = os_fence_hw(legacy), .value = 1 },
			{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(marker), .value = 1 },
		};
		assert_int_equal(os_queue_submit(qw, held, 2), 0);
		assert_int_equal(os_queue_held(qw), 1);
		struct lf_event ev;
		lf_event_init(&ev);
		assert_int_equal(os_fence_wait_event(legacy, 1, &ev), 0);
		fbt_signal_gpu(qs, legacy, 1);
		assert_true(fbt_eventually(os_fence_value(legacy) == 1));
		assert_true(fbt_eventually(fbt_stats(a).gpu_interrupts == 1));
		struct os_stats s = fbt_settled_stats(a);
		assert_int_equal(s.interrupts, 1);
		assert_int_equal(isr_records(a, HW_IRQ_MONITORED_FENCE_SIGNALED), 0);
		assert_int_equal(isr_records(a, HW_IRQ_NATIVE_FENCE_SIGNALED), 1);
		if (!broken) {
			assert_true(lf_event_is_set(&ev));
			assert_true(fbt_eventually(os_fence_value(marker) == 1));
			assert_int_equal(os_queue_held(qw), 0);
		} else {
			/* the OS scanned only native waiters: the legacy CPU waiter is
			 * missed (the held buffer is fed anyway: every interrupt feeds
			 * held buffers whose value is reached) */
			assert_false(lf_event_is_set(&ev));
			os_fence_signal_cpu(legacy, 1);   /* release it to tear down */
			assert_int_equal(lf_event_wait(&ev, 0, 5 * SEC), 0);
		}
		os_fence_destroy(legacy);
		os_fence_destroy(marker);
		fbt_down(a);
	}
}

/* ---- "Cross-adapter wait/signal combinations", Scenario 2b ---- */

static struct os_adapter *adapter_with(bool native, enum os_fault fault)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.caps.native_fence = native;
	cfg.native_fence_enabled = native;
	cfg.fault = fault;
	return fbt_adapter(&cfg);
}

/* The iGPU (no native fences) SignalFromGPU(hFence, 10): "UMD calls
 * D3DKMTSignalSynchronizationObjectFromGpu"; "When packet is at the head of
 * the software context, VidSch updates fence value directly from CPU";
 * "VidSch propagates the signal (hFence, 10) to dGPU"; the dGPU "receives
 * the propagated signal and calls DxgkDdiUpdateCurrentValuesFromCpu(hFence,
 * NotificationOnly=TRUE)" and its HW channel waiting on hFence goes on.
 * The packet sits behind a GPU wait the iGPU's OS holds on the CPU: true when
 * the value stayed 0 until that wait was satisfied (the packet reached the
 * head), then reached 10 on both GPUs with the dGPU's GPU wait released. */
static bool scenario2b_vidsch_writes_at_head(enum os_fault igpu_fault)
{
	struct os_adapter *igpu = adapter_with(false, igpu_fault), *dgpu = adapter_with(true, OS_FAULT_NONE);
	struct os_fence *fi, *fd, *gate, *marker;
	assert_int_equal(os_fence_create(igpu, OS_FENCE_MONITORED, 0, OS_FENCE_CROSS_ADAPTER, &fi), 0);
	assert_int_equal(os_fence_open_cross(fi, dgpu, OS_FENCE_NATIVE, &fd), 0);
	assert_true(os_fence_is_native(fd) && !os_fence_is_native(fi));
	assert_int_equal(os_fence_create(igpu, OS_FENCE_MONITORED, 0, 0, &gate), 0);
	assert_int_equal(os_fence_create(dgpu, OS_FENCE_NATIVE, 0, 0, &marker), 0);
	struct os_queue *qi = fbt_queue(igpu, 0, 64), *qd = fbt_queue(dgpu, 0, 64);
	/* dGPU WaitFromGpu(hFence, 10), then the marker */
	struct hw_cmd dwait[2] = {
		{ .op = HW_CMD_WAIT, .fence = os_fence_hw(fd), .value = 10 },
		{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(marker), .value = 1 },
	};
	assert_int_equal(os_queue_submit(qd, dwait, 2), 0);
	/* the iGPU software context: a held wait on gate, then the signal packet */
	struct hw_cmd head = { .op = HW_CMD_WAIT, .fence = os_fence_hw(gate), .value = 1 };
	assert_int_equal(os_queue_submit(qi, &head, 1), 0);
	assert_int_equal(os_queue_signal_from_gpu(qi, fi, 10), 0);
	fbt_settle();
	os_adapter_quiesce(igpu);
	os_adapter_quiesce(dgpu);
	bool at_head = os_fence_value(fi) == 0 && os_fence_value(fd) == 0 && os_fence_value(marker) == 0;
	assert_int_equal(os_fence_signal_cpu(gate, 1), 0);   /* the packet reaches the head */
	assert_true(fbt_eventually(os_fence_value(marker) == 1));
	assert_int_equal(os_fence_value(fd), 10);
	if (igpu_fault == OS_FAULT_NONE)
		assert_true(fbt_eventually(fbt_stats(igpu).sw_signals == 1));
	assert_true(fbt_eventually(fbt_ddi_calls(dgpu, OS_DDI_UPDATE_CV_NOTIFY_ONLY, os_fence_handle(fd), 10) == 1));
	/* the iGPU's engines never wrote the fence: the OS did, from the CPU */
	assert_int_equal(fbt_stats(igpu).gpu_signals, 0);
	os_fence_destroy(fd);
	os_fence_destroy(fi);
	os_fence_destroy(gate);
	os_fence_destroy(marker);
	fbt_down(dgpu);
	fbt_down(igpu);
	return at_head;
}

static void scenario2b_signal_from_gpu_vidsch_updates_fence_value_from_cpu_at_head_of_software_context(void **state)
{
	assert_true(scenario2b_vidsch_writes_at_head(OS_FAULT_NONE));
}

/* Broken (OS_FAULT_SW_SIGNAL_AT_QUEUE): the value written when the packet is
 * queued, before the software context reached it; caught. */
static void scenario2b_value_written_before_head_of_software_context_caught(void **state)
{
	assert_false(scenario2b_vidsch_writes_at_head(OS_FAULT_SW_SIGNAL_AT_QUEUE));
}

/* ---- "Cross-adapter native fences": one GPU ---- */

/* "Although MonitoredValue is always 0 for cross-adapter native fences, wait
 * and signals submitted on the same GPU still benefit from faster on GPU
 * synchronization."  A cross-adapter fence (opened on a second adapter too)
 * waited on by one engine and signaled by another of the same GPU: the wait
 * is the hardware's (never held on the CPU, nothing released by the OS), the
 * interrupt is raised anyway ("CPU interrupts will be raised
 * unconditionally").  Returns whether the wait stayed on the GPU. */
static bool cross_adapter_same_gpu_wait(enum os_fault fault)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.caps.engines = 2;
	cfg.fault = fault;
	struct os_adapter *a = fbt_adapter(&cfg), *b = adapter_with(true, OS_FAULT_NONE);
	struct os_fence *f, *fb, *marker;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, OS_FENCE_CROSS_ADAPTER, &f), 0);
	assert_int_equal(os_fence_open_cross(f, b, OS_FENCE_NATIVE, &fb), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &marker), 0);
	struct os_queue *qw = fbt_queue(a, 0, 64), *qs = fbt_queue(a, 1, 64);
	struct hw_cmd w[2] = {
		{ .op = HW_CMD_WAIT, .fence = os_fence_hw(f), .value = 1 },
		{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(marker), .value = 1 },
	};
	assert_int_equal(os_queue_submit(qw, w, 2), 0);
	bool on_gpu = os_queue_held(qw) == 0;
	fbt_settle();
	assert_int_equal(os_fence_value(marker), 0);
	if (on_gpu)   /* the engine reached the WAIT and blocked on it in hardware */
		assert_true(fbt_eventually(({
			struct hw_engine_stats es;
			hw_engine_stats(os_adapter_hw(a), 0, &es);
			es.waits_blocked >= 1;
		})));
	fbt_signal_gpu(qs, f, 1);
	assert_true(fbt_eventually(os_fence_value(marker) == 1));
	struct os_stats s = fbt_settled_stats(a);
	assert_true(s.gpu_interrupts >= 1);   /* MonitoredValue 0: the signal interrupts anyway */
	on_gpu = on_gpu && s.held_released == 0;
	os_fence_destroy(fb);
	os_fence_destroy(f);
	os_fence_destroy(marker);
	fbt_down(b);
	fbt_down(a);
	return on_gpu;
}

static void cross_adapter_fence_wait_and_signal_on_the_same_gpu_stay_on_the_gpu(void **state)
{
	assert_true(cross_adapter_same_gpu_wait(OS_FAULT_NONE));
}

/* Broken (OS_FAULT_CROSS_WAIT_HELD): the OS holds the wait on the CPU as for
 * a monitored fence; it still completes, through the interrupt thread: caught. */
static void cross_adapter_fence_wait_held_on_the_cpu_caught(void **state)
{
	assert_false(cross_adapter_same_gpu_wait(OS_FAULT_CROSS_WAIT_HELD));
}

/* ---- "Monitored value" and "Instructing KMD to update batches of values" ---- */

/* The DDI log's calls of d naming handle h (any handle: h == 0), in order. */
static size_t ddi_log_of(struct os_adapter *a, enum os_ddi d, uint64_t h, struct os_ddi_call *out, size_t max)
{
	static struct os_ddi_call log[OS_DDI_LOG_MAX];
	size_t n = os_adapter_ddi_log(a, log, OS_DDI_LOG_MAX), k = 0;
	for (size_t i = 0; i < n && k < max; i++)
		if (log[i].ddi == d && (!h || log[i].handle == h))
			out[k++] = log[i];
	return k;
}

/* "When the OS's CPU wait conditions change, it calls KMD's
 * DxgkDdiUpdateMonitoredValues callback to instruct KMD to update the
 * monitored value to a specified value": a waiter that lowers
 * MonitoredValue and a release that raises it are each one call in the DDI
 * log, with the new value; a waiter that changes nothing makes none. */
static void dxgkddi_update_monitored_values_when_cpu_wait_conditions_change(void **state)
{
	struct os_adapter *a = adapter_with(true, OS_FAULT_NONE);
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f), 0);
	uint64_t h = os_fence_handle(f);
	struct os_queue *q = fbt_queue(a, 0, 64);
	struct lf_event e50, e42, e60;
	lf_event_init(&e50);
	lf_event_init(&e42);
	lf_event_init(&e60);
	os_fence_wait_event(f, 50, &e50);
	os_fence_wait_event(f, 42, &e42);
	os_fence_wait_event(f, 60, &e60);           /* 59 > 41: MonitoredValue stays */
	fbt_signal_gpu(q, f, 42);
	assert_int_equal(lf_event_wait(&e42, 0, 5 * SEC), 0);
	os_adapter_quiesce(a);   /* 42's release is done (its DDI logged) before 60 lands */
	fbt_signal_gpu(q, f, 60);
	assert_int_equal(lf_event_wait(&e60, 0, 5 * SEC), 0);
	os_adapter_quiesce(a);
	assert_true(lf_event_is_set(&e50));
	struct os_ddi_call c[16];
	size_t n = ddi_log_of(a, OS_DDI_UPDATE_MONITORED_VALUES, h, c, 16);
	/* 49, 41 (the waiters), 49 (42 released), UINT64_MAX (50 and 60
	 * released by the one interrupt of 60) */
	assert_int_equal(n, 4);
	assert_true(c[0].value == 49 && c[1].value == 41 && c[2].value == 49 && c[3].value == UINT64_MAX);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(c[i].count, 1);
	assert_int_equal(os_adapter_ddi_count(a, OS_DDI_UPDATE_MONITORED_VALUES), n);
	assert_true(atomic_load(os_fence_hw(f)->mv) == UINT64_MAX);
	os_fence_destroy(f);
	fbt_down(a);
}

/* "The OS has to modify MonitoredValue when a new CPU waiter is added ...
 * or if an existing CPU waiter is retired."  A CPU wait for 5 times out:
 * MonitoredValue goes back up at once (one DxgkDdiUpdateMonitoredValues,
 * UINT64_MAX), so the GPU's signal of 5, which only the retired wait wanted,
 * raises no interrupt; a wait that is still there (for 9) keeps its
 * MonitoredValue (8) through another's retirement. */
static void retired_cpu_waiter_raises_monitored_value(void **state)
{
	struct os_adapter *a = adapter_with(true, OS_FAULT_NONE);
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f), 0);
	uint64_t h = os_fence_handle(f);
	struct os_queue *q = fbt_queue(a, 0, 64);
	assert_int_equal(os_fence_wait_cpu(f, 5, 1000000), -ETIMEDOUT);
	assert_true(atomic_load(os_fence_hw(f)->mv) == UINT64_MAX);
	struct os_ddi_call c[8];
	size_t n = ddi_log_of(a, OS_DDI_UPDATE_MONITORED_VALUES, h, c, 8);
	assert_int_equal(n, 2);                              /* 4 (the wait), UINT64_MAX (retired) */
	assert_true(c[0].value == 4 && c[1].value == UINT64_MAX);
	struct os_stats s0 = fbt_settled_stats(a);
	fbt_signal_gpu(q, f, 5);
	assert_true(fbt_eventually(os_fence_value(f) == 5));
	struct os_stats s1 = fbt_settled_stats(a);
	assert_int_equal(s1.gpu_interrupts - s0.gpu_interrupts, 0);
	/* a waiter that stays keeps its place through another's retirement */
	struct lf_event e9;
	lf_event_init(&e9);
	assert_int_equal(os_fence_wait_event(f, 9, &e9), 0);
	assert_int_equal(os_fence_wait_cpu(f, 7, 1000000), -ETIMEDOUT);
	assert_true(atomic_load(os_fence_hw(f)->mv) == 8);
	fbt_signal_gpu(q, f, 9);
	assert_int_equal(lf_event_wait(&e9, 0, 5 * SEC), 0);
	os_fence_destroy(f);
	fbt_down(a);
}

/* "Instructing KMD to update batches of values": a NULL-payload interrupt's
 * scan releases eight fences' waiters and updates their MonitoredValues in
 * one DxgkDdiUpdateMonitoredValues call (count 8); a CPU signal of five
 * native fences at once is one DxgkDdiUpdateCurrentValuesFromCpu call
 * (count 5). */
static void batch_ddis_update_many_fences_in_one_call(void **state)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.caps.payload = HW_PAYLOAD_NULL;
	struct os_adapter *a = fbt_adapter(&cfg);
	enum { N = 8, M = 5 };
	struct os_fence *f[N];
	struct lf_event ev[N];
	for (int i = 0; i < N; i++) {
		assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f[i]), 0);
		lf_event_init(&ev[i]);
		assert_int_equal(os_fence_wait_event(f[i], 1, &ev[i]), 0);
	}
	uint64_t before = os_adapter_ddi_count(a, OS_DDI_UPDATE_MONITORED_VALUES);
	assert_int_equal(before, N);   /* each waiter lowered its fence's value */
	/* the values land with no interrupt of their own (interrupts collapsed),
	 * then one NULL-payload interrupt */
	for (int i = 0; i < N; i++)
		hw_fence_write(os_fence_hw(f[i]), 1, true);
	struct hw_irq_rec *rec = hw_irq_alloc();
	rec->kind = HW_IRQ_NATIVE_FENCE_SIGNALED;
	hw_irq_raise(os_adapter_hw(a), rec);
	os_adapter_quiesce(a);
	for (int i = 0; i < N; i++)
		assert_true(lf_event_is_set(&ev[i]));
	assert_int_equal(os_adapter_ddi_count(a, OS_DDI_UPDATE_MONITORED_VALUES), before + 1);
	struct os_ddi_call c[OS_DDI_LOG_MAX];
	size_t n = ddi_log_of(a, OS_DDI_UPDATE_MONITORED_VALUES, 0, c, OS_DDI_LOG_MAX);
	assert_int_equal(n, N + 1);
	assert_int_equal(c[N].count, N);
	assert_true(c[N].value == UINT64_MAX);

	uint64_t v[M] = { 5, 6, 7, 8, 9 };
	uint64_t cv0 = os_adapter_ddi_count(a, OS_DDI_UPDATE_CV_FROM_CPU);
	assert_int_equal(os_fence_signal_cpu_multi(f, v, M), 0);
	for (int i = 0; i < M; i++)
		assert_int_equal(os_fence_value(f[i]), v[i]);
	assert_int_equal(os_adapter_ddi_count(a, OS_DDI_UPDATE_CV_FROM_CPU), cv0 + 1);
	n = ddi_log_of(a, OS_DDI_UPDATE_CV_FROM_CPU, 0, c, OS_DDI_LOG_MAX);
	assert_int_equal(n, 1);
	assert_int_equal(c[0].count, M);
	assert_int_equal(c[0].handle, os_fence_handle(f[0]));
	assert_int_equal(c[0].value, 5);
	/* all or nothing: a fence of another adapter is refused before any write */
	struct os_adapter *b = adapter_with(true, OS_FAULT_NONE);
	struct os_fence *other, *mixed[2] = { f[0], NULL };
	assert_int_equal(os_fence_create(b, OS_FENCE_NATIVE, 0, 0, &other), 0);
	mixed[1] = other;
	uint64_t w[2] = { 100, 100 };
	assert_int_equal(os_fence_signal_cpu_multi(mixed, w, 2), -EINVAL);
	assert_int_equal(os_fence_value(f[0]), 5);
	os_fence_destroy(other);
	fbt_down(b);
	for (int i = 0; i < N; i++)
		os_fence_destroy(f[i]);
	fbt_down(a);
}

/* ---- "KMD DDIs to create, open, close, and destroy a native fence object" ---- */

/* "The following members were added to DRIVER_INITIALIZATION_DATA. Drivers
 * that support native GPU fence objects should implement the functions and
 * provide Dxgkrnl with pointers to them via this structure": the six
 * entries are in the table the KMD gave, and the OS's calls of each go
 * through it, recorded in the DDI log.  A driver without native fences gives
 * none; one that advertises native fences with an entry missing
 * (OS_FAULT_KMD_DDI_TABLE_INCOMPLETE) fails adapter initialization. */
static void driver_initialization_data_six_native_fence_ddis_logged(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 4, 0);
	struct os_native_fence_ddis tab;
	assert_int_equal(os_adapter_native_fence_ddis(t.a, &tab), OS_NATIVE_FENCE_DDIS);
	assert_non_null(tab.DxgkDdiCreateNativeFence);
	assert_non_null(tab.DxgkDdiDestroyNativeFence);
	assert_non_null(tab.DxgkDdiOpenNativeFence);
	assert_non_null(tab.DxgkDdiCloseNativeFence);
	assert_non_null(tab.DxgkDdiSetNativeFenceLogBuffer);
	assert_non_null(tab.DxgkDdiUpdateNativeFenceLogs);
	assert_string_equal(os_native_fence_ddi_name(5), "DxgkDdiUpdateNativeFenceLogs");

	/* Create, Open (a process's local handle), Close, Destroy */
	struct os_process *p;
	assert_int_equal(os_process_create(&p), 0);
	uint64_t local;
	assert_int_equal(os_shared_fence_create(p, t.a, OS_FENCE_NATIVE, 0, 0, &local), 0);
	uint64_t global = os_fence_handle(os_process_fence(p, local));
	assert_int_equal(os_shared_fence_close(p, local), 0);
	os_process_destroy(p);
	struct os_ddi_call c[OS_DDI_LOG_MAX];
	assert_int_equal(ddi_log_of(t.a, OS_DDI_CREATE_NATIVE_FENCE, global, c, 4), 1);
	assert_int_equal(ddi_log_of(t.a, OS_DDI_OPEN_NATIVE_FENCE, local, c, 4), 1);
	assert_int_equal(ddi_log_of(t.a, OS_DDI_CLOSE_NATIVE_FENCE, local, c, 4), 1);
	assert_int_equal(ddi_log_of(t.a, OS_DDI_DESTROY_NATIVE_FENCE, global, c, 4), 1);

	/* SetNativeFenceLogBuffer twice per user-mode HW queue ("once to set the
	 * log buffer for logging waits and once to set the log buffer for
	 * logging signals"), none for a kernel-mode one */
	struct rt_queue *um = umt_queue(&t, 0, true), *km = umt_queue(&t, 0, false);
	uint64_t hq = hw_queue_handle(os_hwqueue_hw(rt_queue_os(um)));
	size_t n = ddi_log_of(t.a, OS_DDI_SET_NATIVE_FENCE_LOG_BUFFER, hq, c, 4);
	assert_int_equal(n, 2);
	assert_true(c[0].value == HW_LOG_WAITS && c[1].value == HW_LOG_SIGNALS);
	assert_int_equal(ddi_log_of(t.a, OS_DDI_SET_NATIVE_FENCE_LOG_BUFFER,
				    hw_queue_handle(os_hwqueue_hw(rt_queue_os(km))), c, 4), 0);
	/* UpdateNativeFenceLogs before the OS reads a log's new entries: a
	 * logged signal with a CPU waiter interrupts, the OS reads the log */
	struct rt_fence *f;
	assert_int_equal(rt_fence_create(t.d, 0, &f), 0);
	struct lf_event ev;
	lf_event_init(&ev);
	assert_int_equal(os_fence_wait_event(rt_fence_os(f), 1, &ev), 0);
	assert_int_equal(rt_queue_signal(um, f, 1), 0);
	assert_int_equal(lf_event_wait(&ev, 0, 5 * SEC), 0);
	os_adapter_quiesce(t.a);
	assert_true(ddi_log_of(t.a, OS_DDI_UPDATE_NATIVE_FENCE_LOGS, hq, c, 4) >= 1);
	assert_int_equal(c[0].count, 1);
	assert_int_equal(os_adapter_ddi_count(t.a, OS_DDI_UPDATE_NATIVE_FENCE_LOGS), fbt_stats(t.a).log_updates);
	umt_down(&t);

	/* no native fences: no table */
	struct os_adapter *legacy = adapter_with(false, OS_FAULT_NONE);
	assert_int_equal(os_adapter_native_fence_ddis(legacy, NULL), 0);
	fbt_down(legacy);
	/* broken: an entry left out while native fences are advertised */
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.fault = OS_FAULT_KMD_DDI_TABLE_INCOMPLETE;
	struct os_adapter *a = NULL;
	char err[256] = "";
	assert_int_equal(os_adapter_create(&cfg, &a, err, sizeof(err)), -EINVAL);
	assert_null(a);
	assert_non_null(strstr(err, "DxgkDdiUpdateNativeFenceLogs"));
}

/* ---- "Physical memory storage for current and monitored fence values" ---- */

static uintptr_t page_of(const void *p)
{
	return (uintptr_t)p / HW_PAGE_SIZE;
}

/* "Fence objects that are nonshareable have fence value storage for
 * different fence objects within the same process packed in the same memory
 * page": two processes create fences in turn; each process's fences are
 * packed by the strides among themselves, and no CurrentValue or
 * MonitoredValue page holds both processes' fences.  Returns whether the
 * processes' pages were apart (HW_FAULT_PACK_PER_ADAPTER: one pool for all). */
static bool packed_within_the_same_process(enum hw_fault fault)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.caps.cv_stride = 64;
	cfg.caps.mv_stride = 8;
	cfg.caps.fault = fault;
	struct os_adapter *a = fbt_adapter(&cfg);
	struct os_process *p, *q;
	assert_int_equal(os_process_create(&p), 0);
	assert_int_equal(os_process_create(&q), 0);
	enum { N = 4 };
	struct os_fence *fp[N], *fq[N];
	for (int i = 0; i < N; i++) {
		assert_int_equal(os_process_fence_create(p, a, OS_FENCE_NATIVE, 0, 0, &fp[i]), 0);
		assert_int_equal(os_process_fence_create(q, a, OS_FENCE_NATIVE, 0, 0, &fq[i]), 0);
	}
	bool apart = true;
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			apart = apart && page_of(os_fence_hw(fp[i])->cv) != page_of(os_fence_hw(fq[j])->cv);
			apart = apart && page_of(os_fence_hw(fp[i])->mv) != page_of(os_fence_hw(fq[j])->mv);
		}
	if (apart)   /* packed by the strides within each process */
		for (int i = 1; i < N; i++) {
			assert_int_equal(hw_fence_cv_distance(os_fence_hw(fp[i - 1]), os_fence_hw(fp[i])), 64);
			assert_int_equal(hw_fence_cv_distance(os_fence_hw(fq[i - 1]), os_fence_hw(fq[i])), 64);
			assert_int_equal((char *)os_fence_hw(fp[i])->mv - (char *)os_fence_hw(fp[i - 1])->mv, 8);
			assert_int_equal(page_of(os_fence_hw(fp[i])->cv), page_of(os_fence_hw(fp[0])->cv));
		}
	/* a shareable fence of p: pages of its own */
	uint64_t local;
	assert_int_equal(os_shared_fence_create(p, a, OS_FENCE_NATIVE, 0, 0, &local), 0);
	struct hw_fence *sh = os_fence_hw(os_process_fence(p, local));
	for (int i = 0; i < N; i++)
		assert_true(page_of(sh->cv) != page_of(os_fence_hw(fp[i])->cv) &&
			    page_of(sh->mv) != page_of(os_fence_hw(fp[i])->mv));
	/* a freed slot goes back to its own process's pages */
	_Atomic uint64_t *cv = os_fence_hw(fq[1])->cv;
	os_fence_destroy(fq[1]);
	os_adapter_quiesce(a);
	struct os_fence *again;
	assert_int_equal(os_process_fence_create(q, a, OS_FENCE_NATIVE, 0, 0, &again), 0);
	assert_ptr_equal(os_fence_hw(again)->cv, cv);
	os_fence_destroy(again);
	for (int i = 0; i < N; i++) {
		os_fence_destroy(fp[i]);
		if (i != 1)
			os_fence_destroy(fq[i]);
	}
	os_process_destroy(p);
	os_process_destroy(q);
	fbt_down(a);
	return apart;
}

static void nonshareable_fences_packed_within_the_same_process(void **state)
{
	assert_true(packed_within_the_same_process(HW_FAULT_NONE));
}

/* Broken: packing per adapter (as the model did) puts two processes' fences
 * in one page; caught. */
static void fences_of_two_processes_packed_in_one_page_caught(void **state)
{
	assert_false(packed_within_the_same_process(HW_FAULT_PACK_PER_ADAPTER));
}

/* "The current value can reside either in system memory or GPU local memory,
 * depending on the fence type specified by D3DDDI_NATIVEFENCE_TYPE" (and
 * "Monitored value", the same): DEFAULT in system memory ("allocated from
 * internal system memory pool") on this adapter, the other type in local
 * memory "allocated from memory segments that the driver specified in
 * D3DKMDT_FENCESTORAGESURFACEDATA"; "Current value for cross adapter fences
 * is always in system memory".  A driver that names no segment cannot have
 * fence values in local memory; an OS without the type refuses it. */
static void current_value_in_system_or_local_memory_by_native_fence_type(void **state)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.caps.storage = HW_STORAGE_SYSTEM;
	cfg.caps.fence_segments = (1u << 2) | (1u << 5);
	struct os_adapter *a = fbt_adapter(&cfg);
	struct os_process *p;
	assert_int_equal(os_process_create(&p), 0);
	struct os_fence *def, *loc, *mon, *shl;
	assert_int_equal(os_process_fence_create(p, a, OS_FENCE_NATIVE, 0, 0, &def), 0);
	assert_int_equal(os_process_fence_create(p, a, OS_FENCE_NATIVE, 3, OS_FENCE_LOCAL_MEMORY, &loc), 0);
	assert_int_equal(os_process_fence_create(p, a, OS_FENCE_MONITORED, 0, OS_FENCE_LOCAL_MEMORY, &mon), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, OS_FENCE_LOCAL_MEMORY | OS_FENCE_SHARED, &shl), 0);
	assert_false(os_fence_hw(def)->local);
	assert_int_equal(os_fence_hw(def)->segment, 0);
	assert_true(os_fence_hw(loc)->local);
	assert_int_equal(os_fence_hw(loc)->segment, 2);   /* the lowest segment the driver named */
	assert_true(os_fence_hw(shl)->local);
	assert_int_equal(os_fence_hw(shl)->segment, 2);
	assert_false(os_fence_hw(mon)->local);             /* a monitored fence has no native type */
	/* one process, two memories: never the same page */
	assert_true(page_of(os_fence_hw(def)->cv) != page_of(os_fence_hw(loc)->cv));
	assert_true(page_of(os_fence_hw(def)->mv) != page_of(os_fence_hw(loc)->mv));
	/* the local fence works as any: a GPU signal, a CPU wait */
	struct os_queue *qq = fbt_queue(a, 0, 64);
	struct lf_event ev;
	lf_event_init(&ev);
	assert_int_equal(os_fence_wait_event(loc, 4, &ev), 0);
	fbt_signal_gpu(qq, loc, 4);
	assert_int_equal(lf_event_wait(&ev, 0, 5 * SEC), 0);
	/* cross-adapter: DEFAULT only, CurrentValue in system memory */
	struct os_fence *x;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, OS_FENCE_CROSS_ADAPTER | OS_FENCE_LOCAL_MEMORY, &x),
			 -EINVAL);
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, OS_FENCE_CROSS_ADAPTER, &x), 0);
	assert_false(os_fence_hw(x)->local);
	os_fence_destroy(x);
	os_fence_destroy(def);
	os_fence_destroy(loc);
	os_fence_destroy(mon);
	os_fence_destroy(shl);
	os_process_destroy(p);
	fbt_down(a);

	/* the driver names no segment: no local fence storage */
	os_config_default(&cfg);
	cfg.caps.fence_segments = 0;
	a = fbt_adapter(&cfg);
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, OS_FENCE_LOCAL_MEMORY, &f), -ENOTSUP);
	fbt_down(a);
	cfg.caps.storage = HW_STORAGE_LOCAL;
	char err[256] = "";
	assert_int_equal(os_adapter_create(&cfg, &a, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "fence_segments"));
	/* the OS without the type */
	os_config_default(&cfg);
	cfg.native_fence_os_caps.SupportIntraGpuFenceType = false;
	a = fbt_adapter(&cfg);
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, OS_FENCE_LOCAL_MEMORY, &f), -ENOTSUP);
	fbt_down(a);
}

/* ---- "GPU native fence sync object design": who may read and write ---- */

/* CurrentValue: "writeable from kernel mode, readable from both user and
 * kernel mode" and "readable and writeable using GPU virtual address";
 * MonitoredValue: "readable and writeable from kernel mode, no user mode
 * access" and "readable using GPU VA, no write access".  The mappings carry
 * those rights and refuse (and count) the rest. */
static void current_value_and_monitored_value_access_rights(void **state)
{
	const unsigned R = HW_ACCESS_READ, W = HW_ACCESS_WRITE;
	assert_int_equal(hw_fence_rights(HW_AGENT_CPU_USER, HW_VALUE_CV), R);
	assert_int_equal(hw_fence_rights(HW_AGENT_CPU_USER, HW_VALUE_MV), 0);
	assert_int_equal(hw_fence_rights(HW_AGENT_CPU_KERNEL, HW_VALUE_CV), R | W);
	assert_int_equal(hw_fence_rights(HW_AGENT_CPU_KERNEL, HW_VALUE_MV), R | W);
	assert_int_equal(hw_fence_rights(HW_AGENT_GPU, HW_VALUE_CV), R | W);
	assert_int_equal(hw_fence_rights(HW_AGENT_GPU, HW_VALUE_MV), R);

	struct os_adapter *a = adapter_with(true, OS_FAULT_NONE);
	struct hw_adapter *hw = os_adapter_hw(a);
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 7, 0, &f), 0);
	struct lf_event ev;
	lf_event_init(&ev);
	assert_int_equal(os_fence_wait_event(f, 10, &ev), 0);   /* MonitoredValue 9 */
	struct hw_fence_map m;
	uint64_t v = 0;
	/* user mode: CurrentValue read-only, no MonitoredValue */
	assert_int_equal(os_fence_map(f, HW_AGENT_CPU_USER, HW_VALUE_CV, &m), 0);
	assert_int_equal(hw_fence_map_read(&m, &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(hw_fence_map_write(&m, 100), -EACCES);
	assert_int_equal(os_fence_map(f, HW_AGENT_CPU_USER, HW_VALUE_MV, &m), -EACCES);
	assert_int_equal(hw_fence_map_read(&m, &v), -EACCES);
	assert_int_equal(hw_adapter_access_faults(hw), 3);
	assert_int_equal(os_fence_value(f), 7);
	/* kernel mode: both */
	assert_int_equal(os_fence_map(f, HW_AGENT_CPU_KERNEL, HW_VALUE_MV, &m), 0);
	assert_int_equal(hw_fence_map_read(&m, &v), 0);
	assert_int_equal(v, 9);
	/* the GPU: MonitoredValue read-only */
	assert_int_equal(os_fence_map(f, HW_AGENT_GPU, HW_VALUE_MV, &m), 0);
	assert_int_equal(hw_fence_map_read(&m, &v), 0);
	assert_int_equal(v, 9);
	assert_int_equal(hw_fence_map_write(&m, UINT64_MAX), -EACCES);
	assert_true(atomic_load(os_fence_hw(f)->mv) == 9);
	assert_int_equal(hw_adapter_access_faults(hw), 4);
	assert_int_equal(os_fence_signal_cpu(f, 10), 0);
	assert_true(lf_event_is_set(&ev));
	os_fence_destroy(f);
	fbt_down(a);
}

/* The GPU never writes MonitoredValue: a whole run of GPU signals that
 * interrupt makes no refused access.  Broken (HW_FAULT_CMP_WRITES_MV): a CMP
 * that writes MonitoredValue after each interrupt is refused by its
 * read-only mapping (counted), so the OS's value stands and the next waiter
 * is still interrupted for.  Returns the refused accesses. */
static uint64_t gpu_monitored_value_writes(enum hw_fault fault)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.caps.fault = fault;
	struct os_adapter *a = fbt_adapter(&cfg);
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f), 0);
	struct os_queue *q = fbt_queue(a, 0, 64);
	struct lf_event e1, e2;
	lf_event_init(&e1);
	lf_event_init(&e2);
	assert_int_equal(os_fence_wait_event(f, 1, &e1), 0);
	assert_int_equal(os_fence_wait_event(f, 2, &e2), 0);
	fbt_signal_gpu(q, f, 1);
	assert_int_equal(lf_event_wait(&e1, 0, 5 * SEC), 0);
	os_adapter_quiesce(a);
	assert_true(atomic_load(os_fence_hw(f)->mv) == 1);   /* the OS's: waiter 2 */
	fbt_signal_gpu(q, f, 2);
	assert_int_equal(lf_event_wait(&e2, 0, 5 * SEC), 0);
	os_adapter_quiesce(a);
	assert_int_equal(fbt_stats(a).gpu_interrupts, 2);
	uint64_t faults = hw_adapter_access_faults(os_adapter_hw(a));
	os_fence_destroy(f);
	fbt_down(a);
	return faults;
}

static void gpu_never_writes_monitored_value(void **state)
{
	assert_int_equal(gpu_monitored_value_writes(HW_FAULT_NONE), 0);
}

static void gpu_write_of_monitored_value_refused_caught(void **state)
{
	assert_int_equal(gpu_monitored_value_writes(HW_FAULT_CMP_WRITES_MV), 2);
}

/* "Monitored value": DxgkDdiUpdateMonitoredValues "runs at interrupt level,
 * synchronized with the interrupt handler".  A waiter's update meets an
 * interrupt for its fence (tests/update_seam_util.h): the handler does not
 * take the fence until the update is whole (it does so after, and releases
 * the waiter), and the DDI log's first value is what MonitoredValue held
 * after the update (0: the wait for 1).  The broken build
 * OS_BROKEN_UPDATE_UNSYNCHRONIZED (the update without the fence's interrupt
 * lock, mk/model-broken.mk) is caught: tests/model_broken.c. */
static void update_monitored_values_synchronized_with_the_interrupt_handler(void **state)
{
	struct upseam s = upseam_run(20000000);   /* 20 ms: the lock makes it never */
	assert_int_equal(s.updates, 1);
	assert_false(s.isr_in_during_update);
	assert_true(s.isr_in);
	assert_int_equal(s.first_logged, 0);
}

FB_TEST_MAIN(cmocka_unit_test(native_progress_fence_for_hardware_queues),
	     cmocka_unit_test(update_monitored_values_synchronized_with_the_interrupt_handler),
	     cmocka_unit_test(user_mode_queues_cant_support_monitored_fences),
	     cmocka_unit_test(raise_only_native_fence_signaled_with_evaluate_legacy_monitored_fences),
	     cmocka_unit_test(scenario2b_signal_from_gpu_vidsch_updates_fence_value_from_cpu_at_head_of_software_context),
	     cmocka_unit_test(scenario2b_value_written_before_head_of_software_context_caught),
	     cmocka_unit_test(cross_adapter_fence_wait_and_signal_on_the_same_gpu_stay_on_the_gpu),
	     cmocka_unit_test(cross_adapter_fence_wait_held_on_the_cpu_caught),
	     cmocka_unit_test(dxgkddi_update_monitored_values_when_cpu_wait_conditions_change),
	     cmocka_unit_test(retired_cpu_waiter_raises_monitored_value),
	     cmocka_unit_test(batch_ddis_update_many_fences_in_one_call),
	     cmocka_unit_test(driver_initialization_data_six_native_fence_ddis_logged),
	     cmocka_unit_test(nonshareable_fences_packed_within_the_same_process),
	     cmocka_unit_test(fences_of_two_processes_packed_in_one_page_caught),
	     cmocka_unit_test(current_value_in_system_or_local_memory_by_native_fence_type),
	     cmocka_unit_test(current_value_and_monitored_value_access_rights),
	     cmocka_unit_test(gpu_never_writes_monitored_value),
	     cmocka_unit_test(gpu_write_of_monitored_value_refused_caught))
