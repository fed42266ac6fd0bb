/* gpu-model/hw/preempt.c — GPU preemption: queue priorities, preemption
 * requests honoured at the boundary the engine's granularity allows, context
 * save/restore, WORK commands run as slices of their sub-units, and the engine
 * reset a TDR ends with.  Seed gpu-preemption; contract in hw.h ("preemption,
 * priorities, engine reset").  The engine loop (engine.c) calls the
 * engine-thread half; the OS calls the rest.  Calls only lockfree/.
 *
 * A WORK of duration D with U sub-units (value) runs as slices: at level 3
 * (TRIANGLE / THREAD_GROUP) U slices, at level 4 U * HW_WORK_FANOUT, at level
 * 5 U * HW_WORK_FANOUT^2, none shorter than HW_SLICE_MIN_NS (a finer cut
 * would only measure the clock); at coarser levels one slice.  A short WORK
 * spins slice by slice; a long one sleeps toward its end time, looking for a
 * request at least every HW_LOOK_NS and stopping at the next slice boundary
 * after it sees one.  A reset always gets through (every HW_CHUNK_NS at the
 * latest), so a hung engine is never a hung thread.
 *
 * A preempted context goes to the queue's context allocation (hw_ctx_alloc,
 * created by the OS: os/ctxalloc.c) and is read back from it; the engine
 * keeps the last context loaded (lazy context switching) until a
 * ContextSwitch packet switches it to the null context; the end of a split
 * packet (HW_CMD_SPLIT_END) is a DMA buffer boundary.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <sched.h>
#include <time.h>

#include "gpu-model/hw/hw_internal.h"
#include "lockfree/arch.h"
#include "lockfree/die.h"
#include "lockfree/thread.h"

#define HW_SLICE_MIN_NS 2000ull       /* no WORK slice shorter than this */
#define HW_CHUNK_NS 1000000ull        /* a WORK that cannot stop looks for a reset this often */
#define HW_LOOK_NS 50000ull           /* a long WORK that can stop looks for a request at least this often */

/* ---- the OS's side ---- */

void hw_queue_set_priority(struct hw_queue *q, int32_t priority)
{
	struct hw_engine *e = &q->a->engines[q->engine];
	atomic_store_explicit(&q->priority, priority, memory_order_relaxed);
	if (priority)
		atomic_store_explicit(&e->prios, true, memory_order_relaxed);
	/* a queue that now outranks the one running: the run list asks itself */
	lf_wake_notify(&e->wake);
}

int32_t hw_queue_priority(const struct hw_queue *q)
{
	return atomic_load_explicit(&q->priority, memory_order_relaxed);
}

bool hw_queue_faulted(const struct hw_queue *q)
{
	return q->faulted;
}

void hw_engine_preempt(struct hw_adapter *a, unsigned engine, int32_t priority)
{
	struct hw_engine *e = &a->engines[engine];
	/* raise the threshold only (two requests racing keep the higher); seq_cst:
	 * ordered after the caller's publication of the work it preempts for */
	int32_t cur = atomic_load_explicit(&e->preempt_prio, memory_order_relaxed);
	while (cur < priority &&
	       !atomic_compare_exchange_weak_explicit(&e->preempt_prio, &cur, priority, memory_order_seq_cst,
						      memory_order_relaxed))
		;
}

struct hw_queue *hw_engine_running(const struct hw_adapter *a, unsigned engine)
{
	return atomic_load_explicit(&a->engines[engine].running, memory_order_acquire);
}

uint64_t hw_engine_progress(const struct hw_adapter *a, unsigned engine)
{
	return atomic_load_explicit(&a->engines[engine].progress, memory_order_acquire);
}

