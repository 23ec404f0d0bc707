"""Ctrl-C on a command run as a user runs it: a child process, interrupted once a test-held state is reached,
and the seconds from the signal to its exit (issue 49: any run ends within `CTRL_C_LIMIT_S` on a loaded
machine, keeping every finished record).

The test decides when the run is mid-way (`ready`, e.g. a request held at a gated server's gate); the waits
are on the process's exit, bounded generously so that a hang fails the test instead of stalling it, and the
time is measured on a monotonic clock around the wait and asserted by the caller. stderr goes to a file, so
no process that inherited a pipe can hold the wait open.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

CLI = [sys.executable, "-c", "import sys; from cejudge_dspy.cli._app import main; sys.exit(main())"]
CTRL_C_LIMIT_S = 10.0
READY_GUARD_S = 900.0


def interrupt_when(argv: list[str], ready: Callable[[], bool], stderr: Path) -> tuple[str, float, int]:
    """Run `cejudge ARGV` in a child process, SIGINT it once `ready()` holds, wait for it to exit: its
    stderr, the seconds from the signal to its exit and its exit code."""
    with stderr.open("w") as sink:
        proc = subprocess.Popen(CLI + argv, stdout=subprocess.DEVNULL, stderr=sink, start_new_session=True)
    try:
        # Only a guard against a run that never gets mid-way (a hang fails instead of stalling the suite),
        # not a time limit: a local Ray's start with two workers took past 240 s on 2 cores at load 15-26.
        deadline = time.monotonic() + READY_GUARD_S
        while not ready() and proc.poll() is None:
            assert time.monotonic() < deadline, (
                f"gave up waiting for the run to be mid-way: {stderr.read_text()}"
            )
            time.sleep(0.05)
        assert proc.poll() is None, f"the run ended before it was interrupted: {stderr.read_text()[-2000:]}"
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=120)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return stderr.read_text(), took, proc.returncode
