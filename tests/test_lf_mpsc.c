/* tests/test_lf_mpsc.c — the interrupt-record queue: exactly-once, per-producer
 * FIFO, and the "was empty" wake-up rule under contention; then the broken
 * variant caught.
 *
 * The stress test models the interrupt thread faithfully: the consumer looks
 * at the queue ONLY after a producer whose push returned true has posted a
 * wake token (a semaphore), drains it to NULL, and sleeps again.  A record
 * left in the queue with no token coming is stranded.
 *
 * Stranded records are caught while the run goes on, not only at its end:
 *   - producers push in bursts on a shared clock (STRESS_PERIOD_NS): all of
 *     them go quiet for the last STRESS_QUIET_NS of every period, so the
 *     queue drains, every period starts with producers racing to push into
 *     an empty queue (the window of the wake-up rule), and a stranded record
 *     stays stranded through the quiet part;
 *   - each producer raises its busy flag around push + sem_post;
 *   - the consumer, whenever its sleep times out (STRESS_POLL_NS), looks: the
 *     queue is not empty, no producer is busy, and no token is pending.  That
 *     is exact, not a timing bound: its last pop returned NULL, so the first
 *     record pushed since saw an empty queue, its push returned true and,
 *     its producer being no longer busy, its token was posted; the consumer
 *     has not taken it since it went to sleep, so it is still there.  No
 *     token means the record was never announced: a stranding.  The consumer
 *     then drains and counts those records as stranded.
 * Counted: strandings and stranded records, plus lost, duplicated and
 * out-of-order records.  The correct queue must give 0 of each; the broken
 * variant (lockfree/mpsc.h) must give strandings > 0 within its time budget.
 */
#include "tests/fb_test.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <urcu/arch.h>

#include "lockfree/arch.h"
#include "lockfree/die.h"
#include "lockfree/cacheline.h"
#include "lockfree/mpsc.h"

/* The deliberately broken variant (see mpsc.h): lockfree/mpsc.c built with
 * -DLF_MPSC_BROKEN, its functions renamed lf_mpsc_broken_* (mk/lockfree-broken.mk). */
void lf_mpsc_broken_init(struct lf_mpsc *q);
void lf_mpsc_broken_destroy(struct lf_mpsc *q);
bool lf_mpsc_broken_push(struct lf_mpsc *q, struct lf_mpsc_node *n);
struct lf_mpsc_node *lf_mpsc_broken_pop(struct lf_mpsc *q);
bool lf_mpsc_broken_empty(struct lf_mpsc *q);

struct mpsc_ops {
	const char *name;
	void (*init)(struct lf_mpsc *);
	void (*destroy)(struct lf_mpsc *);
	bool (*push)(struct lf_mpsc *, struct lf_mpsc_node *);
	struct lf_mpsc_node *(*pop)(struct lf_mpsc *);
	bool (*empty)(struct lf_mpsc *);
};

static const struct mpsc_ops mpsc_real = {
	"lf_mpsc", lf_mpsc_init, lf_mpsc_destroy, lf_mpsc_push, lf_mpsc_pop, lf_mpsc_empty,
};
static const struct mpsc_ops mpsc_broken = {
	"lf_mpsc_broken", lf_mpsc_broken_init, lf_mpsc_broken_destroy, lf_mpsc_broken_push,
	lf_mpsc_broken_pop, lf_mpsc_broken_empty,
};

struct rec {
	struct lf_mpsc_node n;
	uint32_t producer;
	uint32_t seq;
};

static struct rec *rec_of(struct lf_mpsc_node *n)
{
	return caa_container_of(n, struct rec, n);
}

