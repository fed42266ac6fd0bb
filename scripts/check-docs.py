#!/usr/bin/python3
"""scripts/check-docs.py [ROOT] — fail on a reference that does not resolve in a clone.

A clone of the repository must stand on its own: every document it points a
reader to must be in it.  Checked, over the files git tracks under ROOT
(every file when ROOT is not a git work tree's top):

  links      in every Markdown file, each inline link or image `[t](x)`,
             `![a](x)` and each reference definition `[l]: x`, outside fenced
             code blocks and code spans.  x with a scheme (http:, https:,
             mailto:) is a public address and is not followed; `#anchor`
             stays in the file.  Any other x, its `#fragment` dropped, must
             name a tracked file or a folder holding one, resolved from the
             linking file's folder, never leaving ROOT; an absolute path is
             refused (it names the machine it was written on).
  documents  in every tracked text file, a project document cited by name
             (an upper-case name ending in .md, with or without a folder)
             must be a tracked file at ROOT, in the citing file's folder, or
             at the path given; cited with a section (the name, a comma or
             not, then the section in double quotes), the document must have
             a heading that starts with that text.
  seeds      the design documents are cited by title, through the short
             names of DESIGN.md's seed map (its table's first column): a
             "seed <name>" whose name is not there, a seed's file name
             (`<name>.txt`), or a path into a seed folder outside the
             repository is refused.  DESIGN.md must have the map.

  ledger     tests/seed-requirements.md, when present: each row of its tables
             names a seed of the map, a status (proven, unproven, missing)
             and, when proven, tests as `tests/test_X.c:function`, each a
             function that file defines and hands to cmocka (the binary runs
             it); a row that is not proven gives its reason.  The feature
             table's "seed requirements" row (docs/features.md) must state
             the ledger's counts as "N proven, N built but unproven, N
             missing".

Not checked: results/<run>/ — each is a published run (report.md,
report.html, figures.json) written by the revision it names and kept as it
was published; its text is history, not a link to follow today.
results/README.md, the index `make report` rewrites, is checked.

Prints "file:line: <reference> (<why>)" per problem and a closing line
("check-docs: ok ..." or "check-docs: N problem(s)"); exits 1 on any problem,
2 when ROOT cannot be read, 0 otherwise.  Reads only; standard library only.
tests/test_docs.c runs it on this tree and on planted ones.
"""

import os
import re
import subprocess
import sys

# Written in two pieces so that this file does not match its own patterns.
OUTSIDE = ("../" + "shared", "/work/" + "shared", "shared/" + "seeds")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(\S+)")
DOC = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[A-Z][A-Z0-9_]*\.md)\b")
SEED_CITE = re.compile(r"\bseeds? ([a-z0-9]+(?:-[a-z0-9]+)+)", re.IGNORECASE)
SEED_FILE = re.compile(r"\b([a-z0-9]+(?:-[a-z0-9]+)+)\.txt\b")
SECTION = re.compile(r"((?:[\w.-]+/)*[A-Z][A-Z0-9_]*\.md),? [\"\u201c]([^\"\u201d]+)[\"\u201d]")
HEADING = re.compile(r"^#+\s+(.*?)\s*#*\s*$")
MAP_ROW = re.compile(r"^\|\s*`([a-z0-9-]+)`\s*\|")
LEDGER = "tests/seed-requirements.md"
FEATURES = "docs/features.md"   # the feature table: its "seed requirements" row states the counts
LEDGER_ID = re.compile(r"^[A-Z]\d+$")
PROOF = re.compile(r"`(tests/[\w./-]+\.c):(\w+)`")
COUNTS = re.compile(r"(\d+) proven, (\d+) built but unproven, (\d+) missing")
STATUSES = ("proven", "unproven", "missing")


def tracked_files(root):
    """Paths relative to root: git's tracked files, or every file when root is no work tree's top."""
    try:
        top = subprocess.run(["git", "-C", root, "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, check=True).stdout.strip()
        if os.path.realpath(top) == os.path.realpath(root):
            out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, check=True).stdout
            return sorted(p for p in out.decode().split("\0") if p)
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if x != ".git"]
        files += [os.path.relpath(os.path.join(d, n), root) for n in names]
    return sorted(files)


