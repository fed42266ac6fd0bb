/* tests/test_fence_shared.c — shared fences: global and per-process local handles,
 * reference counts and the DDI calls of the seed's walk-through (native-gpu-fence,
 * "Global and local handles for shared fences"), and the bug check for a
 * destroyed fence named in an interrupt payload. */
#include <pthread.h>

#include "tests/fb_test.h"
#include "tests/fence_test_util.h"

static struct os_adapter *shared_adapter(bool native)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.caps.native_fence = native;
	cfg.native_fence_enabled = native;
	return fbt_adapter(&cfg);
}

static struct os_process *new_process(void)
{
	struct os_process *p;
	assert_int_equal(os_process_create(&p), 0);
	return p;
}

/* Compare a's DDI log with want[0..n); print both on a mismatch. */
static void expect_ddis(struct os_adapter *a, const struct os_ddi_call *want, size_t n)
{
	struct os_ddi_call all[64], got[64];
	size_t m = os_adapter_ddi_log(a, all, 64), k = 0;
	/* the fence lifetime DDIs: the queues' context allocations and the
	 * waiters' MonitoredValue updates are not compared */
	for (size_t i = 0; i < m; i++)
		if (all[i].ddi != OS_DDI_CREATE_CONTEXT_ALLOCATION && all[i].ddi != OS_DDI_DESTROY_CONTEXT_ALLOCATION &&
		    all[i].ddi != OS_DDI_UPDATE_MONITORED_VALUES)
			got[k++] = all[i];
	bool same = k == n;
	for (size_t i = 0; same && i < n; i++)
		same = got[i].ddi == want[i].ddi && got[i].handle == want[i].handle && got[i].value == want[i].value;
	if (!same) {
		for (size_t i = 0; i < k; i++)
			printf("  got  %s(%#llx, %llu)\n", os_ddi_name(got[i].ddi),
			       (unsigned long long)got[i].handle, (unsigned long long)got[i].value);
		for (size_t i = 0; i < n; i++)
			printf("  want %s(%#llx, %llu)\n", os_ddi_name(want[i].ddi),
			       (unsigned long long)want[i].handle, (unsigned long long)want[i].value);
	}
	assert_true(same);
}

/* Inject a native fence signaled interrupt naming `global`; wait until handled. */
static void interrupt_naming(struct os_adapter *a, uint64_t global)
{
	uint64_t soft = fbt_stats(a).soft;
	struct hw_irq_rec *rec = hw_irq_alloc();
	rec->kind = HW_IRQ_NATIVE_FENCE_SIGNALED;
	rec->fences[0] = global;
	rec->nfences = 1;
	hw_irq_raise(os_adapter_hw(a), rec);
	/* One interrupt thread drains the queue in order: once an empty software
	 * record queued after ours is handled, ours is too (counting interrupts
	 * instead could be satisfied by a GPU interrupt still in flight). */
	hw_irq_kick(os_adapter_hw(a));
	assert_true(fbt_eventually(fbt_stats(a).soft == soft + 1));
}

