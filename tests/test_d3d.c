/* tests/test_d3d.c — conformance of the D3D12 multi-engine API
 * (gpu-model/runtime/d3d.h) to the seed multi-engine-synchronization: one
 * test per rule, each on both fence paths (native, legacy) and, where the
 * queue matters, both submission paths (user-mode, kernel-mode).
 *
 * The work a list records is WORK of a duration: that an execution ran is
 * seen in the engine's busy time (at least the work recorded, on the engine
 * of the queue's type and not on the others), never in how fast it ran. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "gpu-model/runtime/d3d.h"
#include "gpu-model/runtime/stack.h"
#include "lockfree/arch.h"
#include "tests/fb_test.h"

#define WAIT_NS 5000000000ll
#define MS 1000000ull

struct mode {
	enum rt_path path;
	bool user_mode;
};
/* every fence path with every submission path it has */
static const struct mode modes[] = {
	{ RT_PATH_NATIVE, true }, { RT_PATH_NATIVE, false }, { RT_PATH_LEGACY, true }, { RT_PATH_LEGACY, false },
};
#define NMODES (sizeof(modes) / sizeof(modes[0]))

static struct rt_stack *up(enum rt_path path)
{
	struct rt_stack_config cfg;
	rt_stack_config_default(&cfg, path);
	cfg.os.caps.engines = 3;
	struct rt_stack *s = NULL;
	char err[256] = "";
	int rc = rt_stack_create(&cfg, &s, err, sizeof(err));
	if (rc)
		fail_msg("rt_stack_create: %d %s", rc, err);
	return s;
}

static struct rt_cqueue *queue(struct rt_stack *s, enum rt_list_type t, bool um)
{
	struct rt_cqueue_desc desc = { .type = t, .user_mode = um };
	struct rt_cqueue *q = NULL;
	assert_int_equal(rt_cqueue_create(rt_stack_device(s), &desc, &q), 0);
	return q;
}

static struct rt_fence *fence(struct rt_stack *s, uint64_t initial)
{
	struct rt_fence *f = NULL;
	assert_int_equal(rt_fence_create(rt_stack_device(s), initial, &f), 0);
	return f;
}

static struct rt_event *event(bool manual)
{
	struct rt_event *e = NULL;
	assert_int_equal(rt_event_create(manual, false, &e), 0);
	return e;
}

static const struct rt_pso compute_pso = { RT_PSO_COMPUTE, "lighting" };
static const struct rt_pso graphics_pso = { RT_PSO_GRAPHICS, "prepass" };

/* The PSO a list of type t recording op is created with: a compute list's
 * is a compute PSO; otherwise compute for a dispatch, graphics for a draw
 * (a copy: none; a copy list: never one). */
static const struct rt_pso *pso_for(enum rt_list_type t, enum rt_op op)
{
	if (t == RT_LIST_COPY || op == RT_OP_COPY)
		return NULL;
	return t == RT_LIST_COMPUTE || op == RT_OP_DISPATCH ? &compute_pso : &graphics_pso;
}

/* A closed list of type t holding one op of ns. */
static struct rt_clist *list1(enum rt_list_type t, enum rt_op op, uint64_t ns)
{
	struct rt_clist *l = NULL;
	assert_int_equal(rt_clist_create_pso(t, pso_for(t, op), &l), 0);
	assert_int_equal(rt_clist_record(l, op, ns, 1), 0);
	assert_int_equal(rt_clist_close(l), 0);
	return l;
}

static uint64_t busy(struct rt_stack *s, unsigned engine)
{
	struct hw_engine_stats st;
	rt_stack_engine_stats(s, engine, &st);
	return st.busy_ns;
}

static void nap(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	nanosleep(&ts, NULL);
}

static void down(struct rt_stack *s)
{
	assert_int_equal(rt_stack_destroy(s), 0);
}

/* ---- queues ---- */

/* "The 3D queue can drive all three GPU engines; the compute queue ... the
 * compute and copy engines; and the copy queue simply the copy engine": each
 * queue type runs on its engine of the adapter, folded onto the engines an
 * adapter has; no bundle queue. */
static void queue_types_run_on_their_engines(void **state)
{
	(void)state;
	assert_int_equal(rt_engine_for_type(3, RT_LIST_DIRECT), 0);
	assert_int_equal(rt_engine_for_type(3, RT_LIST_COMPUTE), 1);
	assert_int_equal(rt_engine_for_type(3, RT_LIST_COPY), 2);
	assert_int_equal(rt_engine_for_type(2, RT_LIST_COPY), 1);
	assert_int_equal(rt_engine_for_type(1, RT_LIST_COMPUTE), 0);
	assert_int_equal(rt_engine_for_type(1, RT_LIST_COPY), 0);
	for (size_t m = 0; m < NMODES; m++) {
		struct rt_stack *s = up(modes[m].path);
		struct rt_cqueue_desc bad = { .type = RT_LIST_BUNDLE };
		struct rt_cqueue *q = NULL;
		assert_int_equal(rt_cqueue_create(rt_stack_device(s), &bad, &q), -EINVAL);
		bad = (struct rt_cqueue_desc){ .type = RT_LIST_DIRECT, .priority = 7 };
		assert_int_equal(rt_cqueue_create(rt_stack_device(s), &bad, &q), -EINVAL);
		const enum rt_list_type types[3] = { RT_LIST_DIRECT, RT_LIST_COMPUTE, RT_LIST_COPY };
		for (unsigned e = 0; e < 3; e++) {
			uint64_t before[3] = { busy(s, 0), busy(s, 1), busy(s, 2) };
			q = queue(s, types[e], modes[m].user_mode);
			assert_int_equal(rt_cqueue_engine(q), e);
			assert_int_equal(rt_cqueue_type(q), types[e]);
			struct rt_clist *l = list1(types[e], RT_OP_COPY, 3 * MS);
			assert_int_equal(rt_cqueue_execute(q, &l, 1), 0);
			assert_int_equal(rt_cqueue_finish(q, WAIT_NS), 0);
			rt_stack_settle(s);
			for (unsigned o = 0; o < 3; o++) {
				uint64_t d = busy(s, o) - before[o];
				if (o == e)
					assert_true(d >= 3 * MS);
				else
					assert_true(d < 1 * MS);
			}
			rt_clist_destroy(l);
			rt_cqueue_destroy(q);
		}
		down(s);
	}
}

/* Several queues per engine, each with its priority, each running its work. */
static void several_queues_share_an_engine(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		struct rt_stack *s = up(modes[m].path);
		struct rt_cqueue *q[3];
		const enum rt_priority pr[3] = { RT_PRIORITY_NORMAL, RT_PRIORITY_HIGH, RT_PRIORITY_GLOBAL_REALTIME };
		struct rt_clist *l = list1(RT_LIST_COMPUTE, RT_OP_DISPATCH, 2 * MS);
		uint64_t b0 = busy(s, 1);
		for (int i = 0; i < 3; i++) {
			struct rt_cqueue_desc d = { .type = RT_LIST_COMPUTE, .priority = pr[i],
						    .user_mode = modes[m].user_mode };
			assert_int_equal(rt_cqueue_create(rt_stack_device(s), &d, &q[i]), 0);
			assert_int_equal(rt_cqueue_priority(q[i]), pr[i]);
			assert_int_equal(rt_cqueue_engine(q[i]), 1);
			assert_int_equal(rt_cqueue_execute(q[i], &l, 1), 0);
		}
		for (int i = 0; i < 3; i++) {
			assert_int_equal(rt_cqueue_finish(q[i], WAIT_NS), 0);
			struct rt_cqueue_stats st;
			rt_cqueue_stats(q[i], &st);
			assert_int_equal(st.ops[RT_OP_DISPATCH], 1);
			rt_cqueue_destroy(q[i]);
		}
		rt_stack_settle(s);
		assert_true(busy(s, 1) - b0 >= 6 * MS);
		rt_clist_destroy(l);
		down(s);
	}
}

/* User-mode submission where fences are native; kernel-mode otherwise. */
static void submission_path_follows_the_fences(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		struct rt_stack *s = up(modes[m].path);
		struct rt_cqueue *q = queue(s, RT_LIST_DIRECT, modes[m].user_mode);
		assert_int_equal(rt_cqueue_user_mode(q), modes[m].user_mode && modes[m].path == RT_PATH_NATIVE);
		rt_cqueue_destroy(q);
		down(s);
	}
}

