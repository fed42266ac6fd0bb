"""fbfig_fence — figures of the two fence paths: interrupts, power, waits, ISR, cross-adapter.

Each function takes the loaded result files and returns a matplotlib Figure,
or None when the inputs hold nothing to draw.  Registered in fbcatalog.FIGURES.
"""

from matplotlib.ticker import FuncFormatter

import fbdraw as d
import fbresults as fr
import fbtext as ft

PATHS = ((1, d.NATIVE, "o", "native"), (2, d.LEGACY, "s", "legacy"))


# ---- the headline ----

def _bars(ax, values, ylabel, fmt):
    """Native and legacy as two bars, each value printed on its bar."""
    names = [n for n, _, _ in values]
    ax.bar(names, [v for _, v, _ in values], color=[c for _, _, c in values], width=0.6)
    for i, (_, v, c) in enumerate(values):
        ax.annotate(fmt(v), (i, v), textcoords="offset points", xytext=(0, 3), ha="center",
                    fontsize=8, color=c)
    ax.set_ylim(0, max([v for _, v, _ in values] + [1e-9]) * 1.2)
    ax.set_ylabel(ylabel)
    ax.set_xlabel("fence path (native, legacy)")


HEADLINE_LATENCIES = (("GPU wait", "gpu_wait"), ("CPU wait", "cpu_wait"),
                      ("kernel-mode submit", "km_submit"), ("user-mode submit", "um_submit"))


def headline(files):
    """Interrupts per signal, the OS interrupt thread's CPU per signal and the latencies, native vs legacy
    (the ideal timing profile's run; fbfig_profile draws the headline under the others)."""
    files = fr.with_profile(files)
    n, lg = fr.only_pair(files, "headline")
    if n is None or lg is None or "interrupts_per_signal" not in n.counters:
        return None
    fig, (ai, aw, al) = d.figure(3, 11, 4.4, gridspec_kw={"width_ratios": [1, 1, 2.2]})
    _bars(ai, [("native", n.get("interrupts_per_signal", 0), d.NATIVE),
               ("legacy", lg.get("interrupts_per_signal", 0), d.LEGACY)],
          "interrupts per GPU signal (irq/signal)", ft.ratio)
    ai.set_title(f"Interrupts ({ft.percent(n.get('suppression'))} suppressed)", fontsize=9)
    if "os_irq_cpu_per_signal" in n.counters:
        # equal work: the same signals, which take the two paths different times
        _bars(aw, [("native", n.get("os_irq_cpu_per_signal", 0) / 1e3, d.NATIVE),
                   ("legacy", lg.get("os_irq_cpu_per_signal", 0) / 1e3, d.LEGACY)],
              "OS interrupt-thread CPU (µs/signal)", lambda v: f"{v:.3g}")
        paced = ""
        if "paced_os_irq_wakeups_per_s" in n.counters:
            paced = (f"\nat {ft.count(round(n.get('paced_rate', 0)))} signals/s: "
                     f"{ft.count(round(n.get('paced_os_irq_wakeups_per_s', 0)))} vs "
                     f"{ft.count(round(lg.get('paced_os_irq_wakeups_per_s', 0)))} wake-ups/s")
        aw.set_title("OS thread CPU per signal (power proxy)" + paced, fontsize=9)
    else:               # a headline made before the per-signal rows: rates over each path's own span
        _bars(aw, [("native", n.get("os_irq_wakeups_per_s", 0), d.NATIVE),
                   ("legacy", lg.get("os_irq_wakeups_per_s", 0), d.LEGACY)],
              "OS interrupt-thread wake-ups per second (1/s)", lambda v: ft.count(round(v)))
        aw.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
        aw.set_title("OS thread wake-ups (each path's own span)", fontsize=9)
    d.latency_rows(al, [(w, m, n, lg) for w, m in HEADLINE_LATENCIES])
    al.set_ylabel("what is timed (submission, wait)")
    al.set_title("Submission and wait latency", fontsize=9)
    waited = n.params.get("waited", "0.1")
    fig.suptitle(f"The headline: native vs legacy, {ft.percent(fr.as_float(waited))} of GPU signals CPU-waited",
                 fontsize=10)
    return d.finish(fig, files, {"headline"})


