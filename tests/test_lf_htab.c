/* tests/test_lf_htab.c — the handle table: insert/lookup/remove semantics,
 * the grace period held by a reader, and readers racing a writer.
 *
 * Removed objects are poisoned by free_fn (an atomic magic word, plus a plain
 * payload store and a real free() in the correct variant, so ASan and TSan
 * check the grace period too).  A reader that finds an object and sees it
 * poisoned before leaving its read-side section counts a poisoned read: the
 * correct table must give 0; the broken variant (free_fn at once, no grace
 * period) must give more than 0.
 */
#include "tests/fb_test.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "lockfree/arch.h"
#include "lockfree/die.h"
#include "lockfree/htab.h"
#include "lockfree/tsan.h"

#ifdef FB_TSAN
/* liburcu's internal cross-thread malloc/free (see lockfree/tsan.h). */
const char *__tsan_default_suppressions(void);
const char *__tsan_default_suppressions(void)
{
	return LF_TSAN_SUPPRESS_LIBURCU;
}
#endif

/* The deliberately broken variant (see htab.h): lockfree/htab.c built with
 * -DLF_HTAB_BROKEN, its functions renamed lf_htab_broken_* (mk/lockfree-broken.mk). */
void lf_htab_broken_thread_online(void);
void lf_htab_broken_thread_offline(void);
void lf_htab_broken_read_lock(void);
void lf_htab_broken_read_unlock(void);
struct lf_htab *lf_htab_broken_create(unsigned size_hint);
void lf_htab_broken_destroy(struct lf_htab *h, void (*free_fn)(void *obj));
int lf_htab_broken_insert(struct lf_htab *h, uint64_t key, void *obj);
void *lf_htab_broken_lookup(struct lf_htab *h, uint64_t key);
int lf_htab_broken_remove(struct lf_htab *h, uint64_t key, void (*free_fn)(void *obj));

struct htab_ops {
	const char *name;
	void (*online)(void), (*offline)(void), (*read_lock)(void), (*read_unlock)(void);
	struct lf_htab *(*create)(unsigned);
	void (*destroy)(struct lf_htab *, void (*)(void *));
	int (*insert)(struct lf_htab *, uint64_t, void *);
	void *(*lookup)(struct lf_htab *, uint64_t);
	int (*remove)(struct lf_htab *, uint64_t, void (*)(void *));
	bool really_free;       /* free_fn may free(): only where a grace period is kept */
};

static const struct htab_ops htab_real = {
	"lf_htab", lf_htab_thread_online, lf_htab_thread_offline, lf_htab_read_lock,
	lf_htab_read_unlock, lf_htab_create, lf_htab_destroy, lf_htab_insert,
	lf_htab_lookup, lf_htab_remove, true,
};
static const struct htab_ops htab_broken = {
	"lf_htab_broken", lf_htab_broken_thread_online, lf_htab_broken_thread_offline,
	lf_htab_broken_read_lock, lf_htab_broken_read_unlock, lf_htab_broken_create,
	lf_htab_broken_destroy, lf_htab_broken_insert, lf_htab_broken_lookup,
	lf_htab_broken_remove, false,
};

#define LIVE   0x11fe11fe11fe11feull
#define POISON 0xdeaddeaddeaddeadull

struct obj {
	uint64_t key;
	_Atomic uint64_t magic;
	uint64_t payload;
};

static _Atomic uint64_t freed;
/* Plain on purpose: written by free_fn on liburcu's call_rcu thread, read
 * after lf_htab_barrier, so TSan checks that the barrier orders the two. */
static uint64_t freed_plain;
static _Atomic uint64_t payload_sink;

static struct obj *obj_new(uint64_t key)
{
	struct obj *o = calloc(1, sizeof *o);
	if (!o)
		lf_die("out of memory");
	o->key = key;
	o->payload = key * 3;
	atomic_store_explicit(&o->magic, LIVE, memory_order_relaxed);
	return o;
}

/* free_fn of the correct variant: poison, scribble, free. */
static void obj_kill(void *p)
{
	struct obj *o = p;
	atomic_store_explicit(&o->magic, POISON, memory_order_relaxed);
	o->payload = 0;         /* a plain store: TSan checks it against the readers */
	free(o);
	atomic_fetch_add(&freed, 1);
	freed_plain++;
}

/* free_fn of the broken variant: poison only (atomically), the test frees later. */
static void obj_poison(void *p)
{
	struct obj *o = p;
	atomic_store_explicit(&o->magic, POISON, memory_order_relaxed);
	atomic_fetch_add(&freed, 1);
}

/* ---------------- semantics ---------------- */

