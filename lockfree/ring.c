/* lockfree/ring.c — SPSC ring of fixed-size slots.  Contract in ring.h. */
#include "lockfree/ring.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "lockfree/alloc.h"
#include "lockfree/arch.h"
#include "lockfree/cacheline.h"

#ifdef LF_RING_BROKEN
#include <sched.h>
#ifndef LF_RING_BROKEN_WINDOW_NS
#define LF_RING_BROKEN_WINDOW_NS 20000 /* how long the broken push leaves a published slot unwritten: longer than a (TSan-slowed) consumer takes per slot */
#endif
#endif

#define LF_RING_MAX_CAPACITY ((size_t)1 << 31)

/* Each writer's fields start their own LF_DESTRUCTIVE block, so the adjacent-
 * line prefetcher does not pair the producer's line with the consumer's. */
#define LF_RING_SIDE __attribute__((aligned(LF_DESTRUCTIVE)))

struct lf_ring {
	/* Producer's block: written by the producer on every push. */
	_Atomic uint64_t write LF_RING_SIDE; /* published write index: release by push, acquire by the consumer */
	uint64_t read_cache;                 /* producer-private copy of `read`; <= read */

	/* Consumer's block: written by the consumer on every pop. */
	_Atomic uint64_t read LF_RING_SIDE;  /* published read index: release by pop, acquire by the producer */
	uint64_t write_cache;                /* consumer-private copy of `write`; <= write */

	/* Read-only after create: shared (never invalidated) by both sides. */
	uint64_t mask LF_RING_SIDE;
	size_t slot_size;
	size_t alloc_size;
	unsigned char *slots;
};

LF_ASSERT_OWN_LINE(struct lf_ring, write);
LF_ASSERT_OWN_LINE(struct lf_ring, read);
LF_ASSERT_OWN_LINE(struct lf_ring, mask);
_Static_assert(offsetof(struct lf_ring, read) - offsetof(struct lf_ring, write) >= LF_DESTRUCTIVE,
	       "producer and consumer indices must be LF_DESTRUCTIVE apart");
_Static_assert(offsetof(struct lf_ring, mask) - offsetof(struct lf_ring, read) >= LF_DESTRUCTIVE,
	       "consumer index must not share a prefetch pair with the read-only fields");
_Static_assert(sizeof(struct lf_ring) % LF_DESTRUCTIVE == 0, "slots must start on their own lines");
_Static_assert(offsetof(struct lf_ring, write) == 0, "a split ring's control block holds the write index at offset 0");

/* Capacity and slot size as lf_ring_create accepts them. */
static bool lf_ring_geometry_ok(size_t slot_size, size_t capacity)
{
	return slot_size && capacity && capacity <= LF_RING_MAX_CAPACITY && !(capacity & (capacity - 1)) &&
	       slot_size <= (SIZE_MAX - sizeof(struct lf_ring)) / capacity;
}

struct lf_ring *lf_ring_create(size_t slot_size, size_t capacity)
{
	if (!lf_ring_geometry_ok(slot_size, capacity)) {
		errno = EINVAL;
		return NULL;
	}
	size_t alloc_size = sizeof(struct lf_ring) + slot_size * capacity;
	struct lf_ring *r = lf_alloc(alloc_size, LF_DESTRUCTIVE); /* zeroed: indices start at 0 */
	r->mask = capacity - 1;
	r->slot_size = slot_size;
	r->alloc_size = alloc_size;
	r->slots = (unsigned char *)(r + 1);
	return r;
}

size_t lf_ring_control_bytes(void)
{
	return sizeof(struct lf_ring);
}

struct lf_ring *lf_ring_create_split(void *control, void *slots, size_t slot_size, size_t capacity)
{
	if (!control || !slots || !lf_ring_geometry_ok(slot_size, capacity)) {
		errno = EINVAL;
		return NULL;
	}
	struct lf_ring *r = control;   /* zeroed by the caller: indices start at 0 */
	r->mask = capacity - 1;
	r->slot_size = slot_size;
	r->alloc_size = sizeof(struct lf_ring);   /* the control block only: the slots are apart */
	r->slots = slots;
	return r;
}

void lf_ring_destroy(struct lf_ring *r)
{
	if (!r)
		return;
	if (r->slots != (unsigned char *)(r + 1))   /* split: the slots are a block of their own */
		lf_free(r->slots, r->slot_size * (r->mask + 1), LF_DESTRUCTIVE);
	lf_free(r, r->alloc_size, LF_DESTRUCTIVE);
}

static inline unsigned char *lf_ring_slot(const struct lf_ring *r, uint64_t index)
{
	return r->slots + (size_t)(index & r->mask) * r->slot_size;
}

