/* tests/test_logbuf.c — native fence log buffers and the optimized native
 * fence signaled interrupt (seed native-gpu-fence, "Native fence log buffer
 * design", "Log buffer overrun is permitted", "Empty or repeated log buffer
 * timestamps", "Synchronously updating the native fence log", "Optimized
 * native fence signaled interrupt"); each protocol with its broken variant. */
#include <pthread.h>

#include "tests/fb_test.h"
#include "tests/umd_test_util.h"
#include "lockfree/event.h"
#include "gpu-model/runtime/stack.h"

#define LOG_ENTRIES ((HW_LOG_SIZE - HW_LOG_HEADER_BYTES) / sizeof(struct hw_log_entry))

static void signal_n(struct rt_queue *q, struct rt_fence *f, uint64_t from, uint64_t n)
{
	struct hw_cmd c[RT_MAX_CMDS];
	while (n) {
		size_t k = n < RT_MAX_CMDS ? (size_t)n : RT_MAX_CMDS;
		for (size_t i = 0; i < k; i++)
			c[i] = rt_cmd_signal(f, from++);
		assert_int_equal(rt_queue_submit(q, c, k, NULL), 0);
		n -= k;
	}
}

/* Kernel-mode queues get no log buffers; user-mode queues get two of 4 KiB. */
static void log_buffers_user_mode_queues_only(void **state)
{
	struct umt t = umt_up_logs(1, HW_PAYLOAD_FENCE_ARRAY, HW_FAULT_NONE, OS_FAULT_NONE);
	struct rt_queue *um = umt_queue(&t, 0, true), *km = umt_queue(&t, 0, false);
	assert_non_null(umt_queue_log(um));
	assert_null(umt_queue_log(km));
	assert_int_equal(os_log_bytes(umt_queue_log(um)), HW_LOG_SIZE);
	for (int ty = 0; ty < HW_LOG_TYPES; ty++)
		assert_int_equal(os_log_hw(umt_queue_log(um), (enum hw_log_type)ty)->capacity, LOG_ENTRIES);
	assert_int_equal(os_hwqueue_recreate_logs(rt_queue_os(km), HW_LOG_SIZE), -EINVAL);
	umt_down(&t);
}

/* The log size is the stack's choice (os_ums_config.log_bytes, through
 * rt_stack_config): every user-mode queue gets logs of that size; a size
 * that cannot hold one entry, or past the OS's largest, is refused. */
static void log_size_chosen_at_stack_creation(void **state)
{
	struct rt_stack_config sc;
	struct rt_stack *s;
	char err[256];
	rt_stack_config_default(&sc, RT_PATH_NATIVE);
	sc.ums.log_bytes = HW_LOG_HEADER_BYTES + 10 * sizeof(struct hw_log_entry);
	assert_int_equal(rt_stack_create(&sc, &s, err, sizeof(err)), 0);
	struct rt_queue_desc desc = { .engine = 0, .user_mode = true };
	struct rt_queue *q;
	assert_int_equal(rt_queue_create(rt_stack_device(s), &desc, &q), 0);
	assert_int_equal(os_log_bytes(umt_queue_log(q)), sc.ums.log_bytes);
	for (int ty = 0; ty < HW_LOG_TYPES; ty++)
		assert_int_equal(os_log_hw(umt_queue_log(q), (enum hw_log_type)ty)->capacity, 10);
	assert_int_equal(rt_stack_destroy(s), 0);
	const size_t bad[] = { HW_LOG_HEADER_BYTES + sizeof(struct hw_log_entry) - 1, OS_LOG_MAX_BYTES + 1 };
	for (size_t i = 0; i < 2; i++) {
		sc.ums.log_bytes = bad[i];
		err[0] = 0;
		assert_int_equal(rt_stack_create(&sc, &s, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "log_bytes="));
	}
}

/* The runtime logs every native wait and signal it records (the progress
 * write too) and emits the queued events; the OS reads them all, in order. */
