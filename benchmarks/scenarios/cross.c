/* benchmarks/scenarios/cross.c — "cross-adapter": a fence shared by two adapters.
 *
 * Adapter A signals a cross-adapter fence; adapter B waits on it, on the GPU
 * (a WAIT in B's queue) or on the CPU.  Native path: both adapters native, a
 * native cross-adapter fence — MonitoredValue is 0 for its lifetime, so every
 * signal on A interrupts; A's interrupt thread propagates the value to B
 * (DxgkDdiUpdateCurrentValuesFromCpu NotificationOnly: B's engine re-runs its
 * run list; B's CPU waiters are released by B's interrupt thread).  Legacy
 * path: both adapters monitored-fence only; B's GPU wait is held on the CPU by
 * B's OS and submitted when A's propagated signal reaches it.
 *
 * What it shows (seed native-gpu-fence, "Cross-adapter native fences"): the
 * interrupt suppression of native fences is lost across adapters (one
 * interrupt per signal on both paths), while the GPU wait saves the CPU hop
 * through B's interrupt thread.  Lock-step rounds: each signal is waited for
 * before the next is submitted; every wait is bounded (1 s) and a wait that
 * hits its bound ends the run with an error.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "benchmarks/profile.h"
#include "src/fb_hist.h"
#include "benchmarks/trace_rig.h"
#include "src/fb_scenario.h"
#include "gpu-model/runtime/stack.h"
#include "lockfree/arch.h"

#define CROSS_DEADLINE_NS 1000000000ull

static const struct fb_param cross_params[] = {
	FB_PARAM_ENUM("waiter", "gpu", "what waits on adapter B", "gpu", "cpu"),
	FB_PARAM_DOUBLE("work_us", "us", 5.0, 0.0, 10000.0, "adapter A's GPU work before each signal"),
	FB_PARAM_END
};

struct cross_rig {
	struct rt_stack *a, *b;         /* adapter A and adapter B, each with its OS and a device */
	struct rt_fence *fa, *fb;       /* the fence's instances on A and B */
	struct rt_direct_queue *qa, *qb;
	int cpus_a[1], cpus_b[1];
	bool gpu_wait;
	uint64_t work_ns;
};

/* Engines on the run's last CPUs (A's on the last, B's on the one before,
 * wrapping), the application on the first. */
static void cross_config(struct fb_run *run, struct rt_stack_config *sc, int *cpu, size_t slot_from_end)
{
	rt_stack_config_default(sc, fb_run_path(run) == FB_PATH_LEGACY ? RT_PATH_LEGACY : RT_PATH_NATIVE);
	struct os_config *cfg = &sc->os;
	cfg->caps.engines = 1;
	bm_profile_config(run, cfg);
	size_t n = fb_run_ncpus(run);
	if (n >= 2) {
		cpu[0] = fb_run_cpu(run, n - 1 - (slot_from_end % n));
		cfg->caps.cpus = cpu;
		cfg->caps.ncpus = 1;
	}
}

static void cross_down(struct cross_rig *r)
{
	if (r->fb)
		rt_fence_destroy(r->fb);
	if (r->fa)
		rt_fence_destroy(r->fa);
	rt_stack_destroy(r->b);
	rt_stack_destroy(r->a);
}

