/* benchmarks/scenarios/selftest.c — scenario "selftest": a synthetic workload that exercises the harness.
 *
 * It does no GPU work.  It exists so that the harness (sections, both paths,
 * every parameter type, latencies beside limits, role threads and their perf
 * groups, run failures, oversubscription warnings) can be tested end to end
 * through the fencebench binary, and as a short, complete example for
 * scenario writers.  Its numbers are deterministic functions of the
 * parameters, path and seed, so tests can check the outputs exactly:
 *   interrupts = iterations on legacy, 0 on native
 *   wait histogram: iterations values base, base+1, ... (base = wait_ns, doubled on legacy)
 *   power/idle_fraction = 0.75 native, 0.25 legacy
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "src/fb_hist.h"
#include "src/fb_scenario.h"
#include "lockfree/arch.h"

static const struct fb_param selftest_params[] = {
	FB_PARAM_INT("wait_ns", "ns", 1000, 1, 1000000000, "base of the synthetic wait latencies"),
	FB_PARAM_DOUBLE("scale", "", 1.0, 0.0, 1e6, "factor applied to the synthetic submit latency"),
	FB_PARAM_BOOL("fail", false, "make the run fail (tests the error path)"),
	FB_PARAM_ENUM("shape", "flat", "how the wait latencies grow", "flat", "ramp"),
	FB_PARAM_INT("pollers", "threads", 1, 0, 64, "polling threads declared (tests the oversubscription warning)"),
	FB_PARAM_END
};

struct helper {
	struct fb_run *run;
	_Atomic int registered;  /* the helper registered itself: release/acquire with run() */
	_Atomic int stop;        /* set by run() once the region ends */
	_Atomic uint64_t spins;
};

/* The "engine": pinned to the run's second CPU, registers itself as a role
 * thread (fb_run_thread may be called from any thread), then ticks and
 * sleeps until told to stop — bounded, as every poller must be. */
static void *helper_thread(void *arg)
{
	struct helper *h = arg;
	fb_run_pin_self(h->run, 1);
	fb_run_thread_self(h->run, "engine0");
	atomic_store_explicit(&h->registered, 1, memory_order_release);
	while (!atomic_load_explicit(&h->stop, memory_order_acquire)) {
		atomic_fetch_add_explicit(&h->spins, 1, memory_order_relaxed);
		usleep(200);
	}
	return NULL;
}

static unsigned selftest_polling(const struct fb_run *run)
{
	return (unsigned)fb_run_int(run, "pollers");
}

static void report(struct fb_run *run, uint64_t n)
{
	bool legacy = fb_run_path(run) == FB_PATH_LEGACY;
	uint64_t base = (uint64_t)fb_run_int(run, "wait_ns") * (legacy ? 2 : 1);
	bool ramp = !strcmp(fb_run_enum(run, "shape"), "ramp");
	struct fb_hist *h = fb_hist_new();
	for (uint64_t i = 0; i < n; i++)
		fb_hist_record(h, base + (ramp ? i * 10 : i % 2));
	fb_run_metric(run, "interrupts", legacy ? (double)n : 0.0, "irq");
	fb_run_hist(run, "wait", h, FB_LIMIT_FUTEX_WAKE);
	fb_run_latency(run, "submit", 100.0 * fb_run_double(run, "scale") * (legacy ? 4 : 1), FB_LIMIT_CACHELINE_HALF);
	fb_run_section(run, "power");
	fb_run_metric(run, "idle_fraction", legacy ? 0.25 : 0.75, "ratio");
	fb_run_metric(run, "seed", (double)(fb_run_seed(run) % 1000000), "");
	fb_hist_free(h);
}

static int selftest_run(struct fb_run *run)
{
	if (fb_run_bool(run, "fail"))
		return fb_run_error(run, -EIO, "selftest failed on purpose (fail=true)");
	struct helper h = { .run = run };
	pthread_t t;
	if (pthread_create(&t, NULL, helper_thread, &h))
		return fb_run_error(run, -EAGAIN, "cannot start the helper thread");
	/* Role threads register before the measured region (bounded wait: 10 s). */
	for (int i = 0; i < 100000 && !atomic_load_explicit(&h.registered, memory_order_acquire); i++)
		usleep(100);
	uint64_t n = 0, warm_end = lf_now_ns() + fb_run_warmup_ns(run);
	while (lf_now_ns() < warm_end)
		usleep(100);
	fb_run_measure_begin(run);
	while (fb_run_continue(run, n)) {
		lf_spin_ns(1000);   /* one synthetic iteration: 1 us of work */
		n++;
	}
	fb_run_measure_end(run, n);
	atomic_store_explicit(&h.stop, 1, memory_order_release);
	pthread_join(t, NULL);
	report(run, n);
	return 0;
}

const struct fb_scenario bm_scenario_selftest = {
	.name = "selftest",
	.summary = "synthetic workload exercising the harness itself (tests; an example scenario)",
	.params = selftest_params,
	.compares_paths = true,
	.polling_threads_fn = selftest_polling,
	.default_iterations = 1000,
	.takes_duration = true,
	.default_warmup_s = 0.0,
	.run = selftest_run,
};