static void log_entries_and_queued_events(void **state)
{
	struct umt t = umt_up_logs(1, HW_PAYLOAD_FENCE_ARRAY, HW_FAULT_NONE, OS_FAULT_NONE);
	struct rt_queue *q = umt_queue(&t, 0, true);
	struct rt_fence *f;
	assert_int_equal(rt_fence_create(t.d, 0, &f), 0);
	uint64_t t0 = lf_now_ns();
	signal_n(q, f, 1, 40);                           /* one buffer: 40 signals + progress */
	assert_int_equal(rt_queue_wait_gpu(q, f, 40), 0);   /* a wait + progress */
	assert_int_equal(rt_queue_wait(q, 0, 5000000000ll), 0);
	/* the progress write completes the buffer before its own LOG runs */
	struct hw_log *sig = os_log_hw(umt_queue_log(q), HW_LOG_SIGNALS);
	assert_true(fbt_eventually(hw_log_pos(sig, hw_log_header(sig)) == 42));
	bool overrun = true;
	os_log_read(umt_queue_log(q), &overrun);
	assert_false(overrun);
	struct os_stats s = fbt_settled_stats(t.a);
	assert_int_equal(s.log_entries, 40 + 2 + 1);     /* signals (progress x2) + the wait */
	assert_int_equal(s.log_bad_entries, 0);
	assert_int_equal(s.log_ts_backwards, 0);
	assert_int_equal(s.log_overruns, 0);
	assert_int_equal(atomic_load(&sig->entries[0].value), 1);
	assert_int_equal(atomic_load(&sig->entries[0].fence), os_fence_handle(rt_fence_os(f)));
	assert_int_equal(atomic_load(&sig->entries[0].op), HW_LOG_OP_SIGNAL_EXECUTED);
	struct hw_log *w = os_log_hw(umt_queue_log(q), HW_LOG_WAITS);
	assert_int_equal(atomic_load(&w->entries[0].op), HW_LOG_OP_WAIT_UNBLOCKED);
	assert_true(atomic_load(&w->entries[0].observed_ts) <= atomic_load(&w->entries[0].end_ts));

	struct rt_fence_event ev[64];
	uint64_t total;
	size_t n = rt_queue_events(q, ev, 64, &total);
	assert_int_equal(n, 43);
	assert_int_equal(total, 43);
	assert_int_equal(ev[0].kind, RT_EVENT_FENCE_SIGNAL_QUEUED);
	assert_int_equal(ev[0].entry, 0);
	assert_int_equal(ev[41].kind, RT_EVENT_FENCE_WAIT_QUEUED);
	assert_int_equal(ev[41].entry, 0);
	assert_int_equal(ev[42].entry, 41);   /* the second progress write: signal entry 41 */
	for (size_t i = 0; i < n; i++) {
		assert_true(ev[i].cpu_ns >= t0);
		if (i)
			assert_true(ev[i].cpu_ns >= ev[i - 1].cpu_ns);
	}
	umt_down(&t);
}

/* A reader polling the header while the engine logs: with the seed's order
 * (entry, then FirstFreeEntryIndex) it never reads an unwritten entry; the
 * broken engine that moves the index first (and writes the entry 1 ms later)
 * is caught.  Batches of 20 signals until caught or `batches` ran, so a
 * poller descheduled through one batch's windows does not decide it. */
static uint64_t poll_while_logging(enum hw_fault fault, unsigned batches)
{
	struct umt t = umt_up_logs(1, HW_PAYLOAD_FENCE_ARRAY, fault, OS_FAULT_NONE);
	struct rt_queue *q = umt_queue(&t, 0, true);
	struct rt_fence *f;
	assert_int_equal(rt_fence_create(t.d, 0, &f), 0);
	struct hw_log *sig = os_log_hw(umt_queue_log(q), HW_LOG_SIGNALS);
	uint64_t logged = 0, bad = 0;
	for (unsigned b = 0; b < batches && !bad; b++) {
		signal_n(q, f, 20 * b + 1, 20);
		logged += 21;                            /* 20 signals + the progress write */
		uint64_t end = lf_now_ns() + 10000000000ull;
		while (hw_log_pos(sig, hw_log_header(sig)) < logged && lf_now_ns() < end)
			os_log_read(umt_queue_log(q), NULL);
		assert_int_equal(rt_queue_wait(q, 0, 5000000000ll), 0);
		assert_true(fbt_eventually(hw_log_pos(sig, hw_log_header(sig)) == logged));
		os_log_read(umt_queue_log(q), NULL);
		bad = fbt_stats(t.a).log_bad_entries;
	}
	assert_int_equal(fbt_stats(t.a).log_entries, logged);
	umt_down(&t);
	return bad;
}

