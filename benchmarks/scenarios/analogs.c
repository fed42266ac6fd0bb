/* benchmarks/scenarios/analogs.c — the operations `fencebench calibrate`
 * measures on a real GPU, run in the model, each beside the profile's
 * measured value: how a timing profile is checked.
 *
 *   op               in the model (one engine, its queues as the probe's streams)
 *   enqueue          the application's submit call of one command to a direct queue
 *   write_seen       t0, submit [COUNT], spin until the count moves (a GPU write seen by a CPU poll)
 *   event_spin       t0, submit [SIGNAL f], spin on GetCompletedValue until f reaches it
 *   event_block      t0, submit [SIGNAL f], rt_fence_wait (blocks; the interrupt thread wakes it)
 *   cpu_gpu_cpu      queue [WAIT f, COUNT] blocked on the GPU; t0, CPU signal of f, spin on the count
 *   gpu_wait_sys     queue B [WAIT f, COUNT] blocked; t0, submit A [SIGNAL f]; spin on the count
 *   gpu_wait_local   the same, fences in local memory
 *   cpu_held         the same on the legacy stack: the OS holds B on the CPU until A's interrupt
 *   km_submit        the application's kernel-mode submit call (call + validation); the
 *                    scheduler's per-buffer work runs on its own thread, not in this number
 *
 * The probe's two streams are two HW queues of one engine here (CUDA's
 * streams share one GPU), so the model runs one engine and the OS threads,
 * which sleep but for the interrupt-woken ops: no more model threads run at
 * once than this machine has CPUs (the engine and the OS scheduler on the
 * last CPU, the application and the interrupt thread on the first).  The
 * engine polls up to AN_ENGINE_AWAKE_NS idle before parking, as a GPU's
 * front end stays up between the probe's rounds.  Each op brings up its own stack under the run's
 * profile, runs `rounds` rounds after a tenth as many unrecorded, and
 * reports its p50; with a profile that measured the op, the profile's value
 * and model / profile.  An op outside 0.7..1.3 gets a note saying by how
 * much and, where the model has a floor of its own on this machine (the
 * futex wake-to-run of a thread it wakes), what the floor is.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "benchmarks/profile.h"
#include "benchmarks/scenarios/analogs.h"
#include "src/fb_hist.h"
#include "src/fb_limits.h"
#include "src/fb_scenario.h"
#include "gpu-model/runtime/stack.h"
#include "lockfree/arch.h"
#include "lockfree/cacheline.h"

#define AN_DEADLINE_NS 2000000000ull   /* a round not done in 2 s is lost */
#define AN_BLOCK_PAUSE_NS 8000         /* after queueing a WAIT: the engine has fetched it and blocked */
#define AN_TOLERANCE 0.30              /* the target: within +-30 % of the profile */
#define AN_ENGINE_AWAKE_NS 500000      /* the engine polls this long idle before it parks (F1) */

static const struct fb_param analogs_params[] = {
	FB_PARAM_INT("rounds", "rounds", 2000, 50, 10000000, "recorded rounds of each operation"),
	FB_PARAM_END
};

struct an_rig {
	struct rt_stack *s;
	struct rt_direct_queue *qa, *qb;
	struct rt_fence *f;
	int cpu[1];
	uint64_t v;
};

/* Where the engine's COUNT lands: a line of its own. */
struct an_count {
	LF_ALIGNED _Atomic uint64_t n;
	LF_PAD(pad, sizeof(uint64_t));
};
static struct an_count an_count_line;

static int an_up(struct fb_run *run, struct an_rig *g, bool legacy, bool local)
{
	struct rt_stack_config sc;
	char err[256];
	memset(g, 0, sizeof(*g));
	rt_stack_config_default(&sc, legacy ? RT_PATH_LEGACY : RT_PATH_NATIVE);
	sc.os.caps.engines = 1;
	if (local)
		sc.os.caps.storage = HW_STORAGE_LOCAL;
	/* a GPU's front end does not power down between the probe's rounds:
	 * the engine stays awake across a round's idle stretches (an interrupt
	 * thread's wake-up, a scheduler's work) instead of parking in F1 after
	 * the default 20 us, which would add its own wake-up to the round */
	sc.os.caps.idle_spin_ns = AN_ENGINE_AWAKE_NS;
	bm_profile_config(run, &sc.os);
	size_t n = fb_run_ncpus(run);
	if (n >= 2) {
		g->cpu[0] = fb_run_cpu(run, n - 1);
		sc.os.caps.cpus = g->cpu;
		sc.os.caps.ncpus = 1;
		sc.os.irq_cpu = sc.ums.power_cpu = fb_run_cpu(run, 0);
		/* the scheduler beside the engine: its per-buffer work (km_sched_ns)
		 * would otherwise preempt the application inside its submit call */
		sc.ums.sched_cpu = g->cpu[0];
		fb_run_pin_self(run, 0);
	}
	int rc = rt_stack_create(&sc, &g->s, err, sizeof(err));
	if (rc)
		return fb_run_error(run, rc, "analogs: %s", err);
	rc = rt_fence_create(rt_stack_device(g->s), 0, &g->f);
	if (!rc)
		rc = rt_direct_queue_create(g->s, 0, 64, &g->qa);
	if (!rc)
		rc = rt_direct_queue_create(g->s, 0, 64, &g->qb);
	if (rc) {
		rt_stack_destroy(g->s);
		return fb_run_error(run, rc, "analogs: creating the fence and queues: %s", strerror(-rc));
	}
	return 0;
}

