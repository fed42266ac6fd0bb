/* tests/test_trace.c — the timeline trace (`fencebench run ... --trace FILE`).
 *
 * A short workload on user-mode queues (engine A signals, engine B waits on
 * the GPU, the application CPU-waits) is traced through the model
 * (rt_stack_trace_*), copied into the harness's sink (benchmarks/trace_rig.c)
 * and rendered; the file is then checked against the Chrome Trace Event
 * Format's rules and the timeline's own: valid JSON, every event with name,
 * ph, ts, pid, tid (dur for "X"), times monotonic per track, every flow with
 * both ends, each end inside a span of its track, and GPU and CPU times on
 * one clock (a signal's converted GPU time lies between its FENCE_SIGNAL_QUEUED
 * and the end of the CPU wait it released).  Broken variants: flows written
 * without their end, GPU timestamps not converted; each is caught.  With
 * tracing the logs are enlarged first, and an overrun shows as "lost N"
 * with every entry accounted for.  Last, `fencebench run isr-scaling --trace`.
 */
#include "tests/fb_test.h"
#include "tests/fb_test_exec.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "benchmarks/trace_rig.h"
#include "gpu-model/os/ums.h"
#include "gpu-model/runtime/stack.h"
#include "src/fb_trace.h"

static char fencebench[PATH_MAX + 16];
static char tmpdir[] = "/tmp/fb_test_trace.XXXXXX";

#define WAIT_NS 5000000000ll
#define EPS_US 1e-3            /* 1 ns: the file's times are microseconds as doubles */

/* ---- the checker: the format's rules and the timeline's, as counts ---- */

struct trace_check {
	bool valid_json;
	size_t events, missing_fields, bad_dur, nonmonotonic;
	size_t flow_starts, flow_ends, flows_unpaired, flow_ends_unbound;
	size_t flows_checked, flows_bad;     /* signal -> wait: same fence, value >= the wait's, start <= end */
	size_t flows_native, flows_legacy;   /* flow starts in each path's track groups */
	size_t clock_checked, clock_bad;
	size_t signals, waits_unblocked, cpu_waits, queued, isr, dpc, lost_instants;
	uint64_t lost_total;
};

struct ev {
	const char *name, *ph;
	double ts, dur;
	long long track, id;
	json_t *args;
};

/* A track: its tid (the writer numbers tracks across the file, in the order
 * the events are written: fb_trace.c). */
static long long track_of(json_t *e)
{
	return json_integer_value(json_object_get(e, "tid"));
}

static uint64_t arg_u(const struct ev *e, const char *key)
{
	return (uint64_t)json_integer_value(json_object_get(e->args, key));
}

/* The fields every event needs; false (counted) when one is missing. */
static bool fields_ok(json_t *e, struct trace_check *c)
{
	const char *need[] = { "name", "ph", "ts", "pid", "tid" };
	for (size_t k = 0; k < 5; k++)
		if (!json_object_get(e, need[k])) {
			c->missing_fields++;
			return false;
		}
	if (!json_is_string(json_object_get(e, "name")) || !json_is_string(json_object_get(e, "ph")) ||
	    !json_is_number(json_object_get(e, "ts"))) {
		c->missing_fields++;
		return false;
	}
	return true;
}

/* Per-track times never go back (the file's order). */
static void check_monotonic(const struct ev *v, size_t n, struct trace_check *c)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = i; j-- > 0;)
			if (v[j].track == v[i].track) {
				c->nonmonotonic += v[i].ts + EPS_US < v[j].ts;
				break;
			}
}

/* The "X" of e's track enclosing e's time that started last (the innermost
 * of nested spans), or NULL.  v is in the file's order: track by track, in
 * time order on each. */
static const struct ev *enclosing(const struct ev *v, size_t n, const struct ev *e)
{
	size_t lo = 0, hi = n;           /* the first event of e's track after e's time */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].track < e->track || (v[mid].track == e->track && v[mid].ts <= e->ts + EPS_US))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t j = lo; j-- > 0 && v[j].track == e->track;)
		if (!strcmp(v[j].ph, "X") && e->ts <= v[j].ts + v[j].dur + EPS_US)
			return &v[j];
	return NULL;
}

