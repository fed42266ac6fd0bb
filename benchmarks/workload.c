/* benchmarks/workload.c — the seed's multi-engine workloads over the D3D12
 * runtime, and their report.  Contract in workload.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "benchmarks/vulkan/vk_graph.h"
#include "benchmarks/workload.h"
#include "lockfree/arch.h"
#include "src/fb_scenario.h"

/* ---- the backend and its queues ---- */

int bm_wl_up(struct bm_wl *w, enum rt_path path, bool user_mode, bool validate, char *err, size_t errlen)
{
	return bm_wl_up_profiled(w, path, user_mode, validate, NULL, err, errlen);
}

int bm_wl_up_profiled(struct bm_wl *w, enum rt_path path, bool user_mode, bool validate,
		      const struct rt_profile *profile, char *err, size_t errlen)
{
	struct bm_wl_config c = { .backend = BM_BACKEND_MODEL, .path = path, .user_mode = user_mode,
				  .validate = validate, .profile = profile };
	return bm_wl_up_config(w, &c, err, errlen);
}

int bm_wl_up_config(struct bm_wl *w, const struct bm_wl_config *cfg, char *err, size_t errlen)
{
	memset(w, 0, sizeof(*w));
	w->stall_ns = cfg->stall_ns;
	int rc = cfg->backend == BM_BACKEND_VULKAN ? bm_vkg_up(w, cfg, err, errlen) : bm_model_up(w, cfg, err, errlen);
	if (rc)
		return rc;
	rc = bm_queue_create(w, RT_LIST_DIRECT, "direct0", &w->direct);
	if (!rc)
		rc = bm_queue_create(w, RT_LIST_COMPUTE, "compute0", &w->compute);
	if (!rc)
		rc = bm_queue_create(w, RT_LIST_COPY, "copy0", &w->copy);
	if (!rc)
		rc = bm_event_create(w, false, false, &w->ev);
	if (rc) {
		snprintf(err, errlen, "creating the queues: %s", strerror(-rc));
		bm_wl_down(w);
		return rc;
	}
	if (w->kind == BM_BACKEND_MODEL)
		w->user_mode = rt_cqueue_user_mode(bm_model_queue(w->direct));
	bm_wl_watch_queue(w, w->direct);
	bm_wl_watch_queue(w, w->compute);
	bm_wl_watch_queue(w, w->copy);
	return 0;
}

/* ---- the no-progress watchdog ---- */

#define BM_WL_SLICE_NS 20000000ll       /* a watched wait looks at the queues' progress this often */

int bm_wl_watch_queue(struct bm_wl *w, struct bm_queue *q)
{
	if (w->nqueues == BM_WL_QUEUES)
		return -ENOSPC;
	w->queues[w->nqueues++] = q;
	return 0;
}

int bm_wl_name_fence(struct bm_wl *w, struct bm_fence *f, const char *name)
{
	if (w->nfences == BM_WL_FENCES)
		return -ENOSPC;
	w->fence[w->nfences] = f;
	snprintf(w->fence_name[w->nfences++], sizeof(w->fence_name[0]), "%s", name);
	return 0;
}

const char *bm_wl_stall(const struct bm_wl *w)
{
	return w->stall;
}

/* 'copyFence' >= 101 (now 100) */
static size_t bm_wl_fence_text(struct bm_wl *w, struct bm_fence *f, uint64_t v, char *out, size_t len)
{
	const char *name = NULL;
	for (size_t i = 0; i < w->nfences && !name; i++)
		if (w->fence[i] == f)
			name = w->fence_name[i];
	uint64_t now = bm_fence_value(w, f);
	if (name)
		return (size_t)snprintf(out, len, "'%s' >= %llu (now %llu)", name, (unsigned long long)v,
					(unsigned long long)now);
	return (size_t)snprintf(out, len, "an unnamed fence >= %llu (now %llu)", (unsigned long long)v,
				(unsigned long long)now);
}

/* Every watched queue's completed work, summed: what "progress" means here. */
static uint64_t bm_wl_progress(struct bm_wl *w)
{
	uint64_t p = 0;
	for (size_t i = 0; i < w->nqueues; i++)
		p += w->ops->queue_progress(w->be, w->queues[i]);
	return p;
}

/* The one line of a stall: what the CPU waits for (f >= v; f NULL: cpu says
 * it), then each stuck queue's wait. */
static void bm_wl_explain(struct bm_wl *w, struct bm_fence *f, uint64_t v, const char *cpu)
{
	char *m = w->stall;
	size_t len = sizeof(w->stall), k;
	int64_t ns = w->stall_ns ? w->stall_ns : BM_WL_STALL_NS;
	k = (size_t)snprintf(m, len, "no progress for %.1f s: the CPU waits for ", (double)ns / 1e9);
	if (f)
		k += bm_wl_fence_text(w, f, v, m + k, k < len ? len - k : 0);
	else
		k += (size_t)snprintf(m + k, k < len ? len - k : 0, "%s", cpu);
	for (size_t i = 0; i < w->nqueues && k < len; i++) {
		struct bm_fence *qf;
		uint64_t qv;
		if (!w->ops->blocked_wait(w->be, w->queues[i], &qf, &qv))
			continue;
		k += (size_t)snprintf(m + k, len - k, "; queue '%s' waits for ", bm_queue_name(w, w->queues[i]));
		k += bm_wl_fence_text(w, qf, qv, m + k, k < len ? len - k : 0);
	}
}

