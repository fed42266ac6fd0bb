/* benchmarks/replay.c — a frame graph from JSON (jansson), checked, then run
 * on the D3D12 runtime.  Contract and the file's format in replay.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "benchmarks/embedded.h"
#include "benchmarks/replay.h"

enum bm_rop { BM_ROP_EXECUTE, BM_ROP_SIGNAL, BM_ROP_WAIT, BM_ROP_CPU_WAIT };

struct bm_rcmd {
	enum rt_op op;
	uint64_t ns;
	unsigned units;
};

/* A resource use a list declares: an access, or a barrier (barrier: state -> after). */
struct bm_raccess {
	int res;
	enum rt_state state, after;
	bool write, barrier;
};

struct bm_rlist {
	char name[BM_REPLAY_NAME];
	enum rt_list_type type;
	struct bm_rcmd cmds[BM_REPLAY_CMDS];
	size_t n;
	struct bm_raccess access[BM_REPLAY_ACCESS];
	size_t na;
};

struct bm_rstep {
	enum bm_rop op;
	int queue, fence;
	int lists[BM_REPLAY_EXEC];
	size_t nlists;
	int64_t value, step;
	uint64_t after;
};

struct bm_replay {
	char name[64];
	bool built_in;          /* read from the binary's built-in copy: no such file here */
	size_t nq, nf, nl, ns;
	struct {
		char name[BM_REPLAY_NAME];
		enum rt_list_type type;
	} queues[BM_REPLAY_QUEUES];
	char fences[BM_REPLAY_FENCES][BM_REPLAY_NAME];
	struct {
		char name[BM_REPLAY_NAME];
		enum rt_state initial;
		unsigned copies;
	} res[BM_REPLAY_RESOURCES];
	size_t nr;
	unsigned copies;                    /* the copies of every resource that has more than one; 1: none */
	struct bm_rlist lists[BM_REPLAY_LISTS];
	struct bm_rstep steps[BM_REPLAY_STEPS];
};

/* ---- messages ---- */

struct bm_ctx {
	const char *origin;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 2, 3))) static int bm_bad(struct bm_ctx *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(c->err, c->errlen, "%s: %s", c->origin, msg);
	return -EINVAL;
}

/* Every key of o is one of the NULL-terminated keys. */
static int bm_keys(struct bm_ctx *c, json_t *o, const char *where, const char *const *keys)
{
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v) {
		size_t i = 0;
		while (keys[i] && strcmp(keys[i], k))
			i++;
		if (!keys[i]) {
			char list[256] = "";
			for (size_t j = 0, used = 0; keys[j] && used < sizeof(list); j++)
				used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", j ? ", " : "", keys[j]);
			return bm_bad(c, "%s: unknown key '%s' (expected %s)", where, k, list);
		}
	}
	return 0;
}

static int bm_name(struct bm_ctx *c, json_t *v, const char *where, char *out)
{
	if (!json_is_string(v) || !json_string_length(v))
		return bm_bad(c, "%s: a name must be a non-empty string", where);
	if (json_string_length(v) >= BM_REPLAY_NAME)
		return bm_bad(c, "%s: name '%.40s...' longer than %d bytes", where, json_string_value(v),
			      BM_REPLAY_NAME - 1);
	snprintf(out, BM_REPLAY_NAME, "%s", json_string_value(v));
	return 0;
}

static int bm_type(struct bm_ctx *c, json_t *v, const char *where, enum rt_list_type *out)
{
	const char *s = json_is_string(v) ? json_string_value(v) : "";
	for (int t = 0; t < RT_LIST_BUNDLE; t++)
		if (!strcmp(s, rt_list_type_name((enum rt_list_type)t))) {
			*out = (enum rt_list_type)t;
			return 0;
		}
	return bm_bad(c, "%s: type '%s' is not one of direct|compute|copy", where, s);
}

/* ---- the sections ---- */

static int bm_find(const char (*names)[BM_REPLAY_NAME], size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return (int)i;
	return -1;
}

static int bm_queue_index(const struct bm_replay *r, const char *name)
{
	for (size_t i = 0; i < r->nq; i++)
		if (!strcmp(r->queues[i].name, name))
			return (int)i;
	return -1;
}

static int bm_list_index(const struct bm_replay *r, const char *name)
{
	for (size_t i = 0; i < r->nl; i++)
		if (!strcmp(r->lists[i].name, name))
			return (int)i;
	return -1;
}

