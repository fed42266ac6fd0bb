/* benchmarks/scenarios/fence.c — the fence-stack scenarios: irq-suppression,
 * cpu-wait, gpu-wait, isr-scaling (each once per path: native, legacy), and
 * log-overrun (native only). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "benchmarks/profile.h"
#include "benchmarks/fence_rig.h"
#include "src/fb_hist.h"
#include "src/fb_scenario.h"
#include "benchmarks/scenarios/fence_vk.h"
#include "benchmarks/scenarios/submit.h"

/* where gpu-wait and cpu-wait run (benchmarks/scenarios/fence_vk.h) */
#define BM_FENCE_BACKEND_PARAMS                                                                                 \
	FB_PARAM_ENUM("backend", "model", "what runs the rounds: the model, or a Vulkan device (its queues, "    \
		      "timeline semaphores and spin shader)", "model", "vulkan"),                               \
	FB_PARAM_INT("device", "index", -1, -1, 63, "backend=vulkan: the device (-1: the first real GPU)"),      \
	FB_PARAM_BOOL("allow_cpu", false, "backend=vulkan: accept a CPU implementation (lavapipe)"),             \
	FB_PARAM_BOOL("validate", false, "backend=vulkan: the Khronos validation layer, synchronization "       \
		      "validation on (validation_errors)")

/* The model's engines poll (engines of the model's adapter); a Vulkan device's work polls nothing of ours. */
static unsigned cpu_wait_polling(const struct fb_run *run)
{
	return bm_fence_vk_wanted(run) ? 0 : 1;
}

static unsigned gpu_wait_polling(const struct fb_run *run)
{
	return bm_fence_vk_wanted(run) ? 0 : 2;
}

static enum rig_fence_path rig_fence_path_of(const struct fb_run *run)
{
	return fb_run_path(run) == FB_PATH_LEGACY ? RIG_FENCE_LEGACY : RIG_FENCE_NATIVE;
}

/* Register the adapter's role threads with the harness (perf groups). */
static void rig_fence_started(void *arg, struct rt_stack *s)
{
	struct fb_run *run = arg;
	char role[32];
	fb_run_thread(run, "os-irq", rt_stack_irq_tid(s));
	for (unsigned e = 0; e < rt_stack_engines(s); e++) {
		snprintf(role, sizeof(role), "engine%u", e);
		fb_run_thread(run, role, rt_stack_engine_tid(s, e));
	}
	fb_run_measure_begin(run);
}

/* Engines from the run's last CPU downwards (wrapping), the application on
 * the first: on 2 CPUs, engine 0 has CPU 1 to itself and engine 1 shares CPU 0
 * with the application. */
static void rig_fence_pin(struct fb_run *run, struct os_config *cfg, int *cpus)
{
	size_t n = fb_run_ncpus(run);
	cfg->caps.ncpus = 0;
	if (n < 2)
		return;
	for (unsigned e = 0; e < cfg->caps.engines; e++)
		cpus[e] = fb_run_cpu(run, n - 1 - (e % n));
	cfg->caps.cpus = cpus;
	cfg->caps.ncpus = cfg->caps.engines;
	fb_run_pin_self(run, 0);
}

/* The power proxy and interrupt counters every fence scenario reports. */
/* Idle fraction of the OS interrupt thread: 1 - CPU time / lifetime. */
static double rig_fence_idle_fraction(const struct os_stats *s)
{
	double total = (double)(s->isr_busy_ns + s->irq_idle_ns);
	return total > 0 ? s->irq_idle_ns / total : 1.0;
}

/* The power proxy, in the current section. */
static void rig_fence_report_power(struct fb_run *run, const struct os_stats *s, uint64_t elapsed_ns)
{
	double secs = elapsed_ns / 1e9;
	double sig = s->gpu_signals ? (double)s->gpu_signals : 1.0;
	fb_run_metric(run, "os_irq_idle_fraction", rig_fence_idle_fraction(s), "ratio");
	fb_run_metric(run, "os_irq_busy_ms", s->isr_busy_ns / 1e6, "ms");
	fb_run_metric(run, "os_irq_wakeups", (double)s->irq_wakeups, "wakeups");
	fb_run_metric(run, "os_irq_wakeups_per_s", secs > 0 ? s->irq_wakeups / secs : 0.0, "wakeups/s");
	fb_run_metric(run, "os_irq_wakeups_per_signal", s->irq_wakeups / sig, "wakeups/signal");
	fb_run_metric(run, "isr_ns_per_irq", s->interrupts ? (double)s->isr_busy_ns / (double)s->interrupts : 0.0, "ns");
}

/* The host CPU per GPU signal of every CPU-side role (benchmarks/host_cpu.h), in "cpu". */
static void rig_fence_report_cpu(struct fb_run *run, const struct bm_host *host, uint64_t signals)
{
	fb_run_section(run, "cpu");
	bm_host_report(run, host, signals, BM_HOST_PER_SIGNAL);
	fb_run_section(run, "");
}

/* Interrupt counters in the current section, the power proxy in "power". */
static void rig_fence_report_os(struct fb_run *run, const struct os_stats *s, uint64_t elapsed_ns)
{
	double sig = s->gpu_signals ? (double)s->gpu_signals : 1.0;
	fb_run_metric(run, "signals", (double)s->gpu_signals, "signals");
	fb_run_metric(run, "interrupts", (double)s->gpu_interrupts, "irq");
	fb_run_metric(run, "interrupts_per_signal", s->gpu_interrupts / sig, "irq/signal");
	fb_run_metric(run, "spurious_interrupts", (double)s->spurious, "irq");
	fb_run_metric(run, "lost_wakeups", (double)s->lost_wakeups, "waiters");
	fb_run_metric(run, "fences_scanned_per_irq",
		      s->interrupts ? (double)s->fences_scanned / (double)s->interrupts : 0.0, "fences/irq");
	fb_run_section(run, "power");
	rig_fence_report_power(run, s, elapsed_ns);
	fb_run_section(run, "");
}

/* The adapter configuration for the run's path, engines pinned from its CPUs. */
static void rig_fence_config(struct fb_run *run, struct os_config *cfg, int *cpus, unsigned engines)
{
	rig_config(cfg, rig_fence_path_of(run));
	bm_profile_config(run, cfg);
	cfg->caps.engines = engines;
	rig_fence_pin(run, cfg, cpus);
}

/* The interrupt payload the "payload" parameter names. */
static enum hw_irq_payload rig_fence_payload(const struct fb_run *run)
{
	const char *payload = fb_run_enum(run, "payload");
	return !strcmp(payload, "null") ? HW_PAYLOAD_NULL :
	       !strcmp(payload, "null-legacy") ? HW_PAYLOAD_NULL_EVAL_LEGACY : HW_PAYLOAD_FENCE_ARRAY;
}

/* Run the lockstep signal workload p (signals 0: the run's iterations, else
 * `fallback`) on the run's path with the harness's perf hooks, close the
 * measured region and report what every such scenario reports: interrupts,
 * the power proxy, the CPU-wait latency.  0 or the run's error. */
static int rig_fence_irq(struct fb_run *run, struct rig_irq_params *p, uint64_t fallback, struct rig_irq_result *r)
{
	char err[256];
	p->path = rig_fence_path_of(run);
	p->seed = fb_run_seed(run);
	p->started = rig_fence_started;
	p->started_arg = run;
	p->warmup_ns = fb_run_warmup_ns(run);
	if (!p->signals)
		p->signals = fb_run_iterations(run) ? fb_run_iterations(run) : fallback;
	char label[64];
	if ((p->trace = fb_run_trace(run))) {
		rig_trace_label(run, label, sizeof(label));
		p->trace_label = label;
	}
	int rc = rig_irq_run(p, r, err, sizeof(err));
	if (rc)
		return fb_run_error(run, rc, "%s", err);
	fb_run_measure_end(run, r->signals);
	rig_fence_report_os(run, &r->os, r->elapsed_ns);
	rig_fence_report_cpu(run, &r->host, r->os.gpu_signals);
	fb_run_metric(run, "waited_signals", (double)r->waited, "signals");
	fb_run_hist(run, "cpu_wait", r->wait_lat, FB_LIMIT_FUTEX_WAKE);
	fb_hist_free(r->wait_lat);
	r->wait_lat = NULL;
	if (r->lost_wakeups)
		fb_run_note(run, "%llu lost wake-ups: the protocol is broken", (unsigned long long)r->lost_wakeups);
	if (p->trace)
		rig_trace_report(run, &r->trace);
	return 0;
}

/* ---- irq-suppression ---- */

static const struct fb_param irq_params[] = {
	FB_PARAM_DOUBLE("waited", "fraction", 0.1, 0.0, 1.0, "fraction of GPU signals with a CPU waiter"),
	FB_PARAM_DOUBLE("work_us", "us", 2.0, 0.0, 10000.0, "GPU work before each signal"),
	FB_PARAM_ENUM("payload", "array", "native interrupt payload (adapter cap)", "array", "null", "null-legacy"),
	FB_PARAM_END
};

static int irq_run(struct fb_run *run)
{
	struct os_config cfg;
	int cpus[HW_MAX_ENGINES];
	struct rig_irq_result r;
	rig_fence_config(run, &cfg, cpus, 1);
	cfg.caps.payload = rig_fence_payload(run);
	struct rig_irq_params p = {
		.waited_fraction = fb_run_double(run, "waited"),
		.work_ns = (uint64_t)(fb_run_double(run, "work_us") * 1000.0), .cfg = &cfg,
	};
	return rig_fence_irq(run, &p, 20000, &r);
}

const struct fb_scenario bm_scenario_irq_suppression = {
	.name = "irq-suppression",
	.summary = "interrupts per GPU signal vs the fraction of signals with a CPU waiter",
	.params = irq_params, .compares_paths = true, .polling_threads = 1,
	.default_iterations = 20000, .takes_trace = true, .run = irq_run,
};

/* ---- cpu-wait ---- */

static const struct fb_param cpu_wait_params[] = {
	FB_PARAM_DOUBLE("work_us", "us", 20.0, 0.0, 10000.0, "GPU work before each signal (the waiter sleeps meanwhile)"),
	BM_FENCE_BACKEND_PARAMS,
	FB_PARAM_END
};

static int cpu_wait_run(struct fb_run *run)
{
	if (bm_fence_vk_wanted(run))
		return bm_fence_vk_run(run, false);
	struct os_config cfg;
	int cpus[HW_MAX_ENGINES];
	struct rig_irq_result r;
	rig_fence_config(run, &cfg, cpus, 1);
	struct rig_irq_params p = {
		.waited_fraction = 1.0, .work_ns = (uint64_t)(fb_run_double(run, "work_us") * 1000.0), .cfg = &cfg,
	};
	return rig_fence_irq(run, &p, 5000, &r);
}

const struct fb_scenario bm_scenario_cpu_wait = {
	.name = "cpu-wait",
	.summary = "GPU signal -> blocked CPU waiter running, through the OS interrupt path",
	.params = cpu_wait_params, .compares_paths = true, .polling_threads = 1, .polling_threads_fn = cpu_wait_polling,
	.default_iterations = 5000, .takes_trace = true, .run = cpu_wait_run,
};

/* ---- gpu-wait ---- */

static const struct fb_param gpu_wait_params[] = {
	FB_PARAM_DOUBLE("work_us", "us", 5.0, 0.0, 10000.0, "engine A's work before each signal"),
	BM_FENCE_BACKEND_PARAMS,
	FB_PARAM_END
};

static int gpu_wait_run(struct fb_run *run)
{
	if (bm_fence_vk_wanted(run))
		return bm_fence_vk_run(run, true);
	struct os_config cfg;
	int cpus[HW_MAX_ENGINES];
	rig_fence_config(run, &cfg, cpus, 2);
	struct rig_gpuwait_params p = {
		.path = rig_fence_path_of(run), .rounds = fb_run_iterations(run) ? fb_run_iterations(run) : 5000,
		.work_ns = (uint64_t)(fb_run_double(run, "work_us") * 1000.0), .warmup_ns = fb_run_warmup_ns(run),
		.cfg = &cfg, .started = rig_fence_started, .started_arg = run,
	};
	char label[64];
	if ((p.trace = fb_run_trace(run))) {
		rig_trace_label(run, label, sizeof(label));
		p.trace_label = label;
	}
	struct rig_gpuwait_result r;
	char err[256];
	int rc = rig_gpuwait_run(&p, &r, err, sizeof(err));
	if (rc)
		return fb_run_error(run, rc, "%s", err);
	if (p.trace)
		rig_trace_report(run, &r.trace);
	fb_run_measure_end(run, p.rounds);
	fb_run_hist(run, "gpu_wait", r.lat, FB_LIMIT_CACHELINE_RTT);
	rig_fence_report_os(run, &r.os, r.elapsed_ns);
	fb_run_metric(run, "waits", (double)p.rounds, "waits");   /* B's queue Waits, as on a device */
	fb_run_metric(run, "held_waits", (double)r.os.held_waits, "waits");
	rig_fence_report_cpu(run, &r.host, r.os.gpu_signals);
	fb_hist_free(r.lat);
	return 0;
}

const struct fb_scenario bm_scenario_gpu_wait = {
	.name = "gpu-wait",
	.summary = "signal on engine A -> engine B past its wait: hardware wait vs CPU-held wait",
	.params = gpu_wait_params, .compares_paths = true, .polling_threads = 2, .polling_threads_fn = gpu_wait_polling,
	.default_iterations = 5000, .takes_trace = true, .run = gpu_wait_run,
};

/* ---- idle: the power proxy vs the signal rate ---- */

