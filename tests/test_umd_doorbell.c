/* tests/test_umd_doorbell.c — doorbell virtualization: the seed's KMD
 * VictimizeDoorbell walk-through step by step, and a stress test where many
 * application threads submit through few dedicated doorbells under constant
 * victimization and every command buffer runs exactly once — plus the broken
 * submit loop (no status check after ringing) that the same test catches. */
#include <errno.h>
#include <sched.h>

#include "tests/fb_test.h"
#include "tests/umd_test_util.h"

#define SEC 1000000000ll

/* A new device and context of t with one user-mode queue, its doorbell connected. */
static void connected_queue_open(struct umt *t, struct os_device **d, struct os_context **c, struct raw_queue *r)
{
	device_open(t, d, c);
	raw_queue_open(t, *d, *c, r);
	assert_int_equal(os_doorbell_connect(r->q), 0);
}

/* Tear down what a one-queue test brought up: the device (its queue and
 * doorbell with it), the queue's progress fence, the stack. */
static void one_queue_close(struct umt *t, struct os_device *d, struct raw_queue *r)
{
	assert_int_equal(os_device_destroy(d), 0);
	os_fence_destroy(r->progress);
	umt_down(t);
}

/* The same for a two-queue test. */
static void two_queues_close(struct umt *t, struct os_device *d, struct raw_queue *r1, struct raw_queue *r2)
{
	assert_int_equal(os_device_destroy(d), 0);
	os_fence_destroy(r1->progress);
	os_fence_destroy(r2->progress);
	umt_down(t);
}

/* "Victimizing doorbell pseudocode in KMD", with one physical doorbell:
 *   1. hDoorbell1 is assigned the physical doorbell: CONNECTED;
 *   2. hDoorbell2 is created, not yet assigned: DISCONNECTED_RETRY;
 *   3. ConnectDoorbell(hDoorbell2): hDoorbell1 is victimized (its CPUVA to
 *      the dummy page, RETRY), the physical doorbell goes to hDoorbell2
 *      (same address, CONNECTED).
 * Then a ring through the victim's mapping is lost until it reconnects. */
static void victimization_follows_the_kmd_pseudocode(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 1, 5 * SEC);
	struct hw_adapter *hw = os_adapter_hw(t.a);
	struct os_device *d;
	struct os_context *c;
	device_open(&t, &d, &c);
	struct raw_queue r1, r2;
	raw_queue_open(&t, d, c, &r1);
	_Atomic uint64_t *dummy = atomic_load(r1.m.cpuva);
	assert_int_equal(raw_status(&r1), OS_DOORBELL_DISCONNECTED_RETRY);

	/* 1 */
	assert_int_equal(os_doorbell_connect(r1.q), 0);
	_Atomic uint64_t *phys = atomic_load(r1.m.cpuva);
	assert_ptr_not_equal(phys, dummy);
	assert_int_equal(raw_status(&r1), OS_DOORBELL_CONNECTED);
	assert_ptr_equal(hw_doorbell_owner(hw, 0), os_hwqueue_hw(r1.q));
	/* 2 */
	raw_queue_open(&t, d, c, &r2);
	assert_ptr_equal(atomic_load(r2.m.cpuva), dummy);
	assert_int_equal(raw_status(&r2), OS_DOORBELL_DISCONNECTED_RETRY);
	assert_int_equal(raw_status(&r1), OS_DOORBELL_CONNECTED);
	/* 3 */
	assert_int_equal(os_doorbell_connect(r2.q), 0);
	assert_int_equal(raw_status(&r1), OS_DOORBELL_DISCONNECTED_RETRY);
	assert_ptr_equal(atomic_load(r1.m.cpuva), dummy);
	assert_int_equal(raw_status(&r2), OS_DOORBELL_CONNECTED);
	assert_ptr_equal(atomic_load(r2.m.cpuva), phys);
	assert_ptr_equal(hw_doorbell_owner(hw, 0), os_hwqueue_hw(r2.q));
	assert_int_equal(umt_stats(&t).victimizations, 1);

	/* the victim rings: the write lands on the dummy page, nothing runs */
	_Atomic uint64_t n1 = 0, n2 = 0;
	raw_submit(&r1, 1, &n1);
	fbt_settle();
	assert_int_equal(atomic_load(&n1), 0);
	assert_true(os_hwqueue_pending(r1.q));
	assert_int_equal(raw_status(&r1), OS_DOORBELL_DISCONNECTED_RETRY);   /* what the UMD checks */
	/* the connected one is unaffected */
	raw_submit(&r2, 1, &n2);
	assert_int_equal(os_fence_wait_cpu(r2.progress, 1, 5 * SEC), 0);
	/* the seed's loop: reconnect (victimizing hDoorbell2 back) and ring again */
	assert_int_equal(os_doorbell_connect(r1.q), 0);
	assert_int_equal(raw_status(&r2), OS_DOORBELL_DISCONNECTED_RETRY);
	hw_doorbell_write(atomic_load(r1.m.cpuva), hw_doorbell_ring_value(r1.m.value, r1.wptr));
	assert_int_equal(raw_status(&r1), OS_DOORBELL_CONNECTED);
	assert_int_equal(os_fence_wait_cpu(r1.progress, 1, 5 * SEC), 0);
	assert_int_equal(atomic_load(&n1), 1);
	assert_int_equal(atomic_load(&n2), 1);
	assert_int_equal(umt_stats(&t).victimizations, 2);
	two_queues_close(&t, d, &r1, &r2);
}

/* D3DKMTDestroyDoorbell: the doorbell is disconnected and forgotten (its
 * physical doorbell no longer rings this queue, connects find none), and
 * the ring stays (seed, "Residency model of doorbell memory and ring buffer
 * allocations": "Dxgkrnl won't destroy these allocations implicitly even if
 * the corresponding doorbell is destroyed"): a new doorbell on the same
 * queue runs what was written to it meanwhile. */
