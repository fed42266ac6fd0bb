/* benchmarks/vulkan/vk_sched.c — the legacy strategy's scheduler thread:
 * what the OS does for a monitored fence (DESIGN.md, "The two fence
 * paths").  It owns every held queue's FIFO (a queue becomes held at its
 * Wait and stays held until its FIFO empties), submits what follows a Wait
 * once the value arrived, and waits on the CPU for every GPU Signal the
 * queues submitted (the interrupt the monitored fence raises on each
 * signal).  It sleeps in vkWaitSemaphores (WAIT_ANY) on the outstanding
 * Signals and on the held Waits a submitted Signal will satisfy, in slices
 * of VKG_SCHED_SLICE_NS; with nothing of the GPU's to wait for, on a
 * condition variable the application signals when it hands work over
 * (vkg_sched_kick_locked).  A Wait only the CPU can satisfy (no Signal of its
 * value submitted) is never in a vkWaitSemaphores set: the CPU's Signal
 * (vkSignalSemaphore) then never meets another thread blocked on the same
 * semaphore, which the Khronos validation layer (1.3.239) turns into a
 * 10-second stall; the Signal kicks the thread instead.  Contract in
 * vk_graph_internal.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "benchmarks/vulkan/vk_graph_internal.h"
#include "lockfree/arch.h"

#define VKG_SCHED_SLICE_NS 20000000ull  /* a bounded sleep on the GPU: it looks again at least this often */
#define VKG_SCHED_IDLE_NS 100000000ull  /* ... and with nothing of the GPU's to wait for */
#define VKG_SCHED_SET (VKG_QUEUES + 64)

int vkg_outstanding_add_locked(struct vkg *g, struct bm_fence *f, uint64_t v)
{
	if (g->nout == g->capout) {
		size_t cap = g->capout ? 2 * g->capout : 64;
		struct vkg_wait *n = realloc(g->outstanding, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		g->outstanding = n;
		g->capout = cap;
	}
	g->outstanding[g->nout++] = (struct vkg_wait){ f, v };
	return 0;
}

/* Called by the application under g->lock after it handed work over (a
 * queue became held, a Signal went out, the CPU signaled a fence) or wants
 * the thread to stop: wake it if it sleeps on its condition variable (asleep
 * on the GPU it wakes at the next completion or slice, and looks again). */
void vkg_sched_kick_locked(struct vkg *g, bool gpu_item)
{
	(void)gpu_item;
	if (g->sched_started && g->sched_sleeping && !g->sched_gpu)
		pthread_cond_signal(&g->cond);
}

/* Submit what every held queue may now submit; a queue whose FIFO emptied is
 * the application's again. */
static void vkg_sched_pump_locked(struct vkg *g)
{
	for (size_t i = 0; i < g->nq; i++) {
		struct bm_queue *q = g->q[i];
		if (!q->held)
			continue;
		vkg_pump_locked(g, q);
		if (!q->head)
			q->held = false;
	}
}

/* Forget the Signals whose values arrived: each is one "interrupt" seen. */
static void vkg_sched_retire_locked(struct vkg *g)
{
	size_t k = 0;
	for (size_t i = 0; i < g->nout; i++) {
		if (vkg_value(g, g->outstanding[i].f) >= g->outstanding[i].v)
			g->signals_seen++;
		else
			g->outstanding[k++] = g->outstanding[i];
	}
	g->nout = k;
}

/* Add (f, v) to the set, one entry per semaphore with its lowest value. */
static void vkg_set_add(VkSemaphore *sems, uint64_t *vals, size_t *n, VkSemaphore s, uint64_t v)
{
	for (size_t i = 0; i < *n; i++)
		if (sems[i] == s) {
			if (v < vals[i])
				vals[i] = v;
			return;
		}
	if (*n < VKG_SCHED_SET) {
		sems[*n] = s;
		vals[(*n)++] = v;
	}
}

/* What the scheduler sleeps on: the outstanding Signals, and the held Waits
 * a submitted Signal will satisfy (not those only the CPU can). */
static size_t vkg_sched_set_locked(struct vkg *g, VkSemaphore *sems, uint64_t *vals)
{
	size_t n = 0;
	if (g->nphys == 1 && g->nout) {
		/* One device queue completes its Signals in submission order: the
		 * oldest outstanding one comes first, and a held Wait's value comes
		 * with one of them.  One semaphore, no WAIT_ANY (which Mesa's
		 * lavapipe serves by spinning on the CPU). */
		sems[0] = g->outstanding[0].f->sem;
		vals[0] = g->outstanding[0].v;
		g->sched_gpu = true;
		return 1;
	}
	for (size_t i = 0; i < g->nq; i++) {
		struct vkg_op *o = g->q[i]->held ? g->q[i]->head : NULL;
		if (o && o->kind == VKG_WAIT && o->f->submitted >= o->v)
			vkg_set_add(sems, vals, &n, o->f->sem, o->v);
	}
	for (size_t i = 0; i < g->nout; i++)
		vkg_set_add(sems, vals, &n, g->outstanding[i].f->sem, g->outstanding[i].v);
	g->sched_gpu = n > 0;
	return n;
}

/* Sleep until the GPU reaches one of the set (or a slice passed), or, with
 * nothing of the GPU's to wait for, until kicked.  g->lock held; released
 * while asleep. */
static void vkg_sched_sleep_locked(struct vkg *g, VkSemaphore *sems, uint64_t *vals, size_t n)
{
	g->sched_sleeping = true;
	if (!n) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + VKG_SCHED_IDLE_NS;
		ts.tv_sec = (time_t)(t / 1000000000ull);
		ts.tv_nsec = (long)(t % 1000000000ull);
		pthread_cond_timedwait(&g->cond, &g->lock, &ts);
	} else {
		pthread_mutex_unlock(&g->lock);
		VkSemaphoreWaitInfo wi = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
					   .flags = VK_SEMAPHORE_WAIT_ANY_BIT, .semaphoreCount = (uint32_t)n,
					   .pSemaphores = sems, .pValues = vals };
		g->vk.fn.vkWaitSemaphores(g->d, &wi, VKG_SCHED_SLICE_NS);   /* a timeout just looks again */
		pthread_mutex_lock(&g->lock);
	}
	g->sched_sleeping = false;
	g->sched_wakeups++;
}

