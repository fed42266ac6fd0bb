/* lockfree/ring.h — single-producer single-consumer ring of fixed-size slots.
 *
 * The GPU HW queue ring buffer: user mode (the producer) copies command slots
 * in and publishes its write pointer; the engine (the consumer) reads slots
 * and advances its read pointer.  Capacity is a power of two; the indices are
 * free-running 64-bit counters (slot = index & mask), so they never wrap in
 * practice and "full" is write - read == capacity.
 *
 * Memory ordering:
 *   push: copy the slot, then store-release the write index; pairs with the
 *         consumer's load-acquire of the write index (slot contents visible
 *         before the consumer may read them).
 *   pop:  copy the slot out, then store-release the read index; pairs with the
 *         producer's load-acquire of the read index (the consumer is done
 *         reading a slot before the producer may overwrite it).
 * Each side keeps a private cached copy of the other side's index and reloads
 * it only when the cached copy says full/empty, so in steady state neither
 * side touches the other side's cache line.
 *
 * Synchronization (who may run concurrently with whom):
 *
 *   | operation                    | caller          | concurrent with            | progress  |
 *   |------------------------------|-----------------|----------------------------|-----------|
 *   | lf_ring_push_spsc, _push_n_  | the producer    | pop, peek, size, indices   | wait-free |
 *   | lf_ring_pop_spsc, _peek_spsc | the consumer    | push, size, indices        | wait-free |
 *   | lf_ring_size, _write_index,  | any thread      | everything                 | wait-free |
 *   |   _read_index, _capacity     |                 |                            |           |
 *   | lf_ring_create(_split),      | one owner       | nothing                    | blocking  |
 *   |   _destroy                   |                 |                            |           |
 *
 * "The producer" is one thread at a time; handing the role to another thread
 * needs a happens-before edge between the two (a join, a lock, a release/
 * acquire pair).  Same for the consumer.
 *
 * Broken variant (tests only): compiling ring.c with -DLF_RING_BROKEN makes
 * push store the new write index BEFORE copying the slot in (and with relaxed
 * ordering), then yields and spins for LF_RING_BROKEN_WINDOW_NS (20 us) inside
 * that window.  A
 * consumer that sees the index can then copy out a slot that still holds the
 * previous lap's bytes (or zeros): tests/test_lf_ring.c links such an object
 * under the lf_ring_broken_ prefix and asserts that its consumer catches
 * stale slots.  Never link it into anything else.
 */
#ifndef LF_RING_H
#define LF_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lf_ring;

/* Create a ring of `capacity` slots of `slot_size` bytes each.  Returns NULL
 * with errno = EINVAL when capacity is not a power of two (or is 0, or above
 * 2^31) or slot_size is 0 or the total size overflows.  Any thread; allocates. */
struct lf_ring *lf_ring_create(size_t slot_size, size_t capacity);

/* A ring over two blocks the caller allocated: its control block (the
 * indices and the geometry, lf_ring_control_bytes() bytes; the published
 * write index at offset 0) and its slots (slot_size * capacity bytes), as a
 * GPU ring buffer and its ring buffer control are two allocations.  Both
 * from lf_alloc with LF_DESTRUCTIVE alignment, of exactly those sizes,
 * the control block zeroed; from now on the ring owns them: lf_ring_destroy
 * frees both.  NULL with errno = EINVAL as lf_ring_create (or a NULL
 * block).  Any thread; the ring is then used as any other. */
size_t lf_ring_control_bytes(void);
struct lf_ring *lf_ring_create_split(void *control, void *slots, size_t slot_size, size_t capacity);

/* Free the ring (both blocks of a split one); NULL is ignored.  No other
 * thread may use it any more. */
void lf_ring_destroy(struct lf_ring *r);

/* Producer only.  Copy slot_size bytes from `slot` into the next slot and
 * publish it (release).  Returns false, copying nothing, when the ring is full.
 * Wait-free. */
bool lf_ring_push_spsc(struct lf_ring *r, const void *slot);

/* Producer only.  Copy n slots (n * slot_size bytes from `slots`) in and
 * publish them with one release of the write index: a consumer sees all n or
 * none of them.  Returns false, copying nothing, when fewer than n slots are
 * free (always when n exceeds the capacity).  Wait-free. */
bool lf_ring_push_n_spsc(struct lf_ring *r, const void *slots, size_t n);
/* Consumer only.  Copy the oldest slot into `slot_out` and consume it
 * (release the slot back to the producer).  Returns false when empty.  Wait-free. */
bool lf_ring_pop_spsc(struct lf_ring *r, void *slot_out);

/* Consumer only.  Copy the oldest slot into `slot_out` without consuming it.
 * Returns false when empty.  Wait-free. */
bool lf_ring_peek_spsc(struct lf_ring *r, void *slot_out);

/* Any thread.  Number of published, unconsumed slots, in [0, capacity]:
 * exact when neither side is running, otherwise a value it had recently. */
size_t lf_ring_size(const struct lf_ring *r);

/* Any thread.  The producer's published write index (load-acquire): every slot
 * below it has been written.  Free-running: it counts pushes since creation. */
uint64_t lf_ring_write_index(const struct lf_ring *r);

/* Any thread.  The consumer's published read index (load-acquire): pops since creation. */
uint64_t lf_ring_read_index(const struct lf_ring *r);

/* Any thread.  The values given to lf_ring_create; constant. */
size_t lf_ring_capacity(const struct lf_ring *r);
size_t lf_ring_slot_size(const struct lf_ring *r);

#endif