static void d3dkmt_destroy_doorbell_disconnects_ring_buffer_stays(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 1, 5 * SEC);
	struct hw_adapter *hw = os_adapter_hw(t.a);
	struct os_device *d;
	struct os_context *c;
	device_open(&t, &d, &c);
	struct raw_queue r;
	raw_queue_open(&t, d, c, &r);
	struct os_doorbell_map again;
	assert_int_equal(os_doorbell_create(r.q, r.rb, r.rbc, &again), -EEXIST);   /* one doorbell a queue */
	assert_int_equal(os_doorbell_connect(r.q), 0);
	assert_int_equal(raw_status(&r), OS_DOORBELL_CONNECTED);
	assert_ptr_equal(hw_doorbell_owner(hw, 0), os_hwqueue_hw(r.q));

	assert_int_equal(os_doorbell_destroy(r.q), 0);
	assert_int_equal(raw_status(&r), OS_DOORBELL_DISCONNECTED_RETRY);
	assert_ptr_not_equal(hw_doorbell_owner(hw, 0), os_hwqueue_hw(r.q));
	assert_int_equal(os_doorbell_destroy(r.q), -ENOENT);
	assert_int_equal(os_doorbell_connect(r.q), -ENOENT);
	/* a ring through the old mapping runs nothing */
	_Atomic uint64_t n = 0;
	raw_submit(&r, 1, &n);
	fbt_settle();
	assert_int_equal(atomic_load(&n), 0);
	assert_true(os_hwqueue_pending(r.q));

	/* the ring buffer is the same one, with the entry in it */
	assert_int_equal(os_doorbell_create(r.q, r.rb, r.rbc, &again), 0);
	assert_ptr_equal(again.ring, r.m.ring);
	assert_int_equal(lf_ring_size(again.ring), 1);
	assert_int_equal(os_doorbell_connect(r.q), 0);
	hw_doorbell_write(atomic_load(again.cpuva), hw_doorbell_ring_value(again.value, r.wptr));
	assert_int_equal(os_fence_wait_cpu(r.progress, 1, 5 * SEC), 0);
	assert_int_equal(atomic_load(&n), 1);
	one_queue_close(&t, d, &r);
}

/* A user-mode HW queue is refused on the kernel-mode path
 * (D3DKMTSubmitCommandToHwQueue): nothing runs, nothing is recorded as
 * queued; a kernel-mode queue of the same context is not refused. */
static void user_mode_hwqueue_refused_on_kernel_mode_submission_path(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 1, 5 * SEC);
	struct os_device *d;
	struct os_context *c;
	struct raw_queue r;
	connected_queue_open(&t, &d, &c, &r);
	_Atomic uint64_t n = 0;
	struct hw_cmd cmds[2] = {
		{ .op = HW_CMD_COUNT, .stamp = &n },
		{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(r.progress), .value = 1 },
	};
	assert_true(os_hwqueue_is_um(r.q));
	assert_int_equal(os_hwqueue_submit(r.q, cmds, 2, 1), -EINVAL);
	fbt_settle();
	assert_int_equal(atomic_load(&n), 0);
	assert_int_equal(os_hwqueue_last_queued(r.q), 0);
	assert_false(os_hwqueue_pending(r.q));
	/* the kernel-mode queue takes the same buffer */
	struct os_fence *kp;
	struct os_hwqueue *km;
	assert_int_equal(os_fence_create(t.a, OS_FENCE_NATIVE, 0, 0, &kp), 0);
	assert_int_equal(os_hwqueue_create(c, 0, 64, kp, &km), 0);
	assert_false(os_hwqueue_is_um(km));
	cmds[1].fence = os_fence_hw(kp);
	assert_int_equal(os_hwqueue_submit(km, cmds, 2, 1), 0);
	assert_int_equal(os_fence_wait_cpu(kp, 1, 5 * SEC), 0);
	assert_int_equal(atomic_load(&n), 1);
	assert_int_equal(os_device_destroy(d), 0);
	os_fence_destroy(r.progress);
	os_fence_destroy(kp);
	umt_down(&t);
}

/* ---- the residency model of the ring buffer allocations ---- */

/* Seed, "Residency model of doorbell memory and ring buffer allocations":
 * "UMD is responsible for making the ring buffer and ring buffer control
 * allocations resident before creating a doorbell."  The UMD allocates both
 * (created not resident); CreateDoorbell refuses them until both are
 * resident, refuses wrong or missing ones, and then hands out the ring
 * buffer allocation's own ring: the application's, not one the OS made.
 * A ring buffer serves one queue. */
static void residency_model_umd_makes_ring_buffer_allocations_resident_before_create_doorbell(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 2, 5 * SEC);
	struct os_device *d;
	struct os_context *c;
	device_open(&t, &d, &c);
	struct raw_queue r = { 0 };
	raw_hwqueue_create(&t, c, &r);
	assert_int_equal(os_ring_alloc_create(d, OS_RING_BUFFER, 64, &r.rb), 0);
	assert_int_equal(os_ring_alloc_create(d, OS_RING_BUFFER_CONTROL, 0, &r.rbc), 0);
	assert_int_equal(os_ring_alloc_create(d, OS_RING_BUFFER, 48, &(struct os_ring_alloc *){ 0 }), -EINVAL);
	assert_false(os_ring_alloc_resident(r.rb));
	assert_false(os_ring_alloc_resident(r.rbc));
	assert_null(os_ring_alloc_ring(r.rb));              /* no ring over them yet */
	assert_non_null(os_ring_alloc_cpuva(r.rb));
	assert_non_null(os_ring_alloc_cpuva(r.rbc));
	/* not resident: refused, nothing created */
	assert_int_equal(os_doorbell_create(r.q, r.rb, r.rbc, &r.m), -EFAULT);
	assert_int_equal(os_ring_alloc_make_resident(r.rb), 0);
	assert_int_equal(os_doorbell_create(r.q, r.rb, r.rbc, &r.m), -EFAULT);   /* the control one is not */
	assert_int_equal(os_ring_alloc_make_resident(r.rbc), 0);
	/* missing, or of the wrong kind */
	assert_int_equal(os_doorbell_create(r.q, r.rb, NULL, &r.m), -EINVAL);
	assert_int_equal(os_doorbell_create(r.q, r.rbc, r.rb, &r.m), -EINVAL);
	assert_int_equal(os_doorbell_connect(r.q), -ENOENT);               /* still no doorbell */
	assert_int_equal(os_ring_alloc_refs(r.rb), 0);
	/* resident: created, on the application's ring */
	assert_int_equal(os_doorbell_create(r.q, r.rb, r.rbc, &r.m), 0);
	assert_ptr_equal(r.m.ring, os_ring_alloc_ring(r.rb));
	assert_ptr_equal(r.m.ring, os_ring_alloc_ring(r.rbc));
	assert_ptr_equal(hw_queue_ring(os_hwqueue_hw(r.q)), r.m.ring);
	assert_int_equal(os_ring_alloc_refs(r.rb), 1);
	assert_int_equal(os_ring_alloc_refs(r.rbc), 1);
	assert_int_equal(os_ring_alloc_evict(r.rb), -EBUSY);              /* the doorbell holds it */
	/* another queue cannot take this ring buffer */
	struct raw_queue o = { 0 };
	raw_hwqueue_create(&t, c, &o);
	raw_ring_allocs(d, &o);
	assert_int_equal(os_doorbell_create(o.q, r.rb, o.rbc, &o.m), -EBUSY);
	assert_int_equal(os_doorbell_create(o.q, o.rb, r.rbc, &o.m), -EBUSY);
	/* what the application writes into its ring runs; the write pointer
	 * is the first word of the ring buffer control allocation */
	_Atomic uint64_t n = 0;
	assert_int_equal(os_doorbell_connect(r.q), 0);
	raw_submit(&r, 1, &n);
	assert_int_equal(atomic_load((const _Atomic uint64_t *)os_ring_alloc_cpuva(r.rbc)), 1);
	assert_int_equal(os_fence_wait_cpu(r.progress, 1, 5 * SEC), 0);
	assert_int_equal(atomic_load(&n), 1);
	/* a queue keeps its pair: another one is refused on a new doorbell */
	assert_int_equal(os_doorbell_destroy(r.q), 0);
	assert_int_equal(os_doorbell_create(r.q, o.rb, o.rbc, &o.m), -EBUSY);
	assert_int_equal(os_doorbell_create(r.q, r.rb, r.rbc, &r.m), 0);
	two_queues_close(&t, d, &r, &o);
}

