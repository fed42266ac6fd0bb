/* tests/test_d3d_debug.c — the multi-queue resource access validation layer
 * (gpu-model/runtime/d3d_debug.h): a planted race reported with both
 * submissions, fenced and CPU-ordered accesses accepted, the state rules of
 * the two queue type classes, and the seed's workloads silent under it (the
 * ring heap without its Wait reported). */
#include <errno.h>
#include <string.h>

#include "benchmarks/workload.h"
#include "gpu-model/runtime/d3d_debug.h"
#include "tests/fb_test.h"
#include "tests/d3d_resets_util.h"

#define WAIT_NS 5000000000ll

struct fix {
	struct rt_stack *s;
	struct rt_debug *v;
	struct rt_cqueue *copy, *direct, *compute;
};

static void up_engines(struct fix *x, enum rt_path path, unsigned engines)
{
	struct rt_stack_config cfg;
	rt_stack_config_default(&cfg, path);
	cfg.os.caps.engines = engines;
	char err[256] = "";
	if (rt_stack_create(&cfg, &x->s, err, sizeof(err)))
		fail_msg("rt_stack_create: %s", err);
	assert_int_equal(rt_debug_create(&x->v), 0);
	struct rt_cqueue_desc d = { .type = RT_LIST_COPY, .name = "copy0", .debug = x->v, .user_mode = true };
	assert_int_equal(rt_cqueue_create(rt_stack_device(x->s), &d, &x->copy), 0);
	d = (struct rt_cqueue_desc){ .type = RT_LIST_DIRECT, .name = "direct0", .debug = x->v, .user_mode = true };
	assert_int_equal(rt_cqueue_create(rt_stack_device(x->s), &d, &x->direct), 0);
	d = (struct rt_cqueue_desc){ .type = RT_LIST_COMPUTE, .name = "compute0", .debug = x->v, .user_mode = true };
	assert_int_equal(rt_cqueue_create(rt_stack_device(x->s), &d, &x->compute), 0);
}

static void up(struct fix *x, enum rt_path path)
{
	up_engines(x, path, 3);
}

static void down(struct fix *x)
{
	assert_int_equal(rt_stack_destroy(x->s), 0);
	rt_cqueue_destroy(x->copy);
	rt_cqueue_destroy(x->direct);
	rt_cqueue_destroy(x->compute);
	rt_debug_destroy(x->v);
}

static struct rt_fence *fence(struct fix *x)
{
	struct rt_fence *f = NULL;
	assert_int_equal(rt_fence_create(rt_stack_device(x->s), 0, &f), 0);
	return f;
}

static struct rt_resource *res(struct fix *x, const char *name, enum rt_state st)
{
	struct rt_resource *r = NULL;
	assert_int_equal(rt_resource_create(x->v, name, st, &r), 0);
	return r;
}

/* Execute on q one list of q's type with one op touching r in state st. */
static void use(struct rt_cqueue *q, struct rt_resource *r, enum rt_state st, bool write)
{
	static const struct rt_pso compute_pso = { RT_PSO_COMPUTE, "use" };
	enum rt_list_type t = rt_cqueue_type(q);
	struct rt_clist *l = NULL;
	assert_int_equal(rt_clist_create_pso(t, t == RT_LIST_COPY ? NULL : &compute_pso, &l), 0);
	assert_int_equal(rt_clist_record(l, t == RT_LIST_COPY ? RT_OP_COPY : RT_OP_DISPATCH, 1000, 1), 0);
	assert_int_equal(rt_clist_access(l, r, st, write), 0);
	assert_int_equal(rt_clist_close(l), 0);
	assert_int_equal(rt_cqueue_execute(q, &l, 1), 0);
	rt_clist_destroy(l);
}

static void barrier(struct rt_cqueue *q, struct rt_resource *r, enum rt_state before, enum rt_state after)
{
	struct rt_clist *l = NULL;
	assert_int_equal(rt_clist_create(rt_cqueue_type(q), &l), 0);
	assert_int_equal(rt_clist_barrier(l, r, before, after), 0);
	assert_int_equal(rt_clist_close(l), 0);
	assert_int_equal(rt_cqueue_execute(q, &l, 1), 0);
	rt_clist_destroy(l);
}

