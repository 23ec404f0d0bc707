"""Durable writes into a run directory: records appended atomically, JSON files replaced atomically.

- `append_records` writes its records' lines with one `write` on an O_APPEND descriptor, then fsyncs.
  A failed or short write is rolled back to the previous end of file and raised as one line: nothing
  already written is lost, and no torn line is left behind.
- `repair_torn_tail` (run on resume, under the lock) moves a torn final line (a crash or a full disk
  mid-write before this format) aside into `results.jsonl.torn`, so its item is judged again.
- `write_json_atomic` replaces run.json or summary.json through a temporary file: a reader never sees
  half of one.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cejudge_dspy.errors import CEJudgeError


class RunWriteError(CEJudgeError):
    """results.jsonl could not be written (full disk, file size limit, permissions)."""


def repair_torn_tail(path: Path) -> bool:
    """Move a torn or unreadable final line into `<path>.torn` and cut it off; True if one was."""
    if not path.exists():
        return False
    data = path.read_bytes()
    body = data.rstrip(b"\n")
    if not body:
        return False
    start = body.rfind(b"\n") + 1
    last = body[start:]
    try:
        whole = isinstance(json.loads(last), dict)
    except ValueError:
        whole = False
    if whole:  # a complete record that lacks only its newline
        if not data.endswith(b"\n"):
            with path.open("ab") as fh:
                fh.write(b"\n")
        return False
    with path.with_name(path.name + ".torn").open("ab") as fh:
        fh.write(last + b"\n")
    with path.open("r+b") as fh:
        fh.truncate(start)
        os.fsync(fh.fileno())
    print(
        f"warning: {path}: the last line was cut off (an interrupted write); moved it to "
        f"{path.name}.torn, its item is judged again",
        file=sys.stderr,
    )
    return True


def append_record(path: Path, record: dict[str, Any]) -> None:
    """Append one record as one line, durably; on failure leave the file as it was and raise one line."""
    append_records(path, [record])


def append_records(path: Path, records: Sequence[dict[str, Any]]) -> None:
    """Append records, one line each, in one write and one fsync; on failure leave the file as it was
    (none of them written) and raise one line."""
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        start = os.fstat(fd).st_size
        try:
            written = 0
            while written < len(data):
                written += os.write(fd, data[written:])
            os.fsync(fd)
        except OSError as exc:
            try:
                os.ftruncate(fd, start)  # no torn line: the file ends where the last whole record did
            except OSError:
                pass
            raise RunWriteError(
                f"cannot write {path} ({exc.strerror or exc}); the records already written are kept: "
                "free space (or raise the file size limit) and rerun the same command to resume"
            ) from None
    finally:
        os.close(fd)


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            fh.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise RunWriteError(f"cannot write {path} ({exc.strerror or exc}); free space and rerun") from None
