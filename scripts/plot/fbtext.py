"""fbtext — number formatting and derived quantities shared by figures and report.

Standard library only (no matplotlib), so the report and the tests of the
formatting do not need a plotting stack.
"""

import os

import fbresults as fr

LIMIT_NAMES = {
    "cacheline-rtt": "cache-line round trip",
    "cacheline-oneway": "cache-line one way",
    "cacheline-msg": "cache-line message one way",
    "syscall": "bare syscall",
    "futex-wake": "futex wake-to-run",
}

LATENCY_WHAT = {
    "cpu_wait": "GPU signal → blocked CPU waiter running",
    "gpu_wait": "signal on engine A → engine B past its wait",
}

# The scenario dedicated to each latency; the headline's "latency" section otherwise.
LATENCY_SCENARIO = {"cpu_wait": "cpu-wait", "gpu_wait": "gpu-wait"}


def ns(v):
    """A duration in ns, three significant digits, in the unit that fits: '75 ns', '34.4 µs'."""
    if v is None:
        return "n/a"
    a = abs(v)
    if a < 1e3:
        return f"{v:.3g} ns"
    if a < 1e6:
        return f"{v / 1e3:.3g} µs"
    if a < 1e9:
        return f"{v / 1e6:.3g} ms"
    return f"{v / 1e9:.3g} s"


def count(v):
    """An integer count as digits ('20000'); a non-integral one with 4 significant digits."""
    if v is None:
        return "n/a"
    if float(v).is_integer():
        return str(int(v))
    return f"{v:.4g}"


def times(v):
    """A multiple of a limit: '×0.795', '×5.55', '×1570'."""
    if v is None:
        return "n/a"
    return f"×{v:.3g}" if abs(v) < 1000 else f"×{v:.0f}"


def ratio(v):
    return "n/a" if v is None else f"{v:.3g}"


def percent(v):
    return "n/a" if v is None else f"{v * 100:.1f}%"


def _pct(w):
    return f"{100 * w:.1f}%" if w < 0.1 else f"{100 * w:.0f}%"


def _runs(run, key):
    """How many repetitions key's interval is the range of (key_ci_range), or None: an interval."""
    n = run.counters.get(f"{key}_ci_range")
    return int(n) if n is not None and n >= 2 else None


def pm(run, key):
    """" ±4.1%": the larger half of key's 95 % interval (key_ci_lo, key_ci_hi) relative to its
    value, as the console shows it; " +120%/-3%" when lopsided (the larger half above 10 % and
    twice the smaller: a tail's); "" when run has none or one of width 0 (the same in every
    repetition).  Where the interval is the range of too few repetitions for 95 % (key_ci_range
    = N, fewer than 6) it is called one: " (range of 3 runs: -1.4%/+1.4%)"."""
    if run is None:
        return ""
    v, lo, hi = (run.counters.get(k) for k in (key, f"{key}_ci_lo", f"{key}_ci_hi"))
    if v is None or lo is None or hi is None or v == 0:
        return ""
    up, down = (hi - v) / abs(v), (v - lo) / abs(v)
    w = max(up, down)
    if w <= 0:
        return ""
    n = _runs(run, key)
    if n is not None:
        return f" (range of {n} runs: -{_pct(max(down, 0))}/+{_pct(max(up, 0))})"
    if w >= 0.1 and w > 2 * min(up, down):
        return f" +{_pct(max(up, 0))}/-{_pct(max(down, 0))}"
    return f" ±{_pct(w)}"


def vs_legacy(native, key):
    """native ÷ legacy of key with its 95 % interval, "0.0532 [0.049–0.058]", from the native
    run's key_vs_legacy ("[0.97–1.02, from 3-run ranges]" when formed from ranges of too few
    repetitions for 95 %); "no clear difference" when the interval holds 1 (it is never narrower
    than the histogram's buckets on either side allow); "" without one."""
    if native is None:
        return ""
    r, lo, hi = (native.counters.get(f"{key}_vs_legacy{s}") for s in ("", "_ci_lo", "_ci_hi"))
    if r is None or lo is None or hi is None:
        return ""
    n = _runs(native, f"{key}_vs_legacy")
    text = f"{r:.3g} [{lo:.3g}–{hi:.3g}{f', from {n}-run ranges' if n else ''}]"
    return text + (" no clear difference" if lo <= 1 <= hi and lo < hi else "")


def div(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def suppression(native, legacy):
    """1 − interrupts per signal native / legacy (the counts' ratio where a run has no per-signal
    number); None when not defined (no legacy interrupts).  Per signal, because the two paths may
    run different numbers of signals (isr-scaling's log payloads do)."""
    if native is None or legacy is None:
        return None
    key = "interrupts_per_signal"
    if native.counters.get(key) is None or legacy.counters.get(key) is None:
        key = "interrupts"
    r = div(native.counters.get(key), legacy.counters.get(key))
    return None if r is None else 1.0 - r


def signal_rate(run):
    """GPU signals per second the run achieved (1e9 / its real_time, ns per signal), else the
    rate it asked for (its "rate" parameter); None when neither is known."""
    t = run.counters.get("real_time")
    if t and t > 0:
        return 1e9 / t
    try:
        return float(run.params.get("rate"))
    except (TypeError, ValueError):
        return None


def limit_of(run, metric, pct):
    """(limit name, value in ns) a latency counter is compared against, or None."""
    if run is None:
        return None
    name = run.limits.get(f"{metric}_{pct}")
    value = run.counters.get(f"{metric}_{pct}_limit")
    if not name or value is None or value <= 0:
        return None
    return name, value


def latency_source(files, metric):
    """(native, legacy) runs that measured metric: its own scenario, else the headline; or None."""
    key = f"{metric}_p50"
    for scen, section in ((LATENCY_SCENARIO.get(metric), ""), ("headline", "latency")):
        n, lg = fr.pair(files, scen, section)
        if (n and key in n.counters) or (lg and key in lg.counters):
            return n, lg
    return None


def provenance(files):
    """One line: host, date, version of the runs, and the files they came from."""
    c = files[0].context
    rev = c.get("git_rev", "?")
    names = ", ".join(os.path.basename(f.path) for f in files)
    return (f"{c.get('host_name', '?')} · {str(c.get('date', '?'))[:16]} · fencebench "
            f"{c.get('fencebench_version', '?')} git {rev} {c.get('build_type', '?')} · {names}")