static void write_order_entry_before_index(void **state)
{
	assert_int_equal(poll_while_logging(HW_FAULT_NONE, 3), 0);
}

static void write_order_broken_index_first_caught(void **state)
{
	assert_true(poll_while_logging(HW_FAULT_LOG_INDEX_FIRST, 10) > 0);
}

/* Entries written straight into a queue's log (no engine involved). */
static void put(struct hw_log *log, uint64_t n, uint64_t ts)
{
	hw_log_write(NULL, log, n, 0, n, 0, HW_LOG_OP_SIGNAL_EXECUTED, 0, ts);
}

struct raw { struct umt t; struct rt_queue *q; struct os_log *l; struct hw_log *log; };

static struct raw raw_log(void)
{
	struct raw r;
	r.t = umt_up_logs(1, HW_PAYLOAD_FENCE_ARRAY, HW_FAULT_NONE, OS_FAULT_NONE);
	r.q = umt_queue(&r.t, 0, true);
	r.l = umt_queue_log(r.q);
	r.log = os_log_hw(r.l, HW_LOG_SIGNALS);
	return r;
}

/* "timestamps ... zero or the same as previous log entries" accepted, "never go backwards" reported. */
static void timestamps_zero_repeated_accepted_backwards_reported(void **state)
{
	struct raw r = raw_log();
	const uint64_t ts[] = { 10, 20, 0, 20, 30, 25, 40 };
	for (uint64_t i = 0; i < 7; i++)
		put(r.log, i, ts[i]);
	os_log_read(r.l, NULL);
	struct os_stats s = fbt_stats(r.t.a);
	assert_int_equal(s.log_entries, 7);
	assert_int_equal(s.log_ts_zero, 1);
	assert_int_equal(s.log_ts_repeated, 1);
	assert_int_equal(s.log_ts_backwards, 1);
	put(r.log, 7, 40);                              /* the reference stayed at 40, not 25 */
	put(r.log, 8, 39);
	os_log_read(r.l, NULL);
	s = fbt_stats(r.t.a);
	assert_int_equal(s.log_ts_repeated, 2);
	assert_int_equal(s.log_ts_backwards, 2);
	umt_down(&r.t);
}

/* Header packing and overrun detection against the cached position. */
static void overrun_detected_against_cached_count(void **state)
{
	struct raw r = raw_log();
	uint32_t cap = r.log->capacity;
	for (uint64_t i = 0; i < cap - 1; i++)        /* one short of full: not an overrun */
		put(r.log, i, i + 1);
	bool overrun = true;
	os_log_read(r.l, &overrun);
	assert_false(overrun);
	put(r.log, cap - 1, cap);
	uint64_t h = hw_log_header(r.log);
	assert_int_equal((uint32_t)h, 0);               /* FirstFreeEntryIndex wrapped ... */
	assert_int_equal(h >> 32, 1);                   /* ... and WraparoundCount counted it */
	for (uint64_t i = cap; i < 2 * cap; i++)      /* a log's worth unread: the oldest may be rewritten */
		put(r.log, i, i + 1);
	os_log_read(r.l, &overrun);
	assert_true(overrun);
	put(r.log, 2 * cap, 2 * cap + 1);                /* reading resumes after the overrun */
	os_log_read(r.l, &overrun);
	assert_false(overrun);
	struct os_stats s = fbt_stats(r.t.a);
	assert_int_equal(s.log_overruns, 1);
	assert_int_equal(s.log_entries, cap - 1 + 1);
	assert_int_equal(s.log_ts_backwards, 0);
	umt_down(&r.t);
}

/* Recreation: the new buffers (any size) continue the entry numbering; the
 * engine writes to them from then on; nothing read twice or lost. */
