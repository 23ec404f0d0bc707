"""LM accounting for one judgment: calls issued, cache hits, reused stage results and tokens.

Stages run concurrently inside asyncio tasks, so the accumulator travels in a context variable
(tasks copy the context at creation; the object itself is shared and mutated in place). LM calls
are counted by a DSPy callback, which also sees calls served from DSPy's cache; tokens come from
DSPy's usage tracker, which reports nothing for a cached call, and that difference is the cache count.

The parts live beside this module: _progress.py (the `StageProgress` events and log lines, `on_progress`,
`working_on`) and _calls.py (the call counter). What ties the three together stays here: `collecting`
opens an item's accounting and progress, `record_call` counts and reports one stage call, `note_reused`
records a shared result. Importers take the public names of all three from the package's face,
`cejudge_dspy.usage`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from typing import Any

import dspy
from dspy.utils.usage_tracker import track_usage

from cejudge_dspy.usage._calls import _adapter_counts, _CallCounter, _calls, _watch
from cejudge_dspy.usage._progress import (
    T,
    _callback,
    _subject,
    _Tracker,
    _tracker,
)

# The context variables below are the very objects _progress.py and _calls.py define (a copy would
# split the state): collecting and record_call set them for their block.
from cejudge_dspy.usage._usage import Usage

_current: ContextVar[Usage | None] = ContextVar("cejudge_usage", default=None)


@contextmanager
def collecting(usage: Usage, expected_calls: int = 0) -> Iterator[Usage]:
    """Route the accounting of every stage call in this context (and its tasks) into `usage`, and report
    progress against `expected_calls` (the LM calls one item takes when no stage result is reused)."""
    token = _current.set(usage)
    progress = _tracker.set(_Tracker(expected_calls, _callback.get()))
    try:
        yield usage
    finally:
        _tracker.reset(progress)
        _current.reset(token)


def note_reused(stage: str) -> None:
    usage = _current.get()
    if usage is not None:
        usage.reused += 1
    tracker = _tracker.get()
    if tracker is not None:
        tracker.reused()


async def record_call(stage: str, call: Awaitable[T], label: str | None = None, lm: Any = None) -> T:
    """Await one stage's predictor call, add its LM calls and tokens to the current Usage, and report
    its start and finish to the current progress callback (`label`: the stage in words). `lm` is the
    LM the call will use (default: the current one); its calls are the ones counted."""
    cell = [0]
    token = _calls.set(cell)
    progress, which, label = _tracker.get(), _subject.get(), label or stage
    key = progress.start(stage, label, which) if progress is not None else 0
    counting = (
        nullcontext()
        if _adapter_counts() or _watch(lm if lm is not None else dspy.settings.lm)
        else dspy.context(callbacks=[*(dspy.settings.callbacks or []), _CallCounter()])
    )
    try:
        with counting, track_usage() as tracker:
            return await call
    finally:
        _calls.reset(token)
        calls = cell[0]
        if progress is not None:
            progress.finish(key, calls, stage, label, which)
        usage = _current.get()
        if usage is not None:
            entries = [e for per_lm in tracker.usage_data.values() for e in per_lm]
            usage.calls += calls
            usage.cached += max(calls - len(entries), 0)
            usage.by_stage[stage] = usage.by_stage.get(stage, 0) + calls
            for entry in entries:
                usage.prompt_tokens += int(entry.get("prompt_tokens") or 0)
                usage.completion_tokens += int(entry.get("completion_tokens") or 0)
