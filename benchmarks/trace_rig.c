/* benchmarks/trace_rig.c — a stack's timeline into the harness's trace (see trace_rig.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks/trace_rig.h"

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

/* The copy's state: tracks by what they show. */
struct rig_copy {
	struct fb_trace *t;
	const char *label;
	pid_t irq_tid;
	struct rig_clock clock;
	struct rig_trace_counts c;
};

static unsigned rig_track_cpu(struct rig_copy *k, pid_t tid)
{
	char g[128], n[64];
	snprintf(g, sizeof(g), "%s: CPU threads", k->label);
	if (tid == k->irq_tid)
		snprintf(n, sizeof(n), "os-irq (tid %d)", (int)tid);
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

static unsigned rig_track_queue(struct rig_copy *k, uint64_t handle, unsigned e)
{
	char g[128], n[64];
	snprintf(g, sizeof(g), "%s: HW queues", k->label);
	snprintf(n, sizeof(n), "HW queue %#llx (engine %u)", (unsigned long long)handle, e);
	return fb_trace_track(k->t, g, n);
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

/* One record as trace events (flows come after, from the signals). */
static void rig_trace_one(struct rig_copy *k, const struct os_trace_rec *r)
{
	json_t *a;
	switch (r->kind) {
	case OS_TRACE_ISR:
		a = json_pack("{s:s, s:I}", "interrupt", rig_irq_name(r->n), "engine", (json_int_t)r->engine);
		fb_trace_span(k->t, rig_track_cpu(k, r->tid), "ISR", "os", r->t0, r->t1 - r->t0, a);
		break;
	case OS_TRACE_DPC:
		a = json_pack("{s:I}", "released", (json_int_t)r->n);
		fb_trace_span(k->t, rig_track_cpu(k, r->tid), "DPC", "os", r->t0, r->t1 - r->t0, a);
		break;
	case OS_TRACE_IRQ_RAISED:
		a = rig_fence_args(r);
		json_object_set_new(a, "interrupt", json_string(rig_irq_name(r->n)));
		fb_trace_instant(k->t, rig_track_engine(k, r->engine), "interrupt", "gpu", r->t0, a);
		k->c.irqs++;
		break;
	case OS_TRACE_LOG_SIGNAL:
		a = rig_fence_args(r);
		json_object_set_new(a, "end_gpu_ts", json_integer((json_int_t)r->t1));
		fb_trace_span(k->t, rig_track_queue(k, r->queue, r->engine), "SIGNAL_EXECUTED", "log",
			      rig_trace_cpu_ns(&k->clock, r->t1), rig_tick_ns(&k->clock), a);
		k->c.log_signals++;
		break;
	case OS_TRACE_LOG_WAIT: {
		uint64_t t0 = rig_trace_cpu_ns(&k->clock, r->t0), t1 = rig_trace_cpu_ns(&k->clock, r->t1);
		a = rig_fence_args(r);
		json_object_set_new(a, "observed_gpu_ts", json_integer((json_int_t)r->t0));
		json_object_set_new(a, "end_gpu_ts", json_integer((json_int_t)r->t1));
		fb_trace_span(k->t, rig_track_queue(k, r->queue, r->engine), "WAIT_UNBLOCKED", "log", t0,
			      (t1 > t0 ? t1 - t0 : 0) + rig_tick_ns(&k->clock), a);
		k->c.log_waits++;
		break;
	}
	case OS_TRACE_LOG_LOST: {
		char name[48];
		snprintf(name, sizeof(name), "lost %llu", (unsigned long long)r->n);
		a = json_pack("{s:s, s:I}", "log", r->value == HW_LOG_SIGNALS ? "signals" : "waits",
			      "entries", (json_int_t)r->n);
		fb_trace_instant(k->t, rig_track_queue(k, r->queue, r->engine), name, "log", r->t0, a);
		k->c.lost += r->n;
		break;
	}
	case OS_TRACE_SIGNAL_QUEUED:
	case OS_TRACE_WAIT_QUEUED:
		a = rig_fence_args(r);
		json_object_set_new(a, "queue", json_integer((json_int_t)r->queue));
		json_object_set_new(a, "entry", json_integer((json_int_t)r->n));
		fb_trace_instant(k->t, rig_track_cpu(k, r->tid),
				 r->kind == OS_TRACE_SIGNAL_QUEUED ? "FENCE_SIGNAL_QUEUED" : "FENCE_WAIT_QUEUED", "runtime",
				 r->t0, a);
		k->c.queued++;
		break;
	case OS_TRACE_CPU_WAIT:
		a = rig_fence_args(r);
		json_object_set_new(a, "result", json_integer((json_int_t)(int64_t)r->n));
		fb_trace_span(k->t, rig_track_cpu(k, r->tid), "CPU wait", "runtime", r->t0, r->t1 - r->t0, a);
		k->c.cpu_waits++;
		break;
	default:
		break;
	}
}

/* A logged signal, for the flows: its fence, value, CPU time and track. */
struct rig_sig {
	uint64_t fence, value, ts;
	unsigned track;
};

static int rig_sig_cmp(const void *pa, const void *pb)
{
	const struct rig_sig *a = pa, *b = pb;
	if (a->fence != b->fence)
		return a->fence < b->fence ? -1 : 1;
	if (a->value != b->value)
		return a->value < b->value ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/* The signal that unblocked a wait for fence >= value that ended at end:
 * the least value reaching it (the earliest at that value), not after end. */
static const struct rig_sig *rig_unblocker(const struct rig_sig *s, size_t n, uint64_t fence, uint64_t value,
					   uint64_t end)
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
		if (s[i].ts <= end)
			return &s[i];
	return NULL;
}

/* Flows from each logged signal to the waits it unblocked. */
static int rig_trace_flows(struct rig_copy *k, const struct os_trace_rec *r, size_t n)
{
	struct rig_sig *s = malloc((n ? n : 1) * sizeof(*s));
	size_t ns = 0;
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (r[i].kind == OS_TRACE_LOG_SIGNAL)
			s[ns++] = (struct rig_sig){ .fence = r[i].fence, .value = r[i].value,
						    .ts = rig_trace_cpu_ns(&k->clock, r[i].t1),
						    .track = rig_track_queue(k, r[i].queue, r[i].engine) };
	qsort(s, ns, sizeof(*s), rig_sig_cmp);
	/* each arrow's ends strictly inside their spans (Perfetto binds an end
	 * to the slice enclosing it): mid-tick for log entries, a ns before a
	 * CPU wait's end */
	uint64_t half = rig_tick_ns(&k->clock) / 2;
	for (size_t i = 0; i < n; i++) {
		unsigned to;
		uint64_t end, at;
		if (r[i].kind == OS_TRACE_LOG_WAIT) {
			to = rig_track_queue(k, r[i].queue, r[i].engine);
			end = rig_trace_cpu_ns(&k->clock, r[i].t1);
			at = end + half;
		} else if (r[i].kind == OS_TRACE_CPU_WAIT && r[i].n == 0) {
			to = rig_track_cpu(k, r[i].tid);
			end = r[i].t1;
			at = end > r[i].t0 ? end - 1 : end;
		} else {
			continue;
		}
		const struct rig_sig *from = rig_unblocker(s, ns, r[i].fence, r[i].value, end);
		if (from) {
			fb_trace_flow(k->t, "unblocks", from->track, from->ts + half, to, at);
			k->c.flows++;
		}
	}
	free(s);
	return 0;
}

/* What the trace says of itself (otherData), per label. */
static void rig_trace_notes(struct rig_copy *k)
{
	char key[128], v[256];
	snprintf(key, sizeof(key), "%s", k->label);
	snprintf(v, sizeof(v), "%zu records, %llu dropped (the record array was full), %zu signal and %zu wait log "
		 "entries, %llu log entries lost to overruns, %zu flows; GPU timestamps at %llu Hz converted",
		 k->c.records, (unsigned long long)k->c.dropped, k->c.log_signals, k->c.log_waits,
		 (unsigned long long)k->c.lost, k->c.flows, (unsigned long long)k->clock.hz);
	fb_trace_note(k->t, key, v);
	if (!k->c.log_signals && !k->c.log_waits) {
		snprintf(key, sizeof(key), "%s: log entries", k->label);
		fb_trace_note(k->t, key, "none: the run's queues were not user-mode HW queues (kernel-mode and direct "
			      "queues have no native fence log buffers), so no queued events or flows either");
	}
}

int rig_trace_copy(struct rt_stack *s, struct fb_trace *t, const char *label, enum rig_trace_broken broken,
		   struct rig_trace_counts *c)
{
	struct rig_copy k = { .t = t, .label = label, .irq_tid = rt_stack_irq_tid(s) };
	k.clock.broken = broken;
	rt_stack_clock_calibration(s, &k.clock.gpu, &k.clock.cpu, &k.clock.hz);
	size_t max = rt_stack_trace_flush(s) + 1;   /* settled, the last log entries read */
	struct os_trace_rec *r = malloc(max * sizeof(*r));
	if (!r)
		return -ENOMEM;
	/* the interrupt thread's and the engines' tracks first, in that order */
	size_t n = rt_stack_trace_take(s, r, max, &k.c.dropped);
	k.c.records = n;
	rig_track_cpu(&k, k.irq_tid);
	for (unsigned e = 0; e < rt_stack_engines(s); e++)
		rig_track_engine(&k, e);
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
