/* gpu-model/runtime/d3d_queue.c — command queues of a type and a priority
 * over rt_queue: ExecuteCommandLists, Signal, Wait.  Contract in d3d.h. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "gpu-model/runtime/d3d.h"
#include "gpu-model/runtime/d3d_internal.h"
#include "lockfree/alloc.h"
#include "lockfree/cacheline.h"
#include "lockfree/counter.h"

struct rt_cqueue {
	struct rt_device *d;
	struct rt_queue *q;
	enum rt_list_type type;
	enum rt_priority priority;
	unsigned engine;
	struct rt_debug *debug;          /* NULL: the validation layer is off */
	int debug_tl;                    /* the queue's timeline in it */
	bool device_owned;               /* a default queue: its device's, shared by components */
	pthread_mutex_t submit;          /* default queues: held around each execute/signal/wait, so
	                                  * the rt_queue below keeps one submitting thread at a time */
	char name[32];
	char err[160];
	/* the last RT_CQUEUE_WAITS waits submitted (the submitting thread's): rt_cqueue_blocked_wait */
	struct rt_fence *wait_f[RT_CQUEUE_WAITS];
	uint64_t wait_v[RT_CQUEUE_WAITS];
	uint64_t nwaits;
	uint64_t exec_done;              /* the progress value once the last execute is done (0: none) */
	/* single-writer counters (the submitting thread) */
	LF_ALIGNED lf_counter executes, lists, ops[RT_OPS], work_ns, signals, waits;
};

/* numbers the queues that were given no name: "copy0", "copy1", ... */
static _Atomic unsigned rt_cqueue_serial[RT_LIST_TYPES];

int rt_cqueue_create(struct rt_device *d, const struct rt_cqueue_desc *desc, struct rt_cqueue **out)
{
	if ((unsigned)desc->type >= RT_LIST_TYPES || desc->type == RT_LIST_BUNDLE ||
	    (unsigned)desc->priority > RT_PRIORITY_GLOBAL_REALTIME)
		return -EINVAL;   /* "bundles are not consumed by any queues" */
	unsigned engine = rt_engine_for_type(rt_device_engines(d), desc->type);
	struct rt_queue_desc qd = {
		.engine = engine,
		/* user-mode submission needs native fences (WDDM 3.2): on the
		 * legacy path the runtime has kernel-mode queues only */
		.user_mode = desc->user_mode && rt_device_native(d),
		.ring_slots = desc->ring_slots,
		/* the engine's run list runs the highest runnable priority first and
		 * preempts lower work at its granularity (hw/preempt.c) */
		.priority = (int32_t)desc->priority,
	};
	struct rt_queue *q;
	int rc = rt_queue_create(d, &qd, &q);
	if (rc)
		return rc;
	struct rt_cqueue *cq = lf_alloc(sizeof(*cq), LF_CACHELINE);
	memset(cq, 0, sizeof(*cq));
	cq->d = d;
	cq->q = q;
	cq->type = desc->type;
	cq->priority = desc->priority;
	cq->engine = engine;
	if (desc->name)
		snprintf(cq->name, sizeof(cq->name), "%s", desc->name);
	else
		snprintf(cq->name, sizeof(cq->name), "%s%u", rt_list_type_name(desc->type),
			 atomic_fetch_add_explicit(&rt_cqueue_serial[desc->type], 1, memory_order_relaxed));
	if (desc->debug) {
		cq->debug = desc->debug;
		cq->debug_tl = rt_debug_add_queue(desc->debug, cq->name, desc->type);
		if (cq->debug_tl < 0) {
			lf_free(cq, sizeof(*cq), LF_CACHELINE);   /* the rt_queue stays the device's */
			return -ENOSPC;
		}
	}
	*out = cq;
	return 0;
}

void rt_cqueue_destroy(struct rt_cqueue *q)
{
	assert(!q->device_owned && "a default queue is its device's: rt_device_destroy frees it");
	lf_free(q, sizeof(*q), LF_CACHELINE);
}

/* ---- default queues ---- */

int rt_device_default_queue(struct rt_device *d, enum rt_list_type t, enum rt_priority p, struct rt_cqueue **out)
{
	if ((unsigned)t >= RT_LIST_BUNDLE || (unsigned)p > RT_PRIORITY_GLOBAL_REALTIME)
		return -EINVAL;   /* bundles have no queue */
	pthread_mutex_t *lock;
	struct rt_cqueue **slot = &rt_device_defaults(d, &lock)[(unsigned)t * 3 + (unsigned)p];
	int rc = 0;
	pthread_mutex_lock(lock);
	if (!*slot) {
		static const char *const suffix[] = { "", "-high", "-realtime" };
		char name[32];
		snprintf(name, sizeof(name), "default-%s%s", rt_list_type_name(t), suffix[p]);
		/* user_mode: rt_cqueue_create falls back to kernel mode on monitored fences */
		struct rt_cqueue_desc desc = { .type = t, .priority = p, .user_mode = true, .name = name };
		struct rt_cqueue *q;
		rc = rt_cqueue_create(d, &desc, &q);
		if (!rc) {
			pthread_mutex_init(&q->submit, NULL);
			q->device_owned = true;
			*slot = q;   /* published under the lock: every later retrieval reads it there */
		}
	}
	if (!rc)
		*out = *slot;
	pthread_mutex_unlock(lock);
	return rc;
}