/* ---- command lists ---- */

/* A command the list type cannot hold is refused when recorded, with a
 * message naming it; it records nothing.  The table is the seed's. */
static void lists_refuse_what_their_type_cannot_hold(void **state)
{
	(void)state;
	/* [type][op]: copy, dispatch, draw */
	static const bool holds[RT_LIST_TYPES][RT_OPS] = {
		[RT_LIST_DIRECT] = { true, true, true },
		[RT_LIST_COMPUTE] = { true, true, false },
		[RT_LIST_COPY] = { true, false, false },
		[RT_LIST_BUNDLE] = { false, true, true },
	};
	for (int t = 0; t < RT_LIST_TYPES; t++)
		for (int op = 0; op < RT_OPS; op++) {
			struct rt_clist *l = NULL;
			assert_int_equal(rt_clist_create_pso((enum rt_list_type)t, pso_for((enum rt_list_type)t, (enum rt_op)op), &l), 0);
			assert_int_equal(rt_list_type_holds((enum rt_list_type)t, (enum rt_op)op), holds[t][op]);
			int rc = rt_clist_record(l, (enum rt_op)op, 1000, 2);
			assert_int_equal(rc, holds[t][op] ? 0 : -EINVAL);
			assert_int_equal(rt_clist_cmds(l), holds[t][op] ? 1 : 0);   /* one WORK of 2 sub-units */
			if (!holds[t][op]) {
				char want[64];
				snprintf(want, sizeof(want), "%s list cannot hold a %s", rt_list_type_name((enum rt_list_type)t),
					 rt_op_name((enum rt_op)op));
				assert_non_null(strstr(rt_clist_error(l), want));
			}
			rt_clist_destroy(l);
		}
	struct rt_clist *l = NULL;
	assert_int_equal(rt_clist_create(RT_LIST_DIRECT, &l), 0);
	assert_int_equal(rt_clist_record(l, RT_OP_DRAW, 1000, 0), -EINVAL);
	for (int i = 0; i < RT_LIST_MAX_CMDS; i++)
		assert_int_equal(rt_clist_record(l, RT_OP_DRAW, 1000, 1000), 0);   /* sub-units are not commands */
	assert_int_equal(rt_clist_record(l, RT_OP_DRAW, 1000, 1), -ENOSPC);
	assert_int_equal(rt_clist_cmds(l), RT_LIST_MAX_CMDS);
	rt_clist_destroy(l);
	assert_int_equal(rt_clist_create(RT_LIST_TYPES, &l), -EINVAL);
}

/* Seed, "Copy and compute command lists": "Compute command lists must set a
 * compute PSO when calling SetPipelineState."  A compute list refuses a
 * graphics PSO (at creation and at SetPipelineState) and refuses to record a
 * dispatch until a compute PSO is set (its copies need none); Reset clears
 * the state; a copy list has no pipeline state; a direct list takes either.
 * Executed, a compute list whose dispatch was refused runs no dispatch. */
static void compute_lists_must_set_a_compute_pso(void **state)
{
	(void)state;
	struct rt_clist *l = NULL;
	assert_int_equal(rt_clist_create(RT_LIST_COMPUTE, &l), 0);
	assert_null(rt_clist_pipeline_state(l));
	assert_int_equal(rt_clist_dispatch(l, 1000), -EINVAL);                  /* none set */
	assert_non_null(strstr(rt_clist_error(l), "dispatch without a compute PSO"));
	assert_int_equal(rt_clist_cmds(l), 0);
	assert_int_equal(rt_clist_copy(l, 1000), 0);                            /* a copy uses no pipeline */
	assert_int_equal(rt_clist_set_pipeline_state(l, &graphics_pso), -EINVAL);
	assert_non_null(strstr(rt_clist_error(l), "SetPipelineState('prepass') with a graphics PSO: "
					   "compute command lists must set a compute PSO"));
	assert_null(rt_clist_pipeline_state(l));                                 /* kept its state */
	assert_int_equal(rt_clist_dispatch(l, 1000), -EINVAL);
	assert_int_equal(rt_clist_set_pipeline_state(l, NULL), -EINVAL);
	assert_int_equal(rt_clist_set_pipeline_state(l, &compute_pso), 0);
	assert_ptr_equal(rt_clist_pipeline_state(l), &compute_pso);
	assert_int_equal(rt_clist_dispatch(l, 1000), 0);
	assert_int_equal(rt_clist_set_pipeline_state(l, &graphics_pso), -EINVAL); /* not after one either */
	assert_int_equal(rt_clist_dispatch(l, 1000), 0);                        /* still the compute PSO */
	assert_int_equal(rt_clist_cmds(l), 3);
	assert_int_equal(rt_clist_close(l), 0);
	assert_int_equal(rt_clist_set_pipeline_state(l, &compute_pso), -EPERM); /* closed */
	rt_clist_reset(l);                                                       /* Reset, no initial state */
	assert_null(rt_clist_pipeline_state(l));
	assert_int_equal(rt_clist_dispatch(l, 1000), -EINVAL);
	rt_clist_destroy(l);

	/* CreateCommandList's initial state */
	l = NULL;
	assert_int_equal(rt_clist_create_pso(RT_LIST_COMPUTE, &graphics_pso, &l), -EINVAL);
	assert_null(l);                                                          /* nothing created */
	assert_int_equal(rt_clist_create_pso(RT_LIST_COMPUTE, &compute_pso, &l), 0);
	assert_int_equal(rt_clist_dispatch(l, 1000), 0);
	rt_clist_destroy(l);
	/* a copy list has no SetPipelineState; a direct list takes either kind */
	l = NULL;
	assert_int_equal(rt_clist_create_pso(RT_LIST_COPY, &compute_pso, &l), -EINVAL);
	assert_null(l);
	assert_int_equal(rt_clist_create(RT_LIST_COPY, &l), 0);
	assert_int_equal(rt_clist_set_pipeline_state(l, &compute_pso), -EINVAL);
	assert_non_null(strstr(rt_clist_error(l), "copy lists have no pipeline state"));
	rt_clist_destroy(l);
	assert_int_equal(rt_clist_create(RT_LIST_DIRECT, &l), 0);
	assert_int_equal(rt_clist_set_pipeline_state(l, &graphics_pso), 0);
	assert_int_equal(rt_clist_draw(l, 1000), 0);
	assert_int_equal(rt_clist_set_pipeline_state(l, &compute_pso), 0);
	assert_int_equal(rt_clist_dispatch(l, 1000), 0);
	rt_clist_destroy(l);

	/* executed: the refused dispatch never reaches the compute engine */
	for (size_t m = 0; m < NMODES; m++) {
		struct rt_stack *s = up(modes[m].path);
		struct rt_cqueue *q = queue(s, RT_LIST_COMPUTE, modes[m].user_mode);
		assert_int_equal(rt_clist_create(RT_LIST_COMPUTE, &l), 0);
		assert_int_equal(rt_clist_dispatch(l, 50 * MS), -EINVAL);
		assert_int_equal(rt_clist_copy(l, 1000), 0);
		assert_int_equal(rt_clist_close(l), 0);
		assert_int_equal(rt_cqueue_execute(q, &l, 1), 0);
		assert_int_equal(rt_cqueue_finish(q, WAIT_NS), 0);
		struct rt_cqueue_stats st;
		rt_cqueue_stats(q, &st);
		assert_int_equal(st.ops[RT_OP_DISPATCH], 0);
		assert_int_equal(st.ops[RT_OP_COPY], 1);
		assert_int_equal(st.work_ns, 1000);
		rt_stack_settle(s);
		assert_true(busy(s, 1) < 50 * MS);
		rt_clist_destroy(l);
		rt_cqueue_destroy(q);
		down(s);
	}
}

/* ---- default queues ---- */

/* Seed, "Devices and queues": "The Direct3D 12 device has methods to create
 * and retrieve command queues of different types and priorities.  Most
 * applications should use the default command queues because these allow
 * for shared usage by other components."  Two components that retrieve the
 * device's default queue of a type and priority get the same queue, so what
 * one submits is ordered with what the other does; other types and
 * priorities are other queues, each on its engine; a created queue is the
 * caller's own; the device frees its default queues. */
