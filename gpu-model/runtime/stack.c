/* gpu-model/runtime/stack.c — bring-up and teardown of the whole stack, its
 * role threads and statistics, the direct queue.  Contract in stack.h. */
#include <stdio.h>
#include <string.h>

#include "gpu-model/runtime/stack.h"
#include "lockfree/alloc.h"
#include "lockfree/cacheline.h"

struct rt_stack {
	struct os_adapter *a;
	struct os_ums *u;
	struct rt_device *d;
};

void rt_stack_config_default(struct rt_stack_config *cfg, enum rt_path path)
{
	os_config_default(&cfg->os);
	/* legacy: a WDDM 2.x adapter, monitored fences only */
	cfg->os.caps.native_fence = path == RT_PATH_NATIVE;
	cfg->os.native_fence_enabled = path == RT_PATH_NATIVE;
	os_ums_config_default(&cfg->ums);
}

void rt_profile_ideal(struct rt_profile *p)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "ideal");
}

bool rt_profile_is_ideal(const struct rt_profile *p)
{
	static const struct hw_timing hw0;
	static const struct os_timing os0;
	return !memcmp(&p->hw, &hw0, sizeof(hw0)) && !memcmp(&p->os, &os0, sizeof(os0));
}

void rt_profile_apply(const struct rt_profile *p, struct os_config *cfg)
{
	cfg->caps.timing = p->hw;
	cfg->timing = p->os;
}

/* Start the adapter, attach user-mode submission, open the device: each step
 * undone by rt_stack_down when a later one fails.  err says which failed. */
static int rt_stack_up(struct rt_stack *s, const struct rt_stack_config *cfg, char *err, size_t errlen)
{
	int rc = os_adapter_start(s->a);
	if (rc) {
		snprintf(err, errlen, "starting the adapter: %s", strerror(-rc));
		return rc;
	}
	rc = os_ums_attach(s->a, &cfg->ums, &s->u, err, errlen);
	if (rc)
		return rc;
	rc = rt_device_create(s->u, &s->d);
	if (rc)
		snprintf(err, errlen, "creating the device: %s", strerror(-rc));
	return rc;
}

/* Close the device: its queues drain with the engines running, then the
 * engines stop, then its fences and queues are freed.  The order matters:
 * an engine's CMP still reads a fence (its MonitoredValue) after writing
 * the value a CPU waiter returns on (hw_engine_signal), and only joining the
 * engine orders that read before the fence's storage is freed. */
static int rt_stack_close_device(struct rt_stack *s)
{
	int rc = os_device_destroy(rt_device_os(s->d));   /* normal termination: drains */
	hw_adapter_stop(os_adapter_hw(s->a));              /* joins the engines */
	int rc2 = rt_device_destroy(s->d);                 /* the device is closed: frees only */
	return rc ? rc : rc2;
}

/* Tear down what exists, last first. */
static int rt_stack_down(struct rt_stack *s)
{
	int rc = s->d ? rt_stack_close_device(s) : 0;
	os_ums_detach(s->u);        /* NULL is ignored */
	os_adapter_destroy(s->a);
	lf_free(s, sizeof(*s), LF_CACHELINE);
	return rc;
}

int rt_stack_create(const struct rt_stack_config *cfg, struct rt_stack **out, char *err, size_t errlen)
{
	struct rt_stack *s = lf_alloc(sizeof(*s), LF_CACHELINE);
	memset(s, 0, sizeof(*s));
	if (errlen)
		err[0] = 0;
	int rc = os_adapter_create(&cfg->os, &s->a, err, errlen);
	if (rc) {
		if (errlen && !err[0])
			snprintf(err, errlen, "creating the adapter: %s", strerror(-rc));
		lf_free(s, sizeof(*s), LF_CACHELINE);
		return rc;
	}
	rc = rt_stack_up(s, cfg, err, errlen);
	if (rc) {
		rt_stack_down(s);
		return rc;
	}
	*out = s;
	return 0;
}

int rt_stack_destroy(struct rt_stack *s)
{
	return rt_stack_down(s);
}

struct rt_device *rt_stack_device(struct rt_stack *s)
{
	return s->d;
}

bool rt_stack_native(const struct rt_stack *s)
{
	return os_adapter_native(s->a);
}

/* ---- role threads ---- */

unsigned rt_stack_engines(const struct rt_stack *s)
{
	return hw_adapter_caps(os_adapter_hw(s->a))->engines;
}

