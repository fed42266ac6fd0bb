/* tests/test_feature_query.c — seed native-gpu-fence, "Querying native fence
 * feature enablement in OS" and "DDIs to query native fence feature
 * enablement": the KMD's IsFeatureEnabled (DXGKARGCB_ISFEATUREENABLED2:
 * Enabled + Version), QueryFeatureInterface for the negotiated version, and
 * the DXGKCB_FEATURE_NATIVEFENCE_CAPS_1 table's GetOSCaps, with two broken
 * KMDs the OS catches. */
#include <errno.h>
#include <string.h>

#include "tests/fb_test.h"
#include "tests/fence_test_util.h"

static struct os_adapter *feature_adapter(const struct os_config *cfg)
{
	char err[256];
	struct os_adapter *a;
	if (os_adapter_create(cfg, &a, err, sizeof(err)))
		fail_msg("%s", err);
	return a;
}

static void expect_init_fails(const struct os_config *cfg, const char *needle)
{
	char err[256] = "";
	struct os_adapter *a = NULL;
	assert_int_equal(os_adapter_create(cfg, &a, err, sizeof(err)), -EINVAL);
	if (!strstr(err, needle))
		fail_msg("error '%s' lacks '%s'", err, needle);
}

/* "KMD's implementation must query whether the OS has enabled the
 * DXGK_FEATURE_NATIVE_FENCE feature before advertising native fence support":
 * the sample's order, IsFeatureEnabled, QueryFeatureInterface, GetOSCaps, and
 * the FEATURE_STATE cache it fills. */
static void isfeatureenabled2_then_queryfeatureinterface_then_getoscaps(void **state)
{
	struct os_config cfg;
	os_config_default(&cfg);
	struct os_adapter *a = feature_adapter(&cfg);
	struct os_feature_state st;
	os_adapter_feature_state(a, &st);
	assert_true(st.NativeFenceEnabled);
	assert_int_equal(st.NativeFenceVersion, OS_NATIVE_FENCE_VERSION_1);
	assert_true(st.NativeFenceOSCaps1.SupportOptimizedDefaultFenceType);
	assert_true(st.NativeFenceOSCaps1.SupportIntraGpuFenceType);
	assert_int_equal(st.ncalls, 3);
	assert_int_equal(st.calls[0], OS_FCALL_IS_FEATURE_ENABLED);
	assert_int_equal(st.calls[1], OS_FCALL_QUERY_FEATURE_INTERFACE);
	assert_int_equal(st.calls[2], OS_FCALL_GET_OS_CAPS);
	assert_true(os_adapter_native(a));
	fbt_down(a);
}

/* Not enabled: Enabled false, Version 0; the KMD queries no interface
 * ("if (FeatureResult.Enabled)") and advertises nothing native. */
static void isfeatureenabled2_not_enabled_no_interface_query(void **state)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.native_fence_enabled = false;
	cfg.caps.native_fence = false;
	struct os_adapter *a = feature_adapter(&cfg);
	struct os_isfeatureenabled2 args = { .FeatureId = OS_FEATURE_NATIVE_FENCE };
	assert_int_equal(os_feature_is_enabled(a, &args), 0);
	assert_false(args.Result.Enabled);
	assert_int_equal(args.Result.Version, 0);
	struct os_feature_nativefence_1 iface = { 0 };
	struct os_queryfeatureinterface q = { OS_FEATURE_NATIVE_FENCE, &iface, sizeof(iface), 1 };
	assert_int_equal(os_feature_query_interface(a, &q), -ENOTSUP);
	assert_null(iface.GetOSCaps);
	struct os_feature_state st;
	os_adapter_feature_state(a, &st);
	assert_false(st.NativeFenceEnabled);
	assert_int_equal(st.NativeFenceVersion, 0);
	/* the KMD's own initialization: one IsFeatureEnabled, no QueryFeatureInterface */
	assert_int_equal(st.calls[0], OS_FCALL_IS_FEATURE_ENABLED);
	assert_int_equal(st.calls[1], OS_FCALL_IS_FEATURE_ENABLED);   /* the test's call above */
	assert_false(os_adapter_native(a));
	fbt_down(a);
}

/* "QFIArgs.Version = FeatureResult.Version": the interface is given for the
 * negotiated version only, and only into a table large enough; a KMD that
 * implements no native fence version gets Enabled false. */
