"""fbfig_timeline — one frame of each workload from its timeline trace, native
above legacy: the queues' work, signals and waits, the waits the legacy OS
holds on the CPU, the interrupt thread's ISR/DPC, the application's CPU
waits, and the arrows from each signal to the waits it released.  The data
and the reading: fbreading_timeline.py.
"""

import fbdraw as d
import fbreading_timeline as tl

COLORS = {
    "work": "#9ecae1", "signal": "#000000", "gpu_wait": "#2ca02c", "held": "#ff7f0e",
    "isr": "#bbbbbb", "dpc": "#9467bd", "cpu_wait": "#d62728",
}
LEGEND = (("work", "WORK (named after its list)"), ("signal", "Signal"), ("gpu_wait", "GPU wait"),
          ("held", "wait held on the CPU (legacy)"), ("isr", "ISR"), ("dpc", "DPC"), ("cpu_wait", "CPU wait"))


def _kind(track, name):
    if name == tl.HELD:
        return "held"
    if name in ("SIGNAL_EXECUTED", "Signal"):
        return "signal"
    if name in tl.GPU_WAITS:
        return "gpu_wait"
    if name in ("ISR", "DPC"):
        return name.lower()
    if name == "CPU wait":
        return "cpu_wait"
    return "work" if track.kind == "queues" else None


def _rows(tracks):
    """The tracks a frame shows, top to bottom: queues (and their held waits), os-irq, application."""
    keep = [t for t in tracks if t.kind == "queues"]
    keep += [t for t in tracks if t.kind == "CPU threads" and t.name.startswith("os-irq")]
    keep += [t for t in tracks if t.kind == "CPU threads" and t.name.startswith("application")]
    return keep


def _draw_path(ax, label, tracks, w, y0):
    """One path's rows from y0 down; returns the next free y and the y of each track."""
    ys = {}
    y = y0
    for t in _rows(tracks):
        ys[id(t)] = y
        for ts, dur, name, _ in tl.in_window(t.spans, w):
            k = _kind(t, name)
            if k is None:
                continue
            a, b = max(ts, w[0]) - w[0], min(ts + dur, w[1]) - w[0]
            width = max(b - a, (w[1] - w[0]) * 0.002)     # a signal stays visible
            ax.broken_barh([(a, width)], (y - 0.4, 0.8), facecolors=COLORS[k], edgecolor="none")
            if k == "work" and b - a > (w[1] - w[0]) * 0.06:
                ax.text(a + (b - a) / 2, y, name, ha="center", va="center", fontsize=6)
        y -= 1
    _arrows(ax, tracks, w, ys)
    return y, {f"{label}: {t.name}": ys[id(t)] for t in _rows(tracks)}


def _arrows(ax, tracks, w, ys):
    """Each flow with both ends in the frame, from its signal to its wait."""
    ends = {}
    for t in tracks:
        for ts, fid, ph in t.points:
            if id(t) in ys:
                ends.setdefault(fid, {})[ph] = (ts, ys[id(t)])
    for e in ends.values():
        if "s" in e and "f" in e and w[0] <= e["s"][0] <= w[1] and w[0] <= e["f"][0] <= w[1]:
            (x0, y0), (x1, y1) = e["s"], e["f"]
            ax.annotate("", xy=(x1 - w[0], y1), xytext=(x0 - w[0], y0),
                        arrowprops=dict(arrowstyle="->", lw=0.6, color="#444444", shrinkA=0, shrinkB=0))


def _panel(ax, workload, got):
    labels = {}
    y = 0
    for p in tl.PATHS:
        tracks, w = got[p]
        top = y
        y, ys = _draw_path(ax, p, tracks, w, y)
        labels.update(ys)
        ax.text(1.0, top + 0.5, f"{p} (frame of {w[1] - w[0]:.0f} µs)", transform=ax.get_yaxis_transform(),
                ha="right", va="bottom", fontsize=7, fontweight="bold")
        y -= 1                                              # a gap between the paths
    ax.set_yticks(list(labels.values()))
    ax.set_yticklabels(list(labels.keys()), fontsize=6.5)
    ax.set_ylim(y + 0.5, 1.0)
    ax.set_xlabel("time since the frame began (µs)")
    ax.set_ylabel("track (native above legacy)")
    ax.set_title(f"{workload}: one frame (arrows: a signal to the wait it released)", fontsize=9)
    ax.grid(axis="y", alpha=0)


def timeline(files):
    """One frame of each workload's replay trace: native above legacy."""
    rows = tl.frames(files)
    if not rows:
        return None
    height = sum(len(_rows(got[p][0])) for _, got in rows for p in tl.PATHS) * 0.28 + 1.6 * len(rows)
    fig, axes = d.plt.subplots(len(rows), 1, figsize=(11.0, height), squeeze=False)
    for ax, (w, got) in zip(axes[:, 0], rows):
        _panel(ax, w, got)
    handles = [d.plt.Rectangle((0, 0), 1, 1, color=COLORS[k]) for k, _ in LEGEND]
    fig.legend(handles, [t for _, t in LEGEND], loc="upper center", ncol=len(LEGEND), fontsize=7,
               bbox_to_anchor=(0.5, 1.0))
    fig = d.finish(fig, files, {"replay"})
    fig.tight_layout(rect=(0, 0.03, 1, 1.0 - 0.35 / height))   # room for the legend above
    return fig