pid_t rt_stack_engine_tid(const struct rt_stack *s, unsigned engine)
{
	return hw_engine_tid(os_adapter_hw(s->a), engine);
}

pid_t rt_stack_irq_tid(const struct rt_stack *s)
{
	return os_adapter_irq_tid(s->a);
}

pid_t rt_stack_sched_tid(const struct rt_stack *s)
{
	return os_ums_sched_tid(s->u);
}

pid_t rt_stack_power_tid(const struct rt_stack *s)
{
	return os_ums_power_tid(s->u);
}

/* ---- statistics ---- */

void rt_stack_settle(struct rt_stack *s)
{
	hw_adapter_engines_barrier(os_adapter_hw(s->a));   /* the runs that wrote a value have raised */
	os_adapter_quiesce(s->a);                          /* ... and the OS has handled what they raised */
}

void rt_stack_settle_irqs(struct rt_stack *s)
{
	hw_adapter_engines_barrier(os_adapter_hw(s->a));
	os_adapter_irq_sync(s->a);
}

void rt_stack_os_stats(struct rt_stack *s, struct os_stats *out)
{
	os_adapter_stats(s->a, out);
}

void rt_stack_ums_stats(struct rt_stack *s, struct os_ums_stats *out)
{
	os_ums_stats(s->u, out);
}

void rt_stack_engine_preempt_stats(struct rt_stack *s, unsigned engine, struct hw_engine_preempt_stats *out)
{
	hw_engine_preempt_stats(os_adapter_hw(s->a), engine, out);
}

int rt_stack_device_create(struct rt_stack *s, struct rt_device **out)
{
	return rt_device_create(s->u, out);
}

void rt_stack_cross_stats(struct rt_stack *s, struct os_cross_stats *out)
{
	os_adapter_cross_stats(s->a, out);
}

uint64_t rt_stack_ddi_count(struct rt_stack *s, enum os_ddi ddi)
{
	return os_adapter_ddi_count(s->a, ddi);
}

void rt_stack_engine_um_stats(struct rt_stack *s, unsigned engine, struct hw_engine_um_stats *out)
{
	hw_engine_um_stats(os_adapter_hw(s->a), engine, out);
}

void rt_stack_engine_stats(struct rt_stack *s, unsigned engine, struct hw_engine_stats *out)
{
	hw_engine_stats(os_adapter_hw(s->a), engine, out);
}

enum hw_fstate rt_stack_engine_fstate(struct rt_stack *s, unsigned engine)
{
	return hw_engine_fstate(os_adapter_hw(s->a), engine);
}

/* ---- the timeline trace ---- */

int rt_stack_trace_start(struct rt_stack *s, size_t records)
{
	return os_ums_trace_start(s->u, records, 0);
}

bool rt_stack_tracing(const struct rt_stack *s)
{
	return os_tracing(s->a);
}

size_t rt_stack_trace_count(const struct rt_stack *s)
{
	return os_trace_count(s->a);
}

size_t rt_stack_trace_flush(struct rt_stack *s)
{
	rt_stack_settle(s);          /* the last signals' interrupts handled */
	os_logs_read_every(s->a);    /* entries no interrupt made the OS read */
	return os_trace_count(s->a);
}

size_t rt_stack_trace_take(struct rt_stack *s, struct os_trace_rec *out, size_t max, uint64_t *dropped)
{
	return os_trace_take(s->a, out, max, dropped);
}

void rt_stack_clock_calibration(struct rt_stack *s, uint64_t *gpu, uint64_t *cpu_ns, uint64_t *hz)
{
	hw_clock_calibration(os_adapter_hw(s->a), gpu, cpu_ns, hz);
}

/* ---- the direct queue ----
 * An rt_direct_queue is the OS queue itself: the runtime keeps no state of
 * its own for it, so a submission costs exactly what os_queue_submit costs.
 * The pointer is converted back and forth, never dereferenced as its own type. */

static struct os_queue *rt_direct_os(struct rt_direct_queue *q)
{
	return (struct os_queue *)q;
}

int rt_direct_queue_create(struct rt_stack *s, unsigned engine, size_t ring_slots, struct rt_direct_queue **out)
{
	struct os_queue *q;
	int rc = os_queue_create(s->a, engine, ring_slots, &q);
	if (!rc)
		*out = (struct rt_direct_queue *)q;
	return rc;
}

int rt_direct_queue_submit(struct rt_direct_queue *q, const struct hw_cmd *cmds, size_t n)
{
	return os_queue_submit(rt_direct_os(q), cmds, n);
}
