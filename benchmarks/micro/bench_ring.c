/* benchmarks/micro/bench_ring.c — the SPSC slot ring beside its obvious
 * alternatives, in the same run: a mutex-protected ring of the same slots, and
 * liburcu's wait-free concurrent queue (cds_wfcq, one node per item).
 *
 * Each benchmark runs two threads: thread 0 produces, thread 1 consumes, each
 * one item per iteration (Google Benchmark gives both threads the same
 * iteration count).  A refused push/pop spins (PAUSE), yields after a while
 * (2 cores, shared) and gives up with an error after BENCH_RING_STALL_NS of no
 * progress.  Slots are 64 bytes (a command packet); every item carries its
 * sequence number and the consumer checks it.  Capacity is the argument; for
 * cds_wfcq (unbounded) the producer stops at `capacity` items in flight, using
 * a consumer-published count it re-reads only when its cached copy says full
 * (the ring's own trick), so all three hold at most the same number of items.
 * cds_wfcq is called as lockfree/mpsc.c calls it: liburcu-common's exported
 * functions (no _LGPL_SOURCE), and the non-blocking dequeue, a WOULDBLOCK
 * (enqueuer between its two steps) counting as "empty, retry" — the blocking
 * dequeue would sleep 10 ms in poll() there.
 *
 * items_per_second counts items moved producer -> consumer.  Self-check at the
 * end of every run (teardown): pushed == popped + left and no sequence error,
 * else the run aborts with the numbers: a benchmark that lost items has no
 * result worth printing.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu/wfcqueue.h>

#include "benchmarks/backoff.h"
#include "lockfree/alloc.h"
#include "lockfree/arch.h"
#include "lockfree/cacheline.h"
#include "lockfree/die.h"
#include "lockfree/ring.h"
#include "lockfree/thread.h"
#include "lockfree/tsan.h"
#include "src/gbench/gbench.h"

#define BENCH_RING_SLOT 64
#define BENCH_RING_STALL_NS (2ull * 1000000000ull)
#define BENCH_RING_MIN_TIME 0.3

struct bench_item {
	uint64_t seq;
	uint64_t payload[BENCH_RING_SLOT / 8 - 1];
};
_Static_assert(sizeof(struct bench_item) == BENCH_RING_SLOT, "one 64-byte slot");

/* One queue behind three operations, so the loops are written once. */
struct bench_queue_ops {
	void (*create)(size_t capacity);
	void (*destroy)(void);
	bool (*push)(const struct bench_item *it);  /* producer thread only */
	bool (*pop)(struct bench_item *out);        /* consumer thread only */
	size_t (*left)(void);                       /* after both threads finished */
};

/* Per-run counts: written by one thread each during the run, read by teardown
 * after Google Benchmark joined the threads. */
static struct {
	uint64_t pushed LF_ALIGNED;
	uint64_t popped LF_ALIGNED;
	uint64_t seq_errors;
	const struct bench_queue_ops *ops;
} bq;

/* ---- lf_ring ---- */

static struct lf_ring *bq_ring;

static void ring_create(size_t cap)
{
	bq_ring = lf_ring_create(sizeof(struct bench_item), cap);
	if (!bq_ring)
		lf_die("bench_ring: lf_ring_create(%zu) failed", cap);
}
static void ring_destroy(void) { lf_ring_destroy(bq_ring); }
static bool ring_push(const struct bench_item *it) { return lf_ring_push_spsc(bq_ring, it); }
static bool ring_pop(struct bench_item *out) { return lf_ring_pop_spsc(bq_ring, out); }
static size_t ring_left(void) { return lf_ring_size(bq_ring); }

static const struct bench_queue_ops ring_ops = {ring_create, ring_destroy, ring_push, ring_pop, ring_left};

/* ---- a ring of the same slots under a pthread mutex ---- */

