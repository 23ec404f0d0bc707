"""No file of a run directory is written through a symlink (issue #41).

A symlink planted as results.jsonl, run.json, summary.json, .holder, .lock, results.jsonl.torn or view.html
would have sent the write to its target. Each writer must refuse it with one line naming it and leave the
target byte for byte as it was; a plain file is still written as before (the controls).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from cejudge_dspy import runs
from cejudge_dspy.cli import main
from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.files import UnsafeFileError, write_file_atomic
from tests.support.bad_inputs import SIM, good_data
from tests.support.view_runs import chat_run

KEEP = b"the target's own content\n"


@pytest.fixture
def target(tmp_path: Path) -> Path:
    path = tmp_path / "elsewhere" / "precious.txt"
    path.parent.mkdir()
    path.write_bytes(KEEP)
    return path


def plant(run: Path, name: str, target: Path) -> Path:
    run.mkdir(parents=True, exist_ok=True)
    link = run / name
    link.symlink_to(target)
    return link


WRITERS: dict[str, Callable[[Path], None]] = {
    "results.jsonl": lambda run: runs.append_record(run / "results.jsonl", {"id": "x"}),
    "summary.json": lambda run: runs.write_summary(run / "summary.json", {"overall": {}}),
    "run.json": lambda run: runs.write_json_atomic(run / "run.json", {"task": "chat"}),
    "view.html": lambda run: write_file_atomic(run / "view.html", "<html></html>"),
}


@pytest.mark.parametrize("name", list(WRITERS))
def test_a_writer_refuses_a_symlink_and_leaves_its_target_alone(
    tmp_path: Path, target: Path, name: str
) -> None:
    run = tmp_path / "run"
    plant(run, name, target)
    with pytest.raises(CEJudgeError) as err:  # one line: the CLI prints it after "error: "
        WRITERS[name](run)
    assert str(run / name) in str(err.value) and "symlink" in str(err.value) and "\n" not in str(err.value)
    assert target.read_bytes() == KEEP and (run / name).is_symlink()


@pytest.mark.parametrize("name", list(WRITERS))
def test_the_same_writer_writes_a_plain_file(tmp_path: Path, name: str) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / name).write_text("old\n")
    WRITERS[name](run)
    text = (run / name).read_text()
    assert text != "old\n" and not (run / name).is_symlink()
    assert [p.name for p in run.iterdir()] == [name]  # no temporary file left behind


@pytest.mark.parametrize("name", ["results.jsonl", "run.json", "summary.json", "results.jsonl.torn"])
def test_opening_a_run_refuses_a_planted_symlink_before_judging(
    tmp_path: Path, target: Path, name: str
) -> None:
    run = tmp_path / "run"
    plant(run, name, target)
    with pytest.raises(UnsafeFileError, match="symlink"):
        runs.prepare_run_dir(run, {"task": "chat"})
    assert target.read_bytes() == KEEP


def test_the_lock_refuses_symlinked_lock_and_holder_files(tmp_path: Path, target: Path) -> None:
    for name in (".lock", ".holder"):
        run = tmp_path / name.strip(".")
        plant(run, name, target)
        with pytest.raises(UnsafeFileError, match=f"{name} is a symlink"), runs.lock(run):
            pytest.fail("the lock was taken")
        assert target.read_bytes() == KEEP
    with runs.lock(tmp_path / "plain"):  # the control: a plain run directory locks and names its holder
        holder = json.loads((tmp_path / "plain" / ".holder").read_text())
    assert holder["pid"] == os.getpid()


def test_a_lock_that_is_a_symlink_loop_is_one_line(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / ".lock").symlink_to(run / "loop")
    (run / "loop").symlink_to(run / ".lock")
    with pytest.raises(UnsafeFileError, match=r"\.lock is a symlink"), runs.lock(run):
        pytest.fail("the lock was taken")


def test_a_torn_line_is_moved_aside_but_never_through_a_symlink(tmp_path: Path, target: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").write_text('{"id": "a"}\n{"id": "b", "cut')
    plant(run, "results.jsonl.torn", target)
    with pytest.raises(UnsafeFileError):
        runs.prepare_run_dir(run, {"task": "chat"})
    assert target.read_bytes() == KEEP


def test_evaluate_and_view_through_the_cli_leave_a_symlinks_target_alone(
    tmp_path: Path, target: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    plant(run, "results.jsonl", target)
    data = good_data(tmp_path, 2)
    assert main(["evaluate", "--task", "chat", "--data", str(data), "--out", str(run), *SIM]) == 2
    viewed = chat_run(tmp_path, "viewed")
    plant(viewed, "view.html", target)
    assert main(["view", str(viewed), "--bootstrap", "0"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error: ")]
    assert len(err) == 2 and "results.jsonl is a symlink" in err[0] and "view.html is a symlink" in err[1]
    assert target.read_bytes() == KEEP
