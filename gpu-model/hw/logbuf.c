/* gpu-model/hw/logbuf.c — native fence log buffers, the hardware side (hw.h,
 * "native fence log buffers"): the engine's LOG command, the header's
 * FirstFreeEntryIndex/WraparoundCount word, the Set/UpdateNativeFenceLogs DDI
 * analogs.  The OS side (who reads, overrun fallback) is gpu-model/os/logbuf.c.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu-model/hw/hw_internal.h"
#include "lockfree/alloc.h"
#include "lockfree/arch.h"
#include "lockfree/asym.h"
#include "lockfree/die.h"

/* The HW_FAULT_LOG_INDEX_FIRST window between the early index and the late
 * entry: long enough that a reader polling the header reads the stale entry
 * every time (the test's detection must not depend on luck). */
#define HW_LOG_FAULT_WINDOW_NS 1000000

#define HW_LOG_IDX(h)  ((uint32_t)(h))          /* FirstFreeEntryIndex */
#define HW_LOG_WRAP(h) ((uint32_t)((h) >> 32))  /* WraparoundCount */

static uint64_t hw_log_header_at(uint64_t pos, uint32_t cap)
{
	return (uint64_t)(uint32_t)(pos / cap) << 32 | (uint32_t)(pos % cap);
}

struct hw_log *hw_log_create(size_t bytes, uint64_t pos)
{
	if (bytes < HW_LOG_HEADER_BYTES + sizeof(struct hw_log_entry) || bytes > UINT32_MAX)
		return NULL;
	struct hw_log *log = lf_alloc(bytes, LF_CACHELINE);   /* zeroed */
	log->bytes = (uint32_t)bytes;
	log->capacity = (uint32_t)((bytes - HW_LOG_HEADER_BYTES) / sizeof(struct hw_log_entry));
	log->seq = lf_alloc(log->capacity * sizeof(*log->seq), LF_CACHELINE);   /* zeroed */
	atomic_init(&log->header, hw_log_header_at(pos, log->capacity));
	atomic_init(&log->flushed, pos);
	return log;
}

void hw_log_destroy(struct hw_log *log)
{
	if (!log)
		return;
	lf_free(log->seq, log->capacity * sizeof(*log->seq), LF_CACHELINE);
	lf_free(log, log->bytes, LF_CACHELINE);
}

uint64_t hw_log_pos(const struct hw_log *log, uint64_t header)
{
	return (uint64_t)HW_LOG_WRAP(header) * log->capacity + HW_LOG_IDX(header);
}

uint64_t hw_log_header(const struct hw_log *log)
{
	/* acquire: pairs with the release store in hw_log_advance, so the entries
	 * below the index read are the engine's */
	return atomic_load_explicit(&log->header, memory_order_acquire);
}

/* FirstFreeEntryIndex + 1; past the end it wraps to 0 and WraparoundCount + 1.
 * The engine running the queue is the only writer. */
void hw_log_publish(struct hw_log *log)
{
	uint64_t h = atomic_load_explicit(&log->header, memory_order_relaxed);
	uint32_t idx = HW_LOG_IDX(h) + 1, wrap = HW_LOG_WRAP(h);
	if (idx == log->capacity) {
		idx = 0;
		wrap++;
	}
#ifdef HW_BROKEN_LOG_NO_BARRIER
	/* Broken on purpose, build-time only (mk/model-broken.mk): no barrier, the
	 * store may land after the CMP's MonitoredValue load and the interrupt
	 * (engine.c's hw_log_then_decide lets it) */
	atomic_store_explicit(&log->header, (uint64_t)wrap << 32 | idx, memory_order_relaxed);
#else
	/* seq_cst RMW: release, so the entry's fields are written before the index
	 * says so (pairs with hw_log_header's acquire), and the seed's
	 * "MemoryBarrier => Ensures FirstFreeEntryIndex is fully propagated"
	 * before the CMP loads MonitoredValue (seq_cst, hw_cmp_decide) */
	atomic_exchange_explicit(&log->header, (uint64_t)wrap << 32 | idx, memory_order_seq_cst);
#endif
}

static void hw_log_fill(struct hw_log *log, uint64_t n, uint64_t fence, uint64_t value, uint64_t seq,
			enum hw_log_op op, uint64_t observed_ts, uint64_t end_ts)
{
	struct hw_log_entry *en = &log->entries[n % log->capacity];
	atomic_store_explicit(&log->seq[n % log->capacity], seq, memory_order_relaxed);
	/* relaxed: published by hw_log_advance's release */
	atomic_store_explicit(&en->fence, fence, memory_order_relaxed);
	atomic_store_explicit(&en->value, value, memory_order_relaxed);
	atomic_store_explicit(&en->op, op, memory_order_relaxed);
	atomic_store_explicit(&en->observed_ts, observed_ts, memory_order_relaxed);
	atomic_store_explicit(&en->end_ts, end_ts, memory_order_relaxed);
}

