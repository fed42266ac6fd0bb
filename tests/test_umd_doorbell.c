/* tests/test_umd_doorbell.c — doorbell virtualization: the seed's KMD
 * VictimizeDoorbell walk-through step by step, and a stress test where many
 * application threads submit through few dedicated doorbells under constant
 * victimization and every command buffer runs exactly once — plus the broken
 * submit loop (no status check after ringing) that the same test catches. */
#include <errno.h>
#include <sched.h>

#include "tests/fb_test.h"
#include "tests/umd_test_util.h"

#define SEC 1000000000ll

struct raw_queue {
	struct os_fence *progress;
	struct os_hwqueue *q;
	struct os_doorbell_map m;
	struct hw_cmd ib[2];
	uint64_t wptr;
};

static void raw_queue_open(struct umt *t, struct os_context *c, struct raw_queue *r)
{
	assert_int_equal(os_fence_create(t->a, OS_FENCE_NATIVE, 0, 0, &r->progress), 0);
	assert_int_equal(os_hwqueue_create(c, OS_HWQUEUE_USER_MODE_SUBMISSION, 64, r->progress, &r->q), 0);
	assert_int_equal(os_doorbell_create(r->q, &r->m), 0);
	r->wptr = 0;
}

/* The UMD's steps, written out: last queued, visible, ring through the mapping. */
static void raw_submit(struct raw_queue *r, uint64_t v, _Atomic uint64_t *counter)
{
	r->ib[0] = (struct hw_cmd){ .op = HW_CMD_COUNT, .stamp = counter };
	r->ib[1] = (struct hw_cmd){ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(r->progress), .value = v };
	struct hw_cmd entry = { .op = HW_CMD_INDIRECT, .ib = r->ib, .arg = 2 };
	atomic_store(r->m.last_queued, v);
	assert_true(lf_ring_push_spsc(r->m.ring, &entry));
	r->wptr++;
	hw_doorbell_write(atomic_load(r->m.cpuva), hw_doorbell_ring_value(r->m.value, r->wptr));
}

static uint64_t raw_status(const struct raw_queue *r)
{
	return atomic_load(r->m.status);
}

/* "Victimizing doorbell pseudocode in KMD", with one physical doorbell:
 *   1. hDoorbell1 is assigned the physical doorbell: CONNECTED;
 *   2. hDoorbell2 is created, not yet assigned: DISCONNECTED_RETRY;
 *   3. ConnectDoorbell(hDoorbell2): hDoorbell1 is victimized (its CPUVA to
 *      the dummy page, RETRY), the physical doorbell goes to hDoorbell2
 *      (same address, CONNECTED).
 * Then a ring through the victim's mapping is lost until it reconnects. */
