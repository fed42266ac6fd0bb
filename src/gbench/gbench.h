/* src/gbench/gbench.h — Google Benchmark from C.
 *
 * A small C API over Google Benchmark (libbenchmark): micro-benchmarks are
 * written in C, registered by name, and run by Google Benchmark's own driver,
 * so every --benchmark_* flag, the JSON/CSV reporters, repetitions with
 * mean/median/stddev/cv aggregates and tools/compare.py work unchanged.
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
 * Threads: registration (gb_register and the builders) runs before gb_main,
 * from one thread (GB_BENCHMARK uses a constructor).  The gb_state functions
 * are called only by the benchmark thread that owns `st`, exactly like
 * benchmark::State.  Nothing here is lock-free or blocks, except gb_main.
 */
#ifndef GB_GBENCH_H
#define GB_GBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gb_state gb_state;       /* a benchmark::State */
typedef struct gb_bench gb_bench;       /* a registered benchmark::internal::Benchmark */
typedef void (*gb_fn)(gb_state *st);
typedef void (*gb_setup_fn)(const gb_state *st);  /* runs once per run, before the threads start */

/* Counter flags: the values of benchmark::Counter::Flags, combinable with |. */
#define GB_COUNTER_DEFAULT                  0u
#define GB_COUNTER_IS_RATE                  (1u << 0)  /* divided by the run's duration: "/s" */
#define GB_COUNTER_AVG_THREADS              (1u << 1)  /* divided by the thread count */
#define GB_COUNTER_AVG_THREADS_RATE         (GB_COUNTER_IS_RATE | GB_COUNTER_AVG_THREADS)
#define GB_COUNTER_ITERATION_INVARIANT      (1u << 2)  /* multiplied by the iteration count */
#define GB_COUNTER_ITERATION_INVARIANT_RATE (GB_COUNTER_IS_RATE | GB_COUNTER_ITERATION_INVARIANT)
#define GB_COUNTER_AVG_ITERATIONS           (1u << 3)  /* divided by the iteration count */
#define GB_COUNTER_AVG_ITERATIONS_RATE      (GB_COUNTER_IS_RATE | GB_COUNTER_AVG_ITERATIONS)
#define GB_COUNTER_INVERT                   (1u << 31) /* reported as 1/value */

enum gb_time_unit { GB_NS, GB_US, GB_MS, GB_S };

/* ---- registration (before gb_main, one thread) ---- */

/* Register fn under name; returns the builder, never NULL (aborts on failure). */
gb_bench *gb_register(const char *name, gb_fn fn);
gb_bench *gb_arg_add(gb_bench *b, int64_t a);                          /* ->Arg(a) */
gb_bench *gb_args_add(gb_bench *b, const int64_t *a, size_t n);        /* ->Args({...}) */
gb_bench *gb_range(gb_bench *b, int64_t lo, int64_t hi);               /* ->Range(lo, hi) */
gb_bench *gb_dense_range(gb_bench *b, int64_t lo, int64_t hi, int step);
gb_bench *gb_range_multiplier(gb_bench *b, int mult);
gb_bench *gb_ranges2(gb_bench *b, int64_t lo0, int64_t hi0, int64_t lo1, int64_t hi1); /* ->Ranges */
gb_bench *gb_arg_name(gb_bench *b, const char *name);
gb_bench *gb_arg_names(gb_bench *b, const char *const *names, size_t n);
gb_bench *gb_threads(gb_bench *b, int n);
gb_bench *gb_thread_range(gb_bench *b, int lo, int hi);
gb_bench *gb_min_time(gb_bench *b, double seconds);
gb_bench *gb_iterations_fixed(gb_bench *b, int64_t n);
gb_bench *gb_repetitions(gb_bench *b, int n);
gb_bench *gb_report_aggregates_only(gb_bench *b, bool only);
gb_bench *gb_unit(gb_bench *b, enum gb_time_unit u);
gb_bench *gb_use_real_time(gb_bench *b);
gb_bench *gb_measure_process_cpu_time(gb_bench *b);
gb_bench *gb_setup(gb_bench *b, gb_setup_fn fn);
gb_bench *gb_teardown(gb_bench *b, gb_setup_fn fn);

/* Register at load time: GB_BENCHMARK(fn, builder statements using `b`). */
#define GB_BENCHMARK(fn, ...)                                                 \
	__attribute__((constructor)) static void gb_register_##fn(void)       \
	{                                                                     \
		gb_bench *b = gb_register(#fn, fn);                           \
		(void)b;                                                      \
		__VA_ARGS__;                                                  \
	}

/* Add a key/value to the JSON "context" block (build flags, machine facts). */
void gb_add_context(const char *key, const char *value);

/* Initialize with argv (consumes --benchmark_* flags), report unknown flags
 * (exit 1), run the selected benchmarks, shut down.  Returns the exit status. */
int gb_main(int argc, char **argv);

/* ---- inside a benchmark (owning thread only) ---- */

bool gb_keep_running(gb_state *st);           /* the loop condition; times the loop */
void gb_pause_timing(gb_state *st);
void gb_resume_timing(gb_state *st);
int64_t gb_arg(const gb_state *st, size_t i); /* ->range(i) */
int64_t gb_iterations(const gb_state *st);
int gb_thread_index(const gb_state *st);
int gb_thread_count(const gb_state *st);
void gb_set_items_processed(gb_state *st, int64_t n);
void gb_set_bytes_processed(gb_state *st, int64_t n);
void gb_set_label(gb_state *st, const char *label);
void gb_skip_with_error(gb_state *st, const char *msg);
/* Set user counter `name` (created if absent) with Google Benchmark's flags. */
void gb_counter(gb_state *st, const char *name, double value, unsigned flags);

/* Keep a value or the memory it points to from being optimized away
 * (benchmark::DoNotOptimize / ClobberMemory for C). */
#define gb_do_not_optimize(x) __asm__ __volatile__("" : : "r,m"(x) : "memory")
#define gb_clobber_memory()   __asm__ __volatile__("" : : : "memory")

#ifdef __cplusplus
}
#endif
#endif