static void default_queues_allow_shared_usage_by_other_components(void **state)
{
	(void)state;
	const enum rt_path paths[] = { RT_PATH_NATIVE, RT_PATH_LEGACY };
	for (size_t m = 0; m < 2; m++) {
		struct rt_stack *s = up(paths[m]);
		struct rt_device *d = rt_stack_device(s);
		struct rt_cqueue *a = NULL, *b = NULL, *c = NULL, *copy = NULL, *high = NULL, *own = NULL;
		assert_int_equal(rt_device_default_queue(d, RT_LIST_DIRECT, RT_PRIORITY_NORMAL, &a), 0);  /* component A */
		assert_int_equal(rt_device_default_queue(d, RT_LIST_DIRECT, RT_PRIORITY_NORMAL, &b), 0);  /* component B */
		assert_ptr_equal(a, b);
		assert_true(rt_cqueue_is_default(a));
		assert_string_equal(rt_cqueue_name(a), "default-direct");
		assert_int_equal(rt_cqueue_engine(a), 0);
		assert_int_equal(rt_cqueue_user_mode(a), paths[m] == RT_PATH_NATIVE);   /* kernel mode on monitored fences */
		assert_int_equal(rt_device_default_queue(d, RT_LIST_COMPUTE, RT_PRIORITY_NORMAL, &c), 0);
		assert_int_equal(rt_device_default_queue(d, RT_LIST_COPY, RT_PRIORITY_NORMAL, &copy), 0);
		assert_int_equal(rt_device_default_queue(d, RT_LIST_DIRECT, RT_PRIORITY_HIGH, &high), 0);
		assert_true(c != a && copy != a && copy != c && high != a);
		assert_int_equal(rt_cqueue_engine(c), 1);
		assert_int_equal(rt_cqueue_engine(copy), 2);
		assert_int_equal(rt_cqueue_type(c), RT_LIST_COMPUTE);
		assert_int_equal(rt_cqueue_priority(high), RT_PRIORITY_HIGH);
		assert_string_equal(rt_cqueue_name(high), "default-direct-high");
		struct rt_cqueue *again = NULL;
		assert_int_equal(rt_device_default_queue(d, RT_LIST_DIRECT, RT_PRIORITY_HIGH, &again), 0);
		assert_ptr_equal(again, high);
		/* bundles have no queue; a priority the API lacks */
		assert_int_equal(rt_device_default_queue(d, RT_LIST_BUNDLE, RT_PRIORITY_NORMAL, &again), -EINVAL);
		assert_int_equal(rt_device_default_queue(d, RT_LIST_DIRECT, (enum rt_priority)7, &again), -EINVAL);
		assert_ptr_equal(again, high);                                          /* untouched */
		/* a created queue is the caller's own, not the default */
		own = queue(s, RT_LIST_DIRECT, true);
		assert_true(own != a && !rt_cqueue_is_default(own));

		/* shared usage: A's draw, then B's Signal on the queue it retrieved,
		 * lands after A's work, as on one queue */
		struct rt_fence *f = fence(s, 0);
		struct rt_clist *l = list1(RT_LIST_DIRECT, RT_OP_DRAW, 50 * MS);
		uint64_t b0 = busy(s, 0);
		assert_int_equal(rt_cqueue_execute(a, &l, 1), 0);
		assert_int_equal(rt_cqueue_signal(b, f, 1), 0);
		assert_int_equal(rt_fence_completed(f), 0);                             /* the draw is still running */
		assert_int_equal(rt_fence_wait(f, 1, WAIT_NS), 0);
		rt_stack_settle(s);
		assert_true(busy(s, 0) - b0 >= 50 * MS);
		struct rt_cqueue_stats st;
		rt_cqueue_stats(b, &st);
		assert_int_equal(st.executes, 1);
		assert_int_equal(st.signals, 1);
		rt_clist_destroy(l);
		rt_cqueue_destroy(own);
		down(s);   /* frees the default queues (ASan: no leak) */
	}
}

/* Components on threads of their own, each retrieving the default compute
 * queue itself at the same moment and submitting to it: one queue, every
 * submission of every component kept (the queue serializes them; under
 * `make tsan` the same run shows no race). */
#define COMPONENTS 4
#define COMPONENT_FRAMES 50
struct component {
	struct rt_device *d;
	pthread_barrier_t *start;
	struct rt_fence *f;
	struct rt_clist *l;
	struct rt_cqueue *q;
	int rc;
};

static void *component_main(void *arg)
{
	struct component *c = arg;
	pthread_barrier_wait(c->start);
	c->rc = rt_device_default_queue(c->d, RT_LIST_COMPUTE, RT_PRIORITY_NORMAL, &c->q);
	for (uint64_t i = 1; i <= COMPONENT_FRAMES && !c->rc; i++) {
		c->rc = rt_cqueue_execute(c->q, &c->l, 1);
		if (!c->rc)
			c->rc = rt_cqueue_signal(c->q, c->f, i);
	}
	return NULL;
}

static void default_queue_is_shared_by_components_on_several_threads(void **state)
{
	(void)state;
	for (size_t m = 0; m < 2; m++) {
		struct rt_stack *s = up(m ? RT_PATH_LEGACY : RT_PATH_NATIVE);
		pthread_barrier_t start;
		pthread_barrier_init(&start, NULL, COMPONENTS);
		struct component c[COMPONENTS];
		pthread_t t[COMPONENTS];
		for (int i = 0; i < COMPONENTS; i++) {
			c[i] = (struct component){ .d = rt_stack_device(s), .start = &start, .f = fence(s, 0),
						   .l = list1(RT_LIST_COMPUTE, RT_OP_DISPATCH, 10000) };
			assert_int_equal(pthread_create(&t[i], NULL, component_main, &c[i]), 0);
		}
		for (int i = 0; i < COMPONENTS; i++)
			assert_int_equal(pthread_join(t[i], NULL), 0);
		for (int i = 0; i < COMPONENTS; i++) {
			assert_int_equal(c[i].rc, 0);
			assert_ptr_equal(c[i].q, c[0].q);
			assert_int_equal(rt_fence_wait(c[i].f, COMPONENT_FRAMES, WAIT_NS), 0);
		}
		assert_int_equal(rt_cqueue_finish(c[0].q, WAIT_NS), 0);
		struct rt_cqueue_stats st;
		rt_cqueue_stats(c[0].q, &st);
		assert_int_equal(st.executes, COMPONENTS * COMPONENT_FRAMES);
		assert_int_equal(st.signals, COMPONENTS * COMPONENT_FRAMES);
		assert_int_equal(st.ops[RT_OP_DISPATCH], COMPONENTS * COMPONENT_FRAMES);
		for (int i = 0; i < COMPONENTS; i++)
			rt_clist_destroy(c[i].l);
		pthread_barrier_destroy(&start);
		down(s);
	}
}

/* A list still recording, a bundle, a list of another type, no list: refused
 * at execute with a message, and nothing of the call is submitted. */
static void execute_refuses_bad_lists_before_submitting(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		struct rt_stack *s = up(modes[m].path);
		struct rt_cqueue *q = queue(s, RT_LIST_DIRECT, modes[m].user_mode);
		struct rt_clist *ok = list1(RT_LIST_DIRECT, RT_OP_DRAW, 1000);
		struct rt_clist *rec = NULL, *bundle = list1(RT_LIST_BUNDLE, RT_OP_DRAW, 1000);
		struct rt_clist *compute = list1(RT_LIST_COMPUTE, RT_OP_DISPATCH, 1000);
		assert_int_equal(rt_clist_create(RT_LIST_DIRECT, &rec), 0);
		assert_int_equal(rt_clist_draw(rec, 1000), 0);
		uint64_t before = rt_queue_submitted(rt_cqueue_queue(q));
		struct rt_clist *two[2] = { ok, rec };
		assert_int_equal(rt_cqueue_execute(q, two, 2), -EBUSY);
		assert_non_null(strstr(rt_cqueue_error(q), "list 1 is still recording"));
		two[1] = bundle;
		assert_int_equal(rt_cqueue_execute(q, two, 2), -EINVAL);
		assert_non_null(strstr(rt_cqueue_error(q), "bundle"));
		two[1] = compute;
		assert_int_equal(rt_cqueue_execute(q, two, 2), -EINVAL);
		assert_non_null(strstr(rt_cqueue_error(q), "is a compute list"));
		assert_int_equal(rt_cqueue_execute(q, two, 0), -EINVAL);
		assert_int_equal(rt_queue_submitted(rt_cqueue_queue(q)), before);
		struct rt_cqueue_stats st;
		rt_cqueue_stats(q, &st);
		assert_int_equal(st.executes, 0);
		assert_int_equal(rt_clist_close(rec), 0);
		two[1] = rec;
		assert_int_equal(rt_cqueue_execute(q, two, 2), 0);   /* closed now: accepted */
		assert_int_equal(rt_cqueue_finish(q, WAIT_NS), 0);
		rt_cqueue_stats(q, &st);
		assert_int_equal(st.ops[RT_OP_DRAW], 2);
		rt_clist_destroy(ok);
		rt_clist_destroy(rec);
		rt_clist_destroy(bundle);
		rt_clist_destroy(compute);
		rt_cqueue_destroy(q);
		down(s);
	}
}

