/* gpu-model/hw/segment.c — memory segments of context images and the
 * engine's paging commands (seed gpu-preemption, step 7: InitContextResource,
 * and the content of context resources kept across eviction and
 * relocation).  Contract in hw.h ("memory segments and context images").
 * The OS's video memory manager (os/vidmm.c) decides where each image goes;
 * the engine only follows addresses: it saves to and restores from the
 * address an allocation has now, and its paging buffers copy or initialize
 * images.  Calls only lockfree/.
 */
#include <errno.h>
#include <stdlib.h>

#include "gpu-model/hw/hw_internal.h"
#include "lockfree/die.h"

int hw_segments_create(struct hw_adapter *a)
{
	if (a->caps.data_words && !(a->data = calloc(a->caps.data_words, sizeof(*a->data))))
		return -ENOMEM;
	if (!a->caps.ctx_local_slots)
		return 0;
	unsigned sys = a->caps.ctx_system_slots ? a->caps.ctx_system_slots : HW_CTX_SYSTEM_SLOTS_DEFAULT;
	a->segments[HW_SEGMENT_LOCAL].images = calloc(a->caps.ctx_local_slots, sizeof(struct hw_ctx_image));
	a->segments[HW_SEGMENT_SYSTEM].images = calloc(sys, sizeof(struct hw_ctx_image));
	if (!a->segments[HW_SEGMENT_LOCAL].images || !a->segments[HW_SEGMENT_SYSTEM].images) {
		hw_segments_destroy(a);
		return -ENOMEM;
	}
	a->segments[HW_SEGMENT_LOCAL].n = a->caps.ctx_local_slots;
	a->segments[HW_SEGMENT_SYSTEM].n = sys;
	return 0;
}

void hw_segments_destroy(struct hw_adapter *a)
{
	free(a->data);
	a->data = NULL;
	for (unsigned s = 0; s < HW_SEGMENTS; s++) {
		free(a->segments[s].images);
		a->segments[s].images = NULL;
		a->segments[s].n = 0;
	}
	struct hw_ctx_alloc *c = a->ctx_allocs;
	while (c) {
		struct hw_ctx_alloc *next = c->next;
		free(c);
		c = next;
	}
	a->ctx_allocs = NULL;
}

struct hw_ctx_image *hw_segment_image(struct hw_adapter *a, uint64_t va)
{
	uint64_t seg = va >> 48, off = va & ((1ull << 48) - 1);
	if (seg == HW_SEGMENT_NONE || seg >= HW_SEGMENTS || off % HW_CTX_IMAGE_BYTES ||
	    off / HW_CTX_IMAGE_BYTES >= a->segments[seg].n)
		return NULL;
	return &a->segments[seg].images[off / HW_CTX_IMAGE_BYTES];
}

struct hw_ctx_image *hw_ctx_img(struct hw_adapter *a, struct hw_ctx_alloc *c)
{
	if (!c->managed)
		return &c->own;
	/* acquire: pairs with hw_ctx_alloc_place's release (the image copied there first) */
	uint64_t va = atomic_load_explicit(&c->va, memory_order_acquire);
	return va ? hw_segment_image(a, va) : NULL;
}

void hw_ctx_alloc_place(struct hw_ctx_alloc *c, uint64_t va)
{
	atomic_store_explicit(&c->va, va, memory_order_release);
}

uint64_t hw_ctx_alloc_va(const struct hw_ctx_alloc *c)
{
	return atomic_load_explicit(&c->va, memory_order_acquire);
}

uint64_t hw_ctx_alloc_id(const struct hw_ctx_alloc *c)
{
	return c->id;
}

/* One image's fields, copied (relaxed: the queue owning it is off the engine). */
static void hw_image_copy(struct hw_ctx_image *d, const struct hw_ctx_image *s)
{
	atomic_store_explicit(&d->init, atomic_load_explicit(&s->init, memory_order_relaxed), memory_order_relaxed);
	atomic_store_explicit(&d->work_left_ns, atomic_load_explicit(&s->work_left_ns, memory_order_relaxed),
			      memory_order_relaxed);
	atomic_store_explicit(&d->work_slice_ns, atomic_load_explicit(&s->work_slice_ns, memory_order_relaxed),
			      memory_order_relaxed);
	atomic_store_explicit(&d->kind, atomic_load_explicit(&s->kind, memory_order_relaxed), memory_order_relaxed);
	atomic_store_explicit(&d->mid_buffer, atomic_load_explicit(&s->mid_buffer, memory_order_relaxed),
			      memory_order_relaxed);
	atomic_store_explicit(&d->holds, atomic_load_explicit(&s->holds, memory_order_relaxed), memory_order_relaxed);
}

void hw_engine_paging(struct hw_adapter *a, struct hw_engine *e, const struct hw_cmd *c)
{
	struct hw_ctx_image *d = hw_segment_image(a, c->arg);
	if (!d)
		lf_die("paging buffer: bad destination address %#llx", (unsigned long long)c->arg);
	if (HW_WORK_KIND(c->pad) == HW_PAGING_INIT_CONTEXT_RESOURCE) {
		/* a fresh context: nothing saved in it yet, its id as its initial state */
		struct hw_ctx_image fresh = { 0 };
		hw_image_copy(d, &fresh);
		atomic_store_explicit(&d->init, c->value, memory_order_relaxed);
	} else {
		const struct hw_ctx_image *s = hw_segment_image(a, c->value);
		if (!s)
			lf_die("paging buffer: bad source address %#llx", (unsigned long long)c->value);
		hw_image_copy(d, s);
	}
	lf_count(&e->paging_ops, 1);
}

/* ---- data allocations ---- */

_Atomic uint64_t *hw_data_word(struct hw_adapter *a, uint64_t w)
{
	return a->data && w < a->caps.data_words ? &a->data[w] : NULL;
}

void hw_data_map(struct hw_adapter *a, unsigned e, uint32_t page, uint64_t w, bool present)
{
	/* release: the words copied to w before an engine translates to them */
	atomic_store_explicit(&a->pt[e][page], present ? w + 1 : 0, memory_order_release);
}

/* The word GPU address va names on engine e (NULL: nowhere). */
static _Atomic uint64_t *hw_data_at(struct hw_adapter *a, unsigned e, uint64_t va)
{
	uint64_t seg = va >> 48, off = va & ((1ull << 48) - 1);
	if (off % 8)
		return NULL;
	if (seg == HW_SEGMENT_DATA)
		return hw_data_word(a, off / 8);
	if (seg != HW_SEGMENT_VIRTUAL || off / HW_DATA_PAGE_BYTES >= HW_DATA_PAGES)
		return NULL;
	uint64_t w = atomic_load_explicit(&a->pt[e][off / HW_DATA_PAGE_BYTES], memory_order_acquire);
	return w ? hw_data_word(a, w - 1 + off % HW_DATA_PAGE_BYTES / 8) : NULL;
}

void hw_engine_bind(struct hw_queue *q, const struct hw_cmd *c)
{
	q->bind[HW_WORK_KIND(c->pad) % HW_BIND_SLOTS] = c->arg;
}

void hw_engine_store(struct hw_adapter *a, struct hw_engine *e, struct hw_queue *q, const struct hw_cmd *c)
{
	uint64_t base = q->bind[HW_WORK_KIND(c->pad) % HW_BIND_SLOTS];
	_Atomic uint64_t *p = base ? hw_data_at(a, e->index, base + c->arg) : NULL;
	if (!p) {
		lf_count(&e->data_faults, 1);
		return;
	}
	atomic_store_explicit(p, c->value, memory_order_release);
}
