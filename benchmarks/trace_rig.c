/* benchmarks/trace_rig.c — a stack's timeline into the harness's trace (see trace_rig.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks/trace_rig.h"
#include "gpu-model/runtime/d3d.h"
#include "src/fb_scenario.h"

#define RIG_SRC_LOG "native fence log buffer"
#define RIG_SRC_ENGINE "model: the engine's execution records"
#define RIG_SRC_HELD "model: the OS's held command buffers"

/* The GPU -> CPU clock conversion of one copy. */
struct rig_clock {
	uint64_t gpu, cpu, hz;
	enum rig_trace_broken broken;
};

/* One tick of the GPU counter in ns (rounded up): a GPU timestamp says
 * "within this tick", so a logged point is drawn as the tick's span. */
static uint64_t rig_tick_ns(const struct rig_clock *k)
{
	return (1000000000ull + k->hz - 1) / k->hz;
}

static uint64_t rig_trace_cpu_ns(const struct rig_clock *k, uint64_t gpu)
{
	if (k->broken == RIG_TRACE_BROKEN_RAW_GPU_TS)
		return gpu;                    /* broken on purpose: the GPU's own clock */
	__int128 d = (__int128)(int64_t)(gpu - k->gpu) * 1000000000 / (__int128)k->hz;
	return (uint64_t)((__int128)k->cpu + d);
}

/* Queues whose signals and waits the log buffers tell (they wrote entries). */
#define RIG_MAX_LOGGED 256

/* The copy's state: tracks by what they show. */
struct rig_copy {
	struct fb_trace *t;
	const char *label;
	pid_t irq_tid, sched_tid;
	const struct rig_trace_queue *names;
	size_t nnames;
	uint64_t logged[RIG_MAX_LOGGED];
	size_t nlogged;
	struct rig_clock clock;
	struct rig_trace_counts c;
};

static unsigned rig_track_cpu(struct rig_copy *k, pid_t tid)
{
	char g[128], n[64];
	snprintf(g, sizeof(g), "%s: CPU threads", k->label);
	if (tid == k->irq_tid)
		snprintf(n, sizeof(n), "os-irq (tid %d)", (int)tid);
	else if (tid == k->sched_tid)
		snprintf(n, sizeof(n), "os-sched (tid %d)", (int)tid);
	else
		snprintf(n, sizeof(n), "application (tid %d)", (int)tid);
	return fb_trace_track(k->t, g, n);
}

static unsigned rig_track_engine(struct rig_copy *k, unsigned e)
{
	char g[128], n[64];
	snprintf(g, sizeof(g), "%s: GPU engines", k->label);
	snprintf(n, sizeof(n), "engine %u", e);
	return fb_trace_track(k->t, g, n);
}

static const char *rig_queue_name(const struct rig_copy *k, uint64_t handle)
{
	for (size_t i = 0; i < k->nnames; i++)
		if (k->names[i].handle == handle)
			return k->names[i].name;
	return NULL;
}

/* "copy0", or "HW queue 0x3 (engine 0)" when the caller named none. */
static void rig_queue_label(const struct rig_copy *k, uint64_t handle, unsigned e, char *out, size_t len)
{
	const char *name = rig_queue_name(k, handle);
	if (name)
		snprintf(out, len, "%s", name);
	else
		snprintf(out, len, "HW queue %#llx (engine %u)", (unsigned long long)handle, e);
}

static unsigned rig_track_queue(struct rig_copy *k, uint64_t handle, unsigned e)
{
	char g[128], n[96];
	snprintf(g, sizeof(g), "%s: queues", k->label);
	rig_queue_label(k, handle, e, n, sizeof(n));
	return fb_trace_track(k->t, g, n);
}

/* A queue's waits held on the CPU (legacy): a track of their own beside the
 * queue's, as the OS holds later buffers while the GPU still runs earlier ones. */