int hw_engine_reset(struct hw_adapter *a, unsigned engine, struct hw_queue *q, int64_t timeout_ns)
{
	struct hw_engine *e = &a->engines[engine];
	/* seq_cst: the engine's reset check (relaxed load) between slices sees
	 * it within a chunk; the clear below is a CAS so that exactly one of the
	 * engine (aborting) and this side (withdrawing) takes the request */
	atomic_store_explicit(&e->reset_q, q, memory_order_seq_cst);
	uint64_t t0 = lf_now_ns();
	for (unsigned spin = 0;; spin++) {
		if (!atomic_load_explicit(&e->reset_q, memory_order_acquire))
			return 0;               /* the engine aborted q */
		bool left = atomic_load_explicit(&e->running, memory_order_acquire) != q;
		bool late = timeout_ns >= 0 && lf_now_ns() - t0 >= (uint64_t)timeout_ns;
		if (left || late) {
			struct hw_queue *expect = q;
			if (atomic_compare_exchange_strong_explicit(&e->reset_q, &expect, NULL, memory_order_acq_rel,
								    memory_order_acquire))
				return left ? -EAGAIN : -ETIMEDOUT;
			return 0;               /* the engine took it meanwhile */
		}
		if (spin < 64)
			lf_cpu_relax();
		else
			sched_yield();
	}
}

void hw_engine_preempt_stats(const struct hw_adapter *a, unsigned engine, struct hw_engine_preempt_stats *out)
{
	const struct hw_engine *e = &a->engines[engine];
	out->preemptions = atomic_load_explicit(&e->preemptions, memory_order_relaxed);
	out->at_buffer_end = atomic_load_explicit(&e->at_buffer_end, memory_order_relaxed);
	out->mid_buffer = atomic_load_explicit(&e->mid_buffer, memory_order_relaxed);
	out->mid_command = atomic_load_explicit(&e->mid_command, memory_order_relaxed);
	out->mid_command_run_ns = atomic_load_explicit(&e->mid_command_run_ns, memory_order_relaxed);
	out->ctx_saves = atomic_load_explicit(&e->ctx_saves, memory_order_relaxed);
	out->ctx_restores = atomic_load_explicit(&e->ctx_restores, memory_order_relaxed);
	out->resets = atomic_load_explicit(&e->resets, memory_order_relaxed);
	out->ctx_switches = atomic_load_explicit(&e->ctx_switches, memory_order_relaxed);
	out->at_split = atomic_load_explicit(&e->at_split, memory_order_relaxed);
	out->ctx_faults = atomic_load_explicit(&e->ctx_faults, memory_order_relaxed);
	out->ctx_bad_images = atomic_load_explicit(&e->ctx_bad_images, memory_order_relaxed);
	out->paging_ops = atomic_load_explicit(&e->paging_ops, memory_order_relaxed);
	out->data_faults = atomic_load_explicit(&e->data_faults, memory_order_relaxed);
}

const struct hw_queue *hw_engine_context(const struct hw_adapter *a, unsigned engine)
{
	return atomic_load_explicit(&a->engines[engine].ctx_loaded, memory_order_acquire);
}

/* ---- the engine's side ---- */

static void hw_progress(struct hw_engine *e)
{
	/* release, single writer: the watchdog that sees the new count sees the
	 * engine past the command that was stuck */
	atomic_store_explicit(&e->progress, atomic_load_explicit(&e->progress, memory_order_relaxed) + 1,
			      memory_order_release);
}

unsigned hw_preempt_level(const struct hw_adapter *a, const struct hw_queue *q)
{
	if (!a->caps.preemption_aware)
		return 0;
	if (a->caps.fault == HW_FAULT_PREEMPT_ANYWHERE)
		return 5;              /* broken on purpose: the granularity is ignored */
	if (a->caps.fault == HW_FAULT_COMPUTE_AS_GRAPHICS)
		return (unsigned)a->caps.gfx_preempt;   /* broken on purpose: the compute level is never read */
	return q->kind == HW_WORK_COMPUTE ? (unsigned)a->caps.compute_preempt : (unsigned)a->caps.gfx_preempt;
}

/* A queue of higher priority than q runnable now.  The run list sees by
 * itself a ring the CMP watches, a kick, a satisfied HW wait; new
 * kernel-mode work counts only with `km` (the OS scheduler's request). */