static int bm_parse_queues(struct bm_ctx *c, json_t *a, struct bm_replay *r)
{
	static const char *const keys[] = { "name", "type", NULL };
	if (!json_is_array(a) || !json_array_size(a) || json_array_size(a) > BM_REPLAY_QUEUES)
		return bm_bad(c, "queues: an array of 1..%d queues", BM_REPLAY_QUEUES);
	size_t i;
	json_t *q;
	json_array_foreach(a, i, q) {
		char where[64];
		snprintf(where, sizeof(where), "queues[%zu]", i);
		if (!json_is_object(q))
			return bm_bad(c, "%s: an object { \"name\", \"type\" }", where);
		int rc = bm_keys(c, q, where, keys);
		if (!rc)
			rc = bm_name(c, json_object_get(q, "name"), where, r->queues[i].name);
		if (!rc)
			rc = bm_type(c, json_object_get(q, "type"), where, &r->queues[i].type);
		if (rc)
			return rc;
		if (bm_queue_index(r, r->queues[i].name) >= 0)
			return bm_bad(c, "%s: queue '%s' declared twice", where, r->queues[i].name);
		r->nq = i + 1;
	}
	return 0;
}

static int bm_parse_fences(struct bm_ctx *c, json_t *a, struct bm_replay *r)
{
	if (!json_is_array(a) || json_array_size(a) > BM_REPLAY_FENCES)
		return bm_bad(c, "fences: an array of up to %d names", BM_REPLAY_FENCES);
	size_t i;
	json_t *f;
	json_array_foreach(a, i, f) {
		char where[64];
		snprintf(where, sizeof(where), "fences[%zu]", i);
		int rc = bm_name(c, f, where, r->fences[i]);
		if (rc)
			return rc;
		if (bm_find(r->fences, i, r->fences[i]) >= 0)
			return bm_bad(c, "%s: fence '%s' declared twice", where, r->fences[i]);
		r->nf = i + 1;
	}
	return 0;
}

static int bm_state(struct bm_ctx *c, json_t *v, const char *where, const char *key, enum rt_state *out)
{
	const char *s = json_is_string(v) ? json_string_value(v) : "";
	for (int k = 0; k < RT_STATES; k++)
		if (!strcmp(s, rt_state_name((enum rt_state)k))) {
			*out = (enum rt_state)k;
			return 0;
		}
	return bm_bad(c, "%s: %s '%s' is not one of COMMON|COPY_SOURCE|COPY_DEST|SHADER_RESOURCE|"
		      "UNORDERED_ACCESS|RENDER_TARGET", where, key, s);
}

static int bm_res_index(const struct bm_replay *r, const char *name)
{
	for (size_t i = 0; i < r->nr; i++)
		if (!strcmp(r->res[i].name, name))
			return (int)i;
	return -1;
}

static int bm_parse_resources(struct bm_ctx *c, json_t *a, struct bm_replay *r)
{
	static const char *const keys[] = { "name", "state", "copies", NULL };
	r->copies = 1;
	if (!a)
		return 0;
	if (!json_is_array(a) || json_array_size(a) > BM_REPLAY_RESOURCES)
		return bm_bad(c, "resources: an array of up to %d resources", BM_REPLAY_RESOURCES);
	size_t i;
	json_t *o;
	json_array_foreach(a, i, o) {
		char where[64];
		snprintf(where, sizeof(where), "resources[%zu]", i);
		if (!json_is_object(o))
			return bm_bad(c, "%s: an object { \"name\", \"state\", \"copies\" }", where);
		int rc = bm_keys(c, o, where, keys);
		if (!rc)
			rc = bm_name(c, json_object_get(o, "name"), where, r->res[i].name);
		if (!rc)
			rc = bm_state(c, json_object_get(o, "state"), where, "state", &r->res[i].initial);
		if (rc)
			return rc;
		if (bm_res_index(r, r->res[i].name) >= 0)
			return bm_bad(c, "%s: resource '%s' declared twice", where, r->res[i].name);
		json_t *k = json_object_get(o, "copies");
		if (k && (!json_is_integer(k) || json_integer_value(k) < 1 || json_integer_value(k) > BM_REPLAY_COPIES))
			return bm_bad(c, "%s: copies must be an integer in [1, %d]", where, BM_REPLAY_COPIES);
		unsigned copies = k ? (unsigned)json_integer_value(k) : 1;
		if (copies > 1 && r->copies > 1 && copies != r->copies)
			return bm_bad(c, "%s: copies %u, but an earlier resource has %u (frame n uses copy (n - 1) %% "
				      "copies of each: one count for all)", where, copies, r->copies);
		if (copies > 1)
			r->copies = copies;
		r->res[i].copies = copies;
		r->nr = i + 1;
	}
	return 0;
}

