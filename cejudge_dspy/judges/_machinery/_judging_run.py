"""How a judging run runs: without DSPy's call history, and with the garbage collector tuned for it.

DSPy records every LM call in the LM's history and in the history of every module on the call stack
(up to 10,000 entries each, plus a global list), each entry holding the prompt and the response. Over a
run of thousands of items that is hundreds of megabytes, and code that walks a module's attributes walks
those lists too, so each call grew slower as the run went on. A run (`evaluate.judge_items`, the dev
scoring in tuning) therefore judges inside `judging_run()`. One judgment through the Python API
(`judge(...)`, `PairwiseJudge()(...)`) keeps the history, so `inspect_history` works as usual; to keep
it for a whole run as well, wrap the run in `keep_history()`.

A call allocates thousands of short-lived objects (messages, pydantic adapters, predictions), so with
the default thresholds the collector runs every few calls and scans the whole of DSPy's import graph
each time it reaches the oldest generation: about a fifth of a run's CPU (benchmarks/bench_scale.py;
docs/measurements/speed-and-cost.md).
During a run the objects that existed before it are frozen (left out of every collection) and the
youngest generation is collected every 50,000 allocations instead of 700; both are restored afterwards.

DSPy's chat and JSON adapters format the signature's part of every prompt anew on each call; a run uses
the current adapter with that part formatted once per signature (`_memo_adapters.py`, the same
messages byte for byte).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import dspy

from cejudge_dspy.judges._machinery._memo_adapters import memo_adapter

_keep: ContextVar[bool] = ContextVar("cejudge_keep_history", default=False)
RUN_GC_THRESHOLD = (50_000, 20, 100)
_runs = 0  # judging runs in progress in this process (the GC settings are process-wide)
_saved_threshold: tuple[int, int, int] = gc.get_threshold()


@contextmanager
def keep_history() -> Iterator[None]:
    """Keep DSPy's call history inside judging runs started in this block (for `inspect_history`)."""
    token = _keep.set(True)
    try:
        yield
    finally:
        _keep.reset(token)


@contextmanager
def quiet_history() -> Iterator[None]:
    """No DSPy call history in this block (entries are not even built), unless `keep_history()` is on."""
    if _keep.get():
        yield
        return
    with dspy.context(disable_history=True):
        yield


@contextmanager
def run_gc() -> Iterator[None]:
    """Garbage-collector settings for a run (see the module docstring); nested or concurrent runs share
    one setting, restored when the last one ends."""
    global _runs, _saved_threshold
    if _runs == 0:
        _saved_threshold = gc.get_threshold()
        gc.freeze()
        gc.set_threshold(*RUN_GC_THRESHOLD)
    _runs += 1
    try:
        yield
    finally:
        _runs -= 1
        if _runs == 0:
            gc.set_threshold(*_saved_threshold)
            gc.unfreeze()


@contextmanager
def judging_run() -> Iterator[None]:
    """What every judging run is wrapped in: `quiet_history()`, `run_gc()` and the current adapter with
    its per-signature formatting memoised (`_memo_adapters.memo_adapter`)."""
    with quiet_history(), run_gc(), dspy.context(adapter=memo_adapter(dspy.settings.adapter)):
        yield
