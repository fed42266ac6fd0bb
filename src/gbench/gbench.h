/* src/gbench/gbench.h — Google Benchmark from C.
 *
 * A small C API over Google Benchmark (libbenchmark 1.7, Debian 12): micro-
 * benchmarks are written in C, registered by name, and run by Google
 * Benchmark's own driver, so every --benchmark_* flag, the console/JSON/CSV
 * reporters, repetitions with mean/median/stddev/cv aggregates and
 * /usr/share/benchmark/compare.py work unchanged.
 *
 *     static void bm_push(gb_state *st)
 *     {
 *         struct lf_ring *r = make_ring(gb_arg(st, 0));
 *         while (gb_keep_running(st))
 *             lf_ring_push_spsc(r, &x);
 *         gb_set_items_processed(st, gb_iterations(st));
 *         gb_counter(st, "syscalls", n, GB_COUNTER_AVG_ITERATIONS);
 *     }
 *     GB_BENCHMARK(bm_push, gb_range(b, 8, 4096); gb_threads(b, 2));
 *
 *     int main(int argc, char **argv) { return gb_main(argc, argv); }
 *
 * Any number of files may use GB_BENCHMARK; they link into one binary whose
 * main() calls gb_main (benchmarks/micro/bench_main.c for fb_bench).
 *
 * Who may call what:
 *
 *   | functions                          | caller                               |
 *   |------------------------------------|--------------------------------------|
 *   | gb_register, gb_<builder>,         | one thread, before gb_main (the      |
 *   | gb_add_context                     | GB_BENCHMARK constructor or main)    |
 *   | gb_main                            | main(), once per process             |
 *   | gb_keep_running*, gb_*_timing,     | the benchmark thread that owns `st`, |
 *   | gb_set_*, gb_counter, gb_skip_*,   | inside the benchmark function (as    |
 *   | gb_set_iteration_time              | for benchmark::State)                |
 *   | gb_arg, gb_thread_*, gb_iterations | the owning thread; also setup and    |
 *   |                                    | teardown functions on their `st`     |
 *
 * Each benchmark thread has its own gb_state, so no two threads ever touch the
 * same one; nothing here is lock-free or needs to be.  Nothing blocks except
 * gb_main and, at a run's start and end, gb_keep_running* (Google Benchmark's
 * start/stop barrier between the threads of a multi-threaded benchmark).
 *
 * Errors: misuse (a NULL argument, an unknown counter flag, gb_arg beyond the
 * benchmark's arguments, registering after gb_main, a duplicate name, a
 * benchmark that returns before its loop ended, a timing or reporting call in
 * a setup/teardown hook) prints one line
 * "gbench: <what>: <why>" to stderr and aborts: these are programming errors
 * in a benchmark, found the first time it runs.  Google Benchmark's own checks
 * (pause while paused, ...) abort with its message.
 *
 * Memory: registrations live until exit; gb_main releases Google Benchmark's
 * context.  Nothing allocated per iteration.
 */
#ifndef GB_GBENCH_H
#define GB_GBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gb_state gb_state;       /* one benchmark thread's benchmark::State */
typedef struct gb_bench gb_bench;       /* a registered benchmark::internal::Benchmark */
typedef void (*gb_fn)(gb_state *st);
/* Runs on the main thread once per run (per repetition), before the run's
 * threads start (setup) or after they all finished (teardown); `st` answers
 * gb_arg and gb_thread_count only.  Maps to Benchmark::Setup/Teardown. */
typedef void (*gb_setup_fn)(const gb_state *st);

/* Counter flags: the values of benchmark::Counter::Flags, combinable with |.
 * The value a counter reports is computed in this order (counter.cc Finish):
 * the sum over the run's threads, then / seconds (IS_RATE), / threads
 * (AVG_THREADS), * iterations (ITERATION_INVARIANT), / iterations
 * (AVG_ITERATIONS), and 1/x last (INVERT).  "iterations" is summed over the
 * threads.  "seconds" is the run's CPU time summed over its threads (so in
 * Google Benchmark 1.7 a rate of an N-thread run is per thread-second; later
 * releases divide by N), or its wall time with gb_use_real_time, or the
 * manual time with gb_use_manual_time. */
#define GB_COUNTER_DEFAULT                  0u
#define GB_COUNTER_IS_RATE                  (1u << 0)  /* divided by the run's duration: "/s" */
#define GB_COUNTER_AVG_THREADS              (1u << 1)  /* divided by the thread count */
#define GB_COUNTER_AVG_THREADS_RATE         (GB_COUNTER_IS_RATE | GB_COUNTER_AVG_THREADS)
#define GB_COUNTER_ITERATION_INVARIANT      (1u << 2)  /* multiplied by the iteration count */
#define GB_COUNTER_ITERATION_INVARIANT_RATE (GB_COUNTER_IS_RATE | GB_COUNTER_ITERATION_INVARIANT)
#define GB_COUNTER_AVG_ITERATIONS           (1u << 3)  /* divided by the iteration count */
#define GB_COUNTER_AVG_ITERATIONS_RATE      (GB_COUNTER_IS_RATE | GB_COUNTER_AVG_ITERATIONS)
#define GB_COUNTER_INVERT                   (1u << 31) /* reported as 1/value, after all the above */
#define GB_COUNTER_ALL_FLAGS (GB_COUNTER_IS_RATE | GB_COUNTER_AVG_THREADS |   \
			      GB_COUNTER_ITERATION_INVARIANT |                \
			      GB_COUNTER_AVG_ITERATIONS | GB_COUNTER_INVERT)

