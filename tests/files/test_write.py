"""The one writer of the files the tool writes (issue #49): a symlink at the name is refused, the temporary
file is created exclusively beside it, and a disk that refuses the write (full, read-only, not ours) is one
line naming the file, with nothing left behind."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.files import FileWriteError, UnsafeFileError, _write, make_dirs, write_file_atomic


@pytest.mark.parametrize(
    ("code", "says"),
    [
        (errno.ENOSPC, "No space left on device); free space and run the command again"),
        (errno.EROFS, "Read-only file system); the disk is read-only: write somewhere else"),
        (errno.EACCES, "Permission denied); you may not write there: write somewhere else"),
    ],
    ids=["ENOSPC", "EROFS", "EACCES"],
)
@pytest.mark.parametrize("where", ["open", "write", "replace"])
def test_a_disk_that_refuses_is_one_line_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, says: str, where: str
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(code, os.strerror(code))

    if where == "open":
        monkeypatch.setattr(_write.os, "open", refuse)
    elif where == "write":
        monkeypatch.setattr(_write.os, "fsync", refuse)
    else:
        monkeypatch.setattr(_write.os, "replace", refuse)
    path = tmp_path / "view.html"
    with pytest.raises(FileWriteError) as error:
        write_file_atomic(path, "<html>")
    assert isinstance(error.value, CEJudgeError)
    assert str(error.value) == f"cannot write {path} ({says}"
    assert list(tmp_path.iterdir()) == []  # no temporary file left behind


def test_a_symlink_is_refused_and_its_target_kept(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_text("keep")
    (tmp_path / "out.json").symlink_to(target)
    with pytest.raises(UnsafeFileError, match="out.json is a symlink"):
        write_file_atomic(tmp_path / "out.json", "x")
    assert target.read_text() == "keep"


def test_a_folder_that_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(FileWriteError, match=r"cannot make the folder .*file/sub: a file is in the way"):
        make_dirs(tmp_path / "file" / "sub")


def test_a_plain_write_replaces_the_file(tmp_path: Path) -> None:
    write_file_atomic(tmp_path / "a.txt", "one")
    write_file_atomic(tmp_path / "a.txt", b"two")
    assert (tmp_path / "a.txt").read_text() == "two" and len(list(tmp_path.iterdir())) == 1


def test_half_a_character_is_written_as_its_escape_not_an_error(tmp_path: Path) -> None:
    write_file_atomic(tmp_path / "view.html", '<script>const d = "bad \ud83d";</script>')
    assert (tmp_path / "view.html").read_bytes() == b'<script>const d = "bad \\ud83d";</script>'
