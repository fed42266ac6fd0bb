/* gpu-model/hw/storage.c — fence storage pages.
 *
 * Seed (native-gpu-fence, "Physical memory storage for current and monitored
 * fence values"): CurrentValue and MonitoredValue of a fence live in separate
 * locations; non-shareable fences of a process are packed into the same pages
 * by the adapter's CurrentValue and MonitoredValue strides (a pool per
 * process and kind of memory: no two processes' fences share a page);
 * shareable fences get pages no other fence uses.  Each fence's memory is
 * its type's (hw_fence_alloc_in): system memory, or "GPU local memory" from
 * the lowest segment the driver named (caps.fence_segments).  Pages are 4 KiB,
 * from jemalloc (system memory) or, for local memory, libnuma on the
 * configured node.
 */
#include <errno.h>
#include <numa.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gpu-model/hw/hw_internal.h"
#include "lockfree/alloc.h"
#include "lockfree/arch.h"
#include "lockfree/die.h"
#include "lockfree/thread.h"

/* A pool of packed fence values: the pages of one process's non-shareable
 * fences in one kind of memory (seed, "Fence objects that are nonshareable
 * have fence value storage for different fence objects within the same
 * process packed in the same memory page").  Under storage_lock. */
struct hw_pool {
	struct hw_pool *next;
	uint64_t process;
	enum hw_storage_loc loc;
	uint32_t segment;             /* 0: system memory; else the local segment its pages come from */
	void **cv_pages, **mv_pages;
	size_t npages_cv, npages_mv;
	uint32_t nslots;              /* packed slots handed out so far */
	uint32_t *free_slots;
	size_t nfree, free_cap;
};

static bool hw_local_on_node(const struct hw_adapter *a, enum hw_storage_loc loc)
{
	return loc == HW_STORAGE_LOCAL && a->caps.numa_node >= 0 &&
	       numa_available() >= 0 && a->caps.numa_node <= numa_max_node();
}

/*
 * A fence page and the CPU's mapping of it (seed
 * context-monitoring-legacy-monitored-fence, "Monitored fence creation"):
 * one page of memory (a memfd, so that it can be mapped twice) in two
 * adjacent mappings.  [p, p + 4096) is read-write: the kernel's, and the
 * page the GPU's page tables map (va.c: a fence's process GPU VA, cv_va, is
 * its FenceValueGPUVirtualAddress: "To signal the fence, the GPU is allowed
 * to write directly to this GPU virtual address").  [p + 4096, p + 8192) is
 * the CPU's (FenceValueCPUVirtualAddress): "Read-only mapping ... The CPU
 * isn't allowed to write to this memory location", enforced by the page
 * protection: a write faults.  On an IoMmu adapter (hw_caps.iommu)
 * "Adapters that support IoMmu should use this address for GPU access.
 * The address is mapped as read-write in this case": the first mapping is
 * the CPU's, read-write; a monitored fence gets no GPU VA ("IoMmu GPUs
 * shouldn't use this address") and the engines address it by its CPU
 * address (va.c, hw_engine_cv); the second page stays reserved,
 * inaccessible.  "GPU local memory" pages are bound to their node before
 * their first touch.
 */
size_t hw_page_cpu_offset(const struct hw_adapter *a)
{
	return a->caps.iommu ? 0 : HW_PAGE_SIZE;
}

