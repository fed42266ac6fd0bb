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

int os_doorbell_create(struct os_hwqueue *q, struct os_doorbell_map *out)
{
	struct os_ums *u = q->u;
	if (!q->um)
		return -EINVAL;
	pthread_mutex_lock(&u->lock);
	int rc = 0;
	if (atomic_load(&q->gone) || os_device_in_error(q->ctx->d))
		rc = -ENODEV;
	else if (q->db.created)
		rc = -EEXIST;
	if (!rc) {
		/* the doorbell is not assigned yet: the mapping is the dummy page */
		q->db.created = true;
		atomic_store_explicit(&q->db.cpuva, u->dummy, memory_order_release);
		atomic_store_explicit(&q->db.status, OS_DOORBELL_DISCONNECTED_RETRY, memory_order_seq_cst);
		out->cpuva = &q->db.cpuva;
		out->status = &q->db.status;
		out->last_queued = &q->last_queued;
		out->ring = hw_queue_ring(q->hwq);
		out->value = hw_doorbell_value(q->hwq);
	}
	pthread_mutex_unlock(&u->lock);
	return rc;
}

/* DxgkCbDisconnectDoorbell + the KMD's disconnection.  Status first, then
 * the mapping (so an application that sees the dummy page sees the status),
 * then a barrier on every CPU (the rotation's TLB shootdown), then the
 * register is latched (a ring that made it is not lost). */
void os_doorbell_disconnect_locked(struct os_hwqueue *q, enum os_doorbell_status status)
{
	lf_mutex_assert_held(&q->u->lock);
	struct os_ums *u = q->u;
	if (status == OS_DOORBELL_DISCONNECTED_ABORT)
		q->db.aborted = true;
	/* seq_cst: ordered before the latch RMW in hw_doorbell_disconnect */
	atomic_store_explicit(&q->db.status, status, memory_order_seq_cst);
	/* release: pairs with the application's acquire load of the mapping */
	atomic_store_explicit(&q->db.cpuva, u->dummy, memory_order_release);
	if (!q->db.connected)
		return;
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
}

/* A physical doorbell for q: a free one, else the least recently used
 * connected one, victimized (the KMD's VictimizeDoorbell). */
static unsigned os_doorbell_pick_locked(struct os_ums *u)
{
	lf_mutex_assert_held(&u->lock);
	unsigned n = hw_doorbell_count(u->hw), victim = 0;
	uint64_t oldest = UINT64_MAX;
	for (unsigned i = 0; i < n; i++) {
		if (!u->phys_owner[i])
			return i;
		uint64_t t = hw_doorbell_last_use(u->hw, i);
		if (t < oldest) {
			oldest = t;
			victim = i;
		}
	}
	os_doorbell_disconnect_locked(u->phys_owner[victim], OS_DOORBELL_DISCONNECTED_RETRY);
	lf_count(&u->victimizations, 1);
	return victim;
}

static void os_doorbell_connect_locked(struct os_hwqueue *q)
{
	lf_mutex_assert_held(&q->u->lock);
	struct os_ums *u = q->u;
	unsigned engine = q->ctx->engine;
	unsigned phys = 0;
	if (hw_doorbell_model(u->hw) == HW_DOORBELL_DEDICATED) {
		phys = os_doorbell_pick_locked(u);
		u->phys_owner[phys] = q;
	}
	if (hw_engine_fstate(u->hw, engine) == HW_F1)
		lf_count(&u->f0_by_connect, 1);
	_Atomic uint64_t *reg = hw_doorbell_connect(u->hw, phys, q->hwq);   /* wakes the engine: F0 */
	q->db.phys = (int)phys;
	q->db.connected = true;
	/* Dxgkrnl maps the register (release: the register is set up before the
	 * application can write it), then reports the status */
	atomic_store_explicit(&q->db.cpuva, reg, memory_order_release);
	bool notify = u->cfg.notify_engines & (1u << engine);
	atomic_store_explicit(&q->db.status, notify ? OS_DOORBELL_CONNECTED_NOTIFY : OS_DOORBELL_CONNECTED,
			      memory_order_seq_cst);
	lf_count(&u->connects, 1);
}

int os_doorbell_connect(struct os_hwqueue *q)
{
	struct os_ums *u = q->u;
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
	os_doorbell_connect_locked(q);
	if (was_d3)
		os_power_resume_all_locked(u);
unlock:
	pthread_mutex_unlock(&u->lock);
	return rc;
}

int os_doorbell_destroy(struct os_hwqueue *q)
{
	struct os_ums *u = q->u;
	pthread_mutex_lock(&u->lock);
	int rc = q->db.created ? 0 : -ENOENT;
	if (!rc) {
		os_doorbell_disconnect_locked(q, q->db.aborted ? OS_DOORBELL_DISCONNECTED_ABORT
							       : OS_DOORBELL_DISCONNECTED_RETRY);
		q->db.created = false;
	}
	pthread_mutex_unlock(&u->lock);
	return rc;
}

enum os_doorbell_status os_doorbell_status(const struct os_hwqueue *q)
{
	return (enum os_doorbell_status)atomic_load_explicit(&q->db.status, memory_order_seq_cst);
}

int os_notify_work_submission(struct os_hwqueue *q)
{
	if (!q->um)
		return -EINVAL;
	/* the KMD learns of the submission and has the CMP look at the ring */
	atomic_fetch_add_explicit(&q->u->notifies, 1, memory_order_relaxed);
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
