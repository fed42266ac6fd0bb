/* src/fb_limits.c — measure the machine's limits.  Contract in fb_limits.h. */
#include "src/fb_limits.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "src/fb_hist.h"
#include "lockfree/alloc.h"
#include "lockfree/arch.h"
#include "lockfree/cacheline.h"
#include "lockfree/event.h"
#include "lockfree/thread.h"

/* Sample counts of the harness's own measurement: ~10 ms each when idle. */
#define RTT_BATCHES     50
#define RTT_PER_BATCH   200
#define RTT_BUDGET_MS   300
#define SYS_BATCHES     50
#define SYS_PER_BATCH   200
#define FUTEX_SAMPLES   40
#define FUTEX_GAP_US    200
#define FUTEX_BUDGET_MS 400

const char *fb_limit_name(enum fb_limit which)
{
	switch (which) {
	case FB_LIMIT_CACHELINE_RTT:  return "cacheline-rtt";
	case FB_LIMIT_CACHELINE_HALF: return "cacheline-oneway";
	case FB_LIMIT_CACHELINE_MSG:  return "cacheline-msg";
	case FB_LIMIT_SYSCALL:        return "syscall";
	case FB_LIMIT_FUTEX_WAKE:     return "futex-wake";
	default:                      return "none";
	}
}

double fb_limits_value(const struct fb_limits *l, enum fb_limit which)
{
	switch (which) {
	case FB_LIMIT_CACHELINE_RTT:  return l->cacheline_rtt_ns;
	case FB_LIMIT_CACHELINE_HALF: return l->cacheline_rtt_ns / 2.0;
	case FB_LIMIT_CACHELINE_MSG:  return l->cacheline_msg_ns;
	case FB_LIMIT_SYSCALL:        return l->syscall_ns;
	case FB_LIMIT_FUTEX_WAKE:     return l->futex_wake_ns;
	default:                      return NAN;
	}
}

/* ---- cache-line round trip ---- */

struct pingpong {
	/* The line measured: ping stores odd values, pong answers with the next
	 * even one.  Release stores / acquire loads: each side's store is what the
	 * other waits for; no other data rides on it. */
	_Atomic uint64_t ball LF_ALIGNED;
	LF_PAD(pad0, sizeof(uint64_t));
	/* The answer's line in the message variant: pong writes it, ping polls
	 * it; each line then has one writer and one poller (a doorbell's pattern). */
	_Atomic uint64_t answer LF_ALIGNED;
	LF_PAD(pad1, sizeof(uint64_t));
	/* Cold: set once by whichever side times out; polled every 1024 spins. */
	_Atomic int abort LF_ALIGNED;
	bool two_lines;
	unsigned batches, per_batch;
	uint64_t deadline;
	struct fb_hist *h;
	int rc;
};
LF_ASSERT_OWN_LINE(struct pingpong, answer);
LF_ASSERT_OWN_LINE(struct pingpong, abort);

/* Spin until *w == want; false on abort or past the deadline (then abort is set). */
static bool spin_until(struct pingpong *p, _Atomic uint64_t *w, uint64_t want)
{
	for (unsigned n = 1;; n++) {
		if (atomic_load_explicit(w, memory_order_acquire) == want)
			return true;
		if ((n & 1023) == 0 &&
		    (atomic_load_explicit(&p->abort, memory_order_relaxed) || lf_now_ns() > p->deadline)) {
			atomic_store_explicit(&p->abort, 1, memory_order_relaxed);
			return false;
		}
		lf_cpu_relax();
	}
}

static void *pong_thread(void *arg)
{
	struct pingpong *p = arg;
	_Atomic uint64_t *out = p->two_lines ? &p->answer : &p->ball;
	uint64_t total = (uint64_t)(p->batches + 1) * p->per_batch;
	for (uint64_t i = 1; i <= total; i++) {
		if (!spin_until(p, &p->ball, 2 * i - 1))
			break;
		atomic_store_explicit(out, 2 * i, memory_order_release);
	}
	return NULL;
}

static void *ping_thread(void *arg)
{
	struct pingpong *p = arg;
	_Atomic uint64_t *in = p->two_lines ? &p->answer : &p->ball;
	uint64_t i = 0;
	/* Batch 0 is a warm-up (the partner may still be starting): not recorded. */
	for (unsigned b = 0; b <= p->batches; b++) {
		uint64_t t0 = lf_now_ns();
		for (unsigned k = 0; k < p->per_batch; k++) {
			i++;
			atomic_store_explicit(&p->ball, 2 * i - 1, memory_order_release);
			if (!spin_until(p, in, 2 * i)) {
				p->rc = -ETIMEDOUT;
				return NULL;
			}
		}
		if (b)
			fb_hist_record(p->h, (lf_now_ns() - t0) / p->per_batch);
	}
	return NULL;
}

