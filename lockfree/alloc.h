/* lockfree/alloc.h — the allocator of every hot-path object (waiter nodes, commands, fence pages).
 *
 * Release builds use jemalloc's mallocx/sdallocx (alignment, thread caches, stats).
 * Sanitizer builds (FB_SANITIZER) use the libc allocator, which ASan and TSan
 * intercept, so that use-after-free and races on recycled memory are seen.
 * All functions: any thread, non-blocking in the common case, never return NULL
 * (out of memory aborts with file:line: fencebench has nothing to fall back on).
 */
#ifndef LF_ALLOC_H
#define LF_ALLOC_H

#include <stddef.h>

/* Allocate `size` bytes aligned to `align` (a power of two), zeroed. */
void *lf_alloc(size_t size, size_t align);
/* Free what lf_alloc returned, passing the same size and alignment. NULL is ignored. */
void lf_free(void *p, size_t size, size_t align);
/* Bytes allocated through jemalloc in this process (0 in sanitizer builds). */
size_t lf_alloc_stats_allocated(void);

#endif
