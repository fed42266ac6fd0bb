/* gpu-model/os/vidmm.c — the video memory manager's part in preemption
 * (seed gpu-preemption, step 7): "When preparing the DMA buffer in response
 * to a call to the DxgkDdiBuildPagingBuffer function, initialize the context
 * resource by filling in the InitContextResource internal structure ... If
 * context resources are evicted or relocated, the video memory manager will
 * preserve the content of the context resources."  Contract in os.h ("the
 * video memory manager").
 *
 * With caps.ctx_local_slots, every context allocation lives in local memory
 * (one image per slot, hw/segment.c) while resident.  Making one resident
 * takes a free slot, or evicts the least recently used allocation whose
 * context is off the engine (an allocation that is loaded on the GPU, or a
 * device context allocation, is never a victim).  What moves an image is a
 * paging buffer (DxgkDdiBuildPagingBuffer analog: HW_CMD_PAGING, in the DDI
 * log) on the paging queue, the system context on engine 0, which has no
 * context allocation of its own; the OS waits for its fence.  A first
 * residency initializes the image (InitContextResource); an eviction copies
 * it to the system-memory aperture; bringing it back or relocating it
 * copies it to its new local address.  A queue whose allocation is evicted
 * is off the run list until it is resident again: the video memory
 * manager's own hold (hw_queue_hold, HW_HOLD_VIDMM), apart from the OS's
 * context suspension (HW_HOLD_OS, under the OS's lock), so that bringing an
 * allocation back never puts a suspended context's queue on the run list,
 * nor a resume an evicted one.  One lock for all; the TDR watchdog takes it
 * watching the engines (a holder may wait for a paging buffer behind a hung
 * engine only the watchdog can reset).
 * Calls hw/ and queue.c, fence.c.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu-model/hw/doorbell.h"
#include "gpu-model/os/os_internal.h"
#include "lockfree/die.h"

#define OS_VIDMM_WAIT_NS 10000000000ll
#define OS_PAGING_PRIORITY (INT32_MAX - 1)       /* above every queue; below a TDR's request */   /* a paging buffer completes within 10 s or the model is broken */

struct os_vidmm_alloc {
	struct hw_ctx_alloc *c;
	struct hw_queue *q;              /* its context's queue (NULL: a device context allocation) */
	uint32_t local, sys;             /* its slots (UINT32_MAX: none) */
	uint64_t used;                   /* LRU stamp */
	bool parked;                     /* evicted: its queue off the run list until it is back */
	struct os_vidmm_alloc *next;
};

struct os_vidmm {
	pthread_mutex_t lock;
	struct os_queue *pq;             /* the paging queue (the system context) */
	struct os_fence *pf;             /* its fence */
	uint64_t pv, clock;
	struct os_vidmm_alloc **local, **sys;   /* slot owners */
	uint32_t nlocal, nsys;
	struct os_vidmm_alloc *allocs;
	struct os_vidmm_stats st;
};

int os_vidmm_init(struct os_adapter *a)
{
	const struct hw_caps *caps = hw_adapter_caps(a->hw);
	if (!caps->ctx_local_slots)
		return 0;
	struct os_vidmm *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->nlocal = caps->ctx_local_slots;
	m->nsys = caps->ctx_system_slots ? caps->ctx_system_slots : HW_CTX_SYSTEM_SLOTS_DEFAULT;
	m->local = calloc(m->nlocal, sizeof(*m->local));
	m->sys = calloc(m->nsys, sizeof(*m->sys));
	pthread_mutex_init(&m->lock, NULL);
	a->vidmm = m;
	if (!m->local || !m->sys)
		return -ENOMEM;
	return 0;
}

void os_vidmm_destroy(struct os_adapter *a)
{
	struct os_vidmm *m = a->vidmm;
	if (!m)
		return;
	while (m->allocs) {
		struct os_vidmm_alloc *v = m->allocs;
		m->allocs = v->next;
		free(v);
	}
	free(m->local);
	free(m->sys);
	pthread_mutex_destroy(&m->lock);
	free(m);
	a->vidmm = NULL;
}

