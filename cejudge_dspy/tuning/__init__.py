"""Instruction tuning of a task's CE-Judge program (GEPA, zero-shot MIPROv2, SIMBA) against human labels."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# The face is lazy: a name is imported on first use, so that `cejudge optimize --help` builds its flags
# without importing DSPy (tests/cli/test_startup.py). The imports below are the face's list of names, read
# by `__getattr__`; add a name there and to __all__.
if TYPE_CHECKING:
    from cejudge_dspy.tuning._budget import (
        Budget,
        CallEstimate,
        estimate_calls,
        gepa_metric_calls,
        parse_budget,
        split_items,
    )
    from cejudge_dspy.tuning._checkpoint import Checkpoint, checkpoints_root
    from cejudge_dspy.tuning._choices import OPTIMIZERS
    from cejudge_dspy.tuning._dev import DevScore, evaluate_dev
    from cejudge_dspy.tuning._metrics import (
        metric_for,
        pairwise_concordance,
        pairwise_metric,
        pointwise_metric,
    )
    from cejudge_dspy.tuning._optimize import optimize
    from cejudge_dspy.tuning._pairwise_scoring import pairwise_feedback
    from cejudge_dspy.tuning._pointwise_scoring import pointwise_feedback
    from cejudge_dspy.tuning._report import OptimizeReport


def __getattr__(name: str) -> Any:
    import importlib

    module = _where().get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # found once
    return value


def _where() -> dict[str, str]:
    """name -> module, from the TYPE_CHECKING imports above (parsed once)."""
    global _WHERE
    if _WHERE is None:
        import ast
        from pathlib import Path

        tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
        block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
        _WHERE = {a.name: n.module for n in block.body if isinstance(n, ast.ImportFrom) for a in n.names}
    return _WHERE


_WHERE: dict[str, str] | None = None

__all__ = [
    "Budget",
    "CallEstimate",
    "Checkpoint",
    "DevScore",
    "OPTIMIZERS",
    "OptimizeReport",
    "checkpoints_root",
    "estimate_calls",
    "evaluate_dev",
    "gepa_metric_calls",
    "metric_for",
    "optimize",
    "pairwise_concordance",
    "pairwise_feedback",
    "pairwise_metric",
    "parse_budget",
    "pointwise_feedback",
    "pointwise_metric",
    "split_items",
]