static void queryfeatureinterface_negotiated_version_only(void **state)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.native_fence_kmd_version = 3;     /* newer KMD: the OS negotiates its own version 1 */
	struct os_adapter *a = feature_adapter(&cfg);
	struct os_isfeatureenabled2 args = { .FeatureId = OS_FEATURE_NATIVE_FENCE };
	assert_int_equal(os_feature_is_enabled(a, &args), 0);
	assert_true(args.Result.Enabled);
	assert_int_equal(args.Result.Version, OS_NATIVE_FENCE_VERSION_1);
	struct os_feature_nativefence_1 iface = { 0 };
	struct os_queryfeatureinterface q = { OS_FEATURE_NATIVE_FENCE, &iface, sizeof(iface), 2 };
	assert_int_equal(os_feature_query_interface(a, &q), -ENOTSUP);
	q.Version = 1;
	q.InterfaceSize = sizeof(iface) - 1;
	assert_int_equal(os_feature_query_interface(a, &q), -EINVAL);
	assert_null(iface.GetOSCaps);
	q.InterfaceSize = sizeof(iface);
	assert_int_equal(os_feature_query_interface(a, &q), 0);
	assert_non_null(iface.GetOSCaps);
	struct os_nativefence_caps_1 caps;
	memset(&caps, 0xff, sizeof(caps));
	assert_int_equal(iface.GetOSCaps(iface.Context, &caps), 0);
	assert_true(caps.SupportOptimizedDefaultFenceType);
	assert_true(caps.SupportIntraGpuFenceType);
	struct os_isfeatureenabled2 other = { .FeatureId = (enum os_feature_id)99 };
	assert_int_equal(os_feature_is_enabled(a, &other), -EINVAL);
	fbt_down(a);

	os_config_default(&cfg);
	cfg.native_fence_kmd_version = 0;     /* a KMD without the feature */
	cfg.caps.native_fence = false;
	a = feature_adapter(&cfg);
	struct os_feature_state st;
	os_adapter_feature_state(a, &st);
	assert_false(st.NativeFenceEnabled);
	assert_int_equal(st.ncalls, 1);
	fbt_down(a);
}

/* DXGKARGCB_FEATURE_NATIVEFENCE_CAPS_1.SupportOptimizedDefaultFenceType: "KMD
 * should query this OS cap and determine whether the OS allows KMD to specify
 * a local memory SupportedSegmentSet": without it, native fences asked for in
 * local memory are placed in system memory. */
static void getoscaps_optimized_default_fence_type_decides_local_memory(void **state)
{
	for (int support = 0; support < 2; support++) {
		struct os_config cfg;
		os_config_default(&cfg);
		cfg.caps.storage = HW_STORAGE_LOCAL;
		cfg.native_fence_os_caps.SupportOptimizedDefaultFenceType = support;
		struct os_adapter *a = feature_adapter(&cfg);
		struct os_fence *f;
		assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f), 0);
		assert_true(os_fence_is_native(f));
		assert_int_equal(os_fence_hw(f)->local, support);
		fbt_down(a);
	}
}

/* Broken KMDs: one that advertises native fence support without asking
 * IsFeatureEnabled, one that asks QueryFeatureInterface for a version other
 * than the negotiated one ("We should always succeed getting an interface
 * from a successfully negotiated feature + version"): initialization fails. */
static void broken_kmd_feature_query_fails_adapter_initialization(void **state)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.fault = OS_FAULT_KMD_NO_FEATURE_QUERY;
	expect_init_fails(&cfg, "without IsFeatureEnabled");
	cfg.caps.native_fence = false;        /* not advertising: nothing to refuse */
	fbt_down(feature_adapter(&cfg));
	os_config_default(&cfg);
	cfg.fault = OS_FAULT_KMD_QFI_VERSION;
	expect_init_fails(&cfg, "QueryFeatureInterface");
	os_config_default(&cfg);
	cfg.native_fence_enabled = false;     /* KMD advertises, OS did not enable */
	expect_init_fails(&cfg, "DXGK_FEATURE_NATIVE_FENCE");
}

FB_TEST_MAIN(cmocka_unit_test(isfeatureenabled2_then_queryfeatureinterface_then_getoscaps),
	     cmocka_unit_test(isfeatureenabled2_not_enabled_no_interface_query),
	     cmocka_unit_test(queryfeatureinterface_negotiated_version_only),
	     cmocka_unit_test(getoscaps_optimized_default_fence_type_decides_local_memory),
	     cmocka_unit_test(broken_kmd_feature_query_fails_adapter_initialization))