static bool has_fence(const struct ev *e)
{
	return e && json_is_integer(json_object_get(e->args, "fence")) && json_is_integer(json_object_get(e->args, "value"));
}

/* Each flow id: one "s" and one "f"; each end inside an "X" of its track;
 * the spans it joins of one fence, the first's value reaching the second's,
 * the start not after the end. */
static void check_flows(const struct ev *v, size_t n, struct trace_check *c)
{
	long long most = 0;
	for (size_t i = 0; i < n; i++)
		most = v[i].id > most ? v[i].id : most;
	const struct ev **st = calloc((size_t)most + 1, sizeof(*st)), **fi = calloc((size_t)most + 1, sizeof(*fi));
	size_t *nends = calloc((size_t)most + 1, sizeof(*nends));
	for (size_t i = 0; i < n; i++) {
		bool s = !strcmp(v[i].ph, "s"), f = !strcmp(v[i].ph, "f");
		if (!s && !f)
			continue;
		c->flow_starts += s;
		c->flow_ends += f;
		nends[v[i].id]++;
		*(s ? &st[v[i].id] : &fi[v[i].id]) = &v[i];
		c->flow_ends_unbound += !enclosing(v, n, &v[i]);
	}
	for (long long id = 1; id <= most; id++) {
		if (!nends[id])
			continue;
		c->flows_unpaired += nends[id] != 2 || !st[id] || !fi[id];
		if (!st[id] || !fi[id])
			continue;
		const struct ev *from = enclosing(v, n, st[id]), *to = enclosing(v, n, fi[id]);
		c->flows_checked++;
		c->flows_bad += !has_fence(from) || !has_fence(to) || arg_u(from, "fence") != arg_u(to, "fence") ||
				arg_u(from, "value") < arg_u(to, "value") || st[id]->ts > fi[id]->ts + EPS_US;
	}
	free(st);
	free(fi);
	free(nends);
}

/* Events by (fence, value), for the clock check. */
static int by_fence_cmp(const void *pa, const void *pb)
{
	const struct ev *a = *(const struct ev *const *)pa, *b = *(const struct ev *const *)pb;
	uint64_t fa = arg_u(a, "fence"), fb = arg_u(b, "fence"), va = arg_u(a, "value"), vb = arg_u(b, "value");
	return fa != fb ? (fa < fb ? -1 : 1) : va != vb ? (va < vb ? -1 : 1) : 0;
}

static const struct ev *find_fence(const struct ev **s, size_t n, const struct ev *key)
{
	const struct ev **hit = bsearch(&key, s, n, sizeof(*s), by_fence_cmp);
	return hit ? *hit : NULL;
}

/* One clock: FENCE_SIGNAL_QUEUED <= SIGNAL_EXECUTED <= end of the CPU wait it released. */
static void check_clock(const struct ev *v, size_t n, struct trace_check *c)
{
	const struct ev **q = calloc(n ? n : 1, sizeof(*q)), **w = calloc(n ? n : 1, sizeof(*w));
	size_t nq = 0, nw = 0;
	for (size_t j = 0; j < n; j++) {
		if (!strcmp(v[j].name, "FENCE_SIGNAL_QUEUED"))
			q[nq++] = &v[j];
		else if (!strcmp(v[j].name, "CPU wait") && arg_u(&v[j], "result") == 0)
			w[nw++] = &v[j];
	}
	qsort(q, nq, sizeof(*q), by_fence_cmp);
	qsort(w, nw, sizeof(*w), by_fence_cmp);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(v[i].name, "SIGNAL_EXECUTED"))
			continue;
		const struct ev *qe = find_fence(q, nq, &v[i]), *we = find_fence(w, nw, &v[i]);
		if (!qe || !we)
			continue;
		c->clock_checked++;
		c->clock_bad += !(qe->ts <= v[i].ts + EPS_US && v[i].ts <= we->ts + we->dur + EPS_US);
	}
	free(q);
	free(w);
}

