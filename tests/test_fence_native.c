/* tests/test_fence_native.c — conformance of the native fence path, one test per
 * rule of the seed (native-gpu-fence), each named after its section. */
#include <pthread.h>

#include "tests/fb_test.h"
#include "tests/fence_test_util.h"
#include "lockfree/alloc.h"

static struct os_adapter *native_adapter(enum hw_irq_payload payload, unsigned engines)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.caps.payload = payload;
	cfg.caps.engines = engines;
	return fbt_adapter(&cfg);
}

/* "Conditional interrupt notification only for GPU fence signals that have CPU waiters" */
static void conditional_interrupt_no_waiter_no_interrupt(void **state)
{
	struct os_adapter *a = native_adapter(HW_PAYLOAD_FENCE_ARRAY, 1);
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f), 0);
	assert_true(os_fence_is_native(f));
	struct os_queue *q = fbt_queue(a, 0, 64);
	for (uint64_t v = 1; v <= 100; v++)
		fbt_signal_gpu(q, f, v);
	assert_true(fbt_eventually(os_fence_value(f) == 100));
	struct os_stats s = fbt_stats(a);
	assert_int_equal(s.gpu_signals, 100);
	assert_int_equal(s.gpu_interrupts, 0);
	fbt_down(a);
}

/* "Monitored value": least currently waited value − 1, UINT64_MAX when none;
 * the OS "advances the monitored value" as waiters are released. */
static void monitored_value_tracks_least_waiter(void **state)
{
	struct os_adapter *a = native_adapter(HW_PAYLOAD_FENCE_ARRAY, 1);
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f), 0);
	_Atomic uint64_t *mv = os_fence_hw(f)->mv;
	assert_true(*mv == UINT64_MAX);
	struct lf_event e50, e42;
	lf_event_init(&e50);
	lf_event_init(&e42);
	os_fence_wait_event(f, 50, &e50);
	assert_true(*mv == 49);
	os_fence_wait_event(f, 42, &e42);
	assert_true(*mv == 41);
	struct os_queue *q = fbt_queue(a, 0, 64);
	/* "CurrentValue and MonitoredValue are both 41": no interrupt at 41 */
	fbt_signal_gpu(q, f, 41);
	assert_true(fbt_eventually(os_fence_value(f) == 41));
	fbt_settle();
	assert_int_equal(fbt_stats(a).gpu_interrupts, 0);
	assert_false(lf_event_is_set(&e42));
	/* 42 > 41: the CMP interrupts, the OS releases 42 and advances MV to 49 */
	fbt_signal_gpu(q, f, 42);
	assert_int_equal(lf_event_wait(&e42, 0, 5000000000ll), 0);
	assert_true(fbt_eventually(*mv == 49));
	assert_false(lf_event_is_set(&e50));
	fbt_signal_gpu(q, f, 50);
	assert_int_equal(lf_event_wait(&e50, 0, 5000000000ll), 0);
	assert_true(fbt_eventually(*mv == UINT64_MAX));
	assert_true(fbt_eventually(fbt_stats(a).interrupts == 2));
	struct os_stats s = fbt_stats(a);
	assert_int_equal(s.gpu_interrupts, 2);   /* 42 and 50: the two signals a waiter watched */
	assert_int_equal(s.released, 2);
	/* The handler of 42 may already have released 50 in its resample (50
	 * was signaled the moment 42's waiter woke): 50's own interrupt then
	 * finds nobody, the extra interrupt the seed allows. */
	assert_true(s.spurious <= 1);
	fbt_down(a);
}

/* "Synchronization between the GPU and CPU": a value reached before the waiter
 * registered is never missed — the OS resamples CurrentValue after the MV change. */
static void resample_value_reached_before_registration(void **state)
{
	struct os_adapter *a = native_adapter(HW_PAYLOAD_FENCE_ARRAY, 1);
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 7, 0, &f), 0);
	assert_int_equal(os_fence_wait_cpu(f, 7, 0), 0);
	struct lf_event ev;
	lf_event_init(&ev);
	os_fence_wait_event(f, 5, &ev);
	assert_true(lf_event_is_set(&ev));
	assert_int_equal(os_fence_wait_cpu(f, 8, 1000000), -ETIMEDOUT);
	struct os_stats s = fbt_stats(a);
	assert_int_equal(s.timeouts, 1);
	assert_int_equal(s.lost_wakeups, 0);
	fbt_down(a);
}

