#!/usr/bin/env bash
# scripts/check-portable.sh [--libs-only] BINARY [GLIBC_MAX]
#
# Check that BINARY (make portable: build/fencebench-portable) needs nothing
# but glibc and runs as one copied file (mk/portable.mk):
#   1. `ldd` names only glibc's parts (libc, libm, libpthread, libdl) and the
#      dynamic loader (and the kernel's vDSO): any other library fails, named;
#   2. the newest GLIBC_x.y symbol version it needs (objdump -T) is printed,
#      and is at most GLIBC_MAX when given (the figure the guide states);
#   3. copied alone into an empty folder and run from there (no tree beside
#      it, none under the working directory): `list`, `help`, `help run`, a
#      short `analogs` run under the shipped profile h200-pcie5, and a short
#      `replay` of the shipped frame graph, each within 120 s.
# --libs-only: step 1 only (mk/portable.mk runs it on the dynamic build,
# which it must refuse).  Prints one line per step; exits 1 naming the first
# failure, 0 when all pass.  Writes only a temporary folder, removed on exit.
set -euo pipefail

libs_only=0
if [ "${1:-}" = --libs-only ]; then libs_only=1; shift; fi
bin=${1:?usage: check-portable.sh [--libs-only] BINARY [GLIBC_MAX]}
max=${2:-}
fail() { echo "check-portable: $bin: $*" >&2; exit 1; }
[ -x "$bin" ] || fail "not found or not executable"

# 1. the shared libraries it loads: glibc's and the loader only
glibc='^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|ld-linux-x86-64\.so\.2)$'
libs=$(ldd "$bin" 2>&1) || fail "ldd failed: $libs"
other=$(printf '%s\n' "$libs" | awk 'NF { print $1 }' | sed 's#.*/##' | grep -Ev "$glibc" || true)
[ -z "$other" ] || fail "needs libraries beyond glibc's: $(echo $other)"
echo "check-portable: $bin: links only glibc ($(printf '%s\n' "$libs" | awk 'NF { print $1 }' | sed 's#.*/##' | sort | xargs))"
[ "$libs_only" = 1 ] && exit 0

# 2. the newest glibc symbol version
need=$(objdump -T "$bin" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1)
[ -n "$need" ] || fail "objdump -T found no GLIBC_ symbol version"
if [ -n "$max" ] && [ "$(printf '%s\n%s\n' "$need" "$max" | sort -V | tail -n 1)" != "$max" ]; then
	fail "needs GLIBC_$need, newer than GLIBC_$max (the guide's figure: update docs/comparing.md and PORTABLE_GLIBC_MAX)"
fi
echo "check-portable: $bin: needs glibc $need or newer"

# 3. one copied file, run from an empty folder
tmp=$(mktemp -d /tmp/fb_portable.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/box"
cp "$bin" "$tmp/box/fencebench"
run() {   # run WHAT ARGS...: in $tmp/box, no environment but PATH and HOME
	local what=$1; shift
	if ! (cd "$tmp/box" && env -i PATH=/usr/bin:/bin HOME="$tmp" timeout 120 ./fencebench "$@") \
		>"$tmp/out" 2>&1; then
		tail -n 5 "$tmp/out" >&2
		fail "copied alone, '$what' failed: fencebench $*"
	fi
}
expect() {   # expect WHAT TEXT: the last run's output holds TEXT
	grep -qF -- "$2" "$tmp/out" || { tail -n 5 "$tmp/out" >&2; fail "copied alone, '$1' did not print '$2'"; }
}
run list list;                expect list headline
run help help;                expect help calibrate
run 'help analogs' help analogs; expect 'help analogs' h200-pcie5
run 'analogs under h200-pcie5' run analogs --set profile=h200-pcie5 --set rounds=50
expect 'analogs under h200-pcie5' h200-pcie5
run 'replay of the shipped frame graph' run replay --duration 0.05
expect 'replay of the shipped frame graph' replay
echo "check-portable: $bin: copied alone, runs list, help, analogs under h200-pcie5 and the shipped replay"
