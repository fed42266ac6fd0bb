/* gpu-model/hw/hw.h — the simulated GPU: adapter caps, fence storage, engines, the CMP.
 *
 * What the hardware knows: fence storage pages (CurrentValue and MonitoredValue
 * of every fence, in separate locations packed by stride), engines that run HW
 * queues of commands, and the context management processor (CMP) that decides
 * after each fence signal whether to raise an interrupt.  It knows nothing of
 * CPU waiters: it only reads MonitoredValue, which the OS maintains.
 *
 * Threads: one thread per engine (hw_engine_*), started by hw_adapter_start.
 * Interrupts are records on a liburcu MPSC queue (lockfree/mpsc.h) that the OS
 * interrupt thread drains (hw_irq_pop); the engine wakes it only if it parked.
 *
 *   operation                       who may call                   blocks?
 *   hw_adapter_create/destroy       one setup thread               no / joins engines
 *   hw_fence_alloc/free             any thread (storage mutex)     no (short lock)
 *   hw_queue_submit                 the queue's one producer       spins while the ring is full
 *   hw_cmp_cpu_signal_notify        any thread                     no
 *   hw_adapter_engines_barrier      any thread                     until the runs in progress end
 *   hw_irq_pop / hw_irq_park        the OS interrupt thread only   park: yes
 */
#ifndef HW_HW_H
#define HW_HW_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lockfree/cacheline.h"
#include "lockfree/event.h"
#include "lockfree/mpsc.h"
#include "lockfree/ring.h"

#define HW_PAGE_SIZE       4096u
#define HW_MAX_ENGINES     8
#define HW_MAX_QUEUES      64     /* per engine run list */
#define HW_IRQ_MAX_FENCES  8      /* signaled-fence array of one interrupt record */

enum hw_storage_loc {
	HW_STORAGE_SYSTEM,   /* CPU reads at memory speed */
	HW_STORAGE_LOCAL,    /* "GPU local memory": node-placed, CPU reads pay local_read_ns */
};

/* What the hardware puts in a native fence signaled interrupt (an adapter cap). */
enum hw_irq_payload {
	HW_PAYLOAD_FENCE_ARRAY,       /* the exact signaled fences that have CPU waiters */
	HW_PAYLOAD_NULL,              /* no array: the OS scans all native fence waiters */
	HW_PAYLOAD_NULL_EVAL_LEGACY,  /* no array + EvaluateLegacyMonitoredFences: scan all waiters.  Hardware
				       * that cannot tell the two interrupts apart: it raises only
				       * NATIVE_FENCE_SIGNALED, for monitored fence signals too (engine.c) */
	/* OptimizedNativeFenceSignaledInterrupt cap set (seed, "Optimized native
	 * fence signaled interrupt"): the payload names HW queues, not fences.  A
	 * queue without a signal log (kernel-mode) still reports a fence array. */
	HW_PAYLOAD_OPTIMIZED,         /* the kernel handle of the HW queue that ran */
	HW_PAYLOAD_OPTIMIZED_NULL,    /* the GPU cannot tell the queue: a NULL handle (scan the engine's logs) */
};

/* How doorbells reach the engines (seed user-mode-work-submission, "Doorbells"). */
enum hw_doorbell_model {
	HW_DOORBELL_DEDICATED,   /* a pool of physical doorbells, one per connected queue, virtualized by the KMD */
	HW_DOORBELL_GLOBAL,      /* one doorbell for every queue: the value names the queue */
};

/* Deliberate protocol faults, to prove the stress detector can fail. */
enum hw_fault {
	HW_FAULT_NONE,
	HW_FAULT_NO_CMP_BARRIER,   /* CMP reads MonitoredValue before its CurrentValue write is visible */
	HW_FAULT_LOG_INDEX_FIRST,  /* LOG: FirstFreeEntryIndex incremented before the entry is written */
	HW_FAULT_PREEMPT_ANYWHERE, /* preemption-aware engines stop wherever asked, whatever their granularity */
	HW_FAULT_IGNORE_CONTEXT_SWITCH, /* a ContextSwitch packet runs as an empty buffer: the context stays loaded */
	HW_FAULT_CTX_RESTORE_LOST, /* a restore does not read the context allocation back: a preempted WORK's rest is lost */
	HW_FAULT_SPLIT_IGNORED,    /* a split packet's end is not a DMA buffer boundary (Windows 7 split handling) */
	HW_FAULT_CMP_PROCESS_VA,   /* with MapToGpuSystemProcess, the CMP looks its system-process VAs up in the
				      process's VA space (va.c): it no longer finds the fence */
	HW_FAULT_PACK_PER_ADAPTER, /* non-shareable fences of every process packed into the same pages */
	HW_FAULT_CMP_WRITES_MV,    /* the CMP writes MonitoredValue (UINT64_MAX) after raising an interrupt: a GPU
				    * write the GPU's mapping of MV must refuse (hw_fence_map) */
	HW_FAULT_NO_EVAL_LEGACY,   /* HW_PAYLOAD_NULL_EVAL_LEGACY hardware raises its only interrupt, NATIVE_FENCE_SIGNALED
				    * with a NULL array, for legacy signals too, but without EvaluateLegacyMonitoredFences */
	HW_FAULT_COMPUTE_AS_GRAPHICS, /* a compute WORK is preempted at the graphics granularity */
	HW_FAULT_HOLDS_SPLIT,      /* the run list reads a flag stored after the holds RMW, not the holds word: a
				    * release's stale store puts back a queue another owner has just held (queue.c) */
	HW_FAULT_DEDICATED_POLLS_ALL, /* a ring on a dedicated doorbell is taken as a global one: the engine reads the
				    * write pointer of every queue with a connected doorbell (doorbell.c) */
	HW_FAULT_WAIT_HIGH_WATER,  /* a queue's WAIT compares the highest value it ever read of the fence, not
				    * CurrentValue: a wait registered after a rewind passes on the old value (engine.c) */
};

/* ---- memory segments and context images (gpu-model/hw/segment.c) ----
 *
 * Seed gpu-preemption, step 7: "If context resources are evicted or
 * relocated, the video memory manager will preserve the content of the
 * context resources."  What a context allocation holds (the saved context:
 * the rest of a WORK, the place in a DMA buffer) is a 64-byte image.  With
 * caps.ctx_local_slots, context allocations live in memory segments the OS
 * manages (os/vidmm.c): local memory (ctx_local_slots images) and a
 * system-memory aperture (ctx_system_slots); an image's GPU address is
 * HW_VA(segment, byte offset).  The engine reaches an allocation only at
 * the address the OS gave it (hw_ctx_alloc_place): not resident, a save or
 * restore is a fault (counted, the content lost).  Paging buffers carry
 * HW_CMD_PAGING: TRANSFER copies an image between addresses (eviction,
 * relocation, bringing back), INIT_CONTEXT_RESOURCE writes a fresh image
 * (DXGKARG_BUILDPAGINGBUFFER's InitContextResource).  Loading a context the
 * first time, the engine checks its image was initialized for it (else it
 * counts a bad image: the state of whatever was there before). */
struct hw_ctx_image {
	_Atomic uint64_t init;            /* InitContextResource wrote the allocation's id here */
	_Atomic uint64_t work_left_ns, work_slice_ns;
	_Atomic uint32_t kind;
	_Atomic bool mid_buffer, holds;
	uint8_t pad[34];
};
_Static_assert(sizeof(struct hw_ctx_image) == 64, "a context image is one line");
#define HW_CTX_IMAGE_BYTES 64u
enum { HW_SEGMENT_NONE, HW_SEGMENT_LOCAL, HW_SEGMENT_SYSTEM, HW_SEGMENTS };
#define HW_VA(seg, off) ((uint64_t)(seg) << 48 | (uint64_t)(off))
enum hw_paging_op { HW_PAGING_TRANSFER, HW_PAGING_INIT_CONTEXT_RESOURCE };