static unsigned rig_track_held(struct rig_copy *k, uint64_t handle, unsigned e)
{
	char g[128], n[112], q[80];
	snprintf(g, sizeof(g), "%s: queues", k->label);
	rig_queue_label(k, handle, e, q, sizeof(q));
	snprintf(n, sizeof(n), "%s: held on the CPU", q);
	return fb_trace_track(k->t, g, n);
}

static bool rig_logged(const struct rig_copy *k, uint64_t queue)
{
	for (size_t i = 0; i < k->nlogged; i++)
		if (k->logged[i] == queue)
			return true;
	return false;
}

static void rig_find_logged(struct rig_copy *k, const struct os_trace_rec *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((r[i].kind == OS_TRACE_LOG_SIGNAL || r[i].kind == OS_TRACE_LOG_WAIT) && !rig_logged(k, r[i].queue) &&
		    k->nlogged < RIG_MAX_LOGGED)
			k->logged[k->nlogged++] = r[i].queue;
}

static const char *rig_irq_name(uint64_t kind)
{
	return kind == HW_IRQ_NATIVE_FENCE_SIGNALED ? "NATIVE_FENCE_SIGNALED" :
	       kind == HW_IRQ_MONITORED_FENCE_SIGNALED ? "MONITORED_FENCE_SIGNALED" : "other";
}

static json_t *rig_fence_args(const struct os_trace_rec *r)
{
	return json_pack("{s:I, s:I}", "fence", (json_int_t)r->fence, "value", (json_int_t)r->value);
}

static json_t *rig_sourced(json_t *a, const char *source)
{
	json_object_set_new(a, "source", json_string(source));
	return a;
}

/* A span [t0, t1] of at least 1 ns (a flow binds only inside a span). */
static uint64_t rig_dur(uint64_t t0, uint64_t t1)
{
	return t1 > t0 ? t1 - t0 : 1;
}

/* ---- records as events (flows come after) ---- */

static void rig_trace_os(struct rig_copy *k, const struct os_trace_rec *r)
{
	json_t *a;
	if (r->kind == OS_TRACE_ISR) {
		a = json_pack("{s:s, s:I}", "interrupt", rig_irq_name(r->n), "engine", (json_int_t)r->engine);
		fb_trace_span(k->t, rig_track_cpu(k, r->tid), "ISR", "os", r->t0, r->t1 - r->t0, a);
	} else if (r->kind == OS_TRACE_DPC) {
		a = rig_fence_args(r);   /* the signal its interrupt carried */
		json_object_set_new(a, "released", json_integer((json_int_t)r->n));
		fb_trace_span(k->t, rig_track_cpu(k, r->tid), "DPC", "os", r->t0, rig_dur(r->t0, r->t1), a);
	} else {   /* OS_TRACE_IRQ_RAISED */
		a = rig_fence_args(r);
		json_object_set_new(a, "interrupt", json_string(rig_irq_name(r->n)));
		fb_trace_instant(k->t, rig_track_engine(k, r->engine), "interrupt", "gpu", r->t0, a);
		k->c.irqs++;
	}
}

static void rig_trace_log(struct rig_copy *k, const struct os_trace_rec *r)
{
	json_t *a = rig_sourced(rig_fence_args(r), RIG_SRC_LOG);
	unsigned q = rig_track_queue(k, r->queue, r->engine);
	if (r->kind == OS_TRACE_LOG_SIGNAL) {
		json_object_set_new(a, "end_gpu_ts", json_integer((json_int_t)r->t1));
		fb_trace_span(k->t, q, "SIGNAL_EXECUTED", "log", rig_trace_cpu_ns(&k->clock, r->t1),
			      rig_tick_ns(&k->clock), a);
		k->c.log_signals++;
	} else {
		uint64_t t0 = rig_trace_cpu_ns(&k->clock, r->t0), t1 = rig_trace_cpu_ns(&k->clock, r->t1);
		json_object_set_new(a, "observed_gpu_ts", json_integer((json_int_t)r->t0));
		json_object_set_new(a, "end_gpu_ts", json_integer((json_int_t)r->t1));
		fb_trace_span(k->t, q, "WAIT_UNBLOCKED", "log", t0, (t1 > t0 ? t1 - t0 : 0) + rig_tick_ns(&k->clock), a);
		k->c.log_waits++;
	}
}

