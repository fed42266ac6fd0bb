/* tests/test_replay.c — replay (benchmarks/replay.h): a bad file gets one
 * clear line naming what is wrong, and the seed's workloads shipped as
 * replay files (benchmarks/workloads/) give the same counts as the C
 * workloads: per queue executes, lists, commands, work, signals and waits,
 * the final fence values, GPU signals and interrupts on the native path;
 * the shipped files load from the binary's built-in copies without a tree. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchmarks/replay.h"
#include "src/fb_scenario.h"
#include "lockfree/arch.h"
#include "tests/fb_test.h"

static void refused(const char *text, const char *want)
{
	struct bm_replay *r = NULL;
	char err[512] = "";
	assert_int_equal(bm_replay_parse(text, "t.json", &r, err, sizeof(err)), -EINVAL);
	assert_null(r);
	if (!strstr(err, want) || strncmp(err, "t.json: ", 8))
		fail_msg("error '%s' does not say '%s'", err, want);
}

#define Q "\"queues\": [ { \"name\": \"copy0\", \"type\": \"copy\" }, { \"name\": \"direct0\", \"type\": \"direct\" } ]"
#define F "\"fences\": [ \"f\" ]"
#define L "\"lists\": [ { \"name\": \"c\", \"type\": \"copy\", \"commands\": [ { \"op\": \"copy\", \"us\": 10 } ] } ]"

/* A frame graph that can never complete is refused at load, at once, with
 * the queues, fences and values named: a cycle of waits (queue d waits on
 * f, which only queue c signals, after c waits on g, which only d signals),
 * a wait for a value no step signals, a CPU wait nothing can satisfy. */
#define CYCLE_QL "\"queues\": [ { \"name\": \"c\", \"type\": \"copy\" }, { \"name\": \"d\", \"type\": \"direct\" } ], " \
	"\"fences\": [ \"f\", \"g\" ], \"lists\": [ { \"name\": \"cl\", \"type\": \"copy\", \"commands\": " \
	"[ { \"op\": \"copy\", \"us\": 1 } ] }, { \"name\": \"dl\", \"type\": \"direct\", \"commands\": " \
	"[ { \"op\": \"draw\", \"us\": 1 } ] } ]"
static void deadlocked_frame_graphs_are_refused_at_once(void **state)
{
	(void)state;
	uint64_t t0 = lf_now_ns();
	refused("{ " CYCLE_QL ", \"frame\": [ "
		"{ \"queue\": \"c\", \"wait\": \"g\", \"value\": 1, \"step\": 1 }, { \"queue\": \"c\", \"execute\": [\"cl\"] }, "
		"{ \"queue\": \"c\", \"signal\": \"f\", \"value\": 1, \"step\": 1 }, "
		"{ \"queue\": \"d\", \"wait\": \"f\", \"value\": 1, \"step\": 1 }, { \"queue\": \"d\", \"execute\": [\"dl\"] }, "
		"{ \"queue\": \"d\", \"signal\": \"g\", \"value\": 1, \"step\": 1 } ] }",
		"never completes: frame 1: frame[0] queue 'c' waits for 'g' >= 1 (now 0), which queue 'd' signals only "
		"after it waits for 'f' >= 1 (now 0), which queue 'c' signals: a cycle of waits");
	assert_true(lf_now_ns() - t0 < 1000000000ull);   /* under a second, not a 30 s time-out */
	refused("{ " CYCLE_QL ", \"frame\": [ { \"queue\": \"d\", \"signal\": \"g\", \"value\": 1 }, "
		"{ \"queue\": \"c\", \"wait\": \"g\", \"value\": 2 }, { \"queue\": \"c\", \"execute\": [\"cl\"] } ] }",
		"frame 1: frame[1] queue 'c' waits for 'g' >= 2 (now 1), no step left signals 'g' >= 2 (a dead wait)");
	/* a wait each frame that only the next frame satisfies: the last frame's never completes */
	refused("{ " CYCLE_QL ", \"frame\": [ { \"queue\": \"d\", \"signal\": \"g\", \"value\": 1, \"step\": 1 }, "
		"{ \"queue\": \"c\", \"wait\": \"g\", \"value\": 2, \"step\": 1 } ] }",
		"frame 3: frame[1] queue 'c' waits for 'g' >= 4 (now 3), no step left signals 'g' >= 4");
	refused("{ " CYCLE_QL ", \"frame\": [ { \"queue\": \"c\", \"execute\": [\"cl\"] }, "
		"{ \"queue\": \"c\", \"signal\": \"f\", \"value\": 1, \"step\": 1 }, "
		"{ \"cpu_wait\": \"f\", \"value\": 2, \"step\": 1 } ] }",
		"never completes: frame 1: frame[2] cpu_wait for 'f' >= 2 (now 1), no step left signals 'f' >= 2");
	/* a wait the next frame's signal satisfies is fine: d waits for c's signal of the frame before */
	struct bm_replay *r = NULL;
	char err[512] = "";
	assert_int_equal(bm_replay_parse("{ " CYCLE_QL ", \"frame\": [ "
					 "{ \"queue\": \"d\", \"wait\": \"f\", \"value\": 0, \"step\": 1 }, "
					 "{ \"queue\": \"c\", \"signal\": \"f\", \"value\": 1, \"step\": 1 } ] }",
					 "ok", &r, err, sizeof(err)), 0);
	bm_replay_free(r);
}