static bool hw_higher_runnable(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q, bool km)
{
	int32_t p = hw_queue_eff_priority(q);
	uint32_t n = atomic_load_explicit(&e->nqueues, memory_order_acquire);
	bool polled = false;
	for (uint32_t i = 0; i < n; i++) {
		struct hw_queue *h = e->queues[i];
		if (h == q || hw_queue_eff_priority(h) <= p)
			continue;
		if (!h->um && !km && !h->waiting)
			continue;
		if (h->um && !polled && atomic_load_explicit(&e->um_connected, memory_order_relaxed)) {
			hw_engine_poll_doorbells(a, e, lf_now_ns());   /* the CMP watches the doorbells */
			polled = true;
		}
		if (hw_queue_runnable(a, h))
			return true;
	}
	return false;
}

bool hw_queue_preempt_pending(struct hw_queue *q)
{
	struct hw_adapter *a = q->a;
	struct hw_engine *e = &a->engines[q->engine];
	/* relaxed, as in hw_preempt_due: the engine's own look at the request
	 * (nothing is read through it) */
	int32_t req = atomic_load_explicit(&e->preempt_prio, memory_order_relaxed);
	if (req > hw_queue_eff_priority(q) && (req == HW_PRIORITY_PREEMPT_ALL || hw_higher_runnable(a, e, q, true)))
		return true;
	return atomic_load_explicit(&e->prios, memory_order_relaxed) && hw_higher_runnable(a, e, q, false);
}

bool hw_preempt_due(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q, unsigned level)
{
	if (hw_preempt_level(a, q) < level)
		return false;          /* not a point this granularity can stop at */
	if (atomic_load_explicit(&e->flush_q, memory_order_relaxed) == q)
		return true;           /* the OS takes the queue back (resubmission) */
	int32_t p = hw_queue_eff_priority(q);
	int32_t req = atomic_load_explicit(&e->preempt_prio, memory_order_relaxed);
	if (req > p) {
		/* a TDR's request preempts whatever runs; a scheduler's, when the
		 * work it was sent for is still there to run */
		if (req == HW_PRIORITY_PREEMPT_ALL || hw_higher_runnable(a, e, q, true))
			return true;
		atomic_compare_exchange_strong_explicit(&e->preempt_prio, &req, INT32_MIN, memory_order_relaxed,
							memory_order_relaxed);   /* stale: it ran meanwhile */
	}
	if (!atomic_load_explicit(&e->prios, memory_order_relaxed))
		return false;
	return hw_higher_runnable(a, e, q, false);
}

/* The OS asked for q back (hw_queue_flush): hand it what was not started. */
static void hw_flush_take(struct hw_engine *e, struct hw_queue *q)
{
	struct hw_queue *expect = q;
	if (atomic_load_explicit(&e->flush_q, memory_order_relaxed) != q ||
	    !atomic_compare_exchange_strong_explicit(&e->flush_q, &expect, NULL, memory_order_acq_rel,
						     memory_order_relaxed))
		return;
	size_t k = 0;
	if (q->work_left_ns) {
		/* the rest of the interrupted WORK goes back at the head, as a
		 * WORK of its remaining time and sub-units */
		uint64_t slice = q->work_slice_ns ? q->work_slice_ns : 1;
		q->flush_buf[k++] = (struct hw_cmd){ .op = HW_CMD_WORK, .pad = q->kind | q->work_tag << HW_CMD_TAG_SHIFT, .arg = q->work_left_ns,
						     .value = (q->work_left_ns + slice - 1) / slice };
		q->work_left_ns = 0;
	}
	while (k < q->flush_cap && lf_ring_pop_spsc(q->ring, &q->flush_buf[k]))
		k++;
	if (lf_ring_size(q->ring))
		lf_die("hw_queue_flush: the OS's buffer holds %zu commands, the ring more", q->flush_cap);
	q->flush_n = k;
	/* the engine runs nothing else until the OS has put them back
	 * (hw_queue_flush_done clears it) */
	atomic_store_explicit(&e->resubmit_hold, true, memory_order_relaxed);
	/* release: the commands copied out are visible to the OS that sees it */
	atomic_store_explicit(&q->flushed, true, memory_order_release);
}