static void mpsc_single_thread_ops(const struct mpsc_ops *ops)
{
	struct lf_mpsc q;
	struct rec r[3] = { { .seq = 0 }, { .seq = 1 }, { .seq = 2 } };

	ops->init(&q);
	assert_true(ops->empty(&q));
	assert_null(ops->pop(&q));
	assert_true(ops->push(&q, &r[0].n));          /* was empty */
	assert_false(ops->push(&q, &r[1].n));
	assert_false(ops->empty(&q));
	assert_ptr_equal(ops->pop(&q), &r[0].n);
	assert_false(ops->push(&q, &r[2].n));         /* r[1] still queued */
	assert_ptr_equal(ops->pop(&q), &r[1].n);
	assert_ptr_equal(ops->pop(&q), &r[2].n);
	assert_null(ops->pop(&q));
	assert_true(ops->empty(&q));
	assert_true(ops->push(&q, &r[0].n));          /* empty again: true again */
	assert_int_equal(rec_of(ops->pop(&q))->seq, 0);
	ops->destroy(&q);
}

/* The broken variant differs only under concurrency: alone it passes too. */
static void mpsc_single_thread(void **state)
{
	mpsc_single_thread_ops(&mpsc_real);
	mpsc_single_thread_ops(&mpsc_broken);
}

#ifdef FB_TSAN
#define STRESS_RECORDS 30000u    /* per producer: TSan is ~10x slower */
#define BROKEN_RUN_NS  (10000ull * 1000 * 1000)
#else
#define STRESS_RECORDS 300000u
#define BROKEN_RUN_NS  (2000ull * 1000 * 1000)
#endif
#define BROKEN_RECORDS   STRESS_RECORDS  /* cap; the broken run stops when caught */
#define STRESS_PRODUCERS 3u
#define STRESS_PERIOD_NS (2000u * 1000)  /* producers' shared burst clock */
#define STRESS_QUIET_NS  (500u * 1000)   /* last part of each period: nobody pushes */
#define STRESS_POLL_NS   (1000u * 1000)  /* consumer's sleep before it looks anyway */

struct busy_flag {
	_Atomic unsigned v;      /* 1 from before push until after its sem_post */
} __attribute__((aligned(LF_DESTRUCTIVE)));

struct stress {
	struct lf_mpsc q;
	const struct mpsc_ops *ops;
	uint32_t records;                /* per producer, at most */
	uint64_t deadline_ns;            /* producers stop pushing then */
	bool stop_at_first;              /* broken run: stop once caught */
	sem_t wake;                      /* one token per push that returned true */
	struct rec *recs[STRESS_PRODUCERS];
	struct busy_flag busy[STRESS_PRODUCERS];
	_Atomic bool stop;
	_Atomic unsigned producers_done;
	_Atomic uint64_t was_empty;      /* pushes that returned true */
	_Atomic uint64_t pushed;
	/* consumer's results */
	uint64_t received, duplicates, out_of_order, wakeups, empty_wakeups;
	uint64_t strandings;             /* idle looks that found records with no token */
	uint64_t stranded;               /* records found that way (or left at the end) */
	uint64_t first_caught_ns;        /* broken run: from start to the first stranding */
	uint64_t start_ns;
};

struct producer_arg {
	struct stress *s;
	uint32_t id;
};

/* In the quiet part of the shared period: sleep to the next period's start. */
static void producer_quiet(uint64_t now)
{
	lf_sleep_until(now - now % STRESS_PERIOD_NS + STRESS_PERIOD_NS);
}