/* wait(ctx, slice) until it returns other than -ETIMEDOUT, or until no
 * watched queue completed anything for stall_ns: then -ETIMEDOUT and the
 * stall explained (f >= v, or cpu). */
static int bm_wl_watched(struct bm_wl *w, int (*wait)(struct bm_wl *w, void *ctx, int64_t ns), void *ctx, struct bm_fence *f,
			 uint64_t v, const char *cpu)
{
	int64_t stall = w->stall_ns ? w->stall_ns : BM_WL_STALL_NS;
	uint64_t p = bm_wl_progress(w), since = lf_now_ns();
	for (;;) {
		int rc = wait(w, ctx, stall < BM_WL_SLICE_NS ? stall : BM_WL_SLICE_NS);
		if (rc != -ETIMEDOUT)
			return rc;
		uint64_t now = lf_now_ns(), q = bm_wl_progress(w);
		if (q != p) {
			p = q;
			since = now;
		} else if (now - since >= (uint64_t)stall) {
			bm_wl_explain(w, f, v, cpu);
			return -ETIMEDOUT;
		}
	}
}

static int bm_wl_event_wait(struct bm_wl *w, void *ev, int64_t ns)
{
	struct bm_event *e = ev;
	return w->ops->event_wait_any(w->be, &e, 1, ns);
}

/* After a stall: release every stuck queue's wait (a CPU signal of the
 * value it waits for) until none is left, so that the stack drains. */
static void bm_wl_release(struct bm_wl *w)
{
	for (int round = 0; round < 1000; round++) {
		bool stuck = false;
		for (size_t i = 0; i < w->nqueues; i++) {
			struct bm_fence *f;
			uint64_t v;
			if (w->ops->blocked_wait(w->be, w->queues[i], &f, &v)) {
				stuck = true;
				bm_fence_signal(w, f, v);
			}
		}
		if (!stuck)
			return;
		lf_sleep_until(lf_now_ns() + 1000000);
	}
}

int bm_wl_down(struct bm_wl *w)
{
	if (!w->ops)
		return 0;                    /* never came up */
	if (w->stall[0])
		bm_wl_release(w);
	int rc = w->ops->down(w->be);
	const struct bm_backend_ops *ops = w->ops;
	enum bm_backend_kind kind = w->kind;
	memset(w, 0, sizeof(*w));
	w->ops = ops;                        /* the caller's destroys after this: the model's frees, a no-op elsewhere */
	w->kind = kind;
	return rc;
}

int bm_wl_cpu_wait(struct bm_wl *w, struct bm_fence *f, uint64_t v)
{
	uint64_t t0 = lf_now_ns();
	int rc = bm_set_event(w, f, v, w->ev);
	if (!rc)
		rc = bm_wl_watched(w, bm_wl_event_wait, w->ev, f, v, NULL);
	uint64_t t1 = lf_now_ns();
	w->woke_ns = t1;                    /* before the trace's work, which takes the backend's lock */
	if (w->kind == BM_BACKEND_MODEL)
		rt_fence_trace_wait(bm_model_fence(f), v, t0, rc);   /* the timeline's CPU wait (when tracing) */
	else if (w->trace_waits && w->ops->trace_cpu_wait)
		w->ops->trace_cpu_wait(w->be, f, v, t0, t1);
	w->cpu_wait_ns += t1 - t0;
	w->cpu_waits++;
	if (!rc && w->debug)
		rt_debug_cpu_waited(w->debug, bm_model_fence(f), v);
	return rc;
}

int bm_wl_list(struct bm_wl *w, enum rt_list_type t, enum rt_op op, uint64_t ns, unsigned units, struct bm_list **out)
{
	int rc = bm_list_create(w, t, NULL, out);
	if (rc)
		return rc;
	rc = bm_list_record(w, *out, op, ns, units);
	if (!rc)
		rc = bm_list_close(w, *out);
	if (rc) {
		bm_list_destroy(w, *out);
		*out = NULL;
	}
	return rc;
}

/* ---- counters and the report ---- */

void bm_wl_snap(struct bm_wl *w, struct bm_wl_snap *o)
{
	struct bm_be_counters c;
	memset(&c, 0, sizeof(c));
	w->ops->snap(w->be, &c);
	o->t_ns = lf_now_ns();
	o->interrupts = c.interrupts;
	o->gpu_signals = c.gpu_signals;
	o->lost_wakeups = c.lost_wakeups;
	o->held_waits = c.held_waits;
	o->host = c.host;
	memcpy(o->busy_ns, c.busy_ns, sizeof(o->busy_ns));
	o->cpu_wait_ns = w->cpu_wait_ns;
	o->cpu_waits = w->cpu_waits;
	o->validation_errors = c.validation_errors;
	o->has_interrupts = c.has_interrupts;
	o->has_lost = c.has_lost;
	o->has_busy = c.has_busy;
	o->validating = c.validating;
}

/* GPU idle per engine, where the backend measured GPU busy time. */
static void bm_wl_report_idle(struct fb_run *run, const struct bm_wl_snap *a, const struct bm_wl_snap *b, double secs)
{
	static const char *const idle_name[BM_WL_ENGINES] = { "gpu_idle_3d", "gpu_idle_compute", "gpu_idle_copy" };
	for (unsigned e = 0; e < BM_WL_ENGINES; e++) {
		double busy = (double)(b->busy_ns[e] - a->busy_ns[e]) / 1e9;
		double idle = secs > 0 ? 1.0 - busy / secs : 0.0;
		fb_run_metric(run, idle_name[e], idle < 0 ? 0.0 : idle, "ratio");
	}
}