/* { "resource", "state", "write" } or a barrier { "resource", "state", "after" }. */
static int bm_parse_access(struct bm_ctx *c, json_t *o, const char *where, const struct bm_replay *r,
			   struct bm_raccess *out)
{
	static const char *const keys[] = { "resource", "state", "write", "after", NULL };
	if (!json_is_object(o))
		return bm_bad(c, "%s: an object { \"resource\", \"state\", \"write\" } or { \"resource\", "
			      "\"state\", \"after\" }", where);
	int rc = bm_keys(c, o, where, keys);
	if (rc)
		return rc;
	const char *name = json_string_value(json_object_get(o, "resource"));
	out->res = name ? bm_res_index(r, name) : -1;
	if (out->res < 0)
		return bm_bad(c, "%s: resource '%s' is not declared", where, name ? name : "");
	rc = bm_state(c, json_object_get(o, "state"), where, "state", &out->state);
	if (rc)
		return rc;
	json_t *wr = json_object_get(o, "write"), *af = json_object_get(o, "after");
	if (wr && af)
		return bm_bad(c, "%s: a barrier (after) does not write", where);
	if (wr && !json_is_boolean(wr))
		return bm_bad(c, "%s: write must be true or false", where);
	out->write = wr && json_is_true(wr);
	out->barrier = af != NULL;
	return af ? bm_state(c, af, where, "after", &out->after) : 0;
}

static int bm_parse_cmd(struct bm_ctx *c, json_t *o, const char *where, struct bm_rlist *l, struct bm_rcmd *out)
{
	static const char *const keys[] = { "op", "us", "units", NULL };
	if (!json_is_object(o))
		return bm_bad(c, "%s: an object { \"op\", \"us\", \"units\" }", where);
	int rc = bm_keys(c, o, where, keys);
	if (rc)
		return rc;
	const char *op = json_string_value(json_object_get(o, "op"));
	int k = -1;
	for (int i = 0; op && i < RT_OPS; i++)
		if (!strcmp(op, rt_op_name((enum rt_op)i)))
			k = i;
	if (k < 0)
		return bm_bad(c, "%s: op '%s' is not one of copy|dispatch|draw", where, op ? op : "");
	if (!rt_list_type_holds(l->type, (enum rt_op)k))
		return bm_bad(c, "%s: a %s list cannot hold a %s", where, rt_list_type_name(l->type), op);
	json_t *us = json_object_get(o, "us"), *units = json_object_get(o, "units");
	if (!json_is_number(us) || json_number_value(us) < 0 || json_number_value(us) > 1e7)
		return bm_bad(c, "%s: us must be a number of microseconds in [0, 1e7]", where);
	if (units && (!json_is_integer(units) || json_integer_value(units) < 1 || json_integer_value(units) > 64))
		return bm_bad(c, "%s: units must be an integer in [1, 64]", where);
	*out = (struct bm_rcmd){ .op = (enum rt_op)k, .ns = (uint64_t)(json_number_value(us) * 1000.0),
				 .units = units ? (unsigned)json_integer_value(units) : 1 };
	return 0;
}

static int bm_parse_list(struct bm_ctx *c, json_t *o, const char *where, struct bm_replay *r, struct bm_rlist *l)
{
	static const char *const keys[] = { "name", "type", "commands", "access", NULL };
	if (!json_is_object(o))
		return bm_bad(c, "%s: an object { \"name\", \"type\", \"commands\", \"access\" }", where);
	int rc = bm_keys(c, o, where, keys);
	if (!rc)
		rc = bm_name(c, json_object_get(o, "name"), where, l->name);
	if (!rc)
		rc = bm_type(c, json_object_get(o, "type"), where, &l->type);
	if (rc)
		return rc;
	if (bm_list_index(r, l->name) >= 0)
		return bm_bad(c, "%s: list '%s' declared twice", where, l->name);
	json_t *cmds = json_object_get(o, "commands");
	if (!json_is_array(cmds) || json_array_size(cmds) > BM_REPLAY_CMDS)
		return bm_bad(c, "%s: commands: an array of up to %d commands", where, BM_REPLAY_CMDS);
	size_t i;
	json_t *cmd;
	json_array_foreach(cmds, i, cmd) {
		char w[160];
		snprintf(w, sizeof(w), "%s '%s' commands[%zu]", where, l->name, i);
		rc = bm_parse_cmd(c, cmd, w, l, &l->cmds[i]);
		if (rc)
			return rc;
		l->n = i + 1;
	}
	json_t *acc = json_object_get(o, "access");
	if (acc && (!json_is_array(acc) || json_array_size(acc) > BM_REPLAY_ACCESS))
		return bm_bad(c, "%s '%s' access: an array of up to %d uses", where, l->name, BM_REPLAY_ACCESS);
	json_array_foreach(acc, i, cmd) {
		char w[160];
		snprintf(w, sizeof(w), "%s '%s' access[%zu]", where, l->name, i);
		rc = bm_parse_access(c, cmd, w, r, &l->access[i]);
		if (rc)
			return rc;
		l->na = i + 1;
	}
	return 0;
}

