/*
 * waitset.pml -- the fence's lock-free waiter set (lockfree/waitset.c) as the
 * code runs it, with the CPU signalers of gpu-model/os/fence.c, checked
 * exhaustively by spin.  tests/model/check.sh runs every variant below.
 *
 * fence.pml checks the CMP/OS barrier protocol with a waiter set changed
 * under one lock.  The code adds without a lock and releases in rounds:
 *   add      push the node (a CAS on the stack head), then lower the
 *            threshold by a CAS-min, or, when it is low enough already,
 *            write nothing (an RMW on another word, `adds`): the add's last
 *            RMW is the wait's registration (os.h, when a wait is outstanding);
 *            then the waiter resamples CurrentValue and, if it is reached,
 *            cancels its node and completes itself;
 *   release  (one consumer at a time, under the fence's release lock) in
 *            rounds: load the threshold (seen), take the whole stack, release
 *            the waiters the write (value, sequence) satisfies, compute the
 *            least value left, publish it by CAS(seen -> least); a failed CAS
 *            runs another round; a CAS that RAISED re-checks the stack and runs
 *            another round if an add pushed meanwhile.  The waiters' events
 *            are set after the publication.  Then the fence's resample loop:
 *            read (CurrentValue, sequence), release against it, and again
 *            while CurrentValue is above the published threshold;
 *   signal   a CPU thread writes (value, next sequence) in one RMW, then
 *            decides whether anyone may wait: the threshold below the value,
 *            or (the fix) the raise sequence odd or changed around the
 *            threshold load; if so it takes the release lock and releases
 *            against its own write, as the consumer.
 * All the code's atomics here are seq_cst, so interleaving (sequential
 * consistency) is the memory model; the consumer's private heap work
 * between its stack exchange and its CAS is one step.
 *
 * Scenario: the fence at 0; waiter 0 (value 1) added before the start;
 * Signaler(1) releases it (the release that raises); waiter 1 (value 2)
 * registers at any moment; Signaler(SIGV) (default 2) signals it; with
 * REWIND, Signaler(0) rewinds the fence at any moment.  Every order.
 *
 * Properties.
 * (1) Set at return (fence.c: a CPU signal "releases what v satisfies
 * itself, before the signal returns"): when a signal of v returns, every
 * waiter registered before its write with value <= v has its event set, or
 * completed itself (assert(set_at_return)).
 * (2) No lost wake-up (os.h, the release rule, half 1): in the end state a
 * waiter that a write after its registration satisfied is released or
 * completed itself, whatever value remains (Monitor: assert(released[1])).
 *
 * Variants (-D on the spin command line):
 *   (none)                  the fix (raise sequence)          -> must verify
 *   REWIND                  + a CPU rewind to 0                -> must verify
 *   TRUSTS_THRESHOLD        signalers trust the threshold alone (the code
 *                           before the raise sequence)         -> not set at return
 *   TRUSTS_THRESHOLD REWIND LOST_ONLY  (property 2 only)       -> lost wake-up
 *   NO_RECHECK              a raising CAS ends the release (no stack re-check)
 *                                                              -> lost wake-up
 * Known limit, not modelled: a GPU signal the CMP judges against a transient
 * raise, overwritten by a rewind before the release's resample
 * (lockfree/waitset.h, "The raise window").
 */

#ifndef SIGV
#define SIGV 2
#endif
#define MAXV    255              /* UINT64_MAX: nobody waits */
#define WAITING 0
#define RELEASED 1
#define CANCELLED 2

byte CV = 0;                     /* CurrentValue */
byte CVseq = 0;                  /* the number of the write CV holds */
byte TH = 0;                     /* the published threshold (MonitoredValue): waiter 0 waits for 1 */
byte stack = 1;                  /* the Treiber stack as the set of pushed nodes (bit i: node i) */
byte heap = 0;                   /* the consumer's private heap (bit i: node i) */
byte raising = 0;                /* the raise sequence: odd while a release that raised may hide an add */
bool lock = false;               /* the fence's release lock */

byte wval[2];                    /* node i's value */
byte wsince[2];                  /* node i's registration epoch (the write its first look read) */
byte wstate[2];                  /* WAITING -> RELEASED | CANCELLED */
bool released[2];                /* ghost: node i's event is set, or it completed itself */
bool registered = false;         /* ghost: waiter 1's add made its last RMW */
bool due = false;                /* ghost: a write >= wval[1] landed after that */

/* One round's private part: take the stack, release what (val, ep)
 * satisfies, compute least.  Caller's locals: done, least, i. */
inline take_release_least(val, ep)
{
	d_step {
		heap = heap | stack;
		stack = 0;
		for (i : 0 .. 1) {
			if
			:: (heap & (1 << i)) && wval[i] <= val && wsince[i] < ep ->
				heap = heap & ~(1 << i);
				if
				:: wstate[i] == WAITING -> wstate[i] = RELEASED; done = done | (1 << i)
				:: else -> skip         /* cancelled: reclaimed */
				fi
			:: else -> skip
			fi
		}
		least = MAXV;
		for (i : 0 .. 1) {
			if
			:: (heap & (1 << i)) && wstate[i] != CANCELLED && wval[i] - 1 < least -> least = wval[i] - 1
			:: else -> skip
			fi
		}
		i = 0
	}
}

