/* benchmarks/vulkan/vk_device.h — a real GPU through the Vulkan loader,
 * opened at run time: the device bring-up the Vulkan probe (probe.c) and
 * any other benchmark-side Vulkan code share.
 *
 * Why here: this is the only room that knows the Vulkan API.  It is
 * benchmark-side (as calibrate's CUDA probe is): the harness (src/) and the
 * model (gpu-model/) never see it.  The Khronos headers (libvulkan-dev) are
 * used with VK_NO_PROTOTYPES, and every entry point comes from
 * dlopen("libvulkan.so.1") + vkGetInstanceProcAddr / vkGetDeviceProcAddr:
 * nothing of Vulkan is needed to link or to start the binary.
 *
 * Bring-up (bm_vk_open): the loader, an instance (Vulkan 1.2 or newer; with
 * validation, VK_LAYER_KHRONOS_validation with synchronization validation
 * on, and a VK_EXT_debug_utils messenger that counts every warning and
 * error it reports), the physical device by index, or the first GPU
 * (a CPU implementation, VK_PHYSICAL_DEVICE_TYPE_CPU, refused unless
 * allow_cpu), a device with
 * timelineSemaphore and synchronization2 enabled, and up to two queues:
 *
 *   queue 0 (A)  the first family with graphics or compute (graphics and
 *                compute preferred: the "direct" engine)
 *   queue 1 (B)  a second queue of A's family where it has two, else the
 *                first other family with compute, else none: nqueues is 1
 *                and callers run the two-queue work on queue 0 (and say so)
 *
 * Errors: actions return 0 or -errno with one line in err (no trailing
 * newline):
 *   -ENOENT  no loader (libvulkan.so.1), or validation asked for and the
 *            layer is not installed
 *   -ENODEV  no Vulkan driver or device, the index out of range, or a
 *            device without Vulkan 1.2 + timeline semaphores +
 *            synchronization2
 *   -EPERM   the device is a CPU implementation and allow_cpu is false
 *   -EIO     a Vulkan call failed (its VkResult named); -ENOMEM for
 *            VK_ERROR_OUT_OF_*_MEMORY; -ETIMEDOUT a wait past its timeout
 *
 * Threads: struct bm_vk is made and closed by one thread.  Between, any
 * thread may call these helpers, with Vulkan's own external
 * synchronization rules: one thread at a time per VkQueue (a submit), per
 * VkCommandPool (its buffers' recording), per object destroyed.  With
 * nqueues == 1 both queue indexes name the same VkQueue.  The validation
 * message count may be read from any thread (an atomic: the layer may call
 * the messenger from any thread).
 *
 * Environment: FENCEBENCH_VK_VALIDATE=1 turns validation on as
 * opts.validate does.
 */
#ifndef BM_VK_DEVICE_H
#define BM_VK_DEVICE_H

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The entry points, by level: X(name) for each; a table member `name`
 * holds the PFN.  Add what new code needs (a device-level function in
 * BM_VK_DEVICE_FNS). */
#define BM_VK_GLOBAL_FNS(X)                                                                      \
	X(vkEnumerateInstanceVersion) X(vkEnumerateInstanceLayerProperties)                      \
	X(vkEnumerateInstanceExtensionProperties) X(vkCreateInstance)
#define BM_VK_INSTANCE_FNS(X)                                                                    \
	X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties2)     \
	X(vkGetPhysicalDeviceFeatures2) X(vkGetPhysicalDeviceQueueFamilyProperties)              \
	X(vkGetPhysicalDeviceMemoryProperties) X(vkEnumerateDeviceExtensionProperties)           \
	X(vkCreateDevice) X(vkGetDeviceProcAddr)
#define BM_VK_DEVICE_FNS(X)                                                                      \
	X(vkDestroyDevice) X(vkGetDeviceQueue) X(vkDeviceWaitIdle) X(vkQueueWaitIdle)            \
	X(vkCreateBuffer) X(vkDestroyBuffer) X(vkGetBufferMemoryRequirements)                    \
	X(vkAllocateMemory) X(vkFreeMemory) X(vkBindBufferMemory) X(vkMapMemory)                 \
	X(vkUnmapMemory) X(vkCreateSemaphore) X(vkDestroySemaphore)                              \
	X(vkGetSemaphoreCounterValue) X(vkWaitSemaphores) X(vkSignalSemaphore)                   \
	X(vkCreateCommandPool) X(vkDestroyCommandPool) X(vkResetCommandPool)                     \
	X(vkAllocateCommandBuffers) X(vkFreeCommandBuffers) X(vkBeginCommandBuffer)              \
	X(vkEndCommandBuffer) X(vkResetCommandBuffer) X(vkCmdFillBuffer) X(vkCmdUpdateBuffer)    \
	X(vkCmdCopyBuffer) X(vkCreateQueryPool) X(vkDestroyQueryPool) X(vkCmdResetQueryPool)     \
	X(vkGetQueryPoolResults) X(vkQueueSubmit) X(vkCmdWriteTimestamp) X(vkCmdPipelineBarrier)  \
	X(vkCmdBindPipeline) X(vkCmdBindDescriptorSets) X(vkCmdPushConstants) X(vkCmdDispatch)    \
	X(vkCreateShaderModule) X(vkDestroyShaderModule) X(vkCreateDescriptorSetLayout)          \
	X(vkDestroyDescriptorSetLayout) X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout)     \
	X(vkCreateComputePipelines) X(vkDestroyPipeline) X(vkCreateDescriptorPool)               \
	X(vkDestroyDescriptorPool) X(vkAllocateDescriptorSets) X(vkUpdateDescriptorSets)
