"""Panels: several judges for one run. A member is a (backbone, method, options) triple (`PanelMember`),
from repeated `--lm`/`--method` flags or a panel file; `PanelJudge` has every member judge each item on its
own backbone and `combine` gives the panel's verdict (majority, with "no majority" its own outcome; the mean
of the members' p(A) or scores) and the item's agreement. The run-level statistics (stacking, kappa, alpha,
paired tests) are `cejudge_dspy.metrics.panel_summary`'s."""

import lazy_loader

# Lazy like the judges' face (lazy_loader.attach_stub, the names in __init__.pyi): the CLI reads panel
# files without importing DSPy.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