static void count_kinds(const struct ev *e, struct trace_check *c)
{
	c->signals += !strcmp(e->name, "SIGNAL_EXECUTED");
	c->waits_unblocked += !strcmp(e->name, "WAIT_UNBLOCKED");
	c->cpu_waits += !strcmp(e->name, "CPU wait");
	c->queued += !strcmp(e->name, "FENCE_SIGNAL_QUEUED") || !strcmp(e->name, "FENCE_WAIT_QUEUED");
	c->isr += !strcmp(e->name, "ISR");
	c->dpc += !strcmp(e->name, "DPC");
	if (!strncmp(e->name, "lost ", 5) && !strcmp(e->ph, "i")) {
		c->lost_instants++;
		c->lost_total += arg_u(e, "entries");
		assert_int_equal(strtoull(e->name + 5, NULL, 10), arg_u(e, "entries"));   /* "lost N" says N */
	}
}

static struct trace_check check_trace(const char *text)
{
	struct trace_check c = { 0 };
	json_error_t jerr;
	json_t *root = json_loads(text, 0, &jerr);
	json_t *evs = root ? json_object_get(root, "traceEvents") : NULL;
	c.valid_json = root && json_is_array(evs);
	if (!c.valid_json) {
		json_decref(root);
		return c;
	}
	size_t n = json_array_size(evs), m = 0;
	struct ev *v = calloc(n ? n : 1, sizeof(*v));
	json_t *groups = json_object();     /* pid -> process name */
	for (size_t i = 0; i < n; i++) {
		json_t *e = json_array_get(evs, i);
		c.events++;
		if (!fields_ok(e, &c))
			continue;
		struct ev x = {
			.name = json_string_value(json_object_get(e, "name")),
			.ph = json_string_value(json_object_get(e, "ph")),
			.ts = json_number_value(json_object_get(e, "ts")), .track = track_of(e),
			.id = json_integer_value(json_object_get(e, "id")), .args = json_object_get(e, "args"),
		};
		if (!strcmp(x.ph, "X")) {
			json_t *d = json_object_get(e, "dur");
			c.bad_dur += !json_is_number(d) || json_number_value(d) < 0;
			x.dur = json_number_value(d);
		}
		count_kinds(&x, &c);
		char pid[32];
		snprintf(pid, sizeof(pid), "%lld", json_integer_value(json_object_get(e, "pid")));
		if (!strcmp(x.name, "process_name"))
			json_object_set(groups, pid, json_object_get(json_object_get(e, "args"), "name"));
		const char *group = json_string_value(json_object_get(groups, pid));
		if (!strcmp(x.ph, "s") && group) {
			c.flows_native += !strncmp(group, "native", 6);
			c.flows_legacy += !strncmp(group, "legacy", 6);
		}
		if (strcmp(x.ph, "M"))          /* metadata lead the file; the rest is in track order */
			v[m++] = x;
	}
	check_monotonic(v, m, &c);
	check_flows(v, m, &c);
	check_clock(v, m, &c);
	json_decref(groups);
	free(v);
	json_decref(root);
	return c;
}

/* Everything the format and the timeline require. */
static void assert_trace_ok(const struct trace_check *c)
{
	assert_true(c->valid_json);
	assert_true(c->events > 0);
	assert_int_equal(c->missing_fields, 0);
	assert_int_equal(c->bad_dur, 0);
	assert_int_equal(c->nonmonotonic, 0);
	assert_int_equal(c->flows_unpaired, 0);
	assert_int_equal(c->flow_ends_unbound, 0);
	assert_int_equal(c->flow_starts, c->flow_ends);
	assert_int_equal(c->flows_checked, c->flow_starts);
	assert_int_equal(c->flows_bad, 0);
	assert_int_equal(c->clock_bad, 0);
}

/* ---- the traced workload ---- */

