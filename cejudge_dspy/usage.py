"""LM accounting for one judgment: calls issued, cache hits, reused stage results and tokens; and its
progress, reported to a caller's callback and logged at INFO as each stage call starts and finishes.

Stages run concurrently inside asyncio tasks, so the accumulator travels in a context variable
(tasks copy the context at creation; the object itself is shared and mutated in place). LM calls
are counted by a DSPy callback, which also sees calls served from DSPy's cache; tokens come from
DSPy's usage tracker, which reports nothing for a cached call, and that difference is the cache count.

Progress: a judge announces how many LM calls an item should take (`collecting(usage, expected_calls=N)`),
each stage call reports a start and a finish, and a result shared with earlier work (`note_reused`)
lowers the expectation, so the count reaches the total when the judgment ends. `on_progress(callback)`
routes these `StageProgress` events to the caller; `working_on("A")` names what the calls inside it are
about (the instruction, a response, a presentation order).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, TypeVar

import dspy
from dspy.utils.callback import BaseCallback
from dspy.utils.usage_tracker import track_usage

T = TypeVar("T")
logger = logging.getLogger("cejudge_dspy.progress")


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


@dataclass(frozen=True)
class StageProgress:
    """One step of one item's judgment, as a progress callback receives it.

    `stage` is the stage class (`ChecklistFromResponse`), `label` what it does in words (`checklist
    response→instruction`), `which` what it works on (`instruction`, `A`, `B`, `A shown first`, a
    CheckEval sub-dimension) or None. `calls_done` counts the item's LM calls finished so far (cache hits
    and retries included); `calls_expected` is the judge's estimate, never below `calls_done`.
    `running` describes the stage calls in flight after this event, oldest first.
    """

    event: Literal["start", "done"]
    stage: str
    label: str
    which: str | None
    calls_done: int
    calls_expected: int
    elapsed: float
    running: tuple[str, ...] = ()

    @property
    def step(self) -> str:
        """`checklist response→instruction (B)`: the stage in words and what it works on."""
        return f"{self.label} ({self.which})" if self.which else self.label

    def describe(self) -> str:
        """`checklist response→instruction (B) · 6/10 calls · 1:12`."""
        return f"{self.step} · {self.calls_done}/{self.calls_expected} calls · {clock(self.elapsed)}"


ProgressCallback = Callable[[StageProgress], None]


def clock(seconds: float) -> str:
    """Minutes and seconds, `1:12` (hours when needed, `1:02:03`)."""
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class _Tracker:
    """One item's progress: calls finished, calls expected, stage calls in flight."""

    def __init__(self, expected: int, callback: ProgressCallback | None) -> None:
        self.expected = expected
        self.done = 0
        self.callback = callback
        self.started = time.monotonic()
        self.running: list[tuple[int, str]] = []
        self._next = 0

    def start(self, stage: str, label: str, which: str | None) -> int:
        self._next += 1
        step = f"{label} ({which})" if which else label
        self.running.append((self._next, step))
        self.emit("start", stage, label, which)
        return self._next

    def finish(self, key: int, calls: int, stage: str, label: str, which: str | None) -> None:
        self.running = [r for r in self.running if r[0] != key]
        self.done += calls
        self.emit("done", stage, label, which)

    def reused(self) -> None:
        self.expected = max(self.expected - 1, self.done)

    def emit(self, event: Literal["start", "done"], stage: str, label: str, which: str | None) -> None:
        self.expected = max(self.expected, self.done)
        level = logging.INFO if event == "done" else logging.DEBUG
        if self.callback is None and not logger.isEnabledFor(level):
            return  # nobody listens: a run of thousands of items builds no event per call
        info = StageProgress(
            event,
            stage,
            label,
            which,
            self.done,
            self.expected,
            time.monotonic() - self.started,
            tuple(step for _, step in self.running),
        )
        if event == "done":
            logger.info(
                "%s done · %d/%d calls · %s",
                info.step,
                info.calls_done,
                info.calls_expected,
                clock(info.elapsed),
            )
        else:
            logger.debug("%s started", info.step)
        if self.callback is not None:
            try:
                self.callback(info)
            except Exception:  # a display bug must not lose a judgment
                logger.warning("progress callback failed; the judgment goes on", exc_info=True)


_current: ContextVar[Usage | None] = ContextVar("cejudge_usage", default=None)
_tracker: ContextVar[_Tracker | None] = ContextVar("cejudge_progress", default=None)
_callback: ContextVar[ProgressCallback | None] = ContextVar("cejudge_progress_callback", default=None)
_subject: ContextVar[str | None] = ContextVar("cejudge_progress_subject", default=None)


_calls: ContextVar[list[int] | None] = ContextVar("cejudge_lm_calls", default=None)


class _CallCounter(BaseCallback):
    """Counts LM calls (cache hits included) into the cell of the stage call in progress."""

    def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        if not _adapter_counts():  # else the adapter counted it
            count_lm_call()


def count_lm_call() -> None:
    """Count one LM call into the stage call in progress. Called by the `_CallCounter` callback, or by
    an adapter that declares `counts_lm_calls = True` (methods/formatting.py) for each request it sends:
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


@contextmanager
def on_progress(callback: ProgressCallback) -> Iterator[None]:
    """Call `callback(StageProgress)` as each stage call of the judgments in this block starts and ends:

    with use_backbone("embedded"), on_progress(lambda p: print(p.describe())):
        judge(instruction=..., response_a=..., response_b=...)
    """
    token = _callback.set(callback)
    try:
        yield
    finally:
        _callback.reset(token)


@contextmanager
def working_on(which: str | None) -> Iterator[None]:
    """Name what the stage calls in this block (and the tasks it starts) work on, for progress messages.

    Set it inside the coroutine that owns the work: `asyncio.gather` copies the context when it wraps
    each coroutine, so a value set around the gather call is seen by every one of them."""
    token = _subject.set(which)
    try:
        yield
    finally:
        _subject.reset(token)


def current_subject() -> str | None:
    """What the stage calls running here work on (see `working_on`), e.g. for a backbone's call log."""
    return _subject.get()


async def about(which: str | None, call: Awaitable[T]) -> T:
    """`await call` with its stage calls labelled `which` (see `working_on`); for use inside gather."""
    with working_on(which):
        return await call


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


def expect_more_calls(n: int) -> None:
    """The item in progress needs `n` more LM calls than it announced (e.g. a tie-breaker judgment)."""
    tracker = _tracker.get()
    if tracker is not None:
        tracker.expected += n


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
