"""Live progress on stderr while a person waits: the stage in flight and the LM calls done for each item.

Both displays are rich renderables driven by `cejudge_dspy.usage.on_progress` events (and the backbone's
status messages, through `update`); a `rich.live.Live` redraws them a few times a second, so the clocks
tick between events. `JudgeDisplay` is one line for `cejudge judge`; `RunDisplay` is `evaluate`'s bar
with one line per item in flight under it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from cejudge_dspy.usage import StageProgress, clock


@dataclass
class ItemState:
    """What one item in flight is doing, from its latest progress event."""

    started: float
    step: str = "starting"
    calls_done: int = 0
    calls_expected: int = 0
    more: int = 0  # other stage calls in flight besides `step`

    def update(self, event: StageProgress) -> None:
        self.started = time.monotonic() - event.elapsed
        self.calls_done, self.calls_expected = event.calls_done, event.calls_expected
        # The oldest call in flight is the one a single local model is working on; the rest wait.
        self.step = event.running[0] if event.running else event.step
        self.more = max(len(event.running) - 1, 0)

    @property
    def fraction(self) -> float:
        return min(self.calls_done / self.calls_expected, 1.0) if self.calls_expected else 0.0

    def describe(self, now: float) -> str:
        """`checklist response→instruction (B) +1 more · 6/10 calls · 1:12`."""
        more = f" +{self.more} more" if self.more else ""
        calls = f" · {self.calls_done}/{self.calls_expected} calls" if self.calls_expected else ""
        return f"{self.step}{more}{calls} · {clock(now - self.started)}"


class JudgeDisplay:
    """`cejudge judge`: one spinner line for the item being judged, and backbone messages as they come."""

    def __init__(self, console: Console, n_items: int) -> None:
        self.console = console
        self.n_items = n_items
        self.n = 0
        self.item: ItemState | None = None
        self.note = "preparing the judge"
        self.spinner = Spinner("dots")
        self._lock = threading.Lock()

    def start_item(self, n: int) -> None:
        with self._lock:
            self.n, self.item = n, ItemState(time.monotonic())

    def on_stage(self, event: StageProgress) -> None:
        with self._lock:
            if self.item is not None:
                self.item.update(event)

    def update(self, message: str) -> None:
        """A backbone status message (assembling, loading, loaded): kept on screen as a line of its own."""
        self.console.print(Text(message, style="dim"))

    def __rich__(self) -> RenderableType:
        with self._lock:
            if self.item is None:
                text = self.note
            else:
                prefix = f"item {self.n}/{self.n_items} · " if self.n_items > 1 else ""
                text = prefix + self.item.describe(time.monotonic())
        grid = Table.grid(padding=(0, 1))
        grid.add_row(self.spinner, Text(text))
        return grid


@dataclass
class RunCounts:
    """What `evaluate` has finished: items, unparsed, errors."""

    total: int
    done: int = 0
    unparsed: int = 0
    errors: int = 0
    started: float = field(default_factory=time.monotonic)


class RunDisplay:
    """`cejudge evaluate`: the run's bar (items, elapsed, ETA, rate, unparsed, errors) and one line per
    item in flight (its stage and calls). Progress inside items counts toward the rate and the ETA, so
    both are real numbers from the first finished stage call, not after the first finished item."""

    def __init__(self, title: str, total: int) -> None:
        self.title = title
        self.counts = RunCounts(total)
        self.items: dict[str, ItemState] = {}
        self.note = ""
        self.workers: dict[str, Any] = {}  # `--ray`: name -> counts with where, done, lost, alive
        self._lock = threading.Lock()

    def show_workers(self, workers: dict[str, Any]) -> None:
        """Show a line of per-worker counts (evaluate/_ray_progress.py's `WorkerCounts`, updated in place)."""
        self.workers = workers

    def workers_line(self) -> str:
        """`workers · w1 12 · w2 9 (lost 1) · w3 4 (gone)`: records each worker sent, and its deaths."""
        parts = []
        for name, w in list(self.workers.items()):
            notes = [f"lost {w.lost}"] if w.lost else []
            notes += [] if w.alive else ["gone"]
            parts.append(f"{name} {w.done}" + (f" ({', '.join(notes)})" if notes else ""))
        return "workers · " + " · ".join(parts) if parts else ""

    def on_stage(self, item_id: str, event: StageProgress) -> None:
        with self._lock:
            self.items.setdefault(item_id, ItemState(time.monotonic())).update(event)

    def on_record(self, item_id: str, status: str) -> None:
        with self._lock:
            self.items.pop(item_id, None)
            c = self.counts
            c.done += 1
            c.unparsed += status == "unparsed"
            c.errors += status == "error"

    def update(self, message: str) -> None:
        """A backbone status message, shown on the bar's line until the next one."""
        with self._lock:
            self.note = message

    def progress(self) -> float:
        """Items finished, plus the finished share of each item in flight."""
        with self._lock:
            return self.counts.done + sum(s.fraction for s in self.items.values())

    def summary(self, now: float | None = None) -> str:
        """`1/4 items · 0:42 · ETA 2:06 · 42 s/item · unparsed 0 · errors 0`."""
        now = time.monotonic() if now is None else now
        c, progress = self.counts, self.progress()
        elapsed = now - c.started
        parts = [f"{c.done}/{c.total} items", clock(elapsed)]
        if progress > 0 and c.done < c.total:
            parts.append(f"ETA {clock(elapsed * (c.total - progress) / progress)}")
        parts.append(rate(progress, elapsed))
        parts.append(f"unparsed {c.unparsed} · errors {c.errors}")
        return " · ".join(parts)

    def __rich__(self) -> RenderableType:
        now = time.monotonic()
        line = Table.grid(padding=(0, 1))
        line.add_row(
            Text(self.title),
            ProgressBar(total=max(self.counts.total, 1), completed=self.progress(), width=30),
            Text(self.summary(now)),
        )
        with self._lock:
            rows = [
                Text(f"  {item_id} · {s.describe(now)}", style="dim") for item_id, s in self.items.items()
            ]
            note = [Text(f"  {self.note}", style="dim")] if self.note else []
        workers = [Text(f"  {text}", style="dim")] if (text := self.workers_line()) else []
        return Group(line, *workers, *rows, *note)


def rate(items: float, seconds: float) -> str:
    """Seconds per item for slow runs, items per second for fast ones; `measuring` before any progress."""
    if items <= 0 or seconds <= 0:
        return "rate: measuring"
    per_item = seconds / items
    return f"{per_item:.0f} s/item" if per_item >= 1 else f"{items / seconds:.1f} items/s"


@contextmanager
def live(console: Console, display: Any, transient: bool) -> Iterator[Any]:
    """Redraw `display` on `console` (stderr) a few times a second for the block."""
    try:
        with Live(display, console=console, refresh_per_second=4, transient=transient, redirect_stdout=False):
            yield display
    finally:
        if not console.is_terminal:
            # Off a terminal, Live leaves its last frame without a line end; what follows (an error
            # line, the summary) must start on its own line.
            console.line()