/* The runtime (the UMD) follows the rule; a UMD that creates the doorbell
 * with its ring allocations not resident is refused (the broken variant
 * RT_BROKEN_DOORBELL_BEFORE_RESIDENT). */
static void residency_model_runtime_ring_allocations_resident_broken_variant_refused(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 2, 5 * SEC);
	struct rt_queue *q = umt_queue(&t, 0, true);
	_Atomic uint64_t n = 0;
	umt_submit_count(q, &n);
	assert_int_equal(rt_queue_wait(q, 0, 5 * SEC), 0);
	assert_int_equal(atomic_load(&n), 1);
	struct rt_queue_desc desc = { .engine = 0, .user_mode = true, .broken = RT_BROKEN_DOORBELL_BEFORE_RESIDENT };
	struct rt_queue *bad;
	assert_int_equal(rt_queue_create(t.d, &desc, &bad), -EFAULT);
	umt_down(&t);
}

/* Seed, same section: "Dxgkrnl won't destroy these allocations implicitly
 * even if the corresponding doorbell is destroyed ... to prevent a
 * malicious user-mode program from destroying these allocations while the
 * doorbell is alive, Dxgkrnl does take a reference on them during the
 * lifetime of the doorbell."  True: the destroy was refused while the
 * doorbell lived, and allowed once it was destroyed. */
static bool ring_destroy_refused_while_doorbell_lives(enum os_ums_fault fault)
{
	struct umt t = umt_up_ums_fault(1, 2, 5 * SEC, fault);
	struct os_device *d;
	struct os_context *c;
	struct raw_queue r;
	connected_queue_open(&t, &d, &c, &r);
	int rb_rc = os_ring_alloc_destroy(r.rb), rbc_rc = os_ring_alloc_destroy(r.rbc);
	bool refused = rb_rc == -EBUSY && rbc_rc == -EBUSY;
	if (refused) {
		assert_false(os_ring_alloc_destroyed(r.rb));
		/* the doorbell goes, the allocations stay (not destroyed implicitly) */
		assert_int_equal(os_doorbell_destroy(r.q), 0);
		assert_false(os_ring_alloc_destroyed(r.rb));
		assert_false(os_ring_alloc_destroyed(r.rbc));
		assert_int_equal(os_ring_alloc_refs(r.rb), 0);
		refused = os_ring_alloc_destroy(r.rb) == 0 && os_ring_alloc_destroy(r.rbc) == 0;
		assert_int_equal(os_ring_alloc_destroy(r.rb), -EIDRM);
	} else {
		/* the doorbell lives on allocations the application destroyed */
		assert_true(os_ring_alloc_destroyed(r.rb));
		assert_int_equal(os_doorbell_status(r.q), OS_DOORBELL_CONNECTED);
	}
	one_queue_close(&t, d, &r);
	return refused;
}

static void dxgkrnl_takes_reference_on_ring_allocations_during_doorbell_lifetime(void **state)
{
	assert_true(ring_destroy_refused_while_doorbell_lives(OS_UMS_FAULT_NONE));
	/* broken: no reference taken, the destroy goes through */
	assert_false(ring_destroy_refused_while_doorbell_lives(OS_UMS_FAULT_NO_RING_REFERENCE));
}

/* Seed, same section: "The only scenario in which Dxgkrnl destroys ring
 * buffer allocations is during device termination.  Dxgkrnl destroys all
 * HWQueues, doorbells, and ring buffer allocations associated with the
 * device."  Abnormal termination here (normal termination too: "it can now
 * destroy the Ring Buffer/Ring Buffer Control allocations"). */
static void device_termination_destroys_ring_buffer_allocations(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 2, 5 * SEC);
	for (int abnormal = 0; abnormal < 2; abnormal++) {
		struct os_device *d;
		struct os_context *c;
		struct raw_queue r;
		connected_queue_open(&t, &d, &c, &r);
		_Atomic uint64_t n = 0;
		raw_submit(&r, 1, &n);
		assert_int_equal(os_fence_wait_cpu(r.progress, 1, 5 * SEC), 0);
		if (abnormal)
			os_device_terminate(d);
		else
			assert_int_equal(os_device_destroy(d), 0);
		assert_true(os_ring_alloc_destroyed(r.rb));
		assert_true(os_ring_alloc_destroyed(r.rbc));
		assert_int_equal(os_ring_alloc_destroy(r.rb), -EIDRM);
		os_fence_destroy(r.progress);
	}
	umt_down(&t);
}

