/* tests/fence_test_util.h — small helpers the fence-stack tests share. */
#ifndef FENCE_TEST_UTIL_H
#define FENCE_TEST_UTIL_H

#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "gpu-model/os/os.h"
#include "lockfree/arch.h"
#include "lockfree/die.h"
#include "lockfree/event.h"
#include "tests/fb_test.h"

/* Wait (bounded: 5 s) until cond() holds; returns whether it did. */
#define fbt_eventually(cond)                                                  \
	({                                                                    \
		uint64_t fbt_end__ = lf_now_ns() + 5000000000ull;             \
		bool fbt_ok__;                                                \
		while (!(fbt_ok__ = (cond)) && lf_now_ns() < fbt_end__) {     \
			struct timespec fbt_ts__ = { 0, 200000 };             \
			nanosleep(&fbt_ts__, NULL);                           \
		}                                                             \
		fbt_ok__;                                                     \
	})

/* Give threads a moment to do what they should not (absence checks). */
static inline void fbt_settle(void)
{
	struct timespec ts = { 0, 20000000 };
	nanosleep(&ts, NULL);
}

static inline struct os_adapter *fbt_adapter(struct os_config *cfg)
{
	char err[256] = "";
	struct os_adapter *a = NULL;
	if (os_adapter_create(cfg, &a, err, sizeof(err)) || os_adapter_start(a)) {
		lf_die("adapter: %s", err);
	}
	return a;
}

/* A queue the test cannot do without: dies with the reason if refused. */
static inline struct os_queue *fbt_queue(struct os_adapter *a, unsigned engine, size_t ring_slots)
{
	struct os_queue *q = NULL;
	int rc = os_queue_create(a, engine, ring_slots, &q);
	if (rc)
		lf_die("os_queue_create(engine %u, %zu slots): %d", engine, ring_slots, rc);
	return q;
}

static inline struct os_stats fbt_stats(struct os_adapter *a)
{
	struct os_stats s;
	os_adapter_stats(a, &s);
	return s;
}

/* The counters once the interrupt thread has finished every interrupt raised
 * so far: a waiter's event is set inside the release, the release is counted
 * after it, so counters read right after an event was seen set may lag. */
static inline struct os_stats fbt_settled_stats(struct os_adapter *a)
{
	os_adapter_quiesce(a);
	return fbt_stats(a);
}

/* Tear an adapter down once its interrupt thread has handled everything
 * raised so far, asserting the bug checks it saw: 0 at every teardown unless
 * the test is about the bug check (a teardown that bug-checks is a defect). */
static inline void fbt_down_bugchecks(struct os_adapter *a, uint64_t bugchecks)
{
	os_adapter_quiesce(a);
	assert_int_equal(fbt_stats(a).bugchecks, bugchecks);
	os_adapter_destroy(a);
}

static inline void fbt_down(struct os_adapter *a)
{
	fbt_down_bugchecks(a, 0);
}

/* A thread in a blocking CPU wait (os_fence_wait_cpu(f, v, timeout_ns)). */
struct fbt_waiter {
	pthread_t t;
	struct os_fence *f;
	uint64_t v;
	int64_t timeout_ns;
	_Atomic int rc;
	_Atomic bool done;
};

static inline void *fbt_waiter_main(void *arg)
{
	struct fbt_waiter *w = arg;
	atomic_store(&w->rc, os_fence_wait_cpu(w->f, w->v, w->timeout_ns));
	atomic_store(&w->done, true);
	return NULL;
}

/* Start w and return once its wait is registered and asleep-bound (a's
 * blocked-wait count moved: it counts after the registration's resample),
 * so that a signal from now on finds it waiting. */
static inline void fbt_waiter_start(struct os_adapter *a, struct fbt_waiter *w)
{
	uint64_t blocked = fbt_stats(a).waits_blocked;
	atomic_store(&w->done, false);
	pthread_create(&w->t, NULL, fbt_waiter_main, w);
	assert_true(fbt_eventually(fbt_stats(a).waits_blocked > blocked));
}

