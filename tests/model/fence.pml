/*
 * fence.pml -- the native GPU fence's CMP/OS interrupt protocol, checked
 * exhaustively by spin.  tests/model/check.sh runs every variant below.
 * Here the waiter set changes under one lock.  The code takes it as the
 * seed says: a waiter's add and its DxgkDdiUpdateMonitoredValues run under
 * the fence's interrupt lock, which the interrupt thread holds while it
 * handles the fence (gpu-model/os/fence.c, os_waiter_update_mv); the add is
 * lock-free against a CPU signaler's release, and that race (the multi-round
 * release, with its transient raise) is modelled in waitset.pml.  The code's
 * waiter resamples after the update, taking its own node back if reached: a
 * resample under the lock here, as the ISR's.
 *
 * Seed native-gpu-fence, "Synchronization issues": the CPU lowers
 * MonitoredValue (MV) while the GPU raises CurrentValue (CV); each side
 * publishes its own location and then reads the other's.  That is the
 * store-buffering pattern: without a full barrier on BOTH sides, both reads
 * can miss both writes, the CMP decides "CV <= MV, no interrupt", the OS
 * decides "CV < V, block", and the waiter sleeps forever (a lost wake-up).
 *
 * Seed multi-engine-synchronization, "A fence may be rewound": a new wait
 * "will be compared against the new lower fence value, and therefore may not
 * be satisfied, even if the fence value had previously been high enough",
 * while a race between a value that satisfies an outstanding wait and a
 * lower one leaves the wait "satisfied regardless of which value remains
 * afterwards".  Hence the write sequence (issue 18): every write of CV gets
 * the fence's next write sequence number in the same step (writers of a
 * fence are serialized), and (CV, sequence) is read in one step.  A waiter's
 * registration read gives `since`; a write (v, s) releases a waiter only if
 * V <= v and since < s: a wait is released by a value written after its
 * registration read, or by one it reads itself (registration read, resample).
 *
 * Processes
 *   Engine     one GPU engine + its CMP: for v = 1..NSIG: write CV := v,
 *              barrier (CMP step 2), read MV, raise an interrupt iff CV > MV
 *              ("Synchronization within the GPU between the engine and CMP");
 *              the interrupt carries (v, s) of the write that raised it.
 *              REWIND: then CV := 0, a lower value signaled right after (the
 *              fence is rewound).
 *   Waiter(i)  a CPU thread waiting for value V (V chosen nondeterministically
 *              in 1..NSIG, or 0: this thread never waits, so NWAITERS = 2
 *              also covers one waiter): the registration read (cv0, s0) —
 *              done if cv0 >= V, else since := s0 — then under the OS lock
 *              add itself to the waiter set and lower MV to (least waited
 *              value) - 1, barrier, resample (CV, sequence) and release
 *              whatever it satisfies ("Upon return from
 *              DxgkDdiUpdateMonitoredValue, the OS resamples CurrentValue"),
 *              then block until released.
 *   DrainLog   (LOG) the engine's FirstFreeEntryIndex store reaching memory.
 *   ISR        the OS interrupt handler: per interrupt, under the OS lock
 *              (DxgkDdiUpdateMonitoredValue runs at DIRQL, synchronized with
 *              the ISR): release the waiters the record's write (v, s)
 *              satisfies (the release rule above), MV := least remaining - 1
 *              (or MAXV), barrier, resample (CV, sequence), release again.
 *   CpuSignal  (CPU_SIGNAL=value only) a CPU thread signals that value once,
 *              racing the engine (os_fence_signal_cpu): a seq_cst exchange
 *              writes (CV, sequence) to memory; if MV, read after it, is
 *              below the value, it releases against its own write (v, s)
 *              under the OS lock, then updates MV and resamples as the ISR.
 *              A value below the engine's is a CPU rewind; any value may be
 *              overwritten by a lower engine write, so waits may stay
 *              blocked for good (as with REWIND: the Monitor judges).
 *   Drain*     memory: each writer has a one-entry store buffer (x86-TSO
 *              like) that drains to memory at any moment, or at a barrier.
 *   Monitor    fires on `timeout` (nothing else can move: signals done,
 *              interrupts drained, buffers empty) and asserts no lost wake-up.
 *
 * Memory model.  A store goes into the writer's one-entry buffer; a later
 * store by the same writer first drains the earlier one (stores stay in
 * order).  A process reads its own buffered store (forwarding) and memory
 * otherwise.  A barrier drains the buffer.  Releasing the OS lock drains it
 * too (on x86 the unlock is a store, ordered after the MV store, and the
 * next locked acquire sees both); raising an interrupt drains the engine's
 * CV store (the interrupt message is a posted write, ordered after CV).
 * The engine's CV store takes its sequence number when it reaches memory,
 * so sequence order is the order in memory; a CPU signal is an RMW (no
 * buffer).  So the only reorderings left are the ones the barriers exist
 * for.  (Drop the flush at unlock and spin finds a stale MV store from one
 * CPU landing after a newer one from another: MV updates must be ordered by
 * the lock.)  The OS stores MV only when it changes, as it calls
 * DxgkDdiUpdateMonitoredValues only when its wait conditions change.
 *
 * Variants (-D on the spin command line):
 *   (none)          correct protocol                      -> must verify
 *   NO_CMP_BARRIER  engine/CMP barrier between CV write and MV read removed
 *                                                         -> lost wake-up
 *   NO_OS_BARRIER   OS barrier between MV write and CV resample removed
 *                                                         -> lost wake-up
 *   NO_OS_RESAMPLE  waiter/ISR do not resample CV after changing MV
 *                                                         -> lost wake-up
 *   LEGACY          legacy monitored fence: always interrupt, no MV test
 *                                                         -> must verify
 *   REWIND          the engine rewinds the fence to 0 after its signals; a
 *                   waiter may register after the rewind while the
 *                   interrupt for the higher value is still in flight (the
 *                   CI failure of issue 18)                -> must verify
 *   CPU_SIGNAL=v    a CPU thread signals v (0..NSIG) once, racing the engine:
 *                   0 is a CPU rewind; NSIG with REWIND, a CPU signal whose
 *                   release runs after the engine rewound -> must verify
 *   RELEASE_CURRENT releases against CV only, ignoring the value the
 *                   interrupt (or CPU signal) wrote (an old rule)
 *                                    -> verifies alone, lost wake-up with a
 *                                       rewind (REWIND, CPU_SIGNAL=0)
 *   RELEASE_MAX     releases against max(value written, CV) with no sequence
 *                   check (the rule before issue 18)
 *                                    -> verifies alone, early release with a
 *                                       rewind (REWIND, CPU_SIGNAL)
 *   LOG             the optimized payload: the interrupt names the queue and
 *                   the handler learns the fence from its log; after the CMP
 *                   barrier the engine writes the entry and stores
 *                   FirstFreeEntryIndex (buffered), then the barrier after
 *                   it ("Synchronously updating the native fence log"); the
 *                   interrupt orders CV, not the index; a handler that finds
 *                   no entry handles nothing              -> must verify
 *   NO_LOG_BARRIER  (with LOG) that barrier removed       -> lost wake-up
 *   NSIG, NWAITERS  bounds (default 2 signals, 2 waiters; one engine, one
 *                   fence, waiters never time out; NSIG <= 30: `seen`)
 *
 * Properties.
 * (1) No lost wake-up: in the quiescent end state no waiter with V <= CV is
 * still blocked, and no waiter is blocked that was due — a value >= V became
 * visible after its registration was complete (the seed: such a wait "will
 * be satisfied regardless of which value remains afterwards") (Monitor's
 * assert(released[i]); a waiter stuck in its blocking step is also an
 * invalid end state for pan).
 * (2) No early release: the value that releases a waiter was the fence's
 * value (CV in memory) at the waiter's registration read or at some moment
 * after it (assert in os_release_upto, on the ghost `seen`).  This is the
 * seed's rule in its own terms — a wait is compared against the values the
 * fence has while the wait exists, never against one superseded before
 * (a rewind's "previously high enough") — and it names no sequence number,
 * so it checks the sequence rule rather than restating it.  It implies the
 * older "no early wake-up" (V was reached at some point).  Extra interrupts
 * that release nobody are allowed, as the seed says.
 */

