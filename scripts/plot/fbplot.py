#!/usr/bin/python3
"""fbplot — figures, report.md and report.html from fencebench JSON results.

    /usr/bin/python3 scripts/plot/fbplot.py -o DIR RESULT.json...
    /usr/bin/python3 scripts/plot/fbplot.py -o DIR --only NAME[,NAME] RESULT.json...
    /usr/bin/python3 scripts/plot/fbplot.py --index results
    /usr/bin/python3 scripts/plot/fbplot.py --list-figures

Reads the files `fencebench run|sweep ... --format json --out FILE` writes
(Google Benchmark's schema) and writes into DIR, for every figure of the
catalog (scripts/plot/fbcatalog.py) whose scenario is among the inputs,
NAME.png and NAME.svg, then

    report.md     how it was made (revision, tree, flags, command), the headline
                  table, each figure with two sentences reading it from this
                  run's numbers, the machine and date, the JSON it came from and
                  the commands that reproduce it; then the detail tables
    report.html   the same, self-contained: figures inline as SVG, no network
    figures.json  what was drawn: files, sources, axis labels, the readings

A report is refused (exit 2) when an input was built from a modified tree
(git_rev "...-dirty") or an unknown revision, unless --allow-dirty; the
report then says so in its header.  --only draws the named figures and
no report.  --index DIR rewrites DIR/README.md, the index of the published
runs in DIR's subdirectories.  --list-figures prints the catalog: every run
of `make report`, every figure and the scenarios it reads, and the scenarios
deliberately not drawn.

Every input is validated before anything is drawn.  Outputs are written to a
temporary directory and renamed into DIR only when all of them are complete
(report.md last), so a failure leaves DIR as it was.

Exit status: 0 ok; 1 could not draw or write (matplotlib missing, DIR not
writable, a figure failed); 2 bad command line, a missing or malformed input
file, or a modified tree.  Every error is one line on stderr naming the bad
input.

Use Debian's /usr/bin/python3: python3-matplotlib is installed for it, not for
a pyenv or venv python3 earlier in PATH.
"""

import argparse
import json
import os
import shlex
import shutil
import sys
import tempfile
import traceback

sys.dont_write_bytecode = True           # leave no __pycache__ in scripts/plot

import fbcatalog                         # noqa: E402
import fbdoc                             # noqa: E402
import fbindex                           # noqa: E402
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
                description="Figures (PNG, SVG), report.md and report.html from fencebench JSON results.",
                epilog=__doc__.split("\n\n", 2)[2])
    ap.add_argument("results", nargs="*", metavar="RESULT.json",
                    help="fencebench --format json output files (run or sweep)")
    ap.add_argument("-o", "--out-dir", default=".", metavar="DIR",
                    help="where the figures and the report go (created if missing; default .)")
    ap.add_argument("--formats", default="png,svg", metavar="LIST",
                    help="figure formats, comma-separated, of: png, svg (default png,svg)")
    ap.add_argument("--no-report", action="store_true", help="figures only, no report")
    ap.add_argument("--only", metavar="NAMES",
                    help="draw only these figures (comma-separated catalog names), no report")
    ap.add_argument("--reproduce", metavar="CMD",
                    help="the one command that regenerates all of it, shown in the report's header "
                         "and first in its Reproduce section (e.g. 'make report')")
    ap.add_argument("--note", action="append", default=[], metavar="TEXT",
                    help="a line for the report's 'How this report was made' (repeatable)")
    ap.add_argument("--allow-dirty", action="store_true",
                    help="write a report from results of a modified tree (it says so in its header)")
    ap.add_argument("--tree-modified", action="store_true",
                    help="say in the header that the source tree had uncommitted changes (fbrun passes it)")
    ap.add_argument("--index", metavar="DIR",
                    help="rewrite DIR/README.md, the index of the published runs in DIR, and exit")
    ap.add_argument("--list-figures", action="store_true",
                    help="print the catalog (runs, figures, scenarios not drawn) and exit")
    args = ap.parse_args(argv)
    fmts = [f.strip().lower() for f in args.formats.split(",") if f.strip()]
    bad = [f for f in fmts if f not in FORMATS]
    if bad or not fmts:
        raise UsageError(f"--formats {args.formats!r}: give png and/or svg (see --help)")
    args.formats = list(dict.fromkeys(fmts))
    args.specs = fbcatalog.FIGURES
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if fbcatalog.figure(n) is None]
        if unknown or not names:
            raise UsageError(f"--only {args.only!r}: no figure called {', '.join(unknown) or '(none)'}; "
                             "--list-figures names them")
        args.specs = [fbcatalog.figure(n) for n in names]
    if not args.results and not (args.index or args.list_figures):
        raise UsageError("give at least one RESULT.json (see --help)")
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