static const struct fb_param idle_params[] = {
	FB_PARAM_DOUBLE("rate", "signals/s", 1000.0, 1.0, 200000.0, "GPU signals per second (the application paces them)"),
	FB_PARAM_DOUBLE("waited", "fraction", 0.1, 0.0, 1.0, "fraction of signals with a CPU waiter"),
	FB_PARAM_DOUBLE("active_mw", "mW", 1000.0, 0.0, 100000.0, "modeled power of a CPU core running the OS thread"),
	FB_PARAM_DOUBLE("idle_mw", "mW", 50.0, 0.0, 100000.0, "modeled power of that core while the OS thread sleeps"),
	FB_PARAM_DOUBLE("wake_uj", "uJ", 10.0, 0.0, 100000.0, "modeled energy of one wake-up (leaving a C-state)"),
	FB_PARAM_END
};

static int idle_run(struct fb_run *run)
{
	struct os_config cfg;
	int cpus[HW_MAX_ENGINES];
	struct rig_irq_result r;
	rig_fence_config(run, &cfg, cpus, 1);
	struct rig_irq_params p = {
		.waited_fraction = fb_run_double(run, "waited"), .work_ns = 2000,
		.period_ns = (uint64_t)(1e9 / fb_run_double(run, "rate")), .cfg = &cfg,
	};
	int rc = rig_fence_irq(run, &p, 2000, &r);
	if (rc)
		return rc;
	/* The energy estimate of the OS interrupt thread's core, from the
	 * documented per-state parameters above (not a measurement: RAPL, where
	 * the machine has it, is reported by the harness beside it). */
	double busy_s = r.os.isr_busy_ns / 1e9, idle_s = r.os.irq_idle_ns / 1e9;
	double mj = fb_run_double(run, "active_mw") * busy_s + fb_run_double(run, "idle_mw") * idle_s +
		    fb_run_double(run, "wake_uj") * (double)r.os.irq_wakeups / 1000.0;
	fb_run_section(run, "power");
	fb_run_metric(run, "os_energy_estimate_mj", mj, "mJ");
	fb_run_metric(run, "os_energy_per_signal_uj", r.signals ? mj * 1000.0 / (double)r.signals : 0.0, "uJ/signal");
	fb_run_section(run, "");
	return 0;
}

const struct fb_scenario bm_scenario_idle = {
	.name = "idle",
	.summary = "power proxy vs signal rate: OS-thread wake-ups, idle fraction, modeled energy",
	.params = idle_params, .compares_paths = true, .polling_threads = 1,
	.default_iterations = 2000, .takes_trace = true, .run = idle_run,
};

/* ---- isr-scaling ---- */

/* The five interrupt paths of the ISR curve (seed native-gpu-fence, "Native
 * fence signaled interrupt", "Optimized native fence signaled interrupt",
 * "Log buffer overrun is permitted"): the legacy path scans every waited
 * fence whatever the payload; on the native path "array" names the signaled
 * fence, "null" (and "null-legacy") make the OS scan the waited fences,
 * "log" is the optimized interrupt (the payload names the running HW queue,
 * the OS reads only that queue's new log entries: a user-mode queue, whose
 * buffers the runtime ends with its progress write), "log-overrun" the same
 * with a log of one entry, so every interrupt that finds new entries finds
 * it overrun and falls back to reading every fence of the device.  When a
 * fallback scan outlasts the application's round trip, the scan releases
 * the next waiters and the interrupts queued meanwhile find nothing new in
 * the log (no scan): log_fallbacks_per_irq says how many interrupts paid
 * for a scan. */
static const struct fb_param isr_params[] = {
	FB_PARAM_INT("fences", "fences", 64, 0, 100000, "other fences with a pending CPU waiter (what a scan walks)"),
	FB_PARAM_ENUM("payload", "array", "native interrupt payload (adapter cap); log, log-overrun: the optimized "
		      "interrupt on a user-mode queue (log-overrun: a one-entry log)",
		      "array", "null", "null-legacy", "log", "log-overrun"),
	FB_PARAM_ENUM("storage", "local", "where fence values live", "system", "local"),
	FB_PARAM_INT("read_ns", "ns", 500, 0, 100000, "modeled PCIe cost of one CPU read of local memory"),
	FB_PARAM_END
};

#define BM_LOG_ONE_ENTRY (HW_LOG_HEADER_BYTES + sizeof(struct hw_log_entry))   /* the smallest log */

/* What the interrupt handler read, per interrupt: fence values, log entries;
 * the logs' overruns and fallbacks (main section). */
static void bm_report_logs(struct fb_run *run, const struct rig_irq_result *r, uint64_t app_signals)
{
	const struct os_stats *s = &r->os;
	double irq = s->interrupts ? (double)s->interrupts : 1.0;
	double sig = app_signals ? (double)app_signals : 1.0;
	fb_run_metric(run, "log_entries_per_irq", s->log_entries / irq, "entries/irq");
	fb_run_metric(run, "log_overruns", (double)s->log_overruns, "overruns");
	/* per 1000 of the application's signals (the runtime's progress writes are not counted) */
	fb_run_metric(run, "log_overruns_per_1000_signals", s->log_overruns * 1000.0 / sig, "overruns/1000 signals");
	fb_run_metric(run, "log_fallbacks", (double)s->log_fallbacks, "scans");
	fb_run_metric(run, "log_fallbacks_per_irq", s->log_fallbacks / irq, "scans/irq");
	fb_run_metric(run, "log_released", (double)s->log_released, "waiters");
}

