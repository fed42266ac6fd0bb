/* benchmarks/vulkan/vk_device.c — the Vulkan loader, instance, device and
 * queues, opened at run time.  Contract in vk_device.h.
 *
 * Written from the Vulkan specification (1.3): "Initialization" (the
 * loader's vkGetInstanceProcAddr, vkCreateInstance), "Devices and Queues"
 * (physical devices, queue families, vkCreateDevice), "Synchronization and
 * Cache Control" (timeline semaphores, vkQueueSubmit2), and the loader's
 * documentation (LoaderInterfaceArchitecture.md: VK_DRIVER_FILES /
 * VK_ICD_FILENAMES choose the drivers).
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks/vulkan/vk_device.h"

#define BM_VK_LAYER "VK_LAYER_KHRONOS_validation"
/* `0 BM_VK_..._FNS(BM_VK_IS_NULL)`: true when an entry point is missing */
#define BM_VK_IS_NULL(f) || !vk->fn.f

/* ---- names ---- */

const char *bm_vk_result_name(VkResult r)
{
	switch (r) {
#define BM_VK_NAME(x) case x: return #x;
	BM_VK_NAME(VK_SUCCESS) BM_VK_NAME(VK_NOT_READY) BM_VK_NAME(VK_TIMEOUT) BM_VK_NAME(VK_INCOMPLETE)
	BM_VK_NAME(VK_ERROR_OUT_OF_HOST_MEMORY) BM_VK_NAME(VK_ERROR_OUT_OF_DEVICE_MEMORY)
	BM_VK_NAME(VK_ERROR_INITIALIZATION_FAILED) BM_VK_NAME(VK_ERROR_DEVICE_LOST)
	BM_VK_NAME(VK_ERROR_MEMORY_MAP_FAILED) BM_VK_NAME(VK_ERROR_LAYER_NOT_PRESENT)
	BM_VK_NAME(VK_ERROR_EXTENSION_NOT_PRESENT) BM_VK_NAME(VK_ERROR_FEATURE_NOT_PRESENT)
	BM_VK_NAME(VK_ERROR_INCOMPATIBLE_DRIVER) BM_VK_NAME(VK_ERROR_TOO_MANY_OBJECTS)
	BM_VK_NAME(VK_ERROR_FORMAT_NOT_SUPPORTED) BM_VK_NAME(VK_ERROR_UNKNOWN)
#undef BM_VK_NAME
	default: {
		static _Thread_local char b[32];
		snprintf(b, sizeof(b), "VkResult %d", (int)r);
		return b;
	}
	}
}

int bm_vk_fail(VkResult r, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: %s", what, bm_vk_result_name(r));
	if (r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY)
		return -ENOMEM;
	return r == VK_TIMEOUT ? -ETIMEDOUT : -EIO;
}

void bm_vk_version_string(uint32_t v, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%u.%u", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v));
}

void bm_vk_driver_version(const struct bm_vk_identity *id, char *buf, size_t len)
{
	uint32_t v = id->driver_version;
	if (id->vendor_id == 0x10de)   /* NVIDIA: 10.8.8.6 bits */
		snprintf(buf, len, "%u.%u.%u", v >> 22, (v >> 14) & 0xffu, (v >> 6) & 0xffu);
	else
		bm_vk_version_string(v, buf, len);
}

const char *bm_vk_type_name(VkPhysicalDeviceType t)
{
	switch (t) {
	case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
	case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
	case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
	case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
	default: return "other";
	}
}

/* ---- validation messages ---- */

/* Count the message; keep the first one's text.  Any thread (the layer
 * reports from the thread that made the call). */
static VKAPI_ATTR VkBool32 VKAPI_CALL bm_vk_on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
						       VkDebugUtilsMessageTypeFlagsEXT types,
						       const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
	struct bm_vk *vk = user;
	/* a count; orders nothing */
	atomic_fetch_add_explicit(&vk->messages, 1, memory_order_relaxed);
	if (!atomic_exchange_explicit(&vk->first_claimed, true, memory_order_relaxed)) {
		snprintf(vk->first, sizeof(vk->first), "%s", data && data->pMessage ? data->pMessage : "?");
		vk->first[strcspn(vk->first, "\n")] = '\0';
		/* publish the text: pairs with bm_vk_first_message's acquire */
		atomic_store_explicit(&vk->first_ready, true, memory_order_release);
	}
	return VK_FALSE;   /* the call goes on, as the specification requires */
}

