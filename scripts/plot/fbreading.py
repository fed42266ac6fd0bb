"""fbreading — two sentences reading each figure, written from the run's numbers.

Each function takes the loaded result files and returns (shape, verdict), or
None when the files hold nothing it reads:

  shape    what the figure shows, with this run's numbers;
  verdict  whether that is what the seeds (the design documents of DESIGN.md's
           seed map) predict: "This is what the <seed> seed predicts: ..." or
           "The <seed> seed predicts ...; this run departs from it: <each
           departure, with its numbers>."

The tolerances are stated next to each check.  tests/test_plot.c changes
fixture numbers and checks the sentences follow.  Standard library only.
"""

import math
import os
import re

import fbresults as fr
import fbtext as ft


def _verdict(seed, prediction, departures):
    if not departures:
        return f"This is what the {seed} seed predicts: {prediction}."
    return f"The {seed} seed predicts that {prediction}; this run departs from it: {'; '.join(departures)}."


def _g(run, name):
    return None if run is None else run.counters.get(name)


def _x(v):
    """A sweep coordinate as the grid wrote it: 0.5, 64, 1e+05 -> '100000'."""
    return f"{v:g}" if abs(v) < 1e6 else f"{v:.0f}"


def _times(a, b):
    """a / b as '3.4×', '390×', or 'n/a'."""
    r = ft.div(a, b)
    if r is None:
        return "n/a"
    return f"{r:.2g}×" if r < 100 else f"{r:.0f}×"


def _first_group(files, scenario, axis, section=""):
    """(label, [(x, native, legacy)]) of the first group of a sweep with points, or (None, [])."""
    for label, pts in fr.sweep_points(files, scenario, axis, section).items():
        if pts:
            return label, pts
    return None, []


def _slope(series):
    """The log-log slope from the first to the last point with positive values, or None."""
    s = [(x, y) for x, y in series if x > 0 and y > 0]
    if len(s) < 2 or s[-1][0] == s[0][0]:
        return None
    return math.log(s[-1][1] / s[0][1]) / math.log(s[-1][0] / s[0][0])


def _nearest(pts, x):
    return min(pts, key=lambda p: abs(p[0] - x)) if pts else None


# ---- headline and limits ----

def headline(files):
    files = fr.with_profile(files)       # the ideal profile's run: fbreading_profile reads the others
    n, lg = fr.only_pair(files, "headline")
    ipn, ipl = _g(n, "interrupts_per_signal"), _g(lg, "interrupts_per_signal")
    gn, gl = _g(n, "gpu_wait_p50"), _g(lg, "gpu_wait_p50")
    if None in (ipn, ipl, gn, gl):
        return None
    waited = fr.as_float(n.params.get("waited")) or 0.1
    sup = ft.div(ipn, ipl)
    shape = (f"With {ft.percent(waited)} of GPU signals CPU-waited the native fence raised {ft.ratio(ipn)} "
             f"interrupts per signal against legacy's {ft.ratio(ipl)} "
             f"({ft.percent(None if sup is None else 1 - sup)} suppressed), and a GPU wait took {ft.ns(gn)} "
             f"at p50 against {ft.ns(gl)} held on the CPU.")
    cn, cl = _g(n, "os_irq_cpu_per_signal"), _g(lg, "os_irq_cpu_per_signal")
    if cn is not None and cl is not None:
        shape = (shape[:-1] + f"; on the same signals the OS interrupt thread spent {ft.ns(cn)} of CPU per "
                 f"signal against legacy's {ft.ns(cl)}.")
    dep = []
    if abs(ipn - waited) > 0.05:          # tolerance: 0.05 interrupts per signal
        dep.append(f"native raised {ft.ratio(ipn)} interrupts per signal with {ft.percent(waited)} of "
                   "the signals CPU-waited")
    if gl < 5 * gn:                        # a CPU hop costs at least 5x a hardware wait
        dep.append(f"the native GPU wait is only {_times(gl, gn)} faster than the CPU-held one")
    if cn is not None and cl is not None and cn >= cl:   # fewer interrupts, less CPU: no tolerance
        dep.append(f"native's OS interrupt thread spent {ft.ns(cn)} of CPU per signal, not less than "
                   f"legacy's {ft.ns(cl)}")
    shape += (" These are the ideal timing profile's numbers (GPU side at host-CPU speed): the interrupt "
              "counts do not depend on the profile, the GPU-wait ratio and the submission latencies do "
              "(see the headline under a calibrated profile).")
    return shape, _verdict("native-gpu-fence",
                           "a native fence interrupts only for the signals a CPU waits for and a GPU "
                           f"waits in hardware (here {_times(gl, gn)} faster than legacy)", dep)


