/*
 * fence.pml -- the native GPU fence's CMP/OS interrupt protocol, checked
 * exhaustively by spin.  tests/model/check.sh runs every variant below.
 *
 * Seed native-gpu-fence.txt, "Synchronization issues": the CPU lowers
 * MonitoredValue (MV) while the GPU raises CurrentValue (CV); each side
 * publishes its own location and then reads the other's.  That is the
 * store-buffering pattern: without a full barrier on BOTH sides, both reads
 * can miss both writes, the CMP decides "CV <= MV, no interrupt", the OS
 * decides "CV < V, block", and the waiter sleeps forever (a lost wake-up).
 *
 * Processes
 *   Engine     one GPU engine + its CMP: for v = 1..NSIG: write CV := v,
 *              barrier (CMP step 2), read MV, raise an interrupt iff CV > MV
 *              ("Synchronization within the GPU between the engine and CMP");
 *              the interrupt carries v, the value written.  REWIND: then
 *              CV := 0, a lower value signaled right after (the fence is
 *              rewound; seed multi-engine-synchronization).
 *   Waiter(i)  a CPU thread waiting for value V (V chosen nondeterministically
 *              in 1..NSIG, or 0: this thread never waits, so NWAITERS = 2
 *              also covers one waiter): under the OS lock, add itself
 *              to the waiter set and lower MV to (least waited value) - 1,
 *              barrier, resample CV and release whatever CV satisfies
 *              ("Upon return from DxgkDdiUpdateMonitoredValue, the OS
 *              resamples CurrentValue"), then block until released.
 *   ISR        the OS interrupt handler: per interrupt, under the OS lock
 *              (DxgkDdiUpdateMonitoredValue runs at DIRQL, synchronized with
 *              the ISR): release waiters that the interrupt's value or CV
 *              satisfies (the release rule: decided against the value that
 *              was signaled), MV := least remaining - 1 (or MAXV), barrier,
 *              resample CV, release again.
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
 * So the only reorderings left are the ones the barriers exist for.  (Drop
 * the flush at unlock and spin finds a stale MV store from one CPU landing
 * after a newer one from another: MV updates must be ordered by the lock.)
 * The OS stores MV only when it changes, as it calls
 * DxgkDdiUpdateMonitoredValues only when its wait conditions change.
 *
 * Variants (-D on the spin command line):
 *   (none)          correct protocol                      -> must verify
 *   NO_CMP_BARRIER  engine/CMP barrier between CV write and MV read removed
 *                                                         -> counterexample
 *   NO_OS_BARRIER   OS barrier between MV write and CV resample removed
 *                                                         -> counterexample
 *   NO_OS_RESAMPLE  waiter/ISR do not resample CV after changing MV
 *                                                         -> counterexample
 *   LEGACY          legacy monitored fence: always interrupt, no MV test
 *                                                         -> must verify
 *   REWIND          the engine rewinds the fence to 0 after its signals
 *                                                         -> must verify
 *   RELEASE_CURRENT the ISR releases against CV only, ignoring the value the
 *                   interrupt carries (the old rule)      -> verifies alone,
 *                                                  counterexample with REWIND
 *   NSIG, NWAITERS  bounds (default 2 signals, 2 waiters; one engine, one
 *                   fence, waiters never time out)
 *
 * Properties: (1) no lost wake-up: in the quiescent end state no waiter with
 * V <= CV is still blocked, and no waiter is blocked that was due — a value
 * >= V became visible after its registration was complete (the seed: such a
 * wait "will be satisfied regardless of which value remains afterwards")
 * (Monitor's asserts; a waiter stuck in its blocking step is also an invalid
 * end state for pan); (2) no early wake-up: a released waiter's V was
 * reached (CV >= V at some point).  Extra interrupts that release nobody are
 * allowed, as the seed says.
 */

#ifndef NSIG
#define NSIG 2
#endif
#ifndef NWAITERS
#define NWAITERS 2
#endif
#define NCPU    (NWAITERS + 1)   /* CPU store buffers: one per waiter, one for the ISR */
#define ISR_CPU NWAITERS
#define MAXV    255              /* stands for UINT64_MAX: no CPU waiter */

byte CV = 0;                     /* CurrentValue, in memory */
byte MV = MAXV;                  /* MonitoredValue, in memory */

