/* benchmarks/scenarios/preempt.c — GPU preemption scenarios (seed gpu-preemption).
 *
 * preempt: a 60 Hz compositor at high priority beside long low-priority
 *   work on one engine.  At every vsync the compositor submits a small frame
 *   (one short WORK) and waits for it; latency = submission to completion
 *   seen by the CPU; a frame not complete by the next vsync is a missed vsync
 *   (the seed's DWM "glitches").  The low-priority queue always has two long
 *   commands queued.  Per granularity (the same levels name the graphics and
 *   compute enumerations), kernel- or user-mode queues, PreemptionAware.
 *   Expected: latency falls with finer granularity; NONE is bounded by the
 *   long command.
 * tdr: per iteration a process hangs the engine (a WORK that never ends, on
 *   an engine that cannot stop inside it) while another process has work
 *   queued behind it; time from the hang to the hung queue's waiter released
 *   (device lost) and to the survivor's work complete; innocent work lost
 *   must be 0.
 * Both through gpu-model/runtime only.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "benchmarks/profile.h"
#include "src/fb_hist.h"
#include "src/fb_limits.h"
#include "benchmarks/trace_rig.h"
#include "src/fb_scenario.h"
#include "gpu-model/runtime/stack.h"
#include "lockfree/arch.h"

#define BM_PREEMPT_DEADLINE_NS 10000000000ll

static const char *const bm_granularities[] = { "none", "dma", "primitive", "triangle", "pixel", "shader" };

static int bm_granularity(const struct fb_run *run)
{
	const char *g = fb_run_enum(run, "granularity");
	for (int i = 0; i < 6; i++)
		if (!strcmp(g, bm_granularities[i]))
			return i;
	return 2;
}

static int bm_stack_up(struct fb_run *run, struct rt_stack_config *sc, struct rt_stack **s)
{
	char err[256] = "";
	sc->os.caps.engines = 1;
	bm_profile_config(run, &sc->os);
	int rc = rt_stack_create(sc, s, err, sizeof(err));
	if (rc)
		return fb_run_error(run, rc, "%s", err);
	fb_run_thread(run, "engine0", rt_stack_engine_tid(*s, 0));
	fb_run_thread(run, "os-irq", rt_stack_irq_tid(*s));
	fb_run_thread(run, "os-sched", rt_stack_sched_tid(*s));
	return 0;
}

/* ---- preempt ---- */

static const struct fb_param preempt_params[] = {
	FB_PARAM_ENUM("granularity", "primitive", "preemption granularity (graphics / compute levels)", "none", "dma",
		      "primitive", "triangle", "pixel", "shader"),
	FB_PARAM_ENUM("kind", "graphics", "the WORK's kind: which granularity applies", "graphics", "compute"),
	FB_PARAM_ENUM("queue", "kernel", "submission of both queues", "kernel", "user"),
	FB_PARAM_BOOL("aware", true, "PreemptionAware (false: the Windows 7 model, never preempts)"),
	FB_PARAM_INT("long_us", "us", 20000, 100, 1000000, "one low-priority command"),
	FB_PARAM_INT("units", "units", 64, 1, 1000000, "sub-units (triangles / thread groups) of a long command"),
	FB_PARAM_INT("frame_us", "us", 500, 1, 16000, "the compositor's work per frame"),
	FB_PARAM_INT("save_ns", "ns", 5000, 0, 1000000, "context save (and restore) cost"),
	FB_PARAM_END
};