static void bad_files_are_refused_with_one_clear_line(void **state)
{
	(void)state;
	refused("{ \"queues\": [", "line 1");
	refused("[]", "one JSON object");
	refused("{ " Q ", " F ", " L ", \"frame\": [ { \"queue\": \"copy0\", \"execute\": [\"c\"] } ], \"extra\": 1 }",
		"unknown key 'extra'");
	refused("{ \"queues\": [ { \"name\": \"q\", \"type\": \"dma\" } ], " F ", " L ", \"frame\": [] }",
		"queues[0]: type 'dma' is not one of direct|compute|copy");
	refused("{ " Q ", " F ", \"lists\": [ { \"name\": \"c\", \"type\": \"copy\", \"commands\": [ { \"op\": \"draw\", \"us\": 1 } ] } ], "
		"\"frame\": [ { \"queue\": \"copy0\", \"execute\": [\"c\"] } ] }",
		"lists[0] 'c' commands[0]: a copy list cannot hold a draw");
	refused("{ " Q ", " F ", " L ", \"frame\": [ { \"queue\": \"copy1\", \"execute\": [\"c\"] } ] }",
		"frame[0]: queue 'copy1' is not declared");
	refused("{ " Q ", " F ", " L ", \"frame\": [ { \"queue\": \"direct0\", \"execute\": [\"c\"] } ] }",
		"frame[0]: list 'c' is a copy list; queue 'direct0' executes direct lists");
	refused("{ " Q ", " F ", " L ", \"frame\": [ { \"queue\": \"copy0\", \"signal\": \"g\", \"value\": 1 } ] }",
		"frame[0]: fence 'g' is not declared");
	refused("{ " Q ", " F ", " L ", \"frame\": [ { \"queue\": \"copy0\", \"wait\": \"f\", \"value\": -1, \"step\": 1 } ] }",
		"is negative at frame 1");
	refused("{ " Q ", " F ", " L ", \"frame\": [ { \"queue\": \"copy0\", \"wait\": \"f\", \"signal\": \"f\", \"value\": 1 } ] }",
		"exactly one of execute, signal, wait, cpu_wait");
	refused("{ " Q ", " F ", " L ", \"frame\": [ { \"queue\": \"copy0\", \"cpu_wait\": \"f\", \"value\": 1 } ] }",
		"a cpu_wait has no queue");
	/* resources and accesses */
#define R(x) "\"resources\": [ " x " ]"
#define LA(a) "\"lists\": [ { \"name\": \"c\", \"type\": \"copy\", \"commands\": [], \"access\": [ " a " ] } ]"
#define FR "\"frame\": [ { \"queue\": \"copy0\", \"execute\": [\"c\"] } ]"
	refused("{ " Q ", " F ", " R("{ \"name\": \"t\", \"state\": \"READ\" }") ", " L ", " FR " }",
		"resources[0]: state 'READ' is not one of COMMON|");
	refused("{ " Q ", " F ", " R("{ \"name\": \"t\", \"state\": \"COMMON\", \"copies\": 0 }") ", " L ", " FR " }",
		"resources[0]: copies must be an integer in [1, 16]");
	refused("{ " Q ", " F ", " R("{ \"name\": \"t\", \"state\": \"COMMON\", \"copies\": 2 }, "
					"{ \"name\": \"u\", \"state\": \"COMMON\", \"copies\": 3 }") ", " L ", " FR " }",
		"resources[1]: copies 3, but an earlier resource has 2");
	refused("{ " Q ", " F ", " R("{ \"name\": \"t\", \"state\": \"COMMON\" }, { \"name\": \"t\", \"state\": \"COMMON\" }")
		", " L ", " FR " }", "resources[1]: resource 't' declared twice");
	refused("{ " Q ", " F ", " R("{ \"name\": \"t\", \"state\": \"COMMON\" }") ", "
		LA("{ \"resource\": \"u\", \"state\": \"COMMON\" }") ", " FR " }",
		"lists[0] 'c' access[0]: resource 'u' is not declared");
	refused("{ " Q ", " F ", " R("{ \"name\": \"t\", \"state\": \"COMMON\" }") ", "
		LA("{ \"resource\": \"t\", \"state\": \"COMMON\", \"after\": \"COPY_DEST\", \"write\": true }") ", " FR " }",
		"lists[0] 'c' access[0]: a barrier (after) does not write");
	refused("{ " Q ", " F ", " R("{ \"name\": \"t\", \"state\": \"COMMON\" }") ", "
		LA("{ \"resource\": \"t\", \"state\": \"COMMON\", \"size\": 1 }") ", " FR " }",
		"lists[0] 'c' access[0]: unknown key 'size'");
	struct bm_replay *r = NULL;
	char err[512];
	assert_int_equal(bm_replay_parse("{ " Q ", " F ", " R("{ \"name\": \"t\", \"state\": \"COMMON\", \"copies\": 2 }") ", "
					 LA("{ \"resource\": \"t\", \"state\": \"COMMON\", \"write\": true }") ", " FR " }",
					 "ok.json", &r, err, sizeof(err)), 0);
	bm_replay_free(r);
	assert_int_equal(bm_replay_load("no/such/file.json", &r, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "no/such/file.json"));
	assert_int_equal(bm_replay_parse("{ " Q ", " F ", " L ", \"frame\": [ { \"queue\": \"copy0\", \"execute\": [\"c\"] }, "
					 "{ \"queue\": \"copy0\", \"signal\": \"f\", \"value\": 1, \"step\": 1 } ] }",
					 "ok.json", &r, err, sizeof(err)), 0);
	bm_replay_free(r);
}

