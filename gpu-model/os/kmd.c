/* gpu-model/os/kmd.c — the KMD's native fence DDI table and the OS's calls
 * through it.
 *
 * Seed native-gpu-fence, "KMD DDIs to create, open, close, and destroy a
 * native fence object": DRIVER_INITIALIZATION_DATA gains DxgkDdiCreateNativeFence,
 * DxgkDdiDestroyNativeFence, DxgkDdiOpenNativeFence, DxgkDdiCloseNativeFence,
 * DxgkDdiSetNativeFenceLogBuffer and DxgkDdiUpdateNativeFenceLogs.  The
 * KMD's half (the kmd_* functions) fills the table at initialization; the
 * OS's half (os_kmd_*) checks it and makes every native fence DDI call
 * through it, recording each call in the DDI log (ddi.c).  In os/ because
 * the KMD and Dxgkrnl are one analog there (os.h); the KMD's work is the
 * model's hardware calls (hw_queue_set_log, hw_log_update) and, for fence
 * objects, nothing more than the storage hw/ already holds.
 */
#include <errno.h>
#include <stdio.h>

#include "gpu-model/os/os_internal.h"

/* ---- the KMD's half ---- */

static int kmd_create_native_fence(struct os_adapter *a, uint64_t global, uint64_t initial)
{
	return 0;   /* the fence's storage is hw's already (hw_fence_alloc) */
}

static int kmd_destroy_native_fence(struct os_adapter *a, uint64_t global)
{
	return 0;
}

static int kmd_open_native_fence(struct os_adapter *a, uint64_t global, uint64_t local)
{
	return 0;   /* process-specific structures: none in the model */
}

static int kmd_close_native_fence(struct os_adapter *a, uint64_t local, uint64_t global)
{
	return 0;
}

static int kmd_set_native_fence_log_buffer(struct os_adapter *a, struct hw_queue *q, enum hw_log_type t,
					   struct hw_log *log)
{
	hw_queue_set_log(q, t, log);
	return 0;
}

/* "KMD inserts a memory barrier to each given HWQueue" */
static int kmd_update_native_fence_logs(struct os_adapter *a, struct hw_queue *const *q, size_t n)
{
	for (size_t i = 0; i < n; i++)
		hw_log_update(q[i]);
	return 0;
}

static const char *const os_nf_ddi_names[OS_NATIVE_FENCE_DDIS] = {
	"DxgkDdiCreateNativeFence", "DxgkDdiDestroyNativeFence", "DxgkDdiOpenNativeFence",
	"DxgkDdiCloseNativeFence", "DxgkDdiSetNativeFenceLogBuffer", "DxgkDdiUpdateNativeFenceLogs",
};

const char *os_native_fence_ddi_name(unsigned i)
{
	return i < OS_NATIVE_FENCE_DDIS ? os_nf_ddi_names[i] : "?";
}

/* The table's entries in the order of the seed's list (and of the names). */
static void os_nf_ddi_set(const struct os_native_fence_ddis *t, bool set[OS_NATIVE_FENCE_DDIS])
{
	set[0] = t->DxgkDdiCreateNativeFence;
	set[1] = t->DxgkDdiDestroyNativeFence;
	set[2] = t->DxgkDdiOpenNativeFence;
	set[3] = t->DxgkDdiCloseNativeFence;
	set[4] = t->DxgkDdiSetNativeFenceLogBuffer;
	set[5] = t->DxgkDdiUpdateNativeFenceLogs;
}

int os_kmd_driver_init(struct os_adapter *a, char *err, size_t errlen)
{
	struct os_native_fence_ddis *t = &a->kmd;
	*t = (struct os_native_fence_ddis){ 0 };
	if (!a->cfg.caps.native_fence)
		return 0;   /* a driver without native fences fills none */
	*t = (struct os_native_fence_ddis){
		.DxgkDdiCreateNativeFence = kmd_create_native_fence,
		.DxgkDdiDestroyNativeFence = kmd_destroy_native_fence,
		.DxgkDdiOpenNativeFence = kmd_open_native_fence,
		.DxgkDdiCloseNativeFence = kmd_close_native_fence,
		.DxgkDdiSetNativeFenceLogBuffer = kmd_set_native_fence_log_buffer,
		.DxgkDdiUpdateNativeFenceLogs = kmd_update_native_fence_logs,
	};
	if (a->cfg.fault == OS_FAULT_KMD_DDI_TABLE_INCOMPLETE)
		t->DxgkDdiUpdateNativeFenceLogs = NULL;   /* broken on purpose */
	/* the OS's check: a driver advertising native fences provides all six */
	bool set[OS_NATIVE_FENCE_DDIS];
	os_nf_ddi_set(t, set);
	for (unsigned i = 0; i < OS_NATIVE_FENCE_DDIS; i++)
		if (!set[i]) {
			snprintf(err, errlen,
				 "native_fence advertised without %s in DRIVER_INITIALIZATION_DATA: adapter initialization fails",
				 os_nf_ddi_names[i]);
			return -EINVAL;
		}
	return 0;
}

unsigned os_adapter_native_fence_ddis(const struct os_adapter *a, struct os_native_fence_ddis *out)
{
	if (out)
		*out = a->kmd;
	bool set[OS_NATIVE_FENCE_DDIS];
	os_nf_ddi_set(&a->kmd, set);
	unsigned n = 0;
	for (unsigned i = 0; i < OS_NATIVE_FENCE_DDIS; i++)
		n += set[i];
	return n;
}

/* ---- the OS's half: every call through the table, logged ---- */

void os_kmd_create_native_fence(struct os_adapter *a, uint64_t global, uint64_t initial)
{
	os_ddi_log(a, OS_DDI_CREATE_NATIVE_FENCE, global, initial);
	a->kmd.DxgkDdiCreateNativeFence(a, global, initial);
}

void os_kmd_destroy_native_fence(struct os_adapter *a, uint64_t global)
{
	os_ddi_log(a, OS_DDI_DESTROY_NATIVE_FENCE, global, 0);
	a->kmd.DxgkDdiDestroyNativeFence(a, global);
}

void os_kmd_open_native_fence(struct os_adapter *a, uint64_t global, uint64_t local)
{
	os_ddi_log(a, OS_DDI_OPEN_NATIVE_FENCE, local, global);
	a->kmd.DxgkDdiOpenNativeFence(a, global, local);
}

void os_kmd_close_native_fence(struct os_adapter *a, uint64_t local, uint64_t global)
{
	os_ddi_log(a, OS_DDI_CLOSE_NATIVE_FENCE, local, global);
	a->kmd.DxgkDdiCloseNativeFence(a, local, global);
}

void os_kmd_set_native_fence_log_buffer(struct os_adapter *a, struct hw_queue *q, enum hw_log_type t,
					struct hw_log *log)
{
	os_ddi_log(a, OS_DDI_SET_NATIVE_FENCE_LOG_BUFFER, hw_queue_handle(q), t);
	a->kmd.DxgkDdiSetNativeFenceLogBuffer(a, q, t, log);
}

void os_kmd_update_native_fence_logs(struct os_adapter *a, struct hw_queue *const *q, size_t n, uint64_t pos)
{
	if (!n)
		return;
	os_ddi_log_batch(a, OS_DDI_UPDATE_NATIVE_FENCE_LOGS, hw_queue_handle(q[0]), pos, (uint32_t)n);
	a->kmd.DxgkDdiUpdateNativeFenceLogs(a, q, n);
}
