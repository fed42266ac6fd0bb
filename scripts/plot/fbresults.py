"""fbresults — read fencebench result files (Google Benchmark JSON schema).

A result file is what `fencebench run|sweep ... --format json --out FILE`
writes: {"context": {...}, "benchmarks": [...]}.  Each benchmark entry carries
flat counters (interrupts_per_signal, cpu_wait_p50, cpu_wait_p50_limit, ...)
and a "fencebench" block naming its scenario, section ("", "power",
"latency"), path (native | legacy), sweep point and parameters.

load() validates a file completely before anything is drawn, and raises
InputError with one line naming the file and the bad part.  With several
repetitions (each entry says how many: `--target-ci` repeats each point as it
needs) the median aggregate stands for each run (Google Benchmark's
"<run_name>_median" entry; its mean aggregate is kept beside it as Run.mean);
otherwise the single iteration entry does.  Its
intervals are counters too: M_ci_lo, M_ci_hi, M_ci_level (the coverage the
interval has) and, where it is the range of too few repetitions for 95 %,
M_ci_range (how many), and on native runs M_vs_legacy with its own (fbtext.pm
and fbtext.vs_legacy show them, a range called one).  A file written before
intervals said their coverage has its medians' intervals drawn again here
from the repetitions' values it keeps (_recompute_intervals).

Standard library only: importing this module does not import matplotlib.
"""

import json
import math
import os
from dataclasses import dataclass, field


class InputError(Exception):
    """A missing or malformed input file; str() is one line naming it."""


@dataclass
class Run:
    """One scenario x section x path x sweep point, with its counters."""

    scenario: str
    section: str          # "" for the main table, "power", "latency", ...
    path: str             # "native" | "legacy" | "" (scenarios that compare none)
    point: str            # "" outside sweeps, "waited=0.5" in a sweep
    params: dict          # every parameter of this point, as strings
    counters: dict        # counter name -> float
    units: dict           # counter name -> unit string
    limits: dict          # latency counter -> machine-limit name
    repetitions: int
    source: str           # the file it came from
    stddev: dict = field(default_factory=dict)   # counter -> stddev over the repetitions (reps > 1)
    mean: dict = field(default_factory=dict)     # the mean aggregate's counters, its intervals and
                                                 # verdicts (name_agree) among them (reps > 1)

    def get(self, name, default=None):
        return self.counters.get(name, default)


@dataclass
class ResultFile:
    path: str
    context: dict
    runs: list = field(default_factory=list)

    @property
    def scenario(self):
        return self.context.get("scenario", "")


def _fail(path, what):
    raise InputError(f"{path}: {what}")


