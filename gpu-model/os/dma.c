/* gpu-model/os/dma.c — DMA buffers that name allocations: data allocations
 * the OS may move, split DMA buffers with a patch location list per split
 * packet, the binding leak detection verification mode, and the broadcast
 * of a split packet to the GPUs of a linked adapter (seed gpu-preemption,
 * "Memory mapping considerations").  Contract in os.h ("DMA buffers that
 * name allocations").  Calls hw/ and queue.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gpu-model/hw/doorbell.h"
#include "gpu-model/os/os_internal.h"
#include "lockfree/die.h"

struct os_alloc {
	struct os_adapter *a;
	uint32_t words;
	uint32_t page;                   /* its virtual page (1..): the same on every GPU */
	uint32_t gpus;                   /* a bit per engine (physical GPU) with a copy */
	uint64_t phys[HW_MAX_ENGINES];   /* word index of each GPU's copy */
	uint64_t first_patch[HW_MAX_ENGINES];   /* OS_FAULT_SPLIT_PATCH_ONCE: the addresses of the first packet */
	struct os_alloc *next;
};

/* Words of the data segment, handed out once (a move takes new ones: the
 * old ones keep what a stale binding writes there).  dma_lock held. */
static int os_data_take_locked(struct os_adapter *a, uint32_t words, uint64_t *w)
{
	uint32_t cap = hw_adapter_caps(a->hw)->data_words;
	if (a->dma_next + words > cap)
		return -ENOSPC;
	*w = a->dma_next;
	a->dma_next += words;
	return 0;
}

int os_alloc_create(struct os_adapter *a, uint32_t words, uint32_t gpus, struct os_alloc **out)
{
	unsigned ne = hw_adapter_caps(a->hw)->engines;
	if (!words || words * 8 > HW_DATA_PAGE_BYTES || !gpus || gpus >> ne)
		return -EINVAL;
	struct os_alloc *al = calloc(1, sizeof(*al));
	if (!al)
		return -ENOMEM;
	al->a = a;
	al->words = words;
	al->gpus = gpus;
	pthread_mutex_lock(&a->dma_lock);
	int rc = a->dma_pages + 1 < HW_DATA_PAGES ? 0 : -ENOSPC;
	for (unsigned e = 0; !rc && e < ne; e++)
		if (gpus >> e & 1)
			rc = os_data_take_locked(a, words, &al->phys[e]);
	if (!rc) {
		al->page = ++a->dma_pages;
		for (unsigned e = 0; e < ne; e++)
			if (gpus >> e & 1)
				hw_data_map(a->hw, e, al->page, al->phys[e], true);
		al->next = a->allocs;
		a->allocs = al;
	}
	pthread_mutex_unlock(&a->dma_lock);
	if (rc) {
		free(al);
		return rc;
	}
	*out = al;
	return 0;
}

void os_allocs_free(struct os_adapter *a)
{
	while (a->allocs) {
		struct os_alloc *al = a->allocs;
		a->allocs = al->next;
		free(al);
	}
	for (struct os_dma_kept *k = a->dma_kept, *next; k; k = next) {
		next = k->next;
		free(k);
	}
	a->dma_kept = NULL;
}

int os_alloc_move(struct os_alloc *al)
{
	struct os_adapter *a = al->a;
	pthread_mutex_lock(&a->dma_lock);
	int rc = 0;
	for (unsigned e = 0; !rc && e < HW_MAX_ENGINES; e++) {
		if (!(al->gpus >> e & 1))
			continue;
		uint64_t w;
		if ((rc = os_data_take_locked(a, al->words, &w)))
			break;
		for (uint32_t i = 0; i < al->words; i++)
			atomic_store_explicit(hw_data_word(a->hw, w + i),
					      atomic_load_explicit(hw_data_word(a->hw, al->phys[e] + i), memory_order_acquire),
					      memory_order_relaxed);
		al->phys[e] = w;
		hw_data_map(a->hw, e, al->page, w, true);   /* its virtual address stays */
	}
	pthread_mutex_unlock(&a->dma_lock);
	return rc;
}

