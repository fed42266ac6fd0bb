/* gpu-model/os/queue.c — the kernel-mode view of a HW queue, and GPU waits held on the CPU.
 *
 * Seed (legacy monitored fence, "GPU wait"): there is no wait on the GPU; the
 * OS queues the dependency and "command buffers submitted after the wait
 * operation aren't scheduled for execution until the wait operation is
 * satisfied".  Each queue keeps a FIFO of held command buffers; a WAIT on a
 * monitored fence stops feeding the ring until the fence reaches the value.
 * A WAIT on a native fence goes to the hardware.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu-model/hw/doorbell.h"
#include "gpu-model/os/os_internal.h"
#include "lockfree/alloc.h"
#include "lockfree/arch.h"
#include "lockfree/die.h"
#include "lockfree/thread.h"

static int os_queue_new(struct os_adapter *a, unsigned engine, size_t ring_slots, bool system, struct os_queue **out)
{
	uint32_t n = atomic_load(&a->nqueues);
	if (n == OS_MAX_QUEUES)
		return -ENOSPC;
	struct os_queue *q = lf_alloc(sizeof(*q), LF_CACHELINE);
	q->a = a;
	int rc = hw_queue_create(a->hw, engine, ring_slots, &q->hwq);
	if (rc) {
		lf_free(q, sizeof(*q), LF_CACHELINE);
		return rc;
	}
	/* a system context has no context allocation (DxgkCbCreateContextAllocation's Remarks) */
	rc = system ? 0 : os_ctx_alloc_create(a, q->hwq, HW_CTX_ALLOC_BYTES_DEFAULT, &q->ctx_alloc);
	if (rc)
		lf_die("os_queue_create: context allocation: %d", rc);   /* the HW queue is on the run list already */
	pthread_mutex_init(&q->lock, NULL);
	q->system = system;
	/* again: the first context allocation made the paging queue (vidmm.c),
	 * which took slot n meanwhile (it was lost, overwritten here) */
	n = atomic_load(&a->nqueues);
	if (n == OS_MAX_QUEUES)
		lf_die("os_queue_create: the paging queue took the last slot");
	a->queues[n] = q;
	atomic_store_explicit(&a->nqueues, n + 1, memory_order_release);
	*out = q;
	return 0;
}

/* A WAIT the OS (not the GPU) holds: one on a monitored fence.  A native
 * cross-adapter fence's wait stays on the GPU (seed native-gpu-fence,
 * "Cross-adapter native fences": "wait and signals submitted on the same GPU
 * still benefit from faster on GPU synchronization"); broken on purpose
 * (OS_FAULT_CROSS_WAIT_HELD): held as a monitored fence's. */
static bool os_wait_on_cpu(const struct os_adapter *a, const struct hw_cmd *c)
{
	if (c->op != HW_CMD_WAIT)
		return false;
	if (!c->fence->native)
		return true;
	const struct os_fence *f = c->fence->owner;
	return a->cfg.fault == OS_FAULT_CROSS_WAIT_HELD && f && f->x;
}

int os_queue_create(struct os_adapter *a, unsigned engine, size_t ring_slots, struct os_queue **out)
{
	return os_queue_new(a, engine, ring_slots, false, out);
}

int os_queue_create_system(struct os_adapter *a, unsigned engine, size_t ring_slots, struct os_queue **out)
{
	return os_queue_new(a, engine, ring_slots, true, out);
}

/* vidmm.c: the OS makes a context's allocation resident before its commands
 * go to the hardware (DxgkCbCreateContextAllocation's Remarks); an evicted
 * one comes back here. */
static int os_queue_resident(struct os_queue *q)
{
	if (!q->a->vidmm || !q->ctx_alloc || hw_ctx_alloc_va(q->ctx_alloc))
		return 0;
	return os_ctx_alloc_make_resident(q->a, q->ctx_alloc);
}

