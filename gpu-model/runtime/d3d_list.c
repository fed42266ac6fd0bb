/* gpu-model/runtime/d3d_list.c — command list types, what each may hold, the
 * engine each runs on, and command lists.  Contract in d3d.h. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "gpu-model/runtime/d3d.h"
#include "gpu-model/runtime/d3d_internal.h"
#include "lockfree/alloc.h"
#include "lockfree/cacheline.h"

const char *rt_list_type_name(enum rt_list_type t)
{
	static const char *const names[RT_LIST_TYPES] = { "direct", "compute", "copy", "bundle" };
	return (unsigned)t < RT_LIST_TYPES ? names[t] : "?";
}

const char *rt_op_name(enum rt_op op)
{
	static const char *const names[RT_OPS] = { "copy", "dispatch", "draw" };
	return (unsigned)op < RT_OPS ? names[op] : "?";
}

/* The seed: direct drives 3D, compute and copy; compute drives compute and
 * copy; copy only copy.  A bundle holds draws and dispatches (no copies). */
bool rt_list_type_holds(enum rt_list_type t, enum rt_op op)
{
	static const unsigned holds[RT_LIST_TYPES] = {
		[RT_LIST_DIRECT] = 1u << RT_OP_COPY | 1u << RT_OP_DISPATCH | 1u << RT_OP_DRAW,
		[RT_LIST_COMPUTE] = 1u << RT_OP_COPY | 1u << RT_OP_DISPATCH,
		[RT_LIST_COPY] = 1u << RT_OP_COPY,
		[RT_LIST_BUNDLE] = 1u << RT_OP_DISPATCH | 1u << RT_OP_DRAW,
	};
	return (unsigned)t < RT_LIST_TYPES && (unsigned)op < RT_OPS && (holds[t] >> op & 1u);
}

const char *rt_pso_kind_name(enum rt_pso_kind k)
{
	return k == RT_PSO_GRAPHICS ? "graphics" : k == RT_PSO_COMPUTE ? "compute" : "?";
}

unsigned rt_engine_for_type(unsigned engines, enum rt_list_type t)
{
	unsigned want = t == RT_LIST_COMPUTE ? 1 : t == RT_LIST_COPY ? 2 : 0;
	return want < engines ? want : engines - 1;
}

/* "copy, dispatch" for a type. */
static void rt_holds_text(enum rt_list_type t, char *buf, size_t len)
{
	size_t k = 0;
	buf[0] = 0;
	for (int op = 0; op < RT_OPS; op++)
		if (rt_list_type_holds(t, (enum rt_op)op) && k < len)
			k += (size_t)snprintf(buf + k, len - k, "%s%s", k ? ", " : "", rt_op_name((enum rt_op)op));
}

int rt_clist_create(enum rt_list_type t, struct rt_clist **out)
{
	if ((unsigned)t >= RT_LIST_TYPES)
		return -EINVAL;
	struct rt_clist *l = lf_alloc(sizeof(*l), LF_CACHELINE);
	if (!l)
		return -ENOMEM;
	memset(l, 0, sizeof(*l));
	l->type = t;
	l->recording = true;
	*out = l;
	return 0;
}

int rt_clist_create_pso(enum rt_list_type t, const struct rt_pso *pso, struct rt_clist **out)
{
	struct rt_clist *l;
	int rc = rt_clist_create(t, &l);
	if (!rc && pso && (rc = rt_clist_set_pipeline_state(l, pso))) {
		rt_clist_destroy(l);
		return rc;
	}
	if (!rc)
		*out = l;
	return rc;
}

void rt_clist_destroy(struct rt_clist *l)
{
	lf_free(l, sizeof(*l), LF_CACHELINE);
}

/* Seed multi-engine-synchronization, "Copy and compute command lists":
 * "Compute command lists must set a compute PSO when calling
 * SetPipelineState"; copy lists have no SetPipelineState. */
int rt_clist_set_pipeline_state(struct rt_clist *l, const struct rt_pso *pso)
{
	const char *type = rt_list_type_name(l->type);
	if (!pso) {
		snprintf(l->err, sizeof(l->err), "%s list: SetPipelineState with no PSO", type);
		return -EINVAL;
	}
	if (!l->recording) {
		snprintf(l->err, sizeof(l->err), "SetPipelineState on a closed %s list: reset it first", type);
		return -EPERM;
	}
	if (l->type == RT_LIST_COPY) {
		snprintf(l->err, sizeof(l->err), "copy list: SetPipelineState('%s'): copy lists have no pipeline state",
			 pso->name ? pso->name : "");
		return -EINVAL;
	}
	if (l->type == RT_LIST_COMPUTE && pso->kind != RT_PSO_COMPUTE) {
		snprintf(l->err, sizeof(l->err),
			 "compute list: SetPipelineState('%s') with a %s PSO: compute command lists must set a compute PSO",
			 pso->name ? pso->name : "", rt_pso_kind_name(pso->kind));
		return -EINVAL;
	}
	l->pso = pso;
	return 0;
}

