/* gpu-model/hw/doorbell.c — doorbell registers, their polling by the engines,
 * the doorbell caps.  The engine-state-change interrupt line is in irq.c,
 * queues in queue.c.  Calls queue.c (kicks).  Contract and protocol in doorbell.h. */
#include <errno.h>
#include <stddef.h>

#include "gpu-model/hw/hw_internal.h"
#include "lockfree/arch.h"
#include "lockfree/asym.h"
#include "lockfree/ring.h"

_Static_assert(sizeof(struct hw_doorbell_phys) == 2 * LF_CACHELINE, "a doorbell: the register's line, the bookkeeping's line");
LF_ASSERT_OWN_LINE(struct hw_doorbell_phys, queue);

/* ---- caps ---- */

enum hw_doorbell_model hw_doorbell_model(const struct hw_adapter *a)
{
	return a->caps.doorbell_model;
}

unsigned hw_doorbell_count(const struct hw_adapter *a)
{
	if (a->caps.doorbell_model == HW_DOORBELL_GLOBAL)
		return 1;
	unsigned n = a->caps.doorbells ? a->caps.doorbells : HW_DOORBELLS_DEFAULT;
	return n > HW_MAX_DOORBELLS ? HW_MAX_DOORBELLS : n;
}

unsigned hw_doorbell_bytes(const struct hw_adapter *a)
{
	return a->caps.doorbell_bytes ? a->caps.doorbell_bytes : HW_DOORBELL_SIZE;
}

/* ---- the KMD's side ---- */

static struct hw_doorbell_phys *hw_phys(struct hw_adapter *a, unsigned phys)
{
	if (a->caps.doorbell_model == HW_DOORBELL_GLOBAL)
		return &a->global_db;
	return &a->doorbells[phys];
}

_Atomic uint64_t *hw_doorbell_connect(struct hw_adapter *a, unsigned phys, struct hw_queue *q)
{
	struct hw_engine *e = &a->engines[q->engine];
	struct hw_doorbell_phys *p = hw_phys(a, phys);
	if (a->caps.doorbell_model == HW_DOORBELL_DEDICATED)
		atomic_store_explicit(&p->queue, q, memory_order_release);
	atomic_store_explicit(&p->last_use_ns, lf_now_ns(), memory_order_relaxed);
	/* release: the engine that reads q->phys sees the register set up */
	atomic_store_explicit(&q->phys, p, memory_order_release);
	/* seq_cst RMW, then notify: the engine re-checks um_connected after
	 * announcing a park (hw_engine_park), so it polls again (F1 -> F0) */
	atomic_fetch_add_explicit(&e->um_connected, 1, memory_order_seq_cst);
	lf_wake_notify(&e->wake);
	return &p->word;
}

void hw_doorbell_disconnect(struct hw_adapter *a, struct hw_queue *q)
{
	struct hw_doorbell_phys *p = atomic_load_explicit(&q->phys, memory_order_relaxed);
	if (!p)
		return;
	atomic_store_explicit(&q->phys, NULL, memory_order_release);
	/* The latch: a seq_cst RMW on the register (it changes nothing), after
	 * the OS's heavy fence (doorbell.h): a ring whose ringer may still read
	 * CONNECTED is visible here, and so is the write pointer it published,
	 * which the kick below reads; a ring that is not comes before a status
	 * load that sees the disconnect. */
	atomic_fetch_add_explicit(&p->word, 0, memory_order_seq_cst);
	if (a->caps.doorbell_model == HW_DOORBELL_DEDICATED)
		atomic_store_explicit(&p->queue, NULL, memory_order_release);
	atomic_fetch_sub_explicit(&a->engines[q->engine].um_connected, 1, memory_order_seq_cst);
	hw_queue_kick(q);
}

struct hw_queue *hw_doorbell_owner(const struct hw_adapter *a, unsigned phys)
{
	return atomic_load_explicit(&a->doorbells[phys].queue, memory_order_acquire);
}

uint64_t hw_doorbell_last_use(const struct hw_adapter *a, unsigned phys)
{
	return atomic_load_explicit(&a->doorbells[phys].last_use_ns, memory_order_relaxed);
}

uint64_t hw_doorbell_value(const struct hw_queue *q)
{
	if (q->a->caps.doorbell_model == HW_DOORBELL_GLOBAL)
		return HW_DB_GLOBAL | q->id;
	return (uint64_t)(q->id + 1) << HW_DB_WPTR_BITS;
}

