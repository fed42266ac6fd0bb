"""fbfigures — the report's figures, drawn with matplotlib (Agg backend).

Each function takes the loaded result files (fbresults.ResultFile list) and
returns a matplotlib Figure, or None when the inputs hold nothing to draw.
Axes say what they measure and in which unit; counts and fractions start at
zero; latencies use a log axis (labelled so) because a machine limit of tens
of nanoseconds and a tail of hundreds of microseconds share one panel.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt          # noqa: E402  (after the backend is chosen)
from matplotlib.ticker import FuncFormatter  # noqa: E402

import fbresults as fr                   # noqa: E402
import fbtext as ft                      # noqa: E402

NATIVE = "#1f77b4"
LEGACY = "#d62728"
LIMIT = "#555555"
GROUP_STYLES = ["-", "--", "-.", ":"]

matplotlib.rcParams.update({
    "svg.hashsalt": "fencebench",        # stable ids: the same data gives the same SVG
    "figure.dpi": 110,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "font.size": 9,
})


def _footer(fig, files, scenarios):
    srcs = [f for f in files if f.scenario in scenarios]
    if srcs:
        fig.text(0.01, 0.005, ft.provenance(srcs), fontsize=7, color="#666666",
                 ha="left", va="bottom")


def _style(i):
    return GROUP_STYLES[i % len(GROUP_STYLES)]


def _series(pts, which, name, skip=None):
    """xs, ys of the native (which=1) or legacy (which=2) runs of pts holding counter name."""
    xs, ys = [], []
    for p in pts:
        run = p[which]
        if run is None or name not in run.counters or (skip and skip(run)):
            continue
        xs.append(p[0])
        ys.append(run.counters[name])
    return xs, ys


def _errs(pts, which, name, skip=None):
    """The stddev over repetitions beside each point of _series, or None without repetitions."""
    errs = [p[which].stddev.get(name, 0.0) for p in pts
            if p[which] is not None and name in p[which].counters and not (skip and skip(p[which]))]
    return errs if any(errs) else None


def _line(ax, pts, which, name, style, color, marker, label, skip=None):
    """One path's series: median with ±1 stddev bars when repeated, else the single run."""
    xs, ys = _series(pts, which, name, skip)
    ax.errorbar(xs, ys, yerr=_errs(pts, which, name, skip), fmt=style, marker=marker,
                color=color, label=label, capsize=3)
    return ys


def _reps_note(groups):
    reps = max((p[w].repetitions for pts in groups.values() for p in pts for w in (1, 2)
                if p[w] is not None), default=1)
    return f"median of {reps} repetitions, bars ±1 stddev" if reps > 1 else "one run per point"


def _suffix(label):
    return f" ({label})" if label else ""


def irq_per_signal(files):
    """Interrupts per GPU signal vs the waited fraction, suppression annotated."""
    groups = fr.sweep_points(files, "irq-suppression", "waited")
    if not any(_series(pts, 1, "interrupts_per_signal")[0] for pts in groups.values()):
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    ymax = 1.0
    for gi, (label, pts) in enumerate(groups.items()):
        yl = _line(ax, pts, 2, "interrupts_per_signal", _style(gi), LEGACY, "s",
                   "legacy monitored fence" + _suffix(label))
        yn = _line(ax, pts, 1, "interrupts_per_signal", _style(gi), NATIVE, "o",
                   "native GPU fence" + _suffix(label))
        ymax = max([ymax] + yn + yl)
        for x, n, lg in pts:
            s = ft.suppression(n, lg)
            if s is None or "interrupts_per_signal" not in n.counters:
                continue
            # Below and right of a point the rising native line leaves room; at the right
            # edge, below and left; on the x axis, just above it.
            y = n.counters["interrupts_per_signal"]
            right, low = x < 0.9, y < 0.05
            ax.annotate(f"{s:.0%} suppressed" + _suffix(label if len(groups) > 1 else ""), (x, y),
                        textcoords="offset points",
                        xytext=(8 if right else -8, 3 + 10 * gi if low else -6 - 10 * gi),
                        fontsize=7.5, color=NATIVE, ha="left" if right else "right",
                        va="bottom" if low else "top")
    ax.plot([0, 1], [0, 1], ":", color=LIMIT, linewidth=1,
            label="one interrupt per waited signal (native ideal)")
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(0, ymax * 1.12)
    ax.set_xlabel(f"waited fraction: share of GPU signals with a CPU waiter ({_reps_note(groups)})")
    ax.set_ylabel("interrupts per GPU signal (irq/signal)")
    ax.set_title("Interrupts per GPU signal vs waited fraction\n"
                 "suppression = 1 − interrupts(native) / interrupts(legacy), same workload")
    ax.legend(loc="lower right", fontsize=8)
    _footer(fig, files, {"irq-suppression"})
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def _no_wakeups(run):
    """The OS thread never woke in the measured region: its idle time was not accounted."""
    return run.counters.get("os_irq_wakeups", 1.0) == 0