const struct rt_pso *rt_clist_pipeline_state(const struct rt_clist *l)
{
	return l->pso;
}

/* A dispatch on a compute list runs the compute PSO it set, and there must be one. */
static bool rt_clist_pso_missing(const struct rt_clist *l, enum rt_op op)
{
	return l->type == RT_LIST_COMPUTE && op == RT_OP_DISPATCH && (!l->pso || l->pso->kind != RT_PSO_COMPUTE);
}

int rt_clist_record(struct rt_clist *l, enum rt_op op, uint64_t ns, unsigned units)
{
	if ((unsigned)op >= RT_OPS || !rt_list_type_holds(l->type, op)) {
		char holds[64];
		rt_holds_text(l->type, holds, sizeof(holds));
		snprintf(l->err, sizeof(l->err), "%s list cannot hold a %s (%s lists hold: %s)",
			 rt_list_type_name(l->type), rt_op_name(op), rt_list_type_name(l->type), holds);
		return -EINVAL;
	}
	if (rt_clist_pso_missing(l, op)) {
		snprintf(l->err, sizeof(l->err),
			 "compute list: dispatch without a compute PSO: compute command lists must set a compute PSO "
			 "(SetPipelineState) first");
		return -EINVAL;
	}
	if (!units) {
		snprintf(l->err, sizeof(l->err), "%s of 0 units: a command has at least one", rt_op_name(op));
		return -EINVAL;
	}
	if (!l->recording) {
		snprintf(l->err, sizeof(l->err), "%s recorded into a closed %s list: reset it first",
			 rt_op_name(op), rt_list_type_name(l->type));
		return -EPERM;
	}
	if (l->n + 1 > RT_LIST_MAX_CMDS) {
		snprintf(l->err, sizeof(l->err), "%s list full: %zu of %d commands",
			 rt_list_type_name(l->type), l->n, RT_LIST_MAX_CMDS);
		return -ENOSPC;
	}
	/* one WORK of `units` sub-units (triangles of a draw, thread groups of
	 * a dispatch): the engine may stop at their edges as its granularity
	 * allows (gpu-model/hw/preempt.c); a dispatch follows the compute
	 * granularity, a draw or a copy the graphics one */
	l->cmds[l->n] = (struct hw_cmd){ .op = HW_CMD_WORK, .arg = ns, .value = units,
					 .pad = (op == RT_OP_DISPATCH ? HW_WORK_COMPUTE : HW_WORK_GRAPHICS) |
						l->tag << HW_CMD_TAG_SHIFT };
	l->ops[l->n++] = (uint8_t)op;
	l->work_ns += ns;
	return 0;
}

int rt_clist_copy(struct rt_clist *l, uint64_t ns)
{
	return rt_clist_record(l, RT_OP_COPY, ns, 1);
}

int rt_clist_dispatch(struct rt_clist *l, uint64_t ns)
{
	return rt_clist_record(l, RT_OP_DISPATCH, ns, 1);
}

int rt_clist_draw(struct rt_clist *l, uint64_t ns)
{
	return rt_clist_record(l, RT_OP_DRAW, ns, 1);
}

/* Seed multi-engine-synchronization: "Bundles cannot be used with compute
 * or copy command lists or queues", and "bundles are not consumed by any
 * queues": a bundle reaches the GPU only through a direct list's
 * ExecuteBundle, which records the bundle's commands into the list. */