void hw_preempt_take(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q, unsigned level)
{
	lf_count(&e->preemptions, 1);
	if (hw_tracing(a))
		hw_trace_op(a, e, q, HW_TRACE_PREEMPT, NULL, level, lf_now_ns(), 0);
	lf_count(level == 1 ? &e->at_buffer_end : level == 2 ? &e->mid_buffer : &e->mid_command, 1);
	if (level == 1 && q->split_open)
		lf_count(&e->at_split, 1);   /* between two split packets of one command */
	/* taken back first: the rest of the WORK goes to the OS, not to the
	 * context allocation */
	hw_flush_take(e, q);
	/* the state goes to the context allocation (modeled cost); restored on
	 * the next run */
	hw_ctx_save(a, e, q);
	q->ctx_saved = true;
	q->ctx_in_alloc = false;       /* the preemption's save supersedes it */
	atomic_store_explicit(&e->ctx_loaded, NULL, memory_order_release);
	/* the request is answered: a later one sets it again */
	atomic_store_explicit(&e->preempt_prio, INT32_MIN, memory_order_relaxed);
	e->preempted_now = true;
	hw_progress(e);
}

void hw_ctx_load(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q)
{
	if (atomic_load_explicit(&e->ctx_loaded, memory_order_relaxed) == q)
		return;
	hw_ctx_check_images(a, e, q);   /* segment-managed allocations */
	if (q->ctx_in_alloc) {
		/* switched out by a ContextSwitch packet: restored now, lazily */
		hw_ctx_restore(a, e, q);
		q->ctx_in_alloc = false;
	}
	/* release: a reader that sees q loaded sees the commands before it done */
	atomic_store_explicit(&e->ctx_loaded, q, memory_order_release);
}

void hw_ctx_switch(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q)
{
	(void)q;
	if (a->caps.fault == HW_FAULT_IGNORE_CONTEXT_SWITCH)
		return;                /* broken on purpose: the packet switches nothing */
	struct hw_queue *cur = (struct hw_queue *)atomic_load_explicit(&e->ctx_loaded, memory_order_relaxed);
	if (cur) {
		/* the loaded context to its context allocation (modeled cost) */
		hw_ctx_save(a, e, cur);
		cur->ctx_in_alloc = true;
	}
	atomic_store_explicit(&e->ctx_loaded, NULL, memory_order_release);
	lf_count(&e->ctx_switches, 1);
}

/* ---- the context allocation ---- */

static _Atomic uint64_t hw_ctx_ids = 1;

static int hw_ctx_alloc_new(struct hw_adapter *a, size_t bytes, bool managed, struct hw_ctx_alloc **out)
{
	if (!bytes)
		return -EINVAL;
	if (managed && !a->caps.ctx_local_slots)
		return -EINVAL;
	struct hw_ctx_alloc *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->a = a;
	c->bytes = bytes;
	c->save_ns = (uint64_t)((unsigned __int128)a->caps.ctx_save_ns * bytes / HW_CTX_ALLOC_BYTES_DEFAULT);
	c->restore_ns = (uint64_t)((unsigned __int128)a->caps.ctx_restore_ns * bytes / HW_CTX_ALLOC_BYTES_DEFAULT);
	c->id = atomic_fetch_add_explicit(&hw_ctx_ids, 1, memory_order_relaxed);
	c->managed = managed;
	pthread_mutex_lock(&a->queue_lock);
	c->next = a->ctx_allocs;
	a->ctx_allocs = c;
	pthread_mutex_unlock(&a->queue_lock);
	*out = c;
	return 0;
}

int hw_ctx_alloc_create(struct hw_adapter *a, size_t bytes, struct hw_ctx_alloc **out)
{
	return hw_ctx_alloc_new(a, bytes, false, out);
}