/* "Native fence signaled interrupt": the three payload forms. */
static void payload_array_null_and_eval_legacy(void **state)
{
	const enum hw_irq_payload kinds[] = { HW_PAYLOAD_FENCE_ARRAY, HW_PAYLOAD_NULL, HW_PAYLOAD_NULL_EVAL_LEGACY };
	for (size_t k = 0; k < 3; k++) {
		struct os_adapter *a = native_adapter(kinds[k], 1);
		struct os_fence *f[8], *legacy;
		for (int i = 0; i < 8; i++)
			assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f[i]), 0);
		assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0, 0, &legacy), 0);
		struct os_queue *q = fbt_queue(a, 0, 64);
		struct lf_event ev;
		lf_event_init(&ev);
		os_fence_wait_event(f[3], 1, &ev);
		fbt_signal_gpu(q, f[3], 1);
		assert_int_equal(lf_event_wait(&ev, 0, 5000000000ll), 0);
		assert_true(fbt_eventually(fbt_stats(a).interrupts == 1));
		struct os_stats s = fbt_stats(a);
		/* array: exactly the signaled fence; NULL: the OS scanned all native fences */
		if (kinds[k] == HW_PAYLOAD_FENCE_ARRAY)
			assert_int_equal(s.fences_scanned, 1);
		else
			assert_true(s.fences_scanned >= 8);

		/* EvaluateLegacyMonitoredFences: a NULL-payload native interrupt also
		 * scans legacy waiters.  The legacy fence's value is written with no
		 * interrupt of its own (as when interrupts are collapsed), then a
		 * native interrupt is injected. */
		struct lf_event lev;
		lf_event_init(&lev);
		os_fence_wait_event(legacy, 1, &lev);
		hw_fence_write(os_fence_hw(legacy), 1, true);
		struct hw_irq_rec *rec = hw_irq_alloc();
		rec->kind = HW_IRQ_NATIVE_FENCE_SIGNALED;
		rec->eval_legacy = kinds[k] == HW_PAYLOAD_NULL_EVAL_LEGACY;
		hw_irq_raise(os_adapter_hw(a), rec);
		assert_true(fbt_eventually(fbt_stats(a).interrupts == 2));
		assert_int_equal(lf_event_is_set(&lev), kinds[k] == HW_PAYLOAD_NULL_EVAL_LEGACY);
		os_fence_signal_cpu(legacy, 2);   /* releases it in the other cases */
		assert_int_equal(lf_event_wait(&lev, 0, 5000000000ll), 0);
		fbt_down(a);
	}
}

/* "Passing a handle to a destroyed native fence object causes a bug check":
 * detected and counted, never a use-after-free. */
static void payload_destroyed_fence_bugcheck(void **state)
{
	struct os_adapter *a = native_adapter(HW_PAYLOAD_FENCE_ARRAY, 1);
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f), 0);
	uint64_t h = os_fence_handle(f);
	os_fence_destroy(f);
	struct hw_irq_rec *rec = hw_irq_alloc();
	rec->kind = HW_IRQ_NATIVE_FENCE_SIGNALED;
	rec->fences[0] = h;
	rec->nfences = 1;
	hw_irq_raise(os_adapter_hw(a), rec);
	assert_true(fbt_eventually(fbt_stats(a).bugchecks == 1));
	fbt_down_bugchecks(a, 1);
}

/* "GPU wait on a monitored fence value ... without requiring a CPU roundtrip":
 * engine-to-engine synchronization with no interrupt, and the waiting engine
 * keeps running its other queues. */