/* benchmark::TimeUnit, same order: the unit of real_time/cpu_time in reports. */
enum gb_time_unit { GB_NS, GB_US, GB_MS, GB_S };

/* ---- registration: one thread, before gb_main ---- */

/* Register fn under `name` (copied): benchmark::RegisterBenchmark.  Returns
 * the builder for the calls below, never NULL.  Aborts with a message on a
 * NULL or empty name, a NULL fn, a name already registered, or a call after
 * gb_main started. */
gb_bench *gb_register(const char *name, gb_fn fn);

/* The builders: each maps to the benchmark::internal::Benchmark method named
 * in its comment, returns `b` so calls chain, and may be called only between
 * gb_register and gb_main.  Argument sets must all have the same length
 * (Google Benchmark checks and aborts). */
gb_bench *gb_arg_add(gb_bench *b, int64_t a);                          /* ->Arg(a) */
gb_bench *gb_args_add(gb_bench *b, const int64_t *a, size_t n);        /* ->Args({a[0..n)}) */
gb_bench *gb_range(gb_bench *b, int64_t lo, int64_t hi);               /* ->Range(lo, hi): lo, powers of the multiplier, hi */
gb_bench *gb_dense_range(gb_bench *b, int64_t lo, int64_t hi, int step); /* ->DenseRange */
gb_bench *gb_range_multiplier(gb_bench *b, int mult);                  /* ->RangeMultiplier; call before gb_range */
gb_bench *gb_ranges2(gb_bench *b, int64_t lo0, int64_t hi0,
		     int64_t lo1, int64_t hi1);                          /* ->Ranges({{lo0,hi0},{lo1,hi1}}) */
gb_bench *gb_arg_name(gb_bench *b, const char *name);                  /* ->ArgName: "/name:value" */
gb_bench *gb_arg_names(gb_bench *b, const char *const *names, size_t n); /* ->ArgNames */
gb_bench *gb_threads(gb_bench *b, int n);                              /* ->Threads(n): "/threads:n" */
gb_bench *gb_thread_range(gb_bench *b, int lo, int hi);                /* ->ThreadRange: lo, 2lo, ..., hi */
gb_bench *gb_dense_thread_range(gb_bench *b, int lo, int hi, int step); /* ->DenseThreadRange */
gb_bench *gb_thread_per_cpu(gb_bench *b);                              /* ->ThreadPerCpu */
gb_bench *gb_min_time(gb_bench *b, double seconds);                    /* ->MinTime: "/min_time:s"; see gb_main */
gb_bench *gb_min_warmup_time(gb_bench *b, double seconds);             /* ->MinWarmUpTime */
gb_bench *gb_iterations_fixed(gb_bench *b, int64_t n);                 /* ->Iterations(n): no search */
gb_bench *gb_repetitions(gb_bench *b, int n);                          /* ->Repetitions: mean/median/stddev/cv */
gb_bench *gb_report_aggregates_only(gb_bench *b, bool only);           /* ->ReportAggregatesOnly */
gb_bench *gb_display_aggregates_only(gb_bench *b, bool only);          /* ->DisplayAggregatesOnly */
gb_bench *gb_unit(gb_bench *b, enum gb_time_unit u);                   /* ->Unit */
gb_bench *gb_use_real_time(gb_bench *b);                               /* ->UseRealTime: "/real_time" */
gb_bench *gb_use_manual_time(gb_bench *b);                             /* ->UseManualTime: see gb_set_iteration_time */
gb_bench *gb_measure_process_cpu_time(gb_bench *b);                    /* ->MeasureProcessCPUTime */
gb_bench *gb_setup(gb_bench *b, gb_setup_fn fn);                       /* ->Setup (at most 256 per process) */
gb_bench *gb_teardown(gb_bench *b, gb_setup_fn fn);                    /* ->Teardown (shares those 256) */

/* Register at load time: GB_BENCHMARK(fn) or GB_BENCHMARK(fn, builder
 * statements using `b`).  The benchmark is named after fn.  Runs as a
 * constructor, before main; any number of files may use it. */