static void recreate_log_buffers(void **state)
{
	struct umt t = umt_up_logs(1, HW_PAYLOAD_FENCE_ARRAY, HW_FAULT_NONE, OS_FAULT_NONE);
	struct rt_queue *q = umt_queue(&t, 0, true);
	struct rt_fence *f;
	assert_int_equal(rt_fence_create(t.d, 0, &f), 0);
	signal_n(q, f, 1, 30);
	assert_int_equal(rt_queue_wait(q, 0, 5000000000ll), 0);
	struct hw_log *old = os_log_hw(umt_queue_log(q), HW_LOG_SIGNALS);
	assert_int_equal(os_hwqueue_recreate_logs(rt_queue_os(q), 2 * HW_LOG_SIZE), 0);
	struct hw_log *nl = os_log_hw(umt_queue_log(q), HW_LOG_SIGNALS);
	assert_ptr_not_equal(nl, old);
	assert_int_equal(os_log_bytes(umt_queue_log(q)), 2 * HW_LOG_SIZE);
	assert_int_equal(hw_log_pos(nl, hw_log_header(nl)), 31);
	signal_n(q, f, 31, 150);                          /* more than the old capacity */
	assert_int_equal(rt_queue_wait(q, 0, 5000000000ll), 0);
	assert_true(fbt_eventually(hw_log_pos(nl, hw_log_header(nl)) == 31 + 150 + 3));
	bool overrun = true;
	os_log_read(umt_queue_log(q), &overrun);
	assert_false(overrun);
	/* entry 31 (the first in the new buffer) is the signal of value 31 */
	assert_int_equal(atomic_load(&nl->entries[31 % nl->capacity].value), 31);
	struct os_stats s = fbt_settled_stats(t.a);
	assert_int_equal(s.log_recreates, 2);
	assert_int_equal(s.log_entries, 31 + 153);
	assert_int_equal(s.log_bad_entries, 0);
	assert_int_equal(s.log_overruns, 0);
	umt_down(&t);
}

/* Optimized payload (and a NULL handle): two queues of one engine, each
 * signaling its own fence; each interrupt releases exactly the waiters whose
 * values its queue's log shows, without reading every fence. */
static void optimized_release_exact(enum hw_irq_payload payload)
{
	struct umt t = umt_up_logs(1, payload, HW_FAULT_NONE, OS_FAULT_NONE);
	struct rt_queue *q1 = umt_queue(&t, 0, true), *q2 = umt_queue(&t, 0, true);
	struct rt_fence *f1, *f2;
	assert_int_equal(rt_fence_create(t.d, 0, &f1), 0);
	assert_int_equal(rt_fence_create(t.d, 0, &f2), 0);
	struct lf_event e11, e13, e21;
	lf_event_init(&e11);
	lf_event_init(&e13);
	lf_event_init(&e21);
	assert_int_equal(rt_fence_wait_event(f1, 1, &e11), 0);
	assert_int_equal(rt_fence_wait_event(f1, 3, &e13), 0);
	assert_int_equal(rt_fence_wait_event(f2, 1, &e21), 0);
	assert_int_equal(rt_queue_signal(q1, f1, 1), 0);
	assert_true(fbt_eventually(lf_event_is_set(&e11)));
	fbt_settle();
	assert_false(lf_event_is_set(&e13));
	assert_false(lf_event_is_set(&e21));
	assert_int_equal(rt_queue_signal(q2, f2, 1), 0);
	assert_true(fbt_eventually(lf_event_is_set(&e21)));
	fbt_settle();
	assert_false(lf_event_is_set(&e13));
	assert_int_equal(rt_queue_signal(q1, f1, 3), 0);
	assert_true(fbt_eventually(lf_event_is_set(&e13)));
	struct os_stats s = fbt_settled_stats(t.a);
	assert_int_equal(s.log_released, 3);
	assert_int_equal(s.released, 3);
	assert_int_equal(s.fences_scanned, 0);           /* the logs told; no fence read */
	assert_int_equal(s.log_fallbacks, 0);
	assert_int_equal(s.lost_wakeups, 0);
	umt_down(&t);
}