static int cross_up(struct fb_run *run, struct cross_rig *r)
{
	struct rt_stack_config ca, cb;
	char err[256];
	memset(r, 0, sizeof(*r));
	cross_config(run, &ca, r->cpus_a, 0);
	cross_config(run, &cb, r->cpus_b, 1);
	int rc = rt_stack_create(&ca, &r->a, err, sizeof(err));
	if (rc)
		return fb_run_error(run, rc, "adapter A: %s", err);
	rc = rt_stack_create(&cb, &r->b, err, sizeof(err));
	if (rc) {
		rt_stack_destroy(r->a);
		return fb_run_error(run, rc, "adapter B: %s", err);
	}
	/* native on native adapters, monitored on legacy ones (the path's type) */
	rc = rt_fence_create_cross(rt_stack_device(r->a), 0, &r->fa);
	if (!rc)
		rc = rt_fence_open_cross(r->fa, rt_stack_device(r->b), &r->fb);
	if (!rc)
		rc = rt_direct_queue_create(r->a, 0, 64, &r->qa);
	if (!rc)
		rc = rt_direct_queue_create(r->b, 0, 64, &r->qb);
	if (rc) {
		cross_down(r);
		return fb_run_error(run, rc, "setting up two adapters and a cross-adapter fence: %s", strerror(-rc));
	}
	if ((rc = rig_trace_run_start(run, r->a)) || (rc = rig_trace_run_start(run, r->b))) {
		cross_down(r);
		return rc;
	}
	r->gpu_wait = !strcmp(fb_run_enum(run, "waiter"), "gpu");
	r->work_ns = (uint64_t)(fb_run_double(run, "work_us") * 1000.0);
	fb_run_pin_self(run, 0);
	fb_run_thread(run, "os-irq-a", rt_stack_irq_tid(r->a));
	fb_run_thread(run, "os-irq-b", rt_stack_irq_tid(r->b));
	fb_run_thread(run, "engine-a", rt_stack_engine_tid(r->a, 0));
	fb_run_thread(run, "engine-b", rt_stack_engine_tid(r->b, 0));
	return 0;
}

/* One round: A signals v, B waits for it.  The latency (ns) from A's engine
 * stamping just before its signal to B past its wait, or 0 when the wait hit
 * its bound. */
static uint64_t cross_round(struct cross_rig *r, uint64_t v)
{
	_Atomic uint64_t ta = 0, tb = 0;
	struct hw_cmd s[3] = {
		{ .op = HW_CMD_WORK, .arg = r->work_ns },
		{ .op = HW_CMD_STAMP, .stamp = &ta },
		rt_cmd_signal(r->fa, v),
	};
	if (r->gpu_wait) {
		struct hw_cmd w[2] = {
			rt_cmd_wait(r->fb, v),
			{ .op = HW_CMD_STAMP, .stamp = &tb },
		};
		rt_direct_queue_submit(r->qb, w, 2);
		rt_direct_queue_submit(r->qa, s, 3);
		uint64_t end = lf_now_ns() + CROSS_DEADLINE_NS;
		for (unsigned spin = 0; !atomic_load_explicit(&tb, memory_order_acquire); spin++) {
			if (spin > 64)
				sched_yield();
			if ((spin & 255) == 0 && lf_now_ns() > end)
				return 0;
		}
		return (uint64_t)lf_ticks_ns(atomic_load(&tb) - atomic_load(&ta));
	}
	rt_direct_queue_submit(r->qa, s, 3);
	if (rt_fence_wait(r->fb, v, (int64_t)CROSS_DEADLINE_NS))
		return 0;
	uint64_t now = lf_ticks();    /* the engines' stamps count lf_ticks() */
	return (uint64_t)lf_ticks_ns(now - atomic_load_explicit(&ta, memory_order_acquire));
}

struct cross_snap {
	struct os_stats a, b;
	struct os_cross_stats xa, xb;
	uint64_t notify_b;
	uint64_t t;
};

static void cross_snap(struct cross_rig *r, struct cross_snap *s)
{
	rt_stack_os_stats(r->a, &s->a);
	rt_stack_os_stats(r->b, &s->b);
	rt_stack_cross_stats(r->a, &s->xa);
	rt_stack_cross_stats(r->b, &s->xb);
	s->notify_b = rt_stack_ddi_count(r->b, OS_DDI_UPDATE_CV_NOTIFY_ONLY);
	s->t = lf_now_ns();
}

/* Let both stacks settle: the last signals raised and handled on A and on B. */
static void cross_drain(struct cross_rig *r)
{
	rt_stack_settle(r->a);
	rt_stack_settle(r->b);
}

#define D(field) ((double)(e->field - s->field))

