/* tests/test_fence_legacy.c — conformance of the legacy monitored fence path
 * (seed context-monitoring-legacy-monitored-fence), one test per rule. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/fb_test.h"
#include "tests/fence_test_util.h"

static struct os_adapter *legacy_adapter_caps(bool no64, bool iommu)
{
	struct os_config cfg;
	os_config_default(&cfg);
	cfg.caps.native_fence = false;
	cfg.native_fence_enabled = false;
	cfg.caps.no_64bit_atomics = no64;
	cfg.caps.iommu = iommu;
	return fbt_adapter(&cfg);
}

static struct os_adapter *legacy_adapter(bool no64)
{
	return legacy_adapter_caps(no64, false);
}

/* "GPU signal ... raising a monitored fence signaled interrupt": always, waiters or not. */
static void gpu_signal_always_interrupts(void **state)
{
	struct os_adapter *a = legacy_adapter(false);
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &f), 0);
	assert_false(os_fence_is_native(f));    /* no native support: a monitored fence */
	struct os_queue *q = fbt_queue(a, 0, 64);
	for (uint64_t v = 1; v <= 50; v++)
		fbt_signal_gpu(q, f, v);
	assert_true(fbt_eventually(fbt_stats(a).interrupts == 50));
	struct os_stats s = fbt_stats(a);
	assert_int_equal(s.gpu_interrupts, 50);
	assert_int_equal(s.spurious, 50);        /* nobody waited */
	fbt_down(a);
}

/* "Goes through the list of fence objects with pending waits ... reads their
 * current fence value ... determines whether there are any waits to unwait." */
static void interrupt_walks_fences_with_pending_waits(void **state)
{
	struct os_adapter *a = legacy_adapter(false);
	struct os_fence *f[16];
	for (int i = 0; i < 16; i++)
		assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0, 0, &f[i]), 0);
	struct lf_event ev[16];
	for (int i = 0; i < 16; i++) {
		lf_event_init(&ev[i]);
		os_fence_wait_event(f[i], 1, &ev[i]);
	}
	struct os_queue *q = fbt_queue(a, 0, 64);
	fbt_signal_gpu(q, f[5], 1);
	assert_int_equal(lf_event_wait(&ev[5], 0, 5000000000ll), 0);
	assert_true(fbt_eventually(fbt_stats(a).interrupts == 1));
	struct os_stats s = fbt_stats(a);
	assert_int_equal(s.fences_scanned, 16);  /* every fence, for one signal */
	assert_int_equal(s.released, 1);
	for (int i = 0; i < 16; i++)
		if (i != 5)
			assert_false(lf_event_is_set(&ev[i]));
	for (int i = 0; i < 16; i++)
		os_fence_signal_cpu(f[i], 1);
	for (int i = 0; i < 16; i++)
		assert_int_equal(lf_event_wait(&ev[i], 0, 5000000000ll), 0);
	fbt_down(a);
}

/* "When a command buffer completes execution on the GPU, the graphics
 * kernel: Goes through the list of fence objects with pending waits that
 * could be signaled for this process".  Two processes, four monitored
 * fences each, every one waited on: a GPU signal of one of process 1's
 * looks at process 1's four, not process 2's (and the other way round). */
