"""The run directory's writer lock: one process writes into a run at a time.

`lock` holds an exclusive OS lock (`filelock`) on `.lock` for as long as a process writes; the kernel
drops it when the process dies, even by SIGKILL. `.holder` says who holds it, for the second writer.
Neither is opened through a symlink (cejudge_dspy.files): a planted one is refused with one line.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.files import make_dirs, read_json, refuse_symlink, write_file_atomic


class RunLockedError(CEJudgeError):
    """Another process writes into the run directory."""


@contextmanager
def lock(out: Path, command: str = "cejudge evaluate") -> Iterator[None]:
    """Hold the run directory's exclusive lock for the block; a second writer gets one line."""
    make_dirs(out)  # a file in the way or a read-only disk is one line
    path = out / ".lock"
    # filelock opens `.lock` truncating it; older releases followed a symlink there (the target was emptied)
    refuse_symlink(path)
    file_lock = FileLock(str(path), timeout=0)
    try:
        file_lock.acquire()
    except Timeout:
        raise RunLockedError(
            f"{out} is in use by another writer ({_holder(out)}); wait for it to finish, or use another --out"
        ) from None
    except OSError as exc:  # a symlink placed meanwhile (ELOOP), a read-only folder
        raise RunLockedError(f"cannot lock {path} ({exc.strerror or exc}); use another --out") from None
    try:
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "command": command, "since": time.time()}
        write_file_atomic(out / ".holder", json.dumps(holder) + "\n", fsync=False)
        yield
    finally:
        file_lock.release()


def _holder(out: Path) -> str:
    try:
        h = read_json(out / ".holder", CEJudgeError, limit=4096)
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(h["since"]))
        return f"pid {h['pid']} on {h['host']}, {h['command']}, since {since}"
    except (CEJudgeError, ValueError, KeyError, TypeError, OverflowError):
        return "holder unknown"
