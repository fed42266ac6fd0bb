/* gpu-model/runtime/rt.c — devices, queues (user-mode and kernel-mode
 * submission), fences.  Contract and the submission sequence in rt.h. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpu-model/runtime/rt.h"
#include "gpu-model/runtime/d3d_internal.h"
#include "lockfree/alloc.h"
#include "lockfree/arch.h"
#include "lockfree/cacheline.h"
#include "lockfree/counter.h"
#include "lockfree/ring.h"

/* every command may be a native wait or signal followed by its LOG */
#define RT_IB_CMDS        (2 * (RT_MAX_CMDS + 1))
/* A user-mode command buffer of at most this many commands (the progress
 * write included) is copied into the ring itself, as the OS writes a
 * kernel-mode submission's commands into the engine's ring; a longer one is
 * one INDIRECT entry naming it.  Inline, the engine reads the commands with
 * the ring entry, not one dependent fetch later. */
#define RT_INLINE_CMDS    4
#define RT_DEFAULT_SLOTS  64
#define RT_FULL_TIMEOUT_NS 10000000000ll

void (*rt_test_ring_hook)(struct rt_queue *q);

struct rt_fence {
	struct rt_device *d;
	struct os_fence *f;
	/* what user mode reads a native fence through: the read-only mapping of
	 * CurrentValue D3DKMTCreateNativeFence hands out (no MonitoredValue) */
	struct hw_fence_map cv;
	struct rt_fence *next;           /* in the device (d->lock) */
	_Atomic bool dead;               /* rt_fence_destroy ran: every later use is refused */
};

struct rt_queue {
	struct rt_device *d;
	struct rt_queue_desc desc;
	struct os_context *ctx;
	struct os_hwqueue *osq;
	struct rt_fence *progress;
	struct os_doorbell_map map;      /* user-mode */
	struct os_ring_alloc *rb, *rbc;  /* user-mode: the ring buffer and ring buffer control allocations */
	bool um;
	bool visible;                    /* this submission's entry is in the ring */
	_Atomic uint64_t next;           /* last progress value handed out (the submitter writes) */
	uint64_t wptr;                   /* entries pushed (the producer's write pointer) */
	uint64_t completed_seen;         /* progress last read (submitter-private: spares a read per submit) */
	size_t nslots;
	struct hw_cmd *ibs;              /* nslots command buffers of RT_IB_CMDS */
	struct rt_queue *next_q;         /* in the device */
	/* logbuf (submitter-private): the next entry of each log (the UMD controls
	 * the progression) and the FENCE_*_QUEUED events, the last RT_EVENTS kept */
	uint64_t log_next[HW_LOG_TYPES];
	uint64_t nevents;
	struct rt_fence_event events[RT_EVENTS];
	LF_ALIGNED lf_counter submits, um_submits, km_submits, rings, retries, connects, notifies,
		fallbacks, full_waits;
};

struct rt_device {
	struct os_ums *u;
	struct os_device *od;
	pthread_mutex_t lock;
	struct rt_queue *queues;
	struct rt_fence *fences;
	struct rt_fence *dead;           /* destroyed fences: the shells stay until the device goes,
	                                  * so a later use is refused (-EIDRM), never a use after free */
	_Atomic bool removed;
	/* the d3d layer's default queues (d3d_internal.h), made on first
	 * retrieval under defaults_lock, freed with the device */
	pthread_mutex_t defaults_lock;
	struct rt_cqueue *defaults[RT_DEFAULT_QUEUE_SLOTS];
};

/* ---- device ---- */

int rt_device_create(struct os_ums *u, struct rt_device **out)
{
	struct rt_device *d = lf_alloc(sizeof(*d), LF_CACHELINE);
	int rc = os_device_create(u, &d->od);
	if (rc) {
		lf_free(d, sizeof(*d), LF_CACHELINE);
		return rc;
	}
	d->u = u;
	pthread_mutex_init(&d->lock, NULL);
	pthread_mutex_init(&d->defaults_lock, NULL);
	memset(d->defaults, 0, sizeof(d->defaults));
	*out = d;
	return 0;
}

/* The process's own rt_device_terminate (not the OS's): submissions to a
 * device the OS terminated still reach the OS, which refuses them (-ENODEV). */