static void interrupt_walks_the_signaling_process_fences_only(void **state)
{
	struct os_adapter *a = legacy_adapter(false);
	struct os_process *p[2];
	struct os_fence *f[2][4];
	struct lf_event ev[2][4];
	for (int k = 0; k < 2; k++) {
		assert_int_equal(os_process_create(&p[k]), 0);
		for (int i = 0; i < 4; i++) {
			assert_int_equal(os_process_fence_create(p[k], a, OS_FENCE_MONITORED, 0, 0, &f[k][i]), 0);
			lf_event_init(&ev[k][i]);
			assert_int_equal(os_fence_wait_event(f[k][i], 1, &ev[k][i]), 0);
		}
	}
	struct os_queue *q = fbt_queue(a, 0, 64);
	fbt_signal_gpu(q, f[0][2], 1);
	assert_int_equal(lf_event_wait(&ev[0][2], 0, 5000000000ll), 0);
	struct os_stats s = fbt_settled_stats(a);
	assert_int_equal(s.gpu_interrupts, 1);
	assert_int_equal(s.fences_scanned, 4);   /* process 1's */
	assert_int_equal(s.released, 1);
	fbt_signal_gpu(q, f[1][0], 1);
	assert_int_equal(lf_event_wait(&ev[1][0], 0, 5000000000ll), 0);
	s = fbt_settled_stats(a);
	assert_int_equal(s.gpu_interrupts, 2);
	assert_int_equal(s.fences_scanned, 8);   /* and process 2's */
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 4; i++) {
			if ((k == 0 && i == 2) || (k == 1 && i == 0))
				continue;
			assert_false(lf_event_is_set(&ev[k][i]));
			os_fence_signal_cpu(f[k][i], 1);
			assert_int_equal(lf_event_wait(&ev[k][i], 0, 5000000000ll), 0);
		}
	fbt_down(a);
	os_process_destroy(p[0]);
	os_process_destroy(p[1]);
}

/* "GPU wait": no wait on the GPU; "command buffers submitted after the wait
 * operation aren't scheduled for execution until the wait is satisfied". */
static void gpu_wait_held_on_cpu_until_signaled(void **state)
{
	struct os_adapter *a = legacy_adapter(false);
	struct os_fence *f, *g, *h;
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0, 0, &f), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0, 0, &g), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0, 0, &h), 0);
	struct os_queue *q = fbt_queue(a, 0, 64), *other = fbt_queue(a, 0, 64);
	struct hw_cmd cmds[3] = {
		{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(h), .value = 1 },  /* before the wait: runs */
		{ .op = HW_CMD_WAIT, .fence = os_fence_hw(f), .value = 5 },
		{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(g), .value = 1 },
	};
	assert_int_equal(os_queue_submit(q, cmds, 3), 0);
	struct hw_cmd later = { .op = HW_CMD_SIGNAL, .fence = os_fence_hw(g), .value = 2 };
	assert_int_equal(os_queue_submit(q, &later, 1), 0);   /* queued behind the held one */
	assert_true(fbt_eventually(os_fence_value(h) == 1));
	fbt_settle();
	assert_int_equal(os_queue_held(q), 2);
	assert_int_equal(os_fence_value(g), 0);
	fbt_signal_gpu(other, f, 4);                          /* not enough */
	assert_true(fbt_eventually(os_fence_value(f) == 4));
	fbt_settle();
	assert_int_equal(os_fence_value(g), 0);
	fbt_signal_gpu(other, f, 5);                          /* GPU signal: interrupt -> OS submits */
	assert_true(fbt_eventually(os_fence_value(g) == 2));
	assert_int_equal(os_queue_held(q), 0);
	assert_int_equal(fbt_stats(a).held_released, 2);
	/* and a CPU signal releases a held buffer too */
	struct hw_cmd again[2] = {
		{ .op = HW_CMD_WAIT, .fence = os_fence_hw(f), .value = 9 },
		{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(g), .value = 3 },
	};
	os_queue_submit(q, again, 2);
	fbt_settle();
	assert_int_equal(os_fence_value(g), 2);
	os_fence_signal_cpu(f, 9);
	assert_true(fbt_eventually(os_fence_value(g) == 3));
	fbt_down(a);
}

/* "CPU signal ... immediately unwaits any satisfied waits"; "CPU wait" blocks. */
static void cpu_signal_unwaits_blocking_waiter(void **state)
{
	struct os_adapter *a = legacy_adapter(false);
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0, 0, &f), 0);
	assert_int_equal(os_fence_wait_cpu(f, 1, 2000000), -ETIMEDOUT);
	os_fence_signal_cpu(f, 1);
	assert_int_equal(os_fence_wait_cpu(f, 1, 0), 0);
	assert_int_equal(fbt_stats(a).lost_wakeups, 0);
	fbt_down(a);
}

/* No64BitAtomics: "the OS handles the fence wraparound case automatically.
 * However ... outstanding wait and signal fence values can't be more than
 * UINT_MAX/2 away from the last signaled fence value." */
