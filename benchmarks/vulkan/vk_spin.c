/* benchmarks/vulkan/vk_spin.c — work of a given length on a Vulkan device:
 * the spin shader's pipeline (spin.comp, its SPIR-V embedded from
 * spin.spv.h), the loop count per nanosecond calibrated from GPU timestamps
 * (the host clock where the queue has none), and a batch's command buffer.
 * Contract in vk_graph_internal.h.
 *
 * Every logical queue writes its own slot of one storage buffer (a dynamic
 * offset of VKG_SLOT bytes per queue), and every dispatch is preceded by a
 * compute-to-compute barrier: a queue's dispatches follow each other in
 * submission order on its device queue, and no two queues write the same
 * bytes, so the synchronization validation has nothing to report. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "benchmarks/vulkan/spin.spv.h"
#include "benchmarks/vulkan/vk_graph_internal.h"
#include "lockfree/arch.h"

#define VKG_DISPATCH_LOOPS 60000u       /* turns of one dispatch: below llvmpipe's 65535 cap on a loop */
#define VKG_CAL_SHORT 2000u             /* calibration: the loop rate is the slope between a short */
#define VKG_CAL_TRIES 3                 /* and a full dispatch, each the fastest of this many */
#define VKG_CAL_ROUNDS 8                /* rounds of both while the full one is not the longer: on a busy
					 * host (lavapipe runs on its CPUs) every short try of one round can
					 * be preempted past a full one; a device that does not loop fails all */

struct vkg_cal_ctx {
	struct vkg *g;
	struct vkg_cal *c;
};

static int vkg_vk_err(VkResult r, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: VkResult %d", what, (int)r);
	return r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY ? -ENOMEM : -EIO;
}

/* The output buffer: one slot per logical queue and one for calibration. */
static int vkg_spin_buffer(struct vkg *g, char *err, size_t errlen)
{
	const struct bm_vk_fn *fn = &g->vk.fn;
	VkBufferCreateInfo bi = { .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = (VKG_QUEUES + 1) * VKG_SLOT,
				  .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, .sharingMode = VK_SHARING_MODE_CONCURRENT,
				  .queueFamilyIndexCount = g->nphys, .pQueueFamilyIndices = g->family };
	if (g->nphys < 2 || g->family[0] == g->family[1]) {
		bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
		bi.queueFamilyIndexCount = 0;
		bi.pQueueFamilyIndices = NULL;
	}
	VkResult r = fn->vkCreateBuffer(g->d, &bi, NULL, &g->buf);
	if (r)
		return vkg_vk_err(r, "vkCreateBuffer", err, errlen);
	VkMemoryRequirements mr;
	fn->vkGetBufferMemoryRequirements(g->d, g->buf, &mr);
	uint32_t type = 0;
	while (type < 32 && !(mr.memoryTypeBits & (1u << type)))
		type++;                         /* any type the buffer takes: the host never reads it */
	VkMemoryAllocateInfo ai = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = mr.size,
				    .memoryTypeIndex = type };
	if ((r = fn->vkAllocateMemory(g->d, &ai, NULL, &g->mem)))
		return vkg_vk_err(r, "vkAllocateMemory", err, errlen);
	if ((r = fn->vkBindBufferMemory(g->d, g->buf, g->mem, 0)))
		return vkg_vk_err(r, "vkBindBufferMemory", err, errlen);
	return 0;
}