static bool rt_device_terminated(const struct rt_device *d)
{
	return atomic_load_explicit(&d->removed, memory_order_acquire);
}

bool rt_device_removed(const struct rt_device *d)
{
	/* the process terminated it, or the OS did (a TDR found it guilty) */
	return atomic_load_explicit(&d->removed, memory_order_acquire) || os_device_in_error(d->od);
}

bool rt_device_native(const struct rt_device *d)
{
	return os_adapter_native(os_ums_adapter(d->u));
}

unsigned rt_device_engines(const struct rt_device *d)
{
	return hw_adapter_caps(os_adapter_hw(os_ums_adapter(d->u)))->engines;
}

struct os_device *rt_device_os(struct rt_device *d)
{
	return d->od;
}

void rt_device_terminate(struct rt_device *d)
{
	/* removed before the OS releases the waiters, so a released waiter sees it */
	atomic_store_explicit(&d->removed, true, memory_order_seq_cst);
	os_device_terminate(d->od);
	pthread_mutex_lock(&d->lock);
	for (struct rt_fence *f = d->fences; f; f = f->next)
		os_fence_signal_cpu(f->f, UINT64_MAX);
	pthread_mutex_unlock(&d->lock);
}

struct rt_cqueue **rt_device_defaults(struct rt_device *d, pthread_mutex_t **lock)
{
	*lock = &d->defaults_lock;
	return d->defaults;
}

int rt_device_destroy(struct rt_device *d)
{
	int rc = os_device_destroy(d->od);   /* nothing if terminated already */
	for (int i = 0; i < RT_DEFAULT_QUEUE_SLOTS; i++)   /* their rt_queues are freed below */
		if (d->defaults[i])
			rt_cqueue_free_default(d->defaults[i]);
	pthread_mutex_destroy(&d->defaults_lock);
	for (struct rt_queue *q = d->queues, *next; q; q = next) {
		next = q->next_q;
		lf_free(q->ibs, q->nslots * RT_IB_CMDS * sizeof(struct hw_cmd), LF_CACHELINE);
		lf_free(q, sizeof(*q), LF_CACHELINE);
	}
	for (struct rt_fence *f = d->fences, *next; f; f = next) {
		next = f->next;
		os_device_untrack_fence(d->od, f->f);
		os_fence_destroy(f->f);
		lf_free(f, sizeof(*f), LF_CACHELINE);
	}
	for (struct rt_fence *f = d->dead, *next; f; f = next) {
		next = f->next;
		lf_free(f, sizeof(*f), LF_CACHELINE);
	}
	pthread_mutex_destroy(&d->lock);
	lf_free(d, sizeof(*d), LF_CACHELINE);
	return rc;
}

/* ---- fences ---- */

/* Make the OS fence of a fence of d: in its list, destroyed with it. */
static struct rt_fence *rt_fence_adopt(struct rt_device *d, struct os_fence *of)
{
	struct rt_fence *f = lf_alloc(sizeof(*f), LF_CACHELINE);
	f->f = of;
	f->d = d;
	if (os_fence_is_native(of))
		os_fence_map(of, HW_AGENT_CPU_USER, HW_VALUE_CV, &f->cv);
	os_device_track_fence(d->od, of);   /* released if the OS removes the device */
	pthread_mutex_lock(&d->lock);
	f->next = d->fences;
	d->fences = f;
	pthread_mutex_unlock(&d->lock);
	return f;
}

/* A fence of d created with os_fence_create flags `flags`. */
static int rt_fence_create_flags(struct rt_device *d, uint64_t initial, unsigned flags, struct rt_fence **out)
{
	struct os_fence *of;
	int rc = os_fence_create(os_ums_adapter(d->u), OS_FENCE_NATIVE, initial, flags, &of);
	if (!rc)
		*out = rt_fence_adopt(d, of);
	return rc;
}

int rt_fence_create(struct rt_device *d, uint64_t initial, struct rt_fence **out)
{
	return rt_fence_create_flags(d, initial, 0, out);
}