uint64_t hw_doorbell_ring_value(uint64_t tag, uint64_t wptr)
{
	if (tag & HW_DB_GLOBAL)
		return tag;
	return tag | (wptr & HW_DB_WPTR_MASK);
}

/* ---- the application's ring ---- */

#define HW_DB_COUNT_SHIFT 32
#define HW_DB_COUNT_MASK  0x7fffffffull

void hw_doorbell_write(_Atomic uint64_t *reg, uint64_t value)
{
	if (!(value & HW_DB_GLOBAL)) {
		/* dedicated: queue tag | write pointer, a value this register never
		 * held before (a retry may repeat it: its first ring was seen); the
		 * light side of the disconnect's Dekker pair (doorbell.h) */
		atomic_store_explicit(reg, value, memory_order_release);
		lf_asym_light();
		return;
	}
	/* global: the queue id, and a count of rings: an engine that sees the
	 * count move by more than one polls every queue it serves */
	uint64_t old = atomic_load_explicit(reg, memory_order_relaxed), next;
	do {
		uint64_t n = ((old >> HW_DB_COUNT_SHIFT) & HW_DB_COUNT_MASK) + 1;
		next = HW_DB_GLOBAL | (n & HW_DB_COUNT_MASK) << HW_DB_COUNT_SHIFT | (uint32_t)value;
	} while (!atomic_compare_exchange_weak_explicit(reg, &old, next, memory_order_seq_cst,
							memory_order_relaxed));
}

/* ---- the engine's side ----
 *
 * The engine never writes a register: it compares what it loads with the
 * value it saw last (db_seen).  A ring always writes a value new to the
 * register (a queue tag and its write pointer, or a count), so a change is a
 * ring.  The acquire load that reads a ring's value synchronizes with it:
 * the write index read next covers what the ringer published. */

/* The CMP reads q's write pointer now; q on engine e: directly, else a kick. */
static void hw_engine_look(struct hw_engine *e, struct hw_queue *q)
{
	lf_count(&e->looks, 1);
	if (q->engine == e->index) {
		uint64_t w = lf_ring_write_index(q->ring);
		if (w > q->known_wptr)
			q->known_wptr = w;
	} else {
		hw_queue_kick(q);
	}
}

/* Global: the last ringer's id and a count; several rings since the engine
 * last looked (the value names only the last): poll every queue it serves. */
static unsigned hw_engine_poll_global(struct hw_adapter *a, struct hw_engine *e, uint64_t now)
{
	struct hw_doorbell_phys *p = &a->global_db;
	uint64_t v = atomic_load_explicit(&p->word, memory_order_acquire);
	uint64_t seen = e->db_seen[HW_MAX_DOORBELLS];
	if (v == seen)
		return 0;
	e->db_seen[HW_MAX_DOORBELLS] = v;
	atomic_store_explicit(&p->last_use_ns, now, memory_order_relaxed);
	lf_count(&e->rings, 1);
	uint64_t rings = (((v >> HW_DB_COUNT_SHIFT) - (seen >> HW_DB_COUNT_SHIFT)) & HW_DB_COUNT_MASK);
	uint32_t id = (uint32_t)v;
	uint32_t n = atomic_load_explicit(&e->nqueues, memory_order_acquire);
	if (rings == 1) {
		if (id / HW_MAX_QUEUES == e->index && id % HW_MAX_QUEUES < n)
			hw_engine_look(e, e->queues[id % HW_MAX_QUEUES]);
		return 1;
	}
	for (uint32_t k = 0; k < n; k++) {
		struct hw_queue *q = e->queues[k];
		if (q->um && atomic_load_explicit(&q->phys, memory_order_acquire) == p)
			hw_engine_look(e, q);
	}
	lf_count(&e->global_polls, 1);
	return 1;
}

/* Dedicated: a ring on register p goes to its owner now (the queue e polled
 * it for may have lost it: that one's disconnect kicked it already). */
