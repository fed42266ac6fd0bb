/* benchmarks/micro/bench_waitset.c — the fence waiter set (lf_waitset)
 * beside a pthread mutex + sorted list publishing the same threshold, in the
 * same run.
 *
 *   waitset_add_release/<impl>/waiters:W    one thread: add W waiters with
 *       values spread over [cv+1, cv+64], then advance cv by 64 and release
 *       them all; items = waiters added (and released)
 *   waitset_adders/<impl>/depth:D/threads:N  N adder threads add waiters, one
 *       per iteration, at cv + [1, 64], each with at most D outstanding (a
 *       node is reused once released); one more thread (started in setup,
 *       stopped in teardown: the engine + interrupt handler) loops advancing
 *       cv by one and, as the CMP would, releases only if cv > threshold (an
 *       "interrupt"), then resamples cv; items = waiters added
 *
 * Waiter nodes come from a fixed pool per adder, reused in order once
 * released; an adder that finds its next node still waiting spins, yields,
 * and gives up with an error after STALL_NS.  Teardown stops the consumer,
 * flushes, and reconciles added == released and the set empty, else
 * aborts.  Counters: interrupts_per_add (releases the CMP rule asked for),
 * threshold_drops_per_add (adds that lowered the threshold), pool_waits_per_add.
 * With 2 adders + the consumer on 2 CPUs the threads outnumber the CPUs
 * (threads_over_cpus).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "benchmarks/backoff.h"
#include "lockfree/alloc.h"
#include "lockfree/arch.h"
#include "lockfree/cacheline.h"
#include "lockfree/counter.h"
#include "lockfree/die.h"
#include "lockfree/thread.h"
#include "lockfree/waitset.h"
#include "src/gbench/gbench.h"

#define POOL 4096u                      /* waiters per adder, power of two */
#define MAX_ADDERS 4
#define SPREAD 64u                      /* waiters wait for cv + [1, SPREAD] */
#define STALL_NS (2ull * 1000000000ull)
#define MIN_TIME 0.3

/* ---- the two sets behind one interface ---- */

struct bw_ops {
	const char *name;
	void (*init)(void);
	void (*destroy)(void);
	bool (*add)(struct lf_waiter *w);
	size_t (*release)(uint64_t value, void (*cb)(struct lf_waiter *w, void *arg), void *arg);
	uint64_t (*threshold)(void);
	bool (*empty)(void);
};

static struct lf_waitset bw_lf;

static void lf_init(void) { lf_waitset_init(&bw_lf, NULL, NULL, NULL); }
static void lf_destroy(void) { lf_waitset_destroy(&bw_lf); }
static bool lf_add(struct lf_waiter *w) { return lf_waitset_add(&bw_lf, w); }
static size_t lf_release(uint64_t v, void (*cb)(struct lf_waiter *, void *), void *arg)
{
	return lf_waitset_release(&bw_lf, v, cb, arg);
}
static uint64_t lf_threshold(void) { return lf_waitset_threshold(&bw_lf); }
static bool lf_empty(void) { return lf_waitset_empty(&bw_lf); }

/* The obvious alternative: a list sorted by value under a mutex; the
 * threshold is republished under the lock after every change. */
static struct {
	pthread_mutex_t lock;
	struct lf_waiter *head;                 /* under lock, ascending value */
	_Atomic uint64_t threshold LF_ALIGNED;
} bw_mx = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void mx_publish_locked(void)
{
	lf_mutex_assert_held(&bw_mx.lock);
	atomic_store_explicit(&bw_mx.threshold, bw_mx.head ? bw_mx.head->value - 1 : UINT64_MAX,
			      memory_order_seq_cst);
}
/* Under the lock like every other publish: mx_publish_locked asserts it. */
static void mx_init(void)
{
	pthread_mutex_lock(&bw_mx.lock);
	bw_mx.head = NULL;
	mx_publish_locked();
	pthread_mutex_unlock(&bw_mx.lock);
}
static void mx_destroy(void) {}
static bool mx_add(struct lf_waiter *w)
{
	struct lf_waiter **pp;
	bool dropped;

	atomic_store_explicit(&w->state, LF_WAITER_WAITING, memory_order_relaxed);
	pthread_mutex_lock(&bw_mx.lock);
	for (pp = &bw_mx.head; *pp && (*pp)->value <= w->value; pp = &(*pp)->next)
		;
	w->next = *pp;
	*pp = w;
	dropped = bw_mx.head == w;
	if (dropped)
		mx_publish_locked();
	pthread_mutex_unlock(&bw_mx.lock);
	return dropped;
}
static size_t mx_release(uint64_t v, void (*cb)(struct lf_waiter *, void *), void *arg)
{
	struct lf_waiter *done = NULL, **tail = &done, *w, *next;
	size_t n = 0;

	pthread_mutex_lock(&bw_mx.lock);
	while (bw_mx.head && bw_mx.head->value <= v) {
		w = bw_mx.head;
		bw_mx.head = w->next;
		*tail = w;
		tail = &w->next;
	}
	*tail = NULL;
	mx_publish_locked();
	pthread_mutex_unlock(&bw_mx.lock);
	/* The detached prefix is ours: callbacks outside the lock. */
	for (w = done; w; w = next) {
		next = w->next;
		atomic_store_explicit(&w->state, LF_WAITER_RELEASED, memory_order_relaxed);
		cb(w, arg);
		n++;
	}
	return n;
}
static uint64_t mx_threshold(void) { return atomic_load_explicit(&bw_mx.threshold, memory_order_acquire); }
static bool mx_empty(void) { return !bw_mx.head; }

