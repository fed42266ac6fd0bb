#!/usr/bin/env bash
# Check the native fence's CMP/OS interrupt protocol (tests/model/fence.pml)
# exhaustively with spin, one run per variant, in a temporary directory.
#
#   tests/model/check.sh [-v] [-DNAME=VALUE ...]
#     -v         also print the shortest counterexample of each broken variant
#     -D...      extra defines for every variant, e.g. -DNSIG=3 -DNWAITERS=3
#
# Prints one line per variant:
#   model <variant>: verified (N states)
#   model <variant>: counterexample found (as expected)
# and exits 1 if a variant that must verify has an error, or a deliberately
# broken variant verifies (the model would then be too weak to catch it).
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

# name | expectation | defines
variants=(
	"correct|verify|"
	"legacy|verify|-DLEGACY"
	"legacy-no-cmp-barrier|verify|-DLEGACY -DNO_CMP_BARRIER"
	"no-cmp-barrier|counterexample|-DNO_CMP_BARRIER"
	"no-os-barrier|counterexample|-DNO_OS_BARRIER"
	"no-os-resample|counterexample|-DNO_OS_RESAMPLE"
	"rewind|verify|-DREWIND"
	"legacy-rewind|verify|-DLEGACY -DREWIND"
	"release-current|verify|-DRELEASE_CURRENT"
	"rewind-release-current|counterexample|-DREWIND -DRELEASE_CURRENT"
	"legacy-rewind-release-current|counterexample|-DLEGACY -DREWIND -DRELEASE_CURRENT"
)

# build_pan DIR DEFINES... -- generate and compile the verifier in DIR.
# SAFETY: no never claim; PANFLAGS: e.g. -DBFS for shortest trails.
build_pan() {
	local dir=$1; shift
	(cd "$dir" && spin "$@" -a fence.pml >spin.log 2>&1 &&
		$cc -O0 -w -DSAFETY $PANFLAGS -o pan pan.c >>spin.log 2>&1)
}

# show_trail DIR DEFINES... -- replay the trail, printing the model's printf lines.
show_trail() {
	local dir=$1; shift
	(cd "$dir" && spin "$@" -t -T fence.pml 2>&1 |
		sed -n '/^#processes/q;p' | sed 's/^/    /')
}

fail=0
for v in "${variants[@]}"; do
	IFS='|' read -r name expect defs <<<"$v"
	dir="$tmp/$name"
	mkdir -p "$dir" && cp "$tmp"/*.pml "$dir"/
	# shellcheck disable=SC2086  # defs is a word list on purpose
	if ! PANFLAGS=-DNOREDUCE build_pan "$dir" $defs "${extra[@]}"; then
		echo "model $name: ERROR: spin/cc failed"; sed 's/^/    /' "$dir/spin.log"; fail=1; continue
	fi
	out=$(cd "$dir" && ./pan -n 2>&1)
	errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' <<<"$out" | tail -n 1)
	states=$(sed -n 's/^ *\([0-9]*\) states, stored.*/\1/p' <<<"$out" | tail -n 1)
	if [ -z "$errors" ] || grep -q "max search depth too small" <<<"$out"; then
		echo "model $name: ERROR: incomplete search"; printf '%s\n' "$out" | sed 's/^/    /'; fail=1; continue
	fi
	case "$expect:$errors" in
	verify:0)
		echo "model $name: verified ($states states)" ;;
	verify:*)
		echo "model $name: ERROR: protocol violated, spin's trail:"
		grep -E "violated|invalid end" <<<"$out" | sed 's/^/    /'
		# shellcheck disable=SC2086
		show_trail "$dir" $defs "${extra[@]}"
		fail=1 ;;
	counterexample:0)
		echo "model $name: ERROR: broken variant verified ($states states): the model cannot see this bug"
		fail=1 ;;
	counterexample:*)
		echo "model $name: counterexample found (as expected)"
		if [ "$verbose" = 1 ]; then
			# shellcheck disable=SC2086
			rm -f "$dir"/pan* "$dir"/*.trail && PANFLAGS=-DBFS build_pan "$dir" $defs "${extra[@]}" &&
				(cd "$dir" && ./pan -n >/dev/null 2>&1)
			# shellcheck disable=SC2086
			show_trail "$dir" $defs "${extra[@]}"
		fi ;;
	esac
done
exit $fail