static void no64bit_atomics_wraparound_and_range(void **state)
{
	struct os_adapter *a = legacy_adapter(true);
	struct os_fence *f;
	const uint64_t base = 0xfffffff0ull;
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, base, 0, &f), 0);
	struct os_queue *q = fbt_queue(a, 0, 64);
	struct lf_event ev;
	lf_event_init(&ev);
	assert_int_equal(os_fence_wait_event(f, base + 0x20, &ev), 0);   /* across the wrap */
	fbt_signal_gpu(q, f, base + 0x10);                               /* low half wraps to 0 */
	assert_true(fbt_eventually(os_fence_value(f) == base + 0x10));
	assert_true(atomic_load(os_fence_hw(f)->cv) == 0);               /* the GPU wrote 32 bits */
	assert_false(lf_event_is_set(&ev));
	fbt_signal_gpu(q, f, base + 0x20);
	assert_int_equal(lf_event_wait(&ev, 0, 5000000000ll), 0);
	assert_true(os_fence_value(f) == base + 0x20);
	uint64_t last = base + 0x20;
	assert_int_equal(os_fence_signal_cpu(f, last + UINT32_MAX / 2 + 1), -ERANGE);
	assert_int_equal(os_fence_wait_cpu(f, last + UINT32_MAX / 2 + 1, 0), -ERANGE);
	assert_int_equal(os_fence_signal_cpu(f, last + UINT32_MAX / 2), 0);
	assert_true(os_fence_value(f) == last + UINT32_MAX / 2);
	fbt_down(a);
}

/* "outstanding wait and signal fence values can't be more than UINT_MAX/2
 * away from the last signaled fence value": GPU SIGNAL and WAIT (a WAIT is
 * held on the CPU) too, and SignalSynchronizationObjectFromGpuCb's packet;
 * nothing of a refused buffer runs. */
static void no64bit_atomics_range_on_gpu_signal_and_wait(void **state)
{
	struct os_adapter *a = legacy_adapter(true);
	struct os_fence *f, *g;
	const uint64_t last = 0x1fffffff0ull;
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, last, 0, &f), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0, 0, &g), 0);
	struct os_queue *q = fbt_queue(a, 0, 64);
	const uint64_t far = last + UINT32_MAX / 2 + 1, near = last + UINT32_MAX / 2;
	struct hw_cmd sig[2] = {
		{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(g), .value = 1 },
		{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(f), .value = far },
	};
	assert_int_equal(os_queue_submit(q, sig, 2), -ERANGE);
	assert_int_equal(os_queue_submit_buffer(q, sig, 2, false, NULL), -ERANGE);
	sig[1].value = last - UINT32_MAX / 2 - 1;                      /* too far below, too */
	assert_int_equal(os_queue_submit(q, sig, 2), -ERANGE);
	struct hw_cmd wait[2] = {
		{ .op = HW_CMD_WAIT, .fence = os_fence_hw(f), .value = far },
		{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(g), .value = 2 },
	};
	assert_int_equal(os_queue_submit(q, wait, 2), -ERANGE);
	assert_int_equal(os_queue_signal_from_gpu(q, f, far), -ERANGE);
	fbt_settle();
	assert_int_equal(os_fence_value(g), 0);                        /* nothing of them ran */
	assert_int_equal(os_queue_held(q), 0);
	/* within range: the held wait and the signal go through */
	wait[0].value = near;
	assert_int_equal(os_queue_submit(q, wait, 2), 0);
	sig[1].value = near;
	struct hw_cmd s2 = sig[1];
	struct os_queue *other = fbt_queue(a, 0, 64);
	assert_int_equal(os_queue_submit(other, &s2, 1), 0);
	assert_true(fbt_eventually(os_fence_value(g) == 2));
	assert_true(os_fence_value(f) == near);
	fbt_down(a);
}

/* No64BitAtomics with a fence signaled downward, each step within UINT32_MAX/2
 * of the last signaled value: the value reads back as signaled, not 2^32 ahead. */