static void an_down(struct an_rig *g)
{
	rt_stack_destroy(g->s);   /* frees the fence and the queues */
}

/* Spin (yielding now and then: the interrupt thread may share this CPU)
 * until *w differs from old.  false: the deadline passed. */
static bool an_until_moved(_Atomic uint64_t *w, uint64_t old)
{
	uint64_t deadline = lf_now_ns() + AN_DEADLINE_NS;
	for (unsigned i = 0; atomic_load_explicit(w, memory_order_acquire) == old; i++)
		if ((i & 1023) == 1023) {
			if (lf_now_ns() > deadline)
				return false;
			sched_yield();
		}
	return true;
}

static bool an_until_reached(struct rt_fence *f, uint64_t v)
{
	uint64_t deadline = lf_now_ns() + AN_DEADLINE_NS;
	for (unsigned i = 0; rt_fence_completed(f) < v; i++)
		if ((i & 1023) == 1023) {
			if (lf_now_ns() > deadline)
				return false;
			sched_yield();
		}
	return true;
}

enum an_kind { AN_WRITE, AN_SPIN, AN_BLOCK, AN_CPU_SIGNAL, AN_GPU_WAIT };

/* One round of kind k: its latency in *ns (and the submit call's in *call_ns).  false: lost. */
static bool an_round(struct an_rig *g, enum an_kind k, uint64_t *ns, uint64_t *call_ns)
{
	_Atomic uint64_t *cnt = &an_count_line.n;
	uint64_t i = ++g->v, c0 = atomic_load(cnt), t0, t1;
	struct hw_cmd count = { .op = HW_CMD_COUNT, .stamp = cnt };
	struct hw_cmd sig = rt_cmd_signal(g->f, i);
	bool ok;
	if (k == AN_CPU_SIGNAL || k == AN_GPU_WAIT) {
		struct hw_cmd b[2] = { rt_cmd_wait(g->f, i), count };
		if (rt_direct_queue_submit(g->qb, b, 2))
			return false;
		lf_spin_ns(AN_BLOCK_PAUSE_NS);
	}
	t0 = lf_now_ns();
	switch (k) {
	case AN_WRITE:
		if (rt_direct_queue_submit(g->qa, &count, 1))
			return false;
		t1 = lf_now_ns();
		ok = an_until_moved(cnt, c0);
		break;
	case AN_SPIN:
		if (rt_direct_queue_submit(g->qa, &sig, 1))
			return false;
		t1 = lf_now_ns();
		ok = an_until_reached(g->f, i);
		break;
	case AN_BLOCK:
		if (rt_direct_queue_submit(g->qa, &sig, 1))
			return false;
		t1 = lf_now_ns();
		ok = !rt_fence_wait(g->f, i, (int64_t)AN_DEADLINE_NS);
		break;
	case AN_CPU_SIGNAL:
		ok = !rt_fence_signal(g->f, i);
		t1 = lf_now_ns();
		ok = ok && an_until_moved(cnt, c0);
		break;
	default:
		if (rt_direct_queue_submit(g->qa, &sig, 1))
			return false;
		t1 = lf_now_ns();
		ok = an_until_moved(cnt, c0);
		break;
	}
	*ns = lf_now_ns() - t0;
	if (call_ns)
		*call_ns = t1 - t0;
	return ok;
}

/* The modelled latencies the engine spent, and how late they ended in all. */
static void an_engine_timing(struct an_rig *g, uint64_t *timed, uint64_t *late)
{
	struct hw_engine_stats es;
	rt_stack_engine_stats(g->s, 0, &es);
	*timed = es.timed;
	*late = es.timed_late_ns;
}

struct an_result {
	struct fb_hist *h, *call;
	uint64_t timed, late_ns;    /* over the recorded rounds */
};