static void gpu_wait_engine_to_engine_no_interrupt(void **state)
{
	struct os_adapter *a = native_adapter(HW_PAYLOAD_FENCE_ARRAY, 2);
	struct os_fence *f, *g, *h;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &g), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &h), 0);
	struct os_queue *qa = fbt_queue(a, 0, 64), *qb = fbt_queue(a, 0, 64);
	struct os_queue *qc = fbt_queue(a, 1, 64);
	struct hw_cmd waitcmds[2] = {
		{ .op = HW_CMD_WAIT, .fence = os_fence_hw(f), .value = 5 },
		{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(g), .value = 1 },
	};
	os_queue_submit(qa, waitcmds, 2);
	fbt_signal_gpu(qb, h, 1);           /* same engine, other queue: runs meanwhile */
	assert_true(fbt_eventually(os_fence_value(h) == 1));
	fbt_settle();
	assert_int_equal(os_fence_value(g), 0);
	fbt_signal_gpu(qc, f, 5);           /* the other engine releases the wait */
	assert_true(fbt_eventually(os_fence_value(g) == 1));
	struct os_stats s = fbt_stats(a);
	assert_int_equal(s.gpu_interrupts, 0);
	assert_int_equal(s.interrupts, 0);
	fbt_down(a);
}

/* CPU signal: "the OS writes the value and releases waiters (and, native,
 * whatever GPU queues wait on it)". */
static void cpu_signal_releases_cpu_and_gpu_waiters(void **state)
{
	struct os_adapter *a = native_adapter(HW_PAYLOAD_FENCE_ARRAY, 1);
	struct os_fence *f, *g;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &g), 0);
	struct os_queue *q = fbt_queue(a, 0, 64);
	struct hw_cmd cmds[2] = {
		{ .op = HW_CMD_WAIT, .fence = os_fence_hw(f), .value = 3 },
		{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(g), .value = 1 },
	};
	os_queue_submit(q, cmds, 2);
	struct lf_event ev;
	lf_event_init(&ev);
	os_fence_wait_event(f, 3, &ev);
	fbt_settle();
	assert_int_equal(os_fence_value(g), 0);
	assert_int_equal(os_fence_signal_cpu(f, 3), 0);
	assert_int_equal(lf_event_wait(&ev, 0, 5000000000ll), 0);
	assert_true(fbt_eventually(os_fence_value(g) == 1));
	fbt_down(a);
}

/* CPU waits: many events per fence, one event for many values (all / any). */
static void cpu_wait_events_many_and_multi(void **state)
{
	struct os_adapter *a = native_adapter(HW_PAYLOAD_FENCE_ARRAY, 1);
	struct os_fence *f, *g;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &g), 0);
	struct lf_event ev[10], all, any;
	for (int i = 0; i < 10; i++) {
		lf_event_init(&ev[i]);
		os_fence_wait_event(f, (uint64_t)i + 1, &ev[i]);
	}
	lf_event_init(&all);
	lf_event_init(&any);
	struct os_fence *fs[2] = { f, g };
	uint64_t vs[2] = { 4, 2 };
	assert_int_equal(os_wait_multi(fs, vs, 2, true, &all), 0);
	assert_int_equal(os_wait_multi(fs, vs, 2, false, &any), 0);
	assert_int_equal(os_wait_multi(fs, vs, 0, true, &any), -EINVAL);
	struct os_queue *q = fbt_queue(a, 0, 64);
	fbt_signal_gpu(q, f, 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal(lf_event_wait(&ev[i], 0, 5000000000ll), 0);
	assert_int_equal(lf_event_wait(&any, 0, 5000000000ll), 0);
	fbt_settle();
	for (int i = 5; i < 10; i++)
		assert_false(lf_event_is_set(&ev[i]));
	assert_false(lf_event_is_set(&all));
	fbt_signal_gpu(q, g, 2);
	assert_int_equal(lf_event_wait(&all, 0, 5000000000ll), 0);
	fbt_signal_gpu(q, f, 10);
	for (int i = 5; i < 10; i++)
		assert_int_equal(lf_event_wait(&ev[i], 0, 5000000000ll), 0);
	fbt_down(a);
}

/* A blocking CPU wait is released by a GPU signal through the interrupt. */
static void cpu_wait_blocking_released_by_gpu(void **state)
{
	struct os_adapter *a = native_adapter(HW_PAYLOAD_FENCE_ARRAY, 1);
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f), 0);
	struct os_queue *q = fbt_queue(a, 0, 64);
	struct hw_cmd cmds[2] = {
		{ .op = HW_CMD_WORK, .arg = 20000000 },   /* 20 ms: the waiter sleeps first */
		{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(f), .value = 1 },
	};
	os_queue_submit(q, cmds, 2);
	assert_int_equal(os_fence_wait_cpu(f, 1, 5000000000ll), 0);
	struct os_stats s = fbt_stats(a);
	assert_int_equal(s.waits_blocked, 1);
	assert_int_equal(s.gpu_interrupts, 1);
	assert_int_equal(s.lost_wakeups, 0);
	fbt_down(a);
}

