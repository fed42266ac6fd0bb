/* tests/test_fence_gpu_va.c — the GPU virtual addresses of native fences
 * (seed native-gpu-fence, "GPU VA mappings in paging process address space
 * for CMP use"): with DXGK_NATIVE_FENCE_CAPS::MapToGpuSystemProcess the OS
 * maps CurrentValue and MonitoredValue into the system (paging) process's GPU
 * VA space, passes CurrentValueSystemProcessGpuVa and
 * MonitoredValueSystemProcessGpuVa at create, and the CMP reads through them
 * while the engine writes through the process's VAs (gpu-model/hw/va.c). */
#include "tests/fb_test.h"
#include "tests/fence_test_util.h"
#include "gpu-model/hw/hw.h"

static struct os_adapter *va_adapter(bool map_to_system, enum hw_fault fault)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.caps.map_to_gpu_system_process = map_to_system;
	cfg.caps.fault = fault;
	return fbt_adapter(&cfg);
}

/* Arm ev for value v of f, then have q's engine signal v. */
static void arm_then_signal_gpu(struct os_queue *q, struct os_fence *f, uint64_t v, struct lf_event *ev)
{
	lf_event_init(ev);
	os_fence_wait_event(f, v, ev);
	fbt_signal_gpu(q, f, v);
}

/* "MapToGpuSystemProcess ... create GPU VA mappings in the paging process
 * address space for the native fence's CurrentValue and MonitoredValue":
 * both VAs are passed at create, differ from the process's VAs, and map the
 * same storage; a VA of one space means nothing in the other. */
static void map_to_gpu_system_process_vas_differ_same_storage(void **state)
{
	struct os_adapter *a = va_adapter(true, HW_FAULT_NONE);
	struct hw_adapter *hw = os_adapter_hw(a);
	struct hw_va_space *proc = hw_adapter_process_vas(hw), *sys = hw_adapter_system_vas(hw);
	struct os_fence *f, *g, *legacy;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 5, 0, &f), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &g), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0, 0, &legacy), 0);
	const struct hw_fence *h = os_fence_hw(f);
	assert_true(h->cv_va && h->mv_va && h->cv_sys_va && h->mv_sys_va);
	assert_true(h->cv_sys_va != h->cv_va);
	assert_true(h->mv_sys_va != h->mv_va);
	assert_ptr_equal(hw_va_resolve(proc, h->cv_va), h->cv);
	assert_ptr_equal(hw_va_resolve(sys, h->cv_sys_va), h->cv);
	assert_ptr_equal(hw_va_resolve(proc, h->mv_va), h->mv);
	assert_ptr_equal(hw_va_resolve(sys, h->mv_sys_va), h->mv);
	assert_null(hw_va_resolve(proc, h->cv_sys_va));
	assert_null(hw_va_resolve(sys, h->cv_va));
	/* packed fences share a page in both spaces: the VAs keep the stride */
	const struct hw_fence *k = os_fence_hw(g);
	assert_int_equal((int64_t)(k->cv_va - h->cv_va), hw_fence_cv_distance(h, k));
	assert_int_equal((int64_t)(k->cv_sys_va - h->cv_sys_va), hw_fence_cv_distance(h, k));
	/* a monitored fence is the OS's business: no system-process mapping */
	assert_true(os_fence_hw(legacy)->cv_va != 0);
	assert_int_equal(os_fence_hw(legacy)->cv_sys_va, 0);
	os_fence_destroy(f);
	os_fence_destroy(g);
	os_fence_destroy(legacy);
	fbt_down(a);

	/* without the cap: no system-process VAs; the CMP uses the process's */
	a = va_adapter(false, HW_FAULT_NONE);
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f), 0);
	assert_int_equal(os_fence_hw(f)->cv_sys_va, 0);
	struct lf_event ev;
	arm_then_signal_gpu(fbt_queue(a, 0, 64), f, 1, &ev);
	assert_int_equal(lf_event_wait(&ev, 0, 5000000000ll), 0);
	assert_int_equal(hw_adapter_va_faults(os_adapter_hw(a)), 0);
	os_fence_destroy(f);
	fbt_down(a);
}

/* The CMP reads through the system process's VAs: with them, a signal past
 * MonitoredValue interrupts; with the system-process mapping of
 * MonitoredValue gone, the engine's write (process VA) still lands but the
 * CMP no longer sees the fence: a GPU page fault, no interrupt. */