static void no64bit_atomics_downward_signals(void **state)
{
	struct os_adapter *a = legacy_adapter(true);
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0x1c0000000ull, 0, &f), 0);
	assert_int_equal(os_fence_signal_cpu(f, 0x160000000ull), 0);
	assert_true(os_fence_value(f) == 0x160000000ull);
	assert_int_equal(os_fence_signal_cpu(f, 0x100000000ull), 0);
	assert_true(os_fence_value(f) == 0x100000000ull);
	/* not released by a misread value: 0x180000000 is too far ahead now */
	assert_int_equal(os_fence_wait_cpu(f, 0x180000000ull, 0), -ERANGE);
	assert_int_equal(os_fence_wait_cpu(f, 0x100000001ull, 1000000), -ETIMEDOUT);
	fbt_down(a);
}

/* The OS never waits on the GPU: feeding CPU-held buffers into a full ring
 * must not stall the interrupt thread.  q1's buffer behind a native WAIT N
 * fills its 4-slot ring; the SIGNAL N it needs is held on q2 behind the same
 * monitored wait.  The interrupt thread must go on to feed q2 (and keep
 * handling interrupts), and come back for the rest of q1. */
static void held_feed_never_waits_for_ring_space(void **state)
{
	alarm(60);   /* the bug is a hang: make it a failure */
	struct os_config cfg;
	os_config_default(&cfg);
	struct os_adapter *a = fbt_adapter(&cfg);
	struct os_fence *n, *m, *x;
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &n), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0, 0, &m), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &x), 0);
	struct os_queue *q1 = fbt_queue(a, 0, 4), *q2 = fbt_queue(a, 0, 4);
	struct hw_cmd wait_m = { .op = HW_CMD_WAIT, .fence = os_fence_hw(m), .value = 1 };
	struct hw_cmd b1[9] = { { .op = HW_CMD_WAIT, .fence = os_fence_hw(n), .value = 1 } };
	for (int i = 1; i < 9; i++)
		b1[i] = (struct hw_cmd){ .op = HW_CMD_WORK, .arg = 1000 };
	struct hw_cmd sig_n = { .op = HW_CMD_SIGNAL, .fence = os_fence_hw(n), .value = 1 };
	assert_int_equal(os_queue_submit(q1, &wait_m, 1), 0);
	assert_int_equal(os_queue_submit(q1, b1, 9), 0);     /* more than the ring holds */
	assert_int_equal(os_queue_submit(q2, &wait_m, 1), 0);
	assert_int_equal(os_queue_submit(q2, &sig_n, 1), 0);
	assert_int_equal(os_fence_signal_cpu(m, 1), 0);       /* the interrupt thread feeds q1 first */
	assert_int_equal(os_fence_wait_cpu(n, 1, 5000000000ll), 0);
	struct lf_event ev;
	lf_event_init(&ev);
	os_fence_wait_event(x, 1, &ev);
	os_fence_signal_cpu(x, 1);                            /* needs the interrupt thread */
	assert_int_equal(lf_event_wait(&ev, 0, 5000000000ll), 0);
	assert_true(fbt_eventually(os_queue_held(q1) == 0 && os_queue_held(q2) == 0));
	fbt_down(a);
	alarm(0);
}

/* ---- rewinding: seed multi-engine-synchronization, "If a race does occur,
 * between a value which will satisfy an outstanding wait, and a lower value
 * which will not, the wait will be satisfied regardless of which value
 * remains afterwards."  Legacy: CPU waits of every kind, and a GPU wait held
 * on the CPU (the buffer behind it is submitted), on 64- and 32-bit GPUs. ---- */

/* Hold a GPU wait for 20 on f in front of SIGNAL(g, n) on queue q. */
static void hold_gpu_wait(struct os_queue *q, struct os_fence *f, struct os_fence *g, uint64_t n)
{
	struct hw_cmd cmds[2] = {
		{ .op = HW_CMD_WAIT, .fence = os_fence_hw(f), .value = 20 },
		{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(g), .value = n },
	};
	size_t held = os_queue_held(q);
	assert_int_equal(os_queue_submit(q, cmds, 2), 0);
	assert_int_equal(os_queue_held(q), held + 1);
}