static bool message_has(struct rt_debug *v, size_t i, const char *a, const char *b, const char *c)
{
	char msg[256];
	rt_debug_message(v, i, msg, sizeof(msg));
	bool ok = strstr(msg, a) && (!b || strstr(msg, b)) && (!c || strstr(msg, c));
	if (!ok)
		printf("[ INFO     ] message %zu: %s\n", i, msg);
	return ok;
}

/* The modes the seed's workloads run on: native user-mode, native kernel-mode, legacy. */
static const struct { enum rt_path path; bool um; } wl_modes[] = {
	{ RT_PATH_NATIVE, true }, { RT_PATH_NATIVE, false }, { RT_PATH_LEGACY, false } };

/* Bring up the seed's workload stack on mode m, under the validation layer. */
static void wl_up(struct bm_wl *w, size_t m)
{
	char err[256];
	assert_int_equal(bm_wl_up(w, wl_modes[m].path, wl_modes[m].um, true, err, sizeof(err)), 0);
}

/* No error reported (the first one printed if there is). */
static void assert_silent(struct rt_debug *v)
{
	if (rt_debug_errors(v))
		message_has(v, 0, "(none expected)", NULL, NULL);
	assert_int_equal(rt_debug_errors(v), 0);
}

/* A drained workload's verdict: nothing pending; silent when whole, else a
 * race reported whose first message names a, b and c (NULL: not checked). */
static void assert_verdict(struct rt_debug *v, bool broken, const char *a, const char *b, const char *c)
{
	assert_int_equal(rt_debug_pending(v), 0);
	if (!broken) {
		assert_silent(v);
	} else {
		assert_true(rt_debug_errors(v) > 0);
		assert_true(message_has(v, 0, a, b, c));
	}
}

/* "queue copy0 writes tex1 while direct0 reads it; no fence orders them". */
static void planted_race_names_both_submissions(void **state)
{
	(void)state;
	for (int p = 0; p < 2; p++) {
		struct fix x;
		up(&x, (enum rt_path)p);
		struct rt_resource *tex1 = res(&x, "tex1", RT_STATE_COMMON);
		use(x.copy, tex1, RT_STATE_COMMON, true);
		use(x.direct, tex1, RT_STATE_SHADER_RESOURCE, false);
		assert_int_equal(rt_debug_errors(x.v), 1);
		assert_true(message_has(x.v, 0, "race on tex1", "direct0 (execute #1) reads", "copy0 (execute #1) writes"));
		assert_true(message_has(x.v, 0, "no fence orders them", NULL, NULL));
		down(&x);
	}
}

/* The same accesses ordered by a fence: silent.  Also when the Wait is
 * recorded before the Signal it needs. */
static void fenced_accesses_are_accepted(void **state)
{
	(void)state;
	struct fix x;
	up(&x, RT_PATH_NATIVE);
	struct rt_fence *f = fence(&x), *g = fence(&x);
	struct rt_resource *tex1 = res(&x, "tex1", RT_STATE_COMMON), *buf = res(&x, "buf", RT_STATE_COMMON);
	use(x.copy, tex1, RT_STATE_COMMON, true);
	assert_int_equal(rt_cqueue_signal(x.copy, f, 1), 0);
	assert_int_equal(rt_cqueue_wait(x.direct, f, 1), 0);
	use(x.direct, tex1, RT_STATE_SHADER_RESOURCE, false);
	/* wait recorded first: replayed once the signal is */
	assert_int_equal(rt_cqueue_wait(x.compute, g, 1), 0);
	use(x.compute, buf, RT_STATE_SHADER_RESOURCE, false);
	assert_int_equal(rt_debug_pending(x.v), 3);   /* the wait, the access, the execute's end */
	use(x.copy, buf, RT_STATE_COMMON, true);
	assert_int_equal(rt_cqueue_signal(x.copy, g, 1), 0);
	assert_int_equal(rt_debug_pending(x.v), 0);
	assert_int_equal(rt_debug_errors(x.v), 0);
	/* reads on two queues never race */
	use(x.compute, tex1, RT_STATE_SHADER_RESOURCE, false);
	assert_int_equal(rt_debug_errors(x.v), 0);
	/* a write after those reads, unordered: two races (direct0's and compute0's reads) */
	use(x.copy, tex1, RT_STATE_COMMON, true);
	assert_int_equal(rt_debug_errors(x.v), 2);
	assert_true(message_has(x.v, 0, "copy0 (execute #3) writes", "reads it", NULL));
	down(&x);
}