def _where(e):
    """file:line of the innermost frame of exception e."""
    tb = traceback.extract_tb(e.__traceback__)
    return f"{os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else "?"


def draw(files, args, stage):
    """Render the selected figures into the staging directory: ([fbreport.Drawn], {name: axes})."""
    fbfigures = import_figures()
    done, axes = [], {}
    for spec in args.specs:
        sources = [f for f in files if f.scenario in spec.scenarios]
        try:
            fig = fbfigures.draw(spec, files) if sources else None
        except Exception as e:          # a bug in a figure: name it, keep the run's JSON
            raise RuntimeError(f"figure {spec.name}: {type(e).__name__}: {e} ({_where(e)})") from None
        if fig is None:
            why = ("no run among the inputs holds its data" if sources else
                   f"no {' or '.join(spec.scenarios)} result among the inputs")
            done.append(fbreport.Drawn(spec, {}, why, None, sources))
            continue
        paths = {}
        try:
            axes[spec.name] = fbfigures.describe(fig)
            for fmt in args.formats:
                meta = {"Date": None} if fmt == "svg" else {}
                paths[fmt] = stage.path(f"{spec.name}.{fmt}")
                fig.savefig(paths[fmt], format=fmt, metadata=meta)
        finally:
            fbfigures.close(fig)
        done.append(fbreport.Drawn(spec, paths, "", spec.read(files), sources))
    return done, axes


def check_clean(files, allow_dirty):
    """InputError naming the first input built from a modified tree, unless allowed."""
    bad = fbreport.modified_inputs(files)
    if bad and not allow_dirty:
        rev = bad[0].context.get("git_rev") or "unknown"
        what = "outside a git checkout" if rev == "unknown" else "from a modified tree"
        raise fbresults.InputError(
            f"{bad[0].path}: built {what} (git {rev}): a published report must name a clean revision; "
            "commit first, or allow it with --allow-dirty (make report ALLOW_DIRTY=1)")


def _script():
    """This script's path, relative to the working directory when below it."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fbplot.py")
    rel = os.path.relpath(here)
    return here if rel.startswith("..") else rel


def _python():
    same = os.path.realpath(sys.executable) == os.path.realpath("/usr/bin/python3")
    return "/usr/bin/python3" if same else sys.executable


def plot_command(argv):
    return shlex.join([_python(), _script()] + argv)


def manifest(drawn, axes):
    return json.dumps({"figures": [
        {"name": d.spec.name, "title": d.spec.title, "scenarios": list(d.spec.scenarios),
         "drawn": bool(d.paths), "why": d.why, "files": [os.path.basename(p) for p in d.paths.values()],
         "sources": [os.path.basename(f.path) for f in d.sources], "axes": axes.get(d.spec.name, []),
         "reading": list(d.reading) if d.reading else []} for d in drawn]}, indent=1) + "\n"


def write_report(files, drawn, axes, args, argv, stage):
    opts = fbreport.Options(formats=args.formats, reproduce=args.reproduce, plot_cmd=plot_command(argv),
                            plot_base=shlex.join([_python(), _script()]), out_dir=args.out_dir,
                            notes=args.note, tree_modified=args.tree_modified)
    blocks = fbreport.document(files, drawn, opts)
    stage.write_text("figures.json", manifest(drawn, axes))
    stage.write_text("report.html", fbdoc.to_html(blocks, fbreport.TITLE))
    stage.write_text("report.md", fbdoc.to_markdown(blocks))


def run(argv):
    args = parse_args(argv)
    if args.list_figures:
        print("\n".join(fbcatalog.listing()))
        return EXIT_OK
    if args.index:
        if not os.path.isdir(args.index):
            raise UsageError(f"--index {args.index}: not a directory")
        print(f"{PROG}: wrote {fbindex.write(args.index)}")
        return EXIT_OK
    files = fbresults.load_all(args.results)
    report = not (args.no_report or args.only)
    if report:
        check_clean(files, args.allow_dirty)
    stage = Staging(args.out_dir)
    try:
        drawn, axes = draw(files, args, stage)
        if report:
            write_report(files, drawn, axes, args, argv, stage)
        stage.commit()
    except BaseException:
        stage.abort()
        raise
    names = [d.spec.name for d in drawn if d.paths]
    print(f"{PROG}: wrote {len(names)} figure(s) ({', '.join(names) or 'none'}) as "
          f"{', '.join(args.formats)}" + (" and report.md, report.html" if report else "") +
          f" into {args.out_dir}")
    for d in drawn:
        if not d.paths and (args.only or d.sources):
            print(f"{PROG}: note: {d.spec.name} not drawn: {d.why}", file=sys.stderr)
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