static void cross_report(struct fb_run *run, const struct cross_snap *s, const struct cross_snap *e)
{
	double sig = D(a.gpu_signals) > 0 ? D(a.gpu_signals) : 1.0;
	double secs = (e->t - s->t) / 1e9;
	fb_run_metric(run, "signals", D(a.gpu_signals), "signals");
	fb_run_metric(run, "interrupts", D(a.gpu_interrupts), "irq");
	fb_run_metric(run, "interrupts_per_signal", D(a.gpu_interrupts) / sig, "irq/signal");
	fb_run_metric(run, "propagated_per_signal", D(xa.propagated) / sig, "values/signal");
	fb_run_metric(run, "notify_only_ddis_per_signal", (double)(e->notify_b - s->notify_b) / sig, "calls/signal");
	fb_run_metric(run, "b_os_work_per_signal", D(xb.soft_raised) / sig, "items/signal");
	fb_run_metric(run, "spurious_interrupts", D(a.spurious), "irq");
	fb_run_metric(run, "lost_wakeups", D(a.lost_wakeups) + D(b.lost_wakeups), "waiters");
	fb_run_section(run, "power");
	double ta = D(a.isr_busy_ns) + D(a.irq_idle_ns), tb = D(b.isr_busy_ns) + D(b.irq_idle_ns);
	fb_run_metric(run, "os_irq_a_idle_fraction", ta > 0 ? D(a.irq_idle_ns) / ta : 1.0, "ratio");
	fb_run_metric(run, "os_irq_b_idle_fraction", tb > 0 ? D(b.irq_idle_ns) / tb : 1.0, "ratio");
	fb_run_metric(run, "os_irq_a_wakeups_per_s", secs > 0 ? D(a.irq_wakeups) / secs : 0.0, "wakeups/s");
	fb_run_metric(run, "os_irq_b_wakeups_per_s", secs > 0 ? D(b.irq_wakeups) / secs : 0.0, "wakeups/s");
	fb_run_section(run, "");
}

static int cross_run(struct fb_run *run)
{
	struct cross_rig r;
	int rc = cross_up(run, &r);
	if (rc)
		return rc;
	uint64_t v = 0, warm_end = lf_now_ns() + fb_run_warmup_ns(run);
	while (lf_now_ns() < warm_end)
		if (!cross_round(&r, ++v))
			goto hung;
	cross_drain(&r);
	struct fb_hist *h = fb_hist_new();
	struct cross_snap s0, s1;
	cross_snap(&r, &s0);
	fb_run_measure_begin(run);
	uint64_t n = 0;
	while (fb_run_continue(run, n)) {
		uint64_t ns = cross_round(&r, ++v);
		if (!ns) {
			fb_run_measure_end(run, n ? n : 1);
			fb_hist_free(h);
			goto hung;
		}
		fb_hist_record(h, ns);
		n++;
	}
	fb_run_measure_end(run, n);
	cross_drain(&r);
	cross_snap(&r, &s1);
	fb_run_hist(run, r.gpu_wait ? "gpu_wait" : "cpu_wait", h, FB_LIMIT_FUTEX_WAKE);
	cross_report(run, &s0, &s1);
	/* one timeline per adapter: a signal on A and the wait it releases on B
	 * are in two groups, joined by the fence's value, not by an arrow */
	int rc2 = rig_trace_run_copy(run, r.a, "adapter A", NULL, 0);
	if (!rc2)
		rc2 = rig_trace_run_copy(run, r.b, "adapter B", NULL, 0);
	if (rc2) {
		fb_hist_free(h);
		cross_down(&r);
		return rc2;
	}
	if (s1.a.lost_wakeups + s1.b.lost_wakeups)
		fb_run_note(run, "%llu lost wake-ups: the cross-adapter propagation is broken",
			    (unsigned long long)(s1.a.lost_wakeups + s1.b.lost_wakeups));
	fb_hist_free(h);
	cross_down(&r);
	return 0;

hung:
	cross_down(&r);
	return fb_run_error(run, -ETIMEDOUT, "adapter B did not get past its wait for value %llu within 1 s",
			    (unsigned long long)v);
}

const struct fb_scenario bm_scenario_cross_adapter = {
	.name = "cross-adapter",
	.summary = "fence signaled on adapter A, waited on adapter B: interrupts per signal and wait latency",
	.params = cross_params, .compares_paths = true, .polling_threads = 2,
	.default_iterations = 2000, .takes_duration = true, .default_warmup_s = 0.05, .takes_trace = true,
	.run = cross_run,
};
