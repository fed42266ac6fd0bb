/* benchmarks/scenarios/fence_vk.h — gpu-wait and cpu-wait on a Vulkan device
 * (--set backend=vulkan), through the workloads' backend seam
 * (benchmarks/backend.h, benchmarks/workload.h): the same lockstep rounds as
 * the model's (benchmarks/fence_rig.h), the same keys.
 *
 *   gpu-wait  queue A (compute0) runs work_us and signals f = i; queue B
 *             (direct0) waits for f >= i, runs a short list and signals
 *             g = i; the application CPU-waits for g >= i.  gpu_wait: A's
 *             work ended -> B's list started (GPU timestamps).  native: B's
 *             Wait is a semaphore wait submitted with its work; legacy: the
 *             backend's scheduler thread holds B's later work until f
 *             reaches i on the CPU, then submits it (held_waits == waits).
 *   cpu-wait  queue A runs work_us and signals f = i; the application waits
 *             for f >= i (vkWaitSemaphores).  cpu_wait: A's work ended (GPU
 *             timestamp on the host clock) -> the wait returned.
 *
 * Called from the scenario's run (one thread). */
#ifndef BM_FENCE_VK_H
#define BM_FENCE_VK_H

#include <stdbool.h>

struct fb_run;

/* The scenario's backend parameter says vulkan. */
bool bm_fence_vk_wanted(const struct fb_run *run);
/* One path's run: gpu (gpu-wait) or not (cpu-wait).  0 or the run's error. */
int bm_fence_vk_run(struct fb_run *run, bool gpu);

#endif