static void rig_trace_lost(struct rig_copy *k, const struct os_trace_rec *r)
{
	char name[48];
	snprintf(name, sizeof(name), "lost %llu", (unsigned long long)r->n);
	json_t *a = json_pack("{s:s, s:I}", "log", r->value == HW_LOG_SIGNALS ? "signals" : "waits", "entries",
			      (json_int_t)r->n);
	fb_trace_instant(k->t, rig_track_queue(k, r->queue, r->engine), name, "log", r->t0, a);
	k->c.lost += r->n;
}

static void rig_trace_runtime(struct rig_copy *k, const struct os_trace_rec *r)
{
	json_t *a = rig_fence_args(r);
	if (r->kind == OS_TRACE_CPU_WAIT) {
		json_object_set_new(a, "result", json_integer((json_int_t)(int64_t)r->n));
		fb_trace_span(k->t, rig_track_cpu(k, r->tid), "CPU wait", "runtime", r->t0, rig_dur(r->t0, r->t1), a);
		k->c.cpu_waits++;
		return;
	}
	json_object_set_new(a, "queue", json_integer((json_int_t)r->queue));
	json_object_set_new(a, "entry", json_integer((json_int_t)r->n));
	fb_trace_instant(k->t, rig_track_cpu(k, r->tid),
			 r->kind == OS_TRACE_SIGNAL_QUEUED ? "FENCE_SIGNAL_QUEUED" : "FENCE_WAIT_QUEUED", "runtime", r->t0, a);
	k->c.queued++;
}

/* The engine's records of a queue: its WORK always; its signals and waits
 * where no log buffer tells them. */
static void rig_trace_gpu_queue(struct rig_copy *k, const struct os_trace_rec *r)
{
	unsigned q = rig_track_queue(k, r->queue, r->engine);
	if (r->kind == OS_TRACE_GPU_WORK) {
		const char *name = rt_tag_name((uint32_t)r->n);
		json_t *a = rig_sourced(json_object(), RIG_SRC_ENGINE);
		if (r->value)
			json_object_set_new(a, "stopped", json_string("preempted or reset: a slice"));
		fb_trace_span(k->t, q, name ? name : "WORK", "gpu", r->t0, rig_dur(r->t0, r->t1), a);
		k->c.gpu_work++;
		return;
	}
	if (rig_logged(k, r->queue))
		return;                        /* the log buffer's entries tell these */
	bool sig = r->kind == OS_TRACE_GPU_SIGNAL;
	fb_trace_span(k->t, q, sig ? "Signal" : "Wait", "gpu", r->t0, rig_dur(r->t0, r->t1),
		      rig_sourced(rig_fence_args(r), RIG_SRC_ENGINE));
	*(sig ? &k->c.gpu_signals : &k->c.gpu_waits) += 1;
}

/* An engine's records: which queue ran, preemptions, ContextSwitch packets. */
static void rig_trace_gpu_engine(struct rig_copy *k, const struct os_trace_rec *r)
{
	unsigned e = rig_track_engine(k, r->engine);
	char qn[96];
	rig_queue_label(k, r->queue, r->engine, qn, sizeof(qn));
	json_t *a = json_pack("{s:s}", "queue", qn);
	if (r->kind == OS_TRACE_GPU_RUN) {
		json_object_set_new(a, "commands", json_integer((json_int_t)r->value));
		fb_trace_span(k->t, e, qn, "gpu", r->t0, rig_dur(r->t0, r->t1), a);
		k->c.runs++;
	} else if (r->kind == OS_TRACE_GPU_PREEMPT) {
		json_object_set_new(a, "boundary", json_string(r->value == 1 ? "buffer end" : r->value == 2 ? "mid buffer" :
								  "mid command"));
		fb_trace_instant(k->t, e, "preempted", "gpu", r->t0, a);
		k->c.preemptions++;
	} else {
		fb_trace_instant(k->t, e, "context switch", "gpu", r->t0, a);
		k->c.ctx_switches++;
	}
}