static struct {
	pthread_mutex_t lock;
	uint64_t head, tail; /* under lock */
	size_t mask;
	struct bench_item *slots;
} bq_mutex = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void mutex_create(size_t cap)
{
	bq_mutex.head = bq_mutex.tail = 0;
	bq_mutex.mask = cap - 1;
	bq_mutex.slots = lf_alloc(cap * sizeof(struct bench_item), LF_CACHELINE);
}
static void mutex_destroy(void)
{
	lf_free(bq_mutex.slots, (bq_mutex.mask + 1) * sizeof(struct bench_item), LF_CACHELINE);
}
static bool mutex_push(const struct bench_item *it)
{
	pthread_mutex_lock(&bq_mutex.lock);
	bool ok = bq_mutex.tail - bq_mutex.head <= bq_mutex.mask;
	if (ok)
		bq_mutex.slots[bq_mutex.tail++ & bq_mutex.mask] = *it;
	pthread_mutex_unlock(&bq_mutex.lock);
	return ok;
}
static bool mutex_pop(struct bench_item *out)
{
	pthread_mutex_lock(&bq_mutex.lock);
	bool ok = bq_mutex.head != bq_mutex.tail;
	if (ok)
		*out = bq_mutex.slots[bq_mutex.head++ & bq_mutex.mask];
	pthread_mutex_unlock(&bq_mutex.lock);
	return ok;
}
static size_t mutex_left(void) { return bq_mutex.tail - bq_mutex.head; }

static const struct bench_queue_ops mutex_ops = {mutex_create, mutex_destroy, mutex_push, mutex_pop, mutex_left};

/* ---- liburcu cds_wfcq: one lf_alloc'd node per item, freed by the consumer ---- */

struct wfcq_item {
	struct cds_wfcq_node node;
	struct bench_item item;
};

static struct {
	struct cds_wfcq_head head LF_ALIGNED;
	struct cds_wfcq_tail tail LF_ALIGNED;
	uint64_t enqueued LF_ALIGNED; /* producer-private */
	uint64_t dequeued_cache;      /* producer's copy of `dequeued` */
	_Atomic uint64_t dequeued LF_ALIGNED; /* consumer: release; producer: acquire (the node was freed) */
	uint64_t capacity;
} bq_wfcq;

static void wfcq_create(size_t cap)
{
	cds_wfcq_init(&bq_wfcq.head, &bq_wfcq.tail);
	bq_wfcq.enqueued = bq_wfcq.dequeued_cache = 0;
	atomic_store(&bq_wfcq.dequeued, 0);
	bq_wfcq.capacity = cap;
}
static bool wfcq_push(const struct bench_item *it)
{
	if (bq_wfcq.enqueued - bq_wfcq.dequeued_cache >= bq_wfcq.capacity) {
		bq_wfcq.dequeued_cache = atomic_load_explicit(&bq_wfcq.dequeued, memory_order_acquire);
		if (bq_wfcq.enqueued - bq_wfcq.dequeued_cache >= bq_wfcq.capacity)
			return false;
	}
	struct wfcq_item *n = lf_alloc(sizeof(*n), LF_CACHELINE);
	cds_wfcq_node_init(&n->node);
	n->item = *it;
	lf_tsan_release(n); /* the item before the link: liburcu's xchg orders it, invisibly to TSan */
	cds_wfcq_enqueue(&bq_wfcq.head, &bq_wfcq.tail, &n->node); /* wait-free */
	bq_wfcq.enqueued++;
	return true;
}
static bool wfcq_pop(struct bench_item *out)
{
	/* One consumer: the "__" dequeue needs no lock. */
	struct cds_wfcq_node *node = __cds_wfcq_dequeue_nonblocking(&bq_wfcq.head, &bq_wfcq.tail);
	if (!node || node == CDS_WFCQ_WOULDBLOCK)
		return false;
	struct wfcq_item *n = caa_container_of(node, struct wfcq_item, node);
	lf_tsan_acquire(n); /* pairs with lf_tsan_release in wfcq_push */
	*out = n->item;
	lf_free(n, sizeof(*n), LF_CACHELINE);
	atomic_store_explicit(&bq_wfcq.dequeued, atomic_load_explicit(&bq_wfcq.dequeued, memory_order_relaxed) + 1,
			      memory_order_release);
	return true;
}
static size_t wfcq_left(void)
{
	size_t n = 0;
	struct cds_wfcq_node *node;
	while ((node = __cds_wfcq_dequeue_blocking(&bq_wfcq.head, &bq_wfcq.tail))) { /* threads joined */
		lf_free(caa_container_of(node, struct wfcq_item, node), sizeof(struct wfcq_item), LF_CACHELINE);
		n++;
	}
	return n;
}
static void wfcq_destroy(void)
{
	cds_wfcq_destroy(&bq_wfcq.head, &bq_wfcq.tail);
}

static const struct bench_queue_ops wfcq_ops = {wfcq_create, wfcq_destroy, wfcq_push, wfcq_pop, wfcq_left};

/* ---- the two-thread loop ---- */

