/* tests/test_rt_stack.c — the one way into the model (gpu-model/runtime/stack.h):
 * bring-up and teardown of the whole stack, its role threads and statistics,
 * the direct queue the fence workloads submit through, the fence command
 * builders, event waits and cross-adapter fences through the runtime.
 *
 * The direct queue's promise is that it adds nothing to what a fence
 * workload measures: the test counts GPU signals and interrupts exactly and
 * shows, beside it, that a runtime queue's submission does add its progress
 * write (the reason the fence rigs do not use rt_queue_submit). */
#include <string.h>
#include <unistd.h>

#include "gpu-model/runtime/stack.h"
#include "tests/fb_test.h"
#include "tests/fence_test_util.h"

#define WAIT_NS 5000000000ll

static const char *path_name(enum rt_path path)
{
	return path == RT_PATH_NATIVE ? "native" : "legacy";
}

static struct rt_stack *up(enum rt_path path, unsigned engines)
{
	struct rt_stack_config cfg;
	rt_stack_config_default(&cfg, path);
	cfg.os.caps.engines = engines;
	struct rt_stack *s = NULL;
	char err[256] = "";
	int rc = rt_stack_create(&cfg, &s, err, sizeof(err));
	if (rc)
		lf_die("rt_stack_create (%s): %d %s", path_name(path), rc, err);
	return s;
}

static struct rt_fence *fence(struct rt_stack *s)
{
	struct rt_fence *f = NULL;
	int rc = rt_fence_create(rt_stack_device(s), 0, &f);
	if (rc)
		lf_die("rt_fence_create: %d", rc);
	return f;
}

static struct rt_direct_queue *direct(struct rt_stack *s, unsigned engine)
{
	struct rt_direct_queue *q = NULL;
	int rc = rt_direct_queue_create(s, engine, 64, &q);
	if (rc)
		lf_die("rt_direct_queue_create(engine %u): %d", engine, rc);
	return q;
}

static void submit_one(struct rt_direct_queue *q, struct hw_cmd c)
{
	assert_int_equal(rt_direct_queue_submit(q, &c, 1), 0);
}

static struct os_stats stats(struct rt_stack *s)
{
	struct os_stats o;
	rt_stack_os_stats(s, &o);
	return o;
}

/* ---- bring-up ---- */

/* Every role thread exists, is a thread of this process and not the caller. */
static void the_stack_brings_up_every_role_thread(void **state)
{
	for (int p = 0; p < 2; p++) {
		struct rt_stack *s = up((enum rt_path)p, 2);
		assert_int_equal(rt_stack_native(s), p == RT_PATH_NATIVE);
		assert_int_equal(rt_stack_engines(s), 2);
		pid_t tid[5] = {
			rt_stack_irq_tid(s), rt_stack_sched_tid(s), rt_stack_power_tid(s),
			rt_stack_engine_tid(s, 0), rt_stack_engine_tid(s, 1),
		};
		for (int i = 0; i < 5; i++) {
			char task[64];
			snprintf(task, sizeof(task), "/proc/self/task/%d", (int)tid[i]);
			assert_true(tid[i] > 0);
			assert_int_not_equal(tid[i], gettid());
			assert_int_equal(access(task, F_OK), 0);
			for (int j = 0; j < i; j++)
				assert_int_not_equal(tid[i], tid[j]);
		}
		assert_int_equal(rt_stack_destroy(s), 0);
	}
}

/* A refused configuration says why and leaves nothing (the sanitizer runs
 * check that what was started before the refusal is joined and freed). */
static void a_refused_stack_says_why_and_leaves_nothing(void **state)
{
	struct rt_stack *const sentinel = (struct rt_stack *)&state;
	struct rt_stack *s = sentinel;
	struct rt_stack_config cfg;
	char err[256];

	/* native support advertised, the feature not enabled: the adapter refuses */
	rt_stack_config_default(&cfg, RT_PATH_NATIVE);
	cfg.os.native_fence_enabled = false;
	err[0] = 0;
	assert_int_equal(rt_stack_create(&cfg, &s, err, sizeof(err)), -EINVAL);
	assert_ptr_equal(s, sentinel);
	assert_true(err[0] != 0);

	/* a bad doorbell model: refused after the adapter started */
	rt_stack_config_default(&cfg, RT_PATH_NATIVE);
	cfg.os.caps.doorbell_model = (enum hw_doorbell_model)7;
	err[0] = 0;
	assert_int_equal(rt_stack_create(&cfg, &s, err, sizeof(err)), -EINVAL);
	assert_ptr_equal(s, sentinel);
	assert_non_null(strstr(err, "doorbell_model"));
}