/* The harness's string parameter (replay's file=): parsed, formatted back,
 * interned (one pointer per text), refused past FB_PARAM_STRING_MAX. */
static void string_parameters_round_trip(void **state)
{
	(void)state;
	static const struct fb_param p = FB_PARAM_STRING("file", "a.json", "a file");
	union fb_value a, b, d = fb_param_default(&p);
	char err[256], text[64];
	assert_string_equal(d.s, "a.json");
	assert_int_equal(fb_param_parse(&p, "benchmarks/workloads/frame.json", &a, err, sizeof(err)), 0);
	assert_int_equal(fb_param_parse(&p, "benchmarks/workloads/frame.json", &b, err, sizeof(err)), 0);
	assert_ptr_equal(a.s, b.s);
	fb_param_format(&p, a, text, sizeof(text));
	assert_string_equal(text, "benchmarks/workloads/frame.json");
	assert_string_equal(fb_param_type_name(FB_PARAM_STRING), "string");
	static char big[FB_PARAM_STRING_MAX + 2];
	memset(big, 'x', FB_PARAM_STRING_MAX + 1);
	assert_int_equal(fb_param_parse(&p, big, &a, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "too long"));
}

/* Counts after a run, to compare a C workload with its replay file. */
struct counts {
	struct rt_cqueue_stats q[3];
	uint64_t fences[4];
	uint64_t gpu_signals, interrupts, cpu_waits;
};

static void snap_queues(struct counts *c, struct bm_queue *const *q, size_t n)
{
	for (size_t i = 0; i < n; i++)
		rt_cqueue_stats(bm_model_queue(q[i]), &c->q[i]);
}

static void snap_stack(struct counts *c, struct bm_wl *w, uint64_t cpu_waits)
{
	struct bm_wl_snap s;
	bm_wl_snap(w, &s);
	c->gpu_signals = s.gpu_signals;
	c->interrupts = s.interrupts;
	c->cpu_waits = cpu_waits;
}

