"""fbfig_workload — the figure of the multi-engine-synchronization seed's workloads
(frame, ring-heap, pipeline, async-compute): frames/s and interrupts per frame,
native vs legacy.

Registered in fbcatalog.FIGURES; its reading is fbreading.workloads, and the
runs it draws are chosen by fbreading.workload_rows.
"""

import fbdraw as d
import fbreading as rd
import fbtext as ft

_PATHS = ((1, d.NATIVE, "native"), (2, d.LEGACY, "legacy"))
_WIDTH = 0.38


def _bars(ax, rows, counter):
    """Grouped bars of counter, native left of legacy, each with its value; ±1 stddev when repeated."""
    for which, color, label in _PATHS:
        xs = [i + (which - 1.5) * _WIDTH for i in range(len(rows))]
        ys = [r[which].counters[counter] for r in rows]
        err = [r[which].stddev.get(counter, 0.0) for r in rows]
        ax.bar(xs, ys, _WIDTH, color=color, label=label, yerr=err if any(err) else None, capsize=3)
        for x, y, e in zip(xs, ys, err):
            ax.annotate(f"{y:.0f}" if y >= 100 else f"{y:.3g}", (x, y + e), textcoords="offset points",
                        xytext=(0, 2), ha="center",
                        va="bottom", fontsize=7, color=color)


def _marks(ax, rows, which, counter, color, fmt, label):
    """A short horizontal line over each bar of one path at counter's value (what the seed predicts)."""
    first = True
    for i, r in enumerate(rows):
        v = r[which].counters.get(counter)
        if v is None:
            continue
        x = i + (which - 1.5) * _WIDTH
        ax.plot([x - _WIDTH / 2, x + _WIDTH / 2], [v, v], fmt, color=color, linewidth=1.5,
                label=label if first else None)
        first = False


def _xaxis(ax, rows):
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r[0] for r in rows], fontsize=8)
    ax.set_xlabel("workload (scenario)")


def workloads(files):
    """Per workload, frames/s and interrupts per frame of the two paths, side by side."""
    rows = rd.workload_rows(files)
    if not rows:
        return None
    fig, (fps, irq) = d.figure(2, 10.0, 4.4)
    _bars(fps, rows, "frames_per_s")
    fps.set_ylabel("frames per second (frames/s)")
    fps.set_title("throughput", fontsize=9)
    _xaxis(fps, rows)
    fps.legend(fontsize=8, loc="upper right")
    _bars(irq, rows, "interrupts_per_frame")
    _marks(irq, rows, 2, "gpu_signals_per_frame", "#000000", "-", "GPU signals per frame")
    _marks(irq, rows, 1, "cpu_waits_per_frame", d.FLOOR, "-", "CPU waits per frame")
    irq.set_ylabel("interrupts per frame (irq/frame)")
    irq.set_title("interrupts", fontsize=9)
    _xaxis(irq, rows)
    irq.legend(fontsize=8, loc="upper right")
    for ax in (fps, irq):
        ax.set_ylim(0, ax.get_ylim()[1] * 1.1)      # room for the values over the bars
    reps = max(r[w].repetitions for r in rows for w in (1, 2))
    note = "; bars ±1 stddev over the repetitions" if reps > 1 else ""
    fig.suptitle(f"The multi-engine seed's workloads on the native and the legacy fence "
                 f"({ft.count(len(rows))} workloads{note})", fontsize=10)
    return d.finish(fig, files, set(rd.WORKLOADS))
