/* benchmarks/scenarios/table.c — the scenario registry: what `fencebench list` shows, in order.
 *
 * To add a scenario: define `const struct fb_scenario bm_scenario_<name>` in
 * benchmarks/scenarios/<name>.c (see src/fb_scenario.h), declare it below
 * and list it in bm_scenarios[].  tests/test_cli.c checks every entry: unique
 * names, one-line summaries, defaults inside their ranges, a run function.
 */
#include "benchmarks/scenarios/table.h"

extern const struct fb_scenario bm_scenario_limits;
extern const struct fb_scenario bm_scenario_headline;
extern const struct fb_scenario bm_scenario_irq_suppression;
extern const struct fb_scenario bm_scenario_cpu_wait;
extern const struct fb_scenario bm_scenario_gpu_wait;
extern const struct fb_scenario bm_scenario_cross_adapter;
extern const struct fb_scenario bm_scenario_isr_scaling;
extern const struct fb_scenario bm_scenario_log_overrun;
extern const struct fb_scenario bm_scenario_idle;
extern const struct fb_scenario bm_scenario_fence_stride;
extern const struct fb_scenario bm_scenario_submit_latency;
extern const struct fb_scenario bm_scenario_doorbell_thrash;
extern const struct fb_scenario bm_scenario_preempt;        /* preempt.c */
extern const struct fb_scenario bm_scenario_tdr;            /* preempt.c */
extern const struct fb_scenario bm_scenario_frame;         /* workloads.c: the seed's multi-engine workloads */
extern const struct fb_scenario bm_scenario_ring_heap;
extern const struct fb_scenario bm_scenario_pipeline;
extern const struct fb_scenario bm_scenario_async_compute;
extern const struct fb_scenario bm_scenario_replay;
extern const struct fb_scenario bm_scenario_analogs;     /* analogs.c: a timing profile checked */
extern const struct fb_scenario bm_scenario_selftest;   /* selftest.c: exercises the harness (tests, example) */

const struct fb_scenario *const bm_scenarios[] = {
	&bm_scenario_headline,
	&bm_scenario_limits,
	&bm_scenario_irq_suppression,
	&bm_scenario_cpu_wait,
	&bm_scenario_gpu_wait,
	&bm_scenario_cross_adapter,
	&bm_scenario_isr_scaling,
	&bm_scenario_log_overrun,
	&bm_scenario_idle,
	&bm_scenario_fence_stride,
	&bm_scenario_submit_latency,
	&bm_scenario_doorbell_thrash,
	&bm_scenario_preempt,
	&bm_scenario_tdr,
	&bm_scenario_frame,
	&bm_scenario_ring_heap,
	&bm_scenario_pipeline,
	&bm_scenario_async_compute,
	&bm_scenario_replay,
	&bm_scenario_analogs,
	&bm_scenario_selftest,
	NULL
};
