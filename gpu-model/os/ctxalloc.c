/* gpu-model/os/ctxalloc.c — context allocations: the DxgkCbCreateContextAllocation
 * and DxgkCbDestroyContextAllocation analogs (seed gpu-preemption, steps 5-6).
 * Every HW queue the OS creates gets one (kernel-mode: os_queue_create;
 * user-mode: the context's HW queue, device.c) before its first command: the
 * engine saves a preempted or switched-out context to it and restores it from
 * there (gpu-model/hw/preempt.c).  Destroying a context's queue destroys its
 * allocation.  Both calls go to the DDI log.  Contract in os.h ("context
 * allocations").  Calls hw/.
 */
#include <stdint.h>

#include <errno.h>

#include "gpu-model/os/ums_internal.h"

/* One allocation for q (NULL: a device context allocation), in the
 * context segment when there is one (vidmm.c: resident, initialized). */
static int os_ctx_alloc_new(struct os_adapter *a, struct hw_queue *q, size_t bytes, struct hw_ctx_alloc **out)
{
	struct hw_ctx_alloc *c;
	int rc = a->vidmm ? hw_ctx_alloc_create_managed(a->hw, bytes, &c) : hw_ctx_alloc_create(a->hw, bytes, &c);
	if (rc)
		return rc;
	os_ddi_log(a, OS_DDI_CREATE_CONTEXT_ALLOCATION, (uint64_t)(uintptr_t)c, bytes);
	if (a->vidmm && (rc = os_vidmm_add(a, c, q))) {
		hw_ctx_alloc_destroy(c);
		return rc;
	}
	*out = c;
	return 0;
}

int os_ctx_alloc_create(struct os_adapter *a, struct hw_queue *q, size_t bytes, struct hw_ctx_alloc **out)
{
	int rc = os_ctx_alloc_new(a, q, bytes, out);
	if (!rc)
		hw_queue_set_ctx_alloc(q, *out);
	return rc;
}

void os_ctx_alloc_destroy(struct os_adapter *a, struct hw_ctx_alloc **c)
{
	if (!*c)
		return;
	hw_ctx_alloc_destroy(*c);
	os_vidmm_remove(a, *c);
	os_ddi_log(a, OS_DDI_DESTROY_CONTEXT_ALLOCATION, (uint64_t)(uintptr_t)*c, 0);
	*c = NULL;
}

/* A device context allocation for d: resident while d lives, reached by
 * every context of d (those to come too).  u->lock held. */
static int os_dev_ctx_alloc_locked(struct os_ums *u, struct os_device *d, size_t bytes, struct hw_ctx_alloc **out)
{
	if (d->dead)
		return -ENODEV;
	if (d->ctx_alloc)
		return -EEXIST;
	int rc = os_ctx_alloc_new(u->a, NULL, bytes, &d->ctx_alloc);
	if (rc)
		return rc;
	for (struct os_context *c = d->contexts; c; c = c->next)
		for (struct os_hwqueue *q = c->queues; q; q = q->next)
			hw_queue_set_dev_alloc(q->hwq, d->ctx_alloc);
	*out = d->ctx_alloc;
	return 0;
}

int os_create_context_allocation(struct os_ums *u, struct os_createcontextallocation *args)
{
	if (!args->Size)
		return -EINVAL;
	if (args->SharedAcrossContexts) {
		/* a device context allocation: "hContext ... should be set to NULL";
		 * "only for non-system devices" (the system device is NULL) */
		if (args->hContext || !args->hDevice)
			return -EINVAL;
		pthread_mutex_lock(&u->lock);
		int rc = os_dev_ctx_alloc_locked(u, args->hDevice, args->Size, &args->hAllocation);
		pthread_mutex_unlock(&u->lock);
		return rc;
	}
	/* a GPU context allocation: "only for non-system contexts" */
	if (!args->hContext || args->hContext == os_vidmm_paging_queue(u->a))
		return -EINVAL;
	return -EEXIST;   /* the model gives each context its one at creation (os_ctx_alloc_create) */
}
