"""A call to a server the package started ends when the server stops working, not when time passes; the
timeout is no part of DSPy's cache key (`cejudge_dspy/backbones/_progress.py`, `_server_lm.py`).

The calls go to the gated fake server (tests/support/gated_server.py), which holds them until the test
opens it. What the watch reads of the server's process, its CPU time, is given by the test (a counter that
advances at each read, or stands still), so whether the server "works" is the test's to decide, and the
test waits on the number of reads, not on a clock. One test reads a real process's CPU time.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import dspy
import pytest

from cejudge_dspy.backbones import _progress as progress
from cejudge_dspy.backbones import make_lm
from cejudge_dspy.backbones._server_lm import CallTimedOut, _prepare
from tests.support.gated_server import MODEL, GatedServer

TIMEOUT_S = 1.0  # the least `--timeout` takes
POLL_S = 0.05
HELD_POLLS = 80  # reads of the server's progress before the gate opens: 4 s at least, four timeouts


class FakeProgress:
    """Stands in for `cpu_seconds`: one second of work more at each read while `working`, none otherwise."""

    def __init__(self, working: bool) -> None:
        self.working = working
        self.reads = 0

    def __call__(self, pid: int) -> float | None:
        self.reads += 1
        return float(self.reads) if self.working else 0.0


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[GatedServer]:
    monkeypatch.setattr(progress, "POLL_S", POLL_S)
    with GatedServer() as gated:
        yield gated
    with progress._lock:
        progress._pids.pop(gated.api_base, None)


def _lm(server: GatedServer, timeout: float = TIMEOUT_S) -> dspy.LM:
    return make_lm(MODEL, api_base=server.api_base, api_key="k", cache=False, timeout=timeout, num_retries=0)


async def _until(holds: Callable[[], bool]) -> None:
    """Wait until `holds()`, bounded so that a broken watch fails the test instead of stalling it."""
    deadline = time.monotonic() + 60
    while not holds():
        assert time.monotonic() < deadline, "gave up waiting"
        await asyncio.sleep(0.005)


def test_a_call_to_a_working_server_outlives_its_timeout_and_is_answered(
    server: GatedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Held at the server for four timeouts while the server works: answered once the gate opens.

    The client's own timeout (the same 1 s, were it not replaced by the backstop) would end it too."""
    fake = FakeProgress(working=True)
    monkeypatch.setattr(progress, "cpu_seconds", fake)
    progress.watch(server.api_base, 12345)
    lm = _lm(server)
    server.close()

    async def held_call() -> object:
        call = asyncio.create_task(lm.acall("held"))
        await _until(lambda: fake.reads >= HELD_POLLS or call.done())
        assert not call.done(), call.exception()
        server.open()
        return await call

    answer = asyncio.run(held_call())
    assert answer and isinstance(answer[0], str) and answer[0], answer
    assert fake.reads * POLL_S >= 4 * TIMEOUT_S  # it did wait past its timeout, counted in polls


def test_a_call_to_a_server_that_does_no_work_ends_after_its_timeout(
    server: GatedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeProgress(working=False)
    monkeypatch.setattr(progress, "cpu_seconds", fake)
    progress.watch(server.api_base, 12345)
    server.close()
    with pytest.raises(CallTimedOut, match="did no work for 1 s"):
        asyncio.run(_lm(server).acall("held"))
    assert len(server.bodies) == 1 and fake.reads >= TIMEOUT_S / POLL_S


def test_a_server_gone_counts_as_no_work(server: GatedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that cannot be read (`None`) does no work: the call is not left waiting for ever."""
    monkeypatch.setattr(progress, "cpu_seconds", lambda pid: None)
    progress.watch(server.api_base, 12345)
    server.close()
    with pytest.raises(CallTimedOut, match="did no work"):
        asyncio.run(_lm(server).acall("held"))


def test_a_server_not_watched_keeps_the_wall_clock(
    server: GatedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user's own server: its progress cannot be read, so its timeout is time passed, working or not."""
    fake = FakeProgress(working=True)
    monkeypatch.setattr(progress, "cpu_seconds", fake)
    server.close()
    with pytest.raises(CallTimedOut, match="no answer within the timeout of 1 s"):
        asyncio.run(_lm(server).acall("held"))
    assert fake.reads == 0


def test_the_timeout_is_not_in_the_cache_key(server: GatedServer) -> None:
    """Two LMs that differ in their timeout alone ask for the same cached answer."""
    keys = [
        _prepare(_lm(server, timeout=t), "same prompt", None, {}, True).key(_lm(server, timeout=t), True)
        for t in (5.0, 9.0)
    ]
    assert keys[0] == keys[1]
    assert "timeout" not in keys[0] and keys[0]["messages"], keys[0]


def test_cpu_seconds_reads_a_working_process_and_an_idle_one() -> None:
    """The real reading: a spinning process's CPU time grows, a sleeping one's does not; a reaped one reads
    None. Waits on the spinner's CPU time, not on a clock."""
    sleep = shutil.which("sleep")
    assert sleep, "the test needs sleep(1)"
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    sleeper = subprocess.Popen([sleep, "600"])
    try:
        start = progress.cpu_seconds(spinner.pid)
        idle_start = progress.cpu_seconds(sleeper.pid)
        assert start is not None and idle_start is not None
        deadline = time.monotonic() + 60
        while (progress.cpu_seconds(spinner.pid) or 0.0) - start < 0.5:
            assert time.monotonic() < deadline, "the spinner got no CPU in 60 s"
            time.sleep(0.05)
        idle = progress.cpu_seconds(sleeper.pid)
        assert idle is not None and idle - idle_start < 0.05  # half a second of the spinner's; at most a tick
    finally:
        for child in (spinner, sleeper):
            child.kill()
            child.wait()
    assert progress.cpu_seconds(spinner.pid) is None
