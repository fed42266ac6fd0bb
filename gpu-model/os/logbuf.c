/* gpu-model/os/logbuf.c — native fence log buffers, the OS side (os.h, "native
 * fence log buffers"): giving user-mode HW queues their logs, reading them
 * (UpdateNativeFenceLogs first, overrun detection, timestamp validation), the
 * optimized native fence signaled interrupt, recreation.  The hardware side
 * (the engine's LOG, the header word) is gpu-model/hw/logbuf.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu-model/os/os_internal.h"
#include "gpu-model/os/ums_internal.h"
#include "lockfree/alloc.h"
#include "lockfree/arch.h"
#include "lockfree/die.h"
#include "lockfree/htab.h"
#include "lockfree/thread.h"

#define OS_LOG_CHUNK 64   /* entries copied before the header is re-checked */

/* One user-mode HW queue's two logs, as the OS sees them. */
struct os_log {
	pthread_mutex_t lock;             /* readers vs recreation */
	struct os_adapter *a;
	struct hw_queue *hwq;
	unsigned engine;
	size_t bytes;
	struct hw_log *log[HW_LOG_TYPES];
	uint64_t read[HW_LOG_TYPES];      /* entries consumed: the cached FirstFreeEntryIndex + WraparoundCount */
	uint64_t last_ts[HW_LOG_TYPES];   /* last nonzero FenceEndGpuTimestamp */
	struct os_log *dev_next;          /* the next log of its device's list (written once, before publication) */
	uint64_t batch_gen;               /* the interrupt batch that took it last (interrupt thread only) */
	_Atomic uint32_t dev;             /* its device's log list (os_logs_device; 0: none): set once (the ums
	                                   * lock), after the interrupt thread may find the log by its handle */
};

/* One interrupt's logs (os_log_batch_*): every log it reads with new
 * entries, and where each of its logs stood before the one
 * DxgkDdiUpdateNativeFenceLogs call for all of them.  The interrupt
 * thread's only (in struct os_logs). */
struct os_log_batch {
	uint64_t gen;
	size_t n;
	struct os_log *logs[HW_QUEUE_HANDLES];
	struct hw_queue *hwqs[HW_QUEUE_HANDLES];
	uint64_t pos[HW_QUEUE_HANDLES][HW_LOG_TYPES];
	bool parent[HW_QUEUE_HANDLES];   /* read as the signaled fence's parent device's (it looks for the signaler) */
};

#define OS_LOGS_MAX_DEVICES 256   /* device log lists per adapter (os_logs_device) */

struct os_logs {
	/* kernel handle -> log; written once at attach (release), read by the interrupt thread */
	_Atomic(struct os_log *) by_handle[HW_QUEUE_HANDLES + 1];
	_Atomic bool resync;              /* a recreation dropped unread entries: read every fence */
	/* per device (key 1..OS_LOGS_MAX_DEVICES): its queues' logs, pushed at
	 * attach (release), never removed before the adapter goes */
	_Atomic(struct os_log *) dev_logs[OS_LOGS_MAX_DEVICES + 1];
	_Atomic uint32_t ndevs;
	_Atomic uint64_t last_signaler;   /* the HW queue a parent-device scan found had signaled */
	struct os_log_batch batch;        /* the interrupt thread's */
	/* the interrupt thread's: the devices whose logs overran in the interrupt
	 * being handled (bit d), or every device (fb_all) */
	bool fb_all;
	uint64_t fb_devs[(OS_LOGS_MAX_DEVICES + 1 + 63) / 64];
	/* any reader, under its log's lock: relaxed RMWs */
	_Atomic uint64_t entries, updates, overruns, fallbacks, released, ts_zero, ts_repeated,
		ts_backwards, bad_entries, bad_handles, recreates, unflushed, signalers;
};

#define OS_LOG_COUNT(l, field, n) atomic_fetch_add_explicit(&(l)->a->logs->field, (n), memory_order_relaxed)

struct os_logs *os_logs_create(void)
{
	return calloc(1, sizeof(struct os_logs));
}