static unsigned hw_engine_poll_one(struct hw_adapter *a, struct hw_engine *e, struct hw_doorbell_phys *p,
				   uint64_t now)
{
	size_t idx = (size_t)(p - a->doorbells);
	uint64_t v = atomic_load_explicit(&p->word, memory_order_acquire);
	if (v == e->db_seen[idx])
		return 0;
	e->db_seen[idx] = v;
	atomic_store_explicit(&p->last_use_ns, now, memory_order_relaxed);
	lf_count(&e->rings, 1);
	struct hw_queue *owner = atomic_load_explicit(&p->queue, memory_order_acquire);
	/* The CMP reads the ring control's write pointer, not the value rung:
	 * a ring that came before its buffer was made visible (the order the
	 * seed forbids) must find the old write pointer, as hardware reading
	 * the ring control would, not run on a promise. */
	if (owner)
		hw_engine_look(e, owner);
	/* Seed user-mode-work-submission, "Doorbells": "When a doorbell is
	 * rung, the GPU scheduler knows exactly which hardware queue submitted
	 * new work": the owner only.  HW_FAULT_DEDICATED_POLLS_ALL: broken on
	 * purpose, every connected queue of the engine as on a global doorbell. */
	if (a->caps.fault == HW_FAULT_DEDICATED_POLLS_ALL) {
		uint32_t n = atomic_load_explicit(&e->nqueues, memory_order_acquire);
		for (uint32_t k = 0; k < n; k++) {
			struct hw_queue *q = e->queues[k];
			if (q->um && q != owner && atomic_load_explicit(&q->phys, memory_order_acquire))
				hw_engine_look(e, q);
		}
	}
	return 1;
}

unsigned hw_engine_poll_doorbells(struct hw_adapter *a, struct hw_engine *e, uint64_t now)
{
	if (a->caps.doorbell_model == HW_DOORBELL_GLOBAL)
		return hw_engine_poll_global(a, e, now);
	unsigned rings = 0;
	uint32_t n = atomic_load_explicit(&e->nqueues, memory_order_acquire);
	for (uint32_t i = 0; i < n; i++) {
		struct hw_queue *q = e->queues[i];
		if (!q->um)
			continue;
		struct hw_doorbell_phys *p = atomic_load_explicit(&q->phys, memory_order_acquire);
		if (p)
			rings += hw_engine_poll_one(a, e, p, now);
	}
	return rings;
}

bool hw_engine_watch(struct hw_adapter *a, struct hw_engine *e, unsigned loads, uint64_t now, struct hw_queue **run)
{
	*run = NULL;
	if (a->caps.doorbell_model == HW_DOORBELL_GLOBAL) {
		for (unsigned k = 0; k < loads; k++)
			if (atomic_load_explicit(&a->global_db.word, memory_order_relaxed) != e->db_seen[HW_MAX_DOORBELLS])
				return hw_engine_poll_global(a, e, now) != 0;
		return false;
	}
	uint32_t n = atomic_load_explicit(&e->nqueues, memory_order_acquire);
	for (unsigned k = 0; k < loads;) {
		unsigned looked = 0;
		for (uint32_t i = 0; i < n; i++) {
			struct hw_queue *q = e->queues[i];
			if (!q->um)
				continue;
			struct hw_doorbell_phys *p = atomic_load_explicit(&q->phys, memory_order_acquire);
			if (!p)
				continue;
			looked++;
			if (atomic_load_explicit(&p->word, memory_order_relaxed) == e->db_seen[p - a->doorbells])
				continue;
			hw_engine_poll_one(a, e, p, now);
			struct hw_queue *o = atomic_load_explicit(&p->queue, memory_order_acquire);
			*run = o && o->engine == e->index ? o : NULL;
			return true;
		}
		if (!looked)
			return false;
		k += looked;
	}
	return false;
}

void hw_engine_wake(struct hw_adapter *a, unsigned engine)
{
	lf_wake_notify(&a->engines[engine].wake);
}

enum hw_fstate hw_engine_fstate(const struct hw_adapter *a, unsigned engine)
{
	return (enum hw_fstate)atomic_load_explicit(&a->engines[engine].fstate, memory_order_acquire);
}

void hw_engine_um_stats(const struct hw_adapter *a, unsigned engine, struct hw_engine_um_stats *out)
{
	const struct hw_engine *e = &a->engines[engine];
	out->rings = atomic_load_explicit(&e->rings, memory_order_relaxed);
	out->global_polls = atomic_load_explicit(&e->global_polls, memory_order_relaxed);
	out->looks = atomic_load_explicit(&e->looks, memory_order_relaxed);
	out->state_irqs = atomic_load_explicit(&e->state_irqs, memory_order_relaxed);
	out->f1_entries = atomic_load_explicit(&e->parks, memory_order_relaxed);
	out->f1_ns = atomic_load_explicit(&e->f1_ns, memory_order_relaxed);
	out->discarded = atomic_load_explicit(&e->discarded, memory_order_relaxed);
}