uint64_t bm_vk_messages(const struct bm_vk *vk)
{
	return atomic_load_explicit(&vk->messages, memory_order_relaxed);
}

const char *bm_vk_first_message(const struct bm_vk *vk)
{
	/* pairs with the messenger's release store after its copy */
	return atomic_load_explicit(&vk->first_ready, memory_order_acquire) ? vk->first : "";
}

static void bm_vk_messenger_info(struct bm_vk *vk, VkDebugUtilsMessengerCreateInfoEXT *mi)
{
	*mi = (VkDebugUtilsMessengerCreateInfoEXT){
		.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
		.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
				   VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
		.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
			       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
			       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
		.pfnUserCallback = bm_vk_on_message,
		.pUserData = vk,
	};
}

/* ---- the loader and the instance ---- */

static int bm_vk_load_loader(struct bm_vk *vk, char *err, size_t errlen)
{
	vk->lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!vk->lib) {
		snprintf(err, errlen, "no Vulkan loader on this machine (%s)", dlerror());
		return -ENOENT;
	}
	vk->fn.vkGetInstanceProcAddr = (PFN_vkGetInstanceProcAddr)dlsym(vk->lib, "vkGetInstanceProcAddr");
	if (!vk->fn.vkGetInstanceProcAddr) {
		snprintf(err, errlen, "the Vulkan loader libvulkan.so.1 has no vkGetInstanceProcAddr");
		return -ENOENT;
	}
#define BM_VK_GLOBAL(f) vk->fn.f = (PFN_##f)vk->fn.vkGetInstanceProcAddr(VK_NULL_HANDLE, #f);
	BM_VK_GLOBAL_FNS(BM_VK_GLOBAL)
#undef BM_VK_GLOBAL
	if (!vk->fn.vkEnumerateInstanceVersion || !vk->fn.vkCreateInstance) {
		snprintf(err, errlen, "the Vulkan loader is 1.0 (no vkEnumerateInstanceVersion): Vulkan 1.2 is needed");
		return -ENODEV;
	}
	return 0;
}

static bool bm_vk_has_layer(struct bm_vk *vk)
{
	uint32_t n = 0;
	if (vk->fn.vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || !n)
		return false;
	VkLayerProperties *l = calloc(n, sizeof(*l));
	bool found = false;
	if (l && vk->fn.vkEnumerateInstanceLayerProperties(&n, l) == VK_SUCCESS)
		for (uint32_t i = 0; i < n && !found; i++)
			found = !strcmp(l[i].layerName, BM_VK_LAYER);
	free(l);
	return found;
}

/* The instance's failure: no driver at all is -ENODEV, no layer -ENOENT. */
static int bm_vk_instance_fail(VkResult r, char *err, size_t errlen)
{
	if (r == VK_ERROR_INCOMPATIBLE_DRIVER) {
		snprintf(err, errlen, "no Vulkan driver found or none loaded (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER; "
			 "VK_LOADER_DEBUG=driver shows why)");
		return -ENODEV;
	}
	if (r == VK_ERROR_LAYER_NOT_PRESENT) {
		snprintf(err, errlen, "the Vulkan validation layer %s is not installed (vulkan-validationlayers)",
			 BM_VK_LAYER);
		return -ENOENT;
	}
	return bm_vk_fail(r, "vkCreateInstance", err, errlen);
}