/* ---- the doorbell size from the caps ---- */

/* Seed, "DXGK_QUERYADAPTERINFOTYPE::DXGKQAITYPE_USERMODESUBMISSION_CAPS":
 * "Currently, the only cap required is the doorbell memory size ...
 * Dxgkrnl first needs to internally map to a dummy page ... The size of the
 * doorbell is needed to allocate the dummy page", and at connect "to rotate
 * the DoorbellCpuVirtualAddress ... Dxgkrnl needs to know the doorbell
 * size".  The OS queries it once (the DDI log), allocates the dummy page
 * for it and maps doorbells of that size; sizes the model cannot map are
 * refused at attach. */
static void doorbell_memory_size_from_usermodesubmission_caps(void **state)
{
	/* sizes whose dummy page differs: a page of one line, two lines, a
	 * whole 4 KiB page (the dummy page is the doorbell's size in whole
	 * cache lines) */
	static const unsigned sizes[] = { 0, 8, 72, 128, 200, 4096 };
	static const size_t dummy[] = { 64, 64, 128, 128, 256, 4096 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct os_config cfg;
		umt_config(&cfg, 1, HW_DOORBELL_DEDICATED, 2, 5 * SEC);
		cfg.caps.doorbell_bytes = sizes[i];
		struct umt t = umt_up_with(&cfg, NULL);
		size_t want = sizes[i] ? sizes[i] : HW_DOORBELL_SIZE;
		assert_int_equal(os_adapter_ddi_count(t.a, OS_DDI_QUERY_UMS_CAPS), 1);
		struct os_ddi_call log[OS_DDI_LOG_MAX];
		size_t nlog = os_adapter_ddi_log(t.a, log, OS_DDI_LOG_MAX), k = 0;
		while (k < nlog && log[k].ddi != OS_DDI_QUERY_UMS_CAPS)
			k++;
		assert_true(k < nlog);
		assert_int_equal(log[k].value, want);
		assert_int_equal(os_ums_doorbell_bytes(t.u), want);
		assert_int_equal(os_ums_dummy_page_bytes(t.u), dummy[i]);
		struct rt_queue *q = umt_queue(&t, 0, true);
		_Atomic uint64_t n = 0;
		umt_submit_count(q, &n);
		assert_int_equal(rt_queue_wait(q, 0, 5 * SEC), 0);
		assert_int_equal(os_doorbell_mapped_bytes(rt_queue_os(q)), want);
		umt_down(&t);
	}
	static const unsigned bad[] = { 4, 12, 8192 };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct os_config cfg;
		struct os_ums_config ucfg;
		struct os_ums *u;
		char err[256] = "";
		umt_config(&cfg, 1, HW_DOORBELL_DEDICATED, 2, 5 * SEC);
		cfg.caps.doorbell_bytes = bad[i];
		os_ums_config_default(&ucfg);
		struct os_adapter *a = fbt_adapter(&cfg);
		assert_int_equal(os_ums_attach(a, &ucfg, &u, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "doorbell_bytes"));
		fbt_down(a);
	}
}

/* The doorbell mapping CreateDoorbell returns has the caps' size, on the
 * dummy page; connect maps the physical doorbell at that size, and a
 * victimization rotates it back to the dummy page at that size.  200
 * bytes: neither a register (8) nor a line (64). */
static void doorbell_mapping_has_the_caps_doorbell_size(void **state)
{
	struct os_config cfg;
	umt_config(&cfg, 1, HW_DOORBELL_DEDICATED, 1, 5 * SEC);
	cfg.caps.doorbell_bytes = 200;
	struct umt t = umt_up_with(&cfg, NULL);
	struct os_device *d;
	struct os_context *c;
	device_open(&t, &d, &c);
	struct raw_queue r, r2;
	raw_queue_open(&t, d, c, &r);
	assert_int_equal(r.m.bytes, 200);
	assert_int_equal(os_doorbell_mapped_bytes(r.q), 200);            /* the dummy page */
	assert_int_equal(os_ums_dummy_page_bytes(t.u), 256);
	assert_int_equal(os_doorbell_connect(r.q), 0);
	assert_int_equal(raw_status(&r), OS_DOORBELL_CONNECTED);
	assert_int_equal(os_doorbell_mapped_bytes(r.q), 200);            /* the physical doorbell */
	raw_queue_open(&t, d, c, &r2);
	assert_int_equal(os_doorbell_connect(r2.q), 0);                  /* victimizes r */
	assert_int_equal(raw_status(&r), OS_DOORBELL_DISCONNECTED_RETRY);
	assert_int_equal(os_doorbell_mapped_bytes(r.q), 200);
	assert_int_equal(os_doorbell_mapped_bytes(r2.q), 200);
	assert_int_equal(os_doorbell_destroy(r.q), 0);
	assert_int_equal(os_doorbell_mapped_bytes(r.q), 0);              /* no doorbell, no mapping */
	two_queues_close(&t, d, &r, &r2);
}

/* ---- victimization: the order, the pool ---- */

/* What the victim's application could read the moment its physical
 * doorbell was released (os_test_doorbell_release_hook). */
static struct {
	struct os_hwqueue *victim;
	_Atomic(_Atomic uint64_t *) *cpuva;   /* the victim's mapping */
	_Atomic uint64_t *phys;               /* the register it had */
	unsigned releases;
	uint64_t status;
	_Atomic uint64_t *mapped;
} rel;

static void release_seen(struct os_hwqueue *q)
{
	if (q != rel.victim)
		return;
	rel.releases++;
	rel.status = os_doorbell_status(q);
	rel.mapped = atomic_load(rel.cpuva);
}

/* Seed, "Victimizing doorbell pseudocode in KMD": "KMD calls Dxgkrnl's
 * DxgkCbDisconnectDoorbellCB(hDoorbell1->hHwQueue).  Dxgkrnl rotates the
 * UMD-visible CPUVA of this doorbell to a dummy page and updates the status
 * value to D3DDDI_DOORBELL_STATUS_DISCONNECTED_RETRY.  KMD gets back
 * control and does the actual victimization/disconnection ...
 * PhysicalDoorbell1 is available for use."  True when, at the release of
 * the victim's physical doorbell, the victim already read RETRY through a
 * mapping on the dummy page (a victim that still reads CONNECTED there
 * rings the register its successor gets). */
