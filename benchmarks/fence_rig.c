/* benchmarks/fence_rig.c — the fence-stack workloads (see fence_rig.h). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "benchmarks/fence_rig.h"
#include "lockfree/arch.h"
#include "lockfree/die.h"

static enum rt_path rig_path(enum rig_fence_path path)
{
	return path == RIG_FENCE_NATIVE ? RT_PATH_NATIVE : RT_PATH_LEGACY;
}

void rig_config(struct os_config *cfg, enum rig_fence_path path)
{
	struct rt_stack_config sc;
	rt_stack_config_default(&sc, rig_path(path));
	*cfg = sc.os;
}

/* splitmix64: the workloads' reproducible randomness */
uint64_t rig_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int rig_up_logs(const struct os_config *cfg, size_t log_bytes, enum rig_fence_path path,
		       struct rt_stack **s, struct rt_fence **f, unsigned nf, char *err, size_t errlen);

/* Bring up the stack (cfg NULL: rig_config(path)) with nf fences on its
 * device (native where the adapter is: the path's type).  0 or -errno with
 * the reason in err; nothing is left on failure. */
static int rig_up(const struct os_config *cfg, enum rig_fence_path path, struct rt_stack **s,
		     struct rt_fence **f, unsigned nf, char *err, size_t errlen)
{
	return rig_up_logs(cfg, 0, path, s, f, nf, err, errlen);
}

/* rig_up with user-mode HW queues' log buffers of log_bytes each (0: the default). */
static int rig_up_logs(const struct os_config *cfg, size_t log_bytes, enum rig_fence_path path,
		       struct rt_stack **s, struct rt_fence **f, unsigned nf, char *err, size_t errlen)
{
	struct rt_stack_config sc;
	rt_stack_config_default(&sc, rig_path(path));
	if (cfg)
		sc.os = *cfg;
	if (log_bytes)
		sc.ums.log_bytes = log_bytes;
	int rc = rt_stack_create(&sc, s, err, errlen);
	if (rc)
		return rc;
	for (unsigned i = 0; i < nf; i++) {
		rc = rt_fence_create(rt_stack_device(*s), 0, &f[i]);
		if (rc) {
			snprintf(err, errlen, "creating fence %u: %s", i, strerror(-rc));
			rt_stack_destroy(*s);
			return rc;
		}
	}
	return 0;
}

/* The rig's queues exist (queue_rc: how creating them went): on failure
 * tear the stack down and say why in err.  0 or -errno. */
static int rig_start(struct rt_stack *s, int queue_rc, char *err, size_t errlen)
{
	if (queue_rc) {
		snprintf(err, errlen, "creating a queue: %s", strerror(-queue_rc));
		rt_stack_destroy(s);
	}
	return queue_rc;
}

/* Settle the stack (the last signals raised and handled), then read the counters. */
static void rig_drain(struct rt_stack *st, struct os_stats *s)
{
	rt_stack_settle(st);
	rt_stack_os_stats(st, s);
}

/* a -= b, counter by counter (struct os_stats holds only uint64_t counters). */
static void rig_stats_sub(struct os_stats *a, const struct os_stats *b)
{
	_Static_assert(sizeof(struct os_stats) % sizeof(uint64_t) == 0, "os_stats: uint64_t counters only");
	bm_counters_sub(a, b, sizeof(*a));
}

/* The end of a measured region that began with counters s0 and host h0:
 * settle, then *os and *host hold the region's counters and host CPU. */
static void rig_drain_host(struct rt_stack *st, struct os_stats *os, const struct os_stats *s0,
			   struct bm_host *host, const struct bm_host *h0)
{
	rig_drain(st, os);
	bm_host_snap(st, os, host);
	bm_host_sub(host, h0);
	rig_stats_sub(os, s0);
}

/* ---- irq suppression: lockstep signals, a fraction CPU-waited ---- */

/* The lockstep rig of rig_irq_run. */
struct rig_irq_rig {
	const struct rig_irq_params *p;
	struct rt_fence *f;
	struct rt_direct_queue *q;    /* the direct queue, or */
	struct rt_queue *uq;          /* the user-mode queue (p->user_mode) */
	struct rt_stack *st;
	_Atomic uint64_t stamp;
	uint64_t deadline;
};

/* Signal value v (waited or not) and wait for it; true when it had a CPU waiter
 * that missed its deadline although the value was reached, and the OS had
 * handled every interrupt raised by then (a lost wake-up). */