/* The seed's walk-through, step by step, with the exact DDI sequence. */
static void shared_walkthrough_process_a_and_b(void **state)
{
	struct os_adapter *a = shared_adapter(true);
	struct os_process *pa = new_process(), *pb = new_process();
	uint64_t la, lb;

	/* A creates: DxgkDdiCreateNativeFence (global), then DxgkDdiOpenNativeFence (A's local) */
	assert_int_equal(os_shared_fence_create(pa, a, OS_FENCE_NATIVE, 3, 0, &la), 0);
	struct os_fence *f = os_process_fence(pa, la);
	assert_non_null(f);
	assert_true(os_fence_is_native(f));
	uint64_t g = os_fence_handle(f);
	assert_true(g != la);
	/* B opens: DxgkDdiOpenNativeFence (B's local) */
	assert_int_equal(os_shared_fence_open(pb, a, g, &lb), 0);
	assert_true(lb != la);
	assert_ptr_equal(os_process_fence(pb, lb), f);
	assert_int_equal(os_fence_value(os_process_fence(pb, lb)), 3);

	/* A destroys: only DxgkDdiCloseNativeFence(local A); the global handle stays */
	assert_int_equal(os_shared_fence_close(pa, la), 0);
	assert_null(os_process_fence(pa, la));
	assert_ptr_equal(os_process_fence(pb, lb), f);
	interrupt_naming(a, g);
	assert_int_equal(fbt_stats(a).bugchecks, 0);
	/* ... and still works for B: a GPU signal with B waiting */
	struct os_queue *q = fbt_queue(a, 0, 64);
	struct lf_event ev;
	lf_event_init(&ev);
	assert_int_equal(os_fence_wait_event(f, 4, &ev), 0);
	fbt_signal_gpu(q, f, 4);
	assert_int_equal(lf_event_wait(&ev, 0, 5000000000ll), 0);

	/* B destroys: DxgkDdiCloseNativeFence(local B), then DxgkDdiDestroyNativeFence(global) */
	assert_int_equal(os_shared_fence_close(pb, lb), 0);
	assert_null(os_process_fence(pb, lb));
	const struct os_ddi_call want[] = {
		{ OS_DDI_CREATE_NATIVE_FENCE, g, 3, 1 },
		{ OS_DDI_OPEN_NATIVE_FENCE, la, g, 1 },
		{ OS_DDI_OPEN_NATIVE_FENCE, lb, g, 1 },
		{ OS_DDI_CLOSE_NATIVE_FENCE, la, g, 1 },
		{ OS_DDI_CLOSE_NATIVE_FENCE, lb, g, 1 },
		{ OS_DDI_DESTROY_NATIVE_FENCE, g, 0, 1 },
	};
	expect_ddis(a, want, sizeof(want) / sizeof(want[0]));

	/* the global handle no longer resolves: a payload naming it is the bug check */
	uint64_t l2;
	assert_int_equal(os_shared_fence_open(pa, a, g, &l2), -ENOENT);
	interrupt_naming(a, g);
	assert_int_equal(fbt_stats(a).bugchecks, 1);
	os_adapter_quiesce(a);
	os_process_destroy(pa);
	os_process_destroy(pb);
	fbt_down_bugchecks(a, 1);
}

/* Local handles belong to their process: they do not resolve elsewhere,
 * close once, and only process-created shared fences can be opened. */
static void shared_local_handles_are_per_process(void **state)
{
	struct os_adapter *a = shared_adapter(true);
	struct os_process *pa = new_process(), *pb = new_process();
	uint64_t la, lb, lb2, x;

	assert_int_equal(os_shared_fence_create(pa, a, OS_FENCE_NATIVE, 0, 0, &la), 0);
	uint64_t g = os_fence_handle(os_process_fence(pa, la));
	assert_null(os_process_fence(pb, la));
	assert_int_equal(os_shared_fence_close(pb, la), -ENOENT);
	/* one process may open a fence twice: two local handles, two references */
	assert_int_equal(os_shared_fence_open(pb, a, g, &lb), 0);
	assert_int_equal(os_shared_fence_open(pb, a, g, &lb2), 0);
	assert_true(lb != lb2);
	assert_int_equal(os_process_handles(pb), 2);
	assert_int_equal(os_shared_fence_close(pb, lb), 0);
	assert_int_equal(os_shared_fence_close(pb, lb), -ENOENT);
	assert_int_equal(os_process_handles(pb), 1);
	/* no such global handle; a fence not created as a shared one */
	assert_int_equal(os_shared_fence_open(pb, a, g + 1000, &x), -ENOENT);
	struct os_fence *plain;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, OS_FENCE_SHARED, &plain), 0);
	assert_int_equal(os_shared_fence_open(pb, a, os_fence_handle(plain), &x), -EPERM);
	os_fence_destroy(plain);
	assert_int_equal(os_shared_fence_close(pa, la), 0);
	assert_int_equal(os_shared_fence_close(pb, lb2), 0);
	assert_int_equal(os_adapter_ddi_count(a, OS_DDI_OPEN_NATIVE_FENCE), 3);
	assert_int_equal(os_adapter_ddi_count(a, OS_DDI_CLOSE_NATIVE_FENCE), 3);
	/* one for the shared fence, one for the plain native one */
	assert_int_equal(os_adapter_ddi_count(a, OS_DDI_CREATE_NATIVE_FENCE), 2);
	assert_int_equal(os_adapter_ddi_count(a, OS_DDI_DESTROY_NATIVE_FENCE), 2);
	os_process_destroy(pa);
	os_process_destroy(pb);
	fbt_down(a);
}

/* Process exit closes what the process left open, oldest first; a fence
 * another process still holds survives it. */