def os_power(files):
    """OS interrupt-thread wake-ups per second and idle fraction vs the waited fraction."""
    groups = fr.sweep_points(files, "irq-suppression", "waited", section="power")
    if not any(_series(pts, 1, "os_irq_wakeups_per_s")[0] for pts in groups.values()):
        return None
    fig, (aw, ai) = plt.subplots(1, 2, figsize=(10, 4.4))
    wmax = 1.0
    for gi, (label, pts) in enumerate(groups.items()):
        for which, color, marker, name in ((2, LEGACY, "s", "legacy"), (1, NATIVE, "o", "native")):
            ys = _line(aw, pts, which, "os_irq_wakeups_per_s", _style(gi), color, marker,
                       name + _suffix(label))
            errs = _errs(pts, which, "os_irq_wakeups_per_s") or [0.0] * len(ys)
            wmax = max([wmax] + [y + e for y, e in zip(ys, errs)])
            _line(ai, pts, which, "os_irq_idle_fraction", _style(gi), color, marker,
                  name + _suffix(label), skip=_no_wakeups)
            for x, *runs in pts:
                run = runs[which - 1]
                if run is not None and _no_wakeups(run):
                    ai.annotate(f"{name}: n/a\n(0 wake-ups)", (x, 0.06), fontsize=7, color=color,
                                ha="left" if x < 0.9 else "right")
    aw.set_ylim(0, wmax * 1.15)
    aw.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    aw.set_ylabel("OS interrupt-thread wake-ups per second (1/s)")
    aw.set_title("OS interrupt thread: wake-ups per second")
    ai.set_ylim(0, 1.05)
    ai.set_ylabel("OS interrupt-thread idle fraction (0–1)")
    ai.set_title("OS interrupt thread: idle fraction (power proxy)")
    for ax in (aw, ai):
        ax.set_xlim(-0.03, 1.03)
        ax.set_xlabel("waited fraction: share of GPU signals with a CPU waiter")
        ax.legend(fontsize=8, loc="best", title=_reps_note(groups), title_fontsize=7)
    _footer(fig, files, {"irq-suppression"})
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def _latency_panel(ax, metric, source):
    native, legacy = source
    pcts = ("p50", "p99")
    ys = []
    for off, run, color, marker, name in ((-0.12, native, NATIVE, "o", "native"),
                                          (0.12, legacy, LEGACY, "s", "legacy")):
        xs, vals = [], []
        for i, p in enumerate(pcts):
            v = run.counters.get(f"{metric}_{p}") if run else None
            if v is not None:
                xs.append(i + off)
                vals.append(v / 1e3)
        ax.plot(xs, vals, linestyle="none", marker=marker, markersize=8, color=color, label=name)
        for x, v in zip(xs, vals):
            ax.annotate(ft.ns(v * 1e3), (x, v), textcoords="offset points", xytext=(0, 8),
                        ha="center", fontsize=7.5, color=color)
        ys += vals
    lim = ft.limit_of(native or legacy, metric, "p50")
    if lim:
        name, value = lim
        ax.axhline(value / 1e3, color=LIMIT, linestyle="--", linewidth=1.2,
                   label=f"machine limit: {ft.LIMIT_NAMES.get(name, name)} = {ft.ns(value)}")
        ys.append(value / 1e3)
    ax.set_xticks(range(len(pcts)))
    ax.set_xticklabels(pcts)
    ax.set_xlim(-0.6, len(pcts) - 0.4)
    ax.set_yscale("log")
    if ys:
        ax.set_ylim(min(ys) / 2.5, max(ys) * 10)   # room for the legend above the points
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel("percentile")
    ax.set_ylabel("latency (µs, log scale)")
    count = (native or legacy).counters.get(f"{metric}_count")
    scen = (native or legacy).scenario
    what = ft.LATENCY_WHAT.get(metric, metric)
    ax.set_title(f"{metric}: {what}\n({scen}, {ft.count(count)} samples per path)" if count
                 else f"{metric}: {what}\n({scen})", fontsize=8.5)
    ax.legend(fontsize=7.5, loc="upper left")


def latency(files):
    """p50 and p99 of cpu_wait and gpu_wait, native vs legacy, each with its machine limit."""
    panels = [(m, ft.latency_source(files, m)) for m in ("cpu_wait", "gpu_wait")]
    panels = [(m, s) for m, s in panels if s is not None]
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.6), squeeze=False)
    for ax, (metric, src) in zip(axes[0], panels):
        _latency_panel(ax, metric, src)
    fig.suptitle("Wait latency, native vs legacy, beside the machine's limit measured in the same run",
                 fontsize=10)
    _footer(fig, files, {s[0].scenario if s[0] else s[1].scenario for _, s in panels})
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


# name -> (function, alt text); the report embeds them in this order.
FIGURES = [
    ("irq_per_signal", irq_per_signal, "Interrupts per GPU signal vs waited fraction"),
    ("os_power", os_power, "OS interrupt-thread wake-ups per second and idle fraction vs waited fraction"),
    ("latency", latency, "cpu_wait and gpu_wait p50/p99, native vs legacy, with the machine limit"),
]


def close(fig):
    plt.close(fig)
