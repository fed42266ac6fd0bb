/* tests/test_lf_ring.c — SPSC ring: argument checks, single-thread semantics,
 * a two-thread FIFO validation that counts, and the broken variant caught.
 *
 * The validation streams ~10^6 numbered 64-byte slots from a producer thread
 * to a consumer thread through a small ring (many laps, many full/empty
 * transitions).  Every slot carries its sequence number in every word, so the
 * consumer detects loss, duplication, reordering, stale slots (a previous
 * lap's bytes) and torn slots, and counts them.  The same run against the
 * broken ring (index published before the slot is written, linked in from
 * $(BUILD)/lockfree-broken/ring.o by mk/lockfree-broken.mk) must count bad slots.
 */
#include "tests/fb_test.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "benchmarks/backoff.h"
#include "lockfree/alloc.h"
#include "lockfree/arch.h"
#include "lockfree/cacheline.h"
#include "lockfree/ring.h"

/* The broken variant: lockfree/ring.c built with -DLF_RING_BROKEN and renamed. */
struct lf_ring *lf_ring_broken_create(size_t slot_size, size_t capacity);
void lf_ring_broken_destroy(struct lf_ring *r);
bool lf_ring_broken_push_spsc(struct lf_ring *r, const void *slot);
bool lf_ring_broken_push_n_spsc(struct lf_ring *r, const void *slots, size_t n);
bool lf_ring_broken_pop_spsc(struct lf_ring *r, void *slot_out);
size_t lf_ring_broken_size(const struct lf_ring *r);

#ifdef FB_TSAN
/* The broken ring races on slot bytes by design; its reports would fail the
 * binary.  Only frames of the broken object are suppressed: races in the real
 * ring are still reported. */
const char *__tsan_default_suppressions(void);
const char *__tsan_default_suppressions(void)
{
	return "race:lf_ring_broken_\n";
}
#endif

struct ring_ops {
	const char *name;
	struct lf_ring *(*create)(size_t, size_t);
	void (*destroy)(struct lf_ring *);
	bool (*push)(struct lf_ring *, const void *);
	bool (*push_n)(struct lf_ring *, const void *, size_t);
	bool (*pop)(struct lf_ring *, void *);
	size_t (*size)(const struct lf_ring *);
};

static const struct ring_ops good_ring = {"lf_ring", lf_ring_create, lf_ring_destroy, lf_ring_push_spsc,
					  lf_ring_push_n_spsc, lf_ring_pop_spsc, lf_ring_size};
/* A split ring (lf_ring_create_split): control block and slots allocated apart. */
static struct lf_ring *split_create(size_t slot_size, size_t capacity)
{
	void *control = lf_alloc(lf_ring_control_bytes(), LF_DESTRUCTIVE);
	void *slots = lf_alloc(slot_size * capacity, LF_DESTRUCTIVE);
	return lf_ring_create_split(control, slots, slot_size, capacity);
}
static const struct ring_ops split_ring = {"lf_ring(split)", split_create, lf_ring_destroy, lf_ring_push_spsc,
					   lf_ring_push_n_spsc, lf_ring_pop_spsc, lf_ring_size};
static const struct ring_ops broken_ring = {"lf_ring_broken", lf_ring_broken_create, lf_ring_broken_destroy,
					    lf_ring_broken_push_spsc, lf_ring_broken_push_n_spsc,
					    lf_ring_broken_pop_spsc, lf_ring_broken_size};

/* A 64-byte slot whose every word is derived from its sequence number. */
#define ITEM_WORDS 8
struct item {
	uint64_t w[ITEM_WORDS];
};

static void item_make(struct item *it, uint64_t seq)
{
	for (int i = 0; i < ITEM_WORDS; i++)
		it->w[i] = seq * 0x9e3779b97f4a7c15ull + (uint64_t)i + 1; /* never all-zero: seq 0 differs from a fresh slot */
}

static bool item_is(const struct item *it, uint64_t seq)
{
	struct item want;
	item_make(&want, seq);
	return memcmp(it, &want, sizeof(want)) == 0;
}

/* ---- the two-thread run ---- */

#define STALL_LIMIT_NS (20ull * 1000000000ull) /* no progress for this long: give up, count it */

struct ring_run {
	const struct ring_ops *ops;
	struct lf_ring *r;
	uint64_t n;            /* items to stream */
	unsigned batch;        /* >0: push batches of 1..batch items with push_n */
	uint64_t pushed;       /* producer's count */
	uint64_t popped;       /* consumer's count */
	uint64_t in_order;     /* slots that held exactly the expected item */
	uint64_t bad;          /* lost, duplicated, reordered, stale or torn slots */
	uint64_t full_retries; /* pushes refused (ring full) */
	uint64_t empty_retries;/* pops refused (ring empty) */
	bool producer_stalled, consumer_stalled;
};