#ifndef NSIG
#define NSIG 2
#endif
#ifndef NWAITERS
#define NWAITERS 2
#endif
#define ISR_CPU NWAITERS
#ifdef CPU_SIGNAL
#define SIG_CPU (NWAITERS + 1)
#define NCPU    (NWAITERS + 2)   /* CPU store buffers: one per waiter, the ISR's, the signaler's */
#else
#define NCPU    (NWAITERS + 1)   /* CPU store buffers: one per waiter, one for the ISR */
#endif
#define MAXV    255              /* stands for UINT64_MAX: no CPU waiter */

byte CV = 0;                     /* CurrentValue, in memory */
byte CVseq = 0;                  /* the sequence number of the write CV holds (0: the initial value);
                                    written with CV in one step, read with it in one step */
byte MV = MAXV;                  /* MonitoredValue, in memory */

bool cvFull;                     /* the engine's store buffer holds a CV store */
byte cvBuf;
bool mvFull[NCPU];               /* CPU k's store buffer holds an MV store */
byte mvBuf[NCPU];

chan irqq = [NSIG] of { byte, byte }; /* interrupts raised and not yet taken: (value, sequence)
                                    of the write that raised each */
bool osLock = false;             /* DIRQL: waiter-set/MV changes and the ISR exclude each other */
byte wval[NWAITERS];             /* value waiter i waits for; 0 until chosen */
bool inSet[NWAITERS];            /* waiter i is in the OS waiter set */
bool released[NWAITERS];         /* waiter i's event is set */
byte since[NWAITERS];            /* waiter i's registration read saw the write with this sequence */
bool registered[NWAITERS];       /* ghost: waiter i's registration is complete (OS lock released) */
bool due[NWAITERS];              /* ghost: a value >= V became visible after that */
int seen[NWAITERS];              /* ghost: bit v set iff CV was v at waiter i's registration read or
                                    at some moment after it; 0 outside that window (not waiting, or
                                    released) */