/* The paging queue and its fence, made on first use (the adapter runs by then). */
static int os_vidmm_paging_queue_locked(struct os_adapter *a, struct os_vidmm *m)
{
	if (m->pq)
		return 0;
	if (!a->irq_started)
		return -EAGAIN;
	int rc = os_queue_create_system(a, 0, 64, &m->pq);
	if (!rc)
		rc = os_fence_create(a, OS_FENCE_NATIVE, 0, 0, &m->pf);
	if (!rc)   /* paging comes first: it preempts whatever runs */
		hw_queue_set_priority(m->pq->hwq, OS_PAGING_PRIORITY);
	return rc;
}

/* Run one paging operation on the paging queue and wait for it. */
static int os_vidmm_page_locked(struct os_adapter *a, struct os_vidmm *m, enum hw_paging_op op, uint64_t dst,
				uint64_t src)
{
	int rc = os_vidmm_paging_queue_locked(a, m);
	if (rc)
		return rc;
	struct hw_cmd b[2] = {
		{ .op = HW_CMD_PAGING, .pad = op, .arg = dst, .value = src },
		{ .op = HW_CMD_SIGNAL, .fence = os_fence_hw(m->pf), .value = ++m->pv },
	};
	os_ddi_log(a, OS_DDI_BUILD_PAGING_BUFFER, op, dst);
	uint64_t id;
	rc = os_queue_submit_buffer(m->pq, b, 2, true, &id);
	if (!rc) {
		/* kernel-mode work that outranks what runs: DxgkDdiPreemptCommand */
		hw_engine_preempt(a->hw, 0, OS_PAGING_PRIORITY);
		os_ddi_log(a, OS_DDI_PREEMPT_COMMAND, 0, OS_PAGING_PRIORITY);
	}
	if (!rc)
		rc = os_fence_wait_cpu(m->pf, m->pv, OS_VIDMM_WAIT_NS);
	if (rc)
		lf_die("vidmm: paging buffer %u to %#llx: %d", (unsigned)op, (unsigned long long)dst, rc);
	m->st.paging_buffers++;
	return 0;
}

static uint32_t os_vidmm_free_slot(struct os_vidmm_alloc **slots, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (!slots[i])
			return i;
	return UINT32_MAX;
}

static struct os_vidmm_alloc *os_vidmm_find(struct os_vidmm *m, const struct hw_ctx_alloc *c)
{
	for (struct os_vidmm_alloc *v = m->allocs; v; v = v->next)
		if (v->c == c)
			return v;
	return NULL;
}

/* Take v's queue off the engine for a move: off the run list, its context
 * not loaded on the GPU.  False: it cannot move now (its queue suspended by
 * someone else, or its context on the GPU). */
static bool os_vidmm_park(struct os_adapter *a, struct os_vidmm_alloc *v)
{
	if (!v->q)
		return true;           /* a device allocation: its contexts are the caller's care */
	if (!hw_queue_scheduled(v->q))
		return false;
	unsigned e = hw_queue_engine(v->q);
	if (hw_engine_context(a->hw, e) == v->q)
		return false;
	hw_queue_hold(v->q, HW_HOLD_VIDMM, true);   /* waits until the engine is out of it */
	if (hw_engine_context(a->hw, e) == v->q) {
		hw_queue_hold(v->q, HW_HOLD_VIDMM, false);
		return false;          /* it ran meanwhile: its context is on the GPU now */
	}
	return true;
}

/* Evict v (resident) to the system-memory aperture; its queue stays off the run list. */
static int os_vidmm_evict_locked(struct os_adapter *a, struct os_vidmm *m, struct os_vidmm_alloc *v)
{
	uint32_t s = os_vidmm_free_slot(m->sys, m->nsys);
	if (s == UINT32_MAX)
		return -ENOSPC;
	if (!os_vidmm_park(a, v))
		return -EBUSY;
	/* the content out first (broken variant: not copied, the image lost) */
	if (a->cfg.fault != OS_FAULT_EVICT_DISCARDS)
		os_vidmm_page_locked(a, m, HW_PAGING_TRANSFER, HW_VA(HW_SEGMENT_SYSTEM, (uint64_t)s * HW_CTX_IMAGE_BYTES),
				     hw_ctx_alloc_va(v->c));
	hw_ctx_alloc_place(v->c, 0);
	v->parked = v->q != NULL;
	m->sys[s] = v;
	v->sys = s;
	m->local[v->local] = NULL;
	v->local = UINT32_MAX;
	m->st.evictions++;
	return 0;
}