void rt_fence_destroy(struct rt_fence *f)
{
	struct rt_device *d = f->d;
	if (atomic_exchange_explicit(&f->dead, true, memory_order_acq_rel))
		return;                          /* destroyed already: nothing more to do */
	pthread_mutex_lock(&d->lock);
	for (struct rt_fence **p = &d->fences; *p; p = &(*p)->next)
		if (*p == f) {
			*p = f->next;
			break;
		}
	f->next = d->dead;
	d->dead = f;
	pthread_mutex_unlock(&d->lock);
	os_device_untrack_fence(d->od, f->f);
	os_fence_destroy(f->f);
	f->f = NULL;
}

bool rt_fence_destroyed(const struct rt_fence *f)
{
	return atomic_load_explicit(&f->dead, memory_order_acquire);
}

uint64_t rt_fence_completed(struct rt_fence *f)
{
	if (rt_fence_destroyed(f))
		return UINT64_MAX;               /* no loop on a destroyed fence waits forever */
	if (rt_device_removed(f->d))
		return UINT64_MAX;
	uint64_t v;
	/* native: GetCompletedValue reads the user-mode mapping (64-bit values
	 * only: a native fence is never on a 32-bit GPU); monitored: the OS's read */
	return f->cv.p && !hw_fence_map_read(&f->cv, &v) ? v : os_fence_value(f->f);
}

int rt_fence_signal(struct rt_fence *f, uint64_t v)
{
	if (rt_fence_destroyed(f))
		return -EIDRM;
	if (rt_device_terminated(f->d))
		return -EIO;
	return os_fence_signal_cpu(f->f, v);
}

/* The device's adapter (the timeline trace's records go there). */
static struct os_adapter *rt_adapter(const struct rt_device *d)
{
	return os_ums_adapter(d->u);
}

int rt_fence_wait(struct rt_fence *f, uint64_t v, int64_t timeout_ns)
{
	if (rt_fence_destroyed(f))
		return -EIDRM;
	bool trace = os_tracing(rt_adapter(f->d));
	uint64_t t0 = trace ? lf_now_ns() : 0;
	int rc = os_fence_wait_cpu(f->f, v, timeout_ns);
	rc = rt_device_removed(f->d) ? -EIO : rc;
	if (trace)
		rt_fence_trace_wait(f, v, t0, rc);
	return rc;
}

void rt_fence_trace_wait(struct rt_fence *f, uint64_t v, uint64_t t0, int rc)
{
	if (!os_tracing(rt_adapter(f->d)))
		return;
	/* the timeline: this thread waited from t0 until it ran again */
	struct os_trace_rec r = {
		.kind = OS_TRACE_CPU_WAIT, .tid = gettid(), .fence = os_fence_handle(f->f), .value = v,
		.t0 = t0, .t1 = lf_now_ns(), .n = (uint64_t)(int64_t)rc,
	};
	os_trace_add(rt_adapter(f->d), &r);
}

struct os_fence *rt_fence_os(struct rt_fence *f)
{
	return f->f;
}

int rt_fence_create_cross(struct rt_device *d, uint64_t initial, struct rt_fence **out)
{
	return rt_fence_create_flags(d, initial, OS_FENCE_CROSS_ADAPTER, out);
}

int rt_fence_open_cross(struct rt_fence *f, struct rt_device *other, struct rt_fence **out)
{
	struct os_fence *of;
	/* native where `other` supports it (os_fence_open_cross downgrades) */
	int rc = os_fence_open_cross(f->f, os_ums_adapter(other->u), OS_FENCE_NATIVE, &of);
	if (!rc)
		*out = rt_fence_adopt(other, of);
	return rc;
}

int rt_fence_wait_event(struct rt_fence *f, uint64_t v, struct lf_event *ev)
{
	if (rt_fence_destroyed(f))
		return -EIDRM;
	return os_fence_wait_event(f->f, v, ev);
}

struct hw_cmd rt_cmd_signal(struct rt_fence *f, uint64_t v)
{
	return (struct hw_cmd){ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(f->f), .value = v };
}

struct hw_cmd rt_cmd_wait(struct rt_fence *f, uint64_t v)
{
	return (struct hw_cmd){ .op = HW_CMD_WAIT, .fence = os_fence_hw(f->f), .value = v };
}

/* ---- queues ---- */

/* The UMD's part of the seed's residency model: allocate the ring buffer
 * and the ring buffer control, make both resident, then CreateDoorbell with
 * them (hRingBuffer, hRingBufferControl).  They are the device's: destroyed
 * with it, or by rt_queue_fallback once the doorbell is gone. */