void bm_wl_report(struct fb_run *run, const struct bm_wl *w, const struct bm_wl_snap *a,
		  const struct bm_wl_snap *b, uint64_t frames)
{
	double n = frames ? (double)frames : 1.0;
	double secs = (double)(b->t_ns - a->t_ns) / 1e9;
	fb_run_metric(run, "frames", (double)frames, "frames");
	fb_run_metric(run, "frames_per_s", secs > 0 ? (double)frames / secs : 0.0, "frames/s");
	struct bm_host host = b->host;
	bm_host_sub(&host, &a->host);
	bm_host_report(run, &host, frames, BM_HOST_PER_FRAME);
	if (b->has_interrupts)
		fb_run_metric(run, "interrupts_per_frame", (double)(b->interrupts - a->interrupts) / n, "irq");
	fb_run_metric(run, "gpu_signals_per_frame", (double)(b->gpu_signals - a->gpu_signals) / n, "signals");
	fb_run_metric(run, "cpu_waits_per_frame", (double)(b->cpu_waits - a->cpu_waits) / n, "waits");
	fb_run_metric(run, "held_waits_per_frame", (double)(b->held_waits - a->held_waits) / n, "waits");
	fb_run_latency(run, "cpu_wait_per_frame", (double)(b->cpu_wait_ns - a->cpu_wait_ns) / n, FB_LIMIT_NONE);
	if (b->has_busy)
		bm_wl_report_idle(run, a, b, secs);
	if (b->has_lost)
		fb_run_metric(run, "lost_wakeups", (double)(b->lost_wakeups - a->lost_wakeups), "waits");
	if (w->kind == BM_BACKEND_MODEL)
		fb_run_metric(run, "user_mode_queues", w->user_mode ? 1.0 : 0.0, "bool");
	if (b->validating)
		fb_run_metric(run, "validation_errors", (double)(b->validation_errors - a->validation_errors), "reports");
	if (b->validating && b->validation_errors) {
		char msg[512];
		w->ops->validation_message(w->be, msg, sizeof(msg));
		fb_run_note(run, "validation layer: %s", msg);
	}
}

void bm_wl_summarize(const struct bm_wl_snap *a, const struct bm_wl_snap *b, uint64_t frames, struct bm_wl_summary *o)
{
	double n = frames ? (double)frames : 1.0, secs = (double)(b->t_ns - a->t_ns) / 1e9;
	struct bm_host h = b->host;
	bm_host_sub(&h, &a->host);
	o->frames_per_s = secs > 0 ? (double)frames / secs : 0.0;
	o->host_cpu_us_per_frame = bm_host_per(h.app_cpu_ns + h.irq_cpu_ns + h.sched_cpu_ns, frames) / 1e3;
	o->held_waits_per_frame = (double)(b->held_waits - a->held_waits) / n;
	o->interrupts_per_frame = (double)(b->interrupts - a->interrupts) / n;
	o->has_interrupts = b->has_interrupts;
}

/* ---- frame ---- */

/* One list of type t holding op, its resource uses declared when validating. */
struct bm_use {
	struct rt_resource *r;
	enum rt_state state, after;
	int kind;                           /* 0 read, 1 write, 2 barrier state -> after */
};
static int bm_wl_list_uses(struct bm_wl *w, const char *name, enum rt_list_type t, enum rt_op op, uint64_t ns,
			   unsigned units, const struct bm_use *uses, size_t n, struct bm_list **out)
{
	int rc = bm_list_create(w, t, name, out);   /* named: its WORK's name on the timeline */
	if (rc)
		return rc;
	rc = bm_list_record(w, *out, op, ns, units);
	for (size_t i = 0; i < n && !rc && w->debug; i++)
		rc = uses[i].kind == 2 ? rt_clist_barrier(bm_model_list(*out), uses[i].r, uses[i].state, uses[i].after)
				       : rt_clist_access(bm_model_list(*out), uses[i].r, uses[i].state, uses[i].kind == 1);
	if (!rc)
		rc = bm_list_close(w, *out);
	if (rc) {
		bm_list_destroy(w, *out);
		*out = NULL;
	}
	return rc;
}

static int bm_frame_resources(struct bm_wl *w, struct bm_frame_slot *s, unsigned k)
{
	if (!w->debug)
		return 0;
	char name[32];
	snprintf(name, sizeof(name), "geometry%u", k);
	int rc = rt_resource_create(w->debug, name, RT_STATE_COMMON, &s->geometry_r);
	for (int i = 0; i < 4 && !rc; i++) {
		snprintf(name, sizeof(name), "tex%d.%u", i + 1, k);
		rc = rt_resource_create(w->debug, name, RT_STATE_COMMON, &s->tex_r[i]);
	}
	snprintf(name, sizeof(name), "rt1.%u", k);
	if (!rc)
		rc = rt_resource_create(w->debug, name, RT_STATE_RENDER_TARGET, &s->rt1);
	snprintf(name, sizeof(name), "buf1.%u", k);
	if (!rc)
		rc = rt_resource_create(w->debug, name, RT_STATE_UNORDERED_ACCESS, &s->buf1);
	return rc;
}

