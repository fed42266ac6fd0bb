/* benchmarks/vulkan/probe.c — calibrate's Vulkan probe (bm_probe_vulkan,
 * benchmarks/calibrate.h): the calibrate operations through Vulkan 1.2+
 * timeline semaphores, the public analog of a D3D12 fence (a 64-bit value
 * a queue signals, another queue waits for, the CPU reads, signals or
 * blocks on).  Named for what it is beside vk_device: the probe the
 * `calibrate` command runs through Vulkan.
 *
 * Objects: one host-visible coherent buffer (word a, written by queue A;
 * word b, a line further, written by queue B), the fence `sem` (A or the
 * CPU signals the round's value i, B waits for it), and per queue a
 * command pool with one command buffer, a query pool of two timestamps,
 * and a "done" timeline each submission signals, which the round's drain
 * waits for (outside the timed part) before the next round re-records.
 *
 * A write is [barrier (earlier writes -> this fill), vkCmdFillBuffer(word
 * = i), barrier (the fill -> host reads)] between two timestamps where the
 * queue's family has them.  One round of each op, timed on the CPU:
 *
 *   enqueue         the vkQueueSubmit2 call of a write with a timeline signal
 *   write_seen      t0, submit A's write of a; the CPU polls a until it reads i
 *   event_spin      t0, submit A [signal sem = i]; spin on vkGetSemaphoreCounterValue
 *   event_block     the same, blocked in vkWaitSemaphores
 *   cpu_gpu_cpu     B [wait sem >= i, write b] queued, 20 us; t0, vkSignalSemaphore(sem = i); poll b
 *   gpu_wait_sys    B [wait sem >= i, write b] queued, 20 us; t0, submit A [signal sem = i]; poll b
 *                   (one queue: A then B submitted at t0, B's submit call in the number)
 *   cpu_held        t0, submit A [signal sem = i], vkWaitSemaphores(sem >= i), submit B [write b]; poll b
 *   gpu_wait_local  n/a: Vulkan does not place a semaphore's payload
 *   km_submit       n/a: a submit's kernel crossing is not separable from the driver's work
 *
 * The GPU-side part (gpu_ns): the writing queue's two timestamps, ticks x
 * timestampPeriod, masked to timestampValidBits.  Whether the submit is a
 * kernel call: the thread's system CPU time over the enqueue rounds
 * (getrusage(RUSAGE_THREAD)), said in the profile's origin.
 *
 * BM_VK_PROBE_BROKEN (mk/vulkan.mk, tests/test_vulkan.c only): the host
 * buffer is made without VK_BUFFER_USAGE_TRANSFER_DST_BIT, which
 * vkCmdFillBuffer requires of its destination: the test must see the
 * validation layer's messages.  (A broken variant that re-records a
 * pending command buffer or destroys one in use would also race inside the
 * driver, which the sanitizer runs must not see; a missing flag breaks
 * the API's contract and nothing else.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>

#include "benchmarks/calibrate.h"
#include "benchmarks/vulkan/vk_device.h"
#include "lockfree/arch.h"

#define VKP_DEADLINE_NS 2000000000ull   /* a round not done in 2 s fails */
#define VKP_QUEUED_PAUSE_NS 20000       /* after queueing B's wait: the GPU has reached it */
#define VKP_WORD_B 16                   /* b's index in 32-bit words: a cache line after a */

struct vkp {
	struct bm_vk vk;
	struct bm_vk_buffer host;
	VkSemaphore sem, done[2];
	uint64_t ndone[2];                /* the last value each queue's done was signalled to */
	VkCommandPool pool[2];
	VkCommandBuffer cb[2];
	VkQueryPool qp[2];
	bool ts[2];                       /* the queue's family writes timestamps */
	uint64_t ts_mask[2];
	uint32_t v;                       /* the round's value */
	struct timeval sys, user;         /* the thread's CPU time in enqueue rounds' timed parts */
	uint64_t enqueue_calls;
};

/* ---- bring-up ---- */