static int rt_queue_open_doorbell(struct rt_queue *q, size_t ring_slots)
{
	int rc = os_ring_alloc_create(q->d->od, OS_RING_BUFFER, ring_slots, &q->rb);
	if (!rc)
		rc = os_ring_alloc_create(q->d->od, OS_RING_BUFFER_CONTROL, 0, &q->rbc);
	if (!rc)
		rc = os_ring_alloc_make_resident(q->rb);
	if (!rc)
		rc = os_ring_alloc_make_resident(q->rbc);
	if (!rc && q->desc.broken == RT_BROKEN_DOORBELL_BEFORE_RESIDENT) {
		os_ring_alloc_evict(q->rb);     /* broken on purpose: the CreateDoorbell must refuse it */
		os_ring_alloc_evict(q->rbc);
	}
	if (!rc)
		rc = os_doorbell_create(q->osq, q->rb, q->rbc, &q->map);
	return rc;
}

static int rt_queue_open_os(struct rt_queue *q, bool um)
{
	unsigned flags = um ? OS_HWQUEUE_USER_MODE_SUBMISSION : 0;
	if (os_fence_is_native(q->progress->f))
		flags |= OS_HWQUEUE_NATIVE_PROGRESS_FENCE;
	/* a user-mode ring holds nslots buffers of up to RT_INLINE_CMDS entries:
	 * with at most nslots in flight (rt_queue_take_ib) it never fills */
	size_t ring_slots = um ? q->nslots * RT_INLINE_CMDS : q->nslots;
	int rc = os_hwqueue_create(q->ctx, flags, ring_slots, q->progress->f, &q->osq);
	if (rc)
		return rc;
	if (q->desc.priority)
		os_hwqueue_set_priority(q->osq, q->desc.priority);
	q->um = um;
	q->visible = false;
	q->wptr = 0;
	return um ? rt_queue_open_doorbell(q, ring_slots) : 0;
}

int rt_queue_create(struct rt_device *d, const struct rt_queue_desc *desc, struct rt_queue **out)
{
	size_t slots = desc->ring_slots ? desc->ring_slots : RT_DEFAULT_SLOTS;
	if (slots < 2 || slots > 1024 || (slots & (slots - 1)))
		return -EINVAL;
	struct rt_queue *q = lf_alloc(sizeof(*q), LF_CACHELINE);
	q->d = d;
	q->desc = *desc;
	q->nslots = slots;
	q->ibs = lf_alloc(slots * RT_IB_CMDS * sizeof(struct hw_cmd), LF_CACHELINE);
	int rc = os_context_create(d->od, desc->engine, &q->ctx);
	if (!rc)
		rc = rt_fence_create(d, 0, &q->progress);
	if (!rc)
		rc = rt_queue_open_os(q, desc->user_mode);
	if (rc) {
		/* the context and the fence are the device's: freed with it */
		lf_free(q->ibs, slots * RT_IB_CMDS * sizeof(struct hw_cmd), LF_CACHELINE);
		lf_free(q, sizeof(*q), LF_CACHELINE);
		return rc;
	}
	pthread_mutex_lock(&d->lock);
	q->next_q = d->queues;
	d->queues = q;
	pthread_mutex_unlock(&d->lock);
	*out = q;
	return 0;
}

/* Command buffer for progress value v: free once v - nslots completed. */
static int rt_queue_take_ib(struct rt_queue *q, uint64_t v, struct hw_cmd **ib)
{
	*ib = &q->ibs[(v % q->nslots) * RT_IB_CMDS];
	if (v <= q->nslots || q->completed_seen >= v - q->nslots)
		return 0;
	/* read the progress fence only when the last value read is too old: it
	 * is written by the engine, a cache miss on the submission path */
	q->completed_seen = os_fence_value(q->progress->f);
	if (q->completed_seen >= v - q->nslots)
		return 0;
	lf_count(&q->full_waits, 1);
	int rc = os_fence_wait_cpu(q->progress->f, v - q->nslots, RT_FULL_TIMEOUT_NS);
	if (rt_device_removed(q->d))
		return -EIO;
	if (!rc)
		q->completed_seen = v - q->nslots;
	return rc;
}

