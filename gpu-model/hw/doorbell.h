/* gpu-model/hw/doorbell.h — what the GPU offers user-mode work submission:
 * user-mode HW queues (ring buffer + ring control), doorbell registers, the
 * run-list bit that context suspension clears, and engine F-states with the
 * engine-state-change interrupt.  Seed: user-mode-work-submission.
 *
 * ---- A user-mode queue ----
 * Its ring buffer is an lf_ring of struct hw_cmd slots (lockfree/ring.h) the
 * application allocated and the KMD bound to the queue at CreateDoorbell
 * (hw_queue_bind_ring): the application (UMD) is the producer, the engine
 * the consumer, and the ring's published write index is the
 * ring-buffer-control write pointer.  A slot is
 * a command, or an HW_CMD_INDIRECT naming a command buffer (one level).  Unlike a kernel-mode queue
 * (hw_queue_submit: the KMD writes the ring and wakes the engine), the engine
 * does NOT watch a user-mode ring: it re-reads the write pointer only when it
 * is told to look — a doorbell ring it sees, or a kick (doorbell
 * disconnect, context resume).  A command buffer made visible without a ring
 * that reaches the engine stays unseen.
 *
 * ---- Doorbell registers ----
 * Dedicated (HW_DOORBELL_DEDICATED): `doorbells` physical registers; the KMD
 * connects one to one queue at a time and must virtualize them when queues
 * outnumber registers.  Global (HW_DOORBELL_GLOBAL): one register for all
 * queues; the value written names the queue, and when several queues rang
 * before the engine looked it polls every queue connected to it.
 *
 * A ring is hw_doorbell_write.  Dedicated: a plain release store of the
 * queue's tag | write pointer, as the seed's pseudocode writes the doorbell
 * (a locked RMW would hold the line from the polling engine a while longer:
 * measured, about one cache-line transfer more per ring); global: a seq_cst
 * CAS that stores the queue id and counts the rings.  Each ring writes a
 * value the register never held, so the engines poll with plain acquire
 * loads and take a changed value for a ring (they never write the register:
 * a ring costs one cache-line transfer to the polling engine); the acquire
 * load that reads a ring's value sees the write pointer published before it.
 *
 * Disconnecting is a Dekker pair with the ringer.  The ringer: ring, then
 * lf_asym_light() (a compiler barrier), then load the status.  The OS: set
 * the status, rotate the mapping to a dummy page, then lf_asym_heavy() (a
 * barrier on every CPU running the process: what the rotation's TLB
 * shootdown costs), then hw_doorbell_disconnect latches the register (an
 * RMW) and kicks the queue with the write pointer of that moment.  Either
 * the ringer's status load sees the disconnect (it reconnects and rings
 * again) or the ring and the write pointer before it are visible to the
 * latch and the kick: a ring whose ringer read CONNECTED is never lost.  A
 * ring after the latch lands on the register or the dummy page and is lost,
 * and its ringer reads the status that says so.

 * ---- Engine F-states ----
 * An engine whose doorbells are connected must keep polling them (a ring is a
 * memory write, not a wake-up).  Idle, it watches the registers between its
 * full passes (hw_engine_watch: loads only, no pause instruction, as a
 * doorbell write reaches real hardware at once) and runs a rung queue
 * straight away.  Idle for f1_timeout_ns with doorbells still
 * connected, it raises an engine-state-change interrupt (DXGK_INTERRUPT_GPU_
 * ENGINE_STATE_CHANGE, Active -> TransitionToF1) on its own line
 * (hw_state_irq_*: a status word, bit e for engine e, like a second MSI-X
 * vector) and keeps polling.  The OS disconnects every doorbell of that
 * engine; with none connected the engine parks: that is F1.  A kernel-mode
 * submission, a fence signal it waits for, a kick or a doorbell connect wakes
 * it (F0).  An engine without user-mode queues parks after idle_spin_ns as
 * before (also F1).
 *
 * The same line carries the other transition the seed names, Active ->
 * Hung: the KMD raises it (hw_engine_state_raise, NewState
 * HW_ENGINE_STATE_HUNG) when it knows an engine hung, and the OS starts
 * timeout recovery on that engine (gpu-model/os/tdr.c).  Each engine's
 * NewState has its own bit in the status word (HW_STATE_IRQ_F1,
 * HW_STATE_IRQ_HUNG), as EngineStateChange.NewState tells them apart.
 *
 *   operation                          who may call                       blocks?
 *   hw_queue_create_um                 one thread at a time (queue_lock)  no
 *   hw_queue_bind_ring                 the KMD, serialized by its lock    no
 *   hw_queue_kick                      any thread                         no (futex wake if parked)
 *   hw_queue_set_scheduled(false),     the KMD, one call per queue at a   waits for the engine to
 *     hw_queue_retire                  time                               leave the queue (a command)
 *   hw_doorbell_connect/_disconnect    the KMD, serialized by its lock    no
 *   hw_doorbell_write                  any thread (the UMD's ring)        no; lock-free
 *   hw_engine_state_raise              any thread (the KMD)               no; lock-free
 *   hw_state_irq_take/_park            the OS power thread only           park: yes
 *   stats, fstate, owner, last_use     any thread                         no
 */
