/* benchmarks/vulkan/vk_testing.h — tests only: the Vulkan backend's GPU
 * clock and work records (vk_trace.c) on a backend with no device, its
 * driver entry points stubbed, so that a test can put known ticks and a
 * known clock in and read the host-clock spans out.  It lives beside the
 * backend because it builds the backend's private state
 * (vk_graph_internal.h, which stays in this folder).
 *
 * One logical queue with timestamps, period ns per tick, tracing on, no
 * clock yet.  Single-threaded: the test's thread only. */
#ifndef BM_VK_TESTING_H
#define BM_VK_TESTING_H

#define VK_NO_PROTOTYPES
#include <stddef.h>
#include <stdint.h>
#include <vulkan/vulkan.h>

/* NULL: no memory.  calibrated: the stub of vkGetCalibratedTimestampsEXT
 * (NULL: the device does not offer it). */
void *bm_vkg_fake_new(double period_ns, PFN_vkGetCalibratedTimestampsEXT calibrated);
void bm_vkg_fake_free(void *be);
/* vk_graph_internal.h's vkg_clock_calibrate and vkg_clock_sample */
int bm_vkg_fake_calibrate(void *be);
void bm_vkg_fake_sample(void *be, uint64_t host0, uint64_t host1, uint64_t tick0, uint64_t tick1);
/* The fake's queue on a second device queue (not the one the start-up
 * dispatches timed). */
void bm_vkg_fake_second_queue(void *be);
/* Keep at most cap records (the backend's VKG_TRACE_MAX, smaller). */
void bm_vkg_fake_cap(void *be, size_t cap);
/* A completed list's GPU span, in ticks. */
void bm_vkg_fake_work(void *be, uint64_t t0, uint64_t t1);
/* A list name's interned index (the backend's vkg_name_locked) and the
 * text the trace draws for it. */
unsigned bm_vkg_fake_name(void *be, const char *name);
const char *bm_vkg_fake_name_text(void *be, unsigned i);
/* The queue's spans on the host clock: the work_spans op. */
int bm_vkg_fake_spans(void *be, uint64_t *t0, uint64_t *t1, size_t max, size_t *n);
/* vk_graph_internal.h's vkg_cal_slope, on measure (no device). */
int bm_vkg_cal_slope(int (*measure)(void *ctx, uint32_t loops, double *ns), void *ctx, double *t_short,
		     double *t_full);

#endif