/* The fence a WAIT command names, if the OS (not the GPU) must hold it. */
static struct os_fence *os_cpu_held_fence(struct os_adapter *a, const struct hw_cmd *c)
{
	return os_wait_on_cpu(a, c) ? c->fence->owner : NULL;
}

/* Some held command buffer could not be fed now (ring full, queue busy): the
 * interrupt thread polls for it (a bounded park) until it can.  A queue off
 * the run list (its context suspended) drains nothing: no polling, its resume
 * comes back (os_queue_resumed). */
static void os_queue_retry_later(struct os_queue *q)
{
	struct os_adapter *a = q->a;
	/* seq_cst load after the hold's held_total RMW: pairs with a resume's
	 * scheduled store + held_total load (os_queue_resumed) */
	if (!hw_queue_scheduled(q->hwq))
		return;
	/* from a submitter, wake the interrupt thread, which may be parked for
	 * good (a record: a bare notify could be lost); the interrupt thread
	 * itself polls on its own (os_irq_main) */
	if (!atomic_exchange_explicit(&a->feed_retry, true, memory_order_seq_cst) && !os_in_irq_thread)
		hw_irq_kick(a->hw);
}

void os_queue_resumed(struct os_queue *q)
{
	/* seq_cst: after the caller's seq_cst scheduled store (the other half of
	 * os_queue_retry_later's pair): a hold it does not see saw the queue on
	 * the run list and asked for the retry itself */
	if (atomic_load_explicit(&q->a->held_total, memory_order_seq_cst) &&
	    !atomic_exchange_explicit(&q->a->feed_retry, true, memory_order_seq_cst))
		hw_irq_kick(q->a->hw);
}

/* A held WAIT on monitored fence f (legacy): a waiter of f from the moment
 * the feed reaches it, released like any CPU wait against the value that
 * was signaled (os.h, the release rule).  True: satisfied, go on. */
/* The timeline trace (os.h): q's held WAIT on f >= v, reached at t0, released now. */
static void os_held_wait_trace(struct os_queue *q, struct os_fence *f, uint64_t v, uint64_t t0)
{
	struct os_trace_rec r = {
		.kind = OS_TRACE_HELD_WAIT, .engine = (uint32_t)((hw_queue_handle(q->hwq) - 1) / HW_MAX_QUEUES), .tid = gettid(),
		.queue = hw_queue_handle(q->hwq), .fence = f->hw.handle, .value = v, .t0 = t0, .t1 = lf_now_ns(),
	};
	os_trace_add(q->a, &r);
}

static bool os_held_wait_done(struct os_queue *q, struct os_held *h, struct os_fence *f, uint64_t v)
{
	if (!h->wait) {
		/* relaxed: a statistic, read after the stack settled (os_adapter_stats) */
		atomic_fetch_add_explicit(&q->a->held_waits, 1, memory_order_relaxed);
		h->wait_t0 = os_tracing(q->a) ? lf_now_ns() : 0;
		h->wait = os_held_wait(f, v);
		if (!h->wait && h->wait_t0)
			os_held_wait_trace(q, f, v, h->wait_t0);   /* did not block */
		return !h->wait;
	}
	/* released, or reached now (the release may still be on its way) */
	if (!os_held_wait_ready(h->wait) && os_fence_read(f) < v)
		return false;
	os_held_wait_put(f, h->wait);
	h->wait = NULL;
	if (h->wait_t0)
		os_held_wait_trace(q, f, v, h->wait_t0);
	return true;
}

/* Feed the ring from the held FIFO until a WAIT on a monitored fence is not
 * yet satisfied.  Returns the number of held buffers finished.  q->lock held. */
