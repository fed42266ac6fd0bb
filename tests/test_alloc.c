/* tests/test_alloc.c — lf_alloc honours alignment and zeroing; sdallocx accepts what it returned. */
#include "tests/fb_test.h"
#include "lockfree/alloc.h"

static void alloc_aligned_and_zeroed(void **state)
{
	for (size_t align = 8; align <= 4096; align *= 2) {
		unsigned char *p = lf_alloc(3 * align, align);
		assert_int_equal((uintptr_t)p % align, 0);
		for (size_t i = 0; i < 3 * align; i++)
			assert_int_equal(p[i], 0);
		lf_free(p, 3 * align, align);
	}
}

FB_TEST_MAIN(cmocka_unit_test(alloc_aligned_and_zeroed))