# ---- interrupts and the power proxy vs the waited fraction ----

def irq_per_signal(files):
    """Interrupts per GPU signal vs the waited fraction, suppression annotated."""
    groups = fr.sweep_points(files, "irq-suppression", "waited")
    if not any(d.series(pts, 1, "interrupts_per_signal")[0] for pts in groups.values()):
        return None
    fig, (ax,) = d.figure(1, 7.5, 4.8)
    ymax = 1.0
    for gi, (label, pts) in enumerate(groups.items()):
        yl = d.line(ax, pts, 2, "interrupts_per_signal", d.style(gi), d.LEGACY, "s",
                    "legacy monitored fence" + d.suffix(label))
        yn = d.line(ax, pts, 1, "interrupts_per_signal", d.style(gi), d.NATIVE, "o",
                    "native GPU fence" + d.suffix(label))
        ymax = max([ymax] + yn + yl)
        for x, n, lg in pts:
            s = ft.suppression(n, lg)
            if s is None or "interrupts_per_signal" not in n.counters:
                continue
            # Below and right of a point the rising native line leaves room; at the right
            # edge, below and left; on the x axis, just above it.
            y = n.counters["interrupts_per_signal"]
            right, low = x < 0.9, y < 0.05
            ax.annotate(f"{s:.0%} suppressed" + d.suffix(label if len(groups) > 1 else ""), (x, y),
                        textcoords="offset points",
                        xytext=(8 if right else -8, 3 + 10 * gi if low else -6 - 10 * gi),
                        fontsize=7.5, color=d.NATIVE, ha="left" if right else "right",
                        va="bottom" if low else "top")
    ax.plot([0, 1], [0, 1], ":", color=d.LIMIT, linewidth=1,
            label="one interrupt per waited signal (native ideal)")
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(0, ymax * 1.12)
    ax.set_xlabel(f"waited fraction: share of GPU signals with a CPU waiter (0–1; {d.reps_note(groups)})")
    ax.set_ylabel("interrupts per GPU signal (irq/signal)")
    ax.set_title("Interrupts per GPU signal vs waited fraction\n"
                 "suppression = 1 − interrupts(native) / interrupts(legacy), same workload")
    ax.legend(loc="lower right", fontsize=8)
    return d.finish(fig, files, {"irq-suppression"})


def _no_wakeups(run):
    """The OS thread never woke in the measured region: its idle time was not accounted."""
    return run.counters.get("os_irq_wakeups", 1.0) == 0


def os_power(files):
    """OS interrupt-thread wake-ups per signal and idle fraction vs the waited fraction.

    Per signal first: the two paths take different times for the same
    signals, so a rate per second compares unequal spans; the idle fraction
    is over each path's own span and says so."""
    groups = fr.sweep_points(files, "irq-suppression", "waited", section="power")
    if not any(d.series(pts, 1, "os_irq_wakeups_per_signal")[0] for pts in groups.values()):
        return None
    fig, (aw, ai) = d.figure(2, 10, 4.4)
    wmax = 0.1
    for gi, (label, pts) in enumerate(groups.items()):
        for which, color, mark, name in reversed(PATHS):
            ys = d.line(aw, pts, which, "os_irq_wakeups_per_signal", d.style(gi), color, mark, name + d.suffix(label))
            e = d.errs(pts, which, "os_irq_wakeups_per_signal") or [0.0] * len(ys)
            wmax = max([wmax] + [y + v for y, v in zip(ys, e)])
            d.line(ai, pts, which, "os_irq_idle_fraction", d.style(gi), color, mark,
                   name + d.suffix(label), skip=_no_wakeups)
            for x, *runs in pts:
                run = runs[which - 1]
                if run is not None and _no_wakeups(run):
                    ai.annotate(f"{name}: n/a\n(0 wake-ups)", (x, 0.06), fontsize=7, color=color,
                                ha="left" if x < 0.9 else "right")
    aw.set_ylim(0, wmax * 1.15)
    aw.set_ylabel("OS interrupt-thread wake-ups per GPU signal (wake-ups/signal)")
    aw.set_title("OS interrupt thread: wake-ups per signal (equal work)")
    ai.set_ylim(0, 1.05)
    ai.set_ylabel("OS interrupt-thread idle fraction (0–1)")
    ai.set_title("idle fraction (power proxy), over each path's own span")
    for ax in (aw, ai):
        ax.set_xlim(-0.03, 1.03)
        ax.set_xlabel("waited fraction: share of GPU signals with a CPU waiter (0–1)")
        ax.legend(fontsize=8, loc="best", title=d.reps_note(groups), title_fontsize=7)
    return d.finish(fig, files, {"irq-suppression"})


