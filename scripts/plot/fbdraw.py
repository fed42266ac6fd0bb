"""fbdraw — what every figure shares: matplotlib set-up (Agg), colours, series, CDFs.

The figure modules (fbfig_*.py) draw with these; fbfigures.py dispatches to
them.  Conventions: axes say what they measure and, in parentheses, the unit
or scale; counts and fractions start at zero; latencies are in µs on a log
axis, because a machine limit of tens of nanoseconds and a tail of
milliseconds share one panel.  Every figure carries a footer naming the
machine, the date, the revision and the JSON it came from.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt          # noqa: E402  (after the backend is chosen)
from matplotlib.ticker import FixedLocator, FuncFormatter, LogFormatter, NullLocator  # noqa: E402

import fbresults as fr                   # noqa: E402
import fbtext as ft                      # noqa: E402

NATIVE = "#1f77b4"
LEGACY = "#d62728"
LIMIT = "#555555"
FLOOR = "#2ca02c"
GROUP_STYLES = ["-", "--", "-.", ":"]
MARKERS = ["o", "^", "D", "v"]

matplotlib.rcParams.update({
    "svg.hashsalt": "fencebench",        # stable ids: the same data gives the same SVG
    "svg.fonttype": "none",              # text stays text: smaller, searchable, selectable
    "font.family": ["DejaVu Sans", "sans-serif"],
    "figure.dpi": 110,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "font.size": 9,
})

# The percentiles fencebench reports, and the fraction of samples at or below each.
QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999))


def figure(ncols=1, width=6.4, height=4.4, **kw):
    """A figure with ncols panels side by side: (fig, [axes])."""
    fig, axes = plt.subplots(1, ncols, figsize=(width, height), squeeze=False, **kw)
    return fig, list(axes[0])


def finish(fig, files, scenarios):
    """The provenance footer, then a tight layout that leaves it room."""
    srcs = [f for f in files if f.scenario in scenarios]
    if srcs:
        reps = max((r.repetitions for f in srcs for r in f.runs), default=1)
        note = f" · median of {reps} repetitions" if reps > 1 else ""
        fig.text(0.01, 0.005, ft.provenance(srcs) + note, fontsize=7, color="#666666",
                 ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def style(i):
    return GROUP_STYLES[i % len(GROUP_STYLES)]


def marker(i):
    return MARKERS[i % len(MARKERS)]


def suffix(label):
    return f" ({label})" if label else ""


def series(pts, which, name, skip=None):
    """xs, ys of the native (which=1) or legacy (which=2) runs of sweep pts holding counter name."""
    s = fr.series(pts, which, name, skip)
    return [x for x, _ in s], [y for _, y in s]


def errs(pts, which, name, skip=None):
    """The stddev over repetitions beside each point of series(), or None without repetitions."""
    e = [p[which].stddev.get(name, 0.0) for p in pts
         if p[which] is not None and name in p[which].counters and not (skip and skip(p[which]))]
    return e if any(e) else None


def line(ax, pts, which, name, fmt, color, mark, label, skip=None, scale=1.0):
    """One path's series: median with ±1 stddev bars when repeated, else the single run."""
    xs, ys = series(pts, which, name, skip)
    ys = [y * scale for y in ys]
    e = errs(pts, which, name, skip)
    ax.errorbar(xs, ys, yerr=None if e is None else [v * scale for v in e], fmt=fmt, marker=mark,
                color=color, label=label, capsize=3)
    return ys


def reps_note(groups):
    reps = max((p[w].repetitions for pts in groups.values() for p in pts for w in (1, 2)
                if p[w] is not None), default=1)
    return f"median of {reps} repetitions, bars ±1 stddev" if reps > 1 else "one run per point"


def plain_log_ticks(axis):
    """Tick labels of a log axis as plain numbers (0.1, 1, 10, 1000); the minor ticks labelled
    (as 20, 40, 60) only when the axis spans too little for the major ones to be read."""
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))