byte engSeq;                     /* the sequence of the engine's last write that reached memory */
#ifdef LOG
byte logIdx = 0;                 /* the log's FirstFreeEntryIndex in memory: signal k's entry is
                                    entry k, visible once logIdx >= k */
bool logFull;                    /* the engine's store buffer holds an index store */
byte logBuf;
#define log_visible(v)	(logIdx >= (v))
#else
#define log_visible(v)	true
#endif
bool engineDone = false;

byte tj;                         /* scratch for d_steps only, reset to 0 at their end */
byte tm;
byte tk;                         /* scratch of flush_cv (called inside other d_steps) */

/* ---- memory: one-entry store buffers ---- */

/* A write of CV reached memory: every registered waiter it satisfies is due
 * from now on; every waiter between its registration read and its release
 * has seen it. */
inline cv_visible()
{
	for (tk : 0 .. NWAITERS - 1) {
		if
		:: registered[tk] && wval[tk] <= CV -> due[tk] = true
		:: else -> skip
		fi;
		if
		:: seen[tk] != 0 -> seen[tk] = seen[tk] | (1 << CV)
		:: else -> skip
		fi
	}
	tk = 0
}

/* The engine's CV store becomes visible, with the next write sequence number
 * (the write and its number are one step: writers of a fence are serialized). */
inline flush_cv()
{
	if
	:: cvFull ->
		CV = cvBuf; CVseq++; engSeq = CVseq; cvFull = false;
		printf("memory: CV = %d visible (write %d)\n", CV, CVseq);
		cv_visible()
	:: else -> skip
	fi
}

#ifdef LOG
/* The engine's FirstFreeEntryIndex store becomes visible. */
inline flush_log()
{
	if
	:: logFull ->
		logIdx = logBuf; logFull = false;
		printf("memory: FirstFreeEntryIndex = %d visible\n", logIdx)
	:: else -> skip
	fi
}
#endif

inline store_cv(v)
{
	d_step {
#ifdef LOG
		flush_log();                 /* stores stay in order */
#endif
		flush_cv(); cvBuf = v; cvFull = true;
		printf("engine: CV := %d (in store buffer)\n", v)
	}
}

inline flush_mv(k)
{
	if
	:: mvFull[k] ->
		MV = mvBuf[k]; mvFull[k] = false;
		printf("memory: MV = %d visible\n", MV)
	:: else -> skip
	fi
}

/* MV := (least value in the waiter set) - 1, or MAXV; the store is buffered.
 * Only a change is stored, as the OS calls DxgkDdiUpdateMonitoredValues only
 * when its wait conditions change (and a redundant store would drain the
 * one-entry buffer early, hiding reorderings). */
inline store_mv_least(k)
{
	d_step {
		tm = MAXV;
		for (tj : 0 .. NWAITERS - 1) {
			if
			:: inSet[tj] && wval[tj] - 1 < tm -> tm = wval[tj] - 1
			:: else -> skip
			fi
		}
		if                                   /* unchanged: no update (no DDI call) */
		:: (mvFull[k] && mvBuf[k] == tm) || (!mvFull[k] && MV == tm) -> skip
		:: else ->
			flush_mv(k);
			mvBuf[k] = tm;
			mvFull[k] = true;
			printf("cpu %d: MV := %d (in store buffer)\n", k, tm)
		fi;
		tm = 0;
		tj = 0
	}
}

/* ---- OS: lock, release, the resample step ---- */

inline os_lock()
{
	atomic { !osLock -> osLock = true }
}

