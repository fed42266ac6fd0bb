"""fbfig_submit — figures of work submission: user-mode vs kernel-mode, doorbell thrash.

Each function takes the loaded result files and returns a matplotlib Figure,
or None when the inputs hold nothing to draw.  Registered in fbcatalog.FIGURES.
"""

from matplotlib.ticker import FuncFormatter

import fbdraw as d
import fbresults as fr
import fbtext as ft


def _submit_panel(ax, run, floor, oneway, title):
    qs = d.cdf(ax, run, "um_submit", d.NATIVE, "o", "user-mode (doorbell)")
    qs += d.cdf(ax, run, "km_submit", d.LEGACY, "s", "kernel-mode (through the OS)")
    d.vline(ax, floor, "doorbell floor p50", color=d.FLOOR)
    d.vline(ax, oneway, "cache-line one way", fmt=":")
    d.cdf_axes(ax, qs, "submit call → engine starts the buffer")
    count = run.counters.get("um_submit_count")
    ax.set_title(f"{title}\n({ft.count(count)} submissions per path)" if count else title, fontsize=9)
    ax.legend(fontsize=7.5, loc="upper left")


def submit_latency(files):
    """CDFs of user-mode and kernel-mode submission, engine polling and parked, floor and one-way lines."""
    poll, park = fr.only_run(files, "submit-latency"), fr.only_run(files, "submit-latency", "parked")
    if poll is None or "um_submit_p50" not in poll.counters:
        return None
    floor, oneway = poll.counters.get("doorbell_floor_p50"), poll.counters.get("um_submit_p50_limit")
    panels = [(poll, "engine polling (F0)")] + ([(park, "engine parked (F1): the ring wakes it")]
                                                if park is not None and "um_submit_p50" in park.counters else [])
    fig, axes = d.figure(len(panels), 5.6 * len(panels), 4.6)
    for ax, (run, title) in zip(axes, panels):
        _submit_panel(ax, run, floor, oneway, title)
    fig.suptitle("Submission latency: user-mode doorbell vs kernel-mode submission "
                 "(CDF through the reported percentiles)", fontsize=10)
    return d.finish(fig, files, {"submit-latency"})


def doorbell_thrash(files):
    """Submission p50/p99 and victimizations per second vs queues per doorbell."""
    groups = fr.sweep_points(files, "doorbell-thrash", "queues")
    pts = next((p for p in groups.values() if p), [])
    pts = [(x / (fr.as_float(r.params.get("doorbells")) or 1), r, None) for x, r, _ in pts
           if r is not None and "submit_p50" in r.counters]
    if not pts:
        return None
    doorbells = pts[0][1].params.get("doorbells", "?")
    fig, (al, av) = d.figure(2, 10.5, 4.4)
    d.line(al, pts, 1, "submit_p50", "-", d.NATIVE, "o", "p50", scale=1e-3)
    d.line(al, pts, 1, "submit_p99", "--", d.NATIVE, "^", "p99", scale=1e-3)
    al.set_yscale("log")
    d.plain_log_ticks(al.yaxis)
    al.set_ylabel("user-mode submit → engine start (µs, log scale)")
    al.set_title("Submission latency", fontsize=9)
    d.line(av, pts, 1, "victimizations_per_s", "-", d.LEGACY, "s", "victimizations per second")
    av.set_ylim(0, max(d.series(pts, 1, "victimizations_per_s")[1] + [1]) * 1.15)
    av.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    av.set_ylabel("doorbell victimizations per second (1/s)")
    av.set_title("Doorbells taken from a queue (LRU) to serve another", fontsize=9)
    for ax in (al, av):
        ax.set_xscale("log", base=2)
        d.plain_log_ticks(ax.xaxis)
        ax.axvline(1, color=d.LIMIT, linestyle=":", linewidth=1, label="as many queues as doorbells")
        ax.set_xlabel(f"user-mode queues per doorbell (ratio, log scale; {doorbells} doorbells)")
        ax.legend(fontsize=8, loc="upper left", title=d.reps_note({"": pts}), title_fontsize=7)
    fig.suptitle("Doorbell virtualization: queues outnumbering the dedicated doorbells", fontsize=10)
    return d.finish(fig, files, {"doorbell-thrash"})