/* The rewinding tests' fences: f at 10 (the waits are for 20), other and g at 0. */
static void rewind_fences(struct os_adapter *a, struct os_fence **f, struct os_fence **other, struct os_fence **g)
{
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 10, 0, f), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0, 0, other), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0, 0, g), 0);
}

/* CPU: Signal(25); Signal(0) back to back releases every wait for 20, the
 * CPU waits before Signal(25) returns (zero-timeout checks). */
static void rewind_cpu_signal_releases_waits(void **state)
{
	for (int no64 = 0; no64 <= 1; no64++) {
		struct os_adapter *a = legacy_adapter(no64);
		struct os_fence *f, *other, *g;
		rewind_fences(a, &f, &other, &g);
		struct os_queue *q = fbt_queue(a, 0, 64);
		struct fbt_rewind r;
		fbt_rewind_arm(a, &r, f, other);
		hold_gpu_wait(q, f, g, 1);
		assert_int_equal(os_fence_signal_cpu(f, 25), 0);
		assert_int_equal(os_fence_signal_cpu(f, 0), 0);
		fbt_rewind_check(&r, 0);
		assert_true(fbt_eventually(os_fence_value(g) == 1));
		assert_true(fbt_eventually(os_queue_held(q) == 0));
		assert_int_equal(os_fence_value(f), 0);
		struct os_stats s = fbt_stats(a);
		assert_int_equal(s.lost_wakeups + s.timeouts, 0);
		fbt_down(a);
	}
}

/* GPU: the monitored fence signaled interrupt for 25 is handled after the
 * fence was rewound to 0 and still releases every wait for 20 and the held
 * buffer: first exactly that order (the engine's record for its write of 25,
 * handled once CurrentValue reads 0), then end to end (SIGNAL 25, SIGNAL 0
 * back to back on another queue). */
static void rewind_gpu_signal_releases_waits(void **state)
{
	for (int no64 = 0; no64 <= 1; no64++) {
		struct os_adapter *a = legacy_adapter(no64);
		struct os_fence *f, *other, *g;
		rewind_fences(a, &f, &other, &g);
		struct os_queue *held = fbt_queue(a, 0, 64), *q = fbt_queue(a, 0, 64);
		struct fbt_rewind r;
		fbt_rewind_arm(a, &r, f, other);
		hold_gpu_wait(held, f, g, 1);
		uint64_t s25 = hw_fence_write(os_fence_hw(f), 25, true);   /* the GPU's write, */
		hw_fence_write(os_fence_hw(f), 0, true);                    /* a rewind, then its interrupt */
		fbt_raise_signaled(a, HW_IRQ_MONITORED_FENCE_SIGNALED, HW_PAYLOAD_FENCE_ARRAY, f, 25, s25);
		fbt_rewind_check(&r, 5000000000ll);
		assert_true(fbt_eventually(os_fence_value(g) == 1));

		fbt_rewind_arm(a, &r, f, other);
		hold_gpu_wait(held, f, g, 2);
		struct hw_cmd cmds[2] = {
			{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(f), .value = 25 },
			{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(f), .value = 0 },
		};
		assert_int_equal(os_queue_submit(q, cmds, 2), 0);
		fbt_rewind_check(&r, 5000000000ll);
		assert_true(fbt_eventually(os_fence_value(g) == 2));
		assert_true(fbt_eventually(os_fence_value(f) == 0));
		assert_true(fbt_eventually(os_queue_held(held) == 0));
		assert_int_equal(fbt_stats(a).lost_wakeups, 0);
		fbt_down(a);
	}
}

/* "CPU signal ... immediately unwaits any satisfied waits": the event is set
 * when the signal returns (a zero-timeout check right after). */
static void cpu_signal_sets_events_before_it_returns(void **state)
{
	struct os_adapter *a = legacy_adapter(false);
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0, 0, &f), 0);
	for (uint64_t v = 1; v <= 1000; v++) {
		struct lf_event ev;
		lf_event_init(&ev);
		assert_int_equal(os_fence_wait_event(f, v, &ev), 0);
		assert_int_equal(os_fence_signal_cpu(f, v), 0);
		assert_int_equal(lf_event_wait(&ev, 0, 0), 0);
	}
	assert_int_equal(fbt_stats(a).signal_released, 1000);
	fbt_down(a);
}