static int bm_vk_make_instance(struct bm_vk *vk, char *err, size_t errlen)
{
	uint32_t loader = 0;
	if (vk->fn.vkEnumerateInstanceVersion(&loader) != VK_SUCCESS || loader < VK_API_VERSION_1_2) {
		snprintf(err, errlen, "the Vulkan loader is too old (Vulkan 1.2 is needed)");
		return -ENODEV;
	}
	if (vk->validating && !bm_vk_has_layer(vk))
		return bm_vk_instance_fail(VK_ERROR_LAYER_NOT_PRESENT, err, errlen);
	VkApplicationInfo app = {
		.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "fencebench",
		.apiVersion = loader >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : VK_API_VERSION_1_2,
	};
	VkDebugUtilsMessengerCreateInfoEXT mi;
	bm_vk_messenger_info(vk, &mi);
	/* synchronization validation on top of the layer's default checks */
	static const VkValidationFeatureEnableEXT enables[] = {
		VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT,
	};
	VkValidationFeaturesEXT vf = {
		.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT, .pNext = &mi,
		.enabledValidationFeatureCount = 1, .pEnabledValidationFeatures = enables,
	};
	static const char *const layers[] = { BM_VK_LAYER };
	static const char *const exts[] = { VK_EXT_DEBUG_UTILS_EXTENSION_NAME, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME };
	VkInstanceCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app,
		.pNext = vk->validating ? &vf : NULL,
		.enabledLayerCount = vk->validating ? 1 : 0, .ppEnabledLayerNames = layers,
		.enabledExtensionCount = vk->validating ? 2 : 0, .ppEnabledExtensionNames = exts,
	};
	VkResult r = vk->fn.vkCreateInstance(&ci, NULL, &vk->instance);
	if (r != VK_SUCCESS) {
		vk->instance = VK_NULL_HANDLE;
		return bm_vk_instance_fail(r, err, errlen);
	}
#define BM_VK_INST(f) vk->fn.f = (PFN_##f)vk->fn.vkGetInstanceProcAddr(vk->instance, #f);
	BM_VK_INSTANCE_FNS(BM_VK_INST)
#undef BM_VK_INST
	if (0 BM_VK_INSTANCE_FNS(BM_VK_IS_NULL)) {
		snprintf(err, errlen, "the Vulkan loader lacks a Vulkan 1.1 instance function");
		return -ENODEV;
	}
	if (!vk->validating)
		return 0;
	vk->fn.vkCreateDebugUtilsMessengerEXT = (PFN_vkCreateDebugUtilsMessengerEXT)vk->fn.vkGetInstanceProcAddr(
		vk->instance, "vkCreateDebugUtilsMessengerEXT");
	vk->fn.vkDestroyDebugUtilsMessengerEXT = (PFN_vkDestroyDebugUtilsMessengerEXT)vk->fn.vkGetInstanceProcAddr(
		vk->instance, "vkDestroyDebugUtilsMessengerEXT");
	if (!vk->fn.vkCreateDebugUtilsMessengerEXT || !vk->fn.vkDestroyDebugUtilsMessengerEXT) {
		snprintf(err, errlen, "VK_EXT_debug_utils enabled but its functions are missing");
		return -ENODEV;
	}
	BM_VK_CHECK(vk->fn.vkCreateDebugUtilsMessengerEXT(vk->instance, &mi, NULL, &vk->messenger));
	return 0;
}

/* ---- the physical device ---- */

/* The index to use among n devices: o->device, or with -1 the first that
 * is not a CPU implementation (else 0). */
static uint32_t bm_vk_choose(struct bm_vk *vk, const struct bm_vk_opts *o, const VkPhysicalDevice *pd, uint32_t n)
{
	if (o->device >= 0)
		return (uint32_t)o->device;
	for (uint32_t i = 0; i < n; i++) {
		VkPhysicalDeviceProperties2 p = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2 };
		vk->fn.vkGetPhysicalDeviceProperties2(pd[i], &p);
		if (p.properties.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU)
			return i;
	}
	return 0;
}

static int bm_vk_pick(struct bm_vk *vk, const struct bm_vk_opts *o, char *err, size_t errlen)
{
	uint32_t n = 0;
	BM_VK_CHECK(vk->fn.vkEnumeratePhysicalDevices(vk->instance, &n, NULL));
	if (!n) {
		snprintf(err, errlen, "no Vulkan device found (the loader's drivers report none)");
		return -ENODEV;
	}
	VkPhysicalDevice *pd = calloc(n, sizeof(*pd));
	if (!pd)
		return -ENOMEM;
	VkResult r = vk->fn.vkEnumeratePhysicalDevices(vk->instance, &n, pd);
	uint32_t i = bm_vk_choose(vk, o, pd, n);
	if ((r == VK_SUCCESS || r == VK_INCOMPLETE) && i < n) {
		vk->phys = pd[i];
		vk->index = i;
	}
	free(pd);
	if (r != VK_SUCCESS && r != VK_INCOMPLETE)
		return bm_vk_fail(r, "vkEnumeratePhysicalDevices", err, errlen);
	if (!vk->phys) {
		snprintf(err, errlen, "Vulkan device %d: this machine has devices 0..%u", o->device, n - 1);
		return -ENODEV;
	}
	return 0;
}