/* Data allocations (segment.c; os/dma.c manages them): caps.data_words
 * 64-bit words of memory.  A physical GPU address is
 * HW_VA(HW_SEGMENT_DATA, byte offset); the engines also translate virtual
 * addresses HW_VA(HW_SEGMENT_VIRTUAL, page * HW_DATA_PAGE_BYTES + offset)
 * through a page table per engine (one engine per physical GPU of a linked
 * adapter), so an allocation keeps its virtual address when the OS moves
 * it: what a driver with NoDmaPatching patches (os/dma.c).  A context binds an allocation to a slot
 * (HW_CMD_BIND) and writes through it (HW_CMD_STORE); the binding is the
 * context's state, kept across DMA buffers, split packets and preemption.
 * A STORE through an unbound slot or an address that maps nowhere is a
 * counted fault. */
#define HW_SEGMENT_DATA 8u
#define HW_SEGMENT_VIRTUAL 9u
#define HW_DATA_PAGE_BYTES 4096u
#define HW_DATA_PAGES 256u
#define HW_BIND_SLOTS 8u
struct hw_adapter;
/* The word at physical word index w (NULL: out of the segment).  Any thread. */
_Atomic uint64_t *hw_data_word(struct hw_adapter *a, uint64_t w);
/* Map virtual page `page` to physical word index w (+1 encoded; 0 unmaps) on engine e's page table.  Release. */
void hw_data_map(struct hw_adapter *a, unsigned e, uint32_t page, uint64_t w, bool present);

/* Preemption granularity (D3DKMDT_PREEMPTION_CAPS).  Both enumerations
 * name the same levels of a WORK command's structure (gpu-model/hw/preempt.c):
 * 0 never, 1 between DMA buffers, 2 between commands (a draw / a dispatch),
 * 3 between the WORK's sub-units (triangles / thread groups), 4 and 5 finer
 * slices of those (pixels / threads, shader instructions). */
enum hw_gfx_preempt {
	HW_GFX_PREEMPT_NONE,
	HW_GFX_PREEMPT_DMA_BUFFER_BOUNDARY,
	HW_GFX_PREEMPT_PRIMITIVE_BOUNDARY,
	HW_GFX_PREEMPT_TRIANGLE_BOUNDARY,
	HW_GFX_PREEMPT_PIXEL_BOUNDARY,
	HW_GFX_PREEMPT_SHADER_BOUNDARY,
};
enum hw_compute_preempt {
	HW_COMPUTE_PREEMPT_NONE,
	HW_COMPUTE_PREEMPT_DMA_BUFFER_BOUNDARY,
	HW_COMPUTE_PREEMPT_DISPATCH_BOUNDARY,
	HW_COMPUTE_PREEMPT_THREAD_GROUP_BOUNDARY,
	HW_COMPUTE_PREEMPT_THREAD_BOUNDARY,
	HW_COMPUTE_PREEMPT_SHADER_BOUNDARY,
};

/* The adapter's timing profile (gpu-model/hw/timing.c): what the GPU side
 * of a real machine takes, which the model's engines otherwise do at
 * host-CPU speed.  All zero is the "ideal" profile: today's behaviour, a
 * command costs nothing and a write is seen at cache-line speed.  An engine
 * spends each latency on its own modelled clock, yielding the CPU while it
 * waits (timing.c says how, and how late it can run). */
struct hw_timing {
	uint64_t cmd_ns;              /* command processor: fetch and decode of each command */
	uint64_t signal_ns;           /* a fence SIGNAL's flush before its write (earlier work done, caches
				       * written back): what a fence signal costs beyond a plain write */
	uint64_t visible_sys_ns;      /* a GPU write to system memory: until the CPU (or another engine) sees it */
	uint64_t visible_local_ns;    /* the same for local memory (fences in HW_STORAGE_LOCAL) */
	uint64_t wait_poll_sys_ns;    /* a blocked HW WAIT re-reads a fence in system memory this often */
	uint64_t wait_poll_local_ns;  /* ... in local memory */
	uint64_t doorbell_ns;         /* new work seen on an idle queue (a doorbell ring, a kick) until its fetch */
	uint64_t irq_ns;              /* interrupt raise latency: the CMP's decision until the OS gets the record */
};
#define HW_TIMING_MAX_NS 10000000ull   /* any one latency: at most 10 ms */

/* The adapter description the KMD advertises (DXGK_VIDSCHCAPS + native fence caps). */
struct hw_caps {
	bool native_fence;            /* KMD advertises native fence support */
	bool map_to_gpu_system_process; /* DXGK_NATIVE_FENCE_CAPS::MapToGpuSystemProcess: the CMP addresses a
					 native fence through the system (paging) process's GPU VAs (va.c) */
	bool no_64bit_atomics;        /* the GPU writes only 32 bits of a fence value */
	bool iommu;                   /* IoMmu support (DXGK_VIDMMCAPS::IoMmuSupported): the GPU uses a monitored
					 fence's CPU address, mapped read-write; it has no GPU VA (storage.c, va.c) */
	uint32_t no_fence_va_engines; /* a bit per engine that cannot write a monitored fence through its
					 VA: its signals go through SignalSynchronizationObjectFromGpuCb */
	uint32_t cv_stride;           /* bytes between packed CurrentValues: power of two, 8..4096 */
	uint32_t mv_stride;           /* bytes between packed MonitoredValues: power of two, 8..4096 */
	enum hw_irq_payload payload;
	enum hw_storage_loc storage;  /* where the default fence type's values live (D3DDDI_NATIVEFENCE_TYPE_DEFAULT);
				       * other types choose per fence (hw_fence_alloc_in) */
	/* D3DKMDT_FENCESTORAGESURFACEDATA: the memory segments the driver names for
	 * fence values in local memory, bit i = segment i (1..31; segment 0 is
	 * system memory).  Local fence storage comes from the lowest named one;
	 * none named: no fence can live in local memory (caps.storage LOCAL is refused). */
	uint32_t fence_segments;
	int numa_node;                /* node for local storage; -1: wherever the allocator puts it */
	uint32_t local_read_ns;       /* modeled PCIe cost of one CPU read of local memory */
	unsigned engines;             /* 1..HW_MAX_ENGINES */
	uint64_t idle_spin_ns;        /* an idle engine polls this long, then parks (F1) */
	bool idle_poll_normal;        /* idle polling at the engine thread's own weight (the model before
					 it polled at nice 10; engine.c, "Idle polling"); 0: nice 10 */
	uint64_t work_spin_max_ns;    /* WORK up to this long busy-waits; longer WORK sleeps */
	const int *cpus;              /* engine i is pinned to cpus[i % ncpus]; NULL: not pinned */
	size_t ncpus;
	enum hw_fault fault;
	/* user-mode work submission (gpu-model/hw/doorbell.h); all zero = the defaults */
	enum hw_doorbell_model doorbell_model;  /* dedicated (0) or one global doorbell */
	unsigned doorbells;           /* physical dedicated doorbells, 1..HW_MAX_DOORBELLS; 0: HW_DOORBELLS_DEFAULT */
	unsigned doorbell_bytes;      /* DXGK_USERMODESUBMISSION_CAPS doorbell memory size: a multiple of 8 up to
	                               * HW_DOORBELL_MAX_BYTES (a page); 0: HW_DOORBELL_SIZE */
	uint32_t no_um_engines;       /* bit e: node e lacks UserModeSubmissionSupported */
	uint64_t f1_timeout_ns;       /* idle this long with doorbells connected: ask for F1; 0: HW_F1_TIMEOUT_DEFAULT_NS */
	uint64_t gpu_ts_hz;           /* GPU timestamp counter frequency; 0: HW_GPU_TS_HZ_DEFAULT */
	/* preemption (seed gpu-preemption; gpu-model/hw/preempt.c).  Defaults:
	 * Windows 8 model, preemption between commands, no save/restore cost */
	bool preemption_aware;        /* DXGK_VIDSCHCAPS::PreemptionAware (0: Windows 7, never preempts) */
	bool multi_engine_aware;      /* DXGK_VIDSCHCAPS::MultiEngineAware: with PreemptionAware, the Windows 8 model
				       * (without it the OS runs the Windows 7 model: os_adapter_create); every
				       * engine has its own run list and contexts either way */
	bool no_dma_patching;         /* DXGK_VIDSCHCAPS::NoDmaPatching: data allocations have virtual addresses (the
				       * engines translate them), so the OS does not verify split packets' bindings
				       * (os/dma.c, binding leak detection) */
	bool flip_on_vsync_mmio;      /* DXGK_FLIPCAPS::FlipOnVSyncMmIo: a FLIP is latched at the next vsync (display.c);
				       * the OS requires it with PreemptionAware (os_adapter_create) */
	uint64_t vsync_period_ns;     /* the display source's refresh period; 0: HW_VSYNC_DEFAULT_NS (60 Hz) */
	enum hw_gfx_preempt gfx_preempt;
	enum hw_compute_preempt compute_preempt;
	bool wait_unpreemptible;      /* a blocked native WAIT cannot be switched out: it holds the engine
				       * until its condition holds (the seed's "must support the ability
				       * to preempt a wait instruction" not met; only a TDR reset ends it) */
	unsigned ctx_local_slots;     /* context images local memory holds (segment.c); 0: context
				       * allocations are not in segments (always resident) */
	unsigned ctx_system_slots;    /* ... the system-memory aperture (evicted images); 0: HW_CTX_SYSTEM_SLOTS_DEFAULT */
	uint32_t data_words;          /* 64-bit words of memory for data allocations (segment.c, os/dma.c); 0: none */
	uint64_t ctx_save_ns;         /* saving a preempted context to its context allocation */
	uint64_t ctx_restore_ns;      /* restoring it when it runs again */
	struct hw_timing timing;      /* modelled latencies (all zero: "ideal") */
};