struct traced {
	struct rig_trace_counts counts;
	char *text;
	unsigned rounds;
};

/* Rounds of: B waits on the GPU for f >= i then signals g = i; A works 20 us
 * and signals f = i; the application CPU-waits for f >= i and g >= i. */
static struct traced trace_workload(unsigned rounds, enum rig_trace_broken broken, enum fb_trace_broken tbroken)
{
	struct rt_stack_config cfg;
	struct rt_stack *s;
	char err[256];
	rt_stack_config_default(&cfg, RT_PATH_NATIVE);
	cfg.os.caps.engines = 2;
	assert_int_equal(rt_stack_create(&cfg, &s, err, sizeof(err)), 0);
	struct rt_device *d = rt_stack_device(s);
	struct rt_queue *qa, *qb;
	struct rt_fence *f, *g;
	assert_int_equal(rt_queue_create(d, &(struct rt_queue_desc){ .engine = 0, .user_mode = true }, &qa), 0);
	assert_int_equal(rt_queue_create(d, &(struct rt_queue_desc){ .engine = 1, .user_mode = true }, &qb), 0);
	assert_int_equal(rt_fence_create(d, 0, &f), 0);
	assert_int_equal(rt_fence_create(d, 0, &g), 0);
	assert_int_equal(rt_stack_trace_start(s, 0), 0);
	assert_int_equal(rt_stack_trace_start(s, 0), -EALREADY);
	for (uint64_t i = 1; i <= rounds; i++) {
		assert_int_equal(rt_queue_wait_gpu(qb, f, i), 0);
		assert_int_equal(rt_queue_signal(qb, g, i), 0);
		struct hw_cmd cmds[2] = { { .op = HW_CMD_WORK, .arg = 20000 }, rt_cmd_signal(f, i) };
		assert_int_equal(rt_queue_submit(qa, cmds, 2, NULL), 0);
		assert_int_equal(rt_fence_wait(f, i, WAIT_NS), 0);
		assert_int_equal(rt_fence_wait(g, i, WAIT_NS), 0);
	}
	struct fb_trace *t = fb_trace_new();
	fb_trace_test_break(t, tbroken);
	struct traced r = { .rounds = rounds };
	assert_int_equal(rig_trace_copy(s, t, "native", broken, &r.counts), 0);
	assert_int_equal(rt_stack_destroy(s), 0);
	r.text = fb_trace_render(t);
	fb_trace_free(t);
	return r;
}

/* The trace of a short run passes every rule, and holds what happened:
 * every signal and wait logged, each round's three flows (A's signal to B's
 * GPU wait and to the CPU wait on f, B's signal to the CPU wait on g). */
static void trace_of_a_short_run_follows_the_format(void **state)
{
	struct traced r = trace_workload(20, RIG_TRACE_OK, FB_TRACE_OK);
	const char *dump = getenv("FB_TRACE_DUMP");   /* FB_TRACE_DUMP=FILE: keep it to look at */
	FILE *fp = dump ? fopen(dump, "w") : NULL;
	if (fp) {
		fputs(r.text, fp);
		fclose(fp);
	}
	struct trace_check c = check_trace(r.text);
	assert_trace_ok(&c);
	assert_int_equal(r.counts.dropped, 0);
	assert_int_equal(r.counts.lost, 0);
	assert_int_equal(c.lost_instants, 0);
	/* f and g: one signal each per round, plus the progress writes (one per submission) */
	assert_true(c.signals >= 2 * r.rounds);
	assert_int_equal(c.signals, r.counts.log_signals);
	assert_int_equal(c.waits_unblocked, r.rounds);
	assert_int_equal(c.cpu_waits, 2 * r.rounds);
	assert_true(c.queued >= 3 * r.rounds);          /* each signal and wait the runtime recorded */
	assert_true(c.isr >= 1 && c.isr == c.dpc);      /* CPU waits that blocked took an interrupt */
	assert_true(c.flow_starts >= 3 * r.rounds);
	assert_int_equal(c.flow_starts, r.counts.flows);
	assert_true(c.clock_checked >= 2 * r.rounds);   /* f and g of every round */
	free(r.text);
}