int hw_ctx_alloc_create_managed(struct hw_adapter *a, size_t bytes, struct hw_ctx_alloc **out)
{
	return hw_ctx_alloc_new(a, bytes, true, out);
}

void hw_queue_set_ctx_alloc(struct hw_queue *q, struct hw_ctx_alloc *c)
{
	assert(!q->ctx_alloc);
	q->ctx_alloc = c;   /* before q's first command: the ring's release publishes it */
}

void hw_queue_set_dev_alloc(struct hw_queue *q, struct hw_ctx_alloc *c)
{
	/* release: the allocation's placement before the engine reaches it */
	atomic_store_explicit(&q->dev_alloc, c, memory_order_release);
}

void hw_ctx_alloc_stats(const struct hw_ctx_alloc *c, struct hw_ctx_alloc_stats *out)
{
	out->bytes = c->bytes;
	out->managed = c->managed;
	out->va = atomic_load_explicit(&c->va, memory_order_acquire);
	out->saves = atomic_load_explicit(&c->saves, memory_order_relaxed);
	out->restores = atomic_load_explicit(&c->restores, memory_order_relaxed);
	out->saved_work_ns = atomic_load_explicit(&c->saved_work_ns, memory_order_relaxed);
	out->restored_work_ns = atomic_load_explicit(&c->restored_work_ns, memory_order_relaxed);
	struct hw_ctx_image *img = hw_ctx_img(c->a, (struct hw_ctx_alloc *)c);   /* not resident: nothing held here */
	out->holds = img && atomic_load_explicit(&img->holds, memory_order_relaxed);
	out->destroyed = atomic_load_explicit(&c->destroyed, memory_order_relaxed);
}

void hw_ctx_alloc_destroy(struct hw_ctx_alloc *c)
{
	atomic_store_explicit(&c->destroyed, true, memory_order_relaxed);
}

/* The engine is the allocation's only writer: a plain read-modify-write. */
static void hw_ctx_bump(_Atomic uint64_t *x)
{
	atomic_store_explicit(x, atomic_load_explicit(x, memory_order_relaxed) + 1, memory_order_relaxed);
}

/* q's image, or NULL with a fault counted (managed and not resident). */
static struct hw_ctx_image *hw_ctx_reach(struct hw_adapter *a, struct hw_engine *e, struct hw_ctx_alloc *c)
{
	struct hw_ctx_image *img = hw_ctx_img(a, c);
	if (!img)
		lf_count(&e->ctx_faults, 1);
	return img;
}

void hw_ctx_save(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q)
{
	struct hw_ctx_alloc *c = q->ctx_alloc;
	uint64_t cost = c ? c->save_ns : a->caps.ctx_save_ns;
	if (cost)
		lf_spin_ns(cost);
	lf_count(&e->ctx_saves, 1);
	if (!c)
		return;                /* no allocation: the context stays in q */
	struct hw_ctx_image *img = hw_ctx_reach(a, e, c);
	if (img) {
		atomic_store_explicit(&img->work_left_ns, q->work_left_ns, memory_order_relaxed);
		atomic_store_explicit(&img->work_slice_ns, q->work_slice_ns, memory_order_relaxed);
		atomic_store_explicit(&img->kind, q->kind, memory_order_relaxed);
		atomic_store_explicit(&img->mid_buffer, q->mid_buffer, memory_order_relaxed);
		atomic_store_explicit(&img->holds, true, memory_order_relaxed);
	}
	atomic_store_explicit(&c->saved_work_ns, q->work_left_ns, memory_order_relaxed);
	/* the context lives in the allocation now, not in the queue (a fault
	 * loses it) */
	q->work_left_ns = 0;
	q->work_slice_ns = 0;
	hw_ctx_bump(&c->saves);
}

