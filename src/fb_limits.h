/* src/fb_limits.h — the machine's own limits, measured in the same process (fb_limits).
 *
 * Every latency fencebench reports is printed beside one of these, as a ratio:
 *
 *   FB_LIMIT_CACHELINE_RTT   core-to-core cache-line round trip between the first
 *                            two CPUs of the run (two pinned threads ping-pong one
 *                            line); what any cross-core hand-off costs at least
 *   FB_LIMIT_CACHELINE_HALF  half of it: one migratory line transfer (the line
 *                            moves to the reader, who writes it next)
 *   FB_LIMIT_CACHELINE_MSG   one-way message: half the round trip of two lines,
 *                            each written by one CPU and polled by the other — a
 *                            doorbell ring or a CV publication seen by a polling
 *                            core.  A write to a line the other CPU holds must
 *                            first take it back, then the poller fetches it: on
 *                            the reference VM about twice FB_LIMIT_CACHELINE_HALF,
 *                            and no single-writer flag beats it
 *   FB_LIMIT_SYSCALL         a bare syscall (syscall(SYS_getppid)): the floor of
 *                            any kernel-mode path (legacy submission, OS signal)
 *   FB_LIMIT_FUTEX_WAKE      futex wake-to-run: one thread FUTEX_WAITs, another
 *                            stamps the time and FUTEX_WAKEs it; the time until
 *                            the waiter runs (on an idle vCPU this includes the
 *                            hypervisor waking it) — the floor of any CPU wait
 *
 * fb_limits_measure takes well under a second (about 50 ms idle).  It spawns
 * pinned threads, joins them before returning and is called by one thread
 * (the harness, before the scenario).  Every spin in here is bounded by a
 * deadline; a measurement that cannot finish (CPUs busy elsewhere) is left NAN
 * with a note, never hangs.  All functions return 0 or -errno.
 */
#ifndef FB_LIMITS_H
#define FB_LIMITS_H

#include <stddef.h>

struct fb_hist;

enum fb_limit {
	FB_LIMIT_NONE = 0,
	FB_LIMIT_CACHELINE_RTT,
	FB_LIMIT_CACHELINE_HALF,
	FB_LIMIT_SYSCALL,
	FB_LIMIT_FUTEX_WAKE,
	FB_LIMIT_CACHELINE_MSG,
	FB_LIMIT__COUNT
};

struct fb_limits {
	double cacheline_rtt_ns;   /* median; NAN when not measurable (one CPU) or timed out */
	double cacheline_msg_ns;   /* one-way message: half the two-line round trip's median; NAN likewise */
	double syscall_ns;         /* median */
	double futex_wake_ns;      /* median */
	int cpu_a, cpu_b;          /* the round trip's CPUs (cpu_b == -1 when one CPU) */
	char note[192];            /* why a value is NAN, "" otherwise */
};

/* Measure them all on the CPUs given (cpus[0] and cpus[1] for the round trip
 * and the futex wake; one CPU: the round trip is NAN with a note saying why).
 * Blocks for tens of milliseconds.  0, or -EINVAL (ncpus == 0), or the -errno
 * of pinning a thread. */
int fb_limits_measure(const int *cpus, size_t ncpus, struct fb_limits *out);

/* The value a latency is compared against; NAN for FB_LIMIT_NONE or unmeasured. */
double fb_limits_value(const struct fb_limits *l, enum fb_limit which);
/* Short stable name: "cacheline-rtt", "cacheline-oneway", "cacheline-msg", "syscall", "futex-wake", "none". */
const char *fb_limit_name(enum fb_limit which);

/* ---- the building blocks, for the limits scenario's own sample counts ----
 * Each records one sample per batch into h (ns per operation; h is owned by
 * the calling thread again when the function returns). */

/* Ping-pong a cache line between threads pinned to cpu_a and cpu_b: batches
 * samples of per_batch round trips each.  -ETIMEDOUT when the partner did not
 * answer within budget_ms (CPUs busy), the samples so far are kept. */
int fb_limits_cacheline_rtt(int cpu_a, int cpu_b, unsigned batches, unsigned per_batch,
			    unsigned budget_ms, struct fb_hist *h);
/* The same with two lines, each written by one thread and polled by the
 * other (ping writes the ball, pong the answer): a round trip of messages. */
int fb_limits_cacheline_msg_rtt(int cpu_a, int cpu_b, unsigned batches, unsigned per_batch,
				unsigned budget_ms, struct fb_hist *h);
/* The floor of a user-mode submission on these CPUs: the seed's mechanism
 * with no model around it.  A submitter on cpu_app writes a 48-byte command
 * slot, a write pointer and a doorbell register (three lines, in the seed's
 * order) after gap_ns idle; a bare engine on cpu_engine polls the register
 * without pause, reads the write pointer and the slot, and stamps the time
 * (lf_ticks_ordered at both ends, as the submit-latency scenario).  One
 * sample per submission, submit to stamp.  -ETIMEDOUT past budget_ms. */
int fb_limits_doorbell_floor(int cpu_app, int cpu_engine, unsigned samples, unsigned gap_ns,
			     unsigned budget_ms, struct fb_hist *h);
/* Time syscall(SYS_getppid) on the calling thread: batches of per_batch calls. */
int fb_limits_syscall(unsigned batches, unsigned per_batch, struct fb_hist *h);
/* Futex wake-to-run: the waker pinned to cpu_waker, the waiter to cpu_waiter
 * (may be the same CPU), gap_us idle before each wake so the waiter is parked
 * (and its vCPU idle).  One sample per wake. */
int fb_limits_futex_wake(int cpu_waker, int cpu_waiter, unsigned samples, unsigned gap_us,
			 unsigned budget_ms, struct fb_hist *h);

#endif