#define GB_BENCHMARK(fn, ...)                                                 \
	__attribute__((constructor)) static void gb_register_##fn(void)       \
	{                                                                     \
		gb_bench *b = gb_register(#fn, fn);                           \
		(void)b;                                                      \
		__VA_ARGS__;                                                  \
	}

/* Add key=value (both copied) to the "context" block of the JSON report and
 * the console header: benchmark::AddCustomContext.  Call before gb_main (from
 * main or a constructor), one thread.  Returns 0, -EINVAL (NULL or empty key,
 * NULL value) or -EEXIST (key already added: the first value stays).
 * --benchmark_context=k=v on the command line adds more. */
int gb_add_context(const char *key, const char *value);

/* The whole driver: benchmark::Initialize (consumes every --benchmark_* flag
 * and --v), then, if any argument is left, prints it and returns 1;
 * otherwise RunSpecifiedBenchmarks and Shutdown.  Returns 0, or 1 also when
 * --benchmark_filter matched no benchmark (Google Benchmark says so on stderr).
 * A benchmark's gb_skip_with_error shows in the report, not in the status.
 * Unlike Google Benchmark, where a benchmark's MinTime wins over the flag,
 * --benchmark_min_time=S on the command line (S > 0 seconds; 1.7 takes a
 * plain number, no "s" suffix) replaces every gb_min_time as well, and the
 * names say so ("/min_time:S"): one flag shortens or lengthens the whole run.
 * Call once, from main(). */
int gb_main(int argc, char **argv);

/* ---- inside a benchmark: the owning thread only ---- */

/* The state of one benchmark thread.  The fields are the inline fast path of
 * gb_keep_running and are private: read and written only by this header's
 * inline functions and gbench.cc, on the owning thread. */
struct gb_state {
	int64_t gb__left;        /* iterations granted to this thread and not yet started */
	void *gb__st;            /* the benchmark::State */
	const gb_bench *gb__b;   /* the registration (name, argument count) */
	int gb__phase;           /* GB__BEFORE_LOOP ... GB__SETUP, see gbench.cc */
};

/* Out of line: ask Google Benchmark for the next grant.  Private. */
bool gb__keep_running_slow(gb_state *st, int64_t n);

/* The loop condition, `while (gb_keep_running(st)) body;` ≙ KeepRunning().
 * True while iterations are left.  The first call starts the timer (and waits
 * for the run's other threads), the false one stops it and must be reached
 * before the function returns (unless gb_skip_with_error was called).  After
 * the first call, one decrement and one predictable branch inline; the whole
 * grant of Google Benchmark comes in one call into C++ (as its range-for
 * loop does).  Never mix with gb_keep_running_batch in one benchmark. */
static inline bool gb_keep_running(gb_state *st)
{
	if (__builtin_expect(st->gb__left > 0, 1)) {
		st->gb__left--;
		return true;
	}
	return gb__keep_running_slow(st, 1);
}

/* `while (gb_keep_running_batch(st, n))` runs n iterations of work per body:
 * KeepRunningBatch(n).  The last batch may overshoot the iteration target by
 * up to n-1; the overshoot is counted in gb_iterations and in the report.
 * n > 0 and the same on every call of a run. */
static inline bool gb_keep_running_batch(gb_state *st, int64_t n)
{
	if (__builtin_expect(st->gb__left >= n && n > 0, 1)) {
		st->gb__left -= n;
		return true;
	}
	return gb__keep_running_slow(st, n);
}

/* Stop / restart the timer of this thread (PauseTiming / ResumeTiming):
 * inside the loop only, strictly alternating.  Each costs a clock read or two
 * (~100 ns+): for setup inside an iteration, not for fine-grained exclusion. */
void gb_pause_timing(gb_state *st);
void gb_resume_timing(gb_state *st);

/* Argument i of this run (range(i)); aborts if the benchmark has <= i args. */
int64_t gb_arg(const gb_state *st, size_t i);
/* Iterations run so far by this thread, including the current one; after the
 * loop, this thread's total (iterations()). */
int64_t gb_iterations(const gb_state *st);
int gb_thread_index(const gb_state *st);     /* thread_index(): 0 .. count-1 */
int gb_thread_count(const gb_state *st);     /* threads() */

/* Throughput, after the loop: items_per_second / bytes_per_second (1024-based)
 * counters = n summed over threads / seconds (SetItems/BytesProcessed). */
void gb_set_items_processed(gb_state *st, int64_t n);
void gb_set_bytes_processed(gb_state *st, int64_t n);
/* Free text shown after the result and as "label" in JSON (copied). */
void gb_set_label(gb_state *st, const char *label);
/* Report the run as failed with msg (copied): SkipWithError.  Inside the loop,
 * the next gb_keep_running* returns false; before it, the first one does.
 * The function may then return at once. */
void gb_skip_with_error(gb_state *st, const char *msg);
/* With gb_use_manual_time: this iteration took `seconds` (SetIterationTime),
 * once per iteration, inside the loop. */
void gb_set_iteration_time(gb_state *st, double seconds);
/* Set user counter `name` (created if absent, value replaced if present) with
 * GB_COUNTER_* flags; see the flags for how the reported value is computed.
 * Usually after the loop.  Aborts on a NULL name or an unknown flag bit. */
void gb_counter(gb_state *st, const char *name, double value, unsigned flags);

/* Keep a value, or the memory it points to, from being optimized away
 * (benchmark::DoNotOptimize / ClobberMemory, GCC and Clang). */
#define gb_do_not_optimize(x) __asm__ __volatile__("" : : "r,m"(x) : "memory")
#define gb_clobber_memory()   __asm__ __volatile__("" : : : "memory")

#ifdef __cplusplus
}
#endif
#endif
