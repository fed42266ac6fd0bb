#!/usr/bin/python3
"""fbplot — figures and a Markdown report from fencebench JSON results.

    /usr/bin/python3 scripts/plot/fbplot.py -o DIR RESULT.json...

Reads the files `fencebench run|sweep ... --format json --out FILE` writes
(Google Benchmark's schema) and writes into DIR:

    irq_per_signal.{png,svg}  interrupts per GPU signal vs waited fraction,
                              native vs legacy, suppression annotated
                              (needs an irq-suppression sweep over waited)
    os_power.{png,svg}        OS interrupt-thread wake-ups/s and idle fraction
                              vs waited fraction (same sweep)
    latency.{png,svg}         cpu_wait and gpu_wait p50/p99, native vs legacy,
                              the machine limit as a line (cpu-wait, gpu-wait
                              runs; the headline's latency section otherwise)
    report.md                 machine context, native vs legacy tables with
                              suppression, latencies beside their limits, the
                              figures, the commands that reproduce it

Every input is validated before anything is drawn.  Outputs are written to a
temporary directory and renamed into DIR only when all of them are complete
(report.md last), so a failure leaves DIR as it was.

Exit status: 0 ok; 1 could not draw or write (matplotlib missing, DIR not
writable); 2 bad command line or a missing or malformed input file.  Every
error is one line on stderr naming the bad input.

Use Debian's /usr/bin/python3: python3-matplotlib is installed for it, not for
a pyenv or venv python3 earlier in PATH.
"""

import argparse
import os
import shlex
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True           # leave no __pycache__ in scripts/plot

import fbreport                          # noqa: E402
import fbresults                         # noqa: E402

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
FORMATS = ("png", "svg")
PROG = "fbplot"


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    """argparse, with its errors as one line and exit status 2."""

    def error(self, message):
        raise UsageError(f"{message} (see --help)")


def parse_args(argv):
    ap = Parser(prog="fbplot.py", formatter_class=argparse.RawDescriptionHelpFormatter,
                description="Figures (PNG, SVG) and a Markdown report from fencebench JSON results.",
                epilog=__doc__.split("\n\n", 2)[2])
    ap.add_argument("results", nargs="+", metavar="RESULT.json",
                    help="fencebench --format json output files (run or sweep)")
    ap.add_argument("-o", "--out-dir", default=".", metavar="DIR",
                    help="where the figures and report.md go (created if missing; default .)")
    ap.add_argument("--formats", default="png,svg", metavar="LIST",
                    help="figure formats, comma-separated, of: png, svg (default png,svg)")
    ap.add_argument("--no-report", action="store_true", help="figures only, no report.md")
    ap.add_argument("--reproduce", metavar="CMD",
                    help="the one command that regenerates all of it, shown first in the "
                         "report's Reproduce section (e.g. 'make report')")
    args = ap.parse_args(argv)
    fmts = [f.strip().lower() for f in args.formats.split(",") if f.strip()]
    bad = [f for f in fmts if f not in FORMATS]
    if bad or not fmts:
        raise UsageError(f"--formats {args.formats!r}: give png and/or svg (see --help)")
    args.formats = list(dict.fromkeys(fmts))
    return args


class Staging:
    """Outputs written into a hidden temporary directory inside out_dir, renamed in by commit()."""

    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.created = not os.path.isdir(out_dir)
        try:
            os.makedirs(out_dir, exist_ok=True)
            self.tmp = tempfile.mkdtemp(prefix=".fbplot-", dir=out_dir)
        except OSError as e:
            raise OSError(f"{out_dir}: cannot write the output directory: {e.strerror or e}") from None
        self.names = []

    def path(self, name):
        self.names.append(name)
        return os.path.join(self.tmp, name)

    def write_text(self, name, text):
        with open(self.path(name), "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())

    def commit(self):
        """Rename every output into out_dir, in the order written (the report last)."""
        for name in self.names:
            dst = os.path.join(self.out_dir, name)
            try:
                os.replace(os.path.join(self.tmp, name), dst)
            except OSError as e:
                raise OSError(f"{dst}: cannot write: {e.strerror or e}") from None
        os.rmdir(self.tmp)

    def abort(self):
        shutil.rmtree(self.tmp, ignore_errors=True)
        if self.created:
            try:
                os.rmdir(self.out_dir)      # only when still empty
            except OSError:
                pass


def import_figures():
    try:
        import fbfigures
    except ImportError as e:
        raise RuntimeError(f"{sys.executable} cannot import matplotlib ({e}): install "
                           "python3-matplotlib and run with /usr/bin/python3") from None
    return fbfigures


def draw(files, args, stage):
    """Render every figure into the staging directory; [(name, alt, drawn, why-not)]."""
    fbfigures = import_figures()
    done = []
    for name, fn, alt in fbfigures.FIGURES:
        fig = fn(files)
        if fig is None:
            done.append((name, alt, False, "no run among the inputs holds its data"))
            continue
        try:
            for fmt in args.formats:
                meta = {"Date": None} if fmt == "svg" else {}
                fig.savefig(stage.path(f"{name}.{fmt}"), format=fmt, metadata=meta)
        finally:
            fbfigures.close(fig)
        done.append((name, alt, True, ""))
    return done


def plot_command(argv):
    return shlex.join(["/usr/bin/python3" if os.path.realpath(sys.executable) ==
                       os.path.realpath("/usr/bin/python3") else sys.executable, sys.argv[0]] + argv)


def run(argv):
    args = parse_args(argv)
    files = fbresults.load_all(args.results)
    stage = Staging(args.out_dir)
    try:
        figures = draw(files, args, stage)
        if not args.no_report:
            text = fbreport.render(files, figures, args.formats, args.reproduce, plot_command(argv))
            stage.write_text("report.md", text)
        stage.commit()
    except BaseException:
        stage.abort()
        raise
    drawn = [f[0] for f in figures if f[2]]
    print(f"{PROG}: wrote {len(drawn)} figure(s) ({', '.join(drawn) or 'none'}) as "
          f"{', '.join(args.formats)}" + ("" if args.no_report else " and report.md") +
          f" into {args.out_dir}")
    for name, _, ok, why in figures:
        if not ok:
            print(f"{PROG}: note: {name} not drawn: {why}", file=sys.stderr)
    return EXIT_OK


def main(argv):
    try:
        return run(argv)
    except (UsageError, fbresults.InputError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except (RuntimeError, OSError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return EXIT_FAIL
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; nothing written", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