uint64_t os_alloc_read(struct os_alloc *al, unsigned gpu, uint32_t i)
{
	pthread_mutex_lock(&al->a->dma_lock);
	uint64_t v = i < al->words && (al->gpus >> gpu & 1)
			     ? atomic_load_explicit(hw_data_word(al->a->hw, al->phys[gpu] + i), memory_order_acquire)
			     : 0;
	pthread_mutex_unlock(&al->a->dma_lock);
	return v;
}

/* The address a patch writes for GPU `gpu`: the virtual one where the
 * engines translate (NoDmaPatching), else the physical one.  dma_lock held. */
static uint64_t os_alloc_address_locked(const struct os_alloc *al, unsigned gpu, bool virt)
{
	if (virt)
		return HW_VA(HW_SEGMENT_VIRTUAL, (uint64_t)al->page * HW_DATA_PAGE_BYTES);
	return HW_VA(HW_SEGMENT_DATA, al->phys[gpu] * 8);
}

/* ---- binding leak detection ---- */

/* Is command i of packet p patched (a patch location names it)? */
static bool os_patched(const struct os_split_packet *p, size_t i)
{
	for (size_t k = 0; k < p->npatches; k++)
		if (p->patches[k].PatchOffset == i)
			return true;
	return false;
}

/* The slots packet p leaves bound at its end (a bit each). */
static uint32_t os_bound_at_end(const struct os_split_packet *p)
{
	uint32_t bound = 0;
	for (size_t i = 0; i < p->n; i++) {
		if (p->cmds[i].op != HW_CMD_BIND)
			continue;
		uint32_t s = 1u << (HW_WORK_KIND(p->cmds[i].pad) % HW_BIND_SLOTS);
		if (os_patched(p, i))
			bound |= s;
		else
			bound &= ~s;      /* a BIND to 0, not patched: an unbind */
	}
	return bound;
}

/* The slots packet p reprograms (a patched BIND) before any STORE through them. */
static uint32_t os_reprogrammed_first(const struct os_split_packet *p)
{
	uint32_t re = 0, used = 0;
	for (size_t i = 0; i < p->n; i++) {
		uint32_t s = 1u << (HW_WORK_KIND(p->cmds[i].pad) % HW_BIND_SLOTS);
		if (p->cmds[i].op == HW_CMD_BIND && !(used & s) && os_patched(p, i))
			re |= s;
		if (p->cmds[i].op == HW_CMD_STORE || p->cmds[i].op == HW_CMD_BIND)
			used |= s;
	}
	return re;
}

int os_split_verify(struct os_adapter *a, const struct os_split_dma_buffer *b, size_t *bad)
{
	for (size_t k = 0; k < b->npackets; k++)
		for (size_t i = 0; i < b->packets[k].npatches; i++)
			if (b->packets[k].patches[i].AllocationIndex >= b->nallocs ||
			    b->packets[k].patches[i].PatchOffset >= b->packets[k].n)
				return -EINVAL;
	/* NoDmaPatching: the driver opts out; the broken variant checks nothing */
	if (!a->cfg.binding_leak_detection || a->cfg.caps.no_dma_patching || a->cfg.fault == OS_FAULT_BINDING_LEAK_UNCHECKED)
		return 0;
	for (size_t k = 0; k + 1 < b->npackets; k++) {
		uint32_t leak = os_bound_at_end(&b->packets[k]) & ~os_reprogrammed_first(&b->packets[k + 1]);
		if (leak) {
			if (bad)
				*bad = k;
			return -EPERM;
		}
	}
	return 0;
}

/* Packet k of b, patched for GPU gpu into out[0..n]: split end on all but
 * the last.  The broken variant patches from one list for the whole buffer,
 * at its first packet: later packets get the addresses of then.  dma_lock held. */