static int vkg_spin_layout(struct vkg *g, char *err, size_t errlen)
{
	const struct bm_vk_fn *fn = &g->vk.fn;
	VkDescriptorSetLayoutBinding b = { .binding = 0, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC,
					   .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT };
	VkDescriptorSetLayoutCreateInfo li = { .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
					       .bindingCount = 1, .pBindings = &b };
	VkResult r = fn->vkCreateDescriptorSetLayout(g->d, &li, NULL, &g->dsl);
	if (r)
		return vkg_vk_err(r, "vkCreateDescriptorSetLayout", err, errlen);
	VkPushConstantRange pc = { .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = 8 };
	VkPipelineLayoutCreateInfo pi = { .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1,
					  .pSetLayouts = &g->dsl, .pushConstantRangeCount = 1, .pPushConstantRanges = &pc };
	if ((r = fn->vkCreatePipelineLayout(g->d, &pi, NULL, &g->layout)))
		return vkg_vk_err(r, "vkCreatePipelineLayout", err, errlen);
	VkDescriptorPoolSize ps = { .type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC, .descriptorCount = 1 };
	VkDescriptorPoolCreateInfo dp = { .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = 1,
					  .poolSizeCount = 1, .pPoolSizes = &ps };
	if ((r = fn->vkCreateDescriptorPool(g->d, &dp, NULL, &g->dpool)))
		return vkg_vk_err(r, "vkCreateDescriptorPool", err, errlen);
	VkDescriptorSetAllocateInfo da = { .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
					   .descriptorPool = g->dpool, .descriptorSetCount = 1, .pSetLayouts = &g->dsl };
	if ((r = fn->vkAllocateDescriptorSets(g->d, &da, &g->set)))
		return vkg_vk_err(r, "vkAllocateDescriptorSets", err, errlen);
	VkDescriptorBufferInfo bi = { .buffer = g->buf, .offset = 0, .range = VKG_SLOT };
	VkWriteDescriptorSet w = { .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = g->set, .dstBinding = 0,
				   .descriptorCount = 1, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC,
				   .pBufferInfo = &bi };
	fn->vkUpdateDescriptorSets(g->d, 1, &w, 0, NULL);
	return 0;
}

static int vkg_spin_pipeline(struct vkg *g, char *err, size_t errlen)
{
	const struct bm_vk_fn *fn = &g->vk.fn;
	VkShaderModuleCreateInfo mi = { .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
					.codeSize = sizeof(vkg_spin_spv), .pCode = vkg_spin_spv };
	VkResult r = fn->vkCreateShaderModule(g->d, &mi, NULL, &g->module);
	if (r)
		return vkg_vk_err(r, "vkCreateShaderModule", err, errlen);
	VkComputePipelineCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
		.stage = { .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
			   .stage = VK_SHADER_STAGE_COMPUTE_BIT, .module = g->module, .pName = "main" },
		.layout = g->layout,
	};
	if ((r = fn->vkCreateComputePipelines(g->d, VK_NULL_HANDLE, 1, &ci, NULL, &g->pipe)))
		return vkg_vk_err(r, "vkCreateComputePipelines", err, errlen);
	return 0;
}

/* One dispatch of `loops` turns after every earlier write of the slot on
 * this device queue (submission order). */
static void vkg_spin_dispatch(struct vkg *g, VkCommandBuffer cb, uint32_t loops, uint32_t seed)
{
	const struct bm_vk_fn *fn = &g->vk.fn;
	VkMemoryBarrier mb = { .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
			       .dstAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT };
	fn->vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
				 &mb, 0, NULL, 0, NULL);
	uint32_t pc[2] = { loops, seed };
	fn->vkCmdPushConstants(cb, g->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(pc), pc);
	fn->vkCmdDispatch(cb, 1, 1, 1);
}

/* Into cb (recording): bind, then per duration its turns in dispatches of
 * at most VKG_DISPATCH_LOOPS.  loops_per_ns 0: ns[i] are turns themselves. */
static void vkg_spin_cmds(struct vkg *g, VkCommandBuffer cb, unsigned slot, const uint64_t *ns, size_t n)
{
	uint32_t offset = slot * VKG_SLOT;
	g->vk.fn.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, g->pipe);
	g->vk.fn.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, g->layout, 0, 1, &g->set, 1, &offset);
	for (size_t i = 0; i < n; i++) {
		double turns = g->loops_per_ns > 0 ? (double)ns[i] * g->loops_per_ns : (double)ns[i];
		double parts = turns > VKG_DISPATCH_LOOPS ? (turns + VKG_DISPATCH_LOOPS - 1) / VKG_DISPATCH_LOOPS : 1;
		uint32_t k = parts > 4096 ? 4096 : (uint32_t)parts;   /* at most about a second on llvmpipe */
		for (uint32_t j = 0; j < k; j++)
			vkg_spin_dispatch(g, cb, (uint32_t)(turns / k), (uint32_t)(i + j) + 1);
	}
}

/* Command buffer i of q completed: its work's GPU time (its first and
 * last timestamps) into q->busy_ns, once; its lists' spans to the trace.
 * g->lock held. */