static int bm_parse_lists(struct bm_ctx *c, json_t *a, struct bm_replay *r)
{
	if (!json_is_array(a) || json_array_size(a) > BM_REPLAY_LISTS)
		return bm_bad(c, "lists: an array of up to %d lists", BM_REPLAY_LISTS);
	size_t i;
	json_t *o;
	json_array_foreach(a, i, o) {
		char where[64];
		snprintf(where, sizeof(where), "lists[%zu]", i);
		int rc = bm_parse_list(c, o, where, r, &r->lists[i]);
		if (rc)
			return rc;
		r->nl = i + 1;
	}
	return 0;
}

/* "value", "step", "after_frame" of a step that carries a value. */
static int bm_parse_value(struct bm_ctx *c, json_t *o, const char *where, struct bm_rstep *s)
{
	json_t *v = json_object_get(o, "value"), *st = json_object_get(o, "step"), *af = json_object_get(o, "after_frame");
	if (!json_is_integer(v))
		return bm_bad(c, "%s: value must be an integer", where);
	if (st && !json_is_integer(st))
		return bm_bad(c, "%s: step must be an integer", where);
	if (af && (!json_is_integer(af) || json_integer_value(af) < 0))
		return bm_bad(c, "%s: after_frame must be an integer >= 0", where);
	s->value = json_integer_value(v);
	s->step = st ? json_integer_value(st) : 0;
	s->after = af ? (uint64_t)json_integer_value(af) : 0;
	/* the first frame it runs in is after + 1: value + step * after */
	if (s->step < 0 || s->value + s->step * (int64_t)s->after < 0)
		return bm_bad(c, "%s: value %lld + %lld * (n - 1) is negative at frame %llu (a value never "
			      "goes below 0: raise after_frame, or a step >= 0)", where, (long long)s->value,
			      (long long)s->step, (unsigned long long)s->after + 1);
	return 0;
}

static int bm_step_fence(struct bm_ctx *c, const struct bm_replay *r, json_t *f, const char *where, struct bm_rstep *s)
{
	const char *name = json_string_value(f);
	s->fence = name ? bm_find(r->fences, r->nf, name) : -1;
	if (s->fence < 0)
		return bm_bad(c, "%s: fence '%s' is not declared", where, name ? name : "");
	return 0;
}

static int bm_step_execute(struct bm_ctx *c, const struct bm_replay *r, json_t *a, const char *where, struct bm_rstep *s)
{
	if (!json_is_array(a) || !json_array_size(a) || json_array_size(a) > BM_REPLAY_EXEC)
		return bm_bad(c, "%s: execute: an array of 1..%d list names", where, BM_REPLAY_EXEC);
	enum rt_list_type qt = r->queues[s->queue].type;
	size_t i;
	json_t *n;
	json_array_foreach(a, i, n) {
		const char *name = json_string_value(n);
		int l = name ? bm_list_index(r, name) : -1;
		if (l < 0)
			return bm_bad(c, "%s: list '%s' is not declared", where, name ? name : "");
		if (r->lists[l].type != qt)
			return bm_bad(c, "%s: list '%s' is a %s list; queue '%s' executes %s lists", where, name,
				      rt_list_type_name(r->lists[l].type), r->queues[s->queue].name, rt_list_type_name(qt));
		s->lists[i] = l;
		s->nlists = i + 1;
	}
	return 0;
}

static int bm_parse_step(struct bm_ctx *c, json_t *o, const char *where, const struct bm_replay *r, struct bm_rstep *s)
{
	static const char *const keys[] = { "queue", "execute", "signal", "wait", "cpu_wait", "value", "step",
					    "after_frame", NULL };
	if (!json_is_object(o))
		return bm_bad(c, "%s: an object", where);
	int rc = bm_keys(c, o, where, keys);
	if (rc)
		return rc;
	json_t *ex = json_object_get(o, "execute"), *sg = json_object_get(o, "signal");
	json_t *wt = json_object_get(o, "wait"), *cw = json_object_get(o, "cpu_wait");
	if (!!ex + !!sg + !!wt + !!cw != 1)
		return bm_bad(c, "%s: exactly one of execute, signal, wait, cpu_wait", where);
	s->op = ex ? BM_ROP_EXECUTE : sg ? BM_ROP_SIGNAL : wt ? BM_ROP_WAIT : BM_ROP_CPU_WAIT;
	json_t *q = json_object_get(o, "queue");
	if (cw && q)
		return bm_bad(c, "%s: a cpu_wait has no queue", where);
	if (!cw) {
		const char *name = json_string_value(q);
		s->queue = name ? bm_queue_index(r, name) : -1;
		if (s->queue < 0)
			return bm_bad(c, "%s: queue '%s' is not declared", where, name ? name : "");
	}
	if (ex) {
		json_t *af = json_object_get(o, "after_frame");
		if (json_object_get(o, "value") || json_object_get(o, "step"))
			return bm_bad(c, "%s: an execute has no value or step", where);
		if (af && (!json_is_integer(af) || json_integer_value(af) < 0))
			return bm_bad(c, "%s: after_frame must be an integer >= 0", where);
		s->after = af ? (uint64_t)json_integer_value(af) : 0;
		return bm_step_execute(c, r, ex, where, s);
	}
	rc = bm_step_fence(c, r, sg ? sg : wt ? wt : cw, where, s);
	return rc ? rc : bm_parse_value(c, o, where, s);
}

