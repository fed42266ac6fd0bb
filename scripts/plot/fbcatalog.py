"""fbcatalog — what `make report` runs and draws: the standard set, one place.

RUNS      every fencebench run of the report: the JSON file it writes, its
          scenario, and its arguments for the standard report and for QUICK=1
          (fewer points and iterations, the same figures).
FIGURES   every figure: its file name, title, the scenarios whose JSON it reads,
          the function that draws it (module.function, imported only when
          drawing: matplotlib) and the function that reads it in two sentences
          (fbreading, standard library).
NOT_DRAWN scenarios of `fencebench list` with no figure, each with the reason.

tests/test_plot.c compares `fencebench list` with this catalog: a scenario
neither drawn nor listed in NOT_DRAWN, or without a run, fails the test.
Adding a scenario's figure is one RUNS line, one FIGURES line, a draw function,
a reading function and a fixture (CONTRIBUTING.md, "Adding a figure").

Standard library only.
"""

from dataclasses import dataclass

import fbreading as rd
import fbreading_preempt as rp
import fbreading_profile as rq
import fbreading_timeline as rt

# The calibrated timing profile the report runs beside the ideal one (benchmarks/profiles/).
PROFILE = "h200-pcie5"


@dataclass(frozen=True)
class RunSpec:
    stem: str             # writes <stem>.json
    scenario: str
    full: tuple           # fencebench arguments of the standard report
    quick: tuple          # ... of QUICK=1 (under a minute for the whole set)
    trace: bool = False   # also --trace <stem>.trace.json (fbreading_timeline.trace_path)

    def args(self, quick):
        return list(self.quick if quick else self.full)


@dataclass(frozen=True)
class FigureSpec:
    name: str             # <name>.png, <name>.svg
    title: str            # caption title and alt text
    scenarios: tuple      # the scenarios whose results it reads
    draw: str             # "module.function": files -> matplotlib Figure or None
    read: object          # files -> (what the shape shows, what the seeds predict) or None


def _run(stem, full, quick, trace=False):
    return RunSpec(stem, full[1], tuple(full), tuple(quick), trace)