static void vkg_cb_account_locked(struct vkg *g, struct bm_queue *q, size_t i)
{
	if (!q->cb_timed[i])
		return;
	q->cb_timed[i] = false;
	uint64_t ts[VKG_TS];
	uint32_t n = (uint32_t)q->cb_nl[i] + 1;
	if (g->vk.fn.vkGetQueryPoolResults(g->d, q->qp, (uint32_t)(VKG_TS * i), n, sizeof(ts), ts, sizeof(uint64_t),
					VK_QUERY_RESULT_64_BIT))
		return;                         /* not available: its batch did not run (device lost) */
	uint32_t bits = g->ts_bits[q->phys];
	uint64_t mask = bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
	q->busy_ns += (uint64_t)((double)((ts[n - 1] - ts[0]) & mask) * g->ts_period_ns);
	if (g->tracing)
		vkg_trace_work_locked(g, q, i, ts);
}

void vkg_busy_locked(struct vkg *g, struct bm_queue *q)
{
	uint64_t done = 0;
	g->vk.fn.vkGetSemaphoreCounterValue(g->d, q->progress, &done);
	for (size_t i = 0; i < q->ncb; i++)
		if (q->cb_tag[i] <= done)
			vkg_cb_account_locked(g, q, i);
}

/* A free command buffer of q (one whose batch completed, or a new one):
 * its index in *out. */
static int vkg_cb_get_locked(struct vkg *g, struct bm_queue *q, size_t *out)
{
	const struct bm_vk_fn *fn = &g->vk.fn;
	uint64_t done = 0;
	fn->vkGetSemaphoreCounterValue(g->d, q->progress, &done);
	for (size_t k = 0; k < q->ncb; k++) {
		size_t i = (q->next_cb + k) % q->ncb;
		if (q->cb_tag[i] <= done) {
			vkg_cb_account_locked(g, q, i);
			q->next_cb = (i + 1) % q->ncb;
			*out = i;
			q->cb_tag[i] = q->submitted + 1;   /* the batch it goes into */
			return fn->vkResetCommandBuffer(q->cb[i], 0) ? -EIO : 0;
		}
	}
	if (q->ncb == VKG_CBS)
		return -EAGAIN;                 /* VKG_CBS batches in flight on one queue */
	VkCommandBufferAllocateInfo ai = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = q->pool,
					   .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1 };
	if (fn->vkAllocateCommandBuffers(g->d, &ai, &q->cb[q->ncb]))
		return -ENOMEM;
	q->cb_tag[q->ncb] = q->submitted + 1;
	*out = q->ncb++;
	return 0;
}

int vkg_record_locked(struct vkg *g, struct bm_queue *q, const struct vkg_op *o, VkCommandBuffer *out)
{
	size_t i;
	int rc = vkg_cb_get_locked(g, q, &i);
	if (rc)
		return rc;
	*out = q->cb[i];
	VkCommandBufferBeginInfo bi = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT };
	if (g->vk.fn.vkBeginCommandBuffer(*out, &bi))
		return -EIO;
	uint32_t base = (uint32_t)(VKG_TS * i);
	if (q->qp) {                        /* the work's GPU time: GPU idle per queue type, the trace's spans */
		g->vk.fn.vkCmdResetQueryPool(*out, q->qp, base, (uint32_t)o->nl + 1);
		g->vk.fn.vkCmdWriteTimestamp(*out, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, q->qp, base);
	}
	/* each list's commands, a timestamp after each (its end, the next one's start: every
	 * dispatch waits for the ones before it, vkg_spin_dispatch's barrier) */
	for (size_t j = 0, from = 0; j < o->nl; from = o->lend[j++]) {
		vkg_spin_cmds(g, *out, q->slot, o->ns + from, o->lend[j] - from);
		if (q->qp)
			g->vk.fn.vkCmdWriteTimestamp(*out, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, q->qp, base + (uint32_t)j + 1);
	}
	if (q->qp) {
		q->cb_timed[i] = true;
		q->cb_nl[i] = (uint8_t)o->nl;
		memcpy(q->cb_lname[i], o->lname, o->nl);
	}
	return g->vk.fn.vkEndCommandBuffer(*out) ? -EIO : 0;
}

/* ---- calibration ---- */

struct vkg_cal {
	VkCommandPool pool;
	VkCommandBuffer cb;
	VkQueryPool qp;
	VkSemaphore sem;
	uint64_t value;
};