/* The GPU's timestamp counter (what log entries carry): its own clock,
 * ticking at caps.gpu_ts_hz from 0 when the adapter was created, so a GPU
 * timestamp means nothing on the CPU's clock until converted through a
 * calibration (ID3D12CommandQueue::GetClockCalibration and
 * GetTimestampFrequency).  19.2 MHz: a common GPU timestamp frequency. */
#define HW_GPU_TS_HZ_DEFAULT 19200000ull

/* Defaults: native, 64-bit atomics, stride 64, fence array payload, system memory. */
void hw_caps_default(struct hw_caps *caps);

/* ---- fence storage ---- */

/* The GPU-visible state of one fence: two locations in fence storage pages. */
struct hw_fence {
	_Atomic uint64_t *cv;         /* CurrentValue: GPU writes, CPU reads (kernel may write) */
	_Atomic uint64_t *mv;         /* MonitoredValue: OS writes, GPU (CMP) reads */
	uint64_t handle;              /* global handle the CMP reports in interrupt payloads */
	bool native;                  /* native: conditional interrupt; else monitored (always) */
	bool shareable;               /* has pages of its own */
	bool local;                   /* lives in local memory (CPU reads pay the modeled cost) */
	uint32_t segment;             /* the memory segment its values came from (0: system memory) */
	uint64_t process;             /* the process whose pages it is packed in (hw_fence_alloc_in) */
	struct hw_pool *pool;         /* the packed pages it came from (non-shareable) */
	uint32_t slot;                /* packed slot index (non-shareable) */
	void *cv_page, *mv_page;      /* own pages (shareable) */
	void *owner;                  /* the OS's object for this fence; never read by hw */
	/* Seed context-monitoring-legacy-monitored-fence, "Monitored fence
	 * creation" (storage.c, hw_page_alloc): FenceValueCPUVirtualAddress, the
	 * CPU's mapping of CurrentValue: read-only; read-write on an IoMmu
	 * adapter, where it is cv itself and a monitored fence has no GPU VA
	 * (cv_va 0): the engines use this address.  FenceValueGPUVirtualAddress
	 * is cv_va (va.c), which maps cv's read-write page. */
	const _Atomic uint64_t *fv_cpu_va;
	/* The model's number for the order of writes to CurrentValue (see
	 * hw_fence_write): even = the last write's number, odd = a write in
	 * progress.  Points at wseq_own, or at a word the fences sharing one
	 * CurrentValue share (cross-adapter). */
	_Atomic uint64_t *wseq;
	_Atomic uint64_t wseq_own;
	/* GPU VAs (va.c): CurrentValue and MonitoredValue in the process's
	 * space `vas` (what the engine's commands address), and in the system
	 * (paging) process's space, given by the OS at create
	 * (DXGKARG_CREATENATIVEFENCE::CurrentValueSystemProcessGpuVa,
	 * MonitoredValueSystemProcessGpuVa; 0: not mapped there) */
	struct hw_va_space *vas;
	uint64_t cv_va, mv_va;
	uint64_t cv_sys_va, mv_sys_va;
};

struct hw_adapter;
struct hw_pool;

/* Allocate storage for a fence; *f is filled (cv = mv-less fences still get an MV slot).
 * 0 or -ENOMEM.  hw_fence_alloc_in(a, 0, caps.storage, ...). */
int hw_fence_alloc(struct hw_adapter *a, bool shareable, bool native, uint64_t handle,
		   uint64_t initial, struct hw_fence *f);
/* Seed native-gpu-fence, "Physical memory storage for current and monitored
 * fence values": a non-shareable fence of process `process` is packed, by
 * the strides, into pages only that process's fences of the same memory use
 * ("packed in the same memory page" is "within the same process"); a
 * shareable one gets pages of its own.  `loc`: the memory its fence type
 * asks for ("Current value", "Monitored value": system memory from the
 * system pool, local memory from the segments the driver named in
 * caps.fence_segments).  0; -ENOMEM; -ENOTSUP (local memory, no segment named). */
int hw_fence_alloc_in(struct hw_adapter *a, uint64_t process, enum hw_storage_loc loc, bool shareable,
		      bool native, uint64_t handle, uint64_t initial, struct hw_fence *f);
void hw_fence_free(struct hw_adapter *a, struct hw_fence *f);
/* A CPU read of CurrentValue: pays the modeled PCIe cost for local memory; acquire.
 * With no_64bit_atomics this is the raw 32-bit value; the OS reconstructs. */
uint64_t hw_fence_cpu_read(const struct hw_adapter *a, const struct hw_fence *f);
/*
 * The order of writes to CurrentValue.  Memory serializes the writes to one
 * location; the OS must tell, for a value it learns was written (an
 * interrupt record, a log entry, a CPU signal), whether the write came before
 * or after a waiter looked at the fence (seed multi-engine-synchronization,
 * "A fence may be rewound": "any new waits ... will be compared against the
 * new lower fence value").  Real hardware gives that order through its
 * timestamps and interrupt order; the model numbers the writes instead:
 *
 *   hw_fence_write     writes CurrentValue and returns the write's number
 *                      (even, > 0, increasing per fence).  Writers of one
 *                      fence take turns around the one exchange (the number
 *                      is odd meanwhile; a writer that finds it odd spins,
 *                      then yields).  `barrier`: the exchange is seq_cst (the
 *                      CMP rule); false only for the broken NO_CMP_BARRIER.
 *   hw_fence_read_seq  a CPU read of CurrentValue (as hw_fence_cpu_read) and
 *                      *seq: the number of the write it read when no write
 *                      ran during the read, else the number of the last write
 *                      finished before the read began (never later than the
 *                      write read).  Never waits.
 * Any thread.  The number is the model's bookkeeping: no command reads it.
 */