static void bm_vk_identify(struct bm_vk *vk)
{
	VkPhysicalDeviceDriverProperties drv = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES };
	VkPhysicalDeviceProperties2 p = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &drv };
	vk->fn.vkGetPhysicalDeviceProperties2(vk->phys, &p);
	struct bm_vk_identity *id = &vk->id;
	snprintf(id->name, sizeof(id->name), "%s", p.properties.deviceName);
	id->vendor_id = p.properties.vendorID;
	id->device_id = p.properties.deviceID;
	id->driver_version = p.properties.driverVersion;
	id->api_version = p.properties.apiVersion;
	id->type = p.properties.deviceType;
	id->timestamp_period = p.properties.limits.timestampPeriod;
	id->driver_id = drv.driverID;
	snprintf(id->driver_name, sizeof(id->driver_name), "%s", drv.driverName);
	snprintf(id->driver_info, sizeof(id->driver_info), "%s", drv.driverInfo);
	vk->fn.vkGetPhysicalDeviceMemoryProperties(vk->phys, &vk->mem);
}

static bool bm_vk_has_device_ext(struct bm_vk *vk, const char *name)
{
	uint32_t n = 0;
	if (vk->fn.vkEnumerateDeviceExtensionProperties(vk->phys, NULL, &n, NULL) != VK_SUCCESS || !n)
		return false;
	VkExtensionProperties *e = calloc(n, sizeof(*e));
	bool found = false;
	if (e && vk->fn.vkEnumerateDeviceExtensionProperties(vk->phys, NULL, &n, e) == VK_SUCCESS)
		for (uint32_t i = 0; i < n && !found; i++)
			found = !strcmp(e[i].extensionName, name);
	free(e);
	return found;
}

/* Vulkan 1.2 with timeline semaphores, and synchronization2 (1.3 or the
 * KHR extension: *sync2_ext says which).  0 or -ENODEV. */
static int bm_vk_check_features(struct bm_vk *vk, bool *sync2_ext, char *err, size_t errlen)
{
	char v[32];
	bm_vk_version_string(vk->id.api_version, v, sizeof(v));
	*sync2_ext = vk->id.api_version < VK_API_VERSION_1_3;
	if (vk->id.api_version < VK_API_VERSION_1_2 ||
	    (*sync2_ext && !bm_vk_has_device_ext(vk, VK_KHR_SYNCHRONIZATION_2_EXTENSION_NAME))) {
		snprintf(err, errlen, "Vulkan device %s supports Vulkan %s: 1.2 with synchronization2 is needed",
			 vk->id.name, v);
		return -ENODEV;
	}
	VkPhysicalDeviceSynchronization2Features s2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES };
	VkPhysicalDeviceVulkan12Features f12 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .pNext = &s2 };
	VkPhysicalDeviceFeatures2 f = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f12 };
	vk->fn.vkGetPhysicalDeviceFeatures2(vk->phys, &f);
	if (!f12.timelineSemaphore || !s2.synchronization2) {
		snprintf(err, errlen, "Vulkan device %s lacks %s", vk->id.name,
			 !f12.timelineSemaphore ? "timeline semaphores" : "synchronization2");
		return -ENODEV;
	}
	return 0;
}

/* ---- queues ---- */

/* A: the first graphics+compute family, else the first with either.  B: a
 * second queue of A's family, else the first other family with compute. */