/* Destroy the user-mode queue the normal way (what it made visible runs) and
 * continue on a kernel-mode queue: the seed's cleanup_fallback. */
static int rt_queue_fallback(struct rt_queue *q)
{
	os_hwqueue_destroy(q->osq);
	/* The doorbell went with the queue: the ring allocations are the UMD's
	 * to destroy (seed user-mode-work-submission: "User mode is responsible
	 * for destroying the HWQueue, doorbell, ring buffer"), and they are
	 * there to destroy unless the device ended ("The only scenario in which
	 * Dxgkrnl destroys ring buffer allocations is during device
	 * termination"), which the open below reports (-ENODEV).  Another
	 * -EIDRM is a kernel that destroyed them under the UMD: reported. */
	int rb = q->rb ? os_ring_alloc_destroy(q->rb) : 0, rbc = q->rbc ? os_ring_alloc_destroy(q->rbc) : 0;
	q->rb = q->rbc = NULL;
	if ((rb || rbc) && !os_device_in_error(q->d->od))
		return rb ? rb : rbc;
	lf_count(&q->fallbacks, 1);
	return rt_queue_open_os(q, false);
}

/* ---- logbuf: LOG commands and the FENCE_*_QUEUED events ---- */

/* Seed, "CPU timestamps of fence queued operations": the runtime emits the
 * queued event with a CPU timestamp when it records the operation. */
static void rt_event(struct rt_queue *q, const struct hw_cmd *c, uint64_t entry)
{
	struct rt_fence_event *e = &q->events[q->nevents++ % RT_EVENTS];
	e->kind = c->op == HW_CMD_SIGNAL ? RT_EVENT_FENCE_SIGNAL_QUEUED : RT_EVENT_FENCE_WAIT_QUEUED;
	e->fence = c->fence->handle;
	e->value = c->value;
	e->entry = entry;
	e->cpu_ns = lf_now_ns();
	if (os_tracing(rt_adapter(q->d))) {
		struct os_trace_rec r = {
			.kind = c->op == HW_CMD_SIGNAL ? OS_TRACE_SIGNAL_QUEUED : OS_TRACE_WAIT_QUEUED,
			.engine = q->desc.engine, .tid = gettid(), .queue = hw_queue_handle(os_hwqueue_hw(q->osq)),
			.fence = e->fence, .value = e->value, .t0 = e->cpu_ns, .n = entry,
		};
		os_trace_add(rt_adapter(q->d), &r);
	}
}

/* Append c to ib at k; after a native wait or signal on a user-mode queue
 * also the LOG naming its entry (seed: "Immediately after UMD inserts a
 * native fence wait or signal instruction in the command list, it also
 * inserts a command instructing the GPU to write a payload at a particular
 * entry into the log buffer").  Returns the new length. */
static size_t rt_record(struct rt_queue *q, struct hw_cmd *ib, size_t k, const struct hw_cmd *c)
{
	ib[k++] = *c;
	if (!q->um || (c->op != HW_CMD_SIGNAL && c->op != HW_CMD_WAIT) || !c->fence->native)
		return k;
	enum hw_log_type t = c->op == HW_CMD_SIGNAL ? HW_LOG_SIGNALS : HW_LOG_WAITS;
	uint64_t entry = q->log_next[t]++;
	ib[k++] = (struct hw_cmd){
		.op = HW_CMD_LOG, .fence = c->fence, .value = c->value, .arg = entry,
		.pad = c->op == HW_CMD_SIGNAL ? HW_LOG_OP_SIGNAL_EXECUTED : HW_LOG_OP_WAIT_UNBLOCKED,
	};
	rt_event(q, c, entry);
	return k;
}

/* A buffer going to a kernel-mode queue after all (fallback): no LOGs
 * (kernel-mode queues have no log buffers).  Returns the new length. */
static size_t rt_strip_logs(struct hw_cmd *ib, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (ib[i].op != HW_CMD_LOG)
			ib[k++] = ib[i];
	return k;
}

