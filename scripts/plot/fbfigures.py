"""fbfigures — draws the catalog's figures with matplotlib (Agg backend).

fbplot imports this module only when it draws, so reading, validating and
the report's text need no plotting stack.  The figures themselves live in
fbfig_fence.py (the two fence paths), fbfig_submit.py (work submission) and
fbfig_machine.py (the machine's limits, false sharing), fbfig_preempt.py
(preemption, TDR) and fbfig_workload.py (the seed's workloads); fbcatalog.FIGURES
names each one's function as "module.function".
"""

import importlib

import fbdraw

describe = fbdraw.describe
close = fbdraw.close


def draw(spec, files):
    """spec's matplotlib Figure from the loaded result files, or None when they hold nothing for it."""
    module, name = spec.draw.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)(files)