/* The slot's lists: what each command reads and writes, as the seed says. */
static int bm_frame_slot_lists(struct bm_wl *w, const struct bm_frame_cfg *cfg, struct bm_frame_slot *s)
{
	unsigned u = cfg->units ? cfg->units : 1;
	const enum rt_state SR = RT_STATE_SHADER_RESOURCE, RTV = RT_STATE_RENDER_TARGET, UAV = RT_STATE_UNORDERED_ACCESS;
	struct bm_use g[1] = { { s->geometry_r, RT_STATE_COMMON, 0, 1 } };
	int rc = bm_wl_list_uses(w, "geometry", RT_LIST_COPY, RT_OP_COPY, cfg->geometry_ns, u, g, 1, &s->geometry);
	static const char *const tex[4] = { "tex1", "tex2", "tex3", "tex4" };
	for (int i = 0; i < 4 && !rc; i++) {
		struct bm_use t[1] = { { s->tex_r[i], RT_STATE_COMMON, 0, 1 } };
		rc = bm_wl_list_uses(w, tex[i], RT_LIST_COPY, RT_OP_COPY, cfg->texture_ns, u, t, 1, &s->tex[i]);
	}
	/* pre-pass using geometry only into rt1; rt1 then read as an SRV */
	struct bm_use pre[3] = { { s->geometry_r, SR, 0, 0 }, { s->rt1, RTV, 0, 1 }, { s->rt1, RTV, SR, 2 } };
	if (!rc)
		rc = bm_wl_list_uses(w, "prepass", RT_LIST_DIRECT, RT_OP_DRAW, cfg->prepass_ns, u, pre, 3, &s->prepass);
	/* lighting calculations on the pre-pass (rt1 as SRV) into buf1 */
	struct bm_use light[2] = { { s->rt1, SR, 0, 0 }, { s->buf1, UAV, 0, 1 } };
	if (!rc)
		rc = bm_wl_list_uses(w, "lighting", RT_LIST_COMPUTE, RT_OP_DISPATCH, cfg->lighting_ns, u, light, 2, &s->lighting);
	/* final render using buf1 as SRV and tex1..4 SRVs; the slot's states back for its next frame */
	struct bm_use fin[8] = {
		{ s->buf1, UAV, SR, 2 }, { s->buf1, SR, 0, 0 },
		{ s->tex_r[0], SR, 0, 0 }, { s->tex_r[1], SR, 0, 0 }, { s->tex_r[2], SR, 0, 0 }, { s->tex_r[3], SR, 0, 0 },
		{ s->buf1, SR, UAV, 2 }, { s->rt1, SR, RTV, 2 },
	};
	if (!rc)
		rc = bm_wl_list_uses(w, "final", RT_LIST_DIRECT, RT_OP_DRAW, cfg->final_ns, u, fin, 8, &s->final);
	return rc;
}

int bm_frame_init(struct bm_frame *f, struct bm_wl *w, const struct bm_frame_cfg *cfg)
{
	memset(f, 0, sizeof(*f));
	f->w = w;
	f->cfg = *cfg;
	if (!cfg->frames_in_flight || cfg->frames_in_flight > BM_FRAME_SLOTS)
		return -EINVAL;
	int rc = 0;
	struct bm_fence **fences[4] = { &f->copy_fence, &f->render_fence, &f->compute_fence, &f->frame_fence };
	static const char *const names[4] = { "copyFence", "renderFence", "computeFence", "frameFence" };
	for (int i = 0; i < 4 && !rc; i++)
		if (!(rc = bm_fence_create(w, fences[i])))
			bm_wl_name_fence(w, *fences[i], names[i]);
	for (unsigned k = 0; k < cfg->frames_in_flight && !rc; k++) {
		rc = bm_frame_resources(w, &f->slot[k], k);
		if (!rc)
			rc = bm_frame_slot_lists(w, cfg, &f->slot[k]);
	}
	return rc;
}

/* The seed's values for frame n (1-based): 101/102, 201, 301 in frame 1,
 * each fence's values rising by 100 a frame. */
static uint64_t bm_frame_value(uint64_t n, unsigned fence, unsigned k)
{
	return 100 * (n + fence) + k;
}