/* Join w; its wait's result. */
static inline int fbt_waiter_join(struct fbt_waiter *w)
{
	pthread_join(w->t, NULL);
	return atomic_load(&w->rc);
}

/* The waits of the rewinding-race tests, all for 20 on fence f (below 20
 * now): an event wait, a multi wait "any" (f, 20 or `other`, 1000: never
 * reached), a multi wait "all" (f, 15 and f, 20), a blocking waiter.  A
 * signal of 25 must release every one, whatever lower value follows it. */
struct fbt_rewind {
	struct lf_event ev, any, all;
	struct fbt_waiter blocking;
};

static inline void fbt_rewind_arm(struct os_adapter *a, struct fbt_rewind *r, struct os_fence *f,
				  struct os_fence *other)
{
	lf_event_init(&r->ev);
	lf_event_init(&r->any);
	lf_event_init(&r->all);
	assert_int_equal(os_fence_wait_event(f, 20, &r->ev), 0);
	struct os_fence *any_f[2] = { f, other }, *all_f[2] = { f, f };
	uint64_t any_v[2] = { 20, 1000 }, all_v[2] = { 15, 20 };
	assert_int_equal(os_wait_multi(any_f, any_v, 2, false, &r->any), 0);
	assert_int_equal(os_wait_multi(all_f, all_v, 2, true, &r->all), 0);
	r->blocking = (struct fbt_waiter){ .f = f, .v = 20, .timeout_ns = 5000000000ll };
	fbt_waiter_start(a, &r->blocking);
	assert_false(lf_event_is_set(&r->ev) || lf_event_is_set(&r->any) || lf_event_is_set(&r->all));
}

/* Every wait of r released within timeout_ns (0: already, when called). */
static inline void fbt_rewind_check(struct fbt_rewind *r, int64_t timeout_ns)
{
	assert_int_equal(lf_event_wait(&r->ev, 0, timeout_ns), 0);
	assert_int_equal(lf_event_wait(&r->any, 0, timeout_ns), 0);
	assert_int_equal(lf_event_wait(&r->all, 0, timeout_ns), 0);
	assert_int_equal(fbt_waiter_join(&r->blocking), 0);
}

/* Raise the interrupt an engine raises for its write of v to f (kind, and
 * for a native fence the payload form), as if raised before now; seq: the
 * write's number (hw_fence_write's return, when the test wrote v). */
static inline void fbt_raise_signaled(struct os_adapter *a, enum hw_irq_kind kind, enum hw_irq_payload payload,
				      struct os_fence *f, uint64_t v, uint64_t seq)
{
	struct hw_irq_rec *rec = hw_irq_alloc();
	rec->kind = kind;
	rec->nfences = kind != HW_IRQ_NATIVE_FENCE_SIGNALED || payload == HW_PAYLOAD_FENCE_ARRAY;
	rec->fences[0] = os_fence_handle(f);
	rec->eval_legacy = payload == HW_PAYLOAD_NULL_EVAL_LEGACY;
	rec->signaled = os_fence_handle(f);
	rec->value = v;
	rec->seq = seq;
	hw_irq_raise(os_adapter_hw(a), rec);
}

static inline void fbt_signal_gpu(struct os_queue *q, struct os_fence *f, uint64_t v)
{
	struct hw_cmd c = { .op = HW_CMD_SIGNAL, .fence = os_fence_hw(f), .value = v };
	os_queue_submit(q, &c, 1);
}

/* Calls of DDI d naming handle h (with value v) in a's DDI log. */
static inline unsigned fbt_ddi_calls(struct os_adapter *a, enum os_ddi d, uint64_t h, uint64_t v)
{
	struct os_ddi_call log[OS_DDI_LOG_MAX];
	size_t n = os_adapter_ddi_log(a, log, OS_DDI_LOG_MAX);
	unsigned k = 0;
	for (size_t i = 0; i < n; i++)
		k += log[i].ddi == d && log[i].handle == h && log[i].value == v;
	return k;
}

#endif