static void htab_basic(void **state)
{
	struct lf_htab *h;
	struct obj *a = obj_new(0), *b = obj_new(0);
	uint64_t k1, k2;

	lf_htab_thread_online();
	atomic_store(&freed, 0);
	h = lf_htab_create(4);
	assert_non_null(h);
	k1 = lf_htab_new_key(h);
	k2 = lf_htab_new_key(h);
	assert_true(k1 == 1 && k2 == 2);
	a->key = k1;
	b->key = k2;

	assert_int_equal(lf_htab_insert(h, k1, a), 0);
	assert_int_equal(lf_htab_insert(h, k1, b), -EEXIST);
	assert_true(lf_htab_count(h) == 1);
	lf_htab_read_lock();
	assert_ptr_equal(lf_htab_lookup(h, k1), a);
	assert_null(lf_htab_lookup(h, k2));
	lf_htab_read_unlock();
	assert_int_equal(lf_htab_remove(h, k2, obj_kill), -ENOENT);
	assert_int_equal(lf_htab_remove(h, k1, obj_kill), 0);
	assert_int_equal(lf_htab_remove(h, k1, obj_kill), -ENOENT);
	lf_htab_read_lock();
	assert_null(lf_htab_lookup(h, k1));
	lf_htab_read_unlock();
	assert_true(lf_htab_count(h) == 0);
	lf_htab_barrier();
	assert_true(atomic_load(&freed) == 1);          /* a, after a grace period */
	assert_true(freed_plain == 1);

	/* Enough keys to make the table grow; all found; destroy frees the rest. */
	assert_int_equal(lf_htab_insert(h, k2, b), 0);
	for (int i = 0; i < 5000; i++) {
		uint64_t k = lf_htab_new_key(h);
		assert_int_equal(lf_htab_insert(h, k, obj_new(k)), 0);
	}
	assert_true(lf_htab_count(h) == 5001);
	lf_htab_read_lock();
	for (uint64_t k = 3; k < 5003; k++) {
		struct obj *o = lf_htab_lookup(h, k);
		assert_non_null(o);
		assert_true(o->key == k);
	}
	lf_htab_read_unlock();
	for (uint64_t k = 3; k < 5003; k += 2)
		assert_int_equal(lf_htab_remove(h, k, obj_kill), 0);
	assert_true(lf_htab_count(h) == 5001 - 2500);
	lf_htab_destroy(h, obj_kill);
	assert_true(atomic_load(&freed) == 5002);
	lf_htab_thread_offline();
}

/* ---------------- the grace period holds while a reader holds it ---------------- */

struct remover_arg {
	struct lf_htab *h;
	uint64_t key;
	int ret;
};

static void *remover(void *p)
{
	struct remover_arg *a = p;

	lf_htab_thread_online();
	a->ret = lf_htab_remove(a->h, a->key, obj_kill);
	lf_htab_thread_offline();
	return NULL;
}

static void htab_grace_period(void **state)
{
	struct lf_htab *h;
	struct obj *o = obj_new(7), *seen;
	struct remover_arg arg;
	pthread_t t;
	struct timespec pause = { 0, 30 * 1000 * 1000 };

	lf_htab_thread_online();
	atomic_store(&freed, 0);
	h = lf_htab_create(8);
	assert_int_equal(lf_htab_insert(h, 7, o), 0);

	lf_htab_read_lock();
	seen = lf_htab_lookup(h, 7);
	assert_ptr_equal(seen, o);
	arg = (struct remover_arg){ h, 7, -1 };
	pthread_create(&t, NULL, remover, &arg);
	pthread_join(t, NULL);
	assert_int_equal(arg.ret, 0);
	nanosleep(&pause, NULL);        /* the call_rcu thread had time to try */
	assert_true(atomic_load(&freed) == 0);
	assert_true(atomic_load(&seen->magic) == LIVE);
	assert_true(seen->payload == 21);
	assert_null(lf_htab_lookup(h, 7));      /* new lookups already miss */
	lf_htab_read_unlock();

	lf_htab_barrier();
	assert_true(atomic_load(&freed) == 1);
	lf_htab_destroy(h, obj_kill);
	lf_htab_thread_offline();
}

/* ---------------- readers racing a writer ---------------- */

#define READERS 2
#define KEYS    16u
#ifdef FB_TSAN
#define WRITER_OPS 20000u
#else
#define WRITER_OPS 200000u
#endif
#define RACE_NS (3000ull * 1000 * 1000)