static void rig_trace_held(struct rig_copy *k, const struct os_trace_rec *r)
{
	json_t *a = rig_sourced(rig_fence_args(r), RIG_SRC_HELD);
	fb_trace_span(k->t, rig_track_held(k, r->queue, r->engine), "Wait (held on the CPU)", "os", r->t0,
		      rig_dur(r->t0, r->t1), a);
	k->c.held_waits++;
}

/* A command buffer submitted: by the application (the runtime's call) or
 * handed to the ring by the OS scheduler (kernel-mode queues). */
static void rig_trace_submit(struct rig_copy *k, const struct os_trace_rec *r)
{
	char qn[96];
	rig_queue_label(k, r->queue, r->engine, qn, sizeof(qn));
	json_t *a = json_pack("{s:s, s:I}", "queue", qn, "commands", (json_int_t)r->n);
	bool app = r->kind == OS_TRACE_SUBMIT;
	if (app)
		json_object_set_new(a, "progress_value", json_integer((json_int_t)r->value));
	fb_trace_span(k->t, rig_track_cpu(k, r->tid), app ? "submit" : "to the ring", app ? "runtime" : "os", r->t0,
		      rig_dur(r->t0, r->t1), a);
	*(app ? &k->c.submits : &k->c.sched_submits) += 1;
}

static void rig_trace_one(struct rig_copy *k, const struct os_trace_rec *r)
{
	switch (r->kind) {
	case OS_TRACE_ISR:
	case OS_TRACE_DPC:
	case OS_TRACE_IRQ_RAISED:
		rig_trace_os(k, r);
		break;
	case OS_TRACE_LOG_SIGNAL:
	case OS_TRACE_LOG_WAIT:
		rig_trace_log(k, r);
		break;
	case OS_TRACE_LOG_LOST:
		rig_trace_lost(k, r);
		break;
	case OS_TRACE_SIGNAL_QUEUED:
	case OS_TRACE_WAIT_QUEUED:
	case OS_TRACE_CPU_WAIT:
		rig_trace_runtime(k, r);
		break;
	case OS_TRACE_GPU_WORK:
	case OS_TRACE_GPU_SIGNAL:
	case OS_TRACE_GPU_WAIT:
		rig_trace_gpu_queue(k, r);
		break;
	case OS_TRACE_GPU_RUN:
	case OS_TRACE_GPU_PREEMPT:
	case OS_TRACE_GPU_CTX_SWITCH:
		rig_trace_gpu_engine(k, r);
		break;
	case OS_TRACE_HELD_WAIT:
		rig_trace_held(k, r);
		break;
	case OS_TRACE_SUBMIT:
	case OS_TRACE_SCHED_SUBMIT:
		rig_trace_submit(k, r);
		break;
	default:
		break;
	}
}

/* ---- flows ---- */

/* A point a flow may start from (a signal, a DPC): its fence, value, time
 * (inside its span) and track. */
struct rig_pt {
	uint64_t fence, value, ts;
	unsigned track;
	bool used;                      /* a DPC: an arrow leaves it for a wait */
};

static int rig_pt_cmp(const void *pa, const void *pb)
{
	const struct rig_pt *a = pa, *b = pb;
	if (a->fence != b->fence)
		return a->fence < b->fence ? -1 : 1;
	if (a->value != b->value)
		return a->value < b->value ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/* The point of fence with the least value >= value (the earliest at that
 * value) at or before `by`; NULL: none. */
static struct rig_pt *rig_first(struct rig_pt *s, size_t n, uint64_t fence, uint64_t value, uint64_t by)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {                       /* first (fence, value') >= (fence, value) */
		size_t mid = lo + (hi - lo) / 2;
		if (s[mid].fence < fence || (s[mid].fence == fence && s[mid].value < value))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n && s[i].fence == fence; i++)
		if (s[i].ts <= by)
			return &s[i];
	return NULL;
}

