"""fbfig_machine — figures of the machine itself: its limits, false sharing of fence values.

Each function takes the loaded result files and returns a matplotlib Figure,
or None when the inputs hold nothing to draw.  Registered in fbcatalog.FIGURES.
"""

import fbdraw as d
import fbresults as fr
import fbtext as ft

LIMITS = (("cacheline_rtt", "cache-line round trip (one line)", "#1f77b4", "o"),
          ("cacheline_msg_rtt", "message round trip (two lines)", "#9467bd", "^"),
          ("syscall", "bare syscall", "#2ca02c", "D"),
          ("futex_wake", "futex wake-to-run (idle CPU)", "#d62728", "s"))


def limits(files):
    """The CDF of each machine limit, as `fencebench run limits` measured them."""
    run = fr.only_run(files, "limits")
    if run is None or not any(f"{m}_p50" in run.counters for m, *_ in LIMITS):
        return None
    fig, (ax,) = d.figure(1, 7.5, 4.6)
    qs = []
    for metric, name, color, mark in LIMITS:
        qs += d.cdf(ax, run, metric, color, mark, name)
    d.cdf_axes(ax, qs, "time per operation")
    count = run.counters.get("cacheline_rtt_count")
    batch = run.params.get("batch", "?")
    ax.set_title("The machine's limits, measured by `fencebench run limits`\n"
                 f"({ft.count(count)} samples each; round trips and syscalls timed {batch} at a time)"
                 if count else "The machine's limits", fontsize=9)
    ax.legend(fontsize=8, loc="upper left")
    return d.finish(fig, files, {"limits"})


def fence_stride(files):
    """Time per fence signal vs the stride between two engines' fence values."""
    groups = fr.sweep_points(files, "fence-stride", "stride")
    pts = next((p for p in groups.values() if p), [])
    if not d.series(pts, 1, "signal_ns")[0]:
        return None
    fig, (ax,) = d.figure(1, 7, 4.4)
    ys = d.line(ax, pts, 1, "signal_ns", "-", d.NATIVE, "o", "each engine's signal")
    ax.axvline(64, color=d.LIMIT, linestyle=":", linewidth=1, label="64-byte cache line")
    oneway = pts[0][1].counters.get("signal_ns_limit") if pts[0][1] else None
    if oneway:
        ax.axhline(oneway, color=d.LIMIT, linestyle="--", linewidth=1,
                   label=f"cache-line one way = {ft.ns(oneway)}")
    ax.set_xscale("log", base=2)
    d.plain_log_ticks(ax.xaxis)
    ax.set_ylim(0, max(ys + [oneway or 0]) * 1.15)
    ax.set_xlabel("stride between the two fences' values (bytes, log scale)")
    ax.set_ylabel("time per fence signal, each engine (ns)")
    ax.set_title("False sharing: two engines signaling neighbouring fences", fontsize=9)
    ax.legend(fontsize=8, title=d.reps_note({"": pts}), title_fontsize=7)
    return d.finish(fig, files, {"fence-stride"})