static int bm_parse_frame(struct bm_ctx *c, json_t *a, struct bm_replay *r)
{
	if (!json_is_array(a) || !json_array_size(a) || json_array_size(a) > BM_REPLAY_STEPS)
		return bm_bad(c, "frame: an array of 1..%d steps", BM_REPLAY_STEPS);
	size_t i;
	json_t *o;
	json_array_foreach(a, i, o) {
		char where[64];
		snprintf(where, sizeof(where), "frame[%zu]", i);
		int rc = bm_parse_step(c, o, where, r, &r->steps[i]);
		if (rc)
			return rc;
		r->ns = i + 1;
	}
	return 0;
}

static int bm_parse_root(struct bm_ctx *c, json_t *root, struct bm_replay *r)
{
	static const char *const keys[] = { "name", "comment", "queues", "fences", "resources", "lists", "frame", NULL };
	if (!json_is_object(root))
		return bm_bad(c, "the file must hold one JSON object");
	int rc = bm_keys(c, root, "top level", keys);
	json_t *name = json_object_get(root, "name");
	snprintf(r->name, sizeof(r->name), "%s", json_is_string(name) ? json_string_value(name) : "replay");
	if (!rc)
		rc = bm_parse_queues(c, json_object_get(root, "queues"), r);
	if (!rc)
		rc = bm_parse_fences(c, json_object_get(root, "fences"), r);
	if (!rc)
		rc = bm_parse_resources(c, json_object_get(root, "resources"), r);
	if (!rc)
		rc = bm_parse_lists(c, json_object_get(root, "lists"), r);
	if (!rc)
		rc = bm_parse_frame(c, json_object_get(root, "frame"), r);
	return rc;
}

static uint64_t bm_step_value(const struct bm_rstep *s, uint64_t n)
{
	return (uint64_t)(s->value + s->step * (int64_t)(n - 1));
}

/* ---- progress: dead waits and cycles, found before anything runs ----
 *
 * The frame graph is played on paper for the first frames (every step's
 * after_frame passed, then BM_CHECK_EXTRA more): the CPU walks the steps in
 * order and queues each queue's signals and waits; a queue runs its own in
 * order, a wait holding it until its fence reaches the value; a cpu_wait
 * holds the CPU until the queues, run as far as they can, reach it.  What can
 * never run is refused with one line naming the queues, fences and values:
 * a cycle of waits, or a wait for a value no step signals.  (Rewinds are
 * played as written: a signal sets the value.) */

#define BM_CHECK_EXTRA 3          /* frames past the last after_frame */
#define BM_CHECK_FRAMES 64        /* at most */

struct bm_pop {                   /* one signal or wait queued on a queue */
	int step;
	bool wait;
	int fence;
	uint64_t value, frame;
};

struct bm_sim {
	const struct bm_replay *r;
	struct bm_pop *ops[BM_REPLAY_QUEUES];
	size_t n[BM_REPLAY_QUEUES], head[BM_REPLAY_QUEUES], cap;
	uint64_t fence[BM_REPLAY_FENCES];
};

/* Run every queue as far as it goes. */
static void bm_sim_run(struct bm_sim *m)
{
	for (bool moved = true; moved;) {
		moved = false;
		for (size_t q = 0; q < m->r->nq; q++)
			while (m->head[q] < m->n[q]) {
				const struct bm_pop *o = &m->ops[q][m->head[q]];
				if (o->wait && m->fence[o->fence] < o->value)
					break;
				if (!o->wait)
					m->fence[o->fence] = o->value;
				m->head[q]++;
				moved = true;
			}
	}
}

