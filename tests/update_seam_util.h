/* tests/update_seam_util.h — a CPU waiter's DxgkDdiUpdateMonitoredValues with
 * an interrupt for its fence raised in the middle of it (os_test_update_hook,
 * os_test_isr_fence_hook), shared by test_fence_native_core.c (the code that
 * ships) and model_broken.c (the build without the synchronization, which
 * must be caught).
 *
 * Seed native-gpu-fence, "Monitored value": DxgkDdiUpdateMonitoredValues
 * "runs at interrupt level, synchronized with the interrupt handler".  Inside
 * the update (its node added, MonitoredValue lowered, the DDI not yet made)
 * the waiter's thread has the GPU signal the value: CurrentValue passes the
 * lowered MonitoredValue and the CMP interrupts.  The interrupt handler must
 * not handle the fence until the update is whole; the seam waits up to
 * `wait_ns` for it to do so (a handler that does is caught). */
#ifndef UPDATE_SEAM_UTIL_H
#define UPDATE_SEAM_UTIL_H

#include <string.h>

#include "tests/fence_test_util.h"

struct upseam {
	struct os_fence *f;
	struct os_queue *q;
	uint64_t wait_ns;
	unsigned updates;                 /* the waiter thread's */
	_Atomic bool isr_in;              /* the handler took the fence's lock */
	bool isr_in_during_update;
	uint64_t first_logged;            /* the first DxgkDdiUpdateMonitoredValues of f */
};
static struct upseam upseam;

static void upseam_isr(struct os_fence *f)
{
	if (f == upseam.f)
		atomic_store(&upseam.isr_in, true);
}

static void upseam_update(struct os_fence *f, uint64_t v)
{
	if (f != upseam.f || upseam.updates++)
		return;                       /* the first update only */
	fbt_signal_gpu(upseam.q, f, v);   /* CV := v, above the MonitoredValue just lowered */
	uint64_t end = lf_now_ns() + upseam.wait_ns;
	while (!atomic_load(&upseam.isr_in) && lf_now_ns() < end) {
		struct timespec ts = { 0, 200000 };
		nanosleep(&ts, NULL);
	}
	upseam.isr_in_during_update = atomic_load(&upseam.isr_in);
}

/* A native fence, a CPU waiter for 1 whose update meets the interrupt. */
static inline struct upseam upseam_run(uint64_t wait_ns)
{
	memset(&upseam, 0, sizeof(upseam));
	upseam.wait_ns = wait_ns;
	os_test_update_hook = upseam_update;   /* no adapter runs yet */
	os_test_isr_fence_hook = upseam_isr;
	struct os_config cfg;
	os_config_default(&cfg);
	struct os_adapter *a = fbt_adapter(&cfg);
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &upseam.f), 0);
	upseam.q = fbt_queue(a, 0, 64);
	struct lf_event ev;
	lf_event_init(&ev);
	assert_int_equal(os_fence_wait_event(upseam.f, 1, &ev), 0);
	assert_int_equal(lf_event_wait(&ev, 0, 5000000000ll), 0);
	assert_true(fbt_eventually(atomic_load(&upseam.isr_in)));   /* the interrupt was handled */
	struct os_ddi_call log[OS_DDI_LOG_MAX];
	size_t n = os_adapter_ddi_log(a, log, OS_DDI_LOG_MAX);
	for (size_t i = 0; i < n; i++)
		if (log[i].ddi == OS_DDI_UPDATE_MONITORED_VALUES && log[i].handle == os_fence_handle(upseam.f)) {
			upseam.first_logged = log[i].value;
			break;
		}
	os_fence_destroy(upseam.f);
	fbt_down(a);
	os_test_update_hook = NULL;            /* its threads joined */
	os_test_isr_fence_hook = NULL;
	return upseam;
}

#endif