static int preempt_run(struct fb_run *run)
{
	struct rt_stack_config sc;
	rt_stack_config_default(&sc, fb_run_path(run) == FB_PATH_LEGACY ? RT_PATH_LEGACY : RT_PATH_NATIVE);
	int g = bm_granularity(run);
	bool compute = !strcmp(fb_run_enum(run, "kind"), "compute");
	sc.os.caps.gfx_preempt = (enum hw_gfx_preempt)g;
	sc.os.caps.compute_preempt = (enum hw_compute_preempt)g;
	sc.os.caps.preemption_aware = fb_run_bool(run, "aware");
	sc.os.caps.ctx_save_ns = sc.os.caps.ctx_restore_ns = (uint64_t)fb_run_int(run, "save_ns");
	struct rt_stack *s;
	int rc = bm_stack_up(run, &sc, &s);
	if (rc)
		return rc;
	bool um = !strcmp(fb_run_enum(run, "queue"), "user");
	struct rt_queue_desc lo_d = { .engine = 0, .user_mode = um }, hi_d = { .engine = 0, .user_mode = um, .priority = 10 };
	struct rt_queue *lo, *hi;
	rc = rt_queue_create(rt_stack_device(s), &lo_d, &lo);
	if (!rc)
		rc = rt_queue_create(rt_stack_device(s), &hi_d, &hi);
	if (rc) {
		rt_stack_destroy(s);
		return fb_run_error(run, rc, "creating the queues: %s", strerror(-rc));
	}
	if ((rc = rig_trace_run_start(run, s))) {
		rt_stack_destroy(s);
		return rc;
	}
	uint32_t pad = compute ? HW_WORK_COMPUTE : HW_WORK_GRAPHICS;
	struct hw_cmd longc = { .op = HW_CMD_WORK, .pad = pad, .arg = (uint64_t)fb_run_int(run, "long_us") * 1000,
				.value = (uint64_t)fb_run_int(run, "units") };
	struct hw_cmd frame = { .op = HW_CMD_WORK, .pad = pad, .arg = (uint64_t)fb_run_int(run, "frame_us") * 1000, .value = 1 };
	const uint64_t vsync = 16666667;   /* 60 Hz */
	uint64_t frames = fb_run_iterations(run) ? fb_run_iterations(run) : 60, missed = 0, lo_v = 0;
	struct fb_hist *h = fb_hist_new();
	fb_run_measure_begin(run);
	uint64_t t = lf_now_ns() + vsync;
	for (uint64_t i = 0; i < frames && !rc; i++) {
		/* two long commands always queued behind the compositor */
		while (!rc && rt_queue_submitted(lo) - rt_queue_completed(lo) < 2)
			rc = rt_queue_submit(lo, &longc, 1, &lo_v);
		lf_sleep_until(t);
		uint64_t t0 = lf_now_ns(), v;
		if (!rc)
			rc = rt_queue_submit(hi, &frame, 1, &v);
		if (!rc)
			rc = rt_queue_wait(hi, v, BM_PREEMPT_DEADLINE_NS);
		uint64_t t1 = lf_now_ns();
		fb_hist_record(h, t1 - t0);
		if (t1 > t + vsync)
			missed++;
		while (t < t1)
			t += vsync;           /* the next vsync after the frame */
	}
	fb_run_measure_end(run, frames);
	if (!rc)
		rc = rt_queue_wait(lo, 0, BM_PREEMPT_DEADLINE_NS);
	const struct rig_trace_queue names[2] = { { rt_queue_trace_handle(hi), "compositor (high priority)" },
						  { rt_queue_trace_handle(lo), "long work (low priority)" } };
	if (!rc)
		rc = rig_trace_run_copy(run, s, NULL, names, 2);
	struct hw_engine_preempt_stats st;
	rt_stack_engine_preempt_stats(s, 0, &st);
	struct os_ums_stats us;
	rt_stack_ums_stats(s, &us);
	int drc = rt_stack_destroy(s);
	if (rc || drc) {
		fb_hist_free(h);
		return fb_run_error(run, rc ? rc : drc, "a submission or wait failed: %s", strerror(-(rc ? rc : drc)));
	}
	fb_run_hist(run, "frame_latency", h, FB_LIMIT_FUTEX_WAKE);
	fb_run_metric(run, "missed_vsync_fraction", frames ? (double)missed / (double)frames : 0.0, "ratio");
	fb_run_metric(run, "preemptions", (double)st.preemptions, "preemptions");
	fb_run_metric(run, "at_buffer_end", (double)st.at_buffer_end, "preemptions");
	fb_run_metric(run, "mid_buffer", (double)st.mid_buffer, "preemptions");
	fb_run_metric(run, "mid_command", (double)st.mid_command, "preemptions");
	fb_run_metric(run, "sched_preempt_requests", (double)us.preempt_requests, "requests");
	fb_run_metric(run, "tdr_resets", (double)us.tdr_resets, "resets");
	fb_hist_free(h);
	return 0;
}

const struct fb_scenario bm_scenario_preempt = {
	.name = "preempt",
	.summary = "60 Hz high-priority compositor beside long low-priority work: frame latency and missed vsyncs by granularity",
	.params = preempt_params,
	.compares_paths = true,
	.polling_threads = 1,
	.default_iterations = 60,
	.takes_trace = true, .run = preempt_run,
};

/* ---- tdr ---- */

static const struct fb_param tdr_params[] = {
	FB_PARAM_INT("tdr_delay_ms", "ms", 50, 1, 10000, "TdrDelay"),
	FB_PARAM_ENUM("queue", "kernel", "submission of both processes' queues", "kernel", "user"),
	FB_PARAM_INT("innocent", "buffers", 8, 1, 60, "buffers the other process has queued behind the hang"),
	FB_PARAM_END
};

struct bm_tdr_times {
	uint64_t released_ns, survivor_ns, lost;
};