static bool victim_moved_before_its_doorbell_is_released(enum os_ums_fault fault)
{
	memset(&rel, 0, sizeof(rel));
	os_test_doorbell_release_hook = release_seen;   /* before the threads start */
	struct umt t = umt_up_ums_fault(1, 1, 5 * SEC, fault);
	struct os_device *d;
	struct os_context *c;
	device_open(&t, &d, &c);
	struct raw_queue r1, r2;
	raw_queue_open(&t, d, c, &r1);
	raw_queue_open(&t, d, c, &r2);
	_Atomic uint64_t *dummy = atomic_load(r1.m.cpuva);
	assert_int_equal(os_doorbell_connect(r1.q), 0);
	rel.phys = atomic_load(r1.m.cpuva);
	rel.cpuva = r1.m.cpuva;
	rel.victim = r1.q;
	assert_int_equal(os_doorbell_connect(r2.q), 0);                   /* victimizes r1 */
	assert_int_equal(umt_stats(&t).victimizations, 1);
	assert_int_equal(rel.releases, 1);
	assert_ptr_equal(atomic_load(r2.m.cpuva), rel.phys);               /* the register went to r2 */
	bool moved = rel.status == OS_DOORBELL_DISCONNECTED_RETRY && rel.mapped == dummy;
	if (!moved)
		assert_true(rel.status == OS_DOORBELL_CONNECTED && rel.mapped == rel.phys);
	rel.victim = NULL;
	two_queues_close(&t, d, &r1, &r2);
	os_test_doorbell_release_hook = NULL;                              /* the threads are gone */
	return moved;
}

static void victimization_moves_the_victim_before_releasing_its_doorbell(void **state)
{
	assert_true(victim_moved_before_its_doorbell_is_released(OS_UMS_FAULT_NONE));
	/* broken: released first, the victim still reads CONNECTED on the register */
	assert_false(victim_moved_before_its_doorbell_is_released(OS_UMS_FAULT_RELEASE_BEFORE_RETRY));
}

/* Seed, "Doorbells": "There are limited doorbells that are shared across
 * all hardware queues created on the GPU."  One physical doorbell, two
 * devices (two processes' D3D devices): a queue of the second device
 * connects by victimizing the first device's doorbell, and its work runs.
 * True when it did. */
static bool second_device_takes_first_devices_doorbell(enum os_ums_fault fault)
{
	struct umt t = umt_up_ums_fault(1, 1, 5 * SEC, fault);
	struct hw_adapter *hw = os_adapter_hw(t.a);
	struct os_device *da, *db;
	struct os_context *ca, *cb;
	struct raw_queue ra, rb;
	connected_queue_open(&t, &da, &ca, &ra);
	device_open(&t, &db, &cb);
	raw_queue_open(&t, db, cb, &rb);
	int rc = os_doorbell_connect(rb.q);
	bool took = rc == 0;
	if (took) {
		assert_int_equal(raw_status(&ra), OS_DOORBELL_DISCONNECTED_RETRY);
		assert_int_equal(raw_status(&rb), OS_DOORBELL_CONNECTED);
		assert_ptr_equal(hw_doorbell_owner(hw, 0), os_hwqueue_hw(rb.q));
		assert_int_equal(umt_stats(&t).victimizations, 1);
		_Atomic uint64_t n = 0;
		raw_submit(&rb, 1, &n);
		assert_int_equal(os_fence_wait_cpu(rb.progress, 1, 5 * SEC), 0);
		assert_int_equal(atomic_load(&n), 1);
	} else {
		assert_int_equal(rc, -EBUSY);
		assert_int_equal(raw_status(&ra), OS_DOORBELL_CONNECTED);      /* nothing was taken */
		assert_int_equal(umt_stats(&t).victimizations, 0);
	}
	assert_int_equal(os_device_destroy(da), 0);
	assert_int_equal(os_device_destroy(db), 0);
	os_fence_destroy(ra.progress);
	os_fence_destroy(rb.progress);
	umt_down(&t);
	return took;
}

static void dedicated_doorbells_one_pool_across_processes(void **state)
{
	assert_true(second_device_takes_first_devices_doorbell(OS_UMS_FAULT_NONE));
	/* broken: a pool per device, the second device finds no doorbell to take */
	assert_false(second_device_takes_first_devices_doorbell(OS_UMS_FAULT_POOL_PER_DEVICE));
}

/* ---- a dedicated ring names its queue ---- */

/* Seed, "Doorbells", dedicated model: "When a doorbell is rung, the GPU
 * scheduler knows exactly which hardware queue submitted new work."  Three
 * queues of one engine with connected doorbells, one of them rung 20 times:
 * the engine's write-pointer reads caused by rings (looks).  Returns looks
 * per ring seen, times 100. */
static uint64_t looks_per_ring_x100(enum hw_fault fault)
{
	struct os_config cfg;
	umt_config(&cfg, 1, HW_DOORBELL_DEDICATED, 4, 5 * SEC);
	cfg.caps.fault = fault;
	struct umt t = umt_up_with(&cfg, NULL);
	struct os_device *d;
	struct os_context *c;
	device_open(&t, &d, &c);
	struct raw_queue r[3];
	for (int i = 0; i < 3; i++) {
		raw_queue_open(&t, d, c, &r[i]);
		assert_int_equal(os_doorbell_connect(r[i].q), 0);
	}
	struct hw_engine_um_stats before = umt_engine(&t, 0);
	_Atomic uint64_t n = 0;
	for (uint64_t v = 1; v <= 20; v++) {
		raw_submit(&r[0], v, &n);
		/* the engine looked before it ran the buffer whose signal ends the wait */
		assert_int_equal(os_fence_wait_cpu(r[0].progress, v, 5 * SEC), 0);
	}
	struct hw_engine_um_stats after = umt_engine(&t, 0);
	uint64_t rings = after.rings - before.rings, looks = after.looks - before.looks;
	assert_int_equal(atomic_load(&n), 20);
	assert_true(rings >= 1 && rings <= 20);     /* rings the engine saw (several may be seen as one) */
	assert_int_equal(os_device_destroy(d), 0);
	for (int i = 0; i < 3; i++)
		os_fence_destroy(r[i].progress);
	umt_down(&t);
	return looks * 100 / rings;
}