void hw_ctx_restore(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q)
{
	struct hw_ctx_alloc *c = q->ctx_alloc;
	uint64_t cost = c ? c->restore_ns : a->caps.ctx_restore_ns;
	if (cost)
		lf_spin_ns(cost);
	lf_count(&e->ctx_restores, 1);
	struct hw_ctx_alloc *dev = atomic_load_explicit(&q->dev_alloc, memory_order_acquire);
	if (dev)
		hw_ctx_reach(a, e, dev);   /* its device's allocation, as at every load */
	if (!c)
		return;
	struct hw_ctx_image *img = hw_ctx_reach(a, e, c);
	if (!img || !atomic_load_explicit(&img->holds, memory_order_relaxed))
		return;
	if (a->caps.fault != HW_FAULT_CTX_RESTORE_LOST) {   /* broken on purpose: nothing read back */
		q->work_left_ns = atomic_load_explicit(&img->work_left_ns, memory_order_relaxed);
		q->work_slice_ns = atomic_load_explicit(&img->work_slice_ns, memory_order_relaxed);
		q->kind = atomic_load_explicit(&img->kind, memory_order_relaxed);
		q->mid_buffer = atomic_load_explicit(&img->mid_buffer, memory_order_relaxed);
	}
	atomic_store_explicit(&c->restored_work_ns, q->work_left_ns, memory_order_relaxed);
	atomic_store_explicit(&img->holds, false, memory_order_relaxed);
	hw_ctx_bump(&c->restores);
}

uint64_t hw_ctx_drop(struct hw_queue *q)
{
	struct hw_ctx_alloc *c = q->ctx_alloc;
	struct hw_ctx_image *img = c ? hw_ctx_img(q->a, c) : NULL;
	if (!img || !atomic_load_explicit(&img->holds, memory_order_relaxed))
		return 0;
	atomic_store_explicit(&img->holds, false, memory_order_relaxed);
	return atomic_load_explicit(&img->work_left_ns, memory_order_relaxed);
}

/* Loading q's context the first time: its image must be the one
 * InitContextResource wrote for it; its device's allocation must be there. */
void hw_ctx_check_images(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q)
{
	struct hw_ctx_alloc *dev = atomic_load_explicit(&q->dev_alloc, memory_order_acquire);
	if (dev && !hw_ctx_reach(a, e, dev))
		return;
	if (q->ctx_loaded_once || !q->ctx_alloc || !q->ctx_alloc->managed)
		return;
	q->ctx_loaded_once = true;
	struct hw_ctx_image *img = hw_ctx_reach(a, e, q->ctx_alloc);
	if (img && atomic_load_explicit(&img->init, memory_order_relaxed) != q->ctx_alloc->id)
		lf_count(&e->ctx_bad_images, 1);
}

bool hw_reset_check(struct hw_engine *e, struct hw_queue *q)
{
	if (atomic_load_explicit(&e->reset_q, memory_order_relaxed) != q)
		return false;
	struct hw_queue *expect = q;
	if (!atomic_compare_exchange_strong_explicit(&e->reset_q, &expect, NULL, memory_order_acq_rel,
						     memory_order_relaxed))
		return false;          /* withdrawn */
	q->faulted = true;
	q->work_left_ns = 0;
	hw_ctx_drop(q);
	/* the TDR's preemption request went unanswered: it dies with the reset */
	atomic_store_explicit(&e->preempt_prio, INT32_MIN, memory_order_relaxed);
	q->ctx_saved = false;
	q->ctx_in_alloc = false;
	atomic_store_explicit(&e->ctx_loaded, NULL, memory_order_release);   /* the reset lost it */
	lf_count(&e->resets, 1);
	e->preempted_now = true;       /* the pass starts over */
	hw_progress(e);
	return true;
}

/* A preemption stops q's WORK between two slices: what ran of it in this
 * run is counted (seed gpu-preemption: "Hardware devices that have a finer
 * granularity of mid-DMA buffer preemption should produce a better customer
 * experience": the finer the slices, the less runs before the stop). */
static void hw_work_stop(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q)
{
	lf_count(&e->mid_command_run_ns, q->work_run_left_ns - q->work_left_ns);
	hw_preempt_take(a, e, q, 3);
}

/* A short WORK (at most work_spin_max_ns): spun, slice by slice.  False:
 * preempted between two slices (the rest kept). */
