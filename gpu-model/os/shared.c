/* gpu-model/os/shared.c — shared fences: processes, local handles.  The DDI log is in ddi.c.
 *
 * Seed (native-gpu-fence, "Global and local handles for shared fences"): a
 * shared fence has one global handle (the fence's own, in the adapter's
 * handle table, the one interrupt payloads name) and a local handle per
 * process that has it open.  The fence counts its open local handles; the
 * last close destroys it (DxgkDdiCloseNativeFence of that local handle, then
 * DxgkDdiDestroyNativeFence of the global one, from os_fence_destroy).
 *
 * A process's local handles live in its own lock-free table (lockfree/htab.h):
 * lookups are RCU reads, and a closed handle's record is freed after a grace
 * period, so a lookup racing a close sees the record or nothing.  A list (under
 * the process's mutex) keeps the opening order for process exit.
 *
 * Open against the last close: the fence's count is raised only from a
 * non-zero value (CAS), inside the read-side section in which the global
 * handle was found, so an open either takes its reference before the count
 * reaches zero or fails with -ENOENT; the fence's memory outlives the section.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu-model/os/os_internal.h"
#include "lockfree/alloc.h"

/* f->opens: this bit marks a fence created through os_shared_fence_create;
 * the rest counts its open local handles. */
#define OS_OPENS_MANAGED (1u << 31)
#define OS_OPENS_COUNT(v) ((v) & ~OS_OPENS_MANAGED)
#define OS_LOCAL_HANDLE_BIT (1ull << 63)

struct os_local {
	uint64_t handle;
	struct os_fence *f;
	struct os_local *prev, *next;   /* the process's list, in opening order (p->lock) */
};

struct os_process {
	uint64_t id;
	struct lf_htab *locals;         /* local handle -> struct os_local (RCU lookups) */
	pthread_mutex_t lock;           /* the list */
	struct os_local *head, *tail;
	_Atomic size_t n;               /* local handles open */
};

static _Atomic uint64_t os_process_ids = 1;

/* ---- processes ---- */

int os_process_create(struct os_process **out)
{
	struct os_process *p = lf_alloc(sizeof(*p), LF_CACHELINE);
	p->locals = lf_htab_create(64);
	if (!p->locals) {
		lf_free(p, sizeof(*p), LF_CACHELINE);
		return -ENOMEM;
	}
	p->id = atomic_fetch_add(&os_process_ids, 1);
	pthread_mutex_init(&p->lock, NULL);
	*out = p;
	return 0;
}

void os_process_destroy(struct os_process *p)
{
	if (!p)
		return;
	/* process exit: the OS closes what the process left open, oldest first */
	for (;;) {
		pthread_mutex_lock(&p->lock);
		bool any = p->head != NULL;
		uint64_t h = any ? p->head->handle : 0;
		pthread_mutex_unlock(&p->lock);
		if (!any)
			break;
		os_shared_fence_close(p, h);
	}
	os_rcu_enter();
	lf_htab_destroy(p->locals, NULL);   /* waits for the deferred frees of closed records */
	os_rcu_leave();
	pthread_mutex_destroy(&p->lock);
	lf_free(p, sizeof(*p), LF_CACHELINE);
}

uint64_t os_process_id(const struct os_process *p)
{
	return p->id;
}

size_t os_process_handles(const struct os_process *p)
{
	return atomic_load_explicit(&p->n, memory_order_relaxed);
}

static void os_local_free(void *obj)
{
	lf_free(obj, sizeof(struct os_local), LF_CACHELINE);
}

/* A new local handle of p for f (f's count already includes it):
 * DxgkDdiOpenNativeFence, then the handle resolves.  Registered thread. */
static void os_local_add(struct os_process *p, struct os_fence *f, uint64_t *local)
{
	struct os_local *l = lf_alloc(sizeof(*l), LF_CACHELINE);
	/* unique across processes (the process id in the high half) and never
	 * equal to a global handle (those have the top bit clear) */
	l->handle = OS_LOCAL_HANDLE_BIT | ((p->id & 0x7fffffffu) << 32) | (lf_htab_new_key(p->locals) & UINT32_MAX);
	l->f = f;
	if (f->type == OS_FENCE_NATIVE)
		os_kmd_open_native_fence(f->a, f->hw.handle, l->handle);
	pthread_mutex_lock(&p->lock);
	l->prev = p->tail;
	if (p->tail)
		p->tail->next = l;
	else
		p->head = l;
	p->tail = l;
	pthread_mutex_unlock(&p->lock);
	atomic_fetch_add_explicit(&p->n, 1, memory_order_relaxed);
	lf_htab_insert(p->locals, l->handle, l);   /* fresh key: cannot collide */
	*local = l->handle;
}