static int an_measure(struct fb_run *run, enum an_kind k, bool legacy, bool local, struct an_result *r)
{
	struct an_rig g;
	int rc = an_up(run, &g, legacy, local);
	if (rc)
		return rc;
	uint64_t rounds = (uint64_t)fb_run_int(run, "rounds"), ns, call, t0, l0, t1, l1;
	r->h = fb_hist_new();
	r->call = fb_hist_new();
	for (uint64_t i = 0; i < rounds / 10; i++)
		if (!an_round(&g, k, &ns, &call))
			goto lost;
	an_engine_timing(&g, &t0, &l0);
	for (uint64_t i = 0; i < rounds; i++) {
		if (!an_round(&g, k, &ns, &call))
			goto lost;
		fb_hist_record(r->h, ns);
		fb_hist_record(r->call, call);
	}
	rt_stack_settle(g.s);
	an_engine_timing(&g, &t1, &l1);
	r->timed = t1 - t0;
	r->late_ns = l1 - l0;
	an_down(&g);
	return 0;
lost:
	an_down(&g);
	fb_hist_free(r->h);
	fb_hist_free(r->call);
	return fb_run_error(run, -ETIMEDOUT, "analogs: a round was not done within 2 s (round %llu)",
			    (unsigned long long)g.v);
}

/* The kernel-mode submit call of one [STAMP], awaited before the next. */
static int an_km_submit(struct fb_run *run, struct fb_hist *h)
{
	struct an_rig g;
	int rc = an_up(run, &g, false, false);
	if (rc)
		return rc;
	struct rt_queue_desc d = { .engine = 0, .user_mode = false };
	struct rt_queue *q;
	rc = rt_queue_create(rt_stack_device(g.s), &d, &q);
	if (rc) {
		an_down(&g);
		return fb_run_error(run, rc, "analogs: a kernel-mode queue: %s", strerror(-rc));
	}
	uint64_t rounds = (uint64_t)fb_run_int(run, "rounds");
	for (uint64_t i = 0; i < rounds + rounds / 10; i++) {
		struct hw_cmd c = { .op = HW_CMD_COUNT, .stamp = &an_count_line.n };
		uint64_t v, t0 = lf_now_ns();
		rc = rt_queue_submit(q, &c, 1, &v);
		uint64_t t1 = lf_now_ns();
		if (!rc)
			rc = rt_queue_wait(q, v, (int64_t)AN_DEADLINE_NS);
		if (rc) {
			an_down(&g);
			return fb_run_error(run, rc, "analogs: a kernel-mode submission: %s", strerror(-rc));
		}
		if (i >= rounds / 10)
			fb_hist_record(h, t1 - t0);
	}
	an_down(&g);
	return 0;
}

void bm_analogs_floor(enum bm_op op, double wake_ns, double model_ns, char *buf, size_t len)
{
	buf[0] = '\0';
	if (op == BM_OP_ENQUEUE) {
		snprintf(buf, len, "; it is CPU-side work, the model's own submit call, which no profile changes");
	} else if (op == BM_OP_EVENT_BLOCK && model_ns >= 2 * wake_ns) {
		snprintf(buf, len, "; its floor here is two futex wake-to-runs (the interrupt thread, then the waiter): "
			 "2 x %.1f us on this machine", wake_ns / 1e3);
	} else if (op == BM_OP_EVENT_BLOCK) {
		snprintf(buf, len, "; it wakes two threads (the interrupt thread, then the waiter), a futex "
			 "wake-to-run each (%.1f us on this machine), and took %.1f us, less than the two apart: "
			 "the wake-ups overlapped", wake_ns / 1e3, model_ns / 1e3);
	} else if (op == BM_OP_KM_SUBMIT) {
		snprintf(buf, len, "; the model's own kernel-mode path (its queue bookkeeping, an eventfd write that "
			 "wakes the scheduler thread) adds to the profile's cost: see km_submit under profile=ideal");
	} else if (op == BM_OP_CPU_HELD && model_ns >= wake_ns) {
		snprintf(buf, len, "; its floor here is the interrupt thread's futex wake-to-run, %.1f us on this "
			 "machine (the real machine's interrupt path took about %.1f us in all)", wake_ns / 1e3, 17.7);
	}
}

