"""Judging a task's items into a run directory, and measuring it: `evaluate(...)`.

`cejudge_dspy.evaluate(task="chat", data="dev.jsonl", backbone="simulated:0", out="runs/dev")` judges the
items (concurrently, resumably, in this process or on Ray), writes results.jsonl and summary.json and
returns an `Evaluation` (its records, summary and paths); `cejudge evaluate` is the same call. The package
also holds the local runner, merging shards, joining single judges' runs into a panel run, and judging on
Ray.

This package is callable: `cejudge_dspy.evaluate(...)` is `cejudge_dspy.evaluate.evaluate(...)`, so the
root's `evaluate` is one name whether the package was imported first or not.
"""

from __future__ import annotations

import sys
import types
from typing import Any

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)


class _CallableFace(types.ModuleType):
    """`cejudge_dspy.evaluate(...)` calls `evaluate`: importing a subpackage sets it as its parent's
    attribute, which would otherwise hide a function of the same name on the root."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.evaluate(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableFace
