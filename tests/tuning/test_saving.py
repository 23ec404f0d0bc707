"""Saving a tuned program (issue #49): the state and its manifest go through the package's one writer, so a
symlink planted where `optimize` used to write its temporary files (`<out>.tmp.json`,
`<out>.manifest.json.tmp`) is never followed, a symlink at the output itself is refused, and `--out` is
checked before anything is tuned: a bad name or place costs no tuning run."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from cejudge_dspy import judges
from cejudge_dspy.cli import main
from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.judges.cejudge import PairwiseJudge
from tests.support.bad_inputs import good_data

MANIFEST = {"task": "chat", "task_version": 1}
KEEP = "the target's own content\n"


def test_symlinks_planted_at_the_old_temporary_names_are_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "target.txt"
    target.write_text(KEEP)
    out = tmp_path / "chat.json"
    for planted in (tmp_path / "chat.tmp.json", tmp_path / "chat.manifest.json.tmp"):
        planted.symlink_to(target)
    written = judges.save_program(PairwiseJudge("chat"), out, MANIFEST)
    assert target.read_text() == KEEP  # neither planted link was written through
    assert not out.is_symlink() and "judge.predict" in json.loads(out.read_text())
    assert not written.is_symlink() and json.loads(written.read_text())["task"] == "chat"
    names = {p.name for p in tmp_path.iterdir()}
    assert names == {
        "target.txt",
        "chat.tmp.json",
        "chat.manifest.json.tmp",
        "chat.json",
        "chat.manifest.json",
    }


@pytest.mark.parametrize("name", ["chat.json", "chat.manifest.json"])
def test_a_symlink_at_the_program_or_its_manifest_is_refused_before_anything_is_written(
    tmp_path: Path, name: str
) -> None:
    target = tmp_path / "target.txt"
    target.write_text(KEEP)
    (tmp_path / name).symlink_to(target)
    with pytest.raises(CEJudgeError, match=f"{name} is a symlink"):
        judges.save_program(PairwiseJudge("chat"), tmp_path / "chat.json", MANIFEST)
    assert target.read_text() == KEEP and len(list(tmp_path.iterdir())) == 2


@pytest.mark.parametrize(
    ("out", "says"),
    [
        ("tuned.txt", "saved as .json"),
        ("", "saved as .json"),
        ("file/under.json", "a file is in the way"),
    ],
    ids=["NAME.txt", "empty", "under a file"],
)
def test_optimize_checks_out_before_tuning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, out: str, says: str
) -> None:
    def tune(*args: object, **kwargs: object) -> object:
        raise AssertionError("tuning started before --out was checked")

    monkeypatch.setattr("cejudge_dspy.tuning.optimize", tune)  # the tuning loop `cejudge optimize` runs
    (tmp_path / "file").write_text("")
    where = str(tmp_path / out) if out else ""
    argv = ["optimize", "--task", "chat", "--lm", "simulated:0", "--data", str(good_data(tmp_path))]
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main([*argv, "--train", "6", "--dev", "4", "--budget", "12", "--yes", "--out", where])
    assert code != 0 and says in err.getvalue() and err.getvalue().count("error:") == 1