/* Close, execute again and again, reset, record anew: each execution runs. */
static void lists_close_reset_and_execute_again(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		struct rt_stack *s = up(modes[m].path);
		struct rt_cqueue *q = queue(s, RT_LIST_DIRECT, modes[m].user_mode);
		struct rt_clist *l = list1(RT_LIST_DIRECT, RT_OP_DRAW, 2 * MS);
		assert_int_equal(rt_clist_draw(l, 1000), -EPERM);          /* closed */
		assert_non_null(strstr(rt_clist_error(l), "closed"));
		assert_int_equal(rt_clist_close(l), -EPERM);               /* closed twice */
		uint64_t b0 = busy(s, 0);
		for (int i = 0; i < 3; i++)
			assert_int_equal(rt_cqueue_execute(q, &l, 1), 0);
		rt_clist_reset(l);                                         /* right after: the queue copied it */
		assert_true(rt_clist_recording(l));
		assert_int_equal(rt_clist_cmds(l), 0);
		assert_int_equal(rt_clist_dispatch(l, 2 * MS), 0);
		assert_int_equal(rt_clist_close(l), 0);
		assert_int_equal(rt_cqueue_execute(q, &l, 1), 0);
		assert_int_equal(rt_cqueue_finish(q, WAIT_NS), 0);
		rt_stack_settle(s);
		assert_true(busy(s, 0) - b0 >= 8 * MS);
		struct rt_cqueue_stats st;
		rt_cqueue_stats(q, &st);
		assert_int_equal(st.executes, 4);
		assert_int_equal(st.ops[RT_OP_DRAW], 3);
		assert_int_equal(st.ops[RT_OP_DISPATCH], 1);
		assert_int_equal(st.work_ns, 8 * MS);
		rt_clist_destroy(l);
		rt_cqueue_destroy(q);
		down(s);
	}
}

/* ExecuteCommandLists of an array longer than one command buffer: every
 * command of every list runs, then the Signal after them. */
static void execute_runs_an_array_of_lists(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		struct rt_stack *s = up(modes[m].path);
		struct rt_cqueue *q = queue(s, RT_LIST_COPY, modes[m].user_mode);
		struct rt_fence *f = fence(s, 0);
		struct rt_clist *l[3];
		for (int i = 0; i < 3; i++) {
			assert_int_equal(rt_clist_create(RT_LIST_COPY, &l[i]), 0);
			assert_int_equal(rt_clist_record(l[i], RT_OP_COPY, 1 * MS, 50), 0);   /* 150 sub-units in 3 commands */
			assert_int_equal(rt_clist_close(l[i]), 0);
		}
		uint64_t b0 = busy(s, 2);
		assert_int_equal(rt_cqueue_execute(q, l, 3), 0);
		assert_int_equal(rt_cqueue_signal(q, f, 1), 0);
		assert_int_equal(rt_fence_wait(f, 1, WAIT_NS), 0);
		rt_stack_settle(s);
		assert_true(busy(s, 2) - b0 >= 3 * MS);
		struct rt_cqueue_stats st;
		rt_cqueue_stats(q, &st);
		assert_int_equal(st.lists, 3);
		assert_int_equal(st.ops[RT_OP_COPY], 150);
		for (int i = 0; i < 3; i++)
			rt_clist_destroy(l[i]);
		rt_cqueue_destroy(q);
		down(s);
	}
}

/* ---- fences ---- */

/* Queue Signal "occurs after all other operations on the command queue have
 * been completed": not before the work executed ahead of it. */
static void queue_signal_comes_after_earlier_work(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		struct rt_stack *s = up(modes[m].path);
		struct rt_cqueue *q = queue(s, RT_LIST_DIRECT, modes[m].user_mode);
		struct rt_fence *f = fence(s, 0);
		struct rt_event *e = event(true);
		struct rt_clist *l = list1(RT_LIST_DIRECT, RT_OP_DRAW, 50 * MS);
		uint64_t b0 = busy(s, 0);
		assert_int_equal(rt_cqueue_execute(q, &l, 1), 0);
		assert_int_equal(rt_cqueue_signal(q, f, 1), 0);
		assert_int_equal(rt_fence_completed(f), 0);           /* the draw is still running */
		assert_int_equal(rt_fence_set_event(f, 1, e), 0);
		assert_int_equal(rt_event_wait(e, WAIT_NS), 0);
		assert_int_equal(rt_fence_completed(f), 1);
		rt_stack_settle(s);
		assert_true(busy(s, 0) - b0 >= 50 * MS);              /* the draw ran before the value landed */
		rt_clist_destroy(l);
		rt_event_destroy(e);
		rt_cqueue_destroy(q);
		down(s);
	}
}

/* Queue Wait holds the queue's later work until the value is reached —
 * signaled by the CPU, or by another queue on another engine. */
static void queue_wait_holds_later_work(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		struct rt_stack *s = up(modes[m].path);
		struct rt_cqueue *direct = queue(s, RT_LIST_DIRECT, modes[m].user_mode);
		struct rt_cqueue *copy = queue(s, RT_LIST_COPY, modes[m].user_mode);
		struct rt_fence *f = fence(s, 0), *g = fence(s, 0);
		assert_int_equal(rt_cqueue_wait(direct, f, 1), 0);
		assert_int_equal(rt_cqueue_signal(direct, g, 1), 0);
		nap(20 * MS);
		assert_int_equal(rt_fence_completed(g), 0);           /* held */
		assert_int_equal(rt_fence_signal(f, 1), 0);
		assert_int_equal(rt_fence_wait(g, 1, WAIT_NS), 0);
		/* engine to engine: copy signals after its copy, direct waits for it */
		struct rt_clist *l = list1(RT_LIST_COPY, RT_OP_COPY, 20 * MS);
		assert_int_equal(rt_cqueue_wait(direct, f, 2), 0);
		assert_int_equal(rt_cqueue_signal(direct, g, 2), 0);
		assert_int_equal(rt_cqueue_execute(copy, &l, 1), 0);
		assert_int_equal(rt_cqueue_signal(copy, f, 2), 0);
		assert_int_equal(rt_fence_completed(g), 1);           /* the copy is still running */
		assert_int_equal(rt_fence_wait(g, 2, WAIT_NS), 0);
		assert_true(rt_fence_completed(f) >= 2);
		rt_clist_destroy(l);
		rt_cqueue_destroy(direct);
		rt_cqueue_destroy(copy);
		down(s);
	}
}

/* CPU Signal "occurs immediately": the value is read back and the events it
 * satisfies are set when the call returns. */
static void cpu_signal_is_immediate(void **state)
{
	(void)state;
	for (int p = 0; p < 2; p++) {
		struct rt_stack *s = up((enum rt_path)p);
		struct rt_fence *f = fence(s, 0);
		struct rt_event *e = event(true);
		assert_int_equal(rt_fence_set_event(f, 7, e), 0);
		assert_false(rt_event_is_set(e));
		assert_int_equal(rt_fence_signal(f, 7), 0);
		assert_int_equal(rt_fence_completed(f), 7);
		assert_true(rt_event_is_set(e));
		rt_event_destroy(e);
		down(s);
	}
}