/* What the CPU waited for orders what it records next; without the wait, a race. */
static void cpu_waits_order_later_work(void **state)
{
	(void)state;
	for (int told = 0; told < 2; told++) {
		struct fix x;
		up(&x, RT_PATH_LEGACY);
		struct rt_fence *f = fence(&x);
		struct rt_resource *r = res(&x, "ringCB", RT_STATE_COMMON);
		use(x.direct, r, RT_STATE_SHADER_RESOURCE, false);
		assert_int_equal(rt_cqueue_signal(x.direct, f, 1), 0);
		assert_int_equal(rt_fence_wait(f, 1, WAIT_NS), 0);
		if (told)
			rt_debug_cpu_waited(x.v, f, 1);
		use(x.copy, r, RT_STATE_COMMON, true);
		assert_int_equal(rt_debug_errors(x.v), told ? 0 : 1);
		down(&x);
	}
}

/* States per type class: copy queues use COMMON (or their own COPY_*);
 * COPY_DEST of the copy class is not COPY_DEST of the compute/3D class; a
 * barrier must start from the state; COMMON promotes and decays; a
 * presented resource is in COMMON. */
static void states_follow_the_type_classes(void **state)
{
	(void)state;
	struct fix x;
	up(&x, RT_PATH_NATIVE);
	struct rt_fence *f = fence(&x);
	uint64_t v = 0;
	struct rt_resource *a = res(&x, "a", RT_STATE_SHADER_RESOURCE);
	use(x.copy, a, RT_STATE_COMMON, false);                      /* copy queue, 3D-class state */
	assert_int_equal(rt_debug_errors(x.v), 1);
	assert_true(message_has(x.v, 0, "copy0", "a on a copy queue", "SHADER_RESOURCE"));
	struct rt_resource *b = res(&x, "b", RT_STATE_COMMON);
	barrier(x.copy, b, RT_STATE_COMMON, RT_STATE_COPY_DEST);      /* COPY_DEST of the copy class */
	use(x.copy, b, RT_STATE_COPY_DEST, true);
	assert_int_equal(rt_cqueue_signal(x.copy, f, ++v), 0);
	assert_int_equal(rt_cqueue_wait(x.direct, f, v), 0);
	use(x.direct, b, RT_STATE_COPY_DEST, true);                   /* not the 3D class's COPY_DEST */
	assert_int_equal(rt_debug_errors(x.v), 2);
	assert_true(message_has(x.v, 1, "direct0", "b as COPY_DEST", "copy class"));
	struct rt_resource *c = res(&x, "c", RT_STATE_RENDER_TARGET);
	barrier(x.direct, c, RT_STATE_SHADER_RESOURCE, RT_STATE_COMMON);   /* wrong before */
	assert_int_equal(rt_debug_errors(x.v), 3);
	assert_true(message_has(x.v, 2, "barrier moves c from SHADER_RESOURCE", "RENDER_TARGET", NULL));
	struct rt_resource *d = res(&x, "d", RT_STATE_COMMON);
	use(x.direct, d, RT_STATE_SHADER_RESOURCE, false);            /* promotion, then decay */
	assert_int_equal(rt_debug_errors(x.v), 3);
	assert_int_equal(rt_debug_present(x.v, d), 0);
	use(x.direct, d, RT_STATE_UNORDERED_ACCESS, true);            /* no promotion to UAV */
	assert_int_equal(rt_debug_errors(x.v), 4);
	barrier(x.direct, d, RT_STATE_COMMON, RT_STATE_RENDER_TARGET);
	assert_int_equal(rt_debug_present(x.v, d), -EINVAL);          /* presented in RENDER_TARGET */
	assert_int_equal(rt_debug_errors(x.v), 5);
	assert_true(message_has(x.v, 4, "d presented in RENDER_TARGET", NULL, NULL));
	down(&x);
}

/* The seed's workloads are silent under the layer on every mode; the ring
 * heap without the copy engine's Wait is reported, naming both queues. */
