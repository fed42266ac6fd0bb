#include "lockfree/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lockfree/die.h"

#ifndef FB_SANITIZER
#include <jemalloc/jemalloc.h>
#endif

void *lf_alloc(size_t size, size_t align)
{
	void *p;
#ifdef FB_SANITIZER
	if (align < sizeof(void *))
		align = sizeof(void *);
	if (posix_memalign(&p, align, size ? size : 1))
		p = NULL;
	else
		memset(p, 0, size);
#else
	p = mallocx(size ? size : 1, MALLOCX_ALIGN(align) | MALLOCX_ZERO);
#endif
	if (!p)
		lf_die("out of memory allocating %zu bytes", size);
	return p;
}

void lf_free(void *p, size_t size, size_t align)
{
	if (!p)
		return;
#ifdef FB_SANITIZER
	(void)size;
	(void)align;
	free(p);
#else
	sdallocx(p, size ? size : 1, MALLOCX_ALIGN(align));
#endif
}

size_t lf_alloc_stats_allocated(void)
{
#ifdef FB_SANITIZER
	return 0;
#else
	uint64_t epoch = 1;
	size_t sz = sizeof(epoch), allocated = 0, len = sizeof(allocated);
	mallctl("epoch", &epoch, &sz, &epoch, sz);
	if (mallctl("stats.allocated", &allocated, &len, NULL, 0))
		return 0;
	return allocated;
#endif
}
