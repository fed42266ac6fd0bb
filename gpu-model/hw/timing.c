/* gpu-model/hw/timing.c — the adapter's timing profile (hw_caps.timing):
 * how an engine spends a modelled latency, and where it applies them.
 *
 * The mechanism: a modelled clock kept by each engine, spent by yielding.
 * A latency L that starts at t ends, on the model's clock, at t + L; the
 * engine does not go on (execute the command, make the write visible, hand
 * the interrupt record to the OS) until CLOCK_MONOTONIC has passed t + L.
 * While it waits it calls sched_yield() whenever more than
 * HW_TIMING_YIELD_NS are left, else it spins on the clock.  What that buys
 * on a shared CPU: a CPU-side thread (the application, the OS interrupt
 * thread) that is runnable on the engine's CPU gets it at the first yield,
 * so the delay takes CPU from no one being measured; with nothing else
 * runnable, the yield returns at once (about 0.3 us on the 2-CPU reference
 * VM) and the engine reads the clock again.  What was rejected: a sleep
 * (nanosleep, a futex with a timeout) costs a wake-up, 28-34 us on the VM,
 * more than the 1-3 us latencies being modelled; spinning at the thread's
 * own weight without yielding takes a CPU the measured threads share.
 *
 * Precision: a latency ends no earlier than modelled (a lower bound, as on
 * hardware that is never faster than its profile).  It ends late by the
 * clock read or the yield in progress when the deadline passes (under a
 * microsecond when the CPU is free) and, when a CPU-side thread holds the
 * engine's CPU, by as long as that thread runs: the engines count each
 * latency's lateness (hw_engine_stats.timed_late_ns) so outputs can say by
 * how much the model ran behind its profile.
 *
 * Where the latencies apply (engine.c, irq raising here):
 *   cmd_ns          before each command the engine fetches (not pipelined:
 *                   a real command processor overlaps decode with execution
 *                   of the previous command; the model does not);
 *   signal_ns       before a SIGNAL's write (the flush a fence signal implies);
 *   visible_*_ns    after a SIGNAL, STAMP or COUNT is executed, before its
 *                   write lands (the engine holds the write: commands after
 *                   it wait too, where a real GPU would go on);
 *   wait_poll_*_ns  a blocked WAIT is released at the first poll of its
 *                   fence at or after the engine saw the value reached; the
 *                   polls come every wait_poll ns from a random phase when it
 *                   blocked (the GPU's poll loop knows nothing of when the
 *                   write will land), so a release waits wait_poll / 2 on
 *                   average;
 *   doorbell_ns     before the first command of work found on a queue that
 *                   had none (a doorbell ring, a direct submission, a kick);
 *   irq_ns          before an interrupt record is handed to the OS.
 *
 * Where an idle engine waits.  Without a profile an engine with nothing
 * runnable polls for caps.idle_spin_ns (20 us) and then parks on a futex
 * (engine.c); new work or a signal that may release one of its waits
 * wakes it.  Under a profile that wake-up would be a cost no GPU pays: a
 * real engine sees a reached fence within its poll interval and new work
 * within doorbell_ns (1.6 us in h200-pcie5), while a parked model engine
 * first needs the host to run its thread again (a futex wake-to-run,
 * 24-34 us on the 2-CPU reference VM), so the model, not the profile,
 * would decide any latency that crosses an idle engine.  Measured on that
 * VM under h200-pcie5 (gpu-wait, 5000 rounds): engine B parked behind its
 * blocked WAIT in most rounds and the native GPU wait's p50 was 22.9 us
 * against the profile's 5 us.  So under a profile an idle engine goes on
 * polling for HW_TIMING_IDLE_POLL_NS, lowered and yielding as an engine
 * with doorbells connected does (engine.c, "Idle polling": nice 10, a
 * yield every few passes, so the CPU-side threads being measured get the
 * CPU at once), and parks only after that: polling stays bounded, and an
 * engine idle for longer pays the wake-up as before.  The ideal profile
 * keeps today's 20 us.
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "gpu-model/hw/hw_internal.h"
#include "lockfree/arch.h"

#define HW_TIMING_YIELD_NS 1500   /* more than this left: yield; less: spin on the clock */
#define HW_TIMING_IDLE_POLL_NS 1000000ull   /* under a profile: an idle engine polls 1 ms before it parks */

void hw_timing_spend_until(struct hw_engine *e, uint64_t start, uint64_t until)
{
	uint64_t now = lf_now_ns();
	while (now < until) {
		if (until - now > HW_TIMING_YIELD_NS)
			sched_yield();
		else
			lf_cpu_relax();
		now = lf_now_ns();
	}
	if (!e)
		return;
	lf_count(&e->timed, 1);
	lf_count(&e->timed_ns, until - start);
	lf_count(&e->timed_late_ns, now - until);
}

void hw_timing_spend(struct hw_engine *e, uint64_t ns)
{
	if (!ns)
		return;
	uint64_t t = lf_now_ns();
	hw_timing_spend_until(e, t, t + ns);
}

uint64_t hw_timing_visible_ns(const struct hw_adapter *a, const struct hw_fence *f)
{
	const struct hw_timing *t = &a->caps.timing;
	return f && f->local ? t->visible_local_ns : t->visible_sys_ns;
}

uint64_t hw_timing_poll_ns(const struct hw_adapter *a, const struct hw_fence *f)
{
	const struct hw_timing *t = &a->caps.timing;
	return f && f->local ? t->wait_poll_local_ns : t->wait_poll_sys_ns;
}

void hw_timing_wait_release(struct hw_engine *e, const struct hw_queue *q)
{
	uint64_t poll = hw_timing_poll_ns(e->a, q->wait_fence);
	if (!poll || !q->wait_since_ns)
		return;
	uint64_t now = lf_now_ns();
	/* the first poll at or after now, on the grid that started when it blocked */
	uint64_t polls = (now - q->wait_since_ns + poll - 1) / poll;
	uint64_t until = q->wait_since_ns + polls * poll;
	if (until > now)
		hw_timing_spend_until(e, now, until);
}

uint64_t hw_timing_poll_grid(struct hw_engine *e, const struct hw_fence *f)
{
	uint64_t poll = hw_timing_poll_ns(e->a, f);
	if (!poll)
		return 0;
	/* splitmix64 of the engine's own sequence: a phase in [0, poll) */
	uint64_t z = (e->poll_rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return lf_now_ns() - z % poll;
}

bool hw_timing_polls_idle(const struct hw_adapter *a, uint64_t idle_ns)
{
	static const struct hw_timing ideal;
	return idle_ns < HW_TIMING_IDLE_POLL_NS && memcmp(&a->caps.timing, &ideal, sizeof(ideal)) != 0;
}

bool hw_timing_check(const struct hw_timing *t, char *what, size_t len)
{
	const struct { const char *name; uint64_t v; } f[] = {
		{ "cmd_ns", t->cmd_ns }, { "signal_ns", t->signal_ns }, { "visible_sys_ns", t->visible_sys_ns },
		{ "visible_local_ns", t->visible_local_ns }, { "wait_poll_sys_ns", t->wait_poll_sys_ns },
		{ "wait_poll_local_ns", t->wait_poll_local_ns }, { "doorbell_ns", t->doorbell_ns },
		{ "irq_ns", t->irq_ns },
	};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i].v > HW_TIMING_MAX_NS) {
			snprintf(what, len, "timing %s=%llu: more than %llu ns", f[i].name, (unsigned long long)f[i].v,
				 HW_TIMING_MAX_NS);
			return false;
		}
	return true;
}
