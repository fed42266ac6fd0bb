# mk/model.mk -- the spin model of the native fence's CMP/OS interrupt protocol
# (tests/model/fence.pml).  Two properties: no lost wake-up (a wait outstanding
# when a satisfying value was written is released, whatever value remains) and
# no early release (a wait is released only by a value the fence had at or
# after its registration read: never by one a rewind superseded before it, as
# an interrupt still in flight for a pre-rewind value; issue 18, the write
# sequence rule).  Variants: correct, LEGACY, REWIND, CPU_SIGNAL (a CPU rewind
# or signal racing the engine) must verify; NO_CMP_BARRIER, NO_OS_BARRIER,
# NO_OS_RESAMPLE and RELEASE_CURRENT (+ a rewind) must lose a wake-up;
# RELEASE_MAX (+ a rewind: max(value signaled, CV), no sequence check, the
# rule before issue 18) must release early.  tests/model/waitset.pml models the
# waiter set as the code runs it (lock-free add: push + CAS-min or nothing;
# release in rounds with its transient raise and stack re-check; CPU
# signalers that check the raise sequence): it must verify with and without
# a rewind, and must show a signal returning with its waiter's event unset
# (and, with a rewind, a lost wake-up) when signalers trust the threshold
# alone, the algorithm before the raise sequence.  ~1 min in all (the
# waitset rewind variant: ~9 M states, ~1 GB, 25 s on a quiet machine).
#   make check-model                 all variants (correct must verify, broken must fail
#                                    with the property listed for them)
#   make check-model MODEL_ARGS=-v   also print each broken variant's shortest counterexample
#   make check-model MODEL_ARGS='-DNSIG=3 -DNWAITERS=3'   larger bounds (slower)
# Runs in a temporary directory; leaves no pan files in the tree.  `make test` runs it.
MODEL_ARGS ?=

check-model:
	@if command -v spin >/dev/null 2>&1; then \
		tests/model/check.sh $(MODEL_ARGS); \
	else \
		echo "spin not installed: skipping (scripts/install-deps.sh installs it)"; \
	fi

TEST_DEPS += check-model
