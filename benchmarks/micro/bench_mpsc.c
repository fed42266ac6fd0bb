/* benchmarks/micro/bench_mpsc.c — the interrupt-record queue (lf_mpsc, over
 * liburcu cds_wfcq) beside a pthread mutex + intrusive list, in the same run.
 *
 *   mpsc_push_pop/<impl>               one thread: push one record, pop it
 *                                      (the uncontended cost of a hand-over)
 *   mpsc_producers/<impl>/threads:N    thread 0 consumes, threads 1..N-1 produce:
 *                                      one record per producer per iteration;
 *                                      the consumer pops N-1 per iteration
 *
 * Records come from a fixed pool per producer (POOL, recycled in order once the
 * consumer has popped them: FIFO per producer), so no allocator is measured.
 * A producer whose pool is full, or a consumer that finds the queue empty,
 * spins (PAUSE), then yields (2 cores), and gives up with an error after
 * STALL_NS without progress.  items_per_second counts records moved.
 * Counters: was_empty_per_item (pushes that returned true: the wake-ups the
 * interrupt thread would take), empty_polls_per_item (consumer found nothing),
 * full_waits_per_item (producer waited for its pool).  Teardown reconciles
 * pushed == popped + left and the per-producer sequence, else aborts.
 * With 3 threads on a 2-CPU machine the threads outnumber the CPUs: the
 * counter threads_over_cpus says so.
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
#include "lockfree/die.h"
#include "lockfree/mpsc.h"
#include "src/gbench/gbench.h"

#define POOL 1024u                      /* records per producer, power of two */
#define MAX_PRODUCERS 4
#define STALL_NS (2ull * 1000000000ull)
#define MIN_TIME 0.3

struct brec {
	struct lf_mpsc_node n;          /* lf_mpsc */
	struct brec *next;              /* mutex list */
	uint32_t producer;
	uint64_t seq;
};

/* ---- the two queues behind one interface ---- */

struct bq_ops {
	const char *name;
	void (*init)(void);
	bool (*push)(struct brec *r);   /* true: was empty */
	struct brec *(*pop)(void);      /* the consumer; NULL when empty */
};

static struct lf_mpsc bq_lf;

static void lf_init(void) { lf_mpsc_init(&bq_lf); }
static bool lf_push(struct brec *r) { return lf_mpsc_push(&bq_lf, &r->n); }
static struct brec *lf_pop(void)
{
	struct lf_mpsc_node *n = lf_mpsc_pop(&bq_lf);
	return n ? caa_container_of(n, struct brec, n) : NULL;
}

static struct {
	pthread_mutex_t lock;
	struct brec *head, *tail;       /* under lock */
} bq_mx = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void mx_init(void) { bq_mx.head = bq_mx.tail = NULL; }
static bool mx_push(struct brec *r)
{
	bool was_empty;
	r->next = NULL;
	pthread_mutex_lock(&bq_mx.lock);
	was_empty = !bq_mx.head;
	if (was_empty)
		bq_mx.head = r;
	else
		bq_mx.tail->next = r;
	bq_mx.tail = r;
	pthread_mutex_unlock(&bq_mx.lock);
	return was_empty;
}
static struct brec *mx_pop(void)
{
	struct brec *r;
	pthread_mutex_lock(&bq_mx.lock);
	r = bq_mx.head;
	if (r) {
		bq_mx.head = r->next;
		if (!bq_mx.head)
			bq_mx.tail = NULL;
	}
	pthread_mutex_unlock(&bq_mx.lock);
	return r;
}

static const struct bq_ops ops_lf = { "lf_mpsc", lf_init, lf_push, lf_pop };
static const struct bq_ops ops_mx = { "mutex_list", mx_init, mx_push, mx_pop };

/* ---- per-run state: each field written by one thread, read by teardown after the join ---- */

struct bprod {
	struct brec *pool;
	uint64_t pushed;                          /* producer-private */
	uint64_t consumed_cache;                  /* producer's copy of consumed */
	_Atomic uint64_t consumed LF_ALIGNED;     /* consumer: release (record free again) */
	char pad[LF_CACHELINE - sizeof(_Atomic uint64_t)];
};

static struct {
	const struct bq_ops *ops;
	struct bprod prod[MAX_PRODUCERS];
	uint64_t popped LF_ALIGNED;               /* consumer-private */
	uint64_t next_seq[MAX_PRODUCERS];         /* consumer-private */
	uint64_t seq_errors;
} bs;

/* After a refused operation: spin, then yield; give up after STALL_NS without progress. */
static const struct bm_backoff_policy backoff_policy = { 128, 256, STALL_NS };

static void bench_setup(const struct bq_ops *ops, int producers)
{
	bs.ops = ops;
	bs.popped = bs.seq_errors = 0;
	for (int p = 0; p < MAX_PRODUCERS; p++) {
		bs.prod[p].pool = p < producers ? lf_alloc(POOL * sizeof(struct brec), LF_CACHELINE) : NULL;
		bs.prod[p].pushed = bs.prod[p].consumed_cache = 0;
		atomic_store(&bs.prod[p].consumed, 0);
		bs.next_seq[p] = 0;
	}
	ops->init();
}

static void bench_teardown(int producers)
{
	uint64_t pushed = 0, left = 0;
	struct brec *r;

	while ((r = bs.ops->pop()))
		left++;
	for (int p = 0; p < producers; p++)
		pushed += bs.prod[p].pushed;
	if (pushed != bs.popped + left || bs.seq_errors) {
		lf_die("bench_mpsc %s: reconcile failed: pushed %llu != popped %llu + left %llu, "
		       "sequence errors %llu", bs.ops->name, (unsigned long long)pushed,
		       (unsigned long long)bs.popped, (unsigned long long)left,
		       (unsigned long long)bs.seq_errors);
	}
	for (int p = 0; p < MAX_PRODUCERS; p++)
		lf_free(bs.prod[p].pool, POOL * sizeof(struct brec), LF_CACHELINE);
}