static void shared_process_exit_closes_its_handles(void **state)
{
	struct os_adapter *a = shared_adapter(true);
	struct os_process *pa = new_process(), *pb = new_process();
	uint64_t la1, la2, lb2;

	assert_int_equal(os_shared_fence_create(pa, a, OS_FENCE_NATIVE, 0, 0, &la1), 0);
	assert_int_equal(os_shared_fence_create(pa, a, OS_FENCE_NATIVE, 0, 0, &la2), 0);
	uint64_t g1 = os_fence_handle(os_process_fence(pa, la1));
	uint64_t g2 = os_fence_handle(os_process_fence(pa, la2));
	assert_int_equal(os_shared_fence_open(pb, a, g2, &lb2), 0);
	os_process_destroy(pa);
	assert_non_null(os_process_fence(pb, lb2));
	os_process_destroy(pb);
	const struct os_ddi_call want[] = {
		{ OS_DDI_CREATE_NATIVE_FENCE, g1, 0, 1 },
		{ OS_DDI_OPEN_NATIVE_FENCE, la1, g1, 1 },
		{ OS_DDI_CREATE_NATIVE_FENCE, g2, 0, 1 },
		{ OS_DDI_OPEN_NATIVE_FENCE, la2, g2, 1 },
		{ OS_DDI_OPEN_NATIVE_FENCE, lb2, g2, 1 },
		/* A exits */
		{ OS_DDI_CLOSE_NATIVE_FENCE, la1, g1, 1 },
		{ OS_DDI_DESTROY_NATIVE_FENCE, g1, 0, 1 },
		{ OS_DDI_CLOSE_NATIVE_FENCE, la2, g2, 1 },
		/* B exits */
		{ OS_DDI_CLOSE_NATIVE_FENCE, lb2, g2, 1 },
		{ OS_DDI_DESTROY_NATIVE_FENCE, g2, 0, 1 },
	};
	expect_ddis(a, want, sizeof(want) / sizeof(want[0]));
	fbt_down(a);
}

/* A shared native fence keeps the native path: no CPU waiter, no interrupt;
 * B's CPU wait through its local handle is released by A's GPU signal. */
static void shared_native_fence_keeps_conditional_interrupts(void **state)
{
	struct os_adapter *a = shared_adapter(true);
	struct os_process *pa = new_process(), *pb = new_process();
	uint64_t la, lb;
	assert_int_equal(os_shared_fence_create(pa, a, OS_FENCE_NATIVE, 0, 0, &la), 0);
	struct os_fence *fa = os_process_fence(pa, la);
	assert_int_equal(os_shared_fence_open(pb, a, os_fence_handle(fa), &lb), 0);
	struct os_queue *q = fbt_queue(a, 0, 64);
	for (uint64_t v = 1; v <= 50; v++)
		fbt_signal_gpu(q, fa, v);
	assert_true(fbt_eventually(os_fence_value(fa) == 50));
	fbt_settle();
	assert_int_equal(fbt_stats(a).gpu_interrupts, 0);
	struct hw_cmd c[2] = {
		{ .op = HW_CMD_WORK, .arg = 20000000 },   /* 20 ms: B sleeps first */
		{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(fa), .value = 51 },
	};
	os_queue_submit(q, c, 2);
	assert_int_equal(os_fence_wait_cpu(os_process_fence(pb, lb), 51, 5000000000ll), 0);
	struct os_stats s = fbt_stats(a);
	assert_int_equal(s.gpu_interrupts, 1);
	assert_int_equal(s.lost_wakeups, 0);
	os_process_destroy(pa);
	os_process_destroy(pb);
	fbt_down(a);
}

/* Without native fence support the shared fence is a monitored fence: the
 * same references and lifetime, and no native fence DDI at all. */
static void shared_monitored_fence_has_no_native_ddis(void **state)
{
	struct os_adapter *a = shared_adapter(false);
	struct os_process *pa = new_process(), *pb = new_process();
	uint64_t la, lb, x;
	assert_int_equal(os_shared_fence_create(pa, a, OS_FENCE_NATIVE, 0, 0, &la), 0);
	struct os_fence *f = os_process_fence(pa, la);
	assert_false(os_fence_is_native(f));
	uint64_t g = os_fence_handle(f);
	assert_int_equal(os_shared_fence_open(pb, a, g, &lb), 0);
	assert_int_equal(os_shared_fence_close(pa, la), 0);
	assert_int_equal(os_fence_signal_cpu(os_process_fence(pb, lb), 1), 0);
	assert_int_equal(os_fence_wait_cpu(os_process_fence(pb, lb), 1, 5000000000ll), 0);
	assert_int_equal(os_shared_fence_close(pb, lb), 0);
	assert_int_equal(os_shared_fence_open(pa, a, g, &x), -ENOENT);
	struct os_ddi_call log[4];
	assert_int_equal(os_adapter_ddi_log(a, log, 4), 0);
	os_process_destroy(pa);
	os_process_destroy(pb);
	fbt_down(a);
}

