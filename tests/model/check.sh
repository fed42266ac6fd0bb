#!/usr/bin/env bash
# Check the native fence's CMP/OS interrupt protocol (tests/model/fence.pml)
# and the lock-free waiter set with its CPU signalers (tests/model/waitset.pml)
# exhaustively with spin, one run per variant, in a temporary directory.
#
#   tests/model/check.sh [-v] [-DNAME=VALUE ...]
#     -v         also print the shortest counterexample of each broken variant
#     -D...      extra defines for every variant, e.g. -DNSIG=3 -DNWAITERS=3
#
# Prints one line per variant:
#   model <variant>: verified (N states)
#   model <variant>: counterexample found: <property> (as expected)
# and exits 1 if a variant that must verify has an error, or a deliberately
# broken variant verifies (the model would then be too weak to catch it) or
# violates another property than the one listed for it.  The properties
# (fence.pml's header): "lost wake-up" (the Monitor's assert(released[i]), or
# a waiter stuck outside an end state) and "early release" (the assert on
# `seen` in os_release_upto), and waitset.pml's "event unset at signal
# return" (assert(set_at_return)), told apart by pan's message.
set -u
here=$(cd "$(dirname "$0")" && pwd)
verbose=0 extra=()
for a in "$@"; do
	case "$a" in
	-v) verbose=1 ;;
	-D*) extra+=("$a") ;;
	*) echo "usage: $0 [-v] [-DNAME=VALUE ...]" >&2; exit 2 ;;
	esac