#ifndef HW_DOORBELL_H
#define HW_DOORBELL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "gpu-model/hw/hw.h"

#define HW_MAX_DOORBELLS          64
#define HW_DOORBELLS_DEFAULT      16
#define HW_F1_TIMEOUT_DEFAULT_NS  1000000ull     /* 1 ms idle with doorbells connected -> ask for F1 */
#define HW_DOORBELL_SIZE          8u             /* DXGK_USERMODESUBMISSION_CAPS: doorbell memory size, bytes (default) */
#define HW_DOORBELL_MAX_BYTES     4096u          /* the largest: a page of the BAR (the register is its first 8 bytes) */
#define HW_DB_GLOBAL              (1ull << 63)   /* a global-doorbell value: HW_DB_GLOBAL | queue id */
#define HW_DB_WPTR_BITS           40             /* a dedicated value: (queue id + 1) << 40 | write pointer */
#define HW_DB_WPTR_MASK           ((1ull << HW_DB_WPTR_BITS) - 1)

enum hw_fstate {
	HW_F0,   /* active: running or polling */
	HW_F1,   /* parked: no doorbell connected, nothing runnable */
};

/* ---- caps ---- */

/* The node metadata flag UserModeSubmissionSupported of engine e. */
bool hw_engine_um_supported(const struct hw_adapter *a, unsigned engine);
enum hw_doorbell_model hw_doorbell_model(const struct hw_adapter *a);
/* Physical doorbells: the dedicated pool's size, 1 for the global model. */
unsigned hw_doorbell_count(const struct hw_adapter *a);
/* DXGK_USERMODESUBMISSION_CAPS: the doorbell memory size in bytes (caps, or HW_DOORBELL_SIZE). */
unsigned hw_doorbell_bytes(const struct hw_adapter *a);

/* ---- user-mode queues ---- */

/* A user-mode queue on engine e, without a ring yet: its ring buffer is an
 * allocation the application makes and the KMD binds at CreateDoorbell
 * (seed, "Residency model of doorbell memory and ring buffer allocations").
 * Until then the engine sees an empty ring.  0; -ENOTSUP: the node lacks
 * UserModeSubmissionSupported; -EINVAL: engine; -ENOSPC: the engine's run
 * list is full.  Scheduled on creation. */
int hw_queue_create_um(struct hw_adapter *a, unsigned engine, struct hw_queue **out);
/* Bind the application's ring buffer (an lf_ring of struct hw_cmd slots) to
 * user-mode queue q: the KMD programming the queue's ring at CreateDoorbell.
 * Once per queue: binding the bound ring again is 0, another -EBUSY (the
 * hardware keeps addressing the first); -EINVAL (not user-mode, slot size).
 * From the bind on the ring's memory is the queue's: freed with it at
 * hw_adapter_destroy.  The KMD, under its lock, before the doorbell connects. */