static int bm_vk_pick_queues(struct bm_vk *vk, char *err, size_t errlen)
{
	uint32_t n = 0;
	vk->fn.vkGetPhysicalDeviceQueueFamilyProperties(vk->phys, &n, NULL);
	VkQueueFamilyProperties *f = calloc(n ? n : 1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	vk->fn.vkGetPhysicalDeviceQueueFamilyProperties(vk->phys, &n, f);
	const VkQueueFlags gc = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
	uint32_t a = n, b = n;
	for (uint32_t i = 0; i < n && a == n; i++)
		if (f[i].queueCount && (f[i].queueFlags & gc) == gc)
			a = i;
	for (uint32_t i = 0; i < n && a == n; i++)
		if (f[i].queueCount && (f[i].queueFlags & gc))
			a = i;
	if (a == n) {
		free(f);
		snprintf(err, errlen, "Vulkan device %s has no graphics or compute queue", vk->id.name);
		return -ENODEV;
	}
	if (f[a].queueCount >= 2)
		b = a;
	for (uint32_t i = 0; i < n && b == n; i++)
		if (i != a && f[i].queueCount && (f[i].queueFlags & VK_QUEUE_COMPUTE_BIT))
			b = i;
	vk->queue[0] = (struct bm_vk_queue){ .family = a, .index = 0, .flags = f[a].queueFlags,
					     .timestamp_bits = f[a].timestampValidBits };
	vk->nqueues = b == n ? 1 : 2;
	vk->queue[1] = b == n ? vk->queue[0]
			      : (struct bm_vk_queue){ .family = b, .index = b == a ? 1 : 0, .flags = f[b].queueFlags,
						      .timestamp_bits = f[b].timestampValidBits };
	free(f);
	return 0;
}

/* VK_EXT_calibrated_timestamps with the device and CLOCK_MONOTONIC domains
 * (the host clock of every latency: lf_now_ns).  FENCEBENCH_VK_CALIBRATED=0
 * leaves it off: what a device without it gives (lavapipe before Mesa 23). */
static bool bm_vk_can_calibrate(struct bm_vk *vk)
{
	const char *env = getenv("FENCEBENCH_VK_CALIBRATED");
	if (env && !strcmp(env, "0"))
		return false;
	PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT domains =
		(PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT)vk->fn.vkGetInstanceProcAddr(
			vk->instance, "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT");
	if (!domains || !bm_vk_has_device_ext(vk, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME))
		return false;
	VkTimeDomainEXT d[16];
	uint32_t n = 16;
	VkResult r = domains(vk->phys, &n, d);
	bool dev = false, mono = false;
	for (uint32_t i = 0; (r == VK_SUCCESS || r == VK_INCOMPLETE) && i < n; i++) {
		dev |= d[i] == VK_TIME_DOMAIN_DEVICE_EXT;
		mono |= d[i] == VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
	}
	return dev && mono;
}

static int bm_vk_make_device(struct bm_vk *vk, bool sync2_ext, char *err, size_t errlen)
{
	static const float prio[2] = { 1.0f, 1.0f };
	struct bm_vk_queue *qa = &vk->queue[0], *qb = &vk->queue[1];
	bool one_family = vk->nqueues == 1 || qa->family == qb->family;
	VkDeviceQueueCreateInfo qci[2] = {
		{ .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = qa->family,
		  .queueCount = vk->nqueues == 2 && one_family ? 2 : 1, .pQueuePriorities = prio },
		{ .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = qb->family,
		  .queueCount = 1, .pQueuePriorities = prio },
	};
	VkPhysicalDeviceSynchronization2Features s2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES,
							.synchronization2 = VK_TRUE };
	VkPhysicalDeviceVulkan12Features f12 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
						 .pNext = &s2, .timelineSemaphore = VK_TRUE };
	const char *ext[2];
	uint32_t next = 0;
	if (sync2_ext)
		ext[next++] = VK_KHR_SYNCHRONIZATION_2_EXTENSION_NAME;
	bool calibrate = bm_vk_can_calibrate(vk);
	if (calibrate)
		ext[next++] = VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;
	VkDeviceCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &f12,
		.queueCreateInfoCount = one_family ? 1 : 2, .pQueueCreateInfos = qci,
		.enabledExtensionCount = next, .ppEnabledExtensionNames = ext,
	};
	BM_VK_CHECK(vk->fn.vkCreateDevice(vk->phys, &ci, NULL, &vk->dev));
#define BM_VK_DEV(f) vk->fn.f = (PFN_##f)vk->fn.vkGetDeviceProcAddr(vk->dev, #f);
	BM_VK_DEVICE_FNS(BM_VK_DEV)
