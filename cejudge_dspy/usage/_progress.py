"""One judgment's progress: the `StageProgress` events a caller's callback receives and the INFO log
lines, as each stage call starts and finishes; split from _accounting.py, which counts the work itself.

A judge announces how many LM calls an item should take (`usage.collecting(usage, expected_calls=N)`),
each stage call reports a start and a finish (`usage.record_call`), and a result shared with earlier work
(`usage.note_reused`) lowers the expectation, so the count reaches the total when the judgment ends.
`on_progress(callback)` routes these events to the caller; `working_on("A")` names what the calls inside
it are about (the instruction, a response, a presentation order).

The tracker, the callback and the subject travel in context variables, as the Usage does: stages run
concurrently inside asyncio tasks, which copy the context at creation. Each variable is defined here
only; _accounting.py reads and sets these same objects.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal, TypeVar

T = TypeVar("T")
logger = logging.getLogger("cejudge_dspy.usage._progress")


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


_tracker: ContextVar[_Tracker | None] = ContextVar("cejudge_progress", default=None)
_callback: ContextVar[ProgressCallback | None] = ContextVar("cejudge_progress_callback", default=None)
_subject: ContextVar[str | None] = ContextVar("cejudge_progress_subject", default=None)


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


def expect_more_calls(n: int) -> None:
    """The item in progress needs `n` more LM calls than it announced (e.g. a tie-breaker judgment)."""
    tracker = _tracker.get()
    if tracker is not None:
        tracker.expected += n