void os_logs_destroy(struct os_logs *ls)
{
	if (!ls)
		return;
	for (size_t h = 0; h <= HW_QUEUE_HANDLES; h++) {
		struct os_log *l = atomic_load_explicit(&ls->by_handle[h], memory_order_relaxed);
		if (!l)
			continue;
		for (int t = 0; t < HW_LOG_TYPES; t++)
			hw_log_destroy(l->log[t]);
		pthread_mutex_destroy(&l->lock);
		free(l);
	}
	free(ls);
}

/* Seed, "Log buffer mechanism": "These log buffers have mappings for the
 * kernel-mode CPU VA (LogBufferCpuVa), a GPU VA in process address space
 * (LogBufferGpuVa), and the CMP VA (LogBufferSystemProcessGpuVa)".  The CPU
 * VA is the OS's pointer; the GPU VAs go to the hardware with the log
 * (hw_log.gpu_va, sys_va; the engine's LOG writes through the first).
 * 0 / -ENOMEM. */
static int os_log_map(struct os_adapter *a, struct hw_log *log)
{
	log->gpu_va = hw_va_map(hw_adapter_process_vas(a->hw), log, log->bytes);
	log->sys_va = hw_va_map(hw_adapter_system_vas(a->hw), log, log->bytes);
	return log->gpu_va && log->sys_va ? 0 : -ENOMEM;
}

/* The old log of a recreation, the engine out of it: its GPU mappings go. */
static void os_log_unmap(struct os_adapter *a, struct hw_log *log)
{
	hw_va_unmap(hw_adapter_process_vas(a->hw), log->gpu_va, log->bytes);
	hw_va_unmap(hw_adapter_system_vas(a->hw), log->sys_va, log->bytes);
	log->gpu_va = log->sys_va = 0;
}

uint32_t os_logs_device(struct os_adapter *a)
{
	uint32_t k = atomic_fetch_add_explicit(&a->logs->ndevs, 1, memory_order_relaxed) + 1;
	return k <= OS_LOGS_MAX_DEVICES ? k : 0;
}

void os_log_set_device(struct os_log *l, uint32_t dev)
{
	if (!dev)
		return;
	/* relaxed: a flag the interrupt thread reads alone (which device's
	 * fences an overrun reads); 0 until then reads every fence */
	atomic_store_explicit(&l->dev, dev, memory_order_relaxed);
	_Atomic(struct os_log *) *head = &l->a->logs->dev_logs[dev];
	l->dev_next = atomic_load_explicit(head, memory_order_relaxed);   /* one writer: the ums lock */
	/* release: the interrupt thread walking the list sees an initialized log */
	atomic_store_explicit(head, l, memory_order_release);
}

int os_log_attach(struct os_adapter *a, struct hw_queue *q, size_t bytes, struct os_log **out)
{
	uint64_t h = hw_queue_handle(q);
	assert(h >= 1 && h <= HW_QUEUE_HANDLES);
	struct os_log *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->a = a;
	l->hwq = q;
	l->engine = (unsigned)((h - 1) / HW_MAX_QUEUES);
	l->bytes = bytes;
	for (int t = 0; t < HW_LOG_TYPES; t++) {
		l->log[t] = hw_log_create(bytes, 0);
		if (!l->log[t] || os_log_map(a, l->log[t])) {
			int rc = l->log[t] ? -ENOMEM : -EINVAL;
			for (int k = 0; k <= t; k++) {
				if (l->log[k])
					os_log_unmap(a, l->log[k]);
				hw_log_destroy(l->log[k]);
			}
			free(l);
			return rc;
		}
	}
	pthread_mutex_init(&l->lock, NULL);
	/* DxgkDdiSetNativeFenceLogBuffer, once for waits and once for signals */
	for (int t = 0; t < HW_LOG_TYPES; t++)
		os_kmd_set_native_fence_log_buffer(a, q, (enum hw_log_type)t, l->log[t]);
	/* release: the interrupt thread sees an initialized log once it finds it */
	atomic_store_explicit(&a->logs->by_handle[h], l, memory_order_release);
	*out = l;
	return 0;
}