int bm_frame_submit(struct bm_frame *f)
{
	struct bm_wl *w = f->w;
	uint64_t n = f->n + 1;
	struct bm_frame_slot *s = &f->slot[(n - 1) % f->cfg.frames_in_flight];
	int rc = 0;
	if (n > f->cfg.frames_in_flight)
		rc = bm_wl_cpu_wait(w, f->frame_fence, n - f->cfg.frames_in_flight);
	uint64_t c1 = bm_frame_value(n, 0, 1), c2 = bm_frame_value(n, 0, 2);
	uint64_t r1 = bm_frame_value(n, 1, 1), k1 = bm_frame_value(n, 2, 1);
	/* the seed's pseudo-code, line by line */
	if (!rc)
		rc = bm_execute(w, w->copy, &s->geometry, 1);         /* copy geometry */
	if (!rc)
		rc = bm_signal(w, w->copy, f->copy_fence, c1);
	if (!rc)
		rc = bm_execute(w, w->copy, s->tex, 4);               /* copy textures tex1..tex4 */
	if (!rc)
		rc = bm_signal(w, w->copy, f->copy_fence, c2);
	if (!rc)
		rc = bm_wait(w, w->direct, f->copy_fence, c1);        /* geometry copied */
	if (!rc)
		rc = bm_execute(w, w->direct, &s->prepass, 1);        /* pre-pass into rt1 */
	if (!rc)
		rc = bm_signal(w, w->direct, f->render_fence, r1);
	if (!rc)
		rc = bm_wait(w, w->compute, f->render_fence, r1);     /* pre-pass completed */
	if (!rc)
		rc = bm_execute(w, w->compute, &s->lighting, 1);      /* lighting into buf1 */
	if (!rc)
		rc = bm_signal(w, w->compute, f->compute_fence, k1);
	if (!rc)
		rc = bm_wait(w, w->direct, f->compute_fence, k1);     /* lighting calculated */
	if (!rc)
		rc = bm_wait(w, w->direct, f->copy_fence, c2);        /* textures copied */
	if (!rc)
		rc = bm_execute(w, w->direct, &s->final, 1);          /* final render */
	/* not in the seed: the frame's end, which the CPU throttle waits for */
	if (!rc)
		rc = bm_signal(w, w->direct, f->frame_fence, n);
	if (!rc)
		f->n = n;
	return rc;
}

int bm_frame_drain(struct bm_frame *f)
{
	return f->n ? bm_wl_cpu_wait(f->w, f->frame_fence, f->n) : 0;
}

void bm_frame_fini(struct bm_frame *f)
{
	for (unsigned k = 0; k < BM_FRAME_SLOTS; k++) {
		struct bm_frame_slot *s = &f->slot[k];
		struct bm_list *lists[8] = { s->geometry, s->tex[0], s->tex[1], s->tex[2], s->tex[3],
					      s->prepass, s->lighting, s->final };
		for (int i = 0; i < 8; i++)
			if (lists[i])
				bm_list_destroy(f->w, lists[i]);
	}
	/* the fences are the device's, the resources the validation layer's */
}

/* ---- ring-heap ---- */

int bm_ring_heap_init(struct bm_ring_heap *r, struct bm_wl *w, uint64_t length, unsigned cpu_latency,
		      uint64_t map_ns, uint64_t draw_ns, unsigned units)
{
	memset(r, 0, sizeof(*r));
	r->w = w;
	r->length = length;
	r->cpu_latency = cpu_latency;
	if (!length || (w->debug && length > BM_RING_SLOTS))
		return -EINVAL;
	unsigned u = units ? units : 1;
	int rc = bm_fence_create(w, &r->fence1);
	if (!rc)
		rc = bm_fence_create(w, &r->fence2);
	if (!rc) {
		bm_wl_name_fence(w, r->fence1, "fence1");
		bm_wl_name_fence(w, r->fence2, "fence2");
	}
	/* one list pair per slot under the validation layer (each names its slot), else one */
	uint64_t lists = w->debug ? length : 1;
	for (uint64_t k = 0; k < lists && !rc; k++) {
		if (w->debug) {
			char name[32];
			snprintf(name, sizeof(name), "ringCB[%llu]", (unsigned long long)k);
			rc = rt_resource_create(w->debug, name, RT_STATE_COMMON, &r->slot[k]);
		}
		struct bm_use map[1] = { { r->slot[k], RT_STATE_COMMON, 0, 1 } };
		struct bm_use draw[1] = { { r->slot[k], RT_STATE_SHADER_RESOURCE, 0, 0 } };
		if (!rc)
			rc = bm_wl_list_uses(w, "map", RT_LIST_COPY, RT_OP_COPY, map_ns, u, map, 1, &r->map[k]);
		if (!rc)
			rc = bm_wl_list_uses(w, "draw", RT_LIST_DIRECT, RT_OP_DRAW, draw_ns, u, draw, 1, &r->draw[k]);
	}
	return rc;
}

int bm_ring_heap_step(struct bm_ring_heap *r)
{
	struct bm_wl *w = r->w;
	uint64_t i = r->i + 1;
	uint64_t k = w->debug ? i % r->length : 0;
	int rc = 0;
	/* not in the seed's loop: the CPU stays at most cpu_latency steps ahead */
	if (r->cpu_latency && i > r->cpu_latency)
		rc = bm_wl_cpu_wait(w, r->fence1, i - r->cpu_latency);
	if (!rc && i > r->length && !r->broken_no_ring_wait)
		rc = bm_wait(w, w->copy, r->fence1, i - r->length);   /* a slot is free */
	if (!rc)
		rc = bm_execute(w, w->copy, &r->map[k], 1);           /* copy new data into slot i % length */
	if (!rc)
		rc = bm_signal(w, w->copy, r->fence2, i);
	if (!rc)
		rc = bm_wait(w, w->direct, r->fence2, i);
	if (!rc)
		rc = bm_execute(w, w->direct, &r->draw[k], 1);        /* draw using copied data */
	if (!rc)
		rc = bm_signal(w, w->direct, r->fence1, i);
	if (!rc)
		r->i = i;
	return rc;
}

int bm_ring_heap_drain(struct bm_ring_heap *r)
{
	return r->i ? bm_wl_cpu_wait(r->w, r->fence1, r->i) : 0;
}

void bm_ring_heap_fini(struct bm_ring_heap *r)
{
	for (size_t k = 0; k < BM_RING_SLOTS; k++) {
		if (r->map[k])
			bm_list_destroy(r->w, r->map[k]);
		if (r->draw[k])
			bm_list_destroy(r->w, r->draw[k]);
	}
}