static void dedicated_doorbell_ring_looks_at_its_queue_only(void **state)
{
	assert_int_equal(looks_per_ring_x100(HW_FAULT_NONE), 100);
	/* broken: a dedicated ring read as a global one, every connected queue looked at */
	assert_int_equal(looks_per_ring_x100(HW_FAULT_DEDICATED_POLLS_ALL), 300);
}

/* ---- a queue's destroy leaves the UMD's ring allocations ---- */

/* Seed, "Residency model of doorbell memory and ring buffer allocations":
 * "The only scenario in which Dxgkrnl destroys ring buffer allocations is
 * during device termination."  A queue with a connected doorbell and work
 * done is destroyed on its own: true when both ring allocations outlive
 * it (not destroyed, CPU VA valid, no reference left) and the UMD's own
 * destroy of each then succeeds. */
static bool ring_allocations_outlive_their_queue(enum os_ums_fault fault)
{
	struct umt t = umt_up_ums_fault(1, 2, 5 * SEC, fault);
	struct os_device *d;
	struct os_context *c;
	struct raw_queue r;
	connected_queue_open(&t, &d, &c, &r);
	_Atomic uint64_t n = 0;
	raw_submit(&r, 1, &n);
	assert_int_equal(os_fence_wait_cpu(r.progress, 1, 5 * SEC), 0);
	assert_int_equal(os_hwqueue_destroy(r.q), 0);
	bool alive = !os_ring_alloc_destroyed(r.rb) && !os_ring_alloc_destroyed(r.rbc) &&
		     os_ring_alloc_cpuva(r.rb) && os_ring_alloc_cpuva(r.rbc);
	if (alive) {
		assert_int_equal(os_ring_alloc_refs(r.rb), 0);
		assert_int_equal(os_ring_alloc_refs(r.rbc), 0);
		assert_int_equal(os_ring_alloc_destroy(r.rb), 0);       /* the UMD's to destroy */
		assert_int_equal(os_ring_alloc_destroy(r.rbc), 0);
	} else {
		assert_int_equal(os_ring_alloc_destroy(r.rb), -EIDRM);
	}
	one_queue_close(&t, d, &r);
	return alive;
}

static void destroying_a_hwqueue_leaves_the_umd_ring_allocations_alive(void **state)
{
	assert_true(ring_allocations_outlive_their_queue(OS_UMS_FAULT_NONE));
	/* broken: the queue's destroy takes them along */
	assert_false(ring_allocations_outlive_their_queue(OS_UMS_FAULT_QUEUE_DESTROYS_RINGS));
}

/* The runtime's ABORT fallback (the seed's cleanup_fallback: destroy the
 * HW queue, the doorbell and the ring buffer, re-create on kernel-mode
 * submission) destroys the ring allocations itself, and a -EIDRM there
 * (somebody else destroyed them while the device lives) fails the
 * submission instead of being ignored.  Returns the submission's result. */
static int abort_fallback_submission(enum os_ums_fault fault)
{
	struct umt t = umt_up_ums_fault(1, 2, 5 * SEC, fault);
	struct rt_queue *q = umt_queue(&t, 0, true);
	_Atomic uint64_t n = 0;
	umt_submit_count(q, &n);
	assert_int_equal(rt_queue_wait(q, 0, 5 * SEC), 0);
	os_doorbell_abort(rt_queue_os(q));             /* device lost for this doorbell: ABORT */
	struct hw_cmd cmd = { .op = HW_CMD_COUNT, .stamp = &n };
	uint64_t v = 0;
	int rc = rt_queue_submit(q, &cmd, 1, &v);
	struct rt_queue_stats st;
	rt_queue_stats(q, &st);
	if (!rc) {
		assert_false(rt_queue_user_mode(q));
		assert_int_equal(st.fallbacks, 1);
		assert_int_equal(rt_queue_wait(q, v, 5 * SEC), 0);
		assert_int_equal(atomic_load(&n), 2);
	} else {
		assert_int_equal(st.fallbacks, 0);
	}
	umt_down(&t);
	return rc;
}

static void abort_fallback_reports_ring_allocations_destroyed_under_it(void **state)
{
	assert_int_equal(abort_fallback_submission(OS_UMS_FAULT_NONE), 0);
	assert_int_equal(abort_fallback_submission(OS_UMS_FAULT_QUEUE_DESTROYS_RINGS), -EIDRM);
}

/* ---- victimization: LRU, a suspended queue ---- */

/* Ring r until the engine's LRU clock for its physical doorbell phys is past `after`
 * (the engine stamps a ring it sees with the time its pass began). */
static void ring_until_used_after(struct raw_queue *r, uint64_t *v, _Atomic uint64_t *n, struct hw_adapter *hw,
				  unsigned phys, uint64_t after)
{
	for (int i = 0; i < 1000 && hw_doorbell_last_use(hw, phys) <= after; i++) {
		raw_submit(r, ++*v, n);
		assert_int_equal(os_fence_wait_cpu(r->progress, *v, 5 * SEC), 0);
	}
	assert_true(hw_doorbell_last_use(hw, phys) > after);
}

/* Seed, "Doorbells", dedicated model: "the driver needs to disconnect the
 * doorbell of an older or least recently used hardware queue and assign its
 * doorbell to a newly created queue".  Three physical doorbells, four
 * queues: each connect victimizes the least recently used (last ring seen,
 * else its connect).  Returns the two victims' queue indices (-1: none). */