# ---- wait latency CDFs ----

def _wait_cdf(files, scenario, metric, limit_label, what, title):
    n, lg = fr.only_pair(files, scenario)
    if not any(r is not None and f"{metric}_p50" in r.counters for r in (n, lg)):
        return None
    fig, (ax,) = d.figure(1, 7, 4.6)
    qs = d.cdf(ax, n, metric, d.NATIVE, "o", "native")
    qs += d.cdf(ax, lg, metric, d.LEGACY, "s", "legacy")
    lim = ft.limit_of(n or lg, metric, "p50")
    if lim:
        d.vline(ax, lim[1], limit_label)
    d.cdf_axes(ax, qs, what)
    count = (n or lg).counters.get(f"{metric}_count")
    ax.set_title(f"{title}\n({scenario}, {ft.count(count)} samples per path; "
                 "the CDF through the reported percentiles)" if count else title, fontsize=9)
    ax.legend(fontsize=8, loc="upper left")
    return d.finish(fig, files, {scenario})


def gpu_wait(files):
    """Signal on engine A -> engine B past its wait: native hardware wait vs legacy CPU-held wait."""
    return _wait_cdf(files, "gpu-wait", "gpu_wait", "cache-line round trip",
                     "signal on engine A → engine B past its wait",
                     "GPU wait: native hardware wait vs legacy wait held on the CPU")


def cpu_wait(files):
    """GPU signal -> blocked CPU waiter running, native vs legacy, with the futex wake-to-run."""
    return _wait_cdf(files, "cpu-wait", "cpu_wait", "futex wake-to-run",
                     "GPU signal → blocked CPU waiter running",
                     "CPU wait: through the OS interrupt path, native vs legacy")


# ---- ISR cost vs fences ----

def isr_scaling(files):
    """ISR time per interrupt vs fences with waiters, log-log, one native line per payload."""
    groups = fr.sweep_points(files, "isr-scaling", "fences", section="power")
    positive = lambda r: r.counters.get("isr_ns_per_irq", 0) <= 0   # noqa: E731  0: the ISR never ran
    if not any(d.series(pts, 1, "isr_ns_per_irq", positive)[0] for pts in groups.values()):
        return None
    fig, (ax,) = d.figure(1, 7.5, 4.8)
    # The payload is a native adapter cap: the legacy runs of every group are the same
    # workload, so one group's legacy line stands for them (the array's when it ran).
    legacy_from = next((lb for lb in groups if lb in ("", "payload=array")), next(iter(groups)))
    for gi, (label, pts) in enumerate(groups.items()):
        payload = label.replace("payload=", "") or "array"
        d.line(ax, pts, 1, "isr_ns_per_irq", d.style(gi), d.NATIVE, d.marker(gi),
               f"native, payload {payload}", skip=positive, scale=1e-3)
        if label == legacy_from:
            d.line(ax, pts, 2, "isr_ns_per_irq", "-", d.LEGACY, "s",
                   "legacy (scans every waited fence; payload does not apply)", skip=positive, scale=1e-3)
    ax.set_xscale("log")
    ax.set_yscale("log")
    d.plain_log_ticks(ax.xaxis)
    d.plain_log_ticks(ax.yaxis)
    ax.set_xlabel("other fences with a pending CPU waiter (count, log scale)")
    ax.set_ylabel("OS interrupt-thread CPU time per interrupt (µs, log scale)")
    ax.set_title("ISR cost per interrupt as fences with waiters grow\n"
                 "array: the signaled fences named · null: scan native waiters · null-legacy: scan all\n"
                 "log: read the running queue's log · log-overrun: a one-entry log, every fence read on overrun",
                 fontsize=8)
    ax.legend(fontsize=8, loc="upper left", title=d.reps_note(groups), title_fontsize=7)
    return d.finish(fig, files, {"isr-scaling"})


