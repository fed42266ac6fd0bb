/* benchmarks/scenarios/submit.c — submission scenarios: submit-latency
 * (user-mode doorbell vs kernel-mode, engine polling vs parked in F1) and
 * doorbell-thrash (latency and victimizations as queues outnumber doorbells).
 * The rig is shared with the headline (submit.h). */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "src/fb_hist.h"
#include "src/fb_limits.h"
#include "src/fb_scenario.h"
#include "benchmarks/profile.h"
#include "benchmarks/scenarios/submit.h"
#include "gpu-model/runtime/stack.h"
#include "benchmarks/trace_rig.h"
#include "lockfree/arch.h"
#include "lockfree/cacheline.h"

#define BM_SUBMIT_DEADLINE_NS 2000000000ull   /* a submission not started by then, by engines */
#define BM_SUBMIT_RAN_NS      200000000ull    /* ... that ran this long on a CPU meanwhile, was lost */
#define BM_SUBMIT_CAP_NS      30000000000ull  /* ... and by then in any case (starved engines) */
#define BM_SUBMIT_WARMUP      200
#define BM_SUBMIT_BLOCK       100             /* submissions per path before the other path's turn */
#define BM_SUBMIT_GAP_NS      2000            /* idle before each submission: the engine is back to waiting for work */
#define BM_SUBMIT_FLOOR_SAMPLES 5000          /* submissions of the bare doorbell floor */
#define BM_SUBMIT_AWAKE_NS    10000000ull     /* a polling engine polls this long idle before it parks */

/* ---- the rig ---- */

struct bm_submit_rig {
	struct rt_stack *s;
	struct rt_device *d;
	int cpus[1];
};

static int bm_submit_up(const struct bm_submit_params *p, unsigned engines, unsigned doorbells,
			struct bm_submit_rig *g, char *err, size_t errlen)
{
	struct rt_stack_config sc;
	rt_stack_config_default(&sc, RT_PATH_NATIVE);
	if (p->cfg)
		sc.os = *p->cfg;
	struct os_config *cfg = &sc.os;
	struct os_ums_config *ucfg = &sc.ums;
	cfg->caps.engines = engines;
	cfg->caps.doorbell_model = p->model;
	cfg->caps.doorbells = doorbells;
	cfg->caps.f1_timeout_ns = p->f1_timeout_ns ? p->f1_timeout_ns : p->parked ? 50000 : 0;
	cfg->caps.ncpus = 0;
	if (p->run && fb_run_ncpus(p->run) >= 2) {
		/* the engine has the last CPU to itself; the application, the OS
		 * threads and the scheduler share the first */
		size_t n = fb_run_ncpus(p->run);
		g->cpus[0] = fb_run_cpu(p->run, n - 1);
		cfg->caps.cpus = g->cpus;
		cfg->caps.ncpus = 1;
		ucfg->sched_cpu = p->sched_on_engine_cpu ? g->cpus[0] : fb_run_cpu(p->run, 0);
		ucfg->power_cpu = fb_run_cpu(p->run, 0);
		cfg->irq_cpu = fb_run_cpu(p->run, 0);
		fb_run_pin_self(p->run, 0);
		/* Polling (F0) on both paths alike, on the engine's own CPU: an
		 * engine with a doorbell connected polls until the OS asks for F1
		 * (f1_timeout), but one with only kernel-mode queues (the legacy
		 * path has no user-mode queue) would park after idle_spin_ns
		 * (20 us) between two submissions, and every kernel-mode submission
		 * would then wait for a futex wake of the engine (measured on the
		 * legacy path: p50 18-25 us instead of 2.2 us), a cost of the
		 * model's parking, not of the submission path. */
		if (!p->parked)
			cfg->caps.idle_spin_ns = BM_SUBMIT_AWAKE_NS;
	}
	if (p->run)
		bm_profile_config(p->run, cfg);
	int rc = rt_stack_create(&sc, &g->s, err, errlen);
	if (rc)
		return rc;
	g->d = rt_stack_device(g->s);
	if (p->run && p->register_threads) {
		char role[24];
		for (unsigned e = 0; e < engines; e++) {
			snprintf(role, sizeof(role), "engine%u", e);
			fb_run_thread(p->run, role, rt_stack_engine_tid(g->s, e));
		}
		fb_run_thread(p->run, "os-irq", rt_stack_irq_tid(g->s));
		fb_run_thread(p->run, "os-sched", rt_stack_sched_tid(g->s));
		fb_run_thread(p->run, "os-power", rt_stack_power_tid(g->s));
	}
	return 0;
}