/* Broken on purpose: arrows without their end. */
static void broken_flows_without_end_are_caught(void **state)
{
	struct traced r = trace_workload(5, RIG_TRACE_OK, FB_TRACE_BROKEN_FLOW_END);
	struct trace_check c = check_trace(r.text);
	assert_true(c.valid_json);
	assert_true(c.flow_starts >= 15);
	assert_int_equal(c.flow_ends, 0);
	assert_int_equal(c.flows_unpaired, c.flow_starts);   /* every one of them */
	free(r.text);
}

/* Broken on purpose: GPU timestamps left on the GPU's own clock. */
static void broken_unconverted_gpu_times_are_caught(void **state)
{
	struct traced r = trace_workload(5, RIG_TRACE_BROKEN_RAW_GPU_TS, FB_TRACE_OK);
	struct trace_check c = check_trace(r.text);
	assert_true(c.valid_json);
	assert_true(c.clock_checked >= 10);
	assert_int_equal(c.clock_bad, c.clock_checked);      /* every signal off the CPU's timeline */
	free(r.text);
}

/* Broken on purpose: a wait's arrow from a signal of another fence. */
static void broken_flows_from_the_wrong_fence_are_caught(void **state)
{
	struct traced r = trace_workload(5, RIG_TRACE_BROKEN_WRONG_FENCE, FB_TRACE_OK);
	struct trace_check c = check_trace(r.text);
	assert_true(c.valid_json);
	assert_int_equal(c.flows_unpaired, 0);          /* well-formed arrows ... */
	assert_true(c.flows_bad >= 3 * r.rounds);       /* ... between the wrong spans: each round's three waits */
	free(r.text);
}

/* Tracing first enlarges an existing user-mode queue's logs (recreated:
 * SetNativeFenceLogBuffer again) and gives new queues the larger size; an
 * overrun still happens when enough signals go unread, and shows as "lost N"
 * instants: every entry the engine wrote is in the trace or counted lost. */
static void tracing_enlarges_logs_and_flags_lost_entries(void **state)
{
	struct rt_stack_config cfg;
	struct rt_stack *s;
	char err[256];
	rt_stack_config_default(&cfg, RT_PATH_NATIVE);
	assert_int_equal(rt_stack_create(&cfg, &s, err, sizeof(err)), 0);
	struct rt_device *d = rt_stack_device(s);
	struct rt_queue *q, *q2;
	struct rt_fence *f;
	assert_int_equal(rt_queue_create(d, &(struct rt_queue_desc){ .engine = 0, .user_mode = true }, &q), 0);
	assert_int_equal(rt_fence_create(d, 0, &f), 0);
	struct os_stats st;
	rt_stack_os_stats(s, &st);
	uint64_t recreates0 = st.log_recreates;
	assert_int_equal(os_log_bytes(os_hwqueue_log(rt_queue_os(q))), HW_LOG_SIZE);
	assert_int_equal(rt_stack_trace_start(s, 0), 0);
	rt_stack_os_stats(s, &st);
	assert_int_equal(st.log_recreates - recreates0, HW_LOG_TYPES);
	assert_int_equal(os_log_bytes(os_hwqueue_log(rt_queue_os(q))), OS_TRACE_LOG_BYTES);
	assert_int_equal(rt_queue_create(d, &(struct rt_queue_desc){ .engine = 0, .user_mode = true }, &q2), 0);
	assert_int_equal(os_log_bytes(os_hwqueue_log(rt_queue_os(q2))), OS_TRACE_LOG_BYTES);

	/* no CPU waiter: no interrupt, nobody reads the log while it fills */
	size_t cap = (OS_TRACE_LOG_BYTES - HW_LOG_HEADER_BYTES) / sizeof(struct hw_log_entry);
	uint64_t v = 0, entries = 0, last = 0;
	struct hw_cmd cmds[RT_MAX_CMDS];
	while (entries < cap + cap / 2) {
		for (size_t k = 0; k < RT_MAX_CMDS; k++)
			cmds[k] = rt_cmd_signal(f, ++v);
		assert_int_equal(rt_queue_submit(q, cmds, RT_MAX_CMDS, &last), 0);
		entries += RT_MAX_CMDS + 1;                 /* + the progress write */
	}
	assert_int_equal(rt_queue_wait(q, last, WAIT_NS), 0);
	struct fb_trace *t = fb_trace_new();
	struct rig_trace_counts counts;
	assert_int_equal(rig_trace_copy(s, t, "native", RIG_TRACE_OK, &counts), 0);
	assert_int_equal(rt_stack_destroy(s), 0);
	char *text = fb_trace_render(t);
	fb_trace_free(t);
	struct trace_check c = check_trace(text);
	assert_trace_ok(&c);
	assert_int_equal(counts.dropped, 0);
	assert_true(c.lost_instants >= 1);
	assert_true(c.lost_total > 0);
	assert_int_equal(c.lost_total, counts.lost);
	assert_int_equal(c.signals + c.lost_total, entries);   /* shown or flagged: none vanishes */
	free(text);
}

