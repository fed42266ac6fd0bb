/* tests/test_fence_storage.c — fence storage pages and adapter caps
 * (seed native-gpu-fence, "Physical memory storage for current and monitored
 * fence values", "Querying native fence feature enablement in OS"). */
#include <string.h>
#include <unistd.h>

#include "tests/fb_test.h"
#include "tests/fence_test_util.h"

static struct os_adapter *storage_adapter(uint32_t cv_stride, uint32_t mv_stride, enum hw_storage_loc loc)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.caps.cv_stride = cv_stride;
	cfg.caps.mv_stride = mv_stride;
	cfg.caps.storage = loc;
	char err[256];
	struct os_adapter *a;
	if (os_adapter_create(&cfg, &a, err, sizeof(err)))
		fail_msg("%s", err);
	return a;
}

/* "packed in the same memory page ... according to the stride values" */
static void nonshareable_fences_packed_by_stride(void **state)
{
	const uint32_t strides[][2] = { { 8, 8 }, { 64, 64 }, { 8, 256 }, { 4096, 64 } };
	for (size_t k = 0; k < 4; k++) {
		struct os_adapter *a = storage_adapter(strides[k][0], strides[k][1], HW_STORAGE_SYSTEM);
		struct os_fence *f[4];
		for (int i = 0; i < 4; i++)
			assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f[i]), 0);
		for (int i = 1; i < 4; i++) {
			struct hw_fence *x = os_fence_hw(f[i - 1]), *y = os_fence_hw(f[i]);
			if (strides[k][0] < HW_PAGE_SIZE)
				assert_int_equal(hw_fence_cv_distance(x, y), strides[k][0]);
			assert_int_equal((char *)y->mv - (char *)x->mv, strides[k][1]);
		}
		/* CurrentValue and MonitoredValue in separate locations (separate pages) */
		for (int i = 0; i < 4; i++) {
			struct hw_fence *h = os_fence_hw(f[i]);
			assert_true((uintptr_t)h->cv / HW_PAGE_SIZE != (uintptr_t)h->mv / HW_PAGE_SIZE);
		}
		fbt_down(a);
	}
}

/* "Fence objects that are shareable have their current and monitored values
 * placed in memory pages that aren't shared with other fence objects." */
static void shareable_fences_get_own_pages(void **state)
{
	struct os_adapter *a = storage_adapter(8, 8, HW_STORAGE_SYSTEM);
	struct os_fence *packed, *shared1, *shared2;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &packed), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, OS_FENCE_SHARED, &shared1), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, OS_FENCE_SHARED, &shared2), 0);
	uintptr_t pages[6] = {
		(uintptr_t)os_fence_hw(packed)->cv / HW_PAGE_SIZE, (uintptr_t)os_fence_hw(packed)->mv / HW_PAGE_SIZE,
		(uintptr_t)os_fence_hw(shared1)->cv / HW_PAGE_SIZE, (uintptr_t)os_fence_hw(shared1)->mv / HW_PAGE_SIZE,
		(uintptr_t)os_fence_hw(shared2)->cv / HW_PAGE_SIZE, (uintptr_t)os_fence_hw(shared2)->mv / HW_PAGE_SIZE,
	};
	for (int i = 0; i < 6; i++)
		for (int j = i + 1; j < 6; j++)
			assert_true(pages[i] != pages[j]);
	fbt_down(a);
}

/* Freed packed slots are reused; values start at the initial value, MV at UINT64_MAX. */
static void slots_reused_and_initialized(void **state)
{
	struct os_adapter *a = storage_adapter(64, 64, HW_STORAGE_LOCAL);
	struct os_fence *f, *g;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 5, 0, &f), 0);
	_Atomic uint64_t *cv = os_fence_hw(f)->cv;
	assert_true(os_fence_hw(f)->local);
	os_fence_destroy(f);
	os_adapter_quiesce(a);     /* storage is freed after a grace period */
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 9, 0, &g), 0);
	assert_ptr_equal(os_fence_hw(g)->cv, cv);
	assert_true(os_fence_value(g) == 9);
	assert_true(*os_fence_hw(g)->mv == UINT64_MAX);
	fbt_down(a);
}

static void expect_reject(struct os_config *cfg, const char *needle)
{
	char err[256] = "";
	struct os_adapter *a = NULL;
	assert_int_equal(os_adapter_create(cfg, &a, err, sizeof(err)), -EINVAL);
	assert_null(a);
	if (!strstr(err, needle))
		fail_msg("error \"%s\" does not name \"%s\"", err, needle);
}

/* Bad caps fail adapter creation with a one-line reason naming the bad cap. */
static void bad_caps_rejected(void **state)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.caps.cv_stride = 12;
	expect_reject(&cfg, "cv_stride");
	os_config_default(&cfg);
	cfg.caps.mv_stride = 8192;
	expect_reject(&cfg, "mv_stride");
	os_config_default(&cfg);
	cfg.caps.engines = 0;
	expect_reject(&cfg, "engines");
	os_config_default(&cfg);
	cfg.caps.no_64bit_atomics = true;          /* with native_fence */
	expect_reject(&cfg, "no_64bit_atomics");
	os_config_default(&cfg);
	cfg.native_fence_enabled = false;          /* KMD advertises, OS did not enable */
	expect_reject(&cfg, "DXGK_FEATURE_NATIVE_FENCE");
	os_config_default(&cfg);
	cfg.caps.storage = HW_STORAGE_LOCAL;
	cfg.caps.numa_node = 4096;
	expect_reject(&cfg, "numa_node");
}

/* Native fence creation on an adapter without the feature falls back to monitored fences. */
static void native_disabled_falls_back_to_monitored(void **state)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.caps.native_fence = false;
	cfg.native_fence_enabled = false;
	char err[256];
	struct os_adapter *a;
	assert_int_equal(os_adapter_create(&cfg, &a, err, sizeof(err)), 0);
	assert_false(os_adapter_native(a));
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f), 0);
	assert_false(os_fence_is_native(f));
	assert_false(os_fence_hw(f)->native);
	fbt_down(a);
}

/* An adapter destroyed right after it started: the interrupt thread may be
 * between its stop check and its park when the stop comes; the kick must not
 * be lost (a hang here is the bug; the alarm turns it into a failure). */
static void start_destroy_never_hangs(void **state)
{
	alarm(60);
	for (int i = 0; i < 1000; i++) {
		struct os_config cfg;
		os_config_default(&cfg);
		fbt_down(fbt_adapter(&cfg));
	}
	alarm(0);
}

FB_TEST_MAIN(cmocka_unit_test(start_destroy_never_hangs),
	     cmocka_unit_test(nonshareable_fences_packed_by_stride),
	     cmocka_unit_test(shareable_fences_get_own_pages),
	     cmocka_unit_test(slots_reused_and_initialized),
	     cmocka_unit_test(bad_caps_rejected),
	     cmocka_unit_test(native_disabled_falls_back_to_monitored))