struct os_log *os_log_by_handle(struct os_adapter *a, uint64_t h)
{
	if (h == 0 || h > HW_QUEUE_HANDLES)
		return NULL;
	/* acquire: pairs with os_log_attach's release */
	return atomic_load_explicit(&a->logs->by_handle[h], memory_order_acquire);
}

size_t os_log_bytes(const struct os_log *l)
{
	return l->bytes;
}

struct hw_log *os_log_hw(struct os_log *l, enum hw_log_type t)
{
	assert(t < HW_LOG_TYPES);
	return l->log[t];
}

/* Seed, "Empty or repeated log buffer timestamps": zero and equal accepted,
 * backwards reported. */
static void os_log_check_ts(struct os_log *l, enum hw_log_type t, uint64_t ts)
{
	if (ts == 0) {
		OS_LOG_COUNT(l, ts_zero, 1);
	} else if (ts == l->last_ts[t]) {
		OS_LOG_COUNT(l, ts_repeated, 1);
	} else if (ts < l->last_ts[t]) {
		if (OS_LOG_COUNT(l, ts_backwards, 1) == 0)
			fprintf(stderr, "fencebench: native fence log of HW queue %#" PRIx64 " went back in time: "
				"%" PRIu64 " after %" PRIu64 " ns\n", hw_queue_handle(l->hwq), ts, l->last_ts[t]);
	} else {
		l->last_ts[t] = ts;
	}
}

struct os_log_copy {
	uint64_t fence, value, op, observed_ts, end_ts, seq;
};

/* The timeline trace: an entry as read (GPU timestamps as the GPU wrote them). */
static void os_log_trace_entry(struct os_log *l, enum hw_log_type t, const struct os_log_copy *c)
{
	struct os_trace_rec r = {
		.kind = t == HW_LOG_SIGNALS ? OS_TRACE_LOG_SIGNAL : OS_TRACE_LOG_WAIT, .engine = l->engine,
		.queue = hw_queue_handle(l->hwq), .fence = c->fence, .value = c->value,
		.t0 = c->observed_ts, .t1 = c->end_ts,
	};
	os_trace_add(l->a, &r);
}

/* The timeline trace: n entries of l's log t skipped by an overrun. */
static void os_log_trace_lost(struct os_log *l, enum hw_log_type t, uint64_t n)
{
	struct os_trace_rec r = {
		.kind = OS_TRACE_LOG_LOST, .engine = l->engine, .tid = gettid(), .queue = hw_queue_handle(l->hwq),
		.value = t, .t0 = lf_now_ns(), .n = n,
	};
	os_trace_add(l->a, &r);
}

/* One entry read by the OS; released waiters returned.  rec (NULL: none):
 * the fence-array interrupt whose signal a parent-device scan looks for. */
static size_t os_log_consume(struct os_log *l, enum hw_log_type t, const struct os_log_copy *c, bool release,
			     const struct hw_irq_rec *rec)
{
	uint64_t want = t == HW_LOG_SIGNALS ? HW_LOG_OP_SIGNAL_EXECUTED : HW_LOG_OP_WAIT_UNBLOCKED;
	if (c->op != want) {
		OS_LOG_COUNT(l, bad_entries, 1);   /* never written, or torn */
		return 0;
	}
	os_log_check_ts(l, t, c->end_ts);
	if (rec && t == HW_LOG_SIGNALS && c->fence == rec->signaled && c->value == rec->value) {
		/* "to determine which HWQueue did the signal and extracts the
		 * corresponding timestamp payload" */
		atomic_store_explicit(&l->a->logs->last_signaler, hw_queue_handle(l->hwq), memory_order_relaxed);
		OS_LOG_COUNT(l, signalers, 1);
	}
	if (os_tracing(l->a))
		os_log_trace_entry(l, t, c);
	if (!release || t != HW_LOG_SIGNALS)
		return 0;
	struct os_fence *f = lf_htab_lookup(l->a->handles, c->fence);
	if (!f)
		return 0;                          /* destroyed since: nobody waits on it */
	struct os_write w = { c->value, c->seq };
	size_t n = os_fence_process(f, w, NULL);
	if (f->x)
		os_cross_propagate(f, w);   /* cross-adapter: pass the value signaled on */
	return n;
}