/* Without tracing nothing is kept, and the logs keep the seed's 4 KiB. */
static void no_trace_without_start(void **state)
{
	struct rt_stack_config cfg;
	struct rt_stack *s;
	char err[256];
	rt_stack_config_default(&cfg, RT_PATH_NATIVE);
	assert_int_equal(rt_stack_create(&cfg, &s, err, sizeof(err)), 0);
	struct rt_queue *q;
	struct rt_fence *f;
	assert_int_equal(rt_queue_create(rt_stack_device(s), &(struct rt_queue_desc){ .user_mode = true }, &q), 0);
	assert_int_equal(rt_fence_create(rt_stack_device(s), 0, &f), 0);
	assert_int_equal(rt_queue_signal(q, f, 1), 0);
	assert_int_equal(rt_fence_wait(f, 1, WAIT_NS), 0);
	assert_false(rt_stack_tracing(s));
	assert_int_equal(rt_stack_trace_count(s), 0);
	assert_int_equal(os_log_bytes(os_hwqueue_log(rt_queue_os(q))), HW_LOG_SIZE);
	assert_int_equal(rt_stack_destroy(s), 0);
}

/* ---- through the binary ---- */

static struct fb_exec_result run_fencebench(const char *const *args)
{
	return fb_exec_args(tmpdir, fencebench, args);
}
#define FENCEBENCH(...) run_fencebench((const char *const[]){ __VA_ARGS__, NULL })

/* `fencebench run isr-scaling --trace t.json` (short): the file passes the
 * format check and has both paths' interrupt handling. */
static void cli_isr_scaling_trace_passes_the_format_check(void **state)
{
	fb_need_binary(fencebench);
	const char *path = fb_tmp_path(tmpdir, "t.json");
	struct fb_exec_result r = FENCEBENCH("run", "isr-scaling", "--iterations", "30", "--set", "fences=4",
					     "--trace", path, "--format", "json", "-q");
	assert_int_equal(r.status, 0);
	fb_exec_free(&r);
	char *text = fb_slurp(path);
	assert_non_null(text);
	struct trace_check c = check_trace(text);
	assert_trace_ok(&c);
	assert_true(c.isr >= 60 && c.isr == c.dpc);   /* 30 waited signals on each path */
	assert_non_null(strstr(text, "\"native: CPU threads\""));
	assert_non_null(strstr(text, "\"legacy: CPU threads\""));
	assert_non_null(strstr(text, "\"native: GPU engines\""));
	free(text);
}

/* A run of every scenario with a timeline (`fencebench list` marks them
 * "[timeline]"), short; a scenario that gains one needs a line here. */
