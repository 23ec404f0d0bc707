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
from cejudge_dspy.files import FileWriteError, UnsafeFileError, open_nofollow, write_file_atomic
from cejudge_dspy.runs._json import strict_json
from cejudge_dspy.runs._redact import public_urls


class RunWriteError(CEJudgeError):
    """results.jsonl could not be written (full disk, file size limit, permissions)."""


_BLANK = b" \t\n\r\x0b\x0c"  # what bytes.rstrip() strips


def torn_tail(data: bytes) -> int | None:
    """Where the torn final line of a results file's bytes starts, or None when it ends in a whole line.

    A final line that is not a JSON object (cut off by a crash or a full disk mid-write) is torn; every
    reader of a run and `repair_torn_tail` apply this one rule, so what a reader reports as torn is what
    a resume judges again. A final JSON object that lacks only its newline is whole; blank lines are
    skipped by every reader, so trailing ones are not a line."""
    end = len(data)  # the end of `data.rstrip()`, found without copying a results file of many MB
    while end and data[end - 1] in _BLANK and len(data) - end < 64:
        end -= 1
    if end and data[end - 1] in _BLANK:  # a long blank tail: rstrip finds its start faster
        end = len(data.rstrip())
    if not end:
        return None
    start = data.rfind(b"\n", 0, end) + 1
    try:
        return None if isinstance(json.loads(data[start:end]), dict) else start
    except ValueError:  # not JSON, or not UTF-8
        return start


def repair_torn_tail(path: Path) -> bool:
    """Move a torn or unreadable final line into `<path>.torn` and cut it off; True if one was."""
    if not path.exists():
        return False
    data = path.read_bytes()
    start = torn_tail(data)
    if start is None:
        if data and not data.endswith(b"\n"):  # a complete record that lacks only its newline
            with os.fdopen(open_nofollow(path, os.O_WRONLY | os.O_APPEND), "ab") as fh:
                fh.write(b"\n")
        return False
    last = data[start:].rstrip(b"\n")
    torn = path.with_name(path.name + ".torn")  # no symlink followed by either write (cejudge_dspy.files)
    with os.fdopen(open_nofollow(torn, os.O_WRONLY | os.O_APPEND | os.O_CREAT), "ab") as fh:
        fh.write(last + b"\n")
    with os.fdopen(open_nofollow(path, os.O_RDWR), "r+b") as fh:
        fh.truncate(start)
        os.fsync(fh.fileno())
    print(
        f"warning: {path}: the last line was cut off (an interrupted write); moved it to "
        f"{path.name}.torn, its item is judged again",
        file=sys.stderr,
    )
    return True


def _utf8(text: str) -> bytes:
    """JSON text as UTF-8. A lone surrogate (half an emoji, from a model's output or a server's error) has
    no UTF-8 form; it is written as its JSON escape `\\udXXX`, which reads back as the same string, so the
    writer never fails on a text it was given (data files are checked on the way in, data/_text.py)."""
    return text.encode("utf-8", errors="backslashreplace")


def append_record(path: Path, record: dict[str, Any]) -> None:
    """Append one record as one line, durably; on failure leave the file as it was and raise one line."""
    append_records(path, [record])


def append_records(path: Path, records: Sequence[dict[str, Any]]) -> None:
    """Append records, one line each, in one write and one fsync; on failure leave the file as it was
    (none of them written) and raise one line."""
    data = _utf8("".join(strict_json(r) + "\n" for r in records))  # strict JSON (_json.py)
    try:  # a symlink is refused, not followed (cejudge_dspy.files); the runner stops on a RunWriteError
        fd = open_nofollow(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    except UnsafeFileError as exc:
        raise RunWriteError(str(exc)) from None
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
    try:  # through a fresh temporary file and a rename; a symlink at `path` is refused (cejudge_dspy.files)
        # strict JSON (_json.py), and no server address with its credentials (_redact.py)
        write_file_atomic(path, _utf8(strict_json(public_urls(data), indent=2) + "\n"))
    except FileWriteError as exc:
        raise RunWriteError(str(exc)) from None