/* lf_waitset_release_before(val, ep), every round.  Caller's locals: seen,
 * least, done, open, ok, i. */
inline release_before(val, ep)
{
	open = false;
	done = 0;
	do
	:: seen = TH;                                   /* step 1 */
		take_release_least(val, ep);                /* steps 2, 3 */
		if
		:: least == seen -> break
		:: else -> skip
		fi;
#ifndef TRUSTS_THRESHOLD
		if                                          /* open the raise before the raising CAS */
		:: least > seen && !open -> raising++; open = true
		:: else -> skip
		fi;
#endif
		atomic {                                    /* step 4: CAS(seen -> least) */
			if
			:: TH == seen -> TH = least; ok = true
			:: else -> ok = false
			fi
		}
		if
		:: !ok -> skip                              /* an add lowered: next round */
		:: ok && least < seen -> break
		:: else ->
#ifdef NO_RECHECK
			break
#else
			if                                      /* step 5: re-check the stack */
			:: stack == 0 -> break
			:: else -> skip
			fi
#endif
		fi
	od;
	skip;                                           /* (a break may not jump into a d_step) */
	d_step {                                        /* wake after publishing, then close the raise
	                                                   (one step: a signaler between the two only
	                                                   takes the slow path for nothing) */
		for (i : 0 .. 1) {
			if
			:: done & (1 << i) -> released[i] = true
			:: else -> skip
			fi
		}
		i = 0;
		done = 0;
		if
		:: open -> raising++; open = false
		:: else -> skip
		fi;
		seen = 0;
		least = 0;
		ok = false
	}
}

/* os_fence_release_locked: the write's release, then the resample loop. */
inline release_locked(val, ep)
{
	if                                              /* a rewind to 0 satisfies nobody: */
	:: val > 0 -> release_before(val, ep)           /* its rounds would publish what the */
	:: else -> skip                                 /* resample's rounds publish anyway */
	fi;
	do
	:: d_step { cv = CV; cs = CVseq };
		release_before(cv, cs);
		if                                          /* the threshold, then CurrentValue (one step) */
		:: atomic { TH == MAXV || CV <= TH } -> break
		:: else -> skip                             /* above the published threshold: again */
		fi
	od;
	cv = 0;
	cs = 0
}

proctype Signaler(byte sv)
{
	byte ss, r0, t, seen, least, done, i, cv, cs;
	bool open, ok, slow, regAtWrite, set_at_return;

	d_step {                                        /* the value's RMW, with its number */
		CV = sv; CVseq++; ss = CVseq;
		regAtWrite = registered && sv >= wval[1];
		if
		:: registered && sv >= wval[1] -> due = true
		:: else -> skip
		fi
	};
#ifdef TRUSTS_THRESHOLD
	slow = TH < sv;
#else
	r0 = raising;                                   /* lf_waitset_signal_needs_release */
	t = TH;
	if
	:: t < sv -> slow = true
	:: else -> slow = (r0 & 1) || raising != r0
	fi;
	r0 = 0;
	t = 0;
#endif
	if
	:: slow ->
		atomic { !lock -> lock = true };
		release_locked(sv, ss);
		lock = false
	:: else -> skip
	fi;
	set_at_return = !regAtWrite || released[1];
#ifndef LOST_ONLY
	assert(set_at_return);
#endif
	ss = 0;
	slow = false;
	regAtWrite = false
}

proctype Waiter()
{
	byte t;

	d_step {                                        /* first look */
		if
		:: CV >= 2 -> released[1] = true; wval[1] = MAXV   /* satisfied at once: never waits */
		:: else -> wval[1] = 2; wsince[1] = CVseq
		fi
	};
	if
	:: released[1] -> goto end
	:: else -> skip
	fi;
	stack = stack | 2;                              /* push (the CAS on the head) */
	do                                              /* CAS-min, or the RMW on adds */
	:: t = TH;
		if
		:: t > 1 ->
			atomic {
				if
				:: TH == t -> TH = 1; registered = true; break
				:: else -> skip
				fi
			}
		:: else -> registered = true; break
		fi
	od;
	atomic {                                        /* resample; reached: cancel and complete */
		if
		:: CV >= 2 && wstate[1] == WAITING -> wstate[1] = CANCELLED; released[1] = true
		:: else -> skip
		fi
	};
end:
	skip
}

active proctype Monitor()
{
	timeout ->
	if
	:: due && !released[1] ->
		printf("LOST WAKE-UP: waiter 1 (value 2) due, CV = %d, threshold %d\n", CV, TH);
		assert(released[1])          /* false here: check.sh tells the properties apart by the text */
	:: else -> skip
	fi
}

init
{
	atomic {
		wval[0] = 1;
		run Signaler(1);
		run Waiter();
		run Signaler(SIGV);
#ifdef REWIND
		run Signaler(0);
#endif
	}
}
