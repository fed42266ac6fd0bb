/* lockfree/htab.c — the handle table over liburcu cds_lfht + call_rcu.
 *
 * Built without _LGPL_SOURCE: liburcu's exported functions, the same code in
 * every build, and nothing inlined that ThreadSanitizer would misread.
 */
#include "lockfree/htab.h"

#include <errno.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <urcu.h>               /* the default flavor (urcu-memb): before rculfhash.h */
#include <urcu/rculfhash.h>

#include "lockfree/alloc.h"
#include "lockfree/die.h"
#include "lockfree/tsan.h"

struct lf_htab {
	struct cds_lfht *ht;
	_Atomic uint64_t count;         /* inserted - removed */
	_Atomic uint64_t next_key;      /* lf_htab_new_key */
};

/* One mapping.  Freed by call_rcu after it left the table. */
struct lf_htab_entry {
	struct cds_lfht_node node;      /* liburcu's; written only inside the library */
	uint64_t key;                   /* immutable once published */
	void *obj;                      /* immutable once published */
	void (*free_fn)(void *obj);     /* set by the remover, read by the callback */
	struct rcu_head rcu;
};

/* TSan stand-in for the grace period: every read-side section releases it on
 * exit, every deferred free acquires it.  A free then happens-after every
 * section that ended before it, which is what the grace period guarantees
 * (a section still open when the free runs would be a real bug, and is
 * still reported). */
static char lf_htab_grace;
/* TSan only: the deferred frees that rcu_barrier waits for (see lf_htab_barrier). */
static char lf_htab_freed;

void lf_htab_thread_online(void)
{
	rcu_register_thread();
}

void lf_htab_thread_offline(void)
{
	rcu_unregister_thread();
}

void lf_htab_read_lock(void)
{
	rcu_read_lock();
}

void lf_htab_read_unlock(void)
{
	/* Before leaving: once left, the grace period may end and a free run. */
	lf_tsan_release(&lf_htab_grace);
	rcu_read_unlock();
}

void lf_htab_barrier(void)
{
	rcu_barrier();
	lf_tsan_acquire(&lf_htab_freed);        /* pairs with lf_htab_free_entry */
}

/* Fibonacci hashing, folded so the low bits (split-order buckets) depend on
 * every key bit. */
static unsigned long lf_htab_hash(uint64_t key)
{
	uint64_t x = key * 0x9e3779b97f4a7c15ull;
	return (unsigned long)(x ^ (x >> 29));
}

static int lf_htab_match(struct cds_lfht_node *node, const void *key)
{
	struct lf_htab_entry *e = caa_container_of(node, struct lf_htab_entry, node);

	lf_tsan_acquire(e);     /* pairs with lf_tsan_release(e) in insert */
	return e->key == *(const uint64_t *)key;
}

static unsigned long lf_htab_pow2(unsigned n)
{
	unsigned long p = 1;

	while (p < n && p < (1ul << 30))
		p <<= 1;
	return p;
}

struct lf_htab *lf_htab_create(unsigned size_hint)
{
	struct lf_htab *h = lf_alloc(sizeof *h, alignof(struct lf_htab));

	h->ht = cds_lfht_new(lf_htab_pow2(size_hint), 1, 0,
			     CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING, NULL);
	if (!h->ht) {
		lf_free(h, sizeof *h, alignof(struct lf_htab));
		errno = ENOMEM;
		return NULL;
	}
	atomic_init(&h->count, 0);
	atomic_init(&h->next_key, 1);
	return h;
}

uint64_t lf_htab_new_key(struct lf_htab *h)
{
	return atomic_fetch_add_explicit(&h->next_key, 1, memory_order_relaxed);
}

uint64_t lf_htab_count(struct lf_htab *h)
{
	return atomic_load_explicit(&h->count, memory_order_relaxed);
}

