/* gpu-model/os/doorbell.c — doorbells, the KMD side: create, connect (with
 * LRU victimization of a physical doorbell), disconnect, destroy, the status
 * word and notify-work-submission.  Contract in ums.h.  Calls power.c (D0 on
 * connect) and hw/doorbell.h.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "gpu-model/os/ums_internal.h"
#include "lockfree/alloc.h"
#include "lockfree/arch.h"
#include "lockfree/asym.h"
#include "lockfree/die.h"
#include "lockfree/thread.h"

/* ---- doorbells ---- */

void (*os_test_doorbell_release_hook)(struct os_hwqueue *q);

/* The ring allocations a CreateDoorbell brings: 0, or why they are refused
 * (ums.h).  Seed: "UMD is responsible for making the ring buffer and ring
 * buffer control allocations resident before creating a doorbell." */
static int os_doorbell_check_allocs_locked(struct os_hwqueue *q, const struct os_ring_alloc *rb,
					   const struct os_ring_alloc *rbc)
{
	lf_mutex_assert_held(&q->u->lock);
	if (!rb || !rbc || rb->kind != OS_RING_BUFFER || rbc->kind != OS_RING_BUFFER_CONTROL)
		return -EINVAL;
	if (rb->d != q->ctx->d || rbc->d != q->ctx->d || rb->dead || rbc->dead)
		return -EINVAL;
	if (!rb->resident || !rbc->resident)
		return -EFAULT;
	/* a pair serves one queue, and a queue one pair */
	if ((rb->bound && rb->bound != q->hwq) || (rbc->bound && rbc->bound != q->hwq))
		return -EBUSY;
	if (rb->bound != rbc->bound || (rb->bound && rb->ring != rbc->ring))
		return -EBUSY;
	return 0;
}

/* The queue's ring over the pair: made at their first CreateDoorbell (the
 * control block's geometry set once; from then on the ring owns both
 * blocks), the same ring afterwards.  NULL: the geometry is refused. */
static struct lf_ring *os_doorbell_ring_locked(struct os_ring_alloc *rb, struct os_ring_alloc *rbc)
{
	lf_mutex_assert_held(&rb->d->u->lock);
	if (rb->ring)
		return rb->ring;
	return lf_ring_create_split(rbc->mem, rb->mem, sizeof(struct hw_cmd), rb->slots);
}

int os_doorbell_create(struct os_hwqueue *q, struct os_ring_alloc *rb, struct os_ring_alloc *rbc,
		       struct os_doorbell_map *out)
{
	struct os_ums *u = q->u;
	os_ums_thunk(u);
	if (!q->um)
		return -EINVAL;
	pthread_mutex_lock(&u->lock);
	int rc = 0;
	if (atomic_load(&q->gone) || os_device_in_error(q->ctx->d))
		rc = -ENODEV;
	else if (q->db.created)
		rc = -EEXIST;
	if (!rc)
		rc = os_doorbell_check_allocs_locked(q, rb, rbc);
	/* DxgkDdiCreateDoorbell: the KMD programs the queue's ring (once: a
	 * queue bound to another ring refuses it, -EBUSY) */
	struct lf_ring *ring = NULL;
	if (!rc && !(ring = os_doorbell_ring_locked(rb, rbc)))
		rc = -EINVAL;
	if (!rc)
		rc = hw_queue_bind_ring(q->hwq, ring);
	if (!rc) {
		os_ddi_log(u->a, OS_DDI_CREATE_DOORBELL, hw_queue_handle(q->hwq), 0);
		rb->ring = rbc->ring = ring;
		rb->bound = rbc->bound = q->hwq;
		/* Dxgkrnl's reference on both for the doorbell's lifetime */
		if (u->cfg.ums_fault != OS_UMS_FAULT_NO_RING_REFERENCE) {
			rb->refs++;
			rbc->refs++;
		}
		q->db.rb = (struct os_ring_alloc *)rb;
		q->db.rbc = (struct os_ring_alloc *)rbc;
		/* the doorbell is not assigned yet: the mapping is the dummy page */
		q->db.created = true;
		q->db.map_bytes = u->db_bytes;   /* the dummy page, mapped at the doorbell's size */
		atomic_store_explicit(&q->db.cpuva, u->dummy, memory_order_release);
		atomic_store_explicit(&q->db.status, OS_DOORBELL_DISCONNECTED_RETRY, memory_order_seq_cst);
		out->cpuva = &q->db.cpuva;
		out->status = &q->db.status;
		out->last_queued = &q->last_queued;
		out->ring = ring;
		out->value = hw_doorbell_value(q->hwq);
		out->bytes = u->db_bytes;
	}
	pthread_mutex_unlock(&u->lock);
	return rc;
}

