"""Calls in flight to a llama.cpp server this process started, held to the server's slots.

A server with N slots answers N requests at once and queues the rest, and a queued request's clock runs all
the same. CE-Judge sends an item's independent stages together (the concepts with the translation, the two
checklists, the two grades), so at `--concurrency 1` on the embedded server's one slot up to four calls are
in flight and the last waits for the three before it. On a busy machine that wait alone passed the calls'
timeout, and a judgment failed against a server that was answering. The timeout is meant for a server that
stopped answering (`_server_lm.py`). So a call to such a server first waits for a free slot, with no
deadline, and then has its whole timeout once it is sent.

Only servers the package started are held this way, because only there are the slots known. A user's own
server queues as it is configured to.

The gate is a thread-safe semaphore, since calls come from threads and from event loops alike. An async call
polls it rather than blocking a thread, so a call cancelled while it waits (Ctrl-C) holds nothing.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

# How often a waiting async call looks for a free slot (a stage call takes seconds).
POLL_S = 0.01

_gates: dict[str, threading.BoundedSemaphore] = {}
_lock = threading.Lock()


def hold_to_slots(api_base: str, slots: int) -> None:
    """From now on, at most `slots` calls from this process are in flight to the server at `api_base`.

    If the address is already held, its gate is kept: the same server, reached again by another LM."""
    with _lock:
        _gates.setdefault(api_base, threading.BoundedSemaphore(slots))


def _gate(api_base: object) -> threading.BoundedSemaphore | None:
    with _lock:
        return _gates.get(api_base) if isinstance(api_base, str) else None


def _in_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@contextmanager
def slot(api_base: object) -> Iterator[None]:
    """A free slot of the server at `api_base`, waited for; no wait for a server not held to its slots.

    Never waited for on a thread that runs an event loop: the calls holding the slots may be that loop's
    own coroutines, which could then never finish (the scorer's probe is asked once, on first need, from
    a coroutine). Such a call goes unheld and queues at the server, as before the gate."""
    gate = _gate(api_base)
    if gate is None or _in_event_loop():
        yield
        return
    with gate:
        yield


@asynccontextmanager
async def aslot(api_base: object) -> AsyncIterator[None]:
    """`slot` for a coroutine: the event loop runs on while the call waits."""
    gate = _gate(api_base)
    if gate is None:
        yield
        return
    while not gate.acquire(blocking=False):
        await asyncio.sleep(POLL_S)
    try:
        yield
    finally:
        gate.release()