/* ---- shared fences ---- */

int os_shared_fence_create(struct os_process *p, struct os_adapter *a, enum os_fence_type type,
			   uint64_t initial, unsigned flags, uint64_t *local)
{
	struct os_fence *f;
	/* DxgkDdiCreateNativeFence (global) is os_fence_create's */
	int rc = os_fence_create(a, type, initial, flags | OS_FENCE_SHARED, &f);
	if (rc)
		return rc;
	/* nobody else knows the global handle yet: a plain store suffices; the
	 * release orders it before the handle is handed to other threads */
	atomic_store_explicit(&f->opens, OS_OPENS_MANAGED | 1u, memory_order_release);
	os_rcu_enter();
	os_local_add(p, f, local);
	os_rcu_leave();
	return 0;
}

/* Take a reference for a new local handle: only while others hold one. */
static int os_opens_get(struct os_fence *f)
{
	uint32_t v = atomic_load_explicit(&f->opens, memory_order_acquire);
	for (;;) {
		if (!(v & OS_OPENS_MANAGED))
			return -EPERM;
		if (OS_OPENS_COUNT(v) == 0)
			return -ENOENT;          /* its last handle is being closed */
		/* acq_rel: ordered against the closer's fetch-sub, so exactly one
		 * side sees the count reach zero */
		if (atomic_compare_exchange_weak_explicit(&f->opens, &v, v + 1,
							  memory_order_acq_rel, memory_order_acquire))
			return 0;
	}
}

int os_shared_fence_open(struct os_process *p, struct os_adapter *a, uint64_t global, uint64_t *local)
{
	os_rcu_enter();
	lf_htab_read_lock();
	/* the fence found here stays in memory until the unlock below */
	struct os_fence *f = lf_htab_lookup(a->handles, global);
	int rc = f ? os_opens_get(f) : -ENOENT;
	lf_htab_read_unlock();
	/* with our reference taken, the fence lives until our close */
	if (!rc)
		os_local_add(p, f, local);
	os_rcu_leave();
	return rc;
}

int os_shared_fence_close(struct os_process *p, uint64_t local)
{
	os_rcu_enter();
	lf_htab_read_lock();
	struct os_local *l = lf_htab_lookup(p->locals, local);
	/* of two racing closes of one handle, only the remove that wins goes on */
	if (!l || lf_htab_remove(p->locals, local, os_local_free)) {
		lf_htab_read_unlock();
		os_rcu_leave();
		return -ENOENT;
	}
	struct os_fence *f = l->f;
	pthread_mutex_lock(&p->lock);
	if (l->prev)
		l->prev->next = l->next;
	else
		p->head = l->next;
	if (l->next)
		l->next->prev = l->prev;
	else
		p->tail = l->prev;
	pthread_mutex_unlock(&p->lock);
	lf_htab_read_unlock();          /* l is not touched after this: freed after a grace period */
	atomic_fetch_sub_explicit(&p->n, 1, memory_order_relaxed);
	if (f->type == OS_FENCE_NATIVE)
		os_kmd_close_native_fence(f->a, local, f->hw.handle);
	/* acq_rel: the last closer sees every other handle's use of f */
	if (OS_OPENS_COUNT(atomic_fetch_sub_explicit(&f->opens, 1, memory_order_acq_rel)) == 1)
		os_fence_destroy(f);    /* DxgkDdiDestroyNativeFence; the global handle stops resolving */
	os_rcu_leave();
	return 0;
}

struct os_fence *os_process_fence(struct os_process *p, uint64_t local)
{
	os_rcu_enter();
	lf_htab_read_lock();
	struct os_local *l = lf_htab_lookup(p->locals, local);
	struct os_fence *f = l ? l->f : NULL;
	lf_htab_read_unlock();
	os_rcu_leave();
	return f;
}
