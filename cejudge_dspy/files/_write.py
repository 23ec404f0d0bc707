"""Writing a file the package produces without following symlinks, and failing in one line.

A run directory, an `--out` folder or the place an optimized program goes may be shared, unpacked from an
archive or prepared by someone else: a symlink placed at results.jsonl, view.html, `<out>.tmp.json` or
`.holder` would make the next write land on its target (another run's records, a shell profile). Every
writer of the package goes through these helpers: appends and in-place edits open with O_NOFOLLOW, whole
files are written to a fresh temporary file (O_EXCL) that is then renamed over the name, and a symlink found
at a name is refused with one line that names it. A full or read-only disk, or a folder the user may not
write into, is one line too (`FileWriteError`), never a traceback.
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


class FileWriteError(CEJudgeError):
    """A file could not be written: a full or read-only disk, no permission, a file where a folder goes."""


def _refusal(path: Path) -> UnsafeFileError:
    return UnsafeFileError(
        f"{path} is a symlink; refusing to write through it (that would change the file it points to): "
        "remove it, or use another --out"
    )


def write_failure(path: Path, exc: OSError) -> FileWriteError:
    """The one line for a write the disk refused, naming the file and what to do."""
    why = exc.strerror or str(exc)
    fix = {
        errno.ENOSPC: "free space and run the command again",
        errno.EDQUOT: "free space and run the command again",
        errno.EROFS: "the disk is read-only: write somewhere else",
        errno.EACCES: "you may not write there: write somewhere else",
        errno.EPERM: "you may not write there: write somewhere else",
    }.get(exc.errno or 0, "write somewhere else")
    return FileWriteError(f"cannot write {path} ({why}); {fix}")


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


def make_dirs(path: Path) -> None:
    """`mkdir -p path`, or one line saying why it cannot be made (a file in the way, a read-only disk)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise FileWriteError(
            f"cannot make the folder {path}: a file is in the way; write somewhere else"
        ) from None
    except OSError as exc:
        raise write_failure(path, exc) from None


def write_file_atomic(path: Path, data: bytes | str, *, fsync: bool = True) -> None:
    """Replace `path` with `data` through a fresh temporary file beside it: a reader never sees half of
    it, a symlink at `path` is refused, and a disk that refuses the write is one `FileWriteError` line
    (nothing is left behind: the temporary file is removed)."""
    refuse_symlink(path)
    # A lone surrogate (half an emoji in a model's answer) is written as its escape `\\udXXX`: in JSON, or a
    # JavaScript string in a page, it reads back as the same text; elsewhere it shows what was there.
    raw = data.encode("utf-8", errors="backslashreplace") if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
    except OSError as exc:
        raise write_failure(path, exc) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)  # renames over the name itself: a symlink placed meanwhile is replaced
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise write_failure(path, exc) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def touch_nofollow(path: Path) -> None:
    """Create `path` empty if it is missing (an existing file is left as it is); refuse a symlink."""
    try:
        os.close(open_nofollow(path, os.O_WRONLY | os.O_CREAT))
    except UnsafeFileError:
        raise
    except OSError as exc:
        raise write_failure(path, exc) from None