uint64_t hw_fence_write(struct hw_fence *f, uint64_t wv, bool barrier);
uint64_t hw_fence_read_seq(const struct hw_adapter *a, const struct hw_fence *f, uint64_t *seq);
/*
 * Access rights to the two values (seed native-gpu-fence, "GPU native fence
 * sync object design"): CurrentValue is "writeable from kernel mode, readable
 * from both user and kernel mode" on the CPU and "readable and writeable
 * using GPU virtual address" on the GPU; MonitoredValue is "readable and
 * writeable from kernel mode, no user mode access" on the CPU and "readable
 * using GPU VA, no write access" on the GPU.  A mapping of one value for one
 * agent carries its rights; reads and writes through it are checked, and a
 * refused one is counted (hw_adapter_access_faults) and never reaches memory.
 *   hw_fence_rights   the table                                 any thread
 *   hw_fence_map      0 / -EACCES (the agent may not touch the value at all:
 *                     user mode and MonitoredValue)             any thread
 *   hw_fence_map_read / _write  0 / -EACCES (no such right; counted); reads
 *                     seq_cst (as hw_fence_cpu_read), writes seq_cst exchanges
 */
enum hw_agent { HW_AGENT_CPU_USER, HW_AGENT_CPU_KERNEL, HW_AGENT_GPU, HW_AGENTS };
enum hw_fence_value { HW_VALUE_CV, HW_VALUE_MV };
#define HW_ACCESS_READ  0x1u
#define HW_ACCESS_WRITE 0x2u
struct hw_fence_map {
	_Atomic uint64_t *p;
	unsigned rights;              /* HW_ACCESS_* */
	uint32_t read_ns;             /* a CPU read's modeled cost (local memory: caps.local_read_ns) */
	struct hw_adapter *a;         /* counts refused accesses */
};
unsigned hw_fence_rights(enum hw_agent who, enum hw_fence_value which);
int hw_fence_map(struct hw_adapter *a, const struct hw_fence *f, enum hw_agent who, enum hw_fence_value which,
		 struct hw_fence_map *out);
int hw_fence_map_read(const struct hw_fence_map *m, uint64_t *v);
int hw_fence_map_write(const struct hw_fence_map *m, uint64_t v);
uint64_t hw_adapter_access_faults(const struct hw_adapter *a);

/* Bytes between two fences' CurrentValues in storage, for the stride tests. */
ptrdiff_t hw_fence_cv_distance(const struct hw_fence *x, const struct hw_fence *y);

/* ---- GPU virtual addresses (gpu-model/hw/va.c) ----
 *
 * Seed native-gpu-fence, "GPU VA mappings in paging process address space
 * for CMP use".  Every process has a GPU VA space (the GPU's page tables for
 * it); the adapter has two: the application process's, where fence storage
 * is mapped by hw_fence_alloc (fences are packed per adapter: one process),
 * and the system (paging) process's, where the OS maps a native fence's
 * CurrentValue and MonitoredValue when the KMD sets MapToGpuSystemProcess
 * and passes the addresses at create (hw_fence.cv_sys_va, mv_sys_va).  An
 * engine's SIGNAL and WAIT address CurrentValue through the process's VA;
 * the CMP reads CurrentValue and MonitoredValue through the system
 * process's VAs (through the process's without the cap).  A VA that maps
 * nothing is a GPU page fault: counted (hw_adapter_va_faults), the access
 * skipped (a SIGNAL writes nothing, the CMP raises nothing).  Both spaces'
 * VAs of a fence differ and map the same storage.
 *
 *   operation                        who                          blocks?
 *   hw_va_map / hw_va_unmap          any thread (the space's mutex)  no (short lock)
 *   hw_va_resolve                    any thread; lock-free (two acquire loads)
 * A VA unmapped while an engine may resolve it makes that engine fault: unmap
 * only what no command queued still names (or to show the fault).
 */
#define HW_VA_PROCESS_BASE 0x0000000100000000ull   /* first GPU VA of a process's space */
#define HW_VA_SYSTEM_BASE  0x0000700000000000ull   /* first GPU VA of the system process's space */
struct hw_va_space;
/* An empty space whose VAs start at base (page aligned, not 0).  0 / -EINVAL / -ENOMEM. */
int hw_va_space_create(uint64_t base, struct hw_va_space **out);
void hw_va_space_destroy(struct hw_va_space *s);
/* Map the pages holding [cpu, cpu + bytes) and return the GPU VA of cpu (0: no
 * memory or VA left).  A single page already mapped in s is shared (counted). */
uint64_t hw_va_map(struct hw_va_space *s, void *cpu, size_t bytes);
/* Undo one hw_va_map of the same va and bytes (0 va: nothing). */
void hw_va_unmap(struct hw_va_space *s, uint64_t va, size_t bytes);
/* The memory va maps to in s, or NULL (a page fault).  Acquire. */
void *hw_va_resolve(const struct hw_va_space *s, uint64_t va);
struct hw_va_space *hw_adapter_process_vas(struct hw_adapter *a);
struct hw_va_space *hw_adapter_system_vas(struct hw_adapter *a);
/* GPU page faults so far: an engine or the CMP found a VA mapping nothing. */
uint64_t hw_adapter_va_faults(const struct hw_adapter *a);
/* Point f's CurrentValue at cv (a cross-adapter fence's shared one) and
 * remap its process VA.  Before f is used.  0 / -ENOMEM. */
int hw_fence_set_cv(struct hw_fence *f, _Atomic uint64_t *cv);

/* ---- commands, queues, engines ---- */

/* WORK (gpu-model/hw/preempt.c): arg = duration (ns; UINT64_MAX: never ends,
 * a hang); value = sub-units (triangles of a draw / thread groups of a
 * dispatch; 0 counts as 1), each an equal slice of the duration, and each
 * cut again HW_WORK_FANOUT ways per finer level; pad = HW_WORK_GRAPHICS or
 * HW_WORK_COMPUTE (which granularity applies). */
#define HW_WORK_GRAPHICS 0u
#define HW_WORK_COMPUTE  1u
#define HW_WORK_FANOUT   8u
/* pad flag of any command: the last command of a DMA buffer (os_queue_submit
 * and the runtime set it; the end of an INDIRECT buffer is one too) */
#define HW_CMD_END_OF_BUFFER 0x80000000u
/* pad flag: the last command of a split packet of one render command that
 * the next packet continues (a split DMA buffer; not on LOG).  Seed
 * gpu-preemption: a preemption-aware engine handles it as a full DMA buffer
 * (a boundary: the context saved and restored there, another context may run
 * before the next packet); a PreemptionAware = 0 engine runs the packets of
 * one command back to back, never switching to another context between. */
#define HW_CMD_SPLIT_END 0x40000000u
#define HW_CMD_FLAGS (HW_CMD_END_OF_BUFFER | HW_CMD_SPLIT_END)
/* pad bits 8..23 of a WORK: the runtime's name tag of the list it came from
 * (0: none), for the execution records only (hw_trace_rec.tag); the
 * engine's work does not depend on it.  Bits 0..7 keep the WORK's kind. */
#define HW_CMD_TAG_SHIFT 8u
#define HW_CMD_TAG_MAX 0xffffu
#define HW_CMD_TAG(pad) (((pad) >> HW_CMD_TAG_SHIFT) & HW_CMD_TAG_MAX)
#define HW_WORK_KIND(pad) ((pad) & 0xffu)

/* Ops a kernel-mode submission may carry are those up to HW_CMD_STAMP
 * (os_queue_submit validates op <= HW_CMD_STAMP): keep STAMP the last of them. */