RUNS = [
    _run("headline", ("run", "headline"),
         ("run", "headline", "--set", "signals=2000", "--set", "waits=500", "--set", "rate_signals=200")),
    # The headline again under a calibrated timing profile: the report shows both side by side.
    RunSpec(f"headline-{PROFILE}", "headline", ("run", "headline", "--set", f"profile={PROFILE}"),
            ("run", "headline", "--set", "signals=2000", "--set", "waits=500", "--set", "rate_signals=200",
             "--set", f"profile={PROFILE}")),
    _run("analogs", ("run", "analogs", "--set", f"profile={PROFILE}"),
         ("run", "analogs", "--set", f"profile={PROFILE}", "--set", "rounds=100")),
    _run("limits", ("run", "limits", "--iterations", "1000"),
         ("run", "limits", "--iterations", "100")),
    _run("irq-suppression",
         ("sweep", "irq-suppression", "--grid", "waited=0,0.1,0.25,0.5,0.75,1", "--iterations", "20000"),
         ("sweep", "irq-suppression", "--grid", "waited=0,0.1,0.5,1", "--iterations", "500")),
    _run("cpu-wait", ("run", "cpu-wait", "--iterations", "20000"),
         ("run", "cpu-wait", "--iterations", "500")),
    _run("gpu-wait", ("run", "gpu-wait", "--iterations", "20000"),
         ("run", "gpu-wait", "--iterations", "500")),
    _run("submit-latency", ("run", "submit-latency"),
         ("run", "submit-latency", "--iterations", "2000", "--set", "parked_submissions=100")),
    _run("doorbell-thrash",
         ("sweep", "doorbell-thrash", "--grid", "queues=1,2,4,8,16,32,64", "--set", "doorbells=4",
          "--iterations", "20000"),
         ("sweep", "doorbell-thrash", "--grid", "queues=2,4,8,32", "--set", "doorbells=4",
          "--iterations", "1000")),
    # Two runs: the scans at 10000 and 100000 fences cost ~10 and ~120 ms per interrupt, so
    # the large points take fewer signals.
    _run("isr-scaling",
         ("sweep", "isr-scaling", "--grid", "fences=10,100,1000",
          "--grid", "payload=array,null,log,log-overrun", "--iterations", "300"),
         ("sweep", "isr-scaling", "--grid", "fences=10,1000",
          "--grid", "payload=array,null,log,log-overrun", "--iterations", "50")),
    _run("isr-scaling-large",
         ("sweep", "isr-scaling", "--grid", "fences=10000,100000",
          "--grid", "payload=array,null,log,log-overrun", "--iterations", "20"),
         ("sweep", "isr-scaling", "--grid", "fences=10000",
          "--grid", "payload=array,log", "--iterations", "10")),
    _run("log-overrun",
         ("sweep", "log-overrun", "--grid", "log_bytes=256,512,1024,2048,4096,8192,16384",
          "--grid", "rate=5000,50000,200000", "--iterations", "2000"),
         ("sweep", "log-overrun", "--grid", "log_bytes=256,2048,16384",
          "--grid", "rate=5000,200000", "--iterations", "1000")),
    _run("fence-stride", ("sweep", "fence-stride", "--grid", "stride=8,16,32,64,128,256"),
         ("sweep", "fence-stride", "--grid", "stride=8,64,256", "--iterations", "500000")),
    _run("cross-adapter", ("sweep", "cross-adapter", "--grid", "waiter=gpu,cpu", "--iterations", "5000"),
         ("sweep", "cross-adapter", "--grid", "waiter=gpu,cpu", "--iterations", "200")),
    _run("idle", ("sweep", "idle", "--grid", "rate=100,300,1000,3000,10000,30000", "--iterations", "1000"),
         ("sweep", "idle", "--grid", "rate=300,3000,30000", "--iterations", "150")),
    _run("preempt", ("sweep", "preempt", "--grid", "granularity=none,dma,primitive,triangle,pixel,shader",
                     "--iterations", "60"),
         ("sweep", "preempt", "--grid", "granularity=none,dma,triangle,shader", "--iterations", "6")),
    _run("tdr", ("run", "tdr", "--iterations", "5"), ("run", "tdr", "--iterations", "1")),
    # The seed's workloads, both paths side by side (the default --path both): ~6.6 s each
    # with the standard 3 repetitions, ~0.7 s each in QUICK.
    *(_run(w, ("run", w, "--duration", "1s"), ("run", w, "--duration", "200ms")) for w in rd.WORKLOADS),
    # The timeline figure: a short replay of each shipped workload file with its trace (traced runs
    # are not measured runs: the trace costs time).  async-compute has no file (replay.h).
    *(_run(f"timeline-{w}", ("run", "replay", "--set", f"file=benchmarks/workloads/{w}.json", "--duration", "50ms"),
           ("run", "replay", "--set", f"file=benchmarks/workloads/{w}.json", "--duration", "50ms"), trace=True)
      for w in rt.WORKLOADS),
]