static bool rig_irq_one(struct rig_irq_rig *g, uint64_t v, bool waited, struct fb_hist *lat)
{
	struct lf_event ev;
	bool lost = false;
	uint64_t t0 = 0;
	if (waited) {
		t0 = lf_now_ns();
		lf_event_init(&ev);
		rt_fence_wait_event(g->f, v, &ev);   /* registered before the GPU signals */
	}
	struct hw_cmd cmds[3] = {
		{ .op = HW_CMD_WORK, .arg = g->p->work_ns },
		{ .op = HW_CMD_STAMP, .stamp = &g->stamp },
		rt_cmd_signal(g->f, v),
	};
	if (g->uq) {
		if (rt_queue_submit(g->uq, cmds, 3, NULL))
			lf_die("user-mode submission failed");   /* only on device removal or a 10 s stall */
	} else {
		rt_direct_queue_submit(g->q, cmds, 3);
	}
	if (waited) {
		if (lf_event_wait(&ev, 2000, (int64_t)g->deadline)) {
			/* late is not lost: a starved engine or interrupt thread
			 * may still be on its way.  The signal is queued, so the
			 * fence reaches v; then the run that wrote it finishes
			 * raising and the OS handles what was raised; a waiter
			 * still not released then was lost (no deadline decides) */
			while (rt_fence_completed(g->f) < v)
				lf_sleep_until(lf_now_ns() + 1000000);
			rt_stack_settle(g->st);
			lost = !lf_event_is_set(&ev);
			/* a lost waiter is counted, then freed by a CPU signal of the
			 * value it waits for (released before the call returns), so
			 * a broken protocol ends the run instead of hanging it */
			if (lost && rt_fence_signal(g->f, v))
				lf_die("freeing a lost waiter: the CPU signal failed");
			lf_event_wait(&ev, 0, -1);
		}
		rt_fence_trace_wait(g->f, v, t0, lost ? -ETIMEDOUT : 0);   /* the timeline's CPU wait (when tracing) */
		if (lat)
			fb_hist_record(lat, (uint64_t)lf_ticks_ns(lf_ticks() - atomic_load_explicit(&g->stamp, memory_order_acquire)));
	} else {
		/* user mode polls the CPU-readable CurrentValue: no OS involvement */
		for (unsigned spin = 0; rt_fence_completed(g->f) < v; spin++)
			if (spin > 64)
				sched_yield();
	}
	return lost;
}

int rig_irq_run(const struct rig_irq_params *p, struct rig_irq_result *r, char *err, size_t errlen)
{
	struct rt_stack *st;
	struct rig_irq_rig g = { .p = p, .deadline = p->deadline_ns ? p->deadline_ns : 1000000000ull };
	memset(r, 0, sizeof(*r));
	int rc = rig_up_logs(p->cfg, p->log_bytes, p->path, &st, &g.f, 1, err, errlen);
	if (rc)
		return rc;
	g.st = st;
	if (p->user_mode) {
		struct rt_queue_desc desc = { .engine = 0, .user_mode = true, .ring_slots = 256 };
		rc = rt_queue_create(rt_stack_device(st), &desc, &g.uq);
	} else {
		rc = rt_direct_queue_create(st, 0, 256, &g.q);
	}
	rc = rig_start(st, rc, err, errlen);
	if (rc)
		return rc;
	/* fences with a waiter that nothing satisfies: what a scan has to walk */
	static struct lf_event never;
	for (unsigned i = 0; i < p->idle_fences; i++) {
		struct rt_fence *idle;
		rc = rt_fence_create(rt_stack_device(st), 0, &idle);
		if (rc) {
			snprintf(err, errlen, "creating idle fence %u: %s", i, strerror(-rc));
			rt_stack_destroy(st);
			return rc;
		}
		rt_fence_wait_event(idle, UINT64_MAX / 2, &never);
	}
	/* warm-up: the same workload, not measured (threads awake, pages touched) */
	uint64_t v = 0, w0 = lf_now_ns();
	for (uint64_t n = 0; lf_now_ns() - w0 < p->warmup_ns; n++)
		rig_irq_one(&g, ++v, (double)(n % 100) < p->waited_fraction * 100.0, NULL);
	struct os_stats s0;
	rig_drain(st, &s0);   /* the warm-up's last interrupts are not the region's */
	if (p->trace && (rc = rt_stack_trace_start(st, 0))) {
		snprintf(err, errlen, "starting the timeline trace: %s", strerror(-rc));
		rt_stack_destroy(st);
		return rc;
	}
	if (p->started)
		p->started(p->started_arg, st);
	r->wait_lat = fb_hist_new();
	/* exact fraction: signal i is waited when the running share is behind */
	struct bm_host h0;
	bm_host_snap(st, &s0, &h0);
	uint64_t t0 = lf_now_ns();
	for (uint64_t i = 1; i <= p->signals; i++) {
		if (p->period_ns)
			lf_sleep_until(t0 + (i - 1) * p->period_ns);
		bool waited = (double)r->waited < p->waited_fraction * (double)i;
		r->waited += waited;
		r->lost_wakeups += rig_irq_one(&g, ++v, waited, r->wait_lat);
	}
	r->elapsed_ns = lf_now_ns() - t0;
	rig_drain_host(st, &r->os, &s0, &r->host, &h0);
	r->signals = r->os.gpu_signals;
	if (p->trace && (rc = rig_trace_copy(st, p->trace, p->trace_label, RIG_TRACE_OK, &r->trace))) {
		snprintf(err, errlen, "copying the timeline: %s", strerror(-rc));
		fb_hist_free(r->wait_lat);
		r->wait_lat = NULL;
		rt_stack_destroy(st);
		return rc;
	}
	rt_stack_destroy(st);
	return 0;
}