static void bm_submit_down(struct bm_submit_rig *g)
{
	rt_stack_destroy(g->s);
}

/* Late or lost?  A deadline alone would call a starved engine's work lost
 * (an engine polls at nice 10 when idle: under load, or ThreadSanitizer,
 * it may not run for seconds).  Lost: past the deadline while the engines
 * ran BM_SUBMIT_RAN_NS on a CPU after it (they looked and did not find
 * it), or past the cap whatever they ran.  A kernel-mode submission reaches
 * the engine only through the OS scheduler thread: its engines' time counts
 * only from when that thread has run after the deadline (it drains every
 * queue when it runs), so a starved scheduler thread is late, not lost
 * (the engines, polling while idle, would otherwise run 200 ms looking for
 * work not yet handed to them: seen under load once the submission rig kept
 * its engine polling). */
struct bm_submit_deadline {
	const struct bm_submit_rig *g;
	bool via_sched;      /* a kernel-mode submission: through the scheduler thread */
	uint64_t t0;
	uint64_t sched0;     /* the scheduler thread's CPU time at the deadline (0: not yet read) */
	uint64_t ran0;       /* the engines' CPU time once they could find it (0: not yet) */
};

/* A thread's time on a CPU so far (ns, /proc schedstat; 0 when the kernel
 * does not keep it: then only the cap decides). */
static uint64_t bm_submit_thread_ran(pid_t tid)
{
	char path[64];
	unsigned long long ns = 0;
	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", (int)tid);
	FILE *f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%llu", &ns) != 1)
			ns = 0;
		fclose(f);
	}
	return ns;
}

static uint64_t bm_submit_engines_ran(const struct bm_submit_rig *g)
{
	uint64_t sum = 0;
	for (unsigned e = 0; e < rt_stack_engines(g->s); e++)
		sum += bm_submit_thread_ran(rt_stack_engine_tid(g->s, e));
	return sum;
}

static struct bm_submit_deadline bm_submit_deadline(const struct bm_submit_rig *g, bool via_sched)
{
	return (struct bm_submit_deadline){ .g = g, .via_sched = via_sched, .t0 = lf_now_ns() };
}

/* The CPU times are read only once the deadline passed (/proc reads stay
 * out of every submission's measured wait), and counted from there. */
static bool bm_submit_lost(struct bm_submit_deadline *d)
{
	uint64_t waited = lf_now_ns() - d->t0;
	if (waited <= BM_SUBMIT_DEADLINE_NS)
		return false;
	if (waited > BM_SUBMIT_CAP_NS)
		return true;
	if (d->via_sched) {
		uint64_t sched = bm_submit_thread_ran(rt_stack_sched_tid(d->g->s));
		if (!d->sched0) {
			d->sched0 = sched ? sched : 1;
			return false;
		}
		if (sched == d->sched0)
			return false;          /* not run since the deadline: it has not handed it over */
		d->via_sched = false;      /* it ran, so it drained: the engines can find it from here */
	}
	uint64_t ran = bm_submit_engines_ran(d->g);
	if (!d->ran0) {
		d->ran0 = ran ? ran : 1;
		return false;
	}
	return ran - d->ran0 >= BM_SUBMIT_RAN_NS;
}

/* Wait (bounded) until *w != 0.  Kernel-mode waits yield at once: the
 * scheduler thread may share this CPU. */