int lf_htab_insert(struct lf_htab *h, uint64_t key, void *obj)
{
	struct lf_htab_entry *e = lf_alloc(sizeof *e, alignof(struct lf_htab_entry));
	struct cds_lfht_node *got;

	e->key = key;
	e->obj = obj;
	cds_lfht_node_init(&e->node);
	/* The entry and the object happen-before any reader's match on e:
	 * cds_lfht_add_unique's full barrier, invisible to TSan. */
	lf_tsan_release(e);
	lf_htab_read_lock();
	got = cds_lfht_add_unique(h->ht, lf_htab_hash(key), lf_htab_match, &key, &e->node);
	lf_htab_read_unlock();
	if (got != &e->node) {
		/* Never published: no grace period needed. */
		lf_free(e, sizeof *e, alignof(struct lf_htab_entry));
		return -EEXIST;
	}
	atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
	return 0;
}

void *lf_htab_lookup(struct lf_htab *h, uint64_t key)
{
	struct cds_lfht_iter iter;
	struct cds_lfht_node *node;

	cds_lfht_lookup(h->ht, lf_htab_hash(key), lf_htab_match, &key, &iter);
	node = cds_lfht_iter_get_node(&iter);
	if (!node)
		return NULL;
	/* lf_htab_match acquired e before comparing its key. */
	return caa_container_of(node, struct lf_htab_entry, node)->obj;
}

/* call_rcu callback: a grace period has passed since the entry left the table. */
static void lf_htab_free_entry(struct rcu_head *head)
{
	struct lf_htab_entry *e = caa_container_of(head, struct lf_htab_entry, rcu);

	lf_tsan_acquire(&lf_htab_grace);        /* every reader that could have seen e */
	lf_tsan_acquire(e);                     /* the remover's free_fn store */
	if (e->free_fn)
		e->free_fn(e->obj);
	lf_free(e, sizeof *e, alignof(struct lf_htab_entry));
	/* what free_fn did happens-before rcu_barrier's return (lf_htab_barrier, destroy) */
	lf_tsan_release(&lf_htab_freed);
}

/* Defer freeing e (already deleted from the table) past a grace period. */
static void lf_htab_retire(struct lf_htab_entry *e, void (*free_fn)(void *obj))
{
#ifdef LF_HTAB_BROKEN
	/* BROKEN (tests only): the object dies while readers may still use it. */
	if (free_fn)
		free_fn(e->obj);
	free_fn = NULL;
#endif
	e->free_fn = free_fn;
	lf_tsan_release(e);
	call_rcu(&e->rcu, lf_htab_free_entry);
}

int lf_htab_remove(struct lf_htab *h, uint64_t key, void (*free_fn)(void *obj))
{
	struct cds_lfht_iter iter;
	struct cds_lfht_node *node;
	int ret = -ENOENT;

	lf_htab_read_lock();
	cds_lfht_lookup(h->ht, lf_htab_hash(key), lf_htab_match, &key, &iter);
	node = cds_lfht_iter_get_node(&iter);
	/* del fails when a concurrent remove of the same node won. */
	if (node && cds_lfht_del(h->ht, node) == 0) {
		lf_htab_retire(caa_container_of(node, struct lf_htab_entry, node), free_fn);
		atomic_fetch_sub_explicit(&h->count, 1, memory_order_relaxed);
		ret = 0;
	}
	lf_htab_read_unlock();
	return ret;
}

void lf_htab_destroy(struct lf_htab *h, void (*free_fn)(void *obj))
{
	struct cds_lfht_iter iter;
	struct lf_htab_entry *e;
	int ret;

	if (!h)
		return;
	lf_htab_read_lock();
	cds_lfht_for_each_entry(h->ht, &iter, e, node) {
		if (cds_lfht_del(h->ht, &e->node) == 0)
			lf_htab_retire(e, free_fn);
	}
	lf_htab_read_unlock();
	/* Every deferred free, including the ones just queued, has run after this. */
	rcu_barrier();
	lf_tsan_acquire(&lf_htab_freed);
	ret = cds_lfht_destroy(h->ht, NULL);
	if (ret)
		lf_die("cds_lfht_destroy: %d", ret);
	lf_free(h, sizeof *h, alignof(struct lf_htab));
}