static void seed_workloads_are_silent(void **state)
{
	(void)state;
	for (size_t m = 0; m < 3; m++) {
		struct bm_wl w;
		wl_up(&w, m);
		struct bm_frame_cfg cfg = { .geometry_ns = 50000, .texture_ns = 20000, .prepass_ns = 100000,
					    .lighting_ns = 100000, .final_ns = 100000, .units = 1, .frames_in_flight = 2 };
		struct bm_frame f;
		assert_int_equal(bm_frame_init(&f, &w, &cfg), 0);
		for (int i = 0; i < 12; i++)
			assert_int_equal(bm_frame_submit(&f), 0);
		assert_int_equal(bm_frame_drain(&f), 0);
		bm_frame_fini(&f);
		struct bm_ring_heap r;
		assert_int_equal(bm_ring_heap_init(&r, &w, 3, 2, 50000, 50000, 1), 0);
		for (int i = 0; i < 12; i++)
			assert_int_equal(bm_ring_heap_step(&r), 0);
		assert_int_equal(bm_ring_heap_drain(&r), 0);
		bm_ring_heap_fini(&r);
		assert_silent(w.debug);
		assert_int_equal(rt_debug_pending(w.debug), 0);
		/* the broken ring: no Wait for a free slot */
		assert_int_equal(bm_ring_heap_init(&r, &w, 3, 0, 50000, 50000, 1), 0);
		r.broken_no_ring_wait = true;
		for (int i = 0; i < 8; i++)
			assert_int_equal(bm_ring_heap_step(&r), 0);
		assert_int_equal(bm_ring_heap_drain(&r), 0);
		bm_ring_heap_fini(&r);
		assert_true(rt_debug_errors(w.debug) > 0);
		assert_true(message_has(w.debug, 0, "race on ringCB[", "copy0", "direct0"));
		assert_int_equal(bm_wl_down(&w), 0);
	}
}

/* The seed's PipelinedComputeGraphics under the layer: compute writes copy
 * (n - 1) % (CGL + 1) of the data, graphics reads it after its Wait for the
 * compute fence; silent on every path, and reported without that Wait. */
static void pipeline_is_silent_and_its_missing_wait_reported(void **state)
{
	(void)state;
	for (size_t m = 0; m < 3; m++) {
		for (int broken = 0; broken < 2; broken++) {
			struct bm_wl w;
			wl_up(&w, m);
			struct bm_pipeline p;
			assert_int_equal(bm_pipeline_init(&p, &w, 3, 2, 50000, 50000, 1), 0);
			p.broken_no_compute_wait = broken;
			for (int i = 0; i < 12; i++)
				assert_int_equal(bm_pipeline_step(&p), 0);
			assert_int_equal(bm_pipeline_drain(&p), 0);
			bm_pipeline_fini(&p);
			assert_verdict(w.debug, broken, "race on pipe[", "direct0 (execute #", "compute0 (execute #");
			assert_int_equal(bm_wl_down(&w), 0);
		}
	}
}

/* The seed's AsyncPipelinedComputeGraphics under the layer: compute writes
 * pipe buffer (n - 1) % CGL once graphics signaled it is done with it,
 * graphics reads the buffer of the last compute frame the CPU saw complete;
 * silent on every path.  Without compute's Wait for the graphics-compute
 * fence, a slow graphics queue still reads a buffer compute rewrites: the
 * race is reported naming both executes. */
static void async_compute_is_silent_and_its_missing_wait_reported(void **state)
{
	(void)state;
	for (size_t m = 0; m < 3; m++) {
		for (int broken = 0; broken < 2; broken++) {
			struct bm_wl w;
			wl_up(&w, m);
			struct bm_async a;
			/* broken: compute fast, graphics slow, so compute laps the buffers graphics reads */
			assert_int_equal(bm_async_init(&a, &w, 3, 2, broken ? 20000 : 50000, broken ? 400000 : 50000, 1), 0);
			a.broken_no_graphics_wait = broken;
			/* silent: the seed's own turns.  Broken: the stages taken in
			 * turn, since with both events set the lowest index wins and
			 * a CPU slower than compute's GPU work (ThreadSanitizer)
			 * would pick compute every time, and graphics never reads */
			for (int i = 0; i < 24; i++)
				assert_int_equal(broken ? bm_async_step_stage(&a, i % 2) : bm_async_step(&a), 0);
			assert_int_equal(bm_async_drain(&a), 0);
			assert_true(a.frames[0] > 3 && a.frames[1] > 3);
			bm_async_fini(&a);
			assert_verdict(w.debug, broken, "race on pipe[", "compute0 (execute #", "direct0 (execute #");
			assert_int_equal(bm_wl_down(&w), 0);
		}
	}
}

