"""cejudge-dspy: checklist-engineered multilingual LLM judges (CE-Judge, CheckEval) as DSPy programs.

Judge one item: `PairwiseJudge` / `PointwiseJudge` (or `build_program(task, method)`) under
`use_backbone(...)`. Judge a dataset into a run and measure it: `evaluate(task=..., data=..., backbone=...)`
(a `BackboneOptions` or a spec); tune a program: `optimize(task=..., backbone=...)`;
compare two runs: `compare_runs`; calibrate one: `calibrate`; merge shards: `merge_runs`.
"""

from __future__ import annotations

import lazy_loader

__version__ = "0.1.0"

# Lazy (lazy_loader.attach_stub, the names in __init__.pyi): `import cejudge_dspy` and the CLI's start-up
# do not import DSPy's stack, and dir(cejudge_dspy) lists the public API. `evaluate` is the package of that
# name, which is callable: `cejudge_dspy.evaluate(...)` runs `cejudge_dspy.evaluate.evaluate(...)`.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