int hw_queue_bind_ring(struct hw_queue *q, struct lf_ring *ring);
/* The ring buffer (+ its write pointer): the UMD is its one producer. */
struct lf_ring *hw_queue_ring(struct hw_queue *q);
unsigned hw_queue_engine(const struct hw_queue *q);
bool hw_queue_is_um(const struct hw_queue *q);
/* Commands executed so far (command-buffer entries count one each). */
uint64_t hw_queue_executed(const struct hw_queue *q);
/* Tell the CMP to look at q's write pointer as it is now: the engine may run
 * what was published before this call (release), not what comes after.  Any
 * thread; wakes the engine if it parked. */
void hw_queue_kick(struct hw_queue *q);
/* Put q on / take it off the HW scheduler's run list (suspend/resume).
 * Taking it off returns once the engine is not inside q (at most the command
 * it was running finishes: preemption at a command boundary); nothing of q
 * runs until it is put back.  Putting it back kicks it (the CMP observes the
 * new write pointer).  The KMD, under its lock. */
void hw_queue_set_scheduled(struct hw_queue *q, bool on);
/* Two owners hold a queue off the run list, each with its own bit: the OS
 * (context suspension, under its lock: hw_queue_set_scheduled is its hold)
 * and the video memory manager (a context allocation being moved, under
 * its own lock).  The queue is on the run list while nobody holds it: one
 * releasing its hold never puts back a queue the other holds.  Taking a
 * hold waits as hw_queue_set_scheduled(q, false); releasing the last one
 * kicks.  Returns whether it is on the run list now. */
#define HW_HOLD_OS    0x1u
#define HW_HOLD_VIDMM 0x2u
bool hw_queue_hold(struct hw_queue *q, uint32_t who, bool on);
/* Tests only: when set, called on the holding thread right after the holds
 * RMW (stage 0) and, with HW_FAULT_HOLDS_SPLIT, after each store of the
 * separate run-list flag (stage 1).  NULL in every production path. */
extern void (*hw_test_hold_hook)(struct hw_queue *q, uint32_t who, bool on, int stage);
/* On the run list now?  Any thread; a seq_cst load (pairs with a resume's
 * seq_cst store: the OS decides whether to come back for a full ring). */
bool hw_queue_scheduled(const struct hw_queue *q);
/* Destroy: off the run list for good, the engine discards anything left.
 * Returns once the engine has seen it (it never looks at the fence q waited
 * on again: the OS may free it); waits for a parked engine to wake.  The
 * memory stays until hw_adapter_destroy (the slot is not reused). */
void hw_queue_retire(struct hw_queue *q);
/* The same in two halves, for a caller that must not wait without a bound
 * (the TDR watchdog: the engine it waits on may be hung, and only it can
 * reset it).  _begin: the flags only, never blocks.  _wait_for: returns 0
 * once the engine has seen it (as hw_queue_retire), -ETIMEDOUT after
 * timeout_ns (< 0: no bound); call again to go on waiting.  The KMD. */
void hw_queue_retire_begin(struct hw_queue *q);
int hw_queue_retire_wait_for(struct hw_queue *q, int64_t timeout_ns);
/* Take q off the run list without waiting (the first half of
 * hw_queue_set_scheduled(q, false)); hw_queue_preempt_wait_for is the second:
 * 0 once the engine is not inside q, -ETIMEDOUT after timeout_ns (< 0: no
 * bound).  The KMD, under its lock. */
void hw_queue_unschedule_begin(struct hw_queue *q);
int hw_queue_preempt_wait_for(struct hw_queue *q, int64_t timeout_ns);

/* ---- doorbells (KMD side, serialized by the caller) ---- */

/* Connect physical doorbell `phys` (dedicated; ignored for global) to q.
 * Returns the register's address, which the OS maps into the application.
 * The doorbell must be free (dedicated).  Wakes q's engine (F1 -> F0). */
_Atomic uint64_t *hw_doorbell_connect(struct hw_adapter *a, unsigned phys, struct hw_queue *q);
/* Disconnect q's doorbell, if any: latch the register, free it, kick q. */
void hw_doorbell_disconnect(struct hw_adapter *a, struct hw_queue *q);
/* The queue connected to physical doorbell phys (dedicated), or NULL. */
struct hw_queue *hw_doorbell_owner(const struct hw_adapter *a, unsigned phys);
/* The register's LRU clock: last ring an engine saw, or its connect (ns). */
uint64_t hw_doorbell_last_use(const struct hw_adapter *a, unsigned phys);
/* The tag the application rings q with (D3DKMTCreateDoorbell hands it out):
 * write hw_doorbell_ring_value(tag, write pointer). */