/* The permissions of the mapping that holds p, as /proc/self/maps shows
 * them ("r--s", "rw-s"); "" if none holds it. */
static void mapping_perms(const volatile void *p, char perms[5])
{
	uintptr_t a = (uintptr_t)p;
	perms[0] = 0;
	FILE *maps = fopen("/proc/self/maps", "r");
	assert_non_null(maps);
	char line[512];
	while (fgets(line, sizeof(line), maps)) {
		unsigned long lo, hi;
		char pr[5];
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, pr) == 3 && a >= lo && a < hi) {
			memcpy(perms, pr, 5);
			break;
		}
	}
	fclose(maps);
}

/* Whether a store of v through p, made by a child process, completed (the
 * child exits 0 after it) or faulted. */
static bool store_survives(const _Atomic uint64_t *p, uint64_t v)
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);                 /* not cmocka's handler: the fault ends the child */
		signal(SIGBUS, SIG_DFL);
		*(volatile uint64_t *)(uintptr_t)p = v;   /* what the CPU "isn't allowed" to do */
		_exit(0);
	}
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* Seed, "Monitored fence creation": "FenceValueCPUVirtualAddress:
 * Read-only mapping of the fence value (64 bits) for the CPU ... The CPU
 * isn't allowed to write to this memory location.  To signal the fence,
 * the CPU is required to call the SignalSynchronizationObjectFromCpuCb";
 * "FenceValueGPUVirtualAddress: Read/write mapping of the fence value (64
 * bits) for the GPU ... the GPU is allowed to write directly to this GPU
 * virtual address"; both "aligned on a 64-bit boundary".  Two mappings of
 * one location: the CPU's read-only (a store faults, and the value stays),
 * the one the GPU VA maps read-write and the one the engine writes
 * through; a GPU signal and a CPU signal are both seen through the CPU's. */
static void monitored_fence_cpu_virtual_address_is_read_only(void **state)
{
	struct os_adapter *a = legacy_adapter(false);
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 7, 0, &f), 0);
	const _Atomic uint64_t *cpu = os_fence_cpu_va(f);
	uint64_t gpu = os_fence_gpu_va(f);
	assert_non_null(cpu);
	assert_true(gpu != 0);
	assert_true((uintptr_t)cpu % 8 == 0 && gpu % 8 == 0);
	/* the GPU VA maps (the GPU's page tables) the read-write page the engine writes */
	void *gpu_mem = hw_va_resolve(hw_adapter_process_vas(os_adapter_hw(a)), gpu);
	assert_ptr_equal(gpu_mem, os_fence_hw(f)->cv);
	assert_ptr_not_equal(gpu_mem, cpu);
	char perms[5];
	mapping_perms(cpu, perms);
	assert_string_equal(perms, "r--s");
	mapping_perms(gpu_mem, perms);
	assert_string_equal(perms, "rw-s");
	assert_int_equal(atomic_load(cpu), 7);
	struct os_queue *q = fbt_queue(a, 0, 64);
	fbt_signal_gpu(q, f, 9);                                 /* the GPU writes its mapping */
	assert_true(fbt_eventually(atomic_load(cpu) == 9));
	assert_int_equal(os_fence_signal_cpu(f, 11), 0);          /* the kernel writes for the CPU */
	assert_int_equal(atomic_load(cpu), 11);
	assert_false(store_survives(cpu, 12));                   /* the CPU's store faults */
	assert_int_equal(atomic_load(cpu), 11);
	assert_int_equal(os_fence_value(f), 11);
	fbt_down(a);
}

/* Seed, "Monitored fence creation": "Adapters that support IoMmu should
 * use this address [FenceValueCPUVirtualAddress] for GPU access.  The
 * address is mapped as read-write in this case"; "IoMmu GPUs shouldn't use
 * this address [FenceValueGPUVirtualAddress]".  On an IoMmu adapter the
 * fence has no GPU address, the engine writes through the CPU's (without a
 * GPU page fault), which is mapped read-write; signals from the GPU and the
 * CPU land there. */