enum hw_cmd_op {
	HW_CMD_WORK,       /* arg = duration in ns */
	HW_CMD_SIGNAL,     /* write value to fence, then the CMP decides the interrupt */
	HW_CMD_WAIT,       /* native: the queue is not runnable until CV >= value */
	HW_CMD_COUNT,      /* GPU atomic add: *stamp += 1 (tests count executions with it) */
	HW_CMD_FLIP,       /* MMIO flip to surface arg (gpu-model/hw/display.c): latched at the next vsync with FlipOnVSyncMmIo */
	HW_CMD_STAMP,      /* write the engine's timestamp counter (lf_ticks_ordered) to *(uint64_t *)ptr: submission latency */
	HW_CMD_INDIRECT,   /* ring entry of a user-mode queue: run the command buffer ib[0..arg) (one level) */
	HW_CMD_LOG,        /* user-mode: write log entry number arg (fence, value, op = pad: enum hw_log_op) */
	HW_CMD_FENCE_ID,   /* OS-internal, ends a kernel-mode DMA buffer: its submission fence ID arg (value 1: a paging buffer) completed */
	HW_CMD_CONTEXT_SWITCH, /* OS-internal: a zero-length DMA buffer with DXGK_SUBMITCOMMANDFLAGS::ContextSwitch (preempt.c) */
	HW_CMD_SW_SIGNAL,  /* OS-internal: a software signal packet (SignalSynchronizationObjectFromGpuCb):
			      reached, the engine interrupts (HW_IRQ_SW_SIGNAL_PACKET) and the OS writes value to fence */
	HW_CMD_BIND,       /* bind slot pad (< HW_BIND_SLOTS) of the context to the allocation at GPU address arg
			      (patched by the OS from the patch location list; 0: unbind); segment.c */
	HW_CMD_STORE,      /* write value to byte offset arg of the allocation bound at slot pad; segment.c */
	HW_CMD_PAGING,     /* OS-internal, in paging buffers (DxgkDdiBuildPagingBuffer): pad = enum hw_paging_op,
			      arg = destination GPU address, value = source GPU address (TRANSFER) or the
			      context's initial state (INIT_CONTEXT_RESOURCE); segment.c */
};

struct hw_cmd {
	uint32_t op;
	uint32_t pad;
	uint64_t value;
	uint64_t arg;
	struct hw_fence *fence;
	_Atomic uint64_t *stamp;
	const struct hw_cmd *ib;      /* HW_CMD_INDIRECT: the command buffer (valid until it completed) */
};

struct hw_queue;

/* Create a HW queue with a ring of `ring_slots` commands (power of two) on
 * engine `engine` and append it to the engine's run list.  0 and *out;
 * -EINVAL (no such engine, bad ring size) or -ENOSPC (HW_MAX_QUEUES on the
 * engine), *out untouched.  One creator at a time per adapter (queue_lock). */
int hw_queue_create(struct hw_adapter *a, unsigned engine, size_t ring_slots, struct hw_queue **out);
/* Push n commands and ring the engine (wakes it only if parked).  The caller is the
 * queue's single producer.  Spins (with yields) while the ring is full. */
void hw_queue_submit(struct hw_queue *q, const struct hw_cmd *cmds, size_t n);
/* Push as many of the n commands as the ring takes now and ring the engine;
 * returns how many.  Never waits: for a thread that must not wait on the GPU
 * (the OS interrupt thread feeding CPU-held command buffers). */
size_t hw_queue_submit_some(struct hw_queue *q, const struct hw_cmd *cmds, size_t n);
/* Commands pushed and not yet executed (approximate). */
size_t hw_queue_pending(const struct hw_queue *q);

/* ---- interrupts ---- */

enum hw_irq_kind {
	HW_IRQ_NATIVE_FENCE_SIGNALED,     /* DXGK_INTERRUPT_NATIVE_FENCE_SIGNALED */
	HW_IRQ_MONITORED_FENCE_SIGNALED,  /* DXGK_INTERRUPT_MONITORED_FENCE_SIGNALED (legacy) */
	HW_IRQ_SOFTWARE,                  /* deferred work the OS queues itself (a CPU signal): not a GPU interrupt */
	HW_IRQ_SW_SIGNAL_PACKET,          /* the GPU context reached a software signal packet: signaled, value */
};

struct hw_irq_rec {
	struct lf_mpsc_node node;
	uint32_t kind;
	uint32_t engine;
	bool eval_legacy;                 /* EvaluateLegacyMonitoredFences */
	uint32_t nfences;                 /* 0 = NULL pSignaledNativeFenceArray */
	uint64_t fences[HW_IRQ_MAX_FENCES]; /* global handles */
	/* The fence the signal wrote (global handle; 0: none) and the value it
	 * wrote, whatever the payload: what the seed's signal log entry
	 * (FENCE_SIGNAL_EXECUTED: hNativeFence, FenceValue) tells the OS, so a
	 * release is decided against the value signaled even when the fence was
	 * rewound before the OS read it. */
	uint64_t signaled;
	uint64_t value;
	uint64_t seq;                     /* the model's number of that write (hw_fence_write; 0: none) */
	bool optimized;                   /* OptimizedNativeFenceSignaledInterrupt payload: hwqueues, not fences */
	uint32_t nqueues;                 /* optimized: 0 = a NULL hHWQueue */
	uint64_t hwqueues[HW_IRQ_MAX_FENCES]; /* optimized: kernel handles of the HW queues that ran (hw_queue_handle) */
	uint64_t t_raise_ns;
	void *ctx;                        /* software records: the OS's own (never read by hw) */
	uint32_t os_flags;                /* software records: the OS's own (never read by hw) */
};

/* ---- the GPU timestamp counter (gpu-model/hw/adapter.c) ---- */

/* Now on a's GPU timestamp counter (ticks).  Any thread; wait-free. */
uint64_t hw_gpu_timestamp(const struct hw_adapter *a);
/* A GPU timestamp and the CPU time (lf_now_ns) of the same instant, and the
 * counter's frequency: cpu_ns(gpu) = *cpu_ns + (gpu - *gpu) * 1e9 / *hz.
 * Any thread; wait-free. */
void hw_clock_calibration(const struct hw_adapter *a, uint64_t *gpu, uint64_t *cpu_ns, uint64_t *hz);

/* Raise an interrupt record (the engines do; the OS tests inject). Any thread. */
void hw_irq_raise(struct hw_adapter *a, struct hw_irq_rec *rec);
/* OS interrupt thread: next record or NULL.  The caller frees it with hw_irq_free. */
struct hw_irq_rec *hw_irq_pop(struct hw_adapter *a);
struct hw_irq_rec *hw_irq_alloc(void);
void hw_irq_free(struct hw_irq_rec *rec);
/* OS interrupt thread: sleep until an interrupt is raised or timeout; 0 / -ETIMEDOUT.
 * Returns at once when records are pending. */
int hw_irq_park(struct hw_adapter *a, int64_t timeout_ns);
/* Wake the interrupt thread (shutdown): raises an empty HW_IRQ_SOFTWARE
 * record, so a thread about to park sees it in its re-check. */
void hw_irq_kick(struct hw_adapter *a);

/* A fence value changed without the GPU (CPU signal, cross-adapter propagation):
 * engines with queues waiting re-evaluate their run lists (no CPU round trip for
 * GPU waits otherwise).  Any thread. */
void hw_cmp_cpu_signal_notify(struct hw_adapter *a);

/* ---- native fence log buffers (gpu-model/hw/logbuf.c) ----
 *
 * Seed native-gpu-fence, "Native fence log buffer design": the OS gives each
 * user-mode HW queue two log buffers (waits, signals; DxgkDdiSetNativeFenceLogBuffer
 * analog: hw_queue_set_log).  After a native wait or signal the UMD puts a
 * HW_CMD_LOG naming the entry to write; the engine writes, in the seed's order
 * ("Synchronously updating the native fence log"): the fence value (the
 * SIGNAL), the entry with its GPU timestamp, FirstFreeEntryIndex + 1 (a wrap
 * bumps WraparoundCount), a memory barrier, then the CMP's conditional
 * interrupt for that signal.  The reader pays the other barrier
 * (hw_log_update, the DxgkDdiUpdateNativeFenceLogs analog).  The GPU may
 * overwrite entries the OS has not read (no back pressure).
 *
 * GPU timestamps are CLOCK_MONOTONIC ns (lf_now_ns) in the model.
 *
 *   operation            who                                  blocks?
 *   hw_log_create/destroy  the OS (a log not set on a queue)   no
 *   hw_queue_set_log     the OS, with the queue off the run list or never run   no
 *   hw_log_write         the engine running the queue (single writer per log)   no
 *   hw_log_header / entry reads   any reader; entries may be overwritten meanwhile:
 *                        re-read the header after reading them (os/logbuf.c)
 */
