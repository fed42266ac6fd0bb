/* gpu-model/hw/irq.c — the adapter's two interrupt lines to the OS.
 *
 * The interrupt line (hw.h, hw_irq_*): engines and the CMP push interrupt
 * records (fence signaled, native fence signaled, software) on an MPSC queue
 * the OS interrupt thread drains and parks on.  The engine-state-change line
 * (doorbell.h, hw_state_irq_*): a status word, a bit per engine and NewState
 * (TransitionToF1, Hung), that the OS power thread takes and parks on.
 *
 * Holds only the lines: what raises them (engine.c's CMP, engine.c's idle
 * path) calls in here; this file calls only lockfree/.
 */
#include <errno.h>
#include <stddef.h>

#include "gpu-model/hw/hw_internal.h"
#include "lockfree/alloc.h"
#include "lockfree/arch.h"
#include "lockfree/asym.h"

/* ---- the interrupt line ---- */

struct hw_irq_rec *hw_irq_alloc(void)
{
	return lf_alloc(sizeof(struct hw_irq_rec), LF_CACHELINE);
}

void hw_irq_free(struct hw_irq_rec *rec)
{
	lf_free(rec, sizeof(*rec), LF_CACHELINE);
}

void hw_irq_raise(struct hw_adapter *a, struct hw_irq_rec *rec)
{
	rec->t_raise_ns = lf_now_ns();
	/* Wake the interrupt thread only when the queue was empty: otherwise it
	 * has not drained yet and will see this record (lf_mpsc_push contract). */
	if (lf_mpsc_push(&a->irq_q, &rec->node))
		lf_wake_notify(&a->irq_wake);
}

struct hw_irq_rec *hw_irq_pop(struct hw_adapter *a)
{
	struct lf_mpsc_node *n = lf_mpsc_pop(&a->irq_q);
	return n ? (struct hw_irq_rec *)((char *)n - offsetof(struct hw_irq_rec, node)) : NULL;
}

int hw_irq_park(struct hw_adapter *a, int64_t timeout_ns)
{
	lf_wake_prepare(&a->irq_wake);
	if (!lf_mpsc_empty(&a->irq_q)) {
		lf_wake_cancel(&a->irq_wake);
		return 0;
	}
	return lf_wake_park(&a->irq_wake, timeout_ns);
}

void hw_irq_kick(struct hw_adapter *a)
{
	/* A record, not a bare notify: a thread between its stop check and its
	 * park re-checks only the queue, so a notify alone could come before it
	 * announced itself and be lost.  The record is an empty software one. */
	struct hw_irq_rec *rec = hw_irq_alloc();
	rec->kind = HW_IRQ_SOFTWARE;
	hw_irq_raise(a, rec);
}

static void hw_state_irq_raise(struct hw_adapter *a, uint32_t bit)
{
	/* seq_cst RMW on the status word, then the line: pairs with the power
	 * thread's exchange after its prepare (hw_state_irq_park) */
	atomic_fetch_or_explicit(&a->state_irq, bit, memory_order_seq_cst);
	lf_wake_notify(&a->state_wake);
}

void hw_engine_raise_f1(struct hw_adapter *a, struct hw_engine *e)
{
	lf_count(&e->state_irqs, 1);
	hw_state_irq_raise(a, HW_STATE_IRQ_F1(e->index));
}

int hw_engine_state_raise(struct hw_adapter *a, unsigned engine, enum hw_engine_state s)
{
	if (engine >= a->caps.engines)
		return -EINVAL;
	if (s == HW_ENGINE_STATE_TRANSITION_TO_F1)
		hw_engine_raise_f1(a, &a->engines[engine]);
	else if (s == HW_ENGINE_STATE_HUNG)
		hw_state_irq_raise(a, HW_STATE_IRQ_HUNG(engine));
	else
		return -EINVAL;
	return 0;
}

/* ---- the engine-state-change line (the OS power thread) ---- */

uint32_t hw_state_irq_take(struct hw_adapter *a)
{
	if (!atomic_load_explicit(&a->state_irq, memory_order_relaxed))
		return 0;
	return atomic_exchange_explicit(&a->state_irq, 0, memory_order_acq_rel);
}

int hw_state_irq_park(struct hw_adapter *a, int64_t timeout_ns)
{
	lf_wake_prepare(&a->state_wake);
	if (atomic_load_explicit(&a->state_irq, memory_order_seq_cst)) {
		lf_wake_cancel(&a->state_wake);
		return 0;
	}
	return lf_wake_park(&a->state_wake, timeout_ns);
}

void hw_state_irq_kick(struct hw_adapter *a)
{
	/* Set a bit, not only notify: the power thread re-checks state_irq after
	 * announcing its park, so a kick that comes before the announcement is
	 * seen there instead of lost.  HW_STATE_IRQ_KICK names no engine. */
	atomic_fetch_or_explicit(&a->state_irq, HW_STATE_IRQ_KICK, memory_order_seq_cst);
	lf_wake_notify(&a->state_wake);
}
