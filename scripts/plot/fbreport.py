"""fbreport — the Markdown report of a set of fencebench result files.

render() returns the whole text; the caller writes it atomically.  Sections:
machine context, the runs and the limits each measured, native vs legacy
interrupts with suppression, the power proxy, every latency beside its machine
limit, checks (lost wake-ups, oversubscription, notes), the figures, and the
exact commands that reproduce the report.

Table rows have a fixed shape ("| irq-suppression waited=0.5 | 2000 | ..."),
which tests/test_plot.c relies on.  Standard library only.
"""

import os
import shlex

import fbresults as fr
import fbtext as ft

READING = """\
- **Interrupts**: the legacy fence interrupts on every GPU signal; the native fence only when a
  CPU waiter's value is reached (CV > MonitoredValue). Suppression near 1 − waited fraction is
  the design working; spurious interrupts woke no one; lost wake-ups must be 0.
- **Power proxy**: the simulated OS interrupt thread's wake-ups per second and the share of
  the measured time it slept. Fewer wake-ups and more idle time mean fewer CPU exits from idle.
- **Latency**: percentiles of per-sample latencies (ns, shown in the unit that fits), each next
  to the machine limit measured in the same run: a futex wake-to-run for CPU waits, a
  cache-line round trip between two CPUs for GPU waits. × is latency ÷ limit.
- Compare native and legacy within a row (same run, same machine state); across runs and
  machines, compare the ratios, not the absolute numbers."""