/* SetEventOnCompletion fires at once when the value was reached. */
static void set_event_fires_at_once_when_reached(void **state)
{
	(void)state;
	for (int p = 0; p < 2; p++) {
		struct rt_stack *s = up((enum rt_path)p);
		struct rt_fence *f = fence(s, 5);
		struct rt_event *at = event(true), *below = event(true), *above = event(true);
		assert_int_equal(rt_fence_set_event(f, 5, at), 0);
		assert_int_equal(rt_fence_set_event(f, 3, below), 0);
		assert_int_equal(rt_fence_set_event(f, 6, above), 0);
		assert_true(rt_event_is_set(at));
		assert_true(rt_event_is_set(below));
		assert_false(rt_event_is_set(above));
		assert_int_equal(rt_fence_set_event(f, 5, NULL), -EINVAL);
		assert_int_equal(rt_fence_signal(f, 6), 0);
		assert_true(rt_event_is_set(above));
		rt_event_destroy(at);
		rt_event_destroy(below);
		rt_event_destroy(above);
		down(s);
	}
}

/* One event on several values: set by each as it is reached. */
static void one_event_waits_for_several_values(void **state)
{
	(void)state;
	for (int p = 0; p < 2; p++) {
		struct rt_stack *s = up((enum rt_path)p);
		struct rt_fence *f = fence(s, 0);
		struct rt_event *e = event(true);
		assert_int_equal(rt_fence_set_event(f, 3, e), 0);
		assert_int_equal(rt_fence_set_event(f, 5, e), 0);
		assert_int_equal(rt_fence_signal(f, 3), 0);
		assert_true(rt_event_is_set(e));
		rt_event_reset(e);
		assert_int_equal(rt_fence_signal(f, 4), 0);
		assert_false(rt_event_is_set(e));
		assert_int_equal(rt_fence_signal(f, 5), 0);
		assert_true(rt_event_is_set(e));
		rt_event_destroy(e);
		down(s);
	}
}

/* Several events on one value: a GPU signal of it sets every one. */
static void several_events_wait_for_one_value(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		struct rt_stack *s = up(modes[m].path);
		struct rt_cqueue *q = queue(s, RT_LIST_COMPUTE, modes[m].user_mode);
		struct rt_fence *f = fence(s, 0);
		struct rt_event *e[8];
		for (int i = 0; i < 8; i++) {
			e[i] = event(false);
			assert_int_equal(rt_fence_set_event(f, 2, e[i]), 0);
		}
		assert_int_equal(rt_cqueue_signal(q, f, 2), 0);
		assert_int_equal(rt_event_wait_multi(e, 8, true, WAIT_NS), 0);
		for (int i = 0; i < 8; i++) {
			assert_false(rt_event_is_set(e[i]));             /* auto-reset: consumed by the wait */
			rt_event_destroy(e[i]);
		}
		rt_cqueue_destroy(q);
		down(s);
	}
}

/* UINT64_MAX is accepted: reached only by UINT64_MAX (device removal). */
static void uint64_max_is_accepted(void **state)
{
	(void)state;
	for (int p = 0; p < 2; p++) {
		struct rt_stack *s = up((enum rt_path)p);
		struct rt_fence *f = fence(s, 0), *g = fence(s, 0);
		struct rt_event *e = event(true), *r = event(true);
		assert_int_equal(rt_fence_set_event(f, UINT64_MAX, e), 0);
		assert_int_equal(rt_fence_signal(f, UINT64_MAX - 1), 0);
		assert_false(rt_event_is_set(e));
		assert_int_equal(rt_fence_signal(f, UINT64_MAX), 0);
		assert_true(rt_event_is_set(e));
		assert_int_equal(rt_fence_set_event(g, UINT64_MAX, r), 0);
		rt_device_terminate(rt_stack_device(s));                /* removal: every fence reads UINT64_MAX */
		assert_int_equal(rt_event_wait(r, WAIT_NS), 0);
		assert_int_equal(rt_fence_completed(g), UINT64_MAX);
		rt_event_destroy(e);
		rt_event_destroy(r);
		rt_stack_destroy(s);
	}
}

/* SetEventOnMultipleFenceCompletion: all, any; at most 64 fences. */
static void multiple_fence_completion_any_and_all(void **state)
{
	(void)state;
	for (int p = 0; p < 2; p++) {
		struct rt_stack *s = up((enum rt_path)p);
		struct rt_fence *f[2] = { fence(s, 0), fence(s, 0) };
		struct rt_event *all = event(true), *any = event(true);
		uint64_t v_all[2] = { 1, 1 }, v_any[2] = { 5, 1 };
		assert_int_equal(rt_fence_set_event_multi(f, v_all, 2, true, all), 0);
		assert_int_equal(rt_fence_set_event_multi(f, v_any, 2, false, any), 0);
		assert_int_equal(rt_fence_signal(f[0], 1), 0);
		assert_false(rt_event_is_set(all));
		assert_false(rt_event_is_set(any));
		assert_int_equal(rt_fence_signal(f[1], 1), 0);
		assert_int_equal(rt_event_wait(all, WAIT_NS), 0);
		assert_int_equal(rt_event_wait(any, WAIT_NS), 0);
		struct rt_fence *many[RT_WAIT_MAX + 1];
		uint64_t vals[RT_WAIT_MAX + 1];
		for (int i = 0; i <= RT_WAIT_MAX; i++)
			many[i] = f[i & 1], vals[i] = 9;
		assert_int_equal(rt_fence_set_event_multi(many, vals, RT_WAIT_MAX + 1, true, all), -E2BIG);
		assert_int_equal(rt_fence_set_event_multi(many, vals, 0, true, all), -EINVAL);
		rt_event_reset(all);
		assert_int_equal(rt_fence_set_event_multi(many, vals, RT_WAIT_MAX, true, all), 0);
		assert_int_equal(rt_fence_signal(f[0], 9), 0);
		assert_false(rt_event_is_set(all));
		assert_int_equal(rt_fence_signal(f[1], 9), 0);
		assert_int_equal(rt_event_wait(all, WAIT_NS), 0);
		rt_event_destroy(all);
		rt_event_destroy(any);
		down(s);
	}
}

/* WaitForMultipleObjects: any (the index; an auto-reset event consumed, a
 * manual one not), all, up to 64, an error beyond; driven by GPU signals. */
static void wait_for_multiple_events(void **state)
{
	(void)state;
	struct rt_event *e[RT_WAIT_MAX + 1];
	for (int i = 0; i <= RT_WAIT_MAX; i++)
		e[i] = event(i == 40);
	assert_int_equal(rt_event_wait_multi(e, RT_WAIT_MAX, false, 1 * MS), -ETIMEDOUT);
	assert_int_equal(rt_event_wait_multi(e, RT_WAIT_MAX + 1, false, 0), -E2BIG);
	assert_int_equal(rt_event_wait_multi(e, 0, false, 0), -EINVAL);
	rt_event_set(e[37]);
	assert_int_equal(rt_event_wait_multi(e, RT_WAIT_MAX, false, WAIT_NS), 37);
	assert_false(rt_event_is_set(e[37]));                      /* auto-reset */
	rt_event_set(e[40]);
	assert_int_equal(rt_event_wait_multi(e, RT_WAIT_MAX, false, WAIT_NS), 40);
	assert_true(rt_event_is_set(e[40]));                       /* manual reset */
	rt_event_reset(e[40]);
	for (int i = 0; i < RT_WAIT_MAX - 1; i++)
		rt_event_set(e[i]);
	assert_int_equal(rt_event_wait_multi(e, RT_WAIT_MAX, true, 1 * MS), -ETIMEDOUT);
	rt_event_set(e[RT_WAIT_MAX - 1]);
	assert_int_equal(rt_event_wait_multi(e, RT_WAIT_MAX, true, WAIT_NS), 0);
	for (int i = 0; i <= RT_WAIT_MAX; i++)
		rt_event_destroy(e[i]);
	for (size_t m = 0; m < NMODES; m++) {
		struct rt_stack *s = up(modes[m].path);
		struct rt_cqueue *q = queue(s, RT_LIST_COPY, modes[m].user_mode);
		struct rt_fence *f[2] = { fence(s, 0), fence(s, 0) };
		struct rt_event *h[2] = { event(false), event(false) };
		assert_int_equal(rt_fence_set_event(f[0], 1, h[0]), 0);
		assert_int_equal(rt_fence_set_event(f[1], 1, h[1]), 0);
		assert_int_equal(rt_cqueue_signal(q, f[1], 1), 0);      /* only the second */
		assert_int_equal(rt_event_wait_multi(h, 2, false, WAIT_NS), 1);
		assert_int_equal(rt_event_wait_multi(h, 2, false, 1 * MS), -ETIMEDOUT);
		rt_cqueue_destroy(q);
		down(s);                                                /* h[0] is still armed on f[0]: */
		rt_event_destroy(h[0]);                                 /* events go after the fences */
		rt_event_destroy(h[1]);
	}
}