/* Entries [from, from + n) copied; false when the GPU may have overwritten
 * one meanwhile: the header reached from + capacity, so the engine may be
 * writing entry from's slot (it writes before it moves the header). */
static bool os_log_copy_chunk(const struct hw_log *log, uint64_t from, size_t n, struct os_log_copy *out)
{
	for (size_t i = 0; i < n; i++) {
		const struct hw_log_entry *en = &log->entries[(from + i) % log->capacity];
		/* acquire: each entry load comes before the header re-read below (a
		 * seqlock-style validation against the engine's next writes; no
		 * standalone fence, which ThreadSanitizer does not model) */
		out[i].fence = atomic_load_explicit(&en->fence, memory_order_acquire);
		out[i].value = atomic_load_explicit(&en->value, memory_order_acquire);
		out[i].op = atomic_load_explicit(&en->op, memory_order_acquire);
		out[i].observed_ts = atomic_load_explicit(&en->observed_ts, memory_order_acquire);
		out[i].end_ts = atomic_load_explicit(&en->end_ts, memory_order_acquire);
		out[i].seq = atomic_load_explicit(&log->seq[(from + i) % log->capacity], memory_order_acquire);
	}
	uint64_t now = hw_log_pos(log, hw_log_header(log));
	return now - from < log->capacity;
}

#define OS_LOG_UPDATE_NOW UINT64_MAX   /* os_log_read_one_locked: read the header, update this log alone */

/* Read one log's new entries (l->lock held), up to position `upto`, which
 * the caller read before its DxgkDdiUpdateNativeFenceLogs (an interrupt's
 * batch), or OS_LOG_UPDATE_NOW: read the header and update this log alone
 * (a reader outside the interrupt: os_log_read, a recreation).  Returns
 * waiters released; *overrun set when unread entries were overwritten. */
static size_t os_log_read_one_locked(struct os_log *l, enum hw_log_type t, bool release, bool *overrun,
				     const struct hw_irq_rec *rec, uint64_t upto)
{
	struct hw_log *log = l->log[t];
	uint64_t pos = upto;
	size_t released = 0;
	if (upto == OS_LOG_UPDATE_NOW) {
		pos = hw_log_pos(log, hw_log_header(log));
		if (pos == l->read[t])
			return 0;
		/* Seed, "Synchronously updating the native fence log":
		 * DxgkDdiUpdateNativeFenceLogs before reading new entries
		 * (skipped by the broken OS_FAULT_NO_LOG_UPDATE, which the
		 * unflushed count below catches) */
		if (l->a->cfg.fault != OS_FAULT_NO_LOG_UPDATE) {
			os_kmd_update_native_fence_logs(l->a, &l->hwq, 1, pos);
			OS_LOG_COUNT(l, updates, 1);
		}
	}
	if (pos <= l->read[t])
		return 0;   /* read already, or a recreation moved past it */
	uint64_t flushed = hw_log_flushed(log);
	while (l->read[t] < pos) {
		struct os_log_copy c[OS_LOG_CHUNK];
		uint64_t from = l->read[t];
		size_t n = pos - from < OS_LOG_CHUNK ? (size_t)(pos - from) : OS_LOG_CHUNK;
		/* entries past what the KMD's barrier covered: read without it */
		if (from + n > flushed)
			OS_LOG_COUNT(l, unflushed, from + n - (from > flushed ? from : flushed));
		if (pos - from >= log->capacity || !os_log_copy_chunk(log, from, n, c)) {
			/* Seed, "Log buffer overrun is permitted": resume at the header */
			OS_LOG_COUNT(l, overruns, 1);
			*overrun = true;
			l->read[t] = hw_log_pos(log, hw_log_header(log));
			if (os_tracing(l->a))
				os_log_trace_lost(l, t, l->read[t] - from);   /* never shown: "lost N" */
			return released;
		}
		for (size_t i = 0; i < n; i++)
			released += os_log_consume(l, t, &c[i], release, rec);
		OS_LOG_COUNT(l, entries, n);
		l->read[t] = from + n;
	}
	return released;
}