/* The signals (sorted) and the DPCs that carried one (sorted). */
struct rig_points {
	struct rig_pt *sig, *dpc;
	size_t nsig, ndpc;
};

/* Where in a log entry's tick an arrow meets it: 1 ns in.  The entry
 * happened within [ts, ts + tick) and the queue's next command started
 * after it, possibly inside the same tick: the arrow stays on the entry. */
static uint64_t rig_log_in(const struct rig_copy *k)
{
	return rig_tick_ns(&k->clock) > 1 ? 1 : 0;
}

/* A signal's point: 1 ns into a log entry's tick, mid-span for the engine's. */
static bool rig_signal_pt(struct rig_copy *k, const struct os_trace_rec *r, struct rig_pt *p)
{
	if (r->kind == OS_TRACE_LOG_SIGNAL)
		*p = (struct rig_pt){ .ts = rig_trace_cpu_ns(&k->clock, r->t1) + rig_log_in(k) };
	else if (r->kind == OS_TRACE_GPU_SIGNAL && !rig_logged(k, r->queue))
		*p = (struct rig_pt){ .ts = r->t0 + (r->t1 - r->t0) / 2 };
	else
		return false;
	p->fence = r->fence;
	p->value = r->value;
	p->track = rig_track_queue(k, r->queue, r->engine);
	return true;
}

static int rig_points(struct rig_copy *k, const struct os_trace_rec *r, size_t n, struct rig_points *p)
{
	p->sig = malloc((n ? n : 1) * sizeof(*p->sig));
	p->dpc = malloc((n ? n : 1) * sizeof(*p->dpc));
	p->nsig = p->ndpc = 0;
	if (!p->sig || !p->dpc)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (rig_signal_pt(k, &r[i], &p->sig[p->nsig]))
			p->nsig++;
		else if (r[i].kind == OS_TRACE_DPC && r[i].fence)
			/* at its start: inside it whatever its length */
			p->dpc[p->ndpc++] = (struct rig_pt){ .fence = r[i].fence, .value = r[i].value, .ts = r[i].t0,
							     .track = rig_track_cpu(k, r[i].tid) };
	}
	qsort(p->sig, p->nsig, sizeof(*p->sig), rig_pt_cmp);
	qsort(p->dpc, p->ndpc, sizeof(*p->dpc), rig_pt_cmp);
	return 0;
}

static void rig_flow(struct rig_copy *k, const struct rig_pt *from, unsigned to, uint64_t at, bool via_dpc)
{
	fb_trace_flow(k->t, via_dpc ? "via interrupt" : "unblocks", from->track, from->ts, to, at);
	k->c.flows++;
	k->c.flows_via_dpc += via_dpc;
}

/* Each DPC an arrow left for a wait: an arrow into it from the signal its
 * interrupt carried (DPCs that released nothing drawn stay plain). */
static void rig_flows_into_dpcs(struct rig_copy *k, const struct rig_points *p)
{
	for (size_t i = 0; i < p->ndpc; i++) {
		const struct rig_pt *d = &p->dpc[i];
		if (!d->used)
			continue;
		const struct rig_pt *s = rig_first(p->sig, p->nsig, d->fence, d->value, d->ts);
		if (s && s->value == d->value)
			rig_flow(k, s, d->track, d->ts, true);
	}
}

/* A wait as the target of an arrow: its track, the point inside it where
 * the arrow ends (its end), and whether the CPU released it (through a DPC). */