size_t rt_queue_events(const struct rt_queue *q, struct rt_fence_event *out, size_t max, uint64_t *total)
{
	uint64_t first = q->nevents > RT_EVENTS ? q->nevents - RT_EVENTS : 0;
	size_t n = 0;
	for (uint64_t i = first; i < q->nevents && n < max; i++)
		out[n++] = q->events[i % RT_EVENTS];
	if (total)
		*total = q->nevents;
	return n;
}

static uint64_t rt_status(const struct rt_queue *q)
{
	/* seq_cst: after a ring, ordered after the ring's RMW (see ums.h) */
	return atomic_load_explicit(q->map.status, memory_order_seq_cst);
}

static bool rt_connected(uint64_t s)
{
	return s == OS_DOORBELL_CONNECTED || s == OS_DOORBELL_CONNECTED_NOTIFY;
}

/* D3DKMTConnectDoorbell when the status asks for it; false: fall back. */
static bool rt_connect(struct rt_queue *q, uint64_t *status)
{
	if (rt_connected(*status))
		return true;
	lf_count(&q->connects, 1);
	int rc = os_doorbell_connect(q->osq);
	*status = rt_status(q);
	return !rc && *status != OS_DOORBELL_DISCONNECTED_ABORT;
}

/* Inform the OS of the queued value, then make the buffer visible. */
static void rt_publish_last_queued(struct rt_queue *q, uint64_t v)
{
	/* release: ordered before the push's release of the write pointer */
	atomic_store_explicit(q->map.last_queued, v, memory_order_release);
}

/* Make the command buffer ib[0..n) visible in one publication of the write
 * pointer: its commands inline when it is short, else one INDIRECT entry.
 * The ring never fills: at most nslots buffers are in flight
 * (rt_queue_take_ib), each of at most RT_INLINE_CMDS entries, in a ring of
 * nslots * RT_INLINE_CMDS (rt_queue_open_os) — so a suspended context's
 * queue takes buffers until the flow control says wait, as with one entry
 * each. */
static size_t rt_ring_entries(size_t n)
{
	return n <= RT_INLINE_CMDS ? n : 1;
}

static void rt_push(struct rt_queue *q, const struct hw_cmd *ib, size_t n)
{
	struct hw_cmd entry = { .op = HW_CMD_INDIRECT, .ib = ib, .arg = n };
	size_t k = rt_ring_entries(n);
	const struct hw_cmd *entries = k == n ? ib : &entry;
	while (!lf_ring_push_n_spsc(q->map.ring, entries, k))
		sched_yield();            /* not reached (above); the engine would free room */
	q->wptr += k;
	q->visible = true;
}

static void rt_ring(struct rt_queue *q, uint64_t wptr)
{
	/* the mapping as it is now: a physical doorbell or the dummy page */
	_Atomic uint64_t *reg = atomic_load_explicit(q->map.cpuva, memory_order_acquire);
	hw_doorbell_write(reg, hw_doorbell_ring_value(q->map.value, wptr));
	lf_count(&q->rings, 1);
}

static void rt_window(void)
{
	struct timespec ts = { 0, (long)RT_BROKEN_WINDOW_NS };
	nanosleep(&ts, NULL);
}

/* The seed's submit loop.  Returns the last status read (ABORT: fall back). */
static uint64_t rt_submit_um_loop(struct rt_queue *q, uint64_t v, const struct hw_cmd *ib, size_t n)
{
	uint64_t status = rt_status(q);
	bool always = q->desc.broken == RT_BROKEN_CONNECT_EVERY_SUBMIT;
	for (;;) {
		if (always)
			status = OS_DOORBELL_DISCONNECTED_RETRY;   /* broken on purpose: a kernel call every time */
		if (!rt_connect(q, &status))
			return OS_DOORBELL_DISCONNECTED_ABORT;
		if (rt_test_ring_hook)
			rt_test_ring_hook(q);
		if (!q->visible) {
			rt_publish_last_queued(q, v);
			rt_push(q, ib, n);
		}
		rt_ring(q, q->wptr);
		status = rt_status(q);
		if (status == OS_DOORBELL_CONNECTED_NOTIFY) {
			lf_count(&q->notifies, 1);
			os_notify_work_submission(q->osq);
		}
		if (status != OS_DOORBELL_DISCONNECTED_RETRY)
			return status;
		lf_count(&q->retries, 1);
	}
}

