/* gpu-model/runtime/d3d_event.c — events (CreateEvent, SetEvent,
 * WaitForSingleObject, WaitForMultipleObjects) and fence completion events
 * (SetEventOnCompletion, SetEventOnMultipleFenceCompletion).  Contract in
 * d3d.h.  An event is an lf_event the OS sets (os_fence_wait_event,
 * os_wait_multi): the latch a fence's waiter list keeps. */
#include <errno.h>

#include "gpu-model/runtime/d3d.h"
#include "lockfree/alloc.h"
#include "lockfree/arch.h"
#include "lockfree/cacheline.h"
#include "lockfree/event.h"

#define RT_EVENT_SPIN_NS 2000u   /* a waiter spins this long before sleeping (os_config's default spin) */

struct rt_event {
	struct lf_event ev;
	bool manual_reset;
};

int rt_event_create(bool manual_reset, bool initial, struct rt_event **out)
{
	struct rt_event *e = lf_alloc(sizeof(*e), LF_CACHELINE);
	if (!e)
		return -ENOMEM;
	lf_event_init(&e->ev);
	e->manual_reset = manual_reset;
	if (initial)
		lf_event_set(&e->ev);
	*out = e;
	return 0;
}

void rt_event_destroy(struct rt_event *e)
{
	lf_free(e, sizeof(*e), LF_CACHELINE);
}

void rt_event_set(struct rt_event *e)
{
	lf_event_set(&e->ev);
}

void rt_event_reset(struct rt_event *e)
{
	lf_event_reset(&e->ev);
}

bool rt_event_is_set(const struct rt_event *e)
{
	return lf_event_is_set(&e->ev);
}

/* A wait returned on e: an auto-reset event is consumed. */
static void rt_event_consume(struct rt_event *e)
{
	if (!e->manual_reset)
		lf_event_reset(&e->ev);
}

int rt_event_wait(struct rt_event *e, int64_t timeout_ns)
{
	int rc = lf_event_wait(&e->ev, RT_EVENT_SPIN_NS, timeout_ns);
	if (!rc)
		rt_event_consume(e);
	return rc;
}

static int rt_event_wait_all(struct rt_event *const *evs, size_t n, int64_t timeout_ns)
{
	uint64_t deadline = timeout_ns < 0 ? UINT64_MAX : lf_now_ns() + (uint64_t)timeout_ns;
	for (size_t i = 0; i < n; i++) {
		int64_t left = -1;
		if (timeout_ns >= 0) {
			uint64_t now = lf_now_ns();
			left = now >= deadline ? 0 : (int64_t)(deadline - now);
		}
		int rc = lf_event_wait(&evs[i]->ev, RT_EVENT_SPIN_NS, left);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < n; i++)
		rt_event_consume(evs[i]);
	return 0;
}

int rt_event_wait_multi(struct rt_event *const *evs, size_t n, bool all, int64_t timeout_ns)
{
	if (!n)
		return -EINVAL;
	if (n > RT_WAIT_MAX)
		return -E2BIG;
	if (all)
		return rt_event_wait_all(evs, n, timeout_ns);
	struct lf_event *w[RT_WAIT_MAX];
	for (size_t i = 0; i < n; i++)
		w[i] = &evs[i]->ev;
	int rc = lf_event_wait_any(w, n, RT_EVENT_SPIN_NS, timeout_ns);
	if (rc >= 0)
		rt_event_consume(evs[rc]);
	return rc;
}

int rt_fence_set_event(struct rt_fence *f, uint64_t v, struct rt_event *e)
{
	if (!e)
		return -EINVAL;
	return rt_fence_wait_event(f, v, &e->ev);
}

int rt_fence_set_event_multi(struct rt_fence *const *f, const uint64_t *v, size_t n, bool all,
			     struct rt_event *e)
{
	if (!n || !e)
		return -EINVAL;
	if (n > RT_WAIT_MAX)
		return -E2BIG;
	struct os_fence *of[RT_WAIT_MAX];
	for (size_t i = 0; i < n; i++) {
		if (rt_fence_destroyed(f[i]))
			return -EIDRM;
		of[i] = rt_fence_os(f[i]);
	}
	return os_wait_multi(of, v, n, all, &e->ev);
}