static int isr_run(struct fb_run *run)
{
	struct os_config cfg;
	int cpus[HW_MAX_ENGINES];
	struct rig_irq_result r;
	const char *payload = fb_run_enum(run, "payload");
	bool log = !strcmp(payload, "log"), overrun = !strcmp(payload, "log-overrun");
	bool native = fb_run_path(run) != FB_PATH_LEGACY;
	unsigned fences = (unsigned)fb_run_int(run, "fences");
	rig_fence_config(run, &cfg, cpus, 1);
	if (log || overrun)
		cfg.caps.payload = native ? HW_PAYLOAD_OPTIMIZED : HW_PAYLOAD_FENCE_ARRAY;   /* legacy: no payload */
	else
		cfg.caps.payload = rig_fence_payload(run);
	cfg.caps.storage = !strcmp(fb_run_enum(run, "storage"), "local") ? HW_STORAGE_LOCAL : HW_STORAGE_SYSTEM;
	cfg.caps.local_read_ns = (uint32_t)fb_run_int(run, "read_ns");
	if (cfg.max_fences < fences + 64)
		cfg.max_fences = fences + 64;   /* the scan table holds the idle fences and the rig's own */
	struct rig_irq_params p = {
		.waited_fraction = 1.0, .work_ns = 2000, .cfg = &cfg, .idle_fences = fences,
		.user_mode = native && (log || overrun), .log_bytes = overrun ? BM_LOG_ONE_ENTRY : 0,
	};
	int rc = rig_fence_irq(run, &p, 2000, &r);
	if (rc)
		return rc;
	bm_report_logs(run, &r, p.signals);
	return 0;
}

const struct fb_scenario bm_scenario_isr_scaling = {
	.name = "isr-scaling",
	.summary = "interrupt handler cost as fences with waiters grow: legacy scan, fence array, NULL, log, log overrun",
	.params = isr_params, .compares_paths = true, .polling_threads = 1,
	.default_iterations = 2000, .takes_trace = true, .run = isr_run,
};

/* ---- log-overrun: how often a native fence log overruns ---- */

/* The OS reads a user-mode queue's log only when an interrupt names the
 * queue, and an interrupt comes only from a signal with a CPU waiter.  The
 * application waits on one signal per wait period while the GPU signals at
 * `rate`, so rate x period signals (each followed by the runtime's progress
 * write: two log entries) land between two reads; more than the log holds
 * overruns it, and the OS falls back to reading every fence of the device
 * (seed native-gpu-fence, "Log buffer overrun is permitted"). */
static const struct fb_param overrun_params[] = {
	FB_PARAM_INT("log_bytes", "bytes", 1024, (int64_t)BM_LOG_ONE_ENTRY, OS_LOG_MAX_BYTES,
		     "each native fence log buffer: a 64-byte header + 40 bytes per entry"),
	FB_PARAM_DOUBLE("rate", "signals/s", 10000.0, 1.0, 1000000.0, "GPU signals per second (the application paces them)"),
	FB_PARAM_DOUBLE("wait_us", "us", 1000.0, 1.0, 1000000.0,
			"the application CPU-waits on one signal per this period (the OS reads the log at its interrupt)"),
	FB_PARAM_END
};