/* ---- GPU wait ---- */

/* The two-engine rig of rig_gpuwait_run: f[0] A signals, B waits; f[1] B signals, the app waits. */
struct rig_gpuwait_rig {
	struct rt_fence **f;
	struct rt_direct_queue *qa, *qb;
	uint64_t work_ns, v;
	_Atomic uint64_t ta, tb;
};

/* One round; records A's signal -> B past its wait into lat (if any).
 * true when B never got past its wait (10 s). */
static bool rig_gpuwait_one(struct rig_gpuwait_rig *g, struct fb_hist *lat)
{
	uint64_t i = ++g->v;
	struct hw_cmd b[3] = {
		rt_cmd_wait(g->f[0], i),
		{ .op = HW_CMD_STAMP, .stamp = &g->tb },
		rt_cmd_signal(g->f[1], i),
	};
	struct hw_cmd s[3] = {
		{ .op = HW_CMD_WORK, .arg = g->work_ns },
		{ .op = HW_CMD_STAMP, .stamp = &g->ta },
		rt_cmd_signal(g->f[0], i),
	};
	rt_direct_queue_submit(g->qb, b, 3);
	rt_direct_queue_submit(g->qa, s, 3);
	/* sleep in the OS, not on a CPU an engine may need */
	if (rt_fence_wait(g->f[1], i, 10000000000ll))
		return true;
	if (lat)
		fb_hist_record(lat, (uint64_t)lf_ticks_ns(atomic_load(&g->tb) - atomic_load(&g->ta)));
	return false;
}

int rig_gpuwait_run(const struct rig_gpuwait_params *p, struct rig_gpuwait_result *r, char *err, size_t errlen)
{
	struct os_config cfg;
	struct rt_stack *st;
	struct rt_fence *f[2];   /* f: A signals, B waits; done: B signals, the app waits */
	memset(r, 0, sizeof(*r));
	if (p->cfg) {
		cfg = *p->cfg;
	} else {
		rig_config(&cfg, p->path);
		cfg.caps.engines = 2;
	}
	if (cfg.caps.engines < 2) {
		snprintf(err, errlen, "gpu wait needs 2 engines");
		return -EINVAL;
	}
	int rc = rig_up(&cfg, p->path, &st, f, 2, err, errlen);
	if (rc)
		return rc;
	struct rt_direct_queue *qa = NULL, *qb = NULL;
	rc = rt_direct_queue_create(st, 0, 64, &qa);
	if (!rc)
		rc = rt_direct_queue_create(st, 1, 64, &qb);
	rc = rig_start(st, rc, err, errlen);
	if (rc)
		return rc;
	/* warm-up rounds first, not recorded; the counters are the measured rounds' */
	struct rig_gpuwait_rig g = { .f = f, .qa = qa, .qb = qb, .work_ns = p->work_ns };
	uint64_t w0 = lf_now_ns();
	while (lf_now_ns() - w0 < p->warmup_ns)
		if (rig_gpuwait_one(&g, NULL))
			goto hung;
	struct os_stats s0;
	rig_drain(st, &s0);   /* the warm-up's last interrupts are not the region's */
	if (p->trace && (rc = rt_stack_trace_start(st, 0))) {
		snprintf(err, errlen, "starting the timeline trace: %s", strerror(-rc));
		rt_stack_destroy(st);
		return rc;
	}
	if (p->started)
		p->started(p->started_arg, st);
	r->lat = fb_hist_new();
	struct bm_host h0;
	bm_host_snap(st, &s0, &h0);
	uint64_t t0 = lf_now_ns();
	for (uint64_t i = 1; i <= p->rounds; i++)
		if (rig_gpuwait_one(&g, r->lat))
			goto hung;
	r->elapsed_ns = lf_now_ns() - t0;
	rig_drain_host(st, &r->os, &s0, &r->host, &h0);
	if (p->trace && (rc = rig_trace_copy(st, p->trace, p->trace_label, RIG_TRACE_OK, &r->trace))) {
		snprintf(err, errlen, "copying the timeline: %s", strerror(-rc));
		fb_hist_free(r->lat);
		r->lat = NULL;
		rt_stack_destroy(st);
		return rc;
	}
	rt_stack_destroy(st);
	return 0;

hung:
	snprintf(err, errlen, "round %llu: engine B never got past its wait", (unsigned long long)g.v);
	fb_hist_free(r->lat);
	r->lat = NULL;
	rt_stack_destroy(st);
	return -ETIMEDOUT;
}

