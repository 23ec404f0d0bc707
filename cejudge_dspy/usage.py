"""LM accounting for one judgment: calls issued, cache hits, reused stage results and tokens.

Stages run concurrently inside asyncio tasks, so the accumulator travels in a context variable
(tasks copy the context at creation; the object itself is shared and mutated in place). LM calls
are counted by a DSPy callback, which also sees calls served from DSPy's cache; tokens come from
DSPy's usage tracker, which reports nothing for a cached call, and that difference is the cache count.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

import dspy
from dspy.utils.callback import BaseCallback
from dspy.utils.usage_tracker import track_usage

T = TypeVar("T")


@dataclass
class Usage:
    """LM work done for one item. `reused` counts stage results shared with an earlier call."""

    calls: int = 0
    cached: int = 0
    reused: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    by_stage: dict[str, int] = field(default_factory=dict)

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.cached += other.cached
        self.reused += other.reused
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        for stage, n in other.by_stage.items():
            self.by_stage[stage] = self.by_stage.get(stage, 0) + n

    def to_dict(self) -> dict[str, Any]:
        # Stages finish in whatever order concurrency gives; sorted, the same work writes the same record.
        return asdict(self) | {"by_stage": dict(sorted(self.by_stage.items()))}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Usage:
        return cls(**data)


_current: ContextVar[Usage | None] = ContextVar("cejudge_usage", default=None)


class _CallCounter(BaseCallback):
    def __init__(self) -> None:
        self.calls = 0

    def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        self.calls += 1


@contextmanager
def collecting(usage: Usage) -> Iterator[Usage]:
    """Route the accounting of every stage call in this context (and its tasks) into `usage`."""
    token = _current.set(usage)
    try:
        yield usage
    finally:
        _current.reset(token)


def note_reused(stage: str) -> None:
    usage = _current.get()
    if usage is not None:
        usage.reused += 1


async def record_call(stage: str, call: Awaitable[T]) -> T:
    """Await one stage's predictor call and add its LM calls and tokens to the current Usage."""
    counter = _CallCounter()
    callbacks = [*(dspy.settings.callbacks or []), counter]
    try:
        with dspy.context(callbacks=callbacks), track_usage() as tracker:
            return await call
    finally:
        usage = _current.get()
        if usage is not None:
            entries = [e for per_lm in tracker.usage_data.values() for e in per_lm]
            usage.calls += counter.calls
            usage.cached += max(counter.calls - len(entries), 0)
            usage.by_stage[stage] = usage.by_stage.get(stage, 0) + counter.calls
            for entry in entries:
                usage.prompt_tokens += int(entry.get("prompt_tokens") or 0)
                usage.completion_tokens += int(entry.get("completion_tokens") or 0)