static size_t os_log_read_all(struct os_log *l, bool release, bool *overrun, const struct hw_irq_rec *rec)
{
	size_t released = 0;
	pthread_mutex_lock(&l->lock);
	for (int t = 0; t < HW_LOG_TYPES; t++)
		released += os_log_read_one_locked(l, (enum hw_log_type)t, release, overrun, rec, OS_LOG_UPDATE_NOW);
	pthread_mutex_unlock(&l->lock);
	return released;
}

/* ---- an interrupt's logs: one DxgkDdiUpdateNativeFenceLogs for all ----
 *
 * Seed native-gpu-fence, "Synchronously updating the native fence log", in
 * the interrupt handler: "For each HWQueue Log: Read FirstFreeEntryIndex
 * and determine if new entries are written.  For every HWQueue log with new
 * entries: Call DxgkDdiUpdateNativeFenceLogs and provide the kernel handles
 * for those HWQueues. ...  Dxgkrnl reads log entries".  So: the logs the
 * interrupt reads are gathered first (os_log_batch_add: where each stands),
 * then one call names every queue with new entries in either log, and no
 * other (os_log_batch_read), then each is read up to where it stood. */

/* A log of device dev overran in this interrupt (dev 0: a device not known). */
static void os_logs_overran(struct os_adapter *a, uint32_t dev)
{
	struct os_logs *ls = a->logs;
	if (!dev)
		ls->fb_all = true;
	else
		ls->fb_devs[dev / 64] |= 1ull << (dev % 64);
}

bool os_logs_fallback_reads(const struct os_adapter *a, uint32_t dev)
{
	const struct os_logs *ls = a->logs;
	return ls->fb_all || !dev || (ls->fb_devs[dev / 64] >> (dev % 64) & 1);
}

static void os_log_batch_begin(struct os_adapter *a)
{
	struct os_log_batch *b = &a->logs->batch;
	b->gen++;
	b->n = 0;
}

/* Take l into the interrupt's batch (once) if it has new entries; parent:
 * as a log of the signaled fence's device (its read looks for the signaler). */
static void os_log_batch_add(struct os_adapter *a, struct os_log *l, bool parent)
{
	struct os_log_batch *b = &a->logs->batch;
	if (l->batch_gen == b->gen)
		return;
	l->batch_gen = b->gen;
	bool fresh = false;
	pthread_mutex_lock(&l->lock);
	for (int t = 0; t < HW_LOG_TYPES; t++) {
		b->pos[b->n][t] = hw_log_pos(l->log[t], hw_log_header(l->log[t]));
		fresh |= b->pos[b->n][t] != l->read[t];
	}
	pthread_mutex_unlock(&l->lock);
	if (!fresh)
		return;
	b->logs[b->n] = l;
	b->parent[b->n] = parent;
	b->hwqs[b->n++] = l->hwq;
}

/* The one update for the batch's queues, then each read to where it stood
 * (rec: the fence-array interrupt whose signaler the parent logs look for). */
