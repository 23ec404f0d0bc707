"""Judging methods by name: `--method cejudge|direct|checkeval|cejudge-checkeval`.

A method is a factory `(task spec, options) -> dspy.Module` whose `acall(**item.inputs())` returns a
prediction with `.result` (a JudgeResult). Modules register their own methods, so adding one is one
decorated function.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

import dspy

from .errors import TaskError
from .tasks import TaskSpec, load_task

Factory = Callable[..., dspy.Module]
_METHODS: dict[str, Factory] = {}


def register(name: str) -> Callable[[Factory], Factory]:
    def wrap(factory: Factory) -> Factory:
        _METHODS[name] = factory
        return factory

    return wrap


def method_names() -> list[str]:
    _load_builtin()
    return sorted(_METHODS)


def build_program(task: str | TaskSpec, method: str = "cejudge", **options: Any) -> dspy.Module:
    """Build the program for a task and method; options the method does not take are ignored."""
    _load_builtin()
    spec = load_task(task)
    if method not in _METHODS:
        close = difflib.get_close_matches(method, list(_METHODS), n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise TaskError(f"unknown method '{method}': {hint}available: {', '.join(sorted(_METHODS))}")
    return _METHODS[method](spec, **options)


@register("cejudge")
def _cejudge(spec: TaskSpec, translator: str = "llm", orders: str = "both", **_: Any) -> dspy.Module:
    from .judges import PairwiseJudge, PointwiseJudge

    if spec.mode == "pairwise":
        return PairwiseJudge(spec, translator=translator, orders=orders)  # type: ignore[arg-type]
    return PointwiseJudge(spec, translator=translator)


@register("direct")
def _direct(spec: TaskSpec, orders: str = "both", **_: Any) -> dspy.Module:
    from .baselines import DirectPairwiseJudge, DirectPointwiseJudge

    if spec.mode == "pairwise":
        return DirectPairwiseJudge(spec, orders=orders)  # type: ignore[arg-type]
    return DirectPointwiseJudge(spec)


def _load_builtin() -> None:
    # Methods declared in optional modules register on import.
    import importlib

    for module in ("cejudge_dspy.checkeval",):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
