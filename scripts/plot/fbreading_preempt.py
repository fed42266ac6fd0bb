"""fbreading_preempt — the readings of the preemption and TDR figures (fbfig_preempt.py),
and the selection of their runs.  Same contract as fbreading.py: each reading
returns (shape, verdict) from the run's numbers, or None.  Standard library only.
"""

import fbresults as fr
import fbtext as ft
from fbreading import _verdict

GRANULARITIES = ("none", "dma", "primitive", "triangle", "pixel", "shader")
FINE = ("triangle", "pixel", "shader")   # finer than a command: stops inside a long WORK
VSYNC_NS = 16666667.0


def granularity_rows(files):
    """[(granularity, native run, legacy run)] of the preempt sweep, coarse to fine."""
    by = fr.by_param(files, "preempt", "granularity")
    return [(g, *by[g]) for g in GRANULARITIES if g in by]


def long_us(rows):
    """The long command's duration (µs) the runs used, or None."""
    for _, n, lg in rows:
        for r in (n, lg):
            if r is not None and fr.as_float(r.params.get("long_us")):
                return fr.as_float(r.params.get("long_us"))
    return None


def _p50(run):
    return None if run is None else run.counters.get("frame_latency_p50")


def preempt_latency(files):
    rows = [(g, n) for g, n, _ in granularity_rows(files) if _p50(n) is not None]
    got = dict(rows)
    if "none" not in got or not any(g in got for g in FINE):
        return None
    fine = next(g for g in reversed(FINE) if g in got)
    none, best = _p50(got["none"]), _p50(got[fine])
    lu = long_us(granularity_rows(files)) or 0.0
    frame = fr.as_float(got["none"].params.get("frame_us")) or 0.0
    parts = ", ".join(f"{g} {ft.ns(_p50(r))}" for g, r in rows)
    shape = (f"The compositor's frame p50 (native) by granularity: {parts}; {fine} is "
             f"{ft.times(ft.div(none, best))} below NONE.")
    dep = []
    # tolerance: a granularity that stops inside a WORK must cut the p50 at least 5x
    if best * 5 > none:
        dep.append(f"at {fine} granularity the p50 is only {ft.times(ft.div(none, best))} below NONE's")
    # NONE waits for what the engine runs before it can switch: at most the two queued long commands
    bound = (2 * lu + frame) * 1e3 * 1.25
    if lu and none > bound:
        dep.append(f"with NONE the p50 {ft.ns(none)} exceeds two long commands ({ft.ns(2 * lu * 1e3)}) "
                   "and the frame by more than 25 %")
    return shape, _verdict("gpu-preemption",
                           "finer preemption granularity gives high-priority work a shorter wait (at least "
                           "5× from NONE to a granularity inside a command), while without preemption the "
                           "wait is bounded by the long work already on the engine", dep)


def preempt_missed(files):
    rows = [(g, n) for g, n, _ in granularity_rows(files)
            if n is not None and "missed_vsync_fraction" in n.counters]
    got = dict(rows)
    if "none" not in got or not any(g in got for g in FINE):
        return None
    fine = next(g for g in reversed(FINE) if g in got)
    miss = {g: r.counters["missed_vsync_fraction"] for g, r in rows}
    lu = long_us(granularity_rows(files)) or 0.0
    parts = ", ".join(f"{g} {ft.percent(m)}" for g, m in miss.items())
    shape = f"Frames that missed their vsync (native): {parts}."
    dep = []
    # tolerances: commands longer than a vsync make most NONE frames miss (>= 50 %),
    # a granularity inside a command keeps misses at 10 % or less
    if lu * 1e3 > VSYNC_NS and miss["none"] < 0.5:
        dep.append(f"with NONE and {ft.ns(lu * 1e3)} commands only {ft.percent(miss['none'])} of the frames missed")
    if miss[fine] > 0.1:
        dep.append(f"at {fine} granularity {ft.percent(miss[fine])} of the frames still missed")
    return shape, _verdict("gpu-preemption",
                           "high-priority work such as the DWM's is delayed, and animations glitch, when "
                           "long packets cannot be preempted; preemption inside a command removes the "
                           "glitches", dep)


def tdr_pair(files):
    n, lg = fr.only_pair(files, "tdr")
    return None if n is None and lg is None else (n, lg)


def tdr_delay_ms(pair):
    for r in pair:
        if r is not None and fr.as_float(r.params.get("tdr_delay_ms")):
            return fr.as_float(r.params.get("tdr_delay_ms"))
    return None


def tdr(files):
    pair = tdr_pair(files)
    if pair is None:
        return None
    runs = [r for r in pair if r is not None and "hang_to_waiters_released_p50" in r.counters]
    if not runs:
        return None
    delay = tdr_delay_ms(pair) or 0.0
    rel = max(r.counters["hang_to_waiters_released_p50"] for r in runs)
    surv = max(r.counters.get("hang_to_survivor_done_p50", 0.0) for r in runs)
    lost = sum(r.counters.get("innocent_lost", 0.0) for r in runs)
    shape = (f"With TdrDelay {delay:g} ms a hang releases every waiter of the guilty process after "
             f"{ft.ns(rel)} and the other process's work is done after {ft.ns(surv)} (p50, slowest path); "
             f"innocent work lost: {lost:g} buffers.")
    dep = []
    if lost:
        dep.append(f"{lost:g} buffers of the innocent process were lost")
    # tolerance: detection (TdrDelay) + the preemption request's grace (TdrDelay) + the watchdog's
    # look period (TdrDelay / 4) + 25 %
    if delay and rel > delay * 1e6 * 2.25 * 1.25:
        dep.append(f"recovery took {ft.ns(rel)}, more than two TdrDelays and the watchdog's period")
    if delay and rel < delay * 1e6 * 2:
        dep.append(f"recovery took only {ft.ns(rel)}: the preemption request was not given its TdrDelay")
    return shape, _verdict("gpu-preemption",
                           "the OS sends a preemption request before it starts a TDR, so a hang costs "
                           "about two TdrDelays (detection, then the request's grace) before the reset, "
                           "and only the guilty process loses its work", dep)