/* Seed multi-engine-synchronization, "Multi-queue resource access": "The
 * COPY flags (COPY_DEST and COPY_SOURCE) used as initial states represent
 * states in the 3D/Compute type class.  To use a resource initially on a
 * Copy queue it should start in the COMMON state."  A resource created in
 * COPY_DEST or COPY_SOURCE is used so by direct and compute queues without a
 * barrier; a copy queue that uses it, or moves it from that COPY_* state,
 * is reported; one created in COMMON serves the copy queue. */
static void copy_initial_states_belong_to_the_3d_compute_type_class(void **state)
{
	(void)state;
	for (int p = 0; p < 2; p++) {
		struct fix x;
		up(&x, (enum rt_path)p);
		struct rt_resource *dst = res(&x, "dst", RT_STATE_COPY_DEST);
		struct rt_resource *src = res(&x, "src", RT_STATE_COPY_SOURCE);
		use(x.direct, dst, RT_STATE_COPY_DEST, true);           /* the 3D class's COPY_DEST */
		use(x.compute, src, RT_STATE_COPY_SOURCE, false);       /* the compute class's COPY_SOURCE */
		assert_int_equal(rt_debug_errors(x.v), 0);
		struct rt_resource *dst2 = res(&x, "dst2", RT_STATE_COPY_DEST);
		use(x.copy, dst2, RT_STATE_COPY_DEST, true);            /* not the copy class's */
		assert_int_equal(rt_debug_errors(x.v), 1);
		assert_true(message_has(x.v, 0, "copy0", "dst2 on a copy queue", "COPY_DEST of the compute/3D class"));
		struct rt_resource *src2 = res(&x, "src2", RT_STATE_COPY_SOURCE);
		barrier(x.copy, src2, RT_STATE_COPY_SOURCE, RT_STATE_COPY_DEST);
		assert_int_equal(rt_debug_errors(x.v), 2);
		assert_true(message_has(x.v, 1, "barrier moves src2 from COPY_SOURCE", NULL, NULL));
		struct rt_resource *common = res(&x, "common", RT_STATE_COMMON);
		use(x.copy, common, RT_STATE_COMMON, true);             /* "it should start in the COMMON state" */
		assert_int_equal(rt_debug_errors(x.v), 2);
		down(&x);
	}
}

/* Seed multi-engine-synchronization, "Multi-queue resource access": "The
 * resource states that are shared between the two type classes
 * (COPY_SOURCE and COPY_DEST) are considered different states for each type
 * class" — and each is a state of its own within the copy class: a
 * resource a copy queue moved to COPY_SOURCE is read there as a copy
 * source, written as a copy destination only after a barrier to COPY_DEST
 * (without it: reported, naming both states). */
static void copy_source_and_copy_dest_are_different_states_in_the_copy_class(void **state)
{
	(void)state;
	for (int p = 0; p < 2; p++) {
		struct fix x;
		up(&x, (enum rt_path)p);
		struct rt_resource *buf = res(&x, "buf", RT_STATE_COMMON);
		barrier(x.copy, buf, RT_STATE_COMMON, RT_STATE_COPY_SOURCE);
		use(x.copy, buf, RT_STATE_COPY_SOURCE, false);          /* read as a copy source */
		assert_int_equal(rt_debug_errors(x.v), 0);
		use(x.copy, buf, RT_STATE_COPY_DEST, true);             /* written as a destination */
		assert_int_equal(rt_debug_errors(x.v), 1);
		assert_true(message_has(x.v, 0, "copy0", "uses buf as COPY_DEST on a copy queue",
					"in COPY_SOURCE of the copy class"));
		barrier(x.copy, buf, RT_STATE_COPY_SOURCE, RT_STATE_COPY_DEST);
		use(x.copy, buf, RT_STATE_COPY_DEST, true);
		assert_int_equal(rt_debug_errors(x.v), 1);
		use(x.copy, buf, RT_STATE_COPY_SOURCE, false);          /* and back: reported too */
		assert_int_equal(rt_debug_errors(x.v), 2);
		down(&x);
	}
}