static const struct bw_ops ops_lf = { "lf_waitset", lf_init, lf_destroy, lf_add, lf_release, lf_threshold, lf_empty };
static const struct bw_ops ops_mx = { "mutex_sorted_list", mx_init, mx_destroy, mx_add, mx_release, mx_threshold, mx_empty };

/* ---- per-run state ---- */

/* One pool slot: the waiter and its "free again" flag (set by the release
 * callback, the set's last touch of the node). */
struct bslot {
	struct lf_waiter w;
	_Atomic uint32_t free;
};

static struct {
	const struct bw_ops *ops;
	struct bslot *pool[MAX_ADDERS];
	uint64_t added[MAX_ADDERS];             /* each adder's own */
	uint64_t drops[MAX_ADDERS];
	uint64_t waits[MAX_ADDERS];
	_Atomic uint64_t cv LF_ALIGNED;         /* CurrentValue: the consumer writes */
	_Atomic int stop LF_ALIGNED;            /* teardown -> consumer thread */
	pthread_t consumer;
	uint64_t released LF_ALIGNED;           /* consumer-private */
	lf_counter interrupts;                  /* consumer writes, adder 0 reads at the end */
} bw;

static void released_cb(struct lf_waiter *w, void *arg)
{
	struct bslot *s = w->ctx;
	(void)arg;
	bw.released++;
	/* Release: the adder may reuse the node once it sees this (acquire). */
	atomic_store_explicit(&s->free, 1, memory_order_release);
}

/* After a refused operation: spin, then yield; give up after STALL_NS without progress. */
static const struct bm_backoff_policy backoff_policy = { 128, 256, STALL_NS };

static void bench_setup(const struct bw_ops *ops, int adders)
{
	bw.ops = ops;
	for (int a = 0; a < MAX_ADDERS; a++) {
		bw.pool[a] = NULL;
		bw.added[a] = bw.drops[a] = bw.waits[a] = 0;
		if (a >= adders)
			continue;
		bw.pool[a] = lf_alloc(POOL * sizeof(struct bslot), LF_CACHELINE);
		for (unsigned i = 0; i < POOL; i++) {
			bw.pool[a][i].w.ctx = &bw.pool[a][i];
			atomic_store(&bw.pool[a][i].free, 1);
		}
	}
	atomic_store(&bw.cv, 0);
	bw.released = 0;
	atomic_store(&bw.interrupts, 0);
	ops->init();
}