/* Rewinding: a lower value may be signaled; waits and events registered
 * after compare against it; one a higher value satisfied stays satisfied. */
static void rewind_compares_new_waits_against_the_lower_value(void **state)
{
	(void)state;
	for (int p = 0; p < 2; p++) {
		struct rt_stack *s = up((enum rt_path)p);
		struct rt_fence *f = fence(s, 0);
		struct rt_event *early = event(true), *late = event(true);
		assert_int_equal(rt_fence_signal(f, 10), 0);
		assert_int_equal(rt_fence_set_event(f, 8, early), 0);
		assert_true(rt_event_is_set(early));
		assert_int_equal(rt_fence_signal(f, 3), 0);              /* rewind */
		assert_int_equal(rt_fence_completed(f), 3);
		assert_true(rt_event_is_set(early));                    /* stays satisfied */
		assert_int_equal(rt_fence_set_event(f, 8, late), 0);
		assert_false(rt_event_is_set(late));                    /* compared against 3 */
		assert_int_equal(rt_fence_wait(f, 8, 1 * MS), -ETIMEDOUT);
		assert_int_equal(rt_fence_signal(f, 8), 0);
		assert_true(rt_event_is_set(late));
		rt_event_destroy(early);
		rt_event_destroy(late);
		down(s);
	}
}

/* Seed multi-engine-synchronization, fences: "If a fence is rewound, any new
 * waits ... will be compared against the new lower fence value".  A queue's
 * Wait too (a GPU wait on the native path, a wait the OS holds on the
 * legacy one): the queue waits for 10 and passes; the fence is rewound to
 * 3; a Wait for 3 passes; a Wait for 8 must hold the queue's later work
 * (its signal of g) until the fence passes 8 again.  True when it held.
 * `fault`: the adapter's (HW_FAULT_WAIT_HIGH_WATER: a native WAIT that
 * compares the highest value its queue read). */
static bool rewind_queue_wait_held(size_t m, enum hw_fault fault)
{
	struct rt_stack_config cfg;
	rt_stack_config_default(&cfg, modes[m].path);
	cfg.os.caps.engines = 3;
	cfg.os.caps.fault = fault;
	struct rt_stack *s = NULL;
	char err[256] = "";
	if (rt_stack_create(&cfg, &s, err, sizeof(err)))
		fail_msg("rt_stack_create: %s", err);
	struct rt_cqueue *q = queue(s, RT_LIST_DIRECT, modes[m].user_mode);
	struct rt_fence *f = fence(s, 0), *g = fence(s, 0);
	assert_int_equal(rt_fence_signal(f, 10), 0);
	assert_int_equal(rt_cqueue_wait(q, f, 10), 0);
	assert_int_equal(rt_cqueue_signal(q, g, 1), 0);
	assert_int_equal(rt_fence_wait(g, 1, WAIT_NS), 0);        /* the queue saw 10 */
	assert_int_equal(rt_fence_signal(f, 3), 0);              /* rewind */
	assert_int_equal(rt_fence_completed(f), 3);
	assert_int_equal(rt_cqueue_wait(q, f, 3), 0);
	assert_int_equal(rt_cqueue_signal(q, g, 2), 0);
	assert_int_equal(rt_fence_wait(g, 2, WAIT_NS), 0);        /* the lower value passes */
	assert_int_equal(rt_cqueue_wait(q, f, 8), 0);            /* registered after the rewind */
	assert_int_equal(rt_cqueue_signal(q, g, 3), 0);
	bool held = rt_fence_wait(g, 3, 20 * MS) == -ETIMEDOUT && rt_fence_completed(g) == 2;
	assert_int_equal(rt_fence_signal(f, 8), 0);
	assert_int_equal(rt_fence_wait(g, 3, WAIT_NS), 0);
	assert_int_equal(rt_cqueue_finish(q, WAIT_NS), 0);
	rt_cqueue_destroy(q);
	down(s);
	return held;
}

static void rewind_then_queue_wait_compares_against_the_lower_value(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		if (!rewind_queue_wait_held(m, HW_FAULT_NONE))
			fail_msg("mode %zu: the work behind a Wait for 8 ran with the fence rewound to 3", m);
		/* broken: the GPU's WAIT compares the 10 it saw before the rewind */
		if (modes[m].path == RT_PATH_NATIVE)
			assert_false(rewind_queue_wait_held(m, HW_FAULT_WAIT_HIGH_WATER));
	}
}

/* The rewinding sequence, as an application meets it: the queue signals 5
 * then 10 and goes idle; GetCompletedValue() reads 10; a CPU Signal(0); it
 * reads 0; a new wait for 1 must time out, though the interrupts of 5 and 10
 * may still be in flight ("any new waits ... will be compared against the new
 * lower fence value").  Blocking waits and events, every mode; a release by
 * a value written before the rewind fails the round (FB_SOAK=1: 100 rounds
 * a mode, the count the reliability runs use). */
static void rewind_then_new_wait_is_not_released_by_older_values(void **state)
{
	(void)state;
	int rounds = fb_soak() ? 100 : 10;
	for (size_t m = 0; m < NMODES; m++) {
		struct rt_stack *s = up(modes[m].path);
		struct rt_cqueue *q = queue(s, RT_LIST_DIRECT, modes[m].user_mode);
		for (int r = 0; r < rounds; r++) {
			struct rt_fence *f = fence(s, 0);
			struct rt_event *e = event(true);
			assert_int_equal(rt_cqueue_signal(q, f, 5), 0);
			assert_int_equal(rt_cqueue_signal(q, f, 10), 0);
			uint64_t end = lf_now_ns() + (uint64_t)WAIT_NS;
			while (rt_fence_completed(f) != 10 && lf_now_ns() < end)
				lf_cpu_relax();                          /* GetCompletedValue() until 10 */
			assert_int_equal(rt_fence_completed(f), 10);
			assert_int_equal(rt_fence_signal(f, 0), 0);
			assert_int_equal(rt_fence_completed(f), 0);
			assert_int_equal(rt_fence_set_event(f, 1, e), 0);
			int rc = rt_fence_wait(f, 1, 20 * MS);
			if (rc != -ETIMEDOUT || rt_event_is_set(e))
				fail_msg("mode %zu round %d: a wait for 1 after the rewind to 0 returned %d, event %s",
					 m, r, rc, rt_event_is_set(e) ? "set" : "not set");
			assert_int_equal(rt_cqueue_finish(q, WAIT_NS), 0);
			assert_int_equal(rt_fence_signal(f, 1), 0);      /* the event goes with its fence */
			rt_event_destroy(e);
			rt_fence_destroy(f);
		}
		rt_cqueue_destroy(q);
		down(s);
	}
}

/* The race: a queue signals 10 while the CPU rewinds to 1; an event waiting
 * for 10 is set whichever value remains.  Rounds on every mode. */
static void rewind_race_keeps_a_satisfied_wait_satisfied(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		struct rt_stack *s = up(modes[m].path);
		struct rt_cqueue *q = queue(s, RT_LIST_DIRECT, modes[m].user_mode);
		unsigned low = 0, high = 0;
		for (int r = 0; r < 20; r++) {
			struct rt_fence *f = fence(s, 0);
			struct rt_event *e = event(true);
			assert_int_equal(rt_fence_set_event(f, 10, e), 0);
			assert_int_equal(rt_cqueue_signal(q, f, 10), 0);
			if (r & 1)
				nap(100000);
			assert_int_equal(rt_fence_signal(f, 1), 0);
			int wrc = rt_event_wait(e, WAIT_NS);                /* never lost */
			if (wrc)
				fail_msg("mode %zu round %d: the event for 10 was not set (%d); the fence reads %llu",
					 m, r, wrc, (unsigned long long)rt_fence_completed(f));
			int frc = rt_cqueue_finish(q, WAIT_NS);
			if (frc)
				fail_msg("mode %zu round %d: finish %d (progress %llu of %llu)", m, r, frc,
					 (unsigned long long)rt_queue_completed(rt_cqueue_queue(q)),
					 (unsigned long long)rt_queue_submitted(rt_cqueue_queue(q)));
			uint64_t v = rt_fence_completed(f);
			assert_true(v == 1 || v == 10);
			v == 1 ? low++ : high++;
			rt_event_destroy(e);
		}
		printf("[ INFO     ] %s/%s: rewind race remained 1: %u, 10: %u\n",
		       modes[m].path == RT_PATH_NATIVE ? "native" : "legacy", modes[m].user_mode ? "um" : "km", low, high);
		rt_cqueue_destroy(q);
		down(s);
	}
}

