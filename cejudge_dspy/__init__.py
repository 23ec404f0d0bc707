"""cejudge-dspy: checklist-engineered multilingual LLM judges (CE-Judge, CheckEval) as DSPy programs."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

# Lazy exports keep `import cejudge_dspy` (and the CLI's start-up) from importing DSPy's whole stack.
_EXPORTS = {
    "PairwiseJudge": "judges.cejudge",
    "PointwiseJudge": "judges.cejudge",
    "build_program": "judges",
    "JudgeOptions": "judges",
    "program_for_task": "judges",
    "JudgeResult": "judges.verdicts",
    "Item": "data",
    "make_lm": "backbones",
    "use_backbone": "backbones",
    "load_task": "tasks",
    "available_tasks": "tasks",
    "load_items": "data",
    "CEJudgeError": "errors",
    "on_progress": "usage",
    "StageProgress": "usage",
    "JudgeMetric": "bridges",
    "inspect_scorer": "bridges",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'cejudge_dspy' has no attribute {name!r}")


__all__ = sorted(_EXPORTS)