/* The queue whose queued signal of fence f is first to reach v, -1: none. */
static int bm_sim_signaler(const struct bm_sim *m, int f, uint64_t v)
{
	for (size_t q = 0; q < m->r->nq; q++)
		for (size_t i = m->head[q]; i < m->n[q]; i++)
			if (!m->ops[q][i].wait && m->ops[q][i].fence == f && m->ops[q][i].value >= v)
				return (int)q;
	return -1;
}

/* "waits for 'f' >= 1 (now 0)": what holds queue q */
static int bm_sim_blocked(const struct bm_sim *m, int q, char *out, size_t len)
{
	const struct bm_pop *o = &m->ops[q][m->head[q]];
	return snprintf(out, len, "waits for '%s' >= %llu (now %llu)", m->r->fences[o->fence],
			(unsigned long long)o->value, (unsigned long long)m->fence[o->fence]);
}

/* Why fence f never reaches v for `start` (a blocked queue; -1: the CPU): a
 * chain of blocked queues ending in a cycle, or in a value nobody signals.
 * One line into msg. */
static void bm_sim_explain(const struct bm_sim *m, int start, int f, uint64_t v, char *msg, size_t len)
{
	bool seen[BM_REPLAY_QUEUES] = { false };
	if (start >= 0)
		seen[start] = true;
	size_t at = 0;
	for (int hops = 0; hops <= (int)m->r->nq && at < len; hops++) {
		int q = bm_sim_signaler(m, f, v);
		if (q < 0) {
			snprintf(msg + at, len - at, "no step left signals '%s' >= %llu (a dead wait)", m->r->fences[f],
				 (unsigned long long)v);
			return;
		}
		if (seen[q]) {
			snprintf(msg + at, len - at, "which queue '%s' signals: a cycle of waits", m->r->queues[q].name);
			return;
		}
		seen[q] = true;
		at += (size_t)snprintf(msg + at, len - at, "which queue '%s' signals only after it ", m->r->queues[q].name);
		if (at >= len)
			return;
		at += (size_t)bm_sim_blocked(m, q, msg + at, len - at);
		if (at >= len)
			return;
		at += (size_t)snprintf(msg + at, len - at, ", ");
		const struct bm_pop *o = &m->ops[q][m->head[q]];
		f = o->fence;
		v = o->value;
	}
}

static int bm_sim_stuck(struct bm_ctx *c, const struct bm_sim *m, const char *what, int start, int f, uint64_t v)
{
	char why[400];
	bm_sim_explain(m, start, f, v, why, sizeof(why));
	return bm_bad(c, "never completes: %s, %s", what, why);
}

static int bm_sim_push(struct bm_sim *m, int q, const struct bm_pop *o)
{
	if (m->n[q] == m->cap)
		return -ENOMEM;
	m->ops[q][m->n[q]++] = *o;
	return 0;
}

/* The CPU's walk through frame n: queue the signals and waits, honour the cpu_waits. */
static int bm_sim_frame(struct bm_ctx *c, struct bm_sim *m, uint64_t n)
{
	const struct bm_replay *r = m->r;
	for (size_t i = 0; i < r->ns; i++) {
		const struct bm_rstep *s = &r->steps[i];
		if (n <= s->after || s->op == BM_ROP_EXECUTE)
			continue;
		struct bm_pop o = { .step = (int)i, .wait = s->op != BM_ROP_SIGNAL, .fence = s->fence,
				    .value = bm_step_value(s, n), .frame = n };
		if (s->op != BM_ROP_CPU_WAIT) {
			if (bm_sim_push(m, s->queue, &o))
				return bm_bad(c, "no memory");
			continue;
		}
		bm_sim_run(m);
		if (m->fence[o.fence] < o.value) {
			char what[160];
			snprintf(what, sizeof(what), "frame %llu: frame[%zu] cpu_wait for '%s' >= %llu (now %llu)",
				 (unsigned long long)n, i, r->fences[o.fence], (unsigned long long)o.value,
				 (unsigned long long)m->fence[o.fence]);
			return bm_sim_stuck(c, m, what, -1, o.fence, o.value);
		}
	}
	return 0;
}

/* After the last frame: every queue drains. */
static int bm_sim_drained(struct bm_ctx *c, struct bm_sim *m)
{
	bm_sim_run(m);
	for (size_t q = 0; q < m->r->nq; q++)
		if (m->head[q] < m->n[q]) {
			const struct bm_pop *o = &m->ops[q][m->head[q]];
			char what[200];
			int k = snprintf(what, sizeof(what), "frame %llu: frame[%d] queue '%s' ", (unsigned long long)o->frame,
					 o->step, m->r->queues[q].name);
			bm_sim_blocked(m, (int)q, what + k, sizeof(what) - (size_t)k);
			return bm_sim_stuck(c, m, what, (int)q, o->fence, o->value);
		}
	return 0;
}