/* The deliberately broken orders (rt.h, enum rt_broken). */
static uint64_t rt_submit_um_broken(struct rt_queue *q, uint64_t v, const struct hw_cmd *ib, size_t n)
{
	uint64_t status = rt_status(q);
	if (!rt_connect(q, &status))
		return OS_DOORBELL_DISCONNECTED_ABORT;
	switch (q->desc.broken) {
	case RT_BROKEN_RING_BEFORE_VISIBLE:
		rt_publish_last_queued(q, v);
		rt_ring(q, q->wptr + rt_ring_entries(n));
		rt_window();
		rt_push(q, ib, n);
		return rt_status(q);
	case RT_BROKEN_NO_STATUS_CHECK:
		if (rt_test_ring_hook)
			rt_test_ring_hook(q);
		rt_publish_last_queued(q, v);
		rt_push(q, ib, n);
		rt_ring(q, q->wptr);
		return OS_DOORBELL_CONNECTED;
	case RT_BROKEN_LAST_QUEUED_LATE:
	default:
		rt_push(q, ib, n);
		rt_ring(q, q->wptr);
		status = rt_status(q);
		rt_window();
		rt_publish_last_queued(q, v);
		return status;
	}
}

static int rt_submit_um(struct rt_queue *q, uint64_t v, const struct hw_cmd *ib, size_t n)
{
	q->visible = false;
	bool broken = q->desc.broken == RT_BROKEN_RING_BEFORE_VISIBLE || q->desc.broken == RT_BROKEN_NO_STATUS_CHECK ||
		      q->desc.broken == RT_BROKEN_LAST_QUEUED_LATE;
	uint64_t status = broken ? rt_submit_um_broken(q, v, ib, n) : rt_submit_um_loop(q, v, ib, n);
	if (status != OS_DOORBELL_DISCONNECTED_ABORT) {
		lf_count(&q->um_submits, 1);
		return 0;
	}
	bool was_visible = q->visible;
	int rc = rt_queue_fallback(q);
	if (rc || was_visible)
		return rc;                    /* visible: the fallback's destroy ran it */
	lf_count(&q->km_submits, 1);
	return os_hwqueue_submit(q->osq, ib, rt_strip_logs((struct hw_cmd *)ib, n), v);
}

/* What a command buffer may hold (rt.h): checked before anything is queued,
 * as the KMD would reject it later (kernel mode) or the engine stop on it. */
static bool rt_cmds_valid(const struct hw_cmd *cmds, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct hw_cmd *c = &cmds[i];
		if (c->op > HW_CMD_STAMP)
			return false;
		if ((c->op == HW_CMD_SIGNAL || c->op == HW_CMD_WAIT) && !c->fence)
			return false;
		if ((c->op == HW_CMD_STAMP || c->op == HW_CMD_COUNT) && !c->stamp)
			return false;
	}
	return true;
}

/* Seed native-gpu-fence, "Cross-adapter native fences": "user-mode queues
 * can't support monitored fences".  A user-mode queue's SIGNAL or WAIT of a
 * monitored (legacy) fence is refused, the signal as well as the wait: no
 * OS sees a user-mode ring to hold a wait or to interrupt for a signal. */
static bool rt_cmds_um_native(const struct hw_cmd *cmds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((cmds[i].op == HW_CMD_SIGNAL || cmds[i].op == HW_CMD_WAIT) && !cmds[i].fence->native)
			return false;
	return true;
}

/* Hand the filled command buffer for progress value v to the queue. */
static int rt_queue_hand(struct rt_queue *q, uint64_t v, struct hw_cmd *ib, size_t n)
{
	if (q->um)
		return rt_submit_um(q, v, ib, n);
	lf_count(&q->km_submits, 1);
	return os_hwqueue_submit(q->osq, ib, n, v);
}

/* The timeline trace (os.h): this thread submitted buffer v of k commands from t0 until now. */
static void rt_queue_trace_submit(struct rt_queue *q, uint64_t v, size_t k, uint64_t t0)
{
	struct os_trace_rec r = {
		.kind = OS_TRACE_SUBMIT, .engine = q->desc.engine, .tid = gettid(), .queue = rt_queue_trace_handle(q),
		.value = v, .t0 = t0, .t1 = lf_now_ns(), .n = k,
	};
	os_trace_add(rt_adapter(q->d), &r);
}