void *hw_page_alloc(const struct hw_adapter *a, enum hw_storage_loc loc)
{
	int fd = memfd_create("fence-page", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, HW_PAGE_SIZE))
		lf_die("fence page: memfd: %s", strerror(errno));
	char *p = mmap(NULL, 2 * HW_PAGE_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED ||
	    mmap(p, HW_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED ||
	    (!a->caps.iommu &&
	     mmap(p + HW_PAGE_SIZE, HW_PAGE_SIZE, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED))
		lf_die("fence page: mmap: %s", strerror(errno));
	close(fd);                    /* the mappings keep the memory */
	if (hw_local_on_node(a, loc))
		numa_tonode_memory(p, HW_PAGE_SIZE, a->caps.numa_node);
	memset(p, 0, HW_PAGE_SIZE);   /* first touch, on the node */
	return p;
}

void hw_page_free(const struct hw_adapter *a, enum hw_storage_loc loc, void *page)
{
	if (page)
		munmap(page, 2 * HW_PAGE_SIZE);
}

/* "When current value is stored in local memory, storage is allocated from
 * memory segments that the driver specified in D3DKMDT_FENCESTORAGESURFACEDATA":
 * the lowest segment named (0: none; system memory is segment 0). */
static uint32_t hw_fence_segment(const struct hw_adapter *a, enum hw_storage_loc loc)
{
	if (loc != HW_STORAGE_LOCAL || !a->caps.fence_segments)
		return 0;
	return (uint32_t)__builtin_ctz(a->caps.fence_segments);
}

static int hw_grow(void ***pages, size_t *npages, size_t need, const struct hw_adapter *a, enum hw_storage_loc loc)
{
	if (need <= *npages)
		return 0;
	void **p = realloc(*pages, need * sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (size_t i = *npages; i < need; i++)
		p[i] = hw_page_alloc(a, loc);
	*pages = p;
	*npages = need;
	return 0;
}

/* The pool of (process, loc), made on first use.  storage_lock held. */
static struct hw_pool *hw_pool_get_locked(struct hw_adapter *a, uint64_t process, enum hw_storage_loc loc)
{
	lf_mutex_assert_held(&a->storage_lock);
	for (struct hw_pool *p = a->pools; p; p = p->next)
		if (p->process == process && p->loc == loc)
			return p;
	struct hw_pool *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->process = process;
	p->loc = loc;
	p->segment = hw_fence_segment(a, loc);
	p->next = a->pools;
	a->pools = p;
	return p;
}

/* Take a packed slot of pool p: a freed one first, else the next one (adding pages). storage_lock held. */
static int hw_slot_take_locked(struct hw_adapter *a, struct hw_pool *p, uint32_t *slot)
{
	lf_mutex_assert_held(&a->storage_lock);
	if (p->nfree) {
		*slot = p->free_slots[--p->nfree];
		return 0;
	}
	uint32_t s = p->nslots;
	size_t per_cv = HW_PAGE_SIZE / a->caps.cv_stride, per_mv = HW_PAGE_SIZE / a->caps.mv_stride;
	if (hw_grow(&p->cv_pages, &p->npages_cv, s / per_cv + 1, a, p->loc) ||
	    hw_grow(&p->mv_pages, &p->npages_mv, s / per_mv + 1, a, p->loc))
		return -ENOMEM;
	p->nslots++;
	*slot = s;
	return 0;
}

/* A packed slot for f in its process's pool of its memory. */
static int hw_fence_pack(struct hw_adapter *a, struct hw_fence *f, enum hw_storage_loc loc)
{
	/* broken on purpose (HW_FAULT_PACK_PER_ADAPTER): one pool for every process */
	uint64_t process = a->caps.fault == HW_FAULT_PACK_PER_ADAPTER ? 0 : f->process;
	pthread_mutex_lock(&a->storage_lock);
	struct hw_pool *p = hw_pool_get_locked(a, process, loc);
	int rc = p ? hw_slot_take_locked(a, p, &f->slot) : -ENOMEM;
	if (rc) {
		pthread_mutex_unlock(&a->storage_lock);
		return rc;
	}
	size_t per_cv = HW_PAGE_SIZE / a->caps.cv_stride, per_mv = HW_PAGE_SIZE / a->caps.mv_stride;
	f->pool = p;
	f->cv = (_Atomic uint64_t *)((char *)p->cv_pages[f->slot / per_cv] + (f->slot % per_cv) * a->caps.cv_stride);
	f->mv = (_Atomic uint64_t *)((char *)p->mv_pages[f->slot / per_mv] + (f->slot % per_mv) * a->caps.mv_stride);
	pthread_mutex_unlock(&a->storage_lock);
	return 0;
}

int hw_fence_alloc(struct hw_adapter *a, bool shareable, bool native, uint64_t handle,
		   uint64_t initial, struct hw_fence *f)
{
	return hw_fence_alloc_in(a, 0, a->caps.storage, shareable, native, handle, initial, f);
}

int hw_fence_alloc_in(struct hw_adapter *a, uint64_t process, enum hw_storage_loc loc, bool shareable,
		      bool native, uint64_t handle, uint64_t initial, struct hw_fence *f)
{
	memset(f, 0, sizeof(*f));
	if (loc == HW_STORAGE_LOCAL && !a->caps.fence_segments)
		return -ENOTSUP;
	f->handle = handle;
	f->native = native;
	f->shareable = shareable;
	f->local = loc == HW_STORAGE_LOCAL;
	f->segment = hw_fence_segment(a, loc);
	f->process = process;
	if (shareable) {
		f->cv_page = hw_page_alloc(a, loc);
		f->mv_page = hw_page_alloc(a, loc);
		f->cv = f->cv_page;
		f->mv = f->mv_page;
	} else {
		int rc = hw_fence_pack(a, f, loc);
		if (rc)
			return rc;
	}
	f->fv_cpu_va = (const _Atomic uint64_t *)((const char *)f->cv + hw_page_cpu_offset(a));
	uint64_t cv0 = a->caps.no_64bit_atomics ? (uint32_t)initial : initial;
	atomic_store_explicit(f->cv, cv0, memory_order_release);
	atomic_init(&f->wseq_own, 0);
	f->wseq = &f->wseq_own;
	/* No CPU waiter yet: MonitoredValue = UINT64_MAX (seed, "Monitored value"). */
	atomic_store_explicit(f->mv, UINT64_MAX, memory_order_release);
	/* the process's GPU VAs of both (va.c) */
	int rc = hw_fence_map_process(a, f);
	if (rc)
		hw_fence_free(a, f);
	return rc;
}

void hw_fence_free(struct hw_adapter *a, struct hw_fence *f)
{
	hw_fence_unmap_process(f);
	enum hw_storage_loc loc = f->local ? HW_STORAGE_LOCAL : HW_STORAGE_SYSTEM;
	if (f->shareable) {
		hw_page_free(a, loc, f->cv_page);
		hw_page_free(a, loc, f->mv_page);
	} else if (f->pool) {
		struct hw_pool *p = f->pool;
		pthread_mutex_lock(&a->storage_lock);
		if (p->nfree == p->free_cap) {
			size_t cap = p->free_cap ? 2 * p->free_cap : 64;
			uint32_t *n = realloc(p->free_slots, cap * sizeof(*n));
			if (n) {
				p->free_slots = n;
				p->free_cap = cap;
			}
		}
		if (p->nfree < p->free_cap)
			p->free_slots[p->nfree++] = f->slot;
		pthread_mutex_unlock(&a->storage_lock);
	}
	f->cv = f->mv = NULL;
	f->pool = NULL;
}

void hw_pools_free(struct hw_adapter *a)
{
	for (struct hw_pool *p = a->pools, *next; p; p = next) {
		next = p->next;
		for (size_t i = 0; i < p->npages_cv; i++)
			hw_page_free(a, p->loc, p->cv_pages[i]);
		for (size_t i = 0; i < p->npages_mv; i++)
			hw_page_free(a, p->loc, p->mv_pages[i]);
		free(p->cv_pages);
		free(p->mv_pages);
		free(p->free_slots);
		free(p);
	}
	a->pools = NULL;
}

#define HW_WSEQ_SPINS 64     /* a writer that finds another mid-write spins this often, then yields */

uint64_t hw_fence_write(struct hw_fence *f, uint64_t wv, bool barrier)
{
	return hw_fence_write_at(f, f->cv, wv, barrier);
}

uint64_t hw_fence_write_at(struct hw_fence *f, _Atomic uint64_t *cv, uint64_t wv, bool barrier)
{
	uint64_t s = atomic_load_explicit(f->wseq, memory_order_relaxed);
	for (unsigned spins = 0;; spins++) {
		/* seq_cst: after the previous writer's number store (so its
		 * exchange comes before ours, as its number before ours), and
		 * before our exchange in the total order, so a reader whose
		 * seq_cst value load sees our value sees the odd number after it */
		if (!(s & 1) && atomic_compare_exchange_weak_explicit(f->wseq, &s, s + 1, memory_order_seq_cst,
								      memory_order_relaxed))
			break;
		if (s & 1) {
			if (spins >= HW_WSEQ_SPINS)
				sched_yield();     /* the writer may be preempted: let it finish */
			else
				lf_cpu_relax();
			s = atomic_load_explicit(f->wseq, memory_order_relaxed);
		}
	}
	if (barrier)
		atomic_exchange_explicit(cv, wv, memory_order_seq_cst);
	else
		atomic_store_explicit(cv, wv, memory_order_relaxed);
	/* release: a reader that sees the number sees the value (or a later one) */
	atomic_store_explicit(f->wseq, s + 2, memory_order_release);
	return s + 2;
}

uint64_t hw_fence_read_seq(const struct hw_adapter *a, const struct hw_fence *f, uint64_t *seq)
{
	/* acquire on both number loads (no standalone fence: TSan does not
	 * model one); the value load is seq_cst as in hw_fence_cpu_read, which
	 * also keeps the second number load after it */
	uint64_t s1 = atomic_load_explicit(f->wseq, memory_order_acquire);
	uint64_t v = hw_fence_cpu_read(a, f);
	uint64_t s2 = atomic_load_explicit(f->wseq, memory_order_seq_cst);
	/* A write ran during the read: the value may be its (or a later one's);
	 * name the last write finished before the read began. */
	*seq = s1 == s2 && !(s1 & 1) ? s1 : s1 & ~(uint64_t)1;
	return v;
}

uint64_t hw_fence_cpu_read(const struct hw_adapter *a, const struct hw_fence *f)
{
	/* Local memory: a CPU read crosses PCIe (the legacy scan pays this per fence). */
	if (f->local)
		lf_spin_ns(a->caps.local_read_ns);
	/* seq_cst: this read is the OS's resample after its MonitoredValue RMW
	 * (the second half of the store-buffering pair with the CMP); it also
	 * acquires what the signaler wrote before CurrentValue */
	return atomic_load_explicit(f->cv, memory_order_seq_cst);
}

/* ---- access rights ---- */

unsigned hw_fence_rights(enum hw_agent who, enum hw_fence_value which)
{
	static const unsigned rights[HW_AGENTS][2] = {
		[HW_AGENT_CPU_USER] = { [HW_VALUE_CV] = HW_ACCESS_READ, [HW_VALUE_MV] = 0 },
		[HW_AGENT_CPU_KERNEL] = { [HW_VALUE_CV] = HW_ACCESS_READ | HW_ACCESS_WRITE,
					  [HW_VALUE_MV] = HW_ACCESS_READ | HW_ACCESS_WRITE },
		[HW_AGENT_GPU] = { [HW_VALUE_CV] = HW_ACCESS_READ | HW_ACCESS_WRITE, [HW_VALUE_MV] = HW_ACCESS_READ },
	};
	return who < HW_AGENTS && which <= HW_VALUE_MV ? rights[who][which] : 0;
}

int hw_fence_map(struct hw_adapter *a, const struct hw_fence *f, enum hw_agent who, enum hw_fence_value which,
		 struct hw_fence_map *out)
{
	unsigned r = hw_fence_rights(who, which);
	*out = (struct hw_fence_map){ .a = a };
	if (!r) {
		atomic_fetch_add_explicit(&a->access_faults, 1, memory_order_relaxed);
		return -EACCES;
	}
	out->p = which == HW_VALUE_CV ? f->cv : f->mv;
	out->rights = r;
	out->read_ns = f->local && who != HW_AGENT_GPU ? a->caps.local_read_ns : 0;
	return 0;
}

int hw_fence_map_read(const struct hw_fence_map *m, uint64_t *v)
{
	if (!(m->rights & HW_ACCESS_READ)) {
		if (m->a)
			atomic_fetch_add_explicit(&m->a->access_faults, 1, memory_order_relaxed);
		return -EACCES;
	}
	if (m->read_ns)
		lf_spin_ns(m->read_ns);   /* a CPU read of local memory crosses PCIe */
	*v = atomic_load_explicit(m->p, memory_order_seq_cst);
	return 0;
}

int hw_fence_map_write(const struct hw_fence_map *m, uint64_t v)
{
	if (!(m->rights & HW_ACCESS_WRITE)) {
		if (m->a)
			atomic_fetch_add_explicit(&m->a->access_faults, 1, memory_order_relaxed);
		return -EACCES;
	}
	atomic_exchange_explicit(m->p, v, memory_order_seq_cst);
	return 0;
}

uint64_t hw_adapter_access_faults(const struct hw_adapter *a)
{
	return atomic_load_explicit(&a->access_faults, memory_order_relaxed);
}

ptrdiff_t hw_fence_cv_distance(const struct hw_fence *x, const struct hw_fence *y)
{
	return (const char *)y->cv - (const char *)x->cv;
}
