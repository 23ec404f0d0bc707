"""CheckEval reports: per-dimension and overall rows of run summaries and of `cejudge agreement`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cejudge_dspy.cli import main
from cejudge_dspy.cli.display import dimension_tables, summary_table
from cejudge_dspy.data import Item
from cejudge_dspy.judges.verdicts import JudgeResult
from cejudge_dspy.metrics import summarize
from cejudge_dspy.runs import Record
from cejudge_dspy.tasks import load_task

DIMS = ("coherence", "consistency", "fluency", "relevance")


def record(
    rid: str,
    human: dict[str, float],
    score: float | None,
    fluency: float = 0.5,
    answers: tuple[str, ...] = (),
) -> Record:
    dims = {"coherence": score, "consistency": score, "fluency": fluency, "relevance": score}
    rows = [
        {"dimension": d, "subdimension": "s", "question": f"{d} q", "answer": a}
        for d, a in zip(("coherence", "fluency"), answers, strict=False)
    ]
    result = JudgeResult(
        mode="pointwise",
        status="ok" if score is not None else "unparsed",
        method="checkeval",
        score=score,
        dimension_scores=dims if score is not None else {},
        details={"answers": rows},
    )
    item = Item(id=rid, mode="pointwise", instruction="", label=human, group="doc1")
    return Record(id=rid, task="summeval", method="checkeval", status=result.status, item=item, result=result)


def test_overall_row_is_the_item_score_against_the_mean_human_score() -> None:
    rows = [
        record("a", dict.fromkeys(DIMS, 1.0), 0.2),  # human mean 1
        record("b", dict.fromkeys(DIMS, 3.0), 0.5),  # human mean 3
        record("c", {"coherence": 5.0, "consistency": 5.0, "fluency": 5.0, "relevance": 1.0}, 0.9),  # mean 4
        record("d", {"coherence": 2.0}, 0.1),  # lacks three dimensions: not in the overall row
        record("e", dict.fromkeys(DIMS, 2.0), None),  # unparsed: excluded, counted
    ]
    overall = summarize(rows, load_task("summeval"), n_resamples=0)["dimensions"]["overall"]
    assert overall["n"] == 4 and overall["spearman"]["n_excluded"] == 1
    assert overall["spearman"]["value"] == pytest.approx(1.0)  # same order on a, b, c
    # Pearson by hand: x = (.2, .5, .9), y = (1, 3, 4); Sxy = 31/30, Sxx = 37/150, Syy = 14/3.
    assert overall["pearson"]["value"] == pytest.approx((31 / 30) / ((37 / 150) * (14 / 3)) ** 0.5)


def test_tables_say_why_a_correlation_is_undefined() -> None:
    rows = [record(r, dict.fromkeys(DIMS, v), s) for r, v, s in (("a", 1.0, 0.2), ("b", 3.0, 0.5))]
    summary = summarize(rows, load_task("summeval"), n_resamples=0)
    assert summary["dimensions"]["fluency"]["spearman"]["value"] is None  # the judge said 0.5 twice
    caption = str(dimension_tables(summary).caption)
    assert "fluency: n/a, the judge gave every item the same score" in caption
    assert "coherence" not in caption  # defined there: two items, both sides vary
    labels = [str(c) for c in summary_table(summary).columns[0]._cells]
    assert any("per dimension" in c for c in labels) and not any("average" in c for c in labels)


def write_run(path: Path, records: list[Record], lm: str) -> str:
    path.mkdir()
    (path / "run.json").write_text(json.dumps({"task": "summeval", "method": "checkeval", "lm": lm}))
    (path / "results.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in records))
    return str(path)


def test_agreement_command_reports_each_dimension_and_overall(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # one table row per line
    humans = [dict.fromkeys(DIMS, v) for v in (1.0, 3.0, 5.0)]
    # Same overall scores in both runs (alpha 1); coherence answers agree, fluency answers always differ.
    one = [
        record(i, h, s, answers=("yes", "yes"))
        for i, h, s in zip("abc", humans, (0.2, 0.5, 0.9), strict=True)
    ]
    two = [
        record(i, h, s, answers=("yes", "no")) for i, h, s in zip("abc", humans, (0.2, 0.5, 0.9), strict=True)
    ]
    runs = [write_run(tmp_path / "one", one, "embedded"), write_run(tmp_path / "two", two, "gguf:small.gguf")]
    assert main(["agreement", *runs]) == 0
    out = capsys.readouterr().out
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if line.count("│") > 3}
    assert set(rows) >= {*DIMS, "overall"}
    assert "1.000 (n=3)" in rows["overall"]  # interval alpha of identical varying scores
    assert "(n=3)" in rows["coherence"].split("│")[3] and "(n=3)" in rows["fluency"].split("│")[3]
    assert "(n=6)" in rows["overall"].split("│")[3]  # all questions when no dimension is asked for
    assert main(["agreement", *runs, "--dimension", "fluncy"]) == 2
    assert "not a dimension of summeval" in capsys.readouterr().err


def test_mean_human_score_edge_cases() -> None:
    from cejudge_dspy.metrics import mean_human_score

    assert mean_human_score({"a": 1, "b": 4.0}, ["a", "b"]) == 2.5
    assert mean_human_score({"a": 1}, ["a", "b"]) is None  # a partial mean is another scale
    assert mean_human_score({"a": 1}, []) is None
    assert mean_human_score(3, ["a"]) == 3.0 and mean_human_score("3", ["a"]) is None