static int bm_replay_check_progress(struct bm_ctx *c, const struct bm_replay *r)
{
	uint64_t frames = 0;
	for (size_t i = 0; i < r->ns; i++)
		frames = r->steps[i].after > frames ? r->steps[i].after : frames;
	frames = frames + BM_CHECK_EXTRA < BM_CHECK_FRAMES ? frames + BM_CHECK_EXTRA : BM_CHECK_FRAMES;
	struct bm_sim m = { .r = r, .cap = r->ns * frames };
	int rc = 0;
	for (size_t q = 0; q < r->nq && !rc; q++)
		if (!(m.ops[q] = calloc(m.cap, sizeof(struct bm_pop))))
			rc = bm_bad(c, "no memory");
	for (uint64_t n = 1; n <= frames && !rc; n++)
		rc = bm_sim_frame(c, &m, n);
	if (!rc)
		rc = bm_sim_drained(c, &m);
	for (size_t q = 0; q < r->nq; q++)
		free(m.ops[q]);
	return rc;
}

static int bm_replay_from(json_t *root, json_error_t *jerr, struct bm_ctx *c, struct bm_replay **out)
{
	if (!root)
		return bm_bad(c, "line %d, column %d: %s", jerr->line, jerr->column, jerr->text);
	struct bm_replay *r = calloc(1, sizeof(*r));
	if (!r) {
		json_decref(root);
		return bm_bad(c, "no memory");
	}
	int rc = bm_parse_root(c, root, r);
	if (!rc)
		rc = bm_replay_check_progress(c, r);
	json_decref(root);
	if (rc) {
		free(r);
		return rc;
	}
	*out = r;
	return 0;
}

int bm_replay_parse(const char *text, const char *origin, struct bm_replay **out, char *err, size_t errlen)
{
	struct bm_ctx c = { origin, err, errlen };
	json_error_t jerr;
	json_t *root = json_loads(text, 0, &jerr);
	return bm_replay_from(root, &jerr, &c, out);
}

int bm_replay_load(const char *path, struct bm_replay **out, char *err, size_t errlen)
{
	struct bm_ctx c = { path, err, errlen };
	FILE *f = fopen(path, "r");
	if (!f) {
		int e = errno;
		const struct bm_embedded *b = e == ENOENT ? bm_embedded_find(path) : NULL;
		if (b) {   /* a shipped workload, its file not here: the built-in copy */
			int rc = bm_replay_parse((const char *)b->text, path, out, err, errlen);
			if (!rc)
				(*out)->built_in = true;
			return rc;
		}
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -ENOENT;
	}
	json_error_t jerr;
	json_t *root = json_loadf(f, 0, &jerr);
	fclose(f);
	return bm_replay_from(root, &jerr, &c, out);
}

void bm_replay_free(struct bm_replay *r)
{
	free(r);
}

const char *bm_replay_name(const struct bm_replay *r)
{
	return r->name;
}

bool bm_replay_built_in(const struct bm_replay *r)
{
	return r->built_in;
}

/* ---- running it ---- */

