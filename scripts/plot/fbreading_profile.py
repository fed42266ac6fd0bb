"""fbreading_profile — readings of the timing-profile figures (fbfig_profile): two sentences
each from the run's numbers, the tolerances stated where they are checked.  Standard library only.
"""

import fbresults as fr
import fbtext as ft

# what the reference H200 machine gave for CPU-held / GPU wait, and the range it expects
# from real hardware (3.3-4.0x without kernel-mode re-entry, up to ~8x with it)
REAL_RATIO = (3.0, 8.0)
TOLERANCE = 0.30          # the target: within +-30 % of the profile
# analogs' operations, in its order: (counter stem, what it is)
ANALOG_OPS = (("write_seen", "GPU write seen by a CPU poll"),
              ("enqueue", "enqueue call (CPU side)"),
              ("event_spin", "signal -> spinning CPU wait"),
              ("event_block", "signal -> blocking CPU wait"),
              ("cpu_gpu_cpu", "CPU write -> GPU wait -> GPU write"),
              ("gpu_wait_sys", "GPU wait, fence in system memory"),
              ("gpu_wait_local", "GPU wait, fence in local memory"),
              ("cpu_held", "CPU-held handoff (legacy)"),
              ("km_submit", "kernel-mode submit call"))


def _ratio(n, lg, key):
    return ft.div(None if lg is None else lg.get(key), None if n is None else n.get(key))


def headline_profiles(files):
    names = fr.profiles(files, "headline")
    got = [(p, *fr.pair_under(files, "headline", p)) for p in names]
    got = [(p, n, lg) for p, n, lg in got if n and lg and n.get("gpu_wait_p50") and lg.get("gpu_wait_p50")]
    if not got:
        return None
    parts = [f"under {p} the native GPU wait took {ft.ns(n.get('gpu_wait_p50'))} at p50 against legacy's "
             f"{ft.ns(lg.get('gpu_wait_p50'))} ({_ratio(n, lg, 'gpu_wait_p50'):.3g}×)" for p, n, lg in got]
    shape = ("The headline's GPU wait " + "; ".join(parts) + ". The interrupts per signal do not depend on "
             "the profile (they are counts); the GPU-wait ratio and the submission latencies do: a profile "
             "adds GPU-side time to both paths and kernel-mode cost to legacy's held work, so the ratio "
             "under the ideal profile is the model's, not a GPU's.")
    calibrated = [(p, n, lg) for p, n, lg in got if p != "ideal"]
    if not calibrated:
        return shape, ("No calibrated profile ran here: real hardware gives a legacy/native GPU-wait ratio of "
                       f"about {REAL_RATIO[0]:g}–{REAL_RATIO[1]:g}×, which the ideal profile does not "
                       "model.")
    out = [(p, _ratio(n, lg, "gpu_wait_p50")) for p, n, lg in calibrated]
    bad = [f"{p} gives {r:.3g}×" for p, r in out if not REAL_RATIO[0] <= r <= REAL_RATIO[1]]
    if not bad:
        return shape, (f"This is what a real machine predicts: under {', '.join(p for p, _ in out)} the ratio is "
                       f"within the {REAL_RATIO[0]:g}–{REAL_RATIO[1]:g}× real hardware gives.")
    return shape, (f"Real hardware gives a legacy/native GPU-wait ratio of about {REAL_RATIO[0]:g}–"
                   f"{REAL_RATIO[1]:g}×; this run departs from it: {'; '.join(bad)}.")


def analogs(files):
    run = fr.only_run(files, "analogs")
    if run is None:
        return None
    rows = [(k, label, run.get(f"{k}_vs_profile")) for k, label in ANALOG_OPS]
    rows = [(k, label, v) for k, label, v in rows if v is not None]
    if not rows:
        return None
    inside = [k for k, _, v in rows if 1 - TOLERANCE <= v <= 1 + TOLERANCE]
    outside = [f"{label} {v:.2f}×" for k, label, v in rows if not 1 - TOLERANCE <= v <= 1 + TOLERANCE]
    profile = run.params.get("profile", "?")
    shape = (f"Under profile {profile}, {len(inside)} of {len(rows)} operations came within ±30 % of the real "
             f"machine's p50" + (f"; outside: {', '.join(outside)}." if outside else "."))
    if not outside:
        return shape, "This is what a calibrated profile should give: every operation within ±30 %."
    return shape, ("A profile is checked by every operation within ±30 %; this run departs from it where the "
                   "model's own costs on this machine (a futex wake-to-run of a thread it wakes, its own "
                   "kernel-mode path, its own enqueue call) exceed or fall short of the real machine's, which "
                   "the analogs notes quantify.")