bool lf_ring_push_spsc(struct lf_ring *r, const void *slot)
{
	/* Only the producer stores `write`: a relaxed load of its own value. */
	uint64_t w = atomic_load_explicit(&r->write, memory_order_relaxed);
	if (w - r->read_cache > r->mask) {
		/* Looks full: refresh.  Acquire pairs with pop's release of `read`:
		 * the consumer has finished copying out every slot below it. */
		r->read_cache = atomic_load_explicit(&r->read, memory_order_acquire);
		if (w - r->read_cache > r->mask)
			return false;
	}
#ifdef LF_RING_BROKEN
	/* BROKEN on purpose: the index is published (relaxed) before the slot is
	 * written, and the window is held open so a consumer can read the stale
	 * slot: a yield (a consumer on this CPU runs) and a spin (one on another CPU). */
	atomic_store_explicit(&r->write, w + 1, memory_order_relaxed);
	sched_yield();
	lf_spin_ns(LF_RING_BROKEN_WINDOW_NS);
	memcpy(lf_ring_slot(r, w), slot, r->slot_size);
#else
	memcpy(lf_ring_slot(r, w), slot, r->slot_size);
	/* Publish the slot: release orders the memcpy above before the index;
	 * pairs with the consumer's acquire load of `write`. */
	atomic_store_explicit(&r->write, w + 1, memory_order_release);
#endif
	return true;
}

bool lf_ring_push_n_spsc(struct lf_ring *r, const void *slots, size_t n)
{
	uint64_t w = atomic_load_explicit(&r->write, memory_order_relaxed);
	if (n > r->mask + 1)
		return false;
	if (w + n - r->read_cache > r->mask + 1) {
		/* Looks too full: refresh (acquire, as in lf_ring_push_spsc). */
		r->read_cache = atomic_load_explicit(&r->read, memory_order_acquire);
		if (w + n - r->read_cache > r->mask + 1)
			return false;
	}
	const unsigned char *src = slots;
#ifdef LF_RING_BROKEN
	/* BROKEN on purpose, as lf_ring_push_spsc: published before written. */
	atomic_store_explicit(&r->write, w + n, memory_order_relaxed);
	sched_yield();
	lf_spin_ns(LF_RING_BROKEN_WINDOW_NS);
	for (size_t i = 0; i < n; i++)
		memcpy(lf_ring_slot(r, w + i), src + i * r->slot_size, r->slot_size);
#else
	for (size_t i = 0; i < n; i++)
		memcpy(lf_ring_slot(r, w + i), src + i * r->slot_size, r->slot_size);
	/* One release for the batch: a consumer sees all n slots or none. */
	atomic_store_explicit(&r->write, w + n, memory_order_release);
#endif
	return true;
}

/* Consumer: true when a slot is published at index `rd`, refreshing write_cache. */
static inline bool lf_ring_has_slot(struct lf_ring *r, uint64_t rd)
{
	if (rd != r->write_cache)
		return true;
	/* Looks empty: refresh.  Acquire pairs with push's release of `write`:
	 * the contents of every slot below it are visible. */
	r->write_cache = atomic_load_explicit(&r->write, memory_order_acquire);
	return rd != r->write_cache;
}

bool lf_ring_pop_spsc(struct lf_ring *r, void *slot_out)
{
	/* Only the consumer stores `read`: a relaxed load of its own value. */
	uint64_t rd = atomic_load_explicit(&r->read, memory_order_relaxed);
	if (!lf_ring_has_slot(r, rd))
		return false;
	memcpy(slot_out, lf_ring_slot(r, rd), r->slot_size);
	/* Hand the slot back: release orders the memcpy above (our reads of the
	 * slot) before the producer may overwrite it; pairs with push's acquire of `read`. */
	atomic_store_explicit(&r->read, rd + 1, memory_order_release);
	return true;
}

bool lf_ring_peek_spsc(struct lf_ring *r, void *slot_out)
{
	uint64_t rd = atomic_load_explicit(&r->read, memory_order_relaxed);
	if (!lf_ring_has_slot(r, rd))
		return false;
	memcpy(slot_out, lf_ring_slot(r, rd), r->slot_size);
	return true;
}

size_t lf_ring_size(const struct lf_ring *r)
{
	/* Read `read` first: read <= write holds at every instant and both only
	 * grow, so the later `write` is >= the earlier `read`.  The difference can
	 * exceed the capacity if the consumer ran in between: clamp. */
	uint64_t rd = atomic_load_explicit(&r->read, memory_order_acquire);
	uint64_t w = atomic_load_explicit(&r->write, memory_order_acquire);
	uint64_t n = w - rd;
	return n > r->mask + 1 ? (size_t)(r->mask + 1) : (size_t)n;
}

uint64_t lf_ring_write_index(const struct lf_ring *r)
{
	/* Acquire pairs with push's release: slots below the result are readable. */
	return atomic_load_explicit(&r->write, memory_order_acquire);
}

uint64_t lf_ring_read_index(const struct lf_ring *r)
{
	/* Acquire pairs with pop's release: slots below the result are no longer read. */
	return atomic_load_explicit(&r->read, memory_order_acquire);
}

size_t lf_ring_capacity(const struct lf_ring *r)
{
	return (size_t)r->mask + 1;
}

size_t lf_ring_slot_size(const struct lf_ring *r)
{
	return r->slot_size;
}
