"""Writing a run on a full disk, and text with half a character (issue #49).

A full or read-only disk is one line wherever the tool writes, not only in results.jsonl: the lock-holder
file written on resume and view.html included, the records already written kept. A lone surrogate from a
model's answer or a server's error (data files are checked on the way in) is written as its JSON escape,
which reads back as the same text, so the record writer never raises UnicodeEncodeError."""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
from pathlib import Path

import pytest

from cejudge_dspy.cli import main
from cejudge_dspy.files import _write
from cejudge_dspy.runs import append_record, write_json_atomic
from tests.support.bad_inputs import SIM, good_data

HALF = "bad \ud83d answer"


def _run(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    return code, err.getvalue()


def _full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(_write.os, "replace", full)


def test_a_full_disk_on_resume_is_one_line_and_keeps_the_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = [
        "evaluate",
        "--task",
        "chat",
        "--data",
        str(good_data(tmp_path, 3)),
        "--out",
        str(tmp_path / "r"),
        *SIM,
    ]
    assert _run(argv)[0] == 0
    before = (tmp_path / "r" / "results.jsonl").read_bytes()
    _full_disk(monkeypatch)
    code, err = _run(argv)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code != 0 and "Traceback" not in err
    holder = tmp_path / "r" / ".holder"
    assert (
        lines[-1]
        == f"error: cannot write {holder} (No space left on device); free space and run the command again"
    )
    assert (tmp_path / "r" / "results.jsonl").read_bytes() == before


def test_a_full_disk_under_view_html_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    argv = [
        "evaluate",
        "--task",
        "chat",
        "--data",
        str(good_data(tmp_path, 3)),
        "--out",
        str(tmp_path / "r"),
        *SIM,
    ]
    assert _run(argv)[0] == 0
    _full_disk(monkeypatch)
    code, err = _run(["view", str(tmp_path / "r")])
    assert code != 0 and "Traceback" not in err
    assert (
        err.strip()
        .splitlines()[-1]
        .startswith(f"error: cannot write {tmp_path / 'r' / 'view.html'} (No space")
    )
    assert not (tmp_path / "r" / "view.html").exists()


def test_half_a_character_from_a_model_is_written_and_read_back_as_it_was(tmp_path: Path) -> None:
    record = {"id": "x", "result": {"feedback": HALF, "concepts": [HALF]}}
    append_record(tmp_path / "results.jsonl", record)
    write_json_atomic(tmp_path / "summary.json", {"error": HALF})
    raw = (tmp_path / "results.jsonl").read_bytes()
    raw.decode("utf-8")  # valid UTF-8 on disk
    assert json.loads(raw) == record
    assert json.loads((tmp_path / "summary.json").read_text(encoding="utf-8")) == {"error": HALF}
