/* benchmarks/scenarios/fence_vk.c — gpu-wait and cpu-wait on a Vulkan
 * device: contract in fence_vk.h.  The device is the workloads' Vulkan
 * backend (benchmarks/vulkan/vk_graph.h), reached through the workload
 * (benchmarks/workload.h): no second bring-up.  Latencies come from the
 * backend's record of each list's GPU timestamps (work_spans), taken while
 * it traces the measured rounds; with --trace that record is the run's
 * timeline too. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks/scenarios/fence_vk.h"
#include "benchmarks/trace_rig.h"
#include "benchmarks/vulkan/vk_graph.h"
#include "benchmarks/workload.h"
#include "lockfree/arch.h"
#include "src/fb_hist.h"
#include "src/fb_scenario.h"

struct fvk {
	struct bm_wl w;
	bool gpu;                       /* gpu-wait: queue B waits on the GPU; else the CPU waits */
	struct bm_list *work, *after;   /* A's work; B's list past its wait */
	struct bm_fence *f, *g;         /* A signals f; B signals g */
	uint64_t v;                     /* the last round's value */
	uint64_t *woke;                 /* cpu-wait, measured rounds: when each CPU wait returned */
	size_t nwoke;
};

bool bm_fence_vk_wanted(const struct fb_run *run)
{
	return !strcmp(fb_run_enum(run, "backend"), "vulkan");
}

/* A closed list of one command of ns, named for the timeline. */
static int fvk_list(struct bm_wl *w, enum rt_list_type t, enum rt_op op, uint64_t ns, const char *name,
		    struct bm_list **out)
{
	int rc = bm_list_create(w, t, name, out);
	if (!rc)
		rc = bm_list_record(w, *out, op, ns, 1);
	return rc ? rc : bm_list_close(w, *out);
}

/* The lists (the caller's on every backend), then the device: 0 / -ETIMEDOUT. */
static int fvk_down(struct fvk *x)
{
	if (x->work)
		bm_list_destroy(&x->w, x->work);
	if (x->after)
		bm_list_destroy(&x->w, x->after);
	return bm_wl_down(&x->w);
}

/* The device, its scheduler thread registered, its notes; the lists and fences. */
static int fvk_up(struct fb_run *run, struct fvk *x)
{
	struct bm_wl_config c = {
		.backend = BM_BACKEND_VULKAN, .path = fb_run_path(run) == FB_PATH_LEGACY ? RT_PATH_LEGACY : RT_PATH_NATIVE,
		.validate = fb_run_bool(run, "validate"), .device = (int)fb_run_int(run, "device"),
		.allow_cpu = fb_run_bool(run, "allow_cpu"),
	};
	char err[512] = "";
	int rc = bm_wl_up_config(&x->w, &c, err, sizeof(err));
	if (rc)
		return fb_run_error(run, rc, "backend=vulkan: %s", err);
	pid_t tid = bm_vkg_sched_tid(x->w.be);
	if (tid > 0)
		fb_run_thread(run, "vk-sched", tid);
	for (size_t i = 0; i < sizeof(x->w.notes) / sizeof(x->w.notes[0]); i++)
		if (x->w.notes[i][0])
			fb_run_note(run, "%s", x->w.notes[i]);
	struct bm_wl *w = &x->w;
	rc = fvk_list(w, RT_LIST_COMPUTE, RT_OP_DISPATCH, (uint64_t)(fb_run_double(run, "work_us") * 1000.0), "work",
		      &x->work);
	if (!rc && x->gpu)
		rc = fvk_list(w, RT_LIST_DIRECT, RT_OP_DRAW, 0, "past the wait", &x->after);
	if (!rc)
		rc = bm_fence_create(w, &x->f);
	if (!rc && x->gpu)
		rc = bm_fence_create(w, &x->g);
	if (!rc)
		rc = bm_wl_name_fence(w, x->f, "signaled");
	if (rc) {
		fvk_down(x);
		return fb_run_error(run, rc, "backend=vulkan: setting the rounds up: %s", strerror(-rc));
	}
	return 0;
}

