#!/usr/bin/python3
"""scripts/run-docs.py [ROOT] — run every command the README and the guide show; fail when one fails.

Every fenced block marked `sh` in ROOT/README.md and ROOT/docs/*.md is run
with bash -e (-o pipefail), the blocks of one page in order in one scratch
folder (so a page's later block reads what an earlier one wrote), where
build/, benchmarks/, scripts/ and results/ are links to ROOT's.  Blocks
marked otherwise (```text, or unmarked: output shown) are not run.

Shortened, so that the whole runs in seconds (each rewrite is printed):
  --iterations N  -> at most 200        --duration D -> 0.05
  neither (but headline)                + --iterations 200
  run/sweep headline, analogs           + small counts (one pass each: SMALL)
  --target-ci                           + --max-time 1s
  make report ...                       make -C ROOT report ... DRY_RUN=1 ALLOW_DIRTY=1 (test_plot runs QUICK end to end)
Tools a block names that are not on the machine: sbatch is stood in for by
a shim that runs the --wrap command once per --array index with
SLURM_ARRAY_TASK_ID set; a block that needs perf runs only where perf can
count (kernel.perf_event_paranoid, a PMU), else it is reported skipped.

Prints one line per block ("page:line: ok|FAILED|skipped (why)") and a closing
line; exits 1 when a block failed, 0 otherwise.  Standard library only.
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

FENCE = re.compile(r"^```(\S*)\s*$")
LINKS = ("build", "benchmarks", "scripts", "results")
SBATCH = r"""#!/bin/bash
# a stand-in for Slurm's sbatch: --array=A-B --wrap 'CMD' runs CMD per index
arr= wrap=
while [ $# -gt 0 ]; do
  case "$1" in
    --array=*) arr=${1#--array=} ;;
    --wrap) shift; wrap=$1 ;;
    --wrap=*) wrap=${1#--wrap=} ;;
  esac
  shift
done
for ((i=${arr%-*}; i<=${arr#*-}; i++)); do SLURM_ARRAY_TASK_ID=$i bash -ec "$wrap" || exit $?; done
"""
# scenarios measured in one pass (1 iteration by default): smaller counts instead
SMALL = {"headline": " --set signals=500 --set waits=100 --set rate_signals=100", "analogs": " --set rounds=50"}


def blocks(path):
    """(first line number, text) of each ```sh block of path."""
    out, cur, start = [], None, 0
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = FENCE.match(line)
            if m and cur is None:
                cur, start = ([] if m.group(1) == "sh" else False), n
            elif m:
                if cur is not False:
                    out.append((start, "".join(cur)))
                cur = None
            elif cur:
                cur.append(line)
            elif cur is not None and cur is not False:
                cur.append(line)
    return out


def shorten(text):
    text = text.replace("\\\n", " ")   # one command per line
    lines = []
    for line in text.split("\n"):
        line = re.sub(r"--iterations (\d+)", lambda m: f"--iterations {min(int(m.group(1)), 200)}", line)
        line = re.sub(r"--duration \S+", "--duration 0.05", line)
        m = re.search(r"fencebench (run|sweep) (\S+)", line)
        if m and m.group(2) in SMALL:
            line = line.replace(m.group(0), m.group(0) + SMALL[m.group(2)], 1)
        elif m and "--iterations" not in line and "--duration" not in line:
            line = line.replace(m.group(0), m.group(0) + " --iterations 200", 1)
        if "--target-ci" in line and "--max-time" not in line:
            line = re.sub(r"(--target-ci \S+)", r"\1 --max-time 1s", line)
        if re.match(r"\s*make report\b", line):
            line = line.split("#")[0].rstrip().replace("make", "make -s -C \"$FB_ROOT\"", 1) + " DRY_RUN=1 ALLOW_DIRTY=1"
        lines.append(line)
    return "\n".join(lines)


def perf_can_count():
    if not shutil.which("perf"):
        return "perf is not installed"
    r = subprocess.run(["perf", "stat", "-e", "task-clock", "--", "true"], capture_output=True, text=True)
    return None if r.returncode == 0 else "perf stat cannot count here"


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    pages = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    failed = ran = 0
    with tempfile.TemporaryDirectory(prefix="fb-docs.") as tmp:
        bindir = os.path.join(tmp, "bin")
        os.mkdir(bindir)
        if not shutil.which("sbatch"):
            with open(os.path.join(bindir, "sbatch"), "w") as f:
                f.write(SBATCH)
            os.chmod(os.path.join(bindir, "sbatch"), 0o755)
        env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""), FB_ROOT=root)
        for page in pages:
            rel = os.path.relpath(page, root)
            work = os.path.join(tmp, rel.replace("/", "_"))
            os.mkdir(work)
            for name in LINKS:
                os.symlink(os.path.join(root, name), os.path.join(work, name))
            for n, text in blocks(page):
                script = shorten(text)
                if re.search(r"(^|\s)perf stat\b", script) and (why := perf_can_count()):
                    print(f"{rel}:{n}: skipped ({why})")
                    continue
                ran += 1
                t0 = time.monotonic()
                r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=work, env=env,
                                   stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
                if r.returncode:
                    failed += 1
                    tail = "\n".join((r.stdout + r.stderr).strip().split("\n")[-8:])
                    print(f"{rel}:{n}: FAILED (exit {r.returncode})\n{script}\n--- last lines:\n{tail}")
                else:
                    print(f"{rel}:{n}: ok ({time.monotonic() - t0:.1f} s)")
    if failed:
        print(f"run-docs: {failed} of {ran} block(s) failed")
        return 1
    print(f"run-docs: ok ({ran} blocks)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