/* Event waits registered while another thread CPU-signals the very value:
 * the interrupt thread may release (and drop its reference to) the node
 * before registration returns; every event must still be set exactly when
 * its value is reached, and the node never touched after it is freed (ASan). */
struct race_signaler {
	struct os_fence *f;
	_Atomic uint64_t want;
};

static void *race_signal_main(void *arg)
{
	struct race_signaler *r = arg;
	for (;;) {
		uint64_t v = atomic_load(&r->want);
		if (v == UINT64_MAX)
			return NULL;
		if (v && os_fence_value(r->f) < v)
			os_fence_signal_cpu(r->f, v);
	}
}

static void cpu_wait_event_registration_races_signal(void **state)
{
	struct os_adapter *a = native_adapter(HW_PAYLOAD_FENCE_ARRAY, 1);
	struct race_signaler r = { 0 };
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &r.f), 0);
	pthread_t t;
	pthread_create(&t, NULL, race_signal_main, &r);
	for (uint64_t v = 1; v <= 3000; v++) {
		struct lf_event ev;
		lf_event_init(&ev);
		atomic_store(&r.want, v);
		assert_int_equal(os_fence_wait_event(r.f, v, &ev), 0);
		assert_int_equal(lf_event_wait(&ev, 0, 5000000000ll), 0);
		assert_true(os_fence_value(r.f) >= v);
	}
	atomic_store(&r.want, UINT64_MAX);
	pthread_join(t, NULL);
	assert_int_equal(fbt_stats(a).lost_wakeups, 0);
	fbt_down(a);
}

/* os_test_wait_timeout_hook: the value lands as the GPU writes it. */
static void land_value(struct os_fence *f, uint64_t v)
{
	hw_fence_write(os_fence_hw(f), v, true);
}

/* One thread waiting on two adapters in turn (cross-adapter work does) keeps
 * one counter block per adapter, not one per switch (jemalloc's count of
 * allocated bytes; sanitizer builds use libc and read 0 here). */
static void cpu_wait_counters_do_not_grow_across_adapters(void **state)
{
	struct os_adapter *a = native_adapter(HW_PAYLOAD_FENCE_ARRAY, 1);
	struct os_adapter *b = native_adapter(HW_PAYLOAD_FENCE_ARRAY, 1);
	struct os_fence *fa, *fb;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 1, 0, &fa), 0);
	assert_int_equal(os_fence_create(b, OS_FENCE_NATIVE, 1, 0, &fb), 0);
	os_fence_wait_cpu(fa, 1, 0);
	os_fence_wait_cpu(fb, 1, 0);
	size_t before = lf_alloc_stats_allocated();
	for (int i = 0; i < 100000; i++) {
		os_fence_wait_cpu(fa, 1, 0);
		os_fence_wait_cpu(fb, 1, 0);
	}
	size_t after = lf_alloc_stats_allocated();
	assert_true(after <= before + 65536);
	assert_int_equal(fbt_stats(a).waits, 100001);
	assert_int_equal(fbt_stats(b).waits, 100001);
	fbt_down(a);
	fbt_down(b);
}

/* ---- rewinding: seed multi-engine-synchronization, "If a race does occur,
 * between a value which will satisfy an outstanding wait, and a lower value
 * which will not, the wait will be satisfied regardless of which value
 * remains afterwards." ---- */

/* CPU: Signal(25); Signal(0) back to back releases every wait for 20 (event,
 * multi any/all, blocking), and before Signal(25) returns: the events are
 * checked with a zero timeout.  20 rounds: the interrupt thread of the old
 * rule sometimes read 25 before the rewind landed. */