/* Back off after a refused push/pop: spin a little, then yield (2 cores, shared);
 * give up when the other side made no progress for STALL_LIMIT_NS. */
static const struct bm_backoff_policy ring_backoff = { 64, 256, STALL_LIMIT_NS };

static void *ring_producer(void *arg)
{
	struct ring_run *run = arg;
	struct item it[8];
	for (uint64_t seq = 0; seq < run->n;) {
		/* a batch of k items, k cycling through 1..batch, published at once */
		uint64_t k = run->batch ? 1 + seq % run->batch : 1;
		if (k > run->n - seq)
			k = run->n - seq;
		for (uint64_t i = 0; i < k; i++)
			item_make(&it[i], seq + i);
		uint64_t tries = 0, since = 0;
		while (!(run->batch ? run->ops->push_n(run->r, it, k) : run->ops->push(run->r, it))) {
			run->full_retries++;
			if (!bm_backoff(&tries, &since, &ring_backoff)) {
				run->producer_stalled = true;
				return NULL;
			}
		}
		run->pushed += k;
		seq += k;
	}
	return NULL;
}

static void *ring_consumer(void *arg)
{
	struct ring_run *run = arg;
	struct item it;
	for (uint64_t seq = 0; seq < run->n; seq++) {
		uint64_t tries = 0, since = 0;
		while (!run->ops->pop(run->r, &it)) {
			run->empty_retries++;
			if (!bm_backoff(&tries, &since, &ring_backoff)) {
				run->consumer_stalled = true;
				return NULL;
			}
		}
		run->popped++;
		if (item_is(&it, seq))
			run->in_order++;
		else
			run->bad++;
	}
	return NULL;
}

static void ring_run_two_threads(struct ring_run *run, size_t capacity)
{
	run->r = run->ops->create(sizeof(struct item), capacity);
	assert_non_null(run->r);
	pthread_t p, c;
	assert_int_equal(pthread_create(&c, NULL, ring_consumer, run), 0);
	assert_int_equal(pthread_create(&p, NULL, ring_producer, run), 0);
	assert_int_equal(pthread_join(p, NULL), 0);
	assert_int_equal(pthread_join(c, NULL), 0);
	uint64_t left = run->ops->size(run->r);
	printf("[ INFO     ] %s: n=%llu cap=%zu pushed=%llu popped=%llu left=%llu in_order=%llu bad=%llu "
	       "full_retries=%llu empty_retries=%llu\n",
	       run->ops->name, (unsigned long long)run->n, capacity, (unsigned long long)run->pushed,
	       (unsigned long long)run->popped, (unsigned long long)left, (unsigned long long)run->in_order,
	       (unsigned long long)run->bad, (unsigned long long)run->full_retries,
	       (unsigned long long)run->empty_retries);
	/* Reconcile: everything pushed was popped or is still in the ring. */
	assert_int_equal(run->pushed, run->popped + left);
	run->ops->destroy(run->r);
}

/* ---- tests ---- */

static void ring_create_rejects_bad_arguments(void **state)
{
	(void)state;
	const size_t bad_caps[] = {0, 3, 6, 1000, ((size_t)1 << 31) + 1, (size_t)1 << 32};
	for (size_t i = 0; i < sizeof(bad_caps) / sizeof(bad_caps[0]); i++) {
		errno = 0;
		assert_null(lf_ring_create(8, bad_caps[i]));
		assert_int_equal(errno, EINVAL);
	}
	errno = 0;
	assert_null(lf_ring_create(0, 8));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(lf_ring_create(SIZE_MAX / 2, 4)); /* slot_size * capacity overflows */
	assert_int_equal(errno, EINVAL);

	struct lf_ring *r = lf_ring_create(3, 1); /* capacity 1 is a power of two; odd slot sizes are fine */
	assert_non_null(r);
	assert_int_equal(lf_ring_capacity(r), 1);
	assert_int_equal(lf_ring_slot_size(r), 3);
	lf_ring_destroy(r);
	lf_ring_destroy(NULL);
}