struct traced_run {
	const char *scenario;
	const char *args[8];
	bool no_flows;          /* no arrow: submissions only (no wait), or waits on another adapter's copy of the fence */
};
static char frame_json[PATH_MAX + 8], ring_json[PATH_MAX + 8], pipeline_json[PATH_MAX + 8];
static const struct traced_run traced_runs[] = {
	{ .scenario = "irq-suppression", .args = { "--iterations", "20" } },
	{ .scenario = "cpu-wait", .args = { "--iterations", "20" } },
	{ .scenario = "gpu-wait", .args = { "--iterations", "20" } },
	{ .scenario = "idle", .args = { "--iterations", "20" } },
	{ .scenario = "isr-scaling", .args = { "--iterations", "20" } },
	{ .scenario = "preempt", .args = { "--iterations", "6" } },
	{ .scenario = "tdr", .args = { "--iterations", "1" } },
	{ .scenario = "submit-latency", .args = { "--iterations", "50" }, .no_flows = true },
	{ .scenario = "doorbell-thrash", .args = { "--iterations", "50", "--set", "queues=4" }, .no_flows = true },
	{ .scenario = "cross-adapter", .args = { "--iterations", "20" }, .no_flows = true },
	{ .scenario = "cross-adapter", .args = { "--iterations", "20", "--set", "waiter=cpu" }, .no_flows = true },
	{ .scenario = "frame", .args = { "--iterations", "10" } },
	{ .scenario = "frame", .args = { "--iterations", "10", "--set", "queues=kernel" } },
	{ .scenario = "ring-heap", .args = { "--iterations", "10" } },
	{ .scenario = "pipeline", .args = { "--iterations", "10" } },
	{ .scenario = "async-compute", .args = { "--iterations", "10" } },
	{ .scenario = "replay", .args = { "--iterations", "5", "--set", frame_json } },
	{ .scenario = "replay", .args = { "--iterations", "5", "--set", frame_json, "--set", "queues=kernel" } },
	{ .scenario = "replay", .args = { "--iterations", "5", "--set", ring_json } },
	{ .scenario = "replay", .args = { "--iterations", "5", "--set", pipeline_json } },
};
#define NTRACED (sizeof(traced_runs) / sizeof(traced_runs[0]))

static bool traced_run_of(const char *scenario)
{
	for (size_t i = 0; i < NTRACED; i++)
		if (!strcmp(traced_runs[i].scenario, scenario))
			return true;
	return false;
}

/* The scenarios `fencebench list` marks "[timeline]": each has a run above,
 * and each run above is of such a scenario. */
static void every_timeline_scenario_has_a_traced_run(void **state)
{
	fb_need_binary(fencebench);
	struct fb_exec_result r = FENCEBENCH("list");
	assert_int_equal(r.status, 0);
	size_t marked = 0;
	for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
		char name[64] = "";
		sscanf(line, "%63s", name);
		bool timeline = strstr(line, "[timeline]") != NULL;
		marked += timeline;
		if (timeline && !traced_run_of(name))
			fail_msg("scenario '%s' writes a timeline but tests/test_trace.c runs none of it", name);
		if (!timeline && traced_run_of(name))
			fail_msg("scenario '%s' is not marked [timeline] by fencebench list", name);
	}
	assert_true(marked >= 15);
	fb_exec_free(&r);
}

static void set_file(char *out, const char *rel)
{
	char abs[PATH_MAX];
	assert_non_null(realpath(rel, abs));
	snprintf(out, PATH_MAX + 8, "file=%s", abs);
}

/* Each run's trace passes the checker on both paths; the workloads' (and
 * replay's, user-mode and kernel-mode queues) have a track per queue named
 * after it, spans named after the lists, and arrows on both paths. */