void os_doorbell_release_locked(struct os_hwqueue *q)
{
	lf_mutex_assert_held(&q->u->lock);
	if (q->u->cfg.ums_fault != OS_UMS_FAULT_NO_RING_REFERENCE) {
		if (q->db.rb && q->db.rb->refs)
			q->db.rb->refs--;
		if (q->db.rbc && q->db.rbc->refs)
			q->db.rbc->refs--;
	}
	q->db.rb = q->db.rbc = NULL;
	q->db.map_bytes = 0;
}

/* DxgkCbDisconnectDoorbell: the status, then the mapping rotated to the
 * dummy page (so an application that sees the dummy page sees the status). */
static void os_doorbell_retarget_locked(struct os_hwqueue *q, enum os_doorbell_status status)
{
	lf_mutex_assert_held(&q->u->lock);
	/* seq_cst: ordered before the latch RMW in hw_doorbell_disconnect */
	atomic_store_explicit(&q->db.status, status, memory_order_seq_cst);
	/* release: pairs with the application's acquire load of the mapping */
	atomic_store_explicit(&q->db.cpuva, q->u->dummy, memory_order_release);
	q->db.map_bytes = q->db.created ? q->u->db_bytes : 0;
}

/* The KMD's actual disconnection: a barrier on every CPU (the rotation's
 * TLB shootdown), then the register is latched (a ring that made it is not
 * lost) and released. */
static void os_doorbell_release_phys_locked(struct os_hwqueue *q, enum os_doorbell_status status)
{
	lf_mutex_assert_held(&q->u->lock);
	struct os_ums *u = q->u;
	os_ddi_log(u->a, OS_DDI_DISCONNECT_DOORBELL, hw_queue_handle(q->hwq), status);
	/* The rotation's TLB shootdown: a barrier on every CPU running the
	 * process, the heavy side of the ringer's Dekker pair (doorbell.h).
	 * After it, a ringer that may still read CONNECTED has its ring on the
	 * register for the latch to find. */
	lf_asym_heavy();
	hw_doorbell_disconnect(u->hw, q->hwq);
	if (q->db.phys >= 0 && hw_doorbell_model(u->hw) == HW_DOORBELL_DEDICATED)
		u->phys_owner[q->db.phys] = NULL;
	q->db.phys = -1;
	q->db.connected = false;
	if (os_test_doorbell_release_hook)
		os_test_doorbell_release_hook(q);
}

/* Seed, "Victimizing doorbell pseudocode in KMD": the KMD calls
 * DxgkCbDisconnectDoorbell ("Dxgkrnl rotates the UMD-visible CPUVA of this
 * doorbell to a dummy page and updates the status value to
 * D3DDDI_DOORBELL_STATUS_DISCONNECTED_RETRY"), then "gets back control and
 * does the actual victimization/disconnection": status and mapping first,
 * the physical doorbell released after.  OS_UMS_FAULT_RELEASE_BEFORE_RETRY:
 * the broken order, released while the victim still reads CONNECTED and
 * rings through the register its successor gets. */
void os_doorbell_disconnect_locked(struct os_hwqueue *q, enum os_doorbell_status status)
{
	lf_mutex_assert_held(&q->u->lock);
	if (status == OS_DOORBELL_DISCONNECTED_ABORT)
		q->db.aborted = true;
	bool broken = q->u->cfg.ums_fault == OS_UMS_FAULT_RELEASE_BEFORE_RETRY;
	if (broken && q->db.connected)
		os_doorbell_release_phys_locked(q, status);
	os_doorbell_retarget_locked(q, status);
	if (q->db.connected)
		os_doorbell_release_phys_locked(q, status);
}

/* May q's connect take physical doorbell i from its owner?  Any queue's:
 * seed, "Doorbells": "There are limited doorbells that are shared across
 * all hardware queues created on the GPU", every device's and process's.
 * OS_UMS_FAULT_POOL_PER_DEVICE: broken on purpose, its own device's only. */
static bool os_doorbell_may_victimize_locked(const struct os_hwqueue *q, unsigned i)
{
	lf_mutex_assert_held(&q->u->lock);
	return q->u->cfg.ums_fault != OS_UMS_FAULT_POOL_PER_DEVICE || q->u->phys_owner[i]->ctx->d == q->ctx->d;
}

/* A physical doorbell for q: a free one, else the least recently used
 * connected one, victimized (the KMD's VictimizeDoorbell).  Its index, or
 * -EBUSY (none q may take). */
static int os_doorbell_pick_locked(struct os_hwqueue *q)
{
	struct os_ums *u = q->u;
	lf_mutex_assert_held(&u->lock);
	unsigned n = hw_doorbell_count(u->hw);
	int victim = -EBUSY;
	bool mru = u->cfg.ums_fault == OS_UMS_FAULT_VICTIM_MRU;   /* broken on purpose */
	uint64_t best = mru ? 0 : UINT64_MAX;
	for (unsigned i = 0; i < n; i++) {
		if (!u->phys_owner[i])
			return (int)i;
		if (!os_doorbell_may_victimize_locked(q, i))
			continue;
		uint64_t t = hw_doorbell_last_use(u->hw, i);
		if (victim < 0 || (mru ? t > best : t < best)) {
			best = t;
			victim = (int)i;
		}
	}
	if (victim < 0)
		return victim;
	os_doorbell_disconnect_locked(u->phys_owner[victim], OS_DOORBELL_DISCONNECTED_RETRY);
	lf_count(&u->victimizations, 1);
	return victim;
}

