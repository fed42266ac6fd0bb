/* benchmarks/backend_model.c — the model backend (backend.h): the workloads'
 * queues, lists, fences and events are the model's D3D12 runtime objects
 * (gpu-model/runtime/d3d.h) on a three-engine stack.  A handle is the
 * runtime object's pointer (workload.h, bm_model_*); the instance is the
 * workload itself.  This is the path every workload took before the seam:
 * the same calls in the same order. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "benchmarks/workload.h"
#include "lockfree/arch.h"

static struct bm_queue *bm_mq(struct rt_cqueue *q)
{
	return (struct bm_queue *)(void *)q;
}

int bm_model_up(struct bm_wl *w, const struct bm_wl_config *c, char *err, size_t errlen)
{
	w->ops = &bm_model_ops;
	w->be = w;
	w->kind = BM_BACKEND_MODEL;
	if (c->validate && rt_debug_create(&w->debug)) {
		snprintf(err, errlen, "creating the validation layer: no memory");
		w->ops = NULL;
		return -ENOMEM;
	}
	struct rt_stack_config cfg;
	rt_stack_config_default(&cfg, c->path);
	cfg.os.caps.engines = BM_WL_ENGINES;
	if (c->profile)
		rt_profile_apply(c->profile, &cfg.os);
	int rc = rt_stack_create(&cfg, &w->s, err, errlen);
	if (rc) {
		if (w->debug)
			rt_debug_destroy(w->debug);
		w->debug = NULL;
		w->ops = NULL;
		return rc;
	}
	w->d = rt_stack_device(w->s);
	w->user_mode = c->user_mode;
	return 0;
}

static int bm_m_queue_create(void *be, enum rt_list_type t, const char *name, struct bm_queue **out)
{
	struct bm_wl *w = be;
	struct rt_cqueue_desc d = { .type = t, .user_mode = w->user_mode, .name = name, .debug = w->debug };
	struct rt_cqueue *q = NULL;
	int rc = rt_cqueue_create(w->d, &d, &q);
	*out = rc ? NULL : bm_mq(q);
	return rc;
}

static void bm_m_queue_destroy(void *be, struct bm_queue *q)
{
	(void)be;
	rt_cqueue_destroy(bm_model_queue(q));
}

static const char *bm_m_queue_name(void *be, const struct bm_queue *q)
{
	(void)be;
	return rt_cqueue_name((const struct rt_cqueue *)(const void *)q);
}

static int bm_m_execute(void *be, struct bm_queue *q, struct bm_list *const *lists, size_t n)
{
	(void)be;
	struct rt_clist *l[BM_BE_EXEC];
	if (n > BM_BE_EXEC)
		return -E2BIG;
	for (size_t i = 0; i < n; i++)
		l[i] = bm_model_list(lists[i]);
	return rt_cqueue_execute(bm_model_queue(q), l, n);
}

static int bm_m_signal(void *be, struct bm_queue *q, struct bm_fence *f, uint64_t v)
{
	(void)be;
	return rt_cqueue_signal(bm_model_queue(q), bm_model_fence(f), v);
}

static int bm_m_wait(void *be, struct bm_queue *q, struct bm_fence *f, uint64_t v)
{
	(void)be;
	return rt_cqueue_wait(bm_model_queue(q), bm_model_fence(f), v);
}

static uint64_t bm_m_progress(void *be, struct bm_queue *q)
{
	(void)be;
	return rt_queue_completed(rt_cqueue_queue(bm_model_queue(q)));
}

static bool bm_m_blocked(void *be, struct bm_queue *q, struct bm_fence **f, uint64_t *v)
{
	(void)be;
	struct rt_fence *rf;
	if (!rt_cqueue_blocked_wait(bm_model_queue(q), &rf, v))
		return false;
	*f = (struct bm_fence *)(void *)rf;
	return true;
}

static int bm_m_fence_create(void *be, struct bm_fence **out)
{
	struct bm_wl *w = be;
	struct rt_fence *f = NULL;
	int rc = rt_fence_create(w->d, 0, &f);
	*out = rc ? NULL : (struct bm_fence *)(void *)f;
	return rc;
}

static uint64_t bm_m_fence_value(void *be, struct bm_fence *f)
{
	(void)be;
	return rt_fence_completed(bm_model_fence(f));
}

static int bm_m_fence_signal(void *be, struct bm_fence *f, uint64_t v)
{
	(void)be;
	return rt_fence_signal(bm_model_fence(f), v);
}

/* The pipeline state a list starts with: a compute list must set a compute
 * PSO before its dispatches (d3d.h, "Pipeline state"); a copy list has none. */
static const struct rt_pso *bm_m_pso(enum rt_list_type t)
{
	static const struct rt_pso compute = { RT_PSO_COMPUTE, "workload-compute" };
	static const struct rt_pso graphics = { RT_PSO_GRAPHICS, "workload-graphics" };
	return t == RT_LIST_COMPUTE ? &compute : t == RT_LIST_COPY ? NULL : &graphics;
}

