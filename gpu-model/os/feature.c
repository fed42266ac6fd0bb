/* gpu-model/os/feature.c — feature enablement (seed native-gpu-fence,
 * "Querying native fence feature enablement in OS"): the OS's
 * IsFeatureEnabled and QueryFeatureInterface, the DXGKCBINT_FEATURE_NATIVEFENCE_1
 * table with GetOSCaps, and the KMD's initialization query that calls them in
 * the order of the seed's sample driver code.  Runs once, on the thread
 * creating the adapter, before the caps are checked.  Calls nothing outside os/.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gpu-model/os/os_internal.h"

static void fcall(struct os_adapter *a, enum os_feature_call c)
{
	if (a->feature.ncalls < OS_FEATURE_CALLS_MAX)
		a->feature.calls[a->feature.ncalls] = c;
	a->feature.ncalls++;
}

static uint16_t negotiated_version(const struct os_adapter *a)
{
	if (!a->cfg.native_fence_enabled || a->cfg.native_fence_kmd_version == 0)
		return 0;
	return a->cfg.native_fence_kmd_version < OS_NATIVE_FENCE_VERSION_1 ? a->cfg.native_fence_kmd_version
									    : OS_NATIVE_FENCE_VERSION_1;
}

int os_feature_is_enabled(struct os_adapter *a, struct os_isfeatureenabled2 *args)
{
	fcall(a, OS_FCALL_IS_FEATURE_ENABLED);
	memset(&args->Result, 0, sizeof(args->Result));
	if (args->FeatureId != OS_FEATURE_NATIVE_FENCE)
		return -EINVAL;
	a->feature_queried = true;
	args->Result.Version = negotiated_version(a);
	args->Result.Enabled = args->Result.Version != 0;
	return 0;
}

/* DXGKCB_FEATURE_NATIVEFENCE_CAPS_1: the OS's native fence capabilities. */
static int get_os_caps(const void *ctx, struct os_nativefence_caps_1 *args)
{
	const struct os_adapter *a = ctx;
	fcall((struct os_adapter *)a, OS_FCALL_GET_OS_CAPS);
	*args = a->cfg.native_fence_os_caps;
	return 0;
}

int os_feature_query_interface(struct os_adapter *a, struct os_queryfeatureinterface *args)
{
	fcall(a, OS_FCALL_QUERY_FEATURE_INTERFACE);
	if (args->FeatureId != OS_FEATURE_NATIVE_FENCE || !args->Interface)
		return -EINVAL;
	uint16_t v = negotiated_version(a);
	if (v == 0 || args->Version != v)
		return -ENOTSUP;
	if (args->InterfaceSize < sizeof(struct os_feature_nativefence_1))
		return -EINVAL;
	struct os_feature_nativefence_1 *t = args->Interface;
	t->Context = a;
	t->GetOSCaps = get_os_caps;
	return 0;
}

void os_adapter_feature_state(const struct os_adapter *a, struct os_feature_state *out)
{
	*out = a->feature;
}

/* The KMD's driver initialization: the seed's sample, step for step. */
int os_kmd_query_features(struct os_adapter *a, char *err, size_t errlen)
{
	struct os_feature_state *st = &a->feature;
	if (a->cfg.fault == OS_FAULT_KMD_NO_FEATURE_QUERY)
		return 0;   /* broken: advertises whatever its caps say, unasked */
	struct os_isfeatureenabled2 args = { .FeatureId = OS_FEATURE_NATIVE_FENCE };
	bool enabled = false;
	uint16_t version = 0;
	if (os_feature_is_enabled(a, &args) == 0) {
		enabled = args.Result.Enabled;
		version = args.Result.Version;
	}
	st->NativeFenceEnabled = enabled;
	if (!enabled)
		return 0;
	struct os_feature_nativefence_1 iface = { 0 };
	struct os_queryfeatureinterface q = {
		.FeatureId = OS_FEATURE_NATIVE_FENCE,
		.Interface = &iface,
		.InterfaceSize = sizeof(iface),
		.Version = a->cfg.fault == OS_FAULT_KMD_QFI_VERSION ? (uint16_t)(version + 1) : version,
	};
	int rc = os_feature_query_interface(a, &q);
	if (rc) {
		/* the sample's NT_ASSERT(FALSE): a negotiated feature + version always has its interface */
		snprintf(err, errlen, "QueryFeatureInterface(DXGK_FEATURE_NATIVE_FENCE, version %u) failed (negotiated version %u): adapter initialization fails",
			 (unsigned)q.Version, (unsigned)version);
		return -EINVAL;
	}
	st->NativeFenceVersion = version;
	rc = iface.GetOSCaps(iface.Context, &st->NativeFenceOSCaps1);
	if (rc) {
		snprintf(err, errlen, "GetOSCaps failed: adapter initialization fails");
		return -EINVAL;
	}
	return 0;
}