#define HW_LOG_SIZE 4096u               /* bytes of one log buffer (seed: 4 KB) */
#define HW_LOG_HEADER_BYTES 64u

enum hw_log_type { HW_LOG_WAITS, HW_LOG_SIGNALS, HW_LOG_TYPES };
enum hw_log_op {                        /* DXGK_NATIVE_FENCE_LOG_OPERATION_* */
	HW_LOG_OP_NONE,                 /* never written */
	HW_LOG_OP_SIGNAL_EXECUTED,
	HW_LOG_OP_WAIT_UNBLOCKED,
};

/* DXGK_NATIVE_FENCE_LOG_ENTRY: fields are relaxed atomics because a reader
 * may read an entry the engine is overwriting (it then discards the read). */
struct hw_log_entry {
	_Atomic uint64_t fence;         /* hNativeFence: the fence's global handle */
	_Atomic uint64_t value;         /* FenceValue */
	_Atomic uint64_t op;            /* enum hw_log_op */
	_Atomic uint64_t observed_ts;   /* FenceObservedGpuTimestamp (waits: when the GPU queued the wait) */
	_Atomic uint64_t end_ts;        /* FenceEndGpuTimestamp */
};

/* DXGK_NATIVE_FENCE_LOG_HEADER + entries, `bytes` in all. */
struct hw_log {
	/* FirstFreeEntryIndex (low 32 bits) and WraparoundCount (high 32) in one
	 * word: the engine writes it (release, after the entry), readers acquire */
	LF_ALIGNED _Atomic uint64_t header;
	uint32_t capacity;              /* entries */
	uint32_t bytes;
	/* The model's, beside the seed's layout (in the header line's padding):
	 * per entry, the number of the signal's write (hw_fence_write; 0: none),
	 * written and read with the entry. */
	_Atomic uint64_t *seq;
	/* Its mappings besides this CPU VA (LogBufferCpuVa), set by the OS
	 * (0: none; the engine then writes through the CPU VA): LogBufferGpuVa
	 * in the process's GPU VA space, which the engine's LOG writes through,
	 * and LogBufferSystemProcessGpuVa, the CMP's (va.c) */
	uint64_t gpu_va, sys_va;
	/* The model's: the position (hw_log_pos) the last hw_log_update
	 * (DxgkDdiUpdateNativeFenceLogs) made visible; entries below it may be read */
	_Atomic uint64_t flushed;
	LF_ALIGNED struct hw_log_entry entries[];
};
_Static_assert(sizeof(struct hw_log) == HW_LOG_HEADER_BYTES, "log header is one line");

/* A zeroed log of `bytes` (>= HW_LOG_HEADER_BYTES + one entry) whose header says
 * position `pos` (entries written so far: a recreated log continues the old
 * one's progression).  NULL on bad size / no memory. */
struct hw_log *hw_log_create(size_t bytes, uint64_t pos);
void hw_log_destroy(struct hw_log *log);
/* The header's FirstFreeEntryIndex + WraparoundCount as a count of entries ever written. */
uint64_t hw_log_pos(const struct hw_log *log, uint64_t header);
/* Acquire load of the header (pairs with the engine's release increment). */
uint64_t hw_log_header(const struct hw_log *log);
/* The engine's LOG command: entry `n` (the UMD's count) gets the payload and the
 * end timestamp, then the header moves on, then a full barrier. */
void hw_log_write(const struct hw_adapter *a, struct hw_log *log, uint64_t n, uint64_t fence,
		  uint64_t value, uint64_t seq, enum hw_log_op op, uint64_t observed_ts, uint64_t end_ts);
/* DxgkDdiSetNativeFenceLogBuffer analog: the engine uses `log` for q's
 * entries of type t from its next LOG (NULL: none).  The caller keeps q off
 * the run list (hw_queue_set_scheduled false) or q never ran. */
void hw_queue_set_log(struct hw_queue *q, enum hw_log_type t, struct hw_log *log);
/* DxgkDdiUpdateNativeFenceLogs analog for one queue: a full barrier, so log
 * entries written before FirstFreeEntryIndex moved are seen; each of q's logs
 * records the position it flushed (hw_log.flushed).  Any thread. */
void hw_log_update(struct hw_queue *q);
/* The position the last hw_log_update made visible (acquire). */
uint64_t hw_log_flushed(const struct hw_log *log);
/* Test seam (tests only): when set, the engine thread calls it as its CMP
 * raises a native fence signaled interrupt for a signal its queue's LOG
 * follows, before the OS can take the interrupt: `log` is the queue's
 * signal log (NULL: none), `fence` and `value` the signal's.  The seed's
 * order ("Order of operations on GPU when signaling or unblocking a fence")
 * says the entry is below the published FirstFreeEntryIndex by then.  Set
 * and cleared only while no adapter runs (thread start and join order it). */
extern void (*hw_log_irq_test_hook)(const struct hw_log *log, uint64_t fence, uint64_t value);
/* The kernel handle the optimized interrupt reports for q (never 0), and
 * its engine and run-list slot: the OS maps it back. */
uint64_t hw_queue_handle(const struct hw_queue *q);
#define HW_QUEUE_HANDLES (HW_MAX_ENGINES * HW_MAX_QUEUES)   /* handles are 1..HW_QUEUE_HANDLES */

/* ---- execution records (gpu-model/hw/trace.c) ----
 *
 * For a timeline (GPUView's view of the queues and engines), the engines
 * report what they execute to a sink the OS sets: each WORK (the slice that
 * ran, named by its tag), SIGNAL and WAIT of a queue, each run of a queue on
 * an engine, each preemption and ContextSwitch packet.  Times are CPU ns
 * (lf_now_ns).  These are the model's own records, not the seed's log
 * buffers (which the UMD programs and the OS reads: logbuf.c).  Without a
 * sink the engines do nothing more than one relaxed load per command.
 *
 *   call                who                                       blocks?
 *   hw_trace_set_sink   one setup thread, before the records it wants    no
 *   the sink            called on the engine threads, concurrently   must not
 */
enum hw_trace_kind {
	HW_TRACE_RUN,      /* queue ran on engine from t0 to t1: value = commands executed */
	HW_TRACE_WORK,     /* a WORK (slice) t0..t1: tag = its list's name tag, value = 1 if it stopped early (preempted, reset) */
	HW_TRACE_SIGNAL,   /* SIGNAL of fence (global handle) to value, executed t0..t1 */
	HW_TRACE_WAIT,     /* WAIT for fence >= value: reached at t0, went past at t1 */
	HW_TRACE_PREEMPT,  /* queue preempted at t0 at boundary level value (1 buffer end, 2 mid buffer, 3 mid command) */
	HW_TRACE_CTX_SWITCH, /* a ContextSwitch packet of queue at t0 */
};
struct hw_trace_rec {
	uint32_t kind;     /* enum hw_trace_kind */
	uint32_t engine;
	uint64_t queue;    /* hw_queue_handle */
	uint64_t fence, value;
	uint64_t t0, t1;
	uint32_t tag;
};
typedef void (*hw_trace_sink)(void *ctx, const struct hw_trace_rec *r);
/* Start reporting to sink(ctx, ...).  Once set it stays until the adapter is destroyed. */
void hw_trace_set_sink(struct hw_adapter *a, hw_trace_sink sink, void *ctx);

