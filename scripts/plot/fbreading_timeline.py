"""fbreading_timeline — the timeline figure's data and reading: one frame of
each workload from the timeline trace (`fencebench run replay --trace FILE`)
its replay run wrote beside its result file (RESULT.json -> RESULT.trace.json;
scripts/plot/fbcatalog.py runs both).  Same contract as fbreading.py: the
reading returns (shape, verdict) from the run's numbers, or None.  Standard
library only.

A frame is the time between two CPU waits of the application thread in the
middle of the run (the throttle every workload has: the CPU waits for frame
n - k before it submits frame n).
"""

import json
import os

from fbreading import _verdict

PATHS = ("native", "legacy")
WORKLOADS = ("frame", "ring-heap", "pipeline")      # the shipped replay files (benchmarks/workloads/)
HELD = "Wait (held on the CPU)"
GPU_WAITS = ("WAIT_UNBLOCKED", "Wait")


def trace_path(result_path):
    """Where the replay run's trace lies: RESULT.json -> RESULT.trace.json."""
    base = result_path[:-5] if result_path.endswith(".json") else result_path
    return base + ".trace.json"


def workload_of(f):
    """The workload a replay result ran: its file's name without .json ('frame')."""
    for r in f.runs:
        name = r.params.get("file")
        if name:
            return os.path.splitext(os.path.basename(name))[0]
    return None


class Track:
    def __init__(self, group, name):
        self.group, self.name = group, name
        self.spans, self.points = [], []     # (ts, dur, name, args) / (ts, id, ph)


def load(path):
    """{path label: [Track]} of a trace file (tracks in the file's order), or None."""
    try:
        with open(path, "r", encoding="utf-8") as fp:
            doc = json.load(fp)
    except (OSError, ValueError):
        return None
    groups, tracks, order = {}, {}, []
    for e in doc.get("traceEvents", []):
        if e.get("ph") == "M" and e.get("name") == "process_name":
            groups[e["pid"]] = e["args"]["name"]
        elif e.get("ph") == "M" and e.get("name") == "thread_name":
            t = Track(groups.get(e["pid"], "?"), e["args"]["name"])
            tracks[e["tid"]] = t
            order.append(t)
    for e in doc.get("traceEvents", []):
        t = tracks.get(e.get("tid"))
        if t is None or e.get("ph") == "M":
            continue
        if e["ph"] == "X":
            t.spans.append((e["ts"], e.get("dur", 0.0), e["name"], e.get("args", {})))
        elif e["ph"] in ("s", "f"):
            t.points.append((e["ts"], e["id"], e["ph"]))
    out = {}
    for t in order:
        label, _, kind = t.group.partition(": ")
        if label in PATHS:
            t.kind = kind
            out.setdefault(label, []).append(t)
    return out


def frame_window(tracks):
    """(t0, t1) in µs between two consecutive CPU-wait ends of the application
    thread: of the middle third of the run's such periods, the one closest to
    their median (a workload may wait twice in one frame), or None."""
    ends = sorted(ts + dur for t in tracks if t.kind == "CPU threads" and t.name.startswith("application")
                  for ts, dur, name, _ in t.spans if name == "CPU wait")
    gaps = [(ends[i + 1] - ends[i], i) for i in range(len(ends) - 1)]
    if len(gaps) < 3:
        return None
    median = sorted(g for g, _ in gaps)[len(gaps) // 2]
    third = gaps[len(gaps) // 3: 2 * len(gaps) // 3 + 1]
    _, i = min(third, key=lambda g: (abs(g[0] - median), g[1]))
    return ends[i], ends[i + 1]


def in_window(spans, w):
    return [s for s in spans if s[0] < w[1] and s[0] + s[1] > w[0]]


def frame_counts(tracks, w):
    """What one frame holds: held waits and their µs, GPU waits, DPCs, WORK spans."""
    c = {"held": 0, "held_us": 0.0, "gpu_waits": 0, "dpcs": 0, "work": 0}
    for t in tracks:
        for ts, dur, name, args in in_window(t.spans, w):
            if name == HELD:
                c["held"] += 1
                c["held_us"] += min(ts + dur, w[1]) - max(ts, w[0])
            elif t.kind == "queues" and name in GPU_WAITS:
                c["gpu_waits"] += 1
            elif name == "DPC":
                c["dpcs"] += 1
            elif t.kind == "queues" and args.get("source", "").startswith("model: the engine") and \
                    name not in ("Signal",) + GPU_WAITS:
                c["work"] += 1
    return c


def frames(files):
    """[(workload, {path: (tracks, window)})] of the replay results whose traces hold a frame."""
    out = []
    for f in files:
        if f.scenario != "replay":
            continue
        w = workload_of(f)
        paths = load(trace_path(f.path))
        if not w or not paths:
            continue
        got = {p: (paths[p], frame_window(paths[p])) for p in PATHS if p in paths}
        if all(p in got and got[p][1] for p in PATHS):
            out.append((w, got))
    return out


def timeline(files):
    rows = frames(files)
    if not rows:
        return None
    parts, dep = [], []
    for w, got in rows:
        n = frame_counts(*got["native"])
        lg = frame_counts(*got["legacy"])
        parts.append(f"{w}: legacy holds {lg['held']} waits on the CPU ({lg['held_us']:.0f} µs summed over its queues), "
                     f"released by {lg['dpcs']} DPCs; native {n['held']} held, {n['gpu_waits']} GPU waits, "
                     f"{n['dpcs']} DPCs")
        if n["held"]:
            dep.append(f"{w}'s native frame holds {n['held']} waits on the CPU")
        if lg["held"] == 0:
            dep.append(f"{w}'s legacy frame holds no wait on the CPU")
        if lg["dpcs"] < n["dpcs"]:
            dep.append(f"{w}'s legacy frame has fewer DPCs ({lg['dpcs']}) than its native one ({n['dpcs']})")
    shape = "One frame (CPU wait to CPU wait, mid-run) of each workload: " + "; ".join(parts) + "."
    return shape, _verdict("native-gpu-fence",
                           "a GPU wait on the native fence is resolved by the engine, where the legacy path holds "
                           "the waiting queue's later work on the CPU until a DPC releases it: the legacy frame "
                           "shows held waits and their DPCs, the native frame none held and no more DPCs", dep)
