/* gpu-model/os/ddi.c — the DDI log: every DxgkDdi* call the OS makes on an
 * adapter (create, destroy, CPU updates of native fences, MonitoredValue
 * updates; a batched call is one record with its count), recorded wait-free
 * by any thread and read back by tests and scenarios.  Calls only lockfree/.
 */
#include <stddef.h>

#include "gpu-model/os/os_internal.h"

void os_ddi_log(struct os_adapter *a, enum os_ddi d, uint64_t handle, uint64_t value)
{
	os_ddi_log_batch(a, d, handle, value, 1);
}

void os_ddi_log_batch(struct os_adapter *a, enum os_ddi d, uint64_t handle, uint64_t value, uint32_t count)
{
	struct os_ddi_log *l = &a->ddi;
	atomic_fetch_add_explicit(&l->count[d], 1, memory_order_relaxed);
	/* a full log costs one load, not a contended fetch-add */
	if (atomic_load_explicit(&l->n, memory_order_relaxed) >= OS_DDI_LOG_MAX)
		return;
	uint64_t i = atomic_fetch_add_explicit(&l->n, 1, memory_order_relaxed);
	if (i >= OS_DDI_LOG_MAX)
		return;
	l->rec[i].ddi = d;
	l->rec[i].handle = handle;
	l->rec[i].value = value;
	l->rec[i].count = count;
	/* release: a reader that sees ready sees the fields (pairs with the acquire below) */
	atomic_store_explicit(&l->rec[i].ready, 1, memory_order_release);
}

size_t os_adapter_ddi_log(struct os_adapter *a, struct os_ddi_call *out, size_t max)
{
	struct os_ddi_log *l = &a->ddi;
	uint64_t n = atomic_load_explicit(&l->n, memory_order_acquire);
	size_t k = 0;
	for (uint64_t i = 0; i < n && i < OS_DDI_LOG_MAX && k < max; i++) {
		/* a slot reserved but not yet written ends the ordered prefix */
		if (!atomic_load_explicit(&l->rec[i].ready, memory_order_acquire))
			break;
		out[k].ddi = (enum os_ddi)l->rec[i].ddi;
		out[k].handle = l->rec[i].handle;
		out[k].value = l->rec[i].value;
		out[k].count = l->rec[i].count;
		k++;
	}
	return k;
}

uint64_t os_adapter_ddi_count(struct os_adapter *a, enum os_ddi d)
{
	return d < OS_DDI_KINDS ? atomic_load_explicit(&a->ddi.count[d], memory_order_relaxed) : 0;
}

const char *os_ddi_name(enum os_ddi d)
{
	static const char *const names[OS_DDI_KINDS] = {
		[OS_DDI_CREATE_NATIVE_FENCE] = "DxgkDdiCreateNativeFence",
		[OS_DDI_OPEN_NATIVE_FENCE] = "DxgkDdiOpenNativeFence",
		[OS_DDI_CLOSE_NATIVE_FENCE] = "DxgkDdiCloseNativeFence",
		[OS_DDI_DESTROY_NATIVE_FENCE] = "DxgkDdiDestroyNativeFence",
		[OS_DDI_UPDATE_CV_FROM_CPU] = "DxgkDdiUpdateCurrentValuesFromCpu",
		[OS_DDI_UPDATE_CV_NOTIFY_ONLY] = "DxgkDdiUpdateCurrentValuesFromCpu(NotificationOnly)",
		[OS_DDI_PREEMPT_COMMAND] = "DxgkDdiPreemptCommand",
		[OS_DDI_RESET_ENGINE] = "DxgkDdiResetEngine",
		[OS_DDI_SUBMIT_CONTEXT_SWITCH] = "DxgkDdiSubmitCommand(ContextSwitch)",
		[OS_DDI_CREATE_CONTEXT_ALLOCATION] = "DxgkCbCreateContextAllocation",
		[OS_DDI_DESTROY_CONTEXT_ALLOCATION] = "DxgkCbDestroyContextAllocation",
		[OS_DDI_UPDATE_NATIVE_FENCE_LOGS] = "DxgkDdiUpdateNativeFenceLogs",
		[OS_DDI_SET_NATIVE_FENCE_LOG_BUFFER] = "DxgkDdiSetNativeFenceLogBuffer",
		[OS_DDI_UPDATE_MONITORED_VALUES] = "DxgkDdiUpdateMonitoredValues",
		[OS_DDI_BUILD_PAGING_BUFFER] = "DxgkDdiBuildPagingBuffer",
		[OS_DDI_QUERY_UMS_CAPS] = "DxgkDdiQueryAdapterInfo(DXGKQAITYPE_USERMODESUBMISSION_CAPS)",
		[OS_DDI_SUSPEND_CONTEXT] = "DxgkDdiSuspendContext",
		[OS_DDI_RESUME_CONTEXT] = "DxgkDdiResumeContext",
		[OS_DDI_CREATE_DOORBELL] = "DxgkDdiCreateDoorbell",
		[OS_DDI_CONNECT_DOORBELL] = "DxgkDdiConnectDoorbell",
		[OS_DDI_DISCONNECT_DOORBELL] = "DxgkDdiDisconnectDoorbell",
		[OS_DDI_DESTROY_DOORBELL] = "DxgkDdiDestroyDoorbell",
		[OS_DDI_NOTIFY_WORK_SUBMISSION] = "DxgkDdiNotifyWorkSubmission",
		[OS_DDI_EVICT_RING_ALLOCATION] = "DxgkDdiBuildPagingBuffer(Transfer: ring allocation evicted)",
		[OS_DDI_RESTORE_RING_ALLOCATION] = "DxgkDdiBuildPagingBuffer(Transfer: ring allocation restored)",
	};
	return d < OS_DDI_KINDS ? names[d] : "?";
}