/* A fence destroyed under an event wait: the event is set, nobody hangs;
 * then every use of the destroyed fence gets -EIDRM. */
static void destroyed_fence_never_leaves_an_event_waiting(void **state)
{
	(void)state;
	for (int p = 0; p < 2; p++) {
		struct rt_stack *s = up((enum rt_path)p);
		struct rt_fence *f = fence(s, 0);
		struct rt_event *e = event(true);
		assert_int_equal(rt_fence_set_event(f, 5, e), 0);
		rt_fence_destroy(f);
		assert_int_equal(rt_event_wait(e, WAIT_NS), 0);
		/* every later use of the handle is refused, none waits (under ASan:
		 * none touches freed memory) */
		struct rt_cqueue *q = queue(s, RT_LIST_DIRECT, false);
		struct rt_event *e2 = event(true);
		uint64_t v5 = 5;
		assert_true(rt_fence_destroyed(f));
		assert_int_equal(rt_fence_wait(f, 5, WAIT_NS), -EIDRM);
		assert_int_equal(rt_fence_signal(f, 5), -EIDRM);
		assert_int_equal(rt_fence_set_event(f, 5, e2), -EIDRM);
		assert_int_equal(rt_fence_set_event_multi(&f, &v5, 1, true, e2), -EIDRM);
		assert_int_equal(rt_cqueue_signal(q, f, 5), -EIDRM);
		assert_int_equal(rt_cqueue_wait(q, f, 5), -EIDRM);
		assert_int_equal(rt_fence_completed(f), UINT64_MAX);
		assert_false(rt_event_is_set(e2));
		rt_fence_destroy(f);                      /* twice: nothing */
		assert_int_equal(rt_cqueue_finish(q, WAIT_NS), 0);
		rt_cqueue_destroy(q);
		rt_event_destroy(e2);
		rt_event_destroy(e);
		down(s);
	}
}

/* Priorities reach the engine: with a triangle-boundary 3D engine, a HIGH
 * direct queue's short draw completes while a NORMAL queue's long draw is
 * still running (it was preempted); two NORMAL queues take turns, so the
 * same short draw waits for the long one to end. */
static uint64_t priority_low_done_when_high_done(enum rt_priority hi_prio, uint64_t *preemptions)
{
	struct rt_stack_config cfg;
	rt_stack_config_default(&cfg, RT_PATH_NATIVE);
	cfg.os.caps.engines = 3;
	cfg.os.caps.gfx_preempt = HW_GFX_PREEMPT_TRIANGLE_BOUNDARY;
	struct rt_stack *s = NULL;
	char err[256] = "";
	if (rt_stack_create(&cfg, &s, err, sizeof(err)))
		fail_msg("rt_stack_create: %s", err);
	struct rt_cqueue_desc dl = { .type = RT_LIST_DIRECT }, dh = { .type = RT_LIST_DIRECT, .priority = hi_prio };
	struct rt_cqueue *lo, *hi;
	assert_int_equal(rt_cqueue_create(rt_stack_device(s), &dl, &lo), 0);
	assert_int_equal(rt_cqueue_create(rt_stack_device(s), &dh, &hi), 0);
	assert_int_equal(rt_cqueue_priority(hi), hi_prio);
	struct rt_clist *long_draw = NULL, *short_draw = list1(RT_LIST_DIRECT, RT_OP_DRAW, 100000);
	assert_int_equal(rt_clist_create(RT_LIST_DIRECT, &long_draw), 0);
	assert_int_equal(rt_clist_record(long_draw, RT_OP_DRAW, 300 * MS, 300), 0);
	assert_int_equal(rt_clist_close(long_draw), 0);
	struct rt_fence *fs = fence(s, 0), *fl = fence(s, 0), *fh = fence(s, 0);
	unsigned e3d = rt_cqueue_engine(lo);
	assert_int_equal(rt_cqueue_signal(lo, fs, 1), 0);
	assert_int_equal(rt_cqueue_execute(lo, &long_draw, 1), 0);
	assert_int_equal(rt_cqueue_signal(lo, fl, 1), 0);
	assert_int_equal(rt_fence_wait(fs, 1, WAIT_NS), 0);   /* the long draw is next */
	nap(20 * MS);                                          /* and well under way */
	assert_int_equal(rt_cqueue_execute(hi, &short_draw, 1), 0);
	assert_int_equal(rt_cqueue_signal(hi, fh, 1), 0);
	assert_int_equal(rt_fence_wait(fh, 1, WAIT_NS), 0);
	uint64_t low_done = rt_fence_completed(fl);
	assert_int_equal(rt_fence_wait(fl, 1, WAIT_NS), 0);
	struct hw_engine_preempt_stats st;
	rt_stack_engine_preempt_stats(s, e3d, &st);
	*preemptions = st.preemptions;
	assert_int_equal(rt_cqueue_finish(lo, WAIT_NS), 0);
	assert_int_equal(rt_cqueue_finish(hi, WAIT_NS), 0);
	rt_clist_destroy(long_draw);
	rt_clist_destroy(short_draw);
	rt_cqueue_destroy(lo);
	rt_cqueue_destroy(hi);
	down(s);
	return low_done;
}

static void queue_priority_preempts_lower_work(void **state)
{
	(void)state;
	uint64_t preemptions = 0;
	assert_int_equal(priority_low_done_when_high_done(RT_PRIORITY_HIGH, &preemptions), 0);
	assert_true(preemptions >= 1);
	assert_int_equal(priority_low_done_when_high_done(RT_PRIORITY_NORMAL, &preemptions), 1);
	assert_int_equal(preemptions, 0);
}


/* Seed multi-engine-synchronization, "Multi-engine scenarios": "High
 * priority compute work.  With background compute it is possible to
 * interrupt 3D rendering to do a small amount of high priority compute
 * work."  On an adapter whose compute queue shares the 3D engine (one
 * engine: rt_engine_for_type folds compute onto it), a HIGH compute
 * queue's dispatch completes while a NORMAL direct queue's long draw is
 * still running: the engine left the draw at a triangle boundary for it.
 * The same dispatch at NORMAL priority takes its turn after the draw.
 * The draw is the second of two lists around the signal the CPU waits for,
 * so that the draw runs when the dispatch arrives (the engine goes on to
 * it at once; the CPU learns of the signal only through its wait). */
static uint64_t shared_engine_draw_done_when_compute_done(enum rt_path path, enum rt_priority cprio,
							   uint64_t *preemptions)
{
	struct rt_stack_config cfg;
	rt_stack_config_default(&cfg, path);
	cfg.os.caps.engines = 1;
	cfg.os.caps.gfx_preempt = HW_GFX_PREEMPT_TRIANGLE_BOUNDARY;
	struct rt_stack *s = NULL;
	char err[256] = "";
	if (rt_stack_create(&cfg, &s, err, sizeof(err)))
		fail_msg("rt_stack_create: %s", err);
	struct rt_cqueue_desc dd = { .type = RT_LIST_DIRECT }, dc = { .type = RT_LIST_COMPUTE, .priority = cprio };
	struct rt_cqueue *gfx, *comp;
	assert_int_equal(rt_cqueue_create(rt_stack_device(s), &dd, &gfx), 0);
	assert_int_equal(rt_cqueue_create(rt_stack_device(s), &dc, &comp), 0);
	assert_int_equal(rt_cqueue_engine(comp), rt_cqueue_engine(gfx));   /* compute shares the 3D engine */
	struct rt_clist *first = list1(RT_LIST_DIRECT, RT_OP_DRAW, 100000), *draw = NULL;
	struct rt_clist *dispatch = list1(RT_LIST_COMPUTE, RT_OP_DISPATCH, 100000);
	assert_int_equal(rt_clist_create(RT_LIST_DIRECT, &draw), 0);
	assert_int_equal(rt_clist_record(draw, RT_OP_DRAW, 300 * MS, 300), 0);
	assert_int_equal(rt_clist_close(draw), 0);
	struct rt_fence *fs = fence(s, 0), *fd = fence(s, 0), *fc = fence(s, 0);
	assert_int_equal(rt_cqueue_execute(gfx, &first, 1), 0);
	assert_int_equal(rt_cqueue_signal(gfx, fs, 1), 0);
	assert_int_equal(rt_cqueue_execute(gfx, &draw, 1), 0);
	assert_int_equal(rt_cqueue_signal(gfx, fd, 1), 0);
	assert_int_equal(rt_fence_wait(fs, 1, WAIT_NS), 0);   /* the long draw runs */
	assert_int_equal(rt_cqueue_execute(comp, &dispatch, 1), 0);
	assert_int_equal(rt_cqueue_signal(comp, fc, 1), 0);
	assert_int_equal(rt_fence_wait(fc, 1, WAIT_NS), 0);
	uint64_t draw_done = rt_fence_completed(fd);
	assert_int_equal(rt_fence_wait(fd, 1, WAIT_NS), 0);
	struct hw_engine_preempt_stats st;
	rt_stack_engine_preempt_stats(s, rt_cqueue_engine(gfx), &st);
	*preemptions = st.preemptions;
	assert_int_equal(rt_cqueue_finish(gfx, WAIT_NS), 0);
	assert_int_equal(rt_cqueue_finish(comp, WAIT_NS), 0);
	rt_clist_destroy(first);
	rt_clist_destroy(draw);
	rt_clist_destroy(dispatch);
	rt_cqueue_destroy(gfx);
	rt_cqueue_destroy(comp);
	down(s);
	return draw_done;
}