static int tdr_once(struct rt_stack *s, bool um, unsigned innocent, struct bm_tdr_times *r)
{
	struct rt_device *bad;
	int rc = rt_stack_device_create(s, &bad);
	if (rc)
		return rc;
	struct rt_queue_desc d = { .engine = 0, .user_mode = um };
	struct rt_queue *hq, *iq;
	_Atomic uint64_t count = 0;
	rc = rt_queue_create(bad, &d, &hq);
	if (!rc)
		rc = rt_queue_create(rt_stack_device(s), &d, &iq);
	struct hw_cmd hang = { .op = HW_CMD_WORK, .arg = UINT64_MAX };
	struct hw_cmd c = { .op = HW_CMD_COUNT, .stamp = &count };
	uint64_t hv = 0, iv = 0;
	uint64_t t0 = lf_now_ns();
	if (!rc)
		rc = rt_queue_submit(hq, &hang, 1, &hv);
	for (unsigned i = 0; !rc && i < innocent; i++)
		rc = rt_queue_submit(iq, &c, 1, &iv);
	if (!rc) {
		int w = rt_queue_wait(hq, hv, BM_PREEMPT_DEADLINE_NS);
		r->released_ns = lf_now_ns() - t0;
		rc = w == -EIO ? 0 : w ? w : -EPROTO;   /* released with device lost, never a completion */
	}
	if (!rc) {
		rc = rt_queue_wait(iq, iv, BM_PREEMPT_DEADLINE_NS);
		r->survivor_ns = lf_now_ns() - t0;
		r->lost = innocent - atomic_load(&count);
	}
	rt_device_destroy(bad);
	return rc;
}

static int tdr_run(struct fb_run *run)
{
	struct rt_stack_config sc;
	rt_stack_config_default(&sc, fb_run_path(run) == FB_PATH_LEGACY ? RT_PATH_LEGACY : RT_PATH_NATIVE);
	sc.os.caps.gfx_preempt = HW_GFX_PREEMPT_NONE;   /* nothing can stop the hang but a reset */
	sc.ums.tdr_delay_ns = fb_run_int(run, "tdr_delay_ms") * 1000000;
	sc.ums.tdr_limit_time_ns = 1;                   /* measure recoveries, not the bug check */
	struct rt_stack *s;
	int rc = bm_stack_up(run, &sc, &s);
	if (rc)
		return rc;
	bool um = !strcmp(fb_run_enum(run, "queue"), "user");
	uint64_t n = fb_run_iterations(run) ? fb_run_iterations(run) : 3, lost = 0;
	if ((rc = rig_trace_run_start(run, s))) {
		rt_stack_destroy(s);
		return rc;
	}
	struct fb_hist *rel = fb_hist_new(), *surv = fb_hist_new();
	fb_run_measure_begin(run);
	for (uint64_t i = 0; i < n && !rc; i++) {
		struct bm_tdr_times r = { 0 };
		rc = tdr_once(s, um, (unsigned)fb_run_int(run, "innocent"), &r);
		fb_hist_record(rel, r.released_ns);
		fb_hist_record(surv, r.survivor_ns);
		lost += r.lost;
	}
	fb_run_measure_end(run, n);
	if (!rc)   /* the queues lived on devices the hangs lost: unnamed */
		rc = rig_trace_run_copy(run, s, NULL, NULL, 0);
	struct os_ums_stats us;
	rt_stack_ums_stats(s, &us);
	int drc = rt_stack_destroy(s);
	if (!rc && drc)
		rc = drc;
	if (!rc) {
		fb_run_hist(run, "hang_to_waiters_released", rel, FB_LIMIT_NONE);
		fb_run_hist(run, "hang_to_survivor_done", surv, FB_LIMIT_NONE);
		fb_run_metric(run, "innocent_lost", (double)lost, "buffers");
		fb_run_metric(run, "tdr_resets", (double)us.tdr_resets, "resets");
		fb_run_metric(run, "tdr_preempt_requests", (double)us.tdr_preempt_requests, "requests");
		fb_run_metric(run, "guilty_devices", (double)us.tdr_guilty, "devices");
	}
	fb_hist_free(rel);
	fb_hist_free(surv);
	return rc ? fb_run_error(run, rc, "a TDR round failed: %s", strerror(-rc)) : 0;
}

const struct fb_scenario bm_scenario_tdr = {
	.name = "tdr",
	.summary = "hang -> TDR: time to every waiter released and the surviving process running again; innocent work lost",
	.params = tdr_params,
	.compares_paths = true,
	.polling_threads = 1,
	.default_iterations = 3,
	.takes_trace = true, .run = tdr_run,
};