static void victimization_follows_the_kmd_pseudocode(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 1, 5 * SEC);
	struct hw_adapter *hw = os_adapter_hw(t.a);
	struct os_device *d;
	struct os_context *c;
	assert_int_equal(os_device_create(t.u, &d), 0);
	assert_int_equal(os_context_create(d, 0, &c), 0);
	struct raw_queue r1, r2;
	raw_queue_open(&t, c, &r1);
	_Atomic uint64_t *dummy = atomic_load(r1.m.cpuva);
	assert_int_equal(raw_status(&r1), OS_DOORBELL_DISCONNECTED_RETRY);

	/* 1 */
	assert_int_equal(os_doorbell_connect(r1.q), 0);
	_Atomic uint64_t *phys = atomic_load(r1.m.cpuva);
	assert_ptr_not_equal(phys, dummy);
	assert_int_equal(raw_status(&r1), OS_DOORBELL_CONNECTED);
	assert_ptr_equal(hw_doorbell_owner(hw, 0), os_hwqueue_hw(r1.q));
	/* 2 */
	raw_queue_open(&t, c, &r2);
	assert_ptr_equal(atomic_load(r2.m.cpuva), dummy);
	assert_int_equal(raw_status(&r2), OS_DOORBELL_DISCONNECTED_RETRY);
	assert_int_equal(raw_status(&r1), OS_DOORBELL_CONNECTED);
	/* 3 */
	assert_int_equal(os_doorbell_connect(r2.q), 0);
	assert_int_equal(raw_status(&r1), OS_DOORBELL_DISCONNECTED_RETRY);
	assert_ptr_equal(atomic_load(r1.m.cpuva), dummy);
	assert_int_equal(raw_status(&r2), OS_DOORBELL_CONNECTED);
	assert_ptr_equal(atomic_load(r2.m.cpuva), phys);
	assert_ptr_equal(hw_doorbell_owner(hw, 0), os_hwqueue_hw(r2.q));
	assert_int_equal(umt_stats(&t).victimizations, 1);

	/* the victim rings: the write lands on the dummy page, nothing runs */
	_Atomic uint64_t n1 = 0, n2 = 0;
	raw_submit(&r1, 1, &n1);
	fbt_settle();
	assert_int_equal(atomic_load(&n1), 0);
	assert_true(os_hwqueue_pending(r1.q));
	assert_int_equal(raw_status(&r1), OS_DOORBELL_DISCONNECTED_RETRY);   /* what the UMD checks */
	/* the connected one is unaffected */
	raw_submit(&r2, 1, &n2);
	assert_int_equal(os_fence_wait_cpu(r2.progress, 1, 5 * SEC), 0);
	/* the seed's loop: reconnect (victimizing hDoorbell2 back) and ring again */
	assert_int_equal(os_doorbell_connect(r1.q), 0);
	assert_int_equal(raw_status(&r2), OS_DOORBELL_DISCONNECTED_RETRY);
	hw_doorbell_write(atomic_load(r1.m.cpuva), hw_doorbell_ring_value(r1.m.value, r1.wptr));
	assert_int_equal(raw_status(&r1), OS_DOORBELL_CONNECTED);
	assert_int_equal(os_fence_wait_cpu(r1.progress, 1, 5 * SEC), 0);
	assert_int_equal(atomic_load(&n1), 1);
	assert_int_equal(atomic_load(&n2), 1);
	assert_int_equal(umt_stats(&t).victimizations, 2);
	assert_int_equal(os_device_destroy(d), 0);
	os_fence_destroy(r1.progress);
	os_fence_destroy(r2.progress);
	umt_down(&t);
}

/* D3DKMTDestroyDoorbell: the doorbell is disconnected and forgotten (its
 * physical doorbell no longer rings this queue, connects find none), and
 * the ring stays (seed, "Residency model of doorbell memory and ring buffer
 * allocations": "Dxgkrnl won't destroy these allocations implicitly even if
 * the corresponding doorbell is destroyed"): a new doorbell on the same
 * queue runs what was written to it meanwhile. */
static void d3dkmt_destroy_doorbell_disconnects_ring_buffer_stays(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 1, 5 * SEC);
	struct hw_adapter *hw = os_adapter_hw(t.a);
	struct os_device *d;
	struct os_context *c;
	assert_int_equal(os_device_create(t.u, &d), 0);
	assert_int_equal(os_context_create(d, 0, &c), 0);
	struct raw_queue r;
	raw_queue_open(&t, c, &r);
	struct os_doorbell_map again;
	assert_int_equal(os_doorbell_create(r.q, &again), -EEXIST);   /* one doorbell a queue */
	assert_int_equal(os_doorbell_connect(r.q), 0);
	assert_int_equal(raw_status(&r), OS_DOORBELL_CONNECTED);
	assert_ptr_equal(hw_doorbell_owner(hw, 0), os_hwqueue_hw(r.q));

	assert_int_equal(os_doorbell_destroy(r.q), 0);
	assert_int_equal(raw_status(&r), OS_DOORBELL_DISCONNECTED_RETRY);
	assert_ptr_not_equal(hw_doorbell_owner(hw, 0), os_hwqueue_hw(r.q));
	assert_int_equal(os_doorbell_destroy(r.q), -ENOENT);
	assert_int_equal(os_doorbell_connect(r.q), -ENOENT);
	/* a ring through the old mapping runs nothing */
	_Atomic uint64_t n = 0;
	raw_submit(&r, 1, &n);
	fbt_settle();
	assert_int_equal(atomic_load(&n), 0);
	assert_true(os_hwqueue_pending(r.q));

	/* the ring buffer is the same one, with the entry in it */
	assert_int_equal(os_doorbell_create(r.q, &again), 0);
	assert_ptr_equal(again.ring, r.m.ring);
	assert_int_equal(lf_ring_size(again.ring), 1);
	assert_int_equal(os_doorbell_connect(r.q), 0);
	hw_doorbell_write(atomic_load(again.cpuva), hw_doorbell_ring_value(again.value, r.wptr));
	assert_int_equal(os_fence_wait_cpu(r.progress, 1, 5 * SEC), 0);
	assert_int_equal(atomic_load(&n), 1);
	assert_int_equal(os_device_destroy(d), 0);
	os_fence_destroy(r.progress);
	umt_down(&t);
}

