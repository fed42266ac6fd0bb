/* gpu-model/runtime/d3d_debug.c — the multi-queue resource access validation
 * layer: resource states per queue type class, and races found with vector
 * clocks over the queue timelines and the CPU.  Contract in d3d_debug.h. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu-model/runtime/d3d_debug.h"
#include "gpu-model/runtime/d3d_internal.h"
#include "gpu-model/runtime/rt.h"
#include "lockfree/die.h"

#define RT_TL (RT_DEBUG_QUEUES + 1)     /* queue timelines, then the CPU */
#define RT_CPU RT_DEBUG_QUEUES

struct rt_vclock {
	uint64_t c[RT_TL];
};

enum rt_op_kind { RT_DOP_ACCESS, RT_DOP_BARRIER, RT_DOP_SIGNAL, RT_DOP_WAIT, RT_DOP_END };

struct rt_dop {
	uint8_t kind;
	bool write;
	uint8_t state, after;
	struct rt_resource *res;
	struct rt_fence *f;
	uint64_t value;
	uint64_t exec;                  /* the queue's execute number */
	struct rt_vclock cpu;           /* the CPU's clock when recorded */
};

struct rt_timeline {
	char name[32];
	bool copy_class;
	struct rt_vclock vc;
	struct rt_dop *ops;             /* FIFO: ops[head..n) not replayed yet */
	size_t head, n, cap;
};

struct rt_sig {
	uint64_t value;
	struct rt_vclock vc;
};

struct rt_fence_rec {
	struct rt_fence *f;
	struct rt_sig sigs[RT_DEBUG_SIGNALS];   /* a ring of the last signals, oldest at next when full */
	size_t n, next;
};

struct rt_resource {
	char name[32];
	enum rt_state state;
	bool copy_class_state;          /* a COPY_* state set by a copy queue */
	int promoted_tl;                /* promoted from COMMON by this execute (decays at its end); -1 none */
	uint64_t promoted_exec;
	bool has_write;
	int write_tl;
	uint64_t write_epoch, write_exec;
	uint64_t read_epoch[RT_TL], read_exec[RT_TL];
	struct rt_resource *next;
};

struct rt_debug {
	pthread_mutex_t lock;
	struct rt_timeline tl[RT_DEBUG_QUEUES];
	int ntl;
	struct rt_vclock cpu;
	struct rt_fence_rec *fences;
	size_t nf, capf;
	struct rt_resource *res;
	size_t errors;
	char msg[RT_DEBUG_MESSAGES][224];
	struct rt_debug_resets resets;  /* rt_debug_list_reset's counts */
	char reset_msg[224];            /* its last report */
};

const char *rt_state_name(enum rt_state s)
{
	static const char *const names[RT_STATES] = { "COMMON", "COPY_SOURCE", "COPY_DEST", "SHADER_RESOURCE",
						      "UNORDERED_ACCESS", "RENDER_TARGET" };
	return (unsigned)s < RT_STATES ? names[s] : "?";
}

static bool rt_state_copy(enum rt_state s)
{
	return s == RT_STATE_COPY_SOURCE || s == RT_STATE_COPY_DEST;
}

/* ---- lifetime ---- */

int rt_debug_create(struct rt_debug **out)
{
	struct rt_debug *v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	pthread_mutex_init(&v->lock, NULL);
	v->cpu.c[RT_CPU] = 1;
	*out = v;
	return 0;
}

void rt_debug_destroy(struct rt_debug *v)
{
	for (struct rt_resource *r = v->res, *next; r; r = next) {
		next = r->next;
		free(r);
	}
	for (int t = 0; t < v->ntl; t++)
		free(v->tl[t].ops);
	free(v->fences);
	pthread_mutex_destroy(&v->lock);
	free(v);
}

int rt_resource_create(struct rt_debug *v, const char *name, enum rt_state initial, struct rt_resource **out)
{
	if ((unsigned)initial >= RT_STATES)
		return -EINVAL;
	struct rt_resource *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	snprintf(r->name, sizeof(r->name), "%s", name ? name : "resource");
	r->state = initial;
	r->promoted_tl = -1;
	pthread_mutex_lock(&v->lock);
	r->next = v->res;
	v->res = r;
	pthread_mutex_unlock(&v->lock);
	*out = r;
	return 0;
}