static int pingpong_run(int cpu_a, int cpu_b, unsigned batches, unsigned per_batch, unsigned budget_ms,
			bool two_lines, struct fb_hist *h)
{
	static struct pingpong zero;
	struct pingpong p = zero;
	pthread_t ping, pong;
	p.two_lines = two_lines;
	p.batches = batches;
	p.per_batch = per_batch ? per_batch : 1;
	p.deadline = lf_now_ns() + (uint64_t)budget_ms * 1000000u;
	p.h = h;
	int rc = lf_thread_create_pinned(&pong, cpu_b, pong_thread, &p);
	if (rc)
		return rc;
	rc = lf_thread_create_pinned(&ping, cpu_a, ping_thread, &p);
	if (rc) {
		atomic_store(&p.abort, 1);
		pthread_join(pong, NULL);
		return rc;
	}
	pthread_join(ping, NULL);
	pthread_join(pong, NULL);
	return p.rc;
}

int fb_limits_cacheline_rtt(int cpu_a, int cpu_b, unsigned batches, unsigned per_batch,
			    unsigned budget_ms, struct fb_hist *h)
{
	return pingpong_run(cpu_a, cpu_b, batches, per_batch, budget_ms, false, h);
}

int fb_limits_cacheline_msg_rtt(int cpu_a, int cpu_b, unsigned batches, unsigned per_batch,
				unsigned budget_ms, struct fb_hist *h)
{
	return pingpong_run(cpu_a, cpu_b, batches, per_batch, budget_ms, true, h);
}

/* ---- the doorbell floor ---- */

/* The seed's user-mode submission with no model around it: a command slot,
 * the ring control's write pointer and the doorbell register, each on its own
 * line, and a bare "engine" thread polling the register. */
struct bare_cmd {
	uint64_t w[5];
	_Atomic uint64_t *stamp;
};

#define BARE_SLOTS 64

struct bare_doorbell {
	_Atomic uint64_t reg LF_ALIGNED;       /* the doorbell: the submitter writes, the engine polls */
	LF_PAD(pad0, sizeof(uint64_t));
	_Atomic uint64_t wptr LF_ALIGNED;      /* the ring control's write pointer */
	LF_PAD(pad1, sizeof(uint64_t));
	struct bare_cmd ring[BARE_SLOTS] LF_ALIGNED;
	_Atomic uint64_t stamp LF_ALIGNED;     /* the engine's timestamp of the command */
	LF_PAD(pad2, sizeof(uint64_t));
	_Atomic int abort LF_ALIGNED;
	unsigned samples, gap_ns;
	uint64_t deadline;
	struct fb_hist *h;
	int rc;
};
LF_ASSERT_OWN_LINE(struct bare_doorbell, wptr);
LF_ASSERT_OWN_LINE(struct bare_doorbell, abort);

#define BARE_STOP UINT64_MAX

static void *bare_engine(void *arg)
{
	struct bare_doorbell *b = arg;
	uint64_t seen = 0, rd = 0;
	for (unsigned n = 1;; n++) {
		/* polls with plain loads and no pause, as the model's idle engine does */
		uint64_t v = atomic_load_explicit(&b->reg, memory_order_acquire);
		if (v == seen) {
			if ((n & 4095) == 0 &&
			    (atomic_load_explicit(&b->abort, memory_order_relaxed) || lf_now_ns() > b->deadline))
				return NULL;
			continue;
		}
		if (v == BARE_STOP)
			return NULL;
		seen = v;
		uint64_t w = atomic_load_explicit(&b->wptr, memory_order_acquire);
		for (; rd < w; rd++) {
			struct bare_cmd c = b->ring[rd % BARE_SLOTS];
			atomic_store_explicit(c.stamp, lf_ticks_ordered(), memory_order_release);
		}
	}
}

static void *bare_submitter(void *arg)
{
	struct bare_doorbell *b = arg;
	for (unsigned i = 0; i <= b->samples; i++) {         /* sample 0: warm-up */
		atomic_exchange_explicit(&b->stamp, 0, memory_order_seq_cst);
		lf_spin_ns(b->gap_ns);
		uint64_t t0 = lf_ticks_ordered();
		/* the seed's order: the command, the write pointer, the doorbell */
		b->ring[i % BARE_SLOTS] = (struct bare_cmd){ .w = { i }, .stamp = &b->stamp };
		atomic_store_explicit(&b->wptr, i + 1, memory_order_release);
		atomic_store_explicit(&b->reg, i + 1, memory_order_release);
		uint64_t t;
		for (unsigned n = 1; !(t = atomic_load_explicit(&b->stamp, memory_order_acquire)); n++) {
			if ((n & 1023) == 0 && lf_now_ns() > b->deadline) {
				b->rc = -ETIMEDOUT;
				atomic_store_explicit(&b->abort, 1, memory_order_relaxed);
				return NULL;
			}
			lf_cpu_relax();
		}
		if (i)
			fb_hist_record(b->h, (uint64_t)lf_ticks_ns(t - t0));
	}
	atomic_store_explicit(&b->reg, BARE_STOP, memory_order_release);
	return NULL;
}