static void consumed_one(struct brec *r)
{
	struct bprod *p = &bs.prod[r->producer];
	if (r->seq != bs.next_seq[r->producer])
		bs.seq_errors++;
	bs.next_seq[r->producer] = r->seq + 1;
	bs.popped++;
	/* The record's slot may be reused from here (pairs with the producer's acquire). */
	atomic_store_explicit(&p->consumed, r->seq + 1, memory_order_release);
}

/* ---- one thread: push then pop ---- */

static void push_pop(gb_state *st, const struct bq_ops *ops)
{
	uint64_t was_empty = 0;

	bench_setup(ops, 1);
	for (uint64_t i = 0; gb_keep_running(st); i++) {
		struct brec *r = &bs.prod[0].pool[i & (POOL - 1)];
		r->producer = 0;
		r->seq = i;
		was_empty += ops->push(r);
		bs.prod[0].pushed++;
		r = ops->pop();
		gb_do_not_optimize(r);
		consumed_one(r);
	}
	gb_set_items_processed(st, gb_iterations(st));
	gb_counter(st, "was_empty_per_item", (double)was_empty, GB_COUNTER_AVG_ITERATIONS);
	bench_teardown(1);
}

static void mpsc_push_pop_lf_mpsc(gb_state *st) { push_pop(st, &ops_lf); }
static void mpsc_push_pop_mutex_list(gb_state *st) { push_pop(st, &ops_mx); }
GB_BENCHMARK(mpsc_push_pop_lf_mpsc, gb_min_time(b, MIN_TIME))
GB_BENCHMARK(mpsc_push_pop_mutex_list, gb_min_time(b, MIN_TIME))

/* ---- N-1 producers, one consumer ---- */

/* Counter scale: GB_COUNTER_AVG_ITERATIONS divides by the iterations of all
 * N threads, but only N-1 records move per "iteration row". */
static double per_item(const gb_state *st)
{
	return (double)gb_thread_count(st) / (gb_thread_count(st) - 1);
}

static void produce(gb_state *st, int id)
{
	struct bprod *p = &bs.prod[id];
	uint64_t was_empty = 0, full = 0;

	while (gb_keep_running(st)) {
		struct brec *r = &p->pool[p->pushed & (POOL - 1)];
		uint64_t tries = 0, since = 0;
		while (p->pushed - p->consumed_cache >= POOL) {
			p->consumed_cache = atomic_load_explicit(&p->consumed, memory_order_acquire);
			if (p->pushed - p->consumed_cache < POOL)
				break;
			if (!bm_backoff(&tries, &since, &backoff_policy)) {
				gb_skip_with_error(st, "producer stalled: consumer made no progress");
				return;
			}
		}
		full += tries;
		r->producer = (uint32_t)id;
		r->seq = p->pushed;
		was_empty += bs.ops->push(r);
		p->pushed++;
	}
	/* AVG_ITERATIONS divides by every thread's iterations (N per N-1 items). */
	gb_counter(st, "was_empty_per_item", (double)was_empty * per_item(st), GB_COUNTER_AVG_ITERATIONS);
	gb_counter(st, "full_waits_per_item", (double)full * per_item(st), GB_COUNTER_AVG_ITERATIONS);
}

static void consume(gb_state *st, int producers)
{
	uint64_t empty = 0;

	while (gb_keep_running(st)) {
		for (int k = 0; k < producers; k++) {
			struct brec *r;
			uint64_t tries = 0, since = 0;
			while (!(r = bs.ops->pop())) {
				if (!bm_backoff(&tries, &since, &backoff_policy)) {
					gb_skip_with_error(st, "consumer stalled: producers made no progress");
					return;
				}
			}
			empty += tries;
			consumed_one(r);
		}
	}
	gb_set_items_processed(st, gb_iterations(st) * producers);
	gb_counter(st, "empty_polls_per_item", (double)empty * per_item(st), GB_COUNTER_AVG_ITERATIONS);
}

static void producers_run(gb_state *st)
{
	int producers = gb_thread_count(st) - 1;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (gb_thread_index(st) == 0) {
		consume(st, producers);
		/* Set by one thread only: counters are summed over threads. */
		gb_counter(st, "threads_over_cpus", gb_thread_count(st) > cpus, GB_COUNTER_DEFAULT);
	} else {
		produce(st, gb_thread_index(st) - 1);
	}
}

static void setup_lf(const gb_state *st) { bench_setup(&ops_lf, gb_thread_count(st) - 1); }
static void setup_mx(const gb_state *st) { bench_setup(&ops_mx, gb_thread_count(st) - 1); }
static void teardown(const gb_state *st) { bench_teardown(gb_thread_count(st) - 1); }

static void mpsc_producers_lf_mpsc(gb_state *st) { producers_run(st); }
static void mpsc_producers_mutex_list(gb_state *st) { producers_run(st); }

#define BENCH_MPSC_REG(fn, setup)                                                          \
	GB_BENCHMARK(fn, gb_threads(b, 2); gb_threads(b, 3); gb_use_real_time(b);           \
		     gb_min_time(b, MIN_TIME); gb_setup(b, setup); gb_teardown(b, teardown))

BENCH_MPSC_REG(mpsc_producers_lf_mpsc, setup_lf)
BENCH_MPSC_REG(mpsc_producers_mutex_list, setup_mx)