# ---- native fence log overruns ----

def log_overrun(files):
    """Log overruns per 1000 signals and fallback scans per interrupt vs log buffer size, one
    line per signal rate."""
    groups = fr.sweep_points(files, "log-overrun", "log_bytes")
    if not any(d.series(pts, 1, "log_overruns_per_1000_signals")[0] for pts in groups.values()):
        return None
    fig, (ao, af) = d.figure(2, 11, 4.6)
    for gi, (label, pts) in enumerate(groups.items()):
        run = next((p[1] for p in pts if p[1] is not None), None)
        spw = run.counters.get("signals_per_wait") if run else None
        name = (label.replace("rate=", "") + " signals/s") if label else "signals"
        if spw is not None:
            name += f" ({spw:g} per CPU wait)"
        color = (d.NATIVE, d.LEGACY, "#2ca02c", "#9467bd")[gi % 4]
        d.line(ao, pts, 1, "log_overruns_per_1000_signals", d.style(gi), color, d.marker(gi), name)
        d.line(af, pts, 1, "log_fallbacks_per_irq", d.style(gi), color, d.marker(gi), name)
    for ax in (ao, af):
        ax.set_xscale("log", base=2)
        d.plain_log_ticks(ax.xaxis)
        ax.set_xlabel("log buffer size (bytes, log scale; 64-byte header + 40 bytes per entry)")
        ax.legend(fontsize=8, title=d.reps_note(groups), title_fontsize=7)
    ao.set_yscale("symlog", linthresh=1)
    ao.set_ylim(bottom=0)
    d.plain_log_ticks(ao.yaxis)
    ao.set_ylabel("overruns per 1000 signals (overruns/1000 signals, log above 1)")
    ao.set_title("Overruns per 1000 GPU signals", fontsize=9)
    af.set_ylim(-0.05, 1.15)
    af.set_ylabel("fallback scans of every fence per interrupt (scans/irq)")
    af.set_title("Share of the OS's log reads that overran and fell back", fontsize=9)
    fig.suptitle("Native fence log overruns vs log size, per GPU signal rate (the OS reads the log at "
                 "each CPU waiter's interrupt)", fontsize=9)
    return d.finish(fig, files, {"log-overrun"})


# ---- cross-adapter ----

CROSS_COUNTS = (("interrupts_per_signal", "interrupts on A"), ("b_os_work_per_signal", "B's OS work items"))


def _grouped_bars(ax, cats, values):
    """cats: labels; values: {(cat index, path index): value}; native left, legacy right, each
    value printed on its bar."""
    for pi, (_, color, _, name) in enumerate(PATHS):
        xs = [i + (pi - 0.5) * 0.38 for i in range(len(cats))]
        ys = [values.get((i, pi), 0.0) for i in range(len(cats))]
        ax.bar(xs, ys, width=0.36, color=color, label=name)
        for x, y in zip(xs, ys):
            ax.annotate(ft.ratio(y), (x, y), textcoords="offset points", xytext=(0, 3), ha="center",
                        fontsize=7.5, color=color)
    ax.set_xticks(range(len(cats)))
    ax.set_xticklabels(cats, fontsize=8)


