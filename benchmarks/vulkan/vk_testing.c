/* benchmarks/vulkan/vk_testing.c — tests only: contract in vk_testing.h. */
#include <stdlib.h>

#include "benchmarks/vulkan/vk_graph_internal.h"
#include "benchmarks/vulkan/vk_testing.h"

static VkResult VKAPI_CALL vkg_fake_counter(VkDevice d, VkSemaphore s, uint64_t *v)
{
	(void)d, (void)s;
	*v = 0;                             /* no command buffer to account */
	return VK_SUCCESS;
}

void *bm_vkg_fake_new(double period_ns, PFN_vkGetCalibratedTimestampsEXT calibrated)
{
	struct vkg *g = calloc(1, sizeof(*g));
	struct bm_queue *q = calloc(1, sizeof(*q));
	if (!g || !q) {
		free(g);
		free(q);
		return NULL;
	}
	pthread_mutex_init(&g->lock, NULL);
	g->vk.fn.vkGetSemaphoreCounterValue = vkg_fake_counter;
	g->vk.fn.vkGetCalibratedTimestampsEXT = calibrated;
	g->ts_period_ns = period_ns;
	q->qp = (VkQueryPool)(uintptr_t)1;  /* never called: only "has timestamps" */
	g->q[0] = q;
	g->nq = 1;
	g->tracing = true;
	return g;
}

void bm_vkg_fake_free(void *be)
{
	struct vkg *g = be;
	free(g->tev);
	free(g->names);
	free(g->q[0]);
	pthread_mutex_destroy(&g->lock);
	free(g);
}

int bm_vkg_fake_calibrate(void *be)
{
	return vkg_clock_calibrate(be);
}

void bm_vkg_fake_sample(void *be, uint64_t host0, uint64_t host1, uint64_t tick0, uint64_t tick1)
{
	vkg_clock_sample(be, host0, host1, tick0, tick1);
}

void bm_vkg_fake_second_queue(void *be)
{
	struct vkg *g = be;
	g->queue[0] = (VkQueue)(uintptr_t)0x10;   /* never called: only told apart */
	g->queue[1] = (VkQueue)(uintptr_t)0x20;
	g->q[0]->phys = 1;
}

void bm_vkg_fake_cap(void *be, size_t cap)
{
	((struct vkg *)be)->tev_max = cap;
}

void bm_vkg_fake_work(void *be, uint64_t t0, uint64_t t1)
{
	struct vkg *g = be;
	pthread_mutex_lock(&g->lock);
	vkg_trace_add_locked(g, &(struct vkg_tev){ .kind = VKG_T_WORK, .q = 0, .t0 = t0, .t1 = t1 });
	pthread_mutex_unlock(&g->lock);
}

unsigned bm_vkg_fake_name(void *be, const char *name)
{
	struct vkg *g = be;
	pthread_mutex_lock(&g->lock);
	uint8_t i = vkg_name_locked(g, name);
	pthread_mutex_unlock(&g->lock);
	return i;
}

const char *bm_vkg_fake_name_text(void *be, unsigned i)
{
	return vkg_name_text(be, (uint8_t)i);
}

int bm_vkg_fake_spans(void *be, uint64_t *t0, uint64_t *t1, size_t max, size_t *n)
{
	struct vkg *g = be;
	return vkg_work_spans(g, g->q[0], t0, t1, max, n);
}

int bm_vkg_cal_slope(int (*measure)(void *ctx, uint32_t loops, double *ns), void *ctx, double *t_short,
		     double *t_full)
{
	return vkg_cal_slope(measure, ctx, t_short, t_full);
}
