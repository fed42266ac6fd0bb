"""fbfig_profile — figures of timing profiles: the headline under each profile side by side,
and `analogs` (the model beside a real machine's measurements).

Each function takes the loaded result files and returns a matplotlib Figure,
or None when the inputs hold nothing to draw.  Registered in fbcatalog.FIGURES.
"""

import fbdraw as d
import fbresults as fr
import fbtext as ft
from fbreading_profile import ANALOG_OPS, TOLERANCE



def headline_profiles(files):
    """GPU-wait p50, native and legacy, and their ratio, under each timing profile of the headline."""
    names = fr.profiles(files, "headline")
    pairs = [(p, *fr.pair_under(files, "headline", p)) for p in names]
    pairs = [(p, n, lg) for p, n, lg in pairs if n and lg and "gpu_wait_p50" in n.counters]
    if not pairs:
        return None
    fig, (aw, ak) = d.figure(2, 11, 4.4)
    x = range(len(pairs))
    for off, which, color, label in ((-0.2, 1, d.NATIVE, "native (HW wait)"), (0.2, 2, d.LEGACY, "legacy (CPU-held)")):
        vals = [pr[which].get("gpu_wait_p50", 0) / 1e3 for pr in pairs]
        aw.bar([i + off for i in x], vals, width=0.4, color=color, label=label)
    for i, (_, n, lg) in enumerate(pairs):
        r = ft.div(lg.get("gpu_wait_p50"), n.get("gpu_wait_p50"))
        top = max(n.get("gpu_wait_p50", 0), lg.get("gpu_wait_p50", 0)) / 1e3
        aw.annotate(f"legacy/native {r:.3g}×" if r else "n/a", (i, top), textcoords="offset points",
                    xytext=(0, 4), ha="center", fontsize=8)
    aw.set_yscale("log")
    aw.set_xticks(list(x), [p for p, _, _ in pairs])
    aw.set_xlabel("timing profile (ideal: the model's own speed)")
    aw.set_ylabel("GPU wait p50, A's signal to B past its wait (µs, log)")
    aw.set_title("GPU wait under each timing profile", fontsize=9)
    aw.legend(fontsize=8, loc="upper left")
    for off, which, color, label in ((-0.2, 1, d.NATIVE, "native"), (0.2, 2, d.LEGACY, "legacy")):
        vals = [pr[which].get("km_submit_p50", 0) / 1e3 for pr in pairs]
        ak.bar([i + off for i in x], vals, width=0.4, color=color, label=label)
    ak.set_xticks(list(x), [p for p, _, _ in pairs])
    ak.set_xlabel("timing profile (ideal: the model's own speed)")
    ak.set_ylabel("kernel-mode submission p50, submit to engine start (µs)")
    ak.set_title("Kernel-mode submission under each timing profile", fontsize=9)
    ak.legend(fontsize=8, loc="upper left")
    return d.finish(fig, files, {"headline"})


def analogs(files):
    """Model / profile of each operation analogs ran, with the +-30 % target band."""
    run = fr.only_run(files, "analogs")
    if run is None:
        return None
    rows = [(label, run.get(f"{k}_vs_profile")) for k, label in ANALOG_OPS]
    rows = [(label, v) for label, v in rows if v is not None]
    if not rows:
        return None
    fig, (ax,) = d.figure(1, 8.5, 4.8)
    ys = range(len(rows))
    colors = [d.NATIVE if 1 - TOLERANCE <= v <= 1 + TOLERANCE else d.LEGACY for _, v in rows]
    ax.barh(list(ys), [v for _, v in rows], color=colors, height=0.6)
    ax.axvspan(1 - TOLERANCE, 1 + TOLERANCE, color=d.FLOOR, alpha=0.15, label="target: within ±30 %")
    ax.axvline(1.0, color=d.LIMIT, linestyle="--", linewidth=1)
    for i, (_, v) in enumerate(rows):
        ax.annotate(f"{v:.2f}×", (v, i), textcoords="offset points", xytext=(4, -3), fontsize=8)
    ax.set_yticks(list(ys), [label for label, _ in rows])
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("model p50 / the real machine's p50 (ratio, log scale)")
    ax.set_ylabel("operation (calibrate's probe)")
    ax.set_title(f"The model under profile {run.params.get('profile', '?')} beside its real machine", fontsize=9)
    ax.legend(fontsize=8, loc="lower right")
    return d.finish(fig, files, {"analogs"})