static void up(struct bm_wl *w)
{
	char err[256];
	assert_int_equal(bm_wl_up(w, RT_PATH_NATIVE, true, false, err, sizeof(err)), 0);
}

/* Run `file` for `frames` frames; queues and fences by name. */
static void run_replay(const char *file, uint64_t frames, const char *const *qn, size_t nq, const char *const *fn,
		       size_t nf, struct counts *c)
{
	struct bm_replay *spec = NULL;
	char err[512];
	if (bm_replay_load(file, &spec, err, sizeof(err)))
		fail_msg("%s", err);
	struct bm_wl w;
	up(&w);
	struct bm_replay_run rr;
	if (bm_replay_start(&rr, spec, &w, err, sizeof(err)))
		fail_msg("%s", err);
	for (uint64_t i = 0; i < frames; i++)
		assert_int_equal(bm_replay_frame(&rr), 0);
	uint64_t waits = w.cpu_waits;
	assert_int_equal(bm_replay_drain(&rr), 0);
	struct bm_queue *q[3];
	for (size_t i = 0; i < nq; i++)
		assert_non_null(q[i] = bm_replay_queue(&rr, qn[i]));
	snap_queues(c, q, nq);
	for (size_t i = 0; i < nf; i++)
		c->fences[i] = bm_fence_value(&w, bm_replay_fence(&rr, fn[i]));
	snap_stack(c, &w, waits);
	assert_int_equal(bm_wl_down(&w), 0);
	bm_replay_stop(&rr);
	bm_replay_free(spec);
}

static void same_counts(const struct counts *a, const struct counts *b, size_t nq, size_t nf)
{
	for (size_t i = 0; i < nq; i++) {
		assert_int_equal(a->q[i].executes, b->q[i].executes);
		assert_int_equal(a->q[i].lists, b->q[i].lists);
		for (int k = 0; k < RT_OPS; k++)
			assert_int_equal(a->q[i].ops[k], b->q[i].ops[k]);
		assert_int_equal(a->q[i].work_ns, b->q[i].work_ns);
		assert_int_equal(a->q[i].signals, b->q[i].signals);
		assert_int_equal(a->q[i].waits, b->q[i].waits);
	}
	for (size_t i = 0; i < nf; i++)
		assert_int_equal(a->fences[i], b->fences[i]);
	assert_int_equal(a->cpu_waits, b->cpu_waits);
	assert_int_equal(a->gpu_signals, b->gpu_signals);
	assert_true(a->q[0].executes > 0);
}

static void frame_json_counts_as_the_c_frame(void **state)
{
	(void)state;
	const uint64_t frames = 8;
	struct counts c = { 0 }, r = { 0 };
	struct bm_wl w;
	up(&w);
	struct bm_frame_cfg cfg = { .geometry_ns = 100000, .texture_ns = 50000, .prepass_ns = 300000,
				    .lighting_ns = 400000, .final_ns = 500000, .units = 1, .frames_in_flight = 2 };
	struct bm_frame f;
	assert_int_equal(bm_frame_init(&f, &w, &cfg), 0);
	for (uint64_t i = 0; i < frames; i++)
		assert_int_equal(bm_frame_submit(&f), 0);
	uint64_t waits = w.cpu_waits;
	assert_int_equal(bm_frame_drain(&f), 0);
	struct bm_queue *q[3] = { w.direct, w.compute, w.copy };
	snap_queues(&c, q, 3);
	struct bm_fence *fe[4] = { f.copy_fence, f.render_fence, f.compute_fence, f.frame_fence };
	for (int i = 0; i < 4; i++)
		c.fences[i] = bm_fence_value(&w, fe[i]);
	snap_stack(&c, &w, waits);
	bm_frame_fini(&f);
	assert_int_equal(bm_wl_down(&w), 0);
	static const char *const qn[3] = { "direct0", "compute0", "copy0" };
	static const char *const fn[4] = { "copyFence", "renderFence", "computeFence", "frameFence" };
	run_replay("benchmarks/workloads/frame.json", frames, qn, 3, fn, 4, &r);
	same_counts(&c, &r, 3, 4);
	assert_int_equal(r.fences[0], 100 * frames + 2);
}

