"""The markdown tables of finished runs: `metrics.ablation_table` / `cejudge compare --ablations` (each
ablation against the base run) and `metrics.rules_table` / `cejudge compare --rules` (argmax against
probability, from a run's summary.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cejudge_dspy.cli import main
from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.metrics import ablation_table, compare_runs, rules_table
from cejudge_dspy.metrics._tables import metric_cell, paired_cell
from tests import support

FIXTURES = support.FIXTURES / "data"


def evaluate(out: Path, task: str, data: Path, *flags: str) -> Path:
    argv = ["evaluate", "--task", task, "--data", str(data), "--lm", "simulated:0", "--out", str(out)]
    assert main([*argv, "--bootstrap", "200", *flags]) == 0
    return out


def metric(
    value: float | None, n: int, lo: float | None = None, hi: float | None = None, **kw: object
) -> dict:
    return {"value": value, "n": n, "ci_low": lo, "ci_high": hi, **kw}


def write(run: Path, summary: dict) -> Path:
    run.mkdir()
    (run / "summary.json").write_text(json.dumps(summary))
    return run


# --- cells -----------------------------------------------------------------------------------------------


def test_metric_cell_value_ci_n_and_undefined() -> None:
    assert metric_cell(metric(0.7333, 30, 0.5667, 0.9)) == "0.733 [0.567, 0.900] (n 30)"
    assert metric_cell(metric(0.5, 3)) == "0.500 (n 3)"
    assert metric_cell(metric(None, 10, reason="constant predictions")) == "undefined (constant predictions)"
    assert metric_cell(None) == "n/a"
    # The ablation table has its own n column: its cells leave n out.
    no_n = {"with_n": False}
    assert metric_cell({"value": 0.6, "ci_low": 0.4, "ci_high": 0.8}, **no_n) == "0.600 [0.400, 0.800]"
    assert metric_cell({"value": 0.25}, **no_n) == "0.250" and metric_cell(None, **no_n) == "n/a"
    assert metric_cell({"value": None, "reason": "constant predictions"}, **no_n) == (
        "undefined (constant predictions)"
    )


def test_paired_cell_mcnemar_and_the_bootstrap_difference() -> None:
    mcnemar = {"test": {"p_value": 0.125, "extra": {"b": 4, "c": 0}}}
    assert paired_cell(mcnemar, "accuracy") == "McNemar: 4 right only in base, 0 only ablated, p = 0.125"
    # compare gives base - ablated; the table shows ablated - base.
    diff = {"test": {"value": -0.2, "ci_low": -0.5, "ci_high": 0.1, "p_value": 0.2}}
    assert paired_cell(diff, "kendall") == "+0.200 [-0.100, +0.500], p = 0.200"
    assert paired_cell({"test": {"value": float("nan"), "reason": "too few items"}}, "kendall") == (
        "undefined (too few items)"
    )


# --- ablations -------------------------------------------------------------------------------------------


def test_pairwise_rows_name_the_ablation_and_carry_compare_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = FIXTURES / "pairwise_labels.jsonl"
    base = evaluate(tmp_path / "base", "chat", data)
    ablated = [
        evaluate(tmp_path / "nc", "chat", data, "--no-concepts"),
        evaluate(tmp_path / "i2r", "chat", data, "--directions", "i2r"),
    ]
    text = ablation_table(base, ablated, n_resamples=200)
    lines = text.split("\n")
    assert lines[0].startswith("| ablation | language | n | accuracy base | accuracy ablated |")
    assert lines[2].startswith("| concepts True -> False | all |")
    assert lines[3].startswith("| directions both -> i2r | all |")
    test = compare_runs(base, ablated[1], n_resamples=200)["rows"][-1]["test"]
    assert lines[3].endswith(f"p = {test['p_value']:.3f} |") and len(lines) == 4
    # The command prints the same markdown, and nothing else.
    capsys.readouterr()
    argv = ["compare", "--ablations", str(base), *map(str, ablated), "--bootstrap", "200"]
    assert main(argv) == 0
    assert capsys.readouterr().out == text + "\n"


def test_pointwise_rows_per_language_and_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = evaluate(tmp_path / "base", "literary", FIXTURES / "liteval")
    judged = evaluate(tmp_path / "tr", "literary", FIXTURES / "liteval", "--judge-on", "translated")
    lines = ablation_table(base, [judged], n_resamples=200).split("\n")
    languages = [line.split(" | ")[1] for line in lines[2:]]
    # Judged on the English texts, the judgment reads no reference either: the row names both settings.
    ablation = lines[2].split(" | ")[0]
    assert ablation == "| english_reference translate -> None; judge_on original -> translated"
    assert languages[-1] == "all" and len(languages) >= 2
    capsys.readouterr()
    assert main(["compare", "--ablations", str(base), str(tmp_path / "missing")]) == 2
    captured = capsys.readouterr()
    assert "no summary.json" in captured.err and captured.out == ""
    chat = evaluate(tmp_path / "chat", "chat", FIXTURES / "pairwise_labels.jsonl")
    capsys.readouterr()
    assert main(["compare", "--ablations", str(base), str(chat)]) == 2
    assert capsys.readouterr().err.strip().startswith("error: runs are measured differently")


def test_an_ablation_table_needs_finished_runs_and_an_ablation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = FIXTURES / "pairwise_labels.jsonl"
    base = evaluate(tmp_path / "base", "chat", data)
    old = evaluate(tmp_path / "old", "chat", data, "--no-concepts")
    summary = json.loads((old / "summary.json").read_text())
    del summary["overall"]  # a summary without the metric the table shows
    (old / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(CEJudgeError, match="no 'overall' metric"):
        ablation_table(base, [old])
    capsys.readouterr()
    assert main(["compare", "--ablations", str(base), str(old)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {old / 'summary.json'}: no 'overall' metric") and "\n" not in err
    assert main(["compare", "--ablations", str(base)]) == 2
    assert "at least one ablated run" in capsys.readouterr().err


# --- decision rules --------------------------------------------------------------------------------------


def test_pairwise_rows_per_rule(tmp_path: Path) -> None:
    rules = {
        "probabilities": {"ok": 30},
        "argmax": {
            "overall": {**metric(0.5, 28, 0.3, 0.7), "strict": metric(0.48, 29, 0.3, 0.66)},
            "position_consistency": metric(0.25, 8),
            "share_tie": metric(0.4, 30),
            "share_final_A": metric(0.3, 30),
            "n_graded": 30,
            "decided_by_grades": 22,
        },
        "probability": {
            "overall": {**metric(0.6, 28, 0.4, 0.8), "strict": metric(0.58, 29, 0.4, 0.76)},
            "share_tie": metric(0.0, 30),
            "share_final_A": metric(0.55, 30),
            "n_graded": 30,
            "decided_by_grades": 29,
        },
    }
    run = write(tmp_path / "en", {"task": "chat", "n_items": 30, "n_ok": 30, "decision_rules": rules})
    text = rules_table(run)
    assert "| argmax | 0.500 [0.300, 0.700] (n 28) | 0.480 [0.300, 0.660] (n 29) | 0.250 (n 8) |" in text
    assert "| probability | 0.600 [0.400, 0.800] (n 28) |" in text
    assert "| n/a | 0.000 (n 30) | 0.550 (n 30) |" in text  # no pair shown in both orders: no consistency
    assert "argmax: 22 of 30 items decided" in text and "probability: 29 of 30 items decided" in text


def test_pointwise_and_dimension_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    point = {
        "argmax": {
            "per_language": {"en-de": metric(0.1, 15)},
            "overall": metric(0.2, 30),
            "distinct_scores": 4,
        },
        "probability": {
            "per_language": {"en-de": metric(0.3, 15), "ru-en": metric(0.4, 15, 0.1, 0.6)},
            "overall": metric(0.35, 30),
            "distinct_scores": 30,
        },
    }
    da = write(tmp_path / "da", {"task": "literary", "n_items": 30, "n_ok": 30, "decision_rules": point})
    text = rules_table(da)
    assert "| rule | en-de | ru-en | all items | distinct scores |" in text
    assert "| argmax | 0.100 (n 15) | n/a | 0.200 (n 30) | 4 |" in text
    assert "| probability | 0.300 (n 15) | 0.400 [0.100, 0.600] (n 15) | 0.350 (n 30) | 30 |" in text

    dims = {
        "argmax": {
            "dimensions": {"fluency": {"spearman": metric(None, 10, reason="constant")}, "overall": {}},
            "constant_dimensions": ["fluency"],
        },
        "probability": {"dimensions": {"fluency": {"spearman": metric(0.42, 10)}}, "constant_dimensions": []},
    }
    se = write(tmp_path / "se", {"task": "summeval", "n_items": 10, "n_ok": 10, "decision_rules": dims})
    text = rules_table(se)
    assert "| argmax | undefined (constant) | fluency |" in text
    assert "| probability | 0.420 (n 10) | none |" in text
    # The command prints each run's table in the order given, a blank line after each.
    capsys.readouterr()
    assert main(["compare", "--rules", str(da), str(se)]) == 0
    assert capsys.readouterr().out == f"{rules_table(da)}\n\n{rules_table(se)}\n\n"


def test_without_probabilities_and_unfinished_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = write(tmp_path / "plain", {"task": "chat", "n_items": 2, "n_ok": 2})
    assert "only the argmax rule exists" in rules_table(run)
    (tmp_path / "missing").mkdir()
    capsys.readouterr()
    # A later run without a summary: nothing is printed, not the tables before it.
    assert main(["compare", "--rules", str(run), str(tmp_path / "missing")]) == 2
    captured = capsys.readouterr()
    assert "no summary.json" in captured.err and captured.out == ""
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "summary.json").write_text("{not json")
    assert main(["compare", "--rules", str(tmp_path / "broken")]) == 2
    assert "cannot be read as JSON" in capsys.readouterr().err


# --- the command's modes ---------------------------------------------------------------------------------


def test_one_mode_at_a_time_and_the_runs_each_mode_takes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = write(tmp_path / "plain", {"task": "chat", "n_items": 2, "n_ok": 2})
    with pytest.raises(SystemExit) as exit_info:  # argparse: the two modes exclude each other
        main(["compare", "--ablations", "--rules", str(run), str(run)])
    assert exit_info.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
    assert main(["compare", str(run), str(run), str(run)]) == 2
    assert "compare takes two runs (got 3)" in capsys.readouterr().err
    assert main(["compare", "--rules", "--rule-a", "argmax", str(run)]) == 2
    assert "--rule-a/--rule-b read two runs" in capsys.readouterr().err