/* One lockstep round (fence_vk.h). */
static int fvk_round(struct fvk *x, bool measured)
{
	struct bm_wl *w = &x->w;
	uint64_t v = ++x->v;
	int rc = bm_execute(w, w->compute, &x->work, 1);
	if (!rc)
		rc = bm_signal(w, w->compute, x->f, v);
	if (x->gpu) {
		if (!rc)
			rc = bm_wait(w, w->direct, x->f, v);
		if (!rc)
			rc = bm_execute(w, w->direct, &x->after, 1);
		if (!rc)
			rc = bm_signal(w, w->direct, x->g, v);
		return rc ? rc : bm_wl_cpu_wait(w, x->g, v);
	}
	if (!rc)
		rc = bm_wl_cpu_wait(w, x->f, v);
	if (!rc && measured)
		x->woke[x->nwoke++] = w->woke_ns;   /* stamped as the wait returned, before any trace work */
	return rc;
}

/* The measured rounds' latencies: A's work ended -> B's list started
 * (gpu-wait), or -> the CPU wait returned (cpu-wait).  NULL (noted) where
 * the device's queue has no timestamps. */
static struct fb_hist *fvk_latencies(struct fb_run *run, struct fvk *x, uint64_t rounds, int *err)
{
	struct bm_wl *w = &x->w;
	uint64_t *a0 = calloc(rounds, sizeof(uint64_t)), *a1 = calloc(rounds, sizeof(uint64_t));
	uint64_t *b0 = calloc(rounds, sizeof(uint64_t)), *b1 = calloc(rounds, sizeof(uint64_t));
	size_t na = 0, nb = rounds;
	int rc = a0 && a1 && b0 && b1 ? 0 : -ENOMEM;
	if (!rc)
		rc = w->ops->work_spans(w->be, w->compute, a0, a1, rounds, &na);
	if (!rc && x->gpu)
		rc = w->ops->work_spans(w->be, w->direct, b0, b1, rounds, &nb);
	struct fb_hist *h = NULL;
	uint64_t dev_ns = 0;
	bool uncalibrated = !x->gpu && !bm_vkg_clock_calibrated(w->be, &dev_ns);
	if (rc == -ENOTSUP)
		fb_run_note(run, "backend=vulkan: no %s latency: a queue has no timestamps, or none on the host "
			    "clock (no calibrated timestamps, a second device queue)", x->gpu ? "gpu_wait" : "cpu_wait");
	else if (rc == -ENOBUFS)
		rc = fb_run_error(run, rc, "backend=vulkan: %llu rounds need more list records than the backend keeps "
				  "(%zu): run fewer --iterations", (unsigned long long)rounds, bm_vkg_trace_cap(w->be));
	else if (!rc && uncalibrated) {
		fb_run_note(run, "backend=vulkan: cpu_wait n/a: without calibrated timestamps "
			    "(VK_EXT_calibrated_timestamps) the GPU's signal time on the host clock is known only "
			    "within the GPU-to-host latency itself");
		rc = -ENOTSUP;
	} else if (!rc && (na != rounds || nb != rounds))
		rc = fb_run_error(run, -EIO, "backend=vulkan: %zu and %zu lists timed for %llu rounds", na, nb,
				  (unsigned long long)rounds);
	else if (!rc) {
		if (!x->gpu)
			fb_run_note(run, "backend=vulkan: cpu_wait: GPU times on the host clock by calibrated "
				    "timestamps, within +-%llu ns", (unsigned long long)dev_ns);
		h = fb_hist_new();
		for (uint64_t i = 0; i < rounds; i++) {
			uint64_t end = x->gpu ? b0[i] : x->woke[i];
			fb_hist_record(h, end > a1[i] ? end - a1[i] : 0);   /* timestamps' granularity: never below 0 */
		}
	}
	if (rc == -ENOMEM)
		rc = fb_run_error(run, rc, "backend=vulkan: no memory for %llu rounds", (unsigned long long)rounds);
	free(a0);
	free(a1);
	free(b0);
	free(b1);
	*err = rc == -ENOTSUP ? 0 : rc;
	return h;
}

/* The region's keys, as the model's scenario names them (a key the device
 * cannot measure is left out). */