/* Seed multi-engine-synchronization, "Multi-queue resource access": "it is
 * not permitted to write to the resource simultaneously on different
 * queues.  'Simultaneously' here means unsynchronized, noting unsynchronized
 * execution is not possible on some hardware.  ... Only one queue can write
 * to a resource at a time."  Two queues of the compute/3D class write one
 * UAV with no fence between them: reported, naming both writers — also on
 * a one-engine adapter, where the two writes can never overlap in time;
 * with a Signal and a Wait between them: silent. */
static void two_unsynchronized_writers_are_reported(void **state)
{
	(void)state;
	for (int p = 0; p < 2; p++) {
		for (unsigned engines = 1; engines <= 3; engines += 2) {
			for (int fenced = 0; fenced < 2; fenced++) {
				struct fix x;
				up_engines(&x, (enum rt_path)p, engines);
				struct rt_fence *f = fence(&x);
				struct rt_resource *buf = res(&x, "buf1", RT_STATE_UNORDERED_ACCESS);
				use(x.direct, buf, RT_STATE_UNORDERED_ACCESS, true);
				if (fenced) {
					assert_int_equal(rt_cqueue_signal(x.direct, f, 1), 0);
					assert_int_equal(rt_cqueue_wait(x.compute, f, 1), 0);
				}
				use(x.compute, buf, RT_STATE_UNORDERED_ACCESS, true);
				assert_int_equal(rt_cqueue_finish(x.compute, WAIT_NS), 0);
				assert_int_equal(rt_debug_pending(x.v), 0);
				if (fenced) {
					assert_int_equal(rt_debug_errors(x.v), 0);
				} else {
					assert_int_equal(rt_debug_errors(x.v), 1);
					assert_true(message_has(x.v, 0, "race on buf1: compute0 (execute #1) writes it",
								"while direct0 (execute #1) writes it",
								"no fence orders them"));
				}
				down(&x);
			}
		}
	}
}

/* Seed multi-engine-synchronization, "Asynchronous compute and graphics
 * example": "Graphics needs to wait for the first compute frame to
 * complete; this is the only wait that the graphics queue will perform."
 * Graphics' first turn comes before compute's: with the seed's
 * Wait(pComputeFence, 1) the graphics read of pipe[0] is ordered after
 * compute frame 1 writes it, and the layer is silent; without it
 * (broken_no_first_compute_wait) graphics reads a buffer compute has not
 * written yet, unordered with the write: reported, naming both executes. */
static void async_graphics_waits_for_the_first_compute_frame(void **state)
{
	(void)state;
	for (size_t m = 0; m < 3; m++) {
		for (int broken = 0; broken < 2; broken++) {
			struct bm_wl w;
			wl_up(&w, m);
			struct bm_async a;
			assert_int_equal(bm_async_init_broken(&a, &w, 3, 2, 50000, 50000, 1, broken, false), 0);
			assert_int_equal(bm_async_step_stage(&a, 1), 0);     /* graphics first */
			for (int i = 0; i < 10; i++)
				assert_int_equal(bm_async_step_stage(&a, i % 2 == 0 ? 0 : 1), 0);
			assert_int_equal(bm_async_drain(&a), 0);
			bm_async_fini(&a);
			assert_verdict(w.debug, broken, "race on pipe[0]: compute0 (execute #1) writes it",
							"direct0 (execute #1) reads it", NULL);
			assert_int_equal(bm_wl_down(&w), 0);
		}
	}
}

/* A recorded, closed direct list of one draw. */
static struct rt_clist *draw_list(void)
{
	struct rt_clist *l = NULL;
	assert_int_equal(rt_clist_create(RT_LIST_DIRECT, &l), 0);
	assert_int_equal(rt_clist_draw(l, 1000), 0);
	assert_int_equal(rt_clist_close(l), 0);
	return l;
}

static struct rt_debug_resets resets(struct rt_debug *v, char *msg, size_t len)
{
	struct rt_debug_resets r;
	rt_debug_resets(v, &r, msg, len);
	return r;
}

/* Seed multi-engine-synchronization, "Asynchronous compute and graphics
 * example": lists kept "to allow the ComputeGraphicsLatency frames of
 * graphics work to be in flight".  The layer counts a Reset of a list whose
 * last execution has not completed, and whether an earlier execution of its
 * queue is in flight too: the direct queue is held behind a Wait on a gate
 * fence, a and then b executed; b's Reset (a still in flight before it) and
 * a's are counted, naming the execution; once both completed, a Reset, and
 * the Reset of a list never executed, are not. */
