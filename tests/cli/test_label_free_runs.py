"""`cejudge evaluate` on data without labels (issue #48), on the simulated backbone.

The reported case: five pairs with no label column under `--task chat` printed `accuracy 1.000 [1.000,
1.000]`, because MM-Eval's declared `label = "A"` reached the user's file. Now such a run prints verdict
shares with intervals and no accuracy, its records claim no label, an explicit `--const label=A` still
scores, and a labelled run's summary is byte for byte what it was before label-free summaries existed
(tests/fixtures/runs/mmeval_simulated: the records and the summary written then)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cejudge_dspy.cli import main
from cejudge_dspy.metrics import summarize
from cejudge_dspy.runs import read_records
from cejudge_dspy.tasks import load_task
from tests import support

LABELLED_RUN = support.FIXTURES / "runs" / "mmeval_simulated"


def write_pairs(path: Path, labels: list[str | None]) -> Path:
    rows = []
    for i, label in enumerate(labels):
        row = {"instruction": f"Frage {i}?", "response_a": f"Antwort {i}.", "response_b": f"Erwiderung {i}."}
        row["language"] = "de" if i % 2 else "en"
        if label is not None:
            row["label"] = label
        rows.append(row)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def evaluate(data: Path, out: Path, *extra: str) -> int:
    argv = ["evaluate", "--task", "chat", "--lm", "simulated:0", "--data", str(data), "--out", str(out)]
    return main([*argv, "--bootstrap", "50", *extra])


def test_five_unlabelled_pairs_report_verdict_shares_not_accuracy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_pairs(tmp_path / "mine.jsonl", [None] * 5)
    assert evaluate(data, tmp_path / "run") == 0
    printed = capsys.readouterr().out
    assert not re.search(r"accuracy(?! or correlation)", printed)  # only the caption's "no accuracy"
    assert "5 items without a gold label: verdict shares" in printed
    assert "no accuracy or correlation" in printed
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert "overall" not in summary and summary["per_language"] == {}
    free = summary["label_free"]
    assert free["n_items"] == 5 and set(free["per_language"]) == {"de", "en"}
    shares = free["overall"]
    assert sum(shares[k]["extra"]["n_target"] for k in ("A", "B", "tie")) == shares["counts"]["judged"] == 5
    assert all(shares[k]["ci_low"] <= shares[k]["value"] <= shares[k]["ci_high"] for k in ("A", "B", "tie"))
    records = read_records(tmp_path / "run" / "results.jsonl")
    assert len(records) == 5 and {r.item.label for r in records} == {None}  # no one gave a label


def test_an_explicit_constant_label_is_scored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_pairs(tmp_path / "mine.jsonl", [None] * 5)
    assert evaluate(data, tmp_path / "run", "--const", "label=A") == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["overall"]["n"] == 5 and "label_free" not in summary
    assert "accuracy" in capsys.readouterr().out


def test_a_partly_labelled_file_says_how_many_items_were_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_pairs(tmp_path / "mixed.jsonl", ["A", None, "B", None, "A", None])
    assert evaluate(data, tmp_path / "run") == 0
    captured = capsys.readouterr()
    printed = captured.out
    assert "3 of 6 items have no gold label: they get no accuracy\n" in captured.err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["overall"]["counts"]["scored"] == 3 and summary["overall"]["counts"]["no_label"] == 3
    assert summary["label_free"]["n_items"] == 3
    assert "the table above scored 3 of the 3 labelled items" in " ".join(printed.split())


def test_pointwise_label_free_prints_the_score_distribution(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "de-en.jsonl"  # literary reads the language pair from the file name
    rows = [
        {"instruction": f"Der Satz {i} ist kurz.", "response": f"Sentence {i} is short."} for i in range(6)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    argv = ["evaluate", "--task", "literary", "--lm", "simulated:0", "--data", str(data)]
    assert main([*argv, "--out", str(tmp_path / "run"), "--bootstrap", "50"]) == 0
    captured = capsys.readouterr()
    printed = " ".join(captured.out.split())
    assert "6 items without a gold label: score distribution" in printed
    # Said before the run: literary declares a label column ('rating') that this file lacks.
    assert "6 of 6 items have no gold label: they get no kendall (the data has no 'rating' column" in (
        captured.err
    )
    assert not re.search(r"kendall|spearman|pearson", printed)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert "overall" not in summary
    part = summary["label_free"]["per_language"]["de-en"]
    scores = [r.result.score for r in read_records(tmp_path / "run" / "results.jsonl")]
    assert part["mean"]["value"] == pytest.approx(sum(scores) / 6) and part["counts"]["judged"] == 6
    assert part["mean"]["ci_low"] <= part["mean"]["value"] <= part["mean"]["ci_high"]
    assert sum(part["histogram"].values()) == 6


def test_a_labelled_runs_summary_is_unchanged() -> None:
    """The summary of a labelled run, recomputed now, equals the one written before label-free summaries."""
    records = read_records(LABELLED_RUN / "results.jsonl")
    expected = (LABELLED_RUN / "summary.json").read_text(encoding="utf-8")
    summary = summarize(records, load_task("chat"), n_resamples=200, seed=42)
    assert json.dumps(summary, indent=2, sort_keys=True) + "\n" == expected
