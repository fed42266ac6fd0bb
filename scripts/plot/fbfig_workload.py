"""fbfig_workload — the figure of the multi-engine-synchronization seed's workloads
(frame, ring-heap, pipeline, async-compute): frames/s, interrupts per frame and
host CPU per frame (the application thread and the OS interrupt and scheduler
threads, stacked), native vs legacy: a GPU-bound workload keeps its frames/s on
both paths, and what native saves shows as CPU.

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


# host CPU per frame, stacked from the bottom: (counter, role, hatch)
_CPU_ROLES = (("app_cpu_per_frame", "application thread", ""),
              ("os_irq_cpu_per_frame", "OS interrupt thread", "//"),
              ("os_sched_cpu_per_frame", "OS scheduler thread", ".."))


def _cpu_bars(ax, rows):
    """Per path, host CPU per frame stacked by role; the total printed over each bar."""
    for which, color, label in _PATHS:
        xs = [i + (which - 1.5) * _WIDTH for i in range(len(rows))]
        bottom = [0.0] * len(rows)
        for counter, role, hatch in _CPU_ROLES:
            ys = [r[which].counters.get(counter, 0.0) for r in rows]
            ax.bar(xs, ys, _WIDTH, bottom=bottom, color=color, alpha=1.0 if not hatch else 0.55, hatch=hatch,
                   edgecolor="white", linewidth=0.5, label=f"{label}: {role}")
            bottom = [b + y for b, y in zip(bottom, ys)]
        for x, y in zip(xs, bottom):
            ax.annotate(f"{y:.3g}", (x, y), textcoords="offset points", xytext=(0, 2), ha="center",
                        va="bottom", fontsize=7, color=color)


def _xaxis(ax, rows):
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r[0] for r in rows], fontsize=8)
    ax.set_xlabel("workload (scenario)")


def workloads(files):
    """Per workload, frames/s, interrupts and host CPU per frame of the two paths, side by side."""
    rows = rd.workload_rows(files)
    if not rows:
        return None
    cpu = all("host_cpu_per_frame" in r[w].counters for r in rows for w in (1, 2))
    fig, axes = d.figure(3 if cpu else 2, 15.0 if cpu else 10.0, 4.4)
    fps, irq = axes[0], axes[1]
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
    if cpu:
        _cpu_bars(axes[2], rows)
        axes[2].set_ylabel("host CPU per frame (µs/frame)")
        axes[2].set_title("host CPU: application + OS threads (the engines are the GPU)", fontsize=9)
        _xaxis(axes[2], rows)
        axes[2].legend(fontsize=6.5, loc="upper right", ncol=2)
    for ax in axes:
        ax.set_ylim(0, ax.get_ylim()[1] * 1.1)      # room for the values over the bars
    reps = max(r[w].repetitions for r in rows for w in (1, 2))
    note = "; bars ±1 stddev over the repetitions" if reps > 1 else ""
    fig.suptitle(f"The multi-engine seed's workloads on the native and the legacy fence "
                 f"({ft.count(len(rows))} workloads{note})", fontsize=10)
    return d.finish(fig, files, set(rd.WORKLOADS))