/* A local slot, evicting the least recently used allocation that can go. */
static uint32_t os_vidmm_slot_locked(struct os_adapter *a, struct os_vidmm *m, const struct os_vidmm_alloc *self)
{
	uint32_t i = os_vidmm_free_slot(m->local, m->nlocal);
	if (i != UINT32_MAX)
		return i;
	bool tried[m->nlocal];
	memset(tried, 0, sizeof(tried));
	for (;;) {
		struct os_vidmm_alloc *lru = NULL;
		for (uint32_t k = 0; k < m->nlocal; k++) {
			struct os_vidmm_alloc *v = m->local[k];
			if (v == self || tried[k] || (!v->q && a->cfg.fault != OS_FAULT_DEVICE_ALLOC_EVICTABLE))
				continue;      /* a device context allocation stays while its device lives */
			if (!lru || v->used < lru->used)
				lru = v;
		}
		if (!lru)
			return UINT32_MAX;
		uint32_t slot = lru->local;
		tried[slot] = true;
		if (!os_vidmm_evict_locked(a, m, lru))
			return slot;
	}
}

/* Make v resident: a first residency is initialized (InitContextResource),
 * an evicted one comes back with its content; its queue back on the run list. */
static int os_vidmm_resident_locked(struct os_adapter *a, struct os_vidmm *m, struct os_vidmm_alloc *v)
{
	v->used = ++m->clock;
	if (v->local != UINT32_MAX)
		return 0;
	uint32_t i = os_vidmm_slot_locked(a, m, v);
	if (i == UINT32_MAX)
		return -ENOSPC;
	uint64_t va = HW_VA(HW_SEGMENT_LOCAL, (uint64_t)i * HW_CTX_IMAGE_BYTES);
	int rc;
	if (v->sys != UINT32_MAX) {
		rc = os_vidmm_page_locked(a, m, HW_PAGING_TRANSFER, va,
					  HW_VA(HW_SEGMENT_SYSTEM, (uint64_t)v->sys * HW_CTX_IMAGE_BYTES));
		m->sys[v->sys] = NULL;
		v->sys = UINT32_MAX;
		m->st.brought_back++;
	} else if (a->cfg.fault == OS_FAULT_NO_INIT_CONTEXT_RESOURCE) {
		rc = 0;                /* broken on purpose: whatever the slot held is its context */
	} else {
		rc = os_vidmm_page_locked(a, m, HW_PAGING_INIT_CONTEXT_RESOURCE, va, hw_ctx_alloc_id(v->c));
		m->st.inits++;
	}
	if (rc)
		return rc;
	m->local[i] = v;
	v->local = i;
	hw_ctx_alloc_place(v->c, va);
	if (v->parked) {
		v->parked = false;
		/* evicted: it may run again, unless its context is suspended:
		 * the OS's hold is its own (hw_queue_hold), this releases ours */
		hw_queue_hold(v->q, HW_HOLD_VIDMM, false);
	}
	return 0;
}

/* Move v (resident) to another free local slot, its content with it. */
static int os_vidmm_relocate_locked(struct os_adapter *a, struct os_vidmm *m, struct os_vidmm_alloc *v)
{
	if (v->local == UINT32_MAX)
		return -EINVAL;
	uint32_t i = os_vidmm_free_slot(m->local, m->nlocal);
	if (i == UINT32_MAX)
		return -ENOSPC;
	if (!os_vidmm_park(a, v))
		return -EBUSY;
	uint64_t va = HW_VA(HW_SEGMENT_LOCAL, (uint64_t)i * HW_CTX_IMAGE_BYTES);
	if (a->cfg.fault != OS_FAULT_EVICT_DISCARDS)   /* broken on purpose: moved without its content */
		os_vidmm_page_locked(a, m, HW_PAGING_TRANSFER, va, hw_ctx_alloc_va(v->c));
	m->local[v->local] = NULL;
	m->local[i] = v;
	v->local = i;
	hw_ctx_alloc_place(v->c, va);
	m->st.relocations++;
	if (v->q)
		hw_queue_hold(v->q, HW_HOLD_VIDMM, false);   /* ours only: a suspension stays */
	return 0;
}