/* 0 / -EBUSY (no physical doorbell for q). */
static int os_doorbell_connect_locked(struct os_hwqueue *q)
{
	lf_mutex_assert_held(&q->u->lock);
	struct os_ums *u = q->u;
	unsigned engine = q->ctx->engine;
	unsigned phys = 0;
	if (hw_doorbell_model(u->hw) == HW_DOORBELL_DEDICATED) {
		int i = os_doorbell_pick_locked(q);
		if (i < 0)
			return i;
		phys = (unsigned)i;
		u->phys_owner[phys] = q;
	}
	if (hw_engine_fstate(u->hw, engine) == HW_F1)
		lf_count(&u->f0_by_connect, 1);
	os_ddi_log(u->a, OS_DDI_CONNECT_DOORBELL, hw_queue_handle(q->hwq), phys);
	_Atomic uint64_t *reg = hw_doorbell_connect(u->hw, phys, q->hwq);   /* wakes the engine: F0 */
	q->db.phys = (int)phys;
	q->db.connected = true;
	/* Dxgkrnl maps the register, the caps' doorbell size of it (release:
	 * the register is set up before the application can write it), then
	 * reports the status */
	q->db.map_bytes = u->db_bytes;
	atomic_store_explicit(&q->db.cpuva, reg, memory_order_release);
	bool notify = u->cfg.notify_engines & (1u << engine);
	atomic_store_explicit(&q->db.status, notify ? OS_DOORBELL_CONNECTED_NOTIFY : OS_DOORBELL_CONNECTED,
			      memory_order_seq_cst);
	lf_count(&u->connects, 1);
	return 0;
}

int os_doorbell_connect(struct os_hwqueue *q)
{
	struct os_ums *u = q->u;
	os_ums_thunk(u);
	pthread_mutex_lock(&u->lock);
	int rc = 0;
	if (!q->db.created)
		rc = -ENOENT;
	else if (q->db.aborted || atomic_load(&q->gone) || os_device_in_error(q->ctx->d))
		rc = -ENODEV;
	if (rc || q->db.connected)
		goto unlock;
	/* The seed's D3 sequence: D0, rings resident, connect, resume contexts. */
	bool was_d3 = u->d3;
	if (was_d3)
		os_power_d0_locked(u);
	rc = os_doorbell_connect_locked(q);
	if (was_d3)
		os_power_resume_all_locked(u);
unlock:
	pthread_mutex_unlock(&u->lock);
	return rc;
}

int os_doorbell_destroy(struct os_hwqueue *q)
{
	struct os_ums *u = q->u;
	os_ums_thunk(u);
	pthread_mutex_lock(&u->lock);
	int rc = q->db.created ? 0 : -ENOENT;
	if (!rc) {
		os_doorbell_disconnect_locked(q, q->db.aborted ? OS_DOORBELL_DISCONNECTED_ABORT
							       : OS_DOORBELL_DISCONNECTED_RETRY);
		os_ddi_log(u->a, OS_DDI_DESTROY_DOORBELL, hw_queue_handle(q->hwq), 0);
		os_doorbell_release_locked(q);
		q->db.created = false;
	}
	pthread_mutex_unlock(&u->lock);
	return rc;
}

enum os_doorbell_status os_doorbell_status(const struct os_hwqueue *q)
{
	return (enum os_doorbell_status)atomic_load_explicit(&q->db.status, memory_order_seq_cst);
}

size_t os_doorbell_mapped_bytes(const struct os_hwqueue *q)
{
	pthread_mutex_lock(&q->u->lock);
	size_t n = q->db.map_bytes;
	pthread_mutex_unlock(&q->u->lock);
	return n;
}

int os_notify_work_submission(struct os_hwqueue *q)
{
	if (!q->um) {
		os_ums_thunk(q->u);      /* a kernel call all the same (accepted ones count as notifies) */
		return -EINVAL;
	}
	/* the KMD learns of the submission and has the CMP look at the ring */
	atomic_fetch_add_explicit(&q->u->notifies, 1, memory_order_relaxed);
	os_ddi_log(q->u->a, OS_DDI_NOTIFY_WORK_SUBMISSION, hw_queue_handle(q->hwq), 0);
	hw_queue_kick(q->hwq);
	return 0;
}

void os_doorbell_abort(struct os_hwqueue *q)
{
	struct os_ums *u = q->u;
	pthread_mutex_lock(&u->lock);
	if (q->um && !q->db.aborted) {
		os_doorbell_disconnect_locked(q, OS_DOORBELL_DISCONNECTED_ABORT);
		lf_count(&u->aborts, 1);
	}
	pthread_mutex_unlock(&u->lock);
}