/* ---- reports ---- */

__attribute__((format(printf, 2, 3))) static void rt_debug_report_locked(struct rt_debug *v, const char *fmt, ...)
{
	if (v->errors < RT_DEBUG_MESSAGES) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(v->msg[v->errors], sizeof(v->msg[0]), fmt, ap);
		va_end(ap);
	}
	v->errors++;
}

size_t rt_debug_errors(struct rt_debug *v)
{
	pthread_mutex_lock(&v->lock);
	size_t n = v->errors;
	pthread_mutex_unlock(&v->lock);
	return n;
}

void rt_debug_message(struct rt_debug *v, size_t i, char *buf, size_t len)
{
	pthread_mutex_lock(&v->lock);
	snprintf(buf, len, "%s", i < v->errors && i < RT_DEBUG_MESSAGES ? v->msg[i] : "");
	pthread_mutex_unlock(&v->lock);
}

/* ---- re-recording a list in flight ---- */

void rt_debug_list_reset(struct rt_debug *v, const struct rt_clist *l)
{
#ifdef RT_BROKEN_NO_RESET_CHECK
	return;                         /* broken on purpose, build-time only (mk/model-broken.mk): no check */
#endif
	/* the queue's progress fence: every execution up to that value is done */
	uint64_t done = rt_queue_completed(l->exec_q);
	if (done >= l->exec_done)
		return;                 /* its last execution completed: nothing to say */
	pthread_mutex_lock(&v->lock);
	v->resets.in_flight++;
	bool older = done < l->exec_prev_done;
	if (older)
		v->resets.older_in_flight++;
	snprintf(v->reset_msg, sizeof(v->reset_msg), "list reset while its execution on %s is in flight%s",
		 l->exec_what, older ? ", and an earlier execution of that queue too" : "");
	pthread_mutex_unlock(&v->lock);
}

void rt_debug_resets(struct rt_debug *v, struct rt_debug_resets *out, char *msg, size_t len)
{
	pthread_mutex_lock(&v->lock);
	*out = v->resets;
	if (msg)
		snprintf(msg, len, "%s", v->reset_msg);
	pthread_mutex_unlock(&v->lock);
}

/* ---- vector clocks and fences ---- */

static void rt_vc_join(struct rt_vclock *a, const struct rt_vclock *b)
{
	for (int i = 0; i < RT_TL; i++)
		if (b->c[i] > a->c[i])
			a->c[i] = b->c[i];
}

static struct rt_fence_rec *rt_fence_rec_locked(struct rt_debug *v, struct rt_fence *f)
{
	for (size_t i = 0; i < v->nf; i++)
		if (v->fences[i].f == f)
			return &v->fences[i];
	if (v->nf == v->capf) {
		size_t cap = v->capf ? 2 * v->capf : 8;
		struct rt_fence_rec *n = realloc(v->fences, cap * sizeof(*n));
		if (!n)
			lf_die("validation layer: no memory for %zu fences", cap);
		v->fences = n;
		v->capf = cap;
	}
	struct rt_fence_rec *r = &v->fences[v->nf++];
	memset(r, 0, sizeof(*r));
	r->f = f;
	return r;
}

static void rt_fence_rec_add(struct rt_fence_rec *r, uint64_t value, const struct rt_vclock *vc)
{
	struct rt_sig *s = &r->sigs[r->next];
	s->value = value;
	s->vc = *vc;
	r->next = (r->next + 1) % RT_DEBUG_SIGNALS;
	if (r->n < RT_DEBUG_SIGNALS)
		r->n++;
}

/* The first kept signal (oldest first) that reaches value, or NULL. */
static const struct rt_sig *rt_fence_rec_find(const struct rt_fence_rec *r, uint64_t value)
{
	size_t first = r->n < RT_DEBUG_SIGNALS ? 0 : r->next;
	for (size_t k = 0; k < r->n; k++) {
		const struct rt_sig *s = &r->sigs[(first + k) % RT_DEBUG_SIGNALS];
		if (s->value >= value)
			return s;
	}
	return NULL;
}

