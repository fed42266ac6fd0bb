/* benchmarks/micro/bench_main.c — main() of fb_bench, the Google Benchmark binary.
 *
 * Every benchmarks/micro/bench_*.c registers its benchmarks with GB_BENCHMARK
 * (src/gbench/gbench.h); this file records how the binary was built in the
 * report's "context" block, then hands argv to Google Benchmark, so the usual
 * flags work:  fb_bench --benchmark_filter=ring --benchmark_format=json
 */
#include <stdio.h>
#include <string.h>

#include "src/gbench/gbench.h"

/* The Makefile defines these on every compile; a build without it says so. */
#ifndef FB_BUILD_CFLAGS
#define FB_BUILD_CFLAGS "unknown"
#endif
#ifndef FB_BUILD_TYPE
#define FB_BUILD_TYPE "unknown"
#endif
#ifndef FB_GIT_REV
#define FB_GIT_REV "unknown"
#endif

static void add_context(const char *key, const char *value)
{
	int rc = gb_add_context(key, value);

	if (rc)
		fprintf(stderr, "fb_bench: context key %s not recorded: %s\n", key, strerror(-rc));
}

int main(int argc, char **argv)
{
	add_context("fb_build_type", FB_BUILD_TYPE);
	add_context("fb_build_cflags", FB_BUILD_CFLAGS);
	add_context("fb_git_rev", FB_GIT_REV);
	return gb_main(argc, argv);
}
