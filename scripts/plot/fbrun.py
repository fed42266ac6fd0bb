#!/usr/bin/python3
"""fbrun — what `make report` does: run the standard set of every scenario, then the report.

    /usr/bin/python3 scripts/plot/fbrun.py --fencebench build/fencebench -o results/DATE-HOST
    /usr/bin/python3 scripts/plot/fbrun.py --fencebench build/fencebench -o DIR --quick --allow-dirty
    /usr/bin/python3 scripts/plot/fbrun.py --fencebench build/fencebench -o DIR --dry-run

1. Refuses (exit 2) when the source tree has uncommitted changes to tracked
   files, or is not a git checkout, unless --allow-dirty: a published report
   names the revision that produced it.  Also refuses a fencebench binary
   built from another revision than the tree's (rebuild it: make).
2. Checks every scenario of `fencebench list` has a run and a figure in the
   catalog (scripts/plot/fbcatalog.py); a scenario without one is named in a
   warning and in the report ("Not in this report").
3. Runs the catalog's RUNS (--quick: their QUICK arguments), each as
   `fencebench ARGS --repetitions N EXTRA --format json --out DIR/STEM.json -q`,
   printing each command and its time.  A failed run stops the report.
4. Draws every figure and writes report.md, report.html and figures.json
   (fbplot.py), saying in the header how the run was made: the mode, the
   repetitions, the extra arguments, the wall time and the load average.
5. With --index RESULTS and DIR inside RESULTS (not --quick), rewrites
   RESULTS/README.md, the index of the published runs.

Exit status: 0 ok; 1 a run failed or the report could not be drawn; 2 bad
command line, a modified tree, a stale binary.
"""

import argparse
import os
import shlex
import subprocess
import sys
import time

sys.dont_write_bytecode = True           # leave no __pycache__ in scripts/plot

import fbcatalog                         # noqa: E402
import fbindex                           # noqa: E402
import fbplot                            # noqa: E402

PROG = "fbrun"
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Refused(Exception):
    """The report must not be made (exit 2); str() is one line saying why and what to do."""


class Failed(Exception):
    """A run failed (exit 1)."""


def parse_args(argv):
    ap = fbplot.Parser(prog="fbrun.py", formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Run the standard set of every scenario and write the report.",
                       epilog=__doc__.split("\n\n", 2)[2])
    ap.add_argument("--fencebench", required=True, metavar="PATH", help="the fencebench binary")
    ap.add_argument("-o", "--out-dir", required=True, metavar="DIR", help="where the JSON and report go")
    ap.add_argument("--quick", action="store_true",
                    help="fewer points and iterations, one repetition: the same figures in about a minute")
    ap.add_argument("--repetitions", type=int, metavar="N",
                    help="repetitions of every run, the median shown (default 3; 1 with --quick)")
    ap.add_argument("--args", default="", metavar="'ARGS'",
                    help="extra fencebench arguments for every run, e.g. '--cpus 0-1'")
    ap.add_argument("--allow-dirty", action="store_true",
                    help="report from a modified tree (the report says so)")
    ap.add_argument("--reproduce", metavar="CMD", help="the command to name in the report (make report ...)")
    ap.add_argument("--index", metavar="RESULTS",
                    help="rewrite RESULTS/README.md when DIR is a run directory inside RESULTS")
    ap.add_argument("--source-dir", default=SOURCE, metavar="DIR", help="the source tree (default: this one)")
    ap.add_argument("-n", "--dry-run", action="store_true", help="check the tree, print the runs, run nothing")
    args = ap.parse_args(argv)
    if args.repetitions is None:
        args.repetitions = 1 if args.quick else 3
    if args.repetitions < 1:
        raise fbplot.UsageError(f"--repetitions {args.repetitions}: give 1 or more")
    return args


def _git(src, *argv):
    """(exit status, stdout) of git in src; stdout as printed (porcelain lines start with a space)."""
    r = subprocess.run(["git", "-C", src] + list(argv), capture_output=True, text=True)
    return r.returncode, r.stdout


def head_revision(src):
    """The tree's short revision, or None outside a git checkout."""
    rc, out = _git(src, "rev-parse", "--short", "HEAD")
    return out.strip() if rc == 0 and out.strip() else None


def check_tree(src, allow_dirty):
    """'clean', 'modified' or 'not a git checkout'; Refused when not clean and not allowed."""
    rev = head_revision(src)
    if rev is None:
        if not allow_dirty:
            raise Refused(f"{src}: not a git checkout: a published report must name its revision; "
                          "run from a clone, or allow it with ALLOW_DIRTY=1")
        return "not a git checkout"
    rc, out = _git(src, "status", "--porcelain", "--untracked-files=no")
    changed = [ln[3:] for ln in out.splitlines() if ln.strip()] if rc == 0 else ["(git status failed)"]
    if changed and not allow_dirty:
        shown = ", ".join(changed[:4]) + (f" and {len(changed) - 4} more" if len(changed) > 4 else "")
        raise Refused(f"{src}: uncommitted changes to {shown}: a published report must name a clean "
                      "revision; commit or stash them, or allow it with ALLOW_DIRTY=1")
    return "modified" if changed else "clean"