done
command -v spin >/dev/null || { echo "model: spin not installed (scripts/install-deps.sh)" >&2; exit 2; }
cc=${CC:-cc}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fb-model.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
cp "$here"/*.pml "$tmp"/

# name | expectation (verify, lost: lost wake-up, early: early release,
# unset: event unset at signal return) | defines | model (default fence.pml)
# The CPU_SIGNAL variants run with one engine signal (NSIG=1): with two, the
# CPU thread multiplies the states by 15 to 30 (5M-16M states, 15-60 s each);
# they verify as well (MODEL_ARGS=-DNSIG=2: the last -D wins).
variants=(
	"correct|verify|"
	"legacy|verify|-DLEGACY"
	"legacy-no-cmp-barrier|verify|-DLEGACY -DNO_CMP_BARRIER"
	"no-cmp-barrier|lost|-DNO_CMP_BARRIER"
	"no-os-barrier|lost|-DNO_OS_BARRIER"
	"no-os-resample|lost|-DNO_OS_RESAMPLE"
	# the optimized payload: the handler learns the fence from the queue's
	# log, whose FirstFreeEntryIndex store needs its own barrier
	"log|verify|-DLOG"
	"log-rewind|verify|-DLOG -DREWIND"
	"log-no-barrier|lost|-DLOG -DNO_LOG_BARRIER"
	"rewind|verify|-DREWIND"
	"legacy-rewind|verify|-DLEGACY -DREWIND"
	"cpu-rewind|verify|-DNSIG=1 -DCPU_SIGNAL=0"
	"legacy-cpu-rewind|verify|-DNSIG=1 -DCPU_SIGNAL=0 -DLEGACY"
	"cpu-signal-rewind|verify|-DNSIG=1 -DCPU_SIGNAL=1 -DREWIND"
	"legacy-cpu-signal-rewind|verify|-DNSIG=1 -DCPU_SIGNAL=1 -DREWIND -DLEGACY"
	"release-current|verify|-DRELEASE_CURRENT"
	"rewind-release-current|lost|-DREWIND -DRELEASE_CURRENT"
	"legacy-rewind-release-current|lost|-DLEGACY -DREWIND -DRELEASE_CURRENT"
	"cpu-rewind-release-current|lost|-DNSIG=1 -DCPU_SIGNAL=0 -DRELEASE_CURRENT"
	"release-max|verify|-DRELEASE_MAX"
	"rewind-release-max|early|-DREWIND -DRELEASE_MAX"
	"legacy-rewind-release-max|early|-DLEGACY -DREWIND -DRELEASE_MAX"
	"cpu-rewind-release-max|early|-DNSIG=1 -DCPU_SIGNAL=0 -DRELEASE_MAX"
	"cpu-signal-rewind-release-max|early|-DNSIG=1 -DCPU_SIGNAL=1 -DREWIND -DRELEASE_MAX"
	# waitset.pml: the lock-free add and the multi-round release with its
	# transient raise; the signalers' raise-sequence check, and without it
	# (TRUSTS_THRESHOLD, the algorithm before it) or without the re-check
	"waitset|verify||waitset.pml"
	"waitset-rewind|verify|-DREWIND|waitset.pml"
	"waitset-trusts-threshold|unset|-DTRUSTS_THRESHOLD|waitset.pml"
	"waitset-trusts-threshold-rewind|lost|-DTRUSTS_THRESHOLD -DREWIND -DLOST_ONLY|waitset.pml"
	"waitset-no-recheck|unset|-DNO_RECHECK|waitset.pml"
)

# violated PAN_OUTPUT -- which property pan's first error is: early, lost or other.
violated() {
	if grep -q '^pan:1: assertion violated .*seen\[' <<<"$1"; then
		echo early
	elif grep -q '^pan:1: assertion violated set_at_return' <<<"$1"; then
		echo unset
	elif grep -qE '^pan:1: (assertion violated released\[|invalid end state)' <<<"$1"; then
		echo lost
	else
		echo other
	fi
}
prop_name() {
	case "$1" in
	early) echo "early release" ;;
	lost) echo "lost wake-up" ;;
	unset) echo "event unset at signal return" ;;
	*) echo "another assertion" ;;
	esac
}

# build_pan DIR MODEL DEFINES... -- generate and compile the verifier in DIR.
# SAFETY: no never claim; PANFLAGS: e.g. -DBFS for shortest trails; PANOPT:
# the verifier's optimization.
build_pan() {
	local dir=$1 model=$2; shift 2
	(cd "$dir" && spin "$@" -a "$model" >spin.log 2>&1 &&
		$cc "$PANOPT" -w -DSAFETY $PANFLAGS -o pan pan.c >>spin.log 2>&1)
}

# show_trail DIR MODEL DEFINES... -- replay the trail, printing the model's printf lines.
show_trail() {
	local dir=$1 model=$2; shift 2
	(cd "$dir" && spin "$@" -t -T "$model" 2>&1 |
		sed -n '/^#processes/q;p' | sed 's/^/    /')
}

fail=0
for v in "${variants[@]}"; do
	IFS='|' read -r name expect defs model <<<"$v"
	model=${model:-fence.pml}
	# fence.pml: no partial-order reduction (its store buffers); waitset.pml
	# is sequentially consistent and needs the reduction (and an optimized
	# verifier: ~9 M states) to stay well under a minute
	reduce=-DNOREDUCE PANOPT=-O0
	[ "$model" = fence.pml ] || { reduce=; PANOPT=-O2; }
	dir="$tmp/$name"
	mkdir -p "$dir" && cp "$tmp"/*.pml "$dir"/
	# shellcheck disable=SC2086  # defs is a word list on purpose
	if ! PANFLAGS=$reduce build_pan "$dir" "$model" $defs "${extra[@]}"; then
		echo "model $name: ERROR: spin/cc failed"; sed 's/^/    /' "$dir/spin.log"; fail=1; continue
	fi
	out=$(cd "$dir" && ./pan -n 2>&1)
	errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' <<<"$out" | tail -n 1)
	states=$(sed -n 's/^ *\([0-9]*\) states, stored.*/\1/p' <<<"$out" | tail -n 1)
	if [ -z "$errors" ] || grep -q "max search depth too small" <<<"$out"; then
		echo "model $name: ERROR: incomplete search"; printf '%s\n' "$out" | sed 's/^/    /'; fail=1; continue
	fi
	got=none
	[ "$errors" = 0 ] || got=$(violated "$out")
	if [ "$expect" = verify ] && [ "$got" = none ]; then
		echo "model $name: verified ($states states)"
	elif [ "$got" = none ]; then
		echo "model $name: ERROR: broken variant verified ($states states): the model cannot see this bug"
		fail=1
	elif [ "$got" != "$expect" ]; then
		echo "model $name: ERROR: $(prop_name "$got") (expected: $expect), spin's trail:"
		grep -E "^pan:1: " <<<"$out" | sed 's/^/    /'
		# shellcheck disable=SC2086
		show_trail "$dir" "$model" $defs "${extra[@]}"
		fail=1
	else
		echo "model $name: counterexample found: $(prop_name "$got") (as expected)"
		if [ "$verbose" = 1 ]; then
			# shellcheck disable=SC2086
			rm -f "$dir"/pan* "$dir"/*.trail && PANFLAGS=-DBFS build_pan "$dir" "$model" $defs "${extra[@]}" &&
				(cd "$dir" && ./pan -n >/dev/null 2>&1)
			# shellcheck disable=SC2086
			show_trail "$dir" "$model" $defs "${extra[@]}"
		fi
	fi
done
exit $fail