static void *producer(void *p)
{
	struct producer_arg *a = p;
	struct stress *s = a->s;
	_Atomic unsigned *busy = &s->busy[a->id].v;
	uint32_t i;

	for (i = 0; i < s->records; i++) {
		uint64_t now = lf_now_ns();
		struct rec *r = &s->recs[a->id][i];

		if (now % STRESS_PERIOD_NS >= STRESS_PERIOD_NS - STRESS_QUIET_NS) {
			producer_quiet(now);
			now = lf_now_ns();
		}
		if (atomic_load_explicit(&s->stop, memory_order_relaxed) || now >= s->deadline_ns)
			break;
		r->producer = a->id;
		r->seq = i;
		/* Raised before push's tail exchange (a full barrier): a consumer
		 * that sees our node then reads 1 here, or the 0 stored after
		 * our sem_post (release: our post happens-before its trywait). */
		atomic_store_explicit(busy, 1, memory_order_relaxed);
		if (s->ops->push(&s->q, &r->n)) {
			atomic_fetch_add_explicit(&s->was_empty, 1, memory_order_relaxed);
			sem_post(&s->wake);
		}
		atomic_store_explicit(busy, 0, memory_order_release);
	}
	atomic_fetch_add_explicit(&s->pushed, i, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->producers_done, 1, memory_order_release);
	return NULL;
}

static bool producers_idle(struct stress *s)
{
	/* Order the caller's emptiness look (liburcu's own loads) before the
	 * flag loads, with liburcu's read barrier: a producer whose node was
	 * seen raised its flag before its tail exchange, so we read that 1 or
	 * the 0 after its post (TSan does not model fences; nothing is handed
	 * over here that it would need to see). */
	cmm_smp_rmb();
	for (uint32_t i = 0; i < STRESS_PRODUCERS; i++)
		if (atomic_load_explicit(&s->busy[i].v, memory_order_acquire))
			return false;
	return true;
}

enum wake { WAKE_TOKEN, WAKE_STRANDED, WAKE_DONE };

static void deadline_in(struct timespec *ts, long ns)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_nsec += ns;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

/* Wait for a wake token; on each timeout, look for a stranding (see the top
 * of the file).  WAKE_DONE: producers done, queue empty, no token left. */
static enum wake consumer_sleep(struct stress *s)
{
	for (;;) {
		struct timespec ts;
		bool done;

		deadline_in(&ts, STRESS_POLL_NS);
		if (sem_timedwait(&s->wake, &ts) == 0)
			return WAKE_TOKEN;
		if (errno == EINTR)
			continue;
		if (errno != ETIMEDOUT)
			return WAKE_DONE;
		/* Every post happened before the last producer's done increment. */
		done = atomic_load_explicit(&s->producers_done, memory_order_acquire) == STRESS_PRODUCERS;
		if (!s->ops->empty(&s->q) && producers_idle(s))
			return sem_trywait(&s->wake) == 0 ? WAKE_TOKEN : WAKE_STRANDED;
		if (done)
			return sem_trywait(&s->wake) == 0 ? WAKE_TOKEN : WAKE_DONE;
	}
}

struct consumer_state {
	uint32_t next[STRESS_PRODUCERS];
	bool *seen;
};

/* Pop to NULL; stranded: the records were found by an idle look. */
static uint64_t consumer_drain(struct stress *s, struct consumer_state *c, bool stranded)
{
	struct lf_mpsc_node *n;
	uint64_t got = 0;

	while ((n = s->ops->pop(&s->q))) {
		struct rec *r = rec_of(n);
		uint64_t idx = (uint64_t)r->producer * s->records + r->seq;

		if (c->seen[idx]) {
			s->duplicates++;
			continue;
		}
		c->seen[idx] = true;
		got++;
		if (stranded)
			s->stranded++;
		else
			s->received++;
		if (r->seq != c->next[r->producer])
			s->out_of_order++;
		c->next[r->producer] = r->seq + 1;
	}
	return got;
}

static void *consumer(void *p)
{
	struct stress *s = p;
	struct consumer_state c = { .seen = calloc((size_t)STRESS_PRODUCERS * s->records, sizeof(bool)) };
	enum wake w;

	if (!c.seen)
		lf_die("out of memory");
	while ((w = consumer_sleep(s)) != WAKE_DONE) {
		if (w == WAKE_STRANDED) {
			if (!s->strandings++)
				s->first_caught_ns = lf_now_ns() - s->start_ns;
			if (s->stop_at_first)
				atomic_store_explicit(&s->stop, true, memory_order_relaxed);
			consumer_drain(s, &c, true);
			continue;
		}
		s->wakeups++;
		if (!consumer_drain(s, &c, false))
			s->empty_wakeups++;
	}
	/* No token will come: whatever is still queued was stranded. */
	consumer_drain(s, &c, true);
	free(c.seen);
	return NULL;
}