def check_binary(fencebench, src, allow_dirty):
    """Refused when fencebench was built from another revision than the tree's."""
    try:
        out = subprocess.run([fencebench, "--version"], capture_output=True, text=True).stdout
    except OSError as e:
        raise Failed(f"{fencebench}: cannot run: {e.strerror or e}") from None
    rev, head = out.split("git ")[-1].split(",")[0].strip() if "git " in out else "", head_revision(src)
    if head and rev and not allow_dirty and rev.split("-")[0] != head:
        raise Refused(f"{fencebench} was built from git {rev} but the tree is at {head}: rebuild it (make)")


def scenarios(fencebench):
    """The scenario names `fencebench list` prints."""
    r = subprocess.run([fencebench, "list"], capture_output=True, text=True)
    if r.returncode != 0:
        raise Failed(f"{fencebench} list: exit {r.returncode}: {r.stderr.strip()}")
    return [ln.split()[0] for ln in r.stdout.splitlines() if ln.strip()]


def commands(args):
    """[(RunSpec, argv)] of every run of the standard set."""
    extra = shlex.split(args.args)
    def trace(r):
        return ["--trace", os.path.join(args.out_dir, f"{r.stem}.trace.json")] if r.trace else []
    return [(r, [args.fencebench] + r.args(args.quick) + ["--repetitions", str(args.repetitions)] + extra
             + ["--format", "json", "--out", os.path.join(args.out_dir, f"{r.stem}.json")] + trace(r) + ["-q"])
            for r in fbcatalog.RUNS]


def run_all(plan):
    """Run every command, each printed with its time; the JSON paths; Failed on the first failure."""
    out = []
    for i, (spec, argv) in enumerate(plan, 1):
        print(f"[{i}/{len(plan)}] {shlex.join(argv)}", flush=True)
        t = time.monotonic()
        rc = subprocess.run(argv).returncode
        if rc != 0:
            raise Failed(f"{spec.stem}: fencebench exited {rc}: {shlex.join(argv)}")
        print(f"      {spec.stem}: {time.monotonic() - t:.1f} s", flush=True)
        out.append(argv[argv.index("--out") + 1])
    return out


def _minutes(s):
    return f"{int(s // 60)} min {s % 60:.0f} s" if s >= 60 else f"{s:.1f} s"


def notes(args, tree, took, load):
    mode = ("QUICK=1: fewer points and iterations, to check the tool; not for publishing" if args.quick
            else "the standard set of every scenario")
    out = [mode, f"{args.repetitions} repetition(s) of every run" +
           (" (the median shown)" if args.repetitions > 1 else "")]
    if args.args:
        out.append(f"extra fencebench arguments: `{args.args}`")
    if tree != "clean":
        out.append(f"source tree: {tree}")
    out.append(f"the runs took {_minutes(took)}; load average before and after: "
               f"{load[0]:.2f} and {load[1]:.2f}")
    return out


def in_results(out_dir, results):
    return os.path.realpath(os.path.dirname(os.path.abspath(out_dir))) == os.path.realpath(results)


def main(argv):
    try:
        args = parse_args(argv)
        tree = check_tree(args.source_dir, args.allow_dirty)
        plan = commands(args)
        if args.dry_run:
            print("\n".join(shlex.join(a) for _, a in plan))
            return 0
        check_binary(args.fencebench, args.source_dir, args.allow_dirty)
        for s, what in fbcatalog.uncovered(scenarios(args.fencebench)):
            print(f"{PROG}: warning: scenario {s} has no {what} in the report "
                  "(scripts/plot/fbcatalog.py; CONTRIBUTING.md, 'Adding a figure')", file=sys.stderr)
        os.makedirs(args.out_dir, exist_ok=True)
        load0, t0 = os.getloadavg()[0], time.monotonic()
        paths = run_all(plan)
        took, load1 = time.monotonic() - t0, os.getloadavg()[0]
        plot = ["-o", args.out_dir] + [a for n in notes(args, tree, took, (load0, load1)) for a in ("--note", n)]
        plot += (["--reproduce", args.reproduce] if args.reproduce else []) + \
            (["--allow-dirty"] if args.allow_dirty else []) + \
            (["--tree-modified"] if tree != "clean" else []) + paths
        rc = fbplot.main(plot)
        if rc == 0 and args.index and not args.quick and in_results(args.out_dir, args.index):
            print(f"{PROG}: wrote {fbindex.write(args.index)}")
        if rc == 0:
            print(f"{PROG}: {len(paths)} runs in {_minutes(took)}; report: "
                  f"{os.path.join(args.out_dir, 'report.md')} and report.html")
        return rc
    except (fbplot.UsageError, Refused) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except (Failed, OSError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