static void map_to_gpu_system_process_cmp_reads_system_va(void **state)
{
	struct os_adapter *a = va_adapter(true, HW_FAULT_NONE);
	struct hw_adapter *hw = os_adapter_hw(a);
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f), 0);
	struct os_queue *q = fbt_queue(a, 0, 64);
	struct lf_event e1, e2;
	arm_then_signal_gpu(q, f, 1, &e1);
	assert_int_equal(lf_event_wait(&e1, 0, 5000000000ll), 0);
	assert_int_equal(fbt_settled_stats(a).gpu_interrupts, 1);
	assert_int_equal(hw_adapter_va_faults(hw), 0);

	struct hw_fence *h = os_fence_hw(f);
	hw_va_unmap(hw_adapter_system_vas(hw), h->mv_sys_va, sizeof(uint64_t));
	assert_null(hw_va_resolve(hw_adapter_system_vas(hw), h->mv_sys_va));
	assert_non_null(hw_va_resolve(hw_adapter_process_vas(hw), h->mv_va));   /* the process's stays */
	h->mv_sys_va = 0;   /* nothing left to unmap at destroy */
	arm_then_signal_gpu(q, f, 2, &e2);
	assert_true(fbt_eventually(os_fence_value(f) == 2));   /* the engine wrote */
	assert_true(fbt_eventually(hw_adapter_va_faults(hw) >= 1));
	fbt_settle();
	assert_int_equal(fbt_settled_stats(a).gpu_interrupts, 1);   /* the CMP raised nothing */
	assert_false(lf_event_is_set(&e2));
	os_fence_signal_cpu(f, 2);   /* the CPU path needs no CMP */
	assert_true(lf_event_is_set(&e2));
	os_fence_destroy(f);
	fbt_down(a);
}

/* Broken variant HW_FAULT_CMP_PROCESS_VA: the CMP looks the system-process
 * VAs it was given up in the process's space.  The mapping is wrong, the
 * CMP finds nothing there (a fault is counted) and the waiter is never
 * interrupted: caught. */
static void map_to_gpu_system_process_broken_wrong_space_is_caught(void **state)
{
	struct os_adapter *a = va_adapter(true, HW_FAULT_CMP_PROCESS_VA);
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f), 0);
	struct lf_event ev;
	arm_then_signal_gpu(fbt_queue(a, 0, 64), f, 1, &ev);
	assert_true(fbt_eventually(os_fence_value(f) == 1));
	assert_true(fbt_eventually(hw_adapter_va_faults(os_adapter_hw(a)) >= 1));
	fbt_settle();
	assert_false(lf_event_is_set(&ev));
	assert_int_equal(fbt_settled_stats(a).gpu_interrupts, 0);
	os_fence_signal_cpu(f, 1);
	assert_true(lf_event_is_set(&ev));
	os_fence_destroy(f);
	fbt_down(a);
}

/* The space itself: a shared page is mapped once and counted; a range gets
 * consecutive VAs; an unmapped VA resolves to nothing. */
static void gpu_va_space_map_share_unmap(void **state)
{
	struct hw_va_space *s;
	assert_int_equal(hw_va_space_create(HW_VA_PROCESS_BASE, &s), 0);
	static _Alignas(4096) char mem[3 * 4096];
	uint64_t a = hw_va_map(s, mem + 8, 8), b = hw_va_map(s, mem + 64, 8);
	assert_int_equal(b - a, 56);                      /* one page, shared */
	uint64_t r = hw_va_map(s, mem + 4096, 2 * 4096);  /* a range of its own */
	assert_ptr_equal(hw_va_resolve(s, r + 4096 + 3), mem + 2 * 4096 + 3);
	hw_va_unmap(s, a, 8);
	assert_ptr_equal(hw_va_resolve(s, b), mem + 64);  /* still mapped for b */
	hw_va_unmap(s, b, 8);
	assert_null(hw_va_resolve(s, b));
	hw_va_unmap(s, r, 2 * 4096);
	assert_null(hw_va_resolve(s, r));
	assert_null(hw_va_resolve(s, HW_VA_PROCESS_BASE - 8));
	hw_va_space_destroy(s);
}

FB_TEST_MAIN(cmocka_unit_test(map_to_gpu_system_process_vas_differ_same_storage),
	     cmocka_unit_test(map_to_gpu_system_process_cmp_reads_system_va),
	     cmocka_unit_test(map_to_gpu_system_process_broken_wrong_space_is_caught),
	     cmocka_unit_test(gpu_va_space_map_share_unmap))