void hw_log_write(const struct hw_adapter *a, struct hw_log *log, uint64_t n, uint64_t fence,
		  uint64_t value, uint64_t seq, enum hw_log_op op, uint64_t observed_ts, uint64_t end_ts)
{
	if (a && a->caps.fault == HW_FAULT_LOG_INDEX_FIRST) {
		/* Broken on purpose: the index moves before the entry is written. */
		hw_log_publish(log);
		lf_spin_ns(HW_LOG_FAULT_WINDOW_NS);
		hw_log_fill(log, n, fence, value, seq, op, observed_ts, end_ts);
	} else {
		hw_log_fill(log, n, fence, value, seq, op, observed_ts, end_ts);
		hw_log_publish(log);   /* then the barrier (seed, "Synchronously updating the native fence log") */
	}
}

/* The log as its writer reaches it.  Seed native-gpu-fence, "Log buffer
 * mechanism": the logs have "a GPU VA in process address space
 * (LogBufferGpuVa), and the CMP VA (LogBufferSystemProcessGpuVa), so that
 * they can are read/write to KMD, the GPU engine, and CMP", and "Write the
 * log payload to the corresponding log buffer GPU VA/CMP VA".  A signal's
 * entry is the engine's, written when it executes the signal: through
 * LogBufferGpuVa in the process's GPU VA space.  A wait's entry is the
 * CMP's: "the GPU scheduler observes HWQueueA is unblocked" (its
 * FenceEndGpuTimestamp) and writes it through LogBufferSystemProcessGpuVa in
 * the system (paging) process's space.  A log the OS did not map (a test's
 * own): its CPU VA.  NULL: a GPU page fault (counted). */
static struct hw_log *hw_log_view(struct hw_adapter *a, struct hw_log *log, bool cmp)
{
	uint64_t va = cmp ? log->sys_va : log->gpu_va;
	if (!log->gpu_va && !log->sys_va)
		return log;
	struct hw_log *w = va ? hw_va_resolve(cmp ? a->sys_vas : a->proc_vas, va) : NULL;
	if (!w)
		hw_va_fault(a);
	return w;
}

struct hw_log *hw_engine_log(struct hw_adapter *a, struct hw_queue *q, const struct hw_cmd *c, bool publish)
{
	enum hw_log_op op = (enum hw_log_op)(c->pad & ~HW_CMD_FLAGS);
	if (op != HW_LOG_OP_SIGNAL_EXECUTED && op != HW_LOG_OP_WAIT_UNBLOCKED)
		lf_die("LOG command with bad operation %u", c->pad & ~HW_CMD_FLAGS);
	enum hw_log_type t = op == HW_LOG_OP_SIGNAL_EXECUTED ? HW_LOG_SIGNALS : HW_LOG_WAITS;
	/* acquire: pairs with hw_queue_set_log's store; the preemption hand-shake
	 * guarantees a replaced log is no longer used once set_log returned */
	struct hw_log *log = atomic_load_explicit(&q->log[t], memory_order_acquire);
	if (!log)
		return NULL;              /* no log buffer (yet): nothing to write */
	bool wait = op == HW_LOG_OP_WAIT_UNBLOCKED;
	log = hw_log_view(a, log, wait);
	if (!log)
		return NULL;              /* its VA maps nothing: a page fault */
	/* Seed, "Native fence log buffer design": FenceEndGpuTimestamp is the GPU
	 * time the signal executed (GPUT1) or the wait was seen unblocked (GPUT2),
	 * taken then on the GPU's counter, not when this LOG runs */
	uint64_t end = wait ? q->wait_end_ts : q->signal_end_ts;
	/* the signal's write number, when this entry logs the queue's last signal */
	uint64_t seq = !wait && c->fence && c->fence == q->signal_fence ? q->signal_seq : 0;
	uint64_t fence = c->fence ? c->fence->handle : 0, observed = wait ? q->wait_observed_ts : 0;
	if (!publish) {
		/* Broken on purpose (the build HW_BROKEN_LOG_NO_BARRIER): the
		 * entry is written, the index store is the caller's, later */
		hw_log_fill(log, c->arg, fence, c->value, seq, op, observed, end);
		return log;
	}
	hw_log_write(a, log, c->arg, fence, c->value, seq, op, observed, end);
	return log;
}

void hw_queue_set_log(struct hw_queue *q, enum hw_log_type t, struct hw_log *log)
{
	assert(t < HW_LOG_TYPES);
	/* seq_cst, then the preemption hand-shake: an engine inside q now may
	 * still write the old log; once it left, its next LOG loads this one */
	atomic_store_explicit(&q->log[t], log, memory_order_seq_cst);
	hw_queue_preempt_wait(q);
}

void hw_log_update(struct hw_queue *q)
{
	/* The KMD's barrier for q (seed: "In this DDI, KMD inserts a memory barrier
	 * to each given HWQueue"): a full barrier on the reader's side (an RMW on
	 * one shared word where ThreadSanitizer cannot see a fence). */
	LF_ASYM_FULL();
	/* the model's record of how far it reached: every entry below each
	 * log's index now is committed (release: pairs with hw_log_flushed) */
	for (int t = 0; t < HW_LOG_TYPES; t++) {
		struct hw_log *log = atomic_load_explicit(&q->log[t], memory_order_acquire);
		if (log)
			atomic_store_explicit(&log->flushed, hw_log_pos(log, hw_log_header(log)), memory_order_release);
	}
}

uint64_t hw_log_flushed(const struct hw_log *log)
{
	return atomic_load_explicit(&log->flushed, memory_order_acquire);
}

uint64_t hw_queue_handle(const struct hw_queue *q)
{
	return (uint64_t)q->id + 1;
}