def quantile_points(run, metric):
    """[(latency ns, fraction of samples at or below)] of a histogram fencebench reported as
    percentiles; the max is placed at 1 − 1/(2n) when that lies beyond p99.9."""
    pts = [(run.counters[f"{metric}_{k}"], q) for k, q in QUANTILES if f"{metric}_{k}" in run.counters]
    n, top = run.counters.get(f"{metric}_count"), run.counters.get(f"{metric}_max")
    if top is not None and n and 1 - 0.5 / n > 0.999:
        pts.append((top, 1 - 0.5 / n))
    return pts


def cdf(ax, run, metric, color, mark, label, fmt="-"):
    """The latency CDF of run's metric through its reported percentiles; the quantiles drawn."""
    pts = quantile_points(run, metric) if run is not None else []
    if pts:
        ax.plot([v / 1e3 for v, _ in pts], [q for _, q in pts], fmt, marker=mark, color=color,
                label=label, markersize=5)
    return [q for _, q in pts]


def cdf_axes(ax, quantiles, what):
    """Log latency axis, logit fraction axis with ticks at the reported percentiles and at
    the max (drawn at 1 − 1/(2n))."""
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    ax.set_yscale("logit")
    top = max(quantiles + [0.999])
    ax.set_ylim(0.4, 1 - (1 - top) / 2)
    reported = [q for _, q in QUANTILES]
    maxes = sorted({q for q in quantiles if q not in reported})
    ax.yaxis.set_major_locator(FixedLocator(reported + maxes))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(
        lambda v, _: "max" if v in maxes else f"p{v * 100:.10g}"))
    ax.set_xlabel(f"{what} (µs, log scale)")
    ax.set_ylabel("fraction of samples at or below (percentile, logit scale)")


def latency_rows(ax, rows):
    """One row per latency: p50 as a marker with a line to p99, native above legacy, on a
    log µs axis.  rows: [(label, metric, native run, legacy run)]; either run may be None."""
    for y, (_, metric, n, lg) in enumerate(rows):
        for dy, run, color, mark, name in ((0.15, n, NATIVE, "o", "native"), (-0.15, lg, LEGACY, "s", "legacy")):
            p50, p99 = (None, None) if run is None else (run.counters.get(f"{metric}_{p}") for p in ("p50", "p99"))
            if p50 is None:
                continue
            if p99 is not None:
                ax.plot([p50 / 1e3, p99 / 1e3], [y + dy] * 2, "-", color=color, linewidth=1.5)
            ax.plot([p50 / 1e3], [y + dy], mark, color=color, markersize=7,
                    label=f"{name} (marker p50, line to p99)")
            ax.annotate(ft.ns(p50), (p50 / 1e3, y + dy), textcoords="offset points", xytext=(0, 5),
                        ha="center", fontsize=7, color=color)
    handles, labels = ax.get_legend_handles_labels()
    keep = dict(zip(labels, handles))                    # one legend entry per path
    ax.legend(keep.values(), keep.keys(), fontsize=7.5, loc="lower right")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r[0] for r in rows])
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    ax.set_xlabel("latency (µs, log scale)")


def vline(ax, value_ns, label, color=LIMIT, fmt="--"):
    """A vertical line at a latency (ns) on a µs axis, named in the legend."""
    if value_ns:
        ax.axvline(value_ns / 1e3, color=color, linestyle=fmt, linewidth=1.2,
                   label=f"{label} = {ft.ns(value_ns)}")


def describe(fig):
    """What the manifest records of each panel: labels, scales, and how much it draws."""
    out = []
    for ax in fig.axes:
        drawn = sum(1 for ln in ax.get_lines() if len(ln.get_xdata()) > 0)
        drawn += len(ax.collections) + len(ax.patches)
        out.append({"title": ax.get_title(), "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
                    "xscale": ax.get_xscale(), "yscale": ax.get_yscale(), "artists": drawn})
    return out


def close(fig):
    plt.close(fig)
