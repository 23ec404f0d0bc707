"""`cejudge_dspy.evaluate(...)` is what `cejudge evaluate` runs: the same settings write the same records
(timings masked) and the same run.json, it tells its progress to the caller, and a mistyped keyword is one
line naming the nearest known one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import cejudge_dspy
from cejudge_dspy.backbones import BackboneOptions
from cejudge_dspy.cli import main
from cejudge_dspy.errors import InputError
from cejudge_dspy.evaluate import EvaluateOptions, EvaluateProgress
from cejudge_dspy.judges import JudgeOptions
from tests.support import FIXTURES

DATA = FIXTURES / "data"


def _rows(run: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    for row in rows:
        assert row.pop("seconds") >= 0  # the one field that differs between two runs: its timing
    return sorted(rows, key=lambda r: r["id"])


CASES = {
    "chat": (
        [
            "--task",
            "chat",
            "--data",
            str(DATA / "pairwise_labels.jsonl"),
            "--tie-band",
            "0.2",
            "--first",
            "4",
        ],
        {
            "task": "chat",
            "data": DATA / "pairwise_labels.jsonl",
            "judge": JudgeOptions(tie_band=0.2),
            "first": 4,
        },
    ),
    "literary": (
        ["--task", "literary", "--data", str(DATA / "liteval"), "--limit", "3", "--no-concepts"],
        {"task": "literary", "data": DATA / "liteval", "judge": JudgeOptions(concepts=False), "limit": 3},
    ),
    "summeval": (
        ["--task", "summeval", "--method", "checkeval", "--data", str(DATA / "summeval.jsonl")],
        {"task": "summeval", "data": DATA / "summeval.jsonl", "judge": JudgeOptions(method="checkeval")},
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_evaluate_in_python_writes_the_records_and_run_json_the_command_writes(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, keywords = CASES[case]
    lm = ["--lm", "simulated:0", "--no-cache", "--bootstrap", "0", "--concurrency", "2"]
    assert main(["evaluate", *argv, *lm, "--out", str(tmp_path / "cli")]) == 0
    capsys.readouterr()
    run = cejudge_dspy.evaluate(
        **keywords,
        backbone=BackboneOptions(lm="simulated:0", cache=False),
        bootstrap=0,
        concurrency=2,
        out=tmp_path / "python",
    )
    assert _rows(tmp_path / "python") == _rows(tmp_path / "cli")
    assert (
        len(run.records) == len(_rows(tmp_path / "cli"))
        and run.results_path == tmp_path / "python" / "results.jsonl"
    )
    identity = json.loads((tmp_path / "python" / "run.json").read_text(encoding="utf-8"))
    assert identity == json.loads((tmp_path / "cli" / "run.json").read_text(encoding="utf-8"))
    summary = json.loads(run.summary_path.read_text(encoding="utf-8"))
    assert summary["run"] == run.config and summary["metric"] == run.summary["metric"]
    assert capsys.readouterr().err == ""  # the library prints nothing: what it says goes to `progress`


def test_evaluate_tells_its_progress_and_resumes_without_judging_again(tmp_path: Path) -> None:
    class Heard(EvaluateProgress):
        def __init__(self) -> None:
            self.notes: list[str] = []
            self.records: list[str] = []
            self.blocks: list[tuple[str, int]] = []

        def note(self, line: str) -> None:
            self.notes.append(line)

        def judging(self, title: str, total: int) -> Any:
            self.blocks.append((title, total))
            return super().judging(title, total)

        def record(self, record: Any) -> None:
            self.records.append(record.id)

    options = EvaluateOptions(
        task="chat",
        data=DATA / "pairwise_labels.jsonl",
        backbone="simulated:0",
        first=3,
        bootstrap=0,
        out=tmp_path,
    )
    heard = Heard()
    run = cejudge_dspy.evaluate(options, progress=heard)
    assert sorted(heard.records) == sorted(r.id for r in run.records) and len(heard.records) == 3
    assert heard.blocks == [("chat · cejudge", 3)]
    assert heard.notes[0] == f"3 items, 0 already in {tmp_path / 'results.jsonl'}, 3 to judge"
    again = Heard()
    rerun = cejudge_dspy.evaluate(options, progress=again)
    assert again.records == [] and again.blocks == [] and rerun.judged == 0
    assert again.notes[0].startswith("3 items, 3 already in")


def test_a_mistyped_keyword_is_one_line_naming_the_nearest_known_one(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown evaluate option 'concurency': did you mean 'concurrency'"):
        cejudge_dspy.evaluate(task="chat", concurency=2)
    with pytest.raises(
        InputError, match="unknown evaluate option 'lm_options': known: task, data, items, judge, backbone"
    ):
        cejudge_dspy.evaluate(
            task="chat", backbone="simulated:0", lm_options={"temperature": 0.5}, out=tmp_path
        )
    with pytest.raises(
        InputError, match="unknown BackboneOptions option 'temprature': did you mean 'temperature'"
    ):
        cejudge_dspy.evaluate(
            task="chat", backbone=BackboneOptions(lm="simulated:0", temprature=0.5), out=tmp_path
        )
    with pytest.raises(
        InputError, match=r"^temperature: must be at most 2 \(a sampling temperature\), got 3"
    ):
        cejudge_dspy.evaluate(
            task="chat", backbone=BackboneOptions(lm="simulated:0", temperature=3), out=tmp_path
        )
    assert not (tmp_path / "run.json").exists()  # refused before anything was written
    with pytest.raises(InputError, match=r"^concurrency: must be at least 1"):  # Python's spelling
        cejudge_dspy.evaluate(task="chat", backbone="simulated:0", concurrency=0)


def test_the_command_names_the_flag_where_python_names_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["evaluate", "--task", "chat", "--lm", "simulated:0", "--concurrency", "0", "--out", str(tmp_path)]
    assert main(argv) == 2
    assert "--concurrency: must be at least 1" in capsys.readouterr().err


def test_the_public_face_lists_itself() -> None:
    names = dir(cejudge_dspy)
    assert {
        "PairwiseJudge",
        "evaluate",
        "EvaluateOptions",
        "JudgeOptions",
        "compare_runs",
        "calibrate",
    } <= set(names)
    import cejudge_dspy.evaluate as package  # importing the package leaves `cejudge_dspy.evaluate` callable

    assert callable(cejudge_dspy.evaluate) and package.evaluate.__name__ == "evaluate"
    assert "evaluate" in dir(package) and "judge_items" in dir(package)