static void rewind_cpu_signal_releases_waits(void **state)
{
	struct os_adapter *a = native_adapter(HW_PAYLOAD_FENCE_ARRAY, 1);
	struct os_fence *f, *other;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 10, 0, &f), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &other), 0);
	struct fbt_rewind r;   /* out of the loop: other still holds each round's "any" wait until teardown */
	for (int round = 0; round < 20; round++) {
		fbt_rewind_arm(a, &r, f, other);
		assert_int_equal(os_fence_signal_cpu(f, 25), 0);
		assert_int_equal(os_fence_signal_cpu(f, 0), 0);
		fbt_rewind_check(&r, 0);
		assert_int_equal(os_fence_value(f), 0);
	}
	struct os_stats s = fbt_stats(a);
	assert_int_equal(s.lost_wakeups + s.timeouts, 0);
	assert_int_equal(s.signal_released, 20 * 5);   /* event, any, all's two values, blocking */
	fbt_down(a);
}

/* GPU: the interrupt for 25 is handled after the fence was rewound to 0 and
 * still releases every wait for 20: the record carries the value written,
 * whatever the payload form.  First exactly that order (the engine's record
 * for its write of 25, handled once CurrentValue reads 0), then end to end:
 * SIGNAL 25, SIGNAL 0 back to back on one queue. */
static void rewind_gpu_signal_releases_waits(void **state)
{
	const enum hw_irq_payload kinds[] = { HW_PAYLOAD_FENCE_ARRAY, HW_PAYLOAD_NULL, HW_PAYLOAD_NULL_EVAL_LEGACY };
	for (size_t k = 0; k < 3; k++) {
		struct os_adapter *a = native_adapter(kinds[k], 1);
		struct os_fence *f, *other;
		assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 10, 0, &f), 0);
		assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &other), 0);
		struct fbt_rewind r;
		fbt_rewind_arm(a, &r, f, other);
		uint64_t s25 = hw_fence_write(os_fence_hw(f), 25, true);   /* the GPU's write, */
		hw_fence_write(os_fence_hw(f), 0, true);                    /* a rewind, then its interrupt */
		fbt_raise_signaled(a, HW_IRQ_NATIVE_FENCE_SIGNALED, kinds[k], f, 25, s25);
		fbt_rewind_check(&r, 5000000000ll);

		fbt_rewind_arm(a, &r, f, other);
		struct os_queue *q = fbt_queue(a, 0, 64);
		struct hw_cmd cmds[2] = {
			{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(f), .value = 25 },
			{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(f), .value = 0 },
		};
		assert_int_equal(os_queue_submit(q, cmds, 2), 0);
		fbt_rewind_check(&r, 5000000000ll);
		assert_true(fbt_eventually(os_fence_value(f) == 0));
		assert_int_equal(fbt_stats(a).lost_wakeups, 0);
		fbt_down(a);
	}
}

/* The CPU-side Signal "occurs immediately": the events it satisfies are set
 * when it returns (an application checks with a zero timeout right after). */
static void cpu_signal_sets_events_before_it_returns(void **state)
{
	struct os_adapter *a = native_adapter(HW_PAYLOAD_FENCE_ARRAY, 1);
	struct os_fence *f, *g;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0, 0, &g), 0);
	for (uint64_t v = 1; v <= 1000; v++) {
		struct lf_event ev, both;
		lf_event_init(&ev);
		lf_event_init(&both);
		struct os_fence *fs[2] = { f, g };
		uint64_t vs[2] = { v, v };
		assert_int_equal(os_fence_wait_event(f, v, &ev), 0);
		assert_int_equal(os_wait_multi(fs, vs, 2, true, &both), 0);
		assert_int_equal(os_fence_signal_cpu(f, v), 0);
		assert_int_equal(lf_event_wait(&ev, 0, 0), 0);
		assert_false(lf_event_is_set(&both));
		assert_int_equal(os_fence_signal_cpu(g, v), 0);
		assert_int_equal(lf_event_wait(&both, 0, 0), 0);
	}
	assert_int_equal(fbt_stats(a).signal_released, 3000);
	fbt_down(a);
}

/* WaitForMultipleObjects's limit: OS_WAIT_MULTI_MAX pairs work; one more is
 * -E2BIG and registers nothing; none is -EINVAL. */