#undef BM_VK_DEV
#define BM_VK_DEV2(f)                                                                       \
	vk->fn.f = (PFN_##f)vk->fn.vkGetDeviceProcAddr(vk->dev, #f);                        \
	if (!vk->fn.f)                                                                      \
		vk->fn.f = (PFN_##f)vk->fn.vkGetDeviceProcAddr(vk->dev, #f "KHR");
	BM_VK_SYNC2_FNS(BM_VK_DEV2)
#undef BM_VK_DEV2
	if (calibrate)
		vk->fn.vkGetCalibratedTimestampsEXT = (PFN_vkGetCalibratedTimestampsEXT)vk->fn.vkGetDeviceProcAddr(
			vk->dev, "vkGetCalibratedTimestampsEXT");
	if (0 BM_VK_DEVICE_FNS(BM_VK_IS_NULL) BM_VK_SYNC2_FNS(BM_VK_IS_NULL)) {
		snprintf(err, errlen, "Vulkan device %s: a device function is missing", vk->id.name);
		return -ENODEV;
	}
	vk->fn.vkGetDeviceQueue(vk->dev, qa->family, qa->index, &qa->q);
	vk->fn.vkGetDeviceQueue(vk->dev, qb->family, qb->index, &qb->q);
	return 0;
}

static int bm_vk_open_steps(struct bm_vk *vk, const struct bm_vk_opts *o, char *err, size_t errlen)
{
	int rc = bm_vk_load_loader(vk, err, errlen);
	if (!rc)
		rc = bm_vk_make_instance(vk, err, errlen);
	if (!rc)
		rc = bm_vk_pick(vk, o, err, errlen);
	if (rc)
		return rc;
	bm_vk_identify(vk);
	if (vk->id.type == VK_PHYSICAL_DEVICE_TYPE_CPU && !o->allow_cpu) {
		snprintf(err, errlen, "Vulkan device %u, %s (%s), is a CPU implementation, not a GPU", vk->index,
			 vk->id.name, vk->id.driver_name);
		return -EPERM;
	}
	bool sync2_ext;
	rc = bm_vk_check_features(vk, &sync2_ext, err, errlen);
	if (!rc)
		rc = bm_vk_pick_queues(vk, err, errlen);
	if (!rc)
		rc = bm_vk_make_device(vk, sync2_ext, err, errlen);
	return rc;
}

int bm_vk_open(struct bm_vk *vk, const struct bm_vk_opts *o, char *err, size_t errlen)
{
	memset(vk, 0, sizeof(*vk));
	const char *env = getenv("FENCEBENCH_VK_VALIDATE");
	vk->validating = o->validate || (env && !strcmp(env, "1"));
	int rc = bm_vk_open_steps(vk, o, err, errlen);
	if (rc)
		bm_vk_close(vk);
	return rc;
}

/* dl_iterate_phdr's callback: each loaded object's path into the list. */
static int bm_vk_list_one(struct dl_phdr_info *info, size_t size, void *data)
{
	struct { char **name; size_t n, max; } *l = data;
	if (info->dlpi_name && *info->dlpi_name && l->n < l->max)
		l->name[l->n++] = strdup(info->dlpi_name);
	return 0;
}

/* Keep every loaded library mapped for the rest of the process
 * (RTLD_NOLOAD | RTLD_NODELETE on each).  The loader unloads its drivers
 * when the instance goes, and lavapipe its LLVM: what they keep for the
 * process (LLVM's caches) would then look leaked to LeakSanitizer, from
 * code no longer mapped.  A driver stays loaded, as CUDA's does in
 * calibrate's CUDA probe.  dlopen is called outside dl_iterate_phdr, which
 * holds the dynamic linker's lock. */
static void bm_vk_pin_libraries(void)
{
	char *name[512];
	struct { char **name; size_t n, max; } l = { name, 0, sizeof(name) / sizeof(name[0]) };
	dl_iterate_phdr(bm_vk_list_one, &l);
	for (size_t i = 0; i < l.n; i++) {
		void *h = name[i] ? dlopen(name[i], RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) : NULL;
		if (h)
			dlclose(h);   /* our reference only: NODELETE keeps it mapped */
		free(name[i]);
	}
}

void bm_vk_close(struct bm_vk *vk)
{
	if (vk->lib)
		bm_vk_pin_libraries();
	if (vk->dev) {
		vk->fn.vkDeviceWaitIdle(vk->dev);
		vk->fn.vkDestroyDevice(vk->dev, NULL);
	}
	if (vk->messenger)
		vk->fn.vkDestroyDebugUtilsMessengerEXT(vk->instance, vk->messenger, NULL);
	if (vk->instance)
		vk->fn.vkDestroyInstance(vk->instance, NULL);
	vk->dev = VK_NULL_HANDLE;
	vk->messenger = VK_NULL_HANDLE;
	vk->instance = VK_NULL_HANDLE;
	vk->lib = NULL;
}

/* ---- memory ---- */

/* The host-visible, coherent type of `bits`: system memory over BAR,
 * cached over uncached.  -1: none. */
static int bm_vk_host_type(const struct bm_vk *vk, uint32_t bits)
{
	const VkMemoryPropertyFlags need = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
	int best = -1, best_score = -1;
	for (uint32_t i = 0; i < vk->mem.memoryTypeCount; i++) {
		VkMemoryPropertyFlags f = vk->mem.memoryTypes[i].propertyFlags;
		if (!(bits & (1u << i)) || (f & need) != need)
			continue;
		int score = (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT ? 0 : 2) +
			    (f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT ? 1 : 0);
		if (score > best_score) {
			best = (int)i;
			best_score = score;
		}
	}
	return best;
}

int bm_vk_buffer_host(struct bm_vk *vk, VkDeviceSize size, VkBufferUsageFlags usage, struct bm_vk_buffer *b,
		      char *err, size_t errlen)
{
	memset(b, 0, sizeof(*b));
	VkBufferCreateInfo bi = { .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = size, .usage = usage,
				  .sharingMode = VK_SHARING_MODE_EXCLUSIVE };
	BM_VK_CHECK(vk->fn.vkCreateBuffer(vk->dev, &bi, NULL, &b->buf));
	VkMemoryRequirements req;
	vk->fn.vkGetBufferMemoryRequirements(vk->dev, b->buf, &req);
	int type = bm_vk_host_type(vk, req.memoryTypeBits);
	if (type < 0) {
		bm_vk_buffer_destroy(vk, b);
		snprintf(err, errlen, "Vulkan device %s has no host-visible coherent memory for a buffer", vk->id.name);
		return -ENODEV;
	}
	b->type = (uint32_t)type;
	b->size = size;
	VkMemoryAllocateInfo ai = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size,
				    .memoryTypeIndex = b->type };
	void *map = NULL;
	VkResult r = vk->fn.vkAllocateMemory(vk->dev, &ai, NULL, &b->mem);
	if (r == VK_SUCCESS)
		r = vk->fn.vkBindBufferMemory(vk->dev, b->buf, b->mem, 0);
	if (r == VK_SUCCESS)
		r = vk->fn.vkMapMemory(vk->dev, b->mem, 0, VK_WHOLE_SIZE, 0, &map);
	if (r != VK_SUCCESS) {
		bm_vk_buffer_destroy(vk, b);
		return bm_vk_fail(r, "allocating a host-visible buffer", err, errlen);
	}
	memset(map, 0, (size_t)size);
	b->map = map;
	return 0;
}