/* ---- the direct queue ---- */

/* N signals through the direct queue are N GPU signals, exactly: native,
 * none interrupts (no CPU waiter); legacy, every one does.  A runtime queue's
 * signal is two: the fence's and the progress write after it. */
static void the_direct_queue_adds_no_signal_of_its_own(void **state)
{
	enum { N = 10 };
	for (int p = 0; p < 2; p++) {
		bool native = p == RT_PATH_NATIVE;
		struct rt_stack *s = up((enum rt_path)p, 1);
		struct rt_fence *f = fence(s);
		struct rt_direct_queue *q = direct(s, 0);
		for (uint64_t v = 1; v <= N; v++)
			submit_one(q, rt_cmd_signal(f, v));
		/* polled, not CPU-waited: a CPU waiter would make the native signal interrupt */
		assert_true(fbt_eventually(rt_fence_completed(f) == N));
		assert_true(fbt_eventually(stats(s).gpu_signals == N));
		fbt_settle();
		struct os_stats o = stats(s);
		assert_int_equal(o.gpu_signals, N);
		assert_int_equal(o.gpu_interrupts, native ? 0 : N);

		struct rt_queue_desc desc = { .engine = 0, .user_mode = false };
		struct rt_queue *rq;
		assert_int_equal(rt_queue_create(rt_stack_device(s), &desc, &rq), 0);
		assert_int_equal(rt_queue_signal(rq, f, N + 1), 0);
		assert_int_equal(rt_queue_wait(rq, 0, WAIT_NS), 0);
		assert_true(fbt_eventually(stats(s).gpu_signals == N + 2));
		assert_int_equal(rt_fence_completed(f), N + 1);
		assert_int_equal(rt_stack_destroy(s), 0);
	}
}

/* A WAIT built by rt_cmd_wait holds engine B until engine A's signal: in
 * hardware (native) or on the CPU by the OS (legacy). */
static void a_gpu_wait_runs_only_after_its_signal(void **state)
{
	for (int p = 0; p < 2; p++) {
		struct rt_stack *s = up((enum rt_path)p, 2);
		struct rt_fence *f = fence(s), *done = fence(s);
		struct rt_direct_queue *qa = direct(s, 0), *qb = direct(s, 1);
		struct hw_cmd b[2] = { rt_cmd_wait(f, 1), rt_cmd_signal(done, 1) };
		assert_int_equal(rt_direct_queue_submit(qb, b, 2), 0);
		fbt_settle();
		assert_int_equal(rt_fence_completed(done), 0);
		submit_one(qa, rt_cmd_signal(f, 1));
		assert_int_equal(rt_fence_wait(done, 1, WAIT_NS), 0);
		assert_int_equal(rt_stack_destroy(s), 0);
	}
}

/* An event registered before the GPU signal is set by it; one registered
 * after the value was reached is set at once. */
static void an_event_wait_is_set_by_the_gpu_signal(void **state)
{
	for (int p = 0; p < 2; p++) {
		struct rt_stack *s = up((enum rt_path)p, 1);
		struct rt_fence *f = fence(s);
		struct rt_direct_queue *q = direct(s, 0);
		struct lf_event ev, late;
		lf_event_init(&ev);
		lf_event_init(&late);
		assert_int_equal(rt_fence_wait_event(f, 3, &ev), 0);
		assert_false(lf_event_is_set(&ev));
		submit_one(q, rt_cmd_signal(f, 3));
		assert_int_equal(lf_event_wait(&ev, 2000, WAIT_NS), 0);
		assert_int_equal(rt_fence_wait_event(f, 2, &late), 0);
		assert_true(lf_event_is_set(&late));
		assert_int_equal(rt_stack_destroy(s), 0);
	}
}

/* ---- teardown ---- */