def is_history(path):
    return path.startswith("results/") and path.count("/") >= 2


def seed_map(root, files):
    """The short names of DESIGN.md's seed map, or None when there is none."""
    if "DESIGN.md" not in files:
        return None
    names, in_map = set(), False
    with open(os.path.join(root, "DESIGN.md"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                in_map = "design documents" in line.lower()
            elif in_map and (m := MAP_ROW.match(line)):
                names.add(m.group(1))
    return names or None


class Checker:
    def __init__(self, root, files):
        self.root, self.files = root, set(files)
        self.dirs = {os.path.dirname(p) for p in files}
        for p in list(self.dirs):
            while p:
                p = os.path.dirname(p)
                self.dirs.add(p)
        self.problems, self.links = [], 0
        self.seeds = seed_map(root, self.files)
        self.heads = {}
        self.texts = {}   # the ledger's test files, read once

    def report(self, path, n, what, why):
        self.problems.append(f"{path}:{n}: {what} ({why})")

    def resolve(self, path, target):
        """Why target, linked from path, does not resolve in a clone; None when it does."""
        if target.startswith("/"):
            return "an absolute path: it names the machine it was written on, not the repository"
        rel = os.path.normpath(os.path.join(os.path.dirname(path), target))
        if rel == ".." or rel.startswith("../"):
            return "points outside the repository"
        if rel in self.files or rel in self.dirs or rel == ".":
            return None
        if os.path.exists(os.path.join(self.root, rel)):
            return "not tracked: a clone does not have it"
        return "no such file in the repository"

    def check_link(self, path, n, target):
        self.links += 1
        target = target.strip("<>")
        if SCHEME.match(target):
            if not target.lower().startswith(("http:", "https:", "mailto:")):
                self.report(path, n, f"link {target}", "only http, https and mailto addresses leave the repository")
            return
        file_part = target.split("#", 1)[0]
        if not file_part:
            return
        why = self.resolve(path, file_part)
        if why:
            self.report(path, n, f"link {target}", why)

    def check_markdown(self, path, lines):
        fenced = False
        for n, line in enumerate(lines, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if fenced:
                continue
            text = CODE_SPAN.sub("", line)
            for m in INLINE.finditer(text):
                self.check_link(path, n, m.group(1))
            m = REFDEF.match(text)
            if m:
                self.check_link(path, n, m.group(1))

    def find_doc(self, here, doc):
        """The tracked path a cited document name stands for, or None."""
        for cand in (doc, os.path.normpath(os.path.join(here, os.path.basename(doc))), os.path.basename(doc)):
            if cand in self.files:
                return cand
        return None

    def headings(self, doc):
        if doc not in self.heads:
            with open(os.path.join(self.root, doc), encoding="utf-8") as f:
                self.heads[doc] = [m.group(1).lower() for line in f if (m := HEADING.match(line))]
        return self.heads[doc]

    def check_citations(self, path, lines):
        here = os.path.dirname(path)
        for n, line in enumerate(lines, 1):
            for bad in OUTSIDE:
                if bad in line:
                    self.report(path, n, bad, "a folder outside the repository: a clone does not have it")
            for m in DOC.finditer(line):
                if not self.find_doc(here, m.group(1)):
                    self.report(path, n, m.group(1), "no such document in the repository")
            for m in SECTION.finditer(line):
                doc = self.find_doc(here, m.group(1))
                want = m.group(2).lower().rstrip(".")
                if doc and not any(h.startswith(want) for h in self.headings(doc)):
                    self.report(path, n, m.group(0), f"{doc} has no section of that title")
            if self.seeds is None:
                continue
            for m in SEED_CITE.finditer(line):
                if m.group(1).lower() not in self.seeds:
                    self.report(path, n, m.group(0), "not a short name of DESIGN.md's seed map")
            for m in SEED_FILE.finditer(line):
                if m.group(1) in self.seeds:
                    self.report(path, n, m.group(0),
                                "a seed's file is not in the repository: cite it by the title in DESIGN.md's seed map")

    def test_runs(self, test, fn):
        """Why tests/test_X.c:fn proves nothing; None when the file defines fn and hands it to cmocka."""
        if test not in self.files:
            return "no such test file in the repository"
        if test not in self.texts:   # one read per test file, however many proofs name it
            with open(os.path.join(self.root, test), encoding="utf-8") as f:
                self.texts[test] = f.read()
        text = self.texts[test]
        if not re.search(r"\bstatic void " + fn + r"\(void \*\*", text):
            return f"{test} defines no test function {fn}"
        if not re.search(r"cmocka_unit_test\w*\(\s*" + fn + r"\b", text):
            return f"{test} does not run {fn} (not in its cmocka list)"
        return None

    def check_ledger(self):
        """The seed-requirements ledger and the feature table's counts of it; the number of rows, or 0 without a ledger."""
        if LEDGER not in self.files:
            return 0
        counts, ids = dict.fromkeys(STATUSES, 0), set()
        with open(os.path.join(self.root, LEDGER), encoding="utf-8") as f:
            lines = f.read().split("\n")
        for n, line in enumerate(lines, 1):
            cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
            if len(cells) != 5 or not LEDGER_ID.match(cells[0]):
                continue
            rid, seed, _, status, proof = cells
            if rid in ids:
                self.report(LEDGER, n, rid, "a second row with this id")
            ids.add(rid)
            if self.seeds is not None and seed not in self.seeds:
                self.report(LEDGER, n, f"{rid} {seed}", "not a short name of DESIGN.md's seed map")
            if status not in STATUSES:
                self.report(LEDGER, n, f"{rid} {status}", "the status is proven, unproven or missing")
                continue
            counts[status] += 1
            tests = PROOF.findall(proof)
            if status == "proven" and not tests:
                self.report(LEDGER, n, rid, "proven, but names no test as `tests/test_X.c:function`")
            if status != "proven" and len(proof.strip("`-. ")) < 8:
                self.report(LEDGER, n, rid, f"{status}, but gives no reason")
            for test, fn in tests:
                why = self.test_runs(test, fn)
                if why:
                    self.report(LEDGER, n, f"{test}:{fn}", why)
        rows = sum(counts.values())
        if not rows:
            self.report(LEDGER, 1, "ledger", "no requirement rows")
            return 0
        want = (counts["proven"], counts["unproven"], counts["missing"])
        found = False
        if FEATURES in self.files:
            with open(os.path.join(self.root, FEATURES), encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    if line.startswith("|") and "seed requirements" in line and (m := COUNTS.search(line)):
                        found = True
                        got = tuple(int(x) for x in m.groups())
                        if got != want:
                            self.report(FEATURES, n, m.group(0),
                                        "the ledger has %d proven, %d built but unproven, %d missing" % want)
        if not found:
            self.report(FEATURES, 1, "seed requirements",
                        "no feature-table row stating the ledger's counts (N proven, N built but unproven, N missing)")
        return rows

    def run(self):
        if self.seeds is None:
            self.report("DESIGN.md", 1, "seed map",
                        "DESIGN.md has no table of the design documents' short names and titles")
        checked = 0
        for path in sorted(self.files):
            if is_history(path):
                continue
            try:
                with open(os.path.join(self.root, path), encoding="utf-8") as f:
                    lines = f.read().split("\n")
            except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
                continue   # binary (figures), or a tracked file deleted in the work tree
            checked += 1
            if path.endswith(".md"):
                self.check_markdown(path, lines)
            self.check_citations(path, lines)
        return checked


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    if not os.path.isdir(root):
        print(f"check-docs: {root}: not a folder", file=sys.stderr)
        return 2
    c = Checker(root, tracked_files(root))
    checked = c.run()
    rows = c.check_ledger()
    for p in c.problems:
        print(p)
    if c.problems:
        print(f"check-docs: {len(c.problems)} problem(s)")
        return 1
    ledger = f", {rows} seed requirements" if rows else ""
    print(f"check-docs: ok ({checked} files, {c.links} links{ledger})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