static bool hw_work_spin(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q, bool stoppable)
{
	while (q->work_left_ns) {
		uint64_t s = q->work_slice_ns < q->work_left_ns ? q->work_slice_ns : q->work_left_ns;
		lf_spin_ns(s);
		q->work_left_ns -= s;
		if (stoppable && q->work_left_ns && hw_preempt_due(a, e, q, 3)) {
			hw_work_stop(a, e, q);
			return false;
		}
	}
	return true;
}

/* A long WORK: it ends at a time, the engine sleeps toward it and looks
 * every HW_LOOK_NS (or slice) for a request, and every HW_CHUNK_NS for a
 * reset.  A request stops it at the next slice boundary after it was seen
 * (slices are counted from where the WORK started or resumed); one standing
 * as the WORK begins is seen then, and stops it at its first boundary
 * however late the host thread wakes (an oversleep is not GPU time, as in
 * hw_work_spin).  The host CPU sleeps meanwhile, as a GPU's work costs the
 * CPU nothing.  False: preempted (the rest kept) or reset. */
static bool hw_work_sleep(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q, bool stoppable)
{
	uint64_t start = lf_now_ns(), left = q->work_left_ns, slice = q->work_slice_ns;
	uint64_t end = left == UINT64_MAX ? UINT64_MAX : start + left;
	uint64_t look = !stoppable ? HW_CHUNK_NS : slice > HW_LOOK_NS ? slice : HW_LOOK_NS;
	if (stoppable && slice < left && hw_preempt_due(a, e, q, 3)) {
		lf_sleep_until(start + slice);
		if (hw_reset_check(e, q))
			return false;
		q->work_left_ns = end - (start + slice);
		hw_work_stop(a, e, q);
		return false;
	}
	for (;;) {
		uint64_t now = lf_now_ns();
		if (now >= end)
			break;
		/* an oversleep delays the next look, never the WORK's end, which is a time */
		lf_sleep_until(end - now > look ? now + look : end);
		if (hw_reset_check(e, q))
			return false;
		if (atomic_load_explicit(&a->stop, memory_order_relaxed))
			break;     /* the adapter stops: a never-ending WORK ends */
		now = lf_now_ns();
		if (!stoppable || now >= end || !hw_preempt_due(a, e, q, 3))
			continue;
		uint64_t b = start + (now - start + slice - 1) / slice * slice;   /* the next boundary */
		if (b >= end)
			continue;                        /* the last slice: it ends first */
		if (b > now)
			lf_sleep_until(b);
		q->work_left_ns = end - b;
		hw_work_stop(a, e, q);
		return false;
	}
	q->work_left_ns = 0;
	return true;
}

/* Run what is left of q's WORK.  False: preempted (the rest is kept) or reset. */
static bool hw_work_slices(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q)
{
	bool stoppable = hw_preempt_level(a, q) >= 3 && q->work_slice_ns < q->work_left_ns;
	q->work_run_left_ns = q->work_left_ns;
	if (q->work_left_ns <= a->caps.work_spin_max_ns)
		return hw_work_spin(a, e, q, stoppable);
	return hw_work_sleep(a, e, q, stoppable);
}

bool hw_work_run(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q, const struct hw_cmd *c)
{
	q->kind = HW_WORK_KIND(c->pad) == HW_WORK_COMPUTE ? HW_WORK_COMPUTE : HW_WORK_GRAPHICS;
	uint64_t slices = 1;
	unsigned level = hw_preempt_level(a, q);
	if (level >= 3 && c->arg != UINT64_MAX) {
		slices = c->value ? c->value : 1;
		for (unsigned l = 3; l < level; l++)
			slices *= HW_WORK_FANOUT;
		uint64_t most = c->arg / HW_SLICE_MIN_NS;
		if (slices > most)
			slices = most ? most : 1;
	}
	q->work_left_ns = c->arg;
	q->work_slice_ns = c->arg == UINT64_MAX ? UINT64_MAX : c->arg / slices;
	if (!q->work_left_ns)
		return true;
	return hw_work_slices(a, e, q);
}