static int vkg_cal_up(struct vkg *g, struct vkg_cal *c)
{
	const struct bm_vk_fn *fn = &g->vk.fn;
	VkCommandPoolCreateInfo pi = { .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
				       .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, .queueFamilyIndex = g->family[0] };
	VkCommandBufferAllocateInfo ai = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
					   .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1 };
	VkQueryPoolCreateInfo qi = { .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP,
				     .queryCount = 2 };
	VkSemaphoreTypeCreateInfo ti = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
					 .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE };
	VkSemaphoreCreateInfo si = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &ti };
	if (fn->vkCreateCommandPool(g->d, &pi, NULL, &c->pool))
		return -EIO;
	ai.commandPool = c->pool;
	if (fn->vkAllocateCommandBuffers(g->d, &ai, &c->cb) || fn->vkCreateSemaphore(g->d, &si, NULL, &c->sem))
		return -EIO;
	if (g->ts_bits[0] && fn->vkCreateQueryPool(g->d, &qi, NULL, &c->qp))
		return -EIO;
	return 0;
}

static void vkg_cal_down(struct vkg *g, struct vkg_cal *c)
{
	const struct bm_vk_fn *fn = &g->vk.fn;
	if (c->qp)
		fn->vkDestroyQueryPool(g->d, c->qp, NULL);
	if (c->sem)
		fn->vkDestroySemaphore(g->d, c->sem, NULL);
	if (c->pool)
		fn->vkDestroyCommandPool(g->d, c->pool, NULL);   /* frees its command buffer */
}

/* One spin of `loops`: its GPU time (timestamps) or its host time, in ns. */
static int vkg_cal_once(struct vkg *g, struct vkg_cal *c, uint32_t loops, double *ns)
{
	const struct bm_vk_fn *fn = &g->vk.fn;
	VkCommandBufferBeginInfo bi = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT };
	if (fn->vkResetCommandBuffer(c->cb, 0) || fn->vkBeginCommandBuffer(c->cb, &bi))
		return -EIO;
	if (c->qp) {
		fn->vkCmdResetQueryPool(c->cb, c->qp, 0, 2);
		fn->vkCmdWriteTimestamp(c->cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, c->qp, 0);
	}
	double save = g->loops_per_ns;
	g->loops_per_ns = 0;                /* the durations are turns */
	uint64_t n = loops;
	vkg_spin_cmds(g, c->cb, VKG_QUEUES, &n, 1);
	g->loops_per_ns = save;
	if (c->qp)
		fn->vkCmdWriteTimestamp(c->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, c->qp, 1);
	if (fn->vkEndCommandBuffer(c->cb))
		return -EIO;
	uint64_t v = ++c->value;
	VkTimelineSemaphoreSubmitInfo ts = { .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
					     .signalSemaphoreValueCount = 1, .pSignalSemaphoreValues = &v };
	VkSubmitInfo si = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = &ts, .commandBufferCount = 1,
			    .pCommandBuffers = &c->cb, .signalSemaphoreCount = 1, .pSignalSemaphores = &c->sem };
	VkSemaphoreWaitInfo wi = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .semaphoreCount = 1,
				   .pSemaphores = &c->sem, .pValues = &v };
	uint64_t t0 = lf_now_ns();
	if (fn->vkQueueSubmit(g->queue[0], 1, &si, VK_NULL_HANDLE) ||
	    fn->vkWaitSemaphores(g->d, &wi, (uint64_t)(g->stall_ns > 0 ? g->stall_ns : 2000000000ll)))
		return -ETIMEDOUT;
	uint64_t t1 = lf_now_ns();
	*ns = (double)(t1 - t0);
	if (!c->qp)
		return 0;
	uint64_t ts2[2];
	if (fn->vkGetQueryPoolResults(g->d, c->qp, 0, 2, sizeof(ts2), ts2, sizeof(uint64_t),
				      VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT))
		return -EIO;
	uint64_t mask = g->ts_bits[0] >= 64 ? UINT64_MAX : (1ull << g->ts_bits[0]) - 1;
	*ns = (double)((ts2[1] - ts2[0]) & mask) * g->ts_period_ns;   /* wraps within the valid bits */
	vkg_clock_sample(g, t0, t1, ts2[0], ts2[1]);   /* the GPU clock on the host's (without calibrated timestamps) */
	return 0;
}