void bm_vk_buffer_destroy(struct bm_vk *vk, struct bm_vk_buffer *b)
{
	if (b->map)
		vk->fn.vkUnmapMemory(vk->dev, b->mem);
	if (b->buf)
		vk->fn.vkDestroyBuffer(vk->dev, b->buf, NULL);
	if (b->mem)
		vk->fn.vkFreeMemory(vk->dev, b->mem, NULL);
	memset(b, 0, sizeof(*b));
}

/* ---- timeline semaphores ---- */

int bm_vk_timeline_create(struct bm_vk *vk, uint64_t initial, VkSemaphore *out, char *err, size_t errlen)
{
	VkSemaphoreTypeCreateInfo t = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
					.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE, .initialValue = initial };
	VkSemaphoreCreateInfo ci = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &t };
	BM_VK_CHECK(vk->fn.vkCreateSemaphore(vk->dev, &ci, NULL, out));
	return 0;
}

void bm_vk_semaphore_destroy(struct bm_vk *vk, VkSemaphore s)
{
	if (s)
		vk->fn.vkDestroySemaphore(vk->dev, s, NULL);
}

int bm_vk_timeline_value(struct bm_vk *vk, VkSemaphore s, uint64_t *value, char *err, size_t errlen)
{
	BM_VK_CHECK(vk->fn.vkGetSemaphoreCounterValue(vk->dev, s, value));
	return 0;
}

