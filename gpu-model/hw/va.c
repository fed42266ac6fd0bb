/* gpu-model/hw/va.c — GPU virtual address spaces (hw.h, "GPU virtual
 * addresses"): the GPU's page tables, one per process, mapping GPU VAs to the
 * memory behind them (fence storage, log buffers), and the two views of a
 * native fence that use them: the engine's (the process's GPU VAs) and the
 * CMP's (the system/paging process's GPU VAs when the KMD sets
 * MapToGpuSystemProcess).
 *
 * Seed native-gpu-fence, "GPU VA mappings in paging process address space for
 * CMP use".  A space is a two-level table of page pointers: a resolve is two
 * acquire loads, no lock (engines resolve on every SIGNAL and WAIT poll);
 * mapping and unmapping take the space's mutex (fence creation is not a hot
 * path).  A page several single-page mappings share (packed fence storage)
 * is mapped once and reference-counted; a multi-page range (a log buffer) gets
 * pages of its own.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "gpu-model/hw/hw_internal.h"
#include "lockfree/thread.h"

#define HW_VA_LEAF 1024u
#define HW_VA_DIR  1024u             /* 1M pages: 4 GiB of GPU VA per space */
#define HW_VA_TOMB ((char *)1)       /* a removed reverse-map key */

struct hw_va_leaf {
	_Atomic(char *) page[HW_VA_LEAF];   /* the page mapped at this index (NULL: none) */
	uint32_t refs[HW_VA_LEAF];          /* single-page mappings sharing it (lock) */
};

struct hw_va_space {
	uint64_t base;
	pthread_mutex_t lock;
	_Atomic(struct hw_va_leaf *) dir[HW_VA_DIR];
	uint32_t next;                      /* next never-used page index (lock) */
	uint32_t *free_idx;                 /* freed page indices (lock) */
	size_t nfree, free_cap;
	/* reverse map of single-page mappings: page -> index (open addressing, lock) */
	char **keys;
	uint32_t *vals;
	size_t cap, used;
};

int hw_va_space_create(uint64_t base, struct hw_va_space **out)
{
	if (!base || base % HW_PAGE_SIZE)
		return -EINVAL;
	struct hw_va_space *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->base = base;
	pthread_mutex_init(&s->lock, NULL);
	*out = s;
	return 0;
}

void hw_va_space_destroy(struct hw_va_space *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < HW_VA_DIR; i++)
		free(atomic_load_explicit(&s->dir[i], memory_order_relaxed));
	free(s->free_idx);
	free(s->keys);
	free(s->vals);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static size_t hw_va_hash(const char *page, size_t cap)
{
	return (size_t)(((uintptr_t)page / HW_PAGE_SIZE) * 0x9e3779b97f4a7c15ull) & (cap - 1);
}

/* The index page is mapped at by a single-page mapping, or UINT32_MAX. */
static uint32_t hw_va_rev_find_locked(struct hw_va_space *s, const char *page, size_t *slot)
{
	lf_mutex_assert_held(&s->lock);
	if (!s->cap)
		return UINT32_MAX;
	for (size_t i = hw_va_hash(page, s->cap);; i = (i + 1) & (s->cap - 1)) {
		if (!s->keys[i])
			return UINT32_MAX;
		if (s->keys[i] == page) {
			*slot = i;
			return s->vals[i];
		}
	}
}

static int hw_va_rev_insert_locked(struct hw_va_space *s, char *page, uint32_t idx)
{
	lf_mutex_assert_held(&s->lock);
	if (2 * (s->used + 1) > s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64, n = s->cap;
		char **keys = calloc(cap, sizeof(*keys));
		uint32_t *vals = calloc(cap, sizeof(*vals));
		if (!keys || !vals) {
			free(keys);
			free(vals);
			return -ENOMEM;
		}
		s->used = 0;
		for (size_t i = 0; i < n; i++)
			if (s->keys[i] && s->keys[i] != HW_VA_TOMB) {
				size_t j = hw_va_hash(s->keys[i], cap);
				while (keys[j])
					j = (j + 1) & (cap - 1);
				keys[j] = s->keys[i];
				vals[j] = s->vals[i];
				s->used++;
			}
		free(s->keys);
		free(s->vals);
		s->keys = keys;
		s->vals = vals;
		s->cap = cap;
	}
	size_t j = hw_va_hash(page, s->cap);
	while (s->keys[j] && s->keys[j] != HW_VA_TOMB)
		j = (j + 1) & (s->cap - 1);
	s->keys[j] = page;
	s->vals[j] = idx;
	s->used++;
	return 0;
}