FIGURES = [
    FigureSpec("headline", "The headline: native vs legacy at 10 % CPU-waited signals",
               ("headline",), "fbfig_fence.headline", rd.headline),
    FigureSpec("limits", "The machine's limits: every latency's yardstick",
               ("limits",), "fbfig_machine.limits", rd.limits),
    FigureSpec("irq_per_signal", "Interrupts per GPU signal vs waited fraction",
               ("irq-suppression",), "fbfig_fence.irq_per_signal", rd.irq_per_signal),
    FigureSpec("os_power", "OS interrupt-thread wake-ups per signal and idle fraction vs waited fraction",
               ("irq-suppression",), "fbfig_fence.os_power", rd.os_power),
    FigureSpec("gpu_wait", "GPU wait latency CDF: native hardware wait vs legacy CPU-held wait",
               ("gpu-wait",), "fbfig_fence.gpu_wait", rd.gpu_wait),
    FigureSpec("cpu_wait", "CPU wait latency CDF: GPU signal to blocked CPU waiter running",
               ("cpu-wait",), "fbfig_fence.cpu_wait", rd.cpu_wait),
    FigureSpec("submit_latency",
               "Submission latency CDF: user-mode doorbell vs kernel-mode, engine polling and parked",
               ("submit-latency",), "fbfig_submit.submit_latency", rd.submit_latency),
    FigureSpec("doorbell_thrash", "Doorbell thrash: submission p50 and victimizations vs queues per doorbell",
               ("doorbell-thrash",), "fbfig_submit.doorbell_thrash", rd.doorbell_thrash),
    FigureSpec("isr_scaling", "ISR cost per interrupt vs fences with waiters, per interrupt payload",
               ("isr-scaling",), "fbfig_fence.isr_scaling", rd.isr_scaling),
    FigureSpec("log_overrun", "Native fence log overruns per 1000 signals vs log size, per signal rate",
               ("log-overrun",), "fbfig_fence.log_overrun", rd.log_overrun),
    FigureSpec("fence_stride", "Fence stride: signal cost of two engines on neighbouring fences",
               ("fence-stride",), "fbfig_machine.fence_stride", rd.fence_stride),
    FigureSpec("cross_adapter", "Cross-adapter fences: interrupts, B's OS work and wait latency",
               ("cross-adapter",), "fbfig_fence.cross_adapter", rd.cross_adapter),
    FigureSpec("idle_power", "Idle power vs signal rate: OS-thread wake-ups and modeled power",
               ("idle",), "fbfig_fence.idle_power", rd.idle_power),
    FigureSpec("preempt_latency", "High-priority compositor frame latency by preemption granularity",
               ("preempt",), "fbfig_preempt.preempt_latency", rp.preempt_latency),
    FigureSpec("preempt_missed", "Missed vsyncs of a 60 Hz compositor by preemption granularity",
               ("preempt",), "fbfig_preempt.preempt_missed", rp.preempt_missed),
    FigureSpec("tdr", "TDR: from a hang to waiters released and the survivor running",
               ("tdr",), "fbfig_preempt.tdr", rp.tdr),
    FigureSpec("workloads", "The seed's workloads: frames/s and interrupts per frame, native vs legacy",
               rd.WORKLOADS, "fbfig_workload.workloads", rd.workloads),
    FigureSpec("headline_profiles", "The headline's GPU wait and kernel-mode submission under each timing profile",
               ("headline",), "fbfig_profile.headline_profiles", rq.headline_profiles),
    FigureSpec("analogs", "A timing profile checked: the model's operations beside the real machine's",
               ("analogs",), "fbfig_profile.analogs", rq.analogs),
    FigureSpec("timeline", "One frame of each workload on the timeline: native above legacy",
               ("replay",), "fbfig_timeline.timeline", rt.timeline),
]

NOT_DRAWN = {
    "selftest": "synthetic latencies that exercise the harness itself (tests, an example scenario): "
                "nothing about fences to publish",
}


def figure(name):
    """The FigureSpec called name, or None."""
    return next((f for f in FIGURES if f.name == name), None)


def uncovered(scenarios):
    """Scenarios (of `fencebench list`) with no figure or no run, and not in NOT_DRAWN:
    [(scenario, what is missing)]."""
    drawn = {s for f in FIGURES for s in f.scenarios}
    run = {r.scenario for r in RUNS}
    out = []
    for s in scenarios:
        if s in NOT_DRAWN:
            continue
        missing = [w for w, ok in (("figure", s in drawn), ("run", s in run)) if not ok]
        if missing:
            out.append((s, " and ".join(missing)))
    return out


def listing():
    """The catalog as lines: 'run STEM SCENARIO', 'figure NAME SCEN,SCEN', 'not-drawn SCENARIO REASON'."""
    lines = [f"run {r.stem} {r.scenario}" for r in RUNS]
    lines += [f"figure {f.name} {','.join(f.scenarios)}" for f in FIGURES]
    lines += [f"not-drawn {s} {why}" for s, why in NOT_DRAWN.items()]
    return lines