int bm_vk_timeline_wait(struct bm_vk *vk, VkSemaphore s, uint64_t value, uint64_t timeout_ns, char *err,
			size_t errlen)
{
	VkSemaphoreWaitInfo wi = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .semaphoreCount = 1,
				   .pSemaphores = &s, .pValues = &value };
	VkResult r = vk->fn.vkWaitSemaphores(vk->dev, &wi, timeout_ns);
	if (r == VK_TIMEOUT) {
		snprintf(err, errlen, "a timeline semaphore did not reach %llu within %.1f s", (unsigned long long)value,
			 (double)timeout_ns / 1e9);
		return -ETIMEDOUT;
	}
	BM_VK_CHECK(r);
	return 0;
}

int bm_vk_timeline_signal(struct bm_vk *vk, VkSemaphore s, uint64_t value, char *err, size_t errlen)
{
	VkSemaphoreSignalInfo si = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, .semaphore = s, .value = value };
	BM_VK_CHECK(vk->fn.vkSignalSemaphore(vk->dev, &si));
	return 0;
}

/* ---- commands ---- */

int bm_vk_cmd_pool(struct bm_vk *vk, unsigned qi, VkCommandPool *out, char *err, size_t errlen)
{
	VkCommandPoolCreateInfo ci = { .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
				       .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
				       .queueFamilyIndex = vk->queue[qi].family };
	BM_VK_CHECK(vk->fn.vkCreateCommandPool(vk->dev, &ci, NULL, out));
	return 0;
}

void bm_vk_cmd_pool_destroy(struct bm_vk *vk, VkCommandPool pool)
{
	if (pool)
		vk->fn.vkDestroyCommandPool(vk->dev, pool, NULL);   /* frees its buffers */
}

int bm_vk_cmd_alloc(struct bm_vk *vk, VkCommandPool pool, uint32_t n, VkCommandBuffer *out, char *err, size_t errlen)
{
	VkCommandBufferAllocateInfo ai = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = pool,
					   .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = n };
	BM_VK_CHECK(vk->fn.vkAllocateCommandBuffers(vk->dev, &ai, out));
	return 0;
}

int bm_vk_cmd_begin(struct bm_vk *vk, VkCommandBuffer cb, char *err, size_t errlen)
{
	BM_VK_CHECK(vk->fn.vkResetCommandBuffer(cb, 0));
	VkCommandBufferBeginInfo bi = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT };
	BM_VK_CHECK(vk->fn.vkBeginCommandBuffer(cb, &bi));
	return 0;
}

static void bm_vk_sem_infos(const struct bm_vk_sem_op *ops, uint32_t n, VkSemaphoreSubmitInfo *out)
{
	for (uint32_t i = 0; i < n; i++)
		out[i] = (VkSemaphoreSubmitInfo){
			.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO, .semaphore = ops[i].sem, .value = ops[i].value,
			.stageMask = ops[i].stage ? ops[i].stage : VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
		};
}

#define BM_VK_SEM_MAX 8
int bm_vk_submit(struct bm_vk *vk, unsigned qi, VkCommandBuffer cb, const struct bm_vk_sem_op *waits,
		 uint32_t nwaits, const struct bm_vk_sem_op *signals, uint32_t nsignals, char *err, size_t errlen)
{
	if (nwaits > BM_VK_SEM_MAX || nsignals > BM_VK_SEM_MAX)
		return -EINVAL;
	VkSemaphoreSubmitInfo w[BM_VK_SEM_MAX], s[BM_VK_SEM_MAX];
	bm_vk_sem_infos(waits, nwaits, w);
	bm_vk_sem_infos(signals, nsignals, s);
	VkCommandBufferSubmitInfo c = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO, .commandBuffer = cb };
	VkSubmitInfo2 si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
		.waitSemaphoreInfoCount = nwaits, .pWaitSemaphoreInfos = w,
		.commandBufferInfoCount = cb ? 1 : 0, .pCommandBufferInfos = &c,
		.signalSemaphoreInfoCount = nsignals, .pSignalSemaphoreInfos = s,
	};
	BM_VK_CHECK(vk->fn.vkQueueSubmit2(vk->queue[qi].q, 1, &si, VK_NULL_HANDLE));
	return 0;
}