static int bm_submit_wait_nonzero(const struct bm_submit_rig *g, _Atomic uint64_t *w, bool yield)
{
	struct bm_submit_deadline d = bm_submit_deadline(g, yield);   /* yield: the kernel-mode path */
	for (unsigned i = 0; !atomic_load_explicit(w, memory_order_acquire); i++) {
		if (yield || i > 4096)
			sched_yield();
		else
			lf_cpu_relax();
		if ((i & 255) == 255 && bm_submit_lost(&d))
			return -ETIMEDOUT;
	}
	return 0;
}

static int bm_submit_wait_done(const struct bm_submit_rig *g, struct rt_queue *q, uint64_t v)
{
	struct bm_submit_deadline d = bm_submit_deadline(g, false);
	for (unsigned i = 0; rt_queue_completed(q) < v; i++) {
		if (i > 256)
			sched_yield();
		if ((i & 255) == 255 && bm_submit_lost(&d))
			return -ETIMEDOUT;
	}
	return 0;
}

/* The engine parked in F1 (bounded wait). */
static int bm_submit_wait_f1(struct bm_submit_rig *g)
{
	struct bm_submit_deadline d = bm_submit_deadline(g, false);
	while (rt_stack_engine_fstate(g->s, 0) != HW_F1) {
		if (bm_submit_lost(&d))
			return -ETIMEDOUT;
		struct timespec ts = { 0, 20000 };
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* Where the engine's STAMP lands: a line of its own, not the submitter's
 * stack (the engine's write would take the line the next submission's
 * locals live on). */
struct bm_stamp {
	LF_ALIGNED _Atomic uint64_t ticks;
	LF_PAD(pad, sizeof(uint64_t));
};

static struct bm_stamp bm_stamp_line;

/* One submission of [STAMP]: its submit-to-start latency, in h when non-NULL.
 * Both ends read lf_ticks_ordered(): the engine's timestamp counter (one
 * instruction where it is the TSC), read after every earlier instruction
 * executed.  The stamp's reset is an exchange, complete before t0: the line
 * comes back from the engine, which wrote it last, outside the window (a
 * plain store would still be draining when the doorbell store queues up
 * behind it, and a plain RDTSC may run before the exchange finished). */
static int bm_submit_one(const struct bm_submit_rig *g, struct rt_queue *q, bool yield, struct fb_hist *h)
{
	struct bm_stamp *stamp = &bm_stamp_line;
	atomic_exchange_explicit(&stamp->ticks, 0, memory_order_seq_cst);
	struct hw_cmd c = { .op = HW_CMD_STAMP, .stamp = &stamp->ticks };
	lf_spin_ns(BM_SUBMIT_GAP_NS);
	uint64_t v, t0 = lf_ticks_ordered();
	int rc = rt_queue_submit(q, &c, 1, &v);
	if (!rc)
		rc = bm_submit_wait_nonzero(g, &stamp->ticks, yield);
	if (!rc)
		rc = bm_submit_wait_done(g, q, v);
	/* Settled before the next one is timed: a legacy buffer's completion
	 * raises an interrupt, and the interrupt thread's wake-up and DPC would
	 * otherwise land inside the next submission's window, on the CPU the
	 * scheduler thread shares with this one (measured: legacy kernel-mode
	 * p50 23-25 us instead of 2.6 us).  Outside the window; not after a
	 * lost submission, which ends the run. */
	if (!rc)
		rt_stack_settle_irqs(g->s);
	if (!rc && h)
		fb_hist_record(h, (uint64_t)lf_ticks_ns(atomic_load(&stamp->ticks) - t0));
	return rc;
}

static int bm_submit_loop(const struct bm_submit_params *p, struct bm_submit_rig *g, struct rt_queue *um,
			  struct rt_queue *km, struct bm_submit_result *r, uint64_t n, bool record)
{
	/* The paths alternate in blocks: both meet the same machine over the
	 * run, and each block runs with the caches its path leaves (a kernel
	 * crossing between two user-mode submissions would measure the
	 * crossing's cache footprint as user-mode latency). */
	for (uint64_t i = 0; i < n; i += BM_SUBMIT_BLOCK) {
		uint64_t m = n - i < BM_SUBMIT_BLOCK ? n - i : BM_SUBMIT_BLOCK;
		for (int path = 0; path < 2; path++) {
			struct rt_queue *q = path == 0 ? um : km;
			if (!q)
				continue;
			for (uint64_t j = 0; j < m; j++) {
				if (p->parked && bm_submit_wait_f1(g))
					return -EAGAIN;
				int rc = bm_submit_one(g, q, q == km, record ? (q == um ? r->um : r->km) : NULL);
				if (rc)
					return rc;
			}
		}
	}
	return 0;
}

/* --trace: a section's timeline (one stack each: a group each, "native
 * polling engine", "native parked engine"), its two queues named. */
static int bm_submit_trace(const struct bm_submit_params *p, struct bm_submit_rig *g, struct rt_queue *km,
			   struct rt_queue *um)
{
	if (!p->run || !fb_run_trace(p->run))
		return 0;
	struct rig_trace_queue names[2] = { { rt_queue_trace_handle(km), "kernel-mode queue" } };
	if (um)
		names[1] = (struct rig_trace_queue){ rt_queue_trace_handle(um), "user-mode queue" };
	struct rig_trace_counts c;
	char label[96];
	rig_trace_label(p->run, label, sizeof(label));
	snprintf(label + strlen(label), sizeof(label) - strlen(label), " %s", p->parked ? "parked engine" : "polling engine");
	int rc = rig_trace_copy_named(g->s, fb_run_trace(p->run), label, names, um ? 2 : 1, RIG_TRACE_OK, &c);
	if (!rc)
		rig_trace_report(p->run, &c);
	return rc;
}

int bm_submit_measure(const struct bm_submit_params *p, struct bm_submit_result *r, char *err, size_t errlen)
{
	struct bm_submit_rig g = { 0 };
	memset(r, 0, sizeof(*r));
	err[0] = 0;
	uint64_t born = lf_now_ns();
	int rc = bm_submit_up(p, 1, 0, &g, err, errlen);
	if (rc)
		return rc;
	struct rt_queue_desc dk = { .engine = 0, .user_mode = false }, du = { .engine = 0, .user_mode = true };
	struct rt_queue *km = NULL, *um = NULL;
	rc = rt_queue_create(g.d, &dk, &km);
	if (!rc && p->user_mode)
		rc = rt_queue_create(g.d, &du, &um);
	if (rc) {
		snprintf(err, errlen, "creating the queues: %s", strerror(-rc));
		bm_submit_down(&g);
		return rc;
	}
	if (p->run && (rc = rig_trace_run_start(p->run, g.s))) {   /* --trace: the whole section */
		snprintf(err, errlen, "starting the timeline trace: %s", strerror(-rc));
		bm_submit_down(&g);
		return rc;
	}
	r->km = fb_hist_new();
	r->um = p->user_mode ? fb_hist_new() : NULL;
	uint64_t warm = p->submissions < BM_SUBMIT_WARMUP ? p->submissions : BM_SUBMIT_WARMUP;
	rc = bm_submit_loop(p, &g, um, km, r, p->parked ? warm / 10 + 1 : warm, false);
	if (p->run && p->mark_region)
		fb_run_measure_begin(p->run);
	uint64_t t0 = lf_now_ns();
	if (!rc)
		rc = bm_submit_loop(p, &g, um, km, r, p->submissions, true);
	r->elapsed_ns = lf_now_ns() - t0;
	if (p->run && p->mark_region)
		fb_run_measure_end(p->run, (um ? 2 : 1) * p->submissions);
	if (rc) {
		snprintf(err, errlen, rc == -EAGAIN ? "the engine never parked (F1): 2 s, while the engines ran 200 ms on a CPU (or 30 s)"
						    : "a submission was lost: not started after 2 s while the engines ran 200 ms on a CPU (a kernel-mode one: after the scheduler thread ran), or 30 s (%s)", strerror(-rc));
		bm_submit_down(&g);
		return rc;
	}
	if (um) {
		struct rt_queue_stats s;
		rt_queue_stats(um, &s);
		r->um_retries = s.retries;
		r->um_connects = s.connects;
	}
	struct hw_engine_um_stats es;
	rt_stack_engine_um_stats(g.s, 0, &es);
	r->f1_entries = es.f1_entries;
	r->state_irqs = es.state_irqs;
	r->f1_ns = es.f1_ns;
	r->life_ns = lf_now_ns() - born;
	struct os_ums_stats us;
	rt_stack_ums_stats(g.s, &us);
	r->sched_wakeups = us.sched_wakeups;
	rc = bm_submit_trace(p, &g, km, um);
	bm_submit_down(&g);
	if (rc)
		snprintf(err, errlen, "copying the timeline: %s", strerror(-rc));
	return rc;
}

int bm_submit_headline(struct fb_run *run, const struct os_config *cfg, uint64_t submissions, bool user_mode,
		       uint64_t *engine_parks)
{
	struct bm_submit_params p = {
		.submissions = submissions, .user_mode = user_mode, .model = HW_DOORBELL_DEDICATED,
		.cfg = cfg, .run = run,
	};
	struct bm_submit_result r;
	char err[256];
	int rc = bm_submit_measure(&p, &r, err, sizeof(err));
	if (rc)
		return fb_run_error(run, rc, "%s", err);
	*engine_parks = r.f1_entries;
	if (r.um) {
		fb_run_latency(run, "um_submit_p50", (double)fb_hist_percentile(r.um, 50), FB_LIMIT_CACHELINE_HALF);
		fb_run_latency(run, "um_submit_p99", (double)fb_hist_percentile(r.um, 99), FB_LIMIT_CACHELINE_HALF);
	}
	fb_run_latency(run, "km_submit_p50", (double)fb_hist_percentile(r.km, 50), FB_LIMIT_SYSCALL);
	fb_run_latency(run, "km_submit_p99", (double)fb_hist_percentile(r.km, 99), FB_LIMIT_SYSCALL);
	fb_hist_free(r.um);
	fb_hist_free(r.km);
	return 0;
}

/* ---- submit-latency ---- */

static const struct fb_param latency_params[] = {
	FB_PARAM_ENUM("engine", "both", "engine state at submission: polling (F0), parked (F1), or both",
		      "both", "polling", "parked"),
	FB_PARAM_INT("parked_submissions", "submissions", 2000, 10, 10000000, "submissions per path while parked"),
	FB_PARAM_ENUM("doorbell", "dedicated", "doorbell model (adapter cap)", "dedicated", "global"),
	FB_PARAM_ENUM("sched_cpu", "app", "CPU of the OS scheduler thread (kernel-mode path)", "app", "engine"),
	FB_PARAM_END
};

static void bm_submit_report(struct fb_run *run, const struct bm_submit_result *r, bool parked)
{
	if (r->um)
		fb_run_hist(run, "um_submit", r->um, FB_LIMIT_CACHELINE_HALF);
	fb_run_hist(run, "km_submit", r->km, FB_LIMIT_SYSCALL);
	if (r->um) {
		double pu = (double)fb_hist_percentile(r->um, 50), pk = (double)fb_hist_percentile(r->km, 50);
		fb_run_metric(run, "km_over_um_p50", pu > 0 ? pk / pu : 0.0, "ratio");
		/* the user-mode median in cache-line messages (a ring is one): the
		 * hist above is shown against the migratory one-way transfer */
		double msg = fb_limits_value(fb_run_limits(run), FB_LIMIT_CACHELINE_MSG);
		if (!parked && isfinite(msg) && msg > 0)
			fb_run_metric(run, "um_p50_in_messages", pu / msg, "ratio");
		fb_run_metric(run, "um_retries", (double)r->um_retries, "rings");
		fb_run_metric(run, "um_connects", (double)r->um_connects, "calls");
	}
	fb_run_metric(run, "engine_f1_entries", (double)r->f1_entries, "parks");
	fb_run_metric(run, "engine_f1_fraction", r->life_ns ? (double)r->f1_ns / (double)r->life_ns : 0.0, "ratio");
	fb_run_metric(run, "engine_state_irqs", (double)r->state_irqs, "irq");
	fb_run_metric(run, "sched_wakeups", (double)r->sched_wakeups, "wakeups");
	if (!parked && r->f1_entries > r->um_connects + 2)
		fb_run_note(run, "the engine parked %llu times while meant to be polling",
			    (unsigned long long)r->f1_entries);
}

/* The seed's mechanism alone on the same CPUs (limits.h,
 * fb_limits_doorbell_floor): what the user-mode median would be with no
 * runtime, OS or engine model around the three lines it writes. */
static int bm_submit_floor(struct fb_run *run, const struct bm_submit_result *r)
{
	struct fb_hist *h = fb_hist_new();
	size_t n = fb_run_ncpus(run);
	int rc = fb_limits_doorbell_floor(fb_run_cpu(run, 0), fb_run_cpu(run, n - 1), BM_SUBMIT_FLOOR_SAMPLES,
					  BM_SUBMIT_GAP_NS, 2000, h);
	if (rc == -ETIMEDOUT) {
		fb_run_note(run, "the doorbell floor timed out after %llu samples: CPUs busy",
			    (unsigned long long)fb_hist_count(h));
		rc = 0;
	} else if (rc) {
		fb_hist_free(h);
		return fb_run_error(run, rc, "cannot pin the doorbell-floor threads");
	}
	if (fb_hist_count(h)) {
		fb_run_hist(run, "doorbell_floor", h, FB_LIMIT_CACHELINE_MSG);
		double floor = (double)fb_hist_percentile(h, 50);
		fb_run_metric(run, "um_over_floor_p50", floor > 0 ? (double)fb_hist_percentile(r->um, 50) / floor : 0.0,
			      "ratio");
	}
	fb_hist_free(h);
	return rc;
}

static int latency_section(struct fb_run *run, bool parked, uint64_t n)
{
	/* the first section run registers the role threads and is the measured region */
	bool first = !parked || !strcmp(fb_run_enum(run, "engine"), "parked");
	struct bm_submit_params p = {
		.submissions = n, .parked = parked, .user_mode = true, .run = run,
		.register_threads = first, .mark_region = first,
		.model = strcmp(fb_run_enum(run, "doorbell"), "global") ? HW_DOORBELL_DEDICATED : HW_DOORBELL_GLOBAL,
		.sched_on_engine_cpu = !strcmp(fb_run_enum(run, "sched_cpu"), "engine"),
	};
	struct bm_submit_result r;
	char err[256];
	int rc = bm_submit_measure(&p, &r, err, sizeof(err));
	if (rc)
		return fb_run_error(run, rc, "%s", err);
	fb_run_section(run, parked ? "parked" : "");
	bm_submit_report(run, &r, parked);
	if (!parked && r.um && fb_run_ncpus(run) >= 2)
		rc = bm_submit_floor(run, &r);
	fb_run_section(run, "");
	fb_hist_free(r.um);
	fb_hist_free(r.km);
	return 0;
}

static int latency_run(struct fb_run *run)
{
	const char *engine = fb_run_enum(run, "engine");
	int rc = 0;
	if (strcmp(engine, "parked"))
		rc = latency_section(run, false, fb_run_iterations(run) ? fb_run_iterations(run) : 20000);
	if (!rc && strcmp(engine, "polling"))
		rc = latency_section(run, true, (uint64_t)fb_run_int(run, "parked_submissions"));
	if (fb_run_ncpus(run) < 2)
		fb_run_note(run, "one CPU: the engine shares it with the application; latencies include scheduling");
	return rc;
}

const struct fb_scenario bm_scenario_submit_latency = {
	.name = "submit-latency",
	.summary = "submit call -> engine start: user-mode doorbell vs kernel-mode, engine polling vs parked (F1)",
	.params = latency_params, .compares_paths = false, .polling_threads = 1,
	.default_iterations = 20000, .takes_trace = true, .run = latency_run,
};

/* ---- doorbell-thrash ---- */

static const struct fb_param thrash_params[] = {
	FB_PARAM_INT("queues", "queues", 8, 1, 64, "user-mode queues, submitted to round-robin"),
	FB_PARAM_INT("doorbells", "doorbells", 4, 1, 64, "physical dedicated doorbells"),
	FB_PARAM_END
};

static int thrash_run(struct fb_run *run)
{
	unsigned nq = (unsigned)fb_run_int(run, "queues"), nd = (unsigned)fb_run_int(run, "doorbells");
	uint64_t n = fb_run_iterations(run) ? fb_run_iterations(run) : 20000;
	struct bm_submit_params p = { .model = HW_DOORBELL_DEDICATED, .run = run, .register_threads = true };
	struct bm_submit_rig g = { 0 };
	struct rt_queue *q[64];
	char err[256] = "";
	int rc = bm_submit_up(&p, 1, nd, &g, err, sizeof(err));
	if (rc)
		return fb_run_error(run, rc, "%s", err);
	for (unsigned i = 0; i < nq && !rc; i++) {
		struct rt_queue_desc desc = { .engine = 0, .user_mode = true };
		rc = rt_queue_create(g.d, &desc, &q[i]);
	}
	if (rc) {
		bm_submit_down(&g);
		return fb_run_error(run, rc, "creating %u queues: %s", nq, strerror(-rc));
	}
	if ((rc = rig_trace_run_start(run, g.s))) {
		bm_submit_down(&g);
		return rc;
	}
	for (uint64_t i = 0; i < 2ull * nq && !rc; i++)
		rc = bm_submit_one(&g, q[i % nq], false, NULL);
	struct os_ums_stats s0, s1;
	rt_stack_ums_stats(g.s, &s0);
	struct fb_hist *h = fb_hist_new();
	fb_run_measure_begin(run);
	uint64_t t0 = lf_now_ns();
	for (uint64_t i = 0; i < n && !rc; i++)
		rc = bm_submit_one(&g, q[i % nq], false, h);
	uint64_t elapsed = lf_now_ns() - t0;
	fb_run_measure_end(run, n);
	rt_stack_ums_stats(g.s, &s1);
	uint64_t retries = 0, connects = 0;
	for (unsigned i = 0; i < nq; i++) {
		struct rt_queue_stats qs;
		rt_queue_stats(q[i], &qs);
		retries += qs.retries;
		connects += qs.connects;
	}
	/* its queues unnamed: nq of them, one like another */
	int trc = rc ? 0 : rig_trace_run_copy(run, g.s, NULL, NULL, 0);
	bm_submit_down(&g);
	if (rc || trc) {
		fb_hist_free(h);
		return rc ? fb_run_error(run, rc, "a submission was lost: not started after 2 s while the engines ran 200 ms on a CPU (a kernel-mode one: after the scheduler thread ran), or 30 s") : trc;
	}
	double secs = elapsed / 1e9, vict = (double)(s1.victimizations - s0.victimizations);
	fb_run_hist(run, "submit", h, FB_LIMIT_CACHELINE_HALF);
	fb_run_metric(run, "victimizations", vict, "doorbells");
	fb_run_metric(run, "victimizations_per_s", secs > 0 ? vict / secs : 0.0, "1/s");
	fb_run_metric(run, "victimizations_per_submit", vict / (double)n, "ratio");
	fb_run_metric(run, "connects_per_submit", (double)connects / (double)(n + 2ull * nq), "ratio");
	fb_run_metric(run, "retries_per_submit", (double)retries / (double)(n + 2ull * nq), "ratio");
	fb_hist_free(h);
	return 0;
}

const struct fb_scenario bm_scenario_doorbell_thrash = {
	.name = "doorbell-thrash",
	.summary = "user-mode submission latency and doorbell victimizations as queues outnumber doorbells",
	.params = thrash_params, .compares_paths = false, .polling_threads = 1,
	.default_iterations = 20000, .takes_trace = true, .run = thrash_run,
};