static struct stress *stress_run(const struct mpsc_ops *ops, uint32_t records, uint64_t run_ns,
				 bool stop_at_first)
{
	struct stress *s = aligned_alloc(LF_DESTRUCTIVE, sizeof *s);
	struct producer_arg args[STRESS_PRODUCERS];
	pthread_t prod[STRESS_PRODUCERS], cons;

	assert_non_null(s);
	memset(s, 0, sizeof *s);
	s->ops = ops;
	s->records = records;
	s->stop_at_first = stop_at_first;
	s->start_ns = lf_now_ns();
	s->deadline_ns = run_ns ? s->start_ns + run_ns : UINT64_MAX;
	ops->init(&s->q);
	assert_int_equal(sem_init(&s->wake, 0, 0), 0);
	for (uint32_t i = 0; i < STRESS_PRODUCERS; i++) {
		s->recs[i] = calloc(records, sizeof(struct rec));
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

	printf("%s: %u producers x %u records max: pushed %llu, received %llu, "
	       "was-empty pushes %llu, consumer wake-ups %llu (%llu found nothing), pop stalls %llu, "
	       "strandings %llu (first after %.1f ms), stranded records %llu, duplicates %llu, "
	       "out of order %llu, %.0f ms\n",
	       ops->name, STRESS_PRODUCERS, records, (unsigned long long)s->pushed,
	       (unsigned long long)s->received, (unsigned long long)s->was_empty,
	       (unsigned long long)s->wakeups, (unsigned long long)s->empty_wakeups,
	       (unsigned long long)s->q.stalls, (unsigned long long)s->strandings,
	       s->first_caught_ns / 1e6, (unsigned long long)s->stranded,
	       (unsigned long long)s->duplicates, (unsigned long long)s->out_of_order,
	       (lf_now_ns() - s->start_ns) / 1e6);
	return s;
}

static void stress_free(struct stress *s)
{
	s->ops->destroy(&s->q);
	sem_destroy(&s->wake);
	for (uint32_t i = 0; i < STRESS_PRODUCERS; i++)
		free(s->recs[i]);
	free(s);
}

static void mpsc_stress_wakeups(void **state)
{
	struct stress *s = stress_run(&mpsc_real, STRESS_RECORDS, 0, false);

	assert_int_equal(s->strandings, 0);
	assert_int_equal(s->stranded, 0);
	assert_int_equal(s->duplicates, 0);
	assert_int_equal(s->out_of_order, 0);
	assert_int_equal(s->pushed, (uint64_t)STRESS_PRODUCERS * STRESS_RECORDS);
	assert_int_equal(s->received, s->pushed);
	assert_true(s->was_empty >= 1);
	assert_true(lf_mpsc_empty(&s->q));
	stress_free(s);
}

static void mpsc_broken_is_caught(void **state)
{
	struct stress *s = stress_run(&mpsc_broken, BROKEN_RECORDS, BROKEN_RUN_NS, true);

	/* Only the wake-up rule is broken: the queue itself stays exact. */
	assert_true(s->strandings > 0);
	assert_true(s->stranded > 0);
	assert_int_equal(s->duplicates, 0);
	assert_int_equal(s->out_of_order, 0);
	assert_int_equal(s->received + s->stranded, s->pushed);
	assert_true(lf_mpsc_broken_empty(&s->q));
	stress_free(s);
}

FB_TEST_MAIN(cmocka_unit_test(mpsc_single_thread),
	     cmocka_unit_test(mpsc_stress_wakeups),
	     cmocka_unit_test(mpsc_broken_is_caught))
