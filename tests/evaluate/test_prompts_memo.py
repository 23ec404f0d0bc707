"""A rerun that finds nothing to judge reads its prompt fingerprint from the run directory's memo instead of
building the program (and importing DSPy); anything that could change the prompts is another key, and the
program is built as before (evaluate/_prompts_memo.py, issue 49)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import cejudge_dspy
import cejudge_dspy.judges
from cejudge_dspy.evaluate import _prompts_memo
from cejudge_dspy.judges import _registry
from tests.support import FIXTURES, REPO

DATA = FIXTURES / "data" / "pairwise_labels.jsonl"


def _run(out: Path, **kw: Any) -> Any:
    return cejudge_dspy.evaluate(task="chat", data=DATA, backbone="simulated:0", out=out, bootstrap=0, **kw)


def _refuse_building(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    built: list[str] = []

    def spy(task: Any, **kw: Any) -> Any:
        built.append(str(task))
        return real(task, **kw)

    real = _registry.run_program
    monkeypatch.setattr(cejudge_dspy.judges, "run_program", spy)  # what evaluate's builder imports
    return built


def test_a_finished_run_resumes_without_building_its_program(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _run(tmp_path / "run")
    memo = json.loads((tmp_path / "run" / _prompts_memo.MEMO).read_text(encoding="utf-8"))
    assert memo["prompts"] == first.config["prompts"]  # the fingerprint the build gave
    built = _refuse_building(monkeypatch)
    again = _run(tmp_path / "run", force_new=False)
    assert built == [] and again.config == first.config  # the same identity, read from the memo
    assert again.summary == first.summary


def test_another_key_or_a_broken_memo_builds_the_program_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _run(tmp_path / "run")
    memo_path = tmp_path / "run" / _prompts_memo.MEMO
    built = _refuse_building(monkeypatch)
    for text in (
        json.dumps({"key": "another", "prompts": "0" * 16}),  # a package edit, another DSPy, another task...
        "{ not json",
        json.dumps(["a list"]),
    ):
        memo_path.write_text(text, encoding="utf-8")
        again = _run(tmp_path / "run")
        assert again.config["prompts"] == first.config["prompts"]
    assert len(built) == 3
    # Rebuilt, the memo holds the fingerprint again, under this install's key.
    assert json.loads(memo_path.read_text(encoding="utf-8"))["prompts"] == first.config["prompts"]


def test_the_key_follows_the_task_the_method_the_options_and_the_package(tmp_path: Path) -> None:
    from cejudge_dspy.tasks import load_task

    chat, literary = load_task("chat"), load_task("literary")
    base = _prompts_memo.memo_key(chat, "cejudge", "base", {"tie_band": 0.0})
    assert base == _prompts_memo.memo_key(chat, "cejudge", "base", {"tie_band": 0.0})
    others = [
        _prompts_memo.memo_key(literary, "cejudge", "base", {"tie_band": 0.0}),
        _prompts_memo.memo_key(chat, "direct", "base", {"tie_band": 0.0}),
        _prompts_memo.memo_key(chat, "cejudge", "tuned@abc", {"tie_band": 0.0}),
        _prompts_memo.memo_key(chat, "cejudge", "base", {"tie_band": 0.2}),
    ]
    assert base not in others and len(set(others)) == len(others)


def test_an_edited_package_file_is_another_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "pkg"
    (package / "judges").mkdir(parents=True)
    signature = package / "judges" / "_signatures.py"
    signature.write_text('"""Judge the response."""\n', encoding="utf-8")
    monkeypatch.setattr(_prompts_memo, "_PACKAGE", package)
    _prompts_memo._code_stamp.cache_clear()
    before = _prompts_memo._code_stamp()
    signature.write_text('"""Judge the response carefully."""\n', encoding="utf-8")
    _prompts_memo._code_stamp.cache_clear()
    try:
        assert _prompts_memo._code_stamp() != before
    finally:
        _prompts_memo._code_stamp.cache_clear()


def test_a_resume_that_judges_nothing_imports_no_dspy(tmp_path: Path) -> None:
    """The point of the memo: a fresh process resuming a finished run never imports DSPy."""
    _run(tmp_path / "run")
    script = textwrap.dedent(
        f"""
        import sys
        import cejudge_dspy
        run = cejudge_dspy.evaluate(task="chat", data={str(DATA)!r}, backbone="simulated:0",
                                    out={str(tmp_path / "run")!r}, bootstrap=0)
        assert run.records, "no records read"
        print(sorted(m for m in sys.modules if m == "dspy" or m.startswith("dspy.")))
        """
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout
