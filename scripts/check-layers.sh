#!/bin/sh
# scripts/check-layers.sh [ROOT] — fail on an include that points up the layers.
#
# Layers, bottom to top (CONTRIBUTING.md "Layers"); a file may include its own
# layer and the ones listed after it:
#
#   lockfree/            lockfree
#   gpu-model/hw/        hw, lockfree
#   gpu-model/os/        os, hw, lockfree
#   gpu-model/runtime/   runtime, os, hw, lockfree
#   src/                 src, lockfree (the harness is generic: no gpu-model)
#   benchmarks/          everything above but tests
#   tests/               anything
#
# and a *_internal.h is included only from its own folder (tests too).
# Includes are the quoted, root-relative ones ("lockfree/ring.h"); system
# headers are not checked.  Prints one line per violation,
# "file:line: includes X (why)", and exits 1 if there is any, 0 otherwise.
# Reads ROOT (default: the tree this script is in); writes nothing.
set -eu

root=${1:-$(dirname "$0")/..}
cd "$root"

# file:line:#include "x" for every quoted include, checked in one awk pass.
find lockfree gpu-model src benchmarks tests -type f \( -name '*.c' -o -name '*.h' -o -name '*.cc' \) \
	2>/dev/null | sort | xargs grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' /dev/null |
awk '
function layer(p) {
	if (p ~ /^lockfree\//)          return "lockfree"
	if (p ~ /^gpu-model\/hw\//)      return "hw"
	if (p ~ /^gpu-model\/os\//)      return "os"
	if (p ~ /^gpu-model\/runtime\//) return "runtime"
	if (p ~ /^src\//)               return "src"
	if (p ~ /^benchmarks\//)        return "benchmarks"
	if (p ~ /^tests\//)             return "tests"
	return ""
}
function dir(p) { sub(/\/[^\/]*$/, "", p); return p }
BEGIN {
	may["lockfree"]   = " lockfree "
	may["hw"]         = " hw lockfree "
	may["os"]         = " os hw lockfree "
	may["runtime"]    = " runtime os hw lockfree "
	may["src"]        = " src lockfree "
	may["benchmarks"] = " benchmarks src runtime os hw lockfree "
	may["tests"]      = " tests benchmarks src runtime os hw lockfree "
}
{
	split($0, a, ":"); f = a[1]; n = a[2]
	inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
	if (inc ~ /_internal\.h$/ && dir(inc) != dir(f)) {
		printf "%s:%s: includes %s (a *_internal.h stays in its folder)\n", f, n, inc; bad = 1; next
	}
	from = layer(f); to = layer(inc)
	if (to != "" && index(may[from], " " to " ") == 0) {
		printf "%s:%s: includes %s (layer %s may not include layer %s)\n", f, n, inc, from, to; bad = 1
	}
}
END {
	if (bad) { print "check-layers: upward includes found (see CONTRIBUTING.md \"Layers\")"; exit 1 }
	print "check-layers: ok, every include points down"
}'