static void os_split_patch_locked(struct os_adapter *a, const struct os_split_dma_buffer *b, size_t k, unsigned gpu,
				  bool virt, struct hw_cmd *out)
{
	const struct os_split_packet *p = &b->packets[k];
	memcpy(out, p->cmds, p->n * sizeof(*out));
	bool once = a->cfg.fault == OS_FAULT_SPLIT_PATCH_ONCE;
	for (size_t i = 0; i < p->npatches; i++) {
		struct os_alloc *al = b->allocs[p->patches[i].AllocationIndex];
		uint64_t va = os_alloc_address_locked(al, gpu, virt);
		if (once && k == 0)
			al->first_patch[gpu] = va;
		else if (once && al->first_patch[gpu])
			va = al->first_patch[gpu];
		out[p->patches[i].PatchOffset].arg += va;
	}
	if (k + 1 < b->npackets)
		out[p->n - 1].pad |= HW_CMD_SPLIT_END;
}

int os_queue_submit_split_packet(struct os_queue *q, const struct os_split_dma_buffer *b, size_t k)
{
	struct os_adapter *a = q->a;
	if (k >= b->npackets || !b->packets[k].n)
		return -EINVAL;
	int rc = os_split_verify(a, b, NULL);   /* every packet of the buffer walked */
	if (rc)
		return rc;
	struct hw_cmd *buf = malloc(b->packets[k].n * sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	pthread_mutex_lock(&a->dma_lock);
	os_split_patch_locked(a, b, k, hw_queue_engine(q->hwq), a->cfg.caps.no_dma_patching, buf);
	pthread_mutex_unlock(&a->dma_lock);
	rc = os_queue_submit(q, buf, b->packets[k].n);
	free(buf);
	return rc;
}

/* ---- linked display adapters ---- */

/* A command buffer the engines read until the adapter goes. */
static struct hw_cmd *os_dma_keep(struct os_adapter *a, size_t n)
{
	struct os_dma_kept *k = calloc(1, sizeof(*k) + n * sizeof(struct hw_cmd));
	if (!k)
		return NULL;
	pthread_mutex_lock(&a->dma_lock);
	k->next = a->dma_kept;
	a->dma_kept = k;
	pthread_mutex_unlock(&a->dma_lock);
	return k->cmds;
}

/* Push the one copy buf[0..n) to q as an INDIRECT entry. */
static int os_dma_push(struct os_queue *q, const struct hw_cmd *buf, size_t n)
{
	struct hw_cmd ind = { .op = HW_CMD_INDIRECT, .arg = n, .ib = buf, .pad = HW_CMD_END_OF_BUFFER };
	pthread_mutex_lock(&q->lock);
	int rc = q->head ? -EBUSY : hw_queue_submit_some(q->hwq, &ind, 1) == 1 ? 0 : -EAGAIN;
	pthread_mutex_unlock(&q->lock);
	return rc;
}

uint64_t os_dma_checksum(const struct hw_cmd *buf, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ buf[i].op ^ buf[i].pad ^ buf[i].arg ^ buf[i].value * 31) * 1099511628211ull;
	return h;
}

int os_lda_broadcast_split_packet(struct os_queue *const *qs, size_t nq, const struct os_split_dma_buffer *b,
				  size_t k, const struct hw_cmd **shared)
{
	if (!nq || k >= b->npackets || !b->packets[k].n)
		return -EINVAL;
	struct os_adapter *a = qs[0]->a;
	int rc = os_split_verify(a, b, NULL);
	if (rc)
		return rc;
	size_t n = b->packets[k].n;
	struct hw_cmd *buf = os_dma_keep(a, n);
	if (!buf)
		return -ENOMEM;
	bool per_gpu = a->cfg.fault == OS_FAULT_LDA_PATCH_PER_GPU;
	for (size_t i = 0; i < nq && !rc; i++) {
		/* once, with the virtual addresses every linked GPU resolves to its
		 * own copy; the broken variant patches the same copy for each GPU */
		if (i == 0 || per_gpu) {
			pthread_mutex_lock(&a->dma_lock);
			os_split_patch_locked(a, b, k, hw_queue_engine(qs[i]->hwq), !per_gpu, buf);
			pthread_mutex_unlock(&a->dma_lock);
		}
		rc = os_dma_push(qs[i], buf, n);
	}
	if (shared)
		*shared = buf;
	return rc;
}
