"""Strict accuracy (an unparsed verdict counted as wrong, the CE-Judge paper's definition) beside the
excluding accuracy: the metric, run summaries, the run table, `cejudge compare` and `score-predictions`,
each on values counted by hand."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from cejudge_dspy.cli import main
from cejudge_dspy.cli.display import compare_table, summary_table
from cejudge_dspy.metrics import (
    accuracy,
    compare_runs,
    score_prediction_files,
    strict_accuracy,
    strict_average,
    summarize,
)
from cejudge_dspy.runs import read_records
from cejudge_dspy.tasks import load_task
from tests import support
from tests.support.view_runs import CHAT_A, CHAT_B, chat_run

PREDICTIONS = support.FIXTURES / "predictions"


def test_strict_accuracy_by_hand() -> None:
    preds = ["A", None, "B", None, "A", float("nan"), "tie"]
    golds = ["A", "A", "A", "tie", None, "B", "B"]
    # Scored: 1 right (A/A), 2 unparsed against A and B (wrong), B/A wrong, tie/B wrong -> 1 of 5.
    # Left out: the gold tie (unparsed or not) and the missing gold.
    m = strict_accuracy(preds, golds)
    assert (m.name, m.value, m.n, m.n_excluded) == ("strict_accuracy", pytest.approx(1 / 5), 5, 1)
    assert m.extra == {"n_correct": 1, "n_pred_ties": 1, "n_gold_ties": 1, "n_unparsed": 2}
    # The excluding accuracy leaves the three missing preds out: 1 of 3.
    assert accuracy(preds, golds).value == pytest.approx(1 / 3)
    # With gold ties scored, the unparsed gold tie is wrong as well: 1 of 6.
    assert strict_accuracy(preds, golds, include_gold_ties=True).value == pytest.approx(1 / 6)


def test_strict_equals_accuracy_when_everything_parses() -> None:
    preds, golds = ["A", "B", "B", "A"], ["A", "B", "A", "A"]
    assert strict_accuracy(preds, golds).value == accuracy(preds, golds).value == 0.75
    assert math.isnan(strict_accuracy([None], [None]).value)


def chat_summary(tmp_path: Path, spec: dict[str, tuple] = CHAT_A) -> dict:
    run = chat_run(tmp_path, "run", spec)
    return summarize(read_records(run / "results.jsonl"), load_task("chat"), n_resamples=0)


def test_run_summary_carries_strict_accuracy(tmp_path: Path) -> None:
    # view_runs.CHAT_A: en p1 right, p2 wrong, p3 tie verdict (wrong); de p4 gold tie, p5 unparsed
    # (gold B), p6 error.
    s = chat_summary(tmp_path)
    en, de = s["per_language"]["en"], s["per_language"]["de"]
    assert (en["value"], en["strict"]["value"]) == (pytest.approx(1 / 3), pytest.approx(1 / 3))
    # de: nothing scored by the excluding accuracy; strictly, p5 is wrong and p6 (an error) left out.
    assert de["value"] is None and de["n"] == 0
    assert (de["strict"]["value"], de["strict"]["n"], de["strict"]["extra"]["n_unparsed"]) == (0.0, 1, 1)
    assert s["overall"]["strict"]["value"] == pytest.approx(1 / 4)
    assert s["overall"]["value"] == pytest.approx(1 / 3)
    assert s["average"] == pytest.approx(1 / 3)  # only en is defined
    assert s["strict_average"] == pytest.approx((1 / 3 + 0) / 2)


def test_pointwise_summaries_have_no_strict_accuracy(tmp_path: Path) -> None:
    from tests.support.view_runs import literary_run

    run = literary_run(tmp_path)
    s = summarize(read_records(run / "results.jsonl"), load_task("literary"), n_resamples=0)
    assert "strict_average" not in s and "strict" not in s["overall"]


def test_the_run_table_leads_with_the_runs_headline(tmp_path: Path) -> None:
    from rich.console import Console

    def render(summary: dict) -> list[str]:
        console = Console(width=200, record=True)
        console.print(summary_table(summary))
        return console.export_text().splitlines()

    s = chat_summary(tmp_path)
    header = next(line for line in render(s) if "language" in line)
    assert [c.strip() for c in header.split("┃")[2:5]] == ["accuracy", "95% CI", "strict"]
    de = next(line for line in render(s) if line.startswith("│ de"))
    assert [c.strip() for c in de.split("│")[2:5]] == ["n/a", "n < 5", "0.000"]
    s["run"] = {"headline": "strict"}  # what --preset paper records for a pairwise run
    header = next(line for line in render(s) if "language" in line)
    assert [c.strip() for c in header.split("┃")[2:5]] == ["strict accuracy", "95% CI", "accuracy"]
    average = next(line for line in render(s) if "average" in line)
    assert [c.strip() for c in average.split("│")[2:5]] == ["0.167", "", "0.333"]


def test_compare_reports_strict_accuracy_and_its_test(tmp_path: Path) -> None:
    a, b = chat_run(tmp_path, "a", CHAT_A), chat_run(tmp_path, "b", CHAT_B)
    cmp = compare_runs(a, b, n_resamples=0)
    everything = cmp["rows"][-1]
    assert everything["language"] == "all"
    # Excluding: A 1/3 (p1 of p1-p3), B 3/4 (p1, p2, p5 of p1, p2, p3, p5); McNemar only sees p2.
    assert (everything["a"]["value"], everything["b"]["value"]) == (pytest.approx(1 / 3), 0.75)
    assert everything["test"]["p_value"] == pytest.approx(1.0)
    # Strict: A 1/4 (p5 unparsed counts wrong), B 3/4; p2 and p5 both turn right: exact p = 2 * 0.5^2.
    assert (everything["strict_a"]["value"], everything["strict_b"]["value"]) == (0.25, 0.75)
    assert everything["strict_test"]["p_value"] == pytest.approx(0.5)
    assert cmp["differences"] == {}
    table = compare_table(cmp)
    assert [c.header for c in table.columns][-3:] == ["strict A", "strict B", "p (strict)"]


def test_score_predictions_averages_strict_accuracy(capsys: pytest.CaptureFixture[str]) -> None:
    # mmeval_de_reasoning.txt: 3 right of 6 scored, 1 unparsed -> strict 3/7 (test_predictions.py).
    pairwise = PREDICTIONS / "mmeval_de_reasoning.txt"
    scores = score_prediction_files([pairwise, pairwise, PREDICTIONS / "liteval_de-en.txt"])
    assert strict_average(scores) == pytest.approx(3 / 7)
    assert strict_average(scores[2:]) is None
    assert main(["score-predictions", str(pairwise)]) == 0
    average = next(line for line in capsys.readouterr().out.splitlines() if "average" in line)
    assert "0.429" in average and "0.500" in average


def test_both_decision_rules_carry_strict_accuracy(tmp_path: Path) -> None:
    from tests.support.view_runs import chat_probability_run

    run = chat_probability_run(tmp_path)
    s = summarize(read_records(run / "results.jsonl"), load_task("chat"), n_resamples=0)
    for rule in ("argmax", "probability"):
        overall = s["decision_rules"][rule]["overall"]
        # Every record parsed: strict accuracy is the excluding one, rule by rule.
        assert overall["strict"]["value"] == pytest.approx(overall["value"])
        assert overall["strict"]["extra"]["n_unparsed"] == 0