static size_t os_log_batch_read(struct os_adapter *a, bool release, bool *overrun, const struct hw_irq_rec *rec)
{
	struct os_log_batch *b = &a->logs->batch;
	size_t released = 0;
	if (!b->n)
		return 0;
	if (a->cfg.fault != OS_FAULT_NO_LOG_UPDATE) {
		os_kmd_update_native_fence_logs(a, b->hwqs, b->n, b->pos[0][HW_LOG_SIGNALS]);
		atomic_fetch_add_explicit(&a->logs->updates, b->n, memory_order_relaxed);
	}
	for (size_t i = 0; i < b->n; i++) {
		struct os_log *l = b->logs[i];
		bool ov = false;
		pthread_mutex_lock(&l->lock);
		for (int t = 0; t < HW_LOG_TYPES; t++)
			released += os_log_read_one_locked(l, (enum hw_log_type)t, release, &ov, b->parent[i] ? rec : NULL,
							   b->pos[i][t]);
		pthread_mutex_unlock(&l->lock);
		if (ov)
			os_logs_overran(a, atomic_load_explicit(&l->dev, memory_order_relaxed));
		*overrun |= ov;
	}
	b->n = 0;
	return released;
}

size_t os_log_read(struct os_log *l, bool *overrun)
{
	bool ov = false;
	size_t n = os_log_read_all(l, false, &ov, NULL);
	if (overrun)
		*overrun = ov;
	return n;
}

void os_logs_read_every(struct os_adapter *a)
{
	for (uint64_t h = 1; h <= HW_QUEUE_HANDLES; h++) {
		struct os_log *l = os_log_by_handle(a, h);
		if (l)
			os_log_read(l, NULL);
	}
}

/* Every log of the engine's queues (a NULL hHWQueue: seed, "it falls back to
 * rescan the log buffer of all HWQueues on this engine"), into the batch. */
static void os_logs_add_engine(struct os_adapter *a, unsigned engine)
{
	if (engine >= HW_MAX_ENGINES)
		return;
	for (uint64_t h = (uint64_t)engine * HW_MAX_QUEUES + 1; h <= (uint64_t)(engine + 1) * HW_MAX_QUEUES; h++) {
		struct os_log *l = os_log_by_handle(a, h);
		if (l)
			os_log_batch_add(a, l, false);
	}
}

/* Seed native-gpu-fence, "Future hardware requirements": current hardware
 * names the fence; "for the parent device of this fence, the OS scans the
 * log buffers of all its HWQueues. The OS then reads the last written log
 * buffer entries to determine which HWQueue did the signal and extracts the
 * corresponding timestamp payload."  For each fence of the array, its
 * device's logs (once per device); a fence of no device (the OS's own), a
 * NULL array, or the broken OS_FAULT_LOG_SCAN_ENGINE: the interrupting
 * engine's logs. */
static void os_logs_read_parents(struct os_adapter *a, const struct hw_irq_rec *rec, bool *overrun)
{
	os_log_batch_begin(a);
	uint32_t done[HW_IRQ_MAX_FENCES];
	size_t ndone = 0;
	bool engine = rec->nfences == 0 || a->cfg.fault == OS_FAULT_LOG_SCAN_ENGINE;
	for (uint32_t i = 0; i < rec->nfences && !engine; i++) {
		/* the interrupt thread is inside its handle-table read section */
		struct os_fence *f = lf_htab_lookup(a->handles, rec->fences[i]);
		uint32_t dev = f ? atomic_load_explicit(&f->log_dev, memory_order_acquire) : 0;
		if (!dev) {
			engine = true;
			break;
		}
		bool seen = false;
		for (size_t k = 0; k < ndone; k++)
			seen |= done[k] == dev;
		if (seen)
			continue;
		done[ndone++] = dev;
		/* acquire: pairs with os_log_set_device's release */
		for (struct os_log *l = atomic_load_explicit(&a->logs->dev_logs[dev], memory_order_acquire); l;
		     l = l->dev_next)
			os_log_batch_add(a, l, true);
	}
	if (engine)
		os_logs_add_engine(a, rec->engine);
	os_log_batch_read(a, false, overrun, rec);
}

uint64_t os_logs_last_signaler(struct os_adapter *a)
{
	return atomic_load_explicit(&a->logs->last_signaler, memory_order_relaxed);
}

uint64_t os_log_unread(struct os_log *l, enum hw_log_type t)
{
	pthread_mutex_lock(&l->lock);
	uint64_t n = hw_log_pos(l->log[t], hw_log_header(l->log[t])) - l->read[t];
	pthread_mutex_unlock(&l->lock);
	return n;
}