static struct hw_va_leaf *hw_va_leaf_locked(struct hw_va_space *s, uint32_t idx)
{
	lf_mutex_assert_held(&s->lock);
	struct hw_va_leaf *l = atomic_load_explicit(&s->dir[idx / HW_VA_LEAF], memory_order_relaxed);
	if (!l) {
		l = calloc(1, sizeof(*l));
		if (!l)
			return NULL;
		/* release: a resolver that finds the leaf sees it zeroed */
		atomic_store_explicit(&s->dir[idx / HW_VA_LEAF], l, memory_order_release);
	}
	return l;
}

/* n free consecutive page indices (a freed single one for n == 1). */
static int hw_va_take_locked(struct hw_va_space *s, uint32_t n, uint32_t *idx)
{
	lf_mutex_assert_held(&s->lock);
	if (n == 1 && s->nfree) {
		*idx = s->free_idx[--s->nfree];
		return 0;
	}
	if (s->next + (uint64_t)n > (uint64_t)HW_VA_DIR * HW_VA_LEAF)
		return -ENOMEM;
	*idx = s->next;
	s->next += n;
	return 0;
}

static void hw_va_give_locked(struct hw_va_space *s, uint32_t idx)
{
	lf_mutex_assert_held(&s->lock);
	if (s->nfree == s->free_cap) {
		size_t cap = s->free_cap ? 2 * s->free_cap : 64;
		uint32_t *p = realloc(s->free_idx, cap * sizeof(*p));
		if (!p)
			return;              /* the index is never reused: harmless */
		s->free_idx = p;
		s->free_cap = cap;
	}
	s->free_idx[s->nfree++] = idx;
}

static void hw_va_set_locked(struct hw_va_space *s, struct hw_va_leaf *l, uint32_t idx, char *page)
{
	lf_mutex_assert_held(&s->lock);
	/* release: the memory behind the page (a fence's initial values) is
	 * written before an engine or the CMP can resolve to it */
	atomic_store_explicit(&l->page[idx % HW_VA_LEAF], page, memory_order_release);
}