bool rt_cqueue_is_default(const struct rt_cqueue *q)
{
	return q->device_owned;
}

void rt_cqueue_free_default(struct rt_cqueue *q)
{
	pthread_mutex_destroy(&q->submit);
	lf_free(q, sizeof(*q), LF_CACHELINE);
}

/* A default queue's calls from several components, one at a time. */
static void rt_cqueue_enter(struct rt_cqueue *q)
{
	if (q->device_owned)
		pthread_mutex_lock(&q->submit);
}

static void rt_cqueue_leave(struct rt_cqueue *q)
{
	if (q->device_owned)
		pthread_mutex_unlock(&q->submit);
}

/* Every list executable on q, or the refusal (nothing submitted). */
static int rt_cqueue_check(struct rt_cqueue *q, struct rt_clist *const *lists, size_t n)
{
	if (!n) {
		snprintf(q->err, sizeof(q->err), "%s: ExecuteCommandLists of no list", q->name);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		const struct rt_clist *l = lists[i];
		if (l->type == RT_LIST_BUNDLE) {
			snprintf(q->err, sizeof(q->err), "%s: list %zu is a bundle: bundles cannot be executed on a queue",
				 q->name, i);
			return -EINVAL;
		}
		if (l->type != q->type) {
			snprintf(q->err, sizeof(q->err), "%s: list %zu is a %s list; a %s queue executes %s lists",
				 q->name, i, rt_list_type_name(l->type), rt_list_type_name(q->type),
				 rt_list_type_name(q->type));
			return -EINVAL;
		}
		if (l->recording) {
			snprintf(q->err, sizeof(q->err), "%s: list %zu is still recording: close it before executing",
				 q->name, i);
			return -EBUSY;
		}
	}
	return 0;
}

/* Submit the commands of lists[0..n) as buffers of up to RT_MAX_CMDS. */
static int rt_cqueue_submit_lists(struct rt_cqueue *q, struct rt_clist *const *lists, size_t n)
{
	struct hw_cmd buf[RT_MAX_CMDS];
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t c = 0; c < lists[i]->n; c++) {
			buf[k++] = lists[i]->cmds[c];
			if (k == RT_MAX_CMDS) {
				int rc = rt_queue_submit(q->q, buf, k, NULL);
				if (rc)
					return rc;
				k = 0;
			}
		}
	/* an empty execution still submits: it is a point in the queue's order */
	return k || !n ? rt_queue_submit(q->q, buf, k, NULL) : 0;
}

static void rt_cqueue_count(struct rt_cqueue *q, struct rt_clist *const *lists, size_t n)
{
	lf_count(&q->executes, 1);
	lf_count(&q->lists, n);
	for (size_t i = 0; i < n; i++) {
		for (size_t c = 0; c < lists[i]->n; c++)
			lf_count(&q->ops[lists[i]->ops[c]], lists[i]->cmds[c].value);   /* its sub-units */
		lf_count(&q->work_ns, lists[i]->work_ns);
	}
}

/* Under a validation layer: each list remembers this execution, for the
 * check of its next Reset (rt_debug_list_reset). */
static void rt_cqueue_mark_lists(struct rt_cqueue *q, struct rt_clist *const *lists, size_t n, uint64_t exec,
				 uint64_t prev_done)
{
	for (size_t i = 0; i < n; i++) {
		struct rt_clist *l = lists[i];
		l->exec_debug = q->debug;
		l->exec_q = q->q;
		l->exec_done = q->exec_done;
		l->exec_prev_done = prev_done;
		snprintf(l->exec_what, sizeof(l->exec_what), "%s (execute #%llu)", q->name, (unsigned long long)exec);
	}
}

/* The _serial calls: the caller is the queue's one submitter for the call
 * (its own thread, or a component holding a default queue's lock). */
static int rt_cqueue_execute_serial(struct rt_cqueue *q, struct rt_clist *const *lists, size_t n)
{
	int rc = rt_cqueue_check(q, lists, n);
	if (rc)
		return rc;
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += lists[i]->n;
	rc = total ? rt_cqueue_submit_lists(q, lists, n) : rt_queue_submit(q->q, NULL, 0, NULL);
	if (rc) {
		snprintf(q->err, sizeof(q->err), "%s: submission failed: %s", q->name, strerror(-rc));
		return rc;
	}
	rt_cqueue_count(q, lists, n);
	uint64_t prev = q->exec_done;
	q->exec_done = rt_queue_submitted(q->q);
	if (q->debug) {
		uint64_t exec = atomic_load_explicit(&q->executes, memory_order_relaxed);
		rt_debug_execute(q->debug, q->debug_tl, lists, n, exec);
		rt_cqueue_mark_lists(q, lists, n, exec, prev);
	}
	return 0;
}

