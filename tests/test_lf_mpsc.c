/* tests/test_lf_mpsc.c — the interrupt-record queue: exactly-once, per-producer
 * FIFO, and the "was empty" wake-up rule under contention.
 *
 * The stress test models the interrupt thread faithfully: the consumer looks
 * at the queue ONLY after a producer whose push returned true has posted a
 * wake token (a semaphore), drains it to NULL, and sleeps again.  A record
 * left in the queue with no token coming is stranded; the test counts them
 * (must be 0), together with lost, duplicated and out-of-order records.
 */
#include "tests/fb_test.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "lockfree/mpsc.h"

struct rec {
	struct lf_mpsc_node n;
	uint32_t producer;
	uint32_t seq;
};

static struct rec *rec_of(struct lf_mpsc_node *n)
{
	return caa_container_of(n, struct rec, n);
}

static void mpsc_single_thread(void **state)
{
	struct lf_mpsc q;
	struct rec r[3] = { { .seq = 0 }, { .seq = 1 }, { .seq = 2 } };

	lf_mpsc_init(&q);
	assert_true(lf_mpsc_empty(&q));
	assert_null(lf_mpsc_pop(&q));
	assert_true(lf_mpsc_push(&q, &r[0].n));          /* was empty */
	assert_false(lf_mpsc_push(&q, &r[1].n));
	assert_false(lf_mpsc_empty(&q));
	assert_ptr_equal(lf_mpsc_pop(&q), &r[0].n);
	assert_false(lf_mpsc_push(&q, &r[2].n));         /* r[1] still queued */
	assert_ptr_equal(lf_mpsc_pop(&q), &r[1].n);
	assert_ptr_equal(lf_mpsc_pop(&q), &r[2].n);
	assert_null(lf_mpsc_pop(&q));
	assert_true(lf_mpsc_empty(&q));
	assert_true(lf_mpsc_push(&q, &r[0].n));          /* empty again: true again */
	assert_int_equal(rec_of(lf_mpsc_pop(&q))->seq, 0);
	lf_mpsc_destroy(&q);
}

#ifdef FB_TSAN
#define STRESS_RECORDS 30000u    /* per producer: TSan is ~10x slower */
#else
#define STRESS_RECORDS 300000u
#endif
#define STRESS_PRODUCERS 3u

struct stress {
	struct lf_mpsc q;
	sem_t wake;                      /* one token per push that returned true */
	struct rec *recs[STRESS_PRODUCERS];
	_Atomic unsigned producers_done;
	_Atomic uint64_t was_empty;      /* pushes that returned true */
	/* consumer's results */
	uint64_t received, duplicates, out_of_order, stranded, wakeups, empty_wakeups;
};

struct producer_arg {
	struct stress *s;
	uint32_t id;
};

static void *producer(void *p)
{
	struct producer_arg *a = p;
	struct stress *s = a->s;

	for (uint32_t i = 0; i < STRESS_RECORDS; i++) {
		struct rec *r = &s->recs[a->id][i];
		r->producer = a->id;
		r->seq = i;
		if (lf_mpsc_push(&s->q, &r->n)) {
			atomic_fetch_add_explicit(&s->was_empty, 1, memory_order_relaxed);
			sem_post(&s->wake);
		}
	}
	atomic_fetch_add_explicit(&s->producers_done, 1, memory_order_release);
	return NULL;
}

/* Wait for a wake token.  false: none will come any more (producers done). */
static bool consumer_sleep(struct stress *s)
{
	for (;;) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (sem_timedwait(&s->wake, &ts) == 0)
			return true;
		if (errno != ETIMEDOUT && errno != EINTR)
			return false;
		if (atomic_load_explicit(&s->producers_done, memory_order_acquire) < STRESS_PRODUCERS)
			continue;
		/* Every post happened before the last producer's done increment. */
		return sem_trywait(&s->wake) == 0;
	}
}

static void *consumer(void *p)
{
	struct stress *s = p;
	uint32_t next[STRESS_PRODUCERS] = { 0 };
	uint64_t total = (uint64_t)STRESS_PRODUCERS * STRESS_RECORDS;
	bool *seen = calloc(total, sizeof *seen);
	struct lf_mpsc_node *n;

	if (!seen)
		abort();
	while (s->received < total && consumer_sleep(s)) {
		bool any = false;
		s->wakeups++;
		while ((n = lf_mpsc_pop(&s->q))) {
			struct rec *r = rec_of(n);
			uint64_t idx = (uint64_t)r->producer * STRESS_RECORDS + r->seq;
			any = true;
			if (seen[idx]) {
				s->duplicates++;
				continue;
			}
			seen[idx] = true;
			s->received++;
			if (r->seq != next[r->producer])
				s->out_of_order++;
			next[r->producer] = r->seq + 1;
		}
		if (!any)
			s->empty_wakeups++;
	}
	/* No token will come: whatever is still queued was stranded. */
	while ((n = lf_mpsc_pop(&s->q)))
		s->stranded++;
	free(seen);
	return NULL;
}

static void mpsc_stress_wakeups(void **state)
{
	struct stress *s = calloc(1, sizeof *s);
	struct producer_arg args[STRESS_PRODUCERS];
	pthread_t prod[STRESS_PRODUCERS], cons;
	uint64_t total = (uint64_t)STRESS_PRODUCERS * STRESS_RECORDS;

	assert_non_null(s);
	lf_mpsc_init(&s->q);
	assert_int_equal(sem_init(&s->wake, 0, 0), 0);
	for (uint32_t i = 0; i < STRESS_PRODUCERS; i++) {
		s->recs[i] = calloc(STRESS_RECORDS, sizeof(struct rec));
		assert_non_null(s->recs[i]);
	}
	assert_int_equal(pthread_create(&cons, NULL, consumer, s), 0);
	for (uint32_t i = 0; i < STRESS_PRODUCERS; i++) {
		args[i] = (struct producer_arg){ s, i };
		assert_int_equal(pthread_create(&prod[i], NULL, producer, &args[i]), 0);
	}
	for (uint32_t i = 0; i < STRESS_PRODUCERS; i++)
		pthread_join(prod[i], NULL);
	pthread_join(cons, NULL);

	printf("mpsc: %u producers x %u records: received %llu, was-empty pushes %llu, "
	       "consumer wake-ups %llu (%llu found nothing), pop stalls %llu, "
	       "stranded %llu, duplicates %llu, out of order %llu\n",
	       STRESS_PRODUCERS, STRESS_RECORDS, (unsigned long long)s->received,
	       (unsigned long long)s->was_empty, (unsigned long long)s->wakeups,
	       (unsigned long long)s->empty_wakeups, (unsigned long long)s->q.stalls,
	       (unsigned long long)s->stranded, (unsigned long long)s->duplicates,
	       (unsigned long long)s->out_of_order);
	assert_int_equal(s->stranded, 0);
	assert_int_equal(s->duplicates, 0);
	assert_int_equal(s->out_of_order, 0);
	assert_int_equal(s->received, total);
	assert_true(s->was_empty >= 1);
	assert_true(lf_mpsc_empty(&s->q));

	lf_mpsc_destroy(&s->q);
	sem_destroy(&s->wake);
	for (uint32_t i = 0; i < STRESS_PRODUCERS; i++)
		free(s->recs[i]);
	free(s);
}

FB_TEST_MAIN(cmocka_unit_test(mpsc_single_thread),
	     cmocka_unit_test(mpsc_stress_wakeups))
