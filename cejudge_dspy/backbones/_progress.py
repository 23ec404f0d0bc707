"""How long a call may wait on a server: for a llama.cpp server this process started, as long as it works.

The timeout (`--timeout`) is meant for a server that stopped answering. Against a server the package
started, a wall clock cannot tell that from a busy machine: five test runs side by side on 2 cores (load
5-19) each had one grading call pass 300 s at a server that was computing all along, and the judgment
failed. Such a server is a child process, so its progress can be read: its CPU time. A call to it ends when
the server did no work for `timeout` seconds while the call was at it (a hung or stopped server). A server
that dies ends the call at once, as before: its connection drops. A user's own server keeps the wall
clock, the only sign there is.

What counts as work is a share of one core, not any tick: an idle llama.cpp server wakes now and then (0 to
0.01 s of CPU a second, measured), and a busy one on the most loaded machine seen still took a tenth of a
core. With more than one slot, the server's work on other calls counts too; a slot hung alone is not seen.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")

POLL_S = 1.0  # how often a waiting call reads the server's CPU time
WORKING_SHARE = 0.02  # CPU seconds per second of waiting that count as work (an idle server: 0-0.01)

_pids: dict[str, int] = {}
_lock = threading.Lock()


def watch(api_base: str, pid: int) -> None:
    """From now on, calls to `api_base` are bounded by the progress of process `pid`, the server there.

    A server started again at the same address replaces the process watched."""
    with _lock:
        _pids[api_base] = pid


def watched(api_base: object) -> int | None:
    """The process serving `api_base`, if this process started it (and `watch`ed it); else None."""
    with _lock:
        return _pids.get(api_base) if isinstance(api_base, str) else None


def cpu_seconds(pid: int) -> float | None:
    """The CPU time process `pid` has used (user and system, all its threads); None once it is gone."""
    import psutil  # the embedded extra's: only the servers the package starts are watched

    try:
        times = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return None
    return times.user + times.system


class NoProgress(TimeoutError):
    """The watched server did no work for the whole timeout while a call waited on it."""


async def within(api_base: object, timeout_s: float, awaitable: Awaitable[T]) -> T:
    """`awaitable`'s result, or TimeoutError: for a watched server (`watch`), `NoProgress` once it did no
    work for `timeout_s` seconds in a row; for any other, once `timeout_s` seconds passed."""
    pid = watched(api_base)
    if pid is None:
        async with asyncio.timeout(timeout_s):
            return await awaitable
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(awaitable)
    try:
        last_at, last_cpu = loop.time(), await asyncio.to_thread(cpu_seconds, pid)
        idle_since = last_at
        while True:
            done, _ = await asyncio.wait({task}, timeout=POLL_S)
            if done:
                return task.result()
            now, cpu = loop.time(), await asyncio.to_thread(cpu_seconds, pid)
            # A server gone (None) did no work; its dropped connection normally ends the call first.
            if cpu is not None and last_cpu is not None and cpu - last_cpu >= WORKING_SHARE * (now - last_at):
                idle_since = now
            last_at, last_cpu = now, cpu
            if now - idle_since >= timeout_s:
                raise NoProgress(f"the server did no work for {timeout_s:g} s")
    finally:
        if not task.done():
            task.cancel()
            try:
                await task
            except BaseException:  # noqa: BLE001, S110 - the call is abandoned: its own ending is not ours
                pass