DESIGN = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "DESIGN.md")
DESIGN_SECTION = "Machine limits and the reference machine"
_REF_ROW = re.compile(r"^\|\s*([^|]+?)\s*\|\s*`(\w+)`\s*\|\s*([\d.]+)\s*(ns|µs|us|ms)\s*\|")
_REF_UNIT = {"ns": 1.0, "µs": 1e3, "us": 1e3, "ms": 1e6}


def reference_machine(path=None):
    """[(name, result key, ns)] from the reference-machine table of DESIGN.md (the rows after its
    "reference-machine" marker), or None when the file or the table is not there: a report names
    DESIGN.md's reference machine only when a reader can find it."""
    try:
        with open(path or DESIGN, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError:
        return None
    rows, started = [], False
    for line in lines:
        if "reference-machine" in line and line.startswith("<!--"):
            started = True
        elif started and (m := _REF_ROW.match(line)):
            rows.append((m.group(1), m.group(2), float(m.group(3)) * _REF_UNIT[m.group(4)]))
        elif started and rows and not line.startswith("|"):
            break
    return rows or None


def limits(files):
    run = fr.only_run(files, "limits")
    rtt, msg, sc, fw = (_g(run, k) for k in ("cacheline_rtt_p50", "cacheline_msg_rtt_p50",
                                              "syscall_p50", "futex_wake_p50"))
    if None in (rtt, sc, fw):
        return None
    msg_text = f", a two-line message one way {ft.ns(msg / 2)}" if msg else ""
    shape = (f"On this machine a cache line's round trip between two CPUs takes {ft.ns(rtt)} at p50 "
             f"(one way {ft.ns(rtt / 2)}){msg_text}, a bare syscall {ft.ns(sc)} and a futex wake-to-run "
             f"{ft.ns(fw)}, {_times(fw, sc)} a syscall.")
    verdict = "No seed predicts these: they are the yardsticks every latency is read against"
    ref = [r for r in (reference_machine() or ()) if run.counters.get(r[1])]
    if not ref:
        return shape, verdict + "."
    about = ", ".join(ft.ns(v) for _, _, v in ref)
    ratios = ", ".join(f"{name} {_times(run.counters[key], v)}" for name, key, v in ref)
    return shape, (f"{verdict}; against the reference machine in DESIGN.md (\"{DESIGN_SECTION}\": {about}) "
                   f"this machine measures {ratios}.")


# ---- interrupts and the power proxy ----

def irq_per_signal(files):
    label, pts = _first_group(files, "irq-suppression", "waited")
    nat, leg = fr.series(pts, 1, "interrupts_per_signal"), fr.series(pts, 2, "interrupts_per_signal")
    if not nat or not leg:
        return None
    xw, vw = max(nat, key=lambda p: abs(p[1] - p[0]))
    dev = abs(vw - xw)
    lmin, lmax = min(v for _, v in leg), max(v for _, v in leg)
    legacy = f"{ft.ratio(lmin)}" if lmin == lmax else f"{ft.ratio(lmin)}–{ft.ratio(lmax)}"
    gap = ("equal to the waited fraction at every point" if dev < 0.005 else
           f"within {ft.ratio(dev)} of the waited fraction (the largest gap at waited={_x(xw)})")
    shape = (f"Native interrupts per signal go from {ft.ratio(nat[0][1])} at waited {_x(nat[0][0])} to "
             f"{ft.ratio(nat[-1][1])} at waited {_x(nat[-1][0])}, {gap}, while legacy stays at {legacy} "
             "per signal.")
    x, n, lg = _nearest(pts, 0.1)
    sup = ft.suppression(n, lg)
    dep = []
    if dev > 0.05:                         # tolerance: 0.05 interrupts per signal
        dep.append(f"at waited={_x(xw)} native raised {ft.ratio(vw)} interrupts per signal, "
                   f"{ft.ratio(dev)} {'above' if vw > xw else 'below'} the waited fraction")
    if lmin < 0.95:
        xl = next(p[0] for p in leg if p[1] == lmin)
        dep.append(f"legacy raised only {ft.ratio(lmin)} interrupts per signal at waited={_x(xl)}")
    return shape, _verdict("native-gpu-fence",
                           "the CMP interrupts only when a signal reaches a CPU waiter's value, so native "
                           "interrupts follow the waited fraction while legacy interrupts on every signal "
                           f"(suppression {ft.percent(sup)} at waited={_x(x)})", dep)


def os_power(files):
    label, pts = _first_group(files, "irq-suppression", "waited", "power")
    nat, leg = fr.series(pts, 1, "os_irq_wakeups_per_signal"), fr.series(pts, 2, "os_irq_wakeups_per_signal")
    if not nat or not leg:
        return None
    x, n, lg = _nearest(pts, 0.1)
    idle = ""
    if _g(n, "os_irq_wakeups") and _g(lg, "os_irq_wakeups"):
        idle = (f"; at waited={_x(x)} the native thread slept {ft.percent(_g(n, 'os_irq_idle_fraction'))} "
                f"of its run against legacy's {ft.percent(_g(lg, 'os_irq_idle_fraction'))} of its own "
                f"(the same signals took the two paths different times)")
    shape = (f"Per GPU signal the native OS interrupt thread woke {ft.ratio(nat[0][1])} times at waited "
             f"{_x(nat[0][0])} and {ft.ratio(nat[-1][1])} at waited {_x(nat[-1][0])}, the legacy one "
             f"{ft.ratio(leg[0][1])} and {ft.ratio(leg[-1][1])}{idle}.")
    lw = dict(leg)
    dep = [f"at waited={_x(x)} native woke {ft.ratio(v)} times per signal, legacy {ft.ratio(lw[x])}"
           for x, v in nat if x < 1 and x in lw and v >= lw[x]]
    return shape, _verdict("native-gpu-fence",
                           "conditional interrupts let the CPU stay idle, so wherever some signals have no "
                           "CPU waiter the native thread wakes less often per signal than the legacy one", dep)

def isr_scaling(files):
    groups = fr.sweep_points(files, "isr-scaling", "fences", "power")
    native = {}
    for label, pts in groups.items():
        payload = label.replace("payload=", "") or "array"
        s = [(x, v) for x, v in fr.series(pts, 1, "isr_ns_per_irq") if v > 0]
        if s:
            native[payload] = s
    legacy = next(([(x, v) for x, v in fr.series(pts, 2, "isr_ns_per_irq") if v > 0]
                   for label, pts in groups.items() if label in ("", "payload=array")), [])
    if not native or not legacy:
        return None
    names = {"array": "with the fence array", "null": "with a NULL payload",
             "null-legacy": "with NULL + EvaluateLegacyMonitoredFences",
             "log": "with the optimized interrupt (the queue's log)",
             "log-overrun": "with an overrunning log (fallback)"}
    parts = [f"{ft.ns(s[0][1])} → {ft.ns(s[-1][1])} {names.get(p, p)}" for p, s in native.items()]
    x0, x1 = legacy[0][0], legacy[-1][0]
    shape = (f"From {_x(x0)} to {_x(x1)} fences with waiters the native ISR cost per interrupt goes "
             f"{', '.join(parts)}, and the legacy scan {ft.ns(legacy[0][1])} → {ft.ns(legacy[-1][1])}.")
    dep = []
    for p in ("array", "log"):
        flat = _slope(native.get(p, []))
        if flat is not None and flat >= 0.25:      # flat: grows slower than fences^0.25
            dep.append(f"{names[p]} the cost grows as fences^{flat:.2f}")
    for what, s in [(names.get(p, p), native[p]) for p in ("null", "null-legacy", "log-overrun") if p in native] + \
            [("the legacy scan", legacy)]:
        k = _slope(s)
        if k is not None and k <= 0.5:         # a scan grows at least as fences^0.5
            dep.append(f"{what} the cost grows only as fences^{k:.2f}")
    return shape, _verdict("native-gpu-fence",
                           "the fence array and the optimized interrupt (one read of the running queue's "
                           "log) keep the handler's cost flat, while a NULL payload, an overrun log's "
                           "fallback and the legacy monitored fence make the OS read every waited fence, "
                           "growing with their number", dep)


def log_overrun(files):
    groups = fr.sweep_points(files, "log-overrun", "log_bytes")
    lines = []
    for label, pts in groups.items():
        runs = [(q[0], q[1]) for q in pts
                if q[1] is not None and "log_overruns_per_1000_signals" in q[1].counters]
        if runs:
            lines.append((label, runs))
    if not lines:
        return None
    parts = []
    dep = []
    for label, runs in lines:
        rate = label.replace("rate=", "") or "?"
        spw = _g(runs[0][1], "signals_per_wait")
        parts.append(f"at {rate} signals/s ({_x(spw or 0)} per CPU wait) "
                     f"{_g(runs[0][1], 'log_overruns_per_1000_signals'):.3g} at {_x(runs[0][0])} bytes and "
                     f"{_g(runs[-1][1], 'log_overruns_per_1000_signals'):.3g} at {_x(runs[-1][0])} bytes")
        for x, r in runs:
            cap, ov = _g(r, "log_capacity"), _g(r, "log_overruns")
            entries = 2 * (spw or 0)           # each signal and the runtime's progress write after it
            lost = _g(r, "lost_wakeups") or 0
            if lost:
                dep.append(f"{_x(lost)} wake-ups lost at {_x(x)} bytes, {rate} signals/s")
            if cap is None or ov is None:
                continue
            # tolerance: one entry racing the read makes a log that holds exactly what lands count
            # as overrun, so only a margin of 2 entries either way is a departure
            if entries + 2 <= cap and ov > 0:
                dep.append(f"{_x(ov)} overruns at {_x(x)} bytes ({_x(cap)} entries) with {_x(entries)} "
                           f"entries between reads")
            elif entries >= cap + 2 and ov == 0:
                dep.append(f"no overrun at {_x(x)} bytes ({_x(cap)} entries) with {_x(entries)} entries "
                           "between reads")
    every = [r for _, runs in lines for _, r in runs]
    overruns = sum(_g(r, "log_overruns") or 0 for r in every)
    scans = sum(_g(r, "log_fallbacks") or 0 for r in every)
    lost = sum(_g(r, "lost_wakeups") or 0 for r in every)
    shape = (f"Log overruns per 1000 signals: {'; '.join(parts)}; the {_x(overruns)} overruns were met by "
             f"{_x(scans)} fallback scans of every fence, and {_x(lost)} wake-ups were lost.")
    if scans < overruns:
        dep.append(f"only {_x(scans)} fallback scans for {_x(overruns)} overruns")
    return shape, _verdict("native-gpu-fence",
                           "a log overruns exactly when more entries land between two of the OS's reads "
                           "than it holds, and the fallback to reading every fence loses no waiter", dep)


def cross_adapter(files):
    pts = fr.by_param(files, "cross-adapter", "waiter")
    n, lg = pts.get("gpu", (None, None))
    keys = ("interrupts_per_signal", "b_os_work_per_signal", "gpu_wait_p50")
    if any(_g(r, k) is None for r in (n, lg) for k in keys):
        return None
    a, b = _g(n, "interrupts_per_signal"), _g(lg, "interrupts_per_signal")
    c, d = _g(n, "b_os_work_per_signal"), _g(lg, "b_os_work_per_signal")
    shape = (f"With a GPU waiter on adapter B, native raised {ft.ratio(a)} interrupts per signal on A "
             f"(legacy {ft.ratio(b)}) and B's OS did {ft.ratio(c)} work items per signal (legacy "
             f"{ft.ratio(d)}); B's wait took {ft.ns(_g(n, 'gpu_wait_p50'))} at p50 against "
             f"{ft.ns(_g(lg, 'gpu_wait_p50'))}.")
    cn, cl = pts.get("cpu", (None, None))
    if _g(cn, "cpu_wait_p50") is not None and _g(cl, "cpu_wait_p50") is not None:
        shape = shape[:-1] + (f", and a CPU waiter on B ran {ft.ns(_g(cn, 'cpu_wait_p50'))} after the "
                              f"signal against {ft.ns(_g(cl, 'cpu_wait_p50'))}.")
    dep = []
    if a < 0.95:
        dep.append(f"native raised only {ft.ratio(a)} interrupts per signal on A")
    if c > 0.05:
        dep.append(f"B's OS did {ft.ratio(c)} work items per signal for a native GPU wait")
    if d < 0.95:
        dep.append(f"B's OS did only {ft.ratio(d)} work items per signal for a legacy GPU wait")
    return shape, _verdict("native-gpu-fence",
                           "a cross-adapter native fence keeps MonitoredValue at 0, so it loses the "
                           "interrupt suppression (one interrupt per signal, like legacy), while B's "
                           "engine re-runs its run list on the NotificationOnly update instead of B's OS "
                           "releasing a CPU-held wait", dep)


def _milliwatts(v):
    if v is None:
        return "n/a"
    return f"{v:.3g} mW" if v < 1000 else f"{v / 1000:.3g} W"


def idle_power(files):
    label, pts = _first_group(files, "idle", "rate", "power")
    rows = [(x, n, lg) for x, n, lg in pts if _g(n, "os_energy_per_signal_uj") is not None
            and _g(lg, "os_energy_per_signal_uj") is not None]
    if not rows:
        return None
    mw = lambda r: r.counters["os_energy_per_signal_uj"] * ft.signal_rate(r) / 1000.0  # noqa: E731  uJ x 1/s
    (x0, n0, l0), (x1, n1, l1) = rows[0], rows[-1]
    waited = fr.as_float(n0.params.get("waited"))
    wn, wl = _g(n0, "os_irq_wakeups_per_signal"), _g(l0, "os_irq_wakeups_per_signal")
    slow = min(ft.signal_rate(n1), ft.signal_rate(l1))
    kept = f" asked for (the slower path kept up with {ft.count(round(slow))}/s)" if slow < 0.9 * x1 else ""
    shape = (f"At {_x(x0)} signals/s the modeled OS-thread core power is {_milliwatts(mw(n0))} native "
             f"against {_milliwatts(mw(l0))} legacy, at {_x(x1)} signals/s{kept} {_milliwatts(mw(n1))} "
             f"against {_milliwatts(mw(l1))}; at the lowest rate native woke {ft.ratio(wn)} times per "
             f"signal, legacy {ft.ratio(wl)}.")
    dep = []
    if waited is not None and wn is not None and abs(wn - waited) > 0.05:
        dep.append(f"native woke {ft.ratio(wn)} times per signal at {_x(x0)} signals/s with "
                   f"{ft.ratio(waited)} of the signals waited")
    if wl is not None and wl < 0.8:
        dep.append(f"legacy woke only {ft.ratio(wl)} times per signal at {_x(x0)} signals/s")
    return shape, _verdict("native-gpu-fence",
                           "the CPU can stay in a low-power state while no CPU waiter needs a signal: "
                           "native wakes about once per waited signal"
                           f"{f' ({ft.ratio(waited)} per signal)' if waited is not None else ''}, "
                           "legacy about once per signal", dep)


# ---- wait latency ----

def _wait(files, scenario, metric, limit_words):
    """(native, legacy, native p50, legacy p50, " (N× <limit_words>)") of a wait scenario, or None."""
    n, lg = fr.only_pair(files, scenario)
    a, b = _g(n, f"{metric}_p50"), _g(lg, f"{metric}_p50")
    if a is None or b is None:
        return None
    lim = ft.limit_of(n, metric, "p50")
    return n, lg, a, b, (f" ({_times(a, lim[1])} {limit_words})" if lim else "")


def gpu_wait(files):
    got = _wait(files, "gpu-wait", "gpu_wait", "the cache-line round trip")
    if got is None:
        return None
    n, lg, gn, gl, vs = got
    shape = (f"A native GPU wait ends {ft.ns(gn)} after the signal at p50{vs} and {ft.ns(_g(n, 'gpu_wait_p99'))} "
             f"at p99; the legacy CPU-held wait takes {ft.ns(gl)} at p50, {_times(gl, gn)} native, and "
             f"{ft.ns(_g(lg, 'gpu_wait_p99'))} at p99.")
    dep = [] if gl >= 5 * gn else [f"the native p50 is only {_times(gl, gn)} below the legacy one"]
    return shape, _verdict("native-gpu-fence",
                           "a native GPU wait is resolved by the engine with no CPU round trip, while the "
                           "legacy path holds the waiting queue's work on the CPU until the interrupt "
                           "thread releases it (at least 5× slower)", dep)


def cpu_wait(files):
    got = _wait(files, "cpu-wait", "cpu_wait", "a futex wake-to-run")
    if got is None:
        return None
    n, lg, cn, cl, vs = got
    shape = (f"A blocked CPU waiter runs {ft.ns(cn)} after the GPU signal at p50 on the native path{vs} and "
             f"{ft.ns(cl)} on the legacy one; at p99 {ft.ns(_g(n, 'cpu_wait_p99'))} and "
             f"{ft.ns(_g(lg, 'cpu_wait_p99'))}.")
    r = cn / cl if cl else None
    dep = [] if r is not None and 1 / 1.5 <= r <= 1.5 else [f"the native p50 is {_times(cn, cl)} the legacy one"]
    return shape, _verdict("native-gpu-fence",
                           "both paths reach a waiting CPU thread through the same interrupt and wake-up, "
                           "so they cost about the same (within 1.5×), near a futex wake-to-run", dep)


# ---- submission ----

def submit_latency(files):
    poll, park = fr.only_run(files, "submit-latency"), fr.only_run(files, "submit-latency", "parked")
    u, k, floor = _g(poll, "um_submit_p50"), _g(poll, "km_submit_p50"), _g(poll, "doorbell_floor_p50")
    if None in (u, k, floor):
        return None
    oneway = _g(poll, "um_submit_p50_limit")
    line = f", {_times(u, oneway)} the one-way line" if oneway else ""
    parked, pu, pk = "", _g(park, "um_submit_p50"), _g(park, "km_submit_p50")
    if pu is not None and pk is not None:
        parked = f"; with the engine parked in F1 they take {ft.ns(pu)} and {ft.ns(pk)}"
    shape = (f"With the engine polling, a user-mode submission starts on the engine {ft.ns(u)} after the "
             f"submit call at p50 ({_times(u, floor)} the doorbell floor of {ft.ns(floor)}{line}) and a "
             f"kernel-mode one {ft.ns(k)}, {_times(k, u)} slower{parked}.")
    dep = []
    if k < 2 * u:
        dep.append(f"kernel-mode submission is only {_times(k, u)} slower than user-mode")
    if parked and pk < 2 * pu:   # the parked numbers the shape prints are held to the 2× too
        dep.append(f"with the engine parked in F1 kernel-mode submission is only {_times(pk, pu)} slower "
                   "than user-mode")
    if u > 3 * floor:
        dep.append(f"the user-mode p50 is {_times(u, floor)} the doorbell floor")
    return shape, _verdict("user-mode-work-submission",
                           "a doorbell ring reaches the engine without entering the kernel, so user-mode "
                           "submission beats kernel-mode (at least 2×) and stays within 3× of the doorbell "
                           "floor with the engine polling (the floor is the mechanism with no model around "
                           "it; a parked engine adds its wake-up)", dep)


def doorbell_thrash(files):
    label, pts = _first_group(files, "doorbell-thrash", "queues")
    rows = [(x / (fr.as_float(r.params.get("doorbells")) or 1), r) for x, r, _ in pts
            if r is not None and "submit_p50" in r.counters]
    below = [(q, r) for q, r in rows if q <= 1]
    above = [(q, r) for q, r in rows if q > 1]
    if not below or not above:
        return None
    p = lambda rs: [r.counters["submit_p50"] for _, r in rs]   # noqa: E731
    span = lambda v: ft.ns(min(v)) if min(v) == max(v) else f"{ft.ns(min(v))}–{ft.ns(max(v))}"  # noqa: E731
    qmax, rmax = above[-1]
    shape = (f"With at most one queue per doorbell the submission p50 is {span(p(below))}; with more queues "
             f"than doorbells it is {span(p(above))}, and at {_x(qmax)} queues per doorbell "
             f"{ft.percent(_g(rmax, 'victimizations_per_submit'))} of the submissions victimize a doorbell "
             f"({ft.count(round(_g(rmax, 'victimizations_per_s') or 0))} victimizations/s).")
    step = min(p(above)) / max(p(below))
    dep = [] if step >= 3 else [f"past one queue per doorbell the p50 is only {step:.2g}× the p50 below it"]
    return shape, _verdict("user-mode-work-submission",
                           "once queues outnumber doorbells the KMD disconnects the least recently used "
                           "queue's doorbell and that queue's next submission must reconnect, so the "
                           "latency steps up (at least 3×) past one queue per doorbell", dep)


def fence_stride(files):
    label, pts = _first_group(files, "fence-stride", "stride")
    s = fr.series(pts, 1, "signal_ns")
    small = [(x, v) for x, v in s if x < 64]
    line = dict(s).get(64.0)
    if not small or line is None:
        return None
    x0, v0 = small[0]
    wide = [v for x, v in s if x >= 64]
    spread = (max(wide) - min(wide)) / min(wide) if min(wide) > 0 else 0.0
    shape = (f"Two engines signaling neighbouring fences pay {ft.ns(v0)} per signal with their values "
             f"{_x(x0)} bytes apart and {ft.ns(line)} 64 bytes apart ({_times(v0, line)}); from 64 bytes "
             f"on the cost stays within {ft.percent(spread)} of its lowest.")
    dep = [] if v0 >= 1.5 * line else [f"{_x(x0)} bytes apart a signal costs only {_times(v0, line)} "
                                       "the 64-byte cost"]
    return shape, _verdict("native-gpu-fence",
                           "fence values packed closer than a 64-byte cache line share it, so each signal "
                           "takes the line from the other engine (at least 1.5× the cost), which the "
                           "KMD's stride caps exist to avoid", dep)


# ---- workloads (the multi-engine-synchronization seed's frame graphs) ----

WORKLOADS = ("frame", "ring-heap", "pipeline", "async-compute")


def workload_rows(files):
    """[(workload, native run, legacy run)] of the workloads whose two paths both report
    frames/s and interrupts per frame, in WORKLOADS order."""
    rows = []
    for s in WORKLOADS:
        n, lg = fr.only_pair(files, s)
        if all(_g(r, k) is not None for r in (n, lg) for k in ("frames_per_s", "interrupts_per_frame")):
            rows.append((s, n, lg))
    return rows


def _crowded(files, scenarios):
    """'; the run was oversubscribed: N polling threads on M CPUs' when a run of scenarios was, else ''."""
    for f in files:
        c = f.context
        if f.scenario in scenarios and c.get("oversubscribed") is True:
            cpus = c.get("cpus_used") or c.get("num_cpus") or "?"
            return f"; the run was oversubscribed: {c.get('polling_threads', '?')} polling threads on {cpus} CPUs"
    return ""


def _workload_cpu(rows):
    """'; host CPU per frame ...' of the rows that report it (runs before it: '')."""
    have = [(s, n, lg) for s, n, lg in rows
            if all(_g(r, k) is not None for r in (n, lg) for k in ("host_cpu_per_frame", "os_cpu_per_frame"))]
    if not have:
        return ""
    us = lambda r, k: ft.ns(r.counters[k] * 1e3)  # noqa: E731  (us/frame -> a duration)
    return ("; host CPU per frame (application and OS threads), native vs legacy: "
            + ", ".join(f"{s} {us(n, 'host_cpu_per_frame')} vs {us(lg, 'host_cpu_per_frame')} (OS threads "
                        f"{us(n, 'os_cpu_per_frame')} vs {us(lg, 'os_cpu_per_frame')})" for s, n, lg in have))


def _workload_departures(rows):
    dep = []
    for s, n, lg in rows:
        on, ol = _g(n, "os_cpu_per_frame"), _g(lg, "os_cpu_per_frame")
        # tolerance: native's OS threads may spend up to 10 % more CPU per frame than legacy's
        if on is not None and ol is not None and on > ol * 1.1:
            dep.append(f"{s}: native's OS threads spent {ft.ns(on * 1e3)} of CPU per frame against legacy's "
                       f"{ft.ns(ol * 1e3)}")
        ipn, ipl = n.counters["interrupts_per_frame"], lg.counters["interrupts_per_frame"]
        waits, signals = _g(n, "cpu_waits_per_frame"), _g(lg, "gpu_signals_per_frame")
        # tolerance: 10 % + 0.05 per frame above the CPU waits (the seed allows an interrupt that
        # unblocks no waiter); without the count, native must at least halve legacy's interrupts
        if waits is not None and ipn > waits * 1.1 + 0.05:
            dep.append(f"{s}: native raised {ft.ratio(ipn)} interrupts per frame for {ft.ratio(waits)} CPU waits")
        elif waits is None and ipn > ipl / 2:
            dep.append(f"{s}: native raised {ft.ratio(ipn)} interrupts per frame against legacy's {ft.ratio(ipl)}")
        # tolerance: legacy interrupts on at least 90 % of its GPU signals
        if signals is not None and ipl < signals * 0.9:
            dep.append(f"{s}: legacy raised only {ft.ratio(ipl)} interrupts per frame for {ft.ratio(signals)} "
                       "GPU signals")
    return dep


def workloads(files):
    rows = workload_rows(files)
    if not rows:
        return None
    irq = ", ".join(f"{s} {ft.ratio(n.counters['interrupts_per_frame'])} vs "
                    f"{ft.ratio(lg.counters['interrupts_per_frame'])}" for s, n, lg in rows)
    fps = ", ".join(f"{s} {n.counters['frames_per_s']:.0f} vs {lg.counters['frames_per_s']:.0f}" for s, n, lg in rows)
    fewer = [ft.div(lg.counters["interrupts_per_frame"], n.counters["interrupts_per_frame"]) for _, n, lg in rows]
    fewer = [f for f in fewer if f is not None]
    span = (f" ({_times(min(fewer), 1)}" + (f" to {_times(max(fewer), 1)}" if max(fewer) != min(fewer) else "")
            + " fewer on the native path)") if fewer else ""
    cpu = _workload_cpu(rows)
    shape = f"Interrupts per frame, native vs legacy: {irq}{span}; frames/s, native vs legacy: {fps}{cpu}."
    dep = _workload_departures(rows)
    slow = []
    for s, n, lg in rows:
        r = ft.div(n.counters["frames_per_s"], lg.counters["frames_per_s"])
        if r is None or abs(r - 1) > 0.25:        # tolerance: "about equal" is within 25 %
            slow.append((s, r))
    if slow:
        dep.append("frames/s differ by more than 25 % in " +
                   ", ".join(f"{s} (native {_times(r, 1)} legacy's)" for s, r in slow) +
                   _crowded(files, {s for s, _ in slow}))
    return shape, _verdict("native-gpu-fence",
                           "the native fence raises an interrupt only for signals a CPU waits on (about one "
                           "per CPU wait) where the legacy fence raises one for every GPU signal, so interrupts "
                           "per frame fall, and with them the OS threads' CPU per frame, while the frames/s of "
                           "the multi-engine-synchronization seed's GPU-bound frame graphs stay about equal "
                           "(within 25 %)", dep)