static size_t os_queue_feed_locked(struct os_queue *q)
{
	lf_mutex_assert_held(&q->lock);
	size_t finished = 0;
	struct os_held *h;
	while ((h = q->head)) {
		while (h->pos < h->n) {
			const struct hw_cmd *c = &h->cmds[h->pos];
			struct os_fence *f = os_cpu_held_fence(q->a, c);
			if (f) {
				bool held = h->wait != NULL;
				if (!os_held_wait_done(q, h, f, c->value))
					return finished;        /* held on the CPU until f reaches it */
				if (held)   /* timing.c: released, it re-enters through the scheduler's work */
					os_timing_work(q->a->cfg.timing.km_sched_ns);
				h->pos++;                       /* satisfied: the WAIT is dropped */
				continue;
			}
			/* Never wait for ring space here: the interrupt thread feeds too,
			 * and an engine blocked on a GPU wait that only another held
			 * buffer can release would never drain it.  The interrupt thread
			 * comes back (os_queue_retry_later). */
			if (!hw_queue_submit_some(q->hwq, c, 1)) {
				os_queue_retry_later(q);
				return finished;
			}
			h->pos++;
		}
		q->head = h->next;
		if (!q->head)
			q->tail = NULL;
		free(h);
		finished++;
		atomic_fetch_sub_explicit(&q->nheld, 1, memory_order_relaxed);
		atomic_fetch_sub_explicit(&q->a->held_total, 1, memory_order_seq_cst);
	}
	return finished;
}

/* Hold cmds[0..n) behind what q holds already, and feed.  q->lock held. */
static int os_queue_hold_locked(struct os_queue *q, const struct hw_cmd *cmds, size_t n)
{
	struct os_held *h = malloc(sizeof(*h) + n * sizeof(*cmds));
	if (!h)
		return -ENOMEM;
	h->next = NULL;
	h->n = n;
	h->pos = 0;
	h->wait = NULL;
	memcpy(h->cmds, cmds, n * sizeof(*cmds));
	h->cmds[n - 1].pad |= HW_CMD_END_OF_BUFFER;   /* it holds the tail of a DMA buffer */
	if (q->tail)
		q->tail->next = h;
	else
		q->head = h;
	q->tail = h;
	atomic_fetch_add_explicit(&q->nheld, 1, memory_order_relaxed);
	/* seq_cst RMW, then the feed below resamples the fences: an interrupt that
	 * the interrupt thread handled before it could see this buffer is seen
	 * here (pairs with its held_total load after reading CurrentValue). */
	atomic_fetch_add_explicit(&q->a->held_total, 1, memory_order_seq_cst);
	os_queue_feed_locked(q);
	return 0;
}

/* Seed legacy monitored fence, "Monitored fence creation": the fence's
 * flags "specifying its waiting and signaling behavior" (os.h, OS_FENCE_NO_*):
 * may this device submit op (a SIGNAL, a WAIT, a software signal packet) for f? */
static bool os_behaviour_forbids(const struct os_fence *f, uint32_t op)
{
	unsigned b = f->behaviour;
	if (op == HW_CMD_WAIT)
		return b & OS_FENCE_NO_WAIT;
	if (op == HW_CMD_SIGNAL)
		return b & (OS_FENCE_NO_SIGNAL | OS_FENCE_NO_GPU_ACCESS);   /* NoGPUAccess: packets only */
	return op == HW_CMD_SW_SIGNAL && (b & OS_FENCE_NO_SIGNAL);
}

/* Ops up to STAMP with the fences they need; a SIGNAL of a monitored fence
 * only from an engine that can write it through its VA (the others signal
 * with os_queue_signal_from_gpu).  0 / -EINVAL / -ERANGE: on a 32-bit GPU a
 * GPU SIGNAL or WAIT (held on the CPU or not) more than UINT32_MAX/2 from
 * the fence's last signaled value (seed legacy monitored fence: "outstanding
 * wait and signal fence values can't be more than UINT_MAX/2 away from the
 * last signaled fence value"), as for CPU signals and waits / -EPERM: a
 * SIGNAL or WAIT the fence's creation flags forbid. */
