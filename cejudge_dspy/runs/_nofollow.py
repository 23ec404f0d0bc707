"""Writing the files of a run directory without following symlinks.

A run directory may be shared, unpacked from an archive or prepared by someone else: a symlink placed there
as results.jsonl, run.json, summary.json, .holder or view.html would make the next write land on its target
(another run's records, a shell profile). Every writer of a run's files goes through these helpers: appends
and in-place edits open with O_NOFOLLOW, whole files are written to a fresh temporary file (O_EXCL) that is
then renamed over the name, and a symlink found at a name is refused with one line that names it.
"""

from __future__ import annotations

import errno
import os
import secrets
from pathlib import Path

from cejudge_dspy.errors import CEJudgeError

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class UnsafeFileError(CEJudgeError):
    """A file the package was about to write is a symlink: writing would change the file it points to."""


def _refusal(path: Path) -> UnsafeFileError:
    return UnsafeFileError(
        f"{path} is a symlink; refusing to write through it (that would change the file it points to): "
        "remove it, or use another --out"
    )


def refuse_symlink(path: Path) -> None:
    """One line naming `path` when it is a symlink (a dangling one or a loop included)."""
    if os.path.islink(path):
        raise _refusal(path)


def open_nofollow(path: Path, flags: int, mode: int = 0o644) -> int:
    """`os.open` that refuses a symlink at `path` instead of opening its target."""
    try:
        return os.open(path, flags | _NOFOLLOW, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP or os.path.islink(path):
            raise _refusal(path) from None
        raise


def write_file_atomic(path: Path, data: bytes | str, *, fsync: bool = True) -> None:
    """Replace `path` with `data` through a fresh temporary file beside it: a reader never sees half of
    it, and a symlink at `path` is refused (an OSError from the disk itself propagates)."""
    refuse_symlink(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)  # renames over the name itself: a symlink placed meanwhile is replaced
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def touch_nofollow(path: Path) -> None:
    """Create `path` empty if it is missing (an existing file is left as it is); refuse a symlink."""
    os.close(open_nofollow(path, os.O_WRONLY | os.O_CREAT))
