#!/usr/bin/env bash
# Install every Debian package fencebench needs; do nothing when all are present.
#   scripts/install-deps.sh          install what is missing (root), or print the command (non-root)
#   scripts/install-deps.sh --check  only report; exit 1 when something is missing
set -euo pipefail

PACKAGES=(
  build-essential clang          # C11 compiler; clang for libFuzzer (tests/fuzz)
  g++                            # the Google Benchmark shim only
  liburcu-dev                    # wfcqueue (MPSC), lfht (handle table), call_rcu
  libjemalloc-dev                # waiter nodes, commands, fence pages
  libpfm4-dev                    # perf event name encoding
  libbenchmark-dev               # micro-benchmarks through src/gbench
  libbenchmark-tools python3-scipy  # compare.py for comparing two runs
  libnuma-dev numactl            # CPU lists, pinning, node-local fence storage
  libcmocka-dev                  # the test framework (Criterion cannot run under TSan: its arena collides with TSan's shadow)
  libjansson-dev                 # JSON results and sweep specs
  python3 python3-matplotlib     # plots and reports (Debian's /usr/bin/python3)
  spin                           # the CMP/OS protocol model (tests/model)
  linux-perf                     # perf stat / perf record on fencebench runs
  parallel                       # GNU parallel: the sweep guide's shard example, run by check-docs
  libvulkan-dev                  # the Vulkan headers and loader: calibrate --api vulkan (opened at run time)
  mesa-vulkan-drivers            # lavapipe, a CPU Vulkan: the Vulkan probe's tests run on it without a GPU
  vulkan-validationlayers        # the Khronos validation layer: the Vulkan tests fail on any message
  glslang-tools                  # glslangValidator: GLSL to SPIR-V for the compute shaders of frame graphs on Vulkan
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "${1:-}" = "--check" ]; then
  echo "fencebench: missing packages: ${missing[*]}" >&2
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "fencebench: missing packages: ${missing[*]}" >&2
  echo "fencebench: run:  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "fencebench: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