uint64_t hw_doorbell_value(const struct hw_queue *q);
/* What to write: dedicated, the queue's tag | the write pointer (a value the
 * register never held); global, HW_DB_GLOBAL | queue id. */
uint64_t hw_doorbell_ring_value(uint64_t tag, uint64_t wptr);

/* ---- the application's ring ---- */

/* Ring: write value (a write pointer, or a global value) into the register
 * at reg (a physical doorbell or a dummy page).  Release: everything the
 * caller published before (the write pointer) is seen by an engine that
 * reads this ring; then lf_asym_light(): a status load after this call pairs
 * with the OS's heavy fence at disconnect (above). */
void hw_doorbell_write(_Atomic uint64_t *reg, uint64_t value);

/* ---- engine-state-change interrupts and F-states ---- */

/* DXGK_ENGINE_STATE: the NewState an engine-state-change interrupt
 * (DXGK_INTERRUPT_GPU_ENGINE_STATE_CHANGE) reports for an engine. */
enum hw_engine_state {
	HW_ENGINE_STATE_TRANSITION_TO_F1 = 1,   /* Active -> TransitionToF1: idle, doorbells connected */
	HW_ENGINE_STATE_HUNG = 2,               /* Active -> Hung: wants timeout recovery */
};
/* Where engine e's NewState sits in what hw_state_irq_take returns. */
#define HW_STATE_IRQ_F1(e)   (1u << (e))
#define HW_STATE_IRQ_HUNG(e) (1u << (HW_MAX_ENGINES + (e)))
_Static_assert(2 * HW_MAX_ENGINES <= 31, "every engine's two states lie below HW_STATE_IRQ_KICK");
/* Raise engine e's engine-state-change interrupt with NewState s (the
 * engine raises TransitionToF1 itself; Hung is the KMD's).  A seq_cst RMW on
 * the status word, then the line's wake: pairs with hw_state_irq_park.
 * 0 / -EINVAL (no such engine or state). */
int hw_engine_state_raise(struct hw_adapter *a, unsigned engine, enum hw_engine_state s);
/* The OS power thread: pending engine-state-change interrupts, cleared:
 * HW_STATE_IRQ_F1(e), engine e is idle with doorbells connected and asks
 * for F1; HW_STATE_IRQ_HUNG(e), engine e was reported hung. */
uint32_t hw_state_irq_take(struct hw_adapter *a);
/* The bit hw_state_irq_kick sets in what hw_state_irq_take returns: no engine, just wake up. */
#define HW_STATE_IRQ_KICK (1u << 31)
/* The OS power thread: sleep until one is raised (0) or timeout (-ETIMEDOUT);
 * at once when some are pending. */
int hw_state_irq_park(struct hw_adapter *a, int64_t timeout_ns);
/* Wake the power thread regardless (shutdown). */
void hw_state_irq_kick(struct hw_adapter *a);
/* Bring engine e to F0 (the KMD powers it up): it polls again. */
void hw_engine_wake(struct hw_adapter *a, unsigned engine);
enum hw_fstate hw_engine_fstate(const struct hw_adapter *a, unsigned engine);

struct hw_engine_um_stats {
	uint64_t rings;          /* doorbell rings seen (changes of a register's value) */
	uint64_t global_polls;   /* global rings that covered several queues: every connected queue polled */
	uint64_t looks;          /* write pointers read because of a ring: a dedicated ring names its queue, so
	                          * one look a ring; a global ring that covered several queues, one per queue */
	uint64_t state_irqs;     /* engine-state-change interrupts raised (Active -> TransitionToF1) */
	uint64_t f1_entries;     /* times the engine parked (F0 -> F1) */
	uint64_t f1_ns;          /* time parked */
	uint64_t discarded;      /* commands of destroyed queues dropped unexecuted */
};
void hw_engine_um_stats(const struct hw_adapter *a, unsigned engine, struct hw_engine_um_stats *out);

#endif