/* ---- replay: states and races ---- */

static const char *rt_tl_name(struct rt_debug *v, int t)
{
	return t == RT_CPU ? "cpu" : v->tl[t].name;
}

static void rt_check_state_locked(struct rt_debug *v, int t, const struct rt_dop *op)
{
	struct rt_timeline *q = &v->tl[t];
	struct rt_resource *r = op->res;
	enum rt_state s = (enum rt_state)op->state;
	if (q->copy_class) {
		/* COMMON serves every copy use (implicit transitions); a copy-class
		 * COPY_* state serves its own use only: COPY_SOURCE and COPY_DEST
		 * are different states in the copy class as in the other */
		if (r->state == RT_STATE_COMMON || (rt_state_copy(r->state) && r->copy_class_state && r->state == s))
			return;
		if (rt_state_copy(r->state) && r->copy_class_state)
			rt_debug_report_locked(v, "%s (execute #%llu) uses %s as %s on a copy queue while it is in %s of "
					       "the copy class: no barrier moves it", q->name, (unsigned long long)op->exec,
					       r->name, rt_state_name(s), rt_state_name(r->state));
		else
			rt_debug_report_locked(v, "%s (execute #%llu) uses %s on a copy queue while it is in %s of the "
					       "compute/3D class: a copy queue uses COMMON or copy-class COPY_* states",
					       q->name, (unsigned long long)op->exec, r->name, rt_state_name(r->state));
		return;
	}
	if (r->state == s && !(rt_state_copy(s) && r->copy_class_state))
		return;
	if (r->state == RT_STATE_COMMON &&
	    (s == RT_STATE_COPY_SOURCE || s == RT_STATE_COPY_DEST || s == RT_STATE_SHADER_RESOURCE)) {
		r->state = s;                   /* implicit promotion; decays at the execute's end */
		r->copy_class_state = false;
		r->promoted_tl = t;
		r->promoted_exec = op->exec;
		return;
	}
	rt_debug_report_locked(v, "%s (execute #%llu) uses %s as %s while it is in %s%s: no barrier moves it",
			       q->name, (unsigned long long)op->exec, r->name, rt_state_name(s),
			       rt_state_name(r->state), r->copy_class_state ? " of the copy class" : "");
}

static void rt_race_locked(struct rt_debug *v, int t, const struct rt_dop *op, int other, uint64_t other_exec,
			   bool other_write)
{
	rt_debug_report_locked(v, "race on %s: %s (execute #%llu) %s it while %s (execute #%llu) %s it; "
			       "no fence orders them", op->res->name, v->tl[t].name, (unsigned long long)op->exec,
			       op->write ? "writes" : "reads", rt_tl_name(v, other), (unsigned long long)other_exec,
			       other_write ? "writes" : "reads");
}

static void rt_check_race_locked(struct rt_debug *v, int t, const struct rt_dop *op)
{
	struct rt_resource *r = op->res;
	const struct rt_vclock *vc = &v->tl[t].vc;
	uint64_t epoch = vc->c[t];
	if (r->has_write && r->write_tl != t && vc->c[r->write_tl] < r->write_epoch)
		rt_race_locked(v, t, op, r->write_tl, r->write_exec, true);
	if (op->write)
		for (int o = 0; o < RT_TL; o++)
			if (o != t && r->read_epoch[o] && vc->c[o] < r->read_epoch[o])
				rt_race_locked(v, t, op, o, r->read_exec[o], false);
	if (op->write) {
		r->has_write = true;
		r->write_tl = t;
		r->write_epoch = epoch;
		r->write_exec = op->exec;
		memset(r->read_epoch, 0, sizeof(r->read_epoch));
	} else {
		r->read_epoch[t] = epoch;
		r->read_exec[t] = op->exec;
	}
}