static void wait_multi_limit(void **state)
{
	struct os_adapter *a = native_adapter(HW_PAYLOAD_FENCE_ARRAY, 1);
	enum { N = OS_WAIT_MULTI_MAX + 1 };
	struct os_fence *f[N];
	uint64_t v[N];
	for (int i = 0; i < N; i++) {
		assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f[i]), 0);
		v[i] = 1;
	}
	struct lf_event ev;
	lf_event_init(&ev);
	assert_int_equal(os_wait_multi(f, v, N, true, &ev), -E2BIG);
	for (int i = 0; i < N; i++)
		assert_true(*os_fence_hw(f[i])->mv == UINT64_MAX);   /* nobody registered */
	assert_int_equal(os_wait_multi(f, v, 0, true, &ev), -EINVAL);
	assert_int_equal(os_wait_multi(f, v, OS_WAIT_MULTI_MAX, true, &ev), 0);
	for (int i = 0; i < OS_WAIT_MULTI_MAX; i++) {
		assert_false(lf_event_is_set(&ev));
		assert_int_equal(os_fence_signal_cpu(f[i], 1), 0);
	}
	assert_int_equal(lf_event_wait(&ev, 0, 0), 0);
	fbt_down(a);
}

/* A wait that times out a moment before its value lands is a timeout, not
 * a lost wake-up: the value lands (the GPU's write, no interrupt handled
 * yet) after the wait timed out and before it gave up its place. */
static void timeout_just_before_the_value_lands_is_not_lost(void **state)
{
	struct os_adapter *a = native_adapter(HW_PAYLOAD_FENCE_ARRAY, 1);
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f), 0);
	os_test_wait_timeout_hook = land_value;
	int rc = os_fence_wait_cpu(f, 5, 1000000);
	os_test_wait_timeout_hook = NULL;
	assert_int_equal(rc, -ETIMEDOUT);
	assert_int_equal(os_fence_value(f), 5);
	struct os_stats s = fbt_stats(a);
	assert_int_equal(s.timeouts, 1);
	assert_int_equal(s.lost_wakeups, 0);
	fbt_down(a);
}

/* Destroying a fence retires the interrupts raised for it before: none is a
 * bug check (the payload named a live fence when the GPU raised it). */
static void destroy_retires_interrupts_raised_before(void **state)
{
	struct os_adapter *a = native_adapter(HW_PAYLOAD_FENCE_ARRAY, 1);
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f), 0);
	for (int i = 0; i < 64; i++)
		fbt_raise_signaled(a, HW_IRQ_NATIVE_FENCE_SIGNALED, HW_PAYLOAD_FENCE_ARRAY, f, 1,
				   hw_fence_write(os_fence_hw(f), 1, true));
	assert_int_equal(os_fence_destroy(f), 0);
	os_adapter_quiesce(a);
	assert_int_equal(fbt_stats(a).interrupts, 64);
	fbt_down(a);   /* 0 bug checks */
}

/* Destroying a fence with event and multi waits still registered releases
 * them as abandoned (never a silent hang) and says so: -EBUSY. */
static void destroy_with_waiters_releases_them(void **state)
{
	struct os_adapter *a = native_adapter(HW_PAYLOAD_FENCE_ARRAY, 1);
	const enum os_fence_type types[2] = { OS_FENCE_NATIVE, OS_FENCE_MONITORED };
	for (int k = 0; k < 2; k++) {
		struct os_fence *f, *g;
		assert_int_equal(os_fence_create(a, types[k], 0, 0, &f), 0);
		assert_int_equal(os_fence_create(a, types[k], 0, 0, &g), 0);
		struct lf_event ev, all;
		lf_event_init(&ev);
		lf_event_init(&all);
		struct os_fence *fs[2] = { f, g };
		uint64_t vs[2] = { 5, 5 };
		assert_int_equal(os_fence_wait_event(f, 5, &ev), 0);
		assert_int_equal(os_wait_multi(fs, vs, 2, true, &all), 0);
		uint64_t before = fbt_stats(a).abandoned;
		assert_int_equal(os_fence_destroy(f), -EBUSY);
		assert_int_equal(lf_event_wait(&ev, 0, 0), 0);
		assert_int_equal(lf_event_wait(&all, 0, 0), 0);
		assert_int_equal(fbt_stats(a).abandoned - before, 2);
		assert_int_equal(os_fence_destroy(g), -EBUSY);   /* g's share of the multi wait */
		assert_int_equal(fbt_stats(a).abandoned - before, 3);
	}
	struct os_fence *idle;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &idle), 0);
	assert_int_equal(os_fence_destroy(idle), 0);
	fbt_down(a);
}