int fb_limits_doorbell_floor(int cpu_app, int cpu_engine, unsigned samples, unsigned gap_ns,
			     unsigned budget_ms, struct fb_hist *h)
{
	lf_ticks_init();
	struct bare_doorbell *b = lf_alloc(sizeof(*b), LF_CACHELINE);
	b->samples = samples;
	b->gap_ns = gap_ns;
	b->deadline = lf_now_ns() + (uint64_t)budget_ms * 1000000u;
	b->h = h;
	pthread_t eng, app;
	int rc = lf_thread_create_pinned(&eng, cpu_engine, bare_engine, b);
	if (rc)
		goto out;
	rc = lf_thread_create_pinned(&app, cpu_app, bare_submitter, b);
	if (rc) {
		atomic_store(&b->abort, 1);
		pthread_join(eng, NULL);
		goto out;
	}
	pthread_join(app, NULL);
	pthread_join(eng, NULL);
	rc = b->rc;
out:
	lf_free(b, sizeof(*b), LF_CACHELINE);
	return rc;
}

/* ---- bare syscall ---- */

int fb_limits_syscall(unsigned batches, unsigned per_batch, struct fb_hist *h)
{
	if (!per_batch)
		per_batch = 1;
	for (unsigned b = 0; b < batches; b++) {
		uint64_t t0 = lf_now_ns();
		for (unsigned k = 0; k < per_batch; k++)
			syscall(SYS_getppid);
		fb_hist_record(h, (lf_now_ns() - t0) / per_batch);
	}
	return 0;
}

/* ---- futex wake-to-run ---- */

struct wake {
	/* Sample number the waker has released; the futex word.  The waker's
	 * release store publishes t_wake; the waiter's acquire load reads it. */
	_Atomic uint32_t word LF_ALIGNED;
	_Atomic uint64_t t_wake;
	/* Sample number the waiter is about to wait for (release: it is past
	 * recording the previous one). */
	_Atomic uint32_t parked LF_ALIGNED;
	/* Set by whichever thread sees the deadline pass (both may, at once:
	 * relaxed, it orders nothing); read after the joins, which order it.
	 * The only thing either thread says about the outcome: a plain rc
	 * stored by both would be a data race. */
	_Atomic int abort;
	unsigned samples, gap_us;
	uint64_t deadline;
	struct fb_hist *h;
};

static bool wake_expired(struct wake *w)
{
	if (atomic_load_explicit(&w->abort, memory_order_relaxed))
		return true;
	if (lf_now_ns() <= w->deadline)
		return false;
	atomic_store_explicit(&w->abort, 1, memory_order_relaxed);
	return true;
}

static void *waiter_thread(void *arg)
{
	struct wake *w = arg;
	const uint64_t slice_ns = 20 * 1000 * 1000;  /* re-check the deadline every 20 ms */
	for (uint32_t i = 1; i <= w->samples; i++) {
		atomic_store_explicit(&w->parked, i, memory_order_release);
		while (atomic_load_explicit(&w->word, memory_order_acquire) != i) {
			if (wake_expired(w))
				return NULL;
			/* The kernel compares word with i-1 atomically: a wake that
			 * came first makes this return EAGAIN, never sleep through it. */
			lf_futex_wait_until(&w->word, i - 1, lf_now_ns() + slice_ns);
		}
		uint64_t t1 = lf_now_ns();
		uint64_t t0 = atomic_load_explicit(&w->t_wake, memory_order_relaxed);
		if (t1 > t0)
			fb_hist_record(w->h, t1 - t0);
	}
	return NULL;
}

static void *waker_thread(void *arg)
{
	struct wake *w = arg;
	const struct timespec gap = { 0, (long)w->gap_us * 1000 };
	for (uint32_t i = 1; i <= w->samples; i++) {
		while (atomic_load_explicit(&w->parked, memory_order_acquire) != i) {
			if (wake_expired(w))
				return NULL;
			sched_yield();
		}
		nanosleep(&gap, NULL);   /* let the waiter park and its CPU go idle */
		atomic_store_explicit(&w->t_wake, lf_now_ns(), memory_order_relaxed);
		atomic_store_explicit(&w->word, i, memory_order_release);
		lf_futex_wake(&w->word, 1);
	}
	return NULL;
}