static void optimized_payload_names_the_queue(void **state)
{
	optimized_release_exact(HW_PAYLOAD_OPTIMIZED);
}

static void optimized_null_handle_scans_engine_logs(void **state)
{
	optimized_release_exact(HW_PAYLOAD_OPTIMIZED_NULL);
}

/* With the optimized cap, a kernel-mode queue (no log) still names the fence. */
static void optimized_kernel_mode_queue_names_fence(void **state)
{
	struct umt t = umt_up_logs(1, HW_PAYLOAD_OPTIMIZED, HW_FAULT_NONE, OS_FAULT_NONE);
	struct rt_queue *km = umt_queue(&t, 0, false);
	struct rt_fence *f;
	assert_int_equal(rt_fence_create(t.d, 0, &f), 0);
	struct lf_event ev;
	umt_signal_awaited(km, f, 1, &ev);
	assert_true(fbt_eventually(lf_event_is_set(&ev)));
	struct os_stats s = fbt_settled_stats(t.a);
	assert_int_equal(s.log_released, 0);
	assert_int_equal(s.fences_scanned, 1);
	umt_down(&t);
}

/* Overrun on purpose: with a waiter at the top value of a fresh fence, a
 * burst of signals below it raises no interrupt (so the OS reads nothing)
 * and overruns the signal log several times; the last signal's optimized interrupt finds the
 * overrun and falls back to reading every fence.  Rounds of it: 0 lost.
 * Without the fallback (OS fault) the waiter is not released. */
#define OVR_ROUNDS 8
#define OVR_BURST (3 * LOG_ENTRIES)

static struct rt_fence *overrun_round(struct umt *t, struct rt_queue *q, struct lf_event *ev)
{
	struct rt_fence *f;
	assert_int_equal(rt_fence_create(t->d, 0, &f), 0);
	lf_event_init(ev);
	assert_int_equal(rt_fence_wait_event(f, OVR_BURST, ev), 0);
	signal_n(q, f, 1, OVR_BURST);
	return f;
}

static void overrun_falls_back_nothing_lost(void **state)
{
	struct umt t = umt_up_logs(1, HW_PAYLOAD_OPTIMIZED, HW_FAULT_NONE, OS_FAULT_NONE);
	struct rt_queue *q = umt_queue(&t, 0, true);
	unsigned released = 0;
	static struct lf_event ev[OVR_ROUNDS];
	for (unsigned r = 0; r < OVR_ROUNDS; r++) {
		overrun_round(&t, q, &ev[r]);
		if (lf_event_wait(&ev[r], 0, 5000000000ll) == 0)
			released++;
	}
	struct os_stats s = fbt_settled_stats(t.a);
	printf("overrun stress: %u rounds of %zu signals, released %u, overruns %llu, fallbacks %llu, lost %llu\n",
	       OVR_ROUNDS, (size_t)OVR_BURST, released, (unsigned long long)s.log_overruns,
	       (unsigned long long)s.log_fallbacks, (unsigned long long)s.lost_wakeups);
	assert_int_equal(released, OVR_ROUNDS);
	assert_true(s.log_overruns >= OVR_ROUNDS);
	assert_true(s.log_fallbacks >= OVR_ROUNDS);
	assert_int_equal(s.lost_wakeups, 0);
	umt_down(&t);
}

static void overrun_without_fallback_loses_waiter(void **state)
{
	struct umt t = umt_up_logs(1, HW_PAYLOAD_OPTIMIZED, HW_FAULT_NONE, OS_FAULT_NO_LOG_FALLBACK);
	struct rt_queue *q = umt_queue(&t, 0, true);
	struct lf_event ev;
	struct rt_fence *f = overrun_round(&t, q, &ev);
	assert_int_equal(rt_queue_wait(q, 0, 5000000000ll), 0);
	assert_true(fbt_eventually(fbt_stats(t.a).log_overruns > 0));
	fbt_settle();
	assert_false(lf_event_is_set(&ev));              /* lost: the value was reached */
	assert_true(rt_fence_completed(f) >= OVR_BURST);
	assert_int_equal(rt_fence_signal(f, OVR_BURST + 1), 0);   /* a CPU signal frees it */
	assert_true(fbt_eventually(lf_event_is_set(&ev)));
	umt_down(&t);
}