/* The fastest of VKG_CAL_TRIES dispatches of `loops` turns, in ns. */
static int vkg_cal_best(vkg_cal_measure_fn measure, void *ctx, uint32_t loops, double *best)
{
	*best = 0;
	for (int k = 0; k < VKG_CAL_TRIES; k++) {
		double ns;
		int rc = measure(ctx, loops, &ns);
		if (rc)
			return rc;
		if (!k || ns < *best)
			*best = ns;
	}
	return 0;
}

int vkg_cal_slope(vkg_cal_measure_fn measure, void *ctx, double *t_short, double *t_full)
{
	*t_short = *t_full = 0;
	for (int r = 0; r < VKG_CAL_ROUNDS; r++) {
		double s, f;
		int rc = vkg_cal_best(measure, ctx, VKG_CAL_SHORT, &s);
		if (!rc)
			rc = vkg_cal_best(measure, ctx, VKG_DISPATCH_LOOPS, &f);
		if (rc)
			return rc;
		if (!r || s < *t_short)
			*t_short = s;
		if (!r || f < *t_full)
			*t_full = f;
		if (*t_full > *t_short)
			return 0;
	}
	return -EIO;
}

static int vkg_cal_measure(void *ctx, uint32_t loops, double *ns)
{
	struct vkg_cal_ctx *m = ctx;
	return vkg_cal_once(m->g, m->c, loops, ns);
}

/* Turns per ns: the slope between a short and a full dispatch, so that the
 * fixed cost of a dispatch is not counted as spinning (it is the device's
 * own, and stays in every dispatch the work makes). */
static int vkg_calibrate(struct vkg *g, char *err, size_t errlen)
{
	struct vkg_cal c;
	memset(&c, 0, sizeof(c));
	double t_short = 0, t_full = 0, warm;
	int rc = vkg_cal_up(g, &c);
	if (!rc)
		rc = vkg_cal_once(g, &c, 16, &warm);   /* not measured: the first dispatch may compile the shader */
	struct vkg_cal_ctx m = { g, &c };
	if (!rc)
		rc = vkg_cal_slope(vkg_cal_measure, &m, &t_short, &t_full);
	vkg_cal_down(g, &c);
	if (rc == -EIO) {
		snprintf(err, errlen, "calibrating the spin shader: %u turns took no longer than %u (%.0f ns, %.0f ns, "
			 "the fastest of %d rounds): the device does not run the loop", VKG_DISPATCH_LOOPS, VKG_CAL_SHORT,
			 t_full, t_short, VKG_CAL_ROUNDS);
		return rc;
	}
	if (rc) {
		snprintf(err, errlen, "calibrating the spin shader: %s", strerror(-rc));
		return rc;
	}
	double dt = t_full - t_short;
	g->loops_per_ns = (double)(VKG_DISPATCH_LOOPS - VKG_CAL_SHORT) / dt;
	g->dispatch_ns = t_short;
	g->calibrated_by_timestamps = g->ts_bits[0] != 0;
	return 0;
}

int vkg_spin_up(struct vkg *g, char *err, size_t errlen)
{
	int rc = vkg_spin_buffer(g, err, errlen);
	if (!rc)
		rc = vkg_spin_layout(g, err, errlen);
	if (!rc)
		rc = vkg_spin_pipeline(g, err, errlen);
	if (!rc)
		rc = vkg_calibrate(g, err, errlen);
	return rc;
}

void vkg_spin_down(struct vkg *g)
{
	const struct bm_vk_fn *fn = &g->vk.fn;
	if (g->pipe)
		fn->vkDestroyPipeline(g->d, g->pipe, NULL);
	if (g->module)
		fn->vkDestroyShaderModule(g->d, g->module, NULL);
	if (g->dpool)
		fn->vkDestroyDescriptorPool(g->d, g->dpool, NULL);
	if (g->layout)
		fn->vkDestroyPipelineLayout(g->d, g->layout, NULL);
	if (g->dsl)
		fn->vkDestroyDescriptorSetLayout(g->d, g->dsl, NULL);
	if (g->buf)
		fn->vkDestroyBuffer(g->d, g->buf, NULL);
	if (g->mem)
		fn->vkFreeMemory(g->d, g->mem, NULL);
}
