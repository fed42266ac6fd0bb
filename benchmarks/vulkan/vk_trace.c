/* benchmarks/vulkan/vk_trace.c — `--trace` on the Vulkan backend: what the
 * backend records while tracing, and its copy into the harness's timeline
 * (src/fb_trace.h), in the model's layout (benchmarks/trace_rig.h):
 *
 *   "<label>: queues"       one track per logical queue, named after it: each
 *                           list's work as a span named after the list, from
 *                           GPU timestamps (one before a batch's lists, one
 *                           after each: vk_spin.c), args.source "GPU timestamps"
 *   "<label>: CPU threads"  "app (tid N)": the application thread's CPU waits
 *                           ("CPU wait", args fence and value);
 *                           "vk-sched (tid N): <queue>" (legacy): each Wait the
 *                           scheduler thread held, "Wait (held on the CPU)",
 *                           from when the Wait kept the queue's later work
 *                           back to when that work went out (a track per
 *                           queue: holds of two queues overlap, and a
 *                           timeline's spans on one track must nest)
 *
 * GPU times become host times (CLOCK_MONOTONIC, lf_now_ns) from a base
 * tick and its host time.  With VK_EXT_calibrated_timestamps (device and
 * CLOCK_MONOTONIC domains: NVIDIA offers it) that pair is read at once by
 * vkGetCalibratedTimestampsEXT, within its maxDeviation: exact enough to
 * subtract a GPU time from a host time (bm_vkg_clock_calibrated).  Without
 * it, from the spin shader's calibration dispatches: each one's first
 * timestamp is written after the host's submit and its last before the
 * host sees it complete, so the base's host time lies in the tightest
 * [host0 - gpu0, host1 - gpu1] over every dispatch; its middle is used and
 * the trace's clock note says every span's edges carry half its width
 * (which holds the submit-to-start and end-to-wake latencies: no GPU-to-
 * host latency can be told from it).  Ticks are converted as integer
 * differences from the base (absolute ticks exceed a double's 53 bits).
 * One device clock for every queue (the device time domain is the
 * device's).  Device timestamps of fewer than 64 valid bits are taken as
 * they are (a wrap within the run would misplace spans).
 *
 * A list's span starts where the queue's previous one ended at the latest:
 * a batch's first timestamp is written at the top of the pipe, which a
 * device may reach before the earlier batch's work ended (its dispatches
 * still wait for that work); the copy counts such clamps.
 *
 * Locking as vk_graph_internal.h: the records and names under g->lock. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchmarks/vulkan/vk_graph_internal.h"
#include "lockfree/arch.h"
#include "src/fb_trace.h"

uint8_t vkg_name_locked(struct vkg *g, const char *name)
{
	for (size_t i = 0; i < g->nnames; i++)
		if (!strncmp(g->names[i], name, VKG_NAME_LEN))
			return (uint8_t)i;
	if (!g->names && !(g->names = calloc(VKG_NAMES, sizeof(*g->names))))
		return VKG_NAME_OTHER;
	if (g->nnames == VKG_NAMES || strlen(name) >= VKG_NAME_LEN)
		return VKG_NAME_OTHER;          /* never another list's name */
	snprintf(g->names[g->nnames], VKG_NAME_LEN, "%s", name);
	return (uint8_t)g->nnames++;
}

const char *vkg_name_text(const struct vkg *g, uint8_t i)
{
	return i < g->nnames ? g->names[i] : VKG_NAME_OTHER_TEXT;
}

static size_t vkg_trace_cap(const struct vkg *g)
{
	return g->tev_max ? g->tev_max : VKG_TRACE_MAX;
}

size_t bm_vkg_trace_cap(void *be)
{
	return vkg_trace_cap(be);
}

void vkg_trace_add_locked(struct vkg *g, const struct vkg_tev *e)
{
	if (g->ntev == g->captev) {
		size_t cap = g->captev ? 2 * g->captev : 1024;
		size_t max = vkg_trace_cap(g);
		cap = cap < max ? cap : max;
		struct vkg_tev *n = g->ntev < max ? realloc(g->tev, cap * sizeof(*n)) : NULL;
		if (!n) {
			g->tev_dropped++;
			return;
		}
		g->tev = n;
		g->captev = cap;
	}
	g->tev[g->ntev++] = *e;
}

/* ns from the clock's base tick to ticks: the difference taken in integers
 * first (absolute ticks near 2^60 are beyond a double's 53 bits). */
static int64_t vkg_ticks_ns(const struct vkg *g, uint64_t ticks)
{
	return (int64_t)llround((double)(int64_t)(ticks - g->clock_tick0) * g->ts_period_ns);
}

void vkg_clock_sample(struct vkg *g, uint64_t host0, uint64_t host1, uint64_t tick0, uint64_t tick1)
{
	if (!g->clock_known)
		g->clock_tick0 = tick0;         /* the base: ticks are converted as differences from it */
	int64_t lo = (int64_t)host0 - vkg_ticks_ns(g, tick0), hi = (int64_t)host1 - vkg_ticks_ns(g, tick1);
	if (!g->clock_known || lo > g->clock_lo)
		g->clock_lo = lo;
	if (!g->clock_known || hi < g->clock_hi)
		g->clock_hi = hi;
	g->clock_known = true;
}