int rt_cqueue_execute(struct rt_cqueue *q, struct rt_clist *const *lists, size_t n)
{
	rt_cqueue_enter(q);
	int rc = rt_cqueue_execute_serial(q, lists, n);
	rt_cqueue_leave(q);
	return rc;
}

static int rt_cqueue_signal_serial(struct rt_cqueue *q, struct rt_fence *f, uint64_t v)
{
	int rc = rt_queue_signal(q->q, f, v);
	if (!rc && q->debug)
		rt_debug_signal(q->debug, q->debug_tl, f, v);
	if (!rc)
		lf_count(&q->signals, 1);
	else
		snprintf(q->err, sizeof(q->err), "%s: Signal(%llu) failed: %s", q->name, (unsigned long long)v,
			 strerror(-rc));
	return rc;
}

int rt_cqueue_signal(struct rt_cqueue *q, struct rt_fence *f, uint64_t v)
{
	rt_cqueue_enter(q);
	int rc = rt_cqueue_signal_serial(q, f, v);
	rt_cqueue_leave(q);
	return rc;
}

static int rt_cqueue_wait_serial(struct rt_cqueue *q, struct rt_fence *f, uint64_t v)
{
	int rc = rt_queue_wait_gpu(q->q, f, v);
	if (!rc && q->debug)
		rt_debug_wait(q->debug, q->debug_tl, f, v);
	if (!rc) {
		lf_count(&q->waits, 1);
		q->wait_f[q->nwaits % RT_CQUEUE_WAITS] = f;
		q->wait_v[q->nwaits++ % RT_CQUEUE_WAITS] = v;
	} else
		snprintf(q->err, sizeof(q->err), "%s: Wait(%llu) failed: %s", q->name, (unsigned long long)v,
			 strerror(-rc));
	return rc;
}

int rt_cqueue_wait(struct rt_cqueue *q, struct rt_fence *f, uint64_t v)
{
	rt_cqueue_enter(q);
	int rc = rt_cqueue_wait_serial(q, f, v);
	rt_cqueue_leave(q);
	return rc;
}

bool rt_cqueue_blocked_wait(const struct rt_cqueue *q, struct rt_fence **f, uint64_t *v)
{
	if (rt_queue_completed(q->q) >= rt_queue_submitted(q->q))
		return false;                    /* everything it was given is done */
	uint64_t first = q->nwaits > RT_CQUEUE_WAITS ? q->nwaits - RT_CQUEUE_WAITS : 0;
	for (uint64_t i = first; i < q->nwaits; i++) {
		struct rt_fence *w = q->wait_f[i % RT_CQUEUE_WAITS];
		if (rt_fence_completed(w) < q->wait_v[i % RT_CQUEUE_WAITS]) {
			*f = w;
			*v = q->wait_v[i % RT_CQUEUE_WAITS];
			return true;
		}
	}
	return false;
}

int rt_cqueue_finish(struct rt_cqueue *q, int64_t timeout_ns)
{
	uint64_t v = rt_queue_submitted(q->q);
	return v ? rt_queue_wait(q->q, v, timeout_ns) : 0;
}

enum rt_list_type rt_cqueue_type(const struct rt_cqueue *q)
{
	return q->type;
}

enum rt_priority rt_cqueue_priority(const struct rt_cqueue *q)
{
	return q->priority;
}

unsigned rt_cqueue_engine(const struct rt_cqueue *q)
{
	return q->engine;
}

bool rt_cqueue_user_mode(const struct rt_cqueue *q)
{
	return rt_queue_user_mode(q->q);
}

const char *rt_cqueue_name(const struct rt_cqueue *q)
{
	return q->name;
}

struct rt_queue *rt_cqueue_queue(struct rt_cqueue *q)
{
	return q->q;
}

uint64_t rt_cqueue_trace_handle(struct rt_cqueue *q)
{
	return rt_queue_trace_handle(q->q);
}

const char *rt_cqueue_error(const struct rt_cqueue *q)
{
	return q->err;
}

#define RT_LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)

void rt_cqueue_stats(const struct rt_cqueue *q, struct rt_cqueue_stats *o)
{
	o->executes = RT_LOAD(q->executes);
	o->lists = RT_LOAD(q->lists);
	for (int i = 0; i < RT_OPS; i++)
		o->ops[i] = RT_LOAD(q->ops[i]);
	o->work_ns = RT_LOAD(q->work_ns);
	o->signals = RT_LOAD(q->signals);
	o->waits = RT_LOAD(q->waits);
}
