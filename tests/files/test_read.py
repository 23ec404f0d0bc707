"""The one reader of the JSON and TOML files the tool is given (issue #49): a regular file only (a named
pipe, a device, /dev/zero behind a symlink refused without blocking or reading), bounded in size, UTF-8
with an optional BOM, nesting and huge numbers caught; every failure one line naming the file, raised as
the caller's error."""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from cejudge_dspy.errors import InputError, TaskError
from cejudge_dspy.files import parse_json, read_bytes, read_json, read_toml

# name -> (make the file at a path, the start of the message after the path)
BAD: dict[str, tuple[Callable[[Path], object], str]] = {
    "a named pipe": (os.mkfifo, "not a regular file (a named pipe)"),
    "/dev/zero behind a symlink": (
        lambda p: p.symlink_to("/dev/zero"),
        "not a regular file (a character device)",
    ),
    "a folder": (lambda p: p.mkdir(), "not a regular file (a directory)"),
    "missing": (lambda p: None, "cannot read (No such file or directory)"),
    "latin-1": (lambda p: p.write_bytes(b'{"a": "caf\xe9"}'), "not UTF-8 text (byte 10)"),
}


@pytest.mark.parametrize("what", BAD)
@pytest.mark.parametrize("read", [read_json, read_toml], ids=["json", "toml"])
def test_what_is_not_a_readable_text_file_is_one_line_naming_it(tmp_path: Path, what: str, read) -> None:  # type: ignore[no-untyped-def]
    make, says = BAD[what]
    path = tmp_path / "f"
    make(path)
    with pytest.raises(InputError) as error:
        read(path, partial(InputError, field="--config"))
    assert str(error.value).startswith(f"--config: {path}: {says}")
    assert "\n" not in str(error.value)


def test_a_file_larger_than_the_limit_is_refused_before_it_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b" " * 2048)
    with pytest.raises(TaskError, match=r"big.json: 2048 bytes, larger than the 1024 bytes"):
        read_bytes(path, TaskError, limit=1024)
    assert read_bytes(path, TaskError, limit=2048) == b" " * 2048


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[" * 5000 + "]" * 5000, "nested too deeply"),
        ("[" * 65 + "]" * 65, "nested more than 64 deep"),
        ('{"a": ' + "9" * 5000 + "}", "a number of thousands of digits"),
        ('{"a": ', "cannot be read as JSON (Expecting value at line 1 column 7)"),
    ],
    ids=["5,000 deep", "65 deep", "5,000 digits", "cut off"],
)
def test_nesting_and_huge_numbers_are_one_line_like_a_syntax_error(
    tmp_path: Path, text: str, says: str
) -> None:
    path = tmp_path / "x.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TaskError) as error:
        read_json(path, TaskError)
    assert str(error.value).startswith(f"{path}: ") and says in str(error.value)
    with pytest.raises(TaskError, match=says.replace("(", r"\(").replace(")", r"\)")):
        parse_json(text, "line 3", TaskError)


@pytest.mark.parametrize(
    ("text", "says"),
    [("a = " + "[" * 5000 + "]" * 5000, "nested too deeply"), ("a = " + "9" * 5000, "thousands of digits")],
    ids=["5,000 deep", "5,000 digits"],
)
def test_toml_nesting_and_huge_numbers_are_one_line(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "x.toml"
    path.write_text(text + "\n", encoding="utf-8")
    with pytest.raises(TaskError, match=says):
        read_toml(path, TaskError)


def test_a_bom_is_dropped_and_64_levels_are_read(tmp_path: Path) -> None:
    (tmp_path / "bom.toml").write_bytes(b'\xef\xbb\xbfname = "x"\n')
    assert read_toml(tmp_path / "bom.toml", TaskError) == {"name": "x"}
    (tmp_path / "bom.json").write_bytes(b'\xef\xbb\xbf{"a": ' + b"[" * 63 + b"]" * 63 + b"}")
    assert isinstance(read_json(tmp_path / "bom.json", TaskError), dict)