/* ---- preemption, priorities, engine reset (gpu-model/hw/preempt.c) ----
 *
 * Seed gpu-preemption.  Every HW queue has a priority (0 by default); each
 * pass an engine runs only the highest-priority runnable queues of its run
 * list.  A preemption request (hw_engine_preempt: the OS scheduler for
 * kernel-mode work, the OS watchdog before a TDR) asks the engine to leave
 * a queue of lower priority than the request's; the engine's own run list
 * raises one itself when a higher-priority user-mode queue is rung or a
 * higher-priority queue's HW wait is satisfied.  The engine honours it at
 * the next point its granularity allows (the WORK's kind picks graphics or
 * compute): DMA_BUFFER at the end of a DMA buffer, PRIMITIVE/DISPATCH
 * between commands, finer levels between slices of a WORK; NONE and
 * PreemptionAware = 0 never.  The context's state is saved (ctx_save_ns)
 * and the rest of an interrupted WORK kept; both are restored
 * (ctx_restore_ns) when the queue runs again.  A queue blocked in a HW WAIT
 * is always switched out, the wait still in force.  Without preemption an
 * engine with a NONE or DMA_BUFFER granularity never leaves a queue inside
 * a DMA buffer (the round-robin budget waits for its end).
 *
 * Reset (the TDR's last step): hw_engine_reset aborts the command the
 * engine runs in queue q; q is faulted and never runs again (the OS
 * retires it); the engine's other queues are untouched.
 *
 *   operation                     who                         blocks?
 *   hw_queue_set_priority         the OS (any thread)         no
 *   hw_engine_preempt             any thread                  no
 *   hw_engine_reset               the OS watchdog             until the engine aborts or the timeout
 *   hw_engine_running/progress, stats   any thread            no
 */
#define HW_PRIORITY_PREEMPT_ALL INT32_MAX   /* a request that preempts any queue (TDR) */
/* Kernel-mode resubmission (os/queue.c, os_queue_preempt): preempt q at its
 * engine's next allowed boundary and take back what the engine has not
 * started: the ring's commands, the rest of an interrupted WORK first (as a
 * WORK of the remaining time), copied to out (max: at least the ring's
 * capacity + 1), *n.  q stays off the engine until hw_queue_flush_done.  The
 * caller is q's producer and pushes nothing meanwhile.  0; -EAGAIN: the
 * engine left q (or never was in it) before a boundary: nothing taken;
 * -ETIMEDOUT: no boundary within timeout_ns: nothing taken. */
int hw_queue_flush(struct hw_queue *q, struct hw_cmd *out, size_t max, size_t *n, int64_t timeout_ns);
/* The resubmitted commands are in the ring: q runs again; its first
 * `paging` FENCE_IDs marked paging run before any other queue of the engine.
 * From the moment the engine hands q's commands back until this call, the
 * engine runs no other queue: what the OS resubmits is decided before
 * anything else runs (seed gpu-preemption: paging commands "scheduled
 * before any other commands on that engine"). */
void hw_queue_flush_done(struct hw_queue *q, uint32_t paging);
/* Submission fence IDs q completed (HW_CMD_FENCE_ID), the first up to max in order; returns how many. */
#define HW_FENCE_ID_LOG 256
size_t hw_queue_fence_log(const struct hw_queue *q, uint64_t *out, size_t max);
void hw_queue_set_priority(struct hw_queue *q, int32_t priority);
int32_t hw_queue_priority(const struct hw_queue *q);
bool hw_queue_faulted(const struct hw_queue *q);
/* Ask engine `engine` to leave the queue it runs if that queue's priority is
 * below `priority`; the request stands until honoured (or superseded by a
 * reset).  seq_cst; wakes nothing (a parked engine runs nothing). */
void hw_engine_preempt(struct hw_adapter *a, unsigned engine, int32_t priority);
/* The queue engine `engine` is inside now (NULL: between runs), and its
 * progress count (bumped by every command and every preemption): the
 * watchdog's view.  Acquire loads. */
struct hw_queue *hw_engine_running(const struct hw_adapter *a, unsigned engine);
uint64_t hw_engine_progress(const struct hw_adapter *a, unsigned engine);
/* Reset engine `engine` if it is still inside q: the command running is
 * aborted, q faulted.  0: reset; -EAGAIN: the engine left q first (nothing
 * done); -ETIMEDOUT: it did not answer within timeout_ns (nothing done). */
int hw_engine_reset(struct hw_adapter *a, unsigned engine, struct hw_queue *q, int64_t timeout_ns);
struct hw_engine_preempt_stats {
	uint64_t preemptions;    /* requests honoured (queues left for a higher priority or a TDR) */
	uint64_t at_buffer_end;  /* ... at the end of a DMA buffer */
	uint64_t mid_buffer;     /* ... between two commands of one DMA buffer */
	uint64_t mid_command;    /* ... inside a WORK, between two of its slices */
	uint64_t mid_command_run_ns; /* the WORK's modelled ns run, from where it started or resumed, before
	                          * each mid-command stop (summed): with a request standing as the WORK
	                          * begins, one slice of the granularity (hw_work_run) */
	uint64_t ctx_saves, ctx_restores;
	uint64_t ctx_switches;   /* ContextSwitch packets: switches to the null context */
	uint64_t at_split;       /* preemptions at the end of a split packet (another context ran between two) */
	uint64_t resets;         /* queues aborted by hw_engine_reset */
	uint64_t ctx_faults;     /* segment.c: a context (or device context) allocation not resident when used */
	uint64_t ctx_bad_images; /* segment.c: a context loaded the first time from an image not initialized for it */
	uint64_t paging_ops;     /* HW_CMD_PAGING run */
	uint64_t data_faults;    /* HW_CMD_STORE through an unbound slot or an unmapped address */
};
void hw_engine_preempt_stats(const struct hw_adapter *a, unsigned engine, struct hw_engine_preempt_stats *out);
/* Tests only: when set, the engine thread calls it with each command it is
 * about to run and its queue (the rest of a WORK resumed after a preemption
 * is not a new command: no call).  A test may block in it, bounded, to hold
 * the engine at a chosen point of a buffer until the state it needs exists,
 * typically until hw_queue_preempt_pending(q): what the engine does
 * afterwards (where it stops) is still decided by its own preemption code.
 * It may also note there what ran before that command, in the engine's own
 * order.  Set it before the adapter's engine threads start, never while
 * they run.  NULL in every production path. */
extern void (*hw_test_cmd_hook)(struct hw_queue *q, const struct hw_cmd *c);
/* Whether a request to leave q stands on its engine: one above q's
 * priority (hw_engine_preempt) with the work it was sent for still there,
 * or a higher-priority queue the run list sees runnable by itself.  Not an
 * OS take-back (hw_queue_flush): that is a bounded wait of the OS, which
 * falls back to a standing request.  Whatever the granularity allows: not
 * whether or where the engine stops.  q's engine thread only (from
 * hw_test_cmd_hook); it may poll the engine's doorbells, as the engine does. */
bool hw_queue_preempt_pending(struct hw_queue *q);
/* Lazy context switching (seed gpu-preemption, step 4).  An engine keeps
 * the context of the last queue whose commands it ran loaded, idle or not,
 * and loads a queue's context only when one of its commands needs it (not
 * for a FENCE_ID or a ContextSwitch packet).  A ContextSwitch packet (a
 * zero-length DMA buffer, os_queue_context_switch) runs no work: the engine
 * saves the loaded context to its context allocation and switches to the
 * null context; the queue's next command restores it.  A preemption saves
 * the context too (the null context is loaded until the next queue runs).
 * hw_engine_context: the queue whose context is loaded (NULL: the null
 * context); any thread, acquire; a snapshot, compared, never dereferenced. */
const struct hw_queue *hw_engine_context(const struct hw_adapter *a, unsigned engine);