/* Optimized payload: the named queues' logs, into the batch; a name without
 * logs cannot say which fences signaled, so the caller reads every fence. */
static void os_logs_add_named(struct os_adapter *a, const struct hw_irq_rec *rec, bool *overrun)
{
	for (uint32_t i = 0; i < rec->nqueues; i++) {
		struct os_log *l = os_log_by_handle(a, rec->hwqueues[i]);
		if (!l) {
			atomic_fetch_add_explicit(&a->logs->bad_handles, 1, memory_order_relaxed);
			os_logs_overran(a, 0);   /* no log, no device: every fence */
			*overrun = true;
			continue;
		}
		os_log_batch_add(a, l, false);
	}
}

size_t os_logs_interrupt(struct os_adapter *a, const struct hw_irq_rec *rec, bool *fallback)
{
	struct os_logs *ls = a->logs;
	size_t released = 0;
	bool overrun = false;
	ls->fb_all = false;
	memset(ls->fb_devs, 0, sizeof(ls->fb_devs));
	if (atomic_load_explicit(&ls->resync, memory_order_relaxed) &&
	    atomic_exchange_explicit(&ls->resync, false, memory_order_acq_rel)) {
		ls->fb_all = true;   /* which device's entries were dropped is not known */
		*fallback = true;
	}
	if (rec->kind != HW_IRQ_NATIVE_FENCE_SIGNALED)
		return 0;
	if (!rec->optimized) {
		/* Seed, "Future hardware requirements": current hardware names the
		 * fence; the OS reads the logs for the timestamps only */
		os_logs_read_parents(a, rec, &overrun);
		return 0;
	}
	os_log_batch_begin(a);
	if (rec->nqueues == 0)
		os_logs_add_engine(a, rec->engine);
	else
		os_logs_add_named(a, rec, &overrun);
	released = os_log_batch_read(a, true, &overrun, NULL);
	atomic_fetch_add_explicit(&ls->released, released, memory_order_relaxed);
	if (overrun && a->cfg.fault != OS_FAULT_NO_LOG_FALLBACK) {
		/* "it falls back to the nonoptimized path that reads the live value
		 * of every fence owned by the same device" */
		atomic_fetch_add_explicit(&ls->fallbacks, 1, memory_order_relaxed);
		*fallback = true;
	}
	return released;
}

/* Recreate l's logs at `bytes` (the queue off the run list): the new ones
 * continue the old progression, so the UMD's entry numbers stay valid.
 * Entries not read yet are read (timestamps) without releasing; true if any
 * were signals or a log overran: their waiters need a read of every fence. */
static bool os_log_replace_locked(struct os_log *l, size_t bytes)
{
	bool lost = false, overrun = false;
	for (int t = 0; t < HW_LOG_TYPES; t++) {
		struct hw_log *old = l->log[t];
		bool unread = hw_log_pos(old, hw_log_header(old)) != l->read[t];
		os_log_read_one_locked(l, (enum hw_log_type)t, false, &overrun, NULL, OS_LOG_UPDATE_NOW);
		if (t == HW_LOG_SIGNALS && (unread || overrun))
			lost = true;
		/* the engine is out of the queue: the header no longer moves */
		uint64_t pos = hw_log_pos(old, hw_log_header(old));
		struct hw_log *nl = hw_log_create(bytes, pos);
		if (os_log_map(l->a, nl))
			lf_die("recreating a native fence log: out of GPU VA");
		os_kmd_set_native_fence_log_buffer(l->a, l->hwq, (enum hw_log_type)t, nl);
		os_log_unmap(l->a, old);   /* the engine left the queue: nothing writes through them */
		hw_log_destroy(old);
		l->log[t] = nl;
		l->read[t] = pos;
	}
	l->bytes = bytes;
	return lost;
}

