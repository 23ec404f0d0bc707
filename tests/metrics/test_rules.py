"""Both decision rules from one run: summaries, calibration, the tie band chosen on a run's items
(`cejudge calibrate`) and `compare` across rules, on records whose numbers are worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cejudge_dspy.cli import main
from cejudge_dspy.metrics import calibrate_run, compare_runs, summarize
from cejudge_dspy.metrics._calibration import choose_tie_band
from cejudge_dspy.runs import Record
from cejudge_dspy.tasks import load_task
from tests.support.view_runs import (
    PROB_PAIRS,
    chat_probability_run,
    literary_run,
    probability_pair,
    write_run,
)

ITEMS = PROB_PAIRS  # worked out by hand in view_runs.py: p(A), the probability verdict and the argmax one


def records(rule: str = "probability") -> list[Record]:
    return [probability_pair(rid, *v, rule=rule) for rid, v in ITEMS.items()]


def run_dir(tmp_path: Path, rule: str = "probability") -> Path:
    return chat_probability_run(tmp_path, rule)


def test_tie_band_maximises_accuracy_with_ties_by_hand() -> None:
    # distance from 0.5: .4, .037 (gold tie), .023 (gold tie), .016, .21, .083; a band b makes a tie when
    # the distance is <= b/2 (no distance lies on a candidate's edge, so rounding plays no part).
    p_as = [0.9, 0.537, 0.477, 0.516, 0.29, 0.583, None]
    golds = ["A", "tie", "tie", "A", "B", "B", "tie"]
    choice = choose_tie_band(p_as, golds)
    rows = {r["tie_band"]: r for r in choice["candidates"]}
    assert choice["n"] == 6 and choice["n_gold_ties"] == 2  # the item without p(A) is left out
    # band 0: A A B A B A, right on .9, .516, .29 = 3/6; .04: .516 becomes a wrong tie = 2/6;
    # .05: .477 a right tie = 3/6; .08: .537 too = 4/6, the best, until .43 turns .29 into a tie.
    assert rows[0.0]["accuracy_with_ties"] == pytest.approx(3 / 6)
    assert rows[0.03]["accuracy_with_ties"] == pytest.approx(3 / 6)
    assert rows[0.04]["accuracy_with_ties"] == pytest.approx(2 / 6)
    assert rows[0.05]["accuracy_with_ties"] == pytest.approx(3 / 6)
    assert rows[0.12]["accuracy_with_ties"] == pytest.approx(4 / 6) and rows[0.12]["ties"] == 3
    assert rows[0.45]["accuracy_with_ties"] == pytest.approx(3 / 6)
    assert choice["tie_band"] == 0.08 and choice["accuracy_with_ties"] == pytest.approx(4 / 6)
    # Gold A/B only: .9 and .29 right, .516 now a tie, .583 wrong.
    assert rows[0.08]["accuracy"] == pytest.approx(2 / 4) and rows[0.0]["accuracy"] == pytest.approx(3 / 4)
    vs = choice["against"]  # right only at 0.08: the two gold ties; only at 0: .516
    assert vs["tie_band"] == 0.0 and vs["only_chosen_right"] == 2 and vs["only_against_right"] == 1
    assert vs["difference"] == pytest.approx(1 / 6) and vs["p_value"] == pytest.approx(1.0)
    assert choose_tie_band([None], ["A"])["tie_band"] is None


def test_summary_shows_both_rules_and_the_calibration_by_hand() -> None:
    summary = summarize(records(), load_task("chat"), n_resamples=0)
    rules = summary["decision_rules"]
    assert rules["decided_by"] == {"argmax": 0, "probability": 6}
    assert rules["probabilities"] == {"ok": 6}
    # Gold ties left out: argmax right on i1 only (i2, i3 ties) = 1/5; probability on i1, i2, i3 = 3/5.
    assert rules["argmax"]["overall"]["value"] == pytest.approx(1 / 5)
    assert rules["probability"]["overall"]["value"] == pytest.approx(3 / 5)
    assert summary["overall"]["value"] == pytest.approx(3 / 5)  # the headline is the run's rule
    assert rules["argmax"]["share_tie"]["value"] == pytest.approx(3 / 6)
    assert rules["probability"]["share_tie"]["value"] == 0.0
    cal = rules["calibration"]
    # confidences without the gold tie: .85 right, .55 right, .59 right, .625 wrong, .65 wrong.
    # bins [.5,.6): n 2, conf .57, acc 1; [.6,.7): n 2, conf .6375, acc 0; [.8,.9): n 1, conf .85, acc 1.
    assert [r["n"] for r in cal["reliability"]] == [2, 2, 0, 1, 0]
    assert cal["ece"] == pytest.approx((2 * 0.43 + 2 * 0.6375 + 0.15) / 5)
    # On these items i5 (p(A) .5175, a gold tie) becomes a right tie from band .04 on; i2 (.55) a wrong
    # one at .1.
    band = cal["tie_band_on_these_items"]
    assert band["tie_band"] == 0.04 and band["accuracy_with_ties"] == pytest.approx(4 / 6)


def test_calibrate_command_prints_the_chosen_band_and_the_bins(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "300")
    run = run_dir(tmp_path)
    assert main(["calibrate", str(run)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Tie band on these 6 items, 1 of them gold ties" in out
    assert "chosen: 0.04, the narrowest band with the best accuracy with ties (0.667, vs 0.500 at 0;" in out
    assert "ECE 0.457 over 5 items" in out
    assert main(["calibrate", str(run), "--json", "--bins", "2"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["tie_band_on_these_items"]["tie_band"] == 0.04 and len(report["reliability"]) == 2
    assert report["recorded_tie_band"] == 0.0 and report["probabilities"] == {"ok": 6}


def test_calibrate_refuses_pointwise_runs_and_runs_without_probabilities(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["calibrate", str(literary_run(tmp_path))]) == 2
    assert "pointwise task 'literary'" in capsys.readouterr().err
    bare = [
        probability_pair(rid, *v, rule="argmax") for rid, v in ITEMS.items()
    ]  # the same verdicts without probabilities
    for r in bare:
        r.result.probabilities = None  # type: ignore[union-attr]
    assert calibrate_run(bare)["tie_band_on_these_items"]["n"] == 0
    write_run(tmp_path / "bare", {"task": "chat", "method": "direct", "lm": "fake"}, bare)
    assert main(["calibrate", str(tmp_path / "bare")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "no record has p(A)" in err and "\n" not in err
    assert main(["calibrate", str(tmp_path / "nowhere")]) == 2


def test_compare_one_run_under_both_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run = run_dir(tmp_path, rule="argmax")  # recorded under argmax; the probabilities are in the records
    cmp = compare_runs(run, run, rule_a="argmax", rule_b="probability", n_resamples=0)
    row = next(r for r in cmp["rows"] if r["language"] == "all")
    assert (
        row["n"] == 6
        and row["a"]["value"] == pytest.approx(1 / 5)
        and row["b"]["value"] == pytest.approx(3 / 5)
    )
    # McNemar: only the probability rule is right on i2 and i3; the gold tie is left out.
    assert row["test"]["extra"]["b"] == 0 and row["test"]["extra"]["c"] == 2
    assert row["test"]["p_value"] == pytest.approx(0.5)
    assert row["agreement"]["value"] == pytest.approx(3 / 6)  # same verdict on i1, i4, i6
    assert [r["decision"] for r in cmp["runs"]] == ["argmax", "probability"]
    monkeypatch.setenv("COLUMNS", "300")
    assert main(["compare", str(run), str(run), "--rule-a", "argmax", "--rule-b", "probability"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "A = direct (simulated:0, argmax rule) vs B = direct (simulated:0, probability rule)" in out


def test_run_tables_show_both_rules_and_the_bins() -> None:
    from rich.console import Console

    from cejudge_dspy.cli.display import decision_rules_table, reliability_table

    summary = summarize(records(), load_task("chat"), n_resamples=0)
    console = Console(width=200, record=True)
    console.print(decision_rules_table(summary))
    console.print(reliability_table(summary["decision_rules"]["calibration"]))
    text = console.export_text()
    rows = {line.split("│")[1].strip(): line for line in text.splitlines() if line.startswith("│")}
    # accuracy (all items), macro average, final A share, tie share
    assert rows["argmax"].split("│")[2].strip() == "0.200" and rows["argmax"].split("│")[5].strip() == "0.500"
    assert (
        rows["probability"].split("│")[2].strip() == "0.600"
        and rows["probability"].split("│")[5].strip() == "0.000"
    )
    assert rows["0.60-0.70"].split("│")[2].strip() == "2" and "ECE 0.457 over 5 items" in text
    assert "records decided by: argmax 0, probability 6" in text
    assert decision_rules_table({"metric": "accuracy"}) is None  # a run recorded without probabilities