/* ---- race: opens and closes against the last close, with payloads naming the fence ---- */

#define RACE_ROUNDS 2000

struct race {
	struct os_adapter *a;
	uint64_t global;
	_Atomic bool stop;
	_Atomic uint64_t opened, refused, injected;
};

static void *race_opener(void *arg)
{
	struct race *r = arg;
	struct os_process *p;
	if (os_process_create(&p))
		return NULL;
	for (int i = 0; i < RACE_ROUNDS && !atomic_load(&r->stop); i++) {
		uint64_t l;
		int rc = os_shared_fence_open(p, r->a, r->global, &l);
		if (rc == 0) {
			atomic_fetch_add(&r->opened, 1);
			struct os_fence *f = os_process_fence(p, l);
			(void)os_fence_value(f);            /* a use of the fence while it is held */
			os_shared_fence_close(p, l);
		} else {
			atomic_fetch_add(&r->refused, 1);   /* -ENOENT: its last handle went */
		}
	}
	os_process_destroy(p);
	return NULL;
}

static void *race_injector(void *arg)
{
	struct race *r = arg;
	while (!atomic_load(&r->stop)) {
		struct hw_irq_rec *rec = hw_irq_alloc();
		rec->kind = HW_IRQ_NATIVE_FENCE_SIGNALED;
		rec->fences[0] = r->global;
		rec->nfences = 1;
		hw_irq_raise(os_adapter_hw(r->a), rec);
		atomic_fetch_add(&r->injected, 1);
		struct timespec ts = { 0, 50000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* Two processes open and close the fence while its creator closes it and
 * interrupts keep naming it: every open either holds a live fence or is
 * refused, the counts reconcile (opens = closes, one create, one destroy),
 * and a payload naming it is a bug check only once it is gone — never a use
 * of freed memory (ASan would see one). */
static void shared_open_close_race_reconciles(void **state)
{
	struct os_adapter *a = shared_adapter(true);
	struct os_process *pa = new_process();
	uint64_t la;
	assert_int_equal(os_shared_fence_create(pa, a, OS_FENCE_NATIVE, 0, 0, &la), 0);
	struct race r = { .a = a, .global = os_fence_handle(os_process_fence(pa, la)) };
	pthread_t t[3];
	pthread_create(&t[0], NULL, race_opener, &r);
	pthread_create(&t[1], NULL, race_opener, &r);
	pthread_create(&t[2], NULL, race_injector, &r);
	/* the creator's close lands while both openers are going */
	assert_true(fbt_eventually(atomic_load(&r.opened) >= 20));
	assert_int_equal(os_shared_fence_close(pa, la), 0);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	atomic_store(&r.stop, true);
	pthread_join(t[2], NULL);
	assert_true(fbt_eventually(fbt_stats(a).interrupts == atomic_load(&r.injected)));
	printf("  race: %llu opens, %llu refused, %llu payloads, %llu bug checks\n",
	       (unsigned long long)r.opened, (unsigned long long)r.refused,
	       (unsigned long long)r.injected, (unsigned long long)fbt_stats(a).bugchecks);
	assert_int_equal(r.opened + r.refused, 2 * RACE_ROUNDS);
	assert_int_equal(os_adapter_ddi_count(a, OS_DDI_CREATE_NATIVE_FENCE), 1);
	assert_int_equal(os_adapter_ddi_count(a, OS_DDI_DESTROY_NATIVE_FENCE), 1);
	assert_int_equal(os_adapter_ddi_count(a, OS_DDI_OPEN_NATIVE_FENCE), r.opened + 1);
	assert_int_equal(os_adapter_ddi_count(a, OS_DDI_CLOSE_NATIVE_FENCE), r.opened + 1);
	/* gone now: the next payload naming it is a bug check */
	uint64_t bc = fbt_stats(a).bugchecks;
	interrupt_naming(a, r.global);
	assert_int_equal(fbt_stats(a).bugchecks, bc + 1);
	os_process_destroy(pa);
	fbt_down_bugchecks(a, bc + 1);
}

FB_TEST_MAIN(cmocka_unit_test(shared_walkthrough_process_a_and_b),
	     cmocka_unit_test(shared_local_handles_are_per_process),
	     cmocka_unit_test(shared_process_exit_closes_its_handles),
	     cmocka_unit_test(shared_native_fence_keeps_conditional_interrupts),
	     cmocka_unit_test(shared_monitored_fence_has_no_native_ddis),
	     cmocka_unit_test(shared_open_close_race_reconciles))