bool bm_vkg_clock_calibrated(void *be, uint64_t *dev_ns)
{
	const struct vkg *g = be;
	*dev_ns = g->clock_dev_ns;
	return g->clock_calibrated;
}

int vkg_clock_calibrate(struct vkg *g)
{
	if (!g->vk.fn.vkGetCalibratedTimestampsEXT)
		return -ENOTSUP;
	const VkCalibratedTimestampInfoEXT info[2] = {
		{ .sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, .timeDomain = VK_TIME_DOMAIN_DEVICE_EXT },
		{ .sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, .timeDomain = VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT },
	};
	uint64_t ts[2], dev = 0;
	if (g->vk.fn.vkGetCalibratedTimestampsEXT(g->d, 2, info, ts, &dev) != VK_SUCCESS)
		return -EIO;
	g->clock_tick0 = ts[0];
	g->clock_lo = g->clock_hi = (int64_t)ts[1];
	g->clock_dev_ns = dev;
	g->clock_known = g->clock_calibrated = true;
	return 0;
}

void vkg_trace_work_locked(struct vkg *g, struct bm_queue *q, size_t i, const uint64_t *ts)
{
	size_t nl = q->cb_nl[i];
	if (g->trace_broken == BM_VKG_TRACE_BROKEN_SPAN_PER_BATCH && nl) {   /* the lists' bounds lost */
		vkg_trace_add_locked(g, &(struct vkg_tev){ .kind = VKG_T_WORK, .name = q->cb_lname[i][0], .q = q->slot,
							   .t0 = ts[0], .t1 = ts[nl] });
		return;
	}
	for (size_t j = 0; j < nl; j++)
		vkg_trace_add_locked(g, &(struct vkg_tev){ .kind = VKG_T_WORK, .name = q->cb_lname[i][j], .q = q->slot,
							   .t0 = ts[j], .t1 = ts[j + 1] });
}

int vkg_trace_start(void *be, int broken)
{
	struct vkg *g = be;
	pthread_mutex_lock(&g->lock);
	for (size_t i = 0; i < g->nq; i++)   /* work completed before now stays off the timeline */
		if (g->q[i]->qp)
			vkg_busy_locked(g, g->q[i]);
	g->ntev = 0;
	g->tev_dropped = 0;
	g->trace_broken = broken;
	g->app_tid = gettid();
	g->tracing = true;
	pthread_mutex_unlock(&g->lock);
	return 0;
}

void vkg_trace_cpu_wait(void *be, struct bm_fence *f, uint64_t v, uint64_t t0, uint64_t t1)
{
	struct vkg *g = be;
	pthread_mutex_lock(&g->lock);
	if (g->tracing)
		vkg_trace_add_locked(g, &(struct vkg_tev){ .kind = VKG_T_CPU_WAIT, .f = f, .v = v, .t0 = t0,
							   .t1 = t1 > t0 ? t1 : t0 });
	pthread_mutex_unlock(&g->lock);
}

/* Whether q's GPU times are on the host clock: calibrated timestamps are
 * the device's time domain, every queue's; the dispatches' bound was
 * measured on device queue 0 only (timestamps of two queues need not be
 * comparable), so a queue on another device queue has none. */
static bool vkg_clocked(const struct vkg *g, const struct bm_queue *q)
{
	return g->clock_known && (g->clock_calibrated || g->queue[q->phys] == g->queue[0]);
}

uint64_t vkg_host_ns(const struct vkg *g, uint64_t ticks)
{
	return (uint64_t)(g->clock_lo + (g->clock_hi - g->clock_lo) / 2 + vkg_ticks_ns(g, ticks));
}

static json_t *vkg_fence_args(const struct vkg_tev *e)
{
	return e->f ? json_pack("{sIsI}", "fence", (json_int_t)e->f->id, "value", (json_int_t)e->v) : NULL;
}

static int vkg_tev_by_start(const void *pa, const void *pb)
{
	const struct vkg_tev *a = pa, *b = pb;
	if (a->t0 != b->t0)
		return a->t0 < b->t0 ? -1 : 1;
	return a->t1 < b->t1 ? -1 : a->t1 > b->t1;
}

/* q's work records, in GPU time order, into w (room for g->ntev): how many.
 * g->lock held. */
static size_t vkg_work_of_locked(struct vkg *g, const struct bm_queue *q, struct vkg_tev *w)
{
	size_t n = 0;
	for (size_t i = 0; i < g->ntev; i++)
		if (g->tev[i].kind == VKG_T_WORK && g->tev[i].q == q->slot)
			w[n++] = g->tev[i];
	qsort(w, n, sizeof(*w), vkg_tev_by_start);
	return n;
}