/* Seed, "Log buffer overrun is permitted": "it falls back to the
 * nonoptimized path that reads the live value of every fence owned by the
 * same device".  Two devices: the first one's queue overruns its log
 * (overrun_round), the second has NB fences with waiters not yet due: each
 * fallback reads none of the second device's fences (fences_scanned counts
 * what the handler read), and the first device's waiter is released. */
static void overrun_fallback_reads_the_same_devices_fences_only(void **state)
{
	enum { NB = 32 };
	struct umt t = umt_up_logs(1, HW_PAYLOAD_OPTIMIZED, HW_FAULT_NONE, OS_FAULT_NONE);
	struct rt_device *other;
	assert_int_equal(rt_device_create(t.u, &other), 0);
	struct rt_fence *fo[NB];
	struct lf_event eo[NB];
	for (int i = 0; i < NB; i++) {
		assert_int_equal(rt_fence_create(other, 0, &fo[i]), 0);
		lf_event_init(&eo[i]);
		assert_int_equal(rt_fence_wait_event(fo[i], 1, &eo[i]), 0);
	}
	struct rt_queue *q = umt_queue(&t, 0, true);
	struct os_stats s0 = fbt_settled_stats(t.a);
	struct lf_event ev;
	overrun_round(&t, q, &ev);
	assert_int_equal(lf_event_wait(&ev, 0, 5000000000ll), 0);
	struct os_stats s1 = fbt_settled_stats(t.a);
	uint64_t fallbacks = s1.log_fallbacks - s0.log_fallbacks, scanned = s1.fences_scanned - s0.fences_scanned;
	assert_true(fallbacks >= 1);
	assert_true(scanned >= fallbacks);              /* the first device's fence at least */
	assert_true(scanned < fallbacks * NB);          /* none of the other device's NB */
	for (int i = 0; i < NB; i++) {
		assert_false(lf_event_is_set(&eo[i]));
		assert_int_equal(rt_fence_signal(fo[i], 1), 0);
		assert_int_equal(lf_event_wait(&eo[i], 0, 5000000000ll), 0);
	}
	assert_int_equal(rt_device_destroy(other), 0);
	umt_down(&t);
}

/* The test plays the GPU on idle queues: CurrentValue written without the
 * CMP (no interrupt), the signal logged in q's log. */
static void gpu_signal_logged(struct rt_queue *q, struct rt_fence *f, uint64_t v)
{
	struct hw_fence *hf = os_fence_hw(rt_fence_os(f));
	uint64_t seq = hw_fence_write(hf, v, true);
	struct hw_log *log = os_log_hw(umt_queue_log(q), HW_LOG_SIGNALS);
	hw_log_write(NULL, log, hw_log_pos(log, hw_log_header(log)), hf->handle, v, seq, HW_LOG_OP_SIGNAL_EXECUTED, 0,
		     lf_now_ns());
}

static uint64_t qhandle(struct rt_queue *q)
{
	return hw_queue_handle(os_hwqueue_hw(rt_queue_os(q)));
}

/* An optimized payload naming several queues (the seed's preferred array)
 * reads each one's log; a handle naming no log falls back to every fence. */
