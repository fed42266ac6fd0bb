/* tests/umd_test_util.h — the fixture the user-mode submission tests share:
 * an adapter with user-mode submission attached and one runtime device. */
#ifndef UMD_TEST_UTIL_H
#define UMD_TEST_UTIL_H

#include <pthread.h>
#include <string.h>

#include "gpu-model/runtime/rt.h"
#include "tests/fence_test_util.h"

struct umt {
	struct os_adapter *a;
	struct os_ums *u;
	struct rt_device *d;
};

/* Adapter caps for these tests: `engines` engines, the doorbell model, and an
 * F1 timeout (0: the default). */
static inline void umt_config(struct os_config *cfg, unsigned engines, enum hw_doorbell_model model,
			      unsigned doorbells, uint64_t f1_timeout_ns)
{
	os_config_default(cfg);
	cfg->caps.engines = engines;
	cfg->caps.doorbell_model = model;
	cfg->caps.doorbells = doorbells;
	cfg->caps.f1_timeout_ns = f1_timeout_ns;
}

static inline struct umt umt_up_with(struct os_config *cfg, const struct os_ums_config *ucfg)
{
	struct umt t;
	struct os_ums_config def;
	char err[256] = "";
	if (!ucfg) {
		os_ums_config_default(&def);
		def.drain_timeout_ns = 5000000000ll;
		ucfg = &def;
	}
	t.a = fbt_adapter(cfg);
	if (os_ums_attach(t.a, ucfg, &t.u, err, sizeof(err)))
		lf_die("os_ums_attach: %s", err);
	int rc = rt_device_create(t.u, &t.d);
	if (rc)
		lf_die("rt_device_create: %d", rc);
	return t;
}

/* Dedicated doorbells with a deliberately broken user-mode submission step
 * (os_ums_config.ums_fault; OS_UMS_FAULT_NONE: none); drain bound 5 s. */
static inline struct umt umt_up_ums_fault(unsigned engines, unsigned doorbells, uint64_t f1_timeout_ns,
					  enum os_ums_fault fault)
{
	struct os_config cfg;
	struct os_ums_config ucfg;
	umt_config(&cfg, engines, HW_DOORBELL_DEDICATED, doorbells, f1_timeout_ns);
	os_ums_config_default(&ucfg);
	ucfg.drain_timeout_ns = 5000000000ll;
	ucfg.ums_fault = fault;
	return umt_up_with(&cfg, &ucfg);
}

static inline struct umt umt_up(unsigned engines, enum hw_doorbell_model model, unsigned doorbells,
				uint64_t f1_timeout_ns)
{
	struct os_config cfg;
	umt_config(&cfg, engines, model, doorbells, f1_timeout_ns);
	return umt_up_with(&cfg, NULL);
}

/* An adapter for the native fence log buffer tests: `engines` engines, the
 * interrupt payload, and a hardware and an OS fault (broken variants). */
static inline struct umt umt_up_logs(unsigned engines, enum hw_irq_payload payload, enum hw_fault hwf,
				     enum os_fault osf)
{
	struct os_config cfg;
	umt_config(&cfg, engines, HW_DOORBELL_DEDICATED, 0, 0);
	cfg.caps.payload = payload;
	cfg.caps.fault = hwf;
	cfg.fault = osf;
	return umt_up_with(&cfg, NULL);
}

/* A queue's native fence log buffers (NULL: a kernel-mode queue has none). */
static inline struct os_log *umt_queue_log(struct rt_queue *q)
{
	return os_hwqueue_log(rt_queue_os(q));
}

/* Tear down (asserting no bug check: fbt_down); t->d may have been destroyed already (NULL). */
static inline void umt_down(struct umt *t)
{
	if (t->d)
		rt_device_destroy(t->d);
	os_ums_detach(t->u);
	fbt_down(t->a);
}

static inline struct rt_queue *umt_queue(struct umt *t, unsigned engine, bool user_mode)
{
	struct rt_queue_desc desc = { .engine = engine, .user_mode = user_mode };
	struct rt_queue *q;
	int rc = rt_queue_create(t->d, &desc, &q);
	if (rc)
		lf_die("rt_queue_create: %d", rc);
	return q;
}