int bm_replay_start(struct bm_replay_run *rr, const struct bm_replay *spec, struct bm_wl *w, char *err, size_t errlen)
{
	memset(rr, 0, sizeof(*rr));
	rr->spec = spec;
	rr->w = w;
	int rc = 0;
	for (size_t i = 0; i < spec->nq && !rc; i++) {
		rc = bm_queue_create(w, spec->queues[i].type, spec->queues[i].name, &rr->q[i]);
		if (!rc)
			rc = bm_wl_watch_queue(w, rr->q[i]);   /* the watchdog names it when stuck */
		if (rc)
			snprintf(err, errlen, "queue '%s': %s", spec->queues[i].name, strerror(-rc));
	}
	for (size_t i = 0; i < spec->nf && !rc; i++)
		if ((rc = bm_fence_create(w, &rr->f[i])))
			snprintf(err, errlen, "fence '%s': %s", spec->fences[i], strerror(-rc));
		else
			bm_wl_name_fence(w, rr->f[i], spec->fences[i]);   /* unnamed past BM_WL_FENCES */
	/* under the validation layer: the resources, and a version of every list per copy */
	rr->versions = w->debug ? spec->copies : 1;
	for (size_t i = 0; i < spec->nr && w->debug && !rc; i++)
		for (unsigned k = 0; k < spec->res[i].copies && !rc; k++) {
			char name[BM_REPLAY_NAME + 8];
			if (spec->res[i].copies > 1)
				snprintf(name, sizeof(name), "%s[%u]", spec->res[i].name, k);
			else
				snprintf(name, sizeof(name), "%s", spec->res[i].name);
			if ((rc = rt_resource_create(w->debug, name, spec->res[i].initial, &rr->res[i][k])))
				snprintf(err, errlen, "resource '%s': %s", name, strerror(-rc));
		}
	for (size_t i = 0; i < spec->nl && !rc; i++)
		for (unsigned v = 0; v < rr->versions && !rc; v++) {
			const struct bm_rlist *l = &spec->lists[i];
			struct bm_list **out = &rr->l[i][v];
			rc = bm_list_create(w, l->type, l->name, out);   /* named: its WORK's name on the timeline */
			for (size_t k = 0; k < l->n && !rc; k++)
				rc = bm_list_record(w, *out, l->cmds[k].op, l->cmds[k].ns, l->cmds[k].units);
			for (size_t k = 0; k < l->na && w->debug && !rc; k++) {
				const struct bm_raccess *a = &l->access[k];
				struct rt_resource *res = rr->res[a->res][spec->res[a->res].copies > 1 ? v : 0];
				struct rt_clist *ml = bm_model_list(*out);   /* the validation layer is the model's */
				rc = a->barrier ? rt_clist_barrier(ml, res, a->state, a->after)
						: rt_clist_access(ml, res, a->state, a->write);
			}
			if (!rc)
				rc = bm_list_close(w, *out);
			if (rc)
				snprintf(err, errlen, "list '%s': %s", l->name,
					 *out && w->kind == BM_BACKEND_MODEL && *rt_clist_error(bm_model_list(*out))
						 ? rt_clist_error(bm_model_list(*out)) : strerror(-rc));
		}
	return rc;
}

static int bm_replay_step(struct bm_replay_run *rr, const struct bm_rstep *s, uint64_t n)
{
	if (n <= s->after)
		return 0;
	struct bm_queue *q = s->op == BM_ROP_CPU_WAIT ? NULL : rr->q[s->queue];
	switch (s->op) {
	case BM_ROP_EXECUTE: {
		struct bm_list *lists[BM_REPLAY_EXEC];
		for (size_t i = 0; i < s->nlists; i++)
			lists[i] = rr->l[s->lists[i]][(n - 1) % rr->versions];
		return bm_execute(rr->w, q, lists, s->nlists);
	}
	case BM_ROP_SIGNAL: {
		uint64_t v = bm_step_value(s, n);
		int rc = bm_signal(rr->w, q, rr->f[s->fence], v);
		if (!rc && v > rr->last[s->fence])
			rr->last[s->fence] = v;
		return rc;
	}
	case BM_ROP_WAIT:
		return bm_wait(rr->w, q, rr->f[s->fence], bm_step_value(s, n));
	default:
		return bm_wl_cpu_wait(rr->w, rr->f[s->fence], bm_step_value(s, n));
	}
}

int bm_replay_frame(struct bm_replay_run *rr)
{
	uint64_t n = rr->n + 1;
	for (size_t i = 0; i < rr->spec->ns; i++) {
		int rc = bm_replay_step(rr, &rr->spec->steps[i], n);
		if (rc)
			return rc;
	}
	rr->n = n;
	return 0;
}

int bm_replay_drain(struct bm_replay_run *rr)
{
	for (size_t i = 0; i < rr->spec->nf; i++)
		if (rr->last[i]) {
			int rc = bm_wl_cpu_wait(rr->w, rr->f[i], rr->last[i]);
			if (rc)
				return rc;
		}
	return 0;
}

void bm_replay_stop(struct bm_replay_run *rr)
{
	for (size_t i = 0; i < BM_REPLAY_LISTS; i++)
		for (size_t v = 0; v < BM_REPLAY_COPIES; v++)
			if (rr->l[i][v])
				bm_list_destroy(rr->w, rr->l[i][v]);
	for (size_t i = 0; i < BM_REPLAY_QUEUES; i++)
		if (rr->q[i])
			bm_queue_destroy(rr->w, rr->q[i]);
	/* the fences are the device's */
}

uint64_t bm_replay_waits(const struct bm_replay *r, uint64_t n)
{
	uint64_t k = 0;
	for (size_t i = 0; i < r->ns; i++)
		k += r->steps[i].op == BM_ROP_WAIT && n > r->steps[i].after;
	return k;
}

struct bm_queue *bm_replay_queue(struct bm_replay_run *rr, const char *name)
{
	int i = bm_queue_index(rr->spec, name);
	return i < 0 ? NULL : rr->q[i];
}

struct bm_fence *bm_replay_fence(struct bm_replay_run *rr, const char *name)
{
	int i = bm_find(rr->spec->fences, rr->spec->nf, name);
	return i < 0 ? NULL : rr->f[i];
}