static void bench_teardown(int adders)
{
	uint64_t added = 0;

	bw.ops->release(UINT64_MAX, released_cb, NULL);
	for (int a = 0; a < adders; a++)
		added += bw.added[a];
	if (added != bw.released || !bw.ops->empty() || bw.ops->threshold() != UINT64_MAX) {
		lf_die("bench_waitset %s: reconcile failed: added %llu != released %llu, "
		       "empty %d, threshold %llu", bw.ops->name, (unsigned long long)added,
		       (unsigned long long)bw.released, bw.ops->empty(),
		       (unsigned long long)bw.ops->threshold());
	}
	bw.ops->destroy();
	for (int a = 0; a < MAX_ADDERS; a++)
		lf_free(bw.pool[a], POOL * sizeof(struct bslot), LF_CACHELINE);
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* ---- one thread: add W, release all ---- */

static void add_release(gb_state *st, const struct bw_ops *ops)
{
	unsigned n = (unsigned)gb_arg(st, 0);
	uint64_t x = 0x9e3779b97f4a7c15ull, cv = 0, drops = 0;

	bench_setup(ops, 1);
	while (gb_keep_running_batch(st, n)) {
		for (unsigned i = 0; i < n; i++) {
			struct bslot *s = &bw.pool[0][i];
			s->w.value = cv + 1 + rnd(&x) % SPREAD;
			drops += ops->add(&s->w);
		}
		cv += SPREAD;
		bw.added[0] += n;
		if (ops->release(cv, released_cb, NULL) != n) {
			gb_skip_with_error(st, "release did not release every waiter");
			break;
		}
	}
	gb_set_items_processed(st, gb_iterations(st));
	gb_counter(st, "threshold_drops_per_add", (double)drops, GB_COUNTER_AVG_ITERATIONS);
	bench_teardown(1);
}

static void waitset_add_release_lf_waitset(gb_state *st) { add_release(st, &ops_lf); }
static void waitset_add_release_mutex_sorted_list(gb_state *st) { add_release(st, &ops_mx); }

#define BENCH_AR_REG(fn)                                                                    \
	GB_BENCHMARK(fn, gb_arg_name(b, "waiters"); gb_arg_add(b, 1); gb_arg_add(b, 16);     \
		     gb_arg_add(b, 128); gb_min_time(b, MIN_TIME))
BENCH_AR_REG(waitset_add_release_lf_waitset)
BENCH_AR_REG(waitset_add_release_mutex_sorted_list)

/* ---- N adders, one interrupt-side thread ---- */

static void adder(gb_state *st, int id)
{
	uint64_t x = 0x2545f4914f6cdd1dull * (uint64_t)(id + 1), waits = 0, i = 0;
	uint64_t depth = (uint64_t)gb_arg(st, 0);       /* power of two, <= POOL */

	while (gb_keep_running(st)) {
		struct bslot *s = &bw.pool[id][i++ & (depth - 1)];
		uint64_t tries = 0, since = 0;
		while (!atomic_load_explicit(&s->free, memory_order_acquire)) {
			if (!bm_backoff(&tries, &since, &backoff_policy)) {
				gb_skip_with_error(st, "adder stalled: its waiters are never released");
				return;
			}
		}
		waits += tries;
		atomic_store_explicit(&s->free, 0, memory_order_relaxed);
		s->w.value = atomic_load_explicit(&bw.cv, memory_order_relaxed) + 1 + rnd(&x) % SPREAD;
		bw.drops[id] += bw.ops->add(&s->w);
		bw.added[id]++;
	}
	bw.waits[id] = waits;
}

/* The CMP + interrupt handler: advance CV (seq_cst RMW: CV before the MV
 * read), compare with the threshold, release on "interrupt", resample CV
 * (the OS rule). */
static void signal_once(void)
{
	uint64_t cv = atomic_fetch_add(&bw.cv, 1) + 1;

	while (cv > bw.ops->threshold()) {
		lf_count(&bw.interrupts, 1);
		bw.ops->release(cv, released_cb, NULL);
		uint64_t c2 = atomic_load(&bw.cv);
		if (c2 == cv)
			break;
		cv = c2;
	}
}

/* Polls like an engine with work: the adders' nodes flow back only through it. */
static void *consumer(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&bw.stop, memory_order_acquire))
		signal_once();
	return NULL;
}

static void adders_run(gb_state *st)
{
	int id = gb_thread_index(st);

	adder(st, id);
	/* Every thread adds: AVG_ITERATIONS divides the sums by all adds. */
	gb_set_items_processed(st, gb_iterations(st));
	gb_counter(st, "threshold_drops_per_add", (double)bw.drops[id], GB_COUNTER_AVG_ITERATIONS);
	gb_counter(st, "pool_waits_per_add", (double)bw.waits[id], GB_COUNTER_AVG_ITERATIONS);
	if (id == 0) {
		/* Counters are summed over threads: these from one thread only.
		 * The consumer still runs: its count is read as of now. */
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		gb_counter(st, "interrupts_per_add", (double)atomic_load(&bw.interrupts),
			   GB_COUNTER_AVG_ITERATIONS);
		gb_counter(st, "threads_over_cpus", gb_thread_count(st) + 1 > cpus, GB_COUNTER_DEFAULT);
	}
}

static void adders_setup(const gb_state *st, const struct bw_ops *ops)
{
	bench_setup(ops, gb_thread_count(st));
	atomic_store(&bw.stop, 0);
	if (pthread_create(&bw.consumer, NULL, consumer, NULL))
		lf_die("bench_waitset: cannot start the consumer thread");
}

static void setup_lf(const gb_state *st) { adders_setup(st, &ops_lf); }
static void setup_mx(const gb_state *st) { adders_setup(st, &ops_mx); }

static void teardown(const gb_state *st)
{
	atomic_store_explicit(&bw.stop, 1, memory_order_release);
	pthread_join(bw.consumer, NULL);
	bench_teardown(gb_thread_count(st));
}

static void waitset_adders_lf_waitset(gb_state *st) { adders_run(st); }
static void waitset_adders_mutex_sorted_list(gb_state *st) { adders_run(st); }

#define BENCH_ADDERS_REG(fn, setup)                                                         \
	GB_BENCHMARK(fn, gb_arg_name(b, "depth"); gb_arg_add(b, 16); gb_arg_add(b, 1024);    \
		     gb_threads(b, 1); gb_threads(b, 2); gb_use_real_time(b);                    \
		     gb_min_time(b, MIN_TIME); gb_setup(b, setup); gb_teardown(b, teardown))
BENCH_ADDERS_REG(waitset_adders_lf_waitset, setup_lf)
BENCH_ADDERS_REG(waitset_adders_mutex_sorted_list, setup_mx)