/* ---- pipeline: PipelinedComputeGraphics ---- */

int bm_pipeline_init(struct bm_pipeline *p, struct bm_wl *w, unsigned cpu_latency, unsigned cg_latency,
		     uint64_t compute_ns, uint64_t graphics_ns, unsigned units)
{
	memset(p, 0, sizeof(*p));
	p->w = w;
	p->cpu_latency = cpu_latency;
	p->cg_latency = cg_latency;
	if (w->debug && cg_latency + 1 > BM_PIPE_SLOTS)
		return -EINVAL;
	unsigned u = units ? units : 1;
	int rc = bm_fence_create(w, &p->compute_fence);
	if (!rc)
		rc = bm_fence_create(w, &p->graphics_fence);
	if (!rc) {
		bm_wl_name_fence(w, p->compute_fence, "computeFence");
		bm_wl_name_fence(w, p->graphics_fence, "graphicsFence");
	}
	const enum rt_state SR = RT_STATE_SHADER_RESOURCE, UAV = RT_STATE_UNORDERED_ACCESS;
	unsigned lists = w->debug ? cg_latency + 1 : 1;
	for (unsigned k = 0; k < lists && !rc; k++) {
		if (w->debug) {
			char name[32];
			snprintf(name, sizeof(name), "pipe[%u]", k);
			rc = rt_resource_create(w->debug, name, UAV, &p->pipe[k]);
		}
		/* compute writes its copy through a UAV; graphics reads it as an SRV */
		struct bm_use cw[1] = { { p->pipe[k], UAV, 0, 1 } };
		struct bm_use gr[3] = { { p->pipe[k], UAV, SR, 2 }, { p->pipe[k], SR, 0, 0 }, { p->pipe[k], SR, UAV, 2 } };
		if (!rc)
			rc = bm_wl_list_uses(w, "compute", RT_LIST_COMPUTE, RT_OP_DISPATCH, compute_ns, u, cw, 1, &p->compute[k]);
		if (!rc)
			rc = bm_wl_list_uses(w, "graphics", RT_LIST_DIRECT, RT_OP_DRAW, graphics_ns, u, gr, 3, &p->graphics[k]);
	}
	return rc;
}

/* The list pair of frame n (1-based): its copy of the data when validating. */
static size_t bm_pipeline_slot(const struct bm_pipeline *p, uint64_t n)
{
	return p->w->debug ? (size_t)((n - 1) % (p->cg_latency + 1)) : 0;
}

int bm_pipeline_step(struct bm_pipeline *p)
{
	struct bm_wl *w = p->w;
	uint64_t fn = p->frame;
	int rc = 0;
	if (fn > p->cg_latency)
		rc = bm_wait(w, w->compute, p->graphics_fence, fn - p->cg_latency);
	/* the CpuLatency throttle: compute never more than CpuLatency frames
	 * (+ the one submitted next) past its completion */
	if (!rc && fn > p->cpu_latency && !p->broken_no_cpu_throttle)
		rc = bm_wl_cpu_wait(w, p->compute_fence, fn - p->cpu_latency);
	if (rc)
		return rc;
	++fn;
	rc = bm_execute(w, w->compute, &p->compute[bm_pipeline_slot(p, fn)], 1);
	if (!rc)
		rc = bm_signal(w, w->compute, p->compute_fence, fn);
	if (!rc && fn > p->cg_latency) {
		uint64_t g = fn - p->cg_latency;
		if (!p->broken_no_compute_wait)
			rc = bm_wait(w, w->direct, p->compute_fence, g);
		if (!rc)
			rc = bm_execute(w, w->direct, &p->graphics[bm_pipeline_slot(p, g)], 1);
		if (!rc)
			rc = bm_signal(w, w->direct, p->graphics_fence, g);
		if (!rc)
			p->graphics_frames = g;
	}
	if (!rc)
		p->frame = fn;
	return rc;
}

int bm_pipeline_drain(struct bm_pipeline *p)
{
	int rc = p->frame ? bm_wl_cpu_wait(p->w, p->compute_fence, p->frame) : 0;
	if (!rc && p->graphics_frames)
		rc = bm_wl_cpu_wait(p->w, p->graphics_fence, p->graphics_frames);
	return rc;
}

void bm_pipeline_fini(struct bm_pipeline *p)
{
	for (size_t k = 0; k < BM_PIPE_SLOTS; k++) {
		if (p->compute[k])
			bm_list_destroy(p->w, p->compute[k]);
		if (p->graphics[k])
			bm_list_destroy(p->w, p->graphics[k]);
	}
}

/* ---- async-compute: AsyncPipelinedComputeGraphics ---- */

int bm_async_init(struct bm_async *a, struct bm_wl *w, unsigned cpu_latency, unsigned cg_latency,
		  uint64_t compute_ns, uint64_t graphics_ns, unsigned units)
{
	return bm_async_init_broken(a, w, cpu_latency, cg_latency, compute_ns, graphics_ns, units, false, false);
}