static int rt_clist_bundle_refused(struct rt_clist *l, const struct rt_clist *b)
{
	const char *type = rt_list_type_name(l->type);
	if (l->type != RT_LIST_DIRECT) {
		snprintf(l->err, sizeof(l->err), "%s list: ExecuteBundle: bundles cannot be used with %s command lists "
			 "(only a direct list executes a bundle)", type, type);
		return -EINVAL;
	}
	if (b->type != RT_LIST_BUNDLE) {
		snprintf(l->err, sizeof(l->err), "direct list: ExecuteBundle of a %s list: only a bundle can be",
			 rt_list_type_name(b->type));
		return -EINVAL;
	}
	if (b->recording) {
		snprintf(l->err, sizeof(l->err), "direct list: ExecuteBundle of a bundle still recording: close it first");
		return -EBUSY;
	}
	if (!l->recording) {
		snprintf(l->err, sizeof(l->err), "ExecuteBundle into a closed direct list: reset it first");
		return -EPERM;
	}
	if (l->n + b->n > RT_LIST_MAX_CMDS || l->nuses + b->nuses > RT_LIST_MAX_USES) {
		snprintf(l->err, sizeof(l->err), "direct list full: %zu + the bundle's %zu of %d commands",
			 l->n, b->n, RT_LIST_MAX_CMDS);
		return -ENOSPC;
	}
	return 0;
}

int rt_clist_execute_bundle(struct rt_clist *l, const struct rt_clist *bundle)
{
	int rc = rt_clist_bundle_refused(l, bundle);
	if (rc)
		return rc;
	memcpy(&l->cmds[l->n], bundle->cmds, bundle->n * sizeof(bundle->cmds[0]));
	memcpy(&l->ops[l->n], bundle->ops, bundle->n * sizeof(bundle->ops[0]));
	l->n += bundle->n;
	l->work_ns += bundle->work_ns;
	memcpy(&l->uses[l->nuses], bundle->uses, bundle->nuses * sizeof(bundle->uses[0]));
	l->nuses += bundle->nuses;
	return 0;
}

int rt_clist_close(struct rt_clist *l)
{
	if (!l->recording) {
		snprintf(l->err, sizeof(l->err), "%s list closed twice", rt_list_type_name(l->type));
		return -EPERM;
	}
	l->recording = false;
	return 0;
}

/* The names of lists, by tag (1..): one table for the process, as lists
 * belong to no device.  Appended under the lock, never changed after. */
#define RT_NAME_TAGS 4096
static pthread_mutex_t rt_names_lock = PTHREAD_MUTEX_INITIALIZER;
static char *rt_names[RT_NAME_TAGS + 1];
static _Atomic uint32_t rt_nnames;

/* The tag of name (a new one for a new name); 0 when the table is full. */
static uint32_t rt_name_tag(const char *name)
{
	pthread_mutex_lock(&rt_names_lock);
	uint32_t n = atomic_load_explicit(&rt_nnames, memory_order_relaxed), tag = 0;
	for (uint32_t i = 1; i <= n && !tag; i++)
		if (!strcmp(rt_names[i], name))
			tag = i;
	if (!tag && n < RT_NAME_TAGS && (rt_names[n + 1] = strdup(name))) {
		tag = n + 1;
		/* release: a reader that sees the count sees the name */
		atomic_store_explicit(&rt_nnames, tag, memory_order_release);
	}
	pthread_mutex_unlock(&rt_names_lock);
	return tag;
}

const char *rt_tag_name(uint32_t tag)
{
	/* acquire: pairs with rt_name_tag's release */
	if (!tag || tag > atomic_load_explicit(&rt_nnames, memory_order_acquire))
		return NULL;
	return rt_names[tag];
}

int rt_clist_set_name(struct rt_clist *l, const char *name)
{
	uint32_t tag = rt_name_tag(name);
	if (!tag)
		return -ENOSPC;
	_Static_assert(RT_NAME_TAGS <= HW_CMD_TAG_MAX, "a tag fits a WORK's pad");
	l->tag = tag;
	for (size_t i = 0; i < l->n; i++)   /* what it recorded already carries it too */
		l->cmds[i].pad = (l->cmds[i].pad & ~(HW_CMD_TAG_MAX << HW_CMD_TAG_SHIFT)) | tag << HW_CMD_TAG_SHIFT;
	return 0;
}

void rt_clist_reset(struct rt_clist *l)
{
	if (l->exec_debug)
		rt_debug_list_reset(l->exec_debug, l);   /* d3d_debug.h: re-recorded in flight? */
	l->n = 0;
	l->nuses = 0;
	l->work_ns = 0;
	l->pso = NULL;                  /* Reset with no initial state */
	l->recording = true;
	l->err[0] = 0;
}

bool rt_clist_recording(const struct rt_clist *l)
{
	return l->recording;
}

enum rt_list_type rt_clist_type(const struct rt_clist *l)
{
	return l->type;
}

size_t rt_clist_cmds(const struct rt_clist *l)
{
	return l->n;
}

uint64_t rt_clist_work_ns(const struct rt_clist *l)
{
	return l->work_ns;
}

const char *rt_clist_error(const struct rt_clist *l)
{
	return l->err;
}