static int overrun_run(struct fb_run *run)
{
	struct os_config cfg;
	int cpus[HW_MAX_ENGINES];
	struct rig_irq_result r;
	double rate = fb_run_double(run, "rate"), wait_us = fb_run_double(run, "wait_us");
	double per_wait = rate * wait_us / 1e6;
	uint64_t signals = fb_run_iterations(run) ? fb_run_iterations(run) : 2000;
	size_t log_bytes = (size_t)fb_run_int(run, "log_bytes");
	if (per_wait < 1.0)
		return fb_run_error(run, -EINVAL, "rate=%g signals/s x wait_us=%g us is %.3g signals per CPU wait: "
				    "under one, every signal is waited and nothing accumulates in the log", rate, wait_us,
				    per_wait);
	if (per_wait > (double)signals)
		return fb_run_error(run, -EINVAL, "rate=%g signals/s x wait_us=%g us is %.0f signals per CPU wait, more "
				    "than the %llu signals of the run: no wait would complete a period", rate, wait_us,
				    per_wait, (unsigned long long)signals);
	if ((log_bytes - HW_LOG_HEADER_BYTES) % sizeof(struct hw_log_entry))
		fb_run_note(run, "log_bytes=%zu holds %zu entries; the last %zu bytes are unused", log_bytes,
			    (log_bytes - HW_LOG_HEADER_BYTES) / sizeof(struct hw_log_entry),
			    (log_bytes - HW_LOG_HEADER_BYTES) % sizeof(struct hw_log_entry));
	rig_config(&cfg, RIG_FENCE_NATIVE);
	bm_profile_config(run, &cfg);
	cfg.caps.engines = 1;
	rig_fence_pin(run, &cfg, cpus);
	cfg.caps.payload = HW_PAYLOAD_OPTIMIZED;
	struct rig_irq_params p = {
		.path = RIG_FENCE_NATIVE, .signals = signals, .waited_fraction = 1.0 / per_wait, .work_ns = 0,
		.period_ns = (uint64_t)(1e9 / rate), .cfg = &cfg, .user_mode = true, .log_bytes = log_bytes,
	};
	int rc = rig_fence_irq(run, &p, signals, &r);
	if (rc)
		return rc;
	fb_run_metric(run, "log_capacity", (double)((log_bytes - HW_LOG_HEADER_BYTES) / sizeof(struct hw_log_entry)),
		      "entries");
	fb_run_metric(run, "signals_per_wait", per_wait, "signals");
	fb_run_metric(run, "achieved_rate", r.elapsed_ns ? r.signals * 1e9 / (double)r.elapsed_ns : 0.0, "signals/s");
	bm_report_logs(run, &r, p.signals);
	return 0;
}

const struct fb_scenario bm_scenario_log_overrun = {
	.name = "log-overrun",
	.summary = "native fence log overruns per 1000 signals and fallback scans vs log size and signal rate",
	.params = overrun_params, .compares_paths = false, .polling_threads = 1,
	.default_iterations = 2000, .run = overrun_run,
};

/* ---- headline ---- */

static const struct fb_param headline_params[] = {
	FB_PARAM_INT("signals", "signals", 20000, 100, 100000000, "GPU signals for the interrupt count (10% CPU-waited)"),
	FB_PARAM_INT("waits", "waits", 5000, 100, 100000000, "rounds for each wait latency"),
	FB_PARAM_DOUBLE("waited", "fraction", 0.1, 0.0, 1.0, "fraction of signals with a CPU waiter"),
	FB_PARAM_DOUBLE("rate", "signals/s", 2000.0, 1.0, 200000.0,
			"the equal-rate comparison: GPU signals per second, paced, on both paths"),
	FB_PARAM_INT("rate_signals", "signals", 2000, 100, 100000000,
		     "GPU signals of the equal-rate comparison (rate_signals / rate seconds per path)"),
	FB_PARAM_END
};

/* p50 and p99 of h as two latencies of the current section, beside limit. */
static void rig_fence_p50_p99(struct fb_run *run, const char *name, const struct fb_hist *h, enum fb_limit limit)
{
	char key[64];
	snprintf(key, sizeof(key), "%s_p50", name);
	fb_run_latency(run, key, (double)fb_hist_percentile(h, 50.0), limit);
	snprintf(key, sizeof(key), "%s_p99", name);
	fb_run_latency(run, key, (double)fb_hist_percentile(h, 99.0), limit);
}

/* The equal-rate comparison: the headline's signal workload paced at `rate`
 * (the idle scenario's pacing), so both paths spend the same span on the
 * same signals and their wake-ups per second and idle fractions compare.
 * 0 or the run's error; *r's counters (its histogram freed). */
static int headline_paced(struct fb_run *run, struct rig_irq_params ip, struct rig_irq_result *r)
{
	char err[256];
	double rate = fb_run_double(run, "rate");
	ip.signals = (uint64_t)fb_run_int(run, "rate_signals");
	ip.period_ns = (uint64_t)(1e9 / rate);
	ip.started = NULL;
	int rc = rig_irq_run(&ip, r, err, sizeof(err));
	if (rc)
		return fb_run_error(run, rc, "the equal-rate run: %s", err);
	fb_hist_free(r->wait_lat);
	r->wait_lat = NULL;
	double achieved = r->elapsed_ns ? r->signals * 1e9 / (double)r->elapsed_ns : 0.0;
	if (achieved < 0.95 * rate)        /* the pace holds within 5 %, or the spans differ: say so */
		fb_run_note(run, "headline paced: the %s path reached %.0f of %.0f signals/s (CPUs busy?): its paced rates "
			    "are over a longer span", fb_path_name(fb_run_path(run)), achieved, rate);
	return 0;
}