static void optimized_payload_array_and_bad_handle(void **state)
{
	struct umt t = umt_up_logs(1, HW_PAYLOAD_OPTIMIZED, HW_FAULT_NONE, OS_FAULT_NONE);
	struct rt_queue *q1 = umt_queue(&t, 0, true), *q2 = umt_queue(&t, 0, true), *km = umt_queue(&t, 0, false);
	struct rt_fence *f1, *f2, *f3;
	assert_int_equal(rt_fence_create(t.d, 0, &f1), 0);
	assert_int_equal(rt_fence_create(t.d, 0, &f2), 0);
	assert_int_equal(rt_fence_create(t.d, 0, &f3), 0);
	struct lf_event e1, e2, e3;
	lf_event_init(&e1);
	lf_event_init(&e2);
	lf_event_init(&e3);
	assert_int_equal(rt_fence_wait_event(f1, 1, &e1), 0);
	assert_int_equal(rt_fence_wait_event(f2, 1, &e2), 0);
	assert_int_equal(rt_fence_wait_event(f3, 1, &e3), 0);
	gpu_signal_logged(q1, f1, 1);
	gpu_signal_logged(q2, f2, 1);
	struct hw_irq_rec *rec = hw_irq_alloc();
	rec->kind = HW_IRQ_NATIVE_FENCE_SIGNALED;
	rec->engine = 0;
	rec->optimized = true;
	rec->nqueues = 2;
	rec->hwqueues[0] = qhandle(q1);
	rec->hwqueues[1] = qhandle(q2);
	hw_irq_raise(os_adapter_hw(t.a), rec);
	assert_true(fbt_eventually(lf_event_is_set(&e1) && lf_event_is_set(&e2)));
	struct os_stats s = fbt_settled_stats(t.a);
	assert_int_equal(s.log_released, 2);
	assert_int_equal(s.fences_scanned, 0);
	/* f3 reached by a GPU that names a kernel-mode queue (no log): every fence is read */
	hw_fence_write(os_fence_hw(rt_fence_os(f3)), 1, true);
	rec = hw_irq_alloc();
	rec->kind = HW_IRQ_NATIVE_FENCE_SIGNALED;
	rec->engine = 0;
	rec->optimized = true;
	rec->nqueues = 1;
	rec->hwqueues[0] = qhandle(km);
	hw_irq_raise(os_adapter_hw(t.a), rec);
	assert_true(fbt_eventually(lf_event_is_set(&e3)));
	s = fbt_settled_stats(t.a);
	assert_int_equal(s.log_bad_handles, 1);
	assert_int_equal(s.log_fallbacks, 1);
	assert_true(s.fences_scanned >= 1);
	umt_down(&t);
}

/* A recreation that finds signal entries the OS never read: their waiters
 * are released by a read of every fence (nothing lost with the old buffer). */
static void recreate_with_unread_signals_loses_nothing(void **state)
{
	struct umt t = umt_up_logs(1, HW_PAYLOAD_OPTIMIZED, HW_FAULT_NONE, OS_FAULT_NONE);
	struct rt_queue *q = umt_queue(&t, 0, true);
	struct rt_fence *f;
	assert_int_equal(rt_fence_create(t.d, 0, &f), 0);
	struct lf_event ev;
	lf_event_init(&ev);
	assert_int_equal(rt_fence_wait_event(f, 1, &ev), 0);
	gpu_signal_logged(q, f, 1);                      /* logged; no interrupt yet */
	assert_int_equal(os_hwqueue_recreate_logs(rt_queue_os(q), HW_LOG_SIZE), 0);
	assert_true(fbt_eventually(lf_event_is_set(&ev)));
	struct os_stats s = fbt_settled_stats(t.a);
	assert_true(s.fences_scanned >= 1);
	assert_int_equal(s.log_recreates, 2);
	umt_down(&t);
}

FB_TEST_MAIN(cmocka_unit_test(log_buffers_user_mode_queues_only),
	     cmocka_unit_test(log_size_chosen_at_stack_creation),
	     cmocka_unit_test(log_entries_and_queued_events),
	     cmocka_unit_test(write_order_entry_before_index),
	     cmocka_unit_test(write_order_broken_index_first_caught),
	     cmocka_unit_test(timestamps_zero_repeated_accepted_backwards_reported),
	     cmocka_unit_test(overrun_detected_against_cached_count),
	     cmocka_unit_test(recreate_log_buffers),
	     cmocka_unit_test(optimized_payload_names_the_queue),
	     cmocka_unit_test(optimized_null_handle_scans_engine_logs),
	     cmocka_unit_test(optimized_kernel_mode_queue_names_fence),
	     cmocka_unit_test(optimized_payload_array_and_bad_handle),
	     cmocka_unit_test(recreate_with_unread_signals_loses_nothing),
	     cmocka_unit_test(overrun_falls_back_nothing_lost),
	     cmocka_unit_test(overrun_without_fallback_loses_waiter),
	     cmocka_unit_test(overrun_fallback_reads_the_same_devices_fences_only))
