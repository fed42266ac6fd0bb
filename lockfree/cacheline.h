/* lockfree/cacheline.h — cache-line alignment and padding for shared hot data.
 *
 * Every structure written by one thread and read by another keeps each
 * writer's fields on its own line, so that writes by one side never invalidate
 * the line the other side polls (false sharing).  LF_CACHELINE is 64 on every
 * x86-64 and most arm64 parts; the adjacent-line prefetcher of Intel cores pulls
 * pairs of lines, which is why LF_DESTRUCTIVE is 128 where it matters most.
 */
#ifndef LF_CACHELINE_H
#define LF_CACHELINE_H

#include <stddef.h>

#define LF_CACHELINE   64
#define LF_DESTRUCTIVE 128   /* spatial prefetcher pairs lines: keep producer/consumer this far apart */

/* Align a member or object to a cache line. */
#define LF_ALIGNED __attribute__((aligned(LF_CACHELINE)))

/* Pad the rest of a cache line after `used` bytes: LF_PAD(pad0, sizeof(uint64_t)). */
#define LF_PAD(name, used) char name[LF_CACHELINE - ((used) % LF_CACHELINE)]

/* Assert at compile time that a member starts its own cache line. */
#define LF_ASSERT_OWN_LINE(type, member) \
	_Static_assert(offsetof(type, member) % LF_CACHELINE == 0, #type "." #member " must start a cache line")

/* The cache line (index within the object) of a member's first / last byte. */
#define LF_FIRST_LINE(type, member) (offsetof(type, member) / LF_CACHELINE)
#define LF_LAST_LINE(type, member) \
	((offsetof(type, member) + sizeof(((type *)0)->member) - 1) / LF_CACHELINE)

/* Assert that members a and b (a declared first) share no cache line, in an
 * object aligned to one: what different threads write stays apart.  Write
 * one per pair of neighbouring blocks with different writers, so that
 * dropping an LF_ALIGNED or moving a field across the boundary fails the build. */
#define LF_ASSERT_APART(type, a, b)                                              \
	_Static_assert(_Alignof(type) >= LF_CACHELINE &&                           \
		       LF_LAST_LINE(type, a) < LF_FIRST_LINE(type, b),             \
		       #type ": " #a " and " #b " must not share a cache line")

/* Assert that members a .. b (a declared first) lie on one cache line: what
 * one thread reads together costs one miss. */
#define LF_ASSERT_ONE_LINE(type, a, b)                                           \
	_Static_assert(_Alignof(type) >= LF_CACHELINE &&                           \
		       LF_FIRST_LINE(type, a) == LF_LAST_LINE(type, b),            \
		       #type ": " #a " .. " #b " must lie on one cache line")

#endif
