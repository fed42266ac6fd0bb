/* benchmarks/vulkan/vk_graph.h — the Vulkan backend of the workloads
 * (benchmarks/backend.h): a D3D12-style frame graph on a Vulkan device, its
 * fences timeline semaphores, as vkd3d-proton builds D3D12 on Vulkan.
 *
 * Queues.  A workload's queue is a logical queue on one of the device's
 * queues (vk_device: up to two): direct and copy on the first, compute on
 * the second where there is one.  Queues sharing a device queue run one
 * after the other; the backend says so in its notes (lavapipe has one
 * queue).  Each logical queue has a progress semaphore it signals after
 * each batch: its completed work (the watchdog's progress).
 *
 * Work of a length.  A list's op of `ns` is a dispatch of a compute shader
 * (spin.comp) that loops for about ns: loops per microsecond calibrated at
 * bring-up from GPU timestamps where the queue has them (from the host
 * clock otherwise).  Copy lists dispatch the same shader (a copy queue here
 * is a logical queue on a compute-capable device queue).
 *
 * The two strategies (DESIGN.md, "The two fence paths"):
 *   native   a queue's Wait is a timeline-semaphore wait submitted with its
 *            next batch; the device resolves it.  A Wait whose value no
 *            submitted Signal (or CPU signal) reaches yet is kept back by
 *            the application thread until one is submitted (wait-before-
 *            signal on a shared device queue would block the queue); this is
 *            ordering, not a CPU wait on the GPU, and is not a held wait.
 *   legacy   the monitored fence: every queue Wait hands the queue's later
 *            work to the scheduler thread, which blocks in vkWaitSemaphores
 *            until the value arrives, then submits (held_waits: one per
 *            Wait); every GPU Signal is waited for by that thread too (the
 *            interrupt legacy takes on every signal).
 *
 * A stall (no logical queue completing anything for stall_ns) fails the CPU
 * wait through the workload's watchdog; teardown releases the stuck waits
 * with CPU signals and drains, bounded; a device that does not drain is
 * left (its objects leaked) rather than waited for forever.
 *
 *   call               who
 *   bm_vkg_up           the workload's thread (bm_wl_up_config)
 *   bm_vkg_sched_tid    any thread, while up
 *   the ops            as backend.h; the scheduler thread is the backend's own
 */
#ifndef BM_VK_GRAPH_H
#define BM_VK_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bm_wl;
struct bm_wl_config;

/* Bring a Vulkan device up into w (ops, instance, notes; not the queues).
 * 0 / -ENODEV (no loader, no device, no timeline semaphores) / -EPERM (a CPU
 * implementation without allow_cpu) / -errno; one line in err. */
int bm_vkg_up(struct bm_wl *w, const struct bm_wl_config *cfg, char *err, size_t errlen);
/* --trace (the ops trace_start, trace_cpu_wait, trace_copy; vk_trace.c):
 * a track per logical queue with each list's work from GPU timestamps
 * (on the host clock by calibrated timestamps, else by a bound measured
 * at bring-up), the
 * scheduler thread's holds (legacy), the application's CPU waits.  Tests
 * only: a deliberately broken recorder the trace test must catch
 * (trace_start's `broken`): BROKEN_SPAN_PER_BATCH draws one span per
 * batch, its lists' bounds lost. */
enum bm_vkg_trace_broken { BM_VKG_TRACE_OK, BM_VKG_TRACE_BROKEN_SPAN_PER_BATCH };

/* Whether the device's GPU times are on the host clock (lf_now_ns) by
 * calibrated timestamps (VK_EXT_calibrated_timestamps), *dev_ns their
 * maximum deviation: only then may a GPU time be subtracted from a host
 * time.  Without, the offset is bounded by host reads around dispatches,
 * whose width is the very GPU-to-host latency one would measure.  Any
 * thread, while up. */
bool bm_vkg_clock_calibrated(void *be, uint64_t *dev_ns);

/* The records the backend keeps while tracing (each list's GPU span, each
 * hold, each traced CPU wait); more are counted as dropped.  Any thread. */
size_t bm_vkg_trace_cap(void *be);

/* The legacy scheduler thread's id, 0 on native. */
pid_t bm_vkg_sched_tid(void *be);

#endif