uint64_t hw_va_map(struct hw_va_space *s, void *cpu, size_t bytes)
{
	char *first = (char *)((uintptr_t)cpu & ~(uintptr_t)(HW_PAGE_SIZE - 1));
	uint64_t off = (uintptr_t)cpu - (uintptr_t)first;
	uint32_t n = (uint32_t)((off + bytes + HW_PAGE_SIZE - 1) / HW_PAGE_SIZE), idx;
	size_t slot;
	if (!bytes)
		return 0;
	pthread_mutex_lock(&s->lock);
	if (n == 1 && (idx = hw_va_rev_find_locked(s, first, &slot)) != UINT32_MAX) {
		atomic_load_explicit(&s->dir[idx / HW_VA_LEAF], memory_order_relaxed)->refs[idx % HW_VA_LEAF]++;
		goto done;
	}
	if (hw_va_take_locked(s, n, &idx))
		goto fail;
	for (uint32_t i = 0; i < n; i++) {
		struct hw_va_leaf *l = hw_va_leaf_locked(s, idx + i);
		if (!l)
			goto fail;           /* the indices taken stay unused */
		l->refs[(idx + i) % HW_VA_LEAF] = 1;
		hw_va_set_locked(s, l, idx + i, first + (size_t)i * HW_PAGE_SIZE);
	}
	if (n == 1 && hw_va_rev_insert_locked(s, first, idx)) {
		/* not shared then: mapped all the same */
	}
done:
	pthread_mutex_unlock(&s->lock);
	return s->base + (uint64_t)idx * HW_PAGE_SIZE + off;
fail:
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void hw_va_unmap(struct hw_va_space *s, uint64_t va, size_t bytes)
{
	if (!va || va < s->base || !bytes)
		return;
	uint64_t off = (va - s->base) % HW_PAGE_SIZE;
	uint64_t first = (va - s->base) / HW_PAGE_SIZE;
	uint32_t n = (uint32_t)((off + bytes + HW_PAGE_SIZE - 1) / HW_PAGE_SIZE);
	pthread_mutex_lock(&s->lock);
	for (uint64_t idx = first; idx < first + n && idx < (uint64_t)HW_VA_DIR * HW_VA_LEAF; idx++) {
		struct hw_va_leaf *l = atomic_load_explicit(&s->dir[idx / HW_VA_LEAF], memory_order_relaxed);
		char *page = l ? atomic_load_explicit(&l->page[idx % HW_VA_LEAF], memory_order_relaxed) : NULL;
		if (!page || --l->refs[idx % HW_VA_LEAF])
			continue;
		size_t slot;
		if (hw_va_rev_find_locked(s, page, &slot) == idx) {
			s->keys[slot] = HW_VA_TOMB;
		}
		hw_va_set_locked(s, l, (uint32_t)idx, NULL);
		hw_va_give_locked(s, (uint32_t)idx);
	}
	pthread_mutex_unlock(&s->lock);
}

void *hw_va_resolve(const struct hw_va_space *s, uint64_t va)
{
	if (!s || va < s->base)
		return NULL;
	uint64_t idx = (va - s->base) / HW_PAGE_SIZE;
	if (idx >= (uint64_t)HW_VA_DIR * HW_VA_LEAF)
		return NULL;
	/* acquire: pairs with the release stores of the leaf and of the page */
	struct hw_va_leaf *l = atomic_load_explicit(&s->dir[idx / HW_VA_LEAF], memory_order_acquire);
	char *page = l ? atomic_load_explicit(&l->page[idx % HW_VA_LEAF], memory_order_acquire) : NULL;
	return page ? page + (va - s->base) % HW_PAGE_SIZE : NULL;
}

struct hw_va_space *hw_adapter_process_vas(struct hw_adapter *a)
{
	return a->proc_vas;
}

struct hw_va_space *hw_adapter_system_vas(struct hw_adapter *a)
{
	return a->sys_vas;
}

uint64_t hw_adapter_va_faults(const struct hw_adapter *a)
{
	return atomic_load_explicit(&a->va_faults, memory_order_relaxed);
}

/* ---- a fence's mappings ---- */

int hw_fence_map_process(struct hw_adapter *a, struct hw_fence *f)
{
	f->vas = a->proc_vas;
	/* IoMmu: a monitored fence's value has no GPU VA; the GPU uses its CPU
	 * address (seed context-monitoring-legacy-monitored-fence; storage.c) */
	bool cpu_only = a->caps.iommu && !f->native;
	f->cv_va = cpu_only ? 0 : hw_va_map(f->vas, (void *)f->cv, sizeof(*f->cv));
	f->mv_va = hw_va_map(f->vas, (void *)f->mv, sizeof(*f->mv));
	if ((f->cv_va || cpu_only) && f->mv_va)
		return 0;
	hw_fence_unmap_process(f);
	return -ENOMEM;
}

void hw_fence_unmap_process(struct hw_fence *f)
{
	if (!f->vas)
		return;
	hw_va_unmap(f->vas, f->cv_va, sizeof(*f->cv));
	hw_va_unmap(f->vas, f->mv_va, sizeof(*f->mv));
	f->cv_va = f->mv_va = 0;
}

int hw_fence_set_cv(struct hw_fence *f, _Atomic uint64_t *cv)
{
	if (f->vas)
		hw_va_unmap(f->vas, f->cv_va, sizeof(*f->cv));
	f->cv = cv;
	if (!f->vas)
		return 0;
	f->cv_va = hw_va_map(f->vas, (void *)cv, sizeof(*cv));
	return f->cv_va ? 0 : -ENOMEM;
}

void hw_va_fault(struct hw_adapter *a)
{
	atomic_fetch_add_explicit(&a->va_faults, 1, memory_order_relaxed);
}

_Atomic uint64_t *hw_engine_cv(struct hw_adapter *a, const struct hw_fence *f)
{
	/* IoMmu: a fence without a GPU VA is addressed by its CPU address (the
	 * IOMMU translates it), which is mapped read-write (storage.c) */
	if (a->caps.iommu && !f->cv_va)
		return f->cv;
	_Atomic uint64_t *cv = hw_va_resolve(f->vas, f->cv_va);
	if (!cv)
		hw_va_fault(a);
	return cv;
}

bool hw_cmp_view(struct hw_adapter *a, const struct hw_fence *f, _Atomic uint64_t **cv, _Atomic uint64_t **mv)
{
	const struct hw_va_space *s = f->vas;
	uint64_t cva = f->cv_va, mva = f->mv_va;
	if (a->caps.map_to_gpu_system_process) {
		/* the CMP addresses the fence through the system (paging)
		 * process's mappings it was given at create */
		cva = f->cv_sys_va;
		mva = f->mv_sys_va;
		if (a->caps.fault != HW_FAULT_CMP_PROCESS_VA)
			s = a->sys_vas;   /* broken on purpose otherwise: the wrong space */
	}
	*cv = hw_va_resolve(s, cva);
	*mv = hw_va_resolve(s, mva);
	if (*cv && *mv)
		return true;
	hw_va_fault(a);
	return false;
}