inline os_unlock(k)
{
	d_step { flush_mv(k); osLock = false }
}

/* The sequence rule: the write with sequence `seq` may release waiter j only
 * if j's registration read saw an earlier write.  RELEASE_MAX: no check. */
#ifdef RELEASE_MAX
#define written_after_read(j, seq)	true
#else
#define written_after_read(j, seq)	(since[j] < seq)
#endif

/* Release every waiter in the set that the write (val, seq) satisfies: V <=
 * val and the write came after the waiter's registration read.  Caller
 * holds osLock.  Property (2), no early release, is asserted here. */
inline os_release_upto(val, seq)
{
	d_step {
		printf("os: release against value %d (write %d)\n", val, seq);
		for (tj : 0 .. NWAITERS - 1) {
			if
			:: inSet[tj] && wval[tj] <= val && written_after_read(tj, seq) ->
				printf("os: value %d (write %d) releases waiter %d (V = %d, registered after write %d)\n",
				       val, seq, tj, wval[tj], since[tj]);
				if
				:: (seen[tj] & (1 << val)) == 0 ->
					printf("EARLY RELEASE: waiter %d (V = %d) released by value %d, not the fence's value at any moment since its registration read (seen mask %d)\n",
					       tj, wval[tj], val, seen[tj])
				:: else -> skip
				fi;
				assert((seen[tj] & (1 << val)) != 0);
				inSet[tj] = false;
				released[tj] = true;
				seen[tj] = 0;
				since[tj] = 0
			:: else -> skip
			fi
		}
		tj = 0
	}
}

/* Read (CV, its sequence) from memory in one step (a CPU stores CV only by an
 * RMW, never buffered) and release what it satisfies. */
inline os_release_satisfied()
{
	os_release_upto(CV, CVseq)
}

/* Release what a signal's write (val, seq) satisfies (the interrupt's record,
 * or a CPU signal's own write), by the variant's rule.  val may be changed. */
inline os_release_signaled(val, seq)
{
#if defined(RELEASE_CURRENT)
	os_release_satisfied()           /* an old rule: the value read now */
#elif defined(RELEASE_MAX)
	d_step {                         /* an old rule: the value signaled, or CV if higher, */
		if                           /* whoever registered when (no sequence check) */
		:: CV > val -> val = CV
		:: else -> skip
		fi
	};
	os_release_upto(val, seq)
#else
	os_release_upto(val, seq)        /* the rule: the write releases the waiters whose
	                                    registration read saw an earlier write; the value
	                                    read now is the resample's (os_resample) */
#endif
}

/* After changing MV: barrier, resample CV, release, recompute MV.
 * Raising MV afterwards needs no further resample: any later CMP check
 * against the raised MV is exact for the waiters that remain. */
inline os_resample(k)
{
#ifndef NO_OS_RESAMPLE
#ifndef NO_OS_BARRIER
	d_step { flush_mv(k) };          /* publish MV before reading CV (pairs with the CMP barrier) */
#endif
	os_release_satisfied();          /* the resample (prints the value read) */
	store_mv_least(k)
#else
	skip
#endif
}

/* ---- processes ---- */

active proctype Engine()
{
	byte v = 1;
	bool raise = false;

	do
	:: v <= NSIG ->
		store_cv(v);                 /* the signal: CV := v, may sit in the store buffer */
#ifndef NO_CMP_BARRIER
		d_step { flush_cv() };       /* CMP step 2: barrier, CV visible before MV is read */
#endif
#ifdef LOG
		d_step {                     /* the log payload, then FirstFreeEntryIndex + 1 */
			logBuf = v; logFull = true;
			printf("engine: FirstFreeEntryIndex := %d (in store buffer)\n", v)
		};
#ifndef NO_LOG_BARRIER
		d_step { flush_log() };      /* "MemoryBarrier => Ensures FirstFreeEntryIndex is fully propagated" */
#endif
#endif
#ifdef LEGACY
		atomic { flush_cv(); irqq ! v, engSeq } /* legacy: always raise */
#else
		d_step {                     /* CMP step 3: read MV; CV is v (forwarded from its own store) */
			if
			:: v > MV ->
				raise = true;
				printf("cmp: CV %d > MV %d: interrupt\n", v, MV)
			:: else ->
				printf("cmp: CV %d <= MV %d: no interrupt\n", v, MV)
			fi
		}
		if
		:: raise -> atomic { flush_cv(); irqq ! v, engSeq; raise = false }
		:: else -> skip
		fi;
#endif
		v++
	:: else -> break
	od;
#ifdef REWIND
	store_cv(0);                     /* signal 0: never above MV, no interrupt */
#endif
	engineDone = true
}

