"""benchmarks/ablation_table.py: each ablation against the base run, from `cejudge evaluate` runs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cejudge_dspy.cli import main as cejudge
from cejudge_dspy.metrics import compare_runs

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from ablation_table import main, paired, table, value_ci  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures" / "data"


def evaluate(out: Path, task: str, data: Path, *flags: str) -> Path:
    argv = ["evaluate", "--task", task, "--data", str(data), "--lm", "simulated:0", "--out", str(out)]
    assert cejudge([*argv, "--bootstrap", "200", *flags]) == 0
    return out


def test_cells_value_ci_and_the_paired_comparisons() -> None:
    assert value_ci({"value": 0.6, "ci_low": 0.4, "ci_high": 0.8}) == "0.600 [0.400, 0.800]"
    assert value_ci({"value": 0.25}) == "0.250" and value_ci(None) == "n/a"
    assert value_ci({"value": None, "reason": "constant predictions"}) == "undefined (constant predictions)"
    mcnemar = {"test": {"p_value": 0.125, "extra": {"b": 4, "c": 0}}}
    assert paired(mcnemar, "accuracy") == "McNemar: 4 right only in base, 0 only ablated, p = 0.125"
    # compare gives base - ablated; the table shows ablated - base.
    diff = {"test": {"value": -0.2, "ci_low": -0.5, "ci_high": 0.1, "p_value": 0.2}}
    assert paired(diff, "kendall") == "+0.200 [-0.100, +0.500], p = 0.200"
    assert paired({"test": {"value": float("nan"), "reason": "too few items"}}, "kendall") == (
        "undefined (too few items)"
    )


def test_pairwise_rows_name_the_ablation_and_carry_compare_figures(tmp_path: Path) -> None:
    data = FIXTURES / "pairwise_labels.jsonl"
    base = evaluate(tmp_path / "base", "chat", data)
    ablated = [
        evaluate(tmp_path / "nc", "chat", data, "--no-concepts"),
        evaluate(tmp_path / "i2r", "chat", data, "--directions", "i2r"),
    ]
    lines = table(base, ablated, n_resamples=200)
    assert lines[0].startswith("| ablation | language | n | accuracy base | accuracy ablated |")
    assert lines[2].startswith("| concepts True -> False | all |")
    assert lines[3].startswith("| directions both -> i2r | all |")
    test = compare_runs(base, ablated[1], n_resamples=200)["rows"][-1]["test"]
    assert lines[3].endswith(f"p = {test['p_value']:.3f} |") and len(lines) == 4


def test_pointwise_rows_per_language_and_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = evaluate(tmp_path / "base", "literary", FIXTURES / "liteval")
    judged = evaluate(tmp_path / "tr", "literary", FIXTURES / "liteval", "--judge-on", "translated")
    lines = table(base, [judged], n_resamples=200)
    languages = [line.split(" | ")[1] for line in lines[2:]]
    # Judged on the English texts, the judgment reads no reference either: the row names both settings.
    ablation = lines[2].split(" | ")[0]
    assert ablation == "| english_reference translate -> None; judge_on original -> translated"
    assert languages[-1] == "all" and len(languages) >= 2
    assert main([str(base), str(tmp_path / "missing")]) == 2
    assert "no summary.json" in capsys.readouterr().err
    chat = evaluate(tmp_path / "chat", "chat", FIXTURES / "pairwise_labels.jsonl")
    capsys.readouterr()
    assert main([str(base), str(chat)]) == 2
    assert capsys.readouterr().err.strip().startswith("error: runs are measured differently")