/* ---- stress ---- */

struct rig_stress_thread {
	pthread_t thread;
	const struct rig_stress_params *p;
	struct rt_fence *f;
	struct rt_direct_queue *q;
	_Atomic uint64_t *lost_total;
	uint64_t pairs, blocked, seed;
};

static void *rig_stress_main(void *arg)
{
	struct rig_stress_thread *t = arg;
	const struct rig_stress_params *p = t->p;
	uint64_t deadline = p->deadline_ns ? p->deadline_ns : 1000000000ull;

	for (uint64_t i = 1; i <= p->pairs; i++) {
		if (p->stop_after_lost && atomic_load(t->lost_total) >= p->stop_after_lost)
			break;
		struct hw_cmd cmds[2] = {
			{ .op = HW_CMD_WORK, .arg = p->max_work_ns ? rig_rand(&t->seed) % (p->max_work_ns + 1) : 0 },
			rt_cmd_signal(t->f, i),
		};
		rt_direct_queue_submit(t->q, cmds, 2);
		if (p->max_app_delay_ns)
			lf_spin_ns(rig_rand(&t->seed) % (p->max_app_delay_ns + 1));
		if (rt_fence_completed(t->f) < i)
			t->blocked++;
		/* not reached within a deadline: a slow GPU, not a lost wake-up; wait
		 * again (a value that lands meanwhile with nobody to release the
		 * waiter is a lost wake-up at the next deadline) so the pair completes */
		while (rt_fence_wait(t->f, i, (int64_t)deadline) == -ETIMEDOUT)
			;
		t->pairs++;
	}
	return NULL;
}

int rig_stress_run(const struct rig_stress_params *p, struct rig_stress_result *r, char *err, size_t errlen)
{
	enum { MAXT = 64 };
	struct os_config cfg;
	struct rt_stack *st;
	struct rt_fence *f[MAXT];
	struct rig_stress_thread t[MAXT];
	_Atomic uint64_t lost_total = 0;

	memset(r, 0, sizeof(*r));
	if (p->threads < 1 || p->threads > MAXT || p->engines < 1 || p->engines > HW_MAX_ENGINES) {
		snprintf(err, errlen, "threads must be 1..%d and engines 1..%d", MAXT, HW_MAX_ENGINES);
		return -EINVAL;
	}
	rig_config(&cfg, p->path);
	cfg.caps.engines = p->engines;
	cfg.caps.fault = p->hw_fault;
	cfg.fault = p->os_fault;
	int rc = rig_up(&cfg, p->path, &st, f, p->threads, err, errlen);
	if (rc)
		return rc;
	for (unsigned i = 0; i < p->threads; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		t[i].p = p;
		t[i].f = f[i];
		if (!rc)
			rc = rt_direct_queue_create(st, i % p->engines, 64, &t[i].q);
		t[i].seed = p->seed + i;
		t[i].lost_total = &lost_total;
	}
	rc = rig_start(st, rc, err, errlen);
	if (rc)
		return rc;
	uint64_t t0 = lf_now_ns();
	for (unsigned i = 0; i < p->threads; i++)
		pthread_create(&t[i].thread, NULL, rig_stress_main, &t[i]);
	/* the lost-wake-up count lives in the OS's per-thread counters: watch it
	 * so that a broken protocol ends the run early instead of timing out
	 * once per pair */
	bool joined[MAXT] = { false };
	for (unsigned left = p->threads; left;) {
		for (unsigned i = 0; i < p->threads; i++)
			if (!joined[i] && pthread_tryjoin_np(t[i].thread, NULL) == 0) {
				joined[i] = true;
				left--;
			}
		struct os_stats s;
		rt_stack_os_stats(st, &s);
		atomic_store(&lost_total, s.lost_wakeups);
		struct timespec ts = { 0, 5000000 };
		nanosleep(&ts, NULL);
	}
	r->elapsed_ns = lf_now_ns() - t0;
	for (unsigned i = 0; i < p->threads; i++) {
		r->pairs += t[i].pairs;
		r->blocked += t[i].blocked;
	}
	rig_drain(st, &r->os);
	r->lost_wakeups = r->os.lost_wakeups;
	rt_stack_destroy(st);
	return 0;
}
