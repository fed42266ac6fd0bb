/* benchmarks/micro/bench_gbench_selftest.c — the shim measuring and checking itself.
 *
 * Tiny benchmarks, all named selftest_*, that exercise every part of
 * src/gbench/gbench.h with values whose reported result is known in advance;
 * tests/test_gbench.c runs them (--benchmark_filter=^selftest_) and checks the
 * JSON arithmetic.  selftest_empty_loop* are also the loop-overhead
 * measurement: their time per iteration is what gb_keep_running costs.
 * Each sets a small min time so that `make bench` spends little on them.
 */
#include <errno.h>
#include <time.h>

#include "src/gbench/gbench.h"

#define SELFTEST_MIN_TIME 0.02  /* seconds per run */

/* Loop overhead: nothing but the loop (the compiler may fold it), */
static void selftest_empty_loop(gb_state *st)
{
	while (gb_keep_running(st)) {
	}
}
GB_BENCHMARK(selftest_empty_loop, gb_min_time(b, SELFTEST_MIN_TIME))

/* ... the loop with a compiler barrier per iteration (it cannot be folded:
 * the counter is stored and reloaded each time, the worst case), */
static void selftest_empty_loop_clobber(gb_state *st)
{
	while (gb_keep_running(st))
		gb_clobber_memory();
}
GB_BENCHMARK(selftest_empty_loop_clobber, gb_min_time(b, SELFTEST_MIN_TIME))

/* ... and batched, 64 iterations per loop test.  The grant is rarely a
 * multiple of 64, so the last batch overshoots: the count must say so. */
static void selftest_empty_loop_batch(gb_state *st)
{
	int64_t n = 0;

	while (gb_keep_running_batch(st, 64))
		for (int i = 0; i < 64; i++, n++)
			gb_clobber_memory();
	gb_counter(st, "iterations_seen", (double)n, GB_COUNTER_DEFAULT);
	gb_counter(st, "gb_iterations", (double)gb_iterations(st), GB_COUNTER_DEFAULT);
}
GB_BENCHMARK(selftest_empty_loop_batch, gb_min_time(b, SELFTEST_MIN_TIME))

/* Batch overshoot, deterministic: 100 iterations asked for in batches of
 * 64, 7 and 1000 must run and report 128, 105 and 1000 iterations. */
static void selftest_batch_overshoot(gb_state *st)
{
	int64_t n = 0, batch = gb_arg(st, 0);

	while (gb_keep_running_batch(st, batch))
		n += batch;
	gb_counter(st, "iterations_seen", (double)n, GB_COUNTER_DEFAULT);
	gb_counter(st, "gb_iterations", (double)gb_iterations(st), GB_COUNTER_DEFAULT);
}
GB_BENCHMARK(selftest_batch_overshoot, gb_arg_add(b, 64); gb_arg_add(b, 7); gb_arg_add(b, 1000);
	     gb_iterations_fixed(b, 100))

/* Counters with every flag, with values chosen so each result is known:
 * single thread, real time, so "seconds" is the run's real time. */
static void selftest_counters(gb_state *st)
{
	int64_t n = 0;

	while (gb_keep_running(st))
		n++;
	gb_counter(st, "plain", 42, GB_COUNTER_DEFAULT);                        /* 42 */
	gb_counter(st, "rate", 3.0 * (double)n, GB_COUNTER_IS_RATE);           /* 3 / (s per iteration) */
	gb_counter(st, "avg_threads", 10, GB_COUNTER_AVG_THREADS);             /* 10 (one thread) */
	gb_counter(st, "avg_threads_rate", 5.0 * (double)n, GB_COUNTER_AVG_THREADS_RATE);
	gb_counter(st, "invariant", 7, GB_COUNTER_ITERATION_INVARIANT);        /* 7 * iterations */
	gb_counter(st, "invariant_rate", 7, GB_COUNTER_ITERATION_INVARIANT_RATE);
	gb_counter(st, "avg_iterations", 2.0 * (double)n, GB_COUNTER_AVG_ITERATIONS);       /* 2 */
	gb_counter(st, "avg_iterations_rate", 2.0 * (double)n, GB_COUNTER_AVG_ITERATIONS_RATE);
	gb_counter(st, "inverted", 4.0 * (double)n,
		   GB_COUNTER_AVG_ITERATIONS | GB_COUNTER_INVERT);              /* 1/4 */
	gb_counter(st, "loop_iterations", (double)n, GB_COUNTER_DEFAULT);      /* = iterations */
	gb_set_items_processed(st, 6 * n);                                     /* items_per_second */
	gb_set_bytes_processed(st, 1024 * n);                                  /* bytes_per_second */
	gb_set_label(st, "selftest");
}
GB_BENCHMARK(selftest_counters, gb_use_real_time(b); gb_min_time(b, SELFTEST_MIN_TIME))

/* Two threads: names get "/threads:2"; counters are summed over threads
 * before the flags apply. */
