#!/usr/bin/env bash
# Run a command with N busy loops sharing the CPUs, the load CI must
# survive without a flake (CONTRIBUTING.md, "Running the suite under load").
#   tests/under-load.sh N COMMAND [ARGS...]
# The loops are plain shell spins at normal priority; they are killed when
# the command ends, however it ends.  Exit status: the command's.
set -u
n=${1:?usage: tests/under-load.sh N COMMAND [ARGS...]}
shift
[ "$#" -gt 0 ] || { echo "usage: tests/under-load.sh N COMMAND [ARGS...]" >&2; exit 2; }
case "$n" in ''|*[!0-9]*) echo "under-load: N must be a number of busy loops, got '$n'" >&2; exit 2;; esac
pids=()
stop() { [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null; }
trap stop EXIT
trap 'exit 130' INT TERM
for ((i = 0; i < n; i++)); do
	( while :; do :; done ) &
	pids+=($!)
done
echo "under-load: $n busy loops running (pids ${pids[*]})"
"$@"