int vkg_work_spans(void *be, struct bm_queue *q, uint64_t *t0, uint64_t *t1, size_t max, size_t *n)
{
	struct vkg *g = be;
	*n = 0;
	if (!q->qp || !vkg_clocked(g, q))
		return -ENOTSUP;                /* no timestamps, or none on the host clock */
	pthread_mutex_lock(&g->lock);
	vkg_busy_locked(g, q);
	struct vkg_tev *w = malloc((g->ntev ? g->ntev : 1) * sizeof(*w));
	if (!w) {
		pthread_mutex_unlock(&g->lock);
		return -ENOMEM;
	}
	size_t k = vkg_work_of_locked(g, q, w);
	for (size_t i = 0; i < k && i < max; i++) {
		t0[i] = vkg_host_ns(g, w[i].t0);
		t1[i] = vkg_host_ns(g, w[i].t1);
	}
	*n = k < max ? k : max;
	bool dropped = g->tev_dropped > 0;
	free(w);
	pthread_mutex_unlock(&g->lock);
	return dropped ? -ENOBUFS : 0;      /* some lists' records were never kept */
}

/* The queues' work spans, track by track in GPU time order (they are
 * recorded as command buffers are recycled, not in order), each from the
 * last one's end at the earliest. */
static void vkg_copy_work(struct vkg *g, struct fb_trace *t, const char *label, struct bm_trace_counts *c)
{
	char group[96];
	snprintf(group, sizeof(group), "%s: queues", label);
	struct vkg_tev *w = malloc((g->ntev ? g->ntev : 1) * sizeof(*w));
	if (!w)
		abort();                        /* as the trace's own allocations (fb_trace.h) */
	for (size_t qi = 0; qi < g->nq; qi++) {
		if (!vkg_clocked(g, g->q[qi])) {
			c->unclocked += g->q[qi]->qp != VK_NULL_HANDLE;
			continue;
		}
		size_t n = vkg_work_of_locked(g, g->q[qi], w);
		unsigned track = n ? fb_trace_track(t, group, g->q[qi]->name) : 0;
		uint64_t last = 0;
		for (size_t i = 0; i < n; i++) {
			uint64_t t0 = vkg_host_ns(g, w[i].t0), t1 = vkg_host_ns(g, w[i].t1);
			if (t0 < last) {
				c->clamped++;
				t0 = last;
			}
			t1 = t1 > t0 ? t1 : t0;
			fb_trace_span(t, track, vkg_name_text(g, w[i].name), "gpu", t0, t1 - t0,
				      json_pack("{ss}", "source", "GPU timestamps"));
			last = t1;
			c->work++;
		}
	}
	free(w);
}

/* The application's CPU waits and the scheduler's holds. */
static void vkg_copy_cpu(struct vkg *g, struct fb_trace *t, const char *label, struct bm_trace_counts *c)
{
	char group[96], name[96];
	snprintf(group, sizeof(group), "%s: CPU threads", label);
	snprintf(name, sizeof(name), "app (tid %d)", (int)g->app_tid);
	for (size_t i = 0; i < g->ntev; i++) {
		const struct vkg_tev *e = &g->tev[i];
		if (e->kind == VKG_T_CPU_WAIT) {
			fb_trace_span(t, fb_trace_track(t, group, name), "CPU wait", "cpu", e->t0, e->t1 - e->t0,
				      vkg_fence_args(e));
			c->cpu_waits++;
		} else if (e->kind == VKG_T_HOLD) {
			char sched[96];
			snprintf(sched, sizeof(sched), "vk-sched (tid %d): %s", (int)g->sched_tid, g->q[e->q]->name);
			fb_trace_span(t, fb_trace_track(t, group, sched), "Wait (held on the CPU)", "os", e->t0,
				      e->t1 - e->t0, vkg_fence_args(e));
			c->holds++;
		}
	}
}

int vkg_trace_copy(void *be, struct fb_trace *t, const char *label, struct bm_trace_counts *c)
{
	struct vkg *g = be;
	memset(c, 0, sizeof(*c));
	pthread_mutex_lock(&g->lock);
	for (size_t i = 0; i < g->nq; i++)   /* every completed batch's timestamps read */
		if (g->q[i]->qp)
			vkg_busy_locked(g, g->q[i]);
	vkg_copy_work(g, t, label, c);
	vkg_copy_cpu(g, t, label, c);
	c->dropped = g->tev_dropped;
	c->cap = vkg_trace_cap(g);
	if (g->clock_calibrated)
		snprintf(c->clock, sizeof(c->clock), "GPU timestamps to the host clock by calibrated timestamps "
			 "(VK_EXT_calibrated_timestamps, CLOCK_MONOTONIC) within +-%llu ns",
			 (unsigned long long)g->clock_dev_ns);
	else if (g->clock_known)
		snprintf(c->clock, sizeof(c->clock), "GPU timestamps to the host clock by host reads around "
			 "start-up dispatches (no calibrated timestamps): span edges carry the offset's uncertainty, "
			 "+-%lld ns",
			 (long long)((g->clock_hi - g->clock_lo) / 2));
	else
		snprintf(c->clock, sizeof(c->clock), "no GPU timestamps on the device's queue: no work spans");
	g->tracing = false;
	g->ntev = 0;
	pthread_mutex_unlock(&g->lock);
	return 0;
}
