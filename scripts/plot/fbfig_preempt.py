"""fbfig_preempt — figures of GPU preemption and TDR (seed gpu-preemption).

Each function takes the loaded result files and returns a matplotlib Figure,
or None when the inputs hold nothing to draw.  Registered in fbcatalog.FIGURES;
their readings are in fbreading_preempt.py.
"""

import fbdraw as d
import fbreading_preempt as rp

_PATHS = ((0, d.NATIVE, "o", "native"), (1, d.LEGACY, "s", "legacy"))


def _xaxis(ax, names):
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, fontsize=8)
    ax.set_xlabel("preemption granularity (level: coarse → fine)")


def preempt_latency(files):
    """Compositor frame latency p50 and p99 by granularity, native and legacy."""
    rows = rp.granularity_rows(files)
    if not rows:
        return None
    names = [g for g, _, _ in rows]
    fig, (ax,) = d.figure(1, 7.2, 4.6)
    for which, color, mark, label in _PATHS:
        for q, fmt in (("p50", "-"), ("p99", "--")):
            pts = [(i, r[which].counters[f"frame_latency_{q}"] / 1e3) for i, r in enumerate(rr for _, *rr in rows)
                   if r[which] is not None and f"frame_latency_{q}" in r[which].counters]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], fmt, color=color, marker=mark,
                        label=f"{label} {q}")
    long_us = rp.long_us(rows)
    if long_us:
        ax.axhline(long_us, color=d.LIMIT, linestyle=":", linewidth=1, label="one long command")
    ax.axhline(16666.7, color=d.FLOOR, linestyle="-.", linewidth=1, label="one vsync (60 Hz)")
    ax.set_yscale("log")
    d.plain_log_ticks(ax.yaxis)
    ax.set_ylabel("frame submit → complete (µs, log scale)")
    _xaxis(ax, names)
    ax.legend(fontsize=7.5, loc="upper right")
    fig.suptitle("A 60 Hz high-priority compositor beside long low-priority work: latency by granularity",
                 fontsize=10)
    return d.finish(fig, files, {"preempt"})


def preempt_missed(files):
    """Fraction of missed vsyncs by granularity, native and legacy."""
    rows = rp.granularity_rows(files)
    if not rows:
        return None
    names = [g for g, _, _ in rows]
    fig, (ax,) = d.figure(1, 7.2, 4.2)
    width = 0.38
    for which, color, _, label in _PATHS:
        xs = [i + (which - 0.5) * width for i in range(len(rows))]
        ys = [(r[which].counters.get("missed_vsync_fraction", 0.0) * 100 if r[which] is not None else 0.0)
              for _, *r in rows]
        ax.bar(xs, ys, width, color=color, label=label)
    ax.set_ylim(0, 105)
    ax.set_ylabel("frames that missed their vsync (%)")
    _xaxis(ax, names)
    ax.legend(fontsize=8, loc="upper right")
    fig.suptitle("Missed vsyncs of the high-priority compositor (the seed's DWM glitches)", fontsize=10)
    return d.finish(fig, files, {"preempt"})


def tdr(files):
    """Hang to every waiter released and to the survivor's work done, per path, beside TdrDelay."""
    pair = rp.tdr_pair(files)
    if pair is None:
        return None
    fig, (ax,) = d.figure(1, 6.4, 4.2)
    metrics = (("hang_to_waiters_released_p50", "waiters released (device lost)"),
               ("hang_to_survivor_done_p50", "surviving process's work done"))
    width = 0.38
    drawn = False
    for which, color, _, label in _PATHS:
        run = pair[which]
        if run is None:
            continue
        xs = [i + (which - 0.5) * width for i in range(len(metrics))]
        ys = [run.counters.get(m, 0.0) / 1e6 for m, _ in metrics]
        ax.bar(xs, ys, width, color=color, label=label)
        drawn = True
    if not drawn:
        return None
    delay = rp.tdr_delay_ms(pair)
    if delay:
        ax.axhline(delay, color=d.LIMIT, linestyle=":", linewidth=1, label="TdrDelay")
        ax.axhline(2 * delay, color=d.LIMIT, linestyle="--", linewidth=1, label="2 × TdrDelay")
    ax.set_xticks(range(len(metrics)))
    ax.set_xticklabels([t for _, t in metrics], fontsize=8)
    ax.set_xlabel("from the hang to (event)")
    ax.set_ylabel("time after the hang, p50 (ms)")
    ax.legend(fontsize=8, loc="lower right")
    fig.suptitle("TDR: a hung engine reset, the guilty process lost, the other running again", fontsize=10)
    return d.finish(fig, files, {"tdr"})