struct race {
	const struct htab_ops *ops;
	struct lf_htab *h;
	_Atomic int stop;
	bool stop_at_first;
	_Atomic uint64_t found, missed, poisoned, wrong_key, writer_errors, held_across;
	struct obj **all;       /* broken run: every object, freed at the end */
	uint32_t nall;
};

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void *reader(void *p)
{
	struct race *rc = p;
	uint64_t x = (uint64_t)(uintptr_t)&x | 1, found = 0, missed = 0, poisoned = 0, wrong = 0, sum = 0;
	uint64_t held_across = 0;

	rc->ops->online();
	while (!atomic_load_explicit(&rc->stop, memory_order_relaxed)) {
		uint64_t key = 1 + rnd(&x) % KEYS;
		struct obj *o;

		rc->ops->read_lock();
		o = rc->ops->lookup(rc->h, key);
		if (o) {
			bool bad = atomic_load_explicit(&o->magic, memory_order_relaxed) != LIVE;
			found++;
			if (o->key != key)
				wrong++;
			/* Hold the object a while, as a fence user does: the writer
			 * gets to remove it meanwhile (sometimes on this very CPU). */
			if (rnd(&x) % 16 == 0)
				sched_yield();
			else
				for (int i = 0; i < 64; i++)
					lf_cpu_relax();
			sum += o->payload;
			/* Did the writer remove it while we held it?  (The window
			 * the grace period is for: shows the race was exercised.) */
			if (rc->ops->lookup(rc->h, key) != o)
				held_across++;
			bad |= atomic_load_explicit(&o->magic, memory_order_relaxed) != LIVE;
			if (bad) {
				poisoned++;
				if (rc->stop_at_first)
					atomic_store(&rc->stop, 1);
			}
		} else {
			missed++;
		}
		rc->ops->read_unlock();
	}
	rc->ops->offline();
	atomic_fetch_add(&payload_sink, sum);   /* keep the payload loads */
	atomic_fetch_add(&rc->found, found);
	atomic_fetch_add(&rc->missed, missed);
	atomic_fetch_add(&rc->poisoned, poisoned);
	atomic_fetch_add(&rc->wrong_key, wrong);
	atomic_fetch_add(&rc->held_across, held_across);
	return NULL;
}

static void *writer(void *p)
{
	struct race *rc = p;
	bool present[KEYS + 1] = { false };
	uint64_t x = 0x2545f4914f6cdd1dull, deadline = lf_now_ns() + RACE_NS;
	void (*free_fn)(void *) = rc->ops->really_free ? obj_kill : obj_poison;

	rc->ops->online();
	for (uint32_t i = 0; i < WRITER_OPS && !atomic_load(&rc->stop); i++) {
		uint64_t key = 1 + rnd(&x) % KEYS;
		if ((i & 255) == 0 && lf_now_ns() > deadline)
			break;
		if (present[key]) {
			if (rc->ops->remove(rc->h, key, free_fn))
				atomic_fetch_add(&rc->writer_errors, 1);
			present[key] = false;
		} else {
			struct obj *o = obj_new(key);
			if (!rc->ops->really_free)
				rc->all[rc->nall++] = o;
			if (rc->ops->insert(rc->h, key, o))
				atomic_fetch_add(&rc->writer_errors, 1);
			present[key] = true;
		}
	}
	rc->ops->offline();
	atomic_store(&rc->stop, 1);
	return NULL;
}

static struct race *race_run(const struct htab_ops *ops, bool stop_at_first)
{
	struct race *rc = calloc(1, sizeof *rc);
	pthread_t rd[READERS], wr;

	if (!rc)
		lf_die("out of memory");
	rc->ops = ops;
	rc->stop_at_first = stop_at_first;
	rc->h = ops->create(KEYS);
	if (!ops->really_free) {
		rc->all = calloc(WRITER_OPS, sizeof *rc->all);
		if (!rc->all)
			lf_die("out of memory");
	}
	atomic_store(&freed, 0);
	for (int i = 0; i < READERS; i++)
		pthread_create(&rd[i], NULL, reader, rc);
	pthread_create(&wr, NULL, writer, rc);
	pthread_join(wr, NULL);
	for (int i = 0; i < READERS; i++)
		pthread_join(rd[i], NULL);

	ops->online();
	ops->destroy(rc->h, ops->really_free ? obj_kill : NULL);
	ops->offline();
	for (uint32_t i = 0; i < rc->nall; i++)
		free(rc->all[i]);
	free(rc->all);
	printf("%s: %d readers, 1 writer on %u keys: found %llu (removed while held %llu), "
	       "missed %llu, poisoned reads %llu, "
	       "wrong keys %llu, writer errors %llu, objects freed by free_fn %llu\n",
	       ops->name, READERS, KEYS, (unsigned long long)rc->found,
	       (unsigned long long)rc->held_across,
	       (unsigned long long)rc->missed, (unsigned long long)rc->poisoned,
	       (unsigned long long)rc->wrong_key, (unsigned long long)rc->writer_errors,
	       (unsigned long long)atomic_load(&freed));
	return rc;
}

static void htab_readers_vs_writer(void **state)
{
	struct race *rc = race_run(&htab_real, false);

	assert_true(rc->found > 0);
	assert_int_equal(rc->poisoned, 0);
	assert_int_equal(rc->wrong_key, 0);
	assert_int_equal(rc->writer_errors, 0);
	free(rc);
}

static void htab_broken_is_caught(void **state)
{
	struct race *rc = race_run(&htab_broken, true);

	assert_int_equal(rc->wrong_key, 0);
	assert_int_equal(rc->writer_errors, 0);
	assert_true(rc->poisoned > 0);
	free(rc);
}

FB_TEST_MAIN(cmocka_unit_test(htab_basic),
	     cmocka_unit_test(htab_grace_period),
	     cmocka_unit_test(htab_readers_vs_writer),
	     cmocka_unit_test(htab_broken_is_caught))