/* Submit one buffer that counts its executions in *counter; its progress value. */
static inline uint64_t umt_submit_count(struct rt_queue *q, _Atomic uint64_t *counter)
{
	struct hw_cmd c = { .op = HW_CMD_COUNT, .stamp = counter };
	uint64_t v = 0;
	int rc = rt_queue_submit(q, &c, 1, &v);
	if (rc)
		lf_die("rt_queue_submit: %d", rc);
	return v;
}

/* Arm ev for value v of f, then submit q's signal of v (both asserted). */
static inline void umt_signal_awaited(struct rt_queue *q, struct rt_fence *f, uint64_t v, struct lf_event *ev)
{
	lf_event_init(ev);
	assert_int_equal(rt_fence_wait_event(f, v, ev), 0);
	assert_int_equal(rt_queue_signal(q, f, v), 0);
}

static inline struct os_ums_stats umt_stats(struct umt *t)
{
	struct os_ums_stats s;
	os_ums_stats(t->u, &s);
	return s;
}

static inline struct hw_engine_um_stats umt_engine(struct umt *t, unsigned e)
{
	struct hw_engine_um_stats s;
	hw_engine_um_stats(os_adapter_hw(t->a), e, &s);
	return s;
}

/* ---- a user-mode HW queue through the OS calls themselves (no runtime):
 * the UMD's steps written out ---- */

struct raw_queue {
	struct os_fence *progress;
	struct os_hwqueue *q;
	struct os_ring_alloc *rb, *rbc;
	struct os_doorbell_map m;
	struct hw_cmd ib[2];
	uint64_t wptr;
};

/* The UMD's ring allocations, resident (seed: "UMD is responsible for
 * making the ring buffer and ring buffer control allocations resident
 * before creating a doorbell"). */
static inline void raw_ring_allocs(struct os_device *d, struct raw_queue *r)
{
	assert_int_equal(os_ring_alloc_create(d, OS_RING_BUFFER, 64, &r->rb), 0);
	assert_int_equal(os_ring_alloc_create(d, OS_RING_BUFFER_CONTROL, 0, &r->rbc), 0);
	assert_int_equal(os_ring_alloc_make_resident(r->rb), 0);
	assert_int_equal(os_ring_alloc_make_resident(r->rbc), 0);
}

/* A user-mode HW queue of c with its own progress fence; no ring allocations yet. */
static inline void raw_hwqueue_create(struct umt *t, struct os_context *c, struct raw_queue *r)
{
	assert_int_equal(os_fence_create(t->a, OS_FENCE_NATIVE, 0, 0, &r->progress), 0);
	assert_int_equal(os_hwqueue_create(c, OS_HWQUEUE_USER_MODE_SUBMISSION, 64, r->progress, &r->q), 0);
}

static inline void raw_queue_open(struct umt *t, struct os_device *d, struct os_context *c, struct raw_queue *r)
{
	raw_hwqueue_create(t, c, r);
	raw_ring_allocs(d, r);
	assert_int_equal(os_doorbell_create(r->q, r->rb, r->rbc, &r->m), 0);
	r->wptr = 0;
}

/* The UMD's steps, written out: last queued, visible, ring through the mapping. */
static inline void raw_submit(struct raw_queue *r, uint64_t v, _Atomic uint64_t *counter)
{
	r->ib[0] = (struct hw_cmd){ .op = HW_CMD_COUNT, .stamp = counter };
	r->ib[1] = (struct hw_cmd){ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(r->progress), .value = v };
	struct hw_cmd entry = { .op = HW_CMD_INDIRECT, .ib = r->ib, .arg = 2 };
	atomic_store(r->m.last_queued, v);
	assert_true(lf_ring_push_spsc(r->m.ring, &entry));
	r->wptr++;
	hw_doorbell_write(atomic_load(r->m.cpuva), hw_doorbell_ring_value(r->m.value, r->wptr));
}

static inline uint64_t raw_status(const struct raw_queue *r)
{
	return atomic_load(r->m.status);
}

/* A device of t's user-mode submission with one context (engine 0). */
static inline void device_open(struct umt *t, struct os_device **d, struct os_context **c)
{
	assert_int_equal(os_device_create(t->u, d), 0);
	assert_int_equal(os_context_create(*d, 0, c), 0);
}

#endif