static bool rig_wait_target(struct rig_copy *k, const struct os_trace_rec *r, unsigned *to, uint64_t *at, bool *cpu)
{
	uint64_t end;
	switch (r->kind) {
	case OS_TRACE_LOG_WAIT:
		*to = rig_track_queue(k, r->queue, r->engine);
		*at = rig_trace_cpu_ns(&k->clock, r->t1) + rig_log_in(k);
		*cpu = false;
		return true;
	case OS_TRACE_GPU_WAIT:
		if (rig_logged(k, r->queue))
			return false;
		*to = rig_track_queue(k, r->queue, r->engine);
		*cpu = false;
		break;
	case OS_TRACE_HELD_WAIT:
		*to = rig_track_held(k, r->queue, r->engine);
		*cpu = true;
		break;
	case OS_TRACE_CPU_WAIT:
		if (r->n != 0)
			return false;          /* timed out: released by nothing */
		*to = rig_track_cpu(k, r->tid);
		*cpu = true;
		break;
	default:
		return false;
	}
	end = r->t1;
	*at = end > r->t0 ? end - 1 : end;
	return true;
}

/* Broken on purpose (RIG_TRACE_BROKEN_WRONG_FENCE): a signal of another fence. */
static const struct rig_pt *rig_other_fence(const struct rig_points *p, uint64_t fence)
{
	for (size_t i = 0; i < p->nsig; i++)
		if (p->sig[i].fence != fence)
			return &p->sig[i];
	return NULL;
}

static void rig_flows_to_waits(struct rig_copy *k, const struct os_trace_rec *r, size_t n, struct rig_points *p)
{
	for (size_t i = 0; i < n; i++) {
		unsigned to;
		uint64_t at;
		bool cpu;
		if (!rig_wait_target(k, &r[i], &to, &at, &cpu))
			continue;
		uint64_t fence = r[i].fence;
		if (k->clock.broken == RIG_TRACE_BROKEN_WRONG_FENCE) {
			const struct rig_pt *w = rig_other_fence(p, fence);   /* broken on purpose */
			if (w)
				rig_flow(k, w, to, at, false);
			continue;
		}
		struct rig_pt *d = cpu ? rig_first(p->dpc, p->ndpc, fence, r[i].value, at) : NULL;
		if (d) {
			d->used = true;
			rig_flow(k, d, to, at, true);
			continue;
		}
		const struct rig_pt *s = rig_first(p->sig, p->nsig, fence, r[i].value, at);
		if (s)
			rig_flow(k, s, to, at, false);
	}
}

static int rig_trace_flows(struct rig_copy *k, const struct os_trace_rec *r, size_t n)
{
	struct rig_points p;
	int rc = rig_points(k, r, n, &p);
	if (!rc) {
		rig_flows_to_waits(k, r, n, &p);
		rig_flows_into_dpcs(k, &p);
	}
	free(p.sig);
	free(p.dpc);
	return rc;
}

/* What the trace says of itself (otherData), per label. */
static void rig_trace_notes(struct rig_copy *k)
{
	char key[128], v[512];
	snprintf(key, sizeof(key), "%s", k->label);
	snprintf(v, sizeof(v), "%zu records, %llu dropped (the record array was full), %zu signal and %zu wait log "
		 "entries, %llu log entries lost to overruns; the model's own records: %zu WORK, %zu signals, %zu GPU "
		 "waits, %zu waits held on the CPU; %zu flows (%zu through a DPC); GPU timestamps at %llu Hz converted",
		 k->c.records, (unsigned long long)k->c.dropped, k->c.log_signals, k->c.log_waits,
		 (unsigned long long)k->c.lost, k->c.gpu_work, k->c.gpu_signals, k->c.gpu_waits, k->c.held_waits,
		 k->c.flows, k->c.flows_via_dpc, (unsigned long long)k->clock.hz);
	fb_trace_note(k->t, key, v);
	snprintf(key, sizeof(key), "%s: sources", k->label);
	fb_trace_note(k->t, key, k->c.log_signals || k->c.log_waits ?
		      "signals and waits of queues with native fence log buffers (user-mode queues): their log entries "
		      "(SIGNAL_EXECUTED, WAIT_UNBLOCKED); of the other queues: the model's records (args.source)" :
		      "no log entries: the run's queues were not user-mode HW queues (kernel-mode and direct queues have "
		      "no native fence log buffers); signals and waits are the model's records (args.source)");
}