static int vkp_queue_up(struct vkp *p, unsigned q, char *err, size_t errlen)
{
	struct bm_vk *vk = &p->vk;
	int rc = bm_vk_cmd_pool(vk, q, &p->pool[q], err, errlen);
	if (!rc)
		rc = bm_vk_cmd_alloc(vk, p->pool[q], 1, &p->cb[q], err, errlen);
	if (!rc)
		rc = bm_vk_timeline_create(vk, 0, &p->done[q], err, errlen);
	if (rc)
		return rc;
	uint32_t bits = vk->queue[q].timestamp_bits;
	p->ts[q] = bits > 0 && vk->id.timestamp_period > 0;
	p->ts_mask[q] = bits >= 64 ? ~0ull : (1ull << bits) - 1;
	if (!p->ts[q])
		return 0;
	VkQueryPoolCreateInfo qi = { .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
				     .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = 2 };
	BM_VK_CHECK(vk->fn.vkCreateQueryPool(vk->dev, &qi, NULL, &p->qp[q]));
	return 0;
}

static int vkp_open(const struct bm_cal_opts *o, void **self, char *err, size_t errlen)
{
	struct vkp *p = calloc(1, sizeof(*p));
	*self = p;
	if (!p)
		return -ENOMEM;
	struct bm_vk_opts vo = { .device = o->device, .allow_cpu = o->allow_cpu, .validate = o->validate };
	int rc = bm_vk_open(&p->vk, &vo, err, errlen);
#ifndef BM_VK_PROBE_BROKEN
	const VkBufferUsageFlags usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;   /* vkCmdFillBuffer's destination */
#else
	const VkBufferUsageFlags usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;   /* broken: not a fill's destination */
#endif
	if (!rc)
		rc = bm_vk_buffer_host(&p->vk, 4096, usage, &p->host, err, errlen);
	if (!rc)
		rc = bm_vk_timeline_create(&p->vk, 0, &p->sem, err, errlen);
	for (unsigned q = 0; !rc && q < 2; q++)
		rc = vkp_queue_up(p, q, err, errlen);
	return rc;
}

/* After a failed round a queued wait may still wait for sem: signal the
 * round's value so the device can go idle. */
static void vkp_release(struct vkp *p)
{
	char err[256];
	uint64_t value = 0;
	if (p->sem && !bm_vk_timeline_value(&p->vk, p->sem, &value, err, sizeof(err)) && value < p->v)
		bm_vk_timeline_signal(&p->vk, p->sem, p->v, err, sizeof(err));
}

static uint64_t vkp_close(void *self, char *first, size_t len)
{
	struct vkp *p = self;
	if (!p)
		return 0;
	struct bm_vk *vk = &p->vk;
	if (vk->dev) {
		vkp_release(p);
		vk->fn.vkDeviceWaitIdle(vk->dev);
		for (unsigned q = 0; q < 2; q++) {
			if (p->qp[q])
				vk->fn.vkDestroyQueryPool(vk->dev, p->qp[q], NULL);
			bm_vk_cmd_pool_destroy(vk, p->pool[q]);
			bm_vk_semaphore_destroy(vk, p->done[q]);
		}
		bm_vk_semaphore_destroy(vk, p->sem);
		bm_vk_buffer_destroy(vk, &p->host);
	}
	bm_vk_close(vk);
	uint64_t n = bm_vk_messages(vk);
	snprintf(first, len, "%s", bm_vk_first_message(vk));
	free(p);
	return n;
}

/* ---- recording ---- */

static void vkp_barrier(struct vkp *p, VkCommandBuffer cb, VkPipelineStageFlags2 ss, VkAccessFlags2 sa,
			VkPipelineStageFlags2 ds, VkAccessFlags2 da)
{
	VkMemoryBarrier2 mb = { .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER_2, .srcStageMask = ss, .srcAccessMask = sa,
				.dstStageMask = ds, .dstAccessMask = da };
	VkDependencyInfo di = { .sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO, .memoryBarrierCount = 1,
				.pMemoryBarriers = &mb };
	p->vk.fn.vkCmdPipelineBarrier2(cb, &di);
}

