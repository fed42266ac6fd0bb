/* lockfree/htab.h — handle table: 64-bit key -> object, RCU lookups.
 *
 * The fence handle tables (one global, one per process).  A thin layer over
 * liburcu's resizable lock-free hash table (urcu/rculfhash.h, cds_lfht) with
 * the default RCU flavor (<urcu.h>, urcu-memb): lookups run inside an RCU
 * read-side section and never block or write shared memory; a removed
 * object is freed only after a grace period, by call_rcu.
 *
 * Threads: every thread that calls anything here except create/new_key/count
 * must be a registered RCU reader: lf_htab_thread_online() once when it
 * starts, lf_htab_thread_offline() before it exits.  Unregistered use is
 * undefined (liburcu may wait forever or free under a reader).
 *
 * Object lifetime: lf_htab_lookup returns the object with no reference
 * taken; it stays valid until the caller's lf_htab_read_unlock.  To keep it
 * longer, take a reference of your own inside the section.  After
 * lf_htab_remove, new lookups miss; free_fn(obj) runs after every reader
 * that could have seen the object has left its section (from the call_rcu
 * thread: free_fn must not block on anything those readers hold).
 *
 * Memory ordering: insert publishes the object (everything written to it
 * before lf_htab_insert is visible to a reader that finds it: liburcu's
 * full barrier before the commit, rcu_dereference on lookup).  For
 * ThreadSanitizer both edges are annotated (lockfree/tsan.h): the entry
 * hand-over on insert/lookup, and every read-side section's end before the
 * deferred free.
 *
 * Synchronization (who may run concurrently with whom):
 *
 *   | operation                 | caller                 | concurrent with            | progress                 |
 *   |---------------------------|------------------------|----------------------------|--------------------------|
 *   | lf_htab_lookup            | registered, in section | everything but destroy     | wait-free (RCU read)     |
 *   | lf_htab_insert, _remove   | registered thread      | everything but destroy     | lock-free (allocates)    |
 *   | lf_htab_count, _new_key   | any thread             | everything but destroy     | wait-free                |
 *   | lf_htab_read_lock/unlock  | registered thread      | everything                 | wait-free, nests         |
 *   | lf_htab_barrier           | registered, no section | everything                 | blocking (grace periods) |
 *   | lf_htab_create            | any thread             | everything                 | blocking (allocates)     |
 *   | lf_htab_destroy           | registered, no section | nothing on this table      | blocking (rcu_barrier)   |
 *
 * Broken variant (tests only): compiled with -DLF_HTAB_BROKEN, remove calls
 * free_fn at once instead of after the grace period (the entry itself is
 * still freed by call_rcu, so ASan stays quiet and the test counts poisoned
 * objects instead).  tests/test_lf_htab.c compiles it into itself under the
 * lf_htab_broken_ prefix and asserts its readers catch it.
 */
#ifndef LF_HTAB_H
#define LF_HTAB_H

#include <stdint.h>

struct lf_htab;

/* Register / unregister the calling thread as an RCU reader (rcu_register_thread). */
void lf_htab_thread_online(void);
void lf_htab_thread_offline(void);

/* Enter / leave an RCU read-side section.  Objects found inside stay valid
 * until the matching unlock.  Sections nest.  Never block inside one for
 * long: removals wait for it (and the call_rcu thread's frees do). */
void lf_htab_read_lock(void);
void lf_htab_read_unlock(void);

/* Wait until every free_fn queued so far (by any table) has run
 * (rcu_barrier).  Registered thread, outside any read-side section. */
void lf_htab_barrier(void);

/* A table sized for about size_hint entries (it grows and shrinks by itself).
 * Returns NULL with errno = ENOMEM. */
struct lf_htab *lf_htab_create(unsigned size_hint);

/* Destroy the table: entries still in it are removed and, if free_fn is not
 * NULL, passed to free_fn; pending deferred frees of all tables are waited
 * for (rcu_barrier).  No other thread may use the table any more. */
void lf_htab_destroy(struct lf_htab *h, void (*free_fn)(void *obj));

/* A fresh key: 1, 2, 3, ... per table, never 0, never reused.  Any thread. */
uint64_t lf_htab_new_key(struct lf_htab *h);

/* Map key -> obj (obj != NULL).  Returns 0, or -EEXIST when the key is
 * present (the table is unchanged).  Allocates the entry with lf_alloc
 * (aborts when out of memory).  Takes its own read-side section. */
int lf_htab_insert(struct lf_htab *h, uint64_t key, void *obj);

/* The object mapped to key, or NULL.  Call inside lf_htab_read_lock; the
 * object is valid until lf_htab_read_unlock. */
void *lf_htab_lookup(struct lf_htab *h, uint64_t key);

/* Unmap key.  Returns 0, or -ENOENT when it is not present (or a concurrent
 * remove got it first).  free_fn(obj), if not NULL, runs after a grace period
 * (call_rcu).  Takes its own read-side section. */
int lf_htab_remove(struct lf_htab *h, uint64_t key, void (*free_fn)(void *obj));

/* Entries inserted and not removed (relaxed; exact when nothing runs). */
uint64_t lf_htab_count(struct lf_htab *h);

#endif