static void lru_victims(enum os_ums_fault fault, int victims[2])
{
	struct umt t = umt_up_ums_fault(1, 3, 5 * SEC, fault);
	struct hw_adapter *hw = os_adapter_hw(t.a);
	struct os_device *d;
	struct os_context *c;
	device_open(&t, &d, &c);
	struct raw_queue r[4];
	uint64_t v[4] = { 0 };
	_Atomic uint64_t n = 0;
	for (int i = 0; i < 4; i++)
		raw_queue_open(&t, d, c, &r[i]);
	for (int i = 0; i < 3; i++)
		assert_int_equal(os_doorbell_connect(r[i].q), 0);    /* physical doorbells 0, 1, 2 */
	for (int i = 0; i < 3; i++)
		assert_ptr_equal(hw_doorbell_owner(hw, i), os_hwqueue_hw(r[i].q));
	assert_true(hw_doorbell_last_use(hw, 0) < hw_doorbell_last_use(hw, 1));
	assert_true(hw_doorbell_last_use(hw, 1) < hw_doorbell_last_use(hw, 2));
	/* r0 rings: least recently used now r1, then r2, then r0 */
	ring_until_used_after(&r[0], &v[0], &n, hw, 0, hw_doorbell_last_use(hw, 2));
	assert_int_equal(os_doorbell_connect(r[3].q), 0);
	victims[0] = victims[1] = -1;
	for (int i = 0; i < 3; i++)
		if (os_doorbell_status(r[i].q) == OS_DOORBELL_DISCONNECTED_RETRY)
			victims[0] = i;
	/* r2 rings after r3's connect: least recently used now r0 (its ring),
	 * then r3 (its connect), then r2 */
	if (victims[0] == 1)
		ring_until_used_after(&r[2], &v[2], &n, hw, 2, hw_doorbell_last_use(hw, 1));
	struct os_hwqueue *v1 = r[victims[0] >= 0 ? victims[0] : 0].q;
	assert_int_equal(os_doorbell_connect(v1), 0);     /* the first victim comes back */
	for (int i = 0; i < 4; i++)
		if (r[i].q != v1 && os_doorbell_status(r[i].q) == OS_DOORBELL_DISCONNECTED_RETRY)
			victims[1] = i;
	assert_int_equal(umt_stats(&t).victimizations, 2);
	assert_int_equal(os_device_destroy(d), 0);
	for (int i = 0; i < 4; i++)
		os_fence_destroy(r[i].progress);
	umt_down(&t);
}

static void victimize_doorbell_least_recently_used_of_several(void **state)
{
	int victims[2];
	lru_victims(OS_UMS_FAULT_NONE, victims);
	/* r1 had not rung since its connect (r0, connected before it, rang);
	 * then r0, whose ring is older than r3's connect and r2's ring */
	assert_int_equal(victims[0], 1);
	assert_int_equal(victims[1], 0);
	/* broken: the most recently used goes (r0, which just rang) */
	lru_victims(OS_UMS_FAULT_VICTIM_MRU, victims);
	assert_int_not_equal(victims[0], 1);
}

/* Seed, "Hardware context suspension", step 4: "If KMD chooses to victimize
 * the doorbell of a suspended HWQueue, then UMD loses its connection. UMD can
 * attempt to reconnect the doorbell and KMD will assign a new doorbell to
 * this queue. The intention is to not stall the UMD, but rather to allow it
 * to continue submitting work that the HW engine can eventually process once
 * the context is resumed."  One physical doorbell, two queues. */
static void victimize_suspended_hwqueue_doorbell_then_reconnect(void **state)
{
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, 1, 5 * SEC);
	struct rt_queue *q1 = umt_queue(&t, 0, true), *q2 = umt_queue(&t, 0, true);
	_Atomic uint64_t n1 = 0, n2 = 0;
	umt_submit_count(q1, &n1);
	assert_int_equal(rt_queue_wait(q1, 0, 5 * SEC), 0);
	os_context_suspend(rt_queue_context(q1));
	/* suspended: still connected, work queues up, nothing runs */
	assert_int_equal(os_doorbell_status(rt_queue_os(q1)), OS_DOORBELL_CONNECTED);
	umt_submit_count(q1, &n1);
	/* the KMD victimizes the suspended queue's doorbell for q2 */
	umt_submit_count(q2, &n2);
	assert_int_equal(rt_queue_wait(q2, 0, 5 * SEC), 0);
	assert_int_equal(os_doorbell_status(rt_queue_os(q1)), OS_DOORBELL_DISCONNECTED_RETRY);
	assert_int_equal(umt_stats(&t).victimizations, 1);
	/* the UMD reconnects while suspended: not stalled, a new doorbell */
	umt_submit_count(q1, &n1);
	assert_int_equal(os_doorbell_status(rt_queue_os(q1)), OS_DOORBELL_CONNECTED);
	assert_int_equal(os_doorbell_status(rt_queue_os(q2)), OS_DOORBELL_DISCONNECTED_RETRY);
	assert_int_equal(umt_stats(&t).victimizations, 2);
	struct rt_queue_stats s;
	rt_queue_stats(q1, &s);
	assert_int_equal(s.connects, 2);
	assert_int_equal(s.um_submits, 3);
	assert_int_equal(s.fallbacks, 0);
	fbt_settle();
	assert_int_equal(atomic_load(&n1), 1);          /* suspended: nothing more ran */
	assert_int_equal(os_hwqueue_last_queued(rt_queue_os(q1)), 3);
	/* resumed: the engine processes what was queued, each buffer once */
	os_context_resume(rt_queue_context(q1));
	assert_int_equal(rt_queue_wait(q1, 0, 5 * SEC), 0);
	assert_int_equal(atomic_load(&n1), 3);
	assert_int_equal(atomic_load(&n2), 1);
	umt_down(&t);
}

/* ---- stress: threads > doorbells, constant victimization ---- */

struct stress_thread {
	pthread_t th;
	struct rt_queue *q;
	_Atomic uint64_t *counts;
	unsigned k;
	int64_t deadline_ns;
	_Atomic uint64_t *lost_total;
	uint64_t stop_after_lost;
	uint64_t lost, done;
};

/* Lockstep: each buffer must complete within the deadline, or it was lost
 * (a later ring of the same queue may still run it: that is counted too). */
static void *stress_main(void *arg)
{
	struct stress_thread *s = arg;
	for (unsigned i = 0; i < s->k; i++) {
		if (s->stop_after_lost && atomic_load(s->lost_total) >= s->stop_after_lost)
			break;
		uint64_t v = umt_submit_count(s->q, &s->counts[i]);
		int rc = rt_queue_wait(s->q, v, s->deadline_ns);
		if (rc == -ETIMEDOUT) {
			s->lost++;
			atomic_fetch_add(s->lost_total, 1);
		}
		s->done++;
	}
	return NULL;
}

/* Widen the window between the status check and the ring, once per
 * submission (every retry too would let six threads steal two doorbells
 * from each other indefinitely). */