static int os_queue_cmds_check(const struct os_queue *q, const struct hw_cmd *cmds, size_t n)
{
	bool no_va = q->a->cfg.caps.no_fence_va_engines & (1u << hw_queue_engine(q->hwq));
	for (size_t i = 0; i < n; i++) {
		const struct hw_cmd *c = &cmds[i];
		bool fenced = c->op == HW_CMD_SIGNAL || c->op == HW_CMD_WAIT;
		bool paging = c->op == HW_CMD_PAGING && q->system;   /* vidmm.c's paging buffers */
		bool data = c->op == HW_CMD_BIND || c->op == HW_CMD_STORE;   /* dma.c's allocations */
		if ((c->op > HW_CMD_STAMP && !paging && !data) || (fenced && !c->fence))
			return -EINVAL;
		if (no_va && c->op == HW_CMD_SIGNAL && !c->fence->native)
			return -EINVAL;
		if (fenced && c->fence->owner && os_behaviour_forbids(c->fence->owner, c->op))
			return -EPERM;
		if (fenced && c->fence->owner && os_out_of_range(c->fence->owner, c->value, c->op == HW_CMD_SIGNAL))
			return -ERANGE;
	}
	return 0;
}

/* Straight to the ring when nothing is held and no wait needs the CPU, else
 * held; the last command ends a DMA buffer.  q->lock held. */
static int os_queue_submit_locked(struct os_queue *q, const struct hw_cmd *cmds, size_t n)
{
	lf_mutex_assert_held(&q->lock);
	if (q->retired)
		return -ENODEV;
	bool direct = !q->head;
	for (size_t i = 0; direct && i < n; i++)
		if (os_wait_on_cpu(q->a, &cmds[i]))
			direct = false;
	size_t k = 0;
	if (direct) {
		/* nothing held, no CPU-held wait: straight to the ring, as much as
		 * it takes now; never wait for space (a suspended queue drains
		 * nothing: the submitting thread, the OS scheduler, would spin) */
		k = hw_queue_submit_some(q->hwq, cmds, n - 1);
		if (k == n - 1) {
			struct hw_cmd last = cmds[n - 1];
			last.pad |= HW_CMD_END_OF_BUFFER;   /* preempt.c: a DMA buffer ends here */
			k += hw_queue_submit_some(q->hwq, &last, 1);
		}
	}
	return k == n ? 0 : os_queue_hold_locked(q, cmds + k, n - k);
}

int os_queue_submit(struct os_queue *q, const struct hw_cmd *cmds, size_t n)
{
	if (!n)
		return 0;
	int rc = os_queue_cmds_check(q, cmds, n);
	if (!rc)
		rc = os_queue_resident(q);
	if (rc)
		return rc;
	pthread_mutex_lock(&q->lock);
	rc = os_queue_submit_locked(q, cmds, n);
	pthread_mutex_unlock(&q->lock);
	return rc;
}