/* A user-mode HW queue is refused on the kernel-mode path
 * (D3DKMTSubmitCommandToHwQueue): nothing runs, nothing is recorded as
 * queued; a kernel-mode queue of the same context is not refused. */
static void user_mode_hwqueue_refused_on_kernel_mode_submission_path(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 1, 5 * SEC);
	struct os_device *d;
	struct os_context *c;
	assert_int_equal(os_device_create(t.u, &d), 0);
	assert_int_equal(os_context_create(d, 0, &c), 0);
	struct raw_queue r;
	raw_queue_open(&t, c, &r);
	assert_int_equal(os_doorbell_connect(r.q), 0);
	_Atomic uint64_t n = 0;
	struct hw_cmd cmds[2] = {
		{ .op = HW_CMD_COUNT, .stamp = &n },
		{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(r.progress), .value = 1 },
	};
	assert_true(os_hwqueue_is_um(r.q));
	assert_int_equal(os_hwqueue_submit(r.q, cmds, 2, 1), -EINVAL);
	fbt_settle();
	assert_int_equal(atomic_load(&n), 0);
	assert_int_equal(os_hwqueue_last_queued(r.q), 0);
	assert_false(os_hwqueue_pending(r.q));
	/* the kernel-mode queue takes the same buffer */
	struct os_fence *kp;
	struct os_hwqueue *km;
	assert_int_equal(os_fence_create(t.a, OS_FENCE_NATIVE, 0, 0, &kp), 0);
	assert_int_equal(os_hwqueue_create(c, 0, 64, kp, &km), 0);
	assert_false(os_hwqueue_is_um(km));
	cmds[1].fence = os_fence_hw(kp);
	assert_int_equal(os_hwqueue_submit(km, cmds, 2, 1), 0);
	assert_int_equal(os_fence_wait_cpu(kp, 1, 5 * SEC), 0);
	assert_int_equal(atomic_load(&n), 1);
	assert_int_equal(os_device_destroy(d), 0);
	os_fence_destroy(r.progress);
	os_fence_destroy(kp);
	umt_down(&t);
}

/* ---- stress: threads > doorbells, constant victimization ---- */

struct stress_thread {
	pthread_t th;
	struct rt_queue *q;
	_Atomic uint64_t *counts;
	unsigned k;
	int64_t deadline_ns;
	_Atomic uint64_t *lost_total;
	uint64_t stop_after_lost;
	uint64_t lost, done;
};

/* Lockstep: each buffer must complete within the deadline, or it was lost
 * (a later ring of the same queue may still run it: that is counted too). */
static void *stress_main(void *arg)
{
	struct stress_thread *s = arg;
	for (unsigned i = 0; i < s->k; i++) {
		if (s->stop_after_lost && atomic_load(s->lost_total) >= s->stop_after_lost)
			break;
		uint64_t v = umt_submit_count(s->q, &s->counts[i]);
		int rc = rt_queue_wait(s->q, v, s->deadline_ns);
		if (rc == -ETIMEDOUT) {
			s->lost++;
			atomic_fetch_add(s->lost_total, 1);
		}
		s->done++;
	}
	return NULL;
}

/* Widen the window between the status check and the ring, once per
 * submission (every retry too would let six threads steal two doorbells
 * from each other indefinitely). */
static void yield_before_ring(struct rt_queue *q)
{
	static __thread uint64_t last;
	uint64_t v = rt_queue_submitted(q);
	if (v != last) {
		last = v;
		sched_yield();
	}
}

struct stress_result {
	uint64_t submitted, lost, ran_once, ran_other, victimizations, retries, connects;
	double secs;
};