static void ring_heap_json_counts_as_the_c_ring(void **state)
{
	(void)state;
	const uint64_t steps = 12;
	struct counts c = { 0 }, r = { 0 };
	struct bm_wl w;
	up(&w);
	struct bm_ring_heap h;
	assert_int_equal(bm_ring_heap_init(&h, &w, 3, 4, 100000, 200000, 1), 0);
	for (uint64_t i = 0; i < steps; i++)
		assert_int_equal(bm_ring_heap_step(&h), 0);
	uint64_t waits = w.cpu_waits;
	assert_int_equal(bm_ring_heap_drain(&h), 0);
	struct bm_queue *q[2] = { w.direct, w.copy };
	snap_queues(&c, q, 2);
	c.fences[0] = bm_fence_value(&w, h.fence1);
	c.fences[1] = bm_fence_value(&w, h.fence2);
	snap_stack(&c, &w, waits);
	bm_ring_heap_fini(&h);
	assert_int_equal(bm_wl_down(&w), 0);
	static const char *const qn[2] = { "direct0", "copy0" };
	static const char *const fn[2] = { "fence1", "fence2" };
	run_replay("benchmarks/workloads/ring-heap.json", steps, qn, 2, fn, 2, &r);
	same_counts(&c, &r, 2, 2);
}

static void pipeline_json_counts_as_the_c_pipeline(void **state)
{
	(void)state;
	const uint64_t turns = 12;
	struct counts c = { 0 }, r = { 0 };
	struct bm_wl w;
	up(&w);
	struct bm_pipeline p;
	assert_int_equal(bm_pipeline_init(&p, &w, 3, 2, 400000, 600000, 1), 0);
	for (uint64_t i = 0; i < turns; i++)
		assert_int_equal(bm_pipeline_step(&p), 0);
	uint64_t waits = w.cpu_waits;
	assert_int_equal(bm_pipeline_drain(&p), 0);
	struct bm_queue *q[2] = { w.direct, w.compute };
	snap_queues(&c, q, 2);
	c.fences[0] = bm_fence_value(&w, p.compute_fence);
	c.fences[1] = bm_fence_value(&w, p.graphics_fence);
	snap_stack(&c, &w, waits);
	bm_pipeline_fini(&p);
	assert_int_equal(bm_wl_down(&w), 0);
	static const char *const qn[2] = { "direct0", "compute0" };
	static const char *const fn[2] = { "computeFence", "graphicsFence" };
	run_replay("benchmarks/workloads/pipeline.json", turns, qn, 2, fn, 2, &r);
	same_counts(&c, &r, 2, 2);
}

/* `text` (a frame graph) for 12 frames under the validation layer: its reports. */
static size_t validated(const char *text, enum rt_path path, bool um, char *msg, size_t len)
{
	struct bm_replay *spec = NULL;
	char err[512];
	if (bm_replay_parse(text, "frame.json", &spec, err, sizeof(err)))
		fail_msg("%s", err);
	struct bm_wl w;
	assert_int_equal(bm_wl_up(&w, path, um, true, err, sizeof(err)), 0);
	struct bm_replay_run rr;
	if (bm_replay_start(&rr, spec, &w, err, sizeof(err)))
		fail_msg("%s", err);
	for (int i = 0; i < 12; i++)
		assert_int_equal(bm_replay_frame(&rr), 0);
	assert_int_equal(bm_replay_drain(&rr), 0);
	assert_int_equal(rt_debug_pending(w.debug), 0);
	size_t n = rt_debug_errors(w.debug);
	rt_debug_message(w.debug, 0, msg, len);
	assert_int_equal(bm_wl_down(&w), 0);
	bm_replay_stop(&rr);
	bm_replay_free(spec);
	return n;
}

/* `file`'s text, and the same text without `cut` (which must be in it). */
static void with_and_without(const char *file, const char *cut, char *text, char *broken, size_t len)
{
	FILE *f = fopen(file, "r");
	assert_non_null(f);
	size_t n = fread(text, 1, len - 1, f);
	fclose(f);
	text[n] = 0;
	assert_true(n > 0 && n < len - 1);
	const char *at = strstr(text, cut);
	assert_non_null(at);
	snprintf(broken, len, "%.*s%s", (int)(at - text), text, at + strlen(cut));
}

