/* benchmarks/micro/bench_htab.c — handle lookups: the RCU handle table vs a rwlock table.
 *
 * What the interrupt thread does for every handle in a signaled-fence array:
 * look the global handle up.  Readers only (1 and 2 threads), 4096 handles,
 * random keys (xorshift per thread), in the same run:
 *   htab_lookup_rcu      lf_htab_lookup inside lf_htab_read_lock/unlock (liburcu cds_lfht)
 *   htab_lookup_rwlock   a chained hash table behind pthread_rwlock_rdlock
 * items_per_second is lookups per second (per thread-second in Google Benchmark
 * 1.7); `found` must be 1 (every key present).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lockfree/htab.h"
#include "src/gbench/gbench.h"

#define HT_KEYS 4096u

static struct lf_htab *ht_rcu;
static uint64_t ht_obj[HT_KEYS];

struct ht_ent {
	uint64_t key;
	void *obj;
	struct ht_ent *next;
};
static struct ht_ent *ht_bucket[HT_KEYS];
static struct ht_ent ht_ents[HT_KEYS];
static pthread_rwlock_t ht_lock = PTHREAD_RWLOCK_INITIALIZER;

static uint64_t ht_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void ht_setup(const gb_state *st)
{
	lf_htab_thread_online();
	ht_rcu = lf_htab_create(HT_KEYS);
	for (uint64_t k = 1; k <= HT_KEYS; k++) {
		lf_htab_insert(ht_rcu, k, &ht_obj[k - 1]);
		struct ht_ent *e = &ht_ents[k - 1];
		e->key = k;
		e->obj = &ht_obj[k - 1];
		e->next = ht_bucket[k % HT_KEYS];
		ht_bucket[k % HT_KEYS] = e;
	}
	lf_htab_thread_offline();   /* setup may run on a benchmark thread: leave it unregistered */
}

static void ht_teardown(const gb_state *st)
{
	lf_htab_thread_online();
	lf_htab_destroy(ht_rcu, NULL);
	lf_htab_thread_offline();
	for (unsigned i = 0; i < HT_KEYS; i++)
		ht_bucket[i] = NULL;
}

static void htab_lookup_rcu(gb_state *st)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull + (uint64_t)gb_thread_index(st), found = 0;
	lf_htab_thread_online();
	while (gb_keep_running(st)) {
		uint64_t key = ht_rand(&seed) % HT_KEYS + 1;
		lf_htab_read_lock();
		found += lf_htab_lookup(ht_rcu, key) != NULL;
		lf_htab_read_unlock();
	}
	lf_htab_thread_offline();
	gb_set_items_processed(st, gb_iterations(st));
	gb_counter(st, "found", (double)found, GB_COUNTER_AVG_ITERATIONS);
}

static void htab_lookup_rwlock(gb_state *st)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull + (uint64_t)gb_thread_index(st), found = 0;
	while (gb_keep_running(st)) {
		uint64_t key = ht_rand(&seed) % HT_KEYS + 1;
		pthread_rwlock_rdlock(&ht_lock);
		for (struct ht_ent *e = ht_bucket[key % HT_KEYS]; e; e = e->next)
			if (e->key == key) {
				found++;
				break;
			}
		pthread_rwlock_unlock(&ht_lock);
	}
	gb_set_items_processed(st, gb_iterations(st));
	gb_counter(st, "found", (double)found, GB_COUNTER_AVG_ITERATIONS);
}

GB_BENCHMARK(htab_lookup_rcu, gb_thread_range(b, 1, 2); gb_use_real_time(b); gb_min_time(b, 0.3);
	     gb_setup(b, ht_setup); gb_teardown(b, ht_teardown))
GB_BENCHMARK(htab_lookup_rwlock, gb_thread_range(b, 1, 2); gb_use_real_time(b); gb_min_time(b, 0.3);
	     gb_setup(b, ht_setup); gb_teardown(b, ht_teardown))