/* synchronization2: core in 1.3, else VK_KHR_synchronization2 (the KHR
 * name is looked up when the core one is absent) */
#define BM_VK_SYNC2_FNS(X) X(vkQueueSubmit2) X(vkCmdPipelineBarrier2) X(vkCmdWriteTimestamp2)

#define BM_VK_MEMBER(f) PFN_##f f;
struct bm_vk_fn {
	PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
	BM_VK_GLOBAL_FNS(BM_VK_MEMBER)
	BM_VK_INSTANCE_FNS(BM_VK_MEMBER)
	BM_VK_DEVICE_FNS(BM_VK_MEMBER)
	BM_VK_SYNC2_FNS(BM_VK_MEMBER)
	/* VK_EXT_debug_utils: NULL without validation */
	PFN_vkCreateDebugUtilsMessengerEXT vkCreateDebugUtilsMessengerEXT;
	PFN_vkDestroyDebugUtilsMessengerEXT vkDestroyDebugUtilsMessengerEXT;
	/* VK_EXT_calibrated_timestamps: NULL unless the device offers it with
	 * both the device and the CLOCK_MONOTONIC time domains */
	PFN_vkGetCalibratedTimestampsEXT vkGetCalibratedTimestampsEXT;
};
#undef BM_VK_MEMBER

struct bm_vk_opts {
	int device;        /* index in vkEnumeratePhysicalDevices' order; -1: the
			    * first that is not a CPU implementation (else 0) */
	bool allow_cpu;    /* accept VK_PHYSICAL_DEVICE_TYPE_CPU (lavapipe) */
	bool validate;     /* the validation layer (or FENCEBENCH_VK_VALIDATE=1) */
};

/* What the device says it is. */
struct bm_vk_identity {
	char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
	uint32_t vendor_id, device_id;
	char driver_name[VK_MAX_DRIVER_NAME_SIZE];   /* VkPhysicalDeviceDriverProperties */
	char driver_info[VK_MAX_DRIVER_INFO_SIZE];
	VkDriverId driver_id;
	uint32_t driver_version;                     /* vendor-encoded: bm_vk_driver_version */
	uint32_t api_version;                        /* VK_MAKE_API_VERSION */
	VkPhysicalDeviceType type;
	float timestamp_period;                      /* ns per timestamp tick */
};

struct bm_vk_queue {
	VkQueue q;
	uint32_t family, index;
	VkQueueFlags flags;
	uint32_t timestamp_bits;   /* timestampValidBits of the family: 0 = no timestamps */
};

struct bm_vk {
	void *lib;                 /* dlopen("libvulkan.so.1"), never closed */
	struct bm_vk_fn fn;
	VkInstance instance;
	VkDebugUtilsMessengerEXT messenger;
	VkPhysicalDevice phys;
	uint32_t index;            /* phys's index in vkEnumeratePhysicalDevices' order */
	VkDevice dev;
	struct bm_vk_identity id;
	VkPhysicalDeviceMemoryProperties mem;
	struct bm_vk_queue queue[2];   /* [1] == [0] when nqueues is 1 */
	unsigned nqueues;              /* 1 or 2 distinct VkQueues */
	bool validating;
	/* validation messages (warnings and errors) since bm_vk_open: the
	 * messenger's relaxed increments, read relaxed (a count, ordering
	 * nothing); the first one's text, written once by whichever message
	 * wins first_claimed (an exchange), published by first_ready's
	 * release store after the copy: pairs with bm_vk_first_message's
	 * acquire load */
	_Atomic uint64_t messages;
	atomic_bool first_claimed, first_ready;
	char first[512];
};

/* Bring up loader, instance, device and queues per opts (see the top).
 * 0, or -errno with one line in err; on error vk holds nothing (closed).
 * Blocks in the driver's initialization; the calling thread only. */
int bm_vk_open(struct bm_vk *vk, const struct bm_vk_opts *opts, char *err, size_t errlen);
/* Wait for the device to go idle and destroy the device, the messenger
 * and the instance.  Objects made from vk must be destroyed first.  The
 * loader, its drivers and their libraries stay mapped for the rest of the
 * process (pinned: see vk_device.c).  Safe on a zeroed or closed vk. */
void bm_vk_close(struct bm_vk *vk);

/* Validation messages (warnings and errors) so far; 0 without validation. */
uint64_t bm_vk_messages(const struct bm_vk *vk);
/* The first message's text ("" when none). */
const char *bm_vk_first_message(const struct bm_vk *vk);