PCTS = (("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("p999", "p99.9"), ("max", "max"))


def _row(cells):
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _table(header, align, rows):
    out = [_row(header), "|" + "|".join(a for a in align) + "|"]
    out += [_row(r) for r in rows]
    return "\n".join(out)


def _workload(run):
    return f"{run.scenario} {run.point}" if run.point else run.scenario


def _pairs(files, section=""):
    """(label, native, legacy) for every scenario point that ran both paths, in input order."""
    out, seen = [], set()
    for f in files:
        for r in f.runs:
            key = (r.scenario, r.point)
            if r.section != section or key in seen:
                continue
            n, lg = fr.pair(files, r.scenario, section, r.point)
            if n is None or lg is None:
                continue
            seen.add(key)
            out.append((_workload(r), n, lg))
    return out


def _machine(files):
    c = files[0].context
    perf = c.get("perf") if isinstance(c.get("perf"), dict) else {}
    rows = [
        ("host", c.get("host_name", "?")),
        ("CPU", f"{c.get('num_cpus', '?')} × {c.get('cpu_model', '?')}, {c.get('mhz_per_cpu', '?')} MHz"
                f" (frequency scaling {'on' if c.get('cpu_scaling_enabled') else 'off'})"),
        ("CPUs used", f"{c.get('cpus', '?')} ({c.get('cpus_used', '?')} CPUs)"),
        ("kernel", c.get("kernel", "?")),
        ("fencebench", f"{c.get('fencebench_version', '?')}, git {c.get('git_rev', '?')}"),
        ("build", f"{c.get('build_type', '?')}: `{c.get('build_flags', '?')}`"),
        ("perf events", ", ".join(perf.get("events", [])) or "none"),
        ("package energy (RAPL)", "measured" if perf.get("rapl") else "not available"),
    ]
    text = _table(("", ""), ("---", "---"), rows)
    keys = ("host_name", "cpu_model", "kernel", "git_rev", "build_flags")
    differ = [k for k in keys if any(f.context.get(k) != c.get(k) for f in files[1:])]
    if differ:
        text += (f"\n\n**The input files differ in {', '.join(differ)}**: the rows above are "
                 f"those of {os.path.basename(files[0].path)}.")
    return text


def _runs(files):
    rows = []
    for f in files:
        c = f.context
        lim = c.get("limits") if isinstance(c.get("limits"), dict) else {}
        params = dict(c.get("parameters") or {})
        for k, v in (c.get("grid") or {}).items():
            params[k] = "{" + ",".join(str(x) for x in v) + "}" if isinstance(v, list) else v
        rows.append((f"`{os.path.basename(f.path)}`", f.scenario, str(c.get("date", "?"))[:19],
                     " ".join(f"{k}={v}" for k, v in params.items()) or "-",
                     ft.count(c.get("repetitions")), ft.count(c.get("polling_threads")),
                     ft.ns(lim.get("cacheline_rtt_ns")), ft.ns(lim.get("cacheline_msg_ns")),
                     ft.ns(lim.get("syscall_ns")), ft.ns(lim.get("futex_wake_ns"))))
    return _table(("file", "scenario", "started", "parameters", "repetitions", "polling threads",
                   "cache-line round trip", "message one way", "bare syscall", "futex wake-to-run"),
                  ("---", "---", "---", "---", "--:", "--:", "--:", "--:", "--:", "--:"), rows)


def _interrupts(files):
    rows = []
    for label, n, lg in _pairs(files):
        if "interrupts" not in n.counters or "interrupts" not in lg.counters:
            continue
        g = lambda r, k: r.counters.get(k)  # noqa: E731
        lost = (g(n, "lost_wakeups") or 0) + (g(lg, "lost_wakeups") or 0)
        rows.append((label, ft.count(g(n, "signals")), ft.count(g(n, "interrupts")),
                     ft.count(g(lg, "interrupts")), ft.ratio(g(n, "interrupts_per_signal")),
                     ft.ratio(g(lg, "interrupts_per_signal")), ft.percent(ft.suppression(n, lg)),
                     ft.count(g(n, "spurious_interrupts")), ft.count(g(lg, "spurious_interrupts")),
                     ft.count(lost)))
    if not rows:
        return "_No run holds interrupt counts of both paths._"
    return _table(("workload", "signals", "interrupts native", "interrupts legacy",
                   "irq/signal native", "irq/signal legacy", "suppression",
                   "spurious native", "spurious legacy", "lost wake-ups"),
                  ("---",) + ("--:",) * 9, rows)


def _idle(run):
    if run.counters.get("os_irq_wakeups", 1.0) == 0:
        return "n/a (0 wake-ups)"
    return ft.ratio(run.counters.get("os_irq_idle_fraction"))


def _isr(run):
    v = run.counters.get("isr_ns_per_irq")
    return "n/a (0 irq)" if v == 0 else ft.ns(v)     # 0: the ISR never ran


def _power(files):
    rows = []
    for label, n, lg in _pairs(files, "power"):
        g = lambda r, k: r.counters.get(k)  # noqa: E731
        rows.append((label, ft.count(round(g(n, "os_irq_wakeups_per_s") or 0)),
                     ft.count(round(g(lg, "os_irq_wakeups_per_s") or 0)), _idle(n), _idle(lg),
                     _isr(n), _isr(lg)))
    if not rows:
        return "_No run holds the power section of both paths._"
    return _table(("workload", "OS wake-ups/s native", "OS wake-ups/s legacy", "idle fraction native",
                   "idle fraction legacy", "ISR time/irq native", "ISR time/irq legacy"),
                  ("---",) + ("--:",) * 6, rows)


def _latency_rows(label, n, lg, metric):
    rows = []
    for key, shown in PCTS:
        vn = n.counters.get(f"{metric}_{key}")
        vl = lg.counters.get(f"{metric}_{key}")
        if vn is None and vl is None:
            continue
        lim = ft.limit_of(n, metric, key) or ft.limit_of(lg, metric, key)
        lim_text = f"{ft.LIMIT_NAMES.get(lim[0], lim[0])} {ft.ns(lim[1])}" if lim else "none"
        rn = ft.div(vn, lim[1]) if lim else None
        rl = ft.div(vl, lim[1]) if lim else None
        rows.append((label, f"{metric} {shown}", ft.ns(vn), ft.ns(vl), lim_text,
                     ft.times(rn), ft.times(rl)))
    return rows


def _latency(files):
    rows = []
    for f in files:
        for section in ("", "latency"):
            for label, n, lg in _pairs([f], section):
                if n.point:    # sweep points: the figures and the sweep's own file hold them
                    continue
                for metric in ("cpu_wait", "gpu_wait"):
                    if n.counters.get(f"{metric}_count") or lg.counters.get(f"{metric}_count"):
                        rows += _latency_rows(label, n, lg, metric)
    if not rows:
        return "_No run holds wait latencies of both paths._"
    legend = "; ".join(f"`{m}`: {w}" for m, w in ft.LATENCY_WHAT.items())
    return legend + ".\n\n" + _table(
        ("workload", "latency", "native", "legacy", "machine limit (same run)",
         "native ÷ limit", "legacy ÷ limit"), ("---", "---", "--:", "--:", "---", "--:", "--:"), rows)


def _checks(files):
    out = []
    lost = [(_workload(r), r.path, r.counters["lost_wakeups"]) for f in files for r in f.runs
            if r.counters.get("lost_wakeups")]
    if lost:
        out.append("- **LOST WAKE-UPS** (the protocol is broken): " +
                   ", ".join(f"{w} {p}: {ft.count(v)}" for w, p, v in lost))
    else:
        out.append("- Lost wake-ups: 0 in every run.")
    for f in files:
        name = os.path.basename(f.path)
        if f.context.get("oversubscribed"):
            out.append(f"- `{name}`: polling threads outnumbered the CPUs; latencies include "
                       "scheduling delay.")
        for w in f.context.get("warnings") or []:
            out.append(f"- `{name}` warning: {w}")
    idle = sorted({_workload(r) + " " + r.path for f in files for r in f.runs
                   if r.section == "power" and r.counters.get("os_irq_wakeups", 1.0) == 0})
    if idle:
        out.append("- OS idle fraction not accounted where the interrupt thread never woke "
                   f"(shown n/a): {', '.join(idle)}.")
    notes = []
    for f in files:
        for n in f.context.get("notes") or []:
            if n not in notes:
                notes.append(n)
    out += [f"- Note: {n}" for n in notes]
    return "\n".join(out)


def _figures(figures, formats):
    out = []
    for name, alt, drawn, why in figures:
        if not drawn:
            out.append(f"_{alt}: not drawn ({why})._")
            continue
        first = "png" if "png" in formats else formats[0]
        others = ", ".join(f"[{fmt.upper()}]({name}.{fmt})" for fmt in formats if fmt != first)
        out.append(f"![{alt}]({name}.{first})" + (f"\n\n{alt} — also as {others}." if others else ""))
    return "\n\n".join(out)


def _reproduce(files, reproduce, plot_cmd):
    out = []
    if reproduce:
        out += ["All of it, in one command:", "", "```sh", reproduce, "```", "",
                "which runs, from the top of the source tree:", ""]
    else:
        out += ["From the top of the source tree:", ""]
    out.append("```sh")
    for f in files:
        cl = f.context.get("command_line")
        if isinstance(cl, list) and cl:
            out.append(shlex.join(str(a) for a in cl))
        else:
            out.append(f"# {os.path.basename(f.path)}: no command_line in its context")
    out.append(plot_cmd)
    out.append("```")
    return "\n".join(out)


def render(files, figures, formats, reproduce, plot_cmd):
    """The report text.  figures: [(name, alt, drawn, why-not)]; plot_cmd: this script's command."""
    c = files[0].context
    title = (f"# fencebench report: native GPU fence vs legacy monitored fence\n\n"
             f"{c.get('host_name', '?')}, {str(c.get('date', '?'))[:10]}; "
             f"{len(files)} result file(s), each latency beside the machine limit measured in its own run. "
             "With repetitions, the median of the repetitions stands for each run.")
    parts = [
        title,
        "## Reading this report\n\n" + READING,
        "## Machine\n\n" + _machine(files),
        "## Runs and the machine limits each measured\n\n" + _runs(files),
        "## Interrupts: native vs legacy\n\n"
        "suppression = 1 − interrupts(native) / interrupts(legacy), same workload; "
        "spurious = interrupts that released no waiter.\n\n" + _interrupts(files),
        "## Power proxy: the OS interrupt thread\n\n" + _power(files),
        "## Latency beside the machine limit\n\n" + _latency(files),
        "## Checks\n\n" + _checks(files),
        "## Figures\n\n" + _figures(figures, formats),
        "## Reproduce\n\n" + _reproduce(files, reproduce, plot_cmd),
    ]
    return "\n\n".join(parts) + "\n"