static void an_report(struct fb_run *run, enum bm_op op, const struct fb_hist *h, const struct an_result *r)
{
	const struct bm_profile *p = bm_profile_of(run);
	const char *key = bm_op_key(op);
	char name[64];
	size_t n = strlen(key) - 3;   /* without "_ns" */
	snprintf(name, sizeof(name), "%.*s_p50", (int)n, key);
	fb_run_hist_percentile(run, name, h, 50.0, FB_LIMIT_NONE);
	if (r && r->timed) {
		snprintf(name, sizeof(name), "%.*s_late_per_delay", (int)n, key);
		fb_run_metric(run, name, (double)r->late_ns / (double)r->timed, "ns");
	}
	if (!p->has[op]) {
		if (!rt_profile_is_ideal(&p->rt))
			fb_run_note(run, "analogs: %.*s: the model's p50 %.2f us beside n/a (profile %s measured no %.*s)",
				    (int)n, key, (double)fb_hist_percentile(h, 50.0) / 1e3, p->rt.name, (int)n, key);
		return;
	}
	double model = (double)fb_hist_percentile(h, 50.0), real = p->measured_ns[op], ratio = model / real;
	snprintf(name, sizeof(name), "%.*s_profile", (int)n, key);
	fb_run_metric(run, name, real, "ns");
	snprintf(name, sizeof(name), "%.*s_vs_profile", (int)n, key);
	fb_run_metric(run, name, ratio, "ratio");
	if (ratio >= 1.0 - AN_TOLERANCE && ratio <= 1.0 + AN_TOLERANCE)
		return;
	char floor[256];
	bm_analogs_floor(op, fb_run_limits(run)->futex_wake_ns, model, floor, sizeof(floor));
	fb_run_note(run, "analogs: %.*s is %.2fx the profile's %.2f us (%+.0f %%, outside +-%.0f %%): the model cannot "
		    "match it that precisely here%s", (int)n, key, ratio, real / 1e3, (ratio - 1.0) * 100.0,
		    AN_TOLERANCE * 100.0, floor);
}

static int an_op(struct fb_run *run, enum bm_op op, enum an_kind k, bool legacy, bool local)
{
	struct an_result r;
	int rc = an_measure(run, k, legacy, local, &r);
	if (rc)
		return rc;
	an_report(run, op, r.h, &r);
	if (op == BM_OP_WRITE_SEEN)
		an_report(run, BM_OP_ENQUEUE, r.call, NULL);
	fb_hist_free(r.h);
	fb_hist_free(r.call);
	return 0;
}

static int analogs_run(struct fb_run *run)
{
	const struct bm_profile *p = bm_profile_of(run);
	static const struct { enum bm_op op; enum an_kind k; bool legacy, local; } ops[] = {
		{ BM_OP_WRITE_SEEN, AN_WRITE, false, false },
		{ BM_OP_EVENT_SPIN, AN_SPIN, false, false },
		{ BM_OP_EVENT_BLOCK, AN_BLOCK, false, false },
		{ BM_OP_CPU_GPU_CPU, AN_CPU_SIGNAL, false, false },
		{ BM_OP_GPU_WAIT_SYS, AN_GPU_WAIT, false, false },
		{ BM_OP_GPU_WAIT_LOCAL, AN_GPU_WAIT, false, true },
		{ BM_OP_CPU_HELD, AN_GPU_WAIT, true, false },
	};
	fb_run_measure_begin(run);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		int rc = an_op(run, ops[i].op, ops[i].k, ops[i].legacy, ops[i].local);
		if (rc)
			return rc;
	}
	struct fb_hist *km = fb_hist_new();
	int rc = an_km_submit(run, km);
	if (!rc)
		an_report(run, BM_OP_KM_SUBMIT, km, NULL);
	fb_hist_free(km);
	fb_run_measure_end(run, (uint64_t)fb_run_int(run, "rounds") * 8);
	if (rc)
		return rc;
	/* one engine; the OS threads sleep but while they handle an interrupt or a buffer */
	fb_run_metric(run, "engines", 1, "engines");
	fb_run_metric(run, "cpus", (double)fb_run_ncpus(run), "cpus");
	if (rt_profile_is_ideal(&p->rt))
		fb_run_note(run, "analogs: profile %s measured nothing: run with --set profile=NAME to compare with a "
			    "real machine", p->rt.name);
	else
		fb_run_note(run, "analogs: profile %s (%s)", p->rt.name, p->origin);
	fb_run_note(run, "analogs: *_late_per_delay: how much later than modelled the engine's latencies ended, on "
		    "average (the yield or clock read in progress, and any thread that held the engine's CPU)");
	fb_run_note(run, "analogs: km_submit is the application's submit call (kernel crossing + validation); the "
		    "scheduler's per-buffer work runs on the OS scheduler thread, outside it");
	return 0;
}

const struct fb_scenario bm_scenario_analogs = {
	.name = "analogs",
	.summary = "the real-GPU probe's operations (calibrate) run in the model, each beside the profile's value",
	.params = analogs_params, .compares_paths = false, .polling_threads = 1,
	.default_iterations = 1, .run = analogs_run,
};