static void every_timeline_scenario_writes_a_checked_trace(void **state)
{
	fb_need_binary(fencebench);
	set_file(frame_json, "benchmarks/workloads/frame.json");
	set_file(ring_json, "benchmarks/workloads/ring-heap.json");
	set_file(pipeline_json, "benchmarks/workloads/pipeline.json");
	const char *path = fb_tmp_path(tmpdir, "every.json");
	for (size_t i = 0; i < NTRACED; i++) {
		const struct traced_run *t = &traced_runs[i];
		const char *argv[24] = { "run", t->scenario, "--path", "both", "--warmup", "0", "--trace", path,
					 "--format", "json", "-q" };
		size_t n = 11;
		for (size_t k = 0; t->args[k]; k++)
			argv[n++] = t->args[k];
		argv[n] = NULL;
		struct fb_exec_result r = run_fencebench(argv);
		if (r.status != 0)
			fail_msg("%s: exit %d: %s", t->scenario, r.status, r.err);
		fb_exec_free(&r);
		char *text = fb_slurp(path);
		assert_non_null(text);
		struct trace_check c = check_trace(text);
		print_message("%s %s %s: %zu events, %zu native and %zu legacy flows\n", t->scenario,
			      t->args[2] ? t->args[2] : "", t->args[4] ? t->args[4] : "", c.events, c.flows_native,
			      c.flows_legacy);
		assert_trace_ok(&c);
		/* every scenario here but cross-adapter waits on the CPU for a GPU signal on both paths */
		if (t->no_flows)
			assert_int_equal(c.flow_starts, 0);   /* when it gains them, this line goes */
		else if (!c.flows_native || !c.flows_legacy)
			fail_msg("%s: %zu native and %zu legacy flows", t->scenario, c.flows_native, c.flows_legacy);
		bool replay = !strcmp(t->scenario, "replay"), frame = !strcmp(t->scenario, "frame");
		if (frame || (replay && t->args[3] == frame_json)) {
			const char *want[] = { "\"native: queues\"", "\"legacy: queues\"", "\"lighting\"", "\"prepass\"",
					       "\"Wait (held on the CPU)\"", "\"direct0\"", "\"submit\"",
					       "\"to the ring\"", "os-sched (tid" };
			for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
				if (!strstr(text, want[k]))
					fail_msg("%s trace lacks %s", t->scenario, want[k]);
		}
		free(text);
		unlink(path);
	}
}

/* --trace is refused, before anything runs, where it cannot be honoured. */
static void cli_trace_refusals(void **state)
{
	fb_need_binary(fencebench);
	const char *path = fb_tmp_path(tmpdir, "r.json");
	struct fb_exec_result r = FENCEBENCH("run", "selftest", "--trace", path);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--trace: scenario 'selftest' has no timeline"));
	fb_exec_free(&r);
	r = FENCEBENCH("run", "isr-scaling", "--trace", fb_tmp_path(tmpdir, "no/such/t.json"));
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--trace "));
	fb_exec_free(&r);
	r = FENCEBENCH("run", "isr-scaling", "--trace", path, "--out", path);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "same file"));
	fb_exec_free(&r);
	r = FENCEBENCH("sweep", "isr-scaling", "--grid", "fences=1,2", "--trace", path);
	assert_int_equal(r.status, 2);
	fb_exec_free(&r);
	assert_int_equal(access(path, F_OK), -1);   /* nothing written */
}

FB_TEST_FIXTURES(fencebench, sizeof(fencebench), tmpdir)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(trace_of_a_short_run_follows_the_format),
		cmocka_unit_test(broken_flows_without_end_are_caught),
		cmocka_unit_test(broken_unconverted_gpu_times_are_caught),
		cmocka_unit_test(broken_flows_from_the_wrong_fence_are_caught),
		cmocka_unit_test(tracing_enlarges_logs_and_flags_lost_entries),
		cmocka_unit_test(no_trace_without_start),
		cmocka_unit_test(cli_isr_scaling_trace_passes_the_format_check),
		cmocka_unit_test(every_timeline_scenario_has_a_traced_run),
		cmocka_unit_test(every_timeline_scenario_writes_a_checked_trace),
		cmocka_unit_test(cli_trace_refusals),
	};
	return cmocka_run_group_tests_name(__FILE__, tests, setup, teardown);
}