int os_vidmm_add(struct os_adapter *a, struct hw_ctx_alloc *c, struct hw_queue *q)
{
	struct os_vidmm *m = a->vidmm;
	struct os_vidmm_alloc *v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->c = c;
	v->q = q;
	v->local = v->sys = UINT32_MAX;
	os_mutex_lock_watching(&m->lock);   /* tdr.c: the watchdog looks while it waits */
	v->next = m->allocs;
	m->allocs = v;
	int rc = os_vidmm_resident_locked(a, m, v);
	pthread_mutex_unlock(&m->lock);
	return rc;
}

void os_vidmm_remove(struct os_adapter *a, struct hw_ctx_alloc *c)
{
	struct os_vidmm *m = a->vidmm;
	if (!m)
		return;
	os_mutex_lock_watching(&m->lock);   /* tdr.c: the watchdog looks while it waits */
	for (struct os_vidmm_alloc **p = &m->allocs; *p; p = &(*p)->next) {
		struct os_vidmm_alloc *v = *p;
		if (v->c != c)
			continue;
		if (v->local != UINT32_MAX)
			m->local[v->local] = NULL;   /* the image stays there, stale */
		if (v->sys != UINT32_MAX)
			m->sys[v->sys] = NULL;
		*p = v->next;
		free(v);
		break;
	}
	pthread_mutex_unlock(&m->lock);
}

/* The public moves: look c up, act under the lock. */
static int os_vidmm_act(struct os_adapter *a, struct hw_ctx_alloc *c, int what)
{
	struct os_vidmm *m = a->vidmm;
	if (!m || !c)
		return -EINVAL;
	os_mutex_lock_watching(&m->lock);   /* tdr.c: the watchdog looks while it waits */
	struct os_vidmm_alloc *v = os_vidmm_find(m, c);
	int rc = -EINVAL;
	if (v && what == 0)
		rc = os_vidmm_resident_locked(a, m, v);
	else if (v && what == 1)
		rc = v->local == UINT32_MAX ? 0 : os_vidmm_evict_locked(a, m, v);
	else if (v && what == 2)
		rc = os_vidmm_relocate_locked(a, m, v);
	pthread_mutex_unlock(&m->lock);
	return rc;
}

int os_ctx_alloc_make_resident(struct os_adapter *a, struct hw_ctx_alloc *c)
{
	return os_vidmm_act(a, c, 0);
}

int os_ctx_alloc_evict(struct os_adapter *a, struct hw_ctx_alloc *c)
{
	return os_vidmm_act(a, c, 1);
}

int os_ctx_alloc_relocate(struct os_adapter *a, struct hw_ctx_alloc *c)
{
	return os_vidmm_act(a, c, 2);
}

void os_vidmm_stats(struct os_adapter *a, struct os_vidmm_stats *out)
{
	memset(out, 0, sizeof(*out));
	struct os_vidmm *m = a->vidmm;
	if (!m)
		return;
	os_mutex_lock_watching(&m->lock);   /* tdr.c: the watchdog looks while it waits */
	*out = m->st;
	pthread_mutex_unlock(&m->lock);
}

struct hw_queue *os_vidmm_paging_queue(struct os_adapter *a)
{
	struct os_vidmm *m = a->vidmm;
	if (!m)
		return NULL;
	os_mutex_lock_watching(&m->lock);   /* tdr.c: the watchdog looks while it waits */
	int rc = os_vidmm_paging_queue_locked(a, m);
	struct hw_queue *q = rc ? NULL : m->pq->hwq;
	pthread_mutex_unlock(&m->lock);
	return q;
}