def _read_json(path):
    try:
        with open(path, "r", encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        _fail(path, "no such file")
    except IsADirectoryError:
        _fail(path, "is a directory, not a result file")
    except (OSError, UnicodeDecodeError) as e:
        _fail(path, f"cannot read: {getattr(e, 'strerror', None) or e}")
    if not text.strip():
        _fail(path, "empty file (an interrupted run? fencebench writes --out atomically)")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        _fail(path, f"not valid JSON (line {e.lineno} column {e.colno}: {e.msg})")
    except RecursionError:
        _fail(path, "not valid JSON (nested too deeply)")


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _str_dict(path, where, v):
    if v is None:
        return {}
    if not isinstance(v, dict):
        _fail(path, f"{where} is not an object")
    return {str(k): str(x) for k, x in v.items()}


def _entry_run(path, i, b, reps):
    """(Run, "median" | "stddev" | "iteration") of benchmarks[i], or None when it is not
    an entry that stands for its run (single repetitions, other aggregates)."""
    if not isinstance(b, dict):
        _fail(path, f"benchmarks[{i}] is not an object")
    name = b.get("name")
    if not isinstance(name, str) or not name:
        _fail(path, f'benchmarks[{i}] has no "name"')
    fb = b.get("fencebench")
    if not isinstance(fb, dict):
        _fail(path, f'benchmarks[{i}] ("{name}") has no "fencebench" block: not written by fencebench')
    for key in ("scenario", "section", "path"):
        if not isinstance(fb.get(key, ""), str):
            _fail(path, f'benchmarks[{i}] ("{name}"): fencebench.{key} is not a string')
    if not fb.get("scenario"):
        _fail(path, f'benchmarks[{i}] ("{name}"): fencebench.scenario is missing')
    run_type = b.get("run_type", "iteration")
    kind = b.get("aggregate_name") if run_type == "aggregate" else "iteration"
    if _is_number(b.get("repetitions")) and b["repetitions"] >= 1:
        reps = int(b["repetitions"])       # its own count: --target-ci repeats each point as it needs
    if kind not in (("median", "stddev", "mean") if reps > 1 else ("iteration",)):
        return None
    counters = {}
    for k, v in b.items():
        if _is_number(v) and k not in ("repetitions", "repetition_index", "family_index",
                                       "per_family_instance_index"):
            if math.isfinite(float(v)):     # NaN: not measured (a limit on one CPU)
                counters[k] = float(v)
    return Run(scenario=fb["scenario"], section=fb.get("section", ""), path=fb.get("path", ""),
               point=str(fb.get("point", "")),
               params=_str_dict(path, f'benchmarks[{i}].fencebench.params', fb.get("params")),
               counters=counters,
               units=_str_dict(path, f'benchmarks[{i}].fencebench.units', fb.get("units")),
               limits=_str_dict(path, f'benchmarks[{i}].fencebench.limits', fb.get("limits")),
               repetitions=reps, source=path), kind


def _rank_coverage(n, k):
    """The coverage of order statistics (k, n-k+1) for the median: 1 - 2 P(Bin(n, 1/2) < k)."""
    return 1.0 - 2.0 * sum(math.comb(n, j) for j in range(k)) / 2.0 ** n


def _median_interval(values):
    """(lo, hi, level, runs): the range of fewer than 6 values (runs = their number, level what a
    range covers), else the widest-ranked order statistics that still reach 95 % (runs = None)."""
    v, n = sorted(values), len(values)
    if n < 6:
        return v[0], v[-1], _rank_coverage(n, 1), n
    k = 1
    while _rank_coverage(n, k + 1) >= 0.95:
        k += 1
    return v[k - 1], v[n - k], _rank_coverage(n, k), None


def _recompute_intervals(rf, benches):
    """A file written before the intervals said their coverage (no M_ci_level on its medians):
    each median's interval again, from its repetitions' values alone (the iteration entries the
    file keeps), so that 3 repetitions show their range, called one (fbtext.pm), not a "95 %"
    bootstrap interval; and native ÷ legacy from the two (MOVER on the log scale)."""
    if any(k.endswith("_ci_level") for r in rf.runs for k in r.counters):
        return
    values = {}
    for b in benches:
        fb = b.get("fencebench") if isinstance(b, dict) else None
        if not isinstance(fb, dict) or b.get("run_type", "iteration") != "iteration":
            continue
        key = (fb.get("scenario"), fb.get("section", ""), fb.get("path", ""), str(fb.get("point", "")))
        for k, v in b.items():
            if _is_number(v) and math.isfinite(float(v)):
                values.setdefault((key, k), []).append(float(v))
    by_key = {}
    for run in rf.runs:
        key = (run.scenario, run.section, run.path, run.point)
        by_key[key] = run
        for m in list(run.units) + ["real_time", "cpu_time"]:
            got = values.get((key, m), [])
            if m not in run.counters or len(got) < 2:
                continue
            lo, hi, level, runs = _median_interval(got)
            run.counters.update({f"{m}_ci_lo": lo, f"{m}_ci_hi": hi, f"{m}_ci_level": level})
            run.counters.pop(f"{m}_ci_range", None)
            if runs is not None or lo == hi:
                run.counters[f"{m}_ci_range"] = float(runs or len(got))
    for (scenario, section, path, point), n in by_key.items():
        l = by_key.get((scenario, section, "legacy", point)) if path == "native" else None
        for m in list(n.units) if l else []:
            c = n.counters
            r = c.get(f"{m}_vs_legacy")
            a, alo, ahi = (c.get(f"{m}{s}") for s in ("", "_ci_lo", "_ci_hi"))
            b, blo, bhi = (l.counters.get(f"{m}{s}") for s in ("", "_ci_lo", "_ci_hi"))
            if r is None or None in (a, alo, ahi, b, blo, bhi) or min(a, alo, b, blo) <= 0:
                continue
            d = math.log(a / b)
            c[f"{m}_vs_legacy_ci_lo"] = math.exp(d - math.hypot(math.log(a / alo), math.log(bhi / b)))
            c[f"{m}_vs_legacy_ci_hi"] = math.exp(d + math.hypot(math.log(ahi / a), math.log(b / blo)))
            runs = c.get(f"{m}_ci_range") or l.counters.get(f"{m}_ci_range")
            if runs:
                c[f"{m}_vs_legacy_ci_range"] = runs
    for run in rf.runs:   # what is left of zero width (a ratio of zeros) is no interval either
        for k in [k for k in run.counters if k.endswith("_ci_lo")]:
            m = k[:-len("_ci_lo")]
            if run.counters.get(f"{m}_ci_hi") == run.counters[k] and f"{m}_ci_range" not in run.counters:
                run.counters[f"{m}_ci_range"] = float(run.repetitions)


def load(path):
    """The validated ResultFile at path; InputError (one line) when it is not one."""
    doc = _read_json(path)
    if not isinstance(doc, dict):
        _fail(path, "not a fencebench result file (the top level is not a JSON object)")
    ctx, benches = doc.get("context"), doc.get("benchmarks")
    if not isinstance(ctx, dict):
        _fail(path, 'not a fencebench result file (no "context" object)')
    if not isinstance(benches, list):
        _fail(path, 'not a fencebench result file (no "benchmarks" array)')
    if not benches:
        _fail(path, 'no results: the "benchmarks" array is empty')
    reps = ctx.get("repetitions", 1)
    reps = int(reps) if _is_number(reps) and reps >= 1 else 1
    rf = ResultFile(path=path, context=ctx)
    seen, spread, means = {}, {}, {}
    for i, b in enumerate(benches):
        got = _entry_run(path, i, b, reps)
        if got is None:
            continue
        run, kind = got
        key = (run.scenario, run.section, run.path, run.point)
        if kind in ("stddev", "mean"):
            (spread if kind == "stddev" else means)[key] = run.counters
            continue
        if key in seen:
            _fail(path, f'benchmarks[{i}] repeats benchmarks[{seen[key]}] ("{b["name"]}")')
        seen[key] = i
        rf.runs.append(run)
    for run in rf.runs:
        run.stddev = spread.get((run.scenario, run.section, run.path, run.point), {})
        run.mean = means.get((run.scenario, run.section, run.path, run.point), {})
    if reps > 1:
        _recompute_intervals(rf, benches)
    if not rf.runs:
        want = "median aggregates" if reps > 1 else "iteration entries"
        _fail(path, f"no {want} among {len(benches)} benchmarks")
    return rf


def load_all(paths):
    """Every file loaded; InputError on the first bad one, or when two files hold the same run."""
    files, owner, seen = [], {}, {}
    for p in paths:
        real = os.path.realpath(p)
        if real in seen:
            _fail(p, f"given twice (also as {seen[real]})" if seen[real] != p else "given twice")
        seen[real] = p
        rf = load(p)
        for r in rf.runs:
            key = (r.scenario, r.section, r.path, r.point)
            if key in owner:
                label = "/".join(x for x in (r.scenario, r.section, r.path, r.point) if x)
                _fail(p, f"{label} is also in {owner[key]}: give each run once")
            owner[key] = p
        files.append(rf)
    return files


def runs_of(files, scenario, section="", path=None):
    """Runs of scenario/section (and path, when given), in file and entry order."""
    return [r for f in files for r in f.runs
            if r.scenario == scenario and r.section == section and (path is None or r.path == path)]


def pair(files, scenario, section="", point=""):
    """(native, legacy) runs of one point; either may be None."""
    got = {r.path: r for r in runs_of(files, scenario, section) if r.point == point}
    return got.get("native"), got.get("legacy")


def first_point(files, scenario, section=""):
    """The point of scenario's first run ("" outside sweeps and without --set), or None."""
    runs = runs_of(files, scenario, section)
    return runs[0].point if runs else None


def only_pair(files, scenario, section=""):
    """(native, legacy) of a scenario run at one point, whatever --set named it; (None, None)."""
    point = first_point(files, scenario, section)
    return (None, None) if point is None else pair(files, scenario, section, point)


def only_run(files, scenario, section=""):
    """The first run of scenario/section (scenarios that compare no paths), or None."""
    runs = runs_of(files, scenario, section)
    return runs[0] if runs else None


def profile_of(run):
    """The timing profile a run ran under (its `profile` parameter; files made before
    profiles existed ran without one: "ideal")."""
    return run.params.get("profile", "ideal")


def with_profile(files, name="ideal"):
    """The files whose runs ran under timing profile name (default: the ideal one)."""
    return [f for f in files if f.runs and all(profile_of(r) == name for r in f.runs)]


def profiles(files, scenario):
    """The timing profiles scenario's runs ran under, ideal first, then in file order."""
    seen = []
    for r in runs_of(files, scenario):
        if profile_of(r) not in seen:
            seen.append(profile_of(r))
    return sorted(seen, key=lambda p: p != "ideal")


def pair_under(files, scenario, profile, section=""):
    """(native, legacy) of scenario's first point run under profile; (None, None)."""
    runs = [r for r in runs_of(files, scenario, section) if profile_of(r) == profile]
    if not runs:
        return None, None
    got = {r.path: r for r in runs if r.point == runs[0].point}
    return got.get("native"), got.get("legacy")


def as_float(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def sweep_points(files, scenario, axis, section=""):
    """The sweep of scenario along parameter axis, grouped by the other parameters.

    Returns {other-params label: [(x, native run, legacy run), ...] sorted by x}.
    The label is "" when no other parameter varies.  A scenario that compares no
    paths has its run in the native slot and None in the legacy one.
    """
    runs = [r for r in runs_of(files, scenario, section) if as_float(r.params.get(axis)) is not None]
    varying = set()
    for r in runs:
        for k, v in r.params.items():
            if k != axis and any(o.params.get(k) != v for o in runs):
                varying.add(k)
    groups = {}
    for r in runs:
        label = ", ".join(f"{k}={r.params.get(k, '?')}" for k in sorted(varying))
        x = as_float(r.params[axis])
        slot = groups.setdefault(label, {}).setdefault(x, [None, None])
        slot[1 if r.path == "legacy" else 0] = r
    return {label: sorted(((x, n, l) for x, (n, l) in pts.items()), key=lambda t: t[0])
            for label, pts in groups.items()}


def series(pts, which, name, skip=None):
    """[(x, counter name)] of the native (which=1) or legacy (which=2) runs of sweep_points pts
    that hold it, skipping the runs skip(run) is true for."""
    return [(p[0], p[which].counters[name]) for p in pts
            if p[which] is not None and name in p[which].counters and not (skip and skip(p[which]))]


def by_param(files, scenario, key, section=""):
    """{value of parameter key: (native, legacy)} of every point of scenario, in run order;
    a scenario that compares no paths has its run in the native slot."""
    out = {}
    for r in runs_of(files, scenario, section):
        out.setdefault(r.params.get(key, ""), [None, None])[1 if r.path == "legacy" else 0] = r
    return {k: tuple(v) for k, v in out.items()}
