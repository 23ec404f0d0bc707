"""Run the async pipeline from synchronous code, including from inside a running event loop."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)`, or the same in a helper thread when this thread already runs a loop.

    The pipeline is written once, as async; `forward` bridges here. Inside Jupyter (a running loop)
    `asyncio.run` is refused, so the coroutine runs on a fresh loop in a thread that carries this
    thread's context, so `dspy.context(lm=...)` still applies.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    ctx = contextvars.copy_context()
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = ctx.run(asyncio.run, coro)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="cejudge-sync-bridge")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