bool cvFull;                     /* the engine's store buffer holds a CV store */
byte cvBuf;
bool mvFull[NCPU];               /* CPU k's store buffer holds an MV store */
byte mvBuf[NCPU];

chan irqq = [NSIG] of { byte }; /* interrupts raised and not yet taken, each with its value */
bool osLock = false;             /* DIRQL: waiter-set/MV changes and the ISR exclude each other */
byte wval[NWAITERS];             /* value waiter i waits for; 0 until chosen */
bool inSet[NWAITERS];            /* waiter i is in the OS waiter set */
bool released[NWAITERS];         /* waiter i's event is set */
bool registered[NWAITERS];       /* ghost: waiter i's registration is complete (OS lock released) */
bool due[NWAITERS];              /* ghost: a value >= V became visible after that */
byte peak = 0;                   /* ghost: the highest CV ever visible */
bool engineDone = false;

byte tj;                         /* scratch for d_steps only, reset to 0 at their end */
byte tm;
byte tk;                         /* scratch of flush_cv (called inside other d_steps) */

/* ---- memory: one-entry store buffers ---- */

/* CV becomes visible: every registered waiter it satisfies is due from now on. */
inline flush_cv()
{
	if
	:: cvFull ->
		CV = cvBuf; cvFull = false;
		printf("memory: CV = %d visible\n", CV);
		if
		:: CV > peak -> peak = CV
		:: else -> skip
		fi;
		for (tk : 0 .. NWAITERS - 1) {
			if
			:: registered[tk] && wval[tk] <= CV -> due[tk] = true
			:: else -> skip
			fi
		}
		tk = 0
	:: else -> skip
	fi
}

inline store_cv(v)
{
	d_step {
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

/* Release every waiter in the set whose value `val` satisfies.  Caller
 * holds osLock. */
inline os_release_upto(val)
{
	d_step {
		for (tj : 0 .. NWAITERS - 1) {
			if
			:: inSet[tj] && wval[tj] <= val ->
				inSet[tj] = false;
				released[tj] = true;
				printf("os: value %d releases waiter %d (V = %d)\n", val, tj, wval[tj])
			:: else -> skip
			fi
		}
		tj = 0
	}
}

/* Read CV from memory (CPUs never store CV) and release what it satisfies. */
inline os_release_satisfied()
{
	os_release_upto(CV)
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
	printf("cpu %d: resample CV = %d\n", k, CV);
	os_release_satisfied();
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
#ifdef LEGACY
		atomic { flush_cv(); irqq ! v } /* legacy: always raise */
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
		:: raise -> atomic { flush_cv(); irqq ! v; raise = false }
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
	:: else -> wval[i] = w
	fi;
	os_lock();
	inSet[i] = true;
	store_mv_least(i);               /* MV := min(MV, V - 1) */
	os_resample(i);
	d_step { os_unlock(i); registered[i] = true };
	printf("waiter %d: waits for %d\n", i, w);
#ifdef REWIND
end_wait:                            /* registered after the rewind: may never be released (Monitor judges) */
#endif
	released[i];                     /* block until the OS sets the event */
	assert(peak >= wval[i]);         /* no early wake-up: V was reached */
done:
	skip
}

active proctype ISR()
{
	byte iv;
end:
	do
	:: atomic { irqq ? iv -> printf("isr: interrupt taken, value %d\n", iv) } ->
		os_lock();
#ifdef RELEASE_CURRENT
		os_release_satisfied();      /* the old rule: the value read now */
#else
		d_step {                     /* the rule: the value signaled, or CV if higher */
			if
			:: CV > iv -> iv = CV
			:: else -> skip
			fi
		};
		os_release_upto(iv);
		iv = 0;
#endif
		store_mv_least(ISR_CPU);     /* advance MV past the released waiters */
		os_resample(ISR_CPU);
		os_unlock(ISR_CPU)
	od
}

active proctype DrainCV()
{
end:
	do
	:: d_step { cvFull -> flush_cv() }
	od
}

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
	for (i : 0 .. NWAITERS - 1) {
		if                           /* the lost wake-up: value reached (or due), waiter still blocked */
		:: wval[i] != 0 && (wval[i] <= CV || due[i]) && !released[i] ->
			printf("LOST WAKE-UP: waiter %d waits for %d, CV = %d, MV = %d, due %d\n",
			       i, wval[i], CV, MV, due[i]);
			assert(false)
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
