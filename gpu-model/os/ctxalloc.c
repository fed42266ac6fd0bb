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

#include "gpu-model/os/os_internal.h"

int os_ctx_alloc_create(struct os_adapter *a, struct hw_queue *q, size_t bytes, struct hw_ctx_alloc **out)
{
	struct hw_ctx_alloc *c;
	int rc = hw_ctx_alloc_create(a->hw, bytes, &c);
	if (rc)
		return rc;
	hw_queue_set_ctx_alloc(q, c);
	os_ddi_log(a, OS_DDI_CREATE_CONTEXT_ALLOCATION, (uint64_t)(uintptr_t)c, bytes);
	*out = c;
	return 0;
}

void os_ctx_alloc_destroy(struct os_adapter *a, struct hw_ctx_alloc **c)
{
	if (!*c)
		return;
	hw_ctx_alloc_destroy(*c);
	os_ddi_log(a, OS_DDI_DESTROY_CONTEXT_ALLOCATION, (uint64_t)(uintptr_t)*c, 0);
	*c = NULL;
}