static void ring_single_thread_semantics(void **state)
{
	(void)state;
	enum { CAP = 8, LAPS = 5 };
	struct lf_ring *r = lf_ring_create(sizeof(struct item), CAP);
	assert_non_null(r);
	struct item it, out;
	uint64_t next_push = 0, next_pop = 0;

	assert_false(lf_ring_pop_spsc(r, &out));
	assert_false(lf_ring_peek_spsc(r, &out));
	for (int lap = 0; lap < LAPS; lap++) {
		/* Fill exactly to capacity; one more is refused and copies nothing. */
		for (int i = 0; i < CAP; i++) {
			item_make(&it, next_push++);
			assert_true(lf_ring_push_spsc(r, &it));
			assert_int_equal(lf_ring_size(r), (size_t)i + 1);
		}
		item_make(&it, 999999);
		assert_false(lf_ring_push_spsc(r, &it));
		assert_int_equal(lf_ring_write_index(r), next_push);
		/* Peek shows the head without consuming it. */
		assert_true(lf_ring_peek_spsc(r, &out));
		assert_true(item_is(&out, next_pop));
		assert_int_equal(lf_ring_size(r), CAP);
		/* Drain half, refill half (wrap inside a lap), then drain all, in order. */
		for (int i = 0; i < CAP / 2; i++) {
			assert_true(lf_ring_pop_spsc(r, &out));
			assert_true(item_is(&out, next_pop++));
		}
		for (int i = 0; i < CAP / 2; i++) {
			item_make(&it, next_push++);
			assert_true(lf_ring_push_spsc(r, &it));
		}
		assert_false(lf_ring_push_spsc(r, &it));
		for (int i = 0; i < CAP; i++) {
			assert_true(lf_ring_peek_spsc(r, &out));
			assert_true(item_is(&out, next_pop));
			assert_true(lf_ring_pop_spsc(r, &out));
			assert_true(item_is(&out, next_pop++));
		}
		assert_false(lf_ring_pop_spsc(r, &out));
		assert_int_equal(lf_ring_size(r), 0);
		assert_int_equal(lf_ring_read_index(r), next_pop);
	}
	assert_int_equal(next_push, next_pop);
	lf_ring_destroy(r);
}

static void ring_push_n_all_or_nothing(void **state)
{
	(void)state;
	enum { CAP = 8 };
	struct lf_ring *r = lf_ring_create(sizeof(struct item), CAP);
	assert_non_null(r);
	struct item it[CAP + 1], out;
	for (int i = 0; i <= CAP; i++)
		item_make(&it[i], (uint64_t)i);
	assert_false(lf_ring_push_n_spsc(r, it, CAP + 1));   /* more than the capacity: never */
	assert_int_equal(lf_ring_write_index(r), 0);
	assert_true(lf_ring_push_n_spsc(r, it, 5));
	assert_int_equal(lf_ring_write_index(r), 5);
	assert_false(lf_ring_push_n_spsc(r, it + 5, 4));     /* 3 free: refused, nothing copied */
	assert_int_equal(lf_ring_write_index(r), 5);
	assert_true(lf_ring_push_n_spsc(r, it + 5, 3));      /* exactly full */
	assert_false(lf_ring_push_spsc(r, &it[0]));
	for (int i = 0; i < 3; i++) {                        /* free 3 at the start: the batch wraps */
		assert_true(lf_ring_pop_spsc(r, &out));
		assert_true(item_is(&out, (uint64_t)i));
	}
	assert_true(lf_ring_push_n_spsc(r, it, 3));
	for (int i = 3; i < CAP; i++) {
		assert_true(lf_ring_pop_spsc(r, &out));
		assert_true(item_is(&out, (uint64_t)i));
	}
	for (int i = 0; i < 3; i++) {
		assert_true(lf_ring_pop_spsc(r, &out));
		assert_true(item_is(&out, (uint64_t)i));
	}
	assert_false(lf_ring_pop_spsc(r, &out));
	assert_true(lf_ring_push_n_spsc(r, it, 0));          /* an empty batch publishes nothing */
	assert_int_equal(lf_ring_size(r), 0);
	lf_ring_destroy(r);
}

static uint64_t ring_items(void)
{
	return fb_soak() ? 20000000 : 1000000; /* 1e6: ~0.3 s plain, ~5 s under TSan */
}

static void ring_spsc_fifo_no_loss(void **state)
{
	(void)state;
	const size_t caps[] = {64, 2}; /* many laps; capacity 2 makes every push/pop contend */
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		struct ring_run run = {.ops = &good_ring, .n = ring_items() / (i ? 4 : 1)};
		ring_run_two_threads(&run, caps[i]);
		assert_false(run.producer_stalled);
		assert_false(run.consumer_stalled);
		assert_int_equal(run.pushed, run.n);
		assert_int_equal(run.popped, run.n);
		assert_int_equal(run.in_order, run.n);
		assert_int_equal(run.bad, 0);
	}
}

