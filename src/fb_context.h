/* src/fb_context.h — the machine context block of every result (like Google Benchmark's).
 *
 * fb_context_machine gathers what does not depend on the run: date, host,
 * executable, CPU model and count, MHz, caches, load average, kernel, build
 * type, flags and git revision (FB_BUILD_TYPE, FB_BUILD_CFLAGS, FB_GIT_REV from
 * the Makefile).  The runner adds the run's own facts (CPU list, perf, limits,
 * parameters, seed, warnings) to the same object.  Keys Google Benchmark uses
 * keep its names and types (date, host_name, executable, num_cpus,
 * mhz_per_cpu, cpu_scaling_enabled, caches, load_avg, library_build_type).
 * Single thread; reads /proc and /sys; nothing blocks for long.
 */
#ifndef FB_CONTEXT_H
#define FB_CONTEXT_H

#include <jansson.h>

/* A new JSON object (the caller owns the reference). Never NULL. */
json_t *fb_context_machine(void);

#endif