static void rt_barrier_locked(struct rt_debug *v, int t, const struct rt_dop *op)
{
	struct rt_timeline *q = &v->tl[t];
	struct rt_resource *r = op->res;
	enum rt_state before = (enum rt_state)op->state, after = (enum rt_state)op->after;
	if (q->copy_class && after != RT_STATE_COMMON && !rt_state_copy(after)) {
		rt_debug_report_locked(v, "%s (execute #%llu): barrier moves %s to %s on a copy queue (copy queues "
				       "hold COMMON, COPY_SOURCE, COPY_DEST)", q->name, (unsigned long long)op->exec,
				       r->name, rt_state_name(after));
		return;
	}
	bool same_class = !rt_state_copy(before) || r->copy_class_state == q->copy_class;
	if (r->state != before || !same_class)
		rt_debug_report_locked(v, "%s (execute #%llu): barrier moves %s from %s, but it is in %s%s", q->name,
				       (unsigned long long)op->exec, r->name, rt_state_name(before),
				       rt_state_name(r->state), r->copy_class_state ? " of the copy class" : "");
	r->state = after;
	r->copy_class_state = q->copy_class && rt_state_copy(after);
	r->promoted_tl = -1;
}

static void rt_end_locked(struct rt_debug *v, int t, const struct rt_dop *op)
{
	for (struct rt_resource *r = v->res; r; r = r->next)
		if (r->promoted_tl == t && r->promoted_exec == op->exec) {
			r->state = RT_STATE_COMMON;   /* promoted read states decay */
			r->promoted_tl = -1;
		}
}

/* Replay one operation of timeline t; false: a Wait no signal satisfies yet. */
static bool rt_replay_locked(struct rt_debug *v, int t, const struct rt_dop *op)
{
	struct rt_timeline *q = &v->tl[t];
	rt_vc_join(&q->vc, &op->cpu);
	switch (op->kind) {
	case RT_DOP_WAIT: {
		const struct rt_sig *s = rt_fence_rec_find(rt_fence_rec_locked(v, op->f), op->value);
		if (!s)
			return false;
		rt_vc_join(&q->vc, &s->vc);
		return true;
	}
	case RT_DOP_SIGNAL:
		rt_fence_rec_add(rt_fence_rec_locked(v, op->f), op->value, &q->vc);
		q->vc.c[t]++;
		return true;
	case RT_DOP_ACCESS:
		rt_check_state_locked(v, t, op);
		rt_check_race_locked(v, t, op);
		return true;
	case RT_DOP_BARRIER:
		rt_barrier_locked(v, t, op);
		return true;
	default:
		rt_end_locked(v, t, op);
		return true;
	}
}

static void rt_pump_locked(struct rt_debug *v)
{
	for (bool progress = true; progress;) {
		progress = false;
		for (int t = 0; t < v->ntl; t++) {
			struct rt_timeline *q = &v->tl[t];
			while (q->head < q->n && rt_replay_locked(v, t, &q->ops[q->head])) {
				q->head++;
				progress = true;
			}
			if (q->head == q->n)
				q->head = q->n = 0;
		}
	}
}

static void rt_push_locked(struct rt_debug *v, int t, const struct rt_dop *op)
{
	struct rt_timeline *q = &v->tl[t];
	if (q->n == q->cap) {
		if (q->head) {
			memmove(q->ops, q->ops + q->head, (q->n - q->head) * sizeof(*q->ops));
			q->n -= q->head;
			q->head = 0;
		}
		if (q->n == q->cap) {
			size_t cap = q->cap ? 2 * q->cap : 64;
			struct rt_dop *n = realloc(q->ops, cap * sizeof(*n));
			if (!n)
				lf_die("validation layer: no memory for %zu operations", cap);
			q->ops = n;
			q->cap = cap;
		}
	}
	struct rt_dop *o = &q->ops[q->n++];
	*o = *op;
	o->cpu = v->cpu;
}

/* ---- hooks of the queues (d3d_queue.c) ---- */

int rt_debug_add_queue(struct rt_debug *v, const char *name, enum rt_list_type type)
{
	pthread_mutex_lock(&v->lock);
	int t = v->ntl < RT_DEBUG_QUEUES ? v->ntl++ : -ENOSPC;
	if (t >= 0) {
		struct rt_timeline *q = &v->tl[t];
		snprintf(q->name, sizeof(q->name), "%s", name);
		q->copy_class = type == RT_LIST_COPY;
		q->vc.c[t] = 1;
	}
	pthread_mutex_unlock(&v->lock);
	return t;
}

