#!/usr/bin/python3
"""scripts/check-reference.py FENCEBENCH MANPAGE ROOT — fail on a reference that lags the binary.

What the binary knows, asked of it:
  commands   the command words of `--help` (the harness's and the program's own)
  options    every long option `--help` names (--set, --grid, ...)
  scenarios  the first word of each line of `list`
Each must appear in the manual page MANPAGE (the roff `make` writes,
build/fencebench.1, its escapes undone) and in the user's documents under
ROOT (README.md and docs/*.md): a command as "fencebench WORD", an option as
itself, a scenario as `NAME`, after "run ", "sweep " or "help ", or as the
manual page's subsection (.SS NAME).

Prints "MANPAGE|guide: <kind> <name> (missing)" per problem and a closing
line; exits 1 on any problem, 2 when the binary or a file cannot be read, 0
otherwise.  Standard library only.  tests/test_docs.c runs it on this tree and
on planted ones.
"""

import glob
import os
import re
import subprocess
import sys

OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")


def ask(binary, *args):
    r = subprocess.run([binary, *args], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise OSError(f"{binary} {' '.join(args)} exits {r.returncode}")
    return r.stdout


def known(binary):
    usage = ask(binary, "--help")
    cmds, inside = [], False
    for line in usage.split("\n"):
        if line and not line.startswith(" "):
            inside = "commands" in line
        elif inside and line.startswith("  ") and not line.startswith(("   ", "  -")):
            if (w := line.split()[0]) not in cmds:
                cmds.append(w)
    opts = sorted(set(OPTION.findall(usage)))
    scenarios = [line.split()[0] for line in ask(binary, "list").split("\n") if line.strip()]
    return cmds, opts, scenarios


def in_text(kind, name, text):
    if kind == "command":
        return re.search(r"fencebench " + re.escape(name) + r"(?![\w-])", text) is not None
    if kind == "option":
        return re.search(re.escape(name) + r"(?![\w-])", text) is not None
    return re.search(r"(`|run |sweep |help |^\.SS )" + re.escape(name) + r"(?![\w-])", text, re.M) is not None


def main(argv):
    if len(argv) != 4:
        sys.stderr.write("usage: scripts/check-reference.py FENCEBENCH MANPAGE ROOT\n")
        return 2
    binary, manpage, root = argv[1:]
    try:
        cmds, opts, scenarios = known(binary)
        with open(manpage, encoding="utf-8") as f:
            man = f.read().replace("\\-", "-").replace("\\e", "\\").replace("\\&", "")
        guide = ""
        for path in [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md"))):
            with open(path, encoding="utf-8") as f:
                guide += f.read() + "\n"
    except (OSError, subprocess.SubprocessError) as e:
        sys.stderr.write(f"check-reference: {e}\n")
        return 2
    problems = []
    for kind, names in (("command", cmds), ("option", opts), ("scenario", scenarios)):
        for name in names:
            for where, text in ((manpage, man), ("guide", guide)):
                if not in_text(kind, name, text):
                    problems.append(f"{where}: {kind} {name} (missing)")
    for p in problems:
        print(p)
    if problems:
        print(f"check-reference: {len(problems)} problem(s)")
        return 1
    print(f"check-reference: ok ({len(cmds)} commands, {len(opts)} options, {len(scenarios)} scenarios)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