/* After a refused operation: spin, then yield; false after BENCH_RING_STALL_NS without progress. */
static const struct bm_backoff_policy bench_backoff_policy = { 256, 1024, BENCH_RING_STALL_NS };

static void bench_produce(gb_state *st)
{
	struct bench_item it = {0};
	uint64_t refused = 0;
	while (gb_keep_running(st)) {
		it.seq = bq.pushed;
		uint64_t tries = 0, since = 0;
		while (!bq.ops->push(&it)) {
			if (!bm_backoff(&tries, &since, &bench_backoff_policy)) {
				gb_skip_with_error(st, "producer stalled: consumer made no progress");
				return;
			}
		}
		refused += tries;
		bq.pushed++;
	}
	/* AVG_ITERATIONS divides by both threads' iterations (2 per item): x2. */
	gb_counter(st, "full_per_item", 2.0 * (double)refused, GB_COUNTER_AVG_ITERATIONS);
	gb_counter(st, "pushed", (double)bq.pushed, GB_COUNTER_DEFAULT);
}

static void bench_consume(gb_state *st)
{
	struct bench_item it;
	uint64_t refused = 0;
	while (gb_keep_running(st)) {
		uint64_t tries = 0, since = 0;
		while (!bq.ops->pop(&it)) {
			if (!bm_backoff(&tries, &since, &bench_backoff_policy)) {
				gb_skip_with_error(st, "consumer stalled: producer made no progress");
				return;
			}
		}
		refused += tries;
		if (it.seq != bq.popped)
			bq.seq_errors++;
		bq.popped++;
	}
	gb_set_items_processed(st, gb_iterations(st));
	gb_counter(st, "empty_per_item", 2.0 * (double)refused, GB_COUNTER_AVG_ITERATIONS);
	gb_counter(st, "popped", (double)bq.popped, GB_COUNTER_DEFAULT);
}

static void bench_spsc(gb_state *st)
{
	/* Producer and consumer on different CPUs: the cross-core transfer is
	 * what is measured (Google Benchmark runs thread 0 on the main thread,
	 * so the mask is restored afterwards). */
	cpu_set_t saved;
	bool pinned = lf_thread_pin_nth(pthread_self(), gb_thread_index(st), &saved);
	if (gb_thread_index(st) == 0)
		bench_produce(st);
	else
		bench_consume(st);
	if (pinned)
		lf_thread_pin_restore(pthread_self(), &saved);
	gb_counter(st, "pinned_threads", pinned, GB_COUNTER_DEFAULT);
}

static void bench_setup(const gb_state *st, const struct bench_queue_ops *ops)
{
	bq.ops = ops;
	bq.pushed = bq.popped = bq.seq_errors = 0;
	ops->create((size_t)gb_arg(st, 0));
}

static void bench_teardown(const gb_state *st)
{
	size_t left = bq.ops->left();
	if (bq.pushed != bq.popped + left || bq.seq_errors) {
		lf_die("bench_ring: reconcile failed (capacity %lld): pushed %llu != popped %llu + left %zu, "
		       "sequence errors %llu",
		       (long long)gb_arg(st, 0), (unsigned long long)bq.pushed, (unsigned long long)bq.popped, left,
		       (unsigned long long)bq.seq_errors);
	}
	bq.ops->destroy();
}

static void setup_ring(const gb_state *st) { bench_setup(st, &ring_ops); }
static void setup_mutex(const gb_state *st) { bench_setup(st, &mutex_ops); }
static void setup_wfcq(const gb_state *st) { bench_setup(st, &wfcq_ops); }

static void ring_spsc(gb_state *st) { bench_spsc(st); }
static void ring_mutex_queue(gb_state *st) { bench_spsc(st); }
static void ring_urcu_wfcq(gb_state *st) { bench_spsc(st); }

#define BENCH_RING_REG(fn, setup)                                                                   \
	GB_BENCHMARK(fn, gb_arg_name(b, "capacity"); gb_arg_add(b, 64); gb_arg_add(b, 1024);         \
		     gb_threads(b, 2); gb_use_real_time(b); gb_min_time(b, BENCH_RING_MIN_TIME);     \
		     gb_setup(b, setup); gb_teardown(b, bench_teardown))

BENCH_RING_REG(ring_spsc, setup_ring)
BENCH_RING_REG(ring_mutex_queue, setup_mutex)
BENCH_RING_REG(ring_urcu_wfcq, setup_wfcq)