static struct stress_result stress(enum rt_broken broken, unsigned threads, unsigned doorbells, unsigned k,
				   int64_t deadline_ns, uint64_t stop_after_lost)
{
	enum { MAXT = 16 };
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, doorbells, 0);
	struct stress_thread s[MAXT];
	_Atomic uint64_t lost_total = 0;
	struct stress_result r = { 0 };
	for (unsigned i = 0; i < threads; i++) {
		struct rt_queue_desc desc = { .engine = 0, .user_mode = true, .broken = broken };
		memset(&s[i], 0, sizeof(s[i]));
		assert_int_equal(rt_queue_create(t.d, &desc, &s[i].q), 0);
		s[i].counts = calloc(k, sizeof(*s[i].counts));
		s[i].k = k;
		s[i].deadline_ns = deadline_ns;
		s[i].lost_total = &lost_total;
		s[i].stop_after_lost = stop_after_lost;
	}
	rt_test_ring_hook = yield_before_ring;
	uint64_t t0 = lf_now_ns();
	for (unsigned i = 0; i < threads; i++)
		pthread_create(&s[i].th, NULL, stress_main, &s[i]);
	for (unsigned i = 0; i < threads; i++)
		pthread_join(s[i].th, NULL);
	r.secs = (lf_now_ns() - t0) / 1e9;
	rt_test_ring_hook = NULL;
	struct os_ums_stats us = umt_stats(&t);
	r.victimizations = us.victimizations;
	for (unsigned i = 0; i < threads; i++) {
		struct rt_queue_stats qs;
		rt_queue_stats(s[i].q, &qs);
		r.retries += qs.retries;
		r.connects += qs.connects;
		r.submitted += s[i].done;
		r.lost += s[i].lost;
	}
	/* normal termination: a buffer whose ring was lost runs now (the CMP
	 * reads the final write pointer); none may run twice */
	assert_int_equal(rt_device_destroy(t.d), 0);
	t.d = NULL;
	for (unsigned i = 0; i < threads; i++) {
		for (unsigned j = 0; j < s[i].done; j++) {
			uint64_t c = atomic_load(&s[i].counts[j]);
			if (c == 1)
				r.ran_once++;
			else
				r.ran_other++;
		}
		free(s[i].counts);
	}
	umt_down(&t);
	printf("[ STRESS   ] %s: %u threads, %u doorbells: %llu buffers, %llu ran once, %llu not once, "
	       "%llu lost rings, %llu victimizations (%.0f/s), %llu retries, %llu connects, %.2f s\n",
	       broken ? "no-status-check" : "seed loop", threads, doorbells, (unsigned long long)r.submitted,
	       (unsigned long long)r.ran_once, (unsigned long long)r.ran_other, (unsigned long long)r.lost,
	       (unsigned long long)r.victimizations, r.secs > 0 ? r.victimizations / r.secs : 0.0,
	       (unsigned long long)r.retries, (unsigned long long)r.connects, r.secs);
	return r;
}

static unsigned stress_k(void)
{
#ifdef FB_SANITIZER
	return fb_soak() ? 10000 : 1000;
#else
	return fb_soak() ? 100000 : 5000;
#endif
}

static void stress_many_threads_few_doorbells_exactly_once(void **state)
{
	unsigned k = stress_k();
	struct stress_result r = stress(RT_BROKEN_NONE, 6, 2, k, 2 * SEC, 0);
	assert_int_equal(r.submitted, 6ull * k);
	assert_int_equal(r.ran_once, 6ull * k);
	assert_int_equal(r.ran_other, 0);
	assert_int_equal(r.lost, 0);
	assert_true(r.victimizations > 0);
	assert_true(r.retries > 0);                      /* rings did land on the dummy page */
}

/* Broken: the loop does not read the status after ringing.  Under the same
 * victimization, rings land on the dummy page unnoticed: lost rings. */
static void broken_no_status_check_is_caught(void **state)
{
	struct stress_result r = stress(RT_BROKEN_NO_STATUS_CHECK, 6, 2, stress_k(), 30000000, 3);
	assert_true(r.lost > 0);
	assert_int_equal(r.ran_other, 0);                /* late, but still once: the ring buffer is the truth */
}

FB_TEST_MAIN(cmocka_unit_test(victimization_follows_the_kmd_pseudocode),
	     cmocka_unit_test(d3dkmt_destroy_doorbell_disconnects_ring_buffer_stays),
	     cmocka_unit_test(user_mode_hwqueue_refused_on_kernel_mode_submission_path),
	     cmocka_unit_test(stress_many_threads_few_doorbells_exactly_once),
	     cmocka_unit_test(broken_no_status_check_is_caught))