int os_hwqueue_recreate_logs(struct os_hwqueue *q, size_t bytes)
{
	struct os_ums *u = q->u;
	struct os_log *l = q->log;
	if (!l)
		return -EINVAL;                      /* kernel-mode queues have none */
	if (bytes < HW_LOG_HEADER_BYTES + sizeof(struct hw_log_entry) || bytes > UINT32_MAX)
		return -EINVAL;
	pthread_mutex_lock(&u->lock);
	if (atomic_load_explicit(&q->gone, memory_order_relaxed)) {
		pthread_mutex_unlock(&u->lock);
		return -ENODEV;
	}
	hw_queue_set_scheduled(q->hwq, false);      /* the engine leaves the queue */
	pthread_mutex_lock(&l->lock);
	bool lost = os_log_replace_locked(l, bytes);
	pthread_mutex_unlock(&l->lock);
	/* back as it was: a queue a destroy drains runs even on a context the
	 * application suspended (os_hwqueue_runs_locked) */
	hw_queue_set_scheduled(q->hwq, os_hwqueue_runs_locked(q));
	pthread_mutex_unlock(&u->lock);
	atomic_fetch_add_explicit(&u->a->logs->recreates, HW_LOG_TYPES, memory_order_relaxed);
	if (lost) {
		/* signals never released from the old log: the interrupt thread
		 * reads every fence (release: the flag after the swap) */
		atomic_store_explicit(&u->a->logs->resync, true, memory_order_release);
		hw_irq_kick(u->hw);
	}
	return 0;
}

int os_ums_trace_start(struct os_ums *u, size_t records, size_t log_bytes)
{
	if (!log_bytes)
		log_bytes = OS_TRACE_LOG_BYTES;
	if (log_bytes < HW_LOG_HEADER_BYTES + sizeof(struct hw_log_entry) || log_bytes > UINT32_MAX)
		return -EINVAL;
	int rc = os_trace_start(u->a, records);
	if (rc)
		return rc;
	/* new queues get the larger logs; the existing ones are recreated at
	 * that size (DxgkDdiSetNativeFenceLogBuffer again), continuing their
	 * progression */
	pthread_mutex_lock(&u->lock);
	if (log_bytes > u->log_bytes)   /* never below what the stack was configured with */
		u->log_bytes = log_bytes;
	uint32_t n = atomic_load_explicit(&u->nqueues, memory_order_acquire);
	pthread_mutex_unlock(&u->lock);
	for (uint32_t i = 0; i < n; i++) {
		struct os_hwqueue *q = u->queues[i];
		if (!q->log || atomic_load_explicit(&q->gone, memory_order_relaxed) || os_log_bytes(q->log) >= log_bytes)
			continue;
		rc = os_hwqueue_recreate_logs(q, log_bytes);
		if (rc && rc != -ENODEV)
			return rc;
	}
	return 0;
}

struct os_log *os_hwqueue_log(struct os_hwqueue *q)
{
	return q->log;
}

#define OS_LOG_LOAD(x) atomic_load_explicit(&ls->x, memory_order_relaxed)

void os_logs_stats(const struct os_adapter *a, struct os_stats *o)
{
	const struct os_logs *ls = a->logs;
	if (!ls)
		return;
	o->log_entries = OS_LOG_LOAD(entries);
	o->log_updates = OS_LOG_LOAD(updates);
	o->log_overruns = OS_LOG_LOAD(overruns);
	o->log_fallbacks = OS_LOG_LOAD(fallbacks);
	o->log_released = OS_LOG_LOAD(released);
	o->log_ts_zero = OS_LOG_LOAD(ts_zero);
	o->log_ts_repeated = OS_LOG_LOAD(ts_repeated);
	o->log_ts_backwards = OS_LOG_LOAD(ts_backwards);
	o->log_bad_entries = OS_LOG_LOAD(bad_entries);
	o->log_bad_handles = OS_LOG_LOAD(bad_handles);
	o->log_recreates = OS_LOG_LOAD(recreates);
	o->log_unflushed = OS_LOG_LOAD(unflushed);
	o->log_signalers = OS_LOG_LOAD(signalers);
}