static void *vkg_sched_main(void *arg)
{
	struct vkg *g = arg;
	VkSemaphore sems[VKG_SCHED_SET];
	uint64_t vals[VKG_SCHED_SET];
	pthread_mutex_lock(&g->lock);
	g->sched_tid = gettid();
	while (!g->stop) {
		vkg_sched_pump_locked(g);
		vkg_sched_retire_locked(g);
		size_t n = vkg_sched_set_locked(g, sems, vals);
		if (!g->stop)
			vkg_sched_sleep_locked(g, sems, vals, n);
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

int vkg_sched_start(struct vkg *g)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	int rc = -pthread_cond_init(&g->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (!rc)
		rc = -pthread_create(&g->sched, NULL, vkg_sched_main, g);
	if (rc)
		return rc;
	g->sched_started = true;
	for (int k = 0; k < 10000; k++) {    /* its id and clock, for the harness and the report */
		pthread_mutex_lock(&g->lock);
		pid_t tid = g->sched_tid;
		pthread_mutex_unlock(&g->lock);
		if (tid)
			break;
		lf_sleep_until(lf_now_ns() + 100000);
	}
	if (pthread_getcpuclockid(g->sched, &g->sched_clock))
		g->sched_clock = (clockid_t)-1;
	return 0;
}

void vkg_sched_stop(struct vkg *g)
{
	if (!g->sched_started)
		return;
	pthread_mutex_lock(&g->lock);
	g->stop = true;
	vkg_sched_kick_locked(g, false);     /* asleep on the GPU: back within a slice */
	pthread_mutex_unlock(&g->lock);
	pthread_join(g->sched, NULL);
	pthread_cond_destroy(&g->cond);
	g->sched_started = false;
}
