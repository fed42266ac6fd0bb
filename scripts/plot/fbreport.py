"""fbreport — the report of a set of fencebench result files, as fbdoc blocks.

document() returns the blocks; fbplot renders them to report.md and
report.html and writes both atomically.  Sections: how the report was made
(revision, tree state, build flags, the command, and every warning of the
runs: the machine was not quiet), the headline table (with 95 % intervals and
native ÷ legacy when the runs carry them), every
figure with its caption (two sentences reading it from this run's numbers,
the machine and date, the JSON it came from and the commands that reproduce
it), how to read the tables, the machine, the runs and the limits each
measured, native vs legacy interrupts with suppression, the power proxy,
every latency beside its machine limit, checks, what is not drawn, and the
commands that reproduce the whole report.

Table rows have a fixed shape ("| irq-suppression waited=0.5 | 1000 | ..."),
which tests/test_plot.c relies on.  Standard library only.
"""

import os
import re
import shlex
from dataclasses import dataclass

import fbcatalog
import fbdoc as doc
import fbresults as fr
import fbtext as ft

TITLE = "fencebench report: native GPU fence vs legacy monitored fence"

READING = [
    "**Interrupts**: the legacy fence interrupts on every GPU signal; the native fence only when a "
    "CPU waiter's value is reached (CV > MonitoredValue). Suppression near 1 − waited fraction is "
    "the design working; spurious interrupts woke no one; lost wake-ups must be 0.",
    "**Power proxy**: the simulated OS interrupt thread's wake-ups and CPU time per GPU signal "
    "(equal work on both paths), and at one paced rate (the headline) its wake-ups per second and "
    "the share of the time it slept. Rates and idle fractions of unpaced runs are over each path's "
    "own span (the same signals take the paths different times) and are marked so. Fewer wake-ups "
    "and more idle time mean fewer CPU exits from idle.",
    "**Latency**: percentiles of per-sample latencies (ns, shown in the unit that fits), each next "
    "to the machine limit measured in the same run: a futex wake-to-run for CPU waits, a "
    "cache-line round trip between two CPUs for GPU waits. × is latency ÷ limit. The CDFs are "
    "drawn through the reported percentiles (p50, p90, p99, p99.9, max).",
    "Compare native and legacy within a row (same run, same machine state); across runs and "
    "machines, compare the ratios, not the absolute numbers.",
    "**Intervals**: ±x % beside a number is the larger half of its 95 % interval, +a/-b both halves "
    "of a lopsided one: within one run a bootstrap of a percentile (its sampling noise only); across "
    "6 or more repetitions the order-statistic interval of the median or the t interval of the mean, "
    "which hold the noise between runs; never narrower than a histogram bucket. With fewer than 6 "
    "repetitions no 95 % interval exists: the number shows the repetitions' range, called one "
    "(3 runs cover the true median 75 % of the time). native ÷ legacy carries its own, and reads "
    "\"no clear difference\" when it holds 1. Two runs compare with `fencebench compare BASE.json "
    "NEW.json` (6 or more repetitions each to gate).",
]

PCTS = (("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("p999", "p99.9"), ("max", "max"))


@dataclass
class Drawn:
    """One catalog figure after drawing: its files (format -> path), or why it is missing."""
    spec: object          # fbcatalog.FigureSpec
    paths: dict           # format -> path written (in the staging directory)
    why: str              # why not drawn ("" when drawn)
    reading: tuple        # (what the shape shows, what the seeds predict) or None
    sources: list         # the ResultFiles among the inputs it reads


@dataclass
class Options:
    formats: list         # figure formats written
    reproduce: str        # the one command that regenerates everything, or None
    plot_cmd: str         # this report's fbplot command
    plot_base: str        # "python fbplot.py" for the per-figure commands
    out_dir: str          # where the report goes, as given
    notes: list           # how the report was made (from fbrun: mode, repetitions, ...)
    tree_modified: bool   # the source tree had uncommitted changes when the report was made


def _table(header, align, rows):
    return doc.Table(tuple(header), tuple(align), [tuple(str(c) for c in r) for r in rows])


def _workload(run):
    return f"{run.scenario} {run.point}" if run.point else run.scenario


def _pairs(files, section=""):
    """(label, native, legacy) for every scenario point that ran both paths, in input order."""
    out, seen = [], set()
    for f in files:
        for r in f.runs:
            key = (r.scenario, r.point)
            if r.section != section or key in seen:
                continue
            n, lg = fr.pair(files, r.scenario, section, r.point)
            if n is None or lg is None:
                continue
            seen.add(key)
            out.append((_workload(r), n, lg))
    return out


# ---- who made it: revision, tree, machine ----

def revisions(files):
    """The git revisions the inputs were built from, sorted ("unknown" when not recorded)."""
    return sorted({str(f.context.get("git_rev") or "unknown") for f in files})


def modified_inputs(files):
    """The inputs built from a modified tree or an unknown revision."""
    return [f for f in files if str(f.context.get("git_rev") or "unknown").endswith("-dirty")
            or str(f.context.get("git_rev") or "unknown") == "unknown"]


def machine_line(files):
    c = files[0].context
    kernel = str(c.get("kernel", "?")).split(" #")[0]
    return f"{c.get('host_name', '?')} ({c.get('num_cpus', '?')} × {c.get('cpu_model', '?')}, {kernel})"


def date_line(files):
    dates = sorted({str(f.context.get("date", "?"))[:10] for f in files})
    return dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"


def _made(files, opts):
    c = files[0].context
    revs = revisions(files)
    dirty = modified_inputs(files) or opts.tree_modified
    tree = ("**modified tree** (made with ALLOW_DIRTY=1: the numbers may not match any commit)"
            if dirty else "clean tree")
    rows = [("revision", f"git `{', '.join(revs)}`, {tree}"),
            ("build", f"{c.get('build_type', '?')}: `{c.get('build_flags', '?')}`"),
            ("machine", machine_line(files)),
            ("date", date_line(files))]
    rows += [("report", n) for n in opts.notes]
    if opts.reproduce:
        rows.append(("command", f"`{opts.reproduce}`"))
    return _table(("", ""), ("---", "---"), rows)


def _warning_kind(text):
    """What a warning is about, its numbers and point left out: "load average over", ..."""
    text = re.sub(r"^at [^:]*: ", "", text)
    return " ".join(re.sub(r"[0-9.,%+-]+", " ", text).split()[:3])


def _noise(files):
    """The runs' warnings (the machine was not quiet: src/fb_noise.h), for the header: one
    line per kind of warning, its first occurrence in full and the other runs that had it."""
    kinds = {}
    for f in files:
        for w in f.context.get("warnings") or []:
            kinds.setdefault(_warning_kind(w), []).append((os.path.basename(f.path), w))
    if kinds:
        total = sum(len(v) for v in kinds.values())
        runs = sum(1 for f in files if f.context.get("warnings"))
        items = []
        for seen in kinds.values():
            first, text = seen[0]
            more = sorted({name for name, _ in seen[1:]} - {first})
            items.append(f"{text} (`{first}`)" + (f"; also in {len(more)} more: " +
                                                   ", ".join(f"`{m}`" for m in more) if more else ""))
        return [doc.Para(f"**The machine was not quiet**: {total} warning(s) in {runs} of {len(files)} run(s) "
                         "(each file's context holds its own); read their numbers with that in mind:"),
                doc.Bullets(items)]
    if any(isinstance(f.context.get("noise"), dict) for f in files):
        return [doc.Para(f"**Machine noise**: no warning in any of the {len(files)} run(s) (governor, turbo, "
                         "SMT siblings, load, other processes' CPU time, steal, the limits before and after, "
                         "the spread of repetitions).")]
    return []


# ---- the headline table ----

def headline_numbers(files, profile="ideal"):
    """{name: (native, legacy)} of the headline run's main section under timing profile
    `profile`, or None without one."""
    n, lg = fr.pair_under(files, "headline", profile)
    if n is None or lg is None:
        return None
    keys = ("interrupts_per_signal", "suppression", "os_irq_cpu_per_signal", "os_irq_wakeups_per_signal",
            "app_cpu_per_signal", "paced_rate", "paced_os_irq_idle_fraction", "paced_os_irq_wakeups_per_s",
            "os_irq_idle_fraction", "os_irq_wakeups_per_s", "um_submit_p50", "um_submit_p99", "km_submit_p50", "km_submit_p99", "cpu_wait_p50",
            "cpu_wait_p99", "gpu_wait_p50", "gpu_wait_p99", "lost_wakeups")
    out = {k: (n.get(k), lg.get(k)) for k in keys}
    out["waited"] = (fr.as_float(n.params.get("waited")), None)
    out["runs"] = (n, lg)          # their intervals (fbtext.pm, fbtext.vs_legacy)
    out["limits"] = ({m: ft.limit_of(n, m, "p50") or ft.limit_of(lg, m, "p50")
                      for m in ("um_submit", "km_submit", "cpu_wait", "gpu_wait")}, None)
    return out


def _lat(h, metric, i):
    p50, p99 = h[f"{metric}_p50"][i], h[f"{metric}_p99"][i]
    if p50 is None:
        return "—"
    lim = h["limits"][0].get(metric)
    run = h["runs"][i]
    vs = f" ({ft.times(ft.div(p50, lim[1]))} {ft.LIMIT_NAMES.get(lim[0], lim[0])})" if lim else ""
    return f"{ft.ns(p50)}{ft.pm(run, f'{metric}_p50')} / {ft.ns(p99)}{ft.pm(run, f'{metric}_p99')}{vs}"


def _lat_row(label, h, metric):
    return (label, _lat(h, metric, 0), _lat(h, metric, 1), ft.vs_legacy(h["runs"][0], f"{metric}_p50"))


def _per(h, key, fmt):
    """native, legacy (each with its interval) and native ÷ legacy (with its interval, or "")."""
    return tuple(fmt(v) + ft.pm(r, key) if v is not None else "n/a"
                 for v, r in zip(h[key], h["runs"])) + (ft.vs_legacy(h["runs"][0], key),)


def _headline_power(h):
    """The power proxy rows: per signal and at an equal paced rate; a headline made before
    those existed shows its rates, labelled as over each path's own span."""
    if h["os_irq_cpu_per_signal"][0] is None:
        return [("OS interrupt-thread idle fraction (each path's own span)",)
                + _per(h, "os_irq_idle_fraction", ft.ratio),
                ("OS interrupt-thread wake-ups/s (each path's own span)",)
                + _per(h, "os_irq_wakeups_per_s", lambda v: ft.count(round(v)))]
    rate = ft.count(round(h["paced_rate"][0] or 0))
    rows = [("OS interrupt-thread CPU per signal",) + _per(h, "os_irq_cpu_per_signal", ft.ns),
            ("OS interrupt-thread wake-ups per signal",) + _per(h, "os_irq_wakeups_per_signal", ft.ratio),
            ("application CPU per signal",) + _per(h, "app_cpu_per_signal", ft.ns)]
    if h["paced_rate"][0] is not None:
        rows += [(f"OS interrupt-thread idle fraction at {rate} signals/s",)
                 + _per(h, "paced_os_irq_idle_fraction", ft.ratio),
                 (f"OS interrupt-thread wake-ups/s at {rate} signals/s",)
                 + _per(h, "paced_os_irq_wakeups_per_s", lambda v: ft.count(round(v)))]
    return rows


def _headline(files):
    h = headline_numbers(files)
    if h is None:
        return [doc.Para("_No headline run among the inputs._")]
    wf = h["waited"][0]
    rows = [
        (f"interrupts per signal ({ft.percent(wf)} CPU-waited)",) + _per(h, "interrupts_per_signal", ft.ratio),
        ("suppression", ft.percent(h["suppression"][0]) + ft.pm(h["runs"][0], "suppression"), "—", ""),
    ] + _headline_power(h) + [
        _lat_row("user-mode submission p50 / p99", h, "um_submit"),
        _lat_row("kernel-mode submission p50 / p99", h, "km_submit"),
        _lat_row("CPU wait p50 / p99", h, "cpu_wait"),
        _lat_row("GPU wait p50 / p99", h, "gpu_wait"),
        ("lost wake-ups",) + _per(h, "lost_wakeups", ft.count),
    ]
    head = [doc.Para("`fencebench run headline`: the same workload on both paths; costs per GPU signal "
                     "(the same signals, which take the two paths different times) and the power proxy at "
                     "one paced rate; each p50 beside its machine limit measured in the same run (× limit).")]
    if not any(r[3] for r in rows):          # a run without intervals: the table as it always was
        return head + [_table(("metric", "native", "legacy"), ("---", "--:", "--:"), [r[:3] for r in rows])]
    head.append(doc.Para("±: the larger half of each number's 95 % interval, +a/-b both halves of a lopsided "
                         "one (across 6 or more repetitions, the spread between runs too; with fewer, the "
                         "repetitions' range, called one); native ÷ legacy with its interval (of the p50 for "
                         "latencies), \"no clear difference\" when it holds 1."))
    rows = [r[:3] + (r[3] or "—",) for r in rows]
    return head + [_table(("metric", "native", "legacy", "native ÷ legacy [95 % interval]"),
                          ("---", "--:", "--:", "--:"), rows)]


# What a timing profile changes in the headline, and what it does not (its readings say why).
PROFILE_ROWS = (("GPU wait p50", "gpu_wait_p50", ft.ns, "depends on the profile: GPU-side time on both paths"),
                ("kernel-mode submission p50", "km_submit_p50", ft.ns,
                 "depends on the profile: the kernel-mode path's cost, then the GPU's fetch of the work"),
                ("user-mode submission p50", "um_submit_p50", ft.ns,
                 "the doorbell write, then the GPU's doorbell-to-fetch and command latency: the profile's GPU side"),
                ("CPU wait p50", "cpu_wait_p50", ft.ns, "a GPU signal's way plus a wake-up: partly the profile"),
                ("interrupts per signal", "interrupts_per_signal", ft.ratio, "a count: not the profile"),
                ("OS interrupt-thread CPU per signal", "os_irq_cpu_per_signal", ft.ns, None))
CPU_MOVED = 0.25   # a CPU-work row "moves with the profile" when a path's value changes by more than this


def _cpu_work_why(hs, key):
    """What the numbers of a CPU-work row say: the same under every profile, or which path moved."""
    moved = []
    for i, side in enumerate(("native", "legacy")):
        vals = [h[key][i] for h in hs if h[key][i]]
        if len(vals) >= 2 and max(vals) > (1 + CPU_MOVED) * min(vals):
            moved.append(f"{side} " + " → ".join(ft.ns(v) for v in vals))
    if not moved:
        return f"CPU work: within {CPU_MOVED:.0%} under every profile here".replace("%", " %")
    return "CPU work, yet it moves with the profile here: " + ", ".join(moved)


def _headline_profiles(files):
    """The headline under each timing profile it ran with, side by side (none: nothing)."""
    names = [p for p in fr.profiles(files, "headline") if headline_numbers(files, p)]
    if len(names) < 2:
        return []
    hs = [headline_numbers(files, p) for p in names]
    cols = ["metric"] + [f"{p} {side}" for p in names for side in ("native", "legacy")] + ["what sets it"]
    rows = []
    for label, key, fmt, why in PROFILE_ROWS:
        cells = [fmt(v) + ft.pm(run, key) if v is not None else "—"
                 for h in hs for v, run in zip(h[key], h["runs"])]
        rows.append((label, *cells, why if why is not None else _cpu_work_why(hs, key)))
    ratio = [ft.div(h["gpu_wait_p50"][1], h["gpu_wait_p50"][0]) for h in hs]
    rows.insert(1, ("GPU wait, legacy ÷ native", *[c for r in ratio for c in (f"{r:.3g}×" if r else "—", "")],
                    "a ratio of GPU-side times: the profile's (real hardware: about 3–8×)"))
    return [doc.Heading(3, "The headline under each timing profile"),
            doc.Para("The same headline run under the ideal profile (the model's own speed) and under "
                     "calibrated ones (`benchmarks/profiles/`: a real machine's GPU-side latencies and "
                     "kernel-mode costs). Counts do not change with the profile; ratios of GPU-side times "
                     "and kernel crossings are set by it."),
            _table(tuple(cols), ("---",) + ("--:",) * (len(cols) - 2) + ("---",), rows)]


# ---- figures ----

def _figure_commands(d, opts):
    lines = []
    for f in d.sources:
        cl = f.context.get("command_line")
        lines.append(shlex.join(str(a) for a in cl) if isinstance(cl, list) and cl
                     else f"# {os.path.basename(f.path)}: no command_line in its context")
    lines.append(f"{opts.plot_base} -o {shlex.quote(opts.out_dir)} --only {d.spec.name} "
                 + " ".join(shlex.quote(f.path) for f in d.sources))
    return "\n".join(lines)


def _figure(i, d, opts):
    head = doc.Heading(3, f"Figure {i}. {d.spec.title}")
    if not d.paths:
        return [head, doc.Para(f"_Not drawn: {d.why}._")]
    first = "png" if "png" in d.paths else next(iter(d.paths))
    caption = []
    if d.reading:
        caption.append(f"**Reading.** {d.reading[0]} {d.reading[1]}")
    others = ", ".join(f"[{fmt.upper()}]({os.path.basename(p)})" for fmt, p in d.paths.items() if fmt != first)
    names = ", ".join(f"`{os.path.basename(f.path)}`" for f in d.sources)
    caption.append(f"{machine_line(d.sources)}, {date_line(d.sources)} · from {names}"
                   + (f" · also as {others}" if others else "") + " · reproduce:")
    return [head, doc.Figure(d.spec.name, d.spec.title, os.path.basename(d.paths[first]),
                             svg=d.paths.get("svg", ""), png=d.paths.get("png", ""),
                             caption=caption, code=_figure_commands(d, opts))]


# ---- the detail tables ----

def _machine(files):
    c = files[0].context
    perf = c.get("perf") if isinstance(c.get("perf"), dict) else {}
    rows = [
        ("host", c.get("host_name", "?")),
        ("CPU", f"{c.get('num_cpus', '?')} × {c.get('cpu_model', '?')}, {c.get('mhz_per_cpu', '?')} MHz"
                f" (frequency scaling {'on' if c.get('cpu_scaling_enabled') else 'off'})"),
        ("CPUs used", f"{c.get('cpus', '?')} ({c.get('cpus_used', '?')} CPUs)"),
        ("kernel", c.get("kernel", "?")),
        ("fencebench", f"{c.get('fencebench_version', '?')}, git {c.get('git_rev', '?')}"),
        ("build", f"{c.get('build_type', '?')}: `{c.get('build_flags', '?')}`"),
        ("perf events", ", ".join(perf.get("events", [])) or "none"),
        ("package energy (RAPL)", "measured" if perf.get("rapl") else "not available"),
    ]
    out = [_table(("", ""), ("---", "---"), rows)]
    keys = ("host_name", "cpu_model", "kernel", "git_rev", "build_flags")
    differ = [k for k in keys if any(f.context.get(k) != c.get(k) for f in files[1:])]
    if differ:
        out.append(doc.Para(f"**The input files differ in {', '.join(differ)}**: the rows above are "
                            f"those of {os.path.basename(files[0].path)}."))
    return out


def _runs(files):
    rows = []
    for f in files:
        c = f.context
        lim = c.get("limits") if isinstance(c.get("limits"), dict) else {}
        params = dict(c.get("parameters") or {})
        for k, v in (c.get("grid") or {}).items():
            params[k] = "{" + ",".join(str(x) for x in v) + "}" if isinstance(v, list) else v
        rows.append((f"`{os.path.basename(f.path)}`", f.scenario, str(c.get("date", "?"))[:19],
                     " ".join(f"{k}={v}" for k, v in params.items()) or "-",
                     ft.count(c.get("repetitions")), ft.count(c.get("polling_threads")),
                     ft.ns(lim.get("cacheline_rtt_ns")), ft.ns(lim.get("cacheline_msg_ns")),
                     ft.ns(lim.get("syscall_ns")), ft.ns(lim.get("futex_wake_ns"))))
    return _table(("file", "scenario", "started", "parameters", "repetitions", "polling threads",
                   "cache-line round trip", "message one way", "bare syscall", "futex wake-to-run"),
                  ("---", "---", "---", "---", "--:", "--:", "--:", "--:", "--:", "--:"), rows)


def _interrupts(files):
    rows = []
    for label, n, lg in _pairs(files):
        if "interrupts" not in n.counters or "interrupts" not in lg.counters:
            continue
        g = lambda r, k: r.counters.get(k)  # noqa: E731
        lost = (g(n, "lost_wakeups") or 0) + (g(lg, "lost_wakeups") or 0)
        sig = ft.count(g(n, "signals"))
        if g(n, "signals") != g(lg, "signals"):   # the paths ran different counts: show both
            sig += " / " + ft.count(g(lg, "signals"))
        rows.append((label, sig, ft.count(g(n, "interrupts")) + ft.pm(n, "interrupts"),
                     ft.count(g(lg, "interrupts")) + ft.pm(lg, "interrupts"),
                     ft.ratio(g(n, "interrupts_per_signal")) + ft.pm(n, "interrupts_per_signal"),
                     ft.ratio(g(lg, "interrupts_per_signal")) + ft.pm(lg, "interrupts_per_signal"),
                     ft.percent(ft.suppression(n, lg)) + ft.pm(n, "suppression"),
                     ft.count(g(n, "spurious_interrupts")), ft.count(g(lg, "spurious_interrupts")),
                     ft.count(lost)))
    if not rows:
        return doc.Para("_No run holds interrupt counts of both paths._")
    return _table(("workload", "signals (native / legacy where they differ)", "interrupts native", "interrupts legacy",
                   "irq/signal native", "irq/signal legacy", "suppression",
                   "spurious native", "spurious legacy", "lost wake-ups"),
                  ("---",) + ("--:",) * 9, rows)


def _idle(run):
    if run.counters.get("os_irq_wakeups", 1.0) == 0:
        return "n/a (0 wake-ups)"
    return ft.ratio(run.counters.get("os_irq_idle_fraction")) + ft.pm(run, "os_irq_idle_fraction")


def _isr(run):
    v = run.counters.get("isr_ns_per_irq")
    return "n/a (0 irq)" if v == 0 else ft.ns(v) + ft.pm(run, "isr_ns_per_irq")     # 0: the ISR never ran


def _wakeups(run):
    return ft.count(round(run.counters.get("os_irq_wakeups_per_s") or 0)) + ft.pm(run, "os_irq_wakeups_per_s")


def _per_signal(run):
    v = run.counters.get("os_irq_wakeups_per_signal")
    return "—" if v is None else ft.ratio(v) + ft.pm(run, "os_irq_wakeups_per_signal")


def _power(files):
    """Per signal first (equal work); the rates and idle fractions are over
    each path's own span, which the header says."""
    rows = []
    for label, n, lg in _pairs(files, "power"):
        g = lambda r, k: r.counters.get(k)  # noqa: E731
        if g(n, "os_irq_wakeups_per_s") is None and g(lg, "os_irq_wakeups_per_s") is None:
            continue               # a power section of other counters (cross-adapter: per adapter)
        rows.append((label, _per_signal(n), _per_signal(lg), _wakeups(n), _wakeups(lg), _idle(n), _idle(lg),
                     _isr(n), _isr(lg)))
    if not rows:
        return doc.Para("_No run holds the power section of both paths._")
    return _table(("workload", "OS wake-ups/signal native", "OS wake-ups/signal legacy",
                   "OS wake-ups/s native (own span)", "OS wake-ups/s legacy (own span)",
                   "idle fraction native (own span)", "idle fraction legacy (own span)",
                   "ISR time/irq native", "ISR time/irq legacy"),
                  ("---",) + ("--:",) * 8, rows)


def _latency_rows(label, n, lg, metric):
    rows = []
    for key, shown in PCTS:
        vn = n.counters.get(f"{metric}_{key}")
        vl = lg.counters.get(f"{metric}_{key}")
        if vn is None and vl is None:
            continue
        lim = ft.limit_of(n, metric, key) or ft.limit_of(lg, metric, key)
        lim_text = f"{ft.LIMIT_NAMES.get(lim[0], lim[0])} {ft.ns(lim[1])}" if lim else "none"
        rn = ft.div(vn, lim[1]) if lim else None
        rl = ft.div(vl, lim[1]) if lim else None
        k = f"{metric}_{key}"
        rows.append((label, f"{metric} {shown}", ft.ns(vn) + ft.pm(n, k), ft.ns(vl) + ft.pm(lg, k), lim_text,
                     ft.times(rn), ft.times(rl)))
    return rows


def _latency(files):
    rows = []
    for f in files:
        for section in ("", "latency"):
            for label, n, lg in _pairs([f], section):
                if n.point and n.scenario != "headline":   # sweep points: the figures hold them
                    continue
                for metric in ("cpu_wait", "gpu_wait"):
                    if n.counters.get(f"{metric}_count") or lg.counters.get(f"{metric}_count"):
                        rows += _latency_rows(label, n, lg, metric)
    if not rows:
        return [doc.Para("_No run holds wait latencies of both paths._")]
    legend = "; ".join(f"`{m}`: {w}" for m, w in ft.LATENCY_WHAT.items())
    return [doc.Para(legend + "."),
            _table(("workload", "latency", "native", "legacy", "machine limit (same run)",
                    "native ÷ limit", "legacy ÷ limit"), ("---", "---", "--:", "--:", "---", "--:", "--:"),
                   rows)]


def _checks(files):
    out = []
    lost = [(_workload(r), r.path, r.counters["lost_wakeups"]) for f in files for r in f.runs
            if r.counters.get("lost_wakeups")]
    if lost:
        out.append("**LOST WAKE-UPS** (the protocol is broken): " +
                   ", ".join(f"{w} {p}: {ft.count(v)}" for w, p, v in lost))
    else:
        out.append("Lost wake-ups: 0 in every run.")
    for f in files:
        name = os.path.basename(f.path)
        if f.context.get("oversubscribed"):
            out.append(f"`{name}`: polling threads outnumbered the CPUs; latencies include "
                       "scheduling delay.")
    idle = sorted({_workload(r) + " " + r.path for f in files for r in f.runs
                   if r.section == "power" and r.counters.get("os_irq_wakeups", 1.0) == 0})
    if idle:
        out.append("OS idle fraction not accounted where the interrupt thread never woke "
                   f"(shown n/a): {', '.join(idle)}.")
    notes = []
    for f in files:
        for n in f.context.get("notes") or []:
            if n not in notes:
                notes.append(n)
    out += [f"Note: {n}" for n in notes]
    return doc.Bullets(out)


# The quantities compare_model puts side by side (section "compare", on the legacy entries: each
# repetition's device and model values as NAME_device and NAME_model, the verdict NAME_agree on the
# mean aggregate), in the order shown.
BESIDE_ROWS = (("frames/s native ÷ legacy", "frames_per_s_ratio"),
               ("host CPU per frame native ÷ legacy", "host_cpu_per_frame_ratio"),
               ("held waits per frame, native", "held_waits_per_frame_native"),
               ("held waits per frame, legacy", "held_waits_per_frame_legacy"),
               ("interrupts per frame, native", "interrupts_per_frame_native"),
               ("interrupts per frame, legacy", "interrupts_per_frame_legacy"))


def _beside_cell(run, key):
    """"1.02 [0.95–1.09]": the mean of the repetitions with its 95 % interval; the one value
    of a single repetition; "—" where the run has none (a device without interrupt lines)."""
    if run is None:
        return "—"
    if run.repetitions > 1:
        v, lo, hi = (run.mean.get(f"{key}{s}") for s in ("", "_ci_lo", "_ci_hi"))
        if v is not None and lo is not None and hi is not None:
            return f"{v:.3g} [{lo:.3g}–{hi:.3g}]"
    v = run.get(key)
    return "—" if v is None else f"{v:.3g}"


def _beside_verdict(run, key):
    if run is None or run.repetitions < 2:
        return "no interval (one repetition)"
    v = run.mean.get(f"{key}_agree")
    return "—" if v is None else "agree" if v == 1 else "**DISAGREE**"


def _beside_gpu(files):
    """The model beside a real GPU: runs made with backend=vulkan compare_model=true (the device in the
    main section, the model in section "model", the two side by side in section "compare").  [] when
    no such run."""
    rows = []
    for label, dn, dl in _pairs(files):
        if dn.params.get("backend") != "vulkan" or dn.params.get("compare_model") != "true":
            continue
        _, cmp = fr.pair(files, dn.scenario, "compare", dn.point)
        if cmp is None:
            continue
        for name, key in BESIDE_ROWS:
            if cmp.get(f"{key}_device") is None and cmp.get(f"{key}_model") is None:
                continue
            dev = cmp if cmp.get(f"{key}_device") is not None else None
            rows.append((label, name, _beside_cell(dev, f"{key}_device"), _beside_cell(cmp, f"{key}_model"),
                         _beside_verdict(dev, key)))
    if not rows:
        return []
    return [doc.Para("The same frame graph on a Vulkan device (`--set backend=vulkan`) and in the model under "
                     "the run's timing profile (`--set compare_model=true`): each repetition's native ÷ legacy "
                     "ratios (its two paths run one after the other) and each path's counts, as the mean of "
                     "the repetitions with its 95 % interval. They agree where the two intervals overlap, "
                     "and DISAGREE where they are further apart than the intervals; one repetition has no "
                     "interval and gets no verdict (`—`: a number the device cannot give, as interrupts on "
                     "a CPU implementation)."),
            _table(("workload", "quantity", "device", "model", "device and model"),
                   ("---", "---", "--:", "--:", "---"), rows)]


def _not_drawn(drawn):
    items = [f"`{s}`: {why}." for s, why in fbcatalog.NOT_DRAWN.items()]
    items += [f"{d.spec.title} (`{d.spec.name}`): {d.why}." for d in drawn if not d.paths]
    return doc.Bullets(items)


def _reproduce(files, opts):
    out = []
    if opts.reproduce:
        out += [doc.Para("All of it, in one command:"), doc.Code(opts.reproduce),
                doc.Para("which runs, from the top of the source tree:")]
    else:
        out.append(doc.Para("From the top of the source tree:"))
    lines = []
    for f in files:
        cl = f.context.get("command_line")
        lines.append(shlex.join(str(a) for a in cl) if isinstance(cl, list) and cl
                     else f"# {os.path.basename(f.path)}: no command_line in its context")
    lines.append(opts.plot_cmd)
    out.append(doc.Code("\n".join(lines)))
    return out


def document(files, drawn, opts):
    """The report as fbdoc blocks.  drawn: [Drawn], in catalog order."""
    c = files[0].context
    blocks = [doc.Heading(1, TITLE),
              doc.Para(f"{c.get('host_name', '?')}, {date_line(files)}; {len(files)} result file(s), "
                       "each latency beside the machine limit measured in its own run. With repetitions, "
                       "the median of the repetitions stands for each run."),
              doc.Heading(2, "How this report was made"), _made(files, opts)] + _noise(files) + [
              doc.Heading(2, "Headline")] + _headline(files) + _headline_profiles(files)
    blocks.append(doc.Heading(2, "Figures"))
    for i, d in enumerate(drawn, 1):
        blocks += _figure(i, d, opts)
    blocks += [doc.Heading(2, "Reading the tables"), doc.Bullets(READING),
               doc.Heading(2, "Machine")] + _machine(files)
    blocks += [doc.Heading(2, "Runs and the machine limits each measured"), _runs(files),
               doc.Heading(2, "Interrupts: native vs legacy"),
               doc.Para("suppression = 1 − interrupts(native) / interrupts(legacy), same workload; "
                        "spurious = interrupts that released no waiter."), _interrupts(files),
               doc.Heading(2, "Power proxy: the OS interrupt thread"), _power(files),
               doc.Heading(2, "Latency beside the machine limit")] + _latency(files)
    beside = _beside_gpu(files)
    if beside:
        blocks += [doc.Heading(2, "The model beside a real GPU")] + beside
    blocks += [doc.Heading(2, "Checks"), _checks(files),
               doc.Heading(2, "Not in this report"), _not_drawn(drawn),
               doc.Heading(2, "Reproduce")] + _reproduce(files, opts)
    return blocks
