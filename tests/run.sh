#!/usr/bin/env bash
# Run every cmocka test binary of a build tree, one after another, and close
# with one total line ("tests: N passed, N failed, N skipped").  Exit 1 if any failed.
#   tests/run.sh BUILD_DIR
set -u
dir=${1:?usage: tests/run.sh BUILD_DIR}
pass=0 fail=0 skip=0 bad=()
count() { sed -n "s/^\[  $1 *\] \([0-9]*\) test(s).*/\1/p" "$2" | tail -n 1; }
for t in "$dir"/tests/test_*; do
  case "$t" in *.o|*.d) continue;; esac
  [ -x "$t" ] || continue
  log=$(mktemp)
  "$t" >"$log" 2>&1
  rc=$?
  cat "$log"
  p=$(count PASSED "$log"); f=$(count FAILED "$log"); s=$(count SKIPPED "$log")
  ran=$(sed -n 's/^\[==========\] \([0-9]*\) test(s) run.*/\1/p' "$log" | tail -n 1)
  rm -f "$log"
  if [ -z "$ran" ]; then   # crashed or aborted before cmocka's summary
    bad+=("$(basename "$t") (exit $rc, no summary)"); fail=$((fail+1)); continue
  fi
  pass=$((pass+${p:-0})); fail=$((fail+${f:-0})); skip=$((skip+${s:-0}))
  if [ "$rc" -ne 0 ] || [ "${f:-0}" -ne 0 ]; then bad+=("$(basename "$t")"); fi
done
[ ${#bad[@]} -eq 0 ] || echo "failed binaries: ${bad[*]}"
echo "tests: $pass passed, $fail failed, $skip skipped"
[ ${#bad[@]} -eq 0 ]