proctype Waiter(byte i)
{
	byte w;

	select (w : 0 .. NSIG);          /* every wait value, every combination; */
	if                               /* 0: this thread never waits, so 2 waiters cover 0 and 1 */
	:: w == 0 -> goto done
	:: else -> skip
	fi;
	d_step {                         /* the registration read: (CV, its sequence) in one read */
		if
		:: CV >= w ->
			printf("waiter %d: CV = %d >= %d: satisfied at once\n", i, CV, w);
			w = 0
		:: else ->
			wval[i] = w;
			since[i] = CVseq;
			seen[i] = 1 << CV;
			printf("waiter %d: reads CV = %d (write %d) < %d: registers\n", i, CV, CVseq, w)
		fi
	};
	if
	:: w == 0 -> goto done
	:: else -> skip
	fi;
	os_lock();
	inSet[i] = true;
	store_mv_least(i);               /* MV := min(MV, V - 1) */
	os_resample(i);
	d_step { os_unlock(i); registered[i] = true };
	printf("waiter %d: waits for %d\n", i, w);
#if defined(REWIND) || defined(CPU_SIGNAL)
end_wait:                            /* a value may be rewound before it is due: may never be released (Monitor judges) */
#endif
	released[i];                     /* block until the OS sets the event */
done:
	skip
}

active proctype ISR()
{
	bool logged;
	byte iv, is;
end:
	do
	:: atomic { irqq ? iv, is -> printf("isr: interrupt taken, value %d (write %d)\n", iv, is) } ->
		os_lock();
		d_step {                     /* LOG: the handler reads the queue's log to learn the fence */
			logged = log_visible(iv);
#ifdef LOG
			if
			:: !logged -> printf("isr: no log entry for write %d (index %d)\n", is, logIdx)
			:: else -> skip
			fi
#endif
		};
		if
		:: logged ->
			os_release_signaled(iv, is);
			iv = 0;
			is = 0;
			store_mv_least(ISR_CPU); /* advance MV past the released waiters */
			os_resample(ISR_CPU)
		:: else ->                   /* no entry visible: no fence to handle */
			iv = 0;
			is = 0
		fi;
		logged = false;
		os_unlock(ISR_CPU)
	od
}

#ifdef CPU_SIGNAL
/* A CPU thread signals the fence once, the value CPU_SIGNAL (higher than the
 * engine's, the same, or lower: a rewind racing the engine's signals), as
 * os_fence_signal_cpu: a seq_cst exchange writes (CV, sequence) to memory,
 * then, if the threshold (MV, read after the exchange) shows a waiter the
 * value may satisfy, it releases under the OS lock against its own write. */
active proctype CpuSignal()
{
	byte sv, ss;

	sv = CPU_SIGNAL;
	d_step {
		CV = sv; CVseq++; ss = CVseq;
		printf("cpu signal: CV = %d visible (write %d)\n", CV, CVseq);
		cv_visible()
	};
	if
	:: MV < sv ->                    /* a waiter it does not see resamples sv itself */
		os_lock();
		os_release_signaled(sv, ss);
		store_mv_least(SIG_CPU);
		os_resample(SIG_CPU);
		os_unlock(SIG_CPU)
	:: else -> skip
	fi;
	sv = 0;
	ss = 0
}
#endif

active proctype DrainCV()
{
end:
	do
	:: d_step { cvFull -> flush_cv() }
	od
}

#ifdef LOG
active proctype DrainLog()
{
end:
	do
	:: d_step { logFull -> flush_log() }
	od
}
#endif

proctype DrainMV(byte k)
{
end:
	do
	:: d_step { mvFull[k] -> flush_mv(k) }
	od
}

active proctype Monitor()
{
	byte i;

	timeout ->
	assert(engineDone && len(irqq) == 0 && !cvFull);
#ifdef LOG
	assert(!logFull);
#endif
	for (i : 0 .. NWAITERS - 1) {
		if                           /* the lost wake-up: value reached (or due), waiter still blocked */
		:: wval[i] != 0 && (wval[i] <= CV || due[i]) && !released[i] ->
			printf("LOST WAKE-UP: waiter %d waits for %d, CV = %d, MV = %d, due %d\n",
			       i, wval[i], CV, MV, due[i]);
			assert(released[i])      /* false here: check.sh tells the properties apart by the text */
		:: else -> skip
		fi
	}
}

init
{
	byte k;

	atomic {
		for (k : 0 .. NCPU - 1) {
			run DrainMV(k)
		}
		for (k : 0 .. NWAITERS - 1) {
			run Waiter(k)
		}
	}
}
