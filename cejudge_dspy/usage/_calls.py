"""Counting one stage call's LM calls, cache hits included: a DSPy callback on the LM (or in
`dspy.settings` for an LM that takes none), or the run's adapter itself; split from _accounting.py, which adds
the count to the judgment's Usage and its progress.

The count goes into a one-element cell that `usage.record_call` puts in a context variable for the
duration of one stage call; the variable is defined here only, and record_call sets this same object.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

import dspy
from dspy.utils.callback import BaseCallback

_calls: ContextVar[list[int] | None] = ContextVar("cejudge_lm_calls", default=None)


class _CallCounter(BaseCallback):
    """Counts LM calls (cache hits included) into the cell of the stage call in progress."""

    def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        if not _adapter_counts():  # else the adapter counted it
            count_lm_call()


def count_lm_call() -> None:
    """Count one LM call into the stage call in progress. Called by the `_CallCounter` callback, or by
    an adapter that declares `counts_lm_calls = True` (`judges.memo_adapter`) for each request it sends:
    that saves the callback, which made DSPy bind the call's arguments and draw a uuid for every call."""
    cell = _calls.get()
    if cell is not None:
        cell[0] += 1


def _adapter_counts() -> bool:
    return getattr(dspy.settings.adapter, "counts_lm_calls", False) is True


def _watch(lm: Any) -> bool:
    """Attach a call counter to `lm` itself, once. A callback in `dspy.settings` would make DSPy run its
    callback machinery (argument binding, a uuid, start and end hooks) around every module, adapter and
    LM method of the call, about a third of the CPU a call costs; on the LM it runs once per call.
    False when `lm` takes no callbacks (the caller then counts through `dspy.settings`)."""
    callbacks = getattr(lm, "callbacks", None)
    if not isinstance(callbacks, list):
        return False
    if not any(isinstance(c, _CallCounter) for c in callbacks):  # copies of an LM carry a copy of it
        lm.callbacks = [*callbacks, _CallCounter()]
    return True
