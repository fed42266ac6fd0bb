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

#endif