int os_queue_submit_buffer(struct os_queue *q, const struct hw_cmd *cmds, size_t n, bool paging, uint64_t *id)
{
	if (!n)
		return -EINVAL;
	int rc = os_queue_cmds_check(q, cmds, n);
	if (!rc)
		rc = os_queue_resident(q);
	if (rc)
		return rc;
	struct hw_cmd *buf = malloc((n + 1) * sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	memcpy(buf, cmds, n * sizeof(*buf));
	pthread_mutex_lock(&q->lock);
	uint64_t i = ++q->next_id;
	buf[n] = (struct hw_cmd){ .op = HW_CMD_FENCE_ID, .arg = i, .value = paging ? 1 : 0 };
	rc = os_queue_submit_locked(q, buf, n + 1);
	pthread_mutex_unlock(&q->lock);
	free(buf);
	if (!rc && id)
		*id = i;
	return rc;
}

/* Seed (legacy monitored fence): "If a GPU engine isn't capable of writing to
 * a monitored fence using its virtual address, the user-mode driver (UMD)
 * uses the SignalSynchronizationObjectFromGpuCb callback to queue a software
 * signal packet to the GPU context."  The packet goes behind everything the
 * context holds or has queued; the engine reaching it interrupts, and the
 * interrupt thread writes the value as a CPU signal does. */
int os_queue_signal_from_gpu(struct os_queue *q, struct os_fence *f, uint64_t v)
{
	if (!f || f->a != q->a || os_fence_is_native(f))
		return -EINVAL;
	if (os_behaviour_forbids(f, HW_CMD_SW_SIGNAL))
		return -EPERM;
	if (os_out_of_range(f, v, true))
		return -ERANGE;
	if (q->a->cfg.fault == OS_FAULT_SW_SIGNAL_AT_QUEUE)
		return os_fence_signal_cpu(f, v);   /* broken: signaled when queued, not when reached */
	struct hw_cmd c = { .op = HW_CMD_SW_SIGNAL, .fence = &f->hw, .value = v };
	pthread_mutex_lock(&q->lock);
	int rc = os_queue_submit_locked(q, &c, 1);
	pthread_mutex_unlock(&q->lock);
	if (!rc)
		atomic_fetch_add_explicit(&q->a->sw_signal_packets, 1, memory_order_relaxed);
	return rc;
}

struct hw_ctx_alloc *os_queue_ctx_alloc(struct os_queue *q)
{
	return q->ctx_alloc;
}

int os_queue_context_switch(struct os_queue *q, uint64_t *id)
{
	/* zero length: nothing but the switch and the buffer's fence ID */
	struct hw_cmd buf[2] = { { .op = HW_CMD_CONTEXT_SWITCH } };
	pthread_mutex_lock(&q->lock);
	uint64_t i = ++q->next_id;
	buf[1] = (struct hw_cmd){ .op = HW_CMD_FENCE_ID, .arg = i };
	os_ddi_log(q->a, OS_DDI_SUBMIT_CONTEXT_SWITCH, hw_queue_engine(q->hwq), i);
	int rc = os_queue_submit_locked(q, buf, 2);
	pthread_mutex_unlock(&q->lock);
	if (!rc && id)
		*id = i;
	return rc;
}

/* Copy the buffers of in[0..n) that end with a FENCE_ID whose paging mark is
 * `paging` to out[*k..]; new IDs for those that get them.  Returns how many. */
static uint32_t os_resubmit_pick(struct os_queue *q, const struct hw_cmd *in, size_t n, bool paging,
				 struct hw_cmd *out, size_t *k)
{
	uint32_t picked = 0;
	for (size_t s = 0, i = 0; i < n; i++) {
		if (in[i].op != HW_CMD_FENCE_ID)
			continue;
		if ((in[i].value == 1) == paging) {
			memcpy(&out[*k], &in[s], (i - s + 1) * sizeof(*out));
			*k += i - s + 1;
			/* paging keeps its ID (broken variant: a new one); the others get new IDs */
			if (!paging || q->a->cfg.fault == OS_FAULT_PAGING_NEW_ID)
				out[*k - 1].arg = ++q->next_id;
			picked++;
		}
		s = i + 1;
	}
	return picked;
}

/* Put what could not go back to the ring at the head of the held list. */
static int os_queue_hold_front_locked(struct os_queue *q, const struct hw_cmd *cmds, size_t n)
{
	lf_mutex_assert_held(&q->lock);
	struct os_held *h = malloc(sizeof(*h) + n * sizeof(*cmds));
	if (!h)
		return -ENOMEM;
	h->n = n;
	h->pos = 0;
	h->wait = NULL;
	memcpy(h->cmds, cmds, n * sizeof(*cmds));
	h->next = q->head;
	q->head = h;
	if (!q->tail)
		q->tail = h;
	atomic_fetch_add_explicit(&q->nheld, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&q->a->held_total, 1, memory_order_seq_cst);
	return 0;
}

int os_queue_preempt(struct os_queue *q, int64_t timeout_ns)
{
	size_t cap = lf_ring_capacity(hw_queue_ring(q->hwq)) + 1;   /* + the rest of a WORK */
	struct hw_cmd *in = malloc(cap * sizeof(*in)), *out = malloc(cap * sizeof(*out));
	if (!in || !out) {
		free(in);
		free(out);
		return -ENOMEM;
	}
	pthread_mutex_lock(&q->lock);
	size_t n = 0;
	int rc = q->retired ? -ENODEV : hw_queue_flush(q->hwq, in, cap, &n, timeout_ns);
	if (!rc) {
		os_ddi_log(q->a, OS_DDI_PREEMPT_COMMAND, hw_queue_engine(q->hwq), 0);
		size_t k = 0, tail = 0;
		uint32_t paging = os_resubmit_pick(q, in, n, true, out, &k);
		uint32_t others = os_resubmit_pick(q, in, n, false, out, &k);
		for (size_t i = 0; i < n; i++)
			if (in[i].op == HW_CMD_FENCE_ID)
				tail = i + 1;
		/* the head of a buffer whose rest is still held on the CPU goes last */
		memcpy(&out[k], &in[tail], (n - tail) * sizeof(*out));
		k += n - tail;
		size_t pushed = hw_queue_submit_some(q->hwq, out, k);
		if (pushed < k)
			rc = os_queue_hold_front_locked(q, out + pushed, k - pushed);
		/* paging buffers run before any other queue of the engine (broken
		 * variant: the engine is told there were none) */
		hw_queue_flush_done(q->hwq, q->a->cfg.fault == OS_FAULT_PAGING_NOT_FIRST ? 0 : paging);
		atomic_fetch_add_explicit(&q->resubmitted, paging + others, memory_order_relaxed);
		atomic_fetch_add_explicit(&q->resubmitted_paging, paging, memory_order_relaxed);
	}
	pthread_mutex_unlock(&q->lock);
	free(in);
	free(out);
	return rc;
}

size_t os_queue_fence_log(struct os_queue *q, uint64_t *out, size_t max)
{
	return hw_queue_fence_log(q->hwq, out, max);
}

uint64_t os_queue_resubmitted(struct os_queue *q, uint64_t *paging)
{
	if (paging)
		*paging = atomic_load_explicit(&q->resubmitted_paging, memory_order_relaxed);
	return atomic_load_explicit(&q->resubmitted, memory_order_relaxed);
}

size_t os_queue_held(struct os_queue *q)
{
	return atomic_load_explicit(&q->nheld, memory_order_relaxed);
}

/* Drop held buffer h: its WAIT, if registered and not yet released, leaves
 * the fence's waiter set (a released one names a fence that may be gone:
 * it is not read).  q->lock held. */
static void os_queue_drop_held_locked(struct os_queue *q, struct os_held *h)
{
	lf_mutex_assert_held(&q->lock);
	if (h->wait) {
		struct os_fence *f = os_held_wait_ready(h->wait) ? NULL : h->cmds[h->pos].fence->owner;
		os_held_wait_put(f, h->wait);
	}
	free(h);
	atomic_fetch_sub_explicit(&q->nheld, 1, memory_order_relaxed);
	/* seq_cst as the feed's decrement (os_queue_feed_locked) */
	atomic_fetch_sub_explicit(&q->a->held_total, 1, memory_order_seq_cst);
}

void os_queue_retire(struct os_queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->retired = true;
	for (struct os_held *h = q->head, *next; h; h = next) {
		next = h->next;
		os_queue_drop_held_locked(q, h);
	}
	q->head = q->tail = NULL;
	pthread_mutex_unlock(&q->lock);
}

size_t os_queues_feed_held(struct os_adapter *a)
{
	size_t n = 0;
	uint32_t nq = atomic_load_explicit(&a->nqueues, memory_order_acquire);
	for (uint32_t i = 0; i < nq; i++) {
		struct os_queue *q = a->queues[i];
		if (!atomic_load_explicit(&q->nheld, memory_order_relaxed))
			continue;
		/* the queue's submitter may hold the lock: do not wait behind it,
		 * come back later */
		if (pthread_mutex_trylock(&q->lock)) {
			os_queue_retry_later(q);
			continue;
		}
		n += os_queue_feed_locked(q);
		pthread_mutex_unlock(&q->lock);
	}
	return n;
}