int fb_limits_futex_wake(int cpu_waker, int cpu_waiter, unsigned samples, unsigned gap_us,
			 unsigned budget_ms, struct fb_hist *h)
{
	static struct wake zero;
	struct wake w = zero;
	pthread_t waiter, waker;
	w.samples = samples;
	w.gap_us = gap_us < 1000000 ? gap_us : 999999;
	w.deadline = lf_now_ns() + (uint64_t)budget_ms * 1000000u;
	w.h = h;
	int rc = lf_thread_create_pinned(&waiter, cpu_waiter, waiter_thread, &w);
	if (rc)
		return rc;
	rc = lf_thread_create_pinned(&waker, cpu_waker, waker_thread, &w);
	if (rc) {
		atomic_store(&w.abort, 1);
		pthread_join(waiter, NULL);
		return rc;
	}
	pthread_join(waker, NULL);
	pthread_join(waiter, NULL);
	return atomic_load_explicit(&w.abort, memory_order_relaxed) ? -ETIMEDOUT : 0;
}

/* ---- all three ---- */

static double median_of(const struct fb_hist *h)
{
	return fb_hist_count(h) ? (double)fb_hist_percentile(h, 50.0) : NAN;
}

/* Append "what (CPUs a and b)" to the note, "; "-separated. */
static void add_note(struct fb_limits *out, const char *what, int a, int b)
{
	size_t len = strlen(out->note);
	const char *sep = len ? "; " : "";
	if (b < 0)
		snprintf(out->note + len, sizeof(out->note) - len, "%s%s (CPU %d only)", sep, what, a);
	else
		snprintf(out->note + len, sizeof(out->note) - len, "%s%s (CPUs %d and %d)", sep, what, a, b);
}

/* A round trip between cpus[0] and cpus[1] (one line, or two: messages):
 * its median in *median, a note when it timed out.  0 or -errno of pinning. */
static int measure_pingpong(const int *cpus, bool two_lines, const char *what, struct fb_hist *h,
			    struct fb_limits *out, double *median)
{
	char note[96];
	fb_hist_reset(h);
	int rc = pingpong_run(cpus[0], cpus[1], RTT_BATCHES, RTT_PER_BATCH, RTT_BUDGET_MS, two_lines, h);
	if (rc == -ETIMEDOUT) {
		snprintf(note, sizeof(note), "%s timed out: CPUs busy", what);
		add_note(out, note, cpus[0], cpus[1]);
	} else if (rc) {
		return rc;
	}
	*median = median_of(h);
	return 0;
}

int fb_limits_measure(const int *cpus, size_t ncpus, struct fb_limits *out)
{
	double rtt_msg = NAN;
	memset(out, 0, sizeof(*out));
	out->cacheline_rtt_ns = out->cacheline_msg_ns = out->syscall_ns = out->futex_wake_ns = NAN;
	out->cpu_a = out->cpu_b = -1;
	if (!ncpus)
		return -EINVAL;
	struct fb_hist *h = fb_hist_new();
	int rc = 0;
	out->cpu_a = cpus[0];
	if (ncpus >= 2) {
		out->cpu_b = cpus[1];
		rc = measure_pingpong(cpus, false, "cache-line round trip", h, out, &out->cacheline_rtt_ns);
		if (!rc)
			rc = measure_pingpong(cpus, true, "cache-line message round trip", h, out, &rtt_msg);
		if (rc)
			goto out;
		out->cacheline_msg_ns = rtt_msg / 2.0;
	} else {
		add_note(out, "cache-line round trip cannot be measured: it needs two CPUs", cpus[0], -1);
	}
	fb_hist_reset(h);
	fb_limits_syscall(SYS_BATCHES, SYS_PER_BATCH, h);
	out->syscall_ns = median_of(h);
	fb_hist_reset(h);
	int waiter_cpu = ncpus >= 2 ? cpus[1] : cpus[0];
	rc = fb_limits_futex_wake(cpus[0], waiter_cpu, FUTEX_SAMPLES, FUTEX_GAP_US, FUTEX_BUDGET_MS, h);
	if (rc == -ETIMEDOUT)
		add_note(out, "futex wake-to-run timed out: CPUs busy", cpus[0], waiter_cpu);
	else if (rc)
		goto out;
	out->futex_wake_ns = median_of(h);
	rc = 0;
out:
	fb_hist_free(h);
	return rc;
}