void rt_debug_execute(struct rt_debug *v, int t, struct rt_clist *const *lists, size_t n, uint64_t exec)
{
	pthread_mutex_lock(&v->lock);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < lists[i]->nuses; k++) {
			const struct rt_clist_use *u = &lists[i]->uses[k];
			struct rt_dop op = { .kind = u->barrier ? RT_DOP_BARRIER : RT_DOP_ACCESS, .write = u->write,
					     .state = u->state, .after = u->after, .res = u->res, .exec = exec };
			rt_push_locked(v, t, &op);
		}
	rt_push_locked(v, t, &(struct rt_dop){ .kind = RT_DOP_END, .exec = exec });
	rt_pump_locked(v);
	pthread_mutex_unlock(&v->lock);
}

void rt_debug_signal(struct rt_debug *v, int t, struct rt_fence *f, uint64_t value)
{
	pthread_mutex_lock(&v->lock);
	rt_push_locked(v, t, &(struct rt_dop){ .kind = RT_DOP_SIGNAL, .f = f, .value = value });
	rt_pump_locked(v);
	pthread_mutex_unlock(&v->lock);
}

void rt_debug_wait(struct rt_debug *v, int t, struct rt_fence *f, uint64_t value)
{
	pthread_mutex_lock(&v->lock);
	rt_push_locked(v, t, &(struct rt_dop){ .kind = RT_DOP_WAIT, .f = f, .value = value });
	rt_pump_locked(v);
	pthread_mutex_unlock(&v->lock);
}

/* ---- the CPU timeline ---- */

void rt_debug_cpu_signal(struct rt_debug *v, struct rt_fence *f, uint64_t value)
{
	pthread_mutex_lock(&v->lock);
	rt_fence_rec_add(rt_fence_rec_locked(v, f), value, &v->cpu);
	v->cpu.c[RT_CPU]++;
	rt_pump_locked(v);
	pthread_mutex_unlock(&v->lock);
}

void rt_debug_cpu_waited(struct rt_debug *v, struct rt_fence *f, uint64_t value)
{
	pthread_mutex_lock(&v->lock);
	rt_pump_locked(v);
	const struct rt_sig *s = rt_fence_rec_find(rt_fence_rec_locked(v, f), value);
	if (s)
		rt_vc_join(&v->cpu, &s->vc);
	pthread_mutex_unlock(&v->lock);
}

int rt_debug_present(struct rt_debug *v, struct rt_resource *r)
{
	pthread_mutex_lock(&v->lock);
	rt_pump_locked(v);
	int rc = 0;
	if (r->state != RT_STATE_COMMON) {
		rt_debug_report_locked(v, "%s presented in %s: a presented back buffer must be in COMMON", r->name,
				       rt_state_name(r->state));
		rc = -EINVAL;
	}
	pthread_mutex_unlock(&v->lock);
	return rc;
}

size_t rt_debug_pending(struct rt_debug *v)
{
	pthread_mutex_lock(&v->lock);
	size_t n = 0;
	for (int t = 0; t < v->ntl; t++)
		n += v->tl[t].n - v->tl[t].head;
	pthread_mutex_unlock(&v->lock);
	return n;
}

/* ---- declaring uses in lists ---- */

static int rt_clist_use(struct rt_clist *l, const struct rt_clist_use *u)
{
	if (!l->recording)
		return -EPERM;
	if (l->nuses == RT_LIST_MAX_USES)
		return -ENOSPC;
	l->uses[l->nuses++] = *u;
	return 0;
}

int rt_clist_access(struct rt_clist *l, struct rt_resource *r, enum rt_state s, bool write)
{
	if (!r || (unsigned)s >= RT_STATES)
		return -EINVAL;
	return rt_clist_use(l, &(struct rt_clist_use){ .res = r, .state = (uint8_t)s, .write = write });
}

int rt_clist_barrier(struct rt_clist *l, struct rt_resource *r, enum rt_state before, enum rt_state after)
{
	if (!r || (unsigned)before >= RT_STATES || (unsigned)after >= RT_STATES)
		return -EINVAL;
	return rt_clist_use(l, &(struct rt_clist_use){ .res = r, .barrier = true, .state = (uint8_t)before,
						       .after = (uint8_t)after });
}
