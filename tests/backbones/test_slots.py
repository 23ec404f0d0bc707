"""Calls to a server the package started are held to its slots, and wait for one outside their timeout
(`cejudge_dspy/backbones/_slots.py`).

Against the gated fake server (tests/support/gated_server.py): the test decides when the server answers, and
waits on what reached it (its `bodies`, in arrival order), not on a clock. The one timeout here is the
call's own: the first call is held at the server past it, and ends there.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable

import pytest

from cejudge_dspy.backbones import make_lm
from cejudge_dspy.backbones._server_lm import CallTimedOut
from cejudge_dspy.backbones._slots import _gate, aslot, hold_to_slots, slot
from tests.support.gated_server import MODEL, GatedServer

# The first call's timeout, and the second's: shorter, so that had its wait for the slot (at least the
# first's timeout) counted against it, it would have ended before being sent; long enough that, once sent,
# a loaded machine still answers within it.
FIRST_TIMEOUT_S = 8.0
SECOND_TIMEOUT_S = 6.0


async def _until(holds: Callable[[], bool]) -> None:
    """Wait until `holds()`, bounded so that a broken gate fails the test instead of stalling it."""
    deadline = time.monotonic() + 60
    while not holds():
        assert time.monotonic() < deadline, "gave up waiting"
        await asyncio.sleep(0.01)


def test_a_call_waiting_for_the_slot_gets_its_whole_timeout_once_sent() -> None:
    """One slot, two calls. The first is held at the server until its timeout ends it. The second reaches
    the server only then, and is answered: its wait for the slot did not count against its timeout.

    Without the gate both reach the server at once and both time out together."""
    with GatedServer() as server:
        first_lm, second_lm = (
            make_lm(MODEL, api_base=server.api_base, api_key="k", cache=False, timeout=t, num_retries=0)
            for t in (FIRST_TIMEOUT_S, SECOND_TIMEOUT_S)
        )
        hold_to_slots(server.api_base, 1)
        server.close()

        async def two_calls() -> object:
            first = asyncio.create_task(first_lm.acall("first"))
            await _until(lambda: len(server.bodies) == 1)
            second = asyncio.create_task(second_lm.acall("second"))
            with pytest.raises(CallTimedOut):
                await first  # held at the server past its timeout
            assert len(server.bodies) == 1  # the second waited for the slot, not at the server
            await _until(lambda: len(server.bodies) == 2)  # the second is sent once the first let go
            server.open()
            return await second

        answered = asyncio.run(two_calls())
    assert answered, answered
    assert [b["messages"][-1]["content"] for b in server.bodies] == ["first", "second"]


def test_no_more_calls_than_slots_reach_the_server_and_all_are_answered() -> None:
    """Two slots, five calls at once: at most two at the server (held there until the test opens the gate),
    and every call answered once it does."""
    with GatedServer() as server:
        lm = make_lm(MODEL, api_base=server.api_base, api_key="k", cache=False, num_retries=0)
        hold_to_slots(server.api_base, 2)
        server.close()

        async def five_calls() -> list[object]:
            calls = [asyncio.create_task(lm.acall(f"call {i}")) for i in range(5)]
            await _until(lambda: server.held >= 2)
            await asyncio.sleep(0.2)  # a third call, were the gate broken, would arrive meanwhile
            assert len(server.bodies) == 2 and server.held == 2, server.bodies
            server.open()
            return list(await asyncio.gather(*calls))

        answers = asyncio.run(five_calls())
    assert len(answers) == 5 and all(answers)
    assert len(server.bodies) == 5


def test_a_server_not_started_by_the_package_is_not_held() -> None:
    """A user's server queues as it is configured to: no gate for an address nobody held."""
    address = f"http://127.0.0.1:9/{uuid.uuid4().hex}/v1"  # an address no other test held
    with slot(address), slot(address):
        pass  # a held one-slot gate would block the second entry for ever


def test_the_same_server_reached_again_keeps_its_gate() -> None:
    """A second LM to the same server shares the first's slots (the gate is not replaced, which would let
    the calls in flight on the old gate go uncounted)."""
    address = f"http://127.0.0.1:10/{uuid.uuid4().hex}/v1"
    hold_to_slots(address, 1)
    with slot(address):
        hold_to_slots(address, 1)
        gate = _gate(address)
        assert gate is not None
        acquired = gate.acquire(blocking=False)
    assert acquired is False


def test_a_blocking_call_on_an_event_loop_is_not_held() -> None:
    """A blocking call made from a coroutine (the scorer's probe, asked on first need) while that loop's
    own calls hold every slot: waiting would block the loop, and the holders with it, for ever."""
    address = f"http://127.0.0.1:11/{uuid.uuid4().hex}/v1"
    hold_to_slots(address, 1)

    async def held_then_blocking() -> bool:

        async with aslot(address):  # a coroutine of this loop holds the one slot
            with slot(address):  # a blocking call on the same loop's thread
                return True

    # In a thread of its own, so that a deadlock fails the test instead of stalling the suite.
    done: list[bool] = []
    worker = threading.Thread(target=lambda: done.append(asyncio.run(held_then_blocking())), daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert done == [True], "a blocking call on the loop waited for a slot its own loop held"