static int bm_m_list_create(void *be, enum rt_list_type t, const char *name, struct bm_list **out)
{
	(void)be;
	struct rt_clist *l = NULL;
	int rc = rt_clist_create_pso(t, bm_m_pso(t), &l);
	if (!rc && name)
		rc = rt_clist_set_name(l, name);   /* its WORK's name on the timeline */
	if (rc && l)
		rt_clist_destroy(l);
	*out = rc ? NULL : (struct bm_list *)(void *)l;
	return rc;
}

static int bm_m_list_record(void *be, struct bm_list *l, enum rt_op op, uint64_t ns, unsigned units)
{
	(void)be;
	return rt_clist_record(bm_model_list(l), op, ns, units);
}

static int bm_m_list_close(void *be, struct bm_list *l)
{
	(void)be;
	return rt_clist_close(bm_model_list(l));
}

static void bm_m_list_reset(void *be, struct bm_list *l)
{
	(void)be;
	rt_clist_reset(bm_model_list(l));
}

static void bm_m_list_destroy(void *be, struct bm_list *l)
{
	(void)be;
	rt_clist_destroy(bm_model_list(l));
}

static int bm_m_event_create(void *be, bool manual, bool initial, struct bm_event **out)
{
	(void)be;
	struct rt_event *e = NULL;
	int rc = rt_event_create(manual, initial, &e);
	*out = rc ? NULL : (struct bm_event *)(void *)e;
	return rc;
}

static void bm_m_event_destroy(void *be, struct bm_event *e)
{
	(void)be;
	rt_event_destroy(bm_model_event(e));
}

static void bm_m_event_set(void *be, struct bm_event *e)
{
	(void)be;
	rt_event_set(bm_model_event(e));
}

static int bm_m_set_event(void *be, struct bm_fence *f, uint64_t v, struct bm_event *e)
{
	(void)be;
	return rt_fence_set_event(bm_model_fence(f), v, bm_model_event(e));
}

static int bm_m_wait_any(void *be, struct bm_event *const *evs, size_t n, int64_t ns)
{
	(void)be;
	if (n == 1)
		return rt_event_wait(bm_model_event(evs[0]), ns);
	struct rt_event *e[RT_WAIT_MAX];
	if (n > RT_WAIT_MAX)
		return -E2BIG;
	for (size_t i = 0; i < n; i++)
		e[i] = bm_model_event(evs[i]);
	return rt_event_wait_multi(e, n, false, ns);
}

static void bm_m_snap(void *be, struct bm_be_counters *o)
{
	struct bm_wl *w = be;
	rt_stack_settle(w->s);
	struct os_stats os;
	rt_stack_os_stats(w->s, &os);
	o->interrupts = os.interrupts;
	bm_host_snap(w->s, &os, &o->host);
	o->gpu_signals = os.gpu_signals;
	o->lost_wakeups = os.lost_wakeups;
	o->held_waits = os.held_waits;
	for (unsigned e = 0; e < BM_BE_ENGINES; e++) {
		struct hw_engine_stats st;
		rt_stack_engine_stats(w->s, e, &st);
		o->busy_ns[e] = st.busy_ns;
	}
	o->validation_errors = w->debug ? rt_debug_errors(w->debug) : 0;
	o->has_interrupts = o->has_lost = o->has_busy = true;
	o->validating = w->debug != NULL;
}

static void bm_m_validation_message(void *be, char *buf, size_t len)
{
	struct bm_wl *w = be;
	buf[0] = '\0';
	if (w->debug && rt_debug_errors(w->debug))
		rt_debug_message(w->debug, 0, buf, len);
}

static int bm_m_down(void *be)
{
	struct bm_wl *w = be;
	int rc = w->s ? rt_stack_destroy(w->s) : 0;     /* drains the queues, frees fences */
	struct bm_queue *q[3] = { w->direct, w->compute, w->copy };
	for (int i = 0; i < 3; i++)
		if (q[i])
			rt_cqueue_destroy(bm_model_queue(q[i]));
	if (w->ev)
		rt_event_destroy(bm_model_event(w->ev));     /* after the fences that could set it */
	for (int i = 0; i < 2; i++)
		if (w->extra_events[i])
			rt_event_destroy(bm_model_event(w->extra_events[i]));
	if (w->debug)
		rt_debug_destroy(w->debug);
	return rc;
}

const struct bm_backend_ops bm_model_ops = {
	.name = "model",
	.queue_create = bm_m_queue_create, .queue_destroy = bm_m_queue_destroy, .queue_name = bm_m_queue_name,
	.execute = bm_m_execute, .signal = bm_m_signal, .wait = bm_m_wait,
	.queue_progress = bm_m_progress, .blocked_wait = bm_m_blocked,
	.fence_create = bm_m_fence_create, .fence_value = bm_m_fence_value, .fence_signal = bm_m_fence_signal,
	.list_create = bm_m_list_create, .list_record = bm_m_list_record, .list_close = bm_m_list_close,
	.list_reset = bm_m_list_reset, .list_destroy = bm_m_list_destroy,
	.event_create = bm_m_event_create, .event_destroy = bm_m_event_destroy, .event_set = bm_m_event_set,
	.set_event = bm_m_set_event, .event_wait_any = bm_m_wait_any,
	.snap = bm_m_snap, .validation_message = bm_m_validation_message, .down = bm_m_down,
};