bool hw_work_resume(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q)
{
	return hw_work_slices(a, e, q);
}

int32_t hw_queue_eff_priority(const struct hw_queue *q)
{
	if (atomic_load_explicit(&q->paging_first, memory_order_relaxed))
		return INT32_MAX;
	return atomic_load_explicit(&q->priority, memory_order_relaxed);
}

void hw_fence_id_done(struct hw_queue *q, const struct hw_cmd *c)
{
	uint32_t n = atomic_load_explicit(&q->nfence_ids, memory_order_relaxed);
	if (n < HW_FENCE_ID_LOG) {
		q->fence_ids[n] = c->arg;
		/* release: the entry before the count (pairs with hw_queue_fence_log) */
		atomic_store_explicit(&q->nfence_ids, n + 1, memory_order_release);
	}
	if (c->value == 1 && atomic_load_explicit(&q->paging_first, memory_order_relaxed))
		atomic_fetch_sub_explicit(&q->paging_first, 1, memory_order_relaxed);
}

size_t hw_queue_fence_log(const struct hw_queue *q, uint64_t *out, size_t max)
{
	uint32_t n = atomic_load_explicit(&q->nfence_ids, memory_order_acquire);
	size_t k = n < max ? n : max;
	for (size_t i = 0; i < k; i++)
		out[i] = q->fence_ids[i];
	return k;
}

int hw_queue_flush(struct hw_queue *q, struct hw_cmd *out, size_t max, size_t *n, int64_t timeout_ns)
{
	struct hw_engine *e = &q->a->engines[q->engine];
	q->flush_buf = out;
	q->flush_cap = max;
	/* seq_cst: seen by the engine's next boundary check (relaxed load) */
	atomic_store_explicit(&e->flush_q, q, memory_order_seq_cst);
	uint64_t t0 = lf_now_ns();
	for (unsigned spin = 0;; spin++) {
		if (atomic_load_explicit(&q->flushed, memory_order_acquire)) {
			*n = q->flush_n;
			return 0;
		}
		bool left = atomic_load_explicit(&e->running, memory_order_acquire) != q;
		bool late = timeout_ns >= 0 && lf_now_ns() - t0 >= (uint64_t)timeout_ns;
		if (left || late) {
			struct hw_queue *expect = q;
			if (atomic_compare_exchange_strong_explicit(&e->flush_q, &expect, NULL, memory_order_acq_rel,
								    memory_order_acquire))
				return left ? -EAGAIN : -ETIMEDOUT;
			/* the engine took it: flushed comes at once */
		}
		if (spin < 64)
			lf_cpu_relax();
		else
			sched_yield();
	}
}

void hw_queue_flush_done(struct hw_queue *q, uint32_t paging)
{
	atomic_store_explicit(&q->paging_first, paging, memory_order_relaxed);
	if (paging)   /* the run list honours paging_first through its priority pass */
		atomic_store_explicit(&q->a->engines[q->engine].prios, true, memory_order_relaxed);
	/* release: the resubmitted ring entries before the engine may run q */
	atomic_store_explicit(&q->flushed, false, memory_order_release);
	/* release: paging_first and the ring before the engine runs anything
	 * again (pairs with the acquire in hw_engine_pass) */
	atomic_store_explicit(&q->a->engines[q->engine].resubmit_hold, false, memory_order_release);
	lf_wake_notify(&q->a->engines[q->engine].wake);
}

int32_t hw_engine_top_priority(struct hw_adapter *a, struct hw_engine *e)
{
	int32_t top = INT32_MIN;
	uint32_t n = atomic_load_explicit(&e->nqueues, memory_order_acquire);
	for (uint32_t i = 0; i < n; i++) {
		struct hw_queue *q = e->queues[i];
		int32_t p = hw_queue_eff_priority(q);
		if (p > top && hw_queue_runnable(a, q))
			top = p;
	}
	return top;
}