static void iommu_gpu_uses_the_cpu_virtual_address(void **state)
{
	struct os_adapter *a = legacy_adapter_caps(false, true);
	struct os_fence *f;
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0, 0, &f), 0);
	const _Atomic uint64_t *cpu = os_fence_cpu_va(f);
	assert_non_null(cpu);
	assert_int_equal(os_fence_gpu_va(f), 0);                  /* unused */
	assert_ptr_equal(os_fence_hw(f)->cv, cpu);                 /* the GPU uses the CPU's address */
	char perms[5];
	mapping_perms(cpu, perms);
	assert_string_equal(perms, "rw-s");
	struct os_queue *q = fbt_queue(a, 0, 64);
	struct lf_event ev;
	lf_event_init(&ev);
	assert_int_equal(os_fence_wait_event(f, 3, &ev), 0);
	fbt_signal_gpu(q, f, 3);
	assert_int_equal(lf_event_wait(&ev, 0, 5000000000ll), 0);
	assert_int_equal(atomic_load(cpu), 3);
	assert_int_equal(hw_adapter_va_faults(os_adapter_hw(a)), 0);   /* no GPU VA was needed */
	assert_int_equal(os_fence_signal_cpu(f, 4), 0);
	assert_int_equal(atomic_load(cpu), 4);
	/* the same fence on an adapter without IoMmu: a GPU address of its own */
	struct os_adapter *b = legacy_adapter(false);
	struct os_fence *g;
	assert_int_equal(os_fence_create(b, OS_FENCE_MONITORED, 0, 0, &g), 0);
	assert_true(os_fence_gpu_va(g) != 0);
	assert_ptr_not_equal(os_fence_hw(g)->cv, os_fence_cpu_va(g));
	fbt_down(b);
	fbt_down(a);
}

/* Seed, "Monitored fence creation": "A monitored fence object is created
 * along with the following attributes: Initial value; Flags (specifying its
 * waiting and signaling behavior)".  Each flag's effect, against a fence
 * without it on the same adapter:
 *   NoSignal: GPU SIGNALs and software signal packets refused (-EPERM);
 *     GPU WAITs accepted, held, and released by a CPU signal;
 *   NoWait: GPU WAITs refused; GPU SIGNALs land; NoSignal with it: -EINVAL;
 *   NoGPUAccess: no GPU address; GPU SIGNALs refused, the software signal
 *     packet signals it; on a 32-bit GPU it is stored as 64 bits: values
 *     past UINT32_MAX/2 away are accepted (-ERANGE without the flag) and
 *     read back whole, a GPU WAIT for one is held and released;
 *   a native fence refuses them. */