/* Under a timing profile, how much of the GPU wait's p50 is the profile's
 * modelled time (the native path: A's SIGNAL, its flush and write, B's poll
 * on average, B's STAMP; legacy: the same but the poll, plus the interrupt's
 * raise, the held buffer's re-entry and B's doorbell), so a reader sees when
 * the native/legacy ratio is the profile's. */
static void headline_profile_note(struct fb_run *run, const struct fb_hist *lat)
{
	const struct bm_profile *p = bm_profile_of(run);
	if (rt_profile_is_ideal(&p->rt) || !fb_hist_count(lat))
		return;
	const struct hw_timing *t = &p->rt.hw;
	double modelled = (double)(2 * t->cmd_ns + t->signal_ns + t->visible_sys_ns) + t->wait_poll_sys_ns / 2.0;
	double p50 = (double)fb_hist_percentile(lat, 50.0);
	if (fb_run_path(run) == FB_PATH_NATIVE)
		fb_run_note(run, "headline: under profile %s, %.0f %% of the native GPU wait's p50 (%.2f of %.2f us) is "
			    "the profile's modelled GPU-side time: the native/legacy GPU-wait ratio is %s by the profile",
			    p->rt.name, 100.0 * modelled / p50, modelled / 1e3, p50 / 1e3,
			    modelled >= p50 / 2 ? "dominated" : "shaped");
	else {
		/* A's SIGNAL, its flush and write, the interrupt's raise, the held
		 * buffer's re-entry, the doorbell of B's queue, B's STAMP */
		modelled = (double)(2 * t->cmd_ns + t->signal_ns + t->visible_sys_ns + t->irq_ns + t->doorbell_ns +
				    p->rt.os.km_sched_ns);
		fb_run_note(run, "headline: under profile %s, %.0f %% of the legacy GPU wait's p50 (%.2f of %.2f us) is "
			    "the profile's modelled time (GPU side, interrupt raise, the held buffer's re-entry); the "
			    "rest is the model's CPU hop", p->rt.name, 100.0 * modelled / p50, modelled / 1e3, p50 / 1e3);
	}
}

/*
 * The headline: one summary table (the main section) of what the native
 * fence buys, native and legacy side by side.  It leads with the costs of
 * equal work: per GPU signal (the same signals on both paths, which take
 * the paths different times), then the power proxy at an equal paced rate
 * (rate, rate_signals), then the latencies, each beside its machine limit.
 * The details follow in sections "interrupts", "power" (rates over each
 * path's own span: span_ms), "cpu" (every CPU-side role per signal and in
 * total), "paced" (the equal-rate run), "latency" (every percentile).
 */