int rt_queue_submit(struct rt_queue *q, const struct hw_cmd *cmds, size_t n, uint64_t *value)
{
	if (n > RT_MAX_CMDS || !rt_cmds_valid(cmds, n))
		return -EINVAL;
	if (q->um && !rt_cmds_um_native(cmds, n))
		return -EINVAL;
	if (rt_device_terminated(q->d))
		return -EIO;
	uint64_t t0 = os_tracing(rt_adapter(q->d)) ? lf_now_ns() : 0;
	uint64_t v = atomic_load_explicit(&q->next, memory_order_relaxed) + 1;
	struct hw_cmd *ib;
	int rc = rt_queue_take_ib(q, v, &ib);
	if (rc)
		return rc;
	/* Fill out the command buffer; its last instruction writes N+1. */
	uint64_t log_next[HW_LOG_TYPES], nevents = q->nevents;
	memcpy(log_next, q->log_next, sizeof(log_next));
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k = rt_record(q, ib, k, &cmds[i]);
	struct hw_cmd progress = { .op = HW_CMD_SIGNAL, .fence = os_fence_hw(q->progress->f), .value = v };
	k = rt_record(q, ib, k, &progress);
	ib[k - 1].pad |= HW_CMD_END_OF_BUFFER;   /* the DMA buffer ends here (preemption boundaries) */
	rc = rt_queue_hand(q, v, ib, k);
	if (rc) {
		/* nothing queued: v, the log entries and the queued events are handed out again next time */
		memcpy(q->log_next, log_next, sizeof(log_next));
		q->nevents = nevents;
		return rc;
	}
	/* release: a reader of the submitted value sees a queued buffer behind it */
	atomic_store_explicit(&q->next, v, memory_order_release);
	lf_count(&q->submits, 1);
	if (t0)
		rt_queue_trace_submit(q, v, k, t0);
	if (value)
		*value = v;
	return 0;
}

int rt_queue_signal(struct rt_queue *q, struct rt_fence *f, uint64_t v)
{
	if (rt_fence_destroyed(f))
		return -EIDRM;
	struct hw_cmd c = rt_cmd_signal(f, v);
	return rt_queue_submit(q, &c, 1, NULL);
}

int rt_queue_wait_gpu(struct rt_queue *q, struct rt_fence *f, uint64_t v)
{
	if (rt_fence_destroyed(f))
		return -EIDRM;
	if (q->um && !os_fence_is_native(f->f))
		return -EINVAL;           /* nobody would hold it on the CPU */
	struct hw_cmd c = rt_cmd_wait(f, v);
	return rt_queue_submit(q, &c, 1, NULL);
}

int rt_queue_wait(struct rt_queue *q, uint64_t v, int64_t timeout_ns)
{
	return rt_fence_wait(q->progress, v ? v : rt_queue_submitted(q), timeout_ns);
}

uint64_t rt_queue_completed(struct rt_queue *q)
{
	return rt_fence_completed(q->progress);
}

uint64_t rt_queue_trace_handle(struct rt_queue *q)
{
	return hw_queue_handle(os_hwqueue_hw(q->osq));
}

uint64_t rt_queue_submitted(const struct rt_queue *q)
{
	return atomic_load_explicit(&q->next, memory_order_acquire);
}

bool rt_queue_user_mode(const struct rt_queue *q)
{
	return q->um;
}

struct os_hwqueue *rt_queue_os(struct rt_queue *q)
{
	return q->osq;
}

struct os_context *rt_queue_context(struct rt_queue *q)
{
	return q->ctx;
}

#define RT_LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)

void rt_queue_stats(const struct rt_queue *q, struct rt_queue_stats *o)
{
	o->submits = RT_LOAD(q->submits);
	o->um_submits = RT_LOAD(q->um_submits);
	o->km_submits = RT_LOAD(q->km_submits);
	o->rings = RT_LOAD(q->rings);
	o->retries = RT_LOAD(q->retries);
	o->connects = RT_LOAD(q->connects);
	o->notifies = RT_LOAD(q->notifies);
	o->fallbacks = RT_LOAD(q->fallbacks);
	o->full_waits = RT_LOAD(q->full_waits);
}