/* The shipped frame.json declares the seed's resources (a copy per frame in
 * flight) and runs silent under the validation layer on every path; the
 * same file without the 3D queue's Wait for the lighting is reported: the
 * final draw reads buf1 the compute queue writes.  ring-heap.json likewise
 * (a ringCB per slot), reported without the copy queue's Wait for a slot. */
static void frame_json_is_silent_and_its_missing_wait_reported(void **state)
{
	(void)state;
	static char text[16384], broken[16384], ring[16384], ring_broken[16384];
	with_and_without("benchmarks/workloads/frame.json",
			 "{ \"queue\": \"direct0\", \"wait\": \"computeFence\", \"value\": 301, \"step\": 100 },", text,
			 broken, sizeof(text));
	with_and_without("benchmarks/workloads/ring-heap.json",
			 "{ \"queue\": \"copy0\", \"wait\": \"fence1\", \"value\": -2, \"step\": 1, \"after_frame\": 3 },",
			 ring, ring_broken, sizeof(ring));
	const struct { enum rt_path path; bool um; } modes[] = {
		{ RT_PATH_NATIVE, true }, { RT_PATH_NATIVE, false }, { RT_PATH_LEGACY, false } };
	for (size_t m = 0; m < 3; m++) {
		char msg[256];
		size_t n = validated(text, modes[m].path, modes[m].um, msg, sizeof(msg));
		if (n)
			fail_msg("%zu reports, first: %s", n, msg);
		assert_true(validated(broken, modes[m].path, modes[m].um, msg, sizeof(msg)) > 0);
		if (!strstr(msg, "race on buf1[") || !strstr(msg, "direct0 (execute #") || !strstr(msg, "compute0 (execute #"))
			fail_msg("not the race on buf1: %s", msg);
		/* the ring heap: silent; without the copy queue's Wait for a free slot, reported */
		n = validated(ring, modes[m].path, modes[m].um, msg, sizeof(msg));
		if (n)
			fail_msg("ring-heap.json: %zu reports, first: %s", n, msg);
		assert_true(validated(ring_broken, modes[m].path, modes[m].um, msg, sizeof(msg)) > 0);
		if (!strstr(msg, "race on ringCB[") || !strstr(msg, "copy0 (execute #") || !strstr(msg, "direct0 (execute #"))
			fail_msg("not the race on ringCB: %s", msg);
	}
}

/* A binary run where there is no tree (one file copied to a lab machine)
 * still runs the shipped frame graphs by their paths, from the copies built
 * into it (benchmarks/embedded.h); a path that names no shipped file is
 * still "no such file". */
static void shipped_workloads_load_without_a_tree(void **state)
{
	(void)state;
	char dir[] = "/tmp/fb_test_replay.XXXXXX", cwd[4096], err[512] = "";
	assert_non_null(mkdtemp(dir));
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	struct bm_replay *r = NULL, *none = NULL;
	int rc = bm_replay_load("benchmarks/workloads/frame.json", &r, err, sizeof(err));
	char err2[512] = "";
	int rc2 = bm_replay_load("benchmarks/workloads/no-such.json", &none, err2, sizeof(err2));
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(rmdir(dir), 0);
	if (rc)
		fail_msg("frame.json without a tree: %s", err);
	assert_string_equal(bm_replay_name(r), "frame");
	assert_true(bm_replay_built_in(r));          /* and the run's note says so */
	bm_replay_free(r);
	assert_int_equal(bm_replay_load("benchmarks/workloads/frame.json", &r, err, sizeof(err)), 0);
	assert_false(bm_replay_built_in(r));         /* the file, where it is */
	bm_replay_free(r);
	assert_int_equal(rc2, -ENOENT);
	assert_null(none);
	assert_non_null(strstr(err2, "no-such.json"));
}

FB_TEST_MAIN(cmocka_unit_test(bad_files_are_refused_with_one_clear_line),
	     cmocka_unit_test(deadlocked_frame_graphs_are_refused_at_once), cmocka_unit_test(string_parameters_round_trip),
	     cmocka_unit_test(frame_json_counts_as_the_c_frame), cmocka_unit_test(ring_heap_json_counts_as_the_c_ring),
	     cmocka_unit_test(frame_json_is_silent_and_its_missing_wait_reported),
	     cmocka_unit_test(pipeline_json_counts_as_the_c_pipeline),
	     cmocka_unit_test(shipped_workloads_load_without_a_tree))