static void high_priority_compute_interrupts_3d_on_a_shared_engine(void **state)
{
	(void)state;
	for (int p = 0; p < 2; p++) {
		uint64_t preemptions = 0;
		assert_int_equal(shared_engine_draw_done_when_compute_done((enum rt_path)p, RT_PRIORITY_HIGH,
									   &preemptions), 0);
		assert_true(preemptions >= 1);
		assert_int_equal(shared_engine_draw_done_when_compute_done((enum rt_path)p, RT_PRIORITY_NORMAL,
									   &preemptions), 1);
		assert_int_equal(preemptions, 0);
	}
}

/* Seed multi-engine-synchronization, "Copy and compute command lists":
 * "Bundles cannot be used with compute or copy command lists or queues"
 * (and "bundles are not consumed by any queues").  A direct list executes a
 * closed bundle (ExecuteBundle), as often as it likes, and its work runs
 * with the list's; a compute list, a copy list and a bundle refuse to
 * execute one, a queue refuses a bundle, and a refusal records nothing. */
static void bundles_cannot_be_used_with_compute_or_copy_command_lists(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		struct rt_stack *s = up(modes[m].path);
		struct rt_cqueue *q = queue(s, RT_LIST_DIRECT, modes[m].user_mode);
		struct rt_clist *bundle = NULL, *direct = NULL, *open = NULL;
		assert_int_equal(rt_clist_create_pso(RT_LIST_BUNDLE, &graphics_pso, &bundle), 0);
		assert_int_equal(rt_clist_draw(bundle, 100000), 0);
		assert_int_equal(rt_clist_dispatch(bundle, 100000), 0);
		assert_int_equal(rt_clist_create(RT_LIST_DIRECT, &direct), 0);
		assert_int_equal(rt_clist_execute_bundle(direct, bundle), -EBUSY);   /* still recording */
		assert_non_null(strstr(rt_clist_error(direct), "still recording"));
		assert_int_equal(rt_clist_close(bundle), 0);
		/* a direct list executes it, twice */
		assert_int_equal(rt_clist_draw(direct, 100000), 0);
		assert_int_equal(rt_clist_execute_bundle(direct, bundle), 0);
		assert_int_equal(rt_clist_execute_bundle(direct, bundle), 0);
		assert_int_equal(rt_clist_cmds(direct), 5);
		assert_int_equal(rt_clist_work_ns(direct), 500000);
		/* compute and copy lists, and bundles, refuse it */
		struct rt_clist *compute = list1(RT_LIST_COMPUTE, RT_OP_DISPATCH, 1000);
		struct rt_clist *copy = list1(RT_LIST_COPY, RT_OP_COPY, 1000);
		rt_clist_reset(compute);
		assert_int_equal(rt_clist_set_pipeline_state(compute, &compute_pso), 0);
		rt_clist_reset(copy);
		assert_int_equal(rt_clist_execute_bundle(compute, bundle), -EINVAL);
		assert_non_null(strstr(rt_clist_error(compute), "bundles cannot be used with compute command lists"));
		assert_int_equal(rt_clist_execute_bundle(copy, bundle), -EINVAL);
		assert_non_null(strstr(rt_clist_error(copy), "bundles cannot be used with copy command lists"));
		assert_int_equal(rt_clist_create_pso(RT_LIST_BUNDLE, &graphics_pso, &open), 0);
		assert_int_equal(rt_clist_execute_bundle(open, bundle), -EINVAL);
		assert_int_equal(rt_clist_cmds(compute) + rt_clist_cmds(copy) + rt_clist_cmds(open), 0);
		assert_int_equal(rt_clist_execute_bundle(direct, direct), -EINVAL);   /* not a bundle */
		/* no queue consumes a bundle */
		assert_int_equal(rt_cqueue_execute(q, &bundle, 1), -EINVAL);
		assert_non_null(strstr(rt_cqueue_error(q), "bundle"));
		/* the direct list's work, the bundle's included, runs on the 3D engine */
		assert_int_equal(rt_clist_close(direct), 0);
		assert_int_equal(rt_clist_execute_bundle(direct, bundle), -EPERM);   /* closed */
		uint64_t b0 = busy(s, rt_cqueue_engine(q));
		assert_int_equal(rt_cqueue_execute(q, &direct, 1), 0);
		assert_int_equal(rt_cqueue_finish(q, WAIT_NS), 0);
		struct rt_cqueue_stats st;
		rt_cqueue_stats(q, &st);
		assert_int_equal(st.ops[RT_OP_DRAW], 3);
		assert_int_equal(st.ops[RT_OP_DISPATCH], 2);
		rt_stack_settle(s);                       /* the engine's busy time counted */
		assert_true(busy(s, rt_cqueue_engine(q)) - b0 >= 500000);
		rt_clist_destroy(bundle);
		rt_clist_destroy(direct);
		rt_clist_destroy(open);
		rt_clist_destroy(compute);
		rt_clist_destroy(copy);
		rt_cqueue_destroy(q);
		down(s);
	}
}

FB_TEST_MAIN(cmocka_unit_test(queue_types_run_on_their_engines), cmocka_unit_test(several_queues_share_an_engine),
	     cmocka_unit_test(submission_path_follows_the_fences),
	     cmocka_unit_test(lists_refuse_what_their_type_cannot_hold),
	     cmocka_unit_test(compute_lists_must_set_a_compute_pso),
	     cmocka_unit_test(execute_refuses_bad_lists_before_submitting),
	     cmocka_unit_test(lists_close_reset_and_execute_again), cmocka_unit_test(execute_runs_an_array_of_lists),
	     cmocka_unit_test(queue_signal_comes_after_earlier_work), cmocka_unit_test(queue_wait_holds_later_work),
	     cmocka_unit_test(cpu_signal_is_immediate), cmocka_unit_test(set_event_fires_at_once_when_reached),
	     cmocka_unit_test(one_event_waits_for_several_values),
	     cmocka_unit_test(several_events_wait_for_one_value), cmocka_unit_test(uint64_max_is_accepted),
	     cmocka_unit_test(multiple_fence_completion_any_and_all), cmocka_unit_test(wait_for_multiple_events),
	     cmocka_unit_test(rewind_compares_new_waits_against_the_lower_value),
	     cmocka_unit_test(rewind_then_queue_wait_compares_against_the_lower_value),
	     cmocka_unit_test(rewind_race_keeps_a_satisfied_wait_satisfied),
	     cmocka_unit_test(rewind_then_new_wait_is_not_released_by_older_values),
	     cmocka_unit_test(destroyed_fence_never_leaves_an_event_waiting),
	     cmocka_unit_test(queue_priority_preempts_lower_work),
	     cmocka_unit_test(high_priority_compute_interrupts_3d_on_a_shared_engine),
	     cmocka_unit_test(bundles_cannot_be_used_with_compute_or_copy_command_lists),
	     cmocka_unit_test(default_queues_allow_shared_usage_by_other_components),
	     cmocka_unit_test(default_queue_is_shared_by_components_on_several_threads))
