"""DSPy's call history during judging runs: off, unless the caller asks to keep it.

DSPy records every LM call in the LM's history and in the history of every module on the call stack
(up to 10,000 entries each, plus a global list), each entry holding the prompt and the response. Over a
run of thousands of items that is hundreds of megabytes, and code that walks a module's attributes walks
those lists too, so each call grew slower as the run went on. A run (`evaluation.judge_items`, the dev
scoring in tuning) therefore judges inside `quiet_history()`. One judgment through the Python API
(`judge(...)`, `PairwiseJudge()(...)`) keeps the history, so `inspect_history` works as usual; to keep
it for a whole run as well, wrap the run in `keep_history()`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import dspy

_keep: ContextVar[bool] = ContextVar("cejudge_keep_history", default=False)


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