static void selftest_threads(gb_state *st)
{
	int64_t n = 0;

	while (gb_keep_running(st))
		gb_do_not_optimize(n++);
	gb_counter(st, "threads_sum", 1, GB_COUNTER_DEFAULT);                  /* 2 */
	gb_counter(st, "threads_avg", 5, GB_COUNTER_AVG_THREADS);              /* 5 */
	gb_counter(st, "avg_iterations", 2.0 * (double)n, GB_COUNTER_AVG_ITERATIONS);       /* 2 */
	gb_counter(st, "index_sum", gb_thread_index(st), GB_COUNTER_DEFAULT);  /* 0 + 1 */
	gb_counter(st, "count", gb_thread_count(st), GB_COUNTER_AVG_THREADS);  /* 2 */
	/* all iterations / CPU seconds summed over both threads (1.7) */
	gb_counter(st, "rate", (double)n, GB_COUNTER_IS_RATE);
}
GB_BENCHMARK(selftest_threads, gb_threads(b, 2); gb_min_time(b, SELFTEST_MIN_TIME))

/* Arguments and their names: selftest_args/n:8/m:3 and selftest_args/n:64/m:3. */
static void selftest_args(gb_state *st)
{
	while (gb_keep_running(st)) {
	}
	gb_counter(st, "n", (double)gb_arg(st, 0), GB_COUNTER_DEFAULT);
	gb_counter(st, "m", (double)gb_arg(st, 1), GB_COUNTER_DEFAULT);
}
static const char *const selftest_arg_names[] = {"n", "m"};
static const int64_t selftest_args_8[] = {8, 3}, selftest_args_64[] = {64, 3};
GB_BENCHMARK(selftest_args, gb_args_add(b, selftest_args_8, 2); gb_args_add(b, selftest_args_64, 2);
	     gb_arg_names(b, selftest_arg_names, 2); gb_min_time(b, SELFTEST_MIN_TIME))

/* Pause/resume: each iteration sleeps PAUSED_NS with the timer stopped, so
 * the reported real time per iteration must stay well below PAUSED_NS. */
#define SELFTEST_PAUSED_NS 2000000L
static void selftest_pause_resume(gb_state *st)
{
	struct timespec ts = {0, SELFTEST_PAUSED_NS};
	int64_t pauses = 0;

	while (gb_keep_running(st)) {
		gb_pause_timing(st);
		while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
		}
		ts.tv_nsec = SELFTEST_PAUSED_NS;
		pauses++;
		gb_resume_timing(st);
	}
	gb_counter(st, "pauses", (double)pauses, GB_COUNTER_DEFAULT);
	gb_counter(st, "paused_ns", (double)SELFTEST_PAUSED_NS, GB_COUNTER_DEFAULT);
}
GB_BENCHMARK(selftest_pause_resume, gb_iterations_fixed(b, 10); gb_use_real_time(b))

/* Setup and teardown run on the main thread around each run; the threads see
 * exactly one more setup than teardowns.  Written before the threads start
 * and read after they were joined: ordered by thread creation and join. */
static int selftest_setups, selftest_teardowns;
static int64_t selftest_setup_arg;
static void selftest_setup(const gb_state *st)
{
	selftest_setups++;
	selftest_setup_arg = gb_arg(st, 0) * gb_thread_count(st);
}
static void selftest_teardown(const gb_state *st)
{
	selftest_teardowns++;
}
static void selftest_setup_teardown(gb_state *st)
{
	while (gb_keep_running(st)) {
	}
	gb_counter(st, "open_setups", selftest_setups - selftest_teardowns, GB_COUNTER_AVG_THREADS); /* 1 */
	gb_counter(st, "setup_arg", (double)selftest_setup_arg, GB_COUNTER_AVG_THREADS);            /* 5*2 */
}
GB_BENCHMARK(selftest_setup_teardown, gb_arg_add(b, 5); gb_threads(b, 2);
	     gb_setup(b, selftest_setup); gb_teardown(b, selftest_teardown);
	     gb_min_time(b, SELFTEST_MIN_TIME))

/* Manual time: each iteration claims 1 ms, so real_time reads 1 ms. */
static void selftest_manual_time(gb_state *st)
{
	while (gb_keep_running(st))
		gb_set_iteration_time(st, 0.001);
}
GB_BENCHMARK(selftest_manual_time, gb_use_manual_time(b); gb_unit(b, GB_MS); gb_iterations_fixed(b, 100))

/* An error is reported, not fatal: this one fails on purpose, half-way. */
static void selftest_skip_with_error(gb_state *st)
{
	while (gb_keep_running(st))
		if (gb_iterations(st) == 3)
			gb_skip_with_error(st, "deliberate: checks that gb_skip_with_error is reported");
}
GB_BENCHMARK(selftest_skip_with_error, gb_threads(b, 2); gb_iterations_fixed(b, 10))