int bm_async_init_broken(struct bm_async *a, struct bm_wl *w, unsigned cpu_latency, unsigned cg_latency,
			 uint64_t compute_ns, uint64_t graphics_ns, unsigned units, bool no_first_wait,
			 bool signal_after_render)
{
	memset(a, 0, sizeof(*a));
	a->broken_no_first_compute_wait = no_first_wait;
	a->broken_signal_after_render = signal_after_render;
	a->w = w;
	a->cpu_latency = cpu_latency;
	a->cg_latency = cg_latency;
	a->graphics_ns = graphics_ns;
	a->units = units ? units : 1;
	if (cpu_latency > BM_ASYNC_MAX_LISTS || !cg_latency || (w->debug && cg_latency > BM_ASYNC_MAX_LISTS))
		return -EINVAL;
	int rc = bm_fence_create(w, &a->fences[0]);          /* compute fence: index 0 */
	if (!rc)
		rc = bm_fence_create(w, &a->fences[1]);      /* graphics fence: index 1 */
	if (!rc)
		rc = bm_fence_create(w, &a->graphics_compute_fence);
	if (!rc) {
		bm_wl_name_fence(w, a->fences[0], "computeFence");
		bm_wl_name_fence(w, a->fences[1], "graphicsFence");
		bm_wl_name_fence(w, a->graphics_compute_fence, "graphicsComputeFence");
	}
	for (int i = 0; i < 2 && !rc; i++)
		rc = bm_event_create(w, false, true, &a->handles[i]);
	unsigned lists = w->debug ? cg_latency : 1;
	for (unsigned k = 0; k < lists && !rc; k++) {
		if (w->debug) {
			char name[32];
			snprintf(name, sizeof(name), "pipe[%u]", k);
			rc = rt_resource_create(w->debug, name, RT_STATE_UNORDERED_ACCESS, &a->pipe[k]);
		}
		struct bm_use cw[1] = { { a->pipe[k], RT_STATE_UNORDERED_ACCESS, 0, 1 } };
		if (!rc)
			rc = bm_wl_list_uses(w, "compute", RT_LIST_COMPUTE, RT_OP_DISPATCH, compute_ns, a->units, cw, 1,
					     &a->compute[k]);
	}
	for (unsigned i = 0; i < cpu_latency && !rc; i++)
		rc = bm_wl_list_uses(w, "graphics", RT_LIST_DIRECT, RT_OP_DRAW, graphics_ns, a->units, NULL, 0,
				     &a->graphics[i]);
	/* "Graphics needs to wait for the first compute frame to complete; this
	 * is the only wait that the graphics queue will perform." */
	if (!rc && !a->broken_no_first_compute_wait)
		rc = bm_wait(w, w->direct, a->fences[0], 1);
	return rc;
}

/* Arm both stages' events and wait for either: the stage, or -errno.
 * The seed calls SetEventOnCompletion for both stages on every turn; a
 * stage not picked then has two registrations for one value on its
 * auto-reset event, and the second can set it after the first was consumed
 * (the waiter runs as soon as the first set lands): a spurious set that lets
 * the stage run past its CpuLatency throttle, again and again, until its
 * queue fills.  Here each value is armed once (the registration stays
 * armed until it fires and is consumed, which moves the value on). */

/* WaitForMultipleObjects(handles, 2, FALSE, ns) (the watchdog's slices). */
static int bm_async_wait_any(struct bm_wl *w, void *handles, int64_t ns)
{
	return w->ops->event_wait_any(w->be, handles, 2, ns);
}

/* Tests: the one stage's event only (WaitForSingleObject). */
static int bm_async_wait_stage(struct bm_wl *w, void *handle, int64_t ns)
{
	struct bm_event *e = handle;
	return w->ops->event_wait_any(w->be, &e, 1, ns);
}

/* The next stage: the seed's WaitForMultipleObjects over both events (the
 * lowest signaled index wins), or, forced >= 0 (tests), that stage's event
 * alone. */
static int bm_async_pick(struct bm_async *a, int forced)
{
	for (int i = 0; i < 2; i++) {
		int rc = 0;
		if (a->frames[i] > a->cpu_latency && !a->broken_no_cpu_throttle) {
			uint64_t v = a->frames[i] - a->cpu_latency;
			if (a->armed[i] != v)
				rc = bm_set_event(a->w, a->fences[i], v, a->handles[i]);
			a->armed[i] = v;
		} else
			bm_event_set(a->w, a->handles[i]);
		if (rc)
			return rc;
	}
	uint64_t t0 = lf_now_ns();
	int stage = forced < 0 ? bm_wl_watched(a->w, bm_async_wait_any, a->handles, NULL, 0, "either stage's event")
			       : bm_wl_watched(a->w, bm_async_wait_stage, a->handles[forced], NULL, 0, "the stage's event");
	if (forced >= 0 && stage == 0)
		stage = forced;
	uint64_t t1 = lf_now_ns();
	a->w->woke_ns = t1;
	if (a->w->kind != BM_BACKEND_MODEL && a->w->trace_waits && a->w->ops->trace_cpu_wait)   /* the timeline's CPU wait: either stage */
		a->w->ops->trace_cpu_wait(a->w->be, stage >= 0 ? a->fences[stage] : NULL, stage >= 0 ? a->armed[stage] : 0,
					  t0, t1);
	a->w->cpu_wait_ns += t1 - t0;
	a->w->cpu_waits++;
	/* a stage past its throttle ran because its fence reached the armed value */
	if (stage >= 0 && a->w->debug && a->frames[stage] > a->cpu_latency && !a->broken_no_cpu_throttle)
		rt_debug_cpu_waited(a->w->debug, bm_model_fence(a->fences[stage]), a->armed[stage]);
	return stage;
}