static void monitored_fence_creation_flags_wait_and_signal_behavior(void **state)
{
	struct os_adapter *a = legacy_adapter(true);     /* 32-bit GPU: NoGPUAccess's 64-bit storage shows */
	struct os_fence *plain, *nosig, *nowait, *nogpu, *done, *bad;
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0, 0, &plain), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0, OS_FENCE_NO_SIGNAL, &nosig), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0, OS_FENCE_NO_WAIT, &nowait), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0, OS_FENCE_NO_GPU_ACCESS, &nogpu), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0, 0, &done), 0);
	assert_int_equal(os_fence_create(a, OS_FENCE_MONITORED, 0, OS_FENCE_NO_SIGNAL | OS_FENCE_NO_WAIT, &bad),
			 -EINVAL);
	struct os_queue *q = fbt_queue(a, 0, 64);
	struct hw_cmd sig = { .op = HW_CMD_SIGNAL, .value = 1 }, wait = { .op = HW_CMD_WAIT, .value = 1 };
	/* NoSignal */
	sig.fence = os_fence_hw(nosig);
	assert_int_equal(os_queue_submit(q, &sig, 1), -EPERM);
	assert_int_equal(os_queue_signal_from_gpu(q, nosig, 1), -EPERM);
	struct hw_cmd held[2] = { { .op = HW_CMD_WAIT, .fence = os_fence_hw(nosig), .value = 1 },
				  { .op = HW_CMD_SIGNAL, .fence = os_fence_hw(done), .value = 1 } };
	assert_int_equal(os_queue_submit(q, held, 2), 0);
	assert_int_equal(os_queue_held(q), 1);
	assert_int_equal(os_fence_signal_cpu(nosig, 1), 0);
	assert_int_equal(os_fence_wait_cpu(done, 1, 5000000000ll), 0);
	assert_int_equal(os_fence_value(nosig), 1);
	/* NoWait */
	wait.fence = os_fence_hw(nowait);
	assert_int_equal(os_queue_submit(q, &wait, 1), -EPERM);
	sig.fence = os_fence_hw(nowait);
	assert_int_equal(os_queue_submit(q, &sig, 1), 0);
	assert_int_equal(os_fence_wait_cpu(nowait, 1, 5000000000ll), 0);
	/* the plain fence takes both */
	sig.fence = os_fence_hw(plain);
	wait.fence = os_fence_hw(plain);
	assert_int_equal(os_queue_submit(q, &sig, 1), 0);
	assert_int_equal(os_queue_submit(q, &wait, 1), 0);
	assert_int_equal(os_fence_wait_cpu(plain, 1, 5000000000ll), 0);
	/* NoGPUAccess */
	assert_int_equal(os_fence_gpu_va(nogpu), 0);
	assert_true(os_fence_gpu_va(plain) != 0);
	sig.fence = os_fence_hw(nogpu);
	assert_int_equal(os_queue_submit(q, &sig, 1), -EPERM);
	const uint64_t big = 1ull << 40;
	assert_int_equal(os_queue_signal_from_gpu(q, plain, big), -ERANGE);   /* 32 bits: the range rule */
	assert_int_equal(os_queue_signal_from_gpu(q, nogpu, big), 0);          /* 64 bits: none */
	assert_int_equal(os_fence_wait_cpu(nogpu, big, 5000000000ll), 0);
	assert_int_equal(os_fence_value(nogpu), big);
	held[0] = (struct hw_cmd){ .op = HW_CMD_WAIT, .fence = os_fence_hw(nogpu), .value = 2 * big };
	held[1] = (struct hw_cmd){ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(done), .value = 2 };
	assert_int_equal(os_queue_submit(q, held, 2), 0);
	assert_int_equal(os_fence_signal_cpu(nogpu, 2 * big), 0);
	assert_int_equal(os_fence_wait_cpu(done, 2, 5000000000ll), 0);
	assert_int_equal(os_fence_value(nogpu), 2 * big);
	fbt_down(a);
	/* monitored fences only */
	struct os_config cfg;
	os_config_default(&cfg);
	struct os_adapter *n = fbt_adapter(&cfg);
	assert_true(os_adapter_native(n));
	assert_int_equal(os_fence_create(n, OS_FENCE_NATIVE, 0, OS_FENCE_NO_WAIT, &bad), -EINVAL);
	fbt_down(n);
}

FB_TEST_MAIN(cmocka_unit_test(rewind_cpu_signal_releases_waits),
	     cmocka_unit_test(monitored_fence_cpu_virtual_address_is_read_only),
	     cmocka_unit_test(iommu_gpu_uses_the_cpu_virtual_address),
	     cmocka_unit_test(monitored_fence_creation_flags_wait_and_signal_behavior),
	     cmocka_unit_test(rewind_gpu_signal_releases_waits),
	     cmocka_unit_test(cpu_signal_sets_events_before_it_returns),
	     cmocka_unit_test(held_feed_never_waits_for_ring_space),
	     cmocka_unit_test(no64bit_atomics_range_on_gpu_signal_and_wait),
	     cmocka_unit_test(no64bit_atomics_downward_signals),
	     cmocka_unit_test(gpu_signal_always_interrupts),
	     cmocka_unit_test(interrupt_walks_fences_with_pending_waits),
	     cmocka_unit_test(interrupt_walks_the_signaling_process_fences_only),
	     cmocka_unit_test(gpu_wait_held_on_cpu_until_signaled),
	     cmocka_unit_test(cpu_signal_unwaits_blocking_waiter),
	     cmocka_unit_test(no64bit_atomics_wraparound_and_range))