static int headline_run(struct fb_run *run)
{
	struct os_config cfg;
	int cpus[HW_MAX_ENGINES];
	char err[256];
	enum rig_fence_path path = rig_fence_path_of(run);
	rig_fence_config(run, &cfg, cpus, 1);

	/* interrupts and the power proxy: signals, a fraction CPU-waited */
	struct rig_irq_params ip = {
		.path = path, .signals = (uint64_t)fb_run_int(run, "signals"),
		.waited_fraction = fb_run_double(run, "waited"), .work_ns = 2000, .warmup_ns = fb_run_warmup_ns(run),
		.seed = fb_run_seed(run), .cfg = &cfg, .started = rig_fence_started, .started_arg = run,
	};
	struct rig_irq_result ir, pr;
	int rc = rig_irq_run(&ip, &ir, err, sizeof(err));
	if (rc)
		return fb_run_error(run, rc, "%s", err);
	fb_run_measure_end(run, ir.signals);
	struct os_stats os = ir.os;
	struct bm_host host = ir.host;
	uint64_t elapsed = ir.elapsed_ns;
	fb_hist_free(ir.wait_lat);

	/* the same workload at an equal paced rate on both paths */
	rc = headline_paced(run, ip, &pr);
	if (rc)
		return rc;

	/* CPU wait: every signal waited, the waiter asleep when it lands */
	ip.signals = (uint64_t)fb_run_int(run, "waits");
	ip.waited_fraction = 1.0;
	ip.work_ns = 20000;
	ip.started = NULL;
	rc = rig_irq_run(&ip, &ir, err, sizeof(err));
	if (rc)
		return fb_run_error(run, rc, "%s", err);

	/* GPU wait: engine A signals, engine B runs past its wait */
	rig_fence_config(run, &cfg, cpus, 2);
	struct rig_gpuwait_params gp = {
		.path = path, .rounds = (uint64_t)fb_run_int(run, "waits"), .work_ns = 5000, .cfg = &cfg,
	};
	struct rig_gpuwait_result gr;
	rc = rig_gpuwait_run(&gp, &gr, err, sizeof(err));
	if (rc) {
		fb_hist_free(ir.wait_lat);
		return fb_run_error(run, rc, "%s", err);
	}

	/* the summary: equal work first (per signal), then equal rate */
	uint64_t sig = os.gpu_signals;
	double psecs = pr.elapsed_ns / 1e9;
	fb_run_metric(run, "interrupts_per_signal", bm_host_per(os.gpu_interrupts, sig), "irq/signal");
	fb_run_metric(run, "os_irq_cpu_per_signal", bm_host_per(host.irq_cpu_ns, sig), "ns/signal");
	fb_run_metric(run, "os_irq_wakeups_per_signal", bm_host_per(host.irq_wakeups, sig), "wakeups/signal");
	fb_run_metric(run, "app_cpu_per_signal", bm_host_per(host.app_cpu_ns, sig), "ns/signal");
	fb_run_metric(run, "paced_rate", fb_run_double(run, "rate"), "signals/s");
	fb_run_metric(run, "paced_os_irq_idle_fraction", rig_fence_idle_fraction(&pr.os), "ratio");
	fb_run_metric(run, "paced_os_irq_wakeups_per_s", psecs > 0 ? pr.os.irq_wakeups / psecs : 0.0, "wakeups/s");
	/* submission: user-mode doorbell (WDDM 3.2 only) vs kernel-mode (benchmarks/scenarios/submit.h) */
	uint64_t submit_parks = 0;
	rc = bm_submit_headline(run, &cfg, (uint64_t)fb_run_int(run, "waits"), path == RIG_FENCE_NATIVE, &submit_parks);
	if (rc) {
		fb_hist_free(ir.wait_lat);
		fb_hist_free(gr.lat);
		return rc;
	}
	rig_fence_p50_p99(run, "cpu_wait", ir.wait_lat, FB_LIMIT_FUTEX_WAKE);
	rig_fence_p50_p99(run, "gpu_wait", gr.lat, FB_LIMIT_CACHELINE_RTT);
	headline_profile_note(run, gr.lat);
	fb_run_metric(run, "lost_wakeups", (double)(os.lost_wakeups + ir.lost_wakeups + pr.os.lost_wakeups), "waiters");
	if (host.sched_wakeups == 0)
		fb_run_note(run, "headline: the OS scheduler thread takes no part in the signal workload (it submits through "
			    "direct queues: 0 wake-ups); its row is in the cpu section");

	/* the details */
	fb_run_section(run, "interrupts");
	rig_fence_report_os(run, &os, elapsed);     /* also fills "power" */
	fb_run_section(run, "power");
	fb_run_metric(run, "span_ms", elapsed / 1e6, "ms");
	fb_run_note(run, "headline/power: wake-ups/s and idle fraction are over each path's own span (span_ms: the same "
		    "signals take the paths different times); the summary compares per signal and at an equal rate (paced)");
	rig_fence_report_cpu(run, &host, sig);
	fb_run_section(run, "paced");
	fb_run_metric(run, "rate", fb_run_double(run, "rate"), "signals/s");
	fb_run_metric(run, "achieved_rate", psecs > 0 ? pr.signals / psecs : 0.0, "signals/s");
	fb_run_metric(run, "signals", (double)pr.signals, "signals");
	fb_run_metric(run, "span_ms", pr.elapsed_ns / 1e6, "ms");
	fb_run_metric(run, "interrupts_per_signal", bm_host_per(pr.os.gpu_interrupts, pr.signals), "irq/signal");
	fb_run_metric(run, "os_irq_idle_fraction", rig_fence_idle_fraction(&pr.os), "ratio");
	fb_run_metric(run, "os_irq_wakeups_per_s", psecs > 0 ? pr.os.irq_wakeups / psecs : 0.0, "wakeups/s");
	bm_host_report(run, &pr.host, pr.signals, BM_HOST_PER_SIGNAL);
	fb_run_section(run, "latency");
	fb_run_hist(run, "cpu_wait", ir.wait_lat, FB_LIMIT_FUTEX_WAKE);
	fb_run_hist(run, "gpu_wait", gr.lat, FB_LIMIT_CACHELINE_RTT);
	/* the submission rig's engine polled on both paths (submit.c) */
	fb_run_metric(run, "submit_engine_parks", (double)submit_parks, "parks");
	fb_run_section(run, "");
	fb_hist_free(ir.wait_lat);
	fb_hist_free(gr.lat);
	return 0;
}

const struct fb_scenario bm_scenario_headline = {
	.name = "headline",
	.summary = "native vs legacy: interrupts and host CPU per signal, OS-thread power proxy at an equal rate, "
		   "CPU- and GPU-wait latency",
	.params = headline_params, .compares_paths = true, .polling_threads = 2,
	.default_iterations = 1, .run = headline_run,
	.headline = "interrupts_per_signal,app_cpu_per_signal,cpu_wait_p50,gpu_wait_p50",
};