/* "1.3.230". */
void bm_vk_version_string(uint32_t api_version, char *buf, size_t len);
/* The driver version as its vendor encodes it (NVIDIA 10.8.8.6 bits,
 * Intel on Windows 18.14, else VK_API_VERSION fields): "580.65.06". */
void bm_vk_driver_version(const struct bm_vk_identity *id, char *buf, size_t len);
/* "discrete GPU", "integrated GPU", "virtual GPU", "CPU", "other". */
const char *bm_vk_type_name(VkPhysicalDeviceType t);
/* "VK_ERROR_DEVICE_LOST", ... ("VkResult N" for one it does not know). */
const char *bm_vk_result_name(VkResult r);
/* A failed call: one line "what: VkResult name" in err; the errno for r
 * (-ENOMEM, -ETIMEDOUT for VK_TIMEOUT, else -EIO).  Never 0. */
int bm_vk_fail(VkResult r, const char *what, char *err, size_t errlen);

/* Check a Vulkan call in a function with `char *err, size_t errlen`:
 * return its errno (bm_vk_fail) unless it returned VK_SUCCESS. */
#define BM_VK_CHECK(call)                                                    \
	do {                                                                 \
		VkResult r_ = (call);                                        \
		if (r_ != VK_SUCCESS)                                        \
			return bm_vk_fail(r_, #call, err, errlen);           \
	} while (0)

/* ---- memory ---- */

/* A buffer in host-visible, host-coherent memory, mapped: what a GPU
 * writes and a CPU polls (system memory preferred over device-local BAR
 * memory, cached over uncached, as CUDA's pinned host memory). */
struct bm_vk_buffer {
	VkBuffer buf;
	VkDeviceMemory mem;
	VkDeviceSize size;
	volatile void *map;
	uint32_t type;             /* the memory type index chosen */
};
/* 0 or -errno (err).  The contents are zeroed.  Any thread. */
int bm_vk_buffer_host(struct bm_vk *vk, VkDeviceSize size, VkBufferUsageFlags usage, struct bm_vk_buffer *b,
		      char *err, size_t errlen);
/* Unmap, destroy, free; the GPU must be done with it.  Safe on a zeroed b. */
void bm_vk_buffer_destroy(struct bm_vk *vk, struct bm_vk_buffer *b);

/* ---- timeline semaphores (Vulkan 1.2) ---- */

/* A timeline semaphore at `initial`.  0 or -errno (err). */
int bm_vk_timeline_create(struct bm_vk *vk, uint64_t initial, VkSemaphore *out, char *err, size_t errlen);
void bm_vk_semaphore_destroy(struct bm_vk *vk, VkSemaphore s);
/* Its counter value now (vkGetSemaphoreCounterValue: no blocking). */
int bm_vk_timeline_value(struct bm_vk *vk, VkSemaphore s, uint64_t *value, char *err, size_t errlen);
/* Block in vkWaitSemaphores until s >= value, at most timeout_ns: 0,
 * -ETIMEDOUT (err names the value), or -errno. */
int bm_vk_timeline_wait(struct bm_vk *vk, VkSemaphore s, uint64_t value, uint64_t timeout_ns, char *err,
			size_t errlen);
/* Signal s = value from the CPU (vkSignalSemaphore); value must be above
 * its current one. */
int bm_vk_timeline_signal(struct bm_vk *vk, VkSemaphore s, uint64_t value, char *err, size_t errlen);

/* ---- commands ---- */

/* A command pool for queue qi's family whose buffers can be reset one by
 * one (RESET_COMMAND_BUFFER).  0 or -errno. */
int bm_vk_cmd_pool(struct bm_vk *vk, unsigned qi, VkCommandPool *out, char *err, size_t errlen);
void bm_vk_cmd_pool_destroy(struct bm_vk *vk, VkCommandPool pool);
/* n primary command buffers from pool. */
int bm_vk_cmd_alloc(struct bm_vk *vk, VkCommandPool pool, uint32_t n, VkCommandBuffer *out, char *err,
		    size_t errlen);
/* Reset cb and begin it for one submission (ONE_TIME_SUBMIT). */
int bm_vk_cmd_begin(struct bm_vk *vk, VkCommandBuffer cb, char *err, size_t errlen);

/* A semaphore operation of a submission: a timeline semaphore and value,
 * and the stages it waits before or signals after (0: ALL_COMMANDS). */
struct bm_vk_sem_op {
	VkSemaphore sem;
	uint64_t value;
	VkPipelineStageFlags2 stage;
};
/* vkQueueSubmit2 of one batch to queue qi: cb (VK_NULL_HANDLE: none), after
 * the waits, then the signals (at most 8 of each: -EINVAL beyond).  0 or
 * -errno (err).  The caller holds queue
 * qi (one thread per VkQueue); does not block on the GPU. */
int bm_vk_submit(struct bm_vk *vk, unsigned qi, VkCommandBuffer cb, const struct bm_vk_sem_op *waits,
		 uint32_t nwaits, const struct bm_vk_sem_op *signals, uint32_t nsignals, char *err, size_t errlen);

#endif