/* Queue q's command buffer for this round: [ts, (write word = i), ts]. */
static int vkp_record(struct vkp *p, unsigned q, bool write, uint32_t word, char *err, size_t errlen)
{
	struct bm_vk *vk = &p->vk;
	VkCommandBuffer cb = p->cb[q];
	int rc = bm_vk_cmd_begin(vk, cb, err, errlen);
	if (rc)
		return rc;
	if (p->ts[q]) {
		vk->fn.vkCmdResetQueryPool(cb, p->qp[q], 0, 2);
		vk->fn.vkCmdWriteTimestamp2(cb, VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT, p->qp[q], 0);
	}
	if (write) {
		/* earlier rounds' fills (any queue's, through the round's
		 * semaphores) before this one: no write-after-write hazard */
		vkp_barrier(p, cb, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_MEMORY_WRITE_BIT,
			    VK_PIPELINE_STAGE_2_CLEAR_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
		vk->fn.vkCmdFillBuffer(cb, p->host.buf, (VkDeviceSize)word * 4, 4, p->v);
		/* the fill made available to the host, which polls the word */
		vkp_barrier(p, cb, VK_PIPELINE_STAGE_2_CLEAR_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
			    VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
	}
	if (p->ts[q])
		vk->fn.vkCmdWriteTimestamp2(cb, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, p->qp[q], 1);
	BM_VK_CHECK(vk->fn.vkEndCommandBuffer(cb));
	return 0;
}

/* Submit queue q's command buffer after `wait` (sem >= i, or none), then
 * signal its done and, with `signal`, sem = i. */
static int vkp_submit(struct vkp *p, unsigned q, bool wait, bool signal, char *err, size_t errlen)
{
	struct bm_vk_sem_op w = { .sem = p->sem, .value = p->v };
	struct bm_vk_sem_op s[2] = { { .sem = p->done[q], .value = ++p->ndone[q] }, { .sem = p->sem, .value = p->v } };
	return bm_vk_submit(&p->vk, q, p->cb[q], &w, wait ? 1 : 0, s, signal ? 2 : 1, err, errlen);
}

/* ---- waiting ---- */

/* Poll the host word until it reads v, 2 s at most. */
static int vkp_seen(struct vkp *p, uint32_t word, enum bm_op op, char *err, size_t errlen)
{
	volatile uint32_t *w = (volatile uint32_t *)p->host.map + word;
	uint64_t deadline = lf_now_ns() + VKP_DEADLINE_NS;
	for (unsigned i = 0; (int32_t)(*w - p->v) < 0; i++)
		if ((i & 4095) == 4095 && lf_now_ns() > deadline) {
			snprintf(err, errlen, "%s: round %u not done within 2 s (the GPU's write was not seen)",
				 bm_op_key(op), p->v);
			return -ETIMEDOUT;
		}
	return 0;
}

/* Spin on the counter value until sem reaches v, 2 s at most. */
static int vkp_spin(struct vkp *p, enum bm_op op, char *err, size_t errlen)
{
	uint64_t deadline = lf_now_ns() + VKP_DEADLINE_NS, value = 0;
	for (unsigned i = 0; value < p->v; i++) {
		int rc = bm_vk_timeline_value(&p->vk, p->sem, &value, err, errlen);
		if (rc)
			return rc;
		if ((i & 1023) == 1023 && lf_now_ns() > deadline) {
			snprintf(err, errlen, "%s: round %u not done within 2 s (the semaphore stayed at %llu)",
				 bm_op_key(op), p->v, (unsigned long long)value);
			return -ETIMEDOUT;
		}
	}
	return 0;
}

static int vkp_block(struct vkp *p, enum bm_op op, char *err, size_t errlen)
{
	int rc = bm_vk_timeline_wait(&p->vk, p->sem, p->v, VKP_DEADLINE_NS, err, errlen);
	if (rc == -ETIMEDOUT)
		snprintf(err, errlen, "%s: round %u not done within 2 s (vkWaitSemaphores)", bm_op_key(op), p->v);
	return rc;
}

/* Wait for every submission of the round (both queues' done), then read
 * queue q's timestamps: the GPU-side part in *gpu_ns. */
static int vkp_drain(struct vkp *p, enum bm_op op, unsigned q, uint64_t *gpu_ns, char *err, size_t errlen)
{
	struct bm_vk *vk = &p->vk;
	for (unsigned i = 0; i < 2; i++) {
		int rc = bm_vk_timeline_wait(vk, p->done[i], p->ndone[i], VKP_DEADLINE_NS, err, errlen);
		if (rc == -ETIMEDOUT)
			snprintf(err, errlen, "%s: round %u not done within 2 s (queue %u's work)", bm_op_key(op), p->v, i);
		if (rc)
			return rc;
	}
	*gpu_ns = BM_CAL_NONE;
	if (!p->ts[q])
		return 0;
	uint64_t t[2];
	BM_VK_CHECK(vk->fn.vkGetQueryPoolResults(vk->dev, p->qp[q], 0, 2, sizeof(t), t, sizeof(t[0]),
						 VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
	uint64_t ticks = ((t[1] & p->ts_mask[q]) - (t[0] & p->ts_mask[q])) & p->ts_mask[q];
	*gpu_ns = (uint64_t)((double)ticks * vk->id.timestamp_period);
	return 0;
}

/* ---- the ops ---- */

/* Before t0: record (and for B's queued waits, submit) this round's work. */
static int vkp_prepare(struct vkp *p, enum bm_op op, char *err, size_t errlen)
{
	bool a_writes = op == BM_OP_ENQUEUE || op == BM_OP_WRITE_SEEN;
	bool b_writes = op == BM_OP_CPU_GPU_CPU || op == BM_OP_GPU_WAIT_SYS || op == BM_OP_CPU_HELD;
	int rc = 0;
	if (op != BM_OP_CPU_GPU_CPU)
		rc = vkp_record(p, 0, a_writes, 0, err, errlen);
	if (!rc && b_writes)
		rc = vkp_record(p, 1, true, VKP_WORD_B, err, errlen);
	bool queued = op == BM_OP_CPU_GPU_CPU || (op == BM_OP_GPU_WAIT_SYS && p->vk.nqueues == 2);
	if (!rc && queued) {
		rc = vkp_submit(p, 1, true, false, err, errlen);
		lf_spin_ns(VKP_QUEUED_PAUSE_NS);
	}
	return rc;
}

/* From t0: the op's timed part; the CPU call inside it in *call. */
static int vkp_timed(struct vkp *p, enum bm_op op, uint64_t t0, uint64_t *call, char *err, size_t errlen)
{
	int rc;
	switch (op) {
	case BM_OP_ENQUEUE:
	case BM_OP_WRITE_SEEN:
		rc = vkp_submit(p, 0, false, false, err, errlen);
		*call = lf_now_ns() - t0;
		return rc ? rc : vkp_seen(p, 0, op, err, errlen);
	case BM_OP_EVENT_SPIN:
	case BM_OP_EVENT_BLOCK:
		rc = vkp_submit(p, 0, false, true, err, errlen);
		if (rc)
			return rc;
		return op == BM_OP_EVENT_SPIN ? vkp_spin(p, op, err, errlen) : vkp_block(p, op, err, errlen);
	case BM_OP_CPU_GPU_CPU:
		rc = bm_vk_timeline_signal(&p->vk, p->sem, p->v, err, errlen);
		*call = lf_now_ns() - t0;
		return rc ? rc : vkp_seen(p, VKP_WORD_B, op, err, errlen);
	case BM_OP_GPU_WAIT_SYS:
		rc = vkp_submit(p, 0, false, true, err, errlen);
		if (!rc && p->vk.nqueues == 1)
			rc = vkp_submit(p, 1, true, false, err, errlen);
		return rc ? rc : vkp_seen(p, VKP_WORD_B, op, err, errlen);
	case BM_OP_CPU_HELD:
		rc = vkp_submit(p, 0, false, true, err, errlen);
		if (!rc)
			rc = vkp_block(p, op, err, errlen);
		if (!rc)
			rc = vkp_submit(p, 1, false, false, err, errlen);
		return rc ? rc : vkp_seen(p, VKP_WORD_B, op, err, errlen);
	default:
		return -EINVAL;
	}
}

/* The calling thread's system and user CPU time so far. */
static void vkp_thread_time(struct timeval *sys, struct timeval *user)
{
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru))
		memset(&ru, 0, sizeof(ru));
	*sys = ru.ru_stime;
	*user = ru.ru_utime;
}

static void vkp_add_time(struct timeval *acc, const struct timeval *a, const struct timeval *b)
{
	struct timeval d;
	timersub(b, a, &d);
	timeradd(acc, &d, acc);
}

static int vkp_round(void *self, enum bm_op op, struct bm_cal_sample *s, char *err, size_t errlen)
{
	struct vkp *p = self;
	*s = (struct bm_cal_sample){ .gpu_ns = BM_CAL_NONE, .call_ns = BM_CAL_NONE };
	p->v++;
	int rc = vkp_prepare(p, op, err, errlen);
	if (rc)
		return rc;
	struct timeval s0, s1, u0, u1;
	vkp_thread_time(&s0, &u0);
	uint64_t t0 = lf_now_ns(), call = BM_CAL_NONE;
	rc = vkp_timed(p, op, t0, &call, err, errlen);
	s->ns = lf_now_ns() - t0;
	if (rc)
		return rc;
	if (op == BM_OP_ENQUEUE) {
		vkp_thread_time(&s1, &u1);
		vkp_add_time(&p->sys, &s0, &s1);
		vkp_add_time(&p->user, &u0, &u1);
		p->enqueue_calls++;
		s->ns = call;
	} else if (op == BM_OP_CPU_GPU_CPU) {
		s->call_ns = call;
	}
	uint64_t gpu = BM_CAL_NONE;
	rc = vkp_drain(p, op, op == BM_OP_ENQUEUE || op == BM_OP_WRITE_SEEN || op == BM_OP_EVENT_SPIN ||
			      op == BM_OP_EVENT_BLOCK ? 0 : 1, &gpu, err, errlen);
	if (op != BM_OP_ENQUEUE)
		s->gpu_ns = gpu;
	return rc;
}

static const char *vkp_no_analog(void *self, enum bm_op op)
{
	if (op == BM_OP_GPU_WAIT_LOCAL)
		return "Vulkan does not place a semaphore's payload: no system- or local-memory fence to choose";
	if (op == BM_OP_KM_SUBMIT)
		return "a submit's kernel crossing is not separable from the driver's own work here";
	return NULL;
}

/* ---- the profile's origin ---- */

/* Whether the submit enters the kernel: the thread's system CPU time over
 * the enqueue rounds' timed parts (their polling is user time) against the
 * call's p50.  The kernel splits a thread's CPU time into user and system
 * by where its ticks land, so under 50 ms of CPU time in all it cannot
 * tell. */
static void vkp_describe_submit(const struct vkp *p, const struct bm_cal_result *r, json_t *o)
{
	char buf[512];
	if (!p->enqueue_calls || !r->has[BM_OP_ENQUEUE])
		return;
	double sys = (double)p->sys.tv_sec * 1e9 + (double)p->sys.tv_usec * 1e3;
	double all = sys + (double)p->user.tv_sec * 1e9 + (double)p->user.tv_usec * 1e3;
	double per_call = sys / (double)p->enqueue_calls, call = r->m[BM_OP_ENQUEUE];
	const char *verdict = all < 50e6 ? "cannot tell: under 50 ms of CPU time in all, too little for the "
					   "tick-sampled split (more --rounds)"
			      : per_call >= 0.25 * call ? "yes, it enters the kernel (system time is a quarter of the "
							  "call or more)"
							: "no kernel call seen (system time under a quarter of the call)";
	snprintf(buf, sizeof(buf), "vkQueueSubmit2: %.0f ns of system CPU time per call (getrusage RUSAGE_THREAD "
		 "over %llu calls, %.1f ms of CPU time in all) beside the call's p50 of %.0f ns; a kernel call: %s",
		 per_call, (unsigned long long)p->enqueue_calls, all / 1e6, call, verdict);
	json_object_set_new(o, "submit", json_string(buf));
}

static void vkp_describe_queues(const struct vkp *p, json_t *o)
{
	char buf[512];
	const struct bm_vk *vk = &p->vk;
	if (vk->nqueues == 1)
		snprintf(buf, sizeof(buf), "one queue (family %u): the two-queue operations (gpu_wait_sys, cpu_held, "
			 "cpu_gpu_cpu) ran on that one queue, gpu_wait_sys submitting A then B at t0",
			 vk->queue[0].family);
	else
		snprintf(buf, sizeof(buf), "A: family %u queue %u, B: family %u queue %u (%s)", vk->queue[0].family,
			 vk->queue[0].index, vk->queue[1].family, vk->queue[1].index,
			 vk->queue[0].family == vk->queue[1].family ? "two queues of one family" : "two families");
	json_object_set_new(o, "queues", json_string(buf));
	json_object_set_new(o, "queue_wait", json_string(
		vk->id.type == VK_PHYSICAL_DEVICE_TYPE_CPU
			? "B's wait on A's signal is resolved by the implementation's queue thread on the CPU"
			: "where the driver resolves B's wait on A's signal (on the GPU, or by a kernel scheduler on "
			  "the CPU) is not observable through Vulkan: not said"));
	if (p->ts[0] || p->ts[1])
		snprintf(buf, sizeof(buf), "vkCmdWriteTimestamp2 around each op's GPU work (%u and %u valid bits, "
			 "%.3f ns per tick): gpu_side", vk->queue[0].timestamp_bits, vk->queue[1].timestamp_bits,
			 (double)vk->id.timestamp_period);
	else
		snprintf(buf, sizeof(buf), "none: the queues' families have no timestamps (timestampValidBits 0)");
	json_object_set_new(o, "timestamps", json_string(buf));
}

static void vkp_describe(void *self, const struct bm_cal_result *r, json_t *o)
{
	struct vkp *p = self;
	const struct bm_vk_identity *id = &p->vk.id;
	char buf[1024], drv[32], api[32];
	bm_vk_driver_version(id, drv, sizeof(drv));
	bm_vk_version_string(id->api_version, api, sizeof(api));
	snprintf(buf, sizeof(buf), "%s (%s, vendor 0x%04x, device 0x%04x)", id->name, bm_vk_type_name(id->type),
		 id->vendor_id, id->device_id);
	json_object_set_new(o, "machine", json_string(buf));
	snprintf(buf, sizeof(buf), "%s %s (%s)", id->driver_name, drv, id->driver_info);
	json_object_set_new(o, "driver", json_string(buf));
	snprintf(buf, sizeof(buf), "Vulkan %s, timeline semaphores, vkQueueSubmit2", api);
	json_object_set_new(o, "api", json_string(buf));
	if (id->type == VK_PHYSICAL_DEVICE_TYPE_CPU)
		json_object_set_new(o, "implementation", json_string("cpu: a CPU implementation of Vulkan, not a GPU"));
	vkp_describe_queues(p, o);
	vkp_describe_submit(p, r, o);
	snprintf(buf, sizeof(buf), "fencebench calibrate --api vulkan: timeline semaphores, vkCmdFillBuffer into "
		 "host-visible coherent memory polled by the CPU; p50 of %llu rounds each", (unsigned long long)r->rounds);
	json_object_set_new(o, "probe", json_string(buf));
}

const struct bm_probe bm_probe_vulkan = {
	.api = "vulkan", .title = "Vulkan", .cpu_signal = "vkSignalSemaphore", .km_submit_estimate_ns = 0,
	.open = vkp_open, .no_analog = vkp_no_analog, .round = vkp_round, .describe = vkp_describe,
	.close = vkp_close,
};
