/* tests/test_os_queue.c — the queue-creation contract of os_queue_create and
 * hw_queue_create: 0 and the queue, or -errno naming why (and *out left
 * alone), the convention of every other create in the model. */
#include "tests/fb_test.h"
#include "tests/fence_test_util.h"

static void queue_create_says_why_it_refuses(void **state)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.caps.engines = 2;
	struct os_adapter *a = fbt_adapter(&cfg);
	struct os_queue *const sentinel = (struct os_queue *)&cfg;
	struct os_queue *q = sentinel;

	assert_int_equal(os_queue_create(a, 2, 64, &q), -EINVAL);    /* no engine 2 */
	assert_ptr_equal(q, sentinel);
	assert_int_equal(os_queue_create(a, 0, 3, &q), -EINVAL);     /* ring not a power of two */
	assert_ptr_equal(q, sentinel);

	struct os_queue *first = NULL;
	unsigned made = 0;
	int rc;
	while ((rc = os_queue_create(a, made % 2, 4, &q)) == 0) {
		assert_ptr_not_equal(q, sentinel);
		if (!first)
			first = q;
		q = sentinel;
		made++;
		assert_true(made <= 1000);
	}
	assert_int_equal(rc, -ENOSPC);
	assert_ptr_equal(q, sentinel);
	assert_int_equal(made, 64);                                   /* OS_MAX_QUEUES */

	/* a queue that was made runs its commands */
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f), 0);
	fbt_signal_gpu(first, f, 7);
	assert_true(fbt_eventually(os_fence_value(f) == 7));
	os_adapter_destroy(a);
}

FB_TEST_MAIN(cmocka_unit_test(queue_create_says_why_it_refuses))