static int bm_async_compute(struct bm_async *a)
{
	struct bm_wl *w = a->w;
	uint64_t fn = a->frames[0];
	int rc = 0;
	if (fn > a->cg_latency && !a->broken_no_graphics_wait)
		rc = bm_wait(w, w->compute, a->graphics_compute_fence, fn - a->cg_latency);
	if (!rc)
		rc = bm_execute(w, w->compute, &a->compute[w->debug ? (fn - 1) % a->cg_latency : 0], 1);
	if (!rc)
		rc = bm_signal(w, w->compute, a->fences[0], fn);
	return rc;
}

static int bm_async_graphics(struct bm_async *a)
{
	struct bm_wl *w = a->w;
	uint64_t fn = a->frames[1];
	/* The seed writes min(1, GetCompletedValue()): with min the value is at
	 * most 1, and graphics would keep telling compute it is done with
	 * compute frame 0 only — compute would wait forever for frame 1.  The
	 * comment above it ("the GPU queue started with a wait for
	 * pComputeFence, 1") means at least 1: max. */
	uint64_t done = bm_fence_value(w, a->fences[0]);
	uint64_t completed = done > 1 ? done : 1;
	uint64_t list = (fn - 1) % a->cpu_latency;
	a->pipe_buffer = (completed - 1) % a->cg_latency;
	/* the CPU saw compute frame `done` complete: what graphics reads now is ordered after it */
	if (w->debug && done)
		rt_debug_cpu_waited(w->debug, bm_model_fence(a->fences[0]), done);
	/* UpdateGraphicsCommandList: re-record the list for this frame's buffer */
	struct bm_list *l = a->graphics[list];
	bm_list_reset(w, l);
	int rc = bm_list_record(w, l, RT_OP_DRAW, a->graphics_ns, a->units);
	struct rt_resource *pipe = a->pipe[a->pipe_buffer];
	if (!rc && w->debug)
		rc = rt_clist_barrier(bm_model_list(l), pipe, RT_STATE_UNORDERED_ACCESS, RT_STATE_SHADER_RESOURCE);
	if (!rc && w->debug)
		rc = rt_clist_access(bm_model_list(l), pipe, RT_STATE_SHADER_RESOURCE, false);
	if (!rc && w->debug)
		rc = rt_clist_barrier(bm_model_list(l), pipe, RT_STATE_SHADER_RESOURCE, RT_STATE_UNORDERED_ACCESS);
	if (!rc)
		rc = bm_list_close(w, l);
	/* Signal *before* new rendering: the compute work graphics is done with */
	if (!rc && !a->broken_signal_after_render)
		rc = bm_signal(w, w->direct, a->graphics_compute_fence, completed - 1);
	if (!rc && a->render_gate) {
		a->gate_progress = rt_queue_submitted(rt_cqueue_queue(bm_model_queue(w->direct)));
		rc = bm_wait(w, w->direct, a->render_gate, fn);
	}
	if (!rc)
		rc = bm_execute(w, w->direct, &l, 1);
	if (!rc && a->broken_signal_after_render)
		rc = bm_signal(w, w->direct, a->graphics_compute_fence, completed - 1);
	if (!rc)
		rc = bm_signal(w, w->direct, a->fences[1], fn);
	return rc;
}

static int bm_async_turn(struct bm_async *a, int forced)
{
	int stage = bm_async_pick(a, forced);
	if (stage < 0)
		return stage;
	++a->frames[stage];
	return stage == 0 ? bm_async_compute(a) : bm_async_graphics(a);
}

int bm_async_step(struct bm_async *a)
{
	return bm_async_turn(a, -1);
}

int bm_async_step_stage(struct bm_async *a, int stage)
{
	if (stage != 0 && stage != 1)
		return -EINVAL;
	return bm_async_turn(a, stage);
}

/* Graphics frames go on until compute caught up (compute waits for graphics
 * to be done with its buffers), then both complete.  Bounded. */
int bm_async_drain(struct bm_async *a)
{
	int rc = 0;
	for (int k = 0; !rc && k < 10000 && bm_fence_value(a->w, a->fences[0]) < a->frames[0]; k++) {
		if (a->frames[1] > a->cpu_latency)
			rc = bm_wl_cpu_wait(a->w, a->fences[1], a->frames[1] - a->cpu_latency);
		++a->frames[1];
		if (!rc)
			rc = bm_async_graphics(a);
		if (!rc)
			rc = bm_wl_cpu_wait(a->w, a->fences[1], a->frames[1]);
	}
	if (!rc && a->frames[0])
		rc = bm_wl_cpu_wait(a->w, a->fences[0], a->frames[0]);
	if (!rc && a->frames[1])
		rc = bm_wl_cpu_wait(a->w, a->fences[1], a->frames[1]);
	return rc;
}

void bm_async_fini(struct bm_async *a)
{
	for (unsigned i = 0; i < BM_ASYNC_MAX_LISTS; i++) {
		if (a->compute[i])
			bm_list_destroy(a->w, a->compute[i]);
		if (a->graphics[i])
			bm_list_destroy(a->w, a->graphics[i]);
	}
	/* events go with bm_wl_down's: after the fences that may set them */
	a->w->extra_events[0] = a->handles[0];
	a->w->extra_events[1] = a->handles[1];
}