def cross_adapter(files):
    """Per-signal interrupts and B's OS work, and B's wait latency, native vs legacy, per waiter."""
    pts = fr.by_param(files, "cross-adapter", "waiter")
    if not pts:
        return None
    fig, (ac, al) = d.figure(2, 10.5, 4.6)
    cats, vals = [], {}
    for waiter in pts:
        for key, what in CROSS_COUNTS:
            for pi, run in enumerate(pts[waiter]):
                if run is not None and key in run.counters:
                    vals[(len(cats), pi)] = run.counters[key]
            cats.append(f"{what}\n({waiter} waiter)")
    _grouped_bars(ac, cats, vals)
    ac.set_ylim(0, 1.25)
    ac.set_ylabel("per GPU signal on adapter A (count/signal)")
    ac.set_xlabel("what is counted (waiter on adapter B)")
    ac.set_title("Interrupts and B's OS work per signal", fontsize=9)
    ac.legend(fontsize=8)
    d.latency_rows(al, [(f"{w.upper()} waiter on B\n({w}_wait)", f"{w}_wait", *pts[w]) for w in pts])
    al.set_ylabel("what waits on adapter B (metric)")
    al.set_title("Signal on A → B's waiter past its wait", fontsize=9)
    fig.suptitle("Cross-adapter fence: signaled on adapter A, waited on adapter B", fontsize=10)
    return d.finish(fig, files, {"cross-adapter"})


# ---- idle power vs signal rate ----

def _power_mw(run):
    """Modeled OS-thread core power: energy per signal (µJ) × signals per second, in mW."""
    return run.counters["os_energy_per_signal_uj"] * ft.signal_rate(run) / 1000.0


def idle_power(files):
    """Modeled OS-thread power and wake-ups per signal vs the signal rate, native vs legacy."""
    groups = fr.sweep_points(files, "idle", "rate", section="power")
    if not any(d.series(pts, 1, "os_energy_per_signal_uj")[0] for pts in groups.values()):
        return None
    fig, (ap, aw) = d.figure(2, 10.5, 4.4)
    waited = None
    for gi, (label, pts) in enumerate(groups.items()):
        for which, color, mark, name in reversed(PATHS):
            runs = [(p[0], p[which]) for p in pts
                    if p[which] is not None and "os_energy_per_signal_uj" in p[which].counters]
            ap.plot([ft.signal_rate(r) for _, r in runs], [_power_mw(r) for _, r in runs], d.style(gi),
                    marker=mark, color=color, label=name + d.suffix(label))
            d.line(aw, pts, which, "os_irq_wakeups_per_signal", d.style(gi), color, mark, name + d.suffix(label))
            if runs:
                waited = fr.as_float(runs[0][1].params.get("waited"))
    if waited is not None:
        aw.axhline(waited, color=d.LIMIT, linestyle=":", linewidth=1,
                   label=f"waited fraction {ft.ratio(waited)} (native ideal)")
    ap.set_xlabel("GPU signals per second achieved (1/s, log scale)")
    aw.set_xlabel("GPU signals per second asked for (1/s, log scale)")
    for ax in (ap, aw):
        ax.set_xscale("log")
        d.plain_log_ticks(ax.xaxis)
        ax.legend(fontsize=8, title=d.reps_note(groups), title_fontsize=7)
    ap.set_yscale("log")
    d.plain_log_ticks(ap.yaxis)
    ap.set_ylabel("modeled OS-thread core power (mW, log scale)")
    ap.set_title("Modeled power of the OS interrupt thread's core", fontsize=9)
    aw.set_ylim(0, 1.15)
    aw.set_ylabel("OS interrupt-thread wake-ups per signal (wake-ups/signal)")
    aw.set_title("Wake-ups per GPU signal", fontsize=9)
    return d.finish(fig, files, {"idle"})