/* The context allocation (DxgkCbCreateContextAllocation's object; seed
 * gpu-preemption, steps 5-6): where a queue's context goes when it is
 * preempted or switched out (the rest of its WORK, its place in the DMA
 * buffer) and where the restore reads it back from.  Saving costs
 * caps.ctx_save_ns and restoring caps.ctx_restore_ns per
 * HW_CTX_ALLOC_BYTES_DEFAULT of its size.  The OS creates one per HW queue
 * (os/ctxalloc.c) and gives it to the queue before its first command; a
 * queue without one keeps its context itself, at the caps' cost.
 *   hw_ctx_alloc_create   any thread; allocates; 0 / -EINVAL (0 bytes) / -ENOMEM
 *   hw_queue_set_ctx_alloc  the queue's creator, before its first command; once
 *   hw_ctx_alloc_stats    any thread; wait-free; relaxed counts (a snapshot)
 *   hw_ctx_alloc_destroy  the OS, once its queue is retired or the adapter goes
 *                         (marks it; a retired queue never runs again); the
 *                         memory goes with its queue's (hw_adapter_destroy), so
 *                         a late look by an engine is never a use after free */
#define HW_CTX_ALLOC_BYTES_DEFAULT 65536u
struct hw_ctx_alloc;
#define HW_CTX_SYSTEM_SLOTS_DEFAULT 64u
#define HW_CTX_SLOTS_MAX 4096u
struct hw_ctx_alloc_stats {
	uint64_t bytes;
	uint64_t va;                     /* its GPU address now (0: not resident; unmanaged: 0) */
	bool managed;
	uint64_t saves, restores;        /* contexts written to it and read back */
	uint64_t saved_work_ns;          /* the WORK time left the last save wrote */
	uint64_t restored_work_ns;       /* the WORK time left the last restore gave back */
	bool holds;                      /* a saved context is in it now */
	bool destroyed;
};
int hw_ctx_alloc_create(struct hw_adapter *a, size_t bytes, struct hw_ctx_alloc **out);
/* Segment-managed allocations (segment.c): created not resident, with an id
 * (never 0) for InitContextResource.  hw_ctx_alloc_place: the OS moved it to
 * GPU address va (0: evicted); the caller keeps its queue off the engine
 * (off the run list, its context not loaded) meanwhile.  Release: the
 * paging buffer's copy before the address. */
int hw_ctx_alloc_create_managed(struct hw_adapter *a, size_t bytes, struct hw_ctx_alloc **out);
void hw_ctx_alloc_place(struct hw_ctx_alloc *c, uint64_t va);
uint64_t hw_ctx_alloc_va(const struct hw_ctx_alloc *c);
uint64_t hw_ctx_alloc_id(const struct hw_ctx_alloc *c);
/* A device context allocation (DxgkCbCreateContextAllocation's Remarks:
 * it "remains resident for any context belonging to its associated
 * device", e.g. for page table data): the engine reads it whenever it
 * loads q's context (not resident: a fault).  Any thread; release. */
void hw_queue_set_dev_alloc(struct hw_queue *q, struct hw_ctx_alloc *c);
void hw_queue_set_ctx_alloc(struct hw_queue *q, struct hw_ctx_alloc *c);
void hw_ctx_alloc_stats(const struct hw_ctx_alloc *c, struct hw_ctx_alloc_stats *out);
void hw_ctx_alloc_destroy(struct hw_ctx_alloc *c);

/* ---- display: the vsync source and MMIO flips (gpu-model/hw/display.c) ----
 *
 * Seed gpu-preemption, step 8: "the GPU scheduler attempts to preempt
 * hardware even if flips are pending ... the driver must support the
 * memory-mapped I/O flip model" (FlipOnVSyncMmIo).  One display source
 * scans out a surface; its vsyncs fall at the adapter's creation time + k *
 * vsync_period_ns.  A FLIP command writes the flip register by MMIO.  With
 * FlipOnVSyncMmIo the display latches the last value written at the next
 * vsync, so a frame is always shown whole; without it the scanout changes
 * at once, in the middle of a frame: a torn flip (counted).  A pending flip
 * holds nothing back: the engine may be preempted right after writing it.
 *
 *   hw_display_scanout / _log / _stats   any thread (display lock)   no
 */
#define HW_VSYNC_DEFAULT_NS 16666667ull
#define HW_FLIP_LOG 256
struct hw_flip_rec {
	uint64_t surface;
	uint64_t written_ns;     /* when the engine wrote the flip register (lf_now_ns) */
	uint64_t visible_ns;     /* when the display began to show it */
	bool torn;               /* shown from the middle of a frame, not from a vsync */
};
struct hw_display_stats {
	uint64_t flips;          /* FLIP commands run */
	uint64_t shown;          /* surfaces that reached the screen */
	uint64_t replaced;       /* flips overwritten by a later one before their vsync */
	uint64_t torn;           /* shown mid-frame */
};
/* The surface on screen now (0: none yet).  Latches a flip whose vsync passed. */
uint64_t hw_display_scanout(struct hw_adapter *a);
/* The first up to max surfaces shown, in order; returns how many.  Latches first. */
size_t hw_display_log(struct hw_adapter *a, struct hw_flip_rec *out, size_t max);
void hw_display_stats(struct hw_adapter *a, struct hw_display_stats *out);
/* The display's first vsync (ns, lf_now_ns's clock) and its period. */
uint64_t hw_display_t0(const struct hw_adapter *a);
uint64_t hw_display_period(const struct hw_adapter *a);

/* ---- adapter ---- */

struct hw_engine_stats {
	uint64_t signals;        /* SIGNAL commands executed */
	uint64_t interrupts;     /* interrupts raised */
	uint64_t cmds;           /* commands executed */
	uint64_t parks;          /* times the engine parked (entered F1) */
	uint64_t waits_blocked;  /* WAITs that found the value not yet reached */
	uint64_t busy_ns;        /* time running commands */
	uint64_t lowered;        /* idle stretches polled at nice 10 (engine.c, "Idle polling"); counted
	                          * before the lowering, so a failed one counts here and in lower_failed */
	uint64_t lower_failed;   /* times the nice value could not be set or returned (polling at its own weight) */
	/* timing.c: the modelled latencies the engine spent (caps.timing) */
	uint64_t timed;          /* latencies spent */
	uint64_t timed_ns;       /* their modelled total */
	uint64_t timed_late_ns;  /* how much later than modelled they ended, in total (the clock's overshoot) */
	uint64_t park_idle_min_ns; /* the shortest idle stretch before a park, by the engine's clock (0: never
				  * parked): caps.idle_spin_ns, or 1 ms under a timing profile (timing.c) */
};

/* 0 or -EINVAL with a one-line reason in err (bad caps). */
int hw_adapter_create(const struct hw_caps *caps, struct hw_adapter **out, char *err, size_t errlen);
int hw_adapter_start(struct hw_adapter *a);          /* starts the engine threads; their tids are known on return */
void hw_adapter_stop(struct hw_adapter *a);           /* stops and joins the engines (idempotent) */
void hw_adapter_destroy(struct hw_adapter *a);        /* stops the engines, frees everything */
const struct hw_caps *hw_adapter_caps(const struct hw_adapter *a);
void hw_engine_stats(const struct hw_adapter *a, unsigned engine, struct hw_engine_stats *out);
pid_t hw_engine_tid(const struct hw_adapter *a, unsigned engine);  /* for perf counters */
/* Return once every engine has finished the queue run it was in at the call
 * (acquire: what those commands did, a fence signal included, is visible and
 * done, so the OS may free a fence no command still queued names).  Any
 * thread; waits (spins, then yields) only for the runs in progress. */
void hw_adapter_engines_barrier(struct hw_adapter *a);
uint64_t hw_adapter_interrupts(const struct hw_adapter *a);      /* sum over engines */
uint64_t hw_adapter_signals(const struct hw_adapter *a);

#endif
