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
 *              ("Synchronization within the GPU between the engine and CMP").
 *   Waiter(i)  a CPU thread waiting for value V (V chosen nondeterministically
 *              in 1..NSIG, or 0: this thread never waits, so NWAITERS = 2
 *              also covers one waiter): under the OS lock, add itself
 *              to the waiter set and lower MV to (least waited value) - 1,
 *              barrier, resample CV and release whatever CV satisfies
 *              ("Upon return from DxgkDdiUpdateMonitoredValue, the OS
 *              resamples CurrentValue"), then block until released.
 *   ISR        the OS interrupt handler: per interrupt, under the OS lock
 *              (DxgkDdiUpdateMonitoredValue runs at DIRQL, synchronized with
 *              the ISR): release waiters CV satisfies, MV := least remaining
 *              - 1 (or MAXV), barrier, resample CV, release again.
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
 *   NSIG, NWAITERS  bounds (default 2 signals, 2 waiters; one engine, one
 *                   fence, waiters never time out)
 *
 * Properties: (1) no lost wake-up: in the quiescent end state no waiter with
 * V <= CV is still blocked (Monitor's assert; a waiter stuck in its blocking
 * step is also an invalid end state for pan); (2) no early wake-up: a
 * released waiter observes CV >= V.  Extra interrupts that release nobody
 * are allowed, as the seed says.
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

byte irq = 0;                    /* interrupts raised and not yet taken by the ISR */
bool osLock = false;             /* DIRQL: waiter-set/MV changes and the ISR exclude each other */
byte wval[NWAITERS];             /* value waiter i waits for; 0 until chosen */
bool inSet[NWAITERS];            /* waiter i is in the OS waiter set */
bool released[NWAITERS];         /* waiter i's event is set */
bool engineDone = false;

byte tj;                         /* scratch for d_steps only, reset to 0 at their end */
byte tm;

/* ---- memory: one-entry store buffers ---- */

inline flush_cv()
{
	if
	:: cvFull ->
		CV = cvBuf; cvFull = false;
		printf("memory: CV = %d visible\n", CV)
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

/* Read CV from memory (CPUs never store CV) and release every waiter in the
 * set whose value it satisfies.  Caller holds osLock. */
inline os_release_satisfied()
{
	d_step {
		for (tj : 0 .. NWAITERS - 1) {
			if
			:: inSet[tj] && wval[tj] <= CV ->
				inSet[tj] = false;
				released[tj] = true;
				printf("os: CV = %d releases waiter %d (V = %d)\n", CV, tj, wval[tj])
			:: else -> skip
			fi
		}
		tj = 0
	}
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
		atomic { flush_cv(); irq++ } /* legacy: always raise */
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
		:: raise -> atomic { flush_cv(); irq++; raise = false }
		:: else -> skip
		fi;
#endif
		v++
	:: else -> break
	od;
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
	os_unlock(i);
	printf("waiter %d: waits for %d\n", i, w);
	released[i];                     /* block until the OS sets the event */
	assert(CV >= wval[i]);           /* no early wake-up */
done:
	skip
}

active proctype ISR()
{
end:
	do
	:: atomic { irq > 0 -> irq--; printf("isr: interrupt taken\n") } ->
		os_lock();
		os_release_satisfied();
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
	assert(engineDone && irq == 0 && !cvFull);
	for (i : 0 .. NWAITERS - 1) {
		if                           /* the lost wake-up: value reached, waiter still blocked */
		:: wval[i] != 0 && wval[i] <= CV && !released[i] ->
			printf("LOST WAKE-UP: waiter %d waits for %d, CV = %d, MV = %d\n",
			       i, wval[i], CV, MV);
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
