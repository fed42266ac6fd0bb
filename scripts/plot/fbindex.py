"""fbindex — results/README.md: the index of the published runs.

A published run is a directory of results/ holding a report.md; its row gives
the date, the machine, the revision (and whether the tree was modified) and
the headline numbers read from its headline.json, newest first.  The index is
rebuilt from the directories each time, so it never drifts from what is
there; `make report` rebuilds it after writing a run into results/.

Standard library only.
"""

import os

import fbreport
import fbresults as fr
import fbtext as ft

HEAD = """\
# Published fencebench runs

Each directory is one `make report` run: the raw JSON of every scenario, the
figures (PNG and SVG), `report.md` and a self-contained `report.html`.  This
index is written by `make report` (`scripts/plot/fbplot.py --index results`);
do not edit it by hand.  Numbers are from the run's `headline.json`
(`fencebench run headline`): compare them across machines as ratios, not as
absolute times.
"""


def _load_dir(path):
    """(ResultFile list, headline numbers or None) of one run directory; unreadable files skipped."""
    files = []
    for name in sorted(os.listdir(path)):
        if name.endswith(".json") and name != "figures.json":
            try:
                files.append(fr.load(os.path.join(path, name)))
            except fr.InputError:
                continue
    return files, (fbreport.headline_numbers(files) if files else None)


def _pair(h, key, fmt):
    if h is None or h[key][0] is None:
        return "n/a"
    n, lg = h[key]
    return f"{fmt(n)} / {fmt(lg)}" if lg is not None else fmt(n)


def _row(name, path):
    files, h = _load_dir(path)
    if not files:
        return (name[:10], "?", "?") + ("n/a",) * 6 + (f"[report]({name}/report.md)",)
    head = next((f for f in files if f.scenario == "headline"), files[0])
    c = head.context
    revs = fbreport.revisions(files)
    rev = ", ".join(f"`{r}`" for r in revs) + (" (modified tree)" if fbreport.modified_inputs(files) else "")
    links = f"[report]({name}/report.md)"
    if os.path.exists(os.path.join(path, "report.html")):
        links += f", [html]({name}/report.html)"
    um = _pair(h, "um_submit_p50", ft.ns).split(" / ")[0]
    km = _pair(h, "km_submit_p50", ft.ns)
    return (str(c.get("date", "?"))[:10], fbreport.machine_line([head]), rev,
            _pair(h, "suppression", ft.percent).split(" / ")[0],
            um, km, _pair(h, "cpu_wait_p50", ft.ns), _pair(h, "gpu_wait_p50", ft.ns),
            _pair(h, "lost_wakeups", ft.count), links)


def render(results_dir):
    """The index text of results_dir."""
    runs = sorted((d for d in os.listdir(results_dir)
                   if os.path.isfile(os.path.join(results_dir, d, "report.md"))), reverse=True)
    rows = [_row(d, os.path.join(results_dir, d)) for d in runs]
    header = ("date", "machine", "revision", "suppression (10 % waited)", "user-mode submit p50",
              "kernel-mode submit p50 native / legacy", "CPU wait p50 native / legacy",
              "GPU wait p50 native / legacy", "lost wake-ups native / legacy", "report")
    table = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * 3 + ["--:"] * 6 + ["---"]) + "|"]
    table += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    if not rows:
        table.append("| _no published run yet_ |" + " |" * (len(header) - 1))
    return HEAD + "\n" + "\n".join(table) + "\n"


def write(results_dir):
    """Rewrite results_dir/README.md atomically; its path."""
    text = render(results_dir)
    dst = os.path.join(results_dir, "README.md")
    tmp = dst + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, dst)
    return dst