/* The split ring behaves as the one-block ring (the same two-thread run,
 * batches too), keeps its write index at offset 0 of the control block,
 * refuses what lf_ring_create refuses, and frees both blocks (the
 * sanitizer builds' leak check). */
static void ring_split_blocks_fifo_no_loss(void **state)
{
	(void)state;
	void *control = lf_alloc(lf_ring_control_bytes(), LF_DESTRUCTIVE);
	void *slots = lf_alloc(3 * sizeof(struct item), LF_DESTRUCTIVE);
	errno = 0;
	assert_null(lf_ring_create_split(control, slots, sizeof(struct item), 3));
	assert_int_equal(errno, EINVAL);
	assert_null(lf_ring_create_split(NULL, slots, sizeof(struct item), 2));
	lf_free(slots, 3 * sizeof(struct item), LF_DESTRUCTIVE);
	slots = lf_alloc(4 * sizeof(struct item), LF_DESTRUCTIVE);
	struct lf_ring *r = lf_ring_create_split(control, slots, sizeof(struct item), 4);
	assert_ptr_equal(r, control);
	struct item it, out;
	for (uint64_t i = 0; i < 3; i++) {
		item_make(&it, i);
		assert_true(lf_ring_push_spsc(r, &it));
	}
	assert_int_equal(atomic_load((const _Atomic uint64_t *)control), 3);   /* the write pointer at offset 0 */
	assert_int_equal(lf_ring_capacity(r), 4);
	for (uint64_t i = 0; i < 3; i++) {
		assert_true(lf_ring_pop_spsc(r, &out));
		assert_true(item_is(&out, i));
	}
	lf_ring_destroy(r);
	for (unsigned batch = 0; batch <= 5; batch += 5) {
		struct ring_run run = {.ops = &split_ring, .n = ring_items() / 4, .batch = batch};
		ring_run_two_threads(&run, 8);
		assert_false(run.producer_stalled);
		assert_false(run.consumer_stalled);
		assert_int_equal(run.popped, run.n);
		assert_int_equal(run.in_order, run.n);
		assert_int_equal(run.bad, 0);
	}
}

static void ring_spsc_batches_fifo_no_loss(void **state)
{
	(void)state;
	/* batches of 1..5 through capacities 64 and 8: a batch is seen whole or
	 * not at all, so every popped slot holds its item */
	const size_t caps[] = {64, 8};
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		struct ring_run run = {.ops = &good_ring, .n = ring_items() / 2, .batch = 5};
		ring_run_two_threads(&run, caps[i]);
		assert_false(run.producer_stalled);
		assert_false(run.consumer_stalled);
		assert_int_equal(run.popped, run.n);
		assert_int_equal(run.in_order, run.n);
		assert_int_equal(run.bad, 0);
	}
}

static void ring_broken_batches_are_caught(void **state)
{
	(void)state;
	/* the broken batch push publishes all k indices, then writes the slots */
	struct ring_run run = {.ops = &broken_ring, .n = 5000, .batch = 5};
	ring_run_two_threads(&run, 64);
	assert_false(run.producer_stalled);
	assert_false(run.consumer_stalled);
	assert_int_equal(run.popped, run.n);
	assert_true(run.bad > 0);
}

static void ring_broken_variant_is_caught(void **state)
{
	(void)state;
	/* The broken push publishes the index, then yields and spins 20 us before
	 * writing the slot: a consumer that keeps up copies the previous lap's
	 * bytes.  5000 items cost some 100 ms of windows. */
	struct ring_run run = {.ops = &broken_ring, .n = 5000};
	ring_run_two_threads(&run, 64);
	assert_false(run.producer_stalled);
	assert_false(run.consumer_stalled);
	assert_int_equal(run.popped, run.n);
	assert_true(run.bad > 0); /* the test catches the broken ring */
}

FB_TEST_MAIN(cmocka_unit_test(ring_create_rejects_bad_arguments), cmocka_unit_test(ring_single_thread_semantics),
	     cmocka_unit_test(ring_push_n_all_or_nothing), cmocka_unit_test(ring_spsc_fifo_no_loss),
	     cmocka_unit_test(ring_spsc_batches_fifo_no_loss), cmocka_unit_test(ring_split_blocks_fifo_no_loss),
	     cmocka_unit_test(ring_broken_variant_is_caught),
	     cmocka_unit_test(ring_broken_batches_are_caught))