static void fvk_report(struct fb_run *run, struct fvk *x, const struct bm_wl_snap *a, const struct bm_wl_snap *b,
		       uint64_t rounds, struct fb_hist *h)
{
	uint64_t signals = b->gpu_signals - a->gpu_signals;
	if (h && x->gpu)
		fb_run_hist(run, "gpu_wait", h, FB_LIMIT_CACHELINE_RTT);
	fb_run_metric(run, "signals", (double)signals, "signals");
	if (b->has_interrupts) {
		fb_run_metric(run, "interrupts", (double)(b->interrupts - a->interrupts), "irq");
		fb_run_metric(run, "interrupts_per_signal",
			      (double)(b->interrupts - a->interrupts) / (double)(signals ? signals : 1), "irq/signal");
	}
	if (x->gpu) {
		fb_run_metric(run, "waits", (double)rounds, "waits");
		fb_run_metric(run, "held_waits", (double)(b->held_waits - a->held_waits), "waits");
	} else {
		fb_run_metric(run, "waited_signals", (double)rounds, "signals");
		if (h)
			fb_run_hist(run, "cpu_wait", h, FB_LIMIT_FUTEX_WAKE);
	}
	if (b->validating)
		fb_run_metric(run, "validation_errors", (double)(b->validation_errors - a->validation_errors), "reports");
	struct bm_host host = b->host;
	bm_host_sub(&host, &a->host);
	fb_run_section(run, "cpu");
	bm_host_report(run, &host, signals, BM_HOST_PER_SIGNAL);
	fb_run_section(run, "");
}

/* Warm up, trace and measure the rounds, report; with --trace the rounds'
 * timeline into the run's. */
static int fvk_measure(struct fb_run *run, struct fvk *x, uint64_t rounds)
{
	struct bm_wl *w = &x->w;
	int rc = 0;
	for (uint64_t until = lf_now_ns() + fb_run_warmup_ns(run); !rc && lf_now_ns() < until;)
		rc = fvk_round(x, false);
	if (!rc)
		rc = w->ops->trace_start(w->be, 0);   /* the lists' GPU timestamps: the latencies' record */
	w->trace_waits = fb_run_trace(run) != NULL;   /* the CPU waits only when the run traces */
	struct bm_wl_snap a, b;
	bm_wl_snap(w, &a);
	fb_run_measure_begin(run);
	for (uint64_t i = 0; !rc && i < rounds; i++)
		rc = fvk_round(x, true);
	bm_wl_snap(w, &b);
	fb_run_measure_end(run, rounds);
	if (rc)
		return fb_run_error(run, rc, "backend=vulkan: round %llu: %s", (unsigned long long)x->v,
				    *bm_wl_stall(w) ? bm_wl_stall(w) : strerror(-rc));
	struct fb_hist *h = fvk_latencies(run, x, rounds, &rc);
	if (!rc)
		fvk_report(run, x, &a, &b, rounds, h);
	fb_hist_free(h);
	if (!rc && fb_run_trace(run)) {
		char label[64];
		struct bm_trace_counts c;
		rig_trace_label(run, label, sizeof(label));
		rc = w->ops->trace_copy(w->be, fb_run_trace(run), label, &c);
		if (rc)
			return fb_run_error(run, rc, "--trace: %s", strerror(-rc));
		fb_run_note(run, "trace (%s): %zu work spans, %zu holds, %zu CPU waits; %s", label, c.work, c.holds,
			    c.cpu_waits, c.clock);
		if (c.unclocked)
			fb_run_note(run, "trace (%s): %zu queues' work not drawn: their GPU clock is not on the host's "
				    "(no calibrated timestamps, another device queue)", label, c.unclocked);
		if (c.dropped)
			fb_run_note(run, "trace (%s): %llu records dropped: the backend keeps %zu: shorten the run",
				    label, (unsigned long long)c.dropped, c.cap);
	}
	return rc;
}

int bm_fence_vk_run(struct fb_run *run, bool gpu)
{
	struct fvk x = { .gpu = gpu };
	uint64_t rounds = fb_run_iterations(run) ? fb_run_iterations(run) : 5000;
	if (!gpu && !(x.woke = calloc(rounds, sizeof(uint64_t))))
		return fb_run_error(run, -ENOMEM, "backend=vulkan: no memory for %llu rounds", (unsigned long long)rounds);
	int rc = fvk_up(run, &x);
	if (!rc) {
		rc = fvk_measure(run, &x, rounds);
		int down = fvk_down(&x);
		if (!rc && down)
			rc = fb_run_error(run, down, "backend=vulkan: the device did not drain");
	}
	free(x.woke);
	return rc;
}