int rig_trace_copy_named(struct rt_stack *s, struct fb_trace *t, const char *label, const struct rig_trace_queue *q,
			 size_t nq, enum rig_trace_broken broken, struct rig_trace_counts *c)
{
	struct rig_copy k = { .t = t, .label = label, .irq_tid = rt_stack_irq_tid(s), .sched_tid = rt_stack_sched_tid(s),
			      .names = q, .nnames = nq };
	k.clock.broken = broken;
	rt_stack_clock_calibration(s, &k.clock.gpu, &k.clock.cpu, &k.clock.hz);
	size_t max = rt_stack_trace_flush(s) + 1;   /* settled, the last log entries read */
	struct os_trace_rec *r = malloc(max * sizeof(*r));
	if (!r)
		return -ENOMEM;
	size_t n = rt_stack_trace_take(s, r, max, &k.c.dropped);
	k.c.records = n;
	/* the named queues', the interrupt thread's and the engines' tracks first, in that order */
	for (size_t i = 0; i < nq; i++)
		rig_track_queue(&k, q[i].handle, 0);
	rig_track_cpu(&k, k.irq_tid);
	for (unsigned e = 0; e < rt_stack_engines(s); e++)
		rig_track_engine(&k, e);
	rig_find_logged(&k, r, n);
	for (size_t i = 0; i < n; i++)
		rig_trace_one(&k, &r[i]);
	int rc = rig_trace_flows(&k, r, n);
	free(r);
	if (!rc)
		rig_trace_notes(&k);
	if (c)
		*c = k.c;
	return rc;
}

int rig_trace_copy(struct rt_stack *s, struct fb_trace *t, const char *label, enum rig_trace_broken broken,
		   struct rig_trace_counts *c)
{
	return rig_trace_copy_named(s, t, label, NULL, 0, broken, c);
}

void rig_trace_label(struct fb_run *run, char *out, size_t len)
{
	/* a scenario that compares no paths: "run" */
	snprintf(out, len, "%s", fb_run_path(run) == FB_PATH_NONE ? "run" : fb_path_name(fb_run_path(run)));
	if (fb_run_repetition(run))
		snprintf(out + strlen(out), len - strlen(out), " #%u", fb_run_repetition(run) + 1);
}

void rig_trace_report(struct fb_run *run, const struct rig_trace_counts *c)
{
	const char *path = fb_path_name(fb_run_path(run));
	fb_run_note(run, "timeline recorded: the measured region includes the tracing overhead");
	if (c->dropped)
		fb_run_note(run, "timeline, %s path: %llu records dropped (the record array was full): shorten the run",
			    path, (unsigned long long)c->dropped);
	if (!c->log_signals && !c->log_waits)
		fb_run_note(run, "timeline, %s path: no log entries (its queues are not user-mode HW queues): its "
			    "signals and waits are the model's own records", path);
}

int rig_trace_run_start(struct fb_run *run, struct rt_stack *s)
{
	if (!fb_run_trace(run))
		return 0;
	int rc = rt_stack_trace_start(s, 0);
	return rc ? fb_run_error(run, rc, "starting the timeline trace: %s", strerror(-rc)) : 0;
}

int rig_trace_run_copy(struct fb_run *run, struct rt_stack *s, const char *part, const struct rig_trace_queue *q,
		       size_t nq)
{
	struct fb_trace *t = fb_run_trace(run);
	if (!t)
		return 0;
	char label[96];
	rig_trace_label(run, label, sizeof(label));
	if (part)
		snprintf(label + strlen(label), sizeof(label) - strlen(label), " %s", part);
	struct rig_trace_counts c;
	int rc = rig_trace_copy_named(s, t, label, q, nq, RIG_TRACE_OK, &c);
	if (rc)
		return fb_run_error(run, rc, "copying the timeline: %s", strerror(-rc));
	rig_trace_report(run, &c);
	return 0;
}