/* Destroying the stack the moment a GPU signal's value is seen: the engine's
 * CMP may still be reading the fence (its MonitoredValue, after the value
 * was written), so the engines must stop before the fence is freed.  A free
 * racing that read is what make tsan reports here (with the engines stopped
 * after the fences were freed it reported it in 1 of 4 runs: only when the
 * deferred free ran before the engines were joined). */
static void teardown_right_after_a_signal_frees_nothing_in_use(void **state)
{
	for (int round = 0; round < 20; round++) {
		struct rt_stack *s = up((enum rt_path)(round % 2), 1);
		struct rt_fence *f = fence(s);
		submit_one(direct(s, 0), rt_cmd_signal(f, 1));
		uint64_t end = lf_now_ns() + 5000000000ull;    /* spun, bounded: no sleep to hide the window */
		while (rt_fence_completed(f) < 1 && lf_now_ns() < end)
			lf_cpu_relax();
		assert_int_equal(rt_fence_completed(f), 1);
		assert_int_equal(rt_stack_destroy(s), 0);
	}
}

/* ---- statistics ---- */

/* An idle engine with no doorbell parks (F1), and the stack reads it. */
static void an_idle_engine_is_seen_parked(void **state)
{
	struct rt_stack *s = up(RT_PATH_NATIVE, 1);
	assert_true(fbt_eventually(rt_stack_engine_fstate(s, 0) == HW_F1));
	struct hw_engine_um_stats es;
	rt_stack_engine_um_stats(s, 0, &es);
	assert_true(es.f1_entries >= 1);
	struct os_ums_stats us;
	rt_stack_ums_stats(s, &us);
	assert_int_equal(us.connects, 0);     /* no user-mode queue, no doorbell */
	assert_int_equal(rt_stack_destroy(s), 0);
}

/* ---- cross-adapter ---- */

/* A cross-adapter fence created on stack A and opened on stack B: A's GPU
 * signal reaches B's CPU waiter through A's interrupt thread; native B gets
 * the NotificationOnly DDI.  B is torn down first, its instance with it. */
static void a_cross_adapter_fence_propagates_through_the_runtime(void **state)
{
	for (int p = 0; p < 2; p++) {
		struct rt_stack *a = up((enum rt_path)p, 1), *b = up((enum rt_path)p, 1);
		struct rt_fence *fa, *fb;
		assert_int_equal(rt_fence_create_cross(rt_stack_device(a), 0, &fa), 0);
		assert_int_equal(rt_fence_open_cross(fa, rt_stack_device(b), &fb), 0);
		assert_int_equal(rt_fence_open_cross(fa, rt_stack_device(b), &fb), -EEXIST);
		submit_one(direct(a, 0), rt_cmd_signal(fa, 5));
		assert_int_equal(rt_fence_wait(fb, 5, WAIT_NS), 0);
		/* the counters are written after the value is passed on: read them eventually */
		struct os_cross_stats xa, xb;
		assert_true(fbt_eventually((rt_stack_cross_stats(a, &xa), xa.propagated >= 1)));
		assert_true(fbt_eventually((rt_stack_cross_stats(b, &xb), xb.received >= 1)));
		if (p == RT_PATH_NATIVE)
			assert_true(fbt_eventually(rt_stack_ddi_count(b, OS_DDI_UPDATE_CV_NOTIFY_ONLY) >= 1));
		else
			assert_int_equal(rt_stack_ddi_count(b, OS_DDI_UPDATE_CV_NOTIFY_ONLY), 0);
		assert_int_equal(rt_stack_destroy(b), 0);
		assert_int_equal(rt_stack_destroy(a), 0);
	}
}

FB_TEST_MAIN(cmocka_unit_test(the_stack_brings_up_every_role_thread),
	     cmocka_unit_test(a_refused_stack_says_why_and_leaves_nothing),
	     cmocka_unit_test(the_direct_queue_adds_no_signal_of_its_own),
	     cmocka_unit_test(a_gpu_wait_runs_only_after_its_signal),
	     cmocka_unit_test(an_event_wait_is_set_by_the_gpu_signal),
	     cmocka_unit_test(teardown_right_after_a_signal_frees_nothing_in_use),
	     cmocka_unit_test(an_idle_engine_is_seen_parked),
	     cmocka_unit_test(a_cross_adapter_fence_propagates_through_the_runtime))
