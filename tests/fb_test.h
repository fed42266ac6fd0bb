/* tests/fb_test.h — what every fencebench test file includes.
 *
 * Tests use cmocka (Debian's libcmocka-dev).  Each tests/test_*.c is one binary:
 *
 *     static void ring_fifo_order(void **state) { ... assert_int_equal(...); }
 *     FB_TEST_MAIN(cmocka_unit_test(ring_fifo_order), ...)
 *
 * Skip with a stated reason: fb_skip("no hardware counters on this machine").
 * Long variants read FB_SOAK=1 from the environment (fb_soak()).
 */
#ifndef FB_TEST_H
#define FB_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#define FB_TEST_MAIN(...)                                                     \
	int main(void)                                                        \
	{                                                                     \
		const struct CMUnitTest fb_tests__[] = { __VA_ARGS__ };       \
		return cmocka_run_group_tests_name(__FILE__, fb_tests__, NULL, NULL); \
	}

/* Skip the current test, saying why on stdout. */
#define fb_skip(reason)                                                       \
	do {                                                                  \
		printf("[  SKIP    ] %s: %s\n", __func__, (reason));          \
		skip();                                                       \
	} while (0)

/* True when the long soak variants were asked for (FB_SOAK=1). */
static inline int fb_soak(void)
{
	const char *s = getenv("FB_SOAK");
	return s && *s && *s != '0';
}

#endif