static void reset_of_a_list_in_flight_is_counted(void **state)
{
	(void)state;
	struct fix x;
	up(&x, RT_PATH_NATIVE);
	struct rt_fence *gate = fence(&x);
	assert_int_equal(rt_cqueue_wait(x.direct, gate, 1), 0);
	struct rt_clist *a = draw_list(), *b = draw_list(), *never = draw_list();
	assert_int_equal(rt_cqueue_execute(x.direct, &a, 1), 0);
	assert_int_equal(rt_cqueue_execute(x.direct, &b, 1), 0);
	char msg[224];
	rt_clist_reset(never);
	assert_int_equal(resets(x.v, msg, sizeof(msg)).in_flight, 0);
	rt_clist_reset(b);
	struct rt_debug_resets r = resets(x.v, msg, sizeof(msg));
	assert_int_equal(r.in_flight, 1);
	assert_int_equal(r.older_in_flight, 1);
	assert_string_equal(msg, "list reset while its execution on direct0 (execute #2) is in flight, "
				 "and an earlier execution of that queue too");
	rt_clist_reset(a);
	r = resets(x.v, msg, sizeof(msg));
	assert_int_equal(r.in_flight, 2);
	assert_int_equal(r.older_in_flight, 1);   /* a is the queue's first */
	assert_string_equal(msg, "list reset while its execution on direct0 (execute #1) is in flight");
	/* completed: a Reset is nothing to report */
	assert_int_equal(rt_fence_signal(gate, 1), 0);
	assert_int_equal(rt_clist_draw(a, 1000), 0);
	assert_int_equal(rt_clist_close(a), 0);
	assert_int_equal(rt_cqueue_execute(x.direct, &a, 1), 0);
	assert_int_equal(rt_cqueue_finish(x.direct, WAIT_NS), 0);
	rt_clist_reset(a);
	assert_int_equal(resets(x.v, NULL, 0).in_flight, 2);
	assert_silent(x.v);                       /* counted, not an error (D3D12 allows it) */
	rt_clist_destroy(a);
	rt_clist_destroy(b);
	rt_clist_destroy(never);
	down(&x);
}

/* The async example as the seed writes it re-records a list in flight, and
 * never one with an earlier frame in flight (tests/d3d_resets_util.h): on
 * every path, frames 4..10 each re-record the list of a frame held in
 * flight (7), none with an earlier frame in flight; without the throttle
 * (broken_no_cpu_throttle) frames 5..10 do: caught.  Without the layer's
 * check (the broken build RT_BROKEN_NO_RESET_CHECK, tests/model_broken.c)
 * nothing is counted: caught too. */
static void async_example_rerecords_only_the_oldest_list_in_flight(void **state)
{
	(void)state;
	for (size_t m = 0; m < 3; m++) {
		struct rt_debug_resets r = gated_async_resets(wl_modes[m].path, wl_modes[m].um, false);
		assert_int_equal(r.in_flight, 7);
		assert_int_equal(r.older_in_flight, 0);
		r = gated_async_resets(wl_modes[m].path, wl_modes[m].um, true);
		assert_int_equal(r.in_flight, 7);
		assert_int_equal(r.older_in_flight, 6);
	}
}

FB_TEST_MAIN(cmocka_unit_test(planted_race_names_both_submissions), cmocka_unit_test(fenced_accesses_are_accepted),
	     cmocka_unit_test(cpu_waits_order_later_work), cmocka_unit_test(states_follow_the_type_classes),
	     cmocka_unit_test(seed_workloads_are_silent),
	     cmocka_unit_test(pipeline_is_silent_and_its_missing_wait_reported),
	     cmocka_unit_test(async_compute_is_silent_and_its_missing_wait_reported),
	     cmocka_unit_test(copy_initial_states_belong_to_the_3d_compute_type_class),
	     cmocka_unit_test(copy_source_and_copy_dest_are_different_states_in_the_copy_class),
	     cmocka_unit_test(two_unsynchronized_writers_are_reported),
	     cmocka_unit_test(async_graphics_waits_for_the_first_compute_frame),
	     cmocka_unit_test(reset_of_a_list_in_flight_is_counted),
	     cmocka_unit_test(async_example_rerecords_only_the_oldest_list_in_flight))