static void yield_before_ring(struct rt_queue *q)
{
	static __thread uint64_t last;
	uint64_t v = rt_queue_submitted(q);
	if (v != last) {
		last = v;
		sched_yield();
	}
}

struct stress_result {
	uint64_t submitted, lost, ran_once, ran_other, victimizations, retries, connects;
	double secs;
};

static struct stress_result stress(enum rt_broken broken, unsigned threads, unsigned doorbells, unsigned k,
				   int64_t deadline_ns, uint64_t stop_after_lost)
{
	enum { MAXT = 16 };
	struct umt t = umt_up(1, HW_DOORBELL_DEDICATED, doorbells, 0);
	struct stress_thread s[MAXT];
	_Atomic uint64_t lost_total = 0;
	struct stress_result r = { 0 };
	for (unsigned i = 0; i < threads; i++) {
		struct rt_queue_desc desc = { .engine = 0, .user_mode = true, .broken = broken };
		memset(&s[i], 0, sizeof(s[i]));
		assert_int_equal(rt_queue_create(t.d, &desc, &s[i].q), 0);
		s[i].counts = calloc(k, sizeof(*s[i].counts));
		s[i].k = k;
		s[i].deadline_ns = deadline_ns;
		s[i].lost_total = &lost_total;
		s[i].stop_after_lost = stop_after_lost;
	}
	rt_test_ring_hook = yield_before_ring;
	uint64_t t0 = lf_now_ns();
	for (unsigned i = 0; i < threads; i++)
		pthread_create(&s[i].th, NULL, stress_main, &s[i]);
	for (unsigned i = 0; i < threads; i++)
		pthread_join(s[i].th, NULL);
	r.secs = (lf_now_ns() - t0) / 1e9;
	rt_test_ring_hook = NULL;
	struct os_ums_stats us = umt_stats(&t);
	r.victimizations = us.victimizations;
	for (unsigned i = 0; i < threads; i++) {
		struct rt_queue_stats qs;
		rt_queue_stats(s[i].q, &qs);
		r.retries += qs.retries;
		r.connects += qs.connects;
		r.submitted += s[i].done;
		r.lost += s[i].lost;
	}
	/* normal termination: a buffer whose ring was lost runs now (the CMP
	 * reads the final write pointer); none may run twice */
	assert_int_equal(rt_device_destroy(t.d), 0);
	t.d = NULL;
	for (unsigned i = 0; i < threads; i++) {
		for (unsigned j = 0; j < s[i].done; j++) {
			uint64_t c = atomic_load(&s[i].counts[j]);
			if (c == 1)
				r.ran_once++;
			else
				r.ran_other++;
		}
		free(s[i].counts);
	}
	umt_down(&t);
	printf("[ STRESS   ] %s: %u threads, %u doorbells: %llu buffers, %llu ran once, %llu not once, "
	       "%llu lost rings, %llu victimizations (%.0f/s), %llu retries, %llu connects, %.2f s\n",
	       broken ? "no-status-check" : "seed loop", threads, doorbells, (unsigned long long)r.submitted,
	       (unsigned long long)r.ran_once, (unsigned long long)r.ran_other, (unsigned long long)r.lost,
	       (unsigned long long)r.victimizations, r.secs > 0 ? r.victimizations / r.secs : 0.0,
	       (unsigned long long)r.retries, (unsigned long long)r.connects, r.secs);
	return r;
}

static unsigned stress_k(void)
{
#ifdef FB_SANITIZER
	return fb_soak() ? 10000 : 1000;
#else
	return fb_soak() ? 100000 : 5000;
#endif
}

static void stress_many_threads_few_doorbells_exactly_once(void **state)
{
	unsigned k = stress_k();
	struct stress_result r = stress(RT_BROKEN_NONE, 6, 2, k, 2 * SEC, 0);
	assert_int_equal(r.submitted, 6ull * k);
	assert_int_equal(r.ran_once, 6ull * k);
	assert_int_equal(r.ran_other, 0);
	assert_int_equal(r.lost, 0);
	assert_true(r.victimizations > 0);
	assert_true(r.retries > 0);                      /* rings did land on the dummy page */
}

/* Broken: the loop does not read the status after ringing.  Under the same
 * victimization, rings land on the dummy page unnoticed: lost rings. */
static void broken_no_status_check_is_caught(void **state)
{
	struct stress_result r = stress(RT_BROKEN_NO_STATUS_CHECK, 6, 2, stress_k(), 30000000, 3);
	assert_true(r.lost > 0);
	assert_int_equal(r.ran_other, 0);                /* late, but still once: the ring buffer is the truth */
}

FB_TEST_MAIN(cmocka_unit_test(victimization_follows_the_kmd_pseudocode),
	     cmocka_unit_test(residency_model_umd_makes_ring_buffer_allocations_resident_before_create_doorbell),
	     cmocka_unit_test(residency_model_runtime_ring_allocations_resident_broken_variant_refused),
	     cmocka_unit_test(dxgkrnl_takes_reference_on_ring_allocations_during_doorbell_lifetime),
	     cmocka_unit_test(device_termination_destroys_ring_buffer_allocations),
	     cmocka_unit_test(doorbell_memory_size_from_usermodesubmission_caps),
	     cmocka_unit_test(doorbell_mapping_has_the_caps_doorbell_size),
	     cmocka_unit_test(victimization_moves_the_victim_before_releasing_its_doorbell),
	     cmocka_unit_test(dedicated_doorbells_one_pool_across_processes),
	     cmocka_unit_test(dedicated_doorbell_ring_looks_at_its_queue_only),
	     cmocka_unit_test(destroying_a_hwqueue_leaves_the_umd_ring_allocations_alive),
	     cmocka_unit_test(abort_fallback_reports_ring_allocations_destroyed_under_it),
	     cmocka_unit_test(victimize_doorbell_least_recently_used_of_several),
	     cmocka_unit_test(victimize_suspended_hwqueue_doorbell_then_reconnect),
	     cmocka_unit_test(d3dkmt_destroy_doorbell_disconnects_ring_buffer_stays),
	     cmocka_unit_test(user_mode_hwqueue_refused_on_kernel_mode_submission_path),
	     cmocka_unit_test(stress_many_threads_few_doorbells_exactly_once),
	     cmocka_unit_test(broken_no_status_check_is_caught))
