/* benchmarks/scenarios/limits.c — scenario "limits": the machine's own limits, as a result.
 *
 * Measures what every latency of fencebench is compared against (see
 * src/fb_limits.h) with the scenario's own sample counts, and reports each
 * as a latency histogram: the core-to-core cache-line round trip between the
 * first two CPUs of the run (one line; and two lines, each written by one
 * side: a round trip of messages), a bare syscall, and futex wake-to-run.  One
 * sample per iteration of each (--iterations, default 100; --duration is
 * refused: the scenario does not declare takes_duration).
 */
#include <errno.h>

#include "src/fb_hist.h"
#include "src/fb_limits.h"
#include "src/fb_scenario.h"

#define BUDGET_MS 2000          /* per measurement: a busy machine gives up, never hangs */
#define DURATION_SAMPLES 100    /* samples without an iteration count (not reached: --duration is refused) */

static const struct fb_param limits_params[] = {
	FB_PARAM_INT("batch", "ops", 100, 1, 100000,
		     "round trips (or syscalls) timed together as one sample"),
	FB_PARAM_INT("gap_us", "us", 200, 0, 100000,
		     "idle time before each futex wake (lets the waiter's CPU go idle)"),
	FB_PARAM_END
};

typedef int (*pingpong_fn)(int cpu_a, int cpu_b, unsigned batches, unsigned per_batch, unsigned budget_ms,
			   struct fb_hist *h);

/* One round trip (one line or two) as the histogram `name`; what: for the notes. */
static int report_pingpong(struct fb_run *run, struct fb_hist *h, unsigned samples, unsigned batch,
			   pingpong_fn measure, const char *name, const char *what)
{
	fb_hist_reset(h);
	int rc = measure(fb_run_cpu(run, 0), fb_run_cpu(run, 1), samples, batch, BUDGET_MS, h);
	if (rc == -ETIMEDOUT)
		fb_run_note(run, "%s timed out after %u of %u samples: CPUs busy", what, (unsigned)fb_hist_count(h),
			    samples);
	else if (rc)
		return fb_run_error(run, rc, "cannot pin the round-trip threads to CPUs %d and %d",
				    fb_run_cpu(run, 0), fb_run_cpu(run, 1));
	fb_run_hist(run, name, h, FB_LIMIT_NONE);
	return 0;
}

static int report_rtt(struct fb_run *run, struct fb_hist *h, unsigned samples, unsigned batch)
{
	if (fb_run_ncpus(run) < 2) {
		fb_run_note(run, "cache-line round trip cannot be measured: it needs two CPUs (CPU %d only)",
			    fb_run_cpu(run, 0));
		return 0;
	}
	int rc = report_pingpong(run, h, samples, batch, fb_limits_cacheline_rtt, "cacheline_rtt",
				 "cache-line round trip");
	if (!rc)
		rc = report_pingpong(run, h, samples, batch, fb_limits_cacheline_msg_rtt, "cacheline_msg_rtt",
				     "cache-line message round trip");
	return rc;
}

static int limits_run(struct fb_run *run)
{
	unsigned samples = fb_run_iterations(run) ? (unsigned)fb_run_iterations(run) : DURATION_SAMPLES;
	unsigned batch = (unsigned)fb_run_int(run, "batch");
	unsigned gap_us = (unsigned)fb_run_int(run, "gap_us");
	struct fb_hist *h = fb_hist_new();
	int rc;

	fb_run_measure_begin(run);
	rc = report_rtt(run, h, samples, batch);
	if (rc)
		goto out;

	fb_hist_reset(h);
	fb_limits_syscall(samples, batch, h);
	fb_run_hist(run, "syscall", h, FB_LIMIT_NONE);

	fb_hist_reset(h);
	int waiter = fb_run_cpu(run, fb_run_ncpus(run) > 1 ? 1 : 0);
	rc = fb_limits_futex_wake(fb_run_cpu(run, 0), waiter, samples, gap_us, BUDGET_MS, h);
	if (rc == -ETIMEDOUT) {
		fb_run_note(run, "futex wake-to-run timed out after %u of %u samples: CPUs busy",
			    (unsigned)fb_hist_count(h), samples);
		rc = 0;
	} else if (rc) {
		rc = fb_run_error(run, rc, "cannot pin the futex threads to CPUs %d and %d",
				  fb_run_cpu(run, 0), waiter);
		goto out;
	}
	fb_run_hist(run, "futex_wake", h, FB_LIMIT_NONE);
	fb_run_measure_end(run, samples);
out:
	fb_hist_free(h);
	return rc;
}

/* The two ping-pong threads spin, and only when there are two CPUs to ping-pong between. */
static unsigned limits_polling(const struct fb_run *run)
{
	return fb_run_ncpus(run) >= 2 ? 2 : 0;
}

const struct fb_scenario bm_scenario_limits = {
	.name = "limits",
	.summary = "the machine's limits: cache-line round trips (one line, two lines), bare syscall, futex wake-to-run",
	.params = limits_params,
	.compares_paths = false,
	.polling_threads = 2,
	.polling_threads_fn = limits_polling,
	.default_iterations = 100,
	.no_program_params = true,   /* no timing profile changes the machine's limits */
	.run = limits_run,
};