/* An any-wait's event is set once, by the first pair reached; then the OS
 * never touches it again, so the caller may reuse it (or free it) as soon as
 * it sees it set, as WaitForMultipleObjects's caller reuses its handle once
 * the wait returns.  The other pairs stay registered until their values are
 * reached or their fences destroyed: neither may set the reused event.  (The
 * rewinding race's rig re-arms its events each round at the same address: a
 * late second hit of the last round's any-wait read as a wait of the new
 * round released early.)  Returns how often the reused event was found set
 * (0..4: a pair reached, a pair abandoned, on each path). */
static int multi_any_reused_event_touched(enum os_fault fault)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.fault = fault;
	struct os_adapter *a = fbt_adapter(&cfg);
	const enum os_fence_type types[2] = { OS_FENCE_NATIVE, OS_FENCE_MONITORED };
	int touched = 0;
	for (int k = 0; k < 2; k++) {
		struct os_fence *f, *g, *h;
		assert_int_equal(os_fence_create(a, types[k], 0, 0, &f), 0);
		assert_int_equal(os_fence_create(a, types[k], 0, 0, &g), 0);
		assert_int_equal(os_fence_create(a, types[k], 0, 0, &h), 0);
		struct os_fence *fs[3] = { f, g, h };
		uint64_t vs[3] = { 1, 1, 1 };
		struct lf_event any;
		lf_event_init(&any);
		assert_int_equal(os_wait_multi(fs, vs, 3, false, &any), 0);
		assert_int_equal(os_fence_signal_cpu(f, 1), 0);   /* sets its events before it returns */
		assert_int_equal(lf_event_wait(&any, 0, 0), 0);
		lf_event_init(&any);                              /* the caller reuses its event */
		assert_int_equal(os_fence_signal_cpu(g, 1), 0);   /* the second pair reached */
		touched += lf_event_is_set(&any);
		lf_event_init(&any);
		assert_int_equal(os_fence_destroy(h), -EBUSY);    /* the third abandoned */
		touched += lf_event_is_set(&any);
		assert_int_equal(os_fence_destroy(f), 0);
		assert_int_equal(os_fence_destroy(g), 0);
	}
	fbt_down(a);
	return touched;
}

static void multi_any_event_untouched_after_it_fired(void **state)
{
	assert_int_equal(multi_any_reused_event_touched(OS_FAULT_NONE), 0);
	/* the broken variant sets the event at every hit, as the code once did */
	assert_int_equal(multi_any_reused_event_touched(OS_FAULT_MULTI_SETS_EVERY_HIT), 4);
}

FB_TEST_MAIN(cmocka_unit_test(rewind_cpu_signal_releases_waits),
	     cmocka_unit_test(rewind_gpu_signal_releases_waits),
	     cmocka_unit_test(cpu_signal_sets_events_before_it_returns),
	     cmocka_unit_test(wait_multi_limit),
	     cmocka_unit_test(timeout_just_before_the_value_lands_is_not_lost),
	     cmocka_unit_test(destroy_retires_interrupts_raised_before),
	     cmocka_unit_test(destroy_with_waiters_releases_them),
	     cmocka_unit_test(multi_any_event_untouched_after_it_fired),
	     cmocka_unit_test(cpu_wait_counters_do_not_grow_across_adapters),
	     cmocka_unit_test(cpu_wait_event_registration_races_signal),
	     cmocka_unit_test(conditional_interrupt_no_waiter_no_interrupt),
	     cmocka_unit_test(monitored_value_tracks_least_waiter),
	     cmocka_unit_test(resample_value_reached_before_registration),
	     cmocka_unit_test(payload_array_null_and_eval_legacy),
	     cmocka_unit_test(payload_destroyed_fence_bugcheck),
	     cmocka_unit_test(gpu_wait_engine_to_engine_no_interrupt),
	     cmocka_unit_test(cpu_signal_releases_cpu_and_gpu_waiters),
	     cmocka_unit_test(cpu_wait_events_many_and_multi),
	     cmocka_unit_test(cpu_wait_blocking_released_by_gpu))
