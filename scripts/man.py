#!/usr/bin/python3
"""scripts/man.py FENCEBENCH — write fencebench(1) in roff on stdout, from the binary itself.

Every section is the binary's own text, so the page cannot drift from it:
  SYNOPSIS and COMMANDS   `FENCEBENCH help COMMAND` for every command of
                          `--help` (the harness's and the program's own)
  OPTIONS and the rest    `--help` as it prints it
  SCENARIOS               `FENCEBENCH list`, then `help SCENARIO` for each
Text is set verbatim (.nf), escaped for roff.  `make` writes build/fencebench.1
(`man -l build/fencebench.1`).  Exits 1, writing nothing, when the binary fails.
Standard library only.
"""

import subprocess
import sys


def out(binary, *args):
    r = subprocess.run([binary, *args], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        sys.stderr.write(f"man.py: {binary} {' '.join(args)} exits {r.returncode}: {r.stderr}")
        sys.exit(1)
    return r.stdout


def roff(text):
    """Verbatim lines, safe from roff: backslashes escaped, no line read as a request."""
    lines = []
    for line in text.rstrip("\n").split("\n"):
        line = line.replace("\\", "\\e").replace("-", "\\-")
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return ".nf\n" + "\n".join(lines) + "\n.fi\n"


def commands(usage):
    """The command words of --help: the first word of each line indented by two under a 'commands' heading."""
    words, inside = [], False
    for line in usage.split("\n"):
        if line and not line.startswith(" "):
            inside = "commands" in line
        elif inside and line.startswith("  ") and not line.startswith("   ") and not line.startswith("  -"):
            w = line.split()[0]
            if w not in words:
                words.append(w)
    return words


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: scripts/man.py FENCEBENCH\n")
        return 2
    binary = argv[1]
    usage = out(binary, "--help")
    version = out(binary, "--version").strip()
    scenarios = [line.split()[0] for line in out(binary, "list").split("\n") if line.strip()]
    page = [f'.TH FENCEBENCH 1 "" "{version}" "User Commands"\n',
            ".SH NAME\nfencebench \\- native GPU fence vs legacy monitored fence, measured\n",
            ".SH SYNOPSIS\n"]
    helps = {w: out(binary, "help", w) for w in commands(usage)}
    for w, text in helps.items():
        page.append(roff("\n".join(l.replace("usage: ", "", 1).lstrip() for l in text.split("\n")
                                   if l.startswith(("usage: ", "       fencebench")))))
    page.append(".SH DESCRIPTION\n" + roff(usage))
    page.append(".SH COMMANDS\n")
    for w, text in helps.items():
        page.append(f".SS {w}\n" + roff(text))
    page.append(".SH SCENARIOS\n" + roff(out(binary, "list")))
    for s in scenarios:
        page.append(f".SS {s}\n" + roff(out(binary, "help", s)))
    page.append(".SH SEE ALSO\nThe user guide, docs/README.md in the source tree; perf-stat(1).\n")
    sys.stdout.write("".join(page))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
